/*
 * reshard_state.c -- the workflow's state, in a table on a datasource (the
 * old layout's first node unless --state-datasource names another), so
 * `dal reshard status` works from any machine with the configuration and a
 * killed `dal reshard copy` resumes where its last chunk ended.
 *
 * One row per (logical table, source): source "" is the workflow itself
 * (its phase and the new configuration's path), "NODE.TABLE" one physical
 * table of the old layout (the last primary key copied, the rows copied,
 * the estimate, and the node's GTID position when the copy began).
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>

#define STATE_TABLE "dal_reshard_state"

int rs_state_init(rs_t *rs)
{
    return rs_exec(rs->state, "state table on datasource",
                   "CREATE TABLE IF NOT EXISTS " STATE_TABLE " ("
                   " tbl VARCHAR(64) NOT NULL,"
                   " src VARCHAR(300) NOT NULL,"
                   " phase VARCHAR(32) NOT NULL,"
                   " target VARCHAR(512) NULL,"
                   " last_key VARBINARY(3072) NULL,"
                   " rows_copied BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                   " rows_total BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                   " gtid TEXT NULL,"
                   " started DOUBLE NOT NULL DEFAULT 0,"
                   " updated DOUBLE NOT NULL DEFAULT 0,"
                   " lag_ms BIGINT NULL,"
                   " detail VARCHAR(512) NULL,"
                   " PRIMARY KEY (tbl, src)) ENGINE=InnoDB") == 0 &&
                   /* a state table made before the column was */
                   rs_exec(rs->state, "state table on datasource",
                           "ALTER TABLE " STATE_TABLE
                           " ADD COLUMN IF NOT EXISTS detail VARCHAR(512) NULL") == 0
               ? CLI_OK
               : CLI_FAIL;
}

void rs_state_free(rs_state_t *st)
{
    free(st->last_key);
    free(st->gtid);
    st->last_key = st->gtid = NULL;
}

static void copy_str(char *dst, size_t size, const char *s)
{
    snprintf(dst, size, "%s", s ? s : "");
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void from_row(MYSQL_ROW row, rs_state_t *st)
{
    memset(st, 0, sizeof *st);
    copy_str(st->src, sizeof st->src, row[0]);
    copy_str(st->phase, sizeof st->phase, row[1]);
    copy_str(st->target, sizeof st->target, row[2]);
    st->last_key = dup_or_null(row[3]);
    st->rows_copied = row[4] ? strtoull(row[4], NULL, 10) : 0;
    st->rows_total = row[5] ? strtoull(row[5], NULL, 10) : 0;
    st->gtid = dup_or_null(row[6]);
    st->started = row[7] ? strtod(row[7], NULL) : 0;
    st->updated = row[8] ? strtod(row[8], NULL) : 0;
    st->lag_ms = row[9] ? strtoll(row[9], NULL, 10) : -1;
    copy_str(st->detail, sizeof st->detail, row[10]);
}

static int query_rows(rs_t *rs, const char *src, void (*fn)(void *, const rs_state_t *),
                      void *user)
{
    rs_buf_t q = {0};
    MYSQL_RES *r;
    MYSQL_ROW row;
    int rc = 0;

    if (rs_puts(&q, "SELECT src, phase, target, last_key, rows_copied, rows_total, gtid,"
                    " started, updated, lag_ms, detail FROM " STATE_TABLE " WHERE tbl = ") ||
        rs_put_value(&q, rs->state, rs->table, strlen(rs->table), 0) ||
        (src != NULL && (rs_puts(&q, " AND src = ") ||
                         rs_put_value(&q, rs->state, src, strlen(src), 0))) ||
        rs_puts(&q, " ORDER BY src"))
        return -1;
    if (mysql_query(rs->state, q.s) != 0 || (r = mysql_store_result(rs->state)) == NULL) {
        cli_errorf("reshard: state on datasource %s: %s", rs->state_ds, mysql_error(rs->state));
        rs_buf_free(&q);
        return -1;
    }
    rs_buf_free(&q);
    while ((row = mysql_fetch_row(r)) != NULL) {
        rs_state_t st;
        from_row(row, &st);
        fn(user, &st);
        rs_state_free(&st);
        rc++;
    }
    mysql_free_result(r);
    return rc;
}

static void keep_one(void *user, const rs_state_t *st)
{
    rs_state_t *out = user;

    *out = *st;
    out->last_key = dup_or_null(st->last_key);
    out->gtid = dup_or_null(st->gtid);
}

int rs_state_get(rs_t *rs, const char *src, rs_state_t *st)
{
    int n;

    memset(st, 0, sizeof *st);
    st->lag_ms = -1;
    n = query_rows(rs, src, keep_one, st);
    return n < 0 ? -1 : n > 0;
}

int rs_state_each(rs_t *rs, void (*fn)(void *user, const rs_state_t *st), void *user)
{
    return query_rows(rs, NULL, fn, user) < 0 ? -1 : 0;
}

int rs_state_put(rs_t *rs, const rs_state_t *st)
{
    rs_buf_t q = {0};
    char num[128];
    int rc;
    MYSQL *m = rs->state;

    snprintf(num, sizeof num, ", %llu, %llu, ", (unsigned long long)st->rows_copied,
             (unsigned long long)st->rows_total);
    rc = rs_puts(&q, "REPLACE INTO " STATE_TABLE " (tbl, src, phase, target, last_key,"
                     " rows_copied, rows_total, gtid, started, updated, lag_ms) VALUES (") ||
         rs_put_value(&q, m, rs->table, strlen(rs->table), 0) || rs_puts(&q, ", ") ||
         rs_put_value(&q, m, st->src, strlen(st->src), 0) || rs_puts(&q, ", ") ||
         rs_put_value(&q, m, st->phase, strlen(st->phase), 0) || rs_puts(&q, ", ") ||
         rs_put_value(&q, m, st->target[0] ? st->target : NULL, strlen(st->target), 0) ||
         rs_puts(&q, ", ") ||
         rs_put_value(&q, m, st->last_key, st->last_key ? strlen(st->last_key) : 0, 0) ||
         rs_puts(&q, num) ||
         rs_put_value(&q, m, st->gtid, st->gtid ? strlen(st->gtid) : 0, 0);
    if (st->lag_ms >= 0)
        snprintf(num, sizeof num, ", %.3f, %.3f, %lld)", st->started, st->updated,
                 (long long)st->lag_ms);
    else
        snprintf(num, sizeof num, ", %.3f, %.3f, NULL)", st->started, st->updated);
    rc = rc || rs_puts(&q, num) || rs_exec(m, "saving the state", q.s);
    rs_buf_free(&q);
    return rc ? -1 : 0;
}

int rs_state_detail(rs_t *rs, const char *detail)
{
    rs_buf_t q = {0};
    int rc;

    rc = rs_puts(&q, "UPDATE " STATE_TABLE " SET detail = ") ||
         rs_put_value(&q, rs->state, detail, detail ? strlen(detail) : 0, 0) ||
         rs_puts(&q, " WHERE src = '' AND tbl = ") ||
         rs_put_value(&q, rs->state, rs->table, strlen(rs->table), 0) ||
         rs_exec(rs->state, "saving the state", q.s);
    rs_buf_free(&q);
    return rc ? -1 : 0;
}

int rs_state_clear(rs_t *rs)
{
    rs_buf_t q = {0};
    int rc;

    rc = rs_puts(&q, "DELETE FROM " STATE_TABLE " WHERE tbl = ") ||
         rs_put_value(&q, rs->state, rs->table, strlen(rs->table), 0) ||
         rs_exec(rs->state, "clearing the state", q.s);
    rs_buf_free(&q);
    return rc ? -1 : 0;
}

int rs_state_others(rs_t *rs)
{
    rs_buf_t q = {0};
    char *n = NULL;
    int rc;

    rc = rs_puts(&q, "SELECT COUNT(*) FROM " STATE_TABLE " WHERE tbl <> ") ||
         rs_put_value(&q, rs->state, rs->table, strlen(rs->table), 0) ||
         rs_scalar(rs->state, "reading the state", q.s, &n);
    rs_buf_free(&q);
    rc = rc ? -1 : n != NULL && atoi(n) > 0;
    free(n);
    return rc;
}

/* ----------------------------------------------------------------- status */

typedef struct status_out {
    json_t j;
    int json;
    rs_state_t flow;
    int have_flow;
    uint64_t copied, total;
    double first, last;
    int64_t lag_ms;     /* the largest catch-up lag; -1: no catch-up yet */
    size_t n;
} status_out_t;

/* A source's JSON object: its name and phase, then (json_source_end) its
 * GTID position. */
static void json_source_begin(status_out_t *o, const rs_state_t *st)
{
    json_object_begin(&o->j);
    json_key(&o->j, "source");
    json_string(&o->j, st->src);
    json_key(&o->j, "phase");
    json_string(&o->j, st->phase);
}

static void json_source_end(status_out_t *o, const rs_state_t *st)
{
    json_key(&o->j, "gtid");
    json_string(&o->j, st->gtid);
    json_object_end(&o->j);
}

/* A catch-up row ("binlog:NODE"): its keys applied and lag. */
static void show_binlog(status_out_t *o, const rs_state_t *st)
{
    if (st->lag_ms > o->lag_ms)
        o->lag_ms = st->lag_ms;
    if (o->json) {
        json_source_begin(o, st);
        json_key(&o->j, "keys_applied");
        json_uint(&o->j, st->rows_copied);
        json_key(&o->j, "lag_ms");
        if (st->lag_ms >= 0)
            json_int(&o->j, st->lag_ms);
        else
            json_null(&o->j);
        json_source_end(o, st);
    } else
        printf("  %-40s %-8s %10llu keys applied, lag %lld ms, gtid %s\n", st->src, st->phase,
               (unsigned long long)st->rows_copied, (long long)st->lag_ms,
               st->gtid ? st->gtid : "-");
}

static void show_source(void *user, const rs_state_t *st)
{
    status_out_t *o = user;
    double secs = st->updated - st->started;
    double rate = secs > 0 ? (double)st->rows_copied / secs : 0;

    if (st->src[0] == '\0')
        return;   /* the workflow's row: read before (rs_status) */
    if (strncmp(st->src, "binlog:", 7) == 0 || strncmp(st->src, "reverse:", 8) == 0) {
        show_binlog(o, st);
        return;
    }
    o->copied += st->rows_copied;
    o->total += st->rows_total;
    if (st->started > 0 && (o->first == 0 || st->started < o->first))
        o->first = st->started;
    if (st->updated > o->last)
        o->last = st->updated;
    if (o->json) {
        json_source_begin(o, st);
        json_key(&o->j, "rows_copied");
        json_uint(&o->j, st->rows_copied);
        json_key(&o->j, "rows_estimated");
        json_uint(&o->j, st->rows_total);
        json_key(&o->j, "rows_per_second");
        json_int(&o->j, (int64_t)rate);
        json_source_end(o, st);
    } else
        printf("  %-40s %-8s %10llu / %-10llu %8.0f rows/s  gtid %s\n", st->src, st->phase,
               (unsigned long long)st->rows_copied, (unsigned long long)st->rows_total,
               rate, st->gtid ? st->gtid : "-");
    o->n++;
}

/* A progress bar of width 30 for done out of total. */
static void bar(uint64_t done, uint64_t total)
{
    int i, fill = total ? (int)(30.0 * (double)(done > total ? total : done) / (double)total) : 0;

    putchar('[');
    for (i = 0; i < 30; i++)
        putchar(i < fill ? '#' : '.');
    putchar(']');
}

static void show_totals(status_out_t *o)
{
    double secs = o->last - o->first;
    double rate = secs > 0 ? (double)o->copied / secs : 0;
    double eta = rate > 0 && o->total > o->copied ? (double)(o->total - o->copied) / rate : 0;
    const char *phase = o->have_flow ? o->flow.phase : "none";

    if (o->json) {
        json_array_end(&o->j);
        json_key(&o->j, "phase");
        json_string(&o->j, phase);
        json_key(&o->j, "detail");
        json_string(&o->j, o->have_flow && o->flow.detail[0] ? o->flow.detail : NULL);
        json_key(&o->j, "target");
        json_string(&o->j, o->have_flow && o->flow.target[0] ? o->flow.target : NULL);
        json_key(&o->j, "rows_copied");
        json_uint(&o->j, o->copied);
        json_key(&o->j, "rows_estimated");
        json_uint(&o->j, o->total);
        json_key(&o->j, "rows_per_second");
        json_int(&o->j, (int64_t)rate);
        json_key(&o->j, "eta_seconds");
        json_int(&o->j, (int64_t)eta);
        json_key(&o->j, "lag_ms");
        if (o->lag_ms >= 0)
            json_int(&o->j, o->lag_ms);
        else
            json_null(&o->j);   /* no catch-up round yet */
        json_object_end(&o->j);
        printf("\n");
        return;
    }
    printf("  ");
    bar(o->copied, o->total);
    printf(" %llu / %llu rows, %.0f rows/s, ETA %.0f s, lag ",
           (unsigned long long)o->copied, (unsigned long long)o->total, rate, eta);
    if (o->lag_ms >= 0)
        printf("%.3f s\n", (double)o->lag_ms / 1000.0);
    else
        printf("-\n");
}

int rs_status(rs_t *rs)
{
    status_out_t o;
    int rc;

    memset(&o, 0, sizeof o);
    o.json = rs->cli->json;
    o.lag_ms = -1;
    if (rs_state_init(rs) != CLI_OK)
        return CLI_FAIL;
    if (o.json) {
        json_init(&o.j, stdout);
        json_object_begin(&o.j);
        json_key(&o.j, "table");
        json_string(&o.j, rs->table);
        json_key(&o.j, "sources");
        json_array_begin(&o.j);
    }
    rc = rs_state_get(rs, "", &o.flow);
    if (rc < 0)
        return CLI_FAIL;
    o.have_flow = rc;
    if (!o.json) {
        printf("%s: phase %s", rs->table, o.have_flow ? o.flow.phase : "none");
        if (o.have_flow && o.flow.detail[0])
            printf(" (%s)", o.flow.detail);
        if (o.have_flow && o.flow.target[0])
            printf(", to %s", o.flow.target);
        printf("\n");
    }
    rc = rs_state_each(rs, show_source, &o);
    if (rc == 0)
        show_totals(&o);
    rs_state_free(&o.flow);
    return rc == 0 ? CLI_OK : CLI_FAIL;
}
