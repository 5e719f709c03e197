/*
 * reshard_copy.c -- `dal reshard copy` and `dal reshard cleanup`.
 *
 * copy creates the new layout's physical tables with the definition of the
 * old layout's first one (SHOW CREATE TABLE, renamed), then copies each old
 * table in primary-key order, one chunk per SELECT (a single statement: one
 * consistent read), each row into the table the new configuration's router
 * gives its shard key value, with REPLACE: copying a chunk twice changes
 * nothing, so a copy killed between writing a chunk and saving its end
 * resumes from the saved key.  Before its first chunk each source's GTID
 * position (@@gtid_binlog_pos of its node) is saved with its state: the
 * point from which its binary log holds every change the copy may miss.
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static size_t col_index(const rs_t *rs, const char *name)
{
    size_t i;

    for (i = 0; i < rs->ncols; i++)
        if (strcasecmp(rs->cols[i], name) == 0)
            return i;
    return 0;
}

/* SHOW CREATE TABLE of the old layout's first table, renamed to new table i. */
static int create_one(rs_t *rs, size_t i, const char *def)
{
    const char *old = rs->old.phys[0].table;
    char quoted[140];
    const char *at;
    rs_buf_t q = {0};
    MYSQL *m = rs_conn(rs, &rs->new_, i);
    int rc;

    snprintf(quoted, sizeof quoted, "`%s`", old);
    at = strstr(def, quoted);
    if (m == NULL || at == NULL || strncmp(def, "CREATE TABLE ", 13) != 0) {
        if (m != NULL)
            cli_errorf("reshard: unexpected definition of %s: %.60s", old, def);
        return CLI_FAIL;
    }
    rc = rs_puts(&q, "CREATE TABLE IF NOT EXISTS `") || rs_puts(&q, rs->new_.phys[i].table) ||
         rs_puts(&q, "`") || rs_puts(&q, at + strlen(quoted)) ||
         rs_exec(m, rs->new_.phys[i].node, q.s);
    rs_buf_free(&q);
    return rc ? CLI_FAIL : CLI_OK;
}

static int create_tables(rs_t *rs)
{
    MYSQL *m = rs_conn(rs, &rs->old, 0);
    MYSQL_RES *r;
    MYSQL_ROW row;
    char sql[200];
    char *def;
    size_t i;
    int rc = CLI_OK;

    if (m == NULL)
        return CLI_FAIL;
    snprintf(sql, sizeof sql, "SHOW CREATE TABLE `%s`", rs->old.phys[0].table);
    if (mysql_query(m, sql) != 0 || (r = mysql_store_result(m)) == NULL ||
        (row = mysql_fetch_row(r)) == NULL) {
        cli_errorf("reshard: definition of %s on %s: %s", rs->old.phys[0].table,
                   rs->old.phys[0].node, mysql_error(m));
        return CLI_FAIL;
    }
    def = strdup(row[1]);
    mysql_free_result(r);
    for (i = 0; def != NULL && i < rs->new_.nphys && rc == CLI_OK; i++)
        rc = create_one(rs, i, def);
    free(def);
    return def == NULL ? CLI_FAIL : rc;
}

/* ------------------------------------------------------------------ rows */

typedef struct copier {
    rs_t *rs;
    rs_buf_t *out;        /* one REPLACE per new table */
    size_t *rows;         /* rows in each */
    size_t key_col, pk_col;
    uint64_t copied_run;  /* rows copied by this run, for the throttle */
    double run_started;
} copier_t;

static int add_row(copier_t *c, MYSQL_ROW row, const unsigned long *len, size_t k)
{
    rs_t *rs = c->rs;
    rs_buf_t *b = &c->out[k];
    MYSQL *m = rs_conn(rs, &rs->new_, k);
    size_t i;

    if (m == NULL)
        return -1;
    if (c->rows[k] == 0 &&
        (rs_puts(b, "REPLACE INTO `") || rs_puts(b, rs->new_.phys[k].table) ||
         rs_puts(b, "` (") || rs_put_cols(b, rs) || rs_puts(b, ") VALUES ")))
        return -1;
    if (rs_puts(b, c->rows[k] ? ", (" : "("))
        return -1;
    for (i = 0; i < rs->ncols; i++)
        if ((i && rs_puts(b, ", ")) || rs_put_value(b, m, row[i], row[i] ? len[i] : 0, 0))
            return -1;
    c->rows[k]++;
    return rs_puts(b, ")");
}

static int flush(copier_t *c)
{
    rs_t *rs = c->rs;
    size_t k;

    for (k = 0; k < rs->new_.nphys; k++) {
        if (c->rows[k] == 0)
            continue;
        if (rs_exec(rs_conn(rs, &rs->new_, k), rs->new_.phys[k].node, c->out[k].s) != 0)
            return -1;
        c->rows[k] = 0;
        c->out[k].len = 0;
    }
    return 0;
}

/* --max-rows-per-second: sleep until this run's rows fit the rate. */
static void throttle(const copier_t *c)
{
    double ahead;
    struct timespec ts;

    if (c->rs->max_rps == 0)
        return;
    ahead = (double)c->copied_run / (double)c->rs->max_rps - (rs_now() - c->run_started);
    if (ahead <= 0)
        return;
    ts.tv_sec = (time_t)ahead;
    ts.tv_nsec = (long)((ahead - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* SELECT the next chunk of old table i after st->last_key. */
static MYSQL_RES *read_chunk(copier_t *c, size_t i, const rs_state_t *st)
{
    rs_t *rs = c->rs;
    MYSQL *m = rs_conn(rs, &rs->old, i);
    rs_buf_t q = {0};
    char lim[40];
    MYSQL_RES *r = NULL;

    snprintf(lim, sizeof lim, " LIMIT %llu", (unsigned long long)rs->chunk);
    if (!rs_puts(&q, "SELECT ") && !rs_put_cols(&q, rs) && !rs_puts(&q, " FROM `") &&
        !rs_puts(&q, rs->old.phys[i].table) && !rs_puts(&q, "`") &&
        !(st->last_key && (rs_puts(&q, " WHERE `") || rs_puts(&q, rs->pk) ||
                           rs_puts(&q, "` > ") ||
                           rs_put_value(&q, m, st->last_key, strlen(st->last_key),
                                        rs->pk_numeric))) &&
        !rs_puts(&q, " ORDER BY `") && !rs_puts(&q, rs->pk) && !rs_puts(&q, "`") &&
        !rs_puts(&q, lim)) {
        if (mysql_query(m, q.s) != 0 || (r = mysql_store_result(m)) == NULL)
            cli_errorf("reshard: reading %s on %s: %s", rs->old.phys[i].table,
                       rs->old.phys[i].node, mysql_error(m));
    }
    rs_buf_free(&q);
    return r;
}

/* One chunk: 1 copied, 0 the table is done, -1 failed. */
static int copy_chunk(copier_t *c, size_t i, rs_state_t *st)
{
    MYSQL_RES *r;
    MYSQL_ROW row;
    uint64_t n = 0;
    char *last = NULL;

    if (rs_pause_if_busy(c->rs) != 0 || (r = read_chunk(c, i, st)) == NULL)
        return -1;
    while ((row = mysql_fetch_row(r)) != NULL) {
        unsigned long *len = mysql_fetch_lengths(r);
        const char *kv = row[c->key_col];
        long k = c->rs->new_.nphys == 1 ? 0 : rs_route(c->rs, kv, kv ? len[c->key_col] : 0);
        if (k < 0 || add_row(c, row, len, (size_t)k) != 0) {
            mysql_free_result(r);
            return -1;
        }
        free(last);
        last = strdup(row[c->pk_col]);
        n++;
    }
    mysql_free_result(r);
    if (n == 0)
        return 0;
    if (last == NULL || flush(c) != 0) {
        free(last);
        return -1;
    }
    free(st->last_key);
    st->last_key = last;
    st->rows_copied += n;
    st->updated = rs_now();
    c->copied_run += n;
    if (rs_state_put(c->rs, st) != 0)
        return -1;
    throttle(c);
    return n < c->rs->chunk ? 0 : 1;
}

/* The state of old table i, created (with its GTID position and estimate)
 * on its first copy. */
static int source_state(rs_t *rs, size_t i, rs_state_t *st)
{
    MYSQL *m = rs_conn(rs, &rs->old, i);
    char sql[200], *n = NULL;
    char src[300];
    int found;

    snprintf(src, sizeof src, "%s.%s", rs->old.phys[i].node, rs->old.phys[i].table);
    if (m == NULL || (found = rs_state_get(rs, src, st)) < 0)
        return -1;
    if (found)
        return 0;
    snprintf(st->src, sizeof st->src, "%s", src);
    snprintf(st->phase, sizeof st->phase, "copying");
    if (rs_scalar(m, src, "SELECT @@gtid_binlog_pos", &st->gtid) != 0)
        return -1;
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM `%s`", rs->old.phys[i].table);
    if (rs_scalar(m, src, sql, &n) != 0)
        return -1;
    st->rows_total = n ? strtoull(n, NULL, 10) : 0;
    free(n);
    st->started = st->updated = rs_now();
    return rs_state_put(rs, st);
}

static int copy_source(copier_t *c, size_t i)
{
    rs_state_t st;
    int rc;

    if (source_state(c->rs, i, &st) != 0) {
        rs_state_free(&st);
        return CLI_FAIL;
    }
    while (strcmp(st.phase, "copied") != 0 && (rc = copy_chunk(c, i, &st)) != 0)
        if (rc < 0) {
            rs_state_free(&st);
            return CLI_FAIL;
        }
    if (strcmp(st.phase, "copied") != 0) {
        snprintf(st.phase, sizeof st.phase, "copied");
        st.updated = rs_now();
        rc = rs_state_put(c->rs, &st);
    } else
        rc = 0;
    if (!c->rs->cli->json && rc == 0)
        printf("copied %s: %llu rows\n", st.src, (unsigned long long)st.rows_copied);
    rs_state_free(&st);
    return rc == 0 ? CLI_OK : CLI_FAIL;
}

static int set_phase(rs_t *rs, const char *phase)
{
    rs_state_t flow;
    int rc;

    if (rs_state_get(rs, "", &flow) < 0)
        return CLI_FAIL;
    if (flow.started == 0)
        flow.started = rs_now();
    snprintf(flow.phase, sizeof flow.phase, "%s", phase);
    snprintf(flow.target, sizeof flow.target, "%s", rs->new_.path);
    flow.updated = rs_now();
    rc = rs_state_put(rs, &flow);
    rs_state_free(&flow);
    return rc == 0 ? CLI_OK : CLI_FAIL;
}

/* One copy per table at a time: a lock on the state's server, held by
 * this process's connection (released by the server when it dies). */
int rs_lock(rs_t *rs)
{
    rs_buf_t q = {0};
    char name[200], *got = NULL;
    int rc;

    snprintf(name, sizeof name, "dal_reshard.%s", rs->table);
    rc = rs_puts(&q, "SELECT GET_LOCK(") || rs_put_value(&q, rs->state, name, strlen(name), 0) ||
         rs_puts(&q, ", 0)") || rs_scalar(rs->state, "taking the reshard lock", q.s, &got);
    rs_buf_free(&q);
    if (!rc && (got == NULL || strcmp(got, "1") != 0)) {
        cli_errorf("reshard: another `dal reshard` is working on %s (lock %s on datasource %s)",
                   rs->table, name, rs->state_ds);
        rc = 1;
    }
    free(got);
    return rc ? CLI_FAIL : CLI_OK;
}

int rs_copy(rs_t *rs)
{
    copier_t c;
    size_t i;
    double unused;
    int rc;

    /* the acknowledgement table from the start: the instances have long
     * registered in it when the switch comes */
    if (rs_check(rs) != CLI_OK || rs_lock(rs) != CLI_OK || rs_state_init(rs) != CLI_OK ||
        rs_ack_init(rs, &unused) != CLI_OK || set_phase(rs, "copying") != CLI_OK ||
        create_tables(rs) != CLI_OK)
        return CLI_FAIL;
    memset(&c, 0, sizeof c);
    c.rs = rs;
    c.key_col = col_index(rs, rs->shard_key);
    c.pk_col = col_index(rs, rs->pk);
    c.run_started = rs_now();
    c.out = calloc(rs->new_.nphys, sizeof *c.out);
    c.rows = calloc(rs->new_.nphys, sizeof *c.rows);
    rc = c.out && c.rows ? CLI_OK : CLI_FAIL;
    /* every source's position and estimate before the first row is read */
    for (i = 0; i < rs->old.nphys && rc == CLI_OK; i++) {
        rs_state_t st;
        rc = source_state(rs, i, &st) == 0 ? CLI_OK : CLI_FAIL;
        rs_state_free(&st);
    }
    for (i = 0; i < rs->old.nphys && rc == CLI_OK; i++)
        rc = copy_source(&c, i);
    for (i = 0; c.out != NULL && i < rs->new_.nphys; i++)
        rs_buf_free(&c.out[i]);
    free(c.out);
    free(c.rows);
    if (rc == CLI_OK)
        rc = set_phase(rs, "copied");
    if (rc == CLI_OK && rs->cli->json)
        printf("{\"phase\":\"copied\"}\n");
    return rc;
}

/* ---------------------------------------------------------------- cleanup */

/* Drop the old layout's tables once the switch is made (phase switched),
 * or, with --new, the new layout's (to start again), then forget the
 * workflow. */
int rs_cleanup(rs_t *rs)
{
    rs_layout_t *l = &rs->old;
    rs_state_t flow;
    size_t i;
    int found;
    char sql[200];

    if (rs_state_init(rs) != CLI_OK || (found = rs_state_get(rs, "", &flow)) < 0)
        return CLI_FAIL;
    if (found && strcmp(flow.phase, "switched") != 0) {
        cli_errorf("reshard: %s is in phase %s; cleanup drops the old tables only after the "
                   "switch (use `reshard abort` to drop the new ones)", rs->table, flow.phase);
        rs_state_free(&flow);
        return CLI_FAIL;
    }
    rs_state_free(&flow);
    for (i = 0; i < l->nphys; i++) {
        MYSQL *m = rs_conn(rs, l, i);
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS `%s`", l->phys[i].table);
        if (m == NULL || rs_exec(m, l->phys[i].node, sql) != 0)
            return CLI_FAIL;
    }
    return rs_state_clear(rs) == 0 ? rs_ack_forget(rs) : CLI_FAIL;
}

/* Drop the new layout's tables and forget the workflow: the old layout was
 * never left, so nothing else changes. */
int rs_abort(rs_t *rs)
{
    size_t i;
    char sql[200];

    rs_state_t flow;
    int found;

    if (rs_check(rs) != CLI_OK || rs_state_init(rs) != CLI_OK ||
        (found = rs_state_get(rs, "", &flow)) < 0)
        return CLI_FAIL;
    if (found && strcmp(flow.phase, "switched") == 0) {
        cli_errorf("reshard: %s is switched to the new layout; abort would drop its data",
                   rs->table);
        rs_state_free(&flow);
        return CLI_FAIL;
    }
    rs_state_free(&flow);
    for (i = 0; i < rs->new_.nphys; i++) {
        MYSQL *m = rs_conn(rs, &rs->new_, i);
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS `%s`", rs->new_.phys[i].table);
        if (m == NULL || rs_exec(m, rs->new_.phys[i].node, sql) != 0)
            return CLI_FAIL;
    }
    return rs_state_clear(rs) == 0 ? rs_ack_forget(rs) : CLI_FAIL;
}
