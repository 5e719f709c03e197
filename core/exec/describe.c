/*
 * describe.c -- a route's columns from a server's prepare, nothing run.
 * See describe.h.
 */
#include <errmsg.h>
#include <stdlib.h>

#include "describe.h"
#include "error.h"
#include "rewrite.h"

/* Templates with more ? than this are written as text with literals. */
#define DESCRIBE_MAX_PARAMS 512

/* No rows: the source of a described result. */
typedef struct empty_src {
    dal_rowsrc_t base;
} empty_src_t;

static int empty_fetch(dal_rowsrc_t *s, dal_error_t *err)
{
    (void)err;
    s->ended = 1;
    return 0;
}

static void empty_close(dal_rowsrc_t *s, int ok)
{
    (void)ok;
    free(s);
}

static const dal_rowsrc_ops_t empty_ops = {empty_fetch, empty_close, NULL};

/* Route r's SQL into sql: the template when it can stand for the
 * statement, else the text with the parameters as literals. */
static int describe_sql(const dal_routing_t *rt, size_t r, const dal_value_t *params,
                        size_t nparams, int no_backslash, dal_buf_t *sql, dal_error_t *err)
{
    uint32_t room[DESCRIBE_MAX_PARAMS];
    dal_template_t tpl = {room, 0, DESCRIBE_MAX_PARAMS};

    buf_reset(sql);
    if (rt->lit_text == NULL && rewrite_route_template(rt, r, nparams, sql, &tpl, NULL) == 0 &&
        !sql->oom)
        return 0;
    buf_reset(sql);
    return rewrite_route(rt, r, params, nparams, no_backslash, sql, err);
}

/* The statement's columns (if any) into res as a source without rows. */
static int add_columns(MYSQL_STMT *st, const dal_routing_t *rt, size_t r, dal_result_t *res,
                       dal_error_t *err)
{
    unsigned int n = mysql_stmt_field_count(st);
    MYSQL_RES *meta;
    empty_src_t *e;
    int rc;

    if (n == 0)
        return 0;
    if ((meta = mysql_stmt_result_metadata(st)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if ((e = calloc(1, sizeof *e)) == NULL) {
        mysql_free_result(meta);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    e->base.ops = &empty_ops;
    /* the columns are copied before the handle (which owns them) closes */
    rc = result_add_source(res, &e->base, mysql_fetch_fields(meta), mysql_num_fields(meta),
                           rt->routes[r].node->cfg->name, err);
    mysql_free_result(meta);
    return rc;
}

int describe_on(const dal_routing_t *rt, size_t r, dal_conn_t *c, const dal_value_t *params,
                size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err)
{
    MYSQL_STMT *st;
    int rc = describe_sql(rt, r, params, nparams, c->no_backslash_escapes, sql, err);

    if (rc != 0)
        return rc;
    if ((st = mysql_stmt_init(&c->mysql)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if (mysql_stmt_prepare(st, sql->data, (unsigned long)sql->len) != 0) {
        /* the library leaves a server's error and a lost connection on
         * the connection too: conn_error words it as for text */
        (void)conn_note_stmt_error(c, mysql_stmt_errno(st));
        rc = mysql_errno(&c->mysql) != 0
                 ? conn_error(c, DAL_ESERVER, err)
                 : err_server(err, DAL_ESERVER, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
                              "datasource %s (%s): error %u (%s): %s", c->ds->name,
                              c->url->display, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
                              mysql_stmt_error(st));
        mysql_stmt_close(st);
        return rc;
    }
    rc = add_columns(st, rt, r, res, err);
    if (rc == 0)
        result_add_end(res, 0, c->mysql.server_status, 0);
    mysql_stmt_close(st);
    return rc;
}
