#!/usr/bin/env bash
# proxy_hostile_account.sh -- a client cannot change the account dal-proxy's
# statements run as.  Every client's statements run as the datasource's
# account (here dal@'%'), and a MariaDB account may change its own password
# and default role without any privilege: through the proxy, any client's
# SET PASSWORD would lock every client out.  Each form (text, inside an
# executable comment, after comments, SET STATEMENT ... FOR, prepared) must
# get error 1227, and the account keep its password.  Starts its own
# MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/suites/proxy_hostile_lib.sh
. "$(dirname "$0")/proxy_hostile_lib.sh"

px_cluster 1 --db shop
port=$("$harness/cluster.sh" free-port)
password='hostile-s3cret'
{
    printf '[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/shop\n' "${ports[0]}"
    printf '[dal]\ndefault_datasource = ds0\n'
    printf '[proxy]\nlisten = 127.0.0.1:%s\ndatabase = shop\n' "$port"
    printf '[proxy user app]\npassword = %s\n' "$password"
} >"$work/px.ini"
px_start "$work/px.ini" "$port"
pid=${pids[-1]}

px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$password" shop -N "$@" 2>&1; }
for sql in "SET PASSWORD = PASSWORD('owned')" \
    "set /* c */ password for current_user() = password('owned')" \
    "/*!SET PASSWORD = PASSWORD('owned') */" \
    "/*!100000 SET PASSWORD = PASSWORD('owned') */" \
    "SET STATEMENT max_statement_time = 10 FOR SET PASSWORD = PASSWORD('owned')" \
    "SET STATEMENT sql_mode = 'a,b' /* FOR */ FOR /*! SET */ PASSWORD = PASSWORD('owned')" \
    "SET DEFAULT ROLE NONE" \
    "ALTER USER CURRENT_USER() IDENTIFIED BY 'owned'"; do
    out=$(px -e "$sql" || true)
    grep -q "ERROR 1227 (42000)" <<<"$out" || fail "[$sql] was not refused with 1227: $out"
done
# prepared, as a driver with server-side prepared statements sends it
printf '%s\n' "!prepare SET PASSWORD = PASSWORD('owned')" "!prepare /*!ALTER USER */ CURRENT_USER() IDENTIFIED BY 'owned'" |
    "$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$password" shop >"$work/ps.out" 2>&1 || true
[ "$(grep -c '1227 (42000)' "$work/ps.out")" = 2 ] || fail "prepared account changes: $(cat "$work/ps.out")"
# what is not an account change still runs
[ "$(px -e "SET @password = 'x'; SELECT @password")" = "x" ] || fail "SET @password"
[ "$(px -e "SELECT PASSWORD('a') = PASSWORD('a')")" = "1" ] || fail "SELECT PASSWORD()"
# the account is as it was: the proxy and its datasource's user still log in
[ "$(mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass -N -e 'SELECT 1' 2>&1)" = "1" ] ||
    fail "the datasource's account no longer logs in with its password"
[ "$(px -e 'SELECT 2')" = "2" ] || fail "a client through the proxy after the attempts"
px_stop "$pid" "$work/px.log"
px_finish proxy_hostile_account
