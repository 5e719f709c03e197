/*
 * stmt.h -- the statement path: the one driver every entry point calls
 * (dal_query, prepared statements, sessions, explain), and the steps it is
 * made of, for the entry points that need one step alone.
 */
#ifndef DAL_CORE_STMT_H
#define DAL_CORE_STMT_H

#include "events.h"
#include "idfill.h"
#include "lookup.h"
#include "merge.h"
#include "monitor.h"
#include "route_servers.h"
#include "route.h"
#include "snapshot.h"
#include "sql_cache.h"
#include "sql_shape.h"

/* BEGIN, COMMIT or ROLLBACK. */
int stmt_is_txn_control(dal_sql_kind_t k);

/* One statement on its way: analysed, IDs filled, routed. */
typedef struct dal_stmt {
    const dal_sql_t *sql;       /* one reference, or borrowed (sql_borrowed) */
    int sql_borrowed;           /* sql is a prepared statement's (its handle holds it), or
                                   lent */
    int sql_lent;               /* the text's analysis is the thread's loan (sql.h's
                                   sql_cache_borrow): stmt_clear returns it */
    dal_routing_t rt;           /* empty for transaction control */
    dal_idfill_t fill;          /* generated IDs (fill.sql is then the text that runs) */
    dal_lookup_t lookup;        /* the lookup read before routing (lookup.h) */
    const struct dal_columns *columns_into; /* borrowed from the table: the learned list
                                   written into an INSERT without one (columns.h), or NULL */
    int columns_check;          /* its routes rest on learned columns (columns_into, or the
                                   source of INSERT ... SELECT *): check them before running */
    const dal_value_t *params;  /* borrowed: the caller's, or fill.params */
    size_t nparams;
    dal_merge_spec_t *spec;     /* owned until handed to the result; several routes only */
    dal_edits_t edits;          /* the spec's edits of every route's SQL */
    /* monitoring: only filled when a monitor plugin is enabled */
    const struct dal_monitor_set *monitors; /* borrowed from the snapshot */
    uint64_t t0;                /* start of the statement */
    const char *sql_norm;       /* borrowed from sql: literals replaced by ? */
    char trace[72];             /* the trace id in use, "" for none */
    /* a text statement run on the analysis of its shape (sql_shape.h): each
     * literal taken out, as the ? it became (params then point at lit_vals);
     * the arrays stay last: stmt_prepare clears what comes before them */
    size_t nlits;               /* 0: the statement runs on its own analysis */
    dal_sql_span_t lit_spans[SQL_SHAPE_MAX_LITS]; /* in the client's text */
    dal_value_t lit_vals[SQL_SHAPE_MAX_LITS];     /* as routing takes the literal */
    char lit_buf[256];          /* the decoded strings lit_vals point into */
} dal_stmt_t;

/* A statement given to the API: its text text[0..len) (NUL bytes
 * included, as the caller's), or a prepared statement's analysis
 * (borrowed: the handle outlives the call). */
typedef struct dal_stmt_text {
    const char *text;
    const dal_sql_t *prepared;
    size_t len;
    int no_backslash; /* text reads as under NO_BACKSLASH_ESCAPES: the session's
                         sql_mode (a prepared analysis has its own) */
} dal_stmt_text_t;

/* The analysis of sql[0..len), read in the mode no_backslash, from cache
 * (borrowed), one reference for the caller; NULL with err set (DAL_ESQL)
 * if it cannot be analysed or holds several statements. */
const dal_sql_t *stmt_analyse(dal_sql_cache_t *cache, const char *sql, size_t len,
                              int no_backslash, dal_error_t *err);

/* The first half of every statement: analysis (cached in cache, borrowed),
 * a column list for an INSERT without one, ID generation, routing (in schema,
 * borrowed, NULL: the top level; see route_statement) and the merge spec.
 * st must be released with stmt_clear, also on failure. */
int stmt_prepare(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                 const dal_query_opts_t *opts,
                 dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                 dal_stmt_t *st, dal_error_t *err);

/* The argument error of a statement entry point: which argument, in
 * err's message "FN: ARG ..." (cold: only called when the check failed). */
int stmt_args_error(const char *fn, const void *handle, const void *sql,
                    const dal_value_t *params, size_t nparams, dal_result_t **out,
                    dal_error_t *err);

/* The argument check of the four statement entry points (dal_query,
 * dal_session_query and their _prepared twins, named by fn): handle is the
 * dal_t or session, sql the text or the prepared statement.  Clears *out
 * (when given); returns 0 if the call can go on, else DAL_EINVAL with the
 * argument named in err. */
static inline int stmt_args_check(const char *fn, const void *handle, const void *sql,
                                  const dal_value_t *params, size_t nparams,
                                  dal_result_t **out, dal_error_t *err)
{
    if (out != NULL)
        *out = NULL;
    if (handle != NULL && sql != NULL && out != NULL && (nparams == 0 || params != NULL))
        return 0;
    return stmt_args_error(fn, handle, sql, params, nparams, out, err);
}

/* What dal_prepare returns: the analysis, one reference. */
struct dal_prepared {
    const dal_sql_t *sql;
};
void stmt_clear(dal_stmt_t *st);

struct dal_select;

/* The second half: choose the server of every route (master or replica,
 * see replica.h) from the statement's override and sel's flags, writer and
 * transaction server (sel->override is filled here), then report the
 * routes to the monitors (not for explain). */
int stmt_select(dal_stmt_t *st, const dal_query_opts_t *opts, struct dal_select *sel,
                dal_error_t *err);

/* The statement's DAL_EVENT_STATEMENT, when it was routed (stmt_select
 * succeeded) and ended with rc (events.h). */
static inline void stmt_emit(const dal_stmt_t *st, int rc, const dal_result_t *r)
{
    if (monitor_active(st->monitors) && st->sql != NULL)
        event_statement(st->monitors, &st->rt, st->sql_norm, st->trace, st->t0, rc, r);
}

/* Run a prepared statement's routes (outside a transaction).  The result
 * keeps a reference on snap while it may hold connections of its nodes. */
int stmt_run(dal_stmt_t *st, dal_snapshot_t *snap, dal_result_t **out, dal_error_t *err);

/* dal_prepare, dal_prepare_len and dal_session_prepare_len (named fn in an
 * argument error), the text read in the mode no_backslash: 1
 * NO_BACKSLASH_ESCAPES, 0 backslash escapes, -1 the servers' global mode
 * (handle_global_no_backslash) (api/dal.c). */
int prepare_text(const char *fn, dal_t *dal, const char *sql, size_t len, int no_backslash,
                 dal_prepared_t **out, dal_error_t *err);

/* The tail of dal_exec and dal_session_exec: report the affected rows of
 * r (if rc is 0) and free it.  Returns rc. */
int result_drop(int rc, dal_result_t *r, uint64_t *affected_rows);

/* Hand the generated IDs of st to the result (the caller reads them with
 * dal_result_generated_ids). */
void stmt_give_ids(dal_stmt_t *st, dal_result_t *r);


/* What differs between the entry points. */
typedef struct dal_stmt_ctx {
    dal_sql_cache_t *cache;     /* borrowed: the handle's analysis cache */
    dal_snapshot_t *snap;       /* borrowed: the configuration the statement runs on; a
                                   result that streams takes its own reference */
    dal_select_t sel;           /* how each route's server is chosen (replica.h) */
    /* BEGIN / COMMIT / ROLLBACK written as SQL; NULL: refused (outside a
     * session a transaction has no connection to stay on) */
    int (*txn_control)(void *owner, const dal_sql_t *sql, dal_result_t **out, dal_error_t *err);
    /* The two callbacks below are called only for a statement that may
     * need the owner's connections: when `holds` (the owner holds some: a
     * transaction, a session's pins) or when the statement leaves session
     * state (dal_sql_t.pins).  Every other statement costs them nothing. */
    int holds;
    int txn_single;             /* a single-mode transaction is open (lookup.h) */
    /* run on connections the owner holds; returns 1 when it holds none
     * for st, which then runs through the pools; NULL: always the pools */
    int (*run_held)(void *owner, dal_snapshot_t *snap, dal_stmt_t *st, dal_result_t **out,
                    dal_error_t *err);
    /* after routing, before the servers are chosen: the owner checks the
     * routes against the connections it holds, and may move a statement
     * that names no table (opts: the caller's); NULL: nothing to check.
     * Both get snap, the statement's snapshot (borrowed). */
    int (*routed)(void *owner, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                  dal_stmt_t *st, dal_error_t *err);
    void *owner;                /* borrowed: passed to the callbacks */
    const char *schema;         /* borrowed: the session's [schema]; NULL: the top level */
    const struct dal_relay *relay; /* borrowed: the session's result relay for its caller's
                                   statement (dal_session_set_relay), or NULL */
    void *relay_ctx;
} dal_stmt_ctx_t;

/* The whole path of one statement: prepare, choose servers, run (or hand
 * transaction control to ctx), report.  On success *out is owned by the
 * caller (dal_result_free). */
int stmt_execute(const dal_stmt_ctx_t *ctx, const dal_query_opts_t *opts,
                 dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                 dal_result_t **out, dal_error_t *err);

/* The path up to the routes, without running anything: dal_explain.  *out
 * owned by the caller (dal_plan_free). */
int stmt_explain(const dal_stmt_ctx_t *ctx, const dal_query_opts_t *opts, const char *sql,
                 size_t len, const dal_value_t *params, size_t nparams, dal_plan_t **out,
                 dal_error_t *err);

#endif /* DAL_CORE_STMT_H */
