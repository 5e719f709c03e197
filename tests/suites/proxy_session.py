"""proxy_session.py -- run by proxy_session_test.sh: a client's session
through dal-proxy against the same statements on a plain MariaDB.

Usage: proxy_session.py PART PROXY_PORT PLAIN_PORT PASSWORD

PART is "session" (SET's warnings, variables read back, processlist,
wait_timeout set by the session) or "idle" (the global wait_timeout and
interactive_timeout, which the script's caller lowered on the servers
before the proxy started).  Prints one line per failure and "N passed,
N failed" at the end; exits 1 on any failure.
"""
import socket
import sys
import threading
import time

import MySQLdb
import pymysql
from pymysql.constants import CLIENT

part, px_port, plain_port, password = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name}: {detail}")


def connect(px, db=True, **kw):
    """A PyMySQL connection to the proxy (px) or the plain server."""
    if px:
        return pymysql.connect(host="127.0.0.1", port=px_port, user="app", password=password,
                               database="shop" if db else None, autocommit=True, **kw)
    return pymysql.connect(host="127.0.0.1", port=plain_port, user="dal", password="dalpass",
                           database="plain" if db else None, autocommit=True, **kw)


def guarded(fn, px):
    """fn(conn_maker) for the proxy (px) or the plain server; an error it
    raises is its answer."""
    try:
        return fn(lambda **kw: connect(px, **kw))
    except Exception as e:  # the answer to compare, not a crash
        return ("error", repr(e))


def both(fn):
    """fn(conn_maker) for the plain server and the proxy: (plain, proxy)."""
    return guarded(fn, False), guarded(fn, True)


def same(name, fn):
    want, got = both(fn)
    check(name, want == got, f"the server gave {want!r}, the proxy {got!r}")


# ------------------------------------------------------------ SET's warnings
def set_warnings(make):
    c = make()
    cur = c.cursor()
    cur.execute("SET @@tmp_table_size = 1024")
    count = c._result.warning_count
    cur.execute("SHOW WARNINGS")
    rows = cur.fetchall()
    cur.execute("SHOW COUNT(*) WARNINGS")
    n = cur.fetchone()[0]
    cur.execute("SET SESSION max_heap_table_size = 1000, sort_buffer_size = 10")
    count2 = c._result.warning_count
    cur.execute("SHOW WARNINGS")
    rows2 = cur.fetchall()
    c.close()
    return count, rows, n, count2, rows2


def set_warnings_mysqldb(px):
    if px:
        c = MySQLdb.connect(host="127.0.0.1", port=px_port, user="app", password=password,
                            database="shop")
    else:
        c = MySQLdb.connect(host="127.0.0.1", port=plain_port, user="dal", password="dalpass",
                            database="plain")
    cur = c.cursor()
    cur.execute("SET max_sort_length = 1")
    n = c.warning_count()
    cur.execute("SHOW WARNINGS")
    rows = cur.fetchall()
    c.close()
    return n, rows


# ------------------------------------------------------- variables read back
READS = [
    "SELECT @@{v}, @@session.{v}",
    "SHOW SESSION VARIABLES LIKE '{v}'",
    "SELECT VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME = '{V}'",
]


def read_back(make, sets, var):
    """The reads of var after sets, each after a statement on another shard
    (user 1: orders on ds1; the plain server has its own orders)."""
    c = make()
    cur = c.cursor()
    out = []
    for s in sets:
        cur.execute(s)
    for r in READS:
        cur.execute("SELECT COUNT(*) FROM orders WHERE user_id = 1")
        cur.fetchall()
        cur.execute(r.format(v=var, V=var.upper()))
        out.append(cur.fetchall())
    c.close()
    return out


VARIABLES = [
    (["SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'"], "sql_mode"),
    (["SET time_zone = '+03:00'"], "time_zone"),
    (["SET max_join_size = 123456"], "max_join_size"),
    (["SET max_join_size = 123456"], "sql_big_selects"),
    # setting max_join_size again clears sql_big_selects set after it before
    (["SET max_join_size = 1000", "SET sql_big_selects = 1", "SET max_join_size = 2000"],
     "sql_big_selects"),
    (["SET @save = @@optimizer_switch", "SET optimizer_switch = 'index_merge=off'",
      "SET optimizer_switch = @save"], "optimizer_switch"),
    (["SET @tz = '-02:00'", "SET time_zone = @tz"], "time_zone"),
    (["SET div_precision_increment = @@max_sort_length DIV 100"], "div_precision_increment"),
    (["SET lc_time_names = LOWER('DE_de')"], "lc_time_names"),
    # a flag set's literal changes the flags it names in the value it finds
    (["SET optimizer_switch = 'index_merge=off'", "SET optimizer_switch = 'index_merge_union=off'"],
     "optimizer_switch"),
    (["SET @x = 1000", "SET tmp_table_size = @x"], "tmp_table_size"),
    (["SET sql_mode = 'ANSI'", "SET sql_mode = CONCAT(@@sql_mode, ',NO_ZERO_DATE')"], "sql_mode"),
    # SET NAMES sets the charsets assigned before it
    (["SET character_set_connection = cp932", "SET NAMES latin1"], "character_set_connection"),
    (["SET character_set_client = koi8r", "SET NAMES latin1 COLLATE latin1_bin"],
     "character_set_client"),
    (["SET NAMES latin1 COLLATE latin1_bin", "SET character_set_results = NULL"],
     "character_set_results"),
]


def names_refused(make):
    """SET NAMES with a collation the server refuses: its error, and the
    charset and collation still the ones before it."""
    c = make()
    cur = c.cursor()
    cur.execute("SET NAMES koi8r")
    out = []
    for bad in ["SET NAMES latin1 COLLATE bad", "SET NAMES utf8 COLLATE latin1_bin"]:
        try:
            cur.execute(bad)
            out.append("accepted")
        except pymysql.MySQLError as e:
            out.append(e.args)
        cur.execute("SELECT COUNT(*) FROM orders WHERE user_id = 1")
        cur.fetchall()
        cur.execute("SELECT @@character_set_client, @@character_set_connection, "
                    "@@collation_connection")
        out.append(cur.fetchall())
    c.close()
    return out


# ------------------------------------------------------------- process list
def host_of(c):
    addr = c._sock.getsockname()
    return f"{addr[0]}:{addr[1]}"


def processlist(make):
    """What SHOW [FULL] PROCESSLIST and information_schema.PROCESSLIST say of
    two clients (one with a schema, one without; one running SLEEP), with
    ids, users, hosts and schemas as roles."""
    a = make()
    b = make(db=False)
    ids = {a.thread_id(): "a", b.thread_id(): "b"}
    hosts = {host_of(a): "a", host_of(b): "b"}
    cur = b.cursor()
    cur.execute("SELECT CONNECTION_ID()")
    own = cur.fetchone()[0] == b.thread_id()
    out = {"own id": own}

    def rows(sql, cols):
        cur.execute(sql)
        res = []
        for r in cur.fetchall():
            r = dict(zip(cols, r))
            if r["Id"] not in ids:
                continue  # the server's other connections (the proxy's pool)
            r["Id"] = ids[r["Id"]]
            r["Host"] = hosts.get(r["Host"], r["Host"])
            r["User"] = "user"
            r["db"] = "db" if r["db"] is not None else None
            res.append(tuple(sorted(r.items())))
        return sorted(res)

    show_cols = ["Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress"]
    out["show"] = rows("SHOW PROCESSLIST", show_cols)
    out["show full"] = rows("SHOW FULL PROCESSLIST", show_cols)
    out["information_schema"] = rows(
        "SELECT ID, USER, HOST, DB, COMMAND, TIME, STATE, INFO, PROGRESS "
        "FROM information_schema.PROCESSLIST", show_cols)
    cur.execute("SELECT COMMAND, INFO FROM information_schema.PROCESSLIST p "
                "WHERE p.ID = CONNECTION_ID()")
    out["where own id"] = cur.fetchall()
    # a running statement: Command Query, Info its text
    t = threading.Thread(target=lambda: a.cursor().execute("SELECT SLEEP(2)"))
    t.start()
    time.sleep(0.7)
    cur.execute("SELECT ID, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = %s",
                (a.thread_id(),))
    out["running"] = [("a",) + tuple(r[1:]) for r in cur.fetchall()]
    t.join()
    # KILL takes the listed id (a server marks a Sleep just after its
    # client has the result: asked again for a while)
    for _ in range(20):
        cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
                    "AND COMMAND = 'Sleep' AND ID = %s", (a.thread_id(),))
        victim = cur.fetchone()
        if victim:
            break
        time.sleep(0.05)
    cur.execute(f"KILL {victim[0] if victim else 0}")
    time.sleep(0.3)
    try:
        a.cursor().execute("SELECT 1")
        out["killed"] = False
    except pymysql.err.MySQLError:
        out["killed"] = True
    b.close()
    return out


def long_info(make):
    """The Info of a statement longer than 64 KiB: its first 65535 bytes in
    information_schema.PROCESSLIST, as a server cuts it."""
    a = make()
    b = make()
    text = "SELECT SLEEP(1.5), '" + "x" * 70000 + "'"
    t = threading.Thread(target=lambda: a.cursor().execute(text))
    t.start()
    time.sleep(0.6)
    cur = b.cursor()
    cur.execute("SELECT LENGTH(INFO), LEFT(INFO, 20) FROM information_schema.PROCESSLIST "
                "WHERE ID = %s", (a.thread_id(),))
    out = cur.fetchall()
    t.join()
    a.close()
    b.close()
    return out


# ------------------------------------- DATABASE() and @@in_transaction
def no_database(make):
    """DATABASE() of a client that chose no schema: NULL, also in a
    statement reading information_schema."""
    c = make(db=False)
    cur = c.cursor()
    out = []
    for sql in ["SELECT DATABASE()",
                "SELECT COUNT(*), DATABASE() FROM information_schema.TABLES "
                "WHERE TABLE_SCHEMA = DATABASE()"]:
        cur.execute(sql)
        out.append(cur.fetchall())
    c.close()
    return out


def in_transaction(make):
    """@@in_transaction through BEGIN, a read, COMMIT, autocommit 0 and
    ROLLBACK: the client's transaction, whatever connection the servers
    use; with the column's type and name."""
    c = make()
    cur = c.cursor()
    out = []
    for sql in ["SELECT @@in_transaction", "BEGIN", "SELECT @@in_transaction",
                "SELECT @@session.in_transaction", "SELECT COUNT(*) FROM orders WHERE user_id = 1",
                "SELECT @@in_transaction", "COMMIT", "SELECT @@in_transaction",
                "START TRANSACTION", "SELECT COUNT(*) FROM orders", "SELECT @@in_transaction",
                "ROLLBACK", "SELECT @@in_transaction", "SET autocommit = 0",
                "SELECT @@in_transaction",
                "SELECT COUNT(*) FROM orders WHERE user_id = 2", "SELECT @@in_transaction",
                "INSERT INTO orders VALUES (99, 3)", "SELECT @@in_transaction", "ROLLBACK",
                "SELECT @@in_transaction", "SET autocommit = 1", "SELECT @@in_transaction"]:
        cur.execute(sql)
        out.append((sql, cur.fetchall(), [(d[0], d[1]) for d in cur.description or []]))
    c.close()
    return out


def no_table_in_transaction(make):
    """With autocommit 0, a statement naming no table opens no transaction
    (a server opens one at a table's read or write): @@in_transaction
    after each."""
    c = make()
    cur = c.cursor()
    out = []
    for sql in ["SET autocommit = 0", "SELECT 1", "SELECT @@in_transaction",
                "SELECT NOW() IS NOT NULL, @@version IS NOT NULL", "SELECT @@in_transaction",
                "SHOW VARIABLES LIKE 'autocommit'", "SELECT @@in_transaction",
                "SELECT 1 FROM DUAL WHERE 1 = 0", "SELECT @@in_transaction",
                "SELECT COUNT(*) > 0 FROM information_schema.`COLLATIONS`",
                "SELECT @@in_transaction", "SELECT @@autocommit", "SELECT @@in_transaction",
                "SELECT @@session.autocommit, @@version IS NOT NULL", "SELECT @@in_transaction", "SELECT COUNT(*) FROM orders", "SELECT @@in_transaction", "SELECT 2",
                "SELECT @@in_transaction", "ROLLBACK", "SELECT @@in_transaction",
                "SET autocommit = 1"]:
        cur.execute(sql)
        out.append((sql, cur.fetchall()))
    c.close()
    return out


def rollback_warnings(make, mode="single"):
    """ROLLBACK of a transaction that changed a MyISAM table: the server's
    warning 1196, in the OK's warning count and SHOW WARNINGS; through the
    proxy in transaction mode `mode` (dal_transaction_mode, which the
    server does not know)."""
    c = make()
    cur = c.cursor()
    out = []
    try:
        cur.execute(f"SET dal_transaction_mode = '{mode}'")
    except pymysql.err.MySQLError:
        pass  # the server's 1193 Unknown system variable
    for sql in ["DROP TABLE IF EXISTS rb_myisam", "CREATE TABLE rb_myisam (a INT) ENGINE=MyISAM",
                "BEGIN", "INSERT INTO rb_myisam VALUES (1)", "ROLLBACK", "SHOW WARNINGS",
                "SET autocommit = 0", "INSERT INTO rb_myisam VALUES (2)", "COMMIT",
                "SHOW WARNINGS", "SELECT COUNT(*) FROM rb_myisam", "SET autocommit = 1",
                "DROP TABLE rb_myisam"]:
        cur.execute(sql)
        out.append((sql, c._result.warning_count, cur.fetchall()))
    c.close()
    return out


# ------------------------------------------------ a NUL inside a string
def nul_in_strings(make):
    """Statements the proxy rewrites (information_schema views, the
    process list, SHOW VARIABLES with autocommit 0, SET, SHOW TABLES, SHOW
    COLUMNS / INDEX of a configured table) with a NUL byte
    inside a quoted string: the whole text is run, the NUL kept."""
    c = make()
    cur = c.cursor()
    out = []
    for sql in [
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'a\0b'",
        "SELECT TABLE_NAME, 'x\0y' FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'",
        "SELECT 'p\0q', COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
        "SET time_zone = '+01:00', @n = 'a\0b'",
        "SELECT @n, LENGTH(@n), @@time_zone",
        "SET autocommit = 0",
        "SHOW VARIABLES LIKE 'auto\0commit'",
        "SHOW VARIABLES WHERE Variable_name = 'autocommit' OR Value = 'a\0b'",
        "SHOW TABLES LIKE 'orde\0rs'",
        "SHOW COLUMNS FROM orders LIKE 'i\0d'",
        "SHOW FULL COLUMNS FROM orders WHERE Field = 'a\0b' OR Field = 'id'",
        "SHOW INDEX FROM orders WHERE Key_name = 'PRI\0MARY'",
    ]:
        try:
            cur.execute(sql)
            out.append(cur.fetchall())
        except pymysql.err.MySQLError as e:
            out.append(("error", e.args[0]))
    c.close()
    return out


# --------------------------------------------------------------- wait_timeout
def gone(c):
    """Whether c's server closed it: the error code of a statement, or 0."""
    try:
        c.cursor().execute("SELECT 1")
        return 0
    except pymysql.err.OperationalError as e:
        return e.args[0]


def session_timeout(make):
    c = make()
    cur = c.cursor()
    cur.execute("SET SESSION wait_timeout = 1")
    cur.execute("SELECT @@wait_timeout")
    v = cur.fetchone()[0]
    busy = make()
    busy.cursor().execute("SET wait_timeout = 1")
    # a statement longer than the timeout is not idleness
    busy.cursor().execute("SELECT SLEEP(1.6)")
    ok_after_sleep = gone(busy)
    time.sleep(3)
    return v, ok_after_sleep, gone(c), gone(busy)


def global_timeouts(make):
    """wait_timeout 2 and interactive_timeout 6 on the servers: an
    interactive client's @@wait_timeout is 6; a plain client is gone after
    4 s idle, the interactive one then still answers, and is gone 8 s
    later."""
    plain_c = make()
    inter = make(client_flag=CLIENT.INTERACTIVE)
    cur = inter.cursor()
    cur.execute("SELECT @@wait_timeout, @@session.wait_timeout")
    read = cur.fetchall()
    time.sleep(4)
    first = gone(plain_c), gone(inter)
    time.sleep(8)
    return read, first, gone(inter)


if part == "session":
    same("SET's warnings (PyMySQL)", set_warnings)
    want, got = set_warnings_mysqldb(False), set_warnings_mysqldb(True)
    check("SET's warnings (MySQLdb warning_count)", want == got,
          f"the server gave {want!r}, the proxy {got!r}")
    check("SET's warnings are there", want[0] > 0, repr(want))
    for sets, var in VARIABLES:
        same(f"{var} read back after {sets}", lambda make: read_back(make, sets, var))
    same("SET NAMES with a collation the server refuses", names_refused)
    same("the process list", processlist)
    same("a NUL inside a quoted string", nul_in_strings)
    same("DATABASE() without a schema", no_database)
    same("@@in_transaction", in_transaction)
    for mode in ["single", "multi", "xa"]:
        same(f"ROLLBACK's warnings ({mode})", lambda make: rollback_warnings(make, mode))
    same("@@in_transaction after a statement naming no table", no_table_in_transaction)
    same("a long statement's Info", long_info)
    same("SET wait_timeout = 1", session_timeout)
elif part == "idle":
    same("global wait_timeout and interactive_timeout", global_timeouts)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
