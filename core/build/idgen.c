/*
 * idgen.c -- the ID generator instances of a snapshot, drawing IDs, and
 * setting up the tables of the built-in generators.
 *
 * Plugins are loaded the way snapshot.c loads shard strategies: find the
 * .so (once per plugin name), check the section's keys against the
 * plugin's declared parameters, create the instance with a host context of
 * its own.  The set is immutable once built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "exec.h"
#include "idgen.h"
#include "plugin_load.h"

struct dal_idgen {
    const dal_cfg_idgen_t *cfg;  /* borrowed from the snapshot's config */
    dal_plugin_lib_t *lib;       /* one reference */
    const dal_idgen_ops_t *ops;  /* inside lib */
    void *inst;                  /* owned via ops->destroy; NULL if create failed */
    dal_plugin_params_t *params; /* owned */
    struct dal_host host;
};

struct dal_idgen_set {
    size_t n;                    /* generators made so far (all of them once built) */
    dal_idgen_t gens[];
};

/* -------------------------------------------------------------- building */

/* The plugin's .so: shared with an earlier section (before g) naming the
 * same plugin. */
static int find_lib(const dal_snapshot_t *s, dal_idgen_set_t *set, const dal_idgen_t *g,
                    dal_plugin_lib_t **out, dal_error_t *err)
{
    const char *plugin = g->cfg->plugin;
    size_t i;

    for (i = 0; &set->gens[i] != g; i++)
        if (strcmp(set->gens[i].cfg->plugin, plugin) == 0) {
            plugin_lib_ref(set->gens[i].lib);
            *out = set->gens[i].lib;
            return 0;
        }
    return plugin_find(s->plugin_path, DAL_PLUGIN_IDGEN, plugin, out, err);
}

/* Make the instance of section c into g.  g is already counted in set->n,
 * so idgen_set_free releases whatever this got to. */
static int init_gen(dal_snapshot_t *s, dal_idgen_set_t *set, dal_idgen_t *g,
                    const dal_cfg_idgen_t *c, dal_error_t *err)
{
    const char *path = s->cfg->path;
    char role[160];
    int rc;

    g->cfg = c;
    g->host.log = s->log;
    g->host.snap = s;
    snprintf(g->host.component, sizeof g->host.component, "idgen_%s:%s", c->plugin, c->name);
    rc = find_lib(s, set, g, &g->lib, err);
    if (rc != 0) {
        err_prefix(err, "%s:%d", path, c->plugin_line);
        return rc == DAL_ENOMEM ? rc : DAL_EPLUGIN;
    }
    g->ops = g->lib->desc->ops;
    /* the keys of an [idgen] section carry no prefix: name the section instead */
    snprintf(role, sizeof role, "[idgen %s]", c->name);
    rc = plugin_params_build(g->lib, role, &c->params, path, c->line, &g->params, err);
    if (rc != 0)
        return rc;
    rc = g->ops->create(plugin_host_api(), &g->host, c->name, g->params, &g->inst, err);
    if (rc != 0) {
        g->inst = NULL;
        err_prefix(err, "%s:%d: ID generator plugin '%s' (%s) failed to initialise for "
                   "[idgen %s]", path, c->line, c->plugin, g->lib->path, c->name);
        return DAL_EPLUGIN;
    }
    return 0;
}

int idgen_set_build(struct dal_snapshot *s, dal_idgen_set_t **out, dal_error_t *err)
{
    const dal_config_t *cfg = s->cfg;
    dal_idgen_set_t *set;
    size_t i;
    int rc = 0;

    *out = NULL;
    if (cfg->nidgens == 0)
        return 0;
    set = calloc(1, sizeof *set + cfg->nidgens * sizeof set->gens[0]);
    if (set == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < cfg->nidgens && rc == 0; i++) {
        set->n++;
        rc = init_gen(s, set, &set->gens[i], &cfg->idgens[i], err);
    }
    if (rc != 0) {
        idgen_set_free(set);
        return rc;
    }
    *out = set;
    return 0;
}

void idgen_set_free(dal_idgen_set_t *set)
{
    size_t i;

    if (set == NULL)
        return;
    for (i = 0; i < set->n; i++) {
        dal_idgen_t *g = &set->gens[i];
        if (g->inst != NULL)
            g->ops->destroy(g->inst);
        plugin_params_free(g->params);
        /* after destroy: the instance's code lives in this .so */
        plugin_lib_unref(g->lib);
    }
    free(set);
}

/* --------------------------------------------------------------- drawing */

const dal_idgen_t *idgen_find(const dal_idgen_set_t *set, const char *name)
{
    size_t i;

    for (i = 0; set != NULL && i < set->n; i++)
        if (strcmp(set->gens[i].cfg->name, name) == 0)
            return &set->gens[i];
    return NULL;
}

int idgen_draw(const dal_idgen_t *g, int64_t *ids, size_t n, dal_error_t *err)
{
    int rc;

    if (n == 0)
        return 0;
    rc = g->ops->next(g->inst, ids, n, err);
    if (rc != 0)
        err_prefix(err, "[idgen %s]", g->cfg->name);
    return rc;
}

int idgen_next(const dal_idgen_set_t *set, const char *name, int64_t *ids, size_t n,
               dal_error_t *err)
{
    const dal_idgen_t *g = idgen_find(set, name);

    if (g == NULL)
        return err_set(err, DAL_EINVAL, "no ID generator '%s' (no [idgen %s] section)",
                       name, name);
    return idgen_draw(g, ids, n, err);
}

/* ---------------------------------------------------------------- set-up */

/*
 * The tables of the built-in generators.  The plugins only read and update
 * them; creating them is an operator's step (`dal idgen init`), so that a
 * mistyped biz tag fails loudly instead of starting a new sequence at 1.
 */
#define CREATE_TABLE "CREATE TABLE IF NOT EXISTS"
#define LEAF_COLUMNS                                                                     \
    "(biz_tag VARCHAR(128) NOT NULL PRIMARY KEY, max_id BIGINT NOT NULL, "               \
    "step INT NOT NULL, description VARCHAR(256), "                                      \
    "update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)"
/* ON DUPLICATE KEY rather than IGNORE: IGNORE would also hide a value that
 * does not fit.  An unchanged duplicate counts 0 affected rows. */
#define LEAF_ROW                                                                         \
    "(biz_tag, max_id, step, description) VALUES (?, 1, ?, ?) "                          \
    "ON DUPLICATE KEY UPDATE biz_tag = biz_tag"
#define LEASE_COLUMNS                                                                    \
    "(worker_id SMALLINT UNSIGNED NOT NULL PRIMARY KEY, "                                \
    "owner VARCHAR(128) NOT NULL DEFAULT '', "                                           \
    "expires_at DATETIME(3) NOT NULL DEFAULT '1970-01-01 00:00:01')"
#define LEASE_WORKERS 1024

/* What one section sets up. */
typedef struct setup {
    dal_snapshot_t *snap;
    const dal_idgen_t *gen;
    const char *ds;     /* where */
    dal_node_t *node;
    const char *table;
} setup_t;

static int run(const setup_t *su, const char *sql, const dal_value_t *p, size_t n,
               uint64_t *affected, dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = exec_direct(su->node, sql, p, n, &r, err);

    if (rc == 0 && affected != NULL)
        *affected = dal_result_affected_rows(r);
    dal_result_free(r);
    return rc;
}

/* Run "VERB `table` REST". */
static int run_on_table(const setup_t *su, const char *verb, const char *rest,
                        const dal_value_t *p, size_t n, uint64_t *affected, dal_error_t *err)
{
    char sql[512];

    snprintf(sql, sizeof sql, "%s `%s` %s", verb, su->table, rest);
    return run(su, sql, p, n, affected, err);
}

static int setup_leaf(const setup_t *su, const char **key, int *created, dal_error_t *err)
{
    const dal_plugin_params_t *p = su->gen->params;
    const char *desc = params_string(p, "description");
    dal_value_t v[3];
    uint64_t added = 0;
    int rc;

    *key = params_is_set(p, "biz_tag") ? params_string(p, "biz_tag")
                                           : su->gen->cfg->name;
    rc = run_on_table(su, CREATE_TABLE, LEAF_COLUMNS, NULL, 0, NULL, err);
    if (rc != 0)
        return rc;
    v[0] = dal_str(*key);
    v[1] = dal_int(params_int(p, "step"));
    v[2] = desc ? dal_str(desc) : dal_null();
    rc = run_on_table(su, "INSERT INTO", LEAF_ROW, v, 3, &added, err);
    *created = added > 0;
    return rc;
}

static int setup_lease(const setup_t *su, const char **key, int *created, dal_error_t *err)
{
    dal_buf_t sql = DAL_BUF_INIT;
    uint64_t added = 0;
    int i, rc;

    *key = NULL;
    rc = run_on_table(su, CREATE_TABLE, LEASE_COLUMNS, NULL, 0, NULL, err);
    if (rc != 0)
        return rc;
    buf_printf(&sql, "INSERT INTO `%s` (worker_id) VALUES (0)", su->table);
    for (i = 1; i < LEASE_WORKERS; i++)
        buf_printf(&sql, ",(%d)", i);
    buf_puts(&sql, " ON DUPLICATE KEY UPDATE worker_id = worker_id");
    rc = sql.oom ? err_set(err, DAL_ENOMEM, "out of memory")
                 : run(su, sql.data, NULL, 0, &added, err);
    buf_free(&sql);
    *created = added > 0;
    return rc;
}

/* Which set-up a section needs, and where: 0 with su->table NULL for none. */
static int setup_target(setup_t *su, const char *override, dal_error_t *err)
{
    const dal_idgen_t *g = su->gen;
    const char *ds_key = NULL, *table_key = NULL;
    char q[DAL_CFG_QUOTE_SIZE];

    if (strcmp(g->cfg->plugin, "leaf") == 0) {
        ds_key = "datasource";
        table_key = "table";
    } else if (strcmp(g->cfg->plugin, "snowflake") == 0 &&
               params_is_set(g->params, "lease_datasource")) {
        ds_key = "lease_datasource";
        table_key = "lease_table";
    }
    su->table = NULL;
    if (ds_key == NULL)
        return 0;
    su->ds = override ? override : params_string(g->params, ds_key);
    su->table = params_string(g->params, table_key);
    su->node = snapshot_node(su->snap, su->ds);
    if (su->node == NULL)
        return err_set(err, DAL_EROUTE, "%s:%d: [idgen %s]: datasource '%s' is not defined",
                       su->snap->cfg->path, g->cfg->line, g->cfg->name,
                       config_quote(su->ds, q));
    /* the plugin accepted the name at create; this keeps the SQL sound anyway */
    if (strchr(su->table, '`') != NULL)
        return err_set(err, DAL_ECONFIG, "[idgen %s]: bad table name", g->cfg->name);
    return 0;
}

static int setup_one(setup_t *su, const char *override, dal_idgen_setup_fn fn, void *user,
                     dal_error_t *err)
{
    const char *key = NULL;
    int created = 0, rc;

    rc = setup_target(su, override, err);
    if (rc == 0 && su->table != NULL)
        rc = strcmp(su->gen->cfg->plugin, "leaf") == 0 ? setup_leaf(su, &key, &created, err)
                                                       : setup_lease(su, &key, &created, err);
    if (rc != 0)
        return rc;
    if (fn != NULL)
        fn(user, su->gen->cfg->name, su->table ? su->ds : NULL, su->table, key, created);
    return 0;
}

int idgen_setup(dal_snapshot_t *snap, const char *datasource, dal_idgen_setup_fn fn,
                void *user, dal_error_t *err)
{
    setup_t su;
    size_t i;
    int rc = 0;

    memset(&su, 0, sizeof su);
    su.snap = snap;
    if (datasource != NULL && snapshot_node(su.snap, datasource) == NULL)
        rc = err_set(err, DAL_EROUTE, "datasource '%s' is not defined", datasource);
    for (i = 0; rc == 0 && su.snap->idgens != NULL && i < su.snap->idgens->n; i++) {
        su.gen = &su.snap->idgens->gens[i];
        rc = setup_one(&su, datasource, fn, user, err);
    }
    return rc;
}
