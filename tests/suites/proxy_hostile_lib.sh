# proxy_hostile_lib.sh -- sourced by the proxy_hostile_*.sh suites (not run
# by itself): tests/harness/proxy_lib.sh, and one MariaDB server behind a
# pass-through dal-proxy.
# shellcheck shell=bash
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness/proxy_lib.sh"

# hostile_proxy [LINE...]: a server with the schema shop, and dal-proxy on
# port (a free one) serving it as shop to the user app with the password
# $password, the LINEs added to [proxy] (a LINE may open a section of
# its own: [proxy user NAME]); its pid in pid
hostile_proxy() {
    px_cluster 1 --db shop
    port=$("$harness/cluster.sh" free-port)
    password='hostile-s3cret'
    {
        printf '[datasource ds0]\nmaster = mysql://root@127.0.0.1:%s/shop\n' "${ports[0]}"
        printf '[dal]\ndefault_datasource = ds0\n'
        printf '[proxy]\nlisten = 127.0.0.1:%s\ndatabase = shop\n' "$port"
        [ $# -eq 0 ] || printf '%s\n' "$@"
        printf '[proxy user app]\npassword = %s\n' "$password"
    } >"$work/px.ini"
    px_start "$work/px.ini" "$port"
    pid=${pids[-1]}
}

# hostile_sharded TABLE TABLES [LINE...]: two servers, TABLE sharded by
# user_id mod over both in TABLES physical tables (created through the
# proxy: id, user_id, note), and dal-proxy on port serving it as shop to
# the user app with the password $password, the LINEs added to [proxy];
# its pid in pid
hostile_sharded() {
    local table=$1 tables=$2
    shift 2
    px_cluster 2 --db 'shard_%d'
    port=$("$harness/cluster.sh" free-port)
    password='hostile-s3cret'
    {
        px_ini_sharded
        px_ini_table "$table" "$tables" user_id mod
        px_ini_proxy "$port" shop "$password" "$@"
    } >"$work/px.ini"
    px_start "$work/px.ini" "$port"
    pid=${pids[-1]}
    mariadb -h127.0.0.1 -P"$port" -uapp -p"$password" shop \
        -e "CREATE TABLE $table (id INT PRIMARY KEY, user_id INT, note VARCHAR(100))"
}
