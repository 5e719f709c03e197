#!/usr/bin/env bash
# etcd_test.sh -- the configuration in etcd: start a three-member etcd
# cluster (tests/harness/etcd.sh) and a MariaDB cluster (tests/harness/cluster.sh), run
# tests/live/test_etcd against both, then the `dal config` commands.  etcd or
# MariaDB missing is a failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
DAL_BIN=${DAL_BIN:-$builddir/tools/dal}
work=$(mktemp -d "${TMPDIR:-/tmp}/dal-etcd.XXXXXX")
cleanup() {
    "$harness/etcd.sh" stop "$work/etcd" >/dev/null 2>&1 || true
    "$harness/etcd.sh" stop "$work/etcd-tls" >/dev/null 2>&1 || true
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$harness/etcd.sh" start "$work/etcd" 3 >/dev/null || fail "the etcd test cluster did not start"
"$harness/cluster.sh" start "$work/c" 4 --db 'product_%d' >/dev/null ||
    fail "the MariaDB test cluster did not start"
# shellcheck disable=SC1091
source "$work/c/env"
DAL_TEST_ETCD=$(cat "$work/etcd/endpoints")
DAL_TEST_ETCD_DIR=$work/etcd
DAL_SRCDIR=${DAL_SRCDIR:-$(cd "$here/../.." && pwd)}
export DAL_TEST_PORTS DAL_TEST_ETCD DAL_TEST_ETCD_DIR DAL_SRCDIR
echo "etcd up: $DAL_TEST_ETCD; MariaDB up: ports $DAL_TEST_PORTS"

"$builddir/tests/live/test_etcd"

# ------------------------------------------------------------ dal config
url="etcd://$DAL_TEST_ETCD/cli-test"
# shellcheck disable=SC2086 # the ports are words
set -- $DAL_TEST_PORTS
# ${DAL_TEST_PASSWORD} is for dal to expand, never the shell
# shellcheck disable=SC2016
ini() { # SERIAL > file
    printf '; serial %s\n[datasource db0]\nmaster = mysql://dal:${DAL_TEST_PASSWORD}@127.0.0.1:%s/product_0\n[table t%s]\ndatasource = db0\n' "$1" "$2" "$1"
}
export DAL_TEST_PASSWORD=dalpass
ini 1 "$1" >"$work/a.ini"
ini 2 "$1" >"$work/b.ini"

out=$("$DAL_BIN" config push --expect-revision 0 "$work/a.ini" "$url") || fail "first push: $out"
rev=${out##* }
[ "$("$DAL_BIN" config get "$url")" = "$(cat "$work/a.ini")" ] || fail "get is not what was pushed"

# a stale --expect-revision is refused and writes nothing
if out=$("$DAL_BIN" config push --expect-revision $((rev - 1)) "$work/b.ini" "$url" 2>&1); then
    fail "a stale --expect-revision was accepted: $out"
fi
grep -q "is at revision $rev, not $((rev - 1))" <<<"$out" || fail "unclear refusal: $out"
[ "$("$DAL_BIN" config get "$url")" = "$(cat "$work/a.ini")" ] || fail "the refused push wrote"
[ "$("$DAL_BIN" config history "$url" | wc -l)" = 2 ] || fail "history grew after a refused push"

# a file `dal check` refuses is never pushed
printf '[table x]\ndatasource = nowhere\n' >"$work/bad.ini"
if "$DAL_BIN" config push "$work/bad.ini" "$url" 2>/dev/null; then fail "a bad file was pushed"; fi

# the right revision goes through; history lists both versions
out=$("$DAL_BIN" config push --expect-revision "$rev" "$work/b.ini" "$url") || fail "push: $out"
rev2=${out##* }
"$DAL_BIN" config history --json "$url" | grep -q "\"revision\":$rev2" || fail "history"
[ "$("$DAL_BIN" config get --revision "$rev" "$url")" = "$(cat "$work/a.ini")" ] ||
    fail "get --revision"

# dal check and dal diff take the URL like a file
"$DAL_BIN" -c "$url" check | grep -q ": ok" || fail "check URL"
"$DAL_BIN" -c "$work/a.ini" diff "$url" | grep -q "t2 .*added" || fail "diff FILE URL"

# watch prints each accepted change as dal diff does, and rejections
"$DAL_BIN" config watch "$url" >"$work/watch.out" 2>&1 &
wpid=$!
for _ in $(seq 100); do grep -q "config@$rev2" "$work/watch.out" && break; sleep 0.1; done
"$DAL_BIN" config push "$work/a.ini" "$url" >/dev/null
printf 'junk\n' | "$harness/etcd.sh" ctl "$work/etcd" put cli-test/config >/dev/null
for _ in $(seq 100); do grep -q "rejected" "$work/watch.out" && break; sleep 0.1; done
kill "$wpid"
wait "$wpid" 2>/dev/null || true
grep -q "^table .*t1 .*added" "$work/watch.out" || { cat "$work/watch.out"; fail "watch diff"; }
grep -q "rejected: .*config@[0-9]*:1: syntax error" "$work/watch.out" ||
    { cat "$work/watch.out"; fail "watch rejection"; }
grep -q dalpass "$work/watch.out" && fail "a password in watch's output"
echo "dal config: push/get/history/watch ok"

# ------------------------------------------------------- dal-proxy -c URL
# a proxy started from etcd serves what was pushed, and follows the next push
proxy_bin=${DAL_PROXY_BIN:-$builddir/proxy/dal-proxy}
pport=$("$harness/cluster.sh" free-port)
# shellcheck disable=SC2016
pxini() { # PORT TABLE
    printf '[dal]\ndefault_datasource = db0\n[proxy]\nlisten = 127.0.0.1:%s\n[proxy user app]\npassword = ${DAL_TEST_PASSWORD}\n[datasource db0]\nmaster = mysql://dal:${DAL_TEST_PASSWORD}@127.0.0.1:%s/product_0\n[table %s]\ndatasource = db0\n' "$pport" "$1" "$2"
}
pxini "$1" px_one >"$work/px1.ini"
pxini "$1" px_two >"$work/px2.ini"
purl="etcd://$DAL_TEST_ETCD/proxy-test"
"$DAL_BIN" config push "$work/px1.ini" "$purl" >/dev/null || fail "push for the proxy"
"$proxy_bin" -c "$purl" --check | grep -q "^$purl: ok" || fail "dal-proxy --check URL"
"$proxy_bin" -c "$purl" >"$work/proxy.log" 2>&1 &
ppid=$!
tables() { mariadb -h127.0.0.1 -P"$pport" -uapp -p"$DAL_TEST_PASSWORD" -N -e 'SHOW TABLES FROM dal' 2>/dev/null; }
for _ in $(seq 100); do tables | grep -q px_one && break; sleep 0.1; done
tables | grep -q px_one || { cat "$work/proxy.log"; fail "dal-proxy -c URL does not serve"; }
"$DAL_BIN" config push "$work/px2.ini" "$purl" >/dev/null || fail "second push for the proxy"
for _ in $(seq 100); do tables | grep -q px_two && break; sleep 0.1; done
tables | grep -q px_two || { cat "$work/proxy.log"; fail "dal-proxy did not follow the push"; }
kill "$ppid"
wait "$ppid" || fail "dal-proxy exited non-zero on SIGTERM"
echo "dal-proxy -c URL ok"

# ------------------------------------------------- etcd authentication
# last, since it changes the cluster for every client
"$harness/etcd.sh" ctl "$work/etcd" user add root:rootpw-secret >/dev/null
"$harness/etcd.sh" ctl "$work/etcd" role add root >/dev/null 2>&1 || true   # 3.4 may have it
"$harness/etcd.sh" ctl "$work/etcd" user grant-role root root >/dev/null
"$harness/etcd.sh" ctl "$work/etcd" auth enable >/dev/null
if out=$("$DAL_BIN" config get "$url" 2>&1); then fail "read without credentials: $out"; fi
export DAL_TEST_ETCD_PW=rootpw-secret
authed="$url?user=root&password_env=DAL_TEST_ETCD_PW"
out=$("$DAL_BIN" config push "$work/b.ini" "$authed") || fail "push with user/password: $out"
[ "$("$DAL_BIN" config get "$authed")" = "$(cat "$work/b.ini")" ] || fail "get with user/password"
"$DAL_BIN" -c "$authed" check | grep -q ": ok" || fail "check with user/password"
if out=$("$DAL_BIN" config get "$url?user=root&password=wrong-secret" 2>&1); then
    fail "a wrong password was accepted"
fi
grep -q "authentication of user root failed" <<<"$out" || fail "unclear refusal: $out"
grep -q "wrong-secret" <<<"$out" && fail "the password is in a message: $out"
"$DAL_BIN" -c "$authed" check | grep -q "secret" && fail "the password is shown by check"
echo "etcd authentication ok"

# ------------------------------------------------------ etcds:// (TLS)
"$harness/etcd.sh" start "$work/etcd-tls" 1 --tls >/dev/null || fail "the TLS etcd did not start"
t=$work/etcd-tls/tls
tls_url="etcds://$(cat "$work/etcd-tls/endpoints")/tls-test"
full="$tls_url?cacert=$t/ca.pem&cert=$t/client.pem&key=$t/client-key.pem"
out=$("$DAL_BIN" config push "$work/a.ini" "$full") || fail "push over TLS: $out"
[ "$("$DAL_BIN" config get "$full")" = "$(cat "$work/a.ini")" ] || fail "get over TLS"
"$DAL_BIN" -c "$full" check | grep -q "^$tls_url: ok" || fail "check over TLS"
# the server wants a client certificate, and the client a CA it knows
if "$DAL_BIN" config get "$tls_url?cacert=$t/ca.pem" 2>/dev/null; then fail "no client certificate, yet read"; fi
if "$DAL_BIN" config get "$tls_url" 2>/dev/null; then fail "an unknown CA was trusted"; fi
echo "etcds:// ok"
