/*
 * server_db.h -- a session's database of [dal] server_schemas' datasource:
 * a name no [schema] declares, selected on the session's pinned
 * connection of that datasource (DAL_PIN_SCHEMA), where its statements
 * then run as written.  The connection goes back to the URL's database
 * when the session leaves it (conn_use_db; the pool's reset does the
 * same), so no pooled connection carries it to another session.  DROP
 * DATABASE of it leaves that connection, and the session, in none.
 * Not thread-safe: a session's.
 */
#ifndef DAL_CORE_SERVER_DB_H
#define DAL_CORE_SERVER_DB_H

#include <stddef.h>

#include "pin.h"
#include "stmt.h"

/* Select name on the pin of snap's server_node in p (borrowed), taken now
 * when p has none there.  The server's error (1049: no such database)
 * leaves p as it was (a pin taken for it given back). */
int server_db_select(dal_pins_t *p, dal_snapshot_t *snap, const char *name, dal_error_t *err);

/* The pin of snap's server_node that holds the database, or NULL. */
dal_pin_t *server_db_pin(dal_pins_t *p, const dal_snapshot_t *snap);

/* Leave the database: each pin holding it goes back to the URL's
 * database, or, held for nothing else and not busy (the connection of
 * the session's open transaction), to its pool. */
void server_db_leave(dal_pins_t *p, const dal_conn_t *busy);

/* sql (its text, or its prepared statement's) is DROP {DATABASE | SCHEMA}
 * [IF EXISTS] db, which leaves a server's session whose database it was
 * in none. */
int server_db_drops(dal_stmt_text_t sql, const char *db);

#endif /* DAL_CORE_SERVER_DB_H */
