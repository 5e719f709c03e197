/*
 * difftest.c -- what the differential tests share.  See difftest.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest.h"
#include "testutil.h"

static uint64_t rng;

void dt_seed(uint64_t seed)
{
    rng = seed;
}

uint64_t dt_rnd64(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

int dt_rnd(int n)
{
    return (int)(dt_rnd64() % (uint64_t)n);
}

int dt_chance(int one_in)
{
    return dt_rnd(one_in) == 0;
}

/* mysql_library_end may be a macro: atexit needs a function. */
static void library_end(void)
{
    mysql_library_end();
}

void dt_start(const char *name, int *ports, unsigned long long *seed)
{
    const char *s = getenv("DAL_TEST_SEED");

    tu_ports(ports, DT_NODES);
    if (s != NULL && *s != '\0')
        *seed = strtoull(s, NULL, 10);
    printf("%s: seed %llu (set DAL_TEST_SEED to replay)\n", name, *seed);
    mysql_library_init(0, NULL, NULL);
    atexit(library_end);
}

MYSQL *dt_direct(int port, const char *db)
{
    MYSQL *m = mysql_init(NULL);

    if (m == NULL || !mysql_real_connect(m, "127.0.0.1", "dal", "dalpass", db, (unsigned)port,
                                         NULL, 0)) {
        fprintf(stderr, "FATAL: connect to 127.0.0.1:%d/%s: %s\n", port, db,
                m ? mysql_error(m) : "no memory");
        exit(1);
    }
    return m;
}

void dt_direct_exec(MYSQL *m, const char *sql)
{
    if (mysql_query(m, sql) != 0) {
        fprintf(stderr, "FATAL: %s: %s\n", sql, mysql_error(m));
        exit(1);
    }
}

static void rows_push(dt_rows_t *r, char **vals, const unsigned long *lens)
{
    char **row = calloc(r->ncols + 1, sizeof *row);
    unsigned int c;

    ck_assert_ptr_nonnull(row);
    for (c = 0; c < r->ncols; c++)
        row[c] = vals[c] ? strndup(vals[c], lens[c]) : NULL;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        ck_assert_ptr_nonnull(r->v);
    }
    r->v[r->n++] = row;
}

void dt_rows_free(dt_rows_t *r)
{
    size_t i;
    unsigned int c;

    for (i = 0; i < r->n; i++) {
        for (c = 0; c < r->ncols; c++)
            free(r->v[i][c]);
        free(r->v[i]);
    }
    for (c = 0; c < r->ncols && c < DT_MAX_COLS; c++)
        free(r->names[c]);
    free(r->v);
    memset(r, 0, sizeof *r);
}

int dt_plain_rows(MYSQL *m, const char *sql, dt_rows_t *out, char *msg, size_t cap)
{
    MYSQL_RES *res;
    MYSQL_ROW row;
    MYSQL_FIELD *f;
    unsigned int c;

    memset(out, 0, sizeof *out);
    if (mysql_query(m, sql) != 0 || (res = mysql_store_result(m)) == NULL) {
        snprintf(msg, cap, "%s", mysql_error(m));
        return -1;
    }
    out->ncols = mysql_num_fields(res);
    ck_assert_uint_le(out->ncols, DT_MAX_COLS);
    f = mysql_fetch_fields(res);
    for (c = 0; c < out->ncols; c++)
        out->names[c] = strdup(f[c].name);
    while ((row = mysql_fetch_row(res)) != NULL)
        rows_push(out, row, mysql_fetch_lengths(res));
    mysql_free_result(res);
    return 0;
}

int dt_dal_rows(dal_t *dal, const char *sql, const dal_value_t *params, size_t np,
                dt_rows_t *out, char *msg, size_t cap)
{
    char *vals[DT_MAX_COLS];
    unsigned long lens[DT_MAX_COLS];
    dal_result_t *r = NULL;
    dal_error_t err;
    size_t len;
    unsigned int c;
    int rc;

    memset(out, 0, sizeof *out);
    rc = dal_query(dal, NULL, sql, np ? params : NULL, np, &r, &err);
    if (rc == 0) {
        out->ncols = (unsigned int)dal_result_column_count(r);
        ck_assert_uint_le(out->ncols, DT_MAX_COLS);
        for (c = 0; c < out->ncols; c++)
            out->names[c] = strdup(dal_result_column_name(r, c));
        while ((rc = dal_result_next(r, &err)) == 1) {
            for (c = 0; c < out->ncols; c++) {
                vals[c] = (char *)dal_result_text(r, c, &len);
                lens[c] = (unsigned long)len;
            }
            rows_push(out, vals, lens);
        }
    }
    dal_result_free(r);
    if (rc < 0)
        snprintf(msg, cap, "%s: %s", dal_strerror(rc), err.message);
    return rc < 0 ? rc : 0;
}

int dt_cell_cmp(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int row_cmp(const void *x, const void *y, void *ctx)
{
    char *const *a = *(char **const *)x, *const *b = *(char **const *)y;
    unsigned int c, n = *(const unsigned int *)ctx;
    int d;

    for (c = 0; c < n; c++)
        if ((d = dt_cell_cmp(a[c], b[c])) != 0)
            return d;
    return 0;
}

void dt_rows_sort(dt_rows_t *r, unsigned int ncols)
{
    if (r->n > 1) /* qsort_r wants a real array even for no rows */
        qsort_r(r->v, r->n, sizeof *r->v, row_cmp, &ncols);
}

void dt_sb_vput(dt_sb_t *b, const char *fmt, va_list ap)
{
    va_list cp;
    int n;

    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

void dt_sb_put(dt_sb_t *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    dt_sb_vput(b, fmt, ap);
    va_end(ap);
}
