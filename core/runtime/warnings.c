/*
 * warnings.c -- SHOW WARNINGS read right after a statement; see warnings.h.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h" /* DAL_TLS_SMALL */
#include "iowait.h"
#include "warnings.h"

typedef struct warning_row {
    char *level, *message;  /* owned */
    unsigned int code;
} warning_row_t;

struct dal_warnings {
    warning_row_t *v;       /* owned */
    size_t n, cap;
};

/* The calling thread's statement: whether it reads its warnings, and
 * where the diagnostics of its server error go (NULL: nowhere). */
static _Thread_local struct {
    int on;
    dal_warnings_t **failed;
} wanted DAL_TLS_SMALL;

/* The running statement's wish: kept aside while an event loop runs
 * others on the thread (iowait.h). */
IOWAIT_KEEP_VAR(wanted)

void warnings_want(int on, dal_warnings_t **failed)
{
    wanted.on = on;
    wanted.failed = failed;
    if (failed != NULL) {
        warnings_free(*failed);
        *failed = NULL;
    }
}

static int add(dal_warnings_t **w, const char *level, unsigned int code, const char *message)
{
    dal_warnings_t *x = *w;

    if (x == NULL && (x = *w = calloc(1, sizeof *x)) == NULL)
        return -1;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 8;
        warning_row_t *v = realloc(x->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n].level = strdup(level != NULL ? level : "");
    x->v[x->n].message = strdup(message != NULL ? message : "");
    x->v[x->n].code = code;
    if (x->v[x->n].level == NULL || x->v[x->n].message == NULL) {
        free(x->v[x->n].level);
        free(x->v[x->n].message);
        return -1;
    }
    x->n++;
    return 0;
}

void warnings_read(dal_warnings_t **w, MYSQL *m, unsigned int count)
{
    static const char sql[] = "SHOW WARNINGS";
    MYSQL_RES *res;
    MYSQL_ROW row;

    if (!wanted.on || count == 0 ||
        mysql_real_query(m, sql, sizeof sql - 1) != 0 || (res = mysql_store_result(m)) == NULL)
        return;
    while ((row = mysql_fetch_row(res)) != NULL && mysql_num_fields(res) >= 3)
        if (add(w, row[0], row[1] != NULL ? (unsigned int)strtoul(row[1], NULL, 10) : 0,
                row[2]) != 0)
            break;
    mysql_free_result(res);
}

void warnings_read_failed(MYSQL *m)
{
    if (wanted.failed == NULL)
        return;
    warnings_free(*wanted.failed);
    *wanted.failed = NULL;
    warnings_read(wanted.failed, m, 1);
}

void warnings_move(dal_warnings_t **to, dal_warnings_t *from)
{
    size_t i;

    if (from == NULL)
        return;
    if (*to == NULL) {
        *to = from;
        return;
    }
    for (i = 0; i < from->n; i++)
        if (add(to, from->v[i].level, from->v[i].code, from->v[i].message) != 0)
            break;
    warnings_free(from);
}

size_t warnings_count(const dal_warnings_t *w)
{
    return w != NULL ? w->n : 0;
}

int warnings_get(const dal_warnings_t *w, size_t i, const char **level, unsigned int *code,
                 const char **message)
{
    if (w == NULL || i >= w->n)
        return -1;
    *level = w->v[i].level;
    *code = w->v[i].code;
    *message = w->v[i].message;
    return 0;
}

void warnings_free(dal_warnings_t *w)
{
    size_t i;

    if (w == NULL)
        return;
    for (i = 0; i < w->n; i++) {
        free(w->v[i].level);
        free(w->v[i].message);
    }
    free(w->v);
    free(w);
}
