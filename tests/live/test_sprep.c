/*
 * test_sprep.c -- server-side prepared statements on the backend
 * connections ([dal] server_prepare), against real MariaDB servers.
 *
 * Every check runs a statement through two dal_t opened on the same
 * servers, one with server_prepare = auto and one with off, and compares
 * what the caller sees: values and NULLs of every column type, column
 * descriptions, affected rows, errors.  The auto one reports to a
 * Prometheus monitor, so the tests also see that statements did run
 * prepared (or fell back to text, counted) and not merely gave the same
 * answer as text because they ran as text.
 *
 * tests/suites/integration.sh starts the cluster (product_0 .. product_3 on four
 * servers, `plain` on server 0) and exports DAL_TEST_PORTS.
 */
#include <check.h>
#include <math.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "testutil.h"

#define NODES 4

static int ports[NODES];
static char *dir;
static unsigned mport;       /* the auto dal_t's metrics */
static dal_t *on, *off;      /* server_prepare = auto, off */

static MYSQL *direct(void)
{
    MYSQL *m = mysql_init(NULL);

    ck_assert_ptr_nonnull(m);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    ck_assert_msg(mysql_real_connect(m, "127.0.0.1", "dal", "dalpass", "plain",
                                     (unsigned)ports[0], NULL, 0) != NULL,
                  "direct connect: %s", mysql_error(m));
    return m;
}

static void direct_exec(const char *sql)
{
    MYSQL *m = direct();

    ck_assert_msg(mysql_query(m, sql) == 0, "%s: %s", sql, mysql_error(m));
    mysql_close(m);
}

/* The INI of both dal_t: mode, cache size, and for auto the monitor. */
static char *make_ini(const char *name, const char *mode, int cache, unsigned metrics)
{
    char text[8192];
    size_t len = 0;

    if (metrics != 0)
        len = (size_t)snprintf(text, sizeof text,
                               "[monitor prom]\nplugin = prometheus\naddress = 127.0.0.1:%u\n",
                               metrics);
    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[datasource plain]\n"
             "master = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
             "[dal]\n"
             "default_datasource = plain\n"
             "server_prepare = %s\n"
             "server_prepare_cache = %d\n"
             "[table sp_shard]\n"
             "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 4\n"
             "shard_key = k\nstrategy = mod\n",
             ports[0], mode, cache);
    return tu_write(dir, name, text);
}

/* Ends the program when dal_open fails: also called from main, outside a
 * test. */
static dal_t *open_dal(const char *name, const char *mode, int cache, unsigned metrics)
{
    char *path = make_ini(name, mode, cache, metrics);
    dal_t *d = tu_open(path);

    free(path);
    return d;
}

/* What a test with an auto dal_t of its own puts back when it ends. */
typedef struct own {
    dal_t *on;
    unsigned mport;
} own_t;

/* Make `on` a new auto dal_t (INI file name, a cache of cache handles)
 * reporting to metrics of its own, for one test: new connections, none
 * holding a handle yet.  close_own closes it and puts the shared one back. */
static own_t open_own(const char *name, int cache)
{
    own_t saved = {on, mport};

    mport = tu_free_port();
    on = open_dal(name, "auto", cache, mport);
    return saved;
}

static void close_own(own_t saved)
{
    dal_close(on);
    on = saved.on;
    mport = saved.mport;
}

/* The auto dal_t's figure `name` summed over the series of plain's server
 * (0 when absent). */
static double metric(const char *name)
{
    char series[256], *body = NULL;
    double v;

    ck_assert_msg(tu_http(mport, "GET /metrics HTTP/1.0\r\n\r\n", &body) == 200, "no metrics");
    snprintf(series, sizeof series, "%s{datasource=\"plain\",server=\"127.0.0.1:%d\"}", name,
             ports[0]);
    v = tu_metric(body, series);
    free(body);
    return v < 0 ? 0 : v;
}

/* ------------------------------------------------------------ comparing */

static void same_columns(dal_result_t *a, dal_result_t *b, const char *sql)
{
    size_t i, n = dal_result_column_count(a);

    ck_assert_msg(n == dal_result_column_count(b), "%s: %zu columns prepared, %zu as text", sql,
                  n, dal_result_column_count(b));
    for (i = 0; i < n; i++) {
        dal_column_info_t x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        ck_assert_int_eq(dal_result_column_info(a, i, &x), 0);
        ck_assert_int_eq(dal_result_column_info(b, i, &y), 0);
        ck_assert_msg(strcmp(x.name, y.name) == 0 && x.type == y.type && x.flags == y.flags &&
                          x.decimals == y.decimals && x.charset == y.charset,
                      "%s: column %zu (%s) prepared type %d flags %u decimals %u charset %u, "
                      "text %s type %d flags %u decimals %u charset %u",
                      sql, i, x.name, (int)x.type, x.flags, x.decimals, x.charset, y.name,
                      (int)y.type, y.flags, y.decimals, y.charset);
        /* every text of the description, also from a handle run before
         * (whose own copy of it is gone: result_binary.h) */
        ck_assert_msg(strcmp(x.org_name, y.org_name) == 0 && strcmp(x.table, y.table) == 0 &&
                          strcmp(x.org_table, y.org_table) == 0 &&
                          strcmp(x.schema, y.schema) == 0,
                      "%s: column %zu (%s) prepared %s.%s.%s (%s), text %s.%s.%s (%s)", sql, i,
                      x.name, x.schema, x.table, x.org_name, x.org_table, y.schema, y.table,
                      y.org_name, y.org_table);
    }
}

/* Read a and b to their ends: the same rows, byte for byte, NULL for NULL. */
static size_t same_rows(dal_result_t *a, dal_result_t *b, const char *sql)
{
    size_t n = dal_result_column_count(a), rows = 0, i;
    dal_error_t err;
    int ra, rb;

    for (;;) {
        ra = dal_result_next(a, &err);
        rb = dal_result_next(b, &err);
        ck_assert_msg(ra == rb, "%s: row %zu: prepared gave %d, text %d", sql, rows, ra, rb);
        if (ra <= 0)
            return rows;
        for (i = 0; i < n; i++) {
            size_t la, lb;
            const char *ta = dal_result_text(a, i, &la), *tb = dal_result_text(b, i, &lb);
            ck_assert_msg((ta == NULL) == (tb == NULL) &&
                              (ta == NULL || (la == lb && memcmp(ta, tb, la) == 0)),
                          "%s: row %zu column %zu: prepared [%.*s], text [%.*s]", sql, rows, i,
                          ta ? (int)la : 4, ta ? ta : "NULL", tb ? (int)lb : 4,
                          tb ? tb : "NULL");
        }
        rows++;
    }
}

/* sql with params through both dal_t: the same outcome.  Returns the rows. */
static size_t both(const char *sql, const dal_value_t *params, size_t n)
{
    dal_result_t *a = NULL, *b = NULL;
    dal_error_t ea, eb;
    int ra = dal_query(on, NULL, sql, params, n, &a, &ea);
    int rb = dal_query(off, NULL, sql, params, n, &b, &eb);
    size_t rows;

    ck_assert_msg(ra == rb, "%s: prepared %d (%s), text %d (%s)", sql, ra,
                  ra ? ea.message : "", rb, rb ? eb.message : "");
    if (ra != 0) {
        ck_assert_msg(ea.mysql_errno == eb.mysql_errno, "%s: prepared [%s], text [%s]", sql,
                      ea.message, eb.message);
        return 0;
    }
    same_columns(a, b, sql);
    ck_assert_uint_eq(dal_result_affected_rows(a), dal_result_affected_rows(b));
    ck_assert_uint_eq(dal_result_insert_id(a), dal_result_insert_id(b));
    rows = same_rows(a, b, sql);
    ck_assert_msg(dal_result_warning_count(a) == dal_result_warning_count(b),
                  "%s: %u warnings prepared, %u as text", sql, dal_result_warning_count(a),
                  dal_result_warning_count(b));
    dal_result_free(a);
    dal_result_free(b);
    return rows;
}

/* The rows of sql through `on` and `off` when both succeed with the same
 * count, else -1; no check fails (the caller has something to undo
 * first). */
static long both_nocheck(const char *sql, const dal_value_t *params, size_t n)
{
    dal_result_t *r[2] = {NULL, NULL};
    dal_error_t err;
    long rows[2] = {0, 0};
    int i;

    for (i = 0; i < 2; i++) {
        if (dal_query(i == 0 ? on : off, NULL, sql, params, n, &r[i], &err) != 0)
            rows[i] = -1;
        while (r[i] != NULL && dal_result_next(r[i], &err) > 0)
            rows[i]++;
        dal_result_free(r[i]);
    }
    return rows[0] == rows[1] ? rows[0] : -1;
}

/* --------------------------------------------------------------- types */

#define TYPE_COLUMNS \
    "id INT NOT NULL PRIMARY KEY, c_tiny TINYINT, c_utiny TINYINT UNSIGNED, " \
    "c_small SMALLINT, c_usmall SMALLINT UNSIGNED ZEROFILL, c_medium MEDIUMINT, " \
    "c_int INT, c_uint INT UNSIGNED, c_big BIGINT, c_ubig BIGINT UNSIGNED, " \
    "c_dec DECIMAL(12,3), c_bigdec DECIMAL(65,30), c_float FLOAT, c_float72 FLOAT(7,2), " \
    "c_double DOUBLE, c_double103 DOUBLE(10,3), c_bit1 BIT(1), c_bit BIT(64), " \
    "c_date DATE, c_time TIME, c_time3 TIME(3), c_dt DATETIME, c_dt6 DATETIME(6), " \
    "c_ts TIMESTAMP(2) NULL DEFAULT NULL, c_year YEAR, c_char CHAR(10), " \
    "c_varchar VARCHAR(300), c_binary BINARY(4), c_varbinary VARBINARY(50), " \
    "c_tinytext TINYTEXT, c_text TEXT, c_longtext LONGTEXT, c_blob BLOB, " \
    "c_longblob LONGBLOB, c_enum ENUM('a','b','c'), c_set SET('x','y','z'), c_json JSON, " \
    "c_latin VARCHAR(20) CHARACTER SET latin1, c_geo POINT NULL, c_inet6 INET6, c_uuid UUID"

static const char *const type_rows[] = {
    "(1, -128, 255, -32768, 42, -8388608, -2147483648, 4294967295, -9223372036854775808, "
    "18446744073709551615, -123456789.123, 12345678901234567890.123456789012345678901234567890, "
    "1.1, 3.14159, 0.1, 2.5, b'1', b'1010101010101010101010101010101010101010101010101010101010101010', "
    "'2024-02-29', '-838:59:59', '12:34:56.789', '2024-01-02 03:04:05', "
    "'2024-01-02 03:04:05.000001', '2024-01-02 03:04:05.5', 2024, 'ab', "
    "REPEAT('long text ', 30), X'00FF1020', X'000102', 'tiny', 'text', REPEAT('x', 5000), "
    "X'00FFFE', REPEAT(X'AB', 3000), 'b', 'x,z', '{\"a\": [1, 2, {\"b\": null}]}', 'caf\xc3\xa9', "
    "ST_PointFromText('POINT(1 2)'), '::1', '123e4567-e89b-12d3-a456-426614174000')",
    "(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1e30, -1, 1e-5, -1e6, b'0', b'0', '1000-01-01', "
    "'00:00:00', '-00:00:01.5', '9999-12-31 23:59:59', '0000-00-00 00:00:00', NULL, 1901, '', "
    "'', X'', X'', '', '', '', X'', X'', 'a', '', 'null', '', NULL, '2001:db8::ff00:42:8329', "
    "'00000000-0000-0000-0000-000000000000')",
    "(3, 127, 1, 32767, 65535, 8388607, 2147483647, 1, 9223372036854775807, 1, 999999999.999, "
    "-0.000000000000000000000000000001, 123456789, -0.5, 3.141592653589793, 0.001, b'1', "
    "b'1', '2000-01-01', '838:59:59', '00:00:00.001', '2000-01-01 00:00:00', "
    "'2000-01-01 00:00:00.999999', '2037-01-01 00:00:00.99', 2155, 'z', 'y', X'FF', X'FF', "
    "'a', 'b', 'c', X'01', X'02', 'c', 'x,y,z', '[]', 'z', ST_PointFromText('POINT(-1.5 0)'), "
    "'::ffff:1.2.3.4', 'ffffffff-ffff-ffff-ffff-ffffffffffff')",
    "(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
};

static void make_types_table(void)
{
    char sql[4096];
    size_t i;

    direct_exec("DROP TABLE IF EXISTS sp_types");
    direct_exec("CREATE TABLE sp_types (" TYPE_COLUMNS ")");
    for (i = 0; i < sizeof type_rows / sizeof type_rows[0]; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO sp_types VALUES %s", type_rows[i]);
        direct_exec(sql);
    }
}

/* Every column type and NULL: the same text, lengths and descriptions. */
START_TEST(test_types_round_trip)
{
    dal_value_t p[1] = {dal_int(0)};
    double before = metric("dal_server_prepared_executions_total");

    make_types_table();
    ck_assert(tu_server_prepared(on, "SELECT * FROM sp_types WHERE id >= ? ORDER BY id", p, 1));
    ck_assert(!tu_server_prepared(off, "SELECT * FROM sp_types WHERE id >= ? ORDER BY id", p, 1));
    ck_assert_uint_eq(both("SELECT * FROM sp_types WHERE id >= ? ORDER BY id", p, 1), 4);
    /* the same again: the handle is reused */
    ck_assert_uint_eq(both("SELECT * FROM sp_types WHERE id >= ? ORDER BY id", p, 1), 4);
    /* expressions the server computes: doubles, decimals, temporal math */
    ck_assert_uint_eq(both("SELECT id, c_float * 1, c_double / 3, c_dec + 0.5, c_bigdec * 2, "
                           "c_int / 7, c_bit + 0, HEX(c_bit), c_time3 + INTERVAL 1 SECOND, "
                           "TIMEDIFF(c_dt6, '2000-01-01'), c_year + 0, c_ubig + 0, "
                           "CAST(c_float AS DOUBLE), SQRT(ABS(c_double)), 1e300 * c_tiny, "
                           "JSON_EXTRACT(c_json, '$[0]'), c_geo IS NULL "
                           "FROM sp_types WHERE id > ? ORDER BY id", p, 1), 4);
    /* an error in the middle of the rows (0 - 1 unsigned): the same error */
    ck_assert_uint_eq(both("SELECT c_ubig - 1 FROM sp_types WHERE id > ? ORDER BY id", p, 1), 0);
    ck_assert_uint_eq(both("SELECT COUNT(*), SUM(c_double), AVG(c_dec), MAX(c_dt6), MIN(c_time), "
                           "STD(c_int), GROUP_CONCAT(c_char ORDER BY id), BIT_OR(c_bit) "
                           "FROM sp_types WHERE id >= ?", p, 1), 1);
    ck_assert_msg(metric("dal_server_prepared_executions_total") >= before + 4,
                  "the statements did not run prepared");
}
END_TEST

/* Parameters of every dal type, in the select list and in conditions. */
START_TEST(test_parameter_types)
{
    static const char blob[] = {0, 1, 2, '\'', '\\', (char)0xff};
    dal_value_t p[8];
    double fb = metric("dal_server_prepare_fallbacks_total");

    p[0] = dal_int(-42);
    p[1] = dal_uint(18446744073709551615ull);
    p[2] = dal_double(0.1);
    p[3] = dal_double(1e300);
    p[4] = dal_str("it's \\ a 'string'");
    p[5] = dal_blob(blob, sizeof blob);
    p[6] = dal_null();
    p[7] = dal_int(1);
    ck_assert_uint_eq(both("SELECT ? + 0, ? + 0, ? + 0, ? + 0, CONCAT(?), HEX(?), ? IS NULL, "
                           "id FROM sp_types WHERE id = ?", p, 8), 1);
    /* a double is an approximate literal as text: the comparison with a
     * DECIMAL column must come out the same */
    p[0] = dal_double(-123456789.123);
    ck_assert_uint_eq(both("SELECT id FROM sp_types WHERE c_dec = ?", p, 1), 1);
    p[0] = dal_str("-123456789.123");
    ck_assert_uint_eq(both("SELECT id FROM sp_types WHERE c_dec = ?", p, 1), 1);
    /* LIMIT takes an integer, also when the parameter is text */
    p[0] = dal_int(0);
    p[1] = dal_str("2");
    ck_assert_uint_eq(both("SELECT id FROM sp_types WHERE id > ? ORDER BY id LIMIT ?", p, 2), 2);
    /* a value text refuses (NaN), and a LIMIT that is no number: the same
     * errors */
    p[1] = dal_str("two");
    both("SELECT id FROM sp_types WHERE id > ? ORDER BY id LIMIT ?", p, 2);
    p[1] = dal_int(-1);
    both("SELECT id FROM sp_types WHERE id > ? ORDER BY id LIMIT ?", p, 2);
    p[0] = dal_double(NAN);
    both("SELECT id FROM sp_types WHERE c_double = ?", p, 1);
    ck_assert_double_eq(metric("dal_server_prepare_fallbacks_total"), fb + 3);
}
END_TEST

/* ------------------------------------------------------------ writes */

#define SP_W "CREATE TABLE sp_w (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20) UNIQUE, " \
             "n INT NOT NULL DEFAULT 0)"

/* A write through both modes, each from the same table contents: the
 * same affected rows, insert id, info line, warnings and errors. */
static void both_write(const char *sql, const dal_value_t *p, size_t n)
{
    dal_result_t *r[2] = {NULL, NULL};
    dal_error_t e[2];
    int rc[2], i;
    const char *info[2];

    for (i = 0; i < 2; i++) {
        direct_exec("DROP TABLE IF EXISTS sp_w");
        direct_exec(SP_W);
        direct_exec("INSERT INTO sp_w (v) VALUES ('a'), ('b'), ('c')");
        rc[i] = dal_query(i == 0 ? on : off, NULL, sql, p, n, &r[i], &e[i]);
        info[i] = rc[i] == 0 ? dal_result_info(r[i]) : NULL;
    }
    ck_assert_msg(rc[0] == rc[1], "%s: prepared %d (%s), text %d (%s)", sql, rc[0],
                  rc[0] ? e[0].message : "", rc[1], rc[1] ? e[1].message : "");
    if (rc[0] != 0) {
        ck_assert_uint_eq(e[0].mysql_errno, e[1].mysql_errno);
        return;
    }
    ck_assert_uint_eq(dal_result_affected_rows(r[0]), dal_result_affected_rows(r[1]));
    ck_assert_uint_eq(dal_result_insert_id(r[0]), dal_result_insert_id(r[1]));
    ck_assert_uint_eq(dal_result_warning_count(r[0]), dal_result_warning_count(r[1]));
    ck_assert_msg((info[0] == NULL) == (info[1] == NULL) &&
                      (info[0] == NULL || strcmp(info[0], info[1]) == 0),
                  "%s: info [%s] and [%s]", sql, info[0] ? info[0] : "", info[1] ? info[1] : "");
    dal_result_free(r[0]);
    dal_result_free(r[1]);
}

START_TEST(test_writes)
{
    dal_value_t p[3];

    p[0] = dal_str("x");
    p[1] = dal_str("y");
    p[2] = dal_str("z");
    /* one route: a template of three rows */
    ck_assert(tu_server_prepared(on, "INSERT INTO sp_w (v) VALUES (?), (?), (?)", p, 3));
    both_write("INSERT INTO sp_w (v) VALUES (?), (?), (?)", p, 3);
    /* a duplicate key: the same error; IGNORE: the same warning */
    p[0] = dal_str("a");
    both_write("INSERT INTO sp_w (v) VALUES (?)", p, 1);
    both_write("INSERT IGNORE INTO sp_w (v) VALUES (?), (?)", p, 2);
    p[1] = dal_int(5);
    both_write("INSERT INTO sp_w (v) VALUES (?) ON DUPLICATE KEY UPDATE n = n + ?", p, 2);
    p[0] = dal_int(1);
    p[1] = dal_str("a");
    both_write("UPDATE sp_w SET n = n + ? WHERE v > ?", p, 2);
    p[0] = dal_str("b");
    both_write("DELETE FROM sp_w WHERE v = ?", p, 1);
    both_write("REPLACE INTO sp_w (id, v) VALUES (1, ?)", p, 1);
    /* a truncated value: a warning, or an error in strict mode */
    p[0] = dal_str("a value far longer than twenty characters");
    both_write("UPDATE sp_w SET v = ? WHERE id = 1", p, 1);
    both_write("UPDATE IGNORE sp_w SET v = ? WHERE id = 1", p, 1);
}
END_TEST

/* Multi-row INSERTs over a sharded table: rows split over several nodes
 * run as text (several routes), rows of one node as a template. */
START_TEST(test_sharded_insert)
{
    dal_value_t p[8];
    dal_error_t err;
    uint64_t n = 0;
    int i;

    tu_must(dal_exec(on, NULL, "DROP TABLE IF EXISTS sp_shard", NULL, 0, NULL, &err), &err, "drop");
    tu_must(dal_exec(on, NULL, "CREATE TABLE sp_shard (k INT PRIMARY KEY, v INT)", NULL, 0, NULL,
                  &err), &err, "create");
    for (i = 0; i < 8; i += 2) {
        p[i] = dal_int(i);      /* k: every node */
        p[i + 1] = dal_int(i * 10);
    }
    ck_assert(!tu_server_prepared(on, "INSERT INTO sp_shard (k, v) VALUES (?, ?), (?, ?), (?, ?), "
                             "(?, ?)", p, 8));
    tu_must(dal_exec(on, NULL, "INSERT INTO sp_shard (k, v) VALUES (?, ?), (?, ?), (?, ?), (?, ?)",
                  p, 8, &n, &err), &err, "scatter insert");
    ck_assert_uint_eq(n, 4);
    for (i = 0; i < 8; i += 2)
        p[i] = dal_int(100 + i * 4); /* all on node 0 */
    ck_assert(tu_server_prepared(on, "INSERT INTO sp_shard (k, v) VALUES (?, ?), (?, ?), (?, ?), "
                            "(?, ?)", p, 8));
    tu_must(dal_exec(on, NULL, "INSERT INTO sp_shard (k, v) VALUES (?, ?), (?, ?), (?, ?), (?, ?)",
                  p, 8, &n, &err), &err, "one-node insert");
    ck_assert_uint_eq(n, 4);
    /* a scatter read merged over the nodes, and a point read */
    ck_assert_uint_eq(both("SELECT k, v FROM sp_shard WHERE v >= ? ORDER BY k", p + 1, 1), 8);
    p[0] = dal_int(108);
    ck_assert_uint_eq(both("SELECT k, v FROM sp_shard WHERE k = ?", p, 1), 1);
    /* run again on the handle: the same logical table names, and the
     * same for another shard's physical table */
    ck_assert_uint_eq(both("SELECT k, v FROM sp_shard WHERE k = ?", p, 1), 1);
    p[0] = dal_int(2);
    ck_assert_uint_eq(both("SELECT k, v FROM sp_shard WHERE k = ?", p, 1), 1);
    ck_assert_uint_eq(both("SELECT k, v FROM sp_shard WHERE k = ?", p, 1), 1);
}
END_TEST

/* ---------------------------------------------------------- staleness */

/* DDL between executions: the prepared statement shows the new columns
 * exactly as text does. */
START_TEST(test_alter_between_runs)
{
    dal_value_t p[1] = {dal_int(1)};
    int round;

    direct_exec("DROP TABLE IF EXISTS sp_alter");
    direct_exec("CREATE TABLE sp_alter (id INT PRIMARY KEY, a INT)");
    direct_exec("INSERT INTO sp_alter VALUES (1, 10), (2, 20)");
    for (round = 0; round < 2; round++)
        ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 2);
    direct_exec("ALTER TABLE sp_alter ADD COLUMN b VARCHAR(5) DEFAULT 'new'");
    ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 2);
    direct_exec("ALTER TABLE sp_alter MODIFY a DECIMAL(10,2)");
    ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 2);
    /* a rename alone: the server sends the new names once; every later
     * execution must show them too */
    direct_exec("ALTER TABLE sp_alter CHANGE a z DECIMAL(10,2)");
    for (round = 0; round < 3; round++)
        ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 2);
    direct_exec("ALTER TABLE sp_alter CHANGE z a DECIMAL(10,2)");
    for (round = 0; round < 3; round++)
        ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 2);
    direct_exec("ALTER TABLE sp_alter DROP COLUMN a");
    ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 2);
    /* a column the statement names is gone: the same error */
    both("SELECT a FROM sp_alter WHERE id >= ?", p, 1);
    direct_exec("DROP TABLE sp_alter");
    both("SELECT * FROM sp_alter WHERE id >= ?", p, 1);
    direct_exec("CREATE TABLE sp_alter (id INT PRIMARY KEY, c CHAR(3))");
    direct_exec("INSERT INTO sp_alter VALUES (1, 'x')");
    ck_assert_uint_eq(both("SELECT * FROM sp_alter WHERE id >= ? ORDER BY id", p, 1), 1);
}
END_TEST

/* The backend connection killed from another connection: the next read
 * runs on a fresh connection, as in text mode. */
START_TEST(test_killed_connection)
{
    dal_value_t p[1] = {dal_int(1)};
    dal_result_t *r = NULL;
    dal_error_t err;
    char sql[64];
    int64_t id;

    direct_exec("CREATE TABLE IF NOT EXISTS sp_kill (id INT PRIMARY KEY)");
    direct_exec("INSERT IGNORE INTO sp_kill VALUES (1)");
    tu_must(dal_query(on, NULL, "SELECT CONNECTION_ID() FROM sp_kill WHERE id = ?", p, 1, &r, &err),
         &err, "connection id");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    id = dal_result_int(r, 0);
    dal_result_free(r);
    snprintf(sql, sizeof sql, "KILL %lld", (long long)id);
    direct_exec(sql);
    tu_must(dal_query(on, NULL, "SELECT CONNECTION_ID() FROM sp_kill WHERE id = ?", p, 1, &r, &err),
         &err, "after kill");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_ne(dal_result_int(r, 0), id);
    dal_result_free(r);
    ck_assert_uint_eq(both("SELECT * FROM sp_kill WHERE id = ?", p, 1), 1);
}
END_TEST

/* The server's max_prepared_stmt_count reached: every statement still
 * runs (as text), and the fallbacks are counted. */
START_TEST(test_statement_limit)
{
    dal_value_t p[1] = {dal_int(1)};
    MYSQL *m = direct();
    MYSQL_ROW row;
    MYSQL_RES *res;
    char old[32], sql[96];
    double fallbacks, prepares;
    own_t saved;
    long rows[2];

    ck_assert(mysql_query(m, "SELECT @@global.max_prepared_stmt_count") == 0);
    res = mysql_store_result(m);
    row = mysql_fetch_row(res);
    snprintf(old, sizeof old, "%s", row[0]);
    mysql_free_result(res);
    ck_assert(mysql_query(m, "SET GLOBAL max_prepared_stmt_count = 0") == 0);
    saved = open_own("limit.ini", 64);
    /* the limit is put back before anything is checked */
    rows[0] = both_nocheck("SELECT * FROM sp_types WHERE id >= ? ORDER BY id", p, 1);
    rows[1] = both_nocheck("SELECT id FROM sp_types WHERE id = ?", p, 1);
    fallbacks = metric("dal_server_prepare_fallbacks_total");
    prepares = metric("dal_server_prepares_total");
    snprintf(sql, sizeof sql, "SET GLOBAL max_prepared_stmt_count = %s", old);
    ck_assert(mysql_query(m, sql) == 0);
    mysql_close(m);
    close_own(saved);
    ck_assert_int_eq(rows[0], 4);
    ck_assert_int_eq(rows[1], 1);
    ck_assert_msg(fallbacks >= 2, "fallbacks not counted: %g", fallbacks);
    ck_assert_double_eq(prepares, 0);
}
END_TEST

/* A statement the server will not prepare (a ? where its grammar wants a
 * number) runs as text, is counted once and remembered. */
START_TEST(test_refused_statement)
{
    dal_value_t p[2] = {dal_int(0), dal_int(3)};
    const char *sql = "SELECT id FROM sp_types WHERE id > ? AND CAST(c_char AS CHAR(?)) <> 'q' "
                      "ORDER BY id";
    double fb = metric("dal_server_prepare_fallbacks_total");

    ck_assert(tu_server_prepared(on, sql, p, 2));
    ck_assert_uint_eq(both(sql, p, 2), 3);
    ck_assert_double_eq(metric("dal_server_prepare_fallbacks_total"), fb + 1);
    ck_assert(!tu_server_prepared(on, sql, p, 2));
    ck_assert_uint_eq(both(sql, p, 2), 3);
    ck_assert_double_eq(metric("dal_server_prepare_fallbacks_total"), fb + 1);
}
END_TEST

/* A small cache: the least recently used handle is closed, and the
 * statements stay right. */
START_TEST(test_eviction)
{
    static const char *const stmts[] = {
        "SELECT id FROM sp_types WHERE id = ?", "SELECT c_int FROM sp_types WHERE id = ?",
        "SELECT c_char FROM sp_types WHERE id = ?", "SELECT c_dec FROM sp_types WHERE id = ?"};
    dal_value_t p[1] = {dal_int(1)};
    own_t saved = open_own("small.ini", 2);
    int i;

    for (i = 0; i < 12; i++)
        ck_assert_uint_eq(both(stmts[i % 4], p, 1), 1);
    ck_assert_msg(metric("dal_server_prepare_evictions_total") >= 8, "evictions: %g",
                  metric("dal_server_prepare_evictions_total"));
    close_own(saved);
}
END_TEST

/* More templates than the cache holds, taken in turn: after a few handles
 * closed without running again, new templates run as text for a while
 * instead of being prepared and closed each time (counted as fallbacks),
 * and the answers stay the same. */
START_TEST(test_churn)
{
    static const char *const stmts[] = {
        "SELECT id FROM sp_types WHERE id = ?", "SELECT c_int FROM sp_types WHERE id = ?",
        "SELECT c_char FROM sp_types WHERE id = ?", "SELECT c_dec FROM sp_types WHERE id = ?"};
    dal_value_t p[1] = {dal_int(1)};
    own_t saved = open_own("churn.ini", 2);
    int i;

    for (i = 0; i < 80; i++)
        ck_assert_uint_eq(both(stmts[i % 4], p, 1), 1);
    ck_assert_msg(metric("dal_server_prepares_total") < 40, "prepares: %g of 80 runs",
                  metric("dal_server_prepares_total"));
    ck_assert_msg(metric("dal_server_prepare_fallbacks_total") > 20, "fallbacks: %g",
                  metric("dal_server_prepare_fallbacks_total"));
    close_own(saved);
}
END_TEST

/* A reload turns server-side preparing off and on again. */
START_TEST(test_reload)
{
    dal_value_t p[1] = {dal_int(1)};
    const char *sql = "SELECT id, c_varchar FROM sp_types WHERE id >= ? ORDER BY id";
    char *path;
    dal_error_t err;

    ck_assert_uint_eq(both(sql, p, 1), 4);
    path = make_ini("auto.ini", "off", 64, mport);
    tu_must(dal_reload(on, &err), &err, "reload to off");
    ck_assert(!tu_server_prepared(on, sql, p, 1));
    ck_assert_uint_eq(both(sql, p, 1), 4);
    free(path);
    path = make_ini("auto.ini", "auto", 1, mport);
    tu_must(dal_reload(on, &err), &err, "reload to auto");
    ck_assert(tu_server_prepared(on, sql, p, 1));
    ck_assert_uint_eq(both(sql, p, 1), 4);
    ck_assert_uint_eq(both("SELECT c_int FROM sp_types WHERE id >= ? ORDER BY id", p, 1), 4);
    free(path);
}
END_TEST

/* A SET on a pooled connection: its handles go (the SET may change how
 * SQL parses, and the pool then resets the connection, which drops the
 * server's statements), and the next run prepares again, without an
 * error. */
START_TEST(test_reset_drops_handles)
{
    dal_value_t p[1] = {dal_int(2)};
    const char *sql = "SELECT id, c_text FROM sp_types WHERE id = ?";
    double prepares;
    dal_error_t err;
    int i;

    ck_assert_uint_eq(both(sql, p, 1), 1);
    for (i = 0; i < 3; i++) {
        prepares = metric("dal_server_prepares_total");
        /* one thread: the same pooled connection each time */
        tu_must(dal_exec(on, NULL, "SET @sp_x = 1", NULL, 0, NULL, &err), &err, "set");
        ck_assert_uint_eq(both(sql, p, 1), 1);
        ck_assert_msg(metric("dal_server_prepares_total") == prepares + 1,
                      "not prepared again after the reset");
    }
    /* a session's variables are undone by COM_RESET_CONNECTION when its
     * connection goes back to the pool: the handle the session prepared
     * there must not be used afterwards */
    for (i = 0; i < 3; i++) {
        dal_session_t *s = NULL;
        dal_result_t *r = NULL;
        tu_must(dal_session_open(on, &s, &err), &err, "session");
        tu_must(dal_session_set_var(s, "time_zone", "'+01:00'", &err), &err, "time_zone");
        tu_must(dal_session_query(s, NULL, sql, p, 1, &r, &err), &err, "session select");
        dal_result_free(r);
        dal_session_close(s);
        prepares = metric("dal_server_prepares_total");
        ck_assert_uint_eq(both(sql, p, 1), 1);
        ck_assert_msg(metric("dal_server_prepares_total") == prepares + 1,
                      "not prepared again after the session's reset");
    }
}
END_TEST

/* Sessions: a transaction's statements run prepared on its connection,
 * and a session variable that changes parsing drops the handles. */
START_TEST(test_session)
{
    dal_value_t p[2];
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    uint64_t n;

    direct_exec("DROP TABLE IF EXISTS sp_sess");
    direct_exec("CREATE TABLE sp_sess (id INT PRIMARY KEY, v VARCHAR(10))");
    tu_must(dal_session_open(on, &s, &err), &err, "session");
    tu_must(dal_begin(s, &err), &err, "begin");
    p[0] = dal_int(1);
    p[1] = dal_str("one");
    tu_must(dal_session_exec(s, NULL, "INSERT INTO sp_sess VALUES (?, ?)", p, 2, &n, &err), &err,
         "insert");
    tu_must(dal_session_query(s, NULL, "SELECT v FROM sp_sess WHERE id = ?", p, 1, &r, &err), &err,
         "read own write");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_str_eq(dal_result_text(r, 0, NULL), "one");
    dal_result_free(r);
    tu_must(dal_rollback(s, &err), &err, "rollback");
    tu_must(dal_session_query(s, NULL, "SELECT v FROM sp_sess WHERE id = ?", p, 1, &r, &err), &err,
         "after rollback");
    ck_assert_int_eq(dal_result_next(r, &err), 0);
    dal_result_free(r);
    /* || is OR by default, CONCAT under PIPES_AS_CONCAT: the handle
     * prepared before the mode changed must not be used after */
    p[0] = dal_int(2);
    p[1] = dal_str("two");
    tu_must(dal_session_exec(s, NULL, "INSERT INTO sp_sess VALUES (?, ?)", p, 2, &n, &err), &err,
         "insert 2");
    p[0] = dal_str("b");
    tu_must(dal_session_query(s, NULL, "SELECT COUNT(*) FROM sp_sess WHERE CONCAT('', 'a' || ?) "
                           "= 'ab'", p, 1, &r, &err), &err, "or");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_int(r, 0), 0);
    dal_result_free(r);
    tu_must(dal_session_set_var(s, "sql_mode", "'PIPES_AS_CONCAT'", &err), &err, "sql_mode");
    tu_must(dal_session_query(s, NULL, "SELECT COUNT(*) FROM sp_sess WHERE CONCAT('', 'a' || ?) "
                           "= 'ab'", p, 1, &r, &err), &err, "pipes");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_int(r, 0), 1);
    dal_result_free(r);
    dal_session_close(s);
}
END_TEST

/* A transaction's connection goes back to the pool with its handles:
 * the same transaction again prepares nothing. */
START_TEST(test_transactions_keep_handles)
{
    dal_value_t p[1] = {dal_int(1)};
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    double before = 0;
    own_t saved;
    int round;

    /* a dal_t of its own: test_reload leaves `on` with a cache of 1 */
    saved = open_own("txn.ini", 64);
    direct_exec("DROP TABLE IF EXISTS sp_txn");
    direct_exec("CREATE TABLE sp_txn (id INT PRIMARY KEY, v INT)");
    direct_exec("INSERT INTO sp_txn VALUES (1, 10)");
    tu_must(dal_session_open(on, &s, &err), &err, "session");
    for (round = 0; round < 5; round++) {
        if (round == 1)
            before = metric("dal_server_prepares_total");
        tu_must(dal_begin(s, &err), &err, "begin");
        tu_must(dal_session_query(s, NULL, "SELECT v FROM sp_txn WHERE id = ?", p, 1, &r, &err),
             &err, "select");
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        dal_result_free(r);
        tu_must(dal_session_exec(s, NULL, "UPDATE sp_txn SET v = v + 1 WHERE id = ?", p, 1, NULL,
                              &err), &err, "update");
        tu_must(dal_commit(s, &err), &err, "commit");
    }
    ck_assert_msg(metric("dal_server_prepares_total") == before,
                  "prepares went from %g to %g over four transactions", before,
                  metric("dal_server_prepares_total"));
    dal_session_close(s);
    direct_exec("DROP TABLE sp_txn");
    close_own(saved);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sprep");
    TCase *tc = tcase_create("mariadb");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_types_round_trip);
    tcase_add_test(tc, test_parameter_types);
    tcase_add_test(tc, test_writes);
    tcase_add_test(tc, test_sharded_insert);
    tcase_add_test(tc, test_alter_between_runs);
    tcase_add_test(tc, test_killed_connection);
    tcase_add_test(tc, test_statement_limit);
    tcase_add_test(tc, test_refused_statement);
    tcase_add_test(tc, test_eviction);
    tcase_add_test(tc, test_churn);
    tcase_add_test(tc, test_reload);
    tcase_add_test(tc, test_reset_drops_handles);
    tcase_add_test(tc, test_session);
    tcase_add_test(tc, test_transactions_keep_handles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status;

    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    mport = tu_free_port();
    on = open_dal("auto.ini", "auto", 64, mport);
    off = open_dal("off.ini", "off", 64, 0);
    status = tu_run(suite(), CK_NOFORK); /* the tests share the two dal_t and the tables */
    dal_close(on);
    dal_close(off);
    tu_rmtree(dir);
    return status;
}
