/*
 * session_vars.c -- the session variables a dal session keeps (see
 * session_vars.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "charset.h"
#include "error.h"
#include "session_vars.h"

int vars_name_ok(const char *name)
{
    size_t i;

    if (!(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return 0;
    for (i = 1; name[i]; i++)
        if (!(isalnum((unsigned char)name[i]) || name[i] == '_'))
            return 0;
    return i <= 64;
}

void vars_free(session_vars_t *v)
{
    size_t i;

    for (i = 0; i < v->n; i++) {
        free(v->names[i]);
        free(v->values[i]);
    }
    free(v->names);
    free(v->values);
    free(v->set_sql);
    free(v->charset);
    free(v->collation);
    memset(v, 0, sizeof *v);
}

/* The SET statement of v's pairs, and conn pointing at it.  A COLLATE of
 * SET NAMES goes first, as `SET NAMES cs COLLATE co`, which the server
 * checks as it checks the client's (1253 for a collation of another
 * charset); the pairs, assigned after it, come after it. */
int vars_build(session_vars_t *v)
{
    size_t i, len = sizeof "SET SESSION " + sizeof "NAMES '' COLLATE '', ";
    char *p;

    free(v->set_sql);
    v->set_sql = NULL;
    for (i = 0; i < v->n; i++)
        len += strlen(v->names[i]) + strlen(v->values[i]) + sizeof " = , ";
    if (v->collation != NULL)
        len += strlen(v->charset) + strlen(v->collation);
    if ((v->n > 0 || v->collation != NULL) && (v->set_sql = malloc(len)) == NULL)
        return DAL_ENOMEM;
    p = v->set_sql;
    if (v->collation != NULL)
        p += sprintf(p, "SET NAMES '%s' COLLATE '%s'%s", v->charset, v->collation,
                     v->n > 0 ? ", SESSION " : "");
    for (i = 0; i < v->n; i++)
        p += sprintf(p, "%s%s = %s", i > 0 ? ", " : v->collation ? "" : "SET SESSION ",
                     v->names[i], v->values[i]);
    v->conn.set_sql = v->set_sql;
    v->conn.names = v->charset;
    return 0;
}

/* v with name set to value (both copied), moved to the end if present,
 * else added there. */
int vars_put(session_vars_t *v, const char *name, const char *value)
{
    char *n = strdup(name), *val = strdup(value), **names, **values;
    size_t i;

    if (n == NULL || val == NULL)
        goto oom;
    for (i = 0; i < v->n && strcmp(v->names[i], n) != 0; i++)
        ;
    if (i == v->n) {
        names = realloc(v->names, (v->n + 1) * sizeof *names);
        if (names != NULL)
            v->names = names;
        values = names ? realloc(v->values, (v->n + 1) * sizeof *values) : NULL;
        if (values == NULL)
            goto oom;
        v->values = values;
        v->names[v->n] = NULL;
        v->values[v->n] = NULL;
        v->n++;
    }
    free(v->names[i]);
    free(v->values[i]);
    /* the last assigned goes last: a server applies side effects in that
     * order (setting max_join_size clears sql_big_selects) */
    memmove(&v->names[i], &v->names[i + 1], (v->n - i - 1) * sizeof *v->names);
    memmove(&v->values[i], &v->values[i + 1], (v->n - i - 1) * sizeof *v->values);
    v->names[v->n - 1] = n;
    v->values[v->n - 1] = val;
    return 0;
oom:
    free(n);
    free(val);
    return DAL_ENOMEM;
}

int vars_copy(const session_vars_t *from, session_vars_t *to)
{
    size_t i;

    memset(to, 0, sizeof *to);
    for (i = 0; i < from->n; i++)
        if (vars_put(to, from->names[i], from->values[i]) != 0)
            return DAL_ENOMEM;
    if (from->charset != NULL && (to->charset = strdup(from->charset)) == NULL)
        return DAL_ENOMEM;
    if (from->collation != NULL && (to->collation = strdup(from->collation)) == NULL)
        return DAL_ENOMEM;
    return 0;
}

/* v without name, if it has it. */
void vars_drop(session_vars_t *v, const char *name)
{
    size_t i;

    for (i = 0; i < v->n; i++)
        if (strcmp(v->names[i], name) == 0) {
            free(v->names[i]);
            free(v->values[i]);
            memmove(&v->names[i], &v->names[i + 1], (v->n - i - 1) * sizeof *v->names);
            memmove(&v->values[i], &v->values[i + 1], (v->n - i - 1) * sizeof *v->values);
            v->n--;
            return;
        }
}

/* The word at *p (quoted or not) into out (cap bytes), *p past it and the
 * blanks after it; 0 when there is none or it is too long. */
static int names_word(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    size_t n = 0;
    char q = (*s == '\'' || *s == '"' || *s == '`') ? *s++ : 0;

    while (s[n] != '\0' && (q ? s[n] != q : !isspace((unsigned char)s[n])))
        n++;
    if (n == 0 || n >= cap || (q && s[n] != q))
        return 0;
    memcpy(out, s, n);
    out[n] = '\0';
    s += n + (q != 0);
    while (isspace((unsigned char)*s))
        s++;
    *p = s;
    return 1;
}

/* SET NAMES's value, `charset [COLLATE collation]` (each quoted or not),
 * into v: SET NAMES sets the client's, the connection's and the results'
 * charsets and the connection's collation, so an earlier assignment of
 * any of them goes (it would be applied after the charset). */
int vars_names(session_vars_t *v, const char *value, dal_error_t *err)
{
    static const char *const set_by_names[] = {"character_set_client", "character_set_connection",
                                               "character_set_results", "collation_connection"};
    char cs[65], co[65] = "";
    const char *p = value;
    size_t i;

    if (!names_word(&p, cs, sizeof cs) || !vars_name_ok(cs))
        return err_set(err, DAL_EINVAL, "SET NAMES: '%s' is not a charset name", value);
    if (*p != '\0' && (strncasecmp(p, "COLLATE", 7) != 0 || !isspace((unsigned char)p[7])))
        return err_set(err, DAL_EINVAL, "SET NAMES: '%s': COLLATE or nothing after the "
                                        "charset", value);
    if (*p != '\0') {
        p += 7;
        while (isspace((unsigned char)*p))
            p++;
        if (!names_word(&p, co, sizeof co) || !vars_name_ok(co) || *p != '\0')
            return err_set(err, DAL_EINVAL, "SET NAMES: '%s': not a collation name after "
                                            "COLLATE", value);
    }
    if (charset_unsafe(cs, strlen(cs)))
        return charset_refuse(cs, strlen(cs), err);
    for (i = 0; i < sizeof set_by_names / sizeof set_by_names[0]; i++)
        vars_drop(v, set_by_names[i]);
    free(v->charset);
    free(v->collation);
    v->collation = NULL;
    if ((v->charset = strdup(cs)) == NULL ||
        (co[0] != '\0' && strcasecmp(co, "DEFAULT") != 0 && (v->collation = strdup(co)) == NULL))
        return err_set(err, DAL_ENOMEM, "out of memory");
    return 0;
}

char *vars_literal(dal_result_t *r, size_t col)
{
    dal_column_info_t ci = {.struct_size = sizeof ci};
    size_t len = 0, i;
    const char *v = dal_result_text(r, col, &len);
    int plain = 1;
    char *out, *o;

    if (v == NULL)
        return strdup("NULL");
    if (dal_result_column_info(r, col, &ci) == 0 && len > 0 &&
        (ci.type <= DAL_COLUMN_DOUBLE || ci.type == DAL_COLUMN_LONGLONG ||
         ci.type == DAL_COLUMN_INT24 || ci.type == DAL_COLUMN_NEWDECIMAL))
        return strndup(v, len);
    for (i = 0; i < len && plain; i++)
        plain = v[i] >= ' ' && v[i] <= '~' && v[i] != '\'' && v[i] != '\\';
    if ((out = o = malloc(2 * len + 4)) == NULL)
        return NULL;
    if (plain) {
        *o++ = '\'';
        memcpy(o, v, len);
        o += len;
    } else {
        *o++ = 'X';
        *o++ = '\'';
        for (i = 0; i < len; i++)
            o += sprintf(o, "%02X", (unsigned char)v[i]);
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

/* value without one pair of surrounding quotes, into buf (cap bytes). */
const char *vars_unquote(const char *value, char *buf, size_t cap)
{
    size_t len = strlen(value);

    if (len >= 2 && (value[0] == '\'' || value[0] == '"' || value[0] == '`') &&
        value[len - 1] == value[0] && len - 2 < cap) {
        memcpy(buf, value + 1, len - 2);
        buf[len - 2] = '\0';
        return buf;
    }
    return value;
}

/* autocommit's values, as the server takes them: 1 or 0, -1 for neither. */
int vars_autocommit(const char *value)
{
    char buf[16];
    const char *v = vars_unquote(value, buf, sizeof buf);

    if (strcmp(v, "1") == 0 || strcasecmp(v, "ON") == 0 || strcasecmp(v, "TRUE") == 0)
        return 1;
    if (strcmp(v, "0") == 0 || strcasecmp(v, "OFF") == 0 || strcasecmp(v, "FALSE") == 0)
        return 0;
    return -1;
}
