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

static int is_write(dal_sql_kind_t k)
{
    return k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_UPDATE ||
           k == DAL_SQL_DELETE || k == DAL_SQL_DDL;
}

/* ---------------------------------------------------------- conditions */

/* ------------------------------------------------------------------ routes */

static inline int alloc_routes(dal_routing_t *rt, size_t nroutes, size_t ntrefs,
                                   dal_error_t *err)
{
    size_t i;

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

static int add_cut(dal_routing_t *rt, uint32_t off, uint32_t end)
{
    if (end <= off)
        return 0;
    if (rt->ncuts == rt->cuts_cap) {
        size_t cap = rt->cuts_cap ? rt->cuts_cap * 2 : 16;
        dal_cut_t *p = realloc(rt->cuts, cap * sizeof *p);
        if (p == NULL)
            return -1;
        rt->cuts = p;
        rt->cuts_cap = cap;
    }
    rt->cuts[rt->ncuts].off = off;
    rt->cuts[rt->ncuts].len = end - off;
    rt->ncuts++;
    return 0;
}

/*
 * Cut the items of a comma-separated list (IN values, INSERT rows) that the
 * route owning position `keep` does not own.  item_pos[j] is item j's
 * position (-1: owned by nobody).  Kept items keep their separators;
 * nothing is cut if no item would remain.
 */
static int cut_list(dal_routing_t *rt, const dal_cut_t *items, const int64_t *item_pos,
                    size_t n, uint32_t keep)
{
    size_t j, first = n, prev = n;
    int rc = 0;

    for (j = 0; j < n; j++) {
        if (item_pos[j] != (int64_t)keep)
            continue;
        if (first == n)
            first = j;
        else if (j > prev + 1)
            rc |= add_cut(rt, items[prev].off + items[prev].len,
                          items[j - 1].off + items[j - 1].len);
        prev = j;
    }
    if (first == n)
        return 0;
    if (first > 0)
        rc |= add_cut(rt, items[0].off, items[first].off);
    if (prev < n - 1)
        rc |= add_cut(rt, items[prev].off + items[prev].len, items[n - 1].off + items[n - 1].len);
    return rc;
}

void route_split_lists_free(split_list_t *l, size_t n)
{
    size_t i;

    for (i = 0; l != NULL && i < n; i++) {
        free(l[i].items);
        free(l[i].pos);
    }
    free(l);
}

/* Give each route the cuts of every list, route by route (cuts must be
 * grouped per route, sorted by offset within one). */
int route_cut_routes(dal_routing_t *rt, const split_list_t *lists, size_t nlists,
                      const size_t *group_tref, dal_error_t *err)
{
    size_t k, l;

    for (k = 0; k < rt->nroutes; k++) {
        uint32_t keep = (uint32_t)rt->routes[k].pos[*group_tref];
        rt->routes[k].cut_first = (uint32_t)rt->ncuts;
        for (l = 0; l < nlists; l++)
            if (cut_list(rt, lists[l].items, lists[l].pos, lists[l].n, keep) != 0)
                return err_set(err, DAL_ENOMEM, "out of memory");
        rt->routes[k].ncuts = (uint32_t)(rt->ncuts - rt->routes[k].cut_first);
    }
    return 0;
}

/* The IN conditions on the group's shard key, with each value's position.
 * A list holding an expression is not split (every route keeps it whole). */
int route_in_lists(router_t *r, size_t gtref, split_list_t **out, size_t *nout)
{
    const dal_sql_t *sql = r->sql;
    split_list_t *lists = NULL;
    size_t c, j, n = 0;
    int rc = 0;

    *out = NULL;
    *nout = 0;
    /* most statements have no list to split: no allocation for them */
    for (c = 0; c < sql->nconds && sql->conds[c].op != DAL_COND_IN; c++)
        ;
    if (c == sql->nconds)
        return 0;
    *out = lists = calloc(sql->nconds, sizeof *lists);
    if (lists == NULL)
        return err_set(r->err, DAL_ENOMEM, "out of memory");
    for (c = 0; c < sql->nconds && rc == 0; c++) {
        const struct dal_sql_cond *cd = &sql->conds[c];
        split_list_t *l = &lists[n];
        if (cd->op != DAL_COND_IN || cd->nvals < 2 || !route_cond_on_tref(r, cd, gtref))
            continue;
        l->items = malloc(cd->nvals * sizeof *l->items);
        l->pos = malloc(cd->nvals * sizeof *l->pos);
        if (l->items == NULL || l->pos == NULL)
            return err_set(r->err, DAL_ENOMEM, "out of memory");
        l->n = cd->nvals;
        n++;
        for (j = 0; j < cd->nvals && rc == 0; j++) {
            l->items[j].off = cd->vals[j].off;
            l->items[j].len = cd->vals[j].len;
            rc = route_locate_opnd(r, r->rt->tables[gtref], &cd->vals[j], &l->pos[j]);
        }
        if (rc == OPND_UNUSABLE) {
            l->n = 0;
            rc = 0;
        }
    }
    *nout = n;
    return rc;
}

/* One route per position of set (primary's layout), skipping positions not
 * on an explicitly requested node.  Group members get the position. */
int route_routes_from_positions(router_t *r, const posset_t *set)
{
    dal_routing_t *rt = r->rt;
    const dal_table_t *p = rt->primary;
    size_t n = set->all ? p->cfg->table_shard_num : set->n, idx, k = 0, i;
    int rc = alloc_routes(rt, n, r->sql->ntrefs, r->err);

    if (rc != 0)
        return rc;
    for (idx = 0; idx < n; idx++) {
        uint32_t pos = set->all ? (uint32_t)idx : set->v[idx];
        dal_node_t *node = p->nodes[pos / p->tables_per_db];
        if (r->req.node != NULL && node != r->req.node)
            continue;
        rt->routes[k].node = node;
        for (i = 0; i < r->sql->ntrefs; i++)
            if (r->in_group[i])
                rt->routes[k].pos[i] = (int32_t)pos;
        k++;
    }
    rt->nroutes = k;
    if (k > 0)
        return 0;
    if (n == 1)
        return err_set(r->err, DAL_EROUTE,
                       "the shard value routes table %s to datasource %s, but datasource %s "
                       "was requested",
                       p->cfg->name, p->nodes[(set->all ? 0 : set->v[0]) / p->tables_per_db]
                                             ->cfg->name,
                           r->req.node->cfg->name);
    return err_set(r->err, DAL_EROUTE, "table %s has no physical table on datasource %s",
                   p->cfg->name, r->req.node->cfg->name);
}

static int explicit_position(router_t *r, uint32_t *p)
{
    return route_locate(r->rt->primary, r->req.shard_value, p, r->err);
}

static int find_column(const dal_sql_t *sql, const char *name)
{
    size_t i;

    for (i = 0; i < sql->ncolumns; i++)
        if (strcasecmp(sql->columns[i], name) == 0)
            return (int)i;
    return -1;
}

/* The position of each row of an INSERT, from its shard-key value. */
static int insert_row_positions(router_t *r, int kc, int64_t *pos)
{
    const dal_sql_t *sql = r->sql;
    const dal_table_t *t = r->rt->primary;
    size_t i;
    int rc;

    for (i = 0; i < sql->nrows; i++) {
        if ((size_t)kc >= sql->rows[i].nvals)
            return err_set(r->err, DAL_ESQL, "INSERT row %zu has %zu values for %zu columns",
                           i + 1, sql->rows[i].nvals, sql->ncolumns);
        rc = route_locate_opnd(r, t, &sql->rows[i].vals[kc], &pos[i]);
        if (rc == OPND_UNUSABLE)
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "INSERT into %s: row %zu: the shard key %s must be a literal or ?, "
                           "not an expression", t->cfg->name, i + 1, t->cfg->shard_key);
        if (rc != 0)
            return rc;
        if (pos[i] < 0)
            return err_set(r->err, DAL_ESHARD, "INSERT into %s: row %zu: the shard key %s is "
                           "NULL", t->cfg->name, i + 1, t->cfg->shard_key);
    }
    return 0;
}

/* INSERT/REPLACE into a sharded table: rows grouped by position. */
int route_insert(router_t *r, size_t gtref)
{
    const dal_sql_t *sql = r->sql;
    const dal_table_t *t = r->rt->primary;
    int kc = find_column(sql, t->cfg->shard_key);
    split_list_t rows = {NULL, NULL, 0};
    dal_cut_t items_inl[POSSET_INLINE]; /* most INSERTs have a row or a few */
    int64_t pos_inl[POSSET_INLINE];
    posset_t set = POSSET_NONE;
    uint32_t xp = 0;
    size_t i;
    int rc = 0;

    if (r->req.shard_value != NULL && (rc = explicit_position(r, &xp)) != 0)
        return rc;
    if (sql->insert_select || kc < 0 || sql->nrows == 0) {
        if (r->req.shard_value == NULL)
            return err_set(r->err, DAL_EROUTE,
                           "INSERT into sharded table %s must list its shard key %s with a "
                           "value per row (or pass a shard value)",
                           t->cfg->name, t->cfg->shard_key);
        rc = route_single_posset(xp, &set, r->err);
        goto routes;
    }
    rows.n = sql->nrows;
    rows.items = small_alloc(items_inl, POSSET_INLINE, rows.n, sizeof *rows.items, 0);
    rows.pos = small_alloc(pos_inl, POSSET_INLINE, rows.n, sizeof *rows.pos, 0);
    if (rows.items == NULL || rows.pos == NULL || posset_alloc(&set, rows.n) != 0) {
        rc = err_set(r->err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    rc = insert_row_positions(r, kc, rows.pos);
    for (i = 0; rc == 0 && i < rows.n; i++) {
        rows.items[i].off = sql->rows[i].off;
        rows.items[i].len = sql->rows[i].len;
        set.v[set.n++] = (uint32_t)rows.pos[i];
        if (r->req.shard_value != NULL && rows.pos[i] != (int64_t)xp)
            rc = err_set(r->err, DAL_EROUTE,
                         "INSERT into %s: row %zu's %s routes to %s_%lld, which contradicts "
                         "the shard value given (%s_%u)",
                         t->cfg->name, i + 1, t->cfg->shard_key, t->cfg->name,
                         (long long)rows.pos[i], t->cfg->name, xp);
    }
    posset_normalize(&set);
routes:
    if (rc == 0)
        rc = route_routes_from_positions(r, &set);
    if (rc == 0)
        rc = route_cut_routes(r->rt, &rows, rows.n ? 1 : 0, &gtref, r->err);
done:
    small_free(rows.items, items_inl);
    small_free(rows.pos, pos_inl);
    posset_free(&set);
    return rc;
}

int route_scatter_allowed(router_t *r)
{
    size_t i;

    for (i = 0; i < r->sql->ntrefs; i++)
        if (r->in_group[i] && !r->rt->tables[i]->cfg->allow_scatter)
            return err_set(r->err, DAL_EROUTE,
                           "table %s has allow_scatter = false: add a condition on %s (=, IN, "
                           "BETWEEN) or pass a shard value",
                           r->rt->tables[i]->cfg->name, r->rt->tables[i]->cfg->shard_key);
    r->rt->scatter = 1;
    return 0;
}

static int table_on_node(const dal_table_t *t, const dal_node_t *node)
{
    uint32_t i;

    for (i = 0; i < t->cfg->db_shard_num; i++)
        if (t->nodes[i] == node)
            return 1;
    return 0;
}

/* The broadcast table this statement writes, if any. */
static const dal_table_t *written_broadcast(const router_t *r)
{
    size_t i;

    if (!is_write(r->sql->kind))
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
        rc = alloc_routes(rt, bc->cfg->db_shard_num, r->sql->ntrefs, r->err);
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
        node = r->snap->default_node;
    /* a statement that names no table at all (SELECT 1, a pool's validation
     * query, SELECT NOW()) means the same on every datasource: the first */
    if (node == NULL && r->sql->ntrefs == 0 && r->snap->nnodes > 0)
        node = r->snap->nodes[0];
    if (node == NULL)
        return err_set(r->err, DAL_EROUTE,
                       "no datasource for this statement: it names no configured table and "
                       "there is no [dal] default_datasource");
    rc = alloc_routes(rt, 1, r->sql->ntrefs, r->err);
    if (rc == 0)
        rt->routes[0].node = node;
    return rc;
}

/* The SQL text of string token t of text, decoded into a new buffer
 * (*len bytes), or NULL when it cannot be decoded or memory is short. */
static char *string_sql(const char *text, const dal_token_t *t, size_t *len)
{
    char *out = malloc((size_t)t->len + 1);

    if (out != NULL &&
        sql_decode_string(text + t->off, t->len, out, (size_t)t->len + 1, len) != 0) {
        free(out);
        out = NULL;
    }
    return out;
}

/* sql's first token that is not a comment or a hint, lx then after it. */
static dal_token_t first_word(const dal_sql_t *sql, dal_lexer_t *lx)
{
    dal_token_t t;

    lex_init(lx, sql->text, sql->len);
    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    return t;
}

/* LOAD DATA or LOAD XML. */
static int is_load(const dal_sql_t *sql)
{
    dal_lexer_t lx;
    dal_token_t t = first_word(sql, &lx);

    return tok_eq(sql->text, &t, "LOAD");
}

/* Why table tb does not live wholly on the default datasource, or NULL. */
static const char *not_whole(const router_t *r, const dal_table_t *tb)
{
    if (tb->sharded)
        return "is sharded";
    if (tb->cfg->kind == DAL_TABLE_BROADCAST)
        return "is a broadcast table";
    return tb->nodes[0] != r->snap->default_node ? "is not on the default datasource" : NULL;
}

/*
 * A statement dal does not analyse runs unchanged on the default
 * datasource.  If it names a configured table that does not live there
 * whole (sharded, broadcast, or on another datasource), that would be
 * narrower than the statement: refuse it.  Every word is taken for a
 * possible name, so a column called like such a table refuses too.  The
 * statement text of PREPARE ... FROM 'text' and EXECUTE IMMEDIATE 'text'
 * (their strings, sql_text) is checked the same way, once.
 */
static int opaque_names(router_t *r, const char *text, size_t len, int sql_text)
{
    dal_lexer_t lx;
    dal_token_t t;
    char name[256], *inner;
    size_t n;
    int rc;

    lex_init(&lx, text, len);
    while ((t = lex_next(&lx)).type != DAL_TOK_EOF) {
        const dal_table_t *tb;
        const char *why;
        if (t.type == DAL_TOK_STRING && sql_text) {
            if ((inner = string_sql(text, &t, &n)) == NULL)
                return err_set(r->err, DAL_ENOMEM, "out of memory");
            rc = opaque_names(r, inner, n, 0);
            free(inner);
            if (rc != 0)
                return rc;
            continue;
        }
        if (t.type != DAL_TOK_IDENT && t.type != DAL_TOK_QIDENT)
            continue;
        n = ident_unquote(text, &t, name, sizeof name);
        if (n >= sizeof name || (tb = snapshot_table(r->snap, name, n)) == NULL)
            continue;
        if ((why = not_whole(r, tb)) == NULL)
            continue;
        if (is_load(r->sql))
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "LOAD DATA names table %s, which %s: dal sends a LOAD DATA unchanged "
                           "to the default datasource and does not route a file's rows one by "
                           "one.  Insert the rows with INSERT, or load each physical table with "
                           "/*+ dal datasource=NAME raw */",
                           tb->cfg->name, why);
        return err_set(r->err, DAL_EUNSUPPORTED,
                       "dal does not analyse this kind of statement, and it names table %s, "
                       "which is not wholly on the default datasource: it would run "
                       "unchanged there.  Send it to each datasource as written with "
                       "/*+ dal datasource=NAME raw */",
                       tb->cfg->name);
    }
    return 0;
}

/* A statement whose strings are SQL: PREPARE (sql.h's pins say it) or
 * MariaDB's EXECUTE IMMEDIATE. */
static int runs_sql_text(const dal_sql_t *sql)
{
    dal_lexer_t lx;
    dal_token_t t;

    if (sql->pins & DAL_PIN_PREPARE)
        return 1;
    t = first_word(sql, &lx);
    if (!tok_eq(sql->text, &t, "EXECUTE"))
        return 0;
    do
        t = lex_next(&lx);
    while (t.type == DAL_TOK_COMMENT);
    return tok_eq(sql->text, &t, "IMMEDIATE");
}

static int check_opaque(router_t *r)
{
    return opaque_names(r, r->sql->text, r->sql->len, runs_sql_text(r->sql));
}

/* An UPDATE that sets a shard key would leave the row on the wrong shard. */
static int check_update_key(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t i, j;

    if (sql->kind != DAL_SQL_UPDATE)
        return 0;
    for (i = 0; i < sql->ntrefs; i++) {
        const dal_table_t *t = r->rt->tables[i];
        if (t == NULL || !t->sharded)
            continue;
        for (j = 0; j < sql->nset_columns; j++)
            if (strcasecmp(sql->set_columns[j], t->cfg->shard_key) == 0)
                return err_set(r->err, DAL_EUNSUPPORTED,
                               "UPDATE may not change %s, the shard key of %s: the row would "
                               "stay on the wrong shard (delete it and insert it anew)",
                               t->cfg->shard_key, t->cfg->name);
    }
    return 0;
}

/* Unsharded and broadcast tables named next to sharded ones must exist on
 * every node the statement runs on. */
int route_check_others(router_t *r)
{
    dal_routing_t *rt = r->rt;
    size_t i, k;

    for (i = 0; i < r->sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t == NULL || t->sharded)
            continue;
        for (k = 0; k < rt->nroutes; k++)
            if (!table_on_node(t, rt->routes[k].node))
                return err_set(r->err, DAL_EUNSUPPORTED,
                               "table %s is not on datasource %s, where %s's rows for this "
                               "statement are", t->cfg->name, rt->routes[k].node->cfg->name,
                               rt->primary->cfg->name);
        if (t->cfg->kind == DAL_TABLE_BROADCAST && is_write(r->sql->kind) &&
            r->sql->trefs[i].role != DAL_TREF_FROM)
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "a statement cannot write broadcast table %s together with sharded "
                           "table %s", t->cfg->name, rt->primary->cfg->name);
    }
    return 0;
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
    rc = alloc_routes(r->rt, 1, r->sql->ntrefs, r->err);
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
 */
static uint64_t memo_pack(uint32_t gen, size_t table, size_t cond)
{
    return (uint64_t)gen << 32 | (uint64_t)table << 16 | (uint64_t)cond;
}

static int memo_request_free(const dal_sql_t *sql, const dal_query_opts_t *opts)
{
    return sql->nhints == 0 && (opts == NULL || (opts->shard_value == NULL &&
                                                 opts->datasource == NULL));
}

/* After a full routing that succeeded: remember it if one condition
 * decided it alone. */
static void memo_save(router_t *r, const dal_query_opts_t *opts)
{
    const dal_sql_t *sql = r->sql;
    const dal_routing_t *rt = r->rt;
    size_t c, cond = SIZE_MAX, table;

    if (!memo_request_free(sql, opts) || sql->ntrefs != 1 || rt->nroutes != 1 ||
        rt->ncuts != 0 || rt->primary == NULL || rt->primary != rt->tables[0] ||
        !(sql->kind == DAL_SQL_SELECT || sql->kind == DAL_SQL_UPDATE ||
          sql->kind == DAL_SQL_DELETE))
        return;
    for (c = 0; c < sql->nconds; c++) {
        if (!route_cond_on_tref(r, &sql->conds[c], 0))
            continue;
        if (cond != SIZE_MAX || sql->conds[c].op != DAL_COND_EQ || sql->conds[c].nvals != 1)
            return; /* another condition on the key takes part */
        cond = c;
    }
    table = (size_t)(rt->primary - r->snap->tables);
    if (cond == SIZE_MAX || cond > 0xffff || table > 0xffff)
        return;
    atomic_store_explicit(&((dal_sql_t *)sql)->route_memo,
                          memo_pack(r->snap->gen, table, cond), memory_order_relaxed);
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
    t = &r->snap->tables[(m >> 16) & 0xffff];
    if (route_locate_opnd(r, t, &sql->conds[m & 0xffff].vals[0], &pos) != 0 || pos < 0)
        return 0;
    rt->tables = rt->tables_inl;
    rt->tables[0] = rt->primary = t;
    if (alloc_routes(rt, 1, 1, r->err) != 0)
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

int route_statement(const dal_snapshot_t *snap, const dal_sql_t *sql, const dal_query_opts_t *opts,
                    const dal_value_t *params, size_t nparams, dal_routing_t *rt, dal_error_t *err)
{
    router_t r;
    size_t i;
    int rc;

    routing_reset(rt);
    memset(&r, 0, sizeof r);
    rt->sql = sql;
    rt->max_parallel = snap->cfg->max_parallel;
    r.snap = snap;
    r.sql = sql;
    r.params = params;
    r.nparams = nparams;
    r.rt = rt;
    r.err = err;
    if (nparams != sql->nparams)
        return err_set(err, DAL_EINVAL,
                       "the statement has %zu ? placeholders but %zu parameters were given",
                       sql->nparams, nparams);
    if (memo_route(&r, opts))
        return 0;
    rc = read_request(snap, sql, opts, &r.req, err);
    if (rc != 0)
        return rc;
    rt->tables = small_alloc(rt->tables_inl, DAL_ROUTING_INLINE, sql->ntrefs,
                             sizeof *rt->tables, 1);
    if (rt->tables == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < sql->ntrefs; i++) {
        const struct dal_sql_tref *tr = &sql->trefs[i];
        rt->tables[i] = snapshot_table(snap, tr->name, strlen(tr->name));
        if (rt->primary == NULL && rt->tables[i] && rt->tables[i]->sharded)
            rt->primary = rt->tables[i];
    }
    rc = check_update_key(&r);
    if (rc == 0 && sql->opaque && !r.req.raw)
        rc = check_opaque(&r);
    if (rc == 0 && r.req.raw)
        rc = route_raw(&r);
    else if (rc == 0)
        rc = rt->primary ? route_sharded(&r) : route_unsharded(&r);
    if (rc == 0)
        memo_save(&r, opts);
    small_free(r.in_group, r.in_group_inl);
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
