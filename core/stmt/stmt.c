/*
 * stmt.c -- the statement path: one driver for every entry point.
 *
 * dal_query, prepared statements, sessions and explain all send a statement
 * through the same steps, in the order of the folders (docs/architecture.md): analysis
 * (sql.c, cached), a column list for an INSERT without one (columns.c),
 * generated IDs (idfill.c), routing (route.c), the merge spec and its edits
 * (merge.c), server choice (replica.c), execution with each route's SQL
 * rewritten (exec.c, rewrite.c), and the events for the monitors
 * (monitor.c).  What differs between the entry points -- the snapshot, how
 * servers are chosen, what BEGIN/COMMIT mean, a transaction's connection --
 * comes in a dal_stmt_ctx_t.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "columns.h"
#include "error.h"
#include "events.h"
#include "exec.h"
#include "explain.h"
#include "conn.h"
#include "pool.h"
#include "result.h"
#include "sprep.h"
#include "stmt.h"

int stmt_is_txn_control(dal_sql_kind_t k)
{
    return k == DAL_SQL_BEGIN || k == DAL_SQL_COMMIT || k == DAL_SQL_ROLLBACK;
}

/* s (NULL: msg says why) if it is one statement; else NULL with err set
 * and s let go (a reference, or the thread's loan). */
static const dal_sql_t *one_statement(const dal_sql_t *s, int lent, const char *msg,
                                      dal_error_t *err)
{
    if (s == NULL) {
        err_set(err, DAL_ESQL, "cannot analyse the statement: %s", msg);
        return NULL;
    }
    if (s->kind != DAL_SQL_MULTI)
        return s;
    err_set(err, DAL_ESQL, "several statements in one call; send them one at a time");
    if (lent)
        sql_cache_return();
    else
        sql_unref(s);
    return NULL;
}

const dal_sql_t *stmt_analyse(dal_sql_cache_t *cache, const char *sql, size_t len,
                              int no_backslash, dal_error_t *err)
{
    char msg[256];

    return one_statement(sql_cache_get(cache, sql, len, no_backslash, msg, sizeof msg), 0, msg,
                         err);
}

/* The values of the n literals lits of text as ? parameters: as routing
 * takes each literal (route_literal_value), so the statement routes as
 * its own analysis would route it.  -1 when one does not fit lit_buf. */
static int bind_literals(const char *text, int no_backslash, const sql_shape_lit_t *lits, size_t n,
                         dal_stmt_t *st)
{
    size_t i, used = 0;
    char *heap;

    for (i = 0; i < n; i++) {
        dal_sql_opnd_t o = {DAL_OPND_LITERAL, lits[i].off, lits[i].len, -1, lits[i].type, 0,
                            no_backslash};
        dal_value_t *v = &st->lit_vals[i];
        if (route_literal_value(text, &o, v, st->lit_buf + used, sizeof st->lit_buf - used,
                                &heap, NULL) != 0 || heap != NULL) {
            free(heap);
            return -1;
        }
        if (v->type == DAL_TYPE_STRING)
            used += v->v.s.len + 1;
        st->lit_spans[i].off = lits[i].off;
        st->lit_spans[i].len = lits[i].len;
    }
    st->nlits = n;
    st->params = st->lit_vals;
    st->nparams = n;
    return 0;
}

/* The analysis of text's shape (sql_shape.h), lent or a reference, with
 * its literals bound in st; NULL when the statement runs on its own
 * analysis (no shape, a shape that cannot stand for it, or no memory). */
static const dal_sql_t *analyse_shape(dal_sql_cache_t *cache, dal_stmt_text_t text,
                                      dal_stmt_t *st)
{
    char shape[2048], msg[64];
    sql_shape_lit_t lits[SQL_SHAPE_MAX_LITS];
    size_t n, slen;
    int lent;
    const dal_sql_t *s;

    if ((n = sql_shape_text(text.text, text.len, text.no_backslash, shape, sizeof shape, &slen,
                            lits)) == 0 ||
        (s = sql_cache_borrow(cache, shape, slen, text.no_backslash, &lent, msg, sizeof msg)) ==
            NULL)
        return NULL;
    if (sql_shape_usable(s) && s->nparams == n &&
        bind_literals(text.text, text.no_backslash, lits, n, st) == 0) {
        st->sql_lent = lent;
        st->sql_borrowed = lent;
        return s;
    }
    st->nlits = 0;
    if (lent)
        sql_cache_return();
    else
        sql_unref(s);
    return NULL;
}

/* The analysis of the statement's text: its shape's when it has a usable
 * one ([dal] sql_shape_cache; not with ? parameters of its own), else its
 * own; lent by the thread's front cache (st->sql_lent, returned by
 * stmt_clear) or a reference of its own. */
static const dal_sql_t *analyse_text(dal_sql_cache_t *cache, const dal_config_t *cfg,
                                     dal_stmt_text_t text, size_t nparams, dal_stmt_t *st,
                                     dal_error_t *err)
{
    char msg[256];
    int lent;
    const dal_sql_t *s;

    if (nparams == 0 && cfg->sql_shape_cache && (s = analyse_shape(cache, text, st)))
        return s;
    s = sql_cache_borrow(cache, text.text, text.len, text.no_backslash, &lent, msg, sizeof msg);
    if ((s = one_statement(s, lent, msg, err)) != NULL && lent) {
        st->sql_lent = 1;
        st->sql_borrowed = 1;
    }
    return s;
}

/* Several routes: how their rows combine, and what that changes in each
 * route's SQL.  Writes, INSERT and DDL just add up. */
static int merge_setup(dal_stmt_t *st, dal_error_t *err)
{
    dal_sql_kind_t k = st->sql->kind;
    int rc;

    if (st->rt.nroutes < 2 || k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_DDL)
        return 0;
    rc = merge_spec_build(st->sql, st->rt.merge_key,
                          &st->spec, err);
    if (rc == 0)
        rc = merge_node_edits(st->spec, st->sql, st->params, st->nparams, &st->edits, err);
    if (rc == 0 && st->edits.n > 0)
        st->rt.merge_edits = &st->edits;
    return rc;
}

static void snapshot_release(void *ctx)
{
    snapshot_unref(ctx);
}

int stmt_run(dal_stmt_t *st, dal_snapshot_t *snap, dal_result_t **out, dal_error_t *err)
{
    int rc;

    /* a pool's leak report names the statement that took the connection */
    pool_set_statement(st->sql_norm, st->trace[0] ? st->trace : NULL);
    rc = exec_routes(&st->rt, st->params, st->nparams, &st->spec, out, err);
    pool_set_statement(NULL, NULL);
    stmt_emit(st, rc, *out);
    if (rc != 0)
        return rc;
    if (st->fill.nids > 0)
        stmt_give_ids(st, *out);
    if (st->rt.nroutes > 1) {
        /* streamed rows hold connections of this snapshot's nodes */
        snapshot_ref(snap);
        result_on_free(*out, snapshot_release, snap);
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
    uint64_t x = clock_random();
    int i;

    if (cap < 17)
        return;
    for (i = 15; i >= 0; i--, x >>= 4)
        out[i] = hex[x & 15];
    out[16] = '\0';
}

/* Trace id and normalised SQL for the events and the physical SQL. */
static int prepare_monitoring(dal_stmt_t *st, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                              dal_error_t *err)
{
    const char *given = opts ? opts->trace_id : NULL;

    st->monitors = snap->monitors;
    if (given != NULL && !trace_ok(given))
        return err_set(err, DAL_EINVAL, "trace id: at most 64 characters of "
                       "[A-Za-z0-9_.:-]");
    if (given != NULL)
        snprintf(st->trace, sizeof st->trace, "%s", given);
    if (!monitor_active(st->monitors))
        return 0;
    st->t0 = clock_now_ns();
    if (given == NULL)
        trace_generate(st->trace, sizeof st->trace);
    st->sql_norm = sql_normalized(st->sql);
    if (st->sql_norm == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    return 0;
}

int stmt_select(dal_stmt_t *st, const dal_query_opts_t *opts, dal_select_t *sel,
                dal_error_t *err)
{
    size_t i;
    int rc = server_override(st->sql, opts, &sel->override, err);

    if (rc == 0)
        rc = select_servers(&st->rt, sel, err);
    if (rc != 0 || (sel->flags & DAL_SELECT_EXPLAIN))
        return rc;
    st->rt.ryw = sel->ryw;
    for (i = 0; i < st->rt.nroutes; i++)
        event_route(&st->rt, route_server(&st->rt.routes[i]));
    return 0;
}


/* An INSERT without a column list gets one (columns.h): the statement
 * becomes the analysis of the text with the list. */
static int add_column_list(dal_sql_cache_t *cache, dal_snapshot_t *snap, dal_stmt_t *st,
                           dal_error_t *err)
{
    size_t len;
    char *text = columns_add_list(snap, st->sql, &len, &st->columns_into, err);
    const dal_sql_t *with;
    int again;

    for (again = 1;; again = 0) {
        if (text == NULL)
            return err ? err->code : DAL_ENOMEM;
        with = stmt_analyse(cache, text, len, st->sql->no_backslash, err);
        free(text);
        if (with != NULL)
            break;
        if (!again)
            return err ? err->code : DAL_ESQL;
        /* rows of another length than the list dal knew: the table may
         * have changed behind dal's back; the list is read again, once */
        columns_forget_named(snap, st->sql);
        text = columns_add_list(snap, st->sql, &len, &st->columns_into, err);
    }
    if (!st->sql_borrowed)
        sql_unref(st->sql);
    st->sql_borrowed = 0;
    st->sql = with;
    st->columns_check = 1;
    return 0;
}

int stmt_prepare(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                 const dal_query_opts_t *opts,
                 dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                 dal_stmt_t *st, dal_error_t *err)
{
    int rc;

    /* not routed yet: stmt_clear leaves rt alone; the literals' room
     * (last) is written only when used */
    memset(st, 0, offsetof(dal_stmt_t, lit_spans));
    st->params = params;
    st->nparams = nparams;
    st->sql_borrowed = sql.prepared != NULL;
    st->sql = sql.prepared ? sql.prepared
                           : analyse_text(cache, snap->cfg, sql, nparams, st, err);
    if (st->sql == NULL)
        return err ? err->code : DAL_ESQL;
    /* transaction control is the session's business, not a route's */
    if (stmt_is_txn_control(st->sql->kind))
        return 0;
    if (columns_needed(snap, st->sql, opts) && (rc = add_column_list(cache, snap, st, err)) != 0)
        return rc;
    if ((rc = columns_learn_sources(snap, st->sql, &st->columns_check, err)) != 0)
        return rc;
    rc = idfill_prepare(snap, st->sql, st->params, st->nparams, &st->fill, err);
    if (rc != 0)
        return rc;
    if (st->fill.filled != NULL || st->fill.sql != NULL) {
        const dal_sql_t *orig = st->sql;
        /* the rewritten text is the same from call to call: its analysis
         * is kept with the statement, or at least cached */
        if (st->fill.filled != NULL)
            st->sql = sql_ref(st->fill.filled);
        else if ((st->sql = stmt_analyse(cache, st->fill.sql, st->fill.sql_len,
                                         orig->no_backslash, err)) != NULL)
            idfill_remember(orig, &st->fill, st->sql);
        if (!st->sql_borrowed)
            sql_unref(orig);
        st->sql_borrowed = 0;
        if (st->sql == NULL)
            return err ? err->code : DAL_ESQL;
        st->params = st->fill.params;
        st->nparams = st->fill.nparams;
    }
    rc = prepare_monitoring(st, snap, opts, err);
    if (rc == 0 && snap->cfg->nlookups > 0)
        rc = lookup_prepare(cache, snap, schema, opts, st->sql, st->params, st->nparams,
                            &st->lookup, err);
    if (rc == 0)
        rc = route_statement_keys(snap, schema, st->sql, opts, st->params, st->nparams,
                                  st->lookup.rk.table ? &st->lookup.rk : NULL, &st->rt, err);
    if (rc != 0)
        return rc;
    st->rt.monitors = st->monitors;
    if (sql.prepared == NULL && nparams == 0) {
        st->rt.client_text = sql.text;  /* what a result relay runs as it is */
        st->rt.client_len = sql.len;
    }
    if (st->nlits > 0) {
        /* the literals go back into the SQL as the client wrote them */
        st->rt.lit_text = sql.text;
        st->rt.lit_spans = st->lit_spans;
    }
    st->rt.sprep = st->rt.nroutes == 1 && st->nlits == 0 &&
                   sprep_wanted(snap->cfg, st->sql, sql.prepared != NULL,
                                opts != NULL && opts->trace_id != NULL);
    st->rt.sprep_cache = snap->cfg->server_prepare_cache;
    st->rt.snap_gen = snap->gen;
    st->rt.trace_id = st->trace[0] ? st->trace : NULL;
    st->rt.sql_norm = st->sql_norm;
    if (opts != NULL && opts->describe) {
        /* one physical table's statement describes them all, without a
         * merge's edits (describe.h) */
        st->rt.describe = 1;
        st->rt.sprep = 0;
        st->rt.nroutes = st->rt.nroutes > 0 ? 1 : 0;
        return 0;
    }
    return merge_setup(st, err);
}

void stmt_clear(dal_stmt_t *st)
{
    /* what most statements do not have is not visited */
    if (st->spec != NULL)
        merge_spec_free(st->spec);
    if (st->edits.items != NULL)
        edits_clear(&st->edits);
    if (st->rt.sql != NULL)
        routing_clear(&st->rt);
    if (!idfill_empty(&st->fill))
        idfill_clear(&st->fill);
    if (st->lookup.sql != NULL || st->lookup.vals != NULL)
        lookup_clear(&st->lookup);
    if (!st->sql_borrowed)
        sql_unref(st->sql);
    if (st->sql_lent)
        sql_cache_return();
    st->sql_lent = 0;
    st->sql_norm = NULL;
    st->sql = NULL;
}

void stmt_give_ids(dal_stmt_t *st, dal_result_t *r)
{
    if (st->fill.nids == 0 || r == NULL)
        return;
    result_set_ids(r, st->fill.ids, st->fill.nids);
    st->fill.ids = NULL;
    st->fill.nids = 0;
}


int stmt_args_error(const char *fn, const void *handle, const void *sql,
                    const dal_value_t *params, size_t nparams, dal_result_t **out,
                    dal_error_t *err)
{
    if (handle == NULL)
        return err_set(err, DAL_EINVAL, "%s: the handle is NULL", fn);
    if (sql == NULL)
        return err_set(err, DAL_EINVAL, "%s: the statement is NULL", fn);
    if (out == NULL)
        return err_set(err, DAL_EINVAL, "%s: out (where the result goes) is NULL", fn);
    (void)params; /* the only check left: NULL with nparams > 0 */
    return err_set(err, DAL_EINVAL, "%s: params is NULL but nparams is %zu", fn, nparams);
}


/* ---------------------------------------------------------------- driver */

/* The check that the tables a statement's routes rest on still have the
 * columns dal learned (columns_check), preparing it again after a change
 * until they do.  st was prepared with st->columns_check set. */
static int check_columns(const dal_stmt_ctx_t *ctx, const dal_query_opts_t *opts,
                         dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                         dal_stmt_t *st, dal_error_t *err)
{
    int attempt, rc = 0;

    for (attempt = 0; rc == 0 && st->columns_check; attempt++) {
        if ((rc = columns_check(&st->rt, st->columns_into, attempt, err)) != 1)
            return rc;
        stmt_clear(st);
        rc = stmt_prepare(ctx->cache, ctx->snap, ctx->schema, opts, sql, params, nparams, st, err);
    }
    return rc;
}

/* Server errors that may mean a table is not what dal learned of it:
 * unknown column, column count doesn't match, no such table. */
static int table_changed_errno(unsigned int e)
{
    return e == 1054 || e == 1136 || e == 1146;
}

/* After a statement: DDL through dal, or an error that may mean a changed
 * table, makes dal forget what it learned of the tables named. */
static void columns_after(dal_snapshot_t *snap, const dal_sql_t *sql, int rc,
                          const dal_error_t *err)
{
    if (sql == NULL)
        return;
    if (sql->kind == DAL_SQL_DDL ||
        (rc == DAL_ESERVER && (err == NULL || table_changed_errno(err->mysql_errno))))
        columns_forget_named(snap, sql);
}

/* The statement may need the owner's connections (dal_stmt_ctx_t.holds). */
static int owner_concerned(const dal_stmt_ctx_t *ctx, const dal_stmt_t *st)
{
    return ctx->run_held != NULL && (ctx->holds || st->sql->pins);
}

/* A statement the owner is concerned with: its look at the routes, then
 * on the owner's connections when it holds them for st (a transaction, a
 * session's pins), else through the pools. */
static int run_owned(const dal_stmt_ctx_t *ctx, const dal_query_opts_t *opts, dal_stmt_t *st,
                     dal_select_t *sel, dal_result_t **out, dal_error_t *err)
{
    int rc = ctx->routed != NULL ? ctx->routed(ctx->owner, ctx->snap, opts, st, err) : 0;

    if (rc == 0)
        rc = stmt_select(st, opts, sel, err);
    if (rc != 0)
        return rc;
    if ((rc = ctx->run_held(ctx->owner, ctx->snap, st, out, err)) > 0)
        return stmt_run(st, ctx->snap, out, err);
    stmt_emit(st, rc, *out);
    if (rc == 0)
        stmt_give_ids(st, *out);
    return rc;
}

/* ------------------------------------------------ the upkeep of lookups */

/* Lookup reads inside a session that holds connections run on them
 * (lookup_reader_set): arg is the statement's ctx. */
static int read_for_lookup(void *arg, int how, const char *sql, size_t len,
                           const dal_value_t *params, size_t nparams, dal_result_t **out,
                           dal_error_t *err)
{
    dal_stmt_text_t text = {sql, NULL, len, 0}; /* dal's own: reads the same in any mode */

    (void)how;
    return stmt_execute(arg, NULL, text, params, nparams, out, err);
}

/* One connection of the write's node, in a transaction that holds the
 * write and the upkeep of its lookup rows on that node, outside a
 * session's transaction (docs/lookup.md, "Writes"). */
typedef struct shared {
    dal_node_t *node;   /* borrowed from the statement's snapshot */
    dal_conn_t *conn;   /* taken from node's master pool; NULL: none */
    int broken;         /* conn can no longer be used */
} shared_t;

/* The upkeep's statements of one write: where each runs. */
typedef struct upkeep {
    const dal_stmt_ctx_t *ctx;   /* borrowed: the write's (the shared one, when it has it) */
    const dal_stmt_ctx_t *plain; /* borrowed: the caller's */
    dal_node_t *node;            /* the write's one node, NULL: it has none (or runs as
                                    every other statement) */
    int single;                  /* a single-mode transaction is open */
    int failed;                  /* the write failed: its take-back runs */
    int added_outside;           /* lookup rows were added outside the write's transaction */
} upkeep_t;

static int shared_sql(shared_t *sh, const char *sql, dal_error_t *err)
{
    if (sh->broken)
        return err_set(err, DAL_ECONNECT, "%s: the connection was lost", sh->node->cfg->name);
    if (mysql_real_query(&sh->conn->mysql, sql, strlen(sql)) == 0)
        return 0;
    sh->broken = mysql_errno(&sh->conn->mysql) >= 2000 && mysql_errno(&sh->conn->mysql) < 3000;
    return conn_error(sh->conn, DAL_ESERVER, err);
}

static int shared_begin(shared_t *sh, dal_node_t *node, dal_error_t *err)
{
    int reused, rc = server_acquire(&node->master, &sh->conn, &reused, err);

    sh->node = node;
    if (rc == 0 && (rc = shared_sql(sh, "START TRANSACTION", err)) != 0) {
        server_release(&node->master, sh->conn, 0);
        sh->conn = NULL;
    }
    return rc;
}

/* COMMIT (or ROLLBACK) and the connection back to its pool. */
static int shared_end(shared_t *sh, int commit, dal_error_t *err)
{
    int rc = shared_sql(sh, commit ? "COMMIT" : "ROLLBACK", err);

    server_release(&sh->node->master, sh->conn, rc == 0);
    sh->conn = NULL;
    return rc;
}

/* ctx.run_held of the shared transaction: a statement on its node alone
 * runs on its connection; any other through the pools (1). */
static int shared_run(void *owner, dal_snapshot_t *snap, dal_stmt_t *st, dal_result_t **out,
                      dal_error_t *err)
{
    shared_t *sh = owner;

    (void)snap;
    if (st->rt.nroutes != 1 || st->rt.routes[0].node != sh->node)
        return 1;
    if (sh->broken)
        return err_set(err, DAL_ECONNECT, "%s: the connection was lost", sh->node->cfg->name);
    return exec_on_conn(&st->rt, sh->conn, st->params, st->nparams, out, &sh->broken, err);
}

/* Whether sql routes to node alone. */
static int routes_to(const dal_stmt_ctx_t *ctx, dal_stmt_text_t sql, const dal_value_t *params,
                     size_t nparams, const dal_node_t *node)
{
    dal_stmt_t st;
    int here = stmt_prepare(ctx->cache, ctx->snap, ctx->schema, NULL, sql, params, nparams, &st,
                            NULL) == 0 &&
               st.rt.nroutes == 1 && st.rt.routes[0].node == node;

    stmt_clear(&st);
    return here;
}

/* The upkeep runs its statements as the write it keeps runs (lookup.h):
 * reads of the rows with it; lookup rows on the write's node in its
 * transaction; others outside it -- added at once, before it; removed
 * after it commits (LOOKUP_ELSEWHERE), or in a single-mode transaction
 * never (it may roll back). */
static int run_for_lookup(void *arg, int how, const char *sql, size_t len,
                          const dal_value_t *params, size_t nparams, dal_result_t **out,
                          dal_error_t *err)
{
    upkeep_t *u = arg;
    const dal_stmt_ctx_t *on = u->ctx;
    dal_stmt_ctx_t pools = {.cache = on->cache, .snap = on->snap, .schema = on->schema,
                            .sel = {.flags = DAL_SELECT_MASTER}};
    dal_stmt_text_t text = {sql, NULL, len, 0}; /* dal's own: reads the same in any mode */

    if (how != LOOKUP_RUN_WITH && (u->single || u->node != NULL) &&
        (u->node == NULL || !routes_to(on, text, params, nparams, u->node))) {
        if (how == LOOKUP_RUN_REMOVE && !u->failed)
            return LOOKUP_ELSEWHERE;
        on = &pools;
    }
    if (how == LOOKUP_RUN_ADD && on != u->ctx)
        u->added_outside = 1;
    return stmt_execute(on, NULL, text, params, nparams, out, err);
}

/* A write's lookup upkeep before it (lw, u: the caller's, zeroed), with
 * the shared transaction when the write goes to one node outside any
 * transaction: *run becomes the context the write runs on. */
static int upkeep_before(const dal_stmt_ctx_t *ctx, dal_stmt_t *st, upkeep_t *u, shared_t *sh,
                         dal_stmt_ctx_t *shared_ctx, const dal_stmt_ctx_t **run,
                         dal_lookup_write_t *lw, dal_error_t *err)
{
    int rc = 0;

    *u = (upkeep_t){ctx, ctx, st->rt.nroutes == 1 ? st->rt.routes[0].node : NULL,
                    ctx->txn_single, 0, 0};
    if (u->node != NULL && !ctx->holds && !st->sql->pins) {
        if ((rc = shared_begin(sh, u->node, err)) != 0)
            return rc;
        *shared_ctx = *ctx;
        shared_ctx->holds = 1;
        shared_ctx->run_held = shared_run;
        shared_ctx->routed = NULL;
        shared_ctx->txn_control = NULL;
        shared_ctx->owner = sh;
        shared_ctx->sel.flags |= DAL_SELECT_MASTER;
        *run = u->ctx = shared_ctx;
    } else if (!u->single) {
        u->node = NULL; /* a multi or xa transaction, a session's pins: all in it */
    }
    return lookup_write_before(run_for_lookup, u, ctx->snap, st->sql, st->params, st->nparams,
                               lw, err);
}

/* After the write (rc): the removals; with the shared transaction, those
 * on its node in it, then COMMIT (ROLLBACK when the write failed), then
 * the others. */
static int upkeep_after(upkeep_t *u, shared_t *sh, dal_lookup_write_t *lw, int rc,
                        dal_error_t *err)
{
    dal_error_t e2 = {0};
    int r2 = 0;

    u->failed = rc != 0;
    if (sh->conn == NULL)
        return lookup_write_after(lw, rc, err);
    if (rc == 0)
        r2 = lookup_write_after(lw, 0, err);
    if (rc == 0)
        rc = shared_end(sh, 1, r2 != 0 ? &e2 : err);
    else
        shared_end(sh, 0, &e2);
    /* the transaction is over: what is left runs as outside one; after a
     * ROLLBACK, only lookup rows added outside it are left to take back */
    *u = (upkeep_t){u->plain, u->plain, NULL, 0, rc != 0, u->added_outside};
    if (rc != 0 && u->added_outside)
        lookup_write_after(lw, rc, &e2);
    if (rc != 0)
        return rc;
    if (r2 == 0 && lw->elsewhere > 0)
        r2 = lookup_write_after(lw, 0, err);
    return r2;
}

/* An UPDATE or DELETE by a looked-up column whose lookup found no row
 * matches nothing: the answer is a server's for that (0 rows; an UPDATE's
 * info line), and no table is asked.  A SELECT still asks one table, for
 * its columns (docs/lookup.md, "Reads"). */
static int nothing_found(const dal_stmt_t *st)
{
    return st->lookup.rk.table != NULL && st->lookup.nkeys == 0 &&
           (st->sql->kind == DAL_SQL_UPDATE || st->sql->kind == DAL_SQL_DELETE);
}

static int answer_nothing(const dal_stmt_t *st, dal_result_t **out, dal_error_t *err)
{
    dal_result_t *r = result_new();

    if (r == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    r->named_tables = 1;
    if (st->sql->kind == DAL_SQL_UPDATE)
        result_note_info(r, "Rows matched: 0  Changed: 0  Warnings: 0");
    *out = r;
    return 0;
}

int stmt_execute(const dal_stmt_ctx_t *ctx, const dal_query_opts_t *opts,
                 dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                 dal_result_t **out, dal_error_t *err)
{
    dal_select_t sel = ctx->sel;
    dal_lookup_write_t lw = {0};
    upkeep_t u;
    shared_t sh = {0};
    dal_stmt_ctx_t shared_ctx;
    const dal_stmt_ctx_t *run = ctx;
    dal_stmt_t st;
    lookup_reader_t was = lookup_reader_set((lookup_reader_t){ctx->holds ? read_for_lookup : NULL,
                                                              (void *)ctx});
    int rc = stmt_prepare(ctx->cache, ctx->snap, ctx->schema, opts, sql, params, nparams, &st, err);

    if (rc == 0 && st.columns_check)
        rc = check_columns(ctx, opts, sql, params, nparams, &st, err);
    lookup_reader_set(was);
    if (rc == 0 && opts == NULL) {
        /* the caller's own statement; its lookups and upkeep never relay */
        st.rt.relay = ctx->relay;
        st.rt.relay_ctx = ctx->relay_ctx;
    }
    if (rc == 0 && !stmt_is_txn_control(st.sql->kind) && !nothing_found(&st) &&
        !st.rt.describe && lookup_write_wanted(ctx->snap, st.sql))
        rc = upkeep_before(ctx, &st, &u, &sh, &shared_ctx, &run, &lw, err);
    if (rc == 0 && !stmt_is_txn_control(st.sql->kind) && nothing_found(&st))
        rc = answer_nothing(&st, out, err);
    else if (rc == 0 && stmt_is_txn_control(st.sql->kind))
        rc = ctx->txn_control != NULL
                 ? ctx->txn_control(ctx->owner, st.sql, out, err)
                 : err_set(err, DAL_ESTATE,
                           "%s outside a session: transactions need dal_session_open, so "
                           "the connection stays with them", sql_kind_name(st.sql->kind));
    else if (rc == 0 && owner_concerned(run, &st))
        rc = run_owned(run, opts, &st, &sel, out, err);
    else if (rc == 0 && (rc = stmt_select(&st, opts, &sel, err)) == 0)
        rc = stmt_run(&st, ctx->snap, out, err);
    if (lw.run != NULL || sh.conn != NULL) {
        rc = upkeep_after(&u, &sh, &lw, rc, err);
        lookup_write_clear(&lw);
    }
    columns_after(ctx->snap, st.sql, rc, err);
    stmt_clear(&st);
    return rc;
}

int stmt_explain(const dal_stmt_ctx_t *ctx, const dal_query_opts_t *opts, const char *sql,
                 size_t len, const dal_value_t *params, size_t nparams, dal_plan_t **out,
                 dal_error_t *err)
{
    dal_select_t sel = {.flags = DAL_SELECT_EXPLAIN};
    dal_stmt_t st;
    dal_stmt_text_t text = {sql, NULL, len, 0}; /* the server's default sql_mode assumed */
    int rc = stmt_prepare(ctx->cache, ctx->snap, ctx->schema, opts, text, params, nparams, &st, err);

    if (rc == 0 && st.columns_check)
        rc = check_columns(ctx, opts, text, params, nparams, &st, err);
    if (rc == 0)
        rc = stmt_select(&st, opts, &sel, err);
    if (rc == 0)
        rc = explain_build(&st.rt, st.params, st.nparams, out, err);
    if (rc == 0 && st.lookup.rk.table != NULL)
        rc = lookup_explain(ctx->cache, ctx->snap, ctx->schema, &st.lookup, out, err);
    stmt_clear(&st);
    return rc;
}
