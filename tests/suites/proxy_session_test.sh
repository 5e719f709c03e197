#!/usr/bin/env bash
# proxy_session_test.sh -- a client's server session through dal-proxy,
# judged against a plain MariaDB by PyMySQL and MySQLdb
# (tests/suites/proxy_session.py): the warnings of a SET reach the OK
# packet and SHOW WARNINGS, and so do ROLLBACK's and COMMIT's (1196 for a
# MyISAM table) in single, multi and xa transactions; with autocommit 0 a SELECT naming no table opens no
# transaction (@@in_transaction); SET NAMES with a collation the server
# refuses keeps the charset before it; session variables read back as set
# (a value from an expression or a flag set's literal as the server made it: @@x,
# SHOW SESSION VARIABLES, information_schema.SESSION_VARIABLES) whatever
# shard the statement before used; SHOW [FULL] PROCESSLIST and
# information_schema.PROCESSLIST list the proxy's clients by the ids
# CONNECTION_ID() and KILL use; an idle client is closed after its
# wait_timeout (set by the session, or the servers' global one, and
# interactive_timeout for an interactive client) as a server closes it.
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

py=/usr/bin/python3
px_cluster 2 --db 'shard_%d' --db plain
export PX_TEST_PASSWORD='app-s3cret'
write_ini() { # PORT
    # (the XA decision log beside ds1, away from the plain server's schema)
    px_ini_sharded "xa_log = xalog"
    printf '[datasource xalog]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/shard_1\n' "${ports[1]}"
    px_ini_table orders 4 user_id mod
    px_ini_proxy "$1"
}
port=$("$harness/cluster.sh" free-port)
write_ini "$port" >"$work/px.ini"
"$builddir/tools/dal" -c "$work/px.ini" xa init >/dev/null || fail "dal xa init"
px_start "$work/px.ini" "$port"
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }
mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop \
    -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL)'
plain -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT NOT NULL)'

"$py" "$srcdir/tests/suites/proxy_session.py" session "$port" "${ports[0]}" \
    "$PX_TEST_PASSWORD" || fail "the session cases (above)"

# the servers' global timeouts, lowered while a second proxy starts (it
# reads them once) and while the plain clients connect
port2=$("$harness/cluster.sh" free-port)
write_ini "$port2" >"$work/px2.ini"
root() { mariadb -h127.0.0.1 -P"$1" -uroot -e "$2"; }
for p in "${ports[@]}"; do
    root "$p" 'SET GLOBAL wait_timeout = 2, GLOBAL interactive_timeout = 6'
done
px_start "$work/px2.ini" "$port2"
"$py" "$srcdir/tests/suites/proxy_session.py" idle "$port2" "${ports[0]}" \
    "$PX_TEST_PASSWORD" >"$work/idle.out" 2>&1 &
idle=$!
sleep 2
for p in "${ports[@]}"; do
    root "$p" 'SET GLOBAL wait_timeout = 28800, GLOBAL interactive_timeout = 28800'
done
wait "$idle" || fail "the idle cases: $(cat "$work/idle.out")"
cat "$work/idle.out"
px_stop "${pids[0]}" "$work/px.log"
px_stop "${pids[1]}" "$work/px2.log"
px_finish proxy_session_test
