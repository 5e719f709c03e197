/*
 * result.c -- dal_result_t: its sources, and the merge that reads them
 * (see result.h; what the merge does is decided in merge.c).
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
#include "result.h"

#define NO_COLUMN UINT_MAX

/* ================================================================ rows */

/* A row that outlives its source's next fetch: one allocation. */
typedef struct rowcopy {
    MYSQL_ROW vals;
    unsigned long *lens;
    size_t seq;              /* creation order: keeps ties of the final sort stable */
} rowcopy_t;

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

typedef struct rkey {
    unsigned int col;
    int desc;
} rkey_t;

struct dal_merge_run {
    rkey_t *keys;            /* node streams merged on these; none: concatenated */
    size_t nkeys;
    unsigned int *group;     /* group columns */
    size_t ngroup;
    dal_merge_acc_t *acc;    /* per aggregate of the plan */
    unsigned int *acol, *acnt; /* its column, and AVG's count column (or NO_COLUMN) */
    unsigned int rows;       /* the plan's per-node COUNT(*) (has_rows), or NO_COLUMN */
    dal_buf_t *fmt;          /* its finished text */
    size_t naggs;
    rkey_t *final;           /* finished groups sorted on these */
    size_t nfinal;

    size_t cur;              /* concatenation: the source being read */
    size_t *heap;            /* k-way merge: source indexes, smallest row first */
    size_t nheap;
    int heap_ready;
    size_t top;              /* the source of the row pulled last */

    rowcopy_t *first;        /* first row of the group being merged */
    rowcopy_t *out;          /* the row the merge made last (group, DISTINCT) */
    MYSQL_ROW vals;          /* scratch: a group's output row, ncols */
    unsigned long *lens;
    int groups_done;
    size_t seq;
    rowcopy_t **sorted;      /* finished groups, when they must be sorted */
    size_t nsorted, next_sorted;
    int sorted_ready;

    int limited;
    uint64_t skip, left;     /* rows still to skip, and to return */
};

/* What the merge state holds (the state itself is part of the result). */
static void run_free(struct dal_merge_run *m)
{
    size_t i;

    for (i = 0; i < m->naggs; i++) {
        dal_merge_acc_free(&m->acc[i]);
        dal_buf_free(&m->fmt[i]);
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
        return dal_err_set(err, DAL_EUNSUPPORTED, "cannot merge: the nodes returned %u columns, "
                           "too few for the merge plan (column %u%s)", r->ncols, c.idx + 1,
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
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        rc = resolve_col(r, k[i].col, &(*out)[i].col, err);
        (*out)[i].desc = k[i].desc;
        /* the server orders ENUM and SET by their index, which the text hides */
        if (rc == 0 && r->meta[(*out)[i].col].unordered)
            rc = dal_err_set(err, DAL_EUNSUPPORTED, "cannot merge the nodes' rows on column "
                             "%s: ENUM and SET sort by their index, not their text",
                             r->names[(*out)[i].col]);
    }
    return rc;
}

static int resolve_groups(const dal_result_t *r, struct dal_merge_run *m, dal_error_t *err)
{
    const dal_merge_plan_t *p = r->plan;
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
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
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

/* Set the merge state up for r's plan (none: concatenate everything; that
 * needs nothing, the state starts zeroed). */
static int run_start(dal_result_t *r, dal_error_t *err)
{
    const dal_merge_plan_t *p = r->plan;
    struct dal_merge_run *m = r->run;
    int rc = 0;

    r->started = 1;
    if (p == NULL)
        memset(m, 0, sizeof *m); /* dal_result_set_merge did it for a plan */
    if (p != NULL && r->ncols > 0) {
        rc = resolve_keys(r, p->keys, p->nkeys, &m->keys, err);
        m->nkeys = rc == 0 ? p->nkeys : 0;
        if (rc == 0)
            rc = resolve_keys(r, p->final, p->nfinal, &m->final, err);
        m->nfinal = rc == 0 ? p->nfinal : 0;
        if (rc == 0 && p->aggregate)
            rc = resolve_groups(r, m, err);
        if (rc == 0 && m->nkeys > 0 && (m->heap = calloc(r->nsrcs + 1, sizeof *m->heap)) == NULL)
            rc = dal_err_set(err, DAL_ENOMEM, "out of memory");
    }
    if (p != NULL && p->limit != DAL_MERGE_LIMIT_NONE) {
        m->limited = 1;
        m->skip = p->offset;
        m->left = p->count;
    }
    return rc;
}

/* ============================================================== sources */

DAL_HOT
static void src_close(dal_result_t *r, size_t i, int ok)
{
    dal_rowsrc_t *s = r->srcs[i];

    if (s == NULL)
        return;
    r->srcs[i] = NULL;
    s->ops->close(s, ok);
}

DAL_HOT
static void srcs_close_all(dal_result_t *r)
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
        c = dal_merge_compare(&r->meta[col], a[col], al[col], b[col], bl[col]);
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
        if (dal_merge_compare(&r->meta[c], a[c], al[c], b[c], bl[c]) != 0)
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

DAL_HOT
static void set_row(dal_result_t *r, MYSQL_ROW row, unsigned long *lens)
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
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    m->out->seq = m->seq++;
    return 0;
}

static int next_plain(dal_result_t *r, dal_error_t *err)
{
    MYSQL_ROW row;
    unsigned long *lens;
    int rc = pull(r, &row, &lens, err);

    if (rc > 0)
        set_row(r, row, lens);
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
        set_row(r, m->out->vals, m->out->lens);
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
            return dal_err_set(err, DAL_ENOMEM, "out of memory");
    }
    for (i = 0; i < m->naggs && rc == 0; i++) {
        unsigned int c = m->acol[i], n = m->acnt[i];
        rc = dal_merge_acc_add(&m->acc[i], &r->meta[c], row[c], lens[c],
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
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < m->naggs; i++)
        dal_merge_acc_reset(&m->acc[i], m->acc[i].agg);
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
        dal_buf_reset(&m->fmt[i]);
        rc = dal_merge_acc_result(&m->acc[i], &m->fmt[i], err);
        if (rc < 0)
            return rc;
        if (m->fmt[i].oom)
            return dal_err_set(err, DAL_ENOMEM, "out of memory");
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
        set_row(r, r->run->out->vals, r->run->out->lens);
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
                return dal_err_set(err, DAL_ENOMEM, "out of memory");
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
    set_row(r, g->vals, g->lens);
    return 1;
}

/* The next row of the merge, before LIMIT. */
static int produce(dal_result_t *r, dal_error_t *err)
{
    const dal_merge_plan_t *p = r->plan;

    if (p == NULL || r->ncols == 0)
        return next_plain(r, err);
    if (p->aggregate)
        return r->run->nfinal > 0 ? next_sorted(r, err) : next_group_row(r, err);
    return p->distinct ? next_distinct(r, err) : next_plain(r, err);
}

/* LIMIT offset, count: offset rows are produced and dropped one by one, so
 * memory does not grow with the offset. */
static int advance(dal_result_t *r, dal_error_t *err)
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
DAL_HOT
static void finish(dal_result_t *r, int rc, const dal_error_t *e)
{
    srcs_close_all(r);
    set_row(r, NULL, NULL);
    r->done = 1;
    if (rc < 0) {
        r->failed = rc;
        r->fail = malloc(sizeof *r->fail);
        if (r->fail != NULL)
            *r->fail = *e;
    }
}

/* ============================================================ the result */

/* A fully received MYSQL_RES as a source. */
typedef struct stored_src {
    dal_rowsrc_t base;
    MYSQL_RES *res;
    int embedded;            /* inside a result_block_t: it and res (whose fields the
                                result may show) go with the result */
} stored_src_t;

/* The result with what nearly every result needs, in one allocation: most
 * statements run on one node and return one stored result, and the
 * allocator would otherwise be a good part of their cost. */
typedef struct result_block {
    dal_result_t r;          /* first: a dal_result_t * is a result_block_t * */
    struct dal_merge_run run;
    dal_rowsrc_t *srcs[2];   /* r.srcs until more sources come */
    stored_src_t stored;     /* the first stored source */
} result_block_t;

DAL_HOT
dal_result_t *dal_result_new(void)
{
    /* malloc + memset, not calloc: glibc's calloc skips the per-thread
     * cache, and one result per statement is made and freed */
    result_block_t *b = malloc(sizeof *b);

    if (b == NULL)
        return NULL;
    /* all but the merge state, which only a merge or several sources use
     * (zeroed by run_start / dal_result_set_merge): fewer lines written */
    memset(&b->r, 0, sizeof b->r);
    memset(b->srcs, 0, sizeof b->srcs);
    memset(&b->stored, 0, sizeof b->stored);
    b->r.run = &b->run;
    b->r.srcs = b->srcs;
    b->r.cap = sizeof b->srcs / sizeof b->srcs[0];
    b->stored.embedded = 1;
    return &b->r;
}

/* names, meta and the nodes' names of the columns: one block. */
static int copy_columns(dal_result_t *r, const MYSQL_FIELD *fields, unsigned int ncols,
                        dal_error_t *err)
{
    size_t bytes = (size_t)ncols * (sizeof *r->meta + sizeof *r->names), len;
    unsigned int i;
    char *p;

    for (i = 0; i < ncols; i++)
        bytes += (fields[i].name ? strlen(fields[i].name) : 0) + 1;
    /* pointers first: each part stays aligned for its type */
    r->names = malloc(bytes ? bytes : 1);
    if (r->names == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    r->meta = (dal_merge_meta_t *)(r->names + ncols);
    p = (char *)(r->meta + ncols);
    for (i = 0; i < ncols; i++) {
        dal_merge_meta_init(&r->meta[i], &fields[i]);
        len = fields[i].name ? strlen(fields[i].name) : 0;
        memcpy(p, fields[i].name ? fields[i].name : "", len);
        p[len] = '\0';
        r->names[i] = p;
        p += len + 1;
    }
    r->ncols = r->nvisible = ncols;
    r->fields = NULL;
    return 0;
}

/* The columns copied, before anything needs meta or renames a column: a
 * merge, a second source, a name the server got wrong.  Until then they
 * are read from the first source's fields. */
static int columns_ready(dal_result_t *r, dal_error_t *err)
{
    if (r->names != NULL || r->fields == NULL)
        return 0;
    return copy_columns(r, r->fields, r->ncols, err);
}

static int is_embedded(const dal_result_t *r, const dal_rowsrc_t *s)
{
    return s == &((const result_block_t *)r)->stored.base;
}

static int check_source(dal_result_t *r, unsigned int ncols, const char *datasource,
                        dal_error_t *err)
{
    dal_rowsrc_t **v;
    size_t cap;

    if (r->started || r->plan != NULL)
        return dal_err_set(err, DAL_ESTATE, "a source was added to a result already merging");
    if (r->nsrcs > 0 && ncols != r->ncols)
        return dal_err_set(err, DAL_EUNSUPPORTED,
                           "datasource %s returned %u columns where the others returned %u; "
                           "the physical tables differ", datasource, ncols, r->ncols);
    if (r->nsrcs < r->cap)
        return 0;
    cap = r->cap * 2;
    v = malloc(cap * sizeof *v);
    if (v == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    memcpy(v, r->srcs, r->nsrcs * sizeof *v);
    if (r->srcs != ((result_block_t *)r)->srcs)
        free(r->srcs);
    r->srcs = v;
    r->cap = cap;
    return 0;
}

DAL_HOT
int dal_result_add_source(dal_result_t *r, dal_rowsrc_t *s, const MYSQL_FIELD *fields,
                          unsigned int ncols, const char *datasource, dal_error_t *err)
{
    int rc;

    if (datasource == NULL)
        datasource = "?";
    rc = check_source(r, ncols, datasource, err);
    if (rc == 0 && r->nsrcs == 0 && is_embedded(r, s)) {
        r->fields = fields;
        r->ncols = r->nvisible = ncols;
    } else if (rc == 0 && r->nsrcs == 0) {
        rc = copy_columns(r, fields, ncols, err);
    } else if (rc == 0) {
        rc = columns_ready(r, err);
    }
    if (rc != 0) {
        s->ops->close(s, 1);
        return rc;
    }
    r->srcs[r->nsrcs++] = s;
    return 0;
}

/* ------------------------------------------------------ stored results */

DAL_HOT
static int stored_fetch(dal_rowsrc_t *s, dal_error_t *err)
{
    stored_src_t *st = (stored_src_t *)s;

    s->row = mysql_fetch_row(st->res);
    s->lengths = s->row ? mysql_fetch_lengths(st->res) : NULL;
    return s->row != NULL;
}

DAL_HOT
static void stored_close(dal_rowsrc_t *s, int ok)
{
    stored_src_t *st = (stored_src_t *)s;

    if (st->embedded)
        return; /* dal_result_free frees res */
    mysql_free_result(st->res);
    free(st);
}

static const dal_rowsrc_ops_t stored_ops = {stored_fetch, stored_close};

DAL_HOT
int dal_result_add(dal_result_t *r, MYSQL_RES *res, const char *datasource, dal_error_t *err)
{
    stored_src_t *s = &((result_block_t *)r)->stored;

    /* the embedded one serves the first stored source only: a closed
     * source is never reopened */
    if (s->base.ops != NULL)
        s = calloc(1, sizeof *s);
    if (s == NULL) {
        mysql_free_result(res);
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    }
    s->base.ops = &stored_ops;
    s->res = res;
    return dal_result_add_source(r, &s->base, mysql_fetch_fields(res), mysql_num_fields(res),
                                 datasource, err);
}

/* ---------------------------------------------------------- streams */

typedef struct stream_src {
    dal_rowsrc_t base;
    MYSQL_RES *res;          /* from mysql_use_result */
    dal_conn_t *conn;
    void (*release)(void *ctx, dal_conn_t *c, int reusable);
    void *ctx;
} stream_src_t;

static int stream_fetch(dal_rowsrc_t *s, dal_error_t *err)
{
    stream_src_t *st = (stream_src_t *)s;

    s->row = mysql_fetch_row(st->res);
    if (s->row != NULL) {
        s->lengths = mysql_fetch_lengths(st->res);
        return 1;
    }
    if (mysql_errno(&st->conn->mysql) != 0)
        return dal_conn_error(st->conn, DAL_ESERVER, err);
    return 0;
}

/* mysql_free_result reads and drops the rows not read yet: the protocol
 * cannot cancel a result set, and the connection is usable only after. */
static void stream_close(dal_rowsrc_t *s, int ok)
{
    stream_src_t *st = (stream_src_t *)s;

    mysql_free_result(st->res);
    st->release(st->ctx, st->conn, ok && mysql_errno(&st->conn->mysql) == 0);
    free(st);
}

static const dal_rowsrc_ops_t stream_ops = {stream_fetch, stream_close};

int dal_result_add_stream(dal_result_t *r, dal_conn_t *conn,
                          void (*release)(void *ctx, dal_conn_t *c, int reusable), void *ctx,
                          const char *datasource, dal_error_t *err)
{
    stream_src_t *s = calloc(1, sizeof *s);
    MYSQL_RES *res = s ? mysql_use_result(&conn->mysql) : NULL;
    int rc;

    if (res == NULL) {
        rc = s ? dal_conn_error(conn, DAL_ESERVER, err)
               : dal_err_set(err, DAL_ENOMEM, "out of memory");
        free(s);
        release(ctx, conn, 0); /* a result set is pending on it */
        return rc;
    }
    s->base.ops = &stream_ops;
    s->res = res;
    s->conn = conn;
    s->release = release;
    s->ctx = ctx;
    return dal_result_add_source(r, &s->base, mysql_fetch_fields(res), mysql_num_fields(res),
                                 datasource, err);
}

/* ------------------------------------------------------------ merging */

/* Show names[i] (where not NULL; borrowed, kept alive by the caller) as
 * the name of column i. */
static void rename_columns(dal_result_t *r, char *const *names, size_t n)
{
    size_t i;

    for (i = 0; i < n && i < r->nvisible; i++)
        if (names[i] != NULL)
            r->names[i] = names[i];
}

/* The same for the last n visible columns (the items after a *). */
static void rename_tail(dal_result_t *r, char *const *names, size_t n)
{
    size_t i;

    for (i = 0; i < n && n <= r->nvisible; i++)
        if (names[i] != NULL)
            r->names[r->nvisible - n + i] = names[i];
}

DAL_HOT
int dal_result_name_columns(dal_result_t *r, const dal_sql_t *sql, dal_error_t *err)
{
    const dal_sql_names_t *names = dal_merge_cached_names(sql);

    if (names == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    if (names->nset == 0)
        return 0;
    if (columns_ready(r, err) != 0)
        return DAL_ENOMEM;
    if (r->sql != sql) {
        dal_sql_unref(r->sql);
        r->sql = dal_sql_ref(sql);
    }
    rename_columns(r, (char *const *)names->v, names->n);
    return 0;
}

int dal_result_set_merge(dal_result_t *r, dal_merge_plan_t *plan, dal_error_t *err)
{
    if (r->started || r->plan != NULL) {
        dal_merge_plan_free(plan);
        return dal_err_set(err, DAL_ESTATE, "the result is already being read or merged");
    }
    memset(r->run, 0, sizeof *r->run); /* before any return: the plan's state is freed
                                          with the result */
    r->plan = plan;
    if (columns_ready(r, err) != 0)
        return DAL_ENOMEM;
    if (plan->limit != DAL_MERGE_LIMIT_NONE && !plan->limit_bound)
        return dal_err_set(err, DAL_ESTATE, "the merge plan's LIMIT was not bound "
                           "(dal_merge_node_edits)");
    if (r->ncols > 0 && plan->nhidden >= r->ncols)
        return dal_err_set(err, DAL_EUNSUPPORTED, "cannot merge: the nodes returned %u "
                           "columns, the merge added %zu", r->ncols, plan->nhidden);
    r->nvisible = r->ncols - (r->ncols > 0 ? (unsigned int)plan->nhidden : 0);
    rename_columns(r, plan->names, plan->nnames);
    rename_tail(r, plan->tail_names, plan->ntail);
    return run_start(r, err);
}

void dal_result_set_ids(dal_result_t *r, int64_t *ids, size_t n)
{
    free(r->ids);
    r->ids = ids;
    r->nids = n;
}

void dal_result_on_free(dal_result_t *r, void (*fn)(void *ctx), void *ctx)
{
    r->cleanup = fn;
    r->cleanup_ctx = ctx;
}

/* ============================================================== getters */

DAL_HOT
size_t dal_result_column_count(const dal_result_t *r)
{
    return r ? r->nvisible : 0;
}

const char *dal_result_column_name(const dal_result_t *r, size_t col)
{
    if (r == NULL || col >= r->nvisible)
        return NULL;
    if (r->names == NULL)
        return r->fields[col].name ? r->fields[col].name : "";
    return r->names[col];
}

/* After the end or a failure: the same answer again. */
DAL_HOT
static int ended(const dal_result_t *r, dal_error_t *err)
{
    if (!r->failed)
        return 0;
    if (r->fail == NULL)
        return dal_err_set(err, r->failed, "the result failed earlier (no memory was left to "
                           "keep why)");
    if (err != NULL)
        *err = *r->fail;
    return r->failed;
}

DAL_HOT
int dal_result_next(dal_result_t *r, dal_error_t *err)
{
    dal_rowsrc_t *s;
    dal_error_t e;
    int rc;

    if (r == NULL)
        return dal_err_set(err, DAL_EINVAL, "result is NULL");
    if (r->done || r->failed)
        return ended(r, err);
    dal_err_clear(&e);
    if (r->plan == NULL && r->nsrcs == 1) {
        /* one source and nothing to merge, as most results: its rows as
         * they come, without the pipeline (fewer functions on the path of
         * every row) */
        r->started = 1;
        s = r->srcs[0];
        rc = s->ops->fetch(s, &e);
        if (rc > 0) {
            set_row(r, s->row, s->lengths);
            return rc;
        }
    } else {
        if (!r->started && (rc = run_start(r, err)) != 0)
            return rc;
        rc = advance(r, &e);
        if (rc > 0)
            return rc;
    }
    finish(r, rc, &e);
    if (rc < 0 && err != NULL)
        *err = e;
    return rc;
}

DAL_HOT
int dal_result_is_null(const dal_result_t *r, size_t col)
{
    return r == NULL || r->row == NULL || col >= r->nvisible || r->row[col] == NULL;
}

DAL_HOT
const char *dal_result_text(const dal_result_t *r, size_t col, size_t *len)
{
    if (dal_result_is_null(r, col)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = r->lengths[col];
    return r->row[col];
}

DAL_HOT
int64_t dal_result_int(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtoll(t, NULL, 10) : 0;
}

DAL_HOT
uint64_t dal_result_uint(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtoull(t, NULL, 10) : 0;
}

DAL_HOT
double dal_result_double(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtod(t, NULL) : 0.0;
}

DAL_HOT
uint64_t dal_result_affected_rows(const dal_result_t *r)
{
    return r ? r->affected : 0;
}

uint64_t dal_result_insert_id(const dal_result_t *r)
{
    return r && r->nroutes == 1 ? r->insert_id : 0;
}

const int64_t *dal_result_generated_ids(const dal_result_t *r, size_t *n)
{
    if (n != NULL)
        *n = r && r->ids ? r->nids : 0;
    return r && r->nids > 0 ? r->ids : NULL;
}

size_t dal_result_route_count(const dal_result_t *r)
{
    return r ? r->nroutes : 0;
}

DAL_HOT
void dal_result_free(dal_result_t *r)
{
    if (r == NULL)
        return;
    srcs_close_all(r);
    if (((result_block_t *)r)->stored.res != NULL)
        mysql_free_result(((result_block_t *)r)->stored.res);
    if (r->srcs != ((result_block_t *)r)->srcs)
        free(r->srcs);
    /* what a one-source read has none of is not visited */
    if (r->names != NULL || r->ids != NULL || r->fail != NULL) {
        free((void *)r->names);
        free(r->ids);
        free(r->fail);
    }
    if (r->plan != NULL) { /* else the merge state holds nothing */
        run_free(r->run);
        dal_merge_plan_free(r->plan);
    }
    if (r->sql != NULL)
        dal_sql_unref(r->sql);
    if (r->cleanup != NULL)
        r->cleanup(r->cleanup_ctx);
    free(r);
}
