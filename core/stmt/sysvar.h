/*
 * sysvar.h -- the system variables a dal session keeps itself, read back
 * as the session holds them: autocommit (session.c: the servers'
 * connections always run with 1, and a session with 0 opens a dal
 * transaction before its statements).
 */
#ifndef DAL_CORE_SYSVAR_H
#define DAL_CORE_SYSVAR_H

#include "stmt.h"

/* Make st's reads of the session's @@autocommit answer 0 (st->sql has
 * reads_autocommit).  Each reference becomes TRUNCATE(@@autocommit, -1):
 * 0 whatever the server's value, and described by a server as it describes
 * @@autocommit (BIGINT, length 1, nullable); a select item without an alias
 * that holds one gets its own text as alias, the name a server gives it.
 * The edits join the merge's (st->edits) on every route; st then runs as
 * text, never as a server-side prepared statement (its template is shared
 * by sessions of either value).  0, or DAL_ENOMEM. */
int sysvar_autocommit_off(dal_stmt_t *st, dal_error_t *err);

#endif /* DAL_CORE_SYSVAR_H */
