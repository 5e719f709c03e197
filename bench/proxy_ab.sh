#!/usr/bin/env bash
# proxy_ab.sh -- one dal-proxy build against another: the same sysbench
# test through each (pass-through, in front of one MariaDB server and
# schema), in alternating rounds (which goes first alternates too), so a
# change to the proxy's path is measured as a median ratio of back-to-back
# runs on a noisy machine.  Also each proxy's CPU per query.
#
#   bench/proxy_ab.sh [--rounds N] [--time S] [--threads T]
#                     [--ps-mode auto|disable] OLD_BUILD NEW_BUILD
#
# OLD_BUILD and NEW_BUILD are build trees (their proxy/.libs/dal-proxy runs
# with their .libs/libdal.so).  Defaults: 9 rounds of 3 s, 4 client threads,
# oltp_point_select with the text protocol (disable), 10,000 rows.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
rounds=9 secs=3 threads=4 ps=disable
bench_options "--rounds=rounds --time=secs --threads=threads --ps-mode=ps --" "$@"
set -- "${bench_args[@]}"
[ $# -eq 2 ] || bench_usage 2 >&2
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
for b in "$old" "$new"; do
    [ -x "$b/proxy/.libs/dal-proxy" ] || { echo "proxy_ab.sh: no proxy/.libs/dal-proxy in $b" >&2; exit 1; }
done
export DAL_BUILDDIR=$new
bench_harness

px_cluster 1 --db sbtest
# each build's dal-proxy, pass-through, with its own libdal.so
for b in old new; do
    LD_LIBRARY_PATH=${!b}/.libs proxy_bin=${!b}/proxy/.libs/dal-proxy bench_passthrough "$b"
done
bench_sb_prepare "${ports[0]}" sbtest
hz=$(getconf CLK_TCK)

# run NAME -> "QPS PROXY_US": throughput and the proxy's CPU a query
run() {
    local target t0 t1 qps q
    mapfile -t target < <(bench_target "${bench_port[$1]}")
    t0=$(proc_ticks "${bench_pid[$1]}")
    read -r qps _ q < <(sb_run oltp_point_select "$ps" "${target[@]}")
    t1=$(proc_ticks "${bench_pid[$1]}")
    awk -v r="$qps" -v q="$q" -v t=$((t1 - t0)) -v hz="$hz" 'BEGIN {printf "%s %.1f\n", r, t * 1e6 / hz / q}'
}

run old >/dev/null
run new >/dev/null
ratios=() ocpu=() ncpu=()
for r in $(seq "$rounds"); do
    { read -r oq oc; read -r nq nc; } < <(bench_pair "$r" run old new)
    ratio=$(ratio "$oq" "$nq")
    echo "round $r: old $oq/s ($oc us a query)  new $nq/s ($nc us)  new/old $ratio"
    ratios+=("$ratio") ocpu+=("$oc") ncpu+=("$nc")
done
echo "ps-mode $ps: median new/old $(median "${ratios[@]}"); CPU a query: old $(median "${ocpu[@]}") us, new $(median "${ncpu[@]}") us"
px_finish "proxy_ab.sh"
