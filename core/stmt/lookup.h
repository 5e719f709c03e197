/*
 * lookup.h -- a lookup table's read, before routing (docs/lookup.md).
 *
 * A sharded table may declare `lookup = COL` ([table T]): the table
 * [table T_lookup_COL] (columns COL and T's shard key, sharded by COL or on
 * one datasource) says on which shard key values a row with COL = v lives.
 * A SELECT, UPDATE or DELETE whose top WHERE has `COL = v` or `COL IN
 * (...)` on such a table, and no condition on its shard key, reads the
 * lookup table first -- an ordinary statement through dal, a point select
 * on one node -- and its routes are narrowed to the shard key values found
 * (route_statement_keys).  No value found: one table answers, with nothing.
 */
#ifndef DAL_CORE_LOOKUP_H
#define DAL_CORE_LOOKUP_H

#include "route.h"
#include "snapshot.h"
#include "sql_cache.h"

/* A statement's lookup: what was read, and the keys found. */
typedef struct dal_lookup {
    dal_route_keys_t rk;        /* rk.table NULL: the statement has no lookup */
    const dal_table_t *ltable;  /* borrowed: the lookup table */
    char *sql;                  /* owned: the lookup read, with ? for the values */
    size_t sql_len;
    dal_value_t *vals;          /* owned (and their strings): the looked-up values */
    size_t nvals;
    dal_value_t *keys;          /* owned (and their strings): rk.keys */
    size_t nkeys, keys_cap;
} dal_lookup_t;

/* Find the lookup of sql (params: its ? values) and read it on snap
 * (cache, schema as stmt_prepare's): lk->rk.table is NULL when sql has none.
 * lk must be released with lookup_clear, also on failure. */
int lookup_prepare(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                   const dal_query_opts_t *opts, const dal_sql_t *sql,
                   const dal_value_t *params, size_t nparams, dal_lookup_t *lk,
                   dal_error_t *err);

/* Put the routes of lk's read (lk prepared with a lookup) in front of
 * *plan's, as step "lookup", for dal_explain; on failure *plan is freed
 * and NULL. */
int lookup_explain(dal_sql_cache_t *cache, dal_snapshot_t *snap, const char *schema,
                   const dal_lookup_t *lk, dal_plan_t **plan, dal_error_t *err);

void lookup_clear(dal_lookup_t *lk);

#endif /* DAL_CORE_LOOKUP_H */
