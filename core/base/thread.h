/*
 * thread.h -- how dal starts a thread of its own.
 *
 * A low layer: every module may use it; of dal's it uses only clock.h.
 */
#ifndef DAL_CORE_THREAD_H
#define DAL_CORE_THREAD_H

#include <pthread.h>
#include <stdint.h>

/* pthread_create(thread, NULL, fn, arg), but the new thread starts with
 * every signal blocked; the caller's mask is left as it was.  Returns 0 or
 * pthread_create's error number.  Every thread of the core starts here, and
 * plugins get it as the host API's thread_create. */
int thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

/* Something to do when a thread exits, for what a module keeps per thread
 * (thread-local caches): fn is called with the value the thread armed it
 * with.  Not at the process's exit: what the main thread holds then is the
 * process's to drop.  Define one per module with THREAD_EXIT_INIT. */
typedef struct thread_exit {
    void (*fn)(void *arg);
    pthread_key_t key;
    int state;               /* 0: no key yet, 1: key made, -1: could not be */
} thread_exit_t;

#define THREAD_EXIT_INIT(fn) {(fn), 0, 0}

/* Have x's fn called with arg when the calling thread exits (arg not NULL;
 * replaces what the thread armed x with before).  0, or -1 if that cannot
 * be arranged (no key left): the caller then keeps nothing per thread. */
int thread_exit_arm(thread_exit_t *x, void *arg);

/* A background thread that calls tick(arg) at once, then again when the
 * number of ms tick returned has passed, until ticker_stop: what dal's
 * own threads (XA recovery, reshard fence acknowledgement) are.  The wait
 * is on the monotonic clock, and ticker_stop ends it at once. */
typedef struct ticker {
    uint32_t (*tick)(void *arg);
    void *arg;                  /* borrowed: outlives the thread */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* on CLOCK_MONOTONIC */
    int stop;                   /* under mu */
} ticker_t;

/* Start t's thread (t in place until ticker_stop); 0, or pthread_create's
 * error number (nothing then to stop). */
int ticker_start(ticker_t *t, uint32_t (*tick)(void *arg), void *arg);

/* Ask the thread to stop, wake it, wait for its tick in progress to end
 * and join it. */
void ticker_stop(ticker_t *t);

#endif /* DAL_CORE_THREAD_H */
