/*
 * explain.c -- dal_plan_t: the routes of a statement, for `dal explain`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explain.h"
#include "replica.h"
#include "route_servers.h"
#include "rewrite.h"
#include "sprep.h"

typedef struct plan_route {
    const char *datasource; /* borrowed from the snapshot: see below */
    char *server;           /* owned */
    const char *role;       /* static: "master" or "replica" */
    char *table;            /* owned, or NULL */
    char *sql;              /* owned, NUL-terminated */
    size_t sql_len;         /* bytes of sql: it may hold NUL bytes of its own */
    int prepared;           /* would run as a server-side prepared statement */
    const char *step;       /* static: "route", or a step before the routes ("lookup") */
} plan_route_t;

struct dal_plan {
    const char *kind;       /* static */
    plan_route_t *routes;   /* owned */
    size_t n;
    char **names;           /* owned copies of datasource names */
};

static int fill_route(const dal_routing_t *rt, size_t r, const dal_value_t *params,
                      size_t nparams, plan_route_t *pr, dal_error_t *err)
{
    const dal_route_t *route = &rt->routes[r];
    const dal_server_t *srv = route_server(route);
    dal_buf_t sql = DAL_BUF_INIT;
    char name[300];
    size_t i;
    int rc;

    rc = rewrite_route(rt, r, params, nparams, 0, &sql, err);
    if (rc != 0) {
        buf_free(&sql);
        return rc;
    }
    pr->sql_len = sql.len;
    pr->sql = buf_steal(&sql);
    pr->server = strdup(srv->address);
    pr->role = server_role(srv);
    pr->prepared = sprep_route_eligible(rt, r);
    pr->step = "route";
    for (i = 0; i < rt->sql->ntrefs && pr->table == NULL; i++)
        if (route->pos[i] >= 0)
            pr->table = strdup(physical_name(rt->tables[i], route->pos[i], name, sizeof name));
    if (pr->sql == NULL || pr->server == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    return 0;
}

int explain_build(const dal_routing_t *rt, const dal_value_t *params, size_t nparams,
                  dal_plan_t **out, dal_error_t *err)
{
    dal_plan_t *p = calloc(1, sizeof *p);
    size_t r;
    int rc = 0;

    *out = NULL;
    if (p == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    p->kind = sql_kind_word(rt->sql->kind);
    p->routes = calloc(rt->nroutes ? rt->nroutes : 1, sizeof *p->routes);
    p->names = calloc(rt->nroutes ? rt->nroutes : 1, sizeof *p->names);
    if (p->routes == NULL || p->names == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    for (r = 0; r < rt->nroutes; r++, p->n++) {
        /* the plan may outlive the snapshot (a reload): copy the name */
        p->names[r] = strdup(rt->routes[r].node->cfg->name);
        p->routes[r].datasource = p->names[r];
        rc = p->names[r] ? fill_route(rt, r, params, nparams, &p->routes[r], err)
                         : err_set(err, DAL_ENOMEM, "out of memory");
        if (rc != 0) {
            p->n++;
            goto fail;
        }
    }
    *out = p;
    return 0;
fail:
    dal_plan_free(p);
    return rc;
}

int explain_prepend(dal_plan_t *p, dal_plan_t *first, const char *step, dal_error_t *err)
{
    size_t n = first->n + p->n, i;
    plan_route_t *routes = calloc(n ? n : 1, sizeof *routes);
    char **names = calloc(n ? n : 1, sizeof *names);

    if (routes == NULL || names == NULL) {
        free(routes);
        free(names);
        dal_plan_free(first);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    for (i = 0; i < first->n; i++) {
        routes[i] = first->routes[i];
        routes[i].step = step;
        names[i] = first->names[i];
    }
    memcpy(routes + first->n, p->routes, p->n * sizeof *routes);
    memcpy(names + first->n, p->names, p->n * sizeof *names);
    free(p->routes);
    free(p->names);
    p->routes = routes;
    p->names = names;
    p->n = n;
    first->n = 0;
    dal_plan_free(first);
    return 0;
}

const char *dal_plan_step(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].step : NULL;
}

size_t dal_plan_count(const dal_plan_t *p)
{
    return p ? p->n : 0;
}

const char *dal_plan_datasource(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].datasource : NULL;
}

const char *dal_plan_sql(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].sql : NULL;
}

size_t dal_plan_sql_len(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].sql_len : 0;
}

const char *dal_plan_table(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].table : NULL;
}

const char *dal_plan_server(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].server : NULL;
}

const char *dal_plan_role(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].role : NULL;
}

int dal_plan_server_prepared(const dal_plan_t *p, size_t i)
{
    return p && i < p->n ? p->routes[i].prepared : 0;
}

const char *dal_plan_kind(const dal_plan_t *p)
{
    return p ? p->kind : NULL;
}

void dal_plan_free(dal_plan_t *p)
{
    size_t i;

    if (p == NULL)
        return;
    for (i = 0; i < p->n; i++) {
        free(p->routes[i].server);
        free(p->routes[i].table);
        free(p->routes[i].sql);
        free(p->names[i]);
    }
    free(p->routes);
    free(p->names);
    free(p);
}
