/*
 * protocol.c -- the codec's base: errors, the output buffer and its
 * little-endian writers, packet framing, the incremental packet reader and
 * the bounds-checked cursor.  The packets themselves are in proto_*.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

const char *proto_strerror(int code)
{
    switch (code) {
    case PROTO_OK: return "success";
    case PROTO_ETRUNC: return "truncated packet";
    case PROTO_EMALFORMED: return "malformed packet";
    case PROTO_ETOOBIG: return "packet larger than max_allowed_packet";
    case PROTO_ENOMEM: return "out of memory";
    case PROTO_EINVAL: return "value cannot be encoded";
    case PROTO_ESEQ: return "packets out of order";
    case PROTO_EUNSUPPORTED: return "unsupported by this server";
    default: return "unknown protocol error";
    }
}

/* ========================================================= output buffer */

void proto_buf_free(proto_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void proto_buf_reset(proto_buf_t *b)
{
    b->len = 0;
    b->err = 0;
}

void proto_buf_consume(proto_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void proto_buf_shrink(proto_buf_t *b, size_t keep)
{
    if (b->len == 0 && b->cap > keep)
        proto_buf_free(b);
}

int proto_buf_grow(proto_buf_t *b, size_t n)
{
    if (b->err)
        return b->err;
    if (n <= b->cap - b->len)
        return 0;
    if (n > SIZE_MAX / 2 - b->len) {
        b->err = PROTO_ENOMEM;
        return b->err;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->err = PROTO_ENOMEM;
        return b->err;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void proto_put_nul_str(proto_buf_t *b, const char *s, size_t n)
{
    if (n && memchr(s, '\0', n)) {
        if (!b->err)
            b->err = PROTO_EINVAL;
        return;
    }
    proto_put_bytes(b, s, n);
    proto_put_u8(b, 0);
}

/* ================================================================ framing */

static void write_header(uint8_t *h, size_t len, uint8_t seq)
{
    h[0] = (uint8_t)len;
    h[1] = (uint8_t)(len >> 8);
    h[2] = (uint8_t)(len >> 16);
    h[3] = seq;
}

size_t proto_packet_begin(proto_buf_t *b)
{
    size_t start = b->len;
    proto_put_zeros(b, 4);
    return start;
}

/* The payload sits at start + 4 .. b->len.  Small payloads (the usual
 * case) only get their header; a large one is spread out in place, last
 * chunk first so no chunk overwrites one not yet moved. */
int proto_packet_end(proto_buf_t *b, size_t start, uint8_t *seq)
{
    if (b->err)
        return b->err;
    size_t n = b->len - start - 4;
    if (n < PROTO_MAX_CHUNK) {
        write_header(b->data + start, n, (*seq)++);
        return 0;
    }
    size_t chunks = n / PROTO_MAX_CHUNK + 1;  /* the last is short, maybe empty */
    size_t extra = 4 * (chunks - 1);
    if (proto_buf_reserve(b, extra) != 0)
        return b->err;
    uint8_t *payload = b->data + start + 4;
    for (size_t k = chunks; k-- > 0;) {
        size_t off = k * PROTO_MAX_CHUNK;
        size_t clen = k + 1 < chunks ? PROTO_MAX_CHUNK : n - off;
        uint8_t *dst = b->data + start + k * (PROTO_MAX_CHUNK + 4);
        memmove(dst + 4, payload + off, clen);
        write_header(dst, clen, (uint8_t)(*seq + k));
    }
    *seq = (uint8_t)(*seq + chunks);
    b->len += extra;
    return 0;
}

int proto_write_packet(proto_buf_t *b, uint8_t *seq, const void *payload, size_t n)
{
    const uint8_t *p = payload;
    size_t chunks = n / PROTO_MAX_CHUNK + 1;
    if (proto_buf_reserve(b, n + 4 * chunks) != 0)
        return b->err;
    for (size_t k = 0; k < chunks; k++) {
        size_t off = k * PROTO_MAX_CHUNK;
        size_t clen = k + 1 < chunks ? PROTO_MAX_CHUNK : n - off;
        uint8_t h[4];
        write_header(h, clen, (*seq)++);
        proto_put_bytes(b, h, 4);
        proto_put_bytes(b, p + off, clen);
    }
    return b->err;
}

/* ================================================================= reader */

void proto_reader_init(proto_reader_t *r, size_t max_allowed_packet)
{
    memset(r, 0, sizeof *r);
    r->max_packet = max_allowed_packet;
    r->limit_name = "max_allowed_packet";
}

void proto_reader_free(proto_reader_t *r)
{
    free(r->in);
    free(r->joined);
    size_t max = r->max_packet;
    const char *name = r->limit_name;
    proto_reader_init(r, max);
    r->limit_name = name;
}

void proto_reader_limit(proto_reader_t *r, size_t max, const char *name)
{
    r->max_packet = max;
    r->limit_name = name;
}

void proto_reader_shrink(proto_reader_t *r, size_t keep)
{
    if (r->in_len > r->in_start)
        return;
    r->in_start = r->in_len = 0;
    if (r->in_cap > keep) {
        free(r->in);
        r->in = NULL;
        r->in_cap = 0;
    }
    if (r->joined_cap > keep) {
        free(r->joined);
        r->joined = NULL;
        r->joined_cap = 0;
    }
}

static int reader_fail(proto_reader_t *r, int code, const char *msg)
{
    r->err = code;
    snprintf(r->message, sizeof r->message, "%s", msg);
    return code;
}

/* Make want bytes free at the end of in, first dropping the consumed bytes
 * at its front (packets returned earlier are invalid from here on). */
static int reader_make_room(proto_reader_t *r, size_t want)
{
    if (r->in_start > 0) {
        memmove(r->in, r->in + r->in_start, r->in_len - r->in_start);
        r->in_len -= r->in_start;
        r->in_start = 0;
    }
    if (r->in_cap - r->in_len >= want)
        return 0;
    if (want > SIZE_MAX / 2 - r->in_len)
        return reader_fail(r, PROTO_ENOMEM, "out of memory");
    size_t cap = r->in_cap ? r->in_cap : 4096;
    while (cap - r->in_len < want)
        cap *= 2;
    uint8_t *p = realloc(r->in, cap);
    if (!p)
        return reader_fail(r, PROTO_ENOMEM, "out of memory");
    r->in = p;
    r->in_cap = cap;
    return 0;
}

uint8_t *proto_reader_space(proto_reader_t *r, size_t want, size_t *avail)
{
    *avail = 0;
    if (r->err || reader_make_room(r, want ? want : 1) != 0)
        return NULL;
    *avail = r->in_cap - r->in_len;
    return r->in + r->in_len;
}

void proto_reader_commit(proto_reader_t *r, size_t k)
{
    if (k > r->in_cap - r->in_len)
        k = r->in_cap - r->in_len;
    r->in_len += k;
}

int proto_reader_feed(proto_reader_t *r, const void *data, size_t n)
{
    if (r->err)
        return r->err;
    if (n == 0)
        return 0;
    if (reader_make_room(r, n) != 0)
        return r->err;
    memcpy(r->in + r->in_len, data, n);
    r->in_len += n;
    return 0;
}

static size_t chunk_len(const uint8_t *h)
{
    return (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16;
}

static int reader_too_big(proto_reader_t *r, size_t total)
{
    snprintf(r->message, sizeof r->message,
             "packet of %zu bytes is over %s (%zu)", total, r->limit_name, r->max_packet);
    r->err = PROTO_ETOOBIG;
    return r->err;
}

/* Copy the chunks' payloads of one logical packet into joined. */
static int reader_join(proto_reader_t *r, size_t total, size_t nchunks, proto_packet_t *pkt)
{
    if (total > r->joined_cap) {
        uint8_t *j = realloc(r->joined, total);
        if (!j)
            return reader_fail(r, PROTO_ENOMEM, "out of memory");
        r->joined = j;
        r->joined_cap = total;
    }
    size_t pos = r->in_start, out = 0;
    for (size_t k = 0; k < nchunks; k++) {
        size_t clen = chunk_len(r->in + pos);
        memcpy(r->joined + out, r->in + pos + 4, clen);
        out += clen;
        pos += 4 + clen;
    }
    pkt->payload = r->joined;
    pkt->len = total;
    return 0;
}

int proto_reader_next(proto_reader_t *r, proto_packet_t *pkt)
{
    memset(pkt, 0, sizeof *pkt);
    if (r->err)
        return r->err;
    size_t pos = r->in_start, total = 0, nchunks = 0;
    uint8_t first_seq = 0, seq = 0;
    for (;;) {
        if (r->in_len - pos < 4)
            return 0;
        const uint8_t *h = r->in + pos;
        size_t clen = chunk_len(h);
        if (nchunks == 0)
            first_seq = h[3];
        else if (h[3] != (uint8_t)(seq + 1))
            return reader_fail(r, PROTO_ESEQ,
                               "continuation packet with a wrong sequence id");
        seq = h[3];
        /* Refuse from the header alone: a hostile length must not make us
         * buffer 16 MB before saying no. */
        if (clen > r->max_packet - total)
            return reader_too_big(r, total + clen);
        if (r->in_len - pos - 4 < clen)
            return 0;
        total += clen;
        pos += 4 + clen;
        nchunks++;
        if (clen < PROTO_MAX_CHUNK)
            break;
    }
    pkt->seq = first_seq;
    pkt->next_seq = (uint8_t)(seq + 1);
    if (nchunks == 1) {
        pkt->payload = r->in + r->in_start + 4;
        pkt->len = total;
    } else if (reader_join(r, total, nchunks, pkt) != 0) {
        return r->err;
    }
    r->in_start = pos;
    if (r->in_start == r->in_len)
        r->in_start = r->in_len = 0;  /* cheap reset; in's bytes stay put */
    return 1;
}

const char *proto_reader_message(const proto_reader_t *r)
{
    return r->message;
}

size_t proto_reader_pending(const proto_reader_t *r)
{
    return r->in_len - r->in_start;
}

const uint8_t *proto_reader_unread(const proto_reader_t *r, size_t *n)
{
    *n = r->in_len - r->in_start;
    return r->in ? r->in + r->in_start : NULL;
}

void proto_reader_discard(proto_reader_t *r)
{
    r->in_start = r->in_len = 0;
}

/* ================================================================= cursor */

void proto_cur_init(proto_cur_t *c, const void *payload, size_t len)
{
    static const uint8_t empty[1];
    /* Never a NULL base: pointer arithmetic on NULL is undefined. */
    c->p = payload ? payload : empty;
    c->len = payload ? len : 0;
    c->pos = 0;
    c->err = 0;
}

static int cur_fail(proto_cur_t *c, int code)
{
    if (!c->err)
        c->err = code;
    return c->err;
}

/* Whether n more bytes can be read: sets the truncation error if not. */
static bool cur_has(proto_cur_t *c, size_t n)
{
    if (c->err)
        return false;
    if (n > c->len - c->pos) {
        cur_fail(c, PROTO_ETRUNC);
        return false;
    }
    return true;
}

/* n is at most 8.  Inline, so that each fixed width below gets its own
 * copy. */
static inline int get_le(proto_cur_t *c, size_t n, uint64_t *v)
{
    const uint8_t *q;
    uint64_t x = 0;

    *v = 0;
    if (!cur_has(c, n))
        return c->err;
    /* into a local (a store through v could alias the bytes read), and
     * without a loop: each width's copy is then straight code */
    q = c->p + c->pos;
    switch (n) {
    case 8: x |= (uint64_t)q[7] << 56; /* fall through */
    case 7: x |= (uint64_t)q[6] << 48; /* fall through */
    case 6: x |= (uint64_t)q[5] << 40; /* fall through */
    case 5: x |= (uint64_t)q[4] << 32; /* fall through */
    case 4: x |= (uint64_t)q[3] << 24; /* fall through */
    case 3: x |= (uint64_t)q[2] << 16; /* fall through */
    case 2: x |= (uint64_t)q[1] << 8;  /* fall through */
    case 1: x |= q[0];                 /* fall through */
    default: break;
    }
    *v = x;
    c->pos += n;
    return 0;
}

/* proto_get_u8 .. proto_get_u32: get_le of n bytes into a narrower type. */
#define GET_NARROW(name, type, n)              \
    int name(proto_cur_t *c, type *v)          \
    {                                          \
        uint64_t x;                            \
        int rc = get_le(c, n, &x);             \
        *v = (type)x;                          \
        return rc;                             \
    }
GET_NARROW(proto_get_u8, uint8_t, 1)
GET_NARROW(proto_get_u16, uint16_t, 2)
GET_NARROW(proto_get_u24, uint32_t, 3)
GET_NARROW(proto_get_u32, uint32_t, 4)
#undef GET_NARROW

int proto_get_u48(proto_cur_t *c, uint64_t *v) { return get_le(c, 6, v); }
int proto_get_u64(proto_cur_t *c, uint64_t *v) { return get_le(c, 8, v); }

int proto_get_bytes(proto_cur_t *c, size_t n, proto_str_t *s)
{
    s->ptr = NULL;
    s->len = 0;
    if (!cur_has(c, n))
        return c->err;
    s->ptr = (const char *)c->p + c->pos;
    s->len = n;
    c->pos += n;
    return 0;
}

int proto_skip(proto_cur_t *c, size_t n)
{
    if (!cur_has(c, n))
        return c->err;
    c->pos += n;
    return 0;
}

int proto_get_lenenc(proto_cur_t *c, uint64_t *v, bool *is_null)
{
    uint8_t first;
    *v = 0;
    if (is_null)
        *is_null = false;
    if (proto_get_u8(c, &first) != 0)
        return c->err;
    size_t pos0 = c->pos - 1;
    switch (first) {
    case 0xFB:
        if (!is_null)
            break;
        *is_null = true;
        return 0;
    case 0xFC:
        return get_le(c, 2, v) == 0 ? 0 : (c->pos = pos0, c->err);
    case 0xFD:
        return get_le(c, 3, v) == 0 ? 0 : (c->pos = pos0, c->err);
    case 0xFE:
        return get_le(c, 8, v) == 0 ? 0 : (c->pos = pos0, c->err);
    case 0xFF:
        break;
    default:
        *v = first;
        return 0;
    }
    c->pos = pos0;
    return cur_fail(c, PROTO_EMALFORMED);
}

int proto_get_lenenc_str(proto_cur_t *c, proto_str_t *s)
{
    uint64_t n;
    s->ptr = NULL;
    s->len = 0;
    size_t pos0 = c->pos;
    if (proto_get_lenenc(c, &n, NULL) != 0)
        return c->err;
    if (n > c->len - c->pos) {
        c->pos = pos0;
        return cur_fail(c, PROTO_ETRUNC);
    }
    return proto_get_bytes(c, (size_t)n, s);
}

int proto_get_nul_str(proto_cur_t *c, proto_str_t *s)
{
    s->ptr = NULL;
    s->len = 0;
    if (c->err)
        return c->err;
    const uint8_t *start = c->p + c->pos;
    const uint8_t *nul = c->pos < c->len ? memchr(start, '\0', c->len - c->pos) : NULL;
    if (!nul)
        return cur_fail(c, PROTO_ETRUNC);
    s->ptr = (const char *)start;
    s->len = (size_t)(nul - start);
    c->pos += s->len + 1;
    return 0;
}

void proto_get_rest(proto_cur_t *c, proto_str_t *s)
{
    s->ptr = (const char *)c->p + c->pos;
    s->len = c->err ? 0 : c->len - c->pos;
    c->pos = c->len;
}
