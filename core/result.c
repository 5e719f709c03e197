/*
 * result.c -- dal_result_t.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "result.h"

dal_result_t *dal_result_new(void)
{
    return calloc(1, sizeof(dal_result_t));
}

int dal_result_add(dal_result_t *r, MYSQL_RES *res, const char *datasource, dal_error_t *err)
{
    if (r->nparts > 0 && mysql_num_fields(res) != r->ncols) {
        mysql_free_result(res);
        return dal_err_set(err, DAL_EUNSUPPORTED,
                           "datasource %s returned %u columns where the others returned %u; "
                           "the physical tables differ",
                           datasource, mysql_num_fields(res), r->ncols);
    }
    if (r->nparts == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        MYSQL_RES **p = realloc(r->parts, cap * sizeof *p);
        if (p == NULL) {
            mysql_free_result(res);
            return dal_err_set(err, DAL_ENOMEM, "out of memory");
        }
        r->parts = p;
        r->cap = cap;
    }
    if (r->nparts == 0) {
        r->ncols = mysql_num_fields(res);
        r->fields = mysql_fetch_fields(res);
    }
    r->parts[r->nparts++] = res;
    return 0;
}

size_t dal_result_column_count(const dal_result_t *r)
{
    return r ? r->ncols : 0;
}

const char *dal_result_column_name(const dal_result_t *r, size_t col)
{
    if (r == NULL || col >= r->ncols)
        return NULL;
    return r->fields[col].name;
}

int dal_result_next(dal_result_t *r, dal_error_t *err)
{
    if (r == NULL)
        return dal_err_set(err, DAL_EINVAL, "result is NULL");
    while (r->cur < r->nparts) {
        r->row = mysql_fetch_row(r->parts[r->cur]);
        if (r->row != NULL) {
            r->lengths = mysql_fetch_lengths(r->parts[r->cur]);
            return 1;
        }
        r->cur++;
    }
    r->row = NULL;
    return 0;
}

int dal_result_is_null(const dal_result_t *r, size_t col)
{
    return r == NULL || r->row == NULL || col >= r->ncols || r->row[col] == NULL;
}

const char *dal_result_text(const dal_result_t *r, size_t col, size_t *len)
{
    if (dal_result_is_null(r, col)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = r->lengths[col];
    return r->row[col];
}

int64_t dal_result_int(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtoll(t, NULL, 10) : 0;
}

uint64_t dal_result_uint(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtoull(t, NULL, 10) : 0;
}

double dal_result_double(const dal_result_t *r, size_t col)
{
    const char *t = dal_result_text(r, col, NULL);

    return t ? strtod(t, NULL) : 0.0;
}

uint64_t dal_result_affected_rows(const dal_result_t *r)
{
    return r ? r->affected : 0;
}

uint64_t dal_result_insert_id(const dal_result_t *r)
{
    return r && r->nroutes == 1 ? r->insert_id : 0;
}

size_t dal_result_route_count(const dal_result_t *r)
{
    return r ? r->nroutes : 0;
}

void dal_result_free(dal_result_t *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->nparts; i++)
        mysql_free_result(r->parts[i]);
    free(r->parts);
    free(r);
}
