/*
 * proto_command.c -- the commands a client sends after login, from their
 * payloads.  COM_STMT_EXECUTE's parameters are decoded by
 * proto_parse_stmt_execute (proto_binary.c), which needs the statement's
 * parameter count that only the session knows.
 */
#include <string.h>

#include "proto_int.h"

/* COM_CHANGE_USER: the same fields as a handshake response, in another
 * order and with a 2-byte character set, each trailing one optional. */
static int parse_change_user(proto_cur_t *c, uint32_t caps, proto_change_user_t *cu)
{
    if (proto_get_nul_str(c, &cu->user) != 0)
        return c->err;
    if (caps & PROTO_CLIENT_SECURE_CONNECTION) {
        uint8_t n;
        if (proto_get_u8(c, &n) != 0 || proto_get_bytes(c, n, &cu->auth_response) != 0)
            return c->err;
    } else if (proto_get_nul_str(c, &cu->auth_response) != 0) {
        return c->err;
    }
    if (proto_get_nul_str(c, &cu->database) != 0)
        return c->err;
    if (proto_cur_left(c) == 0)
        return 0;
    if (proto_get_u16(c, &cu->charset) != 0)
        return c->err;
    if ((caps & PROTO_CLIENT_PLUGIN_AUTH) && proto_cur_left(c) > 0
        && proto_get_nul_str(c, &cu->auth_plugin) != 0)
        return c->err;
    if ((caps & PROTO_CLIENT_CONNECT_ATTRS) && proto_cur_left(c) > 0
        && proto_read_attrs(c, &cu->attrs) != 0)
        return c->err;
    return 0;
}

static int parse_args(proto_cur_t *c, uint32_t caps, proto_cmd_t *out)
{
    switch (out->cmd) {
    case PROTO_COM_QUIT:
    case PROTO_COM_PING:
    case PROTO_COM_RESET_CONNECTION:
        return 0;
    case PROTO_COM_INIT_DB:
    case PROTO_COM_QUERY:
    case PROTO_COM_STMT_PREPARE:
        proto_get_rest(c, &out->u.text);
        return 0;
    case PROTO_COM_FIELD_LIST:
        if (proto_get_nul_str(c, &out->u.field_list.table) != 0)
            return c->err;
        proto_get_rest(c, &out->u.field_list.wildcard);
        return 0;
    case PROTO_COM_STMT_CLOSE:
    case PROTO_COM_STMT_RESET:
        return proto_get_u32(c, &out->u.stmt_id);
    case PROTO_COM_STMT_SEND_LONG_DATA:
        proto_get_u32(c, &out->u.long_data.stmt_id);
        proto_get_u16(c, &out->u.long_data.param_id);
        proto_get_rest(c, &out->u.long_data.data);
        return c->err;
    case PROTO_COM_STMT_EXECUTE:
        proto_get_u32(c, &out->u.execute.stmt_id);
        proto_get_u8(c, &out->u.execute.flags);
        proto_get_u32(c, &out->u.execute.iterations);
        return c->err;
    case PROTO_COM_SET_OPTION:
        return proto_get_u16(c, &out->u.option);
    case PROTO_COM_CHANGE_USER:
        return parse_change_user(c, caps, &out->u.change_user);
    default:
        return PROTO_EUNSUPPORTED;
    }
}

int proto_parse_command(const void *payload, size_t len, uint32_t caps, proto_cmd_t *out)
{
    proto_cur_t c;
    memset(out, 0, sizeof *out);
    proto_cur_init(&c, payload, len);
    if (proto_get_u8(&c, &out->cmd) != 0)
        return c.err;
    int rc = parse_args(&c, caps, out);
    if (rc != 0) {
        uint8_t cmd = out->cmd;
        memset(&out->u, 0, sizeof out->u);  /* no half-parsed fields */
        out->cmd = cmd;
    }
    return rc;
}
