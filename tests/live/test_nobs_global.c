/*
 * test_nobs_global.c -- statements of no session read as the servers read
 * them when the servers' global sql_mode has NO_BACKSLASH_ESCAPES.
 *
 * A server in that mode reads 'x\' as a two-byte string, so in
 *   ... WHERE id = 5 AND name = 'x\' OR id = 7 -- '
 * it reads `OR id = 7` as a condition; read with backslash escapes, the
 * same text holds one string and a point read of id 5.  dal must read the
 * text as the server that runs it does, or it routes the statement to id
 * 5's shard alone and id 7's row is lost.  The mode is learned from the
 * servers before the process's first statement, so this test is a program
 * of its own: its first dal call is the statement under test.
 *
 * tests/suites/integration.sh starts the cluster (product_0..3 and plain);
 * the servers' global sql_mode is set here and put back at the end.
 */
#include <check.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dal/dal.h"
#include "testutil.h"

#define NODES 4

static int ports[NODES];
static char *dir;
static dal_t *dal;
static char saved[NODES][512];

static void global_mode(int i, const char *mode)
{
    MYSQL *m = tu_root(ports[i], NULL);
    char sql[640];

    snprintf(sql, sizeof sql, "SET GLOBAL sql_mode = '%s'", mode);
    tu_exec(m, sql);
    mysql_close(m);
}

static void global_setup(void)
{
    char text[4096], *ini;
    size_t len = 0;
    int i;

    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    tu_datasources(text, sizeof text, &len, "nb", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[table nbg]\n"
             "datasource = nb\ndb_shard_num = 4\ntable_shard_num = 4\n"
             "shard_key = id\nstrategy = mod\n");
    ini = tu_write(dir, "nbg.ini", text);
    dal = tu_open(ini);  /* connects to no server */
    free(ini);
    for (i = 0; i < NODES; i++) {
        MYSQL *m = tu_root(ports[i], NULL);
        MYSQL_RES *res;
        MYSQL_ROW row;
        ck_assert_int_eq(mysql_query(m, "SELECT @@GLOBAL.sql_mode"), 0);
        ck_assert_ptr_nonnull(res = mysql_store_result(m));
        ck_assert_ptr_nonnull(row = mysql_fetch_row(res));
        snprintf(saved[i], sizeof saved[i], "%s", row[0] ? row[0] : "");
        mysql_free_result(res);
        mysql_close(m);
        global_mode(i, "NO_BACKSLASH_ESCAPES");
    }
}

static void global_teardown(void)
{
    int i;

    dal_close(dal);
    for (i = 0; i < NODES; i++)
        global_mode(i, saved[i]);
    tu_rmtree(dir);
    free(dir);
}

/* The ids r holds, in order, as "5,7" (its rows ordered by id). */
static void ids_of(dal_result_t *r, char *out, size_t cap)
{
    dal_error_t err;
    size_t len = 0;
    int rc;

    out[0] = '\0';
    while ((rc = dal_result_next(r, &err)) == 1)
        len += (size_t)snprintf(out + len, cap - len, "%s%lld", len ? "," : "",
                                (long long)dal_result_int(r, 0));
    tu_must(rc, &err, "reading rows");
    dal_result_free(r);
}

/* The attack text: the server reads `OR id = 7` outside the string. */
static const char attack[] =
    "SELECT id FROM nbg WHERE id = 5 AND name = 'x\\' OR id = 7 -- '\n ORDER BY id";

START_TEST(test_query)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    char ids[64];

    /* the first statement of the process: the mode is learned first */
    tu_must(dal_query(dal, NULL, "DROP TABLE IF EXISTS nbg", NULL, 0, &r, &err), &err, "drop");
    dal_result_free(r);
    tu_setup_exec(dal, NULL, "CREATE TABLE nbg (id INT PRIMARY KEY, name VARCHAR(20))");
    tu_setup_exec(dal, NULL, "INSERT INTO nbg VALUES (5, 'five'), (7, 'seven')");
    /* ids 5 and 7 are in two tables on two nodes */
    tu_must(dal_query(dal, NULL, attack, NULL, 0, &r, &err), &err, attack);
    ids_of(r, ids, sizeof ids);
    ck_assert_str_eq(ids, "7");
}
END_TEST

START_TEST(test_prepared)
{
    dal_prepared_t *p;
    dal_result_t *r = NULL;
    dal_error_t err;
    char ids[64];

    tu_must(dal_prepare(dal, attack, &p, &err), &err, "dal_prepare");
    tu_must(dal_query_prepared(dal, NULL, p, NULL, 0, &r, &err), &err, "dal_query_prepared");
    ids_of(r, ids, sizeof ids);
    ck_assert_str_eq(ids, "7");
    dal_prepared_free(p);
}
END_TEST

START_TEST(test_session)
{
    dal_session_t *s;
    dal_result_t *r = NULL;
    dal_error_t err;
    char ids[64];

    tu_must(dal_session_open(dal, &s, &err), &err, "dal_session_open");
    ck_assert(dal_session_no_backslash_escapes(s));
    tu_must(dal_session_query(s, NULL, attack, NULL, 0, &r, &err), &err, attack);
    ids_of(r, ids, sizeof ids);
    ck_assert_str_eq(ids, "7");
    dal_session_close(s);
}
END_TEST

static Suite *nobs_suite(void)
{
    Suite *s = suite_create("nobs_global");
    TCase *tc = tcase_create("cluster");

    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_test(tc, test_query);
    tcase_add_test(tc, test_prepared);
    tcase_add_test(tc, test_session);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* one process: the mode is the process's, learned once */
    return tu_run(nobs_suite(), CK_NOFORK);
}
