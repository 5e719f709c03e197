/*
 * proto_binary.c -- the binary protocol of prepared statements: result
 * rows built from the text values libmysqlclient hands the proxy, and the
 * parameters of COM_STMT_EXECUTE decoded into values.
 *
 * Dates and times travel as a length byte and only the fields that are
 * not zero: DATE/DATETIME/TIMESTAMP in 0, 4 (date), 7 (+ time) or 11
 * (+ microseconds) bytes; TIME in 0, 8 (sign, days, h, m, s) or 12
 * (+ microseconds) bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_int.h"

/* A date, a datetime or a time as its fields. */
typedef struct temporal {
    bool negative;       /* TIME only */
    uint32_t year, month, day;
    uint64_t hours;      /* TIME: all hours, days included */
    uint32_t minute, second, micro;
} temporal_t;

enum type_class { CLASS_INT, CLASS_FLOAT, CLASS_DOUBLE, CLASS_DATE, CLASS_TIME, CLASS_BYTES };

static enum type_class type_class(uint8_t type)
{
    switch (type) {
    case PROTO_TYPE_TINY: case PROTO_TYPE_SHORT: case PROTO_TYPE_YEAR:
    case PROTO_TYPE_INT24: case PROTO_TYPE_LONG: case PROTO_TYPE_LONGLONG:
        return CLASS_INT;
    case PROTO_TYPE_FLOAT:
        return CLASS_FLOAT;
    case PROTO_TYPE_DOUBLE:
        return CLASS_DOUBLE;
    case PROTO_TYPE_DATE: case PROTO_TYPE_NEWDATE: case PROTO_TYPE_DATETIME:
    case PROTO_TYPE_TIMESTAMP: case PROTO_TYPE_DATETIME2: case PROTO_TYPE_TIMESTAMP2:
        return CLASS_DATE;
    case PROTO_TYPE_TIME: case PROTO_TYPE_TIME2:
        return CLASS_TIME;
    default:
        return CLASS_BYTES;
    }
}

/* Bytes of an integer type on the wire. */
static size_t int_width(uint8_t type)
{
    switch (type) {
    case PROTO_TYPE_TINY: return 1;
    case PROTO_TYPE_SHORT: case PROTO_TYPE_YEAR: return 2;
    case PROTO_TYPE_INT24: case PROTO_TYPE_LONG: return 4;
    default: return 8;
    }
}

/* ============================================================ text input */

/* Digits at *p (at least 1, at most max_digits) into *v. */
static bool scan_digits(const char **p, const char *end, int max_digits, uint64_t *v)
{
    int n = 0;
    *v = 0;
    while (*p < end && n < max_digits && **p >= '0' && **p <= '9') {
        *v = *v * 10 + (uint64_t)(**p - '0');
        (*p)++;
        n++;
    }
    return n > 0;
}

static bool scan_char(const char **p, const char *end, char c)
{
    if (*p < end && **p == c) {
        (*p)++;
        return true;
    }
    return false;
}

/* ".ffffff" (1 to 6 digits, scaled to microseconds), or nothing. */
static bool scan_fraction(const char **p, const char *end, uint32_t *micro)
{
    *micro = 0;
    if (!scan_char(p, end, '.'))
        return true;
    const char *d = *p;
    uint64_t v;
    if (!scan_digits(p, end, 6, &v))
        return false;
    for (ptrdiff_t n = *p - d; n < 6; n++)
        v *= 10;
    *micro = (uint32_t)v;
    return true;
}

/* "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" */
static bool parse_datetime(const char *s, size_t len, temporal_t *t)
{
    const char *p = s, *end = s + len;
    uint64_t y, mo, d, h = 0, mi = 0, se = 0;
    memset(t, 0, sizeof *t);
    if (!scan_digits(&p, end, 4, &y) || !scan_char(&p, end, '-')
        || !scan_digits(&p, end, 2, &mo) || !scan_char(&p, end, '-')
        || !scan_digits(&p, end, 2, &d))
        return false;
    if (scan_char(&p, end, ' ')
        && (!scan_digits(&p, end, 2, &h) || !scan_char(&p, end, ':')
            || !scan_digits(&p, end, 2, &mi) || !scan_char(&p, end, ':')
            || !scan_digits(&p, end, 2, &se) || !scan_fraction(&p, end, &t->micro)))
        return false;
    t->year = (uint32_t)y;
    t->month = (uint32_t)mo;
    t->day = (uint32_t)d;
    t->hours = h;
    t->minute = (uint32_t)mi;
    t->second = (uint32_t)se;
    return p == end;
}

/* "[-]H...H:MM:SS[.ffffff]" */
static bool parse_time(const char *s, size_t len, temporal_t *t)
{
    const char *p = s, *end = s + len;
    uint64_t h, mi, se;
    memset(t, 0, sizeof *t);
    t->negative = scan_char(&p, end, '-');
    if (!scan_digits(&p, end, 9, &h) || !scan_char(&p, end, ':')
        || !scan_digits(&p, end, 2, &mi) || !scan_char(&p, end, ':')
        || !scan_digits(&p, end, 2, &se) || !scan_fraction(&p, end, &t->micro))
        return false;
    t->hours = h;
    t->minute = (uint32_t)mi;
    t->second = (uint32_t)se;
    return p == end;
}

/* An integer's text into its wire bytes (two's complement), range-checked
 * for the type's width and signedness. */
static bool parse_int(const char *s, size_t len, size_t width, bool is_unsigned, uint64_t *out)
{
    const char *p = s, *end = s + len;
    bool neg = scan_char(&p, end, '-');
    if (!neg)
        scan_char(&p, end, '+');
    if (p == end || end - p > 20)
        return false;
    uint64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    unsigned bits = (unsigned)(8 * width);
    if (is_unsigned) {
        if ((neg && v != 0) || (bits < 64 && v >> bits))
            return false;
        *out = v;
        return true;
    }
    uint64_t limit = (uint64_t)1 << (bits - 1);   /* |min| of the type */
    if (neg ? v > limit : v >= limit)
        return false;
    *out = neg ? (uint64_t)0 - v : v;
    return true;
}

/* strtod needs a NUL; numbers longer than this are not floats. */
static bool parse_double(const char *s, size_t len, double *out)
{
    char tmp[400];
    char *end;
    if (len == 0 || len >= sizeof tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    *out = strtod(tmp, &end);
    return end == tmp + len;
}

/* ========================================================== binary rows */

static void put_datetime(proto_buf_t *b, const temporal_t *t)
{
    bool has_time = t->hours || t->minute || t->second || t->micro;
    bool has_date = t->year || t->month || t->day;
    uint8_t n = t->micro ? 11 : has_time ? 7 : has_date ? 4 : 0;
    proto_put_u8(b, n);
    if (n >= 4) {
        proto_put_u16(b, (uint16_t)t->year);
        proto_put_u8(b, (uint8_t)t->month);
        proto_put_u8(b, (uint8_t)t->day);
    }
    if (n >= 7) {
        proto_put_u8(b, (uint8_t)t->hours);
        proto_put_u8(b, (uint8_t)t->minute);
        proto_put_u8(b, (uint8_t)t->second);
    }
    if (n == 11)
        proto_put_u32(b, t->micro);
}

static void put_time(proto_buf_t *b, const temporal_t *t)
{
    uint64_t days = t->hours / 24;
    bool any = t->hours || t->minute || t->second || t->micro;
    uint8_t n = t->micro ? 12 : any ? 8 : 0;
    proto_put_u8(b, n);
    if (n == 0)
        return;
    proto_put_u8(b, t->negative ? 1 : 0);
    proto_put_u32(b, (uint32_t)days);
    proto_put_u8(b, (uint8_t)(t->hours % 24));
    proto_put_u8(b, (uint8_t)t->minute);
    proto_put_u8(b, (uint8_t)t->second);
    if (n == 12)
        proto_put_u32(b, t->micro);
}

/* One non-NULL value of a binary row; false if its text does not fit. */
static bool put_binary_value(proto_buf_t *b, const proto_column_t *col, const char *v, size_t n)
{
    temporal_t t;
    uint64_t u;
    double d;
    switch (type_class(col->type)) {
    case CLASS_INT: {
        size_t w = int_width(col->type);
        if (!parse_int(v, n, w, (col->flags & PROTO_UNSIGNED_FLAG) != 0, &u))
            return false;
        for (size_t i = 0; i < w; i++)
            proto_put_u8(b, (uint8_t)(u >> (8 * i)));
        return true;
    }
    case CLASS_FLOAT: {
        if (!parse_double(v, n, &d))
            return false;
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        proto_put_u32(b, bits);
        return true;
    }
    case CLASS_DOUBLE:
        if (!parse_double(v, n, &d))
            return false;
        memcpy(&u, &d, sizeof u);
        proto_put_u64(b, u);
        return true;
    case CLASS_DATE:
        if (!parse_datetime(v, n, &t) || t.year > 0xFFFF || t.month > 255 || t.day > 255
            || t.hours > 255 || t.minute > 255 || t.second > 255)
            return false;
        put_datetime(b, &t);
        return true;
    case CLASS_TIME:
        if (!parse_time(v, n, &t) || t.hours / 24 > UINT32_MAX)
            return false;
        put_time(b, &t);
        return true;
    default:
        proto_put_lenenc_str(b, v, n);
        return true;
    }
}

int proto_build_binary_row(proto_buf_t *b, uint8_t *seq, const proto_column_t *cols, size_t n,
                           const char *const *values, const size_t *lengths)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 0x00);
    size_t bitmap = b->len;  /* an offset: appends may move data */
    proto_put_zeros(b, (n + 7 + 2) / 8);
    for (size_t i = 0; i < n && !b->err; i++) {
        if (!values[i] || cols[i].type == PROTO_TYPE_NULL) {
            /* The row's bitmap starts at bit 2 (bits 0-1 were once used
             * for OK and EOF markers). */
            b->data[bitmap + (i + 2) / 8] |= (uint8_t)(1u << ((i + 2) % 8));
            continue;
        }
        size_t len = lengths ? lengths[i] : strlen(values[i]);
        if (!put_binary_value(b, &cols[i], values[i], len) && !b->err)
            b->err = PROTO_EINVAL;
    }
    return proto_finish(b, start, seq);
}

/* ===================================================== COM_STMT_EXECUTE */

static bool is_param_type(uint8_t type)
{
    return type <= PROTO_TYPE_TIME2 || type >= PROTO_TYPE_JSON;
}

static bool is_blob_type(uint8_t type)
{
    switch (type) {
    case PROTO_TYPE_TINY_BLOB: case PROTO_TYPE_MEDIUM_BLOB: case PROTO_TYPE_LONG_BLOB:
    case PROTO_TYPE_BLOB: case PROTO_TYPE_BIT: case PROTO_TYPE_GEOMETRY:
        return true;
    default:
        return false;
    }
}

/* A binary date/time (its length byte already read) as text in p. */
static int decode_datetime(proto_cur_t *c, uint8_t n, proto_param_t *p)
{
    uint16_t y = 0;
    uint8_t mo = 0, d = 0, h = 0, mi = 0, s = 0;
    uint32_t us = 0;
    if (n != 0 && n != 4 && n != 7 && n != 11)
        return c->err = PROTO_EMALFORMED;
    if (n >= 4) {
        proto_get_u16(c, &y);
        proto_get_u8(c, &mo);
        proto_get_u8(c, &d);
    }
    if (n >= 7) {
        proto_get_u8(c, &h);
        proto_get_u8(c, &mi);
        proto_get_u8(c, &s);
    }
    if (n == 11)
        proto_get_u32(c, &us);
    if (c->err)
        return c->err;
    if (us > 999999)
        return c->err = PROTO_EMALFORMED;
    int len;
    if (p->type == PROTO_TYPE_DATE || p->type == PROTO_TYPE_NEWDATE)
        len = snprintf(p->temporal, sizeof p->temporal, "%04u-%02u-%02u", y, mo, d);
    else if (us)
        len = snprintf(p->temporal, sizeof p->temporal, "%04u-%02u-%02u %02u:%02u:%02u.%06u",
                       y, mo, d, h, mi, s, (unsigned)us);
    else
        len = snprintf(p->temporal, sizeof p->temporal, "%04u-%02u-%02u %02u:%02u:%02u",
                       y, mo, d, h, mi, s);
    p->v.s.ptr = p->temporal;
    p->v.s.len = (size_t)len;
    return 0;
}

static int decode_time(proto_cur_t *c, uint8_t n, proto_param_t *p)
{
    uint8_t neg = 0, h = 0, mi = 0, s = 0;
    uint32_t days = 0, us = 0;
    if (n != 0 && n != 8 && n != 12)
        return c->err = PROTO_EMALFORMED;
    if (n >= 8) {
        proto_get_u8(c, &neg);
        proto_get_u32(c, &days);
        proto_get_u8(c, &h);
        proto_get_u8(c, &mi);
        proto_get_u8(c, &s);
    }
    if (n == 12)
        proto_get_u32(c, &us);
    if (c->err)
        return c->err;
    if (neg > 1 || us > 999999)
        return c->err = PROTO_EMALFORMED;
    unsigned long long hours = (unsigned long long)days * 24 + h;
    int len = snprintf(p->temporal, sizeof p->temporal, us ? "%s%02llu:%02u:%02u.%06u"
                       : "%s%02llu:%02u:%02u", neg ? "-" : "", hours, mi, s, (unsigned)us);
    p->v.s.ptr = p->temporal;
    p->v.s.len = (size_t)len;
    return 0;
}

/* Sign-extend the low width bytes of u. */
static int64_t sign_extend(uint64_t u, size_t width)
{
    if (width == 8)
        return (int64_t)u;
    uint64_t sign = (uint64_t)1 << (8 * width - 1);
    return (int64_t)((u ^ sign) - sign);
}

static int decode_int(proto_cur_t *c, proto_param_t *p)
{
    size_t w = int_width(p->type);
    uint64_t u = 0;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    switch (w) {
    case 1: proto_get_u8(c, &u8); u = u8; break;
    case 2: proto_get_u16(c, &u16); u = u16; break;
    case 4: proto_get_u32(c, &u32); u = u32; break;
    default: proto_get_u64(c, &u); break;
    }
    if (c->err)
        return c->err;
    if (p->is_unsigned) {
        p->kind = PROTO_VAL_UINT;
        p->v.u = u;
    } else {
        p->kind = PROTO_VAL_INT;
        p->v.i = sign_extend(u, w);
    }
    return 0;
}

/* One parameter's value at c, by its type. */
static int decode_value(proto_cur_t *c, proto_param_t *p)
{
    uint8_t n;
    uint32_t u32;
    uint64_t u64;
    float f;
    switch (type_class(p->type)) {
    case CLASS_INT:
        return decode_int(c, p);
    case CLASS_FLOAT:
        if (proto_get_u32(c, &u32) != 0)
            return c->err;
        memcpy(&f, &u32, sizeof f);
        p->kind = PROTO_VAL_DOUBLE;
        p->v.d = f;
        return 0;
    case CLASS_DOUBLE:
        if (proto_get_u64(c, &u64) != 0)
            return c->err;
        p->kind = PROTO_VAL_DOUBLE;
        memcpy(&p->v.d, &u64, sizeof p->v.d);
        return 0;
    case CLASS_DATE:
        p->kind = PROTO_VAL_TEXT;
        return proto_get_u8(c, &n) != 0 ? c->err : decode_datetime(c, n, p);
    case CLASS_TIME:
        p->kind = PROTO_VAL_TEXT;
        return proto_get_u8(c, &n) != 0 ? c->err : decode_time(c, n, p);
    default:
        p->kind = is_blob_type(p->type) ? PROTO_VAL_BLOB : PROTO_VAL_TEXT;
        return proto_get_lenenc_str(c, &p->v.s);
    }
}

/* Types from the packet or from the previous execution. */
static int read_types(proto_cur_t *c, proto_stmt_execute_t *e, const uint8_t *prev_types)
{
    uint8_t bound;
    if (proto_get_u8(c, &bound) != 0)
        return c->err;
    if (bound > 1)
        return c->err = PROTO_EMALFORMED;
    e->new_params_bound = bound == 1;
    proto_str_t types = {0};
    if (e->new_params_bound) {
        if (proto_get_bytes(c, 2 * (size_t)e->nparams, &types) != 0)
            return c->err;
        prev_types = (const uint8_t *)types.ptr;
    } else if (!prev_types) {
        return c->err = PROTO_EMALFORMED;  /* nothing bound, ever */
    }
    for (size_t i = 0; i < e->nparams; i++) {
        e->params[i].type = prev_types[2 * i];
        e->params[i].is_unsigned = (prev_types[2 * i + 1] & 0x80) != 0;
        if (!is_param_type(e->params[i].type))
            return c->err = PROTO_EUNSUPPORTED;
    }
    return 0;
}

static int read_params(proto_cur_t *c, proto_stmt_execute_t *e, const uint8_t *prev_types,
                       const bool *long_data)
{
    proto_str_t bitmap;
    if (proto_get_bytes(c, ((size_t)e->nparams + 7) / 8, &bitmap) != 0
        || read_types(c, e, prev_types) != 0)
        return c->err;
    const uint8_t *nulls = (const uint8_t *)bitmap.ptr;
    for (size_t i = 0; i < e->nparams; i++) {
        proto_param_t *p = &e->params[i];
        if ((nulls[i / 8] >> (i % 8)) & 1 || p->type == PROTO_TYPE_NULL)
            p->kind = PROTO_VAL_NULL;
        else if (long_data && long_data[i])
            p->kind = PROTO_VAL_LONG_DATA;
        else if (decode_value(c, p) != 0)
            return c->err;
    }
    return 0;
}

int proto_parse_stmt_execute(const void *payload, size_t len, uint16_t nparams,
                             const uint8_t *prev_types, const bool *long_data,
                             proto_stmt_execute_t *out)
{
    proto_cur_t c;
    uint8_t cmd;
    memset(out, 0, sizeof *out);
    proto_cur_init(&c, payload, len);
    if (proto_get_u8(&c, &cmd) != 0)
        return c.err;
    if (cmd != PROTO_COM_STMT_EXECUTE)
        return PROTO_EMALFORMED;
    proto_get_u32(&c, &out->stmt_id);
    proto_get_u8(&c, &out->flags);
    proto_get_u32(&c, &out->iterations);
    if (c.err || nparams == 0)
        return c.err;
    /* Each parameter takes at least one bit of the bitmap, so a count the
     * packet cannot hold is refused before allocating for it. */
    if ((size_t)nparams > 8 * proto_cur_left(&c))
        return PROTO_ETRUNC;
    out->params = nparams <= PROTO_EXECUTE_INLINE ? out->params_inl
                                                  : calloc(nparams, sizeof *out->params);
    if (!out->params)
        return PROTO_ENOMEM;
    out->nparams = nparams;
    return read_params(&c, out, prev_types, long_data);
}

void proto_stmt_execute_free(proto_stmt_execute_t *e)
{
    if (e->params != e->params_inl)
        free(e->params);
    e->params = NULL;
    e->nparams = 0;
}

void proto_stmt_execute_types(const proto_stmt_execute_t *e, uint8_t *types)
{
    for (size_t i = 0; i < e->nparams; i++) {
        types[2 * i] = e->params[i].type;
        types[2 * i + 1] = e->params[i].is_unsigned ? 0x80 : 0;
    }
}
