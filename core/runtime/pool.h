/*
 * pool.h -- getting a connection to a node: through the pool plugin named
 * in [dal] pool (pool.* parameters, overridable per datasource), or the
 * built-in idle cache when none is configured.
 */
#ifndef DAL_CORE_POOL_H
#define DAL_CORE_POOL_H

#include "snapshot.h"

/* Create srv->pool_inst if a pool plugin is configured: one instance per
 * server (master or replica).  Errors are "FILE:LINE: ..." (the pool key's
 * line, or the offending pool.* key's). */
int pool_build(struct dal_snapshot *s, dal_server_t *srv, dal_error_t *err);
/* Destroy srv->pool_inst (all its connections must be back). */
void pool_teardown(dal_server_t *srv);

/* A connection to srv.  *reused says it had been used before (so a
 * "server gone" error on it may be retried for reads). */
int server_acquire(dal_server_t *srv, dal_conn_t **out, int *reused, dal_error_t *err);
/* Give it back; reusable == 0 means it is broken and must be closed. */
void server_release(dal_server_t *srv, dal_conn_t *c, int reusable);
/* A connection to srv died: close the idle ones of the built-in cache,
 * which went with it (a pool plugin validates its own). */
void server_flush(dal_server_t *srv);
/* srv's current pool figures (plugin or built-in cache); zeros when the
 * plugin has no stats op.  Thread-safe. */
void server_pool_stats(dal_server_t *srv, dal_pool_stats_t *out);

/* u as "host:port" (or its socket path), without user or password: what
 * fills dal_server_t.address, the `server` of pool plugin instances and of
 * monitor events. */
void url_address(const dal_url_t *u, char *out, size_t cap);

/*
 * What the calling thread is running, for leak reports: a pool plugin that
 * sees a connection held too long names the statement that took it.  The
 * core sets it before acquiring connections for a statement and clears it
 * (NULLs) after; both strings are borrowed and must stay valid until then.
 * sql should be normalised (sql_normalize): it ends up in logs.
 */
void pool_set_statement(const char *sql, const char *trace_id);
/*
 * The session variables (conn.h) the calling thread's statement runs with:
 * server_acquire applies them to every connection it hands out from now
 * on, and server_release undoes them before the connection goes back to
 * its pool.  A session sets them around each of its statements and clears
 * them (NULL) after; v is borrowed until then.  NULL: none (dal_query).
 */
void pool_set_vars(const dal_conn_vars_t *v);

/* Behind the host API's current_statement: writes "trace_id=ID SQL" (or
 * just SQL) into buf, NUL-terminated and truncated to cap.  Returns the
 * length written; 0 when no statement is set. */
size_t pool_current_statement(char *buf, size_t cap);

#endif /* DAL_CORE_POOL_H */
