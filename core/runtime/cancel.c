/*
 * cancel.c -- KILL QUERY for a session's running statement; see cancel.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h" /* DAL_TLS_SMALL */
#include "cancel.h"
#include "conn.h"
#include "error.h"
#include "iowait.h"

static _Thread_local dal_cancel_t *current DAL_TLS_SMALL;

/* The running statement's: kept aside while an event loop runs others on
 * the thread (iowait.h). */
IOWAIT_KEEP_VAR(current)

void cancel_init(dal_cancel_t *w)
{
    pthread_mutex_init(&w->mu, NULL);
    w->running = NULL;
    w->n = w->cap = 0;
    w->hung_up = 0;
    atomic_init(&w->hang_up_due, 0);
}

void cancel_destroy(dal_cancel_t *w)
{
    size_t i;

    pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n; i++)
        w->running[i]->cancel = NULL;
    pthread_mutex_unlock(&w->mu);
    free(w->running);
    pthread_mutex_destroy(&w->mu);
}

void cancel_set_current(dal_cancel_t *w)
{
    current = w;
}

/* c's server sees its client go (cancel.h); under the list's lock. */
static void hang_up(dal_conn_t *c)
{
    int fd = (int)mysql_get_socket(&c->mysql);

    if (fd >= 0)
        shutdown(fd, SHUT_WR);
    c->discard = 1;
}

/*
 * Apply a due hang-up (cancel_hang_up) whenever the list's lock is free.
 * cancel_hang_up marks it due and then tries the lock; every holder lets
 * the lock go and then looks at the mark (unlock_list).  The fences make
 * that a Dekker pair: of the hang-up's try (after its mark) and a
 * holder's look (after its unlock), one sees the other's write, so a
 * mark is never left with no holder to find it.
 */
static void apply_due(dal_cancel_t *w)
{
    size_t i;

    atomic_thread_fence(memory_order_seq_cst);
    while (atomic_load(&w->hang_up_due) && pthread_mutex_trylock(&w->mu) == 0) {
        if (atomic_exchange(&w->hang_up_due, 0)) {
            w->hung_up = 1;
            for (i = 0; i < w->n; i++)
                hang_up(w->running[i]);
        }
        pthread_mutex_unlock(&w->mu);
        atomic_thread_fence(memory_order_seq_cst);
    }
}

/* Every hold of the list's lock ends here, handing on a hang-up that came
 * meanwhile. */
static void unlock_list(dal_cancel_t *w)
{
    pthread_mutex_unlock(&w->mu);
    apply_due(w);
}

void cancel_enter(dal_conn_t *c)
{
    dal_cancel_t *w = current;

    if (w == NULL || c->cancel != NULL)
        return;
    pthread_mutex_lock(&w->mu);
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4;
        dal_conn_t **v = realloc(w->running, cap * sizeof *v);
        if (v == NULL) {
            unlock_list(w);
            return;
        }
        w->running = v;
        w->cap = cap;
    }
    w->running[w->n++] = c;
    c->cancel = w;
    if (w->hung_up)
        hang_up(c);
    unlock_list(w);
}

void cancel_leave(dal_conn_t *c)
{
    dal_cancel_t *w = c != NULL ? c->cancel : NULL;
    size_t i;

    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n; i++)
        if (w->running[i] == c) {
            w->running[i] = w->running[--w->n];
            break;
        }
    c->cancel = NULL;
    unlock_list(w);
}

/* KILL QUERY of c's server thread, from a connection of our own to the
 * same server. */
static int kill_query(const dal_conn_t *c, dal_error_t *err)
{
    dal_conn_t *k;
    char sql[48];
    int rc = conn_open_server(c->ds, c->replica, &k, err);

    if (rc != 0)
        return rc;
    snprintf(sql, sizeof sql, "KILL QUERY %lu", mysql_thread_id((MYSQL *)&c->mysql));
    if (mysql_real_query(&k->mysql, sql, (unsigned long)strlen(sql)) != 0)
        rc = conn_error(k, DAL_ESERVER, err);
    conn_close(k);
    return rc;
}

int cancel_run(dal_cancel_t *w, dal_error_t *err)
{
    dal_error_t e;
    size_t i;
    int rc = 0, one;

    /* the statements in w may run on this thread (an event loop's
     * coroutines): they take w->mu to leave, so the kills must not switch
     * to them while it is held */
    iowait_block();
    pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n; i++)
        if ((one = kill_query(w->running[i], &e)) != 0 && rc == 0) {
            rc = one;
            if (err != NULL)
                *err = e;
        }
    unlock_list(w);
    iowait_unblock();
    return rc;
}

void cancel_hang_up(dal_cancel_t *w)
{
    atomic_store(&w->hang_up_due, 1);
    apply_due(w);
}

size_t cancel_threads(dal_cancel_t *w, dal_backend_thread_t *out, size_t cap)
{
    size_t i, n;

    pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n && i < cap; i++) {
        const dal_conn_t *c = w->running[i];
        snprintf(out[i].datasource, sizeof out[i].datasource, "%s", c->ds->name);
        out[i].replica = c->replica;
        out[i].id = mysql_thread_id((MYSQL *)&c->mysql);
        out[i].state[0] = '\0';
    }
    n = w->n;
    unlock_list(w);
    return n;
}
