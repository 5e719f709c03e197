/*
 * text.c -- what the proxy reads in a statement's text to find the
 * statements it answers itself.  See text.h.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* The C locale's isspace and tolower, without the table lookup's call. */
static inline bool is_space(unsigned char ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

static inline unsigned char fold(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch | 0x20) : ch;
}

/* A byte of a word: the C locale's isalnum, or '_'. */
static inline bool is_word(unsigned char ch)
{
    return (unsigned char)((ch | 0x20) - 'a') < 26 || (unsigned char)(ch - '0') < 10 || ch == '_';
}

bool text_word_is(const char **p, const char *w)
{
    const char *s;
    size_t n;

    while (is_space((unsigned char)**p))
        (*p)++;
    /* strncasecmp's comparison in place: most statements differ from w
     * in the first letter or two */
    s = *p;
    for (n = 0; w[n] != '\0'; n++)
        if (fold((unsigned char)s[n]) != fold((unsigned char)w[n]))
            return false;
    if (is_word((unsigned char)s[n]))
        return false;
    *p += n;
    return true;
}

/* The word's bytes, folded, packed into an integer (the first byte the
 * lowest): one compare a candidate. */
#define PACK(a, b, c, d, e, f, g, h)                                                          \
    ((uint64_t)(a) | (uint64_t)(b) << 8 | (uint64_t)(c) << 16 | (uint64_t)(d) << 24 |     \
     (uint64_t)(e) << 32 | (uint64_t)(f) << 40 | (uint64_t)(g) << 48 | (uint64_t)(h) << 56)

text_lead_t text_lead(const char *sql, const char **past)
{
    static const struct {
        uint64_t word;
        text_lead_t lead;
    } leads[] = {
        {PACK('s', 'e', 'l', 'e', 'c', 't', 0, 0), TEXT_SELECT},
        {PACK('s', 'h', 'o', 'w', 0, 0, 0, 0), TEXT_SHOW},
        {PACK('s', 'e', 't', 0, 0, 0, 0, 0), TEXT_SET},
        {PACK('u', 's', 'e', 0, 0, 0, 0, 0), TEXT_USE},
        {PACK('k', 'i', 'l', 'l', 0, 0, 0, 0), TEXT_KILL},
        {PACK('d', 'e', 's', 'c', 0, 0, 0, 0), TEXT_DESCRIBE},
        {PACK('d', 'e', 's', 'c', 'r', 'i', 'b', 'e'), TEXT_DESCRIBE},
        {PACK('f', 'l', 'u', 's', 'h', 0, 0, 0), TEXT_FLUSH},
    };
    uint64_t word = 0;
    size_t n, i;

    while (is_space((unsigned char)*sql))
        sql++;
    for (n = 0; is_word((unsigned char)sql[n]); n++) {
        if (n == 8)
            return TEXT_OTHER;  /* longer than any of them */
        word |= (uint64_t)fold((unsigned char)sql[n]) << (8 * n);
    }
    for (i = 0; n > 0 && i < sizeof leads / sizeof leads[0]; i++)
        if (leads[i].word == word) {
            if (past != NULL)
                *past = sql + n;
            return leads[i].lead;
        }
    return TEXT_OTHER;
}

const char *text_quoted(const char *p, const char *end, char *q, bool no_backslash)
{
    if (*p == '\\' && *q != '`' && !no_backslash && p + 1 < end)
        return p + 1;
    if (*p == *q)
        *q = 0;
    return p;
}

const char *text_blanks(const char *p)
{
    while (is_space((unsigned char)*p))
        p++;
    return p;
}

bool text_only_comments(const char *sql)
{
    const char *p = sql;

    for (;;) {
        while (isspace((unsigned char)*p) || *p == ';')
            p++;
        if (p[0] == '/' && p[1] == '*' && p[2] != '!' && p[2] != 'M' && strstr(p + 2, "*/"))
            p = strstr(p + 2, "*/") + 2;
        else if (*p == '#' || (p[0] == '-' && p[1] == '-' && isspace((unsigned char)p[2])))
            p += strcspn(p, "\n");
        else
            return *p == '\0';
    }
}

char *text_copy(const char *text, size_t len)
{
    char *p = malloc(len + 1);

    if (p != NULL && len > 0)
        memcpy(p, text, len);
    if (p != NULL)
        p[len] = '\0';
    return p;
}
