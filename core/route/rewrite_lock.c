/*
 * rewrite_lock.c -- LOCK TABLES of configured tables, node by node: the
 * statement a session runs on one node, locking there the physical tables
 * of each table it lists that the node holds (rewrite.h).
 *
 * The list is read token by token: each item is a table name (a schema
 * qualifier is dropped for a configured table, as rewrite_route does),
 * then its alias and lock type, copied as written, up to the next comma.
 */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "rewrite.h"
#include "sql_lex.h"

/* One item of the list: the table's name token and the span after it. */
typedef struct lock_item {
    dal_token_t first;       /* the item's first token (a qualifier or the name) */
    dal_token_t name;
    uint32_t rest_off, rest_len; /* alias and lock type */
} lock_item_t;

/* The next token that is not a comment or a hint. */
static dal_token_t next_word(dal_lexer_t *lx)
{
    dal_token_t t;

    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    return t;
}

static int is_punct(const char *sql, const dal_token_t *t, char c)
{
    return t->type == DAL_TOK_PUNCT && t->len == 1 && sql[t->off] == c;
}

/* sql's first words are `verb TABLE` or `verb TABLES`; lx then after them. */
static int starts_with(const dal_sql_t *sql, const char *verb, dal_lexer_t *lx)
{
    dal_token_t t;

    lex_init(lx, sql->text, sql->len, sql->no_backslash);
    t = next_word(lx);
    if (!tok_eq(sql->text, &t, verb))
        return 0;
    t = next_word(lx);
    return tok_eq(sql->text, &t, "TABLES") || tok_eq(sql->text, &t, "TABLE");
}

int rewrite_is_unlock_tables(const dal_sql_t *sql)
{
    dal_lexer_t lx;
    dal_token_t t;

    if (sql->kind != DAL_SQL_OTHER || !starts_with(sql, "UNLOCK", &lx))
        return 0;
    t = next_word(&lx);
    return t.type == DAL_TOK_EOF || is_punct(sql->text, &t, ';');
}

/* The next item of the list into *it: 1, 0 at the end, -1 when the text
 * is not a list dal reads (an executable comment, a stray token). */
static int next_item(const dal_sql_t *sql, dal_lexer_t *lx, lock_item_t *it)
{
    dal_token_t t = next_word(lx), end;

    if (t.type == DAL_TOK_EOF || is_punct(sql->text, &t, ';'))
        return 0;
    if (t.type != DAL_TOK_IDENT && t.type != DAL_TOK_QIDENT)
        return -1;
    it->first = it->name = t;
    t = next_word(lx);
    if (is_punct(sql->text, &t, '.')) {
        it->name = next_word(lx);
        if (it->name.type != DAL_TOK_IDENT && it->name.type != DAL_TOK_QIDENT)
            return -1;
        t = next_word(lx);
    }
    it->rest_off = it->name.off + it->name.len;
    end = t;
    while (t.type != DAL_TOK_EOF && !is_punct(sql->text, &t, ',') &&
           !is_punct(sql->text, &t, ';')) {
        if (t.type != DAL_TOK_IDENT && t.type != DAL_TOK_QIDENT && t.type != DAL_TOK_NUMBER)
            return -1;
        end = t;
        t = next_word(lx);
    }
    if (end.off == t.off)  /* no lock type */
        return -1;
    it->rest_len = end.off + end.len - it->rest_off;
    return 1;
}

/* The configured table the item names, or NULL. */
static const dal_table_t *item_table(const dal_snapshot_t *snap, const dal_sql_t *sql,
                                     const lock_item_t *it)
{
    char name[256];
    size_t n = ident_unquote(sql->text, &it->name, name, sizeof name);

    return n < sizeof name ? snapshot_table(snap, name, n) : NULL;
}

/* The table does not live wholly on the default datasource. */
static int spread(const dal_snapshot_t *snap, const dal_table_t *t)
{
    return t->sharded || t->cfg->kind == DAL_TABLE_BROADCAST || t->nodes[0] != snap->default_node;
}

static void put_sep(dal_buf_t *out)
{
    buf_puts(out, out->len == 0 ? "LOCK TABLES " : ", ");
}

/* The item's locks on node. */
static void put_item(const dal_snapshot_t *snap, const dal_sql_t *sql, const lock_item_t *it,
                     const dal_table_t *t, const dal_node_t *node, dal_buf_t *out)
{
    const char *rest = sql->text + it->rest_off;
    char phys[300];
    uint32_t db, pos;

    if (t == NULL) {  /* not configured: the default datasource's, as written */
        if (node == snap->default_node) {
            put_sep(out);
            buf_append(out, sql->text + it->first.off, it->rest_off + it->rest_len - it->first.off);
        }
        return;
    }
    for (db = 0; db < t->cfg->db_shard_num; db++) {
        if (t->nodes[db] != node)
            continue;
        for (pos = db * t->tables_per_db; t->sharded && pos < (db + 1) * t->tables_per_db; pos++) {
            put_sep(out);
            buf_putc(out, '`');
            buf_puts(out, physical_name(t, (int32_t)pos, phys, sizeof phys));
            buf_putc(out, '`');
            buf_append(out, rest, it->rest_len);
        }
        if (!t->sharded) {
            put_sep(out);
            buf_putc(out, '`');
            buf_puts(out, t->cfg->name);
            buf_putc(out, '`');
            buf_append(out, rest, it->rest_len);
        }
    }
}

int rewrite_lock_tables(const dal_snapshot_t *snap, const dal_sql_t *sql, const dal_node_t *node,
                        dal_buf_t *out, dal_error_t *err)
{
    dal_lexer_t lx;
    lock_item_t it;
    const dal_table_t *t;
    int rc, any = 0;

    if (sql->kind != DAL_SQL_OTHER || !(sql->pins & DAL_PIN_TABLE_LOCK) ||
        !starts_with(sql, "LOCK", &lx))
        return 1;
    buf_reset(out);
    while ((rc = next_item(sql, &lx, &it)) == 1) {
        t = item_table(snap, sql, &it);
        any |= t != NULL && spread(snap, t);
        put_item(snap, sql, &it, t, node, out);
    }
    if (rc < 0 || !any) {
        buf_reset(out);
        return 1;  /* as written, on the default datasource (route_check's rules) */
    }
    return out->oom ? err_set(err, DAL_ENOMEM, "out of memory") : 0;
}
