/*
 * session_int.h -- the session handle's fields (dal_session_t), shared by
 * the files of core/api that implement dal.h's dal_session_* calls:
 * session.c (statements and transactions) and session_hooks.c (what the
 * caller hooks into a session).  Nothing outside core/api reads them.
 */
#ifndef DAL_SESSION_INT_H
#define DAL_SESSION_INT_H

#include "cancel.h"
#include "handle.h"
#include "infile.h"
#include "pin.h"
#include "replica.h"
#include "session_vars.h"
#include "snapshot.h"
#include "txn.h"
#include "warnings.h"

struct dal_session {
    dal_t *dal;             /* borrowed */
    int in_txn;
    int read_only;          /* the transaction is READ ONLY */
    int wrote;              /* the transaction ran a write (read-your-writes without GTIDs) */
    dal_snapshot_t *snap;   /* one reference while in_txn */
    snap_slot_t slot;       /* the last statement's snapshot outside a transaction */
    int snap_lent;          /* snap's reference is lent to the running statement */
    int lend_ended;         /* ... whose transaction ended: it gives the reference back */
    dal_node_t *node;       /* the transaction's node, once its first statement ran */
    dal_server_t *server;   /* ... and its server (the master unless read-only) */
    dal_conn_t *conn;       /* held from the first statement to the end */
    dal_ryw_t ryw;          /* what this session wrote and must read back */
    int manual;             /* autocommit = 0: statements open a transaction */
    session_vars_t vars;    /* the variables every connection taken gets */
    dal_pins_t pins;        /* connections holding the session's server state */
    int conn_pinned;        /* conn is a pin's: the transaction only borrows it */
    dal_cancel_t cancel;    /* the connections its statement runs on (dal_session_cancel) */
    int keep_warnings;      /* read each statement's SHOW WARNINGS (warnings.h) */
    int keep_sets;          /* a CALL's sets before its error (dal_session_keep_sets) */
    const dal_relay_t *relay; /* borrowed: dal_session_set_relay's sink, or NULL */
    void *relay_ctx;
    int relay_armed;        /* the public text call under way may relay (session_query) */
    int mode;               /* SET dal_transaction_mode: a dal_txn_mode_t, or -1 ([dal]'s) */
    dal_txn_t *txn;         /* owned: the open transaction when it is multi or xa (txn.h) */
    dal_txn_t *reads;       /* owned: a single-mode transaction's other nodes, from the
                               first statement there, or NULL */
    dal_node_t *write_node; /* the node a single-mode transaction wrote on, or NULL */
    int no_backslash;       /* the session's sql_mode has NO_BACKSLASH_ESCAPES, as the
                               last connection that applied its variables or answered
                               one of its statements with an OK said: clients escape
                               their strings by it (dal_session_status) */
    dal_infile_t infile;    /* LOAD DATA LOCAL INFILE bytes (dal_session_set_infile), if has_infile */
    int has_infile;
    char schema[256];       /* the [schema] of unqualified table names (dal_session_use_schema);
                               "": the top level */
    int server_db;          /* schema is a database of [dal] server_schemas' datasource,
                               selected on the session's pin there (DAL_PIN_SCHEMA), or ""
                               after DROP DATABASE of it: none, as that pin's connection */
    /* the warnings of the COMMIT or ROLLBACK that ended the transaction on
     * its connection (a server's 1196 for a non-transactional table rolled
     * back), for that statement's result (txn_statement) */
    unsigned int end_warnings;
    dal_warnings_t *end_warns; /* owned: their SHOW WARNINGS rows (warnings.h), or NULL */
    dal_warnings_t *failed;    /* owned: the last statement's server error's diagnostics */
};

#endif
