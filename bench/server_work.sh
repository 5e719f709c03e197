#!/usr/bin/env bash
# server_work.sh -- the servers' work per client statement, directly and
# behind dal-proxy: the same sysbench test (oltp_point_select, text
# protocol by default) run on a plain MariaDB server and through dal-proxy,
# with each run framed by the servers' SHOW GLOBAL STATUS and their
# processes' CPU time (/proc/PID/stat utime + stime).  Prints, per client
# statement, every counter that moved (Com_*, Questions, Handler_*,
# Bytes_received/sent, ...), Prepared_stmt_count at the end of each run,
# and the servers' CPU per statement, side by side.
#
#   bench/server_work.sh [--events N] [--threads T] [--ps-mode disable|auto]
#                        [--config passthrough|sharded|both] [--all] [--set SQL]
#                        [--haproxy] [--profile]
#
# --config: passthrough, the proxy on the direct run's server and schema
# (one unsharded datasource); sharded, the table over 2 servers and 8
# tables (the counters are both servers' summed); both (default).
# --haproxy: a column more, the same client through haproxy in TCP mode
# (a proxy that relays bytes) in front of the direct run's server.
# --profile: perf record -g of the server during each measured run (in
# place of perf stat); prints each run's top symbols by their share of
# the server's samples (self, --no-children).
# --all: every counter, not only those that moved by >= 0.01 a statement.
# --set SQL: the client is PyMySQL instead of sysbench (one connection,
# autocommit on, text point selects of the same table), and runs SQL once
# after connecting, as most connectors and ORMs do (SET NAMES, sql_mode):
# the session variables a proxied client's statements carry.
# Defaults: 50,000 events, 2 threads, --ps-mode disable (text), 10,000 rows.
# Before each measured run a warm-up of 2,000 events opens the connections
# and fills the caches.  A counter moved by the status reads themselves
# (Com_show_status, Questions) moves by 1 a server per run, 1/N a statement.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
events=50000 threads=2 ps=disable config=both all=0 setsql="" haproxy=0 profile=0
bench_options "--events=events --threads=threads --ps-mode=ps --config=config --all --haproxy
    --profile --set=setsql" "$@"
case $config in passthrough | sharded | both) ;; *)
    echo "server_work.sh: --config is passthrough, sharded or both, not '$config'" >&2; exit 2 ;;
esac
bench_harness

px_cluster 2 --db 'shard_%d' --db sbtest

# the pass-through proxy: server 0's schema sbtest, where the direct runs go
bench_passthrough pass
# the sharded proxy: sbtest1 over shard_0 and shard_1, 8 tables
sport=$("$harness/cluster.sh" free-port)
bench_sharded_ini "$work/shard.ini" "$sport"
px_start "$work/shard.ini" "$sport"
shard_pid=${pids[-1]}
[ "$haproxy" = 0 ] || bench_haproxy haproxy "${ports[0]}"

mapfile -t direct < <(bench_target "${ports[0]}" sbtest)
mapfile -t via_ha < <(bench_target "${bench_port[haproxy]:-0}" sbtest)
mapfile -t pass < <(bench_target "${bench_port[pass]}")
mapfile -t shard < <(bench_target "$sport")
bench_sb_prepare "${ports[0]}" sbtest
[ "$config" = passthrough ] || bench_sb_prepare "$sport"

# snap FILE PORT...: the servers' global status summed, and "cpu_ticks",
# their processes' utime + stime, one "NAME VALUE" a line
snap() {
    local out=$1 p i pid
    shift
    for p in "$@"; do
        mariadb -uroot -h127.0.0.1 -P"$p" -N -B -e 'SHOW GLOBAL STATUS'
        for i in "${!ports[@]}"; do
            [ "${ports[$i]}" = "$p" ] || continue
            pid=$(cat "$work/c/m$i/pid")
            awk '{print "cpu_ticks", $14 + $15}' "/proc/$pid/stat"
        done
    done | awk '$2 ~ /^-?[0-9]+(\.[0-9]+)?$/ {s[$1] += $2} END {for (k in s) print k, s[k]}' | sort >"$out"
}
server_pids() { # PORT...: the servers' process ids, comma-separated
    local p i out=()
    for p in "$@"; do
        for i in "${!ports[@]}"; do [ "${ports[$i]}" != "$p" ] || out+=("$(cat "$work/c/m$i/pid")"); done
    done
    (IFS=,; echo "${out[*]}")
}
# perf stat's software events and system-call tracepoints: counts, which
# the machine's noise does not move (none when perf cannot trace)
perf_events=context-switches,cpu-migrations,raw_syscalls:sys_enter,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_poll,syscalls:sys_enter_futex,syscalls:sys_enter_read,syscalls:sys_enter_write
use_perf=0
! command -v perf >/dev/null || ! perf stat -e "$perf_events" -- true >/dev/null 2>&1 || use_perf=1

# measure NAME PROXY_PID TARGET_OPTIONS... -- PORTS...: warm up, then
# $events events framed by snapshots; $work/NAME.delta holds
# "NAME per_statement" lines, $work/NAME.end the last snapshot
measure() {
    local name=$1 ppid=$2 opts=() t0 t1
    shift 2
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    run() {
        if [ -n "$setsql" ]; then
            /usr/bin/python3 - "$1" "$setsql" "${opts[@]}" >"$work/$name.sb" <<'EOP'
import sys, pymysql
n, setsql, o = int(sys.argv[1]), sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
c = pymysql.connect(host=o["--mysql-host"], port=int(o["--mysql-port"]), user=o["--mysql-user"],
                    password=o["--mysql-password"], database=o["--mysql-db"], autocommit=True)
cur = c.cursor()
cur.execute(setsql)
for i in range(n):
    cur.execute("SELECT c FROM sbtest1 WHERE id=%d" % (i * 7919 % 10000 + 1))
    cur.fetchall()
print("total number of events: %d" % n)
EOP
            return
        fi
        sysbench oltp_point_select "${bench_table[@]}" "${opts[@]}" --threads="$threads" \
            --events="$1" --time=0 --db-ps-mode="$ps" run >"$work/$name.sb"
    }
    run 2000
    t0=0 t1=0
    [ "$ppid" = - ] || t0=$(proc_ticks "$ppid")
    snap "$work/$name.start" "$@"
    local perf=""
    if [ "$profile" = 1 ]; then
        perf record -q -g -o "$work/$name.data" -p "$(server_pids "$@")" 2>/dev/null &
        perf=$!
        sleep 0.5
    elif [ "$use_perf" = 1 ]; then
        perf stat -x, -e "$perf_events" -o "$work/$name.perf" -p "$(server_pids "$@")" &
        perf=$!
        sleep 0.5 # attached before the run starts
    fi
    run "$events"
    if [ -n "$perf" ]; then kill -INT "$perf"; wait "$perf" || true; fi
    snap "$work/$name.end" "$@"
    [ "$ppid" = - ] || t1=$(proc_ticks "$ppid")
    grep -q "total number of events: *$events" "$work/$name.sb" ||
        { echo "server_work.sh: sysbench $name did not run $events events: $(tail -20 "$work/$name.sb")" >&2; exit 1; }
    join "$work/$name.start" "$work/$name.end" |
        awk -v n="$events" -v hz="$(getconf CLK_TCK)" -v pt=$((t1 - t0)) '
            $1 == "cpu_ticks" {printf "server_cpu_us %.2f\n", ($3 - $2) * 1e6 / hz / n; next}
            $1 == "Prepared_stmt_count" || $1 == "Threads_connected" {next}
            {printf "%s %.4f\n", $1, ($3 - $2) / n}
            END {if (pt > 0) printf "proxy_cpu_us %.2f\n", pt * 1e6 / hz / n}' >"$work/$name.delta"
    awk '$1 == "Prepared_stmt_count" || $1 == "Threads_connected" {print $1 "@end", $2}' \
        "$work/$name.end" >>"$work/$name.delta"
    [ "$profile" = 0 ] || perf report -i "$work/$name.data" --no-children --sort symbol --stdio 2>/dev/null |
        awk '/^ +[0-9.]+%/ && ++n <= 25' >"$work/$name.top"
    [ ! -s "$work/$name.perf" ] ||
        awk -F, -v n="$events" '$1 ~ /^[0-9]+$/ {e = $3; sub(/^syscalls:sys_enter_/, "sys_", e);
            sub(/^raw_syscalls:sys_enter/, "syscalls", e); printf "perf_%s %.4f\n", e, $1 / n}' \
            "$work/$name.perf" >>"$work/$name.delta"
    sort -o "$work/$name.delta" "$work/$name.delta"
}

names=(direct)
measure direct - "${direct[@]}" -- "${ports[0]}"
if [ "$haproxy" = 1 ]; then
    measure haproxy "${bench_pid[haproxy]}" "${via_ha[@]}" -- "${ports[0]}"
    names+=(haproxy)
fi
if [ "$config" != sharded ]; then
    measure passthrough "${bench_pid[pass]}" "${pass[@]}" -- "${ports[0]}"
    names+=(passthrough)
fi
if [ "$config" != passthrough ]; then
    measure sharded "$shard_pid" "${shard[@]}" -- "${ports[0]}" "${ports[1]}"
    names+=(sharded)
fi

what="oltp_point_select, ps-mode $ps, $threads threads"
[ -z "$setsql" ] || what="PyMySQL text point selects after '$setsql', 1 connection"
echo "per client statement: $what, $events events" \
    "(sharded: both servers summed; *@end: the value after the run)"
files=()
for n in "${names[@]}"; do files+=("$work/$n.delta"); done
# one row per counter, one column per run
awk -v all="$all" -v cols="${names[*]}" '
    BEGIN {nc = split(cols, c, " ")}
    FNR == 1 {f++}
    {v[$1, f] = $2; if (!($1 in seen)) {seen[$1] = 1; order[++nk] = $1}}
    END {
        printf "%-28s", "counter"; for (i = 1; i <= nc; i++) printf " %12s", c[i]; printf "\n"
        for (k = 1; k <= nk; k++) {
            name = order[k]; moved = 0
            for (i = 1; i <= nc; i++) { x = v[name, i] + 0; if (x >= 0.01 || x <= -0.01 || name ~ /@end|_cpu_us/) moved = 1 }
            if (!moved && !all) continue
            printf "%-28s", name
            for (i = 1; i <= nc; i++) printf " %12s", ((name, i) in v) ? v[name, i] : "-"
            printf "\n"
        }
    }' "${files[@]}"
if [ "$profile" = 1 ]; then
    for n in "${names[@]}"; do
        echo "top symbols of the server's samples, $n:"
        cat "$work/$n.top"
    done
fi
