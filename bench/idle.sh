#!/usr/bin/env bash
# idle.sh -- memory of dal-proxy per idle client connection.
#
# Usage: bench/idle.sh [N]        (default 2000; needs a built tree)
#
# Starts one throwaway MariaDB server (tests/harness/cluster.sh) and dal-proxy,
# opens N client connections that log in (PyMySQL) and then stay idle, and
# reports the proxy's resident memory before and with them, and the
# difference per connection.  Also checks that every connection still
# answers afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
builddir=${DAL_BUILDDIR:-$src}
n=${1:-2000}
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$builddir/plugins/.libs}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalidle.XXXXXX")
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    "$src/tests/harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
ulimit -n $((2 * n + 256))
"$src/tests/harness/cluster.sh" start "$work/c" 1 --db app >/dev/null
port=$("$src/tests/harness/cluster.sh" free-port)
cat >"$work/px.ini" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:$(cat "$work/c/ports")/app
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$port
database = app
max_connections = $((n + 16))
[proxy user app]
password = idle
EOF
"$builddir/proxy/dal-proxy" -c "$work/px.ini" >"$work/px.log" 2>&1 &
pid=$!
sleep 1
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
PORT=$port N=$n PID=$pid /usr/bin/python3 - <<'EOF'
import os, time, pymysql

def rss():
    with open("/proc/%s/status" % os.environ["PID"]) as f:
        return int(next(l for l in f if l.startswith("VmRSS")).split()[1])

def connect():
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["PORT"]), user="app",
                           password="idle", database="app", autocommit=True)

n = int(os.environ["N"])
warm = connect()           # the first connection's one-time costs
warm.cursor().execute("SELECT 1")
time.sleep(0.5)
before = rss()
conns = [connect() for _ in range(n)]
time.sleep(1)
after = rss()
for c in conns:            # every one still answers
    cur = c.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)
print("idle connections: %d" % n)
print("proxy RSS: %d KiB before, %d KiB with them" % (before, after))
print("per idle connection: %.1f KiB" % ((after - before) / n))
EOF
