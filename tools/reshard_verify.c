/*
 * reshard_verify.c -- `dal reshard verify`: are the rows of the new layout
 * those of the old one?
 *
 * The primary key space is cut into chunks (lo, hi]: hi is the smallest of
 * the old tables' chunk-th keys after lo, so a chunk holds at most
 * chunk-size rows of any one old table.  For each chunk every old and new
 * table gives COUNT(*), BIT_XOR and SUM of a per-row CRC32 over all
 * columns; the sums over each layout must agree.  When they differ, the
 * chunk's keys and row checksums are read from both layouts and compared
 * row by row: a row missing from the new layout, one only there (or there
 * twice), and one whose columns differ are each reported with its key and
 * new table.
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>

typedef struct sums {
    uint64_t count, xor_, sum;
} sums_t;

/* One row of a differing chunk: its key, checksum and place. */
typedef struct vrow {
    char *key;
    char *crc;
    size_t where;        /* index into the layout's phys */
} vrow_t;

typedef struct verifier {
    rs_t *rs;
    json_t j;
    int json;
    uint64_t chunks, rows_old, rows_new, diffs;
} verifier_t;

/* " WHERE pk > lo AND pk <= hi" (either bound NULL: open). */
static int put_range(rs_buf_t *q, const rs_t *rs, MYSQL *m, const char *lo, const char *hi)
{
    int rc = 0;

    if (lo != NULL)
        rc = rs_puts(q, " WHERE `") || rs_puts(q, rs->pk) || rs_puts(q, "` > ") ||
             rs_put_value(q, m, lo, strlen(lo), rs->pk_numeric);
    if (hi != NULL)
        rc = rc || rs_puts(q, lo ? " AND `" : " WHERE `") || rs_puts(q, rs->pk) ||
             rs_puts(q, "` <= ") || rs_put_value(q, m, hi, strlen(hi), rs->pk_numeric);
    return rc;
}

/* Keys compare as the server orders them only for integers; for the chunk
 * end any key after lo will do, so text compares bytewise. */
static int key_cmp(const rs_t *rs, const char *a, const char *b)
{
    if (rs->pk_numeric) {
        long long x = strtoll(a, NULL, 10), y = strtoll(b, NULL, 10);
        return (x > y) - (x < y);
    }
    return strcmp(a, b);
}

/* Run q (built unless failed is set; freed here) on m, the node of l's
 * table i: its result (owned), or NULL after reporting. */
static MYSQL_RES *run_on(const rs_layout_t *l, size_t i, MYSQL *m, rs_buf_t *q, int failed)
{
    MYSQL_RES *r = NULL;

    if (!failed && (mysql_query(m, q->s) != 0 || (r = mysql_store_result(m)) == NULL))
        cli_errorf("reshard: verify %s on %s: %s", l->phys[i].table, l->phys[i].node,
                   mysql_error(m));
    rs_buf_free(q);
    return r;
}

/* The end of the chunk after lo: owned, or NULL for "to the end"; *failed on error. */
static char *chunk_end(verifier_t *v, const char *lo, int *failed)
{
    rs_t *rs = v->rs;
    char *best = NULL, *k;
    size_t i;

    for (i = 0; i < rs->old.nphys; i++) {
        rs_buf_t q = {0};
        MYSQL *m = rs_conn(rs, &rs->old, i);
        char tail[80];
        int rc;
        snprintf(tail, sizeof tail, "` LIMIT 1 OFFSET %llu", (unsigned long long)rs->chunk - 1);
        rc = m == NULL || rs_puts(&q, "SELECT `") || rs_puts(&q, rs->pk) ||
             rs_puts(&q, "` FROM `") || rs_puts(&q, rs->old.phys[i].table) || rs_puts(&q, "`") ||
             put_range(&q, rs, m, lo, NULL) || rs_puts(&q, " ORDER BY `") ||
             rs_puts(&q, rs->pk) || rs_puts(&q, tail) ||
             rs_scalar(m, rs->old.phys[i].node, q.s, &k);
        rs_buf_free(&q);
        if (rc) {
            *failed = 1;
            free(best);
            return NULL;
        }
        if (k != NULL && (best == NULL || key_cmp(rs, k, best) < 0)) {
            free(best);
            best = k;
        } else
            free(k);
    }
    return best;
}

static int add_sums(rs_t *rs, rs_layout_t *l, const char *lo, const char *hi, sums_t *s)
{
    size_t i;

    memset(s, 0, sizeof *s);
    for (i = 0; i < l->nphys; i++) {
        rs_buf_t q = {0};
        MYSQL *m = rs_conn(rs, l, i);
        MYSQL_RES *r;
        MYSQL_ROW row;
        int rc = m == NULL || rs_puts(&q, "SELECT COUNT(*), COALESCE(BIT_XOR(c), 0),"
                                          " COALESCE(SUM(c), 0) FROM (SELECT ") ||
                 rs_put_crc(&q, rs) || rs_puts(&q, " AS c FROM `") ||
                 rs_puts(&q, l->phys[i].table) || rs_puts(&q, "`") ||
                 put_range(&q, rs, m, lo, hi) || rs_puts(&q, ") AS t");
        if ((r = run_on(l, i, m, &q, rc)) == NULL)
            return -1;
        row = mysql_fetch_row(r);
        s->count += strtoull(row[0], NULL, 10);
        s->xor_ ^= strtoull(row[1], NULL, 10);
        s->sum += strtoull(row[2], NULL, 10);
        mysql_free_result(r);
    }
    return 0;
}

/* -------------------------------------------------------------- row diff */

static int read_rows(rs_t *rs, rs_layout_t *l, const char *lo, const char *hi,
                     vrow_t **rows, size_t *n)
{
    size_t i;

    *rows = NULL;
    *n = 0;
    for (i = 0; i < l->nphys; i++) {
        rs_buf_t q = {0};
        MYSQL *m = rs_conn(rs, l, i);
        MYSQL_RES *r;
        MYSQL_ROW row;
        int rc = m == NULL || rs_puts(&q, "SELECT `") || rs_puts(&q, rs->pk) ||
                 rs_puts(&q, "`, ") || rs_put_crc(&q, rs) || rs_puts(&q, " FROM `") ||
                 rs_puts(&q, l->phys[i].table) || rs_puts(&q, "`") ||
                 put_range(&q, rs, m, lo, hi);
        if ((r = run_on(l, i, m, &q, rc)) == NULL)
            return -1;
        *rows = realloc(*rows, (*n + mysql_num_rows(r) + 1) * sizeof **rows);
        while (*rows != NULL && (row = mysql_fetch_row(r)) != NULL) {
            (*rows)[*n].key = strdup(row[0]);
            (*rows)[*n].crc = strdup(row[1] ? row[1] : "");
            (*rows)[(*n)++].where = i;
        }
        mysql_free_result(r);
        if (*rows == NULL)
            return -1;
    }
    return 0;
}

static const rs_t *sort_rs;

static int vrow_cmp(const void *a, const void *b)
{
    return key_cmp(sort_rs, ((const vrow_t *)a)->key, ((const vrow_t *)b)->key);
}

static void free_rows(vrow_t *rows, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(rows[i].key);
        free(rows[i].crc);
    }
    free(rows);
}

static void report(verifier_t *v, const char *kind, const char *key, const rs_phys_t *p)
{
    v->diffs++;
    if (v->json) {
        json_object_begin(&v->j);
        json_key(&v->j, "kind");
        json_string(&v->j, kind);
        json_key(&v->j, "key");
        json_string(&v->j, key);
        json_key(&v->j, "datasource");
        json_string(&v->j, p ? p->node : NULL);
        json_key(&v->j, "table");
        json_string(&v->j, p ? p->table : NULL);
        json_object_end(&v->j);
    } else if (p != NULL)
        printf("%s %s = %s in %s.%s\n", kind, v->rs->pk, key, p->node, p->table);
    else
        printf("%s %s = %s\n", kind, v->rs->pk, key);
}

static void compare_rows(verifier_t *v, vrow_t *o, size_t no, vrow_t *n, size_t nn)
{
    rs_t *rs = v->rs;
    size_t i = 0, k = 0;

    sort_rs = rs;
    if (no > 1) /* either array is NULL when empty, which qsort may not take */
        qsort(o, no, sizeof *o, vrow_cmp);
    if (nn > 1)
        qsort(n, nn, sizeof *n, vrow_cmp);
    while (i < no || k < nn) {
        int c = i == no ? 1 : k == nn ? -1 : key_cmp(rs, o[i].key, n[k].key);
        if (c < 0)
            report(v, "missing", o[i++].key, NULL);
        else if (c > 0)
            report(v, k > 0 && key_cmp(rs, n[k - 1].key, n[k].key) == 0 ? "duplicate" : "extra",
                   n[k].key, &rs->new_.phys[n[k].where]), k++;
        else {
            if (strcmp(o[i].crc, n[k].crc) != 0)
                report(v, "differs", n[k].key, &rs->new_.phys[n[k].where]);
            i++, k++;
        }
    }
}

static int diff_chunk(verifier_t *v, const char *lo, const char *hi)
{
    vrow_t *o = NULL, *n = NULL;
    size_t no = 0, nn = 0;
    int rc = read_rows(v->rs, &v->rs->old, lo, hi, &o, &no) != 0 ||
             read_rows(v->rs, &v->rs->new_, lo, hi, &n, &nn) != 0;

    if (!rc)
        compare_rows(v, o, no, n, nn);
    free_rows(o, no);
    free_rows(n, nn);
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ walk */

static int walk(verifier_t *v)
{
    char *lo = NULL, *hi;
    int failed = 0;

    do {
        sums_t so, sn;
        hi = chunk_end(v, lo, &failed);
        if (failed || add_sums(v->rs, &v->rs->old, lo, hi, &so) != 0 ||
            add_sums(v->rs, &v->rs->new_, lo, hi, &sn) != 0) {
            failed = 1;
            break;
        }
        v->chunks++;
        v->rows_old += so.count;
        v->rows_new += sn.count;
        if ((so.count != sn.count || so.xor_ != sn.xor_ || so.sum != sn.sum) &&
            diff_chunk(v, lo, hi) != 0) {
            failed = 1;
            break;
        }
        free(lo);
        lo = hi;
    } while (hi != NULL);
    free(lo);
    if (failed && hi != lo)
        free(hi);
    return failed ? -1 : 0;
}

int rs_verify(rs_t *rs)
{
    verifier_t v;
    int rc;

    if (rs_check(rs) != CLI_OK)
        return CLI_FAIL;
    memset(&v, 0, sizeof v);
    v.rs = rs;
    v.json = rs->cli->json;
    json_init(&v.j, stdout);
    if (v.json) {
        json_object_begin(&v.j);
        json_key(&v.j, "differences");
        json_array_begin(&v.j);
    }
    rc = walk(&v);
    if (rc != 0)
        return CLI_FAIL;
    if (v.json) {
        json_array_end(&v.j);
        json_key(&v.j, "chunks");
        json_uint(&v.j, v.chunks);
        json_key(&v.j, "rows_old");
        json_uint(&v.j, v.rows_old);
        json_key(&v.j, "rows_new");
        json_uint(&v.j, v.rows_new);
        json_key(&v.j, "ok");
        json_bool(&v.j, v.diffs == 0);
        json_object_end(&v.j);
        printf("\n");
    } else
        printf("verify %s: %llu rows old, %llu rows new, %llu chunks, %llu differences\n",
               rs->table, (unsigned long long)v.rows_old, (unsigned long long)v.rows_new,
               (unsigned long long)v.chunks, (unsigned long long)v.diffs);
    return v.diffs == 0 ? CLI_OK : CLI_FAIL;
}
