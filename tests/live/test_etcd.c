/*
 * test_etcd.c -- the configuration in etcd, against a real three-member
 * etcd cluster and real MariaDB servers.
 *
 * Run by tests/suites/etcd_test.sh with DAL_TEST_ETCD (the client endpoints),
 * DAL_TEST_ETCD_DIR (the cluster directory tests/harness/etcd.sh manages, so
 * members can be killed and restarted) and DAL_TEST_PORTS (four MariaDB
 * servers holding product_0..3).  The tests run in order in one process
 * and leave every member running when they end.
 *
 * Nothing here waits a fixed time for something to happen: each wait is
 * "until it is so", with a generous deadline that only a hang reaches.
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
#define WATCHERS 20
#define PUSHES_PROPAGATION 10
#define PUSHES_LOAD 50
#define LOAD_THREADS 4
#define DEADLINE_S 60

static int ports[NODES];
static const char *endpoints, *etcd_dir, *srcdir;
static char *dir;
static int prefix_serial;
static char doc_tail[256];     /* appended to every document while set */

/* ---------------------------------------------------------------- helpers */

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Run `tests/harness/etcd.sh VERB DIR MEMBER`; must succeed. */
static void etcd_sh(const char *verb, const char *member)
{
    char cmd[2048];

    snprintf(cmd, sizeof cmd, "bash %s/tests/harness/etcd.sh %s %s %s >/dev/null", srcdir, verb,
             etcd_dir, member);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

/* A fresh key prefix per test, so tests do not see each other's versions. */
static void new_url(char *url, size_t cap, const char *eps, const char *extra)
{
    snprintf(url, cap, "etcd://%s/dal-test-%d-%d?backoff_max=300ms%s", eps, (int)getpid(),
             ++prefix_serial, extra ? extra : "");
}

/* The document: four datasources, a sharded table, a serial in a comment
 * and, by variant, the pool plugin and an extra table. */
static void make_doc(char *text, size_t cap, int serial)
{
    size_t n = 0;

    n += (size_t)snprintf(text + n, cap - n, "; serial %d\n[dal]\n", serial);
    if (serial % 3 == 1)
        n += (size_t)snprintf(text + n, cap - n,
                              "pool = default\npool.max_size = %d\npool.acquire_timeout = 10s\n",
                              4 + serial % 7);
    tu_datasources(text, cap, &n, "db", ports, NODES, "dalpass");
    n += (size_t)snprintf(text + n, cap - n,
                          "[table et]\ndatasource = db\ndb_shard_num = 4\ntable_shard_num = 8\n"
                          "shard_key = k\nstrategy = mod\n");
    if (serial % 2 == 0)
        n += (size_t)snprintf(text + n, cap - n, "[table extra_%d]\ndatasource = db0\n", serial);
    snprintf(text + n, cap - n, "%s", doc_tail);
}

static int64_t push_text(const char *url, const char *text)
{
    dal_source_t *src = NULL;
    dal_error_t err;
    int64_t rev = 0;

    ck_assert_msg(dal_source_open(url, NULL, &src, &err) == 0, "%s", err.message);
    ck_assert_msg(dal_source_put(src, text, strlen(text), -1, &rev, &err) == 0, "push: %s",
                  err.message);
    dal_source_close(src);
    return rev;
}

static int64_t push(const char *url, int serial)
{
    char text[8192];

    make_doc(text, sizeof text, serial);
    return push_text(url, text);
}

static dal_t *open_url(const char *url)
{
    dal_error_t err;
    dal_t *dal = NULL;

    ck_assert_msg(dal_open(url, NULL, &dal, &err) == 0, "dal_open: %s", err.message);
    return dal;
}

static dal_source_info_t info(dal_t *dal)
{
    dal_source_info_t i;

    ck_assert_int_eq(dal_source_info(dal, &i), 0);
    return i;
}

/* Until dal runs revision rev (or a later one); the time it took. */
static void wait_rev(dal_t *dal, int64_t rev, const char *what)
{
    double t0 = now_ms();

    while (info(dal).revision < rev) {
        ck_assert_msg(now_ms() - t0 < DEADLINE_S * 1e3, "%s: still at revision %lld, not %lld",
                      what, (long long)info(dal).revision, (long long)rev);
        usleep(2000);
    }
}

static void wait_state(dal_t *dal, const char *state)
{
    double t0 = now_ms();

    while (strcmp(info(dal).state, state) != 0) {
        ck_assert_msg(now_ms() - t0 < DEADLINE_S * 1e3, "state stays %s, never %s",
                      info(dal).state, state);
        usleep(10000);
    }
}

/* A write and a read on the sharded table: the configuration serves. */
static int serve_once(dal_t *dal, long long k, dal_error_t *err)
{
    dal_value_t p[2] = {dal_int(k), dal_int(k)};
    dal_result_t *r = NULL;
    int rc = dal_exec(dal, NULL, "REPLACE INTO et (id, k) VALUES (?, ?)", p, 2, NULL, err);

    if (rc == 0)
        rc = dal_query(dal, NULL, "SELECT k FROM et WHERE k = ?", &p[1], 1, &r, err);
    if (rc == 0 && dal_result_next(r, err) != 1) {
        rc = DAL_EINVAL;
        snprintf(err->message, sizeof err->message, "k=%lld not read back", k);
    }
    dal_result_free(r);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void setup(void)
{
    char url[1024];
    dal_error_t err;
    dal_t *dal;

    tu_ports(ports, NODES);
    endpoints = tu_env("DAL_TEST_ETCD");
    etcd_dir = tu_env("DAL_TEST_ETCD_DIR");
    srcdir = tu_env("DAL_SRCDIR");
    dir = tu_mkdtemp();
    new_url(url, sizeof url, endpoints, NULL);
    push(url, 0);
    dal = open_url(url);
    ck_assert_int_eq(dal_exec(dal, NULL, "DROP TABLE IF EXISTS et", NULL, 0, NULL, &err), 0);
    ck_assert_msg(dal_exec(dal, NULL, "CREATE TABLE et (id BIGINT PRIMARY KEY, k BIGINT)",
                           NULL, 0, NULL, &err) == 0, "%s", err.message);
    dal_close(dal);
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
}

/* ----------------------------------------------------------------- tests */

/*
 * 20 watchers, each its own dal_t: every pushed version is in force in
 * all of them.  The time from the push to each watcher running it is
 * printed as p50/p99 (bench/README.md records it; nothing here judges it).
 */
START_TEST(test_propagation)
{
    double lat[WATCHERS * PUSHES_PROPAGATION];
    dal_t *w[WATCHERS];
    char url[1024];
    size_t nlat = 0;
    int i, j;

    new_url(url, sizeof url, endpoints, NULL);
    push(url, 1);
    for (i = 0; i < WATCHERS; i++)
        w[i] = open_url(url);
    for (j = 0; j < PUSHES_PROPAGATION; j++) {
        int seen[WATCHERS] = {0}, left = WATCHERS;
        double t0 = now_ms();
        int64_t rev = push(url, 2 + j);
        while (left > 0) {
            ck_assert_msg(now_ms() - t0 < DEADLINE_S * 1e3, "push %d: %d watchers never saw "
                          "revision %lld", j, left, (long long)rev);
            for (i = 0; i < WATCHERS; i++)
                if (!seen[i] && info(w[i]).revision >= rev) {
                    seen[i] = 1;
                    left--;
                    lat[nlat++] = now_ms() - t0;
                }
            usleep(500);
        }
    }
    for (i = 0; i < WATCHERS; i++) {
        dal_source_info_t in = info(w[i]);
        ck_assert_str_eq(in.state, "ok");
        ck_assert_uint_eq(in.rejected, 0);
        dal_close(w[i]);
    }
    qsort(lat, nlat, sizeof lat[0], cmp_double);
    fprintf(stderr, "etcd propagation to %d watchers, %d pushes: p50 %.1f ms, p99 %.1f ms, "
            "max %.1f ms\n", WATCHERS, PUSHES_PROPAGATION, lat[nlat / 2],
            lat[(size_t)(nlat * 0.99)], lat[nlat - 1]);
}
END_TEST

/* One member killed: changes keep arriving through the others, in every
 * watcher, whichever member it was watching through. */
START_TEST(test_member_killed)
{
    dal_t *w[3];
    char url[1024];
    int64_t rev;
    int i;

    new_url(url, sizeof url, endpoints, NULL);
    push(url, 1);
    for (i = 0; i < 3; i++)
        w[i] = open_url(url);
    etcd_sh("kill", "e0");
    rev = push(url, 2);
    for (i = 0; i < 3; i++)
        wait_rev(w[i], rev, "after e0 was killed");
    rev = push(url, 3);
    for (i = 0; i < 3; i++)
        wait_rev(w[i], rev, "second push without e0");
    etcd_sh("restart", "e0");
    etcd_sh("healthy", "");
    for (i = 0; i < 3; i++)
        dal_close(w[i]);
}
END_TEST

/* A gauge of the Prometheus monitor's scrape on port; -1 if absent. */
static double scrape(unsigned port, const char *series)
{
    char *body = NULL;
    double v;

    ck_assert_int_eq(tu_http(port, "GET /metrics HTTP/1.0\r\n\r\n", &body), 200);
    v = tu_metric(body, series);
    free(body);
    return v;
}

/* Every member killed: the clients keep serving their configuration and
 * say the source is unreachable, in dal_source_info and as a metric;
 * restarted, they catch up to the newest revision. */
START_TEST(test_all_killed)
{
    dal_t *w[3];
    dal_error_t err;
    char url[1024];
    int64_t rev;
    int i;

    unsigned port = tu_free_port();

    snprintf(doc_tail, sizeof doc_tail, "[monitor prom]\nplugin = prometheus\naddress = "
             "127.0.0.1:%u\n", port);
    new_url(url, sizeof url, endpoints, NULL);
    push(url, 1);
    for (i = 0; i < 3; i++)
        w[i] = open_url(url);
    rev = info(w[0]).revision;
    ck_assert(scrape(port, "dal_config_source_unreachable") == 0);
    ck_assert(scrape(port, "dal_config_revision") == (double)rev);
    etcd_sh("kill", "e0");
    etcd_sh("kill", "e1");
    etcd_sh("kill", "e2");
    for (i = 0; i < 3; i++) {
        wait_state(w[i], "unreachable");
        ck_assert_msg(serve_once(w[i], 1000 + i, &err) == 0, "etcd down: %s", err.message);
        ck_assert_int_eq(info(w[i]).revision, rev);
    }
    ck_assert(scrape(port, "dal_config_source_unreachable") == 1);
    etcd_sh("restart", "e0");
    etcd_sh("restart", "e1");
    etcd_sh("restart", "e2");
    etcd_sh("healthy", "");
    rev = push(url, 2);
    for (i = 0; i < 3; i++) {
        wait_rev(w[i], rev, "after the restart");
        wait_state(w[i], "ok");
        ck_assert_msg(serve_once(w[i], 2000 + i, &err) == 0, "%s", err.message);
    }
    ck_assert(scrape(port, "dal_config_source_unreachable") == 0);
    ck_assert(scrape(port, "dal_config_revision") == (double)rev);
    for (i = 0; i < 3; i++)
        dal_close(w[i]);
    doc_tail[0] = '\0';
}
END_TEST

/* A client away while etcd compacts past its revision reads the whole key
 * again when it comes back, and runs the newest version. */
START_TEST(test_compaction)
{
    char url[1024], only_e0[256], cmd[2048];
    dal_t *dal;
    int64_t rev = 0;
    int i;

    /* the client knows e0 alone, so killing e0 takes it away */
    snprintf(only_e0, sizeof only_e0, "%.*s", (int)strcspn(endpoints, ","), endpoints);
    new_url(url, sizeof url, only_e0, NULL);
    push(url, 1);
    dal = open_url(url);
    etcd_sh("kill", "e0");
    wait_state(dal, "unreachable");
    {
        char others[1024];
        snprintf(others, sizeof others, "%s", url);
        /* the same key through the other members */
        snprintf(others, sizeof others, "etcd://%s/%s", endpoints + strcspn(endpoints, ",") + 1,
                 strstr(url + 7, "/") + 1);
        for (i = 2; i < 5; i++)
            rev = push(others, i);
    }
    snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 etcdctl --endpoints %s compact %lld >/dev/null",
             endpoints + strcspn(endpoints, ",") + 1, (long long)rev);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    etcd_sh("restart", "e0");
    etcd_sh("healthy", "");
    wait_rev(dal, rev, "after the compaction");
    ck_assert_uint_ge(info(dal).resyncs, 1);
    ck_assert_uint_eq(info(dal).rejected, 0);
    dal_close(dal);
}
END_TEST

/* The last error a dal_t logged. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char last_error[1024];

static void on_log(void *user, dal_log_level_t level, const char *component, const char *msg)
{
    if (level < DAL_LOG_ERROR)
        return;
    pthread_mutex_lock(&log_mu);
    snprintf(last_error, sizeof last_error, "%s", msg);
    pthread_mutex_unlock(&log_mu);
}

/* A bad document put straight into etcd, past `dal config push`'s check:
 * every client refuses it, counts it, and keeps serving the last good one. */
START_TEST(test_bad_document)
{
    dal_t *w[3];
    dal_error_t err;
    char url[1024], cmd[4096], key[256];
    int64_t rev;
    int i;

    dal_open_opts_t logged = {on_log, NULL, DAL_LOG_ERROR, NULL};
    char expect[512];

    new_url(url, sizeof url, endpoints, NULL);
    rev = push(url, 1);
    for (i = 0; i < 2; i++)
        w[i] = open_url(url);
    ck_assert_msg(dal_open(url, &logged, &w[2], &err) == 0, "%s", err.message);
    snprintf(key, sizeof key, "%.*s/config", (int)strcspn(strstr(url + 7, "/") + 1, "?"),
             strstr(url + 7, "/") + 1);
    snprintf(cmd, sizeof cmd, "printf '[table et]\\ndatasource = nowhere\\n' | bash "
             "%s/tests/harness/etcd.sh ctl %s put %s >/dev/null", srcdir, etcd_dir, key);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    for (i = 0; i < 3; i++) {
        double t0 = now_ms();
        while (info(w[i]).rejected < 1) {
            ck_assert_msg(now_ms() - t0 < DEADLINE_S * 1e3, "watcher %d never saw the bad "
                          "document", i);
            usleep(2000);
        }
        ck_assert_int_eq(info(w[i]).revision, rev);
        ck_assert_str_eq(info(w[i]).state, "ok");
        ck_assert_msg(serve_once(w[i], 3000 + i, &err) == 0, "%s", err.message);
    }
    /* the message is a file's, the key and revision in the file's place */
    snprintf(expect, sizeof expect, "%.*s/config@%lld:2: datasource: no [datasource nowhere]",
             (int)strcspn(url, "?"), url, (long long)rev + 1);
    pthread_mutex_lock(&log_mu);
    ck_assert_msg(strstr(last_error, expect) != NULL, "'%s' lacks '%s'", last_error, expect);
    pthread_mutex_unlock(&log_mu);
    /* the next good version is taken as usual */
    rev = push(url, 2);
    for (i = 0; i < 3; i++) {
        wait_rev(w[i], rev, "after the bad document");
        dal_close(w[i]);
    }
}
END_TEST

typedef struct worker {
    dal_t *dal;
    int id;
    atomic_int *stop;
    long ok, failed;
    char last_error[DAL_ERROR_MSG_MAX];
} worker_t;

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    long i = 0;

    while (!atomic_load(w->stop)) {
        dal_error_t err;
        if (serve_once(w->dal, (long long)w->id * 1000000 + i++, &err) == 0) {
            w->ok++;
        } else {
            w->failed++;
            snprintf(w->last_error, sizeof w->last_error, "%s", err.message);
        }
    }
    return NULL;
}

/* 50 pushes while 4 threads read and write through dal: not one statement
 * fails, every push is reloaded, no connection outlives dal_close. */
START_TEST(test_pushes_under_load)
{
    pthread_t th[LOAD_THREADS];
    worker_t w[LOAD_THREADS];
    atomic_int stop = 0;
    uint64_t reloads = 0, failures = 0;
    char url[1024];
    long ok = 0;
    dal_t *dal;
    int i;

    new_url(url, sizeof url, endpoints, NULL);
    push(url, 0);
    dal = open_url(url);
    for (i = 0; i < LOAD_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].dal = dal;
        w[i].id = i + 1;
        w[i].stop = &stop;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (i = 1; i <= PUSHES_LOAD; i++)
        wait_rev(dal, push(url, i), "under load");
    atomic_store(&stop, 1);
    for (i = 0; i < LOAD_THREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(w[i].failed == 0, "thread %d: %ld failed statements, last: %s", i,
                      w[i].failed, w[i].last_error);
        ok += w[i].ok;
    }
    dal_reload_stats(dal, &reloads, &failures);
    ck_assert_uint_eq(reloads, PUSHES_LOAD);
    ck_assert_uint_eq(failures, 0);
    dal_close(dal);
    tu_no_dal_connections(ports, NODES);
    fprintf(stderr, "etcd pushes under load: %d pushes, %ld statements, 0 failed\n", PUSHES_LOAD,
            ok);
}
END_TEST

/* A start while etcd cannot be reached: from the cache file of an earlier
 * run, with a warning; without one, a clear error. */
START_TEST(test_start_down)
{
    char url[1400], dead[1500], cache[1100], opt[1200], *prefix;
    dal_error_t err;
    dal_t *dal;
    unsigned port = tu_free_port();

    snprintf(cache, sizeof cache, "%s/dal.cache", dir);
    snprintf(opt, sizeof opt, "&cache=%s", cache);
    new_url(url, sizeof url, endpoints, opt);
    push(url, 1);
    dal = open_url(url); /* writes the cache */
    dal_close(dal);
    ck_assert_int_eq(access(cache, R_OK), 0);
    /* the same prefix at an address where nothing listens */
    prefix = strstr(url + 7, "/");
    snprintf(dead, sizeof dead, "etcd://127.0.0.1:%u%s", port, prefix);
    dal = open_url(dead);
    ck_assert_int_eq(info(dal).from_cache, 1);
    ck_assert_str_eq(info(dal).state, "unreachable");
    ck_assert_msg(serve_once(dal, 4000, &err) == 0, "from the cache: %s", err.message);
    dal_close(dal);
    /* and without a cache */
    *strstr(dead, "&cache=") = '\0';
    dal = NULL;
    ck_assert_int_eq(dal_open(dead, NULL, &dal, &err), DAL_ECONNECT);
    ck_assert_ptr_null(dal);
    ck_assert_msg(strstr(err.message, "no etcd endpoint answers") &&
                  strstr(err.message, "no cache"), "unclear: %s", err.message);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("etcd");
    TCase *tc = tcase_create("etcd");

    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_propagation);
    tcase_add_test(tc, test_member_killed);
    tcase_add_test(tc, test_all_killed);
    tcase_add_test(tc, test_compaction);
    tcase_add_test(tc, test_bad_document);
    tcase_add_test(tc, test_pushes_under_load);
    tcase_add_test(tc, test_start_down);
    suite_add_tcase(s, tc);
    return tu_run(s, CK_NOFORK);
}
