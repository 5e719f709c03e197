#!/usr/bin/env bash
# proxy_literals_test.sh -- a generated differential test of how dal-proxy
# reads string literals and comments: statements of many shapes, each
# shape with many hostile literals (quotes, backslashes, comment openers
# in strings, introducers, adjacent strings, executable comments), run in
# both sql_modes (with and without NO_BACKSLASH_ESCAPES) on a table
# sharded by id through the proxy and on an unsharded copy on a server;
# and again in gbk, sjis, big5 or cp932 sessions, text and prepared;
# rows, affected rows, errors and the tables' contents must agree
# (tests/suites/proxy_literals.py).  DAL_LITERALS_SEED and
# DAL_LITERALS_COUNT change the seed (printed) and the number of
# statements.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_sharded_proxy t 4 id
/usr/bin/python3 "$srcdir/tests/suites/proxy_literals.py" "$port" "${ports[0]}" "${ports[1]}" \
    "$PX_TEST_PASSWORD" || fail "the proxy and the server read the statements above differently"
px_stop "${pids[0]}" "$work/px.log"
px_finish proxy_literals_test
