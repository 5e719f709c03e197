/*
 * test_shape.c -- text statements that differ only in literals share the
 * analysis of their shape (sql_shape.h), and route exactly as their own
 * analysis routes them: dal_explain (which never connects) of the same
 * text on a handle with [dal] sql_shape_cache on and on one with it off,
 * over generated statements with literals of every kind, compared route
 * by route, SQL included; and the analyses counted (dal_sql_cache_stats).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "offline.h"
#include "testutil.h"

/* wm_food by mod (100 tables on 4 dbs), wm_food_sku bound to it, acct by
 * hash of a string, rng by range, dict on db2, db3 the default. */
static dal_t *open_shapes(int shape)
{
    char table[1024];
    dal_open_opts_t opts;
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini;

    snprintf(table, sizeof table,
             "datasource = db\ndb_shard_num = 4\ntable_shard_num = 100\nshard_key = wm_poi_id\n"
             "strategy = mod\n[table wm_food_sku]\ndatasource = db\ndb_shard_num = 4\n"
             "table_shard_num = 100\nshard_key = wm_poi_id\nstrategy = mod\n"
             "[table acct]\ndatasource = db\ndb_shard_num = 4\ntable_shard_num = 16\n"
             "shard_key = email\nstrategy = hash\n"
             "[table rng]\ndatasource = db\ndb_shard_num = 2\ntable_shard_num = 4\n"
             "shard_key = k\nstrategy = range\nstrategy.bounds = 0, 10, 100, 1000, 100000\n"
             "[table dict]\ndatasource = db2\n"
             "[dal]\ndefault_datasource = db3\nsql_shape_cache = %s\n",
             shape ? "true" : "false");
    ini = write_ini_named("wm_food", table);
    memset(&opts, 0, sizeof opts);
    ck_assert_msg(dal_open(ini, &opts, &dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

static uint64_t misses(dal_t *dal)
{
    dal_sql_cache_stats_t st;

    ck_assert_int_eq(dal_sql_cache_stats(dal, &st), 0);
    return st.misses;
}

/* A point select with 200 values is analysed once, and each value goes
 * to its own table: 12345 % 100 = 45 on db1 (45 / 25). */
START_TEST(test_one_analysis)
{
    dal_t *dal = open_shapes(1);
    dal_plan_t *plan;
    dal_error_t err;
    char sql[128], want[128], ds[8];
    uint64_t before = misses(dal);
    int v;

    for (v = 0; v < 200; v++) {
        long key = 12345L + 7L * v;
        snprintf(sql, sizeof sql, "SELECT name FROM wm_food WHERE wm_poi_id = %ld", key);
        ck_assert_msg(dal_explain(dal, NULL, sql, NULL, 0, &plan, &err) == 0, "%s", err.message);
        ck_assert_uint_eq(dal_plan_count(plan), 1);
        snprintf(want, sizeof want, "SELECT name FROM wm_food_%ld WHERE wm_poi_id = %ld",
                 key % 100, key);
        ck_assert_str_eq(dal_plan_sql(plan, 0), want);
        snprintf(ds, sizeof ds, "db%ld", key % 100 / 25);
        ck_assert_str_eq(dal_plan_datasource(plan, 0), ds);
        dal_plan_free(plan);
    }
    ck_assert_uint_eq(misses(dal) - before, 1);
    /* a string key: one analysis, the hash of each value */
    before = misses(dal);
    for (v = 0; v < 50; v++) {
        snprintf(sql, sizeof sql, "SELECT * FROM acct WHERE email = 'u%d@example.com'", v);
        ck_assert_msg(dal_explain(dal, NULL, sql, NULL, 0, &plan, &err) == 0, "%s", err.message);
        dal_plan_free(plan);
    }
    ck_assert_uint_eq(misses(dal) - before, 1);
    dal_close(dal);
}
END_TEST

/* Off, each text is analysed on its own. */
START_TEST(test_off)
{
    dal_t *dal = open_shapes(0);
    dal_plan_t *plan;
    dal_error_t err;
    char sql[128];
    uint64_t before = misses(dal);
    int v;

    for (v = 0; v < 20; v++) {
        snprintf(sql, sizeof sql, "SELECT name FROM wm_food WHERE wm_poi_id = %d", v);
        ck_assert_msg(dal_explain(dal, NULL, sql, NULL, 0, &plan, &err) == 0, "%s", err.message);
        dal_plan_free(plan);
    }
    ck_assert_uint_eq(misses(dal) - before, 20);
    dal_close(dal);
}
END_TEST

/* ------------------------------------------------------- generated cases */

static unsigned int seed = 35;

static unsigned int rnd(unsigned int n)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
}

/* A random literal of any kind SQL has, into out. */
static void literal(char *out, size_t cap)
{
    static const char *fixed[] = {
        "NULL", "TRUE", "FALSE", "0", "-1", "- 7", "1.5", "1e3", ".5", "0x1F", "0b101",
        "X'41'", "x'3132'", "B'110001'", "'it\\'s'", "'a''b'", "\"dq\"", "N'n'",
        "_utf8mb4'45'", "_binary'7'", "''", "'45'", "' 45'", "'45abc'", "9223372036854775807",
        "9223372036854775808", "18446744073709551616", "00012", "12.0", "'\\n'", "'%'",
    };
    unsigned int k = rnd(4);

    if (k == 0) {
        snprintf(out, cap, "%s", fixed[rnd(sizeof fixed / sizeof fixed[0])]);
    } else if (k == 1) {
        snprintf(out, cap, "%u", rnd(100000));
    } else if (k == 2) {
        snprintf(out, cap, "'%u'", rnd(1000));
    } else {
        /* a long string: longer than the bytes kept for decoded literals */
        size_t n = 1 + rnd(300), i;
        if (n + 3 > cap)
            n = cap - 3;
        out[0] = '\'';
        for (i = 0; i < n; i++)
            out[1 + i] = (char)('a' + rnd(26));
        out[1 + n] = '\'';
        out[2 + n] = '\0';
    }
}

/* Statements with %s for a literal (at most 4). */
static const char *templates[] = {
    "SELECT name FROM wm_food WHERE wm_poi_id = %s",
    "SELECT name FROM wm_food WHERE wm_poi_id=%s AND name <> %s",
    "SELECT * FROM wm_food WHERE wm_poi_id IN (%s, %s, %s)",
    "SELECT * FROM wm_food WHERE wm_poi_id NOT IN (%s, %s)",
    "SELECT * FROM wm_food WHERE wm_poi_id BETWEEN %s AND %s",
    "SELECT * FROM wm_food WHERE wm_poi_id NOT BETWEEN %s AND %s AND wm_poi_id = %s",
    "SELECT * FROM wm_food WHERE %s = wm_poi_id",
    "SELECT * FROM wm_food WHERE wm_poi_id >= %s AND wm_poi_id < %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s OR wm_poi_id = %s",
    "SELECT * FROM wm_food WHERE (wm_poi_id = %s) AND price > %s",
    "SELECT %s, name FROM wm_food WHERE wm_poi_id = %s",
    "SELECT name FROM wm_food WHERE wm_poi_id = %s ORDER BY 1 LIMIT %s",
    "SELECT name, COUNT(*) FROM wm_food WHERE price < %s GROUP BY name HAVING COUNT(*) > %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s AND t > NOW() - INTERVAL %s DAY",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s + %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s COLLATE utf8mb4_bin",
    "SELECT f.name FROM wm_food f JOIN wm_food_sku s ON f.wm_poi_id = s.wm_poi_id "
    "AND s.sku = %s WHERE f.wm_poi_id = %s",
    "SELECT * FROM wm_food f LEFT JOIN wm_food_sku s ON s.wm_poi_id = f.wm_poi_id "
    "AND s.wm_poi_id = %s WHERE f.wm_poi_id IN (%s, %s)",
    "SELECT * FROM (SELECT * FROM wm_food WHERE wm_poi_id = %s) d WHERE d.x < %s",
    "SELECT (SELECT name FROM wm_food WHERE wm_poi_id = %s) FROM dict WHERE k = %s",
    "SELECT * FROM wm_food WHERE wm_poi_id IN (SELECT wm_poi_id FROM wm_food_sku "
    "WHERE wm_poi_id = %s)",
    "SELECT * FROM wm_food WHERE wm_poi_id = /* c */ %s -- x\n",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s /*!50000 AND price = %s */",
    "/*+ dal shard_value=3 */ SELECT * FROM wm_food WHERE name = %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s FOR UPDATE",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s UNION ALL SELECT * FROM wm_food "
    "WHERE wm_poi_id = %s",
    "SELECT @a := 1 FROM wm_food WHERE wm_poi_id = %s",
    "SELECT @@autocommit FROM wm_food WHERE wm_poi_id = %s",
    "UPDATE wm_food SET price = price + 1 WHERE wm_poi_id = %s AND name = %s",
    "UPDATE wm_food SET price = %s WHERE wm_poi_id = %s",
    "UPDATE wm_food SET wm_poi_id = %s WHERE wm_poi_id = %s",
    "UPDATE wm_food SET price = %s, name = %s WHERE wm_poi_id = %s ORDER BY id LIMIT 1",
    "UPDATE wm_food SET price = %s + 1, name = %s WHERE wm_poi_id = %s",
    "UPDATE wm_food f JOIN wm_food_sku s ON f.wm_poi_id = s.wm_poi_id SET f.price = %s, "
    "s.sku = %s WHERE f.wm_poi_id = %s",
    "UPDATE wm_food SET note = IF(price > %s, %s, note) WHERE wm_poi_id = %s",
    "UPDATE wm_food SET price = (SELECT MAX(p) FROM dict WHERE k = %s) WHERE wm_poi_id = %s",
    "DELETE FROM wm_food WHERE wm_poi_id = %s",
    "DELETE FROM wm_food WHERE wm_poi_id IN (%s, %s) LIMIT %s",
    "INSERT INTO wm_food (wm_poi_id, name) VALUES (%s, %s)",
    "INSERT INTO wm_food (wm_poi_id, name) SELECT wm_poi_id, name FROM wm_food_sku "
    "WHERE wm_poi_id = %s",
    "SELECT * FROM acct WHERE email = %s",
    "SELECT * FROM acct WHERE email IN (%s, %s, %s, %s)",
    "SELECT * FROM rng WHERE k = %s",
    "SELECT * FROM rng WHERE k BETWEEN %s AND %s",
    "SELECT * FROM rng WHERE k > %s AND k <= %s",
    "SELECT * FROM dict WHERE k = %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s AND (id = %s OR id = %s)",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s AND CASE WHEN price > %s THEN 1 ELSE 0 END",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s AND COALESCE(price, 0) >= %s",
    "SELECT * FROM wm_food WHERE wm_poi_id IN (%s, %s) OR name = %s",
    "SELECT * FROM wm_food f LEFT JOIN wm_food_sku s ON s.wm_poi_id = f.wm_poi_id AND s.x = %s "
    "WHERE f.wm_poi_id = %s",
    "SELECT * FROM (SELECT wm_poi_id, price > %s AS dear FROM wm_food WHERE wm_poi_id = %s) d",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s WINDOW w AS (ORDER BY id ROWS BETWEEN %s "
    "PRECEDING AND %s FOLLOWING)",
    "SELECT COUNT(*) FROM wm_food WHERE wm_poi_id BETWEEN %s AND %s GROUP BY name = %s",
    "SELECT name, price > %s FROM wm_food WHERE wm_poi_id = %s ORDER BY price = %s",
    "SELECT * FROM wm_food WHERE EXISTS (SELECT 1 FROM wm_food_sku s WHERE s.wm_poi_id = %s "
    "AND s.wm_poi_id = wm_food.wm_poi_id) AND wm_poi_id = %s",
    "DELETE f FROM wm_food f JOIN wm_food_sku s ON f.wm_poi_id = s.wm_poi_id WHERE "
    "f.wm_poi_id = %s AND s.sku < %s",
    "WITH c AS (SELECT * FROM wm_food WHERE wm_poi_id = %s) SELECT * FROM c WHERE x = %s",
    "(SELECT * FROM wm_food WHERE wm_poi_id = %s) UNION (SELECT * FROM wm_food WHERE "
    "wm_poi_id = %s) ORDER BY 1 LIMIT %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s; SELECT %s",
    "SELECT * FROM wm_food WHERE wm_poi_id = %s AND name = ?",
};

/* the templates are this file's own */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void fill(char *out, size_t cap, const char *tpl)
{
    char lit[4][320];
    int i;

    for (i = 0; i < 4; i++)
        literal(lit[i], sizeof lit[i]);
    snprintf(out, cap, tpl, lit[0], lit[1], lit[2], lit[3]);
}

/* Same code, message, routes and each route's datasource and SQL. */
static void same_plan(dal_t *on, dal_t *off, const char *sql)
{
    dal_value_t p = dal_str("x");
    size_t np = strchr(sql, '?') != NULL && strstr(sql, "name = ?") != NULL ? 1 : 0;
    dal_plan_t *a = NULL, *b = NULL;
    dal_error_t ea, eb;
    int ra = dal_explain(on, NULL, sql, &p, np, &a, &ea);
    int rb = dal_explain(off, NULL, sql, &p, np, &b, &eb);
    size_t i;

    ck_assert_msg(ra == rb, "%s: rc %d with shapes, %d without (%s / %s)", sql, ra, rb,
                  ra ? ea.message : "", rb ? eb.message : "");
    if (ra != 0) {
        ck_assert_msg(strcmp(ea.message, eb.message) == 0, "%s: '%s' against '%s'", sql,
                      ea.message, eb.message);
        return;
    }
    ck_assert_msg(dal_plan_count(a) == dal_plan_count(b), "%s: %zu routes against %zu", sql,
                  dal_plan_count(a), dal_plan_count(b));
    for (i = 0; i < dal_plan_count(a); i++) {
        ck_assert_str_eq(dal_plan_datasource(a, i), dal_plan_datasource(b, i));
        ck_assert_msg(strcmp(dal_plan_sql(a, i), dal_plan_sql(b, i)) == 0,
                      "%s: route %zu: '%s' against '%s'", sql, i, dal_plan_sql(a, i),
                      dal_plan_sql(b, i));
    }
    dal_plan_free(a);
    dal_plan_free(b);
}

START_TEST(test_generated)
{
    dal_t *on = open_shapes(1), *off = open_shapes(0);
    char sql[2048];
    size_t t, k;

    for (t = 0; t < sizeof templates / sizeof templates[0]; t++) {
        uint64_t m0 = misses(on);
        for (k = 0; k < 40; k++) {
            fill(sql, sizeof sql, templates[t]);
            same_plan(on, off, sql);
        }
        if (getenv("SHAPE_DEBUG"))
            fprintf(stderr, "%3llu %s\n", (unsigned long long)(misses(on) - m0), templates[t]);
    }
    /* most templates have a shape the texts share */
    ck_assert_msg(misses(on) * 4 < misses(off) * 3, "%llu analyses with shapes, %llu without",
                  (unsigned long long)misses(on), (unsigned long long)misses(off));
    fprintf(stderr, "generated: %llu analyses with shapes, %llu without\n",
            (unsigned long long)misses(on), (unsigned long long)misses(off));
    dal_close(on);
    dal_close(off);
}
END_TEST

/* The shape is found again for most of those: fewer analyses than texts. */
START_TEST(test_generated_shared)
{
    dal_t *on = open_shapes(1);
    dal_plan_t *plan;
    dal_error_t err;
    char sql[2048];
    uint64_t before = misses(on);
    int k;

    for (k = 0; k < 100; k++) {
        snprintf(sql, sizeof sql, "SELECT * FROM wm_food WHERE wm_poi_id IN (%d, %d, %d) AND "
                 "name = '%d' AND price BETWEEN %d AND %d.5", k, k + 30, k * 7, k, k, k * 2);
        ck_assert_msg(dal_explain(on, NULL, sql, NULL, 0, &plan, &err) == 0, "%s", err.message);
        dal_plan_free(plan);
    }
    ck_assert_uint_eq(misses(on) - before, 1);
    dal_close(on);
}
END_TEST

/* An IN list is cut route by route also where its first value is a ?:
 * prepared, and a text run on its shape. */
START_TEST(test_in_cut)
{
    dal_t *dal = open_shapes(1);
    dal_value_t p[2] = {dal_int(30), dal_int(1)};
    const char *texts[] = {"SELECT * FROM wm_food WHERE wm_poi_id IN (?, ?)",
                           "SELECT * FROM wm_food WHERE wm_poi_id IN (30, 1)"};
    dal_plan_t *plan;
    dal_error_t err;
    int i;

    for (i = 0; i < 2; i++) {
        ck_assert_msg(dal_explain(dal, NULL, texts[i], p, i == 0 ? 2 : 0, &plan, &err) == 0,
                      "%s", err.message);
        ck_assert_uint_eq(dal_plan_count(plan), 2);
        ck_assert_str_eq(dal_plan_sql(plan, 0), "SELECT * FROM wm_food_1 WHERE wm_poi_id IN (1)");
        ck_assert_str_eq(dal_plan_sql(plan, 1),
                         "SELECT * FROM wm_food_30 WHERE wm_poi_id IN (30)");
        dal_plan_free(plan);
    }
    dal_close(dal);
}
END_TEST

static Suite *shape_suite(void)
{
    Suite *s = suite_create("shape");
    TCase *tc = tcase_create("shape");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_one_analysis);
    tcase_add_test(tc, test_off);
    tcase_add_test(tc, test_generated);
    tcase_add_test(tc, test_generated_shared);
    tcase_add_test(tc, test_in_cut);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(shape_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
