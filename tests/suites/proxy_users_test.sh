#!/usr/bin/env bash
# proxy_users_test.sh -- [proxy] users = backend: clients log in to
# dal-proxy with the MariaDB accounts of a datasource, and CREATE USER,
# ALTER USER and DROP USER run on the server take effect in the proxy
# without a reload; a Host that does not match the client is refused as the
# server refuses it; [proxy user] accounts still log in; COM_CHANGE_USER
# takes backend accounts too; users = config (the default) takes none.
# Each login is also tried directly against the server: the proxy must
# answer as it does.  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db 'shard_0'
port=$("$harness/cluster.sh" free-port)
port2=$("$harness/cluster.sh" free-port)
py=/usr/bin/python3
sql() { mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass -e "$1"; }

write_ini() { # FILE PORT [LINE...]
    local f=$1 p=$2
    shift 2
    cat >"$f" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/shard_0
[dal]
default_datasource = ds0
EOF
    px_ini_proxy "$p" shop apppass 'threads = 1' 'auth_delay_after = 0' "$@" >>"$f"
}
write_ini "$work/backend.ini" "$port" "users = backend"
write_ini "$work/config.ini" "$port2"

# a configuration naming a datasource that does not exist: FILE:LINE
write_ini "$work/bad.ini" "$port" "users = backend" "users_datasource = nowhere"
if out=$("$DAL_BUILDDIR/tools/dal" -c "$work/bad.ini" check 2>&1); then
    fail "users_datasource = nowhere accepted"
else
    grep -q "bad.ini:[0-9]*: users_datasource: no \[datasource nowhere\]" <<<"$out" ||
        fail "users_datasource error: $out"
fi

sql "CREATE USER 'alice'@'%' IDENTIFIED BY 'alice1';
     CREATE USER 'remote'@'10.9.9.%' IDENTIFIED BY 'remote1';
     CREATE USER 'nopw'@'127.0.0.1';
     CREATE USER 'local'@'localhost' IDENTIFIED BY 'local1';
     CREATE USER 'local'@'%' IDENTIFIED BY 'other1';"
px_start "$work/backend.ini" "$port"
px_start "$work/config.ini" "$port2"

"$py" - "$port" "$port2" "${ports[0]}" >"$work/users.out" 2>&1 <<'EOF' || fail "backend accounts: $(cat "$work/users.out")"
import sys
import pymysql
import MySQLdb

proxy, config_proxy, server = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
bad = 0

def login(port, user, password, db):
    """'ok', or the error number of the refusal."""
    try:
        c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                            database=db, autocommit=True, connect_timeout=10)
        cur = c.cursor()
        cur.execute("SELECT 1")
        cur.fetchall()
        c.close()
        return "ok"
    except pymysql.err.OperationalError as e:
        return e.args[0]

def check(user, password, want, what):
    """The proxy answers as the server does, and as want says."""
    global bad
    direct = login(server, user, password, None)
    via = login(proxy, user, password, "shop")
    if via != want or direct != want:
        print("FAIL %s: proxy %r, server %r, want %r" % (what, via, direct, want))
        bad += 1

def admin(stmt):
    c = pymysql.connect(host="127.0.0.1", port=server, user="dal", password="dalpass",
                        autocommit=True)
    c.cursor().execute(stmt)
    c.close()

check("alice", "alice1", "ok", "a backend account")
check("alice", "wrong", 1045, "a wrong password")
check("nobody", "x", 1045, "no such account")
check("remote", "remote1", 1045, "a Host the client does not match")
check("nopw", "", "ok", "an account without a password")
check("nopw", "something", 1045, "a password for an account without one")
# the servers run with skip_name_resolve: 'localhost' is not a TCP client
check("local", "other1", "ok", "'%' when 'localhost' cannot match")
check("local", "local1", 1045, "the password of 'localhost'")
if login(proxy, "app", "apppass", "shop") != "ok":
    print("FAIL: a [proxy user] account no longer logs in with users = backend")
    bad += 1

# changes made on the server count within a second, without a reload
# (the proxy reads the accounts again at most once a second)
import time
admin("CREATE USER 'bob'@'%' IDENTIFIED BY 'bob1'")
time.sleep(1.1)
check("bob", "bob1", "ok", "an account created after the proxy started")
admin("ALTER USER 'bob'@'%' IDENTIFIED BY 'bob2'")
time.sleep(1.1)
check("bob", "bob2", "ok", "the new password after ALTER USER")
check("bob", "bob1", 1045, "the old password after ALTER USER")
admin("DROP USER 'bob'@'%'")
time.sleep(1.1)
check("bob", "bob2", 1045, "a dropped account")

# COM_CHANGE_USER to a backend account (MySQLdb), and to a wrong password
c = MySQLdb.connect(host="127.0.0.1", port=proxy, user="app", passwd="apppass", db="shop")
try:
    c.change_user("alice", "alice1", "shop")
    cur = c.cursor()
    cur.execute("SELECT 1")
    if cur.fetchall() != ((1,),):
        print("FAIL: after COM_CHANGE_USER to alice")
        bad += 1
except MySQLdb.Error as e:
    print("FAIL: COM_CHANGE_USER to a backend account: %r" % (e,))
    bad += 1
c.close()

# users = config (the default): the backend's accounts are not the proxy's
if login(config_proxy, "alice", "alice1", "shop") != 1045:
    print("FAIL: users = config let a backend account log in")
    bad += 1
if login(config_proxy, "app", "apppass", "shop") != "ok":
    print("FAIL: users = config: the [proxy user] account")
    bad += 1
sys.exit(1 if bad else 0)
EOF

# the proxy's log never has a password
if grep -q "alice1\|apppass" "$work/backend.log"; then fail "a password in the proxy's log"; fi
px_finish "proxy_users_test"
