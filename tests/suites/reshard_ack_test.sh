#!/usr/bin/env bash
# reshard_ack_test.sh -- `dal reshard switch` waits for every live dal
# instance to acknowledge its write fence, whatever the time each takes:
#   stopped  one writer (`dal shell`, libdal, following live.ini) is stopped
#            with SIGSTOP as soon as the fence is in live.ini: registered and
#            live, it cannot acknowledge, so the switch is abandoned, names
#            it, and puts live.ini back as it was (no fence left); after
#            SIGCONT its writes go on;
#   slow     another writer applies every new version of live.ini 700 ms
#            late (the test hook DAL_TEST_RELOAD_DELAY_MS, core/api/
#            reload.c): the switch waits for its acknowledgement, and none
#            of its writes reaches the old layout after the last catch-up;
#            the first writer is stopped 3.5 s before the switch and
#            continued 2 s into it: taken for dead, it is passed over, and
#            once continued its writes wait for its lease (it reads live.ini
#            again) and do not reach the old layout.
#   static   dal-proxy on a configuration whose food carries a fence
#            (write_fence = 1_400: generation 1, held writes fail after
#            400 ms): an INSERT and a raw LOAD DATA into a physical table of
#            food are held and then fail with the fence's error (never run
#            on the layout, however old the generation), a SELECT runs;
#            the proxy then stops.
# Between the last two, a fence left in a document by a switch that died
# makes `switch` refuse, and `abort-switch` removes it.
# Then no statement failed, and the new layout equals an unsharded
# reference that got the writers' statements (each writer keeps to rows of
# its own).  ACK_PARTS ("stopped slow", the default) picks the parts.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"
# shellcheck source=tests/harness/reshard_lib.sh
. "$(dirname "$0")/../harness/reshard_lib.sh"

ROWS=2000
parts=${ACK_PARTS:-static stopped slow}
reshard_two_layouts "$ROWS"

# ------------------------------------------------------ a fence in the file
if [[ " $parts " == *" static "* ]]; then
    sport=$("$harness/cluster.sh" free-port)
    { sed 's/^\[table food\]$/&\nwrite_fence = 1_400/' "$work/old.ini"; px_ini_proxy "$sport" shop apppass; } >"$work/fenced.ini"
    px_start "$work/fenced.ini" "$sport"
    pq() { mariadb -h127.0.0.1 -P"$sport" -uapp -papppass --comments --local-infile=1 -N shop -e "$1" 2>&1; }
    printf '900001\t5\tloaded\n' >"$work/load.tsv"
    held="write held over 400 ms by the write fence (generation 1) of a reshard's switch"
    out=$(pq "INSERT INTO food (id, poi, name) VALUES (900000, 1, 'fenced')") && fail "an INSERT ran through the fence: $out"
    grep -qF "$held on table food" <<<"$out" || fail "INSERT under the fence: $out"
    out=$(pq "/*+ dal datasource=old1 raw */ LOAD DATA LOCAL INFILE '$work/load.tsv' INTO TABLE food_1") &&
        fail "a LOAD DATA ran through the fence: $out"
    grep -qF "$held on table food" <<<"$out" || fail "LOAD DATA under the fence: $out"
    [ "$(pq "SELECT COUNT(*) FROM food")" = "$ROWS" ] || fail "a read under the fence, or a fenced write ran"
    echo "static fence: $out"
    # it has tried to write the table and follows another file than the
    # writers: live, it would never acknowledge the switch's fence
    kill "${pids[-1]}"
fi

cp "$work/old.ini" "$work/live.ini"
reshard_writer stopped 1 1000 10000000
spid=$!
DAL_TEST_RELOAD_DELAY_MS=700 reshard_writer slow 1001 2000 20000000
lpid=$!

dal reshard copy --to "$work/new.ini" food >/dev/null || fail "copy"
dal reshard catchup --to "$work/new.ini" food >/dev/null || fail "catch-up"
sleep 1.5   # both writers have registered (a beat a second)

# --------------------------------------------- a live instance that is stopped
if [[ " $parts " == *" stopped "* ]]; then
    dal reshard switch --source "$work/live.ini" --to "$work/new.ini" food >"$work/sw1.out" 2>&1 &
    swpid=$!
    # stopped before it reloads (a file's change reaches it 150 ms later)
    while kill -0 "$swpid" 2>/dev/null && ! grep -q '^write_fence' "$work/live.ini"; do sleep 0.005; done
    kill -STOP "$spid"
    wait "$swpid" && fail "the switch went on with a stopped instance: $(cat "$work/sw1.out")"
    out=$(cat "$work/sw1.out")
    kill -CONT "$spid"
    echo "$out" | sed 's/^/stopped instance: /'
    grep -q "did not acknowledge the write fence of food" <<<"$out" || fail "no instance named: $out"
    grep -q "switch abandoned" <<<"$out" || fail "not abandoned: $out"
    grep -q ":$spid:" <<<"$out" || fail "the stopped instance (pid $spid) is not named: $out"
    cmp -s "$work/live.ini" "$work/old.ini" || fail "live.ini is not old.ini after the abandoned switch"
    grep -q "^food: phase caught-up" <<<"$(dal reshard status food)" || fail "phase after the abandoned switch"
    sleep 1
fi

# ------------------------------------------- the fence of a switch that died
# left in the document: a new switch refuses, abort-switch removes it
{ sed 's/^\[table food\]$/&\nwrite_fence = 1_400/' "$work/old.ini"; } >"$work/dead.ini"
out=$(dal reshard switch --source "$work/dead.ini" --to "$work/new.ini" food 2>&1) &&
    fail "a switch went on over a fence left in the document: $out"
grep -q "already holds a write fence on food .*abort-switch" <<<"$out" || fail "switch over a left fence: $out"
out=$(dal reshard abort-switch --source "$work/dead.ini" --to "$work/new.ini" food 2>&1) || fail "abort-switch: $out"
grep -q "^removed the write fence on food from " <<<"$out" || fail "abort-switch: $out"
cmp -s "$work/dead.ini" "$work/old.ini" || fail "abort-switch left $(diff "$work/dead.ini" "$work/old.ini")"

# ------------------------------------------------- an instance that reloads late
if [[ " $parts " == *" slow "* ]]; then
    kill -STOP "$spid"
    sleep 3.5
    (sleep 2; kill -CONT "$spid") &
    out=$(dal reshard switch --source "$work/live.ini" --max-write-pause 3000 --to "$work/new.ini" food 2>&1) ||
        fail "switch with a late instance: $out"
    echo "$out" | sed 's/^/late instance: /'
    grep -q "^switched food to " <<<"$out" || fail "switch: $out"
    held=$(sed -n 's/.*writes held \([0-9]*\) ms.*/\1/p' <<<"$out")
    [ "${held:-0}" -ge 700 ] || fail "the switch did not wait for the late instance (writes held ${held:-?} ms)"
    grep -q "written to the old layout after the fence" <<<"$out" && fail "writes reached the old layout: $out"
    cmp -s "$work/live.ini" "$work/new.ini" || fail "live.ini is not new.ini after the switch"
    sleep 2   # the late instance has reloaded new.ini and written on it
fi

touch "$work/stop"
wait "$spid" || fail "the stopped writer: a statement failed: $(tail -3 "$work/writer_stopped.err")"
wait "$lpid" || fail "the late writer: a statement failed: $(tail -3 "$work/writer_slow.err")"
for w in stopped slow; do
    "$dal_bin" -c "$work/ref.ini" shell <"$work/ops_$w.sql" >/dev/null || fail "the reference's statements ($w)"
done
dump "$work/ref.ini" >"$work/ref.json"
if [[ " $parts " == *" slow "* ]]; then
    dump "$work/new.ini" >"$work/new.json"
    python3 - "$work/ref.json" "$work/new.json" <<'PY' || fail "the new layout differs from the reference"
import json, sys
ref = {tuple(r) for r in json.load(open(sys.argv[1]))["rows"]}
new = {tuple(r) for r in json.load(open(sys.argv[2]))["rows"]}
print("rows: reference %d, new layout %d; missing %d, extra %d" % (len(ref), len(new), len(ref - new), len(new - ref)))
sys.exit(0 if ref == new else 1)
PY
fi
[ "$fails" = 0 ] || { echo "reshard_ack_test: $fails failure(s)" >&2; exit 1; }
echo "reshard_ack_test: ok"
