#!/usr/bin/env bash
# xa_recovery_test.sh -- XA transactions left in doubt by a crash are
# finished within seconds, with the default settings (xa_grace 60s,
# xa_recover_interval 30s).  Four clients move money between accounts on
# two nodes through dal-proxy in xa mode (the decision log on a third
# server), and:
#   1. the proxy is killed (SIGKILL) mid-run and started again at once: no
#      branch the dead proxy left is in doubt 10 s after the restart;
#   2. a second proxy shares the log and the first is never restarted: the
#      survivor finishes the dead one's branches within 10 s, once when the
#      survivor already holds the recovery lease and once when the dead one
#      held it;
#   3. the log's server is killed and restarted during the run: the lease
#      is taken again and nothing is left in doubt;
# after each, the sum of the balances is exact.  A kill that happens to
# leave no branch prepared is tried again (the test needs one).  Then a
# statement that times out on a row a branch in doubt holds gets an error
# naming the branch.  "Within 10 s" is a deadline polled for, not a speed
# threshold.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 3 --db 'shard_%d' --db plain
export PX_TEST_PASSWORD='app-s3cret'
NACCT=20
TOTAL=100000
write_ini() { # FILE PORT [DAL LINE...]
    local file=$1 port=$2
    shift 2
    {
        px_ini_sharded "transaction_mode = xa" "xa_log = xalog" "$@"
        px_ini_table acct 2 id mod
        cat <<INI
[datasource xalog]
master = mysql://dal:dalpass@127.0.0.1:${ports[2]}/plain
[proxy]
listen = 127.0.0.1:$port
database = shop
[proxy user app]
password = \${PX_TEST_PASSWORD}
INI
    } >"$file"
}
# the CLI's own file: it does not take the lease (xa_recover_interval = 0)
write_ini "$work/cli.ini" "$("$harness/cluster.sh" free-port)" "xa_recover_interval = 0"
dal() { "$builddir/tools/dal" -c "$work/cli.ini" "$@"; }
dal xa init >/dev/null || fail "dal xa init"

declare -A port
for p in a b c; do
    port[$p]=$("$harness/cluster.sh" free-port)
    write_ini "$work/$p.ini" "${port[$p]}"
done
declare -A ppid
start() { # PROXY: started, its pid in ppid
    px_start "$work/$1.ini" "${port[$1]}"
    ppid[$1]=${pids[-1]}
}
px() { local p=$1; shift; mariadb -h127.0.0.1 -P"${port[$p]}" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
now_ms() { date +%s%3N; }

# ---- the accounts ------------------------------------------------------------
start a
px a -e "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)"
for ((i = 0; i < NACCT; i++)); do echo "INSERT INTO acct VALUES ($i, $((TOTAL / NACCT)));"; done | px a
sum() { px "$1" -N -e "SELECT SUM(bal) FROM acct"; }
[ "$(sum a)" = "$TOTAL" ] || fail "the accounts: $(sum a)"

# ---- the clients: transfers from an even account (ds0) to an odd one (ds1)
# (rows taken in that order, so no deadlock across the nodes), 100 per
# mariadb run, which stops at its first error (a lost proxy, a lock wait):
# the transaction it was in is then rolled back or left to recovery
transfers() { # SEED
    awk -v seed="$1" -v n="$NACCT" 'BEGIN {
        srand(seed)
        for (i = 0; i < 100; i++) {
            a = 2 * int(rand() * n / 2); b = 2 * int(rand() * n / 2) + 1; k = int(rand() * 21) - 10
            printf "BEGIN; UPDATE acct SET bal = bal - %d WHERE id = %d; UPDATE acct SET bal = bal + %d WHERE id = %d; COMMIT;\n", k, a, k, b
        }
    }'
}
cpids=()
clients() { # PROXY: 4 clients on it until clients_stop
    local n
    rm -f "$work/stop"
    cpids=()
    for n in 1 2 3 4; do
        (
            round=0
            while [ ! -e "$work/stop" ]; do
                round=$((round + 1))
                transfers "$((RANDOM * 100 + n * 7 + round))" |
                    px "$1" --skip-reconnect >/dev/null 2>&1 || sleep 0.2
            done
        ) &
        cpids+=($!)
    done
}
clients_stop() {
    local p _
    touch "$work/stop"
    for _ in $(seq 300); do
        for p in "${cpids[@]}"; do kill -0 "$p" 2>/dev/null && break; p=; done
        [ -z "${p:-}" ] && break
        sleep 0.1
    done
    for p in "${cpids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    cpids=()
}

# dal's branches prepared on the data servers, one "GTRID BQUAL" a line
in_doubt() {
    local i
    for i in 0 1; do
        mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass -N -e "XA RECOVER" |
            awk '$4 ~ /^dal:/ { print substr($4, 1, $2) " " substr($4, $2 + 1) }'
    done | sort
}
# poll until none of the branches in $work/doubt is prepared any more;
# what is left after 10 s is a failure (WHAT names the case)
finished_within_10s() { # WHAT
    local t0 left
    t0=$(now_ms)
    while :; do
        left=$(in_doubt | comm -12 - "$work/doubt")
        [ -z "$left" ] && break
        if [ $(($(now_ms) - t0)) -gt 10000 ]; then
            fail "$1: still in doubt 10 s later: $(echo "$left" | tr '\n' ' ')"
            return 1
        fi
        sleep 0.2
    done
    echo "$1: $(wc -l <"$work/doubt") branch(es) in doubt finished in $(($(now_ms) - t0)) ms"
}
# run clients on PROXY and SIGKILL it until a kill leaves a branch prepared
# (the branches into $work/doubt); RESTART: start it again when a kill left
# none, for the next try
kill_in_flight() { # PROXY
    local try
    for try in $(seq 20); do
        clients "$1"
        sleep 2
        kill -9 "${ppid[$1]}"
        wait "${ppid[$1]}" 2>/dev/null || true
        in_doubt >"$work/doubt"
        if [ -s "$work/doubt" ]; then
            echo "kill -9 of proxy $1 (try $try) left $(wc -l <"$work/doubt") branch(es) prepared"
            return 0
        fi
        clients_stop
        start "$1"
    done
    fail "20 kills of proxy $1 left no branch prepared"
    return 1
}
# the lease: "HOLDER_PID ALIVE" from `dal xa list --json`
lease() {
    dal xa list --json | sed -n 's/.*"lease":{"holder":"[^"]*:\([0-9]*\)",.*"alive":\([a-z]*\)}.*/\1 \2/p'
}
lease_is() { # PID: within 10 s the lease is PID's, alive
    local _
    for _ in $(seq 50); do
        [ "$(lease)" = "$1 true" ] && return 0
        sleep 0.2
    done
    fail "the lease is '$(lease)', not '$1 true'"
}
all_done() { # WHAT: no branch in doubt at all (clients stopped), the sum exact
    local _ n s
    for _ in $(seq 50); do
        n=$(in_doubt | wc -l)
        [ "$n" = 0 ] && break
        sleep 0.2
    done
    [ "$n" = 0 ] || fail "$1: $n branch(es) still in doubt: $(in_doubt | tr '\n' ' ')"
    s=$(mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass -N shard_0 -e "SELECT SUM(bal) FROM acct_0")
    s=$((s + $(mariadb -h127.0.0.1 -P"${ports[1]}" -udal -pdalpass -N shard_1 -e "SELECT SUM(bal) FROM acct_1")))
    [ "$s" = "$TOTAL" ] || fail "$1: the balances sum to $s, not $TOTAL"
}

# ---- 1. kill -9 and restart ----------------------------------------------------
lease_is "${ppid[a]}"
kill_in_flight a
start a # at once; the clients are still trying
finished_within_10s "restart"
lease_is "${ppid[a]}"
clients_stop
all_done "restart"

# ---- 2. a survivor ----------------------------------------------------------------
# a holds the lease; b dies
start b
kill_in_flight b
finished_within_10s "survivor holding the lease"
clients_stop
all_done "survivor holding the lease"
# a (the holder) dies; c takes the lease over
start c
kill_in_flight a
finished_within_10s "survivor taking the lease over"
lease_is "${ppid[c]}"
clients_stop
all_done "survivor taking the lease over"

# ---- 3. the log's server restarted during the run --------------------------------
clients c
sleep 2
"$harness/cluster.sh" kill "$work/c" m2 >/dev/null
sleep 1
"$harness/cluster.sh" restart "$work/c" m2 >/dev/null
sleep 2
clients_stop
lease_is "${ppid[c]}"
all_done "the log's server restarted"
grep -q "recovery lease lost" "$work/c.log" || fail "proxy c did not see its lease lost: $(tail -5 "$work/c.log")"

# ---- a lock wait on a row a branch in doubt holds ------------------------------
mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass -e "SET GLOBAL innodb_lock_wait_timeout = 1"
port[d]=$("$harness/cluster.sh" free-port)
write_ini "$work/d.ini" "${port[d]}"
start d # connections made now wait 1 s for a lock
# an undecided branch (it changes the row: a branch that changes nothing
# keeps no lock once prepared) of a live coordinator (this script holds
# its lock)
gtrid="dal:tester:1:$(date +%s):1"
mkfifo "$work/holder"
mariadb -h127.0.0.1 -P"${ports[2]}" -udal -pdalpass plain <"$work/holder" >/dev/null 2>&1 &
holder=$!
exec 7>"$work/holder"
echo "DO GET_LOCK('dal_xa_live:tester:1', 0); INSERT INTO dal_xa_instance VALUES ('tester:1', NOW(6));" >&7
mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass shard_0 -e \
    "XA START '$gtrid','ds0'; UPDATE acct_0 SET bal = bal + 1 WHERE id = 2; XA END '$gtrid','ds0'; XA PREPARE '$gtrid','ds0'"
out=$(px d -e "UPDATE acct SET bal = bal + 0 WHERE id = 2" 2>&1) && fail "the UPDATE of a row held by $gtrid did not wait"
grep -q "Lock wait timeout" <<<"$out" || fail "lock wait: $out"
grep -q "in doubt.*recovery will finish.*$gtrid (no decision yet, [0-9]* s old)" <<<"$out" ||
    fail "the lock wait does not name the branch in doubt: $out"
# the coordinator gone, recovery rolls its branch back without waiting for xa_grace
exec 7>&-
wait "$holder" 2>/dev/null || true
echo "$gtrid ds0" >"$work/doubt"
in_doubt | grep -q "^$gtrid ds0$" || fail "the hand-made branch is not prepared"
finished_within_10s "a dead coordinator's undecided branch"
all_done "the end"
px_finish xa_recovery_test
