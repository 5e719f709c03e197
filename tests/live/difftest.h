/*
 * difftest.h -- what the differential tests share (test_scatter.c,
 * test_nested.c): a seedable random source, the servers of the test cluster,
 * result rows read from MariaDB and from dal, their comparison, and a
 * growable string for generated SQL.  Test code: a failure to allocate or
 * connect ends the test.
 */
#ifndef DAL_TESTS_DIFFTEST_H
#define DAL_TESTS_DIFFTEST_H

#include <mysql.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <dal/dal.h>

#define DT_MAX_COLS 16
#define DT_NODES 4

/* ------------------------------------------------------------ random */

/* Set the generator's state (xorshift64*: the same sequence on every
 * platform; 0 never changes, so give it something else). */
void dt_seed(uint64_t seed);
uint64_t dt_rnd64(void);
/* 0 .. n-1. */
int dt_rnd(int n);
/* 1 time in one_in. */
int dt_chance(int one_in);

/* ------------------------------------------------------------ servers */

/* A program's start: DAL_TEST_PORTS (DT_NODES ports) into ports, and
 * DAL_TEST_SEED into *seed when set (exits with a message if the ports
 * are missing); prints the seed, "NAME: seed N", so that a run can be
 * replayed; starts the client library, ended at exit. */
void dt_start(const char *name, int *ports, unsigned long long *seed);
/* A connection to 127.0.0.1:port, database db (owned: mysql_close). */
MYSQL *dt_direct(int port, const char *db);
/* Run sql on m or exit with the server's message. */
void dt_direct_exec(MYSQL *m, const char *sql);

/* ------------------------------------------------------------ rows */

typedef struct dt_rows {
    char ***v;               /* owned: v[i][c], text or NULL */
    size_t n, cap;
    unsigned int ncols;
    char *names[DT_MAX_COLS]; /* owned */
} dt_rows_t;

void dt_rows_free(dt_rows_t *r);
/* The plain server's answer into out: 0, or -1 with its error in msg. */
int dt_plain_rows(MYSQL *m, const char *sql, dt_rows_t *out, char *msg, size_t cap);
/* dal's answer into out: 0, or a DAL_E* code with "CODE: message" in msg. */
int dt_dal_rows(dal_t *dal, const char *sql, const dal_value_t *params, size_t np,
                dt_rows_t *out, char *msg, size_t cap);
/* NULL before any text, else strcmp. */
int dt_cell_cmp(const char *a, const char *b);
/* Sort r's rows on their first ncols columns (a multiset comparison). */
void dt_rows_sort(dt_rows_t *r, unsigned int ncols);

/* ------------------------------------------------------------ text */

typedef struct dt_sb {
    char *p;                 /* owned, NUL-terminated once something was put */
    size_t len, cap;
} dt_sb_t;

void dt_sb_vput(dt_sb_t *b, const char *fmt, va_list ap);
void dt_sb_put(dt_sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* DAL_TESTS_DIFFTEST_H */
