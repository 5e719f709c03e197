#!/usr/bin/env bash
# proxy_hostile_stmtids.sh -- a client with 16,000 prepared statements
# sends COM_STMT_CLOSE of unknown ids back to back (no reply, answered on
# its I/O thread): the proxy's CPU per packet must not grow with the
# client's statement count (tests/suites/proxy_hostile_stmtids.py).
# Starts its own MariaDB server; never skips.
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
threads = 1
[proxy user app]
password = $password
EOF
px_start "$work/px.ini" "$port"
pid=${pids[-1]}
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_stmtids.py" "$port" "$pid" "$password" ||
    fail "proxy_hostile_stmtids.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_stmtids
