/*
 * coro.h -- coroutines for the I/O threads: a statement that waits for a
 * backend runs on a stack of its own and switches back to its thread's
 * event loop, which resumes it when the socket is ready (server.c).
 *
 * One thread resumes a coroutine at a time; a coroutine runs on the
 * thread that made it.  Stacks are mapped with a guard page below them,
 * so an overflow faults instead of writing over other memory.
 */
#ifndef DAL_PROXY_CORO_H
#define DAL_PROXY_CORO_H

#include <stddef.h>

typedef struct coro coro_t;

/* A coroutine with a stack of stack_bytes (rounded to pages), or NULL. */
coro_t *coro_new(size_t stack_bytes);
void coro_free(coro_t *co);
/* Make co run fn(arg) from its start at the next coro_resume; co must not
 * be running (new, or its last fn returned). */
void coro_start(coro_t *co, void (*fn)(void *arg), void *arg);
/* Run co until it yields (1) or its fn returns (0). */
int coro_resume(coro_t *co);
/* From inside a coroutine: back to the coro_resume that ran it. */
void coro_yield(void);
/* The coroutine the calling thread runs now, or NULL (its own stack). */
coro_t *coro_current(void);

#endif
