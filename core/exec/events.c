/*
 * events.c -- building each kind of event.  See events.h.
 */
#include "clock.h"
#include "events.h"
#include "route_servers.h"
#include "result.h"

void event_statement_emit(const struct dal_monitor_set *m, const dal_routing_t *rt,
                          const char *sql_norm, const char *trace, uint64_t t0, int rc,
                          const struct dal_result *r)
{
    dal_event_t ev;

    monitor_event_init(m, &ev, DAL_EVENT_STATEMENT);
    ev.kind = sql_kind_word(rt->sql->kind);
    routing_label_table(rt, &ev); /* emitted only once routed */
    if (rt->nroutes == 1) {
        ev.datasource = rt->routes[0].node->cfg->name;
        ev.server = route_server(&rt->routes[0])->address;
    }
    ev.sql = sql_norm;
    ev.trace_id = trace;
    ev.latency_ns = clock_now_ns() - t0;
    ev.rows = rc == 0 && r != NULL ? dal_result_affected_rows(r) : 0;
    ev.error_code = rc;
    monitor_emit(m, &ev);
}

void event_execution_emit(const dal_routing_t *rt, size_t r, const dal_server_t *srv,
                          uint64_t t0, uint64_t rows, int rc, unsigned int mysql_errno_)
{
    const dal_route_t *route = &rt->routes[r];
    char phys[300];
    dal_event_t ev;
    size_t i;

    monitor_event_init(rt->monitors, &ev, DAL_EVENT_EXECUTION);
    ev.kind = sql_kind_word(rt->sql->kind);
    ev.table = rt->primary ? rt->primary->cfg->name : NULL;
    ev.datasource = route->node->cfg->name;
    ev.server = srv->address;
    for (i = 0; route->pos != NULL && i < rt->sql->ntrefs && ev.physical_table == NULL; i++)
        if (route->pos[i] >= 0)
            ev.physical_table = physical_name(rt->tables[i], route->pos[i], phys, sizeof phys);
    ev.sql = rt->sql_norm;
    ev.trace_id = rt->trace_id;
    ev.latency_ns = clock_now_ns() - t0;
    ev.rows = rows;
    ev.error_code = rc;
    ev.mysql_errno = mysql_errno_;
    monitor_emit(rt->monitors, &ev);
}

void event_route_emit(const dal_routing_t *rt, const dal_server_t *srv)
{
    dal_event_t ev;

    monitor_event_init(rt->monitors, &ev, DAL_EVENT_ROUTE);
    ev.kind = server_role(srv);
    routing_label_table(rt, &ev);
    ev.datasource = srv->node->cfg->name;
    ev.server = srv->address;
    ev.trace_id = rt->trace_id;
    monitor_emit(rt->monitors, &ev);
}

void event_reload_emit(const dal_snapshot_t *s, int rc)
{
    dal_event_t ev;

    monitor_event_init(s->monitors, &ev, DAL_EVENT_RELOAD);
    ev.kind = rc == 0 ? "ok" : "failed";
    ev.error_code = rc;
    monitor_emit(s->monitors, &ev);
}

void event_source_emit(const dal_snapshot_t *s, const char *state, const char *detail,
                       int64_t revision)
{
    dal_event_t ev;

    monitor_event_init(s->monitors, &ev, DAL_EVENT_SOURCE);
    ev.kind = state;
    ev.server = detail;
    ev.rows = revision > 0 ? (uint64_t)revision : 0;
    monitor_emit(s->monitors, &ev);
}

void event_txn_emit(const dal_snapshot_t *s, const char *mode, const char *outcome,
                    size_t nodes, int rc)
{
    dal_event_t ev;

    if (!monitor_active(s->monitors))
        return;
    monitor_event_init(s->monitors, &ev, DAL_EVENT_TXN);
    ev.table = mode;
    ev.kind = outcome;
    ev.rows = nodes;
    ev.error_code = rc;
    monitor_emit(s->monitors, &ev);
}

void event_xa_recovery_emit(const dal_snapshot_t *s, const char *kind, uint64_t n)
{
    dal_event_t ev;

    if (!monitor_active(s->monitors))
        return;
    monitor_event_init(s->monitors, &ev, DAL_EVENT_XA_RECOVERY);
    ev.kind = kind;
    ev.rows = n;
    monitor_emit(s->monitors, &ev);
}

void event_pin_emit(const dal_snapshot_t *s, const dal_node_t *node, unsigned int pins)
{
    dal_event_t ev;

    monitor_event_init(s->monitors, &ev, DAL_EVENT_PIN);
    ev.kind = sql_pin_word(pins);
    ev.datasource = node->cfg->name;
    ev.server = node->master.address;
    monitor_emit(s->monitors, &ev);
}
