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
# shellcheck source=tests/harness/reshard_lib.sh
. "$(dirname "$0")/../harness/reshard_lib.sh"

ROWS=3000
reshard_two_layouts "$ROWS"

# one writer through libdal, following live.ini; its statements are kept
# for the reference
cp "$work/old.ini" "$work/live.ini"
reshard_writer w 1 "$ROWS" 10000000
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
wait "$wpid" || fail "the writer: a statement failed: $(tail -3 "$work/writer_w.err")"
"$dal_bin" -c "$work/ref.ini" shell <"$work/ops_w.sql" >/dev/null || fail "the reference's statements"
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
