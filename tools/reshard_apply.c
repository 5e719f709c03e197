/*
 * reshard_apply.c -- bring a set of primary keys of the new layout up to
 * date with the old one, whatever happened to them and in whatever order.
 *
 * The catch-up takes from each changed row of the binary logs only its key;
 * here every key of a batch is read again from every old table (a row may
 * have moved between old tables), and then in the new layout
 *   - a row that exists is written (REPLACE) to the table the new
 *     configuration's router gives it,
 *   - the key is deleted from every other new table (the row is gone, or
 *     lives elsewhere now).
 * The result depends only on the old layout's rows at the time of the
 * read, so keys may come twice and in any order.
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* " `pk` IN (k1, k2, ...)" for keys[0..n). */
static int put_in(rs_buf_t *q, const rs_t *rs, MYSQL *m, char **keys, size_t n)
{
    size_t i;

    if (rs_puts(q, "`") || rs_puts(q, rs->pk) || rs_puts(q, "` IN ("))
        return -1;
    for (i = 0; i < n; i++)
        if ((i && rs_puts(q, ", ")) ||
            rs_put_value(q, m, keys[i], strlen(keys[i]), rs->pk_numeric))
            return -1;
    return rs_puts(q, ")");
}

/* One found row: its REPLACE values text and its new table. */
typedef struct found {
    char *key;
    long to;
} found_t;

static size_t col_of(const rs_t *rs, const char *name)
{
    size_t i;

    for (i = 0; i < rs->ncols; i++)
        if (strcasecmp(rs->cols[i], name) == 0)
            return i;
    return 0;
}

/* Read keys from old table i; append each row to out[to] (a REPLACE being
 * built) and note it in found. */
static int read_old(rs_t *rs, size_t i, char **keys, size_t n, rs_buf_t *out, size_t *nout,
                    found_t *found, size_t *nfound)
{
    MYSQL *m = rs_conn(rs, &rs->old, i);
    size_t kc = col_of(rs, rs->shard_key), pc = col_of(rs, rs->pk), c;
    rs_buf_t q = {0};
    MYSQL_RES *r = NULL;
    MYSQL_ROW row;
    int rc = m == NULL || rs_puts(&q, "SELECT ") || rs_put_cols(&q, rs) ||
             rs_puts(&q, " FROM `") || rs_puts(&q, rs->old.phys[i].table) ||
             rs_puts(&q, "` WHERE ") || put_in(&q, rs, m, keys, n);

    if (!rc && (mysql_query(m, q.s) != 0 || (r = mysql_store_result(m)) == NULL)) {
        cli_errorf("reshard: catch-up reading %s on %s: %s", rs->old.phys[i].table,
                   rs->old.phys[i].node, mysql_error(m));
        rc = 1;
    }
    rs_buf_free(&q);
    while (!rc && (row = mysql_fetch_row(r)) != NULL) {
        unsigned long *len = mysql_fetch_lengths(r);
        long to = rs->new_.nphys == 1 ? 0 : rs_route(rs, row[kc], row[kc] ? len[kc] : 0);
        MYSQL *w = to >= 0 ? rs_conn(rs, &rs->new_, (size_t)to) : NULL;
        rs_buf_t *b = to >= 0 ? &out[to] : NULL;
        if (w == NULL) {
            rc = 1;
            break;
        }
        rc = (nout[to] == 0 && (rs_puts(b, "REPLACE INTO `") ||
                                rs_puts(b, rs->new_.phys[to].table) || rs_puts(b, "` (") ||
                                rs_put_cols(b, rs) || rs_puts(b, ") VALUES "))) ||
             rs_puts(b, nout[to] ? ", (" : "(");
        for (c = 0; !rc && c < rs->ncols; c++)
            rc = (c && rs_puts(b, ", ")) || rs_put_value(b, w, row[c], row[c] ? len[c] : 0, 0);
        rc = rc || rs_puts(b, ")");
        nout[to]++;
        found[*nfound].key = strdup(row[pc]);
        found[(*nfound)++].to = to;
    }
    if (r != NULL)
        mysql_free_result(r);
    return rc ? -1 : 0;
}

/* Is key k written to new table t by this batch? */
static int lands_in(const found_t *found, size_t nfound, const char *k, long t)
{
    size_t i;

    for (i = 0; i < nfound; i++)
        if (found[i].to == t && strcmp(found[i].key, k) == 0)
            return 1;
    return 0;
}

/* Delete from new table t the keys of the batch that do not land there. */
static int delete_elsewhere(rs_t *rs, size_t t, char **keys, size_t n, const found_t *found,
                            size_t nfound)
{
    MYSQL *m = rs_conn(rs, &rs->new_, t);
    char **gone = calloc(n ? n : 1, sizeof *gone);
    size_t i, ngone = 0;
    rs_buf_t q = {0};
    int rc;

    if (m == NULL || gone == NULL) {
        free(gone);
        return -1;
    }
    for (i = 0; i < n; i++)
        if (!lands_in(found, nfound, keys[i], (long)t))
            gone[ngone++] = keys[i];
    rc = ngone > 0 && (rs_puts(&q, "DELETE FROM `") || rs_puts(&q, rs->new_.phys[t].table) ||
                       rs_puts(&q, "` WHERE ") || put_in(&q, rs, m, gone, ngone) ||
                       rs_exec(m, rs->new_.phys[t].node, q.s));
    rs_buf_free(&q);
    free(gone);
    return rc ? -1 : 0;
}

static int apply_batch(rs_t *rs, char **keys, size_t n)
{
    size_t nn = rs->new_.nphys, i, nfound = 0;
    rs_buf_t *out = calloc(nn, sizeof *out);
    size_t *nout = calloc(nn, sizeof *nout);
    found_t *found = calloc(n * rs->old.nphys + 1, sizeof *found);
    int rc = out && nout && found ? 0 : -1;

    for (i = 0; rc == 0 && i < rs->old.nphys; i++)
        rc = read_old(rs, i, keys, n, out, nout, found, &nfound);
    for (i = 0; rc == 0 && i < nn; i++)
        if (nout[i] > 0)
            rc = rs_exec(rs_conn(rs, &rs->new_, i), rs->new_.phys[i].node, out[i].s);
    for (i = 0; rc == 0 && i < nn; i++)
        rc = delete_elsewhere(rs, i, keys, n, found, nfound);
    for (i = 0; out != NULL && i < nn; i++)
        rs_buf_free(&out[i]);
    for (i = 0; found != NULL && i < nfound; i++)
        free(found[i].key);
    free(out);
    free(nout);
    free(found);
    return rc;
}

static int key_sort(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

#define APPLY_BATCH 200

int rs_apply_keys(rs_t *rs, char **keys, size_t n)
{
    size_t i, m = 0;
    int rc = 0;

    /* each key once */
    if (n > 1) /* qsort's array may not be NULL, as keys is when n is 0 */
        qsort(keys, n, sizeof *keys, key_sort);
    for (i = 0; i < n; i++)
        if (m == 0 || strcmp(keys[m - 1], keys[i]) != 0)
            keys[m++] = keys[i];
        else
            free(keys[i]);
    for (i = 0; rc == 0 && i < m; i += APPLY_BATCH)
        rc = apply_batch(rs, keys + i, m - i < APPLY_BATCH ? m - i : APPLY_BATCH);
    for (i = 0; i < m; i++)
        free(keys[i]);
    return rc != 0 ? -1 : (int)(m > 0x7fffffff ? 0x7fffffff : m);
}
