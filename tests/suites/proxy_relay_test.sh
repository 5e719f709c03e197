#!/usr/bin/env bash
# proxy_relay_test.sh -- the result relay (docs/proxy.md, "The result
# relay") judged against the server: the same plain reads through a
# pass-through dal-proxy, whose text results the proxy relays packet by
# packet to a client that negotiates what the backend connection does
# (the mariadb client: MariaDB's extended metadata), and directly on the
# server, compared with every column's metadata (--column-type-info: the
# schema, tables, names, type, collation, length, flags, decimals): rows,
# NULLs, no rows, JSON and geometry columns, a warning, several
# statements in one COM_QUERY, a row over 16 MiB (split into packets both
# ways), an error as the first reply and one after rows, and a
# transaction.  The same reads from PyMySQL (no extended metadata, no
# CLIENT_DEPRECATE_EOF: the proxy's own path) and from Node's mariadb
# connector (CLIENT_DEPRECATE_EOF with extended metadata: relayed, the end
# packets rewritten) compare equal too.  Starts its own MariaDB server;
# never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db shop
px_passthrough shop 'relay-pass'
px_start "$work/px.ini" "$port"
mariadb -uroot -h127.0.0.1 -P"${ports[0]}" shop -e "SET GLOBAL max_allowed_packet = 67108864"
mariadb -uroot -h127.0.0.1 -P"${ports[0]}" shop -e "
CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20), d DECIMAL(8,3), j JSON, g POINT,
                ts TIMESTAMP(3) NULL, b BLOB, u INT UNSIGNED ZEROFILL);
INSERT INTO t VALUES (1, 'one', 1.5, '{\"a\": 1}', POINT(1, 2), '2024-01-02 03:04:05.678', 'x', 7),
                     (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                     (3, 'three', -2.25, '[1, 2]', NULL, NULL, REPEAT('b', 300), 12345);"

cat >"$work/reads.sql" <<'SQL'
SELECT * FROM t WHERE id = 1;
SELECT id, c, d, j, ST_AsText(g), ts, LENGTH(b), u FROM t ORDER BY id;
SELECT c AS renamed, id + 1 AS next FROM t WHERE id > 1 ORDER BY id;
SELECT * FROM t WHERE id = 99;
SELECT CAST('12abc' AS SIGNED) AS x;
SELECT COUNT(*), SUM(d) FROM t;
SELECT 1, 'two', NULL, 3.5e0;
SELECT LENGTH(REPEAT('z', 17000000)) AS n, MD5(REPEAT('z', 17000000)) AS m;
BEGIN;
SELECT id FROM t WHERE id = 3 FOR UPDATE;
COMMIT;
SQL
px() { mariadb -uroot -prelay-pass -h127.0.0.1 -P"$port" --max-allowed-packet=64M shop "$@"; }
plain() { mariadb -uroot -h127.0.0.1 -P"${ports[0]}" --max-allowed-packet=64M shop "$@"; }
px --column-type-info --table <"$work/reads.sql" >"$work/px.out" 2>"$work/px.err" ||
    fail "reads through the proxy: $(cat "$work/px.err")"
plain --column-type-info --table <"$work/reads.sql" >"$work/plain.out" 2>"$work/plain.err" ||
    fail "reads on the server: $(cat "$work/plain.err")"
diff -u "$work/plain.out" "$work/px.out" >"$work/diff" ||
    fail "relayed results and the server's differ: $(head -60 "$work/diff")"
grep -q '(format=json)' "$work/px.out" ||
    fail "the JSON column's extended metadata did not reach the client: $(grep -A8 'Field   4:' "$work/px.out" | head -10)"
grep -q 'Database:   `shop`' "$work/px.out" || fail "no column names its schema: $(head -12 "$work/px.out")"

# a row over 16 MiB: its packets split and joined again on the way
for c in px plain; do
    "$c" -N -e "SELECT REPEAT('q', 17000000)" | md5sum >"$work/big_$c" ||
        fail "a 17 MB row ($c)"
done
cmp -s "$work/big_px" "$work/big_plain" || fail "a 17 MB row differs through the proxy"

# an error as the first reply, and one after two rows (the subquery finds
# two rows for the last row only), then the connection still serves
for c in px plain; do
    "$c" -e "SELECT * FROM no_such_table; " >"$work/err_$c.out" 2>&1 || true
    "$c" -e "SELECT r.id, (SELECT x.c FROM t x WHERE x.id >= r.id AND x.id <= 2) FROM t r
             ORDER BY r.id DESC" >>"$work/err_$c.out" 2>&1 || true
    "$c" -N -e "SELECT c FROM t WHERE id = 1" >>"$work/err_$c.out" 2>&1 || true
done
diff -u "$work/err_plain.out" "$work/err_px.out" >"$work/err.diff" ||
    fail "an error differs through the proxy: $(cat "$work/err.diff")"

# several statements in one COM_QUERY (SERVER_MORE_RESULTS_EXISTS)
for c in px plain; do
    "$c" -e "SELECT id FROM t WHERE id = 1; SELECT c FROM t WHERE id = 3; SELECT 1 FROM t WHERE id = 9" \
        >"$work/multi_$c.out" 2>&1 || fail "multi-statements ($c): $(cat "$work/multi_$c.out")"
done
diff -u "$work/multi_plain.out" "$work/multi_px.out" >"$work/multi.diff" ||
    fail "multi-statements differ through the proxy: $(cat "$work/multi.diff")"

# PyMySQL: neither extended metadata nor CLIENT_DEPRECATE_EOF, so the
# proxy's own path; the same descriptions and rows as the server's
/usr/bin/python3 - "${ports[0]}" "$port" <<'PY' >"$work/py.out" 2>&1 || fail "PyMySQL: $(tail -20 "$work/py.out")"
import sys, pymysql
server, proxy = int(sys.argv[1]), int(sys.argv[2])
def run(port, password):
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", password=password,
                        database="shop", autocommit=True)
    cur = c.cursor()
    out = []
    for q in ("SELECT * FROM t ORDER BY id", "SELECT c AS x FROM t WHERE id = 99",
              "SELECT CAST('1x' AS SIGNED)"):
        cur.execute(q)
        out.append((cur.description, cur.fetchall(), c.show_warnings()))
    return out
a, b = run(server, ""), run(proxy, "relay-pass")
for x, y in zip(a, b):
    if x != y:
        print("differ:", x, y)
        sys.exit(1)
PY
# Node's mariadb connector: CLIENT_DEPRECATE_EOF and MariaDB's extended
# metadata, so relayed with the definitions' EOF left out and the 0xFE OK
# at the end; rows and every column's metadata as the server's, the
# columns' collation the handshake's utf8mb4_unicode_ci (224), which the
# proxy's backend connections take as SET NAMES ... COLLATE
npmdir=$builddir/tests/npm
if [ ! -d "$npmdir/node_modules/mariadb" ]; then
    mkdir -p "$npmdir"
    npm install --prefix "$npmdir" --no-audit --no-fund --silent mariadb@3 >"$work/npm.log" 2>&1 ||
        fail "npm install mariadb: $(tail -5 "$work/npm.log")"
fi
cat >"$work/relay.js" <<'JS'
const mariadb = require('mariadb');
const KEYS = ['db', 'schema', 'table', 'orgTable', 'name', 'orgName', 'columnLength', 'columnType',
              'flags', 'scale', 'type', 'dataTypeName', 'dataTypeFormat'];
function meta(m) {
    const o = {};
    for (const k of KEYS)
        o[k] = typeof m[k] === 'function' ? m[k]() : m[k];
    o.collation = m.collation ? m.collation.index : null;
    return o;
}
async function run(port, password) {
    const c = await mariadb.createConnection({host: '127.0.0.1', port, user: 'root', password,
        database: 'shop', multipleStatements: true, collation: 'UTF8MB4_UNICODE_CI', bigIntAsNumber: true, decimalAsNumber: false});
    const out = [];
    for (const q of ['SELECT * FROM t ORDER BY id', 'SELECT * FROM t WHERE id = 99',
                     "SELECT CAST('3z' AS SIGNED) AS w", 'SELECT c FROM t WHERE id = 1; SELECT 2 AS two',
                     'SELECT j, ST_AsText(g) AS g FROM t WHERE id = 1']) {
        const r = await c.query({sql: q, rowsAsArray: true});
        const sets = q.includes(';') ? r : [r];
        out.push(sets.map(s => ({rows: Array.from(s), meta: (s.meta || []).map(meta)})));
    }
    const w = await c.query('SELECT 1');
    out.push(w.meta.map(meta));
    await c.end();
    return JSON.stringify(out, (k, v) => typeof v === 'bigint' ? v.toString() :
                          (v && v.type === 'Buffer' ? v.data : v));
}
(async () => {
    const a = await run(+process.argv[3], ''), b = await run(+process.argv[4], process.argv[5]);
    if (a !== b) {
        console.log('server: ' + a + '\nproxy:  ' + b);
        process.exit(1);
    }
    console.log('same');
})().catch(e => { console.log(e.stack); process.exit(1); });
JS
NODE_PATH=$npmdir/node_modules node "$work/relay.js" - "${ports[0]}" "$port" relay-pass \
    >"$work/node.out" 2>&1 || fail "Node mariadb: $(head -c 3000 "$work/node.out")"

px_finish proxy_relay_test
