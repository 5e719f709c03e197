/*
 * test_sql.c - unit tests of the SQL lexer, the statement analyser and the
 * analysis cache.
 *
 * Most tests are tables.  An analysis is rendered as lines of text (see
 * render()), and a case lists lines that must appear in that rendering, or,
 * with a leading '!', text that must not appear anywhere in it.  Every input
 * is copied into a heap block of exactly its length (no NUL after it), so
 * AddressSanitizer catches any read past the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "sql_cache.h"
#include "sql_lex.h"
#include "check_run.h"

/* ------------------------------------------------------------ helpers */

/* sql copied into a block of exactly its length; owned by the caller. */
static char *exact_copy(const char *sql, size_t len)
{
    char *b = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(b);
    memcpy(b, sql, len);
    return b;
}

static dal_sql_t *analyse_ok(const char *sql)
{
    size_t len = strlen(sql);
    char *copy = exact_copy(sql, len), err[256];
    dal_sql_t *s = NULL;
    int rc = sql_analyse(copy, len, 0, &s, err, sizeof err);

    free(copy);
    ck_assert_msg(rc == 0, "analyse failed: %s\n  sql: %s", err, sql);
    return s;
}

typedef struct buf {
    char *p;
    size_t n, cap;
} buf_t;

static void bprintf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bprintf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)n + 1 > b->cap) {
        b->cap = (b->n + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

static const char *role_name(int r)
{
    static const char *const n[] = {"FROM", "INTO", "UPDATE", "DELETE", "DDL"};
    return r >= 0 && r <= 4 ? n[r] : "?";
}

static void render_opnd(buf_t *b, const dal_sql_t *s, const dal_sql_opnd_t *o)
{
    char val[512];
    size_t n;

    switch (o->kind) {
    case DAL_OPND_PARAM:
        bprintf(b, " ?%d", o->param_index);
        break;
    case DAL_OPND_LITERAL:
        ck_assert_int_eq(sql_literal_text(s->text, o, val, sizeof val, &n), 0);
        bprintf(b, " lit(%s)", val);
        break;
    default:
        bprintf(b, " expr(%.*s)", (int)o->len, s->text + o->off);
        break;
    }
}

static void render_order(buf_t *b, const dal_sql_t *s, const char *what,
                         const struct dal_sql_order *o)
{
    bprintf(b, "%s %.*s", what, (int)o->len, s->text + o->off);
    if (o->desc)
        bprintf(b, " desc");
    if (o->column)
        bprintf(b, " col=%s", o->column);
    if (o->position)
        bprintf(b, " pos=%d", o->position);
    bprintf(b, "\n");
}

static void render_names(buf_t *b, const char *what, char **names, size_t n)
{
    size_t i;

    if (!n)
        return;
    bprintf(b, "%s=", what);
    for (i = 0; i < n; i++)
        bprintf(b, "%s%s", i ? "," : "", names[i]);
    bprintf(b, "\n");
}

static int colref_char(char c)
{
    return c == '.' || c == '`' || c == '_' || c == '*' || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* "pins A,B" with the names of the DAL_PIN_* bits, nothing for none. */
static void render_pins(buf_t *b, unsigned int pins)
{
    static const char *const names[] = {"user_var", "temp_table", "table_lock", "named_lock",
                                        "prepare", "handler", "session_status", "xa"};
    const char *sep = "pins ";
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (pins & (1u << i)) {
            bprintf(b, "%s%s", sep, names[i]);
            sep = ",";
        }
    if (pins)
        bprintf(b, "\n");
}

static void render_select(buf_t *b, const dal_sql_t *s)
{
    static const char *const agg[] = {"", "COUNT", "COUNT_DISTINCT", "SUM", "MIN", "MAX", "AVG",
                                      "OTHER"};
    size_t i;

    if (s->distinct)
        bprintf(b, "distinct\n");
    for (i = 0; i < s->nitems; i++) {
        const struct dal_sql_item *it = &s->items[i];
        bprintf(b, "item %.*s", (int)it->len, s->text + it->off);
        if (it->alias)
            bprintf(b, " as %s", it->alias);
        if (it->agg == DAL_AGG_OTHER_FUNC)
            bprintf(b, " OTHER");
        else if (it->agg)
            bprintf(b, " %s(%.*s)", agg[it->agg], (int)it->arg_len, s->text + it->arg_off);
        if (it->star)
            bprintf(b, " star");
        bprintf(b, "\n");
    }
    for (i = 0; i < s->ngroup_by; i++)
        render_order(b, s, "group", &s->group_by[i]);
    if (s->group_with_rollup)
        bprintf(b, "rollup\n");
    if (s->has_having)
        bprintf(b, "having=%.*s\n", (int)s->having_len, s->text + s->having_off);
    for (i = 0; i < s->norder_by; i++)
        render_order(b, s, "order", &s->order_by[i]);
    if (s->has_limit) {
        bprintf(b, "limit=%.*s count", (int)s->limit_len, s->text + s->limit_off);
        render_opnd(b, s, &s->limit_count);
        if (s->limit_has_offset) {
            bprintf(b, " offset");
            render_opnd(b, s, &s->limit_offset);
        }
        bprintf(b, "\n");
    }
    if (s->for_update)
        bprintf(b, "for_update\n");
    if (s->has_union)
        bprintf(b, "union\n");
    if (s->needs_master)
        bprintf(b, "needs_master\n");
    if (s->txn_read_only)
        bprintf(b, "txn_read_only\n");
    if (s->temporary)
        bprintf(b, "temporary\n");
}

static void render_insert(buf_t *b, const dal_sql_t *s)
{
    size_t i, k;

    render_names(b, "columns", s->columns, s->ncolumns);
    if (s->nrows)
        bprintf(b, "values=%.*s\n", (int)(s->values_end - s->values_off),
                s->text + s->values_off);
    for (i = 0; i < s->nrows; i++) {
        bprintf(b, "row %.*s =", (int)s->rows[i].len, s->text + s->rows[i].off);
        for (k = 0; k < s->rows[i].nvals; k++)
            render_opnd(b, s, &s->rows[i].vals[k]);
        bprintf(b, "\n");
    }
    if (s->insert_set)
        bprintf(b, "insert_set\n");
    if (s->insert_select)
        bprintf(b, "insert_select\n");
    if (s->insert_ignore)
        bprintf(b, "insert_ignore\n");
    if (s->odku_len)
        bprintf(b, "odku=%.*s\n", (int)s->odku_len, s->text + s->odku_off);
}

/* The whole analysis as lines of text; the caller frees the result. */
static char *render(const dal_sql_t *s)
{
    static const char *const ops[] = {"EQ", "IN", "BETWEEN", "LT", "LE", "GT", "GE", "COLEQ"};
    buf_t b = {NULL, 0, 0};
    size_t i, k, nvalue = 0;

    for (i = 0; i < s->nconds; i++)
        nvalue += s->conds[i].op != DAL_COND_COLEQ;
    /* nconds counts the value conditions; joins are `link` lines */
    bprintf(&b, "kind=%s\nnparams=%zu\nntrefs=%zu\nnconds=%zu\n", sql_kind_name(s->kind),
            s->nparams, s->ntrefs, nvalue);
    for (i = 0; i < s->ntrefs; i++) {
        const struct dal_sql_tref *t = &s->trefs[i];
        bprintf(&b, "tref %.*s", (int)t->len, s->text + t->off);
        if (t->qual_len)
            bprintf(&b, " qual=%.*s", (int)t->qual_len, s->text + t->qual_off);
        bprintf(&b, " -> %s", t->name);
        if (t->alias)
            bprintf(&b, " as %s", t->alias);
        bprintf(&b, " %s @%d%s\n", role_name(t->role), t->scope, t->null_side ? " null" : "");
    }
    for (i = 1; i < s->nscopes; i++)
        bprintf(&b, "scope %zu parent %d kind %d%s%s\n", i, s->scopes[i].parent,
                s->scopes[i].kind, s->scopes[i].rowwise ? " distributive" : "",
                s->scopes[i].null_side ? " null" : "");
    for (i = 0; i < s->nsources; i++)
        bprintf(&b, "source %s @%d\n", s->sources[i].name, s->sources[i].scope);
    for (i = 0; i < s->ncolrefs; i++) {
        uint32_t e = s->colrefs[i].off + s->colrefs[i].len;
        while (e < s->len && colref_char(s->text[e]))
            e++;
        bprintf(&b, "colref %.*s -> %zu\n", (int)(e - s->colrefs[i].off),
                s->text + s->colrefs[i].off, s->colrefs[i].tref);
    }
    if (s->where_len)
        bprintf(&b, "where=%.*s\n", (int)s->where_len, s->text + s->where_off);
    if (s->where_has_or)
        bprintf(&b, "where_has_or\n");
    for (i = 0; i < s->nconds; i++) {
        const struct dal_sql_cond *c = &s->conds[i];
        if (c->op == DAL_COND_COLEQ) {
            bprintf(&b, "link %s%s%s = %s%s%s @%d\n", c->qualifier ? c->qualifier : "",
                    c->qualifier ? "." : "", c->column, c->qualifier2 ? c->qualifier2 : "",
                    c->qualifier2 ? "." : "", c->column2, c->scope);
            continue;
        }
        bprintf(&b, "cond %s%s%s %s", c->qualifier ? c->qualifier : "", c->qualifier ? "." : "",
                c->column, ops[c->op]);
        for (k = 0; k < c->nvals; k++)
            render_opnd(&b, s, &c->vals[k]);
        bprintf(&b, " @%d\n", c->scope);
        bprintf(&b, "condspan %.*s\n", (int)c->len, s->text + c->off);
    }
    if (s->from_end)
        bprintf(&b, "from=%.*s\n", (int)(s->from_end - s->from_off), s->text + s->from_off);
    render_insert(&b, s);
    render_names(&b, "set_columns", s->set_columns, s->nset_columns);
    render_select(&b, s);
    render_pins(&b, s->pins);
    if (s->xa)
        bprintf(&b, "xa=%s\n", s->xa == DAL_SQL_XA_START ? "start" : s->xa == DAL_SQL_XA_STEP ? "step"
                                                                   : "finish");
    if (s->opaque)
        bprintf(&b, "opaque\n");
    if (s->compound)
        bprintf(&b, "compound\n");
    for (i = 0; i < s->nhints; i++)
        bprintf(&b, "hint %s=%s\n", s->hints[i].key, s->hints[i].value);
    return b.p;
}

/* A whole line of text is line, or line followed by its " @scope". */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    const char *p = text;

    while ((p = strstr(p, line)) != NULL) {
        if ((p == text || p[-1] == '\n') &&
            (p[n] == '\n' || p[n] == '\0' || (p[n] == ' ' && p[n + 1] == '@')))
            return 1;
        p++;
    }
    return 0;
}

/* ------------------------------------------------------------ the lexer */

static const struct lex_case {
    const char *sql;
    const char *tokens; /* type:text, space-separated */
} lex_cases[] = {
    {"SELECT a, b FROM t", "I:SELECT I:a P:, I:b I:FROM I:t"},
    {"  \t\n ", ""},
    {"`a``b` `x`.`y`", "Q:`a``b` Q:`x` P:. Q:`y`"},
    {"db.t t.5 a.1e5", "I:db P:. I:t I:t P:. I:5 I:a P:. I:1e5"},
    {"12 1.5 .5 1e10 1.5E-3 1e+5 123. 0x1F 0b101", "N:12 N:1.5 N:.5 N:1e10 N:1.5E-3 N:1e+5 N:123. N:0x1F N:0b101"},
    {"1abc 12e 0x1G 0b12 $a _x", "I:1abc I:12e I:0x1G I:0b12 I:$a I:_x"},
    {"'a''b' \"c\\\"d\" 'e\\\\'", "S:'a''b' S:\"c\\\"d\" S:'e\\\\'"},
    {"x'41' X'4' b'1' N'n' _utf8mb4'u' _latin1 \"v\"", "S:x'41' S:X'4' S:b'1' S:N'n' S:_utf8mb4'u' S:_latin1 \"v\""},
    {"_foo 'w' n 'alias' x 'y'", "I:_foo S:'w' I:n S:'alias' I:x S:'y'"},
    {"a<=>b->>c->d<<e>>f:=g!=h<>i||j&&k<=l>=m", "I:a P:<=> I:b P:->> I:c P:-> I:d P:<< I:e P:>> I:f P::= I:g P:!= I:h P:<> I:i P:|| I:j P:&& I:k P:<= I:l P:>= I:m"},
    {"a=?+-*/%(1);@v", "I:a P:= ?:? P:+ P:- P:* P:/ P:% P:( N:1 P:) P:; P:@ I:v"},
    {"-- c\nx", "C:-- c I:x"},
    {"--\tc\nx", "C:--\tc I:x"},
    {"--", "C:--"},
    {"--x", "P:- P:- I:x"},
    {"a--1", "I:a P:- P:- N:1"},
    {"# c\nx #d", "C:# c I:x C:#d"},
    {"/* c */x/**/ /*/ y */", "C:/* c */ I:x C:/**/ C:/*/ y */"},
    {"/*+ BKA(t) */ /*+ dal a=1 */", "H:/*+ BKA(t) */ H:/*+ dal a=1 */"},
    {"/*! a */", "O:/*! I:a E:*/"},
    {"/*!50100 a*/", "O:/*!50100 I:a E:*/"},
    {"/*!100100 b */", "O:/*!100100 I:b E:*/"},
    {"/*!123 c */", "O:/*! N:123 I:c E:*/"},
    {"/*M!100200 d */", "O:/*M!100200 I:d E:*/"},
    /* mariadb-dump's sandbox marker: no server runs it, so neither does dal */
    {"/*M!999999\\- enable the sandbox mode */ x", "C:/*M!999999\\- enable the sandbox mode */ I:x"},
    {"/*!999999 y */ x", "C:/*!999999 y */ I:x"},
    {"/*M!999999 y", "X:/*M!999999 y"},
    {"/*! a /* c */ b */", "O:/*! I:a C:/* c */ I:b E:*/"},
    {"a */ b", "I:a P:* P:/ I:b"},
    {"'abc", "X:'abc"},
    {"`abc", "X:`abc"},
    {"\"a\\\"", "X:\"a\\\""},
    {"'\\", "X:'\\"},
    {"x /* abc", "I:x X:/* abc"},
    {"x /*+ abc", "I:x X:/*+ abc"},
    {"x /*! y", "I:x O:/*! I:y X:/*! y"},
    {"N'abc", "X:N'abc"},
    {"\xc3\xa9t\xc3\xa9 = 1", "I:\xc3\xa9t\xc3\xa9 P:= N:1"},
    /* the byte classes' edges: 0x80 and 0xff are name bytes, \v and \f blanks */
    {"\x80z\xff\v\f$9\r_", "I:\x80z\xff I:$9 I:_"},
    {"\\", "P:\\"},
};

static char type_letter(dal_tok_type_t t)
{
    static const char letters[] = "EIQSN?PCHOEX";
    return t == DAL_TOK_VC_CLOSE ? 'E' : letters[t];
}

/* The tokens of sql in the mode no_backslash, as the lexing tables write
 * them ("I:select S:'a'"), into b; the lexer's invariants checked on the
 * way. */
static void lex_tokens(const char *sql, int no_backslash, buf_t *b)
{
    size_t len = strlen(sql), prev = 0;
    char *copy = exact_copy(sql, len);
    dal_lexer_t lx;
    dal_token_t t;
    int guard = 0;

    bprintf(b, "%s", "");
    lex_init(&lx, copy, len, no_backslash);
    while ((t = lex_next(&lx)).type != DAL_TOK_EOF) {
        ck_assert_uint_le((size_t)t.off + t.len, len);
        ck_assert_uint_gt(t.len, 0);
        if (t.type != DAL_TOK_ERROR) /* an open VC's error starts at its opener */
            ck_assert_uint_ge(t.off, prev);
        prev = t.off + t.len;
        bprintf(b, "%s%c:%.*s", b->n ? " " : "", type_letter(t.type), (int)t.len, copy + t.off);
        ck_assert_int_lt(++guard, 1000);
    }
    ck_assert_uint_eq(t.off, len);
    ck_assert_int_eq(lex_next(&lx).type, DAL_TOK_EOF); /* EOF is sticky */
    free(copy);
}

START_TEST(test_lex_table)
{
    const struct lex_case *c = &lex_cases[_i];
    buf_t b = {NULL, 0, 0};

    lex_tokens(c->sql, 0, &b);
    ck_assert_msg(strcmp(b.p, c->tokens) == 0, "lexing [%s]\n got: %s\n want: %s", c->sql, b.p,
                  c->tokens);
    free(b.p);
}
END_TEST

/* Versioned executable comments as a MariaDB 10.11.19 server reads them
 * (each checked against one): content it runs is SQL, the rest a comment,
 * so a condition behind a version the server skips never narrows a route. */
static const struct lex_case vc_version_cases[] = {
    {"/*!50700 AND id = 6 */ x", "C:/*!50700 AND id = 6 */ I:x"}, /* MySQL 5.7+'s */
    {"/*M!50700 a */", "O:/*M!50700 I:a E:*/"},
    {"/*!50699 a */", "O:/*!50699 I:a E:*/"},
    {"/*!101119 a */", "O:/*!101119 I:a E:*/"},
    {"/*!101120 a */ x", "C:/*!101120 a */ I:x"},
    {"/*!110000 a */ x", "C:/*!110000 a */ I:x"},
    {"/*!1234567 a */", "C:/*!1234567 a */"},  /* 123456, then content */
    {"/*!1234 a */", "O:/*! N:1234 I:a E:*/"}, /* four digits are content */
    {"/*!101200 x", "X:/*!101200 x"},
};

START_TEST(test_lex_server_version)
{
    const struct lex_case *c = &vc_version_cases[_i];
    buf_t b = {NULL, 0, 0};

    sql_set_server_version(101119);
    lex_tokens(c->sql, 0, &b);
    sql_set_server_version(0);
    ck_assert_msg(strcmp(b.p, c->tokens) == 0, "lexing [%s] for 10.11.19\n got: %s\n want: %s",
                  c->sql, b.p, c->tokens);
    free(b.p);
}
END_TEST

/* The same text in both sql_modes: with NO_BACKSLASH_ESCAPES a backslash
 * in a string is a byte of it and only a doubled quote is a quote. */
static const struct nobs_lex_case {
    const char *sql, *escaping, *no_backslash;
} nobs_lex_cases[] = {
    {"SELECT 'a\\'", "I:SELECT X:'a\\'", "I:SELECT S:'a\\'"},
    {"SELECT 'a\\', 'b'", "I:SELECT S:'a\\', ' X:b'", "I:SELECT S:'a\\' P:, S:'b'"},
    {"SELECT \"a\\\" x", "I:SELECT X:\"a\\\" x", "I:SELECT S:\"a\\\" I:x"},
    {"'a\\''b'", "S:'a\\'' X:b'", "S:'a\\''b'"},
    {"'\\\\'", "S:'\\\\'", "S:'\\\\'"},
    {"id = 5 AND name = 'x\\' OR id = 7 -- '",
     "I:id P:= N:5 I:AND I:name P:= S:'x\\' OR id = 7 -- '",
     "I:id P:= N:5 I:AND I:name P:= S:'x\\' I:OR I:id P:= N:7 C:-- '"},
    {"SELECT 'a\\'; SELECT 2", "I:SELECT X:'a\\'; SELECT 2",
     "I:SELECT S:'a\\' P:; I:SELECT N:2"},
    {"/*!100000 SELECT 'x\\' */", "O:/*!100000 I:SELECT X:'x\\' */",
     "O:/*!100000 I:SELECT S:'x\\' E:*/"},
    {"_utf8mb4'a\\' X'41'", "S:_utf8mb4'a\\' X' N:41 X:'", "S:_utf8mb4'a\\' S:X'41'"},
    {"`a\\` 'b'", "Q:`a\\` S:'b'", "Q:`a\\` S:'b'"},
};

START_TEST(test_lex_no_backslash)
{
    const struct nobs_lex_case *c = &nobs_lex_cases[_i];
    buf_t a = {NULL, 0, 0}, b = {NULL, 0, 0};

    lex_tokens(c->sql, 0, &a);
    lex_tokens(c->sql, 1, &b);
    ck_assert_msg(strcmp(a.p, c->escaping) == 0, "[%s] escaping\n got: %s\n want: %s", c->sql,
                  a.p, c->escaping);
    ck_assert_msg(strcmp(b.p, c->no_backslash) == 0,
                  "[%s] NO_BACKSLASH_ESCAPES\n got: %s\n want: %s", c->sql, b.p, c->no_backslash);
    free(a.p);
    free(b.p);
}
END_TEST

/* The analysis follows the mode: where the WHERE's string ends decides
 * its conditions (the routing case), and a literal's value keeps its
 * backslashes. */
START_TEST(test_analyse_no_backslash)
{
    const char *q = "SELECT * FROM t WHERE id = 5 AND name = 'x\\' OR id = 7 -- '";
    const char *v = "SELECT * FROM t WHERE name = 'it''s\\n\\'";
    dal_sql_t *s;
    char err[128], out[32];
    size_t n;

    ck_assert_int_eq(sql_analyse(q, strlen(q), 0, &s, err, sizeof err), 0);
    ck_assert_int_eq(s->no_backslash, 0);
    ck_assert_int_eq(s->where_has_or, 0);
    ck_assert_uint_eq(s->nconds, 2);
    sql_free(s);
    ck_assert_int_eq(sql_analyse(q, strlen(q), 1, &s, err, sizeof err), 0);
    ck_assert_int_eq(s->no_backslash, 1);
    ck_assert_int_eq(s->where_has_or, 1);
    sql_free(s);
    ck_assert_int_eq(sql_analyse(v, strlen(v), 1, &s, err, sizeof err), 0);
    ck_assert_uint_eq(s->nconds, 1);
    ck_assert_int_eq(sql_literal_text(s->text, &s->conds[0].vals[0], out, sizeof out, &n), 0);
    ck_assert_str_eq(out, "it's\\n\\");
    sql_free(s);
    /* the same text is not a statement in the default mode */
    ck_assert_int_eq(sql_analyse(v, strlen(v), 0, &s, err, sizeof err), -1);
    ck_assert_str_eq(err, "unterminated string at offset 29");
    /* several statements only in the mode */
    ck_assert_int_eq(sql_analyse("SELECT 'a\\'; SELECT 2", 21, 1, &s, err, sizeof err), 0);
    ck_assert_int_eq(s->kind, DAL_SQL_MULTI);
    sql_free(s);
}
END_TEST

START_TEST(test_lex_stops_at_len)
{
    /* the text goes on, but the lexer was told it ends inside the string */
    const char *sql = "SELECT 'abc' FROM t";
    dal_lexer_t lx;
    dal_token_t t;

    lex_init(&lx, sql, 10, 0);
    ck_assert_int_eq(lex_next(&lx).type, DAL_TOK_IDENT);
    t = lex_next(&lx);
    ck_assert_int_eq(t.type, DAL_TOK_ERROR);
    ck_assert_uint_eq(t.off, 7);
    ck_assert_uint_eq(t.len, 3);
    ck_assert_int_eq(lex_next(&lx).type, DAL_TOK_EOF);

    lex_init(&lx, "abc", 0, 0);
    ck_assert_int_eq(lex_next(&lx).type, DAL_TOK_EOF);
}
END_TEST

START_TEST(test_tok_eq_and_unquote)
{
    const char *sql = "select `se``l` x";
    dal_lexer_t lx;
    dal_token_t a, b, c;
    char out[8];

    lex_init(&lx, sql, strlen(sql), 0);
    a = lex_next(&lx);
    b = lex_next(&lx);
    c = lex_next(&lx);
    ck_assert(tok_eq(sql, &a, "SELECT"));
    ck_assert(tok_eq(sql, &a, "select"));
    ck_assert(!tok_eq(sql, &a, "SELEC"));
    ck_assert(!tok_eq(sql, &a, "SELECTS"));
    ck_assert(!tok_eq(sql, &b, "se`l")); /* only IDENT tokens compare */
    ck_assert_uint_eq(ident_unquote(sql, &b, out, sizeof out), 4);
    ck_assert_str_eq(out, "se`l");
    ck_assert_uint_eq(ident_unquote(sql, &b, out, 3), 4); /* truncated, still NUL-ended */
    ck_assert_str_eq(out, "se");
    ck_assert_uint_eq(ident_unquote(sql, &b, NULL, 0), 4);
    ck_assert_uint_eq(ident_unquote(sql, &c, out, sizeof out), 1);
    ck_assert_str_eq(out, "x");
}
END_TEST

/* ------------------------------------------------------------ kinds */

static const struct kind_case {
    const char *sql;
    dal_sql_kind_t kind;
} kind_cases[] = {
    {"SELECT 1", DAL_SQL_SELECT},
    {"  /* c */ -- x\n # y\n /*+ dal raw */ select 1", DAL_SQL_SELECT},
    {"(SELECT a FROM t)", DAL_SQL_SELECT},
    {"((SELECT a FROM t) UNION (SELECT b FROM u))", DAL_SQL_SELECT},
    {"WITH c AS (SELECT 1) SELECT * FROM c", DAL_SQL_SELECT},
    {"WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c", DAL_SQL_SELECT},
    {"WITH c AS (SELECT 1) UPDATE t SET a = 1", DAL_SQL_UPDATE},
    {"WITH c AS (SELECT 1) DELETE FROM t", DAL_SQL_DELETE},
    {"INSERT INTO t VALUES (1)", DAL_SQL_INSERT},
    {"insert t values (1)", DAL_SQL_INSERT},
    {"REPLACE INTO t VALUES (1)", DAL_SQL_REPLACE},
    {"UPDATE t SET a = 1", DAL_SQL_UPDATE},
    {"DELETE FROM t", DAL_SQL_DELETE},
    {"CREATE TABLE t (a INT)", DAL_SQL_DDL},
    {"ALTER TABLE t ADD b INT", DAL_SQL_DDL},
    {"DROP TABLE t", DAL_SQL_DDL},
    {"TRUNCATE t", DAL_SQL_DDL},
    {"RENAME TABLE a TO b", DAL_SQL_DDL},
    {"CREATE DATABASE d", DAL_SQL_DDL},
    {"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", DAL_SQL_DDL},
    {"BEGIN", DAL_SQL_BEGIN},
    {"begin work", DAL_SQL_BEGIN},
    {"START TRANSACTION", DAL_SQL_BEGIN},
    {"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", DAL_SQL_BEGIN},
    {"BEGIN NOT ATOMIC SELECT 1; END", DAL_SQL_OTHER},
    {"FOR i IN 0..50 DO INSERT INTO t1 VALUES (i, REPEAT('a', 3)); END FOR", DAL_SQL_OTHER},
    {"lbl: WHILE @i < 3 DO SET @i = @i + 1; END WHILE lbl", DAL_SQL_OTHER},
    {"IF @a > 0 THEN SELECT 1; ELSE SELECT 2; END IF", DAL_SQL_OTHER},
    {"l1: LOOP LEAVE l1; END LOOP", DAL_SQL_OTHER},
    {"REPEAT SET @i = @i + 1; UNTIL @i > 3 END REPEAT", DAL_SQL_OTHER},
    {"CASE WHEN @a THEN SELECT 1; ELSE BEGIN END; END CASE", DAL_SQL_OTHER},
    {"COMMIT", DAL_SQL_COMMIT},
    {"COMMIT WORK AND NO CHAIN", DAL_SQL_COMMIT},
    {"ROLLBACK", DAL_SQL_ROLLBACK},
    {"rollback work", DAL_SQL_ROLLBACK},
    {"ROLLBACK TO SAVEPOINT s1", DAL_SQL_OTHER},
    {"ROLLBACK WORK TO s1", DAL_SQL_OTHER},
    {"SAVEPOINT s1", DAL_SQL_OTHER},
    {"SET autocommit = 0", DAL_SQL_SET},
    {"SET NAMES utf8mb4", DAL_SQL_SET},
    {"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", DAL_SQL_SET},
    {"SET STATEMENT max_statement_time=1 FOR SELECT a FROM t", DAL_SQL_SELECT},
    {"SHOW TABLES", DAL_SQL_SHOW},
    {"EXPLAIN SELECT 1", DAL_SQL_OTHER},
    {"DESCRIBE t", DAL_SQL_OTHER},
    {"DESC t", DAL_SQL_OTHER},
    {"CALL p()", DAL_SQL_OTHER},
    {"USE db", DAL_SQL_OTHER},
    {"TABLE t", DAL_SQL_OTHER},
    {"/*! SELECT */ 1", DAL_SQL_SELECT},
    {"/*M!999999\\- enable the sandbox mode */ INSERT INTO t VALUES (1)", DAL_SQL_INSERT},
    {"SELECT 1;", DAL_SQL_SELECT},
    {"SELECT 1 ; ; -- done", DAL_SQL_SELECT},
    {"SELECT 1; SELECT 2", DAL_SQL_MULTI},
    {"UPDATE t SET a = 1; DROP TABLE t", DAL_SQL_MULTI},
    {"SELECT ';' ; DELETE FROM t", DAL_SQL_MULTI},
    {"SELECT ';', \"';'\", `;` -- ;\n", DAL_SQL_SELECT},
};

START_TEST(test_kind_table)
{
    const struct kind_case *c = &kind_cases[_i];
    dal_sql_t *s = analyse_ok(c->sql);

    ck_assert_msg(s->kind == c->kind, "[%s]: got %s, want %s", c->sql, sql_kind_name(s->kind),
                  sql_kind_name(c->kind));
    sql_free(s);
}
END_TEST

/* ------------------------------------------------------------ analysis */

#define MAXW 16
static const struct an_case {
    const char *sql;
    const char *want[MAXW]; /* lines that must appear; "!text" must not appear */
} an_cases[] = {
    /* --- names --- */
    {"SELECT a FROM wm_food", {"kind=SELECT", "ntrefs=1", "tref wm_food -> wm_food FROM", "from=wm_food", "item a"}},
    {"SELECT a FROM `wm food`", {"tref `wm food` -> wm food FROM"}},
    {"SELECT a FROM `we``ird`", {"tref `we``ird` -> we`ird FROM"}},
    {"SELECT a FROM db.wm_food", {"tref wm_food qual=db. -> wm_food FROM"}},
    {"SELECT a FROM `db`.`wm_food` AS `f`", {"tref `wm_food` qual=`db`. -> wm_food as f FROM"}},
    {"SELECT a FROM db . t", {"tref t qual=db . -> t FROM"}},
    {"SELECT a FROM t AS x", {"tref t -> t as x FROM"}},
    {"SELECT a FROM t x", {"tref t -> t as x FROM"}},
    {"SELECT a FROM t1 x, t2 AS y, t3", {"ntrefs=3", "tref t1 -> t1 as x FROM", "tref t2 -> t2 as y FROM", "tref t3 -> t3 FROM"}},
    {"SELECT a FROM t PARTITION (p0, p1) AS x USE INDEX (i1) IGNORE KEY FOR ORDER BY (i2) WHERE b = 1",
     {"ntrefs=1", "tref t -> t as x FROM", "cond b EQ lit(1)", "!tref p0", "!tref i1", "!order"}},
    {"SELECT a FROM t FORCE INDEX FOR JOIN (i) JOIN u ON t.k = u.k", {"ntrefs=2", "tref u -> u FROM"}},
    {"SELECT t.a, u.b FROM t JOIN u ON t.id = u.id",
     {"colref t.a -> 0", "colref u.b -> 1", "colref t.id -> 0", "colref u.id -> 1"}},
    {"SELECT f.a FROM wm_food f WHERE f.b = 1", {"!colref"}},
    {"SELECT db.wm_food.a FROM db.wm_food", {"colref wm_food.a -> 0", "!colref db"}},
    {"SELECT WM_FOOD.a, `wm_food`.b, wm_food.* FROM wm_food",
     {"colref WM_FOOD.a -> 0", "colref `wm_food`.b -> 0", "colref wm_food.* -> 0"}},
    {"SELECT wm_food.f(1), @@session.wm_food FROM wm_food", {"!colref"}},
    {"SELECT x FROM t WHERE y = 'wm_food.a' -- t.z\n", {"ntrefs=1", "!colref"}},
    {"SELECT `from`, `select` FROM `where`", {"ntrefs=1", "tref `where` -> where FROM", "item `from`"}},
    {"SELECT a FROM DUAL", {"ntrefs=0"}},
    /* --- strings and comments never name tables --- */
    {"SELECT 'FROM x', \"JOIN y\" FROM t WHERE a = 'x'' FROM z' AND b = \"\\\" JOIN w\"",
     {"ntrefs=1", "tref t -> t FROM", "cond a EQ lit(x' FROM z)", "cond b EQ lit(\" JOIN w)"}},
    {"SELECT a FROM t WHERE s = 'it''s \\' a ? -- FROM x' AND c = ?",
     {"nparams=1", "ntrefs=1", "cond s EQ lit(it's ' a ? -- FROM x)", "cond c EQ ?0"}},
    {"SELECT a -- FROM x\nFROM t # FROM y\n/* FROM z */ WHERE b = 1", {"ntrefs=1", "tref t -> t FROM", "cond b EQ lit(1)"}},
    {"SELECT a--x\nFROM t WHERE b = 1--x", {"item a--x", "cond b EQ expr(1--x)"}},
    {"SELECT a FROM t WHERE b = 1 -- AND c = 2", {"nconds=1", "!c EQ"}},
    {"SELECT a FROM t /*! JOIN u ON t.k = u.k */ WHERE b = 1",
     {"ntrefs=2", "tref u -> u FROM", "colref u.k -> 1", "cond b EQ lit(1)"}},
    {"SELECT a FROM t /*!50100 , u */ WHERE /*!50100 c = ? AND */ b = ?",
     {"nparams=2", "ntrefs=2", "tref u -> u FROM", "cond c EQ ?0", "cond b EQ ?1"}},
    {"SELECT /*!40001 SQL_NO_CACHE */ a FROM t", {"item a", "!item SQL_NO_CACHE"}},
    {"SELECT a FROM t /*M!100200 JOIN v */", {"ntrefs=2", "tref v -> v FROM"}},
    {"SELECT a FROM t /* JOIN v */ /*+ JOIN w */", {"ntrefs=1"}},
    /* --- placeholders --- */
    {"SELECT ? FROM t WHERE a = ? AND b IN (?, '?', ?) /* ? */ LIMIT ?",
     {"nparams=5", "cond a EQ ?1", "cond b IN ?2 lit(?) ?3", "limit=LIMIT ? count ?4"}},
    {"INSERT INTO t VALUES (?, '?', \"?\", `?`, ?)", {"nparams=2", "row (?, '?', \"?\", `?`, ?) = ?0 lit(?) lit(?) expr(`?`) ?1"}},
    /* --- WHERE conditions --- */
    {"SELECT a FROM t WHERE k = 5", {"where=k = 5", "nconds=1", "cond k EQ lit(5)", "condspan k = 5"}},
    {"SELECT a FROM t WHERE k = -5 AND j = - 2.5 AND i = +3", {"cond k EQ lit(-5)", "cond j EQ lit(-2.5)", "cond i EQ lit(3)"}},
    {"SELECT a FROM t WHERE k = 'abc' AND j = NULL AND m = TRUE", {"cond k EQ lit(abc)", "cond j EQ lit(NULL)", "cond m EQ lit(TRUE)"}},
    {"SELECT a FROM t WHERE t.k = ? AND db.t.j = ?", {"cond t.k EQ ?0", "cond t.j EQ ?1"}},
    {"SELECT a FROM t WHERE `k` = 1 AND `t`.`j` = 2", {"cond k EQ lit(1)", "cond t.j EQ lit(2)"}},
    {"SELECT a FROM t WHERE 5 = k AND ? = j AND 'x' = t.m AND -1 = n",
     {"nconds=4", "cond k EQ lit(5)", "cond j EQ ?0", "cond t.m EQ lit(x)", "cond n EQ lit(-1)", "condspan 5 = k"}},
    {"SELECT a FROM t WHERE k < 1 AND k <= 2 AND k > 3 AND k >= 4",
     {"cond k LT lit(1)", "cond k LE lit(2)", "cond k GT lit(3)", "cond k GE lit(4)"}},
    {"SELECT a FROM t WHERE 1 < k AND 2 <= k AND 3 > k AND 4 >= k",
     {"cond k GT lit(1)", "cond k GE lit(2)", "cond k LT lit(3)", "cond k LE lit(4)"}},
    {"SELECT a FROM t WHERE k IN (1, -2, 'x', ?, NOW(), 1+2)",
     {"cond k IN lit(1) lit(-2) lit(x) ?0 expr(NOW()) expr(1+2)", "condspan k IN (1, -2, 'x', ?, NOW(), 1+2)"}},
    {"SELECT a FROM t WHERE k IN (SELECT b FROM u)", {"nconds=0", "tref u -> u FROM"}},
    {"SELECT a FROM t WHERE k NOT IN (1, 2) AND j != 3 AND m <> 4 AND NOT n = 5 AND p NOT BETWEEN 1 AND 2", {"nconds=0"}},
    {"SELECT a FROM t WHERE k BETWEEN 1 AND 10 AND j = 2", {"nconds=2", "cond k BETWEEN lit(1) lit(10)", "condspan k BETWEEN 1 AND 10", "cond j EQ lit(2)"}},
    {"SELECT a FROM t WHERE k BETWEEN ? AND ? + 1", {"cond k BETWEEN ?0 expr(? + 1)"}},
    {"SELECT a FROM t WHERE k = 1 OR j = 2", {"where_has_or", "nconds=0"}},
    {"SELECT a FROM t WHERE k = 1 AND j = 2 OR m = 3", {"where_has_or", "nconds=0"}},
    {"SELECT a FROM t WHERE k = 1 || j = 2", {"where_has_or", "nconds=0"}},
    {"SELECT a FROM t WHERE k = 1 XOR j = 2", {"where_has_or", "nconds=0"}},
    {"SELECT a FROM t WHERE (k = 1 OR j = 2)", {"where_has_or", "nconds=0"}},
    {"SELECT a FROM t WHERE (k = 1 OR j = 2) AND m = 3", {"!where_has_or", "nconds=1", "cond m EQ lit(3)"}},
    {"SELECT a FROM t WHERE (k = 1 AND (j = 2 AND (m = 3))) AND n = 4",
     {"nconds=4", "cond k EQ lit(1)", "cond j EQ lit(2)", "cond m EQ lit(3)", "cond n EQ lit(4)"}},
    {"SELECT a FROM t WHERE k = 1 && j = 2", {"nconds=2"}},
    {"SELECT a FROM t WHERE CASE WHEN k = 1 AND j = 2 OR m = 1 THEN 1 END = 1 AND n = 2",
     {"!where_has_or", "nconds=1", "cond n EQ lit(2)"}},
    {"SELECT a FROM t WHERE k = (SELECT MAX(k) FROM u WHERE u.z = 1 OR u.y = 2)", {"!where_has_or", "cond k EQ expr((SELECT MAX(k) FROM u WHERE u.z = 1 OR u.y = 2))"}},
    {"SELECT a FROM t JOIN u ON t.a = u.b WHERE t.x = u.y AND f(k) = 1 AND k + 1 = 2", {"nconds=0"}},
    {"SELECT a FROM t WHERE k = NOW() AND j > DATE_SUB(NOW(), INTERVAL 1 DAY)",
     {"cond k EQ expr(NOW())", "cond j GT expr(DATE_SUB(NOW(), INTERVAL 1 DAY))"}},
    {"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k) AND k = 1",
     {"ntrefs=2", "nconds=1", "cond k EQ lit(1)"}},
    {"SELECT a FROM t WHERE k LIKE 'x%' AND j IS NULL AND m = 1", {"nconds=1", "cond m EQ lit(1)"}},
    /* --- subqueries and joins --- */
    {"SELECT * FROM t1, (SELECT * FROM t2 WHERE t2.x = 1) AS d, t3 x WHERE t1.b = (SELECT MAX(b) FROM t4)",
     {"ntrefs=4", "tref t1 -> t1 FROM", "tref t2 -> t2 FROM", "tref t3 -> t3 as x FROM", "tref t4 -> t4 FROM", "!tref d", "nconds=2", "cond t2.x EQ lit(1) @2", "source d @1"}},
    {"SELECT (SELECT COUNT(*) FROM u WHERE u.k = t.k) AS c FROM t", {"ntrefs=2", "tref u -> u FROM", "item (SELECT COUNT(*) FROM u WHERE u.k = t.k) as c"}},
    {"SELECT a FROM t WHERE k IN (SELECT k FROM (SELECT k FROM deep WHERE x IN (SELECT y FROM deeper)) d)",
     {"ntrefs=3", "tref deep -> deep FROM", "tref deeper -> deeper FROM"}},
    {"SELECT a FROM t1 INNER JOIN t2 ON t1.a = t2.a LEFT JOIN t3 USING (a) RIGHT OUTER JOIN t4 ON t4.b = t3.b "
     "CROSS JOIN t5 STRAIGHT_JOIN t6 ON 1 NATURAL LEFT JOIN t7 LEFT OUTER JOIN t8 ON LEFT(t8.x, 2) = 'ab' JOIN t9",
     {"ntrefs=9", "tref t1 -> t1 FROM", "tref t5 -> t5 FROM", "tref t8 -> t8 FROM", "tref t9 -> t9 FROM", "!tref a "}},
    {"SELECT a FROM t1 JOIN (t2 JOIN t3 ON t2.a = t3.a) ON t1.a = t2.a", {"ntrefs=3", "tref t3 -> t3 FROM"}},
    {"SELECT a FROM t1 JOIN t2 ON t1.k = t2.k AND t2.z IN (SELECT z FROM t3) WHERE t1.k = 1", {"ntrefs=3", "tref t3 -> t3 FROM", "cond t1.k EQ lit(1)"}},
    {"SELECT a FROM t1 JOIN t2 JOIN t3 ON t2.a = t3.a ON t1.a = t2.a", {"ntrefs=3"}},
    {"SELECT a FROM { OJ t1 LEFT OUTER JOIN t2 ON t1.a = t2.a }", {"ntrefs=2", "tref t2 -> t2 FROM"}},
    {"SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.a = t.a) AS l", {"ntrefs=2", "tref u -> u FROM"}},
    {"SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (x INT PATH '$')) AS j, t", {"ntrefs=1", "tref t -> t FROM"}},
    {"SELECT * FROM ((SELECT a FROM t1) UNION (SELECT a FROM t2)) AS u", {"ntrefs=2", "tref t1 -> t1 FROM", "tref t2 -> t2 FROM", "!union"}},
    {"SELECT * FROM t WHERE k = ((SELECT 1 FROM u) + (SELECT 2 FROM v))", {"ntrefs=3", "tref v -> v FROM"}},
    {"WITH c AS (SELECT * FROM t WHERE k = 1), d AS (SELECT * FROM c) SELECT * FROM c JOIN d JOIN u",
     {"ntrefs=2", "tref t -> t FROM", "tref u -> u FROM", "!tref c", "!tref d"}},
    {"WITH c AS (SELECT 1) SELECT * FROM db.c", {"ntrefs=1", "tref c qual=db. -> c FROM"}},
    /* --- SELECT shape --- */
    {"SELECT DISTINCT a, b FROM t", {"distinct", "item a", "item b"}},
    {"SELECT SQL_CALC_FOUND_ROWS DISTINCTROW a FROM t", {"distinct", "item a"}},
    {"SELECT a AS x, b y, c 'z', d AS \"w\", COUNT(*) n, (a + b) AS s, NOW() t, e FROM t",
     {"item a as x", "item b as y", "item c as z", "item d as w", "item COUNT(*) as n COUNT(*)", "item (a + b) as s", "item NOW() as t", "item e"}},
    {"SELECT a + b, NOT c, d IS NULL, e IS NOT TRUE, x COLLATE utf8mb4_bin, NOW() + INTERVAL 1 DAY, 'a' 'b', CASE WHEN a THEN 1 ELSE 0 END, t.c FROM t",
     {"item a + b", "item NOT c", "item d IS NULL", "item e IS NOT TRUE", "item x COLLATE utf8mb4_bin", "item NOW() + INTERVAL 1 DAY", "item 'a' 'b'", "item CASE WHEN a THEN 1 ELSE 0 END", "item t.c", "! as "}},
    {"SELECT *, t.*, db.t.* FROM t", {"item * star", "item t.* star", "item db.t.* star"}},
    {"SELECT COUNT(*), COUNT(1), COUNT(DISTINCT a, b), COUNT(ALL a) FROM t",
     {"item COUNT(*) COUNT(*)", "item COUNT(1) COUNT(1)", "item COUNT(DISTINCT a, b) COUNT_DISTINCT(a, b)", "item COUNT(ALL a) COUNT(a)"}},
    {"SELECT SUM(a), MIN(b), MAX(c), AVG(d), MIN(DISTINCT e), sum( f * 2 ) FROM t",
     {"item SUM(a) SUM(a)", "item MIN(b) MIN(b)", "item MAX(c) MAX(c)", "item AVG(d) AVG(d)", "item MIN(DISTINCT e) MIN(e)", "item sum( f * 2 ) SUM(f * 2)"}},
    {"SELECT SUM(DISTINCT a), AVG(DISTINCT b), GROUP_CONCAT(c), STDDEV(d), SUM(a)/COUNT(*), ROUND(AVG(e), 2), COUNT(*) OVER (PARTITION BY a) FROM t",
     {"item SUM(DISTINCT a) OTHER", "item AVG(DISTINCT b) OTHER", "item GROUP_CONCAT(c) OTHER", "item STDDEV(d) OTHER",
      "item SUM(a)/COUNT(*) OTHER", "item ROUND(AVG(e), 2) OTHER", "item COUNT(*) OVER (PARTITION BY a) OTHER"}},
    {"SELECT (SELECT MAX(x) FROM u), UPPER(a), COUNT FROM t", {"item (SELECT MAX(x) FROM u)", "item UPPER(a)", "item COUNT"}},
    {"SELECT a FROM t ORDER BY a DESC, b ASC, 3, t.c, a + 1 DESC, `d` desc",
     {"order a desc col=a", "order b col=b", "order 3 pos=3", "order t.c col=c", "order a + 1 desc", "order `d` desc col=d"}},
    {"SELECT a, COUNT(*) FROM t GROUP BY a, 2 HAVING COUNT(*) > 1 ORDER BY 2 DESC",
     {"group a col=a", "group 2 pos=2", "having=COUNT(*) > 1", "order 2 desc pos=2"}},
    {"SELECT a, SUM(b) FROM t GROUP BY a WITH ROLLUP", {"group a col=a", "rollup"}},
    {"SELECT window, SUM(b) OVER w FROM t WHERE k = 1 WINDOW w AS (ORDER BY (SELECT 1 FROM u)) ORDER BY a",
     {"item window", "item SUM(b) OVER w OTHER", "ntrefs=2", "cond k EQ lit(1)", "order a col=a"}},
    {"SELECT a FROM t GROUP BY a HAVING a IN (SELECT b FROM u)", {"ntrefs=2", "having=a IN (SELECT b FROM u)"}},
    {"SELECT a FROM t LIMIT 10", {"limit=LIMIT 10 count lit(10)", "!offset"}},
    {"SELECT a FROM t LIMIT 20, 10", {"limit=LIMIT 20, 10 count lit(10) offset lit(20)"}},
    {"SELECT a FROM t LIMIT 10 OFFSET 20", {"limit=LIMIT 10 OFFSET 20 count lit(10) offset lit(20)"}},
    {"SELECT a FROM t LIMIT ?, ?", {"limit=LIMIT ?, ? count ?1 offset ?0"}},
    {"SELECT a FROM t LIMIT ? OFFSET ? FOR UPDATE", {"limit=LIMIT ? OFFSET ? count ?0 offset ?1", "for_update"}},
    {"SELECT a FROM t WHERE k = 1 FOR UPDATE NOWAIT", {"for_update", "cond k EQ lit(1)"}},
    {"SELECT a FROM t LOCK IN SHARE MODE", {"for_update"}},
    {"SELECT a FROM t FOR SHARE SKIP LOCKED", {"for_update"}},
    {"SELECT a FROM t WHERE k IN (SELECT k FROM u LIMIT 1 FOR UPDATE) ORDER BY a", {"!for_update", "!limit", "order a col=a"}},
    {"SELECT a FROM t WHERE b = 1 GROUP BY a HAVING SUM(c) > 0 ORDER BY a LIMIT 5",
     {"where=b = 1", "from=t", "group a col=a", "having=SUM(c) > 0", "order a col=a", "limit=LIMIT 5 count lit(5)"}},
    {"SELECT a INTO @x FROM t WHERE b = 1", {"ntrefs=1", "cond b EQ lit(1)", "item a"}},
    {"SELECT a FROM t1 WHERE k = 1 UNION ALL SELECT a FROM t2 ORDER BY a LIMIT 5",
     {"union", "ntrefs=2", "nconds=1", "cond k EQ lit(1) @1", "order a col=a", "limit=LIMIT 5 count lit(5)"}},
    {"(SELECT a FROM t1 WHERE k = 1) UNION (SELECT a FROM t2) ORDER BY 1 DESC LIMIT 2",
     {"union", "item a", "order 1 desc pos=1", "limit=LIMIT 2 count lit(2)"}},
    {"(SELECT a FROM t1 WHERE k = 1 ORDER BY a LIMIT 3)", {"!union", "nconds=1", "order a col=a", "limit=LIMIT 3 count lit(3)"}},
    /* --- INSERT / REPLACE --- */
    {"INSERT INTO t (a, b) VALUES (1, 'x')",
     {"kind=INSERT", "tref t -> t INTO", "columns=a,b", "values=(1, 'x')", "row (1, 'x') = lit(1) lit(x)"}},
    {"INSERT INTO db.wm_food (`id`, name, t.price) VALUES (?, ?, ?), (?, ?, ?)",
     {"tref wm_food qual=db. -> wm_food INTO", "columns=id,name,price", "row (?, ?, ?) = ?0 ?1 ?2", "row (?, ?, ?) = ?3 ?4 ?5", "values=(?, ?, ?), (?, ?, ?)"}},
    {"INSERT INTO t VALUES (1, CONCAT('a,b', ')'), 'x'), (NOW(), 1+2, (3)), (-4, f(1, (2), 3), 'it''s')",
     {"row (1, CONCAT('a,b', ')'), 'x') = lit(1) expr(CONCAT('a,b', ')')) lit(x)",
      "row (NOW(), 1+2, (3)) = expr(NOW()) expr(1+2) expr((3))", "row (-4, f(1, (2), 3), 'it''s') = lit(-4) expr(f(1, (2), 3)) lit(it's)",
      "!columns"}},
    {"INSERT t VALUE (1)", {"tref t -> t INTO", "row (1) = lit(1)"}},
    {"INSERT INTO t () VALUES ()", {"row () =", "!columns"}},
    {"INSERT LOW_PRIORITY IGNORE INTO t (a) VALUES (1)", {"insert_ignore", "columns=a"}},
    {"INSERT INTO t SET a = 1, b = ?, c = NOW()",
     {"insert_set", "columns=a,b,c", "row a = 1, b = ?, c = NOW() = lit(1) ?0 expr(NOW())", "values=a = 1, b = ?, c = NOW()"}},
    {"INSERT INTO t (a, b) SELECT x, y FROM s WHERE k = 1",
     {"insert_select", "ntrefs=2", "tref t -> t INTO @0", "tref s -> s FROM @1", "columns=a,b", "nconds=1", "cond k EQ lit(1) @1", "!row"}},
    {"INSERT INTO t (SELECT * FROM s)", {"insert_select", "tref s -> s FROM", "!columns"}},
    {"INSERT INTO t WITH c AS (SELECT 1) SELECT * FROM c JOIN s", {"insert_select", "ntrefs=2", "tref s -> s FROM"}},
    {"INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = a + 1, b = VALUES(b)",
     {"odku=ON DUPLICATE KEY UPDATE a = a + 1, b = VALUES(b)", "row (1) = lit(1)"}},
    {"INSERT INTO t (a) VALUES (1) AS new ON DUPLICATE KEY UPDATE a = new.a", {"odku=ON DUPLICATE KEY UPDATE a = new.a", "row (1) = lit(1)"}},
    {"INSERT INTO t (a, b) SELECT x, y FROM s JOIN u ON s.k = u.k ON DUPLICATE KEY UPDATE a = s.x",
     {"insert_select", "ntrefs=3", "odku=ON DUPLICATE KEY UPDATE a = s.x", "colref s.x -> 1"}},
    {"INSERT INTO t (a) VALUES ((SELECT MAX(a) FROM u))", {"ntrefs=2", "tref u -> u FROM"}},
    {"INSERT INTO t (a) VALUES (1) RETURNING id", {"row (1) = lit(1)", "!odku"}},
    {"REPLACE INTO t (a) VALUES (1), (2)", {"kind=REPLACE", "tref t -> t INTO", "row (1) = lit(1)", "row (2) = lit(2)"}},
    {"INSERT INTO t (a) VALUES (x'4142'), (_utf8mb4'z'), (N'n'), ('a\\tb\\%'), (0x1F)",
     {"row (x'4142') = lit(AB)", "row (_utf8mb4'z') = lit(z)", "row (N'n') = lit(n)", "row ('a\\tb\\%') = lit(a\tb\\%)", "row (0x1F) = lit(0x1F)"}},
    /* --- UPDATE --- */
    {"UPDATE wm_food SET name = ?, price = price + 1 WHERE wm_poi_id = ? AND id = ?",
     {"kind=UPDATE", "tref wm_food -> wm_food UPDATE", "set_columns=name,price", "cond wm_poi_id EQ ?1", "cond id EQ ?2", "nparams=3"}},
    {"UPDATE LOW_PRIORITY IGNORE t AS x SET x.a = 1, `b` = (SELECT MAX(c) FROM u) WHERE x.k IN (1, 2) ORDER BY a DESC LIMIT 10",
     {"tref t -> t as x UPDATE", "tref u -> u FROM", "set_columns=a,b", "cond x.k IN lit(1) lit(2)", "order a desc col=a", "limit=LIMIT 10 count lit(10)"}},
    {"UPDATE t1 JOIN t2 ON t1.k = t2.k SET t1.a = t2.b WHERE t1.k = 5",
     {"tref t1 -> t1 UPDATE", "tref t2 -> t2 UPDATE", "set_columns=a", "cond t1.k EQ lit(5)"}},
    {"UPDATE t1, t2 SET t1.a = 1 WHERE t1.k = t2.k", {"ntrefs=2", "nconds=0"}},
    {"UPDATE t SET a = 1 WHERE k = 1 OR j = 2", {"where_has_or", "nconds=0"}},
    /* --- DELETE --- */
    {"DELETE FROM wm_food WHERE id = ? LIMIT 1",
     {"kind=DELETE", "tref wm_food -> wm_food DELETE", "cond id EQ ?0", "limit=LIMIT 1 count lit(1)", "from=wm_food"}},
    {"DELETE LOW_PRIORITY QUICK IGNORE FROM t AS x WHERE x.k = 1 ORDER BY a", {"tref t -> t as x DELETE", "cond x.k EQ lit(1)", "order a col=a"}},
    {"DELETE f FROM wm_food AS f JOIN wm_poi p ON f.poi = p.id WHERE f.k = 1",
     {"ntrefs=2", "tref wm_food -> wm_food as f DELETE", "tref wm_poi -> wm_poi as p FROM", "cond f.k EQ lit(1)"}},
    {"DELETE t1, t2.* FROM t1 JOIN t2 JOIN t3 WHERE t1.id = t2.id",
     {"ntrefs=5", "tref t3 -> t3 FROM", "!FROM\ntref t1 -> t1 FROM"}},
    {"DELETE FROM a1, t2 USING t1 AS a1 INNER JOIN t2 JOIN t3 USING (k) WHERE t1.id = 4",
     {"tref t1 -> t1 as a1 DELETE", "tref t3 -> t3 FROM", "cond t1.id EQ lit(4)", "from=t1 AS a1 INNER JOIN t2 JOIN t3 USING (k)"}},
    {"DELETE FROM t WHERE k IN (SELECT k FROM u)", {"tref u -> u FROM", "tref t -> t DELETE"}},
    /* --- DDL --- */
    {"CREATE TABLE IF NOT EXISTS db.t (id INT, pid INT REFERENCES p (id), FOREIGN KEY (x) REFERENCES q (y)) ENGINE=InnoDB",
     {"ntrefs=3", "tref t qual=db. -> t DDL", "tref p -> p FROM", "tref q -> q FROM", "!tref id"}},
    {"CREATE TEMPORARY TABLE t2 LIKE t1", {"tref t2 -> t2 DDL", "tref t1 -> t1 FROM"}},
    {"CREATE TABLE t2 (LIKE db.t1)", {"tref t2 -> t2 DDL", "tref t1 qual=db. -> t1 FROM"}},
    {"CREATE TABLE t2 AS SELECT * FROM t1 WHERE a = 1", {"tref t2 -> t2 DDL", "tref t1 -> t1 FROM"}},
    {"CREATE TABLE t2 (a INT) IGNORE SELECT a FROM t1", {"tref t2 -> t2 DDL", "tref t1 -> t1 FROM"}},
    {"CREATE TABLE t (a INT) PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10))", {"ntrefs=1", "tref t -> t DDL"}},
    {"CREATE UNIQUE INDEX ix ON wm_food (a, b)", {"ntrefs=1", "tref wm_food -> wm_food DDL", "!ix"}},
    {"CREATE INDEX ix USING BTREE ON db.t (a)", {"tref t qual=db. -> t DDL"}},
    {"CREATE OR REPLACE ALGORITHM = MERGE DEFINER = 'u'@'%' SQL SECURITY INVOKER VIEW v AS SELECT a FROM t",
     {"ntrefs=2", "tref v -> v DDL", "tref t -> t FROM"}},
    {"ALTER TABLE wm_food ADD COLUMN c INT, ADD INDEX (c)", {"ntrefs=1", "tref wm_food -> wm_food DDL"}},
    {"ALTER TABLE t1 RENAME TO t2", {"tref t1 -> t1 DDL", "tref t2 -> t2 DDL"}},
    {"ALTER TABLE t RENAME COLUMN a TO b, RENAME INDEX i TO j, RENAME KEY k TO l", {"ntrefs=1"}},
    {"ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES p (id)", {"tref p -> p FROM"}},
    {"ALTER TABLE t EXCHANGE PARTITION p0 WITH TABLE t2", {"tref t2 -> t2 DDL"}},
    {"DROP TABLE IF EXISTS a, db.b, `c`", {"ntrefs=3", "tref a -> a DDL", "tref b qual=db. -> b DDL", "tref `c` -> c DDL"}},
    {"DROP TEMPORARY TABLE t", {"tref t -> t DDL"}},
    {"DROP INDEX ix ON t", {"ntrefs=1", "tref t -> t DDL"}},
    {"DROP DATABASE d", {"ntrefs=0"}},
    {"TRUNCATE TABLE t", {"tref t -> t DDL"}},
    {"TRUNCATE db.t", {"tref t qual=db. -> t DDL"}},
    {"RENAME TABLE a TO b, db.c TO db.d", {"ntrefs=4", "tref a -> a DDL", "tref b -> b DDL", "tref c qual=db. -> c DDL", "tref d qual=db. -> d DDL"}},
    /* --- others --- */
    {"EXPLAIN SELECT * FROM t WHERE k = 1", {"kind=OTHER", "tref t -> t FROM", "cond k EQ lit(1)"}},
    {"EXPLAIN FORMAT=JSON UPDATE t SET a = 1", {"kind=OTHER", "tref t -> t UPDATE"}},
    {"EXPLAIN t", {"kind=OTHER", "tref t -> t FROM"}},
    {"DESCRIBE db.t a", {"kind=OTHER", "tref t qual=db. -> t FROM"}},
    {"EXPLAIN FOR CONNECTION 5", {"ntrefs=0"}},
    {"SHOW CREATE TABLE t", {"kind=SHOW", "tref t -> t FROM"}},
    {"SHOW FULL COLUMNS FROM t", {"tref t -> t FROM"}},
    {"SHOW TABLES LIKE 'x'", {"ntrefs=0"}},
    {"TABLE t ORDER BY a LIMIT 1", {"kind=OTHER", "tref t -> t FROM"}},
    {"SELECT 1; ", {"kind=SELECT", "ntrefs=0"}},
    {"SELECT a FROM t; DROP TABLE t", {"kind=MULTI", "ntrefs=0"}},
    /* --- hints --- */
    {"/*+ dal shard_value=3 */ SELECT 1", {"hint shard_value=3"}},
    {"SELECT /*+ dal master shard_value='a b' datasource=\"it\"\"s\" server='\\'q' */ 1", {"hint master=", "hint shard_value=a b", "hint datasource=it\"s", "hint server='q"}},
    {"SELECT /*+ DAL shard_value=1,datasource=2 */ /*+ dal server=3 */ 1", {"hint shard_value=1", "hint datasource=2", "hint server=3"}},
    {"SELECT /*+ BKA(t1) NO_ICP(t2) */ /*+ dalx=1 */ /*+ */ 1", {"!hint"}},
    {"SELECT /*! /*+ dal shard_value=v */ */ 1", {"hint shard_value=v"}},
    /* --- read-write splitting: what must not go to a replica --- */
    {"SELECT LAST_INSERT_ID()", {"needs_master"}},
    {"SELECT a FROM t WHERE id = last_insert_id ()", {"needs_master"}},
    {"SELECT GET_LOCK('x', 1), RELEASE_LOCK('x'), IS_FREE_LOCK('y')", {"needs_master"}},
    {"SELECT RELEASE_ALL_LOCKS()", {"needs_master"}},
    {"SELECT NEXT VALUE FOR s", {"needs_master"}},
    {"SELECT previous value for s", {"needs_master"}},
    {"SELECT NEXTVAL(s), LASTVAL(s), SETVAL(s, 10)", {"needs_master"}},
    {"SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1", {"!needs_master"}},
    {"SELECT FOUND_ROWS(), ROW_COUNT()", {"needs_master"}},
    {"SELECT a FROM t WHERE b IN (SELECT LAST_INSERT_ID())", {"needs_master"}},
    {"SELECT last_insert_id, next, nextval FROM t", {"!needs_master"}},
    {"SELECT 'LAST_INSERT_ID()' /* GET_LOCK(1) */", {"!needs_master"}},
    {"SELECT a FROM t", {"!needs_master", "!txn_read_only"}},
    {"START TRANSACTION READ ONLY", {"kind=BEGIN", "txn_read_only"}},
    {"START TRANSACTION WITH CONSISTENT SNAPSHOT, read only", {"kind=BEGIN", "txn_read_only"}},
    {"START TRANSACTION READ WRITE", {"kind=BEGIN", "!txn_read_only"}},
    {"BEGIN", {"kind=BEGIN", "!txn_read_only"}},
    /* --- compound statements at top level: whole, opaque, on the pinned connection --- */
    {"FOR i IN 0..2 DO INSERT INTO t VALUES (i); END FOR",
     {"kind=OTHER", "opaque", "compound", "pins user_var", "ntrefs=0"}},
    {"BEGIN NOT ATOMIC DECLARE x INT; SELECT a INTO x FROM t; END", {"opaque", "compound"}},
    {"w: WHILE 1 DO LEAVE w; END WHILE w", {"opaque", "compound"}},
    {"CREATE PROCEDURE p() BEGIN SELECT 1; END", {"kind=DDL", "!compound"}},
    {"BEGIN WORK", {"kind=BEGIN", "!compound", "!opaque"}},
    /* --- session state a dal session pins a connection for --- */
    {"SET @a = 1", {"kind=SET", "pins user_var"}},
    {"SET @`a b` = 1, @'c' = 2", {"pins user_var"}},
    {"SELECT @a", {"kind=SELECT", "pins user_var"}},
    {"SELECT @a := id FROM t WHERE k = 1", {"pins user_var"}},
    {"SELECT id INTO @a FROM t LIMIT 1", {"pins user_var"}},
    {"SELECT id FROM t WHERE k = @a", {"pins user_var"}},
    {"INSERT INTO t (a) VALUES (@a)", {"pins user_var"}},
    {"SELECT @@version, @@session.sql_mode", {"!pins"}},
    {"SELECT '@a', \"@b\" /* @c */", {"!pins"}},
    {"GRANT SELECT ON db.* TO 'u'@'localhost'", {"!pins"}},
    {"CREATE DEFINER=root@localhost VIEW v AS SELECT 1", {"!pins"}},
    {"CREATE DEFINER = `root`@`%` VIEW v AS SELECT @x", {"pins user_var"}},
    {"CREATE TEMPORARY TABLE tmp (a INT)",
     {"kind=DDL", "pins temp_table", "temporary", "tref tmp -> tmp DDL @0"}},
    {"CREATE TEMPORARY TABLE IF NOT EXISTS tmp AS SELECT @a", {"pins user_var,temp_table"}},
    {"CREATE TABLE tmp (a INT)", {"!pins", "!temporary"}},
    {"DROP TEMPORARY TABLE tmp", {"!pins", "temporary"}},
    {"DROP TABLE tmp", {"!temporary"}},
    {"LOCK TABLES t1 READ, t2 WRITE", {"pins table_lock"}},
    {"LOCK TABLE t1 WRITE", {"pins table_lock"}},
    {"UNLOCK TABLES", {"!pins"}},
    {"FLUSH TABLES WITH READ LOCK", {"pins table_lock"}},
    {"FLUSH TABLES WITH READ LOCK AND DISABLE CHECKPOINT", {"pins table_lock"}},
    {"flush local tables t1, test.t2 with read lock", {"pins table_lock"}},
    {"FLUSH NO_WRITE_TO_BINLOG TABLE t1 FOR EXPORT", {"pins table_lock"}},
    {"FLUSH TABLES", {"!pins"}},
    {"FLUSH TABLES t1", {"!pins"}},
    {"FLUSH LOGS", {"!pins"}},
    {"SELECT GET_LOCK('x', 1)", {"pins named_lock", "needs_master"}},
    {"DO get_lock ('x', 0)", {"pins named_lock"}},
    {"SELECT RELEASE_LOCK('x'), IS_USED_LOCK('x'), IS_FREE_LOCK('x')", {"!pins"}},
    {"SELECT get_lock FROM t", {"!pins"}},
    {"PREPARE s FROM 'SELECT 1'", {"pins prepare"}},
    {"EXECUTE s", {"!pins"}},
    {"EXECUTE s USING @a", {"pins user_var"}},
    {"HANDLER t OPEN", {"pins handler"}},
    {"HANDLER t READ FIRST", {"!pins"}},
    {"SHOW STATUS LIKE 'Com_select'", {"pins session_status"}},
    {"SHOW SESSION STATUS", {"pins session_status"}},
    {"show local status where Variable_name = 'x'", {"pins session_status"}},
    {"SHOW GLOBAL STATUS", {"!pins"}},
    {"SHOW VARIABLES", {"!pins"}},
    {"SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS", {"pins session_status"}},
    {"SELECT session_status FROM t", {"!pins"}},
    {"SELECT * FROM information_schema.`SESSION_STATUS`", {"pins session_status"}},
    {"SELECT * FROM `information_schema`.`session_status` WHERE 1", {"pins session_status"}},
    {"SELECT `session_status` FROM t", {"!pins"}},
    {"FLUSH STATUS", {"pins session_status"}},
    {"flush local status", {"pins session_status"}},
    {"FLUSH TABLES", {"!pins"}},
    {"FLUSH STATUS, TABLES", {"!pins"}},
    {"XA START 'x'", {"pins xa", "xa=start"}},
    {"xa begin 'x', 'b', 1", {"pins xa", "xa=start"}},
    {"XA END 'x'", {"!pins", "xa=step"}},
    {"XA PREPARE 'x'", {"xa=step"}},
    {"XA RECOVER", {"xa=step"}},
    {"XA COMMIT 'x' ONE PHASE", {"!pins", "xa=finish"}},
    {"xa rollback 'x'", {"xa=finish"}},
    {"SELECT xa FROM t", {"!pins", "!xa="}},
};

START_TEST(test_analysis_table)
{
    const struct an_case *c = &an_cases[_i];
    dal_sql_t *s = analyse_ok(c->sql);
    char *text = render(s);
    int k;

    for (k = 0; k < MAXW && c->want[k]; k++) {
        const char *w = c->want[k];
        if (w[0] == '!')
            ck_assert_msg(!strstr(text, w + 1), "[%s]\n unexpected '%s' in:\n%s", c->sql, w + 1, text);
        else
            ck_assert_msg(has_line(text, w), "[%s]\n missing line '%s' in:\n%s", c->sql, w, text);
    }
    free(text);
    sql_free(s);
}
END_TEST

START_TEST(test_spans_are_exact)
{
    /* no alias: wm_food.id names the table (with an alias it would name nothing) */
    const char *sql = "SELECT f.name FROM db.wm_food   WHERE wm_food.id = 7 AND x IN (1,2)";
    dal_sql_t *s = analyse_ok(sql);

    ck_assert_uint_eq(s->len, strlen(sql));
    ck_assert_str_eq(s->text, sql);
    ck_assert_int_eq(s->text[s->len], '\0');
    ck_assert_uint_eq(s->ntrefs, 1);
    ck_assert_uint_eq(s->trefs[0].off, 22);
    ck_assert_uint_eq(s->trefs[0].len, 7);
    ck_assert_uint_eq(s->trefs[0].qual_off, 19);
    ck_assert_uint_eq(s->trefs[0].qual_len, 3);
    ck_assert_uint_eq(s->ncolrefs, 1);
    ck_assert_uint_eq(s->colrefs[0].off, 38);
    ck_assert_uint_eq(s->colrefs[0].len, 7);
    ck_assert_uint_eq(s->where_off, 38);
    ck_assert_uint_eq(s->where_len, strlen(sql) - 38);
    ck_assert_uint_eq(s->nconds, 2);
    ck_assert_uint_eq(s->conds[0].vals[0].off, 51);
    ck_assert_uint_eq(s->conds[0].vals[0].len, 1);
    ck_assert_int_eq(s->conds[0].vals[0].param_index, -1);
    ck_assert_int_eq(s->conds[0].vals[0].lit_type, DAL_TOK_NUMBER);
    ck_assert_uint_eq(s->from_off, 19);
    ck_assert_uint_eq(s->from_end, 29);
    sql_free(s);
}
END_TEST

START_TEST(test_negative_literal_fields)
{
    dal_sql_t *s = analyse_ok("SELECT a FROM t WHERE k = - 42");
    const dal_sql_opnd_t *o = &s->conds[0].vals[0];

    ck_assert_int_eq(o->kind, DAL_OPND_LITERAL);
    ck_assert_int_eq(o->negative, 1);
    ck_assert_int_eq(o->lit_type, DAL_TOK_NUMBER);
    ck_assert_uint_eq(o->off, 26);
    ck_assert_uint_eq(o->len, 4);
    sql_free(s);
}
END_TEST

START_TEST(test_param_offsets)
{
    const char *sql = "SELECT ? FROM t /* ? */ WHERE a = '?' AND b IN (?, ?) /*! AND c = ? */";
    dal_sql_t *s = analyse_ok(sql);
    size_t i;

    ck_assert_uint_eq(s->nparams, 4);
    for (i = 0; i < s->nparams; i++)
        ck_assert_int_eq(s->text[s->param_offs[i]], '?');
    ck_assert_uint_eq(s->param_offs[0], 7);
    ck_assert_uint_eq(s->param_offs[3], (uint32_t)(strstr(sql, "c = ?") - sql + 4));
    sql_free(s);
    s = analyse_ok("SELECT 1");
    ck_assert_ptr_null(s->param_offs);
    sql_free(s);
}
END_TEST

/* Cutting every hint span, as a rewriter does, removes each dal hint
 * comment exactly once and nothing else. */
START_TEST(test_hint_spans)
{
    const char *sql = "SELECT /*+ dal shard_value=1 server='x y' raw */ x /*+ BKA(t) */ FROM t "
                      "/*+ dal datasource=2 */";
    dal_sql_t *s = analyse_ok(sql);
    char out[128];
    size_t i, at = 0, n = 0;

    ck_assert_uint_eq(s->nhints, 4);
    ck_assert_uint_eq(s->hints[0].off, 7);
    ck_assert_uint_eq(s->hints[0].len, 41);
    ck_assert_uint_eq(s->hints[1].len, 0);
    ck_assert_uint_eq(s->hints[1].off, 48);
    ck_assert_uint_eq(s->hints[2].len, 0);
    ck_assert_uint_gt(s->hints[3].len, 0);
    for (i = 0; i < s->nhints; i++) {
        ck_assert_uint_ge(s->hints[i].off, at);
        memcpy(out + n, s->text + at, s->hints[i].off - at);
        n += s->hints[i].off - at;
        at = s->hints[i].off + s->hints[i].len;
    }
    memcpy(out + n, s->text + at, s->len - at);
    n += s->len - at;
    out[n] = '\0';
    ck_assert_str_eq(out, "SELECT  x /*+ BKA(t) */ FROM t ");
    sql_free(s);
}
END_TEST

START_TEST(test_text_outlives_input)
{
    char *copy = strdup("SELECT a FROM wm_food WHERE id = 3");
    dal_sql_t *s;
    char err[64];

    ck_assert_int_eq(sql_analyse(copy, strlen(copy), 0, &s, err, sizeof err), 0);
    memset(copy, 'x', strlen(copy));
    free(copy);
    ck_assert_str_eq(s->trefs[0].name, "wm_food");
    ck_assert_int_eq(strncmp(s->text + s->trefs[0].off, "wm_food", 7), 0);
    ck_assert(sql_ref(s) == s);
    sql_unref(s);
    sql_unref(s);
}
END_TEST

START_TEST(test_deep_nesting)
{
    /* deep expression parentheses are fine; deep subqueries are refused */
    size_t n = 5000, i;
    char *sql = malloc(n * 16 + 64), *p = sql, err[128];
    dal_sql_t *s;

    p += sprintf(p, "SELECT a FROM t WHERE k = ");
    for (i = 0; i < n; i++)
        *p++ = '(';
    *p++ = '1';
    for (i = 0; i < n; i++)
        *p++ = ')';
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), 0);
    ck_assert_uint_eq(s->nconds, 1);
    sql_free(s);

    p = sql;
    for (i = 0; i < 200; i++)
        p += sprintf(p, "SELECT * FROM (");
    p += sprintf(p, "SELECT 1");
    for (i = 0; i < 200; i++)
        p += sprintf(p, ") x");
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), -1);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));

    p = sql; /* parenthesised joins nest too */
    p += sprintf(p, "SELECT a FROM ");
    for (i = 0; i < 500; i++)
        *p++ = '(';
    *p++ = 't';
    for (i = 0; i < 500; i++)
        *p++ = ')';
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));

    p = sql; /* so do statements inside statements */
    for (i = 0; i < 300; i++)
        p += sprintf(p, "SET STATEMENT x=1 FOR ");
    p += sprintf(p, "SELECT 1");
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "nested too deeply"));

    p = sql; /* 30 levels are fine */
    p += sprintf(p, "SELECT a FROM ");
    for (i = 0; i < 30; i++)
        p += sprintf(p, "(SELECT a FROM ");
    p += sprintf(p, "innermost");
    for (i = 0; i < 30; i++)
        p += sprintf(p, ") d%zu", i);
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), 0);
    ck_assert_uint_eq(s->ntrefs, 1);
    ck_assert_str_eq(s->trefs[0].name, "innermost");
    sql_free(s);

    p = sql;
    p += sprintf(p, "SELECT a FROM t WHERE ");
    for (i = 0; i < 100; i++)
        *p++ = '(';
    p += sprintf(p, "k = 1");
    for (i = 0; i < 100; i++)
        *p++ = ')';
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), 0);
    sql_free(s);
    free(sql);
}
END_TEST

START_TEST(test_large_insert)
{
    size_t rows = 3000, i;
    char *sql = malloc(rows * 32 + 64), *p = sql, err[64];
    dal_sql_t *s;

    p += sprintf(p, "INSERT INTO t (a, b, c) VALUES ");
    for (i = 0; i < rows; i++)
        p += sprintf(p, "%s(?, %zu, 'v%zu')", i ? "," : "", i, i);
    ck_assert_int_eq(sql_analyse(sql, (size_t)(p - sql), 0, &s, err, sizeof err), 0);
    ck_assert_uint_eq(s->nrows, rows);
    ck_assert_uint_eq(s->nparams, rows);
    ck_assert_int_eq(s->rows[rows - 1].vals[0].param_index, (int)rows - 1);
    ck_assert_uint_eq(s->values_end, (uint32_t)(p - sql));
    sql_free(s);
    free(sql);
}
END_TEST

/* ------------------------------------------------------------ errors */

static const struct err_case {
    const char *sql;
    const char *msg;
} err_cases[] = {
    {"SELECT 'abc", "unterminated string at offset 7"},
    {"SELECT \"abc\\\"", "unterminated string at offset 7"},
    {"SELECT a FROM t WHERE b = 'x\\", "unterminated string at offset 26"},
    {"SELECT N'abc", "unterminated string at offset 7"},
    {"SELECT `abc", "unterminated quoted identifier at offset 7"},
    {"SELECT 1 /* x", "unterminated comment at offset 9"},
    {"SELECT 1 /*! JOIN t", "unterminated executable comment at offset 9"},
    {"SELECT 1 /*!50100 JOIN t /* c */", "unterminated executable comment at offset 9"},
    {"SELECT 1 /*+ dal a=1", "unterminated hint at offset 9"},
    {"SELECT (1", "unbalanced '(' at offset 7"},
    {"SELECT f(1, (2)", "unbalanced '(' at offset 8"},
    {"SELECT 1)", "unbalanced ')' at offset 8"},
    {"SELECT a FROM t WHERE (a = 1))", "unbalanced ')' at offset 29"},
    {"", "empty statement at offset 0"},
    {"  -- nothing\n", "empty statement at offset 13"},
    {";", "empty statement at offset 1"},
    {"SELECT /*+ dal =1 */ 1", "malformed dal hint at offset 15"},
    {"SELECT /*+ dal a='x */ 1", "malformed dal hint at offset 17"},
    {"SELECT /*+ dal a(1) */ 1", "malformed dal hint at offset 16"},
    /* a string value written beside a literal would join it */
    {"UPDATE t SET a = 'x'? WHERE id = 5",
     "a ? placeholder next to a string literal (an alias takes AS) at offset 20"},
    {"SELECT ? /* c */ 'alias'",
     "a ? placeholder next to a string literal (an alias takes AS) at offset 7"},
    {"SELECT a FROM t WHERE b = _utf8mb4'x' ?",
     "a ? placeholder next to a string literal (an alias takes AS) at offset 38"},
    /* a server refuses the whole INSERT; split by node, the others' rows would be written */
    {"INSERT INTO t (id, a) VALUES (1, 'x'), (2, 'y', 'z')",
     "column count doesn't match value count at offset 39"},
    {"INSERT INTO t VALUES (1, 'x'), (2)", "column count doesn't match value count at offset 31"},
    {"INSERT INTO t (id) VALUE (1, 2)", "column count doesn't match value count at offset 25"},
};

START_TEST(test_error_table)
{
    const struct err_case *c = &err_cases[_i];
    size_t len = strlen(c->sql);
    char *copy = exact_copy(c->sql, len), err[128];
    dal_sql_t *s = (dal_sql_t *)1;

    ck_assert_int_eq(sql_analyse(copy, len, 0, &s, err, sizeof err), -1);
    ck_assert_ptr_null(s);
    ck_assert_msg(strcmp(err, c->msg) == 0, "[%s]: got '%s', want '%s'", c->sql, err, c->msg);
    /* a tiny or absent buffer is fine too */
    ck_assert_int_eq(sql_analyse(copy, len, 0, &s, err, 4), -1);
    ck_assert_uint_eq(strlen(err), 3);
    ck_assert_int_eq(sql_analyse(copy, len, 0, &s, NULL, 0), -1);
    free(copy);
}
END_TEST

/* ------------------------------------------------------------ literals */

static const struct lit_case {
    const char *lit;
    const char *want;
    size_t wantlen;
} lit_cases[] = {
    {"'abc'", "abc", 3},
    {"''", "", 0},
    {"'it''s'", "it's", 4},
    {"\"say \"\"hi\"\"\"", "say \"hi\"", 8},
    {"'\\0\\'\\\"\\b\\n\\r\\t\\Z\\\\'", "\0'\"\b\n\r\t\032\\", 9},
    {"'\\%\\_\\x'", "\\%\\_x", 5},
    {"\"a'b\"", "a'b", 3},
    {"N'nat'", "nat", 3},
    {"_utf8mb4'u'", "u", 1},
    {"_latin1  'l'", "l", 1},
    {"_binary\"b\"", "b", 1},
    {"X'414243'", "ABC", 3},
    {"x''", "", 0},
    {"B'01000001'", "A", 1},
    {"b'1000001'", "A", 1},
    {"b'100000101000010'", "AB", 2},
    {"42", "42", 2},
    {"-42", "-42", 3},
    {"- 4.5e3", "-4.5e3", 6},
    {"+7", "7", 1},
    {"0x1F", "0x1F", 4},
    {"NULL", "NULL", 4},
    {"false", "false", 5},
};

START_TEST(test_literal_table)
{
    const struct lit_case *c = &lit_cases[_i];
    char sql[128], out[64];
    dal_sql_t *s;
    size_t n;

    snprintf(sql, sizeof sql, "SELECT a FROM t WHERE k = %s", c->lit);
    s = analyse_ok(sql);
    ck_assert_uint_eq(s->nconds, 1);
    ck_assert_int_eq(s->conds[0].vals[0].kind, DAL_OPND_LITERAL);
    ck_assert_int_eq(sql_literal_text(s->text, &s->conds[0].vals[0], out, sizeof out, &n), 0);
    ck_assert_uint_eq(n, c->wantlen);
    ck_assert_int_eq(memcmp(out, c->want, n), 0);
    ck_assert_int_eq(out[n], '\0');
    sql_free(s);
}
END_TEST

START_TEST(test_literal_edges)
{
    dal_sql_t *s = analyse_ok("INSERT INTO t VALUES ('abcdef', X'4', B'2', ?, NOW())");
    const dal_sql_opnd_t *v = s->rows[0].vals;
    char out[4];
    size_t n;

    ck_assert_int_eq(sql_literal_text(s->text, &v[0], out, sizeof out, &n), 0);
    ck_assert_uint_eq(n, 6); /* full length reported, output truncated */
    ck_assert_str_eq(out, "abc");
    ck_assert_int_eq(sql_literal_text(s->text, &v[0], NULL, 0, &n), 0);
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(sql_literal_text(s->text, &v[1], out, sizeof out, &n), -1); /* odd hex */
    ck_assert_int_eq(sql_literal_text(s->text, &v[2], out, sizeof out, &n), -1); /* not bits */
    ck_assert_int_eq(sql_literal_text(s->text, &v[3], out, sizeof out, &n), -1); /* PARAM */
    ck_assert_int_eq(v[3].param_index, 0);
    ck_assert_int_eq(sql_literal_text(s->text, &v[4], out, sizeof out, &n), -1); /* EXPR */
    sql_free(s);
}
END_TEST

/* ------------------------------------------------------------ the cache */

/* An analysis made in one mode never serves the other: the mode is part
 * of the key, in the shared cache and in the thread's front cache. */
START_TEST(test_cache_mode_key)
{
    dal_sql_cache_t *c = sql_cache_new(64);
    const char *q = "SELECT * FROM t WHERE id = 5 AND name = 'x\\' OR id = 7 -- '";
    char err[64];
    const dal_sql_t *a, *b, *x;
    int lent;

    a = sql_cache_get(c, q, strlen(q), 0, err, sizeof err);
    b = sql_cache_get(c, q, strlen(q), 1, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(a->where_has_or, 0);
    ck_assert_int_eq(b->where_has_or, 1);
    x = sql_cache_get(c, q, strlen(q), 0, err, sizeof err);
    ck_assert_ptr_eq(x, a);
    sql_unref(x);
    x = sql_cache_borrow(c, q, strlen(q), 1, &lent, err, sizeof err);
    ck_assert_ptr_eq(x, b);
    sql_cache_return();
    x = sql_cache_borrow(c, q, strlen(q), 0, &lent, err, sizeof err);
    ck_assert_ptr_eq(x, a);
    sql_cache_return();
    x = sql_cache_borrow(c, q, strlen(q), 1, &lent, err, sizeof err);
    ck_assert_ptr_eq(x, b);
    sql_cache_return();
    sql_unref(a);
    sql_unref(b);
    sql_cache_free(c);
}
END_TEST

START_TEST(test_cache_hit)
{
    dal_sql_cache_t *c = sql_cache_new(64);
    const char *q = "SELECT name FROM wm_food WHERE wm_poi_id = ?";
    char err[64], *copy = exact_copy(q, strlen(q));
    const dal_sql_t *a, *b;
    uint64_t hits, misses;

    a = sql_cache_get(c, q, strlen(q), 0, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    b = sql_cache_get(c, copy, strlen(q), 0, err, sizeof err);
    ck_assert_ptr_eq(a, b);
    ck_assert_uint_eq(atomic_load(&a->refs), 3); /* cache + two callers */
    sql_cache_stats(c, &hits, &misses);
    ck_assert_uint_eq(hits, 1);
    ck_assert_uint_eq(misses, 1);
    /* a prefix of the text is another statement */
    b = sql_cache_get(c, q, strlen(q) - 2, 0, err, sizeof err);
    ck_assert_ptr_ne(a, b);
    ck_assert_uint_eq(b->nparams, 0);
    sql_unref(b);
    sql_unref(a);
    sql_unref(a);
    ck_assert_ptr_null(sql_cache_get(c, "SELECT 'x", 9, 0, err, sizeof err));
    ck_assert_str_eq(err, "unterminated string at offset 7");
    ck_assert_ptr_null(sql_cache_get(c, "SELECT 'x", 9, 0, err, sizeof err)); /* not cached */
    sql_cache_stats(c, &hits, &misses);
    ck_assert_uint_eq(misses, 4);
    free(copy);
    sql_cache_free(c);
}
END_TEST

START_TEST(test_cache_eviction_keeps_refs)
{
    dal_sql_cache_t *c = sql_cache_new(16);
    const char *q = "SELECT a FROM kept WHERE k = 1";
    const dal_sql_t *held, *again;
    char sql[64], err[64];
    int i;

    held = sql_cache_get(c, q, strlen(q), 0, err, sizeof err);
    ck_assert_ptr_nonnull(held);
    for (i = 0; i < 2000; i++) {
        const dal_sql_t *s;
        snprintf(sql, sizeof sql, "SELECT a FROM t%d WHERE k = %d", i, i);
        s = sql_cache_get(c, sql, strlen(sql), 0, err, sizeof err);
        ck_assert_ptr_nonnull(s);
        sql_unref(s);
    }
    /* evicted by now, but still ours and intact */
    ck_assert_uint_eq(atomic_load(&held->refs), 1);
    ck_assert_str_eq(held->text, q);
    ck_assert_str_eq(held->trefs[0].name, "kept");
    again = sql_cache_get(c, q, strlen(q), 0, err, sizeof err);
    ck_assert_ptr_ne(again, held);
    ck_assert_str_eq(again->trefs[0].name, "kept");
    sql_unref(held);
    sql_cache_free(c); /* `again` outlives the cache */
    ck_assert_str_eq(again->trefs[0].name, "kept");
    sql_unref(again);
}
END_TEST

/* What a thread's front cache lends, and what it keeps until the thread
 * exits: run in a thread of its own so that its exit can be seen. */
struct front_case {
    dal_sql_cache_t *c;
    const dal_sql_t *kept;   /* a reference on what the front cache held last */
};

static void *front_thread(void *arg)
{
    struct front_case *fc = arg;
    const char *q = "SELECT name FROM wm_food WHERE wm_poi_id = ?";
    char err[64], *copy = exact_copy(q, strlen(q));
    const dal_sql_t *a, *b, *nested, *other;
    dal_sql_cache_t *c2 = sql_cache_new(16);
    int lent, lent2;

    a = sql_cache_borrow(fc->c, q, strlen(q), 0, &lent, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(lent, 1);
    ck_assert_uint_eq(atomic_load(&a->refs), 2); /* the shared cache's and the front's */
    sql_cache_return();
    /* the same text again: the same analysis, and no count taken for it */
    b = sql_cache_borrow(fc->c, copy, strlen(q), 0, &lent, err, sizeof err);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(lent, 1);
    ck_assert_uint_eq(atomic_load(&a->refs), 2);
    /* a borrow while the loan is out gets a reference of its own */
    nested = sql_cache_borrow(fc->c, q, strlen(q), 0, &lent2, err, sizeof err);
    ck_assert_ptr_eq(nested, a);
    ck_assert_int_eq(lent2, 0);
    ck_assert_uint_eq(atomic_load(&a->refs), 3);
    sql_unref(nested);
    sql_cache_return();
    /* the same text in another cache is that cache's analysis; it takes
     * the front's slot, whose reference on a goes */
    other = sql_cache_borrow(c2, q, strlen(q), 0, &lent, err, sizeof err);
    ck_assert_ptr_ne(other, a);
    ck_assert_int_eq(lent, 1);
    ck_assert_uint_eq(atomic_load(&a->refs), 1);
    sql_cache_return();
    /* text that cannot be analysed is an error, as from the cache */
    ck_assert_ptr_null(sql_cache_borrow(fc->c, "SELECT 'x", 9, 0, &lent, err, sizeof err));
    ck_assert_str_eq(err, "unterminated string at offset 7");
    fc->kept = sql_ref(other);
    sql_cache_free(c2); /* the front cache's entry outlives its cache */
    ck_assert_uint_eq(atomic_load(&other->refs), 2);
    free(copy);
    return NULL;
}

START_TEST(test_cache_front)
{
    struct front_case fc = {sql_cache_new(64), NULL};
    pthread_t t;

    ck_assert_int_eq(pthread_create(&t, NULL, front_thread, &fc), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    /* the thread's exit let go of what its front cache held */
    ck_assert_uint_eq(atomic_load(&fc.kept->refs), 1);
    ck_assert_str_eq(fc.kept->trefs[0].name, "wm_food");
    sql_unref(fc.kept);
    sql_cache_free(fc.c);
}
END_TEST

/* An INSERT of n rows: about 20 bytes a row (n < 100000). */
static char *insert_text(const char *table, int n)
{
    size_t cap = 64 + (size_t)n * 24, len;
    char *sql = malloc(cap);
    int i;

    ck_assert_ptr_nonnull(sql);
    len = (size_t)snprintf(sql, cap, "INSERT INTO %s (id, v) VALUES ", table);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(sql + len, cap - len, "%s(%d, 'v%05d')", i ? ", " : "", i, i);
    return sql;
}

/* What the cache counts for an entry (sql.h: its block and the text's
 * length again). */
static uint64_t charge(const dal_sql_t *s)
{
    return s->size + s->len + 1;
}

/* The bytes reported are the entries' charges, added in and taken out. */
START_TEST(test_cache_bytes_reported)
{
    dal_sql_cache_t *c = sql_cache_new(64);
    const dal_sql_t *a, *b;
    sql_cache_figures_t f;
    char err[64];

    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.entries, 0);
    ck_assert_uint_eq(f.bytes, 0);
    ck_assert_uint_eq(f.max_bytes, SQL_CACHE_BYTES);
    ck_assert_uint_eq(f.max_statement, SQL_CACHE_MAX_STATEMENT);
    a = sql_cache_get(c, "SELECT a FROM t WHERE id = 1", 28, 0, err, sizeof err);
    b = sql_cache_get(c, "INSERT INTO t (id, v) VALUES (1, 'x'), (2, 'y')", 47, 0, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    /* the block holds the dal_sql_t, the text and the analysis */
    ck_assert_uint_gt(a->size, sizeof(dal_sql_t) + a->len);
    ck_assert_uint_gt(b->size, sizeof(dal_sql_t) + b->len);
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.entries, 2);
    ck_assert_uint_eq(f.bytes, charge(a) + charge(b));
    ck_assert_uint_eq(f.evictions, 0);
    ck_assert_uint_eq(f.uncached, 0);
    /* a hit changes none of it */
    sql_unref(sql_cache_get(c, "SELECT a FROM t WHERE id = 1", 28, 0, err, sizeof err));
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.bytes, charge(a) + charge(b));
    ck_assert_uint_eq(f.hits, 1);
    /* a bound below both: both go, now, and are still the callers' */
    sql_cache_limit(c, charge(a) + charge(b) - 1, SQL_CACHE_MAX_STATEMENT);
    sql_cache_figures(c, &f);
    ck_assert_uint_le(f.bytes, charge(a) + charge(b) - 1);
    ck_assert_uint_ge(f.evictions, 1);
    ck_assert_uint_le(f.entries, 1);
    ck_assert(f.entries == 0 ? f.bytes == 0 : f.bytes == charge(a) || f.bytes == charge(b));
    sql_cache_limit(c, 0, SQL_CACHE_MAX_STATEMENT);
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.entries, 0);
    ck_assert_uint_eq(f.bytes, 0);
    ck_assert_uint_eq(f.evictions, 2);
    ck_assert_uint_eq(atomic_load(&a->refs), 1);
    ck_assert_str_eq(a->trefs[0].name, "t");
    sql_unref(a);
    sql_unref(b);
    sql_cache_free(c);
}
END_TEST

/* Many distinct statements of a few KiB, with room for every one of them
 * by count but not by bytes: the bytes never go over the bound, and what
 * went was evicted, not lost. */
START_TEST(test_cache_byte_bound)
{
    const size_t bound = 256 * 1024;
    dal_sql_cache_t *c = sql_cache_new(4096);
    sql_cache_figures_t f;
    uint64_t charged = 0;
    char err[64], name[32];
    int i;

    sql_cache_limit(c, bound, SQL_CACHE_MAX_STATEMENT);
    for (i = 0; i < 400; i++) {
        char *sql;
        const dal_sql_t *s;
        snprintf(name, sizeof name, "t%d", i);
        sql = insert_text(name, 100);
        s = sql_cache_get(c, sql, strlen(sql), 0, err, sizeof err);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(s->nrows, 100);
        charged += charge(s);
        sql_unref(s);
        free(sql);
        sql_cache_figures(c, &f);
        ck_assert_uint_le(f.bytes, bound);
    }
    sql_cache_figures(c, &f);
    ck_assert_uint_gt(charged, 4 * bound); /* the test means something */
    ck_assert_uint_gt(f.entries, 0);
    ck_assert_uint_lt(f.entries, 400);
    ck_assert_uint_eq(f.entries + f.evictions, 400);
    ck_assert_uint_eq(f.uncached, 0);
    ck_assert_uint_eq(f.misses, 400);
    /* the last one is still there: a hit */
    {
        char *sql = insert_text(name, 100);
        sql_unref(sql_cache_get(c, sql, strlen(sql), 0, err, sizeof err));
        free(sql);
    }
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.hits, 1);
    sql_cache_free(c);
}
END_TEST

/* A statement over sql_cache_max_statement is analysed for its caller
 * alone, every time, correctly; the cache holds nothing of it. */
START_TEST(test_cache_max_statement)
{
    dal_sql_cache_t *c = sql_cache_new(64);
    char *big = insert_text("big", 200), err[64];
    size_t len = strlen(big);
    const dal_sql_t *a, *b;
    sql_cache_figures_t f;
    int lent = -1;

    sql_cache_limit(c, SQL_CACHE_BYTES, 1024);
    ck_assert_uint_gt(len, 1024);
    a = sql_cache_get(c, big, len, 0, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(atomic_load(&a->refs), 1); /* the caller's only */
    ck_assert_uint_eq(a->nrows, 200);
    ck_assert_str_eq(a->trefs[0].name, "big");
    b = sql_cache_borrow(c, big, len, 0, &lent, err, sizeof err);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(lent, 0); /* not lent from the front cache either */
    ck_assert_uint_eq(atomic_load(&b->refs), 1);
    ck_assert_uint_eq(b->nrows, 200);
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.entries, 0);
    ck_assert_uint_eq(f.bytes, 0);
    ck_assert_uint_eq(f.uncached, 2);
    ck_assert_uint_eq(f.misses, 2);
    sql_unref(a);
    sql_unref(b);
    /* at the limit it is kept */
    sql_cache_limit(c, SQL_CACHE_BYTES, len);
    a = sql_cache_get(c, big, len, 0, err, sizeof err);
    ck_assert_uint_eq(atomic_load(&a->refs), 2);
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.entries, 1);
    ck_assert_uint_eq(f.bytes, charge(a));
    sql_unref(a);
    /* an entry alone over the byte bound is not kept */
    sql_cache_limit(c, 0, len);
    a = sql_cache_get(c, big, len, 0, err, sizeof err);
    ck_assert_uint_eq(atomic_load(&a->refs), 1);
    sql_unref(a);
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.entries, 0);
    ck_assert_uint_eq(f.bytes, 0);
    free(big);
    sql_cache_free(c);
}
END_TEST

/* A thread's front cache does not keep a big entry: once the shared cache
 * lets it go, nothing holds it. */
static void *front_big_thread(void *arg)
{
    dal_sql_cache_t *c = arg;
    char *mid = insert_text("mid", 1000), err[64];
    const char *q = "SELECT a FROM small WHERE id = 1";
    const dal_sql_t *s, *mine, *small;
    int lent = -1;

    s = sql_cache_borrow(c, mid, strlen(mid), 0, &lent, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_gt(charge(s), 16384);
    ck_assert_int_eq(lent, 0);
    ck_assert_uint_eq(atomic_load(&s->refs), 2); /* the shared cache's and ours */
    mine = s;
    small = sql_cache_borrow(c, q, strlen(q), 0, &lent, err, sizeof err);
    ck_assert_int_eq(lent, 1); /* a small one is lent as before */
    ck_assert_uint_eq(atomic_load(&small->refs), 2);
    sql_cache_return();
    sql_cache_limit(c, 0, SQL_CACHE_MAX_STATEMENT); /* the shared cache lets go */
    ck_assert_uint_eq(atomic_load(&mine->refs), 1); /* only ours: no front holds it */
    ck_assert_uint_eq(atomic_load(&small->refs), 1); /* the front's */
    sql_unref(mine);
    free(mid);
    return NULL;
}

START_TEST(test_cache_front_big)
{
    dal_sql_cache_t *c = sql_cache_new(64);
    pthread_t t;

    ck_assert_int_eq(pthread_create(&t, NULL, front_big_thread, c), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    sql_cache_free(c);
}
END_TEST

enum { NTHREADS = 4, NSTMTS = 48, ROUNDS = 4000 };

struct worker {
    dal_sql_cache_t *cache;
    int seed;
    int errors;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    unsigned x = (unsigned)w->seed * 2654435761u + 1;
    char sql[96], name[32], err[64];
    int i;

    for (i = 0; i < ROUNDS; i++) {
        const dal_sql_t *s;
        int k;
        x = x * 1103515245u + 12345u;
        k = (int)((x >> 16) % NSTMTS);
        snprintf(name, sizeof name, "tbl_%d", k);
        snprintf(sql, sizeof sql, "SELECT a, b FROM %s WHERE id = ? AND k IN (%d, ?)", name, k);
        s = sql_cache_get(w->cache, sql, strlen(sql), 0, err, sizeof err);
        if (!s || s->kind != DAL_SQL_SELECT || s->ntrefs != 1 ||
            strcmp(s->trefs[0].name, name) != 0 || strcmp(s->text, sql) != 0 ||
            s->nparams != 2 || s->nconds != 2)
            w->errors++;
        sql_unref(s);
    }
    return NULL;
}

START_TEST(test_cache_threads)
{
    /* capacity well below the working set: hits, misses, races on insert
     * and evictions of entries other threads are using, all at once */
    dal_sql_cache_t *c = sql_cache_new(16);
    pthread_t th[NTHREADS];
    struct worker w[NTHREADS];
    uint64_t hits, misses;
    int i;

    for (i = 0; i < NTHREADS; i++) {
        w[i].cache = c;
        w[i].seed = i + 1;
        w[i].errors = 0;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].errors, 0);
    }
    sql_cache_stats(c, &hits, &misses);
    ck_assert_uint_eq(hits + misses, (uint64_t)NTHREADS * ROUNDS);
    ck_assert_uint_gt(hits, 0);
    sql_cache_free(c);
}
END_TEST

/* ------------------------------------------------------------ NUL bytes */

/* Statements with NUL bytes, as a MySQL client may send them (a
 * Connector/J client-side prepared statement writes a value's 0 byte as a
 * backslash and a raw NUL): taken as the server takes them. */
#define L(s) s, sizeof s - 1

static const struct nul_lex_case {
    const char *sql;
    size_t len;
    const char *tokens; /* as test_lex_table writes them, a NUL byte as "~" */
} nul_lex_cases[] = {
    {L("SELECT 'a\0b'"), "I:SELECT S:'a~b'"},
    {L("SELECT \"a\0b\""), "I:SELECT S:\"a~b\""},
    {L("SELECT 'a\\\0b'"), "I:SELECT S:'a\\~b'"},
    {L("SELECT _latin1'a\0b'"), "I:SELECT S:_latin1'a~b'"},
    {L("SELECT 1 /* a\0b */"), "I:SELECT N:1 C:/* a~b */"},
    {L("SELECT 1 /*+ a\0 */"), "I:SELECT N:1 H:/*+ a~ */"},
    {L("SELECT 1 /*!999999 a\0 */"), "I:SELECT N:1 C:/*!999999 a~ */"},
    /* a -- or # comment ends at the NUL; the NUL is then outside */
    {L("SELECT 1 # a\0b\n"), "I:SELECT N:1 C:# a X:~b\n"},
    {L("SELECT 1 -- a\0b"), "I:SELECT N:1 C:-- a X:~b"},
    {L("SELECT 1 # a\0"), "I:SELECT N:1 C:# a"},
    /* outside: an error from the NUL on, never the end of the statement */
    {L("DELETE FROM t\0 WHERE id = 1"), "I:DELETE I:FROM I:t X:~ WHERE id = 1"},
    {L("\0SELECT 1"), "X:~SELECT 1"},
    {L("SELECT 1\0\0"), "I:SELECT N:1 X:~~"},
    {L("SELECT `a\0b` FROM t"), "I:SELECT X:~b` FROM t"},
    {L("SELECT /*! 1\0 */ 2"), "I:SELECT O:/*! N:1 X:~ */ 2"},
    /* a NUL followed only by ';' and blanks is the server's end of input */
    {L("SELECT 1\0"), "I:SELECT N:1"},
    {L("SELECT 1 \0 ;\n;"), "I:SELECT N:1"},
    {L("SELECT 1;\0"), "I:SELECT N:1 P:;"},
    {L("SELECT /*! 1 \0"), "I:SELECT O:/*! N:1 X:/*! 1 ~"},
};

START_TEST(test_lex_nul)
{
    const struct nul_lex_case *c = &nul_lex_cases[_i];
    char *copy = exact_copy(c->sql, c->len);
    buf_t b = {NULL, 0, 0};
    dal_lexer_t lx;
    dal_token_t t;
    uint32_t k;

    bprintf(&b, "%s", "");
    lex_init(&lx, copy, c->len, 0);
    while ((t = lex_next(&lx)).type != DAL_TOK_EOF) {
        ck_assert_uint_le((size_t)t.off + t.len, c->len);
        bprintf(&b, "%s%c:", b.n ? " " : "", type_letter(t.type));
        for (k = 0; k < t.len; k++)
            bprintf(&b, "%c", copy[t.off + k] ? copy[t.off + k] : '~');
    }
    ck_assert_uint_eq(t.off, c->len);
    ck_assert_msg(strcmp(b.p, c->tokens) == 0, "case %d\n got: %s\n want: %s", _i, b.p,
                  c->tokens);
    free(b.p);
    free(copy);
}
END_TEST

static const struct nul_err_case {
    const char *sql;
    size_t len;
    const char *msg;
} nul_err_cases[] = {
    {L("DELETE FROM t\0 WHERE id = 1"), "syntax error: NUL byte outside a quoted string at offset 13"},
    {L("\0SELECT 1"), "syntax error: NUL byte outside a quoted string at offset 0"},
    {L("SELECT 1 # c\0x\n"), "syntax error: NUL byte outside a quoted string at offset 12"},
    {L("SELECT 1\0\0"), "syntax error: NUL byte outside a quoted string at offset 8"},
    {L("SELECT /*! 1\0 */ 2"), "syntax error: NUL byte outside a quoted string at offset 12"},
    {L("SELECT * FROM `t\0x`"), "syntax error: NUL byte in a quoted identifier at offset 16"},
    {L("INSERT INTO t VALUES (1, 'a')\0, (2, 'b')"),
     "syntax error: NUL byte outside a quoted string at offset 29"},
    {L("\0"), "empty statement at offset 1"},
    /* a dal hint's values are C strings: a NUL would cut one short */
    {L("SELECT /*+ dal shard_value='12\0' */ 1"), "malformed dal hint at offset 27"},
    {L("SELECT /*+ dal shard_value='12\\0' */ 1"), "malformed dal hint at offset 27"},
    {L("SELECT /*+ dal datasource=db1\0x */ 1"), "malformed dal hint at offset 26"},
};

START_TEST(test_nul_errors)
{
    const struct nul_err_case *c = &nul_err_cases[_i];
    char *copy = exact_copy(c->sql, c->len), err[128];
    dal_sql_t *s = (dal_sql_t *)1;

    ck_assert_int_eq(sql_analyse(copy, c->len, 0, &s, err, sizeof err), -1);
    ck_assert_ptr_null(s);
    ck_assert_msg(strcmp(err, c->msg) == 0, "case %d: got '%s', want '%s'", _i, err, c->msg);
    free(copy);
}
END_TEST

/* A NUL inside a string is part of the statement: the analysis keeps every
 * byte, and the value decodes to its 0 byte. */
START_TEST(test_nul_in_strings)
{
    static const char q1[] = "INSERT INTO t (id, v) VALUES (1, 'a\\\0b'), (2, 'c\0d')";
    static const char q2[] = "SELECT v FROM t WHERE v = \"x\0y\" /* \0 */";
    char *c1 = exact_copy(q1, sizeof q1 - 1), *c2 = exact_copy(q2, sizeof q2 - 1), out[8],
         err[128];
    dal_sql_t *s;
    size_t n;

    ck_assert_int_eq(sql_analyse(c1, sizeof q1 - 1, 0, &s, err, sizeof err), 0);
    ck_assert_int_eq(s->kind, DAL_SQL_INSERT);
    ck_assert_uint_eq(s->len, sizeof q1 - 1);
    ck_assert_int_eq(memcmp(s->text, q1, sizeof q1), 0);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_uint_eq(s->values_end, sizeof q1 - 1);
    ck_assert_int_eq(sql_literal_text(s->text, &s->rows[0].vals[1], out, sizeof out, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(out, "a\0b", 3), 0);
    ck_assert_int_eq(sql_literal_text(s->text, &s->rows[1].vals[1], out, sizeof out, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(out, "c\0d", 3), 0);
    sql_free(s);

    ck_assert_int_eq(sql_analyse(c2, sizeof q2 - 1, 0, &s, err, sizeof err), 0);
    ck_assert_int_eq(s->kind, DAL_SQL_SELECT);
    ck_assert_uint_eq(s->nconds, 1);
    ck_assert_int_eq(sql_literal_text(s->text, &s->conds[0].vals[0], out, sizeof out, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(out, "x\0y", 3), 0);
    sql_free(s);
    free(c1);
    free(c2);
}
END_TEST

/* The cache is keyed by the whole text: one with a NUL is not its prefix,
 * nor another text with the same prefix, in the shared cache and in the
 * thread's front cache alike. */
START_TEST(test_cache_nul)
{
    dal_sql_cache_t *c = sql_cache_new(64);
    static const char q[] = "SELECT 'a\0b'", r[] = "SELECT 'a\0c'", t[] = "SELECT 1\0";
    const dal_sql_t *a, *b, *x;
    char err[128];
    int lent;

    a = sql_cache_get(c, q, sizeof q - 1, 0, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->len, sizeof q - 1);
    /* the prefix up to the NUL is an unterminated string */
    ck_assert_ptr_null(sql_cache_get(c, q, 9, 0, err, sizeof err));
    ck_assert_str_eq(err, "unterminated string at offset 7");
    b = sql_cache_get(c, r, sizeof r - 1, 0, err, sizeof err);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(memcmp(b->text, r, sizeof r), 0);
    x = sql_cache_get(c, q, sizeof q - 1, 0, err, sizeof err);
    ck_assert_ptr_eq(x, a);
    sql_unref(x);
    /* a final NUL is the end of the statement, yet another text */
    x = sql_cache_borrow(c, t, sizeof t - 1, 0, &lent, err, sizeof err);
    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(lent, 1);
    ck_assert_uint_eq(x->len, 9);
    ck_assert_int_eq(x->kind, DAL_SQL_SELECT);
    sql_cache_return();
    x = sql_cache_borrow(c, t, 8, 0, &lent, err, sizeof err);
    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq(x->len, 8);
    sql_cache_return();
    x = sql_cache_borrow(c, q, sizeof q - 1, 0, &lent, err, sizeof err);
    ck_assert_ptr_eq(x, a);
    sql_cache_return();
    ck_assert_ptr_null(sql_cache_borrow(c, r, 9, 0, &lent, err, sizeof err));
    sql_unref(a);
    sql_unref(b);
    sql_cache_free(c);
}
END_TEST

/* The same with a byte bound far below the working set: every insert
 * sweeps the sets for room while the other threads hit, miss and insert;
 * once they are done the cache is within its bound. */
START_TEST(test_cache_threads_byte_bound)
{
    dal_sql_cache_t *c = sql_cache_new(4096);
    pthread_t th[NTHREADS];
    struct worker w[NTHREADS];
    sql_cache_figures_t f;
    int i;

    sql_cache_limit(c, 8192, SQL_CACHE_MAX_STATEMENT);
    for (i = 0; i < NTHREADS; i++) {
        w[i].cache = c;
        w[i].seed = i + 11;
        w[i].errors = 0;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].errors, 0);
    }
    sql_cache_figures(c, &f);
    ck_assert_uint_eq(f.hits + f.misses, (uint64_t)NTHREADS * ROUNDS);
    ck_assert_uint_le(f.bytes, 8192);
    ck_assert_uint_gt(f.evictions, 0);
    ck_assert_uint_ge(f.misses, f.entries + f.evictions); /* two may miss one text */
    sql_cache_free(c);
}
END_TEST

/* ------------------------------------------------------------ main */

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))


/* The session's @@autocommit: marked, and each reference's span found
 * (not @@global's, not in a string or comment, not spaced apart). */
START_TEST(test_autocommit_refs)
{
    const char *q = "SELECT @@autocommit, @@SESSION.AutoCommit AS a, @@global.autocommit, "
                    "'@@autocommit', /* @@autocommit */ @@local.autocommit + 1, @ @autocommit "
                    "FROM t WHERE @@autocommit";
    dal_sql_t *s = analyse_ok(q);
    dal_sql_span_t r[8];

    ck_assert(s->reads_autocommit);
    ck_assert_uint_eq(sql_autocommit_refs(s, r, 8), 4);
    ck_assert_uint_eq(sql_autocommit_refs(s, r, 1), 4);
    ck_assert(r[0].len == strlen("@@autocommit") && strncmp(q + r[0].off, "@@autocommit", r[0].len) == 0);
    ck_assert(r[1].len == strlen("@@SESSION.AutoCommit") && strncmp(q + r[1].off, "@@SESSION.AutoCommit", r[1].len) == 0);
    ck_assert(r[2].len == strlen("@@local.autocommit") && strncmp(q + r[2].off, "@@local.autocommit", r[2].len) == 0);
    ck_assert_uint_eq(r[3].off, strlen(q) - strlen("@@autocommit"));
    sql_free(s);
    s = analyse_ok("SELECT @@global.autocommit, @@autocommit_x, '@@autocommit'");
    ck_assert(!s->reads_autocommit);
    ck_assert_uint_eq(sql_autocommit_refs(s, r, 8), 0);
    sql_free(s);
}
END_TEST

static Suite *sql_suite(void)
{
    Suite *s = suite_create("sql");
    TCase *lex = tcase_create("lexer"), *kind = tcase_create("kind");
    TCase *an = tcase_create("analysis"), *err = tcase_create("errors");
    TCase *lit = tcase_create("literals"), *cache = tcase_create("cache");

    tcase_add_loop_test(lex, test_lex_table, 0, N(lex_cases));
    tcase_add_loop_test(lex, test_lex_server_version, 0, N(vc_version_cases));
    tcase_add_loop_test(lex, test_lex_no_backslash, 0, N(nobs_lex_cases));
    tcase_add_test(lex, test_lex_stops_at_len);
    tcase_add_test(lex, test_tok_eq_and_unquote);
    tcase_add_loop_test(lex, test_lex_nul, 0, N(nul_lex_cases));
    tcase_add_loop_test(kind, test_kind_table, 0, N(kind_cases));
    tcase_add_loop_test(an, test_analysis_table, 0, N(an_cases));
    tcase_add_test(an, test_analyse_no_backslash);
    tcase_add_test(an, test_spans_are_exact);
    tcase_add_test(an, test_negative_literal_fields);
    tcase_add_test(an, test_param_offsets);
    tcase_add_test(an, test_hint_spans);
    tcase_add_test(an, test_text_outlives_input);
    tcase_add_test(an, test_deep_nesting);
    tcase_add_test(an, test_large_insert);
    tcase_add_loop_test(err, test_error_table, 0, N(err_cases));
    tcase_add_loop_test(err, test_nul_errors, 0, N(nul_err_cases));
    tcase_add_test(an, test_nul_in_strings);
    tcase_add_test(an, test_autocommit_refs);
    tcase_add_loop_test(lit, test_literal_table, 0, N(lit_cases));
    tcase_add_test(lit, test_literal_edges);
    tcase_add_test(cache, test_cache_hit);
    tcase_add_test(cache, test_cache_mode_key);
    tcase_add_test(cache, test_cache_eviction_keeps_refs);
    tcase_add_test(cache, test_cache_front);
    tcase_add_test(cache, test_cache_nul);
    tcase_add_test(cache, test_cache_threads);
    tcase_add_test(cache, test_cache_bytes_reported);
    tcase_add_test(cache, test_cache_byte_bound);
    tcase_add_test(cache, test_cache_max_statement);
    tcase_add_test(cache, test_cache_front_big);
    tcase_add_test(cache, test_cache_threads_byte_bound);
    tcase_set_timeout(cache, 60);
    suite_add_tcase(s, lex);
    suite_add_tcase(s, kind);
    suite_add_tcase(s, an);
    suite_add_tcase(s, err);
    suite_add_tcase(s, lit);
    suite_add_tcase(s, cache);
    return s;
}

int main(void)
{
    int status = tu_run(sql_suite(), CK_FORK_GETENV);

    return status;
}
