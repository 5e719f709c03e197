#!/usr/bin/env bash
# etcd.sh - start and stop a throwaway etcd cluster for the dal test suite,
# as tests/cluster.sh does for MariaDB.
#
#   etcd.sh start DIR N        start members e0 .. e(N-1) on free loopback ports,
#                              data and logs under DIR (absent or empty); prints
#                              the client endpoints "127.0.0.1:P,..." and writes
#                              DIR/endpoints and DIR/NAME/{client_port,peer_port,pid}
#   etcd.sh stop DIR [--clean] stop every member (SIGTERM, then SIGKILL)
#   etcd.sh kill DIR NAME      SIGKILL one member
#   etcd.sh restart DIR NAME   start a killed member again, same ports and data;
#                              does not wait: it serves once back in a quorum
#   etcd.sh healthy DIR        wait until every member is healthy
#   etcd.sh endpoints DIR      print the client endpoints
#   etcd.sh ctl DIR ARGS...    run etcdctl (API v3) against every endpoint
#
# Nothing outside DIR is written.  A missing etcd binary is an error, never a
# skip: tests/deps.sh installs etcd-server and etcd-client.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "etcd.sh: $*" >&2; exit 1; }

need() { command -v "$1" >/dev/null || die "$1 not found (tests/deps.sh installs etcd-server etcd-client)"; }

free_port() {
    local p
    while :; do
        p=$("$here/cluster.sh" free-port)
        # two calls may pick the same port before either is listened on
        grep -qx "$p" "$DIR/.taken" 2>/dev/null || break
    done
    echo "$p" >>"$DIR/.taken"
    echo "$p"
}

cluster_spec() {
    local spec="" m
    for m in "$DIR"/e*/; do
        m=${m%/}
        spec+="${spec:+,}$(basename "$m")=http://127.0.0.1:$(cat "$m/peer_port")"
    done
    echo "$spec"
}

endpoints() {
    local eps="" m
    for m in "$DIR"/e*/; do
        eps+="${eps:+,}127.0.0.1:$(cat "${m%/}/client_port")"
    done
    echo "$eps"
}

launch() { # NAME STATE
    local m="$DIR/$1" cp pp
    cp=$(cat "$m/client_port")
    pp=$(cat "$m/peer_port")
    # setsid: the member outlives neither the test nor a signal sent to the shell
    setsid etcd --name "$1" --data-dir "$m/data" \
        --listen-client-urls "http://127.0.0.1:$cp" --advertise-client-urls "http://127.0.0.1:$cp" \
        --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
        --initial-cluster "$(cluster_spec)" --initial-cluster-state "$2" \
        --initial-cluster-token "dal-test-$$" \
        --heartbeat-interval 50 --election-timeout 500 \
        >"$m/etcd.log" 2>&1 </dev/null &
    echo $! >"$m/pid"
}

wait_up() { # NAME
    local m="$DIR/$1" i
    for ((i = 0; i < 300; i++)); do
        if curl -s -m 1 "http://127.0.0.1:$(cat "$m/client_port")/health" | grep -q '"health":"true"'; then
            return 0
        fi
        kill -0 "$(cat "$m/pid")" 2>/dev/null || { tail -20 "$m/etcd.log" >&2; die "$1 exited"; }
        sleep 0.1
    done
    tail -20 "$m/etcd.log" >&2
    die "$1 did not become healthy"
}

cmd_start() {
    (($# == 2)) || die "usage: etcd.sh start DIR N"
    DIR=$1
    local n=$2 i
    need etcd
    need etcdctl
    need curl
    mkdir -p "$DIR"
    [ -z "$(ls -A "$DIR")" ] || die "$DIR is not empty"
    for ((i = 0; i < n; i++)); do
        mkdir -p "$DIR/e$i"
        free_port >"$DIR/e$i/client_port"
        free_port >"$DIR/e$i/peer_port"
    done
    for ((i = 0; i < n; i++)); do launch "e$i" new; done
    for ((i = 0; i < n; i++)); do wait_up "e$i"; done
    endpoints >"$DIR/endpoints"
    cat "$DIR/endpoints"
}

stop_member() { # DIR/NAME SIGNAL
    local pid i
    [ -f "$1/pid" ] || return 0
    pid=$(cat "$1/pid")
    kill "-$2" "$pid" 2>/dev/null || { rm -f "$1/pid"; return 0; }
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$1/pid"
}

cmd_stop() {
    DIR=$1
    local m
    [ -d "$DIR" ] || return 0
    for m in "$DIR"/e*/; do stop_member "${m%/}" TERM; done
    [ "${2:-}" = --clean ] && rm -rf "$DIR"
    return 0
}

cmd_kill() {
    DIR=$1
    [ -d "$DIR/$2" ] || die "no member $2"
    stop_member "$DIR/$2" KILL
}

# A restarted member serves clients only once it is back in a quorum:
# restarting all of a stopped cluster takes `restart` of each, then `healthy`.
cmd_restart() {
    DIR=$1
    [ -d "$DIR/$2" ] || die "no member $2"
    need etcd
    launch "$2" existing
    sleep 0.2
    kill -0 "$(cat "$DIR/$2/pid")" 2>/dev/null || { tail -20 "$DIR/$2/etcd.log" >&2; die "$2 exited"; }
}

cmd_healthy() {
    DIR=$1
    local m
    for m in "$DIR"/e*/; do wait_up "$(basename "$m")"; done
}

cmd_ctl() {
    DIR=$1
    shift
    ETCDCTL_API=3 etcdctl --endpoints "$(endpoints)" "$@"
}

(($#)) || die "usage: etcd.sh start|stop|kill|restart|endpoints|ctl DIR ..."
cmd=$1
shift
case $cmd in
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
kill) cmd_kill "$@" ;;
restart) cmd_restart "$@" ;;
healthy) cmd_healthy "$@" ;;
endpoints) DIR=$1; endpoints ;;
ctl) cmd_ctl "$@" ;;
*) die "unknown command $cmd" ;;
esac
