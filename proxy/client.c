/*
 * client.c -- one client connection: the handshake, authentication, and
 * the commands, each answered through the client's dal session.  See
 * proxy.h for who runs what.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "proxy.h"

#define SERVER_VERSION "5.5.5-10.11.99-dal-proxy"
#define CHARSET_UTF8MB4 45 /* utf8mb4_general_ci */

/* What dal-proxy offers; a client gets the intersection with its own. */
static const uint64_t server_caps =
    PROTO_CLIENT_MYSQL | PROTO_CLIENT_FOUND_ROWS | PROTO_CLIENT_LONG_FLAG | PROTO_CLIENT_LOCAL_FILES |
    PROTO_CLIENT_CONNECT_WITH_DB | PROTO_CLIENT_ODBC | PROTO_CLIENT_IGNORE_SPACE |
    PROTO_CLIENT_PROTOCOL_41 | PROTO_CLIENT_INTERACTIVE | PROTO_CLIENT_TRANSACTIONS |
    PROTO_CLIENT_SECURE_CONNECTION | PROTO_CLIENT_MULTI_STATEMENTS | PROTO_CLIENT_MULTI_RESULTS |
    PROTO_CLIENT_PS_MULTI_RESULTS |
    PROTO_CLIENT_PLUGIN_AUTH | PROTO_CLIENT_CONNECT_ATTRS |
    PROTO_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | PROTO_CLIENT_DEPRECATE_EOF;

static const char native_plugin[] = "mysql_native_password";
static const char sha2_plugin[] = "caching_sha2_password";

/* ---------------------------------------------------------------- replies */

void client_err(proxy_client_t *c, uint16_t code, const char *sqlstate, const char *msg)
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

uint16_t client_status(const proxy_client_t *c)
{
    uint16_t st = c->session != NULL ? (uint16_t)dal_session_status(c->session)
                                     : PROTO_SERVER_STATUS_AUTOCOMMIT;

    return c->more ? st | PROTO_SERVER_MORE_RESULTS_EXISTS : st;
}

void client_ok_info(proxy_client_t *c, uint64_t affected, uint64_t insert_id,
                    unsigned int warnings, const char *info)
{
    proto_ok_t ok = {affected, insert_id, client_status(c), (uint16_t)warnings, info,
                     info != NULL ? strlen(info) : 0, false};

    proto_build_ok(&c->out, &c->seq, (uint32_t)c->caps, &ok);
}

void client_ok(proxy_client_t *c, uint64_t affected, uint64_t insert_id, unsigned int warnings)
{
    client_ok_info(c, affected, insert_id, warnings, NULL);
}

static void send_ok(proxy_client_t *c, uint64_t affected, uint64_t insert_id)
{
    client_ok(c, affected, insert_id, 0);
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
    client_err(c, 1429, "HY000", msg);
}

/* A message of dal or a server as the client sees it (redact_message);
 * what was taken out is logged with the whole message. */
static void client_err_redacted(proxy_client_t *c, uint16_t code, const char *sqlstate,
                                const char *msg)
{
    char shown[DAL_ERROR_MSG_MAX];

    if (redact_message(msg, c->user, c->peer, shown, sizeof shown))
        fprintf(stderr, "dal-proxy: connection %u (%s): sent error %u without backend "
                "details: %s\n", c->id, c->peer, code ? code : 1105, msg);
    client_err(c, code, sqlstate, shown);
}

/*
 * Errors as a client sees them: a server's own number, SQLSTATE and words
 * (which name the physical schema and table, as the server itself would:
 * they are no secret and what a user debugging the statement needs), but
 * never the backend's user, host or port -- the datasource is named by its
 * configuration name.
 */
void client_dal_error(proxy_client_t *c, const dal_error_t *err)
{
    unsigned int n = err->mysql_errno;

    switch (err->code) {
    case DAL_ESERVER:
        if (n < 2000 || n >= 3000) {
            client_err_redacted(c, (uint16_t)n, err->sqlstate[0] ? err->sqlstate : "HY000",
                                server_words(err));
            return;
        }
        /* 2000-2999: the client library's own, met on a backend connection,
         * which libmariadb takes in an ERR packet for a malformed packet
         * (2027) */
        if (!backend_lost(n)) {
            client_err_redacted(c, 1105, "HY000", server_words(err));
            return;
        }
        break;
    case DAL_ESQL:
        client_err_redacted(c, 1064, "42000", err->message);   /* ER_PARSE_ERROR */
        return;
    case DAL_EUNSUPPORTED:
        client_err_redacted(c, 1235, "42000", err->message);   /* ER_NOT_SUPPORTED_YET */
        return;
    case DAL_ECONNECT:
        break;
    case DAL_ESTATE:
        client_err_redacted(c, 1105, "25000", err->message);
        return;
    default:
        client_err_redacted(c, 1105, "HY000", err->message);   /* ER_UNKNOWN_ERROR */
        return;
    }
    backend_error(c, err);
}

/* ------------------------------------------------------------ handshake */

proxy_client_t *client_new(proxy_t *px, struct proxy_io *io, int fd, const char *peer)
{
    proxy_client_t *c = calloc(1, sizeof *c);
    proto_handshake_t h;

    if (c == NULL) {
        close(fd);
        return NULL;
    }
    pthread_mutex_init(&c->session_mu, NULL);
    c->px = px;
    c->io = io;
    c->fd = fd;
    c->id = atomic_fetch_add(&px->next_id, 1) + 1;
    kill_register(c);
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    proto_reader_init(&c->in, px->max_allowed_packet);
    proto_reader_limit(&c->in, PROXY_LOGIN_PACKET, PROXY_LOGIN_PACKET_NAME);
    if (proto_scramble_generate(c->scramble) != 0) {
        client_free(c);
        return NULL;
    }
    memset(&h, 0, sizeof h);
    h.server_version = SERVER_VERSION;
    h.connection_id = c->id;
    h.scramble = c->scramble;
    h.capabilities = server_caps | (px->tls != NULL ? PROTO_CLIENT_SSL : 0);
    h.charset = CHARSET_UTF8MB4;
    h.status = PROTO_SERVER_STATUS_AUTOCOMMIT;
    h.auth_plugin = native_plugin;
    proto_build_handshake(&c->out, &c->seq, &h);
    c->state = CLIENT_HANDSHAKE;
    return c;
}

/* Close c's session and put s (NULL: none) in its place, under
 * session_mu: a KILL QUERY from another client may be using the old one. */
static void set_session(proxy_client_t *c, dal_session_t *s)
{
    pthread_mutex_lock(&c->session_mu);
    dal_session_close(c->session);
    c->session = s;
    pthread_mutex_unlock(&c->session_mu);
}

void client_free(proxy_client_t *c)
{
    if (c == NULL)
        return;
    kill_unregister(c);
    stmt_free_all(c);
    diag_free(c);
    set_session(c, NULL);
    pthread_mutex_destroy(&c->session_mu);
    proto_reader_free(&c->in);
    proto_buf_free(&c->out);
    tls_conn_free(c->tls);
    proto_buf_free(&c->wire);
    free(c->cmd);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

/* The account of user, or a fixed one that no password matches when
 * there is no such user: the checks then run the same and fail, so
 * neither the reply nor its timing tells which.  Like a user with a
 * password, nobody has a SHA-256 stage 2 (the fast path answers). */
static proxy_user_t find_user(proxy_t *px, const char *user, bool *known)
{
    static const proxy_user_t nobody = {NULL, {0x5a}, true, {0x5a}};
    proxy_user_t u;

    *known = users_find(px, user, &u);
    return *known ? u : nobody;
}

/* The outcome of a password check, for the guard: the reply (OK or ERR)
 * waits what the address earned by its failures before this one, and the
 * client is held meanwhile (server.c), so no thread sleeps. */
static void settle(proxy_client_t *c, bool ok)
{
    uint32_t ms = guard_delay_ms(c->px->guard, c->peer);

    if (ms > 0)
        c->hold_until = guard_now_ms() + ms;
    if (ok)
        guard_ok(c->px->guard, c->peer, c->user);
    else
        guard_failed(c->px->guard, c->peer, c->user);
}

static int deny(proxy_client_t *c, bool with_password)
{
    char msg[192];

    settle(c, false);
    snprintf(msg, sizeof msg, "Access denied for user '%s'@'%s' (using password: %s)", c->user,
             c->peer, with_password ? "YES" : "NO");
    client_err(c, 1045, "28000", msg);
    c->state = CLIENT_CLOSING;
    proxy_count(c->px, "auth_failed", atomic_fetch_add(&c->px->auth_failed, 1) + 1);
    return 0;
}

/* The character set of a handshake's collation id when it is not
 * utf8mb4 (what dal's connections use unless their URL says otherwise),
 * else NULL: the ids of the character sets a client commonly asks for. */
static const char *handshake_charset(uint8_t id)
{
    static const struct { uint8_t id; const char *name; } sets[] = {
        {1, "big5"}, {5, "latin1"}, {7, "koi8r"}, {8, "latin1"}, {9, "latin2"}, {11, "ascii"},
        {13, "sjis"}, {15, "latin1"}, {19, "euckr"}, {24, "gb2312"}, {26, "cp1250"},
        {28, "gbk"}, {31, "latin1"}, {33, "utf8mb3"}, {47, "latin1"}, {48, "latin1"},
        {49, "latin1"}, {51, "cp1251"}, {57, "cp1256"}, {63, "binary"}, {65, "ascii"},
        {83, "utf8mb3"}, {94, "latin1"}, {95, "cp932"},
    };
    size_t i;

    if (id >= 192 && id <= 215)  /* utf8mb3's UCA collations */
        return "utf8mb3";
    for (i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (sets[i].id == id)
            return sets[i].name;
    return NULL;
}

/* The handshake's collation itself, when it is not utf8mb4's default (the
 * servers take a collation's id for its name): `utf8mb4_unicode_ci` must
 * compare as it does on a server.  An id the servers do not know (MySQL
 * 8's 255) leaves the character set's default collation, as a server
 * does. */
static void keep_collation(proxy_client_t *c, dal_session_t *s)
{
    char id[8];
    dal_error_t err;

    if (c->charset == CHARSET_UTF8MB4)
        return;
    snprintf(id, sizeof id, "%u", c->charset);
    (void)dal_session_set_var(s, "collation_connection", id, &err);
}

/* The password checked: open the session in the handshake's character
 * set (as SET NAMES) and collation, and say OK. */
static int logged_in(proxy_client_t *c)
{
    dal_error_t err;
    dal_session_t *s = NULL;

    settle(c, true);
    if (dal_session_open(c->px->dal, &s, &err) != 0 || infile_attach(c, s, &err) != 0 ||
        (handshake_charset(c->charset) != NULL &&
         dal_session_set_var(s, "names", handshake_charset(c->charset), &err) != 0)) {
        dal_session_close(s);
        client_dal_error(c, &err);
        c->state = CLIENT_CLOSING;
        return 0;
    }
    keep_collation(c, s);
    dal_session_keep_warnings(s, 1);  /* for SHOW WARNINGS (diag.c) */
    set_session(c, s);
    c->state = CLIENT_COMMAND;
    proto_reader_limit(&c->in, c->px->max_allowed_packet, "max_allowed_packet");
    send_ok(c, 0, 0);
    return 0;
}

/* Check the 20-byte mysql_native_password response. */
static int authenticate(proxy_client_t *c, const void *resp, size_t len)
{
    bool known;
    const proxy_user_t u = find_user(c->px, c->user, &known);

    if (!proto_native_verify(c->scramble, resp, len, u.stage2) || !known)
        return deny(c, len > 0);
    return logged_in(c);
}

/*
 * A caching_sha2_password scramble.  Fast path: a user whose password
 * dal-proxy knows and whose scramble matches gets AuthMoreData "fast auth
 * success" and OK.  Anything else -- a wrong password, a password_hash
 * user (the hash cannot check a SHA-256 scramble), no such user -- goes
 * the one same way, so the replies do not tell which: over TLS the client
 * is asked for its password in clear ("perform full authentication"), as
 * MySQL does after a failed fast path; without TLS it would have to be
 * RSA-encrypted, which dal-proxy does not do, so the client is switched to
 * mysql_native_password, as servers switch clients whose plugin they do
 * not take.
 */
static int sha2_check(proxy_client_t *c, const proto_str_t *resp)
{
    static const uint8_t fast_ok = PROTO_SHA2_FAST_AUTH_SUCCESS;
    static const uint8_t full = PROTO_SHA2_PERFORM_FULL_AUTH;
    bool known;
    const proxy_user_t u = find_user(c->px, c->user, &known);

    if (u.has_sha2 && proto_sha2_verify(c->scramble, resp->ptr, resp->len, u.sha2) && known) {
        proto_build_auth_more_data(&c->out, &c->seq, &fast_ok, 1);
        return logged_in(c);
    }
    if (c->tls != NULL) {
        proto_build_auth_more_data(&c->out, &c->seq, &full, 1);
        c->state = CLIENT_SHA2_FULL;
        return 0;
    }
    proto_build_auth_switch(&c->out, &c->seq, native_plugin, c->scramble, PROTO_SCRAMBLE_LEN);
    c->state = CLIENT_AUTH_SWITCH;
    return 0;
}

/* A login whose first response names caching_sha2_password although the
 * handshake offered mysql_native_password.  Some clients (PyMySQL told to)
 * computed it on the handshake's scramble: it is checked.  The MySQL and
 * MariaDB client libraries do not show a plugin data prepared for another
 * one and send none: over TLS they are asked again by an AuthSwitchRequest
 * to the same plugin, without TLS switched to native at once -- a client
 * is switched once at most, and every user the same way. */
static int sha2_login(proxy_client_t *c, const proto_str_t *resp)
{
    if (resp->len == PROTO_SHA256_LEN || c->tls == NULL)
        return sha2_check(c, resp);
    proto_build_auth_switch(&c->out, &c->seq, sha2_plugin, c->scramble, PROTO_SCRAMBLE_LEN);
    c->state = CLIENT_SHA2_SWITCH;
    return 0;
}

/* The cleartext password of a full caching_sha2_password authentication
 * (only ever asked for over TLS), checked against the native stage 2 and
 * wiped from the reader's buffer. */
static int sha2_password(proxy_client_t *c, const proto_packet_t *pkt)
{
    proto_str_t pw;
    bool known, ok;
    const proxy_user_t u = find_user(c->px, c->user, &known);

    c->seq = pkt->next_seq;
    ok = proto_parse_cleartext_password(pkt->payload, pkt->len, &pw) == 0 && pw.len > 0 &&
         proto_native_verify_password(pw.ptr, pw.len, u.stage2) && known;
    OPENSSL_cleanse((void *)pkt->payload, pkt->len);
    return ok ? logged_in(c) : deny(c, pkt->len > 1);
}

/* Whether p (n bytes) names plugin. */
static bool is_plugin(const proto_str_t *p, const char *plugin)
{
    return p->len == strlen(plugin) && memcmp(p->ptr, plugin, p->len) == 0;
}

static bool is_our_db(const proxy_client_t *c, const char *p, size_t n)
{
    return strlen(c->px->database) == n && strncmp(c->px->database, p, n) == 0;
}

static void unknown_db(proxy_client_t *c, const char *p, size_t n)
{
    char msg[128];

    snprintf(msg, sizeof msg, "Unknown database '%.*s'", (int)(n < 64 ? n : 64), p);
    client_err(c, 1049, "42000", msg);
}

/* A login as user (the handshake's or COM_CHANGE_USER's): the schema must
 * be ours (and the connection TLS when require_tls is on); a response for
 * caching_sha2_password is taken as such, a client that answered for
 * another plugin is asked again for ours (plugin NULL: none named, so
 * native); else the response is checked. */
static int login(proxy_client_t *c, const proto_str_t *user, const proto_str_t *db,
                 const proto_str_t *plugin, const proto_str_t *resp)
{
    snprintf(c->user, sizeof c->user, "%.*s", (int)(user->len < 63 ? user->len : 63),
             user->ptr ? user->ptr : "");
    if (db->ptr != NULL && db->len > 0 && !is_our_db(c, db->ptr, db->len)) {
        unknown_db(c, db->ptr, db->len);
        c->state = CLIENT_CLOSING;
        return 0;
    }
    if (c->px->require_tls && c->tls == NULL) {
        client_err(c, 3159, "HY000", /* ER_SECURE_TRANSPORT_REQUIRED */
                   "Connections using insecure transport are prohibited: "
                   "dal-proxy has require_tls = on");
        c->state = CLIENT_CLOSING;
        return 0;
    }
    if (plugin != NULL && plugin->ptr != NULL && is_plugin(plugin, sha2_plugin))
        return sha2_login(c, resp);
    if (plugin != NULL && plugin->ptr != NULL && !is_plugin(plugin, native_plugin)) {
        proto_build_auth_switch(&c->out, &c->seq, native_plugin, c->scramble,
                                PROTO_SCRAMBLE_LEN);
        c->state = CLIENT_AUTH_SWITCH;
        return 0;
    }
    return authenticate(c, resp->ptr, resp->len);
}

/* After an SSLRequest: what follows on the socket is TLS.  The bytes that
 * came behind the request (the start of the client's TLS handshake) are
 * the session's first; the real handshake response comes through it. */
static int start_tls(proxy_client_t *c)
{
    size_t n;
    const uint8_t *rest = proto_reader_unread(&c->in, &n);

    if ((c->tls = tls_conn_new(c->px->tls)) == NULL || tls_conn_feed(c->tls, rest, n) != 0)
        return -1;
    proto_reader_discard(&c->in);
    return 0;
}

static int handshake_response(proxy_client_t *c, const proto_packet_t *pkt)
{
    proto_handshake_response_t r;
    int rc = proto_parse_handshake_response(pkt->payload, pkt->len, &r);

    c->seq = pkt->next_seq;
    if (rc == 0 && r.ssl_request && c->px->tls != NULL && c->tls == NULL)
        return start_tls(c);
    if (rc != 0 || r.ssl_request) {
        client_err(c, 1043, "08S01", r.ssl_request && c->tls == NULL
                                         ? "TLS is not enabled on this dal-proxy"
                                         : "Bad handshake");
        c->state = CLIENT_CLOSING;
        return 0;
    }
    c->caps = r.capabilities & server_caps;
    c->multi = (c->caps & PROTO_CLIENT_MULTI_STATEMENTS) != 0;
    c->charset = r.charset;
    return login(c, &r.user, &r.database,
                 (c->caps & PROTO_CLIENT_PLUGIN_AUTH) ? &r.auth_plugin : NULL, &r.auth_response);
}

/* ------------------------------------------------------------- commands */

bool client_word_is(const char **p, const char *w)
{
    size_t n = strlen(w);

    while (isspace((unsigned char)**p))
        (*p)++;
    if (strncasecmp(*p, w, n) != 0 || isalnum((unsigned char)(*p)[n]) || (*p)[n] == '_')
        return false;
    *p += n;
    return true;
}


/* Statements the proxy answers itself: what clients send at connect and
 * what names the proxy's own schema. */
static void one_value_typed(proxy_client_t *c, const char *name, const char *value,
                            bool number)
{
    proto_column_t col;
    const char *vals[1] = {value};

    memset(&col, 0, sizeof col);
    col.name = col.org_name = name;
    if (number) { /* BIGINT UNSIGNED NOT NULL, as CONNECTION_ID() is */
        col.charset = 63; /* binary */
        col.length = 21;
        col.type = PROTO_TYPE_LONGLONG;
        col.flags = PROTO_NOT_NULL_FLAG | PROTO_UNSIGNED_FLAG | PROTO_BINARY_FLAG;
    } else {
        col.charset = CHARSET_UTF8MB4;
        col.length = 256;
        col.type = PROTO_TYPE_VAR_STRING;
    }
    proto_build_columns(&c->out, &c->seq, (uint32_t)c->caps, &col, 1, client_status(c));
    proto_build_text_row(&c->out, &c->seq, 1, vals, NULL);
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, client_status(c));
}

static void one_value(proxy_client_t *c, const char *name, const char *value)
{
    one_value_typed(c, name, value, false);
}

static bool local_answer(proxy_client_t *c, const char *sql)
{
    const char *p = sql;

    if (client_word_is(&p, "SELECT")) {
        const char *q = p;
        if (client_word_is(&q, "@@version_comment")) {
            one_value(c, "@@version_comment", "dal-proxy");
            return true;
        }
        q = p;
        if (client_word_is(&q, "CONNECTION_ID()")) {
            char id[16];
            snprintf(id, sizeof id, "%u", c->id);
            one_value_typed(c, "CONNECTION_ID()", id, true);
            return true;
        }
        q = p;
        if (client_word_is(&q, "DATABASE()") || client_word_is(&q, "SCHEMA()")) {
            one_value(c, "DATABASE()", c->px->database);
            return true;
        }
        return false;
    }
    if (kill_statement(c, sql))
        return true;
    p = sql;
    if (client_word_is(&p, "SHOW") && client_word_is(&p, "DATABASES")) {
        one_value(c, "Database", c->px->database);
        return true;
    }
    return schema_show_tables(c, sql) || schema_describe(c, sql);
}

void client_column(const dal_result_t *r, size_t i, proto_column_t *col)
{
    dal_column_info_t ci;

    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    memset(col, 0, sizeof *col);
    if (dal_result_column_info(r, i, &ci) != 0) {
        col->name = col->org_name = dal_result_column_name(r, i);
        col->charset = CHARSET_UTF8MB4;
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
}

/* A CALL's results after the first (dal_result_next_set) follow it,
 * flagged SERVER_MORE_RESULTS_EXISTS, to a client that takes several; the
 * first error ends them, as on a server. */
void client_result(proxy_client_t *c, dal_result_t *r, bool binary)
{
    uint64_t multi = binary ? PROTO_CLIENT_PS_MULTI_RESULTS : PROTO_CLIENT_MULTI_RESULTS;
    bool several = (c->caps & multi) != 0, more = c->more, failed = c->failed;

    c->failed = false;
    for (; r != NULL && !c->failed; r = several ? dal_result_next_set(r) : NULL) {
        c->more = more || (several && dal_result_next_set(r) != NULL);
        client_result_map(c, r, binary, NULL, NULL);
    }
    c->more = more;
    c->failed = c->failed || failed;
}

void client_result_map(proxy_client_t *c, dal_result_t *r, bool binary, client_map_fn map,
                       void *user)
{
    size_t n = dal_result_column_count(r), i;
    proto_column_t *cols;
    const char **vals;
    size_t *lens;
    dal_error_t err;
    int rc;

    diag_take(c, r);
    if (n == 0) {
        client_ok_info(c, dal_result_affected_rows(r), dal_result_insert_id(r),
                       dal_result_warning_count(r), dal_result_info(r));
        return;
    }
    cols = calloc(n, sizeof *cols);
    vals = calloc(n, sizeof *vals);
    lens = calloc(n, sizeof *lens);
    if (cols == NULL || vals == NULL || lens == NULL) {
        client_err(c, 1037, "HY001", "dal-proxy: out of memory");
        goto done;
    }
    for (i = 0; i < n; i++)
        client_column(r, i, &cols[i]);
    proto_build_columns(&c->out, &c->seq, (uint32_t)c->caps, cols, n, client_status(c));
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
        client_err(c, 1105, "HY000", "dal-proxy: a value does not fit its column's binary type");
    else if (rc < 0)
        client_dal_error(c, &err);  /* a node failed mid-stream: the client sees the error */
    else
        proto_build_end(&c->out, &c->seq, (uint32_t)c->caps,
                        (uint16_t)dal_result_warning_count(r), client_status(c));
done:
    free(cols);
    free(vals);
    free(lens);
}

bool client_only_comments(const char *sql)
{
    const char *p = sql;

    for (;;) {
        while (isspace((unsigned char)*p) || *p == ';')
            p++;
        if (p[0] == '/' && p[1] == '*' && p[2] != '!' && p[2] != 'M' && strstr(p + 2, "*/"))
            p = strstr(p + 2, "*/") + 2;
        else if (*p == '#' || (p[0] == '-' && p[1] == '-' && isspace((unsigned char)p[2])))
            p += strcspn(p, "\n");
        else
            return *p == '\0';
    }
}

/* sql (len bytes, NUL-terminated, with no NUL outside quotes) is what
 * the servers get; view is the same statement as a server reads it
 * (executable comments opened), in which the proxy finds the statements it
 * answers itself. */
static void run_query(proxy_client_t *c, const char *sql, size_t len, const char *view)
{
    dal_result_t *r = NULL;
    dal_error_t err;

    if (diag_statement(c, view))
        return;
    /* as a server: nothing is an error, comments alone are done */
    if (sql[strspn(sql, " \t\r\n\f\v")] == '\0' && strlen(sql) == len) {
        client_err(c, 1065, "42000", "Query was empty");
        return;
    }
    if (client_only_comments(sql) && strlen(sql) == len) {
        send_ok(c, 0, 0);
        return;
    }
    if (local_answer(c, view) || client_session_set(c, view))
        return;
    if (dal_session_query_len(c->session, NULL, sql, len, NULL, 0, &r, &err) != 0) {
        client_dal_error(c, &err);
        return;
    }
    client_result(c, r, false);
    dal_result_free(r);
}

char *client_text_copy(const char *text, size_t len)
{
    char *p = malloc(len + 1);

    if (p != NULL && len > 0)
        memcpy(p, text, len);
    if (p != NULL)
        p[len] = '\0';
    return p;
}

/* One statement of a COM_QUERY.  A NUL byte outside quotes is a syntax
 * error, as on a server, never the statement's end.  The library gets a
 * copy with its length; when it has a C-style comment, a second copy is
 * read as the server reads it. */
static void run_piece(proxy_client_t *c, const char *text, size_t len)
{
    char msg[96], *sql, *view;
    size_t at = proto_sql_stray_nul(text, &len);

    if (at != SIZE_MAX) {
        snprintf(msg, sizeof msg,
                 "You have an error in your SQL syntax: a NUL byte outside quotes at offset %zu",
                 at);
        client_err(c, 1064, "42000", msg);
        return;
    }
    view = sql = client_text_copy(text, len);
    if (sql != NULL && memmem(sql, len, "/*", 2) != NULL && (view = client_text_copy(text, len)) != NULL &&
        !proto_sql_unwrap(view, len, PROTO_SERVER_VERSION_ID)) {
        free(view);
        view = sql;
    }
    if (sql == NULL || view == NULL)
        client_err(c, 1037, "HY001", "dal-proxy: out of memory");
    else
        run_query(c, sql, len, view);
    if (view != sql)
        free(view);
    free(sql);
}

/* COM_QUERY.  With multi-statements on, each statement's result follows
 * the one before, flagged SERVER_MORE_RESULTS_EXISTS, and the first error
 * ends the list, as a server does. */
static void run_text(proxy_client_t *c, const char *text, size_t len)
{
    size_t n, next;

    if (!c->multi || proto_sql_blank(text, len)) {
        run_piece(c, text, len);
        return;
    }
    for (;;) {
        n = proto_split_statement(text, len, &next);
        c->more = !proto_sql_blank(text + next, len - next);
        c->failed = false;
        if (!proto_sql_blank(text, n))
            run_piece(c, text, n);
        if (!c->more || c->failed || c->state == CLIENT_CLOSING)
            break;
        text += next;
        len -= next;
    }
    c->more = false;
}

void client_init_db(proxy_client_t *c, const proto_str_t *db)
{
    if (is_our_db(c, db->ptr, db->len))
        send_ok(c, 0, 0);
    else
        unknown_db(c, db->ptr, db->len);
}

/* COM_CHANGE_USER: the session and its statements end; the new user
 * authenticates against the connection's scramble (a client that answered
 * for another plugin is switched to ours), and a failure closes the
 * connection, as on a server. */
static void change_user(proxy_client_t *c, const proto_change_user_t *cu)
{
    stmt_free_all(c);
    set_session(c, NULL);
    (void)login(c, &cu->user, &cu->database, &cu->auth_plugin, &cu->auth_response);
}

static void run_command(proxy_client_t *c)
{
    proto_cmd_t cmd;
    int rc = proto_parse_command(c->cmd, c->cmd_len, (uint32_t)c->caps, &cmd);

    if (rc != 0) {
        client_err(c, 1047, "08S01", "Unknown command");
        return;
    }
    switch (cmd.cmd) {
    case PROTO_COM_QUERY:
        run_text(c, cmd.u.text.ptr ? cmd.u.text.ptr : "", cmd.u.text.len);
        return;
    case PROTO_COM_STMT_PREPARE:
        stmt_prepare(c, cmd.u.text.ptr, cmd.u.text.len);
        return;
    case PROTO_COM_FIELD_LIST:
        schema_field_list(c, &cmd.u.field_list.table, &cmd.u.field_list.wildcard);
        return;
    case PROTO_COM_STMT_EXECUTE:
        stmt_execute(c, c->cmd, c->cmd_len);
        return;
    case PROTO_COM_CHANGE_USER:
        change_user(c, &cmd.u.change_user);
        return;
    case PROTO_COM_RESET_CONNECTION: {
        /* the session's transaction, variables and pinned connections go */
        dal_error_t err;
        stmt_free_all(c);
        if (dal_session_reset(c->session, &err) != 0)
            client_dal_error(c, &err);
        else
            send_ok(c, 0, 0);
        return;
    }
    default:
        client_err(c, 1295, "HY000", "This command is not supported by dal-proxy yet");
        return;
    }
}

void client_run(proxy_client_t *c)
{
    atomic_store(&c->running, true);
    run_command(c);
    atomic_store(&c->running, false);
}

/* A command the I/O thread answers at once (no SQL), or 1: a worker's. */
static int command(proxy_client_t *c, const proto_packet_t *pkt)
{
    proto_cmd_t cmd;

    c->seq = pkt->next_seq;
    if (pkt->len == 0)
        return -1;
    switch (pkt->payload[0]) {
    case PROTO_COM_QUIT:
        return -1;
    case PROTO_COM_PING:
        send_ok(c, 0, 0);
        return 0;
    case PROTO_COM_INIT_DB:
        if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)c->caps, &cmd) != 0)
            client_err(c, 1047, "08S01", "Malformed COM_INIT_DB");
        else
            client_init_db(c, &cmd.u.text);
        return 0;
    case PROTO_COM_SET_OPTION:
        if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)c->caps, &cmd) != 0 ||
            cmd.u.option > PROTO_OPTION_MULTI_STATEMENTS_OFF) {
            client_err(c, 1047, "08S01", "Unknown COM_SET_OPTION");
            return 0;
        }
        c->multi = cmd.u.option == PROTO_OPTION_MULTI_STATEMENTS_ON;
        proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, client_status(c));
        return 0;
    case PROTO_COM_STMT_SEND_LONG_DATA:
    case PROTO_COM_STMT_CLOSE:
    case PROTO_COM_STMT_RESET:
        if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)c->caps, &cmd) != 0)
            client_err(c, 1210, "HY000", "Incorrect arguments to a statement command");
        else if (cmd.cmd == PROTO_COM_STMT_SEND_LONG_DATA)
            stmt_long_data(c, cmd.u.long_data.stmt_id, cmd.u.long_data.param_id,
                           &cmd.u.long_data.data);
        else if (cmd.cmd == PROTO_COM_STMT_CLOSE)
            stmt_close(c, cmd.u.stmt_id);
        else
            stmt_reset(c, cmd.u.stmt_id);
        return 0;
    default:
        free(c->cmd);
        if ((c->cmd = malloc(pkt->len)) == NULL)
            return -1;
        memcpy(c->cmd, pkt->payload, pkt->len);
        c->cmd_len = pkt->len;
        return 1;
    }
}

int client_input(proxy_client_t *c)
{
    proto_packet_t pkt;
    int rc;

    if (c->hold_until != 0)
        return 0;  /* a login's reply is held: what follows it waits too */
    while (c->state != CLIENT_CLOSING && (rc = proto_reader_next(&c->in, &pkt)) == 1) {
        switch (c->state) {
        case CLIENT_HANDSHAKE:
            rc = handshake_response(c, &pkt);
            break;
        case CLIENT_AUTH_SWITCH:
            c->seq = pkt.next_seq;
            rc = authenticate(c, pkt.payload, pkt.len);
            break;
        case CLIENT_SHA2_SWITCH: {
            proto_str_t resp = {(const char *)pkt.payload, pkt.len};
            c->seq = pkt.next_seq;
            rc = sha2_check(c, &resp);
            break;
        }
        case CLIENT_SHA2_FULL:
            rc = sha2_password(c, &pkt);
            break;
        default:
            rc = command(c, &pkt);
            break;
        }
        if (rc != 0)
            return rc;
    }
    if (c->state == CLIENT_CLOSING)
        return 0;
    if (rc < 0) {
        /* malformed or oversized: say why, then close this client only */
        client_err(c, 1153, "08S01", proto_reader_message(&c->in)); /* ER_NET_PACKET_TOO_LARGE */
        c->state = CLIENT_CLOSING;
    }
    return 0;
}
