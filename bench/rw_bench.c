/*
 * rw_bench.c -- what choosing a server (read-write splitting) adds to a
 * statement's in-process path.
 *
 *   bench/rw_bench [--iterations N] [--case I] [--json]
 *
 * A point select on an unsharded table goes through snapshot, SQL cache,
 * routing, server choice (select_servers) and rewriting -- once
 * without the choice (the path before read-write splitting), then with it
 * for a datasource without replicas, and with two replicas under each
 * load_balance policy, and with a read-your-writes mark whose GTID the
 * replicas have applied.  No database is contacted: the choice runs as
 * `dal explain` runs it (replicas not checked yet count as in rotation; the
 * checker is not started), which differs from a live statement only by the
 * checker's "already started?" load.  Prints ns per statement (median of 5
 * rounds).  Instruction counts: run one case (--case I) under
 * `valgrind --tool=callgrind` at two iteration counts and divide the
 * difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"
#include "stmt.h"
#include "replica.h"
#include "route_servers.h"
#include "rewrite.h"
#include "route.h"

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *write_config(const char *policy)
{
    static char path[] = "/tmp/dal_rw_bench.XXXXXX";
    char *copy = strdup(path);
    int fd = mkstemp(copy);
    FILE *f;

    if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
        perror("mkstemp");
        exit(1);
    }
    fprintf(f, "[datasource solo]\nmaster = mysql://u:p@127.0.0.1:1/p\n"
               "[datasource rw]\nmaster = mysql://u:p@127.0.0.1:1/p\n"
               "replicas = mysql://u:p@127.0.0.1:2/p?weight=3, mysql://u:p@127.0.0.1:3/p\n"
               "load_balance = %s\n"
               "[table t_solo]\ndatasource = solo\n[table t_rw]\ndatasource = rw\n",
            policy);
    fclose(f);
    return copy;
}

typedef struct bench_case {
    const char *name;
    const char *policy;
    const char *sql;
    int select;     /* run select_servers */
    int ryw;        /* with a read-your-writes mark the replicas have applied */
} bench_case_t;

#define POINT_SOLO "SELECT id, name, price FROM t_solo WHERE id = ?"
#define POINT_RW "SELECT id, name, price FROM t_rw WHERE id = ?"

static const bench_case_t cases[] = {
    {"no choice (before)", "round_robin", POINT_SOLO, 0, 0},
    {"no replicas", "round_robin", POINT_SOLO, 1, 0},
    {"round_robin", "round_robin", POINT_RW, 1, 0},
    {"random", "random", POINT_RW, 1, 0},
    {"weighted", "weighted", POINT_RW, 1, 0},
    {"least_outstanding", "least_outstanding", POINT_RW, 1, 0},
    {"round_robin + ryw", "round_robin", POINT_RW, 1, 1},
};

/* One statement's trip; sel NULL: no server choice. */
static int one(dal_t *dal, const char *sql, const dal_value_t *param, dal_select_t *sel,
               dal_buf_t *out)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    const dal_sql_t *s = sql_cache_get(dal->sql_cache, sql, strlen(sql), 0, NULL, 0);
    dal_routing_t rt;
    dal_error_t err;
    int rc = route_statement(snap, NULL, s, NULL, param, 1, &rt, &err);

    if (rc == 0 && sel != NULL)
        rc = server_override(s, NULL, &sel->override, &err);
    if (rc == 0 && sel != NULL)
        rc = select_servers(&rt, sel, &err);
    if (rc == 0) {
        buf_reset(out);
        rc = rewrite_route(&rt, 0, param, 1, 0, out, &err);
    }
    if (rc != 0)
        fprintf(stderr, "rw_bench: %s\n", err.message);
    routing_clear(&rt);
    sql_unref(s);
    snapshot_unref(snap);
    return rc;
}

/* A write whose GTID every replica of the node has applied: each read
 * checks it against the replicas' positions (and drops it once all have
 * it, so it is put back every time). */
static void mark_applied(dal_t *dal, dal_ryw_t *w)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    dal_node_t *node = snapshot_node(snap, "rw");
    dal_gtid_t g = {0, 1, 100};
    size_t i;

    pthread_mutex_lock(&node->gtid_mu);
    for (i = 0; i < node->nreplicas; i++) {
        node->replicas[i].gtid.n = 1;
        node->replicas[i].gtid.g[0] = g;
    }
    pthread_mutex_unlock(&node->gtid_mu);
    ryw_note(w, node, &g);
    snapshot_unref(snap);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static double measure(dal_t *dal, const bench_case_t *c, long iters)
{
    dal_value_t param = dal_int(0);
    dal_select_t sel = {.flags = DAL_SELECT_EXPLAIN};
    dal_ryw_t ryw;
    dal_buf_t out = DAL_BUF_INIT;
    uint64_t rounds[5];
    long i;
    int r;

    memset(&ryw, 0, sizeof ryw);
    if (c->ryw)
        sel.ryw = &ryw;
    for (r = 0; r < 5; r++) {
        uint64_t t0 = now_ns();
        for (i = 0; i < iters; i++) {
            param.v.i = i;
            if (c->ryw)
                mark_applied(dal, &ryw);
            if (one(dal, c->sql, &param, c->select ? &sel : NULL, &out) != 0)
                exit(1);
        }
        rounds[r] = now_ns() - t0;
    }
    buf_free(&out);
    qsort(rounds, 5, sizeof rounds[0], cmp_u64);
    return (double)rounds[2] / (double)iters;
}

int main(int argc, char **argv)
{
    long iters = 1000000;
    int json = 0, i, only = -1, first = 1;
    size_t c;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = atoi(argv[++i]); /* one case, for callgrind */
        else {
            fprintf(stderr, "usage: %s [--iterations N] [--case I] [--json]\n", argv[0]);
            return 2;
        }
    }
    if (json)
        printf("{\"iterations\":%ld,\"results\":[", iters);
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *ini;
        dal_error_t err;
        dal_t *dal = NULL;
        double ns;

        if (only >= 0 && (size_t)only != c)
            continue;
        ini = write_config(cases[c].policy);
        if (dal_open(ini, NULL, &dal, &err) != 0) {
            fprintf(stderr, "rw_bench: %s\n", err.message);
            return 1;
        }
        ns = measure(dal, &cases[c], iters);
        if (json)
            printf("%s{\"case\":\"%s\",\"ns_per_stmt\":%.1f}", first ? "" : ",",
                   cases[c].name, ns);
        else
            printf("%-20s %7.1f ns/statement\n", cases[c].name, ns);
        first = 0;
        dal_close(dal);
        unlink(ini);
        free(ini);
    }
    if (json)
        printf("]}\n");
    return 0;
}
