/*
 * columns.h -- the column order of a logical table, for an INSERT without
 * a column list.
 *
 * `INSERT INTO t VALUES (...)` names no column, yet dal must find the shard
 * key and the ID column among the values.  It learns t's columns, in order,
 * from the server holding t's first physical table (information_schema),
 * keeps the list with t, and gives the statement an explicit column list
 * before it is routed: the text the servers get says the same thing, and
 * every later step sees an ordinary INSERT with columns.
 *
 * A kept list goes stale when the table is dropped and created again with
 * its columns in another order, or altered, by dal or by anyone else.  So
 * it is never trusted alone: once the statement is routed, and before
 * anything runs, columns_check reads the columns of every physical table
 * the routes write (one information_schema query per data node) and
 * compares.  A changed table is learned again and the statement prepared
 * again with the new list; physical tables that disagree are refused.  DDL
 * through dal, and a server error that may mean a changed table (unknown
 * column, column count, no such table), make dal forget the list at once.
 * The same holds for the source of INSERT ... SELECT *, whose list decides
 * where the rows go.
 */
#ifndef DAL_CORE_COLUMNS_H
#define DAL_CORE_COLUMNS_H

#include <stddef.h>

#include "error.h"
#include "snapshot.h"
#include "sql.h"

/* The columns of t (borrowed: t must stay alive; so must its snapshot),
 * learned on first use (and after table_columns_forget) and kept with t.
 * *out is borrowed from t, valid as long as t.  Safe from any number of
 * threads; two first uses may both ask the server.  Fails (naming the
 * datasource and the physical table) when the server cannot be asked or
 * the table is missing. */
int table_columns_get(dal_table_t *t, const dal_columns_t **out, dal_error_t *err);

/* Forget t's list: the next use learns it again.  Safe from any thread;
 * a list a statement holds stays valid (t keeps every list it learned). */
void table_columns_forget(dal_table_t *t);

/* Forget the list of every configured table sql names (DDL through dal, or
 * a server error that may mean one of them changed). */
void columns_forget_named(const dal_snapshot_t *snap, const dal_sql_t *sql);

/* Free what table_columns_get kept with t (snapshot teardown). */
void table_columns_free(dal_table_t *t);

struct dal_routing;

/* Before a routed statement runs: whether every physical table its routes
 * use has the columns it was prepared with -- into (borrowed) for its
 * INSERT target when columns_add_list gave it one (else NULL), and the
 * learned list of the sharded source of INSERT ... SELECT *.  0: yes.  1:
 * a table changed (dal now holds its new list): prepare the statement
 * again and check again, attempt counting the times it was (a change
 * after the second is refused).  Else refused with err set: DAL_ESTATE
 * when the physical tables disagree or cannot be checked, DAL_EROUTE for
 * a missing one; the message names the table and asks for a column list. */
int columns_check(const struct dal_routing *rt, const dal_columns_t *into, int attempt,
                  dal_error_t *err);

/* Whether sql is an INSERT/REPLACE without a column list into a table dal
 * must look into: one generating IDs, or a sharded one when no shard value
 * comes with the statement (opts may be NULL). */
int columns_needed(const dal_snapshot_t *snap, const dal_sql_t *sql,
                   const dal_query_opts_t *opts);

/* For INSERT ... SELECT * (or t.*): learn the columns of the SELECT's
 * sharded tables, so routing can see which column of the source feeds the
 * target's shard key; *used is set to 1 when there are some (columns_check
 * must then look at them), else left alone.  0, or a failure to learn
 * them. */
int columns_learn_sources(const dal_snapshot_t *snap, const dal_sql_t *sql, int *used,
                          dal_error_t *err);

/* sql's text with the target's column list written after its name (and
 * PARTITION clause): a new NUL-terminated string owned by the caller (free),
 * its length in *len, the list used in *used (borrowed from the table, for
 * columns_check).  NULL with err set on failure. */
char *columns_add_list(const dal_snapshot_t *snap, const dal_sql_t *sql, size_t *len,
                       const dal_columns_t **used, dal_error_t *err);

#endif /* DAL_CORE_COLUMNS_H */
