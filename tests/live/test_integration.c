/*
 * test_integration.c -- dal against real MariaDB servers.
 *
 * tests/suites/integration.sh starts a throwaway cluster of four mariadbd
 * (product_0 .. product_3, one per server, plus `plain` on server 0) and
 * exports their ports in DAL_TEST_PORTS.  Every check compares what dal did
 * with what the servers hold, read back with plain libmysqlclient.
 */
#include <check.h>
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dal/dal.h>

#include "testutil.h"

#define NODES 4
#define TABLES 100

static int ports[NODES];
static char *dir;
static char *ini;
static dal_t *dal;

/* wm_food and wm_food_copy: one layout, bound (INSERT ... SELECT between
 * them stays on each shard). */
#define FOOD_LAYOUT                                                                   \
    "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 100\n"             \
    "shard_key = wm_poi_id\nstrategy = mod\nbinding = food\n"

static char *make_ini(void)
{
    char text[8192];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES,
                   "${DAL_TEST_PASSWORD}");
    snprintf(text + len, sizeof text - len,
             "[datasource plain]\n"
             "master = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
             "[datasource closed]\n"
             "master = mysql://dal:t0psecret@127.0.0.1:1/plain\n"
             "connect_timeout = 2s\n"
             "[dal]\n"
             "default_datasource = plain\n"
             "[table wm_food]\n" FOOD_LAYOUT
             "[table wm_food_copy]\n" FOOD_LAYOUT
             "[table wm_order]\n"
             "datasource = dbProductSku\n"
             "db_shard_num = 4\n"
             "table_shard_num = 8\n"
             "shard_key = created\n"
             "strategy = range\n"
             "strategy.bounds = 0, 100, 200, 300, 400, 500, 600, 700, 800\n"
             "[table users]\n"
             "datasource = dbProductSku\n"
             "db_shard_num = 4\n"
             "table_shard_num = 16\n"
             "shard_key = email\n"
             "strategy = hash\n",
             ports[0]);
    return tu_write(dir, "it.ini", text);
}

static void exec_sv(const char *sql, dal_value_t sv, const dal_value_t *params, size_t n)
{
    dal_query_opts_t o;
    dal_error_t err;

    memset(&o, 0, sizeof o);
    o.shard_value = &sv;
    tu_must(dal_exec(dal, &o, sql, params, n, NULL, &err), &err, sql);
}

static void global_setup(void)
{
    tu_ports(ports, NODES);
    setenv("DAL_TEST_PASSWORD", "dalpass", 1);
    dir = tu_mkdtemp();
    ini = make_ini();
    dal = tu_open(ini);
    /* DDL through dal creates every physical table on its node */
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS wm_food");
    tu_setup_exec(dal, NULL, "CREATE TABLE wm_food (id BIGINT PRIMARY KEY, "
                  "wm_poi_id BIGINT NOT NULL, name VARCHAR(100), price DOUBLE, note BLOB)");
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS wm_order");
    tu_setup_exec(dal, NULL, "CREATE TABLE wm_order (id BIGINT PRIMARY KEY, "
                  "created BIGINT NOT NULL)");
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS users");
    tu_setup_exec(dal, NULL, "CREATE TABLE users (email VARCHAR(100) PRIMARY KEY, n INT)");
}

static void global_teardown(void)
{
    dal_close(dal);
    tu_rmtree(dir);
    free(ini);
    free(dir);
}

/* The DDL put exactly tables wm_food_(25i) .. wm_food_(25i+24) on server i. */
START_TEST(test_ddl_created_layout)
{
    int i;

    for (i = 0; i < NODES; i++) {
        char sql[256], db[32];
        snprintf(db, sizeof db, "product_%d", i);
        snprintf(sql, sizeof sql,
                 "SELECT COUNT(*), MIN(CAST(SUBSTRING(table_name, 9) AS UNSIGNED)), "
                 "MAX(CAST(SUBSTRING(table_name, 9) AS UNSIGNED)) FROM information_schema.tables "
                 "WHERE table_schema = '%s' AND table_name LIKE 'wm\\_food\\_%%'",
                 db);
        ck_assert_int_eq(tu_direct_value(ports[i], db, sql), 25);
    }
}
END_TEST

/* Rows written through dal land where MTDDL's formula says, and nowhere else. */
START_TEST(test_mod_placement)
{
    const int N = 400;
    long long total = 0;
    int i, t;

    srand(42);
    for (i = 0; i < N; i++) {
        long long poi = (long long)rand() % 1000000;
        dal_value_t p[3] = {dal_int(i + 1), dal_int(poi), dal_str("food")};
        exec_sv("INSERT INTO wm_food (id, wm_poi_id, name) VALUES (?, ?, ?)", dal_int(poi), p,
                3);
    }
    for (t = 0; t < TABLES; t++) {
        int node = t / 25;
        char sql[256], db[32];
        snprintf(db, sizeof db, "product_%d", node);
        /* every row in wm_food_t has wm_poi_id % 100 == t */
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM wm_food_%d WHERE wm_poi_id %% 100 <> %d",
                 t, t);
        ck_assert_int_eq(tu_direct_value(ports[node], db, sql), 0);
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM wm_food_%d", t);
        total += tu_direct_value(ports[node], db, sql);
    }
    ck_assert_int_eq(total, N);
}
END_TEST

/* dal's answer equals the server's own answer, row for row. */
START_TEST(test_read_back_differential)
{
    const char *name = "it's a \"quoted\" \\ name; DROP TABLE x; --";
    dal_value_t p[5] = {dal_int(100001), dal_int(777), dal_str(name), dal_double(12.5),
                        dal_blob("\0\x01\xff", 3)};
    dal_value_t q = dal_int(100001);
    dal_query_opts_t o;
    dal_result_t *r = NULL;
    dal_error_t err;
    size_t len;
    const char *txt;

    exec_sv("INSERT INTO wm_food (id, wm_poi_id, name, price, note) VALUES (?, ?, ?, ?, ?)",
            dal_int(777), p, 5);
    memset(&o, 0, sizeof o);
    o.shard_value = &p[1];
    tu_must(dal_query(dal, &o, "SELECT id, name, price, note, NULL FROM wm_food WHERE id = ?", &q,
                      1, &r, &err),
            &err, "select");
    ck_assert_uint_eq(dal_result_column_count(r), 5);
    ck_assert_str_eq(dal_result_column_name(r, 1), "name");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_int(r, 0), 100001);
    ck_assert_str_eq(dal_result_text(r, 1, NULL), name);
    ck_assert(dal_result_double(r, 2) == 12.5);
    txt = dal_result_text(r, 3, &len);
    ck_assert_uint_eq(len, 3);
    ck_assert(memcmp(txt, "\0\x01\xff", 3) == 0);
    ck_assert(dal_result_is_null(r, 4));
    ck_assert_ptr_null(dal_result_text(r, 4, NULL));
    ck_assert_int_eq(dal_result_next(r, &err), 0);
    dal_result_free(r);
    /* 777 % 100 = 77 -> node 3, read straight from the server */
    ck_assert_int_eq(tu_direct_value(ports[3], "product_3",
                                     "SELECT COUNT(*) FROM wm_food_77 WHERE id = 100001 AND name = "
                                     "'it\\'s a \"quoted\" \\\\ name; DROP TABLE x; --'"),
                     1);
}
END_TEST

START_TEST(test_affected_rows)
{
    dal_value_t p[3];
    uint64_t n = 0;
    dal_query_opts_t o;
    dal_value_t sv = dal_int(5150);
    dal_error_t err;
    int i;

    for (i = 0; i < 5; i++) {
        p[0] = dal_int(200000 + i);
        p[1] = dal_int(5150);
        p[2] = dal_str("x");
        exec_sv("INSERT INTO wm_food (id, wm_poi_id, name) VALUES (?, ?, ?)", sv, p, 3);
    }
    memset(&o, 0, sizeof o);
    o.shard_value = &sv;
    tu_must(dal_exec(dal, &o, "UPDATE wm_food SET name = 'y' WHERE wm_poi_id = 5150", NULL, 0, &n,
                     &err),
            &err, "update");
    ck_assert_uint_eq(n, 5);
    tu_must(dal_exec(dal, &o, "DELETE FROM wm_food WHERE wm_poi_id = 5150 AND id < 200002", NULL,
                     0, &n, &err),
            &err, "delete");
    ck_assert_uint_eq(n, 2);
    /* 5150 % 100 = 50 -> node 2 */
    ck_assert_int_eq(tu_direct_value(ports[2], "product_2",
                                     "SELECT COUNT(*) FROM wm_food_50 WHERE wm_poi_id = 5150"),
                     3);
}
END_TEST

/* Server errors name the node and carry errno and SQLSTATE. */
START_TEST(test_server_error)
{
    dal_query_opts_t o;
    dal_value_t sv = dal_int(30);
    dal_result_t *r = NULL;
    dal_error_t err;
    char where[64];
    int rc;

    memset(&o, 0, sizeof o);
    o.shard_value = &sv;
    rc = dal_query(dal, &o, "SELECT no_such_column FROM wm_food", NULL, 0, &r, &err);
    ck_assert_int_eq(rc, DAL_ESERVER);
    ck_assert_uint_eq(err.mysql_errno, 1054);
    ck_assert_str_eq(err.sqlstate, "42S22");
    snprintf(where, sizeof where, "127.0.0.1:%d", ports[1]);
    ck_assert_msg(strstr(err.message, "dbProductSku1") && strstr(err.message, where), "%s",
                  err.message);
    ck_assert_msg(strstr(err.message, "dalpass") == NULL, "password leaked: %s", err.message);
    /* the connection survived the error: the next statement works */
    tu_must(dal_query(dal, &o, "SELECT COUNT(*) FROM wm_food", NULL, 0, &r, &err), &err, "after");
    dal_result_free(r);
}
END_TEST

/* A CALL's results: every one, chained (dal_result_next_set), read
 * before dal_query returns, so the procedure has finished (a statement
 * on another connection sees what it wrote), and an error it raises after
 * its rows is the statement's error instead of being dropped. */
static void must_exec(const char *sql)
{
    dal_error_t err;

    tu_must(dal_exec(dal, NULL, sql, NULL, 0, NULL, &err), &err, sql);
}

START_TEST(test_call_results)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc;

    must_exec("DROP TABLE IF EXISTS call_log");
    must_exec("CREATE TABLE call_log (a INT)");
    must_exec("DROP PROCEDURE IF EXISTS call_late_write");
    must_exec("CREATE PROCEDURE call_late_write() BEGIN SELECT 1 AS one; DO SLEEP(0.3); "
              "INSERT INTO call_log VALUES (1); END");
    must_exec("DROP PROCEDURE IF EXISTS call_two_sets");
    must_exec("CREATE PROCEDURE call_two_sets() BEGIN SELECT 1 AS one; SELECT 2 AS two, 3 AS three; "
              "END");
    must_exec("DROP PROCEDURE IF EXISTS call_fails");
    must_exec("CREATE PROCEDURE call_fails() BEGIN SELECT 1 AS one; "
              "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'raised after rows'; END");

    tu_must(dal_query(dal, NULL, "CALL call_late_write()", NULL, 0, &r, &err), &err, "call");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_str_eq(dal_result_text(r, 0, NULL), "1");
    /* then the procedure's final status, as a server sends it */
    ck_assert_ptr_nonnull(dal_result_next_set(r));
    ck_assert_uint_eq(dal_result_column_count(dal_result_next_set(r)), 0);
    ck_assert_uint_eq(dal_result_affected_rows(dal_result_next_set(r)), 1);
    ck_assert_ptr_null(dal_result_next_set(dal_result_next_set(r)));
    dal_result_free(r);

    /* every result set, in order */
    tu_must(dal_query(dal, NULL, "CALL call_two_sets()", NULL, 0, &r, &err), &err, "two sets");
    {
        dal_result_t *set = dal_result_next_set(r);
        ck_assert_uint_eq(dal_result_column_count(r), 1);
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        ck_assert_str_eq(dal_result_text(r, 0, NULL), "1");
        ck_assert_int_eq(dal_result_next(r, &err), 0);
        ck_assert_ptr_nonnull(set);
        ck_assert_uint_eq(dal_result_column_count(set), 2);
        ck_assert_int_eq(dal_result_next(set, &err), 1);
        ck_assert_str_eq(dal_result_text(set, 1, NULL), "3");
        ck_assert_int_eq(dal_result_next(set, &err), 0);
        set = dal_result_next_set(set);
        ck_assert_ptr_nonnull(set);
        ck_assert_uint_eq(dal_result_column_count(set), 0);
        ck_assert_ptr_null(dal_result_next_set(set));
    }
    dal_result_free(r);
    tu_must(dal_query(dal, NULL, "SELECT 1", NULL, 0, &r, &err), &err, "plain select");
    ck_assert_ptr_null(dal_result_next_set(r));
    dal_result_free(r);
    /* the pool may hand out another connection: the write must be done */
    tu_must(dal_query(dal, NULL, "SELECT COUNT(*) FROM call_log", NULL, 0, &r, &err), &err,
            "count");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_str_eq(dal_result_text(r, 0, NULL), "1");
    dal_result_free(r);

    r = NULL;
    rc = dal_query(dal, NULL, "CALL call_fails()", NULL, 0, &r, &err);
    ck_assert_int_eq(rc, DAL_ESERVER);
    ck_assert_ptr_null(r);
    ck_assert_uint_eq(err.mysql_errno, 1644);
    ck_assert_msg(strstr(err.message, "raised after rows") && strstr(err.message, "plain"), "%s",
                  err.message);
    must_exec("SELECT 1");

    /* in a transaction the session holds its connection: the same, and
     * that connection stays in step for the session's next statement */
    {
        dal_session_t *s = NULL;
        tu_must(dal_session_open(dal, &s, &err), &err, "session");
        tu_must(dal_session_exec(s, NULL, "BEGIN", NULL, 0, NULL, &err), &err, "begin");
        tu_must(dal_session_query(s, NULL, "CALL call_late_write()", NULL, 0, &r, &err), &err,
                "call in a transaction");
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        dal_result_free(r);
        r = NULL;
        rc = dal_session_query(s, NULL, "CALL call_fails()", NULL, 0, &r, &err);
        ck_assert_int_eq(rc, DAL_ESERVER);
        ck_assert_uint_eq(err.mysql_errno, 1644);
        /* kept: the set before the error, then the error as the last set */
        dal_session_keep_sets(s, 1);
        tu_must(dal_session_query(s, NULL, "CALL call_fails()", NULL, 0, &r, &err), &err,
                "the sets before the error kept");
        ck_assert_int_eq(dal_result_set_error(r, NULL), 0);
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        ck_assert_str_eq(dal_result_text(r, 0, NULL), "1");
        ck_assert_int_eq(dal_result_set_error(dal_result_next_set(r), &err), DAL_ESERVER);
        ck_assert_uint_eq(err.mysql_errno, 1644);
        ck_assert_msg(strstr(err.message, "raised after rows") != NULL, "%s", err.message);
        ck_assert_ptr_null(dal_result_next_set(dal_result_next_set(r)));
        dal_result_free(r);
        r = NULL;
        dal_session_keep_sets(s, 0);
        tu_must(dal_session_query(s, NULL, "SELECT COUNT(*) FROM call_log", NULL, 0, &r, &err),
                &err, "count in the transaction");
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        ck_assert_str_eq(dal_result_text(r, 0, NULL), "2");
        dal_result_free(r);
        tu_must(dal_session_exec(s, NULL, "COMMIT", NULL, 0, NULL, &err), &err, "commit");
        dal_session_close(s);
    }

    must_exec("DROP PROCEDURE call_late_write");
    must_exec("DROP PROCEDURE call_fails");
    must_exec("DROP PROCEDURE call_two_sets");
    must_exec("DROP TABLE call_log");
}
END_TEST

START_TEST(test_connect_error)
{
    dal_query_opts_t o;
    dal_error_t err;
    int rc;

    memset(&o, 0, sizeof o);
    o.datasource = "closed";
    rc = dal_exec(dal, &o, "SELECT 1", NULL, 0, NULL, &err);
    ck_assert_int_eq(rc, DAL_ECONNECT);
    ck_assert_msg(strstr(err.message, "datasource closed") && strstr(err.message, "127.0.0.1:1"),
                  "%s", err.message);
    ck_assert_msg(strstr(err.message, "t0psecret") == NULL, "password leaked: %s", err.message);
}
END_TEST

/* Unsharded statements go to default_datasource or the one named. */
START_TEST(test_explicit_datasource)
{
    dal_query_opts_t o;
    dal_result_t *r = NULL;
    dal_error_t err;

    memset(&o, 0, sizeof o);
    tu_must(dal_exec(dal, NULL, "CREATE TABLE IF NOT EXISTS kv (k INT PRIMARY KEY, v INT)", NULL, 0,
                     NULL, &err),
            &err, "create kv");
    tu_must(dal_exec(dal, NULL, "REPLACE INTO kv VALUES (1, 10)", NULL, 0, NULL, &err), &err,
            "replace");
    ck_assert_int_eq(tu_direct_value(ports[0], "plain", "SELECT v FROM kv WHERE k = 1"), 10);
    o.datasource = "dbProductSku2";
    tu_must(dal_query(dal, &o, "SELECT DATABASE()", NULL, 0, &r, &err), &err, "database()");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_str_eq(dal_result_text(r, 0, NULL), "product_2");
    dal_result_free(r);
}
END_TEST

/* range and hash tables: the row is on the node and table dal_explain names. */
static void check_placed(const char *table, dal_value_t sv, const char *where)
{
    dal_query_opts_t o;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    char sql[256], db[32];
    int node;

    memset(&o, 0, sizeof o);
    o.shard_value = &sv;
    snprintf(sql, sizeof sql, "SELECT 1 FROM %s", table);
    tu_must(dal_explain(dal, &o, sql, NULL, 0, &plan, &err), &err, "explain");
    node = dal_plan_datasource(plan, 0)[strlen("dbProductSku")] - '0';
    snprintf(db, sizeof db, "product_%d", node);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE %s", dal_plan_table(plan, 0),
             where);
    ck_assert_msg(tu_direct_value(ports[node], db, sql) == 1, "%s not found on %s", where, db);
    dal_plan_free(plan);
}

START_TEST(test_range_and_hash)
{
    static const long long created[] = {0, 99, 100, 450, 799};
    static const char *emails[] = {"a@example.com", "bob@example.org", "Zoë@example.net"};
    dal_query_opts_t o;
    dal_value_t sv, p[2];
    dal_error_t err;
    char where[128];
    size_t i;

    for (i = 0; i < sizeof created / sizeof created[0]; i++) {
        p[0] = dal_int((int64_t)i + 1);
        p[1] = dal_int(created[i]);
        exec_sv("INSERT INTO wm_order (id, created) VALUES (?, ?)", p[1], p, 2);
        snprintf(where, sizeof where, "id = %zu AND created = %lld", i + 1, created[i]);
        check_placed("wm_order", p[1], where);
    }
    for (i = 0; i < sizeof emails / sizeof emails[0]; i++) {
        p[0] = dal_str(emails[i]);
        p[1] = dal_int((int64_t)i);
        exec_sv("INSERT INTO users (email, n) VALUES (?, ?)", p[0], p, 2);
        snprintf(where, sizeof where, "n = %zu", i);
        check_placed("users", p[0], where);
    }
    /* out of range: a clear error, nothing written */
    memset(&o, 0, sizeof o);
    sv = dal_int(800);
    o.shard_value = &sv;
    p[0] = dal_int(99);
    p[1] = sv;
    ck_assert_int_eq(dal_exec(dal, &o, "INSERT INTO wm_order (id, created) VALUES (?, ?)", p, 2,
                              NULL, &err),
                     DAL_ESHARD);
    ck_assert_msg(strstr(err.message, "800"), "%s", err.message);
}
END_TEST

/* One dal_t shared by several threads. */
typedef struct worker {
    int id;
    int errors;
} worker_t;

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    int i;

    for (i = 0; i < 150; i++) {
        long long poi = w->id * 100000 + i;
        dal_value_t sv = dal_int(poi), p[3] = {dal_int(10000000 + poi), sv, dal_str("t")};
        dal_query_opts_t o;
        dal_result_t *r = NULL;
        dal_error_t err;

        memset(&o, 0, sizeof o);
        o.shard_value = &sv;
        if (dal_exec(dal, &o, "INSERT INTO wm_food (id, wm_poi_id, name) VALUES (?, ?, ?)", p, 3,
                     NULL, &err) != 0 ||
            dal_query(dal, &o, "SELECT wm_poi_id FROM wm_food WHERE id = ?", &p[0], 1, &r,
                      &err) != 0 ||
            dal_result_next(r, &err) != 1 || dal_result_int(r, 0) != poi)
            w->errors++;
        dal_result_free(r);
    }
    return NULL;
}

START_TEST(test_threads)
{
    pthread_t th[4];
    worker_t w[4];
    int i;

    for (i = 0; i < 4; i++) {
        w[i].id = i + 1;
        w[i].errors = 0;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].errors, 0);
    }
}
END_TEST

/* One INSERT with rows for many nodes: split, and every row lands where
 * the formula says. */
START_TEST(test_multirow_insert)
{
    static const long long pois[] = {3, 203, 27, 26, 50, 75, 99, 1000003};
    char sql[1024];
    size_t len, i;
    uint64_t n = 0;
    dal_error_t err;

    len = (size_t)snprintf(sql, sizeof sql, "INSERT INTO wm_food (id, wm_poi_id, name) VALUES ");
    for (i = 0; i < sizeof pois / sizeof pois[0]; i++)
        len += (size_t)snprintf(sql + len, sizeof sql - len, "%s(%zu, %lld, 'multi')",
                                i ? ", " : "", 300000 + i, pois[i]);
    tu_must(dal_exec(dal, NULL, sql, NULL, 0, &n, &err), &err, "multi-row insert");
    ck_assert_uint_eq(n, sizeof pois / sizeof pois[0]);
    for (i = 0; i < sizeof pois / sizeof pois[0]; i++) {
        int t = (int)(pois[i] % 100), node = t / 25;
        char q[256], db[32];
        snprintf(db, sizeof db, "product_%d", node);
        snprintf(q, sizeof q, "SELECT COUNT(*) FROM wm_food_%d WHERE id = %zu AND wm_poi_id = %lld",
                 t, 300000 + i, pois[i]);
        ck_assert_msg(tu_direct_value(ports[node], db, q) == 1, "row %zu not in %s.wm_food_%d", i,
                      db, t);
    }
    /* the shard key read from the SQL routes reads too: IN over three nodes */
    {
        dal_result_t *r = NULL;
        long long sum = 0;
        tu_must(dal_query(dal, NULL, "SELECT wm_poi_id FROM wm_food WHERE wm_poi_id IN (3, 27, 50, "
                          "99) AND name = 'multi'", NULL, 0, &r, &err), &err, "in");
        ck_assert_uint_eq(dal_result_route_count(r), 4);
        while (dal_result_next(r, &err) == 1)
            sum += dal_result_int(r, 0);
        ck_assert_int_eq(sum, 3 + 27 + 50 + 99);
        dal_result_free(r);
    }
}
END_TEST

/* ---------------------------------------------------- NUL bytes in SQL */

#define L(s) s, sizeof s - 1

/* 1 when the row of table `table` (database db on server node) with id has
 * the value whose HEX() is hex in column col. */
static long long hex_is(int node, const char *db, const char *table, const char *col, long id,
                        const char *hex)
{
    char q[256];

    snprintf(q, sizeof q, "SELECT HEX(%s) = '%s' FROM %s WHERE id = %ld", col, hex, table, id);
    return tu_direct_value(ports[node], db, q);
}

/* Statement text with NUL bytes, as a MySQL client may send it (MariaDB
 * Connector/J's client-side prepared statements write a value's 0 byte as
 * a backslash and a raw NUL): inside a string the bytes reach the server,
 * which stores the 0 byte; outside, the statement is a syntax error and
 * runs nowhere -- never cut at the NUL. */
START_TEST(test_nul_bytes)
{
    dal_session_t *s = NULL;
    dal_prepared_t *p = NULL;
    dal_result_t *r = NULL;
    dal_value_t poi = dal_int(42);
    dal_error_t err;
    const char *v;
    size_t n;
    int rc;

    tu_must(dal_exec(dal, NULL, "CREATE OR REPLACE TABLE nul_plain (id INT PRIMARY KEY, "
                     "v VARBINARY(16))", NULL, 0, NULL, &err), &err, "create nul_plain");
    tu_must(dal_exec(dal, NULL, "DELETE FROM wm_food WHERE name LIKE 'nul%'", NULL, 0, NULL, &err),
            &err, "clean wm_food");
    tu_must(dal_session_open(dal, &s, &err), &err, "session");

    /* sharded (wm_poi_id 42: wm_food_42 on server 1), backslash + NUL and a raw NUL */
    tu_must(dal_session_query_len(s, NULL, L("INSERT INTO wm_food (id, wm_poi_id, name, note) "
                                             "VALUES (800001, 42, 'nul', 'a\\\0b')"),
                                  NULL, 0, &r, &err), &err, "sharded backslash NUL");
    dal_result_free(r);
    tu_must(dal_session_query_len(s, NULL, L("INSERT INTO wm_food (id, wm_poi_id, name, note) "
                                             "VALUES (800002, 42, 'nul', 'a\0b')"),
                                  NULL, 0, &r, &err), &err, "sharded raw NUL");
    dal_result_free(r);
    ck_assert_int_eq(hex_is(1, "product_1", "wm_food_42", "note", 800001, "610062"), 1);
    ck_assert_int_eq(hex_is(1, "product_1", "wm_food_42", "note", 800002, "610062"), 1);

    /* unsharded (the default datasource) */
    tu_must(dal_session_query_len(s, NULL, L("INSERT INTO nul_plain VALUES (1, 'a\\\0b'), "
                                             "(2, \"a\0b\") /* \0 */"),
                                  NULL, 0, &r, &err), &err, "unsharded");
    dal_result_free(r);
    ck_assert_int_eq(hex_is(0, "plain", "nul_plain", "v", 1, "610062"), 1);
    ck_assert_int_eq(hex_is(0, "plain", "nul_plain", "v", 2, "610062"), 1);

    /* a NUL outside quotes: DAL_ESQL, nothing deleted anywhere */
    rc = dal_session_query_len(s, NULL, L("DELETE FROM nul_plain\0 WHERE id = 1"), NULL, 0, &r,
                               &err);
    ck_assert_int_eq(rc, DAL_ESQL);
    ck_assert_msg(strstr(err.message, "NUL byte outside a quoted string at offset 21") != NULL,
                  "%s", err.message);
    rc = dal_session_query_len(s, NULL, L("DELETE FROM wm_food\0 WHERE wm_poi_id = 42"), NULL, 0,
                               &r, &err);
    ck_assert_int_eq(rc, DAL_ESQL);
    ck_assert_int_eq(tu_direct_value(ports[0], "plain", "SELECT COUNT(*) FROM nul_plain"), 2);
    ck_assert_int_eq(tu_direct_value(ports[1], "product_1",
                                     "SELECT COUNT(*) FROM wm_food_42 WHERE name = 'nul'"), 2);

    /* a multi-row INSERT split over three servers keeps each row's NULs */
    tu_must(dal_session_query_len(s, NULL, L("INSERT INTO wm_food (id, wm_poi_id, name, note) "
                                             "VALUES (800011, 3, 'nulm', 'x\0y'), "
                                             "(800012, 27, 'nulm', 'p\\\0q'), "
                                             "(800013, 50, 'nulm', '\0')"),
                                  NULL, 0, &r, &err), &err, "multi-row");
    ck_assert_uint_eq(dal_result_affected_rows(r), 3);
    dal_result_free(r);
    ck_assert_int_eq(hex_is(0, "product_0", "wm_food_3", "note", 800011, "780079"), 1);
    ck_assert_int_eq(hex_is(1, "product_1", "wm_food_27", "note", 800012, "700071"), 1);
    ck_assert_int_eq(hex_is(2, "product_2", "wm_food_50", "note", 800013, "00"), 1);

    /* read back through dal, and the 0 byte in a condition, prepared by length */
    tu_must(dal_prepare_len(dal, L("SELECT note FROM wm_food WHERE wm_poi_id = ? AND "
                                   "note = 'a\0b' ORDER BY id"), &p, &err), &err, "prepare");
    tu_must(dal_session_query_prepared(s, NULL, p, &poi, 1, &r, &err), &err, "prepared");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    v = dal_result_text(r, 0, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(v, "a\0b", 3), 0);
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_next(r, &err), 0);
    dal_result_free(r);
    dal_prepared_free(p);

    /* a string shard key holding a NUL routes by all its bytes (users: hash
     * of email), a key that is its prefix is another row */
    tu_must(dal_session_query_len(s, NULL, L("INSERT INTO users VALUES ('nul\0a@x', 7), "
                                             "('nul', 8)"), NULL, 0, &r, &err), &err, "users");
    dal_result_free(r);
    tu_must(dal_session_query_len(s, NULL, L("SELECT n, HEX(email) FROM users WHERE "
                                             "email = 'nul\0a@x'"), NULL, 0, &r, &err),
            &err, "users read");
    ck_assert_uint_eq(dal_result_route_count(r), 1);
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_int(r, 0), 7);
    ck_assert_str_eq(dal_result_text(r, 1, NULL), "6E756C00614078");
    ck_assert_int_eq(dal_result_next(r, &err), 0);
    dal_result_free(r);
    tu_must(dal_exec(dal, NULL, "DELETE FROM users WHERE email LIKE 'nul%'", NULL, 0, NULL, &err),
            &err, "users clean");

    /* a final NUL ends the statement, as on the server */
    tu_must(dal_query_len(dal, NULL, L("SELECT COUNT(*) FROM nul_plain\0"), NULL, 0, &r, &err),
            &err, "final NUL");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_int(r, 0), 2);
    dal_result_free(r);
    dal_session_close(s);
}
END_TEST

/* An INSERT without a column list: dal learns wm_food's column order from
 * its first physical table, finds the shard key by position, splits the
 * rows; INSERT ... SELECT * copies rows shard by shard between tables of
 * one layout. */
static void record_columns(void *user, const char *table, const char *const *cols, size_t n)
{
    char *out = user;
    size_t i;

    strcat(out, table);
    for (i = 0; i < n; i++) {
        strcat(out, i ? "," : ":");
        strcat(out, cols[i]);
    }
    strcat(out, ";");
}

START_TEST(test_insert_without_columns)
{
    static const long long pois[] = {5, 30, 55, 180};
    char cols[1024] = "";
    dal_error_t err;
    uint64_t n = 0;
    size_t i;

    tu_must(dal_exec(dal, NULL, "INSERT INTO wm_food VALUES (700001, 5, 'nc', 1.5, NULL), "
                     "(700002, 30, 'nc', 2, NULL), (700003, 55, 'nc', 3, NULL), "
                     "(700004, 180, 'nc', 4, NULL)", NULL, 0, &n, &err), &err, "insert no columns");
    ck_assert_uint_eq(n, 4);
    for (i = 0; i < 4; i++) {
        int t = (int)(pois[i] % 100), node = t / 25;
        char q[256], db[32];
        snprintf(db, sizeof db, "product_%d", node);
        snprintf(q, sizeof q, "SELECT COUNT(*) FROM wm_food_%d WHERE id = %zu AND name = 'nc'",
                 t, 700001 + i);
        ck_assert_msg(tu_direct_value(ports[node], db, q) == 1, "row %zu not in %s.wm_food_%d", i,
                      db, t);
    }
    tu_must(dal_table_columns(dal, "wm_food", record_columns, cols, &err), &err, "columns");
    ck_assert_str_eq(cols, "wm_food:id,wm_poi_id,name,price,note;");
    /* rows copied shard by shard: each stays on its own shard */
    tu_must(dal_exec(dal, NULL, "CREATE TABLE wm_food_copy LIKE wm_food", NULL, 0, NULL, &err),
            &err, "create copy");
    tu_must(dal_exec(dal, NULL, "INSERT INTO wm_food_copy SELECT * FROM wm_food WHERE name = 'nc'",
                     NULL, 0, &n, &err), &err, "insert select star");
    ck_assert_uint_eq(n, 4);
    for (i = 0; i < 4; i++) {
        int t = (int)(pois[i] % 100), node = t / 25;
        char q[256], db[32];
        snprintf(db, sizeof db, "product_%d", node);
        snprintf(q, sizeof q, "SELECT COUNT(*) FROM wm_food_copy_%d WHERE id = %zu", t,
                 700001 + i);
        ck_assert_msg(tu_direct_value(ports[node], db, q) == 1,
                      "copy %zu not in %s.wm_food_copy_%d", i, db, t);
    }
    /* columns that would move a row to another shard are refused */
    ck_assert_int_eq(dal_exec(dal, NULL, "INSERT INTO wm_food_copy SELECT id, price, name, "
                              "wm_poi_id, note FROM wm_food", NULL, 0, NULL, &err),
                     DAL_EUNSUPPORTED);
    tu_must(dal_exec(dal, NULL, "DROP TABLE wm_food_copy", NULL, 0, NULL, &err), &err, "drop copy");
}
END_TEST

static long long count_poi(long long poi)
{
    int t = (int)(poi % 100), node = t / 25;
    char q[128], db[32];

    snprintf(db, sizeof db, "product_%d", node);
    snprintf(q, sizeof q, "SELECT COUNT(*) FROM wm_food_%d WHERE wm_poi_id = %lld", t, poi);
    return tu_direct_value(ports[node], db, q);
}

/* Transactions stay on one node; a statement for another node is refused
 * and the transaction is still there to roll back or commit. */
START_TEST(test_transactions)
{
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    uint64_t n;

    ck_assert_int_eq(dal_exec(dal, NULL, "BEGIN", NULL, 0, NULL, &err), DAL_ESTATE);
    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_begin(s, &err), &err, "begin");
    ck_assert(dal_in_transaction(s));
    tu_must(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES (400001, 4005)",
                             NULL, 0, &n, &err), &err, "insert 1");
    ck_assert_str_eq(dal_transaction_datasource(s), "dbProductSku0");
    tu_must(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES (400002, 4105)",
                             NULL, 0, &n, &err), &err, "insert 2, same table");
    /* seen inside the transaction, not outside */
    tu_must(dal_session_query(s, NULL, "SELECT COUNT(*) FROM wm_food WHERE wm_poi_id = 4005", NULL,
                              0, &r, &err), &err, "select in txn");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_int_eq(dal_result_int(r, 0), 1);
    dal_result_free(r);
    /* a column named by its text shows the statement's text, as outside a
     * session (the node ran wm_food_5.wm_poi_id + 1) */
    tu_must(dal_session_query(s, NULL, "SELECT wm_food.wm_poi_id + 1 FROM wm_food WHERE "
                              "wm_poi_id = 4005", NULL, 0, &r, &err), &err, "select expression");
    ck_assert_str_eq(dal_result_column_name(r, 0), "wm_food.wm_poi_id + 1");
    dal_result_free(r);
    ck_assert_int_eq(count_poi(4005), 0);
    /* another node: refused, transaction intact */
    ck_assert_int_eq(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES "
                                      "(400003, 4030)", NULL, 0, &n, &err), DAL_EROUTE);
    ck_assert_msg(strstr(err.message, "dbProductSku0") && strstr(err.message, "dbProductSku1"),
                  "%s", err.message);
    ck_assert(dal_in_transaction(s));
    tu_must(dal_session_exec(s, NULL, "SELECT * FROM wm_food", NULL, 0, &n, &err), &err,
            "a read of every node");
    tu_must(dal_rollback(s, &err), &err, "rollback");
    ck_assert_int_eq(count_poi(4005), 0);
    ck_assert_int_eq(count_poi(4105), 0);
    /* the SQL words work too, and COMMIT makes it durable */
    tu_must(dal_session_exec(s, NULL, "START TRANSACTION", NULL, 0, &n, &err), &err, "start");
    tu_must(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES (400004, 4007)",
                             NULL, 0, &n, &err), &err, "insert");
    tu_must(dal_session_exec(s, NULL, "COMMIT", NULL, 0, &n, &err), &err, "commit");
    ck_assert(!dal_in_transaction(s));
    ck_assert_int_eq(count_poi(4007), 1);
    /* closing a session rolls back what is open */
    tu_must(dal_begin(s, &err), &err, "begin 2");
    tu_must(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES (400005, 4009)",
                             NULL, 0, &n, &err), &err, "insert");
    dal_session_close(s);
    ck_assert_int_eq(count_poi(4009), 0);
}
END_TEST

/* The one number a statement of s returns. */
static long long session_value(dal_session_t *s, const char *sql)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    long long v;

    tu_must(dal_session_query(s, NULL, sql, NULL, 0, &r, &err), &err, sql);
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    v = dal_result_int(r, 0);
    dal_result_free(r);
    return v;
}

/* transaction_mode single with autocommit 0 (what Python's drivers do): a
 * point read, a read of every node, then a write on another node, in one
 * transaction; a write on a second node is refused, naming datasources
 * (4 of them, holding 100 tables). */
START_TEST(test_transaction_reads_across_nodes)
{
    dal_session_t *s = NULL, *other = NULL;
    dal_error_t err;
    uint64_t n;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_session_open(dal, &other, &err), &err, "session 2");
    tu_must(dal_session_exec(other, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES "
                             "(410001, 4011)", NULL, 0, &n, &err), &err, "a row on node 0");
    tu_must(dal_session_set_var(s, "autocommit", "0", &err), &err, "autocommit 0");
    ck_assert_int_eq(session_value(s, "SELECT COUNT(*) FROM wm_food WHERE wm_poi_id = 4011"), 1);
    ck_assert(dal_in_transaction(s));
    ck_assert_int_eq(session_value(s, "SELECT COUNT(*) FROM wm_food WHERE id BETWEEN 410000 AND 410999"), 1);
    /* a write on node 1, which the transaction had only read */
    tu_must(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES "
                             "(410002, 4030)", NULL, 0, &n, &err), &err, "write on node 1");
    ck_assert_str_eq(dal_transaction_datasource(s), "dbProductSku1");
    /* read back on its node's transaction, and across the nodes */
    ck_assert_int_eq(session_value(s, "SELECT COUNT(*) FROM wm_food WHERE id BETWEEN 410000 AND 410999"), 2);
    ck_assert_int_eq(count_poi(4030), 0);
    /* node 0's reads are its own snapshot: a row committed there since is
     * not seen */
    tu_must(dal_session_exec(other, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES "
                             "(410003, 4111)", NULL, 0, &n, &err), &err, "another on node 0");
    ck_assert_int_eq(session_value(s, "SELECT COUNT(*) FROM wm_food WHERE wm_poi_id IN "
                                      "(4011, 4111)"), 1);
    /* a second node to write on: refused, the transaction intact */
    ck_assert_int_eq(dal_session_exec(s, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES "
                                      "(410004, 4060)", NULL, 0, &n, &err), DAL_EROUTE);
    ck_assert_msg(strstr(err.message, "dbProductSku1") && strstr(err.message, "dbProductSku2"),
                  "%s", err.message);
    ck_assert_int_eq(dal_session_exec(s, NULL, "UPDATE wm_food SET price = 1 WHERE id = 410002",
                                      NULL, 0, &n, &err), DAL_EROUTE);
    ck_assert_msg(strstr(err.message, "4 datasources: dbProductSku0, dbProductSku1, "
                                      "dbProductSku2, dbProductSku3") != NULL, "%s", err.message);
    ck_assert(dal_in_transaction(s));
    tu_must(dal_commit(s, &err), &err, "commit");
    ck_assert_int_eq(count_poi(4030), 1);
    ck_assert_int_eq(count_poi(4060), 0);
    /* ROLLBACK ends every node's part */
    ck_assert_int_eq(session_value(s, "SELECT COUNT(*) FROM wm_food WHERE id BETWEEN 410000 AND 410999"), 3);
    tu_must(dal_session_exec(s, NULL, "DELETE FROM wm_food WHERE wm_poi_id = 4030", NULL, 0,
                             &n, &err), &err, "delete on node 1");
    tu_must(dal_rollback(s, &err), &err, "rollback");
    ck_assert_int_eq(count_poi(4030), 1);
    tu_must(dal_session_set_var(s, "autocommit", "1", &err), &err, "autocommit 1");
    tu_must(dal_session_exec(s, NULL, "DELETE FROM wm_food WHERE id BETWEEN 410000 AND 410999", NULL, 0, &n,
                             &err), &err, "clean up");
    dal_session_close(other);
    dal_session_close(s);
}
END_TEST

/* Column col of r is described as a server describes @@autocommit:
 * BIGINT, length 1, nullable, named name. */
static void assert_autocommit_column(dal_result_t *r, size_t col, const char *name)
{
    dal_column_info_t ci = {.struct_size = sizeof ci};

    ck_assert_int_eq(dal_result_column_info(r, col, &ci), 0);
    ck_assert_str_eq(ci.name, name);
    ck_assert_int_eq(ci.type, DAL_COLUMN_LONGLONG);
    ck_assert_uint_eq(ci.length, 1);
    ck_assert_uint_eq(ci.flags & DAL_COLUMN_FLAG_NOT_NULL, 0);
}

/* autocommit is the session's own: after autocommit 0, @@autocommit and
 * @@session.autocommit read 0 (the servers' connections keep 1), with the
 * names and types a server gives them; @@global.autocommit is the
 * server's. */
START_TEST(test_autocommit_read_back)
{
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    const char *q = "SELECT @@autocommit, @@session.autocommit, @@SESSION.AutoCommit, "
                    "@@local.autocommit AS ac, @@autocommit + 1, @@global.autocommit";

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    ck_assert_int_eq(session_value(s, "SELECT @@autocommit"), 1);
    tu_must(dal_session_set_var(s, "autocommit", "0", &err), &err, "autocommit 0");
    tu_must(dal_session_query(s, NULL, q, NULL, 0, &r, &err), &err, q);
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    assert_autocommit_column(r, 0, "@@autocommit");
    assert_autocommit_column(r, 1, "@@session.autocommit");
    assert_autocommit_column(r, 2, "@@SESSION.AutoCommit");
    assert_autocommit_column(r, 3, "ac");
    ck_assert_str_eq(dal_result_column_name(r, 4), "@@autocommit + 1");
    ck_assert_int_eq(dal_result_int(r, 0), 0);
    ck_assert_int_eq(dal_result_int(r, 1), 0);
    ck_assert_int_eq(dal_result_int(r, 2), 0);
    ck_assert_int_eq(dal_result_int(r, 3), 0);
    ck_assert_int_eq(dal_result_int(r, 4), 1);
    ck_assert_int_eq(dal_result_int(r, 5), 1);
    dal_result_free(r);
    /* with a table, on every node, and in a WHERE */
    ck_assert_int_eq(session_value(s, "SELECT @@autocommit FROM wm_food LIMIT 1"), 0);
    ck_assert_int_eq(session_value(s, "SELECT COUNT(*) FROM wm_food WHERE @@autocommit = 1"), 0);
    tu_must(dal_commit(s, &err), &err, "commit");
    tu_must(dal_session_set_var(s, "autocommit", "ON", &err), &err, "autocommit 1");
    ck_assert_int_eq(session_value(s, "SELECT @@session.autocommit"), 1);
    dal_session_close(s);
}
END_TEST

/* Statements through dal show up in the Prometheus metrics with the
 * right counts, and trace ids reach the server as a comment. */
START_TEST(test_metrics_end_to_end)
{
    char text[4096], *path, *body = NULL, series[256];
    int port = (int)tu_free_port(), i;
    dal_value_t sv;
    dal_query_opts_t o;
    dal_error_t err;
    dal_t *m = NULL;
    size_t len;

    len = (size_t)snprintf(text, sizeof text, "[monitor prom]\nplugin = prometheus\n"
                           "address = 127.0.0.1:%d\n", port);
    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[table wm_food]\ndatasource = dbProductSku\ndb_shard_num = 4\n"
             "table_shard_num = 100\nshard_key = wm_poi_id\nstrategy = mod\n");
    path = tu_write(dir, "metrics.ini", text);
    tu_must(dal_open(path, NULL, &m, &err), &err, "open with prometheus");
    memset(&o, 0, sizeof o);
    o.trace_id = "e2e-trace-1";
    for (i = 0; i < 7; i++) {
        dal_result_t *r = NULL;
        sv = dal_int(12345);
        tu_must(dal_query(m, &o, "SELECT COUNT(*) FROM wm_food WHERE wm_poi_id = ?", &sv, 1, &r,
                          &err),
                &err, "select");
        dal_result_free(r);
    }
    /* a scatter: 100 physical executions */
    tu_must(dal_exec(m, &o, "SELECT id FROM wm_food WHERE name = 'none'", NULL, 0, NULL, &err),
            &err, "scatter");
    ck_assert_msg(tu_http((unsigned)port, "GET /metrics HTTP/1.0\r\n\r\n", &body) == 200,
                  "no metrics on 127.0.0.1:%d", port);
    ck_assert_msg(tu_metric(body, "dal_statements_total{kind=\"select\",table=\"wm_food\"}") == 8,
                  "statements: %s", body);
    snprintf(series, sizeof series,
             "dal_executions_total{datasource=\"dbProductSku1\",server=\"127.0.0.1:%d\"}", ports[1]);
    /* 7 point selects on node 1 (12345 -> wm_food_45) + 25 scatter tables */
    ck_assert_msg(tu_metric(body, series) == 32, "%s = %g in: %.2000s", series, tu_metric(body, series),
                  body);
    free(body);
    dal_close(m);
    free(path);
}
END_TEST

/* INSERTs into a table with id_column/idgen get Leaf IDs before routing:
 * the ID is the shard key here, so each row must land where its ID says;
 * the IDs come back on the result and never repeat. */
START_TEST(test_generated_ids)
{
    char text[4096], *path;
    int64_t seen[64];
    char note[64];           /* the note each seen ID's row must have */
    size_t nseen = 0, n, i, j;
    const int64_t *ids;
    dal_result_t *r = NULL;
    dal_value_t p[2];
    dal_error_t err;
    dal_t *g = NULL;
    dal_prepared_t *prep = NULL;
    int mport = (int)tu_free_port(), k;
    char *body = NULL;
    size_t len = 0;

    len = (size_t)snprintf(text, sizeof text, "[monitor prom]\nplugin = prometheus\n"
                           "address = 127.0.0.1:%d\n", mport);
    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[datasource plain]\nmaster = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
             "[idgen orders]\nplugin = leaf\ndatasource = plain\nstep = 10\n"
             "[table gen_order]\ndatasource = dbProductSku\ndb_shard_num = 4\n"
             "table_shard_num = 8\nshard_key = id\nstrategy = mod\n"
             "id_column = id\nidgen = orders\n", ports[0]);
    path = tu_write(dir, "ids.ini", text);
    tu_must(dal_open(path, NULL, &g, &err), &err, "open with idgen");
    tu_must(dal_setup_idgens(g, NULL, NULL, NULL, &err), &err, "setup idgens");
    dal_exec(g, NULL, "DROP TABLE IF EXISTS gen_order", NULL, 0, NULL, &err);
    tu_must(dal_exec(g, NULL, "CREATE TABLE gen_order (id BIGINT PRIMARY KEY, note VARCHAR(20))",
                     NULL, 0, NULL, &err), &err, "create");
    /* the id column left out: one ID per row, several rows, several nodes;
     * from the second time on the statement's remembered rewrite is used;
     * every other time as a prepared statement (its analysis is replaced
     * by the filled one's for the call, the handle's stays) */
    tu_must(dal_prepare(g, "INSERT INTO gen_order (note) VALUES ('a'), ('b'), (?)", &prep, &err),
            &err, "prepare insert");
    for (k = 0; k < 6; k++) {
        p[0] = dal_str("c");
        if (k % 2)
            tu_must(dal_query_prepared(g, NULL, prep, p, 1, &r, &err), &err, "prepared insert");
        else
            tu_must(dal_query(g, NULL, "INSERT INTO gen_order (note) VALUES ('a'), ('b'), (?)", p,
                              1, &r, &err), &err, "insert without id");
        ck_assert_uint_eq(dal_result_affected_rows(r), 3);
        ids = dal_result_generated_ids(r, &n);
        ck_assert_uint_eq(n, 3);
        for (i = 0; i < n; i++) {
            note[nseen] = "abc"[i];
            seen[nseen++] = ids[i];
        }
        dal_result_free(r);
    }
    /* NULL given for the id, literally and as a parameter */
    p[0] = dal_null();
    p[1] = dal_str("x");
    tu_must(dal_query(g, NULL, "INSERT INTO gen_order (id, note) VALUES (NULL, 'n'), (?, ?)", p, 2,
                      &r, &err), &err, "insert with NULL ids");
    ids = dal_result_generated_ids(r, &n);
    ck_assert_uint_eq(n, 2);
    for (i = 0; i < n; i++) {
        note[nseen] = "nx"[i];
        seen[nseen++] = ids[i];
    }
    dal_result_free(r);
    /* all distinct, and each row on the node and table its ID maps to */
    for (i = 0; i < nseen; i++) {
        int t = (int)(seen[i] % 8), node = t / 2;
        char q[160], db[32];
        for (j = 0; j < i; j++)
            ck_assert_msg(seen[i] != seen[j], "ID %lld issued twice", (long long)seen[i]);
        snprintf(db, sizeof db, "product_%d", node);
        snprintf(q, sizeof q, "SELECT COUNT(*) FROM gen_order_%d WHERE id = %lld AND note = '%c'",
                 t, (long long)seen[i], note[i]);
        ck_assert_msg(tu_direct_value(ports[node], db, q) == 1, "id %lld with note '%c' not in "
                      "%s.gen_order_%d", (long long)seen[i], note[i], db, t);
    }
    /* 20 IDs in segments of 10 or more: the generator reported the
     * segments it fetched (DAL_EVENT_IDGEN through the host's emit) */
    ck_assert_msg(tu_http((unsigned)mport, "GET /metrics HTTP/1.0\r\n\r\n", &body) == 200,
                  "no metrics on 127.0.0.1:%d", mport);
    ck_assert_msg(tu_metric(body, "dal_id_segments_total{generator=\"orders\"}") >= 2,
                  "segments: %.3000s", body);
    ck_assert_msg(tu_metric(body, "dal_id_segment_errors_total{generator=\"orders\"}") == 0,
                  "segment errors: %.3000s", body);
    free(body);
    tu_must(dal_exec(g, NULL, "DROP TABLE gen_order", NULL, 0, NULL, &err), &err, "drop");
    dal_prepared_free(prep);
    dal_close(g);
    free(path);
}
END_TEST


/* Everything a result shows, as text: column names, then the rows. */
static char *dump_result(dal_result_t *r)
{
    size_t cap = 4096, len = 0, i, n = dal_result_column_count(r);
    char *out = malloc(cap);
    dal_error_t err;
    int rc;

    ck_assert_ptr_nonnull(out);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s|", dal_result_column_name(r, i));
    while ((rc = dal_result_next(r, &err)) > 0) {
        len += (size_t)snprintf(out + len, cap - len, "\n");
        for (i = 0; i < n && len < cap; i++) {
            const char *t = dal_result_text(r, i, NULL);
            len += (size_t)snprintf(out + len, cap - len, "%s|", t ? t : "NULL");
        }
        ck_assert_msg(len < cap - 64, "result too long to compare");
    }
    ck_assert_msg(rc == 0, "reading: %s", err.message);
    snprintf(out + len, cap - len, "\naffected %llu",
             (unsigned long long)dal_result_affected_rows(r));
    return out;
}

/* A prepared statement answers exactly what its text answers through
 * dal_query, for every kind of route: one shard, several, every shard with
 * a merge, an unsharded table, range and hash layouts, writes. */
START_TEST(test_prepared_differential)
{
    static const struct {
        const char *sql;
        int nparams;
    } cases[] = {
        {"SELECT id, wm_poi_id, name FROM wm_food WHERE wm_poi_id = ? AND id = ?", 2},
        {"SELECT id, name FROM wm_food WHERE wm_poi_id IN (?, ?) ORDER BY id", 2},
        {"SELECT wm_poi_id, COUNT(*), SUM(id) FROM wm_food WHERE id >= ? AND id < ? "
         "GROUP BY wm_poi_id ORDER BY wm_poi_id LIMIT 5", 2},
        {"SELECT id FROM wm_food WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT 3", 2},
        {"SELECT COUNT(*), ? FROM wm_order WHERE created BETWEEN ? AND ?", 3},
        {"SELECT n FROM users WHERE email = ?", 1},
        {"SELECT ? + ?", 2},
        {"UPDATE wm_food SET name = CONCAT(name, ?) WHERE wm_poi_id = ? AND id >= 600000", 2},
    };
    dal_value_t params[3];
    dal_error_t err;
    size_t i, k;

    for (i = 0; i < 12; i++) {
        dal_value_t row[3] = {dal_int(600000 + (long long)i), dal_int(9000 + (long long)i % 5),
                              dal_str("p")};
        tu_must(dal_exec(dal, NULL, "INSERT INTO wm_food (id, wm_poi_id, name) VALUES (?, ?, ?)",
                         row, 3, NULL, &err), &err, "insert");
    }
    tu_must(dal_exec(dal, NULL, "INSERT INTO users (email, n) VALUES ('prep@x', 7)", NULL, 0,
                     NULL, &err), &err, "insert user");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dal_prepared_t *p = NULL;
        dal_result_t *a = NULL, *b = NULL;
        char *da, *db;

        switch (i) {
        case 4:
            params[0] = dal_str("x");
            params[1] = dal_int(50);
            params[2] = dal_int(650);
            break;
        case 5:
            params[0] = dal_str("prep@x");
            break;
        case 7:
            params[0] = dal_str("+");
            params[1] = dal_int(9003);
            break;
        default:
            params[0] = dal_int(i == 0 ? 9002 : i == 1 ? 9001 : 600000);
            params[1] = dal_int(i == 0 ? 600007 : i == 1 ? 9004 : 600012);
        }
        tu_must(dal_prepare(dal, cases[i].sql, &p, &err), &err, cases[i].sql);
        ck_assert_uint_eq(dal_prepared_param_count(p), (size_t)cases[i].nparams);
        /* twice each: the second execution takes the remembered route */
        for (k = 0; k < 2; k++) {
            tu_must(dal_query(dal, NULL, cases[i].sql, params, (size_t)cases[i].nparams, &a, &err),
                    &err, cases[i].sql);
            tu_must(dal_query_prepared(dal, NULL, p, params, (size_t)cases[i].nparams, &b, &err),
                    &err, cases[i].sql);
            da = dump_result(a);
            db = dump_result(b);
            ck_assert_msg(strcmp(da, db) == 0, "%s\ndal_query:\n%s\nprepared:\n%s",
                          cases[i].sql, da, db);
            free(da);
            free(db);
            dal_result_free(a);
            dal_result_free(b);
        }
        dal_prepared_free(p);
    }
}
END_TEST

/* Bad use of prepared statements: a clear error, nothing run. */
START_TEST(test_prepared_errors)
{
    dal_prepared_t *p = NULL, *begin = NULL;
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_value_t v = dal_int(1);
    dal_error_t err;

    ck_assert_int_eq(dal_prepare(dal, "SELECT 1; SELECT 2", &p, &err), DAL_ESQL);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(dal_prepare(dal, NULL, &p, &err), DAL_EINVAL);
    tu_must(dal_prepare(dal, "SELECT id FROM wm_food WHERE wm_poi_id = ?", &p, &err), &err,
            "prepare");
    ck_assert_int_eq(dal_query_prepared(dal, NULL, p, NULL, 0, &r, &err), DAL_EINVAL);
    ck_assert_msg(strstr(err.message, "placeholders") != NULL, "%s", err.message);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(dal_query_prepared(dal, NULL, NULL, &v, 1, &r, &err), DAL_EINVAL);
    /* a bad argument is named, with the function */
    ck_assert_str_eq(err.message, "dal_query_prepared: the statement is NULL");
    ck_assert_int_eq(dal_query(dal, NULL, "SELECT 1", NULL, 2, &r, &err), DAL_EINVAL);
    ck_assert_str_eq(err.message, "dal_query: params is NULL but nparams is 2");
    ck_assert_int_eq(dal_query(dal, NULL, "SELECT 1", NULL, 0, NULL, &err), DAL_EINVAL);
    ck_assert_str_eq(err.message, "dal_query: out (where the result goes) is NULL");
    ck_assert_int_eq(dal_session_query(NULL, NULL, "SELECT 1", NULL, 0, &r, &err), DAL_EINVAL);
    ck_assert_str_eq(err.message, "dal_session_query: the handle is NULL");
    ck_assert_ptr_null(r);
    /* transactions need a session, prepared or not */
    tu_must(dal_prepare(dal, "BEGIN", &begin, &err), &err, "prepare BEGIN");
    ck_assert_int_eq(dal_query_prepared(dal, NULL, begin, NULL, 0, &r, &err), DAL_ESTATE);
    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_session_query_prepared(s, NULL, begin, NULL, 0, &r, &err), &err, "BEGIN");
    dal_result_free(r);
    ck_assert(dal_in_transaction(s));
    tu_must(dal_session_query_prepared(s, NULL, p, &v, 1, &r, &err), &err, "in txn");
    dal_result_free(r);
    ck_assert_str_eq(dal_transaction_datasource(s), "dbProductSku0"); /* 1 % 100 -> node 0 */
    tu_must(dal_rollback(s, &err), &err, "rollback");
    dal_session_close(s);
    dal_prepared_free(begin);
    dal_prepared_free(p);
    dal_prepared_free(NULL);
}
END_TEST

/* dal_session_cancel from another thread stops the session's statement,
 * on one node and scattered over all of them, with the server's 1317;
 * the session goes on.  Nothing running: a no-op. */
typedef struct cancel_run {
    dal_session_t *s;
    const char *sql;
    atomic_int done;
    int rc;
    dal_error_t err;
} cancel_run_t;

static void *cancel_victim(void *arg)
{
    cancel_run_t *cr = arg;
    dal_result_t *r = NULL;

    cr->rc = dal_session_query(cr->s, NULL, cr->sql, NULL, 0, &r, &cr->err);
    while (cr->rc == 0 && (cr->rc = dal_result_next(r, &cr->err)) == 1)
        ;
    dal_result_free(r);
    atomic_store(&cr->done, 1);
    return NULL;
}

START_TEST(test_session_cancel)
{
    static const char *const sqls[] = {"SELECT SLEEP(30)",
                                       "SELECT COUNT(*) FROM wm_food WHERE SLEEP(3) = 0"};
    dal_session_t *s = NULL;
    dal_error_t err;
    uint64_t n;
    size_t i;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_session_cancel(s, &err), &err, "cancel with nothing running");
    tu_must(dal_exec(dal, NULL, "INSERT INTO wm_food (id, wm_poi_id) VALUES (500001, 5001), "
                     "(500002, 5002)", NULL, 0, &n, &err), &err, "rows to sleep on");
    for (i = 0; i < 2; i++) {
        cancel_run_t cr = {.s = s, .sql = sqls[i]};
        pthread_t t;
        pthread_create(&t, NULL, cancel_victim, &cr);
        /* until the statement runs on its servers, which then stop it */
        while (!atomic_load(&cr.done)) {
            usleep(200000);
            tu_must(dal_session_cancel(s, &err), &err, "cancel");
        }
        pthread_join(t, NULL);
        ck_assert_msg(cr.rc == DAL_ESERVER && cr.err.mysql_errno == 1317, "%s: rc %d: %s",
                      sqls[i], cr.rc, cr.err.message);
    }
    tu_must(dal_session_exec(s, NULL, "SELECT 1", NULL, 0, &n, &err), &err, "after the cancel");
    dal_session_close(s);
    tu_must(dal_exec(dal, NULL, "DELETE FROM wm_food WHERE id IN (500001, 500002)", NULL, 0, &n,
                     &err), &err, "cleanup");
}
END_TEST

/* dal_session_hang_up while the session's statement waits for a named
 * lock another session holds: the server sees its client go and ends the
 * wait (GET_LOCK answers 0, as for a client of its own that left), long
 * before the statement's own timeout; the session's later statements
 * fail, and the lock stays its holder's. */
typedef struct hang_run {
    dal_session_t *s;
    atomic_int done;
    int rc;
    char got[16];
    dal_error_t err;
} hang_run_t;

static void *hang_victim(void *arg)
{
    hang_run_t *hr = arg;
    dal_result_t *r = NULL;

    hr->rc = dal_session_query(hr->s, NULL, "SELECT GET_LOCK('dal_hang_up', 60)", NULL, 0, &r,
                               &hr->err);
    if (hr->rc == 0 && (hr->rc = dal_result_next(r, &hr->err)) == 1) {
        const char *v = dal_result_text(r, 0, NULL);
        snprintf(hr->got, sizeof hr->got, "%s", v != NULL ? v : "NULL");
        hr->rc = 0;
    }
    dal_result_free(r);
    atomic_store(&hr->done, 1);
    return NULL;
}

START_TEST(test_session_hang_up)
{
    dal_session_t *holder = NULL, *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    hang_run_t hr;
    pthread_t t;
    time_t t0;
    int spins;

    tu_must(dal_session_open(dal, &holder, &err), &err, "holder");
    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_session_query(holder, NULL, "SELECT GET_LOCK('dal_hang_up', 0)", NULL, 0, &r,
                              &err), &err, "hold the lock");
    dal_result_free(r);
    memset(&hr, 0, sizeof hr);
    hr.s = s;
    t0 = time(NULL);
    pthread_create(&t, NULL, hang_victim, &hr);
    /* until the statement runs on its server, then a moment for its wait */
    for (spins = 0; dal_session_backend_threads(s, NULL, 0) == 0 && spins < 500; spins++)
        usleep(10000);
    usleep(300000);
    ck_assert_msg(!atomic_load(&hr.done), "GET_LOCK did not wait: rc %d %s", hr.rc, hr.got);
    dal_session_hang_up(s);
    pthread_join(t, NULL);
    ck_assert_msg(hr.rc == 0 && strcmp(hr.got, "0") == 0, "GET_LOCK: rc %d, %s: %s", hr.rc,
                  hr.got, hr.err.message);
    ck_assert_msg(time(NULL) - t0 < 20, "the wait ended after %ld s", (long)(time(NULL) - t0));
    ck_assert_msg(dal_session_query(s, NULL, "SELECT 1", NULL, 0, &r, &err) != 0,
                  "a statement after the hang-up ran");
    dal_result_free(r);
    r = NULL;
    tu_must(dal_session_query(holder, NULL, "SELECT RELEASE_LOCK('dal_hang_up')", NULL, 0, &r,
                              &err), &err, "release");
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    ck_assert_str_eq(dal_result_text(r, 0, NULL), "1");  /* still the holder's */
    dal_result_free(r);
    dal_session_close(s);
    dal_session_close(holder);
}
END_TEST

static Suite *it_suite(void)
{
    Suite *s = suite_create("integration");
    TCase *tc = tcase_create("cluster");

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_test(tc, test_ddl_created_layout);
    tcase_add_test(tc, test_mod_placement);
    tcase_add_test(tc, test_read_back_differential);
    tcase_add_test(tc, test_affected_rows);
    tcase_add_test(tc, test_server_error);
    tcase_add_test(tc, test_call_results);
    tcase_add_test(tc, test_connect_error);
    tcase_add_test(tc, test_explicit_datasource);
    tcase_add_test(tc, test_range_and_hash);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_multirow_insert);
    tcase_add_test(tc, test_nul_bytes);
    tcase_add_test(tc, test_insert_without_columns);
    tcase_add_test(tc, test_transactions);
    tcase_add_test(tc, test_transaction_reads_across_nodes);
    tcase_add_test(tc, test_autocommit_read_back);
    tcase_add_test(tc, test_metrics_end_to_end);
    tcase_add_test(tc, test_generated_ids);
    tcase_add_test(tc, test_prepared_differential);
    tcase_add_test(tc, test_prepared_errors);
    tcase_add_test(tc, test_session_cancel);
    tcase_add_test(tc, test_session_hang_up);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* one process: the tests share the cluster and the dal_t */
    return tu_run(it_suite(), CK_NOFORK);
}
