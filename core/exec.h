/*
 * exec.h -- running physical statements on data nodes.
 */
#ifndef DAL_CORE_EXEC_H
#define DAL_CORE_EXEC_H

#include "route.h"
#include "snapshot.h"

/*
 * Run every route of rt: rewrite the SQL for the route's connection, send it,
 * receive the whole result.  Results of several routes are concatenated in
 * route order; affected rows are summed.  On success *out is owned by the
 * caller (dal_result_free).  On failure err names the datasource and server.
 */
int dal_exec_routes(const dal_routing_t *rt, const dal_value_t *params, size_t nparams,
                    dal_result_t **out, dal_error_t *err);

/* Run the single route of rt on connection c (a session's transaction).
 * *broken says c can no longer be used. */
int dal_exec_on_conn(const dal_routing_t *rt, dal_conn_t *c, const dal_value_t *params,
                     size_t nparams, dal_result_t **out, int *broken, dal_error_t *err);

/* Run sql (with ? params, no table rewriting) on one node. */
int dal_exec_direct(dal_node_t *node, const char *sql, const dal_value_t *params,
                    size_t nparams, dal_result_t **out, dal_error_t *err);

#endif /* DAL_CORE_EXEC_H */
