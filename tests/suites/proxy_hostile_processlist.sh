#!/usr/bin/env bash
# proxy_hostile_processlist.sh -- one proxy user reads another's
# statements: SHOW FULL PROCESSLIST and information_schema.PROCESSLIST
# through dal-proxy list every client's Info (a secret in a running
# statement included), while a server shows a user without the PROCESS
# privilege only its own threads, and dal-proxy's own KILL already
# refuses another user's connection (1095) as a server does.  The same
# two users directly on the server are the reference.  Starts its own
# MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

hostile_proxy '[proxy user alice]' 'password = alice-s3cret' '[proxy user mallory]' \
    'password = mallory-s3cret'
# the same two accounts on the server, neither with PROCESS
mariadb -h127.0.0.1 -P"${ports[0]}" -uroot -e "
CREATE USER alice@'%' IDENTIFIED BY 'alice-s3cret';
CREATE USER mallory@'%' IDENTIFIED BY 'mallory-s3cret';
GRANT SELECT ON shop.* TO alice@'%';
GRANT SELECT ON shop.* TO mallory@'%';"

secret='card 4111-1111-1111-1111'
# alice's statement runs 6 s; mallory looks meanwhile
look() { # PORT: what mallory sees of alice's statement
    mariadb -h127.0.0.1 -P"$1" -ualice -palice-s3cret shop -N \
        -e "SELECT SLEEP(6), '$secret'" >/dev/null &
    local bg=$!
    sleep 2
    mariadb -h127.0.0.1 -P"$1" -umallory -pmallory-s3cret shop -N -e 'SHOW FULL PROCESSLIST;
        SELECT USER, INFO FROM information_schema.PROCESSLIST'
    wait "$bg"
}
server=$(look "${ports[0]}")
proxy=$(look "$port")
echo "on the server, mallory sees:"; echo "$server"
echo "through dal-proxy, mallory sees:"; echo "$proxy"
if grep -q "$secret" <<<"$server"; then
    fail "the reference is wrong: the server shows mallory alice's statement"
fi
if grep -q "$secret" <<<"$proxy"; then
    fail "dal-proxy shows user mallory user alice's running statement (and its secret) in the process list; a server shows a user without PROCESS only its own threads"
fi
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_processlist
