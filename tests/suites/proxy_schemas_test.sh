#!/usr/bin/env bash
# proxy_schemas_test.sh -- several logical databases in one INI file:
# dal-proxy serves its [proxy] database (the top-level [table] sections and
# [dal] default_datasource) and a [schema hr] (its own default_datasource on
# another server, a table of its own and a table sharded over both servers)
# to PyMySQL: the handshake's database, USE and COM_INIT_DB between them,
# SHOW DATABASES and SHOW TABLES, each schema's statements judged against
# MariaDB holding the same data plainly (tests/suites/proxy_schemas.py).
# The same file serves a libdal program (the dal CLI) as before: the
# top-level tables and default datasource.  A bad [schema] section or
# schema = key is refused with FILE:LINE.  Starts its own MariaDB servers;
# never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"
dal=$builddir/tools/dal

# ------------------------------------------------- configuration mistakes

# bad NAME LINE TEXT LINES...: the INI file NAME.ini (datasources ds0 and
# ds1 on lines 1-4, then LINES) is refused at NAME.ini:LINE with TEXT (an
# extended regular expression) in the message
bad() {
    local f=$work/$1.ini out
    {
        printf '[datasource ds0]\nmaster = mysql://u@127.0.0.1:1/a\n'
        printf '[datasource ds1]\nmaster = mysql://u@127.0.0.1:1/b\n'
        printf '%s\n' "${@:4}"
    } >"$f"
    if out=$("$dal" -c "$f" check 2>&1); then
        fail "$1: dal check accepted it"
    elif ! grep -Eq "$f:$2: .*$3" <<<"$out"; then
        fail "$1: expected a message at $f:$2 matching '$3', got: $out"
    else
        echo "$1: refused at line $2"
    fi
}
bad table_schema 7 'schema: no \[schema nosuch\] is defined' \
    '[table t]' 'datasource = ds0' 'schema = nosuch'
bad schema_datasource 6 'default_datasource: no \[datasource missing\]' \
    '[schema hr]' 'default_datasource = missing'
bad schema_is_top 5 '\[schema app\] is the \[proxy\] database' \
    '[schema app]' 'default_datasource = ds0' '[proxy]' 'database = app'
bad schema_twice 7 'duplicate section \[schema hr\] \(first at line 5\)' \
    '[schema hr]' '[schema x]' '[schema hr]'
bad schema_name 5 "bad schema name 'a b'" '[schema a b]'

# ------------------------------------------------------ the two schemas

px_cluster 2 --db sales --db hr --db 'pay_%d' --db ref
port=$("$harness/cluster.sh" free-port)
pw=schemas-s3cret
cat >"$work/px.ini" <<EOF
[datasource sales]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/sales
[datasource hr]
master = mysql://dal:dalpass@127.0.0.1:${ports[1]}/hr
[datasource pay0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/pay_0
[datasource pay1]
master = mysql://dal:dalpass@127.0.0.1:${ports[1]}/pay_1
[dal]
default_datasource = sales
server_schemas = none
[table orders]
datasource = sales
[schema hr]
default_datasource = hr
[table staff]
schema = hr
datasource = hr
[table pay]
schema = hr
datasource = pay
db_shard_num = 2
table_shard_num = 4
shard_key = emp
strategy = mod
EOF
px_ini_proxy "$port" sales "$pw" >>"$work/px.ini"
px_start "$work/px.ini" "$port"

/usr/bin/python3 -c 'import pymysql' 2>/dev/null ||
    fail "PyMySQL is not installed (tests/harness/deps.sh installs python3-pymysql)"
/usr/bin/python3 "$tests/suites/proxy_schemas.py" "$port" "$pw" "${ports[0]}" "${ports[1]}" \
    >"$work/py.out" 2>&1 || fail "proxy_schemas.py: $(grep -v '^ok' "$work/py.out" | head -30)"
echo "proxy_schemas.py: $(grep -c '^ok' "$work/py.out") checks passed"

# the binary protocol in hr inside a transaction (a statement is described
# apart from it, in its schema), COM_RESET_CONNECTION keeping the schema,
# COM_CHANGE_USER choosing another; judged against the same statements on
# the plain copy (schema ref), the DATABASE() lines apart
printf '%s\n' 'SET autocommit = 0' 'SELECT * FROM memo ORDER BY id' \
    "$(printf 'SELECT amount FROM pay WHERE emp = ?\t5')" 'COMMIT' '!reset_connection' \
    'SELECT DATABASE()' 'SELECT * FROM staff ORDER BY id' "!change_user app $pw sales" \
    'SELECT DATABASE()' 'SELECT item FROM orders ORDER BY id' >"$work/ps.txt"
"$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$pw" hr <"$work/ps.txt" \
    >"$work/ps_px.out" 2>&1 || fail "ps_client through the proxy: $(tail -3 "$work/ps_px.out")"
sed "s/^!change_user app $pw sales/!change_user dal dalpass ref/" "$work/ps.txt" |
    "$builddir/tests/live/ps_client" 127.0.0.1 "${ports[0]}" dal dalpass ref \
        >"$work/ps_ref.out" 2>&1 || fail "ps_client on the plain server: $(tail -3 "$work/ps_ref.out")"
sed -e 's/\bhr\b/DB/; s/\bsales\b/DB/; s/\bref\b/DB/; s/^change_user [a-z]* ok/change_user ok/' "$work/ps_px.out" >"$work/ps_px.cmp"
sed -e 's/\bhr\b/DB/; s/\bsales\b/DB/; s/\bref\b/DB/; s/^change_user [a-z]* ok/change_user ok/' "$work/ps_ref.out" >"$work/ps_ref.cmp"
diff -u "$work/ps_ref.cmp" "$work/ps_px.cmp" >"$work/ps.diff" ||
    fail "prepared statements in hr: proxy and server differ: $(head -40 "$work/ps.diff")"
grep -q '^hr$\|[^a-z]hr[^a-z]' "$work/ps_px.out" && grep -q 'sales' "$work/ps_px.out" ||
    fail "prepared statements: DATABASE() not hr then sales: $(cat "$work/ps_px.out")"
echo "prepared statements in hr and sales: as on the plain server"

# ------------------------------------- the same file for a libdal program

# a libdal program sees the top level: its table, its default datasource
# for the others, and a [schema hr] table refused rather than looked up
# on the wrong server
out=$("$dal" -c "$work/px.ini" exec --json "SELECT item FROM orders ORDER BY id" 2>&1) ||
    fail "libdal: orders: $out"
grep -q '"rows":\[\["apple"\],\["pear"\],\["plum"\]\]' <<<"$out" || fail "libdal: orders: $out"
out=$("$dal" -c "$work/px.ini" exec --json "SELECT txt FROM notes" 2>&1) ||
    fail "libdal: notes: $out"
grep -q '"rows":\[\["sales note"\]\]' <<<"$out" || fail "libdal: notes: $out"
if out=$("$dal" -c "$work/px.ini" exec "SELECT * FROM staff" 2>&1); then
    fail "libdal: hr's table staff was not refused: $out"
else
    grep -q "table staff is a table of \[schema hr\], not of the top level" <<<"$out" ||
        fail "libdal: staff: $out"
fi
echo "libdal: the top level served as before"

px_stop "${pids[0]}" "$work/px.log"
pids=()
px_finish "proxy schema tests"
