/*
 * reshard_plan.c -- `dal reshard plan`: is the new layout a valid home for
 * the table, which physical tables does it need, and where do the rows of
 * each old table go.
 *
 * The row counts are exact: each old table's rows are grouped by shard key
 * value and every value is routed by the new configuration.
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Does the table exist on the node of layout l's entry i?  1, 0, -1. */
static int table_exists(rs_t *rs, rs_layout_t *l, size_t i)
{
    rs_buf_t q = {0};
    MYSQL *m = rs_conn(rs, l, i);
    char *n = NULL;
    int rc;

    if (m == NULL)
        return -1;
    rc = rs_puts(&q, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA ="
                     " DATABASE() AND TABLE_NAME = ") ||
         rs_put_value(&q, m, l->phys[i].table, strlen(l->phys[i].table), 0) ||
         rs_scalar(m, l->phys[i].node, q.s, &n);
    rs_buf_free(&q);
    rc = rc ? -1 : (n != NULL && strcmp(n, "0") != 0);
    free(n);
    return rc;
}

int rs_check(rs_t *rs)
{
    const char *nk = dal_table_info_shard_key(rs->new_.info);
    const char *ok = dal_table_info_shard_key(rs->old.info);
    size_t i, j;

    if (nk == NULL && rs->new_.nphys > 1) {
        cli_errorf("reshard: %s: table %s has no shard key", rs->new_.path, rs->table);
        return CLI_FAIL;
    }
    if (ok != NULL && nk != NULL && strcasecmp(ok, nk) != 0) {
        cli_errorf("reshard: %s: table %s is sharded by %s, %s by %s; a reshard keeps the "
                   "shard key", rs->new_.path, rs->table, nk, rs->old.path, ok);
        return CLI_FAIL;
    }
    for (i = 0; nk != NULL && i < rs->ncols; i++)
        if (strcasecmp(rs->cols[i], nk) == 0)
            break;
    if (nk != NULL && i == rs->ncols) {
        cli_errorf("reshard: shard key %s of %s is not a column of %s", nk, rs->new_.path,
                   rs->table);
        return CLI_FAIL;
    }
    for (i = 0; i < rs->new_.nphys; i++) {
        for (j = 0; j < rs->old.nphys; j++)
            if (strcmp(rs->new_.phys[i].where, rs->old.phys[j].where) == 0 &&
                strcmp(rs->new_.phys[i].table, rs->old.phys[j].table) == 0) {
                cli_errorf("reshard: %s: table %s on datasource %s (%s) is also a table of "
                           "the old layout (%s); give the new layout other databases or "
                           "servers", rs->new_.path, rs->new_.phys[i].table,
                           rs->new_.phys[i].node, rs->new_.phys[i].where, rs->old.phys[j].node);
                return CLI_FAIL;
            }
        if (rs_conn(rs, &rs->new_, i) == NULL)
            return CLI_FAIL;
    }
    for (j = 0; j < rs->old.nphys; j++)
        if (rs_conn(rs, &rs->old, j) == NULL)
            return CLI_FAIL;
    return CLI_OK;
}

/* Rows of old table i per new table (counts: new_.nphys entries). */
static int count_moves(rs_t *rs, size_t i, uint64_t *counts)
{
    rs_buf_t q = {0};
    MYSQL *m = rs_conn(rs, &rs->old, i);
    MYSQL_RES *r;
    MYSQL_ROW row;
    int rc = CLI_OK;

    if (m == NULL)
        return CLI_FAIL;
    if (rs_puts(&q, "SELECT `") || rs_puts(&q, rs->shard_key) || rs_puts(&q, "`, COUNT(*) FROM `") ||
        rs_puts(&q, rs->old.phys[i].table) || rs_puts(&q, "` GROUP BY 1"))
        return CLI_FAIL;
    if (mysql_query(m, q.s) != 0 || (r = mysql_use_result(m)) == NULL) {
        cli_errorf("reshard: counting %s on %s: %s", rs->old.phys[i].table, rs->old.phys[i].node,
                   mysql_error(m));
        rs_buf_free(&q);
        return CLI_FAIL;
    }
    rs_buf_free(&q);
    while ((row = mysql_fetch_row(r)) != NULL) {
        unsigned long *len = mysql_fetch_lengths(r);
        long to = rc == CLI_OK ? rs_route(rs, row[0], row[0] ? len[0] : 0) : -1;
        if (to < 0)
            rc = CLI_FAIL;
        else
            counts[to] += strtoull(row[1], NULL, 10);
    }
    mysql_free_result(r);
    return rc;
}

static void json_layout(json_t *j, const rs_layout_t *l)
{
    json_object_begin(j);
    json_key(j, "config");
    json_string(j, l->path);
    json_key(j, "db_shard_num");
    json_uint(j, dal_table_info_db_shard_num(l->info));
    json_key(j, "table_shard_num");
    json_uint(j, dal_table_info_table_shard_num(l->info));
    json_object_end(j);
}

static void json_phys(json_t *j, const rs_phys_t *p)
{
    json_key(j, "datasource");
    json_string(j, p->node);
    json_key(j, "table");
    json_string(j, p->table);
}

static int show_creates(rs_t *rs, json_t *j, int json)
{
    size_t i;

    if (json) {
        json_key(j, "create");
        json_array_begin(j);
    }
    for (i = 0; i < rs->new_.nphys; i++) {
        int e = table_exists(rs, &rs->new_, i);
        if (e < 0)
            return CLI_FAIL;
        if (json) {
            json_object_begin(j);
            json_phys(j, &rs->new_.phys[i]);
            json_key(j, "where");
            json_string(j, rs->new_.phys[i].where);
            json_key(j, "exists");
            json_bool(j, e);
            json_object_end(j);
        } else
            printf("create %s.%s (%s)%s\n", rs->new_.phys[i].node, rs->new_.phys[i].table,
                   rs->new_.phys[i].where, e ? ": exists" : "");
    }
    if (json)
        json_array_end(j);
    return CLI_OK;
}

static void show_moves(const rs_t *rs, json_t *j, int json, size_t i, const uint64_t *counts)
{
    uint64_t n = 0;
    size_t k;
    int first = 1;

    for (k = 0; k < rs->new_.nphys; k++)
        n += counts[k];
    if (json) {
        json_object_begin(j);
        json_phys(j, &rs->old.phys[i]);
        json_key(j, "rows");
        json_uint(j, n);
        json_key(j, "to");
        json_array_begin(j);
    } else
        printf("move %s.%s (%llu rows) ->", rs->old.phys[i].node, rs->old.phys[i].table,
               (unsigned long long)n);
    for (k = 0; k < rs->new_.nphys; k++) {
        if (counts[k] == 0)
            continue;
        if (json) {
            json_object_begin(j);
            json_phys(j, &rs->new_.phys[k]);
            json_key(j, "rows");
            json_uint(j, counts[k]);
            json_object_end(j);
        } else
            printf("%s %s.%s %llu", first ? "" : ",", rs->new_.phys[k].node,
                   rs->new_.phys[k].table, (unsigned long long)counts[k]);
        first = 0;
    }
    if (json) {
        json_array_end(j);
        json_object_end(j);
    } else
        printf("%s\n", first ? " nothing" : "");
}

static int show_sources(rs_t *rs, json_t *j, int json, uint64_t *total)
{
    uint64_t *counts = calloc(rs->new_.nphys, sizeof *counts);
    size_t i, k;
    int rc = CLI_OK;

    if (counts == NULL) {
        cli_errorf("reshard: out of memory");
        return CLI_FAIL;
    }
    if (json) {
        json_key(j, "sources");
        json_array_begin(j);
    }
    for (i = 0; i < rs->old.nphys && rc == CLI_OK; i++) {
        memset(counts, 0, rs->new_.nphys * sizeof *counts);
        rc = count_moves(rs, i, counts);
        if (rc != CLI_OK)
            break;
        show_moves(rs, j, json, i, counts);
        for (k = 0; k < rs->new_.nphys; k++)
            *total += counts[k];
    }
    if (json && rc == CLI_OK)
        json_array_end(j);
    free(counts);
    return rc;
}

int rs_plan(rs_t *rs)
{
    int json = rs->cli->json;
    uint64_t total = 0;
    json_t j;

    if (rs_check(rs) != CLI_OK)
        return CLI_FAIL;
    json_init(&j, stdout);
    if (json) {
        json_object_begin(&j);
        json_key(&j, "table");
        json_string(&j, rs->table);
        json_key(&j, "shard_key");
        json_string(&j, rs->shard_key);
        json_key(&j, "primary_key");
        json_string(&j, rs->pk);
        json_key(&j, "from");
        json_layout(&j, &rs->old);
        json_key(&j, "to");
        json_layout(&j, &rs->new_);
    } else
        printf("reshard %s (shard key %s, primary key %s): %s (%u x %u) -> %s (%u x %u)\n",
               rs->table, rs->shard_key, rs->pk, rs->old.path,
               dal_table_info_db_shard_num(rs->old.info),
               dal_table_info_table_shard_num(rs->old.info), rs->new_.path,
               dal_table_info_db_shard_num(rs->new_.info),
               dal_table_info_table_shard_num(rs->new_.info));
    if (show_creates(rs, &j, json) != CLI_OK || show_sources(rs, &j, json, &total) != CLI_OK)
        return CLI_FAIL;
    if (json) {
        json_key(&j, "rows");
        json_uint(&j, total);
        json_object_end(&j);
        printf("\n");
    } else
        printf("rows to copy: %llu\n", (unsigned long long)total);
    return CLI_OK;
}
