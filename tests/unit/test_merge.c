/*
 * test_merge.c -- unit tests of the merge of several nodes' rows, without a
 * database: the spec (what is supported or refused, and the per-node SQL
 * it makes), the value semantics (comparison, DOUBLE text, aggregates) and
 * the merge engine of dal_result_t fed by fake row sources.
 *
 * The expected node SQL, number formats and orders were taken from
 * MariaDB 10.11; tests/live/test_scatter.c checks the same against real servers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "merge.h"
#include "result.h"
#include "sql.h"
#include "value.h"
#include "check_run.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ============================================================ helpers */

static dal_sql_t *analyse(const char *sql)
{
    dal_sql_t *s = NULL;
    char msg[256];

    ck_assert_msg(sql_analyse(sql, strlen(sql), 0, &s, msg, sizeof msg) == 0, "%s: %s", sql,
                  msg);
    return s;
}

/* The statement with the edits applied; checks they are sorted and apart. */
static char *apply_edits(const dal_sql_t *s, const dal_edits_t *e)
{
    dal_buf_t b = DAL_BUF_INIT;
    uint32_t at = 0;
    size_t i;

    for (i = 0; i < e->n; i++) {
        ck_assert_msg(e->items[i].off >= at && (i == 0 || e->items[i].off > e->items[i - 1].off),
                      "edit %zu at %u overlaps or repeats an offset", i, e->items[i].off);
        buf_append(&b, s->text + at, e->items[i].off - at);
        buf_puts(&b, e->items[i].text);
        at = e->items[i].off + e->items[i].len;
    }
    buf_append(&b, s->text + at, s->len - at);
    return buf_steal(&b);
}

static void put_col(dal_buf_t *b, dal_merge_col_t c)
{
    buf_printf(b, "%s%u", c.hidden ? "h" : c.from_end ? "e" : "", c.idx);
}

static void put_keys(dal_buf_t *b, const char *name, const dal_merge_key_t *k, size_t n)
{
    size_t i;

    if (n == 0)
        return;
    buf_printf(b, " %s=", name);
    for (i = 0; i < n; i++) {
        if (i)
            buf_putc(b, ',');
        put_col(b, k[i].col);
        if (k[i].desc)
            buf_putc(b, 'D');
    }
}

static const char *agg_name(dal_agg_t a)
{
    static const char *names[] = {"NONE", "COUNT", "COUNTD", "SUM", "MIN", "MAX", "AVG", "OTHER"};
    return names[a];
}

/* A plan as one line: " keys=1D,0 group=h0 aggs=COUNT@1,AVG@2/h1 final=1D
 * distinct hidden=2 limit=widen 10,5" (h: hidden column, e: counted from
 * the end of the visible ones). */
static char *render_plan(const dal_merge_spec_t *p)
{
    static const char *limits[] = {"", "widen", "drop"};
    dal_buf_t b = DAL_BUF_INIT;
    size_t i;

    buf_puts(&b, "");
    put_keys(&b, "keys", p->keys, p->nkeys);
    if (p->ngroup)
        buf_puts(&b, " group=");
    for (i = 0; i < p->ngroup; i++) {
        if (i)
            buf_putc(&b, ',');
        put_col(&b, p->group[i]);
    }
    if (p->aggregate)
        buf_puts(&b, " aggs=");
    for (i = 0; i < p->naggs; i++) {
        buf_printf(&b, "%s%s@", i ? "," : "", agg_name(p->aggs[i].agg));
        put_col(&b, p->aggs[i].col);
        if (p->aggs[i].agg == DAL_AGG_AVG) {
            buf_putc(&b, '/');
            put_col(&b, p->aggs[i].count);
        }
    }
    if (p->has_rows) {
        buf_puts(&b, " rows=");
        put_col(&b, p->rows);
    }
    put_keys(&b, "final", p->final, p->nfinal);
    if (p->distinct)
        buf_puts(&b, " distinct");
    if (p->nhidden)
        buf_printf(&b, " hidden=%zu", p->nhidden);
    if (p->limit != DAL_MERGE_LIMIT_NONE)
        buf_printf(&b, " limit=%s %llu,%llu", limits[p->limit],
                   (unsigned long long)p->offset, (unsigned long long)p->count);
    return buf_steal(&b);
}

/* ============================================================== plans */

typedef struct plan_case {
    const char *sql;
    const char *shard_key;
    const char *node_sql; /* expected per-node SQL; NULL: refused */
    const char *expect;   /* the rendered plan, or a piece of the refusal message */
} plan_case_t;

static const plan_case_t plan_cases[] = {
    /* rows */
    {"SELECT a, b FROM t", "k", "SELECT a, b FROM t", ""},
    {"SELECT a, b FROM t ORDER BY b DESC, a LIMIT 10, 5", "k",
     "SELECT a, b FROM t ORDER BY b DESC, a LIMIT 15", " keys=1D,0 limit=widen 10,5"},
    {"SELECT a, b FROM t ORDER BY a LIMIT 5 OFFSET 10", "k",
     "SELECT a, b FROM t ORDER BY a LIMIT 15", " keys=0 limit=widen 10,5"},
    {"SELECT a FROM t WHERE x = ? ORDER BY b LIMIT ?, ?", "k",
     "SELECT a , b AS __dal_k1 FROM t WHERE x = ? ORDER BY b LIMIT 15",
     " keys=h0 hidden=1 limit=widen 10,5"},
    {"SELECT * FROM t ORDER BY id DESC LIMIT 3", "k",
     "SELECT * , id AS __dal_k1 FROM t ORDER BY id DESC LIMIT 3",
     " keys=h0D hidden=1 limit=widen 0,3"},
    /* an item after the last * counts from the end of the row */
    {"SELECT *, a + 1 AS z FROM t ORDER BY z", "k", "SELECT *, a + 1 AS z FROM t ORDER BY z",
     " keys=e0"},
    {"SELECT t.*, 1 AS one, u.* FROM t JOIN u ON t.id = u.id ORDER BY one, t.b", "k",
     "SELECT t.*, 1 AS one, u.* , 1 AS __dal_k1, t.b AS __dal_k2 FROM t AS t JOIN u ON t.id = "
     "u.id ORDER BY one, t.b", " keys=h0,h1 hidden=2"},
    {"SELECT a AS x, b FROM t ORDER BY x, 2 DESC", "k", "SELECT a AS x, b FROM t ORDER BY x, 2 DESC",
     " keys=0,1D"},
    {"SELECT t.a, b FROM t ORDER BY a, t.b", "k", "SELECT t.a, b FROM t ORDER BY a, t.b",
     " keys=0,1"},
    /* merge columns are copied as written; a table they name keeps its
     * logical name on the nodes (as an alias), so the copy needs no renaming */
    {"SELECT a FROM t ORDER BY t.b, LOWER(T.c) DESC, b", "k",
     "SELECT a , t.b AS __dal_k1, LOWER(t.c) AS __dal_k2, b AS __dal_k3 FROM t AS t "
     "ORDER BY t.b, LOWER(t.c) DESC, b", " keys=h0,h1D,h2 hidden=3"},
    {"SELECT t_account.amount FROM t_account JOIN t_account_detail ON t_account.account_id = "
     "t_account_detail.account_id ORDER BY t_account.account_id", "account_id",
     "SELECT t_account.amount , t_account.account_id AS __dal_k1 FROM t_account AS t_account "
     "JOIN t_account_detail ON t_account.account_id = t_account_detail.account_id "
     "ORDER BY t_account.account_id", " keys=h0 hidden=1"},
    {"SELECT x.a FROM t x JOIN u ON x.id = u.id JOIN u AS u2 ON u2.id = x.id "
     "WHERE u.c IN (SELECT u.c FROM u) ORDER BY u.b DESC, x.c + u.c", "k",
     "SELECT x.a , u.b AS __dal_k1, x.c + u.c AS __dal_k2 FROM t x JOIN u AS u ON x.id = u.id "
     "JOIN u AS u2 ON u2.id = x.id WHERE u.c IN (SELECT u.c FROM u) ORDER BY u.b DESC, "
     "x.c + u.c", " keys=h0D,h1 hidden=2"},
    /* a correlated reference to the table keeps the alias's name too */
    {"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id) ORDER BY t.b", "k",
     "SELECT a , t.b AS __dal_k1 FROM t AS t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id) "
     "ORDER BY t.b", " keys=h0 hidden=1"},
    {"SELECT a FROM t ORDER BY `t`.b", "k",
     "SELECT a , t.b AS __dal_k1 FROM t AS t ORDER BY t.b", " keys=h0 hidden=1"},
    {"SELECT a FROM db.t JOIN u ON db.t.id = u.id ORDER BY db.t.b", "k",
     "SELECT a , t.b AS __dal_k1 FROM db.t AS t JOIN u ON t.id = u.id ORDER BY t.b",
     " keys=h0 hidden=1"},
    /* a self-join: only the reference the qualifier names gets the alias */
    {"SELECT t_branch.id, t_account.amount FROM t_account t_branch, t_account WHERE "
     "t_branch.id = t_account.id ORDER BY t_account.owner, 1 DESC", "id",
     "SELECT t_branch.id, t_account.amount , t_account.owner AS __dal_k1 FROM t_account "
     "t_branch, t_account AS t_account WHERE t_branch.id = t_account.id ORDER BY "
     "t_account.owner, 1 DESC", " keys=h0,0D hidden=1"},
    {"SELECT a FROM t PARTITION (p0) ORDER BY t.b", "k", NULL, "PARTITION"},
    {"SELECT a FROM t ORDER BY NULL", "k", "SELECT a FROM t ORDER BY NULL", ""},
    {"SELECT a FROM t FOR UPDATE", "k", "SELECT a FROM t FOR UPDATE", ""},
    /* refused row constructs */
    {"SELECT a + 1 AS x FROM t ORDER BY x + 1", "k", NULL, "uses a select alias"},
    {"SELECT a FROM t ORDER BY a + ?", "k", NULL, "holds a ? placeholder"},
    {"SELECT a FROM t ORDER BY (SELECT MAX(b) FROM u)", "k", NULL, "holds a subquery"},
    {"SELECT a FROM t UNION SELECT a FROM u", "k", NULL, "UNION"},
    {"SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM t", "k", NULL, "window function"},
    {"SELECT a FROM t HAVING a > 1", "k", NULL, "HAVING"},
    /* aggregates without GROUP BY: one row, LIMIT after it */
    {"SELECT COUNT(*) FROM t LIMIT 1", "k", "SELECT COUNT(*) FROM t ", " aggs=COUNT@0 limit=drop 0,1"},
    {"SELECT COUNT(*), SUM(x), AVG(y), MIN(s), MAX(s) FROM t WHERE a > 1", "k",
     "SELECT COUNT(*), SUM(x), SUM(y), MIN(s), MAX(s) , COUNT(y) AS __dal_k1 FROM t WHERE a > 1",
     " aggs=COUNT@0,SUM@1,AVG@2/h0,MIN@3,MAX@4 hidden=1"},
    {"SELECT avg(t.y) AS m, COUNT(t.y) FROM t", "k",
     "SELECT SUM(t.y) AS m, COUNT(t.y) , COUNT(t.y) AS __dal_k1 FROM t AS t",
     " aggs=AVG@0/h0,COUNT@1 hidden=1"},
    {"SELECT COUNT(DISTINCT k) FROM t", "k", "SELECT COUNT(DISTINCT k) FROM t", " aggs=COUNTD@0"},
    {"SELECT COUNT(DISTINCT a) FROM t", "k", NULL, "COUNT(DISTINCT ...) adds up across nodes only"},
    {"SELECT COUNT(DISTINCT k) FROM t JOIN u ON t.id = u.id", "k", NULL, "single-table"},
    {"SELECT GROUP_CONCAT(a) FROM t", "k", NULL, "GROUP_CONCAT(a): only COUNT, SUM"},
    {"SELECT SUM(a) / COUNT(*) FROM t", "k", NULL, "an aggregate inside an expression"},
    {"SELECT SUM(DISTINCT a) FROM t", "k", NULL, "SUM/AVG(DISTINCT ...) only of the shard key k"},
    {"SELECT AVG(DISTINCT a) FROM t GROUP BY g", "k", NULL, "AVG(DISTINCT a): only"},
    {"SELECT SUM(DISTINCT k) FROM t JOIN u ON t.id = u.id", "k", NULL, "single-table"},
    {"SELECT SUM(DISTINCT k + 1) FROM t", "k", NULL, "SUM(DISTINCT k + 1)"},
    /* DISTINCT of the shard key: each value lives on one node */
    {"SELECT SUM(DISTINCT k), AVG(DISTINCT t.k), COUNT(DISTINCT k) FROM t", "k",
     "SELECT SUM(DISTINCT k), SUM(DISTINCT t.k), COUNT(DISTINCT k) , COUNT(DISTINCT t.k) AS "
     "__dal_k1 FROM t AS t", " aggs=SUM@0,AVG@1/h0,COUNTD@2 hidden=1"},
    {"SELECT g, avg(DISTINCT k) FROM t GROUP BY g", "k",
     "SELECT g, SUM(DISTINCT k) , COUNT(DISTINCT k) AS __dal_k1 FROM t GROUP BY g ORDER BY 1",
     " keys=0 group=0 aggs=AVG@1/h0 hidden=1"},
    {"SELECT COUNT(*) FROM t HAVING COUNT(*) > 1", "k", NULL, "HAVING"},
    /* * with aggregates: an aggregate after the last * counts from the end */
    {"SELECT *, COUNT(*) FROM t", "k", "SELECT *, COUNT(*) , COUNT(*) AS __dal_k1 FROM t",
     " aggs=COUNT@e0 rows=h0 hidden=1"},
    {"SELECT AVG(x), t.* FROM t", "k",
     "SELECT SUM(x), t.* , COUNT(x) AS __dal_k1, COUNT(*) AS __dal_k2 FROM t",
     " aggs=AVG@0/h0 rows=h1 hidden=2"},
    /* a column that is not aggregated comes from a node that had rows */
    {"SELECT a, MAX(b) FROM t WHERE id = 3", "k",
     "SELECT a, MAX(b) , COUNT(*) AS __dal_k1 FROM t WHERE id = 3", " aggs=MAX@1 rows=h0 hidden=1"},
    {"SELECT t.*, COUNT(*), u.* FROM t JOIN u ON t.id = u.id", "k", NULL, "between two * items"},
    /* GROUP BY: sorted on the group columns, merged while streaming */
    {"SELECT g, COUNT(*), SUM(x) FROM t GROUP BY g", "k",
     "SELECT g, COUNT(*), SUM(x) FROM t GROUP BY g ORDER BY 1",
     " keys=0 group=0 aggs=COUNT@1,SUM@2"},
    {"SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY NULL", "k",
     "SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY 1", " keys=0 group=0 aggs=COUNT@1"},
    {"SELECT SUM(x) FROM t WHERE y > 3 GROUP BY g DESC ORDER BY g DESC LIMIT 2", "k",
     "SELECT SUM(x) , g AS __dal_k1 FROM t WHERE y > 3 GROUP BY g DESC ORDER BY __dal_k1 DESC ",
     " keys=h0D group=h0 aggs=SUM@0 hidden=1 limit=drop 0,2"},
    {"SELECT a, b, MAX(x) FROM t GROUP BY a, b ORDER BY b DESC", "k",
     "SELECT a, b, MAX(x) FROM t GROUP BY a, b ORDER BY 2 DESC, 1",
     " keys=1D,0 group=0,1 aggs=MAX@2"},
    {"SELECT g AS x, AVG(y) FROM t GROUP BY x ORDER BY x", "k",
     "SELECT g AS x, SUM(y) , COUNT(y) AS __dal_k1 FROM t GROUP BY x ORDER BY 1",
     " keys=0 group=0 aggs=AVG@1/h0 hidden=1"},
    {"SELECT g, SUM(x) AS s FROM t GROUP BY 1 ORDER BY s DESC, g LIMIT 3", "k",
     "SELECT g, SUM(x) AS s FROM t GROUP BY 1 ORDER BY 1 ",
     " keys=0 group=0 aggs=SUM@1 final=1D,0 limit=drop 0,3"},
    {"SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY COUNT(*) DESC", "k",
     "SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY 1", " keys=0 group=0 aggs=COUNT@1 final=1D"},
    {"SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY MAX(x)", "k", NULL,
     "neither a select item nor a GROUP BY expression"},
    {"SELECT g, COUNT(*) FROM t GROUP BY g WITH ROLLUP", "k", NULL, "WITH ROLLUP"},
    {"SELECT g, COUNT(*) FROM t GROUP BY g HAVING COUNT(*) > 1", "k", NULL, "HAVING"},
    /* * with GROUP BY: the group columns are found (or added), the other
     * columns are one row's of the group, as on the server */
    {"SELECT * FROM t GROUP BY g", "k", "SELECT * , g AS __dal_k1 FROM t GROUP BY g ORDER BY "
     "__dal_k1", " keys=h0 group=h0 aggs= hidden=1"},
    {"SELECT *, AVG(t.x) AS m FROM t GROUP BY t.g, 1 ORDER BY m DESC LIMIT 3", "k",
     "SELECT *, SUM(t.x) AS m , COUNT(t.x) AS __dal_k1, t.g AS __dal_k2 FROM t AS t "
     "GROUP BY t.g, 1 ORDER BY __dal_k2, 1 ", " keys=h1,0 group=h1,0 aggs=AVG@e0/h0 final=e0D "
     "hidden=2 limit=drop 0,3"},
    {"SELECT g, *, COUNT(*) FROM t GROUP BY t.g ORDER BY g DESC", "k",
     "SELECT g, *, COUNT(*) FROM t GROUP BY t.g ORDER BY 1 DESC",
     " keys=0D group=0 aggs=COUNT@e0"},
    {"SELECT * FROM t GROUP BY k ORDER BY a", "k", "SELECT * , a AS __dal_k1 FROM t GROUP BY k "
     "ORDER BY a", " keys=h0 hidden=1"},
    /* GROUP BY the shard key: groups are complete on their node */
    {"SELECT k, COUNT(*), AVG(x) FROM t GROUP BY k HAVING COUNT(*) > 1 LIMIT 5", "k",
     "SELECT k, COUNT(*), AVG(x) FROM t GROUP BY k HAVING COUNT(*) > 1 LIMIT 5",
     " limit=widen 0,5"},
    {"SELECT k, GROUP_CONCAT(s), COUNT(DISTINCT a) FROM t GROUP BY 1 ORDER BY COUNT(*) DESC", "k",
     "SELECT k, GROUP_CONCAT(s), COUNT(DISTINCT a) , COUNT(*) AS __dal_k1 FROM t GROUP BY 1 "
     "ORDER BY "
     "COUNT(*) DESC", " keys=h0D hidden=1"},
    {"SELECT t.k, COUNT(*) FROM t GROUP BY t.k", "K", "SELECT t.k, COUNT(*) FROM t GROUP BY t.k", ""},
    {"SELECT g, COUNT(*) FROM t GROUP BY g", NULL,
     "SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY 1", " keys=0 group=0 aggs=COUNT@1"},
    /* DISTINCT: sorted on every column, duplicates dropped as they meet */
    {"SELECT DISTINCT a FROM t", "k", "SELECT DISTINCT a FROM t ORDER BY 1", " keys=0 distinct"},
    {"SELECT DISTINCT a, b FROM t ORDER BY b DESC LIMIT 2, 5", "k",
     "SELECT DISTINCT a, b FROM t ORDER BY 2 DESC, 1 LIMIT 7",
     " keys=1D,0 distinct limit=widen 2,5"},
    {"SELECT DISTINCT a FROM t ORDER BY b", "k", NULL, "not a select item"},
    {"SELECT DISTINCT * FROM t", "k", NULL, "DISTINCT with *"},
    {"SELECT DISTINCT g, COUNT(*) FROM t GROUP BY g", "k", NULL, "DISTINCT together with GROUP BY"},
    /* other statements */
    {"UPDATE t SET a = 1 LIMIT 3", "k", NULL, "LIMIT rows"},
    {"DELETE FROM t WHERE a = 1", "k", "DELETE FROM t WHERE a = 1", ""},
};

START_TEST(test_plan_table)
{
    const plan_case_t *c = &plan_cases[_i];
    dal_value_t params[] = {dal_int(7), dal_int(10), dal_uint(5)};
    dal_sql_t *s = analyse(c->sql);
    size_t np = s->nparams, first = N(params) - np;
    dal_merge_spec_t *p = NULL;
    dal_edits_t e = {NULL, 0};
    dal_error_t err = {0};
    char *node, *shape;
    int rc = merge_spec_build(s, c->shard_key, &p, &err);

    if (c->node_sql == NULL) {
        ck_assert_msg(rc == DAL_EUNSUPPORTED, "%s: expected a refusal, got %d", c->sql, rc);
        ck_assert_msg(strstr(err.message, c->expect) != NULL, "%s: message '%s' lacks '%s'",
                      c->sql, err.message, c->expect);
        ck_assert_ptr_null(p);
        sql_free(s);
        return;
    }
    ck_assert_msg(rc == 0, "%s: %s", c->sql, err.message);
    /* the last np values of params: "? ... LIMIT ?, ?" reads 10, 5 */
    rc = merge_node_edits(p, s, params + first, np, &e, &err);
    ck_assert_msg(rc == 0, "%s: %s", c->sql, err.message);
    node = apply_edits(s, &e);
    shape = render_plan(p);
    ck_assert_msg(strcmp(node, c->node_sql) == 0, "%s:\n  got  %s\n  want %s", c->sql, node,
                  c->node_sql);
    ck_assert_msg(strcmp(shape, c->expect) == 0, "%s:\n  plan '%s'\n  want '%s'", c->sql, shape,
                  c->expect);
    free(node);
    free(shape);
    edits_clear(&e);
    merge_spec_free(p);
    sql_free(s);
}
END_TEST

START_TEST(test_limit_params)
{
    dal_sql_t *s = analyse("SELECT a FROM t ORDER BY a LIMIT ?, ?");
    dal_merge_spec_t *p = NULL;
    dal_edits_t e = {NULL, 0};
    dal_error_t err = {0};
    dal_value_t bad[] = {dal_int(-1), dal_int(3)}, str[] = {dal_int(1), dal_str("3x")};
    dal_value_t text[] = {dal_str("2"), dal_strn("30", 2)};
    dal_value_t big[] = {dal_uint(UINT64_MAX), dal_uint(2)};
    char *node;

    ck_assert_int_eq(merge_spec_build(s, "k", &p, &err), 0);
    ck_assert_int_eq(merge_node_edits(p, s, bad, 2, &e, &err), DAL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "LIMIT parameter 1"));
    ck_assert_int_eq(e.n, 0);
    ck_assert_int_eq(merge_node_edits(p, s, str, 2, &e, &err), DAL_EINVAL);
    ck_assert_msg(strstr(err.message, "LIMIT parameter 2") && strstr(err.message, "'3x'"), "%s",
                  err.message);
    /* a count given as text (as some clients send every parameter) */
    ck_assert_int_eq(merge_node_edits(p, s, text, 2, &e, &err), 0);
    node = apply_edits(s, &e);
    ck_assert_str_eq(node, "SELECT a FROM t ORDER BY a LIMIT 32");
    ck_assert(p->offset == 2 && p->count == 30);
    free(node);
    /* offset + count saturates instead of wrapping */
    ck_assert_int_eq(merge_node_edits(p, s, big, 2, &e, &err), 0);
    node = apply_edits(s, &e);
    ck_assert_str_eq(node, "SELECT a FROM t ORDER BY a LIMIT 18446744073709551615");
    ck_assert(p->limit_bound && p->offset == UINT64_MAX && p->count == 2);
    free(node);
    edits_clear(&e);
    merge_spec_free(p);
    sql_free(s);
}
END_TEST

/* Which values are row counts: digits only, within uint64_t. */
START_TEST(test_value_as_count)
{
    static const struct { const char *text; int ok; uint64_t v; } texts[] = {
        {"0", 1, 0}, {"7", 1, 7}, {"007", 1, 7}, {"18446744073709551615", 1, UINT64_MAX},
        {"18446744073709551616", 0, 0}, {"99999999999999999999", 0, 0}, {"", 0, 0},
        {"-1", 0, 0}, {"+1", 0, 0}, {" 1", 0, 0}, {"1 ", 0, 0}, {"1.0", 0, 0}, {"1e3", 0, 0},
        {"0x10", 0, 0}, {"12a", 0, 0},
    };
    static const char with_nul[] = {'1', '2', '\0', '3'};
    dal_value_t v;
    uint64_t out;
    size_t i;

    for (i = 0; i < N(texts); i++) {
        out = 12345;
        v = dal_str(texts[i].text);
        ck_assert_msg((value_as_count(&v, &out) == 0) == texts[i].ok, "'%s'", texts[i].text);
        ck_assert_msg(out == (texts[i].ok ? texts[i].v : 12345), "'%s': %llu", texts[i].text,
                      (unsigned long long)out);
    }
    v = dal_strn(with_nul, sizeof with_nul); /* a NUL inside the text is not a digit */
    ck_assert_int_eq(value_as_count(&v, &out), -1);
    v = dal_int(5);
    ck_assert(value_as_count(&v, &out) == 0 && out == 5);
    v = dal_int(-5);
    ck_assert_int_eq(value_as_count(&v, &out), -1);
    v = dal_uint(UINT64_MAX);
    ck_assert(value_as_count(&v, &out) == 0 && out == UINT64_MAX);
    v = dal_double(3.0);
    ck_assert_int_eq(value_as_count(&v, &out), -1);
    v = dal_blob("3", 1);
    ck_assert_int_eq(value_as_count(&v, &out), -1);
    v = dal_null();
    ck_assert_int_eq(value_as_count(&v, &out), -1);
    v = dal_strn(NULL, 0);
    ck_assert_int_eq(value_as_count(&v, &out), -1);
}
END_TEST

/* An insertion where a replacement starts is folded into it. */
START_TEST(test_edits_coalesce)
{
    dal_sql_t *s = analyse("SELECT g, COUNT(*) FROM t GROUP BY (g)LIMIT 2");
    dal_merge_spec_t *p = NULL;
    dal_edits_t e = {NULL, 0};
    dal_error_t err = {0};
    char *node;

    ck_assert_int_eq(merge_spec_build(s, "k", &p, &err), 0);
    ck_assert_int_eq(merge_node_edits(p, s, NULL, 0, &e, &err), 0);
    ck_assert_int_eq(e.n, 2); /* the hidden (g), then ORDER BY + the dropped LIMIT */
    node = apply_edits(s, &e);
    ck_assert_str_eq(node, "SELECT g, COUNT(*) , (g) AS __dal_k1 FROM t GROUP BY (g) ORDER BY "
                     "__dal_k1");
    free(node);
    edits_clear(&e);
    merge_spec_free(p);
    sql_free(s);
}
END_TEST

/* Unaliased expressions keep their text as the column name. */
START_TEST(test_item_names)
{
    dal_sql_t *s = analyse("SELECT SUM(t.x), t.y, MAX(t.z) AS m, AVG(w), t.a + 1, * FROM t");
    static const char *const want[] = {"SUM(t.x)", NULL, NULL, NULL, "t.a + 1", NULL};
    static const char *const want_agg[] = {"SUM(t.x)", NULL, NULL, "AVG(w)", "t.a + 1", NULL};
    dal_error_t err = {0};
    char **names = NULL;
    size_t i;
    int agg;

    for (agg = 0; agg < 2; agg++) {
        ck_assert_int_eq(merge_item_names(s, agg, &names, &err), 0);
        for (i = 0; i < s->nitems; i++) {
            const char *w = agg ? want_agg[i] : want[i];
            ck_assert_msg(w ? names[i] && strcmp(names[i], w) == 0 : names[i] == NULL,
                          "item %zu: got %s want %s", i, names[i] ? names[i] : "NULL",
                          w ? w : "NULL");
            free(names[i]);
        }
        free(names);
    }
    sql_free(s);
}
END_TEST

/* ===================================================== value semantics */

static MYSQL_FIELD field(const char *name, enum enum_field_types type, unsigned flags,
                         unsigned charsetnr, unsigned decimals)
{
    MYSQL_FIELD f;

    memset(&f, 0, sizeof f);
    f.name = (char *)name;
    f.type = type;
    f.flags = flags;
    f.charsetnr = charsetnr;
    f.decimals = decimals;
    return f;
}

static dal_merge_meta_t meta_of(MYSQL_FIELD f)
{
    dal_merge_meta_t m;

    merge_meta_init(&m, &f);
    return m;
}

#define CS_BINARY 63
#define CS_GENERAL_CI 45 /* utf8mb4_general_ci */
#define CS_BIN 46        /* utf8mb4_bin */

static int cmp(dal_merge_meta_t m, const char *a, const char *b)
{
    return merge_compare(&m, a, a ? strlen(a) : 0, b, b ? strlen(b) : 0);
}

START_TEST(test_compare)
{
    dal_merge_meta_t i = meta_of(field("i", MYSQL_TYPE_LONG, 0, CS_BINARY, 0));
    dal_merge_meta_t u = meta_of(field("u", MYSQL_TYPE_LONGLONG, UNSIGNED_FLAG, CS_BINARY, 0));
    dal_merge_meta_t d = meta_of(field("d", MYSQL_TYPE_NEWDECIMAL, 0, CS_BINARY, 2));
    dal_merge_meta_t f = meta_of(field("f", MYSQL_TYPE_DOUBLE, 0, CS_BINARY, 31));
    dal_merge_meta_t ci = meta_of(field("s", MYSQL_TYPE_VAR_STRING, 0, CS_GENERAL_CI, 0));
    dal_merge_meta_t bin = meta_of(field("s", MYSQL_TYPE_VAR_STRING, 0, CS_BIN, 0));
    dal_merge_meta_t bytes = meta_of(field("b", MYSQL_TYPE_BLOB, BINARY_FLAG, CS_BINARY, 0));
    dal_merge_meta_t e = meta_of(field("e", MYSQL_TYPE_STRING, ENUM_FLAG, CS_GENERAL_CI, 0));

    ck_assert_int_eq(ci.kind, DAL_MK_TEXT);
    ck_assert(ci.fold_case && ci.pad_space);
    ck_assert(!bin.fold_case && bin.pad_space);
    ck_assert_int_eq(bytes.kind, DAL_MK_BYTES);
    ck_assert(e.unordered);
    /* NULL first */
    ck_assert_int_lt(cmp(i, NULL, "-5"), 0);
    ck_assert_int_eq(cmp(ci, NULL, NULL), 0);
    ck_assert_int_gt(cmp(ci, "", NULL), 0);
    /* numbers by value */
    ck_assert_int_lt(cmp(i, "-10", "9"), 0);
    ck_assert_int_gt(cmp(i, "10", "9"), 0);
    ck_assert_int_gt(cmp(u, "18446744073709551615", "9223372036854775808"), 0);
    ck_assert_int_lt(cmp(d, "-0.50", "0.25"), 0);
    ck_assert_int_gt(cmp(d, "10.50", "9.75"), 0);
    ck_assert_int_lt(cmp(d, "-10.50", "-9.75"), 0);
    ck_assert_int_eq(cmp(d, "-0.00", "0.00"), 0);
    ck_assert_int_eq(cmp(d, "1.5", "1.50"), 0);
    ck_assert_int_lt(cmp(d, "123456789012345678901234567890.01", "123456789012345678901234567890.1"), 0);
    ck_assert_int_lt(cmp(f, "1e-5", "0.001"), 0);
    ck_assert_int_gt(cmp(f, "1e20", "99999"), 0);
    /* general_ci: ASCII letters weigh as upper case, so '_' sorts after them */
    ck_assert_int_lt(cmp(ci, "apple", "Banana"), 0);
    ck_assert_int_eq(cmp(ci, "ABC", "abc"), 0);
    ck_assert_int_gt(cmp(ci, "a_b", "aXb"), 0);
    ck_assert_int_gt(cmp(ci, "a_b", "axb"), 0);
    /* PAD SPACE */
    ck_assert_int_eq(cmp(ci, "ab", "ab  "), 0);
    ck_assert_int_lt(cmp(ci, "ab", "ab!"), 0);
    ck_assert_int_lt(cmp(ci, "ab\t", "ab"), 0);
    /* _bin: bytes, still PAD SPACE; binary strings: bytes, no padding */
    ck_assert_int_lt(cmp(bin, "B", "a"), 0);
    ck_assert_int_eq(cmp(bin, "a", "a "), 0);
    ck_assert_int_lt(cmp(bytes, "a", "a "), 0);
}
END_TEST

START_TEST(test_format_double)
{
    static const struct { double d; const char *text; } cases[] = {
        {0.0, "0"}, {-0.0, "0"}, {100, "100"}, {-2.5, "-2.5"}, {0.25, "0.25"},
        {1e15, "1e15"}, {1e16, "1e16"}, {1e14, "100000000000000"}, {1e20, "1e20"},
        {1e14 + 0.5, "100000000000000.5"}, {123456789012345678.0, "1.2345678901234568e17"},
        {1e-5, "0.00001"}, {1.5e-7, "0.00000015"}, {-1e-7, "-0.0000001"},
        {1e-15, "0.000000000000001"}, {1e-16, "1e-16"}, {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e308"}, {0.1 + 0.2, "0.30000000000000004"},
        {1.0 / 3, "0.3333333333333333"}, {123.456, "123.456"},
        {12345678901234567890.0, "1.2345678901234567e19"}, {1.0833333330000001, "1.0833333330000001"},
    };
    char out[64];
    size_t i, n;

    for (i = 0; i < N(cases); i++) {
        n = merge_format_double(cases[i].d, out, sizeof out);
        ck_assert_msg(strcmp(out, cases[i].text) == 0 && n == strlen(out), "%.17g: got %s want %s",
                      cases[i].d, out, cases[i].text);
    }
}
END_TEST

/* Feed partials (text, count) pairs; return the result text or "NULL". */
static char *acc_run(dal_agg_t agg, MYSQL_FIELD f, const char *const *vals, size_t n)
{
    dal_merge_meta_t m = meta_of(f);
    dal_merge_acc_t a;
    dal_buf_t out = DAL_BUF_INIT;
    dal_error_t err = {0};
    size_t i;
    int rc;

    memset(&a, 0, sizeof a);
    merge_acc_reset(&a, agg);
    for (i = 0; i + 1 < n; i += 2) {
        const char *v = vals[i], *c = vals[i + 1];
        rc = merge_acc_add(&a, &m, v, v ? strlen(v) : 0, c, c ? strlen(c) : 0, &err);
        if (rc != 0) {
            merge_acc_free(&a);
            return strdup(err.message);
        }
    }
    rc = merge_acc_result(&a, &out, &err);
    merge_acc_free(&a);
    if (rc < 0)
        return strdup(err.message);
    if (rc == 1) {
        buf_free(&out);
        return strdup("NULL");
    }
    buf_putc(&out, '\0'); /* an empty text must still allocate */
    return buf_steal(&out);
}

#define ACC(agg, f, want, ...)                                                       \
    do {                                                                             \
        const char *v_[] = {__VA_ARGS__};                                            \
        char *got_ = acc_run(agg, f, v_, N(v_));                                     \
        ck_assert_msg(strcmp(got_, want) == 0, "%s: got '%s' want '%s'", #__VA_ARGS__, \
                      got_, want);                                                   \
        free(got_);                                                                  \
    } while (0)

START_TEST(test_aggregates)
{
    MYSQL_FIELD cnt = field("c", MYSQL_TYPE_LONGLONG, 0, CS_BINARY, 0);
    MYSQL_FIELD isum = field("s", MYSQL_TYPE_NEWDECIMAL, 0, CS_BINARY, 0);
    MYSQL_FIELD dsum = field("s", MYSQL_TYPE_NEWDECIMAL, 0, CS_BINARY, 2);
    MYSQL_FIELD fsum = field("s", MYSQL_TYPE_DOUBLE, 0, CS_BINARY, 31);
    MYSQL_FIELD str = field("s", MYSQL_TYPE_VAR_STRING, 0, CS_GENERAL_CI, 0);
    MYSQL_FIELD iv = field("i", MYSQL_TYPE_LONG, 0, CS_BINARY, 0);

    ACC(DAL_AGG_COUNT, cnt, "7", "3", NULL, "0", NULL, "4", NULL);
    ACC(DAL_AGG_COUNT_DISTINCT, cnt, "2", "1", NULL, "1", NULL);
    ACC(DAL_AGG_SUM, isum, "3", "1", NULL, NULL, NULL, "2", NULL);
    ACC(DAL_AGG_SUM, isum, "NULL", NULL, NULL, NULL, NULL);
    ACC(DAL_AGG_SUM, isum, "-99999999999999999999", "-99999999999999999998", NULL, "-1", NULL);
    ACC(DAL_AGG_SUM, dsum, "1.25", "1.50", NULL, "-0.25", NULL);
    ACC(DAL_AGG_SUM, dsum, "-0.05", "0.05", NULL, "-0.10", NULL);
    ACC(DAL_AGG_SUM, dsum, "0.00", "0.05", NULL, "-0.05", NULL);
    ACC(DAL_AGG_SUM, fsum, "0.75", "0.25", NULL, "0.5", NULL);
    /* AVG: scale + 4, half away from zero */
    ACC(DAL_AGG_AVG, isum, "0.6667", "2", "3", NULL, "0");
    ACC(DAL_AGG_AVG, isum, "-0.6667", "-2", "2", "0", "1");
    ACC(DAL_AGG_AVG, isum, "1.5000", "1", "1", "2", "1");
    ACC(DAL_AGG_AVG, dsum, "1.336667", "4.01", "3");
    ACC(DAL_AGG_AVG, dsum, "NULL", NULL, "0", NULL, "0");
    ACC(DAL_AGG_AVG, fsum, "0.36111111100000004", "1.0833333330000001", "3");
    ACC(DAL_AGG_MIN, str, "apple", "cherry", NULL, NULL, NULL, "apple", NULL, "Banana", NULL);
    ACC(DAL_AGG_MAX, str, "cherry", "cherry", NULL, "apple", NULL, "Banana", NULL);
    ACC(DAL_AGG_MIN, iv, "-5", "3", NULL, "-5", NULL, "10", NULL);
    ACC(DAL_AGG_MAX, iv, "NULL", NULL, NULL);
    ACC(DAL_AGG_MIN, str, "", "", NULL, "b", NULL);
    /* refused instead of wrong */
    ACC(DAL_AGG_SUM, isum,
        "cannot merge an aggregate exactly: the value needs more than 38 digits",
        "99999999999999999999999999999999999999", NULL, "99999999999999999999999999999999999999",
        NULL);
    ACC(DAL_AGG_SUM, dsum,
        "cannot merge the partial aggregate '1.234': not a number of the column's type", "1.234",
        NULL);
    ACC(DAL_AGG_SUM, str, "cannot merge the partial aggregate 'x': not a number of the column's type",
        "x", NULL);
    ACC(DAL_AGG_COUNT, cnt,
        "cannot merge the partial aggregate '-1': not a number of the column's type", "-1", NULL);
}
END_TEST

/* ======================================================= merge engine */

/* A source fed from an array of rows (ncols texts per row, NULL for NULL). */
typedef struct fake_src {
    dal_rowsrc_t base;
    const char *const *cells;
    unsigned int ncols;
    size_t nrows, next;
    long fail_at;            /* fetch of this row fails; -1: never */
    char *row[16];
    unsigned long lens[16];
    int *closed;             /* set to 1 + ok when closed */
} fake_src_t;

static int fake_fetch(dal_rowsrc_t *s, dal_error_t *err)
{
    fake_src_t *f = (fake_src_t *)s;
    unsigned int c;

    if ((long)f->next == f->fail_at)
        return err_set(err, DAL_ESERVER, "datasource fake: connection lost");
    if (f->next == f->nrows)
        return 0;
    for (c = 0; c < f->ncols; c++) {
        const char *v = f->cells[f->next * f->ncols + c];
        f->row[c] = (char *)v;
        f->lens[c] = v ? strlen(v) : 0;
    }
    f->next++;
    s->row = f->row;
    s->lengths = f->lens;
    return 1;
}

static void fake_close(dal_rowsrc_t *s, int ok)
{
    fake_src_t *f = (fake_src_t *)s;

    ck_assert_msg(*f->closed == 0, "a source was closed twice");
    *f->closed = 1 + ok;
    free(f);
}

static const dal_rowsrc_ops_t fake_ops = {fake_fetch, fake_close, NULL};

/* Test fixture: a result, its fields and the close flags of its sources. */
typedef struct fixture {
    dal_result_t *r;
    MYSQL_FIELD fields[16];
    unsigned int ncols;
    int closed[8];
    size_t nsrc;
} fixture_t;

static void fx_init(fixture_t *fx, unsigned int ncols, ...)
{
    va_list ap;
    unsigned int i;

    memset(fx, 0, sizeof *fx);
    fx->r = result_new();
    fx->ncols = ncols;
    va_start(ap, ncols);
    for (i = 0; i < ncols; i++)
        fx->fields[i] = va_arg(ap, MYSQL_FIELD);
    va_end(ap);
}

static void fx_add(fixture_t *fx, const char *const *cells, size_t nrows, long fail_at)
{
    fake_src_t *f = calloc(1, sizeof *f);
    dal_error_t err = {0};
    char name[16];

    ck_assert_ptr_nonnull(f);
    f->base.ops = &fake_ops;
    f->cells = cells;
    f->ncols = fx->ncols;
    f->nrows = nrows;
    f->fail_at = fail_at;
    f->closed = &fx->closed[fx->nsrc];
    snprintf(name, sizeof name, "ds%zu", fx->nsrc++);
    ck_assert_int_eq(result_add_source(fx->r, &f->base, fx->fields, fx->ncols, name, &err), 0);
}

/* Merge with the spec of sql (LIMIT ? read from params). */
static void fx_merge(fixture_t *fx, const char *sql, const dal_value_t *params, size_t np)
{
    dal_sql_t *s = analyse(sql);
    dal_merge_spec_t *p = NULL;
    dal_edits_t e = {NULL, 0};
    dal_error_t err = {0};

    ck_assert_msg(merge_spec_build(s, "k", &p, &err) == 0, "%s: %s", sql, err.message);
    ck_assert_msg(merge_node_edits(p, s, params, np, &e, &err) == 0, "%s", err.message);
    ck_assert_msg(result_set_merge(fx->r, p, &err) == 0, "%s: %s", sql, err.message);
    edits_clear(&e);
    sql_free(s);
}

/* Every row as "a|b|NULL" lines. */
static char *fx_rows(fixture_t *fx)
{
    dal_buf_t b = DAL_BUF_INIT;
    dal_error_t err = {0};
    size_t c, n = dal_result_column_count(fx->r);
    int rc;

    while ((rc = dal_result_next(fx->r, &err)) == 1) {
        for (c = 0; c < n; c++) {
            const char *t = dal_result_text(fx->r, c, NULL);
            buf_printf(&b, "%s%s", c ? "|" : "", t ? t : "NULL");
        }
        buf_putc(&b, '\n');
    }
    ck_assert_msg(rc == 0, "dal_result_next: %d %s", rc, err.message);
    ck_assert_int_eq(dal_result_next(fx->r, &err), 0); /* the end stays the end */
    buf_putc(&b, '\0');
    return buf_steal(&b);
}

static void fx_expect(fixture_t *fx, const char *want)
{
    char *got = fx_rows(fx);

    ck_assert_msg(strcmp(got, want) == 0, "got:\n%s\nwant:\n%s", got, want);
    free(got);
}

static void fx_free(fixture_t *fx)
{
    size_t i;

    dal_result_free(fx->r);
    for (i = 0; i < fx->nsrc; i++)
        ck_assert_msg(fx->closed[i] != 0, "source %zu never closed", i);
}

#define F_INT(n) field(n, MYSQL_TYPE_LONG, 0, CS_BINARY, 0)
#define F_STR(n) field(n, MYSQL_TYPE_VAR_STRING, 0, CS_GENERAL_CI, 0)
#define F_DEC(n, d) field(n, MYSQL_TYPE_NEWDECIMAL, 0, CS_BINARY, d)
#define F_CNT(n) field(n, MYSQL_TYPE_LONGLONG, 0, CS_BINARY, 0)

START_TEST(test_concat_without_plan)
{
    static const char *a[] = {"1", "x", "2", NULL};
    static const char *b[] = {"3", "y"};
    fixture_t fx;

    fx_init(&fx, 2, F_INT("id"), F_STR("s"));
    fx_add(&fx, a, 2, -1);
    fx_add(&fx, b, 1, -1);
    ck_assert_int_eq(dal_result_column_count(fx.r), 2);
    ck_assert_str_eq(dal_result_column_name(fx.r, 1), "s");
    ck_assert_ptr_null(dal_result_column_name(fx.r, 2));
    fx_expect(&fx, "1|x\n2|NULL\n3|y\n");
    /* each source is released as soon as it ends, reusable */
    ck_assert_int_eq(fx.closed[0], 2);
    ck_assert_int_eq(fx.closed[1], 2);
    fx_free(&fx);
}
END_TEST

START_TEST(test_order_merge)
{
    /* ORDER BY a DESC, s: each node sorted that way; NULL last in DESC */
    static const char *n0[] = {"9", "b", "5", "a", NULL, "z"};
    static const char *n1[] = {"10", "a", "9", "A_", "9", "c", "5", "Banana"};
    static const char *n2[] = {"-1", "x", NULL, "a"};
    fixture_t fx;

    fx_init(&fx, 2, F_INT("a"), F_STR("s"));
    fx_add(&fx, n0, 3, -1);
    fx_add(&fx, n1, 4, -1);
    fx_add(&fx, n2, 2, -1);
    fx_merge(&fx, "SELECT a, s FROM t ORDER BY a DESC, s", NULL, 0);
    fx_expect(&fx, "10|a\n9|A_\n9|b\n9|c\n5|a\n5|Banana\n-1|x\nNULL|a\nNULL|z\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_limit_offset_hidden)
{
    /* SELECT s FROM t ORDER BY a LIMIT 2, 3: a is a hidden column */
    static const char *n0[] = {"a", "1", "c", "3", "e", "5", "g", "7"};
    static const char *n1[] = {"b", "2", "d", "4", "f", "6"};
    dal_value_t lim[] = {dal_int(2), dal_int(3)};
    fixture_t fx;

    fx_init(&fx, 2, F_STR("s"), F_INT("a"));
    fx_add(&fx, n0, 4, -1);
    fx_add(&fx, n1, 3, -1);
    fx_merge(&fx, "SELECT s FROM t ORDER BY a LIMIT ?, ?", lim, 2);
    ck_assert_int_eq(dal_result_column_count(fx.r), 1);
    ck_assert_ptr_null(dal_result_column_name(fx.r, 1));
    ck_assert_int_eq(dal_result_next(fx.r, NULL), 1);
    ck_assert_str_eq(dal_result_text(fx.r, 0, NULL), "c");
    ck_assert(dal_result_is_null(fx.r, 1)); /* the hidden column is not there */
    ck_assert_ptr_null(dal_result_text(fx.r, 1, NULL));
    ck_assert_int_eq(dal_result_next(fx.r, NULL), 1);
    ck_assert_int_eq(dal_result_int(fx.r, 0), 0);
    ck_assert_str_eq(dal_result_text(fx.r, 0, NULL), "d");
    ck_assert_int_eq(dal_result_next(fx.r, NULL), 1);
    ck_assert_str_eq(dal_result_text(fx.r, 0, NULL), "e");
    ck_assert_int_eq(dal_result_next(fx.r, NULL), 0);
    /* the end released every connection, the unread rows drained (ok) */
    ck_assert_int_eq(fx.closed[0], 2);
    ck_assert_int_eq(fx.closed[1], 2);
    fx_free(&fx);
}
END_TEST

START_TEST(test_aggregate_one_row)
{
    /* COUNT(*), SUM(x), AVG(x) -> SUM(x) + hidden COUNT(x), MIN(s), MAX(s) */
    static const char *n0[] = {"3", "10", "10", "b", "d", "3"};
    static const char *n1[] = {"0", NULL, NULL, NULL, NULL, "0"};
    static const char *n2[] = {"2", "-3", "-3", "Apple", "c", "1"};
    fixture_t fx;

    fx_init(&fx, 6, F_CNT("COUNT(*)"), F_DEC("SUM(x)", 0), F_DEC("SUM(x)", 0), F_STR("MIN(s)"),
            F_STR("MAX(s)"), F_CNT("COUNT(x)"));
    fx_add(&fx, n0, 1, -1);
    fx_add(&fx, n1, 1, -1);
    fx_add(&fx, n2, 1, -1);
    fx_merge(&fx, "SELECT COUNT(*), SUM(x), AVG(x), MIN(s), MAX(s) FROM t", NULL, 0);
    ck_assert_int_eq(dal_result_column_count(fx.r), 5);
    ck_assert_str_eq(dal_result_column_name(fx.r, 2), "AVG(x)");
    ck_assert_str_eq(dal_result_column_name(fx.r, 1), "SUM(x)");
    fx_expect(&fx, "5|7|1.7500|Apple|d\n");
    fx_free(&fx);
}
END_TEST

/* SELECT *, COUNT(*), AVG(x) FROM t: the * is two columns on the nodes;
 * the aggregates are found from the end; the * columns come from a node
 * that had rows (its COUNT(*) is not 0), not from the first node. */
START_TEST(test_aggregate_after_star)
{
    /* id, s | COUNT(*) | SUM(x) | hidden COUNT(x), COUNT(*) */
    static const char *n0[] = {NULL, NULL, "0", NULL, "0", "0"};
    static const char *n1[] = {"7", "q", "2", "5", "2", "2"};
    static const char *n2[] = {"9", "r", "1", "1", "1", "1"};
    fixture_t fx;

    fx_init(&fx, 6, F_INT("id"), F_STR("s"), F_CNT("COUNT(*)"), F_DEC("SUM(t_3.x)", 0),
            F_CNT("__dal_k1"), F_CNT("__dal_k2"));
    fx_add(&fx, n0, 1, -1);
    fx_add(&fx, n1, 1, -1);
    fx_add(&fx, n2, 1, -1);
    fx_merge(&fx, "SELECT *, COUNT(*), AVG(t.x) FROM t", NULL, 0);
    ck_assert_int_eq(dal_result_column_count(fx.r), 4);
    ck_assert_str_eq(dal_result_column_name(fx.r, 3), "AVG(t.x)");
    ck_assert_ptr_null(dal_result_column_name(fx.r, 4));
    fx_expect(&fx, "7|q|3|2.0000\n");
    fx_free(&fx);
}
END_TEST

/* Every node without rows: the server shows NULL where not aggregated. */
START_TEST(test_aggregate_no_rows)
{
    static const char *n0[] = {NULL, NULL, "0"};
    static const char *n1[] = {NULL, NULL, "0"};
    fixture_t fx;

    fx_init(&fx, 3, F_INT("a"), F_INT("MAX(b)"), F_CNT("__dal_k1"));
    fx_add(&fx, n0, 1, -1);
    fx_add(&fx, n1, 1, -1);
    fx_merge(&fx, "SELECT a, MAX(b) FROM t WHERE id = 3", NULL, 0);
    fx_expect(&fx, "NULL|NULL\n");
    fx_free(&fx);
}
END_TEST

/* SUM(DISTINCT k), AVG(DISTINCT k) of the shard key: node sums added up,
 * the average from the hidden COUNT(DISTINCT k). */
START_TEST(test_distinct_key_aggregates)
{
    static const char *n0[] = {"a", "12", "12", "2", "b", "5", "5", "1"};
    static const char *n1[] = {"a", "3", "3", "2", "c", "7", "7", "1"};
    fixture_t fx;

    fx_init(&fx, 4, F_STR("g"), F_DEC("SUM(DISTINCT k)", 0), F_DEC("SUM(DISTINCT k)", 0),
            F_CNT("__dal_k1"));
    fx_add(&fx, n0, 2, -1);
    fx_add(&fx, n1, 2, -1);
    fx_merge(&fx, "SELECT g, SUM(DISTINCT k), AVG(DISTINCT k) FROM t GROUP BY g", NULL, 0);
    ck_assert_str_eq(dal_result_column_name(fx.r, 2), "AVG(DISTINCT k)");
    fx_expect(&fx, "a|15|3.7500\nb|5|5.0000\nc|7|7.0000\n");
    fx_free(&fx);
}
END_TEST

/* A join ordered by a qualified column that is not selected: merged on
 * the hidden column, which the caller never sees. */
START_TEST(test_join_hidden_order)
{
    static const char *n0[] = {"30", "4", "10", "1"};
    static const char *n1[] = {"40", "3", "20", "2"};
    fixture_t fx;

    fx_init(&fx, 2, F_INT("amount"), F_INT("__dal_k1"));
    fx_add(&fx, n0, 2, -1);
    fx_add(&fx, n1, 2, -1);
    fx_merge(&fx, "SELECT t_account.amount FROM t_account JOIN t_account_detail ON "
             "t_account.account_id = t_account_detail.account_id ORDER BY "
             "t_account.account_id DESC", NULL, 0);
    /* the nodes sent them in descending order of the key; the merge keeps it */
    ck_assert_int_eq(dal_result_column_count(fx.r), 1);
    fx_expect(&fx, "30\n40\n20\n10\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_aggregate_limit)
{
    static const char *n0[] = {"3"};
    static const char *n1[] = {"4"};
    fixture_t fx;

    fx_init(&fx, 1, F_CNT("n"));
    fx_add(&fx, n0, 1, -1);
    fx_add(&fx, n1, 1, -1);
    fx_merge(&fx, "SELECT COUNT(*) AS n FROM t LIMIT 1, 1", NULL, 0);
    fx_expect(&fx, "");
    fx_free(&fx);
}
END_TEST

START_TEST(test_group_streaming)
{
    /* SELECT g, COUNT(*), SUM(d) FROM t GROUP BY g: nodes sorted on g */
    static const char *n0[] = {NULL, "1", "1.50", "a", "2", "2.00", "c", "1", NULL};
    static const char *n1[] = {"A", "3", "-0.25", "b", "1", "1.00", "d", "4", "4.00"};
    static const char *n2[] = {NULL, "2", NULL, "C", "5", "0.05"};
    fixture_t fx;

    fx_init(&fx, 3, F_STR("g"), F_CNT("COUNT(*)"), F_DEC("SUM(d)", 2));
    fx_add(&fx, n0, 3, -1);
    fx_add(&fx, n1, 3, -1);
    fx_add(&fx, n2, 2, -1);
    fx_merge(&fx, "SELECT g, COUNT(*), SUM(d) FROM t GROUP BY g", NULL, 0);
    /* 'a' and 'A' are one group under _ci; the first node's spelling shows */
    fx_expect(&fx, "NULL|3|1.50\na|5|1.75\nb|1|1.00\nc|6|0.05\nd|4|4.00\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_group_sorted_by_aggregate)
{
    /* GROUP BY g ORDER BY SUM(x) DESC, g LIMIT 1, 2: groups kept and sorted */
    static const char *n0[] = {"a", "5", "b", "1", "c", "7"};
    static const char *n1[] = {"a", "4", "c", "1", "d", "2"};
    fixture_t fx;

    fx_init(&fx, 2, F_STR("g"), F_DEC("s", 0));
    fx_add(&fx, n0, 3, -1);
    fx_add(&fx, n1, 3, -1);
    fx_merge(&fx, "SELECT g, SUM(x) AS s FROM t GROUP BY g ORDER BY s DESC, g LIMIT 1, 2", NULL, 0);
    fx_expect(&fx, "c|8\nd|2\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_group_hidden_keys)
{
    /* SELECT AVG(x) FROM t GROUP BY g ORDER BY g DESC: columns SUM(x), COUNT(x), g */
    static const char *n0[] = {"10", "4", "b", "3", "1", "a"};
    static const char *n1[] = {"2", "1", "c", "-1", "2", "a"};
    fixture_t fx;

    fx_init(&fx, 3, F_DEC("SUM(x)", 0), F_CNT("COUNT(x)"), F_STR("g"));
    fx_add(&fx, n0, 2, -1);
    fx_add(&fx, n1, 2, -1);
    fx_merge(&fx, "SELECT AVG(x) FROM t GROUP BY g ORDER BY g DESC", NULL, 0);
    ck_assert_int_eq(dal_result_column_count(fx.r), 1);
    ck_assert_str_eq(dal_result_column_name(fx.r, 0), "AVG(x)");
    fx_expect(&fx, "2.0000\n2.5000\n0.6667\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_distinct)
{
    /* SELECT DISTINCT a, s FROM t ORDER BY s DESC: nodes sort on s DESC, a */
    static const char *n0[] = {"1", "x", "2", "x", "1", "b"};
    static const char *n1[] = {"1", "X", "2", "x", "1", NULL};
    static const char *n2[] = {"3", "c", "1", "b", "1", "b", "1", NULL};
    fixture_t fx;

    fx_init(&fx, 2, F_INT("a"), F_STR("s"));
    fx_add(&fx, n0, 3, -1);
    fx_add(&fx, n1, 3, -1);
    fx_add(&fx, n2, 4, -1);
    fx_merge(&fx, "SELECT DISTINCT a, s FROM t ORDER BY s DESC", NULL, 0);
    fx_expect(&fx, "1|x\n2|x\n3|c\n1|b\n1|NULL\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_stream_error)
{
    static const char *n0[] = {"1", "3", "5"};
    static const char *n1[] = {"2", "4", "6"};
    dal_error_t err = {0};
    fixture_t fx;

    fx_init(&fx, 1, F_INT("a"));
    fx_add(&fx, n0, 3, -1);
    fx_add(&fx, n1, 3, 1); /* its second row fails */
    fx_merge(&fx, "SELECT a FROM t ORDER BY a", NULL, 0);
    ck_assert_int_eq(dal_result_next(fx.r, &err), 1);
    ck_assert_int_eq(dal_result_int(fx.r, 0), 1);
    ck_assert_int_eq(dal_result_next(fx.r, &err), 1);
    ck_assert_int_eq(dal_result_int(fx.r, 0), 2);
    ck_assert_int_eq(dal_result_next(fx.r, &err), DAL_ESERVER);
    ck_assert_str_eq(err.message, "datasource fake: connection lost");
    ck_assert(dal_result_is_null(fx.r, 0));
    /* the failing source is not reusable, the other was drained and is */
    ck_assert_int_eq(fx.closed[1], 1);
    ck_assert_int_eq(fx.closed[0], 2);
    /* the error sticks */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(dal_result_next(fx.r, &err), DAL_ESERVER);
    ck_assert_str_eq(err.message, "datasource fake: connection lost");
    fx_free(&fx);
}
END_TEST

START_TEST(test_free_early)
{
    static const char *n0[] = {"1", "3"};
    static const char *n1[] = {"2", "4"};
    fixture_t fx;

    fx_init(&fx, 1, F_INT("a"));
    fx_add(&fx, n0, 2, -1);
    fx_add(&fx, n1, 2, -1);
    fx_merge(&fx, "SELECT a FROM t ORDER BY a", NULL, 0);
    ck_assert_int_eq(dal_result_next(fx.r, NULL), 1);
    ck_assert_int_eq(fx.closed[0], 0);
    fx_free(&fx); /* closes both, once, reusable (drained) */
    ck_assert_int_eq(fx.closed[0], 2);
    ck_assert_int_eq(fx.closed[1], 2);
}
END_TEST

START_TEST(test_source_errors)
{
    static const char *one[] = {"1"};
    static const char *two[] = {"1", "2"};
    MYSQL_FIELD f2[] = {F_INT("a"), F_INT("b")};
    dal_error_t err = {0};
    fixture_t fx;
    fake_src_t *f = calloc(1, sizeof *f);
    int closed = 0;

    fx_init(&fx, 1, F_INT("a"));
    fx_add(&fx, one, 1, -1);
    f->base.ops = &fake_ops;
    f->cells = two;
    f->ncols = 2;
    f->nrows = 1;
    f->closed = &closed;
    ck_assert_int_eq(result_add_source(fx.r, &f->base, f2, 2, "dbS1", &err),
                     DAL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "datasource dbS1 returned 2 columns"));
    ck_assert_int_eq(closed, 2);
    fx_free(&fx);

    /* ORDER BY an ENUM column cannot be merged from its text */
    fx_init(&fx, 1, field("e", MYSQL_TYPE_STRING, ENUM_FLAG, CS_GENERAL_CI, 0));
    fx_add(&fx, one, 1, -1);
    {
        dal_sql_t *s = analyse("SELECT e FROM t ORDER BY e");
        dal_merge_spec_t *p = NULL;
        ck_assert_int_eq(merge_spec_build(s, "k", &p, &err), 0);
        ck_assert_int_eq(result_set_merge(fx.r, p, &err), DAL_EUNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(err.message, "ENUM and SET"));
        sql_free(s);
    }
    fx_free(&fx);
}
END_TEST

START_TEST(test_unbound_limit)
{
    static const char *one[] = {"1"};
    dal_sql_t *s = analyse("SELECT a FROM t LIMIT 1");
    dal_merge_spec_t *p = NULL;
    dal_error_t err = {0};
    fixture_t fx;

    fx_init(&fx, 1, F_INT("a"));
    fx_add(&fx, one, 1, -1);
    ck_assert_int_eq(merge_spec_build(s, "k", &p, &err), 0);
    ck_assert_int_eq(result_set_merge(fx.r, p, &err), DAL_ESTATE);
    sql_free(s);
    fx_free(&fx);
}
END_TEST

START_TEST(test_name_columns)
{
    static const char *one[] = {"3", "4"};
    dal_sql_t *s = analyse("SELECT SUM(t.x), t.y FROM t WHERE k = 1");
    dal_error_t err = {0};
    fixture_t fx;

    fx_init(&fx, 2, F_DEC("SUM(t_3.x)", 0), F_INT("y"));
    fx_add(&fx, one, 1, -1);
    ck_assert_int_eq(result_name_columns(fx.r, s, &err), 0);
    /* the names come from the statement's analysis, which the result keeps
     * a reference to: they outlive the caller's */
    sql_unref(s);
    ck_assert_str_eq(dal_result_column_name(fx.r, 0), "SUM(t.x)");
    ck_assert_str_eq(dal_result_column_name(fx.r, 1), "y");
    fx_expect(&fx, "3|4\n");
    fx_free(&fx);
}
END_TEST

START_TEST(test_generated_ids)
{
    dal_result_t *r = result_new();
    int64_t *ids = malloc(2 * sizeof *ids);
    size_t n = 9;

    ck_assert_ptr_null(dal_result_generated_ids(r, &n));
    ck_assert_int_eq(n, 0);
    ids[0] = 5;
    ids[1] = 6;
    result_set_ids(r, ids, 2);
    ck_assert_int_eq(dal_result_generated_ids(r, &n)[1], 6);
    ck_assert_int_eq(n, 2);
    dal_result_free(r);
}
END_TEST

static Suite *merge_suite(void)
{
    Suite *s = suite_create("merge");
    TCase *plan = tcase_create("plan"), *val = tcase_create("values"),
          *eng = tcase_create("engine");

    tcase_add_loop_test(plan, test_plan_table, 0, N(plan_cases));
    tcase_add_test(plan, test_limit_params);
    tcase_add_test(plan, test_value_as_count);
    tcase_add_test(plan, test_edits_coalesce);
    tcase_add_test(plan, test_item_names);
    tcase_add_test(val, test_compare);
    tcase_add_test(val, test_format_double);
    tcase_add_test(val, test_aggregates);
    tcase_add_test(eng, test_concat_without_plan);
    tcase_add_test(eng, test_order_merge);
    tcase_add_test(eng, test_limit_offset_hidden);
    tcase_add_test(eng, test_aggregate_one_row);
    tcase_add_test(eng, test_aggregate_limit);
    tcase_add_test(eng, test_aggregate_after_star);
    tcase_add_test(eng, test_aggregate_no_rows);
    tcase_add_test(eng, test_distinct_key_aggregates);
    tcase_add_test(eng, test_join_hidden_order);
    tcase_add_test(eng, test_group_streaming);
    tcase_add_test(eng, test_group_sorted_by_aggregate);
    tcase_add_test(eng, test_group_hidden_keys);
    tcase_add_test(eng, test_distinct);
    tcase_add_test(eng, test_stream_error);
    tcase_add_test(eng, test_free_early);
    tcase_add_test(eng, test_source_errors);
    tcase_add_test(eng, test_unbound_limit);
    tcase_add_test(eng, test_name_columns);
    tcase_add_test(eng, test_generated_ids);
    suite_add_tcase(s, plan);
    suite_add_tcase(s, val);
    suite_add_tcase(s, eng);
    return s;
}

int main(void)
{
    int status = tu_run(merge_suite(), CK_FORK_GETENV);

    return status;
}
