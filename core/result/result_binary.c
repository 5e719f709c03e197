/*
 * result_binary.c -- the rows of a server-side prepared statement as a
 * result source, and the reader kept with each cached handle.  See
 * result_binary.h.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "colset.h"
#include "error.h"
#include "result_binary.h"
#include "spare.h"

/* Each column's text is fetched into a buffer of the column's display
 * length within these bounds; a longer value is fetched again into a
 * buffer of its size, which the column keeps for later rows and
 * executions up to GROWN_KEEP bytes (a larger one goes with the result
 * that needed it, so one large value does not stay with the handle). */
#define COL_BUF_MIN 32
#define COL_BUF_MAX 1024
#define GROWN_KEEP 16384
/* Row pointers, and bytes of row storage, inside the source itself: a
 * point select's rows fit, so its source is one allocation. */
#define ROWS_INLINE 4
#define ROOM_INLINE 256
/* Later row storage comes in chunks of at least this many bytes. */
#define CHUNK_MIN 4096

/* One row: the values, their lengths, then the text. */
typedef struct binrow {
    MYSQL_ROW vals;
    unsigned long *lens;
} binrow_t;

/* Row storage beyond the source's own room. */
typedef struct chunk {
    struct chunk *next;
    size_t cap;
    char data[];
} chunk_t;

typedef struct binary_src {
    dal_rowsrc_t base;
    binrow_t **rows;         /* rows_room, or owned once it outgrew it */
    size_t nrows, cap, next;
    char *free_at;           /* where the next row goes ... */
    size_t free_len;         /* ... and the bytes left there */
    chunk_t *chunks;         /* owned list */
    binrow_t *rows_room[ROWS_INLINE];
    _Alignas(max_align_t) char room[ROOM_INLINE];
} binary_src_t;

/* What fetching needs per column. */
typedef struct fetch_col {
    char *buf;               /* slot, or owned (grown) */
    unsigned long cap;       /* bytes of buf, room for the NUL included */
    char *slot;              /* the column's first buffer, inside the reader's block */
    unsigned long slot_cap;
    unsigned long len;
    my_bool null, error;
    int native;              /* NATIVE_*: how the column is fetched */
    enum enum_field_types ntype; /* a NATIVE column's type, as bound ... */
    int64_t num;             /* ... and where its value goes: written out into buf */
} fetch_col_t;

/* Integer columns are fetched as numbers of their own width and written
 * out by dal: the library's conversion of one to text costs about 350
 * instructions, more than the rest of a point select's reading, and a
 * number of another width goes through its generic conversion.  ZEROFILL
 * columns, whose padding follows the display width, stay with the
 * library, as do YEAR (zero is "0000") and every other type. */
enum { NATIVE_NO, NATIVE_SIGNED, NATIVE_UNSIGNED };

struct binary_reader {
    MYSQL_STMT *st;          /* borrowed */
    unsigned int ncols;
    MYSQL_BIND *bind;        /* owned, ncols */
    fetch_col_t *col;        /* owned, ncols */
    char *block;             /* owned: the first buffers of every column */
    size_t block_len;
    int bound;               /* bind is st's result binding */
    int stripped;            /* st's description has no texts left (strip_handle) */
    colset_t *cols;          /* a reference: the last reply's description, or NULL */
};

/* ------------------------------------------------------------- source */

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
    chunk_t *c, *next;

    (void)ok;
    for (c = b->chunks; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    if (b->rows != b->rows_room)
        free(b->rows);
    spare_give(SPARE_BINARY_SRC, b);
}

static const dal_rowsrc_ops_t binary_ops = {binary_fetch, binary_close, NULL};

static binary_src_t *src_new(void)
{
    binary_src_t *b = spare_take(SPARE_BINARY_SRC, sizeof *b);

    if (b == NULL)
        return NULL;
    memset(&b->base, 0, sizeof b->base);
    b->base.ops = &binary_ops;
    b->rows = b->rows_room;
    b->nrows = b->next = 0;
    b->cap = ROWS_INLINE;
    b->free_at = b->room;
    b->free_len = sizeof b->room;
    b->chunks = NULL;
    return b;
}

/* bytes of row storage (a multiple of the alignment), NULL without memory. */
static void *src_alloc(binary_src_t *b, size_t bytes)
{
    void *p;

    if (bytes > b->free_len) {
        size_t cap = bytes > CHUNK_MIN ? bytes : CHUNK_MIN;
        chunk_t *c = malloc(sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->next = b->chunks;
        c->cap = cap;
        b->chunks = c;
        b->free_at = c->data;
        b->free_len = cap;
    }
    p = b->free_at;
    b->free_at += bytes;
    b->free_len -= bytes;
    return p;
}

static int src_push(binary_src_t *b, binrow_t *row)
{
    if (b->nrows == b->cap) {
        size_t ncap = b->cap * 2;
        binrow_t **nv = malloc(ncap * sizeof *nv);
        if (nv == NULL)
            return -1;
        memcpy(nv, b->rows, b->nrows * sizeof *nv);
        if (b->rows != b->rows_room)
            free(b->rows);
        b->rows = nv;
        b->cap = ncap;
    }
    b->rows[b->nrows++] = row;
    return 0;
}

/* ------------------------------------------------------------- reader */

binary_reader_t *binary_reader_new(MYSQL_STMT *st)
{
    binary_reader_t *rd = calloc(1, sizeof *rd);

    if (rd != NULL)
        rd->st = st;
    return rd;
}

static void release_grown(fetch_col_t *c)
{
    if (c->buf != c->slot)
        free(c->buf);
    c->buf = c->slot;
    c->cap = c->slot_cap;
}

/* Everything kept for the columns, so the next result starts afresh. */
static void reader_clear(binary_reader_t *rd)
{
    unsigned int i;

    for (i = 0; i < rd->ncols; i++)
        release_grown(&rd->col[i]);
    free(rd->bind);
    free(rd->col);
    free(rd->block);
    colset_unref(rd->cols);
    rd->bind = NULL;
    rd->col = NULL;
    rd->block = NULL;
    rd->block_len = 0;
    rd->cols = NULL;
    rd->ncols = 0;
    rd->bound = 0;
}

void binary_reader_free(binary_reader_t *rd)
{
    if (rd == NULL)
        return;
    reader_clear(rd);
    free(rd);
}

static unsigned long first_cap(const MYSQL_FIELD *f)
{
    unsigned long n = f->length + 1;

    return n < COL_BUF_MIN ? COL_BUF_MIN : n > COL_BUF_MAX ? COL_BUF_MAX : n;
}

static int native_kind(const MYSQL_FIELD *f)
{
    switch (f->type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
        if (f->flags & ZEROFILL_FLAG)
            return NATIVE_NO;
        return (f->flags & UNSIGNED_FLAG) ? NATIVE_UNSIGNED : NATIVE_SIGNED;
    default:
        return NATIVE_NO;
    }
}

static void bind_col(binary_reader_t *rd, unsigned int i)
{
    MYSQL_BIND *b = &rd->bind[i];
    fetch_col_t *c = &rd->col[i];

    memset(b, 0, sizeof *b);
    b->length = &c->len;
    b->is_null = &c->null;
    b->error = &c->error;
    if (c->native != NATIVE_NO) {
        b->buffer_type = c->ntype;
        b->buffer = &c->num;
        b->buffer_length = sizeof c->num;
        b->is_unsigned = c->native == NATIVE_UNSIGNED;
        return;
    }
    b->buffer_type = MYSQL_TYPE_STRING;
    b->buffer = c->buf;
    b->buffer_length = c->cap - 1; /* the NUL is ours to write */
}

/* Each column's way of fetching, for the description fields, and its
 * binding. */
static void plan_cols(binary_reader_t *rd, const MYSQL_FIELD *fields)
{
    unsigned int i;

    for (i = 0; i < rd->ncols; i++) {
        rd->col[i].native = native_kind(&fields[i]);
        rd->col[i].ntype = fields[i].type == MYSQL_TYPE_INT24 ? MYSQL_TYPE_LONG : fields[i].type;
        bind_col(rd, i);
    }
}

/* The text of NATIVE column c's value, as the server writes it, into its
 * buffer (at least COL_BUF_MIN bytes: room for 20 digits and a sign). */
static void write_number(fetch_col_t *c)
{
    char digits[DEC_DIGITS_MAX + 1], *p = digits + sizeof digits;
    int sign = c->native == NATIVE_SIGNED, neg;
    int64_t n = c->num;
    uint64_t v;

    /* the library wrote the column's width of c->num (little or big end
     * first, as the machine's integers are) */
    switch (c->ntype) {
    case MYSQL_TYPE_TINY: {
        uint8_t x;
        memcpy(&x, &c->num, sizeof x);
        n = sign ? (int8_t)x : (int64_t)x;
        break;
    }
    case MYSQL_TYPE_SHORT: {
        uint16_t x;
        memcpy(&x, &c->num, sizeof x);
        n = sign ? (int16_t)x : (int64_t)x;
        break;
    }
    case MYSQL_TYPE_LONG: {
        uint32_t x;
        memcpy(&x, &c->num, sizeof x);
        n = sign ? (int32_t)x : (int64_t)x;
        break;
    }
    default:
        break;
    }
    neg = sign && n < 0;
    /* negated in unsigned arithmetic: INT64_MIN has no positive twin */
    v = neg ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    p = dec_digits(v, p);
    if (neg)
        *--p = '-';
    c->len = (unsigned long)(digits + sizeof digits - p);
    memcpy(c->buf, p, c->len);
}

/* Buffers for n columns described by fields.  -1 without memory. */
static int reader_alloc(binary_reader_t *rd, const MYSQL_FIELD *fields, unsigned int n)
{
    unsigned int i;
    size_t total = 0;
    char *p;

    for (i = 0; i < n; i++)
        total += first_cap(&fields[i]);
    rd->bind = malloc((n ? n : 1) * sizeof *rd->bind);
    rd->col = malloc((n ? n : 1) * sizeof *rd->col);
    rd->block = malloc(total ? total : 1);
    if (rd->bind == NULL || rd->col == NULL || rd->block == NULL) {
        reader_clear(rd);
        return -1;
    }
    rd->ncols = n;
    rd->block_len = total;
    for (i = 0, p = rd->block; i < n; i++) {
        fetch_col_t *c = &rd->col[i];
        c->buf = c->slot = p;
        c->cap = c->slot_cap = first_cap(&fields[i]);
        p += c->cap;
    }
    plan_cols(rd, fields);
    return 0;
}

/* Packets of a reply without a column description, beyond its rows: the
 * command's own sequence number, the column count, the end of the rows,
 * and the sequence number the library counts on to the next packet. */
#define REPLY_PACKETS 4

/* Whether the server sent a column description with the last execution's
 * reply (1), did not (0), or it cannot be told (-1).
 *
 * The library puts a description on the connection after every execution:
 * the server's when it sent one, else a copy of the handle's.  But when a
 * reply brings a new description (the server prepared the statement again
 * after DDL) the library copies only the types and flags into the handle,
 * not the names, and a server that caches descriptions sends a changed
 * one once: from the next execution on, the library's copy shows a
 * renamed column under its old name.  So the description is taken from
 * the connection only when the server sent it, which the reply's packet
 * count says: one packet per column (and an EOF packet unless the
 * connection deprecated it) more than the rows need.  A row of 16 MB or
 * more takes several packets and leaves it unknown. */
static int reply_described(MYSQL_STMT *st, unsigned int n, int pending)
{
    const MYSQL *m = st->mysql;
    unsigned long long rows = pending ? 0 : mysql_stmt_num_rows(st), seen;

    if (m == NULL || m->net.compress || rows > (unsigned long long)UINT_MAX)
        return -1;
    /* with the rows still on the wire, the end of the rows is not counted */
    seen = m->net.pkt_nr + (pending ? 1 : 0);
    if (seen == rows + REPLY_PACKETS)
        return 0;
    if (seen == rows + REPLY_PACKETS + n || seen == rows + REPLY_PACKETS + n + 1)
        return 1;
    return -1;
}

/* The library's copy of the description of a handle strip_handle has
 * stripped: it names nothing, and it means the reply brought none. */
static int stripped_copy(const binary_reader_t *rd, const MYSQL_FIELD *fields)
{
    return rd->stripped && fields[0].catalog == NULL;
}

/* When the server sends no description with a reply (it caches them), the
 * library copies the handle's onto the connection, every text of every
 * column, on every execution: about 500 instructions a column, a third of
 * a point select's execution.  dal never reads that copy (colset keeps
 * the names), so once the reader has its colset the handle keeps only
 * what fetching uses (types, lengths, flags) and the copy has no text to
 * make.  A description the server sends after DDL still arrives whole. */
static void strip_handle(binary_reader_t *rd)
{
    MYSQL_FIELD *f = rd->st->fields;
    unsigned int i;

    for (i = 0; f != NULL && i < rd->st->field_count; i++) {
        f[i].catalog = f[i].db = f[i].table = f[i].org_table = NULL;
        f[i].name = f[i].org_name = f[i].def = NULL;
    }
    rd->stripped = 1;
}

/* rd ready for a result of n columns: buffers, their binding and the
 * description; pending: its rows are not read yet.  0; DAL_ENOMEM;
 * DAL_ESERVER when binding failed; BINARY_STALE when no description can
 * name the columns. */
static int reader_ready(binary_reader_t *rd, unsigned int n, int pending)
{
    MYSQL *m = rd->st->mysql;
    const MYSQL_FIELD *fields = rd->st->fields, *attrs;
    int described = reply_described(rd->st, n, pending), copy;

    if (m != NULL && m->fields != NULL && m->field_count == n)
        fields = m->fields;
    if (fields == NULL)
        return DAL_ENOMEM;
    if ((copy = stripped_copy(rd, fields)) != 0)
        described = 0;
    if (rd->bind != NULL && rd->ncols != n)
        reader_clear(rd);
    if (rd->bind == NULL && reader_alloc(rd, fields, n) != 0)
        return DAL_ENOMEM;
    /* the first result takes the connection's (the handle's own, or one
     * just sent); later ones only a description the server sent, or one
     * that may have been (-1) and differs */
    if (rd->cols == NULL && copy)
        return BINARY_STALE; /* the names are gone with the old columns */
    /* the extended type information from the handle's description: the
     * copy libmariadb makes on the connection when an execution sends one
     * has the attributes' entries but not their values */
    attrs = rd->st->fields != NULL && rd->st->field_count == n ? rd->st->fields : fields;
    if (rd->cols == NULL || (described != 0 && fields != rd->st->fields &&
                             !colset_same(rd->cols, fields, attrs, n))) {
        colset_t *c = colset_new(fields, attrs, n);
        if (c == NULL)
            return DAL_ENOMEM;
        colset_unref(rd->cols);
        rd->cols = c;
        plan_cols(rd, fields);
        rd->bound = 0; /* the types may have changed: bound again, as on a first use */
    }
    if (!rd->bound) {
        if (mysql_stmt_bind_result(rd->st, rd->bind) != 0)
            return DAL_ESERVER;
        rd->bound = 1;
    }
    if (!rd->stripped)
        strip_handle(rd);
    return 0;
}

/* Column i's value did not fit: a buffer of its size, and the value
 * fetched again into it.  -1: no memory, or the fetch failed.  The caller
 * binds the new buffers once every column is refetched: binding resets
 * what the library knows of the current row. */
static int refetch(binary_reader_t *rd, unsigned int i)
{
    fetch_col_t *c = &rd->col[i];
    char *nb = malloc(c->len + 1);

    if (nb == NULL)
        return -1;
    if (c->buf != c->slot)
        free(c->buf);
    c->buf = nb;
    c->cap = c->len + 1;
    bind_col(rd, i);
    return mysql_stmt_fetch_column(rd->st, &rd->bind[i], i, 0) != 0 ? -1 : 0;
}

/* After a result: grown buffers too large to keep go back to their slots
 * (bound again at the next result). */
static void reader_trim(binary_reader_t *rd)
{
    unsigned int i;

    for (i = 0; i < rd->ncols; i++) {
        fetch_col_t *c = &rd->col[i];
        if (c->buf != c->slot && c->cap > GROWN_KEEP) {
            release_grown(c);
            bind_col(rd, i);
            rd->bound = 0;
        }
    }
}

/* The fetched row, copied into b's storage. */
static binrow_t *copy_row(const binary_reader_t *rd, binary_src_t *b)
{
    size_t bytes = sizeof(binrow_t) + rd->ncols * (sizeof(char *) + sizeof(unsigned long));
    binrow_t *row;
    unsigned int i;
    char *p;

    for (i = 0; i < rd->ncols; i++)
        bytes += rd->col[i].null ? 0 : rd->col[i].len + 1;
    bytes = (bytes + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
    if ((row = src_alloc(b, bytes)) == NULL)
        return NULL;
    row->vals = (MYSQL_ROW)(row + 1);
    row->lens = (unsigned long *)(row->vals + rd->ncols);
    p = (char *)(row->lens + rd->ncols);
    for (i = 0; i < rd->ncols; i++) {
        const fetch_col_t *c = &rd->col[i];
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

/* Every row of rd's statement into b: 0, DAL_ENOMEM or DAL_ESERVER. */
static int read_rows(binary_reader_t *rd, binary_src_t *b)
{
    binrow_t *row;
    unsigned int i;
    int rc;

    while ((rc = mysql_stmt_fetch(rd->st)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
        /* from the first refetch until the binding below, the library's
         * binding may name a buffer refetch freed */
        if (rc == MYSQL_DATA_TRUNCATED)
            rd->bound = 0;
        for (i = 0; rc == MYSQL_DATA_TRUNCATED && i < rd->ncols; i++)
            if (!rd->col[i].null && rd->col[i].len >= rd->col[i].cap && refetch(rd, i) != 0)
                return mysql_stmt_errno(rd->st) ? DAL_ESERVER : DAL_ENOMEM;
        /* the next rows go to the bigger buffers too */
        if (rc == MYSQL_DATA_TRUNCATED) {
            if (mysql_stmt_bind_result(rd->st, rd->bind) != 0)
                return DAL_ESERVER;
            rd->bound = 1;
        }
        for (i = 0; i < rd->ncols; i++)
            if (rd->col[i].native != NATIVE_NO && !rd->col[i].null)
                write_number(&rd->col[i]);
        if ((row = copy_row(rd, b)) == NULL || src_push(b, row) != 0)
            return DAL_ENOMEM;
    }
    return rc == MYSQL_NO_DATA ? 0 : DAL_ESERVER;
}

int result_add_binary(dal_result_t *r, binary_reader_t *rd, const char *datasource,
                      dal_error_t *err)
{
    binary_src_t *b = src_new();
    int rc = DAL_ENOMEM;

    if (b == NULL)
        goto done;
    /* received whole first: the library reads the warnings after the last
     * row only so (fetched one by one, they show as 0) */
    if (mysql_stmt_store_result(rd->st) != 0) {
        rc = DAL_ESERVER;
        goto done;
    }
    rc = reader_ready(rd, mysql_stmt_field_count(rd->st), 0);
    if (rc == DAL_ESERVER && mysql_stmt_errno(rd->st) == 0)
        rc = DAL_ENOMEM;
    if (rc == 0)
        rc = read_rows(rd, b);
    if (rc == 0) {
        /* the library's copy of the rows goes now, not at the handle's
         * next run: it would stay with the cached handle until then */
        mysql_stmt_free_result(rd->st);
        /* the source is the result's from here, also on failure */
        rc = result_add_source_shared(r, &b->base, rd->cols, datasource, err);
        b = NULL;
    }
done:
    /* rows left unread (memory ran out, or nothing names their columns)
     * are read and dropped, so the connection stays in step (a server's
     * error ends the rows itself, and the caller still reads it from the
     * statement) */
    if (rc == DAL_ENOMEM || rc == BINARY_STALE)
        mysql_stmt_free_result(rd->st);
    if (b != NULL)
        binary_close(&b->base, 0);
    if (rc == DAL_ENOMEM)
        err_set(err, DAL_ENOMEM, "out of memory");
    reader_trim(rd);
    return rc;
}

const colset_t *binary_reader_columns(binary_reader_t *rd, int *rc)
{
    *rc = reader_ready(rd, mysql_stmt_field_count(rd->st), 1);
    if (*rc == DAL_ESERVER && mysql_stmt_errno(rd->st) == 0)
        *rc = DAL_ENOMEM;
    return *rc == 0 ? rd->cols : NULL;
}
