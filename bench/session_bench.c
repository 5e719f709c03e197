/*
 * session_bench.c -- point selects through one dal session, for what a
 * session costs per statement: unpinned (the usual case, which pinning
 * must leave as it was), pinned (after `SET @a = 1`, on the pinned
 * connection of the default datasource), or through dal_query.
 *
 *   bench/session_bench -c INI [--statements N] [--pinned | --no-session]
 *       [--sql SQL] [--threads T]
 *
 * The statement (default: a point select on table pin_food by its shard
 * key k, a ? bound to i % 8) runs N times after 100 unmeasured ones; it
 * prints ns per statement.  Under valgrind --tool=callgrind at two values
 * of N the difference is the instructions per statement (bench/README.md).
 * --threads T: T threads, each with a session of its own (or dal_query),
 * each running N statements; the figure is wall time over all T * N, for
 * what threads sharing the dal_t cost each other (under taskset, more
 * threads than cores).
 * Uses only the public API, so it builds against any libdal.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/dal.h>

#define DEFAULT_SQL "SELECT name FROM pin_food WHERE k = ?"

static unsigned long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void die(const char *what, const dal_error_t *err)
{
    fprintf(stderr, "session_bench: %s: %s\n", what, err->message);
    exit(1);
}

/* One statement: through s, or dal_query when s is NULL. */
static void one(dal_t *dal, dal_session_t *s, const char *sql, long i)
{
    dal_value_t v = dal_int(i % 8);
    size_t n = strchr(sql, '?') ? 1 : 0;
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc = s ? dal_session_query(s, NULL, sql, &v, n, &r, &err)
               : dal_query(dal, NULL, sql, &v, n, &r, &err);

    if (rc != 0)
        die(sql, &err);
    while ((rc = dal_result_next(r, &err)) == 1)
        ;
    if (rc < 0)
        die("reading the result", &err);
    dal_result_free(r);
}

/* One thread's share: its own session (unless no_session), 100
 * unmeasured statements, then n. */
struct worker {
    dal_t *dal;
    const char *sql;
    long n;
    int pinned, no_session;
    pthread_barrier_t *ready; /* the clock starts when every thread is warm */
};

static void *work(void *arg)
{
    const struct worker *w = arg;
    dal_session_t *s = NULL;
    dal_error_t err;
    long i;

    if (!w->no_session && dal_session_open(w->dal, &s, &err) != 0)
        die("session", &err);
    if (w->pinned && dal_session_exec(s, NULL, "SET @a = 1", NULL, 0, NULL, &err) != 0)
        die("SET @a = 1", &err);
    for (i = 0; i < 100; i++)
        one(w->dal, s, w->sql, i);
    pthread_barrier_wait(w->ready);
    for (i = 0; i < w->n; i++)
        one(w->dal, s, w->sql, i);
    dal_session_close(s);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *ini = NULL, *sql = DEFAULT_SQL;
    long n = 10000, i, threads = 1;
    int pinned = 0, no_session = 0;
    dal_error_t err;
    dal_t *dal;
    unsigned long long t0;
    pthread_t *tids;
    pthread_barrier_t ready;
    struct worker w;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            ini = argv[++i];
        else if (strcmp(argv[i], "--statements") == 0 && i + 1 < argc)
            n = atol(argv[++i]);
        else if (strcmp(argv[i], "--sql") == 0 && i + 1 < argc)
            sql = argv[++i];
        else if (strcmp(argv[i], "--pinned") == 0)
            pinned = 1;
        else if (strcmp(argv[i], "--no-session") == 0)
            no_session = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atol(argv[++i]);
        else
            ini = NULL, i = argc;
    }
    if (ini == NULL || n <= 0 || threads <= 0 || (pinned && no_session)) {
        fprintf(stderr, "usage: session_bench -c INI [--statements N] [--pinned | --no-session] "
                        "[--sql SQL] [--threads T]\n");
        return 2;
    }
    if (dal_open(ini, NULL, &dal, &err) != 0)
        die(ini, &err);
    w = (struct worker){dal, sql, n, pinned, no_session, &ready};
    tids = calloc((size_t)threads, sizeof *tids);
    if (tids == NULL || pthread_barrier_init(&ready, NULL, (unsigned)threads + 1) != 0)
        return 1;
    for (i = 0; i < threads; i++)
        if (pthread_create(&tids[i], NULL, work, &w) != 0)
            return 1;
    pthread_barrier_wait(&ready);
    t0 = now_ns();
    for (i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    printf("%s%s: %.0f ns per statement (%ld statements, %ld thread%s)\n",
           no_session ? "dal_query" : "session", pinned ? ", pinned" : "",
           (double)(now_ns() - t0) / (double)(n * threads), n * threads, threads,
           threads == 1 ? "" : "s");
    pthread_barrier_destroy(&ready);
    free(tids);
    dal_close(dal);
    return 0;
}
