# proxy_lib.sh -- sourced by the dal-proxy tests (not run by itself): the
# paths, a work directory removed at exit with the servers and proxies the
# test started, fail(), a throwaway MariaDB cluster and dal-proxy started
# on an INI file.
# shellcheck shell=bash

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${DAL_SRCDIR:-$(cd "$here/.." && pwd)}
builddir=${DAL_BUILDDIR:-$(cd "$here/.." && pwd)}
proxy_bin=${DAL_PROXY_BIN:-$builddir/proxy/dal-proxy}
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$builddir/plugins/.libs}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalpx.XXXXXX")
pids=()
px_cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$here/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    [ -n "${DAL_KEEP:-}" ] || rm -rf "$work"
}
trap px_cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# px_cluster N [cluster.sh start options]: start N servers in $work/c;
# their ports in the array ports
px_cluster() {
    "$here/cluster.sh" start "$work/c" "$@" >/dev/null
    mapfile -t ports <"$work/c/ports"
}

# px_start INI PORT: start dal-proxy on INI (listening on PORT), its log
# in INI.log, and wait until it accepts connections
px_start() {
    "$proxy_bin" -c "$1" --check >/dev/null || fail "dal-proxy --check $1"
    "$proxy_bin" -c "$1" >"$1.log" 2>&1 &
    pids+=($!)
    local _
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "dal-proxy did not start: $(tail -5 "$1.log")" >&2
    exit 1
}

# px_finish NAME: the closing line, and the exit status
px_finish() {
    if [ "$fails" -gt 0 ]; then
        echo "$1: $fails failure(s)" >&2
        exit 1
    fi
    echo "$1 passed"
}
