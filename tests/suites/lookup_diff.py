#!/usr/bin/env python3
"""lookup_diff.py -- generated INSERT, UPDATE, DELETE and SELECT by the
looked-up columns of orders (order_no, code: docs/lookup.md), run through
dal-proxy and on an unsharded copy on one server; every answer, and every
error number, must be the same.  Afterwards every row must be reachable
through its lookup rows (`python3 lookup_diff.py ... --check` alone only
compares the lookup tables with the copy).

usage: lookup_diff.py PROXY_PORT PLAIN_PORT SEED STEPS
Exit status 0 when all agree; the differences are printed."""
import random
import sys

import pymysql

PROXY = dict(host="127.0.0.1", user="app", password="app-s3cret", database="shop",
             autocommit=True)
PLAIN = dict(host="127.0.0.1", user="dal", password="dalpass", database="plain",
             autocommit=True)


def run(conn, sql):
    cur = conn.cursor()
    try:
        cur.execute(sql)
        return ("ok", sorted(cur.fetchall()) if cur.description else cur.rowcount)
    except pymysql.MySQLError as e:
        return ("error", e.args[0])


def main():
    pport, qport, seed, steps = (int(a) for a in sys.argv[1:5])
    rnd = random.Random(seed)
    px = pymysql.connect(port=pport, **PROXY)
    plain = pymysql.connect(port=qport, **PLAIN)
    bad = 0
    next_id = 1000 * seed
    ids = []

    def both(sql):
        nonlocal bad
        a, b = run(px, sql), run(plain, sql)
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
        want = {r for r in run(plain, f"SELECT {col}, user_id FROM orders WHERE {col} IS NOT NULL")[1]}
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
