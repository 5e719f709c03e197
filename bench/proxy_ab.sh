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
rounds=9 secs=3 threads=4 ps=disable

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit "$1"; }
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --time) secs=$2; shift ;;
    --threads) threads=$2; shift ;;
    --ps-mode) ps=$2; shift ;;
    -h | --help) usage 0 ;;
    -*) echo "proxy_ab.sh: unknown option '$1'" >&2; usage 2 >&2 ;;
    *) break ;;
    esac
    shift
done
[ $# -eq 2 ] || usage 2 >&2
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
for b in "$old" "$new"; do
    [ -x "$b/proxy/.libs/dal-proxy" ] || { echo "proxy_ab.sh: no proxy/.libs/dal-proxy in $b" >&2; exit 1; }
done
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_need proxy_ab.sh sysbench sysbench
export DAL_BUILDDIR=$new
# shellcheck source=tests/harness/proxy_lib.sh
. "$src/tests/harness/proxy_lib.sh"

px_cluster 1 --db sbtest
# start BUILD NAME: a pass-through dal-proxy of BUILD; its port in port_NAME
declare -A port pid
start() {
    local b=$1 name=$2 p
    p=$("$harness/cluster.sh" free-port)
    bench_passthrough_ini "$work/$name.ini" "$p" "${ports[0]}" sbtest
    LD_LIBRARY_PATH=$b/.libs "$b/proxy/.libs/dal-proxy" -c "$work/$name.ini" >"$work/$name.log" 2>&1 &
    pid[$name]=$!
    pids+=("${pid[$name]}")
    port[$name]=$p
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "proxy_ab.sh: the $name dal-proxy did not start: $(tail -3 "$work/$name.log")" >&2
    exit 1
}
start "$old" old
start "$new" new

common=(--tables=1 --table-size=10000 --auto_inc=off --create_secondary=off --skip_trx=on)
sysbench oltp_read_only "${common[@]}" --mysql-host=127.0.0.1 --mysql-port="${ports[0]}" \
    --mysql-user=dal --mysql-password=dalpass --mysql-db=sbtest prepare >/dev/null
hz=$(getconf CLK_TCK)

# run NAME -> "QPS PROXY_US": throughput and the proxy's CPU a query
run() {
    local name=$1 t0 t1 qps q
    t0=$(proc_ticks "${pid[$name]}")
    read -r qps _ q < <(sysbench oltp_point_select "${common[@]}" --mysql-host=127.0.0.1 \
        --mysql-port="${port[$name]}" --mysql-user=sb --mysql-password=sbpass --mysql-db=sbtest \
        --threads="$threads" --time="$secs" --db-ps-mode="$ps" --percentile=99 run | sb_figures)
    t1=$(proc_ticks "${pid[$name]}")
    awk -v r="$qps" -v q="$q" -v t=$((t1 - t0)) -v hz="$hz" 'BEGIN {printf "%s %.1f\n", r, t * 1e6 / hz / q}'
}

run old >/dev/null
run new >/dev/null
ratios=() ocpu=() ncpu=()
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then
        read -r oq oc < <(run old)
        read -r nq nc < <(run new)
    else
        read -r nq nc < <(run new)
        read -r oq oc < <(run old)
    fi
    ratio=$(awk -v a="$nq" -v b="$oq" 'BEGIN {printf "%.3f", a / b}')
    echo "round $r: old $oq/s ($oc us a query)  new $nq/s ($nc us)  new/old $ratio"
    ratios+=("$ratio") ocpu+=("$oc") ncpu+=("$nc")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "ps-mode $ps: median new/old $(median "${ratios[@]}"); CPU a query: old $(median "${ocpu[@]}") us, new $(median "${ncpu[@]}") us"
px_finish "proxy_ab.sh"
