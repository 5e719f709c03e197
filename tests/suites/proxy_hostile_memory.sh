#!/usr/bin/env bash
# proxy_hostile_memory.sh -- memory one authenticated client makes
# dal-proxy hold beyond max_allowed_packet (4 MiB here): COM_STMT_SEND_LONG_DATA
# buffers kept after COM_STMT_RESET, and the text of many prepared
# statements (tests/suites/proxy_hostile_memory.py, raw sockets, the
# proxy's VmRSS).  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_proxy 'max_allowed_packet = 4194304'
for step in prepared longdata; do
    /usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_memory.py" "$port" "$pid" "$password" \
        "$step" || fail "proxy_hostile_memory.py $step (above)"
done
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_memory
