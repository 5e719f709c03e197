/*
 * merge_value.c -- the value rules of merging.  See merge_value.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_value.h"

/* MariaDB's DECIMAL_MAX_SCALE: AVG's scale grows by 4 up to this. */
#define AVG_SCALE_MAX 38
/* div_precision_increment, the server's default: AVG(DECIMAL(p,s)) has scale s+4. */
#define AVG_SCALE_INCREMENT 4

/* ====================================================== value semantics */

enum { COLL_KNOWN = 1, COLL_FOLD_CASE = 2, COLL_PAD_SPACE = 4 };

/* How collation nr compares, as COLL_* bits.  Every text column of every
 * result asks, and the client library finds a collation by a linear
 * search: the answers are kept (collation numbers are below 2048). */
static unsigned int collation_traits(unsigned int nr)
{
    static _Atomic unsigned char known[2048];
    /* without the collation's name, assume the server's defaults: _ci, PAD SPACE */
    unsigned int c = COLL_KNOWN | COLL_FOLD_CASE | COLL_PAD_SPACE;

    if (nr < sizeof known && atomic_load_explicit(&known[nr], memory_order_relaxed) != 0)
        return atomic_load_explicit(&known[nr], memory_order_relaxed);
#ifdef MARIADB_PACKAGE_VERSION
    {
        const MARIADB_CHARSET_INFO *cs = mariadb_get_charset_by_nr(nr);
        size_t n = cs && cs->name ? strlen(cs->name) : 0;
        if (n > 3) {
            c = COLL_KNOWN;
            if (strcmp(cs->name + n - 3, "_ci") == 0)
                c |= COLL_FOLD_CASE;
            if (strstr(cs->name, "nopad") == NULL)
                c |= COLL_PAD_SPACE;
        }
    }
#endif
    if (nr < sizeof known)
        atomic_store_explicit(&known[nr], (unsigned char)c, memory_order_relaxed);
    return c;
}

void merge_meta_init(dal_merge_meta_t *m, const MYSQL_FIELD *f)
{
    memset(m, 0, sizeof *m);
    switch (f->type) {
    case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_INT24: case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_YEAR:
        m->kind = (f->flags & UNSIGNED_FLAG) ? DAL_MK_UINT : DAL_MK_INT;
        return;
    case MYSQL_TYPE_DECIMAL: case MYSQL_TYPE_NEWDECIMAL:
        m->kind = DAL_MK_DECIMAL;
        m->decimals = f->decimals;
        return;
    case MYSQL_TYPE_FLOAT: case MYSQL_TYPE_DOUBLE:
        m->kind = DAL_MK_DOUBLE;
        return;
    case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_VAR_STRING: case MYSQL_TYPE_STRING:
    case MYSQL_TYPE_TINY_BLOB: case MYSQL_TYPE_MEDIUM_BLOB: case MYSQL_TYPE_LONG_BLOB:
    case MYSQL_TYPE_BLOB: case MYSQL_TYPE_ENUM: case MYSQL_TYPE_SET:
        break;
    default: /* BIT, dates and times (fixed-width text), geometry */
        m->kind = DAL_MK_BYTES;
        return;
    }
    m->unordered = f->type == MYSQL_TYPE_ENUM || f->type == MYSQL_TYPE_SET ||
                   (f->flags & (ENUM_FLAG | SET_FLAG)) != 0;
    m->kind = f->charsetnr == 63 ? DAL_MK_BYTES : DAL_MK_TEXT;
    if (m->kind == DAL_MK_BYTES)
        return;
    {
        unsigned int c = collation_traits(f->charsetnr);
        m->fold_case = (c & COLL_FOLD_CASE) != 0;
        m->pad_space = (c & COLL_PAD_SPACE) != 0;
    }
}

/* ASCII letters weigh as their upper case in _ci collations. */
static int fold(const dal_merge_meta_t *m, unsigned char c)
{
    return m->fold_case && c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

static int text_compare(const dal_merge_meta_t *m, const unsigned char *a, size_t alen,
                        const unsigned char *b, size_t blen)
{
    size_t i, n = alen < blen ? alen : blen;
    const unsigned char *tail;
    int sign;

    for (i = 0; i < n; i++)
        if (fold(m, a[i]) != fold(m, b[i]))
            return fold(m, a[i]) - fold(m, b[i]);
    if (alen == blen)
        return 0;
    if (m->kind != DAL_MK_TEXT || !m->pad_space)
        return alen < blen ? -1 : 1;
    /* PAD SPACE: the shorter string compares as if padded with spaces */
    tail = alen > blen ? a : b;
    sign = alen > blen ? 1 : -1;
    for (; i < (alen > blen ? alen : blen); i++)
        if (tail[i] != ' ')
            return tail[i] < ' ' ? -sign : sign;
    return 0;
}

/* The parts of a decimal text: sign, integer digits without leading
 * zeros, fraction digits without trailing zeros. */
typedef struct dec_text {
    int neg;
    const char *ip, *fp;
    size_t il, fl;
} dec_text_t;

static void dec_split(const char *s, size_t len, dec_text_t *d)
{
    const char *end = s + len, *dot;

    d->neg = len > 0 && s[0] == '-';
    if (len > 0 && (s[0] == '-' || s[0] == '+'))
        s++;
    while (s < end && *s == '0')
        s++;
    dot = memchr(s, '.', (size_t)(end - s));
    d->ip = s;
    d->il = (size_t)((dot ? dot : end) - s);
    d->fp = dot ? dot + 1 : end;
    d->fl = (size_t)(end - d->fp);
    while (d->fl > 0 && d->fp[d->fl - 1] == '0')
        d->fl--;
    if (d->il == 0 && d->fl == 0) /* -0.00 is zero */
        d->neg = 0;
}

static int dec_compare(const char *a, size_t alen, const char *b, size_t blen)
{
    dec_text_t x, y;
    size_t i;
    int c = 0;

    dec_split(a, alen, &x);
    dec_split(b, blen, &y);
    if (x.neg != y.neg)
        return x.neg ? -1 : 1;
    if (x.il != y.il)
        c = x.il < y.il ? -1 : 1;
    else if ((c = memcmp(x.ip, y.ip, x.il)) == 0)
        for (i = 0; c == 0 && i < (x.fl > y.fl ? x.fl : y.fl); i++)
            c = (i < x.fl ? x.fp[i] : '0') - (i < y.fl ? y.fp[i] : '0');
    return x.neg ? -c : c;
}

static int sign_of(int c)
{
    return (c > 0) - (c < 0);
}

int merge_compare(const dal_merge_meta_t *m, const char *a, size_t alen, const char *b,
                  size_t blen)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    switch (m->kind) {
    case DAL_MK_INT: {
        long long x = strtoll(a, NULL, 10), y = strtoll(b, NULL, 10);
        return (x > y) - (x < y);
    }
    case DAL_MK_UINT: {
        unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);
        return (x > y) - (x < y);
    }
    case DAL_MK_DOUBLE: {
        double x = strtod(a, NULL), y = strtod(b, NULL);
        return (x > y) - (x < y);
    }
    case DAL_MK_DECIMAL:
        return sign_of(dec_compare(a, alen, b, blen));
    default:
        return sign_of(text_compare(m, (const unsigned char *)a, alen,
                                    (const unsigned char *)b, blen));
    }
}

/* ------------------------------------------------------- DOUBLE as text */

/* MariaDB prints a double in plain notation when its decimal point is
 * between 14 places left of the first digit and DBL_DIG (15) places right
 * of it, or inside the digits (my_gcvt with a wide field). */
#define PLAIN_DECPT_MIN (-14)
#define PLAIN_DECPT_MAX 15

size_t merge_format_double(double d, char *out, size_t cap)
{
    char e[40], digits[20];
    size_t n = 0, len = 0, i;
    int prec, decpt;
    char *p;

    if (d == 0) /* also -0: the server prints 0 */
        return (size_t)snprintf(out, cap, "0");
    /* the shortest digits that read back as d, like dtoa mode 0 */
    for (prec = 1; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, d);
    for (p = e + (e[0] == '-'); *p != 'e'; p++)
        if (*p != '.')
            digits[len++] = *p;
    decpt = atoi(p + 1) + 1;
    while (len > 1 && digits[len - 1] == '0')
        len--;
    if (d < 0)
        out[n++] = '-';
    if (decpt < PLAIN_DECPT_MIN || (decpt > PLAIN_DECPT_MAX && (int)len <= decpt)) {
        out[n++] = digits[0];
        if (len > 1)
            out[n++] = '.';
        memcpy(out + n, digits + 1, len - 1);
        n += len - 1;
        return n + (size_t)snprintf(out + n, cap - n, "e%d", decpt - 1);
    }
    if (decpt <= 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (i = 0; i < (size_t)-decpt; i++)
            out[n++] = '0';
    }
    for (i = 0; i < len || (int)i < decpt; i++) {
        if ((int)i == decpt && decpt > 0)
            out[n++] = '.';
        out[n++] = i < len ? digits[i] : '0';
    }
    out[n] = '\0';
    return n;
}

/* --------------------------------------------------------- aggregates */

void merge_acc_reset(dal_merge_acc_t *a, dal_agg_t agg)
{
    dal_buf_t keep = a->best;

    memset(a, 0, sizeof *a);
    a->agg = agg;
    a->best = keep;
    buf_reset(&a->best);
}

void merge_acc_free(dal_merge_acc_t *a)
{
    buf_free(&a->best);
}

static int not_a_number(const char *text, size_t len, dal_error_t *err)
{
    return err_set(err, DAL_EUNSUPPORTED, "cannot merge the partial aggregate '%.*s': "
                   "not a number of the column's type", (int)(len < 40 ? len : 40), text);
}

static int too_big(dal_error_t *err)
{
    return err_set(err, DAL_EUNSUPPORTED, "cannot merge an aggregate exactly: the value "
                   "needs more than 38 digits");
}

static int parse_count(const char *text, size_t len, uint64_t *v, dal_error_t *err)
{
    char *end;

    errno = 0;
    *v = strtoull(text, &end, 10);
    if (errno != 0 || end != text + len || len == 0 || text[0] == '-')
        return not_a_number(text, len, err);
    return 0;
}

/* Decimal text into an integer scaled by 10^scale. */
static int parse_exact(const char *text, size_t len, unsigned int scale, __int128 *v,
                       dal_error_t *err)
{
    const char *p = text, *end = text + len;
    unsigned int frac = 0;
    int neg = 0, seen_dot = 0, digits = 0;
    __int128 x = 0;

    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    for (; p < end; p++) {
        if (*p == '.' && !seen_dot) {
            seen_dot = 1;
            continue;
        }
        if (*p < '0' || *p > '9' || (seen_dot && ++frac > scale))
            return not_a_number(text, len, err);
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *p - '0', &x))
            return too_big(err);
        digits++;
    }
    if (digits == 0)
        return not_a_number(text, len, err);
    for (; frac < scale; frac++)
        if (__builtin_mul_overflow(x, 10, &x))
            return too_big(err);
    *v = neg ? -x : x;
    return 0;
}

/* SUM/AVG partials: exact for integers and DECIMAL, double for DOUBLE. */
static int add_number(dal_merge_acc_t *a, const dal_merge_meta_t *m, const char *text,
                      size_t len, dal_error_t *err)
{
    int is_double = m->kind == DAL_MK_DOUBLE;
    __int128 v = 0;
    int rc;

    if (m->kind != DAL_MK_DOUBLE && m->kind != DAL_MK_DECIMAL && m->kind != DAL_MK_INT &&
        m->kind != DAL_MK_UINT)
        return not_a_number(text, len, err);
    if (a->seen && is_double != a->is_double)
        return err_set(err, DAL_EUNSUPPORTED, "cannot merge an aggregate: the nodes "
                       "returned it with different types");
    if (!a->seen) {
        a->is_double = is_double;
        a->scale = m->kind == DAL_MK_DECIMAL ? m->decimals : 0;
        if (a->scale > AVG_SCALE_MAX) /* no DECIMAL has more */
            return not_a_number(text, len, err);
    }
    a->seen = 1;
    if (is_double) {
        a->dbl += strtod(text, NULL);
        return 0;
    }
    rc = parse_exact(text, len, a->scale, &v, err);
    if (rc == 0 && __builtin_add_overflow(a->exact, v, &a->exact))
        rc = too_big(err);
    return rc;
}

int merge_acc_add(dal_merge_acc_t *a, const dal_merge_meta_t *m, const char *text,
                  size_t len, const char *cnt, size_t cntlen, dal_error_t *err)
{
    uint64_t n;
    int rc;

    switch (a->agg) {
    case DAL_AGG_COUNT: case DAL_AGG_COUNT_DISTINCT:
        if (text == NULL)
            return 0;
        rc = parse_count(text, len, &n, err);
        if (rc == 0 && __builtin_add_overflow(a->count, n, &a->count))
            rc = too_big(err);
        return rc;
    case DAL_AGG_AVG:
        rc = cnt ? parse_count(cnt, cntlen, &n, err) : 0;
        if (rc == 0 && cnt && __builtin_add_overflow(a->count, n, &a->count))
            rc = too_big(err);
        if (rc != 0 || text == NULL)
            return rc;
        return add_number(a, m, text, len, err);
    case DAL_AGG_SUM:
        return text ? add_number(a, m, text, len, err) : 0;
    case DAL_AGG_MIN: case DAL_AGG_MAX:
        if (text == NULL)
            return 0;
        if (a->seen) {
            int c = merge_compare(m, text, len, a->best.data, a->best.len);
            if (a->agg == DAL_AGG_MIN ? c >= 0 : c <= 0)
                return 0;
        }
        a->seen = 1;
        buf_reset(&a->best);
        buf_append(&a->best, text, len);
        return a->best.oom ? err_set(err, DAL_ENOMEM, "out of memory") : 0;
    default:
        return err_set(err, DAL_EUNSUPPORTED, "this aggregate cannot be merged");
    }
}

/* v / 10^scale as decimal text. */
static void put_scaled(dal_buf_t *out, __int128 v, unsigned int scale)
{
    unsigned __int128 mag = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    char digits[48];
    size_t n = 0;

    while (mag > 0 || n <= scale) {
        digits[n++] = (char)('0' + (int)(mag % 10));
        mag /= 10;
    }
    if (v < 0)
        buf_putc(out, '-');
    while (n-- > 0) {
        buf_putc(out, digits[n]);
        if (n == scale && scale > 0)
            buf_putc(out, '.');
    }
}

/* sum / count at scale + AVG_SCALE_INCREMENT, rounded half away from zero
 * as the server rounds decimals. */
static int put_exact_avg(const dal_merge_acc_t *a, dal_buf_t *out, dal_error_t *err)
{
    unsigned int scale = a->scale + AVG_SCALE_INCREMENT, s;
    __int128 num = a->exact, q, r;

    if (scale > AVG_SCALE_MAX)
        scale = a->scale > AVG_SCALE_MAX ? a->scale : AVG_SCALE_MAX;
    for (s = a->scale; s < scale; s++)
        if (__builtin_mul_overflow(num, 10, &num))
            return too_big(err);
    q = num / (__int128)a->count;
    r = num % (__int128)a->count;
    if ((r < 0 ? -r : r) * 2 >= (__int128)a->count)
        q += num < 0 ? -1 : 1;
    put_scaled(out, q, scale);
    return 0;
}

static void put_double(dal_buf_t *out, double d)
{
    char text[64];

    buf_append(out, text, merge_format_double(d, text, sizeof text));
}

int merge_acc_result(const dal_merge_acc_t *a, dal_buf_t *out, dal_error_t *err)
{
    switch (a->agg) {
    case DAL_AGG_COUNT: case DAL_AGG_COUNT_DISTINCT:
        buf_printf(out, "%" PRIu64, a->count);
        return 0;
    case DAL_AGG_SUM:
        if (!a->seen)
            return 1;
        if (a->is_double)
            put_double(out, a->dbl);
        else
            put_scaled(out, a->exact, a->scale);
        return 0;
    case DAL_AGG_AVG:
        if (!a->seen || a->count == 0)
            return 1;
        if (!a->is_double)
            return put_exact_avg(a, out, err);
        put_double(out, a->dbl / (double)a->count);
        return 0;
    default: /* MIN, MAX */
        if (!a->seen)
            return 1;
        buf_append(out, a->best.data, a->best.len);
        return 0;
    }
}
