/*
 * test_columns.c -- an INSERT without a column list after its table
 * changed, against real MariaDB servers (tests/suites/integration.sh's cluster:
 * product_0 and product_1 on the first two servers, `plain` on the first).
 *
 * dal learns a table's column order to find the shard key among the values
 * of `INSERT INTO orders VALUES (...)`.  Dropped and created again with its
 * columns in another order -- through dal, or directly on the servers --
 * the table must be read anew: each answer is compared with a plain table
 * on one server given the same statements.  Physical tables that disagree
 * are refused.  Also: a statement longer than [dal] sql_cache_max_statement
 * runs and is not kept by the analysis cache, and a reload applies new
 * cache bounds at once.
 */
#include <check.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "testutil.h"

#define NODES 2

static int ports[NODES];
static char *dir;
static char *ini;
static dal_t *dal;

/* orders: 4 physical tables, orders_0 and orders_1 on product_0, orders_2
 * and orders_3 on product_1; position = user_id % 4. */
static char *make_ini(const char *cache_bytes)
{
    char text[4096];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "ds", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[dal]\n"
             "sql_cache_max_statement = 1K\n"
             "sql_cache_bytes = %s\n"
             "[table orders]\n"
             "datasource = ds\n"
             "db_shard_num = 2\n"
             "table_shard_num = 4\n"
             "shard_key = user_id\n"
             "strategy = mod\n", cache_bytes);
    return tu_write(dir, "columns.ini", text);
}

/* The reference: a plain table on server 0 given the same statements. */
static void direct(const char *sql)
{
    MYSQL *m = tu_direct(ports[0], "plain");

    tu_exec(m, sql);
    mysql_close(m);
}

static void through_dal(const char *sql)
{
    dal_error_t err;

    tu_must(dal_exec(dal, NULL, sql, NULL, 0, NULL, &err), &err, sql);
}

/* Both: dal's orders and the plain one. */
static void both(const char *sql)
{
    through_dal(sql);
    direct(sql);
}

/* Run before + the physical table's name + after on each physical table
 * of orders, directly. */
static void each_physical(const char *before, const char *after)
{
    int pos;

    for (pos = 0; pos < 4; pos++) {
        MYSQL *m = tu_direct(ports[pos / 2], pos / 2 ? "product_1" : "product_0");
        char sql[512];
        snprintf(sql, sizeof sql, "%sorders_%d%s", before, pos, after);
        tu_exec(m, sql);
        mysql_close(m);
    }
}

/* The rows of sql through dal as "a,b;" text. */
static void dal_rows(const char *sql, char *out, size_t cap)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    size_t len = 0;
    int rc;

    out[0] = '\0';
    tu_must(dal_query(dal, NULL, sql, NULL, 0, &r, &err), &err, sql);
    while ((rc = dal_result_next(r, &err)) == 1) {
        size_t i, n = dal_result_column_count(r);
        for (i = 0; i < n; i++) {
            const char *v = dal_result_text(r, i, NULL);
            len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "," : "", v ? v : "NULL");
        }
        len += (size_t)snprintf(out + len, cap - len, ";");
    }
    tu_must(rc, &err, sql);
    dal_result_free(r);
}

/* The same rows from the plain table. */
static void direct_rows(const char *sql, char *out, size_t cap)
{
    MYSQL *m = tu_direct(ports[0], "plain");
    MYSQL_RES *res;
    MYSQL_ROW row;
    size_t len = 0;

    out[0] = '\0';
    tu_exec(m, sql);
    res = mysql_store_result(m);
    while (res != NULL && (row = mysql_fetch_row(res)) != NULL) {
        unsigned i, n = mysql_num_fields(res);
        for (i = 0; i < n; i++)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "," : "",
                                    row[i] ? row[i] : "NULL");
        len += (size_t)snprintf(out + len, cap - len, ";");
    }
    mysql_free_result(res);
    mysql_close(m);
}

/* dal's answer to sql is the plain table's, and is want. */
static void same_answer(const char *sql, const char *want)
{
    char a[1024], b[1024];

    dal_rows(sql, a, sizeof a);
    direct_rows(sql, b, sizeof b);
    ck_assert_msg(strcmp(a, b) == 0, "%s: dal says '%s', the server '%s'", sql, a, b);
    ck_assert_str_eq(a, want);
}

/* Rows with id on the physical table of position pos, read directly. */
static long long on_physical(int pos, long long id)
{
    char sql[128];

    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM orders_%d WHERE id = %lld", pos, id);
    return tu_direct_value(ports[pos / 2], pos / 2 ? "product_1" : "product_0", sql);
}

static void global_setup(void)
{
    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    ini = make_ini("64M");
    dal = tu_open(ini);
}

static void global_teardown(void)
{
    dal_close(dal);
    tu_rmtree(dir);
    free(ini);
    free(dir);
}

/* The table dropped and created again through dal with its columns the
 * other way round: the next INSERT without a column list follows. */
START_TEST(test_recreated_through_dal)
{
    both("DROP TABLE IF EXISTS orders");
    both("CREATE TABLE orders (id BIGINT, user_id BIGINT)");
    both("INSERT INTO orders VALUES (1, 5)"); /* dal learns (id, user_id) */
    same_answer("SELECT id, user_id FROM orders WHERE user_id = 5", "1,5;");
    ck_assert_int_eq(on_physical(1, 1), 1);
    both("DROP TABLE orders");
    both("CREATE TABLE orders (user_id BIGINT, id BIGINT)");
    both("INSERT INTO orders VALUES (7, 100)"); /* user_id 7, id 100 */
    same_answer("SELECT id, user_id FROM orders WHERE user_id = 7", "100,7;");
    ck_assert_int_eq(on_physical(3, 100), 1); /* 7 % 4 */
    same_answer("SELECT id, user_id FROM orders ORDER BY id", "100,7;");
}
END_TEST

/* The same change made on the servers, behind dal's back. */
START_TEST(test_recreated_on_the_servers)
{
    both("DROP TABLE IF EXISTS orders");
    both("CREATE TABLE orders (id BIGINT, user_id BIGINT)");
    both("INSERT INTO orders VALUES (1, 5)"); /* dal learns (id, user_id) */
    each_physical("DROP TABLE ", "");
    each_physical("CREATE TABLE ", " (user_id BIGINT, id BIGINT)");
    direct("DROP TABLE orders");
    direct("CREATE TABLE orders (user_id BIGINT, id BIGINT)");
    both("INSERT INTO orders VALUES (7, 100)");
    same_answer("SELECT id, user_id FROM orders WHERE user_id = 7", "100,7;");
    ck_assert_int_eq(on_physical(3, 100), 1);
    /* several rows over both nodes, and a column added at the end */
    each_physical("ALTER TABLE ", " ADD COLUMN note VARCHAR(10)");
    direct("ALTER TABLE orders ADD COLUMN note VARCHAR(10)");
    both("INSERT INTO orders VALUES (8, 200, 'a'), (9, 201, 'b'), (10, 202, 'c')");
    same_answer("SELECT id, user_id, note FROM orders WHERE user_id IN (8, 9, 10) ORDER BY id",
                "200,8,a;201,9,b;202,10,c;");
    ck_assert_int_eq(on_physical(0, 200), 1);
    ck_assert_int_eq(on_physical(1, 201), 1);
    ck_assert_int_eq(on_physical(2, 202), 1);
}
END_TEST

/* Physical tables that disagree: a statement writing them is refused and
 * writes nothing. */
START_TEST(test_disagreeing_tables_refused)
{
    dal_error_t err;
    int rc;

    through_dal("DROP TABLE IF EXISTS orders");
    through_dal("CREATE TABLE orders (id BIGINT, user_id BIGINT)");
    through_dal("INSERT INTO orders VALUES (1, 4)");
    {
        MYSQL *m = tu_direct(ports[1], "product_1");
        tu_exec(m, "DROP TABLE orders_3");
        tu_exec(m, "CREATE TABLE orders_3 (user_id BIGINT, id BIGINT)");
        mysql_close(m);
    }
    /* (9, 3): as (id, user_id), user_id 3 goes to orders_3, which has
     * (user_id, id) */
    rc = dal_exec(dal, NULL, "INSERT INTO orders VALUES (9, 3)", NULL, 0, NULL, &err);
    ck_assert_msg(rc == DAL_ESTATE, "rc %d: %s", rc, err.message);
    ck_assert_msg(strstr(err.message, "table orders") != NULL &&
                      strstr(err.message, "orders_3") != NULL &&
                      strstr(err.message, "name the columns") != NULL,
                  "%s", err.message);
    /* a multi-row INSERT touching it too: nothing is written anywhere */
    rc = dal_exec(dal, NULL, "INSERT INTO orders VALUES (10, 4), (11, 3)", NULL, 0, NULL, &err);
    ck_assert_msg(rc == DAL_ESTATE, "rc %d: %s", rc, err.message);
    ck_assert_int_eq(on_physical(3, 9) + on_physical(3, 3) + on_physical(0, 10) +
                         on_physical(3, 11) + on_physical(3, 4), 0);
    /* naming the columns is the way out */
    through_dal("INSERT INTO orders (id, user_id) VALUES (11, 3)");
    ck_assert_int_eq(on_physical(3, 11), 1);
    through_dal("DROP TABLE orders");
}
END_TEST

/* A statement longer than sql_cache_max_statement (1K here) runs right
 * and is not kept. */
START_TEST(test_long_statement_not_cached)
{
    dal_sql_cache_stats_t before, after;
    char sql[8192];
    size_t len;
    int i;

    through_dal("DROP TABLE IF EXISTS orders");
    through_dal("CREATE TABLE orders (id BIGINT, user_id BIGINT, note VARCHAR(40))");
    ck_assert_int_eq(dal_sql_cache_stats(dal, &before), 0);
    ck_assert_uint_eq(before.max_statement, 1024);
    ck_assert_uint_eq(before.max_bytes, 64u << 20);
    len = (size_t)snprintf(sql, sizeof sql, "INSERT INTO orders (id, user_id, note) VALUES ");
    for (i = 0; i < 100; i++)
        len += (size_t)snprintf(sql + len, sizeof sql - len, "%s(%d, %d, 'row %d of the long one')",
                                i ? ", " : "", 1000 + i, i, i);
    ck_assert_uint_gt(len, 1024);
    through_dal(sql);
    through_dal(sql + 0); /* again: analysed again, still right */
    ck_assert_int_eq(dal_sql_cache_stats(dal, &after), 0);
    ck_assert_uint_ge(after.uncached, before.uncached + 2);
    ck_assert_uint_le(after.bytes, after.max_bytes);
    for (i = 0; i < 4; i++) {
        char q[128];
        snprintf(q, sizeof q, "SELECT COUNT(*) FROM orders_%d WHERE id >= 1000", i);
        ck_assert_int_eq(tu_direct_value(ports[i / 2], i / 2 ? "product_1" : "product_0", q),
                         50);
    }
    through_dal("DROP TABLE orders");
}
END_TEST

/* A reload applies new cache bounds at once: a smaller one evicts now. */
START_TEST(test_reload_cache_bounds)
{
    dal_sql_cache_stats_t st;
    dal_error_t err;
    int i;

    through_dal("DROP TABLE IF EXISTS orders");
    through_dal("CREATE TABLE orders (id BIGINT, user_id BIGINT)");
    for (i = 0; i < 100; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT %d, 'a few bytes to fill the cache' FROM orders", i);
        through_dal(sql);
    }
    ck_assert_int_eq(dal_sql_cache_stats(dal, &st), 0);
    ck_assert_uint_gt(st.bytes, 16384);
    free(make_ini("16K"));
    tu_must(dal_reload(dal, &err), &err, "reload");
    ck_assert_int_eq(dal_sql_cache_stats(dal, &st), 0);
    ck_assert_uint_eq(st.max_bytes, 16384);
    ck_assert_uint_le(st.bytes, 16384);
    ck_assert_uint_gt(st.evictions, 0);
    free(make_ini("64M"));
    tu_must(dal_reload(dal, &err), &err, "reload back");
    through_dal("DROP TABLE orders");
}
END_TEST

static Suite *columns_suite(void)
{
    Suite *s = suite_create("columns");
    TCase *tc = tcase_create("live");

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_test(tc, test_recreated_through_dal);
    tcase_add_test(tc, test_recreated_on_the_servers);
    tcase_add_test(tc, test_disagreeing_tables_refused);
    tcase_add_test(tc, test_long_statement_not_cached);
    tcase_add_test(tc, test_reload_cache_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(columns_suite(), CK_NOFORK);
}
