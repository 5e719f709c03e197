/*
 * monitor.c -- the monitor plugin instances of a snapshot, emitting events
 * to them, the pool sampler, and SQL normalisation for events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plugin_load.h"
#include "monitor.h"
#include "pool.h"
#include "sql_cache.h"
#include "sql_lex.h"
#include "thread.h"

/* How often pool figures are sampled.  Prometheus scrapes every 15 s or so;
 * a second is fresh enough and costs a lock per node per second. */
#define POOL_SAMPLE_MS 1000

typedef struct monitor {
    dal_plugin_lib_t *lib;          /* one reference */
    const dal_monitor_ops_t *ops;   /* inside lib */
    void *inst;                     /* owned via ops->destroy */
    dal_plugin_params_t *params;    /* owned */
    struct dal_host host;
} monitor_t;

struct dal_monitor_set {
    monitor_t *mon;                 /* owned array */
    size_t n;
    struct dal_snapshot *snap;      /* borrowed: the snapshot owns the set */
    int sampling;                   /* the sampler thread was started */
    ticker_t sampler;               /* calls sample every POOL_SAMPLE_MS */
};

/* ------------------------------------------------------------- instances */

static int find_lib(dal_monitor_set_t *set, const dal_cfg_monitor_t *c, dal_plugin_lib_t **out,
                    dal_error_t *err)
{
    size_t i;

    for (i = 0; i < set->n; i++) {
        const dal_plugin_lib_t *lib = set->mon[i].lib; /* NULL: the slot being made */
        if (lib != NULL && strcmp(lib->desc->name, c->plugin) == 0) {
            plugin_lib_ref(set->mon[i].lib);
            *out = set->mon[i].lib;
            return 0;
        }
    }
    return plugin_find(set->snap->plugin_path, DAL_PLUGIN_MONITOR, c->plugin, out, err);
}

static int monitor_create(dal_monitor_set_t *set, monitor_t *m, const dal_cfg_monitor_t *c,
                          dal_error_t *err)
{
    const dal_config_t *cfg = set->snap->cfg;
    int rc;

    rc = find_lib(set, c, &m->lib, err);
    if (rc != 0) {
        err_prefix(err, "%s:%d", cfg->path, c->plugin_line);
        return rc == DAL_ENOMEM ? rc : DAL_EPLUGIN;
    }
    m->ops = m->lib->desc->ops;
    m->host.log = set->snap->log;
    m->host.snap = set->snap;
    snprintf(m->host.component, sizeof m->host.component, "monitor_%s:%s", c->plugin, c->name);
    rc = plugin_params_build(m->lib, c->name, &c->params, cfg->path, c->line, &m->params, err);
    if (rc != 0)
        return rc;
    rc = m->ops->create(plugin_host_api(), &m->host, m->params, &m->inst, err);
    if (rc != 0) {
        m->inst = NULL;
        err_prefix(err, "%s:%d: monitor plugin '%s' (%s) failed to initialise for [monitor %s]",
                   cfg->path, c->plugin_line, c->plugin, m->lib->path, c->name);
        return DAL_EPLUGIN;
    }
    return 0;
}

static void monitor_free(monitor_t *m)
{
    if (m->inst != NULL)
        m->ops->destroy(m->inst);
    plugin_params_free(m->params);
    /* after destroy: the instance's code lives in this .so */
    plugin_lib_unref(m->lib);
}

/* --------------------------------------------------------------- sampler */

static void emit_figure(const dal_monitor_set_t *set, const dal_server_t *srv,
                        const char *figure, uint64_t value)
{
    dal_event_t ev;

    monitor_event_init(set, &ev, DAL_EVENT_POOL);
    ev.kind = figure;
    ev.datasource = srv->node->cfg->name;
    ev.server = srv->address;
    ev.rows = value;
    monitor_emit(set, &ev);
}

/* Each figure of one server's pool. */
static void sample_server(const dal_monitor_set_t *set, dal_server_t *srv)
{
    dal_pool_stats_t st;

    server_pool_stats(srv, &st);
    emit_figure(set, srv, "in_use", st.in_use);
    emit_figure(set, srv, "idle", st.idle);
    emit_figure(set, srv, "waiting", st.waiting);
    emit_figure(set, srv, "created", st.created);
    emit_figure(set, srv, "closed", st.closed);
    emit_figure(set, srv, "timed_out", st.timed_out);
}

/* Every server of every node: the master and each replica has a pool. */
static void sample_pools(const dal_monitor_set_t *set)
{
    size_t i, r;

    for (i = 0; i < set->snap->nnodes; i++) {
        dal_node_t *node = set->snap->nodes[i];
        sample_server(set, &node->master);
        for (r = 0; r < node->nreplicas; r++)
            sample_server(set, &node->replicas[r]);
    }
}

/* The analysis cache's figures (DAL_EVENT_SQL_CACHE), once the snapshot
 * is in force. */
static void sample_sql_cache(const dal_monitor_set_t *set)
{
    static const char *const kinds[] = {"entries", "bytes", "max_bytes", "evictions",
                                        "uncached", "hits", "misses"};
    dal_sql_cache_t *c = atomic_load(&set->snap->sql_cache);
    sql_cache_figures_t f = {0};
    uint64_t values[sizeof kinds / sizeof kinds[0]];
    dal_event_t ev;
    size_t i;

    if (c == NULL)
        return;
    sql_cache_figures(c, &f);
    values[0] = f.entries;
    values[1] = f.bytes;
    values[2] = f.max_bytes;
    values[3] = f.evictions;
    values[4] = f.uncached;
    values[5] = f.hits;
    values[6] = f.misses;
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        monitor_event_init(set, &ev, DAL_EVENT_SQL_CACHE);
        ev.kind = kinds[i];
        ev.rows = values[i];
        monitor_emit(set, &ev);
    }
}

static uint32_t sample(void *arg)
{
    dal_monitor_set_t *set = arg;

    sample_pools(set);
    sample_sql_cache(set);
    return POOL_SAMPLE_MS;
}

static int start_sampler(dal_monitor_set_t *set, dal_error_t *err)
{
    int rc = ticker_start(&set->sampler, sample, set);

    if (rc != 0)
        return err_set(err, DAL_ENOMEM, "cannot start the pool sampler thread: %s",
                       strerror(rc));
    set->sampling = 1;
    return 0;
}

static void stop_sampler(dal_monitor_set_t *set)
{
    if (!set->sampling)
        return;
    ticker_stop(&set->sampler);
    set->sampling = 0;
}

/* ------------------------------------------------------------------ set */

static size_t count_enabled(const dal_config_t *cfg)
{
    size_t i, n = 0;

    for (i = 0; i < cfg->nmonitors; i++)
        n += cfg->monitors[i].enabled != 0;
    return n;
}

static int build_instances(dal_monitor_set_t *set, dal_error_t *err)
{
    const dal_config_t *cfg = set->snap->cfg;
    size_t i;
    int rc;

    for (i = 0; i < cfg->nmonitors; i++) {
        if (!cfg->monitors[i].enabled)
            continue;
        /* n counts the slots to free, so it grows before create can fail */
        rc = monitor_create(set, &set->mon[set->n++], &cfg->monitors[i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int monitor_set_build(struct dal_snapshot *s, dal_monitor_set_t **out, dal_error_t *err)
{
    size_t n = count_enabled(s->cfg);
    dal_monitor_set_t *set;
    int rc;

    *out = NULL;
    if (n == 0)
        return 0;
    set = calloc(1, sizeof *set);
    if (set == NULL || (set->mon = calloc(n, sizeof *set->mon)) == NULL) {
        free(set);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    set->snap = s;
    rc = build_instances(set, err);
    if (rc == 0 && s->nnodes > 0)
        rc = start_sampler(set, err);
    if (rc != 0) {
        monitor_set_free(set);
        return rc;
    }
    *out = set;
    return 0;
}

void monitor_set_free(dal_monitor_set_t *set)
{
    size_t i;

    if (set == NULL)
        return;
    /* the sampler emits to the instances: stop it first */
    stop_sampler(set);
    for (i = 0; i < set->n; i++)
        monitor_free(&set->mon[i]);
    free(set->mon);
    free(set);
}

void monitor_event_init(const dal_monitor_set_t *set, dal_event_t *ev,
                        dal_event_type_t type)
{
    memset(ev, 0, sizeof *ev);
    ev->struct_size = sizeof *ev;
    ev->type = type;
    ev->labels_gen = set->snap->gen;
}

void monitor_emit(const dal_monitor_set_t *set, const dal_event_t *ev)
{
    size_t i;

    if (set == NULL)
        return;
    for (i = 0; i < set->n; i++)
        set->mon[i].ops->on_event(set->mon[i].inst, ev);
}

/* --------------------------------------------------------- normalising */

/* Append s[0..len) to out, snprintf-style: *n counts every byte, only
 * those that fit are stored. */
static void put(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
    if (*n + 1 < cap) {
        size_t room = cap - 1 - *n;
        memcpy(out + *n, s, len < room ? len : room);
    }
    *n += len;
}

/* Tokens whose text is data.  An unterminated string (ERROR) may hold data
 * too, so it goes as a whole. */
static int is_literal(dal_tok_type_t t)
{
    return t == DAL_TOK_STRING || t == DAL_TOK_NUMBER || t == DAL_TOK_ERROR;
}

size_t sql_normalize(const char *sql, size_t len, int no_backslash, char *out, size_t cap)
{
    dal_lexer_t lx;
    dal_token_t t;
    size_t n = 0, prev_end = 0;
    int gap = 0;

    lex_init(&lx, sql, len, no_backslash);
    for (t = lex_next(&lx); t.type != DAL_TOK_EOF; t = lex_next(&lx)) {
        /* a comment may hold anything (a trace id, a value): drop it, but
         * keep the words on either side apart */
        if (t.type == DAL_TOK_COMMENT) {
            gap = 1;
            continue;
        }
        if (n > 0 && (gap || t.off > prev_end))
            put(out, cap, &n, " ", 1);
        gap = 0;
        if (is_literal(t.type))
            put(out, cap, &n, "?", 1);
        else
            put(out, cap, &n, sql + t.off, t.len);
        prev_end = (size_t)t.off + t.len;
    }
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

const char *sql_normalized(const dal_sql_t *s)
{
    dal_sql_t *m = (dal_sql_t *)s; /* only the lazily made field changes, atomically */
    char *text = atomic_load(&m->norm), *expected = NULL;
    size_t n;

    if (text != NULL)
        return text;
    n = sql_normalize(s->text, s->len, s->no_backslash, NULL, 0);
    text = malloc(n + 1);
    if (text == NULL)
        return NULL;
    sql_normalize(s->text, s->len, s->no_backslash, text, n + 1);
    /* two threads may race here: the first one's text stays */
    if (!atomic_compare_exchange_strong(&m->norm, &expected, text)) {
        free(text);
        return expected;
    }
    return text;
}
