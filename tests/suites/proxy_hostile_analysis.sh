#!/usr/bin/env bash
# proxy_hostile_analysis.sh -- a statement of many UNION arms on a sharded
# table: the proxy's CPU to route it must grow with its size, not with its
# cube, and it runs on the client's I/O thread meanwhile
# (tests/suites/proxy_hostile_analysis.py).  Starts its own MariaDB servers;
# never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_sharded orders 4 'threads = 1'
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_analysis.py" "$port" "$pid" "$password" ||
    fail "proxy_hostile_analysis.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_analysis
