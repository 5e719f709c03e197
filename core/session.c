/*
 * session.c -- sessions and single-node transactions.
 *
 * A transaction keeps one snapshot reference and one connection from its
 * first statement to COMMIT/ROLLBACK, so a reload or another thread never
 * sees its connection and every statement of it runs on the same node: on
 * its master, or for a read-only transaction on the server its first
 * statement picked as a read.  A session also remembers what it wrote
 * (read-your-writes, replica.h), so its later reads see it.
 */
#include <errmsg.h>
#include <stdlib.h>
#include <string.h>

#include "dal_int.h"
#include "error.h"
#include "exec.h"
#include "pool.h"
#include "replica.h"
#include "result.h"
#include "route.h"

struct dal_session {
    dal_t *dal;             /* borrowed */
    int in_txn;
    int read_only;          /* the transaction is READ ONLY */
    int wrote;              /* the transaction ran a write (read-your-writes without GTIDs) */
    dal_snapshot_t *snap;   /* one reference while in_txn */
    dal_node_t *node;       /* the transaction's node, once its first statement ran */
    dal_server_t *server;   /* ... and its server (the master unless read-only) */
    dal_conn_t *conn;       /* held from the first statement to the end */
    dal_ryw_t ryw;          /* what this session wrote and must read back */
};

int dal_session_open(dal_t *dal, dal_session_t **out, dal_error_t *err)
{
    dal_session_t *s;

    if (out == NULL || dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_open: NULL argument");
    s = calloc(1, sizeof *s);
    *out = s;
    if (s == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    s->dal = dal;
    return 0;
}

/* Leave the transaction: give the connection back, drop the snapshot. */
static void end_txn(dal_session_t *s, int reusable)
{
    if (s->conn != NULL) {
        /* several statements ran on it: the next borrower needs a reset */
        conn_mark_dirty(s->conn);
        server_release(s->server, s->conn, reusable);
    }
    snapshot_unref(s->snap);
    s->conn = NULL;
    s->node = NULL;
    s->server = NULL;
    s->snap = NULL;
    s->in_txn = 0;
    s->read_only = 0;
    s->wrote = 0;
}

/* A committed transaction on a master: its writes are to be read back, by
 * the GTID the COMMIT got, or (without one) by the master itself. */
static void note_commit(dal_session_t *s)
{
    dal_gtid_t g;

    if (s->server->replica >= 0)
        return;
    if (conn_take_gtid(s->conn, &g))
        ryw_note(&s->ryw, s->node, &g);
    else if (s->wrote && !s->conn->track_gtid)
        ryw_note(&s->ryw, s->node, NULL);
}

/* Send COMMIT or ROLLBACK on the transaction's connection. */
static int finish(dal_session_t *s, const char *word, dal_error_t *err)
{
    int rc = 0, reusable = 1;

    if (!s->in_txn)
        return 0; /* as in MySQL: nothing to end is not an error */
    if (s->conn != NULL && mysql_real_query(&s->conn->mysql, word, strlen(word)) != 0) {
        rc = conn_error(s->conn, DAL_ESERVER, err);
        reusable = 0;
    } else if (s->conn != NULL && strcmp(word, "COMMIT") == 0) {
        note_commit(s);
    }
    end_txn(s, reusable);
    return rc;
}

static int begin(dal_session_t *s, int read_only, dal_error_t *err)
{
    if (s == NULL)
        return err_set(err, DAL_EINVAL, "dal_begin: NULL session");
    if (s->in_txn)
        return err_set(err, DAL_ESTATE, "a transaction is already open (commit or roll it "
                                            "back first)");
    s->snap = snapshot_acquire(s->dal);
    s->in_txn = 1;
    s->read_only = read_only;
    return 0;
}

int dal_begin(dal_session_t *s, dal_error_t *err)
{
    return begin(s, 0, err);
}

int dal_begin_read_only(dal_session_t *s, dal_error_t *err)
{
    return begin(s, 1, err);
}

int dal_commit(dal_session_t *s, dal_error_t *err)
{
    return s ? finish(s, "COMMIT", err) : err_set(err, DAL_EINVAL, "NULL session");
}

int dal_rollback(dal_session_t *s, dal_error_t *err)
{
    return s ? finish(s, "ROLLBACK", err) : err_set(err, DAL_EINVAL, "NULL session");
}

int dal_in_transaction(const dal_session_t *s)
{
    return s != NULL && s->in_txn;
}

const char *dal_transaction_datasource(const dal_session_t *s)
{
    return s != NULL && s->node != NULL ? s->node->cfg->name : NULL;
}

void dal_session_close(dal_session_t *s)
{
    if (s == NULL)
        return;
    finish(s, "ROLLBACK", NULL);
    free(s);
}

/* Open the transaction on srv: take a connection and start it there. */
static int start_on(dal_session_t *s, dal_server_t *srv, dal_error_t *err)
{
    const char *start = s->read_only ? "START TRANSACTION READ ONLY" : "START TRANSACTION";
    int reused, rc = server_acquire(srv, &s->conn, &reused, err);
    unsigned int e;

    if (rc != 0) {
        if (rc == DAL_ECONNECT)
            server_lost(srv, err ? err->message : "cannot connect");
        return rc;
    }
    if (mysql_real_query(&s->conn->mysql, start, strlen(start)) != 0) {
        e = mysql_errno(&s->conn->mysql);
        rc = conn_error(s->conn, DAL_ESERVER, err);
        if (e >= CR_MIN_ERROR && e <= CR_MAX_ERROR)
            server_lost(srv, mysql_error(&s->conn->mysql));
        server_release(srv, s->conn, 0);
        s->conn = NULL;
        return rc;
    }
    s->node = srv->node;
    s->server = srv;
    return 0;
}

/* The first statement of a transaction pins its server.  Nothing has run
 * yet, so a read-only one that cannot start on its replica starts on
 * another server instead. */
static int pin(dal_session_t *s, dal_server_t *srv, dal_error_t *err)
{
    dal_server_t *next;
    int rc = start_on(s, srv, err);

    if (rc != 0 && s->read_only && (next = select_failover(srv)) != NULL)
        rc = start_on(s, next, err);
    return rc;
}

/* Check the routes fit the transaction, then run them on its connection. */
static int run_in_txn(dal_session_t *s, const dal_routing_t *rt, const dal_value_t *params,
                      size_t nparams, dal_result_t **out, dal_error_t *err)
{
    dal_sql_kind_t k = rt->sql->kind;
    int broken = 0, rc;

    if (k == DAL_SQL_DDL)
        return err_set(err, DAL_EUNSUPPORTED,
                       "DDL inside a transaction would commit it implicitly; commit first");
    if (rt->nroutes != 1)
        return err_set(err, DAL_EROUTE,
                       "a transaction stays on one data node, but this statement goes to %zu "
                       "nodes%s%s (the transaction is still open)",
                       rt->nroutes, s->node ? "; the transaction is on " : "",
                       s->node ? s->node->cfg->name : "");
    if (s->node != NULL && rt->routes[0].node != s->node)
        return err_set(err, DAL_EROUTE,
                       "the transaction is on datasource %s, but this statement routes to %s "
                       "(the transaction is still open)",
                       s->node->cfg->name, rt->routes[0].node->cfg->name);
    if (s->node == NULL && (rc = pin(s, route_server(&rt->routes[0]), err)) != 0)
        return rc;
    rc = exec_on_conn(rt, s->conn, params, nparams, out, &broken, err);
    s->wrote |= rc == 0 && k != DAL_SQL_SELECT && k != DAL_SQL_SHOW;
    if (broken) {
        /* the server rolled the transaction back when the connection died */
        err_prefix(err, "transaction aborted (rolled back by the server)");
        end_txn(s, 0);
    }
    return rc;
}

/* BEGIN / COMMIT / ROLLBACK written as SQL. */
static int txn_statement(void *owner, const dal_sql_t *sql, dal_result_t **out, dal_error_t *err)
{
    dal_session_t *s = owner;
    dal_sql_kind_t k = sql->kind;
    int rc = k == DAL_SQL_BEGIN ? begin(s, sql->txn_read_only, err)
             : k == DAL_SQL_COMMIT ? dal_commit(s, err) : dal_rollback(s, err);

    if (rc == 0 && (*out = result_new()) == NULL)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    return rc;
}

/* A statement inside the transaction: on its connection. */
static int run_held(void *owner, dal_stmt_t *st, dal_result_t **out, dal_error_t *err)
{
    return run_in_txn(owner, &st->rt, st->params, st->nparams, out, err);
}

/* How the session's next statement picks its server. */
static dal_select_t session_select(dal_session_t *s)
{
    dal_select_t sel = {.ryw = &s->ryw};

    if (s->in_txn && !s->read_only) {
        sel.flags = DAL_SELECT_MASTER;
    } else if (s->in_txn) {
        /* the first statement picks the server as a read; the rest stay there */
        sel.flags = DAL_SELECT_READ;
        sel.fixed = s->server;
    }
    return sel;
}

/* dal_session_query and dal_session_query_prepared. */
static inline int session_query(dal_session_t *s, const dal_query_opts_t *opts,
                                    dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                                    dal_result_t **out, dal_error_t *err)
{
    dal_stmt_ctx_t ctx = {.cache = s->dal->sql_cache, .sel = session_select(s),
                          .txn_control = txn_statement, .owner = s};
    int rc;

    /* a transaction keeps the snapshot it began on */
    ctx.snap = s->in_txn ? s->snap : snapshot_acquire(s->dal);
    if (s->in_txn) {
        snapshot_ref(ctx.snap);
        ctx.run_held = run_held;
    }
    rc = stmt_execute(&ctx, opts, sql, params, nparams, out, err);
    snapshot_unref(ctx.snap);
    return rc;
}

int dal_session_query(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                      const dal_value_t *params, size_t nparams, dal_result_t **out,
                      dal_error_t *err)
{
    int rc = stmt_args_check("dal_session_query", s, sql, params, nparams, out, err);

    return rc != 0 ? rc : session_query(s, opts, (dal_stmt_text_t){sql, NULL}, params, nparams, out, err);
}

int dal_session_query_prepared(dal_session_t *s, const dal_query_opts_t *opts,
                               const dal_prepared_t *p, const dal_value_t *params,
                               size_t nparams, dal_result_t **out, dal_error_t *err)
{
    int rc = stmt_args_check("dal_session_query_prepared", s, p, params, nparams, out, err);

    return rc != 0 ? rc : session_query(s, opts, (dal_stmt_text_t){NULL, p->sql}, params, nparams, out, err);
}

int dal_session_exec(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                     const dal_value_t *params, size_t nparams, uint64_t *affected_rows,
                     dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = dal_session_query(s, opts, sql, params, nparams, &r, err);

    return result_drop(rc, r, affected_rows);
}
