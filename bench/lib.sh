# lib.sh -- sourced by the sysbench benchmarks (bench/proxy.sh,
# bench/server_work.sh, bench/haproxy.sh; not run by itself): a program
# the bench needs, a process's CPU time, a median, one sysbench run's
# figures and the pass-through dal-proxy configuration.
# shellcheck shell=bash

# bench_need SCRIPT PROGRAM PACKAGE: exit with a message naming the Debian
# package when PROGRAM is not installed
bench_need() {
    command -v "$2" >/dev/null ||
        { echo "$1: needs $2 (apt-get install $3)" >&2; exit 1; }
}

# proc_ticks PID: the process's user + system CPU time in clock ticks
# (getconf CLK_TCK a second), from /proc/PID/stat
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# median_of: the median of the numbers on stdin, one a line
median_of() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# sb_figures: a sysbench run's report on stdin -> "QPS P99_MS QUERIES"
sb_figures() {
    awk '/queries:/ {q = $2; r = $3; gsub(/[(]/, "", r)} /99th percentile:/ {p = $3}
         END {print r, p, q}'
}

# bench_passthrough_ini FILE PORT SERVER_PORT DB: dal-proxy on PORT serving
# the schema DB of the server on SERVER_PORT as one unsharded datasource
# (user dal), to the proxy's user sb (password sbpass)
bench_passthrough_ini() {
    cat >"$1" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:$3/$4
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$2
database = $4
[proxy user sb]
password = sbpass
EOF
}
