/*
 * cancel.h -- stopping a session's running statement from another thread
 * (dal_session_cancel).
 *
 * A session owns a dal_cancel_t.  While it runs a statement it makes that
 * the calling thread's current one (cancel_set_current); exec.c enters
 * every backend connection into it as the statement's SQL is sent there,
 * and the connection leaves when its part is over: when its result has
 * been read whole, or, for rows streamed to the caller, when the pool takes
 * the connection back.  cancel_run, from any thread, opens a connection of
 * its own to each server in the list and sends KILL QUERY with the
 * connection's thread id.  It holds the list's lock meanwhile, so a
 * connection cannot leave -- and go back to the pool, to run another
 * session's statement -- while its id is being killed.
 *
 * cancel_hang_up is for a session whose own client has gone: each
 * connection in the list, and each one entered after, has its sending
 * side shut, so its server sees its client leave as it sees its own
 * clients leave (it ends a lock wait or SLEEP of the statement, finishes
 * other statements); the answer is still read, and the pool closes such
 * a connection when it is given back (server_release).  It never waits
 * for the list's lock: a cancel_run holds that across its connections to
 * the servers (up to a connect and a read timeout), and the thread hanging
 * up may be an event loop serving other clients.  It marks the hang-up
 * due and takes the lock only if free; else the holder, as it lets the
 * lock go, finds the mark and shuts the connections itself (every holder
 * does: unlock_list in cancel.c).
 */
#ifndef DAL_CORE_CANCEL_H
#define DAL_CORE_CANCEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "dal/dal.h"

struct dal_conn;

typedef struct dal_cancel {
    pthread_mutex_t mu;
    struct dal_conn **running;  /* owned array (not the connections), under mu */
    size_t n, cap;
    int hung_up;                /* the hang-up was applied, under mu */
    atomic_int hang_up_due;     /* cancel_hang_up was called and no holder of
                                   mu has applied it yet */
} dal_cancel_t;

void cancel_init(dal_cancel_t *w);
/* Let every connection still entered go (their results outlive nothing of
 * w's), then free w's memory. */
void cancel_destroy(dal_cancel_t *w);
/* The statements the calling thread runs from now on belong to w (NULL:
 * to nobody, which makes cancel_enter a no-op). */
void cancel_set_current(dal_cancel_t *w);
/* c starts running SQL for the current owner, if any.  Never fails: a
 * connection that cannot be entered (no memory) just cannot be cancelled. */
void cancel_enter(struct dal_conn *c);
/* c's part is over (a no-op for a connection not entered). */
void cancel_leave(struct dal_conn *c);
/* KILL QUERY on every connection running SQL for w now.  0, or the first
 * error (DAL_ECONNECT naming the server, DAL_ESERVER) after trying all. */
int cancel_run(dal_cancel_t *w, dal_error_t *err);
/* w's client has gone: shut the sending side of every connection running
 * SQL for w now and of those entered from now on (see above).  Never waits
 * for another thread's hold of w's lock: then that thread does it when it
 * lets the lock go. */
void cancel_hang_up(dal_cancel_t *w);
/* The connections running SQL for w now as out[0..cap) (datasource,
 * server and thread id; state ""): their number, which may exceed cap. */
size_t cancel_threads(dal_cancel_t *w, dal_backend_thread_t *out, size_t cap);

#endif /* DAL_CORE_CANCEL_H */
