/*
 * fence.h -- the write fence of `dal reshard switch`.
 *
 * A [table] section with write_fence = DEADLINE (Unix time in
 * milliseconds) in the configuration in force holds every statement that
 * writes (INSERT, REPLACE, UPDATE, DELETE) and names that table, until a
 * configuration without the fence is in force or the deadline passes;
 * then the statement runs on the configuration in force at that moment.
 * Reads are never held.  So while the reshard tool swaps the configuration
 * to the new layout, no write reaches the old one, and a write waits at
 * most until the deadline the tool chose (its --max-write-pause).
 */
#ifndef DAL_CORE_FENCE_H
#define DAL_CORE_FENCE_H

#include "handle.h"
#include "stmt.h"

/* Does the configuration in force fence any table?  One relaxed load: the
 * statement paths ask it before anything else, and only then call
 * fence_wait. */
static inline int fence_up(dal_t *dal)
{
    return atomic_load_explicit(&dal->fenced, memory_order_relaxed);
}

/* Wait while a fence in force holds sql (text or prepared analysis, from
 * cache): a write naming a fenced table waits until a configuration
 * without that fence is in force or the fence's deadline passes.  1 if it
 * waited, 0 if the statement was not held. */
int fence_wait(dal_t *dal, dal_sql_cache_t *cache, dal_stmt_text_t sql);

/* A transaction keeps the snapshot it began on (txn_snap).  If a newer
 * configuration is in force that keeps a table sql writes elsewhere (a
 * reshard's switch), the write would go to the old layout: DAL_ESTATE
 * then, so the transaction is rolled back and run again.  One relaxed
 * load unless a reload happened during the transaction. */
int fence_txn_check(dal_t *dal, const dal_snapshot_t *txn_snap, dal_sql_cache_t *cache,
                    dal_stmt_text_t sql, dal_error_t *err);

#endif /* DAL_CORE_FENCE_H */
