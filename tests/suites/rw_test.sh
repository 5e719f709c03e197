#!/usr/bin/env bash
# rw_test.sh -- read-write splitting against real MariaDB replication: two
# masters with two replicas each (GTID replication on loopback, started
# here), then test_rw: reads on replicas and writes on masters, load
# balancing weights, read-your-writes against delayed replicas, lag limits,
# a replica killed under readers, a master killed under writers -- with the
# built-in connection cache, then with the pool plugin.  A cluster that
# cannot start is a failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalrw.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

if ! "$harness/cluster.sh" start "$work/c" 2 --replicas 2 --db 'rw_%d' >"$work/ports"; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
# shellcheck disable=SC1091
source "$work/c/env"
export DAL_TEST_PORTS DAL_TEST_REPLICA_PORTS DAL_TEST_CLUSTER_DIR
export DAL_SRCDIR=${DAL_SRCDIR:-$(cd "$here/../.." && pwd)}
echo "cluster up: masters $DAL_TEST_PORTS, replicas $DAL_TEST_REPLICA_PORTS"

"$builddir/tests/live/test_rw"
echo "again with the pool plugin (pool = default) on every server:"
DAL_TEST_RW_POOL=1 "$builddir/tests/live/test_rw"
echo "rw_test: ok"
