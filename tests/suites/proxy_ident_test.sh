#!/usr/bin/env bash
# proxy_ident_test.sh -- dal-proxy as clients know a server, judged against
# the MariaDB servers behind it: the handshake names the backends' product
# and version (and their capability flags and collation), as PyMySQL,
# MySQLdb and the raw bytes see it; dal's own refusals arrive as the
# server errors (number and SQLSTATE) they are; LOCK TABLES of a sharded
# table lets a mariadb-dump file be restored into it; information_schema
# answers about the logical tables (SQLAlchemy's has_table and reflection),
# also one whose first physical table is not on the default datasource
# and one with no physical table there.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='app-s3cret'
{
    px_ini_sharded
    px_ini_table orders 4 user_id mod
    px_ini_table items 4 user_id mod
    # late: its first physical tables (late_0, late_1) on the second
    # server, late_2 and late_3 on the default datasource's schema
    px_ini_datasources late 4 1/shard_1 0/shard_0
    # away: both physical tables on the second server, none on the
    # default datasource
    px_ini_datasources away 2 1/shard_1
    px_ini_proxy "$port"
} >"$work/px.ini"
px_start "$work/px.ini" "$port"
px() { mariadb --comments -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
plain() { mariadb --comments -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }
py=/usr/bin/python3
export PX_PORT=$port PLAIN_PORT=${ports[0]}
px -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT, note VARCHAR(20))'

# ---- 1. the server's identity ----------------------------------------------
# the handshake's bytes: version, capabilities, collation and status of the
# proxy against the first backend's (neither offers TLS here); the proxy
# leaves out COMPRESS (1 << 5), which it does not speak
out=$("$py" - <<'PY' 2>&1
import os, socket, struct
def handshake(port):
    s = socket.create_connection(("127.0.0.1", port))
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:3], "little"):
        data += s.recv(4096)
    s.close()
    body = data[4:]
    end = body.index(b"\0", 1)
    version = body[1:end].decode()
    rest = body[end + 1 + 4 + 8 + 1:]
    lo, lang, status, hi = struct.unpack("<HBHH", rest[:7])
    return version, lo | hi << 16, lang, status
px = handshake(int(os.environ["PX_PORT"]))
srv = handshake(int(os.environ["PLAIN_PORT"]))
problems = []
if px[0] != srv[0]:
    problems.append("version %r, the server's %r" % (px[0], srv[0]))
if "MariaDB" not in px[0] or not px[0].startswith("5.5.5-"):
    problems.append("version %r does not say 5.5.5-...MariaDB" % px[0])
want = srv[1] & ~(1 << 5)
if px[1] != want:
    problems.append("capabilities %#x, want %#x (the server's %#x)" % (px[1], want, srv[1]))
if px[2] != srv[2]:
    problems.append("collation %d, the server's %d" % (px[2], srv[2]))
if px[3] != srv[3]:
    problems.append("status %#x, the server's %#x" % (px[3], srv[3]))
print("; ".join(problems) if problems else "ok")
PY
) || true
[ "$out" = ok ] || fail "handshake: $out"

# what the drivers report, through the proxy and directly
out=$("$py" - <<'PY' 2>&1
import os, pymysql, MySQLdb
def info(port, user, pw, db):
    p = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db)
    m = MySQLdb.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db)
    cur = p.cursor()
    rows = []
    for q in ("SELECT @@version, VERSION(), @@version_comment", "SELECT @@version_comment LIMIT 1",
              "SELECT @@global.version, @@global.version_comment"):
        cur.execute(q)
        rows.append(cur.fetchall())
    return p.get_server_info(), m.get_server_info(), rows
px = info(int(os.environ["PX_PORT"]), "app", os.environ["PX_TEST_PASSWORD"], "shop")
srv = info(int(os.environ["PLAIN_PORT"]), "dal", "dalpass", "plain")
problems = []
for name, a, b in (("PyMySQL get_server_info()", px[0], srv[0]),
                   ("MySQLdb get_server_info()", px[1], srv[1]),
                   ("@@version, VERSION(), @@version_comment", px[2], srv[2])):
    if a != b:
        problems.append("%s: %r, the server's %r" % (name, a, b))
if "MariaDB" not in px[0] or "MariaDB" not in px[1]:
    problems.append("drivers do not see MariaDB: %r %r" % (px[0], px[1]))
print("; ".join(problems) if problems else "ok")
PY
) || true
[ "$out" = ok ] || fail "drivers' view of the server: $out"
# the mariadb client's status lines
got=$(px -e status | grep -E '^Server( version)?:') || fail "status through the proxy"
want=$(plain -e status | grep -E '^Server( version)?:')
[ "$got" = "$want" ] || fail "mariadb status: proxy '$got', server '$want'"

# ---- 2. error classes ------------------------------------------------------
# each of dal's refusals: its number through PyMySQL, and its number and
# SQLSTATE as the mariadb client prints them from the ERR packet
err_is() { # WHAT NUMBER SQLSTATE SQL
    local got code
    got=$(px -e "$4" 2>&1) && fail "$1 was accepted"
    echo "$got" | grep -q "^ERROR $2 ($3)" || fail "$1: want ERROR $2 ($3), got: $got"
    code=$(PX_SQL="$4" "$py" - <<'PY' 2>&1
import os, pymysql
c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                    password=os.environ["PX_TEST_PASSWORD"], database="shop", autocommit=True)
try:
    c.cursor().execute(os.environ["PX_SQL"])
    print("accepted")
except pymysql.MySQLError as e:
    print(e.args[0])
PY
) || true
    [ "$code" = "$2" ] || fail "$1 through PyMySQL: want $2, got $code"
}
err_is "a statement dal cannot route (DAL_EROUTE)" 1235 42000 '/*+ dal datasource=nosuch */ SELECT 1'
err_is "a NULL shard value (DAL_ESHARD)" 1264 22003 "INSERT INTO orders VALUES (1, NULL, 'x')"
err_is "a negative shard value (DAL_ESHARD)" 1264 22003 "INSERT INTO orders VALUES (1, -5, 'x')"
err_is "a bad hint value (DAL_EINVAL)" 1210 42000 '/*+ dal server=bogus */ SELECT 1'
err_is "a feature dal does not have (DAL_EUNSUPPORTED)" 1235 42000 'SELECT * FROM orders a JOIN orders b ON a.id = b.id'
err_is "text dal cannot analyse (DAL_ESQL)" 1064 42000 "SELECT 'abc"
# a server's error keeps the server's number and SQLSTATE
got=$(px -e 'SELECT * FROM nonesuch' 2>&1 | sed 's/ at line 1: .*//') || true
want=$(plain -e 'SELECT * FROM nonesuch' 2>&1 | sed 's/ at line 1: .*//') || true
[ "$got" = "$want" ] || fail "a server's error: proxy '$got', server '$want'"
# DAL_ESTATE: the connection holding a session's state was killed; the
# statement that meets the loss gets 1429, the next one the state error
out=$("$py" - <<'PY' 2>&1
import os, pymysql
c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                    password=os.environ["PX_TEST_PASSWORD"], database="shop", autocommit=True)
cur = c.cursor()
cur.execute("SET @a = 1")
cur.execute("SELECT 0 + CONNECTION_ID()")
backend = cur.fetchone()[0]
root = pymysql.connect(host="127.0.0.1", port=int(os.environ["PLAIN_PORT"]), user="root")
root.cursor().execute("KILL %d" % backend)
codes = []
for _ in range(2):
    try:
        cur.execute("SELECT @a")
        codes.append("ok")
    except pymysql.MySQLError as e:
        codes.append(str(e.args[0]))
print(" ".join(codes))
PY
) || true
[ "$out" = "1429 1192" ] || fail "a lost pinned connection (DAL_ESTATE): want 1429 then 1192, got $out"

# ---- 4. LOCK TABLES of a sharded table ----------------------------------------
# a mariadb-dump of an unsharded copy (DROP, CREATE, LOCK TABLES ... WRITE,
# INSERT, UNLOCK TABLES) restored through the proxy with the mariadb client,
# no --force: every row in the physical table the strategy names (mod 4:
# orders_0 and orders_1 on shard_0, orders_2 and orders_3 on shard_1)
plain -e "CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))
          ENGINE=InnoDB; INSERT INTO orders SELECT seq, seq * 7 % 23, CONCAT('n', seq) FROM seq_1_to_500"
mariadb-dump -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain orders >"$work/orders.sql"
grep -q '^LOCK TABLES `orders` WRITE;' "$work/orders.sql" || fail "the dump has no LOCK TABLES"
out=$(mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop <"$work/orders.sql" 2>&1) || fail "restoring the dump through the proxy: $out"
got=$(px -N -e 'SELECT COUNT(*), SUM(id), SUM(user_id) FROM orders')
want=$(plain -N -e 'SELECT COUNT(*), SUM(id), SUM(user_id) FROM orders')
[ "$got" = "$want" ] || fail "restored dump: proxy has '$got', the copy '$want'"
total=0
for t in 0 1 2 3; do
    db=$((t / 2))
    line=$(mariadb -N -h127.0.0.1 -P"${ports[$db]}" -udal -pdalpass "shard_$db" \
        -e "SELECT COUNT(*), SUM(user_id % 4 <> $t) FROM orders_$t")
    [ "$(echo "$line" | cut -f2)" = 0 ] || fail "orders_$t holds rows of another shard: $line"
    total=$((total + $(echo "$line" | cut -f1)))
done
[ "$total" = 500 ] || fail "the physical tables hold $total rows, not 500"
# the lock is held on every node: a direct write to a physical table of the
# second node waits for it
px -e 'LOCK TABLES orders WRITE; SELECT SLEEP(3); UNLOCK TABLES' >"$work/lock.out" 2>&1 &
holder=$!
sleep 1
out=$(mariadb -h127.0.0.1 -P"${ports[1]}" -udal -pdalpass shard_1 \
    -e "SET SESSION lock_wait_timeout = 1; INSERT INTO orders_3 VALUES (9999, 3, 'x')" 2>&1) &&
    fail "a physical table was written while the proxy's client held LOCK TABLES WRITE"
echo "$out" | grep -q '^ERROR 1205' || fail "write under the lock: $out"
wait "$holder" || fail "the lock holder failed: $(cat "$work/lock.out")"
# the lock ended with UNLOCK TABLES
mariadb -h127.0.0.1 -P"${ports[1]}" -udal -pdalpass shard_1 \
    -e "SET SESSION lock_wait_timeout = 1; DELETE FROM orders_3 WHERE id = 9999" ||
    fail "the lock outlived UNLOCK TABLES"
# READ locks, and a second LOCK TABLES replacing the first: as on the copy
same() { # NAME SQL
    local got want
    got=$(px -N -B -e "$2" 2>&1 | sed 's/orders_[0-9]/orders/') || true
    want=$(plain -N -B -e "$2" 2>&1) || true
    [ "$got" = "$want" ] || fail "$1: proxy gave '$got', the server '$want'"
}
same "a write under LOCK TABLES READ" \
    "LOCK TABLES orders READ; SELECT COUNT(*) FROM orders; INSERT INTO orders VALUES (1000, 3, 'y')"
same "LOCK TABLES again, then UNLOCK" \
    "LOCK TABLES orders READ; LOCK TABLES orders WRITE; INSERT INTO orders VALUES (1001, 5, 'z'); UNLOCK TABLES; SELECT COUNT(*) FROM orders; DELETE FROM orders WHERE id = 1001"
# with autocommit 0 (PyMySQL's default): LOCK TABLES opens no transaction,
# UNLOCK TABLES commits the one the INSERT opened, as on the copy
lock_py() { # PORT USER PASSWORD SCHEMA
    "$py" - "$@" <<'PY' 2>&1
import sys, pymysql
port, user, pw, db = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db)
cur = c.cursor()
out = []
for q in ("LOCK TABLES orders WRITE", "INSERT INTO orders VALUES (5001, 6, 'p')",
          "SELECT COUNT(*) FROM orders WHERE id = 5001 AND user_id = 6", "UNLOCK TABLES"):
    try:
        cur.execute(q)
        out.append(repr(cur.fetchall()))
    except pymysql.MySQLError as e:
        out.append("error %d" % e.args[0])
c.rollback()
other = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                        autocommit=True).cursor()
other.execute("SELECT COUNT(*) FROM orders WHERE id = 5001 AND user_id = 6")
out.append("seen by another connection: %r" % (other.fetchall(),))
other.execute("DELETE FROM orders WHERE id = 5001 AND user_id = 6")
print("; ".join(out))
PY
}
got=$(lock_py "$port" app "$PX_TEST_PASSWORD" shop) || true
want=$(lock_py "${ports[0]}" dal dalpass plain) || true
[ "$got" = "$want" ] || fail "LOCK TABLES with autocommit 0: proxy '$got', the copy '$want'"

# ---- 3. information_schema knows the logical tables --------------------------
# SQLAlchemy (information_schema.tables for has_table): create_all twice and
# the inspector, on a sharded table through the proxy and on the copy
cat >"$work/sa.py" <<'PY'
import sys
from sqlalchemy import create_engine, MetaData, Table, Column, Integer, String, inspect
eng = create_engine(sys.argv[1])
md = MetaData()
Table("items", md, Column("id", Integer, primary_key=True, autoincrement=False),
      Column("user_id", Integer, nullable=False), Column("note", String(20), index=True))
md.create_all(eng)
md.create_all(eng)  # has_table must see the table: no second CREATE TABLE
ins = inspect(eng)
print(ins.has_table("items"), ins.has_table("items_1"), ins.has_table("nonesuch"))
print([(c["name"], str(c["type"]), c["nullable"]) for c in ins.get_columns("items")])
print(ins.get_pk_constraint("items")["constrained_columns"])
print(sorted((i["name"], tuple(i["column_names"])) for i in ins.get_indexes("items")))
PY
got=$("$py" "$work/sa.py" "mysql+pymysql://app:$PX_TEST_PASSWORD@127.0.0.1:$port/shop" 2>&1) ||
    fail "SQLAlchemy through the proxy: $(echo "$got" | tail -3)"
want=$("$py" "$work/sa.py" "mysql+pymysql://dal:dalpass@127.0.0.1:${ports[0]}/plain" 2>&1) ||
    fail "SQLAlchemy on the copy: $(echo "$want" | tail -3)"
[ "$got" = "$want" ] || fail "SQLAlchemy: proxy '$got', the copy '$want'"
echo "$got" | head -1 | grep -qx 'True False False' || fail "has_table: $got"
for t in 0 1 2 3; do
    db=$((t / 2))
    mariadb -h127.0.0.1 -P"${ports[$db]}" -udal -pdalpass "shard_$db" -e "SELECT 1 FROM items_$t" ||
        fail "SQLAlchemy's CREATE TABLE did not make items_$t"
done
# the views, through the proxy (schema shop) and on the copy (schema plain)
is_same() { # NAME SQL with @S for the schema
    local got want
    got=$(px -N -B -e "${2//@S/shop}" 2>&1) || true
    want=$(plain -N -B -e "${2//@S/plain}" 2>&1) || true
    [ "$got" = "$want" ] || fail "$1: proxy gave '$got', the copy '$want'"
    [ -n "$got" ] || fail "$1 printed nothing"
}
is_same "TABLES of the schema" \
    "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = '@S' AND TABLE_NAME IN ('items', 'orders') ORDER BY TABLE_NAME"
is_same "TABLES of DATABASE()" \
    "SELECT TABLE_NAME, TABLE_SCHEMA = DATABASE() FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('items', 'orders') ORDER BY TABLE_NAME"
is_same "no physical table in TABLES" \
    "SELECT COUNT(*) FROM information_schema.tables t WHERE t.table_schema = '@S' AND (t.table_name LIKE 'items%' OR t.table_name LIKE 'orders%')"
is_same "COLUMNS of a sharded table" \
    "SELECT TABLE_SCHEMA = '@S', TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, COLUMN_TYPE, COLUMN_KEY FROM information_schema.COLUMNS WHERE table_schema = '@S' AND table_name = 'items' ORDER BY ORDINAL_POSITION"
is_same "STATISTICS of a sharded table" \
    "SELECT INDEX_SCHEMA = '@S', TABLE_NAME, NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '@S' AND TABLE_NAME = 'items' ORDER BY INDEX_NAME, SEQ_IN_INDEX"
# a sharded table whose first physical table is on another server than
# the default datasource: one of its tables there stands for it
px -e 'CREATE TABLE late (id INT PRIMARY KEY, user_id INT, v VARCHAR(5))'
plain -e 'CREATE TABLE late (id INT PRIMARY KEY, user_id INT, v VARCHAR(5))'
is_same "TABLES of a table first on another server" \
    "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = '@S' AND TABLE_NAME LIKE 'late%' ORDER BY TABLE_NAME"
is_same "COLUMNS of a table first on another server" \
    "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '@S' AND TABLE_NAME LIKE 'late%' ORDER BY ORDINAL_POSITION"
# a sharded table with no physical table on the default datasource: its
# first physical table's rows, read on its own server, stand for it
ddl="CREATE TABLE away (id INT PRIMARY KEY, user_id INT NOT NULL, v VARCHAR(5) DEFAULT 'a''b', KEY by_user (user_id, v)) COMMENT 'far \\\\ off'"
px -e "$ddl"
plain -e "$ddl"
is_same "TABLES of a table on no default datasource" \
    "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, ROW_FORMAT, TABLE_COLLATION, TABLE_COMMENT, CREATE_TIME IS NOT NULL, TABLE_ROWS + 0 >= 0 FROM information_schema.TABLES WHERE TABLE_SCHEMA = '@S' AND TABLE_NAME LIKE 'away%' ORDER BY TABLE_NAME"
is_same "COLUMNS of a table on no default datasource" \
    "SELECT TABLE_SCHEMA = '@S', TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, COLUMN_TYPE, COLUMN_KEY, ORDINAL_POSITION * 2 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'away%' ORDER BY ORDINAL_POSITION"
is_same "STATISTICS of a table on no default datasource" \
    "SELECT INDEX_SCHEMA = '@S', TABLE_NAME, NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NULLABLE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '@S' AND TABLE_NAME LIKE 'away%' ORDER BY INDEX_NAME, SEQ_IN_INDEX"
is_same "views joined over a table on no default datasource" \
    "SELECT t.TABLE_NAME, COUNT(*), MAX(c.ORDINAL_POSITION) FROM information_schema.TABLES AS t JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = '@S' AND t.TABLE_NAME IN ('away', 'items') GROUP BY t.TABLE_NAME ORDER BY 1"
is_same "a join of two views" \
    "SELECT t.TABLE_NAME, COUNT(*) FROM information_schema.TABLES AS t JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = '@S' AND t.TABLE_NAME = 'items' GROUP BY t.TABLE_NAME"

px_finish proxy_ident_test
