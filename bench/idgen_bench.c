/*
 * idgen_bench.c -- what an ID costs: the leaf segment generator (1 and 2
 * threads, single IDs and batches), how long a caller waits when a segment
 * runs out, and the snowflake generator against its limit of 4,096 IDs per
 * millisecond per worker.
 *
 *     bench/idgen_bench [--seconds S] [--latency-us U] [--json]
 *         Loads idgen_leaf.so and idgen_snowflake.so from $DAL_PLUGIN_DIR
 *         and drives them through the fake host; leaf's table is an
 *         in-memory stand-in whose every statement takes U microseconds
 *         (default 300, a loopback MariaDB's UPDATE), so segment switches
 *         only go unnoticed if the prefetch really hides the database.
 *
 *     bench/idgen_bench --config FILE --leaf NAME [--step N] [--snowflake NAME] ...
 *         The same through dal itself: [idgen NAME] sections of FILE
 *         against their real database, drawn with idgen_draw (what the
 *         INSERT path calls) and with the public dal_next_ids.  With --step
 *         (the leaf section's step = max_step = N, its biz tag used by no
 *         one else) the switch wait is measured too.
 *
 * Throughput is the median of 3 rounds of S seconds (default 1).  The
 * switch wait is measured on one thread that times the calls which get the
 * first ID of a new segment.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/plugin.h>

#include "handle.h"
#include "fake_host.h"
#include "idgen.h"

#define ROUNDS 3
#define SWITCH_STEP 1000000  /* fixed leaf step of the switch measurement (Leaf's max) */
#define SWITCHES 2000        /* segment switches timed: p99.9 is the 3rd worst */
#define SF_LIMIT_PER_S 4096000.0

static double seconds = 1.0;
static long latency_us = 300;
static int json;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, const dal_error_t *err)
{
    fprintf(stderr, "idgen_bench: %s: %s\n", what, err ? err->message : "failed");
    exit(1);
}

/* ---------------------------------------------------- what is measured */

/* Something that draws IDs: a plugin instance, or a generator of dal. */
typedef struct drawer {
    const char *label;
    int (*next)(void *ctx, int64_t *ids, size_t n, dal_error_t *err);
    void *ctx;
    /* NULL, or wait until `segments` segments have been reserved */
    void (*await_reserved)(size_t segments);
} drawer_t;

typedef struct run_arg {
    const drawer_t *d;
    size_t batch;
    uint64_t deadline;
    uint64_t ids;
} run_arg_t;

static void *run_thread(void *p)
{
    run_arg_t *a = p;
    int64_t ids[256];
    dal_error_t err;
    uint64_t n = 0;
    unsigned i;

    /* look at the clock every 1024 calls only: it costs as much as an ID */
    while (now_ns() < a->deadline) {
        for (i = 0; i < 1024; i++)
            if (a->d->next(a->d->ctx, ids, a->batch, &err) != 0)
                die(a->d->label, &err);
        n += 1024u * a->batch;
    }
    a->ids = n;
    return NULL;
}

/* IDs per second over one round of `seconds` with `threads` threads. */
static double one_round(const drawer_t *d, int threads, size_t batch)
{
    run_arg_t args[2];
    pthread_t th[2];
    uint64_t t0 = now_ns(), total = 0;
    int i;

    for (i = 0; i < threads; i++) {
        args[i].d = d;
        args[i].batch = batch;
        args[i].deadline = t0 + (uint64_t)(seconds * 1e9);
        if (pthread_create(&th[i], NULL, run_thread, &args[i]) != 0)
            die("pthread_create", NULL);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        total += args[i].ids;
    }
    return (double)total / ((double)(now_ns() - t0) / 1e9);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median_rate(const drawer_t *d, int threads, size_t batch)
{
    double r[ROUNDS];
    int i;

    for (i = 0; i < ROUNDS; i++)
        r[i] = one_round(d, threads, batch);
    qsort(r, ROUNDS, sizeof r[0], cmp_double);
    return r[ROUNDS / 2];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

static uint64_t pct(const uint64_t *sorted, size_t n, double p)
{
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);

    return sorted[i < n ? i : n - 1];
}

typedef struct switch_stats {
    size_t switches;
    uint64_t p50, p99, p999, max; /* ns, switch calls */
    uint64_t all_p999;            /* ns, every call */
} switch_stats_t;

/*
 * Time the calls that switch segments, until SWITCHES of them.  The step is
 * fixed and one thread draws, so segments follow each other without a gap
 * and the switches are known in advance: the calls after first + k * step - 1.
 * Timing every call would cost more than the calls; every 64th is timed for
 * the distribution of all calls.  With `ready`, the drawing pauses half-way
 * through each segment until the next one has been reserved: the switch
 * itself is timed, not how soon the machine let the loader thread run.
 */
static void measure_switches(const drawer_t *d, int64_t step, int ready, switch_stats_t *st)
{
    size_t cap = 1u << 20, n = 0, ns = 0;
    uint64_t *all = malloc(cap * sizeof *all), *sw = malloc(SWITCHES * sizeof *sw), t0 = 0, t;
    int64_t first, id, prev;
    dal_error_t err;
    unsigned calls = 0;
    int at_switch, timed;

    if (all == NULL || sw == NULL)
        die("out of memory", NULL);
    if (d->next(d->ctx, &first, 1, &err) != 0)
        die(d->label, &err);
    prev = first;
    while (ns < SWITCHES) {
        if (ready && (prev + 1 - first) % step == step / 2) {
            d->await_reserved(ns + 2);
            nanosleep(&(struct timespec){ 0, 200000 }, NULL); /* and put in its slot */
        }
        at_switch = (prev + 1 - first) % step == 0;
        timed = at_switch || (++calls & 63) == 0;
        if (timed)
            t0 = now_ns();
        if (d->next(d->ctx, &id, 1, &err) != 0)
            die(d->label, &err);
        if (timed) {
            t = now_ns() - t0;
            if (at_switch)
                sw[ns++] = t;
            else if (n < cap)
                all[n++] = t;
        }
        if (id != prev + 1 && !at_switch)
            die("segments are not contiguous: another process uses the biz tag?", NULL);
        prev = id;
    }
    qsort(sw, ns, sizeof *sw, cmp_u64);
    qsort(all, n, sizeof *all, cmp_u64);
    st->switches = ns;
    st->p50 = pct(sw, ns, 0.5);
    st->p99 = pct(sw, ns, 0.99);
    st->p999 = pct(sw, ns, 0.999);
    st->max = sw[ns - 1];
    st->all_p999 = pct(all, n, 0.999);
    free(all);
    free(sw);
}

/* ------------------------------------------------------------- report */

static int first_row = 1;

static void report(const char *what, const char *unit, double value, const char *note)
{
    if (json) {
        printf("%s{\"what\":\"%s\",\"unit\":\"%s\",\"value\":%.0f}", first_row ? "[" : ",",
               what, unit, value);
    } else {
        printf("%-52s %14.0f %-6s %s\n", what, value, unit, note ? note : "");
    }
    first_row = 0;
}

static void report_rates(const drawer_t *d)
{
    char what[128];

    snprintf(what, sizeof what, "%s: 1 thread, single IDs", d->label);
    report(what, "IDs/s", median_rate(d, 1, 1), NULL);
    snprintf(what, sizeof what, "%s: 2 threads, single IDs", d->label);
    report(what, "IDs/s", median_rate(d, 2, 1), "(both threads together)");
    snprintf(what, sizeof what, "%s: 1 thread, batches of 100", d->label);
    report(what, "IDs/s", median_rate(d, 1, 100), NULL);
}

static void report_switches(const drawer_t *d, int64_t step, int ready)
{
    const char *how = ready ? "next segment ready" : "flat out";
    switch_stats_t st;
    char what[128];

    measure_switches(d, step, ready, &st);
    snprintf(what, sizeof what, "%s: switch wait (%s), p50", d->label, how);
    report(what, "ns", (double)st.p50, NULL);
    snprintf(what, sizeof what, "%s: switch wait (%s), p99", d->label, how);
    report(what, "ns", (double)st.p99, NULL);
    snprintf(what, sizeof what, "%s: switch wait (%s), p99.9", d->label, how);
    report(what, "ns", (double)st.p999, NULL);
    snprintf(what, sizeof what, "%s: switch wait (%s), max", d->label, how);
    report(what, "ns", (double)st.max, NULL);
    snprintf(what, sizeof what, "%s: any call (1 in 64 timed), p99.9", d->label);
    report(what, "ns", (double)st.all_p999, NULL);
}

static void report_snowflake(const drawer_t *d)
{
    char what[128], note[64];
    double r;

    snprintf(what, sizeof what, "%s: 1 thread, single IDs", d->label);
    r = median_rate(d, 1, 1);
    snprintf(note, sizeof note, "(%.1f%% of 4,096/ms)", 100.0 * r / SF_LIMIT_PER_S);
    report(what, "IDs/s", r, note);
    snprintf(what, sizeof what, "%s: 2 threads, one worker", d->label);
    r = median_rate(d, 2, 1);
    snprintf(note, sizeof note, "(%.1f%% of 4,096/ms)", 100.0 * r / SF_LIMIT_PER_S);
    report(what, "IDs/s", r, note);
}

/* ------------------------------------------- plugins on the fake host */

/* leaf's table, in memory: one row, every statement takes latency_us. */
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t table_cv = PTHREAD_COND_INITIALIZER;
static int64_t table_max = 1, table_step = 1000;
static size_t table_claims; /* segments reserved since table_claims was last zeroed */

typedef struct bench_res {
    int rows, pos;
    int64_t cols[2];
    uint64_t affected;
} bench_res_t;

static int table_query(dal_host_t *host, const char *ds, const char *sql,
                       const dal_value_t *p, size_t np, dal_result_t **out, dal_error_t *err)
{
    struct timespec ts = { latency_us / 1000000, (latency_us % 1000000) * 1000 };
    bench_res_t *r = calloc(1, sizeof *r);

    (void)host, (void)ds, (void)np, (void)err;
    if (r == NULL)
        die("out of memory", NULL);
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&table_mu);
    if (strncmp(sql, "SELECT", 6) == 0) {
        r->rows = 1;
        r->cols[0] = table_max;
        r->cols[1] = table_step;
    } else if (table_max == p[2].v.i) {
        table_max = p[0].v.i;
        r->affected = 1;
        table_claims++;
        pthread_cond_broadcast(&table_cv);
    }
    pthread_mutex_unlock(&table_mu);
    *out = (dal_result_t *)r;
    return 0;
}

static int res_next(dal_result_t *r, dal_error_t *err)
{
    (void)err;
    return ((bench_res_t *)r)->pos++ < ((bench_res_t *)r)->rows;
}

static int64_t res_int(const dal_result_t *r, size_t col)
{
    return ((const bench_res_t *)r)->cols[col];
}

static uint64_t res_affected(const dal_result_t *r)
{
    return ((const bench_res_t *)r)->affected;
}

static void res_free(dal_result_t *r)
{
    free(r);
}

static void table_await(size_t segments)
{
    pthread_mutex_lock(&table_mu);
    while (table_claims < segments)
        pthread_cond_wait(&table_cv, &table_mu);
    pthread_mutex_unlock(&table_mu);
}

static void quiet_log(dal_host_t *host, dal_log_level_t level, const char *fmt, ...)
{
    (void)host, (void)level, (void)fmt;
}

static dal_host_api_t api;

typedef struct plugin_inst {
    fake_plugin_t so;
    dal_host_t *host;
    dal_plugin_params_t *params;
    const dal_idgen_ops_t *ops;
    void *self;
} plugin_inst_t;

static int plugin_next(void *ctx, int64_t *ids, size_t n, dal_error_t *err)
{
    plugin_inst_t *pi = ctx;

    return pi->ops->next(pi->self, ids, n, err);
}

static void plugin_open(plugin_inst_t *pi, const char *name, const fake_param_t *ps, size_t n)
{
    const char *dir = getenv("DAL_PLUGIN_DIR");
    dal_error_t err = { 0 };
    char path[4096];

    if (dir == NULL || fake_plugin_path(path, sizeof path, dir, DAL_PLUGIN_IDGEN, name) != 0)
        die("DAL_PLUGIN_DIR is not set", NULL);
    if (fake_plugin_open(path, DAL_PLUGIN_IDGEN, name, &pi->so, &err) != 0)
        die("loading the plugin", &err);
    pi->ops = pi->so.desc->ops;
    pi->host = fake_host_new();
    if ((pi->params = fake_params_new(pi->so.desc->params, ps, n, &err)) == NULL)
        die("parameters", &err);
    if (pi->ops->create(&api, pi->host, name, pi->params, &pi->self, &err) != 0)
        die("create", &err);
}

static void plugin_close(plugin_inst_t *pi)
{
    pi->ops->destroy(pi->self);
    fake_params_free(pi->params);
    fake_host_free(pi->host);
    fake_plugin_close(&pi->so);
}

static void bench_plugins(void)
{
    /* throughput: the dynamic step grows to max_step, as in steady use */
    const fake_param_t fast[] = { { "datasource", 0, "bench" } };
    /* switches: a fixed step, so there are many of them */
    const fake_param_t fixed[] = { { "datasource", 0, "bench" }, { "max_step", 0, "1000000" } };
    const fake_param_t sf[] = { { "worker_id", 0, "1" } };
    plugin_inst_t pi;
    drawer_t d = { "leaf plugin", plugin_next, &pi, table_await };

    api = *fake_host_api();
    api.log = quiet_log;
    api.query = table_query;
    api.result_next = res_next;
    api.result_int = res_int;
    api.result_affected_rows = res_affected;
    api.result_free = res_free;

    plugin_open(&pi, "leaf", fast, 1);
    report_rates(&d);
    plugin_close(&pi);

    table_step = SWITCH_STEP;
    table_claims = 0;
    plugin_open(&pi, "leaf", fixed, 2);
    report_switches(&d, SWITCH_STEP, 1);
    plugin_close(&pi);
    plugin_open(&pi, "leaf", fixed, 2);
    report_switches(&d, SWITCH_STEP, 0);
    plugin_close(&pi);

    d.label = "snowflake plugin";
    plugin_open(&pi, "snowflake", sf, 1);
    report_snowflake(&d);
    plugin_close(&pi);
}

/* ------------------------------------------------- through dal itself */

static int core_next(void *ctx, int64_t *ids, size_t n, dal_error_t *err)
{
    return idgen_draw(ctx, ids, n, err);
}

typedef struct named {
    dal_t *dal;
    const char *name;
} named_t;

static int public_next(void *ctx, int64_t *ids, size_t n, dal_error_t *err)
{
    named_t *nm = ctx;

    return dal_next_ids(nm->dal, nm->name, ids, n, err);
}

static void bench_config(const char *path, const char *leaf, int64_t step, const char *sf)
{
    dal_error_t err = { 0 };
    dal_snapshot_t *snap;
    named_t nm;
    drawer_t d;
    char label[96];
    dal_t *dal;

    if (dal_open(path, NULL, &dal, &err) != 0)
        die(path, &err);
    snap = snapshot_acquire(dal);
    d.next = core_next;
    d.await_reserved = NULL;
    d.label = label;
    snprintf(label, sizeof label, "[idgen %s] idgen_draw", leaf);
    if ((d.ctx = (void *)idgen_find(snap->idgens, leaf)) == NULL)
        die(leaf, NULL);
    /* switches first: the boundaries are known from the instance's first ID */
    if (step > 0)
        report_switches(&d, step, 0);
    report_rates(&d);
    nm.dal = dal;
    nm.name = leaf;
    d.next = public_next;
    d.ctx = &nm;
    snprintf(label, sizeof label, "[idgen %s] dal_next_ids", leaf);
    report(label, "IDs/s", median_rate(&d, 1, 1), "(1 thread, name lookup each call)");
    if (sf != NULL) {
        d.next = core_next;
        snprintf(label, sizeof label, "[idgen %s] idgen_draw", sf);
        if ((d.ctx = (void *)idgen_find(snap->idgens, sf)) == NULL)
            die(sf, NULL);
        report_snowflake(&d);
    }
    snapshot_unref(snap);
    dal_close(dal);
}

int main(int argc, char **argv)
{
    const char *config = NULL, *leaf = NULL, *sf = NULL;
    int64_t step = 0;
    int i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--latency-us") == 0 && i + 1 < argc)
            latency_us = atol(argv[++i]);
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(argv[i], "--leaf") == 0 && i + 1 < argc)
            leaf = argv[++i];
        else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
            step = atoll(argv[++i]);
        else if (strcmp(argv[i], "--snowflake") == 0 && i + 1 < argc)
            sf = argv[++i];
        else {
            fprintf(stderr, "usage: idgen_bench [--seconds S] [--latency-us U] [--json]\n"
                            "       idgen_bench --config FILE --leaf NAME [--step N] "
                            "[--snowflake NAME]\n");
            return 2;
        }
    }
    if (config != NULL && leaf == NULL)
        die("--config needs --leaf NAME", NULL);
    if (config != NULL)
        bench_config(config, leaf, step, sf);
    else
        bench_plugins();
    if (json)
        printf("%s]\n", first_row ? "[" : "");
    return 0;
}
