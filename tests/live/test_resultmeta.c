/*
 * test_resultmeta.c -- what a wire-protocol front end needs from a result,
 * against real MariaDB servers: column metadata (compared with the
 * MYSQL_FIELD the server itself sends for the same statement), warnings,
 * insert ids, status flags and session variables.
 *
 * tests/suites/integration.sh starts the cluster (product_0 .. product_3 on four
 * servers, `plain` on server 0) and exports DAL_TEST_PORTS.  A sharded
 * table meta_all (one physical table per node) has a twin of the same name
 * in plain, unsharded: what one server holding all the data reports.
 */
#include <check.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "testutil.h"

#define NODES 4

static int ports[NODES];
static char *dir;
static dal_t *dal;

#define META_COLUMNS \
    "id BIGINT NOT NULL PRIMARY KEY, wm_poi_id INT NOT NULL, " \
    "c_tiny TINYINT, c_utiny TINYINT UNSIGNED, c_small SMALLINT, c_usmall SMALLINT UNSIGNED, " \
    "c_medium MEDIUMINT, c_umedium MEDIUMINT UNSIGNED, c_int INT, c_uint INT UNSIGNED ZEROFILL, " \
    "c_big BIGINT, c_ubig BIGINT UNSIGNED, c_dec DECIMAL(12,3), c_udec DECIMAL(8,0) UNSIGNED, " \
    "c_float FLOAT, c_double DOUBLE, c_bit BIT(5), " \
    "c_date DATE, c_time TIME(3), c_dt DATETIME(6), c_ts TIMESTAMP NULL DEFAULT NULL, " \
    "c_year YEAR, c_char CHAR(10), c_varchar VARCHAR(100), c_binary BINARY(8), " \
    "c_varbinary VARBINARY(50), c_tinytext TINYTEXT, c_text TEXT, c_mediumtext MEDIUMTEXT, " \
    "c_longtext LONGTEXT, c_tinyblob TINYBLOB, c_blob BLOB, c_mediumblob MEDIUMBLOB, " \
    "c_longblob LONGBLOB, c_enum ENUM('a','b','c'), c_set SET('x','y','z'), c_json JSON, " \
    "c_latin VARCHAR(20) CHARACTER SET latin1, c_uniq VARCHAR(20) UNIQUE, KEY (wm_poi_id)"

static void dexec(const char *sql)
{
    dal_error_t err;

    tu_must(dal_exec(dal, NULL, sql, NULL, 0, NULL, &err), &err, sql);
}

static char *make_ini(void)
{
    char text[8192];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[datasource plain]\n"
             "master = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
             "[dal]\n"
             "default_datasource = plain\n"
             "[idgen metaids]\nplugin = leaf\ndatasource = plain\nstep = 10\n"
             "[table meta_all]\n"
             "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 4\n"
             "shard_key = wm_poi_id\nstrategy = mod\n"
             "[table ai_shard]\n"
             "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 4\n"
             "shard_key = k\nstrategy = mod\n"
             "[table gen_meta]\n"
             "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 8\n"
             "shard_key = id\nstrategy = mod\nid_column = id\nidgen = metaids\n",
             ports[0]);
    return tu_write(dir, "meta.ini", text);
}

/* The same rows in the sharded table (through dal) and in plain's twin. */
static void fill_tables(void)
{
    static const char *rows[] = {
        "(1, 0, -1, 1, -2, 2, -3, 3, 10, 4, -5, 5, 1.500, 7, 1.25, 2.5, b'101', '2024-01-02', "
        "'10:11:12.123', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05', 2024, 'abc', "
        "'v', 'bin', 'vb', 'tt', 't', 'mt', 'lt', 'tb', 'b', 'mb', 'lb', 'a', 'x,y', "
        "'{\"a\":1}', 'l', 'u1')",
        "(2, 1, 5, 6, 7, 8, 9, 10, 20, 11, 12, 13, 2.250, 9, 3.5, 4.75, b'1', '2023-05-06', "
        "'01:02:03.000', '2023-05-06 07:08:09.000001', '2023-05-06 07:08:09', 1999, 'def', "
        "'w', 'b2', 'vb2', 'tt2', 't2', 'mt2', 'lt2', 'tb2', 'b2', 'mb2', 'lb2', 'b', 'z', "
        "'[1,2]', 'm', 'u2')",
        "(3, 2, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0.001, 0, 0, 0, b'0', '2022-01-01', "
        "'00:00:00.5', '2022-01-01 00:00:00', NULL, 2000, 'ghi', 'x', 'b3', 'vb3', '', '', "
        "'', '', '', '', '', '', 'c', '', 'null', 'n', 'u3')",
        "(4, 3, 1, 1, 1, 1, 1, 1, 40, 1, 1, 1, 9.999, 1, 1, 1, b'11111', '2021-12-31', "
        "'23:59:59.999', '2021-12-31 23:59:59.999999', NULL, 2155, 'jkl', 'y', 'b4', 'vb4', "
        "'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'a', 'x,y,z', '{}', 'o', 'u4')",
    };
    char sql[2048];
    MYSQL *m = tu_direct(ports[0], "plain");
    size_t i;

    dexec("DROP TABLE IF EXISTS meta_all");
    dexec("CREATE TABLE meta_all (" META_COLUMNS ")");
    tu_exec(m, "DROP TABLE IF EXISTS meta_all");
    tu_exec(m, "CREATE TABLE meta_all (" META_COLUMNS ")");
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO meta_all VALUES %s", rows[i]);
        dexec(sql);
        tu_exec(m, sql);
    }
    mysql_close(m);
}

static void global_setup(void)
{
    char *ini;

    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    ini = make_ini();
    dal = tu_open(ini);
    free(ini);
}

static void global_teardown(void)
{
    dal_close(dal);
    tu_rmtree(dir);
    free(dir);
}

/* ------------------------------------------------------------ metadata */

/* MariaDB's extended type attribute which of the server's field f, as a
 * NUL-terminated string in buf ("" when it sent none). */
static const char *server_attr(const MYSQL_FIELD *f, enum mariadb_field_attr_t which, char *buf,
                               size_t cap)
{
    MARIADB_CONST_STRING a;

    buf[0] = '\0';
    if (mariadb_field_attr(&a, f, which) == 0 && a.str != NULL)
        snprintf(buf, cap, "%.*s", (int)a.length, a.str);
    return buf;
}

/*
 * Run sql through dal and, as written, on plain's twin; compare every
 * column's metadata.  The schema is the node's database (schema, or NULL
 * not to check it).  Reads every row of both.
 */
static void compare_meta(const char *sql, const char *schema, size_t want_routes)
{
    MYSQL *m = tu_direct(ports[0], "plain");
    MYSQL_RES *res;
    MYSQL_FIELD *f;
    dal_result_t *r = NULL;
    dal_column_info_t ci;
    dal_error_t err;
    unsigned int i, n;
    char attr[64];
    int rc;

    tu_must(dal_query(dal, NULL, sql, NULL, 0, &r, &err), &err, sql);
    ck_assert_uint_eq(dal_result_route_count(r), want_routes);
    tu_exec(m, sql);
    res = mysql_store_result(m);
    ck_assert_ptr_nonnull(res);
    n = mysql_num_fields(res);
    f = mysql_fetch_fields(res);
    ck_assert_msg(dal_result_column_count(r) == n, "%s: %zu columns through dal, %u direct",
                  sql, dal_result_column_count(r), n);
    for (i = 0; i < n; i++) {
        memset(&ci, 0, sizeof ci);
        ci.struct_size = sizeof ci;
        ck_assert_int_eq(dal_result_column_info(r, i, &ci), 0);
#define SAME_STR(a, b) ck_assert_msg(strcmp((a), (b) ? (b) : "") == 0, \
                                     "%s: column %u (%s): " #a " '%s', server '%s'", sql, i, \
                                     f[i].name, (a), (b) ? (b) : "")
#define SAME_NUM(a, b) ck_assert_msg((unsigned long)(a) == (unsigned long)(b), \
                                     "%s: column %u (%s): " #a " %lu, server %lu", sql, i, \
                                     f[i].name, (unsigned long)(a), (unsigned long)(b))
        SAME_STR(ci.name, f[i].name);
        SAME_STR(ci.org_name, f[i].org_name);
        SAME_STR(ci.table, f[i].table);
        SAME_STR(ci.org_table, f[i].org_table);
        SAME_NUM(ci.type, f[i].type);
        SAME_NUM(ci.charset, f[i].charsetnr);
        SAME_NUM(ci.flags, f[i].flags);
        SAME_NUM(ci.decimals, f[i].decimals);
        SAME_NUM(ci.length, f[i].length);
        SAME_STR(ci.type_name, server_attr(&f[i], MARIADB_FIELD_ATTR_DATA_TYPE_NAME, attr,
                                           sizeof attr));
        SAME_STR(ci.format, server_attr(&f[i], MARIADB_FIELD_ATTR_FORMAT_NAME, attr, sizeof attr));
        if (schema != NULL && f[i].db != NULL && f[i].db[0] != '\0')
            ck_assert_str_eq(ci.schema, schema);
    }
    ck_assert_int_eq(dal_result_column_info(r, n, &ci), DAL_EINVAL);
    while ((rc = dal_result_next(r, &err)) > 0)
        ;
    tu_must(rc, &err, "read");
    /* still there after the sources are closed */
    if (n > 0) {
        ci.struct_size = sizeof ci;
        ck_assert_int_eq(dal_result_column_info(r, 0, &ci), 0);
        ck_assert_str_eq(ci.name, f[0].name);
    }
    dal_result_free(r);
    mysql_free_result(res);
    mysql_close(m);
}

START_TEST(test_meta_one_node)
{
    /* wm_poi_id 1: table 1 on node 1 */
    compare_meta("SELECT * FROM meta_all WHERE wm_poi_id = 1", "product_1", 1);
    compare_meta("SELECT f.c_int AS x, f.c_varchar, c_dec + 1, NULL, 'lit' AS l "
                 "FROM meta_all f WHERE wm_poi_id = 2", "product_2", 1);
    compare_meta("SELECT COUNT(*), SUM(c_int), AVG(c_dec), MAX(c_dt) FROM meta_all "
                 "WHERE wm_poi_id = 3", "product_3", 1);
}
END_TEST

START_TEST(test_meta_scatter)
{
    compare_meta("SELECT * FROM meta_all", "product_0", 4);
    compare_meta("SELECT * FROM meta_all ORDER BY id DESC LIMIT 3", "product_0", 4);
    /* a sort key not selected: a hidden column on the nodes */
    compare_meta("SELECT c_int, c_char FROM meta_all ORDER BY c_big, id", "product_0", 4);
    compare_meta("SELECT DISTINCT c_char, c_tiny FROM meta_all", "product_0", 4);
    compare_meta("SELECT c_tiny, COUNT(*) AS n, SUM(c_dec) FROM meta_all GROUP BY c_tiny",
                 "product_0", 4);
    /* aggregates dal merges; AVG runs as SUM on the nodes (plus a hidden
     * COUNT), yet reports as AVG */
    compare_meta("SELECT COUNT(*), COUNT(c_ts), SUM(c_int), SUM(c_ubig), SUM(c_dec), "
                 "SUM(c_double), MIN(c_dt), MAX(c_varchar), MIN(c_time), MAX(c_year), "
                 "AVG(c_int), AVG(c_dec), AVG(c_udec), AVG(c_ubig), AVG(c_tiny), AVG(c_double) "
                 "FROM meta_all", "product_0", 4);
    compare_meta("SELECT c_tiny, AVG(c_int) AS a FROM meta_all GROUP BY c_tiny ORDER BY a",
                 "product_0", 4);
}
END_TEST

START_TEST(test_meta_write)
{
    dal_result_t *r = NULL;
    dal_column_info_t ci;
    dal_error_t err;

    dal_value_t key = dal_int(2);

    tu_must(dal_query(dal, NULL, "UPDATE meta_all SET c_int = c_int WHERE wm_poi_id = 1", NULL, 0,
                      &r, &err), &err, "update");
    ck_assert_uint_eq(dal_result_column_count(r), 0);
    /* the row matched but left as it was: 0 affected, 1 found */
    ck_assert_uint_eq(dal_result_affected_rows(r), 0);
    ck_assert_uint_eq(dal_result_found_rows(r), 1);
    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    ck_assert_int_eq(dal_result_column_info(r, 0, &ci), DAL_EINVAL);
    dal_result_free(r);
    /* a caller built with a shorter struct gets what fits, nothing past it */
    tu_must(dal_query(dal, NULL, "SELECT c_int FROM meta_all WHERE wm_poi_id = 1", NULL, 0, &r,
                      &err), &err, "select");
    memset(&ci, 0x5a, sizeof ci);
    ci.struct_size = offsetof(dal_column_info_t, org_name);
    ck_assert_int_eq(dal_result_column_info(r, 0, &ci), 0);
    ck_assert_str_eq(ci.name, "c_int");
    ck_assert_ptr_eq(ci.org_name, (const char *)0x5a5a5a5a5a5a5a5aULL);
    ci.struct_size = 0;
    ck_assert_int_eq(dal_result_column_info(r, 0, &ci), DAL_EINVAL);
    dal_result_free(r);
    /* found rows summed over the nodes; a statement not an UPDATE counts
     * its affected rows */
    tu_must(dal_query(dal, NULL, "UPDATE meta_all SET c_int = 30 WHERE wm_poi_id IN (0, 2)", NULL,
                      0, &r, &err), &err, "update on two nodes");
    ck_assert_uint_eq(dal_result_route_count(r), 2);
    ck_assert_uint_eq(dal_result_affected_rows(r), 1);
    ck_assert_uint_eq(dal_result_found_rows(r), 2);
    dal_result_free(r);
    tu_must(dal_query(dal, NULL, "UPDATE meta_all SET c_int = 10 WHERE wm_poi_id = 0", NULL, 0,
                      &r, &err), &err, "update back");
    dal_result_free(r);
    tu_must(dal_query(dal, NULL, "DELETE FROM meta_all WHERE wm_poi_id = 99", NULL, 0, &r, &err),
            &err, "delete");
    ck_assert_uint_eq(dal_result_found_rows(r), 0);
    dal_result_free(r);
    /* a JSON column's format, also through a server-side prepared
     * statement (whose description the result shares) */
    for (int i = 0; i < 2; i++) {
        tu_must(dal_query(dal, NULL, "SELECT c_json, c_text FROM meta_all WHERE wm_poi_id = ?",
                          &key, 1, &r, &err), &err, "select json");
        memset(&ci, 0, sizeof ci);
        ci.struct_size = sizeof ci;
        ck_assert_int_eq(dal_result_column_info(r, 0, &ci), 0);
        ck_assert_str_eq(ci.format, "json");
        ck_assert_str_eq(ci.type_name, "");
        ck_assert_int_eq(dal_result_column_info(r, 1, &ci), 0);
        ck_assert_str_eq(ci.format, "");
        dal_result_free(r);
    }
}
END_TEST

/* ------------------------------------------------------------ warnings */

static unsigned int read_all_warnings(dal_t *d, const char *sql, size_t *rows)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    unsigned int w;
    int rc;

    tu_must(dal_query(d, NULL, sql, NULL, 0, &r, &err), &err, sql);
    *rows = 0;
    while ((rc = dal_result_next(r, &err)) > 0)
        (*rows)++;
    tu_must(rc, &err, "read");
    w = dal_result_warning_count(r);
    dal_result_free(r);
    return w;
}

START_TEST(test_warnings)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    size_t rows;

    /* one node (the default datasource) */
    ck_assert_uint_eq(read_all_warnings(dal, "SELECT CAST('x' AS INT)", &rows), 1);
    ck_assert_uint_eq(read_all_warnings(dal, "SELECT 1", &rows), 0);
    /* one warning per row, rows on four nodes (streamed): summed */
    ck_assert_uint_eq(read_all_warnings(dal, "SELECT CAST(c_char AS INT) FROM meta_all", &rows),
                      4);
    ck_assert_uint_eq(rows, 4);
    /* merged: the nodes' warnings, whatever the merge keeps (each node
     * casts its row twice: to sort, then to send), also from rows the
     * merge did not read */
    ck_assert_uint_eq(read_all_warnings(dal, "SELECT CAST(c_char AS INT) AS v FROM meta_all "
                                        "ORDER BY v LIMIT 1", &rows), 8);
    ck_assert_uint_eq(rows, 1);
    ck_assert_uint_eq(read_all_warnings(dal, "SELECT CAST(c_char AS INT) AS v FROM meta_all "
                                        "ORDER BY id LIMIT 1", &rows), 4);
    /* writes: a duplicate ignored on each of two nodes */
    tu_must(dal_query(dal, NULL, "INSERT IGNORE INTO meta_all (id, wm_poi_id, c_uniq) VALUES "
                      "(1, 0, 'd1'), (2, 1, 'd2')", NULL, 0, &r, &err), &err, "insert ignore");
    ck_assert_uint_eq(dal_result_route_count(r), 2);
    ck_assert_uint_eq(dal_result_affected_rows(r), 0);
    ck_assert_uint_eq(dal_result_warning_count(r), 2);
    dal_result_free(r);
}
END_TEST

/* ------------------------------------------------------------ insert ids */

START_TEST(test_insert_ids)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    dal_plan_t *plan = NULL;
    const int64_t *ids;
    char sql[256];
    size_t n;
    MYSQL *m;
    int i;

    /* AUTO_INCREMENT on one node: the first id of a multi-row INSERT */
    dexec("DROP TABLE IF EXISTS ai_plain");
    dexec("CREATE TABLE ai_plain (id INT AUTO_INCREMENT PRIMARY KEY, v INT)");
    tu_must(dal_query(dal, NULL, "INSERT INTO ai_plain (v) VALUES (1), (2), (3)", NULL, 0, &r,
                      &err), &err, "insert ai");
    ck_assert_uint_eq(dal_result_insert_id(r), 1);
    ck_assert_ptr_null(dal_result_generated_ids(r, &n));
    dal_result_free(r);
    tu_must(dal_query(dal, NULL, "INSERT INTO ai_plain (v) VALUES (4)", NULL, 0, &r, &err), &err,
            "insert ai 2");
    ck_assert_uint_eq(dal_result_insert_id(r), 4);
    dal_result_free(r);

    /* AUTO_INCREMENT on several nodes: the first route's */
    dexec("DROP TABLE IF EXISTS ai_shard");
    dexec("CREATE TABLE ai_shard (id INT AUTO_INCREMENT PRIMARY KEY, k INT)");
    for (i = 0; i < NODES; i++) {
        m = tu_direct(ports[i], NULL);
        snprintf(sql, sizeof sql, "ALTER TABLE product_%d.ai_shard_%d AUTO_INCREMENT = %d", i,
                 i, 100 * (i + 1));
        tu_exec(m, sql);
        mysql_close(m);
    }
    tu_must(dal_query(dal, NULL, "INSERT INTO ai_shard (k) VALUES (2)", NULL, 0, &r, &err), &err,
            "insert k=2");
    ck_assert_uint_eq(dal_result_insert_id(r), 300);
    dal_result_free(r);
    tu_must(dal_explain(dal, NULL, "INSERT INTO ai_shard (k) VALUES (3), (1)", NULL, 0, &plan,
                        &err), &err, "explain");
    ck_assert_uint_eq(dal_plan_count(plan), 2);
    ck_assert_str_eq(dal_plan_table(plan, 0), "ai_shard_1");
    dal_plan_free(plan);
    tu_must(dal_query(dal, NULL, "INSERT INTO ai_shard (k) VALUES (3), (1)", NULL, 0, &r, &err),
            &err, "insert k=3,1");
    ck_assert_uint_eq(dal_result_route_count(r), 2);
    ck_assert_uint_eq(dal_result_insert_id(r), 200);
    dal_result_free(r);

    /* IDs dal generated: the first one, as the server reports the first */
    tu_must(dal_setup_idgens(dal, NULL, NULL, NULL, &err), &err, "setup idgens");
    dexec("DROP TABLE IF EXISTS gen_meta");
    dexec("CREATE TABLE gen_meta (id BIGINT PRIMARY KEY, note VARCHAR(20))");
    tu_must(dal_query(dal, NULL, "INSERT INTO gen_meta (note) VALUES ('a'), ('b'), ('c')", NULL, 0,
                      &r, &err), &err, "insert generated");
    ids = dal_result_generated_ids(r, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(dal_result_insert_id(r), (uint64_t)ids[0]);
    ck_assert_int_ne(ids[0], 0);
    dal_result_free(r);
    /* the ID given: nothing generated, and the server made none */
    tu_must(dal_query(dal, NULL, "INSERT INTO gen_meta (id, note) VALUES (5, 'given')", NULL, 0,
                      &r, &err), &err, "insert given");
    ck_assert_ptr_null(dal_result_generated_ids(r, &n));
    ck_assert_uint_eq(dal_result_insert_id(r), 0);
    dal_result_free(r);
}
END_TEST

/* ------------------------------------------------------ status and session */

static unsigned int stmt_status(dal_session_t *s, const char *sql)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    unsigned int st;

    if (s != NULL)
        tu_must(dal_session_query(s, NULL, sql, NULL, 0, &r, &err), &err, sql);
    else
        tu_must(dal_query(dal, NULL, sql, NULL, 0, &r, &err), &err, sql);
    while (dal_result_next(r, &err) > 0)
        ;
    st = dal_result_server_status(r);
    dal_result_free(r);
    return st;
}

#define TX_BITS (DAL_SERVER_STATUS_IN_TRANS | DAL_SERVER_STATUS_AUTOCOMMIT | \
                 DAL_SERVER_STATUS_IN_TRANS_READONLY)

/* The status plain's server sends after sql, without the bit dal keeps. */
static unsigned int direct_status(const char *sql)
{
    MYSQL *m = tu_direct(ports[0], "plain");
    MYSQL_RES *res;
    unsigned int st;

    tu_exec(m, sql);
    res = mysql_store_result(m);
    st = m->server_status & ~DAL_SERVER_SESSION_STATE_CHANGED;
    mysql_free_result(res);
    mysql_close(m);
    return st;
}

START_TEST(test_status_flags)
{
    dal_session_t *s = NULL;
    dal_error_t err;

    ck_assert_uint_eq(stmt_status(NULL, "SELECT 1") & TX_BITS, DAL_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_uint_eq(stmt_status(NULL, "SELECT * FROM meta_all") & TX_BITS,
                      DAL_SERVER_STATUS_AUTOCOMMIT);
    /* the server's own bits come through (a scan without an index) */
    ck_assert_uint_eq(stmt_status(NULL, "SELECT * FROM ai_plain WHERE v > 0") & ~TX_BITS,
                      direct_status("SELECT * FROM ai_plain WHERE v > 0") & ~TX_BITS);
    ck_assert_uint_eq(stmt_status(NULL, "SELECT * FROM meta_all WHERE c_int > 0") & ~TX_BITS,
                      direct_status("SELECT * FROM meta_all WHERE c_int > 0") & ~TX_BITS);
    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    ck_assert_uint_eq(dal_session_status(s), DAL_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_uint_eq(stmt_status(s, "SELECT 1") & TX_BITS, DAL_SERVER_STATUS_AUTOCOMMIT);
    /* BEGIN sends nothing yet, but the transaction is open */
    ck_assert_uint_eq(stmt_status(s, "BEGIN") & TX_BITS,
                      DAL_SERVER_STATUS_IN_TRANS | DAL_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_uint_eq(stmt_status(s, "SELECT * FROM meta_all WHERE wm_poi_id = 1") & TX_BITS,
                      DAL_SERVER_STATUS_IN_TRANS | DAL_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_uint_eq(stmt_status(s, "COMMIT") & TX_BITS, DAL_SERVER_STATUS_AUTOCOMMIT);
    tu_must(dal_begin_read_only(s, &err), &err, "begin ro");
    ck_assert_uint_eq(dal_session_status(s), DAL_SERVER_STATUS_IN_TRANS |
                      DAL_SERVER_STATUS_IN_TRANS_READONLY | DAL_SERVER_STATUS_AUTOCOMMIT);
    tu_must(dal_rollback(s, &err), &err, "rollback");

    /* autocommit 0: every statement opens a transaction, until COMMIT */
    tu_must(dal_session_set_var(s, "AUTOCOMMIT", "0", &err), &err, "autocommit 0");
    ck_assert_uint_eq(dal_session_status(s), 0);
    ck_assert_uint_eq(stmt_status(s, "INSERT INTO meta_all (id, wm_poi_id, c_uniq) "
                                     "VALUES (50, 1, 'ac1')") & TX_BITS,
                      DAL_SERVER_STATUS_IN_TRANS);
    ck_assert_int_eq(tu_direct_value(ports[1], NULL,
                                     "SELECT COUNT(*) FROM product_1.meta_all_1 WHERE id = 50"),
                     0);
    tu_must(dal_rollback(s, &err), &err, "rollback");
    ck_assert_uint_eq(dal_session_status(s), 0);
    ck_assert_uint_eq(stmt_status(s, "INSERT INTO meta_all (id, wm_poi_id, c_uniq) "
                                     "VALUES (51, 1, 'ac2')") & TX_BITS,
                      DAL_SERVER_STATUS_IN_TRANS);
    ck_assert_uint_eq(stmt_status(s, "COMMIT") & TX_BITS, 0);
    ck_assert_int_eq(tu_direct_value(ports[1], NULL,
                                     "SELECT COUNT(*) FROM product_1.meta_all_1 WHERE id = 51"),
                     1);
    /* back to 1 inside a transaction commits it, as the server does */
    stmt_status(s, "DELETE FROM meta_all WHERE wm_poi_id = 1 AND id = 51");
    ck_assert_uint_eq(dal_session_status(s), DAL_SERVER_STATUS_IN_TRANS);
    tu_must(dal_session_set_var(s, "autocommit", "ON", &err), &err, "autocommit on");
    ck_assert_uint_eq(dal_session_status(s), DAL_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_int_eq(tu_direct_value(ports[1], NULL,
                                     "SELECT COUNT(*) FROM product_1.meta_all_1 WHERE id = 51"),
                     0);
    ck_assert_int_eq(dal_session_set_var(s, "autocommit", "maybe", &err), DAL_EINVAL);
    dal_session_close(s);
}
END_TEST

/* The one text value of a statement run by the session (or dal_query). */
static void text_is(dal_session_t *s, const char *sql, const char *want)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    int rows = 0;

    if (s != NULL)
        tu_must(dal_session_query(s, NULL, sql, NULL, 0, &r, &err), &err, sql);
    else
        tu_must(dal_query(dal, NULL, sql, NULL, 0, &r, &err), &err, sql);
    while (dal_result_next(r, &err) > 0) {
        ck_assert_msg(strcmp(dal_result_text(r, 0, NULL), want) == 0, "%s: '%s', want '%s'",
                      sql, dal_result_text(r, 0, NULL), want);
        rows++;
    }
    ck_assert_int_gt(rows, 0);
    dal_result_free(r);
}

START_TEST(test_session_vars)
{
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_value_t p;
    dal_error_t err;
    int i;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_session_set_var(s, "time_zone", "'+05:00'", &err), &err, "time_zone");
    tu_must(dal_session_set_var(s, "tx_isolation", "'READ-COMMITTED'", &err), &err, "isolation");
    for (i = 0; i < 3; i++) {
        /* the session's, on every connection it takes; never anyone else's */
        text_is(s, "SELECT @@time_zone", "+05:00");
        text_is(s, "SELECT @@time_zone FROM meta_all", "+05:00");
        text_is(NULL, "SELECT @@time_zone", "SYSTEM");
        text_is(NULL, "SELECT @@time_zone FROM meta_all", "SYSTEM");
    }
    /* replaced; a value the server refuses changes nothing */
    tu_must(dal_session_set_var(s, "time_zone", "'+01:00'", &err), &err, "time_zone again");
    ck_assert_int_eq(dal_session_set_var(s, "time_zone", "'Nowhere/Else'", &err), DAL_ESERVER);
    ck_assert_int_eq(dal_session_set_var(s, "no_such_variable_x", "1", &err), DAL_ESERVER);
    ck_assert_int_eq(dal_session_set_var(s, "a;b", "1", &err), DAL_EINVAL);
    text_is(s, "SELECT @@time_zone", "+01:00");
    /* in a transaction, on its connection */
    tu_must(dal_begin(s, &err), &err, "begin");
    text_is(s, "SELECT @@tx_isolation FROM meta_all WHERE wm_poi_id = 2", "READ-COMMITTED");
    tu_must(dal_session_set_var(s, "time_zone", "'-02:00'", &err), &err, "time_zone in txn");
    text_is(s, "SELECT @@time_zone FROM meta_all WHERE wm_poi_id = 2", "-02:00");
    tu_must(dal_commit(s, &err), &err, "commit");
    text_is(NULL, "SELECT @@tx_isolation FROM meta_all WHERE wm_poi_id = 2", "REPEATABLE-READ");

    /* sql_mode: dal's escaping of ? values follows NO_BACKSLASH_ESCAPES */
    tu_must(dal_session_set_var(s, "sql_mode", "'NO_BACKSLASH_ESCAPES'", &err), &err, "sql_mode");
    p = dal_str("back\\slash 'q'");
    tu_must(dal_session_query(s, NULL, "SELECT ?", &p, 1, &r, &err), &err, "select ?");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_str_eq(dal_result_text(r, 0, NULL), "back\\slash 'q'");
    ck_assert(dal_result_server_status(r) & DAL_SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    dal_result_free(r);
    ck_assert(!(stmt_status(NULL, "SELECT 1") & DAL_SERVER_STATUS_NO_BACKSLASH_ESCAPES));

    /* SET NAMES */
    tu_must(dal_session_set_var(s, "names", "latin1", &err), &err, "names");
    text_is(s, "SELECT @@character_set_client", "latin1");
    text_is(s, "SELECT @@character_set_results FROM meta_all", "latin1");
    text_is(NULL, "SELECT @@character_set_client", "utf8mb4");
    text_is(NULL, "SELECT @@character_set_client FROM meta_all", "utf8mb4");
    ck_assert_int_eq(dal_session_set_var(s, "names", "'no_such_charset'", &err), DAL_ESERVER);
    dal_session_close(s);
}
END_TEST

/* ------------------------------------------------------------ result relay */

/* What a relay sink was handed: packets by part, the rows' values joined. */
typedef struct relayed {
    size_t count_packets, columns, ends, rows;
    uint64_t ncols;           /* the column count packet's value */
    char names[256];          /* the definitions' names, space-separated */
    char values[512];         /* the rows' values, "|"-separated, NULL as "\\N" */
    int stop;                 /* the sink says it takes no more after this many rows */
} relayed_t;

/* A lenenc string at *p, advanced: its bytes (NULL for 0xFB) and length. */
static const unsigned char *lenenc_str(const unsigned char **p, size_t *n)
{
    const unsigned char *q = *p;

    if (*q == 0xFB) {
        *p = q + 1;
        return NULL;
    }
    ck_assert_uint_lt(*q, 0xFB); /* short values only in these tests */
    *n = *q;
    *p = q + 1 + *n;
    return q + 1;
}

static int relay_sink(void *ctx, dal_relay_part_t part, const unsigned char *data, size_t len)
{
    relayed_t *t = ctx;
    const unsigned char *p = data, *v;
    size_t n = 0, i;

    switch (part) {
    case DAL_RELAY_COLUMN_COUNT:
        t->count_packets++;
        ck_assert_uint_eq(len, 1);
        t->ncols = data[0];
        break;
    case DAL_RELAY_COLUMN:
        t->columns++;
        for (i = 0; i < 5; i++) /* catalog, schema, table, org_table, name */
            v = lenenc_str(&p, &n);
        ck_assert_ptr_nonnull(v);
        snprintf(t->names + strlen(t->names), sizeof t->names - strlen(t->names), "%s%.*s",
                 t->names[0] ? " " : "", (int)n, (const char *)v);
        break;
    case DAL_RELAY_COLUMNS_END:
        t->ends++;
        ck_assert_ptr_null(data);
        break;
    case DAL_RELAY_ROW:
        t->rows++;
        for (i = 0; i < t->ncols; i++) {
            v = lenenc_str(&p, &n);
            snprintf(t->values + strlen(t->values), sizeof t->values - strlen(t->values),
                     "%s%.*s", t->values[0] ? "|" : "", v ? (int)n : 2,
                     v ? (const char *)v : "\\N");
        }
        ck_assert_ptr_eq(p, data + len);
        if (t->stop > 0 && t->rows >= (size_t)t->stop)
            return -1;
        break;
    }
    return 0;
}

/* The same values read from a result, as relay_sink joins them. */
static void result_values(dal_result_t *r, char *out, size_t cap)
{
    dal_error_t err;
    size_t i, n;
    int rc;

    out[0] = '\0';
    while ((rc = dal_result_next(r, &err)) == 1)
        for (i = 0; i < dal_result_column_count(r); i++) {
            const char *v = dal_result_text(r, i, &n);
            snprintf(out + strlen(out), cap - strlen(out), "%s%.*s", out[0] ? "|" : "",
                     v ? (int)n : 2, v ? v : "\\N");
        }
    tu_must(rc, &err, "read");
}

/* sql on s with sink set: whether it was relayed, what the sink got (*t),
 * and the values read from the result when it was not. */
static int relay_query(dal_session_t *s, const dal_relay_t *sink, const char *sql, relayed_t *t,
                       char *values, size_t cap)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    uint64_t rows = 0;
    int relayed;

    dal_session_set_relay(s, sink, t);
    tu_must(dal_session_query(s, NULL, sql, NULL, 0, &r, &err), &err, sql);
    dal_session_set_relay(s, NULL, NULL);
    relayed = dal_result_relayed(r, &rows);
    if (relayed && t->stop == 0)
        ck_assert_uint_eq(rows, t->rows);
    else if (relayed)
        ck_assert_uint_ge(rows, t->rows); /* the rows after stop were read, not handed */
    else
        ck_assert_uint_eq(t->count_packets + t->columns + t->ends + t->rows, 0);
    if (values != NULL && !relayed)
        result_values(r, values, cap);
    dal_result_free(r);
    return relayed;
}

/* A session for a relay test on the table name, made anew by create and
 * filled by insert; relay_close closes it and drops the table. */
static dal_session_t *relay_open(const char *name, const char *create, const char *insert)
{
    dal_session_t *s = NULL;
    dal_error_t err;
    char sql[64];

    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", name);
    dexec(sql);
    dexec(create);
    dexec(insert);
    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    return s;
}

static void relay_close(dal_session_t *s, const char *name)
{
    char sql[64];

    dal_session_close(s);
    snprintf(sql, sizeof sql, "DROP TABLE %s", name);
    dexec(sql);
}

/* relay_open's table of the text and prepared relay tests: three rows,
 * one with a NULL. */
static dal_session_t *relay_t_open(void)
{
    return relay_open("relay_t", "CREATE TABLE relay_t (id INT PRIMARY KEY, v VARCHAR(20))",
                      "INSERT INTO relay_t VALUES (1, 'one'), (2, NULL), (3, 'three')");
}

START_TEST(test_relay)
{
    static const dal_relay_t plain_sink = {0, relay_sink};
    static const dal_relay_t ext_sink = {DAL_RELAY_EXTENDED_METADATA, relay_sink};
    const dal_relay_t *sink;
    dal_session_t *s;
    dal_result_t *r = NULL;
    dal_error_t err, err2;
    relayed_t t;
    char want[512];
    dal_value_t one = dal_int(1);
    int a, b;

    s = relay_t_open();

    /* both sinks relay: the connection has MariaDB's extended metadata
     * (Connector/C asks for it), which the one without it gets taken out
     * of each definition (test_relay_no_extended); the rest of this test
     * runs with that one, as dal-proxy's for PyMySQL or mysql2 */
    memset(&t, 0, sizeof t);
    a = relay_query(s, &plain_sink, "SELECT id, v FROM relay_t WHERE id = 1", &t, NULL, 0);
    memset(&t, 0, sizeof t);
    b = relay_query(s, &ext_sink, "SELECT id, v FROM relay_t WHERE id = 1", &t, NULL, 0);
    ck_assert_msg(a && b, "relayed with plain metadata %d, extended %d", a, b);
    sink = &plain_sink;

    /* a pass-through point select: relayed, the server's own packets */
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT id, v FROM relay_t WHERE id = 1", &t, NULL, 0));
    ck_assert_uint_eq(t.count_packets, 1);
    ck_assert_uint_eq(t.ncols, 2);
    ck_assert_uint_eq(t.columns, 2);
    ck_assert_uint_eq(t.ends, 1);
    ck_assert_str_eq(t.names, "id v");
    ck_assert_str_eq(t.values, "1|one");
    /* every row, NULL included, as the result without a sink reads them */
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT id, v FROM relay_t ORDER BY id", &t, NULL, 0));
    ck_assert_uint_eq(t.rows, 3);
    memset(&t, 0, sizeof t);
    relay_query(s, NULL, "SELECT id, v FROM relay_t ORDER BY id", &t, want, sizeof want);
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT id, v FROM relay_t ORDER BY id", &t, NULL, 0));
    ck_assert_str_eq(t.values, want);
    /* no rows */
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT id FROM relay_t WHERE id = 99", &t, NULL, 0));
    ck_assert_uint_eq(t.rows, 0);
    ck_assert_uint_eq(t.ends, 1);
    /* a sink that stops taking rows: the rest is read, the connection
     * stays in step */
    memset(&t, 0, sizeof t);
    t.stop = 1;
    ck_assert(relay_query(s, sink, "SELECT id FROM relay_t", &t, NULL, 0));
    ck_assert_uint_eq(t.rows, 1);
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT 7", &t, NULL, 0));
    ck_assert_str_eq(t.values, "7");
    /* warnings: counted on the result, SHOW WARNINGS sees them */
    memset(&t, 0, sizeof t);
    dal_session_set_relay(s, sink, &t);
    tu_must(dal_session_query(s, NULL, "SELECT CAST('x' AS INT)", NULL, 0, &r, &err), &err, "w");
    dal_session_set_relay(s, NULL, NULL);
    ck_assert(dal_result_relayed(r, NULL));
    ck_assert_uint_eq(dal_result_warning_count(r), 1);
    dal_result_free(r);

    /* not relayed: a sharded table's rewrite, a merge of several nodes,
     * a renamed column, SHOW, session state, a parameter, an option */
    memset(&t, 0, sizeof t);
    ck_assert(!relay_query(s, sink, "SELECT id FROM meta_all WHERE wm_poi_id = 1", &t, want,
                           sizeof want));
    ck_assert_str_eq(want, "2");
    memset(&t, 0, sizeof t);
    ck_assert(!relay_query(s, sink, "SELECT COUNT(*) FROM meta_all", &t, want, sizeof want));
    ck_assert_str_eq(want, "4");
    memset(&t, 0, sizeof t);
    ck_assert(!relay_query(s, sink, "SHOW TABLES", &t, NULL, 0));
    memset(&t, 0, sizeof t);
    ck_assert(!relay_query(s, sink, "SELECT @relay_a := 1", &t, NULL, 0));
    memset(&t, 0, sizeof t);
    ck_assert(!relay_query(s, sink, "SELECT @@autocommit", &t, NULL, 0));
    memset(&t, 0, sizeof t);
    dal_session_set_relay(s, sink, &t);
    tu_must(dal_session_query(s, NULL, "SELECT id FROM relay_t WHERE id = ?", &one, 1, &r, &err),
            &err, "param");
    ck_assert(!dal_result_relayed(r, NULL));
    dal_result_free(r);
    tu_must(dal_session_query(s, &(dal_query_opts_t){0},
                              "SELECT id FROM relay_t WHERE id = 1", NULL, 0, &r, &err),
            &err, "opts");
    dal_session_set_relay(s, NULL, NULL);
    ck_assert(!dal_result_relayed(r, NULL));
    ck_assert_uint_eq(t.count_packets, 0);
    dal_result_free(r);

    /* a server's error: the same error as without a sink, datasource named */
    dal_session_set_relay(s, sink, &t);
    ck_assert_int_eq(dal_session_query(s, NULL, "SELECT * FROM relay_no_such", NULL, 0, &r, &err),
                     DAL_ESERVER);
    dal_session_set_relay(s, NULL, NULL);
    ck_assert_int_eq(dal_session_query(s, NULL, "SELECT * FROM relay_no_such", NULL, 0, &r, &err2),
                     DAL_ESERVER);
    ck_assert_uint_eq(err.mysql_errno, 1146);
    ck_assert_str_eq(err.sqlstate, err2.sqlstate);
    ck_assert_str_eq(err.message, err2.message);
    ck_assert_ptr_nonnull(strstr(err.message, "datasource plain"));
    /* an error after rows were relayed (the subquery finds two rows for
     * the last row only): the rows went to the sink, the statement fails
     * with the server's error, and the session's next statement runs */
    memset(&t, 0, sizeof t);
    dal_session_set_relay(s, sink, &t);
    ck_assert_int_eq(dal_session_query(s, NULL, "SELECT r.id, (SELECT x.v FROM relay_t x WHERE "
                                       "x.id >= r.id AND x.id <= 2) FROM relay_t r ORDER BY r.id "
                                       "DESC", NULL, 0, &r, &err), DAL_ESERVER);
    dal_session_set_relay(s, NULL, NULL);
    ck_assert_uint_eq(err.mysql_errno, 1242);
    ck_assert_ptr_nonnull(strstr(err.message, "datasource plain"));
    ck_assert_uint_eq(t.count_packets, 1);
    ck_assert_uint_eq(t.rows, 2);
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT v FROM relay_t WHERE id = 1", &t, NULL, 0));
    ck_assert_str_eq(t.values, "one");

    /* inside a transaction, on the session's connection */
    tu_must(dal_session_query(s, NULL, "BEGIN", NULL, 0, &r, &err), &err, "begin");
    dal_result_free(r);
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, sink, "SELECT v FROM relay_t WHERE id = 3", &t, NULL, 0));
    ck_assert_str_eq(t.values, "three");
    tu_must(dal_session_query(s, NULL, "COMMIT", NULL, 0, &r, &err), &err, "commit");
    dal_result_free(r);
    relay_close(s, "relay_t");
}
END_TEST

/* What a binary sink was handed: as relayed_t, the definitions' bytes and
 * the binary rows in hex. */
typedef struct bin_relayed {
    relayed_t t;
    unsigned char defs[1024]; /* the column definitions, concatenated */
    size_t ndefs;
    char hex[1024];           /* the rows, each in hex, " "-separated */
} bin_relayed_t;

static int bin_sink(void *ctx, dal_relay_part_t part, const unsigned char *data, size_t len)
{
    bin_relayed_t *b = ctx;
    size_t i;

    if (part == DAL_RELAY_COLUMN) {
        ck_assert_uint_le(b->ndefs + len, sizeof b->defs);
        memcpy(b->defs + b->ndefs, data, len);
        b->ndefs += len;
    }
    if (part != DAL_RELAY_ROW)
        return relay_sink(&b->t, part, data, len);
    b->t.rows++;
    if (b->hex[0] != '\0')
        strcat(b->hex, " ");
    for (i = 0; i < len; i++)
        snprintf(b->hex + strlen(b->hex), sizeof b->hex - strlen(b->hex), "%02x", data[i]);
    return 0;
}

/* sql prepared and run with params on s, sink set: whether it was relayed
 * (b zeroed first); the values when it was not. */
static int relay_prepared(dal_session_t *s, const dal_relay_t *sink, const char *sql,
                          const dal_value_t *params, size_t n, bin_relayed_t *b, char *values,
                          size_t cap)
{
    dal_prepared_t *p = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    uint64_t rows = 0;
    int relayed;

    memset(b, 0, sizeof *b);
    tu_must(dal_prepare(dal, sql, &p, &err), &err, sql);
    dal_session_set_relay(s, sink, b);
    tu_must(dal_session_query_prepared(s, NULL, p, params, n, &r, &err), &err, sql);
    dal_session_set_relay(s, NULL, NULL);
    relayed = dal_result_relayed(r, &rows);
    if (relayed)
        ck_assert_uint_eq(rows, b->t.rows);
    else
        ck_assert_uint_eq(b->t.count_packets + b->t.columns + b->t.ends + b->t.rows, 0);
    if (values != NULL && !relayed)
        result_values(r, values, cap);
    dal_result_free(r);
    dal_prepared_free(p);
    return relayed;
}

START_TEST(test_relay_prepared)
{
    static const dal_relay_t bin = {DAL_RELAY_BINARY, bin_sink};
    static const dal_relay_t bin_ext = {DAL_RELAY_BINARY | DAL_RELAY_EXTENDED_METADATA, bin_sink};
    static const dal_relay_t text_sink = {0, relay_sink};
    const dal_relay_t *sink, *tsink;
    const char *point = "SELECT id, v FROM relay_t WHERE id = ?";
    dal_session_t *s;
    dal_prepared_t *p = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    bin_relayed_t b;
    char want[512];
    dal_value_t v[1];
    int a, c, i;

    s = relay_t_open();

    /* the sink whose extended metadata is the connection's relays */
    v[0] = dal_int(1);
    a = relay_prepared(s, &bin, point, v, 1, &b, NULL, 0);
    c = relay_prepared(s, &bin_ext, point, v, 1, &b, NULL, 0);
    if (!tu_server_prepared(dal, point, v, 1)) {
        /* server_prepare off (integration_off.sh): the statement runs as
         * text, whose rows are no binary rows to relay */
        ck_assert_msg(a + c == 0, "relayed as text: plain metadata %d, extended %d", a, c);
        relay_close(s, "relay_t");
        return;
    }
    /* both relay (dal encodes the definitions, with or without the
     * extended block); the rest of this test with the one without */
    ck_assert_msg(a && c, "relayed with plain metadata %d, extended %d", a, c);
    sink = &bin;
    tsink = &text_sink;

    /* a point select: the count, the definitions a text relay of the same
     * statement gets from the server, one binary row: its header, the
     * NULL bitmap, the INT and the string */
    ck_assert(relay_prepared(s, sink, point, v, 1, &b, NULL, 0));
    ck_assert_uint_eq(b.t.count_packets, 1);
    ck_assert_uint_eq(b.t.ncols, 2);
    ck_assert_uint_eq(b.t.columns, 2);
    ck_assert_uint_eq(b.t.ends, 1);
    ck_assert_str_eq(b.t.names, "id v");
    ck_assert_str_eq(b.hex, "000001000000036f6e65");
    {
        bin_relayed_t tb;
        memset(&tb, 0, sizeof tb);
        dal_session_set_relay(s, &(dal_relay_t){0, bin_sink}, &tb);
        tu_must(dal_session_query(s, NULL, "SELECT id, v FROM relay_t WHERE id = 1", NULL, 0, &r,
                                  &err), &err, "text");
        dal_session_set_relay(s, NULL, NULL);
        ck_assert(dal_result_relayed(r, NULL));
        dal_result_free(r);
        ck_assert_uint_eq(tb.ndefs, b.ndefs);
        ck_assert(memcmp(tb.defs, b.defs, b.ndefs) == 0);
    }
    /* a NULL: its bit (column 1, offset 2) set, no value */
    v[0] = dal_int(2);
    ck_assert(relay_prepared(s, sink, point, v, 1, &b, NULL, 0));
    ck_assert_str_eq(b.hex, "000802000000");
    /* the same statement many times (the handle's next executions, the
     * connection back in the pool between them), and an empty result */
    dal_prepare(dal, point, &p, &err);
    for (i = 0; i < 60; i++) {
        memset(&b, 0, sizeof b);
        v[0] = dal_int(i % 4);
        dal_session_set_relay(s, sink, &b);
        tu_must(dal_session_query_prepared(s, NULL, p, v, 1, &r, &err), &err, "again");
        dal_session_set_relay(s, NULL, NULL);
        ck_assert(dal_result_relayed(r, NULL));
        ck_assert_uint_eq(b.t.rows, i % 4 == 0 ? 0 : 1);
        ck_assert_uint_eq(b.t.ends, 1);
        dal_result_free(r);
        /* without a sink in between: the handle read as usual */
        if (i % 10 == 5) {
            tu_must(dal_session_query_prepared(s, NULL, p, v, 1, &r, &err), &err, "plain");
            ck_assert(!dal_result_relayed(r, NULL));
            result_values(r, want, sizeof want);
            ck_assert_str_eq(want, i % 4 == 1 ? "1|one" : "3|three");
            dal_result_free(r);
        }
    }
    dal_prepared_free(p);
    /* warnings: counted on the result, SHOW WARNINGS sees them */
    v[0] = dal_int(1);
    tu_must(dal_prepare(dal, "SELECT CAST('x' AS INT) FROM relay_t WHERE id = ?", &p, &err),
            &err, "w");
    memset(&b, 0, sizeof b);
    dal_session_set_relay(s, sink, &b);
    tu_must(dal_session_query_prepared(s, NULL, p, v, 1, &r, &err), &err, "w");
    dal_session_set_relay(s, NULL, NULL);
    ck_assert(dal_result_relayed(r, NULL));
    ck_assert_uint_eq(dal_result_warning_count(r), 1);
    dal_result_free(r);
    dal_prepared_free(p);

    /* a table changed under the handle: prepared again, the new columns */
    dexec("ALTER TABLE relay_t ADD COLUMN w INT DEFAULT 5");
    ck_assert(relay_prepared(s, sink, "SELECT * FROM relay_t WHERE id = ?", v, 1, &b, NULL, 0));
    ck_assert_str_eq(b.t.names, "id v w");
    ck_assert_str_eq(b.hex, "000001000000036f6e6505000000");
    dexec("ALTER TABLE relay_t DROP COLUMN w");
    ck_assert(relay_prepared(s, sink, "SELECT * FROM relay_t WHERE id = ?", v, 1, &b, NULL, 0));
    ck_assert_str_eq(b.t.names, "id v");

    /* an error after rows: the rows went to the sink, the server's error
     * is the statement's, and the handle runs again */
    v[0] = dal_int(0);
    tu_must(dal_prepare(dal, "SELECT r.id, (SELECT x.v FROM relay_t x WHERE x.id >= r.id AND "
                             "x.id <= 2) FROM relay_t r WHERE r.id > ? ORDER BY r.id DESC",
                        &p, &err), &err, "after rows");
    for (i = 0; i < 2; i++) {
        memset(&b, 0, sizeof b);
        dal_session_set_relay(s, sink, &b);
        ck_assert_int_eq(dal_session_query_prepared(s, NULL, p, v, 1, &r, &err), DAL_ESERVER);
        dal_session_set_relay(s, NULL, NULL);
        ck_assert_uint_eq(err.mysql_errno, 1242);
        ck_assert_uint_eq(b.t.rows, 2);
    }
    dal_prepared_free(p);
    v[0] = dal_int(3);
    ck_assert(relay_prepared(s, sink, point, v, 1, &b, NULL, 0));
    ck_assert_str_eq(b.hex, "000003000000057468726565");

    /* not relayed: a sharded table's rewrite, a merge of several nodes, a
     * text sink, and a binary sink's text statement */
    v[0] = dal_int(1);
    ck_assert(!relay_prepared(s, sink, "SELECT id FROM meta_all WHERE wm_poi_id = ?", v, 1, &b,
                              want, sizeof want));
    ck_assert_str_eq(want, "2");
    v[0] = dal_int(0);
    ck_assert(!relay_prepared(s, sink, "SELECT COUNT(*) FROM meta_all WHERE id > ?", v, 1, &b,
                              want, sizeof want));
    ck_assert_str_eq(want, "4");
    v[0] = dal_int(1);
    ck_assert(!relay_prepared(s, tsink, point, v, 1, &b, want, sizeof want));
    ck_assert_str_eq(want, "1|one");
    memset(&b, 0, sizeof b); /* the sink's ctx is a bin_relayed_t, its t first */
    ck_assert(!relay_query(s, sink, "SELECT id, v FROM relay_t WHERE id = 1", &b.t, want,
                           sizeof want));
    ck_assert_str_eq(want, "1|one");
    relay_close(s, "relay_t");
}
END_TEST

/* Each column definition a sink was handed, apart, and the rows in hex. */
typedef struct defs_relayed {
    size_t ndefs;
    unsigned char def[12][256];
    size_t len[12];
    char rows[2048];
} defs_relayed_t;

static int defs_sink(void *ctx, dal_relay_part_t part, const unsigned char *data, size_t len)
{
    defs_relayed_t *d = ctx;
    size_t i;

    if (part == DAL_RELAY_COLUMN) {
        ck_assert_uint_lt(d->ndefs, 12);
        ck_assert_uint_le(len, sizeof d->def[0]);
        memcpy(d->def[d->ndefs], data, len);
        d->len[d->ndefs++] = len;
    } else if (part == DAL_RELAY_ROW) {
        if (d->rows[0] != '\0')
            strcat(d->rows, " ");
        for (i = 0; i < len; i++)
            snprintf(d->rows + strlen(d->rows), sizeof d->rows - strlen(d->rows), "%02x", data[i]);
    }
    return 0;
}

/* sql on s (prepared and run with params when n > 0) with sink set:
 * whether it was relayed, what the sink got (*d, zeroed first). */
static int defs_query(dal_session_t *s, const dal_relay_t *sink, const char *sql,
                      const dal_value_t *params, size_t n, defs_relayed_t *d)
{
    dal_prepared_t *p = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    int relayed;

    memset(d, 0, sizeof *d);
    if (n > 0)
        tu_must(dal_prepare(dal, sql, &p, &err), &err, sql);
    dal_session_set_relay(s, sink, d);
    if (n > 0)
        tu_must(dal_session_query_prepared(s, NULL, p, params, n, &r, &err), &err, sql);
    else
        tu_must(dal_session_query(s, NULL, sql, NULL, 0, &r, &err), &err, sql);
    dal_session_set_relay(s, NULL, NULL);
    relayed = dal_result_relayed(r, NULL);
    dal_result_free(r);
    if (p != NULL)
        dal_prepared_free(p);
    return relayed;
}

/* The bytes of the six names (catalog, schema, table, org_table, name,
 * org_name) at the start of definition d of n bytes. */
static size_t names_len(const unsigned char *d, size_t n)
{
    const unsigned char *p = d;
    size_t len = 0;
    int i;

    for (i = 0; i < 6; i++) {
        lenenc_str(&p, &len);
        ck_assert_uint_le((size_t)(p - d), n);
    }
    return (size_t)(p - d);
}

/* A client without MariaDB's extended metadata (PyMySQL, mysql2,
 * Connector/J) on a connection with it: its text reads are relayed with
 * each definition as the server's without the extended type info block,
 * rows and values as the server sent them; its prepared reads too, with
 * dal's definitions, which are those same bytes. */
START_TEST(test_relay_no_extended)
{
    static const dal_relay_t plain = {0, defs_sink};
    static const dal_relay_t ext = {DAL_RELAY_EXTENDED_METADATA, defs_sink};
    static const dal_relay_t bin = {DAL_RELAY_BINARY, defs_sink};
    static const dal_relay_t values_sink = {0, relay_sink};
    const char *all = "SELECT * FROM relay_x ORDER BY id";
    const char *vals = "SELECT id, j, d, ts, u, c, b, f, e FROM relay_x ORDER BY id";
    const char *ps = "SELECT * FROM relay_x WHERE id >= ? ORDER BY id";
    static defs_relayed_t p, e, bp;
    dal_session_t *s;
    dal_value_t zero = dal_int(0);
    relayed_t t;
    char want[512];
    size_t i, k, np, ne, blocks = 0;

    s = relay_open("relay_x",
                   "CREATE TABLE relay_x (id INT PRIMARY KEY, j JSON, g POINT, d DECIMAL(8,3), "
                   "ts TIMESTAMP(3) NULL, u INT UNSIGNED ZEROFILL, "
                   "c VARCHAR(20) CHARACTER SET latin1, b BLOB, f DOUBLE, e ENUM('a', 'b'))",
                   "INSERT INTO relay_x VALUES (1, '{\"a\": 1}', POINT(1, 2), 1.5, "
                   "'2024-01-02 03:04:05.678', 7, 'caf\xc3\xa9', 'x', 2.5, 'b'), "
                   "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");

    ck_assert_msg(defs_query(s, &ext, all, NULL, 0, &e), "the extended sink was not relayed");
    ck_assert_msg(defs_query(s, &plain, all, NULL, 0, &p),
                  "a sink without extended metadata was not relayed");
    ck_assert_uint_eq(p.ndefs, 10);
    ck_assert_uint_eq(e.ndefs, 10);
    for (i = 0; i < p.ndefs; i++) {
        np = names_len(p.def[i], p.len[i]);
        ne = names_len(e.def[i], e.len[i]);
        ck_assert_uint_eq(np, ne);
        ck_assert(memcmp(p.def[i], e.def[i], np) == 0);
        /* without: the fixed-length fields right after the names */
        ck_assert_uint_eq(p.len[i], np + 13);
        ck_assert_uint_eq(p.def[i][np], 0x0C);
        /* with: the block (short here), then the same fields */
        k = e.def[i][ne];
        ck_assert_uint_lt(k, 0xFB);
        blocks += k > 0;
        ck_assert_uint_eq(e.len[i], ne + 1 + k + 13);
        ck_assert(memcmp(e.def[i] + ne + 1 + k, p.def[i] + np, 13) == 0);
    }
    ck_assert_uint_ge(blocks, 2); /* JSON's format, POINT's type */
    ck_assert_str_eq(p.rows, e.rows);
    /* the values as the statement without a sink reads them */
    memset(&t, 0, sizeof t);
    ck_assert(!relay_query(s, NULL, vals, &t, want, sizeof want));
    memset(&t, 0, sizeof t);
    ck_assert(relay_query(s, &values_sink, vals, &t, NULL, 0));
    ck_assert_str_eq(t.values, want);

    /* prepared: relayed to a binary sink without it, dal's definitions the
     * server's text ones without their blocks */
    if (tu_server_prepared(dal, ps, &zero, 1)) {
        ck_assert_msg(defs_query(s, &bin, ps, &zero, 1, &bp),
                      "a binary sink without extended metadata was not relayed");
        ck_assert_uint_eq(bp.ndefs, p.ndefs);
        for (i = 0; i < p.ndefs; i++) {
            ck_assert_uint_eq(bp.len[i], p.len[i]);
            ck_assert_msg(memcmp(bp.def[i], p.def[i], p.len[i]) == 0,
                          "column %zu: dal's definition differs from the server's", i);
        }
    }
    relay_close(s, "relay_x");
}
END_TEST

static Suite *meta_suite(void)
{
    Suite *s = suite_create("resultmeta");
    TCase *tc = tcase_create("live");

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_unchecked_fixture(tc, fill_tables, NULL);
    tcase_add_test(tc, test_meta_one_node);
    tcase_add_test(tc, test_meta_scatter);
    tcase_add_test(tc, test_meta_write);
    tcase_add_test(tc, test_warnings);
    tcase_add_test(tc, test_insert_ids);
    tcase_add_test(tc, test_status_flags);
    tcase_add_test(tc, test_session_vars);
    tcase_add_test(tc, test_relay);
    tcase_add_test(tc, test_relay_prepared);
    tcase_add_test(tc, test_relay_no_extended);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* one process: the tests share the cluster and the dal_t */
    return tu_run(meta_suite(), CK_NOFORK);
}
