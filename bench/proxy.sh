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
rounds=5 secs=3 threads=2 ps=auto test=oltp_point_select json=0 baseline=""

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit "$1"; }
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --time) secs=$2; shift ;;
    --threads) threads=$2; shift ;;
    --ps-mode) ps=$2; shift ;;
    --test) test=$2; shift ;;
    --baseline) baseline=$2; shift ;;
    --json) json=1 ;;
    -h | --help) usage 0 ;;
    *) echo "proxy.sh: unknown option '$1'" >&2; usage 2 >&2 ;;
    esac
    shift
done
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_need proxy.sh sysbench sysbench
export DAL_BUILDDIR=${DAL_BUILDDIR:-$src/_build}
# shellcheck source=tests/harness/proxy_lib.sh
. "$src/tests/harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
write_ini() { # FILE PORT
    {
        px_ini_sharded
        px_ini_table sbtest1 8 id mod
        cat <<EOF
[proxy]
listen = 127.0.0.1:$2
database = sbtest
[proxy user sb]
password = sbpass
EOF
    } >"$1"
}
write_ini "$work/px.ini" "$port"
px_start "$work/px.ini" "$port"
base_name=mariadb
if [ -n "$baseline" ]; then
    bport=$("$harness/cluster.sh" free-port)
    write_ini "$work/base.ini" "$bport"
    DAL_PLUGIN_DIR=$(cd "$(dirname "$baseline")" && pwd)/../plugins/.libs proxy_bin=$baseline \
        px_start "$work/base.ini" "$bport"
    base_name=baseline
fi

common=(--tables=1 --table-size=10000 --auto_inc=off --create_secondary=off --skip_trx=on)
direct=(--mysql-host=127.0.0.1 --mysql-port="${ports[0]}" --mysql-user=dal --mysql-password=dalpass --mysql-db=plain)
proxied=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sb --mysql-password=sbpass --mysql-db=sbtest)
sysbench oltp_read_only "${common[@]}" "${direct[@]}" prepare >/dev/null
sysbench oltp_read_only "${common[@]}" "${proxied[@]}" prepare >/dev/null
[ -z "$baseline" ] || direct=(--mysql-host=127.0.0.1 --mysql-port="$bport" --mysql-user=sb --mysql-password=sbpass --mysql-db=sbtest)

run() { # sysbench target options -> "QPS P99_MS"
    sysbench "$test" "${common[@]}" "$@" --threads="$threads" --time="$secs" --db-ps-mode="$ps" \
        --percentile=99 run | sb_figures
}
ratios=() added=()
for r in $(seq "$rounds"); do
    read -r a pa _ < <(run "${direct[@]}")
    read -r b pb _ < <(run "${proxied[@]}")
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
    plus=$(awk -v a="$pa" -v b="$pb" 'BEGIN {printf "%.0f", (b - a) * 1000}')
    ratios+=("$ratio")
    added+=("$plus")
    [ "$json" = 1 ] || printf 'round %d: %s %s/s p99 %s ms  dal-proxy %s/s p99 %s ms  ratio %s  p99 +%s us\n' \
        "$r" "$base_name" "$a" "$pa" "$b" "$pb" "$ratio" "$plus"
done
median=$(printf '%s\n' "${ratios[@]}" | median_of)
median_added=$(printf '%s\n' "${added[@]}" | median_of)
if [ "$json" = 1 ]; then
    printf '{"baseline":"%s","test":"%s","ps_mode":"%s","threads":%d,"rounds":%d,"ratios":[%s],"median_ratio":%s,"median_added_p99_us":%s}\n' \
        "$base_name" "$test" "$ps" "$threads" "$rounds" "$(IFS=,; echo "${ratios[*]}")" "$median" "$median_added"
else
    echo "median dal-proxy/$base_name: $median, p99 latency +$median_added us ($test, ps-mode $ps, $threads threads)"
fi
