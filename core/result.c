/*
 * result.c -- dal_result_t: its columns, its sources (a stored result, a
 * streamed one), the getters; reading several sources as one is
 * result_merge.c's (see result_int.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "result_int.h"

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

dal_result_t *result_new(void)
{
    result_block_t *b = calloc(1, sizeof *b);

    if (b == NULL)
        return NULL;
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
        return err_set(err, DAL_ENOMEM, "out of memory");
    r->meta = (dal_merge_meta_t *)(r->names + ncols);
    p = (char *)(r->meta + ncols);
    for (i = 0; i < ncols; i++) {
        merge_meta_init(&r->meta[i], &fields[i]);
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

    if (r->started || r->spec != NULL)
        return err_set(err, DAL_ESTATE, "a source was added to a result already merging");
    if (r->nsrcs > 0 && ncols != r->ncols)
        return err_set(err, DAL_EUNSUPPORTED,
                       "datasource %s returned %u columns where the others returned %u; "
                       "the physical tables differ", datasource, ncols, r->ncols);
    if (r->nsrcs < r->cap)
        return 0;
    cap = r->cap * 2;
    v = malloc(cap * sizeof *v);
    if (v == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    memcpy(v, r->srcs, r->nsrcs * sizeof *v);
    if (r->srcs != ((result_block_t *)r)->srcs)
        free(r->srcs);
    r->srcs = v;
    r->cap = cap;
    return 0;
}

int result_add_source(dal_result_t *r, dal_rowsrc_t *s, const MYSQL_FIELD *fields,
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

static int stored_fetch(dal_rowsrc_t *s, dal_error_t *err)
{
    stored_src_t *st = (stored_src_t *)s;

    s->row = mysql_fetch_row(st->res);
    s->lengths = s->row ? mysql_fetch_lengths(st->res) : NULL;
    return s->row != NULL;
}

static void stored_close(dal_rowsrc_t *s, int ok)
{
    stored_src_t *st = (stored_src_t *)s;

    if (st->embedded)
        return; /* dal_result_free frees res */
    mysql_free_result(st->res);
    free(st);
}

static const dal_rowsrc_ops_t stored_ops = {stored_fetch, stored_close};

int result_add(dal_result_t *r, MYSQL_RES *res, const char *datasource, dal_error_t *err)
{
    stored_src_t *s = &((result_block_t *)r)->stored;

    /* the embedded one serves the first stored source only: a closed
     * source is never reopened */
    if (s->base.ops != NULL)
        s = calloc(1, sizeof *s);
    if (s == NULL) {
        mysql_free_result(res);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    s->base.ops = &stored_ops;
    s->res = res;
    return result_add_source(r, &s->base, mysql_fetch_fields(res), mysql_num_fields(res),
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
        return conn_error(st->conn, DAL_ESERVER, err);
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

int result_add_stream(dal_result_t *r, dal_conn_t *conn,
                      void (*release)(void *ctx, dal_conn_t *c, int reusable), void *ctx,
                      const char *datasource, dal_error_t *err)
{
    stream_src_t *s = calloc(1, sizeof *s);
    MYSQL_RES *res = s ? mysql_use_result(&conn->mysql) : NULL;
    int rc;

    if (res == NULL) {
        rc = s ? conn_error(conn, DAL_ESERVER, err)
               : err_set(err, DAL_ENOMEM, "out of memory");
        free(s);
        release(ctx, conn, 0); /* a result set is pending on it */
        return rc;
    }
    s->base.ops = &stream_ops;
    s->res = res;
    s->conn = conn;
    s->release = release;
    s->ctx = ctx;
    return result_add_source(r, &s->base, mysql_fetch_fields(res), mysql_num_fields(res),
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

int result_name_columns(dal_result_t *r, const dal_sql_t *sql, dal_error_t *err)
{
    const dal_sql_names_t *names = merge_cached_names(sql);

    if (names == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if (names->nset == 0)
        return 0;
    if (columns_ready(r, err) != 0)
        return DAL_ENOMEM;
    if (r->sql != sql) {
        sql_unref(r->sql);
        r->sql = sql_ref(sql);
    }
    rename_columns(r, (char *const *)names->v, names->n);
    return 0;
}

int result_set_merge(dal_result_t *r, dal_merge_spec_t *spec, dal_error_t *err)
{
    if (r->started || r->spec != NULL) {
        merge_spec_free(spec);
        return err_set(err, DAL_ESTATE, "the result is already being read or merged");
    }
    r->spec = spec; /* before any return: the spec is freed with the result */
    if (columns_ready(r, err) != 0)
        return DAL_ENOMEM;
    if (spec->limit != DAL_MERGE_LIMIT_NONE && !spec->limit_bound)
        return err_set(err, DAL_ESTATE, "the merge spec's LIMIT was not bound "
                       "(merge_node_edits)");
    if (r->ncols > 0 && spec->nhidden >= r->ncols)
        return err_set(err, DAL_EUNSUPPORTED, "cannot merge: the nodes returned %u "
                       "columns, the merge added %zu", r->ncols, spec->nhidden);
    r->nvisible = r->ncols - (r->ncols > 0 ? (unsigned int)spec->nhidden : 0);
    rename_columns(r, spec->names, spec->nnames);
    rename_tail(r, spec->tail_names, spec->ntail);
    return result_run_start(r, err);
}

void result_set_ids(dal_result_t *r, int64_t *ids, size_t n)
{
    free(r->ids);
    r->ids = ids;
    r->nids = n;
}

void result_on_free(dal_result_t *r, void (*fn)(void *ctx), void *ctx)
{
    r->cleanup = fn;
    r->cleanup_ctx = ctx;
}

/* ============================================================== getters */

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
static int ended(const dal_result_t *r, dal_error_t *err)
{
    if (!r->failed)
        return 0;
    if (r->fail == NULL)
        return err_set(err, r->failed, "the result failed earlier (no memory was left to "
                       "keep why)");
    if (err != NULL)
        *err = *r->fail;
    return r->failed;
}

int dal_result_next(dal_result_t *r, dal_error_t *err)
{
    dal_rowsrc_t *s;
    dal_error_t e;
    int rc;

    if (r == NULL)
        return err_set(err, DAL_EINVAL, "result is NULL");
    if (r->done || r->failed)
        return ended(r, err);
    err_clear(&e);
    if (r->spec == NULL && r->nsrcs == 1) {
        /* one source and nothing to merge, as most results: its rows as
         * they come, without the pipeline (fewer functions on the path of
         * every row) */
        r->started = 1;
        s = r->srcs[0];
        rc = s->ops->fetch(s, &e);
        if (rc > 0) {
            result_set_row(r, s->row, s->lengths);
            return rc;
        }
    } else {
        if (!r->started && (rc = result_run_start(r, err)) != 0)
            return rc;
        rc = result_advance(r, &e);
        if (rc > 0)
            return rc;
    }
    result_finish(r, rc, &e);
    if (rc < 0 && err != NULL)
        *err = e;
    return rc;
}

int dal_result_is_null(const dal_result_t *r, size_t col)
{
    return r == NULL || r->row == NULL || col >= r->nvisible || r->row[col] == NULL;
}

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

int64_t dal_result_int(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtoll(t, NULL, 10) : 0;
}

uint64_t dal_result_uint(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtoull(t, NULL, 10) : 0;
}

double dal_result_double(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtod(t, NULL) : 0.0;
}

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

void dal_result_free(dal_result_t *r)
{
    if (r == NULL)
        return;
    result_srcs_close_all(r);
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
    if (r->spec != NULL) { /* else the merge state holds nothing */
        result_run_free(r->run);
        merge_spec_free(r->spec);
    }
    if (r->sql != NULL)
        sql_unref(r->sql);
    if (r->cleanup != NULL)
        r->cleanup(r->cleanup_ctx);
    free(r);
}
