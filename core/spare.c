/*
 * spare.c -- one freed block per thread and kind (see spare.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "spare.h"

static __thread void *spares[SPARE_KINDS];
static __thread int registered;  /* the exit destructor knows this thread's spares */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

/* At a thread's exit, with the address of its spares. */
static void spares_free(void *v)
{
    void **s = v;
    int k;

    for (k = 0; k < SPARE_KINDS; k++) {
        free(s[k]);
        s[k] = NULL;
    }
    /* a later key's destructor may still free a result: it registers again */
    registered = 0;
}

static void exit_key_create(void)
{
    exit_key_ok = pthread_key_create(&exit_key, spares_free) == 0;
}

/* Whether this thread's spares will be freed at its exit: a thread that
 * cannot be told so (no key) keeps nothing. */
static int thread_registered(void)
{
    if (registered)
        return 1;
    pthread_once(&exit_once, exit_key_create);
    if (!exit_key_ok || pthread_setspecific(exit_key, spares) != 0)
        return 0;
    registered = 1;
    return 1;
}

void *spare_take(spare_kind_t k, size_t size)
{
    void *p = spares[k];

    if (p == NULL)
        return malloc(size);
    spares[k] = NULL;
    return p;
}

void spare_give(spare_kind_t k, void *p)
{
    if (p == NULL)
        return;
    if (spares[k] == NULL && thread_registered()) {
        spares[k] = p;
        return;
    }
    free(p);
}
