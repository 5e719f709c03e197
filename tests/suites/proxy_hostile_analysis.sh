#!/usr/bin/env bash
# proxy_hostile_analysis.sh -- statements of thousands of UNION arms or
# common tables on a sharded table: routed, with the server's rows
# (tests/suites/proxy_hostile_analysis.py).  Starts its own MariaDB servers;
# never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_sharded orders 4 'threads = 1'
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_analysis.py" "$port" "$password" "${ports[0]}" ||
    fail "proxy_hostile_analysis.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_analysis
