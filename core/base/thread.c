/*
 * thread.c -- how dal starts a thread of its own.
 */
#include <pthread.h>
#include <signal.h>

#include "clock.h"
#include "thread.h"

/* The application's threads take its signals, never ours: dal-proxy blocks
 * SIGTERM and SIGHUP in the threads it makes and waits for them with
 * sigwait in one.  dal_open may run before the application blocks them, or
 * in a thread that never does; a thread of ours that inherited that mask
 * could take SIGTERM and end the process without the graceful shutdown.
 * The mask is set in the caller around pthread_create, because a new
 * thread inherits it: set inside the thread, a signal could still arrive
 * before its first instruction. */
int thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(thread, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int thread_exit_arm(thread_exit_t *x, void *arg)
{
    /* a thread arms a module once: a lock costs nothing here */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int ok;

    pthread_mutex_lock(&mu);
    if (x->state == 0)
        x->state = pthread_key_create(&x->key, x->fn) == 0 ? 1 : -1;
    ok = x->state == 1;
    pthread_mutex_unlock(&mu);
    return ok && pthread_setspecific(x->key, arg) == 0 ? 0 : -1;
}

static void *ticker_run(void *arg)
{
    ticker_t *t = arg;
    struct timespec until;
    uint32_t wait_ms;

    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        pthread_mutex_unlock(&t->mu);
        wait_ms = t->tick(t->arg);
        pthread_mutex_lock(&t->mu);
        clock_deadline_after_ms(&until, (long)wait_ms);
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int ticker_start(ticker_t *t, uint32_t (*tick)(void *arg), void *arg)
{
    pthread_condattr_t ca;
    int rc;

    t->tick = tick;
    t->arg = arg;
    t->stop = 0;
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    if ((rc = thread_start(&t->thread, ticker_run, t)) != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
    }
    return rc;
}

void ticker_stop(ticker_t *t)
{
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
}
