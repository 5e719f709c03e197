#!/usr/bin/env bash
# etcd.sh - start and stop a throwaway etcd cluster for the dal test suite,
# as tests/harness/cluster.sh does for MariaDB.
#
#   etcd.sh start DIR N [--tls]
#                              start members e0 .. e(N-1) on free loopback ports,
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
# skip: tests/harness/deps.sh installs etcd-server and etcd-client.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "etcd.sh: $*" >&2; exit 1; }

need() { command -v "$1" >/dev/null || die "$1 not found (tests/harness/deps.sh installs etcd-server etcd-client)"; }

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

# A CA, a server certificate for 127.0.0.1 and a client certificate.
make_certs() {
    local t="$DIR/tls"
    need openssl
    mkdir -p "$t"
    (
        cd "$t"
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=dal-test-ca \
            -keyout ca-key.pem -out ca.pem
        openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server-key.pem -out server.csr
        printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
            -extfile server.ext -out server.pem
        openssl req -newkey rsa:2048 -nodes -subj /CN=dal-client -keyout client-key.pem -out client.csr
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
            -extfile client.ext -out client.pem
    ) >"$t/openssl.log" 2>&1 || { cat "$t/openssl.log" >&2; die "cannot make certificates"; }
}

scheme() { [ -d "$DIR/tls" ] && echo https || echo http; }

# curl or etcdctl arguments for the client side of TLS, if any
curl_tls() { [ -d "$DIR/tls" ] && echo "--cacert $DIR/tls/ca.pem --cert $DIR/tls/client.pem --key $DIR/tls/client-key.pem"; true; }

launch() { # NAME STATE
    local m="$DIR/$1" cp pp tls=()
    cp=$(cat "$m/client_port")
    pp=$(cat "$m/peer_port")
    [ -d "$DIR/tls" ] && tls=(--cert-file "$DIR/tls/server.pem" --key-file "$DIR/tls/server-key.pem"
                              --trusted-ca-file "$DIR/tls/ca.pem" --client-cert-auth)
    # setsid: the member outlives neither the test nor a signal sent to the shell
    setsid etcd --name "$1" --data-dir "$m/data" \
        --listen-client-urls "$(scheme)://127.0.0.1:$cp" --advertise-client-urls "$(scheme)://127.0.0.1:$cp" \
        "${tls[@]}" \
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
        # shellcheck disable=SC2046
        if curl -s -m 1 $(curl_tls) "$(scheme)://127.0.0.1:$(cat "$m/client_port")/health" | grep -q '"health":"true"'; then
            return 0
        fi
        kill -0 "$(cat "$m/pid")" 2>/dev/null || { tail -20 "$m/etcd.log" >&2; die "$1 exited"; }
        sleep 0.1
    done
    tail -20 "$m/etcd.log" >&2
    die "$1 did not become healthy"
}

cmd_start() {
    (($# == 2 || $# == 3)) || die "usage: etcd.sh start DIR N [--tls]"
    DIR=$1
    local n=$2 i
    need etcd
    need etcdctl
    need curl
    mkdir -p "$DIR"
    [ -z "$(ls -A "$DIR")" ] || die "$DIR is not empty"
    [ "${3:-}" = --tls ] && make_certs
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
    local tls=()
    [ -d "$DIR/tls" ] && tls=(--cacert "$DIR/tls/ca.pem" --cert "$DIR/tls/client.pem"
                              --key "$DIR/tls/client-key.pem")
    ETCDCTL_API=3 etcdctl --endpoints "$(endpoints)" "${tls[@]}" "$@"
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
