#!/usr/bin/env python3
"""proxy_hostile_charset.py -- a client's character set whose two-byte
characters end in 0x5C (a backslash) or whose quotes dal reads otherwise:
gbk, sjis, big5, cp932, which SET NAMES (or the handshake's collation)
gives a session.  The server reads <lead byte> 0x5C as one character; a
byte-wise reader takes the 0x5C for an escape.  Run by
proxy_hostile_charset.sh:

    proxy_hostile_charset.py PORT PASSWORD

Checked for each character set, on the sharded table orders (user_id mod,
rows id = user_id = 1..8):
  - a prepared statement's string parameter `<lead>' OR 1=1 -- ` stays one
    value (dal writes parameters into the SQL of a sharded table: 0 rows
    match, not all 8);
  - an INSERT whose second row the proxy reads inside a string puts no
    row on a shard its key does not route to;
  - an UPDATE whose `user_id = 6` the proxy reads inside a string changes
    no shard key (and no row outside its WHERE).
dal-proxy refuses these character sets as a client's: every form in FORMS
(SET NAMES, SET CHARACTER SET, character_set_client in each SET form and
in executable comments, a collation's number, an evaluated value, and
EXECUTE IMMEDIATE / a prepared SET, which the server's session tracking
reports) must answer error 1115 and leave the session's character set
as it was; the handshake and COM_CHANGE_USER in them must be refused
with 1115.  FAIL: lines on stderr, exit 1 if any."""
import os
import struct
import sys

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_hostile_wire import execute_strings, login, packet, prepare, query, read_packet  # noqa: E402

PORT, PASSWORD = int(sys.argv[1]), sys.argv[2]
# a character each charset reads as one whose second byte is 0x5C
LEADS = {"gbk": b"\xbf", "sjis": b"\x95", "big5": b"\xa5", "cp932": b"\x95"}
fails = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    fails.append(msg)


def count(sock, where):
    r = query(sock, b"SELECT COUNT(*) FROM orders WHERE " + where)
    if r[0] != "ROWS":
        raise RuntimeError("SELECT COUNT(*) ... WHERE %r: %r" % (where, r))
    return int(r[1][0][1:])


def fresh(admin):
    """orders back to id = user_id = 1..8, in utf8mb4."""
    query(admin, b"DELETE FROM orders")
    for i in range(1, 9):
        query(admin, b"INSERT INTO orders VALUES (%d, %d, 'n%d')" % (i, i, i))


def check_param(cs, sock, lead):
    stmt = prepare(sock, b"SELECT COUNT(*) FROM orders WHERE note = ?")
    if stmt[0] == "ERR":
        fail("%s: prepare: %r" % (cs, stmt))
        return
    got = execute_strings(sock, stmt[0], [lead + b"' OR 1=1 -- "])
    # a binary row: 0x00, the NULL bitmap's byte, the BIGINT
    n = int.from_bytes(got[1][0][2:10], "little") if got[0] == "ROWS" and got[1] else 0
    if n != 0:
        fail("%s: the parameter %r escaped its quotes: COUNT(*) = %d of 8 rows (0 on a server: "
             "the value matches no note)" % (cs, lead + b"' OR 1=1 -- ", n))
    elif got[0] != "ROWS":
        print("%s: parameter: %r" % (cs, got), flush=True)


def check_insert(cs, sock, admin, lead):
    sql = (b"INSERT INTO orders (id, user_id, note) VALUES (100, 1, '" + lead +
           b"\\'), (101, 2, 'x') -- ')")
    r = query(sock, sql)
    print("%s: hidden INSERT row: %r" % (cs, r), flush=True)
    total = count(admin, b"id IN (100, 101)")  # every shard
    routed = count(admin, b"user_id = 2 AND id = 101")  # where the key routes
    if total == 2 and routed != 1:
        fail("%s: INSERT %r stored row 101 (user_id 2) on user_id 1's shard: the proxy read one "
             "row, the server two (SELECT ... WHERE user_id = 2 misses it)" % (cs, sql))


def check_update(cs, sock, admin, lead):
    sql = b"UPDATE orders SET note = '" + lead + b"\\', user_id = 6 -- ' WHERE user_id = 5"
    r = query(sock, sql)
    print("%s: hidden UPDATE of the shard key: %r" % (cs, r), flush=True)
    moved = count(admin, b"id <= 8 AND user_id <> id")
    if moved:
        fail("%s: UPDATE %r changed the shard key of %d row(s) (dal refuses an UPDATE of "
             "user_id; the server read `user_id = 6` and a commented-out WHERE)" % (cs, sql, moved))


# every way a client can name its character set; {cs} the charset, {id}
# its default collation's number
FORMS = [
    "SET NAMES {cs}", "SET NAMES '{cs}' COLLATE '{cs}_bin'", "SET CHARACTER SET {cs}",
    "SET CHARSET {cs}", "SET character_set_client = {cs}",
    "SET SESSION character_set_client = '{cs}'", "SET @@session.character_set_client = {cs}",
    "SET @@character_set_client = `{cs}`", "SET LOCAL character_set_client = \"{cs}\"",
    "SET sql_mode = '', character_set_client = {cs}", "SET @a = 1, character_set_client = {cs}",
    "SET character_set_client = {id}", "SET character_set_client = @cs",
    "/*!40101 SET NAMES {cs} */", "/*!40101 SET character_set_client = {cs} */",
    "SET STATEMENT character_set_client = {cs} FOR SELECT 1",
    "SET STATEMENT sql_mode = '', character_set_client = {cs} FOR SELECT 1",
    # what dal does not read itself: the server's session tracking tells
    "EXECUTE IMMEDIATE 'SET NAMES {cs}'", "PREPARE p FROM 'SET character_set_client = {cs}'|EXECUTE p",
]
IDS = {"gbk": 28, "sjis": 13, "big5": 1, "cp932": 95}


def check_forms(cs):
    """Each form refused with 1115, the session's character set unchanged."""
    for form in FORMS:
        conn = login(PORT, PASSWORD)
        sock = conn._sock
        query(sock, b"SET @cs = '" + cs.encode() + b"'")
        *before, sql = form.format(cs=cs, id=IDS[cs]).encode().split(b"|")
        for b in before:
            query(sock, b)
        r = query(sock, sql)
        # the server itself refuses character_set_client in SET STATEMENT
        if r[0] != "ERR" or (r[1] != 1115 and not (sql.startswith(b"SET STATEMENT") and
                                                  r[1] == 1971)):
            fail("%s: %r answered %r, not error 1115" % (cs, sql, r[:3]))
        now = query(sock, b"SELECT @@character_set_client, @@sql_mode")
        if now[0] != "ROWS" or cs.encode() in now[1][0]:
            fail("%s: after %r the session reads %r" % (cs, sql, now))
        conn.close()


def check_dump_style():
    """What a dump writes (a saved character set restored from a user
    variable) still works: only the refused character sets are."""
    conn = login(PORT, PASSWORD)
    sock = conn._sock
    for sql in (b"/*!40101 SET @saved_cs_client = @@character_set_client */",
                b"/*!40101 SET character_set_client = latin1 */",
                b"/*!40101 SET character_set_client = @saved_cs_client */"):
        r = query(sock, sql)
        if r[0] != "OK":
            fail("%r answered %r" % (sql, r))
    r = query(sock, b"SELECT @@character_set_client")
    if r[0] != "ROWS" or r[1][0][1:] != b"utf8mb4":
        fail("character_set_client restored from @saved_cs_client reads %r" % (r,))
    conn.close()


def check_change_user(cs):
    """COM_CHANGE_USER in cs: refused with 1115 (the connection closes)."""
    conn = login(PORT, PASSWORD)
    sock = conn._sock
    sock.sendall(packet(0, b"\x11app\x00\x00shop\x00" + bytes([IDS[cs], 0]) +
                        b"mysql_native_password\x00"))
    r = read_packet(sock)
    if r[:1] != b"\xff" or struct.unpack("<H", r[1:3])[0] != 1115:
        fail("%s: COM_CHANGE_USER in it answered %r, not error 1115" % (cs, r[:60]))
    conn.close()


def main():
    admin_conn = login(PORT, PASSWORD)
    admin = admin_conn._sock
    check_dump_style()
    for cs in LEADS:
        check_forms(cs)
        check_change_user(cs)
    for cs, lead in LEADS.items():
        fresh(admin)
        conn = login(PORT, PASSWORD)
        sock = conn._sock
        r = query(sock, b"SET NAMES " + cs.encode())
        if r[0] == "ERR":
            print("%s: SET NAMES refused (%r): defended" % (cs, r), flush=True)
            conn.close()
            continue
        check_param(cs, sock, lead)
        check_insert(cs, sock, admin, lead)
        fresh(admin)
        check_update(cs, sock, admin, lead)
        conn.close()
    # the same character set chosen by the handshake's collation (gbk_chinese_ci)
    fresh(admin)
    for cs in LEADS:
        try:
            conn = login(PORT, PASSWORD, charset=cs)
        except pymysql.err.MySQLError as e:
            if e.args[0] != 1115:
                fail("%s at the handshake: refused with %r, not error 1115" % (cs, e.args))
        else:
            fail("%s at the handshake: taken" % cs)
            check_param("%s (handshake)" % cs, conn._sock, LEADS[cs])
            conn.close()
    admin_conn.close()
    if fails:
        sys.exit(1)
    print("proxy_hostile_charset.py: no escape")


main()
