#!/usr/bin/env bash
# infile_test.sh -- start a throwaway MariaDB cluster and run the LOAD DATA
# LOCAL INFILE tests (tests/live/test_infile.c) against it.  A cluster that
# cannot start is a failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalinfile.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

if ! "$harness/cluster.sh" start "$work/c" 2 --db 'product_%d' --db plain >"$work/ports"; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
# shellcheck disable=SC1091
source "$work/c/env"
export DAL_TEST_PORTS DAL_TEST_CLUSTER_DIR

echo "cluster up: ports $DAL_TEST_PORTS"
"$builddir/tests/live/test_infile"
