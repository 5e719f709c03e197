/*
 * buf.h -- a growable byte buffer, always NUL-terminated.
 *
 * Used to build physical SQL: a buffer is reused across statements so the
 * hot path does not allocate once it has grown to the usual size.
 */
#ifndef DAL_CORE_BUF_H
#define DAL_CORE_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dal/dal.h"

typedef struct dal_buf {
    char *data;   /* owned, NULL until the first append; or the caller's storage */
    size_t len;
    size_t cap;
    int oom;      /* set once an allocation failed; later appends are no-ops */
    int borrowed; /* data is the caller's storage (buf_init_on): growing moves
                     the bytes to the heap, and it is never freed here */
} dal_buf_t;

#define DAL_BUF_INIT {NULL, 0, 0, 0, 0}

/* Start b empty on the caller's storage mem (cap > 0 bytes, borrowed; must
 * outlive b's use): a buffer on the stack for text that is usually short,
 * so building it costs no allocation.  Free with buf_free as usual. */
void buf_init_on(dal_buf_t *b, char *mem, size_t cap);

/* Make room for n more bytes (plus the NUL).  0 or -1 (and oom set). */
int buf_reserve(dal_buf_t *b, size_t n);

/* One function, not inline: appends happen at many places of the statement
 * path, and between two statements the server evicts the client's caches,
 * so one shared body (a call each) costs less than a copy at every site
 * (see bench/codelines.py). */
void buf_append(dal_buf_t *b, const void *p, size_t n);

static inline void buf_puts(dal_buf_t *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

static inline void buf_putc(dal_buf_t *b, char c)
{
    buf_append(b, &c, 1);
}

void buf_printf(dal_buf_t *b, const char *fmt, ...) DAL_PRINTF(2, 3);
/* Decimal integers without printf's cost (they are on every statement). */
void buf_put_u64(dal_buf_t *b, uint64_t v);
void buf_put_i64(dal_buf_t *b, int64_t v);

/* The decimal digits of v, written so that they end just before end (at
 * most DEC_DIGITS_MAX bytes before it, no NUL).  Returns where they
 * start. */
#define DEC_DIGITS_MAX 20
char *dec_digits(uint64_t v, char *end);
/* Empty the buffer, keeping its memory. */
void buf_reset(dal_buf_t *b);
/* Hand the bytes to the caller (owned, free()); the buffer becomes empty.
 * Returns NULL if an allocation failed along the way. */
char *buf_steal(dal_buf_t *b);
void buf_free(dal_buf_t *b);

#endif /* DAL_CORE_BUF_H */
