/*
 * dal_int.h -- the dal_t handle.
 */
#ifndef DAL_CORE_DAL_INT_H
#define DAL_CORE_DAL_INT_H

#include <pthread.h>

#include "idfill.h"
#include "log.h"
#include "merge.h"
#include "monitor.h"
#include "route.h"
#include "snapshot.h"
#include "sql.h"

struct dal_watch;

struct dal {
    dal_logger_t log;
    char *path;                 /* owned: the INI file */
    char *plugin_dir;           /* owned: dal_open_opts_t.plugin_dir, or NULL */
    dal_sql_cache_t *sql_cache; /* owned; shared by every snapshot */
    /* The current snapshot (one reference owned).  Readers announce
     * themselves in `readers` while they load the pointer and take their
     * reference; a swap waits for readers to drain before dropping the old
     * snapshot's reference, so no lock is on the statement path. */
    _Atomic(dal_snapshot_t *) snap;
    /* readers alone on its line (hot.h): every statement changes it twice */
    char readers_before[DAL_CACHE_LINE];
    atomic_uint readers;
    char readers_line[DAL_LINE_REST(atomic_uint)];
    pthread_mutex_t reload_mu;  /* one reload at a time */
    atomic_ulong reloads, reload_failures;
    struct dal_watch *watch;    /* owned: the file watcher, or NULL */
};

/* The current snapshot with one reference for the caller. */
dal_snapshot_t *dal_snapshot_acquire(dal_t *dal);

/* Start / stop watching the INI file (reload.c). */
int dal_watch_start(dal_t *dal, dal_error_t *err);
void dal_watch_stop(dal_t *dal);

/* BEGIN, COMMIT or ROLLBACK. */
int dal_is_txn_control(dal_sql_kind_t k);

/* One statement on its way: analysed, IDs filled, routed. */
typedef struct dal_stmt {
    const dal_sql_t *sql;       /* one reference, or borrowed (sql_borrowed) */
    int sql_borrowed;           /* sql is a prepared statement's: its handle holds it */
    dal_routing_t rt;           /* empty for transaction control */
    dal_idfill_t fill;          /* generated IDs (fill.sql is then the text that runs) */
    const dal_value_t *params;  /* borrowed: the caller's, or fill.params */
    size_t nparams;
    dal_merge_plan_t *plan;     /* owned until handed to the result; several routes only */
    dal_edits_t edits;          /* the plan's edits of every route's SQL */
    /* monitoring: only filled when a monitor plugin is enabled */
    const struct dal_monitor_set *monitors; /* borrowed from the snapshot */
    uint64_t t0;                /* start of the statement */
    const char *sql_norm;       /* borrowed from sql: literals replaced by ? */
    char trace[72];             /* the trace id in use, "" for none */
} dal_stmt_t;

/* A statement given to the API: its text, or a prepared statement's
 * analysis (borrowed: the handle outlives the call). */
typedef struct dal_stmt_text {
    const char *text;
    const dal_sql_t *prepared;
} dal_stmt_text_t;

/* The first half of every statement: analysis (cached), ID generation,
 * routing.  st must be released with dal_stmt_clear, also on failure. */
int dal_stmt_prepare(dal_t *dal, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                     dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                     dal_stmt_t *st, dal_error_t *err);

/* The argument error of a statement entry point: which argument, in
 * err's message "FN: ARG ..." (cold: only called when the check failed). */
int dal_stmt_args_error(const char *fn, const void *handle, const void *sql,
                        const dal_value_t *params, size_t nparams, dal_result_t **out,
                        dal_error_t *err);

/* The argument check of the four statement entry points (dal_query,
 * dal_session_query and their _prepared twins, named by fn): handle is the
 * dal_t or session, sql the text or the prepared statement.  Clears *out
 * (when given); returns 0 if the call can go on, else DAL_EINVAL with the
 * argument named in err. */
static inline int dal_stmt_args_check(const char *fn, const void *handle, const void *sql,
                                      const dal_value_t *params, size_t nparams,
                                      dal_result_t **out, dal_error_t *err)
{
    if (out != NULL)
        *out = NULL;
    if (handle != NULL && sql != NULL && out != NULL && (nparams == 0 || params != NULL))
        return 0;
    return dal_stmt_args_error(fn, handle, sql, params, nparams, out, err);
}

/* What dal_prepare returns: the analysis, one reference. */
struct dal_prepared {
    const dal_sql_t *sql;
};
void dal_stmt_clear(dal_stmt_t *st);

struct dal_select;

/* The second half: choose the server of every route (master or replica,
 * see replica.h) from the statement's override and sel's flags, writer and
 * transaction server (sel->override is filled here), then report the
 * routes to the monitors (not for explain). */
int dal_stmt_select(dal_stmt_t *st, const dal_query_opts_t *opts, struct dal_select *sel,
                    dal_error_t *err);

/* One DAL_EVENT_STATEMENT for st, which was routed (dal_stmt_select
 * succeeded) and ended with rc.  Call through dal_stmt_emit, which checks
 * for monitors first (inline, as dal_emit_route). */
void dal_stmt_emit_event(const dal_stmt_t *st, int rc, const dal_result_t *r);

static inline void dal_stmt_emit(const dal_stmt_t *st, int rc, const dal_result_t *r)
{
    if (dal_monitor_active(st->monitors) && st->sql != NULL)
        dal_stmt_emit_event(st, rc, r);
}

/* Run a prepared statement's routes (outside a transaction).  The result
 * keeps a reference on snap while it may hold connections of its nodes. */
int dal_stmt_run(dal_stmt_t *st, dal_snapshot_t *snap, dal_result_t **out, dal_error_t *err);

/* The tail of dal_exec and dal_session_exec: report the affected rows of
 * r (if rc is 0) and free it.  Returns rc. */
int dal_result_drop(int rc, dal_result_t *r, uint64_t *affected_rows);

/* Hand the generated IDs of st to the result (the caller reads them with
 * dal_result_generated_ids). */
void dal_stmt_give_ids(dal_stmt_t *st, dal_result_t *r);

#endif /* DAL_CORE_DAL_INT_H */
