/*
 * health.h -- the replica checker of a node.
 *
 * Every node with replicas has one checker: a thread that, every
 * health_check_interval, asks each replica for its replication status
 * (SHOW ALL SLAVES STATUS: are both threads running, Seconds_Behind_Master,
 * Gtid_Slave_Pos) and the master whether it answers, and sets each
 * replica's dal_server_t.health.  The statement path only reads that
 * atomic, so checking costs statements nothing.
 *
 * The thread starts with the node's first statement that could go to a
 * replica (health_ensure), so `dal explain`, `dal check` and a reload
 * that only builds a candidate never connect, as dal_open promises.  It
 * stops when the node is freed; every wait in it is bounded by the connect
 * timeout and cut short when the node goes.
 */
#ifndef DAL_CORE_HEALTH_H
#define DAL_CORE_HEALTH_H

#include "snapshot.h"

typedef struct dal_health dal_health_t;

/* A checker for node (not started).  *out owned by the node
 * (health_free); NULL for a node without replicas.  0 or DAL_ENOMEM. */
int health_new(dal_node_t *node, dal_health_t **out, dal_error_t *err);

/* Start the checker if it is not running yet.  Cheap when it is (one
 * atomic load): called on the statement path.  A checker that cannot start
 * is logged once, and its replicas stay unknown: reads go to the master. */
void health_ensure(dal_health_t *h);

/* Stop the thread (if started), close its connections, free h.  NULL is a
 * no-op.  Returns promptly even while a server does not answer. */
void health_free(dal_health_t *h);

/* A statement found a replica's connection dead: take it out of rotation
 * until the checker sees it healthy again (at its next round). */
void health_mark_down(dal_server_t *srv, const char *why);

#endif /* DAL_CORE_HEALTH_H */
