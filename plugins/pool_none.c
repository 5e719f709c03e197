/*
 * pool_none.c -- no pooling: every acquire connects, every release closes.
 *
 * Slow on purpose.  It shows that the pool kind is really pluggable (the
 * core only ever sees acquire and release), and it helps debugging: with
 * `pool = none` every statement gets a brand-new session, so a problem that
 * goes away with it points at state carried between statements.
 *
 * No lock: the instance holds only counters.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include <dal/plugin.h>

typedef struct none {
    const dal_host_api_t *api; /* static table, outlives the instance */
    dal_host_t *host;          /* borrowed, outlives the instance */
    atomic_uint in_use;
    atomic_ullong created;
    atomic_ullong closed;
} none_t;

static int none_create(const dal_host_api_t *api, dal_host_t *host,
                       const dal_pool_server_t *server, const dal_plugin_params_t *params,
                       void **instance, dal_error_t *err)
{
    none_t *n = calloc(1, sizeof *n);

    (void)server, (void)params;
    *instance = NULL;
    if (n == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    n->api = api;
    n->host = host;
    *instance = n;
    return 0;
}

static void none_destroy(void *instance)
{
    free(instance);
}

static int none_acquire(void *instance, dal_conn_t **conn, dal_error_t *err)
{
    none_t *n = instance;
    int rc = n->api->conn_open(n->host, conn, err);

    if (rc != 0)
        return rc;
    atomic_fetch_add_explicit(&n->created, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n->in_use, 1, memory_order_relaxed);
    return 0;
}

static void none_release(void *instance, dal_conn_t *conn, int reusable)
{
    none_t *n = instance;

    (void)reusable; /* closed either way */
    if (conn == NULL)
        return;
    n->api->conn_close(conn);
    atomic_fetch_sub_explicit(&n->in_use, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n->closed, 1, memory_order_relaxed);
}

static void none_stats(void *instance, dal_pool_stats_t *out)
{
    none_t *n = instance;

    out->in_use = atomic_load_explicit(&n->in_use, memory_order_relaxed);
    out->idle = 0;
    out->waiting = 0;
    out->created = atomic_load_explicit(&n->created, memory_order_relaxed);
    out->closed = atomic_load_explicit(&n->closed, memory_order_relaxed);
    out->timed_out = 0;
}

static const dal_pool_ops_t none_ops = {
    sizeof(dal_pool_ops_t),
    none_create,
    none_destroy,
    none_acquire,
    none_release,
    none_stats
};

static const dal_plugin_t none_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_POOL,
    "none",
    DAL_VERSION_STRING,
    "no pooling: a new connection for every statement (for debugging)",
    NULL, /* no parameters */
    &none_ops
};

DAL_PLUGIN_DECLARE(none_plugin)
