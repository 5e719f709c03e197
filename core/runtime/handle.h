/*
 * handle.h -- the dal_t handle, and the protocol by which the statement path
 * reads its current snapshot while a reload replaces it.
 *
 * Readers (every statement) take the snapshot without a lock: they announce
 * themselves in `readers` while they load the pointer and take their
 * reference.  The writer (a reload, one at a time under reload_mu) exchanges
 * the pointer, then waits for the announced readers to drain before it
 * drops the old snapshot's reference.  Both halves live in handle.c.
 *
 * That acquire writes two lines every thread writes (readers, the
 * snapshot's refs), four atomic operations a statement.  A session keeps
 * instead the reference of its last statement in a slot of its own
 * (snap_slot_t) and reuses it while the snapshot is current, so its
 * statements write only the slot's line.  The writer empties every slot
 * after the exchange, so a replaced snapshot is not kept alive by idle
 * sessions.
 */
#ifndef DAL_CORE_HANDLE_H
#define DAL_CORE_HANDLE_H

#include <pthread.h>

#include "log.h"
#include "snapshot.h"
#include "source.h"
#include "sql_cache.h"

struct dal_xa_daemon;

/* A session's cached snapshot reference (see above), in dal's list of
 * slots from snap_slot_open to snap_slot_close. */
typedef struct snap_slot {
    _Atomic(dal_snapshot_t *) snap; /* one reference, or NULL: none cached, or a
                                       statement of the session has it */
    atomic_uint ungated;            /* the session's statements in flight that passed
                                       the write gate while it was quiet (fence.h) */
    unsigned drained;               /* fence_drain's mark: ungated seen at 0 (under
                                       slots_mu) */
    struct snap_slot *prev, *next;  /* in dal->slots, under slots_mu */
} snap_slot_t;

/* dal->fence_watch: why statements must take the write gate (fence.h).
 * While none is set they pass it without reading their text. */
enum {
    FENCE_WATCH_REG = 1,    /* the instance follows its source and has not registered */
    FENCE_WATCH_LEASE = 2,  /* a reshard is in progress: writes need the lease */
    FENCE_WATCH_FENCED = 4, /* the snapshot in force (or the one going in) has a fence */
    FENCE_WATCH_DRAIN = 8   /* fence_drain runs */
};

struct dal {
    dal_logger_t log;
    dal_source_t *source;       /* owned: where the configuration comes from */
    char *plugin_dir;           /* owned: dal_open_opts_t.plugin_dir, or NULL */
    dal_sql_cache_t *sql_cache; /* owned; shared by every snapshot */
    _Atomic(dal_snapshot_t *) snap; /* one reference owned; see above */
    atomic_uint gen;            /* snap->gen, readable without a reference */
    atomic_uint fence_watch;    /* FENCE_WATCH_* bits; 0: the write gate is quiet */
    atomic_uint fence_ungated;  /* the sessionless statements' ungated (snap_slot_t) */
    unsigned fence_drains;      /* fence_drain's last mark (its one caller's) */
    atomic_uint fence_epoch;    /* the write gate (fence.h): its low bit picks the counter */
    atomic_long fence_active[2]; /* statements that may write, in flight, per counter */
    atomic_int fence_reg;       /* 0: no write yet; 1: a write wants this instance registered
                                   for fences; 2: done (fence_ack.h) */
    _Atomic uint64_t fence_lease_ns; /* while a reshard is in progress: this instance may
                                   write until then (CLOCK_MONOTONIC ns; 0: no lease
                                   needed), renewed by each beat (fence_ack.h) */
    struct dal_fence_acker *acker; /* owned: acknowledges fences (fence_ack.h), or NULL */
    atomic_uint readers;
    pthread_mutex_t slots_mu;   /* guards slots; taken after reload_mu */
    snap_slot_t *slots;         /* every open session's (not owned) */
    pthread_mutex_t reload_mu;  /* one reload at a time */
    atomic_ulong reloads, reload_failures;
    atomic_ulong resyncs;       /* whole re-reads after the store forgot our revision */
    _Atomic int64_t revision;   /* the source's revision of the document in force; 0: none */
    atomic_int source_state;    /* dal_source_state_t */
    atomic_int from_cache;      /* running from the cache file since dal_open */
    dal_source_sink_t sink;     /* handed to the source while it watches */
    struct dal_xa_daemon *xa;   /* owned: background XA recovery (xa_daemon.h), or NULL */
};

/* The current snapshot with one reference for the caller. */
dal_snapshot_t *snapshot_acquire(dal_t *dal);

/* Put next (its reference passes to dal) in force, share dal's SQL cache
 * with it, and drop the old snapshot's reference once no reader can still
 * be taking it, and the references the slots cache.  The caller holds
 * reload_mu. */
void snapshot_swap(dal_t *dal, dal_snapshot_t *next);

/* Put slot (zeroed, owned by the caller, which must keep it in place) in
 * dal's list; snap_slot_close takes it out and drops its reference, before
 * dal_close. */
void snap_slot_open(dal_t *dal, snap_slot_t *slot);
void snap_slot_close(dal_t *dal, snap_slot_t *slot);

/* The current snapshot with one reference for the caller: the slot's,
 * when it is current, else one from snapshot_acquire.  One thread at a
 * time takes and gives a slot's reference (a session's). */
dal_snapshot_t *snap_slot_take(dal_t *dal, snap_slot_t *slot);

/* Give the caller's reference to s back to the slot, for the next take. */
void snap_slot_give(dal_t *dal, snap_slot_t *slot, dal_snapshot_t *s);

/* Whether statements of no session, and a new session's first, are read
 * under NO_BACKSLASH_ESCAPES: the servers' global sql_mode
 * (conn_global_no_backslash), which decides where a quoted string ends.
 * Before the process's first connection, one is made to learn it (to the
 * master of the default datasource, else of the first), once; when that
 * server cannot be reached the answer is backslash escapes, and the
 * statement's own connection fails the same way. */
int handle_global_no_backslash(dal_t *dal);

#endif /* DAL_CORE_HANDLE_H */
