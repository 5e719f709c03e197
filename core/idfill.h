/*
 * idfill.h -- generated IDs on INSERT (MTDDL's @IDGen).
 *
 * A [table] with `id_column = id` and `idgen = NAME` gets an ID from the
 * generator for every row of an INSERT/REPLACE that omits the column or
 * gives NULL for it.  The IDs become ? parameters of a rewritten statement
 * (so the rewritten text is the same from call to call and its analysis is
 * cached) and are filled in before routing, so the ID can itself be the
 * shard key.
 */
#ifndef DAL_CORE_IDFILL_H
#define DAL_CORE_IDFILL_H

#include "snapshot.h"
#include "sql.h"

typedef struct dal_idfill {
    char *sql;             /* owned: the statement to run instead, or NULL: nothing to fill */
    size_t sql_len;
    dal_value_t *params;   /* owned: its parameters (strings borrowed from the caller's) */
    size_t nparams;
    int64_t *ids;          /* owned: the generated IDs, in row order */
    size_t nids;
} dal_idfill_t;

/* Fill *f for statement s (zeroed when there is nothing to do). */
int dal_idfill_prepare(const dal_snapshot_t *snap, const dal_sql_t *s, const dal_value_t *params,
                       size_t nparams, dal_idfill_t *f, dal_error_t *err);
void dal_idfill_clear(dal_idfill_t *f);

#endif /* DAL_CORE_IDFILL_H */
