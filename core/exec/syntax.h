/*
 * syntax.h -- a server's syntax error for a text dal cannot read
 * (dal_session_syntax_error): the text is prepared on a server
 * (COM_STMT_PREPARE) and the handle closed at once.  A prepare runs
 * nothing: the server parses the text, and a text it cannot parse never
 * gets further, so its data, its session state and its counters of
 * executed statements stay as they were.
 */
#ifndef DAL_CORE_SYNTAX_H
#define DAL_CORE_SYNTAX_H

#include <stddef.h>

#include "snapshot.h"

/*
 * Prepare text[0..len) on a connection of node's master.  1 when the
 * server's parser refuses it (ER_PARSE_ERROR 1064, ER_SYNTAX_ERROR 1149):
 * err then holds the server's error (DAL_ESERVER, its number, SQLSTATE and
 * words after "datasource NAME (server): error N (STATE): ").  0 when it
 * parses, or the server answers anything else or cannot be reached: err is
 * left as it was.
 */
int exec_syntax_error(dal_node_t *node, const char *text, size_t len, dal_error_t *err);

#endif /* DAL_CORE_SYNTAX_H */
