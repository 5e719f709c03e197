/*
 * test_pool.c -- the pool plugins.
 *
 * `test_pool` (make check): pool_default and pool_none loaded from their
 * .so files and driven through their ops, against a host whose connections
 * are plain structs the test can break, so every policy (limits, order of
 * waiters, validation, ageing, reset, leak reports) is checked without a
 * server and without timing luck.
 *
 * `test_pool live` (tests/suites/pool_monitor_test.sh, with a MariaDB cluster):
 * the same policies through dal_open and server_acquire against real
 * servers: waiters and the exhausted error, a connection KILLed from
 * another session replaced on next use, session state reset between
 * borrowers, leak reports naming the statement, pool_none, per-datasource
 * overrides.
 */
#include <check.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dal/dal.h>
#include <dal/plugin.h>

#include "conn.h"
#include "handle.h"
#include "fake_host.h"
#include "pool.h"
#include "testutil.h"

/* ============================================================ unit part */

/* A connection of the test host: the plugin only ever passes the pointer. */
typedef struct fconn {
    int id;
    int alive;     /* 0: pings and resets fail */
} fconn_t;

static atomic_int opened, closed_n, pings, resets;
static atomic_int fail_open;   /* conn_open fails while set */
static atomic_int fail_reset;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[16384];
static const char *statement;  /* what current_statement reports */
static dal_host_api_t api;

static int t_open(dal_host_t *host, dal_conn_t **out, dal_error_t *err)
{
    fconn_t *c;

    (void)host;
    *out = NULL;
    if (atomic_load(&fail_open))
        return api.set_error(err, DAL_ECONNECT, "test host: server down");
    c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    c->id = atomic_fetch_add(&opened, 1) + 1;
    c->alive = 1;
    *out = (dal_conn_t *)c;
    return 0;
}

static void t_close(dal_conn_t *c)
{
    atomic_fetch_add(&closed_n, 1);
    free(c);
}

static int t_ping(dal_conn_t *c)
{
    atomic_fetch_add(&pings, 1);
    return ((fconn_t *)c)->alive ? 0 : -1;
}

static int t_reset(dal_conn_t *c, dal_error_t *err)
{
    atomic_fetch_add(&resets, 1);
    if (!((fconn_t *)c)->alive || atomic_load(&fail_reset))
        return api.set_error(err, DAL_ESERVER, "test host: reset failed");
    return 0;
}

/* Thread-safe, unlike the fake host's: the pool's keeper logs too. */
static void t_log(dal_host_t *host, dal_log_level_t level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    size_t len;

    (void)host, (void)level;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_mu);
    len = strlen(log_text);
    snprintf(log_text + len, sizeof log_text - len, "%s\n", line);
    pthread_mutex_unlock(&log_mu);
}

static int log_has(const char *s)
{
    int yes;

    pthread_mutex_lock(&log_mu);
    yes = strstr(log_text, s) != NULL;
    pthread_mutex_unlock(&log_mu);
    return yes;
}

static size_t t_statement(char *buf, size_t cap)
{
    return statement ? (size_t)snprintf(buf, cap, "%s", statement) : 0;
}

static fake_plugin_t plug;
static const dal_pool_ops_t *ops;
static dal_host_t *host;
static void *inst;

static void load(const char *name)
{
    char path[1024];
    dal_error_t err;

    ck_assert_int_eq(fake_plugin_path(path, sizeof path, tu_env("DAL_PLUGIN_DIR"),
                                      DAL_PLUGIN_POOL, name), 0);
    ck_assert_msg(fake_plugin_open(path, DAL_PLUGIN_POOL, name, &plug, &err) == 0, "%s",
                  err.message);
    ops = plug.desc->ops;
}

static void unit_setup(void)
{
    api = *fake_host_api();
    api.log = t_log;
    api.conn_open = t_open;
    api.conn_close = t_close;
    api.conn_ping = t_ping;
    api.conn_reset = t_reset;
    api.current_statement = t_statement;
    atomic_store(&opened, 0);
    atomic_store(&closed_n, 0);
    atomic_store(&pings, 0);
    atomic_store(&resets, 0);
    atomic_store(&fail_open, 0);
    atomic_store(&fail_reset, 0);
    log_text[0] = '\0';
    statement = NULL;
    host = fake_host_new();
    inst = NULL;
    load("default");
}

static void unit_teardown(void)
{
    if (inst != NULL)
        ops->destroy(inst);
    fake_plugin_close(&plug);
    fake_host_free(host);
}

/* Create an instance with "name=value" items; returns the create result. */
static int make(const fake_param_t *items, size_t n, dal_error_t *err)
{
    static const dal_pool_server_t server = {"dbTest0", "127.0.0.1:3306"};
    dal_plugin_params_t *p = fake_params_new(plug.desc->params, items, n, err);
    int rc;

    ck_assert_msg(p != NULL, "%s", err->message);
    rc = ops->create(&api, host, &server, p, &inst, err);
    fake_params_free(p); /* pool_default copies what it keeps */
    return rc;
}

static void make_ok(const fake_param_t *items, size_t n)
{
    dal_error_t err;

    ck_assert_msg(make(items, n, &err) == 0, "%s", err.message);
}

static dal_conn_t *take(void)
{
    dal_conn_t *c = NULL;
    dal_error_t err;

    ck_assert_msg(ops->acquire(inst, &c, &err) == 0, "%s", err.message);
    ck_assert_ptr_nonnull(c);
    return c;
}

static dal_pool_stats_t stats(void)
{
    dal_pool_stats_t st;

    memset(&st, 0xff, sizeof st);
    ops->stats(inst, &st);
    return st;
}

static uint64_t ms_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Poll cond() for up to ms: the keeper works on its own schedule. */
#define EVENTUALLY(cond, ms)                                                   \
    do {                                                                       \
        uint64_t until_ = ms_now() + (ms);                                     \
        while (!(cond) && ms_now() < until_)                                   \
            sleep_ms(10);                                                      \
        ck_assert_msg((cond), "not true within %d ms: %s", (int)(ms), #cond);  \
    } while (0)

START_TEST(reuses_the_idle_connection)
{
    dal_conn_t *a, *b;

    make_ok(NULL, 0);
    a = take();
    ops->release(inst, a, 1);
    b = take();
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(atomic_load(&opened), 1);
    ck_assert_uint_eq(stats().in_use, 1);
    ck_assert_uint_eq(stats().created, 1);
    ops->release(inst, b, 1);
    ck_assert_uint_eq(stats().in_use, 0);
    ck_assert_uint_eq(stats().idle, 1);
    /* within validation_interval: trusted without a round trip */
    ck_assert_int_eq(atomic_load(&pings), 0);
    /* reset = true by default: one per return */
    ck_assert_int_eq(atomic_load(&resets), 2);
}
END_TEST

START_TEST(exhausted_after_acquire_timeout)
{
    static const fake_param_t p[] = {{"max_size", 0, "2"}, {"acquire_timeout", 0, "200ms"}};
    dal_conn_t *a, *b, *c = NULL;
    dal_error_t err;
    uint64_t t0, waited;

    make_ok(p, 2);
    a = take();
    b = take();
    t0 = ms_now();
    ck_assert_int_eq(ops->acquire(inst, &c, &err), DAL_ECONNECT);
    waited = ms_now() - t0;
    ck_assert_ptr_null(c);
    ck_assert_msg(waited >= 195 && waited < 2000, "waited %d ms", (int)waited);
    ck_assert_msg(strstr(err.message, "pool exhausted") != NULL, "%s", err.message);
    ck_assert_msg(strstr(err.message, "dbTest0") != NULL, "%s", err.message);
    ck_assert_msg(strstr(err.message, "127.0.0.1:3306") != NULL, "%s", err.message);
    ck_assert_msg(strstr(err.message, "200 ms") != NULL, "%s", err.message);
    ck_assert_uint_eq(stats().timed_out, 1);
    ck_assert_uint_eq(stats().waiting, 0);
    ops->release(inst, a, 1);
    ops->release(inst, b, 1);
}
END_TEST

START_TEST(no_wait_with_zero_timeout)
{
    static const fake_param_t p[] = {{"max_size", 0, "1"}, {"acquire_timeout", 0, "0"}};
    dal_conn_t *a, *c = NULL;
    dal_error_t err;

    make_ok(p, 2);
    a = take();
    ck_assert_int_eq(ops->acquire(inst, &c, &err), DAL_ECONNECT);
    ck_assert_ptr_nonnull(strstr(err.message, "pool exhausted"));
    ops->release(inst, a, 1);
}
END_TEST

/* Waiters in line: each records when its turn came. */
typedef struct turn {
    int who;
    int reusable; /* how it gives the connection back */
} turn_t;

static atomic_int served[8];
static atomic_int nserved;

static void *wait_turn(void *arg)
{
    turn_t *t = arg;
    dal_conn_t *c = take();

    atomic_store(&served[atomic_fetch_add(&nserved, 1)], t->who);
    sleep_ms(20);
    ops->release(inst, c, t->reusable);
    return NULL;
}

static void line_up(turn_t *turns, pthread_t *th, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, wait_turn, &turns[i]), 0);
        /* the next one starts only once this one is queued */
        EVENTUALLY(stats().waiting == (uint32_t)i + 1, 2000);
    }
}

START_TEST(waiters_are_served_in_order)
{
    static const fake_param_t p[] = {{"max_size", 0, "1"}, {"acquire_timeout", 0, "10s"}};
    turn_t turns[4] = {{0, 1}, {1, 1}, {2, 1}, {3, 1}};
    pthread_t th[4];
    dal_conn_t *held;
    int i;

    make_ok(p, 2);
    atomic_store(&nserved, 0);
    held = take();
    line_up(turns, th, 4);
    ops->release(inst, held, 1);
    for (i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < 4; i++)
        ck_assert_int_eq(atomic_load(&served[i]), i);
    ck_assert_int_eq(atomic_load(&opened), 1);
}
END_TEST

START_TEST(broken_connection_is_replaced_for_the_next_waiter)
{
    static const fake_param_t p[] = {{"max_size", 0, "1"}, {"acquire_timeout", 0, "10s"}};
    turn_t turns[2] = {{0, 0}, {1, 1}};
    pthread_t th[2];
    dal_conn_t *held;

    make_ok(p, 2);
    atomic_store(&nserved, 0);
    held = take();
    line_up(turns, th, 2);
    ops->release(inst, held, 0); /* broken: closed, the first waiter opens anew */
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    ck_assert_int_eq(atomic_load(&served[0]), 0);
    ck_assert_int_eq(atomic_load(&served[1]), 1);
    ck_assert_int_eq(atomic_load(&opened), 3);
    ck_assert_int_eq(atomic_load(&closed_n), 2);
    ck_assert_uint_eq(stats().idle, 1);
}
END_TEST

START_TEST(dead_idle_connection_is_replaced)
{
    static const fake_param_t p[] = {{"validation_interval", 0, "0"}};
    dal_conn_t *a, *b;

    make_ok(p, 1);
    a = take();
    ops->release(inst, a, 1);
    ((fconn_t *)a)->alive = 0; /* killed by the server while idle */
    b = take();
    ck_assert_int_eq(((fconn_t *)b)->id, 2);
    ck_assert_int_eq(atomic_load(&pings), 1);
    ck_assert_uint_eq(stats().closed, 1);
    ck_assert_uint_eq(stats().in_use, 1);
    ops->release(inst, b, 1);
}
END_TEST

START_TEST(max_lifetime_retires_connections)
{
    static const fake_param_t p[] = {{"max_lifetime", 0, "50ms"}};
    dal_conn_t *a, *b;

    make_ok(p, 1);
    a = take();
    ops->release(inst, a, 1);
    sleep_ms(120);
    b = take();
    ck_assert_int_eq(((fconn_t *)b)->id, 2);
    ck_assert_int_ge(atomic_load(&closed_n), 1);
    /* still too old when it comes back later: closed, not kept */
    sleep_ms(120);
    ops->release(inst, b, 1);
    ck_assert_uint_eq(stats().idle, 0);
    ck_assert_int_eq(atomic_load(&closed_n), 2);
}
END_TEST

START_TEST(min_idle_and_idle_timeout)
{
    static const fake_param_t p[] = {
        {"max_size", 0, "5"}, {"min_idle", 0, "2"}, {"idle_timeout", 0, "100ms"}};
    dal_conn_t *c[4];
    int i;

    make_ok(p, 3);
    EVENTUALLY(stats().idle == 2, 3000);
    for (i = 0; i < 4; i++)
        c[i] = take();
    for (i = 0; i < 4; i++)
        ops->release(inst, c[i], 1);
    ck_assert_uint_eq(stats().idle, 4);
    /* the keeper closes the two beyond min_idle once they idled 100 ms */
    EVENTUALLY(stats().idle == 2, 3000);
    ck_assert_uint_eq(stats().closed, 2);
    ck_assert_uint_eq(stats().created, 4);
}
END_TEST

START_TEST(reset_between_borrowers)
{
    dal_conn_t *a;

    make_ok(NULL, 0);
    a = take();
    atomic_store(&fail_reset, 1); /* the borrower's state cannot be undone */
    ops->release(inst, a, 1);
    ck_assert_int_eq(atomic_load(&resets), 1);
    ck_assert_int_eq(atomic_load(&closed_n), 1);
    ck_assert_uint_eq(stats().idle, 0);
}
END_TEST

START_TEST(reset_can_be_turned_off)
{
    static const fake_param_t p[] = {{"reset", 0, "false"}};

    make_ok(p, 1);
    ops->release(inst, take(), 1);
    ck_assert_int_eq(atomic_load(&resets), 0);
    ck_assert_uint_eq(stats().idle, 1);
}
END_TEST

START_TEST(leak_is_reported_with_its_statement)
{
    static const fake_param_t p[] = {{"leak_threshold", 0, "100ms"}};
    dal_conn_t *a;

    make_ok(p, 1);
    statement = "trace_id=t-42 SELECT name FROM wm_food WHERE id = ?";
    a = take();
    statement = NULL;
    EVENTUALLY(log_has("possible connection leak"), 3000);
    ck_assert(log_has("trace_id=t-42 SELECT name FROM wm_food WHERE id = ?"));
    ck_assert(log_has("dbTest0"));
    ops->release(inst, a, 1);
    ck_assert(log_has("came back after"));
}
END_TEST

START_TEST(open_failure_gives_the_slot_back)
{
    static const fake_param_t p[] = {{"max_size", 0, "1"}};
    dal_conn_t *c = NULL;
    dal_error_t err;

    make_ok(p, 1);
    atomic_store(&fail_open, 1);
    ck_assert_int_eq(ops->acquire(inst, &c, &err), DAL_ECONNECT);
    ck_assert_ptr_nonnull(strstr(err.message, "server down"));
    atomic_store(&fail_open, 0);
    ck_assert_uint_eq(stats().in_use, 0);
    ops->release(inst, take(), 1); /* the one slot is usable again */
}
END_TEST

START_TEST(foreign_connection_is_closed)
{
    dal_conn_t *stray;

    make_ok(NULL, 0);
    ck_assert_int_eq(t_open(NULL, &stray, NULL), 0);
    ops->release(inst, stray, 1);
    ck_assert(log_has("did not lend"));
    ck_assert_int_eq(atomic_load(&closed_n), 1);
}
END_TEST

START_TEST(bad_settings_are_refused)
{
    static const fake_param_t zero[] = {{"max_size", 0, "0"}};
    static const fake_param_t more[] = {{"max_size", 0, "2"}, {"min_idle", 0, "3"}};
    dal_error_t err;

    ck_assert_int_eq(make(zero, 1, &err), DAL_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err.message, "pool.max_size"));
    ck_assert_int_eq(make(more, 2, &err), DAL_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err.message, "pool.min_idle"));
    inst = NULL;
}
END_TEST

static void *churn(void *arg)
{
    int i;

    (void)arg;
    for (i = 0; i < 3000; i++)
        ops->release(inst, take(), i % 97 != 0);
    return NULL;
}

START_TEST(many_threads_keep_the_limit)
{
    static const fake_param_t p[] = {{"max_size", 0, "2"}, {"acquire_timeout", 0, "30s"}};
    pthread_t th[4];
    int i;

    make_ok(p, 2);
    for (i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, churn, NULL), 0);
    for (i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    ck_assert_uint_eq(stats().in_use, 0);
    ck_assert_uint_le(stats().idle, 2);
    ck_assert_int_eq(atomic_load(&opened) - atomic_load(&closed_n), (int)stats().idle);
}
END_TEST

START_TEST(none_connects_every_time)
{
    dal_conn_t *a, *b;

    fake_plugin_close(&plug);
    load("none");
    make_ok(NULL, 0);
    a = take();
    b = take();
    ck_assert_ptr_ne(a, b);
    ck_assert_uint_eq(stats().in_use, 2);
    ops->release(inst, a, 1);
    ops->release(inst, b, 0);
    ck_assert_int_eq(atomic_load(&closed_n), 2);
    ck_assert_uint_eq(stats().created, 2);
    ck_assert_uint_eq(stats().closed, 2);
    ck_assert_uint_eq(stats().in_use, 0);
}
END_TEST

static Suite *unit_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("default");

    tcase_add_checked_fixture(tc, unit_setup, unit_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reuses_the_idle_connection);
    tcase_add_test(tc, exhausted_after_acquire_timeout);
    tcase_add_test(tc, no_wait_with_zero_timeout);
    tcase_add_test(tc, waiters_are_served_in_order);
    tcase_add_test(tc, broken_connection_is_replaced_for_the_next_waiter);
    tcase_add_test(tc, dead_idle_connection_is_replaced);
    tcase_add_test(tc, max_lifetime_retires_connections);
    tcase_add_test(tc, min_idle_and_idle_timeout);
    tcase_add_test(tc, reset_between_borrowers);
    tcase_add_test(tc, reset_can_be_turned_off);
    tcase_add_test(tc, leak_is_reported_with_its_statement);
    tcase_add_test(tc, open_failure_gives_the_slot_back);
    tcase_add_test(tc, foreign_connection_is_closed);
    tcase_add_test(tc, bad_settings_are_refused);
    tcase_add_test(tc, many_threads_keep_the_limit);
    tcase_add_test(tc, none_connects_every_time);
    suite_add_tcase(s, tc);
    return s;
}

/* ============================================================ live part */

static char *live_dir;
static dal_t *live_dal;
static pthread_mutex_t live_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char live_log[16384];

static void live_log_fn(void *user, dal_log_level_t level, const char *component,
                        const char *message)
{
    size_t len;

    (void)user, (void)level;
    pthread_mutex_lock(&live_log_mu);
    len = strlen(live_log);
    snprintf(live_log + len, sizeof live_log - len, "%s: %s\n", component, message);
    pthread_mutex_unlock(&live_log_mu);
}

static int live_log_has(const char *s)
{
    int yes;

    pthread_mutex_lock(&live_log_mu);
    yes = strstr(live_log, s) != NULL;
    pthread_mutex_unlock(&live_log_mu);
    return yes;
}

/* Open an INI with datasources ds0 and ds1 on the cluster's first two
 * masters; extra_dal goes into [dal], extra_ds1 into [datasource ds1]. */
static void live_open(const char *extra_dal, const char *extra_ds1)
{
    const char *ports = tu_env("DAL_TEST_PORTS");
    char ini[4096], *path;
    unsigned p0 = 0, p1 = 0;
    dal_open_opts_t o = {0};
    dal_error_t err;

    ck_assert_int_eq(sscanf(ports, "%u %u", &p0, &p1), 2);
    snprintf(ini, sizeof ini,
             "[dal]\n%s\n"
             "[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%u/product_0\n"
             "[datasource ds1]\nmaster = mysql://dal:dalpass@127.0.0.1:%u/product_1\n%s\n",
             extra_dal, p0, p1, extra_ds1);
    live_dir = tu_mkdtemp();
    path = tu_write(live_dir, "dal.ini", ini);
    live_log[0] = '\0';
    o.log = live_log_fn;
    o.log_level = DAL_LOG_INFO;
    ck_assert_msg(dal_open(path, &o, &live_dal, &err) == 0, "%s", err.message);
    free(path);
}

static void live_teardown(void)
{
    dal_close(live_dal);
    live_dal = NULL;
    tu_rmtree(live_dir);
    free(live_dir);
}

static dal_node_t *node_of(const char *name)
{
    dal_snapshot_t *s = snapshot_acquire(live_dal);
    dal_node_t *n = snapshot_node(s, name);

    /* the dal_t keeps its own reference: the node outlives this test */
    snapshot_unref(s);
    ck_assert_ptr_nonnull(n);
    return n;
}

static dal_conn_t *live_take(dal_node_t *n)
{
    dal_conn_t *c = NULL;
    dal_error_t err;
    int reused;

    ck_assert_msg(server_acquire(&n->master, &c, &reused, &err) == 0, "%s", err.message);
    return c;
}

/* Run sql on c; 0 or the server's error number. */
static unsigned run(dal_conn_t *c, const char *sql)
{
    MYSQL_RES *r;

    if (mysql_query(&c->mysql, sql) != 0)
        return mysql_errno(&c->mysql);
    r = mysql_store_result(&c->mysql);
    mysql_free_result(r);
    return 0;
}

/* The first column of the first row as text ("NULL" for NULL), or the error. */
static char *scalar(dal_conn_t *c, const char *sql, char *buf, size_t cap)
{
    MYSQL_RES *r;
    MYSQL_ROW row;

    if (mysql_query(&c->mysql, sql) != 0) {
        snprintf(buf, cap, "error %u", mysql_errno(&c->mysql));
        return buf;
    }
    r = mysql_store_result(&c->mysql);
    row = r ? mysql_fetch_row(r) : NULL;
    snprintf(buf, cap, "%s", row && row[0] ? row[0] : "NULL");
    mysql_free_result(r);
    return buf;
}

/* A session of its own (not pooled) to the node's server, as root. */
static MYSQL *admin(const dal_node_t *n)
{
    MYSQL *m = mysql_init(NULL);

    ck_assert_ptr_nonnull(mysql_real_connect(m, "127.0.0.1", "root", NULL, NULL,
                                             n->cfg->master.port, NULL, 0));
    return m;
}

START_TEST(live_exhausted_names_the_server)
{
    dal_node_t *n;
    dal_conn_t *a, *c = NULL;
    dal_error_t err;
    char want[64];
    int reused;
    uint64_t t0;

    live_open("pool = default\npool.max_size = 4\npool.acquire_timeout = 300ms",
              "pool.max_size = 1");
    n = node_of("ds1");
    a = live_take(n);
    t0 = ms_now();
    ck_assert_int_eq(server_acquire(&n->master, &c, &reused, &err), DAL_ECONNECT);
    ck_assert_uint_ge(ms_now() - t0, 295);
    snprintf(want, sizeof want, "127.0.0.1:%u", n->cfg->master.port);
    ck_assert_msg(strstr(err.message, "pool exhausted") && strstr(err.message, "ds1") &&
                  strstr(err.message, want), "%s", err.message);
    /* ds0 has its own pool of 4 (the override is ds1's alone) */
    server_release(&node_of("ds0")->master, live_take(node_of("ds0")), 1);
    server_release(&n->master, a, 1);
    live_teardown();
}
END_TEST

static dal_node_t *live_node;

static void *live_wait_turn(void *arg)
{
    turn_t *t = arg;
    dal_conn_t *c = live_take(live_node);
    char buf[32];

    ck_assert_str_eq(scalar(c, "SELECT 1", buf, sizeof buf), "1");
    atomic_store(&served[atomic_fetch_add(&nserved, 1)], t->who);
    server_release(&live_node->master, c, 1);
    return NULL;
}

START_TEST(live_waiters_in_order)
{
    turn_t turns[3] = {{0, 1}, {1, 1}, {2, 1}};
    pthread_t th[3];
    dal_pool_stats_t st;
    dal_conn_t *held;
    int i;

    live_open("pool = default\npool.max_size = 1\npool.acquire_timeout = 10s", "");
    live_node = node_of("ds0");
    atomic_store(&nserved, 0);
    held = live_take(live_node);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, live_wait_turn, &turns[i]), 0);
        EVENTUALLY((server_pool_stats(&live_node->master, &st),
                    st.waiting == (uint32_t)i + 1), 3000);
    }
    server_release(&live_node->master, held, 1);
    for (i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < 3; i++)
        ck_assert_int_eq(atomic_load(&served[i]), i);
    live_teardown();
}
END_TEST

/* KILL the pooled session from another one; the next borrower must get a
 * working connection without seeing an error. */
static void kill_and_reuse(dal_node_t *n, long pause_ms)
{
    char id[32], id2[32], sql[64], buf[32];
    dal_conn_t *c = live_take(n);
    MYSQL *m = admin(n);

    scalar(c, "SELECT CONNECTION_ID()", id, sizeof id);
    server_release(&n->master, c, 1);
    snprintf(sql, sizeof sql, "KILL %s", id);
    ck_assert_int_eq(mysql_query(m, sql), 0);
    mysql_close(m);
    sleep_ms(pause_ms);
    c = live_take(n);
    ck_assert_str_eq(scalar(c, "SELECT 1", buf, sizeof buf), "1");
    ck_assert_str_ne(scalar(c, "SELECT CONNECTION_ID()", id2, sizeof id2), id);
    server_release(&n->master, c, 1);
}

START_TEST(live_killed_connection_is_replaced)
{
    dal_pool_stats_t st;
    dal_node_t *n;

    /* checked on every reuse */
    live_open("pool = default\npool.validation_interval = 0", "");
    n = node_of("ds0");
    kill_and_reuse(n, 50);
    server_pool_stats(&n->master, &st);
    ck_assert_uint_eq(st.created, 2);
    ck_assert_uint_eq(st.closed, 1);
    live_teardown();
    /* the default: checked once idle longer than validation_interval */
    live_open("pool = default\npool.validation_interval = 200ms", "");
    kill_and_reuse(node_of("ds0"), 400);
    live_teardown();
}
END_TEST

START_TEST(live_state_is_reset_between_borrowers)
{
    char id[32], id2[32], buf[64];
    dal_node_t *n;
    dal_conn_t *c;

    live_open("pool = default\npool.max_size = 1", "");
    n = node_of("ds0");
    c = live_take(n);
    ck_assert_uint_eq(run(c, "CREATE TABLE IF NOT EXISTS pool_reset (v INT)"), 0);
    ck_assert_uint_eq(run(c, "DELETE FROM pool_reset"), 0);
    server_release(&n->master, c, 1);

    c = live_take(n);
    scalar(c, "SELECT CONNECTION_ID()", id, sizeof id);
    ck_assert_uint_eq(run(c, "CREATE TEMPORARY TABLE pool_tmp (a INT)"), 0);
    ck_assert_uint_eq(run(c, "SET @secret = 42"), 0);
    ck_assert_uint_eq(run(c, "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"), 0);
    ck_assert_uint_eq(run(c, "BEGIN"), 0);
    ck_assert_uint_eq(run(c, "INSERT INTO pool_reset VALUES (1)"), 0);
    server_release(&n->master, c, 1); /* no COMMIT: the transaction must not survive */

    c = live_take(n);
    ck_assert_str_eq(scalar(c, "SELECT CONNECTION_ID()", id2, sizeof id2), id); /* same session */
    ck_assert_str_eq(scalar(c, "SELECT @secret", buf, sizeof buf), "NULL");
    ck_assert_str_eq(scalar(c, "SELECT COUNT(*) FROM pool_tmp", buf, sizeof buf), "error 1146");
    ck_assert_str_eq(scalar(c, "SELECT @@in_transaction", buf, sizeof buf), "0");
    ck_assert_str_eq(scalar(c, "SELECT COUNT(*) FROM pool_reset", buf, sizeof buf), "0");
    ck_assert_ptr_null(strstr(scalar(c, "SELECT @@sql_mode", buf, sizeof buf),
                              "NO_BACKSLASH_ESCAPES"));
    ck_assert_int_eq(c->no_backslash_escapes, 0);
    /* a user variable set inside a SELECT is invisible to the server's state
     * tracking: the core marks such statements */
    ck_assert_uint_eq(run(c, "SELECT @sneaky := 7"), 0);
    conn_mark_dirty(c);
    server_release(&n->master, c, 1);

    c = live_take(n);
    ck_assert_str_eq(scalar(c, "SELECT @sneaky", buf, sizeof buf), "NULL");
    ck_assert_uint_eq(run(c, "DROP TABLE pool_reset"), 0);
    server_release(&n->master, c, 1);
    live_teardown();
}
END_TEST

START_TEST(live_clean_session_is_not_reset)
{
    char buf[32];
    dal_node_t *n;
    dal_conn_t *c;

    live_open("pool = default\npool.max_size = 1", "");
    n = node_of("ds0");
    c = live_take(n);
    ck_assert_int_eq(c->tracked, 1);
    /* The server does not flag a variable set inside a SELECT (the core
     * marks such statements), which makes it a probe: had the return cost a
     * COM_RESET_CONNECTION, the next borrower would not see it. */
    ck_assert_uint_eq(run(c, "SELECT @probe := 1"), 0);
    server_release(&n->master, c, 1);
    c = live_take(n);
    ck_assert_str_eq(scalar(c, "SELECT @probe", buf, sizeof buf), "1");
    conn_mark_dirty(c);
    server_release(&n->master, c, 1);
    live_teardown();
}
END_TEST

START_TEST(live_leak_report_names_the_statement)
{
    dal_node_t *n;
    dal_conn_t *c;

    live_open("pool = default\npool.leak_threshold = 200ms", "");
    n = node_of("ds1");
    pool_set_statement("SELECT name FROM wm_food WHERE wm_poi_id = ?", "trace-7");
    c = live_take(n);
    pool_set_statement(NULL, NULL);
    EVENTUALLY(live_log_has("possible connection leak"), 3000);
    ck_assert(live_log_has("trace_id=trace-7 SELECT name FROM wm_food WHERE wm_poi_id = ?"));
    ck_assert(live_log_has("pool_default:ds1"));
    server_release(&n->master, c, 1);
    EVENTUALLY(live_log_has("came back after"), 1000);
    live_teardown();
}
END_TEST

START_TEST(live_min_idle_is_kept)
{
    dal_pool_stats_t st;
    dal_node_t *n;

    live_open("pool = default\npool.min_idle = 2", "");
    n = node_of("ds0");
    EVENTUALLY((server_pool_stats(&n->master, &st), st.idle == 2), 5000);
    ck_assert_uint_eq(st.created, 2);
    live_teardown();
}
END_TEST

/* The server's id of a connection borrowed from n's master and given
 * back, into buf (32 bytes). */
static char *borrowed_id(dal_node_t *n, char *buf)
{
    dal_conn_t *c = live_take(n);

    scalar(c, "SELECT CONNECTION_ID()", buf, 32);
    server_release(&n->master, c, 1);
    return buf;
}

START_TEST(live_pool_none_connects_per_borrow)
{
    char a[32], b[32];
    dal_node_t *n;

    live_open("pool = none", "");
    n = node_of("ds0");
    borrowed_id(n, a);
    ck_assert_str_ne(borrowed_id(n, b), a);
    live_teardown();
}
END_TEST

/* The built-in cache (no pool plugin): a thread's connection parked on
 * release comes back to it; another thread takes it rather than opening
 * one; a flush closes the parked ones too. */
typedef struct park_arg {
    dal_node_t *n;
    char id[32];
} park_arg_t;

static void *park_other_thread(void *p)
{
    park_arg_t *a = p;

    borrowed_id(a->n, a->id);
    return NULL;
}

START_TEST(live_builtin_cache_parks_per_thread)
{
    char a[32], b[32];
    park_arg_t other;
    dal_pool_stats_t st;
    dal_conn_t *c1, *c2;
    pthread_t t;
    dal_node_t *n;

    live_open("", "");
    n = node_of("ds0");
    borrowed_id(n, a);
    ck_assert_str_eq(borrowed_id(n, b), a);
    server_pool_stats(&n->master, &st);
    ck_assert_uint_eq(st.created, 1);
    ck_assert_uint_eq(st.idle, 1);
    /* parked by this thread, taken by another: no second connection */
    other.n = n;
    ck_assert_int_eq(pthread_create(&t, NULL, park_other_thread, &other), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_str_eq(other.id, a);
    server_pool_stats(&n->master, &st);
    ck_assert_uint_eq(st.created, 1);
    ck_assert_uint_eq(st.idle, 1);
    /* two at once: one parked, one stacked, both idle and both reused */
    c1 = live_take(n);
    c2 = live_take(n);
    server_release(&n->master, c1, 1);
    server_release(&n->master, c2, 1);
    server_pool_stats(&n->master, &st);
    ck_assert_uint_eq(st.created, 2);
    ck_assert_uint_eq(st.idle, 2);
    c1 = live_take(n);
    c2 = live_take(n);
    server_release(&n->master, c2, 1);
    server_release(&n->master, c1, 1);
    server_pool_stats(&n->master, &st);
    ck_assert_uint_eq(st.created, 2);
    /* a flush closes the parked connection with the stacked one */
    connpool_flush(&n->master.pool);
    server_pool_stats(&n->master, &st);
    ck_assert_uint_eq(st.idle, 0);
    ck_assert_uint_eq(st.closed, 2);
    ck_assert_uint_eq(st.in_use, 0);
    live_teardown();
}
END_TEST

START_TEST(live_unknown_pool_parameter_is_a_config_error)
{
    const char *ports = tu_env("DAL_TEST_PORTS");
    char ini[1024], *path, *dir = tu_mkdtemp();
    dal_t *d = NULL;
    dal_error_t err;

    snprintf(ini, sizeof ini,
             "[dal]\npool = default\npool.max_sise = 3\n"
             "[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%.5s/product_0\n",
             ports);
    path = tu_write(dir, "dal.ini", ini);
    ck_assert_int_eq(dal_open(path, NULL, &d, &err), DAL_ECONFIG);
    ck_assert_msg(strstr(err.message, "dal.ini:3") && strstr(err.message, "max_sise"), "%s",
                  err.message);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static Suite *live_suite(void)
{
    Suite *s = suite_create("pool-live");
    TCase *tc = tcase_create("mariadb");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, live_exhausted_names_the_server);
    tcase_add_test(tc, live_builtin_cache_parks_per_thread);
    tcase_add_test(tc, live_waiters_in_order);
    tcase_add_test(tc, live_killed_connection_is_replaced);
    tcase_add_test(tc, live_state_is_reset_between_borrowers);
    tcase_add_test(tc, live_clean_session_is_not_reset);
    tcase_add_test(tc, live_leak_report_names_the_statement);
    tcase_add_test(tc, live_min_idle_is_kept);
    tcase_add_test(tc, live_pool_none_connects_per_borrow);
    tcase_add_test(tc, live_unknown_pool_parameter_is_a_config_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int live = argc > 1 && strcmp(argv[1], "live") == 0;
    int status = tu_run(live ? live_suite() : unit_suite(), CK_FORK_GETENV);

    return status;
}
