/*
 * fuzz_session.c - libFuzzer target for a dal-proxy client session as
 * client.c and auth.c drive the codec (proxy/protocol/protocol.h): a byte
 * stream cut into packets by the packet reader, the first taken as the
 * handshake response (an SSLRequest first, then the response as if through
 * TLS), an auth switch's response and caching_sha2_password's cleartext
 * password when the plugin named asks for them, then commands in the
 * capabilities the handshake agreed: COM_QUERY split into statements and
 * copied as the session reads them (a stray NUL a syntax error, executable
 * comments opened in a copy of the same length), COM_STMT_PREPARE
 * registering a statement with a parameter count, COM_STMT_EXECUTE decoded
 * with that count, the previous execution's types and the parameters sent
 * by COM_STMT_SEND_LONG_DATA, STMT_CLOSE/RESET, CHANGE_USER back to
 * authentication, INIT_DB, FIELD_LIST, SET_OPTION.  The replies are built
 * as the session builds them, and every error text goes through
 * redact_message (proxy/redact.c), whose output is checked.
 *
 * Input: [chunk step][max_allowed_packet selector, its bit 2 the sql_mode
 * NO_BACKSLASH_ESCAPES][the stream...].  The
 * stream is fed in chunks of 1..16 bytes (from the first byte), so packets
 * and their continuation chunks (a length of 0xffffff) arrive split
 * anywhere; bad sequence ids, lengths of 0 and truncated lenenc fields are
 * the input's to choose.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "proxy.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            abort();                                                                         \
    } while (0)

#define MAX_STMTS 4
#define MAX_PARAMS 64

/* What the handshake offers (auth.c's server_caps, with TLS). */
static const uint64_t server_caps =
    PROTO_CLIENT_FOUND_ROWS | PROTO_CLIENT_LONG_FLAG |
    PROTO_CLIENT_CONNECT_WITH_DB | PROTO_CLIENT_ODBC | PROTO_CLIENT_IGNORE_SPACE |
    PROTO_CLIENT_PROTOCOL_41 | PROTO_CLIENT_INTERACTIVE | PROTO_CLIENT_TRANSACTIONS |
    PROTO_CLIENT_SECURE_CONNECTION | PROTO_CLIENT_MULTI_STATEMENTS | PROTO_CLIENT_MULTI_RESULTS |
    PROTO_CLIENT_PS_MULTI_RESULTS | PROTO_CLIENT_PLUGIN_AUTH | PROTO_CLIENT_CONNECT_ATTRS |
    PROTO_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | PROTO_CLIENT_SESSION_TRACK |
    PROTO_CLIENT_DEPRECATE_EOF | PROTO_CLIENT_SSL | PROTO_MARIADB_CLIENT_EXTENDED_METADATA;

typedef enum { S_HANDSHAKE, S_AUTH_SWITCH, S_SHA2_FULL, S_COMMAND, S_CLOSED } state_t;

typedef struct stmt {
    uint32_t id;               /* 0: free */
    uint16_t nparams;
    bool has_types;
    uint8_t types[2 * MAX_PARAMS];
    bool long_data[MAX_PARAMS];
} stmt_t;

typedef struct session {
    state_t state;
    bool tls, multi;
    bool no_backslash;  /* the session's sql_mode has NO_BACKSLASH_ESCAPES */
    uint64_t caps;
    char user[64];
    uint8_t scramble[PROTO_SCRAMBLE_LEN];
    stmt_t stmts[MAX_STMTS];
    uint32_t next_id, last_id;
    proto_buf_t out;
    uint8_t seq;
} session_t;

/* A decoded string lies inside the packet it came from. */
static void check_in(proto_str_t s, const proto_packet_t *pkt)
{
    const uint8_t *p = (const uint8_t *)s.ptr;

    if (p == NULL) {
        CHECK(s.len == 0);
        return;
    }
    CHECK(s.len == 0 || (p >= pkt->payload && s.len <= pkt->len &&
                         (size_t)(p - pkt->payload) <= pkt->len - s.len));
}

static void walk_attrs(proto_str_t attrs, const proto_packet_t *pkt)
{
    proto_cur_t c;
    proto_str_t k, v;
    int rc;

    proto_cur_init(&c, attrs.ptr, attrs.len);
    while ((rc = proto_attrs_next(&c, &k, &v)) == 1) {
        check_in(k, pkt);
        check_in(v, pkt);
    }
    CHECK(rc == 0);
}

/* An error as the session sends one: the text through redact_message,
 * whose output is terminated inside its buffer and, when nothing was
 * taken out, the message itself (cut at the buffer's end). */
static void send_err(session_t *s, uint16_t code, const char *msg)
{
    char shown[160];
    bool changed = redact_message(msg, s->user, "127.0.0.1", shown, sizeof shown);
    size_t n = strlen(shown);

    CHECK(n < sizeof shown);
    if (!changed)
        CHECK(strncmp(shown, msg, n) == 0 && (msg[n] == '\0' || n == sizeof shown - 1));
    proto_build_err(&s->out, &s->seq, code, "HY000", shown);
}

static void send_ok(session_t *s)
{
    proto_ok_t ok = {0, 0, PROTO_SERVER_STATUS_AUTOCOMMIT, 0, NULL, 0, false, NULL, 0};

    proto_build_ok(&s->out, &s->seq, (uint32_t)s->caps, &ok);
}

/* The outcome of a login: the password checked against a fixed stage 2
 * (it never matches a fuzzer's bytes, as a wrong password does not), and
 * the reply of either side built. */
static void settle(session_t *s, const void *resp, size_t len)
{
    static const uint8_t stage2[PROTO_SHA1_LEN] = {0x5a};
    char msg[192];

    if (proto_native_verify(s->scramble, resp, len, stage2) || len == 0) {
        send_ok(s);
        s->state = S_COMMAND;
        return;
    }
    snprintf(msg, sizeof msg, "Access denied for user '%s'@'%s' (using password: YES)", s->user,
             "127.0.0.1");
    send_err(s, 1045, msg);
    s->state = S_COMMAND;  /* go on: the commands are the next thing to fuzz */
}

static bool is_plugin(proto_str_t p, const char *name)
{
    return p.ptr != NULL && p.len == strlen(name) && memcmp(p.ptr, name, p.len) == 0;
}

/* A login as user (handshake or CHANGE_USER), as auth.c's login(). */
static void login(session_t *s, proto_str_t user, proto_str_t plugin, proto_str_t resp)
{
    snprintf(s->user, sizeof s->user, "%.*s", (int)(user.len < 63 ? user.len : 63),
             user.ptr ? user.ptr : "");
    if (is_plugin(plugin, "caching_sha2_password")) {
        if (s->tls && resp.len != PROTO_SHA256_LEN) {
            static const uint8_t full = PROTO_SHA2_PERFORM_FULL_AUTH;
            proto_build_auth_more_data(&s->out, &s->seq, &full, 1);
            s->state = S_SHA2_FULL;
            return;
        }
        (void)proto_sha2_verify(s->scramble, resp.ptr, resp.len, s->scramble);
    } else if (plugin.ptr != NULL && !is_plugin(plugin, "mysql_native_password")) {
        proto_build_auth_switch(&s->out, &s->seq, "mysql_native_password", s->scramble,
                                PROTO_SCRAMBLE_LEN);
        s->state = S_AUTH_SWITCH;
        return;
    }
    settle(s, resp.ptr, resp.len);
}

static void handshake(session_t *s, const proto_packet_t *pkt)
{
    proto_handshake_response_t r;
    int rc = proto_parse_handshake_response(pkt->payload, pkt->len, &r);

    s->seq = pkt->next_seq;
    if (rc == 0 && r.ssl_request && !s->tls) {
        s->tls = true;  /* what follows would come through TLS */
        return;
    }
    if (rc != 0 || r.ssl_request) {
        send_err(s, 1043, "Bad handshake");
        s->state = S_CLOSED;
        return;
    }
    check_in(r.user, pkt);
    check_in(r.auth_response, pkt);
    check_in(r.database, pkt);
    check_in(r.auth_plugin, pkt);
    check_in(r.attrs, pkt);
    walk_attrs(r.attrs, pkt);
    s->caps = r.capabilities & server_caps;
    s->multi = (s->caps & PROTO_CLIENT_MULTI_STATEMENTS) != 0;
    if (r.database.ptr != NULL && r.database.len > 0 &&
        (r.database.len != 3 || memcmp(r.database.ptr, "dal", 3) != 0)) {
        char msg[128];
        snprintf(msg, sizeof msg, "Unknown database '%.*s'",
                 (int)(r.database.len < 64 ? r.database.len : 64), r.database.ptr);
        send_err(s, 1049, msg);
        s->state = S_CLOSED;
        return;
    }
    login(s, r.user, (s->caps & PROTO_CLIENT_PLUGIN_AUTH) ? r.auth_plugin : (proto_str_t){0},
          r.auth_response);
}

static stmt_t *find_stmt(session_t *s, uint32_t id)
{
    size_t i;

    if (id == 0xFFFFFFFFu)
        id = s->last_id;
    for (i = 0; i < MAX_STMTS; i++)
        if (s->stmts[i].id != 0 && s->stmts[i].id == id)
            return &s->stmts[i];
    return NULL;
}

/* One statement of a COM_QUERY, read as the session reads it: a stray
 * NUL is a syntax error (a final one the end), the text is copied with its
 * length, and a copy with its executable comments opened is the same
 * length with no byte outside them changed. */
static void run_piece(session_t *s, const char *text, size_t len)
{
    size_t n = len, at = proto_sql_stray_nul(text, &n, s->no_backslash), i;
    char *sql, *view;

    CHECK(n <= len);
    if (at != SIZE_MAX) {
        CHECK(at < len && text[at] == '\0');
        send_err(s, 1064, "a NUL byte outside quotes");
        return;
    }
    if ((sql = malloc(n + 1)) == NULL || (view = malloc(n + 1)) == NULL) {
        free(sql);
        return;
    }
    memcpy(sql, text, n);
    memcpy(view, text, n);
    sql[n] = view[n] = '\0';
    if (proto_sql_unwrap(view, n, 101199, s->no_backslash))
        for (i = 0; i < n; i++)
            CHECK(view[i] == sql[i] || view[i] == ' ');
    else
        CHECK(memcmp(view, sql, n) == 0);
    if (n == 0 || sql[strspn(sql, " \t\r\n")] == '\0')
        send_err(s, 1065, "Query was empty");
    else
        send_ok(s);
    free(view);
    free(sql);
}

static void query(session_t *s, proto_str_t text)
{
    const char *p = text.ptr ? text.ptr : "";
    size_t len = text.len, n, next;

    if (!s->multi || proto_sql_blank(p, len, 101199)) {
        run_piece(s, p, len);
        return;
    }
    while (len > 0) {
        n = proto_split_statement(p, len, s->no_backslash, &next);
        CHECK(n <= len && next <= len && n <= next && next > 0);
        if (!proto_sql_blank(p, n, 101199))
            run_piece(s, p, n);
        p += next;
        len -= next;
    }
}

static void prepare(session_t *s, proto_str_t text)
{
    proto_column_t params[MAX_PARAMS];
    stmt_t *st = NULL;
    uint16_t n = 0;
    size_t i;

    for (i = 0; i < text.len && n < MAX_PARAMS; i++)
        n += text.ptr[i] == '?';
    for (i = 0; i < MAX_STMTS && st == NULL; i++)
        if (s->stmts[i].id == 0)
            st = &s->stmts[i];
    if (st == NULL) {
        send_err(s, 1461, "Can't create more than max_prepared_stmt_count statements");
        return;
    }
    memset(st, 0, sizeof *st);
    st->id = ++s->next_id;
    st->nparams = n;
    s->last_id = st->id;
    memset(params, 0, sizeof params);
    for (i = 0; i < n; i++) {
        params[i].name = "?";
        params[i].type = PROTO_TYPE_VAR_STRING;
        params[i].charset = 63;
    }
    proto_build_prepare_ok(&s->out, &s->seq, s->caps, st->id, n ? params : NULL, n,
                           NULL, 0, 0, PROTO_SERVER_STATUS_AUTOCOMMIT);
}

static void execute(session_t *s, const proto_packet_t *pkt, uint32_t id)
{
    stmt_t *st = find_stmt(s, id);
    proto_stmt_execute_t e;
    size_t i;
    int rc;

    if (st == NULL) {
        send_err(s, 1243, "Unknown prepared statement handler given to mysqld_stmt_execute");
        return;
    }
    rc = proto_parse_stmt_execute(pkt->payload, pkt->len, st->nparams,
                                  st->has_types ? st->types : NULL, st->long_data, &e);
    if (rc == 0) {
        CHECK(e.nparams == 0 || e.nparams == st->nparams);
        for (i = 0; i < e.nparams; i++)
            if (e.params[i].kind == PROTO_VAL_TEXT || e.params[i].kind == PROTO_VAL_BLOB) {
                const proto_param_t *p = &e.params[i];
                const uint8_t *a = (const uint8_t *)p->temporal;
                bool in_alt = (const uint8_t *)p->v.s.ptr >= a &&
                              (const uint8_t *)p->v.s.ptr + p->v.s.len <= a + sizeof p->temporal;
                CHECK(in_alt || p->v.s.len == 0 ||
                      ((const uint8_t *)p->v.s.ptr >= pkt->payload &&
                       (const uint8_t *)p->v.s.ptr + p->v.s.len <= pkt->payload + pkt->len));
            }
        if (e.nparams > 0 && e.nparams <= MAX_PARAMS) {
            proto_stmt_execute_types(&e, st->types);
            st->has_types = true;
        }
        memset(st->long_data, 0, sizeof st->long_data);
        send_ok(s);
    } else {
        send_err(s, 1210, "Incorrect arguments to mysqld_stmt_execute");
    }
    proto_stmt_execute_free(&e);
}

static void command(session_t *s, const proto_packet_t *pkt)
{
    proto_cmd_t cmd;
    stmt_t *st;

    s->seq = pkt->next_seq;
    if (pkt->len == 0) {
        s->state = S_CLOSED;
        return;
    }
    if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)s->caps, &cmd) != 0) {
        send_err(s, 1047, "Unknown command");
        return;
    }
    switch (cmd.cmd) {
    case PROTO_COM_QUIT:
        s->state = S_CLOSED;
        return;
    case PROTO_COM_QUERY:
        check_in(cmd.u.text, pkt);
        query(s, cmd.u.text);
        return;
    case PROTO_COM_INIT_DB:
        check_in(cmd.u.text, pkt);
        send_ok(s);
        return;
    case PROTO_COM_FIELD_LIST:
        check_in(cmd.u.field_list.table, pkt);
        check_in(cmd.u.field_list.wildcard, pkt);
        proto_build_end(&s->out, &s->seq, (uint32_t)s->caps, 0, PROTO_SERVER_STATUS_AUTOCOMMIT);
        return;
    case PROTO_COM_STMT_PREPARE:
        check_in(cmd.u.text, pkt);
        prepare(s, cmd.u.text);
        return;
    case PROTO_COM_STMT_EXECUTE:
        execute(s, pkt, cmd.u.execute.stmt_id);
        return;
    case PROTO_COM_STMT_SEND_LONG_DATA:
        check_in(cmd.u.long_data.data, pkt);
        if ((st = find_stmt(s, cmd.u.long_data.stmt_id)) != NULL &&
            cmd.u.long_data.param_id < st->nparams)
            st->long_data[cmd.u.long_data.param_id] = true;
        return;
    case PROTO_COM_STMT_CLOSE:
        if ((st = find_stmt(s, cmd.u.stmt_id)) != NULL)
            memset(st, 0, sizeof *st);
        return;
    case PROTO_COM_STMT_RESET:
        if ((st = find_stmt(s, cmd.u.stmt_id)) != NULL)
            memset(st->long_data, 0, sizeof st->long_data);
        send_ok(s);
        return;
    case PROTO_COM_SET_OPTION:
        s->multi = cmd.u.option == PROTO_OPTION_MULTI_STATEMENTS_ON;
        proto_build_end(&s->out, &s->seq, (uint32_t)s->caps, 0, PROTO_SERVER_STATUS_AUTOCOMMIT);
        return;
    case PROTO_COM_CHANGE_USER:
        check_in(cmd.u.change_user.user, pkt);
        check_in(cmd.u.change_user.auth_response, pkt);
        check_in(cmd.u.change_user.database, pkt);
        walk_attrs(cmd.u.change_user.attrs, pkt);
        memset(s->stmts, 0, sizeof s->stmts);
        login(s, cmd.u.change_user.user, cmd.u.change_user.auth_plugin,
              cmd.u.change_user.auth_response);
        return;
    default:
        send_ok(s);
        return;
    }
}

static void packet(session_t *s, const proto_packet_t *pkt)
{
    switch (s->state) {
    case S_HANDSHAKE:
        handshake(s, pkt);
        break;
    case S_AUTH_SWITCH:
        s->seq = pkt->next_seq;
        settle(s, pkt->payload, pkt->len);
        break;
    case S_SHA2_FULL: {
        proto_str_t pw;
        s->seq = pkt->next_seq;
        if (proto_parse_cleartext_password(pkt->payload, pkt->len, &pw) == 0) {
            check_in(pw, pkt);
            CHECK(pw.len == 0 || memchr(pw.ptr, '\0', pw.len) == NULL);
        }
        settle(s, pkt->payload, pkt->len);
        break;
    }
    case S_COMMAND:
        command(s, pkt);
        break;
    case S_CLOSED:
        break;
    }
    if (s->out.len > 65536)
        proto_buf_reset(&s->out);  /* as if written to the socket */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t limits[4] = {1024, 65536, 16777216, 16777215 + 100};
    session_t s;
    proto_reader_t r;
    proto_packet_t pkt;
    size_t pos = 2, step;
    int rc = 0;

    if (size < 2)
        return 0;
    memset(&s, 0, sizeof s);
    memset(s.scramble, 0x3c, sizeof s.scramble);
    step = (size_t)(data[0] % 16) + 1;
    proto_reader_init(&r, limits[data[1] % 4]);
    s.no_backslash = (data[1] & 4) != 0;
    while (pos < size && s.state != S_CLOSED) {
        size_t n = step < size - pos ? step : size - pos;
        if (proto_reader_feed(&r, data + pos, n) != 0)
            break;
        pos += n;
        while (s.state != S_CLOSED && (rc = proto_reader_next(&r, &pkt)) == 1) {
            CHECK(pkt.len <= r.max_packet);
            packet(&s, &pkt);
        }
        if (rc < 0) {
            CHECK(proto_reader_message(&r)[0] != '\0');
            send_err(&s, 1153, proto_reader_message(&r));
            break;
        }
    }
    proto_reader_free(&r);
    proto_buf_free(&s.out);
    return 0;
}
