#!/usr/bin/env bash
# lookup.sh [BUILD_DIR] [SECONDS] -- reads by a column other than the shard
# key on the demo layout (wm_food: 4 nodes, 100 tables, `mod`): `dal load`'s
# scatter workload (every physical table asked) against its lookup workload
# (`lookup = id`: a point select on wm_food_lookup_id, then one table; also
# over a hot set of 1,000 of the rows, without and with [dal] lookup_cache
# = 60s), and point-select (by shard key) for reference.  1 thread; prints dal load's
# JSON line of each.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/_build}
secs=${2:-5}
export DAL_PLUGIN_DIR="$build/plugins/.libs"
work=$(mktemp -d "${TMPDIR:-/tmp}/dallookup.XXXXXX")
trap '"$src/tests/harness/cluster.sh" stop "$work/c" --clean >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$src/tests/harness/cluster.sh" start "$work/c" 4 --db 'product_%d' >/dev/null
mapfile -t ports < "$work/c/ports"
{
    for i in 0 1 2 3; do
        printf '[datasource dbProductSku%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/product_%d\n' \
            "$i" "${ports[$i]}" "$i"
    done
    printf '[table wm_food]\ndatasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 100\n'
    printf 'shard_key = wm_poi_id\nstrategy = mod\n'
} >"$work/plain.ini"
{
    cat "$work/plain.ini"
    printf 'lookup = id\n'
    printf '[table wm_food_lookup_id]\ndatasource = dbProductSku\ndb_shard_num = 4\n'
    printf 'table_shard_num = 4\nshard_key = id\nstrategy = mod\n'
} >"$work/lookup.ini"
sed 's/^\[table wm_food\]$/[dal]\nlookup_cache = 60s\n[table wm_food]/' "$work/lookup.ini" >"$work/cached.ini"
dal="$build/tools/dal"
"$dal" -c "$work/lookup.ini" load -- --prepare --rows 10000 >/dev/null
for run in "plain.ini scatter" "lookup.ini lookup" "lookup.ini lookup --rows 1000" \
    "cached.ini lookup --rows 1000" "plain.ini point-select"; do
    read -r ini wl more <<<"$run"
    # shellcheck disable=SC2086
    "$dal" -c "$work/$ini" load -- "$wl" $more --duration "$secs" --warmup 1 --json
done
"$dal" -c "$work/lookup.ini" load -- --cleanup >/dev/null
