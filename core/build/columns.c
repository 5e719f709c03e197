/*
 * columns.c -- the column order of a logical table, for an INSERT without a
 * column list.  See columns.h.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "columns.h"
#include "exec.h"
#include "route.h"
#include "rewrite.h"
#include "sql_lex.h"

static const char columns_sql[] =
    "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION";

/* names[0..n) packed into one block; NULL without memory. */
static dal_columns_t *pack(char **names, size_t n)
{
    size_t i, size = sizeof(dal_columns_t) + n * sizeof(char *);
    dal_columns_t *c;
    char *p;

    for (i = 0; i < n; i++)
        size += strlen(names[i]) + 1;
    if ((c = malloc(size)) == NULL)
        return NULL;
    c->next = NULL;
    c->n = n;
    p = (char *)&c->names[n];
    for (i = 0; i < n; i++) {
        size_t len = strlen(names[i]) + 1;
        c->names[i] = memcpy(p, names[i], len);
        p += len;
    }
    return c;
}

/* Whether a and b name the same columns in the same order (names as the
 * server spells them). */
static int same_names(char *const *a, size_t na, char *const *b, size_t nb)
{
    size_t i;

    if (na != nb)
        return 0;
    for (i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

/* names[0..n) as one of t's lists: the one learned before with the same
 * names, else a new one kept with t.  NULL without memory. */
static dal_columns_t *keep(dal_table_t *t, char **names, size_t n)
{
    dal_columns_t *head = atomic_load(&t->columns_seen), *c;

    for (c = head; c != NULL; c = c->next)
        if (same_names(c->names, c->n, names, n))
            return c;
    if ((c = pack(names, n)) == NULL)
        return NULL;
    /* two threads may both add the same list: it is kept twice, no harm */
    do
        c->next = head;
    while (!atomic_compare_exchange_weak(&t->columns_seen, &head, c));
    return c;
}

/* The physical table t has on a route at position pos. */
static const char *phys_name(const dal_table_t *t, int32_t pos, char *buf, size_t cap)
{
    return t->sharded && pos >= 0 ? physical_name(t, pos, buf, cap) : t->cfg->name;
}

/* Ask the server of t's first physical table for its columns. */
static int learn(dal_table_t *t, dal_columns_t **out, dal_error_t *err)
{
    char phys[256], **names = NULL;
    const char *name = phys_name(t, 0, phys, sizeof phys);
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
    if (rc == 0 && (*out = keep(t, names, n)) == NULL)
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
    dal_columns_t *c = atomic_load(&t->columns);
    int rc;

    if (c == NULL) {
        if ((rc = learn(t, &c, err)) != 0)
            return rc;
        atomic_store(&t->columns, c);
    }
    *out = c;
    return 0;
}

void table_columns_forget(dal_table_t *t)
{
    atomic_store(&t->columns, NULL);
}

void table_columns_free(dal_table_t *t)
{
    dal_columns_t *c = atomic_load(&t->columns_seen), *next;

    for (; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    atomic_store(&t->columns_seen, NULL);
    atomic_store(&t->columns, NULL);
}

void columns_forget_named(const dal_snapshot_t *snap, const dal_sql_t *sql)
{
    size_t i;

    for (i = 0; i < sql->ntrefs; i++) {
        const char *name = sql->trefs[i].name;
        dal_table_t *t = name ? (dal_table_t *)snapshot_table(snap, name, strlen(name)) : NULL;
        if (t != NULL)
            table_columns_forget(t);
    }
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

int columns_learn_sources(const dal_snapshot_t *snap, const dal_sql_t *sql, int *used,
                          dal_error_t *err)
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
        if (t != NULL && t->sharded) {
            rc = table_columns_get(t, &c, err);
            *used = 1;
        }
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

    lex_init(&lx, sql->text, sql->len, sql->no_backslash);
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
                       const dal_columns_t **used, dal_error_t *err)
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
    *used = c;
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

/* ------------------------------------------------ the check before a write */

/* One physical table a statement's routes use, and the columns the server
 * says it has. */
typedef struct phys {
    dal_node_t *node;
    char name[256];
    char **cols; /* owned, each owned */
    size_t n, cap;
} phys_t;

typedef struct phys_set {
    phys_t *v;   /* owned */
    size_t n;
} phys_set_t;

static void phys_set_clear(phys_set_t *ps)
{
    size_t i, k;

    for (i = 0; i < ps->n; i++) {
        for (k = 0; k < ps->v[i].n; k++)
            free(ps->v[i].cols[k]);
        free(ps->v[i].cols);
    }
    free(ps->v);
    ps->v = NULL;
    ps->n = 0;
}

/* The physical tables of tref k over rt's routes, each once. */
static int collect(const dal_routing_t *rt, size_t k, phys_set_t *ps, dal_error_t *err)
{
    const dal_table_t *t = rt->tables[k];
    size_t i, j;

    if ((ps->v = calloc(rt->nroutes + 1, sizeof *ps->v)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < rt->nroutes; i++) {
        const dal_route_t *r = &rt->routes[i];
        phys_t *p = &ps->v[ps->n];
        char buf[256];
        snprintf(p->name, sizeof p->name, "%s",
                 phys_name(t, r->pos != NULL ? r->pos[k] : -1, buf, sizeof buf));
        p->node = r->node;
        for (j = 0; j < ps->n; j++)
            if (ps->v[j].node == p->node && strcmp(ps->v[j].name, p->name) == 0)
                break;
        if (j == ps->n)
            ps->n++;
    }
    return 0;
}

/* Add a column to p. */
static int phys_add(phys_t *p, const char *col, dal_error_t *err)
{
    char **grown;

    if (p->n == p->cap) {
        if ((grown = realloc(p->cols, (p->cap ? p->cap * 2 : 16) * sizeof *grown)) == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
        p->cols = grown;
        p->cap = p->cap ? p->cap * 2 : 16;
    }
    if ((p->cols[p->n] = strdup(col)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    p->n++;
    return 0;
}

/* The columns of every table of ps on node: one query for them all, the
 * rows sorted by table and position. */
static int read_node(dal_node_t *node, phys_set_t *ps, dal_error_t *err)
{
    dal_buf_t q = DAL_BUF_INIT;
    dal_value_t *params;
    dal_result_t *r = NULL;
    size_t i, n = 0;
    int rc;

    if ((params = calloc(ps->n, sizeof *params)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    buf_puts(&q, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                 "TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (");
    for (i = 0; i < ps->n; i++)
        if (ps->v[i].node == node) {
            buf_puts(&q, n ? ", ?" : "?");
            params[n++] = dal_str(ps->v[i].name);
        }
    buf_puts(&q, ") ORDER BY TABLE_NAME, ORDINAL_POSITION");
    rc = q.data == NULL ? err_set(err, DAL_ENOMEM, "out of memory")
                        : exec_direct(node, q.data, params, n, &r, err);
    while (rc == 0 && (rc = dal_result_next(r, err)) == 1) {
        const char *table = dal_result_text(r, 0, NULL), *col = dal_result_text(r, 1, NULL);
        rc = 0;
        for (i = 0; table != NULL && col != NULL && i < ps->n; i++)
            if (ps->v[i].node == node && strcasecmp(ps->v[i].name, table) == 0) {
                rc = phys_add(&ps->v[i], col, err);
                break;
            }
    }
    dal_result_free(r);
    free(buf_steal(&q));
    free(params);
    return rc < 0 ? rc : 0;
}

/* A list as the messages show it: "(a, b, c)", cut if long. */
static const char *list_text(char *const *names, size_t n, char *buf, size_t cap)
{
    size_t i, len = 0;

    len += (size_t)snprintf(buf, cap, "(");
    for (i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
    if (len < cap)
        snprintf(buf + len, cap - len, ")");
    return buf;
}

/* Check tref k's physical tables against want: 0 all have it; 1 they all
 * have another list (t's changed); <0 refused. */
static int check_tref(const dal_routing_t *rt, size_t k, const dal_columns_t *want,
                      dal_error_t *err)
{
    const dal_table_t *t = rt->tables[k];
    phys_set_t ps = {NULL, 0};
    char a[256], b[256];
    size_t i, j;
    int rc = collect(rt, k, &ps, err);

    for (i = 0; rc == 0 && i < ps.n; i++) {
        for (j = 0; j < i && ps.v[j].node != ps.v[i].node; j++)
            ;
        if (j == i) /* the first table on its node: read them all */
            rc = read_node(ps.v[i].node, &ps, err);
    }
    if (rc < 0) {
        err_prefix(err, "table %s: checking its columns before a statement that relies on "
                   "their order (an INSERT without a column list) failed; name the columns",
                   t->cfg->name);
        if (err != NULL)
            err->code = DAL_ESTATE;
        rc = DAL_ESTATE;
    }
    for (i = 0; rc == 0 && i < ps.n; i++)
        if (ps.v[i].n == 0)
            rc = err_set(err, DAL_EROUTE, "table %s: no table %s on datasource %s",
                         t->cfg->name, ps.v[i].name, ps.v[i].node->cfg->name);
    for (i = 1; rc == 0 && i < ps.n; i++)
        if (!same_names(ps.v[0].cols, ps.v[0].n, ps.v[i].cols, ps.v[i].n))
            rc = err_set(err, DAL_ESTATE,
                         "table %s: its physical tables do not have the same columns (%s on "
                         "datasource %s: %s; %s on datasource %s: %s), so dal cannot tell "
                         "which column a value without a column list goes to; name the columns",
                         t->cfg->name, ps.v[0].name, ps.v[0].node->cfg->name,
                         list_text(ps.v[0].cols, ps.v[0].n, a, sizeof a), ps.v[i].name,
                         ps.v[i].node->cfg->name, list_text(ps.v[i].cols, ps.v[i].n, b, sizeof b));
    if (rc == 0 && ps.n > 0 && !same_names(ps.v[0].cols, ps.v[0].n, want->names, want->n))
        rc = 1;
    if (rc == 1) { /* the first physical table says whether t itself changed */
        const dal_columns_t *now;
        table_columns_forget((dal_table_t *)t);
        if ((rc = table_columns_get((dal_table_t *)t, &now, err)) == 0 &&
            same_names(now->names, now->n, want->names, want->n)) {
            char first[256];
            rc = err_set(err, DAL_ESTATE,
                         "table %s: its physical tables do not have the same columns (%s on "
                         "datasource %s: %s; %s on datasource %s: %s), so dal cannot tell "
                         "which column a value without a column list goes to; name the columns",
                         t->cfg->name, phys_name(t, 0, first, sizeof first),
                         t->nodes[0]->cfg->name, list_text(now->names, now->n, a, sizeof a),
                         ps.v[0].name, ps.v[0].node->cfg->name,
                         list_text(ps.v[0].cols, ps.v[0].n, b, sizeof b));
        } else if (rc == 0) {
            rc = 1;
        }
    }
    phys_set_clear(&ps);
    return rc;
}

int columns_check(const dal_routing_t *rt, const dal_columns_t *into, int attempt,
                  dal_error_t *err)
{
    const dal_sql_t *sql = rt->sql;
    size_t k;
    int rc = 0;

    for (k = 0; rc == 0 && k < sql->ntrefs; k++) {
        const dal_table_t *t = rt->tables[k];
        const dal_columns_t *want = NULL;
        if (t == NULL)
            continue;
        if (sql->trefs[k].role == DAL_TREF_INTO)
            want = into;
        else if (sql->insert_select && sql->nitems == 1 && sql->items[0].star && t->sharded)
            want = atomic_load(&((dal_table_t *)t)->columns); /* what routing read */
        if (want != NULL)
            rc = check_tref(rt, k, want, err);
    }
    if (rc == 1 && attempt >= 2)
        rc = err_set(err, DAL_ESTATE, "the columns of a table the statement relies on kept "
                     "changing while dal checked them; name the columns");
    return rc;
}
