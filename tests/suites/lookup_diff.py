#!/usr/bin/env python3
"""lookup_diff.py -- generated INSERT, UPDATE, DELETE and SELECT by the
looked-up columns of orders (order_no, code: docs/lookup.md), run through
dal-proxy and on an unsharded copy on one server; every answer, and every
error number, must be the same.  Afterwards every row must be reachable
through its lookup rows (`python3 lookup_diff.py ... --check` alone only
compares the lookup tables with the copy).

usage: lookup_diff.py PROXY_PORT|libdal:LIBDAL_SO:CONFIG PLAIN_PORT SEED STEPS
(libdal:...: the statements go through libdal, dal_query, instead of
dal-proxy).  Exit status 0 when all agree; the differences are printed."""
import ctypes
import random
import sys

import pymysql


class DalError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("mysql_errno", ctypes.c_uint),
                ("sqlstate", ctypes.c_char * 6), ("message", ctypes.c_char * 512)]


class Libdal:
    """dal_query through ctypes: rows as tuples of text (or None)."""

    def __init__(self, so, config):
        self.lib = ctypes.CDLL(so)
        self.lib.dal_result_text.restype = ctypes.c_char_p
        self.lib.dal_result_column_count.restype = ctypes.c_size_t
        self.lib.dal_result_affected_rows.restype = ctypes.c_uint64
        self.dal = ctypes.c_void_p()
        err = DalError()
        if self.lib.dal_open(config.encode(), None, ctypes.byref(self.dal), ctypes.byref(err)):
            raise RuntimeError(err.message.decode())

    def run(self, sql):
        err, res = DalError(), ctypes.c_void_p()
        lib = self.lib
        if lib.dal_query(self.dal, None, sql.encode(), None, ctypes.c_size_t(0),
                         ctypes.byref(res), ctypes.byref(err)):
            return ("error", err.mysql_errno or err.message.decode())
        ncols = lib.dal_result_column_count(res)
        rows = []
        while True:
            rc = lib.dal_result_next(res, ctypes.byref(err))
            if rc != 1:
                break
            rows.append(tuple(None if (t := lib.dal_result_text(res, ctypes.c_size_t(i), None)) is None
                              else t.decode() for i in range(ncols)))
        affected = lib.dal_result_affected_rows(res)
        lib.dal_result_free(res)
        if rc < 0:
            return ("error", err.mysql_errno or err.message.decode())
        return ("ok", sorted(rows, key=str) if ncols else affected)

PROXY = dict(host="127.0.0.1", user="app", password="app-s3cret", database="shop",
             autocommit=True)
PLAIN = dict(host="127.0.0.1", user="dal", password="dalpass", database="plain",
             autocommit=True)


def run(conn, sql, text=False):
    if isinstance(conn, Libdal):
        return conn.run(sql)
    cur = conn.cursor()
    try:
        cur.execute(sql)
        if not cur.description:
            return ("ok", cur.rowcount)
        rows = cur.fetchall()
        if text:
            rows = [tuple(None if v is None else str(v) for v in r) for r in rows]
            return ("ok", sorted(rows, key=str))
        return ("ok", sorted(rows))
    except pymysql.MySQLError as e:
        return ("error", e.args[0])


def main():
    qport, seed, steps = (int(a) for a in sys.argv[2:5])
    rnd = random.Random(seed)
    if sys.argv[1].startswith("libdal:"):
        _, so, config = sys.argv[1].split(":", 2)
        px = Libdal(so, config)
    else:
        px = pymysql.connect(port=int(sys.argv[1]), **PROXY)
    text = isinstance(px, Libdal)
    plain = pymysql.connect(port=qport, **PLAIN)
    bad = 0
    next_id = 1000 * seed
    ids = []

    def both(sql):
        nonlocal bad
        a, b = run(px, sql), run(plain, sql, text)
        if a != b:
            bad += 1
            print(f"DIFF {sql}\n  proxy: {a}\n  plain: {b}")
        return b

    for _ in range(steps):
        op = rnd.random()
        ono = rnd.randint(1, 30)
        if op < 0.35 or not ids:
            rows = []
            for _ in range(rnd.randint(1, 3)):
                next_id += 1
                code = f"'c{rnd.randint(1, 400)}'" if rnd.random() < 0.9 else "NULL"
                rows.append(f"({next_id}, {rnd.randint(1, 50)}, {ono if rnd.random() < 0.9 else 'NULL'}, {code})")
                ids.append(next_id)
            both("INSERT INTO orders (id, user_id, order_no, code) VALUES " + ", ".join(rows))
        elif op < 0.45:
            both(f"UPDATE orders SET order_no = {ono} WHERE id = {rnd.choice(ids)}")
        elif op < 0.5:
            both(f"UPDATE orders SET note = 'n', order_no = {ono} WHERE order_no = {rnd.randint(1, 30)}")
        elif op < 0.55:
            both(f"UPDATE orders SET code = 'c{rnd.randint(1, 400)}' WHERE id = {rnd.choice(ids)}")
        elif op < 0.62:
            both(f"DELETE FROM orders WHERE id = {rnd.choice(ids)}")
        elif op < 0.65:
            both(f"DELETE FROM orders WHERE order_no = {ono}")
        elif op < 0.8:
            both(f"SELECT id, user_id, order_no, code FROM orders WHERE order_no = {ono}")
        elif op < 0.9:
            vals = ", ".join(str(rnd.randint(1, 30)) for _ in range(rnd.randint(1, 4)))
            both(f"SELECT id, order_no FROM orders WHERE order_no IN ({vals})")
        else:
            both(f"SELECT id, code FROM orders WHERE code = 'c{rnd.randint(1, 400)}'")
    both("SELECT id, user_id, order_no, code, note FROM orders")
    # every row reachable: its (value, shard key) is in the lookup table
    for col in ("order_no", "code"):
        want = {r for r in run(plain, f"SELECT {col}, user_id FROM orders WHERE {col} IS NOT NULL", text)[1]}
        have = set(run(px, f"SELECT {col}, user_id FROM orders_lookup_{col}")[1])
        if want - have:
            bad += 1
            print(f"UNREACHABLE by {col}: {sorted(want - have)[:10]}")
        if have - want:
            print(f"note: {len(have - want)} lookup rows of {col} without a row (harmless)")
    print(f"{steps} steps, {bad} difference(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
