/*
 * lookup.h -- a lookup table's read, before routing (docs/lookup.md).
 *
 * A sharded table may declare `lookup = COL` ([table T]): the table
 * [table T_lookup_COL] (columns COL and T's shard key, sharded by COL or on
 * one datasource) says on which shard key values a row with COL = v lives.
 * A SELECT, UPDATE or DELETE whose top WHERE has `COL = v` or `COL IN
 * (...)` on such a table, and no = or IN on its shard key, reads the
 * lookup table first -- an ordinary statement through dal, a point select
 * on one node -- and its routes are narrowed to the shard key values found
 * (route_statement_keys).  No value found: a SELECT runs on one table, where
 * it matches nothing; an UPDATE or DELETE is not sent (stmt.c answers it).
 */
#ifndef DAL_CORE_LOOKUP_H
#define DAL_CORE_LOOKUP_H

#include "result.h"
#include "route.h"
#include "snapshot.h"
#include "sql_cache.h"

/* A statement's lookup: what was read, and the keys found. */
typedef struct dal_lookup {
    dal_route_keys_t rk;        /* rk.table NULL: the statement has no lookup */
    const dal_table_t *ltable;  /* borrowed: the lookup table */
    const char *column;         /* borrowed from the config: the looked-up column */
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

/* ------------------------------------------------- the module's insides */

/* Values whose strings are owned (lookup_value_copy's): free them all. */
void lookup_values_free(dal_value_t *v, size_t n);
/* *dst = src, with a copy of its string. */
int lookup_value_copy(dal_value_t *dst, const dal_value_t *src, dal_error_t *err);
/* text[0..len) as a value, copied: an int when number and it is one (as
 * the router reads a literal), else a string. */
int lookup_value_text(const char *text, size_t len, int number, dal_value_t *out,
                      dal_error_t *err);
/* The value of operand o of sql (params: its ? values), copied into *out;
 * 1 if it is an expression. */
int lookup_operand(const dal_sql_t *sql, const dal_sql_opnd_t *o, const dal_value_t *params,
                   size_t nparams, dal_value_t *out, dal_error_t *err);

/* Append the shard key text[0..len) to lk's keys. */
int lookup_add_key(dal_lookup_t *lk, const char *text, size_t len, dal_error_t *err);

/* ---------------------------------------------- the cache (lookup_cache.c) */

/* The keys value v of lookup table lt (of snapshot generation gen) maps
 * to, if kept and fresh: appended to lk, returns 1.  0 if not (*version:
 * what to store the read's answer with), negative on failure. */
int lookup_cache_get(uint32_t gen, const dal_table_t *lt, const dal_value_t *v,
                     dal_lookup_t *lk, uint32_t *version, dal_error_t *err);
/* Keep the nkeys keys (texts) read for v for ttl_ms, unless the value was
 * forgotten since version was taken. */
void lookup_cache_put(uint32_t gen, const dal_table_t *lt, const dal_value_t *v,
                      uint32_t version, const char *const *keys, const size_t *klen,
                      size_t nkeys, uint32_t ttl_ms);
/* This process wrote v's lookup rows of lt: what is kept of it goes. */
void lookup_cache_forget(const dal_table_t *lt, const dal_value_t *v);
/* A lookup table was written as a table: everything kept goes. */
void lookup_cache_forget_all(void);

/* ---------------------------------------------------- writes (lookup_write.c) */

/* Runs one statement for the lookups (stmt.c's driver); how says what it
 * is to the write: */
enum {
    LOOKUP_RUN_WITH,   /* a read of the rows: the way the write runs */
    LOOKUP_RUN_ADD,    /* adds lookup rows, before the write */
    LOOKUP_RUN_REMOVE  /* removes a lookup row after the write, or checks first */
};
/* What a run returns for a LOOKUP_RUN_REMOVE it does not run now: the
 * lookup row is on another node than the write's, which is still in a
 * transaction (docs/lookup.md, "Writes"). */
#define LOOKUP_ELSEWHERE 2
typedef int (*lookup_run_fn)(void *arg, int how, const char *sql, size_t len,
                             const dal_value_t *params, size_t nparams, dal_result_t **out,
                             dal_error_t *err);

/* The calling thread's lookup reads run through run (arg its argument)
 * from now on, NULL: on the masters through the pools.  Returns the one
 * set before, to put back.  stmt.c sets it while a session holds
 * connections, so a transaction's reads see the lookup rows it wrote. */
typedef struct lookup_reader {
    lookup_run_fn run;
    void *arg;
} lookup_reader_t;
lookup_reader_t lookup_reader_set(lookup_reader_t r);

typedef struct lookup_pair lookup_pair_t;

/* What a write does to the lookups of its table, around it. */
typedef struct dal_lookup_write {
    lookup_run_fn run;
    void *arg;
    const dal_snapshot_t *snap; /* borrowed: the write's */
    const dal_table_t *table;   /* borrowed: the table written, NULL: no upkeep */
    lookup_pair_t *gone;        /* owned: (column, value, key) whose row may be gone after */
    size_t ngone;
    lookup_pair_t *added;       /* owned: lookup rows added before the write */
    size_t nadded;
    size_t elsewhere;           /* removals the run left (LOOKUP_ELSEWHERE) */
} dal_lookup_write_t;

/* Whether a statement of this kind on snap may need upkeep (cheap). */
int lookup_write_wanted(const dal_snapshot_t *snap, const dal_sql_t *sql);

/* Before the write sql (params: the ? values it runs with) on snap: the
 * lookup rows of its new values are added (an INSERT's rows, an UPDATE's
 * new value), and the old values of an UPDATE or DELETE read.  A write dal
 * cannot keep the lookups of (INSERT ... SELECT, a looked-up column set to
 * an expression, several tables) is refused.  w must be released with
 * lookup_write_clear, also on failure. */
int lookup_write_before(lookup_run_fn run, void *arg, const dal_snapshot_t *snap,
                        const dal_sql_t *sql, const dal_value_t *params, size_t nparams,
                        dal_lookup_write_t *w, dal_error_t *err);

/* After the write (rc its result): the lookup rows of values no row has
 * any more are removed (those the run leaves, LOOKUP_ELSEWHERE, are
 * counted in w->elsewhere; calling it again does them all again); a
 * failed write takes back the lookup rows added for it (each only if no
 * row of its key has its value).  Returns rc, or the error of the upkeep. */
int lookup_write_after(dal_lookup_write_t *w, int rc, dal_error_t *err);

void lookup_write_clear(dal_lookup_write_t *w);

#endif /* DAL_CORE_LOOKUP_H */
