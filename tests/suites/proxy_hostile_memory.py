#!/usr/bin/env python3
"""proxy_hostile_memory.py -- what one authenticated client makes dal-proxy
hold, against a proxy with max_allowed_packet = 4 MiB (run by
proxy_hostile_memory.sh):

    proxy_hostile_memory.py PORT PROXY_PID PASSWORD STEP...

Steps:
  longdata  one statement of 3000 parameters; 60,000 bytes of
            COM_STMT_SEND_LONG_DATA to each, a COM_STMT_RESET after every
            50 (3 MB: never over max_allowed_packet at once).  Each
            parameter's buffer (64 KiB of capacity) survives the reset, so
            the client holds 3000 x 64 KiB with its long data counted 0.
  prepared  150 prepared statements of 1 MB of text each: 150 MB held for
            one client, whose packets are at most 4 MiB.
Each step: the proxy's VmRSS may grow by at most 32 MB over the client's
life (judged on a plain build only: AddressSanitizer's allocator keeps
freed memory), or the proxy refuses with an error.  FAIL: lines on stderr,
exit 1 if any."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import (MB, login, long_data, prepare, query, rss,  # noqa: E402
                                sanitized, stmt_reset)

PORT, PID, PASSWORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
BOUND = 32 * MB
fails = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    fails.append(msg)


def judge(what, grew):
    print("%s: RSS +%.1f MB" % (what, grew / MB), flush=True)
    if grew <= BOUND:
        return
    if sanitized(PID):
        print("not judged under AddressSanitizer: %s" % what, flush=True)
    else:
        fail("%s: the proxy's RSS grew by %.1f MB for one client (max_allowed_packet 4 MiB)"
             % (what, grew / MB))


def step_longdata():
    conn = login(PORT, PASSWORD)
    sock = conn._sock
    n = 3000
    stmt = prepare(sock, b"DO " + b",".join([b"?"] * n))
    if stmt[0] == "ERR":
        fail("longdata: prepare of %d parameters: %r" % (n, stmt))
        return
    stmt = stmt[0]
    base = rss(PID)
    chunk = b"L" * 60000
    for i in range(n):
        long_data(sock, stmt, i, chunk)
        if i % 50 == 49:
            r = stmt_reset(sock, stmt)
            if r[0] != "OK":
                fail("longdata: COM_STMT_RESET: %r" % (r,))
                return
    time.sleep(1)
    judge("longdata: 3000 parameters x 60,000 bytes of long data, reset every 50", rss(PID) - base)
    if query(sock, b"SELECT 1")[0] != "ROWS":
        fail("longdata: the client is not served after")
    conn.close()


def step_prepared():
    conn = login(PORT, PASSWORD)
    sock = conn._sock
    base = rss(PID)
    refused = None
    for i in range(150):
        r = prepare(sock, b"DO '%d" % i + b"p" * MB + b"'")
        if r[0] == "ERR":
            refused = r
            break
    time.sleep(1)
    grew = rss(PID) - base
    if refused is not None:
        print("prepared: refused after %d statements: %r" % (i, refused), flush=True)
    judge("prepared: %d statements of 1 MB each" % (i + 1 if refused is None else i), grew)
    conn.close()


for step in sys.argv[4:]:
    globals()["step_" + step]()
if fails:
    sys.exit(1)
print("proxy_hostile_memory.py: bounded")
