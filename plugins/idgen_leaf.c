/*
 * idgen_leaf.c -- the "leaf" ID generator: Meituan Leaf's segment mode.
 *
 * IDs are reserved in blocks ("segments") from one row of a table on a
 * datasource (default leaf_alloc, created by `dal idgen init`):
 *
 *     biz_tag  max_id  step  ...      a segment is [max_id, max_id + step)
 *
 * and then handed out in memory, so almost every ID costs one atomic add.
 *
 * Reserving.  The host runs each statement on some pooled connection, so a
 * transaction over two statements is not available.  A segment is therefore
 * claimed with a compare-and-set that is atomic on its own:
 *
 *     SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ?           -> m, floor
 *     UPDATE leaf_alloc SET max_id = m + s WHERE biz_tag = ? AND max_id = m
 *
 * One affected row means [m, m + s) is ours: max_id only ever grows, so no
 * other process can have seen m and succeeded too.  Zero rows means someone
 * else moved max_id first; read again and retry.  An UPDATE whose answer is
 * lost (server gone mid-reply) may have committed: its segment is then never
 * used, which wastes IDs but cannot duplicate one.
 *
 * Double buffer.  Two segment slots; generation g uses slot g & 1, and the
 * next segment is ready when slot (g + 1) & 1 says it was filled for g + 1.
 * When the ID at the prefetch point (10% into a segment by default) is
 * taken, the loader thread reserves the next segment into the other slot,
 * so the caller that exhausts a segment finds the next one ready and moves
 * the generation on with one compare-and-swap, without a lock.  All
 * database work happens on the loader thread.
 *
 * Hot path.  A slot's `next` only grows by fetch-add; `max` is its end.  A
 * caller reads max first, then fetch-adds: an ID v is valid if v < max.  The
 * loader refills a slot by storing next, then max, then gen (release).  A
 * caller that read the slot's old max gets either an old value (>= old max:
 * the slot was used up before the generation moved on) or a new one (>= the
 * new start, which is above every earlier segment): both fail the test, so
 * no ID is ever handed out from a mixed view.  Failed adds waste a few IDs
 * of the refilled slot, nothing more.
 *
 * Dynamic step (Leaf's rule): when a segment lasted less than
 * segment_duration the next step doubles, up to max_step; when it lasted
 * more than twice as long it halves.  The table's step column is the floor.
 *
 * Outage.  IDs keep coming from the buffered segments.  When both are used
 * up, a caller waits at most wait_timeout for the loader, and fails with the
 * loader's error as soon as an attempt fails; it never hangs and never gets
 * an ID that was not reserved.  Callers within LEAF_RETRY_NS of a failure
 * fail at once; the first call after that tries the database again, so IDs
 * resume on their own once it is back.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idgen_common.h"

#define LEAF_CHUNK 4096          /* most IDs taken by one fetch-add (bounds the waste) */
#define LEAF_CLAIM_TRIES 64      /* compare-and-set rounds before giving up */
#define LEAF_RETRY_NS 100000000u /* after a failed reservation, callers fail fast this long */
#define LEAF_SQL_MAX 256

/* One buffer.  A caller reads next, max and prefetch_at together: one line. */
typedef struct segment {
    _Alignas(IDGEN_CACHE_LINE) _Atomic uint64_t next; /* next ID to hand out; runs past max */
    _Atomic uint64_t max;                       /* end, exclusive */
    _Atomic uint64_t prefetch_at;               /* taking this ID asks for the next segment */
    _Atomic uint64_t warm_at;                   /* taking this ID warms the next slot */
    _Atomic uint64_t gen;                       /* the generation it was filled for */
} segment_t;

/* A reserved range. */
typedef struct range {
    uint64_t start, end;
    int64_t step;
} range_t;

/*
 * Generation g uses seg[g & 1]; the next segment is ready when
 * seg[(g + 1) & 1].gen == g + 1.  Laid out by cache line: the segments
 * (written by every call), gen and the settings (read by every call), the
 * lock with what waiting callers and the loader share, and the loader's
 * own state.
 */
typedef struct leaf {
    segment_t seg[2];
    _Alignas(IDGEN_CACHE_LINE) _Atomic uint64_t gen;

    const dal_host_api_t *api;
    dal_host_t *host;
    const char *ds;   /* borrowed from the parameters */
    const char *tag;  /* borrowed: biz_tag, or the section name */
    const char *name; /* borrowed: the [idgen] section name, for events */
    char sql_read[LEAF_SQL_MAX];
    char sql_claim[LEAF_SQL_MAX];
    int64_t max_step;
    double prefetch;
    uint64_t target_ns; /* segment_duration */
    uint64_t wait_ns;   /* wait_timeout */

    _Alignas(IDGEN_CACHE_LINE) pthread_mutex_t mu; /* guards the rest */
    int loading;              /* the loader is reserving the next segment */
    int want;                 /* a caller asked for the next segment */
    int stop;
    int failing;              /* the last reservation failed (log once per outage) */
    uint64_t failures;        /* failed reservations so far */

    _Alignas(IDGEN_CACHE_LINE) pthread_cond_t loader_cv; /* loader waits for work */
    pthread_cond_t ready_cv;  /* callers wait for the next segment (monotonic clock) */
    pthread_t loader;
    int64_t step;             /* step of the last segment; 0 before the first */
    uint64_t last_load_ns;
    uint64_t last_fail_ns;
    dal_error_t last_err;
    unsigned seed;            /* backoff jitter, loader thread only */
} leaf_t;

/* ------------------------------------------------------------- database */

/* The row's max_id and step (the floor of the dynamic step). */
static int read_row(leaf_t *l, int64_t *max_id, int64_t *floor, dal_error_t *err)
{
    dal_value_t tag = idgen_text(l->tag);
    int64_t cols[2];
    int rc;

    rc = idgen_query_row(l->api, l->host, l->ds, l->sql_read, &tag, 1, cols, 2, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return l->api->set_error(err, DAL_ECONFIG, "biz tag '%s' is not in the segment table "
                                 "on datasource '%s' (`dal idgen init` adds it)", l->tag, l->ds);
    *max_id = cols[0];
    *floor = cols[1];
    if (*max_id < 0 || *floor < 1)
        return l->api->set_error(err, DAL_ESTATE, "biz tag '%s' on datasource '%s' has max_id %"
                                 PRId64 " and step %" PRId64 " (need max_id >= 0, step >= 1)",
                                 l->tag, l->ds, *max_id, *floor);
    return 0;
}

/* Move max_id from m to m + step if nobody did first: 1 won, 0 lost, < 0 error. */
static int claim(leaf_t *l, int64_t m, int64_t step, dal_error_t *err)
{
    dal_value_t p[3];
    uint64_t affected = 0;
    int rc;

    p[0] = idgen_int(m + step);
    p[1] = idgen_text(l->tag);
    p[2] = idgen_int(m);
    rc = idgen_exec(l->api, l->host, l->ds, l->sql_claim, p, 3, &affected, err);
    return rc < 0 ? rc : affected == 1;
}

static int64_t clamp_step(int64_t want, int64_t floor, int64_t cap)
{
    if (want > cap)
        want = cap;
    return want < floor ? floor : want;
}

/* Reserve one segment of about want IDs (0: the table's step). */
static int reserve(leaf_t *l, int64_t want, range_t *out, dal_error_t *err)
{
    int64_t m = 0, floor = 1, step;
    int i, rc;

    for (i = 0; i < LEAF_CLAIM_TRIES; i++) {
        if ((rc = read_row(l, &m, &floor, err)) != 0)
            return rc;
        step = clamp_step(want ? want : floor, floor, l->max_step);
        if (m > INT64_MAX - step)
            return l->api->set_error(err, DAL_ESTATE, "biz tag '%s': max_id %" PRId64
                                     " is too close to the 64-bit limit", l->tag, m);
        if ((rc = claim(l, m, step, err)) < 0)
            return rc;
        if (rc == 1) {
            out->start = (uint64_t)m;
            out->end = (uint64_t)(m + step);
            out->step = step;
            return 0;
        }
        /* another process won this round: back off a little, at random,
         * so that a crowd of loaders does not collide again in lock step */
        idgen_sleep_ms(rand_r(&l->seed) % (1 << (i < 4 ? i : 4)));
    }
    return l->api->set_error(err, DAL_ESERVER, "biz tag '%s': no segment after %d tries: "
                             "other processes kept moving max_id", l->tag, LEAF_CLAIM_TRIES);
}

/* ------------------------------------------------------------ segments */

/* Take up to n (<= LEAF_CHUNK) IDs from the segment of generation g into
 * ids.  Returns how many; *cross is set when the prefetch point was among
 * them. */
static inline size_t take(leaf_t *l, uint64_t g, int64_t *ids, size_t n, int *cross)
{
    segment_t *s = &l->seg[g & 1];
    /* max before the add: see the top of the file for why the order matters */
    uint64_t max = atomic_load_explicit(&s->max, memory_order_acquire);
    uint64_t at = atomic_load_explicit(&s->prefetch_at, memory_order_relaxed);
    uint64_t warm = atomic_load_explicit(&s->warm_at, memory_order_relaxed);
    uint64_t v = atomic_fetch_add_explicit(&s->next, n, memory_order_relaxed);
    size_t k;

    *cross = v < max && at - v < n; /* v <= at < v + n, in unsigned arithmetic */
    if (v >= max)
        return 0;
    /* near the end, bring the next slot (which the loader wrote on its own
     * core) into this core's cache, so that the switch does not wait for it */
    if (warm - v < n)
        __builtin_prefetch(&l->seg[(g + 1) & 1], 1, 3);
    if (max - v < n)
        n = (size_t)(max - v);
    for (k = 0; k < n; k++)
        ids[k] = (int64_t)(v + k);
    return n;
}

/* Ask the loader for the next segment.  Called with mu held. */
static void want_next(leaf_t *l)
{
    l->want = 1;
    pthread_cond_signal(&l->loader_cv);
}

static void request_prefetch(leaf_t *l)
{
    pthread_mutex_lock(&l->mu);
    want_next(l);
    pthread_mutex_unlock(&l->mu);
}

/*
 * Move from generation g to g + 1 if its segment is ready; no lock, so a
 * switch costs a caller a few loads and one compare-and-swap.  Returns 1 if
 * generation g is over (switched by us or by another caller).  *ask is set
 * when the new segment's prefetch point is already behind (a stale
 * caller's failed add swallowed it): the caller must ask for the next one.
 */
static int try_switch(leaf_t *l, uint64_t g, int *ask)
{
    segment_t *s = &l->seg[(g + 1) & 1];

    *ask = 0;
    if (atomic_load_explicit(&s->gen, memory_order_acquire) != g + 1)
        return atomic_load_explicit(&l->gen, memory_order_acquire) != g;
    if (atomic_compare_exchange_strong_explicit(&l->gen, &g, g + 1, memory_order_acq_rel,
                                                memory_order_acquire))
        *ask = atomic_load_explicit(&s->next, memory_order_relaxed) >
               atomic_load_explicit(&s->prefetch_at, memory_order_relaxed);
    return 1;
}

/* Fill the slot of generation g + 1 with r (the loader; mu held). */
static void publish(leaf_t *l, uint64_t g, const range_t *r, uint64_t t0)
{
    segment_t *s = &l->seg[(g + 1) & 1];
    uint64_t ahead = (uint64_t)((double)r->step * l->prefetch);

    atomic_store_explicit(&s->next, r->start, memory_order_relaxed);
    atomic_store_explicit(&s->prefetch_at, r->start + ahead, memory_order_relaxed);
    atomic_store_explicit(&s->warm_at, r->end - 1 - (r->end - r->start) / 64,
                          memory_order_relaxed);
    atomic_store_explicit(&s->max, r->end, memory_order_release);
    atomic_store_explicit(&s->gen, g + 1, memory_order_release); /* ready: last */
    if (l->step != 0 && r->step != l->step)
        l->api->log(l->host, DAL_LOG_INFO, "biz tag '%s': step %" PRId64 " -> %" PRId64,
                    l->tag, l->step, r->step);
    l->api->log(l->host, DAL_LOG_DEBUG, "biz tag '%s': reserved [%" PRIu64 ", %" PRIu64
                ") step %" PRId64, l->tag, r->start, r->end, r->step);
    l->step = r->step;
    l->last_load_ns = t0;
}

/* Error of the caller that finds both segments used up. */
static int exhausted(leaf_t *l, const char *why, dal_error_t *err)
{
    return l->api->set_error(err, l->last_err.code ? l->last_err.code : DAL_ESTATE,
                             "biz tag '%s': both segments are used up and %s: %s", l->tag,
                             why, l->last_err.message[0] ? l->last_err.message : "no error yet");
}

/*
 * Called with mu held when generation g gave nothing and its successor was
 * not ready: wait for the loader, at most wait_timeout, and switch.
 */
static int await_next(leaf_t *l, uint64_t g, dal_error_t *err)
{
    uint64_t fails = l->failures, deadline = idgen_mono_ns() + l->wait_ns, now;
    int ask;

    for (;;) {
        if (try_switch(l, g, &ask)) {
            if (ask)
                want_next(l);
            return 0;
        }
        now = idgen_mono_ns();
        if (l->failures != fails)
            return exhausted(l, "reserving the next one failed", err);
        if (!l->loading) {
            /* do not hammer a database that just failed: report that */
            if (l->failures > 0 && now - l->last_fail_ns < LEAF_RETRY_NS)
                return exhausted(l, "the last reservation failed", err);
            want_next(l);
        }
        if (now >= deadline)
            return l->api->set_error(err, DAL_ESTATE, "biz tag '%s': both segments are used "
                                     "up and no new one came from datasource '%s' within %"
                                     PRIu64 " ms", l->tag, l->ds, l->wait_ns / 1000000u);
        idgen_cond_wait_until(&l->ready_cv, &l->mu, deadline);
    }
}

/* Generation g gave nothing: switch, waiting for the loader if need be. */
static int next_segment(leaf_t *l, uint64_t g, dal_error_t *err)
{
    int ask, rc;

    if (try_switch(l, g, &ask)) {
        if (ask)
            request_prefetch(l);
        return 0;
    }
    pthread_mutex_lock(&l->mu);
    rc = await_next(l, g, err);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

static int leaf_next(void *instance, int64_t *ids, size_t n, dal_error_t *err)
{
    leaf_t *l = instance;
    size_t done = 0, got;
    uint64_t g;
    int cross, rc;

    while (done < n) {
        g = atomic_load_explicit(&l->gen, memory_order_acquire);
        got = take(l, g, ids + done, n - done < LEAF_CHUNK ? n - done : LEAF_CHUNK, &cross);
        if (cross)
            request_prefetch(l);
        done += got;
        /* the next segment lies above this one, so a call that straddles a
         * switch still gets increasing IDs */
        if (got == 0 && (rc = next_segment(l, g, err)) != 0)
            return rc;
    }
    return 0;
}

/* -------------------------------------------------------------- loader */

/* The step to ask for: Leaf's rule on how long the last segment lasted. */
static int64_t wanted_step(const leaf_t *l, uint64_t now)
{
    uint64_t lasted = now - l->last_load_ns;

    if (l->step == 0)
        return 0;
    if (lasted < l->target_ns)
        return l->step <= l->max_step / 2 ? l->step * 2 : l->max_step;
    if (lasted / 2 >= l->target_ns)
        return l->step / 2;
    return l->step;
}

/* Is there a slot to fill: is the successor of the current generation not
 * ready yet?  While it is not, no caller can switch, so the generation
 * read here stays current until the loader publishes. */
static int next_missing(const leaf_t *l, uint64_t *g)
{
    *g = atomic_load_explicit(&l->gen, memory_order_acquire);
    return atomic_load_explicit(&l->seg[(*g + 1) & 1].gen, memory_order_acquire) != *g + 1;
}

/* One DAL_EVENT_IDGEN per reservation: a segment of step IDs, or the error
 * that kept it from coming (a host older than the emit service: none). */
static void report(const leaf_t *l, const range_t *r, uint64_t t0, int rc)
{
    dal_event_t ev;

    if (!DAL_HAS_FIELD(dal_host_api_t, l->api, emit) || l->api->emit == NULL)
        return;
    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    ev.type = DAL_EVENT_IDGEN;
    ev.table = l->name;
    ev.datasource = l->ds;
    ev.latency_ns = idgen_mono_ns() - t0;
    ev.rows = rc == 0 ? (uint64_t)r->step : 0;
    ev.error_code = rc;
    l->api->emit(l->host, &ev);
}

/* Reserve the segment of generation g + 1.  Called with mu held; drops it
 * meanwhile. */
static void load_next(leaf_t *l, uint64_t g)
{
    uint64_t t0 = idgen_mono_ns();
    int64_t want = wanted_step(l, t0);
    dal_error_t err;
    range_t r = { 0, 0, 0 };
    int rc;

    memset(&err, 0, sizeof err);
    l->loading = 1;
    pthread_mutex_unlock(&l->mu);
    rc = reserve(l, want, &r, &err);
    report(l, &r, t0, rc);
    pthread_mutex_lock(&l->mu);
    l->loading = 0;
    if (rc == 0) {
        if (l->failing)
            l->api->log(l->host, DAL_LOG_INFO, "biz tag '%s': segments come again", l->tag);
        l->failing = 0;
        publish(l, g, &r, t0);
    } else {
        if (!l->failing)
            l->api->log(l->host, DAL_LOG_WARN, "biz tag '%s': cannot reserve a segment "
                        "(callers get buffered IDs until both segments are used up): %s",
                        l->tag, err.message);
        l->failing = 1;
        l->last_err = err;
        l->failures++;
        l->last_fail_ns = idgen_mono_ns();
    }
    pthread_cond_broadcast(&l->ready_cv);
}

static void *loader_main(void *arg)
{
    leaf_t *l = arg;
    uint64_t g;

    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && !(l->want && next_missing(l, &g)))
            pthread_cond_wait(&l->loader_cv, &l->mu);
        if (l->stop)
            break;
        l->want = 0;
        load_next(l, g);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* ------------------------------------------------------------ instance */

/* Read and check the parameters into l. */
static int leaf_configure(leaf_t *l, const char *name, const dal_plugin_params_t *p,
                          dal_error_t *err)
{
    const dal_host_api_t *api = l->api;
    const char *table = api->param_string(p, "table");
    int64_t step = api->param_int(p, "step");
    int64_t target = api->param_duration_ms(p, "segment_duration");
    int64_t wait = api->param_duration_ms(p, "wait_timeout");

    l->ds = api->param_string(p, "datasource");
    l->name = name;
    l->tag = api->param_is_set(p, "biz_tag") ? api->param_string(p, "biz_tag") : name;
    l->max_step = api->param_int(p, "max_step");
    l->prefetch = api->param_double(p, "prefetch");
    if (!idgen_identifier_ok(table))
        return api->set_error(err, DAL_ECONFIG, "table = '%s' is not a plain table name", table);
    if (l->tag[0] == '\0' || strlen(l->tag) > 128)
        return api->set_error(err, DAL_ECONFIG, "biz_tag must have 1 to 128 characters");
    if (step < 1 || step > INT32_MAX || l->max_step < 1 || l->max_step > INT32_MAX)
        return api->set_error(err, DAL_ECONFIG, "step and max_step must be 1 .. %d", INT32_MAX);
    if (!(l->prefetch >= 0.0 && l->prefetch < 1.0))
        return api->set_error(err, DAL_ECONFIG, "prefetch must be at least 0 and below 1");
    if (target < 1 || wait < 1)
        return api->set_error(err, DAL_ECONFIG, "segment_duration and wait_timeout must be > 0");
    l->target_ns = (uint64_t)target * 1000000u;
    l->wait_ns = (uint64_t)wait * 1000000u;
    snprintf(l->sql_read, sizeof l->sql_read,
             "SELECT max_id, step FROM `%s` WHERE biz_tag = ?", table);
    snprintf(l->sql_claim, sizeof l->sql_claim,
             "UPDATE `%s` SET max_id = ? WHERE biz_tag = ? AND max_id = ?", table);
    return 0;
}

static int leaf_sync_init(leaf_t *l)
{
    if (idgen_cond_init(&l->ready_cv) != 0)
        return -1;
    if (pthread_cond_init(&l->loader_cv, NULL) != 0) {
        pthread_cond_destroy(&l->ready_cv);
        return -1;
    }
    if (pthread_mutex_init(&l->mu, NULL) != 0) {
        pthread_cond_destroy(&l->loader_cv);
        pthread_cond_destroy(&l->ready_cv);
        return -1;
    }
    return 0;
}

static void leaf_sync_free(leaf_t *l)
{
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->loader_cv);
    pthread_cond_destroy(&l->ready_cv);
}

/*
 * No database work here: the first segment is reserved on the first call,
 * so dal_open (and `dal idgen init`, which creates the table) works while
 * the table is missing or the server is down.
 */
static int leaf_create(const dal_host_api_t *api, dal_host_t *host, const char *name,
                       const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    /* the struct's size is a multiple of its cache-line alignment, as
     * aligned_alloc wants */
    leaf_t *l = aligned_alloc(IDGEN_CACHE_LINE, sizeof *l);
    int rc;

    *instance = NULL;
    if (l == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    memset(l, 0, sizeof *l);
    l->api = api;
    l->host = host;
    l->seed = (unsigned)idgen_mono_ns() ^ (unsigned)(uintptr_t)l;
    /* generation 0's segment is empty (next == max == 0) and generation 1's
     * not ready: the first call waits for the loader as at any switch */
    if ((rc = leaf_configure(l, name, params, err)) != 0)
        goto fail;
    if (leaf_sync_init(l) != 0) {
        rc = api->set_error(err, DAL_ENOMEM, "cannot create a mutex");
        goto fail;
    }
    if (dal_plugin_thread_create(api, &l->loader, loader_main, l) != 0) {
        leaf_sync_free(l);
        rc = api->set_error(err, DAL_EIO, "cannot start the loader thread");
        goto fail;
    }
    *instance = l;
    return 0;
fail:
    free(l);
    return rc;
}

static void leaf_destroy(void *instance)
{
    leaf_t *l = instance;

    if (l == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_signal(&l->loader_cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->loader, NULL);
    leaf_sync_free(l);
    free(l);
}

/* ---------------------------------------------------------- descriptor */

static const dal_param_spec_t leaf_params[] = {
    { "datasource", DAL_PARAM_STRING, 1, NULL,
      "datasource node holding the segment table" },
    { "biz_tag", DAL_PARAM_STRING, 0, NULL,
      "row of the segment table to draw from (default: the [idgen NAME])" },
    { "table", DAL_PARAM_STRING, 0, "leaf_alloc", "name of the segment table" },
    { "step", DAL_PARAM_INT, 0, "1000",
      "step `dal idgen init` gives a new biz tag; at run time the table's step is the floor" },
    { "max_step", DAL_PARAM_INT, 0, "1000000", "largest step the dynamic step grows to" },
    { "description", DAL_PARAM_STRING, 0, NULL, "description `dal idgen init` stores" },
    { "prefetch", DAL_PARAM_DOUBLE, 0, "0.1",
      "fraction of a segment used before the next one is reserved" },
    { "segment_duration", DAL_PARAM_DURATION, 0, "15m",
      "the step doubles while segments last less, and halves when they last twice as long" },
    { "wait_timeout", DAL_PARAM_DURATION, 0, "3s",
      "longest a caller waits for a segment when both are used up" },
    { NULL, 0, 0, NULL, NULL }
};

static const dal_idgen_ops_t leaf_ops = {
    sizeof(dal_idgen_ops_t),
    leaf_create,
    leaf_destroy,
    leaf_next
};

static const dal_plugin_t leaf_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_IDGEN,
    "leaf",
    DAL_VERSION_STRING,
    "Leaf segment mode: IDs reserved in blocks from a database table, double-buffered",
    leaf_params,
    &leaf_ops
};

DAL_PLUGIN_DECLARE(leaf_plugin)
