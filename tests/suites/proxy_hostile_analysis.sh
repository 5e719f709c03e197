#!/usr/bin/env bash
# proxy_hostile_analysis.sh -- a statement of many UNION arms on a sharded
# table: the proxy's CPU to route it must grow with its size, not with its
# cube, and it runs on the client's I/O thread meanwhile
# (tests/suites/proxy_hostile_analysis.py).  Starts its own MariaDB servers;
# never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d'
port=$("$harness/cluster.sh" free-port)
password='hostile-s3cret'
{
    px_ini_sharded
    px_ini_table orders 4 user_id mod
    px_ini_proxy "$port" shop "$password" 'threads = 1'
} >"$work/px.ini"
px_start "$work/px.ini" "$port"
pid=${pids[-1]}
mariadb -h127.0.0.1 -P"$port" -uapp -p"$password" shop \
    -e 'CREATE TABLE orders (id INT PRIMARY KEY, user_id INT, note VARCHAR(100))'
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_analysis.py" "$port" "$pid" "$password" ||
    fail "proxy_hostile_analysis.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_analysis
