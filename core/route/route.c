/*
 * route.c -- deciding where a statement goes.
 *
 * The work is done in three steps: read what the caller asked for
 * (options, hints), classify the table references (sharded group,
 * independent sharded tables, broadcast, single), then turn the set of
 * table positions the statement touches into routes.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "error.h"
#include "route_int.h"
#include "small.h"
#include "sql_lex.h"

/* ------------------------------------------------------------ position sets */

/* ------------------------------------------------------------------ values */

/* ------------------------------------------------------------- the request */

static int read_request(const dal_snapshot_t *snap, const dal_sql_t *sql,
                        const dal_query_opts_t *opts, route_req_t *req, dal_error_t *err)
{
    const char *ds = opts ? opts->datasource : NULL;
    const char *hv;

    memset(req, 0, sizeof *req);
    if (sql_hint_value(sql, "transaction_mode") != NULL)
        return err_set(err, DAL_EINVAL, "dal hint transaction_mode goes on BEGIN or START "
                                        "TRANSACTION, not on this statement");
    req->shard_value = opts ? opts->shard_value : NULL;
    if (req->shard_value == NULL && (hv = sql_hint_value(sql, "shard_value")) != NULL) {
        req->hint_value = dal_str(hv);
        req->shard_value = &req->hint_value;
    }
    req->raw = sql_hint_value(sql, "raw") != NULL;
    if (ds == NULL)
        ds = sql_hint_value(sql, "datasource");
    if (ds == NULL)
        return req->raw ? err_set(err, DAL_EROUTE, "dal hint raw needs datasource=NAME: the "
                                  "statement runs as written on that datasource") : 0;
    req->node = snapshot_node(snap, ds);
    if (req->node == NULL)
        return err_set(err, DAL_EROUTE, "unknown datasource '%s' (not a [datasource] section)",
                       ds);
    return 0;
}

/* --------------------------------------------------------------- the state */

/* ---------------------------------------------------------- conditions */

/* The broadcast table this statement writes, if any. */
static const dal_table_t *written_broadcast(const router_t *r)
{
    size_t i;

    if (!sql_kind_writes(r->sql->kind))
        return NULL;
    for (i = 0; i < r->sql->ntrefs; i++) {
        const dal_table_t *t = r->rt->tables[i];
        if (t && t->cfg->kind == DAL_TABLE_BROADCAST && r->sql->trefs[i].role != DAL_TREF_FROM)
            return t;
    }
    return NULL;
}

/* Reads of broadcast tables spread over their copies. */
static atomic_uint broadcast_rr;

static int route_unsharded(router_t *r)
{
    dal_routing_t *rt = r->rt;
    const dal_table_t *bc = written_broadcast(r), *first = NULL;
    dal_node_t *node = r->req.node;
    size_t i, k = 0;
    int rc;

    if (r->req.shard_value != NULL)
        return err_set(r->err, DAL_EROUTE,
                       "a shard value was given but the statement names no sharded table");
    if (bc != NULL && node == NULL) {
        rc = route_alloc_routes(rt, bc->cfg->db_shard_num, r->sql->ntrefs, r->err);
        for (i = 0; rc == 0 && i < bc->cfg->db_shard_num; i++)
            rt->routes[k++].node = bc->nodes[i];
        return rc;
    }
    for (i = 0; node == NULL && i < r->sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t == NULL || t->cfg->kind == DAL_TABLE_BROADCAST)
            continue;
        if (first != NULL && t->nodes[0] != first->nodes[0])
            return err_set(r->err, DAL_EROUTE,
                           "tables %s and %s are on different datasources (%s, %s)",
                           first->cfg->name, t->cfg->name, first->nodes[0]->cfg->name,
                           t->nodes[0]->cfg->name);
        first = t;
    }
    if (node == NULL && first != NULL)
        node = first->nodes[0];
    for (i = 0; node == NULL && i < r->sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t != NULL && t->cfg->kind == DAL_TABLE_BROADCAST)
            node = t->nodes[atomic_fetch_add(&broadcast_rr, 1) % t->cfg->db_shard_num];
    }
    if (node == NULL)
        node = r->dflt;
    /* a statement that names no table at all (SELECT 1, a pool's validation
     * query, SELECT NOW()) means the same on every datasource: the first */
    if (node == NULL && r->sql->ntrefs == 0 && r->snap->nnodes > 0)
        node = r->snap->nodes[0];
    if (node == NULL)
        return err_set(r->err, DAL_EROUTE,
                       r->schema == NULL
                           ? "no datasource for this statement: it names no configured table "
                             "and there is no [dal] default_datasource"
                           : "no datasource for this statement: it names no table of [schema "
                             "%s], which has no default_datasource", r->schema);
    rc = route_alloc_routes(rt, 1, r->sql->ntrefs, r->err);
    if (rc == 0)
        rt->routes[0].node = node;
    return rc;
}

/* ------------------------------------------------------------------ groups */

/* ------------------------------------------------------ INSERT ... SELECT */

/*
 * INSERT INTO t ... SELECT: each row stays on the node that runs it, so
 * the rows' shard key must be known to belong there.  It is when the
 * SELECT puts a source table's shard key into t's shard key and the two
 * are laid out alike (the row goes to the position it came from), or a
 * literal or ? (one position).  The INSERT's target takes no part in
 * grouping; it is placed on each route once the SELECT is routed.
 */

/* Hint raw: one route on the datasource named, no table renamed (only the
 * hints come out), for administration on physical tables. */
static int route_raw(router_t *r)
{
    int rc;

    if (r->req.shard_value != NULL)
        return err_set(r->err, DAL_EROUTE, "dal hint raw takes no shard value: it runs the "
                       "statement as written on the datasource named");
    rc = route_alloc_routes(r->rt, 1, r->sql->ntrefs, r->err);
    if (rc == 0)
        r->rt->routes[0].node = r->req.node;
    r->rt->primary = NULL;
    return rc;
}

/* ------------------------------------------------------------------ memo */

/*
 * Most statements a service sends are routed by one `key = ?` on one
 * sharded table.  Once the full routing has found a statement to be of that
 * shape, the statement remembers which table and condition decided, for the
 * snapshot it was routed with: later executions locate the value and are
 * done.  The memo is one atomic word on the cached analysis -- snapshot
 * generation (32 bits), table index, condition index -- so it needs no
 * lock and can never point into a snapshot that is gone: another
 * snapshot's generation simply does not match.
 *
 * A statement of one table that is not sharded (nor broadcast: its reads
 * take turns among the copies), or of none, goes to one datasource that
 * the snapshot alone decides: the table's, else the default one.  Its
 * memo has MEMO_UNSHARDED for a condition and the table's index + 1 (0:
 * a table the configuration does not name, or none).
 */
#define MEMO_UNSHARDED 0xffffu

static uint64_t memo_pack(uint32_t gen, size_t table, size_t cond)
{
    return (uint64_t)gen << 32 | (uint64_t)table << 16 | (uint64_t)cond;
}

static int memo_request_free(const dal_sql_t *sql, const dal_query_opts_t *opts)
{
    return sql->nhints == 0 && (opts == NULL || (opts->shard_value == NULL &&
                                                 opts->datasource == NULL));
}

/* memo_save of a statement that names no sharded table. */
static void memo_save_unsharded(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    const dal_routing_t *rt = r->rt;
    const dal_table_t *t = sql->ntrefs == 1 ? rt->tables[0] : NULL;
    size_t table = t != NULL ? (size_t)(t - r->snap->tables) + 1 : 0;

    if (sql->ntrefs > 1 || (t != NULL && t->cfg->kind == DAL_TABLE_BROADCAST) ||
        table >= 0xffff)
        return;
    atomic_store_explicit(&((dal_sql_t *)sql)->route_memo,
                          memo_pack(r->snap->gen, table, MEMO_UNSHARDED), memory_order_relaxed);
}

/* After a full routing that succeeded: remember it if one condition
 * decided it alone. */
static void memo_save(router_t *r, const dal_query_opts_t *opts)
{
    const dal_sql_t *sql = r->sql;
    const dal_routing_t *rt = r->rt;
    size_t c, cond = SIZE_MAX, table;

    if (!memo_request_free(sql, opts) || rt->nroutes != 1 || rt->ncuts != 0 ||
        !(sql->kind == DAL_SQL_SELECT || sql->kind == DAL_SQL_UPDATE ||
          sql->kind == DAL_SQL_DELETE))
        return;
    if (rt->primary == NULL) {
        memo_save_unsharded(r);
        return;
    }
    if (sql->ntrefs != 1 || rt->primary != rt->tables[0])
        return;
    for (c = 0; c < sql->nconds; c++) {
        if (!route_cond_on_tref(r, c, 0))
            continue;
        if (cond != SIZE_MAX || sql->conds[c].op != DAL_COND_EQ || sql->conds[c].nvals != 1)
            return; /* another condition on the key takes part */
        cond = c;
    }
    table = (size_t)(rt->primary - r->snap->tables);
    if (cond == SIZE_MAX || cond >= MEMO_UNSHARDED || table > 0xffff)
        return;
    atomic_store_explicit(&((dal_sql_t *)sql)->route_memo,
                          memo_pack(r->snap->gen, table, cond), memory_order_relaxed);
}

/* The route route_unsharded found when it saved this memo (table: the
 * index + 1 of the statement's one table, 0: none configured): 1, or 0
 * for the full routing. */
static int memo_route_unsharded(router_t *r, size_t table)
{
    dal_routing_t *rt = r->rt;
    const dal_table_t *t = table > 0 ? &r->snap->tables[table - 1] : NULL;
    dal_node_t *node = t != NULL ? t->nodes[0] : r->dflt;

    if (node == NULL && r->sql->ntrefs == 0 && r->snap->nnodes > 0)
        node = r->snap->nodes[0];
    if (node == NULL)
        return 0;
    rt->tables = rt->tables_inl;
    if (r->sql->ntrefs == 1)
        rt->tables[0] = t;
    if (route_alloc_routes(rt, 1, r->sql->ntrefs, r->err) != 0)
        return 0;
    rt->routes[0].node = node;
    return 1;
}

/* Route by the memo: 1 if done, 0 if the full routing must run (no memo
 * for this snapshot, an explicit request, a NULL or unusable value, a
 * strategy error -- which the full routing reports). */
static int memo_route(router_t *r, const dal_query_opts_t *opts)
{
    const dal_sql_t *sql = r->sql;
    dal_routing_t *rt = r->rt;
    uint64_t m = atomic_load_explicit(&((dal_sql_t *)sql)->route_memo, memory_order_relaxed);
    const dal_table_t *t;
    int64_t pos;

    if (m == 0 || (uint32_t)(m >> 32) != r->snap->gen || !memo_request_free(sql, opts))
        return 0;
    if ((m & 0xffff) == MEMO_UNSHARDED)
        return memo_route_unsharded(r, (m >> 16) & 0xffff);
    t = &r->snap->tables[(m >> 16) & 0xffff];
    if (route_locate_opnd(r, t, &sql->conds[m & 0xffff].vals[0], &pos) != 0 || pos < 0)
        return 0;
    rt->tables = rt->tables_inl;
    rt->tables[0] = rt->primary = t;
    if (route_alloc_routes(rt, 1, 1, r->err) != 0)
        return 0;
    rt->routes[0].node = t->nodes[pos / t->tables_per_db];
    rt->routes[0].pos[0] = (int32_t)pos;
    return 1;
}

/* Empty rt. */
static void routing_reset(dal_routing_t *rt)
{
    memset(rt, 0, sizeof *rt);
}

/* The configured table tr names, in r's schema: NULL when no [table]
 * declares it; -1 in *bad when a [table] of another schema does. */
static const dal_table_t *schema_table(const router_t *r, const char *name, int *bad)
{
    const dal_table_t *t;

    if (r->server_db)
        return NULL;
    t = snapshot_table(r->snap, name, strlen(name));
    if (t == NULL || snapshot_table_schema(t, r->schema))
        return t;
    *bad = 1;
    err_set(r->err, DAL_EROUTE,
            "table %s is a table of %s%s%s, not of %s%s%s: dal declares a table name in one "
            "schema", t->cfg->name, t->cfg->schema ? "[schema " : "the top level",
            t->cfg->schema ? t->cfg->schema : "", t->cfg->schema ? "]" : "",
            r->schema ? "[schema " : "the top level", r->schema ? r->schema : "",
            r->schema ? "]" : "");
    return NULL;
}

/* The logical database tr's qualifier (`db.` of `db.t`) names -- the
 * [proxy] database or a [schema] -- into *schema (NULL: the top level;
 * borrowed from the configuration): 1; 0 when tr has no qualifier or it
 * names a database the configuration does not know (which goes to the
 * servers as written). */
static int qual_schema(const router_t *r, const struct dal_sql_tref *tr, const char **schema)
{
    const dal_config_t *cfg = r->snap->cfg;
    const dal_cfg_schema_t *sc;
    dal_lexer_t lx;
    dal_token_t t;
    char q[256];

    if (tr->qual_len == 0)
        return 0;
    lex_init(&lx, r->sql->text, r->sql->len, r->sql->no_backslash);
    lx.pos = tr->qual_off;
    t = lex_next(&lx);
    if ((t.type != DAL_TOK_IDENT && t.type != DAL_TOK_QIDENT) ||
        ident_unquote(r->sql->text, &t, q, sizeof q) >= sizeof q)
        return 0;
    if (cfg->proxy.database != NULL && strcmp(q, cfg->proxy.database) == 0) {
        *schema = NULL;
        return 1;
    }
    if ((sc = config_schema(cfg, q)) == NULL)
        return 0;
    *schema = sc->name;
    return 1;
}

static const char *schema_label(const dal_config_t *cfg, const char *schema)
{
    return schema ? (schema[0] ? schema : "no database")
                  : cfg->proxy.database ? cfg->proxy.database : "the top level";
}

/* The logical database the statement's tables are in, into r->schema and
 * r->dflt: the one their qualifiers name (`hr.staff` from another
 * schema's session), else the session's.  A statement is routed within
 * one: tables of two are refused (DAL_EUNSUPPORTED). */
static int statement_schema(router_t *r)
{
    const char *sessions = r->schema, *found = NULL, *s;
    size_t i, at = 0;
    int any = 0;

    for (i = 0; i < r->sql->ntrefs; i++) {
        const struct dal_sql_tref *tr = &r->sql->trefs[i];
        s = qual_schema(r, tr, &s) ? s : sessions;
        if (any && !(s == found || (s && found && strcmp(s, found) == 0)))
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "%s names a table of %s and %s one of %s: dal routes a statement "
                           "within one logical database",
                           r->sql->trefs[at].name, schema_label(r->snap->cfg, found), tr->name,
                           schema_label(r->snap->cfg, s));
        if (!any)
            at = i;
        any = 1;
        found = s;
    }
    if (!any || found == sessions || (found && sessions && strcmp(found, sessions) == 0))
        return 0;
    r->schema = found;
    r->rt->qualify = r->server_db;
    r->server_db = 0;
    r->dflt = found == NULL ? r->snap->default_node : snapshot_schema_node(r->snap, found);
    return 0;
}

int route_statement(const dal_snapshot_t *snap, const char *schema, const dal_sql_t *sql,
                    const dal_query_opts_t *opts, const dal_value_t *params, size_t nparams, dal_routing_t *rt, dal_error_t *err)
{
    return route_statement_keys(snap, schema, sql, opts, params, nparams, NULL, rt, err);
}

int route_statement_keys(const dal_snapshot_t *snap, const char *schema, const dal_sql_t *sql,
                         const dal_query_opts_t *opts, const dal_value_t *params, size_t nparams,
                         const dal_route_keys_t *keys, dal_routing_t *rt, dal_error_t *err)
{
    router_t r;
    size_t i;
    int rc;

    routing_reset(rt);
    /* the inline arrays at the end are set where they are used */
    memset(&r, 0, offsetof(router_t, names_inl));
    r.keys = keys;
    rt->sql = sql;
    rt->max_parallel = snap->cfg->max_parallel;
    r.snap = snap;
    r.sql = sql;
    r.params = params;
    r.nparams = nparams;
    r.rt = rt;
    r.err = err;
    r.schema = schema;
    r.server_db = schema != NULL && !snapshot_schema_known(snap, schema);
    if (r.server_db && snap->server_node == NULL && schema[0] == '\0')
        return err_set(err, DAL_EROUTE, "no database selected (DROP DATABASE of the session's "
                                        "left it in none), and the configuration now in use "
                                        "has no [dal] server_schemas to run it on");
    if (r.server_db && snap->server_node == NULL)
        return err_set(err, DAL_EROUTE, "unknown schema '%s' (not a [schema] section of the "
                                        "configuration now in use, which has no [dal] "
                                        "server_schemas)", schema);
    r.dflt = r.server_db ? snap->server_node : schema == NULL ? snap->default_node
                                                              : snapshot_schema_node(snap, schema);
    if (nparams != sql->nparams)
        return err_set(err, DAL_EINVAL,
                       "the statement has %zu ? placeholders but %zu parameters were given",
                       sql->nparams, nparams);
    if (schema == NULL && keys == NULL && memo_route(&r, opts))
        return 0;
    rc = read_request(snap, sql, opts, &r.req, err);
    if (rc != 0)
        return rc;
    rt->tables = small_alloc(rt->tables_inl, DAL_ROUTING_INLINE, sql->ntrefs,
                             sizeof *rt->tables, 1);
    if (rt->tables == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if ((rc = statement_schema(&r)) != 0) {
        routing_clear(rt);
        return rc;
    }
    for (i = 0; i < sql->ntrefs; i++) {
        const struct dal_sql_tref *tr = &sql->trefs[i];
        int bad = 0;
        rt->tables[i] = schema_table(&r, tr->name, &bad);
        if (bad) {
            routing_clear(rt);
            return DAL_EROUTE;
        }
        if (rt->primary == NULL && rt->tables[i] && rt->tables[i]->sharded)
            rt->primary = rt->tables[i];
    }
    rc = sql->kind == DAL_SQL_UPDATE ? route_check_update_key(&r) : 0;
    if (rc == 0 && sql->opaque && !r.req.raw && !r.server_db)
        rc = route_check_opaque(&r);
    if (rc == 0 && r.req.raw)
        rc = route_raw(&r);
    else if (rc == 0)
        rc = rt->primary ? route_sharded(&r) : route_unsharded(&r);
    if (rc == 0 && schema == NULL && keys == NULL && r.schema == NULL)
        memo_save(&r, opts);
    small_free(r.in_group, r.in_group_inl);
    small_free(r.lists, r.lists_inl);
    route_names_free(&r);
    small_free(r.grp, r.grp_inl);
    small_free(r.lead, r.lead_inl);
    if (rc != 0)
        routing_clear(rt);
    return rc;
}

void routing_clear(dal_routing_t *rt)
{
    small_free(rt->tables, rt->tables_inl);
    small_free(rt->routes, &rt->route_inl);
    small_free(rt->pos, rt->pos_inl);
    free(rt->cuts);
    routing_reset(rt);
}

void routing_label_table(const dal_routing_t *rt, dal_event_t *ev)
{
    if (rt->primary != NULL) {
        ev->table = rt->primary->cfg->name;
        return;
    }
    ev->table = rt->sql->ntrefs ? rt->sql->trefs[0].name : NULL;
    if (ev->table != NULL)
        ev->labels_gen = 0;
}
