/*
 * route.h -- deciding where a statement goes.
 *
 * Input: the analysed statement, the snapshot, the caller's options (or the
 * statement's /\*+ dal ... *\/ hints).  Output: one route per physical
 * execution -- a data node plus, for every table reference of the
 * statement, the physical table position to rewrite it to (or -1 to leave
 * the name alone).
 *
 * Rules (foundation): a shard value routes every sharded table of the
 * statement through its strategy, and they must agree on the node; DDL on a
 * sharded table without a shard value runs on every physical table; a
 * statement on unsharded tables goes to their datasource, or to
 * default_datasource.  An explicit datasource overrides the node and must
 * agree with a shard value if both are given.
 */
#ifndef DAL_CORE_ROUTE_H
#define DAL_CORE_ROUTE_H

#include <stdint.h>

#include "snapshot.h"
#include "sql.h"

typedef struct dal_route {
    dal_node_t *node;   /* borrowed from the snapshot */
    int32_t *pos;       /* borrowed from the routing: one entry per table ref */
} dal_route_t;

typedef struct dal_routing {
    const dal_sql_t *sql;         /* borrowed: the caller holds a reference */
    const dal_table_t **tables;   /* owned array, one per table ref: its config or NULL */
    const dal_table_t *primary;   /* borrowed: first sharded table, or NULL */
    dal_route_t *routes;          /* owned */
    size_t nroutes;
    int32_t *pos;                 /* owned, nroutes * ntrefs */
} dal_routing_t;

/* Compute the routes.  On failure rt is left empty (dal_routing_clear is
 * still safe) and err says why (DAL_EROUTE, DAL_ESHARD, ...). */
int dal_route(const dal_snapshot_t *snap, const dal_sql_t *sql, const dal_query_opts_t *opts,
              dal_routing_t *rt, dal_error_t *err);
void dal_routing_clear(dal_routing_t *rt);

/* Physical table name "<logical>_<pos>" into out; returns out. */
const char *dal_physical_name(const dal_table_t *t, int32_t pos, char *out, size_t cap);

#endif /* DAL_CORE_ROUTE_H */
