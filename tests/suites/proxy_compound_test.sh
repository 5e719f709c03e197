#!/usr/bin/env bash
# proxy_compound_test.sh -- compound statements at top level (FOR, WHILE,
# LOOP, REPEAT, IF, CASE, BEGIN NOT ATOMIC) and the server's syntax errors
# for texts dal cannot read, through dal-proxy against a plain MariaDB:
# the `mariadb` client sends a compound statement (after DELIMITER) as one
# COM_QUERY, and the proxy must run it whole on the datasource of its
# tables, keep the user variables it sets for the client's next
# statements, and refuse one that names a sharded table without running
# any part of it.  A text dal's analyser cannot read, or a SET the proxy
# does not take, gets the server's own syntax error (number, SQLSTATE and
# words), from a prepare that runs nothing.  Starts its own MariaDB
# servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_sharded_proxy orders 4 user_id
px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }
px -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL)'
for c in px plain; do
    "$c" -e 'CREATE TABLE t1 (a INT, b VARCHAR(10))'
done

# same NAME [error]: the script on stdin through the proxy and on the
# plain server, one client connection each, outputs (errors included) the
# same; without `error`, the server must have run every statement
same() {
    local got want script
    script=$(cat)
    got=$(px -N -B --force <<<"$script" 2>&1) || true
    want=$(plain -N -B --force <<<"$script" 2>&1) || true
    [ "$got" = "$want" ] || fail "$1: proxy gave '$got', the server '$want'"
    [ -n "$want" ] || fail "$1 printed nothing"
    [ -n "${2:-}" ] || ! grep -q '^ERROR' <<<"$want" || fail "$1: the server refused it: $want"
}

# ---- compound statements on unsharded tables run whole, as on a server
same "FOR loop inserting" <<'SQL'
DELIMITER $$
FOR i IN 1..5 DO INSERT INTO t1 VALUES (i, REPEAT('x', i)); END FOR $$
DELIMITER ;
SELECT COUNT(*), SUM(a), MAX(b) FROM t1;
SQL
same "WHILE with user variables, read back after" <<'SQL'
SET @n = 0, @s = '';
DELIMITER $$
WHILE @n < 4 DO SET @n = @n + 1; SET @s = CONCAT(@s, @n); END WHILE $$
DELIMITER ;
SELECT @n, @s;
SQL
same "LOOP, REPEAT, IF, CASE" <<'SQL'
SET @k = 0;
DELIMITER $$
BEGIN NOT ATOMIC l1: LOOP SET @k = @k + 2; IF @k >= 6 THEN LEAVE l1; END IF; END LOOP l1; END $$
REPEAT SET @k = @k - 1; UNTIL @k <= 3 END REPEAT $$
IF @k = 3 THEN UPDATE t1 SET b = 'three' WHERE a = 3; ELSEIF @k = 4 THEN SET @k = 40; ELSE SET @k = -1; END IF $$
CASE @k WHEN 3 THEN SET @c = 'c3'; ELSE SET @c = 'other'; END CASE $$
DELIMITER ;
SELECT @k, @c, b FROM t1 WHERE a = 3;
SQL
same "BEGIN NOT ATOMIC with a local variable and a result set" <<'SQL'
DELIMITER $$
BEGIN NOT ATOMIC DECLARE x INT DEFAULT 7; SET @y = x * 3; SELECT a, b FROM t1 WHERE a = 2; END $$
DELIMITER ;
SELECT @y;
SQL
# statements and compound ones in one COM_QUERY (multi-statements): a
# compound statement's own ';' stay inside it, and it ends after its END
same "a compound statement after another in one text" <<'SQL'
DELIMITER $$
SET @m = 1; FOR j IN 1..3 DO SET @m = @m * 2; END FOR $$
SET @w = 0; WHILE @w < 2 DO SET @w = @w + 1; END WHILE; SELECT @m, @w; BEGIN NOT ATOMIC IF @w = 2 THEN SELECT CASE WHEN @m > 1 THEN 'big' ELSE 'small' END AS m; END IF; END; SELECT 'last' $$
DELIMITER ;
SELECT @m;
SQL

# ---- CALL: the result sets a procedure returned before its error, then
# the error, as a server sends them
same "CALL with result sets, then SIGNAL" error <<'SQL'
DELIMITER $$
CREATE PROCEDURE p_sig() BEGIN SELECT 1 AS one; SELECT a FROM t1 WHERE a < 3 ORDER BY a; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'raised after two sets'; END $$
CREATE PROCEDURE p_ok() BEGIN SELECT 5 AS five; END $$
DELIMITER ;
CALL p_sig();
CALL p_ok();
SELECT 'after';
SQL
# ... and in a multi-statement text the error ends it
same "CALL's error ends a multi-statement text" error <<'SQL'
DELIMITER $$
SELECT 'first'; CALL p_sig(); SELECT 'never' $$
DELIMITER ;
SELECT 'next';
SQL

# ---- a compound statement naming a sharded table: refused, nothing run
out=$(px --delimiter='$$' -e "BEGIN NOT ATOMIC INSERT INTO t1 VALUES (99, 'no'); INSERT INTO orders VALUES (1, 1); END" 2>&1) &&
    fail "a compound statement writing a sharded table ran: $out"
echo "$out" | grep -q '^ERROR 1235 (42000).*orders.*is sharded' ||
    fail "a compound statement naming a sharded table: $out"
out=$(px --delimiter='$$' -e "FOR i IN 1..2 DO SELECT COUNT(*) FROM orders; END FOR" 2>&1) &&
    fail "a compound statement reading a sharded table ran: $out"
echo "$out" | grep -q 'ERROR 1235.*orders' || fail "FOR reading a sharded table: $out"
[ "$(px -N -e 'SELECT COUNT(*) FROM t1 WHERE a = 99')" = 0 ] ||
    fail "part of a refused compound statement ran"
[ "$(px -N -e 'SELECT COUNT(*) FROM orders')" = 0 ] || fail "a refused compound statement wrote orders"

# ---- the server's syntax errors for texts dal cannot read
same "unbalanced parenthesis in a compound statement" error <<'SQL'
DELIMITER $$
BEGIN NOT ATOMIC
  DECLARE cur CURSOR (a INT) FOR SELECT a+1;
  OPEN cur(sp_followed_by_syntax_error();
  CLOSE cur;
END;
$$
DELIMITER ;
SELECT 'after';
SQL
same "unbalanced parenthesis" error <<'SQL'
SELECT (1 + 2;
SELECT a FROM t1 WHERE (a = 1;
SQL
same "a SET the proxy does not take" error <<'SQL'
set option option=1;
SET @@session. = 1;
SQL
same "unterminated string" error <<'SQL'
SELECT 'abc
SQL

px_finish "compound statements and syntax errors through dal-proxy"
