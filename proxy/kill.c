/*
 * kill.c -- KILL with the proxy's own connection ids.
 *
 * A client's id is the proxy's (the handshake and CONNECTION_ID() give it),
 * never a backend thread id: a server's KILL would end one of dal's pooled
 * connections, used by other clients a moment later.  Ending a connection
 * is a shutdown() of its socket: its own thread then sees the end of input
 * and closes it as if the client had gone, rolling back its transaction.
 * Stopping a statement is its session's dal_session_cancel, which sends
 * KILL QUERY to the servers for the backend connections running it.
 *
 * A client that hangs up while its statement runs is not killed: its
 * session's backend connections are half-closed (dal_session_hang_up),
 * so each server sees its own client go and does what it does then --
 * ends the statement's wait for a lock or SLEEP, lets any other statement
 * finish -- and the client stays listed (SHOW PROCESSLIST) until the
 * statement has ended there, as on a server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy.h"
#include "recognise.h"
#include "reply.h"
#include "text.h"

void kill_register(proxy_client_t *c)
{
    proxy_t *px = c->px;

    pthread_mutex_lock(&px->clients_mu);
    c->all_prev = NULL;
    c->all_next = px->clients;
    if (px->clients != NULL)
        px->clients->all_prev = c;
    px->clients = c;
    pthread_mutex_unlock(&px->clients_mu);
}

void kill_unregister(proxy_client_t *c)
{
    proxy_t *px = c->px;

    pthread_mutex_lock(&px->clients_mu);
    if (c->all_prev != NULL)
        c->all_prev->all_next = c->all_next;
    else if (px->clients == c)
        px->clients = c->all_next;
    if (c->all_next != NULL)
        c->all_next->all_prev = c->all_prev;
    c->all_prev = c->all_next = NULL;
    pthread_mutex_unlock(&px->clients_mu);
}

/* The old session is closed with session_mu free: closing may wait for
 * its servers (a rollback), and a wait in an inline statement runs the
 * thread's other clients, whose KILL QUERY of c takes it. */
void kill_set_session(proxy_client_t *c, dal_session_t *s)
{
    dal_session_t *old;

    pthread_mutex_lock(&c->session_mu);
    old = c->session;
    c->session = s;
    pthread_mutex_unlock(&c->session_mu);
    dal_session_close(old);
}

/*
 * On the thread running c's command, which alone replaces c->session
 * (kill_set_session), so the session is read and stays open without
 * session_mu: that lock keeps sessions open for other threads, and a
 * KILL QUERY of c holds it while it connects to the servers, up to their
 * timeouts, which an I/O thread must not wait out.  dal_session_hang_up
 * never waits for that KILL either: the hang-up, seen once, is then
 * carried out by the KILL as it ends.
 */
void kill_hang_up(proxy_client_t *c)
{
    if (c->hung_up)
        return;
    c->hung_up = true;
    if (c->session != NULL)
        dal_session_hang_up(c->session);
}

typedef enum kill_outcome { KILL_DONE, KILL_UNKNOWN, KILL_NOT_OWNER, KILL_FAILED } kill_outcome_t;

/* KILL QUERY of t, which runs a statement: its session asks the servers
 * to stop it (dal_session_cancel).  Called under clients_mu, which it
 * drops once t's session_mu is held: the cancel opens connections and
 * must not hold up every other client's login and logout meanwhile. */
static kill_outcome_t cancel_statement(proxy_t *px, proxy_client_t *t, dal_error_t *err)
{
    int rc = 0;

    pthread_mutex_lock(&t->session_mu);
    pthread_mutex_unlock(&px->clients_mu);
    if (t->session != NULL)
        rc = dal_session_cancel(t->session, err);
    pthread_mutex_unlock(&t->session_mu);
    return rc == 0 ? KILL_DONE : KILL_FAILED;
}

/*
 * Under clients_mu, so the target cannot be freed meanwhile (client_free
 * unregisters before closing the socket).  A client may end only its own
 * user's connections, as on a server without the CONNECTION ADMIN
 * privilege.
 */
static kill_outcome_t kill_id(proxy_client_t *self, uint32_t id, bool query_only,
                              dal_error_t *err)
{
    proxy_t *px = self->px;
    proxy_client_t *t;
    kill_outcome_t out = KILL_UNKNOWN;

    pthread_mutex_lock(&px->clients_mu);
    for (t = px->clients; t != NULL && t->id != id; t = t->all_next)
        ;
    if (t == NULL || !processlist_listed(t))
        out = KILL_UNKNOWN;
    else if (strcmp(t->user, self->user) != 0)
        out = KILL_NOT_OWNER;
    else if (query_only && t != self && atomic_load(&t->running))
        return cancel_statement(px, t, err);    /* clients_mu is dropped */
    else if (query_only)
        out = KILL_DONE;                        /* nothing runs: a no-op, as on a server */
    else {
        atomic_store(&t->killed, true);  /* Aborted_clients counts it */
        if (t != self)
            shutdown(t->fd, SHUT_RDWR);
        out = KILL_DONE;
    }
    pthread_mutex_unlock(&px->clients_mu);
    return out;
}

bool kill_statement(proxy_client_t *c, const char *sql, size_t len)
{
    const char *p = sql;
    bool query_only;
    uint32_t id;
    char msg[160];
    dal_error_t err;

    if (!text_word_is(&p, "KILL"))
        return false;
    if (!recognise_kill(sql, len, c->id, &query_only, &id)) {
        reply_err(c, 1235, "42000",
                  "dal-proxy takes KILL [CONNECTION | QUERY] id, with an id of its own "
                   "connections");
        return true;
    }
    switch (kill_id(c, id, query_only, &err)) {
    case KILL_DONE:
        if (!query_only && id == c->id) {
            reply_err(c, 1927, "70100", "Connection was killed"); /* ER_CONNECTION_KILLED */
            c->state = CLIENT_CLOSING;
        } else {
            reply_ok(c, 0, 0, 0);
        }
        break;
    case KILL_UNKNOWN:
        snprintf(msg, sizeof msg, "Unknown thread id: %u", id);
        reply_err(c, 1094, "HY000", msg); /* ER_NO_SUCH_THREAD */
        break;
    case KILL_NOT_OWNER:
        snprintf(msg, sizeof msg, "You are not owner of thread %u", id);
        reply_err(c, 1095, "HY000", msg); /* ER_KILL_DENIED_ERROR */
        break;
    case KILL_FAILED:
        reply_dal_error(c, &err);
        break;
    }
    return true;
}
