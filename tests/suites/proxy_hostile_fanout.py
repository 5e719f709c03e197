#!/usr/bin/env python3
"""proxy_hostile_fanout.py -- the memory one statement makes dal-proxy hold,
against a table sharded into 64 physical tables, and what it answers (run
by proxy_hostile_fanout.sh):

    proxy_hostile_fanout.py PORT PROXY_PID PASSWORD SERVER_PORT

`SELECT ... FROM wide WHERE note <> '<8 MB>'` names no shard key, so it
runs on all 64 tables, each table's SQL a whole copy of the statement.
Judged: the proxy's peak VmRSS (sampled every 5 ms while the statement
runs) grows by at most 5 times the statement (on a plain build only:
AddressSanitizer's allocator keeps freed memory) -- one copy per table held at
once would be 36 times; and the rows are the server's for the same
statement on plain.wide, an unsharded copy on SERVER_PORT (user root), and
so are its error and a big UPDATE's OK (the rows it changed).
FAIL: lines on stderr, exit 1 if any."""
import os
import sys
import threading
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import MB, login, query, rss, sanitized  # noqa: E402

PORT, PID, PASSWORD, SERVER = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
SIZE = 8 * MB
BIG = b"'" + b"w" * SIZE + b"'"
ROWS = b"SELECT id, user_id, note FROM wide WHERE note <> " + BIG + b" ORDER BY id"
# each answered as the server answers it: rows, an error, a write's OK
STATEMENTS = [b"SELECT COUNT(*), SUM(user_id) FROM wide WHERE note <> " + BIG, ROWS,
              b"SELECT COUNT(*) FROM wide WHERE nosuch <> " + BIG,
              b"UPDATE wide SET note = 'u' WHERE id % 3 = 0 AND note <> " + BIG, ROWS]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg, file=sys.stderr, flush=True)


def peak_growth(sock, sql):
    """sql's reply on sock, and how far the proxy's RSS rose while it ran."""
    base = rss(PID)
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss(PID))
            time.sleep(0.005)

    th = threading.Thread(target=sample)
    th.start()
    r = query(sock, sql)
    done.set()
    th.join()
    return r, peak[0] - base


def main():
    conn = login(PORT, PASSWORD)
    server = pymysql.connect(host="127.0.0.1", port=SERVER, user="root", database="plain",
                             autocommit=True, max_allowed_packet=256 * MB)
    time.sleep(1)
    r, grew = peak_growth(conn._sock, STATEMENTS[0])
    print("an %d MB statement on 64 tables: %s, RSS peak +%.1f MB" % (SIZE // MB, r[0], grew / MB),
          flush=True)
    if grew > 5 * SIZE and not sanitized(PID):
        fail("one %d MB statement over 64 physical tables took the proxy's RSS up by "
             "%.0f MB (x%.0f): each table's SQL is a copy of the statement, all held at once"
             % (SIZE // MB, grew / MB, grew / SIZE))
    for i, sql in enumerate(STATEMENTS):
        got = r if i == 0 else query(conn._sock, sql)
        want = query(server._sock, sql)
        what = sql[:50].decode() + "..."
        if want[0] == "ROWS" and len(want[1]) == 0 or want[0] == "OK" and want[1][1] == 0:
            fail("the server's answer to %s is empty: %r" % (what, want))
        # an OK's second byte: the rows it changed (fewer than 251)
        elif want[0] == "OK" and (got[0] != "OK" or got[1][1] != want[1][1]):
            fail("%s: the proxy's reply %r differs from the server's %r" % (what, got, want))
        elif want[0] != "OK" and got[:2] != want[:2]:
            fail("%s: the proxy's reply (%s, %s) differs from the server's (%s, %s)"
                 % (what, got[0], str(got[1])[:80], want[0], str(want[1])[:80]))
    sys.exit(1 if failures else 0)


main()
