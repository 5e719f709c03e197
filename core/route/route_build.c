/*
 * route_build.c -- turning the table positions a statement touches into
 * routes: one per position, the IN lists cut route by route, the rows of
 * an INSERT placed by their shard values.  See route_int.h.
 */
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
        if (cd->op != DAL_COND_IN || cd->nvals < 2 || !route_cond_on_tref(r, c, gtref))
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
    int rc = route_alloc_routes(rt, n, r->sql->ntrefs, r->err);

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
