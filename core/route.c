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
#include "route.h"
#include "small.h"
#include "value.h"

/* ------------------------------------------------------------ position sets */

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

static void posset_free(posset_t *s)
{
    dal_small_free(s->v, s->inl);
    s->v = NULL;
    s->n = 0;
}

/* Empty s (freed first) with room for n positions. */
static int posset_alloc(posset_t *s, size_t n)
{
    posset_free(s);
    s->all = 0;
    s->v = dal_small_alloc(s->inl, POSSET_INLINE, n, sizeof *s->v, 0);
    return s->v != NULL ? 0 : -1;
}

/* dst = src; src is left empty. */
static void posset_move(posset_t *dst, posset_t *src)
{
    posset_free(dst);
    dst->all = src->all;
    dst->n = src->n;
    dst->v = src->v;
    if (src->v == src->inl) {
        memcpy(dst->inl, src->inl, src->n * sizeof *src->v);
        dst->v = dst->inl;
    }
    src->v = NULL;
    src->n = 0;
}

static int posset_has(const posset_t *s, uint32_t p)
{
    size_t lo = 0, hi = s->n;

    if (s->all)
        return 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid] == p)
            return 1;
        if (s->v[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* Sort and drop duplicates. */
static void posset_normalize(posset_t *s)
{
    size_t i, j = 0;

    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_u32);
    for (i = 0; i < s->n; i++)
        if (j == 0 || s->v[j - 1] != s->v[i])
            s->v[j++] = s->v[i];
    s->n = s->n ? j : 0;
}

/* a = a ∩ b (b is consumed). */
static void posset_intersect(posset_t *a, posset_t *b)
{
    size_t i, j = 0;

    if (b->all) {
        posset_free(b);
        return;
    }
    if (a->all) {
        posset_move(a, b);
        return;
    }
    for (i = 0; i < a->n; i++)
        if (posset_has(b, a->v[i]))
            a->v[j++] = a->v[i];
    a->n = j;
    posset_free(b);
}

/* ------------------------------------------------------------------ values */

/* An operand's value; string literals are decoded into buf or heap. */
typedef struct opval {
    dal_value_t v;
    char *heap;
    char buf[128];
} opval_t;

enum { OPND_UNUSABLE = 1 };

static int literal_value(const dal_sql_t *sql, const dal_sql_opnd_t *o, opval_t *out,
                         dal_error_t *err)
{
    size_t len = 0;
    char *text = out->buf;
    int64_t i;

    if (dal_sql_literal_text(sql->text, o, out->buf, sizeof out->buf, &len) != 0)
        return dal_err_set(err, DAL_ESQL, "malformed literal at offset %u", o->off);
    if (len >= sizeof out->buf) {
        out->heap = malloc(len + 1);
        if (out->heap == NULL)
            return dal_err_set(err, DAL_ENOMEM, "out of memory");
        dal_sql_literal_text(sql->text, o, out->heap, len + 1, &len);
        text = out->heap;
    }
    if (o->lit_type == DAL_TOK_IDENT) {
        /* NULL, TRUE or FALSE */
        out->v = strcasecmp(text, "NULL") == 0 ? dal_null()
                                                : dal_int(strcasecmp(text, "TRUE") == 0);
        return 0;
    }
    /* numbers that fit an int64 travel as ints; others (1.5, huge ones)
     * as their text, for the strategy to accept or reject */
    if (o->lit_type == DAL_TOK_NUMBER && dal_parse_int64(text, &i) == 0)
        out->v = dal_int(i);
    else
        out->v = dal_strn(text, len);
    return 0;
}

DAL_HOT
static int opnd_value(const dal_sql_t *sql, const dal_sql_opnd_t *o, const dal_value_t *params,
                      size_t nparams, opval_t *out, dal_error_t *err)
{
    out->heap = NULL;
    switch (o->kind) {
    case DAL_OPND_PARAM:
        if (o->param_index < 0 || (size_t)o->param_index >= nparams)
            return dal_err_set(err, DAL_EINVAL, "the statement has %zu ? placeholders but %zu "
                               "parameters were given", sql->nparams, nparams);
        out->v = params[o->param_index];
        return 0;
    case DAL_OPND_LITERAL:
        return literal_value(sql, o, out, err);
    case DAL_OPND_EXPR:
        break;
    }
    return OPND_UNUSABLE;
}

/* ------------------------------------------------------------- the request */

typedef struct route_req {
    const dal_value_t *shard_value; /* borrowed; NULL: none */
    dal_value_t hint_value;         /* storage when the value came from a hint */
    dal_node_t *node;               /* explicit datasource, or NULL */
    int raw;                        /* hint raw: the text as written, on node */
} route_req_t;


static const char *hint(const dal_sql_t *sql, const char *key)
{
    size_t i;

    for (i = 0; i < sql->nhints; i++)
        if (strcmp(sql->hints[i].key, key) == 0)
            return sql->hints[i].value;
    return NULL;
}

static int read_request(const dal_snapshot_t *snap, const dal_sql_t *sql,
                        const dal_query_opts_t *opts, route_req_t *req, dal_error_t *err)
{
    const char *ds = opts ? opts->datasource : NULL;
    const char *hv;

    memset(req, 0, sizeof *req);
    req->shard_value = opts ? opts->shard_value : NULL;
    if (req->shard_value == NULL && (hv = hint(sql, "shard_value")) != NULL) {
        req->hint_value = dal_str(hv);
        req->shard_value = &req->hint_value;
    }
    req->raw = hint(sql, "raw") != NULL;
    if (ds == NULL)
        ds = hint(sql, "datasource");
    if (ds == NULL)
        return req->raw ? dal_err_set(err, DAL_EROUTE, "dal hint raw needs datasource=NAME: the "
                                      "statement runs as written on that datasource") : 0;
    req->node = dal_snapshot_node(snap, ds);
    if (req->node == NULL)
        return dal_err_set(err, DAL_EROUTE, "unknown datasource '%s' (not a [datasource] section)",
                           ds);
    return 0;
}

/* --------------------------------------------------------------- the state */

/* Everything route() works with, so helpers take one argument. */
typedef struct router {
    const dal_snapshot_t *snap;
    const dal_sql_t *sql;
    const dal_value_t *params;
    size_t nparams;
    route_req_t req;
    dal_routing_t *rt;
    dal_error_t *err;
    char *in_group;              /* owned (or in_group_inl), per tref: member of the
                                    group being routed */
    int32_t *grp;                /* owned (or grp_inl), per tref: the root tref of its
                                    group, -1 for a table dal does not shard */
    int32_t *lead;               /* owned (or lead_inl), per group root: the tref of an
                                    enclosing scope the group follows, or -1 */
    char in_group_inl[DAL_ROUTING_INLINE];
    int32_t grp_inl[DAL_ROUTING_INLINE], lead_inl[DAL_ROUTING_INLINE];
} router_t;

static int is_write(dal_sql_kind_t k)
{
    return k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_UPDATE ||
           k == DAL_SQL_DELETE || k == DAL_SQL_DDL;
}

/* One strategy call, with the result checked: a plugin bug must not
 * become a silently wrong shard. */
DAL_HOT
static int locate(const dal_table_t *t, const dal_value_t *v, uint32_t *table, dal_error_t *err)
{
    dal_shard_pos_t pos;
    int rc = t->ops->locate(t->strategy, v, &pos, err);

    if (rc != 0) {
        /* the strategy's message quotes the value */
        dal_err_prefix(err, "table %s (strategy %s)", t->cfg->name, t->cfg->strategy);
        return rc < 0 ? rc : DAL_ESHARD;
    }
    if (pos.table >= t->cfg->table_shard_num || pos.db != pos.table / t->tables_per_db)
        return dal_err_set(err, DAL_EPLUGIN,
                           "table %s: shard plugin '%s' returned db %u table %u, which is not a "
                           "valid position (%u dbs, %u tables)",
                           t->cfg->name, t->cfg->strategy, pos.db, pos.table,
                           t->cfg->db_shard_num, t->cfg->table_shard_num);
    *table = pos.table;
    return 0;
}

/* Locate an operand's value; *pos = -1 for NULL (matches nothing) and
 * returns OPND_UNUSABLE for an expression. */
DAL_HOT
static int locate_opnd(router_t *r, const dal_table_t *t, const dal_sql_opnd_t *o, int64_t *pos)
{
    opval_t ov;
    uint32_t p;
    int rc = opnd_value(r->sql, o, r->params, r->nparams, &ov, r->err);

    if (rc != 0)
        return rc;
    if (ov.v.type == DAL_TYPE_NULL) {
        *pos = -1;
    } else {
        rc = locate(t, &ov.v, &p, r->err);
        *pos = p;
    }
    free(ov.heap);
    return rc;
}

/* ---------------------------------------------------------- conditions */

/*
 * Names are resolved by scope (sql.h): a condition narrows only a table of
 * its own scope, and a column dal cannot tie to a table for certain -- a
 * derived table's column, an alias it does not know, an outer table seen
 * from a subquery -- narrows nothing.
 */

static int is_sharded(const router_t *r, size_t k)
{
    const dal_table_t *t = r->rt->tables[k];

    return t != NULL && t->sharded;
}

/* The table reference the qualifier q names, seen from scope sc (an alias,
 * or the name of a table that has none), or -1: a derived table, a common
 * table expression, or nothing dal knows.  *at gets the scope it is in. */
static long qualified_tref(const dal_sql_t *sql, int sc, const char *q, int *at)
{
    size_t k;

    for (; sc >= 0; sc = sql->scopes[sc].parent) {
        for (k = 0; k < sql->ntrefs; k++) {
            const struct dal_sql_tref *t = &sql->trefs[k];
            if (t->scope == sc && strcasecmp(t->alias ? t->alias : t->name, q) == 0) {
                *at = sc;
                return (long)k;
            }
        }
        for (k = 0; k < sql->nsources; k++)
            if (sql->sources[k].scope == sc && strcasecmp(sql->sources[k].name, q) == 0)
                return -1;
    }
    return -1;
}

/* The sharded table reference whose shard key the column [q.]col, written
 * in scope sc, is; -1 if none.  An unqualified column belongs to a table of
 * its own scope (SQL looks there first, and every sharded table has its
 * shard key, so the same name anywhere else in the scope would be
 * ambiguous).  before, when not 0, keeps to the tables written before that
 * offset (the left side of USING).  own: the table must be of scope sc. */
static long key_tref(const router_t *r, int sc, const char *q, const char *col,
                     uint32_t before, int own)
{
    const dal_sql_t *sql = r->sql;
    size_t k;
    long t;
    int at = -1;

    if (q != NULL) {
        t = qualified_tref(sql, sc, q, &at);
        if (t < 0 || (own && at != sc) || !is_sharded(r, (size_t)t) ||
            strcasecmp(col, r->rt->tables[t]->cfg->shard_key) != 0)
            return -1;
        return t;
    }
    for (k = 0; k < sql->ntrefs; k++)
        if (sql->trefs[k].scope == sc && is_sharded(r, k) &&
            (before == 0 || sql->trefs[k].off < before) &&
            strcasecmp(col, r->rt->tables[k]->cfg->shard_key) == 0)
            return (long)k;
    return -1;
}

/* Does condition c narrow table ref i (a value on its shard key, in its
 * own scope)? */
static int cond_on_tref(const router_t *r, const struct dal_sql_cond *c, size_t i)
{
    return c->op != DAL_COND_COLEQ && key_tref(r, c->scope, c->qualifier, c->column, 0, 1) == (long)i;
}

/* Ask the strategy which positions [lo, hi] touches (NULL: unbounded). */
static int range_posset(router_t *r, const dal_table_t *t, const dal_value_t *lo, int lo_inc,
                        const dal_value_t *hi, int hi_inc, posset_t *out)
{
    dal_shard_pos_t *tmp;
    size_t i, n = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if (t->ops->locate_range == NULL) {
        out->all = 1;
        return 0;
    }
    tmp = malloc(t->cfg->table_shard_num * sizeof *tmp);
    if (tmp == NULL || posset_alloc(out, t->cfg->table_shard_num) != 0) {
        free(tmp);
        return dal_err_set(r->err, DAL_ENOMEM, "out of memory");
    }
    rc = t->ops->locate_range(t->strategy, lo, lo_inc, hi, hi_inc, tmp, &n, r->err);
    for (i = 0; rc == 0 && i < n && i < t->cfg->table_shard_num; i++)
        out->v[out->n++] = tmp[i].table;
    free(tmp);
    if (rc != 0)
        dal_err_prefix(r->err, "table %s (strategy %s)", t->cfg->name, t->cfg->strategy);
    posset_normalize(out);
    return rc;
}

static int cond_posset(router_t *r, const dal_table_t *t, const struct dal_sql_cond *c,
                       posset_t *out)
{
    const dal_value_t *lo = NULL, *hi = NULL;
    opval_t a, b;
    int lo_inc = 0, hi_inc = 0, rc;
    size_t i;

    memset(out, 0, sizeof *out);
    a.heap = b.heap = NULL;
    if (c->op == DAL_COND_EQ || c->op == DAL_COND_IN) {
        if (posset_alloc(out, c->nvals) != 0)
            return dal_err_set(r->err, DAL_ENOMEM, "out of memory");
        for (i = 0; i < c->nvals; i++) {
            int64_t p;
            rc = locate_opnd(r, t, &c->vals[i], &p);
            if (rc == OPND_UNUSABLE) {
                posset_free(out);
                out->all = 1;
                return 0;
            }
            if (rc != 0)
                return rc;
            if (p >= 0)
                out->v[out->n++] = (uint32_t)p;
        }
        posset_normalize(out);
        return 0;
    }
    /* a range: BETWEEN a AND b, or one side of <, <=, >, >= */
    rc = opnd_value(r->sql, &c->vals[0], r->params, r->nparams, &a, r->err);
    if (rc == 0 && c->op == DAL_COND_BETWEEN)
        rc = opnd_value(r->sql, &c->vals[1], r->params, r->nparams, &b, r->err);
    if (rc == OPND_UNUSABLE) {
        out->all = 1;
        rc = 0;
        goto done;
    }
    if (rc != 0)
        goto done;
    switch (c->op) {
    case DAL_COND_BETWEEN: lo = &a.v; hi = &b.v; lo_inc = hi_inc = 1; break;
    case DAL_COND_LT: hi = &a.v; break;
    case DAL_COND_LE: hi = &a.v; hi_inc = 1; break;
    case DAL_COND_GT: lo = &a.v; break;
    default: lo = &a.v; lo_inc = 1; break;
    }
    rc = range_posset(r, t, lo, lo_inc, hi, hi_inc, out);
done:
    free(a.heap);
    free(b.heap);
    return rc;
}

/* Integer bounds of the range conditions on one shard key, folded into
 * one interval so `k >= 10 AND k < 12` asks the strategy for [10, 12). */
typedef struct range_acc {
    int has_lo, has_hi, lo_inc, hi_inc;
    int64_t lo, hi;
    size_t tref;
    int used;
} range_acc_t;

static int is_range(dal_cond_op_t op)
{
    return op == DAL_COND_BETWEEN || op == DAL_COND_LT || op == DAL_COND_LE ||
           op == DAL_COND_GT || op == DAL_COND_GE;
}

static void acc_lo(range_acc_t *a, int64_t v, int inc)
{
    if (!a->has_lo || v > a->lo || (v == a->lo && !inc)) {
        a->lo = v;
        a->lo_inc = inc;
    }
    a->has_lo = 1;
}

static void acc_hi(range_acc_t *a, int64_t v, int inc)
{
    if (!a->has_hi || v < a->hi || (v == a->hi && !inc)) {
        a->hi = v;
        a->hi_inc = inc;
    }
    a->has_hi = 1;
}

/* Fold c into acc if all its values are integers; returns 1 if folded. */
static int fold_range(router_t *r, const struct dal_sql_cond *c, size_t tref, range_acc_t *acc)
{
    opval_t v[2];
    size_t i, n = c->op == DAL_COND_BETWEEN ? 2 : 1;
    int ok = 1;

    for (i = 0; i < n; i++) {
        if (opnd_value(r->sql, &c->vals[i], r->params, r->nparams, &v[i], NULL) != 0 ||
            v[i].v.type != DAL_TYPE_INT)
            ok = 0;
        free(v[i].heap);
    }
    if (!ok)
        return 0;
    switch (c->op) {
    case DAL_COND_BETWEEN: acc_lo(acc, v[0].v.v.i, 1); acc_hi(acc, v[1].v.v.i, 1); break;
    case DAL_COND_LT: acc_hi(acc, v[0].v.v.i, 0); break;
    case DAL_COND_LE: acc_hi(acc, v[0].v.v.i, 1); break;
    case DAL_COND_GT: acc_lo(acc, v[0].v.v.i, 0); break;
    default: acc_lo(acc, v[0].v.v.i, 1); break;
    }
    acc->tref = tref;
    acc->used = 1;
    return 1;
}

static int acc_posset(router_t *r, const range_acc_t *a, posset_t *out)
{
    dal_value_t lo = dal_int(a->lo), hi = dal_int(a->hi);

    return range_posset(r, r->rt->tables[a->tref], a->has_lo ? &lo : NULL, a->lo_inc,
                        a->has_hi ? &hi : NULL, a->hi_inc, out);
}

/* The positions the WHERE clause allows for the group whose tables are
 * marked in r->in_group. */
static int where_posset(router_t *r, posset_t *set)
{
    const dal_sql_t *sql = r->sql;
    range_acc_t acc;
    posset_t one;
    size_t c, i;
    int rc;

    memset(set, 0, sizeof *set);
    memset(&acc, 0, sizeof acc);
    set->all = 1;
    for (c = 0; c < sql->nconds; c++) {
        const struct dal_sql_cond *cd = &sql->conds[c];
        for (i = 0; i < sql->ntrefs; i++)
            if (r->in_group[i] && cond_on_tref(r, cd, i))
                break;
        if (i == sql->ntrefs || (is_range(cd->op) && fold_range(r, cd, i, &acc)))
            continue;
        rc = cond_posset(r, r->rt->tables[i], cd, &one);
        if (rc != 0) {
            posset_free(&one);
            return rc;
        }
        posset_intersect(set, &one);
    }
    if (!acc.used)
        return 0;
    rc = acc_posset(r, &acc, &one);
    if (rc != 0) {
        posset_free(&one);
        return rc;
    }
    posset_intersect(set, &one);
    return 0;
}

/* ------------------------------------------------------------------ routes */

static DAL_INLINE int alloc_routes(dal_routing_t *rt, size_t nroutes, size_t ntrefs,
                                   dal_error_t *err)
{
    size_t i;

    rt->routes = dal_small_alloc(&rt->route_inl, 1, nroutes, sizeof *rt->routes, 1);
    rt->pos = dal_small_alloc(rt->pos_inl, DAL_ROUTING_INLINE, nroutes * ntrefs,
                              sizeof *rt->pos, 0);
    if (rt->routes == NULL || rt->pos == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
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

/* A list whose items the routes share out: spans and owning positions. */
typedef struct split_list {
    dal_cut_t *items;   /* owned */
    int64_t *pos;       /* owned */
    size_t n;
} split_list_t;

static void split_lists_free(split_list_t *l, size_t n)
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
static int cut_routes(dal_routing_t *rt, const split_list_t *lists, size_t nlists,
                      const size_t *group_tref, dal_error_t *err)
{
    size_t k, l;

    for (k = 0; k < rt->nroutes; k++) {
        uint32_t keep = (uint32_t)rt->routes[k].pos[*group_tref];
        rt->routes[k].cut_first = (uint32_t)rt->ncuts;
        for (l = 0; l < nlists; l++)
            if (cut_list(rt, lists[l].items, lists[l].pos, lists[l].n, keep) != 0)
                return dal_err_set(err, DAL_ENOMEM, "out of memory");
        rt->routes[k].ncuts = (uint32_t)(rt->ncuts - rt->routes[k].cut_first);
    }
    return 0;
}

/* The IN conditions on the group's shard key, with each value's position.
 * A list holding an expression is not split (every route keeps it whole). */
static int in_lists(router_t *r, size_t gtref, split_list_t **out, size_t *nout)
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
        return dal_err_set(r->err, DAL_ENOMEM, "out of memory");
    for (c = 0; c < sql->nconds && rc == 0; c++) {
        const struct dal_sql_cond *cd = &sql->conds[c];
        split_list_t *l = &lists[n];
        if (cd->op != DAL_COND_IN || cd->nvals < 2 || !cond_on_tref(r, cd, gtref))
            continue;
        l->items = malloc(cd->nvals * sizeof *l->items);
        l->pos = malloc(cd->nvals * sizeof *l->pos);
        if (l->items == NULL || l->pos == NULL)
            return dal_err_set(r->err, DAL_ENOMEM, "out of memory");
        l->n = cd->nvals;
        n++;
        for (j = 0; j < cd->nvals && rc == 0; j++) {
            l->items[j].off = cd->vals[j].off;
            l->items[j].len = cd->vals[j].len;
            rc = locate_opnd(r, r->rt->tables[gtref], &cd->vals[j], &l->pos[j]);
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
static int routes_from_positions(router_t *r, const posset_t *set)
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
        return dal_err_set(r->err, DAL_EROUTE,
                           "the shard value routes table %s to datasource %s, but datasource %s "
                           "was requested",
                           p->cfg->name, p->nodes[(set->all ? 0 : set->v[0]) / p->tables_per_db]
                                             ->cfg->name,
                           r->req.node->cfg->name);
    return dal_err_set(r->err, DAL_EROUTE, "table %s has no physical table on datasource %s",
                       p->cfg->name, r->req.node->cfg->name);
}

/* Make set (initialised, maybe holding positions) the single position p. */
static int single_posset(uint32_t p, posset_t *set, dal_error_t *err)
{
    if (posset_alloc(set, 1) != 0)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    set->v[0] = p;
    set->n = 1;
    return 0;
}

static int explicit_position(router_t *r, uint32_t *p)
{
    return locate(r->rt->primary, r->req.shard_value, p, r->err);
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
            return dal_err_set(r->err, DAL_ESQL, "INSERT row %zu has %zu values for %zu columns",
                               i + 1, sql->rows[i].nvals, sql->ncolumns);
        rc = locate_opnd(r, t, &sql->rows[i].vals[kc], &pos[i]);
        if (rc == OPND_UNUSABLE)
            return dal_err_set(r->err, DAL_EUNSUPPORTED,
                               "INSERT into %s: row %zu: the shard key %s must be a literal or ?, "
                               "not an expression", t->cfg->name, i + 1, t->cfg->shard_key);
        if (rc != 0)
            return rc;
        if (pos[i] < 0)
            return dal_err_set(r->err, DAL_ESHARD, "INSERT into %s: row %zu: the shard key %s is "
                               "NULL", t->cfg->name, i + 1, t->cfg->shard_key);
    }
    return 0;
}

/* INSERT/REPLACE into a sharded table: rows grouped by position. */
static int route_insert(router_t *r, size_t gtref)
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
            return dal_err_set(r->err, DAL_EROUTE,
                               "INSERT into sharded table %s must list its shard key %s with a "
                               "value per row (or pass a shard value)",
                               t->cfg->name, t->cfg->shard_key);
        rc = single_posset(xp, &set, r->err);
        goto routes;
    }
    rows.n = sql->nrows;
    rows.items = dal_small_alloc(items_inl, POSSET_INLINE, rows.n, sizeof *rows.items, 0);
    rows.pos = dal_small_alloc(pos_inl, POSSET_INLINE, rows.n, sizeof *rows.pos, 0);
    if (rows.items == NULL || rows.pos == NULL || posset_alloc(&set, rows.n) != 0) {
        rc = dal_err_set(r->err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    rc = insert_row_positions(r, kc, rows.pos);
    for (i = 0; rc == 0 && i < rows.n; i++) {
        rows.items[i].off = sql->rows[i].off;
        rows.items[i].len = sql->rows[i].len;
        set.v[set.n++] = (uint32_t)rows.pos[i];
        if (r->req.shard_value != NULL && rows.pos[i] != (int64_t)xp)
            rc = dal_err_set(r->err, DAL_EROUTE,
                             "INSERT into %s: row %zu's %s routes to %s_%lld, which contradicts "
                             "the shard value given (%s_%u)",
                             t->cfg->name, i + 1, t->cfg->shard_key, t->cfg->name,
                             (long long)rows.pos[i], t->cfg->name, xp);
    }
    posset_normalize(&set);
routes:
    if (rc == 0)
        rc = routes_from_positions(r, &set);
    if (rc == 0)
        rc = cut_routes(r->rt, &rows, rows.n ? 1 : 0, &gtref, r->err);
done:
    dal_small_free(rows.items, items_inl);
    dal_small_free(rows.pos, pos_inl);
    posset_free(&set);
    return rc;
}

static int scatter_allowed(router_t *r)
{
    size_t i;

    for (i = 0; i < r->sql->ntrefs; i++)
        if (r->in_group[i] && !r->rt->tables[i]->cfg->allow_scatter)
            return dal_err_set(r->err, DAL_EROUTE,
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
        return dal_err_set(r->err, DAL_EROUTE,
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
            return dal_err_set(r->err, DAL_EROUTE,
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
    if (node == NULL)
        return dal_err_set(r->err, DAL_EROUTE,
                           "no datasource for this statement: it names no configured table and "
                           "there is no [dal] default_datasource");
    rc = alloc_routes(rt, 1, r->sql->ntrefs, r->err);
    if (rc == 0)
        rt->routes[0].node = node;
    return rc;
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
                return dal_err_set(r->err, DAL_EUNSUPPORTED,
                                   "UPDATE may not change %s, the shard key of %s: the row would "
                                   "stay on the wrong shard (delete it and insert it anew)",
                                   t->cfg->shard_key, t->cfg->name);
    }
    return 0;
}

/* Unsharded and broadcast tables named next to sharded ones must exist on
 * every node the statement runs on. */
static int check_others(router_t *r)
{
    dal_routing_t *rt = r->rt;
    size_t i, k;

    for (i = 0; i < r->sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t == NULL || t->sharded)
            continue;
        for (k = 0; k < rt->nroutes; k++)
            if (!table_on_node(t, rt->routes[k].node))
                return dal_err_set(r->err, DAL_EUNSUPPORTED,
                                   "table %s is not on datasource %s, where %s's rows for this "
                                   "statement are", t->cfg->name, rt->routes[k].node->cfg->name,
                                   rt->primary->cfg->name);
        if (t->cfg->kind == DAL_TABLE_BROADCAST && is_write(r->sql->kind) &&
            r->sql->trefs[i].role != DAL_TREF_FROM)
            return dal_err_set(r->err, DAL_EUNSUPPORTED,
                               "a statement cannot write broadcast table %s together with sharded "
                               "table %s", t->cfg->name, rt->primary->cfg->name);
    }
    return 0;
}

/* ------------------------------------------------------------------ groups */

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
    return side == 1 ? key_tref(r, c->scope, c->qualifier, c->column, c->using_off, 0)
                     : key_tref(r, c->scope, c->qualifier2, c->column2, 0, 0);
}

static int make_groups(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t n = sql->ntrefs, c, k;
    int pass;

    r->grp = dal_small_alloc(r->grp_inl, DAL_ROUTING_INLINE, n, sizeof *r->grp, 0);
    r->lead = dal_small_alloc(r->lead_inl, DAL_ROUTING_INLINE, n, sizeof *r->lead, 0);
    r->in_group = dal_small_alloc(r->in_group_inl, DAL_ROUTING_INLINE, n, 1, 1);
    if (r->grp == NULL || r->lead == NULL || r->in_group == NULL)
        return dal_err_set(r->err, DAL_ENOMEM, "out of memory");
    for (k = 0; k < n; k++) {
        /* INSERT ... SELECT's target is placed after the SELECT is routed */
        int into = sql->insert_select && sql->trefs[k].role == DAL_TREF_INTO;
        r->grp[k] = is_sharded(r, k) && !into ? (int32_t)k : -1;
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
    return 0;
}

/* ------------------------------------------------------ INSERT ... SELECT */

/*
 * INSERT INTO t ... SELECT: each row stays on the node that runs it, so
 * the rows' shard key must be known to belong there.  It is when the
 * SELECT puts a source table's shard key into t's shard key and the two
 * are laid out alike (the row goes to the position it came from), or a
 * literal or ? (one position).  The INSERT's target takes no part in
 * grouping; it is placed on each route once the SELECT is routed.
 */

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

/* Lex the item's expression into at most 4 tokens; returns their number
 * (5: more than 4). */
static int item_tokens(const dal_sql_t *sql, const struct dal_sql_item *it, dal_token_t *tk)
{
    dal_lexer_t lx;
    int n = 0;

    dal_lex_init(&lx, sql->text, it->off + it->len);
    lx.pos = it->off;
    for (;;) {
        dal_token_t t = dal_lex_next(&lx);
        if (t.type == DAL_TOK_EOF)
            return n;
        if (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT)
            continue;
        if (n == 4 || t.type == DAL_TOK_ERROR)
            return 5;
        tk[n++] = t;
    }
}

/* The source tref whose shard key the item is (a column of the SELECT's
 * own scope), or -1. */
static long item_key_tref(const router_t *r, const struct dal_sql_item *it, int sc)
{
    dal_token_t tk[5];
    char q[128], col[128];
    int n = item_tokens(r->sql, it, tk);

    if (n != 1 && n != 3)
        return -1;
    if ((tk[n - 1].type != DAL_TOK_IDENT && tk[n - 1].type != DAL_TOK_QIDENT) ||
        dal_ident_unquote(r->sql->text, &tk[n - 1], col, sizeof col) >= sizeof col)
        return -1;
    if (n == 1)
        return key_tref(r, sc, NULL, col, 0, 1);
    if ((tk[0].type != DAL_TOK_IDENT && tk[0].type != DAL_TOK_QIDENT) || tk[1].len != 1 ||
        r->sql->text[tk[1].off] != '.' ||
        dal_ident_unquote(r->sql->text, &tk[0], q, sizeof q) >= sizeof q)
        return -1;
    return key_tref(r, sc, q, col, 0, 1);
}

/* The item as an operand when it is one literal or ?, else kind EXPR. */
static dal_sql_opnd_t item_operand(const dal_sql_t *sql, const struct dal_sql_item *it)
{
    dal_token_t tk[5];
    dal_sql_opnd_t o;
    int n = item_tokens(sql, it, tk), k = n - 1;
    size_t i;

    memset(&o, 0, sizeof o);
    o.kind = DAL_OPND_EXPR;
    o.param_index = -1;
    o.off = it->off;
    o.len = it->len;
    if (n == 2 && tk[0].len == 1 && sql->text[tk[0].off] == '-' && tk[1].type == DAL_TOK_NUMBER)
        o.negative = 1;
    else if (n != 1)
        return o;
    switch (tk[k].type) {
    case DAL_TOK_PARAM:
        for (i = 0; i < sql->nparams; i++)
            if (sql->param_offs[i] == tk[k].off && n == 1) {
                o.kind = DAL_OPND_PARAM;
                o.param_index = (int)i;
            }
        break;
    case DAL_TOK_NUMBER:
        o.kind = DAL_OPND_LITERAL;
        o.lit_type = DAL_TOK_NUMBER;
        break;
    case DAL_TOK_STRING:
        if (n == 1) {
            o.kind = DAL_OPND_LITERAL;
            o.lit_type = DAL_TOK_STRING;
        }
        break;
    default:
        break;
    }
    return o;
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
        if (sql->trefs[k].scope == sc && (src >= 0 || !is_sharded(r, k)))
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
        rc = locate(t, r->req.shard_value, &p, r->err);
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
        dal_sql_opnd_t o = item_operand(sql, it);
        if (o.kind != DAL_OPND_EXPR) {
            rc = locate_opnd(r, t, &o, fixed);
            if (rc == 0 && *fixed < 0)
                rc = dal_err_set(r->err, DAL_ESHARD, "INSERT into %s: the shard key %s is NULL",
                                 t->cfg->name, t->cfg->shard_key);
            return rc;
        }
    }
    return dal_err_set(r->err, DAL_EUNSUPPORTED,
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
            return dal_err_set(r->err, DAL_EUNSUPPORTED,
                               "INSERT ... SELECT: the rows for %s belong on datasource %s but "
                               "are read on %s; rows cannot move between nodes",
                               t->cfg->name, pos < 0 ? "?" : t->nodes[pos / t->tables_per_db]->cfg->name,
                               rt->routes[k].node->cfg->name);
        rt->routes[k].pos[into] = pos;
    }
    return 0;
}

/* Mark the members of group g in r->in_group. */
static void mark_group(router_t *r, int32_t g)
{
    size_t k;

    for (k = 0; k < r->sql->ntrefs; k++)
        r->in_group[k] = r->grp[k] == g;
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
    rc = r->sql->kind == DAL_SQL_DDL ? 0 : where_posset(r, set);
    if (rc != 0 || r->req.shard_value == NULL)
        return rc;
    rc = locate(t, r->req.shard_value, &xp, r->err);
    if (rc == 0 && !posset_has(set, xp))
        rc = dal_err_set(r->err, DAL_EROUTE,
                         "the shard value given routes %s to %s_%u, but the statement's "
                         "conditions on %s exclude that table",
                         t->cfg->name, t->cfg->name, xp, t->cfg->shard_key);
    if (rc == 0) {
        posset_free(set);
        rc = single_posset(xp, set, r->err);
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
        if (r->sql->trefs[k].role != DAL_TREF_FROM && is_sharded(r, k))
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
            rc = dal_err_set(r->err, DAL_EUNSUPPORTED,
                             "%s%s would be read from several of its tables while %s is "
                             "written on one: give %s a condition on its shard key %s, or join "
                             "it to %s on the shard key", sql->trefs[k].name,
                             scope_words(sql, k), sql->trefs[*driver].name, sql->trefs[k].name,
                             r->rt->tables[k]->cfg->shard_key, sql->trefs[*driver].name);
        else if (rc == 0 && (set.all || set.n > 1) && w >= sql->ntrefs) {
            if (multi >= 0 && sql->has_union &&
                sql->scopes[sql->trefs[multi].scope].kind == DAL_SCOPE_TOP &&
                sql->scopes[sql->trefs[k].scope].kind == DAL_SCOPE_TOP)
                rc = dal_err_set(r->err, DAL_EUNSUPPORTED,
                                 "not supported over several data nodes: UNION, EXCEPT or "
                                 "INTERSECT (%s and %s would each be read from several of their "
                                 "tables)", sql->trefs[multi].name, sql->trefs[k].name);
            else if (multi >= 0)
                rc = dal_err_set(r->err, DAL_EUNSUPPORTED,
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
        return dal_err_set(r->err, DAL_EUNSUPPORTED,
                           "%s%s would be read from several of its tables, which dal can only "
                           "do where its rows are rows of the result: give it a condition on its "
                           "shard key %s, or join it to an outer table on the shard key",
                           sql->trefs[g].name, scope_words(sql, (size_t)g),
                           r->rt->tables[g]->cfg->shard_key);
    if (outer && (other || sql->nsources > 0))
        return dal_err_set(r->err, DAL_EUNSUPPORTED,
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
        rc = scatter_allowed(r);
    /* conditions no row can meet (k = NULL, k = 1 AND k = 2): one table
     * answers, with nothing */
    if (rc == 0 && !set.all && set.n == 0)
        rc = single_posset(0, &set, r->err);
    mark_group(r, g);
    if (rc == 0)
        rc = routes_from_positions(r, &set);
    if (rc == 0)
        rc = in_lists(r, gtref, &lists, &nlists);
    if (rc == 0)
        rc = cut_routes(r->rt, lists, nlists, &gtref, r->err);
    split_lists_free(lists, nlists);
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
    int rc = group_posset(r, g, &set);

    if (rc == 0 && (set.all || set.n > 1))
        rc = dal_err_set(r->err, DAL_EUNSUPPORTED,
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
            rc = dal_err_set(r->err, DAL_EUNSUPPORTED,
                             "%s%s and %s are not on the same datasource for these values "
                             "(%s, %s); a statement must stay on one node",
                             r->sql->trefs[g].name, scope_words(r->sql, (size_t)g),
                             rt->primary->cfg->name, rt->routes[k].node->cfg->name,
                             pos < 0 ? "none" : t->nodes[pos / t->tables_per_db]->cfg->name);
        for (i = 0; rc == 0 && i < r->sql->ntrefs; i++)
            if (r->grp[i] == g)
                rt->routes[k].pos[i] = pos;
    }
    posset_free(&set);
    return rc;
}

/* Followers take, on each route, the table of the row they follow. */
static void place_followers(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    dal_routing_t *rt = r->rt;
    size_t sc, i, k;

    /* parents come before children in sql->scopes */
    for (sc = 0; sc < sql->nscopes; sc++)
        for (i = 0; i < sql->ntrefs; i++) {
            int32_t lead;
            if (sql->trefs[i].scope != (int)sc || r->grp[i] < 0 || (lead = r->lead[r->grp[i]]) < 0)
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
    int rc = single_posset((uint32_t)fixed, &set, r->err);

    for (k = 0; k < r->sql->ntrefs; k++)
        r->in_group[k] = k == into;
    if (rc == 0)
        rc = routes_from_positions(r, &set);
    posset_free(&set);
    return rc;
}

static int route_sharded(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t k, into = sql->insert_select ? into_tref(r) : sql->ntrefs;
    int32_t driver = -1;
    int64_t fixed = -1;
    long src = -1;
    int rc = make_groups(r);

    if (rc == 0 && into < sql->ntrefs && is_sharded(r, into))
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
        rc = check_others(r);
    return rc;
}

/* Hint raw: one route on the datasource named, no table renamed (only the
 * hints come out), for administration on physical tables. */
static int route_raw(router_t *r)
{
    int rc;

    if (r->req.shard_value != NULL)
        return dal_err_set(r->err, DAL_EROUTE, "dal hint raw takes no shard value: it runs the "
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

DAL_HOT
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
        if (!cond_on_tref(r, &sql->conds[c], 0))
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
DAL_HOT
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
    if (locate_opnd(r, t, &sql->conds[m & 0xffff].vals[0], &pos) != 0 || pos < 0)
        return 0;
    rt->tables = rt->tables_inl;
    rt->tables[0] = rt->primary = t;
    if (alloc_routes(rt, 1, 1, r->err) != 0)
        return 0;
    rt->routes[0].node = t->nodes[pos / t->tables_per_db];
    rt->routes[0].pos[0] = (int32_t)pos;
    return 1;
}

/* Empty rt, but for its inline arrays: dal_small_alloc sets what it hands
 * out, so they need no clearing. */
DAL_HOT
static void routing_reset(dal_routing_t *rt)
{
    memset(rt, 0, offsetof(dal_routing_t, tables_inl));
}

DAL_HOT
int dal_route(const dal_snapshot_t *snap, const dal_sql_t *sql, const dal_query_opts_t *opts,
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
        return dal_err_set(err, DAL_EINVAL,
                           "the statement has %zu ? placeholders but %zu parameters were given",
                           sql->nparams, nparams);
    if (memo_route(&r, opts))
        return 0;
    rc = read_request(snap, sql, opts, &r.req, err);
    if (rc != 0)
        return rc;
    rt->tables = dal_small_alloc(rt->tables_inl, DAL_ROUTING_INLINE, sql->ntrefs,
                                 sizeof *rt->tables, 1);
    if (rt->tables == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < sql->ntrefs; i++) {
        const struct dal_sql_tref *tr = &sql->trefs[i];
        rt->tables[i] = dal_snapshot_table(snap, tr->name, strlen(tr->name));
        if (rt->primary == NULL && rt->tables[i] && rt->tables[i]->sharded)
            rt->primary = rt->tables[i];
    }
    rc = check_update_key(&r);
    if (rc == 0 && r.req.raw)
        rc = route_raw(&r);
    else if (rc == 0)
        rc = rt->primary ? route_sharded(&r) : route_unsharded(&r);
    if (rc == 0)
        memo_save(&r, opts);
    dal_small_free(r.in_group, r.in_group_inl);
    dal_small_free(r.grp, r.grp_inl);
    dal_small_free(r.lead, r.lead_inl);
    if (rc != 0)
        dal_routing_clear(rt);
    return rc;
}

DAL_HOT
void dal_routing_clear(dal_routing_t *rt)
{
    dal_small_free(rt->tables, rt->tables_inl);
    dal_small_free(rt->routes, &rt->route_inl);
    dal_small_free(rt->pos, rt->pos_inl);
    free(rt->cuts);
    routing_reset(rt);
}

void dal_routing_label_table(const dal_routing_t *rt, dal_event_t *ev)
{
    if (rt->primary != NULL) {
        ev->table = rt->primary->cfg->name;
        return;
    }
    ev->table = rt->sql->ntrefs ? rt->sql->trefs[0].name : NULL;
    if (ev->table != NULL)
        ev->labels_gen = 0;
}
