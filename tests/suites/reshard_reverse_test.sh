#!/usr/bin/env bash
# reshard_reverse_test.sh -- `dal reshard reverse` undoes a switch without
# losing a write: a table moves from 2 x 2 to 2 x 4 with a writer going
# through libdal (`dal shell` following live.ini) all along; after the
# switch its writes reach only the new layout; `reverse` brings the old
# layout up to date from the new nodes' binary logs, `reverse --switch`
# puts the old configuration back in live.ini; then no statement has
# failed, the old layout equals an unsharded reference that got the same
# statements, and it holds rows written only after the first switch.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

ROWS=3000
px_cluster 2 --db 'old_%d' --db 'new_%d' --db ref
dal_bin=${DAL_BIN:-$builddir/tools/dal}

layout() { # layout NAME TABLES: the INI of one layout
    for i in 0 1; do
        printf '[datasource %s%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/%s_%d\n' "$1" "$i" "${ports[$i]}" "$1" "$i"
    done
    printf '[table food]\ndatasource = %s\ndb_shard_num = 2\ntable_shard_num = %d\nshard_key = poi\nstrategy = mod\n' "$1" "$2"
    printf '[dal]\nwatch = true\nallow_reshard = true\n'
}
layout old 2 >"$work/old.ini"
layout new 4 >"$work/new.ini"
printf '[datasource ref]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/ref\n[dal]\ndefault_datasource = ref\n' \
    "${ports[1]}" >"$work/ref.ini"
dal() { "$dal_bin" -c "$work/old.ini" "$@"; }
dump() { "$dal_bin" -c "$1" exec --json "SELECT id, poi, name FROM food ORDER BY id"; }

ddl="CREATE TABLE food (id BIGINT PRIMARY KEY, poi BIGINT NOT NULL, name VARCHAR(60))"
dal exec "$ddl" >/dev/null || fail "create"
"$dal_bin" -c "$work/ref.ini" exec "$ddl" >/dev/null || fail "create the reference"
python3 - "$ROWS" >"$work/rows.sql" <<'PY'
import sys
n = int(sys.argv[1])
for s in range(1, n + 1, 500):
    print("INSERT INTO food VALUES %s;" % ", ".join(
        "(%d, %d, 'dish %d')" % (i, i * 7 % 100, i) for i in range(s, min(s + 500, n + 1))))
PY
dal shell <"$work/rows.sql" >/dev/null || fail "loading rows"
"$dal_bin" -c "$work/ref.ini" shell <"$work/rows.sql" >/dev/null || fail "loading the reference"

# one writer through libdal, following live.ini; its statements are kept
# for the reference
cp "$work/old.ini" "$work/live.ini"
python3 - "$ROWS" "$work/stop" "$work/ops.sql" <<'PY' | "$dal_bin" -c "$work/live.ini" shell >/dev/null 2>"$work/writer.err" &
import os, random, sys, time
rows, stop, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(5)
ids, next_id, stmts, i = list(range(1, rows + 1)), 10_000_000, [], 0
while not os.path.exists(stop):
    r = rng.random()
    if r < 0.4:
        sql = "INSERT INTO food (id, poi, name) VALUES (%d, %d, 'w%d')" % (next_id, rng.randrange(100), i)
        ids.append(next_id)
        next_id += 1
    elif r < 0.8:
        sql = "UPDATE food SET name = 'u%d' WHERE id = %d" % (i, rng.choice(ids))
    else:
        sql = "DELETE FROM food WHERE id = %d" % rng.choice(ids)
    stmts.append(sql)
    i += 1
    print(sql + ";", flush=True)
    time.sleep(0.005)
with open(path, "w") as f:
    f.write("".join(s + ";\n" for s in stmts))
PY
wpid=$!

dal reshard copy --to "$work/new.ini" food >/dev/null || fail "copy"
dal reshard catchup --to "$work/new.ini" food >/dev/null || fail "catch-up"
out=$(dal reshard reverse --to "$work/new.ini" food 2>&1) && fail "reverse before the switch ran: $out"
grep -q "reverse follows a switch" <<<"$out" || fail "reverse before the switch: $out"
for attempt in 1 2 3; do
    out=$(dal reshard switch --source "$work/live.ini" --to "$work/new.ini" food 2>&1) && break
    grep -q "abandoned" <<<"$out" || break
done
grep -q "^switched food to " <<<"$out" || fail "switch: $out"
cmp -s "$work/live.ini" "$work/new.ini" || fail "live.ini is not new.ini after the switch"
sleep 1
# the writes since the switch are only in the new layout
dump "$work/new.ini" >"$work/new1.json"
dump "$work/old.ini" >"$work/old1.json"
cmp -s "$work/new1.json" "$work/old1.json" && fail "the old layout got the writes made after the switch"

out=$(dal reshard reverse --to "$work/new.ini" food 2>&1) || fail "reverse: $out"
grep -q "^reversed food: .*old.ini caught up from .*new.ini, lag [0-9]* ms" <<<"$out" || fail "reverse: $out"
out=$(dal reshard status food) || fail "status"
grep -q "^  reverse:new0 " <<<"$out" || fail "status has no reverse catch-up: $out"
# reverse alone (before any switch back) brought the writer's rows of after
# the switch into the old layout
dump "$work/old.ini" >"$work/old2.json"
python3 -c "$(cat <<'PY'
import json, sys
n = lambda p: sum(1 for r in json.load(open(p))["rows"] if int(r[0]) >= 10000000)
print("writer's rows in the old layout: %d at the switch, %d after reverse" % (n(sys.argv[1]), n(sys.argv[2])))
assert n(sys.argv[2]) > n(sys.argv[1])
PY
)" "$work/old1.json" "$work/old2.json" || fail "reverse did not bring the new layout's writes to the old one"
sleep 0.5
for attempt in 1 2 3; do
    out=$(dal reshard reverse --switch --source "$work/live.ini" --to "$work/new.ini" food 2>&1) && break
    grep -q "abandoned" <<<"$out" || break
done
grep -q "^switched food back to .*old.ini: writes held [0-9]* ms" <<<"$out" || fail "switch back: $out"
cmp -s "$work/live.ini" "$work/old.ini" || fail "live.ini is not old.ini after the switch back"
grep -q "^food: phase reversed" <<<"$(dal reshard status food)" || fail "status after the switch back"
sleep 1
touch "$work/stop"
wait "$wpid" || fail "the writer: a statement failed: $(tail -3 "$work/writer.err")"
"$dal_bin" -c "$work/ref.ini" shell <"$work/ops.sql" >/dev/null || fail "the reference's statements"
dump "$work/ref.ini" >"$work/ref.json"
dump "$work/old.ini" >"$work/old.json"
cmp -s "$work/old.json" "$work/ref.json" || fail "after the switch back the old layout differs from the reference"
python3 -c "$(cat <<'PY'
import json, sys
old = {r[0] for r in json.load(open(sys.argv[1]))["rows"]}
new1 = {r[0] for r in json.load(open(sys.argv[2]))["rows"]}
old1 = {r[0] for r in json.load(open(sys.argv[3]))["rows"]}
after = (new1 - old1) & old
print("rows written after the switch, kept by the switch back:", len(after))
assert after
PY
)" "$work/old.json" "$work/new1.json" "$work/old1.json" || fail "no write of after the switch reached the old layout"
dal reshard cleanup --to "$work/new.ini" food >/dev/null 2>&1 && fail "cleanup after the switch back dropped the old tables"
dal reshard abort --to "$work/new.ini" food || fail "abort after the switch back"
[ "$fails" = 0 ] || { echo "reshard_reverse_test: $fails failure(s)" >&2; exit 1; }
echo "reshard_reverse_test: ok"
