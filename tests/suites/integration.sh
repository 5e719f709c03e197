#!/usr/bin/env bash
# integration.sh -- start a throwaway MariaDB cluster, run the integration
# tests against it, stop it.  A cluster that cannot start is a failure,
# never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalit.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

if ! "$harness/cluster.sh" start "$work/c" 4 --db 'product_%d' --db plain >"$work/ports"; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
# shellcheck disable=SC1091
source "$work/c/env"
export DAL_TEST_PORTS DAL_TEST_CLUSTER_DIR

echo "cluster up: ports $DAL_TEST_PORTS"
"$builddir/tests/live/test_integration"

# what a wire-protocol front end needs: column metadata against the
# server's own, warnings, insert ids, status flags, session variables
"$builddir/tests/live/test_resultmeta"

# sessions pin the connections holding their server state, with the
# built-in connection cache and with the pool plugin
"$builddir/tests/live/test_pin"
DAL_TEST_PIN_POOL=default "$builddir/tests/live/test_pin"
# server-side prepared statements against text: every column type,
# staleness (DDL, a killed connection, the statement limit, a reload)
"$builddir/tests/live/test_sprep"

# an INSERT without a column list after its table was created again with
# its columns in another order, through dal and directly on the servers
"$builddir/tests/live/test_columns"

# the servers' global sql_mode NO_BACKSLASH_ESCAPES: statements of no
# session read as the servers read them (the mode put back at its end)
"$builddir/tests/live/test_nobs_global"

# the CLI against the live cluster
DAL_BIN=${DAL_BIN:-$builddir/tools/dal}
export DAL_TEST_PASSWORD=dalpass
"$here/cli_live_test.sh" "$work"

# scatter-gather: dal's answers against MariaDB's own on an unsharded copy
"$builddir/tests/live/test_scatter"

# nested statements (subqueries, derived tables, joins, UNION): the same
# comparison with MariaDB on an unsharded copy
"$builddir/tests/live/test_nested"

# dynamic configuration under load
"$builddir/tests/live/test_reload"
