#!/usr/bin/env bash
# proxy_orm_test.sh -- dal-proxy as an ORM and the dump tools use a server,
# each compared with MariaDB directly:
#  - SHOW [SESSION | LOCAL] VARIABLES and information_schema.SESSION_VARIABLES
#    answer the session's autocommit (OFF after SET autocommit = 0, which
#    dal keeps itself), with the server's column names and types;
#  - SQLAlchemy's ORM with its defaults (PyMySQL, autocommit off) on a table
#    sharded by its primary key over 2 datasources in 4 physical tables
#    (transaction_mode multi: a flush writes rows of both datasources):
#    create_all twice, inserts through the session, session.get, IN-list
#    reads, ORM and bulk updates and deletes, commits; the same program on
#    an unsharded copy on the server;
#  - mariadb-dump --routines --triggers of a schema holding tables, a view,
#    a trigger, a procedure and a function, restored with the mariadb client
#    (no --force) through a pass-through proxy and directly: every object's
#    SHOW CREATE, the rows, the procedure and the function called.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

py=/usr/bin/python3
"$py" -c 'import pymysql, sqlalchemy' ||
    { echo "FAIL: PyMySQL or SQLAlchemy missing (tests/harness/deps.sh installs python3-pymysql python3-sqlalchemy)" >&2; exit 1; }
px_cluster 2 --db 'shard_%d' --db plain --db restore_px --db restore_plain --db src
export PX_TEST_PASSWORD='app-s3cret'
orm_port=$("$harness/cluster.sh" free-port)
{
    # a commit of the session writes rows of both datasources
    px_ini_sharded 'transaction_mode = multi'
    px_ini_table item 4 id mod
    px_ini_proxy "$orm_port"
} >"$work/orm.ini"
px_start "$work/orm.ini" "$orm_port"
px_passthrough restore_px
px_start "$work/px.ini" "$port"
export PX_PORT=$orm_port PLAIN_PORT=${ports[0]}

# ------------------------------------------------- autocommit read back
# autocommit_prog px|plain: the statements' answers and column
# descriptions, through the proxy or directly
autocommit_prog() {
    "$py" - "$1" <<'EOF'
import os, sys, pymysql
if sys.argv[1] == "px":
    c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                        password=os.environ["PX_TEST_PASSWORD"], database="shop")
else:
    c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PLAIN_PORT"]), user="dal",
                        password="dalpass", database="plain")
cur = c.cursor()
queries = [
    "SHOW VARIABLES LIKE 'autocommit'",
    "SHOW SESSION VARIABLES LIKE 'AUTOCOMMIT'",
    "show local variables where Variable_name = 'autocommit' or (Value = 'OFF' and Variable_name like 'in%')",
    "SHOW VARIABLES LIKE 'auto%' ;",
    "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES"
    " WHERE VARIABLE_NAME IN ('AUTOCOMMIT', 'AUTO_INCREMENT_OFFSET') ORDER BY 1",
    "SELECT s.VARIABLE_VALUE FROM INFORMATION_SCHEMA.SESSION_VARIABLES s WHERE s.VARIABLE_NAME = 'autocommit'",
    "SELECT @@autocommit",
]
for ac in ("0", "1", "OFF"):
    cur.execute("SET autocommit = " + ac)
    for q in queries:
        cur.execute(q)
        print(ac, q, cur.fetchall())
        print("  ", [(d[0], d[1], d[3]) for d in cur.description])
    c.rollback()
print("count", cur.execute("SHOW VARIABLES") > 400)
EOF
}
autocommit_prog plain >"$work/ac_plain.out" 2>&1 || fail "autocommit reads directly: $(tail -5 "$work/ac_plain.out")"
autocommit_prog px >"$work/ac_px.out" 2>&1 || fail "autocommit reads through the proxy: $(tail -5 "$work/ac_px.out")"
diff -u "$work/ac_plain.out" "$work/ac_px.out" >"$work/ac.diff" ||
    fail "autocommit reads: proxy and server differ: $(head -60 "$work/ac.diff")"

# ------------------------------------------------------ SQLAlchemy's ORM
orm_prog() {
    "$py" - "$1" <<'EOF'
import os, sys
from sqlalchemy import Column, Integer, String, create_engine, select, update, delete, func
from sqlalchemy.orm import declarative_base, Session

if sys.argv[1] == "px":
    url = "mysql+pymysql://app:%s@127.0.0.1:%s/shop" % (os.environ["PX_TEST_PASSWORD"], os.environ["PX_PORT"])
else:
    url = "mysql+pymysql://dal:dalpass@127.0.0.1:%s/plain" % os.environ["PLAIN_PORT"]
Base = declarative_base()

class Item(Base):
    __tablename__ = "item"
    id = Column(Integer, primary_key=True, autoincrement=False)  # the shard key
    name = Column(String(40), nullable=False)
    qty = Column(Integer, nullable=False, default=0)

def show(label, items):
    print(label, [(i.id, i.name, i.qty) for i in items])

engine = create_engine(url, future=True)
Base.metadata.create_all(engine)
Base.metadata.create_all(engine)  # the table is there: nothing to do
with Session(engine) as s:
    s.add_all([Item(id=i, name="n%d" % i, qty=i * 10) for i in range(1, 13)])
    s.add(Item(id=20, name="default qty"))
    s.commit()
    show("get", [s.get(Item, 3), s.get(Item, 20)])
    print("get missing", s.get(Item, 99))
    show("in", s.execute(select(Item).where(Item.id.in_([1, 2, 5, 8, 11])).order_by(Item.id)).scalars().all())
    show("in unordered", sorted(s.execute(select(Item).where(Item.id.in_([4, 7, 99]))).scalars().all(),
                                key=lambda i: i.id))
    print("count", s.execute(select(func.count()).select_from(Item)).scalar_one())
    it = s.get(Item, 4)
    it.qty = 99
    it.name = "four"
    s.commit()
    r = s.execute(update(Item).where(Item.id.in_([1, 2, 9])).values(qty=Item.qty + 1))
    print("bulk update", r.rowcount)
    s.commit()
    s.delete(s.get(Item, 5))
    s.commit()
    r = s.execute(delete(Item).where(Item.id.in_([6, 10])))
    print("bulk delete", r.rowcount)
    s.commit()
    s.expire_all()
    show("get after", [s.get(Item, 4), s.get(Item, 1)])
    print("get deleted", s.get(Item, 5), s.get(Item, 6))
    show("all", s.execute(select(Item).order_by(Item.id)).scalars().all())
    it = s.get(Item, 7)
    it.qty = -1
    s.rollback()
    show("rolled back", [s.get(Item, 7)])
EOF
}
orm_prog plain >"$work/orm_plain.out" 2>&1 || fail "the ORM directly: $(tail -5 "$work/orm_plain.out")"
orm_prog px >"$work/orm_px.out" 2>&1 || fail "the ORM through the proxy: $(tail -5 "$work/orm_px.out")"
diff -u "$work/orm_plain.out" "$work/orm_px.out" >"$work/orm.diff" ||
    fail "the ORM: proxy and server differ: $(head -60 "$work/orm.diff")"
# the 10 rows left are on both datasources' physical tables
total=0
for p in "${ports[@]}"; do
    n=0
    for t in $(mariadb -h127.0.0.1 -P"$p" -uroot -N -e "SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME)
            FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE 'shard%' AND TABLE_NAME LIKE 'item%'"); do
        n=$((n + $(mariadb -h127.0.0.1 -P"$p" -uroot -N -e "SELECT COUNT(*) FROM $t")))
    done
    [ "$n" -gt 0 ] || fail "the ORM's rows: none on the server of port $p"
    total=$((total + n))
done
[ "$total" -eq 10 ] || fail "the ORM's rows: $total on the shards, 10 expected"

# ------------------------------------------- mariadb-dump, views, routines
root() { mariadb -h127.0.0.1 -P"${ports[0]}" -uroot "$@"; }
root src <<'SQL'
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), qty INT NOT NULL DEFAULT 0);
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, t_id INT, note VARCHAR(40));
INSERT INTO t VALUES (1, 'one', 10), (2, 'two', 20), (3, NULL, 30);
CREATE VIEW v AS SELECT id, UPPER(name) AS uname, qty * 2 AS dbl FROM t WHERE qty > 10;
CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO audit (t_id, note) VALUES (NEW.id, CONCAT('added ', NEW.name));
DELIMITER //
CREATE PROCEDURE add_item(IN p_id INT, IN p_name VARCHAR(20))
BEGIN
  INSERT INTO t (id, name, qty) VALUES (p_id, p_name, p_id * 10);
  SELECT COUNT(*) AS n FROM t;
END//
CREATE FUNCTION total_qty() RETURNS INT READS SQL DATA
BEGIN
  DECLARE s INT;
  SELECT SUM(qty) INTO s FROM t;
  RETURN s;
END//
DELIMITER ;
INSERT INTO t VALUES (4, 'four', 40);
SQL
mariadb-dump -h127.0.0.1 -P"${ports[0]}" -uroot --routines --triggers src >"$work/src.sql"
root restore_plain <"$work/src.sql" || fail "the dump restored directly"
mariadb -h127.0.0.1 -P"$port" -uroot restore_px <"$work/src.sql" 2>"$work/restore.err" ||
    fail "the dump restored through the proxy: $(head -5 "$work/restore.err")"
# objects DB: each object's definition and the rows, read on the server
objects() {
    local db=$1
    {
        for q in "SHOW CREATE TABLE t" "SHOW CREATE TABLE audit" "SHOW CREATE VIEW v" \
            "SHOW CREATE TRIGGER t_ai" "SHOW CREATE PROCEDURE add_item" "SHOW CREATE FUNCTION total_qty" \
            "SELECT * FROM t ORDER BY id" "SELECT * FROM audit ORDER BY id" "SELECT * FROM v ORDER BY id" \
            "SELECT ROUTINE_NAME, ROUTINE_TYPE, DEFINER, SECURITY_TYPE, SQL_DATA_ACCESS FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1"; do
            echo "# $q"
            root -N -e "$q" "$db" 2>&1 | sed "s/$db/DB/g; s/ AUTO_INCREMENT=[0-9]*//; s/\(\tutf8mb4_general_ci\)\t[0-9][-0-9: .]*$/\1/"
        done
    }
}
# calls MODE: the procedure and the function, directly or through the proxy
calls() {
    local db=restore_plain p=${ports[0]}
    [ "$1" = px ] && { db=restore_px; p=$port; }
    mariadb -h127.0.0.1 -P"$p" -uroot -N "$db" -e "CALL add_item(5, 'five'); SELECT total_qty(); SELECT * FROM audit ORDER BY id" 2>&1
}
objects restore_plain >"$work/dump_plain.out"
objects restore_px >"$work/dump_px.out"
calls plain >>"$work/dump_plain.out"
calls px >>"$work/dump_px.out"
diff -u "$work/dump_plain.out" "$work/dump_px.out" >"$work/dump.diff" ||
    fail "the dump restored: proxy and server differ: $(head -60 "$work/dump.diff")"
grep -q 'total_qty' "$work/dump_plain.out" || fail "the dump restored directly holds no function: $(head -20 "$work/dump_plain.out")"

px_finish "ORM, dump and autocommit through dal-proxy"
