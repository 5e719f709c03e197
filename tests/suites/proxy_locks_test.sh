#!/usr/bin/env bash
# proxy_locks_test.sh -- read locks and the process list through dal-proxy,
# judged by PyMySQL against the proxy's own server (tests/suites/proxy_locks.py):
# FLUSH TABLES ... WITH READ LOCK and FOR EXPORT hold until UNLOCK TABLES,
# for the client's later statements too; SHOW STATUS counts the proxy's clients as
# Threads_connected, those that end without COM_QUIT as Aborted_clients and
# those that end without logging in as Aborted_connects
# (information_schema.GLOBAL_STATUS too); the idle_*transaction_timeout variables close the
# client's connection as a server does; information_schema.PROCESSLIST
# shows the server's State of a client waiting for a lock; a statement over
# max_allowed_packet, prepared, leaves later clients working; a client that
# hangs up while its statement waits for a lock ends that wait as on a
# server (inline and, with inline_io = false, on a worker; inline also
# while other clients read the process list), and its I/O thread answers
# other clients while a KILL QUERY of that statement waits for its server
# (two I/O threads, the datasource behind a relay of the test's that holds
# the KILL back).  A pass-through
# configuration (one datasource, the server's own accounts).  Starts its own
# MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db test
px_passthrough test
locks() { # INI [CASE...]: proxy_locks.py's cases on a fresh dal-proxy
    local ini=$1
    shift
    px_start "$ini" "$port"
    /usr/bin/python3 "$srcdir/tests/suites/proxy_locks.py" "$port" "${ports[0]}" "$@" ||
        fail "the proxy and the server differ (above)${1:+: $*}"
    px_stop "${pids[-1]}" "${ini%.ini}.log"
    unset 'pids[-1]'
}
# (packet_ps as packet: on a fresh pool, whose one idle connection is pinned)
locks "$work/px.ini" packet_ps
locks "$work/px.ini"
{ cat "$work/px.ini"; echo 'inline_io = false'; } >"$work/pxw.ini"
locks "$work/pxw.ini" hangup
gate=$("$harness/cluster.sh" free-port)
{   # (the accounts read at start from the server itself: the relay opens later)
    sed "s|@127.0.0.1:${ports[0]}/|@127.0.0.1:$gate/|" "$work/px.ini"
    printf 'threads = 2\nusers_datasource = dsu\n[datasource dsu]\n'
    printf 'master = mysql://root@127.0.0.1:%s/test\n' "${ports[0]}"
} >"$work/pxg.ini"
GATE_PORT=$gate locks "$work/pxg.ini" hangup_killed
px_finish "read locks and the process list through dal-proxy"
