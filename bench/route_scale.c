/*
 * route_scale.c -- how analysing and routing one statement grows with its
 * size: builds one statement of N parts, analyses it, routes it and
 * rewrites it once.  No database is contacted.  Run under callgrind
 * (bench/README.md, *Routing a large statement*) for instruction counts
 * that do not depend on the machine:
 *
 *   DAL_PLUGIN_DIR=plugins/.libs bench/route_scale SHAPE N
 *
 * SHAPE (each part names the sharded table orders, sharded by user_id):
 *   union   N arms SELECT * FROM orders WHERE user_id = k, UNION ALL
 *   qualified  the same with qualified columns (orders.user_id)
 *   nested  SELECT ... WHERE id IN (SELECT ... ) N deep (at most the
 *           analyser's nesting depth, 64)
 *   with    WITH of N common table expressions, each reading orders
 *   conds   one WHERE of N conditions user_id = 1 AND id <> k
 *   in      one IN list of N values
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "handle.h"
#include "rewrite.h"
#include "route.h"

static char *write_config(void)
{
    static const char text[] =
        "[datasource db0]\nmaster = mysql://u:p@127.0.0.1:1/p0\n"
        "[datasource db1]\nmaster = mysql://u:p@127.0.0.1:1/p1\n"
        "[table orders]\ndatasource = db\ndb_shard_num = 2\ntable_shard_num = 4\n"
        "shard_key = user_id\nstrategy = mod\n";
    char *path = strdup("/tmp/dal_route_scale.XXXXXX");
    int fd = mkstemp(path);

    if (fd < 0 || write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1)) {
        perror("route_scale: config");
        exit(1);
    }
    close(fd);
    return path;
}

/* The statement of the shape, n parts. */
static void make_sql(const char *shape, long n, dal_buf_t *b)
{
    long i;

    if (strcmp(shape, "union") == 0) {
        for (i = 0; i < n; i++)
            buf_printf(b, "%sSELECT * FROM orders WHERE user_id = %ld", i ? " UNION ALL " : "",
                       i % 2);
    } else if (strcmp(shape, "qualified") == 0) {
        for (i = 0; i < n; i++)
            buf_printf(b, "%sSELECT orders.id FROM orders WHERE orders.user_id = %ld",
                       i ? " UNION ALL " : "", i % 2);
    } else if (strcmp(shape, "nested") == 0) {
        for (i = 0; i < n; i++)
            buf_printf(b, "SELECT id FROM orders WHERE user_id = 1 AND id IN (");
        buf_printf(b, "SELECT 1");
        for (i = 0; i < n; i++)
            buf_printf(b, ")");
    } else if (strcmp(shape, "with") == 0) {
        for (i = 0; i < n; i++)
            buf_printf(b, "%sc%ld AS (SELECT id FROM orders WHERE user_id = 1)",
                       i ? ", " : "WITH ", i);
        buf_printf(b, " SELECT * FROM c0");
    } else if (strcmp(shape, "conds") == 0) {
        buf_printf(b, "SELECT * FROM orders WHERE user_id = 1");
        for (i = 0; i < n; i++)
            buf_printf(b, " AND id <> %ld", i);
    } else if (strcmp(shape, "in") == 0) {
        buf_printf(b, "SELECT * FROM orders WHERE user_id IN (");
        for (i = 0; i < n; i++)
            buf_printf(b, "%s%ld", i ? ", " : "", i);
        buf_printf(b, ")");
    } else {
        fprintf(stderr, "route_scale: unknown shape %s\n", shape);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    dal_buf_t sql = DAL_BUF_INIT, out = DAL_BUF_INIT;
    const dal_sql_t *s;
    dal_snapshot_t *snap;
    dal_routing_t rt;
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini;
    int rc;

    if (argc != 3) {
        fprintf(stderr, "usage: %s union|qualified|nested|with|conds|in N\n", argv[0]);
        return 2;
    }
    make_sql(argv[1], atol(argv[2]), &sql);
    ini = write_config();
    if (dal_open(ini, NULL, &dal, &err) != 0) {
        fprintf(stderr, "route_scale: %s\n", err.message);
        return 1;
    }
    snap = snapshot_acquire(dal);
    s = sql_cache_get(dal->sql_cache, sql.data, sql.len, 0, NULL, 0);
    /* route_statement leaves nothing to clear when it fails */
    rc = s == NULL ? -1 : route_statement(snap, NULL, s, NULL, NULL, 0, &rt, &err);
    if (rc == 0) {
        rc = rewrite_route(&rt, 0, NULL, 0, 0, &out, &err);
        if (rc == 0)
            printf("%s %s: %zu bytes, %zu routes, %zu bytes rewritten\n", argv[1], argv[2],
                   sql.len, rt.nroutes, out.len);
        routing_clear(&rt);
    }
    if (rc != 0)
        fprintf(stderr, "route_scale: %s\n", s == NULL ? "analysis failed" : err.message);
    sql_unref(s);
    snapshot_unref(snap);
    dal_close(dal);
    unlink(ini);
    free(ini);
    buf_free(&sql);
    buf_free(&out);
    return rc == 0 ? 0 : 1;
}
