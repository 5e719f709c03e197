// mysql2_smoke.js HOST PORT USER PASSWORD DB [--gen]
//
// Node's mysql2 (from npm) against a server or dal-proxy, with query()
// (text protocol, parameters escaped into the text) and execute()
// (prepared statements, binary protocol): the table of types.json written
// and read back with its column definitions, NULLs, a transaction rolled
// back and one committed, errors (number and SQLSTATE).  With --gen: an
// INSERT into `gen` without its id_column, whose insert id must be the id
// stored.  Prints what it read: tests/suites/connectors_test.sh compares a run
// through dal-proxy with one on a plain server.  MYSQL2_DIR names the
// directory whose node_modules holds mysql2.
'use strict';
const path = require('path');
const mysql = require(path.join(process.env.MYSQL2_DIR || '.', 'node_modules', 'mysql2/promise'));
const spec = require('../../data/connectors/types.json');

const [host, port, user, password, database] = process.argv.slice(2, 7);

// a field's definition, without its table and schema names (physical
// tables behind the proxy)
const field = (f) => [f.name, f.columnType, f.flags, f.characterSet, f.decimals, f.columnLength];
const value = (v) => (Buffer.isBuffer(v) ? 'hex:' + v.toString('hex') : v);

async function main() {
  const c = await mysql.createConnection({
    host, port: Number(port), user, password, database, charset: 'UTF8MB4_GENERAL_CI',
    timezone: 'Z', supportBigNumbers: true, bigNumberStrings: true, dateStrings: false,
    // JSON as text, as types.json writes it (proxy_caps_test.sh checks
    // JSON parsed through the extended type information)
    jsonStrings: true,
  });
  // show(TITLE, METHOD, SQL, ARGS): rows and field definitions
  const show = async (title, how, sql, args) => {
    const [rows, fields] = await c[how](sql, args);
    console.log(title, how, JSON.stringify(fields.map(field)));
    for (const r of rows) console.log('  ', JSON.stringify(r.map(value)));
  };
  // error(METHOD, SQL, ARGS): a statement that must fail
  const error = async (how, sql, args) => {
    try {
      await c[how](sql, args);
      console.log('no error:', how, sql);
    } catch (e) {
      console.log('error', how, e.errno, e.sqlState);
    }
  };
  await c.query("SET time_zone = '+00:00'");
  await c.query('DROP TABLE IF EXISTS typed');
  await c.query(spec.create);
  const cols = spec.columns;
  const insert = `INSERT INTO typed (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
  // the rows through query(), the same rows (keys + 10) through execute()
  for (const row of spec.rows) {
    const [ok] = await c.query(insert, row);
    const [ok2] = await c.execute(insert, [row[0] + 10, ...row.slice(1)]);
    console.log('insert', ok.affectedRows, ok.warningStatus, ok2.affectedRows, ok2.warningStatus);
  }
  c.config.rowsAsArray = true;
  for (const how of ['query', 'execute']) {
    await show('all', how, 'SELECT * FROM typed ORDER BY k');
    await show('one', how, 'SELECT * FROM typed WHERE k = ?', [11]);
    await show('nulls', how, 'SELECT * FROM typed WHERE k = ? OR k = ? ORDER BY k', [3, 13]);
    await show('expr', how, "SELECT k, bu DIV 3, de * 2, CONCAT(vc, '!'), HEX(bl), bt + 0, " +
      "JSON_EXTRACT(j, '$.a[1]'), ts + 0, e + 0, st + 0 FROM typed WHERE k IN (?, ?) ORDER BY k", [1, 12]);
  }
  // the rows written by query() and by execute() hold the same values
  const [all] = await c.query('SELECT * FROM typed ORDER BY k');
  const text = (r) => JSON.stringify(r.slice(1).map(value));
  console.log('query and execute wrote the same rows:',
    all.length === 6 && all.slice(0, 3).every((r, i) => text(r) === text(all[i + 3])));

  // transactions: one rolled back, one committed
  await c.beginTransaction();
  await c.execute('INSERT INTO typed (k, vc) VALUES (?, ?)', [100, 'rolled back']);
  await c.rollback();
  await c.beginTransaction();
  await c.query('INSERT INTO typed (k, vc) VALUES (?, ?)', [101, 'committed']);
  await c.execute('UPDATE typed SET i = ? WHERE k = ?', [42, 101]);
  await c.commit();
  await show('after transactions', 'execute', 'SELECT k, vc, i FROM typed WHERE k >= ? ORDER BY k', [100]);

  for (const how of ['query', 'execute']) {
    await error(how, 'SELECT * FROM no_such_table');
    await error(how, 'INSERT INTO typed (k) VALUES (?)', [1]);
    await error(how, 'SELECT nonsense FROM typed');
    await error(how, 'SELEKT 1');
  }

  if (process.argv.includes('--gen')) {
    // dal generates the id; the insert id is that id
    for (const how of ['query', 'execute']) {
      const [ok] = await c[how]('INSERT INTO gen (user_id, note) VALUES (?, ?)', [8, how]);
      const [rows] = await c.query('SELECT id FROM gen WHERE user_id = ? AND note = ?', [8, how]);
      if (!ok.insertId || rows.length !== 1 || String(rows[0][0]) !== String(ok.insertId))
        throw new Error(`${how}: insert id ${ok.insertId}, stored ${JSON.stringify(rows)}`);
      console.log('generated id returned as the insert id by', how);
    }
  }
  await c.end();
  console.log('done');
}

main().catch((e) => {
  console.error('FAIL:', e.message, e.errno || '', e.sqlState || '');
  process.exit(1);
});
