#!/usr/bin/env bash
# proxy_hostile_charset.sh -- character sets with a 0x5C (backslash)
# second byte (gbk, sjis, big5, cp932) set by a hostile client: a
# prepared statement's parameter must stay inside its quotes, and an
# INSERT or UPDATE must not be routed narrower than the server reads it
# (tests/suites/proxy_hostile_charset.py, raw COM_QUERY and
# COM_STMT_EXECUTE); dal-proxy refuses them (1115) in every form a client
# can name one.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_sharded_proxy orders 4 user_id
mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop \
    -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT, note VARCHAR(100))'
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_charset.py" "$port" "$PX_TEST_PASSWORD" ||
    fail "proxy_hostile_charset.py (above)"
px_stop "${pids[-1]}" "$work/px.log"
px_finish proxy_hostile_charset
