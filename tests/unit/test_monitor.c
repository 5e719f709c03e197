/*
 * test_monitor.c -- monitoring: SQL normalisation, the monitor set, and the
 * prometheus and slowlog plugins.
 *
 * `test_monitor` (make check): sql_normalize; both plugins loaded from
 * their .so files against the fake host and fed events directly; the
 * Prometheus endpoint scraped over HTTP on loopback.
 *
 * `test_monitor live OUTDIR` (tests/suites/pool_monitor_test.sh): dal_open with
 * both monitors and a pool over a real cluster, a known workload run
 * through server_acquire with its events emitted the way the core emits
 * them, then /metrics scraped and checked by value; the scrape and the slow
 * log are left in OUTDIR for promtool and a JSON parser.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dal/dal.h>
#include <dal/plugin.h>

#include "conn.h"
#include "handle.h"
#include "stmt.h"
#include "fake_host.h"
#include "clock.h"
#include "host.h"
#include "monitor.h"
#include "pool.h"
#include "testutil.h"

/* ------------------------------------------------------------ helpers */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static char *scrape(unsigned port)
{
    char *body;

    ck_assert_int_eq(tu_http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &body), 200);
    return body;
}

static dal_event_t event(dal_event_type_t type)
{
    dal_event_t ev;

    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    ev.type = type;
    return ev;
}

/* ---------------------------------------------------------- normalising */

static const char *norm(const char *sql)
{
    static char out[512];

    sql_normalize(sql, strlen(sql), 0, out, sizeof out);
    return out;
}

START_TEST(normalize_replaces_literals)
{
    ck_assert_str_eq(norm("SELECT * FROM t WHERE a = 42 AND b = 'x''y' AND c = \"z\""),
                     "SELECT * FROM t WHERE a = ? AND b = ? AND c = ?");
    ck_assert_str_eq(norm("INSERT INTO t (a,b) VALUES (1.5e3, X'ff'), (0x1F, b'101')"),
                     "INSERT INTO t (a,b) VALUES (?, ?), (?, ?)");
    ck_assert_str_eq(norm("SET PASSWORD = PASSWORD('hunter2')"), "SET PASSWORD = PASSWORD(?)");
    ck_assert_str_eq(norm("SELECT _utf8mb4'secret', N'x' FROM t"), "SELECT ?, ? FROM t");
    ck_assert_str_eq(norm("SELECT a FROM t WHERE id = ? AND b IN (1,2,3)"),
                     "SELECT a FROM t WHERE id = ? AND b IN (?,?,?)");
}
END_TEST

START_TEST(normalize_drops_comments_and_blanks)
{
    ck_assert_str_eq(norm("  /* trace_id=abc */ SELECT\n\t1  -- hi 'there'\n FROM t # x"),
                     "SELECT ? FROM t");
    ck_assert_str_eq(norm("SELECT/*c*/a FROM t"), "SELECT a FROM t");
    ck_assert_str_eq(norm("SELECT `we``ird`, t.1e5 FROM t"), "SELECT `we``ird`, t.1e5 FROM t");
    /* an executable comment runs, so its literals are data too */
    ck_assert_str_eq(norm("SELECT /*!50100 'v', 7 */ 1"), "SELECT /*!50100 ?, ? */ ?");
}
END_TEST

START_TEST(normalize_never_leaks_an_unterminated_string)
{
    ck_assert_str_eq(norm("SELECT 'unterminated secret"), "SELECT ?");
    ck_assert_str_eq(norm("SELECT \"abc\\\" still secret"), "SELECT ?");
}
END_TEST

START_TEST(normalize_truncates_like_snprintf)
{
    const char *sql = "SELECT name FROM wm_food WHERE id = 123456";
    char out[16];
    size_t full = sql_normalize(sql, strlen(sql), 0, out, sizeof out);

    ck_assert_uint_eq(full, strlen("SELECT name FROM wm_food WHERE id = ?"));
    ck_assert_str_eq(out, "SELECT name FRO");
    ck_assert_uint_eq(sql_normalize(sql, strlen(sql), 0, NULL, 0), full);
    /* len bounds the input: no NUL needed */
    ck_assert_uint_eq(sql_normalize("SELECT 1xyz", 8, 0, out, sizeof out), 8);
    ck_assert_str_eq(out, "SELECT ?");
}
END_TEST

START_TEST(emit_to_no_set_is_a_no_op)
{
    dal_event_t ev = event(DAL_EVENT_STATEMENT);

    monitor_emit(NULL, &ev);
    ck_assert_int_eq(monitor_active(NULL), 0);
}
END_TEST

/* ------------------------------------------------------ plugins (unit) */

static fake_plugin_t plug;
static const dal_monitor_ops_t *mops;
static dal_host_t *host;
static char *dir;

static void unit_setup(void)
{
    host = fake_host_new();
    dir = tu_mkdtemp();
    plug.handle = NULL;
}

static void unit_teardown(void)
{
    if (plug.handle != NULL)
        fake_plugin_close(&plug);
    fake_host_free(host);
    tu_rmtree(dir);
    free(dir);
}

static void *make(const char *name, const fake_param_t *items, size_t n)
{
    char path[1024];
    dal_plugin_params_t *p;
    dal_error_t err;
    void *inst = NULL;

    if (plug.handle == NULL) {
        ck_assert_int_eq(fake_plugin_path(path, sizeof path, tu_env("DAL_PLUGIN_DIR"),
                                          DAL_PLUGIN_MONITOR, name), 0);
        ck_assert_msg(fake_plugin_open(path, DAL_PLUGIN_MONITOR, name, &plug, &err) == 0,
                      "%s", err.message);
        mops = plug.desc->ops;
    }
    p = fake_params_new(plug.desc->params, items, n, &err);
    ck_assert_msg(p != NULL, "%s", err.message);
    ck_assert_msg(mops->create(fake_host_api(), host, p, &inst, &err) == 0, "%s", err.message);
    fake_params_free(p);
    return inst;
}

static void *make_prom(unsigned port)
{
    char addr[64];
    fake_param_t p[1] = {{"address", 0, addr}};

    snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
    return make("prometheus", p, 1);
}

/* A statement event whose labels are vouched for by labels_gen gen (0: not). */
static void statement_in(void *inst, uint32_t gen, const char *kind, const char *table,
                         uint64_t ns, int code)
{
    dal_event_t ev = event(DAL_EVENT_STATEMENT);

    ev.kind = kind;
    ev.table = table;
    ev.latency_ns = ns;
    ev.error_code = code;
    ev.labels_gen = gen;
    mops->on_event(inst, &ev);
}

static void statement(void *inst, const char *kind, const char *table, uint64_t ns, int code)
{
    statement_in(inst, 0, kind, table, ns, code);
}

static void execution(void *inst, const char *ds, uint64_t ns, unsigned myerr)
{
    dal_event_t ev = event(DAL_EVENT_EXECUTION);

    ev.kind = "select";
    ev.datasource = ds;
    ev.server = "127.0.0.1:3306";
    ev.latency_ns = ns;
    ev.error_code = myerr ? DAL_ESERVER : 0;
    ev.mysql_errno = myerr;
    mops->on_event(inst, &ev);
}

/* dal_statements_total{kind="select",table=TABLE} in the scrape m. */
static double selects_of(const char *m, const char *table)
{
    char series[192];

    snprintf(series, sizeof series, "dal_statements_total{kind=\"select\",table=\"%s\"}", table);
    return tu_metric(m, series);
}

START_TEST(prometheus_counts_and_histograms)
{
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    dal_event_t ev;
    char *m;
    int i;

    for (i = 0; i < 3; i++)
        statement(inst, "select", "wm_food", 2000000u, 0);      /* 2 ms */
    statement(inst, "select", "wm_food", 3000000000u, 0);       /* 3 s */
    statement(inst, "insert", "wm_food", 50000u, DAL_ESERVER);  /* 50 us, failed */
    execution(inst, "db0", 1000000u, 0);
    execution(inst, "db0", 1000000u, 1062);
    ev = event(DAL_EVENT_ROUTE);
    ev.datasource = "db0";
    ev.kind = "replica";
    mops->on_event(inst, &ev);
    ev = event(DAL_EVENT_RELOAD);
    mops->on_event(inst, &ev);
    ev.error_code = DAL_ECONFIG;
    mops->on_event(inst, &ev);
    ev = event(DAL_EVENT_IDGEN);
    ev.table = "food_ids";
    mops->on_event(inst, &ev);
    ev = event(DAL_EVENT_PIN);
    ev.datasource = "db0";
    ev.server = "127.0.0.1:3306";
    ev.kind = "user_variable";
    mops->on_event(inst, &ev);
    mops->on_event(inst, &ev);
    ev.kind = "named_lock";
    mops->on_event(inst, &ev);
    m = scrape(port);
    ck_assert_double_eq(selects_of(m, "wm_food"), 4);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_bucket{kind=\"select\",table=\"wm_food\",le=\"0.001\"}"), 0);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_bucket{kind=\"select\",table=\"wm_food\",le=\"0.0025\"}"), 3);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_bucket{kind=\"select\",table=\"wm_food\",le=\"2.5\"}"), 3);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_bucket{kind=\"select\",table=\"wm_food\",le=\"+Inf\"}"), 4);
    ck_assert_double_eq_tol(tu_metric(m, "dal_statement_duration_seconds_sum{kind=\"select\",table=\"wm_food\"}"), 3.006, 1e-9);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_count{kind=\"select\",table=\"wm_food\"}"), 4);
    ck_assert_double_eq(tu_metric(m, "dal_statement_errors_total{kind=\"insert\",code=\"DAL_ESERVER\"}"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_executions_total{datasource=\"db0\",server=\"127.0.0.1:3306\"}"), 2);
    ck_assert_double_eq(tu_metric(m, "dal_execution_errors_total{datasource=\"db0\",server=\"127.0.0.1:3306\",mysql_errno=\"1062\"}"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_routes_total{datasource=\"db0\",role=\"replica\"}"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_config_reloads_total"), 2);
    ck_assert_double_eq(tu_metric(m, "dal_config_reload_failures_total"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_id_segments_total{generator=\"food_ids\"}"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_session_pins_total{datasource=\"db0\",state=\"user_variable\"}"), 2);
    ck_assert_double_eq(tu_metric(m, "dal_session_pins_total{datasource=\"db0\",state=\"named_lock\"}"), 1);
    ck_assert_ptr_nonnull(strstr(m, "# TYPE dal_session_pins_total counter\n"));
    ck_assert_double_eq(tu_metric(m, "dal_monitor_dropped_series_total"), 0);
    ck_assert_ptr_nonnull(strstr(m, "# TYPE dal_statement_duration_seconds histogram\n"));
    ck_assert_ptr_nonnull(strstr(m, "# TYPE dal_statements_total counter\n"));
    free(m);
    mops->destroy(inst);
}
END_TEST

/* Which label values make one series: the lookup hashes and compares the
 * values as they are stored (cut to 127 bytes), with their lengths. */
START_TEST(prometheus_series_identity)
{
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    char a[201], b[201], c[201], want[400], name[32];
    char *m;
    int i;

    memset(a, 'x', 200);
    a[200] = '\0';
    memcpy(b, a, sizeof b);
    memset(b + 127, 'y', 73);          /* differs only after the cut: same series */
    memcpy(c, a, sizeof c);
    c[126] = 'y';                      /* differs before it: another series */
    c[127] = '\0';
    statement(inst, "ab", "", 1000u, 0);
    statement(inst, "a", "b", 1000u, 0);
    statement(inst, "a", "b", 1000u, 0);
    statement(inst, "select", a, 1000u, 0);
    statement(inst, "select", b, 1000u, 0);
    statement(inst, "select", c, 1000u, 0);
    for (i = 0; i < 500; i++) {        /* many series, lengths 3 to 12 */
        snprintf(name, sizeof name, "t%d%.*s", i, i % 9, "_________");
        statement(inst, "select", name, 1000u, 0);
        if (i % 7 == 0)
            statement(inst, "select", name, 1000u, 0);
    }
    m = scrape(port);
    ck_assert_double_eq(tu_metric(m, "dal_statements_total{kind=\"ab\",table=\"\"}"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_statements_total{kind=\"a\",table=\"b\"}"), 2);
    snprintf(want, sizeof want, "dal_statements_total{kind=\"select\",table=\"%.127s\"}", a);
    ck_assert_double_eq(tu_metric(m, want), 2);
    snprintf(want, sizeof want, "dal_statements_total{kind=\"select\",table=\"%s\"}", c);
    ck_assert_double_eq(tu_metric(m, want), 1);
    for (i = 0; i < 500; i++) {
        snprintf(name, sizeof name, "t%d%.*s", i, i % 9, "_________");
        snprintf(want, sizeof want, "dal_statements_total{kind=\"select\",table=\"%s\"}", name);
        ck_assert_double_eq(tu_metric(m, want), i % 7 == 0 ? 2 : 1);
    }
    ck_assert_double_eq(tu_metric(m, "dal_monitor_dropped_series_total"), 0);
    free(m);
    mops->destroy(inst);
}
END_TEST


/* A thread remembers the series it used last: a label at the same address
 * with new text is another series, and a registry made again (perhaps at
 * the old one's address) never gets the old one's series. */
START_TEST(prometheus_same_address_new_text)
{
    unsigned port = tu_free_port(), port2 = tu_free_port();
    void *inst = make_prom(port);
    char table[16], *m;

    strcpy(table, "alpha");
    statement(inst, "select", table, 1000u, 0);
    strcpy(table, "beta");
    statement(inst, "select", table, 1000u, 0);
    strcpy(table, "alphabet");        /* same start, longer */
    statement(inst, "select", table, 1000u, 0);
    strcpy(table, "alpha");
    statement(inst, "select", table, 1000u, 0);
    statement(inst, "select", table, 1000u, 0);
    m = scrape(port);
    ck_assert_double_eq(selects_of(m, "alpha"), 3);
    ck_assert_double_eq(selects_of(m, "beta"), 1);
    ck_assert_double_eq(selects_of(m, "alphabet"), 1);
    free(m);
    mops->destroy(inst);
    inst = make_prom(port2);
    statement(inst, "select", table, 1000u, 0);
    m = scrape(port2);
    ck_assert_double_eq(selects_of(m, "alpha"), 1);
    free(m);
    mops->destroy(inst);
}
END_TEST

/* The core vouches (labels_gen) only for labels that live as long as the
 * snapshot -- a sharded table's configured name, node and server names --
 * never for a table name that is the statement's own text, which belongs
 * to a cached analysis that can go while the snapshot stays. */
START_TEST(core_vouches_for_snapshot_labels_only)
{
    static const char q[] = "SELECT * FROM T WHERE k = ?";
    char ini[1024], msg[128], *path;
    dal_value_t v = dal_int(7);
    dal_routing_t plain;
    dal_snapshot_t *snap;
    dal_sql_t *sql = NULL;
    dal_t *dal = NULL;
    dal_event_t ev;
    dal_error_t err;
    dal_stmt_t st;

    snprintf(ini, sizeof ini,
             "[datasource ds0]\nmaster = mysql://u:pw@127.0.0.1:1/p0\n"
             "[table t]\ndatasource = ds\ndb_shard_num = 1\ntable_shard_num = 2\n"
             "shard_key = k\nstrategy = mod\n"
             "[monitor prometheus]\naddress = 127.0.0.1:%u\n", tu_free_port());
    path = tu_write(dir, "gen.ini", ini);
    ck_assert_msg(dal_open(path, NULL, &dal, &err) == 0, "%s", err.message);
    free(path);
    snap = snapshot_acquire(dal);
    ck_assert(monitor_active(snap->monitors));
    monitor_event_init(snap->monitors, &ev, DAL_EVENT_STATEMENT);
    ck_assert_uint_eq(ev.struct_size, sizeof ev);
    ck_assert_int_eq(ev.type, DAL_EVENT_STATEMENT);
    ck_assert_uint_ne(ev.labels_gen, 0);
    ck_assert_uint_eq(ev.labels_gen, snap->gen);
    /* sharded: the configured name, vouched for */
    ck_assert_msg(stmt_prepare(dal->sql_cache, snap, NULL, NULL,
                               (dal_stmt_text_t){q, NULL, sizeof q - 1, 0}, &v, 1,
                               &st, &err) == 0, "%s", err.message);
    routing_label_table(&st.rt, &ev);
    ck_assert_str_eq(ev.table, "t");
    ck_assert_ptr_eq(ev.table, st.rt.primary->cfg->name);
    ck_assert_uint_eq(ev.labels_gen, snap->gen);
    stmt_clear(&st);
    /* not sharded: the statement's text, not vouched for */
    ck_assert_int_eq(sql_analyse("SELECT * FROM plain", 19, 0, &sql, msg, sizeof msg), 0);
    memset(&plain, 0, sizeof plain);
    plain.sql = sql;
    monitor_event_init(snap->monitors, &ev, DAL_EVENT_ROUTE);
    routing_label_table(&plain, &ev);
    ck_assert_str_eq(ev.table, "plain");
    ck_assert_uint_eq(ev.labels_gen, 0);
    sql_unref(sql);
    snapshot_unref(snap);
    dal_close(dal);
}
END_TEST

/* labels_gen lets the exporter remember series by label pointer.  Within
 * one generation that is right; for another generation, for events without
 * the promise (0, or a host whose events end before the field) and for a
 * new registry it must go by the text again. */
START_TEST(prometheus_labels_gen)
{
    unsigned port = tu_free_port(), port2 = tu_free_port();
    void *inst = make_prom(port);
    char table[16], *m;
    dal_event_t ev;

    strcpy(table, "alpha");
    statement_in(inst, 7, "select", table, 1000u, 0);
    statement_in(inst, 7, "select", table, 1000u, 0);
    strcpy(table, "beta");            /* the same address in a new generation */
    statement_in(inst, 8, "select", table, 1000u, 0);
    strcpy(table, "gamma");           /* no promise */
    statement_in(inst, 0, "select", table, 1000u, 0);
    strcpy(table, "delta");           /* an older host: the field is not there */
    ev = event(DAL_EVENT_STATEMENT);
    ev.struct_size = offsetof(dal_event_t, labels_gen);
    ev.labels_gen = 8;
    ev.kind = "select";
    ev.table = table;
    mops->on_event(inst, &ev);
    m = scrape(port);
    ck_assert_double_eq(selects_of(m, "alpha"), 2);
    ck_assert_double_eq(selects_of(m, "beta"), 1);
    ck_assert_double_eq(selects_of(m, "gamma"), 1);
    ck_assert_double_eq(selects_of(m, "delta"), 1);
    free(m);
    mops->destroy(inst);
    /* a new registry, perhaps where the old one was: nothing remembered */
    inst = make_prom(port2);
    strcpy(table, "beta");
    statement_in(inst, 8, "select", table, 1000u, 0);
    statement_in(inst, 8, "select", table, 1000u, 0);
    m = scrape(port2);
    ck_assert_double_eq(selects_of(m, "beta"), 2);
    free(m);
    mops->destroy(inst);
}
END_TEST

#define PT_THREADS 6
#define PT_EVENTS 2000

static void *prom_thread(void *inst)
{
    int i;

    for (i = 0; i < PT_EVENTS; i++) {
        /* every other one remembered by pointer (labels_gen): both add up */
        statement_in(inst, (uint32_t)(i % 2), "select", "t", (uint64_t)(i % 4 + 1) * 100000u,
                     0);
        execution(inst, i % 2 ? "db1" : "db2", 200000u, 0);
    }
    return NULL;
}

/* Counters kept per thread (stripes) add up to exactly what every thread
 * counted, buckets and sums included. */
START_TEST(prometheus_threads_add_up)
{
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    pthread_t t[PT_THREADS];
    double n = PT_THREADS * PT_EVENTS;
    char *m;
    int i;

    for (i = 0; i < PT_THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, prom_thread, inst), 0);
    for (i = 0; i < PT_THREADS; i++)
        pthread_join(t[i], NULL);
    m = scrape(port);
    ck_assert_double_eq(selects_of(m, "t"), n);
    /* latencies 100, 200, 300, 400 us in turn: a quarter at or under 100 us */
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_bucket{kind=\"select\","
                                     "table=\"t\",le=\"0.0001\"}"), n / 4);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_bucket{kind=\"select\","
                                     "table=\"t\",le=\"0.00025\"}"), n / 2);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_count{kind=\"select\","
                                     "table=\"t\"}"), n);
    ck_assert_double_eq_tol(tu_metric(m, "dal_statement_duration_seconds_sum{kind=\"select\","
                                         "table=\"t\"}"), n * 250e-6, 1e-6);
    ck_assert_double_eq(tu_metric(m, "dal_executions_total{datasource=\"db1\","
                                     "server=\"127.0.0.1:3306\"}"), n / 2);
    ck_assert_double_eq(tu_metric(m, "dal_executions_total{datasource=\"db2\","
                                     "server=\"127.0.0.1:3306\"}"), n / 2);
    free(m);
    mops->destroy(inst);
}
END_TEST

START_TEST(prometheus_pool_figures)
{
    static const char *const figures[] = {"in_use", "idle", "waiting", "created", "closed",
                                          "timed_out"};
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    dal_event_t ev = event(DAL_EVENT_POOL);
    char *m;
    size_t i;

    ev.datasource = "db1";
    ev.server = "h:1";
    for (i = 0; i < 6; i++) {
        ev.kind = figures[i];
        ev.rows = 10 + i;
        mops->on_event(inst, &ev);
    }
    ev.kind = "in_use"; /* a gauge: set, not added */
    ev.rows = 3;
    mops->on_event(inst, &ev);
    m = scrape(port);
    ck_assert_double_eq(tu_metric(m, "dal_pool_connections{datasource=\"db1\",server=\"h:1\",state=\"in_use\"}"), 3);
    ck_assert_double_eq(tu_metric(m, "dal_pool_connections{datasource=\"db1\",server=\"h:1\",state=\"idle\"}"), 11);
    ck_assert_double_eq(tu_metric(m, "dal_pool_waiting{datasource=\"db1\",server=\"h:1\"}"), 12);
    ck_assert_double_eq(tu_metric(m, "dal_pool_connections_created_total{datasource=\"db1\",server=\"h:1\"}"), 13);
    ck_assert_double_eq(tu_metric(m, "dal_pool_connections_closed_total{datasource=\"db1\",server=\"h:1\"}"), 14);
    ck_assert_double_eq(tu_metric(m, "dal_pool_acquire_timeouts_total{datasource=\"db1\",server=\"h:1\"}"), 15);
    free(m);
    mops->destroy(inst);
}
END_TEST

/* The analysis cache's figures are absolute, as the pools'. */
START_TEST(prometheus_sql_cache_figures)
{
    static const char *const figures[] = {"entries", "bytes", "max_bytes", "evictions",
                                          "uncached", "hits", "misses"};
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    dal_event_t ev = event(DAL_EVENT_SQL_CACHE);
    char *m;
    size_t i;

    for (i = 0; i < 7; i++) {
        ev.kind = figures[i];
        ev.rows = 100 + i;
        mops->on_event(inst, &ev);
    }
    ev.kind = "bytes"; /* a gauge: set, not added */
    ev.rows = 5000;
    mops->on_event(inst, &ev);
    m = scrape(port);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_entries"), 100);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_bytes"), 5000);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_max_bytes"), 102);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_evictions_total"), 103);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_uncached_total"), 104);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_hits_total"), 105);
    ck_assert_double_eq(tu_metric(m, "dal_sql_cache_misses_total"), 106);
    ck_assert_ptr_nonnull(strstr(m, "# TYPE dal_sql_cache_bytes gauge\n"));
    ck_assert_ptr_nonnull(strstr(m, "# TYPE dal_sql_cache_evictions_total counter\n"));
    free(m);
    mops->destroy(inst);
}
END_TEST

START_TEST(prometheus_escapes_labels_and_handles_nulls)
{
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    char *m;

    statement(inst, "select", "we\"ird\\na\nme", 1000u, 0);
    statement(inst, NULL, NULL, 1000u, 0);
    m = scrape(port);
    ck_assert_double_eq(tu_metric(m, "dal_statements_total{kind=\"select\",table=\"we\\\"ird\\\\na\\nme\"}"), 1);
    ck_assert_double_eq(tu_metric(m, "dal_statements_total{kind=\"\",table=\"\"}"), 1);
    free(m);
    mops->destroy(inst);
}
END_TEST

START_TEST(prometheus_http_errors)
{
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    char *body;

    ck_assert_int_eq(tu_http(port, "GET / HTTP/1.0\r\n\r\n", &body), 404);
    free(body);
    ck_assert_int_eq(tu_http(port, "POST /metrics HTTP/1.0\r\n\r\n", &body), 405);
    free(body);
    ck_assert_int_eq(tu_http(port, "HEAD /metrics HTTP/1.0\r\n\r\n", &body), 200);
    ck_assert_str_eq(body, "");
    free(body);
    ck_assert_int_eq(tu_http(port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n", &body), 200);
    free(body);
    mops->destroy(inst);
}
END_TEST

START_TEST(prometheus_full_table_drops_and_counts)
{
    unsigned port = tu_free_port();
    void *inst = make_prom(port);
    char table[32], *m;
    int i;

    for (i = 0; i < 4000; i++) {
        snprintf(table, sizeof table, "t%d", i);
        statement(inst, "select", table, 1000u, 0);
    }
    m = scrape(port);
    ck_assert_double_gt(tu_metric(m, "dal_monitor_dropped_series_total"), 0);
    ck_assert_double_eq(selects_of(m, "t0"), 1);
    free(m);
    mops->destroy(inst);
}
END_TEST

/* A reload makes the new instance while the old one lives: same address,
 * one listener, counters carry on; the port is free once both are gone. */
START_TEST(prometheus_instances_share_an_address)
{
    unsigned port = tu_free_port();
    void *a = make_prom(port), *b = make_prom(port);
    char *m;

    statement(a, "select", "t", 1000u, 0);
    statement(b, "select", "t", 1000u, 0);
    mops->destroy(a);
    m = scrape(port);
    ck_assert_double_eq(selects_of(m, "t"), 2);
    free(m);
    mops->destroy(b);
    a = make_prom(port); /* free again: a fresh exporter */
    m = scrape(port);
    ck_assert_double_eq(selects_of(m, "t"), -1);
    free(m);
    mops->destroy(a);
}
END_TEST

START_TEST(prometheus_bad_address_fails_create)
{
    char path[1024];
    fake_param_t p[1] = {{"address", 0, "no-port-here"}};
    dal_plugin_params_t *pp;
    dal_error_t err;
    void *inst = NULL;

    ck_assert_int_eq(fake_plugin_path(path, sizeof path, tu_env("DAL_PLUGIN_DIR"),
                                      DAL_PLUGIN_MONITOR, "prometheus"), 0);
    ck_assert_int_eq(fake_plugin_open(path, DAL_PLUGIN_MONITOR, "prometheus", &plug, &err), 0);
    mops = plug.desc->ops;
    pp = fake_params_new(plug.desc->params, p, 1, &err);
    ck_assert_int_eq(mops->create(fake_host_api(), host, pp, &inst, &err), DAL_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err.message, "no-port-here"));
    fake_params_free(pp);
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    char *text;
    size_t n;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fstat(fileno(f), &st), 0);
    text = malloc((size_t)st.st_size + 1);
    n = fread(text, 1, (size_t)st.st_size, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static size_t count_of(const char *text, const char *s)
{
    size_t n = 0;

    for (; (text = strstr(text, s)) != NULL; text += strlen(s))
        n++;
    return n;
}

static void *make_slowlog(const char *path, const char *threshold, const char *events,
                          const char *buffer)
{
    fake_param_t p[4] = {{"path", 0, path}, {"threshold", 0, threshold},
                         {"events", 0, events}, {"buffer_size", 0, buffer}};

    return make("slowlog", p, 4);
}

START_TEST(slowlog_writes_slow_and_failed)
{
    char path[1024], *text, sql[256];
    dal_event_t ev = event(DAL_EVENT_EXECUTION);
    void *inst;
    const char *raw = "SELECT * FROM t WHERE pw = 'hunter2' AND id = 424242";

    snprintf(path, sizeof path, "%s/slow.log", dir);
    inst = make_slowlog(path, "10ms", "execution", "1048576");
    sql_normalize(raw, strlen(raw), 0, sql, sizeof sql);
    ev.sql = sql;
    ev.kind = "select";
    ev.datasource = "db0";
    ev.server = "127.0.0.1:3306";
    ev.physical_table = "t_3";
    ev.trace_id = "tr\"ace";
    ev.rows = 7;
    ev.latency_ns = 25000000u; /* slow */
    mops->on_event(inst, &ev);
    ev.latency_ns = 1000u; /* fast */
    mops->on_event(inst, &ev);
    ev.error_code = DAL_ESERVER; /* fast but failed */
    ev.mysql_errno = 1146;
    mops->on_event(inst, &ev);
    ev.type = DAL_EVENT_STATEMENT; /* not asked for */
    ev.latency_ns = 99000000u;
    mops->on_event(inst, &ev);
    mops->destroy(inst); /* flushes */
    text = slurp(path);
    ck_assert_uint_eq(count_of(text, "\n"), 2);
    ck_assert_ptr_nonnull(strstr(text, "\"type\":\"execution\",\"latency_ms\":25.000,\"kind\":\"select\""));
    ck_assert_ptr_nonnull(strstr(text, "\"datasource\":\"db0\",\"server\":\"127.0.0.1:3306\",\"physical_table\":\"t_3\",\"trace_id\":\"tr\\\"ace\",\"rows\":7"));
    ck_assert_ptr_nonnull(strstr(text, "\"sql\":\"SELECT * FROM t WHERE pw = ? AND id = ?\"}"));
    ck_assert_ptr_nonnull(strstr(text, "\"error\":-9,\"mysql_errno\":1146"));
    ck_assert_ptr_null(strstr(text, "hunter2"));
    ck_assert_ptr_null(strstr(text, "424242"));
    ck_assert_int_eq(text[0], '{');
    free(text);
}
END_TEST

START_TEST(slowlog_follows_rotation)
{
    char path[1024], moved[1024], *text;
    dal_event_t ev = event(DAL_EVENT_STATEMENT);
    void *inst;

    snprintf(path, sizeof path, "%s/slow.log", dir);
    snprintf(moved, sizeof moved, "%s/slow.log.1", dir);
    inst = make_slowlog(path, "0", "statement, execution", "1048576");
    ev.sql = "SELECT ?";
    ev.table = "first";
    mops->on_event(inst, &ev);
    for (int i = 0; i < 200; i++) { /* until the writer has it on disk */
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > 0)
            break;
        sleep_ms(10);
    }
    ck_assert_int_eq(rename(path, moved), 0); /* logrotate's move */
    ev.table = "second";
    mops->on_event(inst, &ev);
    mops->destroy(inst);
    text = slurp(moved);
    ck_assert_ptr_nonnull(strstr(text, "\"table\":\"first\""));
    ck_assert_ptr_null(strstr(text, "\"table\":\"second\""));
    free(text);
    text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "\"table\":\"second\""));
    free(text);
}
END_TEST

/* Every line is either written or counted in a "dropped" line. */
START_TEST(slowlog_drops_are_counted)
{
    char path[1024], *text, *p, sql[1000];
    dal_event_t ev = event(DAL_EVENT_EXECUTION);
    void *inst;
    unsigned long dropped = 0;
    int i, n = 5000;

    snprintf(path, sizeof path, "%s/slow.log", dir);
    memset(sql, 'x', sizeof sql - 1);
    sql[sizeof sql - 1] = '\0';
    inst = make_slowlog(path, "0", "execution", "8192");
    ev.sql = sql;
    for (i = 0; i < n; i++)
        mops->on_event(inst, &ev);
    mops->destroy(inst);
    text = slurp(path);
    for (p = text; (p = strstr(p, "\"type\":\"dropped\",\"count\":")) != NULL; p++)
        dropped += strtoul(p + strlen("\"type\":\"dropped\",\"count\":"), NULL, 10);
    ck_assert_uint_eq(count_of(text, "\"type\":\"execution\"") + dropped, (size_t)n);
    free(text);
}
END_TEST

START_TEST(slowlog_cuts_long_sql_and_bad_utf8)
{
    char path[1024], *text, *sql = malloc(20001);
    dal_event_t ev = event(DAL_EVENT_EXECUTION);
    void *inst;

    snprintf(path, sizeof path, "%s/slow.log", dir);
    memset(sql, '"', 20000); /* every byte escaped: twice as long */
    sql[20000] = '\0';
    sql[0] = (char)0xff;
    inst = make_slowlog(path, "0", "execution", "1048576");
    ev.sql = sql;
    mops->on_event(inst, &ev);
    mops->destroy(inst);
    text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "\"sql\":\"\\ufffd\\\"\\\"")); /* U+FFFD, then escapes */
    ck_assert_ptr_nonnull(strstr(text, "\",\"sql_truncated\":true}\n"));
    ck_assert_uint_lt(strlen(text), 8192);
    free(text);
    free(sql);
}
END_TEST

START_TEST(slowlog_unwritable_path_fails_create)
{
    char path[1024];
    fake_param_t p[1] = {{"path", 0, "/nonexistent/dir/slow.log"}};
    dal_plugin_params_t *pp;
    dal_error_t err;
    void *inst = NULL;

    ck_assert_int_eq(fake_plugin_path(path, sizeof path, tu_env("DAL_PLUGIN_DIR"),
                                      DAL_PLUGIN_MONITOR, "slowlog"), 0);
    ck_assert_int_eq(fake_plugin_open(path, DAL_PLUGIN_MONITOR, "slowlog", &plug, &err), 0);
    mops = plug.desc->ops;
    pp = fake_params_new(plug.desc->params, p, 1, &err);
    ck_assert_int_eq(mops->create(fake_host_api(), host, pp, &inst, &err), DAL_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/dir/slow.log"));
    fake_params_free(pp);
}
END_TEST

static Suite *unit_suite(void)
{
    Suite *s = suite_create("monitor");
    TCase *tn = tcase_create("normalize"), *tp = tcase_create("prometheus"),
          *tl = tcase_create("slowlog");

    tcase_add_test(tn, normalize_replaces_literals);
    tcase_add_test(tn, normalize_drops_comments_and_blanks);
    tcase_add_test(tn, normalize_never_leaks_an_unterminated_string);
    tcase_add_test(tn, normalize_truncates_like_snprintf);
    tcase_add_test(tn, emit_to_no_set_is_a_no_op);
    suite_add_tcase(s, tn);
    tcase_add_checked_fixture(tp, unit_setup, unit_teardown);
    tcase_add_test(tp, prometheus_counts_and_histograms);
    tcase_add_test(tp, prometheus_series_identity);
    tcase_add_test(tp, prometheus_same_address_new_text);
    tcase_add_test(tp, prometheus_labels_gen);
    tcase_add_test(tp, core_vouches_for_snapshot_labels_only);
    tcase_add_test(tp, prometheus_threads_add_up);
    tcase_add_test(tp, prometheus_pool_figures);
    tcase_add_test(tp, prometheus_sql_cache_figures);
    tcase_add_test(tp, prometheus_escapes_labels_and_handles_nulls);
    tcase_add_test(tp, prometheus_http_errors);
    tcase_add_test(tp, prometheus_full_table_drops_and_counts);
    tcase_add_test(tp, prometheus_instances_share_an_address);
    tcase_add_test(tp, prometheus_bad_address_fails_create);
    suite_add_tcase(s, tp);
    tcase_add_checked_fixture(tl, unit_setup, unit_teardown);
    tcase_set_timeout(tl, 60);
    tcase_add_test(tl, slowlog_writes_slow_and_failed);
    tcase_add_test(tl, slowlog_follows_rotation);
    tcase_add_test(tl, slowlog_drops_are_counted);
    tcase_add_test(tl, slowlog_cuts_long_sql_and_bad_utf8);
    tcase_add_test(tl, slowlog_unwritable_path_fails_create);
    suite_add_tcase(s, tl);
    return s;
}

/* ------------------------------------------------------------ live part */

static const char *outdir;

/* One statement the way the core reports it: run on node, then one
 * EXECUTION and one STATEMENT event with normalised SQL. */
static void run_and_emit(dal_snapshot_t *snap, dal_node_t *node, const char *raw,
                         const char *kind, const char *table)
{
    char sql[512], server[320];
    dal_event_t ex = event(DAL_EVENT_EXECUTION), st;
    dal_conn_t *c;
    dal_error_t err;
    uint64_t t0 = clock_now_ns();
    MYSQL_RES *r;
    int reused;

    sql_normalize(raw, strlen(raw), 0, sql, sizeof sql);
    pool_set_statement(sql, "trace-live");
    ck_assert_msg(server_acquire(&node->master, &c, &reused, &err) == 0, "%s", err.message);
    if (mysql_query(&c->mysql, raw) != 0) {
        ex.error_code = DAL_ESERVER;
        ex.mysql_errno = mysql_errno(&c->mysql);
    }
    r = mysql_store_result(&c->mysql);
    ex.rows = r ? mysql_num_rows(r) : mysql_affected_rows(&c->mysql);
    mysql_free_result(r);
    server_release(&node->master, c, 1);
    pool_set_statement(NULL, NULL);
    snprintf(server, sizeof server, "%s", node->master.address);
    ex.kind = kind;
    ex.table = table;
    ex.datasource = node->cfg->name;
    ex.server = server;
    ex.physical_table = table;
    ex.sql = sql;
    ex.trace_id = "trace-live";
    ex.latency_ns = clock_now_ns() - t0;
    st = ex;
    st.type = DAL_EVENT_STATEMENT;
    monitor_emit(snap->monitors, &ex);
    monitor_emit(snap->monitors, &st);
}

static void save(const char *name, const char *text)
{
    free(tu_write(outdir, name, text));
}

START_TEST(live_metrics_after_a_known_workload)
{
    const char *ports = tu_env("DAL_TEST_PORTS");
    unsigned port = tu_free_port(), p0 = 0;
    char ini[2048], *path, *m, want[512], server[320];
    dal_snapshot_t *snap;
    dal_node_t *node;
    dal_t *dal = NULL;
    dal_error_t err;
    int i;

    ck_assert_int_eq(sscanf(ports, "%u", &p0), 1);
    snprintf(ini, sizeof ini,
             "[dal]\npool = default\npool.max_size = 4\ndefault_datasource = ds0\n"
             "[datasource ds0]\nmaster = mysql://dal:dalpass@127.0.0.1:%u/product_0\n"
             "[monitor prometheus]\naddress = 127.0.0.1:%u\n"
             "[monitor slow]\nplugin = slowlog\npath = %s/slow.log\nthreshold = 0\n"
             "events = statement, execution\n",
             p0, port, outdir);
    path = tu_write(outdir, "dal.ini", ini);
    ck_assert_msg(dal_open(path, NULL, &dal, &err) == 0, "%s", err.message);
    free(path);
    snap = snapshot_acquire(dal);
    ck_assert(monitor_active(snap->monitors));
    node = snapshot_node(snap, "ds0");
    run_and_emit(snap, node, "CREATE TABLE IF NOT EXISTS mon_t (id INT PRIMARY KEY, pw VARCHAR(32))",
                 "create", "mon_t");
    run_and_emit(snap, node, "DELETE FROM mon_t", "delete", "mon_t");
    for (i = 0; i < 10; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO mon_t VALUES (%d, 'hunter2-%d')", 424200 + i, i);
        run_and_emit(snap, node, sql, "insert", "mon_t");
    }
    for (i = 0; i < 25; i++)
        run_and_emit(snap, node, "SELECT pw FROM mon_t WHERE id = 424203", "select", "mon_t");
    run_and_emit(snap, node, "SELECT * FROM no_such_table WHERE x = 'hunter2'", "select",
                 "no_such_table");
    /* through dal: the analysis cache holds it */
    ck_assert_msg(dal_exec(dal, NULL, "SELECT pw FROM mon_t WHERE id = 1", NULL, 0, NULL, &err) == 0,
                  "%s", err.message);
    sleep_ms(1500); /* one pool sample at least */
    m = scrape(port);
    {
        dal_sql_cache_stats_t st;
        ck_assert_int_eq(dal_sql_cache_stats(dal, &st), 0);
        ck_assert_uint_ge(st.entries, 1);
        ck_assert_double_eq(tu_metric(m, "dal_sql_cache_entries"), (double)st.entries);
        ck_assert_double_eq(tu_metric(m, "dal_sql_cache_bytes"), (double)st.bytes);
        ck_assert_double_eq(tu_metric(m, "dal_sql_cache_max_bytes"), 64.0 * 1024 * 1024);
    }
    save("metrics.txt", m);
    ck_assert_double_eq(selects_of(m, "mon_t"), 26); /* 25, and one through dal */
    ck_assert_double_eq(tu_metric(m, "dal_statements_total{kind=\"insert\",table=\"mon_t\"}"), 10);
    ck_assert_double_eq(tu_metric(m, "dal_statement_duration_seconds_count{kind=\"select\",table=\"mon_t\"}"), 26);
    ck_assert_double_eq(tu_metric(m, "dal_statement_errors_total{kind=\"select\",code=\"DAL_ESERVER\"}"), 1);
    snprintf(server, sizeof server, "%s", node->master.address);
    snprintf(want, sizeof want, "dal_executions_total{datasource=\"ds0\",server=\"%s\"}", server);
    ck_assert_double_eq(tu_metric(m, want), 39);
    snprintf(want, sizeof want,
             "dal_execution_errors_total{datasource=\"ds0\",server=\"%s\",mysql_errno=\"1146\"}",
             server);
    ck_assert_double_eq(tu_metric(m, want), 1);
    snprintf(want, sizeof want,
             "dal_pool_connections_created_total{datasource=\"ds0\",server=\"%s\"}", server);
    ck_assert_double_eq(tu_metric(m, want), 1);
    snprintf(want, sizeof want,
             "dal_pool_connections{datasource=\"ds0\",server=\"%s\",state=\"idle\"}", server);
    ck_assert_double_eq(tu_metric(m, want), 1);
    free(m);
    snapshot_unref(snap);
    dal_close(dal); /* flushes the slow log */
}
END_TEST

static Suite *live_suite(void)
{
    Suite *s = suite_create("monitor-live");
    TCase *tc = tcase_create("mariadb");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, live_metrics_after_a_known_workload);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int live = argc > 2 && strcmp(argv[1], "live") == 0;
    int status;

    if (live)
        outdir = argv[2];
    status = tu_run(live ? live_suite() : unit_suite(), CK_FORK_GETENV);
    return status;
}
