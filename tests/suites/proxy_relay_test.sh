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
# transaction.  The same reads from PyMySQL and Node's mysql2 3.11.0 (no
# extended metadata: relayed with each definition's extended block taken
# out), mysql2 3.x (extended metadata) and Node's mariadb connector
# (CLIENT_DEPRECATE_EOF with extended metadata: relayed, the end packets
# rewritten) compare equal too.  Starts its own MariaDB server; never
# skips.
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

# PyMySQL: neither extended metadata nor CLIENT_DEPRECATE_EOF, relayed
# with the definitions' extended blocks taken out; the same descriptions
# and rows as the server's (every column's metadata: proxy_relay_test's
# last part)
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
# meta(m): the metadata of one column of a Node mariadb result, every
# field the connector gives, for comparing the server's and the proxy's
# (both scripts below start with it)
meta_js=$(cat <<'JS'
const KEYS = ['db', 'schema', 'table', 'orgTable', 'name', 'orgName', 'columnLength', 'columnType',
              'flags', 'scale', 'type', 'dataTypeName', 'dataTypeFormat'];
function meta(m) {
    const o = {};
    for (const k of KEYS)
        o[k] = typeof m[k] === 'function' ? m[k]() : m[k];
    o.collation = m.collation ? m.collation.index : null;
    return o;
}
JS
)
# same_js: same(a, b) prints 'same', or the first result that differs
# between the server's (a) and the proxy's (b) and exits 1
same_js=$(cat <<'JS'
function same(a, b) {
    for (let i = 0; i < Math.max(a.length, b.length); i++)
        if (JSON.stringify(a[i]) !== JSON.stringify(b[i])) {
            console.log('result ' + i + ':\nserver: ' + JSON.stringify(a[i]) + '\nproxy:  ' +
                        JSON.stringify(b[i]));
            process.exit(1);
        }
    console.log('same');
}
JS
)
{ printf '%s\n' "$meta_js"; cat <<'JS'
const mariadb = require('mariadb');
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
} >"$work/relay.js"
NODE_PATH=$npmdir/node_modules node "$work/relay.js" - "${ports[0]}" "$port" relay-pass \
    >"$work/node.out" 2>&1 || fail "Node mariadb: $(head -c 3000 "$work/node.out")"

# Prepared statements (COM_STMT_EXECUTE): a plain read's binary rows are
# relayed as the server sent them, its column definitions dal's.  Every
# column type the connectors decode, through the proxy and on the server:
# ps_client (Connector/C's binary protocol, values decoded by the library,
# each statement executed twice on its handle; not an error after rows,
# after which Connector/C's next execution waits for rows that never come,
# from a server too) and Node's mariadb
# connector's execute() (every column's metadata; many executions from
# several connections at once, so on different pooled backend
# connections; a table altered between two executions of a statement; an
# error after rows; a warning)
mariadb -uroot -h127.0.0.1 -P"${ports[0]}" shop -e "
CREATE TABLE p (id INT PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT, bi BIGINT,
                ub BIGINT UNSIGNED, z INT(6) ZEROFILL, de DECIMAL(20,6), db DOUBLE, fl FLOAT,
                da DATE, dt DATETIME(6), tm TIME(3), ts TIMESTAMP(2) NULL, yr YEAR, ch CHAR(5),
                vc VARCHAR(300), tx TEXT, bl BLOB, js JSON, bt BIT(12), en ENUM('a', 'b'));
INSERT INTO p VALUES
 (1, -128, 65535, -8388608, -9223372036854775808, 18446744073709551615, 42, -12345678.123456,
  2.5e-300, 1.25, '2024-02-29', '2024-01-02 03:04:05.123456', '-838:59:58.999',
  '2024-05-06 07:08:09.12', 2155, 'ab', REPEAT('v', 300), 'text é', 0x00FF10, '{\"k\": [1, null]}',
  b'101010101010', 'b'),
 (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL),
 (3, 0, 0, 0, 0, 0, 0, 0, 0, 0, '1000-01-01', '2024-01-02 00:00:00', '00:00:00', NULL, 1901, '',
  '', '', '', '[]', b'0', 'a');
CREATE TABLE p2 (id INT PRIMARY KEY, a VARCHAR(10));
INSERT INTO p2 VALUES (1, 'x'), (2, 'y');"
printf '%s\n' \
    "SELECT * FROM p WHERE id = ?	1" \
    "SELECT * FROM p WHERE id = ?	2" \
    "SELECT * FROM p WHERE id = ?	3" \
    "SELECT * FROM p WHERE id = ?	99" \
    "SELECT id, vc, de FROM p WHERE id > ? ORDER BY id	0" \
    "SELECT * FROM p ORDER BY id" \
    "SELECT CAST(ch AS SIGNED) AS w FROM p WHERE id = ?	1" \
    "SELECT COUNT(*), SUM(de), MAX(dt) FROM p WHERE id < ?	10" \
    "SELECT c FROM t WHERE id = ?	1" >"$work/ps.txt"
"$builddir/tests/live/ps_client" 127.0.0.1 "$port" root relay-pass shop <"$work/ps.txt" \
    >"$work/ps_px.out" 2>&1 || fail "ps_client through the proxy: $(tail -3 "$work/ps_px.out")"
"$builddir/tests/live/ps_client" 127.0.0.1 "${ports[0]}" root '' shop <"$work/ps.txt" \
    >"$work/ps_plain.out" 2>&1 || fail "ps_client on the server: $(tail -3 "$work/ps_plain.out")"
diff -u "$work/ps_plain.out" "$work/ps_px.out" >"$work/ps.diff" ||
    fail "prepared statements' rows differ through the proxy: $(head -60 "$work/ps.diff")"
grep -q '^-838:59:58.999' "$work/ps_px.out" || grep -q '	-838:59:58.999	' "$work/ps_px.out" ||
    fail "the TIME column's fraction is missing: $(head -20 "$work/ps_px.out")"

{ printf '%s\n' "$meta_js" "$same_js"; cat <<'JS'
const mariadb = require('mariadb');
const OPTS = {host: '127.0.0.1', user: 'root', database: 'shop', collation: 'UTF8MB4_GENERAL_CI',
              bigIntAsNumber: false, decimalAsNumber: false, dateStrings: true};
const shape = r => ({rows: Array.from(r), meta: (r.meta || []).map(meta)});
async function attempt(f) {
    try { return shape(await f()); } catch (e) { return {errno: e.errno, sqlState: e.sqlState, text: e.text}; }
}
async function run(port, password, admin) {
    const c = await mariadb.createConnection(Object.assign({port, password}, OPTS));
    const out = [];
    for (const [q, v] of [['SELECT * FROM p WHERE id = ?', [1]], ['SELECT * FROM p WHERE id = ?', [2]],
                          ['SELECT * FROM p WHERE id = ?', [3]], ['SELECT * FROM p WHERE id = ?', [9]],
                          ['SELECT * FROM p WHERE id > ? ORDER BY id', [0]],
                          ['SELECT id, c, d, j FROM t WHERE id = ?', [1]]])
        out.push(await attempt(() => c.execute({sql: q, rowsAsArray: true}, v)));
    /* a warning, as SHOW WARNINGS tells it after the statement */
    out.push(await attempt(() => c.execute({sql: 'SELECT CAST(ch AS SIGNED) AS w FROM p WHERE id = ?',
                                             rowsAsArray: true}, [1])));
    out.push(Array.from(await c.query({sql: 'SHOW WARNINGS', rowsAsArray: true})));
    /* an error after rows, then the same connection and statement again */
    const after = 'SELECT r.id, (SELECT x.c FROM t x WHERE x.id >= r.id AND x.id <= 2) FROM t r ' +
                  'WHERE r.id > ? ORDER BY r.id DESC';
    out.push(await attempt(() => c.execute({sql: after, rowsAsArray: true}, [0])));
    out.push(await attempt(() => c.execute({sql: after, rowsAsArray: true}, [1])));
    /* the table altered between executions of the same statement */
    const q2 = 'SELECT * FROM p2 WHERE id = ?';
    out.push(await attempt(() => c.execute({sql: q2, rowsAsArray: true}, [1])));
    await admin.query('ALTER TABLE p2 ADD COLUMN b INT DEFAULT 9');
    out.push(await attempt(() => c.execute({sql: q2, rowsAsArray: true}, [1])));
    out.push(await attempt(() => c.execute({sql: q2, rowsAsArray: true}, [2])));
    await admin.query('ALTER TABLE p2 DROP COLUMN b, MODIFY a VARCHAR(20)');
    out.push(await attempt(() => c.execute({sql: q2, rowsAsArray: true}, [2])));
    /* the same columns, one of another length: the description the server resends */
    await admin.query('ALTER TABLE p2 MODIFY a VARCHAR(30)');
    out.push(await attempt(() => c.execute({sql: q2, rowsAsArray: true}, [1])));
    out.push(await attempt(() => c.execute({sql: q2, rowsAsArray: true}, [2])));
    await admin.query('ALTER TABLE p2 MODIFY a VARCHAR(10)'); /* as it was, for the next run */
    await c.end();
    /* several connections at once, each executing its statements many times */
    const many = await Promise.all([0, 1, 2, 3].map(async k => {
        const d = await mariadb.createConnection(Object.assign({port, password}, OPTS));
        const got = [];
        for (let i = 0; i < 25; i++)
            got.push(shape(await d.execute({sql: 'SELECT id, vc, dt, de FROM p WHERE id = ?',
                                            rowsAsArray: true}, [(i + k) % 4])).rows);
        await d.end();
        return got;
    }));
    out.push(many);
    return JSON.stringify(out, (k, v) => typeof v === 'bigint' ? v.toString() :
                          (v && v.type === 'Buffer' ? v.data : v));
}
(async () => {
    const admin = await mariadb.createConnection(Object.assign({port: +process.argv[3], password: ''}, OPTS));
    const a = JSON.parse(await run(+process.argv[3], '', admin));
    const b = JSON.parse(await run(+process.argv[4], process.argv[5], admin));
    await admin.end();
    same(a, b);
})().catch(e => { console.log(e.stack); process.exit(1); });
JS
} >"$work/relay_ps.js"
NODE_PATH=$npmdir/node_modules node "$work/relay_ps.js" - "${ports[0]}" "$port" relay-pass \
    >"$work/node_ps.out" 2>&1 || fail "Node mariadb execute(): $(head -c 4000 "$work/node_ps.out")"

# Clients without MariaDB's extended metadata, whose backend connection
# has it: relayed, each column definition without its extended type info
# block.  PyMySQL and Node's mysql2, through the proxy and on the server,
# on both tables (every column type): the description, every field of
# each column definition the driver keeps (flags, collation, length,
# decimals, names), the values, the warnings.  That the relay is taken
# shows in an unbuffered read of a result that fails after rows (the
# subquery finds two rows for the last row only): the server's rows
# reach the client before the error, as from the server, where dal's own
# path, which reads a result whole first, sends the error alone.
after='SELECT r.id, (SELECT x.c FROM t x WHERE x.id >= r.id AND x.id <= 2) FROM t r ORDER BY r.id DESC'
/usr/bin/python3 - "${ports[0]}" "$port" "$after" <<'PY' >"$work/py_meta.out" 2>&1 ||
import sys, pymysql, pymysql.cursors
server, proxy, after = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
FIELD = ("catalog", "db", "table_name", "org_table", "name", "org_name", "charsetnr", "length",
         "type_code", "flags", "scale")
def connect(port, password):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password=password,
                           database="shop", autocommit=True)
def run(port, password):
    c = connect(port, password)
    cur = c.cursor()
    out = []
    for q in ("SELECT * FROM t ORDER BY id", "SELECT * FROM p ORDER BY id",
              "SELECT j, g, u AS renamed, d + 1 FROM t WHERE id = 1",
              "SELECT * FROM p WHERE id = 99", "SELECT CAST(ch AS SIGNED) AS w FROM p WHERE id = 1"):
        cur.execute(q)
        fields = [tuple(getattr(f, k) for k in FIELD) for f in cur._result.fields]
        out.append((q, cur.description, fields, cur.fetchall(), c.show_warnings()))
    c.close()
    c = connect(port, password)
    got = []
    try:
        u = c.cursor(pymysql.cursors.SSCursor)
        u.execute(after)
        got.append(u.description)
        for row in u:
            got.append(row)
    except pymysql.MySQLError as e:
        got.append(("error", e.args[0]))
    out.append(got)
    return out
a, b = run(server, ""), run(proxy, "relay-pass")
if len(a[-1]) != 4 or a[-1][-1] != ("error", 1242):
    print("the server did not send two rows before its error:", a[-1])
    sys.exit(1)
for x, y in zip(a, b):
    if x != y:
        print("server:", x)
        print("proxy: ", y)
        sys.exit(1)
print("same")
PY
    fail "PyMySQL's metadata or rows differ through the proxy: $(tail -c 3000 "$work/py_meta.out")"

if px_mysql2; then
    { printf '%s\n' "$same_js"; cat <<'JS'
const mysql = require('mysql2');
const KEYS = ['catalog', 'schema', 'table', 'orgTable', 'name', 'orgName', 'characterSet',
              'encoding', 'columnLength', 'columnType', 'type', 'flags', 'decimals'];
const meta = f => KEYS.map(k => [k, f[k]]);
const OPTS = {host: '127.0.0.1', user: 'root', database: 'shop', rowsAsArray: true,
              supportBigNumbers: true, bigNumberStrings: true, dateStrings: true};
function query(c, q) {
    return new Promise((ok, no) => c.query(q, (e, rows, fields) => e ? no(e) :
        ok({rows, meta: (fields || []).map(meta)})));
}
/* rows as they come, then the error or the end */
function stream(c, q) {
    return new Promise(ok => {
        const got = [];
        c.query(q).on('fields', f => got.push(f.map(meta))).on('result', r => got.push(r))
            .on('error', e => got.push(['error', e.errno])).on('end', () => ok(got));
    });
}
async function run(port, password) {
    const c = mysql.createConnection(Object.assign({port, password}, OPTS));
    const out = [];
    for (const q of ['SELECT * FROM t ORDER BY id', 'SELECT * FROM p ORDER BY id',
                     'SELECT j, g, u AS renamed, d + 1 FROM t WHERE id = 1',
                     'SELECT * FROM p WHERE id = 99', 'SELECT CAST(ch AS SIGNED) AS w FROM p WHERE id = 1'])
        out.push(await query(c, q));
    out.push((await query(c, 'SHOW WARNINGS')).rows); /* the proxy's answer: its rows */
    c.end();
    const d = mysql.createConnection(Object.assign({port, password}, OPTS));
    out.push(await stream(d, process.argv[5]));
    d.destroy();
    return out;
}
(async () => {
    const a = await run(+process.argv[2], ''), b = await run(+process.argv[3], process.argv[4]);
    const last = a[a.length - 1];
    if (last.length !== 4 || JSON.stringify(last[3]) !== '["error",1242]') {
        console.log('the server did not send two rows before its error: ' + JSON.stringify(last));
        process.exit(1);
    }
    same(a, b);
})().catch(e => { console.log(e.stack); process.exit(1); });
JS
    } >"$work/relay_mysql2.js"
    # mysql2 3.x asks a MariaDB server for extended metadata (relayed as
    # sent); 3.11.0 does not, as mysql2 before it (relayed without it)
    old2=$builddir/tests/npm_mysql2_3.11
    if [ ! -d "$old2/node_modules/mysql2" ]; then
        mkdir -p "$old2"
        npm install --prefix "$old2" --no-audit --no-fund --silent mysql2@3.11.0 >"$work/npm2.log" 2>&1 ||
            fail "npm install mysql2@3.11.0: $(tail -5 "$work/npm2.log")"
    fi
    for dir in "$npmdir" "$old2"; do
        NODE_PATH=$dir/node_modules node "$work/relay_mysql2.js" "${ports[0]}" "$port" relay-pass \
            "$after" >"$work/mysql2.out" 2>&1 ||
            fail "Node mysql2 ($dir): metadata or rows differ through the proxy: $(head -c 4000 "$work/mysql2.out")"
    done
fi

px_finish proxy_relay_test
