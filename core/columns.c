/*
 * columns.c -- the column order of a logical table, for an INSERT without a
 * column list.  See columns.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "columns.h"
#include "exec.h"
#include "rewrite.h"
#include "sql_lex.h"

static const char columns_sql[] =
    "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION";

/* The names of r's rows packed into one block; NULL without memory. */
static dal_columns_t *pack(char **names, size_t n)
{
    size_t i, size = sizeof(dal_columns_t) + n * sizeof(char *);
    dal_columns_t *c;
    char *p;

    for (i = 0; i < n; i++)
        size += strlen(names[i]) + 1;
    if ((c = malloc(size)) == NULL)
        return NULL;
    c->n = n;
    p = (char *)&c->names[n];
    for (i = 0; i < n; i++) {
        size_t len = strlen(names[i]) + 1;
        c->names[i] = memcpy(p, names[i], len);
        p += len;
    }
    return c;
}

/* Ask the server of t's first physical table for its columns. */
static int learn(const dal_table_t *t, dal_columns_t **out, dal_error_t *err)
{
    char phys[256], **names = NULL;
    const char *name = t->sharded ? physical_name(t, 0, phys, sizeof phys) : t->cfg->name;
    dal_value_t p = dal_str(name);
    dal_result_t *r = NULL;
    size_t n = 0, cap = 0, i;
    int rc = exec_direct(t->nodes[0], columns_sql, &p, 1, &r, err);

    while (rc == 0 && (rc = dal_result_next(r, err)) == 1) {
        rc = 0;
        const char *col = dal_result_text(r, 0, NULL);
        char **grown;
        if (n == cap && (grown = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *names)))
            names = grown;
        if (n >= cap || col == NULL || (names[n] = strdup(col)) == NULL) {
            rc = err_set(err, DAL_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    if (rc == 0 && n == 0)
        rc = err_set(err, DAL_EROUTE, "table %s: no table %s on datasource %s, so dal cannot "
                     "learn its columns for an INSERT without a column list",
                     t->cfg->name, name, t->nodes[0]->cfg->name);
    if (rc == 0 && (*out = pack(names, n)) == NULL)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    else if (rc < 0)
        err_prefix(err, "table %s: reading its columns for an INSERT without a column list",
                   t->cfg->name);
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    dal_result_free(r);
    return rc < 0 ? rc : 0;
}

int table_columns_get(dal_table_t *t, const dal_columns_t **out, dal_error_t *err)
{
    dal_columns_t *c = atomic_load(&t->columns), *expected = NULL;
    int rc;

    if (c == NULL) {
        if ((rc = learn(t, &c, err)) != 0)
            return rc;
        /* two threads may race here: the first one's list stays */
        if (!atomic_compare_exchange_strong(&t->columns, &expected, c)) {
            free(c);
            c = expected;
        }
    }
    *out = c;
    return 0;
}

void table_columns_free(dal_table_t *t)
{
    free(atomic_load(&t->columns));
    atomic_store(&t->columns, NULL);
}

/* The INSERT's target table reference, or NULL. */
static const struct dal_sql_tref *into(const dal_sql_t *sql)
{
    size_t i;

    for (i = 0; i < sql->ntrefs; i++)
        if (sql->trefs[i].role == DAL_TREF_INTO)
            return &sql->trefs[i];
    return NULL;
}

/* A shard value given with the statement (option or hint). */
static int has_shard_value(const dal_sql_t *sql, const dal_query_opts_t *opts)
{
    size_t i;

    if (opts != NULL && opts->shard_value != NULL)
        return 1;
    for (i = 0; i < sql->nhints; i++)
        if (strcmp(sql->hints[i].key, "shard_value") == 0)
            return 1;
    return 0;
}

int columns_needed(const dal_snapshot_t *snap, const dal_sql_t *sql,
                   const dal_query_opts_t *opts)
{
    const struct dal_sql_tref *tr;
    const dal_table_t *t;

    if ((sql->kind != DAL_SQL_INSERT && sql->kind != DAL_SQL_REPLACE) || sql->ncolumns > 0 ||
        sql->insert_set || (tr = into(sql)) == NULL)
        return 0;
    t = snapshot_table(snap, tr->name, strlen(tr->name));
    /* a shard value routes the rows without reading them */
    return t != NULL && (t->cfg->id_column != NULL || (t->sharded && !has_shard_value(sql, opts)));
}

int columns_learn_sources(const dal_snapshot_t *snap, const dal_sql_t *sql, dal_error_t *err)
{
    const dal_columns_t *c;
    size_t i;
    int rc = 0;

    if (!sql->insert_select || sql->nitems != 1 || !sql->items[0].star)
        return 0;
    for (i = 0; rc == 0 && i < sql->ntrefs; i++) {
        dal_table_t *t;
        if (sql->trefs[i].role == DAL_TREF_INTO)
            continue;
        t = (dal_table_t *)snapshot_table(snap, sql->trefs[i].name, strlen(sql->trefs[i].name));
        if (t != NULL && t->sharded)
            rc = table_columns_get(t, &c, err);
    }
    return rc;
}

/* Where the column list goes: after the target's name and its PARTITION
 * (...) clause, before whatever comes next. */
static uint32_t list_at(const dal_sql_t *sql, const struct dal_sql_tref *tr)
{
    dal_lexer_t lx;
    dal_token_t t;
    int depth = 0, partition = 0;

    lex_init(&lx, sql->text, sql->len);
    lx.pos = tr->off + tr->len;
    for (;;) {
        t = lex_next(&lx);
        if (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT)
            continue;
        if (depth == 0 && !partition && t.type == DAL_TOK_IDENT &&
            tok_eq(sql->text, &t, "PARTITION")) {
            partition = 1;
            continue;
        }
        if (t.type == DAL_TOK_PUNCT && sql->text[t.off] == '(' && partition) {
            depth++;
            continue;
        }
        if (t.type == DAL_TOK_PUNCT && sql->text[t.off] == ')' && depth > 0) {
            if (--depth == 0)
                partition = 0;
            continue;
        }
        if (depth > 0 && t.type != DAL_TOK_EOF && t.type != DAL_TOK_ERROR)
            continue;
        return t.type == DAL_TOK_EOF ? (uint32_t)sql->len : t.off;
    }
}

char *columns_add_list(const dal_snapshot_t *snap, const dal_sql_t *sql, size_t *len,
                       dal_error_t *err)
{
    const struct dal_sql_tref *tr = into(sql);
    dal_table_t *t = (dal_table_t *)snapshot_table(snap, tr->name, strlen(tr->name));
    const dal_columns_t *c;
    dal_buf_t list = DAL_BUF_INIT, b = DAL_BUF_INIT;
    dal_edit_t edit;
    size_t i;
    const char *p;
    char *out;

    /* the table's lazily learned list is the one field that changes */
    if (table_columns_get(t, &c, err) != 0)
        return NULL;
    edit.off = list_at(sql, tr);
    edit.len = 0;
    buf_puts(&list, edit.off > 0 && sql->text[edit.off - 1] == ' ' ? "(" : " (");
    for (i = 0; i < c->n; i++) {
        buf_puts(&list, i ? ", `" : "`");
        for (p = c->names[i]; *p; p++) { /* a backquote in a name is doubled */
            if (*p == '`')
                buf_putc(&list, '`');
            buf_putc(&list, *p);
        }
        buf_putc(&list, '`');
    }
    buf_puts(&list, ") ");
    if ((edit.text = buf_steal(&list)) == NULL) {
        err_set(err, DAL_ENOMEM, "out of memory");
        return NULL;
    }
    rewrite_text(sql->text, sql->len, &edit, 1, &b);
    free(edit.text);
    *len = b.len;
    if ((out = buf_steal(&b)) == NULL)
        err_set(err, DAL_ENOMEM, "out of memory");
    return out;
}
