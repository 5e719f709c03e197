#!/usr/bin/env bash
# reshard_pause_test.sh -- `dal reshard copy` gives way to the servers:
#   --max-load   with three connections sleeping in SELECT SLEEP() on one
#                old master (Threads_running above the limit, which is the
#                masters' own figure when idle), the copy reports "paused:
#                old1 Threads_running N > L" in status and copies nothing;
#                once they end it goes on by itself and copies every row;
#   --max-lag    with replication stopped on the replica of a new node, the
#                copy reports the replica and copies nothing; after START
#                SLAVE it finishes by itself;
#   Prometheus   dal-proxy's [monitor prometheus] with reshard_state = old0
#                exports the state table's figures: scraped while the copy
#                is paused (phase copying, paused 1, 0 rows copied) and
#                after it (phase copied, every row, ETA 0, the catch-up's
#                lag), checked by value and by promtool.
# Two masters with a replica each.  Starts its own MariaDB servers; never
# skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"
# shellcheck source=tests/harness/reshard_lib.sh
. "$(dirname "$0")/../harness/reshard_lib.sh"
# a paused copy left running would wait forever: the first failure ends the test
fail() { echo "FAIL: $*" >&2; exit 1; }

ROWS=3000
px_cluster 2 --replicas 1 --db 'old_%d' --db 'new_%d'
dal_bin=${DAL_BIN:-$builddir/tools/dal}
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
declare -A rport
while read -r mi _ p; do rport[$mi]=$p; done <"$work/c/replica_ports"
sqlq() { mariadb -h127.0.0.1 -P"$1" -udal -pdalpass -N -e "$2"; }

{
    for i in 0 1; do
        printf '[datasource old%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/old_%d\n' "$i" "${ports[$i]}" "$i"
        printf 'replicas = mysql://dal:dalpass@127.0.0.1:%s/old_%d\n' "${rport[$i]}" "$i"
    done
    printf '[table food]\ndatasource = old\ndb_shard_num = 2\ntable_shard_num = 2\nshard_key = poi\nstrategy = mod\n'
} >"$work/old.ini"
{
    for i in 0 1; do
        printf '[datasource new%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/new_%d\n' "$i" "${ports[$i]}" "$i"
        printf 'replicas = mysql://dal:dalpass@127.0.0.1:%s/new_%d\n' "${rport[$i]}" "$i"
    done
    printf '[table food]\ndatasource = new\ndb_shard_num = 2\ntable_shard_num = 4\nshard_key = poi\nstrategy = mod\n'
} >"$work/new.ini"
dal() { "$dal_bin" -c "$work/old.ini" "$@"; }
mport=$("$harness/cluster.sh" free-port)
pport=$("$harness/cluster.sh" free-port)
{
    cat "$work/old.ini"
    px_ini_proxy "$pport" shop apppass
    printf '[monitor prometheus]\naddress = 127.0.0.1:%s\nreshard_state = old0\n' "$mport"
} >"$work/proxy.ini"
px_start "$work/proxy.ini" "$pport"
scrape() { curl -sf "http://127.0.0.1:$mport/metrics"; }
# the value of one series of the scrape on stdin: metric{labels}
metric() { grep -F "$1 " | awk '{print $2}'; }

dal exec "CREATE TABLE food (id BIGINT PRIMARY KEY, poi BIGINT NOT NULL, name VARCHAR(60))" \
    >/dev/null || fail "create"
reshard_rows "$ROWS" >"$work/rows.sql"
dal shell <"$work/rows.sql" >/dev/null || fail "loading rows"

# rows_copied and detail of the status, as "N|DETAIL"
progress() { dal reshard status --json food | json_get 'str(d["rows_copied"]) + "|" + str(d["detail"])'; }

# the copy started with the limit exceeded: it shows why, copies nothing for
# a while, then (once the cause is gone) finishes by itself
# $1: the detail's expected start; $2: the command that removes the cause
paused_then_done() {
    local want=$1 undo=$2 out p _
    for _ in $(seq 1 100); do
        p=$(progress 2>/dev/null || echo "0|")
        [[ "$p" == "0|$want"* ]] && break
        kill -0 "$cpid" 2>/dev/null || fail "copy ended while it should be paused: $(cat "$work/copy.out")"
        sleep 0.1
    done
    [[ "$p" == "0|$want"* ]] || fail "status while paused: $p (want 0|$want...)"
    out=$(dal reshard status food) || fail "status text"
    grep -q "^food: phase copying ($want" <<<"$out" || fail "status text while paused: $out"
    out=$(scrape) || fail "scrape while paused"
    [ "$(metric 'dal_reshard_phase{table="food",phase="copying"}' <<<"$out")" = 1 ] &&
        [ "$(metric 'dal_reshard_paused{table="food"}' <<<"$out")" = 1 ] &&
        [ "$(metric 'dal_reshard_rows_copied{table="food",source="old0.food_0"}' <<<"$out")" = 0 ] ||
        fail "metrics while paused: $(grep dal_reshard <<<"$out")"
    sleep 2
    p=$(progress)
    [[ "$p" == "0|$want"* ]] || fail "copy went on while paused: $p"
    kill -0 "$cpid" 2>/dev/null || fail "copy ended while paused"
    eval "$undo"
    wait "$cpid" || fail "copy after the pause: $(cat "$work/copy.out")"
    grep -q "reshard food: $want" "$work/copy.out" || fail "copy's message: $(cat "$work/copy.out")"
    p=$(progress)
    [ "$p" = "$ROWS|None" ] || fail "status after the copy: $p"
    n=$("$dal_bin" -c "$work/new.ini" exec --json "SELECT COUNT(*) FROM food" | json_get 'd["rows"][0][0]')
    [ "$n" = "$ROWS" ] || fail "new layout has $n rows, want $ROWS"
}

# ------------------------------------------------------------- --max-load
# the limit: the busiest master's idle figure (the query asking counts)
limit=0
for i in 0 1; do
    v=$(sqlq "${ports[$i]}" "SHOW GLOBAL STATUS LIKE 'Threads_running'" | awk '{print $2}')
    [ "$v" -gt "$limit" ] && limit=$v
done
limit=$((limit + 1))
for _ in 1 2 3; do sqlq "${ports[1]}" "SELECT SLEEP(6)" >/dev/null & pids+=($!); done
for _ in $(seq 1 50); do
    v=$(sqlq "${ports[1]}" "SHOW GLOBAL STATUS LIKE 'Threads_running'" | awk '{print $2}')
    [ "$v" -gt "$limit" ] && break
    sleep 0.1
done
"$dal_bin" -c "$work/old.ini" reshard copy --to "$work/new.ini" --chunk-size 100 \
    --max-load "Threads_running=$limit" food >"$work/copy.out" 2>&1 &
cpid=$!
paused_then_done "paused: old1 Threads_running " "wait ${pids[*]: -3}"
echo "--max-load: paused while old1 was loaded, then copied $ROWS rows"
dal reshard catchup --to "$work/new.ini" food >/dev/null || fail "catch-up"
out=$(scrape) || fail "scrape after the copy"
echo "$out" >"$work/metrics.txt"
python3 - "$ROWS" "$work/metrics.txt" <<'PY' || fail "metrics after the copy: $(grep dal_reshard "$work/metrics.txt")"
import re, sys
rows, text = int(sys.argv[1]), open(sys.argv[2]).read()
m = {}
for line in text.splitlines():
    if line.startswith("dal_reshard_"):
        k, v = line.rsplit(" ", 1)
        m[k] = float(v)
assert m['dal_reshard_phase{table="food",phase="caught-up"}'] == 1, m
assert m['dal_reshard_paused{table="food"}'] == 0
copied = {k: v for k, v in m.items() if k.startswith("dal_reshard_rows_copied{")}
assert len(copied) == 2 and sum(copied.values()) == rows, copied
est = sum(v for k, v in m.items() if k.startswith("dal_reshard_rows_estimated{"))
assert est == rows, est
assert m['dal_reshard_eta_seconds{table="food"}'] == 0
assert m['dal_reshard_rows_per_second{table="food"}'] > 0
lags = [k for k in m if k.startswith("dal_reshard_lag_seconds{")]
assert sorted(lags) == ['dal_reshard_lag_seconds{table="food",source="binlog:old%d"}' % i
                        for i in (0, 1)], lags
PY
promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics"
echo "Prometheus: the copy's figures scraped from dal-proxy while paused and after"

# -------------------------------------------------------------- --max-lag
dal reshard abort --to "$work/new.ini" food >/dev/null || fail "abort"
sqlq "${rport[0]}" "STOP SLAVE" || fail "stop slave"
"$dal_bin" -c "$work/old.ini" reshard copy --to "$work/new.ini" --chunk-size 100 \
    --max-lag 5 food >"$work/copy.out" 2>&1 &
cpid=$!
# old0's replica is m0's: the old layout's first node names it
paused_then_done "paused: old0 replica 127.0.0.1:${rport[0]} replication stopped" \
    "sqlq ${rport[0]} 'START SLAVE'"
echo "--max-lag: paused while replication was stopped, then copied $ROWS rows"
echo "reshard_pause_test: ok"
