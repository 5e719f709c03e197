#!/usr/bin/env bash
# reshard.sh [ROWS] [UPDATES] -- `dal reshard` rates on this machine: a table
# of ROWS rows (default 1,000,000) on 2 x 4 moves to 4 x 8 on four MariaDB
# servers started here; prints the copy rate (rows/s, one run of `reshard
# copy` with no throttle) and the catch-up rate (changed keys/s: UPDATES
# rows, default 100,000, changed by single-row statements spread over the
# old tables after the copy, then one `reshard catchup`).  The rows are
# loaded straight into the physical tables (mod 4 of poi, two per server).
set -euo pipefail
ROWS=${1:-1000000}
UPDATES=${2:-100000}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DAL_BUILDDIR:-$src/_build}
dal_bin=${DAL_BIN:-$build/tools/dal}
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$build/plugins/.libs}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalrs.XXXXXX")
trap '"$src/tests/harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$src/tests/harness/cluster.sh" start "$work/c" 4 --db 'old_%d' --db 'new_%d' >/dev/null
mapfile -t ports <"$work/c/ports"
{
    for i in 0 1; do
        printf '[datasource old%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/old_%d\n' "$i" "${ports[$i]}" "$i"
    done
    printf '[table food]\ndatasource = old\ndb_shard_num = 2\ntable_shard_num = 4\nshard_key = poi\nstrategy = mod\n'
} >"$work/old.ini"
{
    for i in 0 1 2 3; do
        printf '[datasource new%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/new_%d\n' "$i" "${ports[$i]}" "$i"
    done
    printf '[table food]\ndatasource = new\ndb_shard_num = 4\ntable_shard_num = 8\nshard_key = poi\nstrategy = mod\n'
} >"$work/new.ini"
dal() { "$dal_bin" -c "$work/old.ini" "$@"; }
dal exec "CREATE TABLE food (id BIGINT PRIMARY KEY, poi BIGINT NOT NULL, name VARCHAR(60),
          price DECIMAL(10,2) NULL, KEY (poi))" >/dev/null
for t in 0 1 2 3; do
    node=$((t / 2))
    python3 - "$ROWS" "$t" <<'PY' | mariadb -h127.0.0.1 -P"${ports[$node]}" -udal -pdalpass "old_$node"
import sys
rows, t = int(sys.argv[1]), int(sys.argv[2])
batch = []
for i in range(1, rows + 1):
    poi = i % 1000
    if poi % 4 != t:
        continue
    batch.append("(%d,%d,'dish %d',%d.%02d)" % (i, poi, i, i % 100, i % 97))
    if len(batch) == 2000:
        print("INSERT INTO food_%d VALUES %s;" % (t, ",".join(batch)))
        batch = []
if batch:
    print("INSERT INTO food_%d VALUES %s;" % (t, ",".join(batch)))
PY
done
t0=$(date +%s.%N)
dal reshard copy --to "$work/new.ini" --chunk-size 2000 food >/dev/null
t1=$(date +%s.%N)
for t in 0 1 2 3; do
    node=$((t / 2))
    python3 - "$ROWS" "$UPDATES" "$t" <<'PY' | mariadb -h127.0.0.1 -P"${ports[$node]}" -udal -pdalpass "old_$node"
import sys
rows, updates, t = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
step = max(1, rows // updates)
for i in range(1, rows + 1, step):
    if (i % 1000) % 4 == t:
        print("UPDATE food_%d SET name = 'changed %d' WHERE id = %d;" % (t, i, i))
PY
done
t2=$(date +%s.%N)
dal reshard catchup --to "$work/new.ini" food >/dev/null
t3=$(date +%s.%N)
dal reshard verify --to "$work/new.ini" --chunk-size 5000 food >/dev/null || echo "verify found differences" >&2
python3 - "$ROWS" "$UPDATES" "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
rows, updates = int(sys.argv[1]), int(sys.argv[2])
t0, t1, t2, t3 = map(float, sys.argv[3:])
print("copy:     %d rows in %.1f s: %.0f rows/s" % (rows, t1 - t0, rows / (t1 - t0)))
print("catch-up: %d changed keys in %.1f s: %.0f keys/s" % (updates, t3 - t2, updates / (t3 - t2)))
PY
