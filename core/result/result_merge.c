/*
 * result_merge.c -- the execution of the merge: reading the rows of several
 * sources as one result (what the merge does is decided in merge.c; the
 * value rules are merge_value.c's).  See result_int.h.
 *
 * The merge is a pipeline pulled by dal_result_next:
 *
 *   sources -> pull (concatenate, or k-way merge on a binary heap)
 *           -> rows as they are | DISTINCT | groups (-> sorted groups)
 *           -> LIMIT (skip offset rows, stop after count)
 *
 * A pulled row lives in its source until that source is fetched again, so
 * rows passed through need no copy; a stage that must keep a row past the
 * next pull (a group's first row, DISTINCT's previous row, finished
 * groups) copies it into one block.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "result_int.h"

/* ================================================================ rows */

static rowcopy_t *row_copy(unsigned int n, MYSQL_ROW vals, const unsigned long *lens)
{
    size_t bytes = 0, i;
    rowcopy_t *c;
    char *p;

    for (i = 0; i < n; i++)
        if (vals[i] != NULL)
            bytes += lens[i] + 1;
    c = malloc(sizeof *c + n * sizeof *c->vals + n * sizeof *c->lens + bytes);
    if (c == NULL)
        return NULL;
    c->vals = (MYSQL_ROW)(c + 1);
    c->lens = (unsigned long *)(c->vals + n);
    c->seq = 0;
    p = (char *)(c->lens + n);
    for (i = 0; i < n; i++) {
        c->vals[i] = vals[i] ? p : NULL;
        c->lens[i] = vals[i] ? lens[i] : 0;
        if (vals[i] == NULL)
            continue;
        memcpy(p, vals[i], lens[i]);
        p[lens[i]] = '\0';
        p += lens[i] + 1;
    }
    return c;
}

/* ========================================================= merge state */

/* What the merge state holds (the state itself is part of the result). */
void result_run_free(struct dal_merge_run *m)
{
    size_t i;

    for (i = 0; i < m->naggs; i++) {
        merge_acc_free(&m->acc[i]);
        buf_free(&m->fmt[i]);
    }
    for (i = 0; i < m->nsorted; i++)
        free(m->sorted[i]);
    free(m->sorted);
    free(m->keys);
    free(m->group);
    free(m->acc);
    free(m->acol);
    free(m->acnt);
    free(m->fmt);
    free(m->final);
    free(m->heap);
    free(m->first);
    free(m->out);
    free(m->vals);
    free(m->lens);
}

/* The column of the nodes' rows that c names. */
static int resolve_col(const dal_result_t *r, dal_merge_col_t c, unsigned int *col,
                       dal_error_t *err)
{
    unsigned int v = c.hidden ? r->nvisible + c.idx
                              : c.from_end ? r->nvisible - 1 - c.idx : c.idx;

    if (c.idx >= (c.hidden ? r->ncols - r->nvisible : r->nvisible))
        return err_set(err, DAL_EUNSUPPORTED, "cannot merge: the nodes returned %u columns, "
                       "too few for the merge spec (column %u%s)", r->ncols, c.idx + 1,
                       c.hidden ? " of the merge's own" : "");
    *col = v;
    return 0;
}

static int resolve_keys(const dal_result_t *r, const dal_merge_key_t *k, size_t n,
                        rkey_t **out, dal_error_t *err)
{
    size_t i;
    int rc = 0;

    if (n == 0)
        return 0;
    *out = calloc(n, sizeof **out);
    if (*out == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        rc = resolve_col(r, k[i].col, &(*out)[i].col, err);
        (*out)[i].desc = k[i].desc;
        /* the server orders ENUM and SET by their index, which the text hides */
        if (rc == 0 && r->meta[(*out)[i].col].unordered)
            rc = err_set(err, DAL_EUNSUPPORTED, "cannot merge the nodes' rows on column "
                         "%s: ENUM and SET sort by their index, not their text",
                         r->names[(*out)[i].col]);
    }
    return rc;
}

static int resolve_groups(const dal_result_t *r, struct dal_merge_run *m, dal_error_t *err)
{
    const dal_merge_spec_t *p = r->spec;
    size_t i;
    int rc = 0;

    m->group = calloc(p->ngroup + 1, sizeof *m->group);
    m->acc = calloc(p->naggs + 1, sizeof *m->acc);
    m->acol = calloc(p->naggs + 1, sizeof *m->acol);
    m->acnt = calloc(p->naggs + 1, sizeof *m->acnt);
    m->fmt = calloc(p->naggs + 1, sizeof *m->fmt);
    m->vals = calloc(r->ncols, sizeof *m->vals);
    m->lens = calloc(r->ncols, sizeof *m->lens);
    if (!m->group || !m->acc || !m->acol || !m->acnt || !m->fmt || !m->vals || !m->lens)
        return err_set(err, DAL_ENOMEM, "out of memory");
    m->rows = NO_COLUMN;
    if (p->has_rows)
        rc = resolve_col(r, p->rows, &m->rows, err);
    for (i = 0; i < p->ngroup && rc == 0; i++, m->ngroup++)
        rc = resolve_col(r, p->group[i], &m->group[i], err);
    for (i = 0; i < p->naggs && rc == 0; i++, m->naggs++) {
        m->acc[i].agg = p->aggs[i].agg;
        m->acnt[i] = NO_COLUMN;
        rc = resolve_col(r, p->aggs[i].col, &m->acol[i], err);
        if (rc == 0 && p->aggs[i].agg == DAL_AGG_AVG)
            rc = resolve_col(r, p->aggs[i].count, &m->acnt[i], err);
    }
    return rc;
}

/* Set the merge state up for r's spec (none: concatenate everything; that
 * needs nothing, the state starts zeroed). */
int result_run_start(dal_result_t *r, dal_error_t *err)
{
    const dal_merge_spec_t *p = r->spec;
    struct dal_merge_run *m = r->run;
    int rc = 0;

    r->started = 1;
    if (p != NULL && r->ncols > 0) {
        rc = resolve_keys(r, p->keys, p->nkeys, &m->keys, err);
        m->nkeys = rc == 0 ? p->nkeys : 0;
        if (rc == 0)
            rc = resolve_keys(r, p->final, p->nfinal, &m->final, err);
        m->nfinal = rc == 0 ? p->nfinal : 0;
        if (rc == 0 && p->aggregate)
            rc = resolve_groups(r, m, err);
        if (rc == 0 && m->nkeys > 0 && (m->heap = calloc(r->nsrcs + 1, sizeof *m->heap)) == NULL)
            rc = err_set(err, DAL_ENOMEM, "out of memory");
    }
    if (p != NULL && p->limit != DAL_MERGE_LIMIT_NONE) {
        m->limited = 1;
        m->skip = p->offset;
        m->left = p->count;
    }
    return rc;
}

/* ============================================================== sources */

static void src_close(dal_result_t *r, size_t i, int ok)
{
    dal_rowsrc_t *s = r->srcs[i];

    if (s == NULL)
        return;
    r->srcs[i] = NULL;
    if (ok && !s->ended && s->ops->drain != NULL)
        s->ops->drain(s);
    if (s->ended) {
        /* what its server sent after the rows outlives the source */
        r->warnings += s->warnings;
        if (i + 1 >= r->status_src) {
            r->status = s->status;
            r->status_src = i + 1;
        }
    }
    s->ops->close(s, ok);
}

void result_srcs_close_all(dal_result_t *r)
{
    size_t i;

    for (i = 0; i < r->nsrcs; i++)
        src_close(r, i, 1);
}

/* The next row of source i: 1, 0 at its end, <0.  A source is closed (its
 * connection released) as soon as it ends or fails. */
static int src_fetch(dal_result_t *r, size_t i, dal_error_t *err)
{
    dal_rowsrc_t *s = r->srcs[i];
    int rc;

    if (s == NULL)
        return 0;
    rc = s->ops->fetch(s, err);
    if (rc <= 0)
        src_close(r, i, rc == 0);
    return rc;
}

/* ============================================================ comparing */

static int compare_rows(const dal_result_t *r, const rkey_t *k, size_t n, MYSQL_ROW a,
                        const unsigned long *al, MYSQL_ROW b, const unsigned long *bl)
{
    size_t i;
    int c;

    for (i = 0; i < n; i++) {
        unsigned int col = k[i].col;
        c = merge_compare(&r->meta[col], a[col], al[col], b[col], bl[col]);
        if (c != 0)
            return k[i].desc ? -c : c;
    }
    return 0;
}

/* Equal on the columns cols[0..n), or on the first n columns if cols is NULL. */
static int rows_equal(const dal_result_t *r, const unsigned int *cols, size_t n, MYSQL_ROW a,
                      const unsigned long *al, MYSQL_ROW b, const unsigned long *bl)
{
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned int c = cols ? cols[i] : (unsigned int)i;
        if (merge_compare(&r->meta[c], a[c], al[c], b[c], bl[c]) != 0)
            return 0;
    }
    return 1;
}

/* ================================================================= pull */

/* Heap order: the smaller current row first; ties by source order, so equal
 * keys come out in the order the sources were added. */
static int heap_less(const dal_result_t *r, size_t a, size_t b)
{
    const dal_rowsrc_t *x = r->srcs[a], *y = r->srcs[b];
    int c = compare_rows(r, r->run->keys, r->run->nkeys, x->row, x->lengths, y->row, y->lengths);

    return c < 0 || (c == 0 && a < b);
}

static void heap_down(dal_result_t *r, size_t i)
{
    struct dal_merge_run *m = r->run;
    size_t least, l, x;

    for (;;) {
        least = i;
        l = 2 * i + 1;
        if (l < m->nheap && heap_less(r, m->heap[l], m->heap[least]))
            least = l;
        if (l + 1 < m->nheap && heap_less(r, m->heap[l + 1], m->heap[least]))
            least = l + 1;
        if (least == i)
            return;
        x = m->heap[i];
        m->heap[i] = m->heap[least];
        m->heap[least] = x;
        i = least;
    }
}

/* The first pull of a k-way merge: one row of every source. */
static int heap_fill(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    size_t i;
    int rc;

    m->heap_ready = 1;
    for (i = 0; i < r->nsrcs; i++) {
        rc = src_fetch(r, i, err);
        if (rc < 0)
            return rc;
        if (rc > 0)
            m->heap[m->nheap++] = i;
    }
    for (i = m->nheap / 2; i-- > 0;)
        heap_down(r, i);
    return m->nheap > 0;
}

/* Advance the source whose row was pulled last, then take the least row. */
static int heap_next(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    int rc;

    if (!m->heap_ready)
        rc = heap_fill(r, err);
    else if (m->nheap == 0)
        rc = 0;
    else if ((rc = src_fetch(r, m->heap[0], err)) >= 0) {
        if (rc == 0)
            m->heap[0] = m->heap[--m->nheap];
        heap_down(r, 0);
        rc = m->nheap > 0;
    }
    if (rc > 0)
        m->top = m->heap[0];
    return rc;
}

static int concat_next(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    int rc;

    for (; m->cur < r->nsrcs; m->cur++) {
        rc = src_fetch(r, m->cur, err);
        if (rc != 0) {
            m->top = m->cur;
            return rc;
        }
    }
    return 0;
}

/* The next node row in merge order; valid until the next pull. */
static int pull(dal_result_t *r, MYSQL_ROW *row, unsigned long **lens, dal_error_t *err)
{
    int rc = r->run->nkeys > 0 ? heap_next(r, err) : concat_next(r, err);
    const dal_rowsrc_t *s;

    if (rc <= 0)
        return rc;
    s = r->srcs[r->run->top];
    *row = s->row;
    *lens = s->lengths;
    return 1;
}

/* =============================================================== stages */

void result_set_row(dal_result_t *r, MYSQL_ROW row, unsigned long *lens)
{
    r->row = row;
    r->lengths = lens;
}

static int keep_out(dal_result_t *r, MYSQL_ROW row, const unsigned long *lens, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;

    free(m->out);
    m->out = row_copy(r->ncols, row, lens);
    if (m->out == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    m->out->seq = m->seq++;
    return 0;
}

static int next_plain(dal_result_t *r, dal_error_t *err)
{
    MYSQL_ROW row;
    unsigned long *lens;
    int rc = pull(r, &row, &lens, err);

    if (rc > 0)
        result_set_row(r, row, lens);
    return rc;
}

/* DISTINCT: the streams are sorted on every visible column, so a duplicate
 * is always the row right before it. */
static int next_distinct(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    MYSQL_ROW row;
    unsigned long *lens;
    int rc;

    for (;;) {
        rc = pull(r, &row, &lens, err);
        if (rc <= 0)
            return rc;
        if (m->out && rows_equal(r, NULL, r->nvisible, m->out->vals, m->out->lens, row, lens))
            continue;
        rc = keep_out(r, row, lens, err);
        if (rc != 0)
            return rc;
        result_set_row(r, m->out->vals, m->out->lens);
        return 1;
    }
}

/* ------------------------------------------------------------- groups */

/* A node row of an aggregate without GROUP BY that counts no rows: the
 * node had none, and its columns that are not aggregated are NULL. */
static int node_empty(const struct dal_merge_run *m, MYSQL_ROW row, const unsigned long *lens)
{
    return m->rows != NO_COLUMN && lens[m->rows] == 1 && row[m->rows] != NULL &&
           row[m->rows][0] == '0';
}

static int group_add(dal_result_t *r, MYSQL_ROW row, const unsigned long *lens,
                     dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    size_t i;
    int rc = 0;

    /* the columns that are not aggregated come from a node that had rows */
    if (node_empty(m, m->first->vals, m->first->lens) && !node_empty(m, row, lens)) {
        free(m->first);
        if ((m->first = row_copy(r->ncols, row, lens)) == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
    }
    for (i = 0; i < m->naggs && rc == 0; i++) {
        unsigned int c = m->acol[i], n = m->acnt[i];
        rc = merge_acc_add(&m->acc[i], &r->meta[c], row[c], lens[c],
                           n == NO_COLUMN ? NULL : row[n], n == NO_COLUMN ? 0 : lens[n],
                           err);
    }
    return rc;
}

static int group_start(dal_result_t *r, MYSQL_ROW row, const unsigned long *lens,
                       dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    size_t i;

    free(m->first);
    m->first = row_copy(r->ncols, row, lens);
    if (m->first == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < m->naggs; i++)
        merge_acc_reset(&m->acc[i], m->acc[i].agg);
    return group_add(r, row, lens, err);
}

/* The finished group as m->out: the first row's values, aggregates replaced
 * by their combined value. */
static int group_finish(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    size_t i;
    int rc;

    memcpy(m->vals, m->first->vals, r->ncols * sizeof *m->vals);
    memcpy(m->lens, m->first->lens, r->ncols * sizeof *m->lens);
    for (i = 0; i < m->naggs; i++) {
        buf_reset(&m->fmt[i]);
        rc = merge_acc_result(&m->acc[i], &m->fmt[i], err);
        if (rc < 0)
            return rc;
        if (m->fmt[i].oom)
            return err_set(err, DAL_ENOMEM, "out of memory");
        m->vals[m->acol[i]] = rc == 1 ? NULL : m->fmt[i].data ? m->fmt[i].data : "";
        m->lens[m->acol[i]] = m->fmt[i].len;
    }
    return keep_out(r, m->vals, m->lens, err);
}

/* The next finished group in m->out.  Rows of one group are adjacent in
 * the merged stream because every node sorts on the group columns. */
static int next_group(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    MYSQL_ROW row;
    unsigned long *lens;
    int rc;

    while (!m->groups_done) {
        rc = pull(r, &row, &lens, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            m->groups_done = 1;
            if (m->first == NULL)
                return 0;
            return (rc = group_finish(r, err)) != 0 ? rc : 1;
        }
        if (m->first == NULL)
            rc = group_start(r, row, lens, err);
        else if (rows_equal(r, m->group, m->ngroup, m->first->vals, m->first->lens, row, lens))
            rc = group_add(r, row, lens, err);
        else if ((rc = group_finish(r, err)) == 0 && (rc = group_start(r, row, lens, err)) == 0)
            return 1;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int next_group_row(dal_result_t *r, dal_error_t *err)
{
    int rc = next_group(r, err);

    if (rc > 0)
        result_set_row(r, r->run->out->vals, r->run->out->lens);
    return rc;
}

static int final_compare(const void *a, const void *b, void *ctx)
{
    const dal_result_t *r = ctx;
    const rowcopy_t *x = *(rowcopy_t *const *)a, *y = *(rowcopy_t *const *)b;
    int c = compare_rows(r, r->run->final, r->run->nfinal, x->vals, x->lens, y->vals, y->lens);

    return c != 0 ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* ORDER BY on an aggregate: every group must be finished before the first
 * can be returned, so they are all kept and sorted. */
static int collect_groups(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    size_t cap = 0;
    rowcopy_t **v;
    int rc;

    while ((rc = next_group(r, err)) > 0) {
        if (m->nsorted == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(m->sorted, cap * sizeof *v);
            if (v == NULL)
                return err_set(err, DAL_ENOMEM, "out of memory");
            m->sorted = v;
        }
        m->sorted[m->nsorted++] = m->out;
        m->out = NULL;
    }
    if (rc < 0)
        return rc;
    if (m->nsorted > 1)
        qsort_r(m->sorted, m->nsorted, sizeof *m->sorted, final_compare, r);
    m->sorted_ready = 1;
    return 0;
}

static int next_sorted(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    const rowcopy_t *g;
    int rc;

    if (!m->sorted_ready && (rc = collect_groups(r, err)) != 0)
        return rc;
    if (m->next_sorted == m->nsorted)
        return 0;
    g = m->sorted[m->next_sorted++];
    result_set_row(r, g->vals, g->lens);
    return 1;
}

/* The next row of the merge, before LIMIT. */
static int produce(dal_result_t *r, dal_error_t *err)
{
    const dal_merge_spec_t *p = r->spec;

    if (p == NULL || r->ncols == 0)
        return next_plain(r, err);
    if (p->aggregate)
        return r->run->nfinal > 0 ? next_sorted(r, err) : next_group_row(r, err);
    return p->distinct ? next_distinct(r, err) : next_plain(r, err);
}

/* LIMIT offset, count: offset rows are produced and dropped one by one, so
 * memory does not grow with the offset. */
int result_advance(dal_result_t *r, dal_error_t *err)
{
    struct dal_merge_run *m = r->run;
    int rc;

    for (; m->skip > 0; m->skip--) {
        rc = produce(r, err);
        if (rc <= 0)
            return rc;
    }
    if (m->limited && m->left == 0)
        return 0;
    rc = produce(r, err);
    if (rc > 0 && m->limited)
        m->left--;
    return rc;
}

/* The end, or a failure: every connection goes back at once. */
void result_finish(dal_result_t *r, int rc, const dal_error_t *e)
{
    result_srcs_close_all(r);
    result_set_row(r, NULL, NULL);
    r->done = 1;
    if (rc < 0) {
        r->failed = rc;
        r->fail = malloc(sizeof *r->fail);
        if (r->fail != NULL)
            *r->fail = *e;
    }
}

