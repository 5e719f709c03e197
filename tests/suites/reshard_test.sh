#!/usr/bin/env bash
# reshard_test.sh -- `dal reshard` moves a table from 2 x 4 to 4 x 8 on four
# MariaDB servers, every phase end to end:
#   plan     its checks (another shard key, the old tables themselves) and
#            exact row counts per old -> new table;
#   copy     killed with SIGKILL half-way and resumed; a second copy beside
#            a running one is refused; rows where the new configuration's
#            router puts them, every column equal;
#   status   terminal and --json, before, during and after;
#   verify   equal layouts pass; a changed, a deleted and an added row in
#            the new layout are each found;
#   abort, and cleanup's refusal before a switch;
#   DDL      on a table being resharded (drink) stops its catch-up;
#   writes   RESHARD_WRITERS (default 4) writers through dal-proxy and as
#            many through libdal (`dal shell`), all following one file,
#            run from before a copy (killed with SIGKILL and resumed),
#            through a catch-up --follow (killed with SIGKILL, resumed,
#            stopped), through the switch and after it: no statement
#            fails, the new layout equals an unsharded reference that got
#            the same statements, the longest proxy write is reported; a
#            transaction open across the switch is refused its next
#            write; then cleanup;
#   back     the table moves back to 2 x 4 with dal-proxy following the
#            configuration in etcd, switched through the store, a writer
#            going on, compared with the reference again.
# RESHARD_ROWS sets the table's size (default 100000).  Starts its own
# MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

ROWS=${RESHARD_ROWS:-100000}
px_cluster 4 --db 'old_%d' --db 'new_%d' --db ref
dal_bin=${DAL_BIN:-$builddir/tools/dal}
pport=$("$harness/cluster.sh" free-port)
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
sqlq() { mariadb -h127.0.0.1 -P"${ports[$1]}" -udal -pdalpass -N -e "$2"; }

{
    for i in 0 1; do
        printf '[datasource old%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/old_%d\n' "$i" "${ports[$i]}" "$i"
    done
    printf '[table food]\ndatasource = old\ndb_shard_num = 2\ntable_shard_num = 4\nshard_key = poi\nstrategy = mod\n'
    printf '[table drink]\ndatasource = old\ndb_shard_num = 2\ntable_shard_num = 2\nshard_key = id\nstrategy = mod\n'
    printf '[dal]\nwatch = true\n'
    printf '[proxy]\nlisten = 127.0.0.1:%s\ndatabase = shop\n[proxy user app]\npassword = apppass\n' "$pport"
} >"$work/old.ini"
{
    for i in 0 1 2 3; do
        printf '[datasource new%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/new_%d\n' "$i" "${ports[$i]}" "$i"
    done
    printf '[table food]\ndatasource = new\ndb_shard_num = 4\ntable_shard_num = 8\nshard_key = poi\nstrategy = mod\n'
    printf '[table drink]\ndatasource = new\ndb_shard_num = 4\ntable_shard_num = 4\nshard_key = id\nstrategy = mod\n'
    printf '[dal]\nwatch = true\nallow_reshard = true\n'
    printf '[proxy]\nlisten = 127.0.0.1:%s\ndatabase = shop\n[proxy user app]\npassword = apppass\n' "$pport"
} >"$work/new.ini"
# the reference: one unsharded table that receives the same statements
printf '[datasource ref]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/ref\n[dal]\ndefault_datasource = ref\n' \
    "${ports[3]}" >"$work/ref.ini"
dal() { "$dal_bin" -c "$work/old.ini" "$@"; }

# ------------------------------------------------------------------ data
ddl="CREATE TABLE food (id BIGINT PRIMARY KEY, poi BIGINT NOT NULL, name VARCHAR(60),
     price DECIMAL(10,2) NULL, note TEXT NULL, KEY (poi))"
dal exec "$ddl" >/dev/null || fail "create"
"$dal_bin" -c "$work/ref.ini" exec "$ddl" >/dev/null || fail "create the reference"
python3 - "$ROWS" >"$work/rows.sql" <<'PY'
import sys
n = int(sys.argv[1])
for start in range(1, n + 1, 1000):
    vals = []
    for i in range(start, min(start + 1000, n + 1)):
        poi = (i * 7919) % 1000
        name = "dish %d it's \u00e9\\" % i if i % 3 else "plain %d" % i
        name = name.replace("\\", "\\\\").replace("'", "\\'")
        price = "NULL" if i % 5 == 0 else "%d.%02d" % (i % 100, i % 97)
        note = "NULL" if i % 7 == 0 else ("''" if i % 11 == 0 else "'n%d'" % (i * 3))
        vals.append("(%d, %d, '%s', %s, %s)" % (i, poi, name, price, note))
    print("INSERT INTO food (id, poi, name, price, note) VALUES %s;" % ", ".join(vals))
PY
dal shell <"$work/rows.sql" >/dev/null || fail "loading $ROWS rows"
"$dal_bin" -c "$work/ref.ini" shell <"$work/rows.sql" >/dev/null || fail "loading the reference"
n=$(dal exec --json "SELECT COUNT(*) FROM food" | json_get 'd["rows"][0][0]')
[ "$n" = "$ROWS" ] || fail "loaded $n rows, want $ROWS"

# ------------------------------------------------------------------ plan
out=$(dal reshard plan --to "$work/new.ini" food) || fail "plan: $out"
[ "$(grep -c '^create new[0-3]\.food_[0-7] ' <<<"$out")" = 8 ] || fail "plan creates: $out"
grep -qx "rows to copy: $ROWS" <<<"$out" || fail "plan rows: $out"
out=$(dal reshard plan --json --to "$work/new.ini" food) || fail "plan --json"
python3 -c "$(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
assert d["rows"] == int(sys.argv[1]), d["rows"]
assert d["from"]["table_shard_num"] == 4 and d["to"]["table_shard_num"] == 8
assert [c["table"] for c in d["create"]] == ["food_%d" % i for i in range(8)]
assert [c["datasource"] for c in d["create"]] == ["new%d" % (i // 2) for i in range(8)]
for s in d["sources"]:
    i = int(s["table"].split("_")[1])
    # mod 4 -> mod 8: old table i's rows go to new tables i and i + 4
    assert sorted(t["table"] for t in s["to"]) == ["food_%d" % i, "food_%d" % (i + 4)], s
    assert sum(t["rows"] for t in s["to"]) == s["rows"]
PY
)" "$ROWS" <<<"$out" || fail "plan --json: $out"
# a layout on the old tables themselves, and another shard key, are refused
sed 's/^shard_key = poi/shard_key = id/' "$work/new.ini" >"$work/bad_key.ini"
out=$(dal reshard plan --to "$work/bad_key.ini" food 2>&1) && fail "plan with another shard key passed"
grep -q "keeps the shard key" <<<"$out" || fail "shard key message: $out"
out=$(dal reshard plan --to "$work/old.ini" food 2>&1) && fail "plan onto the old tables passed"
grep -q "is also a table of the old layout" <<<"$out" || fail "same tables message: $out"

out=$(dal reshard status food) || fail "status before copy: $out"
grep -q "^food: phase none" <<<"$out" || fail "status before copy: $out"

# ------------------------------------------------ copy, killed and resumed
rate=$((ROWS / 8))
# the program itself in the background (not the function's subshell), so the kill reaches it
"$dal_bin" -c "$work/old.ini" reshard copy --to "$work/new.ini" --chunk-size 250 \
    --max-rows-per-second "$rate" food >"$work/copy1.out" 2>&1 &
cpid=$!
copied=0
for _ in $(seq 1 200); do
    copied=$(dal reshard status --json food 2>/dev/null | json_get 'd["rows_copied"]' 2>/dev/null || echo 0)
    [ "$copied" -ge $((ROWS / 4)) ] && break
    sleep 0.1
done
out=$(dal reshard copy --to "$work/new.ini" food 2>&1) && fail "a second copy ran beside the first"
grep -q "another \`dal reshard\` is working on food" <<<"$out" || fail "second copy: $out"
kill -KILL "$cpid" 2>/dev/null || fail "copy finished before the kill"
wait "$cpid" 2>/dev/null || true
out=$(dal reshard status --json food) || fail "status after kill"
python3 -c "$(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
n = int(sys.argv[1])
assert d["phase"] == "copying", d["phase"]
assert 0 < d["rows_copied"] < n, d["rows_copied"]
assert d["rows_estimated"] == n
assert len(d["sources"]) >= 1 and all(s["gtid"] for s in d["sources"]), d["sources"]
PY
)" "$ROWS" <<<"$out" || fail "status after kill: $out"
echo "killed the copy at $(echo "$out" | json_get 'd["rows_copied"]') of $ROWS rows"
out=$(dal reshard status food) || fail "status text"
grep -q '^  \[#*\.*\] [0-9]* / '"$ROWS"' rows' <<<"$out" || fail "status bar: $out"

out=$(dal reshard copy --to "$work/new.ini" --chunk-size 250 food 2>&1) || fail "resumed copy: $out"
out=$(dal reshard status --json food) || fail "status after copy"
python3 -c "$(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
n = int(sys.argv[1])
assert d["phase"] == "copied", d["phase"]
assert d["rows_copied"] == n, d["rows_copied"]
assert len(d["sources"]) == 4 and all(s["phase"] == "copied" for s in d["sources"])
PY
)" "$ROWS" <<<"$out" || fail "status after copy: $out"

# every row, through each configuration, equal; each where the router says
dump() { "$dal_bin" -c "$1" exec --json "SELECT id, poi, name, price, note FROM food ORDER BY id"; }
dump "$work/old.ini" >"$work/old.json" || fail "dump old"
dump "$work/new.ini" >"$work/new.json" || fail "dump new"
cmp -s "$work/old.json" "$work/new.json" || fail "the new layout's rows differ from the old one's"
for i in 0 1 2 3; do
    for t in $((2 * i)) $((2 * i + 1)); do
        bad=$(sqlq "$i" "SELECT COUNT(*) FROM new_$i.food_$t WHERE poi % 8 <> $t")
        [ "$bad" = 0 ] || fail "new_$i.food_$t holds $bad rows of other tables"
    done
done

# ---------------------------------------------------------------- verify
out=$(dal reshard verify --to "$work/new.ini" --chunk-size 700 food) || fail "verify: $out"
grep -q "$ROWS rows old, $ROWS rows new, .* 0 differences" <<<"$out" || fail "verify: $out"
sqlq 1 "UPDATE new_1.food_3 SET name = 'planted' WHERE id = (SELECT MIN(id) FROM new_1.food_3)"
gone=$(sqlq 3 "SELECT MAX(id) FROM new_3.food_6")
sqlq 3 "DELETE FROM new_3.food_6 WHERE id = $gone"
sqlq 2 "INSERT INTO new_2.food_5 (id, poi, name) VALUES ($((ROWS + 5)), 5, 'extra')"
changed=$(sqlq 1 "SELECT id FROM new_1.food_3 WHERE name = 'planted'")
out=$(dal reshard verify --json --to "$work/new.ini" --chunk-size 700 food) && fail "verify passed a planted difference"
python3 -c "$(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
got = sorted((x["kind"], x["key"], x["table"]) for x in d["differences"])
want = sorted([("differs", sys.argv[1], "food_3"), ("missing", sys.argv[2], None),
               ("extra", sys.argv[3], "food_5")])
assert got == want, got
assert d["ok"] is False
PY
)" "$changed" "$gone" "$((ROWS + 5))" <<<"$out" || fail "verify --json: $out"

# ------------------------------------------------------- cleanup, abort
out=$(dal reshard cleanup --to "$work/new.ini" food 2>&1) && fail "cleanup before a switch passed"
grep -q "only after the switch" <<<"$out" || fail "cleanup message: $out"
[ "$(sqlq 0 "SELECT COUNT(*) FROM old_0.food_0")" -gt 0 ] || fail "cleanup dropped an old table"
dal reshard abort --to "$work/new.ini" food || fail "abort"
[ "$(sqlq 2 "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'new_2'")" = 0 ] ||
    fail "abort left new tables"
grep -q "^food: phase none" <<<"$(dal reshard status food)" || fail "abort left the state"
n=$(dal exec --json "SELECT COUNT(*) FROM food" | json_get 'd["rows"][0][0]')
[ "$n" = "$ROWS" ] || fail "after abort the old layout has $n rows"


# a change of the table's definition stops the catch-up (on another table,
# drink, so that food goes on to the switch)
dal exec "CREATE TABLE drink (id BIGINT PRIMARY KEY, name VARCHAR(20))" >/dev/null || fail "create drink"
dal exec "INSERT INTO drink (id, name) VALUES (1, 'tea'), (2, 'milk'), (3, 'juice')" >/dev/null || fail "fill drink"
dal reshard copy --to "$work/new.ini" drink >/dev/null || fail "copy drink"
dal exec "UPDATE drink SET name = 'coffee' WHERE id = 1" >/dev/null || fail "update drink"
dal reshard catchup --to "$work/new.ini" drink >/dev/null || fail "catch-up drink"
[ "$(sqlq 1 "SELECT name FROM new_1.drink_1 WHERE id = 1")" = coffee ] || fail "drink's update not caught up"
sqlq 1 "ALTER TABLE old_1.drink_1 ADD COLUMN extra INT NULL"
out=$(dal reshard catchup --to "$work/new.ini" drink 2>&1) && fail "catch-up passed over an ALTER TABLE"
grep -q "catch-up stops: the definition of a table of drink on datasource old1 changed" <<<"$out" ||
    fail "DDL message: $out"
dal reshard abort --to "$work/new.ini" drink >/dev/null || fail "abort drink"


# ------------------------------ writes: copy, catch-up, switch, cleanup
# The instances follow live.ini: dal-proxy, and `dal shell` (libdal).
# RESHARD_WRITERS writers through each (default 4), each on its own class
# of ids modulo 2*RESHARD_WRITERS (so the outcome does not depend on how
# they interleave), send inserts, updates and deletes from before the
# copy (killed with SIGKILL and resumed), through the catch-up (--follow,
# killed with SIGKILL and resumed), through the switch and after it; the
# unsharded reference gets each one's statements afterwards.
NW=${RESHARD_WRITERS:-4}
cp "$work/old.ini" "$work/live.ini"
px_start "$work/live.ini" "$pport"
ppid1=${pids[-1]}
cat >"$work/writer.py" <<'PY'
import random, sys, time
import os
who, cls, ncls, rows, stop, path = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                    int(sys.argv[4]), sys.argv[5], sys.argv[6])
rng = random.Random(cls + 7)
ids = [i for i in range(1, rows + 1) if i % ncls == cls]
next_id = (int(sys.argv[7]) if len(sys.argv) > 7 else 10_000_000) + cls
stmts = []
i = 0
while not os.path.exists(stop):
    r = rng.random()
    if r < 0.4:
        sql = "INSERT INTO food (id, poi, name) VALUES (%d, %d, '%s%d')" % (next_id, rng.randrange(1000), who, i)
        ids.append(next_id)
        next_id += ncls
    elif r < 0.8:
        sql = "UPDATE food SET name = '%s-u%d', price = %d.25 WHERE id = %d" % (who, i, i % 50, rng.choice(ids))
    else:
        sql = "DELETE FROM food WHERE id = %d" % rng.choice(ids)
    stmts.append(sql)
    i += 1
    if who == "libdal":
        print(sql + ";", flush=True)
    else:
        t0 = time.time()
        cur.execute(sql)
        worst[0] = max(worst[0], time.time() - t0)
    time.sleep(0.02)
with open(path, "w") as f:
    f.write("".join(s + ";\n" for s in stmts))
PY
cat >"$work/proxy_writer.py" <<'PY'
import sys, pymysql
port = int(sys.argv.pop(1))
conn = pymysql.connect(host="127.0.0.1", port=port, user="app", password="apppass",
                       database="shop", autocommit=True)
cur = conn.cursor()
worst = [0.0]
exec(open(sys.argv.pop(1)).read())
print("proxy writer %d: %d statements, longest %.0f ms" % (cls, len(stmts), worst[0] * 1000), file=sys.stderr)
PY
wpids=()
for w in $(seq 0 $((2 * NW - 1))); do
    if [ "$w" -lt "$NW" ]; then
        python3 "$work/writer.py" libdal "$w" $((2 * NW)) "$ROWS" "$work/stop_c" "$work/ops_$w.sql" |
            "$dal_bin" -c "$work/live.ini" shell >/dev/null 2>"$work/writer_$w.err" &
    else
        /usr/bin/python3 "$work/proxy_writer.py" "$pport" "$work/writer.py" proxy "$w" $((2 * NW)) \
            "$ROWS" "$work/stop_c" "$work/ops_$w.sql" 2>"$work/writer_$w.err" &
    fi
    wpids+=($!)
done
kill_at=$((ROWS / 3))
sleep 1
"$dal_bin" -c "$work/old.ini" reshard copy --to "$work/new.ini" --chunk-size 250 \
    --max-rows-per-second "$rate" food >"$work/copy2.out" 2>&1 &
cpid=$!
for _ in $(seq 1 300); do
    copied=$(dal reshard status --json food 2>/dev/null | json_get 'd["rows_copied"]' 2>/dev/null || echo 0)
    [ "$copied" -ge "$kill_at" ] && break
    sleep 0.1
done
kill -KILL "$cpid" 2>/dev/null || fail "copy under writes finished before the kill"
wait "$cpid" 2>/dev/null || true
echo "killed the copy under writes at $(dal reshard status --json food | json_get 'd["rows_copied"]') of $ROWS rows"
out=$(dal reshard catchup --to "$work/new.ini" food 2>&1) && fail "catch-up before the copy ended ran"
grep -q "follows a finished copy" <<<"$out" || fail "early catch-up: $out"
dal reshard copy --to "$work/new.ini" --chunk-size 250 food >/dev/null || fail "resumed copy under writes"
# catch-up --follow, killed with SIGKILL after a round, then resumed and
# stopped with SIGTERM (which ends it as caught up)
follow() {
    "$dal_bin" -c "$work/old.ini" reshard catchup --follow --to "$work/new.ini" food >"$work/follow$1.out" 2>&1 &
    fpid=$!
    lag=""
    for _ in $(seq 1 150); do
        lag=$(dal reshard status --json food 2>/dev/null | json_get 'd["lag_ms"]' 2>/dev/null || true)
        [ -n "$lag" ] && [ "$lag" != None ] && break
        sleep 0.1
    done
    [ -n "$lag" ] && [ "$lag" != None ] || fail "no catch-up round recorded: $(cat "$work/follow$1.out")"
}
follow 1
sleep 1
kill -KILL "$fpid" 2>/dev/null || fail "catch-up --follow ended by itself: $(cat "$work/follow1.out")"
wait "$fpid" 2>/dev/null || true
follow 2
sleep 2
kill -TERM "$fpid" 2>/dev/null || fail "resumed catch-up --follow ended by itself: $(cat "$work/follow2.out")"
wait "$fpid" || fail "resumed catch-up --follow: $(cat "$work/follow2.out")"
grep -q "^caught up food: lag [0-9]* ms" "$work/follow2.out" || fail "catch-up output: $(cat "$work/follow2.out")"
out=$(dal reshard status --json food) || fail "status after catch-up"
python3 -c "$(cat <<'PY'
import json, sys
d = json.load(sys.stdin)
assert d["phase"] == "caught-up", d["phase"]
assert d["lag_ms"] is not None, d["lag_ms"]
b = [s for s in d["sources"] if s["source"].startswith("binlog:")]
assert sorted(s["source"] for s in b) == ["binlog:old0", "binlog:old1"], b
assert sum(s["keys_applied"] for s in b) > 0, b
PY
)" <<<"$out" || fail "status after catch-up: $out"
echo "catch-up lag before the switch: $(json_get 'd["lag_ms"]' <<<"$out") ms"
# a transaction open across the switch may not write on to the old layout
{
    printf "BEGIN;\nINSERT INTO food (id, poi, name) VALUES (20000001, 1, 'txn');\n"
    while [ ! -e "$work/stop_c" ]; do sleep 0.1; done
    printf "INSERT INTO food (id, poi, name) VALUES (20000002, 2, 'txn');\nROLLBACK;\n"
} | "$dal_bin" -c "$work/live.ini" shell >"$work/txn.out" 2>&1 &
txnpid=$!
sleep 1
# the switch waits for every instance's acknowledgement of the fence, however
# late it reloads; one that cannot acknowledge within --max-write-pause (a
# loaded test machine) makes it abandon, leaving the old layout serving:
# the test tries again
for attempt in 1 2 3; do
    out=$(dal reshard switch --source "$work/live.ini" --to "$work/new.ini" food 2>&1) && break
    echo "switch attempt $attempt: $out"
    grep -q "abandoned" <<<"$out" || break
done
echo "$out"
grep -q "^switched food to .*: writes held [0-9]* ms" <<<"$out" || fail "switch output: $out"
cmp -s "$work/live.ini" "$work/new.ini" || fail "live.ini is not the new configuration after the switch"
sleep 1
touch "$work/stop_c"
for w in $(seq 0 $((2 * NW - 1))); do
    wait "${wpids[$w]}" || fail "writer $w: a write failed: $(tail -3 "$work/writer_$w.err")"
    [ "$w" -lt "$NW" ] || cat "$work/writer_$w.err"
    "$dal_bin" -c "$work/ref.ini" shell <"$work/ops_$w.sql" >/dev/null || fail "the reference's statements of writer $w"
done
# reported, not asserted: a loaded machine stretches any one write
cat "$work"/ops_[0-9]*.sql | wc -l | sed 's/^ */statements of the writers: /'
sed -n 's/.*longest \([0-9]*\) ms$/\1/p' "$work"/writer_[0-9]*.err | sort -n | tail -1 |
    sed 's/^/longest write through dal-proxy: /; s/$/ ms/'
wait "$txnpid" && fail "a transaction wrote on across the switch"
grep -q "table food was moved to a new layout (a reshard's switch) while this transaction was open" \
    "$work/txn.out" || fail "transaction across the switch: $(cat "$work/txn.out")"
dump "$work/ref.ini" >"$work/ref.json" || fail "dump reference"
dump "$work/new.ini" >"$work/new.json" || fail "dump new"
cmp -s "$work/new.json" "$work/ref.json" || fail "after the switch the new layout differs from the reference"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('reference rows after the switch:', len(d['rows']))" "$work/ref.json"
# the writers wrote on both sides of the switch: rows they inserted are in
# the old layout (before) and, only in the new one, rows of after
dump "$work/old.ini" >"$work/old.json" || fail "dump old"
python3 -c "$(cat <<'PY'
import json, sys
old = {r[0] for r in json.load(open(sys.argv[1]))["rows"] if int(r[0]) >= 10000000}
new = {r[0] for r in json.load(open(sys.argv[2]))["rows"] if int(r[0]) >= 10000000}
print("writers' rows: %d in the old layout, %d only in the new" % (len(old), len(new - old)))
assert old and new - old
PY
)" "$work/old.json" "$work/new.json" || fail "the writers did not write on both sides of the switch"
grep -q "^food: phase switched" <<<"$(dal reshard status food)" || fail "status after the switch"
dal reshard cleanup --to "$work/new.ini" food || fail "cleanup"
[ "$(sqlq 0 "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'old_0' AND TABLE_NAME LIKE 'food%'")" = 0 ] ||
    fail "cleanup left old tables"
[ "$(sqlq 0 "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'dal_reshard_fence_ack'")" = 0 ] ||
    fail "cleanup left dal_reshard_fence_ack, which every instance refreshes a row of each second"


# ------------------------------------------- back again, following etcd
# The table moves back to the 2 x 4 layout, with dal-proxy following the
# configuration in etcd: the switch writes the fence and the new document
# there, each a compare-and-set.  The proxy of the first part, which wrote
# the table and follows live.ini, stops first: a live instance that does
# not follow the source would never acknowledge the fence, and the switch
# would be abandoned.
kill "$ppid1"
wait "$ppid1" 2>/dev/null || true
"$harness/etcd.sh" start "$work/etcd" 1 >/dev/null || fail "etcd did not start"
trap '"$harness/etcd.sh" stop "$work/etcd" >/dev/null 2>&1 || true; px_cleanup' EXIT
url="etcd://$(cat "$work/etcd/endpoints")/reshard"
pport2=$("$harness/cluster.sh" free-port)
sed "s/^listen = .*/listen = 127.0.0.1:$pport2/" "$work/new.ini" >"$work/new2.ini"
sed -e "s/^listen = .*/listen = 127.0.0.1:$pport2/" -e 's/^watch = true$/watch = true\nallow_reshard = true/' \
    "$work/old.ini" >"$work/old2.ini"
"$dal_bin" config push --expect-revision 0 "$work/new2.ini" "$url" >/dev/null || fail "push to etcd"
"$proxy_bin" -c "$url" >"$work/px2.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$pport2") 2>/dev/null && break; sleep 0.1; done
back() { "$dal_bin" -c "$work/new2.ini" "$@"; }
back reshard copy --to "$work/old2.ini" food >/dev/null || fail "copy back"
back reshard catchup --to "$work/old2.ini" food >/dev/null || fail "catch-up back"
/usr/bin/python3 "$work/proxy_writer.py" "$pport2" "$work/writer.py" proxy 0 1 "$ROWS" "$work/stop_d" \
    "$work/ops_d.sql" 30000000 2>"$work/writer_d.err" &
wd=$!
sleep 1
for attempt in 1 2 3; do
    out=$(back reshard switch --source "$url" --to "$work/old2.ini" food 2>&1) && break
    echo "switch attempt $attempt: $out"
    grep -q "abandoned" <<<"$out" || break
done
echo "$out"
grep -q "^switched food to .*: writes held [0-9]* ms" <<<"$out" || fail "switch through etcd: $out"
[ "$("$dal_bin" config get "$url")" = "$(cat "$work/old2.ini")" ] || fail "etcd does not hold the new document"
sleep 1
touch "$work/stop_d"
wait "$wd" || fail "the etcd-following proxy's writer failed: $(tail -3 "$work/writer_d.err")"
cat "$work/writer_d.err"
"$dal_bin" -c "$work/ref.ini" shell <"$work/ops_d.sql" >/dev/null || fail "the reference's statements of the etcd phase"
dump "$work/ref.ini" >"$work/ref.json" || fail "dump reference"
dump "$work/old2.ini" >"$work/back.json" || fail "dump back"
cmp -s "$work/back.json" "$work/ref.json" || fail "after the switch back the layout differs from the reference"

[ "$fails" = 0 ] || { echo "reshard_test: $fails failure(s)" >&2; exit 1; }
echo "reshard_test: ok ($ROWS rows)"
