/*
 * proxy.h -- dal-proxy's insides: the server (listeners, I/O threads,
 * statement workers) and the clients it serves.
 *
 * The model (docs/proxy.md): each I/O thread runs an epoll loop over its
 * own listening sockets (SO_REUSEPORT, so the kernel spreads new
 * connections) and its clients' sockets; an idle client holds no thread.
 * Reading packets, the handshake and authentication happen on the I/O
 * thread.  A command that runs SQL runs there too, as a coroutine whose
 * backend waits go through libdal's wait hook into the thread's epoll
 * ([proxy] inline_io, server.c), or, past the coroutines a thread has or
 * with inline_io off, goes to a bounded pool of workers, which make the
 * blocking libdal calls.  Either leaves the reply in the client's output
 * buffer, which the I/O thread writes.  A client is owned by one thread at
 * a time: its I/O thread, or the worker running its command.
 */
#ifndef DAL_PROXY_PROXY_H
#define DAL_PROXY_PROXY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <dal/dal.h>

#include "protocol.h"
#include "text.h"

/* utf8mb4_general_ci: the collation the handshake announces, and that of
 * the text columns of the results the proxy makes itself */
#define PROXY_CHARSET_UTF8MB4 45

struct proxy_io;
typedef struct proxy_tls proxy_tls_t;
typedef struct proxy_tls_conn proxy_tls_conn_t;
typedef struct proxy_diag proxy_diag_t;
typedef struct proxy_guard proxy_guard_t;

/* One account (users.c): what authentication checks.  A password_hash or
 * a backend account gives only the native stage 2; a password gives both,
 * so caching_sha2_password's fast path can check the user too. */
typedef struct proxy_user {
    char *name;                         /* owned */
    char *host;                         /* owned; a backend account's Host; NULL: any client */
    bool no_password;                   /* a backend account without one: an empty response */
    uint8_t stage2[PROTO_SHA1_LEN];     /* SHA1(SHA1(password)) */
    bool has_sha2;                      /* the password was given */
    uint8_t sha2[PROTO_SHA256_LEN];     /* SHA256(SHA256(password)) */
} proxy_user_t;

/* What every thread reads; set up before the threads start. */
typedef struct proxy {
    dal_t *dal;                       /* borrowed: opened by main */
    char *database;                   /* owned: the schema clients see */
    /* [proxy user] accounts (users.c): read again after a reload */
    pthread_mutex_t users_mu;
    proxy_user_t *users;              /* owned, under users_mu */
    size_t nusers;
    uint64_t users_reloads;           /* dal_reload_stats when they were read */
    uint64_t users_read_ms;           /* guard_now_ms of the last read, under users_mu */
    bool users_backend;               /* [proxy] users = backend, under users_mu */
    /* the backends' VERSION() the handshake names (ident.c) */
    pthread_mutex_t ident_mu;
    char version[128];                /* under ident_mu */
    atomic_bool version_known;        /* a backend answered */
    atomic_bool version_busy;         /* a worker is asking */
    atomic_uint_fast64_t version_reloads; /* dal_reload_stats when it was read */
    atomic_uint_fast64_t version_retry_ms; /* unknown: not asked again before */
    atomic_uint version_id;           /* version as MAJOR*10000+MINOR*100+PATCH, as
                                         executable comments compare it */
    uint32_t max_connections;
    uint32_t max_allowed_packet;
    uint32_t connect_timeout_ms;      /* to finish authentication */
    /* idle clients are closed after these (seconds; server.c): the
     * backends' global wait_timeout and interactive_timeout, read once */
    uint32_t wait_timeout_s, interactive_timeout_s;
    proxy_tls_t *tls;                 /* owned; NULL: no tls_cert, no TLS */
    bool require_tls;                 /* refuse logins without TLS */
    bool inline_io;                   /* [proxy] inline_io: commands run on the I/O threads */
    atomic_uint nclients;             /* connected now */
    atomic_uint_fast64_t accepted, refused, auth_failed; /* totals, for the monitors */
    /* Aborted_clients: logged-in clients that ended without COM_QUIT
     * (killed, hung up, timed out, a network error), as a server counts
     * them; FLUSH STATUS sets it to 0 */
    atomic_uint_fast64_t aborted_clients;
    /* Aborted_connects: clients that ended without logging in (a wrong
     * password, an unknown database, a bad or unfinished handshake), as a
     * server counts its failed connection attempts; FLUSH STATUS sets it
     * to 0 */
    atomic_uint_fast64_t aborted_connects;
    proxy_guard_t *guard;             /* owned: failed logins per address (guard.c) */
    atomic_uint next_id;              /* connection ids */
    atomic_bool stopping;             /* SIGTERM: stop accepting, drain */
    struct proxy_io *ios;             /* owned: the I/O threads */
    size_t nios;
    /* the workers' queue of clients with a command to run */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct proxy_client *queue_head, *queue_tail;
    atomic_uint queued;               /* the queue's length, changed under mu; read
                                         without it by a worker deciding to linger */
    pthread_t *workers;               /* owned */
    size_t nworkers;
    bool workers_quit;                /* under mu: the I/O threads are gone */
    /* every connected client, for KILL (kill.c) */
    pthread_mutex_t clients_mu;
    struct proxy_client *clients;     /* borrowed: list by all_next */
} proxy_t;

typedef enum client_state {
    CLIENT_HANDSHAKE,  /* handshake sent, waiting for the response (after an
                          SSLRequest: the TLS handshake, then the response) */
    CLIENT_AUTH_SWITCH,/* auth switch sent, waiting for the scramble */
    CLIENT_SHA2_SWITCH,/* switched to caching_sha2_password: its scramble */
    CLIENT_SHA2_FULL,  /* caching_sha2_password's full authentication asked
                          for (over TLS): waiting for the cleartext password */
    CLIENT_COMMAND,    /* authenticated: commands */
    CLIENT_CLOSING     /* write what is left, then close */
} client_state_t;

/* One client connection. */
typedef struct proxy_client {
    proxy_t *px;
    struct proxy_io *io;              /* its I/O thread */
    int fd;
    uint32_t id;                      /* connection id */
    client_state_t state;
    uint32_t watching;                /* the events its epoll entry has (server.c) */
    bool watch_known;                 /* ... when its thread last set them */
    bool busy;                        /* a worker has it, or its command runs
                                         inline (its I/O thread's coroutine) */
    atomic_bool running;              /* ... and runs its command (KILL QUERY) */
    bool hung_up;                     /* the client hung up while its command ran
                                         (kill_hang_up), set and read by the thread
                                         running it: it closes when the command ends */
    bool eof_pending;                 /* ... or sent its end of input after commands
                                         not read yet (a COM_QUIT): connected until
                                         they are, as on a server (server.c's hung_up):
                                         judged again at its next command */
    bool logged_in;                   /* it reached CLIENT_COMMAND */
    bool quit;                        /* it sent COM_QUIT */
    atomic_bool killed;               /* a KILL CONNECTION ended it */
    uint64_t caps;                    /* agreed capabilities */
    uint8_t scramble[PROTO_SCRAMBLE_LEN];
    char user[64];
    uint8_t charset;                  /* the handshake's collation id */
    char peer[64];                    /* "127.0.0.1" for messages */
    dal_session_t *session;           /* owned once authenticated; replaced
                                         under session_mu */
    pthread_mutex_t session_mu;       /* held while another thread uses session
                                         (KILL QUERY, the process list), which
                                         it keeps open (kill.c); never across
                                         a wait of c's own thread */
    proxy_diag_t *diag;               /* owned: the last statement's warnings and
                                         errors (diag.c), or NULL */
    proto_reader_t in;                /* plaintext packets from the client */
    proto_buf_t out;                  /* plaintext replies not yet sent (or,
                                         with TLS, not yet encrypted) */
    proxy_tls_conn_t *tls;            /* owned once the client asked for TLS */
    proto_buf_t wire;                 /* TLS records not yet sent */
    proto_packet_t pending;           /* the command a worker runs */
    uint8_t *cmd;                     /* owned copy of its payload, a NUL
                                         after it (cmd[cmd_len]) */
    size_t cmd_len;
    size_t cmd_cap;                   /* cmd's room (over cmd_len), kept for
                                         the next command */
    uint8_t seq;                      /* next sequence id to send */
    bool multi;                       /* COM_QUERY may hold several statements */
    bool more;                        /* results of the same COM_QUERY follow */
    bool failed;                      /* the last reply built was an ERR */
    bool binary;                      /* the command's rows go in the binary
                                         protocol: COM_STMT_EXECUTE of a
                                         statement the proxy answers itself */
    uint64_t hold_until;              /* a login's reply waits until then
                                         (guard_now_ms); 0: nothing held */
    struct proxy_client *held_next;   /* in its I/O thread's held list */
    struct proxy_stmts *stmts;        /* owned: prepared statements (prepared.c) */
    struct proxy_infile *infile;      /* owned: the LOAD DATA LOCAL file being
                                         relayed (local_infile.c), or NULL */
    struct proxy_client *next;        /* in a queue */
    /* in its I/O thread's list of clients not yet authenticated (server.c) */
    bool in_handshake;
    uint64_t deadline_ms;             /* CLOCK_MONOTONIC: closed if not in by then */
    struct proxy_client *hs_prev, *hs_next; /* borrowed */
    struct proxy_client *all_prev, *all_next; /* in px->clients */
    /* what SHOW PROCESSLIST tells of it (processlist.c), under info_mu:
     * set by the thread that owns c, read by any client's statement */
    pthread_mutex_t info_mu;
    uint16_t peer_port;               /* Host is peer:peer_port */
    bool has_db;                      /* a schema was chosen (handshake, USE) */
    char schema[256];                 /* that schema when it is a [schema NAME];
                                         "": the proxy's database */
    uint8_t command;                  /* PROTO_COM_* running, or 0: Sleep */
    const char *info;                 /* borrowed from c->cmd while it runs */
    size_t info_len;
    uint64_t since_ms;                /* guard_now_ms when Command changed */
    /* idle timeout (server.c): the session's wait_timeout in seconds, as a
     * server's (interactive_timeout's for CLIENT_INTERACTIVE clients, until
     * SET wait_timeout); 0: never */
    uint32_t wait_timeout_s;
    bool interactive_pending;         /* its session's wait_timeout is still to
                                         be made interactive_timeout's */
    /* the session's idle_transaction_timeout, idle_readonly_transaction_timeout
     * and idle_write_transaction_timeout in seconds (PROXY_IDLE_TRX_*);
     * 0: not set */
    uint32_t idle_trx_s[3];
    bool in_trx;                      /* a transaction was open after its last command */
    bool trx_wrote;                   /* ... and one of its statements wrote */
} proxy_client_t;

enum { PROXY_IDLE_TRX_ANY, PROXY_IDLE_TRX_READONLY, PROXY_IDLE_TRX_WRITE };

/* The largest packet a client may send before it is authenticated: a
 * handshake response with its connect attributes, an SSLRequest, an auth
 * switch response are far smaller.  Its name in the error message. */
#define PROXY_LOGIN_PACKET (64 * 1024)
#define PROXY_LOGIN_PACKET_NAME "the limit before authentication"
/* A client's buffers with more room than this are freed when empty: an
 * idle client holds little. */
#define PROXY_KEEP_BYTES (64 * 1024)

/* ------------------------------------------------------------ client.c */

/* A new client on fd (accepted, non-blocking): sends the handshake into
 * its output buffer.  NULL if out of memory (fd is then closed). */
proxy_client_t *client_new(proxy_t *px, struct proxy_io *io, int fd, const char *peer);
/* Free c: its session, buffers, and close its socket; a logged-in
 * client that did not quit (or was killed) counts in Aborted_clients. */
void client_free(proxy_client_t *c);
/*
 * Take the packets that arrived (on the I/O thread).  Returns 1 if a
 * command must run on a worker (c->cmd is set), 0 if the client only needs
 * its output written, -1 if it must be closed now.
 */
int client_input(proxy_client_t *c);
/* Run c's pending command (on a worker): the reply goes to c->out. */
void client_run(proxy_client_t *c);

/* ------------------------------------------------------------ auth.c */

/* A new client's handshake (a fresh scramble, what dal-proxy offers) into
 * c->out; c is then CLIENT_HANDSHAKE.  0, or -1 if no scramble could be
 * drawn. */
int auth_handshake(proxy_client_t *c);
/*
 * The packets of a login, by c's state (each returns as client_input):
 * the handshake response or an SSLRequest (CLIENT_HANDSHAKE), a
 * mysql_native_password scramble (CLIENT_AUTH_SWITCH), a
 * caching_sha2_password one (CLIENT_SHA2_SWITCH) and the cleartext
 * password of its full authentication (CLIENT_SHA2_FULL).  A checked
 * password opens c's session (CLIENT_COMMAND); a failure sends an ERR and
 * makes c CLIENT_CLOSING.
 */
int auth_handshake_response(proxy_client_t *c, const proto_packet_t *pkt);
int auth_native(proxy_client_t *c, const void *resp, size_t len);
int auth_sha2_scramble(proxy_client_t *c, const proto_str_t *resp);
int auth_sha2_password(proxy_client_t *c, const proto_packet_t *pkt);
/* COM_CHANGE_USER: c's session and statements end and cu's user logs in
 * as at the handshake. */
void auth_change_user(proxy_client_t *c, const proto_change_user_t *cu);
/* The handshake's character set (as SET NAMES) and collation for c's
 * session, as at login; a server's COM_RESET_CONNECTION keeps them too. */
int auth_session_charset(proxy_client_t *c, dal_error_t *err);

/* ------------------------------------------------------------ setvar.c */

/* USE, a SET of session variables or SET NAMES (also when prepared):
 * answered by the proxy, the SET kept by the session (1); 0 if sql is none
 * of them.  sql: len bytes, a NUL after them, NUL bytes only inside
 * strings and comments. */
int setvar_statement(proxy_client_t *c, const char *sql, size_t len);
/* A CLIENT_INTERACTIVE client's session starts with wait_timeout =
 * interactive_timeout, as on a server (when the two differ): set before
 * its first command, on the worker, since the check of the value asks a
 * server. */
void setvar_interactive(proxy_client_t *c);
/* COM_INIT_DB and USE: OK for the proxy's database or a [schema NAME]
 * (the session's statements then resolve table names there), else 1049. */
void setvar_use_db(proxy_client_t *c, const proto_str_t *db);
/* Make name (n bytes, not terminated) c's schema, on its session if it
 * has one (the handshake's database comes before it: logged_in applies
 * it); false, c unchanged, when name is neither the proxy's database nor
 * a [schema NAME] of the configuration in force. */
bool setvar_choose_db(proxy_client_t *c, const char *name, size_t n);
/* Make c's schema what it was: schema (c->schema's former text, "" for
 * the proxy's database) and has_db, saved before a setvar_choose_db. */
void setvar_restore_db(proxy_client_t *c, const char *schema, bool has_db);
/* c's schema and has_db as setvar_restore_db sets them, its session left
 * as it is (in no database after DROP DATABASE of its own: "", false). */
void setvar_name_db(proxy_client_t *c, const char *schema, bool has_db);
/* After a statement that succeeded: DROP DATABASE of the session's server
 * database left it in none, which c then says too (DATABASE() NULL). */
void setvar_db_dropped(proxy_client_t *c);
/* setvar_choose_db, with the session's error in err when it fails
 * (mysql_errno 0: dal's, the name unknown). */
bool setvar_choose_db_err(proxy_client_t *c, const char *p, size_t n, dal_error_t *err);
/* The name of c's schema: its [schema NAME], or the proxy's database
 * (borrowed from c or its proxy; c's owner thread, or under info_mu). */
const char *setvar_db_name(const proxy_client_t *c);
/* t (borrowed) is a [table] of c's schema. */
bool setvar_table_ours(const proxy_client_t *c, const dal_table_info_t *t);

/* ------------------------------------------------------------ prepared.c */

/*
 * Server-side prepared statements of one client (the binary protocol).
 * A statement is a dal_prepared_t: analysed once, routed at each
 * execution.  Its result columns are learnt at prepare time by running it
 * once with every parameter 0 and sql_select_limit=0 (when it is a
 * statement that returns rows), so a PREPARE_OK carries the column count
 * clients check executions against, and a statement that cannot run
 * (an unknown table, a syntax error) fails at prepare, as on a server.
 */
/* COM_STMT_PREPARE (on a worker). */
void ps_prepare(proxy_client_t *c, const char *sql, size_t len);
/* The statements the proxy answers itself rather than the servers (SHOW
 * WARNINGS, SELECT CONNECTION_ID(), the process list, information_schema
 * views, SHOW VARIABLES, SHOW TABLES, ...; client.c): sql (len bytes, a
 * NUL after them, as a server reads it) answered, true; false for any
 * other.  Also for a prepared one without parameters, with c->binary
 * set. */
bool client_answer(proxy_client_t *c, const char *sql, size_t len);
/* Whether sql (len bytes and a NUL after them, none before) is only
 * blanks, `;` and comments -- executable ones of a version the servers
 * skip included: a server answers it with OK. */
bool client_only_comments(proxy_client_t *c, const char *sql, size_t len);
/* Whether sql (len bytes and a NUL) would change the datasource's account
 * every client shares (SET PASSWORD, SET DEFAULT ROLE, ALTER USER): then
 * refused to c with error 1227. */
bool client_refuse_account_change(proxy_client_t *c, const char *sql, size_t len);
/* COM_STMT_EXECUTE, the whole payload (on a worker). */
void ps_execute(proxy_client_t *c, const uint8_t *payload, size_t len);
/* COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE (no reply) and COM_STMT_RESET
 * (OK, or an error for an unknown statement). */
void ps_long_data(proxy_client_t *c, uint32_t id, uint16_t param, const proto_str_t *data);
void ps_close(proxy_client_t *c, uint32_t id);
void ps_reset(proxy_client_t *c, uint32_t id);
/* Free every statement of c (RESET_CONNECTION, disconnect). */
void ps_free_all(proxy_client_t *c);

/* ------------------------------------------------------------ local_infile.c */

/* Make s, c's new session, ask c for the file of a LOAD DATA LOCAL
 * INFILE: 0, or a dal error code with err filled. */
int local_infile_attach(proxy_client_t *c, dal_session_t *s, dal_error_t *err);

/* ------------------------------------------------------------ schema.c */

/* If sql (len bytes, a NUL after them) is `SHOW [FULL] TABLES [FROM|IN
 * db] [LIKE 'pattern' | WHERE condition]` of the current or another
 * logical database, answer it (its logical tables and its default
 * datasource's own tables, without the physical tables of sharded ones,
 * sorted) and return true; else false. */
bool schema_show_tables(proxy_client_t *c, const char *sql, size_t len);
/* Answer SHOW DATABASES (sql): the proxy's database and each [schema
 * NAME], sorted; true. */
bool schema_show_databases(proxy_client_t *c, const char *sql);
/* If sql (len bytes, a NUL after them) describes one configured table
 * (SHOW [FULL] COLUMNS, SHOW INDEX, SHOW CREATE TABLE, DESCRIBE), answer
 * it from the table's first physical table, under the logical name, with
 * the whole text after the table's name (a NUL inside a quoted LIKE
 * pattern kept), and return true; else false (other tables are the
 * servers' business). */
bool schema_describe(proxy_client_t *c, const char *sql, size_t len);
/* COM_FIELD_LIST: the columns of table (of a configured one, its first
 * physical table's, named by the logical name) whose names match the LIKE
 * pattern wild (empty: all), each with its default value as NULL. */
void schema_field_list(proxy_client_t *c, const proto_str_t *table, const proto_str_t *wild);

/* ------------------------------------------------------------ processlist.c */

/* c's command starts (Command, Info, Time from now) / ends (Sleep; a
 * client still authenticating after COM_CHANGE_USER shows "Change user"
 * until it is in). */
void processlist_begin(proxy_client_t *c);
void processlist_end(proxy_client_t *c);

/* Whether SHOW PROCESSLIST lists c and KILL finds it: logged in and not
 * leaving, in the command phase or authenticating again (COM_CHANGE_USER),
 * as a server lists it.  Under clients_mu. */
static inline bool processlist_listed(const proxy_client_t *c)
{
    return c->state == CLIENT_COMMAND || (c->logged_in && c->state != CLIENT_CLOSING);
}
/* If sql (len bytes, a NUL after them; NUL bytes only inside strings and
 * comments; lead its text_lead) is SHOW [FULL] PROCESSLIST, SHOW STATUS,
 * FLUSH STATUS or names information_schema.PROCESSLIST, answer it with
 * the proxy's clients and counts and return true; else false. */
bool processlist_statement(proxy_client_t *c, text_lead_t lead, const char *sql, size_t len);
/* The status variables the proxy answers with its own counts, as a server
 * counts its own clients (the servers' count dal's pooled connections,
 * which are not the clients): Threads_connected, the number of the
 * proxy's logged-in clients; Aborted_clients, the clients that ended
 * without COM_QUIT, and Aborted_connects, those that ended without
 * logging in, since FLUSH STATUS.  SHOW STATUS and the status views of
 * information_schema both answer them from here. */
#define PROCESSLIST_STATUS_N 3
typedef struct processlist_status {
    const char *name;  /* static; as information_schema writes it (compare
                        * without case: SHOW STATUS writes Threads_connected) */
    char value[24];    /* the count in decimal */
} processlist_status_t;
/* The proxy's counts now into st. */
void processlist_status(proxy_t *px, processlist_status_t st[PROCESSLIST_STATUS_N]);

/* ------------------------------------------------------------ users.c */

/* Read the accounts of the configuration (at start): 0, or -1 when out
 * of memory.  With users = backend, a datasource whose accounts cannot be
 * read yet is logged and read again at a failed login. */
int users_load(proxy_t *px);
void users_free(proxy_t *px);
/* Copy the first account called name whose host matches the client
 * address peer into *out (out->name and out->host are set to NULL: the
 * table may change once the lock is dropped) and return true, or return
 * false when there is none.  Reads the accounts again first if the
 * configuration was reloaded since. */
bool users_find(proxy_t *px, const char *name, const char *peer, proxy_user_t *out);
/* After a failed check: with users = backend, read the datasource's
 * accounts again unless that was done less than a second ago, and return
 * whether it was done (the caller then checks once more). */
bool users_reread(proxy_t *px);

/* ------------------------------------------------------------ infoschema.c */

/* A statement reading information_schema.TABLES, COLUMNS or STATISTICS,
 * GLOBAL_STATUS or SESSION_STATUS, or with autocommit 0 SESSION_VARIABLES
 * or `SHOW [SESSION] VARIABLES`: run with the logical tables in place of
 * the physical ones, the proxy's client counts and the session's
 * autocommit (infoschema.c) and answered (true); false for any other.  sql: len bytes, a NUL after them, NUL bytes only inside strings
 * and comments. */
bool infoschema_query(proxy_client_t *c, const char *sql, size_t len);

/* ------------------------------------------------------------ ident.c */

/* Read the backends' version (at start; on failure the handshake says
 * 10.11.99-MariaDB-dal-proxy until a backend answers). */
void ident_load(proxy_t *px);
void ident_free(proxy_t *px);
/* Read it again if the configuration was reloaded since, or if it is not
 * known yet (on a worker: this may run a statement). */
void ident_refresh(proxy_t *px);
/* The handshake's version: "5.5.5-" and the backends' VERSION(). */
void ident_handshake_version(proxy_t *px, char *buf, size_t n);
/* The backends' version as executable comments compare it (MAJOR*10000 +
 * MINOR*100 + PATCH; PROTO_SERVER_VERSION_ID until a backend answered):
 * what the proxy reads of a statement is what the servers run. */
uint32_t ident_version_id(proxy_t *px);

/* ------------------------------------------------------------ diag.c */

void diag_clear(proxy_client_t *c);
void diag_free(proxy_client_t *c);
/* r's statement ended: its warnings are the list (when it left some or
 * named a table; else the list stays, as on a server). */
void diag_take(proxy_client_t *c, const dal_result_t *r);
/* The error the client is sent is the list. */
void diag_error(proxy_client_t *c, uint16_t code, const char *message);
/* The session's statement failed with a server's error, which the client
 * was sent: the server's diagnostics area of it (dal_session_error_row),
 * when the session read one, is the list. */
void diag_failed(proxy_client_t *c);
/* If sql (len bytes, a NUL after them) is SHOW WARNINGS|ERRORS [LIMIT
 * ...] or SHOW COUNT(*) WARNINGS|ERRORS, to its last byte, answer it from
 * the list and return true. */
bool diag_statement(proxy_client_t *c, const char *sql, size_t len);

/* ------------------------------------------------------------ kill.c */

/* Enter c in / remove c from the proxy's list of clients (client_new,
 * client_free), which KILL searches by connection id. */
void kill_register(proxy_client_t *c);
void kill_unregister(proxy_client_t *c);
/* Put s (NULL: none; owned by c from now on) in place of c's session,
 * under c->session_mu (a KILL QUERY of another client may be using the
 * old one), then close the old one. */
void kill_set_session(proxy_client_t *c, dal_session_t *s);
/* c's client hung up (its socket's end of input or an error) while c's
 * command runs: the servers running its statement see their client go
 * as well (dal_session_hang_up), and c closes once the command has ended.
 * Called by the thread running the command, between or inside its waits. */
void kill_hang_up(proxy_client_t *c);
/* If sql (len bytes, a NUL after them) is `KILL [HARD|SOFT]
 * [CONNECTION|QUERY] id`, answer it and return true; else false.  The id
 * is one of the proxy's connection ids. */
bool kill_statement(proxy_client_t *c, const char *sql, size_t len);

/* ------------------------------------------------------------ tls.c */

/*
 * TLS on OpenSSL, as a filter over memory: the server's I/O reads
 * ciphertext from the socket and feeds it to the client's session, takes
 * plaintext out into the packet reader, and encrypts replies into c->wire,
 * which it sends like any buffer.  The sessions never touch a socket, so
 * plain and TLS clients follow one non-blocking model: a write never waits
 * for the socket (it only grows c->wire), a read that needs more bytes says
 * so and the socket's next readiness brings them, and the bytes that came
 * right behind the SSLRequest are simply the first ones fed.
 *
 * A context is shared by every thread; a session belongs to its client and
 * is used by whichever thread owns the client.
 */
/* The context of [proxy] tls_cert and tls_key (PEM files; the certificate
 * file may hold the chain): TLS 1.2 and later.  NULL on failure, with a
 * sentence in msg (the file and OpenSSL's reason; never a secret). */
proxy_tls_t *tls_context_new(const char *cert, const char *key, char *msg, size_t msglen);
void tls_context_free(proxy_tls_t *t);
/* A server-side session of t; NULL if out of memory.  t must outlive it. */
proxy_tls_conn_t *tls_conn_new(proxy_tls_t *t);
void tls_conn_free(proxy_tls_conn_t *s);
/* Ciphertext from the client (n bytes, copied): 0, or -1 out of memory. */
int tls_conn_feed(proxy_tls_conn_t *s, const void *data, size_t n);
/* Decrypt into buf (at most n bytes), running the handshake while it is
 * not done: the bytes written, 0 if more ciphertext must be fed first, -1
 * if the session is over (broken, or closed by the client). */
ssize_t tls_conn_read(proxy_tls_conn_t *s, void *buf, size_t n);
/* Encrypt up to n bytes of plain (borrowed), running the handshake first
 * while it is not done: the bytes taken (0 while the handshake waits for
 * the client), -1 if the session is broken.  The records made, and any the
 * handshake or an earlier read produced, are appended to wire. */
ssize_t tls_conn_write(proxy_tls_conn_t *s, const void *plain, size_t n, proto_buf_t *wire);
/* Whether decrypted bytes wait inside s (a poll on the socket cannot see
 * them). */
bool tls_conn_pending(const proxy_tls_conn_t *s);

/* ------------------------------------------------------------ guard.c */

/*
 * Failed logins per client address (an IPv6 one by its /64), as MySQL's
 * connection_control: after `after` failures in a row, the reply to each
 * further login from the address -- failed or not, so the wait does not
 * tell which -- waits 1 s more per failure, up to max_ms; a success
 * clears the address.  The table is bounded (old addresses are evicted).
 * Thread-safe.  A NULL guard counts nothing and delays nothing.
 */
/* NULL if out of memory.  after 0: replies never wait. */
proxy_guard_t *guard_new(uint32_t after, uint32_t max_ms);
void guard_free(proxy_guard_t *g);
/* How long the reply to a login from peer waits, by its failures so far. */
uint32_t guard_delay_ms(proxy_guard_t *g, const char *peer);
/* A failed login of user from peer: counted, and logged on stderr (user
 * and address, at most once a second per address with the failures since
 * the last line). */
void guard_failed(proxy_guard_t *g, const char *peer, const char *user);
/* A login of user from peer succeeded: its failures are forgotten (and,
 * if it had some, a line on stderr says so). */
void guard_ok(proxy_guard_t *g, const char *peer, const char *user);
/* The clock of hold_until and the loops' deadlines: milliseconds,
 * monotonic, coarse (a reading may lag the time by a tick). */
uint64_t guard_now_ms(void);
/* The guard_now_ms reading at which ms have surely passed since the call:
 * now + ms + the clock's tick. */
uint64_t guard_deadline_ms(uint64_t ms);

/* ------------------------------------------------------------ redact.c */

/*
 * msg (an error of dal or a server) as a client may see it: the backend
 * a datasource stands for ("datasource ds0 (dal@10.0.0.5:3306/shard_0)")
 * loses its parenthesized user@host:port/schema, and the account a server
 * names as its session's ("denied to user 'dal'@'10.0.0.7'", "Access
 * denied for user ...") becomes the client's own ('user'@'peer'), as a
 * server would name its client.  Into out (cap > 0, always terminated);
 * true if anything was taken out.
 */
bool redact_message(const char *msg, const char *user, const char *peer, char *out, size_t cap);

/* ------------------------------------------------------------ server.c */

/* Listen on every address of listen ("HOST:PORT[, ...]"), start threads
 * I/O threads (0: one per core) and as many workers, serve until
 * proxy_stop, then close everything.  0, or -1 with a message on stderr. */
int proxy_serve(proxy_t *px, const char *listen, unsigned threads);
/* on: the calling thread's command takes a lock another command of the
 * same I/O thread could need, so its waits must block rather than switch
 * to that command (nestable; off undoes one on). */
void proxy_pin_thread(bool on);
/* From a signal handler: stop accepting, finish the running commands,
 * close. */
void proxy_stop(proxy_t *px);
/* Hand a client back from a worker to its I/O thread. */
void proxy_done(proxy_client_t *c);
/* For a worker that talks with its client in the middle of a command
 * (LOAD DATA LOCAL): write all of c's output, waiting at most timeout_ms
 * at a time for the socket; 0, or -1 if the client is gone or too slow. */
int proxy_flush_wait(proxy_client_t *c, int timeout_ms);
/* ... and wait at most timeout_ms at a time for c's next packet: 1 with
 * *pkt set (borrowed from c->in until its next use), or -1 if the client
 * is gone, too slow, or sent a malformed packet. */
int proxy_packet_wait(proxy_client_t *c, proto_packet_t *pkt, int timeout_ms);
/*
 * On a worker building a reply: when c's unsent replies have grown past a
 * few megabytes, write them to the socket, waiting (poll) while the client
 * reads, so a big result is not held whole.  0, or -1 when the client
 * stopped reading for the write timeout (60 s) or is gone: its replies
 * are dropped, its socket shut down and c is CLIENT_CLOSING -- the caller
 * stops building.
 */
int proxy_drain(proxy_client_t *c);
/* Whether every address of listen ("HOST:PORT[, ...]") is free of other
 * processes' sockets (dal-proxy's own threads share theirs through
 * SO_REUSEPORT, which would let a second dal-proxy share them too): 0, or
 * -1 with a message on stderr naming the address. */
int proxy_listen_check(const char *listen);
/* The wait_timeout a client that set none has: interactive_timeout's for
 * a CLIENT_INTERACTIVE one, as on a server. */
uint32_t proxy_idle_default(const proxy_client_t *c);
/* SET name = value of c's session: an idle_*transaction_timeout kept for
 * the idle timer; any other name is none of its business. */
void proxy_idle_trx_set(proxy_client_t *c, const char *name, const char *value);
/* After each of c's commands: whether a transaction is open, and whether
 * it wrote, for the idle timer. */
void proxy_idle_note(proxy_client_t *c);
/* Tell the monitors a client figure (DAL_EVENT_CLIENT: "connected",
 * "accepted", "refused", "auth_failed") and its value now. */
void proxy_count(proxy_t *px, const char *figure, uint64_t value);

#endif /* DAL_PROXY_PROXY_H */
