#!/usr/bin/env bash
# proxy_caps_test.sh -- the capabilities dal-proxy offers, honoured as a
# MariaDB server honours them, each judged against a plain MariaDB:
# Node's mysql2 (tests/suites/connectors/caps_mysql2.js, its defaults:
# CLIENT_FOUND_ROWS, CLIENT_SESSION_TRACK, MARIADB_CLIENT_EXTENDED_METADATA)
# and PyMySQL (tests/suites/connectors/caps_pymysql.py, with and without
# CLIENT_FOUND_ROWS).  The table is sharded over 2 servers x 2 tables
# behind the proxy.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
pw=caps-s3cret
{
    px_ini_sharded
    px_ini_table caps 2 k mod
    px_ini_proxy "$port" plain "$pw"
} >"$work/px.ini"
px_start "$work/px.ini" "$port"

# judge NAME COMMAND...: COMMAND HOST PORT USER PASSWORD DB runs through the
# proxy and on the plain server; the outputs must match
judge() {
    local name=$1
    shift
    "$@" 127.0.0.1 "$port" app "$pw" plain >"$work/$name.px" 2>&1 ||
        fail "$name through the proxy: $(tail -5 "$work/$name.px")"
    "$@" 127.0.0.1 "${ports[0]}" dal dalpass plain >"$work/$name.plain" 2>&1 ||
        fail "$name on the plain server: $(tail -5 "$work/$name.plain")"
    diff -u "$work/$name.plain" "$work/$name.px" >"$work/$name.diff" ||
        fail "$name: the proxy and the server differ:
$(head -60 "$work/$name.diff")"
    echo "$name: $(grep -c . "$work/$name.plain") lines the same through the proxy"
}

/usr/bin/python3 -c 'import pymysql' 2>/dev/null ||
    fail "PyMySQL is not installed (tests/harness/deps.sh installs python3-pymysql)"
judge pymysql /usr/bin/python3 "$tests/suites/connectors/caps_pymysql.py"

if px_mysql2; then
    MYSQL2_DIR=$npmdir judge mysql2 node "$tests/suites/connectors/caps_mysql2.js"
fi

px_finish "capability tests"
