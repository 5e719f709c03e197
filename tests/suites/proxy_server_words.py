#!/usr/bin/python3
"""proxy_server_words.py DIRECT_PORT PROXY_PORT -- what a server says, as
it says it, through dal-proxy: the same statements on the MariaDB server
directly and through the proxy (user root, schema test, PyMySQL), and
what the client sees compared -- the column names of a SELECT over
information_schema as the select list writes them, a server's syntax
error whole in a language whose words are longer than English, USE's
1049 in the session's lc_messages, and SHOW WARNINGS after a CALL that
failed: the server's diagnostics area of it."""
import sys

import pymysql

fails = 0


def conn(port, charset="utf8mb4"):
    return pymysql.connect(host="127.0.0.1", port=int(port), user="root", password="",
                           database="test", autocommit=True, charset=charset)


def run(c, sql):
    """(column names, rows) or ('error', number, message)."""
    cur = c.cursor()
    try:
        cur.execute(sql)
    except pymysql.MySQLError as e:
        return ("error",) + tuple(e.args)
    names = [d[0] for d in cur.description] if cur.description else None
    return names, cur.fetchall()


def same(what, direct, proxy, sqls):
    global fails
    for sql in sqls:
        a, b = run(direct, sql), run(proxy, sql)
        if a != b:
            fails += 1
            print(f"FAIL: {what}: {sql!r}\n  server: {a!r}\n  proxy:  {b!r}", file=sys.stderr)
    print(f"{what}: checked")


def main():
    direct, proxy = conn(sys.argv[1]), conn(sys.argv[2])
    setup = direct.cursor()
    for sql in ["DROP TABLE IF EXISTS t1", "CREATE TABLE t1 (a INT, b VARCHAR(3))",
                "DROP PROCEDURE IF EXISTS p1", "DROP PROCEDURE IF EXISTS p2",
                "CREATE PROCEDURE p2() BEGIN DROP TABLE no_such_table; END",
                "CREATE PROCEDURE p1() BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION "
                "RESIGNAL SET MESSAGE_TEXT = 'Oops in p1'; CALL p2(); END"]:
        setup.execute(sql)
    same("information_schema column names", direct, proxy, [
        "SELECT column_name, collation_name FROM information_schema.columns"
        " WHERE table_schema = 'test' AND table_name = 't1' ORDER BY ordinal_position",
        "SELECT Table_Name AS tn, column_NAME FROM information_schema.columns"
        " WHERE table_schema = DATABASE() ORDER BY 1, 2"])
    same("a server's words in ru_RU", direct, proxy, [
        "SET lc_messages = ru_RU",
        "SELECT '01234567890123456789012345678901234\\'",
        "SELECT * FROM no_such_table_with_a_long_name_0123456789012345678901234567890",
        "SET lc_messages = cs_CZ",
        "USE nonexistant",
        "SELECT DATABASE()",
        "SET lc_messages = en_US"])
    # in latin1 the Cyrillic letters are \\XXXX escapes: the message grows
    # to the most a server sends
    same("a server's words in ru_RU, sent as latin1", conn(sys.argv[1], "latin1"),
         conn(sys.argv[2], "latin1"), [
             "SET lc_messages = ru_RU",
             "SELECT '01234567890123456789012345678901234\\'",
             "SELECT * FROM no_such_table_with_a_long_name_0123456789012345678901234567890"])
    same("SHOW WARNINGS after a failed CALL", direct, proxy, [
        "CALL p1()", "SHOW WARNINGS", "SHOW COUNT(*) WARNINGS", "SHOW ERRORS",
        "SET max_error_count = 2", "CALL p1()", "SHOW WARNINGS", "SET max_error_count = DEFAULT",
        "SELECT * FROM no_such_table", "SHOW WARNINGS"])
    setup.execute("DROP PROCEDURE p1")
    setup.execute("DROP PROCEDURE p2")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
