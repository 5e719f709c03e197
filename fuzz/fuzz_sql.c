/*
 * fuzz_sql.c - libFuzzer target for the SQL lexer and statement analyser.
 *
 * For each input: lex every token, checking that each lies inside the
 * input and that the lexer always makes progress; then analyse it and check
 * that every span of the result lies inside the statement, that every scope,
 * table, condition and qualifier refers to what exists (scope resolution),
 * then decode every literal.  Each input is read in both sql_modes: with backslash
 * escapes and with NO_BACKSLASH_ESCAPES.  The input buffer is exactly `size` bytes (not
 * NUL-terminated), so AddressSanitizer reports any read past its end.  See fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "sql_lex.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            abort();                                                                         \
    } while (0)

static void lex_all(const char *sql, size_t size, int no_backslash)
{
    dal_lexer_t lx;
    dal_token_t t;
    size_t count = 0, end = 0;

    lex_init(&lx, sql, size, no_backslash);
    do {
        t = lex_next(&lx);
        CHECK((size_t)t.off + t.len <= size);
        CHECK(t.type == DAL_TOK_EOF ? t.len == 0 && t.off == size : t.len > 0);
        /* every token ends further on than the one before, except the end
         * and an unterminated executable comment, which reaches back to
         * its opener but still ends at the end of input */
        CHECK(t.type == DAL_TOK_EOF || (size_t)t.off + t.len > end ||
              (t.type == DAL_TOK_ERROR && (size_t)t.off + t.len == size));
        end = (size_t)t.off + t.len;
        CHECK(++count <= size + 2);
    } while (t.type != DAL_TOK_EOF);
    CHECK(lex_next(&lx).type == DAL_TOK_EOF);
}

static void check_span(const dal_sql_t *s, uint32_t off, uint32_t len)
{
    CHECK((size_t)off + len <= s->len);
}

static void check_opnd(const dal_sql_t *s, const dal_sql_opnd_t *o)
{
    char out[16];
    size_t n;

    check_span(s, o->off, o->len);
    CHECK(o->kind != DAL_OPND_PARAM || (o->param_index >= 0 && (size_t)o->param_index < s->nparams));
    if (sql_literal_text(s->text, o, out, sizeof out, &n) == 0)
        CHECK(n <= o->len);
}

static void check_result(const dal_sql_t *s, const char *sql, size_t size)
{
    size_t i, k;

    CHECK(s->len == size && memcmp(s->text, sql, size) == 0 && s->text[size] == '\0');
    for (i = 0; i < s->ntrefs; i++) {
        check_span(s, s->trefs[i].off, s->trefs[i].len);
        check_span(s, s->trefs[i].qual_off, s->trefs[i].qual_len);
        CHECK(s->trefs[i].name != NULL);
    }
    /* scopes: scope 0 is the statement; parents come before children */
    CHECK(s->nscopes >= 1 && s->scopes[0].parent == -1);
    for (i = 1; i < s->nscopes; i++)
        CHECK(s->scopes[i].parent >= 0 && (size_t)s->scopes[i].parent < i);
    for (i = 0; i < s->ntrefs; i++)
        CHECK(s->trefs[i].scope >= 0 && (size_t)s->trefs[i].scope < s->nscopes);
    for (i = 0; i < s->nsources; i++)
        CHECK(s->sources[i].name != NULL && s->sources[i].scope >= 0 &&
              (size_t)s->sources[i].scope < s->nscopes);
    for (i = 0; i < s->ncolrefs; i++) {
        check_span(s, s->colrefs[i].off, s->colrefs[i].len);
        check_span(s, s->colrefs[i].qual_off, s->colrefs[i].qual_len);
        CHECK(s->colrefs[i].tref < s->ntrefs);
        /* a renamed qualifier names a table without an alias */
        CHECK(s->trefs[s->colrefs[i].tref].alias == NULL);
    }
    for (i = 0; i < s->nconds; i++) {
        const struct dal_sql_cond *c = &s->conds[i];
        check_span(s, c->off, c->len);
        CHECK(c->scope >= 0 && (size_t)c->scope < s->nscopes && c->column != NULL);
        CHECK(c->op == DAL_COND_COLEQ ? c->column2 != NULL && c->nvals == 0 : c->nvals > 0);
        for (k = 0; k < c->nvals; k++)
            check_opnd(s, &c->vals[k]);
    }
    for (i = 0; s->param_int != NULL && i < s->nparams; i++)
        CHECK(s->param_int[i] <= 1);
    for (i = 0; i < s->nrows; i++) {
        check_span(s, s->rows[i].off, s->rows[i].len);
        for (k = 0; k < s->rows[i].nvals; k++)
            check_opnd(s, &s->rows[i].vals[k]);
    }
    for (i = 0; i < s->ncolumns; i++)
        CHECK(s->columns[i] != NULL);
    for (i = 0; i < s->nset_columns; i++)
        CHECK(s->set_columns[i] != NULL);
    for (i = 0; i < s->nitems; i++) {
        check_span(s, s->items[i].off, s->items[i].len);
        check_span(s, s->items[i].arg_off, s->items[i].arg_len);
    }
    for (i = 0; i < s->norder_by; i++)
        check_span(s, s->order_by[i].off, s->order_by[i].len);
    for (i = 0; i < s->ngroup_by; i++)
        check_span(s, s->group_by[i].off, s->group_by[i].len);
    for (i = 0; i < s->nhints; i++) {
        CHECK(s->hints[i].key != NULL && s->hints[i].value != NULL);
        check_span(s, s->hints[i].off, s->hints[i].len);
        CHECK(i == 0 || s->hints[i].off >= s->hints[i - 1].off + s->hints[i - 1].len);
    }
    for (i = 0; i < s->nparams; i++) {
        CHECK(s->param_offs[i] < s->len && s->text[s->param_offs[i]] == '?');
        CHECK(i == 0 || s->param_offs[i] > s->param_offs[i - 1]);
    }
    check_span(s, s->where_off, s->where_len);
    check_span(s, s->having_off, s->having_len);
    check_span(s, s->limit_off, s->limit_len);
    check_span(s, s->odku_off, s->odku_len);
    CHECK(s->from_off <= s->from_end && s->from_end <= s->len);
    CHECK(s->values_off <= s->values_end && s->values_end <= s->len);
    if (s->has_limit) {
        check_opnd(s, &s->limit_count);
        if (s->limit_has_offset)
            check_opnd(s, &s->limit_offset);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* called by libFuzzer */

/* The checks of one input read in one sql_mode. */
static void one_mode(const char *sql, size_t size, int no_backslash)
{
    dal_sql_t *s = NULL;
    char err[128];

    lex_all(sql, size, no_backslash);
    if (sql_analyse(sql, size, no_backslash, &s, err, sizeof err) == 0) {
        CHECK(s != NULL && s->no_backslash == no_backslash);
        check_result(s, sql, size);
        sql_free(s);
    } else {
        CHECK(s == NULL && err[0] != '\0');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* versioned executable comments read for an unknown server version
     * (all of them SQL) or for 10.11.19's (some of them comments), by the
     * input's length, so that both readings meet every kind of input */
    sql_set_server_version(size % 2 ? 101119 : 0);
    one_mode((const char *)data, size, 0);
    one_mode((const char *)data, size, 1);
    return 0;
}
