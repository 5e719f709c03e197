/*
 * fuzz_recognise.c -- libFuzzer target for dal-proxy's reading of the
 * statements it answers itself: text_lead, text_word_is and
 * text_only_comments (proxy/text.h) and every recogniser's parse
 * (proxy/recognise.h: SET, USE, KILL, SHOW WARNINGS/ERRORS, SHOW COUNT(*),
 * SHOW PROCESSLIST/STATUS, FLUSH STATUS, the references to
 * information_schema.PROCESSLIST, SHOW TABLES/DATABASES/VARIABLES,
 * SHOW COLUMNS/INDEX/CREATE TABLE and DESCRIBE).
 *
 * The input is a statement's text, in a buffer exactly as long as it and
 * its NUL (NUL bytes inside kept), so AddressSanitizer reports a read past
 * the NUL; it is read in both sql_modes (with backslash escapes and with
 * NO_BACKSLASH_ESCAPES).  Every pointer a recogniser returns must lie
 * inside the text, every name it copies must fit its buffer, a
 * recognised statement must start with the word text_lead finds, a text
 * text_only_comments passes must lex as only comments, and the
 * quoting helper's output must lex (core/sql/sql_lex.c, in the same mode)
 * as one string or quoted name that reads back as the input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "recognise.h"
#include "sql_lex.h"
#include "text.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            abort();                                                                         \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* called by libFuzzer */

/* The text being read: sql .. sql + size, a NUL at sql[size]. */
static const char *sql;
static size_t size;

/* p lies inside the text (its end, the NUL, included). */
static bool inside(const char *p)
{
    return p >= sql && p <= sql + size;
}

/* A NUL-ended name of at most max bytes. */
static bool fits(const char *name, size_t max)
{
    return strnlen(name, max + 1) <= max;
}

/* The text's first word, as text_lead reads it. */
static text_lead_t lead(void)
{
    return text_lead(sql, NULL);
}

/* The lexer, in both modes, sees only comments and `;` in the text: what
 * text_only_comments answers for (its callers see the whole text, without
 * a NUL before its end). */
static void check_only_comments(void)
{
    dal_lexer_t lx;
    dal_token_t t;
    int mode;

    for (mode = 0; mode < 2; mode++) {
        lex_init(&lx, sql, size, mode);
        do {
            t = lex_next(&lx);
            CHECK(t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT || t.type == DAL_TOK_EOF ||
                  (t.type == DAL_TOK_PUNCT && sql[t.off] == ';'));
        } while (t.type != DAL_TOK_EOF);
    }
}

static void check_text(void)
{
    const char *past = NULL, *p;
    text_lead_t l = text_lead(sql, &past);
    char *copy;

    CHECK(l == TEXT_OTHER || (inside(past) && past > sql));
    /* a text of only comments has no first word */
    CHECK(!text_only_comments(sql) || l == TEXT_OTHER);
    if (text_only_comments(sql) && strlen(sql) == size)
        check_only_comments();
    p = sql;
    if (text_word_is(&p, "SELECT"))
        CHECK(l == TEXT_SELECT && p == past);
    CHECK(inside(p));
    copy = text_copy(sql, size);
    CHECK(copy != NULL && memcmp(copy, sql, size) == 0 && copy[size] == '\0');
    free(copy);
}

/* A SET list's items, read as setvar.c's set_list reads them. */
static void check_set_list(const char *list, bool no_backslash)
{
    const char *p, *end, *value, *last = sql + size;
    char name[65], *v;
    size_t items = 0;

    for (p = list; p < last; p = end < last ? end + 1 : end) {
        end = recognise_set_item_end(p, last, no_backslash);
        CHECK(end >= p && end <= last);
        CHECK(++items <= size + 1);
        (void)recognise_is_user_var(p);
        if (recognise_list_done(p, end) || p == end)
            continue;
        if (!recognise_set_item(p, name, &value))
            continue;
        CHECK(value >= p && value <= end && name[0] != '\0' && fits(name, 64));
        v = strndup(value, (size_t)(end - value));
        CHECK(v != NULL);
        (void)recognise_reads_state(v, no_backslash);
        free(v);
    }
}

static void check_set(bool no_backslash)
{
    const char *p = sql, *q, *db, *level, *read_only, *why;
    char names[RECOGNISE_NAMES_SIZE];
    bool session;
    size_t n;

    if (recognise_use(sql, size, &db, &n)) {
        CHECK(lead() == TEXT_USE && inside(db) && n <= size && db + n <= sql + size);
        return;
    }
    if (!text_word_is(&p, "SET"))
        return;
    CHECK(lead() == TEXT_SET);
    q = p;
    if (recognise_set_transaction(&q, &session)) {
        CHECK(inside(q) && q > p);
        why = recognise_txn_characteristics(q, &level, &read_only);
        CHECK(why != NULL || level != NULL || read_only != NULL);
        CHECK(read_only == NULL || strcmp(read_only, "1") == 0 || strcmp(read_only, "0") == 0);
        CHECK(level == NULL || level[0] == '\'');
        return;
    }
    if (recognise_set_session(p, sql + size, no_backslash) && recognise_set_names(p, names))
        CHECK(fits(names, RECOGNISE_NAMES_SIZE - 1));
    check_set_list(p, no_backslash);
}

static void check_kill(void)
{
    bool query_only;
    uint32_t id = 0;

    if (recognise_kill(sql, size, 7, &query_only, &id))
        CHECK(lead() == TEXT_KILL);
}

static void check_diag(void)
{
    recognise_diag_t d;

    if (recognise_diag(sql, size, &d)) {
        CHECK(lead() == TEXT_SHOW);
        CHECK(!d.count || (d.limit == UINT64_MAX && d.offset == 0));
    }
}

/* PROCESSLIST anywhere in the text (NUL bytes included), any case. */
static bool mentions_ref(void)
{
    size_t i, k;

    for (i = 0; i + 11 <= size; i++) {
        for (k = 0; k < 11 && (sql[i + k] | 0x20) == "processlist"[k]; k++)
            ;
        if (k == 11)
            return true;
    }
    return false;
}

static void check_processlist(bool no_backslash)
{
    const char *p = sql, *end = sql + size;
    recognise_pl_ref_t ref;
    bool full, mentions = recognise_mentions_processlist(sql, size), table = false;
    size_t refs = 0;

    CHECK(mentions == mentions_ref());
    if (recognise_show_processlist(sql, &full))
        CHECK(lead() == TEXT_SHOW && mentions);
    if (recognise_show_status(sql))
        CHECK(lead() == TEXT_SHOW);
    if (recognise_flush_status(sql))
        CHECK(lead() == TEXT_FLUSH);
    /* an account change starts with SET or ALTER (after comments) */
    if (recognise_account_change(sql, no_backslash))
        CHECK(lead() == TEXT_SET || lead() == TEXT_OTHER);
    for (; recognise_processlist_ref(sql, p, end, no_backslash, &ref); p = ref.at + ref.len) {
        CHECK(ref.at >= p && ref.len > 0 && ref.at + ref.len <= end);
        CHECK(ref.table || !ref.aliased);
        CHECK(++refs <= size);
        table |= ref.table;
    }
    CHECK(!table || mentions);
}

static void check_schema(void)
{
    static const char *const ours[] = {"", "db"};
    recognise_describe_t d;
    const char *filter = NULL, *pat, *p;
    char *db = malloc(129), *small = malloc(4);
    bool full;
    size_t i, n;

    CHECK(db != NULL && small != NULL);
    if (recognise_show_tables(sql, &full, db, 129, &filter))
        CHECK(lead() == TEXT_SHOW && inside(filter) && fits(db, 128));
    if (recognise_show_databases(sql, &pat, &n)) {
        CHECK(lead() == TEXT_SHOW);
        CHECK(pat == NULL || (inside(pat) && n <= 120 && pat + n < sql + size));
    }
    /* an identifier into a buffer smaller than most: cut off, never past it */
    p = sql;
    if (recognise_ident(&p, small, 4))
        CHECK(inside(p) && p > sql && fits(small, 3));
    for (i = 0; i < sizeof ours / sizeof ours[0]; i++) {
        if (!recognise_describe(sql, ours[i], &d))
            continue;
        CHECK(lead() == TEXT_SHOW || lead() == TEXT_DESCRIBE);
        CHECK(inside(d.head_end) && inside(d.tail) && d.head_end < d.tail);
        CHECK(d.table[0] != '\0' && fits(d.table, 128));
    }
    free(db);
    free(small);
}

static void check_variables(void)
{
    const char *cond;
    bool like;
    size_t n;

    if (recognise_show_variables(sql, size, &like, &cond, &n)) {
        CHECK(lead() == TEXT_SHOW);
        CHECK(cond == NULL || (inside(cond) && cond + n <= sql + size));
    }
}

/* out (len bytes), recognise_quote's quoting of the text in q: one token
 * of the lexer, in no_backslash's mode, that reads back as the text. */
static void check_quote_read(const char *out, size_t len, char q, bool no_backslash)
{
    dal_lexer_t lx;
    dal_token_t t;
    char *back;
    size_t i, n = 0;

    lex_init(&lx, out, len, no_backslash);
    t = lex_next(&lx);
    CHECK(t.type == (q == '`' ? DAL_TOK_QIDENT : DAL_TOK_STRING) && t.off == 0 && t.len == len);
    CHECK(lex_next(&lx).type == DAL_TOK_EOF);
    back = malloc(len);
    CHECK(back != NULL);
    for (i = 1; i + 1 < len; i++) {
        if (out[i] == q || (q == '\'' && !no_backslash && out[i] == '\\'))
            i++;  /* a doubled quote, an escaped backslash: one byte */
        back[n++] = out[i];
    }
    CHECK(n == size && memcmp(back, sql, size) == 0);
    free(back);
}

static void check_quote(bool no_backslash)
{
    static const char quotes[] = {'\'', '`'};
    char *out = malloc(2 * size + 3);
    size_t i, n;

    CHECK(out != NULL);
    for (i = 0; i < sizeof quotes; i++) {
        n = recognise_quote(out, quotes[i], sql, size, no_backslash);
        CHECK(n >= size + 2 && n <= 2 * size + 2 && out[n] == '\0');
        /* a NUL in a quoted name is the lexer's error, as the server's */
        if (quotes[i] != '`' || memchr(sql, '\0', size) == NULL)
            check_quote_read(out, n, quotes[i], no_backslash);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char *text = malloc(len + 1);
    int mode;

    if (text == NULL)
        return 0;
    if (len > 0)
        memcpy(text, data, len);
    text[len] = '\0';
    sql = text;
    size = len;
    check_text();
    check_kill();
    check_diag();
    check_schema();
    check_variables();
    for (mode = 0; mode < 2; mode++) {
        check_set(mode);
        check_processlist(mode);
        check_quote(mode);
    }
    free(text);
    return 0;
}
