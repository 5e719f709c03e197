/*
 * idgen_snowflake.c -- the "snowflake" ID generator.
 *
 *     0 | 41 bits: ms since the epoch | 10 bits: worker id | 12 bits: sequence
 *
 * IDs are positive 63-bit integers, unique as long as no two generators use
 * the same worker id at the same time and the clock does not go back.
 *
 * Worker id: `worker_id = N` in the config, or leased from a table on
 * `lease_datasource` (rows 0..1023, made by `dal idgen init`).  A lease row
 * holds an owner token (host:pid:random) and an expiry in the database's UTC
 * clock.  A lease is claimed with one UPDATE that takes the first expired row
 * (the row lock makes two claimers take different rows), then found again by
 * its token; a thread renews it every third of lease_time.  Locally the
 * lease counts as valid until the time the renewal was *sent* plus 4/5 of
 * lease_time, so this process stops using a worker id before the database
 * lets anyone else take it.  If a renewal finds the row taken, the id is
 * dropped and another one claimed.
 *
 * Clock: a clock that moved back by at most max_backward (5 ms, as in Leaf)
 * is waited for; more is an error until it catches up.  Never a duplicate.
 *
 * Sequence: each millisecond starts at a random offset below sequence_offset
 * (128).  With a constant start, IDs made at a low rate all end in the same
 * 22 bits and pile onto a few shards of a `mod` strategy (2^22 % 100 == 4,
 * so they would reach only 25 of 100 tables); a random start spreads them.
 *
 * Concurrency: the last millisecond and the next sequence number of a worker
 * id live in one 64-bit word updated by compare-and-swap; no lock on the
 * path of an ID.  The words are per process, one per worker id, shared by
 * every instance: the old and the new instance of a configuration reload,
 * or two sections naming the same worker id, use one sequence and so never
 * make the same ID.  An instance starts on a worker id at the millisecond
 * after its first call, so that IDs of an instance of an earlier dal_open
 * (whose words went away with the .so) cannot be repeated either.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "idgen_common.h"

#define SF_WORKER_BITS 10
#define SF_SEQ_BITS 12
#define SF_WORKERS (1 << SF_WORKER_BITS)
#define SF_SEQ_LIMIT (1u << SF_SEQ_BITS)
#define SF_MAX_MS ((INT64_C(1) << 41) - 1)
#define SF_STATE_SEQ_BITS 13 /* the next sequence may be SF_SEQ_LIMIT: used up */
#define SF_STATE_SEQ_MASK ((UINT64_C(1) << SF_STATE_SEQ_BITS) - 1)
#define SF_SQL_MAX 256
#define SF_RELEASE_GRACE_US 1000000 /* a released id stays taken this long */

/* Where time comes from.  The real clock by default; the unit test, which
 * compiles this file in, replaces it to move time as it likes. */
typedef struct sf_clock {
    int64_t (*now_ms)(void *ctx);         /* ms since the Unix epoch */
    void (*pause_ms)(void *ctx, int64_t ms); /* 0: a short pause while spinning */
    void *ctx;
} sf_clock_t;

/* The worker id lease, when the worker id comes from a table. */
typedef struct lease {
    const dal_host_api_t *api;
    dal_host_t *host;
    const char *ds;               /* borrowed from the parameters */
    char sql_claim[SF_SQL_MAX];
    char sql_find[SF_SQL_MAX];
    char sql_renew[SF_SQL_MAX];
    char owner[128];
    int64_t lease_ms;
    uint64_t wait_ns;
    /* (monotonic ms until which it may be used) << 16 | worker id; 0: none.
     * One word, so that a caller never pairs a worker id with the validity
     * of another. */
    _Atomic uint64_t word;

    pthread_mutex_t mu;           /* guards the fields below */
    pthread_cond_t cv;            /* monotonic; the thread and callers wait on it */
    pthread_t thread;
    int active;                   /* a caller wants a worker id */
    int stop;
    int failing;                  /* the last attempt failed */
    uint64_t failures;
    dal_error_t last_err;
} lease_t;

/* Per worker id: (last ms since the Unix epoch) << 13 | next sequence. */
static _Atomic uint64_t sf_states[SF_WORKERS];

typedef struct snowflake {
    const dal_host_api_t *api;
    sf_clock_t clock;
    int64_t epoch_ms;        /* ms since the Unix epoch */
    int64_t max_backward_ms;
    uint64_t seq_offset;     /* 0: each ms starts at 0 */
    uint64_t seed;
    uint32_t worker_id;      /* when lease is NULL */
    lease_t *lease;          /* owned; NULL with a fixed worker id */
    _Atomic uint32_t fenced; /* 1 + the worker id this instance has started on; 0: none */
} snowflake_t;

static uint64_t mix64(uint64_t x)
{
    /* splitmix64's finaliser: every input bit moves every output bit */
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* ------------------------------------------------------------ real clock */

static int64_t wall_now_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wall_pause_ms(void *ctx, int64_t ms)
{
    (void)ctx;
    if (ms > 0)
        idgen_sleep_ms(ms);
#if defined(__x86_64__) || defined(__i386__)
    else
        __builtin_ia32_pause();
#endif
}

/* ----------------------------------------------------------------- lease */

static uint64_t mono_ms(void)
{
    return idgen_mono_ns() / 1000000u;
}

/* Write the lease word: valid until t0_ns + 4/5 of the lease. */
static void lease_set(lease_t *ls, uint64_t t0_ns, int32_t worker)
{
    uint64_t until = t0_ns / 1000000u + (uint64_t)(ls->lease_ms - ls->lease_ms / 5);

    atomic_store_explicit(&ls->word, until << 16 | (uint64_t)worker, memory_order_release);
}

/* Extend our lease of worker for us_ahead microseconds: 1 done, 0 the row
 * is no longer ours, < 0 error. */
static int lease_extend(lease_t *ls, int32_t worker, int64_t us_ahead, dal_error_t *err)
{
    dal_value_t p[3];
    uint64_t affected = 0;
    int rc;

    p[0] = idgen_int(us_ahead);
    p[1] = idgen_int(worker);
    p[2] = idgen_text(ls->owner);
    rc = idgen_exec(ls->api, ls->host, ls->ds, ls->sql_renew, p, 3, &affected, err);
    return rc < 0 ? rc : affected == 1;
}

/* Claim the first expired row and find which one it was. */
static int lease_claim(lease_t *ls, int32_t *worker, dal_error_t *err)
{
    dal_value_t p[2];
    uint64_t affected = 0;
    int64_t id;
    int rc;

    p[0] = idgen_text(ls->owner);
    p[1] = idgen_int(ls->lease_ms * 1000);
    rc = idgen_exec(ls->api, ls->host, ls->ds, ls->sql_claim, p, 2, &affected, err);
    if (rc < 0)
        return rc;
    if (affected == 0)
        return ls->api->set_error(err, DAL_ESTATE, "no free worker id in the lease table on "
                                  "datasource '%s' (all leased, or the table is empty: "
                                  "`dal idgen init` fills it)", ls->ds);
    rc = idgen_query_row(ls->api, ls->host, ls->ds, ls->sql_find, p, 1, &id, 1, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || id < 0 || id >= SF_WORKERS)
        return ls->api->set_error(err, DAL_ESTATE, "the worker id just leased on datasource "
                                  "'%s' cannot be read back", ls->ds);
    *worker = (int32_t)id;
    return 0;
}

/* Renew the lease held, or claim one.  Runs on the lease thread. */
static int lease_refresh(lease_t *ls, dal_error_t *err)
{
    uint64_t t0 = idgen_mono_ns(), word = atomic_load(&ls->word);
    int32_t worker = (int32_t)(word & 0xffff);
    int rc;

    if (word != 0) {
        rc = lease_extend(ls, worker, ls->lease_ms * 1000, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            lease_set(ls, t0, worker);
            return 0;
        }
        atomic_store(&ls->word, 0);
        ls->api->log(ls->host, DAL_LOG_WARN, "worker id %d was leased to someone else; "
                     "leasing another", (int)worker);
    }
    if ((rc = lease_claim(ls, &worker, err)) != 0)
        return rc;
    lease_set(ls, t0, worker);
    ls->api->log(ls->host, DAL_LOG_INFO, "leased worker id %d on datasource '%s' as %s",
                 (int)worker, ls->ds, ls->owner);
    return 0;
}

/* One round of the lease thread.  Called and returns with mu held. */
static void lease_round(lease_t *ls)
{
    dal_error_t err;
    uint64_t next;
    int rc;

    memset(&err, 0, sizeof err);
    pthread_mutex_unlock(&ls->mu);
    rc = lease_refresh(ls, &err);
    pthread_mutex_lock(&ls->mu);
    if (rc != 0) {
        if (!ls->failing)
            ls->api->log(ls->host, DAL_LOG_WARN, "worker id lease: %s", err.message);
        ls->last_err = err;
        ls->failures++;
    }
    ls->failing = rc != 0;
    pthread_cond_broadcast(&ls->cv);
    /* renew at a third of the lease; after a failure retry sooner */
    next = (uint64_t)(rc == 0 ? ls->lease_ms / 3 : ls->lease_ms / 10 < 1000 ? ls->lease_ms / 10
                                                                             : 1000);
    if (!ls->stop)
        idgen_cond_wait_until(&ls->cv, &ls->mu, idgen_mono_ns() + next * 1000000u);
}

static void lease_release(lease_t *ls)
{
    uint64_t word = atomic_load(&ls->word);
    dal_error_t err;

    /* a short grace rather than at once: IDs made in our last milliseconds
     * must be older than the first ones of the next holder */
    if (word != 0 && lease_extend(ls, (int32_t)(word & 0xffff), SF_RELEASE_GRACE_US, &err) < 0)
        ls->api->log(ls->host, DAL_LOG_INFO, "worker id lease not released (it expires by "
                     "itself): %s", err.message);
}

static void *lease_main(void *arg)
{
    lease_t *ls = arg;

    pthread_mutex_lock(&ls->mu);
    while (!ls->stop) {
        if (ls->active)
            lease_round(ls);
        else
            pthread_cond_wait(&ls->cv, &ls->mu);
    }
    pthread_mutex_unlock(&ls->mu);
    lease_release(ls);
    return NULL;
}

/* The leased worker id, waiting (at most wait_timeout) for the lease thread. */
static int lease_wait(lease_t *ls, uint32_t *worker, dal_error_t *err)
{
    uint64_t deadline = idgen_mono_ns() + ls->wait_ns, fails, word;
    int rc = 0;

    pthread_mutex_lock(&ls->mu);
    fails = ls->failures;
    if (!ls->active) {
        ls->active = 1;
        pthread_cond_broadcast(&ls->cv);
    }
    for (;;) {
        word = atomic_load(&ls->word);
        if (mono_ms() < word >> 16) {
            *worker = (uint32_t)(word & 0xffff);
            break;
        }
        if (ls->failing || ls->failures != fails) {
            rc = ls->api->set_error(err, ls->last_err.code, "no worker id lease: %s",
                                    ls->last_err.message);
            break;
        }
        if (idgen_mono_ns() >= deadline) {
            rc = ls->api->set_error(err, DAL_ESTATE, "no worker id lease from datasource '%s' "
                                    "within %" PRIu64 " ms", ls->ds, ls->wait_ns / 1000000u);
            break;
        }
        idgen_cond_wait_until(&ls->cv, &ls->mu, deadline);
    }
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

static int lease_worker(lease_t *ls, uint32_t *worker, dal_error_t *err)
{
    uint64_t word = atomic_load_explicit(&ls->word, memory_order_acquire);

    if (mono_ms() < word >> 16) {
        *worker = (uint32_t)(word & 0xffff);
        return 0;
    }
    return lease_wait(ls, worker, err);
}

/* The table name is a checked identifier of at most 64 characters, so the
 * statements fit. */
static void lease_sql(lease_t *ls, const char *table)
{
    /* UTC_TIMESTAMP, not NOW(): clients with different time zones share the table */
    snprintf(ls->sql_claim, sizeof ls->sql_claim,
                     "UPDATE `%s` SET owner = ?, expires_at = UTC_TIMESTAMP(3) + INTERVAL ? "
                     "MICROSECOND WHERE expires_at < UTC_TIMESTAMP(3) ORDER BY worker_id LIMIT 1",
             table);
    snprintf(ls->sql_find, sizeof ls->sql_find,
                     "SELECT worker_id FROM `%s` WHERE owner = ? ORDER BY worker_id LIMIT 1",
                     table);
    snprintf(ls->sql_renew, sizeof ls->sql_renew,
                     "UPDATE `%s` SET expires_at = UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND "
                     "WHERE worker_id = ? AND owner = ?", table);
}

static void lease_free(lease_t *ls)
{
    if (ls == NULL)
        return;
    pthread_mutex_lock(&ls->mu);
    ls->stop = 1;
    pthread_cond_broadcast(&ls->cv);
    pthread_mutex_unlock(&ls->mu);
    pthread_join(ls->thread, NULL);
    pthread_cond_destroy(&ls->cv);
    pthread_mutex_destroy(&ls->mu);
    free(ls);
}

/* Set up the lease (no database work until the first ID is asked for). */
static int lease_new(const dal_host_api_t *api, dal_host_t *host, const dal_plugin_params_t *p,
                     uint64_t seed, lease_t **out, dal_error_t *err)
{
    const char *table = api->param_string(p, "lease_table");
    char hostname[64] = "localhost";
    lease_t *ls;

    *out = NULL;
    if (!idgen_identifier_ok(table))
        return api->set_error(err, DAL_ECONFIG, "lease_table = '%s' is not a plain table name",
                              table);
    if (api->param_duration_ms(p, "lease_time") < 1000)
        return api->set_error(err, DAL_ECONFIG, "lease_time must be at least 1s");
    if ((ls = calloc(1, sizeof *ls)) == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    ls->api = api;
    ls->host = host;
    ls->ds = api->param_string(p, "lease_datasource");
    ls->lease_ms = api->param_duration_ms(p, "lease_time");
    ls->wait_ns = (uint64_t)api->param_duration_ms(p, "wait_timeout") * 1000000u;
    gethostname(hostname, sizeof hostname - 1);
    snprintf(ls->owner, sizeof ls->owner, "%s:%ld:%016" PRIx64, hostname, (long)getpid(), seed);
    lease_sql(ls, table);
    if (pthread_mutex_init(&ls->mu, NULL) != 0)
        goto fail_mu;
    if (idgen_cond_init(&ls->cv) != 0)
        goto fail_cv;
    if (dal_plugin_thread_create(api, &ls->thread, lease_main, ls) != 0)
        goto fail_thread;
    *out = ls;
    return 0;
fail_thread:
    pthread_cond_destroy(&ls->cv);
fail_cv:
    pthread_mutex_destroy(&ls->mu);
fail_mu:
    free(ls);
    return api->set_error(err, DAL_EIO, "cannot start the worker id lease thread");
}

/* ------------------------------------------------------------------- IDs */

typedef enum { SF_TOOK, SF_RETRY, SF_FULL, SF_BEHIND } sf_step_t;

/* First sequence number of millisecond ms. */
static uint64_t sf_start(const snowflake_t *f, int64_t ms)
{
    return f->seq_offset ? mix64((uint64_t)ms ^ f->seed) % f->seq_offset : 0;
}

/* ms: the ID's millisecond field; back: how far the clock went back. */
static int sf_clock_error(const snowflake_t *f, int64_t ms, int64_t back, dal_error_t *err)
{
    if (ms < 0)
        return f->api->set_error(err, DAL_ESTATE, "the clock is before the snowflake epoch");
    if (ms > SF_MAX_MS)
        return f->api->set_error(err, DAL_ESTATE, "the 41-bit millisecond field ran out "
                                 "(69 years after the epoch)");
    return f->api->set_error(err, DAL_ESTATE, "the clock moved back by %" PRId64 " ms (more "
                             "than max_backward = %" PRId64 " ms): no IDs until it catches up",
                             back, f->max_backward_ms);
}

/*
 * One attempt at taking up to n IDs of the current millisecond for worker,
 * whose word is state.  *got: how many (SF_TOOK); *behind: how far the
 * clock is behind the last millisecond used (SF_BEHIND).  Fails on a clock
 * that cannot be used.
 */
static int sf_take(snowflake_t *f, _Atomic uint64_t *state, uint32_t worker, int64_t *ids,
                   size_t n, size_t *got, int64_t *behind, sf_step_t *step, dal_error_t *err)
{
    /* the state before the clock: a clock read first could be overtaken by
     * other threads before the state is, and look like a clock going back */
    uint64_t old = atomic_load_explicit(state, memory_order_acquire);
    int64_t now = f->clock.now_ms(f->clock.ctx), ms = now - f->epoch_ms;
    uint64_t last = old >> SF_STATE_SEQ_BITS, start, k, base, i;

    if (ms < 0 || ms > SF_MAX_MS || (uint64_t)now + (uint64_t)f->max_backward_ms < last)
        return sf_clock_error(f, ms, (int64_t)last - now, err);
    if ((uint64_t)now < last) {
        *behind = (int64_t)last - now;
        *step = SF_BEHIND;
        return 0;
    }
    start = (uint64_t)now > last ? sf_start(f, now) : old & SF_STATE_SEQ_MASK;
    if (start >= SF_SEQ_LIMIT) {
        *step = SF_FULL;
        return 0;
    }
    k = n < SF_SEQ_LIMIT - start ? n : SF_SEQ_LIMIT - start;
    if (!atomic_compare_exchange_weak_explicit(state, &old,
                                               (uint64_t)now << SF_STATE_SEQ_BITS | (start + k),
                                               memory_order_release, memory_order_relaxed)) {
        *step = SF_RETRY;
        return 0;
    }
    base = (uint64_t)ms << (SF_WORKER_BITS + SF_SEQ_BITS) | (uint64_t)worker << SF_SEQ_BITS;
    for (i = 0; i < k; i++)
        ids[i] = (int64_t)(base | (start + i));
    *got = (size_t)k;
    *step = SF_TOOK;
    return 0;
}

/* The first time this instance uses worker: mark the current millisecond
 * used up, unless a live user of the word is in it already. */
static void sf_start_on(snowflake_t *f, _Atomic uint64_t *state, uint32_t worker)
{
    int64_t now = f->clock.now_ms(f->clock.ctx);
    uint64_t old = atomic_load(state), used = (uint64_t)now << SF_STATE_SEQ_BITS | SF_SEQ_LIMIT;

    while (now > 0 && (old >> SF_STATE_SEQ_BITS) < (uint64_t)now &&
           !atomic_compare_exchange_weak(state, &old, used))
        ;
    atomic_store(&f->fenced, worker + 1);
}

static int sf_next(void *instance, int64_t *ids, size_t n, dal_error_t *err)
{
    snowflake_t *f = instance;
    int64_t behind = 0, waited = 0;
    size_t done = 0, got = 0;
    uint32_t worker = f->worker_id;
    sf_step_t step = SF_RETRY;
    _Atomic uint64_t *state;
    int rc;

    if (f->lease != NULL && (rc = lease_worker(f->lease, &worker, err)) != 0)
        return rc;
    state = &sf_states[worker];
    if (atomic_load_explicit(&f->fenced, memory_order_relaxed) != worker + 1)
        sf_start_on(f, state, worker);
    while (done < n) {
        rc = sf_take(f, state, worker, ids + done, n - done, &got, &behind, &step, err);
        if (rc != 0)
            return rc;
        if (step == SF_TOOK) {
            done += got;
        } else if (step == SF_FULL) {
            f->clock.pause_ms(f->clock.ctx, 0); /* spin into the next millisecond */
        } else if (step == SF_BEHIND) {
            /* a small step back (NTP slewing, a VM pause): wait it out, but
             * not for ever if the clock keeps falling back */
            if ((waited += behind) > 2 * f->max_backward_ms)
                return f->api->set_error(err, DAL_ESTATE, "the clock stays behind the last "
                                         "ID's millisecond after %" PRId64 " ms of waiting",
                                         waited - behind);
            f->clock.pause_ms(f->clock.ctx, behind);
        }
    }
    return 0;
}

/* ------------------------------------------------------------- instance */

/* "YYYY-MM-DD", "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS[Z]", in UTC. */
static int parse_epoch(const char *s, int64_t *ms)
{
    struct tm tm;
    const char *rest;
    int date = 0, all = 0;

    memset(&tm, 0, sizeof tm);
    if (sscanf(s, "%4d-%2d-%2d%n%*1[ T]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &date, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &all) < 3)
        return -1;
    rest = s + (all > 0 ? all : date);
    if (*rest != '\0' && !(all > 0 && strcmp(rest, "Z") == 0))
        return -1;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 59 || tm.tm_year < 1970)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *ms = (int64_t)timegm(&tm) * 1000;
    return 0;
}

/* Read and check the parameters that do not concern the lease. */
static int sf_configure(snowflake_t *f, const dal_plugin_params_t *p, dal_error_t *err)
{
    const dal_host_api_t *api = f->api;
    int has_id = api->param_is_set(p, "worker_id");
    int64_t id = api->param_int(p, "worker_id");
    int64_t offset = api->param_int(p, "sequence_offset");

    if (has_id == api->param_is_set(p, "lease_datasource"))
        return api->set_error(err, DAL_ECONFIG, "give either worker_id or lease_datasource "
                              "(to lease a worker id from a table), not %s",
                              has_id ? "both" : "neither");
    if (has_id && (id < 0 || id >= SF_WORKERS))
        return api->set_error(err, DAL_ECONFIG, "worker_id %" PRId64 " is not in 0..%d", id,
                              SF_WORKERS - 1);
    if (parse_epoch(api->param_string(p, "epoch"), &f->epoch_ms) != 0)
        return api->set_error(err, DAL_ECONFIG, "epoch = '%s' is not a UTC date "
                              "(YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)", api->param_string(p, "epoch"));
    if (f->epoch_ms > wall_now_ms(NULL))
        return api->set_error(err, DAL_ECONFIG, "epoch = '%s' is in the future",
                              api->param_string(p, "epoch"));
    if (offset < 0 || offset > (int64_t)SF_SEQ_LIMIT / 4)
        return api->set_error(err, DAL_ECONFIG, "sequence_offset must be 0..%u",
                              SF_SEQ_LIMIT / 4);
    if (api->param_duration_ms(p, "wait_timeout") < 1)
        return api->set_error(err, DAL_ECONFIG, "wait_timeout must be > 0");
    /* a caller waits up to twice this: more would be a hang, not a wait */
    if (api->param_duration_ms(p, "max_backward") > 1000)
        return api->set_error(err, DAL_ECONFIG, "max_backward must be at most 1s");
    f->worker_id = (uint32_t)id;
    f->seq_offset = (uint64_t)offset;
    f->max_backward_ms = api->param_duration_ms(p, "max_backward");
    return 0;
}

static int sf_create(const dal_host_api_t *api, dal_host_t *host, const char *name,
                     const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    snowflake_t *f = calloc(1, sizeof *f);
    int rc;

    (void)name;
    *instance = NULL;
    if (f == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    f->api = api;
    f->clock.now_ms = wall_now_ms;
    f->clock.pause_ms = wall_pause_ms;
    f->seed = mix64(idgen_mono_ns() ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)f);
    if ((rc = sf_configure(f, params, err)) != 0)
        goto fail;
    if (api->param_is_set(params, "lease_datasource") &&
        (rc = lease_new(api, host, params, f->seed, &f->lease, err)) != 0)
        goto fail;
    *instance = f;
    return 0;
fail:
    free(f);
    return rc;
}

static void sf_destroy(void *instance)
{
    snowflake_t *f = instance;

    if (f == NULL)
        return;
    lease_free(f->lease);
    free(f);
}

/* ---------------------------------------------------------- descriptor */

static const dal_param_spec_t sf_params[] = {
    { "epoch", DAL_PARAM_STRING, 0, "2020-01-01",
      "start of the 41-bit millisecond field, a UTC date: YYYY-MM-DD[ HH:MM:SS]" },
    { "worker_id", DAL_PARAM_INT, 0, NULL,
      "this generator's worker id, 0..1023 (or lease one with lease_datasource)" },
    { "lease_datasource", DAL_PARAM_STRING, 0, NULL,
      "lease the worker id from a table on this datasource, so no two processes share one" },
    { "lease_table", DAL_PARAM_STRING, 0, "dal_worker_lease", "name of the lease table" },
    { "lease_time", DAL_PARAM_DURATION, 0, "30s",
      "how long a lease lasts; it is renewed every third of that" },
    { "max_backward", DAL_PARAM_DURATION, 0, "5ms",
      "a clock that moved back this much or less is waited for; more is an error" },
    { "sequence_offset", DAL_PARAM_INT, 0, "128",
      "each millisecond's sequence starts at a random number below this (0: at 0)" },
    { "wait_timeout", DAL_PARAM_DURATION, 0, "3s",
      "longest a caller waits for a worker id lease" },
    { NULL, 0, 0, NULL, NULL }
};

static const dal_idgen_ops_t sf_ops = {
    sizeof(dal_idgen_ops_t),
    sf_create,
    sf_destroy,
    sf_next
};

static const dal_plugin_t sf_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_IDGEN,
    "snowflake",
    DAL_VERSION_STRING,
    "snowflake IDs: 41-bit ms, 10-bit worker id (configured or leased), 12-bit sequence",
    sf_params,
    &sf_ops
};

DAL_PLUGIN_DECLARE(sf_plugin)
