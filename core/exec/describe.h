/*
 * describe.h -- a statement's columns without running it
 * (dal_query_opts_t.describe): route 0's SQL is prepared on the
 * connection the route got (COM_STMT_PREPARE), its result metadata read,
 * and the handle closed.  Nothing is executed, so the server's data, its
 * session counters and its per-connection state (the last insert id
 * sql_auto_is_null reads) stay as they were.
 */
#ifndef DAL_CORE_DESCRIBE_H
#define DAL_CORE_DESCRIBE_H

#include "buf.h"
#include "conn.h"
#include "result.h"
#include "route.h"

/*
 * Describe route r of rt on c into res: the prepared statement's columns
 * as a source without rows (none for a statement without columns) and c's
 * status.  The SQL is the route's template (each ? kept, as a server
 * would be sent it prepared), or, for a statement run on its shape's
 * analysis or one the template cannot be written for, the route's text
 * with params as literals.  sql is scratch room.  0, or a negative DAL_E*
 * code with err filled (a server's refusal to prepare: DAL_ESERVER with
 * its errno, mysql_errno(&c->mysql) telling whether c is still usable).
 */
int describe_on(const dal_routing_t *rt, size_t r, dal_conn_t *c, const dal_value_t *params,
                size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err);

#endif /* DAL_CORE_DESCRIBE_H */
