#!/usr/bin/env bash
# proxy_pin_test.sh -- session state through dal-proxy, judged by the
# `mariadb` client against a plain MariaDB: user variables, temporary
# tables, named locks, LOCK TABLES, SQL prepared statements, XA
# transactions and session status counters over one
# client connection must behave as on one server (each client connection
# is a dal session, which pins the backend connections holding its state),
# SET SESSION TRANSACTION must hold for every statement, and
# COM_RESET_CONNECTION must drop that state, keep the handshake's charset
# and restart the status counters.  Starts its own MariaDB servers; never
# skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='app-s3cret'
{
    px_ini_sharded
    px_ini_table orders 8 user_id mod
    cat <<EOF
[proxy]
listen = 127.0.0.1:$port
database = shop
[proxy user app]
password = \${PX_TEST_PASSWORD}
EOF
} >"$work/px.ini"
px_start "$work/px.ini" "$port"
px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }
px -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))'
plain -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))'
for c in px plain; do
    "$c" -e 'CREATE TABLE notes (a INT)'
    "$c" -e "INSERT INTO orders VALUES (1, 10, 'ten'), (2, 11, 'eleven'), (3, 14, 'fourteen')"
done

# ---- one client connection each: the proxy's answers against the server's
# (the mariadb client sends the statements one at a time, in order)
same() { # NAME SQL
    local got want
    got=$(px -N -B -e "$2" 2>&1) || fail "$1 through the proxy: $got"
    want=$(plain -N -B -e "$2" 2>&1) || fail "$1 on the plain server: $want"
    [ "$got" = "$want" ] || fail "$1: proxy gave '$got', the server '$want'"
    [ -n "$got" ] || fail "$1 printed nothing"
}
same "user variables" 'SET @a = 1; SELECT @a; SELECT @a := @a + 1; SELECT @a * 10'
same "SELECT INTO a variable" 'SELECT note INTO @n FROM orders WHERE id = 2 AND user_id = 11; SELECT @n'
# (user 14: table 6 of 8, on ds1; the default datasource is ds0)
same "a variable set on the shard it is read on" \
    "SELECT @u := user_id FROM orders WHERE user_id = 14; SELECT note FROM orders WHERE user_id = 14 AND @u = 14; SELECT @u"
same "a variable in a transaction" 'SET @t = 5; BEGIN; SELECT @t; INSERT INTO notes VALUES (@t); COMMIT; SELECT @t + COUNT(*) FROM notes'
same "temporary table" \
    'CREATE TEMPORARY TABLE tmp (a INT); INSERT INTO tmp VALUES (1), (2), (3); SELECT SUM(a) FROM tmp; UPDATE tmp SET a = a + 1; SELECT MAX(a) FROM tmp; DROP TEMPORARY TABLE tmp; SELECT 1'
same "named lock" \
    "SELECT GET_LOCK('pxlock', 0); SELECT IS_USED_LOCK('pxlock') IS NOT NULL; SELECT IS_FREE_LOCK('pxlock'); SELECT RELEASE_LOCK('pxlock'); SELECT IS_FREE_LOCK('pxlock')"
same "LOCK TABLES" 'LOCK TABLES notes WRITE; INSERT INTO notes VALUES (9); SELECT COUNT(*) FROM notes WHERE a = 9; UNLOCK TABLES; DELETE FROM notes WHERE a = 9; SELECT COUNT(*) FROM notes'
same "PREPARE and EXECUTE" "PREPARE s FROM 'SELECT 40 + ?'; SET @b = 2; EXECUTE s USING @b; DEALLOCATE PREPARE s; SELECT 1"
# SET SESSION TRANSACTION: session variables of every backend connection
same "SET SESSION TRANSACTION" \
    'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; SELECT @@tx_isolation; SET SESSION TRANSACTION READ ONLY, ISOLATION LEVEL SERIALIZABLE; SELECT @@tx_isolation, @@tx_read_only; BEGIN; SELECT COUNT(*) FROM orders WHERE user_id = 14; COMMIT; SET SESSION TRANSACTION READ WRITE; SELECT @@tx_read_only'
# a session variable holds for the DDL of a server's own database (mysqltest's
# range_aria_dbt3: `set default_storage_engine=Aria`, then its tables)
same "default_storage_engine in a server database" \
    "SET default_storage_engine = Aria; CREATE DATABASE pxeng; USE pxeng; CREATE TABLE t (a INT); SHOW CREATE TABLE t; DROP DATABASE pxeng"
# XA statements: the server's XA transaction stays on the connection that
# ran XA START until XA COMMIT or XA ROLLBACK, with autocommit 0 too
same "XA transaction" \
    "XA START 'x1'; INSERT INTO notes VALUES (21); XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1'; SELECT COUNT(*) FROM notes WHERE a = 21"
same "XA rollback" \
    "XA START 'x2'; INSERT INTO notes VALUES (22); XA END 'x2'; XA ROLLBACK 'x2'; SELECT COUNT(*) FROM notes WHERE a = 22"
same "XA with autocommit 0" \
    "SET autocommit = 0; XA BEGIN 'x3'; INSERT INTO notes VALUES (23); XA END 'x3'; XA COMMIT 'x3' ONE PHASE; SELECT COUNT(*) FROM notes WHERE a = 23; COMMIT"
# (errors too: --force goes on after them)
got=$(px --force -N -B -e "XA START 'x4'; INSERT INTO notes VALUES (24); XA START 'x5'; XA END 'x4'; XA ROLLBACK 'x4'; SELECT COUNT(*) FROM notes WHERE a = 24; XA END 'x4'" 2>&1) || true
want=$(plain --force -N -B -e "XA START 'x4'; INSERT INTO notes VALUES (24); XA START 'x5'; XA END 'x4'; XA ROLLBACK 'x4'; SELECT COUNT(*) FROM notes WHERE a = 24; XA END 'x4'" 2>&1) || true
[ "$got" = "$want" ] || fail "XA after a failed XA START: proxy gave '$got', the server '$want'"
echo "$want" | grep -q 1399 || fail "XA after a failed XA START on the server: '$want'"
# BEGIN, COMMIT and ROLLBACK inside an XA transaction, in each of its
# states (ACTIVE, IDLE after XA END, PREPARED) and with autocommit on and
# off: the server's error (PyMySQL, directly and through the proxy), and
# the XA transaction goes on after it
out=$(PX_PORT=$port PLAIN_PORT=${ports[0]} /usr/bin/python3 - <<'PY' 2>&1
import os, pymysql
def run(port, user, pw, db, ac):
    c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                        autocommit=ac)
    cur, seen, n = c.cursor(), [], 0
    def q(sql):
        try:
            cur.execute(sql)
            return "%s: ok %r" % (sql, cur.fetchall())
        except pymysql.MySQLError as e:
            return "%s: error %r" % (sql, e.args)
    for state in ("active", "idle", "prepared"):
        for stmt in ("COMMIT", "ROLLBACK", "BEGIN", "START TRANSACTION", "START TRANSACTION READ ONLY"):
            n += 1
            xid = "'xs%d'" % n
            seen.append((state, stmt, q("XA START " + xid)))
            seen.append(q("INSERT INTO notes VALUES (%d)" % (100 + n)))
            if state != "active":
                seen.append(q("XA END " + xid))
            if state == "prepared":
                seen.append(q("XA PREPARE " + xid))
            seen.append(q(stmt))
            if state == "active":
                seen.append(q("XA END " + xid))
            seen.append(q("XA COMMIT " + xid + (" ONE PHASE" if state != "prepared" else "")))
            seen.append(q("SELECT COUNT(*) FROM notes WHERE a = %d" % (100 + n)))
            seen.append(q("COMMIT"))
    # outside an XA transaction: XA START in an open transaction, XA COMMIT
    # and XA ROLLBACK of no XA transaction of the session's
    for sql in ("SELECT COUNT(*) FROM notes", "XA START 'xo'", "COMMIT", "BEGIN",
                "XA START 'xo'", "ROLLBACK", "XA COMMIT 'xo' ONE PHASE", "XA ROLLBACK 'xo'",
                "XA START 'xp'", "XA END 'xp'", "XA PREPARE 'xp'", "XA RECOVER", "BEGIN",
                "XA ROLLBACK 'xp'", "XA RECOVER", "SELECT @@in_transaction"):
        seen.append(q(sql))
    seen.append(q("DELETE FROM notes WHERE a > 100"))
    seen.append(q("COMMIT"))
    c.close()
    return seen
for ac in (True, False):
    a = run(int(os.environ["PX_PORT"]), "app", os.environ["PX_TEST_PASSWORD"], "shop", ac)
    b = run(int(os.environ["PLAIN_PORT"]), "dal", "dalpass", "plain", ac)
    tag = None
    for x, y in zip(a, b):
        tag = y[:2] if isinstance(y, tuple) else tag
        if x != y:
            print("autocommit %s, %s: proxy %r, server %r" % (ac, tag, x, y))
    if not any("1399" in str(y) for y in b):
        print("the server gave no 1399: %r" % (b,))
PY
) || fail "XA differential: $out"
[ -z "$out" ] || fail "BEGIN/COMMIT/ROLLBACK inside an XA transaction: $out"
# the SQLSTATE too (the mariadb client prints it)
got=$(px --force -N -B -e "XA START 'xq'; COMMIT; XA END 'xq'; ROLLBACK; XA ROLLBACK 'xq'" 2>&1) || true
want=$(plain --force -N -B -e "XA START 'xq'; COMMIT; XA END 'xq'; ROLLBACK; XA ROLLBACK 'xq'" 2>&1) || true
[ "$got" = "$want" ] || fail "COMMIT/ROLLBACK in an XA transaction: proxy gave '$got', the server '$want'"
echo "$want" | grep -q 'ERROR 1399 (XAE07)' || fail "COMMIT in an XA transaction on the server: '$want'"
# state ends with the client connection
same "a new connection" "SELECT IFNULL(@a, 'none'), IS_FREE_LOCK('pxlock')"

# ---- a named lock is held across statements, as seen from elsewhere -------
px -N -e "SELECT GET_LOCK('held', 0); SELECT SLEEP(3)" >"$work/lock.out" 2>&1 &
holder=$!
for _ in $(seq 30); do
    [ "$(plain -N -e "SELECT IS_FREE_LOCK('held')")" = 0 ] && break
    sleep 0.1
done
[ "$(plain -N -e "SELECT IS_FREE_LOCK('held')")" = 0 ] || fail "GET_LOCK through the proxy is not held"
[ "$(px -N -e "SELECT IS_FREE_LOCK('held')")" = 0 ] || fail "another proxy client sees the lock free"
wait "$holder" || fail "the lock holder failed: $(cat "$work/lock.out")"
[ "$(plain -N -e "SELECT IS_FREE_LOCK('held')")" = 1 ] || fail "the lock outlived its client connection"

# ---- what cannot be kept is refused, not silently wrong --------------------
out=$(px -e 'SET @k = 10; SELECT note FROM orders WHERE user_id = @k' 2>&1) && fail "a variable shard key was accepted"
echo "$out" | grep -q 'user variables' || fail "variable shard key: $out"
out=$(px -e 'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE' 2>&1) && fail "SET TRANSACTION (next transaction only) was accepted"
echo "$out" | grep -q '^ERROR 1235.*SET SESSION TRANSACTION' || fail "SET TRANSACTION: $out"
out=$(px -e 'SET SESSION TRANSACTION ISOLATION LEVEL SOMETIMES' 2>&1) && fail "an unknown isolation level was accepted"
echo "$out" | grep -q '^ERROR 1235' || fail "unknown isolation level: $out"

# ---- an XA transaction is one server's: a statement for another datasource
# is refused while it is open, and runs once it has ended
out=$(px -e "XA START 'x6'; SELECT note FROM orders WHERE user_id = 10; SELECT note FROM orders WHERE user_id = 14" 2>&1) &&
    fail "a statement outside the XA transaction's datasource was accepted"
grep -q "XA transaction is on datasource ds0, but this statement runs on ds1" <<<"$out" || fail "XA on another datasource: $out"
echo "$out" | grep -qx ten || fail "XA: a statement on its own datasource: $out"
out=$(px -N -e "XA START 'x7'; XA END 'x7'; XA ROLLBACK 'x7'; SELECT note FROM orders WHERE user_id = 14" 2>&1) ||
    fail "after XA ROLLBACK, a statement on another datasource: $out"
[ "$out" = fourteen ] || fail "after XA ROLLBACK: '$out'"

# ---- session status: the first read pins the backend connection, so later
# reads count on it, also past SET STATEMENT ... FOR (which reports a change
# of session state but must not get the pinned connection reset): how much
# each counter moved between reads, through the proxy and on the server
status_moves() { # CLIENT
    "$1" -N -B -e "SHOW SESSION STATUS WHERE Variable_name IN ('Com_select', 'Com_show_status');
        SET STATEMENT sort_buffer_size = 100000 FOR SELECT 'x'; SELECT 1;
        SHOW STATUS WHERE Variable_name IN ('Com_select', 'Com_show_status'); SELECT 2;
        SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.SESSION_STATUS
            WHERE VARIABLE_NAME IN ('COM_SELECT', 'COM_SHOW_STATUS') ORDER BY 1" 2>&1 |
        awk -F'\t' 'NF == 2 { n = toupper($1); if (n in last) print n, $2 - last[n]; last[n] = $2; next } { print }'
}
got=$(status_moves px) want=$(status_moves plain)
[ "$got" = "$want" ] || fail "session status: proxy moved '$got', the server '$want'"
echo "$want" | grep -qx 'COM_SELECT 2' || fail "session status on the server: '$want'"
# the same with the view's name backquoted (a new client: its first read pins)
quoted_moves() { # CLIENT
    "$1" -N -B -e "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.\`SESSION_STATUS\`
            WHERE VARIABLE_NAME = 'COM_SELECT';
        SET STATEMENT sort_buffer_size = 100000 FOR SELECT 'x'; SELECT 1;
        SELECT VARIABLE_NAME, VARIABLE_VALUE FROM \`information_schema\`.\`SESSION_STATUS\`
            WHERE VARIABLE_NAME = 'COM_SELECT'" 2>&1 |
        awk -F'\t' 'NF == 2 { n = toupper($1); if (n in last) print n, $2 - last[n]; last[n] = $2; next } { print }'
}
got=$(quoted_moves px) want=$(quoted_moves plain)
[ "$got" = "$want" ] || fail "session status, backquoted: proxy moved '$got', the server '$want'"
echo "$want" | grep -qx 'COM_SELECT 3' || fail "session status, backquoted, on the server: '$want'"

# ---- COM_RESET_CONNECTION drops the state (mysql_reset_connection) -------
T=$'\t'
cat >"$work/reset.txt" <<EOF
SET @r = ?${T}7
SELECT @r
CREATE TEMPORARY TABLE rt (a INT)
SELECT COUNT(*) FROM rt
!reset_connection
SELECT IFNULL(@r, 'none')
SELECT COUNT(*) FROM rt
EOF
px_ps_judge reset COM_RESET_CONNECTION
grep -qx 'none' "$work/reset_px.out" || fail "the variable survived the reset: $(cat "$work/reset_px.out")"

# ---- COM_RESET_CONNECTION restarts the session status counters where the
# session reads them, as on a server: FLUSH STATUS and the first read pin
# the connection, which the reset keeps and resets in place; the
# handshake's character set (latin1) stays
cat >"$work/status_reset.txt" <<EOF
SET NAMES koi8r
FLUSH STATUS
SELECT 1
SHOW SESSION STATUS LIKE 'Com_select'
SELECT COUNT(*) FROM orders
!reset_connection
SELECT @@character_set_client, @@character_set_results, @@collation_connection
SHOW SESSION STATUS LIKE 'Com_select'
SELECT 2
SHOW SESSION STATUS LIKE 'Com_select'
EOF
PS_CLIENT_CHARSET=latin1 px_ps_judge status_reset "session status over COM_RESET_CONNECTION"

px_finish proxy_pin_test
