/*
 * lookup.c -- a lookup table's read, before routing: see lookup.h and
 * docs/lookup.md.
 *
 * The read is an ordinary statement on the lookup table, routed and run
 * here with the layers below (route, exec) rather than through stmt.c, so
 * the statement path stays one driver calling down.  It runs on the
 * masters: a lookup row written a moment ago must be seen.  Inside a
 * session that holds connections (a transaction) it runs through the
 * session instead (lookup_reader_set), to see the transaction's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h" /* DAL_TLS_SMALL */
#include "buf.h"
#include "error.h"
#include "iowait.h"
#include "exec.h"
#include "explain.h"
#include "lookup.h"
#include "parse.h"
#include "result.h"
#include "route_servers.h"
#include "sql_lex.h"

/* ------------------------------------------------------- owned values */

void lookup_values_free(dal_value_t *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (v[i].type == DAL_TYPE_STRING || v[i].type == DAL_TYPE_BLOB)
            free((char *)v[i].v.s.ptr);
    free(v);
}

int lookup_value_copy(dal_value_t *dst, const dal_value_t *src, dal_error_t *err)
{
    char *p;

    *dst = *src;
    if (src->type != DAL_TYPE_STRING && src->type != DAL_TYPE_BLOB)
        return 0;
    if ((p = malloc(src->v.s.len + 1)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    memcpy(p, src->v.s.ptr, src->v.s.len);
    p[src->v.s.len] = '\0';
    dst->v.s.ptr = p;
    return 0;
}

int lookup_value_text(const char *text, size_t len, int number, dal_value_t *out,
                           dal_error_t *err)
{
    char small[32];
    int64_t i;

    if (number && len < sizeof small) {
        memcpy(small, text, len);
        small[len] = '\0';
        if (parse_int64(small, &i) == 0) {
            *out = dal_int(i);
            return 0;
        }
    }
    *out = dal_strn(text, len);
    return lookup_value_copy(out, out, err);
}

/* ----------------------------------------------------- the condition */

int lookup_operand(const dal_sql_t *sql, const dal_sql_opnd_t *o, const dal_value_t *params,
                         size_t nparams, dal_value_t *out, dal_error_t *err)
{
    char *text;
    size_t len = 0;
    int rc;

    if (o->kind == DAL_OPND_PARAM)
        return o->param_index >= 0 && (size_t)o->param_index < nparams
                   ? lookup_value_copy(out, &params[o->param_index], err)
                   : 1;
    if (o->kind != DAL_OPND_LITERAL)
        return 1;
    if ((text = malloc(o->len + 1)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if (sql_literal_text(sql->text, o, text, o->len + 1, &len) != 0) {
        free(text);
        return 1;
    }
    text[len] = '\0';
    if (o->lit_type == DAL_TOK_IDENT && strcasecmp(text, "NULL") == 0)
        *out = dal_null();
    else if (o->lit_type == DAL_TOK_IDENT)
        *out = dal_int(strcasecmp(text, "TRUE") == 0);
    rc = o->lit_type == DAL_TOK_IDENT
             ? 0
             : lookup_value_text(text, len, o->lit_type == DAL_TOK_NUMBER, out, err);
    free(text);
    return rc;
}

/* The table reference of c's scope that condition c is on (its
 * qualifier's, or the only one of the scope when it has none); -1 if none. */
static long cond_tref(const dal_sql_t *sql, const struct dal_sql_cond *c)
{
    size_t k;
    long found = -1;

    for (k = 0; k < sql->ntrefs; k++) {
        const struct dal_sql_tref *t = &sql->trefs[k];
        if (t->scope != c->scope)
            continue;
        if (c->qualifier != NULL &&
            strcasecmp(c->qualifier, t->alias ? t->alias : t->name) == 0)
            return (long)k;
        if (c->qualifier == NULL && found >= 0)
            return -1; /* two tables: the column's may be either */
        if (c->qualifier == NULL)
            found = (long)k;
    }
    return found;
}

/* The lookup column of table t named col, or NULL. */
static const dal_cfg_lookup_t *table_lookup(const dal_table_t *t, const char *col)
{
    size_t i;

    for (i = 0; t != NULL && i < t->cfg->nlookups; i++)
        if (strcasecmp(t->cfg->lookups[i].column, col) == 0)
            return &t->cfg->lookups[i];
    return NULL;
}

/* Whether sql has a condition of scope sc that names values of the
 * shard key of t (= or IN: a range may cover many). */
static int keyed(const dal_sql_t *sql, int sc, const dal_table_t *t)
{
    size_t c;

    for (c = 0; c < sql->nconds; c++)
        if (sql->conds[c].scope == sc &&
            (sql->conds[c].op == DAL_COND_EQ || sql->conds[c].op == DAL_COND_IN) &&
            strcasecmp(sql->conds[c].column, t->cfg->shard_key) == 0)
            return 1;
    return 0;
}

/* The statement's lookup condition, with its table; NULL if none. */
static const struct dal_sql_cond *find_cond(const dal_snapshot_t *snap, const dal_sql_t *sql,
                                            const dal_table_t **table,
                                            const dal_cfg_lookup_t **lookup, int *scope)
{
    size_t c;

    /* hints that choose the shard or node themselves; others (master,
     * replica, ...) leave the routing to the statement */
    if (!(sql->kind == DAL_SQL_SELECT || sql->kind == DAL_SQL_UPDATE ||
          sql->kind == DAL_SQL_DELETE) ||
        (sql->nhints > 0 && (sql_hint_value(sql, "shard_value") != NULL ||
                             sql_hint_value(sql, "datasource") != NULL ||
                             sql_hint_value(sql, "raw") != NULL)))
        return NULL;
    for (c = 0; c < sql->nconds; c++) {
        const struct dal_sql_cond *cd = &sql->conds[c];
        long k;
        const dal_table_t *t;
        int kind = sql->scopes[cd->scope].kind;
        /* the statement's own rows: scope 0 of UPDATE and DELETE, the top
         * SELECT (one: a set operation's arms are routed together) */
        if (!(kind == DAL_SCOPE_STATEMENT || (kind == DAL_SCOPE_TOP && !sql->has_union)) ||
            (cd->op != DAL_COND_EQ && cd->op != DAL_COND_IN) || (k = cond_tref(sql, cd)) < 0)
            continue;
        t = snapshot_table(snap, sql->trefs[k].name, strlen(sql->trefs[k].name));
        if (t == NULL || !t->sharded || (*lookup = table_lookup(t, cd->column)) == NULL ||
            keyed(sql, cd->scope, t))
            continue;
        *table = t;
        *scope = cd->scope;
        return cd;
    }
    return NULL;
}

/* ----------------------------------------------------------- the read */

/* SELECT col, key FROM the lookup table WHERE col IN (n ?). */
static char *read_sql(const dal_lookup_t *lk, size_t n, size_t *len)
{
    dal_buf_t b = DAL_BUF_INIT;
    size_t i;

    buf_printf(&b, "SELECT `%s`, `%s` FROM `%s` WHERE `%s` ", lk->column,
               lk->rk.table->cfg->shard_key, lk->ltable->cfg->name, lk->column);
    buf_puts(&b, n == 1 ? "= ?" : "IN (?");
    for (i = 1; i < n; i++)
        buf_puts(&b, ", ?");
    if (n > 1)
        buf_puts(&b, ")");
    *len = b.len;
    return buf_steal(&b);
}

int lookup_add_key(dal_lookup_t *lk, const char *text, size_t len, dal_error_t *err)
{
    if (lk->nkeys == lk->keys_cap) {
        size_t cap = lk->keys_cap ? lk->keys_cap * 2 : 4;
        dal_value_t *k = realloc(lk->keys, cap * sizeof *k);
        if (k == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
        lk->keys = k;
        lk->keys_cap = cap;
    }
    if (lookup_value_text(text, len, 1, &lk->keys[lk->nkeys], err) != 0)
        return DAL_ENOMEM;
    lk->nkeys++;
    return 0;
}

/* A lookup read (text, n values) routed (rt cleared by the caller), with
 * its servers: always the masters. */
static int route_read(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                      const dal_lookup_t *lk, const char *text, size_t len,
                      const dal_value_t *vals, size_t n, unsigned int flags,
                      const dal_sql_t **sql, dal_routing_t *rt, dal_error_t *err)
{
    dal_select_t sel = {.override = DAL_SERVER_MASTER, .flags = flags};
    char msg[256];
    int rc;

    memset(rt, 0, sizeof *rt);
    if ((*sql = sql_cache_get(cache, text, len, 0, msg, sizeof msg)) == NULL)
        return err_set(err, DAL_ESQL, "lookup table %s: cannot analyse %s: %s",
                       lk->ltable->cfg->name, text, msg);
    rc = route_statement(snap, schema, *sql, NULL, vals, n, rt, err);
    if (rc == 0)
        rc = select_servers(rt, &sel, err);
    return rc;
}

static _Thread_local lookup_reader_t reader DAL_TLS_SMALL;

/* The reader is the running statement's: kept aside while an event loop
 * runs others on the thread (iowait.h). */
IOWAIT_KEEP_VAR(reader)

lookup_reader_t lookup_reader_set(lookup_reader_t r)
{
    lookup_reader_t old = reader;

    reader = r;
    return old;
}

/* Whether a row's column text is value v exactly (the cache keeps only
 * answers it can tie to their values). */
static int same_text(const dal_value_t *v, const char *t, size_t n)
{
    char num[32];
    int k;

    if (v->type == DAL_TYPE_INT || v->type == DAL_TYPE_UINT) {
        k = v->type == DAL_TYPE_INT ? snprintf(num, sizeof num, "%lld", (long long)v->v.i)
                                    : snprintf(num, sizeof num, "%llu", (unsigned long long)v->v.u);
        return (size_t)k == n && memcmp(num, t, n) == 0;
    }
    return v->type == DAL_TYPE_STRING && v->v.s.len == n && memcmp(v->v.s.ptr, t, n) == 0;
}

/* What one read found, for the cache: row r's key (texts borrowed from
 * the keys found) belongs to value owner[r]. */
typedef struct found {
    size_t *owner;
    size_t n, cap;
    int exact;  /* every row tied to one value */
} found_t;

static void found_row(found_t *f, const dal_value_t *todo, size_t ntodo, const char *ct,
                      size_t cl)
{
    size_t j;

    for (j = 0; j < ntodo && !same_text(&todo[j], ct, cl); j++)
        ;
    if (j == ntodo || (f->n == f->cap && f->cap >= 64)) {
        f->exact = 0;
        return;
    }
    if (f->n == f->cap) {
        size_t *o = realloc(f->owner, (f->cap = f->cap ? f->cap * 2 : 8) * sizeof *o);
        if (o == NULL) {
            f->exact = 0;
            return;
        }
        f->owner = o;
    }
    f->owner[f->n++] = j;
}

/* Store what the read of todo found (its keys from lk->keys[first..]). */
static void cache_store(dal_snapshot_t *snap, const dal_lookup_t *lk, const dal_value_t *todo,
                        const uint32_t *ver, size_t ntodo, const found_t *f, size_t first)
{
    const char *texts[4];
    size_t lens[4], j, r, n;
    char bufs[4][32];

    for (j = 0; f->exact && j < ntodo; j++) {
        for (r = 0, n = 0; r < f->n && n <= 4; r++) {
            const dal_value_t *k = &lk->keys[first + r];
            if (f->owner[r] != j)
                continue;
            if (n == 4)
                n++;
            else if (k->type == DAL_TYPE_INT) {
                lens[n] = (size_t)snprintf(bufs[n], sizeof bufs[n], "%lld", (long long)k->v.i);
                texts[n] = bufs[n];
                n++;
            } else if (k->type == DAL_TYPE_STRING && k->v.s.len < sizeof bufs[n]) {
                texts[n] = k->v.s.ptr;
                lens[n++] = k->v.s.len;
            } else {
                n = 5;
            }
        }
        if (n <= 4)
            lookup_cache_put(snap->gen, lk->ltable, &todo[j], ver[j], texts, lens, n,
                             snap->cfg->lookup_cache_ms);
    }
}

/* The values not answered by the cache into todo (with the slot versions
 * seen); their number. */
static int from_cache(dal_snapshot_t *snap, dal_lookup_t *lk, dal_value_t *todo, uint32_t *ver,
                      size_t *ntodo, dal_error_t *err)
{
    size_t i;
    int rc = 0;

    *ntodo = 0;
    for (i = 0; rc >= 0 && i < lk->nvals; i++) {
        rc = lookup_cache_get(snap->gen, lk->ltable, &lk->vals[i], lk, &ver[*ntodo], err);
        if (rc == 0)
            todo[(*ntodo)++] = lk->vals[i];
    }
    return rc < 0 ? rc : 0;
}

static int read_keys(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                     dal_lookup_t *lk, dal_error_t *err)
{
    int cached = snap->cfg->lookup_cache_ms > 0 && reader.run == NULL;
    const dal_sql_t *sql = NULL;
    dal_routing_t rt = {0};
    dal_result_t *res = NULL;
    dal_value_t *todo = lk->vals;
    uint32_t *ver = NULL;
    size_t ntodo = lk->nvals, first = lk->nkeys, len, slen = 0;
    found_t f = {NULL, 0, 0, 1};
    char *text = NULL;
    int rc = 0;

    if (cached) {
        todo = malloc(lk->nvals * sizeof *todo);
        ver = malloc(lk->nvals * sizeof *ver);
        rc = todo == NULL || ver == NULL ? err_set(err, DAL_ENOMEM, "out of memory")
                                         : from_cache(snap, lk, todo, ver, &ntodo, err);
        first = lk->nkeys;
    }
    if (rc == 0 && ntodo > 0 && (text = read_sql(lk, ntodo, &slen)) == NULL)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    if (rc == 0 && ntodo > 0)
        rc = reader.run != NULL
                 ? reader.run(reader.arg, 0, text, slen, todo, ntodo, &res, err)
                 : route_read(cache, snap, schema, lk, text, slen, todo, ntodo, 0, &sql, &rt, err);
    if (rc == 0 && ntodo > 0 && res == NULL)
        rc = exec_routes(&rt, todo, ntodo, NULL, &res, err);
    while (rc == 0 && res != NULL && (rc = dal_result_next(res, err)) == 1) {
        size_t cl;
        const char *ct = dal_result_text(res, 0, &cl), *kt = dal_result_text(res, 1, &len);
        rc = 0;
        if (ct == NULL || kt == NULL)
            continue;
        if (cached)
            found_row(&f, todo, ntodo, ct, cl);
        rc = lookup_add_key(lk, kt, len, err);
    }
    if (rc == 0 && cached && ntodo > 0)
        cache_store(snap, lk, todo, ver, ntodo, &f, first);
    if (rc != 0)
        err_prefix(err, "lookup table %s", lk->ltable->cfg->name);
    dal_result_free(res);
    routing_clear(&rt);
    if (sql != NULL)
        sql_unref(sql);
    free(text);
    free(f.owner);
    if (todo != lk->vals)
        free(todo);
    free(ver);
    return rc;
}

int lookup_prepare(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                   const dal_query_opts_t *opts, const dal_sql_t *sql,
                   const dal_value_t *params, size_t nparams, dal_lookup_t *lk,
                   dal_error_t *err)
{
    const dal_cfg_lookup_t *l = NULL;
    const dal_table_t *t = NULL;
    const struct dal_sql_cond *c;
    char name[2 * DAL_CFG_NAME_MAX + 16];
    size_t i;
    int rc;

    memset(lk, 0, sizeof *lk);
    if (snap->cfg->nlookups == 0 ||
        (opts != NULL && (opts->shard_value != NULL || opts->datasource != NULL)) ||
        (c = find_cond(snap, sql, &t, &l, &lk->rk.scope)) == NULL)
        return 0;
    snprintf(name, sizeof name, "%s_lookup_%s", t->cfg->name, l->column);
    if ((lk->ltable = snapshot_table(snap, name, strlen(name))) == NULL)
        return 0;
    if ((lk->vals = calloc(c->nvals, sizeof *lk->vals)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < c->nvals; i++, lk->nvals++) {
        rc = lookup_operand(sql, &c->vals[i], params, nparams, &lk->vals[i], err);
        if (rc == 1) {
            lookup_clear(lk); /* an expression: every shard, as without the lookup */
            return 0;
        }
        if (rc != 0)
            return rc;
    }
    lk->rk.table = t;
    lk->column = l->column;
    if ((lk->sql = read_sql(lk, lk->nvals, &lk->sql_len)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = read_keys(cache, snap, schema, lk, err);
    lk->rk.keys = lk->keys;
    lk->rk.nkeys = lk->nkeys;
    return rc;
}

int lookup_explain(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                   const dal_lookup_t *lk, dal_plan_t **plan, dal_error_t *err)
{
    const dal_sql_t *sql = NULL;
    dal_plan_t *first = NULL;
    dal_routing_t rt;
    int rc = route_read(cache, snap, schema, lk, lk->sql, lk->sql_len, lk->vals, lk->nvals,
                        DAL_SELECT_EXPLAIN, &sql, &rt, err);

    if (rc == 0)
        rc = explain_build(&rt, lk->vals, lk->nvals, &first, err);
    if (rc == 0)
        rc = explain_prepend(*plan, first, "lookup", err);
    routing_clear(&rt);
    if (sql != NULL)
        sql_unref(sql);
    if (rc != 0) {
        dal_plan_free(*plan);
        *plan = NULL;
    }
    return rc;
}

void lookup_clear(dal_lookup_t *lk)
{
    lookup_values_free(lk->vals, lk->nvals);
    lookup_values_free(lk->keys, lk->nkeys);
    free(lk->sql);
    memset(lk, 0, sizeof *lk);
}
