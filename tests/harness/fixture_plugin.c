/*
 * fixture_plugin.c -- deliberately broken (and one good) shard plugins for
 * the loader's error tests.  Built several times with one FX_* macro each;
 * the test copies each .so into a plugin directory under the file name
 * that provokes the error it is about.
 */
#include <string.h>

#include <dal/plugin.h>

static const dal_host_api_t *api;

/* "good": table = v % table_shard_num, and create fails on request so
 * the test can check how an init failure is reported. */
static int fx_create(const dal_host_api_t *a, dal_host_t *host, const dal_shard_table_t *t,
                     const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    api = a;
    if (a->param_bool(params, "fail"))
        return a->set_error(err, DAL_EPLUGIN, "asked to fail (weight=%lld)",
                            (long long)a->param_int(params, "weight"));
    *instance = (void *)t->table; /* any non-NULL pointer */
    (void)host;
    return 0;
}

static void fx_destroy(void *instance)
{
    (void)instance;
}

static int fx_locate(void *instance, const dal_value_t *v, dal_shard_pos_t *out,
                     dal_error_t *err)
{
    (void)instance;
    if (v->type != DAL_TYPE_INT)
        return api->set_error(err, DAL_ESHARD, "fixture wants an int");
    out->table = (uint32_t)(v->v.i % 4);
    out->db = 0;
    return 0;
}

/* unused in the FX_NULLOPS build, which exports no ops on purpose */
static const dal_shard_ops_t fx_ops __attribute__((unused)) = {
    sizeof(dal_shard_ops_t), fx_create, fx_destroy, fx_locate, NULL,
};

static const dal_param_spec_t fx_params[] = {
    {"weight", DAL_PARAM_INT, 0, "1", "an integer"},
    {"fail", DAL_PARAM_BOOL, 0, "false", "make create() fail"},
    {NULL, 0, 0, NULL, NULL},
};

#if defined(FX_BADABI)
#define FX_ABI 999
#else
#define FX_ABI DAL_PLUGIN_ABI_VERSION
#endif

#if defined(FX_KIND)
#define FX_KINDV DAL_PLUGIN_IDGEN
#else
#define FX_KINDV DAL_PLUGIN_SHARD
#endif

#if defined(FX_NAME)
#define FX_NAMEV "other"
#elif defined(FX_BADABI)
#define FX_NAMEV "badabi"
#elif defined(FX_KIND)
#define FX_NAMEV "kind"
#elif defined(FX_NULLOPS)
#define FX_NAMEV "nullops"
#else
#define FX_NAMEV "good"
#endif

#if defined(FX_NULLOPS)
#define FX_OPS NULL
#else
#define FX_OPS (&fx_ops)
#endif

static const dal_plugin_t fx_plugin = {
    FX_ABI, sizeof(dal_plugin_t), FX_KINDV, FX_NAMEV, "0.0", "test fixture",
    fx_params, FX_OPS,
};

#if defined(FX_NOENTRY)
/* exports a function, but not the entry point */
DAL_PLUGIN_VISIBLE int fx_something(void);
DAL_PLUGIN_VISIBLE int fx_something(void) { return fx_plugin.kind; }
#else
DAL_PLUGIN_DECLARE(fx_plugin)
#endif
