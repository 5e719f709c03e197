/*
 * infoschema_scan.c -- where a statement names information_schema.TABLES,
 * COLUMNS, STATISTICS, SESSION_VARIABLES, GLOBAL_STATUS or SESSION_STATUS
 * (infoschema.h): text only, no server.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "infoschema.h"

static const char *const views[] = {"TABLES", "COLUMNS", "STATISTICS", "SESSION_VARIABLES",
                                    "GLOBAL_STATUS", "SESSION_STATUS"};

static bool word_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '$' || (unsigned char)ch >= 0x80;
}

/* Past blanks and comments from p, up to end (comments may hold NUL
 * bytes; *end is a NUL). */
static const char *skip_blank(const char *p, const char *end)
{
    const char *e;

    while (p < end) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (p[0] == '/' && p[1] == '*') {
            e = p + 2 < end ? memmem(p + 2, (size_t)(end - p - 2), "*/", 2) : NULL;
            p = e != NULL ? e + 2 : end;
        } else if (*p == '#' || (p[0] == '-' && p[1] == '-' &&
                                 (p + 2 == end || isspace((unsigned char)p[2])))) {
            e = memchr(p, '\n', (size_t)(end - p));
            p = e != NULL ? e : end;
        } else {
            break;
        }
    }
    return p;
}

/* A word or `quoted` identifier at p: its end, its text (quotes off,
 * `` undoubled, cut to size) in buf; NULL when there is none. */
static const char *ident_at(const char *p, char *buf, size_t size)
{
    size_t n = 0;

    if (*p == '`') {
        for (p++; *p != '\0'; p++) {
            if (*p == '`' && p[1] != '`')
                break;
            if (*p == '`')
                p++;
            if (n + 1 < size)
                buf[n++] = *p;
        }
        if (*p != '`')
            return NULL;
        buf[n] = '\0';
        return p + 1;
    }
    if (!word_char(*p))
        return NULL;
    for (; word_char(*p); p++)
        if (n + 1 < size)
            buf[n++] = *p;
    buf[n] = '\0';
    return p;
}

/* Words after a table reference that do not start an alias. */
static bool clause_word(const char *w)
{
    static const char *const words[] = {
        "WHERE", "JOIN", "INNER", "LEFT", "RIGHT", "CROSS", "NATURAL", "STRAIGHT_JOIN", "ON",
        "USING", "GROUP", "ORDER", "LIMIT", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW",
        "FOR", "LOCK", "INTO", "USE", "IGNORE", "FORCE", "PROCEDURE", "OFFSET", "FETCH",
        "RETURNING", "PARTITION",
    };
    size_t i;

    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(w, words[i]) == 0)
            return true;
    return false;
}

/* The reference at p, `information_schema . VIEW`: its end and view. */
static const char *view_ref(const char *p, const char *end, int *view)
{
    char w[32];
    const char *q = ident_at(p, w, sizeof w);
    size_t i;

    if (q == NULL || strcasecmp(w, "information_schema") != 0)
        return NULL;
    q = skip_blank(q, end);
    if (*q != '.')
        return NULL;
    q = ident_at(skip_blank(q + 1, end), w, sizeof w);
    for (i = 0; q != NULL && i < sizeof views / sizeof views[0]; i++)
        if (strcasecmp(w, views[i]) == 0) {
            *view = (int)i;
            return q;
        }
    return NULL;
}

/* Whether the word ending at e (after blanks) is `word`. */
static bool word_before(const char *sql, const char *e, const char *word)
{
    size_t n = strlen(word);

    while (e > sql && isspace((unsigned char)e[-1]))
        e--;
    return (size_t)(e - sql) >= n && strncasecmp(e - n, word, n) == 0;
}

/* Whether a is followed by b somewhere in [p, end) (memchr is faster
 * than memmem at a two-byte needle). */
static bool has_pair(const char *p, const char *end, char a, char b)
{
    while ((p = memchr(p, a, (size_t)(end - p))) != NULL && ++p < end)
        if (*p == b)
            return true;
    return false;
}

/* Whether sql may name what infoschema_find looks for: a few memchr
 * calls that spare most statements (a point select) the word-by-word
 * scan.  Any comment sends the text to the scan, which skips comments
 * between the words. */
static bool may_refer(const char *sql, size_t len)
{
    const char *p, *end = sql + len;

    if (memchr(sql, '#', len) != NULL || has_pair(sql, end, '-', '-') ||
        has_pair(sql, end, '/', '*'))
        return true;
    for (p = sql; (p = memchr(p, '_', (size_t)(end - p))) != NULL; p++)
        if (p - sql >= 11 && end - p >= 7 && strncasecmp(p - 11, "information_schema", 18) == 0)
            return true;
    for (p = sql; (p = memchr(p, '(', (size_t)(end - p))) != NULL; p++)
        if (word_before(sql, p, "database") || word_before(sql, p, "schema"))
            return true;
    return false;
}

size_t infoschema_find(const char *sql, size_t len, bool no_backslash, infoschema_ref_t *refs,
                       size_t max)
{
    const char *p = sql, *e, *end = sql + len;
    char w[64];
    size_t n = 0;
    int view;

    if (!may_refer(sql, len))
        return 0;
    while (p < end && n < max) {
        if (*p == '\'' || *p == '"') {
            char q = *p++;
            while (p < end && *p != q)
                p += (*p == '\\' && !no_backslash && p + 1 < end) ? 2 : 1;
            p += p < end;
        } else if (p != skip_blank(p, end)) {
            p = skip_blank(p, end);
        } else if ((e = view_ref(p, end, &view)) != NULL && (p == sql || p[-1] != '.')) {
            const char *a = skip_blank(e, end);
            refs[n].off = (size_t)(p - sql);
            refs[n].len = (size_t)(e - p);
            refs[n].view = view;
            refs[n].aliased = ident_at(a, w, sizeof w) != NULL &&
                              (strcasecmp(w, "AS") == 0 || (*a == '`' || !clause_word(w)));
            n++;
            p = e;
        } else if ((e = ident_at(p, w, sizeof w)) != NULL) {
            const char *a = skip_blank(e, end);
            if (*p != '`' && (p == sql || p[-1] != '.') &&
                (strcasecmp(w, "DATABASE") == 0 || strcasecmp(w, "SCHEMA") == 0) && *a == '(' &&
                *(a = skip_blank(a + 1, end)) == ')') {
                refs[n].off = (size_t)(p - sql);
                refs[n].len = (size_t)(a + 1 - p);
                refs[n].view = INFOSCHEMA_DATABASE;
                refs[n].aliased = false;
                n++;
                e = a + 1;
            }
            p = e;
        } else {
            p++;
        }
    }
    return n;
}

const char *infoschema_view_name(int view)
{
    return views[view];
}

