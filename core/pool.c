/*
 * pool.c -- getting a connection to a node.
 *
 * With `pool = NAME` in [dal], every node gets an instance of the pool
 * plugin NAME for its master server; the plugin decides when to connect,
 * reuse, validate and close, and connects through the host API's conn_open
 * (host.c), so it never sees URLs or passwords.  Without it, a node uses the
 * built-in idle cache of conn.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "host.h"
#include "pool.h"

struct dal_pool {
    dal_plugin_lib_t *lib;        /* one reference */
    const dal_pool_ops_t *ops;    /* inside lib */
    void *inst;                   /* owned via ops->destroy */
    dal_plugin_params_t *params;  /* owned; outlives inst, which may keep its strings */
    struct dal_host host;
    char address[320];            /* "host:port" or the socket path */
};

/* The pool .so, loaded once per snapshot: nodes built earlier share it. */
static int find_lib(struct dal_snapshot *s, dal_node_t *node, dal_plugin_lib_t **out,
                    dal_error_t *err)
{
    size_t i;

    (void)node;
    /* s->nodes[0 .. nnodes) are the nodes built (or carried over) so far */
    for (i = 0; i < s->nnodes; i++) {
        dal_node_t *n = s->nodes[i];
        if (n != NULL && n->pool_inst != NULL &&
            strcmp(n->pool_inst->lib->desc->name, s->cfg->pool) == 0) {
            dal_plugin_lib_ref(n->pool_inst->lib);
            *out = n->pool_inst->lib;
            return 0;
        }
    }
    return dal_plugin_find(s->plugin_path, DAL_PLUGIN_POOL, s->cfg->pool, out, err);
}

/* [dal]'s pool.* keys with the datasource's own pool.* keys taking
 * precedence.  Items are borrowed from the config; only the array is owned. */
static int merge_params(const dal_cfg_params_t *global, const dal_cfg_params_t *local,
                        dal_cfg_params_t *out)
{
    size_t i, j;

    out->n = 0;
    out->items = calloc(global->n + local->n + 1, sizeof *out->items);
    if (out->items == NULL)
        return -1;
    for (i = 0; i < local->n; i++)
        out->items[out->n++] = local->items[i];
    for (i = 0; i < global->n; i++) {
        for (j = 0; j < local->n; j++)
            if (strcmp(local->items[j].name, global->items[i].name) == 0)
                break;
        if (j == local->n)
            out->items[out->n++] = global->items[i];
    }
    return 0;
}

void dal_node_address(const dal_node_t *node, char *out, size_t cap)
{
    const dal_url_t *u = &node->cfg->master;

    if (u->socket != NULL)
        snprintf(out, cap, "%s", u->socket);
    else
        snprintf(out, cap, "%s:%u", u->host, u->port);
}

static int pool_create(struct dal_snapshot *s, dal_node_t *node, struct dal_pool *p,
                       dal_error_t *err)
{
    const dal_config_t *cfg = s->cfg;
    dal_pool_server_t server;
    dal_cfg_params_t merged;
    int rc;

    rc = merge_params(&cfg->pool_params, &node->cfg->pool_params, &merged);
    if (rc != 0)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    rc = dal_plugin_params_build(p->lib, "pool", &merged, cfg->path, cfg->pool_line, &p->params,
                                 err);
    free(merged.items);
    if (rc != 0)
        return rc;
    server.datasource = node->cfg->name;
    server.address = p->address;
    rc = p->ops->create(dal_host_api(), &p->host, &server, p->params, &p->inst, err);
    if (rc != 0) {
        p->inst = NULL;
        dal_err_prefix(err, "%s:%d: pool plugin '%s' (%s) failed to initialise for datasource %s",
                       cfg->path, cfg->pool_line, cfg->pool, p->lib->path, node->cfg->name);
        return DAL_EPLUGIN;
    }
    return 0;
}

static void pool_free(struct dal_pool *p)
{
    if (p == NULL)
        return;
    if (p->inst != NULL)
        p->ops->destroy(p->inst);
    dal_plugin_params_free(p->params);
    /* after destroy: the instance's code lives in this .so */
    dal_plugin_lib_unref(p->lib);
    free(p);
}

int dal_pool_build(struct dal_snapshot *s, dal_node_t *node, dal_error_t *err)
{
    struct dal_pool *p;
    int rc;

    node->pool_inst = NULL;
    if (s->cfg->pool == NULL)
        return 0;
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    rc = find_lib(s, node, &p->lib, err);
    if (rc != 0) {
        dal_err_prefix(err, "%s:%d", s->cfg->path, s->cfg->pool_line);
        rc = rc == DAL_ENOMEM ? rc : DAL_EPLUGIN;
        goto fail;
    }
    p->ops = p->lib->desc->ops;
    p->host.log = s->log;
    /* a node (and its pool) may outlive this snapshot across reloads */
    p->host.snap = NULL;
    p->host.node = node;
    snprintf(p->host.component, sizeof p->host.component, "pool_%s:%s", s->cfg->pool,
             node->cfg->name);
    dal_node_address(node, p->address, sizeof p->address);
    rc = pool_create(s, node, p, err);
    if (rc != 0)
        goto fail;
    node->pool_inst = p;
    return 0;
fail:
    pool_free(p);
    return rc;
}

void dal_pool_destroy(dal_node_t *node)
{
    pool_free(node->pool_inst);
    node->pool_inst = NULL;
}

int dal_node_acquire(dal_node_t *node, dal_conn_t **out, int *reused, dal_error_t *err)
{
    struct dal_pool *p = node->pool_inst;
    int rc;

    if (p == NULL)
        return dal_connpool_acquire(&node->pool, out, reused, err);
    *out = NULL;
    rc = p->ops->acquire(p->inst, out, err);
    if (rc != 0)
        return rc;
    /* the plugin cannot tell us; the connection can */
    *reused = (*out)->borrows++ > 0;
    return 0;
}

void dal_node_release(dal_node_t *node, dal_conn_t *c, int reusable)
{
    struct dal_pool *p = node->pool_inst;

    if (p == NULL)
        dal_connpool_release(&node->pool, c, reusable);
    else if (c != NULL)
        p->ops->release(p->inst, c, reusable);
}

void dal_node_pool_stats(dal_node_t *node, dal_pool_stats_t *out)
{
    struct dal_pool *p = node->pool_inst;

    memset(out, 0, sizeof *out);
    if (p == NULL)
        dal_connpool_stats(&node->pool, out);
    else if (p->ops->struct_size >= sizeof(dal_pool_ops_t) && p->ops->stats != NULL)
        p->ops->stats(p->inst, out);
}

/* ------------------------------------------------ statement for leak reports */

static _Thread_local const char *cur_sql;
static _Thread_local const char *cur_trace;

void dal_pool_set_statement(const char *sql, const char *trace_id)
{
    cur_sql = sql;
    cur_trace = trace_id;
}

size_t dal_pool_current_statement(char *buf, size_t cap)
{
    int n;

    if (cur_sql == NULL || cap == 0)
        return 0;
    if (cur_trace != NULL)
        n = snprintf(buf, cap, "trace_id=%s %s", cur_trace, cur_sql);
    else
        n = snprintf(buf, cap, "%s", cur_sql);
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}
