#!/usr/bin/env bash
# pool_monitor_test.sh -- the pool and monitor plugins against a throwaway
# MariaDB cluster: pool limits, KILLed connections, state reset and leak
# reports (test_pool live); a known workload's metrics scraped over HTTP and
# checked by value (test_monitor live), then by promtool; the slow log parsed
# as JSON and checked for leaked literals.  A cluster that cannot start, or a
# missing promtool that cannot be installed, is a failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalpm.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# promtool comes with Debian's prometheus package (tests/harness/deps.sh installs it)
if ! command -v promtool >/dev/null; then
    echo "pool_monitor_test: installing promtool (Debian package prometheus)"
    export DEBIAN_FRONTEND=noninteractive
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
command -v promtool >/dev/null || { echo "FAIL: promtool is not available" >&2; exit 1; }

if ! "$harness/cluster.sh" start "$work/c" 2 --db 'product_%d' >"$work/ports"; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
# shellcheck disable=SC1091
source "$work/c/env"
export DAL_TEST_PORTS DAL_TEST_CLUSTER_DIR
echo "cluster up: ports $DAL_TEST_PORTS"

"$builddir/tests/unit/test_pool" live

mkdir "$work/out"
"$builddir/tests/unit/test_monitor" live "$work/out"

echo "promtool check metrics:"
promtool check metrics <"$work/out/metrics.txt"

python3 - "$work/out/slow.log" <<'PY'
import json, sys
path = sys.argv[1]
lines = open(path, encoding="utf-8").read().splitlines()
need = {"time", "type", "latency_ms", "kind", "table", "datasource", "server",
        "physical_table", "trace_id", "rows", "error", "mysql_errno", "sql"}
records = [json.loads(l) for l in lines]          # every line is one JSON object
# 38 executions and statements of the workload, and the SELECT through
# dal that checks the analysis cache's figures: each logged twice
assert len(records) == 2 * 39, f"{len(records)} lines, expected 78"
for r in records:
    missing = need - r.keys()
    assert not missing, f"missing {missing} in {r}"
    assert r["time"].endswith("Z") and r["latency_ms"] >= 0
    for secret in ("hunter2", "424203", "4242"):   # literals of the workload
        assert secret not in json.dumps(r), f"literal {secret!r} leaked: {r}"
sel = [r for r in records if r["kind"] == "select" and r["table"] == "mon_t"]
assert len(sel) == 51 and all(r["sql"] == "SELECT pw FROM mon_t WHERE id = ?" for r in sel), sel[:2]
bad = [r for r in records if r["mysql_errno"] == 1146]
assert len(bad) == 2 and bad[0]["error"] == -9, bad
print(f"slow log: {len(records)} JSON lines, no literals")
PY
echo "pool_monitor_test: ok"
