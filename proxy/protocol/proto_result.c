/*
 * proto_result.c -- what the server answers: OK, ERR and EOF packets (and
 * the session state changes an OK carries), the head of a result set
 * (column count and ColumnDefinition41 with MariaDB's extended type
 * information), text rows, and COM_STMT_PREPARE's reply.  Binary rows are
 * in proto_binary.c.
 */
#include <string.h>

#include "proto_int.h"

int proto_build_ok(proto_buf_t *b, uint8_t *seq, uint32_t caps, const proto_ok_t *ok)
{
    size_t start;
    bool tracked = (caps & PROTO_CLIENT_SESSION_TRACK) && ok->state != NULL && ok->state_len > 0;
    uint16_t status = tracked ? ok->status | PROTO_SERVER_SESSION_STATE_CHANGED
                              : ok->status & ~PROTO_SERVER_SESSION_STATE_CHANGED;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, ok->eof_header ? 0xFE : 0x00);
    proto_put_lenenc(b, ok->affected_rows);
    proto_put_lenenc(b, ok->last_insert_id);
    proto_put_u16(b, status);
    proto_put_u16(b, ok->warnings);
    /* length-encoded either way: servers send it so, and clients (the
     * MariaDB and MySQL client libraries) read it so, whatever the
     * protocol's description of the no-session-track case says */
    if ((caps & PROTO_CLIENT_SESSION_TRACK) || (ok->info != NULL && ok->info_len > 0))
        proto_put_lenenc_str(b, ok->info, ok->info ? ok->info_len : 0);
    if (tracked)
        proto_put_lenenc_str(b, ok->state, ok->state_len);
    return proto_finish(b, start, seq);
}

/* One entry: type, then data of n bytes that put writes. */
static void track_entry(proto_buf_t *b, uint8_t type, size_t n)
{
    proto_put_u8(b, type);
    proto_put_lenenc(b, n);
}

void proto_track_variable(proto_buf_t *b, const char *name, const char *value)
{
    size_t nn = strlen(name), nv = value != NULL ? strlen(value) : 0;

    track_entry(b, PROTO_SESSION_TRACK_SYSTEM_VARIABLES,
                proto_lenenc_size(nn) + nn + proto_lenenc_size(nv) + nv);
    proto_put_lenenc_str(b, name, nn);
    proto_put_lenenc_str(b, value != NULL ? value : "", nv);
}

void proto_track_schema(proto_buf_t *b, const char *schema, size_t n)
{
    track_entry(b, PROTO_SESSION_TRACK_SCHEMA, proto_lenenc_size(n) + n);
    proto_put_lenenc_str(b, schema, n);
}

void proto_track_state_change(proto_buf_t *b)
{
    track_entry(b, PROTO_SESSION_TRACK_STATE_CHANGE, 2);
    proto_put_lenenc_str(b, "1", 1);
}

int proto_build_err(proto_buf_t *b, uint8_t *seq, uint16_t code, const char *sqlstate,
                    const char *message)
{
    if (!sqlstate)
        sqlstate = "HY000";
    if (strlen(sqlstate) != 5)
        return PROTO_EINVAL;
    if (!message)
        message = "";
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 0xFF);
    proto_put_u16(b, code);
    proto_put_u8(b, '#');
    proto_put_bytes(b, sqlstate, 5);
    proto_put_bytes(b, message, strlen(message));
    return proto_finish(b, start, seq);
}

int proto_build_eof(proto_buf_t *b, uint8_t *seq, uint16_t warnings, uint16_t status)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 0xFE);
    proto_put_u16(b, warnings);
    proto_put_u16(b, status);
    return proto_finish(b, start, seq);
}

int proto_build_end(proto_buf_t *b, uint8_t *seq, uint32_t caps, uint16_t warnings,
                    uint16_t status)
{
    if (!(caps & PROTO_CLIENT_DEPRECATE_EOF))
        return proto_build_eof(b, seq, warnings, status);
    proto_ok_t ok = {0};
    ok.status = status;
    ok.warnings = warnings;
    ok.eof_header = true;
    return proto_build_ok(b, seq, caps, &ok);
}

int proto_build_column_count(proto_buf_t *b, uint8_t *seq, uint64_t n)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_lenenc(b, n);
    return proto_finish(b, start, seq);
}

/* The extended type information block (MariaDB's
 * store_field_extended_metadata): a lenenc length, then per attribute
 * present its id (0: data type name, 1: format name) and lenenc value. */
static void put_extended_metadata(proto_buf_t *b, const proto_column_t *col)
{
    const char *attr[2] = {col->type_name, col->format};
    uint64_t len = 0;
    int i;

    for (i = 0; i < 2; i++)
        if (attr[i] != NULL && attr[i][0] != '\0')
            len += 1 + proto_lenenc_size(strlen(attr[i])) + strlen(attr[i]);
    proto_put_lenenc(b, len);
    for (i = 0; i < 2; i++)
        if (attr[i] != NULL && attr[i][0] != '\0') {
            proto_put_u8(b, (uint8_t)i);
            proto_put_lenenc_cstr(b, attr[i]);
        }
}

/* ColumnDefinition41's fields, into a packet begun by the caller. */
static void put_column(proto_buf_t *b, uint64_t caps, const proto_column_t *col)
{
    proto_put_lenenc_str(b, "def", 3);
    proto_put_lenenc_cstr(b, col->schema);
    proto_put_lenenc_cstr(b, col->table);
    proto_put_lenenc_cstr(b, col->org_table);
    proto_put_lenenc_cstr(b, col->name);
    proto_put_lenenc_cstr(b, col->org_name);
    if (caps & PROTO_MARIADB_CLIENT_EXTENDED_METADATA)
        put_extended_metadata(b, col);
    proto_put_lenenc(b, 0x0C);  /* length of the fixed fields that follow */
    proto_put_u16(b, col->charset);
    proto_put_u32(b, col->length);
    proto_put_u8(b, col->type);
    proto_put_u16(b, col->flags);
    proto_put_u8(b, col->decimals);
    proto_put_zeros(b, 2);
}

int proto_build_column(proto_buf_t *b, uint8_t *seq, uint64_t caps, const proto_column_t *col)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    put_column(b, caps, col);
    return proto_finish(b, start, seq);
}

int proto_build_field_list_column(proto_buf_t *b, uint8_t *seq, uint64_t caps,
                                  const proto_column_t *col, const char *def, size_t n)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    put_column(b, caps, col);
    if (def != NULL)
        proto_put_lenenc_str(b, def, n);
    else
        proto_put_lenenc_null(b);
    return proto_finish(b, start, seq);
}

/* n definitions and the end of the list; all or nothing like a builder. */
static int build_definitions(proto_buf_t *b, uint8_t *seq, uint64_t caps,
                             const proto_column_t *cols, size_t n, uint16_t status)
{
    size_t start = b->len;
    uint8_t seq0 = *seq;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = proto_build_column(b, seq, caps, &cols[i]);
    if (rc == 0 && !(caps & PROTO_CLIENT_DEPRECATE_EOF))
        rc = proto_build_eof(b, seq, 0, status);
    if (rc != 0) {
        b->len = start;
        *seq = seq0;
    }
    return rc;
}

int proto_build_columns(proto_buf_t *b, uint8_t *seq, uint64_t caps, const proto_column_t *cols,
                        size_t n, uint16_t status)
{
    size_t start = b->len;
    uint8_t seq0 = *seq;
    int rc = proto_build_column_count(b, seq, n);
    if (rc == 0)
        rc = build_definitions(b, seq, caps, cols, n, status);
    if (rc != 0) {
        b->len = start;
        *seq = seq0;
    }
    return rc;
}

int proto_build_text_row(proto_buf_t *b, uint8_t *seq, size_t n, const char *const *values,
                         const size_t *lengths)
{
    size_t start;
    if (proto_begin(b, &start) != 0)
        return b->err;
    for (size_t i = 0; i < n; i++) {
        if (!values[i])
            proto_put_lenenc_null(b);
        else
            proto_put_lenenc_str(b, values[i], lengths ? lengths[i] : strlen(values[i]));
    }
    return proto_finish(b, start, seq);
}

int proto_build_prepare_ok(proto_buf_t *b, uint8_t *seq, uint64_t caps, uint32_t stmt_id,
                           const proto_column_t *params, uint16_t nparams,
                           const proto_column_t *cols, uint16_t ncolumns, uint16_t warnings,
                           uint16_t status)
{
    size_t start;
    uint8_t seq0 = *seq;
    if (proto_begin(b, &start) != 0)
        return b->err;
    proto_put_u8(b, 0x00);
    proto_put_u32(b, stmt_id);
    proto_put_u16(b, ncolumns);
    proto_put_u16(b, nparams);
    proto_put_u8(b, 0);  /* reserved */
    proto_put_u16(b, warnings);
    int rc = proto_finish(b, start, seq);
    if (rc == 0 && nparams > 0)
        rc = build_definitions(b, seq, caps, params, nparams, status);
    if (rc == 0 && ncolumns > 0)
        rc = build_definitions(b, seq, caps, cols, ncolumns, status);
    if (rc != 0) {
        b->len = start;
        *seq = seq0;
    }
    return rc;
}
