/*
 * rewrite.c -- the physical SQL of one route.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "merge.h"
#include "rewrite.h"
#include "value.h"

enum edit_type { EDIT_TABLE, EDIT_QUALIFIER, EDIT_DROP, EDIT_PARAM, EDIT_CUT, EDIT_TEXT };

typedef struct edit {
    uint32_t off, len;
    enum edit_type type;
    uint32_t idx;     /* table ref index (TABLE, QUALIFIER) or parameter index */
} edit_t;

/* Statements have a handful of edits; above this we fall back to the heap. */
#define EDITS_INLINE 32

typedef struct edits {
    edit_t *items;
    size_t n, cap;
    edit_t inline_items[EDITS_INLINE];
} edits_t;

static int edits_add(edits_t *e, uint32_t off, uint32_t len, enum edit_type type, uint32_t idx)
{
    if (e->n == e->cap) {
        size_t cap = e->cap * 2;
        edit_t *p = e->items == e->inline_items ? malloc(cap * sizeof *p)
                                                : realloc(e->items, cap * sizeof *p);
        if (p == NULL)
            return -1;
        if (e->items == e->inline_items)
            memcpy(p, e->inline_items, sizeof e->inline_items);
        e->items = p;
        e->cap = cap;
    }
    e->items[e->n].off = off;
    e->items[e->n].len = len;
    e->items[e->n].type = type;
    e->items[e->n].idx = idx;
    e->n++;
    return 0;
}

/* By offset; at one offset an insertion first (so the edit starting there
 * still applies), then a merge edit (so the edits inside its span are
 * skipped: it replaces them). */
static int edit_after(const edit_t *a, const edit_t *b)
{
    if (a->off != b->off)
        return a->off > b->off;
    if ((a->len == 0) != (b->len == 0))
        return b->len == 0;
    return b->type == EDIT_TEXT && a->type != EDIT_TEXT;
}

/* Edits arrive almost sorted (one list after another); insertion sort is
 * the cheapest for a few dozen items. */
static void edits_sort(edits_t *e)
{
    size_t i, j;

    for (i = 1; i < e->n; i++) {
        edit_t x = e->items[i];
        for (j = i; j > 0 && edit_after(&e->items[j - 1], &x); j--)
            e->items[j] = e->items[j - 1];
        e->items[j] = x;
    }
}

static int collect(const dal_routing_t *rt, const dal_route_t *route, edits_t *e)
{
    const int32_t *pos = route->pos;
    const dal_sql_t *sql = rt->sql;
    size_t i;
    int rc = 0;

    /* pos == NULL: a direct statement, no table is rewritten */
    for (i = 0; pos != NULL && i < sql->ntrefs && rc == 0; i++) {
        const struct dal_sql_tref *r = &sql->trefs[i];
        if (pos[i] < 0)
            continue;
        if (r->qual_len > 0)
            rc |= edits_add(e, r->qual_off, r->qual_len, EDIT_DROP, 0);
        rc |= edits_add(e, r->off, r->len, EDIT_TABLE, (uint32_t)i);
    }
    for (i = 0; pos != NULL && i < sql->ncolrefs && rc == 0; i++) {
        size_t t = sql->colrefs[i].tref;
        if (pos[t] >= 0)
            rc |= edits_add(e, sql->colrefs[i].off, sql->colrefs[i].len, EDIT_QUALIFIER,
                            (uint32_t)t);
    }
    for (i = 0; i < sql->nhints && rc == 0; i++)
        rc |= edits_add(e, sql->hints[i].off, sql->hints[i].len, EDIT_DROP, 0);
    for (i = 0; i < sql->nparams && rc == 0; i++)
        rc |= edits_add(e, sql->param_offs[i], 1, EDIT_PARAM, (uint32_t)i);
    for (i = 0; i < route->ncuts && rc == 0; i++) {
        const dal_cut_t *c = &rt->cuts[route->cut_first + i];
        rc |= edits_add(e, c->off, c->len, EDIT_CUT, 0);
    }
    /* last, so that at an equal offset a merge insertion follows the ?
     * value or table name already there */
    for (i = 0; rt->merge_edits != NULL && i < rt->merge_edits->n && rc == 0; i++)
        rc |= edits_add(e, rt->merge_edits->items[i].off, rt->merge_edits->items[i].len,
                        EDIT_TEXT, (uint32_t)i);
    return rc;
}

/* "<logical>_<pos>", in the quoting the statement used. */
static void put_table(const dal_routing_t *rt, const int32_t *pos, uint32_t idx,
                      const char *orig, dal_buf_t *out)
{
    int quoted = orig[0] == '`';

    if (quoted)
        dal_buf_putc(out, '`');
    dal_buf_puts(out, rt->tables[idx]->cfg->name);
    dal_buf_putc(out, '_');
    dal_buf_put_u64(out, (uint64_t)pos[idx]);
    if (quoted)
        dal_buf_putc(out, '`');
}

int dal_rewrite(const dal_routing_t *rt, size_t r, const dal_value_t *params, size_t nparams,
                int no_backslash_escapes, dal_buf_t *out, dal_error_t *err)
{
    const dal_sql_t *sql = rt->sql;
    const int32_t *pos = rt->routes[r].pos;
    edits_t e;
    size_t i, at = 0;
    int rc = 0;

    if (nparams != sql->nparams)
        return dal_err_set(err, DAL_EINVAL, "the statement has %zu ? placeholders but %zu "
                           "parameters were given", sql->nparams, nparams);
    e.items = e.inline_items;
    e.n = 0;
    e.cap = EDITS_INLINE;
    if (collect(rt, &rt->routes[r], &e) != 0) {
        rc = dal_err_set(err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    edits_sort(&e);
    dal_buf_reserve(out, sql->len + 32);
    if (rt->trace_id != NULL) {
        /* checked by the caller to hold no comment terminator */
        dal_buf_puts(out, "/* trace_id=");
        dal_buf_puts(out, rt->trace_id);
        dal_buf_puts(out, " */ ");
    }
    for (i = 0; i < e.n; i++) {
        const edit_t *x = &e.items[i];
        /* an edit inside a span already cut (a ? in a row of another
         * route, a table name in a cut subquery) has nothing left to edit */
        if (x->off < at)
            continue;
        dal_buf_append(out, sql->text + at, x->off - at);
        at = x->off + x->len;
        if (x->type == EDIT_TABLE || x->type == EDIT_QUALIFIER)
            put_table(rt, pos, x->idx, sql->text + x->off, out);
        else if (x->type == EDIT_PARAM)
            rc = dal_value_append_sql(out, &params[x->idx], no_backslash_escapes, err);
        else if (x->type == EDIT_TEXT)
            dal_buf_puts(out, rt->merge_edits->items[x->idx].text);
        if (rc != 0)
            goto done;
    }
    dal_buf_append(out, sql->text + at, sql->len - at);
    if (out->oom)
        rc = dal_err_set(err, DAL_ENOMEM, "out of memory");
done:
    if (e.items != e.inline_items)
        free(e.items);
    return rc;
}
