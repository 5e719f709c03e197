/*
 * columns.h -- the column order of a logical table, for an INSERT without
 * a column list.
 *
 * `INSERT INTO t VALUES (...)` names no column, yet dal must find the shard
 * key and the ID column among the values.  It learns t's columns, in order,
 * from the server holding t's first physical table (information_schema),
 * once per snapshot, and gives the statement an explicit column list before
 * it is routed: the text the servers get says the same thing, and every later
 * step sees an ordinary INSERT with columns.
 */
#ifndef DAL_CORE_COLUMNS_H
#define DAL_CORE_COLUMNS_H

#include <stddef.h>

#include "error.h"
#include "snapshot.h"
#include "sql.h"

/* The columns of t (borrowed: t must stay alive; so must its snapshot),
 * learned on first use and kept with t.  *out is borrowed from t.  Safe
 * from any number of threads; two first uses may both ask the server, one
 * answer is kept.  Fails (naming the datasource and the physical table) when
 * the server cannot be asked or the table is missing. */
int table_columns_get(dal_table_t *t, const dal_columns_t **out, dal_error_t *err);

/* Free what table_columns_get kept with t (snapshot teardown). */
void table_columns_free(dal_table_t *t);

/* Whether sql is an INSERT/REPLACE without a column list into a table dal
 * must look into: one generating IDs, or a sharded one when no shard value
 * comes with the statement (opts may be NULL). */
int columns_needed(const dal_snapshot_t *snap, const dal_sql_t *sql,
                   const dal_query_opts_t *opts);

/* For INSERT ... SELECT * (or t.*): learn the columns of the SELECT's
 * sharded tables, so routing can see which column of the source feeds the
 * target's shard key.  0, or a failure to learn them. */
int columns_learn_sources(const dal_snapshot_t *snap, const dal_sql_t *sql, dal_error_t *err);

/* sql's text with the target's column list written after its name (and
 * PARTITION clause): a new NUL-terminated string owned by the caller (free),
 * its length in *len.  NULL with err set on failure. */
char *columns_add_list(const dal_snapshot_t *snap, const dal_sql_t *sql, size_t *len,
                       dal_error_t *err);

#endif /* DAL_CORE_COLUMNS_H */
