/*
 * test_idfill.c -- the generated id that idfill.c puts in an INSERT that
 * leaves out its id column, through dal_explain (no database): the memo of
 * that rewrite over reloads.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "offline.h"
#include "testutil.h"

/* An INSERT that leaves out the id column gets its rewrite remembered; the
 * memo is for one column name, so a reload that renames the column or
 * drops the generator must not reuse it. */
static dal_t *open_ids(const char *id_column, dal_t *reload)
{
    char table[512];
    dal_error_t err;
    dal_t *dal = reload;
    char *ini;

    snprintf(table, sizeof table,
             "datasource = db\ndb_shard_num = 4\ntable_shard_num = 100\nshard_key = wm_poi_id\n"
             "strategy = mod\n%s%s%s[idgen ids]\nplugin = snowflake\nworker_id = 3\n"
             "[dal]\nallow_reshard = true\n",
             id_column ? "id_column = " : "", id_column ? id_column : "",
             id_column ? "\nidgen = ids\n" : "");
    ini = write_ini_named("wm_food", table);
    if (reload == NULL)
        ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    else
        ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

/* The physical SQL of the INSERT for shard key 7, with the generated ID
 * (if any) put in *id. */
static void explain_insert(dal_t *dal, char *out, size_t cap, long long *id)
{
    dal_value_t p = dal_int(7);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    const char *sql, *v;

    ck_assert_msg(dal_explain(dal, NULL, "INSERT INTO wm_food (wm_poi_id, name) VALUES (?, 'a')",
                              &p, 1, &plan, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    sql = dal_plan_sql(plan, 0);
    *id = -1;
    v = strstr(sql, "VALUES (");
    if (v != NULL && strncmp(sql, "INSERT INTO wm_food_7 (`", 24) == 0)
        *id = strtoll(v + 8, NULL, 10);
    snprintf(out, cap, "%s", sql);
    dal_plan_free(plan);
}

START_TEST(test_fill_memo)
{
    dal_t *dal = open_ids("id", NULL);
    char sql[512], want[512];
    long long id, last = -1;
    int i;

    for (i = 0; i < 3; i++) {  /* the first makes the memo, the others use it */
        explain_insert(dal, sql, sizeof sql, &id);
        snprintf(want, sizeof want,
                 "INSERT INTO wm_food_7 (`id`, wm_poi_id, name) VALUES (%lld, 7, 'a')", id);
        ck_assert_str_eq(sql, want);
        ck_assert_msg(id > last, "ids %lld then %lld", last, id);
        last = id;
    }
    open_ids("oid", dal);
    explain_insert(dal, sql, sizeof sql, &id);
    snprintf(want, sizeof want,
             "INSERT INTO wm_food_7 (`oid`, wm_poi_id, name) VALUES (%lld, 7, 'a')", id);
    ck_assert_str_eq(sql, want);
    ck_assert_int_gt(id, last);
    open_ids(NULL, dal);
    explain_insert(dal, sql, sizeof sql, &id);
    ck_assert_str_eq(sql, "INSERT INTO wm_food_7 (wm_poi_id, name) VALUES (7, 'a')");
    dal_close(dal);
}
END_TEST

static Suite *idfill_suite(void)
{
    Suite *s = suite_create("idfill");
    TCase *tc = tcase_create("idfill");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fill_memo);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(idfill_suite(), CK_FORK_GETENV);

    return status;
}
