/*
 * reply.c -- every reply a command builds into c->out: ERR (a dal error
 * as the MySQL error a client expects, without backend details), OK, a
 * result set's columns, rows and end.  The handlers call down into it; it
 * calls nothing of client.c.  See reply.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "errmap.h"
#include "reply.h"

void reply_err(proxy_client_t *c, uint16_t code, const char *sqlstate, const char *msg)
{
    /* a client takes error 0 for "no error" (mysql_errno() == 0): a
     * failure without a server's code goes out as ER_UNKNOWN_ERROR */
    if (code == 0)
        code = 1105;
    proto_build_err(&c->out, &c->seq, code, sqlstate, msg);
    c->failed = true;
    if (c->state == CLIENT_COMMAND)
        diag_error(c, code, msg);
}

uint16_t reply_status(const proxy_client_t *c)
{
    uint16_t st = c->session != NULL ? (uint16_t)dal_session_status(c->session)
                                     : (uint16_t)dal_new_session_status(c->px->dal);

    return c->more ? st | PROTO_SERVER_MORE_RESULTS_EXISTS : st;
}

bool reply_no_backslash(const proxy_client_t *c)
{
    if (c->session != NULL)
        return dal_session_no_backslash_escapes(c->session) != 0;
    return (dal_new_session_status(c->px->dal) & PROTO_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
}

void reply_ok_info(proxy_client_t *c, uint64_t affected, uint64_t insert_id,
                   unsigned int warnings, const char *info)
{
    proto_ok_t ok = {affected, insert_id, reply_status(c), (uint16_t)warnings, info,
                     info != NULL ? strlen(info) : 0, false, NULL, 0};

    proto_build_ok(&c->out, &c->seq, (uint32_t)c->caps, &ok);
}

void reply_ok_state(proxy_client_t *c, const uint8_t *state, size_t len, unsigned int warnings)
{
    proto_ok_t ok = {0, 0, reply_status(c), (uint16_t)warnings, NULL, 0, false, state, len};

    proto_build_ok(&c->out, &c->seq, (uint32_t)c->caps, &ok);
}

void reply_ok(proxy_client_t *c, uint64_t affected, uint64_t insert_id, unsigned int warnings)
{
    reply_ok_info(c, affected, insert_id, warnings, NULL);
}

void reply_unknown_db(proxy_client_t *c, const char *p, size_t n)
{
    char msg[128];

    snprintf(msg, sizeof msg, "Unknown database '%.*s'", (int)(n < 64 ? n : 64), p);
    reply_err(c, 1049, "42000", msg);
}

/*
 * A server's error as that server worded it.  dal's message puts the node
 * in front ("datasource ds0 (dal@host:port/db): error 1146 (42S02): Table
 * ... doesn't exist"); a MySQL client, an ORM or a test suite matches the
 * server's own words, so the proxy sends those, and the node is in the
 * monitors (dal_execution_errors_total names datasource and server).
 */
static const char *server_words(const dal_error_t *err)
{
    char head[48];
    const char *p;

    snprintf(head, sizeof head, "): error %u (%s): ", err->mysql_errno, err->sqlstate);
    p = strstr(err->message, head);
    return p != NULL ? p + strlen(head) : err->message;
}

/* A client library's error number, met on a backend connection, that
 * means the backend is unreachable or lost. */
static bool backend_lost(unsigned int n)
{
    switch (n) {
    case 2002: case 2003: case 2005: case 2006: case 2013: case 2026: case 2055:
        return true;
    }
    return false;
}

/* The datasource err is about ("datasource NAME ..." or "NAME: ..."), for
 * the message of a backend unreachable, into name ("" if none is named). */
static void datasource_named(const char *msg, char *name, size_t cap)
{
    const char *p = strstr(msg, "datasource ");
    size_t n;

    if (p != NULL)
        p += strlen("datasource ");
    else
        p = msg;
    n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");
    if (p == msg && p[n] != ':')
        n = 0;
    snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

/* A backend unreachable or lost, as a server says of a remote data source
 * (ER_CONNECT_TO_FOREIGN_DATA_SOURCE): the datasource and the client
 * library's number, never its words, which name the backend's host, port
 * or user ("Can't connect to server on '10.0.0.5'", "Access denied for
 * user 'dal'@..."); the operator finds them in the log. */
static void backend_error(proxy_client_t *c, const dal_error_t *err)
{
    char name[64], num[24] = "", msg[256];

    datasource_named(err->message, name, sizeof name);
    if (err->mysql_errno != 0)
        snprintf(num, sizeof num, " (error %u)", err->mysql_errno);
    snprintf(msg, sizeof msg, "Unable to connect to foreign data source: %s%s is unreachable "
             "or lost its connection%s; dal-proxy's log has the details",
             name[0] ? "datasource " : "a datasource", name, num);
    fprintf(stderr, "dal-proxy: connection %u (%s): sent error 1429 for: %s\n", c->id, c->peer,
            err->message);
    reply_err(c, 1429, "HY000", msg);
}

/* A message of dal or a server as the client sees it (redact_message);
 * what was taken out is logged with the whole message. */
static void err_redacted(proxy_client_t *c, uint16_t code, const char *sqlstate,
                         const char *msg)
{
    char shown[DAL_ERROR_MSG_MAX];

    if (redact_message(msg, c->user, c->peer, shown, sizeof shown))
        fprintf(stderr, "dal-proxy: connection %u (%s): sent error %u without backend "
                "details: %s\n", c->id, c->peer, code ? code : 1105, msg);
    reply_err(c, code, sqlstate, shown);
}

/*
 * Errors as a client sees them: a server's own number, SQLSTATE and words
 * (which name the physical schema and table, as the server itself would:
 * they are no secret and what a user debugging the statement needs), but
 * never the backend's user, host or port -- the datasource is named by its
 * configuration name.
 */
void reply_dal_error(proxy_client_t *c, const dal_error_t *err)
{
    unsigned int n = err->mysql_errno;

    switch (err->code) {
    case DAL_ESERVER:
        if (n < 2000 || n >= 3000) {
            err_redacted(c, (uint16_t)n, err->sqlstate[0] ? err->sqlstate : "HY000",
                         server_words(err));
            return;
        }
        /* 2000-2999: the client library's own, met on a backend connection,
         * which libmariadb takes in an ERR packet for a malformed packet
         * (2027) */
        if (!backend_lost(n)) {
            err_redacted(c, 1105, "HY000", server_words(err));
            return;
        }
        break;
    case DAL_ECONNECT:
        break;
    default: {
        const proxy_errno_t *m = errmap_of(err->code);
        /* dal's refusals that a server would make too carry its number */
        if (n != 0 && err->sqlstate[0] != '\0')
            err_redacted(c, (uint16_t)n, err->sqlstate, err->message);
        else
            err_redacted(c, m->number, m->sqlstate, err->message);
        return;
    }
    }
    backend_error(c, err);
}

void reply_column(const dal_result_t *r, size_t i, proto_column_t *col)
{
    dal_column_info_t ci;

    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    memset(col, 0, sizeof *col);
    if (dal_result_column_info(r, i, &ci) != 0) {
        col->name = col->org_name = dal_result_column_name(r, i);
        col->charset = PROXY_CHARSET_UTF8MB4;
        col->type = PROTO_TYPE_VAR_STRING;
        return;
    }
    col->schema = ci.schema;
    col->table = ci.table;
    col->org_table = ci.org_table;
    col->name = ci.name;
    col->org_name = ci.org_name;
    col->charset = (uint16_t)ci.charset;
    col->length = ci.length > UINT32_MAX ? UINT32_MAX : (uint32_t)ci.length;
    col->type = (uint8_t)ci.type;
    /* NUM_FLAG (32768) is added by the client library to numeric
     * columns; servers do not send it */
    col->flags = (uint16_t)(ci.flags & ~32768u);
    col->decimals = (uint8_t)ci.decimals;
    col->type_name = ci.type_name;
    col->format = ci.format;
}

/* A server's result packet for the client: the definitions end with an
 * EOF only for a client without CLIENT_DEPRECATE_EOF (its status the
 * client's, as proto_build_columns writes it); each row gives the output
 * a chance to drain, as reply_result_map's rows do. */
static int relay_packet(void *ctx, dal_relay_part_t part, const unsigned char *p, size_t n)
{
    proxy_client_t *c = ctx;

    if (part == DAL_RELAY_COLUMNS_END) {
        if (!(c->caps & PROTO_CLIENT_DEPRECATE_EOF))
            proto_build_eof(&c->out, &c->seq, 0, reply_status(c));
        return 0;
    }
    proto_write_packet(&c->out, &c->seq, p, n);
    return part == DAL_RELAY_ROW && proxy_drain(c) != 0 ? -1 : 0;
}

static const dal_relay_t relay_plain = {0, relay_packet};
static const dal_relay_t relay_extended = {DAL_RELAY_EXTENDED_METADATA, relay_packet};

static const dal_relay_t relay_binary = {DAL_RELAY_BINARY, relay_packet};
static const dal_relay_t relay_binary_extended = {DAL_RELAY_BINARY | DAL_RELAY_EXTENDED_METADATA,
                                                  relay_packet};

const dal_relay_t *reply_relay(const proxy_client_t *c, bool binary)
{
    bool ext = (c->caps & PROTO_MARIADB_CLIENT_EXTENDED_METADATA) != 0;

    /* a column count with a metadata flag after it is not what a server
     * sends these clients (the proxy offers neither capability) */
    if (c->caps & (PROTO_MARIADB_CLIENT_CACHE_METADATA | PROTO_CLIENT_OPTIONAL_RESULTSET_METADATA))
        return NULL;
    if (binary)
        return ext ? &relay_binary_extended : &relay_binary;
    return ext ? &relay_extended : &relay_plain;
}

/* A CALL's results after the first (dal_result_next_set) follow it,
 * flagged SERVER_MORE_RESULTS_EXISTS, to a client that takes several; the
 * first error ends them, as on a server. */
void reply_result(proxy_client_t *c, dal_result_t *r, bool binary)
{
    uint64_t multi = binary ? PROTO_CLIENT_PS_MULTI_RESULTS : PROTO_CLIENT_MULTI_RESULTS;
    bool several = (c->caps & multi) != 0, more = c->more, failed = c->failed;

    dal_error_t err;
    const dal_result_t *s;

    c->failed = false;
    /* a client that takes one result gets the error a CALL ended with */
    for (s = r; !several && s != NULL; s = dal_result_next_set(s))
        if (dal_result_set_error(s, &err) != 0) {
            reply_dal_error(c, &err);
            diag_take(c, s);  /* the server's diagnostics area of the error */
            c->more = more;
            return;
        }
    for (; r != NULL && !c->failed; r = several ? dal_result_next_set(r) : NULL) {
        if (dal_result_set_error(r, &err) != 0) {
            c->more = more;
            reply_dal_error(c, &err);
            diag_take(c, r);
            break;
        }
        c->more = more || (several && dal_result_next_set(r) != NULL);
        reply_result_map(c, r, binary, NULL, NULL);
    }
    c->more = more;
    c->failed = c->failed || failed;
}

/* Columns of a result whose definitions and row values live on the stack. */
enum { REPLY_STACK_COLUMNS = 16 };

void reply_result_map(proxy_client_t *c, dal_result_t *r, bool binary, reply_map_fn map,
                      void *user)
{
    size_t n = dal_result_column_count(r), i;
    proto_column_t *cols, cols_s[REPLY_STACK_COLUMNS];
    const char **vals, *vals_s[REPLY_STACK_COLUMNS];
    size_t *lens, lens_s[REPLY_STACK_COLUMNS];
    dal_error_t err;
    int rc;

    binary |= c->binary;
    diag_take(c, r);
    if (dal_result_relayed(r, NULL)) {
        /* the columns and rows went out as the server sent them */
        proto_build_end(&c->out, &c->seq, (uint32_t)c->caps,
                        (uint16_t)dal_result_warning_count(r), reply_status(c));
        return;
    }
    if (n == 0) {
        reply_ok_info(c, (c->caps & PROTO_CLIENT_FOUND_ROWS) ? dal_result_found_rows(r)
                                                             : dal_result_affected_rows(r),
                      dal_result_insert_id(r), dal_result_warning_count(r), dal_result_info(r));
        return;
    }
    if (n <= REPLY_STACK_COLUMNS) {
        /* most results are this narrow: no allocation per statement */
        cols = memset(cols_s, 0, n * sizeof *cols);
        vals = memset(vals_s, 0, n * sizeof *vals);
        lens = memset(lens_s, 0, n * sizeof *lens);
    } else {
        cols = calloc(n, sizeof *cols);
        vals = calloc(n, sizeof *vals);
        lens = calloc(n, sizeof *lens);
    }
    if (cols == NULL || vals == NULL || lens == NULL) {
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
        goto done;
    }
    for (i = 0; i < n; i++)
        reply_column(r, i, &cols[i]);
    proto_build_columns(&c->out, &c->seq, c->caps, cols, n, reply_status(c));
    while ((rc = dal_result_next(r, &err)) == 1) {
        for (i = 0; i < n; i++) {
            vals[i] = dal_result_text(r, i, &lens[i]);
            if (map != NULL && vals[i] != NULL)
                map(user, i, &vals[i], &lens[i]);
        }
        if (!binary)
            proto_build_text_row(&c->out, &c->seq, n, vals, lens);
        else if (proto_build_binary_row(&c->out, &c->seq, cols, n, vals, lens) != 0)
            break; /* a value its column's type cannot hold */
        if (proxy_drain(c) != 0)
            goto done; /* the client stopped reading: it is closed */
    }
    if (rc == 1)
        reply_err(c, 1105, "HY000", "dal-proxy: a value does not fit its column's binary type");
    else if (rc < 0)
        reply_dal_error(c, &err);  /* a node failed mid-stream: the client sees the error */
    else
        proto_build_end(&c->out, &c->seq, (uint32_t)c->caps,
                        (uint16_t)dal_result_warning_count(r), reply_status(c));
done:
    if (cols != cols_s) {
        free(cols);
        free(vals);
        free(lens);
    }
}

void reply_value(proxy_client_t *c, const char *name, const char *value, reply_kind_t kind)
{
    proto_column_t col;
    const char *vals[1] = {value};

    memset(&col, 0, sizeof col);
    col.name = name;
    col.org_name = "";
    switch (kind) {
    case REPLY_CONNECTION_ID:
        col.charset = 63; /* binary */
        col.length = 10;
        col.type = PROTO_TYPE_LONG;
        col.flags = PROTO_NOT_NULL_FLAG | PROTO_UNSIGNED_FLAG | PROTO_BINARY_FLAG;
        break;
    case REPLY_FLAG:
        col.charset = 63;
        col.length = 21;
        col.type = PROTO_TYPE_LONGLONG;
        col.flags = PROTO_UNSIGNED_FLAG | PROTO_BINARY_FLAG;
        break;
    case REPLY_NAME:
        col.charset = PROXY_CHARSET_UTF8MB4;
        col.length = 256;
        col.type = PROTO_TYPE_VAR_STRING;
        col.decimals = 39; /* NOT_FIXED_DEC: a string's */
        break;
    }
    proto_build_columns(&c->out, &c->seq, c->caps, &col, 1, reply_status(c));
    reply_row(c, &col, 1, vals, NULL);
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, reply_status(c));
}

void reply_row(proxy_client_t *c, const proto_column_t *cols, size_t n, const char *const *vals,
               const size_t *lens)
{
    if (c->binary)
        proto_build_binary_row(&c->out, &c->seq, cols, n, vals, lens);
    else
        proto_build_text_row(&c->out, &c->seq, n, vals, lens);
}
