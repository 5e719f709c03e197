/*
 * test_replica.c -- the read-write split without a database, through
 * dal_explain: which statements, hints and options go to the master or to
 * a replica (replica.c's server selection), and replicas taken in turn.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "offline.h"
#include "testutil.h"

/* ------------------------------------------------------ read-write split */

/* db0 has two replicas, solo none; explain never connects, so replicas not
 * checked yet count as in rotation. */
static dal_t *open_rw(void)
{
    static const char text[] =
        "[dal]\ndefault_datasource = db0\n"
        "[datasource db0]\nmaster = mysql://u:pw@127.0.0.1:1/p0\n"
        "replicas = mysql://u:pw@127.0.0.1:2/p0, mysql://u:pw@127.0.0.1:3/p0\n"
        "[datasource solo]\nmaster = mysql://u:pw@127.0.0.1:4/p1\n"
        "[table t]\ndatasource = db0\n[table u]\ndatasource = solo\n";
    char *ini = tu_write(dir, "rw.ini", text);
    dal_error_t err;
    dal_t *dal = NULL;

    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

typedef struct rw_case {
    const char *sql;
    int server;             /* dal_query_opts_t.server */
    const char *role;       /* expected, or NULL for an error */
    int code;
} rw_case_t;

static const rw_case_t rw_cases[] = {
    {"SELECT * FROM t", 0, "replica", 0},
    {"SELECT * FROM t FOR UPDATE", 0, "master", 0},
    {"SELECT * FROM t LOCK IN SHARE MODE", 0, "master", 0},
    {"INSERT INTO t VALUES (1)", 0, "master", 0},
    {"UPDATE t SET a = 1", 0, "master", 0},
    {"SELECT LAST_INSERT_ID() FROM t", 0, "master", 0},
    {"SELECT NEXT VALUE FOR seq", 0, "master", 0},
    {"SHOW TABLES", 0, "master", 0},
    {"/*+ dal master */ SELECT * FROM t", 0, "master", 0},
    {"SELECT /*+ dal server=master */ * FROM t", 0, "master", 0},
    {"/*+ dal server=replica */ SELECT * FROM t FOR UPDATE", 0, "replica", 0},
    {"/*+ dal replica */ SELECT GET_LOCK('a', 1)", 0, "replica", 0},
    {"SELECT * FROM t", DAL_SERVER_MASTER, "master", 0},
    {"SELECT * FROM t FOR UPDATE", DAL_SERVER_REPLICA, "replica", 0},
    {"/*+ dal replica */ SELECT * FROM t", DAL_SERVER_MASTER, "master", 0},
    {"SELECT * FROM u", 0, "master", 0},
    {"SELECT * FROM u", DAL_SERVER_REPLICA, "master", 0},
    {"DELETE FROM t", DAL_SERVER_REPLICA, NULL, DAL_EROUTE},
    {"/*+ dal replica */ INSERT INTO t VALUES (1)", 0, NULL, DAL_EROUTE},
    {"/*+ dal server=primary */ SELECT * FROM t", 0, NULL, DAL_EINVAL},
    {"/*+ dal master=yes */ SELECT * FROM t", 0, NULL, DAL_ESQL},
    {"/*+ dal master */ /*+ dal replica */ SELECT * FROM t", 0, NULL, DAL_EINVAL},
    {"SELECT * FROM t", 9, NULL, DAL_EINVAL},
};

START_TEST(test_rw_explain)
{
    const rw_case_t *c = &rw_cases[_i];
    dal_t *dal = open_rw();
    dal_query_opts_t o;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    int rc;

    memset(&o, 0, sizeof o);
    o.server = c->server;
    rc = dal_explain(dal, &o, c->sql, NULL, 0, &plan, &err);
    ck_assert_msg(rc == c->code, "%s: %s (%s)", c->sql, dal_strerror(rc), rc ? err.message : "");
    if (rc == 0) {
        const char *srv = dal_plan_server(plan, 0);
        ck_assert_str_eq(dal_plan_role(plan, 0), c->role);
        if (strcmp(c->role, "master") == 0)
            ck_assert(strcmp(srv, "127.0.0.1:1") == 0 || strcmp(srv, "127.0.0.1:4") == 0);
        else
            ck_assert(strcmp(srv, "127.0.0.1:2") == 0 || strcmp(srv, "127.0.0.1:3") == 0);
    }
    dal_plan_free(plan);
    dal_close(dal);
}
END_TEST

/* round_robin takes the replicas in turn. */
START_TEST(test_rw_round_robin)
{
    dal_t *dal = open_rw();
    char first[64] = "";
    dal_plan_t *plan;
    dal_error_t err;
    int i;

    for (i = 0; i < 6; i++) {
        plan = NULL;
        ck_assert_int_eq(dal_explain(dal, NULL, "SELECT * FROM t", NULL, 0, &plan, &err), 0);
        if (i == 0)
            snprintf(first, sizeof first, "%s", dal_plan_server(plan, 0));
        else
            ck_assert_int_eq(strcmp(dal_plan_server(plan, 0), first) == 0, i % 2 == 0);
        dal_plan_free(plan);
    }
    ck_assert_ptr_null(dal_plan_role(NULL, 0));
    dal_close(dal);
}
END_TEST

static Suite *replica_suite(void)
{
    Suite *s = suite_create("replica");
    TCase *tc = tcase_create("read-write split");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_rw_explain, 0, sizeof rw_cases / sizeof rw_cases[0]);
    tcase_add_test(tc, test_rw_round_robin);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(replica_suite(), CK_FORK_GETENV);

    return status;
}
