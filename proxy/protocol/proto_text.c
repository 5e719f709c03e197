/*
 * proto_text.c -- a statement's text as the server reads it: executable
 * comments opened, NUL bytes where the server takes them.
 *
 * A server runs the content of a comment opened by slash-star-bang (or
 * MariaDB's slash-star-M-bang) when its version reaches the number right
 * after the bang (none: always), so `SET TIME_ZONE='+00:00'` wrapped in
 * one, as mariadb-dump writes it, is that SET.  dal-proxy answers some
 * statements itself (SET of session variables, USE, SHOW WARNINGS, ...);
 * it must recognise them in the same form the server would.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "proto_int.h"

/* Whether the C-style comment at text[i] is an executable one. */
static bool executable(const char *text, size_t len, size_t i)
{
    return (i + 2 < len && text[i + 2] == '!') ||
           (i + 3 < len && text[i + 2] == 'M' && text[i + 3] == '!');
}

size_t proto_sql_vc_opener(const char *text, size_t len, size_t i, uint32_t version)
{
    size_t j = i + 2, bang, digits = 0;
    uint32_t v = 0;

    if (i + 1 >= len || text[i] != '/' || text[i + 1] != '*')
        return 0;
    if (j < len && text[j] == 'M')
        j++;
    if (j >= len || text[j] != '!')
        return 0;
    bang = j + 1;
    for (j++; j < len && digits < 6 && isdigit((unsigned char)text[j]); j++, digits++)
        v = v * 10 + (uint32_t)(text[j] - '0');
    /* fewer than five digits are no version: they are the content's */
    if (digits != 0 && digits < 5)
        return bang - i;
    /* MariaDB leaves MySQL 5.7's and later five-digit versions to MySQL:
     * they stay comments unless opened by M! */
    if (digits == 5 && v >= 50700 && text[i + 2] != 'M')
        return 0;
    return digits == 0 || v <= version ? j - i : 0;
}

bool proto_sql_unwrap(char *text, size_t len, uint32_t version, bool no_backslash)
{
    bool found = false, inside = false;
    size_t i = 0, j, n;

    while (i < len) {
        char ch = text[i];
        if (ch == '\'' || ch == '"' || ch == '`') {
            i = proto_skip_quoted(text, len, i, no_backslash);
        } else if (ch != '/' && (j = proto_skip_comment(text, len, i)) != i) {
            i = j;
        } else if (inside && ch == '*' && i + 1 < len && text[i + 1] == '/') {
            text[i] = text[i + 1] = ' ';
            inside = false;
            i += 2;
        } else if (ch == '/' && i + 1 < len && text[i + 1] == '*') {
            if (!inside && (n = proto_sql_vc_opener(text, len, i, version)) != 0) {
                memset(text + i, ' ', n);
                found = inside = true;
                i += n;
                continue;
            }
            i = proto_skip_comment(text, len, i);
        } else {
            i++;
        }
    }
    return found;
}

/* Whether text[i..len) is only `;` and blanks. */
static bool only_ends(const char *text, size_t len, size_t i)
{
    while (i < len && (text[i] == ';' || isspace((unsigned char)text[i])))
        i++;
    return i == len;
}

size_t proto_sql_stray_nul(const char *text, size_t *len, bool no_backslash)
{
    size_t i = 0, j, n = *len;

    if (memchr(text, '\0', n) == NULL)
        return SIZE_MAX;  /* what the scan below finds when there is no NUL */
    while (i < n) {
        char ch = text[i];
        if (ch == '\0') {
            if (!only_ends(text, n, i + 1))
                return i;
            *len = i;  /* the server's end of the statement */
            return SIZE_MAX;
        }
        if (ch == '\'' || ch == '"' || ch == '`')
            i = proto_skip_quoted(text, n, i, no_backslash);
        else if (ch != '/' && (j = proto_skip_comment(text, n, i)) != i)
            i = j;
        else if (ch == '/' && i + 1 < n && text[i + 1] == '*' && !executable(text, n, i))
            i = proto_skip_comment(text, n, i);
        else
            i++;
    }
    return SIZE_MAX;
}
