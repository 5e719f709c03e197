/*
 * result.c -- dal_result_t: its columns, its sources (a stored result, a
 * streamed one), the getters; reading several sources as one is
 * result_merge.c's (see result_int.h).
 */
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colset.h"
#include "error.h"
#include "result_int.h"
#include "spare.h"
#include "warnings.h"

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
    /* not cleared whole: the text at the end of r needs no clearing */
    result_block_t *b = spare_take(SPARE_RESULT, sizeof *b);

    if (b == NULL)
        return NULL;
    memset(&b->r, 0, offsetof(dal_result_t, info));
    memset(&b->run, 0, sizeof *b - offsetof(result_block_t, run));
    b->r.run = &b->run;
    b->r.srcs = b->srcs;
    b->r.cap = sizeof b->srcs / sizeof b->srcs[0];
    b->stored.embedded = 1;
    /* dal_query's statements run in autocommit; a session says otherwise */
    b->r.txn_status = SERVER_STATUS_AUTOCOMMIT;
    return &b->r;
}

/* names, cols, meta and the nodes' texts of the columns: one block.  The
 * first source's fields may be freed before the result (a stream closes at
 * its end), so everything the result shows of a column is copied. */
/* Attribute which of column i of fields, which r's colset keeps when
 * fields are its copies: *len bytes, or NULL. */
static const char *column_attr(const dal_result_t *r, const MYSQL_FIELD *fields, unsigned int i,
                               int which, size_t *len)
{
    const char *a;

    if (r->colset != NULL && fields == colset_fields(r->colset)) {
        a = colset_attr(r->colset, i, which);
        *len = a != NULL ? strlen(a) : 0;
        return a;
    }
    return field_attr(&fields[i], which, len);
}

static int copy_columns(dal_result_t *r, const MYSQL_FIELD *fields, unsigned int ncols,
                        dal_error_t *err)
{
    size_t bytes = (size_t)ncols * (sizeof *r->names + sizeof *r->cols + sizeof *r->meta);
    const MYSQL_FIELD *f;
    dal_result_col_t *c;
    unsigned int i;
    char *p;
    size_t len;
    int w;

    for (i = 0; i < ncols; i++) {
        f = &fields[i];
        bytes += field_text_bytes(f);
        for (w = 0; w < FIELD_ATTRS; w++)
            bytes += column_attr(r, fields, i, w, &len) != NULL ? len + 1 : 0;
    }
    /* pointers first: each part stays aligned for its type */
    r->names = malloc(bytes ? bytes : 1);
    if (r->names == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    r->cols = (dal_result_col_t *)(r->names + ncols);
    r->meta = (dal_merge_meta_t *)(r->cols + ncols);
    p = (char *)(r->meta + ncols);
    for (i = 0; i < ncols; i++) {
        f = &fields[i];
        c = &r->cols[i];
        merge_meta_init(&r->meta[i], f);
        r->names[i] = field_text_put(&p, f->name, field_text_len(f->name, f->name_length));
        c->org_name =
            field_text_put(&p, f->org_name, field_text_len(f->org_name, f->org_name_length));
        c->table = field_text_put(&p, f->table, field_text_len(f->table, f->table_length));
        c->org_table =
            field_text_put(&p, f->org_table, field_text_len(f->org_table, f->org_table_length));
        c->db = field_text_put(&p, f->db, field_text_len(f->db, f->db_length));
        for (w = 0; w < FIELD_ATTRS; w++) {
            const char *a = column_attr(r, fields, i, w, &len);
            c->attr[w] = a != NULL ? field_text_put(&p, a, len) : "";
        }
        c->type = (unsigned int)f->type;
        c->charset = f->charsetnr;
        c->flags = f->flags;
        c->decimals = f->decimals;
        c->length = f->length;
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

/* Whether a field of fields[0..n) has an attribute (FIELD_ATTR_*): the
 * library's are not NUL-terminated, so the result copies them. */
static int any_attr(const MYSQL_FIELD *fields, unsigned int n)
{
    size_t len;
    unsigned int i;

    for (i = 0; i < n; i++)
        if (field_attr(&fields[i], FIELD_ATTR_TYPE_NAME, &len) != NULL ||
            field_attr(&fields[i], FIELD_ATTR_FORMAT, &len) != NULL)
            return 1;
    return 0;
}

/* s as r's next source.  The first source's columns are shown from fields
 * as they are when s is the embedded stored source or cols holds them (a
 * reference taken), else copied. */
static int add_source(dal_result_t *r, dal_rowsrc_t *s, const MYSQL_FIELD *fields,
                      unsigned int ncols, colset_t *cols, const char *datasource,
                      dal_error_t *err)
{
    int rc;

    if (datasource == NULL)
        datasource = "?";
    rc = check_source(r, ncols, datasource, err);
    if (rc == 0 && r->nsrcs == 0 &&
        (cols != NULL || (is_embedded(r, s) && !any_attr(fields, ncols)))) {
        r->fields = fields;
        r->ncols = r->nvisible = ncols;
        if (cols != NULL)
            r->colset = colset_ref(cols);
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

int result_add_source(dal_result_t *r, dal_rowsrc_t *s, const MYSQL_FIELD *fields,
                      unsigned int ncols, const char *datasource, dal_error_t *err)
{
    return add_source(r, s, fields, ncols, NULL, datasource, err);
}

int result_add_source_shared(dal_result_t *r, dal_rowsrc_t *s, colset_t *cols,
                             const char *datasource, dal_error_t *err)
{
    return add_source(r, s, colset_fields(cols), colset_count(cols), cols, datasource, err);
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

static const dal_rowsrc_ops_t stored_ops = {stored_fetch, stored_close, NULL};

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

/* The packet after the last row carried them. */
static void stream_ended(stream_src_t *st)
{
    st->base.ended = 1;
    st->base.warnings = mysql_warning_count(&st->conn->mysql);
    st->base.status = st->conn->mysql.server_status;
}

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
    stream_ended(st);
    return 0;
}

/* Rows the result will not read: they come anyway (the protocol cannot
 * cancel a result set), and the warnings and status after them too. */
static void stream_drain(dal_rowsrc_t *s)
{
    stream_src_t *st = (stream_src_t *)s;

    while (mysql_fetch_row(st->res) != NULL)
        ;
    if (mysql_errno(&st->conn->mysql) == 0)
        stream_ended(st);
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

static const dal_rowsrc_ops_t stream_ops = {stream_fetch, stream_close, stream_drain};

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
    const dal_sql_names_t *names;

    /* EXPLAIN SELECT ...: the items are the statement's it explains, not
     * the result's columns */
    if (sql->kind == DAL_SQL_OTHER)
        return 0;
    if ((names = merge_cached_names(sql)) == NULL)
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

/* MariaDB's DECIMAL_MAX_SCALE and FLOATING_POINT_DECIMALS: AVG's decimals
 * stop growing there (31 is also DOUBLE's "not fixed"). */
#define AVG_DECIMAL_SCALE_MAX 38u
#define AVG_DOUBLE_DECIMALS_MAX 31u
/* The default div_precision_increment, which merge_value.c's AVG uses too. */
#define AVG_DECIMALS_ADDED 4u
/* SUM(x) has the precision of x plus DECIMAL_LONGLONG_DIGITS, AVG(x) plus
 * div_precision_increment. */
#define SUM_PRECISION_ADDED 22u

/* The nodes ran AVG(x) as SUM(x): show the column as the server describes
 * AVG(x), from SUM's description.  DECIMAL results (integer and DECIMAL
 * arguments) gain 4 decimals and lose SUM's 22 extra digits of precision;
 * the length is precision + a point when there are decimals + a sign
 * (my_decimal_precision_to_length), so only the point can be new.  A DOUBLE
 * one gains 4 decimals up to "not fixed"; its length, which the server
 * takes from x's (16 for a FLOAT x, where SUM says 23), stays SUM's. */
static void describe_avgs(dal_result_t *r)
{
    const struct dal_merge_run *m = r->run;
    dal_result_col_t *c;
    unsigned int d;
    size_t i;

    for (i = 0; i < m->naggs; i++) {
        if (m->acc[i].agg != DAL_AGG_AVG || m->acol[i] >= r->nvisible)
            continue;
        c = &r->cols[m->acol[i]];
        d = c->decimals;
        /* the server flags AVG binary always, SUM only without GROUP BY */
        c->flags |= BINARY_FLAG;
        if (c->type == MYSQL_TYPE_NEWDECIMAL || c->type == MYSQL_TYPE_DECIMAL) {
            c->decimals = d + AVG_DECIMALS_ADDED < AVG_DECIMAL_SCALE_MAX
                              ? d + AVG_DECIMALS_ADDED : AVG_DECIMAL_SCALE_MAX;
            if (c->length > SUM_PRECISION_ADDED)
                c->length = c->length - SUM_PRECISION_ADDED + AVG_DECIMALS_ADDED +
                            (d == 0 ? 1 : 0);
        } else if (c->type == MYSQL_TYPE_DOUBLE && d < AVG_DOUBLE_DECIMALS_MAX) {
            c->decimals = d + AVG_DECIMALS_ADDED < AVG_DOUBLE_DECIMALS_MAX
                              ? d + AVG_DECIMALS_ADDED : AVG_DOUBLE_DECIMALS_MAX;
        }
    }
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
    if (result_run_start(r, err) != 0)
        return err ? err->code : DAL_EUNSUPPORTED;
    describe_avgs(r);
    return 0;
}

void result_set_ids(dal_result_t *r, int64_t *ids, size_t n)
{
    free(r->ids);
    r->ids = ids;
    r->nids = n;
}

void result_map_table(dal_result_t *r, const char *logical, int32_t pos)
{
    size_t b = strlen(logical) + 1;

    /* the physical name is not written here: every statement on a
     * sharded table maps one, few callers ever ask for it */
    if (r->tabmap_len + sizeof pos + b > sizeof r->tabmap)
        return;
    memcpy(r->tabmap + r->tabmap_len, &pos, sizeof pos);
    memcpy(r->tabmap + r->tabmap_len + sizeof pos, logical, b);
    r->tabmap_len += sizeof pos + b;
}

void result_set_txn_status(dal_result_t *r, unsigned int bits)
{
    r->txn_status = bits;
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

void result_add_end(dal_result_t *res, unsigned int warnings, unsigned int status,
                    uint64_t insert_id)
{
    res->warnings += warnings;
    res->status = status;
    if (res->insert_id == 0)
        res->insert_id = insert_id;
}

void result_note_info(dal_result_t *res, const char *info)
{
    unsigned long long a = 0, b = 0, w;
    int kind;

    if (info == NULL || res->info_kind < 0)
        return;
    if (sscanf(info, "Records: %llu Duplicates: %llu Warnings: %llu", &a, &b, &w) == 3)
        kind = RESULT_INFO_RECORDS;
    else if (sscanf(info, "Rows matched: %llu Changed: %llu Warnings: %llu", &a, &b, &w) == 3)
        kind = RESULT_INFO_MATCHED;
    else
        kind = -1;
    if (res->info_kind != 0 && res->info_kind != kind)
        kind = -1;
    res->info_kind = kind;
    res->info_a += a;
    res->info_b += b;
}

const char *dal_result_info(dal_result_t *r)
{
    if (r == NULL || r->info_kind <= 0)
        return NULL;
    snprintf(r->info, sizeof r->info,
             r->info_kind == RESULT_INFO_RECORDS ? "Records: %llu  Duplicates: %llu  Warnings: %u"
                                                 : "Rows matched: %llu  Changed: %llu  Warnings: %u",
             (unsigned long long)r->info_a, (unsigned long long)r->info_b,
             dal_result_warning_count(r));
    return r->info;
}

uint64_t dal_result_found_rows(const dal_result_t *r)
{
    if (r == NULL)
        return 0;
    return r->info_kind == RESULT_INFO_MATCHED ? r->info_a : r->affected;
}

uint64_t dal_result_insert_id(const dal_result_t *r)
{
    if (r == NULL)
        return 0;
    /* dal made the IDs: the server saw them as given, and reports none */
    return r->nids > 0 ? (uint64_t)r->ids[0] : r->insert_id;
}

/* ------------------------------------------------------------ metadata */

/* The numbers dal.h promises are MariaDB's (a wire server sends them as
 * they are): checked here, where both are in sight. */
#define SAME(a, b) typedef char same_##a[(unsigned)(a) == (unsigned)(b) ? 1 : -1]
SAME(DAL_COLUMN_NEWDECIMAL, MYSQL_TYPE_NEWDECIMAL);
SAME(DAL_COLUMN_TIME2, MYSQL_TYPE_TIME2);
SAME(DAL_COLUMN_JSON, MYSQL_TYPE_JSON);
SAME(DAL_COLUMN_GEOMETRY, MYSQL_TYPE_GEOMETRY);
SAME(DAL_COLUMN_BIT, MYSQL_TYPE_BIT);
SAME(DAL_COLUMN_FLAG_NOT_NULL, NOT_NULL_FLAG);
SAME(DAL_COLUMN_FLAG_MULTIPLE_KEY, MULTIPLE_KEY_FLAG);
SAME(DAL_COLUMN_FLAG_AUTO_INCREMENT, AUTO_INCREMENT_FLAG);
SAME(DAL_COLUMN_FLAG_SET, SET_FLAG);
SAME(DAL_COLUMN_FLAG_ON_UPDATE_NOW, ON_UPDATE_NOW_FLAG);
SAME(DAL_COLUMN_FLAG_PART_KEY, PART_KEY_FLAG);
SAME(DAL_COLUMN_FLAG_NUM, NUM_FLAG);
SAME(DAL_SERVER_STATUS_IN_TRANS, SERVER_STATUS_IN_TRANS);
SAME(DAL_SERVER_STATUS_AUTOCOMMIT, SERVER_STATUS_AUTOCOMMIT);
SAME(DAL_SERVER_QUERY_NO_INDEX_USED, SERVER_QUERY_NO_INDEX_USED);
SAME(DAL_SERVER_STATUS_NO_BACKSLASH_ESCAPES, SERVER_STATUS_NO_BACKSLASH_ESCAPES);
SAME(DAL_SERVER_STATUS_IN_TRANS_READONLY, SERVER_STATUS_IN_TRANS_READONLY);
SAME(DAL_SERVER_SESSION_STATE_CHANGED, SERVER_SESSION_STATE_CHANGED);

/* Whether t is "logical_pos", as physical_name writes it. */
static int names_position(const char *t, const char *logical, int32_t pos)
{
    size_t n = strlen(logical);
    char digits[16];

    snprintf(digits, sizeof digits, "%" PRId32, pos);
    return strncmp(t, logical, n) == 0 && t[n] == '_' && strcmp(t + n + 1, digits) == 0;
}

/* The logical name result_map_table gave physical table t, or t. */
static const char *logical_table(const dal_result_t *r, const char *t)
{
    const char *p = r->tabmap, *end = r->tabmap + r->tabmap_len;
    int32_t pos;

    while (p < end) {
        const char *logical = p + sizeof pos;
        memcpy(&pos, p, sizeof pos);
        if (names_position(t, logical, pos))
            return logical;
        p = logical + strlen(logical) + 1;
    }
    return t;
}

/* Column col of r from the fields it borrows: a text result's, which
 * have no attributes (add_source copies those that have), or the copies in
 * r's colset, which keeps them. */
static void column_from_field(const dal_result_t *r, size_t col, dal_result_col_t *c)
{
    const MYSQL_FIELD *f = &r->fields[col];
    const char *a;
    int w;

    for (w = 0; w < FIELD_ATTRS; w++) {
        a = r->colset != NULL ? colset_attr(r->colset, (unsigned int)col, w) : NULL;
        c->attr[w] = a != NULL ? a : "";
    }
    c->org_name = f->org_name ? f->org_name : "";
    c->table = f->table ? f->table : "";
    c->org_table = f->org_table ? f->org_table : "";
    c->db = f->db ? f->db : "";
    c->type = (unsigned int)f->type;
    c->charset = f->charsetnr;
    c->flags = f->flags;
    c->decimals = f->decimals;
    c->length = f->length;
}

int dal_result_column_info(const dal_result_t *r, size_t col, dal_column_info_t *out)
{
    dal_column_info_t info;
    dal_result_col_t c;
    size_t n;

    if (r == NULL || out == NULL || col >= r->nvisible || out->struct_size < sizeof out->struct_size)
        return DAL_EINVAL;
    if (r->cols != NULL)
        c = r->cols[col];
    else
        column_from_field(r, col, &c);
    memset(&info, 0, sizeof info);
    info.struct_size = out->struct_size;
    info.name = dal_result_column_name(r, col);
    info.org_name = c.org_name;
    info.table = logical_table(r, c.table);
    info.org_table = logical_table(r, c.org_table);
    info.schema = c.db;
    info.type = (dal_column_type_t)c.type;
    info.charset = c.charset;
    info.flags = c.flags;
    info.decimals = c.decimals;
    info.length = c.length;
    info.type_name = c.attr[FIELD_ATTR_TYPE_NAME];
    info.format = c.attr[FIELD_ATTR_FORMAT];
    /* a caller built with a shorter struct gets the fields it knows */
    n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
    memcpy(out, &info, n);
    return 0;
}

unsigned int dal_result_warning_count(const dal_result_t *r)
{
    unsigned int n;
    size_t i;

    if (r == NULL)
        return 0;
    n = r->warnings;
    for (i = 0; i < r->nsrcs; i++)
        if (r->srcs[i] != NULL && r->srcs[i]->ended)
            n += r->srcs[i]->warnings;
    return n;
}

/* dal's own view of the transaction replaces these; the last two are
 * about the backend's protocol, not the client's */
#define STATUS_DAL_OWN (SERVER_STATUS_IN_TRANS | SERVER_STATUS_AUTOCOMMIT | \
                        SERVER_STATUS_IN_TRANS_READONLY | SERVER_SESSION_STATE_CHANGED | \
                        SERVER_MORE_RESULTS_EXIST)

unsigned int dal_result_server_status(const dal_result_t *r)
{
    unsigned int st;
    size_t i;

    if (r == NULL)
        return 0;
    st = r->status;
    /* a stream that ended after status was taken, later in route order */
    for (i = r->status_src; i < r->nsrcs; i++)
        if (r->srcs[i] != NULL && r->srcs[i]->ended)
            st = r->srcs[i]->status;
    return (st & ~(unsigned int)STATUS_DAL_OWN) | r->txn_status;
}

const int64_t *dal_result_generated_ids(const dal_result_t *r, size_t *n)
{
    if (n != NULL)
        *n = r && r->ids ? r->nids : 0;
    return r && r->nids > 0 ? r->ids : NULL;
}

int dal_result_relayed(const dal_result_t *r, uint64_t *rows)
{
    if (rows != NULL)
        *rows = r != NULL ? r->relayed_rows : 0;
    return r != NULL && r->relayed;
}

size_t dal_result_route_count(const dal_result_t *r)
{
    return r ? r->nroutes : 0;
}

dal_result_t *dal_result_next_set(const dal_result_t *r)
{
    return r != NULL ? r->next_set : NULL;
}

dal_result_t *result_new_error_set(const dal_error_t *err)
{
    dal_result_t *r = result_new();

    if (r == NULL)
        return NULL;
    if ((r->fail = malloc(sizeof *r->fail)) == NULL) {
        dal_result_free(r);
        return NULL;
    }
    *r->fail = *err;
    r->failed = err->code;
    r->done = 1;
    r->nroutes = 1;
    r->is_error_set = 1;
    return r;
}

int dal_result_set_error(const dal_result_t *r, dal_error_t *err)
{
    if (r == NULL || !r->is_error_set)
        return 0;
    if (err != NULL)
        *err = *r->fail;
    return r->fail->code;
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
    colset_unref(r->colset);
    if (r->cleanup != NULL)
        r->cleanup(r->cleanup_ctx);
    warnings_free(r->warns);
    if (r->next_set != NULL)
        dal_result_free(r->next_set);
    spare_give(SPARE_RESULT, r);
}

int dal_result_named_tables(const dal_result_t *r)
{
    return r != NULL && r->named_tables;
}

size_t dal_result_warning_rows(const dal_result_t *r)
{
    return r != NULL ? warnings_count(r->warns) : 0;
}

int dal_result_warning_row(const dal_result_t *r, size_t i, const char **level,
                           unsigned int *code, const char **message)
{
    return r != NULL && warnings_get(r->warns, i, level, code, message) == 0 ? 0 : DAL_EINVAL;
}
