/*
 * etcd_bench.c -- how long a pushed configuration takes to be in force in
 * a fleet: W watcher processes, each with its own dal_t on the same etcd
 * location, and P pushes, one after another.
 *
 *     etcd_bench URL [WATCHERS [PUSHES]]      (defaults 20 and 50)
 *
 * A watcher notes the moment its dal_t swapped a version in (the library's
 * "reloaded NAME" log line, written right after the swap, from the watch
 * thread) with CLOCK_MONOTONIC, which all processes share, and sends
 * "REVISION TIME" to the parent through a pipe; nothing polls.  The
 * latency of one watcher for one push is from just before the push's
 * write to etcd until that moment.  Prints p50, p90, p99 and max over
 * WATCHERS x PUSHES samples.
 *
 * Documents name four datasources that are never connected to (dal
 * connects on first use), so no database is needed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dal/dal.h>

static int report_fd = -1;

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "reloaded etcd://.../config@REV: ..." -> "REV TIME\n" to the parent. */
static void on_log(void *user, dal_log_level_t level, const char *component, const char *msg)
{
    const char *at;
    char line[64];
    int n;

    if (strncmp(msg, "reloaded ", 9) != 0 || (at = strchr(msg, '@')) == NULL)
        return;
    n = snprintf(line, sizeof line, "%lld %.3f\n", atoll(at + 1), now_ms());
    if (write(report_fd, line, (size_t)n) != n)
        _exit(3);
}

static void watcher(const char *url, int ready_fd)
{
    dal_open_opts_t o = {on_log, NULL, DAL_LOG_INFO, NULL};
    dal_error_t err;
    dal_t *dal;

    if (dal_open(url, &o, &dal, &err) != 0) {
        fprintf(stderr, "watcher: %s\n", err.message);
        _exit(2);
    }
    if (write(ready_fd, "r", 1) != 1)
        _exit(3);
    pause(); /* until the parent's SIGTERM */
    _exit(0);
}

static void make_doc(char *buf, size_t cap, int serial)
{
    snprintf(buf, cap,
             "; push %d\n[datasource db0]\nmaster = mysql://u@127.0.0.1:1/p0\n"
             "[datasource db1]\nmaster = mysql://u@127.0.0.1:1/p1\n"
             "[datasource db2]\nmaster = mysql://u@127.0.0.1:1/p2\n"
             "[datasource db3]\nmaster = mysql://u@127.0.0.1:1/p3\n"
             "[table t]\ndatasource = db\ndb_shard_num = 4\ntable_shard_num = %d\n"
             "shard_key = k\nstrategy = mod\n[dal]\nallow_reshard = true\n",
             serial, 4 * (1 + serial % 8));
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Read one "REV TIME" line. */
static int read_report(FILE *f, long long *rev, double *t)
{
    return fscanf(f, "%lld %lf", rev, t) == 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
    int watchers = argc > 2 ? atoi(argv[2]) : 20, pushes = argc > 3 ? atoi(argv[3]) : 50;
    int rep[2], ready[2], i, j;
    const char *url = argc > 1 ? argv[1] : NULL;
    pid_t *kids;
    double *lat;
    size_t n = 0;
    dal_source_t *src;
    dal_error_t err;
    char doc[2048], c;
    FILE *in;

    if (url == NULL || watchers < 1 || pushes < 1) {
        fprintf(stderr, "usage: etcd_bench URL [WATCHERS [PUSHES]]\n");
        return 2;
    }
    kids = calloc((size_t)watchers, sizeof *kids);
    lat = calloc((size_t)watchers * (size_t)pushes, sizeof *lat);
    if (kids == NULL || lat == NULL || pipe(rep) != 0 || pipe(ready) != 0)
        return 1;
    if (dal_source_open(url, NULL, &src, &err) != 0) {
        fprintf(stderr, "etcd_bench: %s\n", err.message);
        return 1;
    }
    make_doc(doc, sizeof doc, 0);
    if (dal_source_put(src, doc, strlen(doc), -1, NULL, &err) != 0) {
        fprintf(stderr, "etcd_bench: %s\n", err.message);
        return 1;
    }
    report_fd = rep[1];
    for (i = 0; i < watchers; i++)
        if ((kids[i] = fork()) == 0)
            watcher(url, ready[1]);
    for (i = 0; i < watchers; i++)
        if (read(ready[0], &c, 1) != 1)
            return 1;
    in = fdopen(rep[0], "r");
    for (j = 1; j <= pushes; j++) {
        int64_t rev = 0;
        double t0 = now_ms(), t;
        long long r;
        make_doc(doc, sizeof doc, j);
        if (dal_source_put(src, doc, strlen(doc), -1, &rev, &err) != 0) {
            fprintf(stderr, "etcd_bench: push %d: %s\n", j, err.message);
            return 1;
        }
        for (i = 0; i < watchers; i++) {
            if (read_report(in, &r, &t) != 0 || r != rev) {
                fprintf(stderr, "etcd_bench: push %d: a watcher reported revision %lld, not "
                        "%lld\n", j, r, (long long)rev);
                return 1;
            }
            lat[n++] = t - t0;
        }
    }
    for (i = 0; i < watchers; i++) {
        kill(kids[i], SIGTERM);
        waitpid(kids[i], NULL, 0);
    }
    dal_source_close(src);
    qsort(lat, n, sizeof *lat, cmp);
    printf("propagation to %d watcher processes, %d pushes (%zu samples): p50 %.1f ms, "
           "p90 %.1f ms, p99 %.1f ms, max %.1f ms\n", watchers, pushes, n, lat[n / 2],
           lat[n * 9 / 10], lat[n * 99 / 100], lat[n - 1]);
    free(kids);
    free(lat);
    return 0;
}
