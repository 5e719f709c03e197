/*
 * test_shard.c -- unit tests of the built-in shard strategies (mod, range,
 * hash), loaded as plugins from $DAL_PLUGIN_DIR and driven through the fake
 * host, exactly as dal would drive them but without a core or a server.
 *
 * Most tests are tables of cases run with tcase_add_loop_test, one Check
 * test per row, so a failure names its row.  The hash vectors pin where rows
 * live for good: if one fails, the hash changed and existing data would be
 * looked for in the wrong tables.
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_host.h"
#include "check_run.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Shard values as static data. */
#define VNULL {.type = DAL_TYPE_NULL}
#define VI(x) {.type = DAL_TYPE_INT, .v.i = (x)}
#define VU(x) {.type = DAL_TYPE_UINT, .v.u = (x)}
#define VD(x) {.type = DAL_TYPE_DOUBLE, .v.d = (x)}
#define VS(lit) {.type = DAL_TYPE_STRING, .v.s = {(lit), sizeof(lit) - 1}}
#define VB(lit) {.type = DAL_TYPE_BLOB, .v.s = {(lit), sizeof(lit) - 1}}

#define PRIME32 4294967291u /* largest prime below 2^32: positions show 32 bits of hash */

/* ------------------------------------------------------------ plugins */

static const char *const plugin_names[] = {"mod", "range", "hash"};
static fake_plugin_t plugins[N_ELEMS(plugin_names)]; /* loaded on first use */

static const char *plugin_dir(void)
{
    const char *dir = getenv("DAL_PLUGIN_DIR");

    ck_assert_msg(dir && *dir, "DAL_PLUGIN_DIR is not set");
    return dir;
}

static fake_plugin_t *plugin_slot(const char *name)
{
    char path[4096];
    dal_error_t err = {0};
    size_t i;

    for (i = 0; strcmp(plugin_names[i], name) != 0; i++)
        ck_assert(i + 1 < N_ELEMS(plugin_names));
    if (plugins[i].handle == NULL) {
        ck_assert(fake_plugin_path(path, sizeof path, plugin_dir(), DAL_PLUGIN_SHARD, name) == 0);
        ck_assert_msg(fake_plugin_open(path, DAL_PLUGIN_SHARD, name, &plugins[i], &err) == 0,
                      "%s", err.message);
    }
    return &plugins[i];
}

static const dal_plugin_t *plugin(const char *name)
{
    return plugin_slot(name)->desc;
}

static void plugins_unload(void)
{
    size_t i;

    for (i = 0; i < N_ELEMS(plugins); i++)
        fake_plugin_close(&plugins[i]);
}

/* One strategy instance with its fake host and parameters. */
typedef struct inst {
    const dal_shard_ops_t *ops;
    void *self;
    dal_host_t *host;
    dal_plugin_params_t *params;
} inst_t;

/*
 * Create an instance of plugin name for table wm_food on dbs nodes and
 * tables tables.  bounds is range's strategy.bounds text (NULL: not given),
 * checked against the plugin's declared parameters as dal would.  Returns
 * create()'s code with err filled.
 */
static int inst_open(inst_t *in, const char *name, uint32_t dbs, uint32_t tables,
                     const char *bounds, dal_error_t *err)
{
    const dal_plugin_t *d = plugin(name);
    const fake_param_t p = {"bounds", 0, bounds};
    const dal_shard_table_t t = {"wm_food", "dbProductSku", dbs, tables};
    dal_error_t perr = {0};

    memset(in, 0, sizeof *in);
    in->ops = d->ops;
    in->host = fake_host_new();
    in->params = fake_params_new(d->params, &p, bounds ? 1 : 0, &perr);
    ck_assert_msg(in->host && in->params, "fake params: %s", perr.message);
    return in->ops->create(fake_host_api(), in->host, &t, in->params, &in->self, err);
}

static void inst_must_open(inst_t *in, const char *name, uint32_t dbs, uint32_t tables,
                           const char *bounds)
{
    dal_error_t err = {0};

    ck_assert_msg(inst_open(in, name, dbs, tables, bounds, &err) == 0,
                  "%s create: %s", name, err.message);
}

static void inst_close(inst_t *in)
{
    /* A plugin reading a parameter it did not declare is a bug. */
    ck_assert_uint_eq(fake_params_misses(in->params), 0);
    if (in->self)
        in->ops->destroy(in->self);
    fake_params_free(in->params);
    fake_host_free(in->host);
}

/*
 * Locate v; on success check the node rule db = table / (tables / dbs).
 * Checks in helpers called in loops use `if (...) ck_abort_msg`: every
 * ck_assert records its line through a pipe to the runner, and hundreds of
 * thousands of those make the loops crawl under sanitizers.
 */
static int locate(const inst_t *in, uint32_t dbs, uint32_t tables, const dal_value_t *v,
                  dal_shard_pos_t *pos, dal_error_t *err)
{
    int rc;

    pos->db = pos->table = UINT32_MAX;
    rc = in->ops->locate(in->self, v, pos, err);
    if (rc == 0 && (pos->table >= tables || pos->db != pos->table / (tables / dbs)))
        ck_abort_msg("position table %u db %u is wrong for %u tables on %u nodes",
                     pos->table, pos->db, tables, dbs);
    return rc;
}

static dal_shard_pos_t locate_ok(const inst_t *in, uint32_t dbs, uint32_t tables,
                                 const dal_value_t *v)
{
    dal_shard_pos_t pos;
    dal_error_t err = {0};

    if (locate(in, dbs, tables, v, &pos, &err) != 0)
        ck_abort_msg("locate: %s", err.message);
    return pos;
}

/* -------------------------------------------------------- locate tables */

typedef struct locate_case {
    uint32_t dbs, tables;
    const char *bounds; /* range only */
    dal_value_t v;
    int rc;             /* 0 or the expected error */
    uint32_t db, table; /* when rc == 0 */
    const char *msg;    /* when rc != 0: part of the message */
} locate_case_t;

static void run_locate(const char *name, const locate_case_t *c, int row)
{
    dal_shard_pos_t pos;
    dal_error_t err = {0};
    inst_t in;
    int rc;

    inst_must_open(&in, name, c->dbs, c->tables, c->bounds);
    rc = locate(&in, c->dbs, c->tables, &c->v, &pos, &err);
    ck_assert_msg(rc == c->rc, "%s row %d: rc %d (%s), expected %d", name, row, rc,
                  err.message, c->rc);
    if (rc == 0) {
        ck_assert_msg(pos.table == c->table && pos.db == c->db,
                      "%s row %d: got table %u db %u, expected table %u db %u", name, row,
                      pos.table, pos.db, c->table, c->db);
    } else {
        ck_assert_int_eq(err.code, c->rc);
        ck_assert_msg(strstr(err.message, c->msg) != NULL,
                      "%s row %d: message \"%s\" lacks \"%s\"", name, row, err.message, c->msg);
    }
    inst_close(&in);
}

#define LONG_DIGITS "1111111111111111111111111111111111111111" /* 40 */

static const locate_case_t mod_cases[] = {
    /* MTDDL's example: wm_food, 100 tables, on 1 and on 4 nodes. */
    {1, 100, NULL, VI(12345), 0, 0, 45, NULL},
    {4, 100, NULL, VI(12345), 0, 1, 45, NULL},
    {1, 100, NULL, VI(0), 0, 0, 0, NULL},
    {4, 100, NULL, VI(0), 0, 0, 0, NULL},
    {1, 100, NULL, VI(99), 0, 0, 99, NULL},
    {4, 100, NULL, VI(99), 0, 3, 99, NULL},
    {4, 100, NULL, VI(100), 0, 0, 0, NULL},
    {4, 100, NULL, VI(124), 0, 0, 24, NULL},
    {4, 100, NULL, VI(125), 0, 1, 25, NULL},
    {4, 100, NULL, VI(175), 0, 3, 75, NULL},
    {4, 100, NULL, VI(INT64_MAX), 0, 0, 7, NULL},          /* 9223372036854775807 */
    {4, 100, NULL, VU(UINT64_MAX), 0, 0, 15, NULL},        /* 18446744073709551615 */
    {4, 100, NULL, VU(100), 0, 0, 0, NULL},
    {4, 100, NULL, VU(12345), 0, 1, 45, NULL},
    {4, 100, NULL, VS("123"), 0, 0, 23, NULL},
    {4, 100, NULL, VS("0"), 0, 0, 0, NULL},
    {4, 100, NULL, VS("12345"), 0, 1, 45, NULL},
    {4, 100, NULL, VS("9223372036854775807"), 0, 0, 7, NULL},
    {4, 100, NULL, VS("18446744073709551615"), 0, 0, 15, NULL},
    {1, 1, NULL, VI(987654321), 0, 0, 0, NULL},
    {8, 8, NULL, VI(13), 0, 5, 5, NULL},
    {2, 1024, NULL, VI(1000), 0, 1, 1000, NULL},
    {2, 1024, NULL, VI(1024 + 511), 0, 0, 511, NULL},
    /* 2^64-1 = (2^32+1)(2^32-1); nodes of 1431655765 tables. */
    {3, 4294967295u, NULL, VU(UINT64_MAX), 0, 0, 0, NULL},
    {3, 4294967295u, NULL, VU(UINT64_MAX - 1), 0, 2, 4294967294u, NULL},
    {3, 4294967295u, NULL, VU(1431655765), 0, 1, 1431655765, NULL},
    /* Refused values. */
    {4, 100, NULL, VI(-1), DAL_ESHARD, 0, 0, "shard value -1 is negative"},
    {4, 100, NULL, VI(INT64_MIN), DAL_ESHARD, 0, 0, "-9223372036854775808 is negative"},
    {4, 100, NULL, VS("-1"), DAL_ESHARD, 0, 0, "'-1' is negative"},
    {4, 100, NULL, VD(1.5), DAL_ESHARD, 0, 0, "shard value 1.5 is a double"},
    {4, 100, NULL, VD(2.0), DAL_ESHARD, 0, 0, "is a double"},
    {4, 100, NULL, VNULL, DAL_ESHARD, 0, 0, "shard value is NULL; mod accepts integers >= 0"},
    {4, 100, NULL, VB("12"), DAL_ESHARD, 0, 0, "x'3132' is a blob"},
    {4, 100, NULL, VS("12a"), DAL_ESHARD, 0, 0, "'12a' is not a decimal integer"},
    {4, 100, NULL, VS(""), DAL_ESHARD, 0, 0, "'' is not a decimal integer"},
    {4, 100, NULL, {.type = DAL_TYPE_STRING, .v.s = {NULL, 0}}, DAL_ESHARD, 0, 0, "'' is not"},
    {4, 100, NULL, VS("-"), DAL_ESHARD, 0, 0, "'-' is not a decimal"},
    {4, 100, NULL, VS("+1"), DAL_ESHARD, 0, 0, "'+1' is not a decimal"},
    {4, 100, NULL, VS(" 1"), DAL_ESHARD, 0, 0, "' 1' is not a decimal"},
    {4, 100, NULL, VS("1 "), DAL_ESHARD, 0, 0, "'1 ' is not a decimal"},
    {4, 100, NULL, VS("01"), DAL_ESHARD, 0, 0, "'01' is not a decimal"},
    {4, 100, NULL, VS("00"), DAL_ESHARD, 0, 0, "'00' is not a decimal"},
    {4, 100, NULL, VS("-0"), DAL_ESHARD, 0, 0, "'-0' is not a decimal"},
    {4, 100, NULL, VS("1e3"), DAL_ESHARD, 0, 0, "'1e3' is not a decimal"},
    {4, 100, NULL, VS("0x10"), DAL_ESHARD, 0, 0, "'0x10' is not a decimal"},
    {4, 100, NULL, VS("1\n"), DAL_ESHARD, 0, 0, "'1\\x0a' is not a decimal"},
    {4, 100, NULL, VS("it's"), DAL_ESHARD, 0, 0, "'it\\x27s'"},
    {4, 100, NULL, VS("18446744073709551616"), DAL_ESHARD, 0, 0, "does not fit in 64 bits"},
    {4, 100, NULL, VS("99999999999999999999999"), DAL_ESHARD, 0, 0, "does not fit"},
    {4, 100, NULL, VS("99999999999999999999999x"), DAL_ESHARD, 0, 0, "is not a decimal"},
    /* Long values are quoted cut short. */
    {4, 100, NULL, VS(LONG_DIGITS LONG_DIGITS "x"), DAL_ESHARD, 0, 0, "'" LONG_DIGITS "'..."},
};

START_TEST(test_mod_locate)
{
    run_locate("mod", &mod_cases[_i], _i);
}
END_TEST

/* Every value of a few geometries against the formula itself. */
START_TEST(test_mod_formula)
{
    static const uint32_t geo[][2] = {{1, 1}, {1, 7}, {1, 100}, {4, 100}, {5, 100}, {3, 3}};
    dal_shard_pos_t pos;
    inst_t in;
    size_t g;
    int64_t v;

    for (g = 0; g < N_ELEMS(geo); g++) {
        inst_must_open(&in, "mod", geo[g][0], geo[g][1], NULL);
        for (v = 0; v < 2000; v++) {
            dal_value_t x = VI(v);

            pos = locate_ok(&in, geo[g][0], geo[g][1], &x); /* checks db too */
            if (pos.table != (uint64_t)v % geo[g][1])
                ck_abort_msg("%" PRId64 " over %u tables: table %u", v, geo[g][1], pos.table);
        }
        inst_close(&in);
    }
}
END_TEST

#define B4 "-100, 0, 100, 200, 300" /* 4 tables */
#define BX "-9223372036854775808, 0, 9223372036854775807" /* 2 tables, extremes */

static const locate_case_t range_cases[] = {
    {2, 4, B4, VI(-100), 0, 0, 0, NULL},
    {2, 4, B4, VI(-1), 0, 0, 0, NULL},
    {2, 4, B4, VI(0), 0, 0, 1, NULL},
    {2, 4, B4, VI(99), 0, 0, 1, NULL},
    {2, 4, B4, VI(100), 0, 1, 2, NULL},
    {2, 4, B4, VI(199), 0, 1, 2, NULL},
    {2, 4, B4, VI(200), 0, 1, 3, NULL},
    {2, 4, B4, VI(299), 0, 1, 3, NULL},
    {1, 4, B4, VI(299), 0, 0, 3, NULL},
    {4, 4, B4, VI(299), 0, 3, 3, NULL},
    {2, 4, B4, VU(5), 0, 0, 1, NULL},
    {2, 4, B4, VS("-50"), 0, 0, 0, NULL},
    {2, 4, B4, VS("150"), 0, 1, 2, NULL},
    {2, 4, B4, VS("0"), 0, 0, 1, NULL},
    {2, 4, B4, VI(300), DAL_ESHARD, 0, 0,
     "shard value 300 is outside the configured ranges [-100, 300)"},
    {2, 4, B4, VI(-101), DAL_ESHARD, 0, 0, "-101 is outside the configured ranges [-100, 300)"},
    {2, 4, B4, VI(INT64_MIN), DAL_ESHARD, 0, 0, "is outside"},
    {2, 4, B4, VI(INT64_MAX), DAL_ESHARD, 0, 0, "is outside"},
    {2, 4, B4, VU(UINT64_MAX), DAL_ESHARD, 0, 0, "18446744073709551615 is outside"},
    {2, 4, B4, VS("-18446744073709551615"), DAL_ESHARD, 0, 0, "is outside"},
    {2, 4, B4, VS("-0"), DAL_ESHARD, 0, 0, "'-0' is not a decimal integer"},
    {2, 4, B4, VS("5.0"), DAL_ESHARD, 0, 0, "'5.0' is not a decimal integer"},
    {2, 4, B4, VD(5.0), DAL_ESHARD, 0, 0, "5 is a double"},
    {2, 4, B4, VNULL, DAL_ESHARD, 0, 0, "shard value is NULL; range accepts"},
    {2, 4, B4, VB("\x01\xff"), DAL_ESHARD, 0, 0, "x'01ff' is a blob"},
    /* The whole signed 64-bit line. */
    {1, 2, BX, VI(INT64_MIN), 0, 0, 0, NULL},
    {1, 2, BX, VS("-9223372036854775808"), 0, 0, 0, NULL},
    {1, 2, BX, VI(-1), 0, 0, 0, NULL},
    {1, 2, BX, VI(0), 0, 0, 1, NULL},
    {1, 2, BX, VI(INT64_MAX - 1), 0, 0, 1, NULL},
    {1, 2, BX, VI(INT64_MAX), DAL_ESHARD, 0, 0, "9223372036854775807 is outside"},
    {1, 2, BX, VU((uint64_t)INT64_MAX + 1), DAL_ESHARD, 0, 0, "is outside"},
    {1, 2, BX, VS("-9223372036854775809"), DAL_ESHARD, 0, 0, "is outside"},
    /* One table. */
    {1, 1, "10, 20", VI(10), 0, 0, 0, NULL},
    {1, 1, "10, 20", VI(19), 0, 0, 0, NULL},
    {1, 1, "10, 20", VI(20), DAL_ESHARD, 0, 0, "outside the configured ranges [10, 20)"},
};

START_TEST(test_range_locate)
{
    run_locate("range", &range_cases[_i], _i);
}
END_TEST

/* ------------------------------------------------------ range lookups */

typedef struct span_case {
    uint32_t dbs, tables;
    const char *bounds;   /* range only */
    int has_lo;
    dal_value_t lo;
    int lo_inc;
    int has_hi;
    dal_value_t hi;
    int hi_inc;
    int rc;
    const char *expect;   /* rc == 0: tables in order, space separated; "all" */
} span_case_t;

#define LO(v, inc) 1, v, inc
#define HI(v, inc) 1, v, inc
#define NOLO 0, VNULL, 0
#define NOHI 0, VNULL, 0
#define INC 1
#define EXC 0

/* Positions as "t t t", checking the node rule and that no table repeats. */
static void format_positions(const dal_shard_pos_t *pos, size_t n, uint32_t dbs,
                             uint32_t tables, char *buf, size_t cap)
{
    size_t i, o = 0;

    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        ck_assert_uint_lt(pos[i].table, tables);
        ck_assert_uint_eq(pos[i].db, pos[i].table / (tables / dbs));
        if (i > 0)
            ck_assert_uint_gt(pos[i].table, pos[i - 1].table);
        o += (size_t)snprintf(buf + o, cap - o, "%s%u", i ? " " : "", pos[i].table);
        ck_assert_uint_lt(o, cap);
    }
}

static void expected_positions(const char *expect, uint32_t tables, char *buf, size_t cap)
{
    size_t o = 0;
    uint32_t t;

    if (strcmp(expect, "all") != 0) {
        snprintf(buf, cap, "%s", expect);
        return;
    }
    buf[0] = '\0';
    for (t = 0; t < tables; t++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%u", t ? " " : "", t);
}

static void run_span(const char *name, const span_case_t *c, int row)
{
    char got[1024], want[1024];
    dal_error_t err = {0};
    dal_shard_pos_t *out = calloc(c->tables, sizeof *out); /* exactly the promised room */
    size_t count = 12345;
    inst_t in;
    int rc;

    ck_assert_ptr_nonnull(out);
    inst_must_open(&in, name, c->dbs, c->tables, c->bounds);
    ck_assert(in.ops->locate_range != NULL);
    rc = in.ops->locate_range(in.self, c->has_lo ? &c->lo : NULL, c->lo_inc,
                              c->has_hi ? &c->hi : NULL, c->hi_inc, out, &count, &err);
    ck_assert_msg(rc == c->rc, "%s span row %d: rc %d (%s), expected %d", name, row, rc,
                  err.message, c->rc);
    if (rc == 0) {
        ck_assert_uint_le(count, c->tables);
        format_positions(out, count, c->dbs, c->tables, got, sizeof got);
        expected_positions(c->expect, c->tables, want, sizeof want);
        ck_assert_msg(strcmp(got, want) == 0, "%s span row %d: got \"%s\", expected \"%s\"",
                      name, row, got, want);
    } else {
        ck_assert_int_eq(err.code, c->rc);
        ck_assert_msg(strstr(err.message, c->expect) != NULL,
                      "%s span row %d: message \"%s\" lacks \"%s\"", name, row, err.message,
                      c->expect);
    }
    inst_close(&in);
    free(out);
}

static const span_case_t mod_spans[] = {
    {4, 100, NULL, LO(VI(10), INC), HI(VI(12), INC), 0, "10 11 12"},
    {4, 100, NULL, LO(VI(10), EXC), HI(VI(12), EXC), 0, "11"},
    {4, 100, NULL, LO(VI(10), INC), HI(VI(12), EXC), 0, "10 11"},
    {4, 100, NULL, LO(VI(10), EXC), HI(VI(12), INC), 0, "11 12"},
    {4, 100, NULL, LO(VI(10), INC), HI(VI(10), INC), 0, "10"},
    {4, 100, NULL, LO(VI(10), EXC), HI(VI(11), EXC), 0, ""},
    {4, 100, NULL, LO(VI(10), INC), HI(VI(10), EXC), 0, ""},
    {4, 100, NULL, LO(VI(12), INC), HI(VI(10), INC), 0, ""},
    {4, 100, NULL, LO(VI(98), INC), HI(VI(101), INC), 0, "0 1 98 99"},     /* wraps */
    {4, 100, NULL, LO(VI(12345), INC), HI(VI(12347), INC), 0, "45 46 47"},
    {4, 100, NULL, LO(VI(0), INC), HI(VI(98), INC), 0,                     /* 99 values */
     "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 "
     "32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 "
     "61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 "
     "90 91 92 93 94 95 96 97 98"},
    {4, 100, NULL, LO(VI(0), INC), HI(VI(99), INC), 0, "all"},             /* 100 values */
    {4, 100, NULL, LO(VI(5), INC), HI(VI(103), INC), 0,                    /* 99, wrapping */
     "0 1 2 3 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 "
     "32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 "
     "61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 "
     "90 91 92 93 94 95 96 97 98 99"},
    {4, 100, NULL, LO(VI(5), INC), HI(VI(104), INC), 0, "all"},
    {4, 100, NULL, LO(VI(5), EXC), HI(VI(105), EXC), 0,                    /* 6..104: 99 */
     "0 1 2 3 4 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 "
     "32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 "
     "61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 "
     "90 91 92 93 94 95 96 97 98 99"},
    {4, 100, NULL, LO(VI(0), INC), HI(VU(UINT64_MAX), INC), 0, "all"},
    {4, 100, NULL, NOLO, NOHI, 0, "all"},
    {4, 100, NULL, LO(VI(5), INC), NOHI, 0, "all"},
    {4, 100, NULL, LO(VU(UINT64_MAX), INC), NOHI, 0, "all"},
    /* No value is negative, so an open or negative start is 0. */
    {4, 100, NULL, NOLO, HI(VI(3), INC), 0, "0 1 2 3"},
    {4, 100, NULL, NOLO, HI(VI(3), EXC), 0, "0 1 2"},
    {4, 100, NULL, LO(VI(-10), INC), HI(VI(2), INC), 0, "0 1 2"},
    {4, 100, NULL, LO(VI(-1), EXC), HI(VI(2), INC), 0, "0 1 2"},
    {4, 100, NULL, LO(VI(-10), INC), HI(VI(-1), INC), 0, ""},
    {4, 100, NULL, NOLO, HI(VI(0), EXC), 0, ""},
    {4, 100, NULL, NOLO, HI(VI(0), INC), 0, "0"},
    {4, 100, NULL, NOLO, HI(VS("-5"), INC), 0, ""},
    /* The top of the unsigned line. */
    {4, 100, NULL, LO(VU(UINT64_MAX), EXC), NOHI, 0, ""},
    {4, 100, NULL, LO(VU(UINT64_MAX), EXC), HI(VU(UINT64_MAX), INC), 0, ""},
    {4, 100, NULL, LO(VU(UINT64_MAX - 1), INC), HI(VU(UINT64_MAX), INC), 0, "14 15"},
    {4, 100, NULL, LO(VS("18446744073709551614"), INC), HI(VS("18446744073709551615"), INC),
     0, "14 15"},
    /* Mixed types. */
    {4, 100, NULL, LO(VS("10"), INC), HI(VI(12), INC), 0, "10 11 12"},
    {4, 100, NULL, LO(VU(10), INC), HI(VS("12"), EXC), 0, "10 11"},
    {1, 1, NULL, LO(VI(10), INC), HI(VI(1000), INC), 0, "0"},
    {5, 5, NULL, LO(VI(8), INC), HI(VI(11), INC), 0, "0 1 3 4"},
    /* Bad ends are errors even when the other end makes the range empty. */
    {4, 100, NULL, LO(VS("abc"), INC), HI(VI(12), INC), DAL_ESHARD, "'abc' is not a decimal"},
    {4, 100, NULL, LO(VI(10), INC), HI(VD(1.5), INC), DAL_ESHARD, "1.5 is a double"},
    {4, 100, NULL, LO(VU(UINT64_MAX), EXC), HI(VNULL, INC), DAL_ESHARD, "shard value is NULL"},
    {4, 100, NULL, NOLO, HI(VB("1"), INC), DAL_ESHARD, "is a blob"},
};

START_TEST(test_mod_span)
{
    run_span("mod", &mod_spans[_i], _i);
}
END_TEST

static const span_case_t range_spans[] = {
    {2, 4, B4, LO(VI(0), INC), HI(VI(99), INC), 0, "1"},
    {2, 4, B4, LO(VI(0), INC), HI(VI(100), INC), 0, "1 2"},
    {2, 4, B4, LO(VI(0), INC), HI(VI(100), EXC), 0, "1"},
    {2, 4, B4, LO(VI(-1), EXC), HI(VI(100), EXC), 0, "1"},
    {2, 4, B4, LO(VI(-1), INC), HI(VI(100), EXC), 0, "0 1"},
    {2, 4, B4, LO(VI(50), INC), HI(VI(50), INC), 0, "1"},
    {2, 4, B4, LO(VI(50), INC), HI(VI(50), EXC), 0, ""},
    {2, 4, B4, LO(VI(150), INC), HI(VI(50), INC), 0, ""},
    {2, 4, B4, NOLO, NOHI, 0, "0 1 2 3"},
    {2, 4, B4, NOLO, HI(VI(-50), INC), 0, "0"},
    {2, 4, B4, LO(VI(250), INC), NOHI, 0, "3"},
    {2, 4, B4, LO(VI(199), EXC), NOHI, 0, "3"},
    {2, 4, B4, LO(VI(198), EXC), NOHI, 0, "2 3"},
    {2, 4, B4, LO(VI(299), INC), NOHI, 0, "3"},
    {2, 4, B4, LO(VI(299), EXC), NOHI, 0, ""},
    {2, 4, B4, LO(VI(300), INC), NOHI, 0, ""},
    {2, 4, B4, LO(VI(1000), INC), HI(VI(2000), INC), 0, ""},
    {2, 4, B4, NOLO, HI(VI(-100), INC), 0, "0"},
    {2, 4, B4, NOLO, HI(VI(-100), EXC), 0, ""},
    {2, 4, B4, NOLO, HI(VI(-101), INC), 0, ""},
    {2, 4, B4, LO(VI(-1000), INC), HI(VI(1000), INC), 0, "0 1 2 3"},      /* clamped */
    {2, 4, B4, LO(VI(INT64_MIN), INC), HI(VU(UINT64_MAX), INC), 0, "0 1 2 3"},
    {2, 4, B4, LO(VS("-18446744073709551615"), INC), HI(VI(0), EXC), 0, "0"},
    {2, 4, B4, LO(VU(UINT64_MAX), INC), NOHI, 0, ""},
    {2, 4, B4, NOLO, HI(VI(INT64_MIN), EXC), 0, ""},
    {2, 4, B4, LO(VS("100"), INC), HI(VU(200), INC), 0, "2 3"},
    /* The extremes of the signed line, where +1 and -1 would overflow. */
    {1, 2, BX, NOLO, HI(VI(INT64_MIN), EXC), 0, ""},
    {1, 2, BX, NOLO, HI(VI(INT64_MIN), INC), 0, "0"},
    {1, 2, BX, LO(VI(INT64_MAX - 1), EXC), NOHI, 0, ""},
    {1, 2, BX, LO(VI(INT64_MAX - 1), INC), NOHI, 0, "1"},
    {1, 2, BX, LO(VI(INT64_MAX), INC), NOHI, 0, ""},
    {1, 2, BX, LO(VI(-1), INC), HI(VI(0), INC), 0, "0 1"},
    {1, 2, BX, NOLO, NOHI, 0, "0 1"},
    /* Bad ends. */
    {2, 4, B4, LO(VD(0.5), INC), HI(VI(1), INC), DAL_ESHARD, "0.5 is a double"},
    {2, 4, B4, LO(VI(1000), INC), HI(VS("1x"), INC), DAL_ESHARD, "'1x' is not a decimal"},
    {2, 4, B4, NOLO, HI(VS("99999999999999999999"), INC), DAL_ESHARD, "does not fit in 64 bits"},
};

START_TEST(test_range_span)
{
    run_span("range", &range_spans[_i], _i);
}
END_TEST

/*
 * Every small range against brute force: the positions of a range are the
 * sorted set of positions of its values.  Ends are tried from `from` to `to`
 * with every inclusivity; values the strategy holds are [vmin, vmax].
 */
static void span_brute_force(const char *name, uint32_t dbs, uint32_t tables,
                             const char *bounds, int64_t from, int64_t to,
                             int64_t vmin, int64_t vmax)
{
    dal_shard_pos_t out[64], pos;
    dal_error_t err = {0};
    int64_t lo, hi, v;
    int li, hi_inc;
    inst_t in;

    ck_assert_uint_le(tables, N_ELEMS(out));
    inst_must_open(&in, name, dbs, tables, bounds);
    for (lo = from; lo <= to; lo++)
        for (hi = from; hi <= to; hi++)
            for (li = 0; li < 4; li++) {
                dal_value_t lv = VI(lo), hv = VI(hi);
                int seen[64] = {0};
                size_t count, i, n = 0;

                hi_inc = li >> 1;
                if (in.ops->locate_range(in.self, &lv, li & 1, &hv, hi_inc, out, &count,
                                         &err) != 0)
                    ck_abort_msg("locate_range: %s", err.message);
                for (v = lo + !(li & 1); v <= hi - !hi_inc; v++) {
                    dal_value_t x = VI(v);

                    if (v < vmin || v > vmax)
                        continue;
                    pos = locate_ok(&in, dbs, tables, &x);
                    seen[pos.table] = 1;
                }
                for (i = 0; i < tables; i++) {
                    if (!seen[i])
                        continue;
                    if (n >= count || out[n].table != i)
                        ck_abort_msg("%s [%" PRId64 ", %" PRId64 "] incl %d/%d: table %zu "
                                     "missing", name, lo, hi, li & 1, hi_inc, i);
                    n++;
                }
                if (n != count)
                    ck_abort_msg("%s [%" PRId64 ", %" PRId64 "] incl %d/%d: %zu positions, "
                                 "expected %zu", name, lo, hi, li & 1, hi_inc, count, n);
            }
    inst_close(&in);
}

START_TEST(test_span_brute_force)
{
    span_brute_force("mod", 1, 7, NULL, -3, 40, 0, INT64_MAX);
    span_brute_force("mod", 2, 8, NULL, -3, 40, 0, INT64_MAX);
    span_brute_force("range", 1, 5, "-10, -3, 0, 4, 5, 20", -13, 23, -10, 19);
    span_brute_force("range", 3, 6, "-7, -6, -5, 0, 1, 2, 9", -10, 12, -7, 8);
}
END_TEST

/* ----------------------------------------------------------- creation */

typedef struct create_case {
    const char *plugin;
    uint32_t dbs, tables;
    const char *bounds;
    int rc;
    const char *msg;
} create_case_t;

static const create_case_t create_cases[] = {
    {"mod", 4, 10, NULL, DAL_EINVAL, "table_shard_num (10) must be a multiple of db_shard_num (4)"},
    {"mod", 0, 10, NULL, DAL_EINVAL, "must be at least 1"},
    {"mod", 1, 0, NULL, DAL_EINVAL, "must be at least 1"},
    {"hash", 3, 100, NULL, DAL_EINVAL, "must be a multiple"},
    {"hash", 1, 0, NULL, DAL_EINVAL, "must be at least 1"},
    {"range", 3, 4, B4, DAL_EINVAL, "must be a multiple"},
    {"range", 1, 0, "0", DAL_EINVAL, "must be at least 1"},
    {"range", 1, 3, "0, 100, 200", DAL_EPLUGIN,
     "strategy.bounds has 3 values; table_shard_num = 3 needs exactly 4"},
    {"range", 1, 3, "0, 100, 200, 300, 400", DAL_EPLUGIN, "has 5 values"},
    {"range", 1, 3, "", DAL_EPLUGIN, "strategy.bounds is not set"},
    {"range", 1, 3, "0, 100, 100, 200", DAL_EPLUGIN,
     "strictly increasing: bounds[2] = 100 is not greater than bounds[1] = 100"},
    {"range", 1, 3, "0, 100, 50, 200", DAL_EPLUGIN, "bounds[2] = 50 is not greater"},
    {"range", 1, 3, "300, 200, 100, 0", DAL_EPLUGIN, "bounds[1] = 200 is not greater"},
    {"range", 1, 3, "0, 1, 2, 2", DAL_EPLUGIN, "bounds[3] = 2"},
    /* Good ones, for contrast. */
    {"mod", 1, 1, NULL, 0, NULL},
    {"hash", 7, 7, NULL, 0, NULL},
    {"range", 1, 3, "-5, 0, 1, 2", 0, NULL},
};

START_TEST(test_create)
{
    const create_case_t *c = &create_cases[_i];
    dal_error_t err = {0};
    inst_t in;
    int rc = inst_open(&in, c->plugin, c->dbs, c->tables, c->bounds, &err);

    ck_assert_msg(rc == c->rc, "row %d: rc %d (%s), expected %d", _i, rc, err.message, c->rc);
    if (rc != 0) {
        ck_assert_ptr_null(in.self);
        ck_assert_msg(strstr(err.message, c->msg) != NULL,
                      "row %d: message \"%s\" lacks \"%s\"", _i, err.message, c->msg);
    } else {
        ck_assert_ptr_nonnull(strstr(fake_host_log_text(in.host), "debug: wm_food:"));
    }
    inst_close(&in);
}
END_TEST

/* dal checks required parameters itself, but a plugin must not trust it. */
START_TEST(test_range_bounds_unset)
{
    const dal_shard_table_t t = {"wm_food", "dbProductSku", 1, 3};
    const dal_shard_ops_t *ops = plugin("range")->ops;
    dal_plugin_params_t *params = fake_params_new(NULL, NULL, 0, NULL);
    dal_host_t *host = fake_host_new();
    dal_error_t err = {0};
    void *self = NULL;

    ck_assert_int_eq(ops->create(fake_host_api(), host, &t, params, &self, &err), DAL_EPLUGIN);
    ck_assert_ptr_null(self);
    ck_assert_ptr_nonnull(strstr(err.message, "strategy.bounds is not set; range needs "
                                              "table_shard_num + 1 = 4 integers"));
    fake_params_free(params);
    fake_host_free(host);
}
END_TEST

/* ---------------------------------------------------------------- hash */

/*
 * The hash, written again from its definition in docs/plugins.md, so the
 * vectors below check the documented function and not only the plugin.
 */
static uint64_t ref_fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 14695981039346656037u; /* FNV-1a 64 offset basis */
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u; /* FNV 64 prime, 2^40 + 2^8 + 0xb3 */
    return h;
}

static uint64_t ref_hash(const dal_value_t *v)
{
    char text[32];
    int n;
    uint64_t h;

    switch (v->type) {
    case DAL_TYPE_INT:
        n = snprintf(text, sizeof text, "%" PRId64, v->v.i);
        h = ref_fnv1a(text, (size_t)n);
        break;
    case DAL_TYPE_UINT:
        n = snprintf(text, sizeof text, "%" PRIu64, v->v.u);
        h = ref_fnv1a(text, (size_t)n);
        break;
    default:
        h = ref_fnv1a(v->v.s.ptr, v->v.s.len);
        break;
    }
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdu;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 33);
}

/* Published FNV-1a 64 values, so the first stage is the standard one. */
START_TEST(test_hash_fnv_reference)
{
    ck_assert_uint_eq(ref_fnv1a("", 0), 0xcbf29ce484222325u);
    ck_assert_uint_eq(ref_fnv1a("a", 1), 0xaf63dc4c8601ec8cu);
    ck_assert_uint_eq(ref_fnv1a("foobar", 6), 0x85944171f73967e8u);
}
END_TEST

typedef struct hash_vector {
    dal_value_t v;
    uint64_t hash;     /* dal_hash64 of the canonical bytes */
    uint32_t table100; /* hash % 100: the table among 100 */
} hash_vector_t;

/* Fixed forever: these decide where existing rows are. */
static const hash_vector_t hash_vectors[] = {
    {VS(""), 0xefd01f60ba992926u, 42},
    {{.type = DAL_TYPE_STRING, .v.s = {NULL, 0}}, 0xefd01f60ba992926u, 42}, /* dal_strn(NULL, 0) */
    {VS("0"), 0xc1e42af088ff1b2cu, 60},
    {VI(0), 0xc1e42af088ff1b2cu, 60},
    {VU(0), 0xc1e42af088ff1b2cu, 60},
    {VI(1), 0x7c3832dde020d3d6u, 82},
    {VS("42"), 0x810b196a56ee3cecu, 76},
    {VI(42), 0x810b196a56ee3cecu, 76},
    {VU(42), 0x810b196a56ee3cecu, 76},
    {VB("42"), 0x810b196a56ee3cecu, 76},
    {VS("042"), 0xc7dbd5803a021760u, 88},
    {VI(-1), 0x36909e17f7acfa5bu, 59},
    {VS("-7"), 0xcb5b5d460b437af0u, 52},
    {VI(-7), 0xcb5b5d460b437af0u, 52},
    {VI(12345), 0x2a80c0ef561103f3u, 15},
    {VI(INT64_MAX), 0xf5b966379133500cu, 60},
    {VI(INT64_MIN), 0x677f31897ff3dc32u, 46},
    {VS("-9223372036854775808"), 0x677f31897ff3dc32u, 46},
    {VU(UINT64_MAX), 0xa415ffaf93606d58u, 60},
    {VS("a"), 0x82a2a958a9bece5bu, 15},
    {VS("acme:1234"), 0x748b97ff5aecad8au, 78},
    {VS("h\xc3\xa9llo"), 0xc185412747a0264du, 81}, /* "héllo" in UTF-8 */
    {VB("\x00\x01\x02\xff"), 0xb636ac73d8989741u, 37},
};

START_TEST(test_hash_vector)
{
    static const uint32_t geo[][2] = {{1, 100}, {4, 100}, {1, PRIME32}, {1, 1u << 31}, {1, 1}};
    const hash_vector_t *hv = &hash_vectors[_i];
    dal_shard_pos_t pos;
    inst_t in;
    size_t g;

    ck_assert_msg(ref_hash(&hv->v) == hv->hash, "row %d: reference hash %016" PRIx64
                  ", vector %016" PRIx64, _i, ref_hash(&hv->v), hv->hash);
    ck_assert_uint_eq(hv->hash % 100, hv->table100);
    for (g = 0; g < N_ELEMS(geo); g++) {
        inst_must_open(&in, "hash", geo[g][0], geo[g][1], NULL);
        pos = locate_ok(&in, geo[g][0], geo[g][1], &hv->v);
        ck_assert_msg(pos.table == hv->hash % geo[g][1], "row %d, %u tables: table %u, "
                      "expected %" PRIu64, _i, geo[g][1], pos.table, hv->hash % geo[g][1]);
        inst_close(&in);
    }
}
END_TEST

/* An integer and its decimal text are the same key; other spellings are not. */
START_TEST(test_hash_int_string)
{
    static const int64_t ints[] = {0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, -1, -7, -10,
                                   12345, 1000000007, 99999999, 100000000, 100000001,
                                   -100000000, 1234567890123, 9999999999999999,
                                   10000000000000000, 100000000000000001, 1000000000000000000,
                                   INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1};
    char text[32];
    dal_shard_pos_t a, b;
    inst_t in;
    size_t i;
    int n;

    inst_must_open(&in, "hash", 1, PRIME32, NULL);
    for (i = 0; i < N_ELEMS(ints); i++) {
        dal_value_t iv = VI(ints[i]), uv = VU((uint64_t)ints[i]), sv;

        n = snprintf(text, sizeof text, "%" PRId64, ints[i]);
        sv = (dal_value_t){.type = DAL_TYPE_STRING, .v.s = {text, (size_t)n}};
        a = locate_ok(&in, 1, PRIME32, &iv);
        b = locate_ok(&in, 1, PRIME32, &sv);
        ck_assert_msg(a.table == b.table, "%s: int %u, string %u", text, a.table, b.table);
        if (ints[i] >= 0) {
            b = locate_ok(&in, 1, PRIME32, &uv);
            ck_assert_uint_eq(a.table, b.table);
        }
    }
    {
        dal_value_t i42 = VI(42), s042 = VS("042"), sp42 = VS("+42"), s42sp = VS("42 ");

        a = locate_ok(&in, 1, PRIME32, &i42);
        ck_assert_uint_ne(a.table, locate_ok(&in, 1, PRIME32, &s042).table);
        ck_assert_uint_ne(a.table, locate_ok(&in, 1, PRIME32, &sp42).table);
        ck_assert_uint_ne(a.table, locate_ok(&in, 1, PRIME32, &s42sp).table);
    }
    inst_close(&in);
}
END_TEST

/* 100k sequential keys over 100 tables: every table within 15% of 1000.
 * Fixed input, so this is deterministic, not a flaky statistic. */
START_TEST(test_hash_distribution)
{
    enum { KEYS = 100000, TABLES = 100, DBS = 4 };
    unsigned count[TABLES] = {0}, node[DBS] = {0};
    char text[16];
    dal_shard_pos_t a, b;
    inst_t in;
    int i, n;

    inst_must_open(&in, "hash", DBS, TABLES, NULL);
    for (i = 0; i < KEYS; i++) {
        dal_value_t iv = VI(i), sv;

        n = snprintf(text, sizeof text, "%d", i);
        sv = (dal_value_t){.type = DAL_TYPE_STRING, .v.s = {text, (size_t)n}};
        a = locate_ok(&in, DBS, TABLES, &iv);
        b = locate_ok(&in, DBS, TABLES, &sv);
        if (a.table != b.table)
            ck_abort_msg("%d: int in table %u, string in %u", i, a.table, b.table);
        count[a.table]++;
        node[a.db]++;
    }
    for (i = 0; i < TABLES; i++)
        ck_assert_msg(count[i] >= 850 && count[i] <= 1150, "table %d got %u keys", i, count[i]);
    for (i = 0; i < DBS; i++)
        ck_assert_msg(node[i] >= 23750 && node[i] <= 26250, "node %d got %u keys", i, node[i]);
    inst_close(&in);
}
END_TEST

static const locate_case_t hash_bad_cases[] = {
    {4, 100, NULL, VNULL, DAL_ESHARD, 0, 0, "shard value is NULL; hash accepts integers, strings "
                                            "and blobs"},
    {4, 100, NULL, VD(1.5), DAL_ESHARD, 0, 0, "shard value 1.5 is a double"},
    {4, 100, NULL, VD(42.0), DAL_ESHARD, 0, 0, "shard value 42 is a double"},
};

START_TEST(test_hash_bad)
{
    run_locate("hash", &hash_bad_cases[_i], _i);
}
END_TEST

/* ---------------------------------------------------------- descriptors */

START_TEST(test_descriptor)
{
    const char *name = plugin_names[_i];
    fake_plugin_t *fp = plugin_slot(name);
    const dal_plugin_t *d = fp->desc;
    const dal_shard_ops_t *ops = d->ops;
    static const char *const internals[] = {"shard_parse_dec", "shard_describe", "mod_locate",
                                            "range_locate", "hash_locate", "hash_mix",
                                            "mod_plugin", "range_plugin", "hash_plugin"};
    size_t i;

    ck_assert_uint_eq(d->abi_version, DAL_PLUGIN_ABI_VERSION);
    ck_assert_uint_eq(d->struct_size, sizeof(dal_plugin_t));
    ck_assert_int_eq(d->kind, DAL_PLUGIN_SHARD);
    ck_assert_str_eq(d->name, name);
    ck_assert_str_eq(d->version, DAL_VERSION_STRING);
    ck_assert(d->description && d->description[0]);
    ck_assert_uint_eq(ops->struct_size, sizeof(dal_shard_ops_t));
    ck_assert(ops->create && ops->destroy && ops->locate);
    if (strcmp(name, "range") == 0) {
        ck_assert_str_eq(d->params[0].name, "bounds");
        ck_assert_int_eq(d->params[0].type, DAL_PARAM_INT_LIST);
        ck_assert_int_ne(d->params[0].required, 0);
        ck_assert(d->params[0].help && d->params[0].help[0]);
        ck_assert_ptr_null(d->params[1].name);
    } else {
        ck_assert_ptr_null(d->params);
    }
    if (strcmp(name, "hash") == 0)
        ck_assert(ops->locate_range == NULL);
    else
        ck_assert(ops->locate_range != NULL);
    /* The entry point is the only export. */
    for (i = 0; i < N_ELEMS(internals); i++)
        ck_assert_msg(dlsym(fp->handle, internals[i]) == NULL, "%s exports %s", name,
                      internals[i]);
}
END_TEST

/* ------------------------------------------------------------ fake host */

static void expect_open_error(const char *path, dal_plugin_kind_t kind, const char *name,
                              const char *msg)
{
    fake_plugin_t p;
    dal_error_t err = {0};

    ck_assert_int_eq(fake_plugin_open(path, kind, name, &p, &err), DAL_EPLUGIN);
    ck_assert_ptr_null(p.handle);
    ck_assert_msg(strstr(err.message, path) && strstr(err.message, msg),
                  "message \"%s\" lacks the path or \"%s\"", err.message, msg);
}

START_TEST(test_loader_errors)
{
    char path[4096], junk[] = "/tmp/test_shard_XXXXXX";
    int fd;

    ck_assert(fake_plugin_path(path, sizeof path, plugin_dir(), DAL_PLUGIN_SHARD, "mod") == 0);
    expect_open_error(path, DAL_PLUGIN_SHARD, "range", "calls itself 'mod', expected 'range'");
    expect_open_error(path, DAL_PLUGIN_IDGEN, "mod", "kind is shard (1), expected idgen");
    ck_assert(fake_plugin_path(path, sizeof path, plugin_dir(), DAL_PLUGIN_SHARD, "nosuch") == 0);
    expect_open_error(path, DAL_PLUGIN_SHARD, "nosuch", "cannot load");
    /* A file that is not a shared object. */
    fd = mkstemp(junk);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "not an ELF file\n", 16), 16);
    close(fd);
    expect_open_error(junk, DAL_PLUGIN_SHARD, "junk", "cannot load");
    unlink(junk);
    /* A shared object without the entry point: libc itself. */
    expect_open_error("libc.so.6", DAL_PLUGIN_SHARD, "libc", "not a dal plugin (no "
                      "dal_plugin_entry)");
}
END_TEST

START_TEST(test_fake_params)
{
    static const dal_param_spec_t spec[] = {
        {"bounds", DAL_PARAM_INT_LIST, 1, NULL, "h"},
        {"names", DAL_PARAM_STRING_LIST, 0, NULL, "h"},
        {"timeout", DAL_PARAM_DURATION, 0, "250ms", "h"},
        {"flag", DAL_PARAM_BOOL, 0, "yes", "h"},
        {"label", DAL_PARAM_STRING, 0, NULL, "h"},
        {NULL, 0, 0, NULL, NULL}};
    const fake_param_t good[] = {{"bounds", 0, " -5, 0 ,9223372036854775807"},
                                 {"names", DAL_PARAM_STRING_LIST, " acme , globex "}};
    const fake_param_t undeclared[] = {{"bounds", 0, "1"}, {"bogus", 0, "1"}};
    const fake_param_t mistyped[] = {{"bounds", DAL_PARAM_INT, "1"}};
    const fake_param_t bad_list[] = {{"bounds", 0, "1,,2"}};
    const fake_param_t bad_int[] = {{"bounds", 0, "1, 2x"}};
    const dal_host_api_t *api = fake_host_api();
    const int64_t *ints;
    const char *const *strs;
    dal_plugin_params_t *p;
    dal_error_t err = {0};

    p = fake_params_new(spec, good, 2, &err);
    ck_assert_msg(p != NULL, "%s", err.message);
    ck_assert_uint_eq(api->param_int_list(p, "bounds", &ints), 3);
    ck_assert(ints[0] == -5 && ints[1] == 0 && ints[2] == INT64_MAX);
    ck_assert_uint_eq(api->param_string_list(p, "names", &strs), 2);
    ck_assert_str_eq(strs[0], "acme");
    ck_assert_str_eq(strs[1], "globex");
    ck_assert_int_eq(api->param_duration_ms(p, "timeout"), 250);
    ck_assert_int_eq(api->param_bool(p, "flag"), 1);
    ck_assert_int_eq(api->param_is_set(p, "label"), 0);
    ck_assert_ptr_null(api->param_string(p, "label"));
    ck_assert_uint_eq(fake_params_misses(p), 0);
    ck_assert_int_eq(api->param_int(p, "bounds"), 0); /* read in the wrong type */
    ck_assert_uint_eq(fake_params_misses(p), 1);
    fake_params_free(p);

    ck_assert_ptr_null(fake_params_new(spec, undeclared, 2, &err));
    ck_assert_str_eq(err.message, "undeclared parameter 'bogus'");
    ck_assert_ptr_null(fake_params_new(spec, mistyped, 1, &err));
    ck_assert_str_eq(err.message,
                     "parameter 'bounds' is declared as integer list, given as integer");
    ck_assert_ptr_null(fake_params_new(spec, NULL, 0, &err));
    ck_assert_str_eq(err.message, "required parameter 'bounds' is missing");
    ck_assert_ptr_null(fake_params_new(spec, bad_list, 1, &err));
    ck_assert_ptr_nonnull(strstr(err.message, "is not a valid integer list"));
    ck_assert_ptr_null(fake_params_new(spec, bad_int, 1, &err));
    ck_assert_int_eq(err.code, DAL_ECONFIG);
}
END_TEST

START_TEST(test_fake_services)
{
    const dal_host_api_t *api = fake_host_api();
    dal_host_t *h = fake_host_new();
    dal_result_t *r = (dal_result_t *)1;
    dal_conn_t *c = (dal_conn_t *)1;
    dal_error_t err = {0};
    uint64_t t0 = api->now_ns();

    ck_assert_uint_eq(api->abi_version, DAL_PLUGIN_ABI_VERSION);
    ck_assert_uint_eq(api->struct_size, sizeof(dal_host_api_t));
    ck_assert_int_eq(api->set_error(NULL, DAL_ESHARD, "x"), DAL_ESHARD);
    ck_assert_int_eq(api->set_error(&err, DAL_EINVAL, "n=%d", 7), DAL_EINVAL);
    ck_assert_int_eq(err.code, DAL_EINVAL);
    ck_assert_str_eq(err.message, "n=7");
    api->log(h, DAL_LOG_WARN, "careful %s", "now");
    api->log(h, DAL_LOG_INFO, "done");
    ck_assert_str_eq(fake_host_log_text(h), "warn: careful now\ninfo: done\n");
    ck_assert_int_eq(api->query(h, "ds0", "SELECT 1", NULL, 0, &r, &err), DAL_EUNSUPPORTED);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(api->conn_open(h, &c, &err), DAL_EUNSUPPORTED);
    ck_assert_ptr_null(c);
    ck_assert_uint_ge(api->now_ns(), t0);
    fake_host_free(h);
}
END_TEST

/* ---------------------------------------------------------------- main */

static Suite *shard_suite(void)
{
    Suite *s = suite_create("shard");
    TCase *tc;

#define LOOP(fn, rows) tcase_add_loop_test(tc, fn, 0, (int)N_ELEMS(rows))
    tc = tcase_create("mod");
    LOOP(test_mod_locate, mod_cases);
    LOOP(test_mod_span, mod_spans);
    tcase_add_test(tc, test_mod_formula);
    suite_add_tcase(s, tc);

    tc = tcase_create("range");
    LOOP(test_range_locate, range_cases);
    LOOP(test_range_span, range_spans);
    tcase_add_test(tc, test_range_bounds_unset);
    suite_add_tcase(s, tc);

    tc = tcase_create("hash");
    tcase_add_test(tc, test_hash_fnv_reference);
    LOOP(test_hash_vector, hash_vectors);
    LOOP(test_hash_bad, hash_bad_cases);
    tcase_add_test(tc, test_hash_int_string);
    tcase_add_test(tc, test_hash_distribution);
    suite_add_tcase(s, tc);

    tc = tcase_create("common");
    LOOP(test_create, create_cases);
    LOOP(test_descriptor, plugin_names);
    tcase_add_test(tc, test_span_brute_force);
    suite_add_tcase(s, tc);

    tc = tcase_create("fake_host");
    tcase_add_test(tc, test_loader_errors);
    tcase_add_test(tc, test_fake_params);
    tcase_add_test(tc, test_fake_services);
    suite_add_tcase(s, tc);
#undef LOOP
    return s;
}

/* The plugins must be there: a missing build is a failure, never a skip. */
static int check_plugin_dir(void)
{
    const char *dir = getenv("DAL_PLUGIN_DIR");
    char path[4096];
    struct stat st;
    size_t i;

    if (dir == NULL || *dir == '\0') {
        fprintf(stderr, "test_shard: DAL_PLUGIN_DIR is not set; set it to the directory "
                        "holding shard_mod.so, shard_range.so and shard_hash.so "
                        "(the build's plugins/.libs)\n");
        return -1;
    }
    for (i = 0; i < N_ELEMS(plugin_names); i++) {
        if (fake_plugin_path(path, sizeof path, dir, DAL_PLUGIN_SHARD, plugin_names[i]) != 0 ||
            stat(path, &st) != 0) {
            fprintf(stderr, "test_shard: %s not found (DAL_PLUGIN_DIR=%s); build the "
                            "plugins first\n", path, dir);
            return -1;
        }
    }
    return 0;
}

int main(void)
{
    int status;

    if (check_plugin_dir() != 0)
        return 99; /* automake's "hard error": reported as ERROR, not SKIP */
    status = tu_run(shard_suite(), CK_FORK_GETENV);
    plugins_unload();
    return status;
}
