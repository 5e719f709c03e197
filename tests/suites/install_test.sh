#!/usr/bin/env bash
# install_test.sh SRCDIR -- what a user does: configure --prefix, make
# install, then, with only pkg-config and the installed files:
#   - build the out-of-tree strategy plugin (examples/shard_plugin), drop it
#     into the plugin directory, select it in an INI, and route with it;
#   - build the example application (examples/app) and run it against a
#     throwaway MariaDB cluster.
set -euo pipefail

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/dalinst.XXXXXX")
cleanup() {
    "$src/tests/harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
mkdir -p "$work/build"
(cd "$work/build" && "$src/configure" -q --prefix="$prefix" && make -s -j"$(nproc)" && make -s install) >/dev/null

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset DAL_PLUGIN_DIR
cflags=$(pkg-config --cflags dal) || fail "pkg-config does not know dal"
plugindir=$(pkg-config --variable=plugindir dal)
[ "$plugindir" = "$prefix/lib/dal/plugins" ] || fail "plugindir is '$plugindir'"
for p in shard_mod shard_range shard_hash source_etcd; do
    [ -f "$plugindir/$p.so" ] || fail "$p.so not installed in $plugindir"
done
[ -f "$prefix/include/dal/dal.h" ] && [ -f "$prefix/include/dal/plugin.h" ] || fail "headers not installed"
dal="$prefix/bin/dal"
grep -q "dal 0." <<<"$("$dal" --version)" || fail "dal --version"
grep -q shard_mod <<<"$("$dal" plugins)" || fail "dal plugins does not list shard_mod"
echo "installed into $prefix; pkg-config cflags: $cflags"

# ---- the out-of-tree strategy plugin, built with pkg-config only
cp -r "$src/examples/shard_plugin" "$work/plugin"
make -s -C "$work/plugin" clean >/dev/null 2>&1 || true
make -s -C "$work/plugin" >/dev/null || fail "example plugin does not build"
make -s -C "$work/plugin" install >/dev/null || fail "example plugin does not install"
[ -f "$plugindir/shard_tenant.so" ] || fail "shard_tenant.so not in $plugindir"
grep -q "tenant" <<<"$("$dal" plugins)" || fail "dal plugins does not list the tenant plugin"

cat > "$work/tenant.ini" <<'INI'
[datasource dbOrders0]
master = mysql://dal:dalpass@127.0.0.1:1/orders_0
[datasource dbOrders1]
master = mysql://dal:dalpass@127.0.0.1:1/orders_1
[table orders]
datasource = dbOrders
db_shard_num = 2
table_shard_num = 4
shard_key = tenant
strategy = tenant
strategy.tenants = acme, globex, initech, umbrella
INI
"$dal" -c "$work/tenant.ini" check >/dev/null || fail "config selecting the tenant plugin is rejected"
out=$("$dal" -c "$work/tenant.ini" explain --json --shard-value initech "SELECT * FROM orders")
grep -q '"datasource": *"dbOrders1"' <<<"$out" || fail "tenant initech not routed to dbOrders1: $out"
grep -q 'orders_2' <<<"$out" || fail "tenant initech not routed to orders_2: $out"
if "$dal" -c "$work/tenant.ini" explain --shard-value nobody "SELECT * FROM orders" 2>"$work/err"; then
    fail "unknown tenant was routed"
fi
grep -q "nobody" "$work/err" || fail "unknown tenant error does not name the value: $(cat "$work/err")"
echo "out-of-tree plugin: built with pkg-config, dropped in, selected, routes as declared"

# ---- the example application against a real cluster
cc -O2 -Wall -Wextra $cflags -o "$work/wm_food" "$src/examples/app/wm_food.c" \
    $(pkg-config --libs dal) -Wl,-rpath,"$prefix/lib" || fail "example app does not build"
"$src/tests/harness/cluster.sh" start "$work/c" 2 --db 'product_%d' >/dev/null || fail "cluster did not start"
mapfile -t ports < "$work/c/ports"
cat > "$work/app.ini" <<INI
[datasource dbProductSku0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/product_0
[datasource dbProductSku1]
master = mysql://dal:dalpass@127.0.0.1:${ports[1]}/product_1
[table wm_food]
datasource = dbProductSku
db_shard_num = 2
table_shard_num = 10
shard_key = wm_poi_id
strategy = mod
INI
"$dal" -c "$work/app.ini" exec "CREATE TABLE wm_food (id BIGINT AUTO_INCREMENT PRIMARY KEY, wm_poi_id BIGINT, name VARCHAR(50), price DECIMAL(8,2))" >/dev/null \
    || fail "DDL through the installed dal failed"
"$work/wm_food" "$work/app.ini" 17 noodles 9.90 >/dev/null || fail "app insert failed"
"$work/wm_food" "$work/app.ini" 17 dumplings 15.00 >/dev/null || fail "app insert failed"
menu=$("$work/wm_food" "$work/app.ini" 17)
grep -q "dumplings" <<<"$menu" && grep -q "noodles" <<<"$menu" || fail "app menu: $menu"
# 17 % 10 = 7 -> node 7 / 5 = 1
n=$(mariadb -h127.0.0.1 -P"${ports[1]}" -udal -pdalpass -N -e "SELECT COUNT(*) FROM product_1.wm_food_7 WHERE wm_poi_id = 17")
[ "$n" = 2 ] || fail "rows not in product_1.wm_food_7 (found $n)"
echo "example application: built with pkg-config, rows written and read back on the right node"
echo "install test passed"
