/*
 * route_int.h -- the router's insides, shared by its files.
 *
 * Routing (route.h's route_statement) is done in six files, each calling
 * only the ones after it: route.c reads the request, routes unsharded
 * statements, and owns the memo and the entry point; route_group.c groups
 * the table references by scope and shard-key joins and decides which group
 * drives the routes; route_cond.c turns conditions into sets of table
 * positions; route_build.c makes routes from positions and splits IN lists
 * and INSERT rows; route_check.c refuses what a route must not do;
 * route_names.c tells which table reference a name means in a scope.
 * route_ names are not part of the core's interface.
 */
#ifndef DAL_CORE_ROUTE_INT_H
#define DAL_CORE_ROUTE_INT_H

#include <stdint.h>

#include "error.h"
#include "route.h"
#include "small.h"
#include "value.h"

/* The table positions a statement touches: every one, or a sorted list.
 * Most statements touch one: a short list lives inside the set, so routing
 * them allocates nothing.  A set is moved with posset_move, not copied. */
#define POSSET_INLINE 4

typedef struct posset {
    int all;
    uint32_t *v;    /* owned (or inl), sorted, unique */
    size_t n;
    uint32_t inl[POSSET_INLINE];
} posset_t;

#define POSSET_ALL  {1, NULL, 0, {0}}
#define POSSET_NONE {0, NULL, 0, {0}}

/* An operand's value; string literals are decoded into buf or heap. */
typedef struct opval {
    dal_value_t v;
    char *heap;
    char buf[128];
} opval_t;

enum { OPND_UNUSABLE = 1 };

/* One name in route_names.c's hash: a table reference's alias (or name)
 * or a source's name in its scope, or a sharded table's shard key. */
typedef struct route_name {
    const char *name;   /* borrowed from the dal_sql_t or the snapshot; NULL: empty slot */
    int kind;
    int scope;
    int32_t tref;       /* the first table reference so named; -1: a source */
} route_name_t;

#define ROUTE_NAMES_INLINE 8
#define ROUTE_LISTS_INLINE 32

typedef struct route_req {
    const dal_value_t *shard_value; /* borrowed; NULL: none */
    dal_value_t hint_value;         /* storage when the value came from a hint */
    dal_node_t *node;               /* explicit datasource, or NULL */
    int raw;                        /* hint raw: the text as written, on node */
} route_req_t;

/* Everything route() works with, so helpers take one argument. */
typedef struct router {
    const dal_snapshot_t *snap;
    const dal_sql_t *sql;
    const dal_value_t *params;
    size_t nparams;
    route_req_t req;
    const char *schema;          /* borrowed: the session's [schema], NULL: the top level */
    dal_node_t *dflt;            /* that schema's default datasource, or NULL */
    int server_db;               /* schema is none of the configuration's: a database of
                                    [dal] server_schemas' datasource (dflt), whose table
                                    names are its own, none of dal's */
    dal_routing_t *rt;
    dal_error_t *err;
    const dal_route_keys_t *keys; /* borrowed: a lookup's shard-key values, or NULL */
    char *in_group;              /* owned (or in_group_inl), per tref: member of the
                                    group being routed */
    int32_t *grp;                /* owned (or grp_inl), per tref: the root tref of its
                                    group, -1 for a table dal does not shard */
    int32_t *lead;               /* owned (or lead_inl), per group root: the tref of an
                                    enclosing scope the group follows, or -1 */
    int32_t marked;              /* the group whose members in_group marks; -1: none,
                                    -2: not one group (clear all before marking) */
    route_name_t *names;         /* owned (or names_inl): route_names.c's hash */
    size_t names_mask;           /* its size - 1 (a power of two) */
    int32_t *lists;              /* owned (or lists_inl): the arrays below, in one block */
    int32_t *cond_tref;          /* per condition: the tref it narrows (route_cond_on_tref),
                                    or -1 */
    int32_t *cond_next;          /* per condition: the next one narrowing its group, or -1 */
    int32_t *cond_head;          /* per group root: its first condition, or -1 */
    int32_t *member_next;        /* per tref: the next tref of its group, or -1 */
    int32_t *member_head;        /* per group root: its first tref */
    int32_t *scope_next;         /* per tref: the next tref of its scope, or -1 */
    int32_t *scope_head;         /* per scope: its first tref, or -1 */
    char in_group_inl[DAL_ROUTING_INLINE];
    int32_t grp_inl[DAL_ROUTING_INLINE], lead_inl[DAL_ROUTING_INLINE];
    /* last: route() does not zero them (route_names_build, make_lists fill them) */
    route_name_t names_inl[ROUTE_NAMES_INLINE];
    int32_t lists_inl[ROUTE_LISTS_INLINE];
} router_t;

/* A list whose items the routes share out: spans and owning positions. */
typedef struct split_list {
    dal_cut_t *items;   /* owned */
    int64_t *pos;       /* owned */
    size_t n;
} split_list_t;

/* ------------------------------------------------------------ route_cond.c */

/* Sort and drop duplicates. */
void posset_normalize(posset_t *s);

int posset_has(const posset_t *s, uint32_t p);

/* Does condition c (an index into conds) narrow table ref i (a value on
 * its shard key, in its own scope)?  After route_sharded's make_groups. */
int route_cond_on_tref(const router_t *r, size_t c, size_t i);

/* The positions the WHERE clause allows for group g (its root), whose
 * tables are marked in r->in_group. */
int route_where_posset(router_t *r, int32_t g, posset_t *set);

/* Make set (initialised, maybe holding positions) the single position p. */
int route_single_posset(uint32_t p, posset_t *set, dal_error_t *err);

void posset_free(posset_t *s);

/* One strategy call, with the result checked: a plugin bug must not
 * become a silently wrong shard. */
int route_locate(const dal_table_t *t, const dal_value_t *v, uint32_t *table, dal_error_t *err);

/* Locate an operand's value; *pos = -1 for NULL (matches nothing) and
 * returns OPND_UNUSABLE for an expression. */
int route_locate_opnd(router_t *r, const dal_table_t *t, const dal_sql_opnd_t *o, int64_t *pos);

/* Empty s (freed first) with room for n positions. */
int posset_alloc(posset_t *s, size_t n);

/* ------------------------------------------------------------ route_names.c */

/*
 * Names are resolved by scope (sql.h): a condition narrows only a table of
 * its own scope, and a column dal cannot tie to a table for certain -- a
 * derived table's column, an alias it does not know, an outer table seen
 * from a subquery -- narrows nothing.
 */
int route_is_sharded(const router_t *r, size_t k);

/* Index the statement's names by scope (r->names); r->rt->tables must be
 * filled.  Free with route_names_free (also when this fails). */
int route_names_build(router_t *r);
void route_names_free(router_t *r);

/* The sharded table reference whose shard key the column [q.]col, written
 * in scope sc, is; -1 if none.  An unqualified column belongs to a table of
 * its own scope (SQL looks there first, and every sharded table has its
 * shard key, so the same name anywhere else in the scope would be
 * ambiguous).  before, when not 0, keeps to the tables written before that
 * offset (the left side of USING).  own: the table must be of scope sc.
 * After route_names_build. */
long route_key_tref(const router_t *r, int sc, const char *q, const char *col,
                     uint32_t before, int own);

/* ------------------------------------------------------------ route_group.c */

int route_sharded(router_t *r);

/* ------------------------------------------------------------ route.c */

void route_split_lists_free(split_list_t *l, size_t n);

/* Unsharded and broadcast tables named next to sharded ones must exist on
 * every node the statement runs on. */
int route_check_others(router_t *r);

/* The IN conditions on the group's shard key, with each value's position.
 * A list holding an expression is not split (every route keeps it whole). */
int route_in_lists(router_t *r, size_t gtref, split_list_t **out, size_t *nout);

int route_scatter_allowed(router_t *r);

/* INSERT/REPLACE into a sharded table: rows grouped by position. */
int route_insert(router_t *r, size_t gtref);

/* Give each route the cuts of every list, route by route (cuts must be
 * grouped per route, sorted by offset within one). */
int route_cut_routes(dal_routing_t *rt, const split_list_t *lists, size_t nlists,
                      const size_t *group_tref, dal_error_t *err);

/* One route per position of set (primary's layout), skipping positions not
 * on an explicitly requested node.  Group members get the position. */
int route_routes_from_positions(router_t *r, const posset_t *set);

/* The positions (routes x table references) one statement's routing may
 * hold: 64 MiB of them.  A real statement is far below it (1,024 tables x
 * 100 references is 102,400); a client's statement of many thousand table
 * references scattered over many tables would otherwise make dal hold
 * gigabytes. */
#define ROUTE_MAX_POSITIONS ((size_t)16 << 20)

/* rt's routes made room for: nroutes routes over ntrefs table references,
 * every position -1.  Inline: every statement makes its routes here, and
 * the loops fold into the callers' known sizes. */
static inline int route_alloc_routes(dal_routing_t *rt, size_t nroutes, size_t ntrefs,
                                     dal_error_t *err)
{
    size_t i;

    if (ntrefs > 0 && nroutes > ROUTE_MAX_POSITIONS / ntrefs)
        return err_set(err, DAL_EUNSUPPORTED,
                       "the statement names %zu tables and runs on %zu physical tables: more "
                       "than dal routes at once (%zu routes x table references); split it",
                       ntrefs, nroutes, ROUTE_MAX_POSITIONS);
    rt->routes = small_alloc(&rt->route_inl, 1, nroutes, sizeof *rt->routes, 1);
    rt->pos = small_alloc(rt->pos_inl, DAL_ROUTING_INLINE, nroutes * ntrefs,
                          sizeof *rt->pos, 0);
    if (rt->routes == NULL || rt->pos == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < nroutes * ntrefs; i++)
        rt->pos[i] = -1;
    for (i = 0; i < nroutes; i++)
        rt->routes[i].pos = rt->pos + i * ntrefs;
    rt->nroutes = nroutes;
    return 0;
}

/* Refuse an UPDATE (r's statement is one) that sets a sharded table's
 * shard key (the row would have to move), and SQL text inside the
 * statement (PREPARE, EXECUTE IMMEDIATE, LOAD DATA) naming tables dal
 * cannot route whole. */
int route_check_update_key(router_t *r);
int route_check_opaque(router_t *r);

#endif /* DAL_CORE_ROUTE_INT_H */
