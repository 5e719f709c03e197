#!/usr/bin/env bash
# xa_proxy_test.sh -- transactions over several nodes through dal-proxy:
# `SET dal_transaction_mode` with the mariadb client, then sysbench's
# oltp_read_write WITH its transactions (no --skip_trx) on a table sharded
# over 2 servers and 8 physical tables, in multi and in xa mode ([dal]
# transaction_mode), 0 errors, and the same rows as the same run on one
# unsharded server.  Starts its own MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

command -v sysbench >/dev/null || { echo "FAIL: sysbench is not installed (tests/harness/deps.sh installs it)" >&2; exit 1; }
px_cluster 2 --db 'shard_%d' --db plain
export PX_TEST_PASSWORD='app-s3cret'
write_ini() { # FILE PORT MODE
    {
        px_ini_sharded "transaction_mode = $3" "xa_log = xalog"
        px_ini_table sbtest1 8 id hash
        px_ini_table acct 2 id mod
        cat <<INI
[datasource xalog]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/plain
[proxy]
listen = 127.0.0.1:$2
database = shop
[proxy user app]
password = \${PX_TEST_PASSWORD}
INI
    } >"$1"
}
declare -A pport
for mode in single multi xa; do
    pport[$mode]=$("$harness/cluster.sh" free-port)
    write_ini "$work/$mode.ini" "${pport[$mode]}" "$mode"
done
"$builddir/tools/dal" -c "$work/xa.ini" xa init >/dev/null || fail "dal xa init"
for mode in single multi xa; do px_start "$work/$mode.ini" "${pport[$mode]}"; done
px() { local p=$1; shift; mariadb -h127.0.0.1 -P"$p" -uapp -p"$PX_TEST_PASSWORD" shop "$@"; }
plain() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass plain "$@"; }

# ---- SET dal_transaction_mode through the proxy --------------------------
px "${pport[single]}" -e "CREATE TABLE acct (id INT PRIMARY KEY, bal INT)"
px "${pport[single]}" -e "INSERT INTO acct VALUES (0, 100), (1, 100)"
# single: the second node is refused
if px "${pport[single]}" -e "BEGIN; UPDATE acct SET bal = bal - 5 WHERE id = 0; UPDATE acct SET bal = bal + 5 WHERE id = 1; COMMIT" 2>/dev/null; then
    fail "single mode took a second node"
fi
for m in multi xa; do
    px "${pport[single]}" -e "SET dal_transaction_mode = '$m'; BEGIN; UPDATE acct SET bal = bal - 5 WHERE id = 0; UPDATE acct SET bal = bal + 5 WHERE id = 1; COMMIT" ||
        fail "SET dal_transaction_mode = $m"
done
# a hint on BEGIN: that transaction only
px "${pport[single]}" --comments -e "BEGIN /*+ dal transaction_mode=xa */; UPDATE acct SET bal = bal - 5 WHERE id = 0; UPDATE acct SET bal = bal + 5 WHERE id = 1; COMMIT" ||
    fail "BEGIN /*+ dal transaction_mode=xa */"
out=$(px "${pport[single]}" -N -e "SELECT id, bal FROM acct ORDER BY id" 2>&1 | tr '\t\n' ',;')
[ "$out" = "0,85;1,115;" ] || fail "after two transfers: '$out'"
out=$(px "${pport[single]}" -e "SET dal_transaction_mode = 'two'" 2>&1) && fail "a bad mode was taken"
grep -q "single, multi or xa" <<<"$out" || fail "bad mode: $out"
# ROLLBACK in xa: both nodes
px "${pport[xa]}" -e "BEGIN; UPDATE acct SET bal = 0 WHERE id = 0; UPDATE acct SET bal = 0 WHERE id = 1; ROLLBACK"
out=$(px "${pport[xa]}" -N -e "SELECT SUM(bal) FROM acct")
[ "$out" = 200 ] || fail "after ROLLBACK: '$out'"

# ---- sysbench oltp_read_write with transactions ----------------------------
sbopts=(--tables=1 --table-size=1000 --auto_inc=off --rand-seed=7 --threads=1 --events=200)
sbplain=(--mysql-host=127.0.0.1 --mysql-port="${ports[0]}" --mysql-user=dal --mysql-password=dalpass --mysql-db=plain)
sum_sql='SELECT COUNT(*), SUM(k), SUM(CRC32(CONCAT_WS(0x2c, id, k, c, pad))) FROM sbtest1'
sysbench oltp_read_write "${sbopts[@]}" "${sbplain[@]}" prepare >"$work/sb.out" 2>&1 ||
    fail "sysbench prepare: $(tail -3 "$work/sb.out")"
plain -e "RENAME TABLE sbtest1 TO sbtest1_start"
for mode in multi xa; do
    sbpx=(--mysql-host=127.0.0.1 --mysql-port="${pport[$mode]}" --mysql-user=app --mysql-password="$PX_TEST_PASSWORD" --mysql-db=shop)
    # the same rows in the plain server and through the proxy
    plain -e "DROP TABLE IF EXISTS sbtest1; CREATE TABLE sbtest1 LIKE sbtest1_start; INSERT INTO sbtest1 SELECT * FROM sbtest1_start"
    px "${pport[$mode]}" -e "DROP TABLE IF EXISTS sbtest1" 2>/dev/null || true
    sysbench oltp_read_write "${sbopts[@]}" "${sbpx[@]}" --table-size=0 prepare >"$work/sb.out" 2>&1 ||
        fail "sysbench prepare through the proxy ($mode): $(tail -3 "$work/sb.out")"
    mariadb-dump -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass --no-create-info --compact plain sbtest1 |
        px "${pport[$mode]}" || fail "loading sysbench's rows through the proxy ($mode)"
    for target in px plain; do
        if [ "$target" = px ]; then conn=("${sbpx[@]}"); else conn=("${sbplain[@]}"); fi
        sysbench oltp_read_write "${sbopts[@]}" "${conn[@]}" run >"$work/sb.$mode.$target" 2>&1 ||
            fail "sysbench oltp_read_write ($mode, $target): $(grep -m3 FATAL "$work/sb.$mode.$target")"
        errs=$(awk '/ignored errors:/ {print $3; exit}' "$work/sb.$mode.$target")
        [ "$errs" = 0 ] || fail "sysbench oltp_read_write ($mode, $target): $errs ignored errors"
    done
    got=$(px "${pport[$mode]}" -N -e "$sum_sql")
    want=$(plain -N -e "$sum_sql")
    [ -n "$got" ] && [ "$got" = "$want" ] || fail "sysbench $mode: the proxy's sbtest1 is '$got', the plain server's '$want'"
    echo "sysbench oltp_read_write through dal-proxy, $mode: $(grep -m1 'transactions:' "$work/sb.$mode.px" | xargs)"
done
# nothing left in doubt
for i in 0 1; do
    n=$(mariadb -h127.0.0.1 -P"${ports[$i]}" -udal -pdalpass -N -e "XA RECOVER" | grep -c 'dal:' || true)
    [ "$n" = 0 ] || fail "server $i: $n XA branches left"
done
px_finish xa_proxy_test
