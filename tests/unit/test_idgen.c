/*
 * test_idgen.c -- unit tests of the ID generators, without a server.
 *
 *   leaf       the built plugin (idgen_leaf.so from $DAL_PLUGIN_DIR), driven
 *              through the fake host with a fake database behind api->query
 *              that answers the plugin's statements and records every
 *              segment it hands out, can go down, hang, or lose races;
 *   snowflake  its source compiled in, so that a test clock can replace the
 *              wall clock (the .so exports nothing but dal_plugin_entry);
 *   core       [idgen] sections through config_load and the snapshot:
 *              loading, FILE:LINE errors, lookup, dal_next_ids.
 *
 * The database-backed behaviour against a real MariaDB (8 processes, kill -9,
 * outage) is tests/suites/idgen_test.sh.
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "testutil.h"

#include "../../plugins/idgen_snowflake.c"

#include "config.h"
#include "idgen.h"
#include "snapshot.h"
#include "snapshot_build.h"
#include "host.h"
#include "plugin_load.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t t_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Sort ids and fail on the first duplicate. */
static void assert_unique(int64_t *ids, size_t n)
{
    size_t i;

    qsort(ids, n, sizeof *ids, cmp_i64);
    for (i = 1; i < n; i++)
        ck_assert_msg(ids[i] != ids[i - 1], "duplicate ID %" PRId64, ids[i]);
}

/* ------------------------------------------------------- a fake database */

#define FDB_TAGS 4
#define FDB_RANGES 200000
#define FDB_WORKERS 8

typedef struct fdb_range {
    int64_t start, end;
} fdb_range_t;

/* The leaf table and the lease table, in memory, answering exactly the
 * statements the plugins send.  One per test process (Check forks). */
static struct fdb {
    pthread_mutex_t mu;
    char tag[FDB_TAGS][64];
    int64_t max_id[FDB_TAGS], step[FDB_TAGS];
    int ntags;
    int down;                 /* every statement fails as if the server were gone */
    int delay_ms;             /* every statement takes this long */
    int steal;                /* this many claims lose a race to "another process" */
    fdb_range_t *won;         /* segments handed out, in order */
    size_t nwon;
    fdb_range_t stolen[64];   /* segments the "other process" took */
    size_t nstolen;
    unsigned statements;
    int nworkers;             /* lease rows 0..nworkers-1 */
    char owner[FDB_WORKERS][128];
    uint64_t expires_ms[FDB_WORKERS];
} db = { .mu = PTHREAD_MUTEX_INITIALIZER };

typedef struct fres {
    int rows, pos;
    int64_t cols[2];
    uint64_t affected;
} fres_t;

static void fdb_reset(void)
{
    pthread_mutex_lock(&db.mu);
    free(db.won);
    db.won = calloc(FDB_RANGES, sizeof *db.won);
    db.ntags = db.down = db.delay_ms = db.steal = db.nworkers = 0;
    db.nwon = db.nstolen = 0;
    db.statements = 0;
    pthread_mutex_unlock(&db.mu);
    ck_assert_ptr_nonnull(db.won);
}

static void fdb_add_tag(const char *tag, int64_t max_id, int64_t step)
{
    pthread_mutex_lock(&db.mu);
    snprintf(db.tag[db.ntags], sizeof db.tag[0], "%s", tag);
    db.max_id[db.ntags] = max_id;
    db.step[db.ntags++] = step;
    pthread_mutex_unlock(&db.mu);
}

static void fdb_set(int *field, int value)
{
    pthread_mutex_lock(&db.mu);
    *field = value;
    pthread_mutex_unlock(&db.mu);
}

static size_t fdb_nwon(void)
{
    size_t n;

    pthread_mutex_lock(&db.mu);
    n = db.nwon;
    pthread_mutex_unlock(&db.mu);
    return n;
}

/* Size of segment k handed out (k < 0: counted from the last one). */
static int64_t fdb_step(long k)
{
    int64_t step;

    pthread_mutex_lock(&db.mu);
    if (k < 0)
        k += (long)db.nwon;
    ck_assert(k >= 0 && (size_t)k < db.nwon);
    step = db.won[k].end - db.won[k].start;
    pthread_mutex_unlock(&db.mu);
    return step;
}

static int is_text(const dal_value_t *v, const char *s)
{
    return v->type == DAL_TYPE_STRING && v->v.s.len == strlen(s) &&
           memcmp(v->v.s.ptr, s, v->v.s.len) == 0;
}

static int fdb_find_tag(const dal_value_t *v)
{
    int i;

    for (i = 0; i < db.ntags; i++)
        if (is_text(v, db.tag[i]))
            return i;
    return -1;
}

/* SELECT max_id, step FROM t WHERE biz_tag = p0 */
static void leaf_read(const dal_value_t *p, fres_t *r)
{
    int t = fdb_find_tag(&p[0]);

    r->rows = t >= 0;
    if (t >= 0) {
        r->cols[0] = db.max_id[t];
        r->cols[1] = db.step[t];
    }
}

/* UPDATE t SET max_id = p0 WHERE biz_tag = p1 AND max_id = p2 */
static void leaf_claim(const dal_value_t *p, fres_t *r)
{
    int t = fdb_find_tag(&p[1]);

    if (t < 0)
        return;
    if (db.steal > 0 && db.nstolen < N_ELEMS(db.stolen)) {
        /* another process moves max_id between the plugin's read and claim */
        db.steal--;
        db.stolen[db.nstolen].start = db.max_id[t];
        db.max_id[t] += db.step[t];
        db.stolen[db.nstolen++].end = db.max_id[t];
    }
    if (db.max_id[t] != p[2].v.i || db.nwon >= FDB_RANGES)
        return;
    db.won[db.nwon].start = db.max_id[t];
    db.won[db.nwon++].end = p[0].v.i;
    db.max_id[t] = p[0].v.i;
    r->affected = 1;
}

/* UPDATE t SET owner = p0, expires_at = now + p1 us WHERE expired ORDER BY worker_id LIMIT 1 */
static void lease_claim_row(const dal_value_t *p, fres_t *r, uint64_t now)
{
    int w;

    for (w = 0; w < db.nworkers; w++)
        if (db.expires_ms[w] < now) {
            snprintf(db.owner[w], sizeof db.owner[w], "%.*s", (int)p[0].v.s.len, p[0].v.s.ptr);
            db.expires_ms[w] = now + (uint64_t)p[1].v.i / 1000u;
            r->affected = 1;
            return;
        }
}

/* SELECT worker_id FROM t WHERE owner = p0 ... */
static void lease_find_row(const dal_value_t *p, fres_t *r)
{
    int w;

    for (w = 0; w < db.nworkers && !r->rows; w++)
        if (is_text(&p[0], db.owner[w])) {
            r->rows = 1;
            r->cols[0] = w;
        }
}

/* UPDATE t SET expires_at = now + p0 us WHERE worker_id = p1 AND owner = p2 */
static void lease_renew_row(const dal_value_t *p, fres_t *r, uint64_t now)
{
    int64_t w = p[1].v.i;

    if (w >= 0 && w < db.nworkers && is_text(&p[2], db.owner[w])) {
        db.expires_ms[w] = now + (uint64_t)p[0].v.i / 1000u;
        r->affected = 1;
    }
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Answer one statement; 0, or -1 for SQL the fake does not know. */
static int fdb_answer(const char *sql, const dal_value_t *p, fres_t *r)
{
    uint64_t now = t_now_ns() / 1000000u;

    if (starts(sql, "SELECT max_id, step FROM `leaf_alloc` WHERE biz_tag = ?"))
        leaf_read(p, r);
    else if (starts(sql, "UPDATE `leaf_alloc` SET max_id = ? WHERE biz_tag = ? AND max_id = ?"))
        leaf_claim(p, r);
    else if (starts(sql, "UPDATE `dal_worker_lease` SET owner = ?"))
        lease_claim_row(p, r, now);
    else if (starts(sql, "SELECT worker_id FROM `dal_worker_lease` WHERE owner = ?"))
        lease_find_row(p, r);
    else if (starts(sql, "UPDATE `dal_worker_lease` SET expires_at = "))
        lease_renew_row(p, r, now);
    else
        return -1;
    return 0;
}

static const dal_host_api_t *base_api(void)
{
    return fake_host_api();
}

static int fdb_query(dal_host_t *host, const char *ds, const char *sql,
                     const dal_value_t *params, size_t nparams, dal_result_t **out,
                     dal_error_t *err)
{
    fres_t *r = calloc(1, sizeof *r);
    int delay, down, rc = 0;

    (void)host, (void)nparams;
    *out = NULL;
    ck_assert_ptr_nonnull(r);
    pthread_mutex_lock(&db.mu);
    db.statements++;
    delay = db.delay_ms;
    down = db.down;
    pthread_mutex_unlock(&db.mu);
    if (delay > 0)
        idgen_sleep_ms(delay);
    if (down) {
        free(r);
        return base_api()->set_error(err, DAL_ECONNECT, "fake: datasource %s is down", ds);
    }
    pthread_mutex_lock(&db.mu);
    if (fdb_answer(sql, params, r) != 0)
        rc = base_api()->set_error(err, DAL_ESQL, "fake: unexpected SQL: %s", sql);
    pthread_mutex_unlock(&db.mu);
    if (rc != 0) {
        free(r);
        return rc;
    }
    *out = (dal_result_t *)r;
    return 0;
}

static int fres_next(dal_result_t *res, dal_error_t *err)
{
    fres_t *r = (fres_t *)res;

    (void)err;
    return r->pos++ < r->rows ? 1 : 0;
}

static int64_t fres_int(const dal_result_t *res, size_t col)
{
    return ((const fres_t *)res)->cols[col];
}

static uint64_t fres_affected(const dal_result_t *res)
{
    return ((const fres_t *)res)->affected;
}

static void fres_free(dal_result_t *res)
{
    free(res);
}

/* Log lines from the plugins' threads, under a lock (the fake host's own
 * log is for one thread). */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[16384];

static void t_log(dal_host_t *host, dal_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    size_t len;

    (void)host;
    pthread_mutex_lock(&log_mu);
    len = strlen(log_text);
    if (len + 2 < sizeof log_text) {
        len += (size_t)snprintf(log_text + len, sizeof log_text - len, "%d: ", (int)level);
        if (len < sizeof log_text) {
            va_start(ap, fmt);
            vsnprintf(log_text + len, sizeof log_text - len, fmt, ap);
            va_end(ap);
        }
        len = strlen(log_text);
        if (len + 1 < sizeof log_text)
            strcat(log_text, "\n");
    }
    pthread_mutex_unlock(&log_mu);
}

static int log_has(const char *needle)
{
    int found;

    pthread_mutex_lock(&log_mu);
    found = strstr(log_text, needle) != NULL;
    pthread_mutex_unlock(&log_mu);
    return found;
}

/* The DAL_EVENT_IDGEN events the plugins emit (from their loader threads). */
static struct {
    pthread_mutex_t mu;
    size_t n, failed;        /* events; those with an error_code */
    uint64_t rows[256];      /* rows of the successful ones, in order */
    char table[64], datasource[64];
    int other_types;
} evs = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void t_emit(dal_host_t *host, const dal_event_t *ev)
{
    (void)host;
    pthread_mutex_lock(&evs.mu);
    if (ev->type != DAL_EVENT_IDGEN) {
        evs.other_types++;
    } else if (ev->error_code != 0) {
        evs.failed++;
        evs.n++;
    } else {
        if (evs.n - evs.failed < N_ELEMS(evs.rows))
            evs.rows[evs.n - evs.failed] = ev->rows;
        evs.n++;
    }
    snprintf(evs.table, sizeof evs.table, "%s", ev->table ? ev->table : "(null)");
    snprintf(evs.datasource, sizeof evs.datasource, "%s", ev->datasource ? ev->datasource : "(null)");
    pthread_mutex_unlock(&evs.mu);
}

/* Each segment the fake database handed out was reported once, in order,
 * with its size, the [idgen] name and the datasource. */
static void check_segment_events(const char *name)
{
    size_t k, won = fdb_nwon();

    pthread_mutex_lock(&evs.mu);
    ck_assert_int_eq(evs.other_types, 0);
    ck_assert_uint_eq(evs.n - evs.failed, won);
    for (k = 0; k < won && k < N_ELEMS(evs.rows); k++)
        ck_assert_uint_eq(evs.rows[k], (uint64_t)fdb_step((long)k));
    ck_assert_str_eq(evs.table, name);
    ck_assert_str_eq(evs.datasource, "leafdb");
    pthread_mutex_unlock(&evs.mu);
}

static dal_host_api_t test_api;

static void api_init(void)
{
    test_api = *fake_host_api();
    test_api.log = t_log;
    test_api.query = fdb_query;
    test_api.result_next = fres_next;
    test_api.result_int = fres_int;
    test_api.result_affected_rows = fres_affected;
    test_api.result_free = fres_free;
    test_api.emit = t_emit;
    log_text[0] = '\0';
    pthread_mutex_lock(&evs.mu);
    evs.n = evs.failed = 0;
    evs.other_types = 0;
    evs.table[0] = evs.datasource[0] = '\0';
    pthread_mutex_unlock(&evs.mu);
}

static void fixture_setup(void)
{
    api_init();
    fdb_reset();
}

static void fixture_teardown(void)
{
    free(db.won);
    db.won = NULL;
}

/* ------------------------------------------------------------ instances */

typedef struct inst {
    const dal_idgen_ops_t *ops;
    dal_host_t *host;
    dal_plugin_params_t *params;
    void *self;
} inst_t;

static fake_plugin_t leaf_so; /* loaded on first use */

static const dal_plugin_t *leaf_desc(void)
{
    char path[4096];
    dal_error_t err = { 0 };

    if (leaf_so.handle == NULL) {
        ck_assert(fake_plugin_path(path, sizeof path, tu_env("DAL_PLUGIN_DIR"), DAL_PLUGIN_IDGEN,
                                   "leaf") == 0);
        ck_assert_msg(fake_plugin_open(path, DAL_PLUGIN_IDGEN, "leaf", &leaf_so, &err) == 0, "%s",
                      err.message);
    }
    return leaf_so.desc;
}

/* Create an instance for section name; returns create's code. */
static int inst_try(inst_t *in, const dal_plugin_t *desc, const char *name,
                    const fake_param_t *items, size_t n, dal_error_t *err)
{
    memset(in, 0, sizeof *in);
    in->ops = desc->ops;
    in->host = fake_host_new();
    in->params = fake_params_new(desc->params, items, n, err);
    ck_assert_msg(in->params != NULL, "%s", err->message);
    return in->ops->create(&test_api, in->host, name, in->params, &in->self, err);
}

static void inst_new(inst_t *in, const dal_plugin_t *desc, const char *name,
                     const fake_param_t *items, size_t n)
{
    dal_error_t err = { 0 };

    ck_assert_msg(inst_try(in, desc, name, items, n, &err) == 0, "create: %s", err.message);
}

static void inst_free(inst_t *in)
{
    if (in->self != NULL)
        in->ops->destroy(in->self);
    /* a plugin reads only what it declared, in the declared type */
    ck_assert_uint_eq(fake_params_misses(in->params), 0);
    fake_params_free(in->params);
    fake_host_free(in->host);
}

static int draw(const inst_t *in, int64_t *ids, size_t n, dal_error_t *err)
{
    return in->ops->next(in->self, ids, n, err);
}

static int64_t draw1(const inst_t *in)
{
    dal_error_t err = { 0 };
    int64_t id = 0;

    ck_assert_msg(draw(in, &id, 1, &err) == 0, "next: %s", err.message);
    return id;
}

/* Every one of the sorted ids lies in a segment the fake database handed out. */
static void assert_in_won(const int64_t *ids, size_t n)
{
    size_t i, r = 0;

    pthread_mutex_lock(&db.mu);
    for (i = 0; i < n; i++) {
        while (r < db.nwon && db.won[r].end <= ids[i])
            r++;
        ck_assert_msg(r < db.nwon && db.won[r].start <= ids[i],
                      "ID %" PRId64 " is in no reserved segment", ids[i]);
    }
    pthread_mutex_unlock(&db.mu);
}

static void wait_for_segments(size_t n)
{
    uint64_t deadline = t_now_ns() + 2000000000u;

    while (fdb_nwon() < n && t_now_ns() < deadline)
        idgen_sleep_ms(1);
    ck_assert_uint_ge(fdb_nwon(), n);
}

/* ------------------------------------------------------------------ leaf */

#define P(name, value) { name, 0, value }

START_TEST(leaf_sequential)
{
    const fake_param_t ps[] = { P("datasource", "leafdb") };
    inst_t in;
    int64_t i;

    fdb_add_tag("sku", 1, 1000);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    /* one consumer, one process: segments are contiguous and nothing is lost */
    for (i = 1; i <= 5000; i++)
        ck_assert_int_eq(draw1(&in), i);
    inst_free(&in);
    ck_assert_int_eq(db.won[0].start, 1);
    ck_assert_int_eq(fdb_step(0), 1000);
    /* consumed in far less than segment_duration: the step doubled */
    ck_assert_int_eq(fdb_step(1), 2000);
    check_segment_events("sku");
}
END_TEST

/* A host from before the emit service: the plugin must not call past the
 * end of its table. */
START_TEST(leaf_old_host_gets_no_events)
{
    const fake_param_t ps[] = { P("datasource", "leafdb") };
    inst_t in;
    int64_t i;

    test_api.struct_size = (uint32_t)offsetof(dal_host_api_t, emit);
    fdb_add_tag("sku", 1, 100);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    for (i = 1; i <= 500; i++)
        ck_assert_int_eq(draw1(&in), i);
    inst_free(&in);
    ck_assert_uint_ge(fdb_nwon(), 2);
    pthread_mutex_lock(&evs.mu);
    ck_assert_uint_eq(evs.n, 0);
    pthread_mutex_unlock(&evs.mu);
}
END_TEST

START_TEST(leaf_biz_tag_and_batches)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("biz_tag", "order_id"),
                                P("max_step", "100") };
    int64_t ids[250], expect = 1;
    dal_error_t err = { 0 };
    inst_t in;
    size_t i;
    int round;

    fdb_add_tag("order_id", 1, 100);
    inst_new(&in, leaf_desc(), "orders", ps, N_ELEMS(ps));
    /* batches straddle segment switches and stay increasing and contiguous */
    for (round = 0; round < 40; round++) {
        ck_assert_msg(draw(&in, ids, N_ELEMS(ids), &err) == 0, "%s", err.message);
        for (i = 0; i < N_ELEMS(ids); i++)
            ck_assert_int_eq(ids[i], expect++);
    }
    ck_assert_int_eq(draw(&in, ids, 0, &err), 0);
    inst_free(&in);
}
END_TEST

#define T_THREADS 8
#define T_PER_THREAD 40000

typedef struct worker_arg {
    const inst_t *in;
    int64_t *ids;  /* T_PER_THREAD of them */
    int failed;
    char msg[DAL_ERROR_MSG_MAX];
} worker_arg_t;

/* Draw in a mix of single IDs and batches; each thread's IDs must increase. */
static void *leaf_worker(void *p)
{
    worker_arg_t *a = p;
    dal_error_t err = { 0 };
    size_t done = 0, k, i;

    while (done < T_PER_THREAD && !a->failed) {
        k = done % 7 == 3 ? 13 : 1;
        if (k > T_PER_THREAD - done)
            k = T_PER_THREAD - done;
        if (a->in->ops->next(a->in->self, a->ids + done, k, &err) != 0) {
            a->failed = 1;
            snprintf(a->msg, sizeof a->msg, "%s", err.message);
        }
        for (i = done ? done : 1; i < done + k && !a->failed; i++)
            if (a->ids[i] <= a->ids[i - 1]) {
                a->failed = 1;
                snprintf(a->msg, sizeof a->msg, "not increasing at %zu", i);
            }
        done += k;
    }
    return NULL;
}

/* Run T_THREADS draw threads on in; returns all IDs (caller frees). */
static int64_t *run_threads(const inst_t *in, void *(*fn)(void *))
{
    int64_t *all = calloc(T_THREADS * T_PER_THREAD, sizeof *all);
    worker_arg_t args[T_THREADS];
    pthread_t th[T_THREADS];
    int i;

    ck_assert_ptr_nonnull(all);
    for (i = 0; i < T_THREADS; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].in = in;
        args[i].ids = all + (size_t)i * T_PER_THREAD;
        ck_assert_int_eq(pthread_create(&th[i], NULL, fn, &args[i]), 0);
    }
    for (i = 0; i < T_THREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(!args[i].failed, "thread %d: %s", i, args[i].msg);
    }
    return all;
}

START_TEST(leaf_threads_unique)
{
    /* tiny segments: thousands of switches under contention */
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("max_step", "200") };
    int64_t *all;
    inst_t in;

    fdb_add_tag("sku", 1, 50);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    all = run_threads(&in, leaf_worker);
    inst_free(&in);
    assert_unique(all, T_THREADS * T_PER_THREAD);
    assert_in_won(all, T_THREADS * T_PER_THREAD);
    free(all);
}
END_TEST

START_TEST(leaf_step_grows_to_cap_and_floor_wins)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("max_step", "1600") };
    inst_t in;
    size_t k;
    int i;

    fdb_add_tag("sku", 1, 100);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    for (i = 0; i < 10000; i++)
        draw1(&in);
    for (k = 0; k < 6; k++)
        ck_assert_int_eq(fdb_step((long)k), k < 4 ? 100 << k : 1600);
    /* the table's step is the floor, even above max_step */
    pthread_mutex_lock(&db.mu);
    db.step[0] = 5000;
    k = db.nwon;
    pthread_mutex_unlock(&db.mu);
    for (i = 0; i < 4000; i++)
        draw1(&in);
    ck_assert_uint_gt(fdb_nwon(), k);
    ck_assert_int_eq(fdb_step(-1), 5000);
    inst_free(&in);
}
END_TEST

/* Use up the current segment (and trigger the next reservation). */
static void drain_segment(const inst_t *in)
{
    int64_t first = draw1(in), id;
    size_t r;

    pthread_mutex_lock(&db.mu);
    for (r = 0; r < db.nwon && !(db.won[r].start <= first && first < db.won[r].end); r++)
        ;
    id = db.won[r].end;
    pthread_mutex_unlock(&db.mu);
    while (draw1(in) < id - 1)
        ;
}

START_TEST(leaf_step_shrinks_when_slow)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("segment_duration", "30ms") };
    int64_t grown, last;
    inst_t in;
    int i;

    fdb_add_tag("sku", 1, 100);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    for (i = 0; i < 4; i++)
        drain_segment(&in);
    grown = fdb_step(-1);
    ck_assert_int_ge(grown, 400);
    /* segments now last longer than twice segment_duration: halve, to the floor */
    for (i = 0; i < 8; i++) {
        idgen_sleep_ms(80);
        drain_segment(&in);
    }
    inst_free(&in);
    last = fdb_step(-1);
    ck_assert_int_eq(last, 100);
}
END_TEST

START_TEST(leaf_prefetch_keeps_db_off_the_switch)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("max_step", "1000") };
    unsigned before;
    inst_t in;
    int i;

    fdb_add_tag("sku", 1, 1000);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    for (i = 1; i <= 101; i++) /* ID 101 is 10% into [1, 1001) */
        ck_assert_int_eq(draw1(&in), i);
    wait_for_segments(2);
    pthread_mutex_lock(&db.mu);
    before = db.statements;
    pthread_mutex_unlock(&db.mu);
    for (i = 102; i <= 1050; i++) /* across the switch, short of 10% of the next */
        ck_assert_int_eq(draw1(&in), i);
    pthread_mutex_lock(&db.mu);
    ck_assert_uint_eq(db.statements, before);
    pthread_mutex_unlock(&db.mu);
    inst_free(&in);
}
END_TEST

START_TEST(leaf_outage_buffered_then_clear_error_then_resume)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("max_step", "100"),
                                P("wait_timeout", "300ms") };
    dal_error_t err = { 0 };
    int64_t id, last = 0;
    uint64_t t0, took;
    inst_t in;
    int i;

    fdb_add_tag("sku", 1, 100);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    for (i = 0; i < 20; i++)
        last = draw1(&in);
    wait_for_segments(2);           /* [1, 101) in use, [101, 201) buffered */
    fdb_set(&db.down, 1);
    while ((t0 = t_now_ns(), draw(&in, &id, 1, &err)) == 0) {
        ck_assert_int_gt(id, last);
        last = id;
    }
    took = t_now_ns() - t0;
    ck_assert_int_eq(last, 200);    /* every buffered ID, and not one more */
    ck_assert_int_eq(err.code, DAL_ECONNECT);
    ck_assert_msg(strstr(err.message, "both segments are used up") &&
                  strstr(err.message, "datasource leafdb is down"), "%s", err.message);
    ck_assert_msg(took < 1000000000u, "the failing call took %" PRIu64 " ns", took);
    /* while it stays down, callers keep failing fast, never hanging */
    t0 = t_now_ns();
    for (i = 0; i < 50; i++)
        ck_assert_int_ne(draw(&in, &id, 1, &err), 0);
    ck_assert_uint_lt(t_now_ns() - t0, 3000000000u);
    fdb_set(&db.down, 0);
    idgen_sleep_ms(150);            /* past the retry interval */
    id = draw1(&in);
    ck_assert_int_ge(id, 201);
    ck_assert(log_has("cannot reserve a segment"));
    inst_free(&in);
    /* the failed reservations were reported too, apart from the segments */
    pthread_mutex_lock(&evs.mu);
    ck_assert_uint_ge(evs.failed, 1);
    pthread_mutex_unlock(&evs.mu);
    check_segment_events("sku");
}
END_TEST

START_TEST(leaf_hung_db_bounded_wait)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("wait_timeout", "100ms") };
    dal_error_t err = { 0 };
    uint64_t t0, took;
    int64_t id;
    inst_t in;

    fdb_add_tag("sku", 1, 100);
    fdb_set(&db.delay_ms, 1500);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    t0 = t_now_ns();
    ck_assert_int_ne(draw(&in, &id, 1, &err), 0);
    took = t_now_ns() - t0;
    ck_assert_msg(took >= 90000000u && took < 600000000u, "waited %" PRIu64 " ns", took);
    ck_assert_msg(strstr(err.message, "within 100 ms"), "%s", err.message);
    inst_free(&in);
}
END_TEST

START_TEST(leaf_lost_races_are_skipped)
{
    const fake_param_t ps[] = { P("datasource", "leafdb"), P("max_step", "100") };
    inst_t in;
    size_t s;
    int64_t id;
    int i;

    fdb_add_tag("sku", 1, 100);
    fdb_set(&db.steal, 3);
    inst_new(&in, leaf_desc(), "sku", ps, N_ELEMS(ps));
    for (i = 0; i < 150; i++) {
        id = draw1(&in);
        pthread_mutex_lock(&db.mu);
        for (s = 0; s < db.nstolen; s++)
            ck_assert_msg(id < db.stolen[s].start || id >= db.stolen[s].end,
                          "ID %" PRId64 " is in another process's segment", id);
        pthread_mutex_unlock(&db.mu);
    }
    inst_free(&in);
    ck_assert_uint_eq(db.nstolen, 3);
    ck_assert_int_eq(db.won[0].start, 301);
}
END_TEST

START_TEST(leaf_unknown_biz_tag)
{
    const fake_param_t ps[] = { P("datasource", "leafdb") };
    dal_error_t err = { 0 };
    int64_t id;
    inst_t in;

    inst_new(&in, leaf_desc(), "ghost", ps, N_ELEMS(ps));
    ck_assert_int_eq(draw(&in, &id, 1, &err), DAL_ECONFIG);
    ck_assert_msg(strstr(err.message, "biz tag 'ghost' is not in") &&
                  strstr(err.message, "dal idgen init"), "%s", err.message);
    inst_free(&in);
}
END_TEST

static const struct {
    fake_param_t bad;
    const char *msg;
} leaf_bad[] = {
    { P("table", "leaf`; DROP"), "is not a plain table name" },
    { P("biz_tag", ""), "biz_tag must have 1 to 128 characters" },
    { P("step", "0"), "step and max_step must be 1" },
    { P("max_step", "3000000000"), "step and max_step must be 1" },
    { P("prefetch", "1"), "prefetch must be at least 0 and below 1" },
    { P("prefetch", "-0.5"), "prefetch must be at least 0 and below 1" },
    { P("segment_duration", "0"), "segment_duration and wait_timeout must be > 0" },
    { P("wait_timeout", "0ms"), "segment_duration and wait_timeout must be > 0" },
};

START_TEST(leaf_bad_parameters)
{
    fake_param_t ps[2] = { P("datasource", "leafdb") };
    dal_error_t err = { 0 };
    inst_t in;

    ps[1] = leaf_bad[_i].bad;
    ck_assert_int_eq(inst_try(&in, leaf_desc(), "sku", ps, 2, &err), DAL_ECONFIG);
    ck_assert_msg(strstr(err.message, leaf_bad[_i].msg), "%s", err.message);
    ck_assert_ptr_null(in.self);
    inst_free(&in);
}
END_TEST

/* ------------------------------------------------------------- snowflake */

#define EPOCH_2020 INT64_C(1577836800000) /* the default epoch, 2020-01-01 UTC */

/* A clock the test moves.  Pauses move it too (by the pause, or 1 ms for a
 * spin), unless frozen. */
typedef struct tclock {
    int64_t now;
    int pauses;
    int frozen;
} tclock_t;

static int64_t tclock_now(void *ctx)
{
    return ((tclock_t *)ctx)->now;
}

static void tclock_pause(void *ctx, int64_t ms)
{
    tclock_t *c = ctx;

    c->pauses++;
    if (!c->frozen)
        c->now += ms > 0 ? ms : 1;
}

/* A snowflake instance on the test clock c (NULL: the real clock). */
static snowflake_t *sf_new(inst_t *in, const fake_param_t *ps, size_t n, tclock_t *c)
{
    snowflake_t *f;

    inst_new(in, &sf_plugin, "sf", ps, n);
    f = in->self;
    if (c != NULL) {
        f->clock.now_ms = tclock_now;
        f->clock.pause_ms = tclock_pause;
        f->clock.ctx = c;
    }
    return f;
}

#define SF_MS(id) ((id) >> 22)
#define SF_WORKER(id) (((id) >> 12) & 1023)
#define SF_SEQ(id) ((id) & 4095)

START_TEST(sf_layout)
{
    const fake_param_t ps[] = { P("worker_id", "5") };
    tclock_t c = { EPOCH_2020 + 123456, 0, 0 };
    int64_t id;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    id = draw1(&in);
    ck_assert_int_gt(id, 0);
    /* a worker id's first millisecond in an instance is the one after its
     * first call: an earlier instance may have used the current one */
    ck_assert_int_eq(c.pauses, 1);
    ck_assert_int_eq(SF_MS(id), 123457);
    ck_assert_int_eq(SF_WORKER(id), 5);
    ck_assert_int_lt(SF_SEQ(id), 128);
    ck_assert_int_eq(draw1(&in), id + 1); /* same millisecond: the next sequence */
    inst_free(&in);
}
END_TEST

START_TEST(sf_custom_epoch)
{
    const fake_param_t ps[] = { P("worker_id", "1023"), P("epoch", "2024-02-29 12:00:00") };
    tclock_t c = { INT64_C(1709208000000) + 42, 0, 0 };
    int64_t id;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    id = draw1(&in);
    ck_assert_int_eq(SF_MS(id), 43);
    ck_assert_int_eq(SF_WORKER(id), 1023);
    inst_free(&in);
}
END_TEST

START_TEST(sf_sequence_runs_out_then_next_ms)
{
    const fake_param_t ps[] = { P("worker_id", "1") };
    tclock_t c = { EPOCH_2020 + 1000, 0, 0 };
    static int64_t ids[20000];
    dal_error_t err = { 0 };
    size_t i;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    for (i = 0; i < 10000; i++)
        ids[i] = draw1(&in);
    ck_assert_msg(draw(&in, ids + 10000, 10000, &err) == 0, "%s", err.message);
    /* the clock only moved when the generator spun for the next millisecond */
    ck_assert_int_ge(c.pauses, 5);
    ck_assert_int_le(c.pauses, 7);
    for (i = 1; i < N_ELEMS(ids); i++) {
        ck_assert_int_gt(ids[i], ids[i - 1]);
        ck_assert_int_ge(SF_MS(ids[i]), SF_MS(ids[i - 1]));
    }
    inst_free(&in);
}
END_TEST

START_TEST(sf_small_step_back_is_waited_for)
{
    const fake_param_t ps[] = { P("worker_id", "3") };
    tclock_t c = { EPOCH_2020 + 5000, 0, 0 };
    int64_t a, b;
    int before;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    a = draw1(&in);
    before = c.pauses;
    c.now -= 5; /* as far back as max_backward allows */
    b = draw1(&in);
    ck_assert_int_eq(c.pauses - before, 1);
    ck_assert_int_gt(b, a);
    inst_free(&in);
}
END_TEST

START_TEST(sf_big_step_back_is_an_error)
{
    const fake_param_t ps[] = { P("worker_id", "4") };
    tclock_t c = { EPOCH_2020 + 5000, 0, 0 };
    dal_error_t err = { 0 };
    int64_t a, b = 0;
    int before;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    a = draw1(&in);
    before = c.pauses;
    c.now -= 6;
    ck_assert_int_eq(draw(&in, &b, 1, &err), DAL_ESTATE);
    ck_assert_msg(strstr(err.message, "the clock moved back by 6 ms"), "%s", err.message);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(c.pauses, before); /* refused at once, no waiting */
    c.now += 7;
    ck_assert_int_gt(draw1(&in), a);
    inst_free(&in);
}
END_TEST

START_TEST(sf_clock_stuck_behind_is_an_error)
{
    const fake_param_t ps[] = { P("worker_id", "6") };
    tclock_t c = { EPOCH_2020 + 5000, 0, 0 };
    dal_error_t err = { 0 };
    int64_t id;
    int before;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    draw1(&in);
    before = c.pauses;
    c.frozen = 1; /* from now on waiting does not bring the clock back */
    c.now -= 3;
    ck_assert_int_eq(draw(&in, &id, 1, &err), DAL_ESTATE);
    ck_assert_msg(strstr(err.message, "stays behind"), "%s", err.message);
    ck_assert_int_eq(c.pauses - before, 3);
    inst_free(&in);
}
END_TEST

START_TEST(sf_before_epoch_is_an_error)
{
    const fake_param_t ps[] = { P("worker_id", "8") };
    tclock_t c = { EPOCH_2020 - 1, 0, 0 };
    dal_error_t err = { 0 };
    int64_t id;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), &c);
    ck_assert_int_eq(draw(&in, &id, 1, &err), DAL_ESTATE);
    ck_assert_msg(strstr(err.message, "before the snowflake epoch"), "%s", err.message);
    inst_free(&in);
}
END_TEST

/* IDs made one every few milliseconds, as at low traffic, and how many of
 * the 100 residues mod 100 they reach; counts[] gets the histogram. */
static int spread_mod100(const char *worker, const char *offset, unsigned counts[100],
                         unsigned n)
{
    const fake_param_t ps[] = { P("worker_id", worker), P("sequence_offset", offset) };
    tclock_t c = { EPOCH_2020 + 86400000, 0, 0 };
    int used = 0, i;
    unsigned k;
    inst_t in;

    memset(counts, 0, 100 * sizeof counts[0]);
    sf_new(&in, ps, N_ELEMS(ps), &c);
    for (k = 0; k < n; k++) {
        c.now += 1 + (int64_t)(mix64(k) % 5);
        counts[draw1(&in) % 100]++;
    }
    inst_free(&in);
    for (i = 0; i < 100; i++)
        used += counts[i] > 0;
    return used;
}

START_TEST(sf_slow_ids_spread_over_mod_100)
{
    unsigned counts[100];
    int i;

    /* without the random start they reach only 25 shards (2^22 % 100 == 4) */
    ck_assert_int_le(spread_mod100("7", "0", counts, 20000), 25);
    ck_assert_int_eq(spread_mod100("10", "128", counts, 100000), 100);
    for (i = 0; i < 100; i++) /* 1000 expected each; 5 standard deviations is ~160 */
        ck_assert_msg(counts[i] > 800 && counts[i] < 1200, "residue %d: %u of 100000", i,
                      counts[i]);
}
END_TEST

static void *sf_worker_thread(void *p)
{
    worker_arg_t *a = p;
    dal_error_t err = { 0 };
    size_t i;

    for (i = 0; i < T_PER_THREAD && !a->failed; i++) {
        if (a->in->ops->next(a->in->self, a->ids + i, 1, &err) != 0) {
            a->failed = 1;
            snprintf(a->msg, sizeof a->msg, "%s", err.message);
        } else if (i > 0 && a->ids[i] <= a->ids[i - 1]) {
            a->failed = 1;
            snprintf(a->msg, sizeof a->msg, "not increasing at %zu", i);
        }
    }
    return NULL;
}

START_TEST(sf_threads_unique)
{
    const fake_param_t ps[] = { P("worker_id", "9") };
    int64_t *all;
    inst_t in;

    sf_new(&in, ps, N_ELEMS(ps), NULL); /* the real clock */
    all = run_threads(&in, sf_worker_thread);
    inst_free(&in);
    assert_unique(all, T_THREADS * T_PER_THREAD);
    free(all);
}
END_TEST

/* Two instances on one worker id at once, as the old and the new instance
 * of a configuration reload are: one sequence, no duplicate. */
START_TEST(sf_instances_share_a_worker_id)
{
    const fake_param_t ps[] = { P("worker_id", "20") };
    tclock_t c = { EPOCH_2020 + 7000, 0, 0 };
    int64_t ids[3000];
    inst_t a, b;
    size_t i;

    sf_new(&a, ps, N_ELEMS(ps), &c);
    sf_new(&b, ps, N_ELEMS(ps), &c);
    for (i = 0; i < N_ELEMS(ids); i++)
        ids[i] = draw1(i % 3 ? &a : &b);
    inst_free(&a);
    /* and one made after the other is gone, at the same millisecond */
    sf_new(&a, ps, N_ELEMS(ps), &c);
    ck_assert_int_gt(draw1(&a), ids[N_ELEMS(ids) - 1]);
    inst_free(&a);
    inst_free(&b);
    assert_unique(ids, N_ELEMS(ids));
}
END_TEST

static const struct {
    fake_param_t a, b;
    const char *msg;
} sf_bad[] = {
    { P("epoch", "2020-01-01"), P("sequence_offset", "0"), "give either worker_id or "
      "lease_datasource (to lease a worker id from a table), not neither" },
    { P("worker_id", "1"), P("lease_datasource", "db"), "not both" },
    { P("worker_id", "1024"), P("epoch", "2020-01-01"), "worker_id 1024 is not in 0..1023" },
    { P("worker_id", "-1"), P("epoch", "2020-01-01"), "worker_id -1 is not in 0..1023" },
    { P("worker_id", "1"), P("epoch", "2020-13-01"), "is not a UTC date" },
    { P("worker_id", "1"), P("epoch", "yesterday"), "is not a UTC date" },
    { P("worker_id", "1"), P("epoch", "2999-01-01"), "is in the future" },
    { P("worker_id", "1"), P("sequence_offset", "1025"), "sequence_offset must be 0..1024" },
    { P("worker_id", "1"), P("max_backward", "2s"), "max_backward must be at most 1s" },
    { P("lease_datasource", "db"), P("lease_time", "500ms"), "lease_time must be at least 1s" },
    { P("lease_datasource", "db"), P("lease_table", "a b"), "is not a plain table name" },
};

START_TEST(sf_bad_parameters)
{
    fake_param_t ps[2];
    dal_error_t err = { 0 };
    inst_t in;

    ps[0] = sf_bad[_i].a;
    ps[1] = sf_bad[_i].b;
    ck_assert_int_eq(inst_try(&in, &sf_plugin, "sf", ps, 2, &err), DAL_ECONFIG);
    ck_assert_msg(strstr(err.message, sf_bad[_i].msg), "%s", err.message);
    inst_free(&in);
}
END_TEST

static const struct {
    const char *text;
    int64_t ms; /* -1: refused */
} epochs[] = {
    { "2020-01-01", EPOCH_2020 },
    { "2020-01-01 00:00:01", EPOCH_2020 + 1000 },
    { "2020-01-01T00:01:00Z", EPOCH_2020 + 60000 },
    { "2020-01-01T00:01:00", EPOCH_2020 + 60000 },
    { "1970-01-01", 0 },
    { "2020-01-01x", -1 },
    { "2020-01-01 10:00", -1 },
    { "2020-01-01 25:00:00", -1 },
    { "2020-00-10", -1 },
    { "1969-12-31", -1 },
    { "", -1 },
};

START_TEST(sf_epoch_parsing)
{
    int64_t ms = -1;
    int rc = parse_epoch(epochs[_i].text, &ms);

    if (epochs[_i].ms < 0) {
        ck_assert_msg(rc != 0, "'%s' was accepted", epochs[_i].text);
    } else {
        ck_assert_msg(rc == 0, "'%s' was refused", epochs[_i].text);
        ck_assert_int_eq(ms, epochs[_i].ms);
    }
}
END_TEST

/* Lease against the fake table: distinct ids, none when all are taken. */
START_TEST(sf_lease_distinct_workers)
{
    const fake_param_t ps[] = { P("lease_datasource", "leafdb"), P("lease_time", "2s"),
                                P("wait_timeout", "1s") };
    dal_error_t err = { 0 };
    inst_t a, b, c;
    int64_t ida, idb, id;

    fdb_set(&db.nworkers, 2);
    sf_new(&a, ps, N_ELEMS(ps), NULL);
    sf_new(&b, ps, N_ELEMS(ps), NULL);
    sf_new(&c, ps, N_ELEMS(ps), NULL);
    ida = draw1(&a);
    idb = draw1(&b);
    ck_assert_int_ne(SF_WORKER(ida), SF_WORKER(idb));
    ck_assert_int_ne(draw(&c, &id, 1, &err), 0);
    ck_assert_msg(strstr(err.message, "no free worker id"), "%s", err.message);
    inst_free(&a);
    inst_free(&b);
    inst_free(&c);
}
END_TEST

START_TEST(sf_lease_outage_expires_then_resumes)
{
    const fake_param_t ps[] = { P("lease_datasource", "leafdb"), P("lease_time", "1s"),
                                P("wait_timeout", "500ms") };
    dal_error_t err = { 0 };
    uint64_t t0, last_ok;
    int64_t id;
    inst_t in;
    int worker;

    fdb_set(&db.nworkers, 4);
    t0 = t_now_ns();
    sf_new(&in, ps, N_ELEMS(ps), NULL);
    worker = (int)SF_WORKER(draw1(&in));
    fdb_set(&db.down, 1);
    /* the lease is good locally for 4/5 of a second since it was taken, so
     * no ID comes once the table could give the worker id to someone else */
    last_ok = t_now_ns();
    while (draw(&in, &id, 1, &err) == 0) {
        last_ok = t_now_ns();
        idgen_sleep_ms(5);
    }
    ck_assert_uint_lt(last_ok - t0, 1000000000u);
    ck_assert_uint_lt(t_now_ns() - t0, 3000000000u);
    ck_assert_msg(strstr(err.message, "no worker id lease") &&
                  strstr(err.message, "is down"), "%s", err.message);
    fdb_set(&db.down, 0);
    idgen_sleep_ms(300); /* retries come every 100 ms (a tenth of the lease) */
    id = draw1(&in);
    ck_assert_int_eq(SF_WORKER(id), worker); /* still ours: renewed, not re-leased */
    inst_free(&in);
}
END_TEST

/* ------------------------------------------------------------------ core */

static char *dir;

static void core_setup(void)
{
    dir = tu_mkdtemp();
}

static void core_teardown(void)
{
    tu_rmtree(dir);
    free(dir);
}

#define CORE_HEAD                                                   \
    "[datasource db0]\n"                                 /* 1 */    \
    "master = mysql://u:pw@127.0.0.1:1/leaf\n"           /* 2 */    \
    "connect_timeout = 1s\n"                             /* 3 */

/* Build a snapshot of HEAD + body; returns its code, *out the snapshot. */
static int core_build(const char *body, dal_snapshot_t **out, dal_error_t *err)
{
    static dal_logger_t quiet = { NULL, NULL, DAL_LOG_ERROR };
    char text[4096], *path;
    dal_config_t *cfg = NULL;
    int rc;

    snprintf(text, sizeof text, "%s%s", CORE_HEAD, body);
    path = tu_write(dir, "idgen.ini", text);
    rc = config_load(path, &cfg, err);
    free(path);
    if (rc != 0)
        return rc;
    /* what dal_open's initialisation does: plugins get the real host API */
    plugin_set_host_api(dal_host_api());
    return snapshot_build(cfg, tu_env("DAL_PLUGIN_DIR"), &quiet, out, err);
}

START_TEST(core_sections_lookup_and_draw)
{
    const char *body = "[idgen a]\n"
                       "plugin = snowflake\n"
                       "worker_id = 12\n"
                       "[idgen b]\n"
                       "plugin = snowflake\n"
                       "worker_id = 13\n"
                       "[idgen sku]\n"
                       "plugin = leaf\n"
                       "datasource = db0\n"
                       "wait_timeout = 2s\n";
    dal_snapshot_t *s = NULL;
    dal_error_t err = { 0 };
    int64_t ids[10];
    uint64_t t0;

    ck_assert_msg(core_build(body, &s, &err) == 0, "%s", err.message);
    ck_assert_ptr_nonnull(idgen_find(s->idgens, "a"));
    ck_assert_ptr_null(idgen_find(s->idgens, "A"));
    ck_assert_int_eq(idgen_next(s->idgens, "a", ids, 10, &err), 0);
    ck_assert_int_eq(SF_WORKER(ids[9]), 12);
    ck_assert_int_eq(idgen_draw(idgen_find(s->idgens, "b"), ids, 1, &err), 0);
    ck_assert_int_eq(SF_WORKER(ids[0]), 13);
    ck_assert_int_eq(idgen_next(s->idgens, "nope", ids, 1, &err), DAL_EINVAL);
    ck_assert_str_eq(err.message, "no ID generator 'nope' (no [idgen nope] section)");
    /* leaf's server refuses connections: a clear error, quickly */
    t0 = t_now_ns();
    ck_assert_int_eq(idgen_next(s->idgens, "sku", ids, 1, &err), DAL_ECONNECT);
    ck_assert_uint_lt(t_now_ns() - t0, 2500000000u);
    ck_assert_msg(strstr(err.message, "[idgen sku]: biz tag 'sku': both segments are used up") &&
                  strstr(err.message, "db0"), "%s", err.message);
    snapshot_unref(s);
}
END_TEST

static const struct {
    const char *body;
    const char *msg;
} core_bad[] = {
    { "[idgen x]\nplugin = nosuch\n", "idgen.ini:5: " },
    { "[idgen sku]\nplugin = leaf\ndatasource = db0\nstepp = 5\n",
      "idgen.ini:7: [idgen sku].stepp: idgen plugin 'leaf' has no parameter 'stepp'" },
    { "[idgen sku]\nplugin = leaf\n", "idgen.ini:4: idgen plugin 'leaf' needs "
      "[idgen sku].datasource" },
    { "[idgen sku]\nplugin = leaf\ndatasource = db0\nstep = many\n",
      "idgen.ini:7: [idgen sku].step: expected" },
    { "[idgen sf]\nplugin = snowflake\nworker_id = 2000\n",
      "idgen.ini:4: ID generator plugin 'snowflake' (" },
    { "[idgen sf]\nplugin = snowflake\nworker_id = 2000\n",
      "failed to initialise for [idgen sf]: worker_id 2000 is not in 0..1023" },
};

START_TEST(core_errors_name_file_and_line)
{
    dal_snapshot_t *s = NULL;
    dal_error_t err = { 0 };

    ck_assert_int_ne(core_build(core_bad[_i].body, &s, &err), 0);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.message, core_bad[_i].msg), "got: %s", err.message);
}
END_TEST

START_TEST(core_public_api)
{
    char text[1024], *path;
    dal_error_t err = { 0 };
    dal_open_opts_t o;
    int64_t ids[3];
    dal_t *dal = NULL;

    snprintf(text, sizeof text, "%s[idgen sf]\nplugin = snowflake\nworker_id = 14\n", CORE_HEAD);
    path = tu_write(dir, "pub.ini", text);
    memset(&o, 0, sizeof o);
    o.plugin_dir = tu_env("DAL_PLUGIN_DIR");
    ck_assert_msg(dal_open(path, &o, &dal, &err) == 0, "%s", err.message);
    ck_assert_int_eq(dal_next_ids(dal, "sf", ids, 3, &err), 0);
    ck_assert_int_eq(SF_WORKER(ids[0]), 14);
    ck_assert_int_eq(ids[1], ids[0] + 1);
    ck_assert_int_eq(dal_next_ids(dal, "x", ids, 1, &err), DAL_EINVAL);
    ck_assert_int_eq(dal_next_ids(dal, "sf", NULL, 1, &err), DAL_EINVAL);
    /* a snowflake section keeps nothing in a database */
    ck_assert_int_eq(dal_setup_idgens(dal, NULL, NULL, NULL, &err), 0);
    ck_assert_int_eq(dal_setup_idgens(dal, "nowhere", NULL, NULL, &err), DAL_EROUTE);
    dal_close(dal);
    free(path);
}
END_TEST

/* ----------------------------------------------------------------- suite */

static Suite *idgen_suite(void)
{
    Suite *s = suite_create("idgen");
    TCase *leaf = tcase_create("leaf");
    TCase *sf = tcase_create("snowflake");
    TCase *core = tcase_create("core");

    tcase_add_checked_fixture(leaf, fixture_setup, fixture_teardown);
    tcase_set_timeout(leaf, 60);
    tcase_add_test(leaf, leaf_sequential);
    tcase_add_test(leaf, leaf_old_host_gets_no_events);
    tcase_add_test(leaf, leaf_biz_tag_and_batches);
    tcase_add_test(leaf, leaf_threads_unique);
    tcase_add_test(leaf, leaf_step_grows_to_cap_and_floor_wins);
    tcase_add_test(leaf, leaf_step_shrinks_when_slow);
    tcase_add_test(leaf, leaf_prefetch_keeps_db_off_the_switch);
    tcase_add_test(leaf, leaf_outage_buffered_then_clear_error_then_resume);
    tcase_add_test(leaf, leaf_hung_db_bounded_wait);
    tcase_add_test(leaf, leaf_lost_races_are_skipped);
    tcase_add_test(leaf, leaf_unknown_biz_tag);
    tcase_add_loop_test(leaf, leaf_bad_parameters, 0, (int)N_ELEMS(leaf_bad));
    suite_add_tcase(s, leaf);

    tcase_add_checked_fixture(sf, fixture_setup, fixture_teardown);
    tcase_set_timeout(sf, 60);
    tcase_add_test(sf, sf_layout);
    tcase_add_test(sf, sf_custom_epoch);
    tcase_add_test(sf, sf_sequence_runs_out_then_next_ms);
    tcase_add_test(sf, sf_small_step_back_is_waited_for);
    tcase_add_test(sf, sf_big_step_back_is_an_error);
    tcase_add_test(sf, sf_clock_stuck_behind_is_an_error);
    tcase_add_test(sf, sf_before_epoch_is_an_error);
    tcase_add_test(sf, sf_slow_ids_spread_over_mod_100);
    tcase_add_test(sf, sf_threads_unique);
    tcase_add_test(sf, sf_instances_share_a_worker_id);
    tcase_add_loop_test(sf, sf_bad_parameters, 0, (int)N_ELEMS(sf_bad));
    tcase_add_loop_test(sf, sf_epoch_parsing, 0, (int)N_ELEMS(epochs));
    tcase_add_test(sf, sf_lease_distinct_workers);
    tcase_add_test(sf, sf_lease_outage_expires_then_resumes);
    suite_add_tcase(s, sf);

    tcase_add_checked_fixture(core, core_setup, core_teardown);
    tcase_set_timeout(core, 60);
    tcase_add_test(core, core_sections_lookup_and_draw);
    tcase_add_loop_test(core, core_errors_name_file_and_line, 0, (int)N_ELEMS(core_bad));
    tcase_add_test(core, core_public_api);
    suite_add_tcase(s, core);
    return s;
}

int main(void)
{
    int status = tu_run(idgen_suite(), CK_FORK_GETENV);

    fake_plugin_close(&leaf_so);
    return status;
}
