/*
 * snapshot_build.c -- building the runtime from a configuration: nodes and
 * their pools, tables and their strategies, ID generators, monitors.  See
 * snapshot_build.h.
 *
 * This is the one module that creates (and tears down) everything a
 * snapshot owns, so it sits above pools, health checks, ID generators and
 * monitors; the snapshot itself (snapshot.h) is only the data and its
 * lookups, which every layer below may use.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "error.h"
#include "health.h"
#include "idgen.h"
#include "monitor.h"
#include "plugin_load.h"
#include "pool.h"
#include "config_diff.h"
#include "snapshot_build.h"

/* Idle connections kept per node by the built-in cache. */
#define NODE_MAX_IDLE 64

/* The .so files used by this snapshot, loaded once each. */
static int find_lib(dal_snapshot_t *s, dal_plugin_kind_t kind, const char *name,
                    dal_plugin_lib_t **out, dal_error_t *err)
{
    size_t i;

    for (i = 0; i < s->ntables; i++) {
        dal_plugin_lib_t *lib = s->tables[i].lib;
        if (lib && (int)lib->desc->kind == (int)kind && strcmp(lib->desc->name, name) == 0) {
            plugin_lib_ref(lib);
            *out = lib;
            return 0;
        }
    }
    return plugin_find(s->plugin_path, kind, name, out, err);
}

static int init_strategy(dal_snapshot_t *s, dal_table_t *t, dal_error_t *err)
{
    const dal_cfg_table_t *c = t->cfg;
    dal_shard_table_t st;
    int rc;

    rc = find_lib(s, DAL_PLUGIN_SHARD, c->strategy, &t->lib, err);
    if (rc != 0) {
        err_prefix(err, "%s:%d", s->cfg->path, c->strategy_line);
        return rc == DAL_ENOMEM ? rc : DAL_EPLUGIN;
    }
    t->ops = t->lib->desc->ops;
    rc = plugin_params_build(t->lib, "strategy", &c->strategy_params, s->cfg->path, c->line,
                             &t->params, err);
    if (rc != 0)
        return rc;
    st.table = c->name;
    st.datasource = c->datasource;
    st.db_shard_num = c->db_shard_num;
    st.table_shard_num = c->table_shard_num;
    rc = t->ops->create(plugin_host_api(), &t->host, &st, t->params, &t->strategy, err);
    if (rc != 0) {
        t->strategy = NULL;
        err_prefix(err, "%s:%d: shard plugin '%s' (%s) failed to initialise for table %s",
                   s->cfg->path, c->strategy_line, c->strategy, t->lib->path, c->name);
        return DAL_EPLUGIN;
    }
    return 0;
}

static int init_table(dal_snapshot_t *s, dal_table_t *t, const dal_cfg_table_t *c,
                      dal_error_t *err)
{
    uint32_t i;
    char name[256];

    t->cfg = c;
    t->host.log = s->log;
    t->host.snap = s;
    t->sharded = c->strategy != NULL;
    t->tables_per_db = c->table_shard_num / c->db_shard_num;
    snprintf(t->host.component, sizeof t->host.component, "shard_%s:%s",
             c->strategy ? c->strategy : "-", c->name);
    t->nodes = calloc(c->db_shard_num, sizeof *t->nodes);
    if (t->nodes == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < c->db_shard_num; i++) {
        if (c->kind != DAL_TABLE_SINGLE || t->sharded)
            snprintf(name, sizeof name, "%s%u", c->datasource, i);
        else
            snprintf(name, sizeof name, "%s", c->datasource);
        t->nodes[i] = snapshot_node(s, name);
        /* config.c already checked the group; this guards the invariant */
        if (t->nodes[i] == NULL)
            return err_set(err, DAL_ECONFIG, "%s:%d: datasource '%s' is not defined",
                           s->cfg->path, c->datasource_line, name);
    }
    return t->sharded ? init_strategy(s, t, err) : 0;
}

static void server_init(dal_node_t *n, dal_server_t *srv, int replica)
{
    srv->node = n;
    srv->replica = replica;
    srv->weight = replica < 0 ? 1 : n->cfg->replicas[replica].weight;
    url_address(server_url(n->cfg, replica), srv->address, sizeof srv->address);
    connpool_init(&srv->pool, n->cfg, replica, NODE_MAX_IDLE);
    /* the master is always there for writes; replicas earn their reads */
    atomic_init(&srv->health, replica < 0 ? DAL_HEALTH_UP : DAL_HEALTH_UNKNOWN);
    atomic_init(&srv->outstanding, 0);
}

static void server_destroy(dal_server_t *srv)
{
    pool_teardown(srv);
    connpool_destroy(&srv->pool);
}

static void node_unref(dal_node_t *n)
{
    size_t i;

    if (n == NULL || atomic_fetch_sub(&n->refs, 1) != 1)
        return;
    /* the checker reads the servers: it goes first */
    health_free(n->health);
    for (i = 0; i < n->nreplicas; i++)
        server_destroy(&n->replicas[i]);
    server_destroy(&n->master);
    pthread_mutex_destroy(&n->gtid_mu);
    free(n->replicas);
    config_free(n->owner);
    free(n);
}

/* Every server's pool plugin instance, master first. */
static int build_pools(dal_snapshot_t *s, dal_node_t *n, dal_error_t *err)
{
    size_t i;
    int rc = pool_build(s, &n->master, err);

    for (i = 0; rc == 0 && i < n->nreplicas; i++)
        rc = pool_build(s, &n->replicas[i], err);
    return rc;
}

static int node_new(dal_snapshot_t *s, const dal_cfg_datasource_t *ds, dal_node_t **out,
                    dal_error_t *err)
{
    dal_node_t *n = calloc(1, sizeof *n);
    dal_server_t *replicas = calloc(ds->nreplicas ? ds->nreplicas : 1, sizeof *replicas);
    size_t i;
    int rc;

    *out = NULL;
    if (n == NULL || replicas == NULL) {
        free(n);
        free(replicas);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    atomic_init(&n->refs, 1);
    n->ryw_key = snapshot_name_hash(ds->name, strlen(ds->name), 0);
    n->owner = config_ref(s->cfg);
    n->cfg = ds;
    n->log = s->log;
    atomic_init(&n->rr, 0);
    pthread_mutex_init(&n->gtid_mu, NULL);
    n->replicas = replicas;
    n->nreplicas = ds->nreplicas;
    server_init(n, &n->master, -1);
    for (i = 0; i < n->nreplicas; i++)
        server_init(n, &n->replicas[i], (int)i);
    rc = build_pools(s, n, err);
    if (rc == 0)
        rc = health_new(n, &n->health, err);
    if (rc != 0) {
        node_unref(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* prev's node for ds, if its settings are unchanged: it keeps its pool. */
static dal_node_t *reusable_node(const dal_snapshot_t *prev, const dal_config_t *cfg,
                                 const dal_cfg_datasource_t *ds)
{
    size_t i;

    for (i = 0; prev != NULL && i < prev->nnodes; i++) {
        dal_node_t *n = prev->nodes[i];
        if (strcmp(n->cfg->name, ds->name) == 0)
            return config_datasource_same(n->owner, n->cfg, cfg, ds) ? n : NULL;
    }
    return NULL;
}

static int build_nodes(dal_snapshot_t *s, const dal_snapshot_t *prev, dal_error_t *err)
{
    const dal_config_t *cfg = s->cfg;
    size_t i;
    int rc;

    for (i = 0; i < cfg->ndatasources; i++, s->nnodes++) {
        dal_node_t *n = reusable_node(prev, cfg, &cfg->datasources[i]);
        if (n != NULL) {
            atomic_fetch_add(&n->refs, 1);
            s->nodes[i] = n;
            s->nreused++;
            continue;
        }
        rc = node_new(s, &cfg->datasources[i], &s->nodes[i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int build(dal_snapshot_t *s, const char *override, const dal_snapshot_t *prev,
                 dal_error_t *err)
{
    const dal_config_t *cfg = s->cfg;
    size_t i;
    int rc;

    s->plugin_path = plugin_path_resolve(override, cfg);
    s->nodes = calloc(cfg->ndatasources ? cfg->ndatasources : 1, sizeof *s->nodes);
    s->tables = calloc(cfg->ntables ? cfg->ntables : 1, sizeof *s->tables);
    if (s->plugin_path == NULL || s->nodes == NULL || s->tables == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = build_nodes(s, prev, err);
    if (rc != 0)
        return rc;
    s->ntables = cfg->ntables;
    for (i = 0; i < cfg->ntables; i++) {
        s->tables[i].cfg = &cfg->tables[i];
        s->fenced |= cfg->tables[i].write_fence != NULL;
    }
    if (snapshot_index(s) != 0)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < cfg->ntables; i++) {
        rc = init_table(s, &s->tables[i], &cfg->tables[i], err);
        if (rc != 0)
            return rc;
    }
    if (cfg->default_datasource != NULL)
        s->default_node = snapshot_node(s, cfg->default_datasource);
    s->server_node = cfg->server_schemas == NULL ? s->default_node
                     : strcmp(cfg->server_schemas, "none") == 0 ? NULL
                     : snapshot_node(s, cfg->server_schemas);
    rc = monitor_set_build(s, &s->monitors, err);
    if (rc != 0)
        return rc;
    return idgen_set_build(s, &s->idgens, err);
}

static void destroy(dal_snapshot_t *s)
{
    size_t i;

    /* ID generators first: they may still use a node's connections */
    idgen_set_free(s->idgens);
    monitor_set_free(s->monitors);
    for (i = 0; i < s->ntables; i++) {
        dal_table_t *t = &s->tables[i];
        if (t->strategy != NULL)
            t->ops->destroy(t->strategy);
        plugin_params_free(t->params);
        /* after destroy: the instance's code lives in this .so */
        plugin_lib_unref(t->lib);
        table_columns_free(t);
        free(t->nodes);
    }
    for (i = 0; i < s->nnodes; i++)
        node_unref(s->nodes[i]);
    free(s->tables);
    free(s->nodes);
    free(s->node_index);
    free(s->table_index);
    free(s->plugin_path);
    config_free(s->cfg);
    free(s);
}

/* A number no other snapshot of this process has had (0 is skipped: it
 * means "none"); wraps after 2^32 reloads, far beyond any process's life. */
static uint32_t next_gen(void)
{
    static atomic_uint counter;
    unsigned int g;

    while ((g = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1) == 0)
        ;
    return (uint32_t)g;
}

int snapshot_rebuild(dal_config_t *cfg, const char *plugin_dir_override,
                     const dal_logger_t *log, const dal_snapshot_t *prev,
                     dal_snapshot_t **out, dal_error_t *err)
{
    dal_snapshot_t *s = calloc(1, sizeof *s);
    int rc;

    *out = NULL;
    if (s == NULL) {
        config_free(cfg);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    s->cfg = cfg;
    s->log = log;
    s->gen = next_gen();
    s->teardown = destroy;
    atomic_init(&s->refs, 1);
    rc = build(s, plugin_dir_override, prev, err);
    if (rc != 0) {
        destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int snapshot_build(dal_config_t *cfg, const char *plugin_dir_override,
                   const dal_logger_t *log, dal_snapshot_t **out, dal_error_t *err)
{
    return snapshot_rebuild(cfg, plugin_dir_override, log, NULL, out, err);
}
