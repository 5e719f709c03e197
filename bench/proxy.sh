#!/usr/bin/env bash
# proxy.sh -- dal-proxy against MariaDB itself, judged by sysbench: the
# same sysbench test run alternately on a plain server (the baseline) and
# through dal-proxy (the table sharded over 2 servers and 8 tables), so
# the figure is a ratio of back-to-back runs on one machine, with the
# latency the proxy adds at sysbench's 99th percentile.
#
#   bench/proxy.sh [--rounds N] [--time S] [--threads T] [--ps-mode auto|disable]
#                  [--test NAME] [--baseline DAL_PROXY] [--json]
#
# --baseline: the baseline is another dal-proxy program (another build,
# its own plugins) serving the same sharded table, instead of MariaDB: one
# build of the proxy against another.
# Defaults: 5 rounds of 3 s, 2 client threads, oltp_point_select with
# prepared statements (--ps-mode disable: the text protocol), 10,000 rows.
# Starts its own cluster and proxy under a temporary directory.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
rounds=5 secs=3 threads=2 ps=auto test=oltp_point_select json=0 baseline=""
bench_options "--rounds=rounds --time=secs --threads=threads --ps-mode=ps --test=test
    --baseline=baseline --json" "$@"
bench_harness

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
bench_sharded_ini "$work/px.ini" "$port"
px_start "$work/px.ini" "$port"
base_name=mariadb
if [ -n "$baseline" ]; then
    bport=$("$harness/cluster.sh" free-port)
    bench_sharded_ini "$work/base.ini" "$bport"
    DAL_PLUGIN_DIR=$(cd "$(dirname "$baseline")" && pwd)/../plugins/.libs proxy_bin=$baseline \
        px_start "$work/base.ini" "$bport"
    base_name=baseline
fi

bench_sb_prepare "${ports[0]}" plain
bench_sb_prepare "$port"
mapfile -t direct < <(bench_target "${ports[0]}" plain)
mapfile -t proxied < <(bench_target "$port")
[ -z "$baseline" ] || mapfile -t direct < <(bench_target "$bport")

ratios=() added=()
for r in $(seq "$rounds"); do
    read -r a pa _ < <(sb_run "$test" "$ps" "${direct[@]}")
    read -r b pb _ < <(sb_run "$test" "$ps" "${proxied[@]}")
    ratio=$(ratio "$a" "$b")
    plus=$(awk -v a="$pa" -v b="$pb" 'BEGIN {printf "%.0f", (b - a) * 1000}')
    ratios+=("$ratio")
    added+=("$plus")
    [ "$json" = 1 ] || printf 'round %d: %s %s/s p99 %s ms  dal-proxy %s/s p99 %s ms  ratio %s  p99 +%s us\n' \
        "$r" "$base_name" "$a" "$pa" "$b" "$pb" "$ratio" "$plus"
done
median=$(median "${ratios[@]}")
median_added=$(median "${added[@]}")
if [ "$json" = 1 ]; then
    printf '{"baseline":"%s","test":"%s","ps_mode":"%s","threads":%d,"rounds":%d,"ratios":[%s],"median_ratio":%s,"median_added_p99_us":%s}\n' \
        "$base_name" "$test" "$ps" "$threads" "$rounds" "$(IFS=,; echo "${ratios[*]}")" "$median" "$median_added"
else
    echo "median dal-proxy/$base_name: $median, p99 latency +$median_added us ($test, ps-mode $ps, $threads threads)"
fi
