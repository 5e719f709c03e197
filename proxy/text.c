/*
 * text.c -- what the proxy reads in a statement's text to find the
 * statements it answers itself.  See text.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text.h"

/* The C locale's isspace, without the table lookup's call. */
static inline bool is_space(unsigned char ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

bool text_word_is(const char **p, const char *w)
{
    size_t n;

    while (is_space((unsigned char)**p))
        (*p)++;
    /* the first letter alone turns most statements away: ASCII letters
     * differ only in 0x20, and other bytes equal under the fold are told
     * apart by strncasecmp */
    if (*w != '\0' && ((unsigned char)**p | 0x20) != ((unsigned char)*w | 0x20))
        return false;
    n = strlen(w);
    if (strncasecmp(*p, w, n) != 0 || isalnum((unsigned char)(*p)[n]) || (*p)[n] == '_')
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
