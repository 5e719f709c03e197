/*
 * merge_value.h -- the value rules of merging: how the server orders a
 * column's values, prints a DOUBLE, and adds up an aggregate's partials.
 * Used by the merge's execution (result_merge.c); knows nothing of plans.
 */
#ifndef DAL_CORE_MERGE_VALUE_H
#define DAL_CORE_MERGE_VALUE_H

#include <mysql.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "sql.h"

/* ------------------------------------------------------- value semantics */

typedef enum dal_merge_kind {
    DAL_MK_INT,       /* signed integer types */
    DAL_MK_UINT,      /* unsigned integer types */
    DAL_MK_DECIMAL,   /* DECIMAL: compared exactly as decimal text */
    DAL_MK_DOUBLE,    /* FLOAT, DOUBLE */
    DAL_MK_TEXT,      /* character strings: collation approximated (see compare) */
    DAL_MK_BYTES      /* binary strings, BIT, dates and times: bytewise */
} dal_merge_kind_t;

/* What the merge needs to know about one column of the nodes' rows. */
typedef struct dal_merge_meta {
    dal_merge_kind_t kind;
    unsigned int decimals;   /* DECIMAL scale */
    int fold_case;           /* TEXT: a case-insensitive (_ci) collation */
    int pad_space;           /* TEXT: trailing spaces are insignificant (PAD SPACE) */
    int unordered;           /* ENUM / SET: the server orders them by index, not text */
} dal_merge_meta_t;

/* Classify a column from the metadata a node sent (borrowed). */
void merge_meta_init(dal_merge_meta_t *m, const MYSQL_FIELD *f);

/*
 * Compare two values of one column the way the server orders them: NULL
 * (a == NULL) first, numbers by value, strings by the collation as far as
 * it is approximated: ASCII letters fold to upper case in _ci collations
 * (as utf8mb4_general_ci and latin1_swedish_ci weigh them), other bytes
 * compare as bytes, PAD SPACE collations ignore trailing spaces.  Returns
 * <0, 0, >0.  Non-NULL texts must be NUL-terminated at [len], as the rows of
 * libmysqlclient are.
 */
int merge_compare(const dal_merge_meta_t *m, const char *a, size_t alen, const char *b,
                  size_t blen);

/* A DOUBLE as the server prints it: the shortest digits that read back to
 * the same double, in plain notation unless that would be long (1e15,
 * 1.5e-16), like MariaDB's my_gcvt.  Returns the length written to out
 * (cap >= 40). */
size_t merge_format_double(double d, char *out, size_t cap);

/* The partial state of one aggregated column of one group. */
typedef struct dal_merge_acc {
    dal_agg_t agg;
    int seen;                /* a non-NULL value was added (SUM, MIN, MAX, AVG) */
    int is_double;           /* SUM/AVG over DOUBLE partials */
    unsigned int scale;      /* SUM/AVG over exact partials: decimals of the partials */
    __int128 exact;          /* exact sum scaled by 10^scale (GCC/Clang extension:
                                38 digits, more than any realistic SUM) */
    double dbl;
    uint64_t count;          /* COUNT total, or AVG's row count */
    dal_buf_t best;          /* MIN/MAX: text of the best value so far */
    int best_null;
} dal_merge_acc_t;

/* Start a fresh group for agg. */
void merge_acc_reset(dal_merge_acc_t *a, dal_agg_t agg);
/*
 * Add one node's partial value: text/len (NULL for SQL NULL) of the column
 * whose metadata is m; for AVG also the partial row count (cnt, NULL-able).
 * Returns 0 or DAL_EUNSUPPORTED with err naming the problem (a SUM beyond
 * 38 digits, a value that is not a number).
 */
int merge_acc_add(dal_merge_acc_t *a, const dal_merge_meta_t *m, const char *text,
                  size_t len, const char *cnt, size_t cntlen, dal_error_t *err);
/*
 * The final value as the server would print it, appended to out; returns 1
 * if the value is SQL NULL (nothing appended), 0 if text was appended, or
 * DAL_EUNSUPPORTED on overflow.
 */
int merge_acc_result(const dal_merge_acc_t *a, dal_buf_t *out, dal_error_t *err);
void merge_acc_free(dal_merge_acc_t *a);

#endif /* DAL_CORE_MERGE_VALUE_H */
