#!/usr/bin/env bash
# proxy_hostile_memory.sh -- memory one authenticated client makes
# dal-proxy hold beyond max_allowed_packet (4 MiB here): COM_STMT_SEND_LONG_DATA
# buffers kept after COM_STMT_RESET, and the text of many prepared
# statements (tests/suites/proxy_hostile_memory.py, raw sockets, the
# proxy's VmRSS).  Starts its own MariaDB server; never skips.
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
max_allowed_packet = 4194304
[proxy user app]
password = $password
EOF
px_start "$work/px.ini" "$port"
pid=${pids[-1]}
for step in prepared longdata; do
    /usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_memory.py" "$port" "$pid" "$password" \
        "$step" || fail "proxy_hostile_memory.py $step (above)"
done
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_memory
