/*
 * reply.h -- the replies a client is sent: every ERR, OK and result set
 * of a command is built here, into the client's output buffer (c->out,
 * owned by the client; sent later by its I/O thread, or on the way by
 * proxy_drain for a big result).  The handlers (client.c, auth.c,
 * setvar.c, prepared.c, schema.c, diag.c, kill.c) call down into it; it
 * never calls back up into them.  It tells diag.c of each error and of
 * each statement's warnings, which SHOW WARNINGS answers from.
 *
 * Every function runs on the thread that owns c (its I/O thread or the
 * worker running its command) and borrows all it is passed.
 */
#ifndef DAL_PROXY_REPLY_H
#define DAL_PROXY_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dal/dal.h>

#include "protocol.h"
#include "proxy.h"

/* An ERR (code 0 goes out as 1105, ER_UNKNOWN_ERROR); c->failed is set,
 * and once c is logged in the error is the statement's diagnostics. */
void reply_err(proxy_client_t *c, uint16_t code, const char *sqlstate, const char *msg);
void reply_ok(proxy_client_t *c, uint64_t affected, uint64_t insert_id, unsigned int warnings);
/* OK carrying the session state changes state[0..len) (proto_track_*),
 * for a client with CLIENT_SESSION_TRACK (the others get a plain OK). */
void reply_ok_state(proxy_client_t *c, const uint8_t *state, size_t len, unsigned int warnings);
/* The same with a server's info line ("Rows matched: ..."; NULL: none). */
void reply_ok_info(proxy_client_t *c, uint64_t affected, uint64_t insert_id,
                   unsigned int warnings, const char *info);
/* A dal error as the MySQL error a client expects: a server's own number
 * and SQLSTATE, else the closest MySQL error for what dal refused; never
 * the backend's user, host or port (what is taken out is logged). */
void reply_dal_error(proxy_client_t *c, const dal_error_t *err);
/* 1049: the database name (n bytes, not terminated) is not the proxy's. */
void reply_unknown_db(proxy_client_t *c, const char *name, size_t n);
/* The session's transaction bits (the same numbers as the protocol's; a new
 * session's before c has one: dal_new_session_status),
 * with SERVER_MORE_RESULTS_EXISTS while c->more. */
uint16_t reply_status(const proxy_client_t *c);
/* The session's sql_mode has NO_BACKSLASH_ESCAPES (dal_session_status): a
 * backslash in its '' and "" strings is an ordinary byte, and a quote in a
 * value written into its SQL is doubled, a backslash left alone. */
bool reply_no_backslash(const proxy_client_t *c);
/* Column i of r as a column definition: the type, charset, flags and
 * lengths the servers gave (dal's numbers are the protocol's).  The
 * strings borrow from r. */
void reply_column(const dal_result_t *r, size_t i, proto_column_t *col);
/* r as one result set (columns, rows as text or, for COM_STMT_EXECUTE,
 * binary, then the end) or as an OK when it has no columns; the sets a
 * CALL left after r follow it for a client that takes several.  r stays
 * the caller's. */
void reply_result(proxy_client_t *c, dal_result_t *r, bool binary);
/* The relay sink (dal_session_set_relay) that frames a server's result
 * packets for c with its sequence numbers into c->out, for c's
 * capabilities (NULL: none fits them); its ctx is c; binary: the sink of
 * a COM_STMT_EXECUTE, which takes binary rows (DAL_RELAY_BINARY).
 * reply_result then writes the end. */
const dal_relay_t *reply_relay(const proxy_client_t *c, bool binary);
/* One set of r, with each non-NULL value of each row passed through map
 * first, which may point *val at other bytes (owned by map's user, valid
 * until the next call of map). */
typedef void (*reply_map_fn)(void *user, size_t column, const char **val, size_t *len);
void reply_result_map(proxy_client_t *c, dal_result_t *r, bool binary, reply_map_fn map,
                      void *user);
/* The column of a value the proxy answers for the servers, described as
 * a server describes the expression's. */
typedef enum reply_kind {
    REPLY_CONNECTION_ID,  /* INT UNSIGNED NOT NULL, as CONNECTION_ID() */
    REPLY_FLAG,           /* BIGINT UNSIGNED, as @@in_transaction */
    REPLY_NAME            /* VARCHAR(64) utf8mb4, NULL-able, as DATABASE() */
} reply_kind_t;
/* A result set of one row and one column called name (an expression's:
 * no table, no original name) holding value (NULL: SQL NULL). */
void reply_value(proxy_client_t *c, const char *name, const char *value, reply_kind_t kind);
/* One row of a result set the proxy makes, under the columns cols[0..n):
 * text, or binary while c->binary.  lens NULL: the values are strings. */
void reply_row(proxy_client_t *c, const proto_column_t *cols, size_t n, const char *const *vals,
               const size_t *lens);

#endif /* DAL_PROXY_REPLY_H */
