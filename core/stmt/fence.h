/*
 * fence.h -- the write fence of `dal reshard switch`.
 *
 * A [table] section with write_fence = GENERATION_BOUND in the configuration
 * in force holds every statement that writes the table (INSERT, REPLACE,
 * UPDATE, DELETE naming it; LOAD DATA whose words name it) until a
 * configuration without that fence is in force; then the statement runs on
 * the configuration in force at that moment.  Reads are never held.  A
 * statement is never released into the layout of the fenced configuration
 * by time alone: one held longer than BOUND milliseconds fails with an
 * error that names the fence (the switch that set it died, or cannot reach
 * the source).
 *
 * The gate: while a fence may matter, every statement that may write (its
 * first word, or its analysis) counts itself in one of two counters from
 * before it looks at the fence until it has run (fence_enter,
 * fence_leave), and a held one leaves its counter while it waits.
 * fence_drain flips the counter new statements use and waits for the
 * other to empty: once a fenced configuration is in force and fence_drain
 * has returned, no write of this instance to a fenced table is in flight
 * on the old layout and every new one is held -- what the instance then
 * acknowledges (fence_ack.h).
 *
 * The watch: the gate matters only while dal->fence_watch is not 0 (a
 * fence in the configuration, or one going in; a reshard's lease; a
 * registration still to make; a drain running: handle.h).  While it is 0
 * a statement only counts itself in its own `ungated` counter (its
 * session's snap_slot_t, a line no other thread writes; the sessionless
 * dal_query path's is dal's) from before it loads the watch until it has
 * run, and reads no word of its text.  fence_drain sets FENCE_WATCH_DRAIN
 * and then waits until it has seen every ungated counter at 0 once,
 * before it flips the gate.  Both sides are sequentially consistent, so
 * in their single order a statement's load of the watch either follows
 * the drain's setting of the bit (the statement sees it, takes its count
 * back and goes through the gate, whose argument above then holds) or
 * does not, and then its count preceded the drain's reading of the
 * counters (the drain waits until it has run).  So a write that passed
 * while the watch was quiet -- on whatever configuration it then ran --
 * has finished before fence_drain returns, that is before the fence is
 * acknowledged.  A statement that passed quietly may be a read: the
 * drain waits for it too (a long one begun before the instance saw the
 * reshard delays the acknowledgement by what is left of it).
 */
#ifndef DAL_CORE_FENCE_H
#define DAL_CORE_FENCE_H

#include "handle.h"
#include "stmt.h"

/* The fence of a write_fence value: its generation (0: not a fence) and
 * the longest a write waits for it, in ms. */
uint64_t fence_parse(const char *value, uint64_t *bound_ms);

/* The generation of the fence on the table called name in cfg, or 0. */
uint64_t fence_of(const dal_config_t *cfg, const char *name, uint64_t *bound_ms);

/* Before a statement runs: 0 with *ticket set (pass it and ungated, the
 * caller's counter -- see above -- to fence_leave once the statement has
 * run), after waiting while a fence in force holds it; DAL_ESTATE (err
 * set, *ticket 0) when it was held longer than the fence's bound. */
int fence_enter(dal_t *dal, atomic_uint *ungated, dal_sql_cache_t *cache, dal_stmt_text_t sql,
                unsigned *ticket, dal_error_t *err);
void fence_leave(dal_t *dal, atomic_uint *ungated, unsigned ticket);

/* Wait until every statement that entered the gate, or passed the quiet
 * watch, before this call has left it.  One caller at a time (the
 * acknowledging thread). */
void fence_drain(dal_t *dal);

/* A transaction keeps the snapshot it began on (txn_snap).  If a newer
 * configuration is in force that keeps a table sql writes elsewhere (a
 * reshard's switch), the write would go to the old layout: DAL_ESTATE
 * then, so the transaction is rolled back and run again.  One relaxed
 * load unless a reload happened during the transaction. */
int fence_txn_check(dal_t *dal, const dal_snapshot_t *txn_snap, dal_sql_cache_t *cache,
                    dal_stmt_text_t sql, dal_error_t *err);

#endif /* DAL_CORE_FENCE_H */
