/*
 * result.h -- dal_result_t: the rows or affected-row count of a statement.
 *
 * A result keeps each node's fully received MYSQL_RES and walks them in
 * order, so the node's connection is back in its pool before the caller
 * sees the first row.
 */
#ifndef DAL_CORE_RESULT_H
#define DAL_CORE_RESULT_H

#include <mysql.h>

#include "dal/dal.h"

struct dal_result {
    MYSQL_RES **parts;      /* owned, one per node that returned rows */
    size_t nparts, cap;
    size_t cur;             /* part being read */
    MYSQL_ROW row;          /* current row, inside parts[cur] */
    unsigned long *lengths;
    unsigned int ncols;
    MYSQL_FIELD *fields;    /* of parts[0] */
    uint64_t affected;
    uint64_t insert_id;
    size_t nroutes;
};

dal_result_t *dal_result_new(void);
/* Add one node's rows (ownership of res transferred, also on failure).
 * All parts must have the same number of columns. */
int dal_result_add(dal_result_t *r, MYSQL_RES *res, const char *datasource, dal_error_t *err);

#endif /* DAL_CORE_RESULT_H */
