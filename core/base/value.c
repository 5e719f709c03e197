/*
 * value.c -- dal_value_t constructors and SQL text.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "value.h"

dal_value_t dal_null(void)
{
    dal_value_t v;

    memset(&v, 0, sizeof v);
    v.type = DAL_TYPE_NULL;
    return v;
}

dal_value_t dal_int(int64_t i)
{
    dal_value_t v = dal_null();

    v.type = DAL_TYPE_INT;
    v.v.i = i;
    return v;
}

dal_value_t dal_uint(uint64_t u)
{
    dal_value_t v = dal_null();

    v.type = DAL_TYPE_UINT;
    v.v.u = u;
    return v;
}

dal_value_t dal_double(double d)
{
    dal_value_t v = dal_null();

    v.type = DAL_TYPE_DOUBLE;
    v.v.d = d;
    return v;
}

dal_value_t dal_strn(const char *s, size_t len)
{
    dal_value_t v = dal_null();

    v.type = DAL_TYPE_STRING;
    v.v.s.ptr = s;
    v.v.s.len = len;
    return v;
}

dal_value_t dal_str(const char *s)
{
    return dal_strn(s, s ? strlen(s) : 0);
}

dal_value_t dal_blob(const void *p, size_t len)
{
    dal_value_t v = dal_strn(p, len);

    v.type = DAL_TYPE_BLOB;
    return v;
}

/* Backslash escapes for the default sql_mode.  \Z (0x1A) matters on
 * Windows consoles; \0 keeps NULs out of C-string handling on the server. */
static const char *escape_of(unsigned char c)
{
    switch (c) {
    case '\0': return "\\0";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\\': return "\\\\";
    case '\'': return "\\'";
    case '"': return "\\\"";
    case 0x1a: return "\\Z";
    }
    return NULL;
}

static void append_string(dal_buf_t *b, const char *p, size_t n, int no_backslash_escapes)
{
    size_t i, run = 0;

    buf_reserve(b, n + 2);
    buf_putc(b, '\'');
    for (i = 0; i < n; i++) {
        const char *esc;

        if (no_backslash_escapes)
            esc = p[i] == '\'' ? "''" : NULL;
        else
            esc = escape_of((unsigned char)p[i]);
        if (esc == NULL)
            continue;
        /* copy the plain run before this byte in one go */
        buf_append(b, p + run, i - run);
        buf_puts(b, esc);
        run = i + 1;
    }
    buf_append(b, p + run, n - run);
    buf_putc(b, '\'');
}

/* A finite double as a literal the server reads as DOUBLE: %.17g
 * round-trips every double, and an exponent makes it an approximate
 * literal ("1.25" alone is DECIMAL, "1.25e0" is DOUBLE), so a DOUBLE
 * parameter gives the column type and comparisons a bound DOUBLE does. */
static void append_double(dal_buf_t *b, double d)
{
    char s[40];
    int n = snprintf(s, sizeof s, "%.17g", d);

    if (strchr(s, 'e') == NULL && n > 0 && (size_t)n + 2 < sizeof s)
        memcpy(s + n, "e0", 3);
    buf_puts(b, s);
}

static void append_hex(dal_buf_t *b, const unsigned char *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i;

    if (buf_reserve(b, 2 * n + 3) != 0)
        return;
    buf_append(b, "X'", 2);
    for (i = 0; i < n; i++) {
        b->data[b->len++] = hex[p[i] >> 4];
        b->data[b->len++] = hex[p[i] & 15];
    }
    buf_putc(b, '\'');
}

int value_append_sql(dal_buf_t *b, const dal_value_t *v, int no_backslash_escapes,
                     dal_error_t *err)
{
    switch (v->type) {
    case DAL_TYPE_NULL:
        buf_append(b, "NULL", 4);
        return 0;
    case DAL_TYPE_INT:
        buf_put_i64(b, v->v.i);
        return 0;
    case DAL_TYPE_UINT:
        buf_put_u64(b, v->v.u);
        return 0;
    case DAL_TYPE_DOUBLE:
        if (!isfinite(v->v.d))
            return err_set(err, DAL_EINVAL, "a double parameter is NaN or infinite; SQL has no such value");
        append_double(b, v->v.d);
        return 0;
    case DAL_TYPE_STRING:
        append_string(b, v->v.s.ptr, v->v.s.len, no_backslash_escapes);
        return 0;
    case DAL_TYPE_BLOB:
        append_hex(b, (const unsigned char *)v->v.s.ptr, v->v.s.len);
        return 0;
    }
    return err_set(err, DAL_EINVAL, "parameter has unknown type %d", (int)v->type);
}

const char *value_describe(const dal_value_t *v, char *out, size_t cap)
{
    size_t n;

    switch (v->type) {
    case DAL_TYPE_NULL: snprintf(out, cap, "NULL"); break;
    case DAL_TYPE_INT: snprintf(out, cap, "%" PRId64, v->v.i); break;
    case DAL_TYPE_UINT: snprintf(out, cap, "%" PRIu64, v->v.u); break;
    case DAL_TYPE_DOUBLE: snprintf(out, cap, "%g", v->v.d); break;
    case DAL_TYPE_STRING:
    case DAL_TYPE_BLOB:
        n = v->v.s.len > 40 ? 40 : v->v.s.len;
        snprintf(out, cap, "'%.*s%s'", (int)n, v->v.s.ptr ? v->v.s.ptr : "",
                 n < v->v.s.len ? "..." : "");
        break;
    default: snprintf(out, cap, "?"); break;
    }
    return out;
}

/* Decimal digits only; overflow of uint64_t is not a count. */
static int text_as_count(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (p == NULL || n == 0)
        return -1;
    for (i = 0; i < n; i++) {
        unsigned d = (unsigned char)p[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int value_as_count(const dal_value_t *v, uint64_t *out)
{
    switch (v->type) {
    case DAL_TYPE_UINT:
        *out = v->v.u;
        return 0;
    case DAL_TYPE_INT:
        if (v->v.i < 0)
            return -1;
        *out = (uint64_t)v->v.i;
        return 0;
    case DAL_TYPE_STRING:
        return text_as_count(v->v.s.ptr, v->v.s.len, out);
    default:
        return -1;
    }
}
