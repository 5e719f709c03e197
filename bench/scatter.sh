#!/usr/bin/env bash
# scatter.sh [BUILD_DIR] -- scatter latency against clusters of 2, 4, 8 and
# 16 nodes, each node sleeping 50 ms: prints one JSON line per size.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/_build}
export DAL_PLUGIN_DIR="$build/plugins/.libs"
for n in 2 4 8 16; do
    work=$(mktemp -d "${TMPDIR:-/tmp}/dalscatter.XXXXXX")
    "$src/tests/harness/cluster.sh" start "$work/c" "$n" --db 'p%d' >/dev/null
    mapfile -t ports < "$work/c/ports"
    {
        printf '[dal]\nmax_parallel = 16\n'
        for ((i = 0; i < n; i++)); do
            printf '[datasource n%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/p%d\n' "$i" "${ports[$i]}" "$i"
        done
        printf '[table sleepy]\ndatasource = n\ndb_shard_num = %d\ntable_shard_num = %d\nshard_key = k\nstrategy = mod\n' "$n" "$n"
    } > "$work/s.ini"
    SCATTER_NODES=$n "$build/bench/scatter_bench" "$work/s.ini" 9 || true
    "$src/tests/harness/cluster.sh" stop "$work/c" --clean >/dev/null 2>&1 || true
    rm -rf "$work"
done
