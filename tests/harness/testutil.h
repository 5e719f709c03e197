/*
 * testutil.h -- small helpers shared by the Check test programs.
 */
#ifndef DAL_TESTUTIL_H
#define DAL_TESTUTIL_H

#include <check.h>
#include <mysql.h>
#include <stddef.h>

#include <dal/dal.h>

#include "check_run.h" /* tu_run */

/* A fresh directory under $TMPDIR (or /tmp); static storage, one per call
 * site is fine.  Aborts the test program on failure. */
char *tu_mkdtemp(void);
/* Write text to dir/name; returns the path (malloc'd). */
char *tu_write(const char *dir, const char *name, const char *text);
/* Copy a file; 0 or -1. */
int tu_copy(const char *from, const char *to);
/* getenv that aborts with a clear message when the variable is missing:
 * the tests must fail, never skip, when their environment is broken. */
const char *tu_env(const char *name);
/* Remove a directory tree (best effort). */
void tu_rmtree(const char *dir);
/* Append to text[*len..cap) one [datasource PREFIX<i>] section per server
 * i < n: master mysql://dal:PASSWORD@127.0.0.1:ports[i]/product_<i> (the
 * databases tests/harness/cluster.sh --db 'product_%d' makes).  *len advances. */
void tu_datasources(char *text, size_t cap, size_t *len, const char *prefix, const int *ports,
                    int n, const char *password);
/* A loopback TCP port free right now, below the kernel's ephemeral range
 * when it leaves room (as tests/harness/cluster.sh free-port).  Not thread-safe:
 * call it from the test's main thread. */
unsigned tu_free_port(void);
/* Send request to 127.0.0.1:port and read the reply to its end.  Returns
 * the HTTP status (-1 when there is none, or no connection) and sets *body
 * to what follows the headers (malloc'd). */
int tu_http(unsigned port, const char *request, char **body);
/* In Prometheus text, the value of the sample written exactly as `series`
 * (name{labels}), or -1 when there is none. */
double tu_metric(const char *text, const char *series);

/* Fail the test unless rc is 0, with "what: message (code)". */
void tu_must(int rc, const dal_error_t *err, const char *what);
/* Whether sql with its n params runs as a server-side prepared statement
 * on d (dal_explain's plan, its first route: [dal] server_prepare, or
 * DAL_SERVER_PREPARE when it is unset); the test fails when sql cannot be
 * planned. */
int tu_server_prepared(dal_t *d, const char *sql, const dal_value_t *params, size_t n);

/* ---------------------------------------------- the live cluster
 * tests/harness/cluster.sh's servers: users dal (password dalpass) and root (no
 * password), their ports in DAL_TEST_PORTS.  The helpers for a program's
 * setup, before any test runs, end the program with a FATAL message; the
 * others fail the test. */

/* The first n ports of DAL_TEST_PORTS into ports; ends the program when
 * there are fewer. */
void tu_ports(int *ports, int n);
/* dal_open(location) or end the program: for setup outside the tests.
 * Owned by the caller: dal_close. */
dal_t *tu_open(const char *location);
/* dal_exec(sql) with opts (may be NULL), or end the program: for setup. */
void tu_setup_exec(dal_t *dal, const dal_query_opts_t *opts, const char *sql);
/* A connection to 127.0.0.1:port as dal, database db (NULL: none), in
 * utf8mb4 as dal's own connections; the test fails when it cannot
 * connect.  Owned by the caller: mysql_close. */
MYSQL *tu_direct(int port, const char *db);
/* The same as root: what dal's user cannot see (all of the processlist). */
MYSQL *tu_root(int port, const char *db);
/* Run sql on m; the test fails with the server's message when it fails. */
void tu_exec(MYSQL *m, const char *sql);
/* The first column of sql's first row on m as a number (-1: no row, or
 * NULL); the test fails when sql does. */
long long tu_value(MYSQL *m, const char *sql);
/* tu_value on a connection of its own to port as dal, database db. */
long long tu_direct_value(int port, const char *db, const char *sql);
/* Fail the test when user dal still holds a connection on one of the n
 * servers at ports (after dal_close: a leak).  A server ends a thread
 * shortly after the client's COM_QUIT, so each is asked again for up to
 * 5 s. */
void tu_no_dal_connections(const int *ports, int n);

#endif /* DAL_TESTUTIL_H */
