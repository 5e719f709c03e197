#!/usr/bin/env bash
# syscalls.sh -- the system calls a proxy makes per client statement, a
# count the machine's noise does not move: dal-proxy (pass-through, one
# datasource) and haproxy in TCP mode in front of the same MariaDB server
# and schema, each traced with `strace -c -f` (all its threads) while
# sysbench runs N point selects through it, in both protocols.  Prints per
# proxy and protocol the calls a statement in all and by name.  strace
# slows the traced proxy: the counts are the figures, not the rates.
# --profile: then a run of the same statements untraced with `perf record
# -e cpu-clock` on the proxy (a software clock: no hardware counters
# needed), and its samples' shares: the kernel's, each user-space
# object's, and the top symbols.
#
#   bench/syscalls.sh [--events N] [--threads T] [--ps-mode auto|disable|both]
#                     [--profile]
#
# Defaults: 5,000 events, 2 client threads, both protocols, 10,000 rows.
# A warm-up of 200 events before each traced run opens the connections.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
events=5000 threads=2 modes="auto disable" profile=0
bench_options "--events=events --threads=threads --ps-mode=modes --profile" "$@"
[ "$modes" != both ] || modes="auto disable"
bench_need strace strace
bench_need haproxy haproxy
[ "$profile" = 0 ] || bench_need perf linux-perf
bench_harness

px_cluster 1 --db sbtest
bench_passthrough dal
# shellcheck disable=SC2154 # ports: px_cluster's
bench_haproxy ha "${ports[0]}"
bench_sb_prepare "${ports[0]}" sbtest
mapfile -t via_ha < <(bench_target "${bench_port[ha]}" sbtest)
mapfile -t via_dal < <(bench_target "${bench_port[dal]}")

# point_selects N PS TARGET...: N sysbench point selects, --db-ps-mode PS
point_selects() {
    sysbench oltp_point_select "${bench_table[@]}" "${@:3}" --threads="$threads" \
        --events="$1" --time=0 --db-ps-mode="$2" run >/dev/null
}

# traced NAME PS: the warm-up, then $events statements through the proxy
# NAME with strace -c following it; prints "TOTAL name=calls ..." a statement
traced() {
    local via out=$work/strace_$1_$2.txt spid
    case $1 in ha) via=("${via_ha[@]}") ;; dal) via=("${via_dal[@]}") ;; esac
    point_selects 200 "$2" "${via[@]}"
    strace -c -f -p "${bench_pid[$1]}" -o "$out" 2>/dev/null &
    spid=$!
    sleep 1  # strace attached to every thread
    point_selects "$events" "$2" "${via[@]}"
    kill -INT "$spid"
    wait "$spid" || true
    # strace -c's table: % time, seconds, usecs/call, calls, [errors,]
    # name; the last row's name is "total"
    awk -v n="$events" '
        /^-|^%|^ *$/ {next}
        $NF == "total" {total = $4; next}
        $4 / n >= 0.005 {list = list sprintf(" %s=%.2f", $NF, $4 / n)}
        END {printf "%.2f%s\n", total / n, list}' "$out"
}

# profiled NAME PS: $events statements through the proxy NAME under perf
# record (cpu-clock); prints the samples' shares by object, then the top
# symbols, indented
profiled() {
    local via out=$work/perf_$1_$2.data ppid
    case $1 in ha) via=("${via_ha[@]}") ;; dal) via=("${via_dal[@]}") ;; esac
    perf record -q -e cpu-clock -F 2000 -p "${bench_pid[$1]}" -o "$out" 2>/dev/null &
    ppid=$!
    sleep 1
    point_selects "$events" "$2" "${via[@]}"
    kill -INT "$ppid"
    wait "$ppid" || true
    perf report -i "$out" --no-children --sort dso --stdio 2>/dev/null |
        awk '/^ +[0-9.]+%/ {printf " %s %s", $2, $1} END {print ""}'
    perf report -i "$out" --no-children --sort dso,sym --stdio 2>/dev/null |
        awk '/^ +[0-9.]+%/ && ++n <= 8 {printf "    %s %s\n", $1, $NF}'
}

for ps in $modes; do
    for name in dal ha; do
        label=dal-proxy
        [ "$name" = dal ] || label=haproxy
        read -r total calls < <(traced "$name" "$ps")
        printf '%-9s %-7s %s system calls a statement:%s\n' "$label" "$ps" "$total" "$calls"
        if [ "$profile" = 1 ]; then
            printf '%-9s %-7s CPU samples by object:' "$label" "$ps"
            profiled "$name" "$ps"
        fi
    done
done
