/*
 * proto_split.c -- the statements of a multi-statement COM_QUERY.
 *
 * Only as much lexing as finding `;` needs: quotes, comments and
 * parentheses.  What a statement means is the core's business; this file
 * must only never cut one in two, so anything it does not understand is
 * left whole.
 *
 * NUL bytes as the server reads them: part of a '..' or ".." string or a
 * C-style comment; the end of a -- or # comment and of a `quoted
 * identifier`.  Anywhere else a NUL is never blank and never ends a
 * statement: the text from the statement holding it to the end is one
 * statement, which the core reads as the server does -- a syntax error
 * (the server fails that statement and runs nothing after it), unless
 * only `;` and whitespace follow the NUL, where the server's input ends.
 * So a piece that ends at a NUL never runs as if the NUL were not there.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "proto_int.h"

size_t proto_skip_quoted(const char *text, size_t len, size_t i, bool no_backslash)
{
    char q = text[i++];

    while (i < len) {
        if (text[i] == '\\' && q != '`' && !no_backslash && i + 1 < len)
            i += 2;
        else if (text[i] == '\0' && q == '`')
            return i;
        else if (text[i++] == q)
            return i;
    }
    return len;
}

size_t proto_skip_comment_at(const char *text, size_t len, size_t i)
{
    /* -- needs a blank or a control character after it, as in the server */
    if (text[i] == '#' ||
        (text[i] == '-' && i + 1 < len && text[i + 1] == '-' &&
         (i + 2 == len || (unsigned char)text[i + 2] <= ' ' || text[i + 2] == 0x7f))) {
        while (i < len && text[i] != '\n' && text[i] != '\0')
            i++;
        return i;
    }
    if (text[i] == '/' && i + 1 < len && text[i + 1] == '*') {
        for (i += 2; i + 1 < len; i++)
            if (text[i] == '*' && text[i + 1] == '/')
                return i + 2;
        return len;
    }
    return i;
}

/* Past spaces and comments from i. */
static size_t skip_blank(const char *text, size_t len, size_t i)
{
    size_t j;

    while (i < len) {
        if (isspace((unsigned char)text[i]))
            i++;
        else if ((j = proto_skip_comment(text, len, i)) != i)
            i = j;
        else
            break;
    }
    return i;
}

/* The word (letters, digits, _ and $) at text[i]: its length, 0 if none. */
static size_t word_len(const char *text, size_t len, size_t i)
{
    size_t n = 0;

    while (i + n < len && (isalnum((unsigned char)text[i + n]) || text[i + n] == '_' ||
                           text[i + n] == '$'))
        n++;
    return n;
}

static bool word_is(const char *text, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(text, w, n) == 0;
}

/* A compound statement outside a stored program at text[i] (n letters):
 * [label:] BEGIN NOT ATOMIC, FOR, WHILE, LOOP, REPEAT, IF or CASE (no other
 * statement begins with these words). */
static bool is_block(const char *text, size_t len, size_t i, size_t n)
{
    static const char *const loops[] = {"FOR", "WHILE", "LOOP", "REPEAT"};
    size_t j, k;

    if (word_is(text + i, n, "IF") || word_is(text + i, n, "CASE"))
        return true;
    j = skip_blank(text, len, i + n);
    if (n > 0 && j < len && text[j] == ':') { /* a label */
        i = skip_blank(text, len, j + 1);
        n = word_len(text, len, i);
    }
    if (word_is(text + i, n, "BEGIN")) {
        i = skip_blank(text, len, i + n);
        return word_is(text + i, word_len(text, len, i), "NOT");
    }
    for (k = 0; k < sizeof loops / sizeof *loops; k++)
        if (word_is(text + i, n, loops[k]))
            return true;
    return false;
}

static bool word_in(const char *w, size_t n, const char *const *list)
{
    for (; *list != NULL; list++)
        if (word_is(w, n, *list))
            return true;
    return false;
}

/*
 * Where the compound statement at the start of text ends: the `;` after
 * the END that closes its first word's block, or len when it is not
 * found (the rest of the text is then the statement).  Blocks open with
 * BEGIN, CASE (the expression's END closes it too) and, where a statement
 * starts, IF, LOOP, WHILE, REPEAT and FOR (not IF( or REPEAT(, functions);
 * END closes one, with the word after it (END IF) and a label.  A word
 * that opens nothing where the count thinks it does leaves a block open:
 * the text stays whole.  One that closes too early ends the statement at
 * a `;` inside it, and such a piece, lacking its END, is a syntax error
 * for the server: it never runs a part.
 */
static size_t block_end(const char *text, size_t len, bool no_backslash)
{
    static const char *const at_start[] = {"IF", "LOOP", "WHILE", "REPEAT", "FOR", NULL};
    static const char *const body[] = {"THEN", "ELSE", "DO", "LOOP", "REPEAT", NULL};
    static const char *const ends[] = {"IF", "CASE", "LOOP", "WHILE", "REPEAT", "FOR", NULL};
    size_t i = 0, j, n;
    int depth = 0, parens = 0;
    bool start = true;

    while ((i = skip_blank(text, len, i)) < len) {
        char ch = text[i];
        if (ch == '\'' || ch == '"' || ch == '`') {
            i = proto_skip_quoted(text, len, i, no_backslash);
            start = false;
            continue;
        }
        if (ch == '\0')
            return len;
        if ((n = word_len(text, len, i)) == 0) {
            parens += ch == '(' ? 1 : ch == ')' && parens > 0 ? -1 : 0;
            if (ch == ';' && parens == 0 && depth == 0)
                return i;
            start = ch == ';' && parens == 0;
            i++;
            continue;
        }
        j = skip_blank(text, len, i + n);
        if (start && parens == 0 && j < len && text[j] == ':' &&
            !(j + 1 < len && text[j + 1] == '=')) {
            i = j + 1; /* a label: a statement still starts after it */
            continue;
        }
        if (word_is(text + i, n, "END") && parens == 0) {
            if (--depth < 0)
                return len;
            /* END IF, END LOOP label, END label */
            if (word_in(text + j, word_len(text, len, j), ends))
                j = skip_blank(text, len, j + word_len(text, len, j));
            if (word_len(text, len, j) > 0 && !word_is(text + j, word_len(text, len, j), "AS"))
                j += word_len(text, len, j);
            i = j;
            start = false;
            continue;
        }
        if (word_is(text + i, n, "BEGIN")) { /* [NOT ATOMIC], then statements */
            depth++;
            if (word_is(text + j, word_len(text, len, j), "NOT")) {
                j = skip_blank(text, len, j + 3);
                j += word_len(text, len, j);
            }
            i = j;
            start = parens == 0;
            continue;
        }
        /* IF( and REPEAT( are functions */
        if (word_is(text + i, n, "CASE") ||
            (start && parens == 0 && word_in(text + i, n, at_start) &&
             (i + n == len || text[i + n] != '(')))
            depth++;
        start = parens == 0 && word_in(text + i, n, body);
        i += n;
    }
    return len;
}

/* A statement whose body has `;` of its own: CREATE ... PROCEDURE (or
 * FUNCTION, TRIGGER, EVENT, PACKAGE) within its first few words. */
static bool is_compound(const char *text, size_t len, bool no_backslash)
{
    static const char *const kinds[] = {"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "PACKAGE"};
    size_t i = skip_blank(text, len, 0), n = word_len(text, len, i), w, k;

    if (!word_is(text + i, n, "CREATE"))
        return false;
    /* CREATE [OR REPLACE] [DEFINER = 'u'@'h'] [AGGREGATE] [IF NOT EXISTS] KIND */
    for (w = 0, i += n; w < 8 && i < len; w++) {
        i = skip_blank(text, len, i);
        if (i < len && (text[i] == '\'' || text[i] == '"' || text[i] == '`')) {
            i = proto_skip_quoted(text, len, i, no_backslash);
            continue;
        }
        if ((n = word_len(text, len, i)) == 0) {
            if (i < len && (text[i] == '=' || text[i] == '@')) {
                i++;
                continue;
            }
            return false;
        }
        for (k = 0; k < sizeof kinds / sizeof *kinds; k++)
            if (word_is(text + i, n, kinds[k]))
                return true;
        i += n;
    }
    return false;
}

size_t proto_split_statement(const char *text, size_t len, bool no_backslash, size_t *next)
{
    size_t i = 0, j;
    int depth = 0;

    if (memchr(text, ';', len) == NULL) {
        *next = len;  /* what the scan below finds when no ';' can end it */
        return len;
    }
    i = skip_blank(text, len, 0);
    if (is_block(text, len, i, word_len(text, len, i))) {
        i = block_end(text, len, no_backslash);
        *next = i < len ? i + 1 : len;
        return i;
    }
    i = 0;
    if (is_compound(text, len, no_backslash)) {
        *next = len;
        return len;
    }
    while (i < len) {
        char ch = text[i];
        if (ch == '\'' || ch == '"' || ch == '`') {
            i = proto_skip_quoted(text, len, i, no_backslash);
        } else if ((j = proto_skip_comment(text, len, i)) != i) {
            i = j;
        } else if (ch == '\0') {
            break; /* the rest is one statement: see above */
        } else {
            if (ch == '(')
                depth++;
            else if (ch == ')' && depth > 0)
                depth--;
            else if (ch == ';' && depth == 0) {
                *next = i + 1;
                return i;
            }
            i++;
        }
    }
    *next = len;
    return len;
}

bool proto_sql_blank(const char *text, size_t len, uint32_t version)
{
    size_t i = 0, j;

    while (i < len) {
        if (isspace((unsigned char)text[i]) || text[i] == ';')
            i++;
        else if (proto_sql_vc_opener(text, len, i, version) != 0)
            return false;  /* the statement it holds */
        else if ((j = proto_skip_comment(text, len, i)) != i)
            i = j;
        else
            return false;
    }
    return true;
}
