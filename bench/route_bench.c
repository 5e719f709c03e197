/*
 * route_bench.c -- in-process cost of the statement path up to the wire:
 * snapshot reference, SQL analysis (cached), routing through the shard
 * plugin, and rewriting to physical SQL with parameters inlined.  No
 * database is contacted.
 *
 *   bench/route_bench [--iterations N] [--json] [--only NAME]
 *
 * Runs a point select and a typical insert (shard key read from the SQL's
 * parameters) against a sharded table with 10, 100 and 100,000 physical tables, and prints ns per statement (the median
 * of 5 rounds).  The text_* statements go through the statement path
 * (stmt_prepare) as text whose literals change every statement: with
 * [dal] sql_shape_cache (text_point_select, one analysis of the shape)
 * and without it (text_point_select_exact, each text analysed);
 * stmt_point_select is the same statement prepared, with parameters, on
 * the same path; text_update and text_or (a literal in an OR) likewise,
 * and text_item a statement whose shape cannot stand for it (a literal
 * compared in the select list).  --only runs one statement (for
 * callgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"
#include "stmt.h"
#include "rewrite.h"
#include "route.h"

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *write_config(unsigned dbs, unsigned tables, int shapes)
{
    static char path[] = "/tmp/dal_route_bench.XXXXXX";
    char *copy = strdup(path);
    FILE *f;
    unsigned i;
    int fd = mkstemp(copy);

    if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
        perror("mkstemp");
        exit(1);
    }
    for (i = 0; i < dbs; i++)
        fprintf(f, "[datasource db%u]\nmaster = mysql://u:p@127.0.0.1:1/p%u\n", i, i);
    fprintf(f, "[table wm_food]\ndatasource = db\ndb_shard_num = %u\ntable_shard_num = %u\n"
               "shard_key = wm_poi_id\nstrategy = mod\n[dal]\nsql_shape_cache = %s\n", dbs,
            tables, shapes ? "true" : "false");
    fclose(f);
    return copy;
}

typedef enum { PATH_ROUTE, PATH_TEXT, PATH_PREPARED } path_t;

typedef struct bench_stmt {
    const char *name;
    const char *sql; /* PATH_TEXT: a format for the two shard-key and id values */
    size_t nparams;
    path_t path;
    int shapes;      /* PATH_TEXT: on a handle with [dal] sql_shape_cache */
} bench_stmt_t;

static const bench_stmt_t stmts[] = {
    {"point_select", "SELECT id, name, price FROM wm_food WHERE wm_poi_id = ? AND id = ?", 2,
     PATH_ROUTE, 1},
    {"insert",
     "INSERT INTO wm_food (id, wm_poi_id, name, price, stock) VALUES (?, ?, ?, ?, ?)", 5,
     PATH_ROUTE, 1},
    {"stmt_point_select", "SELECT id, name, price FROM wm_food WHERE wm_poi_id = ? AND id = ?",
     2, PATH_PREPARED, 1},
    {"text_point_select",
     "SELECT id, name, price FROM wm_food WHERE wm_poi_id = %ld AND id = %ld", 0, PATH_TEXT, 1},
    {"text_point_select_exact",
     "SELECT id, name, price FROM wm_food WHERE wm_poi_id = %ld AND id = %ld", 0, PATH_TEXT, 0},
    {"text_update", "UPDATE wm_food SET price = %ld WHERE wm_poi_id = %ld", 0, PATH_TEXT, 1},
    {"text_update_exact", "UPDATE wm_food SET price = %ld WHERE wm_poi_id = %ld", 0, PATH_TEXT,
     0},
    /* a ? in an OR: routing reads nothing of it */
    {"text_or", "SELECT id FROM wm_food WHERE wm_poi_id = %2$ld AND (id = %1$ld OR id = 0)", 0,
     PATH_TEXT, 1},
    {"text_or_exact", "SELECT id FROM wm_food WHERE wm_poi_id = %2$ld AND (id = %1$ld OR id = 0)",
     0, PATH_TEXT, 0},
    /* a shape that cannot stand for its statements (a ? in the select list) */
    {"text_item", "SELECT id, price > %1$ld AS dear FROM wm_food WHERE wm_poi_id = %2$ld", 0,
     PATH_TEXT, 1},
    {"text_item_exact", "SELECT id, price > %1$ld AS dear FROM wm_food WHERE wm_poi_id = %2$ld",
     0, PATH_TEXT, 0},
};

/* The same through the statement path (stmt_prepare): a text, or a
 * prepared analysis with params.  The formats are this file's own. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int one_stmt(dal_t *dal, const bench_stmt_t *bs, const dal_sql_t *prepared,
                    const dal_value_t *params, const dal_query_opts_t *opts, dal_buf_t *out)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    char text[256];
    dal_stmt_text_t t = {text, prepared, 0, 0};
    dal_stmt_t st;
    dal_error_t err;
    int rc;

    if (prepared == NULL)
        t.len = (size_t)snprintf(text, sizeof text, bs->sql, (long)params[0].v.i,
                                 (long)params[1].v.i);
    rc = stmt_prepare(dal->sql_cache, snap, NULL, opts, t, params, bs->nparams, &st, &err);
    if (rc == 0) {
        buf_reset(out);
        rc = rewrite_route(&st.rt, 0, st.params, st.nparams, 0, out, &err);
    }
    if (rc != 0)
        fprintf(stderr, "route_bench: %s\n", err.message);
    stmt_clear(&st);
    snapshot_unref(snap);
    return rc;
}

/* One statement's trip through snapshot, sql cache, route and rewrite. */
static int one(dal_t *dal, const bench_stmt_t *st, const dal_value_t *params,
               const dal_query_opts_t *opts, dal_buf_t *out)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    const dal_sql_t *s = sql_cache_get(dal->sql_cache, st->sql, strlen(st->sql), 0, NULL, 0);
    dal_routing_t rt;
    dal_error_t err;
    int rc = route_statement(snap, NULL, s, opts, params, st->nparams, &rt, &err);

    if (rc == 0) {
        buf_reset(out);
        rc = rewrite_route(&rt, 0, params, st->nparams, 0, out, &err);
    }
    if (rc != 0)
        fprintf(stderr, "route_bench: %s\n", err.message);
    routing_clear(&rt);
    sql_unref(s);
    snapshot_unref(snap);
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static double measure(dal_t *dal, const bench_stmt_t *st, long iters)
{
    const dal_sql_t *prepared = st->path == PATH_PREPARED
                                    ? sql_cache_get(dal->sql_cache, st->sql, strlen(st->sql), 0,
                                                    NULL, 0)
                                    : NULL;
    dal_value_t params[5] = {dal_int(12345), dal_int(987654), dal_str("braised pork"),
                             dal_double(25.5), dal_int(100)};
    dal_query_opts_t opts;
    dal_buf_t out = DAL_BUF_INIT;
    uint64_t rounds[5];
    long i;
    int r;

    /* the shard key comes from the SQL: the first ? of the select, the
     * second of the insert; both change every statement */
    memset(&opts, 0, sizeof opts);
    for (r = 0; r < 5; r++) {
        uint64_t t0 = now_ns();
        for (i = 0; i < iters; i++) {
            /* new values in every round too: a text is never seen twice */
            params[0].v.i = 12345 + i + r * iters;
            params[1].v.i = 987654 + i + r * iters;
            if ((st->path == PATH_ROUTE ? one(dal, st, params, &opts, &out)
                                        : one_stmt(dal, st, prepared, params, &opts, &out)) != 0)
                exit(1);
        }
        rounds[r] = now_ns() - t0;
    }
    buf_free(&out);
    sql_unref(prepared);
    qsort(rounds, 5, sizeof rounds[0], cmp_u64);
    return (double)rounds[2] / (double)iters;
}

int main(int argc, char **argv)
{
    static const unsigned layouts[][2] = {{2, 10}, {4, 100}, {4, 100000}};
    long iters = 1000000;
    int json = 0, i, first = 1, shapes;
    const char *only = NULL;
    size_t l, s;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--iterations N] [--json] [--only NAME]\n", argv[0]);
            return 2;
        }
    }
    if (json)
        printf("{\"iterations\":%ld,\"results\":[", iters);
    for (l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        for (shapes = 1; shapes >= 0; shapes--) {
            char *ini = write_config(layouts[l][0], layouts[l][1], shapes);
            dal_error_t err;
            dal_t *dal = NULL;

            if (dal_open(ini, NULL, &dal, &err) != 0) {
                fprintf(stderr, "route_bench: %s\n", err.message);
                return 1;
            }
            for (s = 0; s < sizeof stmts / sizeof stmts[0]; s++) {
                double ns;
                if (stmts[s].shapes != shapes || (only && strcmp(only, stmts[s].name) != 0))
                    continue;
                ns = measure(dal, &stmts[s], iters);
                if (json)
                    printf("%s{\"statement\":\"%s\",\"dbs\":%u,\"tables\":%u,"
                           "\"ns_per_stmt\":%.1f}",
                           first ? "" : ",", stmts[s].name, layouts[l][0], layouts[l][1], ns);
                else
                    printf("%-23s %u dbs %6u tables: %7.1f ns/statement\n", stmts[s].name,
                           layouts[l][0], layouts[l][1], ns);
                first = 0;
            }
            dal_close(dal);
            unlink(ini);
            free(ini);
        }
    }
    if (json)
        printf("]}\n");
    return 0;
}
