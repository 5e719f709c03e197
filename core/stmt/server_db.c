/*
 * server_db.c -- a session's database of [dal] server_schemas' datasource
 * (see server_db.h).
 */
#include <string.h>

#include "conn.h"
#include "error.h"
#include "server_db.h"
#include "sql.h"
#include "sql_lex.h"

/* p's pin v: DAL_PIN_SCHEMA off; given back when nothing else holds it
 * and it is not busy. */
static void unhold(dal_pins_t *p, dal_pin_t *v, const dal_conn_t *busy)
{
    v->reasons &= ~(unsigned int)DAL_PIN_SCHEMA;
    if (v->reasons == 0 && (v->conn == NULL || v->conn != busy))
        pins_drop(p, v);
}

dal_pin_t *server_db_pin(dal_pins_t *p, const dal_snapshot_t *snap)
{
    dal_pin_t *v = snap->server_node != NULL ? pins_find(p, snap->server_node) : NULL;

    return v != NULL && (v->reasons & DAL_PIN_SCHEMA) ? v : NULL;
}

int server_db_select(dal_pins_t *p, dal_snapshot_t *snap, const char *name, dal_error_t *err)
{
    dal_node_t *node = snap->server_node;
    dal_pin_t *v = pins_find(p, node);
    int rc, had = v != NULL && (v->reasons & DAL_PIN_SCHEMA);

    if (v == NULL && (rc = pins_take(p, snap, node, DAL_PIN_SCHEMA, &v, err)) != 0)
        return rc;
    if (v->conn == NULL)
        return err_set(err, DAL_ESTATE, "the session's connection to datasource %s was lost "
                       "with its state; reset the session", node->cfg->name);
    v->reasons |= DAL_PIN_SCHEMA;
    /* the server's 1049 leaves the connection's database as it was */
    if ((rc = conn_use_db(v->conn, name, err)) != 0 && !had)
        unhold(p, v, NULL);
    return rc;
}

void server_db_leave(dal_pins_t *p, const dal_conn_t *busy)
{
    size_t i = p->n;

    while (i-- > 0) {
        dal_pin_t *v = &p->v[i];
        if (!(v->reasons & DAL_PIN_SCHEMA))
            continue;
        if (v->conn != NULL && conn_use_db(v->conn, NULL, NULL) != 0)
            pins_lost(v);  /* its other state is gone with it: its statements fail */
        unhold(p, v, busy);
    }
}

/* The next token of lx that is not a comment. */
static dal_token_t word_after(dal_lexer_t *lx)
{
    dal_token_t t;

    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    return t;
}

int server_db_drops(dal_stmt_text_t st, const char *db)
{
    const char *sql = st.text != NULL ? st.text : st.prepared->text;
    dal_lexer_t lx;
    dal_token_t t;
    char name[256];

    lex_init(&lx, sql, st.text != NULL ? st.len : st.prepared->len,
             st.text != NULL ? st.no_backslash : st.prepared->no_backslash);
    t = word_after(&lx);
    if (!tok_eq(sql, &t, "DROP"))
        return 0;
    t = word_after(&lx);
    if (!tok_eq(sql, &t, "DATABASE") && !tok_eq(sql, &t, "SCHEMA"))
        return 0;
    t = word_after(&lx);
    if (tok_eq(sql, &t, "IF")) {
        (void)word_after(&lx);  /* EXISTS */
        t = word_after(&lx);
    }
    return (t.type == DAL_TOK_IDENT || t.type == DAL_TOK_QIDENT) &&
           ident_unquote(sql, &t, name, sizeof name) < sizeof name && strcmp(name, db) == 0;
}
