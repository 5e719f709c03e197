/*
 * events.h -- every event the core emits to the monitor plugins, each kind
 * built in one place: a statement (after its last route), an execution (one
 * route on one server), a route (the server a route goes to), a reload, a
 * session's pinned connection.
 * ID generators report their segments themselves, through the host API.
 *
 * Without monitors a statement must pay next to nothing, so every function
 * checks monitor_active first, inline, and only then calls the one that
 * builds the event.
 */
#ifndef DAL_CORE_EVENTS_H
#define DAL_CORE_EVENTS_H

#include <stdint.h>

#include "monitor.h"
#include "replica.h"
#include "route.h"

struct dal_result;

void event_statement_emit(const struct dal_monitor_set *m, const dal_routing_t *rt,
                          const char *sql_norm, const char *trace, uint64_t t0, int rc,
                          const struct dal_result *r);
void event_execution_emit(const dal_routing_t *rt, size_t r, const dal_server_t *srv,
                          uint64_t t0, uint64_t rows, int rc, unsigned int mysql_errno_);
void event_route_emit(const dal_routing_t *rt, const dal_server_t *srv);
void event_reload_emit(const dal_snapshot_t *s, int rc);
void event_source_emit(const dal_snapshot_t *s, const char *state, const char *detail,
                       int64_t revision);
void event_pin_emit(const dal_snapshot_t *s, const dal_node_t *node, unsigned int pins);
/* DAL_EVENT_TXN: a multi or xa transaction (mode's word) over nodes nodes
 * ended with outcome; rc its error code. */
void event_txn_emit(const dal_snapshot_t *s, const char *mode, const char *outcome,
                    size_t nodes, int rc);
/* DAL_EVENT_XA_RECOVERY: what a recovery pass did (kind, count). */
void event_xa_recovery_emit(const dal_snapshot_t *s, const char *kind, uint64_t n);

/* DAL_EVENT_STATEMENT: a routed statement (rt, its normalised text and
 * trace id, started at t0) ended with rc and result r (NULL on failure). */
static inline void event_statement(const struct dal_monitor_set *m, const dal_routing_t *rt,
                                   const char *sql_norm, const char *trace, uint64_t t0,
                                   int rc, const struct dal_result *r)
{
    if (monitor_active(m))
        event_statement_emit(m, rt, sql_norm, trace, t0, rc, r);
}

/* DAL_EVENT_EXECUTION: route r of rt ran on srv from t0 (rows affected or
 * read, rc, the server's error number). */
static inline void event_execution(const dal_routing_t *rt, size_t r,
                                   const dal_server_t *srv, uint64_t t0, uint64_t rows,
                                   int rc, unsigned int mysql_errno_)
{
    if (monitor_active(rt->monitors))
        event_execution_emit(rt, r, srv, t0, rows, rc, mysql_errno_);
}

/* DAL_EVENT_ROUTE: rt's statement goes to srv. */
static inline void event_route(const dal_routing_t *rt, const dal_server_t *srv)
{
    if (monitor_active(rt->monitors))
        event_route_emit(rt, srv);
}

/* DAL_EVENT_RELOAD: a reload into s (the new snapshot, or the one kept)
 * ended with rc. */
static inline void event_reload(const dal_snapshot_t *s, int rc)
{
    if (monitor_active(s->monitors))
        event_reload_emit(s, rc);
}

/* DAL_EVENT_SOURCE: the configuration source is now in state ("ok",
 * "unreachable"), detail the endpoint or why none answers, revision the
 * one in force. */
static inline void event_source(const dal_snapshot_t *s, const char *state, const char *detail,
                                int64_t revision)
{
    if (monitor_active(s->monitors))
        event_source_emit(s, state, detail, revision);
}

/* DAL_EVENT_PIN: a session pinned a connection of node's master (s: the
 * snapshot it was taken under) for the state of pins (sql.h). */
static inline void event_pin(const dal_snapshot_t *s, const dal_node_t *node, unsigned int pins)
{
    if (monitor_active(s->monitors))
        event_pin_emit(s, node, pins);
}

#endif /* DAL_CORE_EVENTS_H */
