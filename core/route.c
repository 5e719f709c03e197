/*
 * route.c -- deciding where a statement goes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "route.h"
#include "value.h"

/* What the caller asked for, from the options or else the SQL hints. */
typedef struct route_req {
    const dal_value_t *shard_value; /* borrowed; NULL: none */
    dal_value_t hint_value;         /* storage when the value came from a hint */
    dal_node_t *node;               /* explicit datasource, or NULL */
} route_req_t;

const char *dal_physical_name(const dal_table_t *t, int32_t pos, char *out, size_t cap)
{
    snprintf(out, cap, "%s_%d", t->cfg->name, (int)pos);
    return out;
}

static const char *hint(const dal_sql_t *sql, const char *key)
{
    size_t i;

    for (i = 0; i < sql->nhints; i++)
        if (strcmp(sql->hints[i].key, key) == 0)
            return sql->hints[i].value;
    return NULL;
}

static int read_request(const dal_snapshot_t *snap, const dal_sql_t *sql,
                        const dal_query_opts_t *opts, route_req_t *req, dal_error_t *err)
{
    const char *ds = opts ? opts->datasource : NULL;
    const char *hv;

    memset(req, 0, sizeof *req);
    req->shard_value = opts ? opts->shard_value : NULL;
    if (req->shard_value == NULL && (hv = hint(sql, "shard_value")) != NULL) {
        req->hint_value = dal_str(hv);
        req->shard_value = &req->hint_value;
    }
    if (ds == NULL)
        ds = hint(sql, "datasource");
    if (ds == NULL)
        return 0;
    req->node = dal_snapshot_node(snap, ds);
    if (req->node == NULL)
        return dal_err_set(err, DAL_EROUTE, "unknown datasource '%s' (not a [datasource] section)",
                           ds);
    return 0;
}

static int alloc_routes(dal_routing_t *rt, size_t nroutes, size_t ntrefs, dal_error_t *err)
{
    size_t i;

    rt->routes = calloc(nroutes, sizeof *rt->routes);
    rt->pos = malloc((nroutes * ntrefs > 0 ? nroutes * ntrefs : 1) * sizeof *rt->pos);
    if (rt->routes == NULL || rt->pos == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < nroutes * ntrefs; i++)
        rt->pos[i] = -1;
    for (i = 0; i < nroutes; i++)
        rt->routes[i].pos = rt->pos + i * ntrefs;
    rt->nroutes = nroutes;
    return 0;
}

/* One strategy call, with the result checked: a plugin bug must not
 * become a silently wrong shard. */
static int locate(const dal_table_t *t, const dal_value_t *v, dal_shard_pos_t *pos,
                  dal_error_t *err)
{
    int rc = t->ops->locate(t->strategy, v, pos, err);

    if (rc != 0) {
        /* the strategy's message quotes the value */
        dal_err_prefix(err, "table %s (strategy %s)", t->cfg->name, t->cfg->strategy);
        return rc < 0 ? rc : DAL_ESHARD;
    }
    if (pos->table >= t->cfg->table_shard_num || pos->db != pos->table / t->tables_per_db)
        return dal_err_set(err, DAL_EPLUGIN,
                           "table %s: shard plugin '%s' returned db %u table %u, which is not a "
                           "valid position (%u dbs, %u tables)",
                           t->cfg->name, t->cfg->strategy, pos->db, pos->table,
                           t->cfg->db_shard_num, t->cfg->table_shard_num);
    return 0;
}

static int route_by_value(const dal_sql_t *sql, const route_req_t *req, dal_routing_t *rt,
                          dal_error_t *err)
{
    dal_node_t *node = NULL;
    const dal_table_t *first = NULL;
    dal_shard_pos_t pos;
    size_t i;
    int rc = alloc_routes(rt, 1, sql->ntrefs, err);

    if (rc != 0)
        return rc;
    for (i = 0; i < sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t == NULL || !t->sharded)
            continue;
        rc = locate(t, req->shard_value, &pos, err);
        if (rc != 0)
            return rc;
        if (node != NULL && t->nodes[pos.db] != node)
            return dal_err_set(err, DAL_EROUTE,
                               "tables %s and %s live on different datasources (%s, %s) for this "
                               "shard value; a statement must stay on one node",
                               first->cfg->name, t->cfg->name, node->cfg->name,
                               t->nodes[pos.db]->cfg->name);
        node = t->nodes[pos.db];
        first = first ? first : t;
        rt->routes[0].pos[i] = (int32_t)pos.table;
    }
    if (req->node != NULL && req->node != node)
        return dal_err_set(err, DAL_EROUTE,
                           "the shard value routes table %s to datasource %s, but datasource %s "
                           "was requested",
                           first->cfg->name, node->cfg->name, req->node->cfg->name);
    rt->routes[0].node = node;
    return 0;
}

/* DDL without a shard value: every physical table of the sharded tables.
 * Tables named together (RENAME a TO b) must be laid out alike. */
static int route_all_positions(const dal_sql_t *sql, const route_req_t *req,
                               dal_routing_t *rt, dal_error_t *err)
{
    const dal_table_t *p = rt->primary;
    uint32_t n = p->cfg->table_shard_num, t, r = 0;
    size_t i;
    int rc;

    for (i = 0; i < sql->ntrefs; i++) {
        const dal_table_t *o = rt->tables[i];
        if (o && o->sharded && (o->cfg->table_shard_num != n || o->nodes[0] != p->nodes[0] ||
                                o->cfg->db_shard_num != p->cfg->db_shard_num))
            return dal_err_set(err, DAL_EUNSUPPORTED,
                               "tables %s and %s are sharded differently; run this DDL on each "
                               "table separately",
                               p->cfg->name, o->cfg->name);
    }
    rc = alloc_routes(rt, n, sql->ntrefs, err);
    if (rc != 0)
        return rc;
    for (t = 0; t < n; t++) {
        dal_node_t *node = p->nodes[t / p->tables_per_db];
        if (req->node != NULL && node != req->node)
            continue;
        rt->routes[r].node = node;
        for (i = 0; i < sql->ntrefs; i++)
            if (rt->tables[i] && rt->tables[i]->sharded)
                rt->routes[r].pos[i] = (int32_t)t;
        r++;
    }
    rt->nroutes = r;
    if (r == 0)
        return dal_err_set(err, DAL_EROUTE, "table %s has no physical table on datasource %s",
                           p->cfg->name, req->node->cfg->name);
    return 0;
}

static int route_unsharded(const dal_snapshot_t *snap, const dal_sql_t *sql,
                           const route_req_t *req, dal_routing_t *rt, dal_error_t *err)
{
    dal_node_t *node = req->node;
    const dal_table_t *first = NULL;
    size_t i;
    int rc;

    if (req->shard_value != NULL)
        return dal_err_set(err, DAL_EROUTE,
                           "a shard value was given but the statement names no sharded table");
    for (i = 0; node == NULL && i < sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t == NULL)
            continue;
        if (first != NULL && t->nodes[0] != first->nodes[0])
            return dal_err_set(err, DAL_EROUTE,
                               "tables %s and %s are on different datasources (%s, %s)",
                               first->cfg->name, t->cfg->name, first->nodes[0]->cfg->name,
                               t->nodes[0]->cfg->name);
        first = t;
    }
    if (node == NULL && first != NULL)
        node = first->nodes[0];
    if (node == NULL)
        node = snap->default_node;
    if (node == NULL)
        return dal_err_set(err, DAL_EROUTE,
                           "no datasource for this statement: it names no configured table and "
                           "there is no [dal] default_datasource");
    rc = alloc_routes(rt, 1, sql->ntrefs, err);
    if (rc == 0)
        rt->routes[0].node = node;
    return rc;
}

int dal_route(const dal_snapshot_t *snap, const dal_sql_t *sql, const dal_query_opts_t *opts,
              dal_routing_t *rt, dal_error_t *err)
{
    route_req_t req;
    size_t i;
    int rc;

    memset(rt, 0, sizeof *rt);
    rt->sql = sql;
    rc = read_request(snap, sql, opts, &req, err);
    if (rc != 0)
        return rc;
    rt->tables = calloc(sql->ntrefs ? sql->ntrefs : 1, sizeof *rt->tables);
    if (rt->tables == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < sql->ntrefs; i++) {
        const struct dal_sql_tref *r = &sql->trefs[i];
        rt->tables[i] = dal_snapshot_table(snap, r->name, strlen(r->name));
        if (rt->primary == NULL && rt->tables[i] && rt->tables[i]->sharded)
            rt->primary = rt->tables[i];
    }
    if (rt->primary == NULL)
        rc = route_unsharded(snap, sql, &req, rt, err);
    else if (req.shard_value != NULL)
        rc = route_by_value(sql, &req, rt, err);
    else if (sql->kind == DAL_SQL_DDL)
        rc = route_all_positions(sql, &req, rt, err);
    else
        rc = dal_err_set(err, DAL_EROUTE,
                         "table %s is sharded by %s: this statement needs a shard value "
                         "(dal_query_opts_t.shard_value, --shard-value, or /*+ dal "
                         "shard_value=... */)",
                         rt->primary->cfg->name, rt->primary->cfg->shard_key);
    if (rc != 0)
        dal_routing_clear(rt);
    return rc;
}

void dal_routing_clear(dal_routing_t *rt)
{
    free(rt->tables);
    free(rt->routes);
    free(rt->pos);
    memset(rt, 0, sizeof *rt);
}
