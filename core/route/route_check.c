/*
 * route_check.c -- what a route must not do: name a table the route's
 * node lacks, write a broadcast table beside a sharded one, change a row's
 * shard key, or run SQL text (a PREPARE, a LOAD DATA) whose tables dal
 * cannot see whole.  See route_int.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "error.h"
#include "route_int.h"
#include "small.h"
#include "sql_lex.h"

static int table_on_node(const dal_table_t *t, const dal_node_t *node)
{
    uint32_t i;

    for (i = 0; i < t->cfg->db_shard_num; i++)
        if (t->nodes[i] == node)
            return 1;
    return 0;
}

/* The SQL text of string token t of text, decoded into a new buffer
 * (*len bytes), or NULL when it cannot be decoded or memory is short. */
static char *string_sql(const char *text, const dal_token_t *t, int no_backslash, size_t *len)
{
    char *out = malloc((size_t)t->len + 1);

    if (out != NULL &&
        sql_decode_string(text + t->off, t->len, no_backslash, out, (size_t)t->len + 1, len) != 0) {
        free(out);
        out = NULL;
    }
    return out;
}

/* sql's first token that is not a comment or a hint, lx then after it. */
static dal_token_t first_word(const dal_sql_t *sql, dal_lexer_t *lx)
{
    dal_token_t t;

    lex_init(lx, sql->text, sql->len, sql->no_backslash);
    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    return t;
}

/* LOAD DATA or LOAD XML. */
static int is_load(const dal_sql_t *sql)
{
    dal_lexer_t lx;
    dal_token_t t = first_word(sql, &lx);

    return tok_eq(sql->text, &t, "LOAD");
}

/* Why table tb does not live wholly on the default datasource, or NULL. */
static const char *not_whole(const router_t *r, const dal_table_t *tb)
{
    if (!snapshot_table_schema(tb, r->schema))
        return "belongs to another schema";
    if (tb->sharded)
        return "is sharded";
    if (tb->cfg->kind == DAL_TABLE_BROADCAST)
        return "is a broadcast table";
    return tb->nodes[0] != r->dflt ? "is not on the default datasource" : NULL;
}

/*
 * A statement dal does not analyse runs unchanged on the default
 * datasource.  If it names a configured table that does not live there
 * whole (sharded, broadcast, or on another datasource), that would be
 * narrower than the statement: refuse it.  Every word is taken for a
 * possible name, so a column called like such a table refuses too.  The
 * statement text of PREPARE ... FROM 'text' and EXECUTE IMMEDIATE 'text'
 * (their strings, sql_text) is checked the same way, once.
 */
static int opaque_names(router_t *r, const char *text, size_t len, int sql_text)
{
    dal_lexer_t lx;
    dal_token_t t;
    char name[256], *inner;
    size_t n;
    int rc;

    lex_init(&lx, text, len, r->sql->no_backslash);
    while ((t = lex_next(&lx)).type != DAL_TOK_EOF) {
        const dal_table_t *tb;
        const char *why;
        if (t.type == DAL_TOK_STRING && sql_text) {
            if ((inner = string_sql(text, &t, r->sql->no_backslash, &n)) == NULL)
                return err_set(r->err, DAL_ENOMEM, "out of memory");
            rc = opaque_names(r, inner, n, 0);
            free(inner);
            if (rc != 0)
                return rc;
            continue;
        }
        if (t.type != DAL_TOK_IDENT && t.type != DAL_TOK_QIDENT)
            continue;
        n = ident_unquote(text, &t, name, sizeof name);
        if (n >= sizeof name || (tb = snapshot_table(r->snap, name, n)) == NULL)
            continue;
        if ((why = not_whole(r, tb)) == NULL)
            continue;
        if (is_load(r->sql))
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "LOAD DATA names table %s, which %s: dal sends a LOAD DATA unchanged "
                           "to the default datasource and does not route a file's rows one by "
                           "one.  Insert the rows with INSERT, or load each physical table with "
                           "/*+ dal datasource=NAME raw */",
                           tb->cfg->name, why);
        if (r->sql->compound)
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "a compound statement names table %s, which %s: dal runs a compound "
                           "statement whole on the default datasource, never a part of it "
                           "elsewhere.  Send its statements one at a time, or run it on each "
                           "datasource with /*+ dal datasource=NAME raw */",
                           tb->cfg->name, why);
        return err_set(r->err, DAL_EUNSUPPORTED,
                       "dal does not analyse this kind of statement, and it names table %s, "
                       "which is not wholly on the default datasource: it would run "
                       "unchanged there.  Send it to each datasource as written with "
                       "/*+ dal datasource=NAME raw */",
                       tb->cfg->name);
    }
    return 0;
}

/* A statement whose strings are SQL: PREPARE (sql.h's pins say it) or
 * MariaDB's EXECUTE IMMEDIATE. */
static int runs_sql_text(const dal_sql_t *sql)
{
    dal_lexer_t lx;
    dal_token_t t;

    if (sql->pins & DAL_PIN_PREPARE)
        return 1;
    t = first_word(sql, &lx);
    if (!tok_eq(sql->text, &t, "EXECUTE"))
        return 0;
    do
        t = lex_next(&lx);
    while (t.type == DAL_TOK_COMMENT);
    return tok_eq(sql->text, &t, "IMMEDIATE");
}

int route_check_opaque(router_t *r)
{
    return opaque_names(r, r->sql->text, r->sql->len, runs_sql_text(r->sql));
}

/* An UPDATE that sets a shard key would leave the row on the wrong shard. */
int route_check_update_key(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t i, j;

    for (i = 0; i < sql->ntrefs; i++) {
        const dal_table_t *t = r->rt->tables[i];
        if (t == NULL || !t->sharded)
            continue;
        for (j = 0; j < sql->nset_columns; j++)
            if (strcasecmp(sql->set_columns[j], t->cfg->shard_key) == 0)
                return err_set(r->err, DAL_EUNSUPPORTED,
                               "UPDATE may not change %s, the shard key of %s: the row would "
                               "stay on the wrong shard (delete it and insert it anew)",
                               t->cfg->shard_key, t->cfg->name);
    }
    return 0;
}

/* Unsharded and broadcast tables named next to sharded ones must exist on
 * every node the statement runs on. */
int route_check_others(router_t *r)
{
    dal_routing_t *rt = r->rt;
    size_t i, k;

    for (i = 0; i < r->sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t == NULL || t->sharded)
            continue;
        for (k = 0; k < rt->nroutes; k++)
            if (!table_on_node(t, rt->routes[k].node))
                return err_set(r->err, DAL_EUNSUPPORTED,
                               "table %s is not on datasource %s, where %s's rows for this "
                               "statement are", t->cfg->name, rt->routes[k].node->cfg->name,
                               rt->primary->cfg->name);
        if (t->cfg->kind == DAL_TABLE_BROADCAST && sql_kind_writes(r->sql->kind) &&
            r->sql->trefs[i].role != DAL_TREF_FROM)
            return err_set(r->err, DAL_EUNSUPPORTED,
                           "a statement cannot write broadcast table %s together with sharded "
                           "table %s", t->cfg->name, rt->primary->cfg->name);
    }
    return 0;
}
