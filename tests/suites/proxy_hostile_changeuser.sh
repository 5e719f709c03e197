#!/usr/bin/env bash
# proxy_hostile_changeuser.sh -- a client that sends COM_CHANGE_USER and
# never answers the AuthSwitchRequest must be closed by a deadline, as any
# client in a login or idle in the command phase is
# (tests/suites/proxy_hostile_changeuser.py).  Starts its own MariaDB
# server; never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_proxy 'connect_timeout = 2'
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_changeuser.py" "$port" "$password" ||
    fail "proxy_hostile_changeuser.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_changeuser
