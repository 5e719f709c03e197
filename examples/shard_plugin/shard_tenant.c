/*
 * shard_tenant.c -- an example shard strategy, built outside dal's tree.
 *
 * Multi-tenant tables: every key starts with its tenant's name, as in
 * "acme:1234" (or is just the name, "acme").  Each tenant listed in the INI
 * file gets a table of its own, in list order:
 *
 *     strategy = tenant
 *     strategy.tenants = acme, globex, initech
 *
 * puts acme's rows in table 0, globex's in 1, initech's in 2; the node is
 * MTDDL's table / (table_shard_num / db_shard_num).  A tenant that is not
 * listed is an error, never a guess.  Appending tenants keeps every existing
 * tenant where it is, so table_shard_num may be larger than the list: the
 * spare tables wait for new tenants.
 *
 * The whole plugin talks to dal through two things only: the descriptor at
 * the bottom, and the dal_host_api_t handed to create().  It does not link
 * against libdal.  Build: see the Makefile beside this file.
 */
#include <stdlib.h>
#include <string.h>

#include <dal/plugin.h>

/* One instance per logical table.  Immutable after create(), so locate()
 * may run on many threads at once without locks, as dal requires. */
typedef struct tenant {
    const dal_host_api_t *api;  /* static in dal, outlives the instance */
    uint32_t per_db;            /* tables per data node */
    size_t n;                   /* number of tenants */
    const char *const *names;   /* borrowed from dal: valid while the instance lives */
    size_t lens[];              /* strlen of each name, to compare without NULs */
} tenant_t;

/* Parameters are declared as data: dal checks the INI keys and their
 * types before create() runs, and reports mistakes with FILE:LINE. */
static const dal_param_spec_t tenant_params[] = {
    {"tenants", DAL_PARAM_STRING_LIST, 1, NULL,
     "tenant names; the i-th tenant's rows go to table i"},
    {NULL, 0, 0, NULL, NULL}
};

/* Reject lists that could not place every listed tenant unambiguously. */
static int tenant_check(const dal_host_api_t *api, const dal_shard_table_t *table,
                        const char *const *names, size_t n, dal_error_t *err)
{
    size_t i, j;

    if (table->db_shard_num < 1 || table->table_shard_num % table->db_shard_num != 0)
        return api->set_error(err, DAL_EINVAL, "table_shard_num must be a non-zero "
                              "multiple of db_shard_num");
    if (n == 0)
        return api->set_error(err, DAL_EPLUGIN, "strategy.tenants lists no tenant");
    if (n > table->table_shard_num)
        return api->set_error(err, DAL_EPLUGIN, "strategy.tenants lists %zu tenants but "
                              "there are only %u tables", n, (unsigned)table->table_shard_num);
    for (i = 0; i < n; i++) {
        if (strchr(names[i], ':'))
            return api->set_error(err, DAL_EPLUGIN, "tenant '%s' contains ':', which "
                                  "separates the tenant from the rest of the key", names[i]);
        for (j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return api->set_error(err, DAL_EPLUGIN, "tenant '%s' is listed twice",
                                      names[i]);
    }
    return 0;
}

static int tenant_create(const dal_host_api_t *api, dal_host_t *host,
                         const dal_shard_table_t *table, const dal_plugin_params_t *params,
                         void **instance, dal_error_t *err)
{
    const char *const *names = NULL;
    size_t n = api->param_string_list(params, "tenants", &names), i;
    tenant_t *t;
    int rc;

    if ((rc = tenant_check(api, table, names, n, err)) != 0)
        return rc;
    if ((t = malloc(sizeof *t + n * sizeof t->lens[0])) == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    t->api = api;
    t->per_db = table->table_shard_num / table->db_shard_num;
    t->n = n;
    t->names = names;
    for (i = 0; i < n; i++)
        t->lens[i] = strlen(names[i]);
    api->log(host, DAL_LOG_INFO, "%s: %zu tenants on %u tables", table->table, n,
             (unsigned)table->table_shard_num);
    *instance = t;
    return 0;
}

static void tenant_destroy(void *instance)
{
    free(instance);
}

/* "acme:1234" -> acme's table.  A linear scan: tenant lists are short. */
static int tenant_locate(void *instance, const dal_value_t *value, dal_shard_pos_t *out,
                         dal_error_t *err)
{
    const tenant_t *t = instance;
    const char *key, *colon;
    size_t len, i;

    if (value->type != DAL_TYPE_STRING)
        return t->api->set_error(err, DAL_ESHARD, "tenant keys are strings like "
                                 "'acme:1234'");
    key = value->v.s.ptr; /* borrowed, not NUL-terminated, NULL when empty */
    colon = value->v.s.len ? memchr(key, ':', value->v.s.len) : NULL;
    len = colon ? (size_t)(colon - key) : value->v.s.len;
    for (i = 0; i < t->n; i++) {
        if (t->lens[i] == len && memcmp(t->names[i], key, len) == 0) {
            out->table = (uint32_t)i;
            out->db = (uint32_t)i / t->per_db;
            return 0;
        }
    }
    return t->api->set_error(err, DAL_ESHARD, "unknown tenant '%.*s': not in strategy.tenants",
                             (int)(len < 64 ? len : 64), key);
}

static const dal_shard_ops_t tenant_ops = {
    sizeof(dal_shard_ops_t),
    tenant_create,
    tenant_destroy,
    tenant_locate,
    NULL /* locate_range: a range of keys may touch every tenant */
};

static const dal_plugin_t tenant_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_SHARD,
    "tenant", /* so the file must be shard_tenant.so */
    "1.0",
    "one table per tenant; keys are 'tenant:rest'",
    tenant_params,
    &tenant_ops
};

/* The one exported symbol: dal_plugin_entry(), returning the descriptor. */
DAL_PLUGIN_DECLARE(tenant_plugin)
