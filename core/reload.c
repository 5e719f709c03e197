/*
 * reload.c -- dynamic configuration: building a new snapshot beside the
 * running one and swapping it in, whether dal_reload asked for it or the
 * watching source (file or store, source.h) delivered a new version;
 * comparing two configurations.
 *
 * The swap is the only place a snapshot pointer changes.  Statements take
 * their reference with snapshot_acquire (dal.c), which announces itself
 * in dal->readers for the few instructions between loading the pointer and
 * incrementing the snapshot's count; the swap exchanges the pointer and then
 * waits until no reader is inside that window, after which no one can still
 * be about to reference the old snapshot without holding a count on it.
 */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dal_int.h"
#include "error.h"
#include "events.h"
#include "snapshot_build.h"
#include "monitor.h"
#include "source.h"

/* ------------------------------------------------------------ resharding */

static int params_same(const dal_cfg_params_t *a, const dal_cfg_params_t *b)
{
    size_t i, j;

    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++) {
        for (j = 0; j < b->n && strcmp(a->items[i].name, b->items[j].name) != 0; j++)
            ;
        if (j == b->n || strcmp(a->items[i].value, b->items[j].value) != 0)
            return 0;
    }
    return 1;
}

static int str_differs(const char *a, const char *b)
{
    return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* What moves rows if it changes: describe the first such change in why. */
static int layout_change(const dal_cfg_table_t *a, const dal_cfg_table_t *b, char *why,
                         size_t cap)
{
    if (a->kind != b->kind)
        snprintf(why, cap, "its kind changes (sharded/broadcast/single)");
    else if (str_differs(a->datasource, b->datasource))
        snprintf(why, cap, "datasource %s -> %s", a->datasource, b->datasource);
    else if (a->db_shard_num != b->db_shard_num)
        snprintf(why, cap, "db_shard_num %u -> %u", a->db_shard_num, b->db_shard_num);
    else if (a->table_shard_num != b->table_shard_num)
        snprintf(why, cap, "table_shard_num %u -> %u", a->table_shard_num, b->table_shard_num);
    else if (str_differs(a->strategy, b->strategy))
        snprintf(why, cap, "strategy %s -> %s", a->strategy ? a->strategy : "(none)",
                 b->strategy ? b->strategy : "(none)");
    else if (!params_same(&a->strategy_params, &b->strategy_params))
        snprintf(why, cap, "the strategy's parameters change");
    else if (str_differs(a->shard_key, b->shard_key))
        snprintf(why, cap, "shard_key %s -> %s", a->shard_key ? a->shard_key : "(none)",
                 b->shard_key ? b->shard_key : "(none)");
    else
        return 0;
    return 1;
}

static int reshard_check(const dal_config_t *old, const dal_config_t *next, dal_error_t *err)
{
    char why[256];
    size_t i;

    for (i = 0; i < next->ntables; i++) {
        const dal_cfg_table_t *b = &next->tables[i];
        const dal_cfg_table_t *a = config_table(old, b->name);
        if (a == NULL || !layout_change(a, b, why, sizeof why) || next->allow_reshard)
            continue;
        return err_set(err, DAL_ECONFIG,
                       "%s:%d: table %s: %s moves where its rows live: that is a resharding, "
                       "not a reload (migrate the data, then set [dal] allow_reshard = true)",
                       next->path, b->line, b->name, why);
    }
    return 0;
}

/* ----------------------------------------------------------------- reload */

/* With validate_connect, every node the reload creates must answer. */
static int check_connect(const dal_snapshot_t *s, dal_error_t *err)
{
    size_t i;

    for (i = 0; i < s->nnodes; i++) {
        dal_conn_t *c = NULL;
        int rc;
        if (s->nodes[i]->owner != s->cfg)
            continue; /* carried over: already serving */
        rc = conn_open(s->nodes[i]->cfg, &c, err);
        if (rc != 0) {
            err_prefix(err, "%s:%d: validate_connect", s->cfg->path, s->nodes[i]->cfg->line);
            return rc;
        }
        conn_close(c);
    }
    return 0;
}

static void swap(dal_t *dal, dal_snapshot_t *next)
{
    dal_snapshot_t *old;

    atomic_store(&next->sql_cache, dal->sql_cache);
    old = atomic_exchange(&dal->snap, next);
    sql_cache_limit(dal->sql_cache, next->cfg->sql_cache_bytes,
                    next->cfg->sql_cache_max_statement);

    while (atomic_load(&dal->readers) != 0)
        sched_yield();
    snapshot_unref(old);
}

/* Build the snapshot of cfg (consumed) beside cur. */
static int build_next(dal_t *dal, const dal_snapshot_t *cur, dal_config_t *cfg,
                      dal_snapshot_t **next, dal_error_t *err)
{
    int rc = reshard_check(cur->cfg, cfg, err);

    *next = NULL;
    if (rc != 0) {
        config_free(cfg);
        return rc;
    }
    rc = snapshot_rebuild(cfg, dal->plugin_dir, &dal->log, cur, next, err);
    if (rc == 0 && (*next)->cfg->validate_connect && (rc = check_connect(*next, err)) != 0) {
        snapshot_unref(*next);
        *next = NULL;
    }
    return rc;
}

/* The version a store already gave us, again (a re-read after compaction
 * that found nothing new): nothing to reload. */
static int already_in_force(dal_t *dal, const dal_source_doc_t *doc)
{
    return doc->revision != 0 && doc->revision == atomic_load(&dal->revision);
}

/* Check doc and swap it in, or keep the running configuration.  doc NULL:
 * read it from the source first.  Caller holds reload_mu. */
static int reload_locked(dal_t *dal, const dal_source_doc_t *doc, dal_error_t *err)
{
    dal_snapshot_t *cur = snapshot_acquire(dal), *next = NULL;
    dal_source_doc_t fresh;
    dal_config_t *cfg = NULL;
    int rc = 0;

    if (doc == NULL) {
        rc = source_read(dal->source, 0, &fresh, err);
        doc = &fresh;
    }
    if (rc == 0 && (doc->flags & DAL_SOURCE_RESYNC))
        atomic_fetch_add(&dal->resyncs, 1);
    if (rc == 0 && already_in_force(dal, doc))
        goto done;
    if (rc == 0)
        rc = config_parse(doc->name, doc->text, doc->len, &cfg, err);
    if (rc == 0)
        rc = build_next(dal, cur, cfg, &next, err);
    if (rc == 0) {
        log_message(&dal->log, DAL_LOG_INFO, "config",
                    "reloaded %s: %zu datasources (%zu kept their connections), %zu tables",
                    doc->name, next->nnodes, next->nreused, next->ntables);
        swap(dal, next);
        xa_daemon_follow(dal);
        atomic_fetch_add(&dal->reloads, 1);
        atomic_store(&dal->revision, doc->revision);
        atomic_store(&dal->from_cache, 0);
        source_cache_store(dal->source, doc);
        event_reload(next, 0);
        if (doc->revision != 0)
            event_source(next, source_state_name(atomic_load(&dal->source_state)), NULL,
                         doc->revision);
    } else {
        atomic_fetch_add(&dal->reload_failures, 1);
        log_message(&dal->log, DAL_LOG_ERROR, "config",
                    "reload failed, the running configuration stays in force: %s", err->message);
        event_reload(cur, rc);
    }
done:
    snapshot_unref(cur);
    return rc;
}

int dal_reload(dal_t *dal, dal_error_t *err)
{
    dal_error_t local;
    int rc;

    if (dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_reload: NULL handle");
    if (err == NULL)
        err = &local;
    pthread_mutex_lock(&dal->reload_mu);
    rc = reload_locked(dal, NULL, err);
    pthread_mutex_unlock(&dal->reload_mu);
    return rc;
}

void dal_reload_stats(dal_t *dal, uint64_t *reloads, uint64_t *failures)
{
    if (reloads != NULL)
        *reloads = dal ? atomic_load(&dal->reloads) : 0;
    if (failures != NULL)
        *failures = dal ? atomic_load(&dal->reload_failures) : 0;
}

/* ------------------------------------------------------------------ watch */

/* sink.document: a new version from the watching source. */
static int on_document(void *user, const dal_source_doc_t *doc)
{
    dal_t *dal = user;
    dal_error_t err;
    int rc;

    pthread_mutex_lock(&dal->reload_mu);
    rc = reload_locked(dal, doc, &err); /* logs its own outcome */
    pthread_mutex_unlock(&dal->reload_mu);
    return rc;
}

const char *source_state_name(int state)
{
    return state == DAL_SOURCE_OK ? "ok" : "unreachable";
}

/* sink.state: logged once per change, and told to the monitors. */
static void on_state(void *user, dal_source_state_t state, const char *detail)
{
    dal_t *dal = user;
    dal_snapshot_t *s;

    if (atomic_exchange(&dal->source_state, (int)state) == (int)state)
        return;
    if (state == DAL_SOURCE_OK)
        log_message(&dal->log, DAL_LOG_INFO, "config", "%s: source reachable again (%s)",
                    source_display(dal->source), detail ? detail : "");
    else
        log_message(&dal->log, DAL_LOG_WARN, "config",
                    "%s: source unreachable (%s): the running configuration stays in force; "
                    "retrying", source_display(dal->source), detail ? detail : "");
    s = snapshot_acquire(dal);
    event_source(s, source_state_name((int)state), detail, atomic_load(&dal->revision));
    snapshot_unref(s);
}

int watch_start(dal_t *dal, dal_error_t *err)
{
    dal->sink.struct_size = sizeof dal->sink;
    dal->sink.user = dal;
    dal->sink.document = on_document;
    dal->sink.state = on_state;
    return source_watch(dal->source, atomic_load(&dal->revision), &dal->sink, err);
}

void watch_stop(dal_t *dal)
{
    if (dal->source != NULL)
        source_unwatch(dal->source);
}

int dal_source_info(dal_t *dal, dal_source_info_t *out)
{
    if (dal == NULL || out == NULL)
        return DAL_EINVAL;
    memset(out, 0, sizeof *out);
    out->location = source_display(dal->source);
    out->state = source_state_name(atomic_load(&dal->source_state));
    out->revision = atomic_load(&dal->revision);
    out->resyncs = atomic_load(&dal->resyncs);
    out->from_cache = atomic_load(&dal->from_cache);
    out->rejected = atomic_load(&dal->reload_failures);
    return 0;
}

/* ------------------------------------------------------------------- diff */

typedef struct differ {
    dal_diff_fn fn;
    void *user;
    int reshard;       /* a layout change was reported */
} differ_t;

static void report(differ_t *d, const char *what, const char *name, const char *change)
{
    d->fn(d->user, what, name, change);
}

static void diff_datasources(differ_t *d, const dal_config_t *a, const dal_config_t *b)
{
    char change[640];
    size_t i;

    for (i = 0; i < b->ndatasources; i++) {
        const dal_cfg_datasource_t *y = &b->datasources[i], *x = config_datasource(a, y->name);
        if (x == NULL) {
            snprintf(change, sizeof change, "added (master %s)", y->master.display);
            report(d, "datasource", y->name, change);
        } else if (!url_equal(&x->master, &y->master)) {
            snprintf(change, sizeof change, "master %s -> %s (new pool)", x->master.display,
                     y->master.display);
            report(d, "datasource", y->name, change);
        } else if (x->nreplicas != y->nreplicas) {
            snprintf(change, sizeof change, "replicas %zu -> %zu (new pool)", x->nreplicas,
                     y->nreplicas);
            report(d, "datasource", y->name, change);
        } else if (!datasource_same(a, x, b, y)) {
            report(d, "datasource", y->name, "settings changed (new pool)");
        }
    }
    for (i = 0; i < a->ndatasources; i++)
        if (config_datasource(b, a->datasources[i].name) == NULL)
            report(d, "datasource", a->datasources[i].name, "removed");
}

static void diff_tables(differ_t *d, const dal_config_t *a, const dal_config_t *b)
{
    char why[256], change[300];
    size_t i;

    for (i = 0; i < b->ntables; i++) {
        const dal_cfg_table_t *y = &b->tables[i], *x = config_table(a, y->name);
        if (x == NULL) {
            report(d, "table", y->name, "added");
        } else if (layout_change(x, y, why, sizeof why)) {
            snprintf(change, sizeof change, "RESHARD: %s%s", why,
                     b->allow_reshard ? " (allowed by allow_reshard)" : "");
            report(d, "table", y->name, change);
            d->reshard |= !b->allow_reshard;
        } else if (x->allow_scatter != y->allow_scatter || str_differs(x->binding, y->binding) ||
                   str_differs(x->id_column, y->id_column) || str_differs(x->idgen, y->idgen)) {
            report(d, "table", y->name, "settings changed");
        }
    }
    for (i = 0; i < a->ntables; i++)
        if (config_table(b, a->tables[i].name) == NULL)
            report(d, "table", a->tables[i].name, "removed");
}

/* [monitor] and [idgen] sections: a name, a plugin and parameters each. */
static void diff_sections(differ_t *d, const char *what, size_t na, size_t nb,
                          const char *(*name)(const dal_config_t *, size_t),
                          int (*same)(const dal_config_t *, size_t, const dal_config_t *, size_t),
                          const dal_config_t *a, const dal_config_t *b)
{
    size_t i, j;

    for (j = 0; j < nb; j++) {
        for (i = 0; i < na && strcmp(name(a, i), name(b, j)) != 0; i++)
            ;
        if (i == na)
            report(d, what, name(b, j), "added");
        else if (!same(a, i, b, j))
            report(d, what, name(b, j), "changed");
    }
    for (i = 0; i < na; i++) {
        for (j = 0; j < nb && strcmp(name(a, i), name(b, j)) != 0; j++)
            ;
        if (j == nb)
            report(d, what, name(a, i), "removed");
    }
}

static const char *monitor_name(const dal_config_t *c, size_t i)
{
    return c->monitors[i].name;
}

static int monitor_same(const dal_config_t *a, size_t i, const dal_config_t *b, size_t j)
{
    const dal_cfg_monitor_t *x = &a->monitors[i], *y = &b->monitors[j];

    return !str_differs(x->plugin, y->plugin) && x->enabled == y->enabled &&
           params_same(&x->params, &y->params);
}

static const char *idgen_name(const dal_config_t *c, size_t i)
{
    return c->idgens[i].name;
}

static int idgen_same(const dal_config_t *a, size_t i, const dal_config_t *b, size_t j)
{
    const dal_cfg_idgen_t *x = &a->idgens[i], *y = &b->idgens[j];

    return !str_differs(x->plugin, y->plugin) && params_same(&x->params, &y->params);
}

/* [dal]: every key with one value through its row, "OLD -> NEW"; the
 * pool and its parameters as one change. */
static void diff_dal(differ_t *d, const dal_config_t *a, const dal_config_t *b)
{
    char ta[DAL_CFG_QUOTE_SIZE], tb[DAL_CFG_QUOTE_SIZE], change[2 * DAL_CFG_QUOTE_SIZE + 8];
    const dal_cfg_key_t *k;
    const char *x, *y;

    for (k = dal_cfg_dal_keys; k->name != NULL; k++) {
        if (k->offset == offsetof(dal_config_t, pool))
            continue;
        x = cfg_key_text(k, a, ta, sizeof ta);
        y = cfg_key_text(k, b, tb, sizeof tb);
        if (x != NULL && y != NULL && strcmp(x, y) != 0) {
            snprintf(change, sizeof change, "%s -> %s", x, y);
            report(d, "dal", k->name, change);
        }
    }
    if (str_differs(a->pool, b->pool) || !params_same(&a->pool_params, &b->pool_params))
        report(d, "dal", "pool", "changed (every datasource gets a new pool)");
}

/* Report how b differs from a; DAL_ECONFIG for a resharding b does not allow. */
int config_diff(const dal_config_t *a, const dal_config_t *b, dal_diff_fn fn, void *user,
                dal_error_t *err)
{
    differ_t d = {fn, user, 0};

    diff_dal(&d, a, b);
    diff_datasources(&d, a, b);
    diff_tables(&d, a, b);
    diff_sections(&d, "monitor", a->nmonitors, b->nmonitors, monitor_name, monitor_same, a, b);
    diff_sections(&d, "idgen", a->nidgens, b->nidgens, idgen_name, idgen_same, a, b);
    return d.reshard ? reshard_check(a, b, err) : 0;
}

int dal_config_diff(const char *running, const char *candidate, const dal_open_opts_t *opts,
                    dal_diff_fn fn, void *user, dal_error_t *err)
{
    dal_config_t *a = NULL, *b = NULL;
    int rc;

    if (running == NULL || candidate == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_config_diff: NULL argument");
    rc = dal_check_config(candidate, opts, err);
    if (rc == 0)
        rc = location_load(running, opts, &a, err);
    if (rc == 0)
        rc = location_load(candidate, opts, &b, err);
    if (rc == 0)
        rc = config_diff(a, b, fn, user, err);
    config_free(a);
    config_free(b);
    return rc;
}
