/*
 * handle.c -- both halves of the snapshot swap (handle.h): the statement
 * path's lock-free acquire and the reload's exchange-and-drain.
 */
#include <sched.h>

#include "handle.h"

dal_snapshot_t *snapshot_acquire(dal_t *dal)
{
    dal_snapshot_t *s;

    /* sequentially consistent on purpose: the swap's "exchange, then read
     * readers" must not pass our "announce, then load" */
    atomic_fetch_add(&dal->readers, 1);
    s = atomic_load(&dal->snap);
    snapshot_ref(s);
    atomic_fetch_sub(&dal->readers, 1);
    return s;
}

void snapshot_swap(dal_t *dal, dal_snapshot_t *next)
{
    dal_snapshot_t *old;

    atomic_store(&next->sql_cache, dal->sql_cache);
    old = atomic_exchange(&dal->snap, next);
    atomic_store(&dal->fenced, next->fenced);
    atomic_store(&dal->gen, next->gen);
    sql_cache_limit(dal->sql_cache, next->cfg->sql_cache_bytes,
                    next->cfg->sql_cache_max_statement);

    /* a reader that announced itself before the exchange may still be
     * taking its reference to old */
    while (atomic_load(&dal->readers) != 0)
        sched_yield();
    snapshot_unref(old);
}
