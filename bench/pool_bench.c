/*
 * pool_bench.c -- what the pool itself costs: acquire + release of
 * pool_default, uncontended and with 2 threads contending.
 *
 * The plugin is loaded from its .so and driven through its ops against a
 * host whose connections are dummies (connect, ping and reset cost
 * nothing), so the figures are the pool's bookkeeping alone: the lock, the
 * lists, the clock, the hand-over between threads.  A server round trip
 * (tens of microseconds) comes on top in real use, but only when a
 * connection is opened, validated or actually reset.
 *
 *     bench/pool_bench [iterations]      (DAL_PLUGIN_DIR: where pool_default.so is)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/plugin.h>

#include "fake_host.h"

static dal_host_api_t api;
static const dal_pool_ops_t *ops;
static void *inst;
static long iterations = 5000000;

static int dummy_open(dal_host_t *host, dal_conn_t **out, dal_error_t *err)
{
    (void)host, (void)err;
    *out = malloc(16);
    return *out ? 0 : DAL_ENOMEM;
}

static void dummy_close(dal_conn_t *c)
{
    free(c);
}

static int dummy_ping(dal_conn_t *c)
{
    (void)c;
    return 0;
}

static int dummy_reset(dal_conn_t *c, dal_error_t *err)
{
    (void)c, (void)err;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void make_pool(const fake_plugin_t *plug, dal_host_t *host, const char *max_size)
{
    static const dal_pool_server_t server = {"bench0", "127.0.0.1:3306"};
    fake_param_t items[2] = {{"max_size", 0, max_size}, {"acquire_timeout", 0, "60s"}};
    dal_plugin_params_t *p;
    dal_error_t err;

    p = fake_params_new(plug->desc->params, items, 2, &err);
    if (p == NULL || ops->create(&api, host, &server, p, &inst, &err) != 0) {
        fprintf(stderr, "pool_bench: %s\n", err.message);
        exit(1);
    }
    fake_params_free(p);
}

static void *loop(void *arg)
{
    dal_conn_t *c;
    dal_error_t err;
    long i;

    (void)arg;
    for (i = 0; i < iterations; i++) {
        if (ops->acquire(inst, &c, &err) != 0) {
            fprintf(stderr, "pool_bench: %s\n", err.message);
            exit(1);
        }
        ops->release(inst, c, 1);
    }
    return NULL;
}

/* nthreads each run the loop; prints ns per acquire+release pair. */
static void run(const char *label, int nthreads)
{
    pthread_t th[8];
    double t0, dt;
    int i;

    loop(NULL); /* warm up: the connections exist before timing */
    t0 = now_s();
    for (i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, loop, NULL);
    for (i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    dt = now_s() - t0;
    printf("%-44s %8.1f ns per acquire+release per thread, %6.2f M pairs/s in all\n", label,
           dt * 1e9 / (double)iterations, (double)iterations * nthreads / dt / 1e6);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("DAL_PLUGIN_DIR");
    char path[1024];
    fake_plugin_t plug;
    dal_host_t *host = fake_host_new();
    dal_error_t err;

    if (argc > 1)
        iterations = atol(argv[1]);
    api = *fake_host_api();
    api.conn_open = dummy_open;
    api.conn_close = dummy_close;
    api.conn_ping = dummy_ping;
    api.conn_reset = dummy_reset;
    if (fake_plugin_path(path, sizeof path, dir ? dir : "plugins/.libs", DAL_PLUGIN_POOL,
                         "default") != 0 ||
        fake_plugin_open(path, DAL_PLUGIN_POOL, "default", &plug, &err) != 0) {
        fprintf(stderr, "pool_bench: %s (set DAL_PLUGIN_DIR)\n", err.message);
        return 1;
    }
    ops = plug.desc->ops;

    make_pool(&plug, host, "10");
    run("uncontended (1 thread)", 1);
    run("2 threads, max_size 10 (lock contention)", 2);
    ops->destroy(inst);

    make_pool(&plug, host, "1");
    run("2 threads, max_size 1 (hand-over per borrow)", 2);
    ops->destroy(inst);

    fake_plugin_close(&plug);
    fake_host_free(host);
    return 0;
}
