/*
 * thread.h -- how dal starts a thread of its own.
 *
 * A low layer: every module may use it, it uses nothing of dal's.
 */
#ifndef DAL_CORE_THREAD_H
#define DAL_CORE_THREAD_H

#include <pthread.h>

/* pthread_create(thread, NULL, fn, arg), but the new thread starts with
 * every signal blocked; the caller's mask is left as it was.  Returns 0 or
 * pthread_create's error number.  Every thread of the core starts here, and
 * plugins get it as the host API's thread_create. */
int thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif /* DAL_CORE_THREAD_H */
