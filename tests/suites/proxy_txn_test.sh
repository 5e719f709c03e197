#!/usr/bin/env bash
# proxy_txn_test.sh -- transactions through dal-proxy as Python's DB-API
# drivers run them: PyMySQL with its defaults (autocommit off, so every
# statement is in a transaction) on a table sharded over 2 datasources in
# 4 physical tables, in transaction_mode single: a point read, a read of
# every node and a write on another node in one transaction, a second
# node to write on refused with the datasources named; and @@autocommit
# read back as on the server (compared with MariaDB directly).  Starts its
# own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

py=/usr/bin/python3
"$py" -c 'import pymysql' || { echo "FAIL: PyMySQL is not installed (tests/harness/deps.sh installs python3-pymysql)" >&2; exit 1; }
px_sharded_proxy acct 4 id

PX_PORT=$port PLAIN_PORT=${ports[0]} "$py" - <<'EOF' || fail "PyMySQL transactions"
import os, pymysql

px = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                     password=os.environ["PX_TEST_PASSWORD"], database="shop")
plain = pymysql.connect(host="127.0.0.1", port=int(os.environ["PLAIN_PORT"]), user="dal",
                        password="dalpass", database="plain")
failed = []

def check(what, cond, detail=""):
    if not cond:
        failed.append("%s %s" % (what, detail))

def read(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    fields = [(f.name, f.type_code, f.length, f.flags) for f in cur._result.fields]
    return cur.fetchall(), fields

# @@autocommit after the driver's SET autocommit = 0, as the server says it
for sql in ("SELECT @@autocommit, @@session.autocommit",
            "SELECT @@SESSION.autocommit AS ac, @@autocommit + 1, @@global.autocommit"):
    mine, theirs = read(px, sql), read(plain, sql)
    check(sql, mine == theirs, "through the proxy %r, directly %r" % (mine, theirs))
px.rollback()
plain.rollback()

cur = px.cursor()
px.autocommit(True)
cur.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT)")
cur.execute("INSERT INTO acct VALUES (0, 100), (1, 100), (2, 100), (3, 100)")
px.autocommit(False)
# ids 0 and 1 are on ds0, 2 and 3 on ds1: a point read on ds0, a read of
# both, a write on ds1, in one transaction
cur.execute("SELECT bal FROM acct WHERE id = 0")
check("point read", cur.fetchall() == ((100,),))
cur.execute("SELECT SUM(bal) FROM acct")
check("read of every node", cur.fetchall() == ((400,),))
cur.execute("UPDATE acct SET bal = bal + 5 WHERE id = 2")
cur.execute("SELECT SUM(bal) FROM acct")
check("read after the write", cur.fetchall() == ((405,),))
px.commit()
cur.execute("SELECT id, bal FROM acct ORDER BY id")
check("committed", cur.fetchall() == ((0, 100), (1, 100), (2, 105), (3, 100)))
px.commit()
# a second node to write on: refused, naming both; the transaction goes on
cur.execute("UPDATE acct SET bal = bal - 5 WHERE id = 3")
try:
    cur.execute("UPDATE acct SET bal = bal + 5 WHERE id = 1")
    check("second node to write on refused", False)
except pymysql.err.MySQLError as e:
    check("second node's error", "ds1" in e.args[1] and "ds0" in e.args[1], e.args)
try:
    cur.execute("UPDATE acct SET bal = 0")
    check("a write on every node refused", False)
except pymysql.err.MySQLError as e:
    check("every node's error", "2 datasources: ds0, ds1" in e.args[1], e.args)
px.rollback()
cur.execute("SELECT id, bal FROM acct ORDER BY id")
check("rolled back", cur.fetchall() == ((0, 100), (1, 100), (2, 105), (3, 100)))
px.rollback()
px.autocommit(True)
cur.execute("DROP TABLE acct")
if failed:
    raise SystemExit("\n".join(failed))
EOF

# A server whose global autocommit is 0 (this suite's own servers): dal's
# connections run with autocommit on all the same (their handshake's
# status says it is off), so a client's write with autocommit on is
# committed, as on a server, not left in an open transaction of a pooled
# connection.  A new proxy, whose connections are made after the change.
px_stop "${pids[-1]}" "$work/px.log"
unset 'pids[-1]'
for p in "${ports[@]}"; do mariadb -h127.0.0.1 -P"$p" -uroot -e 'SET GLOBAL autocommit = 0'; done
px_start "$work/px.ini" "$port"
PX_PORT=$port PLAIN_PORT=${ports[0]} "$py" - <<'EOF' || fail "a server with global autocommit 0"
import os, pymysql
px = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                     password=os.environ["PX_TEST_PASSWORD"], database="shop", autocommit=True)
cur = px.cursor()
cur.execute("CREATE TABLE ac_off (i INT) ENGINE=InnoDB")
cur.execute("INSERT INTO ac_off VALUES (1)")
cur.execute("SELECT @@autocommit")
ac = cur.fetchall()
px.close()
plain = pymysql.connect(host="127.0.0.1", port=int(os.environ["PLAIN_PORT"]), user="dal",
                        password="dalpass", database="shard_0", autocommit=True)
c2 = plain.cursor()
c2.execute("SELECT COUNT(*) FROM ac_off")
seen = c2.fetchall()
c2.execute("DROP TABLE ac_off")
if ac != ((1,),) or seen != ((1,),):
    raise SystemExit("global autocommit 0: @@autocommit %r through the proxy, rows committed %r"
                     % (ac, seen))
EOF

[ "$fails" -eq 0 ] || { echo "$fails proxy transaction checks failed" >&2; exit 1; }
echo "proxy transaction checks passed"
