/*
 * recognise_set.c -- the reading of SET and USE, whose actions setvar.c
 * takes.  See recognise.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "recognise.h"
#include "text.h"

bool recognise_use(const char *sql, size_t len, const char **db, size_t *n)
{
    const char *p = sql;
    size_t k;

    if (!text_word_is(&p, "USE"))
        return false;
    p = text_blanks(p);
    k = len - (size_t)(p - sql);
    while (k > 0 && (isspace((unsigned char)p[k - 1]) || p[k - 1] == ';'))
        k--;
    if (k >= 2 && p[0] == '`' && p[k - 1] == '`') {
        p++;
        k -= 2;
    }
    *db = p;
    *n = k;
    return true;
}

const char *recognise_set_item_end(const char *p, const char *end, bool no_backslash)
{
    char q = 0;
    int depth = 0;

    for (; p < end; p++) {
        if (q != 0) {
            p = text_quoted(p, end, &q, no_backslash);
        } else if (*p == '\'' || *p == '"' || *p == '`') {
            q = *p;
        } else if (*p == '(') {
            depth++;
        } else if (*p == ')') {
            depth--;
        } else if (*p == ',' && depth == 0) {
            break;
        }
    }
    return p;
}

bool recognise_reads_state(const char *v, bool no_backslash)
{
    const char *end = v + strlen(v);
    char q = 0;

    for (; v < end; v++) {
        if (q != 0) {
            v = text_quoted(v, end, &q, no_backslash);
        } else if (*v == '\'' || *v == '"' || *v == '`') {
            q = *v;
        } else if (*v == '@' || *v == '(') {
            return true;
        }
    }
    return false;
}

bool recognise_is_user_var(const char *p)
{
    p = text_blanks(p);
    return (*p == '@' && p[1] != '@') || strncasecmp(p, "@@global.", 9) == 0;
}

bool recognise_list_done(const char *p, const char *end)
{
    while (p < end && (isspace((unsigned char)*p) || *p == ';'))
        p++;
    return p == end;
}

bool recognise_set_session(const char *p, const char *last, bool no_backslash)
{
    const char *q = p, *end;

    if (text_word_is(&q, "GLOBAL") || text_word_is(&q, "PASSWORD") ||
        text_word_is(&q, "STATEMENT") || text_word_is(&q, "ROLE") ||
        text_word_is(&q, "DEFAULT"))
        return false;
    for (; p < last; p = end < last ? end + 1 : end) {
        end = recognise_set_item_end(p, last, no_backslash);
        if (!recognise_is_user_var(p) && !recognise_list_done(p, end) && p != end)
            return true;
    }
    return false;
}

bool recognise_set_item(const char *p, char name[65], const char **value)
{
    size_t n = 0;

    if (!text_word_is(&p, "SESSION"))
        (void)text_word_is(&p, "LOCAL");
    p = text_blanks(p);
    if (strncmp(p, "@@", 2) == 0) {
        p += 2;
        if (strncasecmp(p, "session.", 8) == 0 || strncasecmp(p, "local.", 6) == 0)
            p = strchr(p, '.') + 1;
    }
    while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n < 64)
        n++;
    memcpy(name, p, n);
    name[n] = '\0';
    p = text_blanks(p + n);
    if (n == 0 || (*p != '=' && strncmp(p, ":=", 2) != 0))
        return false;
    p += *p == '=' ? 1 : 2;
    *value = text_blanks(p);
    return true;
}

bool recognise_set_transaction(const char **p, bool *session)
{
    const char *q = *p;

    *session = text_word_is(&q, "SESSION") || text_word_is(&q, "LOCAL");
    if (!text_word_is(&q, "TRANSACTION"))
        return false;
    *p = q;
    return true;
}

/* ISOLATION LEVEL's value at *p, as tx_isolation takes it, or NULL. */
static const char *isolation_level(const char **p)
{
    static const char *const levels[][3] = {
        {"READ", "UNCOMMITTED", "'READ-UNCOMMITTED'"}, {"READ", "COMMITTED", "'READ-COMMITTED'"},
        {"REPEATABLE", "READ", "'REPEATABLE-READ'"}, {"SERIALIZABLE", NULL, "'SERIALIZABLE'"},
    };
    size_t i;

    for (i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        const char *q = *p;
        if (text_word_is(&q, levels[i][0]) &&
            (levels[i][1] == NULL || text_word_is(&q, levels[i][1]))) {
            *p = q;
            return levels[i][2];
        }
    }
    return NULL;
}

const char *recognise_txn_characteristics(const char *p, const char **level,
                                          const char **read_only)
{
    *level = *read_only = NULL;
    for (;;) {
        if (text_word_is(&p, "ISOLATION") && text_word_is(&p, "LEVEL")) {
            if ((*level = isolation_level(&p)) == NULL)
                return "SET SESSION TRANSACTION: unknown isolation level";
        } else if (text_word_is(&p, "READ")) {
            *read_only = text_word_is(&p, "ONLY") ? "1" : text_word_is(&p, "WRITE") ? "0" : NULL;
            if (*read_only == NULL)
                return "SET SESSION TRANSACTION: READ ONLY or READ WRITE";
        } else {
            return "SET SESSION TRANSACTION takes ISOLATION LEVEL, READ ONLY and READ WRITE";
        }
        p = text_blanks(p);
        if (*p != ',')
            break;
        p++;
    }
    if (*p != '\0' && *p != ';')
        return "SET SESSION TRANSACTION: unexpected text after it";
    return NULL;
}

bool recognise_set_names(const char *p, char value[RECOGNISE_NAMES_SIZE])
{
    char cs[65];
    size_t n = 0;

    if (!text_word_is(&p, "NAMES"))
        return false;
    p = text_blanks(p);
    while (p[n] != '\0' && !isspace((unsigned char)p[n]) && p[n] != ';' && n < sizeof cs - 1)
        n++;
    memcpy(cs, p, n);
    cs[n] = '\0';
    /* DEFAULT: the server's character set, the one the handshake
     * announced */
    if (strcasecmp(cs, "DEFAULT") == 0)
        strcpy(cs, "utf8mb4");
    /* SET NAMES cs COLLATE co: one value, which the session takes or
     * refuses whole (a bad collation leaves the charset as it was) */
    p += n;
    if (text_word_is(&p, "COLLATE")) {
        p = text_blanks(p);
        for (n = 0; p[n] != '\0' && !isspace((unsigned char)p[n]) && p[n] != ';'; n++)
            ;
        snprintf(value, RECOGNISE_NAMES_SIZE, "%s COLLATE %.*s", cs, (int)(n < 66 ? n : 66), p);
    } else {
        snprintf(value, RECOGNISE_NAMES_SIZE, "%s", cs);
    }
    return true;
}
