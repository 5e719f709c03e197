/*
 * auth.c -- a client's login: the handshake, its response (and TLS when
 * the client asks for it), the mysql_native_password and
 * caching_sha2_password checks against the [proxy user] accounts, the
 * session opened once the password is checked, and COM_CHANGE_USER.
 * client.c passes it the packets of the states before CLIENT_COMMAND.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "proxy.h"
#include "reply.h"

/* What dal-proxy offers; a client gets the intersection with its own.
 * These are a MariaDB 10.11 server's flags without COMPRESS, which the
 * proxy does not speak: CLIENT_MYSQL (bit 0) clear says "MariaDB", as a
 * MariaDB server does, so that MariaDB's extended capabilities
 * (EXTENDED_METADATA) are offered and read. */
static const uint64_t server_caps =
    PROTO_CLIENT_FOUND_ROWS | PROTO_CLIENT_LONG_FLAG | PROTO_CLIENT_CONNECT_WITH_DB |
    PROTO_CLIENT_NO_SCHEMA | PROTO_CLIENT_ODBC | PROTO_CLIENT_LOCAL_FILES |
    PROTO_CLIENT_IGNORE_SPACE | PROTO_CLIENT_PROTOCOL_41 | PROTO_CLIENT_INTERACTIVE |
    PROTO_CLIENT_IGNORE_SIGPIPE | PROTO_CLIENT_TRANSACTIONS | PROTO_CLIENT_RESERVED |
    PROTO_CLIENT_SECURE_CONNECTION | PROTO_CLIENT_MULTI_STATEMENTS | PROTO_CLIENT_MULTI_RESULTS |
    PROTO_CLIENT_PS_MULTI_RESULTS | PROTO_CLIENT_PLUGIN_AUTH | PROTO_CLIENT_CONNECT_ATTRS |
    PROTO_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | PROTO_CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS |
    PROTO_CLIENT_SESSION_TRACK | PROTO_CLIENT_DEPRECATE_EOF | PROTO_CLIENT_REMEMBER_OPTIONS |
    PROTO_MARIADB_CLIENT_EXTENDED_METADATA;

static const char native_plugin[] = "mysql_native_password";
static const char sha2_plugin[] = "caching_sha2_password";

int auth_handshake(proxy_client_t *c)
{
    proto_handshake_t h;
    char version[160];

    if (proto_scramble_generate(c->scramble) != 0)
        return -1;
    memset(&h, 0, sizeof h);
    ident_handshake_version(c->px, version, sizeof version);
    h.server_version = version;
    h.connection_id = c->id;
    h.scramble = c->scramble;
    h.capabilities = server_caps | (c->px->tls != NULL ? PROTO_CLIENT_SSL : 0);
    h.charset = PROXY_CHARSET_UTF8MB4;
    h.status = reply_status(c); /* no session yet: a new one's */
    h.auth_plugin = native_plugin;
    proto_build_handshake(&c->out, &c->seq, &h);
    c->state = CLIENT_HANDSHAKE;
    return 0;
}

/* The account of user, or a fixed one that no password matches when
 * there is no such user: the checks then run the same and fail, so
 * neither the reply nor its timing tells which.  Like a user with a
 * password, nobody has a SHA-256 stage 2 (the fast path answers). */
static proxy_user_t find_user(const proxy_client_t *c, bool *known)
{
    static const proxy_user_t nobody = {
        .stage2 = {0x5a}, .has_sha2 = true, .sha2 = {0x5a}};
    proxy_user_t u;

    *known = users_find(c->px, c->user, c->peer, &u);
    return *known ? u : nobody;
}

/* Does the 20-byte native response match the account's password? */
static bool native_ok(const proxy_client_t *c, const void *resp, size_t len)
{
    bool known;
    const proxy_user_t u = find_user(c, &known);

    if (u.no_password)
        return known && len == 0;
    return proto_native_verify(c->scramble, resp, len, u.stage2) && known;
}

/* The outcome of a password check, for the guard: the reply (OK or ERR)
 * waits what the address earned by its failures before this one, and the
 * client is held meanwhile (server.c), so no thread sleeps. */
static void settle(proxy_client_t *c, bool ok)
{
    uint32_t ms = guard_delay_ms(c->px->guard, c->peer);

    if (ms > 0)
        c->hold_until = guard_deadline_ms(ms);
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
    reply_err(c, 1045, "28000", msg);
    c->state = CLIENT_CLOSING;
    proxy_count(c->px, "auth_failed", atomic_fetch_add(&c->px->auth_failed, 1) + 1);
    return 0;
}

/* The character set of a handshake's collation id when it is not
 * utf8mb4 (what dal's connections use unless their URL says otherwise),
 * else NULL: the ids of the character sets a client commonly asks for
 * (those dal refuses never get here: refused_charset). */
static const char *handshake_charset(uint8_t id)
{
    static const struct { uint8_t id; const char *name; } sets[] = {
        {5, "latin1"}, {7, "koi8r"}, {8, "latin1"}, {9, "latin2"}, {11, "ascii"},
        {15, "latin1"}, {19, "euckr"}, {24, "gb2312"}, {26, "cp1250"},
        {31, "latin1"}, {33, "utf8mb3"}, {47, "latin1"}, {48, "latin1"},
        {49, "latin1"}, {51, "cp1251"}, {57, "cp1256"}, {63, "binary"}, {65, "ascii"},
        {83, "utf8mb3"}, {94, "latin1"},
    };
    size_t i;

    if (id >= 192 && id <= 215)  /* utf8mb3's UCA collations */
        return "utf8mb3";
    for (i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (sets[i].id == id)
            return sets[i].name;
    return NULL;
}

/* The handshake's collation itself, when it is not utf8mb4's default:
 * `utf8mb4_unicode_ci` must compare as it does on a server, and result
 * columns carry its number as a server's do.  As SET NAMES cs COLLATE co,
 * which sets the results' collation too (collation_connection alone
 * leaves the columns' at the character set's default).  A collation the
 * servers do not know (MySQL 8's 255) is refused by them and leaves the
 * character set's default, as a server does. */
static void keep_collation(proxy_client_t *c, dal_session_t *s)
{
    const char *cs = NULL, *name;
    char value[160];
    dal_error_t err;

    if (c->charset == PROXY_CHARSET_UTF8MB4 || (name = dal_collation_name(c->charset, &cs)) == NULL)
        return;
    snprintf(value, sizeof value, "%s COLLATE %s", cs, name);
    (void)dal_session_set_var(s, "names", value, &err);
}

int auth_session_charset(proxy_client_t *c, dal_error_t *err)
{
    if (handshake_charset(c->charset) != NULL &&
        dal_session_set_var(c->session, "names", handshake_charset(c->charset), err) != 0)
        return err->code;
    keep_collation(c, c->session);
    return 0;
}

/* The password checked: open the session in the handshake's character
 * set (as SET NAMES) and collation, and say OK. */
static int logged_in(proxy_client_t *c)
{
    dal_error_t err;
    dal_session_t *s = NULL;
    bool db = false;

    settle(c, true);
    if (dal_session_open(c->px->dal, &s, &err) != 0 || local_infile_attach(c, s, &err) != 0 ||
        (handshake_charset(c->charset) != NULL &&
         dal_session_set_var(s, "names", handshake_charset(c->charset), &err) != 0) ||
        (c->schema[0] != '\0' && (db = true) && dal_session_use_schema(s, c->schema, &err) != 0)) {
        dal_session_close(s);
        if (db && (err.mysql_errno == 0 || err.mysql_errno == 1049))
            reply_unknown_db(c, c->schema, strlen(c->schema));  /* as a server words it */
        else
            reply_dal_error(c, &err);
        c->state = CLIENT_CLOSING;
        return 0;
    }
    keep_collation(c, s);
    dal_session_keep_warnings(s, 1);  /* for SHOW WARNINGS (diag.c) */
    dal_session_keep_sets(s, 1);      /* a CALL's sets, then its error (reply_result) */
    kill_set_session(c, s);
    c->wait_timeout_s = proxy_idle_default(c);
    c->interactive_pending = c->wait_timeout_s != c->px->wait_timeout_s;
    c->state = CLIENT_COMMAND;
    c->logged_in = true;
    processlist_end(c);  /* Sleep, after COM_CHANGE_USER's authentication */
    proto_reader_limit(&c->in, c->px->max_allowed_packet, "max_allowed_packet");
    reply_ok(c, 0, 0, 0);
    return 0;
}

/* Check the 20-byte mysql_native_password response. */
int auth_native(proxy_client_t *c, const void *resp, size_t len)
{
    /* a backend account created or changed since the last read: once more */
    if (!native_ok(c, resp, len) && !(users_reread(c->px) && native_ok(c, resp, len)))
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
int auth_sha2_scramble(proxy_client_t *c, const proto_str_t *resp)
{
    static const uint8_t fast_ok = PROTO_SHA2_FAST_AUTH_SUCCESS;
    static const uint8_t full = PROTO_SHA2_PERFORM_FULL_AUTH;
    bool known;
    const proxy_user_t u = find_user(c, &known);

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
        return auth_sha2_scramble(c, resp);
    proto_build_auth_switch(&c->out, &c->seq, sha2_plugin, c->scramble, PROTO_SCRAMBLE_LEN);
    c->state = CLIENT_SHA2_SWITCH;
    return 0;
}

/* Does the cleartext password match the account's? */
static bool password_ok(const proxy_client_t *c, const proto_str_t *pw)
{
    bool known;
    const proxy_user_t u = find_user(c, &known);

    return !u.no_password && proto_native_verify_password(pw->ptr, pw->len, u.stage2) && known;
}

/* The cleartext password of a full caching_sha2_password authentication
 * (only ever asked for over TLS), checked against the native stage 2 and
 * wiped from the reader's buffer. */
int auth_sha2_password(proxy_client_t *c, const proto_packet_t *pkt)
{
    proto_str_t pw;
    bool ok;

    c->seq = pkt->next_seq;
    ok = proto_parse_cleartext_password(pkt->payload, pkt->len, &pw) == 0 && pw.len > 0 &&
         (password_ok(c, &pw) || (users_reread(c->px) && password_ok(c, &pw)));
    OPENSSL_cleanse((void *)pkt->payload, pkt->len);
    return ok ? logged_in(c) : deny(c, pkt->len > 1);
}

/* Whether p (n bytes) names plugin. */
static bool is_plugin(const proto_str_t *p, const char *plugin)
{
    return p->len == strlen(plugin) && memcmp(p->ptr, plugin, p->len) == 0;
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
    pthread_mutex_lock(&c->info_mu);  /* SHOW PROCESSLIST's db */
    c->has_db = false;
    c->schema[0] = '\0';
    pthread_mutex_unlock(&c->info_mu);
    if (db->ptr != NULL && db->len > 0 && !setvar_choose_db(c, db->ptr, db->len)) {
        reply_unknown_db(c, db->ptr, db->len);
        c->state = CLIENT_CLOSING;
        return 0;
    }
    if (c->px->require_tls && c->tls == NULL) {
        reply_err(c, 3159, "HY000", /* ER_SECURE_TRANSPORT_REQUIRED */
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
    return auth_native(c, resp->ptr, resp->len);
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

/* A login in a character set dal refuses as a client's
 * (dal_client_charset_check): an error, and the connection closes, rather
 * than a session in another character set than the client writes. */
static bool refused_charset(proxy_client_t *c, unsigned int collation)
{
    const char *cs = NULL;
    dal_error_t err;

    if (!dal_collation_refused(collation) || dal_collation_name(collation, &cs) == NULL ||
        dal_client_charset_check("names", cs, &err) == 0)
        return false;
    reply_dal_error(c, &err);
    c->state = CLIENT_CLOSING;
    return true;
}

int auth_handshake_response(proxy_client_t *c, const proto_packet_t *pkt)
{
    proto_handshake_response_t r;
    int rc = proto_parse_handshake_response(pkt->payload, pkt->len, &r);

    c->seq = pkt->next_seq;
    if (rc == 0 && r.ssl_request && c->px->tls != NULL && c->tls == NULL)
        return start_tls(c);
    if (rc != 0 || r.ssl_request) {
        reply_err(c, 1043, "08S01", r.ssl_request && c->tls == NULL
                                         ? "TLS is not enabled on this dal-proxy"
                                         : "Bad handshake");
        c->state = CLIENT_CLOSING;
        return 0;
    }
    c->caps = r.capabilities & server_caps;
    c->multi = (c->caps & PROTO_CLIENT_MULTI_STATEMENTS) != 0;
    c->charset = r.charset;
    if (refused_charset(c, r.charset))
        return 0;
    return login(c, &r.user, &r.database,
                 (c->caps & PROTO_CLIENT_PLUGIN_AUTH) ? &r.auth_plugin : NULL, &r.auth_response);
}

/* COM_CHANGE_USER: the session and its statements end; the new user
 * authenticates against the connection's scramble (a client that answered
 * for another plugin is switched to ours), and a failure closes the
 * connection, as on a server. */
void auth_change_user(proxy_client_t *c, const proto_change_user_t *cu)
{
    ps_free_all(c);
    kill_set_session(c, NULL);
    if (refused_charset(c, cu->charset))
        return;
    (void)login(c, &cu->user, &cu->database, &cu->auth_plugin, &cu->auth_response);
}
