/*
 * proxy.h -- dal-proxy's insides: the server (listeners, I/O threads,
 * statement workers) and the clients it serves.
 *
 * The model (docs/proxy.md): each I/O thread runs an epoll loop over its
 * own listening sockets (SO_REUSEPORT, so the kernel spreads new
 * connections) and its clients' sockets; an idle client holds no thread.
 * Reading packets, the handshake and authentication happen on the I/O
 * thread.  A command that runs SQL goes to a bounded pool of workers, which
 * make the blocking libdal calls and leave the whole reply in the client's
 * output buffer; the client then returns to its I/O thread, which writes
 * it.  A client is owned by one thread at a time: its I/O thread, or the
 * worker running its command.
 */
#ifndef DAL_PROXY_PROXY_H
#define DAL_PROXY_PROXY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <dal/dal.h>

#include "protocol.h"

struct proxy_io;

/* One account of [proxy user NAME]: what authentication checks. */
typedef struct proxy_user {
    char *name;                       /* owned */
    uint8_t stage2[PROTO_SHA1_LEN];   /* SHA1(SHA1(password)) */
} proxy_user_t;

/* What every thread reads; set up before the threads start. */
typedef struct proxy {
    dal_t *dal;                       /* borrowed: opened by main */
    char *database;                   /* owned: the schema clients see */
    proxy_user_t *users;              /* owned */
    size_t nusers;
    uint32_t max_connections;
    uint32_t max_allowed_packet;
    atomic_uint nclients;             /* connected now */
    atomic_uint next_id;              /* connection ids */
    atomic_bool stopping;             /* SIGTERM: stop accepting, drain */
    struct proxy_io *ios;             /* owned: the I/O threads */
    size_t nios;
    /* the workers' queue of clients with a command to run */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct proxy_client *queue_head, *queue_tail;
    pthread_t *workers;               /* owned */
    size_t nworkers;
    bool workers_quit;                /* under mu: the I/O threads are gone */
} proxy_t;

typedef enum client_state {
    CLIENT_HANDSHAKE,  /* handshake sent, waiting for the response */
    CLIENT_AUTH_SWITCH,/* auth switch sent, waiting for the scramble */
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
    bool busy;                        /* a worker has it */
    uint64_t caps;                    /* agreed capabilities */
    uint8_t scramble[PROTO_SCRAMBLE_LEN];
    char user[64];
    uint8_t charset;                  /* the handshake's collation id */
    char peer[64];                    /* "127.0.0.1" for messages */
    dal_session_t *session;           /* owned once authenticated */
    proto_reader_t in;
    proto_buf_t out;
    proto_packet_t pending;           /* the command a worker runs */
    uint8_t *cmd;                     /* owned copy of its payload */
    size_t cmd_len;
    uint8_t seq;                      /* next sequence id to send */
    struct proxy_stmts *stmts;        /* owned: prepared statements (stmt.c) */
    struct proxy_client *next;        /* in a queue */
} proxy_client_t;

/* ------------------------------------------------------------ client.c */

/* A new client on fd (accepted, non-blocking): sends the handshake into
 * its output buffer.  NULL if out of memory (fd is then closed). */
proxy_client_t *client_new(proxy_t *px, struct proxy_io *io, int fd, const char *peer);
/* Free c: its session, buffers, and close its socket. */
void client_free(proxy_client_t *c);
/*
 * Take the packets that arrived (on the I/O thread).  Returns 1 if a
 * command must run on a worker (c->cmd is set), 0 if the client only needs
 * its output written, -1 if it must be closed now.
 */
int client_input(proxy_client_t *c);
/* Run c's pending command (on a worker): the reply goes to c->out. */
void client_run(proxy_client_t *c);

/* The replies every command builds from (into c->out). */
void client_err(proxy_client_t *c, uint16_t code, const char *sqlstate, const char *msg);
void client_ok(proxy_client_t *c, uint64_t affected, uint64_t insert_id, unsigned int warnings);
/* A dal error as the MySQL error a client expects: a server's own number
 * and SQLSTATE, else the closest MySQL error for what dal refused. */
void client_dal_error(proxy_client_t *c, const dal_error_t *err);
/* The session's transaction bits (the same numbers as the protocol's). */
uint16_t client_status(const proxy_client_t *c);
/* Column i of r as a column definition: the type, charset, flags and
 * lengths the servers gave (dal's numbers are the protocol's).  The
 * strings borrow from r. */
void client_column(const dal_result_t *r, size_t i, proto_column_t *col);
/* r as one result set (columns, rows as text or, for COM_STMT_EXECUTE,
 * binary, then the end) or as an OK when it has no columns. */
void client_result(proxy_client_t *c, dal_result_t *r, bool binary);
/* Skip spaces and the keyword w (any case, a whole word) at *p: true and
 * *p past it, or false and *p past the spaces only. */
bool client_word_is(const char **p, const char *w);
/* USE, a SET of session variables or SET NAMES (also when prepared):
 * answered by the proxy, the SET kept by the session (1); 0 if sql is none
 * of them. */
int client_session_set(proxy_client_t *c, const char *sql);

/* ------------------------------------------------------------ stmt.c */

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
void stmt_prepare(proxy_client_t *c, const char *sql, size_t len);
/* COM_STMT_EXECUTE, the whole payload (on a worker). */
void stmt_execute(proxy_client_t *c, const uint8_t *payload, size_t len);
/* COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE (no reply) and COM_STMT_RESET
 * (OK, or an error for an unknown statement). */
void stmt_long_data(proxy_client_t *c, uint32_t id, uint16_t param, const proto_str_t *data);
void stmt_close(proxy_client_t *c, uint32_t id);
void stmt_reset(proxy_client_t *c, uint32_t id);
/* Free every statement of c (RESET_CONNECTION, disconnect). */
void stmt_free_all(proxy_client_t *c);

/* ------------------------------------------------------------ schema.c */

/* If sql is `SHOW TABLES [FROM|IN the proxy's database]`, answer it (the
 * logical tables of the configuration and the default datasource's own
 * tables, without the physical tables of sharded ones, sorted) and return
 * true; else false. */
bool schema_show_tables(proxy_client_t *c, const char *sql);

/* ------------------------------------------------------------ server.c */

/* Listen on every address of listen ("HOST:PORT[, ...]"), start threads
 * I/O threads (0: one per core) and as many workers, serve until
 * proxy_stop, then close everything.  0, or -1 with a message on stderr. */
int proxy_serve(proxy_t *px, const char *listen, unsigned threads);
/* From a signal handler: stop accepting, finish the running commands,
 * close. */
void proxy_stop(proxy_t *px);
/* Hand a client back from a worker to its I/O thread. */
void proxy_done(proxy_client_t *c);

#endif /* DAL_PROXY_PROXY_H */
