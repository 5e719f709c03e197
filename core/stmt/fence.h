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
 * The gate: every statement that may write (its first word, or its
 * analysis) counts itself in one of two counters from before it looks at
 * the fence until it has run (fence_enter, fence_leave), and a held one
 * leaves its counter while it waits.  fence_drain flips the counter new
 * statements use and waits for the other to empty: once a fenced
 * configuration is in force and fence_drain has returned, no write of this
 * instance to a fenced table is in flight on the old layout and every new
 * one is held -- what the instance then acknowledges (fence_ack.h).
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

/* Before a statement runs: 0 with *ticket set (pass it to fence_leave once
 * the statement has run), after waiting while a fence in force holds it;
 * DAL_ESTATE (err set, *ticket 0) when it was held longer than the fence's
 * bound. */
int fence_enter(dal_t *dal, dal_sql_cache_t *cache, dal_stmt_text_t sql, unsigned *ticket,
                dal_error_t *err);
void fence_leave(dal_t *dal, unsigned ticket);

/* Wait until every statement that entered the gate before this call has
 * left it.  One caller at a time (the acknowledging thread). */
void fence_drain(dal_t *dal);

/* A transaction keeps the snapshot it began on (txn_snap).  If a newer
 * configuration is in force that keeps a table sql writes elsewhere (a
 * reshard's switch), the write would go to the old layout: DAL_ESTATE
 * then, so the transaction is rolled back and run again.  One relaxed
 * load unless a reload happened during the transaction. */
int fence_txn_check(dal_t *dal, const dal_snapshot_t *txn_snap, dal_sql_cache_t *cache,
                    dal_stmt_text_t sql, dal_error_t *err);

#endif /* DAL_CORE_FENCE_H */
