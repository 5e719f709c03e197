/*
 * config_diff.c -- comparing two configurations: what `dal config diff` and
 * dal_config_diff report, and which changes move rows (a resharding, which a
 * reload refuses unless [dal] allow_reshard says the data was migrated).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_diff.h"
#include "error.h"

/* ------------------------------------------------------------ resharding */

int config_params_same(const dal_cfg_params_t *a, const dal_cfg_params_t *b)
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

int config_datasource_same(const dal_config_t *ca, const dal_cfg_datasource_t *a,
                    const dal_config_t *cb, const dal_cfg_datasource_t *b)
{
    size_t i;

    if (strcmp(a->name, b->name) != 0 || !url_equal(&a->master, &b->master) ||
        a->connect_timeout_ms != b->connect_timeout_ms ||
        a->read_timeout_ms != b->read_timeout_ms || a->nreplicas != b->nreplicas ||
        a->load_balance != b->load_balance || a->max_replica_lag_ms != b->max_replica_lag_ms ||
        a->health_check_ms != b->health_check_ms || a->read_your_writes != b->read_your_writes ||
        a->ryw_window_ms != b->ryw_window_ms || a->local_infile != b->local_infile ||
        !config_params_same(&a->pool_params, &b->pool_params))
        return 0;
    for (i = 0; i < a->nreplicas; i++)
        if (!url_equal(&a->replicas[i].url, &b->replicas[i].url) ||
            a->replicas[i].weight != b->replicas[i].weight)
            return 0;
    /* the pool plugin and its [dal] defaults shape the node too */
    return !str_differs(ca->pool, cb->pool) && config_params_same(&ca->pool_params, &cb->pool_params);
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
    else if (!config_params_same(&a->strategy_params, &b->strategy_params))
        snprintf(why, cap, "the strategy's parameters change");
    else if (str_differs(a->shard_key, b->shard_key))
        snprintf(why, cap, "shard_key %s -> %s", a->shard_key ? a->shard_key : "(none)",
                 b->shard_key ? b->shard_key : "(none)");
    else
        return 0;
    return 1;
}

int config_layout_changed(const dal_cfg_table_t *a, const dal_cfg_table_t *b)
{
    char why[160];

    return layout_change(a, b, why, sizeof why);
}

int config_reshard_check(const dal_config_t *old, const dal_config_t *next, dal_error_t *err)
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
        } else if (!config_datasource_same(a, x, b, y)) {
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
                   str_differs(x->id_column, y->id_column) || str_differs(x->idgen, y->idgen) ||
                   str_differs(x->lookup, y->lookup) ||
                   str_differs(x->lookup_unique, y->lookup_unique)) {
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
           config_params_same(&x->params, &y->params);
}

static const char *idgen_name(const dal_config_t *c, size_t i)
{
    return c->idgens[i].name;
}

static int idgen_same(const dal_config_t *a, size_t i, const dal_config_t *b, size_t j)
{
    const dal_cfg_idgen_t *x = &a->idgens[i], *y = &b->idgens[j];

    return !str_differs(x->plugin, y->plugin) && config_params_same(&x->params, &y->params);
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
    if (str_differs(a->pool, b->pool) || !config_params_same(&a->pool_params, &b->pool_params))
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
    return d.reshard ? config_reshard_check(a, b, err) : 0;
}
