#!/usr/bin/env bash
# proxy_nobs_test.sh -- string literals under the sql_mode
# NO_BACKSLASH_ESCAPES through dal-proxy, judged against a plain MariaDB
# by PyMySQL (tests/suites/proxy_nobs.py): the mode entered by SET
# sql_mode, by SET SESSION sql_mode = CONCAT(@@sql_mode, ...), and as the
# servers' global sql_mode; a string ending in a backslash read as the
# server reads it (no 1064, and a statement on a sharded table routed to
# the rows the server finds), values with quotes and backslashes written
# by the client, as literals and as a prepared statement's parameter, in
# sharded and unsharded tables, read back as stored; and backslash
# escapes again after the mode is left in the same session, and the
# servers' global mode after COM_RESET_CONNECTION.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

py=/usr/bin/python3
px_sharded_proxy t 4 id
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }
proxy() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
tables="CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(64));
CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(64));
INSERT INTO t VALUES (5, 'five'), (7, 'seven'), (9, 'nine'), (11, 'x\\\\');
INSERT INTO u VALUES (1, 'plain\\\\'), (2, 'other');"
proxy -e "$tables"
plain -e "$tables"

for how in set concat; do
    "$py" "$srcdir/tests/suites/proxy_nobs.py" "$how" "$port" "${ports[0]}" \
        "$PX_TEST_PASSWORD" || fail "the cases entering the mode by $how (above)"
done

# the servers' global sql_mode: a second proxy, whose connections are all
# made after it changed
root() { mariadb -h127.0.0.1 -P"$1" -uroot -e "$2"; }
for p in "${ports[@]}"; do
    root "$p" "SET GLOBAL sql_mode = CONCAT(@@global.sql_mode, ',NO_BACKSLASH_ESCAPES')"
done
port2=$("$harness/cluster.sh" free-port)
{
    px_ini_sharded
    px_ini_table t 4 id mod
    px_ini_proxy "$port2"
} >"$work/px2.ini"
px_start "$work/px2.ini" "$port2"
"$py" "$srcdir/tests/suites/proxy_nobs.py" global "$port2" "${ports[0]}" \
    "$PX_TEST_PASSWORD" || fail "the cases with the mode global (above)"
px_stop "${pids[0]}" "$work/px.log"
px_stop "${pids[1]}" "$work/px2.log"
px_finish proxy_nobs_test
