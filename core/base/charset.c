/*
 * charset.c -- the character sets dal refuses as a client's (see
 * charset.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>

#include "charset.h"
#include "error.h"

/* MariaDB's and MySQL's character sets with a quote, backquote or
 * backslash byte inside a character (charset.h). */
static const char *const unsafe[] = {
    "big5", "cp932", "gbk", "gb18030", "sjis", "ucs2", "utf16", "utf16le", "utf32",
};

const char *charset_collation(unsigned int id, const char **charset)
{
    const MARIADB_CHARSET_INFO *cs = id > 0 && id <= 65535 ? mariadb_get_charset_by_nr(id) : NULL;

    if (cs == NULL || cs->name == NULL || cs->csname == NULL)
        return NULL;
    if (charset != NULL)
        *charset = cs->csname;
    return cs->name;
}

int charset_unsafe(const char *name, size_t n)
{
    size_t i;

    for (i = 0; i < sizeof unsafe / sizeof unsafe[0]; i++)
        if (strlen(unsafe[i]) == n && strncasecmp(unsafe[i], name, n) == 0)
            return 1;
    return 0;
}

int charset_id_unsafe(unsigned int id)
{
    const char *cs = NULL;

    return charset_collation(id, &cs) != NULL && charset_unsafe(cs, strlen(cs));
}

int charset_is_client_var(const char *name, size_t n)
{
    static const char *const vars[] = {"character_set_client", "names"};
    size_t i;

    for (i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (strlen(vars[i]) == n && strncasecmp(vars[i], name, n) == 0)
            return 1;
    return 0;
}

int charset_refuse(const char *name, size_t n, dal_error_t *err)
{
    return err_server(err, DAL_EINVAL, CHARSET_REFUSED_ERRNO, CHARSET_REFUSED_STATE,
                      "Unknown character set: '%.*s': dal refuses it as the client's character "
                      "set (a byte of its multi-byte characters can be a quote or backslash, "
                      "which dal would read otherwise than the server): use utf8mb4",
                      (int)(n > 64 ? 64 : n), name);
}

int charset_refuse_expression(const char *value_sql, dal_error_t *err)
{
    return err_server(err, DAL_EINVAL, CHARSET_REFUSED_ERRNO, CHARSET_REFUSED_STATE,
                      "Unknown character set: '%.64s': dal takes only a character set's name or "
                      "collation's number as the client's character set (it refuses some, and "
                      "only the server could say what an expression gives)", value_sql);
}

int charset_check_value(const char *value_sql, dal_error_t *err)
{
    const char *v = value_sql, *end;
    char q = 0;
    size_t n;
    unsigned long id;

    while (isspace((unsigned char)*v))
        v++;
    if (*v == '\'' || *v == '"' || *v == '`')
        q = *v++;
    for (end = v; *end != '\0' && (isalnum((unsigned char)*end) || *end == '_'); end++)
        ;
    n = (size_t)(end - v);
    if (q != 0) {
        if (*end != q)
            return charset_refuse_expression(value_sql, err);
        end++;
    }
    while (isspace((unsigned char)*end) || *end == ';')
        end++;
    if (n == 0 || *end != '\0')
        return charset_refuse_expression(value_sql, err);
    if (isdigit((unsigned char)*v) && q == 0) {
        id = strtoul(v, NULL, 10);
        return id > 65535 || charset_collation((unsigned int)id, NULL) == NULL ||
                       charset_id_unsafe((unsigned int)id)
                   ? charset_refuse(v, n, err)
                   : 0;
    }
    return charset_unsafe(v, n) ? charset_refuse(v, n, err) : 0;
}

int charset_check_names(const char *value, dal_error_t *err)
{
    const char *v = value;
    size_t n = 0;

    while (isspace((unsigned char)*v))
        v++;
    if (*v == '\'' || *v == '"' || *v == '`')
        v++;
    while (isalnum((unsigned char)v[n]) || v[n] == '_')
        n++;
    return charset_unsafe(v, n) ? charset_refuse(v, n, err) : 0;
}
