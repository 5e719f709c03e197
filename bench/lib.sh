# lib.sh -- sourced by the bench scripts (not run by itself): the usage
# from a script's header comment and its options parsed; for the sysbench
# benchmarks (bench/proxy.sh, bench/haproxy.sh, bench/proxy_ab.sh,
# bench/server_work.sh, bench/proxy_instr.sh, bench/threads.sh) also the
# test harness with its cluster, the sysbench table and targets, one
# timed run and its figures, pass-through dal-proxies and haproxy started,
# rounds run in alternating order, a process's CPU time, medians and ratios.
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # variables set for the scripts, and theirs read

# the source tree
bench_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_usage STATUS: the script's header comment (its second line up to
# `set -euo`, the comment marks taken off) as its usage; exit STATUS
bench_usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit "$1"; }

# bench_options SPEC ARG...: the options in the ARGs, as SPEC (words, one
# an option) names them: "--name=VAR" takes a value, into VAR; "--name"
# is a flag, its variable (the name, '_' for '-') set to 1; a last word
# "--" lets operands follow the options: the first ARG that is no option
# and those after it are left in the array bench_args.  -h and --help
# print the usage; an unknown option (or an operand where SPEC has no
# "--", or an option without its value) prints it to stderr and exits 2.
bench_options() {
    local spec=" ${1//$'\n'/ } " var
    shift
    bench_args=()
    while [ $# -gt 0 ]; do
        case $1 in
        -h | --help) bench_usage 0 ;;
        -*) ;;
        *) [[ $spec == *" -- " ]] && break ;;
        esac
        case $spec in
        *" $1="*)
            [ $# -ge 2 ] || { echo "${0##*/}: option '$1' needs a value" >&2; bench_usage 2 >&2; }
            var=${spec#*" $1="}
            printf -v "${var%% *}" '%s' "$2"
            shift ;;
        *" $1 "*) var=${1#--}; printf -v "${var//-/_}" 1 ;;
        *) echo "${0##*/}: unknown option '$1'" >&2; bench_usage 2 >&2 ;;
        esac
        shift
    done
    bench_args=("$@")
}

# bench_dal: $DAL_BIN, the dal program (default: the source tree's
# _build/tools/dal), and $DAL_PLUGIN_DIR (default: its build tree's
# plugins, exported)
bench_dal() {
    DAL_BIN=${DAL_BIN:-$bench_src/_build/tools/dal}
    export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$(dirname "$(dirname "$DAL_BIN")")/plugins/.libs}
}

# bench_need PROGRAM PACKAGE: exit with a message naming the Debian
# package when PROGRAM is not installed
bench_need() {
    command -v "$1" >/dev/null ||
        { echo "${0##*/}: needs $1 (apt-get install $2)" >&2; exit 1; }
}

# bench_harness: what the sysbench benchmarks start from: sysbench
# installed, $DAL_BUILDDIR (default: the source tree's _build) and
# tests/harness/proxy_lib.sh (its work directory, removed at exit with the
# servers and proxies started, and its px_* functions)
bench_harness() {
    bench_need sysbench sysbench
    export DAL_BUILDDIR=${DAL_BUILDDIR:-$bench_src/_build}
    # shellcheck source=tests/harness/proxy_lib.sh
    . "$bench_src/tests/harness/proxy_lib.sh"
}

# sysbench's table: one of 10,000 rows, made by bench_sb_prepare
bench_table=(--tables=1 --table-size=10000 --auto_inc=off --create_secondary=off --skip_trx=on)

# bench_target PORT [DB]: sysbench's options, one a line, for the server
# on PORT (user dal, schema DB) or, without DB, for a benchmark's dal-proxy
# on PORT (user sb, schema sbtest)
bench_target() {
    if [ $# -ge 2 ]; then
        printf '%s\n' --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=dal --mysql-password=dalpass --mysql-db="$2"
    else
        printf '%s\n' --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=sb --mysql-password=sbpass --mysql-db=sbtest
    fi
}

# bench_sb_prepare PORT [DB]: sysbench's table made at bench_target PORT [DB]
bench_sb_prepare() {
    local target
    mapfile -t target < <(bench_target "$@")
    sysbench oltp_read_only "${bench_table[@]}" "${target[@]}" prepare >/dev/null
}

# sb_run TEST PS TARGET_OPTION...: one sysbench run of TEST on the table,
# $threads client threads for $secs seconds, --db-ps-mode PS -> sb_figures'
# "QPS P99_MS QUERIES"
sb_run() {
    sysbench "$1" "${bench_table[@]}" "${@:3}" --threads="$threads" --time="$secs" \
        --db-ps-mode="$2" --percentile=99 run | sb_figures
}

# sb_figures: a sysbench run's report on stdin -> "QPS P99_MS QUERIES"
sb_figures() {
    awk '/queries:/ {q = $2; r = $3; gsub(/[(]/, "", r)} /99th percentile:/ {p = $3}
         END {print r, p, q}'
}

# bench_proxy_ini PORT DB [LINE...]: dal-proxy's [proxy] section, on PORT
# serving DB with the LINEs, and its user sb (password sbpass)
bench_proxy_ini() {
    printf '[proxy]\nlisten = 127.0.0.1:%s\ndatabase = %s\n' "$1" "$2"
    [ $# -le 2 ] || printf '%s\n' "${@:3}"
    printf '[proxy user sb]\npassword = sbpass\n'
}

# bench_passthrough_ini FILE PORT SERVER_PORT DB [LINE...]: dal-proxy on
# PORT serving the schema DB of the server on SERVER_PORT as one unsharded
# datasource (user dal), to the proxy's user sb; the LINEs go into [proxy]
bench_passthrough_ini() {
    {
        printf '[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/%s\n' "$3" "$4"
        printf '[dal]\ndefault_datasource = ds0\n'
        bench_proxy_ini "$2" "$4" "${@:5}"
    } >"$1"
}

# bench_sharded_ini FILE PORT: dal-proxy on PORT serving sysbench's table
# sbtest1 sharded over the servers of `px_cluster 2 --db 'shard_%d'`, 8
# tables by id mod, as the schema sbtest to the proxy's user sb
bench_sharded_ini() {
    {
        # shellcheck disable=SC2119 # no lines of its own in [dal]
        px_ini_sharded
        px_ini_table sbtest1 8 id mod
        bench_proxy_ini "$2" sbtest
    } >"$1"
}

# bench_passthrough NAME [LINE...]: a pass-through dal-proxy ($proxy_bin)
# in front of the first server's schema sbtest, on $work/NAME.ini (the
# LINEs in [proxy]), started; its port in bench_port[NAME], its process id
# in bench_pid[NAME]
declare -A bench_port bench_pid
bench_passthrough() {
    bench_port[$1]=$("$harness/cluster.sh" free-port)
    bench_passthrough_ini "$work/$1.ini" "${bench_port[$1]}" "${ports[0]}" sbtest "${@:2}"
    px_start "$work/$1.ini" "${bench_port[$1]}"
    bench_pid[$1]=${pids[-1]}
}

# bench_haproxy NAME SERVER_PORT: haproxy in TCP mode in front of the
# server on SERVER_PORT, in the foreground as a child (its configuration
# and log in $work), started; its port in bench_port[NAME], its process id
# in bench_pid[NAME]
bench_haproxy() {
    bench_need haproxy haproxy
    bench_port[$1]=$("$harness/cluster.sh" free-port)
    cat >"$work/haproxy.cfg" <<EOF
global
    maxconn 4096
defaults
    mode tcp
    timeout connect 5s
    timeout client 10m
    timeout server 10m
listen mysql
    bind 127.0.0.1:${bench_port[$1]}
    server s0 127.0.0.1:$2
EOF
    haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
    bench_pid[$1]=$!
    pids+=("${bench_pid[$1]}")
    bench_wait_port "${bench_port[$1]}" "${bench_pid[$1]}" haproxy "$work/haproxy.log"
}

# bench_wait_port PORT PID NAME LOG [TENTHS]: wait until PORT accepts
# connections, at most TENTHS tenths of a second (default 100); exit with
# LOG's last lines when NAME (process PID) exits first or the time is up
bench_wait_port() {
    local _
    for _ in $(seq "${5:-100}"); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    echo "${0##*/}: $3 did not start on port $1: $(tail -5 "$4")" >&2
    exit 1
}

# bench_pair ROUND FN A B: FN A and FN B, A first in odd rounds and B first
# in even ones, so that neither always runs second; prints FN A's output,
# then FN B's, or exits 1 when either fails
bench_pair() {
    local a b
    if [ $(($1 % 2)) = 1 ]; then
        a=$("$2" "$3") || exit 1
        b=$("$2" "$4") || exit 1
    else
        b=$("$2" "$4") || exit 1
        a=$("$2" "$3") || exit 1
    fi
    printf '%s\n%s\n' "$a" "$b"
}

# proc_ticks PID...: the processes' user + system CPU time in clock ticks
# (getconf CLK_TCK a second), from /proc/PID/stat, summed (0 for none)
proc_ticks() {
    local p files=()
    for p in "$@"; do files+=("/proc/$p/stat"); done
    if [ $# -eq 0 ]; then echo 0; else awk '{t += $14 + $15} END {print t}' "${files[@]}"; fi
}

# median VALUE...: the median of the numbers
median() {
    printf '%s\n' "$@" | sort -n |
        awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# ratio A B: B / A to three decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b / a}'; }
