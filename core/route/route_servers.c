/*
 * route_servers.c -- the step after routing: the server of each route, by
 * the rules of replica.h (a write on the master, a plain read on a replica
 * chosen there, a transaction on its own server).
 */
#include "error.h"
#include "route_servers.h"

/* A read by the rules: a SELECT without locks, server-local functions or
 * session state (a session keeps that on the master, sql.h's pins). */
static int is_plain_read(const dal_sql_t *sql)
{
    return sql->kind == DAL_SQL_SELECT && !sql->for_update && !sql->needs_master &&
           !sql->pins;
}

/* The server of one route of a read, on a node with replicas or in a
 * transaction (any other route runs on its master). */
static dal_server_t *pick_server(dal_node_t *node, int read, const dal_select_t *sel)
{
    if (sel->fixed != NULL)
        return sel->fixed->node == node ? sel->fixed : &node->master;
    return read ? select_read(node, sel) : &node->master;
}

/* An override the statement or transaction cannot take. */
static int refuse_override(const dal_routing_t *rt, const dal_select_t *sel, dal_error_t *err)
{
    if (sel->override != DAL_SERVER_REPLICA)
        return 0;
    if (sql_kind_writes(rt->sql->kind))
        return err_set(err, DAL_EROUTE, "a %s cannot run on a replica (server=replica)",
                       sql_kind_name(rt->sql->kind));
    if (sel->flags & DAL_SELECT_MASTER)
        return err_set(err, DAL_EROUTE, "server=replica inside a read-write transaction, "
                       "which runs on the master (use a read-only transaction)");
    return 0;
}

int select_servers(dal_routing_t *rt, const dal_select_t *sel, dal_error_t *err)
{
    int read, rc = refuse_override(rt, sel, err);
    size_t i;

    if (rc != 0)
        return rc;
    read = !(sel->flags & DAL_SELECT_MASTER) &&
           (sel->override == DAL_SERVER_REPLICA || (sel->flags & DAL_SELECT_READ) ||
            is_plain_read(rt->sql));
    for (i = 0; i < rt->nroutes; i++) {
        dal_node_t *node = rt->routes[i].node;
        /* a node without replicas costs no call: the common case; a server
         * chosen already is a session's pinned master */
        if (!((read && node->nreplicas > 0) || sel->fixed != NULL))
            rt->routes[i].server = &node->master;
        else if (rt->routes[i].server == NULL)
            rt->routes[i].server = pick_server(node, read, sel);
    }
    return 0;
}
