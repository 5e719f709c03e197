/*
 * monitor_prometheus.c -- metrics in the Prometheus text format, served on
 * GET /metrics from the plugin's own thread.
 *
 * on_event runs on the statement's thread and must never block, so events
 * are aggregated in place: each label combination is one "series" in a
 * fixed-size open-addressing table whose slots are filled with a
 * compare-and-swap and never emptied, and every figure is an atomic counter
 * bumped with a relaxed add.  No lock is taken on the event path; a new
 * label combination costs one malloc, and when the table is full the event
 * is counted in dal_monitor_dropped_series_total instead.  The HTTP thread
 * reads the same atomics to render a scrape.
 *
 * The exporter (socket, thread, table) is shared by every instance with the
 * same address, in this .so's static state: a configuration reload creates
 * the new snapshot's instance while the old one still lives, and the two
 * must not fight over the port, nor should counters start again from zero.
 * The shared state goes away with the last instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <dal/plugin.h>

#define SLOTS 4096                      /* power of two */
#define MAX_SERIES (SLOTS / 4 * 3)      /* keep probes short */
#define LABEL_MAX 128                   /* longer label values are cut */
#define NLABELS 3
#define NBUCKETS 16
#define HIST_VALUES (NBUCKETS + 2)      /* buckets, +Inf overflow, sum in ns */
#define SUM_INDEX (NBUCKETS + 1)
#define REQUEST_MAX 8192
#define IO_TIMEOUT_S 2                  /* a stalled scraper cannot hold the thread longer */

/* Latency buckets: 100 us to 10 s, in ns and as the le="" text. */
static const uint64_t bucket_ns[NBUCKETS] = {
    100000u, 250000u, 500000u, 1000000u, 2500000u, 5000000u, 10000000u, 25000000u,
    50000000u, 100000000u, 250000000u, 500000000u, 1000000000u, 2500000000u,
    5000000000u, 10000000000u};
static const char *const bucket_le[NBUCKETS] = {
    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
    "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"};

/* ------------------------------------------------------------- series */

/* What a series is keyed by and holds. */
typedef enum group {
    G_STMT, G_STMT_ERR, G_EXEC, G_EXEC_ERR, G_ROUTE, G_POOL, G_IDGEN, G_RELOAD, G_PIN, G_CLIENT,
    G_SPREP, G_SOURCE, G_TXN, G_XA, G_XA_DOUBT, G_SQL_CACHE, G_META,
    NGROUPS
} group_t;

/* Pool figures as DAL_EVENT_POOL names them (ev->kind), in value order. */
static const char *const pool_figures[] = {"in_use", "idle", "waiting", "created", "closed",
                                           "timed_out"};
#define NFIGURES (sizeof pool_figures / sizeof pool_figures[0])

/* Client figures as DAL_EVENT_CLIENT names them, in value order. */
static const char *const client_figures[] = {"connected", "accepted", "refused", "auth_failed"};
#define NCLIENT (sizeof client_figures / sizeof client_figures[0])

/* Server-side prepared statement figures as DAL_EVENT_SPREP names them. */
static const char *const sprep_figures[] = {"prepare", "execute", "reprepare", "evict",
                                            "fallback"};
#define NSPREP (sizeof sprep_figures / sizeof sprep_figures[0])

/* Analysis cache figures as DAL_EVENT_SQL_CACHE names them. */
static const char *const sql_cache_figures[] = {"entries", "bytes", "max_bytes", "evictions",
                                                "uncached", "hits", "misses"};
#define NSQLCACHE (sizeof sql_cache_figures / sizeof sql_cache_figures[0])

typedef struct group_def {
    const char *labels[NLABELS];
    size_t nvalues;
} group_def_t;

static const group_def_t groups[NGROUPS] = {
    [G_STMT] = {{"kind", "table", NULL}, HIST_VALUES},
    [G_STMT_ERR] = {{"kind", "code", NULL}, 1},
    [G_EXEC] = {{"datasource", "server", NULL}, HIST_VALUES},
    [G_EXEC_ERR] = {{"datasource", "server", "mysql_errno"}, 1},
    [G_ROUTE] = {{"datasource", "role", NULL}, 1},
    [G_POOL] = {{"datasource", "server", NULL}, NFIGURES},
    [G_IDGEN] = {{"generator", NULL, NULL}, 2},   /* segments fetched, fetches failed */
    [G_RELOAD] = {{NULL, NULL, NULL}, 2},         /* reloads attempted, failed */
    [G_PIN] = {{"datasource", "state", NULL}, 1}, /* connections pinned to sessions */
    [G_CLIENT] = {{NULL, NULL, NULL}, NCLIENT},
    [G_SPREP] = {{"datasource", "server", NULL}, NSPREP},
    [G_TXN] = {{"mode", "outcome", NULL}, 1},     /* multi and xa transactions ended */
    [G_XA] = {{"action", NULL, NULL}, 1},         /* branches recovery finished, decisions pruned */
    [G_XA_DOUBT] = {{NULL, NULL, NULL}, 1},       /* branches in doubt after the last pass */
    [G_SQL_CACHE] = {{NULL, NULL, NULL}, NSQLCACHE},
    [G_META] = {{NULL, NULL, NULL}, 1},           /* events dropped: table full */
    [G_SOURCE] = {{NULL, NULL, NULL}, 2},         /* source unreachable (0/1), revision */
};

typedef struct series {
    group_t group;
    uint32_t hash;
    unsigned char len[NLABELS];       /* of each value */
    char label[NLABELS][LABEL_MAX];   /* values, cut to LABEL_MAX-1 bytes */
    _Atomic uint64_t v[];             /* groups[group].nvalues */
} series_t;

typedef struct registry {
    uint64_t id;                      /* unique in the process, unlike the address */
    _Atomic(series_t *) slots[SLOTS];
    atomic_uint nseries;
    series_t *meta;                   /* the G_META series, made at start */
} registry_t;

/* The label values as they will be stored: cut to LABEL_MAX-1 bytes. */
static void label_lens(const char *const lv[NLABELS], size_t len[NLABELS])
{
    size_t k;

    for (k = 0; k < NLABELS; k++)
        len[k] = strnlen(lv[k], LABEL_MAX - 1);
}

/* A hash of the group and the (cut) label values, eight bytes at a time:
 * every statement looks up three series, so this is on the statement
 * path.  The length goes in with each value: ("ab","") differs from
 * ("a","b"). */
static uint32_t series_hash(group_t g, const char *const lv[NLABELS], const size_t len[NLABELS])
{
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t h = m ^ (uint64_t)g, w;
    size_t k, i;

    for (k = 0; k < NLABELS; k++) {
        for (i = 0; i + 8 <= len[k]; i += 8) {
            memcpy(&w, lv[k] + i, 8);
            h = (h ^ w) * m;
            h ^= h >> 32;
        }
        w = 0;
        memcpy(&w, lv[k] + i, len[k] - i);
        h = (h ^ w ^ (uint64_t)len[k] << 56) * m;
        h ^= h >> 29;
    }
    return (uint32_t)(h ^ h >> 32);
}

static int series_is(const series_t *s, group_t g, uint32_t h, const char *const lv[NLABELS],
                     const size_t len[NLABELS])
{
    size_t k;

    if (s->group != g || s->hash != h)
        return 0;
    for (k = 0; k < NLABELS; k++)
        if (s->len[k] != len[k] || memcmp(s->label[k], lv[k], len[k]) != 0)
            return 0;
    return 1;
}

static series_t *series_new(registry_t *r, group_t g, uint32_t h, const char *const lv[NLABELS],
                            const size_t len[NLABELS])
{
    size_t k, nv = groups[g].nvalues;
    series_t *s;

    if (atomic_fetch_add_explicit(&r->nseries, 1, memory_order_relaxed) >= MAX_SERIES) {
        atomic_fetch_sub_explicit(&r->nseries, 1, memory_order_relaxed);
        return NULL;
    }
    s = calloc(1, sizeof *s + nv * sizeof s->v[0]);
    if (s == NULL) {
        atomic_fetch_sub_explicit(&r->nseries, 1, memory_order_relaxed);
        return NULL;
    }
    s->group = g;
    s->hash = h;
    for (k = 0; k < NLABELS; k++) {
        memcpy(s->label[k], lv[k], len[k]);
        s->label[k][len[k]] = '\0';
        s->len[k] = (unsigned char)len[k];
    }
    return s;
}

static void series_discard(registry_t *r, series_t *s)
{
    if (s == NULL)
        return;
    free(s);
    atomic_fetch_sub_explicit(&r->nseries, 1, memory_order_relaxed);
}

/*
 * The series of g with these label values, made on first use.  Lock-free:
 * an empty slot is claimed with a CAS; a thread that loses the race to the
 * same key frees its copy and uses the winner's.  NULL when the table is
 * full (counted as dropped).
 */
static series_t *series_get(registry_t *r, group_t g, const char *a, const char *b,
                            const char *c)
{
    const char *const lv[NLABELS] = {a ? a : "", b ? b : "", c ? c : ""};
    size_t len[NLABELS];
    uint32_t h;
    series_t *fresh = NULL, *s;
    size_t i, probes;

    label_lens(lv, len);
    h = series_hash(g, lv, len);
    for (i = h & (SLOTS - 1), probes = 0; probes < SLOTS; i = (i + 1) & (SLOTS - 1), probes++) {
        s = atomic_load_explicit(&r->slots[i], memory_order_acquire);
        if (s == NULL) {
            if (fresh == NULL && (fresh = series_new(r, g, h, lv, len)) == NULL)
                break;
            if (atomic_compare_exchange_strong_explicit(&r->slots[i], &s, fresh,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire))
                return fresh;
            /* lost the slot: s is now the winner, which may be our key */
        }
        if (series_is(s, g, h, lv, len)) {
            series_discard(r, fresh);
            return s;
        }
    }
    series_discard(r, fresh);
    if (r->meta != NULL)
        atomic_fetch_add_explicit(&r->meta->v[0], 1, memory_order_relaxed);
    return NULL;
}

/*
 * What each thread looked up last, by label pointers: the statement path
 * asks for the same three series (statement, execution, route) over and
 * over, and hashing and comparing their label texts was most of what a
 * monitored statement cost here.  Used only for events whose labels_gen
 * vouches that equal pointers are equal texts (dal/plugin.h); the registry
 * id keeps a destroyed registry's series from being found again.
 */
#define MEMO_SETS 32                    /* power of two; two entries each */

typedef struct memo {
    uint64_t registry;
    uint32_t gen;
    group_t group;
    const char *a, *b;
    series_t *s;                        /* NULL: empty */
} memo_t;

static _Thread_local memo_t memo[MEMO_SETS][2];

/* A registry's id: unique in the process even across an unload and a
 * reload of this .so (which would start a counter at 0 again while a
 * thread's memo may survive), since the monotonic clock only moves on. */
static uint64_t registry_id(const dal_host_api_t *api)
{
    static atomic_uint_fast64_t last;
    uint_fast64_t now = api->now_ns(), prev = atomic_load(&last), next;

    do
        next = now > prev ? now : prev + 1;
    while (!atomic_compare_exchange_weak(&last, &prev, next));
    return next;
}

static int memo_is(const memo_t *m, const registry_t *r, uint32_t gen, group_t g, const char *a,
                   const char *b)
{
    return m->s != NULL && m->registry == r->id && m->gen == gen && m->group == g &&
           m->a == a && m->b == b;
}

static series_t *series_of(registry_t *r, const dal_event_t *ev, group_t g, const char *a,
                           const char *b)
{
    uint32_t gen = DAL_HAS_FIELD(dal_event_t, ev, labels_gen) ? ev->labels_gen : 0;
    uint64_t h;
    memo_t *set;
    series_t *s;

    if (gen == 0)
        return series_get(r, g, a, b, NULL);
    h = ((uint64_t)(uintptr_t)a ^ (uint64_t)(uintptr_t)b << 1 ^ (uint64_t)g) *
        0x9e3779b97f4a7c15ull;
    set = memo[h >> 59 & (MEMO_SETS - 1)];
    if (memo_is(&set[0], r, gen, g, a, b))
        return set[0].s;
    if (memo_is(&set[1], r, gen, g, a, b))
        return set[1].s;
    s = series_get(r, g, a, b, NULL);
    if (s != NULL) {
        /* the older entry goes */
        set[1] = set[0];
        set[0] = (memo_t){r->id, gen, g, a, b, s};
    }
    return s;
}

static void add(series_t *s, size_t idx, uint64_t n)
{
    if (s != NULL)
        atomic_fetch_add_explicit(&s->v[idx], n, memory_order_relaxed);
}

static void observe(series_t *s, uint64_t ns)
{
    size_t b = 0;

    if (s == NULL)
        return;
    while (b < NBUCKETS && ns > bucket_ns[b])
        b++;
    add(s, b, 1);
    add(s, SUM_INDEX, ns);
}

static void registry_free(registry_t *r)
{
    size_t i;

    for (i = 0; i < SLOTS; i++)
        free(atomic_load_explicit(&r->slots[i], memory_order_relaxed));
}

/* ------------------------------------------------------------- events */

/* The public DAL_E* codes of dal/dal.h by name, for readable labels. */
static const char *const code_names[] = {
    "OK", "DAL_EINVAL", "DAL_ENOMEM", "DAL_ECONFIG", "DAL_EPLUGIN", "DAL_ESQL", "DAL_EROUTE",
    "DAL_ESHARD", "DAL_ECONNECT", "DAL_ESERVER", "DAL_EUNSUPPORTED", "DAL_ESTATE", "DAL_EIO"};

static const char *code_name(int code)
{
    size_t n = sizeof code_names / sizeof code_names[0];

    return code <= 0 && (size_t)-code < n ? code_names[-code] : "other";
}

static void on_statement(registry_t *r, const dal_event_t *ev)
{
    observe(series_of(r, ev, G_STMT, ev->kind, ev->table), ev->latency_ns);
    if (ev->error_code != 0)
        add(series_get(r, G_STMT_ERR, ev->kind, code_name(ev->error_code), NULL), 0, 1);
}

static void on_execution(registry_t *r, const dal_event_t *ev)
{
    char errno_text[16];

    observe(series_of(r, ev, G_EXEC, ev->datasource, ev->server), ev->latency_ns);
    if (ev->error_code == 0 && ev->mysql_errno == 0)
        return;
    snprintf(errno_text, sizeof errno_text, "%u", ev->mysql_errno);
    add(series_get(r, G_EXEC_ERR, ev->datasource, ev->server, errno_text), 0, 1);
}

/* Pool figures are absolute (a gauge, or a pool's own running total). */
static void on_pool(registry_t *r, const dal_event_t *ev)
{
    series_t *s;
    size_t i;

    for (i = 0; i < NFIGURES; i++)
        if (ev->kind != NULL && strcmp(ev->kind, pool_figures[i]) == 0)
            break;
    if (i == NFIGURES || (s = series_of(r, ev, G_POOL, ev->datasource, ev->server)) == NULL)
        return;
    atomic_store_explicit(&s->v[i], ev->rows, memory_order_relaxed);
}

/* Client figures are absolute, as pool figures. */
static void on_client(registry_t *r, const dal_event_t *ev)
{
    series_t *s;
    size_t i;

    for (i = 0; i < NCLIENT; i++)
        if (ev->kind != NULL && strcmp(ev->kind, client_figures[i]) == 0)
            break;
    if (i == NCLIENT || (s = series_get(r, G_CLIENT, NULL, NULL, NULL)) == NULL)
        return;
    atomic_store_explicit(&s->v[i], ev->rows, memory_order_relaxed);
}

/* The analysis cache's figures are absolute, as the clients'. */
static void on_sql_cache(registry_t *r, const dal_event_t *ev)
{
    series_t *s;
    size_t i;

    for (i = 0; i < NSQLCACHE; i++)
        if (ev->kind != NULL && strcmp(ev->kind, sql_cache_figures[i]) == 0)
            break;
    if (i == NSQLCACHE || (s = series_get(r, G_SQL_CACHE, NULL, NULL, NULL)) == NULL)
        return;
    atomic_store_explicit(&s->v[i], ev->rows, memory_order_relaxed);
}

/* Counted by kind.  The labels point into the configuration of the
 * connection (labels_gen 0), so series_of compares their text. */
static void on_sprep(registry_t *r, const dal_event_t *ev)
{
    size_t i;

    for (i = 0; i < NSPREP; i++)
        if (ev->kind != NULL && strcmp(ev->kind, sprep_figures[i]) == 0)
            break;
    if (i < NSPREP)
        add(series_of(r, ev, G_SPREP, ev->datasource, ev->server), i, 1);
}

/* A recovery pass: its actions add up, its in-doubt figure replaces the
 * last one. */
static void on_xa_recovery(registry_t *r, const dal_event_t *ev)
{
    series_t *s;

    if (ev->kind != NULL && strcmp(ev->kind, "in_doubt") == 0) {
        if ((s = series_get(r, G_XA_DOUBT, NULL, NULL, NULL)) != NULL)
            atomic_store_explicit(&s->v[0], ev->rows, memory_order_relaxed);
        return;
    }
    add(series_get(r, G_XA, ev->kind, NULL, NULL), 0, ev->rows);
}

/* Every attempt counts as a reload; a failed one counts as a failure too. */
static void on_reload(registry_t *r, const dal_event_t *ev)
{
    series_t *s = series_get(r, G_RELOAD, NULL, NULL, NULL);

    add(s, 0, 1);
    if (ev->error_code != 0)
        add(s, 1, 1);
}

/* The configuration source's state and revision are gauges. */
static void on_source(registry_t *r, const dal_event_t *ev)
{
    series_t *s = series_get(r, G_SOURCE, NULL, NULL, NULL);

    if (s == NULL)
        return;
    atomic_store_explicit(&s->v[0], ev->kind != NULL && strcmp(ev->kind, "ok") != 0,
                          memory_order_relaxed);
    atomic_store_explicit(&s->v[1], ev->rows, memory_order_relaxed);
}

static void registry_event(registry_t *r, const dal_event_t *ev)
{
    switch (ev->type) {
    case DAL_EVENT_STATEMENT:
        on_statement(r, ev);
        break;
    case DAL_EVENT_EXECUTION:
        on_execution(r, ev);
        break;
    case DAL_EVENT_ROUTE:
        add(series_of(r, ev, G_ROUTE, ev->datasource, ev->kind), 0, 1);
        break;
    case DAL_EVENT_POOL:
        on_pool(r, ev);
        break;
    case DAL_EVENT_RELOAD:
        on_reload(r, ev);
        break;
    case DAL_EVENT_IDGEN:
        add(series_get(r, G_IDGEN, ev->table, NULL, NULL), ev->error_code != 0, 1);
        break;
    case DAL_EVENT_PIN:
        add(series_get(r, G_PIN, ev->datasource, ev->kind, NULL), 0, 1);
        break;
    case DAL_EVENT_CLIENT:
        on_client(r, ev);
        break;
    case DAL_EVENT_SOURCE:
        on_source(r, ev);
        break;
    case DAL_EVENT_SPREP:
        on_sprep(r, ev);
        break;
    case DAL_EVENT_TXN:
        add(series_get(r, G_TXN, ev->table, ev->kind, NULL), 0, 1);
        break;
    case DAL_EVENT_XA_RECOVERY:
        on_xa_recovery(r, ev);
        break;
    case DAL_EVENT_SQL_CACHE:
        on_sql_cache(r, ev);
        break;
    default:
        break; /* a type from a newer host */
    }
}

/* ---------------------------------------------------------- rendering */

typedef struct text {
    char *buf;
    size_t len, cap;
    int oom;
} text_t;

static void text_printf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_printf(text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        if (t->oom)
            return;
        va_start(ap, fmt);
        n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = 1;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 16384) + (size_t)n;
        char *nb = realloc(t->buf, cap);
        if (nb == NULL) {
            t->oom = 1;
            return;
        }
        t->buf = nb;
        t->cap = cap;
    }
}

/* A label value with \ " and newline escaped, as the format requires. */
static void put_escaped(text_t *t, const char *v)
{
    char buf[2 * LABEL_MAX];
    size_t n = 0;

    for (; *v; v++) {
        if (*v == '\\' || *v == '"' || *v == '\n')
            buf[n++] = '\\';
        buf[n++] = *v == '\n' ? 'n' : *v;
    }
    buf[n] = '\0';
    text_printf(t, "%s", buf);
}

/* {a="x",b="y"[,extra]} or nothing; extra is a ready name="value" pair. */
static void put_labels(text_t *t, const series_t *s, const char *extra)
{
    const group_def_t *g = &groups[s->group];
    size_t k;
    int any = 0;

    for (k = 0; k < NLABELS && g->labels[k]; k++) {
        text_printf(t, "%s%s=\"", any ? "," : "{", g->labels[k]);
        put_escaped(t, s->label[k]);
        text_printf(t, "\"");
        any = 1;
    }
    if (extra != NULL) {
        text_printf(t, "%s%s", any ? "," : "{", extra);
        any = 1;
    }
    if (any)
        text_printf(t, "}");
}

static uint64_t get(const series_t *s, size_t i)
{
    return atomic_load_explicit(&((series_t *)s)->v[i], memory_order_relaxed);
}

static uint64_t hist_count(const series_t *s)
{
    uint64_t n = 0;
    size_t b;

    for (b = 0; b <= NBUCKETS; b++)
        n += get(s, b);
    return n;
}

/* How a family is drawn from its group's series. */
typedef enum shape { VALUE, COUNT, HISTOGRAM, STATES } shape_t;

typedef struct family {
    const char *name, *type, *help;
    group_t group;
    shape_t shape;
    size_t idx; /* VALUE: which value */
} family_t;

static const family_t families[] = {
    {"dal_statements_total", "counter", "Logical statements run, by statement kind and logical table.", G_STMT, COUNT, 0},
    {"dal_statement_duration_seconds", "histogram", "Latency of logical statements.", G_STMT, HISTOGRAM, 0},
    {"dal_statement_errors_total", "counter", "Logical statements that failed, by kind and dal error code.", G_STMT_ERR, VALUE, 0},
    {"dal_executions_total", "counter", "Physical executions, by datasource node and server.", G_EXEC, COUNT, 0},
    {"dal_execution_duration_seconds", "histogram", "Latency of physical executions.", G_EXEC, HISTOGRAM, 0},
    {"dal_execution_errors_total", "counter", "Physical executions that failed, by server error number (0: not a server error).", G_EXEC_ERR, VALUE, 0},
    {"dal_routes_total", "counter", "Routing decisions, by datasource node and the role of the server chosen (master or replica).", G_ROUTE, VALUE, 0},
    {"dal_pool_connections", "gauge", "Pooled connections by state (in_use or idle).", G_POOL, STATES, 0},
    {"dal_pool_waiting", "gauge", "Statements waiting for a pooled connection.", G_POOL, VALUE, 2},
    {"dal_pool_connections_created_total", "counter", "Connections the pool opened.", G_POOL, VALUE, 3},
    {"dal_pool_connections_closed_total", "counter", "Connections the pool closed.", G_POOL, VALUE, 4},
    {"dal_pool_acquire_timeouts_total", "counter", "Waits for a connection that ended with pool exhausted.", G_POOL, VALUE, 5},
    {"dal_id_segments_total", "counter", "ID segments fetched by ID generators.", G_IDGEN, VALUE, 0},
    {"dal_id_segment_errors_total", "counter", "ID segment fetches that failed.", G_IDGEN, VALUE, 1},
    {"dal_config_reloads_total", "counter", "Configuration reloads attempted.", G_RELOAD, VALUE, 0},
    {"dal_config_reload_failures_total", "counter", "Configuration reloads that failed (the old configuration stays).", G_RELOAD, VALUE, 1},
    {"dal_session_pins_total", "counter", "Connections pinned to a session to keep its server state, by datasource and the state that pinned it (user_variable, temporary_table, table_lock, named_lock, prepare, handler).", G_PIN, VALUE, 0},
    {"dal_proxy_client_connections", "gauge", "Client connections dal-proxy serves now.", G_CLIENT, VALUE, 0},
    {"dal_proxy_client_connections_accepted_total", "counter", "Client connections dal-proxy accepted.", G_CLIENT, VALUE, 1},
    {"dal_proxy_client_connections_refused_total", "counter", "Client connections refused by max_connections (error 1040).", G_CLIENT, VALUE, 2},
    {"dal_proxy_client_auth_failures_total", "counter", "Logins refused for a wrong user or password (error 1045).", G_CLIENT, VALUE, 3},
    {"dal_config_source_unreachable", "gauge", "1 while no endpoint of the configuration store answers (the last good configuration keeps serving), else 0.", G_SOURCE, VALUE, 0},
    {"dal_config_revision", "gauge", "The configuration store's revision of the configuration in force.", G_SOURCE, VALUE, 1},
    {"dal_server_prepares_total", "counter", "Statements prepared on backend connections (server_prepare = auto).", G_SPREP, VALUE, 0},
    {"dal_server_prepared_executions_total", "counter", "Executions of server-side prepared statements.", G_SPREP, VALUE, 1},
    {"dal_server_reprepares_total", "counter", "Prepared statements prepared again after the server asked (ER_NEED_REPREPARE after DDL).", G_SPREP, VALUE, 2},
    {"dal_server_prepare_evictions_total", "counter", "Prepared statements closed because their connection's cache (server_prepare_cache) was full.", G_SPREP, VALUE, 3},
    {"dal_server_prepare_fallbacks_total", "counter", "Statements meant to run prepared that ran as text (the server refused to prepare them, max_prepared_stmt_count, ...).", G_SPREP, VALUE, 4},
    {"dal_transactions_total", "counter", "Transactions over several nodes (transaction_mode multi or xa) that touched a node, by mode and outcome (committed, rolled_back, partial, failed, in_doubt).", G_TXN, VALUE, 0},
    {"dal_xa_recovery_branches_total", "counter", "What XA recovery did, by action: branches committed, rolled_back or failed (tried again next pass), decisions pruned.", G_XA, VALUE, 0},
    {"dal_xa_in_doubt_branches", "gauge", "XA branches left prepared after the last recovery pass of this instance (waiting for xa_grace, or failed).", G_XA_DOUBT, VALUE, 0},
    {"dal_sql_cache_entries", "gauge", "Analysed statements the SQL analysis cache holds.", G_SQL_CACHE, VALUE, 0},
    {"dal_sql_cache_bytes", "gauge", "Bytes the SQL analysis cache holds (each analysis with its text, plus the text's length for its normalised form).", G_SQL_CACHE, VALUE, 1},
    {"dal_sql_cache_max_bytes", "gauge", "The bound on dal_sql_cache_bytes ([dal] sql_cache_bytes).", G_SQL_CACHE, VALUE, 2},
    {"dal_sql_cache_evictions_total", "counter", "Analyses the cache let go to make room.", G_SQL_CACHE, VALUE, 3},
    {"dal_sql_cache_uncached_total", "counter", "Statements analysed but not kept (longer than [dal] sql_cache_max_statement).", G_SQL_CACHE, VALUE, 4},
    {"dal_sql_cache_hits_total", "counter", "Lookups the shared analysis cache answered.", G_SQL_CACHE, VALUE, 5},
    {"dal_sql_cache_misses_total", "counter", "Lookups the shared analysis cache did not answer (the statement was analysed).", G_SQL_CACHE, VALUE, 6},
    {"dal_monitor_dropped_series_total", "counter", "Events not counted because the metrics table was full.", G_META, VALUE, 0},
};

static void put_histogram(text_t *t, const family_t *f, const series_t *s)
{
    char le[32];
    uint64_t cum = 0;
    size_t b;

    for (b = 0; b < NBUCKETS; b++) {
        cum += get(s, b);
        snprintf(le, sizeof le, "le=\"%s\"", bucket_le[b]);
        text_printf(t, "%s_bucket", f->name);
        put_labels(t, s, le);
        text_printf(t, " %" PRIu64 "\n", cum);
    }
    cum += get(s, NBUCKETS);
    text_printf(t, "%s_bucket", f->name);
    put_labels(t, s, "le=\"+Inf\"");
    text_printf(t, " %" PRIu64 "\n%s_sum", cum, f->name);
    put_labels(t, s, NULL);
    text_printf(t, " %.9f\n%s_count", (double)get(s, SUM_INDEX) / 1e9, f->name);
    put_labels(t, s, NULL);
    text_printf(t, " %" PRIu64 "\n", cum);
}

static void put_series(text_t *t, const family_t *f, const series_t *s)
{
    switch (f->shape) {
    case HISTOGRAM:
        put_histogram(t, f, s);
        return;
    case STATES:
        text_printf(t, "%s", f->name);
        put_labels(t, s, "state=\"in_use\"");
        text_printf(t, " %" PRIu64 "\n%s", get(s, 0), f->name);
        put_labels(t, s, "state=\"idle\"");
        text_printf(t, " %" PRIu64 "\n", get(s, 1));
        return;
    case COUNT:
    case VALUE:
        text_printf(t, "%s", f->name);
        put_labels(t, s, NULL);
        text_printf(t, " %" PRIu64 "\n", f->shape == COUNT ? hist_count(s) : get(s, f->idx));
        return;
    }
}

static void render(registry_t *r, text_t *t)
{
    size_t f, i;

    for (f = 0; f < sizeof families / sizeof families[0]; f++) {
        const family_t *fam = &families[f];
        text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name,
                    fam->type);
        for (i = 0; i < SLOTS; i++) {
            const series_t *s = atomic_load_explicit(&r->slots[i], memory_order_acquire);
            if (s != NULL && s->group == fam->group)
                put_series(t, fam, s);
        }
    }
}

/* ---------------------------------------------------------------- HTTP */

typedef struct exporter {
    char *address;            /* owned; as configured: the sharing key */
    int refs;                 /* instances using it, under exporters_mu */
    int listen_fd;
    int wake[2];              /* a pipe: writing to it ends the thread */
    pthread_t thread;
    registry_t reg;
    /* the reshard figures: read from dal_reshard_state on rs_ds when
     * scraped, through the newest instance that names it (reshard_state) */
    pthread_mutex_t rs_mu;
    const dal_host_api_t *api;
    dal_host_t *rs_host;      /* borrowed; NULL: no reshard figures */
    char rs_ds[LABEL_MAX];
    struct exporter *next;
} exporter_t;

static pthread_mutex_t exporters_mu = PTHREAD_MUTEX_INITIALIZER;
static exporter_t *exporters;  /* every live exporter of this .so */

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read the request head (we need only its first line). */
static ssize_t read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;

    while (len + 1 < cap) {
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL || strstr(buf, "\n\n") != NULL)
            return (ssize_t)len;
    }
    buf[len] = '\0';
    return len > 0 ? (ssize_t)len : -1;
}

static void respond(int fd, const char *status, const char *extra_headers, const char *body,
                    size_t len, int head_only)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                     "Connection: close\r\n\r\n",
                     status,
                     strncmp(status, "200", 3) == 0 ? "text/plain; version=0.0.4; charset=utf-8"
                                                    : "text/plain; charset=utf-8",
                     len, extra_headers);

    if (n > 0 && send_all(fd, head, (size_t)n) == 0 && !head_only)
        send_all(fd, body, len);
}

/* ------------------------------------------------- reshard figures */

/* One row of dal_reshard_state (docs/resharding.md). */
typedef struct rs_row {
    char tbl[LABEL_MAX], src[LABEL_MAX], phase[LABEL_MAX];
    int paused;
    uint64_t copied, total;
    double started, updated;
    int64_t lag_ms;           /* -1: NULL */
} rs_row_t;

static void cut_copy(char *dst, const char *v, size_t len)
{
    if (v == NULL)
        len = 0;
    if (len > LABEL_MAX - 1)
        len = LABEL_MAX - 1;
    memcpy(dst, v ? v : "", len);
    dst[len] = '\0';
}

static int is_catchup_row(const rs_row_t *r)
{
    return strncmp(r->src, "binlog:", 7) == 0 || strncmp(r->src, "reverse:", 8) == 0;
}

/* The state table's rows, read through x's host; owned, NULL when there
 * is none (no reshard yet: no table) or on error. */
static rs_row_t *reshard_rows(exporter_t *x, size_t *n)
{
    static const char sql[] = "SELECT tbl, src, phase, rows_copied, rows_total, started, updated,"
                              " lag_ms, detail FROM dal_reshard_state ORDER BY tbl, src";
    dal_result_t *res = NULL;
    dal_error_t err;
    rs_row_t *rows = NULL, *nr;
    size_t cap = 0, len;
    const char *v;

    *n = 0;
    memset(&err, 0, sizeof err);
    if (x->rs_host == NULL || x->api->query(x->rs_host, x->rs_ds, sql, NULL, 0, &res, &err) != 0)
        return NULL;
    while (x->api->result_next(res, &err) == 1) {
        rs_row_t *r;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            if ((nr = realloc(rows, cap * sizeof *rows)) == NULL)
                break;
            rows = nr;
        }
        r = &rows[(*n)++];
        v = x->api->result_text(res, 0, &len);
        cut_copy(r->tbl, v, len);
        v = x->api->result_text(res, 1, &len);
        cut_copy(r->src, v, len);
        v = x->api->result_text(res, 2, &len);
        cut_copy(r->phase, v, len);
        r->copied = (uint64_t)x->api->result_int(res, 3);
        r->total = (uint64_t)x->api->result_int(res, 4);
        v = x->api->result_text(res, 5, &len);
        r->started = v ? strtod(v, NULL) : 0;
        v = x->api->result_text(res, 6, &len);
        r->updated = v ? strtod(v, NULL) : 0;
        v = x->api->result_text(res, 7, &len);
        r->lag_ms = v ? x->api->result_int(res, 7) : -1;
        v = x->api->result_text(res, 8, &len);
        r->paused = v != NULL && len > 0;
    }
    x->api->result_free(res);
    return rows;
}

static void put_rs_labels(text_t *t, const char *tbl, const char *src)
{
    text_printf(t, "{table=\"");
    put_escaped(t, tbl);
    if (src != NULL) {
        text_printf(t, "\",source=\"");
        put_escaped(t, src);
    }
    text_printf(t, "\"}");
}

/* The totals of table rows[i]'s copy: rate and ETA, as `reshard status`. */
static void rs_totals(const rs_row_t *rows, size_t n, size_t i, double *rate, double *eta)
{
    uint64_t copied = 0, total = 0;
    double first = 0, last = 0, secs;
    size_t j;

    for (j = 0; j < n; j++) {
        const rs_row_t *r = &rows[j];
        if (strcmp(r->tbl, rows[i].tbl) != 0 || r->src[0] == '\0' || is_catchup_row(r))
            continue;
        copied += r->copied;
        total += r->total;
        if (r->started > 0 && (first == 0 || r->started < first))
            first = r->started;
        if (r->updated > last)
            last = r->updated;
    }
    secs = last - first;
    *rate = secs > 0 ? (double)copied / secs : 0;
    *eta = *rate > 0 && total > copied ? (double)(total - copied) / *rate : 0;
}

/* Which rows a family shows: the workflow's, the source tables', the
 * catch-ups'. */
enum { RS_FLOW, RS_SOURCE, RS_CATCHUP };

static int rs_kind(const rs_row_t *r)
{
    return r->src[0] == '\0' ? RS_FLOW : is_catchup_row(r) ? RS_CATCHUP : RS_SOURCE;
}

static void render_reshard(exporter_t *x, text_t *t)
{
    static const struct {
        const char *name, *help;
        int kind;
    } fams[] = {
        {"dal_reshard_phase", "A resharded table's phase (1 for the phase it is in).", RS_FLOW},
        {"dal_reshard_paused", "1 while the copy or catch-up waits for a lagging or loaded node.",
         RS_FLOW},
        {"dal_reshard_rows_per_second", "Rows copied per second since the copy began.", RS_FLOW},
        {"dal_reshard_eta_seconds", "Seconds the copy still needs at that rate.", RS_FLOW},
        {"dal_reshard_rows_copied", "Rows copied from each old physical table.", RS_SOURCE},
        {"dal_reshard_rows_estimated", "Rows each old physical table had when the copy began.",
         RS_SOURCE},
        {"dal_reshard_lag_seconds", "The last catch-up round's lag, per node's binary log.",
         RS_CATCHUP},
        {"dal_reshard_keys_applied", "Changed keys the catch-up applied, per node's binary log.",
         RS_CATCHUP},
    };
    rs_row_t *rows;
    size_t n, f, i;

    pthread_mutex_lock(&x->rs_mu);
    rows = reshard_rows(x, &n);
    pthread_mutex_unlock(&x->rs_mu);
    if (rows == NULL)
        return;
    for (f = 0; f < sizeof fams / sizeof fams[0]; f++) {
        text_printf(t, "# HELP %s %s\n# TYPE %s gauge\n", fams[f].name, fams[f].help,
                    fams[f].name);
        for (i = 0; i < n; i++) {
            const rs_row_t *r = &rows[i];
            double rate, eta;
            if (rs_kind(r) != fams[f].kind || (f == 6 && r->lag_ms < 0))
                continue;
            text_printf(t, "%s", fams[f].name);
            if (f == 0) {
                text_printf(t, "{table=\"");
                put_escaped(t, r->tbl);
                text_printf(t, "\",phase=\"");
                put_escaped(t, r->phase);
                text_printf(t, "\"} 1\n");
                continue;
            }
            put_rs_labels(t, r->tbl, fams[f].kind == RS_FLOW ? NULL : r->src);
            rs_totals(rows, n, i, &rate, &eta);
            if (f == 1)
                text_printf(t, " %d\n", r->paused);
            else if (f == 2)
                text_printf(t, " %.0f\n", rate);
            else if (f == 3)
                text_printf(t, " %.0f\n", eta);
            else if (f == 4 || f == 7)
                text_printf(t, " %" PRIu64 "\n", r->copied);
            else if (f == 5)
                text_printf(t, " %" PRIu64 "\n", r->total);
            else
                text_printf(t, " %.3f\n", (double)r->lag_ms / 1000.0);
        }
    }
    free(rows);
}

static void serve_metrics(exporter_t *x, int fd, int head_only)
{
    text_t t = {NULL, 0, 0, 0};

    render(&x->reg, &t);
    render_reshard(x, &t);
    if (t.oom)
        respond(fd, "500 Internal Server Error", "", "out of memory\n", 14, head_only);
    else
        respond(fd, "200 OK", "", t.buf, t.len, head_only);
    free(t.buf);
}

static void serve_one(exporter_t *x, int fd)
{
    static const char not_found[] = "not found: metrics are at /metrics\n";
    static const char bad_method[] = "only GET and HEAD\n";
    struct timeval tv = {IO_TIMEOUT_S, 0};
    char req[REQUEST_MAX];
    size_t plen;
    char *sp;
    int head;

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (read_request(fd, req, sizeof req) < 0)
        return;
    head = strncmp(req, "HEAD ", 5) == 0;
    if (strncmp(req, "GET ", 4) != 0 && !head) {
        respond(fd, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", bad_method,
                sizeof bad_method - 1, 0);
        return;
    }
    sp = strchr(req, ' ') + 1;
    plen = strcspn(sp, " ?\r\n");
    if (plen == 8 && strncmp(sp, "/metrics", 8) == 0)
        serve_metrics(x, fd, head);
    else
        respond(fd, "404 Not Found", "", not_found, sizeof not_found - 1, head);
}

static void *serve_main(void *arg)
{
    exporter_t *x = arg;
    struct pollfd pf[2] = {{x->listen_fd, POLLIN, 0}, {x->wake[0], POLLIN, 0}};

    for (;;) {
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break;
        if (pf[0].revents & POLLIN) {
            int fd = accept(x->listen_fd, NULL, NULL);
            if (fd >= 0) {
                serve_one(x, fd);
                close(fd);
            }
        }
    }
    return NULL;
}

/* "host:port", "[v6]:port" or ":port" (all interfaces: only when asked). */
static int split_address(const char *addr, char *host, size_t hcap, const char **port)
{
    const char *colon = strrchr(addr, ':');
    size_t hlen;

    if (colon == NULL || colon[1] == '\0')
        return -1;
    *port = colon + 1;
    hlen = (size_t)(colon - addr);
    if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
        addr++;
        hlen -= 2;
    }
    if (hlen >= hcap)
        return -1;
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    return 0;
}

static int listen_on(const dal_host_api_t *api, const char *addr, int *out, dal_error_t *err)
{
    struct addrinfo hints, *res = NULL, *ai;
    char host[256];
    const char *port;
    int fd = -1, one = 1, rc, saved = 0;

    if (split_address(addr, host, sizeof host, &port) != 0)
        return api->set_error(err, DAL_ECONFIG,
                              "address '%s' is not HOST:PORT (e.g. 127.0.0.1:9464)", addr);
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (rc != 0)
        return api->set_error(err, DAL_ECONFIG, "address '%s': %s", addr, gai_strerror(rc));
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 16) == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return api->set_error(err, DAL_EIO, "cannot listen on %s: %s", addr,
                              strerror(saved ? saved : EADDRNOTAVAIL));
    *out = fd;
    return 0;
}

static void exporter_free(exporter_t *x)
{
    if (x->listen_fd >= 0)
        close(x->listen_fd);
    if (x->wake[0] >= 0) {
        close(x->wake[0]);
        close(x->wake[1]);
    }
    registry_free(&x->reg);
    free(x->address);
    pthread_mutex_destroy(&x->rs_mu);
    free(x);
}

static int exporter_start(const dal_host_api_t *api, const char *addr, exporter_t **out,
                          dal_error_t *err)
{
    exporter_t *x = calloc(1, sizeof *x);
    int rc;

    *out = NULL;
    if (x == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    x->listen_fd = x->wake[0] = x->wake[1] = -1;
    x->reg.id = registry_id(api);
    x->api = api;
    pthread_mutex_init(&x->rs_mu, NULL);
    /* label-less series exist from the start: a rate() needs the first 0 */
    if ((x->address = strdup(addr)) == NULL ||
        (x->reg.meta = series_get(&x->reg, G_META, NULL, NULL, NULL)) == NULL ||
        series_get(&x->reg, G_RELOAD, NULL, NULL, NULL) == NULL) {
        rc = api->set_error(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = listen_on(api, addr, &x->listen_fd, err)) != 0)
        goto fail;
    if (pipe2(x->wake, O_CLOEXEC) != 0) {
        x->wake[0] = x->wake[1] = -1;
        rc = api->set_error(err, DAL_EIO, "pipe: %s", strerror(errno));
        goto fail;
    }
    if ((rc = dal_plugin_thread_create(api, &x->thread, serve_main, x)) != 0) {
        rc = api->set_error(err, DAL_ENOMEM, "cannot start the HTTP thread: %s", strerror(rc));
        goto fail;
    }
    *out = x;
    return 0;
fail:
    exporter_free(x);
    return rc;
}

static void exporter_stop(exporter_t *x)
{
    ssize_t n;

    do
        n = write(x->wake[1], "x", 1);
    while (n < 0 && errno == EINTR);
    pthread_join(x->thread, NULL);
    exporter_free(x);
}

/* The exporter for addr, started on first use; one reference for the caller. */
static int exporter_get(const dal_host_api_t *api, const char *addr, exporter_t **out,
                        dal_error_t *err)
{
    exporter_t *x;
    int rc = 0;

    pthread_mutex_lock(&exporters_mu);
    for (x = exporters; x != NULL && strcmp(x->address, addr) != 0; x = x->next)
        ;
    if (x == NULL && (rc = exporter_start(api, addr, &x, err)) == 0) {
        x->next = exporters;
        exporters = x;
    }
    if (rc == 0)
        x->refs++;
    pthread_mutex_unlock(&exporters_mu);
    *out = x;
    return rc;
}

static void exporter_put(exporter_t *x)
{
    exporter_t **pp;
    int last;

    pthread_mutex_lock(&exporters_mu);
    last = --x->refs == 0;
    if (last)
        for (pp = &exporters; *pp != NULL; pp = &(*pp)->next)
            if (*pp == x) {
                *pp = x->next;
                break;
            }
    pthread_mutex_unlock(&exporters_mu);
    if (last)
        exporter_stop(x);
}

/* ------------------------------------------------------------ instance */

/* An instance: the shared exporter, and the host that made it (whose
 * datasources the reshard figures are read through). */
typedef struct prom_instance {
    exporter_t *x;
    dal_host_t *host;
} prom_instance_t;

static int prom_create(const dal_host_api_t *api, dal_host_t *host,
                       const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    const char *addr = api->param_string(params, "address");
    prom_instance_t *in = calloc(1, sizeof *in);
    int rc;

    *instance = NULL;
    if (in == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    if ((rc = exporter_get(api, addr, &in->x, err)) != 0) {
        free(in);
        return rc;
    }
    in->host = host;
    if (api->param_is_set(params, "reshard_state")) {
        pthread_mutex_lock(&in->x->rs_mu);
        in->x->api = api;
        in->x->rs_host = host;
        snprintf(in->x->rs_ds, sizeof in->x->rs_ds, "%s",
                 api->param_string(params, "reshard_state"));
        pthread_mutex_unlock(&in->x->rs_mu);
    }
    api->log(host, DAL_LOG_INFO, "serving metrics on http://%s/metrics", addr);
    *instance = in;
    return 0;
}

static void prom_destroy(void *instance)
{
    prom_instance_t *in = instance;

    if (in == NULL)
        return;
    /* a scrape reading through this host finishes first */
    pthread_mutex_lock(&in->x->rs_mu);
    if (in->x->rs_host == in->host)
        in->x->rs_host = NULL;
    pthread_mutex_unlock(&in->x->rs_mu);
    exporter_put(in->x);
    free(in);
}

static void prom_on_event(void *instance, const dal_event_t *ev)
{
    prom_instance_t *in = instance;

    registry_event(&in->x->reg, ev);
}

static const dal_param_spec_t prom_params[] = {
    {"address", DAL_PARAM_STRING, 0, "127.0.0.1:9464",
     "HOST:PORT to serve GET /metrics on (loopback by default; 0.0.0.0:PORT for all)"},
    {"reshard_state", DAL_PARAM_STRING, 0, NULL,
     "datasource holding dal_reshard_state (`dal reshard`): its figures are read when scraped"},
    {NULL, 0, 0, NULL, NULL}
};

static const dal_monitor_ops_t prom_ops = {
    sizeof(dal_monitor_ops_t),
    prom_create,
    prom_destroy,
    prom_on_event
};

static const dal_plugin_t prom_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_MONITOR,
    "prometheus",
    DAL_VERSION_STRING,
    "Prometheus metrics on GET /metrics: statements, executions, latency, errors, routes, "
    "pools, ID segments, reloads, reshards",
    prom_params,
    &prom_ops
};

DAL_PLUGIN_DECLARE(prom_plugin)
