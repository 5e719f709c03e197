#!/usr/bin/env bash
# columns_proxy_test.sh -- INSERT without a column list through dal-proxy
# with the `mariadb` client, after the table was dropped and created again
# with its columns in another order: through the proxy, directly on the
# servers, and by restoring a mariadb-dump (DROP TABLE, CREATE TABLE,
# INSERT ... VALUES) through the proxy.  Every answer is compared with the
# same SQL run on an unsharded table of one server.  Also: the dump's
# statements longer than [dal] sql_cache_max_statement are not kept by the
# analysis cache.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 2 --db 'shard_%d' --db plain
port=$("$harness/cluster.sh" free-port)
metrics=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='app-s3cret'
{
    printf '[monitor prometheus]\naddress = 127.0.0.1:%s\n' "$metrics"
    px_ini_sharded "sql_cache_max_statement = 4K"
    px_ini_table orders 4 user_id mod
    cat <<EOF
[proxy]
listen = 127.0.0.1:$port
database = shop
[proxy user app]
password = \${PX_TEST_PASSWORD}
EOF
} >"$work/px.ini"
px_start "$work/px.ini" "$port"

px() { mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop -N "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain -N "$@"; }
both() { px -e "$1" || fail "through the proxy: $1"; plain -e "$1" || fail "plain: $1"; }
# same SQL WANT: the proxy's answer is the plain server's, and WANT
same() {
    local a b
    a=$(px -e "$1" 2>&1) || fail "through the proxy: $1: $a"
    b=$(plain -e "$1" 2>&1) || fail "plain: $1: $b"
    [ "$a" = "$b" ] || fail "$1: the proxy says '$a', the server '$b'"
    [ "$a" = "$2" ] || fail "$1: '$a', not '$2'"
}
# physical TABLE_POS SQL: SQL on the server of physical table orders_POS
physical() {
    local i=$(($1 / 2))
    mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass "shard_$i" -N -e "$2"
}

# 1. through the proxy
both "CREATE TABLE orders (id BIGINT, user_id BIGINT)"
both "INSERT INTO orders VALUES (1, 5)"
both "DROP TABLE orders"
both "CREATE TABLE orders (user_id BIGINT, id BIGINT)"
both "INSERT INTO orders VALUES (7, 100)"
same "SELECT id, user_id FROM orders WHERE user_id = 7" $'100\t7'
[ "$(physical 3 'SELECT id FROM orders_3')" = 100 ] || fail "row (100, 7) not in orders_3"

# 2. on the servers, behind the proxy's back
for pos in 0 1 2 3; do
    physical "$pos" "DROP TABLE orders_$pos; CREATE TABLE orders_$pos (id BIGINT, user_id BIGINT)"
done
plain -e "DROP TABLE orders; CREATE TABLE orders (id BIGINT, user_id BIGINT)"
both "INSERT INTO orders VALUES (8, 200)"
same "SELECT id, user_id FROM orders WHERE user_id = 200" $'8\t200'
[ "$(physical 0 'SELECT id FROM orders_0')" = 8 ] || fail "row (8, 200) not in orders_0"

# 3. a dump restored through the proxy: its table has the columns the
# other way round, and its INSERTs name none
plain -e "DROP TABLE IF EXISTS orders; CREATE TABLE orders (user_id BIGINT, id BIGINT, note VARCHAR(64))"
{
    printf 'INSERT INTO orders VALUES '
    for i in $(seq 1 400); do
        [ "$i" = 1 ] || printf ', '
        printf "(%d, %d, 'a note long enough to make the statement long %d')" "$i" $((i + 10000)) "$i"
    done
    printf ';\n'
} | plain
mariadb-dump -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass --skip-add-locks --skip-lock-tables \
    --skip-disable-keys --skip-comments plain orders >"$work/dump.sql"
grep -q '^DROP TABLE' "$work/dump.sql" && grep -q '^INSERT INTO `orders` VALUES' "$work/dump.sql" ||
    fail "the dump is not what the test needs: $(head -c 600 "$work/dump.sql")"
px <"$work/dump.sql" || fail "the dump did not restore through the proxy"
same "SELECT COUNT(*), SUM(id), SUM(user_id) FROM orders" $'400\t4080200\t80200'
same "SELECT id, user_id, note FROM orders WHERE user_id = 7" \
    $'10007\t7\ta note long enough to make the statement long 7'
[ "$(physical 3 'SELECT id FROM orders_3 WHERE user_id = 7')" = 10007 ] ||
    fail "row (10007, 7) not in orders_3"
# the dump's INSERT is longer than sql_cache_max_statement: analysed, not kept
sleep 1.5
m=$(exec 3<>"/dev/tcp/127.0.0.1/$metrics" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3)
uncached=$(printf '%s\n' "$m" | awk '$1 == "dal_sql_cache_uncached_total" { print $2 }')
bytes=$(printf '%s\n' "$m" | awk '$1 == "dal_sql_cache_bytes" { print $2 }')
[ -n "$uncached" ] && [ "$uncached" -ge 1 ] || fail "dal_sql_cache_uncached_total is '$uncached'"
[ -n "$bytes" ] && [ "$bytes" -lt 65536 ] || fail "dal_sql_cache_bytes is '$bytes' after a few small statements"

px_stop "${pids[0]}" "$work/px.log"
px_finish columns_proxy_test
