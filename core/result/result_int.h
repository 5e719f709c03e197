/*
 * result_int.h -- the result's insides, shared by result.c (the result, its
 * sources, the getters) and result_merge.c (the merge pipeline that reads
 * several sources).  result_ names are not part of the core's interface.
 */
#ifndef DAL_CORE_RESULT_INT_H
#define DAL_CORE_RESULT_INT_H

#include <limits.h>

#include "result.h"

#define NO_COLUMN UINT_MAX

/* A row that outlives its source's next fetch: one allocation. */
typedef struct rowcopy {
    MYSQL_ROW vals;
    unsigned long *lens;
    size_t seq;              /* creation order: keeps ties of the final sort stable */
} rowcopy_t;

typedef struct rkey {
    unsigned int col;
    int desc;
} rkey_t;

struct dal_merge_run {
    rkey_t *keys;            /* node streams merged on these; none: concatenated */
    size_t nkeys;
    unsigned int *group;     /* group columns */
    size_t ngroup;
    dal_merge_acc_t *acc;    /* per aggregate of the spec */
    unsigned int *acol, *acnt; /* its column, and AVG's count column (or NO_COLUMN) */
    unsigned int rows;       /* the spec's per-node COUNT(*) (has_rows), or NO_COLUMN */
    dal_buf_t *fmt;          /* its finished text */
    size_t naggs;
    rkey_t *final;           /* finished groups sorted on these */
    size_t nfinal;

    size_t cur;              /* concatenation: the source being read */
    size_t *heap;            /* k-way merge: source indexes, smallest row first */
    size_t nheap;
    int heap_ready;
    size_t top;              /* the source of the row pulled last */

    rowcopy_t *first;        /* first row of the group being merged */
    rowcopy_t *out;          /* the row the merge made last (group, DISTINCT) */
    MYSQL_ROW vals;          /* scratch: a group's output row, ncols */
    unsigned long *lens;
    int groups_done;
    size_t seq;
    rowcopy_t **sorted;      /* finished groups, when they must be sorted */
    size_t nsorted, next_sorted;
    int sorted_ready;

    int limited;
    uint64_t skip, left;     /* rows still to skip, and to return */
};

/* ------------------------------------------------------------ result_merge.c */

/* Set the merge state up for r's spec (none: concatenate everything; that
 * needs nothing, the state starts zeroed). */
int result_run_start(dal_result_t *r, dal_error_t *err);

/* The end, or a failure: every connection goes back at once. */
void result_finish(dal_result_t *r, int rc, const dal_error_t *e);

/* What the merge state holds (the state itself is part of the result). */
void result_run_free(struct dal_merge_run *m);

/* =============================================================== stages */
void result_set_row(dal_result_t *r, MYSQL_ROW row, unsigned long *lens);

void result_srcs_close_all(dal_result_t *r);

/* LIMIT offset, count: offset rows are produced and dropped one by one, so
 * memory does not grow with the offset. */
int result_advance(dal_result_t *r, dal_error_t *err);

#endif /* DAL_CORE_RESULT_INT_H */
