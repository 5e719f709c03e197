# proxy_lib.sh -- sourced by the dal-proxy tests and bench/lib.sh (not
# run by itself): the paths, a work directory removed at exit with the
# servers and proxies the script started, fail(), a throwaway MariaDB
# cluster, the common parts of INI files, and dal-proxy started on one and
# stopped.
# shellcheck shell=bash

harness=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tests=$(cd "$harness/.." && pwd)
srcdir=${DAL_SRCDIR:-$(cd "$tests/.." && pwd)}
builddir=${DAL_BUILDDIR:-$(cd "$tests/.." && pwd)}
proxy_bin=${DAL_PROXY_BIN:-$builddir/proxy/dal-proxy}
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$builddir/plugins/.libs}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalpx.XXXXXX")
pids=()
px_cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    [ -n "${DAL_KEEP:-}" ] || rm -rf "$work"
}
trap px_cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# px_cluster N [cluster.sh start options]: start N servers in $work/c;
# their ports in the array ports
px_cluster() {
    "$harness/cluster.sh" start "$work/c" "$@" >/dev/null
    mapfile -t ports <"$work/c/ports"
}

# px_sharded_proxy TABLE SHARDS KEY: the common setup of a suite -- two
# servers (px_cluster 2 with shard_0, shard_1 and plain), one table sharded
# by KEY mod SHARDS over both, and dal-proxy started on a free port, $port,
# for the user app with the password $PX_TEST_PASSWORD.
px_sharded_proxy() {
    px_cluster 2 --db 'shard_%d' --db plain
    port=$("$harness/cluster.sh" free-port)
    export PX_TEST_PASSWORD='app-s3cret'
    {
        px_ini_sharded
        px_ini_table "$1" "$2" "$3" mod
        px_ini_proxy "$port"
    } >"$work/px.ini"
    px_start "$work/px.ini" "$port"
}

# px_ini_sharded [LINE...]: the head of an INI file for the servers of
# `px_cluster 2 --db 'shard_%d'`: datasources ds0 and ds1 on the schemas
# shard_0 and shard_1 (user dal), and [dal] with ds0 the default datasource
# and the LINEs
px_ini_sharded() {
    cat <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/shard_0
[datasource ds1]
master = mysql://dal:dalpass@127.0.0.1:${ports[1]}/shard_1
[dal]
default_datasource = ds0
EOF
    [ $# -eq 0 ] || printf '%s\n' "$@"
}

# px_ini_table NAME TABLES KEY STRATEGY: [table NAME], sharded by KEY over
# ds0 and ds1 in TABLES physical tables
px_ini_table() {
    cat <<EOF
[table $1]
datasource = ds
db_shard_num = 2
table_shard_num = $2
shard_key = $3
strategy = $4
EOF
}

# px_ini_datasources NAME TABLES SERVER/SCHEMA...: a [datasource NAMEi]
# for each SERVER/SCHEMA (an index into ports and a schema there, user dal)
# and [table NAME], sharded by user_id (mod) over them in TABLES physical
# tables: NAME_0 ... on the first, and so on
px_ini_datasources() {
    local name=$1 tables=$2 i=0 at
    shift 2
    for at in "$@"; do
        printf '[datasource %s%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/%s\n' \
            "$name" "$i" "${ports[${at%%/*}]}" "${at#*/}"
        i=$((i + 1))
    done
    printf '[table %s]\ndatasource = %s\ndb_shard_num = %d\ntable_shard_num = %d\n' \
        "$name" "$name" "$#" "$tables"
    printf 'shard_key = user_id\nstrategy = mod\n'
}

# px_ini_proxy PORT [DB [PASSWORD [LINE...]]]: the [proxy] section
# listening on PORT serving DB (default shop), with the LINEs, and the
# client account app with PASSWORD (default ${PX_TEST_PASSWORD}, which the
# INI file takes from the environment)
px_ini_proxy() {
    # shellcheck disable=SC2016
    local pw='${PX_TEST_PASSWORD}'
    printf '[proxy]\nlisten = 127.0.0.1:%s\ndatabase = %s\n' "$1" "${2:-shop}"
    [ $# -le 3 ] || printf '%s\n' "${@:4}"
    printf '[proxy user app]\npassword = %s\n' "${3:-$pw}"
}

# px_mysql2: Node's mysql2 from the npm registry, installed once into the
# build tree at npmdir (set here): true when node and mysql2 are there,
# else a failure and false
px_mysql2() {
    npmdir=$builddir/tests/npm
    if [ ! -d "$npmdir/node_modules/mysql2" ]; then
        mkdir -p "$npmdir"
        npm install --prefix "$npmdir" --no-audit --no-fund --silent mysql2@3 >"$work/npm.log" 2>&1 ||
            fail "npm install mysql2: $(tail -5 "$work/npm.log")"
    fi
    command -v node >/dev/null && [ -d "$npmdir/node_modules/mysql2" ] && return 0
    fail "node or mysql2 is missing (tests/harness/deps.sh installs nodejs and npm)"
    return 1
}

# px_passthrough DB [PASSWORD]: port (a free one) and $work/px.ini, a
# pass-through configuration: the first server's schema DB as one
# unsharded datasource (user root), served as DB to the proxy's user root
# with PASSWORD, or without PASSWORD to the server's own accounts (`users =
# backend`: root with the server's empty password, as tests that `connect
# ...,root,,` expect)
px_passthrough() {
    port=$("$harness/cluster.sh" free-port)
    cat >"$work/px.ini" <<EOF
[datasource ds0]
master = mysql://root@127.0.0.1:${ports[0]}/$1
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$port
database = $1
EOF
    if [ -n "${2:-}" ]; then
        printf '[proxy user root]\npassword = %s\n' "$2" >>"$work/px.ini"
    else
        echo 'users = backend' >>"$work/px.ini"
    fi
}

# px_start FILE.ini PORT: start dal-proxy on FILE.ini (listening on PORT),
# its log in FILE.log, and wait until it accepts connections
px_start() {
    "$proxy_bin" -c "$1" --check >/dev/null || fail "dal-proxy --check $1"
    "$proxy_bin" -c "$1" >"${1%.ini}.log" 2>&1 &
    pids+=($!)
    local _
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "dal-proxy did not start: $(tail -5 "${1%.ini}.log")" >&2
    exit 1
}

# px_stop PID LOG: SIGTERM to the dal-proxy PID, which must exit 0 within
# 10 s (else SIGKILL) with no sanitizer report in LOG, its log
px_stop() {
    local _
    kill -TERM "$1" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$1" 2>/dev/null; then
        fail "dal-proxy ($2) did not stop on SIGTERM"
        kill -9 "$1"
    elif ! wait "$1"; then
        fail "dal-proxy ($2) exited non-zero on SIGTERM: $(tail -20 "$2")"
    fi
    ! grep -Eq "Sanitizer|runtime error" "$2" ||
        fail "sanitizer report in $2: $(grep -E -A20 'Sanitizer|runtime error' "$2" | head -40)"
}

# px_ps_judge NAME WHAT: tests/live/ps_client runs the script $work/NAME.txt
# through the proxy on $port (user app, password $PX_TEST_PASSWORD, schema
# shop) and on the first server's schema plain (user dal); the outputs,
# $work/NAME_px.out and $work/NAME_plain.out, must be the same (WHAT
# names the check in the failure)
px_ps_judge() {
    "$builddir/tests/live/ps_client" 127.0.0.1 "$port" app "$PX_TEST_PASSWORD" shop \
        <"$work/$1.txt" >"$work/$1_px.out" 2>&1 ||
        fail "ps_client through the proxy: $(tail -3 "$work/$1_px.out")"
    "$builddir/tests/live/ps_client" 127.0.0.1 "${ports[0]}" dal dalpass plain \
        <"$work/$1.txt" >"$work/$1_plain.out" 2>&1 ||
        fail "ps_client on the plain server: $(tail -3 "$work/$1_plain.out")"
    diff -u "$work/$1_plain.out" "$work/$1_px.out" >"$work/$1.diff" ||
        fail "$2: proxy and server differ: $(head -80 "$work/$1.diff")"
}

# px_finish NAME: the closing line, and the exit status
px_finish() {
    if [ "$fails" -gt 0 ]; then
        echo "$1: $fails failure(s)" >&2
        exit 1
    fi
    echo "$1 passed"
}
