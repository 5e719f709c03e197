/*
 * pool.c -- getting a connection to a node.
 *
 * With `pool = NAME` in [dal], every server of every node (its master and
 * each replica) gets an instance of the pool plugin NAME; the plugin
 * decides when to connect,
 * reuse, validate and close, and connects through the host API's conn_open
 * (host.c), so it never sees URLs or passwords.  Without it, a node uses the
 * built-in idle cache of conn.c.
 */
#include <errmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plugin_load.h"
#include "clock.h"
#include "cancel.h"
#include "iowait.h"
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
static int find_lib(struct dal_snapshot *s, dal_plugin_lib_t **out, dal_error_t *err)
{
    size_t i;

    /* s->nodes[0 .. nnodes) are the nodes built (or carried over) so far */
    for (i = 0; i < s->nnodes; i++) {
        dal_node_t *n = s->nodes[i];
        if (n != NULL && n->master.pool_inst != NULL &&
            strcmp(n->master.pool_inst->lib->desc->name, s->cfg->pool) == 0) {
            plugin_lib_ref(n->master.pool_inst->lib);
            *out = n->master.pool_inst->lib;
            return 0;
        }
    }
    return plugin_find(s->plugin_path, DAL_PLUGIN_POOL, s->cfg->pool, out, err);
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

void url_address(const dal_url_t *u, char *out, size_t cap)
{
    if (u->socket != NULL)
        snprintf(out, cap, "%s", u->socket);
    else
        snprintf(out, cap, "%s:%u", u->host, u->port);
}

static int pool_create(struct dal_snapshot *s, dal_server_t *srv, struct dal_pool *p,
                       dal_error_t *err)
{
    dal_node_t *node = srv->node;
    const dal_config_t *cfg = s->cfg;
    dal_pool_server_t server;
    dal_cfg_params_t merged;
    int rc;

    rc = merge_params(&cfg->pool_params, &node->cfg->pool_params, &merged);
    if (rc != 0)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = plugin_params_build(p->lib, "pool", &merged, cfg->path, cfg->pool_line, &p->params,
                             err);
    free(merged.items);
    if (rc != 0)
        return rc;
    server.datasource = node->cfg->name;
    server.address = p->address;
    rc = p->ops->create(plugin_host_api(), &p->host, &server, p->params, &p->inst, err);
    if (rc != 0) {
        p->inst = NULL;
        err_prefix(err, "%s:%d: pool plugin '%s' (%s) failed to initialise for datasource %s",
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
    plugin_params_free(p->params);
    /* after destroy: the instance's code lives in this .so */
    plugin_lib_unref(p->lib);
    free(p);
}

int pool_build(struct dal_snapshot *s, dal_server_t *srv, dal_error_t *err)
{
    dal_node_t *node = srv->node;
    struct dal_pool *p;
    int rc;

    srv->pool_inst = NULL;
    if (s->cfg->pool == NULL)
        return 0;
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = find_lib(s, &p->lib, err);
    if (rc != 0) {
        err_prefix(err, "%s:%d", s->cfg->path, s->cfg->pool_line);
        rc = rc == DAL_ENOMEM ? rc : DAL_EPLUGIN;
        goto fail;
    }
    p->ops = p->lib->desc->ops;
    p->host.log = s->log;
    /* a node (and its pool) may outlive this snapshot across reloads */
    p->host.snap = NULL;
    p->host.server = srv;
    if (srv->replica < 0)
        snprintf(p->host.component, sizeof p->host.component, "pool_%s:%s", s->cfg->pool,
                 node->cfg->name);
    else
        snprintf(p->host.component, sizeof p->host.component, "pool_%s:%s/replica%d",
                 s->cfg->pool, node->cfg->name, srv->replica + 1);
    snprintf(p->address, sizeof p->address, "%s", srv->address);
    rc = pool_create(s, srv, p, err);
    if (rc != 0)
        goto fail;
    srv->pool_inst = p;
    return 0;
fail:
    pool_free(p);
    return rc;
}

void pool_teardown(dal_server_t *srv)
{
    pool_free(srv->pool_inst);
    srv->pool_inst = NULL;
}

/* least_outstanding needs the statements in flight on each replica; no
 * other policy pays for counting them */
static int counts_outstanding(const dal_server_t *srv)
{
    return srv->replica >= 0 && srv->node->cfg->load_balance == DAL_LB_LEAST_OUTSTANDING;
}

static int take(dal_server_t *srv, dal_conn_t **out, int *reused, dal_error_t *err)
{
    struct dal_pool *p = srv->pool_inst;
    int rc;

    if (p == NULL)
        return connpool_acquire(&srv->pool, out, reused, err);
    *out = NULL;
    rc = p->ops->acquire(p->inst, out, err);
    if (rc != 0)
        return rc;
    /* the plugin cannot tell us; the connection can */
    *reused = (*out)->borrows++ > 0;
    return 0;
}

/* The session variables of the statement the calling thread runs (see
 * pool_set_vars). */
static _Thread_local const dal_conn_vars_t *cur_vars DAL_TLS_SMALL;

void pool_set_vars(const dal_conn_vars_t *v)
{
    cur_vars = v;
}

int server_acquire(dal_server_t *srv, dal_conn_t **out, int *reused, dal_error_t *err)
{
    int rc = take(srv, out, reused, err);
    unsigned int e;

    if (rc == 0 && counts_outstanding(srv))
        atomic_fetch_add_explicit(&srv->outstanding, 1, memory_order_relaxed);
    if (rc != 0)
        return rc;
    /* a connection keeps the variables of its last borrower's session:
     * the same session's next statement finds them set, any other
     * borrower finds them undone */
    if (cur_vars == NULL || !conn_has_vars(*out, cur_vars))
        rc = conn_unset_vars(*out, err);
    if (rc == 0 && cur_vars != NULL)
        rc = conn_apply_vars(*out, cur_vars, err);
    if (rc != 0) {
        /* a refused SET leaves a usable connection; a lost one does not */
        e = mysql_errno(&(*out)->mysql);
        server_release(srv, *out, !(e >= CR_MIN_ERROR && e <= CR_MAX_ERROR));
        *out = NULL;
    }
    return rc;
}

void server_release(dal_server_t *srv, dal_conn_t *c, int reusable)
{
    struct dal_pool *p = srv->pool_inst;

    if (c == NULL)
        return;
    cancel_leave(c);  /* the end of rows streamed to a session */
    infile_leave(&c->infile); /* an idle connection answers for no session */
    /* results left unread (a CALL's last, or an error after its rows) make
     * the connection unusable: libmariadb's reset loops forever on them */
    if (reusable && mysql_more_results(&c->mysql))
        reusable = 0;
    if (c->discard)
        reusable = 0;  /* conn.h */
    if (counts_outstanding(srv))
        atomic_fetch_sub_explicit(&srv->outstanding, 1, memory_order_relaxed);
    if (p == NULL)
        connpool_release(&srv->pool, c, reusable);
    else
        p->ops->release(p->inst, c, reusable);
}

void server_flush(dal_server_t *srv)
{
    if (srv->pool_inst == NULL)
        connpool_flush(&srv->pool);
}

void server_pool_stats(dal_server_t *srv, dal_pool_stats_t *out)
{
    struct dal_pool *p = srv->pool_inst;

    memset(out, 0, sizeof *out);
    if (p == NULL)
        connpool_stats(&srv->pool, out);
    else if (DAL_HAS_FIELD(dal_pool_ops_t, p->ops, stats) && p->ops->stats != NULL)
        p->ops->stats(p->inst, out);
}

/* ------------------------------------------------ statement for leak reports */

static _Thread_local const char *cur_sql DAL_TLS_SMALL;
static _Thread_local const char *cur_trace DAL_TLS_SMALL;

void pool_set_statement(const char *sql, const char *trace_id)
{
    cur_sql = sql;
    cur_trace = trace_id;
}

/* The running statement's variables and text: kept aside while an event
 * loop runs others on the thread (iowait.h). */
typedef struct pool_current {
    const dal_conn_vars_t *vars;
    const char *sql, *trace;
} pool_current_t;

static void current_aside(void *to)
{
    pool_current_t p = {cur_vars, cur_sql, cur_trace};

    memcpy(to, &p, sizeof p);
    cur_vars = NULL;
    cur_sql = cur_trace = NULL;
}

static void current_back(const void *from)
{
    pool_current_t p;

    memcpy(&p, from, sizeof p);
    cur_vars = p.vars;
    cur_sql = p.sql;
    cur_trace = p.trace;
}

static const iowait_state_t current_state = {current_aside, current_back};

__attribute__((constructor)) static void keep_current(void)
{
    _Static_assert(sizeof(pool_current_t) <= IOWAIT_KEPT_BYTES, "kept state too large");
    iowait_keep(&current_state);
}

size_t pool_current_statement(char *buf, size_t cap)
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
