#!/usr/bin/env python3
"""proxy_hostile_stmtids.py -- a client's prepared statements found by id
however many it holds (run by proxy_hostile_stmtids.sh):

    proxy_hostile_stmtids.py PORT PROXY_PID PASSWORD

A client may hold 16,382 prepared statements (MariaDB's
max_prepared_stmt_count).  COM_STMT_CLOSE, RESET and SEND_LONG_DATA are
answered by the client's I/O thread itself, and COM_STMT_CLOSE of an
unknown id has no reply, so a client can send them back to back without
reading: dal-proxy finds a statement by a binary search over its ids, so
each costs the same whatever the count.  Judged by results: 16,000
statements `SELECT 'sK'` prepared, a random half closed in random order,
400,000 COM_STMT_CLOSE of unknown ids, then every statement executed by
its id (the open ones answer their own k, the closed ones error 1243), and
the last prepared by id 0xFFFFFFFF.  The proxy's CPU for the closes is
printed, not judged.  FAIL: lines on stderr, exit 1 if any."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import cpu_seconds, login, packet, read_packet, reply  # noqa: E402

PORT, PID, PASSWORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
STMTS, CLOSES = 16000, 400000
fails = []


def prepare_many(sock, n):
    """n statements `SELECT 'sK'` (K = 0..n-1), prepared 500 at a time without
    waiting: their ids, in order of k."""
    ids = []
    while len(ids) < n:
        ks = range(len(ids), min(len(ids) + 500, n))
        sock.sendall(b"".join(packet(0, b"\x16SELECT 's%d'" % k) for k in ks))
        for k in ks:
            ok = read_packet(sock)
            if ok[:1] != b"\x00":
                raise RuntimeError("prepare %d: %r" % (k, ok[:120]))
            stmt, ncols, nparams = struct.unpack("<IHH", ok[1:9])
            for _ in range(ncols + 1 if ncols else 0):
                read_packet(sock)
            ids.append(stmt)
    return ids


def close(sock, stmt):
    sock.sendall(packet(0, b"\x19" + struct.pack("<I", stmt)))


def execute(sock, stmt):
    """COM_STMT_EXECUTE without parameters: the one value of its one row,
    or ("ERR", code)."""
    sock.sendall(packet(0, b"\x17" + struct.pack("<IBI", stmt, 0, 1)))
    r = reply(sock)
    if r[0] == "ERR":
        return ("ERR", r[1])
    # a binary row: 0x00, the NULL bitmap (1 byte), a string of < 251 bytes
    row = r[1][0]
    return int(row[3:3 + row[2]].decode()[1:])


def main():
    rnd = random.Random(35)
    conn = login(PORT, PASSWORD)
    sock = conn._sock
    ids = prepare_many(sock, STMTS)
    if len(set(ids)) != STMTS:
        fails.append("the proxy gave %d statements %d distinct ids" % (STMTS, len(set(ids))))
    closed = set(rnd.sample(range(STMTS), STMTS // 2))
    order = list(closed)
    rnd.shuffle(order)
    for k in order:
        close(sock, ids[k])
    unknown = b"".join(packet(0, b"\x19" + struct.pack("<I", 0x7FFFFFF0)) for _ in range(10000))
    before = cpu_seconds(PID)
    for _ in range(CLOSES // 10000):
        sock.sendall(unknown)
    sock.sendall(packet(0, b"\x0e"))
    if read_packet(sock)[:1] != b"\x00":
        fails.append("COM_PING after the closes: no OK")
    print("%d COM_STMT_CLOSE of an unknown id from a client holding %d statements: %.2f s of "
          "the proxy's CPU (not judged)" % (CLOSES, STMTS - len(closed), cpu_seconds(PID) - before),
          flush=True)
    for k in range(STMTS):
        got = execute(sock, ids[k])
        want = ("ERR", 1243) if k in closed else k
        if got != want:
            fails.append("statement %d (id %d, %s): %r, expected %r" %
                         (k, ids[k], "closed" if k in closed else "open", got, want))
            if len(fails) > 5:
                break
    stmt = prepare_many(sock, 1)[0]
    if execute(sock, 0xFFFFFFFF) != 0:
        fails.append("id 0xFFFFFFFF did not run the statement prepared last (id %d)" % stmt)
    conn.close()
    for f in fails:
        print("FAIL: " + f, file=sys.stderr, flush=True)
    if fails:
        sys.exit(1)
    print("proxy_hostile_stmtids.py: %d statements, %d closed, every id found" %
          (STMTS, len(closed)), flush=True)


main()
