/*
 * handle.c -- both halves of the snapshot swap (handle.h): the statement
 * path's lock-free acquire and the reload's exchange-and-drain; the
 * sessions' slots.
 */
#include <sched.h>

#include "conn.h"
#include "handle.h"
#include "pool.h"

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

/* Drop the references the sessions' slots cache: sessions idle since
 * the swap would otherwise keep the old snapshot (its nodes and their
 * connections) alive. */
static void slots_empty(dal_t *dal)
{
    snap_slot_t *slot;

    pthread_mutex_lock(&dal->slots_mu);
    for (slot = dal->slots; slot != NULL; slot = slot->next)
        snapshot_unref(atomic_exchange(&slot->snap, NULL));
    pthread_mutex_unlock(&dal->slots_mu);
}

void snapshot_swap(dal_t *dal, dal_snapshot_t *next)
{
    dal_snapshot_t *old;

    atomic_store(&next->sql_cache, dal->sql_cache);
    /* A fence is announced before the snapshot carrying it can be seen.
     * fence_drain's flip follows the acknowledging thread's sight of that
     * snapshot, so follows the exchange: a write that counts itself in the
     * gate after the flip then reads the bit and looks for the fence (set
     * after the exchange, the bit could still read clear to it, and the
     * write pass unheld into the fenced snapshot).  It is cleared only
     * after the exchange, so no statement reads it clear while a fenced
     * snapshot is in force (fence.h). */
    if (next->fenced)
        atomic_fetch_or(&dal->fence_watch, FENCE_WATCH_FENCED);
    old = atomic_exchange(&dal->snap, next);
    if (!next->fenced)
        atomic_fetch_and(&dal->fence_watch, ~(unsigned)FENCE_WATCH_FENCED);
    atomic_store(&dal->gen, next->gen);
    sql_cache_limit(dal->sql_cache, next->cfg->sql_cache_bytes,
                    next->cfg->sql_cache_max_statement);

    /* a reader that announced itself before the exchange may still be
     * taking its reference to old */
    while (atomic_load(&dal->readers) != 0)
        sched_yield();
    /* before our own reference goes: the old snapshot's teardown then
     * runs here, not under slots_mu */
    slots_empty(dal);
    snapshot_unref(old);
}

void snap_slot_open(dal_t *dal, snap_slot_t *slot)
{
    pthread_mutex_lock(&dal->slots_mu);
    slot->prev = NULL;
    slot->next = dal->slots;
    if (dal->slots != NULL)
        dal->slots->prev = slot;
    dal->slots = slot;
    pthread_mutex_unlock(&dal->slots_mu);
}

void snap_slot_close(dal_t *dal, snap_slot_t *slot)
{
    pthread_mutex_lock(&dal->slots_mu);
    if (slot->prev != NULL)
        slot->prev->next = slot->next;
    else
        dal->slots = slot->next;
    if (slot->next != NULL)
        slot->next->prev = slot->prev;
    pthread_mutex_unlock(&dal->slots_mu);
    snapshot_unref(atomic_exchange(&slot->snap, NULL));
}

dal_snapshot_t *snap_slot_take(dal_t *dal, snap_slot_t *slot)
{
    dal_snapshot_t *s = atomic_exchange(&slot->snap, NULL);

    /* s is alive (ours), so no new snapshot can have its address */
    if (s != NULL && s == atomic_load(&dal->snap))
        return s;
    snapshot_unref(s);
    return snapshot_acquire(dal);
}

void snap_slot_give(dal_t *dal, snap_slot_t *slot, dal_snapshot_t *s)
{
    /* a nested statement of the same session may have given one back */
    dal_snapshot_t *was = atomic_exchange(&slot->snap, s);

    if (was != NULL)
        snapshot_unref(was);
    /* A swap that exchanged dal->snap after our store empties the slot
     * itself; one that did so before it may have emptied the slot before
     * our store, and then our load sees its exchange.  Both sides exchange
     * the slot, so only one of them drops the reference. */
    if (atomic_load(&dal->snap) != s && (was = atomic_exchange(&slot->snap, NULL)) != NULL)
        snapshot_unref(was);
}

int handle_global_no_backslash(dal_t *dal)
{
    dal_snapshot_t *snap;
    dal_node_t *node;
    dal_conn_t *c;
    dal_error_t err;
    int reused;

    if (conn_global_known())
        return conn_global_no_backslash();
    snap = snapshot_acquire(dal);
    node = snapshot_schema_node(snap, NULL);
    if (node == NULL && snap->nnodes > 0)
        node = snap->nodes[0];
    /* connecting reads the global mode (conn.c, read_global_escaping) */
    if (node != NULL && server_acquire(&node->master, &c, &reused, &err) == 0)
        server_release(&node->master, c, 1);
    snapshot_unref(snap);
    return conn_global_no_backslash();
}
