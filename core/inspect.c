/*
 * inspect.c -- dal_table_info and dal_datasource_info: the layout of a
 * table and the connection settings of a datasource, read from the
 * configuration in force (see dal.h, "inspection").
 *
 * A handle keeps one reference on the parsed configuration (dal_config_t)
 * it was read from and points into it, so its strings live as long as the
 * handle, whatever reloads happen meanwhile, without copying them.  The
 * configuration is plain data: holding it keeps no plugin, node or
 * connection alive.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "dal_int.h"
#include "error.h"
#include "snapshot.h"

/* ================================================================ tables */

struct dal_table_info {
    dal_config_t *cfg;              /* one reference */
    const dal_cfg_table_t *t;       /* inside cfg */
    const char **nodes;             /* owned array of names inside cfg, db_shard_num long */
};

/* The datasource node of data node db, as the snapshot resolves it (see
 * init_table in snapshot.c): the group prefix and the number, or for a
 * single table its datasource itself. */
static const char *node_name(const dal_config_t *cfg, const dal_cfg_table_t *t, uint32_t db)
{
    const dal_cfg_datasource_t *ds;
    char name[256];

    if (t->kind == DAL_TABLE_SINGLE)
        snprintf(name, sizeof name, "%s", t->datasource);
    else
        snprintf(name, sizeof name, "%s%u", t->datasource, db);
    ds = dal_config_datasource(cfg, name);
    return ds != NULL ? ds->name : NULL;
}

static int table_info_fill(dal_table_info_t *ti, dal_error_t *err)
{
    uint32_t i, n = ti->t->db_shard_num;

    ti->nodes = calloc(n, sizeof *ti->nodes);
    if (ti->nodes == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        ti->nodes[i] = node_name(ti->cfg, ti->t, i);
        /* a configuration in force has every node of its tables */
        if (ti->nodes[i] == NULL)
            return dal_err_set(err, DAL_ECONFIG, "table %s: data node %" PRIu32 " has no datasource",
                               ti->t->name, i);
    }
    return 0;
}

int dal_table_info(dal_t *dal, const char *table, dal_table_info_t **out, dal_error_t *err)
{
    dal_snapshot_t *snap;
    dal_table_info_t *ti;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (dal == NULL || table == NULL || out == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_table_info: NULL argument");
    if ((ti = calloc(1, sizeof *ti)) == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    snap = dal_snapshot_acquire(dal);
    ti->cfg = dal_config_ref(snap->cfg);
    dal_snapshot_unref(snap);
    ti->t = dal_config_table(ti->cfg, table);
    rc = ti->t == NULL ? dal_err_set(err, DAL_EINVAL, "no [table %s] in the configuration "
                                     "in force", table)
                       : table_info_fill(ti, err);
    if (rc != 0) {
        dal_table_info_free(ti);
        return rc;
    }
    *out = ti;
    return 0;
}

void dal_table_info_free(dal_table_info_t *t)
{
    if (t == NULL)
        return;
    free(t->nodes);
    dal_config_free(t->cfg);
    free(t);
}

const char *dal_table_info_name(const dal_table_info_t *t)
{
    return t ? t->t->name : NULL;
}

dal_layout_t dal_table_info_layout(const dal_table_info_t *t)
{
    if (t == NULL)
        return DAL_LAYOUT_SINGLE;
    switch (t->t->kind) {
    case DAL_TABLE_SHARDED:
        return DAL_LAYOUT_SHARDED;
    case DAL_TABLE_BROADCAST:
        return DAL_LAYOUT_BROADCAST;
    default:
        return DAL_LAYOUT_SINGLE;
    }
}

const char *dal_table_info_datasource(const dal_table_info_t *t)
{
    return t ? t->t->datasource : NULL;
}

uint32_t dal_table_info_db_shard_num(const dal_table_info_t *t)
{
    return t ? t->t->db_shard_num : 0;
}

uint32_t dal_table_info_table_shard_num(const dal_table_info_t *t)
{
    return t ? t->t->table_shard_num : 0;
}

const char *dal_table_info_shard_key(const dal_table_info_t *t)
{
    return t ? t->t->shard_key : NULL;
}

const char *dal_table_info_strategy(const dal_table_info_t *t)
{
    return t ? t->t->strategy : NULL;
}

size_t dal_table_info_strategy_param_count(const dal_table_info_t *t)
{
    return t ? t->t->strategy_params.n : 0;
}

const char *dal_table_info_strategy_param(const dal_table_info_t *t, size_t i,
                                          const char **value)
{
    const dal_cfg_param_t *p = t && i < t->t->strategy_params.n
                                   ? &t->t->strategy_params.items[i] : NULL;

    if (value != NULL)
        *value = p ? p->value : NULL;
    return p ? p->name : NULL;
}

const char *dal_table_info_binding(const dal_table_info_t *t)
{
    return t ? t->t->binding : NULL;
}

const char *dal_table_info_id_column(const dal_table_info_t *t)
{
    return t ? t->t->id_column : NULL;
}

const char *dal_table_info_idgen(const dal_table_info_t *t)
{
    return t ? t->t->idgen : NULL;
}

int dal_table_info_allow_scatter(const dal_table_info_t *t)
{
    return t ? t->t->allow_scatter : 0;
}

const char *dal_table_info_node(const dal_table_info_t *t, uint32_t db)
{
    return t && db < t->t->db_shard_num ? t->nodes[db] : NULL;
}

int dal_table_info_physical(const dal_table_info_t *t, uint32_t pos, char *buf, size_t size)
{
    const dal_cfg_table_t *c = t ? t->t : NULL;
    int n;

    if (c == NULL || buf == NULL || pos >= c->table_shard_num)
        return DAL_EINVAL;
    /* the name routing writes (dal_physical_name): only sharded tables
     * have numbered physical tables */
    if (c->kind == DAL_TABLE_SHARDED)
        n = snprintf(buf, size, "%s_%" PRIu32, c->name, pos);
    else
        n = snprintf(buf, size, "%s", c->name);
    if (n < 0 || (size_t)n >= size)
        return DAL_EINVAL;
    return c->kind == DAL_TABLE_SHARDED ? (int)(pos / (c->table_shard_num / c->db_shard_num)) : 0;
}

/* =========================================================== datasources */

/* One server: the public struct and the storage of its address. */
typedef struct server_entry {
    dal_server_settings_t pub;         /* strings inside the config, or address below */
    char address[sizeof ((dal_server_t *)0)->address];
} server_entry_t;

struct dal_datasource_info {
    dal_config_t *cfg;                 /* one reference: the config the node was made from */
    const dal_cfg_datasource_t *ds;    /* inside cfg */
    server_entry_t *servers;           /* owned, nservers long: the master, then replicas */
    size_t nservers;
};

/* Server i of the node (0: the master). */
static void server_fill(dal_datasource_info_t *di, const dal_node_t *n, size_t i)
{
    const dal_server_t *srv = i == 0 ? &n->master : &n->replicas[i - 1];
    int replica = (int)i - 1;
    const dal_url_t *u = dal_server_url(di->ds, replica);
    server_entry_t *e = &di->servers[i];
    dal_server_settings_t *s = &e->pub;

    memcpy(e->address, srv->address, sizeof e->address);
    s->role = replica < 0 ? "master" : "replica";
    s->address = e->address;
    s->host = u->host;
    s->port = u->port;
    s->socket = u->socket;
    s->user = u->user;
    s->password = u->password;
    s->database = u->database;
    s->charset = u->charset;
    s->ssl_mode = u->ssl_mode;
    s->ssl_ca = u->ssl_ca;
    s->connect_timeout_ms = dal_server_connect_timeout_ms(di->ds, replica);
    s->read_timeout_ms = di->ds->read_timeout_ms;
    s->weight = replica < 0 ? 1 : di->ds->replicas[replica].weight;
}

/* Copy what the node says while the snapshot holding it is referenced. */
static int datasource_info_fill(dal_datasource_info_t *di, const dal_node_t *n,
                                dal_error_t *err)
{
    size_t i;

    di->cfg = dal_config_ref(n->owner);
    di->ds = n->cfg;
    di->nservers = 1 + n->nreplicas;
    di->servers = calloc(di->nservers, sizeof *di->servers);
    if (di->servers == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < di->nservers; i++)
        server_fill(di, n, i);
    return 0;
}

int dal_datasource_info(dal_t *dal, const char *name, dal_datasource_info_t **out,
                        dal_error_t *err)
{
    dal_datasource_info_t *di;
    dal_snapshot_t *snap;
    const dal_node_t *n;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (dal == NULL || name == NULL || out == NULL)
        return dal_err_set(err, DAL_EINVAL, "dal_datasource_info: NULL argument");
    if ((di = calloc(1, sizeof *di)) == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    snap = dal_snapshot_acquire(dal);
    n = dal_snapshot_node(snap, name);
    rc = n == NULL ? dal_err_set(err, DAL_EINVAL, "no [datasource %s] in the configuration "
                                 "in force", name)
                   : datasource_info_fill(di, n, err);
    dal_snapshot_unref(snap);
    if (rc != 0) {
        dal_datasource_info_free(di);
        return rc;
    }
    *out = di;
    return 0;
}

void dal_datasource_info_free(dal_datasource_info_t *ds)
{
    if (ds == NULL)
        return;
    free(ds->servers);
    dal_config_free(ds->cfg);
    free(ds);
}

const char *dal_datasource_info_name(const dal_datasource_info_t *ds)
{
    return ds ? ds->ds->name : NULL;
}

size_t dal_datasource_info_server_count(const dal_datasource_info_t *ds)
{
    return ds ? ds->nservers : 0;
}

const dal_server_settings_t *dal_datasource_info_server(const dal_datasource_info_t *ds,
                                                        size_t i)
{
    return ds && i < ds->nservers ? &ds->servers[i].pub : NULL;
}
