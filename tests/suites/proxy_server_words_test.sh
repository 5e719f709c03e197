#!/usr/bin/env bash
# proxy_server_words_test.sh -- what a server says reaches dal-proxy's
# client as that server says it (tests/suites/proxy_server_words.py, PyMySQL
# directly and through the proxy, compared): column names of a SELECT over
# information_schema, a syntax error whole in Russian, USE's 1049 in the
# session's lc_messages, SHOW WARNINGS after a failed CALL.  A pass-through
# proxy (the server's own accounts) on one MariaDB server of its own; never
# skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db test
px_passthrough test
px_start "$work/px.ini" "$port"
/usr/bin/python3 "$srcdir/tests/suites/proxy_server_words.py" "${ports[0]}" "$port" ||
    fail "proxy_server_words.py"
px_stop "${pids[-1]}" "$work/px.log"
unset 'pids[-1]'
px_finish proxy_server_words_test
