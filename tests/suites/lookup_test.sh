#!/usr/bin/env bash
# lookup_test.sh -- lookup tables (docs/lookup.md) through dal-proxy and the
# dal CLI: a statement by a looked-up column reads the lookup table, then
# runs on the shards found only; `dal explain` shows the lookup step; the
# answers are compared with the same SQL on an unsharded copy of the table
# on one server.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='app-s3cret'
{
    px_ini_sharded "xa_log = ds0"
    px_ini_table orders 4 user_id mod
    printf 'lookup = order_no\nlookup_unique = code\n'
    px_ini_table orders_lookup_order_no 2 order_no mod
    printf '[table orders_lookup_code]\ndatasource = ds1\n'
    px_ini_proxy "$port"
} >"$work/px.ini"
"$builddir/tools/dal" -c "$work/px.ini" xa init >/dev/null || fail "dal xa init"
px_start "$work/px.ini" "$port"
dal() { "$builddir/tools/dal" -c "$work/px.ini" "$@"; }

px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop -N "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain -N "$@"; }
both() { px -e "$1" || fail "through the proxy: $1"; plain -e "$1" || fail "plain: $1"; }
# same SQL: the proxy's answer is the plain server's
same() {
    local a b
    a=$(px -e "$1" 2>&1) || fail "through the proxy: $1: $a"
    b=$(plain -e "$1" 2>&1) || fail "plain: $1: $b"
    [ "$a" = "$b" ] || fail "$1: the proxy says '$a', the server '$b'"
}
# physical POS SQL: SQL on the server of physical table orders_POS
physical() {
    local i=$(($1 / 2))
    mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass "shard_$i" -N -e "$2"
}

both "CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id BIGINT, order_no BIGINT, note VARCHAR(32), code VARCHAR(16), UNIQUE KEY (code))"
# the lookup tables, made by dal check (twice: the second finds them there)
for _ in 1 2; do
    out=$(dal check --online --create-lookups 2>&1) || fail "dal check --online --create-lookups: $out"
    grep -q '^orders_lookup_order_no: ready$' <<<"$out" && grep -q '^orders_lookup_code: ready$' <<<"$out" ||
        fail "dal check --create-lookups: $out"
done
pk() { mariadb -h127.0.0.1 -P"${ports[$1]}" -udal -pdalpass "shard_$1" -N -e \
    "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'shard_$1' AND TABLE_NAME = '$2' AND INDEX_NAME = 'PRIMARY'"; }
[ "$(pk 0 orders_lookup_order_no_0)" = order_no,user_id ] || fail "orders_lookup_order_no_0: primary key $(pk 0 orders_lookup_order_no_0)"
[ "$(pk 1 orders_lookup_code)" = code ] || fail "orders_lookup_code (unique): primary key $(pk 1 orders_lookup_code)"
json=$(dal check --online --create-lookups --json) || fail "check --create-lookups --json: $json"
grep -q '"lookups":\["orders_lookup_order_no","orders_lookup_code"\]' <<<"$json" || fail "check --create-lookups --json: $json"

# 1. reads: rows put on the physical tables behind dal's back, their lookup
# rows through the proxy (user_id u is in orders_(u % 4))
for i in $(seq 1 12); do
    u=$((i * 7 % 13)) o=$((1000 + i % 5))
    physical $((u % 4)) "INSERT INTO orders_$((u % 4)) VALUES ($i, $u, $o, 'n$i', NULL)"
    plain -e "INSERT INTO orders VALUES ($i, $u, $o, 'n$i', NULL)"
    px -e "INSERT IGNORE INTO orders_lookup_order_no VALUES ($o, $u)" || fail "lookup row ($o, $u)"
done
for o in 1000 1001 1002 1003 1004 1005; do
    same "SELECT id, user_id, order_no, note FROM orders WHERE order_no = $o ORDER BY id"
done
same "SELECT id, note FROM orders WHERE order_no IN (1001, 1003, 2000) ORDER BY id"
same "SELECT COUNT(*) FROM orders WHERE order_no IN (1000, 1002)"
same "SELECT id FROM orders o WHERE o.order_no = '1004' AND note <> 'x' ORDER BY id"

# the statement runs on the shards the lookup names, no others: a row whose
# lookup row is missing is not found by its order_no
physical 1 "INSERT INTO orders_1 VALUES (99, 5, 4242, 'hidden', NULL)"
[ -z "$(px -e 'SELECT id FROM orders WHERE order_no = 4242')" ] ||
    fail "order_no 4242 has no lookup row, yet the proxy found its row (the statement scattered)"
[ "$(px -e 'SELECT id FROM orders WHERE user_id = 5 AND order_no = 4242')" = 99 ] ||
    fail "with the shard key given, the lookup is not read"
physical 1 "DELETE FROM orders_1 WHERE id = 99"

# explain: the lookup step, then one route per shard found
plan=$(dal explain "SELECT id FROM orders WHERE order_no = 1002" 2>&1) || fail "dal explain: $plan"
[ "$(grep -c '^lookup: ' <<<"$plan")" = 1 ] || fail "dal explain shows no lookup step: $plan"
grep -q '^lookup: .*orders_lookup_order_no_0.*WHERE `order_no` = 1002' <<<"$plan" ||
    fail "the lookup step is not a point select on orders_lookup_order_no_0: $plan"
[ "$(grep -vc '^lookup: ' <<<"$plan")" = "$(px -e 'SELECT COUNT(DISTINCT user_id % 4) FROM orders_lookup_order_no WHERE order_no = 1002')" ] ||
    fail "dal explain: not one route per shard found: $plan"
json=$(dal explain --json "SELECT id FROM orders WHERE order_no IN (1000, 1001)") || fail "explain --json"
grep -q '"step": *"lookup"' <<<"$json" || fail "dal explain --json has no lookup step: $json"
plan=$(dal explain "SELECT id FROM orders WHERE order_no = 777777") || fail "dal explain 777777"
plan=$(dal explain "/*+ dal master */ SELECT id FROM orders WHERE order_no = ?" int:1002) || fail "explain, hint, ?"
[ "$(grep -c '^lookup: ' <<<"$plan")" = 1 ] || fail "a master hint or a ? lost the lookup: $plan"
plan=$(dal explain "/*+ dal shard_value=3 */ SELECT id FROM orders WHERE order_no = 1002") || fail "explain shard_value"
[ "$(grep -c '^lookup: ' <<<"$plan")" = 0 ] || fail "a shard_value hint is not obeyed alone: $plan"
# parameters (libdal's ? values) in the read and in IN lists
out=$(dal exec --json "SELECT id FROM orders WHERE order_no IN (?, ?) ORDER BY id" int:1001 str:1003) || fail "exec ?: $out"
[ "$out" = "$(dal exec --json "SELECT id FROM orders WHERE order_no IN (1001, 1003) ORDER BY id")" ] ||
    fail "IN (?, ?) through the lookup: $out"
[ "$(grep -vc '^lookup: ' <<<"$plan")" = 1 ] || fail "no lookup row: not one table: $plan"

# 2. writes through the proxy keep the lookup tables: generated INSERT,
# UPDATE, DELETE and SELECT by order_no and code, compared with the copy;
# then every row is reachable through its lookup rows
both "DELETE FROM orders"
px -e "DELETE FROM orders_lookup_order_no" || fail "emptying orders_lookup_order_no"
for seed in 1 2 3; do
    # seeds 1 and 2 through dal-proxy, 3 through libdal (dal_query)
    via=$port preload=
    # libdal's thread-local storage is initial-exec: loaded at start, not by dlopen
    # (a sanitizer build's libdal needs its runtimes loaded first, and
    # Python's own allocations are not ours to judge: no leak check)
    [ "$seed" != 3 ] || { via="libdal:$builddir/.libs/libdal.so:$work/px.ini"
        preload="$(ldd "$builddir/.libs/libdal.so" | awk '/lib(a|ub)san/ {printf "%s ", $3}')$builddir/.libs/libdal.so"; }
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" LD_PRELOAD=$preload /usr/bin/python3 "$tests/suites/lookup_diff.py" "$via" "${ports[0]}" "$seed" 300 >"$work/diff$seed.out" 2>&1 ||
        fail "differential run $seed: $(grep -v '^note' "$work/diff$seed.out" | head -30)"
done
# a unique lookup refuses a duplicate with the server's error 1062, and the
# row is not written
both "INSERT INTO orders (id, user_id, order_no, code) VALUES (900001, 3, 5, 'dup-1')"
out=$(px -e "INSERT INTO orders (id, user_id, order_no, code) VALUES (900002, 4, 5, 'dup-1')" 2>&1) &&
    fail "a duplicate code was accepted"
grep -q 'ERROR 1062' <<<"$out" || fail "duplicate code: not error 1062: $out"
[ -z "$(px -e 'SELECT id FROM orders WHERE user_id = 4 AND id = 900002')" ] ||
    fail "the row with the duplicate code was written"
# a write dal cannot keep the lookups of is refused, naming the lookups
out=$(px -e "UPDATE orders SET order_no = order_no + 1 WHERE id = 900001" 2>&1) &&
    fail "SET order_no = an expression was accepted"
grep -q 'has lookups' <<<"$out" || fail "SET order_no = expression: $out"

# writes with ? values (libdal's parameters): SET and WHERE both hold some
dal exec "INSERT INTO orders (id, user_id, order_no) VALUES (?, ?, ?)" int:900500 int:23 int:8801 >/dev/null ||
    fail "INSERT with ?"
dal exec "UPDATE orders SET note = ?, order_no = ? WHERE id = ? AND note IS NULL" str:x int:8802 int:900500 >/dev/null ||
    fail "UPDATE with ?"
[ "$(px -e 'SELECT id, note FROM orders WHERE order_no = 8802')" = $'900500\tx' ] || fail "row 900500 by its new order_no"
[ "$(px -e 'SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no IN (8801, 8802)')" = 1 ] ||
    fail "UPDATE with ?: the lookup rows of 8801 and 8802"
dal exec "DELETE FROM orders WHERE order_no = ?" int:8802 >/dev/null || fail "DELETE with ?"
[ "$(px -e 'SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no = 8802')" = 0 ] ||
    fail "DELETE with ?: the lookup row of 8802 stayed"

# 3. dal lookup verify: nothing after the runs; then a lookup row without
# a row and a row without its lookup row, planted by hand, are reported
# (text and --json), and --fix mends both
out=$(dal lookup verify) || fail "dal lookup verify after the runs: $out"
grep -q '^0 disagreement(s)$' <<<"$out" || fail "verify after the runs: $out"
px -e "INSERT INTO orders_lookup_order_no VALUES (31337, 6)" || fail "planting an orphan"
px -e "INSERT INTO orders (id, user_id, order_no) VALUES (900100, 9, 4711)" || fail "row 900100"
px -e "DELETE FROM orders_lookup_order_no WHERE order_no = 4711" || fail "removing a lookup row"
out=$(dal lookup verify orders order_no) && fail "verify found nothing: $out"
grep -q '^orphan orders.order_no: order_no = 31337, user_id = 6$' <<<"$out" ||
    fail "verify: the planted orphan not reported: $out"
grep -q '^missing orders.order_no: order_no = 4711, user_id = 9$' <<<"$out" ||
    fail "verify: the row without a lookup row not reported: $out"
grep -q '^2 disagreement(s)$' <<<"$out" || fail "verify: not 2 disagreements: $out"
json=$(dal lookup verify --json) && fail "verify --json found nothing"
/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["disagreements"] == 2, d; l=[x for x in d["lookups"] if x["column"] == "order_no"][0]; assert l["orphan"] == [{"order_no": "31337", "user_id": "6"}], l; assert l["missing"] == [{"order_no": "4711", "user_id": "9"}], l' <<<"$json" ||
    fail "verify --json: $json"
dal lookup verify --fix >/dev/null || fail "verify --fix"
out=$(dal lookup verify) || fail "verify after --fix: $out"
[ "$(px -e 'SELECT id FROM orders WHERE order_no = 4711')" = 900100 ] || fail "row 900100 not found after --fix"

# 4. dal lookup backfill fills an emptied lookup table again, in chunks,
# and resumes after a shard key
px -e "DELETE FROM orders_lookup_order_no" || fail "emptying orders_lookup_order_no"
out=$(dal lookup backfill orders order_no --chunk 7 --after 30) || fail "backfill --after 30: $out"
[ "$(px -e 'SELECT COUNT(*) FROM orders_lookup_order_no WHERE user_id <= 30')" = 0 ] ||
    fail "backfill --after 30 wrote keys up to 30"
out=$(dal lookup backfill orders order_no --chunk 7) || fail "backfill: $out"
grep -q 'resume: --after' <<<"$out" || fail "backfill printed no progress: $out"
out=$(dal lookup verify) || fail "verify after backfill: $out"

# 5. a writer killed between its lookup rows and its row (the test hook
# DAL_TEST_LOOKUP_KILL) leaves no row unreachable by its looked-up column.
# user_id u is on ds((u % 4) / 2), order_no o's lookup row on ds(o % 2),
# every code's on ds1.  A write on one node whose lookup row is on that
# node too writes both in one transaction there: the kill leaves no orphan
# (5152, 5153); a lookup row on another node (code k-1), or a write on
# several nodes (5151: no shard key), is committed before the row, and
# stays as an orphan.
px -e "INSERT INTO orders (id, user_id, order_no) VALUES (900200, 11, 5150)" || fail "row 900200"
DAL_TEST_LOOKUP_KILL=1 "$builddir/tools/dal" -c "$work/px.ini" exec \
    "UPDATE orders SET order_no = 5151 WHERE id = 900200" >/dev/null 2>&1 && fail "the hook did not kill dal"
DAL_TEST_LOOKUP_KILL=1 "$builddir/tools/dal" -c "$work/px.ini" exec \
    "INSERT INTO orders (id, user_id, order_no, code) VALUES (900201, 12, 5152, 'k-1')" >/dev/null 2>&1 &&
    fail "the hook did not kill dal"
DAL_TEST_LOOKUP_KILL=1 "$builddir/tools/dal" -c "$work/px.ini" exec \
    "UPDATE orders SET order_no = 5153 WHERE user_id = 11 AND id = 900200" >/dev/null 2>&1 &&
    fail "the hook did not kill dal"
[ "$(px -e 'SELECT id FROM orders WHERE order_no = 5150')" = 900200 ] ||
    fail "row 900200 unreachable by its order_no after the kill"
[ -z "$(px -e 'SELECT id FROM orders WHERE order_no = 5152')" ] || fail "row 900201 was written"
out=$(dal lookup verify --json) && fail "verify after the kills found no orphan"
/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert all(not x["missing"] for x in d["lookups"]), d; o=sorted(str(r) for x in d["lookups"] for r in x["orphan"]); assert o == sorted([str({"order_no": "5151", "user_id": "11"}), str({"code": "k-1", "user_id": "12"})]), o' <<<"$out" ||
    fail "after the kills: rows unreachable, or not the orphans of 5151 and k-1 alone (5152 and 5153 are on their row's node): $out"
dal lookup verify --fix >/dev/null || fail "verify --fix after the kills"
both "INSERT INTO orders (id, user_id, order_no, code) VALUES (900201, 12, 5152, 'k-1')"
same "SELECT id FROM orders WHERE code = 'k-1'"

# 6. transactions: a transaction reads the lookup rows it wrote; in a
# single-mode transaction a lookup row on its row's node is written and
# removed in it (rolled back with it), one on another node is written
# before it, alone (a rollback leaves it, harmless) and not removed; in a
# multi-mode one they roll back with it
[ "$(px -e "BEGIN; INSERT INTO orders (id, user_id, order_no) VALUES (900300, 3, 6010); SELECT id FROM orders WHERE order_no = 6010; COMMIT")" = 900300 ] ||
    fail "single: the transaction does not find its own row by order_no"
[ "$(px -e "SELECT id FROM orders WHERE order_no = 6010")" = 900300 ] || fail "single: row 900300 after COMMIT"
[ "$(px -e "BEGIN; INSERT INTO orders (id, user_id, order_no) VALUES (900301, 3, 6002); ROLLBACK; SELECT COUNT(*) FROM orders WHERE order_no = 6002")" = 0 ] ||
    fail "single: row 900301 after ROLLBACK"
[ "$(px -e "SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no = 6002")" = 1 ] ||
    fail "single: the lookup row of 6002 (ds0; the row on ds1) is not written alone before the transaction"
# same node (user 1 on ds0, order_no 6012 on ds0): rolled back with it
[ "$(px -e "BEGIN; INSERT INTO orders (id, user_id, order_no) VALUES (900305, 1, 6012); SELECT id FROM orders WHERE order_no = 6012; ROLLBACK; SELECT COUNT(*) FROM orders WHERE order_no = 6012")" = $'900305\n0' ] ||
    fail "single, one node: row 900305 in and after the transaction"
[ "$(px -e "SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no = 6012")" = 0 ] ||
    fail "single, one node: the lookup row of a rolled back INSERT stayed (an orphan)"
# ... and removed in it: a DELETE committed leaves no lookup row
[ "$(px -e "BEGIN; INSERT INTO orders (id, user_id, order_no) VALUES (900306, 1, 6014); COMMIT; BEGIN; DELETE FROM orders WHERE user_id = 1 AND order_no = 6014; COMMIT; SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no = 6014")" = 0 ] ||
    fail "single, one node: the lookup row of a deleted row stayed"
# 6b. an UPDATE or DELETE by a value without a lookup row matches
# nothing: the answer is the server's (0 rows, an UPDATE's info line) and
# no node is sent an UPDATE or DELETE of orders (the servers' general
# logs: the global Com_update and Com_delete also count the XA recovery
# thread's clean-up of the instances the kills above left); a SELECT's
# empty answer keeps its columns and is the copy's
for i in 0 1; do
    mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass -e \
        "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1" || fail "general log of node $i"
done
writes_sent() {
    local i n=0 v
    for i in 0 1; do
        v=$(mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass -N -e \
            "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Query' AND argument RLIKE '^[[:space:]]*(UPDATE|DELETE)[[:space:]].*orders'") ||
            fail "general log of node $i"
        n=$((n + v))
    done
    echo "$n"
}
verbose() { sed -E 's/ \([0-9.]+ sec\)//'; }
absent=("UPDATE orders SET note = 'gone' WHERE order_no = 987654"
        "UPDATE orders SET note = 'gone', order_no = 987656 WHERE order_no IN (987654, 987655)"
        "DELETE FROM orders WHERE order_no = 987654"
        "DELETE FROM orders WHERE code = 'no-such-code'")
for q in "${absent[@]}"; do
    before=$(writes_sent)
    a=$(px -vvv -e "$q" 2>&1 | verbose) || fail "through the proxy: $q: $a"
    after=$(writes_sent)
    [ "$after" = "$before" ] || fail "$q: $((after - before)) UPDATE/DELETE reached the nodes (none should)"
    b=$(plain -vvv -e "$q" 2>&1 | verbose) || fail "plain: $q: $b"
    [ "$a" = "$b" ] || fail "$q: the proxy says '$a', the server '$b'"
done
for i in 0 1; do
    mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass -e "SET GLOBAL general_log = 0" ||
        fail "general log of node $i"
done
same "SELECT id, note FROM orders WHERE order_no = 987654"
[ "$(px --column-names -e "SELECT id, note FROM orders WHERE order_no = 987654")" = "$(plain --column-names -e "SELECT id, note FROM orders WHERE order_no = 987654")" ] ||
    fail "an empty SELECT by an absent order_no: not the copy's columns"
same "SELECT COUNT(*) FROM orders WHERE order_no = 987654"

# outside a transaction, a row write that fails (a duplicate primary key)
# on the node of its lookup row is rolled back with its lookup row: none
# is left, and none is taken back (no DELETE sent); on another node it is
# taken back
px -e "INSERT INTO orders (id, user_id, order_no) VALUES (900307, 1, 6016)" || fail "row 900307"
before=$(writes_sent)
px -e "INSERT INTO orders (id, user_id, order_no) VALUES (900307, 1, 6018)" 2>/dev/null &&
    fail "a duplicate primary key was accepted"
after=$(writes_sent)
[ "$after" = "$before" ] ||
    fail "a failed INSERT on one node: its lookup row was taken back ($((after - before)) DELETE), not rolled back with the row"
[ "$(px -e "SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no IN (6016, 6018)")" = 1 ] ||
    fail "a failed INSERT left the lookup row of 6018"
px -e "INSERT INTO orders (id, user_id, order_no) VALUES (900307, 1, 6021)" 2>/dev/null &&
    fail "a duplicate primary key was accepted"
[ "$(px -e "SELECT COUNT(*) FROM orders_lookup_order_no WHERE order_no = 6021")" = 0 ] ||
    fail "a failed INSERT left the lookup row of 6021 (another node)"

# 7. [dal] lookup_cache: a second dal-proxy keeps lookup answers for 30 s;
# its own writes forget them at once, another's are not seen meanwhile
port2=$("$harness/cluster.sh" free-port)
sed -e "s/^listen = .*/listen = 127.0.0.1:$port2/" -e 's/^\[dal\]$/[dal]\nlookup_cache = 30s/' \
    "$work/px.ini" >"$work/px2.ini"
grep -q '^lookup_cache = 30s$' "$work/px2.ini" || fail "px2.ini has no lookup_cache"
px_start "$work/px2.ini" "$port2"
px2() { mariadb -h127.0.0.1 -P"$port2" -uapp -p"$PX_TEST_PASSWORD" shop -N "$@"; }
[ -z "$(px2 -e 'SELECT id FROM orders WHERE order_no = 7777')" ] || fail "cache: 7777 found"
px -e "INSERT INTO orders (id, user_id, order_no) VALUES (900400, 21, 7777)" || fail "row 900400"
[ -z "$(px2 -e 'SELECT id FROM orders WHERE order_no = 7777')" ] ||
    fail "cache: the second proxy read the lookup table again (nothing kept)"
[ "$(px -e 'SELECT id FROM orders WHERE order_no = 7777')" = 900400 ] || fail "cache: the first proxy keeps"
[ -z "$(px2 -e 'SELECT id FROM orders WHERE order_no = 7778')" ] || fail "cache: 7778 found"
[ "$(px2 -e "INSERT INTO orders (id, user_id, order_no) VALUES (900401, 22, 7778); SELECT id FROM orders WHERE order_no = 7778")" = 900401 ] ||
    fail "cache: its own INSERT did not forget 7778"
[ -z "$(px2 -e 'SELECT id FROM orders WHERE order_no = 7777')" ] ||
    fail "cache: its own write of 7778 forgot what it kept of 7777 too"
[ "$(px2 -e "UPDATE orders SET order_no = 7779 WHERE id = 900401; SELECT COUNT(*) FROM orders WHERE order_no = 7778; SELECT id FROM orders WHERE order_no = 7779")" = $'0\n900401' ] ||
    fail "cache: its own UPDATE did not forget 7778 and 7779"
[ "$(px2 -e "DELETE FROM orders WHERE order_no = 7779; SELECT COUNT(*) FROM orders WHERE order_no = 7779")" = 0 ] ||
    fail "cache: its own DELETE"
# the rows of sections 3 to 6 are not in the copy: both emptied, through px2
px2 -e "DELETE FROM orders; DELETE FROM orders_lookup_order_no; DELETE FROM orders_lookup_code" ||
    fail "emptying through the second proxy"
plain -e "DELETE FROM orders"
/usr/bin/python3 "$tests/suites/lookup_diff.py" "$port2" "${ports[0]}" 4 300 >"$work/diff4.out" 2>&1 ||
    fail "differential run through the caching proxy: $(grep -v '^note' "$work/diff4.out" | head -30)"

px_finish lookup_test
