/*
 * coro.c -- coroutines, with AddressSanitizer told of every stack switch
 * (its fiber annotations) when the build uses it.  On x86-64 a switch
 * saves the callee-saved registers and swaps stack pointers (coro_switch
 * below): swapcontext would also save and restore the signal mask, two
 * system calls a switch, which the proxy makes twice a statement.
 * Elsewhere, ucontext.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

#if defined(__x86_64__)
#define CORO_ASM 1
/* Save the callee-saved registers and the x87/SSE control words on the
 * current stack, store its pointer in *save, continue on the stack at
 * next (one saved the same way, or made by prime). */
void coro_switch(void **save, void *next);
__asm__(".text\n"
        ".globl coro_switch\n"
        ".hidden coro_switch\n"
        ".type coro_switch,@function\n"
        "coro_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size coro_switch,.-coro_switch\n"
        ".section .note.GNU-stack,\"\",@progbits\n"
        ".text\n");
#endif

struct coro {
#ifdef CORO_ASM
    void *sp;                     /* the coroutine's saved stack pointer */
    void *caller_sp;              /* the resumer's, while it runs */
#else
    ucontext_t ctx;               /* the coroutine's */
    ucontext_t caller;            /* the resumer's, while it runs */
#endif
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
#ifdef CORO_ASM
    coro_switch(&co->sp, co->caller_sp);
#else
    swapcontext(&co->ctx, &co->caller);
#endif
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

#ifdef CORO_ASM
/* A new stack as coro_switch leaves one: the control words, six
 * registers, then trampoline as the return address, so that it starts
 * with the stack aligned as after a call. */
static void prime(coro_t *co)
{
    uintptr_t top = ((uintptr_t)co->stack + co->stack_len) & ~(uintptr_t)15;
    /* 8 words, then one for trampoline's (never used) return address:
     * after the ret the stack pointer is top - 8, as after a call */
    void **sp = (void **)(top - 72);
    uint32_t csr[2] = {0, 0};
    uint16_t cw;
    size_t i;

    __asm__ volatile("stmxcsr %0" : "=m"(csr[0]));
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    memcpy(&csr[1], &cw, sizeof cw);
    memcpy(&sp[0], csr, sizeof csr);
    for (i = 1; i <= 6; i++)
        sp[i] = NULL;              /* r15 .. rbp */
    sp[7] = (void *)trampoline;
    sp[8] = NULL;
    co->sp = sp;
}
#endif

void coro_start(coro_t *co, void (*fn)(void *arg), void *arg)
{
#ifdef CORO_ASM
    prime(co);
#else
    getcontext(&co->ctx);
    co->ctx.uc_stack.ss_sp = co->stack;
    co->ctx.uc_stack.ss_size = co->stack_len;
    co->ctx.uc_link = NULL;
    makecontext(&co->ctx, trampoline, 0);
#endif
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
#ifdef CORO_ASM
    coro_switch(&co->caller_sp, co->sp);
#else
    swapcontext(&co->caller, &co->ctx);
#endif
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
