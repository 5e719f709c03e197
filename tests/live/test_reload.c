/*
 * test_reload.c -- dynamic configuration against real MariaDB servers.
 *
 * Run by tests/suites/integration.sh with DAL_TEST_PORTS (four servers holding
 * product_0..3 and plain).  Threads run statements the whole time the file
 * is rewritten; every statement must succeed, bad files must be refused
 * with the old configuration still serving, a master moved to another
 * server must take the writes with none lost or doubled, and no connection
 * may be left behind.  A session's cached snapshot reference (handle.h)
 * follows the reloads and keeps no replaced snapshot alive.
 */
#include <check.h>
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dal/dal.h>

#include "handle.h"
#include "testutil.h"

#define NODES 4
#define THREADS 8
#define REWRITES 100

static int ports[NODES];
static char *dir, *ini;

typedef struct variant {
    int mv_port_index;   /* server of datasource mv (the "moved" master) */
    int pool_max;        /* 0: built-in cache; else pool = default, pool.max_size */
    int monitor;         /* a slow-log monitor */
    int extra_table;     /* a table extra_N */
    int watch;
    int reshard;         /* rt gets other counts */
    int allow_reshard;
    const char *tail;    /* appended verbatim (mistakes) */
    int validate;        /* [dal] validate_connect = true */
} variant_t;

/* Write the INI the tests switch between, atomically (temp file + rename,
 * as editors do). */
static void write_ini(const variant_t *v, int serial)
{
    char text[8192], tmp[1100];
    size_t n = 0;
    FILE *f;

    n += (size_t)snprintf(text + n, sizeof text - n,
                          "; serial %d\n[dal]\nwatch = %s\nallow_reshard = %s\n"
                          "validate_connect = %s\n", serial, v->watch ? "true" : "false",
                          v->allow_reshard ? "true" : "false", v->validate ? "true" : "false");
    if (v->pool_max > 0)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "pool = default\npool.max_size = %d\npool.acquire_timeout = 10s\n",
                              v->pool_max);
    tu_datasources(text, sizeof text, &n, "db", ports, NODES, "dalpass");
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "[datasource mv]\nmaster = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
                          "[table rt]\ndatasource = db\ndb_shard_num = 4\ntable_shard_num = %d\n"
                          "shard_key = k\nstrategy = mod\n"
                          "[table moved]\ndatasource = mv\n",
                          ports[v->mv_port_index], v->reshard ? 16 : 8);
    if (v->extra_table)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "[table extra_%d]\ndatasource = db0\n", serial);
    if (v->monitor)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "[monitor slow]\nplugin = slowlog\npath = %s/slow.log\n"
                              "threshold = 0\n", dir);
    if (v->tail)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s", v->tail);
    snprintf(tmp, sizeof tmp, "%s/dal.ini.tmp", dir);
    f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(rename(tmp, ini), 0);
}

static dal_t *open_dal(void)
{
    dal_error_t err;
    dal_t *dal = NULL;

    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "dal_open: %s", err.message);
    return dal;
}

static void setup(void)
{
    variant_t v = {0, 0, 0, 0, 0, 0, 0, NULL, 0};
    dal_error_t err;
    dal_t *dal;
    MYSQL *m;
    int i;

    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    if (asprintf(&ini, "%s/dal.ini", dir) < 0)
        abort();
    write_ini(&v, 0);
    dal = open_dal();
    ck_assert_int_eq(dal_exec(dal, NULL, "DROP TABLE IF EXISTS rt", NULL, 0, NULL, &err), 0);
    ck_assert_msg(dal_exec(dal, NULL, "CREATE TABLE rt (id BIGINT PRIMARY KEY, k BIGINT, v INT)",
                           NULL, 0, NULL, &err) == 0, "%s", err.message);
    dal_close(dal);
    for (i = 0; i < 2; i++) { /* the servers mv moves between */
        m = tu_direct(ports[i], "plain");
        tu_exec(m, "CREATE TABLE IF NOT EXISTS moved (id BIGINT PRIMARY KEY, t INT)");
        tu_exec(m, "TRUNCATE TABLE moved");
        mysql_close(m);
    }
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
    free(ini);
}

/* ------------------------------------------------------- load and rewrite */

typedef struct worker {
    dal_t *dal;
    int id;
    atomic_int *stop;
    long ok, failed;
    long moved_writes;       /* successful INSERTs into `moved` */
    char last_error[DAL_ERROR_MSG_MAX];
} worker_t;

static void note(worker_t *w, int rc, const dal_error_t *err)
{
    if (rc == 0) {
        w->ok++;
        return;
    }
    w->failed++;
    snprintf(w->last_error, sizeof w->last_error, "%s", err->message);
}

/* Reads, writes and a transaction on the sharded table, a read on the
 * worker's own session outside a transaction (its cached snapshot meets
 * the reloads), and a write to the table whose master moves. */
static void one_round(worker_t *w, dal_session_t *own, long i)
{
    long long k = (long long)w->id * 1000000 + i;
    dal_value_t p[3] = {dal_int(k), dal_int(k), dal_int((int64_t)i)};
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc;

    note(w, dal_exec(w->dal, NULL, "INSERT INTO rt (id, k, v) VALUES (?, ?, ?)", p, 3, NULL, &err),
         &err);
    rc = dal_query(w->dal, NULL, "SELECT v FROM rt WHERE k = ?", &p[1], 1, &r, &err);
    if (rc == 0 && (dal_result_next(r, &err) != 1 || dal_result_int(r, 0) != i)) {
        rc = DAL_EINVAL;
        snprintf(err.message, sizeof err.message, "read back a wrong value for k=%lld", k);
    }
    note(w, rc, &err);
    dal_result_free(r);
    r = NULL;
    rc = dal_session_query(own, NULL, "SELECT v FROM rt WHERE k = ?", &p[1], 1, &r, &err);
    while (rc == 0 && (rc = dal_result_next(r, &err)) == 1)
        ;
    note(w, rc < 0 ? rc : 0, &err);
    dal_result_free(r);
    rc = dal_session_open(w->dal, &s, &err);
    if (rc == 0)
        rc = dal_begin(s, &err);
    if (rc == 0)
        rc = dal_session_exec(s, NULL, "UPDATE rt SET v = v + 1 WHERE k = ?", &p[1], 1, NULL, &err);
    if (rc == 0)
        rc = dal_commit(s, &err);
    note(w, rc, &err);
    dal_session_close(s);
    rc = dal_exec(w->dal, NULL, "INSERT INTO moved (id, t) VALUES (?, ?)", p, 2, NULL, &err);
    note(w, rc, &err);
    w->moved_writes += rc == 0;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    dal_session_t *own = NULL;
    dal_error_t err;
    long i = 0;

    if (dal_session_open(w->dal, &own, &err) != 0) {
        note(w, DAL_ENOMEM, &err);
        return NULL;
    }
    while (!atomic_load(w->stop))
        one_round(w, own, i++);
    dal_session_close(own);
    return NULL;
}

/*
 * 8 threads run statements while the file is rewritten 100 times with
 * valid changes: the pool plugin on and off and its limits, a monitor on
 * and off, a table added and removed.  Not one statement may fail, every
 * rewrite must be a reload, and no connection may outlive dal_close.
 */
START_TEST(test_reload_under_load)
{
    pthread_t th[THREADS];
    worker_t w[THREADS];
    atomic_int stop = 0;
    uint64_t reloads = 0, failures = 0;
    long ok = 0;
    dal_t *dal = open_dal();
    int i;

    for (i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].dal = dal;
        w[i].id = i + 1;
        w[i].stop = &stop;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (i = 1; i <= REWRITES; i++) {
        variant_t v = {0, (i % 3) ? 4 + i % 13 : 0, i % 2, i % 4 == 1, 0, 0, 0, NULL, 0};
        dal_error_t err;
        write_ini(&v, i);
        ck_assert_msg(dal_reload(dal, &err) == 0, "rewrite %d: %s", i, err.message);
        usleep(20000);
    }
    atomic_store(&stop, 1);
    for (i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(w[i].failed == 0, "thread %d: %ld failed statements, last: %s", i,
                      w[i].failed, w[i].last_error);
        ok += w[i].ok;
    }
    dal_reload_stats(dal, &reloads, &failures);
    ck_assert_uint_eq(reloads, REWRITES);
    ck_assert_uint_eq(failures, 0);
    ck_assert_msg(ok > THREADS * 4, "only %ld statements ran", ok);
    dal_close(dal);
    tu_no_dal_connections(ports, NODES);
    fprintf(stderr, "reload under load: %d reloads, %ld statements, 0 failed\n", REWRITES, ok);
}
END_TEST

static int refs(dal_snapshot_t *s)
{
    return atomic_load(&s->refs);
}

/* One point select on s, outside a transaction. */
static void select_on(dal_session_t *s)
{
    dal_value_t k = dal_int(1);
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc = dal_session_query(s, NULL, "SELECT v FROM rt WHERE k = ?", &k, 1, &r, &err);

    while (rc == 0 && (rc = dal_result_next(r, &err)) == 1)
        ;
    ck_assert_msg(rc == 0, "SELECT v FROM rt: %s", err.message);
    dal_result_free(r);
}

/*
 * A session's statements outside a transaction reuse the snapshot
 * reference of its last one (snap_slot_t, handle.h) instead of writing
 * the snapshot's reference count, a line every thread writes, twice a
 * statement.  A reload takes the idle sessions' references, so they keep
 * no replaced snapshot (its nodes, their connections) alive; a
 * transaction keeps its own.
 */
START_TEST(test_session_keeps_snapshot)
{
    variant_t v = {0, 5, 0, 0, 0, 0, 0, NULL, 0};
    dal_session_t *a = NULL, *b = NULL;
    dal_snapshot_t *old, *cur;
    dal_error_t err;
    dal_t *dal = open_dal();
    int base;

    ck_assert_int_eq(dal_session_open(dal, &a, &err), 0);
    ck_assert_int_eq(dal_session_open(dal, &b, &err), 0);
    old = atomic_load(&dal->snap);
    base = refs(old);
    select_on(a);
    ck_assert_int_eq(refs(old), base + 1); /* a's slot */
    select_on(a);
    select_on(a);
    ck_assert_int_eq(refs(old), base + 1);
    ck_assert_int_eq(dal_begin(b, &err), 0); /* b's transaction keeps old */
    ck_assert_int_eq(refs(old), base + 2);
    write_ini(&v, 1);
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    cur = atomic_load(&dal->snap);
    ck_assert_ptr_ne(cur, old);
    /* dal's and a's gone: a is idle since the reload */
    ck_assert_int_eq(refs(old), 1);
    ck_assert_int_eq(dal_rollback(b, &err), 0); /* old goes */
    base = refs(cur);
    select_on(a);
    ck_assert_int_eq(refs(cur), base + 1);
    dal_session_close(a);
    ck_assert_int_eq(refs(cur), base);
    dal_session_close(b);
    dal_close(dal);
}
END_TEST

/* The master of `mv` moves to another server under load: writes follow,
 * none lost, none doubled. */
START_TEST(test_master_moves)
{
    pthread_t th[4];
    worker_t w[4];
    atomic_int stop = 0;
    variant_t v = {0, 0, 0, 0, 0, 0, 0, NULL, 0};
    long writes = 0;
    long long on0, on1, distinct0, distinct1;
    dal_error_t err;
    dal_t *dal = open_dal();
    int i;

    for (i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].dal = dal;
        w[i].id = 100 + i;
        w[i].stop = &stop;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    usleep(300000);
    v.mv_port_index = 1;
    write_ini(&v, 1000);
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    usleep(300000);
    atomic_store(&stop, 1);
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(w[i].failed == 0, "thread %d: %s", i, w[i].last_error);
        writes += w[i].moved_writes;
    }
    dal_close(dal);
    on0 = tu_direct_value(ports[0], "plain", "SELECT COUNT(*) FROM moved");
    on1 = tu_direct_value(ports[1], "plain", "SELECT COUNT(*) FROM moved");
    distinct0 = tu_direct_value(ports[0], "plain", "SELECT COUNT(DISTINCT id) FROM moved");
    distinct1 = tu_direct_value(ports[1], "plain", "SELECT COUNT(DISTINCT id) FROM moved");
    ck_assert_msg(on1 > 0, "no write reached the new master");
    ck_assert_msg(on0 > 0, "no write reached the old master before the move");
    ck_assert_int_eq(on0 + on1, writes);      /* none lost */
    ck_assert_int_eq(distinct0, on0);         /* none doubled */
    ck_assert_int_eq(distinct1, on1);
    fprintf(stderr, "master move: %lld writes on the old master, %lld on the new\n", on0, on1);
}
END_TEST

/* Bad files are refused with FILE:LINE; the old configuration keeps serving. */
typedef struct bad_case {
    const char *what;
    variant_t v;
    const char *needle;
} bad_case_t;

static const bad_case_t bad_cases[] = {
    {"syntax error", {0, 0, 0, 0, 0, 0, 0, "this is not ini\n", 0}, "dal.ini:"},
    {"unknown plugin", {0, 0, 0, 0, 0, 0, 0, "[table bad]\ndatasource = db\ndb_shard_num = 4\n"
     "table_shard_num = 4\nshard_key = k\nstrategy = nosuch\n", 0}, "unknown shard plugin 'nosuch'"},
    {"unknown key", {0, 0, 0, 0, 0, 0, 0, "[table bad]\ndatasource = db0\ncolour = red\n", 0},
     "unknown key"},
    {"unreachable datasource", {0, 0, 0, 0, 0, 0, 0, "[datasource gone]\n"
     "master = mysql://dal:dalpass@127.0.0.1:1/x\nconnect_timeout = 1s\n", 1}, "validate_connect"},
    {"resharding", {0, 0, 0, 0, 0, 1, 0, NULL, 0}, "resharding, not a reload"},
};

START_TEST(test_bad_edits)
{
    const bad_case_t *c = &bad_cases[_i];
    variant_t good = {0, 0, 0, 0, 0, 0, 0, NULL, 0};
    uint64_t reloads, failures;
    dal_result_t *r = NULL;
    dal_error_t err;
    dal_t *dal = open_dal();

    write_ini(&c->v, 1);
    ck_assert_msg(dal_reload(dal, &err) != 0, "%s: accepted", c->what);
    ck_assert_msg(strstr(err.message, c->needle) != NULL, "%s: '%s' not in: %s", c->what,
                  c->needle, err.message);
    ck_assert_msg(strncmp(err.message, ini, strlen(ini)) == 0, "%s: no FILE:LINE: %s", c->what,
                  err.message);
    ck_assert_msg(strstr(err.message, "dalpass") == NULL, "password in: %s", err.message);
    dal_reload_stats(dal, &reloads, &failures);
    ck_assert_uint_eq(reloads, 0);
    ck_assert_uint_eq(failures, 1);
    /* the old configuration still serves */
    ck_assert_msg(dal_query(dal, NULL, "SELECT COUNT(*) FROM rt", NULL, 0, &r, &err) == 0, "%s",
                  err.message);
    dal_result_free(r);
    /* and with the mistake fixed the next reload goes through */
    write_ini(&good, 2);
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    dal_close(dal);
}
END_TEST

/* With allow_reshard the same change is accepted. */
START_TEST(test_reshard_allowed)
{
    variant_t v = {0, 0, 0, 0, 0, 1, 1, NULL, 0};
    dal_error_t err;
    dal_plan_t *plan = NULL;
    dal_t *dal = open_dal();

    write_ini(&v, 1);
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    ck_assert_int_eq(dal_explain(dal, NULL, "SELECT * FROM rt WHERE k = 15", NULL, 0, &plan, &err),
                     0);
    ck_assert_str_eq(dal_plan_table(plan, 0), "rt_15");
    dal_plan_free(plan);
    dal_close(dal);
}
END_TEST

/* watch = true: an editor's rename-replace makes exactly one reload. */
START_TEST(test_watch_rename)
{
    variant_t v = {0, 0, 0, 0, 1, 0, 0, NULL, 0};
    uint64_t reloads = 0, failures = 0;
    dal_t *dal;
    int i;

    write_ini(&v, 1);
    dal = open_dal();
    v.extra_table = 1;
    write_ini(&v, 2); /* temp file + rename */
    for (i = 0; i < 50 && reloads == 0; i++) {
        usleep(100000);
        dal_reload_stats(dal, &reloads, &failures);
    }
    usleep(500000); /* time for a second, wrong, reload to show up */
    dal_reload_stats(dal, &reloads, &failures);
    ck_assert_uint_eq(reloads, 1);
    ck_assert_uint_eq(failures, 0);
    dal_close(dal);
}
END_TEST

static Suite *reload_suite(void)
{
    Suite *s = suite_create("reload");
    TCase *tc = tcase_create("reload");

    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_bad_edits, 0, sizeof bad_cases / sizeof bad_cases[0]);
    tcase_add_test(tc, test_reshard_allowed);
    tcase_add_test(tc, test_watch_rename);
    tcase_add_test(tc, test_master_moves);
    tcase_add_test(tc, test_reload_under_load);
    tcase_add_test(tc, test_session_keeps_snapshot);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(reload_suite(), CK_FORK_GETENV);
}
