/*
 * pool_default.c -- the default connection pool: one thread-safe pool per
 * server with a size limit, a bounded wait, connection ageing, validation,
 * state reset and leak detection.
 *
 * Every connection of the pool lives in one of max_size entries, and every
 * entry is in exactly one place: the free list (no connection), the idle
 * stack, the busy list (lent out), or "in flight" with one thread that is
 * opening, validating or closing its connection.  So the pool never holds
 * more than max_size connections, and in_use is simply what is neither free
 * nor idle.
 *
 * Fast path: acquire pops the most recently used idle connection (LIFO
 * keeps a small hot set and lets the rest reach idle_timeout) and release
 * pushes it back, one short critical section each.  Nothing that talks to
 * the server runs under the lock: connecting, pinging, resetting and
 * closing happen in flight.  A connection idle for less than
 * validation_interval is trusted without a ping (the same bet HikariCP
 * makes); exec retries reads that hit a connection that died meanwhile.
 *
 * Waiting is first come, first served: each waiter queues with its own
 * condition variable and a release hands its connection (or, when it closed
 * one, the empty entry to open a new one in) straight to the first waiter,
 * so a newcomer can never overtake someone who waited longer.
 *
 * A keeper thread closes connections idle longer than idle_timeout (down to
 * min_idle) or older than max_lifetime, opens connections up to min_idle,
 * and reports connections borrowed longer than leak_threshold with the
 * statement that took them (from the host's current_statement).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/plugin.h>

#define TAKEN_BY_MAX 256     /* bytes of the statement kept for a leak report */
#define KEEPER_MAX_MS 1000   /* the keeper looks at the pool at least this often */
#define KEEPER_MIN_MS 10
#define MAX_SIZE_LIMIT 100000

typedef struct entry {
    dal_conn_t *conn;           /* NULL in the free list and while opening */
    uint64_t created_ns;        /* for max_lifetime */
    uint64_t since_ns;          /* idle since, or borrowed since */
    int leak_reported;
    struct entry *prev, *next;  /* links in the one list that holds it */
    char taken_by[TAKEN_BY_MAX];/* the borrower's statement, when leak detection is on */
} entry_t;

typedef struct list {
    entry_t *head, *tail;
    uint32_t n;
} list_t;

typedef struct waiter {
    pthread_cond_t cond;
    entry_t *granted;           /* a connection, or an empty entry to open one in */
    struct waiter *next;
} waiter_t;

typedef struct settings {
    uint32_t min_idle, max_size;
    int64_t acquire_timeout_ms;
    uint64_t max_lifetime_ns;   /* 0: unlimited */
    uint64_t idle_timeout_ns;   /* 0: never */
    uint64_t validate_ns;       /* idle at least this long: ping before reuse */
    uint64_t leak_ns;           /* 0: no leak detection */
    int reset;
} settings_t;

typedef struct leak_report {
    uint64_t held_ms;
    char taken_by[TAKEN_BY_MAX];
} leak_report_t;

typedef struct pool {
    const dal_host_api_t *api;  /* static table, outlives the instance */
    dal_host_t *host;           /* borrowed, outlives the instance */
    char *datasource;           /* owned copies for messages */
    char *address;
    settings_t set;

    pthread_mutex_t mu;         /* guards everything below up to the counters */
    entry_t *slots;             /* owned, max_size long */
    list_t free, idle, busy;
    waiter_t *wait_head, *wait_tail;
    uint32_t nwait;
    int stop;                   /* the keeper must end */
    pthread_cond_t keeper_cond; /* wakes the keeper to stop */
    pthread_condattr_t mono;    /* condition variables that time out on CLOCK_MONOTONIC */

    _Atomic uint64_t created, closed, timed_out;

    /* the keeper's own scratch space, max_size long each */
    pthread_t keeper;
    int keeper_started;
    int fill_failing;           /* the last min_idle fill failed (logged once) */
    dal_conn_t **doomed;
    leak_report_t *reports;
} pool_t;

enum { GOT_READY = 1, GOT_CHECK, GOT_STALE, GOT_OPEN };

/*
 * Pool bookkeeping needs milliseconds, not nanoseconds: the coarse clock
 * reads in a few ns instead of ~20, which matters on a path that reads it
 * twice per borrow.
 */
static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void deadline_after_ms(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* ---------------------------------------------------------------- lists */

static void list_push_front(list_t *l, entry_t *e)
{
    e->prev = NULL;
    e->next = l->head;
    if (l->head != NULL)
        l->head->prev = e;
    else
        l->tail = e;
    l->head = e;
    l->n++;
}

static void list_remove(list_t *l, entry_t *e)
{
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        l->head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    else
        l->tail = e->prev;
    e->prev = e->next = NULL;
    l->n--;
}

static entry_t *list_pop(list_t *l)
{
    entry_t *e = l->head;

    if (e != NULL)
        list_remove(l, e);
    return e;
}

/* ------------------------------------------------- moving entries (locked) */

/* Give e to the first waiter, if any. */
static int hand_to_waiter_locked(pool_t *p, entry_t *e)
{
    waiter_t *w = p->wait_head;

    if (w == NULL)
        return 0;
    p->wait_head = w->next;
    if (p->wait_head == NULL)
        p->wait_tail = NULL;
    p->nwait--;
    w->granted = e;
    pthread_cond_signal(&w->cond);
    return 1;
}

/* A usable connection comes back: to the first waiter, else on the idle stack. */
static void put_idle_locked(pool_t *p, entry_t *e, uint64_t now)
{
    if (hand_to_waiter_locked(p, e))
        return;
    e->since_ns = now;
    list_push_front(&p->idle, e);
}

/* An entry without a connection: the first waiter may open one in it. */
static void put_empty_locked(pool_t *p, entry_t *e)
{
    e->conn = NULL;
    if (!hand_to_waiter_locked(p, e))
        list_push_front(&p->free, e);
}

/* What the borrower is running, for a leak report.  Hosts built before
 * current_statement existed leave it empty. */
static void stamp_borrower(const pool_t *p, entry_t *e)
{
    const dal_host_api_t *api = p->api;

    e->taken_by[0] = '\0';
    if (DAL_HAS_FIELD(dal_host_api_t, api, current_statement) && api->current_statement != NULL)
        api->current_statement(e->taken_by, sizeof e->taken_by);
}

static void lend_locked(pool_t *p, entry_t *e, uint64_t now)
{
    e->since_ns = now;
    e->leak_reported = 0;
    if (p->set.leak_ns > 0)
        stamp_borrower(p, e);
    list_push_front(&p->busy, e);
}

static int expired(const pool_t *p, const entry_t *e, uint64_t now)
{
    return p->set.max_lifetime_ns > 0 && now - e->created_ns >= p->set.max_lifetime_ns;
}

/* ------------------------------------------------------------- acquire */

static int exhausted(pool_t *p, dal_error_t *err)
{
    atomic_fetch_add_explicit(&p->timed_out, 1, memory_order_relaxed);
    return p->api->set_error(err, DAL_ECONNECT,
                             "pool exhausted: no connection to datasource %s (%s) became free "
                             "within %" PRId64 " ms (pool.max_size %" PRIu32 ": %" PRIu32
                             " in use, %" PRIu32 " waiting)",
                             p->datasource, p->address, p->set.acquire_timeout_ms,
                             p->set.max_size, p->set.max_size - p->free.n - p->idle.n, p->nwait);
}

static void dequeue_locked(pool_t *p, waiter_t *w)
{
    waiter_t **pp, *prev = NULL;

    for (pp = &p->wait_head; *pp != NULL; prev = *pp, pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            if (p->wait_tail == w)
                p->wait_tail = prev;
            p->nwait--;
            return;
        }
    }
}

/* Queue behind the others and wait for a release to hand us an entry. */
static int wait_locked(pool_t *p, entry_t **out, dal_error_t *err)
{
    waiter_t w = {.granted = NULL, .next = NULL};
    struct timespec until;
    int rc = 0;

    if (p->set.acquire_timeout_ms <= 0)
        return exhausted(p, err);
    pthread_cond_init(&w.cond, &p->mono);
    if (p->wait_tail != NULL)
        p->wait_tail->next = &w;
    else
        p->wait_head = &w;
    p->wait_tail = &w;
    p->nwait++;
    deadline_after_ms(&until, p->set.acquire_timeout_ms);
    while (w.granted == NULL && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w.cond, &p->mu, &until);
    pthread_cond_destroy(&w.cond);
    if (w.granted == NULL) {
        dequeue_locked(p, &w);
        return exhausted(p, err);
    }
    *out = w.granted;
    if (w.granted->conn == NULL)
        return GOT_OPEN;
    /* just released by its last borrower: known good, no check needed */
    lend_locked(p, w.granted, now_ns());
    return GOT_READY;
}

/* An idle connection (lent at once if it needs no check), an empty entry to
 * open one in, or a place in the queue. */
static int take_locked(pool_t *p, entry_t **out, dal_error_t *err)
{
    uint64_t now;
    entry_t *e;

    if (p->wait_head == NULL && (e = list_pop(&p->idle)) != NULL) {
        *out = e;
        now = now_ns();
        if (expired(p, e, now))
            return GOT_STALE;
        if (now - e->since_ns >= p->set.validate_ns)
            return GOT_CHECK;
        lend_locked(p, e, now);
        return GOT_READY;
    }
    if ((e = list_pop(&p->free)) != NULL) {
        *out = e;
        return GOT_OPEN;
    }
    return wait_locked(p, out, err);
}

static void lend(pool_t *p, entry_t *e)
{
    pthread_mutex_lock(&p->mu);
    lend_locked(p, e, now_ns());
    pthread_mutex_unlock(&p->mu);
}

static void close_conn(pool_t *p, dal_conn_t *c)
{
    p->api->conn_close(c);
    atomic_fetch_add_explicit(&p->closed, 1, memory_order_relaxed);
}

/* Connect into the in-flight entry e.  On failure e goes back. */
static int open_into(pool_t *p, entry_t *e, dal_error_t *err)
{
    dal_conn_t *c = NULL;
    int rc = p->api->conn_open(p->host, &c, err);

    if (rc != 0) {
        pthread_mutex_lock(&p->mu);
        put_empty_locked(p, e);
        pthread_mutex_unlock(&p->mu);
        return rc;
    }
    atomic_fetch_add_explicit(&p->created, 1, memory_order_relaxed);
    e->conn = c;
    e->created_ns = now_ns();
    return 0;
}

static int pool_acquire(void *instance, dal_conn_t **conn, dal_error_t *err)
{
    pool_t *p = instance;
    entry_t *e = NULL;
    int got, rc;

    *conn = NULL;
    pthread_mutex_lock(&p->mu);
    got = take_locked(p, &e, err);
    pthread_mutex_unlock(&p->mu);
    if (got < 0)
        return got;
    if (got == GOT_CHECK && p->api->conn_ping(e->conn) == 0) {
        lend(p, e);
        got = GOT_READY;
    }
    if (got != GOT_READY) {
        /* stale, broken or missing: replace it in the same entry */
        if (e->conn != NULL) {
            p->api->log(p->host, DAL_LOG_DEBUG, "replacing a %s connection",
                        got == GOT_STALE ? "too old" : "broken");
            close_conn(p, e->conn);
            e->conn = NULL;
        }
        if ((rc = open_into(p, e, err)) != 0)
            return rc;
        lend(p, e);
    }
    *conn = e->conn;
    return 0;
}

/* ------------------------------------------------------------- release */

static entry_t *find_busy_locked(const pool_t *p, const dal_conn_t *c)
{
    entry_t *e;

    /* most recent borrows first: a statement gives back what it just took */
    for (e = p->busy.head; e != NULL && e->conn != c; e = e->next)
        ;
    return e;
}

/* Undo the borrower's session state; a connection that cannot be reset is
 * not reusable. */
static int reset_ok(pool_t *p, dal_conn_t *c)
{
    dal_error_t err;

    if (p->api->conn_reset(c, &err) == 0)
        return 1;
    p->api->log(p->host, DAL_LOG_DEBUG, "closing a connection that failed its reset: %s",
                err.message);
    return 0;
}

static void pool_release(void *instance, dal_conn_t *conn, int reusable)
{
    pool_t *p = instance;
    uint64_t now, held = 0;
    int leaked = 0, keep = 0;
    entry_t *e;

    if (conn == NULL)
        return;
    if (reusable && p->set.reset)
        reusable = reset_ok(p, conn);
    now = now_ns();
    pthread_mutex_lock(&p->mu);
    e = find_busy_locked(p, conn);
    if (e != NULL) {
        list_remove(&p->busy, e);
        held = (now - e->since_ns) / 1000000u;
        leaked = e->leak_reported;
        keep = reusable && !expired(p, e, now);
        if (keep)
            put_idle_locked(p, e, now);
        else
            put_empty_locked(p, e);
    }
    pthread_mutex_unlock(&p->mu);
    if (e == NULL)
        p->api->log(p->host, DAL_LOG_ERROR, "a connection this pool did not lend was given back; "
                    "closing it");
    if (!keep)
        close_conn(p, conn);
    if (leaked)
        p->api->log(p->host, DAL_LOG_INFO, "connection reported as leaked came back after "
                    "%" PRIu64 " ms", held);
}

/* --------------------------------------------------------------- keeper */

/* Idle connections past idle_timeout (beyond min_idle) or max_lifetime,
 * oldest first: their entries go back, their connections to p->doomed. */
static size_t evict_locked(pool_t *p, uint64_t now)
{
    const settings_t *s = &p->set;
    entry_t *e, *prev;
    size_t n = 0;

    for (e = p->idle.tail; e != NULL; e = prev) {
        int idle_long = s->idle_timeout_ns > 0 && now - e->since_ns >= s->idle_timeout_ns &&
                        p->idle.n > s->min_idle;
        prev = e->prev;
        if (!idle_long && !expired(p, e, now))
            continue;
        list_remove(&p->idle, e);
        p->doomed[n++] = e->conn;
        put_empty_locked(p, e);
    }
    return n;
}

/* Borrowed longer than leak_threshold and not reported yet. */
static size_t scan_leaks_locked(pool_t *p, uint64_t now)
{
    entry_t *e;
    size_t n = 0;

    if (p->set.leak_ns == 0)
        return 0;
    for (e = p->busy.head; e != NULL; e = e->next) {
        if (e->leak_reported || now - e->since_ns < p->set.leak_ns)
            continue;
        e->leak_reported = 1;
        p->reports[n].held_ms = (now - e->since_ns) / 1000000u;
        memcpy(p->reports[n].taken_by, e->taken_by, sizeof e->taken_by);
        n++;
    }
    return n;
}

static void report_leaks(pool_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        p->api->log(p->host, DAL_LOG_WARN,
                    "possible connection leak: a connection to datasource %s (%s) has been "
                    "borrowed for %" PRIu64 " ms (pool.leak_threshold %" PRIu64 " ms); "
                    "taken by: %s",
                    p->datasource, p->address, p->reports[i].held_ms,
                    p->set.leak_ns / 1000000u,
                    p->reports[i].taken_by[0] ? p->reports[i].taken_by : "(statement unknown)");
}

/* Open one connection for min_idle; 0 when there is nothing more to do. */
static int fill_one(pool_t *p)
{
    dal_error_t err;
    entry_t *e = NULL;

    pthread_mutex_lock(&p->mu);
    if (!p->stop && p->idle.n < p->set.min_idle)
        e = list_pop(&p->free);
    pthread_mutex_unlock(&p->mu);
    if (e == NULL)
        return 0;
    if (open_into(p, e, &err) != 0) {
        /* say it once, not every round while the server is down */
        p->api->log(p->host, p->fill_failing ? DAL_LOG_DEBUG : DAL_LOG_WARN,
                    "cannot open connections for pool.min_idle: %s", err.message);
        p->fill_failing = 1;
        return 0;
    }
    p->fill_failing = 0;
    pthread_mutex_lock(&p->mu);
    put_idle_locked(p, e, now_ns());
    pthread_mutex_unlock(&p->mu);
    return 1;
}

static void housekeep(pool_t *p)
{
    uint64_t now = now_ns();
    size_t ndoomed, nleaks, i;

    pthread_mutex_lock(&p->mu);
    ndoomed = evict_locked(p, now);
    nleaks = scan_leaks_locked(p, now);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < ndoomed; i++)
        close_conn(p, p->doomed[i]);
    report_leaks(p, nleaks);
    while (fill_one(p))
        ;
}

static int64_t keeper_period_ms(const settings_t *s)
{
    int64_t ms = KEEPER_MAX_MS;

    /* a leak is reported within half a threshold of crossing it */
    if (s->leak_ns > 0 && (int64_t)(s->leak_ns / 2000000u) < ms)
        ms = (int64_t)(s->leak_ns / 2000000u);
    return ms < KEEPER_MIN_MS ? KEEPER_MIN_MS : ms;
}

static void *keeper_main(void *arg)
{
    pool_t *p = arg;
    int64_t period = keeper_period_ms(&p->set);
    struct timespec until;

    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        pthread_mutex_unlock(&p->mu);
        housekeep(p);
        deadline_after_ms(&until, period);
        pthread_mutex_lock(&p->mu);
        while (!p->stop && pthread_cond_timedwait(&p->keeper_cond, &p->mu, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ------------------------------------------------------- create / destroy */

static int read_settings(const dal_host_api_t *api, const dal_plugin_params_t *pp,
                         settings_t *s, dal_error_t *err)
{
    int64_t max_size = api->param_int(pp, "max_size");
    int64_t min_idle = api->param_int(pp, "min_idle");

    if (max_size < 1 || max_size > MAX_SIZE_LIMIT)
        return api->set_error(err, DAL_ECONFIG, "pool.max_size must be 1 to %d, not %" PRId64,
                              MAX_SIZE_LIMIT, max_size);
    if (min_idle < 0 || min_idle > max_size)
        return api->set_error(err, DAL_ECONFIG,
                              "pool.min_idle must be 0 to pool.max_size (%" PRId64 "), not %" PRId64,
                              max_size, min_idle);
    s->max_size = (uint32_t)max_size;
    s->min_idle = (uint32_t)min_idle;
    s->acquire_timeout_ms = api->param_duration_ms(pp, "acquire_timeout");
    s->max_lifetime_ns = (uint64_t)api->param_duration_ms(pp, "max_lifetime") * 1000000u;
    s->idle_timeout_ns = (uint64_t)api->param_duration_ms(pp, "idle_timeout") * 1000000u;
    s->validate_ns = (uint64_t)api->param_duration_ms(pp, "validation_interval") * 1000000u;
    s->leak_ns = (uint64_t)api->param_duration_ms(pp, "leak_threshold") * 1000000u;
    s->reset = api->param_bool(pp, "reset");
    return 0;
}

static void pool_free(pool_t *p)
{
    entry_t *e;

    while ((e = list_pop(&p->idle)) != NULL)
        close_conn(p, e->conn);
    pthread_cond_destroy(&p->keeper_cond);
    pthread_condattr_destroy(&p->mono);
    pthread_mutex_destroy(&p->mu);
    free(p->slots);
    free(p->doomed);
    free(p->reports);
    free(p->datasource);
    free(p->address);
    free(p);
}

static int alloc_pool(const dal_host_api_t *api, const dal_pool_server_t *server,
                      const settings_t *s, pool_t **out, dal_error_t *err)
{
    pool_t *p = calloc(1, sizeof *p);
    uint32_t i;

    *out = p;
    if (p == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    p->api = api;
    p->set = *s;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_init(&p->mono);
    pthread_condattr_setclock(&p->mono, CLOCK_MONOTONIC);
    pthread_cond_init(&p->keeper_cond, &p->mono);
    p->slots = calloc(s->max_size, sizeof *p->slots);
    p->doomed = calloc(s->max_size, sizeof *p->doomed);
    p->reports = s->leak_ns > 0 ? calloc(s->max_size, sizeof *p->reports) : NULL;
    p->datasource = strdup(server->datasource ? server->datasource : "?");
    p->address = strdup(server->address ? server->address : "?");
    if (p->slots == NULL || p->doomed == NULL || (s->leak_ns > 0 && p->reports == NULL) ||
        p->datasource == NULL || p->address == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < s->max_size; i++)
        list_push_front(&p->free, &p->slots[i]);
    return 0;
}

static int pool_create(const dal_host_api_t *api, dal_host_t *host,
                       const dal_pool_server_t *server, const dal_plugin_params_t *params,
                       void **instance, dal_error_t *err)
{
    settings_t s;
    pool_t *p = NULL;
    int rc;

    *instance = NULL;
    if ((rc = read_settings(api, params, &s, err)) != 0)
        return rc;
    if ((rc = alloc_pool(api, server, &s, &p, err)) != 0)
        goto fail;
    p->host = host;
    rc = dal_plugin_thread_create(api, &p->keeper, keeper_main, p);
    if (rc != 0) {
        rc = api->set_error(err, DAL_ENOMEM, "cannot start the pool's keeper thread: %s",
                            strerror(rc));
        goto fail;
    }
    p->keeper_started = 1;
    api->log(host, DAL_LOG_DEBUG, "pool for %s (%s): max_size %" PRIu32 ", min_idle %" PRIu32,
             p->datasource, p->address, s.max_size, s.min_idle);
    *instance = p;
    return 0;
fail:
    if (p != NULL)
        pool_free(p);
    return rc;
}

static void pool_destroy(void *instance)
{
    pool_t *p = instance;

    if (p == NULL)
        return;
    if (p->keeper_started) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_signal(&p->keeper_cond);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->keeper, NULL);
    }
    if (p->busy.n > 0)
        p->api->log(p->host, DAL_LOG_ERROR,
                    "pool destroyed with %" PRIu32 " connections still borrowed; they are "
                    "not closed", p->busy.n);
    pool_free(p);
}

static void pool_stats(void *instance, dal_pool_stats_t *out)
{
    pool_t *p = instance;

    pthread_mutex_lock(&p->mu);
    out->in_use = p->set.max_size - p->free.n - p->idle.n;
    out->idle = p->idle.n;
    out->waiting = p->nwait;
    pthread_mutex_unlock(&p->mu);
    out->created = atomic_load_explicit(&p->created, memory_order_relaxed);
    out->closed = atomic_load_explicit(&p->closed, memory_order_relaxed);
    out->timed_out = atomic_load_explicit(&p->timed_out, memory_order_relaxed);
}

static const dal_param_spec_t pool_params[] = {
    {"max_size", DAL_PARAM_INT, 0, "10", "most connections to the server, in use and idle"},
    {"min_idle", DAL_PARAM_INT, 0, "0", "idle connections kept open in advance"},
    {"acquire_timeout", DAL_PARAM_DURATION, 0, "5s",
     "how long a statement waits for a connection before 'pool exhausted' (0: no wait)"},
    {"max_lifetime", DAL_PARAM_DURATION, 0, "30m",
     "connections older than this are closed when idle (0: no limit)"},
    {"idle_timeout", DAL_PARAM_DURATION, 0, "10m",
     "idle connections beyond min_idle are closed after this (0: never)"},
    {"validation_interval", DAL_PARAM_DURATION, 0, "500ms",
     "a connection idle at least this long is pinged before reuse (0: always)"},
    {"leak_threshold", DAL_PARAM_DURATION, 0, "0",
     "report a connection borrowed longer than this, with its statement (0: off)"},
    {"reset", DAL_PARAM_BOOL, 0, "true",
     "undo the borrower's session state (transaction, variables, temporary tables) on return"},
    {NULL, 0, 0, NULL, NULL}
};

static const dal_pool_ops_t pool_ops = {
    sizeof(dal_pool_ops_t),
    pool_create,
    pool_destroy,
    pool_acquire,
    pool_release,
    pool_stats
};

static const dal_plugin_t pool_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_POOL,
    "default",
    DAL_VERSION_STRING,
    "thread-safe pool per server: size limit, bounded wait, ageing, validation, reset, "
    "leak reports",
    pool_params,
    &pool_ops
};

DAL_PLUGIN_DECLARE(pool_plugin)
