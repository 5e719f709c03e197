/*
 * spare.c -- one freed block per thread and kind (see spare.h).
 */
#include <stdlib.h>

#include "clock.h"
#include "spare.h"
#include "thread.h"

static __thread void *spares[SPARE_KINDS] DAL_TLS_SMALL;
static __thread int registered DAL_TLS_SMALL; /* the exit hook knows this thread's spares */

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

static thread_exit_t spares_exit = THREAD_EXIT_INIT(spares_free);

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
    if (spares[k] == NULL && (registered || thread_exit_arm(&spares_exit, spares) == 0)) {
        registered = 1;
        spares[k] = p;
        return;
    }
    free(p);
}
