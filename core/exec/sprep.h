/*
 * sprep.h -- server-side prepared statements on the backend connections.
 *
 * With [dal] server_prepare = auto, a statement meant to run again (it has
 * ? placeholders, or it is a dal_prepare handle) runs on one node as a
 * server-side prepared statement: its physical SQL with the ? kept (the
 * route's "template") is prepared on the connection the first time it runs
 * there, and every later run only sends the bound parameters, so the
 * server parses it once per connection instead of once per run.
 *
 * Each connection keeps its statement handles in a cache keyed by the
 * template (at most [dal] server_prepare_cache of them; the oldest not run
 * since it was last looked at is closed first, a "second chance" order
 * that costs a run no list moves), and a route memo that finds a
 * statement's handle again without writing its template out.  The cache is the connection's extension
 * (dal_conn_ext_t): dropped before a COM_RESET_CONNECTION (which drops
 * the server's statements) and when the connection closes.
 *
 * Never silently wrong: whenever a statement cannot run prepared with the
 * same outcome as text, it runs as text, and the monitors are told
 * (DAL_EVENT_SPREP, kind "fallback"):
 *  - the server refuses to prepare it while the text form runs: remembered
 *    on the statement's analysis, it runs as text from then on;
 *  - the server's max_prepared_stmt_count is reached: text, and the
 *    connection tries no new prepare for a while;
 *  - the cache churns (handles closed without running a second time, a
 *    working set larger than server_prepare_cache): new templates run as
 *    text for a while, the handles that run again stay prepared;
 *  - ER_NEED_REPREPARE (the server could not re-prepare it after DDL):
 *    prepared again once, else text for that run;
 *  - a session statement that may change how SQL is parsed (SET, USE,
 *    ...) drops the connection's handles.
 */
#ifndef DAL_CORE_SPREP_H
#define DAL_CORE_SPREP_H

#include "buf.h"
#include "config.h"
#include "conn.h"
#include "result.h"
#include "route.h"

/* [dal] server_prepare, in the order of the config words. */
enum { SPREP_AUTO = 0, SPREP_OFF = 1 };

/* Templates with more ? than this (long multi-row INSERTs) run as text:
 * each row count would be a template of its own, prepared for one use. */
#define SPREP_MAX_PARAMS 512

/* The mode in force for cfg: the file's key when given, else the
 * environment's DAL_SERVER_PREPARE (auto or off; lets a whole test suite
 * run in either mode), else auto. */
int sprep_mode(const dal_config_t *cfg);

/* Should sql run prepared under cfg?  prepared: it comes from a dal_prepare
 * handle; traced: the caller gave a trace id, which goes into the SQL as a
 * comment and so must be sent as text. */
int sprep_wanted(const dal_config_t *cfg, const dal_sql_t *sql, int prepared, int traced);

/* What sprep_send returns when the route must run as text. */
#define SPREP_TEXT 1

/*
 * Run route r of rt on c as a prepared statement when rt says so and the
 * cache allows, adding its outcome (rows, or affected rows, insert id,
 * info, warnings, status) to res as exec.c's text path does.  sql is
 * scratch room for the template.  Returns 0, a negative DAL_E* code with
 * err filled (mysql_errno(&c->mysql) then tells whether c is still usable,
 * as after a text statement), or SPREP_TEXT: nothing was sent that changes
 * anything, run the route as text.  A statement that runs as text on c and
 * may change how c parses SQL (SET, USE, ...) drops c's handles here too.
 */
int sprep_send(const dal_routing_t *rt, size_t r, dal_conn_t *c, const dal_value_t *params,
               size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err);

/* Would route r of rt run prepared (for dal_explain)? */
int sprep_route_eligible(const dal_routing_t *rt, size_t r);

#endif /* DAL_CORE_SPREP_H */
