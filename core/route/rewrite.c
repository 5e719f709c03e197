/*
 * rewrite.c -- every edit of SQL text: the physical SQL of a route (names,
 * hints, parameters, the routes' cuts, the merge's edits), and the edit
 * lists other steps make (merge columns and LIMIT, generated IDs, a column
 * list) applied to a text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "rewrite.h"
#include "small.h"
#include "value.h"

/* TABLE, QUALIFIER and QUAL_DROP apply only where the route gives their
 * table reference a physical position; the others always. */
enum edit_type {
    EDIT_TABLE, EDIT_QUALIFIER, EDIT_QUAL_DROP, EDIT_DROP, EDIT_PARAM, EDIT_CUT, EDIT_TEXT
};

typedef struct edit {
    uint32_t off, len;
    enum edit_type type;
    uint32_t idx;     /* table ref index (TABLE, QUALIFIER, QUAL_DROP), parameter index
                         (PARAM) or merge edit index (TEXT) */
} edit_t;

/* The edits that come from the statement alone -- every table name and
 * qualifier, hint and ?, whatever the route -- in the order they apply:
 * made on the statement's first rewrite and kept with it (dal_sql_t's
 * `edits`), so a statement run again only walks them. */
typedef struct own_edits {
    dal_sql_ext_t ext;   /* first: destroyed with the statement */
    size_t n;
    edit_t items[];
} own_edits_t;

/* A route's edits when it has its own too (cuts, merge edits): in the
 * caller's room when they fit. */
#define EDITS_INLINE 32

static void put_edit(edit_t *v, size_t *n, uint32_t off, uint32_t len, enum edit_type type,
                     uint32_t idx)
{
    v[*n].off = off;
    v[*n].len = len;
    v[*n].type = type;
    v[*n].idx = idx;
    (*n)++;
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

/* Stable, and the cheapest for a few dozen items arriving almost sorted
 * (one list after another). */
static void edit_insertion_sort(edit_t *v, size_t n)
{
    size_t i, j;

    for (i = 1; i < n; i++) {
        edit_t x = v[i];
        for (j = i; j > 0 && edit_after(&v[j - 1], &x); j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Stable: halves sorted, then merged through tmp (n items). */
static void edit_merge_sort(edit_t *v, edit_t *tmp, size_t n)
{
    size_t h = n / 2, i = 0, j = h, k = 0;

    if (n <= EDITS_INLINE) {
        edit_insertion_sort(v, n);
        return;
    }
    edit_merge_sort(v, tmp, h);
    edit_merge_sort(v + h, tmp, n - h);
    while (i < h && j < n)
        tmp[k++] = edit_after(&v[i], &v[j]) ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    memcpy(v, tmp, k * sizeof *v); /* the right half's rest is in place */
}

/* Stable.  A statement of many table and column references interleaves
 * its lists: insertion would cost n^2 there. */
static void edit_items_sort(edit_t *v, size_t n)
{
    edit_t *tmp;

    if (n <= EDITS_INLINE || (tmp = malloc(n * sizeof *tmp)) == NULL) {
        edit_insertion_sort(v, n); /* without memory: slower, as right */
        return;
    }
    edit_merge_sort(v, tmp, n);
    free(tmp);
}

static void own_edits_destroy(dal_sql_ext_t *e)
{
    free(e);
}

static const own_edits_t *own_edits(const dal_sql_t *sql)
{
    dal_sql_t *m = (dal_sql_t *)sql; /* only the lazily made field changes, atomically */
    dal_sql_ext_t *expected = NULL, *x = atomic_load(&m->edits);
    own_edits_t *o;
    size_t i;

    if (x != NULL)
        return (const own_edits_t *)x;
    o = malloc(sizeof *o + (2 * sql->ntrefs + 2 * sql->ncolrefs + sql->nhints + sql->nparams) *
                               sizeof *o->items);
    if (o == NULL)
        return NULL;
    o->ext.destroy = own_edits_destroy;
    o->n = 0;
    /* this order settles ties at one offset, as the sort is stable */
    for (i = 0; i < sql->ntrefs; i++) {
        const struct dal_sql_tref *r = &sql->trefs[i];
        if (r->qual_len > 0)
            put_edit(o->items, &o->n, r->qual_off, r->qual_len, EDIT_QUAL_DROP, (uint32_t)i);
        put_edit(o->items, &o->n, r->off, r->len, EDIT_TABLE, (uint32_t)i);
    }
    for (i = 0; i < sql->ncolrefs; i++) {
        const struct dal_sql_colref *c = &sql->colrefs[i];
        if (c->qual_len > 0)
            put_edit(o->items, &o->n, c->qual_off, c->qual_len, EDIT_QUAL_DROP, (uint32_t)c->tref);
        put_edit(o->items, &o->n, c->off, c->len, EDIT_QUALIFIER, (uint32_t)c->tref);
    }
    for (i = 0; i < sql->nhints; i++)
        put_edit(o->items, &o->n, sql->hints[i].off, sql->hints[i].len, EDIT_DROP, 0);
    for (i = 0; i < sql->nparams; i++)
        put_edit(o->items, &o->n, sql->param_offs[i], 1, EDIT_PARAM, (uint32_t)i);
    edit_items_sort(o->items, o->n);
    /* two threads may race here: the first one's list stays */
    if (!atomic_compare_exchange_strong(&m->edits, &expected, &o->ext)) {
        free(o);
        return (const own_edits_t *)expected;
    }
    return o;
}

/* The statement's edits with route r's cuts and the merge's edits added:
 * into room (EDITS_INLINE items) or the heap.  NULL without memory. */
static edit_t *route_edits(const dal_routing_t *rt, const dal_route_t *route,
                           const own_edits_t *own, edit_t *room, size_t *n)
{
    size_t nmerge = rt->merge_edits != NULL ? rt->merge_edits->n : 0, i;
    edit_t *v = small_alloc(room, EDITS_INLINE, own->n + route->ncuts + nmerge, sizeof *v, 0);

    if (v == NULL)
        return NULL;
    /* first, so that a cut starting at a ? (an IN list's first value)
     * takes the ? with it rather than follow its value */
    *n = 0;
    for (i = 0; i < route->ncuts; i++) {
        const dal_cut_t *c = &rt->cuts[route->cut_first + i];
        put_edit(v, n, c->off, c->len, EDIT_CUT, 0);
    }
    memcpy(v + *n, own->items, own->n * sizeof *v);
    *n += own->n;
    /* last, so that at an equal offset a merge insertion follows the ?
     * value or table name already there */
    for (i = 0; i < nmerge; i++)
        put_edit(v, n, rt->merge_edits->items[i].off, rt->merge_edits->items[i].len, EDIT_TEXT,
                 (uint32_t)i);
    edit_items_sort(v, *n);
    return v;
}

/* "<logical>_<pos>", in the quoting the statement used. */
static void put_table(const dal_routing_t *rt, const int32_t *pos, uint32_t idx,
                      const char *orig, dal_buf_t *out)
{
    int quoted = orig[0] == '`';

    if (quoted)
        buf_putc(out, '`');
    buf_puts(out, rt->tables[idx]->cfg->name);
    buf_putc(out, '_');
    buf_put_u64(out, (uint64_t)pos[idx]);
    if (quoted)
        buf_putc(out, '`');
}

/* "`db`." for node's URL database db (nothing without one): what a
 * connection in another database names the node's tables with. */
static void put_url_db(const dal_node_t *node, dal_buf_t *out)
{
    const char *db = node->cfg->master.database, *p;

    if (db == NULL)
        return;
    buf_putc(out, '`');
    for (p = db; *p; p++) {
        if (*p == '`')
            buf_putc(out, '`');
        buf_putc(out, *p);
    }
    buf_puts(out, "`.");
}

/* Does edit x change the text on this route?  A table the route leaves
 * alone (pos < 0, or no positions at all) keeps its name and qualifiers. */
static int applies(const edit_t *x, const int32_t *pos)
{
    if (x->type == EDIT_TABLE || x->type == EDIT_QUALIFIER || x->type == EDIT_QUAL_DROP)
        return pos != NULL && pos[x->idx] >= 0;
    return 1;
}

/* Parameter i's value as SQL.  Where SQL takes only an integer (LIMIT,
 * OFFSET), a text that is one is written as the integer. */
static int put_param(const dal_sql_t *sql, const dal_value_t *params, uint32_t i,
                     int no_backslash_escapes, dal_buf_t *out, dal_error_t *err)
{
    uint64_t n;

    if (sql->param_int == NULL || !sql->param_int[i] || params[i].type == DAL_TYPE_INT ||
        params[i].type == DAL_TYPE_UINT)
        return value_append_sql(out, &params[i], no_backslash_escapes, err);
    if (value_as_count(&params[i], &n) != 0)
        return err_set(err, DAL_EINVAL, "parameter %u is in LIMIT or OFFSET, so it must be a "
                       "non-negative integer (or text holding one)", i + 1);
    buf_put_u64(out, n);
    return 0;
}

/* A ? kept for the server: which parameter it is goes to tpl. */
static int put_placeholder(dal_template_t *tpl, uint32_t i, dal_buf_t *out, dal_error_t *err)
{
    if (tpl->n == tpl->cap)
        return err_set(err, DAL_EUNSUPPORTED, "more than %zu placeholders in a template",
                       tpl->cap);
    tpl->order[tpl->n++] = i;
    buf_putc(out, '?');
    return 0;
}

/* Route r's SQL into out: each ? as its value (tpl NULL), or kept as ?
 * with its parameter index appended to tpl (a server-side template, which
 * carries no trace comment: it is the same from run to run). */
static int route_sql(const dal_routing_t *rt, size_t r, const dal_value_t *params,
                     size_t nparams, int no_backslash_escapes, dal_buf_t *out,
                     dal_template_t *tpl, dal_error_t *err)
{
    const dal_sql_t *sql = rt->sql;
    const dal_route_t *route = &rt->routes[r];
    const int32_t *pos = route->pos;
    const own_edits_t *own;
    const edit_t *v;
    edit_t room[EDITS_INLINE], *mine = NULL;
    size_t i, n, at = 0;
    int rc = 0;

    if (nparams != sql->nparams)
        return err_set(err, DAL_EINVAL, "the statement has %zu ? placeholders but %zu "
                       "parameters were given", sql->nparams, nparams);
    if ((own = own_edits(sql)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    v = own->items;
    n = own->n;
    if (route->ncuts > 0 || rt->merge_edits != NULL) {
        if ((v = mine = route_edits(rt, route, own, room, &n)) == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
    }
    buf_reserve(out, sql->len + 32);
    if (rt->trace_id != NULL && tpl == NULL) {
        /* checked by the caller to hold no comment terminator */
        buf_puts(out, "/* trace_id=");
        buf_puts(out, rt->trace_id);
        buf_puts(out, " */ ");
    }
    for (i = 0; i < n; i++) {
        const edit_t *x = &v[i];
        /* an edit inside a span already cut (a ? in a row of another
         * route, a table name in a cut subquery) has nothing left to edit */
        if (x->off < at || !applies(x, pos))
            continue;
        buf_append(out, sql->text + at, x->off - at);
        at = x->off + x->len;
        if (x->type == EDIT_TABLE || x->type == EDIT_QUALIFIER)
            put_table(rt, pos, x->idx, sql->text + x->off, out);
        else if (x->type == EDIT_QUAL_DROP && rt->qualify)
            put_url_db(route->node, out);
        else if (x->type == EDIT_PARAM && tpl != NULL)
            rc = put_placeholder(tpl, x->idx, out, err);
        else if (x->type == EDIT_PARAM && rt->lit_text != NULL)
            buf_append(out, rt->lit_text + rt->lit_spans[x->idx].off,
                       rt->lit_spans[x->idx].len);
        else if (x->type == EDIT_PARAM)
            rc = put_param(sql, params, x->idx, no_backslash_escapes, out, err);
        else if (x->type == EDIT_TEXT)
            buf_puts(out, rt->merge_edits->items[x->idx].text);
        if (rc != 0)
            goto done;
    }
    buf_append(out, sql->text + at, sql->len - at);
    if (out->oom)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
done:
    if (mine != NULL)
        small_free(mine, room);
    return rc;
}

int rewrite_route(const dal_routing_t *rt, size_t r, const dal_value_t *params, size_t nparams,
                  int no_backslash_escapes, dal_buf_t *out, dal_error_t *err)
{
    return route_sql(rt, r, params, nparams, no_backslash_escapes, out, NULL, err);
}

int rewrite_route_template(const dal_routing_t *rt, size_t r, size_t nparams, dal_buf_t *out,
                           dal_template_t *tpl, dal_error_t *err)
{
    tpl->n = 0;
    return route_sql(rt, r, NULL, nparams, 0, out, tpl, err);
}

/* ------------------------------------------------------- edits of text */

/* Append an edit; text is transferred (freed on failure).  -1: no memory. */
int edits_add(dal_edits_t *e, uint32_t off, uint32_t len, char *text)
{
    dal_edit_t *p;

    if (text == NULL)
        return -1;
    p = realloc(e->items, (e->n + 1) * sizeof *p);
    if (p == NULL) {
        free(text);
        return -1;
    }
    e->items = p;
    p[e->n].off = off;
    p[e->n].len = len;
    p[e->n].text = text;
    e->n++;
    return 0;
}

void edits_clear(dal_edits_t *e)
{
    size_t i;

    if (e == NULL)
        return;
    for (i = 0; i < e->n; i++)
        free(e->items[i].text);
    free(e->items);
    e->items = NULL;
    e->n = 0;
}

/* By offset; at one offset an insertion goes before a replacement. */
static int dal_edit_after(const dal_edit_t *a, const dal_edit_t *b)
{
    return a->off > b->off || (a->off == b->off && a->len > 0 && b->len == 0);
}

/* A statement has a handful of edits: insertion sort. */
void edits_sort(dal_edits_t *e)
{
    size_t i, j;

    for (i = 1; i < e->n; i++) {
        dal_edit_t x = e->items[i];
        for (j = i; j > 0 && dal_edit_after(&e->items[j - 1], &x); j--)
            e->items[j] = e->items[j - 1];
        e->items[j] = x;
    }
}

/* An insertion where another edit starts is folded into that edit, so no
 * two edits share an offset and rewrite.c need not care about their order. */
int edits_coalesce(dal_edits_t *e)
{
    size_t i = e->n;
    char *t;

    while (i-- > 1) {
        dal_edit_t *a = &e->items[i - 1], *b = &e->items[i];
        if (a->off != b->off || a->len != 0)
            continue;
        if (asprintf(&t, "%s%s", a->text, b->text) < 0)
            return -1;
        free(a->text);
        free(b->text);
        a->text = t;
        a->len = b->len;
        memmove(b, b + 1, (e->n - i - 1) * sizeof *b);
        e->n--;
    }
    return 0;
}

void rewrite_text(const char *text, size_t len, const dal_edit_t *e, size_t n,
                  dal_buf_t *out)
{
    size_t at = 0, i;

    for (i = 0; i < n; i++) {
        buf_append(out, text + at, e[i].off - at);
        buf_puts(out, e[i].text);
        at = e[i].off + e[i].len;
    }
    buf_append(out, text + at, len - at);
}
