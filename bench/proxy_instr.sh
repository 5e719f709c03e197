#!/usr/bin/env bash
# proxy_instr.sh -- dal-proxy's instructions per sysbench event, counted by
# callgrind: dal-proxy (pass-through, as haproxy.sh builds it) runs under
# valgrind --tool=callgrind; sysbench runs WARM events unmeasured, the
# counters are zeroed (callgrind_control -z), N events run, the profile is
# dumped (callgrind_control -d).  Prints the total per event and the top
# functions by exclusive cost per event; keeps the profile in OUT.
#
#   bash bench/proxy_instr.sh [--ps-mode disable|auto] [--events N] [--out FILE]
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
ps=disable events=2000 warm=500 out=
bench_options "--ps-mode=ps --events=events --out=out" "$@"
bench_need valgrind valgrind
bench_harness
[ -n "$out" ] || out=$work/cg.out
rm -f "$out" "$out".*

px_cluster 1 --db sbtest
dport=$("$harness/cluster.sh" free-port)
bench_passthrough_ini "$work/pass.ini" "$dport" "${ports[0]}" sbtest
LD_LIBRARY_PATH=$DAL_BUILDDIR/.libs valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$DAL_BUILDDIR/proxy/.libs/dal-proxy" -c "$work/pass.ini" >"$work/proxy.log" 2>&1 &
vpid=$!
pids+=("$vpid")
bench_wait_port "$dport" "$vpid" "dal-proxy under callgrind" "$work/proxy.log" 300
sb=("${bench_table[@]}" --threads=1 --time=0)
mapfile -t via_dal < <(bench_target "$dport")
bench_sb_prepare "${ports[0]}" sbtest
sysbench oltp_point_select "${sb[@]}" "${via_dal[@]}" --db-ps-mode="$ps" --events="$warm" run >/dev/null
callgrind_control -z "$vpid" >/dev/null
sysbench oltp_point_select "${sb[@]}" "${via_dal[@]}" --db-ps-mode="$ps" --events="$events" run >/dev/null
callgrind_control -d "$vpid" >/dev/null
kill "$vpid"; wait "$vpid" 2>/dev/null || true
prof=$out.1
total=$(callgrind_annotate "$prof" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); if (!t++) print $1 }')
echo "$((total / events)) instructions per event (oltp_point_select, --db-ps-mode=$ps, $events events); profile $prof"
callgrind_annotate "$prof" 2>/dev/null | awk -v n="$events" '/^-+$/ {s++; next} s >= 4 && NF >= 2 && $1 ~ /^[0-9,]+$/ { c=$1; gsub(",", "", c); if (k++ < 25) printf "%8d  %s\n", c / n, $0 }' | sed 's/ ([^)]*)$//'
