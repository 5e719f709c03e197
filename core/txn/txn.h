/*
 * txn.h -- a transaction over several data nodes: transaction_mode multi
 * (a plain transaction per node, committed in turn) or xa (an XA branch
 * per node, two-phase commit through the decision log of xa.h); or, in
 * transaction_mode single, the nodes a transaction reads besides its own
 * (a plain transaction per node, at most one of them written).
 *
 * The session (session.c) owns one while such a transaction is open and
 * asks it for the connection of each statement's node; a node's branch
 * starts on its first statement there, on the master (on the session's
 * pinned connection to that node if it has one).
 */
#ifndef DAL_CORE_TXN_H
#define DAL_CORE_TXN_H

#include <dal/dal.h>

#include "conn.h"
#include "pin.h"
#include "replica.h"
#include "snapshot.h"
#include "warnings.h"

typedef struct dal_txn dal_txn_t;

/* A new transaction of mode (DAL_TXN_MULTI or DAL_TXN_XA, or DAL_TXN_SINGLE
 * for a single-mode transaction's other nodes) on snap (which
 * must outlive it: the session holds a reference); pins and ryw borrowed
 * from the session.  *out owned by the caller: it ends with txn_commit or
 * txn_rollback. */
int txn_open(dal_snapshot_t *snap, dal_txn_mode_t mode, int read_only, dal_pins_t *pins,
             dal_ryw_t *ryw, dal_txn_t **out, dal_error_t *err);

/* The connection of node's branch (borrowed until the transaction ends),
 * the branch started first if it had none. */
int txn_conn(dal_txn_t *t, dal_node_t *node, dal_conn_t **out, dal_error_t *err);

/* node's connection died in a statement: its server rolled its branch
 * back (an XA branch not yet prepared dies with its connection).  The
 * caller then rolls back the transaction. */
void txn_lost(dal_txn_t *t, const dal_node_t *node);

/* DAL_TXN_SINGLE: node's branch ran a write (the session allows one such
 * node), so its COMMIT is the one that decides. */
void txn_wrote(dal_txn_t *t, const dal_node_t *node);

/* COMMIT (see dal_begin_mode in dal.h for what each mode promises) and
 * ROLLBACK; both free t.  DAL_TXN_SINGLE commits the written branch
 * first (its failure rolls back the others and is the error), then the
 * others, which only read: a failure there loses nothing and is no error. */
int txn_commit(dal_txn_t *t, dal_error_t *err);
/* From now on t adds the warnings of the statements that end its
 * branches (COMMIT, ROLLBACK, XA END/PREPARE/COMMIT/ROLLBACK) to *count and
 * *warns (both borrowed; they must outlive t's end), as a server's COMMIT
 * or ROLLBACK answers with them (1196 for a non-transactional table's
 * change rolled back). */
void txn_keep_warnings(dal_txn_t *t, unsigned int *count, dal_warnings_t **warns);
void txn_rollback(dal_txn_t *t);

/* The datasource of the transaction's first branch, or NULL: owned by t. */
const char *txn_first_datasource(const dal_txn_t *t);

#endif /* DAL_CORE_TXN_H */
