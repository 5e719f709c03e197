/*
 * exec.c -- running physical statements on data nodes.
 */
#include <errmsg.h>
#include <string.h>

#include "error.h"
#include "exec.h"
#include "result.h"
#include "rewrite.h"
#include "value.h"

/* Client-side errors mean the connection can no longer be trusted. */
static int conn_is_broken(unsigned int e)
{
    return e >= CR_MIN_ERROR && e <= CR_MAX_ERROR;
}

/* A pooled connection the server closed while idle fails with "gone
 * away"/"lost".  Only then, and only for reads, is running the statement
 * again on a fresh connection safe. */
static int retryable(unsigned int e, int reused, int read_only)
{
    return reused && read_only && (e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST);
}

/* Build route r's SQL for connection c (escaping follows c's sql_mode),
 * send it, and collect what it returns into res. */
static int run_route(const dal_routing_t *rt, size_t r, const dal_value_t *params,
                     size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err)
{
    dal_node_t *node = rt->routes[r].node;
    int read_only = rt->sql->kind == DAL_SQL_SELECT || rt->sql->kind == DAL_SQL_SHOW;
    dal_conn_t *c = NULL;
    MYSQL_RES *rows;
    int reused, rc, attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        rc = dal_connpool_acquire(&node->pool, &c, &reused, err);
        if (rc != 0)
            return rc;
        dal_buf_reset(sql);
        rc = dal_rewrite(rt, r, params, nparams, c->no_backslash_escapes, sql, err);
        if (rc != 0) {
            dal_connpool_release(&node->pool, c, 1);
            return rc;
        }
        if (mysql_real_query(&c->mysql, sql->data, (unsigned long)sql->len) == 0)
            break;
        if (attempt == 0 && retryable(mysql_errno(&c->mysql), reused, read_only)) {
            dal_connpool_release(&node->pool, c, 0);
            continue;
        }
        rc = dal_conn_error(c, DAL_ESERVER, err);
        dal_connpool_release(&node->pool, c, !conn_is_broken(mysql_errno(&c->mysql)));
        return rc;
    }
    if (mysql_field_count(&c->mysql) == 0) {
        res->affected += mysql_affected_rows(&c->mysql);
        res->insert_id = mysql_insert_id(&c->mysql);
        dal_connpool_release(&node->pool, c, 1);
        return 0;
    }
    rows = mysql_store_result(&c->mysql);
    if (rows == NULL) {
        rc = dal_conn_error(c, DAL_ESERVER, err);
        dal_connpool_release(&node->pool, c, 0);
        return rc;
    }
    dal_connpool_release(&node->pool, c, 1);
    return dal_result_add(res, rows, node->cfg->name, err);
}

int dal_exec_routes(const dal_routing_t *rt, const dal_value_t *params, size_t nparams,
                    dal_result_t **out, dal_error_t *err)
{
    dal_result_t *res = dal_result_new();
    dal_buf_t sql = DAL_BUF_INIT;
    size_t r;
    int rc = 0;

    *out = NULL;
    if (res == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (r = 0; r < rt->nroutes; r++) {
        rc = run_route(rt, r, params, nparams, &sql, res, err);
        if (rc != 0)
            goto done;
        res->nroutes++;
    }
done:
    dal_buf_free(&sql);
    if (rc != 0) {
        dal_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int dal_exec_direct(dal_node_t *node, const char *sql, const dal_value_t *params,
                    size_t nparams, dal_result_t **out, dal_error_t *err)
{
    dal_routing_t rt;
    dal_route_t route;
    dal_sql_t *s = NULL;
    char msg[256];
    int rc;

    *out = NULL;
    if (dal_sql_analyse(sql, strlen(sql), &s, msg, sizeof msg) != 0)
        return dal_err_set(err, DAL_ESQL, "%s", msg);
    /* one route, no table rewritten: only the ? placeholders are filled */
    memset(&rt, 0, sizeof rt);
    rt.sql = s;
    rt.routes = &route;
    rt.nroutes = 1;
    route.node = node;
    route.pos = NULL;
    rc = dal_exec_routes(&rt, params, nparams, out, err);
    dal_sql_free(s);
    return rc;
}
