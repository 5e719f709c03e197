/*
 * test_rw.c -- read-write splitting against real MariaDB replication.
 *
 * Run by tests/suites/rw_test.sh, which starts two masters with two replicas each
 * (GTID replication on loopback) holding rw_0 and rw_1, and exports
 * DAL_TEST_PORTS, DAL_TEST_REPLICA_PORTS and DAL_TEST_CLUSTER_DIR.  Which
 * server ran a statement is read from @@server_id: 1 + i for master i,
 * 10000 + 100 i + j for replica j of master i (tests/harness/cluster.sh).
 *
 * Tests that stop, delay or kill a server put it back before they end, so
 * each starts from a healthy cluster.
 */
#include <check.h>
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dal/dal.h>

#include "testutil.h"

#define NODES 2
#define REPLICAS 2
#define MASTER_ID(i) (1 + (i))
#define REPLICA_ID(i, j) (10000 + 100 * (i) + (j))

static int mport[NODES], rport[NODES][REPLICAS];
static char *dir;

/* ---------------------------------------------------------------- helpers */

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void load_ports(void)
{
    const char *m = tu_env("DAL_TEST_PORTS"), *r = tu_env("DAL_TEST_REPLICA_PORTS");
    int i, j, n;

    for (i = 0; i < NODES; i++, m += n)
        if (sscanf(m, "%d%n", &mport[i], &n) != 1)
            abort();
    for (i = 0; i < NODES; i++)
        for (j = 0; j < REPLICAS; j++, r += n)
            if (sscanf(r, "%d%n", &rport[i][j], &n) != 1)
                abort();
}

/* A root connection to the server on port (no database). */
static MYSQL *admin(int port)
{
    MYSQL *m = mysql_init(NULL);

    ck_assert_ptr_nonnull(m);
    ck_assert_msg(mysql_real_connect(m, "127.0.0.1", "root", NULL, NULL, (unsigned)port, NULL,
                                     CLIENT_MULTI_STATEMENTS) != NULL,
                  "admin connect to %d: %s", port, mysql_error(m));
    return m;
}

/* Run sql (several statements allowed) as root on port. */
static void admin_sql(int port, const char *sql)
{
    MYSQL *m = admin(port);
    MYSQL_RES *r;

    ck_assert_msg(mysql_query(m, sql) == 0, "%d: %s: %s", port, sql, mysql_error(m));
    do {
        r = mysql_store_result(m);
        mysql_free_result(r);
    } while (mysql_next_result(m) == 0);
    mysql_close(m);
}

/* The first column of the first row of sql as text (copied to out). */
static void admin_text(int port, const char *sql, char *out, size_t cap)
{
    MYSQL *m = admin(port);
    MYSQL_RES *r;
    MYSQL_ROW row;

    ck_assert_msg(mysql_query(m, sql) == 0, "%d: %s: %s", port, sql, mysql_error(m));
    r = mysql_store_result(m);
    row = r ? mysql_fetch_row(r) : NULL;
    snprintf(out, cap, "%s", row && row[0] ? row[0] : "");
    mysql_free_result(r);
    mysql_close(m);
}

static long long admin_int(int port, const char *sql)
{
    char text[64];

    admin_text(port, sql, text, sizeof text);
    return atoll(text);
}

/* Every replica has applied everything its master has. */
static void wait_caught_up(void)
{
    char pos[512], sql[640];
    int i, j;

    for (i = 0; i < NODES; i++) {
        admin_text(mport[i], "SELECT @@gtid_binlog_pos", pos, sizeof pos);
        snprintf(sql, sizeof sql, "SELECT MASTER_GTID_WAIT('%s', 30)", pos);
        for (j = 0; j < REPLICAS; j++)
            ck_assert_msg(admin_int(rport[i][j], sql) == 0, "replica %d-%d is behind", i, j);
    }
}

/* Replica j of node 0: apply events `delay` seconds after the master. */
static void set_delay(int j, int delay)
{
    char sql[160];

    snprintf(sql, sizeof sql, "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = %d; START SLAVE", delay);
    admin_sql(rport[0][j], sql);
}

/* tests/harness/cluster.sh CMD DIR NAME.  In a session of its own: Check kills the
 * process group of a test when it ends, which would take a server started
 * by `restart` with it. */
static void cluster(const char *cmd, const char *name)
{
    char line[2048];

    snprintf(line, sizeof line, "setsid -w '%s/tests/harness/cluster.sh' %s '%s' %s >/dev/null",
             tu_env("DAL_SRCDIR"), cmd, tu_env("DAL_TEST_CLUSTER_DIR"), name);
    ck_assert_msg(system(line) == 0, "%s failed", line);
}

/* A file with ds0 and ds1 (master and two replicas each, weights w0 and
 * w1), ds0's section ending with `extra`; the named groups dbWrite (the
 * master alone) and dbRead (master and replicas) on node 0's servers; kv
 * on ds0 and skv sharded over both.  With DAL_TEST_RW_POOL set, every
 * server gets a pool_default instance instead of the built-in cache. */
static dal_t *open_rw(int w0, int w1, const char *extra)
{
    char text[8192], *ini;
    size_t n = 0;
    dal_error_t err;
    dal_t *dal = NULL;
    int i;

    n += (size_t)snprintf(text + n, sizeof text - n, "[dal]\ndefault_datasource = ds0\n%s",
                          getenv("DAL_TEST_RW_POOL") ? "pool = default\n" : "");
    for (i = 0; i < NODES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "[datasource ds%d]\n"
                              "master = mysql://dal:dalpass@127.0.0.1:%d/rw_%d\n"
                              "replicas = mysql://dal:dalpass@127.0.0.1:%d/rw_%d?weight=%d, "
                              "mysql://dal:dalpass@127.0.0.1:%d/rw_%d?weight=%d\n"
                              "connect_timeout = 1s\nhealth_check_interval = 100ms\n%s",
                              i, mport[i], i, rport[i][0], i, w0, rport[i][1], i, w1,
                              i == 0 ? extra : "");
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "[datasource dbWrite]\nmaster = mysql://dal:dalpass@127.0.0.1:%d/rw_0\n"
                          "[datasource dbRead]\nmaster = mysql://dal:dalpass@127.0.0.1:%d/rw_0\n"
                          "replicas = mysql://dal:dalpass@127.0.0.1:%d/rw_0, "
                          "mysql://dal:dalpass@127.0.0.1:%d/rw_0\n"
                          "health_check_interval = 100ms\nread_your_writes = off\n"
                          "[table kv]\ndatasource = ds0\n"
                          "[table skv]\ndatasource = ds\ndb_shard_num = 2\ntable_shard_num = 2\n"
                          "shard_key = id\nstrategy = mod\n",
                          mport[0], mport[0], rport[0][0], rport[0][1]);
    ini = tu_write(dir, "rw.ini", text);
    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "dal_open: %s", err.message);
    free(ini);
    return dal;
}

/* Run sql through q (dal_query or a session) and return the integer in
 * column col of its only row. */
static long long one_int(dal_t *dal, dal_session_t *s, const dal_query_opts_t *o,
                         const char *sql, size_t col)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    long long v;
    int rc = s ? dal_session_query(s, o, sql, NULL, 0, &r, &err)
               : dal_query(dal, o, sql, NULL, 0, &r, &err);

    ck_assert_msg(rc == 0, "%s: %s", sql, err.message);
    ck_assert_int_eq(dal_result_next(r, &err), 1);
    v = dal_result_int(r, col);
    dal_result_free(r);
    return v;
}

static long long server_of(dal_t *dal, dal_session_t *s, const dal_query_opts_t *o,
                           const char *sql)
{
    return one_int(dal, s, o, sql, 0);
}

static void exec_ok(dal_t *dal, dal_session_t *s, const char *sql)
{
    dal_error_t err;
    int rc = s ? dal_session_exec(s, NULL, sql, NULL, 0, NULL, &err)
               : dal_exec(dal, NULL, sql, NULL, 0, NULL, &err);

    ck_assert_msg(rc == 0, "%s: %s", sql, err.message);
}

static int is_replica_of(long long id, int node)
{
    return id == REPLICA_ID(node, 0) || id == REPLICA_ID(node, 1);
}

/* Reads until both replicas of node 0 have answered (their first health
 * check passed), within 10 s. */
static void wait_in_rotation(dal_t *dal)
{
    long long end = now_ms() + 10000, id;
    int seen[REPLICAS] = {0};

    while (!(seen[0] && seen[1])) {
        ck_assert_msg(now_ms() < end, "the replicas never came into rotation");
        id = server_of(dal, NULL, NULL, "SELECT @@server_id");
        if (is_replica_of(id, 0))
            seen[id - REPLICA_ID(0, 0)] = 1;
        usleep(10000);
    }
}

/* Within timeout_ms, a run of `run` reads all avoiding (or, want = 1,
 * including at least one from) replica j of node 0. */
static void wait_reads(dal_t *dal, int j, int want, int run, long long timeout_ms)
{
    long long end = now_ms() + timeout_ms;

    for (;;) {
        int i, hit = 0;
        for (i = 0; i < run; i++)
            hit |= server_of(dal, NULL, NULL, "SELECT @@server_id") == REPLICA_ID(0, j);
        if (hit == want)
            return;
        ck_assert_msg(now_ms() < end, "replica 0-%d %s rotation in time", j,
                      want ? "did not come back into" : "did not leave");
        usleep(50000);
    }
}

/* ------------------------------------------------------------------ split */

/* Reads on replicas, writes and everything that needs the master on it. */
START_TEST(test_split)
{
    dal_t *dal = open_rw(1, 1, "read_your_writes = off\n");
    dal_query_opts_t o = {0};
    long long id;
    int i;

    wait_in_rotation(dal);
    for (i = 0; i < 20; i++)
        ck_assert(is_replica_of(server_of(dal, NULL, NULL, "SELECT @@server_id"), 0));
    exec_ok(dal, NULL, "INSERT INTO kv VALUES (1, @@server_id) ON DUPLICATE KEY UPDATE "
                       "v = @@server_id");
    ck_assert_int_eq(admin_int(mport[0], "SELECT v FROM rw_0.kv WHERE k = 1"), MASTER_ID(0));
    ck_assert_int_eq(server_of(dal, NULL, NULL, "SELECT @@server_id FROM kv WHERE k = 1 FOR "
                                                "UPDATE"), MASTER_ID(0));
    ck_assert_int_eq(server_of(dal, NULL, NULL, "SELECT @@server_id FROM kv WHERE k = 1 LOCK "
                                                "IN SHARE MODE"), MASTER_ID(0));
    /* functions with side effects or state of one server */
    ck_assert_int_eq(one_int(dal, NULL, NULL, "SELECT LAST_INSERT_ID(), @@server_id", 1),
                     MASTER_ID(0));
    ck_assert_int_eq(one_int(dal, NULL, NULL, "SELECT GET_LOCK('rw', 0), @@server_id", 1),
                     MASTER_ID(0));
    ck_assert_int_eq(one_int(dal, NULL, NULL, "SELECT RELEASE_LOCK('rw'), @@server_id", 1),
                     MASTER_ID(0));
    ck_assert_int_eq(one_int(dal, NULL, NULL, "SELECT NEXT VALUE FOR seq, @@server_id", 1),
                     MASTER_ID(0));
    ck_assert_int_eq(one_int(dal, NULL, NULL, "SELECT nextval(seq), @@server_id", 1),
                     MASTER_ID(0));
    /* hints and the option */
    ck_assert_int_eq(server_of(dal, NULL, NULL, "/*+ dal master */ SELECT @@server_id"),
                     MASTER_ID(0));
    ck_assert_int_eq(server_of(dal, NULL, NULL, "SELECT /*+ dal server=master */ @@server_id"),
                     MASTER_ID(0));
    o.server = DAL_SERVER_MASTER;
    ck_assert_int_eq(server_of(dal, NULL, &o, "SELECT @@server_id"), MASTER_ID(0));
    o.server = DAL_SERVER_REPLICA;
    id = server_of(dal, NULL, &o, "SELECT @@server_id FROM kv WHERE k = 1 FOR UPDATE");
    ck_assert(is_replica_of(id, 0));
    ck_assert(is_replica_of(server_of(dal, NULL, NULL, "/*+ dal replica */ SELECT @@server_id "
                                                       "FROM kv FOR UPDATE"), 0));
    /* the @DataSource way: two named groups */
    o.server = DAL_SERVER_AUTO;
    o.datasource = "dbWrite";
    ck_assert_int_eq(server_of(dal, NULL, &o, "SELECT @@server_id"), MASTER_ID(0));
    o.datasource = "dbRead";
    {
        long long end = now_ms() + 10000;
        while (!is_replica_of(id = server_of(dal, NULL, &o, "SELECT @@server_id"), 0))
            ck_assert_msg(now_ms() < end, "dbRead never read from a replica");
    }
    dal_close(dal);
}
END_TEST

/* A sharded read over both nodes reads each node's replicas; a write to
 * both goes to both masters. */
START_TEST(test_split_scatter)
{
    dal_t *dal = open_rw(1, 1, "read_your_writes = off\n");
    dal_result_t *r = NULL;
    dal_error_t err;
    int rows = 0, seen;

    exec_ok(dal, NULL, "INSERT INTO skv (id, v) VALUES (0, @@server_id), (1, @@server_id), "
                       "(2, @@server_id), (3, @@server_id) ON DUPLICATE KEY UPDATE "
                       "v = @@server_id");
    ck_assert_int_eq(admin_int(mport[0], "SELECT COUNT(*) FROM rw_0.skv_0 WHERE v = 1"), 2);
    ck_assert_int_eq(admin_int(mport[1], "SELECT COUNT(*) FROM rw_1.skv_1 WHERE v = 2"), 2);
    wait_caught_up();
    wait_in_rotation(dal);
    for (seen = 0; seen < 50; seen++) {
        rows = 0;
        ck_assert_msg(dal_query(dal, NULL, "SELECT id, @@server_id FROM skv ORDER BY id", NULL,
                                0, &r, &err) == 0, "%s", err.message);
        while (dal_result_next(r, &err) == 1) {
            long long row = dal_result_int(r, 0), sid = dal_result_int(r, 1);
            ck_assert_msg(is_replica_of(sid, (int)(row % 2)) || sid == MASTER_ID(row % 2),
                          "row %lld read from server %lld", row, sid);
            rows++;
        }
        dal_result_free(r);
        ck_assert_int_eq(rows, 4);
    }
    /* once node 1's replicas are checked too, no row comes from a master */
    {
        long long end = now_ms() + 10000;
        int from_master;
        do {
            from_master = 0;
            ck_assert_msg(now_ms() < end, "the scatter read kept using a master");
            ck_assert_int_eq(dal_query(dal, NULL, "SELECT @@server_id FROM skv", NULL, 0, &r,
                                       &err), 0);
            while (dal_result_next(r, &err) == 1)
                from_master |= dal_result_int(r, 0) < 10000;
            dal_result_free(r);
        } while (from_master);
    }
    dal_close(dal);
}
END_TEST

/* Transactions: read-write ones on the master, read-only ones on one
 * replica for all their statements. */
START_TEST(test_split_transactions)
{
    dal_t *dal = open_rw(1, 1, "read_your_writes = off\n");
    dal_session_t *s = NULL;
    dal_error_t err;
    long long id;

    wait_in_rotation(dal);
    ck_assert_int_eq(dal_session_open(dal, &s, &err), 0);
    ck_assert_int_eq(dal_begin(s, &err), 0);
    ck_assert_int_eq(server_of(dal, s, NULL, "SELECT @@server_id"), MASTER_ID(0));
    ck_assert_int_eq(server_of(dal, s, NULL, "SELECT @@server_id"), MASTER_ID(0));
    ck_assert_int_eq(dal_commit(s, &err), 0);

    ck_assert_int_eq(dal_begin_read_only(s, &err), 0);
    id = server_of(dal, s, NULL, "SELECT @@server_id");
    ck_assert(is_replica_of(id, 0));
    ck_assert_int_eq(server_of(dal, s, NULL, "SELECT @@server_id"), id);
    ck_assert_int_eq(server_of(dal, s, NULL, "SELECT @@server_id"), id);
    ck_assert_int_eq(dal_session_exec(s, NULL, "UPDATE kv SET v = 0 WHERE k = 1", NULL, 0, NULL,
                                      &err), DAL_ESERVER);
    ck_assert_int_eq(dal_rollback(s, &err), 0);

    exec_ok(dal, s, "START TRANSACTION READ ONLY");
    ck_assert(is_replica_of(server_of(dal, s, NULL, "SELECT @@server_id"), 0));
    exec_ok(dal, s, "COMMIT");
    dal_session_close(s);
    dal_close(dal);
}
END_TEST

/* A session's pinned node (its connection holds user variables) reads
 * from its master, forced replica or read-only transaction alike; other
 * nodes read from their replicas; a read-only transaction on a replica
 * cannot make state. */
START_TEST(test_split_pinned)
{
    dal_t *dal = open_rw(1, 1, "read_your_writes = off\n");
    dal_query_opts_t o = {0};
    dal_session_t *s = NULL;
    dal_error_t err;

    wait_in_rotation(dal);
    ck_assert_int_eq(dal_session_open(dal, &s, &err), 0);
    ck_assert(is_replica_of(server_of(dal, s, NULL, "SELECT @@server_id"), 0));
    exec_ok(dal, s, "SET @a = 1");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_int_eq(server_of(dal, s, NULL, "SELECT @@server_id"), MASTER_ID(0));
    ck_assert_int_eq(server_of(dal, s, NULL, "/*+ dal replica */ SELECT @@server_id"),
                     MASTER_ID(0));
    ck_assert_int_eq(one_int(dal, s, NULL, "SELECT @a, @@server_id", 1), MASTER_ID(0));
    o.datasource = "ds1";
    {
        long long end = now_ms() + 10000;
        while (!is_replica_of(server_of(dal, s, &o, "SELECT @@server_id"), 1))
            ck_assert_msg(now_ms() < end, "ds1 never read from a replica");
    }
    ck_assert_int_eq(dal_begin_read_only(s, &err), 0);
    ck_assert_int_eq(server_of(dal, s, NULL, "SELECT @@server_id"), MASTER_ID(0));
    ck_assert_int_eq(one_int(dal, s, NULL, "SELECT @a", 0), 1);
    ck_assert_int_eq(dal_commit(s, &err), 0);
    dal_session_close(s);

    ck_assert_int_eq(dal_session_open(dal, &s, &err), 0);
    ck_assert_int_eq(dal_begin_read_only(s, &err), 0);
    ck_assert(is_replica_of(server_of(dal, s, NULL, "SELECT @@server_id"), 0));
    ck_assert_int_eq(dal_session_exec(s, NULL, "SELECT @b := 1", NULL, 0, NULL, &err),
                     DAL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "read-only transaction on a replica"));
    ck_assert_int_eq(dal_rollback(s, &err), 0);
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    dal_session_close(s);
    dal_close(dal);
}
END_TEST

/* What cannot be done is refused, with a message. */
START_TEST(test_split_errors)
{
    dal_t *dal = open_rw(1, 1, "");
    dal_query_opts_t o = {0};
    dal_session_t *s = NULL;
    dal_error_t err;

    o.server = DAL_SERVER_REPLICA;
    ck_assert_int_eq(dal_exec(dal, &o, "UPDATE kv SET v = 0", NULL, 0, NULL, &err), DAL_EROUTE);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot run on a replica"));
    o.server = 7;
    ck_assert_int_eq(dal_exec(dal, &o, "SELECT 1", NULL, 0, NULL, &err), DAL_EINVAL);
    ck_assert_int_eq(dal_exec(dal, NULL, "/*+ dal server=primary */ SELECT 1", NULL, 0, NULL,
                              &err), DAL_EINVAL);
    ck_assert_int_eq(dal_exec(dal, NULL, "/*+ dal master replica */ SELECT 1", NULL, 0, NULL,
                              &err), DAL_EINVAL);
    ck_assert_int_eq(dal_session_open(dal, &s, &err), 0);
    ck_assert_int_eq(dal_begin(s, &err), 0);
    ck_assert_int_eq(dal_session_exec(s, NULL, "/*+ dal replica */ SELECT 1", NULL, 0, NULL,
                                      &err), DAL_EROUTE);
    dal_session_close(s);
    dal_close(dal);
}
END_TEST

/* Monitors see where statements went: routes by role, executions and pool
 * figures by server (the Prometheus monitor's view of them). */
START_TEST(test_monitoring)
{
    unsigned port = tu_free_port();
    char extra[160], series[256], *m = NULL;
    long long end;
    dal_t *dal;
    int i, j;

    snprintf(extra, sizeof extra, "read_your_writes = off\n[monitor prometheus]\n"
                                  "address = 127.0.0.1:%u\n", port);
    dal = open_rw(1, 1, extra);
    wait_in_rotation(dal);
    for (i = 0; i < 100; i++)
        ck_assert(is_replica_of(server_of(dal, NULL, NULL, "SELECT @@server_id"), 0));
    for (i = 0; i < 10; i++)
        exec_ok(dal, NULL, "UPDATE kv SET v = v WHERE k = 1");
    end = now_ms() + 5000;
    do { /* pool figures are sampled once a second */
        free(m);
        ck_assert_msg(now_ms() < end, "no pool figures for the replicas");
        usleep(200000);
        ck_assert_int_eq(tu_http(port, "GET /metrics HTTP/1.0\r\n\r\n", &m), 200);
        snprintf(series, sizeof series, "dal_pool_connections{datasource=\"ds0\","
                 "server=\"127.0.0.1:%d\",state=\"idle\"}", rport[0][1]);
    } while (tu_metric(m, series) < 0);
    ck_assert(tu_metric(m, "dal_routes_total{datasource=\"ds0\",role=\"replica\"}") >= 100);
    ck_assert(tu_metric(m, "dal_routes_total{datasource=\"ds0\",role=\"master\"}") >= 10);
    for (j = 0; j < REPLICAS; j++) {
        snprintf(series, sizeof series, "dal_executions_total{datasource=\"ds0\","
                 "server=\"127.0.0.1:%d\"}", rport[0][j]);
        ck_assert_msg(tu_metric(m, series) >= 40, "%s\n%s", series, m);
    }
    snprintf(series, sizeof series, "dal_executions_total{datasource=\"ds0\","
             "server=\"127.0.0.1:%d\"}", mport[0]);
    ck_assert(tu_metric(m, series) >= 10);
    free(m);
    dal_close(dal);
}
END_TEST

/* ---------------------------------------------------------------- weights */

typedef struct lb_case {
    const char *policy;
    int w0, w1;
    double lo, hi;       /* share of replica 0 */
} lb_case_t;

static const lb_case_t lb_cases[] = {
    {"round_robin", 1, 1, 0.499, 0.501},
    {"weighted", 3, 1, 0.70, 0.80},
    {"weighted", 1, 4, 0.15, 0.25},
    {"random", 1, 1, 0.44, 0.56},
    {"least_outstanding", 1, 1, 0.40, 0.60},
};

START_TEST(test_weights)
{
    const lb_case_t *c = &lb_cases[_i];
    char extra[128];
    dal_t *dal;
    int i, n = 2000, on0 = 0, on1 = 0;
    long long id;
    double share;

    snprintf(extra, sizeof extra, "load_balance = %s\nread_your_writes = off\n", c->policy);
    dal = open_rw(c->w0, c->w1, extra);
    wait_in_rotation(dal);
    for (i = 0; i < n; i++) {
        id = server_of(dal, NULL, NULL, "SELECT @@server_id");
        on0 += id == REPLICA_ID(0, 0);
        on1 += id == REPLICA_ID(0, 1);
    }
    share = (double)on0 / n;
    ck_assert_int_eq(on0 + on1, n);
    ck_assert_msg(share >= c->lo && share <= c->hi, "%s %d:%d: replica 0 took %.3f of the reads",
                  c->policy, c->w0, c->w1, share);
    printf("rw: %s %d:%d: replica shares %.3f / %.3f\n", c->policy, c->w0, c->w1, share,
           1 - share);
    dal_close(dal);
}
END_TEST

/* ------------------------------------------------------- read-your-writes */

/* Both replicas of node 0 apply events 3 s late (in rotation: the lag
 * limit is an hour).  A session reads back what it wrote; another reader
 * sees the replica's older value, which shows the replicas are in use. */
START_TEST(test_read_your_writes)
{
    dal_t *dal = open_rw(1, 1, "max_replica_lag = 1h\nread_your_writes = session\n");
    dal_session_t *s = NULL, *other = NULL;
    dal_error_t err;
    char sql[128];
    long long end;
    int i;

    exec_ok(dal, NULL, "INSERT INTO kv VALUES (2, 0) ON DUPLICATE KEY UPDATE v = 0");
    wait_caught_up();
    set_delay(0, 3);
    set_delay(1, 3);
    ck_assert_int_eq(dal_session_open(dal, &s, &err), 0);
    ck_assert_int_eq(dal_session_open(dal, &other, &err), 0);
    wait_in_rotation(dal);
    for (i = 1; i <= 5; i++) {
        snprintf(sql, sizeof sql, "UPDATE kv SET v = %d WHERE k = 2", i);
        exec_ok(dal, s, sql);
        ck_assert_int_eq(one_int(dal, s, NULL, "SELECT v FROM kv WHERE k = 2", 0), i);
        ck_assert_int_eq(one_int(dal, other, NULL, "SELECT v, @@server_id FROM kv WHERE k = 2",
                                 0), 0);
    }
    /* outside a session the thread is the writer */
    exec_ok(dal, NULL, "UPDATE kv SET v = 6 WHERE k = 2");
    ck_assert_int_eq(one_int(dal, NULL, NULL, "SELECT v FROM kv WHERE k = 2", 0), 6);
    /* inside a committed transaction too */
    ck_assert_int_eq(dal_begin(s, &err), 0);
    exec_ok(dal, s, "UPDATE kv SET v = 7 WHERE k = 2");
    ck_assert_int_eq(dal_commit(s, &err), 0);
    ck_assert_int_eq(one_int(dal, s, NULL, "SELECT v FROM kv WHERE k = 2", 0), 7);
    ck_assert_int_eq(one_int(dal, other, NULL, "SELECT v FROM kv WHERE k = 2", 0), 0);
    /* once the replicas have applied the writes, the session reads them again */
    end = now_ms() + 15000;
    while (!is_replica_of(server_of(dal, s, NULL, "SELECT @@server_id"), 0)) {
        ck_assert_msg(now_ms() < end, "the session never went back to the replicas");
        usleep(50000);
    }
    ck_assert_int_eq(one_int(dal, s, NULL, "SELECT v FROM kv WHERE k = 2", 0), 7);
    dal_session_close(s);
    dal_session_close(other);
    dal_close(dal);
    set_delay(0, 0);
    set_delay(1, 0);
    wait_caught_up();
}
END_TEST

/* read_your_writes = off reads the delayed replica's old value; a window
 * sends reads to the master only for its length. */
START_TEST(test_read_your_writes_modes)
{
    dal_t *off = open_rw(1, 1, "max_replica_lag = 1h\nread_your_writes = off\n"), *win;
    long long id;

    exec_ok(off, NULL, "INSERT INTO kv VALUES (3, 0) ON DUPLICATE KEY UPDATE v = 0");
    wait_caught_up();
    set_delay(0, 3);
    set_delay(1, 3);
    wait_in_rotation(off);
    exec_ok(off, NULL, "UPDATE kv SET v = 1 WHERE k = 3");
    ck_assert_int_eq(one_int(off, NULL, NULL, "SELECT v FROM kv WHERE k = 3", 0), 0);
    dal_close(off);

    win = open_rw(1, 1, "max_replica_lag = 1h\nread_your_writes = 400ms\n");
    wait_in_rotation(win);
    exec_ok(win, NULL, "UPDATE kv SET v = 2 WHERE k = 3");
    ck_assert_int_eq(one_int(win, NULL, NULL, "SELECT v, @@server_id FROM kv WHERE k = 3", 1),
                     MASTER_ID(0));
    ck_assert_int_eq(one_int(win, NULL, NULL, "SELECT v FROM kv WHERE k = 3", 0), 2);
    usleep(500000);
    id = one_int(win, NULL, NULL, "SELECT v, @@server_id FROM kv WHERE k = 3", 1);
    ck_assert_msg(is_replica_of(id, 0), "after the window: server %lld", id);
    dal_close(win);
    set_delay(0, 0);
    set_delay(1, 0);
    wait_caught_up();
}
END_TEST

/* -------------------------------------------------------------------- lag */

static atomic_int beating;

/* Writes on node 0's master every 100 ms, so a delayed replica's lag grows. */
static void *heartbeat(void *arg)
{
    MYSQL *m = arg;

    while (atomic_load(&beating)) {
        if (mysql_query(m, "UPDATE rw_0.kv SET v = v + 1 WHERE k = 4") != 0)
            break;
        usleep(100000);
    }
    return NULL;
}

START_TEST(test_lag)
{
    dal_t *dal = open_rw(1, 1, "max_replica_lag = 1s\nread_your_writes = off\n");
    MYSQL *m = admin(mport[0]);
    pthread_t th;

    ck_assert_int_eq(mysql_query(m, "INSERT INTO rw_0.kv VALUES (4, 0) ON DUPLICATE KEY "
                                    "UPDATE v = 0"), 0);
    wait_in_rotation(dal);
    atomic_store(&beating, 1);
    ck_assert_int_eq(pthread_create(&th, NULL, heartbeat, m), 0);
    set_delay(1, 4);
    usleep(2500000); /* the lag grows past the limit */
    wait_reads(dal, 1, 0, 40, 15000);
    set_delay(1, 0);
    wait_reads(dal, 1, 1, 40, 15000);
    atomic_store(&beating, 0);
    pthread_join(th, NULL);
    mysql_close(m);
    dal_close(dal);
    wait_caught_up();
}
END_TEST

/* --------------------------------------------------------------- failover */

typedef struct reader {
    dal_t *dal;
    pthread_t th;
    atomic_long reads, errors, on_r0;
    char last_error[DAL_ERROR_MSG_MAX]; /* read once the thread is joined */
} reader_t;

static atomic_int reading;

/* Point reads, scatter reads and session reads, until told to stop;
 * every failure is counted. */
static void *reader_main(void *arg)
{
    reader_t *rd = arg;
    dal_session_t *s = NULL;
    dal_result_t *r = NULL;
    dal_error_t err;
    long i;

    if (dal_session_open(rd->dal, &s, &err) != 0)
        rd->errors++;
    for (i = 0; atomic_load(&reading); i++) {
        const char *sql = i % 3 == 2 ? "SELECT @@server_id FROM skv" : "SELECT @@server_id";
        int rc = i % 3 == 1 ? dal_session_query(s, NULL, sql, NULL, 0, &r, &err)
                            : dal_query(rd->dal, NULL, sql, NULL, 0, &r, &err);
        while (rc == 0 && (rc = dal_result_next(r, &err)) == 1)
            rd->on_r0 += dal_result_int(r, 0) == REPLICA_ID(0, 0);
        dal_result_free(r);
        r = NULL;
        if (rc < 0) {
            rd->errors++;
            snprintf(rd->last_error, sizeof rd->last_error, "%s", err.message);
        }
        rd->reads++;
    }
    dal_session_close(s);
    return NULL;
}

static void readers_total(reader_t *rd, int n, long *reads, long *errors, long *on_r0)
{
    int i;

    *reads = *errors = *on_r0 = 0;
    for (i = 0; i < n; i++) {
        *reads += rd[i].reads;
        *errors += rd[i].errors;
        *on_r0 += rd[i].on_r0;
        ck_assert_msg(atomic_load(&rd[i].errors) == 0, "reader %d: %ld errors", i,
                      atomic_load(&rd[i].errors));
    }
}

/* A replica's mariadbd is killed while four threads read: no read fails,
 * reads keep flowing, and the replica comes back after a restart. */
START_TEST(test_failover)
{
    dal_t *dal = open_rw(1, 1, "read_your_writes = off\n");
    reader_t rd[4];
    long reads0, reads1, errors, on_r0, on_r0_after;
    int i;

    wait_in_rotation(dal);
    memset(rd, 0, sizeof rd);
    atomic_store(&reading, 1);
    for (i = 0; i < 4; i++) {
        rd[i].dal = dal;
        ck_assert_int_eq(pthread_create(&rd[i].th, NULL, reader_main, &rd[i]), 0);
    }
    usleep(500000);
    cluster("kill", "m0-r0");
    usleep(100000); /* a read answered before the kill may still be counting */
    readers_total(rd, 4, &reads0, &errors, &on_r0);
    usleep(1500000);
    readers_total(rd, 4, &reads1, &errors, &on_r0_after);
    ck_assert_msg(reads1 - reads0 > 100, "only %ld reads in 1.5 s after the kill",
                  reads1 - reads0);
    ck_assert_int_eq(on_r0_after, on_r0);
    cluster("restart", "m0-r0");
    {
        long long end = now_ms() + 15000;
        do {
            ck_assert_msg(now_ms() < end, "the restarted replica never came back");
            usleep(100000);
            readers_total(rd, 4, &reads1, &errors, &on_r0_after);
        } while (on_r0_after == on_r0);
    }
    atomic_store(&reading, 0);
    for (i = 0; i < 4; i++) {
        pthread_join(rd[i].th, NULL);
        ck_assert_msg(rd[i].errors == 0, "reader %d, last error: %s", i, rd[i].last_error);
    }
    readers_total(rd, 4, &reads1, &errors, &on_r0_after);
    printf("rw: failover: %ld reads by 4 threads, %ld errors\n", reads1, errors);
    dal_close(dal);
    wait_caught_up();
}
END_TEST

/* ------------------------------------------------------------ master down */

/* Node 0's master is killed: writes fail at once naming ds0, reads go on
 * from the replicas, and writes work again once it is back -- on the same
 * dal_t. */
START_TEST(test_master_down)
{
    dal_t *dal = open_rw(1, 1, "read_your_writes = off\n");
    dal_error_t err;
    long long t0;
    int i, rc;

    exec_ok(dal, NULL, "INSERT INTO kv VALUES (5, 0) ON DUPLICATE KEY UPDATE v = 0");
    wait_in_rotation(dal);
    cluster("kill", "m0");
    for (i = 0; i < 5; i++) {
        t0 = now_ms();
        rc = dal_exec(dal, NULL, "UPDATE kv SET v = v + 1 WHERE k = 5", NULL, 0, NULL, &err);
        ck_assert_msg(rc == DAL_ECONNECT || rc == DAL_ESERVER, "write %d: %s", i,
                      dal_strerror(rc));
        ck_assert_msg(now_ms() - t0 < 1500, "write %d took %lld ms", i, now_ms() - t0);
        ck_assert_msg(strstr(err.message, "datasource ds0") != NULL, "%s", err.message);
    }
    /* the replicas hold the newest data there is: reads go on */
    for (i = 0; i < 50; i++) {
        ck_assert(is_replica_of(server_of(dal, NULL, NULL, "SELECT @@server_id"), 0));
        usleep(20000);
    }
    cluster("restart", "m0");
    /* no dead pooled connection is left to fail the first write */
    rc = dal_exec(dal, NULL, "UPDATE kv SET v = v + 1 WHERE k = 5", NULL, 0, NULL, &err);
    ck_assert_msg(rc == 0, "the first write after the restart: %s", err.message);
    ck_assert_int_eq(admin_int(mport[0], "SELECT v FROM rw_0.kv WHERE k = 5"), 1);
    dal_close(dal);
    wait_caught_up();
}
END_TEST

/* ------------------------------------------------------------------ main */

static void schema(void)
{
    dal_t *dal;

    admin_sql(mport[0], "CREATE TABLE IF NOT EXISTS rw_0.kv (k INT PRIMARY KEY, "
                        "v BIGINT NOT NULL); CREATE SEQUENCE IF NOT EXISTS rw_0.seq");
    dal = open_rw(1, 1, "");
    exec_ok(dal, NULL, "CREATE TABLE IF NOT EXISTS skv (id INT PRIMARY KEY, v BIGINT NOT NULL)");
    dal_close(dal);
    wait_caught_up();
}

static Suite *rw_suite(void)
{
    Suite *s = suite_create("rw");
    TCase *tc = tcase_create("live");

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, schema, NULL);
    tcase_add_test(tc, test_split);
    tcase_add_test(tc, test_split_scatter);
    tcase_add_test(tc, test_split_transactions);
    tcase_add_test(tc, test_split_pinned);
    tcase_add_test(tc, test_split_errors);
    tcase_add_test(tc, test_monitoring);
    tcase_add_loop_test(tc, test_weights, 0, sizeof lb_cases / sizeof lb_cases[0]);
    tcase_add_test(tc, test_read_your_writes);
    tcase_add_test(tc, test_read_your_writes_modes);
    tcase_add_test(tc, test_lag);
    tcase_add_test(tc, test_failover);
    tcase_add_test(tc, test_master_down);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status;

    load_ports();
    dir = tu_mkdtemp();
    status = tu_run(rw_suite(), CK_FORK_GETENV);
    tu_rmtree(dir);
    return status;
}
