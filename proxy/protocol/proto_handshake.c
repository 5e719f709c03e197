/*
 * proto_handshake.c -- the connection phase: the server's HandshakeV10,
 * the client's HandshakeResponse41 / SSLRequest, connection attributes,
 * and the packets of an authentication exchange (AuthSwitchRequest,
 * AuthMoreData).  The cryptography is in proto_auth.c.
 */
#include <string.h>

#include "proto_int.h"

/* Scramble bytes after the first 8, sent NUL-terminated. */
#define SCRAMBLE_PART1 8
#define SCRAMBLE_PART2 (PROTO_SCRAMBLE_LEN - SCRAMBLE_PART1)

int proto_build_handshake(proto_buf_t *b, uint8_t *seq, const proto_handshake_t *h)
{
    if (!h->server_version || !h->scramble || !h->auth_plugin)
        return PROTO_EINVAL;
    /* A NUL would end the scramble's second part early on the client. */
    if (memchr(h->scramble, '\0', PROTO_SCRAMBLE_LEN))
        return PROTO_EINVAL;
    uint64_t caps = h->capabilities;
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 10);
    proto_put_nul_str(b, h->server_version, strlen(h->server_version));
    proto_put_u32(b, h->connection_id);
    proto_put_bytes(b, h->scramble, SCRAMBLE_PART1);
    proto_put_u8(b, 0);
    proto_put_u16(b, (uint16_t)caps);
    proto_put_u8(b, h->charset);
    proto_put_u16(b, h->status);
    proto_put_u16(b, (uint16_t)(caps >> 16));
    /* Length of all auth data, with the NUL after part 2. */
    proto_put_u8(b, (caps & PROTO_CLIENT_PLUGIN_AUTH) ? PROTO_SCRAMBLE_LEN + 1 : 0);
    proto_put_zeros(b, 6);
    if (caps & PROTO_CLIENT_MYSQL)
        proto_put_zeros(b, 4);
    else
        proto_put_u32(b, (uint32_t)(caps >> 32));  /* MariaDB's extended bits */
    if (caps & PROTO_CLIENT_SECURE_CONNECTION) {
        proto_put_bytes(b, h->scramble + SCRAMBLE_PART1, SCRAMBLE_PART2);
        proto_put_u8(b, 0);
    }
    if (caps & PROTO_CLIENT_PLUGIN_AUTH)
        proto_put_nul_str(b, h->auth_plugin, strlen(h->auth_plugin));
    return proto_finish(b, start, seq);
}

int proto_attrs_next(proto_cur_t *c, proto_str_t *key, proto_str_t *value)
{
    key->ptr = value->ptr = NULL;
    key->len = value->len = 0;
    if (c->err)
        return c->err;
    if (proto_cur_left(c) == 0)
        return 0;
    if (proto_get_lenenc_str(c, key) != 0 || proto_get_lenenc_str(c, value) != 0)
        return c->err;
    return 1;
}

int proto_read_attrs(proto_cur_t *c, proto_str_t *attrs)
{
    uint64_t n;
    if (proto_get_lenenc(c, &n, NULL) != 0)
        return c->err;
    if (n > proto_cur_left(c))
        return c->err = PROTO_ETRUNC;
    proto_get_bytes(c, (size_t)n, attrs);
    proto_cur_t walk;
    proto_str_t k, v;
    int rc;
    proto_cur_init(&walk, attrs->ptr, attrs->len);
    while ((rc = proto_attrs_next(&walk, &k, &v)) == 1)
        ;
    if (rc != 0) {
        /* A block whose pairs overrun it is malformed, not truncated. */
        c->err = PROTO_EMALFORMED;
        attrs->ptr = NULL;
        attrs->len = 0;
    }
    return c->err;
}

/* The auth response in whichever of its three encodings the flags say. */
static int read_auth_response(proto_cur_t *c, uint64_t caps, proto_str_t *out)
{
    if (caps & PROTO_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
        return proto_get_lenenc_str(c, out);
    if (caps & PROTO_CLIENT_SECURE_CONNECTION) {
        uint8_t n;
        if (proto_get_u8(c, &n) != 0)
            return c->err;
        return proto_get_bytes(c, n, out);
    }
    return proto_get_nul_str(c, out);
}

/* The plugin name ends with a NUL, but some clients end the packet
 * without it: the rest of the packet is the name then. */
static int read_plugin_name(proto_cur_t *c, proto_str_t *out)
{
    if (memchr(c->p + c->pos, '\0', proto_cur_left(c)))
        return proto_get_nul_str(c, out);
    proto_get_rest(c, out);
    return 0;
}

/* The fields after the auth response, each present only with its flag
 * and only if the packet has not ended (clients drop trailing empty
 * fields). */
static int read_response_tail(proto_cur_t *c, uint64_t caps, proto_handshake_response_t *out)
{
    if ((caps & PROTO_CLIENT_CONNECT_WITH_DB) && proto_cur_left(c) > 0
        && proto_get_nul_str(c, &out->database) != 0)
        return c->err;
    if ((caps & PROTO_CLIENT_PLUGIN_AUTH) && proto_cur_left(c) > 0
        && read_plugin_name(c, &out->auth_plugin) != 0)
        return c->err;
    if ((caps & PROTO_CLIENT_CONNECT_ATTRS) && proto_cur_left(c) > 0
        && proto_read_attrs(c, &out->attrs) != 0)
        return c->err;
    return 0;
}

int proto_parse_handshake_response(const void *payload, size_t len,
                                   proto_handshake_response_t *out)
{
    proto_cur_t c;
    uint32_t caps, ext;
    memset(out, 0, sizeof *out);
    proto_cur_init(&c, payload, len);
    if (proto_get_u32(&c, &caps) != 0)
        return c.err;
    if (!(caps & PROTO_CLIENT_PROTOCOL_41))
        return PROTO_EUNSUPPORTED;  /* HandshakeResponse320: pre-4.1 */
    proto_get_u32(&c, &out->max_packet);
    proto_get_u8(&c, &out->charset);
    proto_skip(&c, 19);
    proto_get_u32(&c, &ext);
    if (c.err)
        return c.err;
    out->capabilities = caps;
    if (!(caps & PROTO_CLIENT_MYSQL))
        out->capabilities |= (uint64_t)ext << 32;
    if (proto_cur_left(&c) == 0) {
        if (!(caps & PROTO_CLIENT_SSL))
            return PROTO_ETRUNC;  /* a response cut after its fixed part */
        out->ssl_request = true;
        return 0;
    }
    if (proto_get_nul_str(&c, &out->user) != 0
        || read_auth_response(&c, caps, &out->auth_response) != 0)
        return c.err;
    return read_response_tail(&c, caps, out);
}

int proto_parse_cleartext_password(const void *payload, size_t len, proto_str_t *password)
{
    const char *p = payload;
    password->ptr = NULL;
    password->len = 0;
    if (len > 0 && p[len - 1] == '\0')
        len--;
    if (len > 0 && memchr(p, '\0', len))
        return PROTO_EMALFORMED;
    password->ptr = len > 0 ? p : NULL;
    password->len = len;
    return 0;
}

int proto_build_auth_switch(proto_buf_t *b, uint8_t *seq, const char *plugin, const void *data,
                            size_t n)
{
    if (!plugin)
        return PROTO_EINVAL;
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 0xFE);
    proto_put_nul_str(b, plugin, strlen(plugin));
    proto_put_bytes(b, data, n);
    proto_put_u8(b, 0);
    return proto_finish(b, start, seq);
}

int proto_build_auth_more_data(proto_buf_t *b, uint8_t *seq, const void *data, size_t n)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 0x01);
    proto_put_bytes(b, data, n);
    return proto_finish(b, start, seq);
}
