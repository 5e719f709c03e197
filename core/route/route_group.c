/*
 * route_group.c -- which table references route together, and which group
 * drives the routes (docs/routing.md, *Scopes*).  See route_int.h.
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

/*
 * The sharded table references of a statement fall into groups.  A
 * shard-key equality `x.k = y.k` in scope S between two tables of S that
 * are laid out alike (the same table, or one binding group) puts them in
 * one group: each row of the join has both on one shard.  The same
 * equality between a table of S and a table of an enclosing scope (a
 * correlated subquery) makes S's group *follow* the outer table: for each
 * outer row it needs only the rows on that row's own shard.
 *
 * A group that follows nobody is routed by the conditions of its own
 * scope.  One of them, the driver, may need several tables: the statement
 * runs once per table of the driver.  That is only exact where the
 * driver's rows are rows of the result (the top SELECT, the written table,
 * a row-wise derived table in the top FROM) and no other table's rows
 * would be repeated on each route; every other group must need one table,
 * on the node of every route.  Anything else is refused, never narrowed.
 */

static int32_t grp_root(int32_t *g, int32_t i)
{
    while (g[i] != i)
        i = g[i] = g[g[i]];
    return i;
}

static int colocated(const dal_table_t *a, const dal_table_t *b)
{
    return a == b ||
           (a->cfg->binding && b->cfg->binding && strcmp(a->cfg->binding, b->cfg->binding) == 0);
}

/* The tref of the equality c's side (2: the second column), or -1. */
static long link_side(const router_t *r, const struct dal_sql_cond *c, int side)
{
    return side == 1 ? route_key_tref(r, c->scope, c->qualifier, c->column, c->using_off, 0)
                     : route_key_tref(r, c->scope, c->qualifier2, c->column2, 0, 0);
}

/* Thread each group's members, each group's conditions and each scope's
 * table references into lists (in the statement's order), so routing
 * group by group visits each of them once. */
static int make_lists(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t nc = sql->nconds, nt = sql->ntrefs, ns = sql->nscopes, i;
    int32_t *l = small_alloc(r->lists_inl, ROUTE_LISTS_INLINE, 2 * nc + 4 * nt + ns,
                             sizeof *l, 0);

    if ((r->lists = l) == NULL)
        return err_set(r->err, DAL_ENOMEM, "out of memory");
    r->cond_tref = l;
    r->cond_next = l + nc;
    r->cond_head = l + 2 * nc;
    r->member_next = l + 2 * nc + nt;
    r->member_head = l + 2 * nc + 2 * nt;
    r->scope_next = l + 2 * nc + 3 * nt;
    r->scope_head = l + 2 * nc + 4 * nt;
    for (i = 0; i < nt; i++)
        r->cond_head[i] = r->member_head[i] = -1;
    for (i = 0; i < ns; i++)
        r->scope_head[i] = -1;
    for (i = nt; i-- > 0;) {
        int32_t g = r->grp[i];
        r->scope_next[i] = r->scope_head[sql->trefs[i].scope];
        r->scope_head[sql->trefs[i].scope] = (int32_t)i;
        r->member_next[i] = g >= 0 ? r->member_head[g] : -1;
        if (g >= 0)
            r->member_head[g] = (int32_t)i;
    }
    for (i = nc; i-- > 0;) {
        const struct dal_sql_cond *c = &sql->conds[i];
        long t = c->op == DAL_COND_COLEQ
                     ? -1 : route_key_tref(r, c->scope, c->qualifier, c->column, 0, 1);
        int32_t g = t >= 0 ? r->grp[t] : -1;
        r->cond_tref[i] = (int32_t)t;
        r->cond_next[i] = g >= 0 ? r->cond_head[g] : -1;
        if (g >= 0)
            r->cond_head[g] = (int32_t)i;
    }
    return 0;
}

static int make_groups(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t n = sql->ntrefs, c, k;
    int pass;

    if (route_names_build(r) != 0)
        return DAL_ENOMEM;
    r->marked = -1;
    r->grp = small_alloc(r->grp_inl, DAL_ROUTING_INLINE, n, sizeof *r->grp, 0);
    r->lead = small_alloc(r->lead_inl, DAL_ROUTING_INLINE, n, sizeof *r->lead, 0);
    r->in_group = small_alloc(r->in_group_inl, DAL_ROUTING_INLINE, n, 1, 1);
    if (r->grp == NULL || r->lead == NULL || r->in_group == NULL)
        return err_set(r->err, DAL_ENOMEM, "out of memory");
    for (k = 0; k < n; k++) {
        /* INSERT ... SELECT's target is placed after the SELECT is routed */
        int into = sql->insert_select && sql->trefs[k].role == DAL_TREF_INTO;
        r->grp[k] = route_is_sharded(r, k) && !into ? (int32_t)k : -1;
        r->lead[k] = -1;
    }
    /* DDL naming two tables of one layout (CREATE TABLE t2 LIKE t) works
     * position by position */
    for (k = 1; sql->kind == DAL_SQL_DDL && k < n; k++)
        if (r->grp[k] >= 0 && r->grp[0] >= 0 && colocated(r->rt->tables[0], r->rt->tables[k]))
            r->grp[grp_root(r->grp, (int32_t)k)] = grp_root(r->grp, 0);
    /* joins inside one scope first, so a follower's whole group follows */
    for (pass = 0; pass < 2; pass++) {
        for (c = 0; c < sql->nconds; c++) {
            const struct dal_sql_cond *cd = &sql->conds[c];
            long i, j;
            int si, sj;
            if (cd->op != DAL_COND_COLEQ || (i = link_side(r, cd, 1)) < 0 ||
                (j = link_side(r, cd, 2)) < 0 || i == j ||
                !colocated(r->rt->tables[i], r->rt->tables[j]))
                continue;
            si = sql->trefs[i].scope;
            sj = sql->trefs[j].scope;
            if (si != cd->scope) { /* the inner one first */
                long t = i; i = j; j = t;
                si = sj;
                sj = sql->trefs[j].scope;
            }
            if (si != cd->scope)
                continue; /* two outer tables: this scope's rows say nothing of theirs */
            if (pass == 0 && sj == si)
                r->grp[grp_root(r->grp, (int32_t)j)] = grp_root(r->grp, (int32_t)i);
            else if (pass == 1 && sj != si && r->lead[grp_root(r->grp, (int32_t)i)] < 0)
                r->lead[grp_root(r->grp, (int32_t)i)] = (int32_t)j;
        }
    }
    for (k = 0; k < n; k++)
        if (r->grp[k] >= 0)
            r->grp[k] = grp_root(r->grp, (int32_t)k);
    return make_lists(r);
}

/* The INSERT's target tref, or ntrefs. */
static size_t into_tref(const router_t *r)
{
    size_t k;

    for (k = 0; k < r->sql->ntrefs; k++)
        if (r->sql->trefs[k].role == DAL_TREF_INTO)
            return k;
    return r->sql->ntrefs;
}

/* The SELECT item that feeds column col of the INSERT, or NULL. */
static const struct dal_sql_item *feeding_item(const dal_sql_t *sql, const char *col)
{
    size_t i;

    for (i = 0; i < sql->ncolumns && i < sql->nitems; i++)
        if (strcasecmp(sql->columns[i], col) == 0)
            return sql->items[i].star ? NULL : &sql->items[i];
    return NULL;
}

/* The source tref whose shard key the item is (a column of the SELECT's
 * own scope), or -1. */
static long item_key_tref(const router_t *r, const struct dal_sql_item *it, int sc)
{
    return it->column != NULL ? route_key_tref(r, sc, it->qualifier, it->column, 0, 1) : -1;
}

/* The scope of the INSERT's SELECT (the first one inside scope 0). */
static int insert_select_scope(const dal_sql_t *sql)
{
    size_t s;

    for (s = 1; s < sql->nscopes; s++)
        if (sql->scopes[s].parent == 0)
            return (int)s;
    return -1;
}

/* INSERT ... SELECT * (or q.*) from one sharded table: that table, when
 * the column it puts where the target has its shard key is its own shard
 * key (its columns learned before routing, columns.h); else -1. */
static long star_key_tref(const router_t *r, size_t into, int sc)
{
    const dal_sql_t *sql = r->sql;
    const dal_table_t *t = r->rt->tables[into];
    const struct dal_columns *cols;
    long src = -1;
    size_t k, kc;

    if (sql->nitems != 1 || !sql->items[0].star)
        return -1;
    for (k = 0; k < sql->ntrefs; k++)
        if (sql->trefs[k].scope == sc && (src >= 0 || !route_is_sharded(r, k)))
            return -1; /* one table only: the star would cover the others' columns too */
        else if (sql->trefs[k].scope == sc)
            src = (long)k;
    for (kc = 0; kc < sql->ncolumns && strcasecmp(sql->columns[kc], t->cfg->shard_key); kc++)
        ;
    if (src < 0 || kc == sql->ncolumns ||
        (cols = atomic_load(&((dal_table_t *)r->rt->tables[src])->columns)) == NULL ||
        kc >= cols->n || strcasecmp(cols->names[kc], r->rt->tables[src]->cfg->shard_key) != 0)
        return -1;
    return src;
}

/* How the target's rows are placed: *src the source tref whose table each
 * row comes from, or *fixed the one position of them all. */
static int into_plan(router_t *r, size_t into, long *src, int64_t *fixed)
{
    const dal_sql_t *sql = r->sql;
    const dal_table_t *t = r->rt->tables[into];
    const struct dal_sql_item *it = feeding_item(sql, t->cfg->shard_key);
    uint32_t p;
    int rc;

    *src = -1;
    *fixed = -1;
    if (r->req.shard_value != NULL) {
        rc = route_locate(t, r->req.shard_value, &p, r->err);
        *fixed = p;
        return rc;
    }
    if (it != NULL && (*src = item_key_tref(r, it, insert_select_scope(sql))) >= 0 &&
        colocated(t, r->rt->tables[*src]))
        return 0;
    if ((*src = star_key_tref(r, into, insert_select_scope(sql))) >= 0 &&
        colocated(t, r->rt->tables[*src]))
        return 0;
    *src = -1;
    if (it != NULL) {
        if (it->value.kind != DAL_OPND_EXPR) {
            rc = route_locate_opnd(r, t, &it->value, fixed);
            if (rc == 0 && *fixed < 0)
                rc = err_set(r->err, DAL_ESHARD, "INSERT into %s: the shard key %s is NULL",
                             t->cfg->name, t->cfg->shard_key);
            return rc;
        }
    }
    return err_set(r->err, DAL_EUNSUPPORTED,
                   "INSERT ... SELECT into sharded table %s: dal cannot tell which shard each "
                   "row belongs to; list the columns and select %s from a table of its "
                   "binding group's shard key (the rows then stay on their shard), or a "
                   "single value, or pass a shard value", t->cfg->name, t->cfg->shard_key);
}

/* Put the target on every route: the source row's position, or the one. */
static int place_into(router_t *r, size_t into, long src, int64_t fixed)
{
    dal_routing_t *rt = r->rt;
    const dal_table_t *t = rt->tables[into];
    size_t k;

    for (k = 0; k < rt->nroutes; k++) {
        int32_t pos = src >= 0 ? rt->routes[k].pos[src] : (int32_t)fixed;
        if (pos < 0 || t->nodes[pos / t->tables_per_db] != rt->routes[k].node)
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "INSERT ... SELECT: the rows for %s belong on datasource %s but "
                           "are read on %s; rows cannot move between nodes",
                           t->cfg->name, pos < 0 ? "?" : t->nodes[pos / t->tables_per_db]->cfg->name,
                           rt->routes[k].node->cfg->name);
        rt->routes[k].pos[into] = pos;
    }
    return 0;
}

/* Mark the members of group g (only them) in r->in_group. */
static void mark_group(router_t *r, int32_t g)
{
    int32_t m;
    size_t k;

    if (r->marked == -2)
        for (k = 0; k < r->sql->ntrefs; k++)
            r->in_group[k] = 0;
    else if (r->marked >= 0)
        for (m = r->member_head[r->marked]; m >= 0; m = r->member_next[m])
            r->in_group[m] = 0;
    for (m = g >= 0 ? r->member_head[g] : -1; m >= 0; m = r->member_next[m])
        r->in_group[m] = 1;
    r->marked = g;
}

/* The rows of scope sc are rows of the statement's result (the top SELECT,
 * the statement's own tables, or a row-wise derived table in their FROM),
 * none of them maybe all NULL. */
static int anchored(const dal_sql_t *sql, int sc)
{
    for (; sc >= 0; sc = sql->scopes[sc].parent) {
        const struct dal_sql_scope *s = &sql->scopes[sc];
        if (s->null_side)
            return 0;
        if (s->kind == DAL_SCOPE_STATEMENT || s->kind == DAL_SCOPE_TOP)
            return 1;
        if (s->kind != DAL_SCOPE_DERIVED || !s->rowwise)
            return 0;
    }
    return 0;
}

/* Where the scope of table ref k sits, for messages. */
static const char *scope_words(const dal_sql_t *sql, size_t k)
{
    switch (sql->scopes[sql->trefs[k].scope].kind) {
    case DAL_SCOPE_DERIVED: return " (in a derived table)";
    case DAL_SCOPE_SUBQUERY: return " (in a subquery)";
    case DAL_SCOPE_CTE: return " (in a WITH query)";
    default: return "";
    }
}

/* The positions group g's own conditions allow, narrowed to the explicit
 * shard value if there is one. */
static int group_posset(router_t *r, int32_t g, posset_t *set)
{
    const dal_table_t *t = r->rt->tables[g];
    uint32_t xp;
    int rc;

    mark_group(r, g);
    rc = r->sql->kind == DAL_SQL_DDL ? 0 : route_where_posset(r, g, set);
    if (rc != 0 || r->req.shard_value == NULL)
        return rc;
    rc = route_locate(t, r->req.shard_value, &xp, r->err);
    if (rc == 0 && !posset_has(set, xp))
        rc = err_set(r->err, DAL_EROUTE,
                     "the shard value given routes %s to %s_%u, but the statement's "
                     "conditions on %s exclude that table",
                     t->cfg->name, t->cfg->name, xp, t->cfg->shard_key);
    if (rc == 0) {
        posset_free(set);
        rc = route_single_posset(xp, set, r->err);
    }
    return rc;
}

static int is_root(const router_t *r, size_t k)
{
    return r->grp[k] == (int32_t)k && r->lead[k] < 0;
}

/* The tref a write changes rows of, or ntrefs. */
static size_t written_tref(const router_t *r)
{
    size_t k;

    if (r->sql->kind != DAL_SQL_UPDATE && r->sql->kind != DAL_SQL_DELETE &&
        !((r->sql->kind == DAL_SQL_INSERT || r->sql->kind == DAL_SQL_REPLACE) &&
          !r->sql->insert_select))
        return r->sql->ntrefs;
    for (k = 0; k < r->sql->ntrefs; k++)
        if (r->sql->trefs[k].role != DAL_TREF_FROM && route_is_sharded(r, k))
            return k;
    return r->sql->ntrefs;
}

/* The driver: the written table's group, else the one root group that
 * needs several tables, else the first root group.  Two that need
 * several are refused. */
static int pick_driver(router_t *r, int32_t *driver)
{
    const dal_sql_t *sql = r->sql;
    size_t k, w = written_tref(r);
    int32_t multi = -1;
    int rc;

    *driver = w < sql->ntrefs ? r->grp[w] : -1;
    if (w < sql->ntrefs && r->lead[*driver] >= 0)
        *driver = -1; /* never: a written table is of scope 0, which follows nobody */
    for (k = 0; k < sql->ntrefs; k++) {
        posset_t set = POSSET_ALL;
        if (!is_root(r, k))
            continue;
        if (*driver < 0 && multi < 0)
            *driver = (int32_t)k; /* the first, unless another needs several */
        rc = group_posset(r, (int32_t)k, &set);
        if (rc == 0 && (set.all || set.n > 1) && (int32_t)k != *driver && w < sql->ntrefs)
            rc = err_set(r->err, DAL_EUNSUPPORTED,
                         "%s%s would be read from several of its tables while %s is "
                         "written on one: give %s a condition on its shard key %s, or join "
                         "it to %s on the shard key", sql->trefs[k].name,
                         scope_words(sql, k), sql->trefs[*driver].name, sql->trefs[k].name,
                         r->rt->tables[k]->cfg->shard_key, sql->trefs[*driver].name);
        else if (rc == 0 && (set.all || set.n > 1) && w >= sql->ntrefs) {
            if (multi >= 0 && sql->has_union &&
                sql->scopes[sql->trefs[multi].scope].kind == DAL_SCOPE_TOP &&
                sql->scopes[sql->trefs[k].scope].kind == DAL_SCOPE_TOP)
                rc = err_set(r->err, DAL_EUNSUPPORTED,
                             "not supported over several data nodes: UNION, EXCEPT or "
                             "INTERSECT (%s and %s would each be read from several of their "
                             "tables)", sql->trefs[multi].name, sql->trefs[k].name);
            else if (multi >= 0)
                rc = err_set(r->err, DAL_EUNSUPPORTED,
                             "%s%s and %s%s would each be read from several of their tables: "
                             "dal cannot join shards; give one a condition on its shard key "
                             "or join them on the shard key (binding tables)",
                             sql->trefs[multi].name, scope_words(sql, (size_t)multi),
                             sql->trefs[k].name, scope_words(sql, k));
            multi = (int32_t)k;
            *driver = multi;
        }
        posset_free(&set);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Whether group g is read where repeating the statement per table of it
 * gives the statement's answer: see the comment on groups. */
static int check_driver(router_t *r, int32_t g)
{
    const dal_sql_t *sql = r->sql;
    size_t k, any = 0, other = 0, outer = 0;

    for (k = 0; k < sql->ntrefs; k++) {
        if (r->grp[k] == g) {
            any |= anchored(sql, sql->trefs[k].scope);
            outer |= sql->trefs[k].null_side;
        } else if (r->grp[k] < 0 || r->lead[r->grp[k]] < 0) {
            other = 1; /* a table whose rows do not follow the driver's */
        }
    }
    if (!any)
        return err_set(r->err, DAL_EUNSUPPORTED,
                       "%s%s would be read from several of its tables, which dal can only "
                       "do where its rows are rows of the result: give it a condition on its "
                       "shard key %s, or join it to an outer table on the shard key",
                       sql->trefs[g].name, scope_words(sql, (size_t)g),
                       r->rt->tables[g]->cfg->shard_key);
    if (outer && (other || sql->nsources > 0))
        return err_set(r->err, DAL_EUNSUPPORTED,
                       "%s is on the NULL side of an outer join and would be read from "
                       "several of its tables: the other side's rows would repeat on each; "
                       "give %s a condition on its shard key %s", sql->trefs[g].name,
                       sql->trefs[g].name, r->rt->tables[g]->cfg->shard_key);
    return 0;
}

/* The shard key the merge may take as splitting the result's rows by
 * node: the driver's, when one of its tables is in the top SELECT itself
 * (in a derived table the same name may be another column). */
static const char *merge_key(const router_t *r, int32_t g)
{
    size_t k;

    for (k = 0; k < r->sql->ntrefs; k++)
        if (r->grp[k] == g && r->sql->scopes[r->sql->trefs[k].scope].kind == DAL_SCOPE_TOP)
            return r->rt->tables[g]->cfg->shard_key;
    return NULL;
}

/* Route the driver group g: one route per table it needs. */
static int route_driver(router_t *r, int32_t g)
{
    split_list_t *lists = NULL;
    size_t nlists = 0, gtref = (size_t)g;
    posset_t set = POSSET_ALL;
    int rc = group_posset(r, g, &set);

    if (rc == 0 && (set.all || set.n > 1))
        rc = check_driver(r, g);
    if (rc == 0)
        r->rt->merge_key = merge_key(r, g);
    if (rc == 0 && set.all && r->sql->kind != DAL_SQL_DDL)
        rc = route_scatter_allowed(r);
    /* conditions no row can meet (k = NULL, k = 1 AND k = 2): one table
     * answers, with nothing */
    if (rc == 0 && !set.all && set.n == 0)
        rc = route_single_posset(0, &set, r->err);
    mark_group(r, g);
    if (rc == 0)
        rc = route_routes_from_positions(r, &set);
    if (rc == 0)
        rc = route_in_lists(r, gtref, &lists, &nlists);
    if (rc == 0)
        rc = route_cut_routes(r->rt, lists, nlists, &gtref, r->err);
    route_split_lists_free(lists, nlists);
    posset_free(&set);
    return rc;
}

/* A group other than the driver: it must need one table, on the node of
 * every route (a group no row can meet takes whichever of its tables is
 * on the route's node). */
static int place_group(router_t *r, int32_t g)
{
    dal_routing_t *rt = r->rt;
    const dal_table_t *t = rt->tables[g];
    posset_t set = POSSET_ALL;
    size_t k, i;
    int32_t m;
    int rc = group_posset(r, g, &set);

    if (rc == 0 && (set.all || set.n > 1))
        rc = err_set(r->err, DAL_EUNSUPPORTED,
                     "%s%s would be read from several of its tables for each table of %s: "
                     "give it a condition on its shard key %s, or join it to %s on the shard "
                     "key (binding tables)", r->sql->trefs[g].name,
                     scope_words(r->sql, (size_t)g), rt->primary->cfg->name,
                     t->cfg->shard_key, rt->primary->cfg->name);
    for (k = 0; rc == 0 && k < rt->nroutes; k++) {
        int32_t pos = set.n == 1 ? (int32_t)set.v[0] : -1;
        if (set.n == 0) {
            for (i = 0; i < t->cfg->table_shard_num && pos < 0; i++)
                if (t->nodes[i / t->tables_per_db] == rt->routes[k].node)
                    pos = (int32_t)i;
        }
        if (pos < 0 || t->nodes[pos / t->tables_per_db] != rt->routes[k].node)
            rc = err_set(r->err, DAL_EUNSUPPORTED,
                         "%s%s and %s are not on the same datasource for these values "
                         "(%s, %s); a statement must stay on one node",
                         r->sql->trefs[g].name, scope_words(r->sql, (size_t)g),
                         rt->primary->cfg->name, rt->routes[k].node->cfg->name,
                         pos < 0 ? "none" : t->nodes[pos / t->tables_per_db]->cfg->name);
        for (m = r->member_head[g]; rc == 0 && m >= 0; m = r->member_next[m])
            rt->routes[k].pos[m] = pos;
    }
    posset_free(&set);
    return rc;
}

/* Followers take, on each route, the table of the row they follow. */
static void place_followers(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    dal_routing_t *rt = r->rt;
    size_t sc, k;
    int32_t i;

    /* parents come before children in sql->scopes */
    for (sc = 0; sc < sql->nscopes; sc++)
        for (i = r->scope_head[sc]; i >= 0; i = r->scope_next[i]) {
            int32_t lead;
            if (r->grp[i] < 0 || (lead = r->lead[r->grp[i]]) < 0)
                continue;
            for (k = 0; k < rt->nroutes; k++)
                rt->routes[k].pos[i] = rt->routes[k].pos[lead];
        }
}

/* INSERT ... SELECT from no sharded table: one route, the target's. */
static int route_into_only(router_t *r, size_t into, int64_t fixed)
{
    posset_t set = POSSET_NONE;
    size_t k;
    int rc = route_single_posset((uint32_t)fixed, &set, r->err);

    for (k = 0; k < r->sql->ntrefs; k++)
        r->in_group[k] = k == into;
    r->marked = -2;
    if (rc == 0)
        rc = route_routes_from_positions(r, &set);
    posset_free(&set);
    return rc;
}

int route_sharded(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t k, into = sql->insert_select ? into_tref(r) : sql->ntrefs;
    int32_t driver = -1;
    int64_t fixed = -1;
    long src = -1;
    int rc = make_groups(r);

    if (rc == 0 && into < sql->ntrefs && route_is_sharded(r, into))
        rc = into_plan(r, into, &src, &fixed);
    else
        into = sql->ntrefs;
    if (rc == 0)
        rc = pick_driver(r, &driver);
    if (rc != 0)
        return rc;
    if (driver < 0) {
        r->rt->primary = r->rt->tables[into];
        rc = route_into_only(r, into, fixed);
    } else {
        r->rt->primary = r->rt->tables[driver];
        mark_group(r, driver);
        if ((sql->kind == DAL_SQL_INSERT || sql->kind == DAL_SQL_REPLACE) &&
            sql->trefs[driver].role == DAL_TREF_INTO)
            rc = route_insert(r, (size_t)driver);
        else
            rc = route_driver(r, driver);
    }
    for (k = 0; rc == 0 && k < sql->ntrefs; k++)
        if (r->grp[k] >= 0 && is_root(r, k) && (int32_t)k != driver)
            rc = place_group(r, (int32_t)k);
    if (rc == 0)
        place_followers(r);
    if (rc == 0 && into < sql->ntrefs && driver >= 0)
        rc = place_into(r, into, src, fixed);
    if (rc == 0)
        rc = route_check_others(r);
    return rc;
}
