/*
 * buf.c -- a growable byte buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int dal_buf_reserve(dal_buf_t *b, size_t n)
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
    p = realloc(b->data, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void dal_buf_append(dal_buf_t *b, const void *p, size_t n)
{
    if (dal_buf_reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void dal_buf_puts(dal_buf_t *b, const char *s)
{
    dal_buf_append(b, s, strlen(s));
}

void dal_buf_putc(dal_buf_t *b, char c)
{
    dal_buf_append(b, &c, 1);
}

void dal_buf_printf(dal_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    /* format straight into the free space; only a long result needs a
     * second pass after growing */
    if (dal_buf_reserve(b, 64) != 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= b->cap - b->len) {
        if (dal_buf_reserve(b, (size_t)n) != 0)
            return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void dal_buf_put_u64(dal_buf_t *b, uint64_t v)
{
    char tmp[20];
    size_t n = 0;

    do {
        tmp[sizeof tmp - ++n] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    dal_buf_append(b, tmp + sizeof tmp - n, n);
}

void dal_buf_put_i64(dal_buf_t *b, int64_t v)
{
    if (v < 0) {
        dal_buf_putc(b, '-');
        /* negate in unsigned arithmetic: INT64_MIN has no positive twin */
        dal_buf_put_u64(b, (uint64_t)0 - (uint64_t)v);
        return;
    }
    dal_buf_put_u64(b, (uint64_t)v);
}

void dal_buf_reset(dal_buf_t *b)
{
    b->len = 0;
    b->oom = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

char *dal_buf_steal(dal_buf_t *b)
{
    char *p;

    if (b->oom || dal_buf_reserve(b, 0) != 0) {
        dal_buf_free(b);
        return NULL;
    }
    p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void dal_buf_free(dal_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
