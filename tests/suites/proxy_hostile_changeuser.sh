#!/usr/bin/env bash
# proxy_hostile_changeuser.sh -- a client that sends COM_CHANGE_USER and
# never answers the AuthSwitchRequest must be closed by a deadline, as any
# client in a login or idle in the command phase is
# (tests/suites/proxy_hostile_changeuser.py).  Starts its own MariaDB
# server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db shop
port=$("$harness/cluster.sh" free-port)
password='hostile-s3cret'
cat >"$work/px.ini" <<EOF
[datasource ds0]
master = mysql://root@127.0.0.1:${ports[0]}/shop
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$port
database = shop
connect_timeout = 2
[proxy user app]
password = $password
EOF
px_start "$work/px.ini" "$port"
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_changeuser.py" "$port" "$password" ||
    fail "proxy_hostile_changeuser.py (above)"
px_stop "${pids[-1]}" "$work/px.log"
px_finish proxy_hostile_changeuser
