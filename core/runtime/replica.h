/*
 * replica.h -- which server of a node runs a statement: read-write
 * splitting, load balancing over the replicas, read-your-writes.
 *
 * Rules (the step "select" of the statement path, after routing):
 *  - Writes, DDL, SET/SHOW/CALL/..., SELECT ... FOR UPDATE / LOCK IN SHARE
 *    MODE, SELECTs calling functions with side effects or server-local
 *    state (dal_sql_t.needs_master) or touching session state (pins), every
 *    statement of a read-write transaction and every statement of a
 *    session on a node where it pinned a connection go to the master.
 *  - Other SELECTs, and read-only transactions, go to a replica in rotation
 *    chosen by load_balance; with none in rotation, to the master.
 *  - Read-your-writes: after a session (or, for dal_query, a thread) wrote
 *    to a node, its reads there go to a replica known to have applied the
 *    write (its GTID, from the checker), else to the master -- for the rest
 *    of the session, or for read_your_writes = <duration> after the write.
 *  - Overrides: dal_query_opts_t.server, or the hints `/\*+ dal master *\/`,
 *    `/\*+ dal replica *\/`, `/\*+ dal server=master|replica *\/`.
 *    A forced replica skips read-your-writes; a write cannot be forced to
 *    a replica.
 *
 * Choosing costs a few loads and, for round_robin, one atomic increment;
 * nothing here blocks or allocates.
 */
#ifndef DAL_CORE_REPLICA_H
#define DAL_CORE_REPLICA_H

#include <stdint.h>

#include "gtid.h"
#include "monitor.h"
#include "snapshot.h"

/* ------------------------------------------------------ read-your-writes */

/* Nodes remembered per writer.  A writer with marks on more nodes than this
 * at once reads every node from the master from then on (for its window, or
 * for the rest of the session): safe, if slower. */
#define DAL_RYW_MAX 64

typedef struct dal_ryw_mark {
    uint64_t node_key;     /* dal_node_t.ryw_key */
    uint64_t until_ns;     /* reads need the write until then (UINT64_MAX: session) */
    dal_gtid_t gtid;       /* the write's GTID, when has_gtid */
    int has_gtid;
} dal_ryw_mark_t;

/* The writes a session (or a thread, for dal_query) must read back.  Plain
 * data owned by its writer; zero-initialise.  Not thread-safe.  A mark goes
 * when its window ends or every replica of its node has applied its GTID. */
typedef struct dal_ryw {
    dal_ryw_mark_t marks[DAL_RYW_MAX];
    unsigned int n;
    uint64_t all_until_ns; /* overflow: every node reads from the master until then */
} dal_ryw_t;

/* Remember that the writer wrote to node: g is the write's GTID, or NULL
 * when unknown (then only the master is sure to have it).  A no-op when
 * the node's read_your_writes is off. */
void ryw_note(dal_ryw_t *w, const dal_node_t *node, const dal_gtid_t *g);

/* The calling thread's writer, for statements outside a session. */
dal_ryw_t *ryw_thread(void);

/* ------------------------------------------------------------- choosing */

enum {
    DAL_SELECT_EXPLAIN = 1,  /* no side effects: no checker started, and replicas not
                                checked yet count as in rotation */
    DAL_SELECT_MASTER = 2,   /* a read-write transaction: every route on the master */
    DAL_SELECT_READ = 4      /* a read-only transaction: treat the statement as a read */
};

/* The statement's server override: opts->server if set, else its hints.
 * DAL_SERVER_*; an unknown value or contradicting hints are DAL_EINVAL. */
int server_override(const dal_sql_t *sql, const dal_query_opts_t *opts, int *out,
                    dal_error_t *err);

/* What a choice depends on besides the statement. */
typedef struct dal_select {
    int override;          /* DAL_SERVER_* (server_override) */
    unsigned int flags;    /* DAL_SELECT_* */
    dal_ryw_t *ryw;        /* the writer whose writes reads must see, or NULL */
    dal_server_t *fixed;   /* a transaction's server: routes to its node run there */
} dal_select_t;

/* The server for a read on node (override, read-your-writes, health). */
dal_server_t *select_read(dal_node_t *node, const dal_select_t *sel);

/* Where a read that failed on srv's dead connection runs again: another
 * replica in rotation, else the master.  NULL when srv is the master. */
dal_server_t *select_failover(dal_server_t *srv);

/* A connection to srv died: close its idle ones and, for a replica, take
 * it out of rotation until the checker sees it healthy again. */
void server_lost(dal_server_t *srv, const char *why);

/* "master" or "replica". */
const char *server_role(const dal_server_t *srv);

#endif /* DAL_CORE_REPLICA_H */
