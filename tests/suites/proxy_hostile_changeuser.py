#!/usr/bin/env python3
"""proxy_hostile_changeuser.py -- a client parked in COM_CHANGE_USER's
authentication (run by proxy_hostile_changeuser.sh, connect_timeout 2 s):

    proxy_hostile_changeuser.py PORT PASSWORD

An authenticated client sets wait_timeout = 2 and sends COM_CHANGE_USER
naming another plugin; the proxy answers with an AuthSwitchRequest and
waits for the response.  The client never answers.  From then on the
connection is in no deadline's reach (not connect_timeout's: that ended
with the first login; not wait_timeout's: only a client in the command
phase is idle), and in nobody else's: SHOW PROCESSLIST does not list it
and KILL of its id is 1094.  Such connections stay until max_connections
is full.  Judged: after 8 s (four times either timeout) the proxy has
closed it, as it closes an idle client with the same wait_timeout (the
control).  FAIL: lines on stderr, exit 1 if any."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import login, packet, query, read_packet  # noqa: E402

PORT, PASSWORD = int(sys.argv[1]), sys.argv[2]
fails = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    fails.append(msg)


def still_open(sock):
    """Whether the proxy has not closed sock (what it sent is dropped)."""
    sock.setblocking(False)
    try:
        while True:
            if sock.recv(65536) == b"":
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def main():
    idle = login(PORT, PASSWORD)
    held = login(PORT, PASSWORD)
    for conn in (idle, held):
        query(conn._sock, b"SET SESSION wait_timeout = 2")
    ids = query(held._sock, b"SELECT CONNECTION_ID()")
    held_id = int(ids[1][0][1:])
    # user app, an empty response, database shop, utf8mb4_general_ci, plugin "dialog"
    held._sock.sendall(packet(0, b"\x11app\x00\x00shop\x00\x2d\x00dialog\x00"))
    switch = read_packet(held._sock)
    print("COM_CHANGE_USER answered with %r" % switch[:24], flush=True)
    # meanwhile listed as a server lists it: Command "Change user"
    early = login(PORT, PASSWORD)
    rows = query(early._sock, b"SHOW PROCESSLIST")
    if rows[0] != "ROWS" or not any(r.startswith(b"%c%d" % (len(str(held_id)), held_id)) and
                                    b"\x0bChange user" in r for r in rows[1]):
        fail("while it authenticates again, SHOW PROCESSLIST does not list id %d as "
             "'Change user': %r" % (held_id, rows))
    early.close()
    time.sleep(8)
    if still_open(idle._sock):
        fail("the control: a client idle past its wait_timeout of 2 s is still open after 8 s")
    watcher = login(PORT, PASSWORD)
    listed = query(watcher._sock, b"SHOW PROCESSLIST")
    kill = query(watcher._sock, b"KILL %d" % held_id)
    print("SHOW PROCESSLIST ids: %r; KILL %d: %r" %
          ([r[1:1 + r[0]] for r in listed[1]] if listed[0] == "ROWS" else listed, held_id,
           kill), flush=True)
    if still_open(held._sock):
        fail("a client that sent COM_CHANGE_USER and never answered the AuthSwitchRequest is "
             "still connected after 8 s (connect_timeout 2 s, its wait_timeout 2 s), unlisted "
             "by SHOW PROCESSLIST and unknown to KILL (%r)" % (kill,))
    watcher.close()
    if fails:
        sys.exit(1)


try:
    main()
except (socket.error, ConnectionError) as e:
    print("FAIL: %s" % e, file=sys.stderr)
    sys.exit(1)
