/*
 * dal.c -- the handle's public entry points: open, close, dal_query and
 * the other calls that run a statement (through stmt.c's driver), IDs,
 * figures.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "handle.h"
#include "stmt.h"
#include "fence.h"
#include "fence_ack.h"
#include "xa_daemon.h"
#include "reload.h"
#include "library.h"
#include "error.h"
#include "events.h"
#include "snapshot_build.h"
#include "exec.h"
#include "clock.h"
#include "host.h"
#include "idgen.h"
#include "monitor.h"
#include "pool.h"
#include "explain.h"
#include "replica.h"
#include "result.h"
#include "route.h"

/* Statements whose analysis is kept; a service rarely has more distinct
 * statement texts than this. */
#define SQL_CACHE_CAPACITY 4096

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
    case DAL_EPARTIAL: return "DAL_EPARTIAL";
    }
    return "DAL_E?";
}

/* Read the first document and build the first snapshot from it. */
static int open_snapshot(dal_t *dal, dal_error_t *err)
{
    dal_snapshot_t *snap = NULL;
    dal_config_t *cfg = NULL;
    dal_source_doc_t doc;
    int from_cache = 0, rc;

    rc = source_load(dal->source, 0, 1, &cfg, &doc, &from_cache, err);
    if (rc == 0)
        rc = snapshot_build(cfg, dal->plugin_dir, &dal->log, &snap, err);
    if (rc != 0)
        return rc;
    atomic_store(&snap->sql_cache, dal->sql_cache);
    atomic_store(&dal->snap, snap);
    if (snap->fenced)
        atomic_fetch_or(&dal->fence_watch, FENCE_WATCH_FENCED);
    atomic_store(&dal->gen, snap->gen);
    sql_cache_limit(dal->sql_cache, snap->cfg->sql_cache_bytes,
                    snap->cfg->sql_cache_max_statement);
    atomic_store(&dal->from_cache, from_cache);
    atomic_store(&dal->source_state, from_cache ? DAL_SOURCE_UNREACHABLE : DAL_SOURCE_OK);
    if (!from_cache) {
        atomic_store(&dal->revision, doc.revision);
        source_cache_store(dal->source, &doc);
    }
    if (from_cache || doc.revision != 0) /* a store: its state is a metric from the start */
        event_source(snap, source_state_name(atomic_load(&dal->source_state)), NULL,
                     atomic_load(&dal->revision));
    log_message(&dal->log, DAL_LOG_INFO, "config", "%s: %zu datasources, %zu tables, plugins from %s",
                from_cache ? source_display(dal->source) : doc.name, snap->nnodes, snap->ntables,
                snap->plugin_path);
    return 0;
}

int dal_open(const char *path, const dal_open_opts_t *opts, dal_t **out, dal_error_t *err)
{
    dal_t *dal = NULL;
    int rc;

    if (out == NULL)
        return err_set(err, DAL_EINVAL, "dal_open: out is NULL");
    *out = NULL;
    if (path == NULL)
        return err_set(err, DAL_EINVAL, "dal_open: no configuration file given");
    library_ensure_init();
    dal = calloc(1, sizeof *dal);
    if (dal == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    logger_init(&dal->log, opts);
    pthread_mutex_init(&dal->reload_mu, NULL);
    pthread_mutex_init(&dal->slots_mu, NULL);
    dal->plugin_dir = opts && opts->plugin_dir ? strdup(opts->plugin_dir) : NULL;
    dal->sql_cache = sql_cache_new(SQL_CACHE_CAPACITY);
    if (dal->sql_cache == NULL || (opts && opts->plugin_dir && dal->plugin_dir == NULL)) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    rc = source_open(path, dal->plugin_dir, &dal->log, &dal->source, err);
    if (rc == 0)
        rc = open_snapshot(dal, err);
    if (rc != 0)
        goto fail;
    /* a file is watched when it asks to be; a store is there to be watched */
    if (source_can_watch(dal->source) &&
        (source_is_url(path) || atomic_load(&dal->snap)->cfg->watch) &&
        (rc = watch_start(dal, err)) != 0)
        goto fail;
    /* under reload_mu: a reload the watcher makes may start it too */
    pthread_mutex_lock(&dal->reload_mu);
    rc = xa_daemon_start(dal, &dal->xa, err);
    pthread_mutex_unlock(&dal->reload_mu);
    /* an instance that follows its source can be moved by a reshard's
     * switch: it registers for, and acknowledges, its fences */
    if (rc == 0 && dal->sink.document != NULL)
        atomic_fetch_or(&dal->fence_watch, FENCE_WATCH_REG);
    if (rc != 0 ||
        (dal->sink.document != NULL && (rc = fence_ack_start(dal, &dal->acker, err)) != 0))
        goto fail;
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
    watch_stop(dal); /* first: a reload it makes may start the XA thread */
    fence_ack_stop(dal->acker);
    xa_daemon_stop(dal->xa);
    snapshot_unref(atomic_load(&dal->snap));
    source_close(dal->source);
    sql_cache_free(dal->sql_cache);
    pthread_mutex_destroy(&dal->reload_mu);
    pthread_mutex_destroy(&dal->slots_mu);
    free(dal->plugin_dir);
    free(dal);
}

int dal_next_ids(dal_t *dal, const char *idgen, int64_t *ids, size_t n, dal_error_t *err)
{
    dal_snapshot_t *s;
    int rc;

    if (dal == NULL || idgen == NULL || (ids == NULL && n > 0))
        return err_set(err, DAL_EINVAL, "dal_next_ids: NULL argument");
    s = snapshot_acquire(dal);
    rc = idgen_next(s->idgens, idgen, ids, n, err);
    snapshot_unref(s);
    return rc;
}

int dal_setup_idgens(dal_t *dal, const char *datasource, dal_idgen_setup_fn fn, void *user,
                     dal_error_t *err)
{
    dal_snapshot_t *s;
    int rc;

    if (dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_setup_idgens: NULL handle");
    s = snapshot_acquire(dal);
    rc = idgen_setup(s, datasource, fn, user, err);
    snapshot_unref(s);
    return rc;
}

int dal_sql_cache_stats(dal_t *dal, dal_sql_cache_stats_t *out)
{
    sql_cache_figures_t f;

    if (dal == NULL || out == NULL)
        return DAL_EINVAL;
    sql_cache_figures(dal->sql_cache, &f);
    out->hits = f.hits;
    out->misses = f.misses;
    out->entries = f.entries;
    out->bytes = f.bytes;
    out->evictions = f.evictions;
    out->uncached = f.uncached;
    out->max_bytes = f.max_bytes;
    out->max_statement = f.max_statement;
    return 0;
}

int dal_table_columns(dal_t *dal, const char *table, dal_columns_fn fn, void *user,
                      dal_error_t *err)
{
    dal_snapshot_t *snap;
    size_t i, seen = 0;
    int rc = 0;

    if (dal == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_table_columns: %s is NULL",
                       dal == NULL ? "the handle" : "fn");
    snap = snapshot_acquire(dal);
    for (i = 0; rc == 0 && i < snap->ntables; i++) {
        dal_table_t *t = &snap->tables[i];
        const dal_columns_t *c;
        if ((table != NULL && strcmp(table, t->cfg->name) != 0) ||
            (!t->sharded && t->cfg->id_column == NULL))
            continue;
        seen++;
        table_columns_forget(t); /* what the server says now */
        rc = table_columns_get(t, &c, err);
        if (rc == 0)
            fn(user, t->cfg->name, (const char *const *)c->names, c->n);
    }
    if (rc == 0 && table != NULL && seen == 0)
        rc = err_set(err, DAL_EINVAL, "table %s is not a sharded table nor one with an "
                     "id_column in the configuration in force", table);
    snapshot_unref(snap);
    return rc;
}

/* dal_query and dal_query_prepared. */
static inline int query(dal_t *dal, const dal_query_opts_t *opts, dal_stmt_text_t sql,
                            const dal_value_t *params, size_t nparams, dal_result_t **out,
                            dal_error_t *err)
{
    /* outside a session, the thread is the writer whose writes reads see */
    dal_stmt_ctx_t ctx = {.cache = dal->sql_cache, .sel = {.ryw = ryw_thread()}};
    unsigned ticket;
    int rc;

    /* a reshard's switch holds writes */
    if ((rc = fence_enter(dal, &dal->fence_ungated, dal->sql_cache, sql, &ticket, err)) != 0)
        return rc;
    ctx.snap = snapshot_acquire(dal);
    rc = stmt_execute(&ctx, opts, sql, params, nparams, out, err);
    fence_leave(dal, &dal->fence_ungated, ticket);
    snapshot_unref(ctx.snap);
    return rc;
}

/* dal_query and dal_query_len (named fn in an argument error). */
static inline int query_text(const char *fn, dal_t *dal, const dal_query_opts_t *opts,
                             const char *sql, size_t len, const dal_value_t *params,
                             size_t nparams, dal_result_t **out, dal_error_t *err)
{
    int rc = stmt_args_check(fn, dal, sql, params, nparams, out, err);

    /* read as the pooled connections' sessions read it */
    return rc != 0 ? rc
                   : query(dal, opts,
                           (dal_stmt_text_t){sql, NULL, len, handle_global_no_backslash(dal)},
                           params, nparams, out, err);
}

int dal_query(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
              const dal_value_t *params, size_t nparams, dal_result_t **out,
              dal_error_t *err)
{
    return query_text("dal_query", dal, opts, sql, sql != NULL ? strlen(sql) : 0, params,
                      nparams, out, err);
}

int dal_query_len(dal_t *dal, const dal_query_opts_t *opts, const char *sql, size_t len,
                  const dal_value_t *params, size_t nparams, dal_result_t **out,
                  dal_error_t *err)
{
    return query_text("dal_query_len", dal, opts, sql, len, params, nparams, out, err);
}

int prepare_text(const char *fn, dal_t *dal, const char *sql, size_t len,
                        int no_backslash, dal_prepared_t **out, dal_error_t *err)
{
    dal_prepared_t *p;

    if (out == NULL)
        return err_set(err, DAL_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (dal == NULL || sql == NULL)
        return err_set(err, DAL_EINVAL, "%s: NULL argument", fn);
    if (no_backslash < 0)  /* no session's: the pooled connections' */
        no_backslash = handle_global_no_backslash(dal);
    p = malloc(sizeof *p);
    if (p == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    /* the cache's analysis: the same text run through dal_query shares it,
     * and with it what routing remembers */
    p->sql = stmt_analyse(dal->sql_cache, sql, len, no_backslash, err);
    if (p->sql == NULL) {
        free(p);
        return err ? err->code : DAL_ESQL;
    }
    *out = p;
    return 0;
}

int dal_prepare(dal_t *dal, const char *sql, dal_prepared_t **out, dal_error_t *err)
{
    return prepare_text("dal_prepare", dal, sql, sql != NULL ? strlen(sql) : 0, -1, out, err);
}

int dal_prepare_len(dal_t *dal, const char *sql, size_t len, dal_prepared_t **out,
                    dal_error_t *err)
{
    return prepare_text("dal_prepare_len", dal, sql, len, -1, out, err);
}

void dal_prepared_free(dal_prepared_t *p)
{
    if (p == NULL)
        return;
    sql_unref(p->sql);
    free(p);
}

size_t dal_prepared_param_count(const dal_prepared_t *p)
{
    return p ? p->sql->nparams : 0;
}

int dal_query_prepared(dal_t *dal, const dal_query_opts_t *opts, const dal_prepared_t *p,
                       const dal_value_t *params, size_t nparams, dal_result_t **out,
                       dal_error_t *err)
{
    int rc = stmt_args_check("dal_query_prepared", dal, p, params, nparams, out, err);

    return rc != 0 ? rc
                   : query(dal, opts, (dal_stmt_text_t){NULL, p->sql, 0, 0}, params, nparams, out,
                           err);
}

int result_drop(int rc, dal_result_t *r, uint64_t *affected_rows)
{
    if (affected_rows != NULL)
        *affected_rows = rc == 0 ? dal_result_affected_rows(r) : 0;
    dal_result_free(r);
    return rc;
}

int dal_exec(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
             const dal_value_t *params, size_t nparams, uint64_t *affected_rows,
             dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = dal_query(dal, opts, sql, params, nparams, &r, err);

    return result_drop(rc, r, affected_rows);
}

/* dal_explain and dal_explain_len (named fn in an argument error). */
static int explain_text(const char *fn, dal_t *dal, const dal_query_opts_t *opts,
                        const char *sql, size_t len, const dal_value_t *params, size_t nparams,
                        dal_plan_t **out, dal_error_t *err)
{
    dal_stmt_ctx_t ctx = {.cache = NULL};
    int rc;

    if (out != NULL)
        *out = NULL;
    if (dal == NULL || sql == NULL || out == NULL || (nparams > 0 && params == NULL))
        return err_set(err, DAL_EINVAL, "%s: NULL argument", fn);
    ctx.cache = dal->sql_cache;
    ctx.snap = snapshot_acquire(dal);
    rc = stmt_explain(&ctx, opts, sql, len, params, nparams, out, err);
    snapshot_unref(ctx.snap);
    return rc;
}

int dal_explain(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
                const dal_value_t *params, size_t nparams, dal_plan_t **out, dal_error_t *err)
{
    return explain_text("dal_explain", dal, opts, sql, sql != NULL ? strlen(sql) : 0, params,
                        nparams, out, err);
}

int dal_explain_len(dal_t *dal, const dal_query_opts_t *opts, const char *sql, size_t len,
                    const dal_value_t *params, size_t nparams, dal_plan_t **out,
                    dal_error_t *err)
{
    return explain_text("dal_explain_len", dal, opts, sql, len, params, nparams, out, err);
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
    if (plugin_lib_load(path, &lib, &e) != 0) {
        info.error = e.message;
        fn(user, &info);
        return;
    }
    info.kind = plugin_kind_name(lib->desc->kind);
    info.name = lib->desc->name;
    info.version = lib->desc->version;
    info.description = lib->desc->description;
    fn(user, &info);
    plugin_lib_unref(lib);
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
    char *path = plugin_path_resolve(dir, NULL);
    char *save = NULL, *p;
    int total = 0, n;

    if (path == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (p = strtok_r(path, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        n = scan_dir(p, fn, user);
        if (n < 0) {
            err_set(err, DAL_EIO, "%s: cannot read plugin directory", p);
            free(path);
            return DAL_EIO;
        }
        total += n;
    }
    free(path);
    return total;
}
