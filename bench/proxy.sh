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
command -v sysbench >/dev/null || { echo "proxy.sh: needs sysbench (apt-get install sysbench)" >&2; exit 1; }
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$src/plugins/.libs}

work=$(mktemp -d "${TMPDIR:-/tmp}/dalpxb.XXXXXX")
pid="" bpid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    [ -n "$bpid" ] && kill "$bpid" 2>/dev/null
    "$src/tests/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

"$src/tests/cluster.sh" start "$work/c" 2 --db 'shard_%d' --db plain >/dev/null
mapfile -t ports <"$work/c/ports"
port=$("$src/tests/cluster.sh" free-port)
write_ini() { # FILE PORT
    cat >"$1" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/shard_0
[datasource ds1]
master = mysql://dal:dalpass@127.0.0.1:${ports[1]}/shard_1
[dal]
default_datasource = ds0
[table sbtest1]
datasource = ds
db_shard_num = 2
table_shard_num = 8
shard_key = id
strategy = mod
[proxy]
listen = 127.0.0.1:$2
database = sbtest
[proxy user sb]
password = sbpass
EOF
}
wait_for() { # PORT
    for _ in $(seq 50); do
        mariadb -h127.0.0.1 -P"$1" -usb -psbpass -e 'SELECT 1' >/dev/null 2>&1 && return
        sleep 0.1
    done
}
write_ini "$work/px.ini" "$port"
"$src/proxy/dal-proxy" -c "$work/px.ini" >"$work/px.log" 2>&1 &
pid=$!
wait_for "$port"
base_name=mariadb
if [ -n "$baseline" ]; then
    bport=$("$src/tests/cluster.sh" free-port)
    write_ini "$work/base.ini" "$bport"
    DAL_PLUGIN_DIR=$(cd "$(dirname "$baseline")" && pwd)/../plugins/.libs \
        "$baseline" -c "$work/base.ini" >"$work/base.log" 2>&1 &
    bpid=$!
    wait_for "$bport"
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
        --percentile=99 run |
        awk '/queries:/ {gsub(/[(]/, "", $3); q = $3} /99th percentile:/ {p = $3} END {print q, p}'
}
median_of() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratios=() added=()
for r in $(seq "$rounds"); do
    read -r a pa < <(run "${direct[@]}")
    read -r b pb < <(run "${proxied[@]}")
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
