// caps_mysql2.js HOST PORT USER PASSWORD DB
//
// What Node's mysql2 negotiates by default and dal-proxy must honour, run
// against a server or dal-proxy (tests/suites/proxy_caps_test.sh compares
// the two outputs): CLIENT_FOUND_ROWS (an UPDATE counts the rows it
// matched), a non-integral number bound by execute() as DOUBLE (a DOUBLE
// column, a number), MARIADB_CLIENT_EXTENDED_METADATA (a JSON column comes
// back parsed), and CLIENT_SESSION_TRACK (the variables a SET changed, the
// schema of USE, and an OK packet's info).  MYSQL2_DIR names the
// directory whose node_modules holds mysql2.
'use strict';
const path = require('path');
const mysql = require(path.join(process.env.MYSQL2_DIR || '.', 'node_modules', 'mysql2/promise'));

const [host, port, user, password, database] = process.argv.slice(2, 7);

const ok = (title, r) =>
  console.log(title, r.affectedRows, r.changedRows, JSON.stringify(r.info));
const track = (title, r) =>
  console.log(title, JSON.stringify(r.stateChanges === undefined ? null : r.stateChanges));

async function main() {
  const c = await mysql.createConnection({ host, port: Number(port), user, password, database });
  await c.query('DROP TABLE IF EXISTS caps');
  await c.query('CREATE TABLE caps (k INT NOT NULL PRIMARY KEY, v INT, j JSON, d DOUBLE)');
  await c.query('INSERT INTO caps VALUES (1, 10, \'{"a": [1, 2]}\', 0.5), (2, 20, NULL, 1), ' +
                '(3, 30, \'[3]\', 2), (4, 40, \'"x"\', 3)');

  // CLIENT_FOUND_ROWS: rows matched, also those left as they were
  ok('same values', (await c.query('UPDATE caps SET v = v'))[0]);
  ok('one same', (await c.query('UPDATE caps SET v = 10 WHERE k = 1'))[0]);
  ok('two of four', (await c.query('UPDATE caps SET v = 20 WHERE k IN (1, 2)'))[0]);
  ok('execute same', (await c.execute('UPDATE caps SET v = ? WHERE k = ?', [20, 2]))[0]);
  ok('none', (await c.query('UPDATE caps SET v = 1 WHERE k = 99'))[0]);

  // a non-integral DOUBLE parameter stays DOUBLE
  for (const v of [1.25, -0.1, 1e300]) {
    const [rows, fields] = await c.execute('SELECT ? AS d', [v]);
    console.log('double', v, fields[0].columnType, typeof rows[0].d, rows[0].d);
  }
  const [drows] = await c.execute('SELECT k FROM caps WHERE d = ? ORDER BY k', [0.5]);
  console.log('double where', JSON.stringify(drows));

  // JSON columns: marked "json" in the extended metadata, parsed by mysql2
  for (const how of ['query', 'execute']) {
    const [rows, fields] = await c[how]('SELECT k, j FROM caps ORDER BY k');
    console.log('json', how, fields[1].columnType, JSON.stringify(fields[1].extendedFormat),
                JSON.stringify(rows.map((r) => r.j)));
  }
  // the data type names of GEOMETRY subtypes, UUID and INET6
  await c.query('DROP TABLE IF EXISTS caps_types');
  await c.query('CREATE TABLE caps_types (k INT PRIMARY KEY, p POINT, u UUID, i6 INET6)');
  await c.query("INSERT INTO caps_types VALUES (1, POINT(1, 2), " +
                "'123e4567-e89b-12d3-a456-426655440000', '::1')");
  for (const how of ['query', 'execute']) {
    const [rows, fields] = await c[how]('SELECT k, p, u, i6 FROM caps_types');
    console.log('types', how, JSON.stringify(fields.map((f) =>
      [f.name, f.columnType, f.extendedTypeName || '', f.extendedFormat || ''])),
                JSON.stringify([rows[0].u, rows[0].i6]));
  }

  // CLIENT_SESSION_TRACK: the state a statement changed (keys sorted: a
  // server lists them in its hash's order), and mysql2 following it
  const changes = (r) => {
    if (r.stateChanges === undefined) return 'none';
    const v = r.stateChanges.systemVariables;
    return JSON.stringify([Object.keys(v).sort().map((k) => [k, v[k]]), r.stateChanges.schema]);
  };
  for (const sql of ['SET NAMES koi8r', "SELECT HEX('ж') AS h", 'SET NAMES utf8mb4',
                     "SET character_set_client = 'KOI8R'", "SELECT HEX('ж') AS h",
                     'SET character_set_client = utf8mb4, character_set_results = NULL',
                     "SET time_zone = '+1:00'", 'SET autocommit = 0', 'SET autocommit = ON',
                     "SET sql_mode = 'ANSI_QUOTES'", 'SET @u = 1', `USE ${database}`,
                     'SELECT 1 AS one', 'UPDATE caps SET v = v + 1 WHERE k = 1']) {
    const [r] = await c.query(sql);
    if (Array.isArray(r)) console.log('track', sql, JSON.stringify(r));
    else console.log('track', sql, changes(r), JSON.stringify(r.info));
  }
  await c.end();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
