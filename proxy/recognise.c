/*
 * recognise.c -- the reading of the statements dal-proxy answers itself
 * but SET and USE (recognise_set.c).  See recognise.h; the words are read
 * by text_word_is (text.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "recognise.h"
#include "text.h"

/* `first [one of opts] word` at *p (opts NULL-ended, the first that is
 * there taken): true and *p past it. */
static bool phrase(const char **p, const char *first, const char *const *opts, const char *word)
{
    const char *q = *p;

    if (!text_word_is(&q, first))
        return false;
    while (*opts != NULL && !text_word_is(&q, *opts))
        opts++;
    if (!text_word_is(&q, word))
        return false;
    *p = q;
    return true;
}

/* ---------------------------------------------------------------- KILL */

/* p past blanks and the character ch, or NULL when ch is not next. */
static const char *past(const char *p, char ch)
{
    p = text_blanks(p);
    return *p == ch ? p + 1 : NULL;
}

bool recognise_kill(const char *sql, size_t len, uint32_t self, bool *query_only, uint32_t *id)
{
    const char *p = sql, *q;
    char *end;
    unsigned long v;

    if (!text_word_is(&p, "KILL"))
        return false;
    if (!text_word_is(&p, "HARD"))
        (void)text_word_is(&p, "SOFT");
    *query_only = text_word_is(&p, "QUERY");
    if (!*query_only)
        (void)text_word_is(&p, "CONNECTION");
    p = text_blanks(p);
    if (text_word_is(&p, "CONNECTION_ID")) {
        if ((q = past(p, '(')) == NULL || (q = past(q, ')')) == NULL)
            return false;
        end = (char *)q;
        v = self;
    } else {
        if (!isdigit((unsigned char)*p))
            return false;
        errno = 0;
        v = strtoul(p, &end, 10);
        if (errno != 0 || v > UINT32_MAX)
            return false;
    }
    while (end < sql + len && (isspace((unsigned char)*end) || *end == ';'))
        end++;
    *id = (uint32_t)v;
    return end == sql + len;
}

/* ------------------------------------------------ SHOW WARNINGS/ERRORS */

/* `LIMIT [offset,] n` or `LIMIT n OFFSET m` at p, or nothing, up to end:
 * false for anything else. */
static bool parse_limit(const char *p, const char *end_of_text, uint64_t *offset,
                        uint64_t *limit)
{
    char *end;
    uint64_t a, b;

    *offset = 0;
    *limit = UINT64_MAX;
    if (!text_word_is(&p, "LIMIT"))
        goto tail;
    a = strtoull(p, &end, 10);
    if (end == p)
        return false;
    p = text_blanks(end);
    if (*p == ',' || text_word_is(&p, "OFFSET")) {
        bool comma = *p == ',';
        p += comma;
        b = strtoull(p, &end, 10);
        if (end == p)
            return false;
        p = end;
        *offset = comma ? a : b;
        *limit = comma ? b : a;
    } else {
        *limit = a;
    }
tail:
    while (p < end_of_text && (isspace((unsigned char)*p) || *p == ';'))
        p++;
    return p == end_of_text;
}

bool recognise_diag(const char *sql, size_t len, recognise_diag_t *d)
{
    const char *p = sql, *q, *end = sql + len;

    if (!text_word_is(&p, "SHOW"))
        return false;
    q = p;
    d->count = text_word_is(&q, "COUNT");
    if (d->count) {
        q = text_blanks(q);
        if (strncmp(q, "(*)", 3) != 0)
            return false;
        p = q + 3;
    }
    d->errors = text_word_is(&p, "ERRORS");
    if (!d->errors && !text_word_is(&p, "WARNINGS"))
        return false;
    /* COUNT(*) takes no LIMIT: the server's syntax error */
    if (d->count && text_word_is(&p, "LIMIT"))
        return false;
    return parse_limit(p, end, &d->offset, &d->limit);
}

/* ----------------------------------------- PROCESSLIST, STATUS, FLUSH */

bool recognise_show_processlist(const char *sql, bool *full)
{
    const char *p = sql;

    if (!text_word_is(&p, "SHOW"))
        return false;
    *full = text_word_is(&p, "FULL");
    if (!text_word_is(&p, "PROCESSLIST"))
        return false;
    return recognise_at_end(p);
}

bool recognise_show_status(const char *sql)
{
    static const char *const scope[] = {"GLOBAL", "SESSION", "LOCAL", NULL};

    return phrase(&sql, "SHOW", scope, "STATUS");
}

bool recognise_flush_status(const char *sql)
{
    static const char *const scope[] = {"NO_WRITE_TO_BINLOG", "LOCAL", NULL};

    return phrase(&sql, "FLUSH", scope, "STATUS") && recognise_at_end(sql);
}

bool recognise_mentions_processlist(const char *sql, size_t len)
{
    const char *end = sql + len, *p;
    int k;

    /* memchr finds the candidates of each case faster than a byte loop */
    for (k = 0; k < 2; k++)
        for (p = sql; p + 11 <= end && (p = memchr(p, "pP"[k], (size_t)(end - p))) != NULL &&
                      p + 11 <= end;
             p++)
            if (strncasecmp(p, "PROCESSLIST", 11) == 0)
                return true;
    return false;
}

/* `information_schema.PROCESSLIST` at p (each name bare or in backquotes,
 * any case): its length, else 0. */
static size_t names_table(const char *p)
{
    const char *q = p;
    bool quoted;

    quoted = *q == '`';
    q += quoted;
    if (strncasecmp(q, "information_schema", 18) != 0)
        return 0;
    q += 18;
    if (quoted && *q++ != '`')
        return 0;
    if (*q++ != '.')
        return 0;
    quoted = *q == '`';
    q += quoted;
    if (strncasecmp(q, "PROCESSLIST", 11) != 0)
        return 0;
    q += 11;
    if (quoted && *q++ != '`')
        return 0;
    if (isalnum((unsigned char)*q) || *q == '_' || *q == '$')
        return 0;
    return (size_t)(q - p);
}

/* Whether the text at p (after the table's name) starts with an alias. */
static bool alias_follows(const char *p)
{
    static const char *const words[] = {
        "WHERE", "ORDER", "GROUP", "LIMIT", "HAVING", "JOIN", "INNER", "LEFT", "RIGHT",
        "CROSS", "NATURAL", "STRAIGHT_JOIN", "ON", "USING", "UNION", "EXCEPT", "INTERSECT",
        "WINDOW", "FOR", "LOCK", "INTO", "PROCEDURE", "FULL", "OUTER",
    };
    size_t i;

    p = text_blanks(p);
    if (*p == '`')
        return true;
    if (!isalpha((unsigned char)*p) && *p != '_')
        return false;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i]);
        if (strncasecmp(p, words[i], n) == 0 && !isalnum((unsigned char)p[n]) && p[n] != '_')
            return false;
    }
    return true;
}

/* `CONNECTION_ID()` at p (any case, spaces before the parentheses): its
 * length, else 0. */
static size_t names_id(const char *p)
{
    const char *q;

    if (strncasecmp(p, "CONNECTION_ID", 13) != 0)
        return 0;
    q = text_blanks(p + 13);
    if (*q++ != '(')
        return 0;
    q = text_blanks(q);
    return *q == ')' ? (size_t)(q + 1 - p) : 0;
}

bool recognise_processlist_ref(const char *sql, const char *p, const char *end,
                               bool no_backslash, recognise_pl_ref_t *ref)
{
    char q = 0;
    size_t n;

    for (; p < end; p++) {
        if (q != 0) {
            p = text_quoted(p, end, &q, no_backslash);
        } else if (p != sql && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
            if (*p == '\'' || *p == '"' || *p == '`')
                q = *p;
        } else if ((n = names_table(p)) > 0) {
            *ref = (recognise_pl_ref_t){p, n, true, alias_follows(p + n)};
            return true;
        } else if ((n = names_id(p)) > 0) {
            *ref = (recognise_pl_ref_t){p, n, false, false};
            return true;
        } else if (*p == '\'' || *p == '"' || *p == '`') {
            q = *p;
        }
    }
    return false;
}

/* ------------------------------------- SHOW TABLES, DESCRIBE and SHOW */

bool recognise_ident(const char **p, char *buf, size_t size)
{
    const char *s = text_blanks(*p);
    size_t n = 0;

    if (*s == '`') {
        for (s++; *s != '\0'; s++) {
            if (*s == '`' && s[1] != '`')
                break;
            if (*s == '`')
                s++;
            if (n + 1 >= size)
                return false;
            buf[n++] = *s;
        }
        if (*s != '`')
            return false;
        s++;
    } else {
        while (isalnum((unsigned char)*s) || *s == '_' || *s == '$') {
            if (n + 1 >= size)
                return false;
            buf[n++] = *s++;
        }
    }
    buf[n] = '\0';
    *p = s;
    return n > 0;
}

bool recognise_at_end(const char *p)
{
    while (isspace((unsigned char)*p) || *p == ';')
        p++;
    return *p == '\0';
}

bool recognise_show_tables(const char *sql, bool *full, char *db, size_t size,
                           const char **filter)
{
    const char *p = sql, *q;

    if (!text_word_is(&p, "SHOW"))
        return false;
    *full = text_word_is(&p, "FULL");
    if (!text_word_is(&p, "TABLES"))
        return false;
    db[0] = '\0';
    q = p;
    if (text_word_is(&q, "FROM") || text_word_is(&q, "IN")) {
        if (!recognise_ident(&q, db, size))
            return false;
        p = q;
    }
    q = p;
    if (!recognise_at_end(p) && !text_word_is(&q, "LIKE") && !text_word_is(&q, "WHERE"))
        return false;
    *filter = p;
    return true;
}

const char *recognise_like_pattern(const char *p, size_t *n)
{
    if (!text_word_is(&p, "LIKE"))
        return NULL;
    p = text_blanks(p);
    if (*p != '\'')
        return NULL;
    *n = strcspn(p + 1, "'\\");
    return p[1 + *n] == '\'' ? p + 1 : NULL;
}

bool recognise_show_databases(const char *sql, const char **pat, size_t *n)
{
    const char *p = sql;

    *pat = NULL;
    *n = 0;
    if (!text_word_is(&p, "SHOW") || !text_word_is(&p, "DATABASES"))
        return false;
    if ((*pat = recognise_like_pattern(p, n)) != NULL)
        return recognise_at_end(*pat + *n + 1) && *n <= 120;
    return !text_word_is(&p, "LIKE") && recognise_at_end(p);
}

/* `{FROM|IN} db` at *p, if there: it must name ours (else false: the
 * servers answer, with their error); *named whether it was there. */
static bool our_schema_clause(const char *ours, const char **p, bool *named)
{
    const char *q = *p;
    char db[129];

    *named = false;
    if (!text_word_is(&q, "FROM") && !text_word_is(&q, "IN"))
        return true;
    if (!recognise_ident(&q, db, sizeof db) || strcmp(db, ours) != 0)
        return false;
    *p = q;
    *named = true;
    return true;
}

/* The describing statement's kind at *p, *p past its words up to the
 * table's name. */
static bool describe_kind(const char **p, describe_kind_t *kind)
{
    const char *q;

    if (text_word_is(p, "DESC") || text_word_is(p, "DESCRIBE")) {
        *kind = DESCRIBE_COLUMNS;
        q = *p;
        return !(text_word_is(&q, "SELECT") || text_word_is(&q, "WITH") ||
                 text_word_is(&q, "INSERT") || text_word_is(&q, "UPDATE") ||
                 text_word_is(&q, "DELETE") || text_word_is(&q, "REPLACE") ||
                 text_word_is(&q, "EXTENDED") || text_word_is(&q, "PARTITIONS") ||
                 text_word_is(&q, "FORMAT"));
    }
    if (!text_word_is(p, "SHOW"))
        return false;
    (void)text_word_is(p, "FULL");
    if (text_word_is(p, "COLUMNS") || text_word_is(p, "FIELDS"))
        *kind = DESCRIBE_COLUMNS;
    else if (text_word_is(p, "INDEX") || text_word_is(p, "INDEXES") || text_word_is(p, "KEYS"))
        *kind = DESCRIBE_INDEX;
    else if (text_word_is(p, "CREATE") && text_word_is(p, "TABLE"))
        *kind = DESCRIBE_CREATE;
    else
        return false;
    return *kind == DESCRIBE_CREATE || text_word_is(p, "FROM") || text_word_is(p, "IN");
}

bool recognise_describe(const char *sql, const char *ours, recognise_describe_t *d)
{
    const char *p = sql;
    char first[129];
    bool named = false;

    if (!describe_kind(&p, &d->kind))
        return false;
    p = text_blanks(p);
    d->head_end = p;
    if (!recognise_ident(&p, first, sizeof first))
        return false;
    d->named_db = *p == '.';
    if (d->named_db) {
        p++;
        if (strcmp(first, ours) != 0 || !recognise_ident(&p, d->table, sizeof d->table))
            return false;
    } else {
        memcpy(d->table, first, strlen(first) + 1);
    }
    if (d->kind != DESCRIBE_CREATE && !our_schema_clause(ours, &p, &named))
        return false;
    d->named_db |= named;
    d->tail = p;
    return true;
}

/* ------------------------------------------------------ SHOW VARIABLES */

bool recognise_show_variables(const char *sql, size_t len, bool *like, const char **cond,
                              size_t *n)
{
    static const char *const scope[] = {"SESSION", "LOCAL", NULL};
    const char *p = sql;

    *cond = NULL;
    *n = 0;
    if (!phrase(&p, "SHOW", scope, "VARIABLES"))
        return false;
    *like = text_word_is(&p, "LIKE");
    if (!*like && !text_word_is(&p, "WHERE"))
        return p[strspn(p, " \t\r\n;")] == '\0';
    *n = len - (size_t)(p - sql);
    while (*n > 0 && (p[*n - 1] == ';' || isspace((unsigned char)p[*n - 1])))
        (*n)--;
    *cond = p;
    return true;
}

/* ------------------------------------------------------------- quoting */

size_t recognise_quote(char *out, char q, const char *s, size_t n, bool no_backslash)
{
    bool escape = q == '\'' && !no_backslash;
    char *o = out;
    size_t i;

    *o++ = q;
    for (i = 0; i < n; i++) {
        if (s[i] == q || (escape && s[i] == '\\'))
            *o++ = s[i];
        *o++ = s[i];
    }
    *o++ = q;
    *o = '\0';
    return (size_t)(o - out);
}

/* ------------------------------------------------ the shared account */

/* p past blanks and comments (a view's executable comments are open
 * already: what is left of one is a plain comment). */
static const char *past_comments(const char *p)
{
    const char *e;

    for (;;) {
        p = text_blanks(p);
        if (p[0] == '/' && p[1] == '*') {
            e = strstr(p + 2, "*/");
            p = e != NULL ? e + 2 : p + strlen(p);
        } else if (p[0] == '#' || (p[0] == '-' && p[1] == '-' && p[2] != '\0' &&
                                   (unsigned char)p[2] <= ' ')) {
            while (*p != '\0' && *p != '\n')
                p++;
        } else {
            return p;
        }
    }
}

static bool word_is(const char **p, const char *w)
{
    *p = past_comments(*p);
    return text_word_is(p, w);
}

/* After SET STATEMENT at p: just after the FOR that ends its assignments
 * (outside quotes, comments and parentheses), or NULL. */
static const char *statement_for(const char *p, bool no_backslash)
{
    const char *end = p + strlen(p), *w;
    int depth = 0;
    char q = 0;

    while (p < end) {
        if (q != 0) {
            p = text_quoted(p, end, &q, no_backslash) + 1;
            continue;
        }
        if ((w = past_comments(p)) != p) {
            p = w;
            continue;
        }
        if (*p == '\'' || *p == '"' || *p == '`')
            q = *p;
        else if (*p == '(')
            depth++;
        else if (*p == ')')
            depth -= depth > 0;
        else if (depth == 0 && isalpha((unsigned char)*p) && !isalnum((unsigned char)p[-1]) &&
                 p[-1] != '_' && p[-1] != '@' && p[-1] != '.' && text_word_is((w = p, &w), "FOR"))
            return w;
        p++;
    }
    return NULL;
}

bool recognise_account_change(const char *sql, bool no_backslash)
{
    const char *p = sql;

    if (word_is(&p, "ALTER"))
        return word_is(&p, "USER");
    if (!word_is(&p, "SET"))
        return false;
    if (word_is(&p, "STATEMENT"))
        return (p = statement_for(p, no_backslash)) != NULL &&
               recognise_account_change(p, no_backslash);
    if (word_is(&p, "PASSWORD"))
        return true;
    return word_is(&p, "DEFAULT") && word_is(&p, "ROLE");
}
