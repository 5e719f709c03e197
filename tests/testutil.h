/*
 * testutil.h -- small helpers shared by the Check test programs.
 */
#ifndef DAL_TESTUTIL_H
#define DAL_TESTUTIL_H

#include <stddef.h>

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
 * databases tests/cluster.sh --db 'product_%d' makes).  *len advances. */
void tu_datasources(char *text, size_t cap, size_t *len, const char *prefix, const int *ports,
                    int n, const char *password);
/* A loopback TCP port free right now, below the kernel's ephemeral range
 * when it leaves room (as tests/cluster.sh free-port).  Not thread-safe:
 * call it from the test's main thread. */
unsigned tu_free_port(void);
/* Send request to 127.0.0.1:port and read the reply to its end.  Returns
 * the HTTP status (-1 when there is none, or no connection) and sets *body
 * to what follows the headers (malloc'd). */
int tu_http(unsigned port, const char *request, char **body);
/* In Prometheus text, the value of the sample written exactly as `series`
 * (name{labels}), or -1 when there is none. */
double tu_metric(const char *text, const char *series);

#endif /* DAL_TESTUTIL_H */
