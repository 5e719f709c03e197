"""proxy_literals.py -- run by proxy_literals_test.sh: a generated
differential test of how dal-proxy reads string literals and comments,
against MariaDB's own reading of the same text.

Usage: proxy_literals.py PROXY_PORT SERVER0_PORT SERVER1_PORT PASSWORD

Table t (id, a, b) is sharded by id (mod, 4 physical tables over shard_0
on the first server and shard_1 on the second) behind the proxy; the
schema plain on the first server holds an unsharded copy.  Both start with
the same rows, whose strings are awkward (quotes, backslashes, comment
openers, NUL, multibyte UTF-8).

Statements are made from templates: a template fixes a statement's
structure (kind, conditions, where comments go), each statement made from
it draws fresh literals, so many statements share dal's shape (literals
taken out, core/sql/sql_shape.c) while their literals are hostile: a
backslash before a quote, doubled quotes, a trailing backslash, ' OR id =
7 -- ' inside a string, comment openers in strings, double-quoted strings,
introducers (_utf8mb4, N, X), adjacent strings, comments and executable
comments between tokens.  Each statement runs in both sql_modes (with and
without NO_BACKSLASH_ESCAPES, entered by SET sql_mode in both sessions),
through the proxy and on the copy, in utf8mb4 and again in one of gbk,
sjis, big5 and cp932 (entered by the handshake, SET NAMES or SET
character_set_client), whose characters may end in the byte of a
backslash or a backtick: the generator writes MARK for such a
character's first byte, so the same statement is a backslash escaping a
quote in utf8mb4 and a character before a closing quote there.  Judged:

- reads: the rows, as multisets;
- writes: the affected-row count, then the table's contents -- the
  proxy's read from the physical tables themselves, each row on the table
  its id belongs to -- against the copy's;
- errors: both must fail, and a text the server refuses whole (1064,
  1136) must have written nothing; where the server runs a statement the proxy
  may refuse it only with one of dal's refusals (1235, 1264, 1210, and
  1064 for a text dal cannot analyse), counted and shown at the end --
  never a different answer;
- a subset as server-side prepared statements (COM_STMT_PREPARE and
  EXECUTE), a hostile string bound as a parameter beside literals in the
  text (in those character sets too: a bound value is data, however its
  bytes would read as SQL).

The seed is DAL_LITERALS_SEED (printed), the number of statements
DAL_LITERALS_COUNT.  Prints each mismatch (statement, mode, both answers)
and a summary; exits 1 on any mismatch.
"""
import os
import random
import struct
import sys

import pymysql
from pymysql.constants import CLIENT

px_port, s0_port, s1_port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
password = sys.argv[4]
SEED = int(os.environ.get("DAL_LITERALS_SEED", "") or 20261206)
COUNT = int(os.environ.get("DAL_LITERALS_COUNT", "") or 3000)
TABLES = 4          # physical tables t_0 .. t_3: t_0, t_1 on shard_0, t_2, t_3 on shard_1
N = 48              # baseline rows, ids 1 .. N
# not strict: an UPDATE's "Truncated incorrect DECIMAL value" is an error
# there only for the rows a server's plan happens to compare, which differ
# between one table and the shards' tables
BASE = "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
MODES = {"escapes": BASE, "nobs": BASE + ",NO_BACKSLASH_ESCAPES"}
REFUSALS = {1235, 1264, 1210, 1064}   # dal's own (docs/proxy.md, Error numbers)
# a server's errors for a text it refuses before running any of it (a
# syntax error, a row of the wrong length): no row may be written; other
# errors of a write over several nodes may leave the nodes before written
# (counted as partial writes, shown, not failures).  A multi-row INSERT
# that a server refuses for a syntax error in one row is such a write
# too: dal reads no row's expressions whole, and each node's part is its
# own statement (docs/routing.md, "Multi-row INSERT over several nodes")
REFUSED_WHOLE = {1064, 1136}


def refused_whole(sql, code):
    """Whether the server's error code for sql means no row may be written."""
    head = sql.lstrip()[:6]
    if isinstance(head, bytes):
        head = head.decode("latin1")
    return code in REFUSED_WHOLE and not (code == 1064 and head.upper() == "INSERT")

# the strings stored, as Python strings
VALUES = ["plain", "it's", 'say "hi"', "back\\slash", "a\\", "\\'", "''", "\\\\'", "-- x",
          "#x", "/*", "*/", "/* c */", ";", "?", "a\x00b", "\u00e9t\u00e9", "\u65e5\u672c",
          "\U0001F600", "' OR id = 7 -- '", "x\\' OR id = 3 -- ", "%_", "", "a;b--c#d",
          "\\", "\"", "\\\"", "*/ OR id = 5 /*", "select * from t where id = 1", " t ",
          "`t`", "t.id", "7--1"]

# character sets with characters whose second byte is a backslash or a
# backtick (the server's name: Python's codec); MARK stands for such a
# character's first byte (encode())
CHARSETS = {"gbk": "gbk", "sjis": "shift_jis", "big5": "big5", "cp932": "cp932"}
# how a session comes to its character set: the handshake, or a SET after
# it (in a latin1 session, whose names PyMySQL can always decode)
ENTER_CHARSET = {"gbk": None, "big5": None, "sjis": "SET NAMES sjis",
                 "cp932": "SET character_set_client = cp932"}
MARK = "\ue000"

# pieces of a hostile literal's text (between its quotes, as written)
PIECES = ["a", "x", "7", "\\'", "''", "\\\\", "\\\\'", "\\", "' OR id = {k} -- ",
          "' OR id = {k} #", "' OR id = {k} /*", "*/", "/*", "--", "-- ", "#", ";", "?",
          "\"", "\\\"", "\"\"", "\u00e9", "\U0001F600", "\\0", "\\n", "%", "_",
          " OR id = {k}", "' '", "/*!", "/*!100000 OR id = {k} */", "\\'' OR id = {k} -- ",
          "\x00", "\\\\\\'", "`", "{", " FROM t ", "t.id", "' OR t.id = {k} -- ",
          MARK + "\\", MARK + "\\' OR id = {k} -- ", MARK + "\\' OR id = {k} #", MARK + "`"]
# values bound to a prepared statement's ? beside VALUES: a quote after
# MARK is a quote in CHARSETS, unless something puts a backslash before it
PARAMS = [MARK + "' OR id = 7 -- ", MARK + "', b = 'pwned", "x" + MARK, MARK + "\\",
          MARK + "\\' OR id = 7 -- "]
# what may follow a hostile literal, closing what another reading opened
TAILS = ["", "", "", " OR id = {k}", " -- '", " # '", "'", " /* ' */", "\n", " -- \n",
         "' OR id = {k} -- '", " /*' OR id = {k} -- */"]
# comments between tokens
COMMENTS = ["/* ' */", "/* \" */", "-- '\n", "#'\n", "/**/", "/*! */", "/* -- */",
            "/*!110000 OR id = {k} */", "/*!100000 AND 1 */", "/*M!999999 OR id = {k} */",
            "/*!OR id = {k} */", "/*M!100100 OR id = {k} */", "/*! AND a <> '*/' */",
            "/*!50000 OR a = '\\'' */", "-- \n", "/* ' OR id = {k} -- */",
            "/*!100000 OR t.id = {k} */", "/*!100000 AND t.a <> 't' */", "/*+ OR id = {k} */",
            "/*!100000 OR id = {k} /* ' */", "--\t'\n", "/*M!100000 OR t.id = {k} */",
            "--\x01'\n", "--\x0b'\n", "--\x0c'\n", "--\r'\n", "--\x7f'\n", "#\r'\n",
            "-- \r'\n", "/* /* */",
            # conditions the server skips (a later version's, MySQL 5.7+'s) must not narrow
            "/*!110000 AND id = {k} */", "/*!50700 AND id = {k} */", "/*!101199 AND id = {k} */",
            "/*M!50700 AND 1 */", "/*!50699 AND 1 */"]


def fmt(s, k):
    return s.replace("{k}", str(k))


# ------------------------------------------------------------ literals

def esc_bs(v):
    """v written for backslash escapes."""
    return v.replace("\\", "\\\\").replace("'", "\\'").replace("\x00", "\\0")


def esc_dq(v):
    """v written with doubled quotes only (what NO_BACKSLASH_ESCAPES reads as v)."""
    return v.replace("'", "''")


def str_lit(r, v, k):
    """A literal for the string v (as one mode or both read it), or a
    hostile one."""
    style = r.randrange(14)
    if style == 0:
        return "'" + esc_bs(v) + "'"
    if style == 1:
        return "'" + esc_dq(v) + "'"
    if style == 2:
        return '"' + v.replace("\\", "\\\\").replace('"', '""') + '"'
    if style == 3:
        return "_utf8mb4'" + esc_dq(v) + "'"
    if style == 4:
        return "N'" + esc_bs(v) + "'"
    if style == 5:
        return "X'" + v.encode().hex() + "'"
    if style == 6:
        cut = r.randrange(len(v) + 1)
        return "'" + esc_dq(v[:cut]) + "' '" + esc_dq(v[cut:]) + "'"
    if style == 7:
        return "'" + esc_bs(v) + "'" + r.choice([" /* c */", " -- c\n", "/*'*/"])
    return hostile(r, k)


def hostile(r, k):
    q = r.choice(["'", "'", "'", '"'])
    body = "".join(fmt(r.choice(PIECES), k) for _ in range(r.randrange(1, 5)))
    pre = r.choice(["", "", "", "_utf8mb4", "N", "_binary"])
    return pre + q + body + q + fmt(r.choice(TAILS), k)


def key_lit(r, k):
    """A literal for the shard key value k, as plain as 7 or as awkward as
    '1' '5'."""
    s = str(k)
    forms = [s, s, s, "'" + s + "'", '"' + s + '"', "_utf8mb4'" + s + "'", "N'" + s + "'",
             "X'" + s.encode().hex() + "'", "X'%02x'" % k, hex(k), "b'{0:b}'".format(k),
             "0b{0:b}".format(k), "_binary'" + s + "'", "'" + s[:1] + "' '" + s[1:] + "'",
             s + "/* c */", "'" + s + "' /*' OR id = 9 -- */", s + ".0", s + "e0",
             "%d--1" % (k - 1), "%d --1" % (k - 1), "%d-- 1" % k, "%d/*!*/" % k,
             "%d /*+ OR id = 9 */" % k, "0" + s, "%d -- \n-0" % k, "%d#1\n" % k,
             "/*!100000 %d */" % k, "/*!110000 9 OR id = */ %d" % k]
    if r.randrange(30):
        return r.choice(forms)
    # forms the mod strategy refuses (not canonical integers): now and then
    return r.choice(forms[:4] + ["'" + s + ".0'", "' " + s + "'", "'+" + s + "'", "'0" + s + "'",
                                 "'" + s + "\\0'"])


# ------------------------------------------------------------ statements

class Template:
    """A statement's structure: every choice made by its own generator,
    seeded per template, so its statements differ only in literals."""

    def __init__(self, seed):
        self.seed = seed
        s = random.Random(seed)
        self.kind = s.choice(["select"] * 5 + ["update"] * 2 + ["delete", "insert"])
        self.prepared = s.randrange(8) == 0 and self.kind in ("select", "update", "delete")

    def make(self, r):
        """(sql, param or None) with the literals drawn from r."""
        s = random.Random(self.seed)
        param = [None]
        if self.kind == "insert":
            return self.insert(s, r), None
        where = self.where(s, r, param)
        if self.kind == "select":
            cols = s.choice(["id, a, b", "id", "COUNT(*)", "id, b", "id, {v} AS v",
                             "id, CONCAT(a, {v}) AS v"]).format(v=self.value(s, r, None))
            # rows are compared as multisets even under ORDER BY: a comment
            # or string left open in one reading may swallow it
            order = s.randrange(3) == 0 and cols != "COUNT(*)"
            tail = ("\nORDER BY id" + s.choice(["", " LIMIT 5", " DESC"])) if order else ""
            if s.randrange(6):
                return "SELECT " + cols + " FROM t WHERE " + where + tail, param[0]
            # a name in backticks that ends in MARK: closed at that backtick
            # in utf8mb4, at the next one in CHARSETS
            return "SELECT " + cols + " FROM t AS `t" + MARK + "` WHERE " + where + \
                " -- ` WHERE " + self.where(s, r, None) + tail, param[0]
        if self.kind == "update":
            val = self.value(s, r, param)
            setv = s.choice(["b = {v}", "b = CONCAT(LEFT(b, 20), {v})", "a = {v}, b = {v2}"])
            sql = "UPDATE t SET " + setv.format(v=val, v2=self.value(s, r, None)) + \
                " WHERE " + where
            return sql, param[0]
        return "DELETE FROM t WHERE " + where, param[0]

    def value(self, s, r, param):
        if param is not None and self.prepared and param[0] is None and s.randrange(2) == 0:
            param[0] = r.choice(VALUES + PARAMS + [hostile(r, 7)])
            # now and then right against a string: no statement to a server,
            # whose parser takes no ? next to a literal
            return s.choice([PARAM] * 4 + ["'x'" + PARAM, PARAM + "'x'"])
        return str_lit(r, r.choice(VALUES), r.randrange(1, N + 1))

    def key_cond(self, s, r):
        col = s.choice(["id", "id", "t.id", "`id`"])
        form = s.randrange(4)
        k = r.randrange(1, N + 1)
        if form == 0:
            return col + " = " + key_lit(r, k)
        if form == 1:
            n = s.randrange(1, 5)
            return col + " IN (" + ", ".join(key_lit(r, r.randrange(1, N + 1))
                                             for _ in range(n)) + ")"
        if form == 2:
            return col + " BETWEEN " + key_lit(r, k) + " AND " + key_lit(r, k + r.randrange(4))
        return key_lit(r, k) + " = " + col

    def str_cond(self, s, r, param):
        col = s.choice(["a", "b"])
        form = s.randrange(7)
        if form == 0:
            return col + " = " + self.value(s, r, param)
        if form == 1:
            return col + " <> " + self.value(s, r, param)
        if form == 2:
            return col + " IN (" + ", ".join(self.value(s, r, param)
                                             for _ in range(s.randrange(1, 4))) + ")"
        if form == 3:
            return col + " LIKE " + self.value(s, r, param)
        if form == 4:
            return "CONCAT(" + col + ", " + self.value(s, r, param) + ") = " + \
                self.value(s, r, param)
        if form == 5:
            return col + " BETWEEN " + self.value(s, r, param) + " AND " + \
                self.value(s, r, param)
        return col + " = " + self.value(s, r, param) + " COLLATE utf8mb4_bin"

    def gap(self, s, r):
        """Where a comment may go between tokens: the same places per
        template, the comment drawn per statement."""
        if s.randrange(4) == 0:
            return " " + fmt(r.choice(COMMENTS), r.randrange(1, N + 1)) + " "
        return " "

    def where(self, s, r, param):
        parts = [self.key_cond(s, r)]
        for _ in range(s.randrange(1, 4)):
            parts.append(self.str_cond(s, r, param) if s.randrange(4) else self.key_cond(s, r))
        s.shuffle(parts)
        out = parts[0]
        for p in parts[1:]:
            op = s.choice(["AND", "AND", "AND", "OR"])
            if s.randrange(3) == 0:
                p = "(" + p + ")"
            out += self.gap(s, r) + op + self.gap(s, r) + p
        return out

    def insert(self, s, r):
        rows = []
        for _ in range(s.randrange(1, 4)):
            ident = next_id()
            rows.append("(" + key_lit(r, ident) + "," + self.gap(s, r) +
                        str_lit(r, r.choice(VALUES), ident) + ", " +
                        str_lit(r, r.choice(VALUES), ident) + ")")
        sql = "INSERT INTO t (id, a, b) VALUES " + ", ".join(rows)
        if s.randrange(3) == 0:
            sql += " ON DUPLICATE KEY UPDATE b = " + str_lit(r, r.choice(VALUES), 7)
        return sql


PARAM = "\x01"     # where a template's parameter goes: ? prepared, X'..' in text
_next = [1000]


def next_id():
    """A fresh id for an INSERT: no two statements write the same one."""
    _next[0] += 1
    return _next[0]


# ------------------------------------------------------------ running

def connect(port, user, pw, db, cs=None):
    """A connection in utf8mb4, or in the character set cs (one of
    CHARSETS, entered as ENTER_CHARSET says) answering bytes."""
    enter = ENTER_CHARSET.get(cs)
    c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database=db,
                        autocommit=True, charset="latin1" if enter else cs or "utf8mb4",
                        use_unicode=cs is None)
    if enter:
        c.cursor().execute(enter)
    if cs:
        c.encoding = "latin_1"   # names in the results (the rows are bytes): any byte decodes
    return c


def refused_charset(cs):
    """Whether dal-proxy refuses cs as the client's character set, entered
    as ENTER_CHARSET says, with error 1115 (the session it refused at SET
    staying in its own); a character set it accepts is compared."""
    enter = ENTER_CHARSET.get(cs)
    try:
        c = pymysql.connect(host="127.0.0.1", port=px_port, user="app", password=password,
                            database="shop", autocommit=True,
                            charset="latin1" if enter else cs)
    except pymysql.err.OperationalError as e:
        if e.args[0] != 1115:
            raise
        print("the proxy refuses %s as the client's character set at the handshake" % cs)
        return True
    try:
        if enter:
            c.cursor().execute(enter)
        return False
    except pymysql.err.MySQLError as e:
        if e.args[0] != 1115:
            raise
        cur = c.cursor()
        cur.execute("SELECT @@character_set_client")
        still = cur.fetchone()[0]
        if still != "latin1":
            raise RuntimeError("%s refused, but the session's character set is now %s"
                               % (enter, still))
        print("the proxy refuses %s as the client's character set: %s" % (cs, enter))
        return True
    finally:
        c.close()


def encode(sql, cs):
    """The statement's text for a session in cs: MARK as a lead byte whose
    character takes the byte after it (a backslash, a backtick) in every
    one of CHARSETS; in utf8mb4, the character U+00BF."""
    if cs is None:
        return sql.replace(MARK, "\u00bf")
    return b"\xe0".join(part.encode(CHARSETS[cs], errors="replace") for part in sql.split(MARK))


def run(c, sql):
    """('rows', rows as a sorted list) or ('ok', affected) or ('error', code, message)."""
    cur = c.cursor()
    try:
        n = cur.execute(sql)
        if cur.description is None:
            return ("ok", n)
        rows = list(cur.fetchall())
        return ("rows", sorted(rows, key=repr))
    except pymysql.MySQLError as e:
        return ("error", e.args[0], str(e.args[1])[:160] if len(e.args) > 1 else "")
    finally:
        cur.close()


def lenenc(b, at):
    """A length-encoded integer of packet b at offset at: (value, next offset)."""
    f = b[at]
    if f < 251:
        return f, at + 1
    size = {252: 2, 253: 3, 254: 8}[f]
    return int.from_bytes(b[at + 1:at + 1 + size], "little"), at + 1 + size


def run_prepared(c, sql, param):
    """sql as COM_STMT_PREPARE and EXECUTE, the one ? bound to the string
    param: like run(); a result's rows are their first column (an INT)."""
    try:
        c._execute_command(0x16, sql)
        ok = c._read_packet().get_all_data()
        stmt, ncols, nparams = struct.unpack("<IHH", ok[1:9])
        eof = not (c.server_capabilities & CLIENT.DEPRECATE_EOF and
                   c.client_flag & CLIENT.DEPRECATE_EOF)
        for n in (nparams, ncols):
            for _ in range(n + (1 if n and eof else 0)):
                c._read_packet()
        value = param if isinstance(param, bytes) else param.encode()
        lv = bytes([len(value)]) if len(value) < 251 else b"\xfc" + struct.pack("<H", len(value))
        body = struct.pack("<IBI", stmt, 0, 1) + b"\x00" * ((nparams + 7) // 8) + b"\x01" + \
            struct.pack("<H", 253) * nparams + (lv + value) * nparams
        try:
            c._execute_command(0x17, body)
            first = c._read_packet().get_all_data()
            if first[0] == 0:
                return ("ok", lenenc(first, 1)[0])
            ncol = lenenc(first, 0)[0]
            for _ in range(ncol + (1 if eof else 0)):
                c._read_packet()
            rows = []
            while True:
                p = c._read_packet().get_all_data()
                if p[0] == 0xFE and len(p) < 9:
                    break
                bitmap = (ncol + 7 + 2) // 8
                null = p[1] >> 2 & 1
                rows.append(None if null else struct.unpack("<i", p[1 + bitmap:5 + bitmap])[0])
            return ("rows", sorted(rows, key=repr))
        finally:
            c._execute_command(0x19, struct.pack("<I", stmt))
    except pymysql.MySQLError as e:
        return ("error", e.args[0], str(e.args[1])[:160] if len(e.args) > 1 else "")


class Side:
    """One session of the test and where its table's contents are read."""

    def __init__(self, conn):
        self.c = conn
        self.mode = None

    def set_mode(self, mode):
        if self.mode != mode:
            self.c.cursor().execute("SET sql_mode = '" + MODES[mode] + "'")
            self.mode = mode


def baseline():
    return [(i, VALUES[i % len(VALUES)], VALUES[(i * 7 + 3) % len(VALUES)])
            for i in range(1, N + 1)]


class Judge:
    def __init__(self):
        # per character set, the sessions through the proxy and on the copy
        # a character set dal refuses as the client's (1115: a byte of its
        # characters can be a quote or backslash) is only checked refused
        self.cs_refused = {cs: refused_charset(cs) for cs in CHARSETS}
        self.sides = {cs: (Side(connect(px_port, "app", password, "shop", cs)),
                           Side(connect(s0_port, "dal", "dalpass", "plain", cs)))
                      for cs in [None] + list(CHARSETS) if not self.cs_refused.get(cs)}
        # the physical tables, read and reset directly (in the servers' own mode)
        self.nodes = [connect(s0_port, "dal", "dalpass", "shard_0"),
                      connect(s1_port, "dal", "dalpass", "shard_1")]
        self.plain = connect(s0_port, "dal", "dalpass", "plain")
        self.mismatches = 0
        self.kinds = {}     # mismatches by kind of statement and check
        self.refused = {}
        self.checked = 0
        self.ps_checked = 0
        self.partial = []   # statements that failed on both, having written on some nodes

    def node_of(self, pos):
        return self.nodes[pos // (TABLES // 2)]

    def contents(self):
        """(the copy's rows, the proxy's rows, rows on a table not theirs)."""
        cur = self.plain.cursor()
        cur.execute("SELECT id, a, b FROM t ORDER BY id")
        direct = list(cur.fetchall())
        rows, misplaced = [], []
        for pos in range(TABLES):
            cur = self.node_of(pos).cursor()
            cur.execute("SELECT id, a, b FROM t_%d" % pos)
            for row in cur.fetchall():
                rows.append(row)
                if row[0] % TABLES != pos:
                    misplaced.append((row[0], "t_%d" % pos))
        return direct, sorted(rows), misplaced

    def forget_inserted(self):
        """Both tables without the rows INSERTs wrote, so that one INSERT
        runs in every mode and character set without a duplicate key."""
        self.plain.cursor().execute("DELETE FROM t WHERE id > %d" % N)
        for pos in range(TABLES):
            self.node_of(pos).cursor().execute("DELETE FROM t_%d WHERE id > %d" % (pos, N))

    def reset(self):
        base = baseline()
        cur = self.plain.cursor()
        cur.execute("DELETE FROM t")
        cur.executemany("INSERT INTO t (id, a, b) VALUES (%s, %s, %s)", base)
        for pos in range(TABLES):
            cur = self.node_of(pos).cursor()
            cur.execute("DELETE FROM t_%d" % pos)
            mine = [row for row in base if row[0] % TABLES == pos]
            cur.executemany("INSERT INTO t_%d (id, a, b) VALUES (%%s, %%s, %%s)" % pos, mine)

    def report(self, what, sql, mode, direct, proxy, cs, prepared):
        """A mismatch: the first few of each kind printed, all counted."""
        self.mismatches += 1
        text = sql.decode("latin_1") if isinstance(sql, bytes) else sql
        kind = "%s, %s %s in %s" % (what, "prepared" if prepared else "text",
                                    text.lstrip("b'\"").split(" ")[0].upper(),
                                    "CHARSETS" if cs else "utf8mb4")
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.kinds[kind] <= 4:
            print("MISMATCH (%s) [%s] %r\n  server: %r\n  proxy:  %r"
                  % (what, mode, sql, short(direct), short(proxy)))

    def one(self, sql, param, mode, write, cs=None):
        if cs in self.cs_refused and self.cs_refused[cs]:
            return
        if sql.startswith("INSERT"):
            self.forget_inserted()
        px, dr = self.sides[cs]
        px.set_mode(mode)
        dr.set_mode(mode)
        sql = encode(sql, cs)
        if param is not None and cs:
            param = encode(param, cs)
        if param is None:
            d, p = run(dr.c, sql), run(px.c, sql)
            self.checked += 1
        else:
            d = run_prepared(dr.c, sql, param)
            p = run_prepared(px.c, sql, param)
            sql = "%s  -- prepared, ? = %r" % (sql, param)
            self.ps_checked += 1
        if cs:
            mode += ", " + (ENTER_CHARSET[cs] or "handshake " + cs)
        resync = False
        if d[0] == "error" and p[0] == "error":
            pass
        elif p[0] == "error" and p[1] in REFUSALS and d[0] != "error":
            self.refused.setdefault(p[1], []).append((mode, sql, p))
            resync = write
        elif d[:2] != p[:2]:
            self.report("answer", sql, mode, d, p, cs, param is not None)
        if write and not resync:
            direct, proxy, misplaced = self.contents()
            if misplaced or (direct != proxy and not (d[0] == p[0] == "error"
                                                      and not refused_whole(sql, d[1]))):
                self.report("contents after", sql, mode, {"answer": d, "rows": diff(direct, proxy)},
                            {"answer": p, "rows": diff(proxy, direct), "misplaced": misplaced},
                            cs, param is not None)
                resync = True
            elif direct != proxy:
                self.partial.append((mode, sql, d, p, diff(direct, proxy), diff(proxy, direct)))
                resync = True
            elif not N // 2 <= len(direct) <= N + 60:
                resync = True
        if resync:
            self.reset()


def diff(a, b):
    return sorted(set(a) - set(b))[:6]


def short(x):
    s = repr(x)
    return s if len(s) < 600 else s[:600] + "..."


def setup(j):
    ddl = "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(200), b VARCHAR(200)) " \
          "DEFAULT CHARSET=utf8mb4"
    for side in j.sides[None]:
        c = side.c
        c.cursor().execute(ddl)
    j.reset()


def main():
    print("proxy_literals: seed %d, %d statements (DAL_LITERALS_SEED, DAL_LITERALS_COUNT)"
          % (SEED, COUNT))
    r = random.Random(SEED)
    templates = [Template(r.randrange(1 << 30)) for _ in range(max(1, COUNT // 12))]
    j = Judge()
    setup(j)
    for _ in range(COUNT):
        tp = r.choice(templates)
        sql, param = tp.make(r)
        modes = list(MODES)
        r.shuffle(modes)
        for mode in modes:
            if param is None:
                j.one(sql, None, mode, tp.kind != "select")
                continue
            text = sql.replace(PARAM, "X'" + param.encode().hex() + "'")
            j.one(text, None, mode, tp.kind != "select")
            j.one(sql.replace(PARAM, "?"), param, mode, tp.kind != "select")
        # and in a character set whose characters may end in a backslash
        cs = r.choice(list(CHARSETS))
        text = sql.replace(PARAM, "X'" + (param or "").encode().hex() + "'")
        for mode in modes:
            j.one(text, None, mode, tp.kind != "select", cs)
            if param is not None:
                j.one(sql.replace(PARAM, "?"), param, mode, tp.kind != "select", cs)
    for code, cases in sorted(j.refused.items()):
        print("refused by the proxy with %d (the server ran it): %d, e.g. [%s] %r: %r"
              % (code, len(cases), cases[0][0], cases[0][1], cases[0][2]))
    for mode, sql, d, p, drows, prows in j.partial[:5]:
        print("NOTE: failed on both, but written on some of the proxy's nodes [%s] %r\n"
              "  server: %r, rows only there %r\n  proxy: %r, rows only there %r"
              % (mode, sql, d, drows, p, prows))
    for kind, n in sorted(j.kinds.items()):
        print("mismatches (%s): %d" % (kind, n))
    print("proxy_literals: %d text and %d prepared executions compared, %d mismatch(es), "
          "%d partial write(s) of a failed statement" % (j.checked, j.ps_checked, j.mismatches,
                                                          len(j.partial)))
    sys.exit(1 if j.mismatches else 0)


main()
