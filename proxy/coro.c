/*
 * coro.c -- coroutines on ucontext, with AddressSanitizer told of every
 * stack switch (its fiber annotations) when the build uses it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "coro.h"

#if defined(__SANITIZE_ADDRESS__)
#define CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORO_ASAN 1
#endif
#endif

#ifdef CORO_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

struct coro {
    ucontext_t ctx;               /* the coroutine's */
    ucontext_t caller;            /* the resumer's, while it runs */
    void *map;                    /* owned: guard page + stack */
    size_t map_len;
    void *stack;                  /* above the guard page */
    size_t stack_len;
    void (*fn)(void *arg);
    void *arg;
    int done;                     /* fn returned */
    /* AddressSanitizer's view: the resumer's stack, and the coroutine's
     * fake stack while it is switched out */
    const void *caller_bottom;
    size_t caller_size;
    void *fake;
};

static _Thread_local coro_t *running;

coro_t *coro_current(void)
{
    return running;
}

coro_t *coro_new(size_t stack_bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (stack_bytes + page - 1) / page * page;
    coro_t *co = calloc(1, sizeof *co);

    if (co == NULL)
        return NULL;
    co->map_len = len + page;
    co->map = mmap(NULL, co->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                   -1, 0);
    if (co->map == MAP_FAILED || mprotect(co->map, page, PROT_NONE) != 0) {
        if (co->map != MAP_FAILED)
            munmap(co->map, co->map_len);
        free(co);
        return NULL;
    }
    co->stack = (char *)co->map + page;
    co->stack_len = len;
    co->done = 1;
    return co;
}

void coro_free(coro_t *co)
{
    if (co == NULL)
        return;
    munmap(co->map, co->map_len);
    free(co);
}

/* Leave the coroutine for its resumer; gone: it never comes back. */
static void switch_out(coro_t *co, int gone)
{
#ifdef CORO_ASAN
    __sanitizer_start_switch_fiber(gone ? NULL : &co->fake, co->caller_bottom, co->caller_size);
#endif
    (void)gone;
    swapcontext(&co->ctx, &co->caller);
#ifdef CORO_ASAN
    __sanitizer_finish_switch_fiber(co->fake, &co->caller_bottom, &co->caller_size);
#endif
}

static void trampoline(void)
{
    coro_t *co = running;

#ifdef CORO_ASAN
    __sanitizer_finish_switch_fiber(NULL, &co->caller_bottom, &co->caller_size);
#endif
    co->fn(co->arg);
    co->done = 1;
    switch_out(co, 1);
    abort(); /* a finished coroutine is never resumed without coro_start */
}

void coro_start(coro_t *co, void (*fn)(void *arg), void *arg)
{
    getcontext(&co->ctx);
    co->ctx.uc_stack.ss_sp = co->stack;
    co->ctx.uc_stack.ss_size = co->stack_len;
    co->ctx.uc_link = NULL;
    makecontext(&co->ctx, trampoline, 0);
    co->fn = fn;
    co->arg = arg;
    co->done = 0;
}

int coro_resume(coro_t *co)
{
    coro_t *was = running;
#ifdef CORO_ASAN
    void *fake = NULL;
#endif

    running = co;
#ifdef CORO_ASAN
    __sanitizer_start_switch_fiber(&fake, co->stack, co->stack_len);
#endif
    swapcontext(&co->caller, &co->ctx);
#ifdef CORO_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
    running = was;
    return co->done ? 0 : 1;
}

void coro_yield(void)
{
    switch_out(running, 0);
}
