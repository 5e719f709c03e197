/*
 * buf.c -- a growable byte buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int buf_reserve(dal_buf_t *b, size_t n)
{
    size_t want, cap;
    char *p;

    if (b->oom)
        return -1;
    want = b->len + n + 1;
    if (want <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 128;
    while (cap < want)
        cap *= 2;
    p = b->borrowed ? malloc(cap) : realloc(b->data, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    if (b->borrowed)
        memcpy(p, b->data, b->len + 1);
    b->borrowed = 0;
    b->data = p;
    b->cap = cap;
    return 0;
}

void buf_init_on(dal_buf_t *b, char *mem, size_t cap)
{
    b->data = mem;
    b->data[0] = '\0';
    b->len = 0;
    b->cap = cap;
    b->oom = 0;
    b->borrowed = 1;
}

void buf_append(dal_buf_t *b, const void *p, size_t n)
{
    if ((b->len + n >= b->cap || b->oom) && buf_reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_printf(dal_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    /* format straight into the free space; only a long result needs a
     * second pass after growing */
    if (buf_reserve(b, 64) != 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= b->cap - b->len) {
        if (buf_reserve(b, (size_t)n) != 0)
            return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

char *dec_digits(uint64_t v, char *end)
{
    /* two digits per division: shard keys and IDs are long numbers */
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char *d = end;

    for (; v >= 100; v /= 100) {
        d -= 2;
        memcpy(d, pairs + v % 100 * 2, 2);
    }
    if (v >= 10) {
        d -= 2;
        memcpy(d, pairs + v * 2, 2);
    } else {
        *--d = (char)('0' + v);
    }
    return d;
}

void buf_put_u64(dal_buf_t *b, uint64_t v)
{
    char tmp[DEC_DIGITS_MAX], *d = dec_digits(v, tmp + sizeof tmp);

    buf_append(b, d, (size_t)(tmp + sizeof tmp - d));
}

void buf_put_i64(dal_buf_t *b, int64_t v)
{
    if (v < 0) {
        buf_putc(b, '-');
        /* negate in unsigned arithmetic: INT64_MIN has no positive twin */
        buf_put_u64(b, (uint64_t)0 - (uint64_t)v);
        return;
    }
    buf_put_u64(b, (uint64_t)v);
}

void buf_reset(dal_buf_t *b)
{
    b->len = 0;
    b->oom = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

char *buf_steal(dal_buf_t *b)
{
    char *p = NULL;

    if (b->oom || buf_reserve(b, 0) != 0) {
        buf_free(b);
        return NULL;
    }
    /* the text may hold NUL bytes (a statement's strings): its length, not strlen */
    if (b->borrowed && (p = malloc(b->len + 1)) != NULL)
        memcpy(p, b->data, b->len + 1);
    else if (!b->borrowed)
        p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    b->borrowed = 0;
    return p;
}

void buf_free(dal_buf_t *b)
{
    if (!b->borrowed)
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
    b->borrowed = 0;
}
