/*
 * xa_daemon.c -- background XA recovery (declared in dal_int.h, which
 * dal_open and dal_close call it from).
 *
 * The interval and the log are read from the running snapshot at each
 * pass, so a reload changes them; a reload that adds xa_log to a
 * configuration that had none starts the thread, and one that removes it
 * leaves the thread looking again each second.  The lease lasts three
 * intervals: a holder that dies is replaced within that.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "dal_int.h"
#include "clock.h"
#include "error.h"
#include "thread.h"
#include "xa.h"

struct dal_xa_daemon {
    dal_t *dal;             /* borrowed: it outlives the thread */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* on CLOCK_MONOTONIC */
    int stop;               /* under mu */
    char owner[XA_ID_MAX + 1]; /* this instance in the lease row */
};

/* One pass if this instance holds (or takes) the lease; how long to wait
 * for the next one. */
static uint32_t daemon_pass(struct dal_xa_daemon *d)
{
    dal_snapshot_t *snap = snapshot_acquire(d->dal);
    uint32_t interval = snap->cfg->xa_recover_interval_ms;
    dal_xa_report_t rep;
    dal_error_t err;
    int held = 0;

    if (snap->cfg->xa_log != NULL && interval > 0 &&
        xa_lease_take(snap, d->owner, interval * 3ull, &held, &err) != 0)
        log_message(snap->log, DAL_LOG_WARN, "xa", "recovery lease: %s", err.message);
    snapshot_unref(snap);
    if (held && dal_xa_recover(d->dal, UINT32_MAX, &rep, &err) != 0)
        log_message(&d->dal->log, DAL_LOG_WARN, "xa", "recovery: %s", err.message);
    else if (held && rep.committed + rep.rolled_back + rep.pruned > 0)
        log_message(&d->dal->log, DAL_LOG_INFO, "xa",
                    "recovery: committed %u, rolled back %u, pruned %u decisions",
                    rep.committed, rep.rolled_back, rep.pruned);
    /* turned off by a reload: look again now and then */
    return interval > 0 ? interval : 1000;
}

static void *daemon_run(void *arg)
{
    struct dal_xa_daemon *d = arg;
    struct timespec until;
    uint32_t wait_ms;

    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        pthread_mutex_unlock(&d->mu);
        wait_ms = daemon_pass(d);
        pthread_mutex_lock(&d->mu);
        clock_deadline_after_ms(&until, (long)wait_ms);
        while (!d->stop && pthread_cond_timedwait(&d->cv, &d->mu, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int xa_daemon_start(dal_t *dal, struct dal_xa_daemon **out, dal_error_t *err)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    int wanted = snap->cfg->xa_log != NULL && snap->cfg->xa_recover_interval_ms > 0;
    struct dal_xa_daemon *d;
    pthread_condattr_t ca;

    snapshot_unref(snap);
    *out = NULL;
    if (!wanted)
        return 0;
    if ((d = calloc(1, sizeof *d)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    d->dal = dal;
    xa_new_gtrid(d->owner); /* unique per instance and call: a fine owner name */
    pthread_mutex_init(&d->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (thread_start(&d->thread, daemon_run, d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return err_set(err, DAL_EIO, "cannot start the XA recovery thread");
    }
    *out = d;
    return 0;
}

void xa_daemon_stop(struct dal_xa_daemon *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void xa_daemon_follow(dal_t *dal)
{
    dal_error_t err;

    if (dal->xa == NULL && xa_daemon_start(dal, &dal->xa, &err) != 0)
        log_message(&dal->log, DAL_LOG_WARN, "xa", "after the reload: %s", err.message);
}
