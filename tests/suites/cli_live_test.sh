#!/usr/bin/env bash
# cli_live_test.sh WORKDIR -- the `dal` program against the live cluster
# started by integration.sh (DAL_TEST_PORTS, DAL_BIN, DAL_PLUGIN_DIR set).
set -euo pipefail

work=$1
: "${DAL_BIN:?}" "${DAL_TEST_PORTS:?}" "${DAL_PLUGIN_DIR:?}"
read -r -a ports <<<"$DAL_TEST_PORTS"
ini="$work/cli.ini"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
sqlq() { mariadb -h127.0.0.1 -P"${ports[$1]}" -udal -pdalpass -N -e "$2"; }

{
    for i in 0 1 2 3; do
        printf '[datasource dbProductSku%d]\nmaster = mysql://dal:${DAL_TEST_PASSWORD}@127.0.0.1:%s/product_%d\n' "$i" "${ports[$i]}" "$i"
    done
    printf '[table cli_food]\ndatasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 8\nshard_key = poi\nstrategy = mod\n'
} >"$ini"

"$DAL_BIN" -c "$ini" check >/dev/null || fail "check"

# DDL fans out: 8 tables, 2 per node
"$DAL_BIN" -c "$ini" exec "CREATE TABLE cli_food (id BIGINT PRIMARY KEY, poi BIGINT, name VARCHAR(40))" >/dev/null || fail "create"
for i in 0 1 2 3; do
    n=$(sqlq "$i" "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='product_$i' AND table_name LIKE 'cli\\_food\\_%'")
    [ "$n" = 2 ] || fail "node $i has $n cli_food tables, want 2"
done

# check --online: the columns dal learns for an INSERT without a column list
out=$("$DAL_BIN" -c "$ini" check --online) || fail "check --online"
echo "$out" | grep -qx 'cli_food: id, poi, name' || fail "check --online columns: $out"
out=$("$DAL_BIN" -c "$ini" check --online --json) || fail "check --online --json"
[ "$(echo "$out" | json_get '",".join(d["columns"]["cli_food"])')" = "id,poi,name" ] || fail "check --online --json: $out"

# insert with params, read back as JSON, check where it landed
for poi in 3 13 22 31; do
    out=$("$DAL_BIN" -c "$ini" exec --json --shard-value "$poi" "INSERT INTO cli_food (id, poi, name) VALUES (?, ?, ?)" "$poi" "$poi" "dish '$poi'") || fail "insert $poi"
    [ "$(echo "$out" | json_get 'd["affected_rows"]')" = 1 ] || fail "insert $poi affected: $out"
    t=$((poi % 8)); node=$((t / 2))
    n=$(sqlq "$node" "SELECT COUNT(*) FROM product_$node.cli_food_$t WHERE id = $poi AND name = 'dish \\'$poi\\''")
    [ "$n" = 1 ] || fail "row $poi not in product_$node.cli_food_$t"
done
out=$("$DAL_BIN" -c "$ini" exec --json --shard-value 13 "SELECT id, name, NULL AS nothing FROM cli_food WHERE poi = ?" 13)
[ "$(echo "$out" | json_get 'd["rows"][0][1]')" = "dish '13'" ] || fail "select json: $out"
[ "$(echo "$out" | json_get 'd["rows"][0][2]')" = "None" ] || fail "NULL not null in json: $out"
[ "$(echo "$out" | json_get 'd["columns"][0]')" = "id" ] || fail "columns in json: $out"

# a CALL's every result: its result sets, then its final status
printf 'DROP PROCEDURE IF EXISTS cli_two;\nDELIMITER //\nCREATE PROCEDURE cli_two() BEGIN SELECT 1 AS a; SELECT \x27x\x27 AS b, 2 AS c; END//\nDELIMITER ;\n' |
    mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass product_0 || fail "create procedure"
out=$("$DAL_BIN" -c "$ini" exec --datasource dbProductSku0 "CALL cli_two()") || fail "call: $out"
[ "$(grep -c '^| x | 2 |$' <<<"$out")" = 1 ] && [ "$(grep -c '^| 1 |$' <<<"$out")" = 1 ] &&
    [ "$(tail -n 1 <<<"$out")" = "0 rows affected" ] || fail "call's result sets: $out"
out=$("$DAL_BIN" -c "$ini" exec --json --datasource dbProductSku0 "CALL cli_two()") || fail "call json: $out"
[ "$(echo "$out" | json_get 'd["rows"][0][0] + "," + d["more_results"][0]["rows"][0][0] + "," + str(len(d["more_results"]))')" = "1,x,2" ] ||
    fail "call json: $out"
sqlq 0 "DROP PROCEDURE product_0.cli_two"

# explain agrees with where the data is
out=$("$DAL_BIN" -c "$ini" explain --json --shard-value 22 "SELECT * FROM cli_food")
[ "$(echo "$out" | json_get 'd["routes"][0]["datasource"]')" = dbProductSku3 ] || fail "explain 22: $out"
[ "$(echo "$out" | json_get 'd["routes"][0]["sql"]')" = "SELECT * FROM cli_food_6" ] || fail "explain sql: $out"

# the shell, reading statements from a pipe
out=$(printf '\\shard 31\nSELECT name FROM cli_food\n  WHERE id = 31;\n' | "$DAL_BIN" -c "$ini" shell 2>&1) || fail "shell: $out"
grep -q "dish '31'" <<<"$out" || fail "shell output: $out"

# transactions in the shell span statements: ROLLBACK undoes, COMMIT keeps
printf 'BEGIN;\nINSERT INTO cli_food (id, poi, name) VALUES (901, 5, \x27gone\x27);\nROLLBACK;\nBEGIN;\nINSERT INTO cli_food (id, poi, name) VALUES (902, 5, \x27kept\x27);\nCOMMIT;\n' \
    | "$DAL_BIN" -c "$ini" shell >/dev/null 2>"$work/err" || fail "shell transaction: $(cat "$work/err")"
[ "$(sqlq 2 "SELECT COUNT(*) FROM product_2.cli_food_5 WHERE id = 901")" = 0 ] || fail "rolled-back row is there"
[ "$(sqlq 2 "SELECT COUNT(*) FROM product_2.cli_food_5 WHERE id = 902")" = 1 ] || fail "committed row is missing"
# a statement for another node inside a transaction is refused
out=$(printf 'BEGIN;\nINSERT INTO cli_food (id, poi, name) VALUES (903, 5, \x27a\x27);\nINSERT INTO cli_food (id, poi, name) VALUES (904, 6, \x27b\x27);\nROLLBACK;\n' \
    | "$DAL_BIN" -c "$ini" shell 2>&1) && fail "cross-node statement in a transaction succeeded"
grep -q "transaction writes on datasource dbProductSku2" <<<"$out" || fail "cross-node message: $out"

# a server error names the node and exits 1
if "$DAL_BIN" -c "$ini" exec --shard-value 1 "SELECT nope FROM cli_food" 2>"$work/err" >/dev/null; then
    fail "bad column succeeded"
fi
grep -q "dbProductSku0" "$work/err" || fail "error does not name the node: $(cat "$work/err")"
grep -q "dalpass" "$work/err" && fail "password in error output"

"$DAL_BIN" -c "$ini" exec "DROP TABLE cli_food" >/dev/null || fail "drop"
[ "$fails" -eq 0 ] || { echo "$fails CLI live checks failed" >&2; exit 1; }
echo "CLI live checks passed"
