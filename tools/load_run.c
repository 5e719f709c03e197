/*
 * load_run.c -- one measured run of `dal load`: N worker threads run the
 * workload through a backend (dal or direct), first for --warmup, then
 * measured for --duration or --statements; the main thread switches the
 * phases and prints the progress line.
 *
 * Latency goes into a log-bucketed histogram per thread (HDR style: a fixed
 * array, no allocation per statement), merged when the run ends.
 */
#include "load.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* ------------------------------------------------------------- histogram */

/*
 * Log-bucketed latency histogram, as HdrHistogram lays it out: values below
 * 2^SUB_BITS ns are exact, above that each power of two is split into
 * 2^SUB_BITS buckets, so a value is known to within 1/128 (0.8%).  Values
 * beyond 2^MAX_EXP ns (18 minutes) count in the last bucket.  A thread
 * records into its own histogram; histograms are added up at the end.
 */
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_MAX_EXP 40
#define HIST_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB)

typedef struct load_hist {
    uint64_t counts[HIST_BUCKETS];
    uint64_t total;
    uint64_t sum_ns;
    uint64_t max_ns;
} load_hist_t;

static size_t hist_index(uint64_t v)
{
    unsigned e;

    if (v < HIST_SUB)
        return (size_t)v;
    if (v >> (HIST_MAX_EXP + 1) != 0)
        v = ((uint64_t)1 << (HIST_MAX_EXP + 1)) - 1;
    e = 63u - (unsigned)__builtin_clzll(v);
    return (size_t)(e - HIST_SUB_BITS + 1) * HIST_SUB + (size_t)((v >> (e - HIST_SUB_BITS)) - HIST_SUB);
}

/* Largest value that lands in bucket i. */
static uint64_t hist_upper(size_t i)
{
    unsigned e;
    uint64_t m;

    if (i < HIST_SUB)
        return i;
    e = (unsigned)(i / HIST_SUB) + HIST_SUB_BITS - 1;
    m = i % HIST_SUB + HIST_SUB;
    return ((m + 1) << (e - HIST_SUB_BITS)) - 1;
}

static void hist_add(load_hist_t *h, uint64_t ns)
{
    h->counts[hist_index(ns)]++;
    h->total++;
    h->sum_ns += ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

static void hist_merge(load_hist_t *into, const load_hist_t *h)
{
    size_t i;

    for (i = 0; i < HIST_BUCKETS; i++)
        into->counts[i] += h->counts[i];
    into->total += h->total;
    into->sum_ns += h->sum_ns;
    if (h->max_ns > into->max_ns)
        into->max_ns = h->max_ns;
}

/* The value below which a fraction q of the samples lie (0 if none). */
static uint64_t hist_quantile(const load_hist_t *h, double q)
{
    uint64_t rank = (uint64_t)ceil(q * (double)h->total), seen = 0, v;
    size_t i;

    if (rank == 0)
        rank = 1;
    for (i = 0; i < HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            v = hist_upper(i);
            return v < h->max_ns ? v : h->max_ns;
        }
    }
    return h->max_ns;
}

/* ---------------------------------------------------------------- workers */

enum { PHASE_WARMUP, PHASE_MEASURE, PHASE_STOP };

typedef struct load_run {
    const load_ctx_t *ctx;           /* borrowed */
    const load_backend_t *be;        /* borrowed (static) */
    _Atomic int phase;
    uint64_t measure_start_ns;       /* set before phase becomes MEASURE */
    uint64_t cpu_start_ns;           /* the process's CPU time then */
    pthread_mutex_t mu;              /* guards ready, go, finished */
    pthread_cond_t cv;
    size_t ready, finished;
    int go;
    load_worker_t *workers;          /* owned */
    size_t nworkers;
} load_run_t;

uint64_t load_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the whole process, all threads: on a busy machine the
 * client's own cost per statement is steadier than its throughput. */
static uint64_t cpu_ns(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* splitmix64: fast, and good enough to spread keys evenly. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Each thread has its own keys, so transactions of two threads never wait
 * for each other's row locks: the figures measure the client path, not
 * lock contention. */
static uint64_t pick_key(load_worker_t *w)
{
    return 1 + w->idx + rng_next(&w->rng) % w->nkeys * w->run->nworkers;
}

int load_worker_error(load_worker_t *w, const char *fmt, ...)
{
    va_list ap;

    if (w->error[0] == '\0') {
        va_start(ap, fmt);
        vsnprintf(w->error, sizeof w->error, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ------------------------------------------------------------------- runs */

/* One event: a statement, or the statements of a transaction. */
static int run_event(load_worker_t *w, uint64_t key)
{
    const load_backend_t *be = w->run->be;
    const load_workload_t *wl = w->ctx->wl;
    size_t i;
    int rc = 0;

    if (wl->txn && be->begin(w, key) != 0)
        return -1;
    for (i = 0; i < wl->nsteps && rc == 0; i++)
        rc = be->stmt(w, wl->steps[i], key);
    if (wl->txn && be->end(w, rc == 0) != 0)
        rc = -1;
    return rc;
}

static void record(load_worker_t *w, uint64_t t0, uint64_t t1)
{
    hist_add(w->hist, t1 - t0);
    w->events++;
    w->rows += w->ev_rows;
    w->affected += w->ev_affected;
    w->last_end_ns = t1;
}

/* Single writer: relaxed stores are enough for the progress line. */
static void publish(load_worker_t *w, uint64_t t0, uint64_t t1)
{
    w->all_events++;
    w->all_lat_ns += t1 - t0;
    atomic_store_explicit(&w->live_events, w->all_events, memory_order_relaxed);
    atomic_store_explicit(&w->live_lat_ns, w->all_lat_ns, memory_order_relaxed);
}

/* The run stops at the first error: figures with failures in them would
 * not measure what they claim to. */
static void worker_loop(load_worker_t *w)
{
    load_run_t *run = w->run;
    uint64_t t0, t1, key;
    int phase;

    while (w->events < w->quota) {
        phase = atomic_load_explicit(&run->phase, memory_order_acquire);
        if (phase == PHASE_STOP)
            break;
        key = pick_key(w);
        w->ev_rows = w->ev_affected = 0;
        t0 = load_now_ns();
        if (run_event(w, key) != 0) {
            w->failed = 1;
            atomic_store(&run->phase, PHASE_STOP);
            break;
        }
        t1 = load_now_ns();
        if (phase == PHASE_MEASURE)
            record(w, t0, t1);
        publish(w, t0, t1);
    }
}

static void *worker_main(void *arg)
{
    load_worker_t *w = arg;
    load_run_t *run = w->run;

    if (run->be->open(w) != 0) {
        w->failed = 1;
        atomic_store(&run->phase, PHASE_STOP);
    }
    pthread_mutex_lock(&run->mu);
    run->ready++;
    pthread_cond_broadcast(&run->cv);
    while (!run->go)
        pthread_cond_wait(&run->cv, &run->mu);
    pthread_mutex_unlock(&run->mu);
    if (!w->failed)
        worker_loop(w);
    run->be->close(w);
    pthread_mutex_lock(&run->mu);
    run->finished++;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

/* Wait until time `until` (CLOCK_MONOTONIC ns), every worker has finished
 * or the run was stopped.  Returns non-zero in the last two cases. */
static int run_wait(load_run_t *run, uint64_t until)
{
    struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
    int over;

    pthread_mutex_lock(&run->mu);
    for (;;) {
        over = run->finished == run->nworkers ||
               atomic_load(&run->phase) == PHASE_STOP;
        if (over || load_now_ns() >= until)
            break;
        pthread_cond_timedwait(&run->cv, &run->mu, &ts);
    }
    pthread_mutex_unlock(&run->mu);
    return over;
}

/* Warmup is over: from now on, events count.  A worker may have stopped
 * the run meanwhile; that must stay. */
static void start_measuring(load_run_t *run, uint64_t now)
{
    int warm = PHASE_WARMUP;

    run->measure_start_ns = now;
    run->cpu_start_ns = cpu_ns();
    atomic_compare_exchange_strong(&run->phase, &warm, PHASE_MEASURE);
}

static void progress_line(const load_run_t *run, uint64_t secs, uint64_t *prev_ev,
                          uint64_t *prev_lat)
{
    uint64_t ev = 0, lat = 0, d;
    size_t i;

    for (i = 0; i < run->nworkers; i++) {
        ev += atomic_load_explicit(&run->workers[i].live_events, memory_order_relaxed);
        lat += atomic_load_explicit(&run->workers[i].live_lat_ns, memory_order_relaxed);
    }
    d = ev - *prev_ev;
    fprintf(stderr, "[%4" PRIu64 "s] %s: %" PRIu64 " %s/s, avg %.1f us%s\n", secs,
            run->be->mode, d, run->ctx->wl->txn ? "tx" : "stmt",
            d ? (double)(lat - *prev_lat) / (double)d / 1e3 : 0.0,
            atomic_load(&run->phase) == PHASE_WARMUP ? " (warmup)" : "");
    *prev_ev = ev;
    *prev_lat = lat;
}

/* The main thread's part: switch from warmup to measuring, end the run
 * after --duration, print progress every second. */
static void drive(load_run_t *run)
{
    const load_opts_t *o = run->ctx->o;
    uint64_t start = load_now_ns(), warm_end = start + o->warmup_ms * 1000000u, end = UINT64_MAX;
    uint64_t tick = start + 1000000000u, wake, now, prev_ev = 0, prev_lat = 0;

    for (;;) {
        if (atomic_load(&run->phase) == PHASE_WARMUP && (now = load_now_ns()) >= warm_end) {
            start_measuring(run, now);
            if (o->duration_ms > 0)
                end = now + o->duration_ms * 1000000u;
        }
        wake = atomic_load(&run->phase) == PHASE_WARMUP ? warm_end : end;
        if (run->ctx->progress && tick < wake)
            wake = tick;
        if (run_wait(run, wake))
            break;
        now = load_now_ns();
        if (now >= end)
            break;
        if (run->ctx->progress && now >= tick) {
            progress_line(run, (tick - start) / 1000000000u, &prev_ev, &prev_lat);
            tick += 1000000000u;
        }
    }
    atomic_store(&run->phase, PHASE_STOP);
}

static int run_init(load_run_t *run, const load_ctx_t *ctx, const load_backend_t *be)
{
    const load_opts_t *o = ctx->o;
    pthread_condattr_t ca;
    uint64_t i, n = o->threads;

    run->ctx = ctx;
    run->be = be;
    atomic_init(&run->phase, PHASE_WARMUP);
    /* the timed waits count in CLOCK_MONOTONIC, as load_now_ns() */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&run->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&run->mu, NULL);
    run->workers = calloc(n, sizeof *run->workers);
    if (run->workers == NULL)
        return -1;
    run->nworkers = n;
    for (i = 0; i < n; i++) {
        load_worker_t *w = &run->workers[i];

        w->run = run;
        w->ctx = ctx;
        w->idx = i;
        w->rng = o->seed * 1000003u + i;   /* the same keys in dal and direct runs */
        w->nkeys = (o->rows - i + n - 1) / n;
        w->quota = o->statements ? o->statements / n + (i < o->statements % n) : UINT64_MAX;
        w->hist = calloc(1, sizeof *w->hist);
        if (w->hist == NULL)
            return -1;
    }
    return 0;
}

static void run_free(load_run_t *run)
{
    size_t i;

    for (i = 0; run->workers != NULL && i < run->nworkers; i++)
        free(run->workers[i].hist);
    free(run->workers);
    pthread_cond_destroy(&run->cv);
    pthread_mutex_destroy(&run->mu);
}

/* Start the workers, let them go together once all are connected, drive
 * the run and wait for them.  Returns how many threads were started. */
static size_t run_threads(load_run_t *run)
{
    size_t started;

    for (started = 0; started < run->nworkers; started++)
        if (pthread_create(&run->workers[started].tid, NULL, worker_main,
                           &run->workers[started]) != 0)
            break;
    pthread_mutex_lock(&run->mu);
    if (started < run->nworkers)
        atomic_store(&run->phase, PHASE_STOP);
    while (run->ready < started)
        pthread_cond_wait(&run->cv, &run->mu);
    run->go = 1;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
    if (atomic_load(&run->phase) != PHASE_STOP)
        drive(run);
    return started;
}

static void collect(const load_run_t *run, load_hist_t *all, load_result_t *res)
{
    uint64_t last = 0;
    size_t i;

    for (i = 0; i < run->nworkers; i++) {
        const load_worker_t *w = &run->workers[i];

        hist_merge(all, w->hist);
        res->events += w->events;
        res->rows += w->rows;
        res->affected += w->affected;
        res->errors += (uint64_t)w->failed;
        if (w->last_end_ns > last)
            last = w->last_end_ns;
        if (res->error[0] == '\0' && w->error[0] != '\0')
            snprintf(res->error, sizeof res->error, "%s", w->error);
    }
    res->statements = res->events * run->ctx->wl->nsteps;
    if (res->events > 0)
        res->cpu_ns_per_event = (double)(cpu_ns() - run->cpu_start_ns) / (double)res->events;
    res->elapsed_ns = res->events ? last - run->measure_start_ns : 0;
    res->events_per_s = res->elapsed_ns ? (double)res->events * 1e9 / (double)res->elapsed_ns : 0;
    res->avg_ns = all->total ? (double)all->sum_ns / (double)all->total : 0;
    res->p50 = hist_quantile(all, 0.50);
    res->p95 = hist_quantile(all, 0.95);
    res->p99 = hist_quantile(all, 0.99);
    res->p999 = hist_quantile(all, 0.999);
    res->max = all->max_ns;
}

/* One measured run of the workload in one mode.  When it could not run at
 * all or a statement failed, res->error says why. */
void load_run_once(const load_ctx_t *ctx, const load_backend_t *be, load_result_t *res)
{
    load_hist_t *all = calloc(1, sizeof *all);
    load_run_t run;
    size_t i, started = 0;

    memset(res, 0, sizeof *res);
    memset(&run, 0, sizeof run);
    res->mode = be->mode;
    if (run_init(&run, ctx, be) != 0 || all == NULL) {
        snprintf(res->error, sizeof res->error, "out of memory");
        goto out;
    }
    started = run_threads(&run);
    for (i = 0; i < started; i++)
        pthread_join(run.workers[i].tid, NULL);
    collect(&run, all, res);
    if (started < run.nworkers)
        snprintf(res->error, sizeof res->error, "cannot start thread %zu", started + 1);
    /* a run without a single measured event has no throughput to compare */
    if (res->error[0] == '\0' && res->events == 0)
        snprintf(res->error, sizeof res->error, "no event started and finished while measuring: "
                 "the servers stalled, or one event takes longer than --duration");
out:
    run_free(&run);
    free(all);
}
