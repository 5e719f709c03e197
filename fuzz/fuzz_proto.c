/*
 * fuzz_proto.c - libFuzzer target for dal-proxy's wire-protocol codec
 * (proxy/protocol/protocol.h).
 *
 * Every input goes through each decoder a client can reach: the packet
 * reader (fed in chunks the input chooses, with a small max_allowed_packet
 * so the limit is hit too), the handshake-response parser, the command
 * parser, caching_sha2_password's cleartext password, the
 * COM_STMT_EXECUTE decoder with a parameter count, earlier types and
 * long-data flags taken from the input, and the splitter of
 * multi-statement text.  What they return is
 * checked to lie inside the input; the binary-row builder then gets pieces
 * of the input as column values.  The input buffer is exactly `size`
 * bytes, so AddressSanitizer reports any read past its end.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            abort();                                                                         \
    } while (0)

static const uint8_t *g_base;
static size_t g_size;

/* A decoded string is absent, or lies inside the input (or inside the
 * parameter's own date/time text). */
static void check_str(proto_str_t s, const void *alt, size_t alt_len)
{
    if (!s.ptr) {
        CHECK(s.len == 0);
        return;
    }
    const uint8_t *p = (const uint8_t *)s.ptr;
    bool in_input = p >= g_base && s.len <= g_size && p - g_base <= (ptrdiff_t)(g_size - s.len);
    const uint8_t *a = alt;
    bool in_alt = a && p >= a && s.len <= alt_len && p - a <= (ptrdiff_t)(alt_len - s.len);
    CHECK(in_input || in_alt || s.len == 0);
}

static void walk_attrs(proto_str_t attrs)
{
    proto_cur_t c;
    proto_str_t k, v;
    proto_cur_init(&c, attrs.ptr, attrs.len);
    /* the parser checked the block: walking it cannot fail */
    int rc;
    while ((rc = proto_attrs_next(&c, &k, &v)) == 1) {
        check_str(k, NULL, 0);
        check_str(v, NULL, 0);
    }
    CHECK(rc == 0);
}

static void fuzz_handshake_response(const uint8_t *data, size_t size)
{
    proto_handshake_response_t hr;
    if (proto_parse_handshake_response(data, size, &hr) != 0)
        return;
    check_str(hr.user, NULL, 0);
    check_str(hr.auth_response, NULL, 0);
    check_str(hr.database, NULL, 0);
    check_str(hr.auth_plugin, NULL, 0);
    check_str(hr.attrs, NULL, 0);
    walk_attrs(hr.attrs);
}

/* caching_sha2_password's cleartext password (full authentication). */
static void fuzz_cleartext_password(const uint8_t *data, size_t size)
{
    proto_str_t pw;
    if (proto_parse_cleartext_password(data, size, &pw) != 0) {
        CHECK(pw.ptr == NULL && pw.len == 0);
        return;
    }
    check_str(pw, NULL, 0);
    CHECK(pw.len == 0 || memchr(pw.ptr, '\0', pw.len) == NULL);
}

static void fuzz_command(const uint8_t *data, size_t size, uint32_t caps)
{
    proto_cmd_t cmd;
    if (proto_parse_command(data, size, caps, &cmd) != 0)
        return;
    if (cmd.cmd == PROTO_COM_CHANGE_USER) {
        check_str(cmd.u.change_user.user, NULL, 0);
        check_str(cmd.u.change_user.auth_response, NULL, 0);
        check_str(cmd.u.change_user.database, NULL, 0);
        walk_attrs(cmd.u.change_user.attrs);
    } else if (cmd.cmd == PROTO_COM_QUERY || cmd.cmd == PROTO_COM_INIT_DB) {
        check_str(cmd.u.text, NULL, 0);
    }
}

static void fuzz_reader(const uint8_t *data, size_t size)
{
    proto_reader_t r;
    proto_packet_t pkt;
    size_t pos = 0, step = size ? (size_t)data[0] % 7 + 1 : 1;
    proto_reader_init(&r, size ? (size_t)data[size - 1] * 4 : 16);
    while (pos < size) {
        size_t n = step < size - pos ? step : size - pos;
        if (proto_reader_feed(&r, data + pos, n) != 0)
            break;
        pos += n;
        int rc;
        while ((rc = proto_reader_next(&r, &pkt)) == 1) {
            CHECK(pkt.len <= r.max_packet);
            size_t left;
            const uint8_t *rest = proto_reader_unread(&r, &left);
            CHECK(left == proto_reader_pending(&r) && (left == 0 || rest != NULL));
            if (left > 0 && pkt.len == 32 && (data[0] & 0x80)) {
                /* an SSLRequest: what follows changes hands */
                volatile uint8_t sink = rest[left - 1];
                (void)sink;
                proto_reader_discard(&r);
                CHECK(proto_reader_pending(&r) == 0);
            }
            const uint8_t *base = g_base;
            size_t bsize = g_size;
            g_base = pkt.payload;  /* its strings point into the packet */
            g_size = pkt.len;
            fuzz_command(pkt.payload, pkt.len, 0xFFFFFFFFu);
            g_base = base;
            g_size = bsize;
        }
        if (rc < 0) {
            CHECK(proto_reader_message(&r)[0] != '\0');
            break;
        }
    }
    CHECK(proto_reader_pending(&r) <= size);
    proto_reader_free(&r);
}

/* Input: [nparams lo, hi][flags][prev types...] then the packet. */
static void fuzz_execute(const uint8_t *data, size_t size)
{
    if (size < 3)
        return;
    uint16_t nparams = (uint16_t)(data[0] | data[1] << 8);
    if (data[2] & 0x80)
        nparams &= 0x1F;  /* mostly small counts, so values get decoded */
    const uint8_t *prev = NULL;
    bool long_data[32] = {false};
    size_t skip = 3;
    if ((data[2] & 1) && nparams <= 16 && size - skip >= 2u * nparams) {
        prev = data + skip;
        skip += 2u * nparams;
    }
    for (size_t i = 0; i < 8 && nparams <= 32; i++)
        long_data[i * 3 % 32] = (data[2] >> 1 & 1) && i % 2;
    proto_stmt_execute_t e;
    int rc = proto_parse_stmt_execute(data + skip, size - skip, nparams, prev,
                                      nparams <= 32 ? long_data : NULL, &e);
    if (rc == 0) {
        CHECK(e.nparams == 0 || e.nparams == nparams);
        for (size_t i = 0; i < e.nparams; i++) {
            const proto_param_t *p = &e.params[i];
            if (p->kind == PROTO_VAL_TEXT || p->kind == PROTO_VAL_BLOB)
                check_str(p->v.s, p->temporal, sizeof p->temporal);
        }
        uint8_t *types = malloc(2u * e.nparams + 1);
        proto_stmt_execute_types(&e, types);
        free(types);
    }
    proto_stmt_execute_free(&e);
}

/* Pieces of the input (split at '|') as values of a binary row whose
 * column types are the pieces' first bytes. */
static void fuzz_binary_row(const uint8_t *data, size_t size)
{
    enum { MAXCOL = 16 };
    proto_column_t cols[MAXCOL];
    const char *vals[MAXCOL];
    size_t lens[MAXCOL], n = 0, start = 0;
    memset(cols, 0, sizeof cols);
    for (size_t i = 0; i <= size && n < MAXCOL; i++) {
        if (i < size && data[i] != '|')
            continue;
        if (i > start) {
            cols[n].type = data[start];
            cols[n].flags = (data[start] & 1) ? PROTO_UNSIGNED_FLAG : 0;
            vals[n] = (const char *)data + start + 1;
            lens[n] = i - start - 1;
        } else {
            vals[n] = NULL;
            lens[n] = 0;
        }
        n++;
        start = i + 1;
    }
    proto_buf_t b = PROTO_BUF_INIT;
    uint8_t seq = 0;
    int rc = proto_build_binary_row(&b, &seq, cols, n, vals, lens);
    CHECK(rc == 0 || (rc == PROTO_EINVAL && b.len == 0 && seq == 0));
    proto_buf_free(&b);
}

/* A multi-statement COM_QUERY text, in either sql_mode: the pieces cover
 * the input in order, each ends before the next begins, and the splitting
 * always advances. */
static void fuzz_split(const uint8_t *data, size_t size, bool no_backslash)
{
    const char *text = (const char *)data;
    size_t len = size, n, next;

    while (len > 0) {
        n = proto_split_statement(text, len, no_backslash, &next);
        CHECK(n <= len && next <= len && n <= next && next > 0);
        (void)proto_sql_blank(text, n, PROTO_SERVER_VERSION_ID);
        text += next;
        len -= next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_base = data;
    g_size = size;
    fuzz_reader(data, size);
    fuzz_handshake_response(data, size);
    fuzz_cleartext_password(data, size);
    uint32_t caps = size >= 4 ? (uint32_t)(data[0] | data[1] << 8 | data[2] << 16
                                           | (uint32_t)data[3] << 24)
                              : 0xFFFFFFFFu;
    fuzz_command(data, size, caps);
    if (size > 4)
        fuzz_command(data + 4, size - 4, caps);
    fuzz_execute(data, size);
    fuzz_binary_row(data, size);
    fuzz_split(data, size, false);
    fuzz_split(data, size, true);
    return 0;
}
