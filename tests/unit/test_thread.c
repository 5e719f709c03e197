/*
 * test_thread.c -- the signal mask of threads: the host's thread_create
 * (thread.c), and every thread dal and its plugins start, on an INI whose
 * servers are never reachable; the ticker thread.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <stdatomic.h>

#include <dal/dal.h>

#include "clock.h"
#include "host.h"
#include "thread.h"
#include "offline.h"
#include "testutil.h"

static void *mask_of_thread(void *arg)
{
    pthread_sigmask(SIG_SETMASK, NULL, arg);
    return NULL;
}

/* The host's thread_create: the new thread blocks every signal (SIGTERM
 * among them), the caller's mask stays as it was. */
START_TEST(test_thread_create)
{
    const dal_host_api_t *api = dal_host_api();
    sigset_t none, inside, after;
    pthread_t t;

    ck_assert(DAL_HAS_FIELD(dal_host_api_t, api, thread_create));
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    sigemptyset(&inside);
    ck_assert_int_eq(api->thread_create(&t, mask_of_thread, &inside), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert(sigismember(&inside, SIGTERM) == 1 && sigismember(&inside, SIGINT) == 1);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    ck_assert_int_eq(sigismember(&after, SIGTERM), 0);
}
END_TEST

/* Whether the thread whose /proc status file is path blocks every signal it
 * can: all but SIGKILL and SIGSTOP (the kernel refuses those) and glibc's
 * own two between 31 and SIGRTMIN (pthread_sigmask never blocks them). */
static int blocks_all(const char *path, unsigned long long *mask)
{
    char line[256];
    FILE *f = fopen(path, "r");
    int sig, ok = 0;

    *mask = 0;
    if (f == NULL)
        return 1;   /* the thread ended between readdir and open: nothing to judge */
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "SigBlk: %llx", mask) == 1)
            ok = 1;
    fclose(f);
    for (sig = 1; ok && sig <= SIGRTMAX; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= SIGRTMIN) &&
            !(*mask & 1ull << (sig - 1)))
            ok = 0;
    return ok;
}

/* Check every thread of the process but the caller; the number checked. */
static int check_other_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    char path[300];
    unsigned long long mask;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == gettid())
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        ck_assert_msg(blocks_all(path, &mask), "thread %s of dal blocks only %016llx",
                      e->d_name, mask);
        n++;
    }
    closedir(d);
    return n;
}

/* Every thread dal starts, the core's and the plugins', blocks every
 * signal, although the thread that opened dal blocks none: an application
 * that waits for SIGTERM with sigwait gets it, not one of them.  The
 * servers are never reachable; each thread starts without one. */
START_TEST(test_threads_block_signals)
{
    char text[2048];
    char *ini;
    sigset_t none;
    dal_t *dal = NULL;
    dal_result_t *res = NULL;
    dal_error_t err;

    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    snprintf(text, sizeof text,
             "[dal]\nwatch = true\npool = default\npool.acquire_timeout = 100ms\n"
             "xa_log = db0\n"
             "[datasource db0]\nmaster = mysql://u:pw@127.0.0.1:1/p0\n"
             "replicas = mysql://u:pw@127.0.0.1:2/p0\n"
             "[table t]\ndatasource = db0\n"
             "[idgen leaf]\nplugin = leaf\ndatasource = db0\n"
             "[idgen flake]\nplugin = snowflake\nlease_datasource = db0\n"
             "[monitor prometheus]\naddress = 127.0.0.1:0\n"
             "[monitor slowlog]\npath = %s/slow.log\n", dir);
    ini = tu_write(dir, "dal.ini", text);
    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
    /* a read starts the replica health check (it fails: no server) */
    ck_assert_int_ne(dal_query(dal, NULL, "SELECT * FROM t", NULL, 0, &res, &err), 0);
    /* the file watcher, XA recovery, the pool sampler, a pool keeper for
     * each of the two servers, the leaf loader, the snowflake lease, the
     * Prometheus listener, the slow log writer and the health check */
    ck_assert_int_ge(check_other_threads(), 10);
    dal_close(dal);
}
END_TEST

static uint32_t count_tick(void *arg)
{
    /* three quick ticks, then a wait ticker_stop must cut short */
    return atomic_fetch_add((atomic_int *)arg, 1) < 2 ? 1 : 600000;
}

/* ticker_start ticks at once and again after what tick returns; its
 * thread blocks every signal; ticker_stop ends a long wait at once. */
START_TEST(test_ticker)
{
    atomic_int n = 0;
    ticker_t t;
    uint64_t t0;
    int i;

    ck_assert_int_eq(ticker_start(&t, count_tick, &n), 0);
    for (i = 0; i < 500 && atomic_load(&n) < 3; i++)
        usleep(10000);
    ck_assert_int_eq(atomic_load(&n), 3);
    ck_assert_int_ge(check_other_threads(), 1);
    t0 = clock_now_ns();
    ticker_stop(&t);
    ck_assert_uint_lt(clock_now_ns() - t0, 5000000000ull);
    ck_assert_int_eq(atomic_load(&n), 3);
}
END_TEST

static Suite *thread_suite(void)
{
    Suite *s = suite_create("thread");
    TCase *tc = tcase_create("threads");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_thread_create);
    tcase_add_test(tc, test_threads_block_signals);
    tcase_add_test(tc, test_ticker);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(thread_suite(), CK_FORK_GETENV);

    return status;
}
