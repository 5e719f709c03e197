/*
 * exec.h -- running physical statements on data nodes.
 */
#ifndef DAL_CORE_EXEC_H
#define DAL_CORE_EXEC_H

#include "merge.h"
#include "route.h"
#include "snapshot.h"

/*
 * Run every route of rt: rewrite the SQL for the route's connection, send it,
 * and hand what comes back to the result.  Several routes run at once; up
 * to max_parallel of them their rows are streamed (the connections stay
 * with the result until read), beyond that received whole.  With *plan
 * (taken, *plan set to NULL) the rows are merged as it says, else
 * concatenated in route order; affected rows are summed.  The result may
 * hold connections of rt's nodes: the caller keeps their snapshot alive
 * until dal_result_free (result_on_free).  On success *out is owned by the
 * caller (dal_result_free).  On failure err names the datasource and server.
 */
static inline int exec_routes(const dal_routing_t *rt, const dal_value_t *params,
                              size_t nparams, dal_merge_spec_t **spec, dal_result_t **out,
                              dal_error_t *err);

/* exec_routes with some routes on the caller's connections: held[i] (held
 * is nroutes long, borrowed) is route i's, or NULL for one of its server's
 * pool.  A held connection is used as is (no retry elsewhere, never
 * released here), and rows are then received whole, so every connection is
 * free again when this returns.  After a failure, exec_conn_lost tells
 * which held connection died. */
int exec_routes_on(const dal_routing_t *rt, dal_conn_t *const *held, const dal_value_t *params,
                   size_t nparams, dal_merge_spec_t **spec, dal_result_t **out, dal_error_t *err);

/* The last statement on c failed on the client side: c is unusable. */
int exec_conn_lost(const dal_conn_t *c);

static inline int exec_routes(const dal_routing_t *rt, const dal_value_t *params,
                              size_t nparams, dal_merge_spec_t **spec, dal_result_t **out,
                              dal_error_t *err)
{
    return exec_routes_on(rt, NULL, params, nparams, spec, out, err);
}

/* What exec calls when a statement failed with a lock wait timeout
 * (ER_LOCK_WAIT_TIMEOUT) on node: a module above it may add to err why the
 * rows are locked (xa.c names dal's XA branches in doubt there).  A hook,
 * so that exec stays below the transaction layer; set at start (NULL:
 * nothing is added). */
/* A CALL whose procedure raises an error after its first result: on 1,
 * the calling thread's statements return 0 with the error chained as the
 * last set (result_new_error_set, dal_result_set_error); on 0 (the
 * default) they fail with it.  Set by a session around its statement
 * (dal_session_keep_sets). */
void exec_keep_sets(int on);

typedef void (*exec_lock_wait_fn)(dal_node_t *node, dal_error_t *err);
void exec_on_lock_wait(exec_lock_wait_fn fn);

/* Run the single route of rt on connection c (a session's transaction, or
 * its pinned connection), rows received whole.
 * *broken says c can no longer be used. */
int exec_on_conn(const dal_routing_t *rt, dal_conn_t *c, const dal_value_t *params,
                 size_t nparams, dal_result_t **out, int *broken, dal_error_t *err);

/* Run sql (with ? params, no table rewriting) on one node. */
int exec_direct(dal_node_t *node, const char *sql, const dal_value_t *params,
                size_t nparams, dal_result_t **out, dal_error_t *err);

#endif /* DAL_CORE_EXEC_H */
