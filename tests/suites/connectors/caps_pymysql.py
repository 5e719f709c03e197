#!/usr/bin/python3
"""caps_pymysql.py HOST PORT USER PASSWORD DB

PyMySQL against a server or dal-proxy (tests/suites/proxy_caps_test.sh
compares the two outputs): the affected rows of UPDATEs that leave rows
as they were, with CLIENT_FOUND_ROWS and without it, and the type of a
DOUBLE parameter's column (PyMySQL writes a float into the text).
"""
import sys

import pymysql
from pymysql.constants import CLIENT

host, port, user, password, db = sys.argv[1:6]


def connect(flags):
    return pymysql.connect(host=host, port=int(port), user=user, password=password,
                           database=db, client_flag=flags, autocommit=True)


def main():
    c = connect(0)
    cur = c.cursor()
    cur.execute("DROP TABLE IF EXISTS caps")
    cur.execute("CREATE TABLE caps (k INT NOT NULL PRIMARY KEY, v INT, j JSON, d DOUBLE)")
    cur.execute("INSERT INTO caps VALUES (1, 10, '[1]', 0.5), (2, 20, NULL, 1), "
                "(3, 30, '{}', 2), (4, 40, NULL, 3)")
    for flags, name in ((0, "affected"), (CLIENT.FOUND_ROWS, "found")):
        conn = connect(flags)
        cur = conn.cursor()
        for sql in ("UPDATE caps SET v = v", "UPDATE caps SET v = 10 WHERE k IN (1, 2)",
                    "UPDATE caps SET v = v WHERE k = 99",
                    "INSERT INTO caps (k, v) VALUES (5, 1), (6, 1)",
                    "DELETE FROM caps WHERE k > 4"):
            print(name, sql, cur.execute(sql))
        conn.close()
    c.close()


if __name__ == "__main__":
    main()
