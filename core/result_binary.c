/*
 * result_binary.c -- the rows of a server-side prepared statement as a
 * result source.  See result_binary.h.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "result_binary.h"
#include "small.h"

/* Each column's text is fetched into a buffer of the column's display
 * length within these bounds; a longer value is fetched again into a
 * buffer of its size, which the column then keeps. */
#define COL_BUF_MIN 32
#define COL_BUF_MAX 1024
/* Columns whose fetch state fits on the stack, and bytes of their first
 * buffers. */
#define COLS_INLINE 16
#define BUF_INLINE 4096

/* One row in one allocation: the values, their lengths, then the text. */
typedef struct binrow {
    MYSQL_ROW vals;
    unsigned long *lens;
} binrow_t;

typedef struct binary_src {
    dal_rowsrc_t base;
    binrow_t **rows;         /* owned, each row owned */
    size_t nrows, cap, next;
} binary_src_t;

/* What fetching needs per column. */
typedef struct fetch_col {
    char *buf;               /* owned if own, else inside the shared block */
    unsigned long cap;       /* bytes of buf, room for the NUL included */
    unsigned long len;
    my_bool null, error;
    int own;
} fetch_col_t;

typedef struct fetcher {
    MYSQL_STMT *st;
    unsigned int ncols;
    MYSQL_BIND *bind;        /* ncols */
    fetch_col_t *col;        /* ncols */
    char *block;             /* the first buffers of every column: the caller's room or
                                owned (small_alloc) */
} fetcher_t;

static int binary_fetch(dal_rowsrc_t *s, dal_error_t *err)
{
    binary_src_t *b = (binary_src_t *)s;
    binrow_t *row;

    (void)err;
    if (b->next == b->nrows)
        return 0;
    row = b->rows[b->next++];
    s->row = row->vals;
    s->lengths = row->lens;
    return 1;
}

static void binary_close(dal_rowsrc_t *s, int ok)
{
    binary_src_t *b = (binary_src_t *)s;
    size_t i;

    (void)ok;
    for (i = 0; i < b->nrows; i++)
        free(b->rows[i]);
    free(b->rows);
    free(b);
}

static const dal_rowsrc_ops_t binary_ops = {binary_fetch, binary_close, NULL};

static unsigned long first_cap(const MYSQL_FIELD *f)
{
    unsigned long n = f->length + 1;

    return n < COL_BUF_MIN ? COL_BUF_MIN : n > COL_BUF_MAX ? COL_BUF_MAX : n;
}

static void bind_col(fetcher_t *f, unsigned int i)
{
    MYSQL_BIND *b = &f->bind[i];
    fetch_col_t *c = &f->col[i];

    memset(b, 0, sizeof *b);
    b->buffer_type = MYSQL_TYPE_STRING;
    b->buffer = c->buf;
    b->buffer_length = c->cap - 1; /* the NUL is ours to write */
    b->length = &c->len;
    b->is_null = &c->null;
    b->error = &c->error;
}

/* room: BUF_INLINE bytes of the caller's for the first buffers. */
static int fetcher_init(fetcher_t *f, MYSQL_STMT *st, const MYSQL_FIELD *fields, char *room)
{
    size_t total = 0;
    unsigned int i;
    char *p;

    f->st = st;
    for (i = 0; i < f->ncols; i++)
        total += first_cap(&fields[i]);
    if ((f->block = small_alloc(room, BUF_INLINE, total, 1, 0)) == NULL)
        return -1;
    for (i = 0, p = f->block; i < f->ncols; i++) {
        f->col[i].buf = p;
        f->col[i].cap = first_cap(&fields[i]);
        f->col[i].own = 0;
        p += f->col[i].cap;
        bind_col(f, i);
    }
    return mysql_stmt_bind_result(st, f->bind) ? -1 : 0;
}

static void fetcher_free(fetcher_t *f, char *room)
{
    unsigned int i;

    for (i = 0; i < f->ncols; i++)
        if (f->col[i].own)
            free(f->col[i].buf);
    small_free(f->block, room);
}

/* Column i's value did not fit: a buffer of its size, and the value
 * fetched again into it.  -1: no memory, or the fetch failed.  The caller
 * binds the new buffers once every column is refetched: binding resets
 * what the library knows of the current row. */
static int refetch(fetcher_t *f, unsigned int i)
{
    fetch_col_t *c = &f->col[i];
    char *nb = malloc(c->len + 1);

    if (nb == NULL)
        return -1;
    if (c->own)
        free(c->buf);
    c->buf = nb;
    c->cap = c->len + 1;
    c->own = 1;
    bind_col(f, i);
    return mysql_stmt_fetch_column(f->st, &f->bind[i], i, 0) != 0 ? -1 : 0;
}

/* The fetched row, copied into one allocation. */
static binrow_t *copy_row(const fetcher_t *f)
{
    size_t bytes = sizeof(binrow_t) + f->ncols * (sizeof(char *) + sizeof(unsigned long));
    binrow_t *row;
    unsigned int i;
    char *p;

    for (i = 0; i < f->ncols; i++)
        bytes += f->col[i].null ? 0 : f->col[i].len + 1;
    if ((row = malloc(bytes)) == NULL)
        return NULL;
    row->vals = (MYSQL_ROW)(row + 1);
    row->lens = (unsigned long *)(row->vals + f->ncols);
    p = (char *)(row->lens + f->ncols);
    for (i = 0; i < f->ncols; i++) {
        const fetch_col_t *c = &f->col[i];
        row->lens[i] = c->null ? 0 : c->len;
        row->vals[i] = c->null ? NULL : p;
        if (c->null)
            continue;
        memcpy(p, c->buf, c->len);
        p[c->len] = '\0';
        p += c->len + 1;
    }
    return row;
}

static int push_row(binary_src_t *b, binrow_t *row)
{
    if (b->nrows == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 4;
        binrow_t **nv = realloc(b->rows, ncap * sizeof *nv);
        if (nv == NULL)
            return -1;
        b->rows = nv;
        b->cap = ncap;
    }
    b->rows[b->nrows++] = row;
    return 0;
}

/* Every row of f's statement into b: 0, DAL_ENOMEM or DAL_ESERVER. */
static int read_rows(fetcher_t *f, binary_src_t *b)
{
    binrow_t *row;
    unsigned int i;
    int rc;

    while ((rc = mysql_stmt_fetch(f->st)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
        for (i = 0; rc == MYSQL_DATA_TRUNCATED && i < f->ncols; i++)
            if (!f->col[i].null && f->col[i].len >= f->col[i].cap && refetch(f, i) != 0)
                return mysql_stmt_errno(f->st) ? DAL_ESERVER : DAL_ENOMEM;
        /* the next rows go to the bigger buffers too */
        if (rc == MYSQL_DATA_TRUNCATED && mysql_stmt_bind_result(f->st, f->bind) != 0)
            return DAL_ESERVER;
        if ((row = copy_row(f)) == NULL || push_row(b, row) != 0) {
            free(row);
            return DAL_ENOMEM;
        }
    }
    return rc == MYSQL_NO_DATA ? 0 : DAL_ESERVER;
}

/* The columns as this execution's reply described them.  The library
 * keeps the description from the prepare in the handle and, when a reply
 * brings another one (the server prepared the statement again after
 * DDL), copies only the types and flags into it, not the names: a column
 * renamed, or a table dropped and made again, would show its old name.
 * The reply's own description is on the connection until the next
 * command; the handle's serves when there is none. */
static const MYSQL_FIELD *reply_fields(MYSQL_STMT *st, unsigned int n)
{
    MYSQL *m = st->mysql;

    if (m != NULL && m->fields != NULL && m->field_count == n)
        return m->fields;
    return st->fields;
}

int result_add_binary(dal_result_t *r, MYSQL_STMT *st, const char *datasource,
                      dal_error_t *err)
{
    char buf_room[BUF_INLINE];
    MYSQL_BIND bind_room[COLS_INLINE];
    fetch_col_t col_room[COLS_INLINE];
    fetcher_t f = {.ncols = mysql_stmt_field_count(st)};
    binary_src_t *b = calloc(1, sizeof *b);
    int rc = DAL_ENOMEM;

    f.bind = small_alloc(bind_room, COLS_INLINE, f.ncols, sizeof *f.bind, 0);
    f.col = small_alloc(col_room, COLS_INLINE, f.ncols, sizeof *f.col, 0);
    if (st->fields == NULL || b == NULL || f.bind == NULL || f.col == NULL)
        goto done;
    b->base.ops = &binary_ops;
    /* received whole first: the library reads the warnings after the last
     * row only so (fetched one by one, they show as 0) */
    if (mysql_stmt_store_result(st) != 0) {
        rc = DAL_ESERVER;
        goto done;
    }
    if (fetcher_init(&f, st, reply_fields(st, f.ncols), buf_room) != 0) {
        rc = mysql_stmt_errno(st) ? DAL_ESERVER : DAL_ENOMEM;
        goto done;
    }
    rc = read_rows(&f, b);
    if (rc == 0) {
        /* the library's copy of the rows goes now, not at the handle's
         * next run: it would stay with the cached handle until then */
        mysql_stmt_free_result(st);
        /* the source is the result's from here, also on failure */
        rc = result_add_source(r, &b->base, reply_fields(st, f.ncols), f.ncols, datasource,
                               err);
        b = NULL;
    }
done:
    /* rows left unread when memory ran out are read and dropped, so the
     * connection stays in step (a server's error ends the rows itself,
     * and the caller still reads it from st) */
    if (rc == DAL_ENOMEM)
        mysql_stmt_free_result(st);
    if (rc != 0 && b != NULL)
        binary_close(&b->base, 0);
    if (rc == DAL_ENOMEM)
        err_set(err, DAL_ENOMEM, "out of memory");
    if (f.block != NULL)
        fetcher_free(&f, buf_room);
    small_free(f.bind, bind_room);
    small_free(f.col, col_room);
    return rc;
}
