/*
 * proto_int.h -- what the codec's files share and nobody else uses.
 */
#ifndef DAL_PROXY_PROTO_INT_H
#define DAL_PROXY_PROTO_INT_H

#include <string.h>

#include "protocol.h"

/* Read a lenenc-prefixed block of connection attributes at c into *attrs
 * (borrowed) after checking every key and value in it is well-formed. */
int proto_read_attrs(proto_cur_t *c, proto_str_t *attrs);

/* The lexing the statement splitter (proto_split.c) and the text readers
 * (proto_text.c) share.  Past the quoted text opened at text[i] ('', "" or
 * ``; a backslash escapes in the first two unless no_backslash, the
 * sql_mode NO_BACKSLASH_ESCAPES); a quoted identifier ends at a NUL, which
 * is then outside it. */
size_t proto_skip_quoted(const char *text, size_t len, size_t i, bool no_backslash);
/* Past the comment starting at text[i] (--, # or C-style, executable ones
 * included; a -- or # comment ends at a NUL), or i when none starts
 * there. */
size_t proto_skip_comment_at(const char *text, size_t len, size_t i);
/* proto_skip_comment_at, with the test of the one byte that can open a
 * comment inline: the scanners call it at every byte of a statement. */
static inline size_t proto_skip_comment(const char *text, size_t len, size_t i)
{
    char ch = text[i];

    return ch == '#' || ch == '-' || ch == '/' ? proto_skip_comment_at(text, len, i) : i;
}

/* Put s, NUL-terminated or NULL (""), as a lenenc string. */
static inline void proto_put_lenenc_cstr(proto_buf_t *b, const char *s)
{
    proto_put_lenenc_str(b, s, s ? strlen(s) : 0);
}

/* The bytes proto_put_lenenc writes for v. */
static inline size_t proto_lenenc_size(uint64_t v)
{
    return v < 251 ? 1 : v < 0x10000 ? 3 : v < 0x1000000 ? 4 : 9;
}

/* A builder's start: refuse a buffer already failed (its error is the
 * caller's to see), else reserve the header. */
static inline int proto_begin(proto_buf_t *b, size_t *start)
{
    *start = b->len;
    if (b->err)
        return b->err;
    *start = proto_packet_begin(b);
    return b->err;
}

/* A builder's end.  Builders are all or nothing: on an error, drop what
 * this one appended and clear err, so the buffer is as the builder found
 * it and still usable; the code is returned. */
static inline int proto_finish(proto_buf_t *b, size_t start, uint8_t *seq)
{
    int rc = proto_packet_end(b, start, seq);
    if (rc != 0) {
        b->len = start;
        b->err = 0;
    }
    return rc;
}

#endif
