#!/usr/bin/env bash
# xa_test.sh -- transactions over several data nodes (transaction_mode
# multi and xa) against a throwaway MariaDB cluster of three servers:
# tests/live/test_xa (Check), then `dal xa` through the CLI.  A cluster that
# cannot start is a failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalxa.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

if ! "$harness/cluster.sh" start "$work/c" 3 --db 'product_%d' --db plain >"$work/ports"; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
# shellcheck disable=SC1091
source "$work/c/env"
export DAL_TEST_PORTS DAL_TEST_CLUSTER_DIR
export DAL_TEST_CLUSTER_SH="$harness/cluster.sh"
echo "cluster up: ports $DAL_TEST_PORTS"

"$builddir/tests/live/test_xa"

# the CLI: init, list and recover on a branch left by a dead coordinator
read -r p0 p1 p2 <<<"$DAL_TEST_PORTS"
cat >"$work/xa.ini" <<INI
[datasource product_0]
master = mysql://dal:dalpass@127.0.0.1:$p0/product_0
[datasource product_1]
master = mysql://dal:dalpass@127.0.0.1:$p1/product_1
[datasource product_2]
master = mysql://dal:dalpass@127.0.0.1:$p2/product_2
[datasource plain]
master = mysql://dal:dalpass@127.0.0.1:$p0/plain
[dal]
xa_log = plain
transaction_mode = xa
xa_recover_interval = 0
INI
dal="$builddir/tools/dal"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$dal" -c "$work/xa.ini" xa init | grep -q 'ready' || fail "xa init"
gtrid="dal:gone:1:$(( $(date +%s) - 3600 )):1"
"$harness/cluster.sh" client "$work/c" m1 product_1 -e "CREATE TABLE IF NOT EXISTS cli_t (a INT)"
"$harness/cluster.sh" client "$work/c" m1 product_1 \
    -e "XA START '$gtrid','product_1'; INSERT INTO cli_t VALUES (1); XA END '$gtrid','product_1'; XA PREPARE '$gtrid','product_1'"
"$dal" -c "$work/xa.ini" xa list | grep -q "^product_1 $gtrid decision=none" || fail "xa list"
"$dal" -c "$work/xa.ini" xa list --json | grep -q "\"gtrid\":\"$gtrid\"" || fail "xa list --json"
out=$("$dal" -c "$work/xa.ini" xa recover --json)
echo "$out" | grep -q '"rolled_back":1' || fail "xa recover: $out"
out=$("$dal" -c "$work/xa.ini" xa list --json)
case "$out" in *'"branches":[]}') ;; *) fail "branches left: $out" ;; esac
# the lease's last holder (test_xa's instances), gone
echo "$out" | grep -Eq '"lease":\{"holder":"[^"]+:[0-9]+","since":"[0-9 :-]+","held_s":[0-9]+,"alive":false\}' ||
    fail "xa list --json lease: $out"
"$dal" -c "$work/xa.ini" xa list | grep -Eq '^lease holder=[^ ]+:[0-9]+ since=.* alive=no$' || fail "xa list: lease"
n=$("$harness/cluster.sh" client "$work/c" m1 product_1 -N -e "SELECT COUNT(*) FROM cli_t")
[ "$n" = 0 ] || fail "the rolled back branch's row is there"
# xa without a log is refused, naming the key
sed -i '/^xa_log/d' "$work/xa.ini"
if "$dal" -c "$work/xa.ini" check 2>"$work/err"; then fail "xa without xa_log accepted"; fi
grep -q 'xa_log' "$work/err" || fail "$(cat "$work/err")"
echo "xa_test: OK"
