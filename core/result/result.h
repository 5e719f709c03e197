/*
 * result.h -- dal_result_t: the rows or affected-row count of a statement.
 *
 * A result reads rows from one or more *sources*, one per data node that
 * returned rows: a fully received MYSQL_RES (result_add), a node's
 * connection still streaming its rows (result_add_stream), or, for the
 * tests, any row source (result_add_source).  Without a merge spec the
 * sources are read one after the other.  With one (result_set_merge)
 * dal_result_next returns the rows of the statement as one server holding
 * all the data would: merged on the sort keys, grouped, deduplicated and
 * limited while streaming, in the caller's thread (see merge.h and
 * docs/merging.md).
 *
 * Streaming keeps memory flat: a source holds one row at a time, so
 * ORDER BY ... LIMIT 100000, 10 over many nodes skips rows without keeping
 * them.  Only GROUP BY ... ORDER BY <an aggregate> keeps every group.
 *
 * Internal header: exec.c fills the write counters directly.
 */
#ifndef DAL_CORE_RESULT_H
#define DAL_CORE_RESULT_H

#include <mysql.h>

#include "conn.h"
#include "dal/dal.h"
#include "merge.h"

/* ---------------------------------------------------------- row sources */

typedef struct dal_rowsrc dal_rowsrc_t;

typedef struct dal_rowsrc_ops {
    /* Make the next row current in s->row / s->lengths: 1, 0 at the end,
     * or a negative DAL_E* code with err filled (naming the datasource). */
    int (*fetch)(dal_rowsrc_t *s, dal_error_t *err);
    /* Free s and what it holds.  ok == 0 after fetch failed: a connection
     * behind s must not be reused.  Called exactly once. */
    void (*close)(dal_rowsrc_t *s, int ok);
    /* Optional, called before close when the result stops reading s before
     * its end (LIMIT reached, the result freed): read and drop the rows
     * left, so that s->ended and what follows the rows are known. */
    void (*drain)(dal_rowsrc_t *s);
} dal_rowsrc_ops_t;

/* Embedded first in each kind of source. */
struct dal_rowsrc {
    const dal_rowsrc_ops_t *ops;
    MYSQL_ROW row;            /* current row; values NUL-terminated, NULL for SQL NULL */
    unsigned long *lengths;   /* of the current row */
    /* what the server sent after the last row, for a source that learns it
     * only then (a stream); the result adds it up when the source closes */
    int ended;                /* the rows have all arrived: the two below are set */
    unsigned int warnings;
    unsigned int status;      /* SERVER_STATUS_* */
};

/* One column as MYSQL_FIELD has it, kept by the result once the source the
 * fields came from may be closed before the result is freed. */
typedef struct dal_result_col {
    const char *org_name, *table, *org_table, *db; /* never NULL */
    const char *attr[2];      /* FIELD_ATTR_* (colset.h); never NULL, "" for none */
    unsigned int type, charset, flags, decimals;
    unsigned long length;
} dal_result_col_t;

/* Room for the physical -> logical table names of a result (see
 * result_map_table): per table its position (4 bytes) and logical name
 * with its NUL; the physical name is physical_name's, made only when a
 * caller asks a column's table. */
#define DAL_RESULT_TABMAP 192

/* The state of the merge while rows are read; private to result.c. */
struct dal_merge_run;
struct colset;

struct dal_result {
    /* writes: summed by exec.c over the routes */
    uint64_t affected;
    uint64_t insert_id;       /* the first non-zero one in route order */
    size_t nroutes;
    /* the servers' info lines (mysql_info), summed: "Records: a
     * Duplicates: b" (multi-row INSERT) or "Rows matched: a  Changed: b"
     * (UPDATE); see result_note_info */
    int info_kind;            /* 0: none, else RESULT_INFO_* */
    uint64_t info_a, info_b;
    struct dal_warnings *warns; /* owned: the nodes' SHOW WARNINGS rows, read when the
                                   session keeps them (warnings.h), or NULL */
    int named_tables;         /* the statement named a table (dal_result_named_tables) */
    /* end of statement: warnings summed over the routes whose rows have all
     * arrived (the sources that are still open keep their own), the
     * server status of the last route (route order; a stream's when it
     * closes), and the transaction bits that replace the server's (see
     * dal_result_server_status: AUTOCOMMIT unless a session says else) */
    unsigned int warnings;
    unsigned int status;
    size_t status_src;        /* the source whose status is in status, +1; 0: exec's */
    unsigned int txn_status;

    dal_rowsrc_t **srcs;      /* owned array, in the order added (at first one inside the
                                 result's own allocation); each source owned, NULL once
                                 closed */
    size_t nsrcs, cap;
    unsigned int ncols;       /* columns of every source, hidden ones included */
    unsigned int nvisible;    /* columns the caller sees */
    const MYSQL_FIELD *fields;/* while names is NULL: borrowed from the first source, which
                                 stays open until the result is freed (a result of one
                                 stored source copies nothing), or in colset */
    const char **names;       /* owned block, NULL until needed: ncols names, then cols,
                                 then meta, then the nodes' column texts; each name points
                                 into the block, into spec->names or into sql's cached
                                 names */
    dal_result_col_t *cols;   /* ncols, in names' block: the rest of each column */
    dal_merge_meta_t *meta;   /* ncols, in names' block: how each column compares */
    const dal_sql_t *sql;     /* a reference held while names point into its cache */
    struct colset *colset;    /* a reference held while fields point into it */

    dal_merge_spec_t *spec;   /* owned; NULL: sources one after the other */
    struct dal_merge_run *run;/* inside the result's own allocation; zeroed when the merge
                                 starts */
    int started;              /* the first dal_result_next has set run up */
    int done;                 /* the last row was read, or reading failed */
    int failed;               /* the DAL_E* code of the failure, or 0 */
    dal_error_t *fail;        /* owned: the failure, returned again by every later
                                 dal_result_next (NULL if there was no memory for it) */

    MYSQL_ROW row;            /* current row, NULL before the first and after the last */
    unsigned long *lengths;

    int64_t *ids;             /* owned: IDs generated for an INSERT (result_set_ids) */
    size_t nids;

    void (*cleanup)(void *ctx); /* see result_on_free */
    void *cleanup_ctx;

    struct dal_result *next_set; /* owned: a CALL's next result (dal_result_next_set) */
    int is_error_set;         /* the last of a CALL's sets is the error its procedure
                                 raised after the others (fail holds it) */

    int relayed;              /* its columns and rows went to a relay sink (exec/relay.c) */
    uint64_t relayed_rows;

    size_t tabmap_len;

    /* Text written before it is read: result_new does not clear it. */
    char info[96];            /* dal_result_info's text, made when asked */
    char tabmap[DAL_RESULT_TABMAP]; /* result_map_table's pairs, tabmap_len bytes */
};

dal_result_t *result_new(void);

/* A result that stands for err, raised by a CALL's procedure after the
 * sets before it (dal_result_set_error); NULL when memory is short. */
dal_result_t *result_new_error_set(const dal_error_t *err);

/* What a route's server sent at the end of its statement, once it has all
 * arrived (an OK packet, or the end of stored rows): added to res in route
 * order, so the status is the last route's and the insert id the first
 * non-zero one. */
void result_add_end(dal_result_t *res, unsigned int warnings, unsigned int status,
                    uint64_t insert_id);

enum { RESULT_INFO_RECORDS = 1, RESULT_INFO_MATCHED = 2 };
/* Add one route's info line (mysql_info after a write; NULL: none) to
 * res's sums.  Lines of another form, or of both forms in one statement,
 * leave no info. */
void result_note_info(dal_result_t *res, const char *info);

/* Add one node's fully received rows (ownership of res transferred, also
 * on failure).  All sources must have the same number of columns. */
int result_add(dal_result_t *r, MYSQL_RES *res, const char *datasource, dal_error_t *err);

/*
 * Add one node's rows as a stream.  Call after mysql_real_query (or its
 * non-blocking form) succeeded on conn and the statement returned a result
 * set (mysql_field_count > 0): this calls mysql_use_result and owns conn
 * from now on, also on failure, until the stream is read to its end, the
 * result reaches its end or fails, or the result is freed.  Then it calls
 * release(ctx, conn, reusable) exactly once; reusable is 1 when every row
 * was read (unread rows are drained first) without a client or server
 * error.  release may run after the dal_query that added the stream has
 * returned (from dal_result_next or dal_result_free), so ctx must stay valid
 * until then (see result_on_free).  datasource names the node in
 * errors of this call (borrowed).
 */
int result_add_stream(dal_result_t *r, dal_conn_t *conn,
                      void (*release)(void *ctx, dal_conn_t *c, int reusable), void *ctx,
                      const char *datasource, dal_error_t *err);

/* Add any source (s transferred, also on failure: closed with ok == 1).
 * fields/ncols describe its columns (borrowed; copied from the first
 * source); datasource names the node in errors of this call (borrowed). */
int result_add_source(dal_result_t *r, dal_rowsrc_t *s, const MYSQL_FIELD *fields,
                      unsigned int ncols, const char *datasource, dal_error_t *err);

/* The same, with the columns described by cols (borrowed; the result
 * takes its own reference when s is its first source, instead of a copy). */
int result_add_source_shared(dal_result_t *r, dal_rowsrc_t *s, struct colset *cols,
                             const char *datasource, dal_error_t *err);

/*
 * Merge the sources with spec (ownership transferred, also on failure) from
 * now on.  Call after the last source is added and before the first
 * dal_result_next.  The spec's LIMIT must have been bound by
 * merge_node_edits.  Fails with DAL_EUNSUPPORTED if the nodes' columns
 * do not fit the spec (a sort key on an ENUM column, fewer columns than the
 * spec needs) and DAL_ESTATE if rows were already read.
 */
int result_set_merge(dal_result_t *r, dal_merge_spec_t *spec, dal_error_t *err);

/* Show the statement's own text as the name of the unaliased expression
 * columns whose text the rewritten SQL changed (SUM(t.x) ran as
 * SUM(t_3.x)); see merge_item_names.  For a SELECT on one node (a
 * merged result takes the names from its spec); call after the source is
 * added.  The names stay with sql's cached analysis: the result takes a
 * reference to sql when it uses them. */
int result_name_columns(dal_result_t *r, const dal_sql_t *sql, dal_error_t *err);

/* Attach the IDs generated for an INSERT, in row order (ids transferred,
 * malloc'd; freed with the result).  Read with dal_result_generated_ids. */
void result_set_ids(dal_result_t *r, int64_t *ids, size_t n);

/* Show position pos of sharded table `logical` (physical_name's
 * "logical_pos") as `logical` in the table and org_table of
 * dal_result_column_info (logical borrowed for the call, copied).  An
 * entry that does not fit in the result's room is left out: the column
 * then shows the physical name. */
void result_map_table(dal_result_t *r, const char *logical, int32_t pos);

/* The transaction bits (SERVER_STATUS_IN_TRANS, _AUTOCOMMIT,
 * _IN_TRANS_READONLY) dal_result_server_status reports for r instead of
 * its server's. */
void result_set_txn_status(dal_result_t *r, unsigned int bits);

/* Call fn(ctx) in dal_result_free, after every source is released: where
 * the caller drops what the release callbacks need (a snapshot
 * reference).  One per result; a second call replaces the first. */
void result_on_free(dal_result_t *r, void (*fn)(void *ctx), void *ctx);

#endif /* DAL_CORE_RESULT_H */
