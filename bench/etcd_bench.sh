#!/usr/bin/env bash
# etcd_bench.sh [WATCHERS [PUSHES]] -- start a throwaway three-member etcd
# cluster (tests/harness/etcd.sh) and measure how long a pushed configuration takes
# to be in force in WATCHERS processes (bench/etcd_bench.c).  Run from a
# configured build tree: bench/etcd_bench.sh 20 50
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${DAL_BUILDDIR:-$here}
work=$(mktemp -d "${TMPDIR:-/tmp}/dal-etcd-bench.XXXXXX")
trap '"$here/tests/harness/etcd.sh" stop "$work/etcd" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$here/tests/harness/etcd.sh" start "$work/etcd" 3 >/dev/null
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$build/plugins/.libs}
"$build/bench/etcd_bench" "etcd://$(cat "$work/etcd/endpoints")/bench" "${1:-20}" "${2:-50}"
