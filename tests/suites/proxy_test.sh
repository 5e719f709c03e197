#!/usr/bin/env bash
# proxy_test.sh -- dal-proxy judged by software nobody here wrote: the
# `mariadb` client (and PyMySQL when installed) through dal-proxy, against
# a table sharded over 2 servers and 8 physical tables, with the same SQL
# run directly on an unsharded copy: the outputs must be the same.  Also:
# authentication (1045), an unknown schema (1049), max_connections (1040),
# and a graceful stop on SIGTERM.  Starts its own MariaDB servers; never
# skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
small=$("$harness/cluster.sh" free-port)
metrics=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='app-s3cret'
write_ini() { # FILE LISTEN_PORT MAX_CONNECTIONS [METRICS_PORT]
    {
        [ -z "${4:-}" ] || printf '[monitor prometheus]\naddress = 127.0.0.1:%s\n' "$4"
        px_ini_sharded
        px_ini_table orders 8 user_id mod
        px_ini_table sbtest1 8 id hash
        cat <<EOF
[proxy]
listen = 127.0.0.1:$2
database = shop
max_connections = $3
[proxy user app]
password = \${PX_TEST_PASSWORD}
[proxy user reader]
password_hash = *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19
EOF
    } >"$1"
}
write_ini "$work/px.ini" "$port" 64
write_ini "$work/small.ini" "$small" 2 "$metrics"
px_start "$work/px.ini" "$port"
px_start "$work/small.ini" "$small"

# Debian's python3 (/usr/bin), where python3-pymysql installs it
py=/usr/bin/python3
px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }

# ---- the same session through the proxy and directly -------------------
cat >"$work/session.sql" <<'EOF'
DROP TABLE IF EXISTS orders;
CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL, amount DECIMAL(10,2), note VARCHAR(40), made DATETIME);
DESCRIBE orders;
DESC orders note;
SHOW COLUMNS FROM orders;
SHOW FULL COLUMNS FROM orders LIKE 'n%';
SHOW INDEX FROM orders;
SHOW CREATE TABLE orders;
INSERT INTO orders VALUES (1, 10, 5.50, 'first', '2024-01-02 03:04:05'), (2, 11, 7.25, NULL, '2024-02-03 04:05:06');
INSERT INTO orders VALUES (3, 12, 0.00, 'zero', NULL), (4, 13, 99.99, 'big', '2025-12-31 23:59:59'), (5, 10, 1.00, 'again', NULL);
INSERT INTO orders (id, user_id, amount, note) VALUES (6, 14, 2.50, 'six'), (7, 15, 3.50, 'seven'), (8, 16, 4.50, 'eight');
SELECT * FROM orders ORDER BY id;
SELECT CAST('12abc' AS SIGNED) AS x, CAST('7.5x' AS DECIMAL(4,1)) AS y;
SHOW WARNINGS;
SELECT 1;
SHOW COUNT(*) WARNINGS;
SHOW WARNINGS LIMIT 1, 1;
SELECT COUNT(*) FROM orders;
SHOW WARNINGS;
SELECT user_id, COUNT(*), SUM(amount) FROM orders GROUP BY user_id ORDER BY user_id;
SELECT * FROM orders WHERE user_id = 10 ORDER BY id;
SELECT COUNT(*), MIN(amount), MAX(amount), AVG(amount) FROM orders;
SELECT note FROM orders WHERE note LIKE '%e%' ORDER BY note DESC LIMIT 3;
UPDATE orders SET amount = amount + 1 WHERE user_id IN (10, 12);
DELETE FROM orders WHERE id = 4 AND user_id = 13;
SELECT id, user_id, amount FROM orders ORDER BY amount DESC, id LIMIT 2, 3;
BEGIN;
INSERT INTO orders VALUES (9, 10, 9.00, 'in txn', NULL);
UPDATE orders SET note = 'changed' WHERE user_id = 10 AND id = 1;
COMMIT;
BEGIN;
DELETE FROM orders WHERE user_id = 11 AND id = 2;
ROLLBACK;
BEGIN;
INSERT INTO orders VALUES (10, 12, 1.00, 'implicit', NULL);
BEGIN;
ROLLBACK;
BEGIN;
INSERT INTO orders VALUES (11, 12, 2.00, 'before ddl', NULL);
CREATE TABLE ddl_commits (a INT);
ROLLBACK;
DROP TABLE ddl_commits;
SELECT * FROM orders ORDER BY id;
DROP TABLE IF EXISTS call_log;
CREATE TABLE call_log (a INT, b VARCHAR(10));
DROP PROCEDURE IF EXISTS two_sets;
DELIMITER //
CREATE PROCEDURE two_sets() BEGIN SELECT 1 AS one; SELECT 'two' AS two, 2.5 AS half UNION ALL SELECT NULL, 0; INSERT INTO call_log VALUES (1, 'by call'); END//
DELIMITER ;
CALL two_sets();
SELECT * FROM call_log;
DROP PROCEDURE two_sets;
DROP TABLE call_log;
EOF
px shop --batch <"$work/session.sql" >"$work/px.out" 2>"$work/px.err" || fail "session through the proxy: $(cat "$work/px.err")"
plain --batch <"$work/session.sql" >"$work/plain.out" 2>"$work/plain.err" || fail "session on the plain server: $(cat "$work/plain.err")"
diff -u "$work/plain.out" "$work/px.out" >"$work/diff" || fail "proxy and server differ: $(head -40 "$work/diff")"
[ -s "$work/px.out" ] || fail "the session printed nothing"

# the rows are on their shards: user 10 -> table 2 of 8 -> ds0, user 13 -> ds1
n=$(mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass shard_0 -N -e 'SELECT COUNT(*) FROM orders_2')
[ "$n" = 3 ] || fail "shard_0.orders_2 has $n rows, want 3 (users 10)"

# ---- the interactive client, through a pseudo-terminal ---------------------
# typed line by line at the prompt, as a person would; the transcript must
# be the server's, info lines ("Records: ...", "Rows matched: ...") included
cat >"$work/pty.sql" <<'EOF'
USE shop
CREATE TABLE pty_t (id INT PRIMARY KEY, v VARCHAR(10), d DECIMAL(6,2));
INSERT INTO pty_t VALUES (1, 'a', 1.50), (2, NULL, NULL);
SELECT * FROM pty_t ORDER BY id;
SELECT * FROM pty_t WHERE id = 1\G
DESCRIBE pty_t;
SELECT nope FROM pty_t;
UPDATE pty_t SET v = 'b' WHERE id = 2;
SELECT COUNT(*), SUM(d) FROM pty_t;
DROP TABLE pty_t;
EOF
sed 's/^USE shop$/USE plain/' "$work/pty.sql" >"$work/pty_plain.sql"
"$py" "$tests/suites/pty_session.py" "$work/pty.sql" -- mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" \
    --skip-auto-rehash shop >"$work/pty_px.out" 2>&1 || fail "interactive client through the proxy: $(tail -3 "$work/pty_px.out")"
"$py" "$tests/suites/pty_session.py" "$work/pty_plain.sql" -- mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass \
    --skip-auto-rehash plain 2>&1 | sed 's/^> USE plain$/> USE shop/' >"$work/pty_plain.out"
diff -u "$work/pty_plain.out" "$work/pty_px.out" >"$work/pty.diff" ||
    fail "interactive client: proxy and server differ: $(head -40 "$work/pty.diff")"
grep -q 'ERROR 1054 (42S22): Unknown column' "$work/pty_px.out" || fail "interactive client: no error shown"

# ---- errors as a server gives them ----------------------------------------
out=$(px shop -e 'SELECT * FROM no_such_table' 2>&1) && fail "a missing table succeeded"
echo "$out" | grep -q '^ERROR 1146 (42S02)' || fail "missing table: $out"
out=$(px shop -e 'SELEKT 1' 2>&1) && fail "a syntax error succeeded"
echo "$out" | grep -q '^ERROR 1064 (42000)' || fail "syntax error: $out"
out=$(mariadb -h127.0.0.1 -P"$port" -uapp -pwrong -e 'SELECT 1' 2>&1) && fail "a wrong password got in"
grep -q "ERROR 1045 (28000): Access denied for user 'app'" <<<"$out" || fail "wrong password: $out"
out=$(mariadb -h127.0.0.1 -P"$port" -unobody -pwrong -e 'SELECT 1' 2>&1) && fail "an unknown user got in"
echo "$out" | grep -q '^ERROR 1045 (28000)' || fail "unknown user: $out"
out=$(px otherdb -e 'SELECT 1' 2>&1) && fail "an unknown schema was accepted"
grep -q "^ERROR 1049 (42000): Unknown database 'otherdb'" <<<"$out" || fail "unknown schema: $out"
[ "$(px shop -N -e 'SELECT DATABASE()')" = shop ] || fail "DATABASE()"
# SHOW TABLES lists the logical tables (sbtest1 is configured, not created
# yet) and the default datasource's own, not the physical ones
px shop -e 'CREATE TABLE local_notes (a INT)' || fail "CREATE TABLE of an unsharded table"
out=$(px shop -N -e 'SHOW TABLES' | tr '\n' ' ')
[ "$out" = "local_notes orders sbtest1 " ] || fail "SHOW TABLES: '$out'"
out=$(px shop -e 'SHOW TABLES FROM shop' | head -1)
[ "$out" = "Tables_in_shop" ] || fail "SHOW TABLES FROM shop: '$out'"
out=$(px shop -e "SHOW TABLES LIKE 'o%'" | tr '\n' ' ')
[ "$out" = "Tables_in_shop (o%) orders " ] || fail "SHOW TABLES LIKE: '$out'"
out=$(px shop -N -e "SHOW FULL TABLES IN shop WHERE Tables_in_shop LIKE 'l%' OR Tables_in_shop = 'sbtest1'" | tr '\t\n' ',;')
[ "$out" = "local_notes,BASE TABLE;sbtest1,BASE TABLE;" ] || fail "SHOW FULL TABLES WHERE: '$out'"
# session variables follow the session to every server it uses
out=$(px shop -N -e "SET time_zone = '+05:00'; SELECT @@time_zone; SET NAMES latin1; SELECT @@character_set_client")
[ "$out" = "$(printf '+05:00\nlatin1')" ] || fail "session variables: $out"
out=$(px shop -e "SET no_such_variable = 1" 2>&1) && fail "an unknown variable was accepted"
echo "$out" | grep -q '^ERROR 1193' || fail "unknown variable: $out"
# the client library's own errors on a backend connection (2000-2999) are
# not sent as they are: libmariadb would report a malformed packet (2027)
out=$(px shop -e "SET NAMES no_such_charset" 2>&1) && fail "an unknown character set was accepted"
echo "$out" | grep -q '^ERROR 1105 (HY000)' || fail "unknown character set: $out"
# COUNT(*) takes no LIMIT, however large: the server's syntax error
out=$(px shop -e "SHOW COUNT(*) WARNINGS LIMIT 99999999999999999999" 2>&1) &&
    fail "SHOW COUNT(*) WARNINGS with a LIMIT was answered"
echo "$out" | grep -q '^ERROR 1064' || fail "SHOW COUNT(*) WARNINGS LIMIT: $out"
nobody=$("$harness/cluster.sh" free-port)
gone=$("$harness/cluster.sh" free-port)
cat >"$work/gone.ini" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:$nobody/shop
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$gone
database = shop
[proxy user app]
password = \${PX_TEST_PASSWORD}
EOF
px_start "$work/gone.ini" "$gone"
out=$(mariadb -h127.0.0.1 -P"$gone" -uapp -p"$PX_TEST_PASSWORD" shop -e 'SELECT 1' 2>&1) &&
    fail "a datasource nobody listens for answered"
echo "$out" | grep -q '^ERROR 1429 (HY000): Unable to connect to foreign data source: datasource ds0 ' || fail "unreachable datasource: $out"
grep -q "127\.0\.0\.1\|$nobody\|dal@" <<<"$out" && fail "the error names the backend: $out"
grep -q "$PX_TEST_PASSWORD" "$work/px.log" && fail "the password is in the proxy's log"

# ---- prepared statements (the binary protocol), through libmysqlclient ----
# tests/live/ps_client prepares and executes each line (statement TAB params)
# through the proxy and on the plain server; the outputs must match.
T=$'\t'
cat >"$work/ps.txt" <<EOF
!list_fields orders
!list_fields orders n%
/* a comment alone */
SELECT * FROM orders WHERE user_id = ? ORDER BY id${T}10
SELECT id, amount, note, made FROM orders WHERE id = ? AND user_id = ?${T}1${T}10
SELECT COUNT(*), SUM(amount), MIN(made), MAX(note) FROM orders
SELECT user_id, COUNT(*) FROM orders GROUP BY user_id ORDER BY user_id LIMIT ?${T}3
SELECT id FROM orders WHERE note = ? ORDER BY id${T}six
SELECT id, note FROM orders WHERE user_id IN (?, ?) ORDER BY id DESC${T}10${T}14
SELECT id + ? AS n, CONCAT(note, ?) AS s FROM orders WHERE id = ? AND user_id = ?${T}41${T}!${T}6${T}14
INSERT INTO orders VALUES (?, ?, ?, ?, ?)${T}20${T}21${T}12.5${T}L:a note sent as long data${T}2024-03-04 05:06:07
SELECT * FROM orders WHERE id = ? AND user_id = ?${T}20${T}21
UPDATE orders SET note = ? WHERE user_id = ?${T}NULL${T}21
SELECT id, note IS NULL FROM orders WHERE user_id = ?${T}21
DELETE FROM orders WHERE user_id = ?${T}21
SELECT * FROM no_such_table WHERE id = ?${T}1
DROP TABLE IF EXISTS typed
CREATE TABLE typed (k INT PRIMARY KEY, t TINYINT, su SMALLINT UNSIGNED, b BIGINT, f FLOAT, d DOUBLE, m DECIMAL(12,3), dt DATE, tm TIME(3), ts DATETIME(6), y YEAR, c CHAR(5), vb VARBINARY(10), tx TEXT)
INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)${T}1${T}-128${T}65535${T}-9223372036854775808${T}1.5${T}-2.25e10${T}-123456789.125${T}2024-02-29${T}-838:59:59.999${T}2024-01-02 03:04:05.000006${T}2155${T}abc${T}xyz${T}L:long text
INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)${T}2${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL${T}NULL
SELECT * FROM typed ORDER BY k
SELECT k, dt FROM typed WHERE dt = ? OR k = ?${T}2024-02-29${T}2
DROP TABLE IF EXISTS emptydef
CREATE TABLE emptydef (v VARCHAR(5) NOT NULL, w VARCHAR(5) DEFAULT '', x VARCHAR(5) DEFAULT 'x', y VARCHAR(5) NOT NULL)
!list_fields emptydef
# a BLOB, TEXT, JSON or GEOMETRY column's default row holds '' where
# another column's holds its literal default (and NULL where it is NULL)
DROP TABLE IF EXISTS blobdef
CREATE TABLE blobdef (b BLOB, bn BLOB NOT NULL, bd BLOB DEFAULT NULL, bs BLOB DEFAULT 'abc', bns BLOB NOT NULL DEFAULT 'abc', bx BLOB DEFAULT X'41', bb BLOB DEFAULT b'1000010', be BLOB DEFAULT '', b5 BLOB DEFAULT 5, bu BLOB DEFAULT (uuid()), bnu BLOB NOT NULL DEFAULT (uuid()), tb TINYBLOB NOT NULL DEFAULT b'1', mb MEDIUMBLOB DEFAULT 'm', lb LONGBLOB NOT NULL DEFAULT 0x42, tt TINYTEXT DEFAULT 'it''s', t TEXT NOT NULL, mt MEDIUMTEXT DEFAULT X'41', lt LONGTEXT, j JSON, jn JSON NOT NULL, js JSON DEFAULT '{}', jns JSON NOT NULL DEFAULT '[1]', g GEOMETRY, pn POINT NOT NULL, pnx POINT NOT NULL DEFAULT (POINT(1, 1)))
!list_fields blobdef
SET @@tmp_table_size = 1024
SHOW WARNINGS
SHOW COUNT(*) WARNINGS
SET autocommit = 0
SELECT @@in_transaction
SHOW VARIABLES LIKE 'autocommit'
SELECT COUNT(*) FROM orders WHERE user_id = ?${T}10
SELECT @@in_transaction
COMMIT
SET autocommit = 1
SHOW VARIABLES LIKE 'autocommit'
EOF
px_ps_judge ps "prepared statements"
# COM_STMT_PREPARE runs nothing: a prepare alone leaves the servers'
# Empty_queries (which an execution of these empty reads adds to) as it
# was, through the proxy as on the server; the descriptions are the same
cat >"$work/ps_only.txt" <<EOF
!prepare SELECT * FROM orders WHERE user_id = ? AND id < 0
!prepare SELECT id, note FROM orders WHERE id < 0
!prepare SELECT user_id, COUNT(*) FROM orders WHERE id < ? GROUP BY user_id ORDER BY user_id LIMIT ?
!prepare SELECT 1 FROM DUAL WHERE 1 = 0
EOF
empty_queries() {
    local p n=0 v
    for p in "${ports[@]}"; do
        v=$(mariadb -h127.0.0.1 -P"$p" -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Empty_queries'" | cut -f2)
        n=$((n + v))
    done
    echo "$n"
}
e0=$(empty_queries)
"$builddir/tests/live/ps_client" 127.0.0.1 "${ports[0]}" dal dalpass plain <"$work/ps_only.txt" >"$work/ps_only_plain.out" 2>&1
e1=$(empty_queries)
"$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop <"$work/ps_only.txt" >"$work/ps_only_px.out" 2>&1
e2=$(empty_queries)
[ $((e1 - e0)) = 0 ] && [ $((e2 - e1)) = 0 ] ||
    fail "a prepare alone ran its statement: Empty_queries +$((e1 - e0)) on the server, +$((e2 - e1)) through the proxy"
diff -u "$work/ps_only_plain.out" "$work/ps_only_px.out" >"$work/ps_only.diff" ||
    fail "prepare alone: proxy and server differ: $(cat "$work/ps_only.diff")"
# prepared inside a transaction: a statement on the session's temporary
# table is described where its execution runs (the pinned connection),
# also one that shadows a base table with other columns
cat >"$work/ps_tmp.txt" <<EOF
CREATE TEMPORARY TABLE tt (a INT)
INSERT INTO tt VALUES (1)
CREATE TABLE shadowed (a INT)
CREATE TEMPORARY TABLE shadowed (b INT)
BEGIN
SELECT a FROM tt
!prepare SELECT CONCAT(a, 'x') AS s FROM tt
SELECT b FROM shadowed
!prepare SELECT b + 1 AS c FROM shadowed
COMMIT
DROP TEMPORARY TABLE shadowed
DROP TABLE shadowed
EOF
"$builddir/tests/live/ps_client" 127.0.0.1 "${ports[0]}" dal dalpass plain <"$work/ps_tmp.txt" >"$work/ps_tmp_plain.out" 2>&1
"$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop <"$work/ps_tmp.txt" >"$work/ps_tmp_px.out" 2>&1
diff -u "$work/ps_tmp_plain.out" "$work/ps_tmp_px.out" >"$work/ps_tmp.diff" ||
    fail "a temporary table prepared in a transaction: proxy and server differ: $(cat "$work/ps_tmp.diff")"
# prepared SELECT CONNECTION_ID() is the proxy's id, the one its process
# list shows for the client executing
printf '%s\n' 'SELECT CONNECTION_ID()' \
    "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Execute'" |
    "$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop >"$work/ps_id.out" 2>&1 ||
    fail "ps_client CONNECTION_ID(): $(tail -3 "$work/ps_id.out")"
ids=$(grep -A1 '^rows 1$' "$work/ps_id.out" | grep -v '^rows\|^--' | sort -u)
[ "$(wc -l <<<"$ids")" = 1 ] && [ -n "$ids" ] ||
    fail "prepared CONNECTION_ID() and the process list's id differ: $(cat "$work/ps_id.out")"
grep -q '^rows 2$' "$work/ps_px.out" || fail "prepared statements returned no rows"
# COM_CHANGE_USER (mysql_change_user): another user of the proxy (whose
# password is "password", given by its hash), then a wrong password, which
# closes the connection as a server does
printf '%s\n' '!change_user reader password shop' 'SELECT COUNT(*) FROM orders WHERE user_id = 10' \
    '!change_user app wrong shop' >"$work/cu.txt"
"$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop <"$work/cu.txt" >"$work/cu.out" 2>&1
grep -q '^change_user reader ok$' "$work/cu.out" && grep -qx '3' "$work/cu.out" &&
    grep -q '^change_user app error 1045 (28000)$' "$work/cu.out" || fail "COM_CHANGE_USER: $(cat "$work/cu.out")"
[ "$(px shop -N -e 'SELECT CONNECTION_ID()')" -gt 0 ] || fail "CONNECTION_ID()"
# dal-proxy checks a statement that returns no rows at its first execution
printf 'SELEKT ?\t1\n' | "$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop |
    grep -q '^[a-z]* error 1064 (42000)$' || fail "a prepared syntax error"

# ---- sysbench: its OLTP scripts through the proxy ------------------------
# sysbench creates sbtest1 on the plain server and (empty) through the
# proxy, sharded by a hash of id over both servers and 8 tables
# (oltp_insert makes negative ids, which mod refuses); mariadb-dump's rows
# of the first are loaded through the proxy.  Then each OLTP script runs
# the same way (one thread, one random seed) on both, with prepared
# statements (the binary protocol) and without (text); no error is
# allowed, and the contents must then be the same (through the proxy and
# on the plain server).  Then the read-only mix (point selects, ranges,
# SUM, ORDER BY, DISTINCT: scattered and merged) with 2 threads through
# the proxy.  Transactions touch several nodes: --skip_trx=on (dal
# transactions are single-node).
sbopts=(--tables=1 --table-size=1000 --auto_inc=off --skip_trx=on --rand-seed=7)
sbpx=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=app --mysql-password="$PX_TEST_PASSWORD" --mysql-db=shop)
sbplain=(--mysql-host=127.0.0.1 --mysql-port="${ports[0]}" --mysql-user=dal --mysql-password=dalpass --mysql-db=plain)
# (oltp_insert's ids, outside 1..1000, are not repeatable: its rows count, their
# values are compared only with the rest)
sum_sql='SELECT COUNT(*), SUM(k), SUM(IF(id BETWEEN 1 AND 1000, CRC32(CONCAT_WS(0x2c, id, k, c, pad)), 0)) FROM sbtest1'
if command -v sysbench >/dev/null; then
    # the same rows on both sides: sysbench fills the plain server, and its
    # dump (mariadb-dump, multi-row INSERTs) is loaded through the proxy
    sysbench oltp_read_only "${sbopts[@]}" "${sbplain[@]}" prepare >"$work/sb.out" 2>&1 ||
        fail "sysbench prepare: $(tail -3 "$work/sb.out")"
    sysbench oltp_read_only "${sbopts[@]}" "${sbpx[@]}" --table-size=0 prepare >"$work/sb.out" 2>&1 ||
        fail "sysbench prepare through the proxy: $(tail -3 "$work/sb.out")"
    mariadb-dump -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass --no-create-info --compact plain sbtest1 |
        px shop 2>"$work/load.err" || fail "loading sysbench's rows through the proxy: $(grep -v "^(" "$work/load.err" | cut -c1-300 | tail -3)"
    for target in px plain; do
        [ "$target" = px ] && conn=("${sbpx[@]}") || conn=("${sbplain[@]}")
        for mode in auto disable; do
            for t in oltp_point_select oltp_read_only oltp_read_write oltp_insert oltp_update_index \
                oltp_update_non_index oltp_delete; do
                sysbench "$t" "${sbopts[@]}" "${conn[@]}" --db-ps-mode="$mode" --threads=1 --events=60 \
                    run >"$work/sb.out" 2>&1 || fail "sysbench $t --db-ps-mode=$mode ($target): $(grep -m3 FATAL "$work/sb.out")"
            done
        done
    done
    got=$(px shop -N -e "$sum_sql")
    want=$(plain -N -e "$sum_sql")
    [ -n "$got" ] && [ "$got" = "$want" ] || fail "sysbench: the proxy's sbtest1 is '$got', the plain server's '$want'"
    # the rows are spread over the physical tables of both servers
    for i in 0 1; do
        n=$(mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass "shard_$i" -N -e "SHOW TABLES LIKE 'sbtest1\\_%'" | wc -l)
        [ "$n" = 4 ] || fail "shard_$i has $n physical sbtest1 tables, want 4"
    done
    for mode in auto disable; do
        sysbench oltp_read_only "${sbopts[@]}" "${sbpx[@]}" --db-ps-mode="$mode" --threads=2 --events=300 \
            run >"$work/sb.out" 2>&1 || fail "sysbench oltp_read_only, 2 threads, $mode: $(grep -m3 FATAL "$work/sb.out")"
    done
else
    fail "sysbench is not installed (tests/harness/deps.sh installs it)"
fi

# ---- max_connections: the third of 2 gets 1040 ----------------------------
sleepers=()
for _ in 1 2; do
    mariadb -h127.0.0.1 -P"$small" -uapp -p"$PX_TEST_PASSWORD" -e 'SELECT SLEEP(2)' >/dev/null 2>&1 &
    sleepers+=($!)
done
sleep 0.5
out=$(mariadb -h127.0.0.1 -P"$small" -uapp -p"$PX_TEST_PASSWORD" -e 'SELECT 1' 2>&1) && fail "a third connection got in"
echo "$out" | grep -q '1040.*Too many connections' || fail "max_connections: $out"
wait "${sleepers[@]}" 2>/dev/null || true
# the monitors count client connections: px_start's probe, 2 accepted and
# 1 refused above, then 1 wrong password; none connected once they are gone
mariadb -h127.0.0.1 -P"$small" -uapp -pwrong -e 'SELECT 1' >/dev/null 2>&1 && fail "a wrong password got in"
sleep 0.2
curl -s "http://127.0.0.1:$metrics/metrics" >"$work/metrics.txt" || fail "no metrics from the proxy"
for want in 'dal_proxy_client_connections 0' 'dal_proxy_client_connections_accepted_total 4' \
    'dal_proxy_client_connections_refused_total 1' 'dal_proxy_client_auth_failures_total 1'; do
    grep -qx "$want" "$work/metrics.txt" || fail "metrics: want '$want', have: $(grep '^dal_proxy' "$work/metrics.txt" | tr '\n' ' ')"
done

# ---- PyMySQL: text protocol, NULLs, a transaction, an error -------------
if "$py" -c 'import pymysql' 2>/dev/null; then
    PX_PORT=$port "$py" - <<'EOF' || fail "PyMySQL"
import os, pymysql
c = pymysql.connect(host="127.0.0.1", port=int(os.environ["PX_PORT"]), user="app",
                    password=os.environ["PX_TEST_PASSWORD"], database="shop", autocommit=True)
cur = c.cursor()
cur.execute("SELECT id, note FROM orders WHERE user_id = %s ORDER BY id", (10,))
rows = cur.fetchall()
assert [r[0] for r in rows] == [1, 5, 9], rows
cur.execute("SELECT note FROM orders WHERE id = 6 AND user_id = 14")
assert cur.fetchall() == (("six",),)
try:
    cur.execute("SELECT * FROM no_such_table")
    raise SystemExit("no error")
except pymysql.err.ProgrammingError as e:
    assert e.args[0] == 1146, e.args
c.close()
EOF
    # multi-statements: the same results, in the same order, through the
    # proxy and on the plain server, up to the first error; KILL of the
    # proxy's own connection ids
    PX_PORT=$port PLAIN_PORT=${ports[0]} "$py" - <<'EOF' || fail "multi-statements or KILL"
import os, struct, pymysql
from pymysql.constants import CLIENT, COMMAND

def connect(port, user, password, db, flags=0):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           database=db, autocommit=True, client_flag=flags)

def run_all(conn, text):
    cur, out = conn.cursor(), []
    try:
        cur.execute(text)
        while True:
            out.append((cur.rowcount, cur.fetchall() if cur.description else None))
            if not cur.nextset():
                break
    except pymysql.err.MySQLError as e:
        out.append(("error", e.args[0]))
    return out

px = connect(int(os.environ["PX_PORT"]), "app", os.environ["PX_TEST_PASSWORD"], "shop",
             CLIENT.MULTI_STATEMENTS)
plain = connect(int(os.environ["PLAIN_PORT"]), "dal", "dalpass", "plain", CLIENT.MULTI_STATEMENTS)
texts = [
    "SELECT id FROM orders WHERE user_id = 10 ORDER BY id; SELECT 'a;b' AS s /* ; */;"
    " -- x;\n SELECT COUNT(*) FROM orders",
    "UPDATE orders SET note = 'm;1' WHERE id = 1 AND user_id = 10; SELECT note FROM orders WHERE id = 1",
    "SELECT 1; SELECT no_such_column FROM orders; SELECT 3",
    "BEGIN; UPDATE orders SET amount = amount + 1 WHERE user_id = 10; ROLLBACK; SELECT SUM(amount) FROM orders",
]
for t in texts:
    a, b = run_all(px, t), run_all(plain, t)
    assert a == b, (t, a, b)
# off by COM_SET_OPTION: the server's parser sees one statement
def set_option(conn, value):
    conn._execute_command(COMMAND.COM_SET_OPTION, struct.pack("<H", value))
    conn._read_packet()
set_option(px, 1)
assert run_all(px, "SELECT 1; SELECT 2")[0][0] == "error"
set_option(px, 0)
assert len(run_all(px, "SELECT 1; SELECT 2")) == 2

cur = px.cursor()
cur.execute("SELECT CONNECTION_ID()")
victim = cur.fetchone()[0]
other = connect(int(os.environ["PX_PORT"]), "app", os.environ["PX_TEST_PASSWORD"], "shop")
oc = other.cursor()
def kill(sql):
    try:
        oc.execute(sql)
        return 0
    except pymysql.err.MySQLError as e:
        return e.args[0]
r = kill("KILL QUERY %d" % victim); assert r == 0, r   # idle: nothing to stop
# a running statement, on one node and scattered, is stopped by its servers
import threading, time
for q in ["SELECT SLEEP(30)", "SELECT COUNT(*) FROM orders WHERE SLEEP(3) = 0"]:
    got = {}
    def run():
        try:
            cur.execute(q)
            got["rows"] = cur.fetchall()
        except pymysql.err.MySQLError as e:
            got["error"] = e.args[0]
    t = threading.Thread(target=run)
    t.start()
    while not got:
        time.sleep(0.2)                 # until the statement runs on the servers
        if kill("KILL QUERY %d" % victim) != 0:
            raise SystemExit("KILL QUERY failed")
        t.join(0.5)
    t.join()
    assert got.get("error") == 1317, (q, got)   # ER_QUERY_INTERRUPTED
cur.execute("SELECT 1")                 # the connection goes on
assert cur.fetchone() == (1,)
assert kill("KILL 4000000000") == 1094              # no such connection
reader = connect(int(os.environ["PX_PORT"]), "reader", "password", "shop")
try:
    reader.cursor().execute("KILL %d" % victim)
    raise SystemExit("another user's KILL was accepted")
except pymysql.err.MySQLError as e:
    assert e.args[0] == 1095, e.args                # not the owner
assert kill("KILL CONNECTION %d" % victim) == 0
try:
    cur.execute("SELECT 1")
    raise SystemExit("the killed connection still runs statements")
except pymysql.err.OperationalError:
    pass
oc.execute("SELECT CONNECTION_ID()")
assert kill("KILL %d" % oc.fetchone()[0]) == 1927    # itself: killed
EOF
else
    fail "PyMySQL is not installed (tests/harness/deps.sh installs python3-pymysql)"
fi

# ---- SIGHUP: users change, connected clients stay ---------------------------
# the file now has user newbie instead of reader; a client connected
# before the reload finishes its statements after it
px shop -N -e "SELECT SLEEP(1); SELECT 'still here'" >"$work/hup.out" 2>&1 &
hup_client=$!
sleep 0.3
write_ini "$work/px.ini" "$port" 64
sed -i 's/^\[proxy user reader\]$/[proxy user newbie]/; s/^password_hash = .*$/password = fresh/' "$work/px.ini"
kill -HUP "${pids[0]}"
sleep 0.3
[ "$(mariadb -h127.0.0.1 -P"$port" -unewbie -pfresh shop -N -e 'SELECT 1' 2>&1)" = 1 ] ||
    fail "a user added by a reload cannot log in"
out=$(mariadb -h127.0.0.1 -P"$port" -ureader -ppassword shop -e 'SELECT 1' 2>&1) &&
    fail "a user removed by a reload still logs in"
echo "$out" | grep -q '^ERROR 1045' || fail "removed user: $out"
wait "$hup_client" || fail "a client connected across the reload failed: $(cat "$work/hup.out")"
grep -q '^still here$' "$work/hup.out" || fail "reload: $(cat "$work/hup.out")"

# ---- SIGTERM: stop accepting, exit 0 ----------------------------------------
px_stop "${pids[0]}" "$work/px.log"

px_finish "proxy tests"
