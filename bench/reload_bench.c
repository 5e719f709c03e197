/*
 * reload_bench.c -- the cost of dynamic configuration:
 *   - taking and releasing the snapshot reference every statement pays,
 *     with 1 and 2 threads;
 *   - the same with 16 threads (more than this machine's cores), against
 *     the session slot's take and give (handle.h), which a session's
 *     statements pay instead: 20 M pairs over all threads, ns per pair
 *     for the whole machine;
 *   - dal_open and dal_reload of a configuration with 1,000 logical tables
 *     of 100 physical tables each (no database is contacted).
 *
 *   DAL_PLUGIN_DIR=plugins/.libs bench/reload_bench [--json]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"

#define ITERS 20000000L
#define TABLES 1000

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *write_config(void)
{
    char *path = strdup("/tmp/dal_reload_bench.XXXXXX");
    int fd = mkstemp(path), i;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

    if (f == NULL) {
        perror("mkstemp");
        exit(1);
    }
    for (i = 0; i < 4; i++)
        fprintf(f, "[datasource db%d]\nmaster = mysql://u:p@127.0.0.1:1/p%d\n", i, i);
    for (i = 0; i < TABLES; i++)
        fprintf(f, "[table t%d]\ndatasource = db\ndb_shard_num = 4\ntable_shard_num = 100\n"
                   "shard_key = k\nstrategy = mod\n", i);
    fclose(f);
    return path;
}

static void *acquire_loop(void *arg)
{
    dal_t *dal = arg;
    long i;

    for (i = 0; i < ITERS; i++)
        snapshot_unref(snapshot_acquire(dal));
    return NULL;
}

static double ref_cost(dal_t *dal, int threads)
{
    pthread_t th[2];
    uint64_t t0 = now_ns();
    int i;

    for (i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, acquire_loop, dal);
    for (i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    /* per acquire+release, as each thread sees it */
    return (double)(now_ns() - t0) / ITERS;
}

/* SHARED_THREADS threads at once, each taking and giving back its
 * reference ITERS / SHARED_THREADS times, by snapshot_acquire or through
 * a slot of its own. */
#define SHARED_THREADS 16

static void *slot_loop(void *arg)
{
    dal_t *dal = arg;
    snap_slot_t slot = {0};
    long i;

    snap_slot_open(dal, &slot);
    for (i = 0; i < ITERS / SHARED_THREADS; i++)
        snap_slot_give(dal, &slot, snap_slot_take(dal, &slot));
    snap_slot_close(dal, &slot);
    return NULL;
}

static void *acquire_share(void *arg)
{
    dal_t *dal = arg;
    long i;

    for (i = 0; i < ITERS / SHARED_THREADS; i++)
        snapshot_unref(snapshot_acquire(dal));
    return NULL;
}

static double shared_cost(dal_t *dal, void *(*loop)(void *))
{
    pthread_t th[SHARED_THREADS];
    uint64_t t0 = now_ns();
    int i;

    for (i = 0; i < SHARED_THREADS; i++)
        pthread_create(&th[i], NULL, loop, dal);
    for (i = 0; i < SHARED_THREADS; i++)
        pthread_join(th[i], NULL);
    return (double)(now_ns() - t0) / (double)(ITERS / SHARED_THREADS * SHARED_THREADS);
}

int main(int argc, char **argv)
{
    int json = argc > 1 && strcmp(argv[1], "--json") == 0;
    char *ini = write_config();
    double open_ms, reload_ms[5], one, two, shared_acquire, shared_slot;
    dal_error_t err;
    dal_t *dal = NULL;
    uint64_t t0;
    int i;

    t0 = now_ns();
    if (dal_open(ini, NULL, &dal, &err) != 0) {
        fprintf(stderr, "reload_bench: %s\n", err.message);
        return 1;
    }
    open_ms = (double)(now_ns() - t0) / 1e6;
    for (i = 0; i < 5; i++) {
        t0 = now_ns();
        if (dal_reload(dal, &err) != 0) {
            fprintf(stderr, "reload_bench: %s\n", err.message);
            return 1;
        }
        reload_ms[i] = (double)(now_ns() - t0) / 1e6;
    }
    one = ref_cost(dal, 1);
    two = ref_cost(dal, 2);
    shared_acquire = shared_cost(dal, acquire_share);
    shared_slot = shared_cost(dal, slot_loop);
    if (json)
        printf("{\"tables\":%d,\"physical_tables\":%d,\"open_ms\":%.1f,\"reload_ms\":[%.1f,%.1f,"
               "%.1f,%.1f,%.1f],\"snapshot_ref_ns_1thread\":%.1f,"
               "\"snapshot_ref_ns_2threads\":%.1f,\"snapshot_ref_ns_16threads_machine\":%.1f,"
               "\"slot_ns_16threads_machine\":%.1f}\n",
               TABLES, TABLES * 100, open_ms, reload_ms[0], reload_ms[1], reload_ms[2],
               reload_ms[3], reload_ms[4], one, two, shared_acquire, shared_slot);
    else
        printf("%d logical tables x 100 physical: dal_open %.1f ms, dal_reload %.1f %.1f %.1f "
               "%.1f %.1f ms\nsnapshot acquire+release: %.1f ns (1 thread), %.1f ns per thread "
               "(2 threads)\n%d threads, the machine's ns per pair: snapshot acquire+release "
               "%.1f, session slot take+give %.1f\n",
               TABLES, open_ms, reload_ms[0], reload_ms[1], reload_ms[2], reload_ms[3],
               reload_ms[4], one, two, SHARED_THREADS, shared_acquire, shared_slot);
    dal_close(dal);
    unlink(ini);
    free(ini);
    return 0;
}
