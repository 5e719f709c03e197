/*
 * merge.h -- how the rows of several data nodes combine into one result.
 *
 * A SELECT that runs on several nodes (scatter) must give the rows the
 * statement would give on one server holding all the data.  This module
 * decides how, from the analysed statement alone:
 *
 *  - the *merge spec*: whether node streams are concatenated or merged on
 *    sort keys, whether rows fold into groups (aggregates, GROUP BY), whether
 *    duplicates are dropped (DISTINCT), and where LIMIT applies;
 *  - the *node edits*: text changes to the per-node SQL that make the nodes
 *    send what the merge needs (LIMIT o, n -> LIMIT o+n; AVG(x) -> SUM(x)
 *    plus a hidden COUNT(x); sort keys that are not selected appended as
 *    hidden columns, aliased __dal_k<n>, copied as written with a table
 *    they name keeping its logical name as an alias on the nodes; an ORDER
 *    BY on the group keys so groups can be merged while streaming);
 *  - the *value semantics* the merge needs: comparing two column values as
 *    the server orders them, and combining partial aggregates into the text
 *    the server would have printed.
 *
 * Anything that cannot be merged exactly is refused with DAL_EUNSUPPORTED
 * and a message naming the construct; a wrong answer is never given.
 * result.c runs the spec (see result.h); docs/merging.md is the user guide.
 *
 * Internal header.
 */
#ifndef DAL_CORE_MERGE_H
#define DAL_CORE_MERGE_H

#include <mysql.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "dal/dal.h"
#include "merge_value.h"
#include "rewrite.h"
#include "sql.h"

/* ---------------------------------------------------------------- edits */


/* ----------------------------------------------------------------- spec */

/* A column of a node's row: select item `idx` (hidden == 0, from_end ==
 * 0), the idx-th hidden column the edits appended after the select list
 * (hidden == 1), or the idx-th visible column counted back from the last
 * one (from_end == 1, 0 is the last): a select item after the last *,
 * whose position is known only once the nodes' column count is.  Hidden
 * columns come last, so a select list with * still works: the visible
 * columns are the first ncols - nhidden. */
typedef struct dal_merge_col {
    int hidden;
    int from_end;
    uint32_t idx;
} dal_merge_col_t;

typedef struct dal_merge_key {
    dal_merge_col_t col;
    int desc;
} dal_merge_key_t;

/* How one column's partial values from the nodes combine. */
typedef struct dal_merge_agg {
    dal_merge_col_t col;
    dal_agg_t agg;           /* COUNT, SUM, MIN, MAX, AVG; also COUNT, SUM and AVG of
                                DISTINCT shard key (each value lives on one node) */
    dal_merge_col_t count;   /* AVG: the hidden COUNT of the same argument */
} dal_merge_agg_t;

enum dal_merge_limit {
    DAL_MERGE_LIMIT_NONE,    /* no LIMIT clause */
    DAL_MERGE_LIMIT_WIDEN,   /* nodes get LIMIT offset+count, the merge skips offset */
    DAL_MERGE_LIMIT_DROP     /* nodes get no LIMIT (their rows are partial groups) */
};

/* Everything is owned by the spec.  Read by result.c; built only here. */
struct dal_merge_spec {
    /* node streams: k-way merged on keys (each node sorts by them), or
     * concatenated in source order when nkeys == 0 */
    dal_merge_key_t *keys;       size_t nkeys;
    /* rows fold into groups: rows equal on the group columns (every row
     * when ngroup == 0) become one; aggregated columns combine, the others
     * keep the group's first value */
    int aggregate;
    dal_merge_col_t *group;      size_t ngroup;
    dal_merge_agg_t *aggs;       size_t naggs;
    /* aggregates without GROUP BY and a column that is not aggregated: a
     * hidden COUNT(*) per node, so that column comes from a node that had
     * rows (a node without any sends NULL there) */
    int has_rows;
    dal_merge_col_t rows;
    /* groups sorted after all are merged (ORDER BY on an aggregate): this
     * buffers every group; nfinal == 0 means groups stream out in key order */
    dal_merge_key_t *final;      size_t nfinal;
    /* drop a row equal (on every visible column) to the previous one; the
     * keys then cover every visible column so duplicates are adjacent */
    int distinct;
    size_t nhidden;              /* hidden columns appended to each node's select list,
                                    each aliased __dal_k<n> (n from 1) */
    char **names;                /* per select item up to the first *: the column name
                                    to show, or NULL for the node's (which differs where
                                    AVG became SUM or a table qualifier was renamed) */
    size_t nnames;
    char **tail_names;           /* the same for the items after the last *: entry j
                                    names visible column nvisible - ntail + j */
    size_t ntail;
    /* LIMIT of the statement; offset/count are filled by merge_node_edits
     * from literals or parameters */
    enum dal_merge_limit limit;
    uint32_t limit_off, limit_len;     /* the clause in the SQL text */
    int limit_bound;
    uint64_t offset, count;
    dal_edits_t edits;           /* the parameter-independent node edits */
};

typedef struct dal_merge_spec dal_merge_spec_t;

/*
 * Decide how the rows of several nodes combine for sql (borrowed; the spec
 * keeps no pointer into it).  shard_key is the shard-key column of the
 * statement's sharded table (borrowed, may be NULL): GROUP BY on it keeps
 * every group on one node, and COUNT(DISTINCT it) adds up exactly.  On
 * success *out is owned by the caller (merge_spec_free, or hand it to
 * result_set_merge).  Constructs that cannot be merged exactly fail
 * with DAL_EUNSUPPORTED and a message naming them.  A statement that is not
 * a SELECT gets a spec that concatenates (and refuses UPDATE/DELETE ...
 * LIMIT, which would change up to LIMIT rows on every node).
 */
int merge_spec_build(const dal_sql_t *sql, const char *shard_key, dal_merge_spec_t **out,
                     dal_error_t *err);
void merge_spec_free(dal_merge_spec_t *p);

/* The column names a SELECT run on one node shows: v[i] is the
 * statement's own text of item i where the server would name the column
 * after the rewritten text (merge_item_names with aggregated = 0), NULL
 * where the server's name is already right.  One block. */
typedef struct dal_sql_names {
    size_t n;              /* entries of v: the statement's items */
    size_t nset;           /* non-NULL entries: 0 for most statements */
    const char *v[];       /* point into the block */
} dal_sql_names_t;

/* sql's names, made on first use and kept with the cached analysis (every
 * execution of a SELECT needs them and they depend on its text only).
 * Borrowed from sql: valid while a reference is held.  NULL: out of
 * memory. */
const dal_sql_names_t *merge_cached_names(const dal_sql_t *sql);

/*
 * The server names an unaliased expression column by its text.  A node sees
 * another text where rewrite.c renames a table qualifier (SUM(t.x) runs as
 * SUM(t_3.x)) and, when aggregated, where the edits turn AVG into SUM.
 * *out (owned by the caller: free each entry, then the array) gets one
 * entry per select item: the name to show, or NULL where the node's is
 * right.  Also for single-node statements (see result_name_columns).
 */
int merge_item_names(const dal_sql_t *sql, int aggregated, char ***out, dal_error_t *err);

/*
 * The edits of every node's SQL, in addition to rewrite.c's own (table
 * names, ? values, hints): the same for every node.  params/nparams are the
 * statement's values (borrowed); LIMIT offsets and counts given as ? are
 * read from them, checked (non-negative integers) and recorded in p for the
 * merge, which is why p is not const.  On success out (cleared first) holds
 * sorted, non-overlapping edits owned by the caller (edits_clear).
 */
int merge_node_edits(dal_merge_spec_t *p, const dal_sql_t *sql, const dal_value_t *params,
                     size_t nparams, dal_edits_t *out, dal_error_t *err);

#endif /* DAL_CORE_MERGE_H */
