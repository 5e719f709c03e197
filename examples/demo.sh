#!/usr/bin/env bash
# demo.sh -- dal's main job in one minute: a table sharded over four
# MariaDB servers (100 physical tables, MTDDL's `mod` strategy), rows
# written and read through dal, `dal explain` showing where each went, and
# the same table through dal-proxy with the `mariadb` client.
#
# Installs missing Debian packages, builds dal (in _build/), starts a
# throwaway cluster under a temporary directory, and stops it at the end.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
bash tests/harness/deps.sh
if [ ! -x _build/tools/dal ] || [ ! -f _build/plugins/.libs/shard_mod.so ]; then
    echo "building dal ..."
    autoreconf -fi >/dev/null
    mkdir -p _build
    (cd _build && ../configure -q && make -s -j"$(nproc)") >/dev/null
fi
dal="$src/_build/tools/dal"
export DAL_PLUGIN_DIR="$src/_build/plugins/.libs"

work=$(mktemp -d "${TMPDIR:-/tmp}/daldemo.XXXXXX")
trap 'tests/harness/cluster.sh stop "$work/c" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

echo "starting 4 throwaway MariaDB servers ..."
tests/harness/cluster.sh start "$work/c" 4 --db 'product_%d' >/dev/null
mapfile -t ports < "$work/c/ports"

{
    for i in 0 1 2 3; do
        printf '[datasource dbProductSku%d]\nmaster = mysql://dal:${DEMO_PASSWORD}@127.0.0.1:%s/product_%d\n\n' \
            "$i" "${ports[$i]}" "$i"
    done
    cat <<'INI'
[table wm_food]
datasource = dbProductSku      ; nodes dbProductSku0 .. dbProductSku3
db_shard_num = 4
table_shard_num = 100          ; wm_food_0 .. wm_food_99, 25 per node
shard_key = wm_poi_id
strategy = mod                 ; table = v % 100, node = table / 25
INI
} > "$work/demo.ini"
export DEMO_PASSWORD=dalpass
ini="$work/demo.ini"

say "cat demo.ini"
cat "$ini"

say "dal -c demo.ini check"
"$dal" -c "$ini" check

say "dal -c demo.ini exec 'CREATE TABLE wm_food (...)'   # DDL runs on all 100 physical tables"
"$dal" -c "$ini" exec "CREATE TABLE wm_food (id BIGINT PRIMARY KEY, wm_poi_id BIGINT NOT NULL, name VARCHAR(64), price DECIMAL(10,2))"

rows=("1 12345 braised_pork 25.50" "2 12345 fried_rice 12.00" "3 20077 noodles 9.90"
      "4 57 dumplings 15.00" "5 99999 hotpot 88.00" "6 4242 tea 3.50")
for r in "${rows[@]}"; do
    read -r id poi name price <<<"$r"
    "$dal" -c "$ini" exec --shard-value "$poi" \
        "INSERT INTO wm_food (id, wm_poi_id, name, price) VALUES (?, ?, ?, ?)" "$id" "$poi" "$name" "$price" >/dev/null
done
echo "inserted ${#rows[@]} rows through dal, each with its wm_poi_id as the shard value"

say "dal -c demo.ini explain --shard-value 12345 'SELECT name, price FROM wm_food WHERE wm_poi_id = ?' 12345"
"$dal" -c "$ini" explain --shard-value 12345 "SELECT name, price FROM wm_food WHERE wm_poi_id = ?" 12345

say "dal -c demo.ini exec --shard-value 12345 'SELECT id, name, price FROM wm_food WHERE wm_poi_id = ?' 12345"
"$dal" -c "$ini" exec --shard-value 12345 "SELECT id, name, price FROM wm_food WHERE wm_poi_id = ? ORDER BY id" 12345

say "dal -c demo.ini explain --json --shard-value 99999 'SELECT * FROM wm_food'"
"$dal" -c "$ini" explain --json --shard-value 99999 "SELECT * FROM wm_food"

say "where the rows really are (plain SQL straight to each server):"
for i in 0 1 2 3; do
    for r in "${rows[@]}"; do
        read -r id poi name price <<<"$r"
        t=$((poi % 100))
        [ $((t / 25)) -eq "$i" ] || continue
        n=$(mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass -N -e \
            "SELECT COUNT(*) FROM product_$i.wm_food_$t WHERE id = $id")
        printf '  server %d (port %s) product_%d.wm_food_%-2d  id=%s wm_poi_id=%-5s -> %s row\n' \
            "$i" "${ports[$i]}" "$i" "$t" "$id" "$poi" "$n"
    done
done
# the same table for any MySQL client: dal-proxy speaks the MySQL protocol
pport=$(tests/harness/cluster.sh free-port)
{ cat "$ini"; printf '\n[proxy]\nlisten = 127.0.0.1:%s\ndatabase = shop\n[proxy user app]\npassword = ${DEMO_PASSWORD}\n' "$pport"; } > "$work/proxy.ini"
say "dal-proxy -c proxy.ini &   # [proxy] listen = 127.0.0.1:$pport, database = shop, [proxy user app]"
"$src/_build/proxy/dal-proxy" -c "$work/proxy.ini" > "$work/proxy.log" 2>&1 &
proxypid=$!
for _ in $(seq 50); do
    mariadb -h127.0.0.1 -P"$pport" -uapp -p"$DEMO_PASSWORD" shop -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.1
done
say "mariadb -h127.0.0.1 -P$pport -uapp -p shop   # the mariadb client, through dal-proxy"
mariadb -h127.0.0.1 -P"$pport" -uapp -p"$DEMO_PASSWORD" shop --table -e \
    "SHOW TABLES; SELECT id, name, price FROM wm_food WHERE wm_poi_id = 12345 ORDER BY id; SELECT COUNT(*) AS all_rows, SUM(price) AS total FROM wm_food"
kill "$proxypid"
wait "$proxypid" || true

# a short workload with the Prometheus monitor on: watch it with curl
mport=$(tests/harness/cluster.sh free-port)
{ cat "$ini"; printf '\n[monitor prom]\nplugin = prometheus\naddress = 127.0.0.1:%s\n' "$mport"; } > "$work/monitored.ini"
say "dal -c monitored.ini load -- point-select --rows 2000 --threads 2 --duration 3   # with [monitor prom] on 127.0.0.1:$mport"
"$dal" -c "$work/monitored.ini" load -- --cleanup >/dev/null 2>&1 || true   # the demo rows go
"$dal" -c "$work/monitored.ini" load -- --prepare --rows 2000 >/dev/null
"$dal" -c "$work/monitored.ini" load -- point-select --rows 2000 --threads 2 --duration 3 --warmup 0 > "$work/load.out" 2>&1 &
loadpid=$!
sleep 2
say "curl -s http://127.0.0.1:$mport/metrics | grep -E '^dal_(statements|executions)_total'   # while it runs"
curl -s "http://127.0.0.1:$mport/metrics" | grep -E '^dal_(statements|executions)_total' | head -8 || true
wait "$loadpid" || true
cat "$work/load.out"
"$dal" -c "$work/monitored.ini" load -- --cleanup >/dev/null || true

echo
echo "demo done; the cluster is stopped and removed."
