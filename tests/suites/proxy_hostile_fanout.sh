#!/usr/bin/env bash
# proxy_hostile_fanout.sh -- one big statement on a table sharded into 64
# physical tables: the proxy's memory must stay a small multiple of the
# statement, not one copy per table (tests/suites/proxy_hostile_fanout.py).
# Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_sharded wide 32
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_fanout.py" "$port" "$pid" "$password" ||
    fail "proxy_hostile_fanout.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_fanout
