#!/usr/bin/env bash
# proxy_tls_test.sh -- dal-proxy's TLS and caching_sha2_password, judged by
# clients nobody here wrote: the `mariadb` client with --ssl (verifying the
# certificate, made here by `openssl req`), PyMySQL over Python's ssl (the
# socket must be a TLS one with a cipher), caching_sha2_password's fast
# path and full authentication, wrong passwords (1045), a client that
# starts TLS and then sends garbage (only it is closed), a result and a
# statement over 16 MB (split packets) through TLS, require_tls (3159),
# sysbench with --mysql-ssl, concurrent TLS clients, and `dal-proxy
# --check` on bad TLS files.  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

# Debian's python3 (/usr/bin), where python3-pymysql installs it
py=/usr/bin/python3
"$py" -c 'import pymysql' || { echo "FAIL: PyMySQL is not installed (tests/harness/deps.sh)" >&2; exit 1; }

# ---- a certificate for 127.0.0.1, and a key that is not its key ----------
mkcert() { # KEY CERT
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$1" -out "$2" 2>/dev/null
}
mkcert "$work/key.pem" "$work/cert.pem"
mkcert "$work/other-key.pem" "$work/other-cert.pem"

px_cluster 1 --db shop
# a server that takes and returns packets over 16 MB; set before dal connects
"$harness/cluster.sh" client "$work/c" m0 -e 'SET GLOBAL max_allowed_packet = 67108864'

export PX_TLS_PASSWORD='tls-s3cret' PX_HASH_PASSWORD='hash-pw-42'
hash=$("$py" -c 'import hashlib,os; p=os.environ["PX_HASH_PASSWORD"].encode();
print("*" + hashlib.sha1(hashlib.sha1(p).digest()).hexdigest().upper())')
write_ini() { # FILE PORT [extra [proxy] lines]
    cat >"$1" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/shop
[dal]
default_datasource = ds0
[proxy]
listen = 127.0.0.1:$2
database = shop
$3
[proxy user app]
password = \${PX_TLS_PASSWORD}
[proxy user hashed]
password_hash = $hash
EOF
}
port=$("$harness/cluster.sh" free-port)
strict=$("$harness/cluster.sh" free-port)
notls=$("$harness/cluster.sh" free-port)
write_ini "$work/px.ini" "$port" "tls_cert = $work/cert.pem
tls_key = $work/key.pem"
write_ini "$work/strict.ini" "$strict" "tls_cert = $work/cert.pem
tls_key = $work/key.pem
require_tls = on"
write_ini "$work/notls.ini" "$notls" ""

# ---- the configuration checks --------------------------------------------
"$proxy_bin" -c "$work/px.ini" --check >/dev/null || fail "--check of a good TLS configuration"
write_ini "$work/bad.ini" "$port" "tls_cert = $work/missing.pem
tls_key = $work/key.pem"
out=$("$proxy_bin" -c "$work/bad.ini" --check 2>&1) && fail "--check took a missing tls_cert"
grep -q "bad.ini:8: .*tls_cert: cannot read" <<<"$out" || fail "missing tls_cert: $out"
write_ini "$work/bad.ini" "$port" "tls_cert = $work/key.pem
tls_key = $work/key.pem"
out=$("$proxy_bin" -c "$work/bad.ini" --check 2>&1) && fail "--check took a key as tls_cert"
grep -q "bad.ini:8: .*holds no PEM certificate" <<<"$out" || fail "key as tls_cert: $out"
write_ini "$work/bad.ini" "$port" "tls_cert = $work/cert.pem"
out=$("$proxy_bin" -c "$work/bad.ini" --check 2>&1) && fail "--check took tls_cert without tls_key"
grep -q "bad.ini:8: .*needs both tls_cert and tls_key" <<<"$out" || fail "tls_cert alone: $out"
write_ini "$work/bad.ini" "$port" "require_tls = on"
out=$("$proxy_bin" -c "$work/bad.ini" --check 2>&1) && fail "--check took require_tls without a certificate"
grep -q "bad.ini:8: .*require_tls needs tls_cert" <<<"$out" || fail "require_tls alone: $out"
write_ini "$work/bad.ini" "$port" "tls_cert = $work/cert.pem
tls_key = $work/other-key.pem"
out=$(timeout 20 "$proxy_bin" -c "$work/bad.ini" 2>&1) && fail "dal-proxy started with a key not its certificate's"
grep -q "not a PEM private key of tls_cert.*key values mismatch" <<<"$out" || fail "mismatched key: $out"

# a key under a passphrase: refused, not asked for
openssl pkey -in "$work/key.pem" -aes256 -passout pass:secret -out "$work/locked-key.pem"
write_ini "$work/bad.ini" "$port" "tls_cert = $work/cert.pem
tls_key = $work/locked-key.pem"
out=$(timeout 20 "$proxy_bin" -c "$work/bad.ini" 2>&1 </dev/null) && fail "dal-proxy started with a locked key"
grep -q "tls_key .*locked-key.pem: not a PEM private key" <<<"$out" || fail "locked key: $out"

px_start "$work/px.ini" "$port"
px_start "$work/strict.ini" "$strict"
px_start "$work/notls.ini" "$notls"

# ---- the mariadb client over TLS, verifying the certificate -----------------
tlsc() { mariadb -h127.0.0.1 -P"$1" -uapp -p"$PX_TLS_PASSWORD" --ssl --ssl-ca="$work/cert.pem" \
             --ssl-verify-server-cert "${@:2}"; }
out=$(tlsc "$port" shop -e 'status' 2>&1) || fail "mariadb --ssl: $out"
echo "$out" | grep -Eq 'SSL:.*Cipher in use is [A-Z0-9_-]+' || fail "no TLS cipher in: $out"
tlsc "$port" shop -e 'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))' || fail "DDL over TLS"
tlsc "$port" shop -e "INSERT INTO t VALUES (1, 'one'), (2, 'two')" || fail "INSERT over TLS"
out=$(tlsc "$port" shop -N -e 'SELECT v FROM t ORDER BY id' 2>&1) || true
[ "$out" = "$(printf 'one\ntwo')" ] || fail "SELECT over TLS: $out"
# without --ssl the same proxy serves plaintext, which has no cipher
out=$(mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TLS_PASSWORD" --skip-ssl shop -e 'status' 2>&1) \
    || fail "plaintext beside TLS: $out"
echo "$out" | grep -q 'Cipher in use' && fail "--skip-ssl used TLS: $out"
# a wrong password over TLS
out=$(mariadb -h127.0.0.1 -P"$port" -uapp -pwrong --ssl -e 'SELECT 1' 2>&1) && fail "a wrong password got in over TLS"
grep -q "ERROR 1045 (28000): Access denied for user 'app'" <<<"$out" || fail "wrong password over TLS: $out"
# the client library's own caching_sha2_password plugin: over TLS a user
# with a password takes the fast path, one with a hash the full one;
# without TLS both are switched to mysql_native_password
for u in "app $PX_TLS_PASSWORD" "hashed $PX_HASH_PASSWORD"; do
    set -- $u
    for tlsopt in --ssl --skip-ssl; do
        out=$(mariadb -h127.0.0.1 -P"$port" -u"$1" -p"$2" $tlsopt --default-auth=caching_sha2_password \
                  shop -N -e 'SELECT COUNT(*) FROM t' 2>&1) || true
        [ "$out" = 2 ] || fail "mariadb $tlsopt --default-auth=caching_sha2_password as $1: $out"
    done
    out=$(mariadb -h127.0.0.1 -P"$port" -u"$1" -pwrong --ssl --default-auth=caching_sha2_password \
              -e 'SELECT 1' 2>&1) && fail "caching_sha2_password: a wrong password got in as $1"
    grep -q "ERROR 1045" <<<"$out" || fail "caching_sha2_password, wrong password as $1: $out"
done
# a proxy without tls_cert does not offer TLS: a client that insists stops
# (and one that asks all the same gets 1043: the PyMySQL part below)
out=$(tlsc "$notls" -e 'SELECT 1' 2>&1) && fail "TLS required of a proxy without tls_cert got in"
grep -q "ERROR 2026" <<<"$out" || fail "TLS required without tls_cert: $out"
# require_tls: plaintext refused with 3159, TLS served
out=$(mariadb -h127.0.0.1 -P"$strict" -uapp -p"$PX_TLS_PASSWORD" --skip-ssl -e 'SELECT 1' 2>&1) \
    && fail "require_tls let a plaintext login in"
grep -q "ERROR 3159" <<<"$out" || fail "require_tls: $out"
out=$(tlsc "$strict" shop -N -e 'SELECT 1' 2>&1) || true
[ "$out" = 1 ] || fail "require_tls over TLS: $out"

# ---- sysbench over TLS: prepared statements and text ---------------------
# through the proxy that refuses plaintext, so the run is TLS throughout:
# the read-only mix with 4 threads, the read-write one (transactions) with
# one.  sysbench's --mysql-ssl reads cacert.pem, client-cert.pem and
# client-key.pem from its working directory (the proxy asks for no client
# certificate: the pair only has to load).
mkdir "$work/sb"
cp "$work/cert.pem" "$work/sb/cacert.pem"
mkcert "$work/sb/client-key.pem" "$work/sb/client-cert.pem"
cd "$work/sb"
sb=(--mysql-host=127.0.0.1 --mysql-port="$strict" --mysql-user=app --mysql-password="$PX_TLS_PASSWORD"
    --mysql-db=shop --mysql-ssl=on --tables=1 --table-size=500 --rand-seed=7)
if sysbench oltp_read_write "${sb[@]}" prepare >"$work/sb.out" 2>&1; then
    for mode in auto disable; do
        sysbench oltp_read_only "${sb[@]}" --db-ps-mode="$mode" --threads=4 --events=200 run \
            >"$work/sb.out" 2>&1 || fail "sysbench oltp_read_only over TLS, $mode: $(grep -m3 FATAL "$work/sb.out")"
        sysbench oltp_read_write "${sb[@]}" --db-ps-mode="$mode" --threads=1 --events=100 run \
            >"$work/sb.out" 2>&1 || fail "sysbench oltp_read_write over TLS, $mode: $(grep -m3 FATAL "$work/sb.out")"
    done
    out=$(tlsc "$strict" shop -N -e 'SELECT COUNT(*) FROM sbtest1' 2>&1) || true
    [ "$out" = 500 ] || fail "sbtest1 after sysbench over TLS: $out"
else
    fail "sysbench prepare over TLS: $(tail -3 "$work/sb.out")"
fi
cd "$tests"

# ---- PyMySQL: TLS sockets, caching_sha2_password, garbage, 16 MB ----------
PX_PORT=$port PX_NOTLS=$notls PX_CERT=$work/cert.pem "$py" - <<'EOF' || fail "PyMySQL"
import io, os, socket, ssl, struct, contextlib
import pymysql, pymysql._auth, pymysql.connections

port = int(os.environ["PX_PORT"])
tls = {"ca": os.environ["PX_CERT"], "check_hostname": True}
pw = {"app": os.environ["PX_TLS_PASSWORD"], "hashed": os.environ["PX_HASH_PASSWORD"]}

class Sha2(pymysql.connections.Connection):
    """A client whose default plugin is caching_sha2_password (MySQL 8's
    libraries, mysql2): it answers the handshake with that plugin's
    scramble whatever the server offered."""
    def _get_server_information(self):
        super()._get_server_information()
        self._auth_plugin_name = "caching_sha2_password"

def connect(user, password=None, cls=pymysql.connections.Connection, ssl=None, p=port):
    return cls(host="127.0.0.1", port=p, user=user, database="shop",
               password=pw[user] if password is None else password, ssl=ssl)

def sha2_path(user, ssl):
    """The caching_sha2_password exchange the client went through."""
    out = io.StringIO()
    pymysql._auth.DEBUG = True
    try:
        with contextlib.redirect_stdout(out):
            c = connect(user, cls=Sha2, ssl=ssl)
    finally:
        pymysql._auth.DEBUG = False
    with c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone() == (2,)
    c.close()
    text = out.getvalue()
    if "succeeded by fast path" in text:
        return "fast"
    if "Sending plain password via secure connection" in text:
        return "full"
    return "other: " + text

# TLS: the socket is a TLS one, of 1.2 or later, with a cipher
c = connect("app", ssl=tls)
assert isinstance(c._sock, ssl.SSLSocket), type(c._sock)
assert c._sock.version() in ("TLSv1.2", "TLSv1.3"), c._sock.version()
assert c._sock.cipher() and c._sock.cipher()[0], c._sock.cipher()
with c.cursor() as cur:
    cur.execute("SELECT id, v FROM t ORDER BY id")
    assert cur.fetchall() == ((1, "one"), (2, "two"))
    # a statement and a result over 16 MB: split packets, through TLS
    big = 17 * 1024 * 1024
    cur.execute("SELECT LENGTH(%s)", ("y" * big,))
    assert cur.fetchone() == (big,), "a 17 MB statement"
    cur.execute("SELECT REPEAT('x', %s), 'after'", (big,))
    row = cur.fetchone()
    assert row[0] is not None and len(row[0]) == big and row[0] == "x" * big, "a 17 MB value"
    assert row[1] == "after"
    cur.execute("SELECT 2")
    assert cur.fetchone() == (2,)
c.close()

# caching_sha2_password: with the password known the fast path, TLS or
# not; with only a hash, the full authentication over TLS, and without TLS
# a switch to mysql_native_password (no RSA exchange)
assert sha2_path("app", None) == "fast"
assert sha2_path("app", tls) == "fast"
assert sha2_path("hashed", tls) == "full"
assert sha2_path("hashed", None) == "other: ", "hashed without TLS: switched to native"

# COM_CHANGE_USER answered for caching_sha2_password (it runs on a worker;
# the full authentication then continues on the I/O thread)
def change_user(c, user, password):
    resp = pymysql._auth.scramble_caching_sha2(password.encode(), c.salt[:20])
    c._execute_command(pymysql.constants.COMMAND.COM_CHANGE_USER,
                       user.encode() + b"\0" + bytes([len(resp)]) + resp + b"shop\0" +
                       struct.pack("<H", 45) + b"caching_sha2_password\0")
    pkt, steps = c._read_packet(), []
    if pkt.is_extra_auth_data():
        steps.append(pkt._data[1])
        if pkt._data[1] == 4:
            c.write_packet(password.encode() + b"\0")
        pkt = c._read_packet()
    assert pkt.is_ok_packet(), pkt._data
    with c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone() == (2,)
    return steps
c = connect("app", ssl=tls)
assert change_user(c, "hashed", pw["hashed"]) == [4], "change_user: full authentication"
assert change_user(c, "app", pw["app"]) == [3], "change_user: fast path"
try:
    change_user(c, "hashed", "wrong")
    raise SystemExit("change_user: a wrong password got in")
except pymysql.err.OperationalError as e:
    assert e.args[0] == 1045, e.args
c._sock.close()

# wrong passwords and unknown users: 1045, whichever path
pw["nobody"] = "whatever"
for user, cls, s in (("app", Sha2, tls), ("hashed", Sha2, tls), ("app", Sha2, None),
                     ("hashed", Sha2, None), ("nobody", Sha2, tls), ("nobody", Sha2, None),
                     ("hashed", pymysql.connections.Connection, tls)):
    try:
        connect(user, password=None if user == "nobody" else "wrong", cls=cls, ssl=s)
        raise SystemExit("a wrong password got in: %s %s" % (user, s))
    except pymysql.err.OperationalError as e:
        assert e.args[0] == 1045, e.args

# a client that starts TLS, then sends garbage: it alone is closed
def read_packet(sock):
    head = b""
    while len(head) < 4:
        b = sock.recv(4 - len(head))
        if not b:
            return None
        head += b
    n = int.from_bytes(head[:3], "little")
    body = b""
    while len(body) < n:
        body += sock.recv(n - len(body))
    return body

def ssl_request(sock):
    hello = read_packet(sock)
    assert hello and hello[0] == 10
    caps = 0x200 | 0x800 | 0x8000 | 0x80000  # PROTOCOL_41 SSL SECURE_CONNECTION PLUGIN_AUTH
    body = struct.pack("<IIB23x", caps, 1 << 24, 45)
    sock.sendall(struct.pack("<I", len(body))[:3] + b"\x01" + body)

def closed(sock):
    sock.settimeout(10)
    try:
        while sock.recv(4096):
            pass          # an alert, maybe: then the end
        return True
    except ConnectionResetError:
        return True

s = socket.create_connection(("127.0.0.1", port))
ssl_request(s)
s.sendall(b"\x16\x03\x01\x00\x05garbage, not a ClientHello" * 20)
assert closed(s), "garbage instead of a ClientHello"
s.close()

# the TLS handshake done, then bytes that are no TLS record
ctx = ssl.create_default_context(cafile=os.environ["PX_CERT"])
raw = socket.create_connection(("127.0.0.1", port))
ssl_request(raw)
t = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
os.write(t.fileno(), b"\x17\x03\x03\x00\x10" + b"\xee" * 16 + b"more garbage" * 10)
t.settimeout(10)
try:
    while t.recv(4096):
        pass
except (ssl.SSLError, ConnectionResetError, OSError):
    pass
t.close()

# garbage while a worker runs the client's statement: the worker sends the
# reply, finds the bad record as it waits for the next command, and the
# client is closed after its reply
# (sent once the statement is surely running: arriving with it, the bad
# record would close the client before the statement is read)
import time
c = connect("app", ssl=tls)
c._execute_command(pymysql.constants.COMMAND.COM_QUERY, "SELECT SLEEP(1), 'slept'")
time.sleep(0.4)
os.write(c._sock.fileno(), b"\x17\x03\x03\x00\x10" + b"\xee" * 16)
c._read_query_result()
assert c._result.rows == ((0, "slept"),), c._result.rows
c._sock.settimeout(10)
try:
    assert c._sock.recv(1) == b"", "a connection that sent a bad record was served on"
except (ssl.SSLError, ConnectionResetError):
    pass                  # the alert that says why
# then the end of the stream, without the client sending more
import select
fd = c._sock.fileno()
try:
    while select.select([fd], [], [], 10)[0]:
        if os.read(fd, 4096) == b"":
            break
    else:
        raise SystemExit("a connection that sent a bad record was left open")
except ConnectionResetError:
    pass
c._sock.close()

# clients at once over TLS, each sending its statements back to back (the
# workers keep a client and wait for its next statement through TLS)
import threading
errors = []
def loop(k):
    try:
        cc = connect("app" if k % 2 else "hashed", ssl=tls, cls=Sha2 if k % 3 else
                     pymysql.connections.Connection)
        with cc.cursor() as cur:
            for i in range(300):
                cur.execute("SELECT %s, v FROM t WHERE id = %s", (i, 1 + i % 2))
                assert cur.fetchone() == (i, "one" if i % 2 == 0 else "two")
        cc.close()
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=loop, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors

# and a client that asks for TLS and vanishes
s = socket.create_connection(("127.0.0.1", port))
ssl_request(s)
s.close()

# an SSLRequest to a proxy without tls_cert: error 1043, as before
s = socket.create_connection(("127.0.0.1", int(os.environ["PX_NOTLS"])))
ssl_request(s)
err = read_packet(s)
assert err and err[0] == 0xFF and int.from_bytes(err[1:3], "little") == 1043, err
s.close()

# the proxy serves on, over TLS and not
for s in (tls, None):
    c = connect("app", ssl=s)
    with c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone() == (2,)
    c.close()
EOF

for ini in px strict notls; do
    grep -q -e "$PX_TLS_PASSWORD" -e "$PX_HASH_PASSWORD" "$work/$ini.log" \
        && fail "a password is in the $ini proxy's log"
done
# every proxy still up, then stopped cleanly (under the sanitizers: no
# leak or report at exit either)
names=(px strict notls)
for i in 0 1 2; do
    kill -0 "${pids[$i]}" 2>/dev/null || fail "the ${names[$i]} proxy died: $(tail -5 "$work/${names[$i]}.log")"
done
for i in 0 1 2; do px_stop "${pids[$i]}" "$work/${names[$i]}.log"; done

px_finish "proxy TLS tests"
