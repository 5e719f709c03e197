#!/usr/bin/env bash
# proxy_hostile_stmtids.sh -- a client with 16,000 prepared statements
# closes half in random order, sends COM_STMT_CLOSE of unknown ids back to
# back (no reply, answered on its I/O thread), and finds every statement
# by its id (tests/suites/proxy_hostile_stmtids.py).
# Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_proxy 'threads = 1'
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_stmtids.py" "$port" "$pid" "$password" ||
    fail "proxy_hostile_stmtids.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_stmtids
