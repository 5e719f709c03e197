#!/usr/bin/env bash
# proxy_safety_test.sh -- what a client's own bytes can make dal-proxy do,
# judged against MariaDB's answers to the same bytes (PyMySQL, the mariadb
# client, mariadb-dump): escaping after NO_BACKSLASH_ESCAPES, SETs inside
# executable comments, SET from a user variable, a dump's TIMESTAMPs from
# servers in another time zone, NUL bytes in statements, and LOAD DATA
# LOCAL reading the client's file and never the proxy host's.  Starts its
# own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain --db restored
port=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='app-s3cret'
{
    px_ini_sharded
    px_ini_table orders 4 user_id mod
    cat <<EOF
[proxy]
listen = 127.0.0.1:$port
database = shop
[proxy user app]
password = \${PX_TEST_PASSWORD}
EOF
} >"$work/px.ini"
# servers five hours west of UTC, as the run that found the dump's shift
for p in "${ports[@]}"; do
    mariadb -h127.0.0.1 -P"$p" -uroot -e "SET GLOBAL time_zone = '-05:00'" ||
        fail "time zone on the server on $p"
done
# started in $work, where a relative name finds its INI file
cd "$work"
px_start "$work/px.ini" "$port"
cd - >/dev/null

py=/usr/bin/python3
px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }

# ---- escaping follows the session's sql_mode (PyMySQL escapes by the
#      status flag NO_BACKSLASH_ESCAPES) ---------------------------------
PX_PORT=$port PLAIN_PORT=${ports[0]} "$py" - <<'EOF' || fail "NO_BACKSLASH_ESCAPES"
import os, pymysql
def conn(port, user, pw, db):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                           autocommit=True)
sides = {"proxy": conn(int(os.environ["PX_PORT"]), "app", "app-s3cret", "shop"),
         "server": conn(int(os.environ["PLAIN_PORT"]), "dal", "dalpass", "plain")}
sets = [["SET sql_mode = 'NO_BACKSLASH_ESCAPES'"],
        ["SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"],
        ["/*!40101 SET @@session.sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES' */"],
        ["SET @m = 'NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES'", "SET sql_mode = @m"],
        ["SET @m = 'NO_BACKSLASH_ESCAPES', sql_mode = @m"],
        ["SET sql_mode = 'NO_BACKSLASH_ESCAPES', @m = @@sql_mode", "SET @@sql_mode = @m"]]
bad = "' , 2 -- "
for s in sets:
    out = {}
    for side, c in sides.items():
        cur = c.cursor()
        cur.execute("SET sql_mode = DEFAULT")
        cur.execute("SET @m = NULL")
        failed = None
        for stmt in s:
            try:
                cur.execute(stmt)
            except pymysql.err.MySQLError as e:
                failed = e.args
        cur.execute("SELECT %s", (bad,))
        rows = cur.fetchall()
        cur.execute("SELECT @@sql_mode")
        out[side] = (len(cur.description), rows, cur.fetchall(),
                     bool(c.server_status & 512), failed)
    if out["proxy"] != out["server"]:
        raise SystemExit("%s: proxy %r, server %r" % (s, out["proxy"], out["server"]))
    if out["proxy"][0] != 1 or out["proxy"][1][0][0] != bad:
        raise SystemExit("%s: the quoted parameter escaped: %r" % (s, out["proxy"]))
# back to the default: backslashes escape again
for side, c in sides.items():
    cur = c.cursor()
    cur.execute("SET sql_mode = DEFAULT")
    cur.execute("SELECT %s", ("a\\' , 2 -- ",))
    if len(cur.description) != 1 or c.server_status & 512:
        raise SystemExit("%s: after SET sql_mode = DEFAULT" % side)
EOF

# ---- SET inside executable comments, and SET x = @saved, as mysqltest
#      and mariadb-dump write them ------------------------------------------
cat >"$work/sets.sql" <<'EOF'
/*!40103 SET TIME_ZONE='+00:00' */;
SELECT @@time_zone;
/*!40100 SET @@SQL_MODE='' */;
SELECT @@sql_mode;
/*M!100100 SET SESSION sql_mode = 'STRICT_ALL_TABLES' */;
SELECT @@sql_mode;
/*!99999 SET SESSION sql_mode = 'ANSI' */;
SELECT @@sql_mode;
SET @save = @@optimizer_switch;
SET optimizer_switch = 'index_merge=off';
SELECT @@optimizer_switch LIKE 'index_merge=off%';
SET optimizer_switch = @save;
SELECT @@optimizer_switch = @save;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
SELECT @@unique_checks, @OLD_UNIQUE_CHECKS;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
SELECT @@unique_checks;
SET @tz = '+03:00';
SET time_zone = @tz;
SELECT @@time_zone, @@session.time_zone;
SET @@session.time_zone = @nothing;
EOF
px --force <"$work/sets.sql" >"$work/sets_px.out" 2>&1 || true
plain --force <"$work/sets.sql" >"$work/sets_plain.out" 2>&1 || true
diff -u "$work/sets_plain.out" "$work/sets_px.out" >"$work/sets.diff" ||
    fail "SETs in executable comments or from variables: $(cat "$work/sets.diff")"

# ---- a dump through the proxy keeps TIMESTAMPs --------------------------
cat >"$work/ts.sql" <<'EOF'
DROP TABLE IF EXISTS events;
CREATE TABLE events (id INT PRIMARY KEY, at TIMESTAMP NULL, note VARCHAR(20));
SET time_zone = '+00:00';
INSERT INTO events VALUES (1, '2024-01-02 03:04:05', 'winter'), (2, '2024-07-08 09:10:11', 'summer'), (3, NULL, 'none');
EOF
px <"$work/ts.sql" || fail "the TIMESTAMP table through the proxy"
plain <"$work/ts.sql" || fail "the TIMESTAMP table on the plain server"
mariadb-dump -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" --skip-lock-tables shop events \
    >"$work/px.dump" 2>"$work/px.dump.err" || fail "mariadb-dump through the proxy: $(cat "$work/px.dump.err")"
mariadb-dump -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain events >"$work/plain.dump" ||
    fail "mariadb-dump of the plain server"
grep "INSERT INTO" "$work/px.dump" >"$work/px.rows" || fail "no rows in the dump through the proxy"
grep "INSERT INTO" "$work/plain.dump" >"$work/plain.rows" || true
diff -u "$work/plain.rows" "$work/px.rows" || fail "a dump through the proxy differs from a direct one"
mariadb -h127.0.0.1 -P"${ports[1]}" -uroot restored <"$work/px.dump" || fail "restoring the dump"
restored=$(mariadb -h127.0.0.1 -P"${ports[1]}" -uroot restored -N -e \
    "SELECT id, UNIX_TIMESTAMP(at) FROM events ORDER BY id")
expect=$(plain -N -e "SELECT id, UNIX_TIMESTAMP(at) FROM events ORDER BY id")
[ "$restored" = "$expect" ] || fail "restored TIMESTAMPs moved: $restored, not $expect"

# ---- NUL bytes: part of a quoted string, a syntax error outside ---------
PX_PORT=$port PLAIN_PORT=${ports[0]} "$py" - <<'EOF' || fail "NUL bytes in statements"
import os, pymysql
def conn(port, user, pw, db):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                           autocommit=True)
sides = {"proxy": conn(int(os.environ["PX_PORT"]), "app", "app-s3cret", "shop"),
         "server": conn(int(os.environ["PLAIN_PORT"]), "dal", "dalpass", "plain")}
def run(c, sql):
    cur = c.cursor()
    try:
        cur.execute(sql)
        return ("ok", cur.fetchall() if cur.description else cur.rowcount)
    except pymysql.err.MySQLError as e:
        if os.environ.get("DAL_DEBUG"):
            print(sql, e.args)
        return ("error", e.args[0])
script = [
    "DROP TABLE IF EXISTS orders",
    "CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL, note VARBINARY(20))",
    "INSERT INTO orders VALUES (1, 1, 'one'), (2, 2, 'two'), (3, 3, 'three')",
    # MariaDB Connector/J escapes a 0 byte as a backslash and the byte
    "INSERT INTO orders VALUES (4, 4, 'a\\\0b'), (5, 5, 'c\0d')",
    "INSERT INTO orders (id, user_id, note) VALUES (6, 6, \"e\0\0f\")",
    "SELECT id, HEX(note) FROM orders WHERE note LIKE '%\0%' ORDER BY id",
    "SELECT id, HEX(note) FROM orders WHERE user_id = 4 AND note = 'a\0b'",
    "SELECT `id` FROM orders WHERE user_id = 5 /* a comment\0 */",
    "DELETE FROM orders\0 WHERE id = 1",
    "DELETE FROM orders WHERE id = 1\0",  # a final NUL ends it, as the server reads it
    "\0SELECT 1",
    "SELECT 1\0; DELETE FROM orders",
    "KILL 1\0",
    "SET sql_mode = ''\0",
    "SELECT COUNT(*) FROM orders",
]
out = {side: [run(c, q) for q in script] for side, c in sides.items()}
if out["proxy"] != out["server"]:
    raise SystemExit("\n".join("%r: proxy %r, server %r" % (q, a, b)
                     for q, a, b in zip(script, out["proxy"], out["server"]) if a != b))
# only the statement a final NUL ends deleted a row
if out["proxy"][-1] != ("ok", ((5,),)):
    raise SystemExit("rows were lost: %r" % (out["proxy"][-1],))
EOF

# ---- executable comments in a multi-statement text, and the handshake's
#      collation, as on a server ---------------------------------------------
PX_PORT=$port PLAIN_PORT=${ports[0]} "$py" - <<'EOF' || fail "multi-statement executable comments or the handshake's collation"
import os, pymysql, pymysql.connections, pymysql.charset
from pymysql.constants import CLIENT
def conn(port, user, pw, db, **kw):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                           autocommit=True, **kw)
def sides(**kw):
    return {"proxy": conn(int(os.environ["PX_PORT"]), "app", "app-s3cret", "shop", **kw),
            "server": conn(int(os.environ["PLAIN_PORT"]), "dal", "dalpass", "plain", **kw)}
def results(c, sql):
    cur = c.cursor()
    out = []
    try:
        cur.execute(sql)
        while True:
            out.append(cur.fetchall() if cur.description else cur.rowcount)
            if not cur.nextset():
                break
    except pymysql.err.MySQLError as e:
        out.append(("error", e.args[0]))
    return out
texts = ["SELECT 1; /*!40101 SET @b=2 */; SELECT @b",
         "/*!40101 SET @c=3 */; /*M!100100 SET @d=4 */; SELECT @c, @d",
         "/*!40101 SET sql_mode='ANSI_QUOTES' */; SELECT @@sql_mode; SET sql_mode=DEFAULT"]
for t in texts:
    got = {side: results(c, t) for side, c in sides(client_flag=CLIENT.MULTI_STATEMENTS).items()}
    if got["proxy"] != got["server"]:
        raise SystemExit("%r: proxy %r, server %r" % (t, got["proxy"], got["server"]))
# a collation that is not its character set's default, as mysql2 asks
for cid in (224, 46, 255):
    real = pymysql.connections.charset_by_name
    pymysql.connections.charset_by_name = lambda name, cid=cid: pymysql.charset.charset_by_id(
        cid if cid in pymysql.charset._charsets._by_id else 45) if cid != 255 else \
        pymysql.charset.Charset(255, "utf8mb4", "utf8mb4_0900_ai_ci", "")
    try:
        got = {}
        for side, c in sides().items():
            cur = c.cursor()
            cur.execute("SELECT 'ß' = 'ss', 'a' = 'A', @@collation_connection")
            got[side] = cur.fetchall()
    finally:
        pymysql.connections.charset_by_name = real
    if got["proxy"] != got["server"]:
        raise SystemExit("collation %d: proxy %r, server %r" % (cid, got["proxy"], got["server"]))
EOF

# ---- LOAD DATA LOCAL reads the client's file, never the proxy host's -----
mkdir -p "$work/client"
printf '1,one\n2,two\n3,three\n' >"$work/client/data.csv"
printf 'not,the proxy\n' >"$work/px_side.csv"
cat >"$work/load.sql" <<'EOF'
DROP TABLE IF EXISTS loaded;
CREATE TABLE loaded (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(200));
LOAD DATA LOCAL INFILE 'data.csv' INTO TABLE loaded FIELDS TERMINATED BY ',';
SELECT * FROM loaded ORDER BY id;
EOF
(cd "$work/client" && px --local-infile=1 <"$work/load.sql") >"$work/load_px.out" 2>&1 ||
    fail "LOAD DATA LOCAL with --local-infile through the proxy: $(cat "$work/load_px.out")"
(cd "$work/client" && plain --local-infile=1 <"$work/load.sql") >"$work/load_plain.out" 2>&1 ||
    fail "LOAD DATA LOCAL on the plain server: $(cat "$work/load_plain.out")"
diff -u "$work/load_plain.out" "$work/load_px.out" || fail "LOAD DATA LOCAL: proxy and server differ"
# a file of many packets (about 6 MB) arrives whole
seq 1 100000 | sed 's/$/,a name of some length to make the file big enough/' >"$work/client/big.csv"
out=$(cd "$work/client" && px --local-infile=1 -N -e "DELETE FROM loaded;
    LOAD DATA LOCAL INFILE 'big.csv' INTO TABLE loaded FIELDS TERMINATED BY ',';
    SELECT COUNT(*), SUM(id) FROM loaded" 2>&1) || fail "a big LOAD DATA LOCAL: $out"
[ "$out" = "$(printf '100000\t5000050000')" ] || fail "a big LOAD DATA LOCAL loaded: $out"
# without --local-infile: refused as the server refuses it
(cd "$work/client" && px --local-infile=0 --force <"$work/load.sql") >"$work/noload_px.out" 2>&1 || true
(cd "$work/client" && plain --local-infile=0 --force <"$work/load.sql") >"$work/noload_plain.out" 2>&1 || true
diff -u "$work/noload_plain.out" "$work/noload_px.out" ||
    fail "LOAD DATA LOCAL without --local-infile: proxy and server differ"
grep -q 4166 "$work/noload_px.out" || fail "no 4166 without --local-infile: $(cat "$work/noload_px.out")"
# names relative to the client's directory, which has no such files, and
# to the proxy's, which has: the client's (none) are what is read.  (An
# absolute name is the client's file too: the client runs on this host.)
for f in px.ini px_side.csv; do
    out=$(cd "$work/client" && px --local-infile=1 -N -e "DELETE FROM loaded;
        LOAD DATA LOCAL INFILE '$f' INTO TABLE loaded (name); SELECT name FROM loaded" 2>&1) || true
    case $out in *proxy*|*password*|*listen*) fail "LOAD DATA LOCAL '$f' read the proxy's file: $out" ;; esac
done
PX_PORT=$port PX_INI=$work/px.ini "$py" - <<'EOF' || fail "LOAD DATA LOCAL from a client without local files"
import os, pymysql
c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                    password="app-s3cret", database="shop")
cur = c.cursor()
cur.execute("DELETE FROM loaded")
try:
    cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE loaded (name)", (os.environ["PX_INI"],))
    raise SystemExit("LOAD DATA LOCAL ran for a client that has no local files")
except pymysql.err.MySQLError as e:
    if e.args[0] != 4166:
        raise SystemExit("expected 4166, got %r" % (e.args,))
cur.execute("SELECT COUNT(*) FROM loaded WHERE name LIKE '%%password%%' OR name LIKE '%%listen%%'")
if cur.fetchone()[0] != 0:
    raise SystemExit("the proxy's INI file was loaded")
EOF

px_stop "${pids[0]}" "$work/px.log"
pids=()
px_finish proxy_safety_test
