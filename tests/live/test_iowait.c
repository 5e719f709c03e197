/*
 * test_iowait.c -- dal_set_io_wait, the per-thread hook for dal's waits
 * on backend sockets, against real MariaDB servers: which waits reach it
 * (a one-node statement, a scatter, a server-prepared execute, a new
 * connection's login), none without it, and what an event loop running
 * other statements inside it relies on: another session's statement run
 * from inside the hook leaves the waiting statement's state (its warnings
 * wish) as it was, and a KILL QUERY sent from inside the hook does not
 * call the hook again (it holds the cancel list's lock).
 *
 * tests/suites/iowait_test.sh starts two servers (product_0, product_1)
 * and exports DAL_TEST_PORTS.  iw is sharded by k over both.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "check_run.h" /* tu_run */
#include "testutil.h"

#define NODES 2

static int ports[NODES];
static char *dir, *ini;
static dal_t *dal;

/* What the hook saw, and what it does besides waiting. */
static int calls, bad_events, in_cancel, calls_in_cancel;
static dal_session_t *nested_session;   /* run a statement there once */
static int nested_rc = -1;
static dal_session_t *cancel_session;   /* cancel its statement once */
static int cancel_rc = -1;

static int hook(void *arg, int fd, short events, int timeout_ms)
{
    struct pollfd p = {fd, events, 0};
    int rc;

    ck_assert_ptr_eq(arg, &calls);
    calls++;
    if (in_cancel)
        calls_in_cancel++;
    if (events != POLLIN && events != POLLOUT)
        bad_events++;
    if (nested_session != NULL) {
        dal_session_t *s = nested_session;
        dal_result_t *r = NULL;
        dal_error_t err;
        nested_session = NULL;      /* once: its own waits come here too */
        nested_rc = dal_session_query(s, NULL, "SELECT 2", NULL, 0, &r, &err);
        dal_result_free(r);
    }
    if (cancel_session != NULL) {
        dal_session_t *s = cancel_session;
        dal_error_t err;
        cancel_session = NULL;
        in_cancel = 1;
        cancel_rc = dal_session_cancel(s, &err);
        in_cancel = 0;
    }
    while ((rc = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    return rc;
}

static char *make_ini(void)
{
    char text[4096];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "dbS", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[dal]\ndefault_datasource = dbS0\n"
             "[table iw]\ndatasource = dbS\ndb_shard_num = 2\ntable_shard_num = 2\n"
             "shard_key = k\nstrategy = mod\n");
    return tu_write(dir, "iowait.ini", text);
}

static void global_setup(void)
{
    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    ini = make_ini();
    dal = tu_open(ini);
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS iw");
    tu_setup_exec(dal, NULL, "CREATE TABLE iw (k INT PRIMARY KEY, v INT)");
    tu_setup_exec(dal, NULL, "INSERT INTO iw (k, v) VALUES (0, 10), (1, 11), (2, 12), (3, 13)");
}

static void global_teardown(void)
{
    dal_set_io_wait(NULL, NULL);
    dal_close(dal);
    tu_rmtree(dir);
}

/* The first column of the first row of sql in s, as a number. */
static long first(dal_session_t *s, const char *sql)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    const char *v;
    long n;

    tu_must(dal_session_query(s, NULL, sql, NULL, 0, &r, &err), &err, sql);
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    v = dal_result_text(r, 0, NULL);
    ck_assert_ptr_nonnull(v);
    n = strtol(v, NULL, 10);
    dal_result_free(r);
    return n;
}

START_TEST(test_unset_is_not_called)
{
    dal_session_t *s = NULL;
    dal_error_t err;

    dal_set_io_wait(NULL, NULL);
    calls = 0;
    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    ck_assert_int_eq(first(s, "SELECT SLEEP(0.05) + 7"), 7);
    ck_assert_int_eq(first(s, "SELECT SUM(v) FROM iw"), 46);
    ck_assert_int_eq(calls, 0);
    dal_session_close(s);
}
END_TEST

/* A statement that takes a while on the server waits for its reply. */
START_TEST(test_one_node)
{
    dal_session_t *s = NULL;
    dal_error_t err;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    dal_set_io_wait(hook, &calls);
    calls = bad_events = 0;
    ck_assert_int_eq(first(s, "SELECT SLEEP(0.05) + 7"), 7);
    ck_assert_int_ge(calls, 1);
    ck_assert_int_eq(bad_events, 0);
    calls = 0;
    ck_assert_int_eq(first(s, "SELECT v FROM iw WHERE k = 3 AND SLEEP(0.05) = 0"), 13);
    ck_assert_int_ge(calls, 1);
    dal_set_io_wait(NULL, NULL);
    dal_session_close(s);
}
END_TEST

START_TEST(test_scatter)
{
    dal_session_t *s = NULL;
    dal_error_t err;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    dal_set_io_wait(hook, &calls);
    calls = 0;
    ck_assert_int_eq(first(s, "SELECT SUM(v + SLEEP(0.05)) FROM iw"), 46);
    ck_assert_int_ge(calls, 1);
    dal_set_io_wait(NULL, NULL);
    dal_session_close(s);
}
END_TEST

/*
 * A connection opened while the hook is set logs in through it: the
 * handshake, the login's answer and the statement's reply each wait
 * there when the server has not answered yet.  Whether it has is the
 * scheduler's choice (a slow client finds answers there already), so
 * fresh connections are tried until one waited more than once.
 */
START_TEST(test_new_connection)
{
    int most = 0, i;

    for (i = 0; i < 50 && most < 2; i++) {
        dal_t *fresh = tu_open(ini);
        dal_result_t *r = NULL;
        dal_error_t err;

        dal_set_io_wait(hook, &calls);
        calls = 0;
        tu_must(dal_query(fresh, NULL, "SELECT 1", NULL, 0, &r, &err), &err, "SELECT 1");
        dal_result_free(r);
        dal_set_io_wait(NULL, NULL);
        if (calls > most)
            most = calls;
        dal_close(fresh);
    }
    ck_assert_int_ge(most, 2);
}
END_TEST

START_TEST(test_prepared)
{
    dal_session_t *s = NULL;
    dal_prepared_t *p = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    dal_value_t k;
    int i;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_prepare(dal, "SELECT v + SLEEP(0.02) FROM iw WHERE k = ?", &p, &err), &err,
            "prepare");
    dal_set_io_wait(hook, &calls);
    calls = 0;
    /* run it often enough for dal to prepare it on the server */
    for (i = 0; i < 4; i++) {
        k = dal_int(2);
        tu_must(dal_session_query_prepared(s, NULL, p, &k, 1, &r, &err), &err, "execute");
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        ck_assert_str_eq(dal_result_text(r, 0, NULL), "12");
        dal_result_free(r);
        r = NULL;
    }
    ck_assert_int_ge(calls, 4);
    dal_set_io_wait(NULL, NULL);
    dal_prepared_free(p);
    dal_session_close(s);
}
END_TEST

/* Another session's statement inside the hook: the waiting statement's
 * warnings wish (kept for it) survives the other's (not kept). */
START_TEST(test_other_statement_inside)
{
    dal_session_t *s = NULL, *other = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    tu_must(dal_session_open(dal, &other, &err), &err, "other session");
    dal_session_keep_warnings(s, 1);
    dal_set_io_wait(hook, &calls);
    nested_rc = -1;
    nested_session = other;
    tu_must(dal_session_query(s, NULL, "SELECT 1/0, SLEEP(0.05)", NULL, 0, &r, &err), &err,
            "SELECT 1/0");
    ck_assert_int_eq(nested_rc, 0);
    while (dal_result_next(r, &err) == 1)
        ;
    ck_assert_uint_ge(dal_result_warning_count(r), 1);
    ck_assert_uint_ge(dal_result_warning_rows(r), 1);
    dal_result_free(r);
    dal_set_io_wait(NULL, NULL);
    dal_session_close(other);
    dal_session_close(s);
}
END_TEST

/* KILL QUERY of the waiting statement from inside the hook: the kill's
 * own connection waits without the hook, the statement ends with 1317. */
START_TEST(test_cancel_inside)
{
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    dal_set_io_wait(hook, &calls);
    calls_in_cancel = 0;
    cancel_rc = -1;
    cancel_session = s;
    rc = dal_session_query(s, NULL, "SELECT SLEEP(20)", NULL, 0, &r, &err);
    dal_set_io_wait(NULL, NULL);
    ck_assert_int_eq(cancel_rc, 0);
    ck_assert_int_eq(calls_in_cancel, 0);
    if (rc == 0) {
        /* SLEEP interrupted answers 1 */
        ck_assert_int_eq(dal_result_next(r, &err), 1);
        ck_assert_str_eq(dal_result_text(r, 0, NULL), "1");
        dal_result_free(r);
    } else {
        ck_assert_uint_eq(err.mysql_errno, 1317);
    }
    ck_assert_int_eq(first(s, "SELECT 5"), 5);
    dal_session_close(s);
}
END_TEST

static Suite *iowait_suite(void)
{
    Suite *s = suite_create("iowait");
    TCase *tc = tcase_create("cluster");

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_test(tc, test_unset_is_not_called);
    tcase_add_test(tc, test_one_node);
    tcase_add_test(tc, test_scatter);
    tcase_add_test(tc, test_new_connection);
    tcase_add_test(tc, test_prepared);
    tcase_add_test(tc, test_other_statement_inside);
    tcase_add_test(tc, test_cancel_inside);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(iowait_suite(), CK_NOFORK);
}
