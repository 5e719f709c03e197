/*
 * pin.h -- a session's pinned connections.
 *
 * Some statements leave state in the server session they ran in: user
 * variables, temporary tables, table and named locks, SQL prepared
 * statements, open handlers (sql.h's DAL_PIN_*).  A dal session runs its
 * statements on pooled connections, which the pool resets between
 * borrowers, so that state would be gone by the next statement.  Instead
 * the session keeps (pins) the master connection of each data node where
 * such a statement ran, until it ends or resets, and runs its later
 * statements on that node there.
 *
 * A pin keeps a reference on the snapshot it was taken under, so its node
 * and pool outlive any reload; statements find it by datasource name, so a
 * reload that rebuilds the node (new settings) leaves the session on the
 * connection that holds its state.  Not thread-safe: a session's.
 */
#ifndef DAL_CORE_PIN_H
#define DAL_CORE_PIN_H

#include <stddef.h>

#include "snapshot.h"

typedef struct dal_pin {
    dal_snapshot_t *snap;  /* one reference: keeps node and its pool alive */
    dal_node_t *node;      /* borrowed from snap */
    dal_conn_t *conn;      /* owned, taken from node->master; NULL once lost */
    unsigned int reasons;  /* DAL_PIN_* of the statements that ran on it */
} dal_pin_t;

/* Plain data owned by its session; zero-initialise. */
typedef struct dal_pins {
    dal_pin_t *v;          /* owned, n used of cap */
    size_t n, cap;
} dal_pins_t;

/* The pin of node's datasource (the same node, or one a reload rebuilt
 * under the same name), or NULL.  Borrowed from p until pins_release. */
dal_pin_t *pins_find(dal_pins_t *p, const dal_node_t *node);

/* The pin holding the session's user variables (reasons has
 * DAL_PIN_USER_VAR), or NULL. */
dal_pin_t *pins_user_vars(dal_pins_t *p);

/* Take a connection of node's master (snap's, borrowed: the pin takes a
 * reference) and pin it for the state of reasons (DAL_PIN_*), which
 * snap's monitors hear of (DAL_EVENT_PIN); reasons 0 holds it for a call
 * that gives it back (pins_drop), heard of by none.  *out is the new pin,
 * borrowed from p. */
int pins_take(dal_pins_t *p, dal_snapshot_t *snap, dal_node_t *node, unsigned int reasons,
              dal_pin_t **out, dal_error_t *err);

/* pins_take for c, a connection of node's master the caller took:
 * transferred on success, still the caller's on failure. */
int pins_add(dal_pins_t *p, dal_snapshot_t *snap, dal_node_t *node, dal_conn_t *c,
             unsigned int reasons, dal_pin_t **out, dal_error_t *err);

/* The pin holding the session's XA transaction (reasons has DAL_PIN_XA),
 * or NULL. */
dal_pin_t *pins_xa(const dal_pins_t *p);

/* BEGIN, COMMIT or ROLLBACK (sql, NUL-terminated) while the session's XA
 * transaction is open: run on its connection, where the server answers
 * as it does inside an XA transaction (1399 XAER_RMFAIL in every state
 * until XA COMMIT or XA ROLLBACK).  1: no XA transaction open (dal ends
 * or begins its own); 0: the server ran it, *out its (empty) result,
 * the caller's; else its error. */
int pins_xa_txn_control(dal_pins_t *p, const char *sql, dal_result_t **out, dal_error_t *err);

/* An XA statement of kind xa (dal_sql_t.xa) in a session with autocommit
 * 0 and no transaction open: XA COMMIT or XA ROLLBACK while the session
 * has no XA transaction gets the server's 1400 XAER_OUTSIDE, which a
 * server gives then (dal's connections run with autocommit 1, where a
 * server would end another session's prepared XA transaction of that
 * xid); else 0. */
int pins_xa_outside(const dal_pins_t *p, int xa, dal_error_t *err);

/* The pin's connection died: closed; the pin stays, without it, so that
 * statements on its node fail until the session resets. */
void pins_lost(dal_pin_t *pin);

/* Give pin (one of p's) back: its connection to its pool, which resets
 * it; the other pins stay (their addresses may move). */
void pins_drop(dal_pins_t *p, dal_pin_t *pin);

/* Give every connection back to its pool (which resets it: the state goes)
 * and forget the pins. */
void pins_release(dal_pins_t *p);

/* pins_release but for the pins holding keep (DAL_PIN_*): those are reset
 * in place (COM_RESET_CONNECTION: their server state goes as a pooled
 * connection's would, the session status counters restart at 0, the
 * current database stays) and stay, pinned for keep alone; one whose
 * reset fails goes too. */
void pins_reset(dal_pins_t *p, unsigned int keep);

/* Connections pinned and alive. */
size_t pins_count(const dal_pins_t *p);

struct dal_stmt;

/*
 * Check a routed statement against the pins (before its servers are
 * chosen): a route to a pinned node gets its master as server (where the
 * pinned connection is); a node whose pinned connection was lost fails
 * (DAL_ESTATE); a
 * statement using user variables must run on one node, the one holding
 * the variables once there is one -- a statement naming no table is moved
 * there (unless opts or its hints chose the datasource), any other fails
 * (DAL_EUNSUPPORTED).  While the session's XA transaction is open, every
 * statement runs on its node in the same way: a statement naming no table
 * is moved there, one that goes elsewhere fails (DAL_EUNSUPPORTED), as it
 * would run outside the XA transaction.  snap is the statement's
 * (borrowed).
 */
int pins_check(dal_pins_t *p, const dal_snapshot_t *snap, const dal_query_opts_t *opts,
               struct dal_stmt *st, dal_error_t *err);

/*
 * Run st (outside a transaction) on the pinned connections of its nodes,
 * pinning a connection first on each node where st leaves state (its pins)
 * and has none (snap: the statement's, borrowed), and on the pools for the
 * others.  An XA COMMIT or XA ROLLBACK that succeeded, or an XA START that
 * failed, leaves no XA transaction: the pin keeps its other reasons, and
 * goes back to its pool when it has none.  Returns 1, having done nothing,
 * when no route has or needs a pin: the caller runs it through the pools.
 * Writes are noted in the routing's ryw (replica.h).  On success *out is
 * owned by the caller.
 */
int pins_run(dal_pins_t *p, dal_snapshot_t *snap, struct dal_stmt *st, dal_result_t **out,
             dal_error_t *err);

#endif /* DAL_CORE_PIN_H */
