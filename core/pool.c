/*
 * pool.c -- getting a connection to a node.
 *
 * (The pool plugin kind lands with the pooling work; until then every node
 * uses the built-in idle cache of conn.c.)
 */
#include "error.h"
#include "pool.h"

int dal_pool_build(struct dal_snapshot *s, dal_node_t *node, dal_error_t *err)
{
    node->pool_inst = NULL;
    if (s->cfg->pool != NULL)
        return dal_err_set(err, DAL_EUNSUPPORTED, "%s:%d: pool plugins are not supported yet",
                           s->cfg->path, s->cfg->pool_line);
    return 0;
}

void dal_pool_destroy(dal_node_t *node)
{
    (void)node;
}

int dal_node_acquire(dal_node_t *node, dal_conn_t **out, int *reused, dal_error_t *err)
{
    return dal_connpool_acquire(&node->pool, out, reused, err);
}

void dal_node_release(dal_node_t *node, dal_conn_t *c, int reusable)
{
    dal_connpool_release(&node->pool, c, reusable);
}
