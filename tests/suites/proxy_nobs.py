"""proxy_nobs.py -- run by proxy_nobs_test.sh: string literals under the
sql_mode NO_BACKSLASH_ESCAPES through dal-proxy, against the same
statements on a plain MariaDB.

Usage: proxy_nobs.py HOW PROXY_PORT PLAIN_PORT PASSWORD

HOW is how the session comes to NO_BACKSLASH_ESCAPES: "set" (SET
sql_mode = 'NO_BACKSLASH_ESCAPES'), "concat" (SET SESSION sql_mode =
CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')) or "global" (the servers'
global sql_mode has it: the caller set it before the proxy connected).
A multi-statement text whose `;` follows a string ending in a backslash
is split where the server splits it.
In that mode a backslash is an ordinary byte in a string, so `'a\\'` is
the string a-backslash; dal must read every statement as the server does
(where a string ends decides what is SQL, and so where a statement
routes), write the values it quotes as the server reads them, and go back
to backslash escapes with the mode.  Table t is sharded by id behind the
proxy, u is not; the plain server has both as plain tables.  Prints one
line per failure and "N passed, N failed" at the end; exits 1 on any
failure.
"""
import struct
import sys

import pymysql
from pymysql.constants import CLIENT

how, px_port, plain_port, password = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

ENTER = {
    "set": ["SET sql_mode = 'NO_BACKSLASH_ESCAPES'"],
    "concat": ["SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"],
    "global": [],
}[how]
LEAVE = "SET sql_mode = REPLACE(@@sql_mode, 'NO_BACKSLASH_ESCAPES', '')"
# values with backslashes and quotes, as Python strings (the bytes stored)
VALUES = ["a\\", "it's", "\\'", "x\\'y''z\\\\", "\\"]


def connect(px, **kw):
    """A PyMySQL connection to the proxy (px) or the plain server, in the
    mode under test."""
    if px:
        c = pymysql.connect(host="127.0.0.1", port=px_port, user="app", password=password,
                            database="shop", autocommit=True, **kw)
    else:
        c = pymysql.connect(host="127.0.0.1", port=plain_port, user="dal", password="dalpass",
                            database="plain", autocommit=True, **kw)
    for sql in ENTER:
        c.cursor().execute(sql)
    return c


def answer(cur, sql, args=None):
    """sql's rows (sorted: shards answer in any order) or its error."""
    try:
        cur.execute(sql, args)
        return sorted(cur.fetchall(), key=repr)
    except pymysql.MySQLError as e:
        return ("error", e.args[0])


def script(px):
    """The statements of one session; what each gave, by name."""
    c = connect(px)
    cur = c.cursor()
    out = [("status says no backslash escapes",
            bool(c.server_status & 512))]
    q = [
        ("a backslash ends nothing", "SELECT 'a\\' AS x"),
        ("two strings", "SELECT 'a\\', 'b'"),
        ("a doubled quote after a backslash", "SELECT 'a\\''b' AS x"),
        ("a double-quoted string", 'SELECT "a\\" AS x'),
        ("the routing case: id 5 or id 7",
         "SELECT id, name FROM t WHERE id = 5 AND name = 'x\\' OR id = 7 -- '"),
        ("a backslash-ended string in IN",
         "SELECT id FROM t WHERE id IN (5, 7) AND name IN ('five\\', 'seven')"),
        ("a backslash-ended string, unsharded", "SELECT id FROM u WHERE name = 'plain\\'"),
        ("an executable comment after the string",
         "SELECT 'x\\' /*!100000 , id */ FROM t WHERE id = 7"),
    ]
    for name, sql in q:
        out.append((name, answer(cur, sql)))
    # values written by the client, as PyMySQL escapes them for the mode
    # the status flag announces, and written as literals in the statement
    for i, v in enumerate(VALUES):
        out.append(("insert t %d" % i, answer(cur, "INSERT INTO t (id, name) VALUES (%s, %s)",
                                              (100 + i, v))))
        out.append(("insert u %d" % i, answer(cur, "INSERT INTO u (id, name) VALUES (%s, %s)",
                                              (100 + i, v))))
    out.append(("a multi-row insert over shards",
                answer(cur, "INSERT INTO t (id, name) VALUES (200, 'p\\'), (201, 'q''r\\'), "
                            "(202, '\\')")))
    out.append(("the values read back", answer(cur, "SELECT id, name FROM t WHERE id >= 100")))
    out.append(("the values read back, unsharded",
                answer(cur, "SELECT id, name FROM u WHERE id >= 100")))
    out.append(("the values found by value",
                answer(cur, "SELECT id FROM t WHERE name = %s", ("x\\'y''z\\\\",))))
    out.append(("prepared", prepared(c)))
    out.append(("prepared values read back",
                answer(cur, "SELECT id, name FROM t WHERE id >= 300")))
    # back to backslash escapes, in the same session
    out.append(("leave the mode", answer(cur, LEAVE)))
    out.append(("status says backslash escapes", bool(c.server_status & 512)))
    out.append(("a backslash escapes again", answer(cur, "SELECT 'a\\'b' AS x")))
    out.append(("the routing case, escaping",
                answer(cur, "SELECT id FROM t WHERE id = 5 AND name = 'x\\' OR id = 7 -- '")))
    out.append(("an insert, escaping", answer(cur, "INSERT INTO t (id, name) VALUES (%s, %s)",
                                               (400, "it's \\ \\'"))))
    out.append(("read back, escaping", answer(cur, "SELECT name FROM t WHERE id = 400")))
    cur.execute("DELETE FROM t WHERE id >= 100")
    cur.execute("DELETE FROM u WHERE id >= 100")
    c.close()
    return out


def lenenc_str(b):
    assert len(b) < 251
    return bytes([len(b)]) + b


def prepared(c):
    """COM_STMT_PREPARE and COM_STMT_EXECUTE of an INSERT over shards with
    literals in its text and a bound string parameter with a quote and
    backslashes: OK or the error."""
    try:
        sql = "INSERT INTO t (id, name) VALUES (300, 'p\\'), (301, ?)"
        c._execute_command(0x16, sql)
        ok = c._read_packet().get_all_data()
        if ok[0] != 0:
            return ("prepare error", ok)
        stmt, ncols, nparams = struct.unpack("<IHH", ok[1:9])
        deprecate_eof = c.server_capabilities & CLIENT.DEPRECATE_EOF and \
            c.client_flag & CLIENT.DEPRECATE_EOF
        for n in (nparams, ncols):
            for _ in range(n + (1 if n and not deprecate_eof else 0)):
                c._read_packet()
        value = "q'r\\".encode()
        # flags 0, one iteration; NULL bitmap, new-params-bound, the type
        # (VAR_STRING), the value
        body = struct.pack("<IBI", stmt, 0, 1) + b"\x00" + b"\x01" + struct.pack("<H", 253) + \
            lenenc_str(value)
        c._execute_command(0x17, body)
        res = c._read_packet().get_all_data()
        c._execute_command(0x19, struct.pack("<I", stmt))  # COM_STMT_CLOSE: no answer
        return "ok" if res[0] == 0 else ("execute error", res[3:9])
    except pymysql.MySQLError as e:
        return ("error", e.args[0])


def reset(px):
    """COM_RESET_CONNECTION in the mode: the session goes back to the
    servers' global sql_mode, and reads its strings as that says."""
    c = connect(px)
    c._execute_command(0x1F, b"")  # COM_RESET_CONNECTION
    c._read_ok_packet()
    cur = c.cursor()
    got = [bool(c.server_status & 512), answer(cur, "SELECT 'a\\' AS x"),
           answer(cur, "SELECT 'a\\'b' AS x"), answer(cur, "SELECT @@sql_mode LIKE '%BACKSLASH%'")]
    c.close()
    return got


def multi(px):
    """A multi-statement text with `;` right after a string that ends in a
    backslash: each statement's rows."""
    c = connect(px, client_flag=CLIENT.MULTI_STATEMENTS)
    cur = c.cursor()
    got = []
    try:
        cur.execute("SELECT 'a\\' AS x; SELECT id FROM t WHERE id = 7; SELECT 'b\\'")
        while True:
            got.append(cur.fetchall())
            if not cur.nextset():
                break
    except pymysql.MySQLError as e:
        got.append(("error", e.args[0]))
    c.close()
    return got


cases = [(name, w, g) for (name, w), (_, g) in zip(script(False), script(True))]
cases.append(("after COM_RESET_CONNECTION", reset(False), reset(True)))
cases.append(("multi-statement text", multi(False), multi(True)))
wrong = [c for c in cases if c[1] != c[2]]
for name, w, g in wrong:
    print(f"FAIL [{how}]: {name}: the server gave {w!r}, the proxy {g!r}")
print(f"[{how}] {len(cases) - len(wrong)} passed, {len(wrong)} failed")
sys.exit(1 if wrong else 0)
