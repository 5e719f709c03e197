#!/usr/bin/env bash
# connectors_test.sh -- client libraries nobody here wrote, through
# dal-proxy: Python's MySQLdb (python3-mysqldb) and Node's mysql2 (npm,
# query() and execute()).  Each smoke program in tests/suites/connectors/ runs
# against dal-proxy (tables sharded over 2 servers x 2 tables) and against
# a plain server, and the outputs must be the same: every common column
# type and NULL, column definitions, a transaction, errors.  Through the
# proxy they also check that an INSERT without the id_column returns the id
# dal generated as the insert id.  Starts its own MariaDB servers; never
# skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
pw=conn-s3cret
{
    px_ini_sharded
    px_ini_table typed 2 k mod
    px_ini_table gen 2 user_id mod
    # [table gen] goes on
    cat <<EOF
id_column = id
idgen = gen_ids
[idgen gen_ids]
plugin = snowflake
worker_id = 1
[proxy]
listen = 127.0.0.1:$port
database = plain
[proxy user app]
password = $pw
EOF
} >"$work/px.ini"
px_start "$work/px.ini" "$port"
mariadb -h127.0.0.1 -P"$port" -uapp -p"$pw" plain \
    -e 'CREATE TABLE gen (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))' ||
    fail "CREATE TABLE gen through the proxy"

# judge NAME COMMAND...: COMMAND HOST PORT USER PASSWORD DB runs through the
# proxy (with --gen) and on the plain server; the outputs must match
judge() {
    local name=$1
    shift
    "$@" 127.0.0.1 "$port" app "$pw" plain --gen >"$work/$name.px" 2>&1 ||
        fail "$name through the proxy: $(tail -5 "$work/$name.px")"
    "$@" 127.0.0.1 "${ports[0]}" dal dalpass plain >"$work/$name.plain" 2>&1 ||
        fail "$name on the plain server: $(tail -5 "$work/$name.plain")"
    grep -v '^generated id' "$work/$name.px" | diff -u "$work/$name.plain" - >"$work/$name.diff" ||
        fail "$name: the proxy and the server differ:
$(head -60 "$work/$name.diff")"
    grep -q '^generated id' "$work/$name.px" || fail "$name: no generated id checked"
    echo "$name: $(grep -c . "$work/$name.plain") lines the same through the proxy"
}

# Python: Debian's python3, where python3-mysqldb installs MySQLdb
if /usr/bin/python3 -c 'import MySQLdb' 2>/dev/null; then
    judge mysqldb /usr/bin/python3 "$tests/suites/connectors/mysqldb_smoke.py"
else
    fail "MySQLdb is not installed (tests/harness/deps.sh installs python3-mysqldb)"
fi

if px_mysql2; then
    MYSQL2_DIR=$npmdir judge mysql2 node "$tests/suites/connectors/mysql2_smoke.js"
fi

px_finish "connector tests"
