/*
 * idfill.c -- generated IDs on INSERT.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "error.h"
#include "idfill.h"
#include "idgen.h"
#include "rewrite.h"
#include "small.h"
#include "sql_lex.h"

/* One change to the text: insert `text` at off (replacing len bytes); a
 * non-negative row says a new ? there takes that row's ID. */
typedef struct fill_edit {
    uint32_t off, len;
    const char *text;
    long row;
} fill_edit_t;

typedef struct filler {
    const dal_sql_t *s;
    const dal_table_t *t;
    const dal_value_t *params;
    size_t nparams;
    fill_edit_t *edits;       /* owned */
    size_t nedits;
    long *param_row;          /* owned: per original ?, the row whose ID replaces its NULL, or -1 */
    size_t nids;
    char colbuf[160];         /* "`id`, " */
    char setbuf[160];         /* ", `id` = ?" */
} filler_t;

static const dal_table_t *target(const dal_snapshot_t *snap, const dal_sql_t *s)
{
    size_t i;

    for (i = 0; i < s->ntrefs; i++)
        if (s->trefs[i].role == DAL_TREF_INTO)
            return snapshot_table(snap, s->trefs[i].name, strlen(s->trefs[i].name));
    return NULL;
}

static void add_edit(filler_t *f, uint32_t off, uint32_t len, const char *text, long row)
{
    fill_edit_t *e = &f->edits[f->nedits++];

    e->off = off;
    e->len = len;
    e->text = text;
    e->row = row;
}

/* The "(" opening the column list: the first "(" after the target name. */
static int column_list_open(const dal_sql_t *s, uint32_t *off)
{
    dal_lexer_t lx;
    dal_token_t t;
    size_t i;

    for (i = 0; i < s->ntrefs && s->trefs[i].role != DAL_TREF_INTO; i++)
        ;
    lex_init(&lx, s->text, s->len, s->no_backslash);
    lx.pos = s->trefs[i].off + s->trefs[i].len;
    do
        t = lex_next(&lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    if (t.type != DAL_TOK_PUNCT || s->text[t.off] != '(')
        return -1;
    *off = t.off + 1;
    return 0;
}

static int is_null_literal(const dal_sql_t *s, const dal_sql_opnd_t *o)
{
    return o->kind == DAL_OPND_LITERAL && o->lit_type == DAL_TOK_IDENT && o->len == 4 &&
           strncasecmp(s->text + o->off, "NULL", 4) == 0;
}

/* The id column is listed: rows giving NULL (literally or as a NULL ?) get IDs. */
static void plan_listed(filler_t *f, int kc)
{
    const dal_sql_t *s = f->s;
    size_t i;

    for (i = 0; i < s->nrows; i++) {
        const dal_sql_opnd_t *o = (size_t)kc < s->rows[i].nvals ? &s->rows[i].vals[kc] : NULL;
        if (o == NULL)
            continue;
        if (is_null_literal(s, o))
            add_edit(f, o->off, o->len, "?", (long)i);
        else if (o->kind == DAL_OPND_PARAM && (size_t)o->param_index < f->nparams &&
                 f->params[o->param_index].type == DAL_TYPE_NULL)
            f->param_row[o->param_index] = (long)i;
        else
            continue;
        f->nids++;
    }
}

/* The id column is missing: add it first in the column list and in every row. */
static int plan_missing(filler_t *f, dal_error_t *err)
{
    const dal_sql_t *s = f->s;
    uint32_t open;
    size_t i;

    if (s->insert_set) {
        snprintf(f->setbuf, sizeof f->setbuf, ", `%s` = ?", f->t->cfg->id_column);
        add_edit(f, s->rows[0].off + s->rows[0].len, 0, f->setbuf, 0);
        f->nids = 1;
        return 0;
    }
    if (s->ncolumns == 0 || column_list_open(s, &open) != 0)
        return err_set(err, DAL_EUNSUPPORTED,
                       "INSERT into %s has no column list, so dal cannot add its generated "
                       "%s column: list the columns", f->t->cfg->name, f->t->cfg->id_column);
    snprintf(f->colbuf, sizeof f->colbuf, "`%s`, ", f->t->cfg->id_column);
    add_edit(f, open, 0, f->colbuf, -1);
    for (i = 0; i < s->nrows; i++)
        add_edit(f, s->rows[i].off + 1, 0, "?, ", (long)i);
    f->nids = s->nrows;
    return 0;
}

/* Room for n parameters: inside f when they fit. */
static int params_alloc(dal_idfill_t *f, size_t n)
{
    f->params = small_alloc(f->params_inl, DAL_IDFILL_INLINE, n, sizeof *f->params, 1);
    return f->params != NULL ? 0 : -1;
}

/* The parameters of the rewritten statement: src[i] >= 0 is the caller's
 * parameter src[i], -(r + 1) the ID of row r. */
static void fill_params(dal_idfill_t *f, const long *src, size_t n, const dal_value_t *given)
{
    size_t i;

    for (i = 0; i < n; i++)
        f->params[i] = src[i] >= 0 ? given[src[i]] : dal_int(f->ids[-src[i] - 1]);
    f->nparams = n;
}

/* Where each parameter of the new text comes from, in text order: an
 * original ? (its index, or its row's ID when its value was NULL) or a ?
 * an edit inserted for a row's ID (-(row + 1)).  At one offset an edit's
 * insertion comes before the original ? there. */
static size_t param_sources(const filler_t *f, long *src)
{
    const dal_sql_t *s = f->s;
    size_t e = 0, p = 0, np = 0;

    while (e < f->nedits || p < s->nparams) {
        if (e < f->nedits && (p >= s->nparams || f->edits[e].off <= s->param_offs[p])) {
            if (f->edits[e].row >= 0)
                src[np++] = -(f->edits[e].row + 1);
            e++;
        } else {
            src[np++] = f->param_row[p] >= 0 ? -(f->param_row[p] + 1) : (long)p;
            p++;
        }
    }
    return np;
}

/* Rebuild the text (the edits applied by the rewriter) and the
 * parameters. */
static int build(filler_t *f, dal_idfill_t *out, dal_error_t *err)
{
    dal_buf_t b = DAL_BUF_INIT;
    dal_edit_t *edits = malloc((f->nedits + 1) * sizeof *edits);
    size_t i, np;

    out->src = calloc(f->nparams + f->nids + 1, sizeof *out->src);
    if (edits == NULL || out->src == NULL || params_alloc(out, f->nparams + f->nids) != 0)
        goto oom;
    for (i = 0; i < f->nedits; i++) {
        edits[i].off = f->edits[i].off;
        edits[i].len = f->edits[i].len;
        edits[i].text = (char *)f->edits[i].text; /* read only: not freed here */
    }
    rewrite_text(f->s->text, f->s->len, edits, f->nedits, &b);
    free(edits);
    edits = NULL;
    out->sql_len = b.len;
    if ((out->sql = buf_steal(&b)) == NULL)
        goto oom;
    np = param_sources(f, out->src);
    fill_params(out, out->src, np, f->params);
    return 0;
oom:
    free(edits);
    buf_free(&b);
    return err_set(err, DAL_ENOMEM, "out of memory");
}

static int cmp_edit(const void *a, const void *b)
{
    const fill_edit_t *x = a, *y = b;

    return x->off < y->off ? -1 : x->off > y->off;
}

/* Generate the IDs in row order: the rows are numbered by the edits and
 * NULL parameters that asked for them. */
static int draw_ids(const dal_snapshot_t *snap, const dal_table_t *t, size_t nids,
                    dal_idfill_t *out, dal_error_t *err)
{
    int rc;

    out->ids = malloc(nids * sizeof *out->ids);
    if (out->ids == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    out->nids = nids;
    rc = idgen_next(snap->idgens, t->cfg->idgen, out->ids, nids, err);
    if (rc != 0)
        err_prefix(err, "table %s: generating %s", t->cfg->name, t->cfg->id_column);
    return rc;
}

/* Row numbers of rows that get IDs, renumbered 0..nids-1 in row order. */
static void renumber_rows(filler_t *f)
{
    size_t i, k = 0, r;

    for (r = 0; r < f->s->nrows || (r == 0 && f->s->insert_set); r++) {
        int used = 0;
        for (i = 0; i < f->nedits; i++)
            if (f->edits[i].row == (long)r) {
                f->edits[i].row = (long)k;
                used = 1;
            }
        for (i = 0; i < f->nparams; i++)
            if (f->param_row[i] == (long)r) {
                f->param_row[i] = (long)k;
                used = 1;
            }
        k += (size_t)used;
        if (f->s->insert_set)
            break;
    }
}

/* ------------------------------------------------------------------ memo */

/* An INSERT that omits the id column is rewritten the same way every time
 * (for one column name): the statement keeps the result -- the rewritten
 * statement's analysis and where its parameters come from -- so later
 * executions only draw IDs. */
typedef struct fill_memo {
    dal_sql_ext_t ext;       /* first: destroyed with the statement */
    char *id_column;         /* in the block: the column it was made for */
    const dal_sql_t *filled; /* a reference */
    size_t nids;
    size_t nparams;
    long src[];              /* nparams: see fill_params */
} fill_memo_t;

static void memo_destroy(dal_sql_ext_t *e)
{
    fill_memo_t *m = (fill_memo_t *)e;

    sql_unref(m->filled);
    free(m);
}

void idfill_remember(const dal_sql_t *s, const dal_idfill_t *f, const dal_sql_t *filled)
{
    dal_sql_t *ms = (dal_sql_t *)s; /* only the lazily made field changes, atomically */
    dal_sql_ext_t *expected = NULL;
    size_t len = strlen(f->id_column);
    fill_memo_t *m;

    if (!f->memo_ok || f->sql == NULL || atomic_load(&ms->fill) != NULL)
        return;
    m = malloc(sizeof *m + f->nparams * sizeof *m->src + len + 1);
    if (m == NULL)
        return;
    m->ext.destroy = memo_destroy;
    m->id_column = memcpy((char *)&m->src[f->nparams], f->id_column, len + 1);
    m->filled = sql_ref(filled);
    m->nids = f->nids;
    m->nparams = f->nparams;
    memcpy(m->src, f->src, f->nparams * sizeof *m->src);
    /* two threads may race here: the first one's memo stays */
    if (!atomic_compare_exchange_strong(&ms->fill, &expected, &m->ext))
        memo_destroy(&m->ext);
}

/* Fill by s's memo: 1 if done, 0 if there is none for this column. */
static int by_memo(const dal_snapshot_t *snap, const dal_sql_t *s, const dal_table_t *t,
                   const dal_value_t *params, size_t nparams, dal_idfill_t *out,
                   dal_error_t *err)
{
    const fill_memo_t *m = (const fill_memo_t *)atomic_load(&((dal_sql_t *)s)->fill);
    int rc;

    if (m == NULL || nparams != s->nparams || strcmp(m->id_column, t->cfg->id_column) != 0)
        return 0;
    rc = draw_ids(snap, t, m->nids, out, err);
    if (rc == 0 && params_alloc(out, m->nparams) != 0)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    if (rc == 0) {
        fill_params(out, m->src, m->nparams, params);
        out->filled = m->filled;
    }
    return rc != 0 ? rc : 1;
}

int idfill_prepare(const dal_snapshot_t *snap, const dal_sql_t *s, const dal_value_t *params,
                   size_t nparams, dal_idfill_t *out, dal_error_t *err)
{
    filler_t f;
    size_t i;
    int rc = 0, kc = -1;

    memset(out, 0, sizeof *out);
    if (s->kind != DAL_SQL_INSERT && s->kind != DAL_SQL_REPLACE)
        return 0;
    memset(&f, 0, sizeof f);
    f.s = s;
    f.t = target(snap, s);
    if (f.t == NULL || f.t->cfg->id_column == NULL || s->insert_select)
        return 0;
    out->id_column = f.t->cfg->id_column;
    rc = by_memo(snap, s, f.t, params, nparams, out, err);
    if (rc != 0) {
        if (rc < 0)
            idfill_clear(out);
        return rc < 0 ? rc : 0;
    }
    f.params = params;
    f.nparams = nparams;
    f.edits = calloc(s->nrows + 2, sizeof *f.edits);
    f.param_row = malloc((nparams + 1) * sizeof *f.param_row);
    if (f.edits == NULL || f.param_row == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    for (i = 0; i < nparams; i++)
        f.param_row[i] = -1;
    for (i = 0; i < s->ncolumns; i++)
        if (strcasecmp(s->columns[i], f.t->cfg->id_column) == 0)
            kc = (int)i;
    rc = kc >= 0 ? (plan_listed(&f, kc), 0) : plan_missing(&f, err);
    out->memo_ok = kc < 0;
    if (rc != 0 || f.nids == 0)
        goto done;
    qsort(f.edits, f.nedits, sizeof *f.edits, cmp_edit);
    renumber_rows(&f);
    rc = draw_ids(snap, f.t, f.nids, out, err);
    if (rc == 0)
        rc = build(&f, out, err);
done:
    free(f.edits);
    free(f.param_row);
    if (rc != 0)
        idfill_clear(out);
    return rc;
}

void idfill_clear(dal_idfill_t *f)
{
    free(f->sql);
    small_free(f->params, f->params_inl);
    free(f->ids);
    free(f->src);
    memset(f, 0, sizeof *f);
}
