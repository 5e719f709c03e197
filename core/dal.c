/*
 * dal.c -- the public entry points: open, close, and the path of one
 * statement (snapshot -> sql -> route -> rewrite -> execute -> result).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "dal_int.h"
#include "error.h"
#include "exec.h"
#include "host.h"
#include "monitor.h"
#include "pool.h"
#include "plan.h"
#include "replica.h"
#include "result.h"
#include "route.h"

/* Statements whose analysis is kept; a service rarely has more distinct
 * statement texts than this. */
#define SQL_CACHE_CAPACITY 4096

static pthread_once_t library_once = PTHREAD_ONCE_INIT;

/* libmysqlclient's global init is not thread-safe: run it exactly once,
 * before any connection can be made. */
static void library_init(void)
{
    mysql_library_init(0, NULL, NULL);
}

const char *dal_version(void)
{
    return DAL_VERSION_STRING;
}

const char *dal_strerror(int code)
{
    switch (code) {
    case DAL_OK: return "DAL_OK";
    case DAL_EINVAL: return "DAL_EINVAL";
    case DAL_ENOMEM: return "DAL_ENOMEM";
    case DAL_ECONFIG: return "DAL_ECONFIG";
    case DAL_EPLUGIN: return "DAL_EPLUGIN";
    case DAL_ESQL: return "DAL_ESQL";
    case DAL_EROUTE: return "DAL_EROUTE";
    case DAL_ESHARD: return "DAL_ESHARD";
    case DAL_ECONNECT: return "DAL_ECONNECT";
    case DAL_ESERVER: return "DAL_ESERVER";
    case DAL_EUNSUPPORTED: return "DAL_EUNSUPPORTED";
    case DAL_ESTATE: return "DAL_ESTATE";
    case DAL_EIO: return "DAL_EIO";
    }
    return "DAL_E?";
}

/* Load the file and build a snapshot from it. */
static int load_snapshot(const char *path, const char *plugin_dir, const dal_logger_t *log,
                         dal_snapshot_t **out, dal_error_t *err)
{
    dal_config_t *cfg = NULL;
    int rc = dal_config_load(path, &cfg, err);

    if (rc != 0)
        return rc;
    return dal_snapshot_build(cfg, plugin_dir, log, out, err);
}

int dal_check_config(const char *path, const dal_open_opts_t *opts, dal_error_t *err)
{
    dal_snapshot_t *snap = NULL;
    dal_logger_t log;
    int rc;

    if (path == NULL)
        return dal_err_set(err, DAL_EINVAL, "no configuration file given");
    dal_logger_init(&log, opts);
    rc = load_snapshot(path, opts ? opts->plugin_dir : NULL, &log, &snap, err);
    dal_snapshot_unref(snap);
    return rc;
}

int dal_open(const char *path, const dal_open_opts_t *opts, dal_t **out, dal_error_t *err)
{
    dal_t *dal = NULL;
    int rc;

    if (out == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_open: out is NULL");
    *out = NULL;
    if (path == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_open: no configuration file given");
    pthread_once(&library_once, library_init);
    dal = calloc(1, sizeof *dal);
    if (dal == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    dal_logger_init(&dal->log, opts);
    pthread_mutex_init(&dal->reload_mu, NULL);
    dal->path = strdup(path);
    dal->plugin_dir = opts && opts->plugin_dir ? strdup(opts->plugin_dir) : NULL;
    dal->sql_cache = dal_sql_cache_new(SQL_CACHE_CAPACITY);
    if (dal->path == NULL || dal->sql_cache == NULL ||
        (opts && opts->plugin_dir && dal->plugin_dir == NULL)) {
        rc = dal_err_set(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    {
        dal_snapshot_t *snap = NULL;
        rc = load_snapshot(path, dal->plugin_dir, &dal->log, &snap, err);
        if (rc != 0)
            goto fail;
        atomic_store(&dal->snap, snap);
        dal_log(&dal->log, DAL_LOG_INFO, "config",
                "%s: %zu datasources, %zu tables, plugins from %s", path, snap->nnodes,
                snap->ntables, snap->plugin_path);
        if (snap->cfg->watch && (rc = dal_watch_start(dal, err)) != 0)
            goto fail;
    }
    *out = dal;
    return 0;
fail:
    dal_close(dal);
    return rc;
}

void dal_close(dal_t *dal)
{
    if (dal == NULL)
        return;
    dal_watch_stop(dal);
    dal_snapshot_unref(atomic_load(&dal->snap));
    dal_sql_cache_free(dal->sql_cache);
    pthread_mutex_destroy(&dal->reload_mu);
    free(dal->path);
    free(dal->plugin_dir);
    free(dal);
}

DAL_HOT
dal_snapshot_t *dal_snapshot_acquire(dal_t *dal)
{
    dal_snapshot_t *s;

    /* sequentially consistent on purpose: the swap's "exchange, then read
     * readers" must not pass our "announce, then load" (see reload.c) */
    atomic_fetch_add(&dal->readers, 1);
    s = atomic_load(&dal->snap);
    dal_snapshot_ref(s);
    atomic_fetch_sub(&dal->readers, 1);
    return s;
}

/* The common first half of query and explain: analysis and routing. */
DAL_HOT
int dal_is_txn_control(dal_sql_kind_t k)
{
    return k == DAL_SQL_BEGIN || k == DAL_SQL_COMMIT || k == DAL_SQL_ROLLBACK;
}

DAL_HOT
static const dal_sql_t *analyse(dal_t *dal, const char *sql, size_t len, dal_error_t *err)
{
    char msg[256];
    const dal_sql_t *s = dal_sql_cache_get(dal->sql_cache, sql, len, msg, sizeof msg);

    if (s == NULL)
        dal_err_set(err, DAL_ESQL, "cannot analyse the statement: %s", msg);
    else if (s->kind == DAL_SQL_MULTI) {
        dal_err_set(err, DAL_ESQL, "several statements in one call; send them one at a time");
        dal_sql_unref(s);
        s = NULL;
    }
    return s;
}

/* Several routes: how their rows combine, and what that changes in each
 * route's SQL.  Writes, INSERT and DDL just add up. */
DAL_HOT
static int plan_merge(dal_stmt_t *st, dal_error_t *err)
{
    dal_sql_kind_t k = st->sql->kind;
    int rc;

    if (st->rt.nroutes < 2 || k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_DDL)
        return 0;
    rc = dal_merge_plan_build(st->sql, st->rt.merge_key,
                              &st->plan, err);
    if (rc == 0)
        rc = dal_merge_node_edits(st->plan, st->sql, st->params, st->nparams, &st->edits, err);
    if (rc == 0 && st->edits.n > 0)
        st->rt.merge_edits = &st->edits;
    return rc;
}

static void snapshot_release(void *ctx)
{
    dal_snapshot_unref(ctx);
}

DAL_HOT
int dal_stmt_run(dal_stmt_t *st, dal_snapshot_t *snap, dal_result_t **out, dal_error_t *err)
{
    int rc;

    /* a pool's leak report names the statement that took the connection */
    dal_pool_set_statement(st->sql_norm, st->trace[0] ? st->trace : NULL);
    rc = dal_exec_routes(&st->rt, st->params, st->nparams, &st->plan, out, err);
    dal_pool_set_statement(NULL, NULL);
    dal_stmt_emit(st, rc, *out);
    if (rc != 0)
        return rc;
    if (st->fill.nids > 0)
        dal_stmt_give_ids(st, *out);
    if (st->rt.nroutes > 1) {
        /* streamed rows hold connections of this snapshot's nodes */
        dal_snapshot_ref(snap);
        dal_result_on_free(*out, snapshot_release, snap);
    }
    return 0;
}

/* A trace id goes into the SQL as a comment: only characters that can
 * never end it. */
static int trace_ok(const char *t)
{
    size_t n = 0;

    for (; t[n]; n++)
        if (!(isalnum((unsigned char)t[n]) || strchr("_.:-", t[n])))
            return 0;
    return n > 0 && n <= 64;
}

/* 16 hex digits from a per-thread xorshift generator: unique enough to
 * follow one request, and no lock or syscall on the statement path. */
/* 16 hex digits of a random number: one per monitored statement, so no
 * printf. */
static void trace_generate(char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t x = dal_random();
    int i;

    if (cap < 17)
        return;
    for (i = 15; i >= 0; i--, x >>= 4)
        out[i] = hex[x & 15];
    out[16] = '\0';
}

/* Trace id and normalised SQL for the events and the physical SQL. */
DAL_HOT
static int prepare_monitoring(dal_stmt_t *st, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                              dal_error_t *err)
{
    const char *given = opts ? opts->trace_id : NULL;

    st->monitors = snap->monitors;
    if (given != NULL && !trace_ok(given))
        return dal_err_set(err, DAL_EINVAL, "trace id: at most 64 characters of "
                           "[A-Za-z0-9_.:-]");
    if (given != NULL)
        snprintf(st->trace, sizeof st->trace, "%s", given);
    if (!dal_monitor_active(st->monitors))
        return 0;
    st->t0 = dal_now_ns();
    if (given == NULL)
        trace_generate(st->trace, sizeof st->trace);
    st->sql_norm = dal_sql_normalized(st->sql);
    if (st->sql_norm == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    return 0;
}

DAL_HOT
int dal_stmt_select(dal_stmt_t *st, const dal_query_opts_t *opts, dal_select_t *sel,
                    dal_error_t *err)
{
    size_t i;
    int rc = dal_server_override(st->sql, opts, &sel->override, err);

    if (rc == 0)
        rc = dal_select_servers(&st->rt, sel, err);
    if (rc != 0 || (sel->flags & DAL_SELECT_EXPLAIN))
        return rc;
    st->rt.ryw = sel->ryw;
    for (i = 0; i < st->rt.nroutes; i++)
        dal_emit_route(&st->rt, dal_route_server(&st->rt.routes[i]));
    return 0;
}

void dal_stmt_emit_event(const dal_stmt_t *st, int rc, const dal_result_t *r)
{
    dal_event_t ev;

    dal_monitor_event_init(st->monitors, &ev, DAL_EVENT_STATEMENT);
    ev.kind = dal_sql_kind_word(st->sql->kind);
    dal_routing_label_table(&st->rt, &ev); /* emitted only once routed */
    if (st->rt.nroutes == 1) {
        ev.datasource = st->rt.routes[0].node->cfg->name;
        ev.server = dal_route_server(&st->rt.routes[0])->address;
    }
    ev.sql = st->sql_norm;
    ev.trace_id = st->trace;
    ev.latency_ns = dal_now_ns() - st->t0;
    ev.rows = rc == 0 && r != NULL ? dal_result_affected_rows(r) : 0;
    ev.error_code = rc;
    dal_monitor_emit(st->monitors, &ev);
}

DAL_HOT
int dal_table_columns(dal_t *dal, const char *table, dal_columns_fn fn, void *user,
                      dal_error_t *err)
{
    dal_snapshot_t *snap;
    size_t i, seen = 0;
    int rc = 0;

    if (dal == NULL || fn == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_table_columns: %s is NULL",
                           dal == NULL ? "the handle" : "fn");
    snap = dal_snapshot_acquire(dal);
    for (i = 0; rc == 0 && i < snap->ntables; i++) {
        dal_table_t *t = &snap->tables[i];
        const dal_columns_t *c;
        if ((table != NULL && strcmp(table, t->cfg->name) != 0) ||
            (!t->sharded && t->cfg->id_column == NULL))
            continue;
        seen++;
        rc = dal_table_columns_get(t, &c, err);
        if (rc == 0)
            fn(user, t->cfg->name, (const char *const *)c->names, c->n);
    }
    if (rc == 0 && table != NULL && seen == 0)
        rc = dal_err_set(err, DAL_EINVAL, "table %s is not a sharded table nor one with an "
                         "id_column in the configuration in force", table);
    dal_snapshot_unref(snap);
    return rc;
}

/* An INSERT without a column list gets one (columns.h): the statement
 * becomes the analysis of the text with the list. */
static int add_column_list(dal_t *dal, dal_snapshot_t *snap, dal_stmt_t *st, dal_error_t *err)
{
    size_t len;
    char *text = dal_columns_add_list(snap, st->sql, &len, err);
    const dal_sql_t *with;

    if (text == NULL)
        return err ? err->code : DAL_ENOMEM;
    with = analyse(dal, text, len, err);
    free(text);
    if (with == NULL)
        return err ? err->code : DAL_ESQL;
    if (!st->sql_borrowed)
        dal_sql_unref(st->sql);
    st->sql_borrowed = 0;
    st->sql = with;
    return 0;
}

int dal_stmt_prepare(dal_t *dal, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                     dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                     dal_stmt_t *st, dal_error_t *err)
{
    int rc;

    /* field by field, not one memset of the whole struct: its inline
     * arrays are set when used, and each line of stack written costs (hot.h) */
    st->rt.sql = NULL; /* not routed: dal_stmt_clear leaves rt alone */
    memset(&st->fill, 0, offsetof(dal_idfill_t, params_inl));
    st->plan = NULL;
    st->edits.items = NULL;
    st->edits.n = 0;
    st->monitors = NULL;
    st->t0 = 0;
    st->sql_norm = NULL;
    st->trace[0] = '\0';
    st->params = params;
    st->nparams = nparams;
    st->sql_borrowed = sql.prepared != NULL;
    st->sql = sql.prepared ? sql.prepared : analyse(dal, sql.text, strlen(sql.text), err);
    if (st->sql == NULL)
        return err ? err->code : DAL_ESQL;
    /* transaction control is the session's business, not a route's */
    if (dal_is_txn_control(st->sql->kind))
        return 0;
    if (dal_columns_needed(snap, st->sql, opts) && (rc = add_column_list(dal, snap, st, err)) != 0)
        return rc;
    if ((rc = dal_columns_learn_sources(snap, st->sql, err)) != 0)
        return rc;
    rc = dal_idfill_prepare(snap, st->sql, st->params, st->nparams, &st->fill, err);
    if (rc != 0)
        return rc;
    if (st->fill.filled != NULL || st->fill.sql != NULL) {
        const dal_sql_t *orig = st->sql;
        /* the rewritten text is the same from call to call: its analysis
         * is kept with the statement, or at least cached */
        if (st->fill.filled != NULL)
            st->sql = dal_sql_ref(st->fill.filled);
        else if ((st->sql = analyse(dal, st->fill.sql, st->fill.sql_len, err)) != NULL)
            dal_idfill_remember(orig, &st->fill, st->sql);
        if (!st->sql_borrowed)
            dal_sql_unref(orig);
        st->sql_borrowed = 0;
        if (st->sql == NULL)
            return err ? err->code : DAL_ESQL;
        st->params = st->fill.params;
        st->nparams = st->fill.nparams;
    }
    rc = prepare_monitoring(st, snap, opts, err);
    if (rc == 0)
        rc = dal_route(snap, st->sql, opts, st->params, st->nparams, &st->rt, err);
    if (rc != 0)
        return rc;
    st->rt.monitors = st->monitors;
    st->rt.trace_id = st->trace[0] ? st->trace : NULL;
    st->rt.sql_norm = st->sql_norm;
    return plan_merge(st, err);
}

DAL_HOT
void dal_stmt_clear(dal_stmt_t *st)
{
    /* what most statements do not have is not visited */
    if (st->plan != NULL)
        dal_merge_plan_free(st->plan);
    if (st->edits.items != NULL)
        dal_edits_clear(&st->edits);
    if (st->rt.sql != NULL)
        dal_routing_clear(&st->rt);
    if (!dal_idfill_empty(&st->fill))
        dal_idfill_clear(&st->fill);
    if (!st->sql_borrowed)
        dal_sql_unref(st->sql);
    st->sql_norm = NULL;
    st->sql = NULL;
}

void dal_stmt_give_ids(dal_stmt_t *st, dal_result_t *r)
{
    if (st->fill.nids == 0 || r == NULL)
        return;
    dal_result_set_ids(r, st->fill.ids, st->fill.nids);
    st->fill.ids = NULL;
    st->fill.nids = 0;
}

/* dal_query and dal_query_prepared. */
static DAL_INLINE int query(dal_t *dal, const dal_query_opts_t *opts, dal_stmt_text_t sql,
                            const dal_value_t *params, size_t nparams, dal_result_t **out,
                            dal_error_t *err)
{
    /* outside a session, the thread is the writer whose writes reads see */
    dal_select_t sel = {.ryw = dal_ryw_thread()};
    dal_snapshot_t *snap;
    dal_stmt_t st;
    int rc;

    snap = dal_snapshot_acquire(dal);
    rc = dal_stmt_prepare(dal, snap, opts, sql, params, nparams, &st, err);
    if (rc == 0 && dal_is_txn_control(st.sql->kind))
        rc = dal_err_set(err, DAL_ESTATE,
                         "%s outside a session: transactions need dal_session_open, so the "
                         "connection stays with them", dal_sql_kind_name(st.sql->kind));
    if (rc == 0)
        rc = dal_stmt_select(&st, opts, &sel, err);
    if (rc == 0)
        rc = dal_stmt_run(&st, snap, out, err);
    dal_stmt_clear(&st);
    dal_snapshot_unref(snap);
    return rc;
}

DAL_HOT
int dal_query(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
              const dal_value_t *params, size_t nparams, dal_result_t **out,
              dal_error_t *err)
{
    int rc = dal_stmt_args_check("dal_query", dal, sql, params, nparams, out, err);

    return rc != 0 ? rc : query(dal, opts, (dal_stmt_text_t){sql, NULL}, params, nparams, out, err);
}

int dal_stmt_args_error(const char *fn, const void *handle, const void *sql,
                        const dal_value_t *params, size_t nparams, dal_result_t **out,
                        dal_error_t *err)
{
    if (handle == NULL)
        return dal_err_set(err, DAL_EINVAL, "%s: the handle is NULL", fn);
    if (sql == NULL)
        return dal_err_set(err, DAL_EINVAL, "%s: the statement is NULL", fn);
    if (out == NULL)
        return dal_err_set(err, DAL_EINVAL, "%s: out (where the result goes) is NULL", fn);
    (void)params; /* the only check left: NULL with nparams > 0 */
    return dal_err_set(err, DAL_EINVAL, "%s: params is NULL but nparams is %zu", fn, nparams);
}

int dal_prepare(dal_t *dal, const char *sql, dal_prepared_t **out, dal_error_t *err)
{
    dal_prepared_t *p;

    if (out == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_prepare: out is NULL");
    *out = NULL;
    if (dal == NULL || sql == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_prepare: NULL argument");
    p = malloc(sizeof *p);
    if (p == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    /* the cache's analysis: the same text run through dal_query shares it,
     * and with it what routing remembers */
    p->sql = analyse(dal, sql, strlen(sql), err);
    if (p->sql == NULL) {
        free(p);
        return err ? err->code : DAL_ESQL;
    }
    *out = p;
    return 0;
}

void dal_prepared_free(dal_prepared_t *p)
{
    if (p == NULL)
        return;
    dal_sql_unref(p->sql);
    free(p);
}

size_t dal_prepared_param_count(const dal_prepared_t *p)
{
    return p ? p->sql->nparams : 0;
}

DAL_HOT
int dal_query_prepared(dal_t *dal, const dal_query_opts_t *opts, const dal_prepared_t *p,
                       const dal_value_t *params, size_t nparams, dal_result_t **out,
                       dal_error_t *err)
{
    int rc = dal_stmt_args_check("dal_query_prepared", dal, p, params, nparams, out, err);

    return rc != 0 ? rc : query(dal, opts, (dal_stmt_text_t){NULL, p->sql}, params, nparams, out, err);
}

int dal_result_drop(int rc, dal_result_t *r, uint64_t *affected_rows)
{
    if (affected_rows != NULL)
        *affected_rows = rc == 0 ? dal_result_affected_rows(r) : 0;
    dal_result_free(r);
    return rc;
}

DAL_HOT
int dal_exec(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
             const dal_value_t *params, size_t nparams, uint64_t *affected_rows,
             dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = dal_query(dal, opts, sql, params, nparams, &r, err);

    return dal_result_drop(rc, r, affected_rows);
}

int dal_explain(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
                const dal_value_t *params, size_t nparams, dal_plan_t **out, dal_error_t *err)
{
    dal_select_t sel = {.flags = DAL_SELECT_EXPLAIN};
    dal_snapshot_t *snap;
    dal_stmt_t st;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (dal == NULL || sql == NULL || out == NULL || (nparams > 0 && params == NULL))
        return dal_err_set(err, DAL_EINVAL, "dal_explain: NULL argument");
    snap = dal_snapshot_acquire(dal);
    rc = dal_stmt_prepare(dal, snap, opts, (dal_stmt_text_t){sql, NULL}, params, nparams, &st,
                          err);
    if (rc == 0)
        rc = dal_stmt_select(&st, opts, &sel, err);
    if (rc == 0)
        rc = dal_plan_build(&st.rt, st.params, st.nparams, out, err);
    dal_stmt_clear(&st);
    dal_snapshot_unref(snap);
    return rc;
}

/* ------------------------------------------------------------- plugin scan */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void report_file(const char *path, dal_plugin_scan_fn fn, void *user)
{
    dal_plugin_lib_t *lib = NULL;
    dal_plugin_info_t info;
    dal_error_t e;

    memset(&info, 0, sizeof info);
    info.file = path;
    if (dal_plugin_lib_load(path, &lib, &e) != 0) {
        info.error = e.message;
        fn(user, &info);
        return;
    }
    info.kind = dal_plugin_kind_name(lib->desc->kind);
    info.name = lib->desc->name;
    info.version = lib->desc->version;
    info.description = lib->desc->description;
    fn(user, &info);
    dal_plugin_lib_unref(lib);
}

/* Scan one directory; returns the number of files reported or -1. */
static int scan_dir(const char *dir, dal_plugin_scan_fn fn, void *user)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    int rc = -1;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0)
            continue;
        if (n == cap) {
            char **p = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *p);
            if (p == NULL)
                goto done;
            names = p;
        }
        if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0)
            goto done;
        n++;
    }
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    for (i = 0; i < n; i++)
        report_file(names[i], fn, user);
    rc = (int)n;
done:
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return rc;
}

int dal_plugins_scan(const char *dir, dal_plugin_scan_fn fn, void *user, dal_error_t *err)
{
    char *path = dal_plugin_path_resolve(dir, NULL);
    char *save = NULL, *p;
    int total = 0, n;

    if (path == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (p = strtok_r(path, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        n = scan_dir(p, fn, user);
        if (n < 0) {
            dal_err_set(err, DAL_EIO, "%s: cannot read plugin directory", p);
            free(path);
            return DAL_EIO;
        }
        total += n;
    }
    free(path);
    return total;
}
