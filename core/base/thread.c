/*
 * thread.c -- how dal starts a thread of its own.
 */
#include <pthread.h>
#include <signal.h>

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
