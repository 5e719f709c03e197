#!/usr/bin/env bash
# proxy_server_work_test.sh -- what a server runs for the text statements
# of a client of dal-proxy, by its status counters (no timing): N text
# point selects through a pass-through proxy cost the server no prepared
# statement and at most N Com_select; after the client set session
# variables (SET NAMES, SET sql_mode, as connectors and ORMs do at connect)
# its N statements still cost about N server commands (no SET, no
# COM_RESET_CONNECTION per statement: the backend connection keeps the
# session's variables); and those variables never reach another client's
# statements, nor are lost for their own client's after another client's.
# bench/server_work.sh measures the same with CPU and system calls.
# Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db shop
px_passthrough shop 'w0rk-pass'
px_start "$work/px.ini" "$port"
mariadb -uroot -h127.0.0.1 -P"${ports[0]}" shop \
    -e "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20)); INSERT INTO t VALUES (1, 'one'), (2, 'two')"

out=$(/usr/bin/python3 - "${ports[0]}" "$port" <<'EOF'
import sys, pymysql

server, proxy = int(sys.argv[1]), int(sys.argv[2])
N = 200
COUNTERS = ("Questions", "Com_select", "Com_set_option", "Com_stmt_prepare", "Com_admin_commands")

def connect(port, user="root", password="w0rk-pass"):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           database="shop", autocommit=True)

admin = connect(server, password="")

def status():
    cur = admin.cursor()
    cur.execute("SHOW GLOBAL STATUS")
    return {k: int(v) for k, v in cur.fetchall() if k in COUNTERS}

def run(sets):
    """N text point selects through the proxy after sets: the server's counters' deltas"""
    c = connect(proxy)
    cur = c.cursor()
    for s in sets:
        cur.execute(s)
    cur.execute("SELECT c FROM t WHERE id = 1")  # the backend connection taken, variables set
    before = status()
    for i in range(N):
        cur.execute("SELECT c FROM t WHERE id = %d" % (i % 2 + 1))
        assert cur.fetchall() == (("one",) if i % 2 == 0 else ("two",),)
    after = status()
    c.close()
    # the status read itself is one Questions
    return {k: after[k] - before[k] for k in COUNTERS}

def check(name, d):
    bad = []
    if d["Com_stmt_prepare"] != 0:
        bad.append("Com_stmt_prepare %d" % d["Com_stmt_prepare"])
    if d["Com_select"] > N:
        bad.append("Com_select %d" % d["Com_select"])
    if d["Questions"] > N + 5:
        bad.append("Questions %d" % d["Questions"])
    if d["Com_set_option"] > 2:
        bad.append("Com_set_option %d" % d["Com_set_option"])
    if d["Com_admin_commands"] > 2:
        bad.append("Com_admin_commands %d" % d["Com_admin_commands"])
    print("%s: %s" % ("FAIL" if bad else "ok", name), d, "; ".join(bad))

check("plain text selects", run([]))
check("after SET NAMES utf8mb4", run(["SET NAMES utf8mb4"]))
check("after SET NAMES and SET sql_mode", run(["SET NAMES utf8mb4", "SET SESSION sql_mode = 'ANSI_QUOTES'"]))

# the variables are the session's own: never another's
a, b = connect(proxy), connect(proxy)
ca, cb = a.cursor(), b.cursor()
ca.execute("SET SESSION sql_mode = 'ANSI_QUOTES'")
for _ in range(3):
    ca.execute('SELECT "c" FROM t WHERE id = 1')
    ra = ca.fetchall()
    cb.execute('SELECT "c" FROM t WHERE id = 1')
    rb = cb.fetchall()
    print("%s: ANSI_QUOTES in its own session only" % ("ok" if (ra, rb) == ((("one",),), (("c",),)) else "FAIL"),
          ra, rb)
EOF
) || fail "the client failed: $out"
echo "$out"
! grep -q '^FAIL' <<<"$out" || fail "$(grep '^FAIL' <<<"$out")"
px_finish proxy_server_work_test
