/*
 * scatter_bench.c -- how long a statement that runs on every node takes,
 * against real servers: each node sleeps 50 ms (SLEEP(0.05) once per row,
 * one row per physical table), so run in parallel the whole statement
 * should take about 50 ms, and run one after another N x 50 ms.
 *
 *   bench/scatter.sh runs it against clusters of 2, 4, 8 and 16 nodes.
 *   scatter_bench CONFIG ROUNDS   (the table `sleepy` is created by it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/dal.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static int must(int rc, const dal_error_t *err, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "scatter_bench: %s: %s\n", what, err->message);
        exit(1);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 9, nodes, i;
    double *ms;
    dal_error_t err;
    dal_t *dal = NULL;
    char sql[128];

    if (argc < 2 || rounds < 1) {
        fprintf(stderr, "usage: scatter_bench CONFIG [ROUNDS]\n");
        return 2;
    }
    ms = calloc((size_t)rounds, sizeof *ms);
    nodes = atoi(getenv("SCATTER_NODES") ? getenv("SCATTER_NODES") : "0");
    must(dal_open(argv[1], NULL, &dal, &err), &err, "open");
    dal_exec(dal, NULL, "DROP TABLE IF EXISTS sleepy", NULL, 0, NULL, &err);
    must(dal_exec(dal, NULL, "CREATE TABLE sleepy (k BIGINT PRIMARY KEY)", NULL, 0, NULL, &err),
         &err, "create");
    /* one row per node (the table has one physical table per node) */
    for (i = 0; i < nodes; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO sleepy (k) VALUES (%d)", i);
        must(dal_exec(dal, NULL, sql, NULL, 0, NULL, &err), &err, "insert");
    }
    for (i = 0; i < rounds; i++) {
        dal_result_t *r = NULL;
        double t0 = now_ms();
        must(dal_query(dal, NULL, "SELECT SLEEP(0.05) FROM sleepy", NULL, 0, &r, &err), &err,
             "scatter");
        while (dal_result_next(r, &err) == 1)
            ;
        dal_result_free(r);
        ms[i] = now_ms() - t0;
    }
    qsort(ms, (size_t)rounds, sizeof *ms, cmp_double);
    printf("{\"nodes\":%d,\"rounds\":%d,\"median_ms\":%.1f,\"min_ms\":%.1f,\"max_ms\":%.1f,"
           "\"sequential_ms\":%d}\n", nodes, rounds, ms[rounds / 2], ms[0], ms[rounds - 1],
           nodes * 50);
    dal_close(dal);
    free(ms);
    return 0;
}
