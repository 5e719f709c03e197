#!/usr/bin/python3
"""proxy_schemas.py -- driven by proxy_schemas_test.sh: dal-proxy serving two
logical databases ([proxy] database = sales and [schema hr]) to PyMySQL,
each statement judged against the same data held plainly by MariaDB (the
schema ref).  Prints one line per check; exits 1 on the first difference.

Usage: proxy_schemas.py PROXY_PORT PASSWORD SERVER0_PORT SERVER1_PORT
"""
import sys

import pymysql

px_port, pw, m0, m1 = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fails = 0


def proxy(db=None):
    return pymysql.connect(host="127.0.0.1", port=px_port, user="app", password=pw,
                           database=db, autocommit=True)


def server(port, db):
    return pymysql.connect(host="127.0.0.1", port=port, user="dal", password="dalpass",
                           database=db, autocommit=True)


def rows(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]


def check(what, got, want):
    global fails
    if got != want:
        print("FAIL: %s: got %r, expected %r" % (what, got, want))
        fails += 1
    else:
        print("ok: %s" % what)


def error_of(conn, sql):
    try:
        rows(conn, sql)
    except pymysql.MySQLError as e:
        return e.args[0], str(e.args[1])
    return None


ref = server(m0, "ref")
for t, ddl in (("orders", "id INT PRIMARY KEY, item VARCHAR(20)"),
               ("notes", "id INT PRIMARY KEY, txt VARCHAR(20)"),
               ("staff", "id INT PRIMARY KEY, name VARCHAR(20)"),
               ("memo", "id INT PRIMARY KEY, txt VARCHAR(20)"),
               ("pay", "emp INT PRIMARY KEY, amount INT")):
    rows(ref, "CREATE TABLE %s (%s)" % (t, ddl))

DATA = {
    "orders": "(1,'apple'),(2,'pear'),(3,'plum')",
    "notes": "(1,'sales note')",
    "staff": "(1,'ann'),(2,'bob')",
    "memo": "(7,'hr memo'),(8,'second')",
    "pay": "(1,100),(2,200),(3,300),(4,400),(5,500),(6,600)",
}
for t, v in DATA.items():
    rows(ref, "INSERT INTO %s VALUES %s" % (t, v))

# the handshake's database: each schema's tables are created and filled
# through the proxy, in that schema, by unqualified names
sales = proxy("sales")
check("handshake database sales: DATABASE()", rows(sales, "SELECT DATABASE()"), [("sales",)])
rows(sales, "CREATE TABLE orders (id INT PRIMARY KEY, item VARCHAR(20))")
rows(sales, "CREATE TABLE notes (id INT PRIMARY KEY, txt VARCHAR(20))")
rows(sales, "INSERT INTO orders VALUES " + DATA["orders"])
rows(sales, "INSERT INTO notes VALUES " + DATA["notes"])

hr = proxy("hr")
check("handshake database hr: DATABASE()", rows(hr, "SELECT DATABASE()"), [("hr",)])
rows(hr, "CREATE TABLE staff (id INT PRIMARY KEY, name VARCHAR(20))")
rows(hr, "CREATE TABLE memo (id INT PRIMARY KEY, txt VARCHAR(20))")
rows(hr, "CREATE TABLE pay (emp INT PRIMARY KEY, amount INT)")  # every physical table
rows(hr, "INSERT INTO staff VALUES " + DATA["staff"])
rows(hr, "INSERT INTO memo VALUES " + DATA["memo"])
rows(hr, "INSERT INTO pay VALUES " + DATA["pay"])

# where the rows went: hr's tables on the second server, pay by emp % 4
s1hr = server(m1, "hr")
check("hr.staff is on hr's datasource", rows(s1hr, "SELECT * FROM staff ORDER BY id"),
      rows(ref, "SELECT * FROM staff ORDER BY id"))
check("hr.memo (no [table]) is on hr's default datasource",
      rows(s1hr, "SELECT * FROM memo ORDER BY id"), rows(ref, "SELECT * FROM memo ORDER BY id"))
check("sales has no staff table", error_of(server(m0, "sales"), "SELECT * FROM staff")[0], 1146)
check("pay_3 holds emp % 4 = 3", rows(server(m1, "pay_1"), "SELECT emp FROM pay_3 ORDER BY emp"),
      [(3,)])

# each schema's statements, as MariaDB answers them on the same data
STATEMENTS = {
    "sales": ["SELECT * FROM orders ORDER BY id", "SELECT * FROM notes ORDER BY id",
              "SELECT COUNT(*), MAX(item) FROM orders",
              "SELECT o.item, n.txt FROM orders o JOIN notes n ON n.id = o.id"],
    "hr": ["SELECT * FROM staff ORDER BY id", "SELECT * FROM memo ORDER BY id",
           "SELECT emp, amount FROM pay ORDER BY emp", "SELECT COUNT(*), SUM(amount) FROM pay",
           "SELECT amount FROM pay WHERE emp = 5", "SELECT s.name, m.txt FROM staff s JOIN memo m"
           " ORDER BY s.id, m.id"],
}
one = proxy()
for db in ("sales", "hr", "sales"):
    rows(one, "USE " + db)
    check("USE %s: DATABASE()" % db, rows(one, "SELECT DATABASE()"), [(db,)])
    for sql in STATEMENTS[db]:
        check("%s: %s" % (db, sql), rows(one, sql), rows(ref, sql))
for db in ("hr", "sales"):
    one.select_db(db)  # COM_INIT_DB
    check("COM_INIT_DB %s" % db, rows(one, STATEMENTS[db][0]), rows(ref, STATEMENTS[db][0]))

check("SHOW DATABASES", rows(one, "SHOW DATABASES"), [("hr",), ("sales",)])
check("SHOW TABLES in hr", rows(hr, "SHOW TABLES"), [("memo",), ("pay",), ("staff",)])
check("SHOW TABLES in sales", rows(sales, "SHOW TABLES"), [("notes",), ("orders",)])
cur = hr.cursor()
cur.execute("SHOW TABLES")
check("SHOW TABLES column in hr", [d[0] for d in cur.description], ["Tables_in_hr"])

# never silently wrong: another schema's table, a schema not configured
e = error_of(sales, "SELECT * FROM staff")
check("sales refuses hr's table staff", e is not None and "[schema hr]" in e[1], True)
e = error_of(hr, "SELECT * FROM orders")
check("hr refuses the top level's table orders", e is not None and "top level" in e[1], True)
# another logical database's tables by qualified name, as a server reads
# db.table from any schema
for conn, sql, plain in (
        (hr, "SELECT * FROM sales.orders ORDER BY id", "SELECT * FROM orders ORDER BY id"),
        (hr, "SELECT * FROM sales.notes ORDER BY id", "SELECT * FROM notes ORDER BY id"),
        (sales, "SELECT * FROM hr.memo ORDER BY id", "SELECT * FROM memo ORDER BY id"),
        (sales, "SELECT * FROM hr.staff ORDER BY id", "SELECT * FROM staff ORDER BY id"),
        (sales, "SELECT emp, amount FROM hr.pay WHERE emp IN (2, 5) ORDER BY emp",
         "SELECT emp, amount FROM pay WHERE emp IN (2, 5) ORDER BY emp"),
        (sales, "SELECT COUNT(*), SUM(amount) FROM `hr`.pay", "SELECT COUNT(*), SUM(amount) FROM pay")):
    check("%s: %s" % ("hr" if conn is hr else "sales", sql), rows(conn, sql), rows(ref, plain))
check("DATABASE() after hr.memo", rows(sales, "SELECT DATABASE()"), [("sales",)])
e = error_of(sales, "SELECT * FROM hr.staff s JOIN orders o ON o.id = s.id")
check("sales refuses hr.staff joined with orders", e is not None and
      "dal routes a statement within one logical database" in e[1], True)
check("SHOW TABLES FROM hr in sales", rows(sales, "SHOW TABLES FROM hr"),
      [("memo",), ("pay",), ("staff",)])
check("SHOW TABLES IN sales in hr", rows(hr, "SHOW TABLES IN sales LIKE 'o%'"), [("orders",)])
cur = sales.cursor()
cur.execute("SHOW TABLES FROM hr")
check("SHOW TABLES FROM hr column", [d[0] for d in cur.description], ["Tables_in_hr"])
check("DATABASE() after SHOW TABLES FROM hr", rows(sales, "SELECT DATABASE()"), [("sales",)])
check("sales' tables after SHOW TABLES FROM hr", rows(sales, "SELECT * FROM orders ORDER BY id"),
      rows(ref, "SELECT * FROM orders ORDER BY id"))
check("hr: hr.staff", rows(hr, "SELECT * FROM hr.staff ORDER BY id"),
      rows(ref, "SELECT * FROM staff ORDER BY id"))
check("sales: sales.orders", rows(sales, "SELECT * FROM sales.orders ORDER BY id"),
      rows(ref, "SELECT * FROM orders ORDER BY id"))
rows(hr, "LOCK TABLES memo READ, staff READ")
check("hr: under LOCK TABLES", rows(hr, "SELECT * FROM memo ORDER BY id"),
      rows(ref, "SELECT * FROM memo ORDER BY id"))
rows(hr, "UNLOCK TABLES")
e = error_of(hr, "LOCK TABLES pay READ")
check("hr: LOCK TABLES of the sharded pay refused", e is not None and "names table pay" in e[1],
      True)
check("hr: information_schema.TABLES", rows(hr, "SELECT TABLE_SCHEMA, TABLE_NAME FROM "
      "information_schema.TABLES WHERE TABLE_NAME IN ('staff', 'memo') ORDER BY TABLE_NAME"),
      [("hr", "memo"), ("hr", "staff")])
check("USE mysql (not configured)", error_of(hr, "USE mysql")[0], 1049)
check("USE nosuch", error_of(hr, "USE nosuch")[0], 1049)
check("after a refused USE the schema stays", rows(hr, "SELECT DATABASE()"), [("hr",)])
try:
    proxy("nosuch")
    check("handshake database nosuch", "connected", 1049)
except pymysql.MySQLError as ex:
    check("handshake database nosuch", ex.args[0], 1049)

sys.exit(1 if fails else 0)
