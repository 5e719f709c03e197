#!/usr/bin/env python3
"""proxy_hostile_fanout.py -- the memory one statement makes dal-proxy hold,
against a table sharded into 64 physical tables (run by
proxy_hostile_fanout.sh):

    proxy_hostile_fanout.py PORT PROXY_PID PASSWORD

`SELECT COUNT(*) FROM wide WHERE note = '<8 MB>'` names no shard key, so
it runs on all 64 tables; dal writes each table's SQL, a whole copy of the
statement, and holds them together: about 37 times the statement (a 16 MB
statement took 590 MB), so one client's 64 MB statement costs over 2 GB,
and a few clients the host.  The packet reader, the command's copy and the
text given to libdal are a few copies more.  Judged: the proxy's peak
VmRSS (sampled every 5 ms while the statement runs) grows by at most 10
times the statement (on a plain build only: AddressSanitizer's allocator
keeps freed memory).  FAIL: lines on stderr, exit 1 if any."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import MB, login, query, rss, sanitized  # noqa: E402

PORT, PID, PASSWORD = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
SIZE = 8 * MB


def main():
    conn = login(PORT, PASSWORD)
    sql = b"SELECT COUNT(*) FROM wide WHERE note = '" + b"w" * SIZE + b"'"
    time.sleep(1)
    base = rss(PID)
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss(PID))
            time.sleep(0.005)

    th = threading.Thread(target=sample)
    th.start()
    r = query(conn._sock, sql)
    done.set()
    th.join()
    grew = peak[0] - base
    print("an %d MB statement on 64 tables: %s, RSS peak +%.1f MB" % (SIZE // MB, r[0], grew / MB),
          flush=True)
    if r[0] != "ROWS":
        print("FAIL: the statement failed: %r" % (r,), file=sys.stderr, flush=True)
        sys.exit(1)
    if grew > 10 * SIZE:
        if sanitized(PID):
            print("not judged under AddressSanitizer", flush=True)
            return
        print("FAIL: one %d MB statement over 64 physical tables took the proxy's RSS up by "
              "%.0f MB (x%.0f): each table's SQL is a copy of the statement, all held at once"
              % (SIZE // MB, grew / MB, grew / SIZE), file=sys.stderr, flush=True)
        sys.exit(1)


main()
