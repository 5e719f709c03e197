/*
 * client.c -- one client connection's state machine: the packets of its
 * login go to auth.c, then each command is dispatched to what answers it
 * (the client's dal session, or the proxy itself), which replies through
 * reply.c.  See proxy.h for who runs what.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "proxy.h"
#include "recognise.h"
#include "reply.h"
#include "text.h"

proxy_client_t *client_new(proxy_t *px, struct proxy_io *io, int fd, const char *peer)
{
    proxy_client_t *c = calloc(1, sizeof *c);

    if (c == NULL) {
        close(fd);
        return NULL;
    }
    pthread_mutex_init(&c->session_mu, NULL);
    pthread_mutex_init(&c->info_mu, NULL);
    c->since_ms = guard_now_ms();
    c->px = px;
    c->io = io;
    c->fd = fd;
    c->id = atomic_fetch_add(&px->next_id, 1) + 1;
    kill_register(c);
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    proto_reader_init(&c->in, px->max_allowed_packet);
    proto_reader_limit(&c->in, PROXY_LOGIN_PACKET, PROXY_LOGIN_PACKET_NAME);
    if (auth_handshake(c) != 0) {
        client_free(c);
        return NULL;
    }
    return c;
}

void client_free(proxy_client_t *c)
{
    if (c == NULL)
        return;
    /* as a server counts: a connection that never logged in, and one
     * killed or gone without COM_QUIT (end_connection) */
    if (!c->logged_in)
        atomic_fetch_add(&c->px->aborted_connects, 1);
    else if (!c->quit || atomic_load(&c->killed))
        atomic_fetch_add(&c->px->aborted_clients, 1);
    ps_free_all(c);
    diag_free(c);
    /* the session's state on the servers (a GET_LOCK's lock, a temporary
     * table) goes before the client leaves the process list, as a
     * server's thread releases its locks before it leaves its list: a
     * client that waits for the list to shrink then finds them gone */
    kill_set_session(c, NULL);
    kill_unregister(c);
    pthread_mutex_destroy(&c->session_mu);
    pthread_mutex_destroy(&c->info_mu);
    proto_reader_free(&c->in);
    proto_buf_free(&c->out);
    tls_conn_free(c->tls);
    proto_buf_free(&c->wire);
    free(c->cmd);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

/* Only blanks and `;` from p on. */
static bool at_end(const char *p)
{
    return p[strspn(p, " \t\r\n\f\v;")] == '\0';
}

/* What follows a call at p -- nothing, or `[AS] alias` (bare or in
 * backquotes) -- up to the statement's end: true and the column's name in
 * col (the alias, else the call as written, call..p); false when anything
 * else follows. */
static bool call_alone(const char *call, const char *p, char *col, size_t size)
{
    const char *q = p;
    size_t n;

    snprintf(col, size, "%.*s", (int)(p - call), call);
    if (at_end(p))
        return true;
    (void)text_word_is(&q, "AS");
    while (isspace((unsigned char)*q))
        q++;
    if (*q == '`') {
        n = strcspn(q + 1, "`");
        if (q[1 + n] != '`' || n == 0)
            return false;
        snprintf(col, size, "%.*s", (int)n, q + 1);
        return at_end(q + n + 2);
    }
    for (n = 0; isalnum((unsigned char)q[n]) || q[n] == '_' || q[n] == '$'; n++)
        ;
    if (n == 0)
        return false;
    snprintf(col, size, "%.*s", (int)n, q);
    return at_end(q + n);
}

/* `SELECT @@[session.|local.]in_transaction` alone, the text after SELECT
 * at p: the session's transaction (the servers' connections are not in it
 * until a statement needs one), named as written. */
static bool in_transaction(proxy_client_t *c, const char *p)
{
    const char *name;
    char col[72];

    while (isspace((unsigned char)*p))
        p++;
    name = p;
    if (strncmp(p, "@@", 2) != 0)
        return false;
    p += 2;
    if (strncasecmp(p, "session.", 8) == 0 || strncasecmp(p, "local.", 6) == 0)
        p = strchr(p, '.') + 1;
    if (strncasecmp(p, "in_transaction", 14) != 0 || isalnum((unsigned char)p[14]) ||
        p[14] == '_' || !call_alone(name, p + 14, col, sizeof col))
        return false;
    reply_value(c, col, (reply_status(c) & PROTO_SERVER_STATUS_IN_TRANS) ? "1" : "0",
                REPLY_FLAG);
    return true;
}

/* SELECT of what the proxy answers for the servers: CONNECTION_ID(),
 * DATABASE(), @@in_transaction alone; p is past the SELECT. */
static bool select_answer(proxy_client_t *c, const char *p)
{
    const char *q;
    char col[72];  /* the column is named as the client wrote it */

    while (isspace((unsigned char)*p))
        p++;
    q = p;
    if (text_word_is(&q, "CONNECTION_ID()") && call_alone(p, q, col, sizeof col)) {
        char id[16];
        snprintf(id, sizeof id, "%u", c->id);
        reply_value(c, col, id, REPLY_CONNECTION_ID);
        return true;
    }
    q = p;
    if ((text_word_is(&q, "DATABASE()") || text_word_is(&q, "SCHEMA()")) &&
        call_alone(p, q, col, sizeof col)) {
        /* NULL until the client chooses one, as on a server */
        reply_value(c, col, c->has_db ? setvar_db_name(c) : NULL, REPLY_NAME);
        return true;
    }
    return in_transaction(c, p);
}

/* Statements the proxy answers itself by their first word: what clients
 * send at connect and what names the proxy's own schema. */
static bool local_answer(proxy_client_t *c, text_lead_t lead, const char *past,
                         const char *sql, size_t len)
{
    const char *p = past;

    switch (lead) {
    case TEXT_SELECT:
        return select_answer(c, p);
    case TEXT_KILL:
        return kill_statement(c, sql, len);
    case TEXT_SHOW:
        if (diag_statement(c, sql, len))
            return true;
        if (text_word_is(&p, "DATABASES"))
            return schema_show_databases(c, sql);
        return schema_show_tables(c, sql, len) || schema_describe(c, sql, len);
    case TEXT_DESCRIBE:
        return schema_describe(c, sql, len);
    default:
        return false;
    }
}

/* What the proxy answers itself, lead being sql's text_lead and past
 * just after its first word: the statements of a first word, then the
 * reads of the views it answers wherever they appear. */
static bool answer(proxy_client_t *c, text_lead_t lead, const char *past, const char *sql,
                   size_t len)
{
    return local_answer(c, lead, past, sql, len) || processlist_statement(c, lead, sql, len) ||
           infoschema_query(c, sql, len);
}

bool client_answer(proxy_client_t *c, const char *sql, size_t len)
{
    const char *past = sql;
    text_lead_t lead = text_lead(sql, &past);

    return answer(c, lead, past, sql, len);
}

/* Whether text holds a C-style comment opener (memchr finds the '/'
 * candidates faster than memmem a two-byte needle). */
static bool has_c_comment(const char *text, size_t len)
{
    const char *p = text, *end = text + len;

    while ((p = memchr(p, '/', (size_t)(end - p))) != NULL && p + 1 < end) {
        if (p[1] == '*')
            return true;
        p++;
    }
    return false;
}

/* A statement that would change the datasource's account, which every
 * client's statements share (recognise_account_change), is refused as a
 * server refuses what an account may not do; view is the statement as a
 * server reads it. */
static bool refuse_account_change(proxy_client_t *c, const char *view)
{
    if (!recognise_account_change(view, reply_no_backslash(c)))
        return false;
    reply_err(c, 1227, "42000",
              "Access denied: dal-proxy runs every client's statements as its datasource's "
              "account, whose password and default role SET PASSWORD, SET DEFAULT ROLE and "
              "ALTER USER would change for all clients; a proxy user's password is in "
              "dal-proxy's configuration");
    return true;
}

bool client_only_comments(proxy_client_t *c, const char *sql, size_t len)
{
    /* the second: executable comments of a version the servers skip */
    return strlen(sql) == len &&
           (text_only_comments(sql) || proto_sql_blank(sql, len, ident_version_id(c->px)));
}

bool client_refuse_account_change(proxy_client_t *c, const char *sql, size_t len)
{
    char *view = NULL;
    bool refused;

    if (has_c_comment(sql, len) && (view = text_copy(sql, len)) != NULL)
        (void)proto_sql_unwrap(view, len, ident_version_id(c->px), reply_no_backslash(c));
    refused = refuse_account_change(c, view != NULL ? view : sql);
    free(view);
    return refused;
}

/* sql (len bytes, NUL-terminated, with no NUL outside quotes) is what
 * the servers get; view is the same statement as a server reads it
 * (executable comments opened), in which the proxy finds the statements it
 * answers itself. */
static void run_query(proxy_client_t *c, const char *sql, size_t len, const char *view)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    text_lead_t lead;
    const char *past = view;
    int rc;

    /* as a server: nothing is an error, comments alone are done (a text
     * with a first word is neither) */
    lead = text_lead(view, &past);
    if (lead == TEXT_OTHER && sql[strspn(sql, " \t\r\n\f\v")] == '\0' && strlen(sql) == len) {
        reply_err(c, 1065, "42000", "Query was empty");
        return;
    }
    if (lead == TEXT_OTHER && client_only_comments(c, sql, len)) {
        reply_ok(c, 0, 0, 0);
        return;
    }
    if ((lead == TEXT_SET || lead == TEXT_OTHER) && refuse_account_change(c, view))
        return;
    if (answer(c, lead, past, view, len) ||
        ((lead == TEXT_SET || lead == TEXT_USE) && setvar_statement(c, view, len)))
        return;
    /* a plain read's packets go to the client as the server sent them */
    dal_session_set_relay(c->session, reply_relay(c, false), c);
    rc = dal_session_query_len(c->session, NULL, sql, len, NULL, 0, &r, &err);
    dal_session_set_relay(c->session, NULL, NULL);
    if (rc != 0) {
        /* a text dal cannot read: the server's syntax error, if it is one */
        if (err.code == DAL_ESQL)
            dal_session_syntax_error(c->session, sql, len, &err);
        reply_dal_error(c, &err);
        if (err.code == DAL_ESERVER)
            diag_failed(c);
        return;
    }
    setvar_db_dropped(c);
    reply_result(c, r, false);
    dal_result_free(r);
}

/* text[0..len) NUL-terminated in room (cap bytes) when it fits, else in
 * an allocation (NULL when out of memory). */
static char *piece_copy(const char *text, size_t len, char *room, size_t cap)
{
    if (len >= cap)
        return text_copy(text, len);
    memcpy(room, text, len);
    room[len] = '\0';
    return room;
}

/* One statement of a COM_QUERY, read with backslash escapes unless
 * no_backslash.  A NUL byte outside quotes is a syntax error, as on a
 * server, never the statement's end.  The library gets the statement
 * NUL-terminated with its length: in place when it ends the command (c->cmd
 * has a NUL after it), else a copy (on the stack when short: most are);
 * when it has a C-style comment, a second copy is read as the server reads
 * it. */
static void run_piece(proxy_client_t *c, const char *text, size_t len, bool no_backslash)
{
    char msg[96], room[512], *copy = NULL, *opened = NULL;
    const char *sql = text, *view;
    size_t at = proto_sql_stray_nul(text, &len, no_backslash);

    if (at != SIZE_MAX) {
        snprintf(msg, sizeof msg,
                 "You have an error in your SQL syntax: a NUL byte outside quotes at offset %zu",
                 at);
        reply_err(c, 1064, "42000", msg);
        return;
    }
    if (text + len != (const char *)c->cmd + c->cmd_len)
        sql = copy = piece_copy(text, len, room, sizeof room);
    view = sql;
    if (sql != NULL && has_c_comment(sql, len) && (view = opened = text_copy(text, len)) != NULL &&
        !proto_sql_unwrap(opened, len, ident_version_id(c->px), no_backslash))
        view = sql;  /* nothing to open */
    if (sql == NULL || view == NULL)
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
    else
        run_query(c, sql, len, view);
    free(opened);
    if (copy != room)
        free(copy);
}

/* COM_QUERY.  With multi-statements on, each statement's result follows
 * the one before, flagged SERVER_MORE_RESULTS_EXISTS, and the first error
 * ends the list, as a server does.  Each statement is read in the sql_mode
 * the ones before it left (a SET of it changes how the rest reads). */
static void run_text(proxy_client_t *c, const char *text, size_t len)
{
    size_t n, next;
    bool no_backslash;

    if (!c->multi || proto_sql_blank(text, len, ident_version_id(c->px))) {
        run_piece(c, text, len, reply_no_backslash(c));
        return;
    }
    for (;;) {
        no_backslash = reply_no_backslash(c);
        n = proto_split_statement(text, len, no_backslash, &next);
        c->more = !proto_sql_blank(text + next, len - next, ident_version_id(c->px));
        c->failed = false;
        if (!proto_sql_blank(text, n, ident_version_id(c->px)))
            run_piece(c, text, n, no_backslash);
        if (!c->more || c->failed || c->state == CLIENT_CLOSING || c->hung_up)
            break;
        text += next;
        len -= next;
    }
    c->more = false;
}

static void run_command(proxy_client_t *c)
{
    proto_cmd_t cmd;
    int rc = proto_parse_command(c->cmd, c->cmd_len, (uint32_t)c->caps, &cmd);

    if (rc != 0) {
        reply_err(c, 1047, "08S01", "Unknown command");
        return;
    }
    switch (cmd.cmd) {
    case PROTO_COM_QUERY:
        run_text(c, cmd.u.text.ptr ? cmd.u.text.ptr : "", cmd.u.text.len);
        return;
    case PROTO_COM_STMT_PREPARE:
        ps_prepare(c, cmd.u.text.ptr, cmd.u.text.len);
        return;
    case PROTO_COM_FIELD_LIST:
        schema_field_list(c, &cmd.u.field_list.table, &cmd.u.field_list.wildcard);
        return;
    case PROTO_COM_STMT_EXECUTE:
        ps_execute(c, c->cmd, c->cmd_len);
        return;
    case PROTO_COM_CHANGE_USER:
        auth_change_user(c, &cmd.u.change_user);
        return;
    case PROTO_COM_RESET_CONNECTION: {
        /* the session's transaction, variables and pinned connections go;
         * the handshake's character set and the idle timeout stay, as on a
         * server */
        dal_error_t err;
        ps_free_all(c);
        if (dal_session_reset(c->session, &err) != 0 || auth_session_charset(c, &err) != 0) {
            reply_dal_error(c, &err);
        } else {
            c->wait_timeout_s = proxy_idle_default(c);
            c->interactive_pending = c->wait_timeout_s != c->px->wait_timeout_s;
            reply_ok(c, 0, 0, 0);
        }
        return;
    }
    default:
        reply_err(c, 1295, "HY000", "This command is not supported by dal-proxy yet");
        return;
    }
}

void client_run(proxy_client_t *c)
{
    ident_refresh(c->px);  /* after a reload, the next handshakes name the new backends */
    atomic_store(&c->running, true);
    c->eof_pending = false;
    processlist_begin(c);
    if (c->interactive_pending)
        setvar_interactive(c);
    run_command(c);
    proxy_idle_note(c);
    processlist_end(c);
    atomic_store(&c->running, false);
    if (c->hung_up)
        c->state = CLIENT_CLOSING;  /* gone: what it sent after is not run */
}

/* Keep pkt's payload in c->cmd, with a NUL after it, for a worker: 1, or
 * -1 when out of memory.  A big packet's room in the reader goes at once:
 * kept until the client is idle, it would be a copy more while the command
 * runs. */
static int command_keep(proxy_client_t *c, const proto_packet_t *pkt)
{
    if (pkt->len >= c->cmd_cap) {
        size_t cap = pkt->len < 256 ? 256 : pkt->len + 1;
        free(c->cmd);
        c->cmd_len = c->cmd_cap = 0;
        if ((c->cmd = malloc(cap)) == NULL)
            return -1;
        c->cmd_cap = cap;
    }
    memcpy(c->cmd, pkt->payload, pkt->len);
    c->cmd[pkt->len] = '\0';
    c->cmd_len = pkt->len;
    if (pkt->len > PROXY_KEEP_BYTES)
        proto_reader_shrink(&c->in, PROXY_KEEP_BYTES);
    return 1;
}

/* A command the I/O thread answers at once (no SQL), or 1: a worker's. */
static int command_now(proxy_client_t *c, const proto_packet_t *pkt)
{
    proto_cmd_t cmd;

    switch (pkt->payload[0]) {
    case PROTO_COM_QUIT:
        c->quit = true;
        return -1;
    case PROTO_COM_PING:
        reply_ok(c, 0, 0, 0);
        return 0;
    case PROTO_COM_INIT_DB:
        if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)c->caps, &cmd) != 0)
            reply_err(c, 1047, "08S01", "Malformed COM_INIT_DB");
        else
            setvar_use_db(c, &cmd.u.text);
        return 0;
    case PROTO_COM_SET_OPTION:
        if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)c->caps, &cmd) != 0 ||
            cmd.u.option > PROTO_OPTION_MULTI_STATEMENTS_OFF) {
            reply_err(c, 1047, "08S01", "Unknown COM_SET_OPTION");
            return 0;
        }
        c->multi = cmd.u.option == PROTO_OPTION_MULTI_STATEMENTS_ON;
        proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, reply_status(c));
        return 0;
    case PROTO_COM_STMT_SEND_LONG_DATA:
    case PROTO_COM_STMT_CLOSE:
    case PROTO_COM_STMT_RESET:
        if (proto_parse_command(pkt->payload, pkt->len, (uint32_t)c->caps, &cmd) != 0)
            reply_err(c, 1210, "HY000", "Incorrect arguments to a statement command");
        else if (cmd.cmd == PROTO_COM_STMT_SEND_LONG_DATA)
            ps_long_data(c, cmd.u.long_data.stmt_id, cmd.u.long_data.param_id,
                         &cmd.u.long_data.data);
        else if (cmd.cmd == PROTO_COM_STMT_CLOSE)
            ps_close(c, cmd.u.stmt_id);
        else
            ps_reset(c, cmd.u.stmt_id);
        return 0;
    default:
        return command_keep(c, pkt);
    }
}

/* A command: answered at once, its client idle again from then (its
 * wait_timeout counts from the answer), or 1: to run (client_run), which
 * the process list shows from its start. */
static int command(proxy_client_t *c, const proto_packet_t *pkt)
{
    int rc;

    c->seq = pkt->next_seq;
    if (pkt->len == 0)
        return -1;
    if ((rc = command_now(c, pkt)) != 1)
        processlist_end(c);
    return rc;
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
            rc = auth_handshake_response(c, &pkt);
            break;
        case CLIENT_AUTH_SWITCH:
            c->seq = pkt.next_seq;
            rc = auth_native(c, pkt.payload, pkt.len);
            break;
        case CLIENT_SHA2_SWITCH: {
            proto_str_t resp = {(const char *)pkt.payload, pkt.len};
            c->seq = pkt.next_seq;
            rc = auth_sha2_scramble(c, &resp);
            break;
        }
        case CLIENT_SHA2_FULL:
            rc = auth_sha2_password(c, &pkt);
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
        reply_err(c, 1153, "08S01", proto_reader_message(&c->in)); /* ER_NET_PACKET_TOO_LARGE */
        c->state = CLIENT_CLOSING;
    }
    return 0;
}
