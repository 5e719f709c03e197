#!/usr/bin/env bash
# proxy_locks_test.sh -- read locks and the process list through dal-proxy,
# judged by PyMySQL against the proxy's own server (tests/suites/proxy_locks.py):
# FLUSH TABLES ... WITH READ LOCK and FOR EXPORT hold until UNLOCK TABLES,
# for the client's later statements too; SHOW STATUS counts the proxy's clients as
# Threads_connected; the idle_*transaction_timeout variables close the
# client's connection as a server does; information_schema.PROCESSLIST
# shows the server's State of a client waiting for a lock.  A pass-through
# configuration (one datasource, the server's own accounts).  Starts its own
# MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db test
px_passthrough test
px_start "$work/px.ini" "$port"
/usr/bin/python3 "$srcdir/tests/suites/proxy_locks.py" "$port" "${ports[0]}" ||
    fail "the proxy and the server differ (above)"
px_stop "${pids[0]}" "$work/px.log"
px_finish "read locks and the process list through dal-proxy"
