/*
 * route.h -- deciding where a statement goes.
 *
 * Input: the analysed statement, the snapshot, the caller's options (or the
 * statement's dal hints) and parameters.  Output: one route per physical
 * execution -- a data node, for every table reference the physical table
 * position to rewrite it to (or -1 to leave the name alone), and the spans
 * of the SQL this route must leave out (the rows of a multi-row INSERT and
 * the IN-list values that belong to other routes).
 *
 * Rules:
 *  - The sharded tables of one statement are routed together: they must be
 *    the same table or members of one binding group (same layout), unless
 *    each resolves to a single node.
 *  - Shard-key conditions at the top level of WHERE narrow the positions:
 *    `k = v` one, `k IN (...)` the positions of its values (each route keeps
 *    only its own values), ranges what the strategy's locate_range says.
 *    Several conditions intersect.  No usable condition: every position
 *    (scatter), unless a table says allow_scatter = false.
 *  - INSERT rows are routed one by one and grouped per position.
 *  - An explicit shard value (option or hint) picks one position; SQL
 *    conditions that exclude it are a contradiction, reported as an error.
 *  - An explicit datasource picks the node; a shard value routing elsewhere
 *    is an error.
 *  - UPDATE of a shard key is refused (it would move the row between shards).
 *  - Broadcast tables: writes go to every node of their group, reads to one.
 *  - Unsharded tables go to their datasource, or to default_datasource.
 */
#ifndef DAL_CORE_ROUTE_H
#define DAL_CORE_ROUTE_H

#include <stdint.h>

#include "snapshot.h"
#include "sql.h"

/* A span of the SQL text a route leaves out. */
typedef struct dal_cut {
    uint32_t off, len;
} dal_cut_t;

typedef struct route_statement {
    dal_node_t *node;   /* borrowed from the snapshot */
    int32_t *pos;       /* borrowed from the routing: one entry per table ref */
    uint32_t cut_first; /* this route's cuts: routing->cuts[cut_first .. +ncuts) */
    uint32_t ncuts;
    dal_server_t *server; /* borrowed: the master or a replica of node, chosen by
                             select_servers (replica.h); NULL: the master */
} dal_route_t;

/* Room inside dal_routing_t for the usual statement: one route, a few
 * table references.  Routing it then allocates nothing. */
#define DAL_ROUTING_INLINE 4

/* Points into itself: never copied, only cleared (routing_clear). */
typedef struct dal_routing {
    const dal_sql_t *sql;         /* borrowed: the caller holds a reference */
    const dal_table_t **tables;   /* owned array (or tables_inl), one per table ref: its
                                     config or NULL */
    const dal_table_t *primary;   /* borrowed: the table the routes are made for (the
                                     driver, route.c), or NULL */
    const char *merge_key;        /* borrowed: a shard key whose values the routes split
                                     between them in the result's rows (so groups and
                                     DISTINCT values on it are per node), or NULL */
    dal_route_t *routes;          /* owned (or &route_inl) */
    size_t nroutes;
    int32_t *pos;                 /* owned (or pos_inl), nroutes * ntrefs */
    dal_cut_t *cuts;              /* owned, in route order, each route's sorted by offset */
    size_t ncuts, cuts_cap;
    int scatter;                  /* no condition narrowed the positions */
    unsigned int max_parallel;    /* routes run at once ([dal] max_parallel) */
    const struct dal_edits *merge_edits; /* borrowed: the merge's edits of every route's SQL
                                            (merge.h), or NULL */
    /* set by the caller for execution (exec.c) */
    const struct dal_monitor_set *monitors; /* borrowed; NULL: no events */
    const char *trace_id;         /* borrowed; NULL: no trace comment */
    const char *sql_norm;         /* borrowed: the statement with literals as ?, for events */
    struct dal_ryw *ryw;          /* borrowed; writes on a master are noted there for
                                     read-your-writes (replica.h); NULL: not noted */
    int sprep;                    /* run as server-side prepared statements where
                                     possible (sprep.h) */
    uint32_t sprep_cache;         /* [dal] server_prepare_cache: handles per connection */
    int describe;                 /* prepare route 0 on its server for its columns and run
                                     nothing (dal_query_opts_t.describe; describe.h) */
    uint32_t snap_gen;            /* the snapshot's gen: the table names the SQL is written
                                     with (sprep.c's route memo) */
    const char *lit_text;         /* borrowed: a text statement run on its shape's analysis
                                     (sql_shape.h): the client's text, or NULL */
    const dal_sql_span_t *lit_spans; /* borrowed: with lit_text, the literal each ? stands
                                     for, written back as the client wrote it */
    const char *client_text;      /* borrowed: the caller's text of a text statement given
                                     without parameters, or NULL (exec/relay.c compares
                                     what runs with it) */
    size_t client_len;
    const struct dal_relay *relay; /* borrowed: the caller's result relay (dal.h), or NULL */
    void *relay_ctx;
    int qualify;                  /* the session's connections are in a database of the
                                     servers' (or none), not the nodes' own: a logical
                                     database's `db.` in front of a configured table
                                     becomes the route's node's URL database, not dropped */
    const dal_table_t *tables_inl[DAL_ROUTING_INLINE];
    dal_route_t route_inl;
    int32_t pos_inl[DAL_ROUTING_INLINE];
} dal_routing_t;

/* Compute the routes.  schema (borrowed; NULL: the top level) is the
 * logical database unqualified table names belong to: a table of another
 * schema is refused, a name no table declares goes to the schema's
 * default_datasource.  A schema no [schema] declares is a database of
 * [dal] server_schemas' datasource: its names are none of dal's, and the
 * statement runs there as written (DAL_EROUTE without server_schemas);
 * "" is no database (a session's whose database was dropped), routed so.
 * params are the statement's ? values (nparams must
 * match).  On failure rt is left empty (routing_clear is still safe) and
 * err says why (DAL_EROUTE, DAL_ESHARD, DAL_EUNSUPPORTED, ...). */
int route_statement(const dal_snapshot_t *snap, const char *schema, const dal_sql_t *sql,
                    const dal_query_opts_t *opts, const dal_value_t *params, size_t nparams, dal_routing_t *rt, dal_error_t *err);
void routing_clear(dal_routing_t *rt);

/* The value routing takes the literal operand o of the text sql (borrowed)
 * for, into *v: NULL, TRUE/FALSE as 1/0, a number that fits an int64 as an
 * int, anything else as its decoded text, held in buf[0..cap) or, when
 * longer, in *heap (malloc'd, the caller frees it; NULL when not needed).
 * 0, or DAL_ESQL (malformed) / DAL_ENOMEM with err set. */
int route_literal_value(const char *sql, const dal_sql_opnd_t *o, dal_value_t *v, char *buf,
                        size_t cap, char **heap, dal_error_t *err);

/* Shard-key values a lookup read found for a statement (stmt/lookup.c):
 * the positions of table are narrowed to theirs.  None (nkeys 0): no row
 * can match, so one table answers, with nothing. */
typedef struct dal_route_keys {
    const dal_table_t *table; /* borrowed: the table whose shard key they are */
    int scope;                /* the scope of its table reference (sql.h) */
    const dal_value_t *keys;  /* borrowed, nkeys of them */
    size_t nkeys;
} dal_route_keys_t;

/* route_statement with the positions of keys->table (its reference in
 * scope keys->scope) narrowed to those of keys. */
int route_statement_keys(const dal_snapshot_t *snap, const char *schema, const dal_sql_t *sql,
                         const dal_query_opts_t *opts, const dal_value_t *params, size_t nparams,
                         const dal_route_keys_t *keys, dal_routing_t *rt, dal_error_t *err);

/* Name ev's logical table: the first sharded table's configured name, or
 * else the statement's first table as written.  That text belongs to the
 * cached analysis, not to the snapshot, so labels_gen is then cleared
 * (see monitor_event_init). */
void routing_label_table(const dal_routing_t *rt, dal_event_t *ev);

#endif /* DAL_CORE_ROUTE_H */
