"""proxy_locks.py -- read locks and the process list, through dal-proxy and
directly on its server, compared (run by proxy_locks_test.sh).

    [GATE_PORT=PORT] proxy_locks.py PROXY_PORT SERVER_PORT [CASE...]

Each case runs the same statements on both (user root, schema test) and
prints what it saw; the two must be the same:
  ftwrl       FLUSH TABLES WITH READ LOCK, FLUSH TABLES t WITH READ LOCK and
              FLUSH TABLES t FOR EXPORT hold until UNLOCK TABLES: another
              client's write waits (1205 with lock_wait_timeout 1), the
              holder's own write is refused (1223 / 1099), its reads go on
  packet      a statement over the server's max_allowed_packet (1153, after
              which the server closes that connection) leaves later clients
              working (run first, on the proxy's fresh pool: its one idle
              connection pinned, the long statement gets a new one)
  packet_ps   the same statement prepared (COM_STMT_PREPARE): the server's
              1153 (or the connection lost), and later clients still log in
              and work: the connection the server closed is not pooled (run
              alone on a fresh proxy, as packet: named as the only CASE)
  hangup      a client that goes while its statement waits for a named lock:
              with its socket closed (end of input) or reset, the server ends
              the wait and the statement leaves PROCESSLIST (its Info, also
              without the `;` sent), and the lock, released, goes to the next client
              that asks; with a driver's close (COM_QUIT before the end of
              input) the statement waits on, as on a server, then takes the
              lock and goes, and the next client gets it after
  hangup_killed
              a client hangs up while another client's KILL QUERY of its
              statement waits for its server (the KILL held back by a relay,
              Gate): a bystander's statement is answered meanwhile, and once the
              KILL goes on, the wait has ended.  Through the proxy, run alone on
              one with two I/O threads whose datasource is the relay at
              GATE_PORT (environment): the client that hangs up and the killer
              get one thread each, the two bystanders one each, so one shares
              the I/O thread that sees the hang-up (the killer's own thread
              blocks while its KILL waits, as docs/proxy.md says); with the
              server, the killer reaches it through a relay of its own
  sessions    SHOW STATUS LIKE 'Threads_connected' counts the clients: 3 more
              while 3 more are connected, back to the first count once they
              close (as mysqltest's wait_until_count_sessions.inc waits)
  aborted     Aborted_clients after FLUSH STATUS, read with SHOW GLOBAL STATUS
              and information_schema.GLOBAL_STATUS and SESSION_STATUS: 0 after
              a client's close (COM_QUIT), 1 after a client that ran KILL
              CONNECTION_ID() (1927), 2 after a client whose socket closed
              without COM_QUIT; THREADS_CONNECTED of the views as SHOW STATUS's
  idle        idle_transaction_timeout, idle_readonly_transaction_timeout and
              idle_write_transaction_timeout close the client's connection
              as a server does (its next statement gets 2006 or 2013), and
              idle_write_transaction_timeout spares a transaction that read
  released    a client that held a named lock and a temporary table closes
              (COM_QUIT): once it has left PROCESSLIST the lock is free
              (GET_LOCK(..., 0) is 1 for the next client at once), as a
              server's thread releases its locks before it leaves the list
  state       information_schema.PROCESSLIST shows a client waiting for a
              named lock as `User lock` and one waiting for a table lock as
              `Waiting for table metadata lock`, with its statement as Info
"""
import os
import socket
import struct
import sys
import threading
import time

import pymysql

HOST = "127.0.0.1"
SERVER_PORT = 0  # main's


def connect(port, charset="utf8mb4"):
    return pymysql.connect(host=HOST, port=port, user="root", password="", database="test",
                           autocommit=True, charset=charset)


def run(conn, sql):
    """The rows, or the error number."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    except pymysql.MySQLError as e:
        return "error %d" % e.args[0]


def ftwrl(port):
    seen = []
    a, b = connect(port), connect(port)
    run(a, "DROP TABLE IF EXISTS lk1")
    run(a, "CREATE TABLE lk1 (v INT) ENGINE=InnoDB")
    run(b, "SET lock_wait_timeout = 1")
    for lock in ("FLUSH TABLES WITH READ LOCK", "FLUSH TABLES lk1 WITH READ LOCK",
                 "FLUSH TABLES lk1 FOR EXPORT"):
        seen.append((lock, run(a, lock)))
        seen.append(("other client writes", run(b, "INSERT INTO lk1 VALUES (1)")))
        seen.append(("holder writes", run(a, "INSERT INTO lk1 VALUES (2)")))
        seen.append(("holder reads", run(a, "SELECT COUNT(*) FROM lk1")))
        seen.append(("unlock", run(a, "UNLOCK TABLES")))
        seen.append(("other client writes after", run(b, "INSERT INTO lk1 VALUES (3)")))
    seen.append(("rows", run(a, "SELECT v, COUNT(*) FROM lk1 GROUP BY v ORDER BY v")))
    run(a, "DROP TABLE lk1")
    a.close()
    b.close()
    return seen


def wait_state(conn, state, info):
    """1 once PROCESSLIST shows a client in state running info (5 s at most)."""
    sql = ("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = '%s' AND "
           "INFO = \"%s\"" % (state, info))
    for _ in range(50):
        got = run(conn, sql)
        if got == [(1,)]:
            return 1
        time.sleep(0.1)
    return got


def blocked(port, holder_sql, waiter_sql, state, release_sql):
    a, b, c = connect(port), connect(port), connect(port)
    seen = [("hold", run(a, holder_sql))]
    out = []
    t = threading.Thread(target=lambda: out.append(run(b, waiter_sql)))
    t.start()
    seen.append((state, wait_state(c, state, waiter_sql)))
    seen.append(("release", run(a, release_sql)))
    t.join()
    seen.append(("waiter got", out))
    for x in (a, b, c):
        x.close()
    return seen


def state(port):
    seen = blocked(port, "SELECT GET_LOCK('pl_lock', 0)", "SELECT GET_LOCK('pl_lock', 20)",
                   "User lock", "SELECT RELEASE_LOCK('pl_lock')")
    a = connect(port)
    run(a, "DROP TABLE IF EXISTS lk2")
    run(a, "CREATE TABLE lk2 (v INT)")
    a.close()
    seen += blocked(port, "LOCK TABLES lk2 WRITE", "SELECT COUNT(*) FROM lk2",
                    "Waiting for table metadata lock", "UNLOCK TABLES")
    a = connect(port)
    run(a, "DROP TABLE lk2")
    a.close()
    return seen


def gone(conn, sql):
    """run, with the errors of a connection the server closed as 'gone'."""
    got = run(conn, sql)
    return "gone" if got in ("error 2006", "error 2013", "error 2026") else got


def idle(port):
    seen = []
    c = connect(port)
    run(c, "DROP TABLE IF EXISTS lk3")
    run(c, "CREATE TABLE lk3 (v INT) ENGINE=InnoDB")
    c.close()
    for var in ("idle_transaction_timeout", "idle_readonly_transaction_timeout"):
        c = connect(port)
        run(c, "SET autocommit = 0")
        run(c, "SET %s = 1" % var)
        run(c, "BEGIN")
        run(c, "SELECT * FROM lk3")
        time.sleep(2.2)
        seen.append((var, gone(c, "SELECT * FROM lk3")))
        c.close()
    c = connect(port)
    run(c, "SET autocommit = 0")
    run(c, "SET idle_write_transaction_timeout = 1")
    run(c, "BEGIN")
    run(c, "SELECT * FROM lk3")
    time.sleep(2.2)
    seen.append(("idle_write_transaction_timeout, a reading transaction", gone(c, "SELECT * FROM lk3")))
    run(c, "INSERT INTO lk3 VALUES (1)")
    time.sleep(2.2)
    seen.append(("idle_write_transaction_timeout, a writing one", gone(c, "SELECT * FROM lk3")))
    c.close()
    c = connect(port)
    seen.append(("rolled back", run(c, "SELECT COUNT(*) FROM lk3")))
    run(c, "DROP TABLE lk3")
    c.close()
    return seen


def packet(port):
    a = connect(port)
    seen = [("pin", run(a, "SET @keep = 1"))]
    run(a, "SET @old = @@global.max_allowed_packet, @old_net = @@global.net_buffer_length")
    run(a, "SET GLOBAL max_allowed_packet = 1024, GLOBAL net_buffer_length = 1024")
    b = connect(port)
    got = run(b, "SELECT LENGTH('%s')" % ("a" * 1500))
    seen.append(("too long", "refused" if got in ("error 1153", "error 2006", "error 2013")
                 else got))
    run(a, "SET GLOBAL max_allowed_packet = @old, GLOBAL net_buffer_length = @old_net")
    try:  # (in latin1, as mysqltest: the session's character set is set at login)
        c = connect(port, "latin1")
    except pymysql.MySQLError as e:
        seen.append(("a later client", "cannot connect: %d" % e.args[0]))
        a.close()
        return seen
    seen.append(("a later client", run(c, "SELECT 1")))
    for x in (a, c):
        x.close()
    return seen


def packet_ps(port):
    a = connect(port)
    seen = [("pin", run(a, "SET @keep = 1"))]
    run(a, "SET @old = @@global.max_allowed_packet, @old_net = @@global.net_buffer_length")
    run(a, "SET GLOBAL max_allowed_packet = 1024, GLOBAL net_buffer_length = 1024")
    b = connect(port)
    try:
        # (as mysqltest's main.packet with --ps-protocol writes it)
        b._execute_command(0x16, 'SELECT LENGTH("%s") AS len' % ("a" * 1500))  # COM_STMT_PREPARE
        b._read_packet()
        got = "prepared"
    except pymysql.MySQLError as e:
        got = "error %d" % e.args[0]
    seen.append(("too long, prepared", "refused" if got in ("error 1153", "error 2006", "error 2013")
                 else got))
    run(a, "SET GLOBAL max_allowed_packet = @old, GLOBAL net_buffer_length = @old_net")
    for i in range(3):
        try:
            c = connect(port, "latin1")
        except pymysql.MySQLError as e:
            seen.append(("a later client %d" % i, "cannot connect: %d" % e.args[0]))
            continue
        seen.append(("a later client %d" % i, run(c, "SELECT 1")))
        c.close()
    a.close()
    return seen


def count_running(conn, info, want, seconds):
    """True once PROCESSLIST shows want clients running info (within seconds)."""
    sql = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = \"%s\"" % info
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if run(conn, sql) == [(want,)]:
            return True
        time.sleep(0.1)
    return False


def close_socket(conn, reset):
    """Close conn's socket without a word: end of input, or with reset a
    reset (SO_LINGER 0)."""
    if reset:
        conn._sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn._rfile.close()
    conn._sock.close()


def hangup(port):
    seen = []
    waiting = "SELECT GET_LOCK('hu', 3600)"
    for how, end in (("end of input", ""), ("reset", ""), ("driver's close", ""),
                     ("end of input, sent with `;`", ";")):
        a, watch, b = connect(port), connect(port), connect(port)
        seen.append((how + ": hold", run(a, "SELECT GET_LOCK('hu', 0)")))
        b._execute_command(3, waiting + end)  # COM_QUERY, its answer never read
        seen.append((how + ": waits", wait_state(watch, "User lock", waiting)))
        if how == "driver's close":
            b.close()
        else:
            close_socket(b, how == "reset")
        seen.append((how + ": the wait ended", count_running(watch, waiting, 0, 3)))
        d = connect(port)
        asks = "SELECT GET_LOCK('hu', 10)"
        out = []
        t = threading.Thread(target=lambda: out.append(run(d, asks)))
        t.start()
        seen.append((how + ": the next asks", wait_state(watch, "User lock", asks)))
        seen.append((how + ": release", run(a, "SELECT RELEASE_LOCK('hu')")))
        t.join()
        seen.append((how + ": the next got", out))
        run(d, "SELECT RELEASE_LOCK('hu')")
        seen.append((how + ": nobody waits", count_running(watch, waiting, 0, 5)))
        for x in (a, watch, d):
            x.close()
    return seen


def hangup_watched(port, rounds=30):
    """Hang-ups while other clients read the process list (which reads
    every running client's State): each wait still ends."""
    waiting = "SELECT GET_LOCK('huw', 3600)"
    stop = threading.Event()

    def read_list():
        w = connect(port)
        while not stop.is_set():
            run(w, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User lock'")
        w.close()

    readers = [threading.Thread(target=read_list) for _ in range(3)]
    for t in readers:
        t.start()
    a, watch = connect(port), connect(port)
    run(a, "SELECT GET_LOCK('huw', 0)")
    ended = 0
    for _ in range(rounds):
        b = connect(port)
        b._execute_command(3, waiting)  # COM_QUERY, its answer never read
        wait_state(watch, "User lock", waiting)
        close_socket(b, False)
        # a loaded server can take seconds to see a client gone from a
        # wait: a bound far above that, reached only by a wait that never ends
        ended += count_running(watch, waiting, 0, 60)
    stop.set()
    for t in readers:
        t.join()
    run(a, "SELECT RELEASE_LOCK('huw')")
    a.close()
    watch.close()
    return [("waits ended, of %d hang-ups" % rounds, ended)]


class Gate:
    """A TCP relay to the server that holds back the first COM_QUERY `KILL
    QUERY` sent through it until release(): a KILL whose server is slow to
    answer.  Each end's end of input is passed on (a half-close stays one)."""

    def __init__(self, listen_port):
        self.listener = socket.create_server((HOST, listen_port))
        self.port = self.listener.getsockname()[1]
        self.held = threading.Event()   # a KILL QUERY waits
        self.go = threading.Event()     # release() was called
        self.held_from = None           # the socket that sent it
        self.socks = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            s = socket.create_connection((HOST, SERVER_PORT))
            self.socks += [c, s]
            threading.Thread(target=self.relay, args=(c, s, True), daemon=True).start()
            threading.Thread(target=self.relay, args=(s, c, False), daemon=True).start()

    def relay(self, src, dst, upward):
        """src's bytes to dst, then its end of input; upward (to the server)
        packet by packet, a KILL QUERY held until release()."""
        buf = b""
        try:
            while True:
                b = src.recv(65536)
                if not b:
                    dst.shutdown(socket.SHUT_WR)
                    return
                buf += b
                while buf:
                    n = 4 + int.from_bytes(buf[:3], "little") if upward else len(buf)
                    if len(buf) < n:
                        break
                    packet, buf = buf[:n], buf[n:]
                    if (upward and packet[4:15].upper() == b"\x03KILL QUERY" and
                            not self.held.is_set()):
                        self.held_from = src
                        self.held.set()
                        self.go.wait()
                    dst.sendall(packet)
        except OSError:
            pass

    def holding(self):
        """True while the KILL is held and its sender still waits for it."""
        if not self.held.is_set() or self.go.is_set():
            return False
        try:
            return self.held_from.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False

    def release(self):
        self.go.set()

    def close(self):
        self.release()
        for x in [self.listener] + self.socks:
            x.close()


def hangup_killed(port):
    waiting = "SELECT GET_LOCK('huk', 3600)"
    server = port == SERVER_PORT
    gate = Gate(0 if server else int(os.environ["GATE_PORT"]))
    # (in this order through the proxy: t and k on one I/O thread each, the
    # bystanders one on each)
    t = connect(port)
    k = connect(gate.port if server else port)
    bystanders = [connect(port), connect(port)]
    a, watch = connect(port), connect(port)
    seen = [("hold", run(a, "SELECT GET_LOCK('huk', 0)"))]
    tid = run(t, "SELECT CONNECTION_ID()")[0][0]
    t._execute_command(3, waiting)  # COM_QUERY, its answer never read
    seen.append(("waits", wait_state(watch, "User lock", waiting)))
    killer = threading.Thread(target=run, args=(k, "KILL QUERY %d" % tid))
    killer.start()
    seen.append(("the KILL waits", gate.held.wait(30)))
    close_socket(t, False)
    answered, got = threading.Event(), []

    def ask(x):
        rows = run(x, "SELECT 1")
        got.append((rows, gate.holding()))
        answered.set()

    asking = [threading.Thread(target=ask, args=(x,)) for x in bystanders]
    for x in asking:
        x.start()
    answered.wait(120)
    seen.append(("a bystander answered while the KILL waited",
                 any(rows == [(1,)] and held for rows, held in got)))
    gate.release()
    for x in asking + [killer]:
        x.join()
    seen.append(("the bystanders' answers", sorted(rows for rows, _ in got)))
    seen.append(("the wait ended", count_running(watch, waiting, 0, 10)))
    run(a, "SELECT RELEASE_LOCK('huk')")
    for x in [k, a, watch] + bystanders:
        x.close()
    gate.close()
    return seen


def threads_connected(conn):
    return int(run(conn, "SHOW STATUS LIKE 'Threads_connected'")[0][1])


def sessions(port):
    c = connect(port)
    n0 = threads_connected(c)
    more = [connect(port) for _ in range(3)]
    seen = [("3 more connected", threads_connected(c) - n0)]
    for x in more:
        x.close()
    for _ in range(50):
        back = threads_connected(c) <= n0
        if back:
            break
        time.sleep(0.1)
    seen.append(("back to the first count", back))
    seen.append(("SHOW GLOBAL STATUS too", int(run(c, "SHOW GLOBAL STATUS LIKE 'threads_connected'")[0][1]) - n0))
    c.close()
    return seen


def aborted_clients(conn, want):
    """Aborted_clients once it reaches want (a server counts a client when
    its thread ends, after the client has gone), or after 5 s."""
    for _ in range(50):
        n = int(run(conn, "SHOW GLOBAL STATUS LIKE 'Aborted_clients'")[0][1])
        if n >= want:
            break
        time.sleep(0.1)
    return n


def aborted(port):
    c = connect(port)
    seen = [("FLUSH STATUS", run(c, "FLUSH STATUS"))]
    x = connect(port)
    x.close()
    time.sleep(0.5)
    seen.append(("after a close", aborted_clients(c, 0)))
    k = connect(port)
    seen.append(("KILL CONNECTION_ID()", run(k, "KILL CONNECTION_ID()")))
    try:
        k.close()
    except pymysql.MySQLError:
        pass
    seen.append(("after a killed client", aborted_clients(c, 1)))
    s = connect(port)
    close_socket(s, False)
    seen.append(("after a socket closed", aborted_clients(c, 2)))
    for view in ("GLOBAL_STATUS", "SESSION_STATUS"):
        sql = ("SELECT VARIABLE_VALUE FROM INFORMATION_SCHEMA.%s "
               "WHERE VARIABLE_NAME='aborted_clients'" % view)
        with c.cursor() as cur:
            cur.execute(sql)
            seen.append((view, ([d[0] for d in cur.description], list(cur.fetchall()))))
        seen.append((view + "'s THREADS_CONNECTED as SHOW STATUS's",
                     run(c, "SELECT VARIABLE_VALUE FROM information_schema.%s "
                            "WHERE VARIABLE_NAME = 'THREADS_CONNECTED'" % view)[0][0] ==
                     run(c, "SHOW STATUS LIKE 'Threads_connected'")[0][1]))
    seen.append(("SHOW STATUS WHERE", run(c, "SHOW STATUS WHERE Variable_name = 'Aborted_clients'")))
    seen += aborted_connects(port, c)
    c.close()
    return seen


def aborted_connects(port, c):
    """Aborted_connects counts every connection that ends without logging
    in: a wrong password, an unknown database, a close after the greeting
    or before it, a bad handshake packet; FLUSH STATUS resets it."""
    def count():
        return int(run(c, "SHOW GLOBAL STATUS LIKE 'Aborted_connects'")[0][1])

    def wait_for(want):
        for _ in range(50):  # a server counts once the connection's thread ends
            if count() >= want:
                break
            time.sleep(0.1)
        return count()

    run(c, "FLUSH STATUS")
    seen = [("Aborted_connects after FLUSH STATUS", count())]
    for password, db in (("wrong", "test"), ("", "nosuchdb")):
        try:
            pymysql.connect(host=HOST, port=port, user="root", password=password, database=db)
            seen.append(("login " + db, "accepted"))
        except pymysql.MySQLError as e:
            seen.append(("login " + db, e.args[0]))
    seen.append(("after a wrong password and an unknown database", wait_for(2)))
    for greeting, send in ((False, b""), (True, b""), (True, b"\x05\x00\x00\x01hello")):
        s = socket.create_connection((HOST, port))
        if greeting:
            s.recv(4096)
        if send:
            s.sendall(send)
            s.recv(4096)  # the error, before the server closes
        s.close()
    seen.append(("after three unfinished handshakes", wait_for(5)))
    for view in ("GLOBAL_STATUS", "SESSION_STATUS"):
        seen.append((view + " ABORTED_CONNECTS",
                     run(c, "SELECT VARIABLE_VALUE FROM information_schema.%s "
                            "WHERE VARIABLE_NAME = 'ABORTED_CONNECTS'" % view)))
    run(c, "FLUSH STATUS")
    seen.append(("after FLUSH STATUS again", count()))
    return seen


def released(port, rounds=40):
    b = connect(port)
    free = 0
    for _ in range(rounds):
        a = connect(port)
        run(a, "CREATE TEMPORARY TABLE tmp_rel (i INT)")
        run(a, "SELECT GET_LOCK('released', 0)")
        aid = run(a, "SELECT CONNECTION_ID()")[0][0]
        a.close()
        while run(b, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE id = %d" % aid)[0][0]:
            pass
        got = run(b, "SELECT GET_LOCK('released', 0)")[0][0]
        free += got == 1
        run(b, "SELECT RELEASE_LOCK('released')")
    b.close()
    return [("the lock free once its holder left the list, of %d" % rounds, free)]


def names(port):
    """The column names of process list reads as the statement writes them."""
    a = connect(port)
    seen = []
    for sql in ("SELECT user, Command, info FROM information_schema.processlist "
                "WHERE id = CONNECTION_ID()",
                "SELECT p.db AS d, `STATE` FROM information_schema.PROCESSLIST p "
                "WHERE p.id = CONNECTION_ID()"):
        with a.cursor() as cur:
            cur.execute(sql)
            seen.append(("columns of " + sql[:40], [d[0] for d in cur.description]))
    a.close()
    return seen


def main():
    global SERVER_PORT
    proxy, server = int(sys.argv[1]), int(sys.argv[2])
    SERVER_PORT = server
    cases = (packet, ftwrl, sessions, aborted, idle, state, names, hangup, hangup_watched,
             released)
    if len(sys.argv) > 3:
        cases = [globals()[name] for name in sys.argv[3:]]
    bad = 0
    for case in cases:
        want, got = case(server), case(proxy)
        for w, g in zip(want, got):
            mark = "ok  " if w == g else "DIFF"
            bad += w != g
            print("%s %s: %s: server %r, proxy %r" % (mark, case.__name__, w[0], w[1], g[1]))
        if len(want) != len(got):
            bad += 1
            print("DIFF %s: %d steps on the server, %d through the proxy"
                  % (case.__name__, len(want), len(got)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
