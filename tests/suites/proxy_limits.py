#!/usr/bin/env python3
"""proxy_limits.py -- dal-proxy against hostile clients, with raw sockets
(and PyMySQL for the logins): run by tests/suites/proxy_limits_test.sh, which
starts the servers and the proxy (max_allowed_packet = 96 MiB,
max_connections = 30, connect_timeout = 2 s) and passes

    proxy_limits.py PORT PROXY_PID PASSWORD STEP...

Each STEP is one check; the proxy's memory is its VmRSS.  A line FAIL: ...
per failure on stderr, exit 1 if any.  Only generous deadlines: the
machine may be slow.
"""
import select
import socket
import struct
import sys
import time

import pymysql

# the raw protocol's packets, shared with the proxy_hostile_* scripts (this
# script's directory is on sys.path)
from proxy_hostile_wire import packet, read_packet  # noqa: E402

MB = 1024 * 1024
PORT, PID, PASSWORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
fails = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    fails.append(msg)


def note(msg):
    print(msg, flush=True)


def sanitized():
    """Whether the proxy runs under AddressSanitizer, whose allocator keeps
    freed blocks in quarantine and its own pools: its RSS says nothing
    about dal-proxy's."""
    with open("/proc/%d/maps" % PID) as f:
        return any("libasan" in line for line in f)


SANITIZED = sanitized()


def rss_fail(msg):
    """A bound on the proxy's memory: judged on a plain build only (the
    same suite runs there); under AddressSanitizer the step still runs,
    and every other check of it is judged."""
    if SANITIZED:
        note("not judged under AddressSanitizer: " + msg)
    else:
        fail(msg)


def rss():
    """The proxy's resident memory in bytes."""
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS for %d" % PID)


def login(**kw):
    return pymysql.connect(host="127.0.0.1", port=PORT, user="root", password=PASSWORD,
                           database="shop", autocommit=True, max_allowed_packet=256 * MB,
                           connect_timeout=30, read_timeout=120, write_timeout=120, **kw)


def query1(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def raw_connect():
    """A socket with the proxy's greeting read: a client that has not
    answered the handshake yet."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    greeting = read_packet(s)
    return s, greeting


def err_code(payload):
    return struct.unpack("<H", payload[1:3])[0] if payload[:1] == b"\xff" else None


def wait_closed(sock, seconds):
    """Whether the peer closes sock within seconds (what it sent first,
    an ERR, is read and dropped); a reset counts as closed."""
    sock.setblocking(False)
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([sock], [], [], 0.5)
        if not r:
            continue
        try:
            if not sock.recv(65536):
                return True
        except BlockingIOError:
            continue
        except OSError:
            return True
    return False


def settle(limit, seconds):
    """Wait until the RSS is at most limit; the last value seen."""
    end = time.time() + seconds
    now = rss()
    while now > limit and time.time() < end:
        time.sleep(0.5)
        now = rss()
    return now


# ------------------------------------------------------------------ checks

def step_warm():
    """A first login and statement, so the pools exist: the RSS after it
    is the start every later figure is measured from."""
    global start
    conn = login()
    query1(conn, "DROP TABLE IF EXISTS big")
    # MyISAM: InnoDB refuses a 1 MB value with the cluster's small redo log
    query1(conn, "CREATE TABLE big (id INT PRIMARY KEY, v LONGTEXT) ENGINE=MyISAM")
    for i in range(8):
        query1(conn, "INSERT INTO big VALUES (%d, REPEAT(CHAR(%d), %d))" % (i, 65 + i, MB))
    conn.close()
    time.sleep(1)
    start = rss()
    note("start: %.1f MB" % (start / MB))


def step_preauth():
    """8 clients that announce a 16 MB chunk of a 48 MB handshake response
    and send 40 MB of it: each is closed after little (the limit before
    authentication is 64 KiB), and the proxy does not buffer it."""
    socks = [raw_connect()[0] for _ in range(8)]
    base = rss()
    for s in socks:
        s.sendall(b"\xff\xff\xff\x01")  # a full chunk: more follow
        s.setblocking(False)
    sent = [0] * len(socks)
    closed = [False] * len(socks)
    piece = b"\0" * MB
    peak = base
    end = time.time() + 120
    while time.time() < end and not all(closed[i] or sent[i] >= 40 * MB for i in range(len(socks))):
        progress = False
        for i, s in enumerate(socks):
            if closed[i] or sent[i] >= 40 * MB:
                continue
            try:
                n = s.send(piece)
                sent[i] += n
                progress = progress or n > 0
            except BlockingIOError:
                pass
            except OSError:
                closed[i] = True
        peak = max(peak, rss())
        if not progress:
            time.sleep(0.05)
    time.sleep(1)
    peak = max(peak, rss())
    for i, s in enumerate(socks):
        if not closed[i] and not wait_closed(s, 20):
            fail("pre-auth: a client that sent %d MB of an oversized handshake packet was "
                 "not closed" % (sent[i] // MB))
        s.close()
    note("pre-auth: sent %s MB, RSS peak +%.1f MB" %
         ([n // MB for n in sent], (peak - base) / MB))
    if peak - base > 32 * MB:
        rss_fail("pre-auth: RSS grew by %.1f MB for 8 half-sent 48 MB packets" % ((peak - base) / MB))


def prepare(sock, sql):
    """COM_STMT_PREPARE on an authenticated socket: the statement id."""
    sock.sendall(packet(0, b"\x16" + sql.encode()))
    ok = read_packet(sock)
    if ok[:1] != b"\x00":
        raise RuntimeError("prepare failed: %r" % ok[:200])
    stmt, ncols, nparams = struct.unpack("<IHH", ok[1:9])
    for n in (nparams, ncols):   # definitions, each list ended by an EOF
        if n:
            for _ in range(n + 1):
                read_packet(sock)
    return stmt


def step_longdata():
    """24 x 8 MB of COM_STMT_SEND_LONG_DATA to one parameter: the value is
    over max_allowed_packet (96 MiB), so the execution fails with the
    server's error 1105 and the proxy does not hold 192 MB."""
    conn = login()
    sock = conn._sock
    stmt = prepare(sock, "SELECT LENGTH(?)")
    base = rss()
    peak = base
    chunk = b"y" * (8 * MB)
    for _ in range(24):
        sock.sendall(packet(0, b"\x18" + struct.pack("<IH", stmt, 0) + chunk))
        peak = max(peak, rss())
    # COM_STMT_EXECUTE: no cursor, 1 iteration, no NULL, types bound: BLOB
    sock.sendall(packet(0, b"\x17" + struct.pack("<IBI", stmt, 0, 1) + b"\x00\x01\xfc\x00"))
    reply = read_packet(sock)
    after = settle(base + 48 * MB, 10)
    peak = max(peak, after)
    note("long data: reply %r, RSS peak +%.1f MB, after +%.1f MB" %
         (reply[:40], (peak - base) / MB, (after - base) / MB))
    if err_code(reply) != 1105 or b"max_allowed_packet" not in reply:
        fail("long data: 192 MB for one parameter: expected error 1105 (max_allowed_packet), "
             "got %r" % reply[:120])
    if peak - base > 150 * MB:
        rss_fail("long data: RSS grew by %.1f MB (max_allowed_packet is 96 MB)" % ((peak - base) / MB))
    if after - base > 48 * MB:
        rss_fail("long data: RSS still %.1f MB above after the execution" % ((after - base) / MB))
    try:
        if query1(conn, "SELECT 1") != ((1,),):
            fail("long data: the connection does not answer SELECT 1 after the refusal")
    except Exception as e:  # noqa: BLE001 -- any failure is the finding
        fail("long data: the connection fails after the refusal: %s" % e)
    conn.close()


def read_rows(sock):
    """A text result set (with EOF packets: PyMySQL's capabilities): the
    number of its rows."""
    first = read_packet(sock)
    if first[:1] == b"\xff":
        raise RuntimeError("error %r" % first[:120])
    for _ in range(first[0] + 1):   # column definitions, EOF
        read_packet(sock)
    n = 0
    while True:
        p = read_packet(sock)
        if p[:1] == b"\xfe" and len(p) < 9:
            return n
        if p[:1] == b"\xff":
            raise RuntimeError("error %r" % p[:120])
        n += 1


def step_pipeline():
    """20 pipelined SELECTs of 8 MB each that the client never reads: the
    proxy stops taking the next ones while replies wait, and writes a big
    reply as it builds it, so it holds far less than 20 replies."""
    conn = login()
    sock = conn._sock
    base = rss()
    sock.sendall(b"".join(packet(0, b"\x03SELECT v FROM big") for _ in range(20)))
    peak = base
    end = time.time() + 20
    while time.time() < end:
        peak = max(peak, rss())
        if peak - base > 100 * MB:
            break
        time.sleep(0.25)
    note("pipeline: RSS peak +%.1f MB (20 replies: 160 MB)" % ((peak - base) / MB))
    if peak - base > 48 * MB:
        rss_fail("pipeline: RSS grew by %.1f MB for 20 unread 8 MB replies" % ((peak - base) / MB))
    sock.close()
    time.sleep(1)
    check = login()
    if query1(check, "SELECT COUNT(*) FROM big") != ((8,),):
        fail("pipeline: the proxy does not serve the next client")
    # the same, read once all are sent: every reply comes, the commands the
    # proxy held back while replies waited included
    sock = check._sock
    sock.settimeout(120)
    sock.sendall(b"".join(packet(0, b"\x03SELECT v FROM big") for _ in range(20)))
    try:
        rows = [read_rows(sock) for _ in range(20)]
        if rows != [8] * 20:
            fail("pipeline: 20 pipelined SELECTs read at the end gave %r rows" % rows)
    except Exception as e:  # noqa: BLE001
        fail("pipeline: 20 pipelined SELECTs read at the end: %s: %s" % (type(e).__name__, e))
    check.close()


def step_handshake():
    """Clients that trickle a byte of a handshake response every half
    second fill max_connections (30): each is closed after
    connect_timeout (2 s), with error 1043, and then a normal client gets
    in; an idle authenticated client stays."""
    idle = login()
    socks = []
    full = False
    for _ in range(40):
        try:
            s, greeting = raw_connect()
        except OSError as e:
            fail("handshake: connect: %s" % e)
            break
        if err_code(greeting) == 1040:
            full = True
            s.close()
            break
        s.sendall(b"\x64\x00\x00\x01")   # a 100-byte response, sent a byte at a time
        socks.append(s)
    if not full:
        fail("handshake: %d connections and no error 1040 (max_connections = 30)" % len(socks))
    for s in socks:
        s.setblocking(False)
    open_ = list(socks)
    saw_1043 = False
    end = time.time() + 40
    while open_ and time.time() < end:
        r, _, _ = select.select(open_, [], [], 0.5)
        for s in r:
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data[4:5] == b"\xff" and err_code(data[4:]) == 1043:
                saw_1043 = True
            if not data:
                open_.remove(s)
        for s in list(open_):
            try:
                s.send(b"\0")
            except BlockingIOError:
                pass
            except OSError:
                pass
    note("handshake: %d trickling clients, %d still open after the wait" % (len(socks), len(open_)))
    if open_:
        fail("handshake: %d of %d clients trickling their handshake were not closed"
             % (len(open_), len(socks)))
    if socks and not saw_1043:
        fail("handshake: no client closed for its handshake deadline got error 1043")
    for s in socks:
        s.close()
    try:
        conn = login()
        if query1(conn, "SELECT 2") != ((2,),):
            fail("handshake: a normal client after the deadline gets a wrong answer")
        conn.close()
    except Exception as e:  # noqa: BLE001
        fail("handshake: a normal client cannot get in after the deadline: %s" % e)
    try:
        if query1(idle, "SELECT 3") != ((3,),):
            fail("handshake: the idle authenticated client gets a wrong answer")
    except Exception as e:  # noqa: BLE001
        fail("handshake: the idle authenticated client was closed: %s" % e)
    idle.close()


def step_big():
    """A 64 MB statement runs (max_allowed_packet is 96 MB)."""
    conn = login()
    got = query1(conn, "SELECT LENGTH('" + "z" * (64 * MB) + "')")
    if got != ((64 * MB,),):
        fail("big: a 64 MB statement: %r" % (got,))
    conn.close()
    after = settle(start + 32 * MB, 30)
    note("big: after the 64 MB statement, RSS +%.1f MB from the start" % ((after - start) / MB))
    if after - start > 32 * MB:
        rss_fail("big: RSS %.1f MB above the start after the 64 MB statement's client left"
             % ((after - start) / MB))


def step_many():
    """600 distinct INSERTs of about 1 MB each (ignored: the row is
    there), then the clients leave and the RSS returns near the start."""
    conns = [login() for _ in range(3)]
    pad = "q" * MB
    for i in range(600):
        query1(conns[i % 3], "INSERT IGNORE INTO big (id, v) VALUES (1, '%d %s')" % (i, pad))
    for c in conns:
        c.close()
    after = settle(start + 32 * MB, 30)
    note("many: after 600 x 1 MB statements, RSS +%.1f MB from the start" % ((after - start) / MB))
    if after - start > 32 * MB:
        rss_fail("many: RSS %.1f MB above the start after the clients of 600 x 1 MB statements left"
             % ((after - start) / MB))


def step_end():
    """Everything above gone: the RSS is back near the start."""
    after = settle(start + 32 * MB, 30)
    note("end: RSS +%.1f MB from the start" % ((after - start) / MB))
    if after - start > 32 * MB:
        rss_fail("end: RSS %.1f MB above the start once every client left" % ((after - start) / MB))


start = 0
for name in sys.argv[4:]:
    note("-- " + name)
    try:
        globals()["step_" + name]()
    except Exception as e:  # noqa: BLE001 -- a crash of a step is its failure
        fail("%s: %s: %s" % (name, type(e).__name__, e))
sys.exit(1 if fails else 0)
