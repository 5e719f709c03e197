/*
 * relay.h -- a plain read's result handed to the caller's relay sink
 * (dal_session_set_relay, include/dal/dal.h) as the server's packets,
 * instead of being decoded into a dal_result_t and encoded again by a
 * front end.  exec.c asks relay_wanted for every one-route text statement
 * and runs relay_run in place of mysql_real_query and its store.
 */
#ifndef DAL_CORE_RELAY_H
#define DAL_CORE_RELAY_H

#include <stddef.h>

#include "buf.h"
#include "colset.h"
#include "conn.h"
#include "relay_parse.h"
#include "result.h"
#include "result_binary.h"
#include "route.h"

/* relay_wanted's answers other than 0: how the column definitions go. */
#define RELAY_AS_SENT 1     /* as the server sent them */
#define RELAY_NO_EXTENDED 2 /* without MariaDB's extended type info block,
                               which the connection has and the client
                               does not take (relay_strip_extended) */

/* Whether route r of rt, whose SQL is sql[0..len), relays on c: a sink is
 * set, the statement is the caller's text unchanged, a SELECT with one
 * result set whose columns dal would not rename, and c's extended metadata
 * is the sink's or can be taken out for it (dal.h says which statements
 * qualify): RELAY_AS_SENT or RELAY_NO_EXTENDED, else 0.  0 when the
 * connector lacks the calls relay_run needs. */
int relay_wanted(const dal_routing_t *rt, size_t r, const dal_conn_t *c, const char *sql,
                 size_t len);

/* Send sql[0..len) on c and pass the reply to rt's sink, the definitions
 * as how (relay_wanted's answer) says; res gets the end
 * (warnings, status; rows counted in relayed_rows), or, for a statement
 * that answered with an OK, its counts.  res->relayed is set once a packet
 * went to the sink, also when the statement then fails: it must not run
 * again.  On failure as send_on: conn_error's err, mysql_errno(&c->mysql)
 * telling whether c is still usable (a definition relay_strip_extended
 * cannot read leaves c out of step: closed). */
int relay_run(const dal_routing_t *rt, dal_conn_t *c, int how, const char *sql, size_t len,
              dal_result_t *res, dal_error_t *err);

/* A prepared statement's column definitions as the relay sends them, kept
 * with its handle (sprep.c's entry) from one execution to the next: they
 * change only when the reader's description does (a reply after DDL). */
typedef struct relay_cols {
    colset_t *cols;          /* a reference: the description bytes were made of, or NULL */
    int extended;            /* bytes carry MariaDB's extended metadata */
    dal_buf_t bytes;         /* owned: each definition as a 4-byte length (host order)
                                and its payload */
} relay_cols_t;

/* Free what rc keeps (zeroed, it keeps nothing). */
void relay_cols_free(relay_cols_t *rc);

/* Whether route r of rt, executed on c as the prepared template tpl[0..len),
 * relays its binary rows: the sink takes them (DAL_RELAY_BINARY), the
 * template is the caller's statement unchanged, and the rest as
 * relay_wanted (the definitions are dal's, with or without the extended
 * block as the sink says: a sink without it takes them from a connection
 * with it). */
int relay_binary_wanted(const dal_routing_t *rt, size_t r, const dal_conn_t *c, const char *tpl,
                        size_t len);

/* The result st (read by rd) was just executed into, its rows still on
 * the wire, passed to rt's sink: the column count, the definitions (from
 * rd's description, encoded once into *cache), the binary rows as the
 * server sent them; then st and c left as after a fully fetched result.
 * 0; BINARY_STALE (nothing relayed, the rows dropped: st must be prepared
 * again); or a negative code as relay_run, res->relayed telling whether
 * anything reached the sink. */
int relay_binary_run(const dal_routing_t *rt, dal_conn_t *c, MYSQL_STMT *st, binary_reader_t *rd,
                     relay_cols_t *cache, dal_result_t *res, dal_error_t *err);

#endif /* DAL_CORE_RELAY_H */
