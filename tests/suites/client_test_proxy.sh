#!/usr/bin/env bash
# client_test_proxy.sh -- MariaDB's C API test program (mariadb-client-test,
# package mariadb-test: prepared statements, result metadata, every
# mysql_* call) through dal-proxy with a pass-through configuration (one
# unsharded datasource).  Its schema is client_test_db, the one every case
# creates (IF NOT EXISTS) and USEs.
#
# tests/data/client_test.list names the cases that apply to a proxy (how they
# were chosen, and why the others do not pass: docs/proxy.md, "Tests").
# Each runs directly against the server, then through the proxy; both must
# pass.  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

command -v mariadb-client-test >/dev/null ||
    { echo "FAIL: mariadb-client-test is not installed (tests/harness/deps.sh installs mariadb-test)" >&2; exit 1; }

px_cluster 1 --db client_test_db
pw=ct-pass
px_passthrough client_test_db "$pw"
px_start "$work/px.ini" "$port"

# ct CASE PORT [options]: one case of mariadb-client-test against PORT,
# its schema kept (-d); its output in $work/out
ct() {
    local name=$1 p=$2
    shift 2
    timeout 20 mariadb-client-test --no-defaults -h127.0.0.1 -P"$p" -uroot -Dclient_test_db -d "$@" "$name" \
        >"$work/out" 2>&1
}

# Every case runs, in the program's order, directly then through the
# proxy: later cases use tables that earlier ones leave, as when the
# program runs them all at once.  The listed ones must pass.
declare -A listed=()
while read -r name; do [ -z "$name" ] || listed[$name]=1; done <"$tests/data/client_test.list"
total=0 direct=0 proxied=0
for name in $(mariadb-client-test -T | tail -n +3); do
    ok=1
    ct "$name" "${ports[0]}" || ok=0
    [ -n "${listed[$name]:-}" ] || { ct "$name" "$port" -p"$pw" || true; continue; }
    total=$((total + 1))
    [ $ok = 1 ] || { fail "$name does not pass directly: $(tail -3 "$work/out")"; continue; }
    direct=$((direct + 1))
    if ct "$name" "$port" -p"$pw"; then
        proxied=$((proxied + 1))
    else
        fail "$name through the proxy: $(grep -m2 -E 'check failed|error' "$work/out" | cut -c1-300)"
    fi
done
[ "$total" = "${#listed[@]}" ] || fail "$total of the ${#listed[@]} listed cases are in mariadb-client-test"

echo "mariadb-client-test: $total cases listed, $direct pass directly, $proxied through the proxy"
px_finish "mariadb-client-test through dal-proxy"
