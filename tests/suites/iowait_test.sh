#!/usr/bin/env bash
# iowait_test.sh -- dal_set_io_wait against two throwaway MariaDB servers
# (tests/live/test_iowait.c).  A cluster that cannot start is a failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/daliw.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

if ! "$harness/cluster.sh" start "$work/c" 2 --db 'product_%d' >"$work/ports"; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
# shellcheck disable=SC1091
source "$work/c/env"
export DAL_TEST_PORTS DAL_TEST_CLUSTER_DIR
"$builddir/tests/live/test_iowait"
