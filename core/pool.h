/*
 * pool.h -- getting a connection to a node: through the pool plugin named
 * in [dal] pool (pool.* parameters, overridable per datasource), or the
 * built-in idle cache when none is configured.
 */
#ifndef DAL_CORE_POOL_H
#define DAL_CORE_POOL_H

#include "snapshot.h"

/* Create node->pool_inst if a pool plugin is configured. */
int dal_pool_build(struct dal_snapshot *s, dal_node_t *node, dal_error_t *err);
/* Destroy node->pool_inst (all its connections must be back). */
void dal_pool_destroy(dal_node_t *node);

/* A connection to node's master.  *reused says it had been used before
 * (so a "server gone" error on it may be retried for reads). */
int dal_node_acquire(dal_node_t *node, dal_conn_t **out, int *reused, dal_error_t *err);
/* Give it back; reusable == 0 means it is broken and must be closed. */
void dal_node_release(dal_node_t *node, dal_conn_t *c, int reusable);

#endif /* DAL_CORE_POOL_H */
