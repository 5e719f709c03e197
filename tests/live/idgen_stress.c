/*
 * idgen_stress.c -- the ID generators against a real MariaDB, one scenario
 * per mode; tests/suites/idgen_test.sh starts the servers and runs the modes.  Each
 * mode prints one line of what it saw and exits 0, or prints "FAIL: ..." on
 * stderr and exits 1.  Nothing is ever skipped.
 *
 *   draw CONFIG NAME THREADS COUNT OUT
 *        THREADS threads draw COUNT IDs each from [idgen NAME] and append
 *        them to OUT (8-byte native integers) as they go; each thread's IDs
 *        must increase.  COUNT 0: until killed, at an easy pace (a pause
 *        every PACE_IDS), so that the file stays small.
 *   check CONFIG DATASOURCE TAG MIN_IDS FILE...
 *        the IDs of all FILEs (a cut-off last record is ignored: a process
 *        may have been killed mid-write) are at least MIN_IDS, all different,
 *        and each lies in a segment that leaf_alloc_log (filled by a trigger
 *        on leaf_alloc) recorded for TAG; the segments do not overlap.
 *   above MIN FILE...
 *        every ID in the FILEs is >= MIN (no ID reissued after a restart).
 *   unique MIN_IDS FILE...
 *        the IDs of all FILEs are at least MIN_IDS and all different, and no
 *        two FILEs share a snowflake worker id.
 *   outage CONFIG NAME STEP KILL_CMD RESTART_CMD
 *        with a leaf section of fixed step STEP: use a little of one
 *        segment, let the next be buffered, run KILL_CMD (the database goes
 *        away), draw every buffered ID, then see calls fail with a clear
 *        error within a bounded time; run RESTART_CMD and see IDs resume.
 *   steps CONFIG NAME DATASOURCE TAG COUNT
 *        draw COUNT IDs fast; leaf_alloc_log must show the step growing
 *        (doubling) and leaf_alloc.max_id equal to the last segment's end.
 *   spread CONFIG NAME COUNT
 *        COUNT snowflake IDs about a millisecond apart reach all 100
 *        residues mod 100, none more than twice as often as it should.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dal/dal.h"
#include "idgen.h"

#define BATCH_MAX 16
#define FLUSH_IDS 512 /* IDs a thread collects before appending them to OUT */
#define PACE_IDS 64   /* drawing until killed: 1 ms pause after this many */

static void fail(const char *fmt, ...) DAL_PRINTF(1, 2);

static void fail(const char *fmt, ...)
{
    va_list ap;

    fputs("FAIL: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

static dal_t *open_config(const char *path)
{
    dal_error_t err = { 0 };
    dal_t *dal = NULL;

    if (dal_open(path, NULL, &dal, &err) != 0)
        fail("dal_open %s: %s", path, err.message);
    return dal;
}

static int64_t parse_i64(const char *s)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        fail("'%s' is not a number", s);
    return v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ draw */

typedef struct drawer {
    dal_t *dal;
    const char *name;
    int64_t count; /* 0: for ever */
    int fd;        /* OUT, O_APPEND */
} drawer_t;

static void append(int fd, const int64_t *ids, size_t n)
{
    /* one write per batch: with O_APPEND, batches of threads never mix */
    if (write(fd, ids, n * sizeof *ids) != (ssize_t)(n * sizeof *ids))
        fail("write: %s", strerror(errno));
}

static void *draw_thread(void *p)
{
    drawer_t *d = p;
    int64_t buf[FLUSH_IDS + BATCH_MAX], last = 0, done = 0;
    dal_error_t err = { 0 };
    size_t have = 0, k, i;

    while (d->count == 0 || done < d->count) {
        k = done % 5 == 2 ? BATCH_MAX : 1; /* mostly single IDs, some batches */
        if (d->count && k > (size_t)(d->count - done))
            k = (size_t)(d->count - done);
        if (dal_next_ids(d->dal, d->name, buf + have, k, &err) != 0)
            fail("dal_next_ids after %" PRId64 " IDs: %s", done, err.message);
        for (i = have; i < have + k; i++) {
            if (buf[i] <= last)
                fail("IDs of one thread went down: %" PRId64 " after %" PRId64, buf[i], last);
            last = buf[i];
        }
        have += k;
        done += (int64_t)k;
        if (d->count == 0 && done % PACE_IDS < (int64_t)k)
            sleep_ms(1);
        if (have >= FLUSH_IDS) {
            append(d->fd, buf, have);
            have = 0;
        }
    }
    append(d->fd, buf, have);
    return NULL;
}

static int mode_draw(char **av)
{
    int threads = (int)parse_i64(av[2]), i;
    pthread_t th[64];
    drawer_t d;

    if (threads < 1 || threads > 64)
        fail("THREADS must be 1..64");
    d.dal = open_config(av[0]);
    d.name = av[1];
    d.count = parse_i64(av[3]);
    d.fd = open(av[4], O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (d.fd < 0)
        fail("%s: %s", av[4], strerror(errno));
    for (i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, draw_thread, &d) != 0)
            fail("pthread_create");
    for (i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    close(d.fd);
    dal_close(d.dal);
    printf("draw: %d threads x %" PRId64 " IDs from [idgen %s]\n", threads, d.count, d.name);
    return 0;
}

/* ------------------------------------------------------------- ID files */

typedef struct idvec {
    int64_t *v;
    size_t n, cap;
} idvec_t;

/* Append the whole records of file path to ids; returns how many. */
static size_t read_ids(const char *path, idvec_t *ids)
{
    FILE *f = fopen(path, "rb");
    int64_t x;
    size_t before = ids->n;

    if (f == NULL)
        fail("%s: %s", path, strerror(errno));
    while (fread(&x, sizeof x, 1, f) == 1) {
        if (ids->n == ids->cap) {
            ids->cap = ids->cap ? 2 * ids->cap : 65536;
            if ((ids->v = realloc(ids->v, ids->cap * sizeof *ids->v)) == NULL)
                fail("out of memory");
        }
        ids->v[ids->n++] = x;
    }
    fclose(f);
    return ids->n - before;
}

static void sort_unique(idvec_t *ids, int64_t min_ids)
{
    size_t i;

    if ((int64_t)ids->n < min_ids)
        fail("only %zu IDs, expected at least %" PRId64, ids->n, min_ids);
    qsort(ids->v, ids->n, sizeof *ids->v, cmp_i64);
    for (i = 1; i < ids->n; i++)
        if (ids->v[i] == ids->v[i - 1])
            fail("duplicate ID %" PRId64, ids->v[i]);
}

/* ----------------------------------------------------------------- check */

typedef struct seg {
    int64_t start, end;
} seg_t;

/* The segments leaf_alloc_log recorded for tag, by start. */
static seg_t *logged_segments(dal_t *dal, const char *ds, const char *tag, size_t *n)
{
    dal_query_opts_t qo = { .datasource = ds };
    dal_value_t p = dal_str(tag);
    dal_error_t err = { 0 };
    dal_result_t *r = NULL;
    seg_t *segs = NULL;
    size_t cap = 0;
    int rc;

    *n = 0;
    if (dal_query(dal, &qo, "SELECT old_max, new_max FROM leaf_alloc_log WHERE biz_tag = ? "
                  "ORDER BY old_max", &p, 1, &r, &err) != 0)
        fail("reading leaf_alloc_log: %s", err.message);
    while ((rc = dal_result_next(r, &err)) == 1) {
        if (*n == cap && (segs = realloc(segs, (cap = cap ? 2 * cap : 256) * sizeof *segs)) == NULL)
            fail("out of memory");
        segs[*n].start = dal_result_int(r, 0);
        segs[(*n)++].end = dal_result_int(r, 1);
    }
    if (rc < 0)
        fail("reading leaf_alloc_log: %s", err.message);
    dal_result_free(r);
    return segs;
}

static int mode_check(char **av, int ac)
{
    dal_t *dal = open_config(av[0]);
    idvec_t ids = { NULL, 0, 0 };
    size_t nseg, i, s = 0;
    seg_t *segs;
    int f;

    for (f = 4; f < ac; f++)
        read_ids(av[f], &ids);
    sort_unique(&ids, parse_i64(av[3]));
    segs = logged_segments(dal, av[1], av[2], &nseg);
    for (i = 0; i < nseg; i++)
        if (segs[i].end <= segs[i].start || (i > 0 && segs[i].start < segs[i - 1].end))
            fail("segments overlap or are empty: [%" PRId64 ", %" PRId64 ")", segs[i].start,
                 segs[i].end);
    for (i = 0; i < ids.n; i++) {
        while (s < nseg && segs[s].end <= ids.v[i])
            s++;
        if (s == nseg || ids.v[i] < segs[s].start)
            fail("ID %" PRId64 " is in no segment recorded in leaf_alloc", ids.v[i]);
    }
    printf("check: %zu IDs from %d files, all different, all within the %zu segments "
           "recorded for '%s'\n", ids.n, ac - 4, nseg, av[2]);
    free(segs);
    free(ids.v);
    dal_close(dal);
    return 0;
}

static int mode_above(char **av, int ac)
{
    int64_t min = parse_i64(av[0]);
    idvec_t ids = { NULL, 0, 0 };
    size_t i;
    int f;

    for (f = 1; f < ac; f++)
        read_ids(av[f], &ids);
    if (ids.n == 0)
        fail("no IDs");
    for (i = 0; i < ids.n; i++)
        if (ids.v[i] < min)
            fail("ID %" PRId64 " was reserved before the restart (max_id then: %" PRId64 ")",
                 ids.v[i], min);
    printf("above: %zu IDs, all >= %" PRId64 "\n", ids.n, min);
    free(ids.v);
    return 0;
}

static int mode_unique(char **av, int ac)
{
    idvec_t ids = { NULL, 0, 0 };
    int64_t workers[64];
    size_t first, i;
    int f, g;

    if (ac - 1 > 64)
        fail("too many files");
    for (f = 1; f < ac; f++) {
        first = ids.n;
        if (read_ids(av[f], &ids) == 0)
            fail("%s: no IDs", av[f]);
        workers[f - 1] = (ids.v[first] >> 12) & 1023;
        for (i = first; i < ids.n; i++)
            if (((ids.v[i] >> 12) & 1023) != workers[f - 1])
                fail("%s: worker id changed within one run", av[f]);
        for (g = 0; g < f - 1; g++)
            if (workers[g] == workers[f - 1])
                fail("%s and %s both used worker id %" PRId64, av[g + 1], av[f], workers[g]);
    }
    sort_unique(&ids, parse_i64(av[0]));
    printf("unique: %zu snowflake IDs from %d processes with different worker ids\n", ids.n,
           ac - 1);
    free(ids.v);
    return 0;
}

/* ---------------------------------------------------------------- outage */

static int64_t draw_one(dal_t *dal, const char *name)
{
    dal_error_t err = { 0 };
    int64_t id;

    if (dal_next_ids(dal, name, &id, 1, &err) != 0)
        fail("dal_next_ids: %s", err.message);
    return id;
}

static void run(const char *cmd)
{
    if (system(cmd) != 0)
        fail("command failed: %s", cmd);
}

/* Calls fail, each within bound_ns, with a message that says why. */
static void expect_failures(dal_t *dal, const char *name, uint64_t bound_ns, int calls)
{
    dal_error_t err = { 0 };
    uint64_t t0, took;
    int64_t id;
    int i;

    for (i = 0; i < calls; i++) {
        t0 = now_ns();
        if (dal_next_ids(dal, name, &id, 1, &err) == 0)
            fail("an ID (%" PRId64 ") came while the database is down and both segments "
                 "are used up", id);
        took = now_ns() - t0;
        if (took > bound_ns)
            fail("a failing call took %" PRIu64 " ms", took / 1000000u);
        if (strstr(err.message, "both segments are used up") == NULL)
            fail("unclear error: %s", err.message);
        sleep_ms(100);
    }
    printf("outage: failing calls say: %s\n", err.message);
}

static int mode_outage(char **av)
{
    dal_t *dal = open_config(av[0]);
    const char *name = av[1];
    int64_t step = parse_i64(av[2]), first, last, id, buffered = 0;
    dal_error_t err = { 0 };
    uint64_t t0;

    first = last = draw_one(dal, name);
    while (last - first < step / 5) /* past the prefetch point of 10% */
        last = draw_one(dal, name);
    sleep_ms(500);                  /* the next segment is reserved meanwhile */
    run(av[3]);
    /* every buffered ID still comes, one after the other ... */
    while (dal_next_ids(dal, name, &id, 1, &err) == 0) {
        if (id <= last)
            fail("IDs went down during the outage");
        last = id;
        buffered++;
    }
    if (buffered < step) /* the whole next segment, and the rest of the current one */
        fail("only %" PRId64 " IDs came from the buffered segments: %s", buffered, err.message);
    printf("outage: %" PRId64 " buffered IDs after the database went away\n", buffered);
    /* ... then calls fail quickly and clearly, and keep doing so */
    expect_failures(dal, name, 3000000000u, 10);
    run(av[4]);
    t0 = now_ns();
    while (dal_next_ids(dal, name, &id, 1, &err) != 0) {
        if (now_ns() - t0 > 30000000000u)
            fail("no IDs 30 s after the database came back: %s", err.message);
        sleep_ms(100);
    }
    if (id <= last)
        fail("an ID after the outage (%" PRId64 ") is not above the ones before", id);
    printf("outage: IDs resume %.1f s after the restart, at %" PRId64 "\n",
           (double)(now_ns() - t0) / 1e9, id);
    dal_close(dal);
    return 0;
}

/* ----------------------------------------------------------------- steps */

static int64_t max_id_now(dal_t *dal, const char *ds, const char *tag)
{
    dal_query_opts_t qo = { .datasource = ds };
    dal_value_t p = dal_str(tag);
    dal_error_t err = { 0 };
    dal_result_t *r = NULL;
    int64_t v;

    if (dal_query(dal, &qo, "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", &p, 1, &r,
                  &err) != 0 || dal_result_next(r, &err) != 1)
        fail("reading leaf_alloc: %s", err.message);
    v = dal_result_int(r, 0);
    dal_result_free(r);
    return v;
}

static int mode_steps(char **av)
{
    dal_t *dal = open_config(av[0]);
    int64_t count = parse_i64(av[4]), i, grow = 0;
    size_t nseg, s;
    seg_t *segs;

    for (i = 0; i < count; i++)
        draw_one(dal, av[1]);
    sleep_ms(300); /* let a prefetch in flight land in the table */
    segs = logged_segments(dal, av[2], av[3], &nseg);
    if (nseg < 4)
        fail("only %zu segments", nseg);
    for (s = 1; s < nseg; s++) {
        int64_t a = segs[s - 1].end - segs[s - 1].start, b = segs[s].end - segs[s].start;
        if (b < a)
            fail("the step shrank from %" PRId64 " to %" PRId64 " under a fast consumer", a, b);
        grow += b == 2 * a;
    }
    if (grow < 3)
        fail("the step doubled only %" PRId64 " times", grow);
    if (max_id_now(dal, av[2], av[3]) != segs[nseg - 1].end)
        fail("leaf_alloc.max_id is not the end of the last segment");
    printf("steps: %zu segments, sizes %" PRId64 " .. %" PRId64 ", doubled %" PRId64
           " times; leaf_alloc.max_id = %" PRId64 "\n", nseg, segs[0].end - segs[0].start,
           segs[nseg - 1].end - segs[nseg - 1].start, grow, segs[nseg - 1].end);
    free(segs);
    dal_close(dal);
    return 0;
}

/* ---------------------------------------------------------------- spread */

static int mode_spread(char **av)
{
    dal_t *dal = open_config(av[0]);
    int64_t count = parse_i64(av[2]), i;
    unsigned counts[100] = { 0 }, lo = UINT32_MAX, hi = 0;
    double expect = (double)count / 100.0;
    int r;

    for (i = 0; i < count; i++) {
        counts[draw_one(dal, av[1]) % 100]++;
        sleep_ms(1);
    }
    for (r = 0; r < 100; r++) {
        lo = counts[r] < lo ? counts[r] : lo;
        hi = counts[r] > hi ? counts[r] : hi;
    }
    if (lo == 0 || hi > 2 * expect)
        fail("IDs pile up mod 100: residues get %u .. %u of %" PRId64, lo, hi, count);
    printf("spread: %" PRId64 " slow snowflake IDs, each residue mod 100 got %u .. %u "
           "(expected %.0f)\n", count, lo, hi, expect);
    dal_close(dal);
    return 0;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int args; /* at least */
        int files; /* takes FILE... after them */
    } modes[] = {
        { "draw", 5, 0 }, { "check", 4, 1 }, { "above", 1, 1 }, { "unique", 1, 1 },
        { "outage", 5, 0 }, { "steps", 5, 0 }, { "spread", 3, 0 },
    };
    size_t m;
    int ac = argc - 2;
    char **av = argv + 2;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (m = 0; argc >= 2 && m < sizeof modes / sizeof modes[0]; m++)
        if (strcmp(argv[1], modes[m].name) == 0)
            break;
    if (argc < 2 || m == sizeof modes / sizeof modes[0] || ac < modes[m].args + modes[m].files ||
        (!modes[m].files && ac != modes[m].args))
        fail("usage: see the top of tests/live/idgen_stress.c");
    switch (m) {
    case 0: return mode_draw(av);
    case 1: return mode_check(av, ac);
    case 2: return mode_above(av, ac);
    case 3: return mode_unique(av, ac);
    case 4: return mode_outage(av);
    case 5: return mode_steps(av);
    default: return mode_spread(av);
    }
}
