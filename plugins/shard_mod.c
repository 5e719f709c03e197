/*
 * shard_mod.c -- the "mod" shard strategy, MTDDL's formula:
 *
 *     table = v % table_shard_num
 *     db    = table / (table_shard_num / db_shard_num)
 *
 * v is an integer >= 0 (INT, UINT, or canonical decimal text; see
 * shard_common.h).  Negative values are refused rather than folded with
 * abs() or two's complement: MTDDL never placed them, and any fold we chose
 * would put rows where another client would not look for them.
 *
 * The instance is the table geometry alone (shard_geom_t), immutable after
 * create(), so locate() is thread-safe without locks.
 */
#include "shard_common.h"

#define MOD_ACCEPTS "mod accepts integers >= 0 and their decimal text"

/* Read a value mod can place; fills err otherwise. */
static int mod_read(const shard_geom_t *m, const dal_value_t *v, shard_num_t *x,
                    dal_error_t *err)
{
    char d[SHARD_DESC_MAX];
    int why = shard_read_num(v, x);

    if (why != SHARD_NUM_OK)
        return shard_num_error(m->api, err, v, why, MOD_ACCEPTS);
    if (x->neg)
        return m->api->set_error(err, DAL_ESHARD, "shard value %s is negative; " MOD_ACCEPTS,
                                 shard_describe(v, d));
    return 0;
}

static int mod_locate(void *instance, const dal_value_t *value, dal_shard_pos_t *out,
                      dal_error_t *err)
{
    const shard_geom_t *m = instance;
    shard_num_t x;
    int rc;

    if ((rc = mod_read(m, value, &x, err)) != 0)
        return rc;
    shard_set_pos(out, (uint32_t)(x.mag % m->tables), m->per_db);
    return 0;
}

/*
 * Read one end of a range.  Unlike locate(), a negative end is fine: no row
 * can hold a negative key (locate() refuses them), so "v > -5" simply
 * starts at 0 and "v < -5" touches nothing.
 */
static int mod_read_end(const shard_geom_t *m, const dal_value_t *v, shard_num_t *x,
                        dal_error_t *err)
{
    int why = shard_read_num(v, x);

    return why == SHARD_NUM_OK ? 0 : shard_num_error(m->api, err, v, why, MOD_ACCEPTS);
}

/*
 * Positions of [lo, hi]: fewer than `tables` consecutive values touch
 * distinct positions, which may wrap past the last table; more touch all.
 * Results are in ascending table order.  An unbounded lower end starts at 0
 * (see mod_read_end), an unbounded upper end touches everything.
 */
static int mod_locate_range(void *instance, const dal_value_t *lov, int lo_inclusive,
                            const dal_value_t *hiv, int hi_inclusive,
                            dal_shard_pos_t *out, size_t *count, dal_error_t *err)
{
    const shard_geom_t *m = instance;
    shard_num_t lx = {0, 0}, hx = {UINT64_MAX, 0};
    uint64_t lo, hi;
    uint32_t a, b;
    int rc;

    *count = 0;
    if (lov && (rc = mod_read_end(m, lov, &lx, err)) != 0)
        return rc;
    if (hiv && (rc = mod_read_end(m, hiv, &hx, err)) != 0)
        return rc;

    /* Turn both ends into an inclusive interval of non-negative values. */
    lo = lx.neg ? 0 : lx.mag;
    if (lov && !lo_inclusive && !lx.neg) {
        if (lo == UINT64_MAX)
            return 0;
        lo++;
    }
    if (hx.neg)
        return 0;
    hi = hx.mag;
    if (hiv && !hi_inclusive) {
        if (hi == 0)
            return 0;
        hi--;
    }
    if (lo > hi)
        return 0;

    if (!hiv || hi - lo >= (uint64_t)m->tables - 1) {
        shard_add_span(out, count, 0, m->tables - 1, m->per_db);
        return 0;
    }
    a = (uint32_t)(lo % m->tables);
    b = (uint32_t)(hi % m->tables);
    if (a <= b) {
        shard_add_span(out, count, a, b, m->per_db);
    } else {
        shard_add_span(out, count, 0, b, m->per_db);
        shard_add_span(out, count, a, m->tables - 1, m->per_db);
    }
    return 0;
}

static const dal_shard_ops_t mod_ops = {
    sizeof(dal_shard_ops_t),
    shard_geom_create,
    shard_geom_destroy,
    mod_locate,
    mod_locate_range
};

static const dal_plugin_t mod_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_SHARD,
    "mod",
    DAL_VERSION_STRING,
    "MTDDL's mod: table = v % table_shard_num, for integer keys >= 0",
    NULL, /* no parameters */
    &mod_ops
};

DAL_PLUGIN_DECLARE(mod_plugin)
