"""proxy_hostile_wire.py -- the raw MySQL protocol the proxy_hostile_*
scripts speak to dal-proxy (imported, not run): packets, a login through
PyMySQL whose socket is then used raw, COM_STMT_* commands, reading a
reply, and the proxy's VmRSS and CPU time."""
import os
import struct

import pymysql

MB = 1024 * 1024


def packet(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        got = sock.recv(n - len(buf))
        if not got:
            raise ConnectionError("closed by the proxy")
        buf += got
    return buf


def read_packet(sock):
    """One logical packet's payload."""
    out = b""
    while True:
        h = read_exact(sock, 4)
        n = h[0] | h[1] << 8 | h[2] << 16
        out += read_exact(sock, n)
        if n < 0xFFFFFF:
            return out


def lenenc(b):
    n = len(b)
    if n < 251:
        return bytes([n]) + b
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n) + b
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3] + b
    return b"\xfe" + struct.pack("<Q", n) + b


def login(port, password, user="app", db="shop", **kw):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           database=db, autocommit=True, max_allowed_packet=256 * MB,
                           connect_timeout=30, read_timeout=120, write_timeout=120, **kw)


def is_eof(p):
    return p[:1] == b"\xfe" and len(p) < 9


def reply(sock):
    """The reply to a command, for PyMySQL's capabilities (EOF packets):
    ("OK", payload), ("ERR", code, message) or ("ROWS", [row payloads])."""
    first = read_packet(sock)
    if first[:1] == b"\xff":
        return ("ERR", struct.unpack("<H", first[1:3])[0], first[9:].decode("latin1"))
    if first[:1] == b"\x00":
        return ("OK", first)
    for _ in range(first[0]):
        read_packet(sock)
    p = read_packet(sock)
    if is_eof(p):
        p = read_packet(sock)
    rows = []
    while not is_eof(p):
        if p[:1] == b"\xff":
            return ("ERR", struct.unpack("<H", p[1:3])[0], p[9:].decode("latin1"))
        rows.append(p)
        p = read_packet(sock)
    return ("ROWS", rows)


def query(sock, sql):
    """COM_QUERY of sql (bytes): its reply."""
    sock.sendall(packet(0, b"\x03" + sql))
    return reply(sock)


def prepare(sock, sql):
    """COM_STMT_PREPARE: (statement id, parameter count), or the ERR reply
    as ("ERR", code, message)."""
    sock.sendall(packet(0, b"\x16" + sql))
    ok = read_packet(sock)
    if ok[:1] == b"\xff":
        return ("ERR", struct.unpack("<H", ok[1:3])[0], ok[9:].decode("latin1"))
    stmt, ncols, nparams = struct.unpack("<IHH", ok[1:9])
    for n in (nparams, ncols):
        if n:
            for _ in range(n + 1):
                read_packet(sock)
    return stmt, nparams


def execute_strings(sock, stmt, values):
    """COM_STMT_EXECUTE with each value a VAR_STRING parameter: its reply."""
    nulls = b"\0" * ((len(values) + 7) // 8)
    payload = (b"\x17" + struct.pack("<IBI", stmt, 0, 1) + nulls + b"\x01" +
               b"\xfd\x00" * len(values) + b"".join(lenenc(v) for v in values))
    sock.sendall(packet(0, payload))
    return reply(sock)


def long_data(sock, stmt, param, data):
    """COM_STMT_SEND_LONG_DATA (no reply)."""
    sock.sendall(packet(0, b"\x18" + struct.pack("<IH", stmt, param) + data))


def stmt_reset(sock, stmt):
    sock.sendall(packet(0, b"\x1a" + struct.pack("<I", stmt)))
    return reply(sock)


def rss(pid):
    """The process's resident memory in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS for %d" % pid)


def sanitized(pid):
    """Whether the process runs under AddressSanitizer, whose allocator
    keeps freed blocks: its RSS says nothing of the program's."""
    with open("/proc/%d/maps" % pid) as f:
        return any("libasan" in line for line in f)


def cpu_seconds(pid):
    """The process's CPU time so far (utime + stime), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
