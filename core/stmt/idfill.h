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

#define DAL_IDFILL_INLINE 8

typedef struct dal_idfill {
    /* the statement to run instead: its analysis, when the statement
     * remembers it (a reference), else its text, to analyse */
    const dal_sql_t *filled;
    char *sql;             /* owned, or NULL */
    size_t sql_len;
    dal_value_t *params;   /* owned (or params_inl): its parameters (strings borrowed from
                              the caller's) */
    size_t nparams;
    int64_t *ids;          /* owned: the generated IDs, in row order */
    size_t nids;
    long *src;             /* owned, nparams, while sql is set: where each parameter comes
                              from (idfill_remember) */
    int memo_ok;           /* the rewrite depends on the statement and id_column alone */
    const char *id_column; /* borrowed from the snapshot: the column filled */
    dal_value_t params_inl[DAL_IDFILL_INLINE];
} dal_idfill_t;

/* Nothing to free in f: no statement text, IDs or parameters of its own. */
static inline int idfill_empty(const dal_idfill_t *f)
{
    return f->sql == NULL && f->ids == NULL && f->src == NULL &&
           (f->params == NULL || f->params == f->params_inl);
}

/* Fill *f for statement s (zeroed when there is nothing to do).  Nothing:
 * f->filled and f->sql both NULL. */
int idfill_prepare(const dal_snapshot_t *snap, const dal_sql_t *s, const dal_value_t *params,
                   size_t nparams, dal_idfill_t *f, dal_error_t *err);

/* After f->sql was analysed as filled: let s remember the rewrite, so that
 * its next executions skip making and analysing the text.  Only for an
 * INSERT that omits the id column (then the text depends on the statement
 * and the column's name only); otherwise, or out of memory, nothing. */
void idfill_remember(const dal_sql_t *s, const dal_idfill_t *f, const dal_sql_t *filled);
void idfill_clear(dal_idfill_t *f);

#endif /* DAL_CORE_IDFILL_H */
