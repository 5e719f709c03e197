/*
 * syntax.c -- a server's parser asked about a text, nothing run.  See
 * syntax.h.
 */
#include <errmsg.h>

#include "conn.h"
#include "error.h"
#include "pool.h"
#include "syntax.h"

/* The server's parser refused the text: these, and only these, say so. */
static int parse_error(unsigned int e)
{
    return e == 1064 /* ER_PARSE_ERROR */ || e == 1149 /* ER_SYNTAX_ERROR */;
}

int exec_syntax_error(dal_node_t *node, const char *text, size_t len, dal_error_t *err)
{
    dal_error_t mine = {0};
    dal_conn_t *c;
    MYSQL_STMT *st;
    int reused, found = 0;
    unsigned int e;

    if (node == NULL || server_acquire(&node->master, &c, &reused, &mine) != 0)
        return 0;
    if ((st = mysql_stmt_init(&c->mysql)) == NULL) {
        server_release(&node->master, c, 1);
        return 0;
    }
    if (mysql_stmt_prepare(st, text, (unsigned long)len) != 0 &&
        parse_error(e = mysql_stmt_errno(st))) {
        err_server(err, DAL_ESERVER, e, mysql_stmt_sqlstate(st),
                   "datasource %s (%s): error %u (%s): %s", c->ds->name, c->url->display, e,
                   mysql_stmt_sqlstate(st), mysql_stmt_error(st));
        found = 1;
    }
    mysql_stmt_close(st);
    e = mysql_errno(&c->mysql);
    server_release(&node->master, c, !(e >= CR_MIN_ERROR && e <= CR_MAX_ERROR));
    return found;
}
