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
    char peer[64];                    /* "127.0.0.1" for messages */
    dal_session_t *session;           /* owned once authenticated */
    proto_reader_t in;
    proto_buf_t out;
    proto_packet_t pending;           /* the command a worker runs */
    uint8_t *cmd;                     /* owned copy of its payload */
    size_t cmd_len;
    uint8_t seq;                      /* next sequence id to send */
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
