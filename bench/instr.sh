#!/usr/bin/env bash
# instr.sh -- client instructions per statement of a `dal load` workload,
# counted by callgrind: the same run with N and 2N statements, one thread,
# no warm-up; the difference over N leaves out start-up and first uses
# (connections, prepares, caches).  Repeatable to a few instructions,
# where throughput on these shared machines is not.
#
#   bench/instr.sh BUILD_DIR CONFIG [N] -- LOAD ARGS...
#
# BUILD_DIR is a build tree (its tools/.libs/dal, .libs and plugins/.libs
# are used); LOAD ARGS go to `dal load` (e.g. point-select, or insert
# --direct --server-prepared).  Needs valgrind.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -ge 3 ] || bench_usage 2
build=$(cd "$1" && pwd) config=$2
shift 2
n=2000
if [ "$1" != -- ]; then n=$1; shift; fi
[ "${1:-}" = -- ] && shift
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$build/plugins/.libs} LD_LIBRARY_PATH=$build/.libs
out=$(mktemp -d "${TMPDIR:-/tmp}/instr.XXXXXX")
trap 'rm -rf "$out"' EXIT
total() {
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$build/tools/.libs/dal" -c "$config" \
        load "$@" --threads 1 --statements "$count" --warmup 0 >/dev/null 2>&1
    callgrind_annotate "$out/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
count=$n a=$(total "$@")
count=$((2 * n)) b=$(total "$@")
echo "$(((b - a) / n)) instructions per statement ($*)"
