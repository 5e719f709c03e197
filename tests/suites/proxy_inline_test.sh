#!/usr/bin/env bash
# proxy_inline_test.sh -- statements run on their client's I/O thread
# ([proxy] inline_io): with one I/O thread, 80 clients that each run
# SELECT SLEEP(5) at once run on the server at once as far as the bound
# allows -- 64 coroutines of the thread plus its 4 workers, seen in the
# server's own PROCESSLIST -- and never more; with inline_io = false, the
# 4 workers alone.  Every client gets the server's answer, and dal-proxy
# stops cleanly after.  With two I/O threads, new clients go to the one
# with fewer (read from each thread's epoll in /proc), whatever ports the
# clients come from.  Waits with a deadline (the datasource's
# read_timeout) end at it, several of one thread at once, while a shorter
# statement beside them answers.  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db plain
export PX_TEST_PASSWORD='app-s3cret'
py=/usr/bin/python3

# at_once PORT: the most statements of the 80 clients the server ran at
# the same time, and how many clients got the right answer
at_once() {
    PX_PORT=$1 SRV_PORT=${ports[0]} "$py" - <<'PY'
import os, threading, time, pymysql
px, srv = int(os.environ["PX_PORT"]), int(os.environ["SRV_PORT"])
N = 80
conns = [pymysql.connect(host="127.0.0.1", port=px, user="app",
                         password=os.environ["PX_TEST_PASSWORD"], database="plain",
                         autocommit=True) for _ in range(N)]
ok = []
def run(c):
    with c.cursor() as cur:
        cur.execute("SELECT SLEEP(5) AS slept")
        if cur.fetchall() == ((0,),):
            ok.append(1)
threads = [threading.Thread(target=run, args=(c,)) for c in conns]
for t in threads:
    t.start()
mon = pymysql.connect(host="127.0.0.1", port=srv, user="dal", password="dalpass", autocommit=True)
most = 0
while any(t.is_alive() for t in threads):
    with mon.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                    "WHERE INFO = 'SELECT SLEEP(5) AS slept'")
        most = max(most, cur.fetchone()[0])
    time.sleep(0.1)
for t in threads:
    t.join()
print(most, len(ok))
PY
}

for mode in true false; do
    port=$("$harness/cluster.sh" free-port)
    {
        printf '[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/plain\n' "${ports[0]}"
        printf '[dal]\ndefault_datasource = ds0\n'
        px_ini_proxy "$port" plain "" "threads = 1" "inline_io = $mode"
    } >"$work/px_$mode.ini"
    px_start "$work/px_$mode.ini" "$port"
    read -r most answered < <(at_once "$port") || true
    want=$([ "$mode" = true ] && echo 68 || echo 4)
    [ "${most:-0}" = "$want" ] ||
        fail "inline_io = $mode: the server ran ${most:-?} of the 80 clients' statements at once, want $want"
    [ "${answered:-0}" = 80 ] || fail "inline_io = $mode: ${answered:-?} of 80 clients got SLEEP's 0"
    # the clients are gone before the stop (a client still connected at
    # exit keeps its session, which the leak checker would report)
    for _ in $(seq 100); do
        [ "$(ss -Htn state established "( sport = :$port )" | wc -l)" = 0 ] && break
        sleep 0.1
    done
    sleep 0.5
    px_stop "${pids[-1]}" "$work/px_$mode.log"
done

# deadlines PORT: 3 clients run SELECT SLEEP(5) behind read_timeout = 1s
# and one SELECT SLEEP(0.5); prints what each got (an error code or the
# value), sorted
deadlines() {
    PX_PORT=$1 "$py" - <<'PY'
import os, threading, pymysql
port = int(os.environ["PX_PORT"])
got = []
def run(sql):
    c = pymysql.connect(host="127.0.0.1", port=port, user="app",
                        password=os.environ["PX_TEST_PASSWORD"], database="plain", autocommit=True)
    try:
        with c.cursor() as cur:
            cur.execute(sql)
            got.append(str(cur.fetchone()[0]))
    except pymysql.err.MySQLError as e:
        got.append("error %d" % e.args[0])
    c.close()
ts = [threading.Thread(target=run, args=(q,)) for q in
      ["SELECT SLEEP(5)"] * 3 + ["SELECT SLEEP(0.5)"]]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(", ".join(sorted(got)))
PY
}
port=$("$harness/cluster.sh" free-port)
{
    printf '[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/plain\nread_timeout = 1s\n' "${ports[0]}"
    printf '[dal]\ndefault_datasource = ds0\n'
    px_ini_proxy "$port" plain "" "threads = 1"
} >"$work/px_deadline.ini"
px_start "$work/px_deadline.ini" "$port"
got=$(deadlines "$port") || fail "read_timeout: the clients failed: $got"
want="0, error 1429, error 1429, error 1429" # (a backend lost: reply.c)
[ "$got" = "$want" ] || fail "read_timeout = 1s, three SLEEP(5) and one SLEEP(0.5) on one thread: got '$got', want '$want'"
sleep 0.5
px_stop "${pids[-1]}" "$work/px_deadline.log"

# spread PORT PID: per round, 4 clients connect and stay idle; prints the
# number of them in each epoll of the proxy (its I/O threads'), sorted
spread() {
    PX_PORT=$1 PX_PID=$2 "$py" - <<'PY'
import os, re, time, pymysql
port, pid = int(os.environ["PX_PORT"]), os.environ["PX_PID"]

def client_inodes():
    """Socket inodes of the proxy's established client connections."""
    out = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(f).readlines()[1:]:
            x = line.split()
            if int(x[1].split(":")[1], 16) == port and x[3] == "01":
                out.add(x[9])
    return out

def per_epoll():
    inodes, counts = client_inodes(), []
    fds = os.listdir("/proc/%s/fd" % pid)
    for fd in fds:
        try:
            if os.readlink("/proc/%s/fd/%s" % (pid, fd)) != "anon_inode:[eventpoll]":
                continue
            tfds = re.findall(r"^tfd:\s+(\d+)", open("/proc/%s/fdinfo/%s" % (pid, fd)).read(), re.M)
        except OSError:
            continue
        n = 0
        for t in tfds:
            try:
                m = re.match(r"socket:\[(\d+)\]", os.readlink("/proc/%s/fd/%s" % (pid, t)))
            except OSError:
                continue
            n += m is not None and m.group(1) in inodes
        counts.append(n)
    return sorted(counts)

for _ in range(6):
    conns = [pymysql.connect(host="127.0.0.1", port=port, user="app",
                             password=os.environ["PX_TEST_PASSWORD"], database="plain")
             for _ in range(4)]
    print(" ".join(map(str, per_epoll())))
    for c in conns:
        c.close()
    for _ in range(100):
        if not client_inodes():
            break
        time.sleep(0.05)
PY
}
port=$("$harness/cluster.sh" free-port)
{
    printf '[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/plain\n' "${ports[0]}"
    printf '[dal]\ndefault_datasource = ds0\n'
    px_ini_proxy "$port" plain "" "threads = 2"
} >"$work/px_spread.ini"
px_start "$work/px_spread.ini" "$port"
spread "$port" "${pids[-1]}" >"$work/spread" || fail "two I/O threads: the clients could not be counted"
uneven=$(grep -cvx '2 2' "$work/spread" || true)
[ "$uneven" = 0 ] || fail "two I/O threads: 4 clients spread as $(tr '\n' ',' <"$work/spread") over the threads' epolls in 6 rounds, want 2 2 each time"
sleep 0.5
px_stop "${pids[-1]}" "$work/px_spread.log"

px_finish proxy_inline_test.sh
