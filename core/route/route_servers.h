/*
 * route_servers.h -- choosing the server of each route of a statement
 * (read-write splitting over the routes; the rules are in replica.h).
 */
#ifndef DAL_CORE_ROUTE_SERVERS_H
#define DAL_CORE_ROUTE_SERVERS_H

#include "replica.h"
#include "route.h"

/* Set rt->routes[i].server for every route that has none yet (a session
 * sets the master's for the nodes it pinned, pin.h).  Fails only for a
 * write forced to a replica. */
int select_servers(dal_routing_t *rt, const dal_select_t *sel, dal_error_t *err);

/* The server a route runs on (its node's master until one is chosen). */
static inline dal_server_t *route_server(const dal_route_t *r)
{
    return r->server != NULL ? r->server : &r->node->master;
}

#endif /* DAL_CORE_ROUTE_SERVERS_H */
