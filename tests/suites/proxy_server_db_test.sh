#!/usr/bin/env bash
# proxy_server_db_test.sh -- databases the configuration does not declare,
# served as the servers' own on [dal] server_schemas' datasource: `USE
# mysql`, COM_INIT_DB, the handshake's database, CREATE DATABASE x; USE x;
# tables there; DROP DATABASE of the current one, and the session then in
# no database (also after COM_RESET_CONNECTION, and with the mariadb
# client --no-defaults); SHOW DATABASES;
# COM_CHANGE_USER (tests/live/ps_client).  The
# same PyMySQL script runs directly against the first server and through
# dal-proxy, and the outputs must be the same.  Then: a pooled connection
# never carries such a database to another client (after USE back, a
# session's end, with and without other state pinned), and with
# `server_schemas = none` such a name gets 1049 as before.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_sharded_proxy orders 4 user_id
py=/usr/bin/python3
# same_outputs NAME WHAT: $work/NAME_plain.out (the server's) and
# $work/NAME_px.out (the proxy's) must be the same, else the test fails
# with their diff
same_outputs() {
    diff -u "$work/$1_plain.out" "$work/$1_px.out" >"$work/$1.diff" ||
        fail "$2: proxy and server differ: $(cat "$work/$1.diff")"
}
# ps_client_both NAME WHAT PLAIN_SED [OUT_SED]: tests/live/ps_client runs
# $work/NAME.txt through the proxy (app, database shop) and directly on the
# first server (dal, database plain; the script through sed PLAIN_SED);
# in both outputs the home database reads DB (OUT_SED first), then same_outputs
ps_client_both() {
    local name=$1 what=$2 to_plain=$3 out_sed=${4:-}
    "$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop <"$work/$name.txt" \
        >"$work/${name}_px.out" 2>&1 || fail "ps_client through the proxy: $(tail -3 "$work/${name}_px.out")"
    sed "$to_plain" "$work/$name.txt" |
        "$builddir/tests/live/ps_client" 127.0.0.1 "${ports[0]}" dal dalpass plain \
            >"$work/${name}_plain.out" 2>&1 || fail "ps_client on the server: $(tail -3 "$work/${name}_plain.out")"
    sed -i "${out_sed}s/\bplain\b/DB/; s/\bshop\b/DB/" "$work/${name}_px.out" "$work/${name}_plain.out"
    same_outputs "$name" "$what"
}
export PX_PORT=$port PLAIN_PORT=${ports[0]}
mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop \
    -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT)'

# ---- 1. the same statements directly and through the proxy ------------------
cat >"$work/schemas.py" <<'PY'
import os, sys, pymysql
direct = sys.argv[1] == "direct"
port = int(os.environ["PLAIN_PORT" if direct else "PX_PORT"])
user, pw, home = ("dal", "dalpass", "plain") if direct else ("app", os.environ["PX_TEST_PASSWORD"], "shop")
def connect(db=home):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                           autocommit=True)
def run(cur, sql, shown=None):
    shown = shown or sql
    try:
        cur.execute(sql)
        rows = cur.fetchall() if cur.description else cur.rowcount
        print(shown, "->", rows)
    except pymysql.MySQLError as e:
        print(shown, "-> error", e.args[0], e.args[1])
c = connect()
cur = c.cursor()
run(cur, "DROP DATABASE IF EXISTS sx")
run(cur, "USE mysql")
run(cur, "SELECT DATABASE()")
run(cur, "SELECT COUNT(*) > 0 FROM user")
run(cur, "SELECT COUNT(*) > 0 FROM db")
run(cur, "USE nosuch")
run(cur, "SELECT DATABASE()")
run(cur, "CREATE DATABASE sx")
run(cur, "USE sx")
run(cur, "SELECT DATABASE(), SCHEMA()")
run(cur, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
run(cur, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
run(cur, "SELECT * FROM t ORDER BY id")
run(cur, "SELECT id FROM sx.t WHERE v = 'b'")
run(cur, "SHOW TABLES")
run(cur, "SHOW FULL TABLES LIKE 't%'")
run(cur, "DESCRIBE t")
run(cur, "SHOW CREATE TABLE t")
run(cur, "SHOW INDEX FROM t")
run(cur, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()")
run(cur, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'sx' ORDER BY ORDINAL_POSITION")
run(cur, "SET @k = 2")
run(cur, "SELECT v FROM t WHERE id = @k")
run(cur, "BEGIN")
run(cur, "UPDATE t SET v = 'c' WHERE id = 1")
run(cur, "SELECT v FROM t WHERE id = 1")
run(cur, "ROLLBACK")
run(cur, "SELECT v FROM t WHERE id = 1")
run(cur, "SELECT COUNT(*) FROM mysql.user WHERE user = 'dal'")
run(cur, "SELECT 'sx' IN (SELECT SCHEMA_NAME FROM information_schema.SCHEMATA)")
run(cur, "SHOW DATABASES LIKE 'sx'")
# COM_INIT_DB
c.select_db("mysql")
run(cur, "SELECT DATABASE()")
try:
    c.select_db("nosuch")
except pymysql.MySQLError as e:
    print("init_db nosuch -> error", e.args[0], e.args[1])
run(cur, "SELECT DATABASE()")
c.select_db("sx")
run(cur, "SELECT COUNT(*) FROM t")
run(cur, "DROP DATABASE sx")
run(cur, "SELECT DATABASE()")
run(cur, "USE sx")
run(cur, "SELECT DATABASE()")
c.close()
# the handshake's database
c = connect("mysql")
cur = c.cursor()
run(cur, "SELECT DATABASE()")
run(cur, "SELECT COUNT(*) > 0 FROM user")
c.close()
try:
    connect("nosuch")
except pymysql.MySQLError as e:
    print("connect nosuch -> error", e.args[0], e.args[1])
# no database: DROP DATABASE of the current one leaves the session in none,
# where a server answers from no database (the home database is printed
# as DB: the server's is plain, the proxy's shop)
def run_home(cur, sql):
    run(cur, sql % home, sql % "DB")
c = connect()
cur = c.cursor()
run(cur, "CREATE TABLE IF NOT EXISTS orders (id INT PRIMARY KEY, user_id INT)")
run(cur, "DROP DATABASE IF EXISTS nx")
run(cur, "CREATE DATABASE nx COLLATE utf8mb4_unicode_ci")
run(cur, "USE nx")
run(cur, "SELECT DATABASE(), @@collation_database, @@character_set_database")
run(cur, "SET @keep = 7")
run(cur, "PREPARE p FROM 'SELECT DATABASE(), @@collation_database'")
run(cur, "DROP DATABASE nx")
run(cur, "SELECT DATABASE(), @@collation_database, @@character_set_database")
run(cur, "SELECT DATABASE()")
run(cur, "SELECT @keep, DATABASE()")
run(cur, "EXECUTE p")
run(cur, "SELECT * FROM orders")
run(cur, "SELECT * FROM t")
run(cur, "CREATE TABLE t2 (a INT)")
run(cur, "INSERT INTO orders VALUES (1, 1)")
run(cur, "SHOW TABLES")
run(cur, "DESCRIBE orders")
run_home(cur, "SELECT COUNT(*) FROM %s.orders")
run_home(cur, "SHOW TABLES FROM %s LIKE 'orders'")
run_home(cur, "DESCRIBE %s.orders")
run_home(cur, "SHOW COLUMNS FROM orders FROM %s")
run_home(cur, "SHOW INDEX FROM orders IN %s")
run_home(cur, "SHOW FULL COLUMNS FROM %s.orders LIKE 'user%%'")
run_home(cur, "SHOW CREATE TABLE %s.orders")
run(cur, "SHOW CREATE TABLE orders")
run(cur, "SELECT COUNT(*) > 0 FROM mysql.db")
run(cur, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()")
run(cur, "SELECT COUNT(*) > 0 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql'")
run(cur, "USE nosuch")
run(cur, "SELECT DATABASE(), @@collation_database")
run(cur, "BEGIN")
run(cur, "SELECT DATABASE(), @@character_set_database")
run(cur, "COMMIT")
run(cur, "CREATE DATABASE nx")
run(cur, "USE nx")
run(cur, "SELECT DATABASE()")
run(cur, "DROP DATABASE nx")
run(cur, "SELECT DATABASE(), @@collation_database")
run_home(cur, "USE %s")
run(cur, "SELECT DATABASE() IS NOT NULL, @@collation_database = @@collation_server")
run(cur, "SELECT COUNT(*) FROM orders")
run(cur, "SELECT @keep")
c.close()
PY
"$py" "$work/schemas.py" direct >"$work/schemas_plain.out" 2>&1 ||
    fail "the script directly: $(tail -5 "$work/schemas_plain.out")"
"$py" "$work/schemas.py" proxy >"$work/schemas_px.out" 2>&1 ||
    fail "the script through the proxy: $(tail -5 "$work/schemas_px.out")"
same_outputs schemas "databases the configuration does not declare"

# COM_CHANGE_USER to a database of the server's (tests/live/ps_client)
printf '%s\n' "!change_user app $PX_TEST_PASSWORD mysql" 'SELECT DATABASE()' \
    'SELECT COUNT(*) > 0 FROM user' 'USE shop' >"$work/cu.txt"
ps_client_both cu "COM_CHANGE_USER to mysql" \
    's/^!change_user app .* mysql$/!change_user dal dalpass mysql/; s/^USE shop$/USE plain/' \
    's/^change_user [a-z]* ok/change_user ok/; '
grep -q "mysql" "$work/cu_px.out" || fail "COM_CHANGE_USER to mysql: $(cat "$work/cu_px.out")"

# COM_RESET_CONNECTION in no database: it stays none, as on a server
printf '%s\n' 'CREATE DATABASE nr' 'USE nr' 'DROP DATABASE nr' '!reset_connection' \
    'SELECT DATABASE(), @@collation_database, @@character_set_database' 'SELECT COUNT(*) FROM orders' \
    '!reset_connection' 'SELECT DATABASE()' 'USE shop' 'SELECT DATABASE()' >"$work/rc.txt"
ps_client_both rc "COM_RESET_CONNECTION in no database" 's/^USE shop$/USE plain/'

# the mariadb client (--no-defaults): a handshake without a database is in
# the [proxy] database (its tables), and DROP DATABASE of its own leaves none
sql='SELECT DATABASE(); CREATE DATABASE nm; USE nm; DROP DATABASE nm;
SELECT DATABASE(), @@collation_database, @@character_set_database;
status
SELECT 1 FROM t3;'
mariadb --no-defaults -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" -e "SELECT COUNT(*) FROM orders" \
    >"$work/nd.out" 2>&1 || fail "mariadb without a database: $(cat "$work/nd.out")"
# (status: its current database, not the connection's other lines)
nd() {
    mariadb --no-defaults -f -h127.0.0.1 "$@" -e "$sql" 2>&1 |
        grep -e '^Current database:' -e '^ERROR' -e '^[^:]*$' | grep -v -e '^--' -e '^$' || true
}
nd -P"$port" -uapp -p"$PX_TEST_PASSWORD" >"$work/nd_px.out"
nd -P"${ports[0]}" -udal -pdalpass >"$work/nd_plain.out"
same_outputs nd "mariadb --no-defaults in no database"

# SHOW DATABASES: the logical ones and the server's own
out=$(mariadb -N -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop -e 'SHOW DATABASES' 2>&1)
for d in shop mysql plain shard_0 information_schema; do
    grep -qx "$d" <<<"$out" || fail "SHOW DATABASES lacks $d: $out"
done

# ---- 2. a pooled connection never carries another database -----------------
# client A moves its pinned connection to sx (alone, and with a user
# variable pinning it too), goes back or quits; every client after it on
# the pooled connections of ds0 finds shard_0, the datasource's own
out=$("$py" - <<'PY' 2>&1
import os, pymysql
port = int(os.environ["PX_PORT"])
def connect():
    return pymysql.connect(host="127.0.0.1", port=port, user="app",
                           password=os.environ["PX_TEST_PASSWORD"], database="shop", autocommit=True)
def server_db(c):
    cur = c.cursor()
    cur.execute("SELECT CONCAT(DATABASE())")   # the server's answer, not the proxy's
    return cur.fetchone()[0]
bad = []
setup = connect()
setup.cursor().execute("CREATE DATABASE IF NOT EXISTS sx")
setup.close()
for round in range(12):
    a = connect()
    cur = a.cursor()
    if round % 2:
        cur.execute("SET @pin = 1")
    cur.execute("USE sx")
    if server_db(a) != "sx":
        bad.append("round %d: A in sx runs in %s" % (round, server_db(a)))
    if round % 3 == 0:
        cur.execute("USE shop")
        if server_db(a) != "shop_ds" and server_db(a) != "shard_0":
            bad.append("round %d: A back in shop runs in %s" % (round, server_db(a)))
    elif round % 3 == 1:
        a.select_db("shop")
    a.close()
    others = [connect() for _ in range(3)]
    for o in others:
        d = server_db(o)
        if d != "shard_0":
            bad.append("round %d: another client's pooled connection is in %s" % (round, d))
    for o in others:
        o.close()
drop = connect()
drop.cursor().execute("DROP DATABASE sx")
drop.close()
print("\n".join(bad) if bad else "ok")
PY
)
[ "$out" = ok ] || fail "a pooled connection carried another database: $out"

# ---- 3. server_schemas = none: only the declared databases ------------------
px_stop "${pids[-1]}" "$work/px.log"
unset 'pids[-1]'
sed -i 's/^default_datasource = ds0$/default_datasource = ds0\nserver_schemas = none/' "$work/px.ini"
px_start "$work/px.ini" "$port"
out=$(mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop -e 'USE mysql' 2>&1) &&
    fail "server_schemas = none: USE mysql was accepted"
grep -q "^ERROR 1049 (42000).*Unknown database 'mysql'" <<<"$out" ||
    fail "server_schemas = none: USE mysql: $out"
out=$(mariadb -N -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop -e 'SHOW DATABASES' 2>&1)
[ "$out" = shop ] || fail "server_schemas = none: SHOW DATABASES: $out"
px_stop "${pids[-1]}" "$work/px.log"
unset 'pids[-1]'

px_finish proxy_server_db_test
