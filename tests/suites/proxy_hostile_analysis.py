#!/usr/bin/env python3
"""proxy_hostile_analysis.py -- the proxy's CPU for analysing one statement
must grow with the statement, not with a power of it (run by
proxy_hostile_analysis.sh):

    proxy_hostile_analysis.py PORT PROXY_PID PASSWORD

The statement: N arms `SELECT * FROM orders WHERE user_id = k` joined by
UNION ALL (orders sharded by user_id; 2,500 arms are 122 KB).  dal's routing
(route_where_posset: every condition x every table reference x
route_key_tref's walk over every table reference) costs N^3: about 0.5 s
of CPU for 800 arms, 4 s for 1,600, 40 s for 2,500 -- hours for a
statement of a few hundred KB, with no deadline.  With inline_io the
statement runs on its client's I/O thread, whose other clients (and new
connections' handshakes) wait meanwhile: printed, not judged.  Judged in
the proxy's CPU time (utime + stime of /proc/PID/stat): doubling N must
not multiply it by more than 4 (when it is over 2 s).  FAIL: lines on
stderr, exit 1 if any."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import cpu_seconds, login, query  # noqa: E402

PORT, PID, PASSWORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def union(n):
    return b" UNION ALL ".join(b"SELECT * FROM orders WHERE user_id = %d" % (i % 2)
                               for i in range(n))


def cost(n, bystander=None):
    """The proxy's CPU seconds for the n-arm statement; with bystander (a
    connection on the same I/O thread), how long its SELECT 1 sent meanwhile
    waited."""
    conn = login(PORT, PASSWORD)
    waited = []

    def side():
        time.sleep(0.3)
        t = time.time()
        query(bystander._sock, b"SELECT 1")
        waited.append(time.time() - t)

    th = threading.Thread(target=side) if bystander is not None else None
    before = cpu_seconds(PID)
    if th is not None:
        th.start()
    r = query(conn._sock, union(n))
    spent = cpu_seconds(PID) - before
    if th is not None:
        th.join()
    conn.close()
    print("%d arms (%d bytes): %s, %.2f s of the proxy's CPU%s" %
          (n, len(union(n)), r[0], spent,
           ", a bystander's SELECT 1 waited %.2f s" % waited[0] if waited else ""), flush=True)
    return spent


def main():
    bystander = login(PORT, PASSWORD)
    small = cost(800)
    big = cost(1600, bystander)
    bystander.close()
    if big > 2.0 and big > 4 * max(small, 0.05):
        print("FAIL: routing a statement costs a power of its size: 800 UNION arms %.2f s of "
              "CPU, 1,600 arms %.2f s (x%.1f); a client's statement of a few hundred KB holds "
              "an I/O thread for hours" % (small, big, big / max(small, 0.01)),
              file=sys.stderr, flush=True)
        sys.exit(1)


main()
