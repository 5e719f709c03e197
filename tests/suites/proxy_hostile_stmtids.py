#!/usr/bin/env python3
"""proxy_hostile_stmtids.py -- the cost of a statement id lookup (run by
proxy_hostile_stmtids.sh):

    proxy_hostile_stmtids.py PORT PROXY_PID PASSWORD

A client may hold 16,382 prepared statements (MariaDB's
max_prepared_stmt_count).  COM_STMT_CLOSE, RESET and SEND_LONG_DATA are
answered by the client's I/O thread itself, and COM_STMT_CLOSE of an
unknown id has no reply, so a client can send them back to back without
reading: each costs the proxy a walk over all of the client's statements,
and the I/O thread serves its other clients only in between.  Measured in
the proxy's CPU time (utime + stime of /proc/PID/stat), not in wall-clock
time: 400,000 COM_STMT_CLOSE of an unknown id from a client with one
statement, then from one with 16,000.  A lookup that does not depend on
the count costs about the same both times; the walk costs thousands of
times more.  Fails when the second costs over 20 times the first (and
over a second of CPU).  FAIL: lines on stderr, exit 1 if any."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import cpu_seconds, login, packet, read_packet  # noqa: E402

PORT, PID, PASSWORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
CLOSES = 400000


def prepare_many(sock, n):
    """n statements `DO 1`, prepared 500 at a time without waiting."""
    done = 0
    while done < n:
        k = min(500, n - done)
        sock.sendall(b"".join(packet(0, b"\x16DO 1") for _ in range(k)))
        for _ in range(k):
            ok = read_packet(sock)
            if ok[:1] != b"\x00":
                raise RuntimeError("prepare %d: %r" % (done, ok[:120]))
        done += k


def closes_cost(nstmts):
    """The proxy's CPU seconds for CLOSES unknown-id COM_STMT_CLOSE from a
    client holding nstmts statements (a COM_PING after them: its reply
    says they were all taken)."""
    conn = login(PORT, PASSWORD)
    sock = conn._sock
    prepare_many(sock, nstmts)
    batch = b"".join(packet(0, b"\x19" + struct.pack("<I", 0x7FFFFFF0)) for _ in range(10000))
    before = cpu_seconds(PID)
    for _ in range(CLOSES // 10000):
        sock.sendall(batch)
    sock.sendall(packet(0, b"\x0e"))
    if read_packet(sock)[:1] != b"\x00":
        raise RuntimeError("COM_PING after the closes: no OK")
    cost = cpu_seconds(PID) - before
    conn.close()
    return cost


def main():
    one = closes_cost(1)
    many = closes_cost(16000)
    print("%d COM_STMT_CLOSE of an unknown id: %.2f s of the proxy's CPU with 1 statement, "
          "%.2f s with 16,000" % (CLOSES, one, many), flush=True)
    if many > 1.0 and many > 20 * max(one, 0.01):
        print("FAIL: a statement id lookup walks all of a client's statements: %d packets of 9 "
              "bytes, which need no reply, cost the I/O thread %.2f s of CPU (%.2f s with one "
              "statement), while its other clients wait" % (CLOSES, many, one),
              file=sys.stderr, flush=True)
        sys.exit(1)


main()
