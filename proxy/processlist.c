/*
 * processlist.c -- SHOW [FULL] PROCESSLIST and information_schema.PROCESSLIST
 * with the proxy's clients; SHOW STATUS with Threads_connected the
 * number of those clients and Aborted_clients the number of them that
 * ended without COM_QUIT since FLUSH STATUS.
 *
 * A server would list the backend connections of dal's pools, whose ids a
 * client can neither KILL nor find in CONNECTION_ID().  The proxy lists
 * its own clients instead: Id the proxy's connection id (the handshake's
 * thread id, CONNECTION_ID(), what KILL takes), User and Host the client's,
 * db the proxy's schema once chosen, Command Sleep or the command running,
 * Time the seconds since Command changed, Info the running statement.
 *
 * The list is made into a derived table of literals, `(SELECT ... UNION
 * ALL SELECT ...) AS PROCESSLIST`, which takes the place of
 * information_schema.PROCESSLIST in the client's statement, or under the
 * columns of SHOW PROCESSLIST; the statement then runs through the
 * client's session like any other naming no table, so WHERE, ORDER BY,
 * functions and column lists work as on a server.  Strings go as hex
 * literals, which no sql_mode or character set reads differently.
 *
 * State is the server's for a client whose statement runs on backend
 * connections now: what that connection's server lists for it (`User
 * lock`, `Waiting for table metadata lock`, ...), read with one query per
 * server for all such clients together (dal_backend_states), so a client
 * waiting for a lock shows as waiting, as on a server; a client whose
 * statement is on no backend connection shows `Sending data`.
 *
 * The text stays bounded whatever the number of clients: each row's Info
 * is cut to its first INFO_WIDTH bytes (as a server's
 * information_schema.PROCESSLIST cuts it), and further, to an even share
 * of half of the packet a server takes (the smaller of max_allowed_packet
 * and a server's default 16 MiB), when the clients are so many that their
 * statements would not fit in it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy.h"
#include "recognise.h"
#include "reply.h"
#include "text.h"

/* SHOW PROCESSLIST's Info without FULL: its first characters, as a server */
#define SHORT_INFO 100
/* Info's width in a server's information_schema.PROCESSLIST
 * (PROCESS_LIST_INFO_WIDTH of MariaDB) */
#define INFO_WIDTH 65535
/* the bytes of one row besides its strings' hex */
#define ROW_BYTES 400
/* a server's default max_allowed_packet (MariaDB 10.11) */
#define SERVER_PACKET (16u << 20)

void processlist_begin(proxy_client_t *c)
{
    pthread_mutex_lock(&c->info_mu);
    c->command = c->cmd_len > 0 ? c->cmd[0] : 0;
    c->info = NULL;
    c->info_len = 0;
    if (c->cmd_len > 1 && (c->command == PROTO_COM_QUERY || c->command == PROTO_COM_STMT_PREPARE)) {
        c->info = (const char *)c->cmd + 1;
        c->info_len = c->cmd_len - 1;
        /* as a server keeps a statement's text: without the blanks around
         * it and the `;` after it */
        while (c->info_len > 0 && isspace((unsigned char)c->info[0])) {
            c->info++;
            c->info_len--;
        }
        while (c->info_len > 0 && (c->info[c->info_len - 1] == ';' ||
                                   isspace((unsigned char)c->info[c->info_len - 1])))
            c->info_len--;
    }
    c->since_ms = guard_now_ms();
    pthread_mutex_unlock(&c->info_mu);
}

void processlist_end(proxy_client_t *c)
{
    pthread_mutex_lock(&c->info_mu);
    c->command = c->state == CLIENT_COMMAND || c->state == CLIENT_CLOSING ? 0 : PROTO_COM_CHANGE_USER;
    c->info = NULL;
    c->info_len = 0;
    c->since_ms = guard_now_ms();
    pthread_mutex_unlock(&c->info_mu);
}

/* A server's name of a command (sql_command_name of MariaDB). */
static const char *command_name(uint8_t cmd)
{
    switch (cmd) {
    case 0: return "Sleep";
    case PROTO_COM_QUERY: return "Query";
    case PROTO_COM_FIELD_LIST: return "Field List";
    case PROTO_COM_CHANGE_USER: return "Change user";
    case PROTO_COM_STMT_PREPARE: return "Prepare";
    case PROTO_COM_STMT_EXECUTE: return "Execute";
    case PROTO_COM_RESET_CONNECTION: return "Reset connection";
    default: return "Query";
    }
}

static void puts_(proto_buf_t *b, const char *s)
{
    proto_put_bytes(b, s, strlen(s));
}

/* s (n bytes; NULL: SQL NULL) as a utf8mb4 string literal. */
static void put_text(proto_buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char pair[2];
    size_t i;

    if (s == NULL) {
        puts_(b, "NULL");
        return;
    }
    puts_(b, "CONVERT(X'");
    for (i = 0; i < n; i++) {
        pair[0] = hex[(unsigned char)s[i] >> 4];
        pair[1] = hex[(unsigned char)s[i] & 15];
        proto_put_bytes(b, pair, 2);
    }
    puts_(b, "' USING utf8mb4)");
}

/* backend threads read per client running a statement */
#define THREADS_PER_CLIENT 4

/* The backend threads of the running clients, each with the client's id
 * (theirs in owner[]), and their State. */
typedef struct backends {
    dal_backend_thread_t *v;  /* owned, n of them */
    uint32_t *owner;          /* owned, n of them */
    size_t n;
} backends_t;

/* Whether self's list shows client t: one the process list shows
 * (processlist_listed) logged in as the same user, as a server shows a
 * user without the PROCESS privilege only its own account's threads (and
 * as KILL lets a user end only its own).  Under clients_mu. */
static bool listed(const proxy_client_t *t, const proxy_client_t *self)
{
    return processlist_listed(t) && strcmp(t->user, self->user) == 0;
}

/* Read the State of the backend threads of every client but self running
 * a statement now: a client's threads under its session_mu (its session
 * stays open), then one query per server with no lock held (clients_mu
 * is not held across a server's answer). */
static void backends_read(proxy_client_t *self, backends_t *bk)
{
    proxy_t *px = self->px;
    proxy_client_t *t;
    size_t cap = 0, k, got;
    dal_error_t err;

    memset(bk, 0, sizeof *bk);
    pthread_mutex_lock(&px->clients_mu);
    for (t = px->clients; t != NULL; t = t->all_next)
        cap += THREADS_PER_CLIENT * (t != self && listed(t, self) && atomic_load(&t->running));
    bk->v = cap > 0 ? calloc(cap, sizeof *bk->v) : NULL;
    bk->owner = cap > 0 ? calloc(cap, sizeof *bk->owner) : NULL;
    for (t = px->clients; t != NULL && bk->v != NULL && bk->owner != NULL; t = t->all_next) {
        /* (a session_mu held is a KILL QUERY at work on t: its State is
         * left as it is rather than the list waiting for the kill) */
        if (t == self || !listed(t, self) || !atomic_load(&t->running) ||
            bk->n + THREADS_PER_CLIENT > cap ||
            pthread_mutex_trylock(&t->session_mu) != 0)
            continue;
        got = t->session != NULL
                  ? dal_session_backend_threads(t->session, bk->v + bk->n, THREADS_PER_CLIENT)
                  : 0;
        pthread_mutex_unlock(&t->session_mu);
        for (k = 0; k < got && k < THREADS_PER_CLIENT; k++)
            bk->owner[bk->n++] = t->id;
    }
    pthread_mutex_unlock(&px->clients_mu);
    if (bk->n > 0)
        (void)dal_backend_states(px->dal, bk->v, bk->n, &err); /* what was read is kept */
}

static void backends_free(backends_t *bk)
{
    free(bk->v);
    free(bk->owner);
}

/* The State a server gives client id's backend threads: a lock wait first
 * (the thread that holds the statement up), else the first non-empty;
 * NULL when none is known. */
static const char *backend_state(const backends_t *bk, uint32_t id)
{
    const char *found = NULL;
    size_t i;

    for (i = 0; i < bk->n; i++) {
        if (bk->owner[i] != id || bk->v[i].state[0] == '\0')
            continue;
        if (strncmp(bk->v[i].state, "Waiting", 7) == 0 || strstr(bk->v[i].state, "lock") != NULL)
            return bk->v[i].state;
        if (found == NULL)
            found = bk->v[i].state;
    }
    return found;
}

/* One client's row.  self is the client asking, state its State; bk the
 * backend threads' States. */
static void put_row(proto_buf_t *b, proxy_client_t *t, const proxy_client_t *self,
                    const char *self_state, const backends_t *bk, uint64_t now, bool first,
                    size_t info_max)
{
    const char *state;
    char num[160], host[96];
    uint64_t ms;

    pthread_mutex_lock(&t->info_mu);
    ms = now > t->since_ms ? now - t->since_ms : 0;
    snprintf(num, sizeof num, "%sSELECT %u AS ID, ", first ? "" : " UNION ALL ", t->id);
    puts_(b, num);
    put_text(b, t->user, strlen(t->user));
    puts_(b, " AS USER, ");
    snprintf(host, sizeof host, "%s:%u", t->peer, t->peer_port);
    put_text(b, host, strlen(host));
    puts_(b, " AS HOST, ");
    put_text(b, t->has_db ? setvar_db_name(t) : NULL, strlen(setvar_db_name(t)));
    puts_(b, " AS DB, ");
    put_text(b, command_name(t->command), strlen(command_name(t->command)));
    snprintf(num, sizeof num, " AS COMMAND, %llu AS TIME, ", (unsigned long long)(ms / 1000));
    puts_(b, num);
    if (t->command == 0)
        put_text(b, "", 0);
    else if (t == self)
        put_text(b, self_state, strlen(self_state));
    else if ((state = backend_state(bk, t->id)) != NULL)
        put_text(b, state, strlen(state));
    else
        put_text(b, "Sending data", 12);
    puts_(b, " AS STATE, ");
    put_text(b, t->info, t->info_len < info_max ? t->info_len : info_max);
    snprintf(num, sizeof num, " AS INFO, %llu AS TIME_MS", (unsigned long long)ms);
    puts_(b, num);
    pthread_mutex_unlock(&t->info_mu);
}

/* The derived table of the clients self's list shows (listed), newest
 * first as a server's information_schema lists them. */
static void put_table(proto_buf_t *b, proxy_client_t *self, const char *self_state)
{
    proxy_t *px = self->px;
    proxy_client_t *t;
    uint64_t now = guard_now_ms();
    bool first = true;
    size_t n = 0, info_max = INFO_WIDTH;
    size_t budget = (px->max_allowed_packet < SERVER_PACKET ? px->max_allowed_packet
                                                              : SERVER_PACKET) / 2;
    backends_t bk;

    backends_read(self, &bk);

    puts_(b, "(SELECT ID, USER, HOST, DB, COMMAND, TIME, STATE, INFO, CAST(TIME_MS AS "
             "DECIMAL(22,3)) AS TIME_MS, 0 AS STAGE, 0 AS MAX_STAGE, CAST(0 AS DECIMAL(7,3)) "
             "AS PROGRESS, 0 AS MEMORY_USED, 0 AS MAX_MEMORY_USED, 0 AS EXAMINED_ROWS, "
             "0 AS QUERY_ID, CAST(INFO AS BINARY) AS INFO_BINARY, 0 AS TID FROM (");
    pthread_mutex_lock(&px->clients_mu);
    for (t = px->clients; t != NULL; t = t->all_next)
        n += listed(t, self);
    /* each byte of Info is two of hex */
    if (n > 0 && budget / n < ROW_BYTES + 2 * info_max)
        info_max = budget / n > ROW_BYTES ? (budget / n - ROW_BYTES) / 2 : 0;
    for (t = px->clients; t != NULL; t = t->all_next)
        if (listed(t, self)) {
            put_row(b, t, self, self_state, &bk, now, first, info_max);
            first = false;
        }
    pthread_mutex_unlock(&px->clients_mu);
    backends_free(&bk);
    /* The LIMIT keeps the server from merging the derived table into the
     * query, which would name the columns as this select list writes them
     * (upper case) instead of as the client's statement does. */
    puts_(b, ") AS clients LIMIT 18446744073709551615)");
}

/* sql (len bytes, NUL bytes only inside quotes and comments, a NUL after
 * them) with each information_schema.PROCESSLIST outside quotes replaced by
 * the clients' table, and each CONNECTION_ID() by the client's id (the
 * server's would be a pooled connection's), into b; false when it names
 * no PROCESSLIST. */
static bool rewrite(proxy_client_t *c, const char *sql, size_t len, proto_buf_t *b)
{
    const char *p = sql, *end = sql + len;
    recognise_pl_ref_t ref;
    bool found = false;
    char id[16];

    for (; recognise_processlist_ref(sql, p, end, reply_no_backslash(c), &ref);
         p = ref.at + ref.len) {
        proto_put_bytes(b, p, (size_t)(ref.at - p));
        if (ref.table) {
            put_table(b, c, "Filling schema table");
            if (!ref.aliased)
                puts_(b, " AS PROCESSLIST");
            found = true;
        } else {
            snprintf(id, sizeof id, "%u", c->id);
            puts_(b, id);
        }
    }
    proto_put_bytes(b, p, (size_t)(end - p));
    return found;
}

/* SHOW STATUS's rows as they go out: the values of the variables
 * processlist_status names the proxy's counts. */
typedef struct status_map {
    processlist_status_t st[PROCESSLIST_STATUS_N];
    const char *hit;     /* this row's value, or NULL: the server's */
} status_map_t;

static void status_value(void *user, size_t column, const char **val, size_t *len)
{
    status_map_t *m = user;
    size_t i;

    if (column == 0) {
        m->hit = NULL;
        for (i = 0; i < PROCESSLIST_STATUS_N && m->hit == NULL; i++)
            if (*len == strlen(m->st[i].name) && strncasecmp(*val, m->st[i].name, *len) == 0)
                m->hit = m->st[i].value;
    } else if (column == 1 && m->hit != NULL) {
        *val = m->hit;
        *len = strlen(m->hit);
    }
}

/* Threads_connected: the number of the proxy's logged-in clients. */
static size_t processlist_connected(proxy_t *px)
{
    proxy_client_t *t;
    size_t n = 0;

    pthread_mutex_lock(&px->clients_mu);
    for (t = px->clients; t != NULL; t = t->all_next)
        n += processlist_listed(t);
    pthread_mutex_unlock(&px->clients_mu);
    return n;
}

void processlist_status(proxy_t *px, processlist_status_t st[PROCESSLIST_STATUS_N])
{
    st[0].name = "THREADS_CONNECTED";
    snprintf(st[0].value, sizeof st[0].value, "%zu", processlist_connected(px));
    st[1].name = "ABORTED_CLIENTS";
    snprintf(st[1].value, sizeof st[1].value, "%llu",
             (unsigned long long)atomic_load(&px->aborted_clients));
    st[2].name = "ABORTED_CONNECTS";
    snprintf(st[2].value, sizeof st[2].value, "%llu",
             (unsigned long long)atomic_load(&px->aborted_connects));
}

/* SHOW STATUS run on the servers as it is, with Threads_connected the
 * number of the proxy's clients, as a server counts its own connections
 * (the servers' would count dal's pooled connections, which stay when
 * clients go: mysqltest's wait_until_count_sessions.inc waits on it), and
 * Aborted_clients and Aborted_connects the proxy's (the servers' pooled
 * connections are not the clients that end, and the proxy's clients log
 * in to the proxy). */
static void show_status(proxy_client_t *c, const char *sql, size_t len)
{
    status_map_t m = {.hit = NULL};
    dal_result_t *r = NULL;
    dal_error_t err;

    processlist_status(c->px, m.st);
    if (dal_session_query_len(c->session, NULL, sql, len, NULL, 0, &r, &err) != 0)
        reply_dal_error(c, &err);
    else
        reply_result_map(c, r, false, status_value, &m);
    dal_result_free(r);
}

/* FLUSH STATUS run on the servers, then the proxy's Aborted_clients and
 * Aborted_connects set to 0, as the statement resets a server's. */
static void flush_status(proxy_client_t *c, const char *sql, size_t len)
{
    dal_result_t *r = NULL;
    dal_error_t err;

    if (dal_session_query_len(c->session, NULL, sql, len, NULL, 0, &r, &err) != 0) {
        reply_dal_error(c, &err);
        return;
    }
    atomic_store(&c->px->aborted_clients, 0);
    atomic_store(&c->px->aborted_connects, 0);
    reply_result(c, r, false);
    dal_result_free(r);
}

bool processlist_statement(proxy_client_t *c, text_lead_t lead, const char *sql, size_t len)
{
    proto_buf_t b = PROTO_BUF_INIT;
    dal_result_t *r = NULL;
    dal_error_t err;
    bool full;
    char info[64];

    if (lead == TEXT_SHOW && recognise_show_status(sql)) {
        show_status(c, sql, len);
        return true;
    }
    if (lead == TEXT_FLUSH && recognise_flush_status(sql)) {
        flush_status(c, sql, len);
        return true;
    }
    if (lead == TEXT_SHOW && recognise_show_processlist(sql, &full)) {
        snprintf(info, sizeof info, full ? "INFO" : "LEFT(INFO, %d)", SHORT_INFO);
        puts_(&b, "SELECT ID AS Id, USER AS User, HOST AS Host, DB AS db, COMMAND AS Command, "
                  "TIME AS Time, STATE AS State, ");
        puts_(&b, info);
        puts_(&b, " AS Info, CAST(PROGRESS AS DOUBLE) AS Progress FROM ");
        put_table(&b, c, "starting");
        puts_(&b, " AS PROCESSLIST ORDER BY ID");
    } else if (!recognise_mentions_processlist(sql, len) || !rewrite(c, sql, len, &b)) {
        proto_buf_free(&b);
        return false;
    }
    if (b.err != 0) {
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
    } else if (dal_session_query_len(c->session, NULL, (const char *)b.data, b.len, NULL, 0, &r,
                                     &err) != 0) {
        reply_dal_error(c, &err);
    } else {
        reply_result(c, r, false);
    }
    dal_result_free(r);
    proto_buf_free(&b);
    return true;
}
