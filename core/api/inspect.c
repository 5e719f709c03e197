/*
 * inspect.c -- dal_table_names, dal_table_info and dal_datasource_info:
 * the tables, the layout of a table and the connection settings of a
 * datasource, read from the configuration in force (see dal.h,
 * "inspection"); dal_monitor_emit, which hands a front end's event to
 * the monitors in force; and dal_backend_states, the process-list State
 * of the server threads running sessions' statements.
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
#include "handle.h"
#include "reload.h"
#include "stmt.h"
#include "error.h"
#include "monitor.h"
#include "pool.h"
#include "snapshot.h"

/* ============================================================ the outline */

/* What dal_table_info and dal_datasource_info differ in. */
typedef struct inspect_kind {
    const char *fn;         /* the public function: argument errors name it */
    size_t size;            /* of its handle */
    /* Fill the zeroed handle h with name's entry of snap (referenced for
     * the call): 0, or an error with err set. */
    int (*fill)(void *h, const dal_snapshot_t *snap, const char *name, dal_error_t *err);
    void (*drop)(void *h);  /* free h, also when fill failed half-way */
} inspect_kind_t;

/* A new handle of kind k for name, read from the configuration in force
 * (owned by the caller); NULL when it cannot be made.  *rc is 0 or the
 * error, with err set. */
static void *inspect(const inspect_kind_t *k, dal_t *dal, const char *name, int *rc,
                     dal_error_t *err)
{
    dal_snapshot_t *snap;
    void *h;

    if (dal == NULL || name == NULL) {
        *rc = err_set(err, DAL_EINVAL, "%s: NULL argument", k->fn);
        return NULL;
    }
    if ((h = calloc(1, k->size)) == NULL) {
        *rc = err_set(err, DAL_ENOMEM, "out of memory");
        return NULL;
    }
    snap = snapshot_acquire(dal);
    *rc = k->fill(h, snap, name, err);
    snapshot_unref(snap);
    if (*rc != 0) {
        k->drop(h);
        return NULL;
    }
    return h;
}

/* Free handle h: its one array and its reference on the configuration. */
static void handle_free(void *h, void *array, dal_config_t *cfg)
{
    free(array);
    config_free(cfg);
    free(h);
}

/* ================================================================ tables */

struct dal_table_info {
    dal_config_t *cfg;              /* one reference */
    const dal_cfg_table_t *t;       /* inside cfg */
    const char **nodes;             /* owned array of names inside cfg, db_shard_num long */
};

/* The datasource node of data node db, as the snapshot resolves it (see
 * init_table in snapshot_build.c): the group prefix and the number, or for
 * a single table its datasource itself. */
static const char *node_name(const dal_config_t *cfg, const dal_cfg_table_t *t, uint32_t db)
{
    const dal_cfg_datasource_t *ds;
    char name[256];

    if (t->kind == DAL_TABLE_SINGLE)
        snprintf(name, sizeof name, "%s", t->datasource);
    else
        snprintf(name, sizeof name, "%s%" PRIu32, t->datasource, db);
    ds = config_datasource(cfg, name);
    return ds != NULL ? ds->name : NULL;
}

static int table_fill(void *h, const dal_snapshot_t *snap, const char *name, dal_error_t *err)
{
    dal_table_info_t *ti = h;
    uint32_t i;

    ti->cfg = config_ref(snap->cfg);
    ti->t = config_table(ti->cfg, name);
    if (ti->t == NULL)
        return err_set(err, DAL_EINVAL, "no [table %s] in the configuration in force", name);
    ti->nodes = calloc(ti->t->db_shard_num, sizeof *ti->nodes);
    if (ti->nodes == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < ti->t->db_shard_num; i++) {
        ti->nodes[i] = node_name(ti->cfg, ti->t, i);
        /* a configuration in force has every node of its tables */
        if (ti->nodes[i] == NULL)
            return err_set(err, DAL_ECONFIG, "table %s: data node %" PRIu32
                           " has no datasource", ti->t->name, i);
    }
    return 0;
}

static void table_drop(void *h)
{
    dal_table_info_free(h);
}

static const inspect_kind_t table_kind = {
    "dal_table_info", sizeof(dal_table_info_t), table_fill, table_drop
};

int dal_table_info(dal_t *dal, const char *table, dal_table_info_t **out, dal_error_t *err)
{
    int rc = DAL_EINVAL;

    if (out == NULL)
        return err_set(err, rc, "%s: NULL argument", table_kind.fn);
    *out = inspect(&table_kind, dal, table, &rc, err);
    return rc;
}

int dal_table_names(dal_t *dal, dal_name_fn fn, void *user, dal_error_t *err)
{
    dal_snapshot_t *snap;
    size_t i;

    if (dal == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_table_names: NULL argument");
    snap = snapshot_acquire(dal);
    for (i = 0; i < snap->cfg->ntables; i++)
        fn(user, snap->cfg->tables[i].name);
    snapshot_unref(snap);
    return 0;
}

int dal_schema_names(dal_t *dal, dal_name_fn fn, void *user, dal_error_t *err)
{
    dal_snapshot_t *snap;
    size_t i;

    if (dal == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_schema_names: NULL argument");
    snap = snapshot_acquire(dal);
    for (i = 0; i < snap->cfg->nschemas; i++)
        fn(user, snap->cfg->schemas[i].name);
    snapshot_unref(snap);
    return 0;
}

int dal_server_schemas(dal_t *dal, dal_name_fn fn, void *user, dal_error_t *err)
{
    dal_snapshot_t *snap;

    if (dal == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_server_schemas: NULL argument");
    snap = snapshot_acquire(dal);
    if (snap->server_node != NULL)
        fn(user, snap->server_node->cfg->name);
    snapshot_unref(snap);
    return 0;
}

const char *dal_table_info_schema(const dal_table_info_t *t)
{
    return t ? t->t->schema : NULL;
}

void dal_table_info_free(dal_table_info_t *t)
{
    if (t != NULL)
        handle_free(t, t->nodes, t->cfg);
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

size_t dal_table_info_lookup_count(const dal_table_info_t *t)
{
    return t ? t->t->nlookups : 0;
}

const char *dal_table_info_lookup(const dal_table_info_t *t, size_t i, int *unique)
{
    if (t == NULL || i >= t->t->nlookups)
        return NULL;
    if (unique != NULL)
        *unique = t->t->lookups[i].unique;
    return t->t->lookups[i].column;
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
    /* the name routing writes (physical_name): only sharded tables
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
    const dal_url_t *u = server_url(di->ds, replica);
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
    s->connect_timeout_ms = server_connect_timeout_ms(di->ds, replica);
    s->read_timeout_ms = di->ds->read_timeout_ms;
    s->weight = replica < 0 ? 1 : di->ds->replicas[replica].weight;
}

static int datasource_fill(void *h, const dal_snapshot_t *snap, const char *name,
                           dal_error_t *err)
{
    dal_datasource_info_t *di = h;
    const dal_node_t *n = snapshot_node(snap, name);
    size_t i;

    if (n == NULL)
        return err_set(err, DAL_EINVAL, "no [datasource %s] in the configuration in force",
                       name);
    /* the node's own config: a node kept over a reload points into an
     * older one than the snapshot's */
    di->cfg = config_ref(n->owner);
    di->ds = n->cfg;
    di->nservers = 1 + n->nreplicas;
    di->servers = calloc(di->nservers, sizeof *di->servers);
    if (di->servers == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < di->nservers; i++)
        server_fill(di, n, i);
    return 0;
}

static void datasource_drop(void *h)
{
    dal_datasource_info_free(h);
}

static const inspect_kind_t datasource_kind = {
    "dal_datasource_info", sizeof(dal_datasource_info_t), datasource_fill, datasource_drop
};

int dal_datasource_info(dal_t *dal, const char *name, dal_datasource_info_t **out,
                        dal_error_t *err)
{
    int rc = DAL_EINVAL;

    if (out == NULL)
        return err_set(err, rc, "%s: NULL argument", datasource_kind.fn);
    *out = inspect(&datasource_kind, dal, name, &rc, err);
    return rc;
}

void dal_datasource_info_free(dal_datasource_info_t *ds)
{
    if (ds != NULL)
        handle_free(ds, ds->servers, ds->cfg);
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

/* ================================================================= proxy */

struct dal_proxy_info {
    dal_config_t *cfg;                 /* one reference: [proxy] and its users live in it */
};

/* name is not used: there is one [proxy]. */
static int proxy_fill(void *h, const dal_snapshot_t *snap, const char *name, dal_error_t *err)
{
    (void)name;
    (void)err;
    ((dal_proxy_info_t *)h)->cfg = config_ref(snap->cfg);
    return 0;
}

static void proxy_drop(void *h)
{
    dal_proxy_info_free(h);
}

static const inspect_kind_t proxy_kind = {
    "dal_proxy_info", sizeof(dal_proxy_info_t), proxy_fill, proxy_drop
};

int dal_proxy_info(dal_t *dal, dal_proxy_info_t **out, dal_error_t *err)
{
    int rc = DAL_EINVAL;

    if (out == NULL)
        return err_set(err, rc, "%s: NULL argument", proxy_kind.fn);
    *out = inspect(&proxy_kind, dal, "", &rc, err);
    return rc;
}

void dal_proxy_info_free(dal_proxy_info_t *p)
{
    if (p != NULL)
        handle_free(p, NULL, p->cfg);
}

const char *dal_proxy_info_listen(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.listen;
}

const char *dal_proxy_info_database(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.database;
}

uint32_t dal_proxy_info_threads(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.threads;
}

int dal_proxy_info_inline_io(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.inline_io;
}

uint32_t dal_proxy_info_max_connections(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.max_connections;
}

uint32_t dal_proxy_info_max_allowed_packet(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.max_allowed_packet;
}

uint32_t dal_proxy_info_connect_timeout(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.connect_timeout_ms;
}

const char *dal_proxy_info_tls_cert(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.tls_cert;
}

const char *dal_proxy_info_tls_key(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.tls_key;
}

int dal_proxy_info_require_tls(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.require_tls;
}

uint32_t dal_proxy_info_auth_delay_after(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.auth_delay_after;
}

uint32_t dal_proxy_info_auth_delay_max_ms(const dal_proxy_info_t *p)
{
    return p->cfg->proxy.auth_delay_max_ms;
}

const char *dal_proxy_info_users_datasource(const dal_proxy_info_t *p)
{
    const dal_config_t *c = p->cfg;

    if (!c->proxy.users)
        return NULL;
    if (c->proxy.users_datasource != NULL)
        return c->proxy.users_datasource;
    if (c->default_datasource != NULL)
        return c->default_datasource;
    return c->ndatasources > 0 ? c->datasources[0].name : NULL;
}

size_t dal_proxy_info_user_count(const dal_proxy_info_t *p)
{
    return p->cfg->nproxy_users;
}

const char *dal_proxy_info_user(const dal_proxy_info_t *p, size_t i, const char **password,
                                const char **password_hash)
{
    const dal_cfg_proxy_user_t *u;

    if (i >= p->cfg->nproxy_users)
        return NULL;
    u = &p->cfg->proxy_users[i];
    if (password != NULL)
        *password = u->password;
    if (password_hash != NULL)
        *password_hash = u->password_hash;
    return u->name;
}

/* ------------------------------------------------------------ monitors */

void dal_monitor_emit(dal_t *dal, const dal_event_t *ev)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);

    if (snap != NULL) {
        monitor_emit(snap->monitors, ev);
        snapshot_unref(snap);
    }
}

/* ------------------------------------------------- backend threads' State */

/* v[i] and v[k] name the same server. */
static int same_server(const dal_backend_thread_t *a, const dal_backend_thread_t *b)
{
    return a->replica == b->replica && strcmp(a->datasource, b->datasource) == 0;
}

/* The server v names in snap, or NULL when a reload removed it. */
static dal_server_t *thread_server(const dal_snapshot_t *snap, const dal_backend_thread_t *v)
{
    dal_node_t *node = snapshot_node(snap, v->datasource);

    if (node == NULL)
        return NULL;
    if (v->replica < 0)
        return &node->master;
    return (size_t)v->replica < node->nreplicas ? &node->replicas[v->replica] : NULL;
}

/* The State of every thread of v[first..n) on v[first]'s server: one read
 * of its process list, `WHERE ID IN (...)` of those threads. */
static int server_states(dal_server_t *srv, dal_backend_thread_t *v, size_t first, size_t n,
                         dal_error_t *err)
{
    dal_buf_t sql = {0};
    dal_conn_t *c = NULL;
    MYSQL_RES *res;
    MYSQL_ROW row;
    size_t i;
    int reused, rc;

    buf_puts(&sql, "SELECT ID, STATE FROM information_schema.PROCESSLIST WHERE ID IN (");
    for (i = first; i < n; i++)
        if (same_server(&v[i], &v[first]))
            buf_printf(&sql, "%s%lu", i == first ? "" : ",", v[i].id);
    buf_puts(&sql, ")");
    if (sql.oom) {
        buf_free(&sql);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    if ((rc = server_acquire(srv, &c, &reused, err)) != 0) {
        buf_free(&sql);
        return rc;
    }
    if (mysql_real_query(&c->mysql, sql.data, (unsigned long)sql.len) != 0 ||
        (res = mysql_store_result(&c->mysql)) == NULL) {
        rc = conn_error(c, DAL_ESERVER, err);
        server_release(srv, c, 0);
        buf_free(&sql);
        return rc;
    }
    while ((row = mysql_fetch_row(res)) != NULL)
        for (i = first; i < n && row[0] != NULL; i++)
            if (same_server(&v[i], &v[first]) && v[i].id == strtoul(row[0], NULL, 10))
                snprintf(v[i].state, sizeof v[i].state, "%s", row[1] != NULL ? row[1] : "");
    mysql_free_result(res);
    server_release(srv, c, 1);
    buf_free(&sql);
    return 0;
}

int dal_backend_states(dal_t *dal, dal_backend_thread_t *v, size_t n, dal_error_t *err)
{
    dal_snapshot_t *snap;
    dal_server_t *srv;
    dal_error_t e;
    size_t i, k;
    int rc = 0, one;

    if (dal == NULL || (v == NULL && n > 0))
        return err_set(err, DAL_EINVAL, "dal_backend_states: NULL %s", dal == NULL ? "handle" : "v");
    for (i = 0; i < n; i++)
        v[i].state[0] = '\0';
    if (n == 0 || (snap = snapshot_acquire(dal)) == NULL)
        return 0;
    for (i = 0; i < n; i++) {
        for (k = 0; k < i && !same_server(&v[k], &v[i]); k++)
            ;
        if (k < i || (srv = thread_server(snap, &v[i])) == NULL)
            continue;  /* read with its server's first thread, or gone */
        if ((one = server_states(srv, v, i, n, &e)) != 0 && rc == 0) {
            rc = one;
            if (err != NULL)
                *err = e;
        }
    }
    snapshot_unref(snap);
    return rc;
}
