#!/usr/bin/env bash
# mysqltest_proxy.sh -- MariaDB's own regression tests (mysqltest, from the
# packages mariadb-test and mariadb-test-data) through dal-proxy with a
# pass-through configuration: one unsharded datasource whose schema is
# `test`, as mysqltest expects.
#
# tests/data/mysqltest.list names the main-suite tests that pass when mysqltest
# runs them directly against a server started by cluster.sh (how the list
# was chosen: docs/proxy.md, "Tests").  Each is run directly, then
# through the proxy, then through the proxy with --ps-protocol; a test that
# passes directly must pass through the proxy unless docs/proxy.md lists
# it, with its reason, between the "mysqltest exceptions" markers.
#
#   mysqltest_proxy.sh             run the first 100 tests of the list
#                                  (make check; DAL_MYSQLTEST_COUNT=N or
#                                  all for more)
#   mysqltest_proxy.sh --discover  run every main-suite test directly and
#                                  print those that pass and their time
#   mysqltest_proxy.sh NAME...     run the named tests of the list
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

suite=${DAL_MYSQLTEST_DIR:-/usr/share/mysql/mysql-test}
command -v mariadb-test >/dev/null && [ -d "$suite/main" ] ||
    { echo "FAIL: mariadb-test or $suite/main missing (tests/harness/deps.sh installs mariadb-test)" >&2; exit 1; }

px_cluster 1 --db test
root() { mariadb -h127.0.0.1 -P"${ports[0]}" -uroot "$@"; }
# as mysql-test-run's servers: latin1 by default
latin1() { root -e 'SET GLOBAL character_set_server = latin1, collation_server = latin1_swedish_ci'; }
latin1
# root with the server's empty password, through the server's own accounts
px_passthrough test
mkdir -p "$work/var/tmp" "$work/var/log"

# The server's global variables as the tests expect to find them: put back
# after every run (mysql-test-run checks that a test restores them)
globals() { root -N -e 'SHOW GLOBAL VARIABLES'; }
globals >"$work/globals"
restore_globals() {
    local n v
    globals | diff "$work/globals" - | sed -n 's/^< //p' | while IFS=$'\t' read -r n v; do
        root -e "SET GLOBAL $n = '$v'" 2>/dev/null || root -e "SET GLOBAL $n = $v" 2>/dev/null || true
    done
}

# mt NAME PORT [mysqltest options]: run main/NAME.test with its .result
# against PORT (over TCP, also for the test's own `connect localhost`);
# mysqltest's output in $work/out.  Every run gets a new `test` schema
# (a failing test leaves its tables) and the global variables it found.
mt() {
    local name=$1 p=$2 rc=0
    shift 2
    # (files a test wrote there, SELECT ... INTO OUTFILE, stop a DROP)
    root -e 'DROP DATABASE IF EXISTS test' 2>/dev/null || rm -rf "$work/c/m0/data/test"
    root -e 'DROP DATABASE IF EXISTS test; CREATE DATABASE test'
    (cd "$suite" && MYSQL_TEST_DIR=$suite MYSQLTEST_VARDIR=$work/var MYSQL_TMP_DIR=$work/var/tmp \
        timeout "${DAL_MT_TIMEOUT:-30}" mariadb-test --no-defaults --protocol=tcp -h127.0.0.1 -P"$p" -uroot -Dtest \
        --basedir="$suite/" --tmpdir="$work/var/tmp" --logdir="$work/var/log" --silent \
        --test-file="main/$name.test" --result-file="main/$name.result" "$@") >"$work/out" 2>&1 || rc=$?
    restore_globals
    return "$rc"
}

# px_mt NAME MODE: mt through the proxy, MODE text or ps (--ps-protocol).
# Each run gets a new dal-proxy, so that no pooled connection carries one
# test's state (its schema dropped, a lock) into the next.
px_mt() {
    local name=$1 rc=0 opt=()
    [ "$2" = ps ] && opt=(--ps-protocol)
    px_start "$work/px.ini" "$port"
    mt "$name" "$port" "${opt[@]}" || rc=$?
    px_stop "${pids[-1]}" "$work/px.log"
    unset 'pids[-1]'
    return "$rc"
}

if [ "${1:-}" = --discover ]; then
    # tests that stop, restart or crash the server, or run programs
    # (which need mysql-test-run's environment), are left out
    unsafe='shutdown|restart|kill_mysqld|crash|--exec|exec_in_background|\$MYSQLD'
    for f in "$suite"/main/*.test; do
        name=$(basename "$f" .test)
        [ -f "$suite/main/$name.result" ] || continue
        grep -qiE "$unsafe" "$f" && continue
        t0=$(date +%s%N)
        if mt "$name" "${ports[0]}"; then echo "$name $((($(date +%s%N) - t0) / 1000000)) ms"; fi
        # a test that took the server down or locked root out is not kept:
        # a new server
        if ! root -e 'SELECT 1' >/dev/null 2>&1; then
            echo "# $name broke the server" >&2
            "$harness/cluster.sh" stop "$work/c" --clean >/dev/null
            px_cluster 1 --db test
            latin1
        fi
    done
    exit 0
fi

# exceptions: lines "- `NAME` (text|ps|both): reason" in docs/proxy.md
declare -A except=()
while read -r name mode; do except[$name]=$mode; done < <(
    sed -n '/<!-- mysqltest exceptions -->/,/<!-- end mysqltest exceptions -->/p' "$srcdir/docs/proxy.md" |
        sed -n 's/^- `\([^`]*\)` (\(text\|ps\|both\)).*/\1 \2/p')

listed() { # NAME MODE: docs/proxy.md lists NAME as failing in MODE
    local m=${except[$1]:-}
    [ "$m" = both ] || [ "$m" = "$2" ]
}

direct=0 text=0 ps=0 skipped_listed=0 total=0
while read -r name; do
    [ -n "$name" ] && [ "${name#\#}" = "$name" ] || continue
    total=$((total + 1))
    if ! mt "$name" "${ports[0]}"; then
        fail "$name does not pass directly: $(tail -3 "$work/out")"
        continue
    fi
    direct=$((direct + 1))
    for mode in text ps; do
        if px_mt "$name" "$mode"; then
            [ "$mode" = text ] && text=$((text + 1)) || ps=$((ps + 1))
            listed "$name" "$mode" && echo "note: $name ($mode) passes through the proxy but docs/proxy.md lists it"
            continue
        fi
        # DAL_MT_OUT=DIR keeps mysqltest's output of every failure there
        [ -z "${DAL_MT_OUT:-}" ] || cp "$work/out" "$DAL_MT_OUT/$name.$mode"
        if listed "$name" "$mode"; then
            skipped_listed=$((skipped_listed + 1))
        else
            fail "$name through the proxy ($mode): $(tail -3 "$work/out" | cut -c1-400)"
        fi
    done
done < <(if [ $# -gt 0 ]; then printf '%s\n' "$@"
          elif [ "${DAL_MYSQLTEST_COUNT:-100}" = all ]; then cat "$tests/data/mysqltest.list"
          else head -n "${DAL_MYSQLTEST_COUNT:-100}" "$tests/data/mysqltest.list"; fi)

echo "mysqltest: $total listed, $direct pass directly, $text through the proxy, $ps with --ps-protocol," \
    "$skipped_listed failures listed in docs/proxy.md"
px_finish "mysqltest through dal-proxy"
