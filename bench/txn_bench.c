/*
 * txn_bench.c -- what a transaction over two data nodes costs in each
 * transaction mode: one UPDATE on each of two nodes, then COMMIT, n times,
 * through libdal, the modes taking turns round after round so that a drift
 * of the machine hits them alike.
 *
 *     txn_bench FILE TABLE KEY_A KEY_B N ROUNDS
 *
 * FILE is a dal configuration with [dal] xa_log; TABLE has columns id (the
 * shard key) and v, with rows KEY_A and KEY_B on two different nodes.
 * "single" runs the same two UPDATEs as two one-node transactions (what an
 * application without cross-node transactions does).  Prints, per mode,
 * the median over the rounds of the microseconds per transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/dal.h>

#define MAX_ROUNDS 64

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void must(int rc, const dal_error_t *err, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "txn_bench: %s: %s\n", what, err->message);
        exit(1);
    }
}

/* n transactions of mode (-1: two single-node ones); us per transaction. */
static double run(dal_session_t *s, int mode, const char *a, const char *b, long n)
{
    dal_error_t err;
    double t0 = now_us();
    long i;

    for (i = 0; i < n; i++) {
        must(mode < 0 ? dal_begin(s, &err) : dal_begin_mode(s, (dal_txn_mode_t)mode, &err), &err,
             "begin");
        must(dal_session_exec(s, NULL, a, NULL, 0, NULL, &err), &err, a);
        if (mode < 0) {
            must(dal_commit(s, &err), &err, "commit");
            must(dal_begin(s, &err), &err, "begin");
        }
        must(dal_session_exec(s, NULL, b, NULL, 0, NULL, &err), &err, b);
        must(dal_commit(s, &err), &err, "commit");
    }
    return (now_us() - t0) / (double)n;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"single (2 transactions)", "multi", "xa"};
    double us[3][MAX_ROUNDS];
    char a[256], b[256];
    dal_session_t *s;
    dal_error_t err;
    dal_t *dal;
    long n;
    int rounds, r, m;

    if (argc != 7 || (n = atol(argv[5])) <= 0 || (rounds = atoi(argv[6])) <= 0 ||
        rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: txn_bench FILE TABLE KEY_A KEY_B N ROUNDS (ROUNDS <= %d)\n",
                MAX_ROUNDS);
        return 2;
    }
    snprintf(a, sizeof a, "UPDATE %s SET v = v + 1 WHERE id = %s", argv[2], argv[3]);
    snprintf(b, sizeof b, "UPDATE %s SET v = v + 1 WHERE id = %s", argv[2], argv[4]);
    must(dal_open(argv[1], NULL, &dal, &err), &err, "dal_open");
    must(dal_session_open(dal, &s, &err), &err, "dal_session_open");
    run(s, DAL_TXN_XA, a, b, n / 10 + 1); /* warm the pools */
    for (r = 0; r < rounds; r++)
        for (m = 0; m < 3; m++)
            us[m][r] = run(s, m == 0 ? -1 : m, a, b, n);
    for (m = 0; m < 3; m++) {
        qsort(us[m], (size_t)rounds, sizeof us[m][0], cmp);
        printf("%-24s %8.1f us per transaction (median of %d rounds of %ld)\n", names[m],
               us[m][rounds / 2], rounds, n);
    }
    dal_session_close(s);
    dal_close(dal);
    return 0;
}
