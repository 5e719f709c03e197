#!/usr/bin/python3
"""mysqldb_smoke.py HOST PORT USER PASSWORD DB [--gen]

MySQLdb (Debian's python3-mysqldb, over libmariadb) against a server or
dal-proxy: the table of types.json written with parameters and read back
with its column descriptions, NULLs, autocommit off with a rollback and a
commit, errors (number and SQLSTATE).  With --gen: an INSERT into `gen`
without its id_column, whose insert id must be the id stored.  Prints what
it read: tests/suites/connectors_test.sh compares a run through dal-proxy with one
on a plain server.  (MySQLdb has no server-side prepared statements: its
parameters are escaped into the text.)
"""
import json
import os
import sys

import MySQLdb

host, port, user, password, db = sys.argv[1:6]
spec = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "connectors", "types.json")))
conn = MySQLdb.connect(host=host, port=int(port), user=user, password=password,
                       database=db, charset="utf8mb4")
conn.autocommit(True)
cur = conn.cursor()


def show(title, sql, args=None):
    """Run a query; print its column descriptions and rows."""
    cur.execute(sql, args)
    print(title, [d for d in cur.description])
    for row in cur.fetchall():
        print("  ", repr(row))


def error(sql, args=None):
    """Run a statement that must fail; print its number and SQLSTATE."""
    try:
        cur.execute(sql, args)
        print("no error:", sql)
    except MySQLdb.Error as e:
        print("error", e.args[0], conn.sqlstate())


cur.execute("SET time_zone = '+00:00'")
cur.execute("DROP TABLE IF EXISTS typed")
cur.execute(spec["create"])
cols = spec["columns"]
insert = "INSERT INTO typed (%s) VALUES (%s)" % (", ".join(cols), ", ".join(["%s"] * len(cols)))
for row in spec["rows"]:
    cur.execute(insert, row)
    print("insert", cur.rowcount, conn.warning_count())
show("all", "SELECT * FROM typed ORDER BY k")
show("one", "SELECT * FROM typed WHERE k = %s", (1,))
show("expr", "SELECT k, bu DIV 3, de * 2, CONCAT(vc, '!'), HEX(bl), bt + 0, JSON_EXTRACT(j, '$.a[1]'), "
     "ts + 0, e + 0, st + 0 FROM typed WHERE k IN (%s, %s) ORDER BY k", (1, 2))

# a transaction: autocommit off, a rollback, then a commit
conn.autocommit(False)
cur.execute("INSERT INTO typed (k, vc) VALUES (%s, %s)", (100, "rolled back"))
conn.rollback()
cur.execute("INSERT INTO typed (k, vc) VALUES (%s, %s)", (101, "committed"))
cur.execute("UPDATE typed SET i = 42 WHERE k = %s", (101,))
conn.commit()
conn.autocommit(True)
show("after transactions", "SELECT k, vc, i FROM typed WHERE k >= 100 ORDER BY k")

error("SELECT * FROM no_such_table")
error("INSERT INTO typed (k) VALUES (%s)", (1,))
error("SELECT nonsense FROM typed")
error("SELEKT 1")

if "--gen" in sys.argv:
    # dal generates the id; the insert id is that id
    cur.execute("INSERT INTO gen (user_id, note) VALUES (%s, %s)", (7, "python"))
    got = cur.lastrowid
    cur.execute("SELECT id FROM gen WHERE user_id = %s AND note = %s", (7, "python"))
    stored = cur.fetchall()
    assert got and stored == ((got,),), (got, stored)
    print("generated id returned as the insert id")
conn.close()
print("done")
