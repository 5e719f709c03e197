/*
 * route_cond.c -- table positions from a statement's conditions: values of
 * operands, the strategy's answer for one value or a range, the
 * intersection over a group's conditions.  See route_int.h.
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

/* Integer bounds of the range conditions on one shard key, folded into
 * one interval so `k >= 10 AND k < 12` asks the strategy for [10, 12). */
typedef struct range_acc {
    int has_lo, has_hi, lo_inc, hi_inc;
    int64_t lo, hi;
    size_t tref;
    int used;
} range_acc_t;

void posset_free(posset_t *s)
{
    small_free(s->v, s->inl);
    s->v = NULL;
    s->n = 0;
}

/* Empty s (freed first) with room for n positions. */
int posset_alloc(posset_t *s, size_t n)
{
    posset_free(s);
    s->all = 0;
    s->v = small_alloc(s->inl, POSSET_INLINE, n, sizeof *s->v, 0);
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

int posset_has(const posset_t *s, uint32_t p)
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
void posset_normalize(posset_t *s)
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

int route_literal_value(const char *sql, const dal_sql_opnd_t *o, dal_value_t *v, char *buf,
                        size_t cap, char **heap, dal_error_t *err)
{
    const char *t = sql + o->off;
    size_t len = 0, k;
    char *text = buf;
    int64_t i = 0;

    *heap = NULL;
    /* plain digits (the usual key), fewer than 19 so the int64 cannot
     * overflow: what the copy and parse_int64 below give, without them */
    if (o->kind == DAL_OPND_LITERAL && o->lit_type == DAL_TOK_NUMBER && o->len > 0 &&
        o->len <= 18 && o->len < cap) {
        for (k = 0; k < o->len && t[k] >= '0' && t[k] <= '9'; k++)
            i = i * 10 + (t[k] - '0');
        if (k == o->len) {
            memcpy(buf, t, k);
            buf[k] = '\0';
            *v = dal_int(i);
            return 0;
        }
    }
    if (sql_literal_text(sql, o, buf, cap, &len) != 0)
        return err_set(err, DAL_ESQL, "malformed literal at offset %u", o->off);
    if (len >= cap) {
        *heap = malloc(len + 1);
        if (*heap == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
        sql_literal_text(sql, o, *heap, len + 1, &len);
        text = *heap;
    }
    if (o->lit_type == DAL_TOK_IDENT) {
        /* NULL, TRUE or FALSE */
        *v = strcasecmp(text, "NULL") == 0 ? dal_null() : dal_int(strcasecmp(text, "TRUE") == 0);
        return 0;
    }
    /* numbers that fit an int64 travel as ints; others (1.5, huge ones)
     * as their text, for the strategy to accept or reject */
    if (o->lit_type == DAL_TOK_NUMBER && parse_int64(text, &i) == 0)
        *v = dal_int(i);
    else
        *v = dal_strn(text, len);
    return 0;
}

static int literal_value(const dal_sql_t *sql, const dal_sql_opnd_t *o, opval_t *out,
                         dal_error_t *err)
{
    return route_literal_value(sql->text, o, &out->v, out->buf, sizeof out->buf, &out->heap,
                               err);
}

static int opnd_value(const dal_sql_t *sql, const dal_sql_opnd_t *o, const dal_value_t *params,
                      size_t nparams, opval_t *out, dal_error_t *err)
{
    out->heap = NULL;
    switch (o->kind) {
    case DAL_OPND_PARAM:
        if (o->param_index < 0 || (size_t)o->param_index >= nparams)
            return err_set(err, DAL_EINVAL, "the statement has %zu ? placeholders but %zu "
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

/* One strategy call, with the result checked: a plugin bug must not
 * become a silently wrong shard. */
int route_locate(const dal_table_t *t, const dal_value_t *v, uint32_t *table, dal_error_t *err)
{
    dal_shard_pos_t pos;
    int rc = t->ops->locate(t->strategy, v, &pos, err);

    if (rc != 0) {
        /* the strategy's message quotes the value */
        err_prefix(err, "table %s (strategy %s)", t->cfg->name, t->cfg->strategy);
        return rc < 0 ? rc : DAL_ESHARD;
    }
    if (pos.table >= t->cfg->table_shard_num || pos.db != pos.table / t->tables_per_db)
        return err_set(err, DAL_EPLUGIN,
                       "table %s: shard plugin '%s' returned db %u table %u, which is not a "
                       "valid position (%u dbs, %u tables)",
                       t->cfg->name, t->cfg->strategy, pos.db, pos.table,
                       t->cfg->db_shard_num, t->cfg->table_shard_num);
    *table = pos.table;
    return 0;
}

/* Locate an operand's value; *pos = -1 for NULL (matches nothing) and
 * returns OPND_UNUSABLE for an expression. */
int route_locate_opnd(router_t *r, const dal_table_t *t, const dal_sql_opnd_t *o, int64_t *pos)
{
    opval_t ov;
    uint32_t p;
    int rc = opnd_value(r->sql, o, r->params, r->nparams, &ov, r->err);

    if (rc != 0)
        return rc;
    if (ov.v.type == DAL_TYPE_NULL) {
        *pos = -1;
    } else {
        rc = route_locate(t, &ov.v, &p, r->err);
        *pos = p;
    }
    free(ov.heap);
    return rc;
}

int route_cond_on_tref(const router_t *r, size_t c, size_t i)
{
    return r->cond_tref[c] == (int32_t)i;
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
        return err_set(r->err, DAL_ENOMEM, "out of memory");
    }
    rc = t->ops->locate_range(t->strategy, lo, lo_inc, hi, hi_inc, tmp, &n, r->err);
    for (i = 0; rc == 0 && i < n && i < t->cfg->table_shard_num; i++)
        out->v[out->n++] = tmp[i].table;
    free(tmp);
    if (rc != 0)
        err_prefix(r->err, "table %s (strategy %s)", t->cfg->name, t->cfg->strategy);
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
            return err_set(r->err, DAL_ENOMEM, "out of memory");
        for (i = 0; i < c->nvals; i++) {
            int64_t p;
            rc = route_locate_opnd(r, t, &c->vals[i], &p);
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

/* The positions of a lookup's shard-key values (r->keys), when its table
 * is a table of group g in the lookup's scope; else every position. */
static int keys_posset(router_t *r, int32_t g, posset_t *out)
{
    const dal_route_keys_t *k = r->keys;
    int32_t m;
    size_t i;
    uint32_t p;
    int rc;

    memset(out, 0, sizeof *out);
    out->all = 1;
    if (k == NULL)
        return 0;
    for (m = r->member_head[g]; m >= 0; m = r->member_next[m])
        if (r->rt->tables[m] == k->table && r->sql->trefs[m].scope == k->scope)
            break;
    if (m < 0)
        return 0;
    if (posset_alloc(out, k->nkeys ? k->nkeys : 1) != 0)
        return err_set(r->err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < k->nkeys; i++) {
        if (k->keys[i].type == DAL_TYPE_NULL)
            continue;
        if ((rc = route_locate(k->table, &k->keys[i], &p, r->err)) != 0)
            return rc;
        out->v[out->n++] = p;
    }
    posset_normalize(out);
    return 0;
}

/* The positions the WHERE clause allows for group g: its conditions, in
 * the statement's order (the first failing one reports). */
int route_where_posset(router_t *r, int32_t g, posset_t *set)
{
    const dal_sql_t *sql = r->sql;
    range_acc_t acc;
    posset_t one;
    int32_t c;
    size_t i;
    int rc;

    memset(set, 0, sizeof *set);
    memset(&acc, 0, sizeof acc);
    set->all = 1;
    for (c = r->cond_head[g]; c >= 0; c = r->cond_next[c]) {
        const struct dal_sql_cond *cd = &sql->conds[c];
        i = (size_t)r->cond_tref[c];
        if (is_range(cd->op) && fold_range(r, cd, i, &acc))
            continue;
        rc = cond_posset(r, r->rt->tables[i], cd, &one);
        if (rc != 0) {
            posset_free(&one);
            return rc;
        }
        posset_intersect(set, &one);
    }
    if ((rc = keys_posset(r, g, &one)) != 0) {
        posset_free(&one);
        return rc;
    }
    posset_intersect(set, &one);
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

/* Make set (initialised, maybe holding positions) the single position p. */
int route_single_posset(uint32_t p, posset_t *set, dal_error_t *err)
{
    if (posset_alloc(set, 1) != 0)
        return err_set(err, DAL_ENOMEM, "out of memory");
    set->v[0] = p;
    set->n = 1;
    return 0;
}
