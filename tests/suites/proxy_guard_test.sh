#!/usr/bin/env bash
# proxy_guard_test.sh -- dal-proxy against a hostile client: failed logins
# from one address are throttled (the replies of later ones wait, growing
# per failure up to auth_delay_max, without holding up other clients; a
# success clears the address) and logged with user, address and counts,
# never the password; and errors sent to clients name no backend user,
# host, port or schema, while the proxy's log has them.  Starts its own
# MariaDB server; never skips.  Timings are checked as lower bounds only.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db 'shard_0'
port=$("$harness/cluster.sh" free-port)
port2=$("$harness/cluster.sh" free-port)
closed=$("$harness/cluster.sh" free-port)   # nothing listens there
export PX_TEST_PASSWORD='app-s3cret'
py=/usr/bin/python3

# a backend account that may read shard_0 only: its errors name it
mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass -e \
    "CREATE USER 'weakling'@'%' IDENTIFIED BY 'weakpass';
     GRANT SELECT ON shard_0.* TO 'weakling'@'%';"

write_ini() { # FILE PORT [LINE...]
    local f=$1 p=$2
    shift 2
    cat >"$f" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/shard_0
[datasource dead]
master = mysql://backenduser:backendpw@127.0.0.1:$closed/hiddenschema
connect_timeout = 2s
[datasource weak]
master = mysql://weakling:weakpass@127.0.0.1:${ports[0]}/shard_0
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$p
database = shop
threads = 1
EOF
    printf '%s\n' "$@" >>"$f"
    printf '[proxy user app]\npassword = ${PX_TEST_PASSWORD}\n' >>"$f"
}
# the first proxy: 3 failures free, then 1 s each (auth_delay_max = 1s);
# the second: the defaults (1 s, 2 s, 3 s, ... up to 30 s)
write_ini "$work/px.ini" "$port" "auth_delay_after = 3" "auth_delay_max = 1s"
write_ini "$work/px2.ini" "$port2"
px_start "$work/px.ini" "$port"
px_start "$work/px2.ini" "$port2"

"$py" - "$port" "$port2" "$closed" >"$work/guard.out" 2>&1 <<'EOF' || fail "throttle and errors: $(cat "$work/guard.out")"
import sys, threading, time
import pymysql

port, port2, closed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
bad = 0

def check(ok, what):
    global bad
    if not ok:
        print("FAIL:", what)
        bad += 1

def login(p, password, user="intruder"):
    """(seconds the attempt took, error number or 0, the connection)"""
    t0 = time.monotonic()
    try:
        c = pymysql.connect(host="127.0.0.1", port=p, user=user, password=password,
                            database="shop", autocommit=True, connect_timeout=120,
                            read_timeout=120)
        return time.monotonic() - t0, 0, c
    except pymysql.err.OperationalError as e:
        return time.monotonic() - t0, e.args[0], None

# 20 wrong passwords from one address: the 4th and later wait >= 1 s each
t0 = time.monotonic()
took = []
for i in range(20):
    s, code, _ = login(port, "Guess-Pw-%02d-zz" % i)
    check(code == 1045, "wrong password %d: error %s, not 1045" % (i, code))
    took.append(s)
total = time.monotonic() - t0
check(total >= 17 * 1.0, "20 wrong passwords took %.2f s, less than 17 delays of 1 s" % total)
for i in range(3, 20):
    check(took[i] >= 1.0, "attempt %d was not delayed: %.3f s" % (i + 1, took[i]))

# the right password now succeeds (after its wait), and clears the address
s, code, c = login(port, "app-s3cret", user="app")
check(code == 0 and s >= 1.0, "the right password after 20 failures: error %s in %.3f s" % (code, s))
if c is not None:
    cur = c.cursor()
    cur.execute("SELECT 1")
    check(cur.fetchone() == (1,), "SELECT 1 after the login")

    # a backend that cannot be reached: the datasource's name, no host,
    # port, backend user or schema
    try:
        cur.execute("SELECT 1 /*+ dal datasource=dead */")
        check(False, "a query on an unreachable datasource succeeded")
    except pymysql.err.MySQLError as e:
        msg = e.args[1]
        check(e.args[0] == 1429, "unreachable backend: error %s, not 1429: %s" % (e.args[0], msg))
        check("dead" in msg, "the error does not name the datasource: " + msg)
        for secret in ("127.0.0.1", closed, "backenduser", "hiddenschema", "backendpw"):
            check(secret not in msg, "the error names %s: %s" % (secret, msg))
        print("unreachable:", msg)

    # a server's error naming its backend account: the client's account instead
    try:
        cur.execute("SELECT * FROM mysql.user /*+ dal datasource=weak raw */")
        check(False, "a query the backend account may not run succeeded")
    except pymysql.err.MySQLError as e:
        msg = e.args[1]
        check(e.args[0] == 1142, "denied table: error %s, not 1142: %s" % (e.args[0], msg))
        check("weakling" not in msg, "the error names the backend user: " + msg)
        check("'app'@'127.0.0.1'" in msg, "the error does not name the client's account: " + msg)
        print("denied:", msg)
    c.close()

# the default settings: the waits grow, 1 s then 2 s then 3 s
took = [login(port2, "Other-Pw-%d-zz" % i)[0] for i in range(5)]
check(took[3] >= 1.0 and took[4] >= 2.0, "the waits do not grow: %s" % took)

# a held reply holds no thread: on the proxy's only I/O thread, another
# client is served while a failed login's reply waits (>= 3 s now)
s, code, c = login(port2, "app-s3cret", user="app")
check(code == 0, "the right password on the second proxy: error %s" % code)
if c is not None:
    # the success cleared the address: this failure counts from 1 again,
    # so fail 5 more times to hold the next reply >= 3 s
    for i in range(5):
        login(port2, "Again-Pw-%d-zz" % i)
    waiting = threading.Thread(target=login, args=(port2, "Held-Pw-zz"))
    waiting.start()
    time.sleep(0.2)
    cur = c.cursor()
    cur.execute("SELECT 2")
    check(cur.fetchone() == (2,), "SELECT 2 while a reply is held")
    check(waiting.is_alive(), "the held login ended before another client was served")
    waiting.join()
    c.close()
print("bad:", bad)
sys.exit(1 if bad else 0)
EOF
cat "$work/guard.out"

px_stop "${pids[0]}" "$work/px.log"
px_stop "${pids[1]}" "$work/px2.log"
log="$work/px.log"
grep -q "access denied for user 'intruder' from 127.0.0.1 (1 failed login from this address since the last line, 1 in a row)" "$log" ||
    fail "no log line for the first failure: $(head -20 "$log")"
grep -Eq "access denied for user 'intruder' from 127.0.0.1 \([0-9]+ failed logins? from this address since the last line, 20 in a row\)" "$log" ||
    fail "no log line counting 20 failures in a row: $(grep 'access denied' "$log" | tail -5)"
grep -Eq "user 'app' logged in from 127.0.0.1 after 20 failed logins in a row \([0-9]+ since the last line\)" \
    "$log" || fail "no log line for the login after 20 failures: $(tail -5 "$log")"
lines=$(grep -c "access denied for user 'intruder'" "$log" || true)
[ "$lines" -lt 20 ] || fail "a log line per failure ($lines), not at most one a second"
! grep -q "Guess-Pw\|app-s3cret" "$log" "$work/px2.log" || fail "a password in the log"
grep -q "backenduser@127.0.0.1:$closed/hiddenschema" "$log" ||
    fail "the log lacks the unreachable backend's details: $(grep -v 'access denied' "$log" | head)"
grep -q "weakling" "$log" || fail "the log lacks the backend account's error"
# after the success on the second proxy, its failures count from 1 again
[ "$(grep -c "from 127.0.0.1 (1 failed login from this address since the last line, 1 in a row)" \
    "$work/px2.log")" -eq 2 ] ||
    fail "px2: the failures after the success do not count from 1: $(grep 'in a row' "$work/px2.log")"

px_finish proxy_guard_test
