/*
 * shard_range.c -- the "range" shard strategy.
 *
 *     strategy.bounds = b0, b1, ..., bN     (N = table_shard_num)
 *
 * Table i holds the integers in [b[i], b[i+1]); node as in MTDDL:
 * db = table / (table_shard_num / db_shard_num).  Values outside [b0, bN)
 * are refused: a range table that silently took them into the first or last
 * table would have to be split by hand later.
 *
 * Values may be negative here (the bounds are signed 64-bit), given as INT,
 * UINT or canonical decimal text (see shard_common.h).  Lookups are a binary
 * search over the bounds, copied into the instance at create(); the instance
 * is immutable afterwards, so ops are thread-safe without locks.
 */
#include <stdlib.h>

#include "shard_common.h"

#define RANGE_ACCEPTS "range accepts integers and their decimal text"

typedef struct range {
    const dal_host_api_t *api; /* static table, outlives the instance */
    uint32_t tables;           /* table_shard_num */
    uint32_t per_db;           /* tables per data node */
    int64_t bounds[];          /* tables + 1, strictly increasing */
} range_t;

static const dal_param_spec_t range_params[] = {
    {"bounds", DAL_PARAM_INT_LIST, 1, NULL,
     "table_shard_num + 1 strictly increasing integers; table i holds [b[i], b[i+1])"},
    {NULL, 0, 0, NULL, NULL}
};

/* Check the bounds list; on error name the offending entry. */
static int range_check_bounds(const dal_host_api_t *api, const dal_shard_table_t *table,
                              const int64_t *b, size_t n, dal_error_t *err)
{
    size_t i;

    if (n == 0)
        return api->set_error(err, DAL_EPLUGIN, "strategy.bounds is not set; range needs "
                              "table_shard_num + 1 = %" PRIu64 " integers",
                              (uint64_t)table->table_shard_num + 1);
    if (n != (size_t)table->table_shard_num + 1)
        return api->set_error(err, DAL_EPLUGIN, "strategy.bounds has %zu values; "
                              "table_shard_num = %" PRIu32 " needs exactly %" PRIu64
                              " (one more than the tables)",
                              n, table->table_shard_num, (uint64_t)table->table_shard_num + 1);
    for (i = 1; i < n; i++)
        if (b[i] <= b[i - 1])
            return api->set_error(err, DAL_EPLUGIN, "strategy.bounds must be strictly "
                                  "increasing: bounds[%zu] = %" PRId64 " is not greater than "
                                  "bounds[%zu] = %" PRId64, i, b[i], i - 1, b[i - 1]);
    return 0;
}

static int range_create(const dal_host_api_t *api, dal_host_t *host,
                        const dal_shard_table_t *table, const dal_plugin_params_t *params,
                        void **instance, dal_error_t *err)
{
    const int64_t *b = NULL;
    uint32_t per_db;
    range_t *r;
    size_t n;
    int rc;

    if ((rc = shard_check_table(api, table, &per_db, err)) != 0)
        return rc;
    n = api->param_int_list(params, "bounds", &b);
    if ((rc = range_check_bounds(api, table, b, n, err)) != 0)
        return rc;
    if ((r = malloc(sizeof *r + n * sizeof r->bounds[0])) == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    r->api = api;
    r->tables = table->table_shard_num;
    r->per_db = per_db;
    memcpy(r->bounds, b, n * sizeof r->bounds[0]);
    api->log(host, DAL_LOG_DEBUG, "%s: %" PRIu32 " tables on %" PRIu32 " nodes over [%"
             PRId64 ", %" PRId64 ")", table->table, table->table_shard_num,
             table->db_shard_num, b[0], b[n - 1]);
    *instance = r;
    return 0;
}

static void range_destroy(void *instance)
{
    free(instance);
}

/*
 * Narrow x to int64.  Returns 0 and sets *out if it fits, else -1 (below
 * INT64_MIN) or 1 (above INT64_MAX): beyond every bound either way.
 */
static int range_narrow(const shard_num_t *x, int64_t *out)
{
    if (x->neg) {
        if (x->mag > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = x->mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x->mag;
        return 0;
    }
    if (x->mag > (uint64_t)INT64_MAX)
        return 1;
    *out = (int64_t)x->mag;
    return 0;
}

/* The table holding x; requires bounds[0] <= x < bounds[tables]. */
static uint32_t range_find(const range_t *r, int64_t x)
{
    uint32_t lo = 0, hi = r->tables; /* bounds[lo] <= x < bounds[hi] */

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (r->bounds[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int range_read(const range_t *r, const dal_value_t *v, shard_num_t *x, dal_error_t *err)
{
    int why = shard_read_num(v, x);

    return why == SHARD_NUM_OK ? 0 : shard_num_error(r->api, err, v, why, RANGE_ACCEPTS);
}

static int range_locate(void *instance, const dal_value_t *value, dal_shard_pos_t *out,
                        dal_error_t *err)
{
    const range_t *r = instance;
    char d[SHARD_DESC_MAX];
    shard_num_t x;
    int64_t xi;
    int rc;

    if ((rc = range_read(r, value, &x, err)) != 0)
        return rc;
    if (range_narrow(&x, &xi) != 0 || xi < r->bounds[0] || xi >= r->bounds[r->tables])
        return r->api->set_error(err, DAL_ESHARD, "shard value %s is outside the configured "
                                 "ranges [%" PRId64 ", %" PRId64 ")", shard_describe(value, d),
                                 r->bounds[0], r->bounds[r->tables]);
    shard_set_pos(out, range_find(r, xi), r->per_db);
    return 0;
}

/*
 * Lowest configured value >= the lower end, into *lo.  Returns 0, or 1 if
 * no configured value is that high (the range is empty).
 */
static int range_lower(const range_t *r, const shard_num_t *x, int inclusive, int64_t *lo)
{
    int64_t first = r->bounds[0], end = r->bounds[r->tables], xi;
    int c = range_narrow(x, &xi);

    if (c < 0 || (c == 0 && xi < first)) {
        *lo = first;
        return 0;
    }
    if (c > 0 || xi >= end)
        return 1;
    if (!inclusive)
        xi++; /* xi < end, so no overflow */
    *lo = xi;
    return xi >= end;
}

/* Highest configured value <= the upper end, into *hi; 1 if none. */
static int range_upper(const range_t *r, const shard_num_t *x, int inclusive, int64_t *hi)
{
    int64_t first = r->bounds[0], end = r->bounds[r->tables], xi;
    int c = range_narrow(x, &xi);

    if (c > 0 || (c == 0 && xi >= end)) {
        *hi = end - 1;
        return 0;
    }
    if (c < 0 || xi < first || (!inclusive && xi == first))
        return 1;
    *hi = inclusive ? xi : xi - 1; /* xi > first here, so no overflow */
    return 0;
}

/* Exactly the tables whose ranges meet the given range, ascending. */
static int range_locate_range(void *instance, const dal_value_t *lov, int lo_inclusive,
                              const dal_value_t *hiv, int hi_inclusive,
                              dal_shard_pos_t *out, size_t *count, dal_error_t *err)
{
    const range_t *r = instance;
    int64_t lo = r->bounds[0], hi = r->bounds[r->tables] - 1;
    shard_num_t lx, hx;
    int rc;

    *count = 0;
    /* Read both ends first so a bad one is reported even when the other
     * alone would make the range empty. */
    if (lov && (rc = range_read(r, lov, &lx, err)) != 0)
        return rc;
    if (hiv && (rc = range_read(r, hiv, &hx, err)) != 0)
        return rc;
    if (lov && range_lower(r, &lx, lo_inclusive, &lo))
        return 0;
    if (hiv && range_upper(r, &hx, hi_inclusive, &hi))
        return 0;
    if (lo > hi)
        return 0;
    shard_add_span(out, count, range_find(r, lo), range_find(r, hi), r->per_db);
    return 0;
}

static const dal_shard_ops_t range_ops = {
    sizeof(dal_shard_ops_t),
    range_create,
    range_destroy,
    range_locate,
    range_locate_range
};

static const dal_plugin_t range_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_SHARD,
    "range",
    DAL_VERSION_STRING,
    "contiguous integer ranges: table i holds [bounds[i], bounds[i+1])",
    range_params,
    &range_ops
};

DAL_PLUGIN_DECLARE(range_plugin)
