#!/usr/bin/env bash
# proxy_limits_test.sh -- dal-proxy bounded in memory and time against
# hostile clients (tests/suites/proxy_limits.py, raw sockets): handshake packets
# over the limit before authentication, long data over
# max_allowed_packet, pipelined replies never read, handshakes trickled
# past connect_timeout, a second dal-proxy on the same address, and the
# memory back near where it started after a 64 MB statement and 600 of
# 1 MB.  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db shop
port=$("$harness/cluster.sh" free-port)
password='limits-s3cret'
# the 64 MB statement must fit the server's packets too
mariadb -h127.0.0.1 -P"${ports[0]}" -uroot -e 'SET GLOBAL max_allowed_packet = 268435456'
cat >"$work/px.ini" <<EOF
[datasource ds0]
master = mysql://root@127.0.0.1:${ports[0]}/shop
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$port
database = shop
threads = 2
max_connections = 30
max_allowed_packet = 100663296
connect_timeout = 2
[proxy user root]
password = $password
EOF
px_start "$work/px.ini" "$port"
pid=${pids[-1]}
py=/usr/bin/python3

"$py" "$tests/suites/proxy_limits.py" "$port" "$pid" "$password" warm preauth longdata pipeline \
    handshake end || fail "proxy_limits.py: the attacks (above)"

# ---- a second dal-proxy on the same listen address ----------------------
if out=$("$proxy_bin" -c "$work/px.ini" --check 2>&1); then
    fail "dal-proxy --check passes while another dal-proxy listens on 127.0.0.1:$port: $out"
elif ! grep -q "127.0.0.1:$port.*in use" <<<"$out"; then
    fail "dal-proxy --check: no message naming 127.0.0.1:$port in use: $out"
fi
"$proxy_bin" -c "$work/px.ini" >"$work/second.log" 2>&1 &
second=$!
for _ in $(seq 150); do kill -0 "$second" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$second" 2>/dev/null; then
    fail "a second dal-proxy on 127.0.0.1:$port is still running after 15 s"
    kill -9 "$second"
    wait "$second" 2>/dev/null || true
elif wait "$second"; then
    fail "a second dal-proxy on 127.0.0.1:$port exited 0"
elif ! grep -q "127.0.0.1:$port.*in use" "$work/second.log"; then
    fail "a second dal-proxy: no message naming 127.0.0.1:$port in use: $(cat "$work/second.log")"
fi
for i in 1 2 3 4 5 6; do
    got=$(mariadb -h127.0.0.1 -P"$port" -uroot -p"$password" shop -N -e "SELECT $i") ||
        fail "the first dal-proxy does not serve after the second tried to start"
    [ "$got" = "$i" ] || fail "the first dal-proxy answers SELECT $i with '$got'"
done

# ---- memory back after big statements -----------------------------------
"$py" "$tests/suites/proxy_limits.py" "$port" "$pid" "$password" warm big many end ||
    fail "proxy_limits.py: the memory after big statements (above)"

px_stop "$pid" "$work/px.log"
px_finish proxy_limits_test
