/*
 * text.c -- what the proxy reads in a statement's text to find the
 * statements it answers itself.  See text.h.
 */
#include <ctype.h>
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
    if (isalnum((unsigned char)s[n]) || s[n] == '_')
        return false;
    *p += n;
    return true;
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
