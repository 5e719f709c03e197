#!/usr/bin/env bash
# proxy_hostile_fanout.sh -- one big statement on a table sharded into 64
# physical tables: the proxy's memory must stay a small multiple of the
# statement, not one copy per table, and the statement's result be the
# server's on an unsharded copy of the table
# (tests/suites/proxy_hostile_fanout.py).  Starts its own MariaDB servers;
# never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_sharded wide 32
rows=$(seq 1 200 | awk '{printf "%s(%d,%d,\"n%d\")", (NR > 1 ? "," : ""), $1, $1 * 7, $1 % 5}')
mariadb -h127.0.0.1 -P"$port" -uapp -p"$password" shop -e "INSERT INTO wide VALUES $rows"
mariadb -h127.0.0.1 -P"${ports[0]}" -uroot -e "CREATE DATABASE plain;
    CREATE TABLE plain.wide (id INT PRIMARY KEY, user_id INT, note VARCHAR(100));
    INSERT INTO plain.wide VALUES $rows"
/usr/bin/python3 "$srcdir/tests/suites/proxy_hostile_fanout.py" "$port" "$pid" "$password" \
    "${ports[0]}" || fail "proxy_hostile_fanout.py (above)"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_fanout
