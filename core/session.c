/*
 * session.c -- sessions and single-node transactions.
 *
 * A transaction keeps one snapshot reference and one connection from its
 * first statement to COMMIT/ROLLBACK, so a reload or another thread never
 * sees its connection and every statement of it runs on the same node.
 */
#include <stdlib.h>
#include <string.h>

#include "dal_int.h"
#include "error.h"
#include "exec.h"
#include "pool.h"
#include "result.h"
#include "route.h"

struct dal_session {
    dal_t *dal;             /* borrowed */
    int in_txn;
    dal_snapshot_t *snap;   /* one reference while in_txn */
    dal_node_t *node;       /* the transaction's node, once its first statement ran */
    dal_conn_t *conn;       /* held from the first statement to the end */
};

int dal_session_open(dal_t *dal, dal_session_t **out, dal_error_t *err)
{
    dal_session_t *s;

    if (out == NULL || dal == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_session_open: NULL argument");
    s = calloc(1, sizeof *s);
    *out = s;
    if (s == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    s->dal = dal;
    return 0;
}

/* Leave the transaction: give the connection back, drop the snapshot. */
static void end_txn(dal_session_t *s, int reusable)
{
    if (s->conn != NULL) {
        /* several statements ran on it: the next borrower needs a reset */
        dal_conn_mark_dirty(s->conn);
        dal_node_release(s->node, s->conn, reusable);
    }
    dal_snapshot_unref(s->snap);
    s->conn = NULL;
    s->node = NULL;
    s->snap = NULL;
    s->in_txn = 0;
}

/* Send COMMIT or ROLLBACK on the transaction's connection. */
static int finish(dal_session_t *s, const char *word, dal_error_t *err)
{
    int rc = 0, reusable = 1;

    if (!s->in_txn)
        return 0; /* as in MySQL: nothing to end is not an error */
    if (s->conn != NULL && mysql_real_query(&s->conn->mysql, word, strlen(word)) != 0) {
        rc = dal_conn_error(s->conn, DAL_ESERVER, err);
        reusable = 0;
    }
    end_txn(s, reusable);
    return rc;
}

int dal_begin(dal_session_t *s, dal_error_t *err)
{
    if (s == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_begin: NULL session");
    if (s->in_txn)
        return dal_err_set(err, DAL_ESTATE, "a transaction is already open (commit or roll it "
                                            "back first)");
    s->snap = dal_snapshot_acquire(s->dal);
    s->in_txn = 1;
    return 0;
}

int dal_commit(dal_session_t *s, dal_error_t *err)
{
    return s ? finish(s, "COMMIT", err) : dal_err_set(err, DAL_EINVAL, "NULL session");
}

int dal_rollback(dal_session_t *s, dal_error_t *err)
{
    return s ? finish(s, "ROLLBACK", err) : dal_err_set(err, DAL_EINVAL, "NULL session");
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

/* The first statement of a transaction pins its node and opens the
 * transaction there. */
static int pin_node(dal_session_t *s, dal_node_t *node, dal_error_t *err)
{
    int reused, rc = dal_node_acquire(node, &s->conn, &reused, err);
    static const char start[] = "START TRANSACTION";

    if (rc != 0)
        return rc;
    if (mysql_real_query(&s->conn->mysql, start, sizeof start - 1) != 0) {
        rc = dal_conn_error(s->conn, DAL_ESERVER, err);
        dal_node_release(node, s->conn, 0);
        s->conn = NULL;
        return rc;
    }
    s->node = node;
    return 0;
}

/* Check the routes fit the transaction, then run them on its connection. */
static int run_in_txn(dal_session_t *s, const dal_routing_t *rt, const dal_value_t *params,
                      size_t nparams, dal_result_t **out, dal_error_t *err)
{
    int broken = 0, rc;

    if (rt->sql->kind == DAL_SQL_DDL)
        return dal_err_set(err, DAL_EUNSUPPORTED,
                           "DDL inside a transaction would commit it implicitly; commit first");
    if (rt->nroutes != 1)
        return dal_err_set(err, DAL_EROUTE,
                           "a transaction stays on one data node, but this statement goes to %zu "
                           "nodes%s%s (the transaction is still open)",
                           rt->nroutes, s->node ? "; the transaction is on " : "",
                           s->node ? s->node->cfg->name : "");
    if (s->node != NULL && rt->routes[0].node != s->node)
        return dal_err_set(err, DAL_EROUTE,
                           "the transaction is on datasource %s, but this statement routes to %s "
                           "(the transaction is still open)",
                           s->node->cfg->name, rt->routes[0].node->cfg->name);
    if (s->node == NULL && (rc = pin_node(s, rt->routes[0].node, err)) != 0)
        return rc;
    rc = dal_exec_on_conn(rt, s->conn, params, nparams, out, &broken, err);
    if (broken) {
        /* the server rolled the transaction back when the connection died */
        dal_err_prefix(err, "transaction aborted (rolled back by the server)");
        end_txn(s, 0);
    }
    return rc;
}

/* BEGIN / COMMIT / ROLLBACK written as SQL. */
static int txn_statement(dal_session_t *s, dal_sql_kind_t k, dal_result_t **out,
                         dal_error_t *err)
{
    int rc = k == DAL_SQL_BEGIN ? dal_begin(s, err)
             : k == DAL_SQL_COMMIT ? dal_commit(s, err) : dal_rollback(s, err);

    if (rc == 0 && (*out = dal_result_new()) == NULL)
        rc = dal_err_set(err, DAL_ENOMEM, "out of memory");
    return rc;
}

int dal_session_query(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                      const dal_value_t *params, size_t nparams, dal_result_t **out,
                      dal_error_t *err)
{
    dal_snapshot_t *snap;
    dal_stmt_t st;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (s == NULL || sql == NULL || out == NULL || (nparams > 0 && params == NULL))
        return dal_err_set(err, DAL_EINVAL, "dal_session_query: NULL argument");
    /* a transaction keeps the snapshot it began on */
    snap = s->in_txn ? s->snap : dal_snapshot_acquire(s->dal);
    if (s->in_txn)
        dal_snapshot_ref(snap);
    rc = dal_stmt_prepare(s->dal, snap, opts, sql, params, nparams, &st, err);
    if (rc == 0 && dal_is_txn_control(st.sql->kind))
        rc = txn_statement(s, st.sql->kind, out, err);
    else if (rc == 0 && s->in_txn) {
        rc = run_in_txn(s, &st.rt, st.params, st.nparams, out, err);
        dal_stmt_emit(&st, rc, *out);
    }
    else if (rc == 0)
        rc = dal_stmt_run(&st, snap, out, err);
    if (rc == 0 && s->in_txn)
        dal_stmt_give_ids(&st, *out);
    dal_stmt_clear(&st);
    dal_snapshot_unref(snap);
    return rc;
}

int dal_session_exec(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                     const dal_value_t *params, size_t nparams, uint64_t *affected_rows,
                     dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = dal_session_query(s, opts, sql, params, nparams, &r, err);

    return dal_result_drop(rc, r, affected_rows);
}
