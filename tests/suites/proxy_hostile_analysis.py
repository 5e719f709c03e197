#!/usr/bin/env python3
"""proxy_hostile_analysis.py -- statements of thousands of parts on a
sharded table are routed, and give the server's rows (run by
proxy_hostile_analysis.sh):

    proxy_hostile_analysis.py PORT PASSWORD SERVER_PORT

The statements: N arms `SELECT * FROM orders WHERE user_id = k` joined by
UNION ALL (orders sharded by user_id; 2,500 arms are 122 KB, 10,000 are
490 KB), and a WITH list of common tables read by one UNION ALL (60: the
server refuses more than 64).
Routing must cost the proxy steps linear in the statement, on the
client's I/O thread (bench/route_scale.c measures it in instructions and
bench/README.md records them).  Judged by results: each
statement through dal-proxy must return the rows the server itself returns
for it on an unsharded copy of the table (shop_ref on SERVER_PORT).  FAIL:
lines on stderr, exit 1 if any."""
import os
import sys

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import login  # noqa: E402

PORT, PASSWORD, SERVER = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ROWS = [(i, i % 4, "note %d" % i) for i in range(1, 41)]
failed = False


def fail(msg):
    global failed
    failed = True
    print("FAIL: " + msg, file=sys.stderr, flush=True)


def union(n):
    return " UNION ALL ".join("SELECT * FROM orders WHERE user_id = %d" % (i % 2)
                              for i in range(n))


def with_list(n):
    ctes = ", ".join("c%d AS (SELECT * FROM orders WHERE user_id = %d)" % (i, i % 2)
                     for i in range(n))
    return "WITH %s %s" % (ctes, " UNION ALL ".join("SELECT * FROM c%d" % i
                                                   for i in range(n)))


def rows(conn, sql):
    with conn.cursor() as c:
        c.execute(sql)
        return sorted(c.fetchall())


def main():
    ref = pymysql.connect(host="127.0.0.1", port=SERVER, user="root", autocommit=True,
                          max_allowed_packet=64 << 20)
    with ref.cursor() as c:
        c.execute("CREATE DATABASE shop_ref")
        c.execute("CREATE TABLE shop_ref.orders (id INT PRIMARY KEY, user_id INT, "
                  "note VARCHAR(100))")
        c.executemany("INSERT INTO shop_ref.orders VALUES (%s, %s, %s)", ROWS)
    ref.select_db("shop_ref")
    conn = login(PORT, PASSWORD)
    with conn.cursor() as c:
        c.executemany("INSERT INTO orders VALUES (%s, %s, %s)", ROWS)
    for name, sql in (("2,500 UNION ALL arms", union(2500)),
                      ("10,000 UNION ALL arms", union(10000)),
                      ("a WITH list of 60 (the server takes 64)", with_list(60))):
        want = rows(ref, sql)
        try:
            got = rows(conn, sql)
        except pymysql.MySQLError as e:
            fail("%s (%d bytes): dal-proxy answered %s" % (name, len(sql), e))
            conn = login(PORT, PASSWORD)
            continue
        print("%s (%d bytes): %d rows from dal-proxy, %d from the server" %
              (name, len(sql), len(got), len(want)), flush=True)
        if got != want:
            fail("%s: dal-proxy's rows differ from the server's" % name)
    conn.close()
    ref.close()
    sys.exit(1 if failed else 0)


main()
