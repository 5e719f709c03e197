/*
 * test_rewrite.c -- the physical SQL that rewrite.c writes for a route,
 * through dal_explain (no database): NUL bytes inside strings, parameters
 * of every type as literals, the trace id comment; and the LOCK TABLES
 * statement of each node (rewrite_lock.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "handle.h"
#include "offline.h"
#include "rewrite.h"
#include "sql.h"
#include "testutil.h"

#define L(s) s, sizeof s - 1

/* The physical SQL of route r of text[0..len) (NUL bytes included) equals
 * want[0..wlen). */
static void plan_sql_is(const dal_plan_t *plan, size_t r, const char *want, size_t wlen)
{
    ck_assert_uint_eq(dal_plan_sql_len(plan, r), wlen);
    ck_assert_int_eq(memcmp(dal_plan_sql(plan, r), want, wlen), 0);
}

/* NUL bytes inside strings go through the rewrite whole: the physical
 * table named, a multi-row INSERT split by node, a shard key holding one;
 * outside, nothing is routed. */
START_TEST(test_nul_rewrite)
{
    dal_t *dal = open_mod(4);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    dal_value_t p = dal_int(45);

    tu_must(dal_explain_len(dal, NULL, L("SELECT * FROM wm_food WHERE wm_poi_id = 12345 AND "
                                         "name = 'a\0b' /* \0 */"), NULL, 0, &plan, &err),
            &err, "select");
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    plan_sql_is(plan, 0, L("SELECT * FROM wm_food_45 WHERE wm_poi_id = 12345 AND name = 'a\0b' "
                           "/* \0 */"));
    dal_plan_free(plan);

    tu_must(dal_explain_len(dal, NULL, L("INSERT INTO wm_food (wm_poi_id, name) VALUES "
                                         "(30, 'a\\\0b'), (1, 'c\0d'), (130, '\0')"),
                            NULL, 0, &plan, &err), &err, "multi-row");
    ck_assert_uint_eq(dal_plan_count(plan), 2);
    plan_sql_is(plan, 0, L("INSERT INTO wm_food_1 (wm_poi_id, name) VALUES (1, 'c\0d')"));
    plan_sql_is(plan, 1, L("INSERT INTO wm_food_30 (wm_poi_id, name) VALUES (30, 'a\\\0b'), "
                           "(130, '\0')"));
    dal_plan_free(plan);

    tu_must(dal_explain_len(dal, NULL, L("UPDATE wm_food SET name = 'q\0' WHERE wm_poi_id = ? "
                                         "AND name = \"x\0\""), &p, 1, &plan, &err), &err, "update");
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    plan_sql_is(plan, 0, L("UPDATE wm_food_45 SET name = 'q\0' WHERE wm_poi_id = 45 AND "
                           "name = \"x\0\""));
    dal_plan_free(plan);

    ck_assert_int_eq(dal_explain_len(dal, NULL, L("DELETE FROM wm_food\0 WHERE wm_poi_id = 1"),
                                     NULL, 0, &plan, &err), DAL_ESQL);
    ck_assert_ptr_null(plan);
    ck_assert_msg(strstr(err.message, "NUL byte outside a quoted string at offset 19") != NULL,
                  "%s", err.message);
    ck_assert_int_eq(dal_explain_len(dal, NULL, L("SELECT name FROM wm_food ORDER BY "
                                                  "CONCAT(name, 'a\0b')"), NULL, 0, &plan, &err),
                     DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, "holds a NUL byte") != NULL, "%s", err.message);
    /* the NUL-terminated form is the length form up to the first NUL */
    ck_assert_int_eq(dal_explain(dal, NULL, "SELECT 'a\0b'", NULL, 0, &plan, &err), DAL_ESQL);
    ck_assert_str_eq(err.message, "cannot analyse the statement: unterminated string at offset 7");
    dal_close(dal);
}
END_TEST

/* Parameters of every type render as SQL literals. */
START_TEST(test_param_types)
{
    dal_t *dal = open_mod(4);
    dal_query_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_value_t sv = dal_int(1), p[6];
    dal_error_t err;

    memset(&opts, 0, sizeof opts);
    opts.shard_value = &sv;
    p[0] = dal_null();
    p[1] = dal_int(-5);
    p[2] = dal_uint(18446744073709551615ull);
    p[3] = dal_double(0.25);
    p[4] = dal_strn("a\0b\n\x1a\"", 6);
    p[5] = dal_blob("\x01\xff", 2);
    ck_assert_int_eq(dal_explain(dal, &opts, "INSERT INTO wm_food VALUES (?, ?, ?, ?, ?, ?)", p,
                                 6, &plan, &err),
                     0);
    ck_assert_str_eq(dal_plan_sql(plan, 0),
                     "INSERT INTO wm_food_1 VALUES (NULL, -5, 18446744073709551615, 0.25e0, "
                     "'a\\0b\\n\\Z\\\"', X'01FF')");
    dal_plan_free(plan);
    p[3] = dal_double(1.0 / 0.0);
    ck_assert_int_eq(dal_explain(dal, &opts, "INSERT INTO wm_food VALUES (?, ?, ?, ?, ?, ?)", p,
                                 6, &plan, &err),
                     DAL_EINVAL);
    dal_close(dal);
}
END_TEST

/* A trace id rides in front of every physical statement; one that could
 * end the comment is refused. */
START_TEST(test_trace_id)
{
    dal_t *dal = open_mod(4);
    dal_query_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    size_t i;

    memset(&opts, 0, sizeof opts);
    opts.trace_id = "req-42.a:b_c";
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT * FROM wm_food WHERE wm_poi_id IN (1, 2)",
                                 NULL, 0, &plan, &err), 0);
    ck_assert_uint_eq(dal_plan_count(plan), 2);
    for (i = 0; i < 2; i++)
        ck_assert_msg(strncmp(dal_plan_sql(plan, i), "/* trace_id=req-42.a:b_c */ SELECT", 34) == 0,
                      "%s", dal_plan_sql(plan, i));
    dal_plan_free(plan);
    opts.trace_id = "x */ DROP TABLE t; /*";
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT 1", NULL, 0, &plan, &err), DAL_EINVAL);
    opts.trace_id = "";
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT 1", NULL, 0, &plan, &err), DAL_EINVAL);
    dal_close(dal);
}
END_TEST


/* rewrite_lock_tables of text for node name: its return, out in *text. */
static int lock_text(dal_snapshot_t *snap, const char *text, const char *node, char *out,
                     size_t cap)
{
    dal_sql_t *sql = NULL;
    dal_buf_t b = {0};
    dal_error_t err;
    char msg[256];
    int rc;

    ck_assert_msg(sql_analyse(text, strlen(text), 0, &sql, msg, sizeof msg) == 0, "%s", msg);
    rc = rewrite_lock_tables(snap, sql, snapshot_node(snap, node), &b, &err);
    snprintf(out, cap, "%.*s", (int)b.len, b.len ? b.data : "");
    buf_free(&b);
    sql_unref(sql);
    return rc;
}

/* LOCK TABLES node by node (open_mod(4): wm_food in 100 tables, 25 a node
 * on db0..db3; dict on db2; db3 the default datasource). */
START_TEST(test_lock_tables)
{
    dal_t *dal = open_mod(4);
    dal_snapshot_t *snap = snapshot_acquire(dal);
    char out[4096];
    dal_sql_t *sql = NULL;
    char msg[64];

    ck_assert_int_eq(lock_text(snap, "LOCK TABLES wm_food WRITE", "db0", out, sizeof out), 0);
    ck_assert_msg(strncmp(out, "LOCK TABLES `wm_food_0` WRITE, `wm_food_1` WRITE, ", 50) == 0,
                  "%s", out);
    ck_assert_msg(strstr(out, ", `wm_food_24` WRITE") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "wm_food_25") == NULL, "%s", out);
    /* aliases and lock types as written; a table not configured goes to
     * the default datasource as written; a schema qualifier is dropped */
    ck_assert_int_eq(lock_text(snap, "lock table `x`.wm_food AS f READ LOCAL, dict WRITE, "
                               "other LOW_PRIORITY WRITE;", "db2", out, sizeof out), 0);
    ck_assert_msg(strncmp(out, "LOCK TABLES `wm_food_50` AS f READ LOCAL, ", 42) == 0, "%s", out);
    ck_assert_msg(strstr(out, "`wm_food_74` AS f READ LOCAL, `dict` WRITE") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "other") == NULL, "%s", out);
    ck_assert_int_eq(lock_text(snap, "LOCK TABLES wm_food f READ, other LOW_PRIORITY WRITE",
                               "db3", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "`wm_food_99` f READ, other LOW_PRIORITY WRITE") != NULL, "%s", out);
    /* a node holding none of them: nothing */
    ck_assert_int_eq(lock_text(snap, "LOCK TABLES dict WRITE", "db0", out, sizeof out), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(lock_text(snap, "LOCK TABLES dict WRITE", "db2", out, sizeof out), 0);
    ck_assert_str_eq(out, "LOCK TABLES `dict` WRITE");
    /* as written: tables wholly on the default datasource, other
     * statements, lists dal does not read */
    ck_assert_int_eq(lock_text(snap, "LOCK TABLES other WRITE", "db3", out, sizeof out), 1);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(lock_text(snap, "SELECT * FROM wm_food", "db0", out, sizeof out), 1);
    ck_assert_int_eq(lock_text(snap, "LOCK TABLES wm_food", "db0", out, sizeof out), 1);
    ck_assert_int_eq(lock_text(snap, "LOCK TABLES wm_food WRITE, (x) READ", "db0", out,
                               sizeof out), 1);
    ck_assert_int_eq(sql_analyse(L("UNLOCK TABLES"), 0, &sql, msg, sizeof msg), 0);
    ck_assert_int_eq(rewrite_is_unlock_tables(sql), 1);
    sql_unref(sql);
    ck_assert_int_eq(sql_analyse(L("UNLOCK TABLES wm_food"), 0, &sql, msg, sizeof msg), 0);
    ck_assert_int_eq(rewrite_is_unlock_tables(sql), 0);
    sql_unref(sql);
    snapshot_unref(snap);
    dal_close(dal);
}
END_TEST

static Suite *rewrite_suite(void)
{
    Suite *s = suite_create("rewrite");
    TCase *tc = tcase_create("rewrite");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_nul_rewrite);
    tcase_add_test(tc, test_param_types);
    tcase_add_test(tc, test_trace_id);
    tcase_add_test(tc, test_lock_tables);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(rewrite_suite(), CK_FORK_GETENV);

    return status;
}
