/*
 * lookup_write.c -- the upkeep of lookup tables around a write (lookup.h,
 * docs/lookup.md).
 *
 * The order never loses a row: the lookup rows of new values are written
 * before the row (an INSERT's rows, an UPDATE's new value), and those of
 * old values removed after it (a DELETE, an UPDATE's old value), and only
 * when no row of the table has that value on that shard key any more.  A
 * lookup row whose row is missing is harmless: a read by its value asks
 * the shard it names and finds nothing there (`dal lookup verify` reports
 * it).  Every statement of the upkeep goes through run (stmt.c's driver),
 * told what it is to the write (LOOKUP_RUN_*): the driver runs it with the
 * write -- in its transaction, or in one it opens on the write's node --
 * or outside, and may leave a removal for after (LOOKUP_ELSEWHERE).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h" /* DAL_TLS_SMALL */
#include "buf.h"
#include "error.h"
#include "iowait.h"
#include "lookup.h"
#include "sql_lex.h"

struct lookup_pair {
    const dal_cfg_lookup_t *l; /* borrowed from the table's config */
    dal_value_t col, key;      /* owned strings */
};

/* A statement's new value of one looked-up column (INSERT rows, UPDATE). */
typedef struct newval {
    const dal_cfg_lookup_t *l;
    dal_value_t v;             /* owned string */
} newval_t;

static int add_pair(lookup_pair_t **arr, size_t *n, const dal_cfg_lookup_t *l,
                    const dal_value_t *col, const dal_value_t *key, dal_error_t *err)
{
    lookup_pair_t *p = realloc(*arr, (*n + 1) * sizeof **arr);

    if (p == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    *arr = p;
    p += *n;
    memset(p, 0, sizeof *p);
    p->l = l;
    if (lookup_value_copy(&p->col, col, err) != 0 || lookup_value_copy(&p->key, key, err) != 0)
        return DAL_ENOMEM;
    (*n)++;
    return 0;
}

static void pairs_free(lookup_pair_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (p[i].col.type == DAL_TYPE_STRING || p[i].col.type == DAL_TYPE_BLOB)
            free((char *)p[i].col.v.s.ptr);
        if (p[i].key.type == DAL_TYPE_STRING || p[i].key.type == DAL_TYPE_BLOB)
            free((char *)p[i].key.v.s.ptr);
    }
    free(p);
}

static void lookup_name(const dal_table_t *t, const dal_cfg_lookup_t *l, char *out, size_t cap)
{
    snprintf(out, cap, "%s_lookup_%s", t->cfg->name, l->column);
}

/* The table reference sql writes rows of, or -1. */
static long written_tref(const dal_sql_t *sql)
{
    size_t k;

    for (k = 0; k < sql->ntrefs; k++)
        if (sql->trefs[k].role != DAL_TREF_FROM && sql->trefs[k].role != DAL_TREF_DDL)
            return (long)k;
    return -1;
}

/* The upkeep's own statements run: their writes of lookup tables forget
 * only the values they write, not everything (lookup_write_wanted). */
static _Thread_local int in_upkeep DAL_TLS_SMALL;

/* The upkeep's own statement's, kept aside while an event loop runs
 * others on the thread (iowait.h). */
IOWAIT_KEEP_VAR(in_upkeep)

int lookup_write_wanted(const dal_snapshot_t *snap, const dal_sql_t *sql)
{
    const dal_table_t *t;
    long k;

    if (snap->cfg->nlookups == 0 ||
        !(sql->kind == DAL_SQL_INSERT || sql->kind == DAL_SQL_REPLACE ||
          sql->kind == DAL_SQL_UPDATE || sql->kind == DAL_SQL_DELETE) ||
        (k = written_tref(sql)) < 0)
        return 0;
    t = snapshot_table(snap, sql->trefs[k].name, strlen(sql->trefs[k].name));
    /* a lookup table written as a table (backfill, verify --fix, by hand) */
    if (t != NULL && t->cfg->nlookups == 0 && snap->cfg->lookup_cache_ms > 0 && !in_upkeep &&
        strstr(t->cfg->name, "_lookup_") != NULL)
        lookup_cache_forget_all();
    return t != NULL && t->cfg->nlookups > 0;
}

/* Run sql, its result into *out (NULL: dropped); how: LOOKUP_RUN_*.
 * LOOKUP_ELSEWHERE when the driver leaves it for later. */
static int run_sql_as(dal_lookup_write_t *w, int how, const dal_buf_t *sql,
                      const dal_value_t *params, size_t n, dal_result_t **out, dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc;

    in_upkeep++;
    rc = w->run(w->arg, how, sql->data, sql->len, params, n, &r, err);
    in_upkeep--;

    if (out != NULL && rc == 0)
        *out = r;
    else
        dal_result_free(r);
    return rc;
}

static int run_sql(dal_lookup_write_t *w, const dal_buf_t *sql, const dal_value_t *params,
                   size_t n, dal_result_t **out, dal_error_t *err)
{
    return run_sql_as(w, LOOKUP_RUN_WITH, sql, params, n, out, err);
}

/* ------------------------------------------------------------- adding */

/* What the cache keeps of the values of pairs with lookup l goes (after
 * their lookup rows were written: a read before would keep the old). */
static void forget(dal_lookup_write_t *w, const dal_cfg_lookup_t *l, const lookup_pair_t *pairs,
                   size_t n)
{
    char name[2 * DAL_CFG_NAME_MAX + 16];
    const dal_table_t *lt;
    size_t i;

    if (w->snap->cfg->lookup_cache_ms == 0)
        return;
    lookup_name(w->table, l, name, sizeof name);
    if ((lt = snapshot_table(w->snap, name, strlen(name))) == NULL)
        return;
    for (i = 0; i < n; i++)
        if (pairs[i].l == l)
            lookup_cache_forget(lt, &pairs[i].col);
}

/* INSERT the rows (col, key) of pairs with lookup l; they are kept in
 * w->added, to take back if the write fails. */
static int insert_lookup_rows(dal_lookup_write_t *w, const dal_cfg_lookup_t *l,
                              const lookup_pair_t *pairs, size_t n, dal_error_t *err)
{
    char name[2 * DAL_CFG_NAME_MAX + 16];
    dal_buf_t b = DAL_BUF_INIT;
    dal_value_t *v = calloc(2 * n + 1, sizeof *v);
    size_t i, k = 0;
    int rc = 0;

    if (v == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    lookup_name(w->table, l, name, sizeof name);
    buf_printf(&b, "INSERT %sINTO `%s` (`%s`, `%s`) VALUES ", l->unique ? "" : "IGNORE ", name,
               l->column, w->table->cfg->shard_key);
    for (i = 0; i < n; i++) {
        if (pairs[i].l != l)
            continue;
        buf_puts(&b, k ? ", (?, ?)" : "(?, ?)");
        v[k++] = pairs[i].col;
        v[k++] = pairs[i].key;
    }
    if (k > 0)
        rc = run_sql_as(w, LOOKUP_RUN_ADD, &b, v, k, NULL, err);
    forget(w, l, pairs, n);
    /* also when it failed: on a sharded lookup table the rows of the other
     * shards may have been added */
    for (i = 0; i < n; i++)
        if (pairs[i].l == l && add_pair(&w->added, &w->nadded, l, &pairs[i].col, &pairs[i].key,
                                        rc != 0 ? NULL : err) != 0 && rc == 0)
            rc = DAL_ENOMEM;
    if (rc != 0 && rc != DAL_ENOMEM)
        err_prefix(err, "lookup table %s", name);
    buf_free(&b);
    free(v);
    return rc;
}

static int insert_all(dal_lookup_write_t *w, const lookup_pair_t *pairs, size_t n,
                      dal_error_t *err)
{
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < w->table->cfg->nlookups; i++)
        rc = insert_lookup_rows(w, &w->table->cfg->lookups[i], pairs, n, err);
    return rc;
}

static long column_index(const dal_sql_t *sql, const char *col)
{
    size_t i;

    for (i = 0; i < sql->ncolumns; i++)
        if (strcasecmp(sql->columns[i], col) == 0)
            return (long)i;
    return -1;
}

static int refuse(dal_error_t *err, const dal_table_t *t, const char *what)
{
    return err_set(err, DAL_EUNSUPPORTED, "table %s has lookups (%s%s%s), which dal keeps on "
                   "every write: %s", t->cfg->name, t->cfg->lookup ? t->cfg->lookup : "",
                   t->cfg->lookup && t->cfg->lookup_unique ? ", " : "",
                   t->cfg->lookup_unique ? t->cfg->lookup_unique : "", what);
}

/* An INSERT's rows: (value, shard key) of each looked-up column, added. */
static int insert_rows(dal_lookup_write_t *w, const dal_sql_t *sql, const dal_value_t *params,
                       size_t nparams, dal_error_t *err)
{
    const dal_table_t *t = w->table;
    lookup_pair_t *pairs = NULL;
    size_t npairs = 0, r, i;
    long ki = column_index(sql, t->cfg->shard_key);
    int rc = 0;

    if (sql->insert_select || sql->odku_len > 0)
        return refuse(err, t, sql->insert_select ? "INSERT ... SELECT is not supported"
                                                 : "ON DUPLICATE KEY UPDATE is not supported");
    for (r = 0; rc == 0 && r < sql->nrows; r++) {
        dal_value_t key = dal_null();
        rc = ki < 0 || (size_t)ki >= sql->rows[r].nvals
                 ? 1
                 : lookup_operand(sql, &sql->rows[r].vals[ki], params, nparams, &key, err);
        if (rc == 1)
            rc = refuse(err, t, "the shard key of each row must be a literal or a ?");
        if (rc != 0)
            break;
        for (i = 0; rc == 0 && i < t->cfg->nlookups; i++) {
            const dal_cfg_lookup_t *l = &t->cfg->lookups[i];
            long ci = column_index(sql, l->column);
            dal_value_t col = dal_null();
            if (ci < 0)
                continue; /* NULL, or the column's default: no lookup row */
            if ((size_t)ci >= sql->rows[r].nvals ||
                (rc = lookup_operand(sql, &sql->rows[r].vals[ci], params, nparams, &col,
                                     err)) == 1) {
                rc = refuse(err, t, "each row's value of a looked-up column must be a literal "
                                    "or a ?, not an expression");
                break;
            }
            if (rc == 0 && col.type != DAL_TYPE_NULL)
                rc = add_pair(&pairs, &npairs, l, &col, &key, err);
            if (col.type == DAL_TYPE_STRING || col.type == DAL_TYPE_BLOB)
                free((char *)col.v.s.ptr);
        }
        if (key.type == DAL_TYPE_STRING || key.type == DAL_TYPE_BLOB)
            free((char *)key.v.s.ptr);
    }
    if (rc == 0)
        rc = insert_all(w, pairs, npairs, err);
    pairs_free(pairs, npairs);
    return rc;
}

/* ----------------------------------------------- the rows a write changes */

/* SELECT key, lookup columns FROM t WHERE (the statement's WHERE, with its
 * ? values): the rows an UPDATE or DELETE is about to change, or more (its
 * ORDER BY and LIMIT are left out: a value read needlessly only costs a
 * check).  Each (value, key) of a lookup of wanted (NULL: all) goes to
 * w->gone; *keys, when given, gets the shard keys read. */
static int read_old(dal_lookup_write_t *w, const dal_sql_t *sql, const dal_value_t *params,
                    const newval_t *wanted, size_t nwanted, dal_value_t **keys, size_t *nkeys,
                    dal_error_t *err)
{
    const dal_table_t *t = w->table;
    const struct dal_sql_tref *tr = &sql->trefs[0];
    dal_buf_t b = DAL_BUF_INIT;
    dal_value_t *v = calloc(sql->nparams + 1, sizeof *v);
    dal_result_t *res = NULL;
    size_t i, n = 0;
    int rc;

    if (v == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    buf_printf(&b, "SELECT `%s`", t->cfg->shard_key);
    for (i = 0; i < t->cfg->nlookups; i++)
        buf_printf(&b, ", `%s`", t->cfg->lookups[i].column);
    buf_printf(&b, " FROM `%s`", t->cfg->name);
    if (tr->alias != NULL)
        buf_printf(&b, " AS `%s`", tr->alias);
    if (sql->where_len > 0) {
        buf_puts(&b, " WHERE ");
        buf_append(&b, sql->text + sql->where_off, sql->where_len);
        for (i = 0; i < sql->nparams; i++)
            if (sql->param_offs[i] >= sql->where_off &&
                sql->param_offs[i] < sql->where_off + sql->where_len)
                v[n++] = params[i];
    }
    rc = run_sql(w, &b, v, n, &res, err);
    while (rc == 0 && (rc = dal_result_next(res, err)) == 1) {
        size_t len;
        const char *kt = dal_result_text(res, 0, &len);
        dal_value_t key;
        rc = kt == NULL ? 0 : lookup_value_text(kt, len, 1, &key, err);
        for (i = 0; kt != NULL && rc == 0 && i < t->cfg->nlookups; i++) {
            const dal_cfg_lookup_t *l = &t->cfg->lookups[i];
            size_t cl;
            const char *ct = dal_result_text(res, i + 1, &cl);
            dal_value_t col;
            size_t j;
            for (j = 0; wanted != NULL && j < nwanted && wanted[j].l != l; j++)
                ;
            if (ct == NULL || (wanted != NULL && j == nwanted))
                continue;
            if ((rc = lookup_value_text(ct, cl, 1, &col, err)) == 0)
                rc = add_pair(&w->gone, &w->ngone, l, &col, &key, err);
            if (col.type == DAL_TYPE_STRING)
                free((char *)col.v.s.ptr);
        }
        if (kt != NULL && rc == 0 && keys != NULL) {
            dal_value_t *nk = realloc(*keys, (*nkeys + 1) * sizeof *nk);
            if (nk == NULL)
                rc = err_set(err, DAL_ENOMEM, "out of memory");
            else
                lookup_value_copy(&(*keys = nk)[(*nkeys)++], &key, err);
        }
        if (kt != NULL && key.type == DAL_TYPE_STRING)
            free((char *)key.v.s.ptr);
    }
    dal_result_free(res);
    buf_free(&b);
    free(v);
    return rc;
}

/* ------------------------------------------------------------- UPDATE */

/* The value token t of `col = t` in an UPDATE's SET, into *out; 1 if it
 * is not a literal or a ?. */
static int token_value(const dal_sql_t *sql, const dal_token_t *t, int minus, dal_value_t *out,
                       dal_error_t *err)
{
    const char *s = sql->text + t->off;
    char *d;
    size_t i, len = 0;
    int rc;

    if (t->type == DAL_TOK_PARAM) {
        for (i = 0; i < sql->nparams && sql->param_offs[i] != t->off; i++)
            ;
        return i < sql->nparams ? 2 + (int)i : 1; /* the caller takes params[i] */
    }
    if (t->type == DAL_TOK_IDENT && !minus && t->len == 4 && strncasecmp(s, "NULL", 4) == 0) {
        *out = dal_null();
        return 0;
    }
    if (t->type == DAL_TOK_NUMBER) {
        if ((d = malloc(t->len + 2)) == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
        d[0] = '-';
        memcpy(d + 1, s, t->len);
        rc = lookup_value_text(minus ? d : d + 1, t->len + (minus ? 1 : 0), 1, out, err);
        free(d);
        return rc;
    }
    if (t->type != DAL_TOK_STRING || minus)
        return 1;
    if ((d = malloc(t->len + 1)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = sql_decode_string(s, t->len, sql->no_backslash, d, t->len + 1, &len) != 0
             ? 1
             : lookup_value_text(d, len, 0, out, err);
    free(d);
    return rc;
}

static int is_word(const dal_sql_t *sql, const dal_token_t *t, const char *w)
{
    return t->type == DAL_TOK_IDENT && t->len == strlen(w) &&
           strncasecmp(sql->text + t->off, w, t->len) == 0;
}

static int is_punct(const dal_sql_t *sql, const dal_token_t *t, char c)
{
    return t->type == DAL_TOK_PUNCT && t->len == 1 && sql->text[t->off] == c;
}

static dal_token_t next_token(dal_lexer_t *lx)
{
    dal_token_t t;

    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    return t;
}

/* The new value of each looked-up column an UPDATE's SET assigns (nv has
 * room for every lookup), literal or ?; an expression is refused. */
static int set_values(const dal_table_t *t, const dal_sql_t *sql, const dal_value_t *params,
                      newval_t *nv, size_t *n, dal_error_t *err)
{
    dal_lexer_t lx;
    dal_token_t tk, val;
    char col[DAL_CFG_NAME_MAX + 1];
    size_t i;
    int depth = 0, rc;

    lex_init(&lx, sql->text, sql->len, sql->no_backslash);
    do
        tk = next_token(&lx);
    while (tk.type != DAL_TOK_EOF && !is_word(sql, &tk, "SET"));
    for (;;) {
        int minus = 0;
        dal_token_t c = next_token(&lx);
        tk = next_token(&lx);
        while (is_punct(sql, &tk, '.')) { /* qualified: t.col */
            c = next_token(&lx);
            tk = next_token(&lx);
        }
        if (c.type == DAL_TOK_EOF || !is_punct(sql, &tk, '='))
            return 0; /* past the SET list */
        ident_unquote(sql->text, &c, col, sizeof col);
        val = next_token(&lx);
        if (is_punct(sql, &val, '-')) {
            minus = 1;
            val = next_token(&lx);
        }
        tk = next_token(&lx);
        for (i = 0; i < t->cfg->nlookups; i++)
            if (strcasecmp(t->cfg->lookups[i].column, col) == 0)
                break;
        if (i < t->cfg->nlookups) {
            int single = tk.type == DAL_TOK_EOF || is_punct(sql, &tk, ',') ||
                         is_word(sql, &tk, "WHERE") || is_word(sql, &tk, "ORDER") ||
                         is_word(sql, &tk, "LIMIT");
            rc = single ? token_value(sql, &val, minus, &nv[*n].v, err) : 1;
            if (rc >= 2)
                rc = lookup_value_copy(&nv[*n].v, &params[rc - 2], err);
            if (rc == 1)
                return refuse(err, t, "SET of a looked-up column takes a literal or a ?, "
                                      "not an expression");
            if (rc != 0)
                return rc;
            nv[(*n)++].l = &t->cfg->lookups[i];
        }
        /* on to the next assignment: past the value, at depth 0 */
        for (depth = 0; tk.type != DAL_TOK_EOF && !(depth == 0 && is_punct(sql, &tk, ','));
             tk = next_token(&lx)) {
            if (depth == 0 && (is_word(sql, &tk, "WHERE") || is_word(sql, &tk, "ORDER") ||
                               is_word(sql, &tk, "LIMIT")))
                return 0;
            depth += is_punct(sql, &tk, '(') - is_punct(sql, &tk, ')');
        }
        if (tk.type == DAL_TOK_EOF)
            return 0;
    }
}

static int update_rows(dal_lookup_write_t *w, const dal_sql_t *sql, const dal_value_t *params,
                       dal_error_t *err)
{
    const dal_table_t *t = w->table;
    newval_t *nv = calloc(t->cfg->nlookups, sizeof *nv);
    dal_value_t *keys = NULL;
    lookup_pair_t *pairs = NULL;
    size_t n = 0, nkeys = 0, npairs = 0, i, k;
    int rc;

    if (nv == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = set_values(t, sql, params, nv, &n, err);
    if (rc == 0 && n > 0)
        rc = read_old(w, sql, params, nv, n, &keys, &nkeys, err);
    for (i = 0; rc == 0 && i < n; i++)
        for (k = 0; rc == 0 && k < nkeys && nv[i].v.type != DAL_TYPE_NULL; k++)
            rc = add_pair(&pairs, &npairs, nv[i].l, &nv[i].v, &keys[k], err);
    if (rc == 0)
        rc = insert_all(w, pairs, npairs, err);
    pairs_free(pairs, npairs);
    lookup_values_free(keys, nkeys);
    for (i = 0; i < n; i++)
        if (nv[i].v.type == DAL_TYPE_STRING || nv[i].v.type == DAL_TYPE_BLOB)
            free((char *)nv[i].v.v.s.ptr);
    free(nv);
    return rc;
}

/* -------------------------------------------------------------- public */

/* Test hook (tests/suites/lookup_test.sh), not a setting: with
 * DAL_TEST_LOOKUP_KILL in the environment, a write that added lookup rows
 * kills its own process (SIGKILL) before the row is written, as a crash
 * between the two would. */
static int test_kill(int rc, const dal_lookup_write_t *w)
{
    if (rc == 0 && w->nadded > 0 && getenv("DAL_TEST_LOOKUP_KILL") != NULL)
        raise(SIGKILL);
    return rc;
}

static int write_before(const dal_sql_t *sql, const dal_value_t *params, size_t nparams,
                        dal_lookup_write_t *w, dal_error_t *err);

int lookup_write_before(lookup_run_fn run, void *arg, const dal_snapshot_t *snap,
                        const dal_sql_t *sql, const dal_value_t *params, size_t nparams,
                        dal_lookup_write_t *w, dal_error_t *err)
{
    long k = written_tref(sql);

    memset(w, 0, sizeof *w);
    w->run = run;
    w->arg = arg;
    w->snap = snap;
    w->table = snapshot_table(snap, sql->trefs[k].name, strlen(sql->trefs[k].name));
    return test_kill(write_before(sql, params, nparams, w, err), w);
}

static int write_before(const dal_sql_t *sql, const dal_value_t *params, size_t nparams,
                        dal_lookup_write_t *w, dal_error_t *err)
{
    if (sql->ntrefs > 1 && sql->kind != DAL_SQL_INSERT && sql->kind != DAL_SQL_REPLACE)
        return refuse(err, w->table, "a write naming several tables is not supported");
    if (sql->kind == DAL_SQL_INSERT || sql->kind == DAL_SQL_REPLACE)
        return insert_rows(w, sql, params, nparams, err);
    if (sql->kind == DAL_SQL_UPDATE)
        return update_rows(w, sql, params, err);
    return read_old(w, sql, params, NULL, 0, NULL, NULL, err);
}

/* Whether a row of the table still has p's value on p's shard key (1),
 * or not (0); LOOKUP_ELSEWHERE: not asked now. */
static int still_there(dal_lookup_write_t *w, const lookup_pair_t *p, dal_error_t *err)
{
    dal_buf_t b = DAL_BUF_INIT;
    dal_value_t v[2] = {p->key, p->col};
    dal_result_t *res = NULL;
    int rc;

    buf_printf(&b, "SELECT 1 FROM `%s` WHERE `%s` = ? AND `%s` = ? LIMIT 1",
               w->table->cfg->name, w->table->cfg->shard_key, p->l->column);
    rc = run_sql_as(w, LOOKUP_RUN_REMOVE, &b, v, 2, &res, err);
    if (rc == 0)
        rc = dal_result_next(res, err); /* 1: a row */
    dal_result_free(res);
    buf_free(&b);
    return rc;
}

static int delete_lookup_row(dal_lookup_write_t *w, const lookup_pair_t *p, dal_error_t *err)
{
    char name[2 * DAL_CFG_NAME_MAX + 16];
    dal_buf_t b = DAL_BUF_INIT;
    dal_value_t v[2] = {p->col, p->key};
    int rc;

    lookup_name(w->table, p->l, name, sizeof name);
    buf_printf(&b, "DELETE FROM `%s` WHERE `%s` = ? AND `%s` = ?", name, p->l->column,
               w->table->cfg->shard_key);
    rc = run_sql_as(w, LOOKUP_RUN_REMOVE, &b, v, 2, NULL, err);
    forget(w, p->l, p, 1);
    buf_free(&b);
    return rc;
}

static int same_value(const dal_value_t *a, const dal_value_t *b)
{
    if (a->type != b->type)
        return 0;
    if (a->type == DAL_TYPE_STRING || a->type == DAL_TYPE_BLOB)
        return a->v.s.len == b->v.s.len && memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0;
    return a->type == DAL_TYPE_NULL || a->v.i == b->v.i;
}

int lookup_write_after(dal_lookup_write_t *w, int rc, dal_error_t *err)
{
    dal_error_t e2 = {0};
    size_t i, j;
    int r2 = 0;

    if (w->table == NULL)
        return rc;
    if (rc != 0) {
        /* the write failed: the lookup rows it added go unless a row has
         * their value on their key */
        for (i = 0; i < w->nadded; i++)
            if (still_there(w, &w->added[i], &e2) == 0)
                delete_lookup_row(w, &w->added[i], &e2);
        return rc;
    }
    for (i = 0; r2 == 0 && i < w->ngone; i++) {
        for (j = 0; j < i; j++)
            if (w->gone[j].l == w->gone[i].l && same_value(&w->gone[j].col, &w->gone[i].col) &&
                same_value(&w->gone[j].key, &w->gone[i].key))
                break;
        if (j < i)
            continue;
        /* LOOKUP_ELSEWHERE: left for later, or for good (lookup.h) */
        r2 = still_there(w, &w->gone[i], err);
        if (r2 == 0)
            r2 = delete_lookup_row(w, &w->gone[i], err);
        if (r2 == LOOKUP_ELSEWHERE)
            w->elsewhere++;
        if (r2 == 1 || r2 == LOOKUP_ELSEWHERE)
            r2 = 0;
    }
    if (r2 != 0)
        err_prefix(err, "the write succeeded, but its lookup rows were not all removed "
                        "(harmless; `dal lookup verify --fix` removes them)");
    return r2;
}

void lookup_write_clear(dal_lookup_write_t *w)
{
    pairs_free(w->gone, w->ngone);
    pairs_free(w->added, w->nadded);
    memset(w, 0, sizeof *w);
}
