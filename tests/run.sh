#!/usr/bin/env bash
# run.sh -- the whole test suite, as CI runs it, from a clean checkout:
#   1. install missing Debian packages (tests/harness/deps.sh)
#   2. build and `make check` (unit tests, CLI tests, integration tests
#      against a throwaway MariaDB cluster)
#   3. the same under AddressSanitizer + UBSan (separate build directory)
#   4. install into a temporary prefix and build the out-of-tree example
#      plugin with pkg-config, drop it in, use it
#   5. the README's quick start demo (examples/demo.sh), its output checked
#   6. the fuzz targets for a bounded time
#   7. make distcheck
# Set DAL_QUICK=1 to stop after step 2.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
jobs=$(nproc 2>/dev/null || echo 2)
# Each step's title, and the seconds since the start, so a slow step shows.
t0=$(date +%s)
step() { printf '\n=== %s (at %ds) ===\n' "$*" $(( $(date +%s) - t0 )); }

step "dependencies"
bash tests/harness/deps.sh

step "build"
autoreconf -fi >/dev/null
mkdir -p _build
(cd _build && ../configure -q && make -s -j"$jobs")

step "make check"
(cd _build && make -s -j"$jobs" check) || { cat _build/test-suite.log 2>/dev/null || true; find _build/tests -name '*.log' -newer _build/Makefile -exec tail -50 {} + 2>/dev/null || true; exit 1; }

[ "${DAL_QUICK:-0}" = 1 ] && { echo "DAL_QUICK=1: stopping after make check"; exit 0; }

step "make check under ASan/UBSan"
mkdir -p _build-asan
(cd _build-asan && ../configure -q --enable-sanitizers CFLAGS="-O1 -g" && make -s -j"$jobs")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0
export LSAN_OPTIONS="suppressions=$src/tests/harness/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd _build-asan && make -s -j"$jobs" check) || { cat _build-asan/test-suite.log 2>/dev/null || true; exit 1; }
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

step "install + out-of-tree plugin"
bash tests/suites/install_test.sh "$src"

step "quick start demo"
bash tests/suites/demo_test.sh

step "fuzz"
bash fuzz/run.sh "${DAL_FUZZ_SECONDS:-60}"

step "make distcheck"
# on a failure of its `make check`, the dist tree stays (dal-*/_build/sub):
# its logs say which test failed and why
(cd _build && make -s -j"$jobs" distcheck >/dev/null) || {
    echo "distcheck failed" >&2
    logs=$(find _build -path '_build/dal-*' -name test-suite.log 2>/dev/null)
    if [ -n "$logs" ]; then
        xargs cat <<<"$logs"
    else
        echo "no test-suite.log in the dist tree: distcheck failed before its make check" >&2
    fi
    exit 1
}

echo
echo "all tests passed in $(( $(date +%s) - t0 ))s"
