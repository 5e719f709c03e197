/*
 * test_scatter.c -- the merge of several data nodes' rows, checked against
 * MariaDB's own answer.
 *
 * tests/suites/integration.sh starts four mariadbd (product_0 .. product_3, plus
 * `plain` on server 0) and exports their ports in DAL_TEST_PORTS.  The same
 * seeded random rows go into one ordinary table `mtab` in `plain` and into
 * the logical table `mtab` sharded over the four servers (8 physical
 * tables, mod on k), created and filled through dal.  Then several hundred
 * generated queries -- filters, IN lists, ranges, ORDER BY with several
 * keys and directions, LIMIT/OFFSET, aggregates with and without GROUP BY,
 * DISTINCT -- run both ways and must give the same rows: in the same order
 * where ORDER BY makes it total, the same ORDER BY key sequence where all
 * keys are selected, else the same multiset.  Every mismatch prints the
 * seed and the query; DAL_TEST_SEED=n replays a run.
 *
 * A second test measures the memory of ORDER BY ... LIMIT 100000, 10 over
 * the eight physical tables: the merge streams, so the peak RSS must not
 * grow by more than 16 MB over LIMIT 0, 10.
 */
#include <check.h>
#include <mysql.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <dal/dal.h>

#include "difftest.h"
#include "testutil.h"

#define NODES 4
#define ROWS 2000
#define QUERIES 600
#define BIG_ROWS 200000
#define DEFAULT_SEED 20241129u
#define MAX_PARAMS 16
#define MAX_REPORTS 12

static int ports[NODES];
static char *dir, *ini;
static unsigned long long seed = DEFAULT_SEED;

/* ========================================================= servers */

static char *make_ini(void)
{
    char text[4096];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "dbS", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[table mtab]\n"
             "datasource = dbS\n"
             "db_shard_num = 4\n"
             "table_shard_num = 8\n"
             "shard_key = k\n"
             "strategy = mod\n"
             "binding = mgrp\n"
             "[table mtab2]\n"
             "datasource = dbS\n"
             "db_shard_num = 4\n"
             "table_shard_num = 8\n"
             "shard_key = k\n"
             "strategy = mod\n"
             "binding = mgrp\n"
             "[table mbig]\n"
             "datasource = dbS\n"
             "db_shard_num = 4\n"
             "table_shard_num = 8\n"
             "shard_key = k\n"
             "strategy = mod\n");
    return tu_write(dir, "scatter.ini", text);
}

/* ============================================================== data */

#define MTAB_DDL                                                                   \
    "CREATE TABLE mtab (id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, a INT NULL, " \
    "b BIGINT NOT NULL, u INT UNSIGNED NULL, d DECIMAL(10,2) NULL, f DOUBLE NULL, "    \
    "s VARCHAR(20) NULL, KEY (k))"

/* ASCII words, no two equal ignoring case (a _ci GROUP BY would show either
 * spelling), with '_' and digits to exercise the collation's order. */
static const char *const words[] = {
    "apple", "Banana", "cherry", "Date", "elder_berry", "Fig", "grape", "kiwi2", "Lemon",
    "mango", "a_b", "aXb", "zeta", "Omega", "x1", "Y_2",
};
#define NWORDS (sizeof words / sizeof words[0])

/* One random row as the text of an INSERT's VALUES tuple; *k its shard key. */
static void random_row(long id, char *out, size_t cap, int *k)
{
    char a[16] = "NULL", u[16] = "NULL", d[32] = "NULL", f[32] = "NULL", s[32] = "NULL";
    long cents;

    *k = dt_rnd(1000);
    if (!dt_chance(10))
        snprintf(a, sizeof a, "%d", dt_rnd(21) - 5);
    if (!dt_chance(10))
        snprintf(u, sizeof u, "%d", dt_rnd(100000));
    if (!dt_chance(7)) {
        cents = dt_rnd(2000001) - 1000000;
        snprintf(d, sizeof d, "%s%ld.%02ld", cents < 0 ? "-" : "", labs(cents) / 100,
                 labs(cents) % 100);
    }
    /* quarters: every sum and average of them is exact in a double, so the
     * order the nodes add them in cannot change the last digit */
    if (!dt_chance(10))
        snprintf(f, sizeof f, "%.2f", (dt_rnd(80001) - 40000) / 4.0);
    if (!dt_chance(10))
        snprintf(s, sizeof s, "'%s'", words[dt_rnd(NWORDS)]);
    snprintf(out, cap, "(%ld, %d, %s, %d, %s, %s, %s, %s)", id, *k, a, dt_rnd(2000001) - 1000000,
             u, d, f, s);
}

#define MTAB_INSERT "INSERT INTO mtab (id, k, a, b, u, d, f, s) VALUES "

/* The same rows into plain.mtab (batched) and through dal into the shards
 * (one statement each, the shard value passed as an option). */
static void load_mtab(void)
{
    MYSQL *plain = dt_direct(ports[0], "plain");
    dal_t *dal = tu_open(ini);
    char row[256], sql[512];
    size_t len = 0, cap = 1 << 16;
    char *batch = malloc(cap);
    dal_value_t sv;
    dal_query_opts_t o;
    long id;
    int k;

    dt_direct_exec(plain, "DROP TABLE IF EXISTS mtab");
    dt_direct_exec(plain, MTAB_DDL);
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS mtab");
    tu_setup_exec(dal, NULL, MTAB_DDL);
    memset(&o, 0, sizeof o);
    o.shard_value = &sv;
    dt_seed(seed * 2654435761u + 1);
    for (id = 1; id <= ROWS; id++) {
        random_row(id, row, sizeof row, &k);
        sv = dal_int(k);
        snprintf(sql, sizeof sql, MTAB_INSERT "%s", row);
        tu_setup_exec(dal, &o, sql);
        if (len == 0)
            len = (size_t)snprintf(batch, cap, MTAB_INSERT "%s", row);
        else
            len += (size_t)snprintf(batch + len, cap - len, ", %s", row);
        if (len > cap - 512 || id == ROWS) {
            dt_direct_exec(plain, batch);
            len = 0;
        }
    }
    free(batch);
    dal_close(dal);
    mysql_close(plain);
}

/* mtab2: binding group of mtab (a join on id meets on one shard): two of
 * every three rows of mtab, with the same id and k, another `a` and a
 * column of its own; copied from mtab on each server (mod: k % 8 is the
 * table, table / 2 the server). */
#define MTAB2_DDL                                                                    \
    "CREATE TABLE mtab2 (id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, a INT NULL, " \
    "note VARCHAR(20) NULL, KEY (k))"
#define MTAB2_FILL                                                                   \
    "INSERT INTO mtab2%s SELECT id, k, (a * 7) %% 11, IF(b %% 5 = 0, NULL, "              \
    "CONCAT('n', b %% 37)) FROM mtab%s WHERE id %% 3 <> 0"

/* Create table on the plain server (and fill it with plain_fill) and
 * through dal, then run fill(sql, p) -- the INSERT for physical table p --
 * on each of the 8 physical tables (mod: table / 2 is the server). */
static void load_physical(const char *table, const char *ddl, const char *plain_fill,
                          void (*fill)(char *sql, size_t cap, int p))
{
    dal_t *dal = tu_open(ini);
    MYSQL *m = dt_direct(ports[0], "plain");
    char sql[512], drop[64], db[16];
    int p;

    snprintf(drop, sizeof drop, "DROP TABLE IF EXISTS %s", table);
    dt_direct_exec(m, drop);
    dt_direct_exec(m, ddl);
    dt_direct_exec(m, plain_fill);
    mysql_close(m);
    tu_setup_exec(dal, NULL, drop);
    tu_setup_exec(dal, NULL, ddl);
    dal_close(dal);
    for (p = 0; p < 8; p++) {
        snprintf(db, sizeof db, "product_%d", p / 2);
        m = dt_direct(ports[p / 2], db);
        fill(sql, sizeof sql, p);
        dt_direct_exec(m, sql);
        mysql_close(m);
    }
}

static void mtab2_fill(char *sql, size_t cap, int p)
{
    char sfx[8];

    snprintf(sfx, sizeof sfx, "_%d", p);
    snprintf(sql, cap, MTAB2_FILL, sfx, sfx);
}

static void load_mtab2(void)
{
    char plain[512];

    snprintf(plain, sizeof plain, MTAB2_FILL, "", "");
    load_physical("mtab2", MTAB2_DDL, plain, mtab2_fill);
}

/* mbig: BIG_ROWS rows, written straight into the physical tables with the
 * sequence engine (mod: k % 8 is the table, table / 2 the server). */
static void mbig_fill(char *sql, size_t cap, int p)
{
    snprintf(sql, cap, "INSERT INTO mbig_%d SELECT seq, seq, (seq * 7919) %% 100003, "
             "REPEAT('x', 64) FROM seq_1_to_%d WHERE seq %% 8 = %d", p, BIG_ROWS, p);
}

static void load_mbig(void)
{
    char plain[512];

    snprintf(plain, sizeof plain, "INSERT INTO mbig SELECT seq, seq, (seq * 7919) %% 100003, "
             "REPEAT('x', 64) FROM seq_1_to_%d", BIG_ROWS);
    load_physical("mbig", "CREATE TABLE mbig (id BIGINT NOT NULL PRIMARY KEY, k BIGINT NOT "
                  "NULL, v INT NOT NULL, pad CHAR(64) NOT NULL)", plain, mbig_fill);
}

/* ============================================================== rows */


/* ========================================================= generator */

/* One generated query: the text for dal (maybe with ?) and its parameters,
 * the text for the plain server (values inline), and how to compare. */
typedef struct query {
    dt_sb_t dal, plain;
    dal_value_t params[MAX_PARAMS];
    size_t np;
    int use_params;
    int total;               /* ORDER BY makes the order total */
    int proj[4];             /* else the result columns of the ORDER BY keys ... */
    int nproj;               /* ... or -1 if some key is not a select item */
} query_t;

static void q_put(query_t *q, const char *fmt, ...) DAL_PRINTF(2, 3);
static void q_put(query_t *q, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    dt_sb_vput(&q->dal, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    dt_sb_vput(&q->plain, fmt, ap);
    va_end(ap);
}

static void q_reset(query_t *q)
{
    q_put(q, "%s", "");
    q->dal.len = q->plain.len = 0;
    q->dal.p[0] = q->plain.p[0] = '\0';
    q->np = 0;
    q->use_params = dt_chance(2);
    q->total = 0;
    q->nproj = 0;
}

/* A value: a ? with a parameter for dal, the literal for the plain server. */
static void q_int(query_t *q, long v)
{
    if (q->use_params && q->np < MAX_PARAMS) {
        q->params[q->np++] = dal_int(v);
        dt_sb_put(&q->dal, "?");
        dt_sb_put(&q->plain, "%ld", v);
        return;
    }
    q_put(q, "%ld", v);
}

static void q_word(query_t *q, const char *w)
{
    if (q->use_params && q->np < MAX_PARAMS) {
        q->params[q->np++] = dal_str(w);
        dt_sb_put(&q->dal, "?");
        dt_sb_put(&q->plain, "'%s'", w);
        return;
    }
    q_put(q, "'%s'", w);
}

static const char *const cols[] = {"id", "k", "a", "b", "u", "d", "f", "s"};
static const char *const nums[] = {"a", "b", "u", "d", "f", "k"};
static const char *const group_exprs[] = {"a", "s", "k", "b % 4", "u % 3", "d > 0"};
static const char *const distinct_exprs[] = {"a", "s", "b % 4", "f > 0", "u % 5"};
#define NCOLS (int)(sizeof cols / sizeof cols[0])
#define PICK(a) (a)[dt_rnd((int)(sizeof(a) / sizeof((a)[0])))]

static void gen_filter(query_t *q)
{
    int i, n;

    switch (dt_rnd(10)) {
    case 0: case 1: case 2:
        return;
    case 3:
        q_put(q, " WHERE k IN (");
        for (i = 0, n = 1 + dt_rnd(6); i < n; i++) {
            q_put(q, "%s", i ? ", " : "");
            q_int(q, dt_rnd(1000));
        }
        q_put(q, ")");
        return;
    case 4:
        n = dt_rnd(1000);
        q_put(q, " WHERE k BETWEEN ");
        q_int(q, n);
        q_put(q, " AND ");
        q_int(q, n + dt_rnd(300));
        return;
    case 5:
        q_put(q, " WHERE a > ");
        q_int(q, dt_rnd(15) - 5);
        return;
    case 6:
        q_put(q, " WHERE s IS NULL OR a IS NULL");
        return;
    case 7:
        q_put(q, " WHERE b < ");
        q_int(q, dt_rnd(2000001) - 1000000);
        q_put(q, " AND u IS NOT NULL");
        return;
    case 8:
        q_put(q, " WHERE k = ");
        q_int(q, dt_rnd(1000));
        return;
    default:
        q_put(q, " WHERE s IN (");
        q_word(q, words[dt_rnd(NWORDS)]);
        q_put(q, ", ");
        q_word(q, words[dt_rnd(NWORDS)]);
        q_put(q, ")");
    }
}

static void gen_limit(query_t *q)
{
    long off = dt_chance(3) ? 0 : dt_rnd(60), n = dt_rnd(25);

    switch (dt_rnd(3)) {
    case 0:
        q_put(q, " LIMIT ");
        q_int(q, n);
        return;
    case 1:
        q_put(q, " LIMIT ");
        q_int(q, off);
        q_put(q, ", ");
        q_int(q, n);
        return;
    default:
        q_put(q, " LIMIT ");
        q_int(q, n);
        q_put(q, " OFFSET ");
        q_int(q, off);
    }
}

static const char *direction(void)
{
    return dt_chance(2) ? " DESC" : dt_chance(2) ? " ASC" : "";
}

/* Distinct random picks from [0, n). */
static int pick_distinct(int *out, int want, int n)
{
    int got = 0, x, i;

    while (got < want) {
        x = dt_rnd(n);
        for (i = 0; i < got && out[i] != x; i++)
            ;
        if (i == got)
            out[got++] = x;
    }
    return got;
}

static int index_of(const int *v, int n, int x)
{
    int i;

    for (i = 0; i < n; i++)
        if (v[i] == x)
            return i;
    return -1;
}

/* One ORDER BY key on column c of the select list sel (at its index, or
 * -1): by name (maybe qualified), position or alias; or, sometimes, an
 * expression instead.  Returns the result column, or -1 if not selected. */
static int gen_row_key(query_t *q, int c, int at, int aliased)
{
    static const char *const exprs[] = {"b % 7", "LOWER(s)", "a + u", "-f", "COALESCE(a, 100)",
                                        "d * 2", "mtab.b DIV 1000"};

    if (dt_chance(5)) {
        q_put(q, "%s", PICK(exprs));
        return -1;
    }
    if (at >= 0 && aliased && dt_chance(2))
        q_put(q, "c_%s", cols[c]);
    else if (at >= 0 && dt_chance(4))
        q_put(q, "%d", at + 1);
    else
        q_put(q, "%s%s", dt_chance(5) ? "mtab." : "", cols[c]);
    return at;
}

/* SELECT columns [WHERE] [ORDER BY keys] [LIMIT] */
static void gen_rows(query_t *q)
{
    int sel[NCOLS], keys[4], nsel, nkeys = dt_rnd(4), i, at;
    int star = dt_chance(8), limit = dt_chance(3), aliased = !star && dt_chance(4);

    nsel = star ? NCOLS : pick_distinct(sel, 1 + dt_rnd(4), NCOLS);
    for (i = 0; star && i < NCOLS; i++)
        sel[i] = i;
    q_put(q, "SELECT ");
    for (i = 0; i < nsel && !star; i++) {
        q_put(q, "%s%s", i ? ", " : "", cols[sel[i]]);
        if (aliased)
            q_put(q, " AS c_%s", cols[sel[i]]);
    }
    q_put(q, "%s FROM mtab", star ? "*" : "");
    gen_filter(q);
    pick_distinct(keys, nkeys, NCOLS);
    q->total = index_of(keys, nkeys, 0) >= 0;
    if (!q->total && (limit || dt_chance(2))) {
        keys[nkeys++] = 0; /* id is unique */
        q->total = 1;
    }
    for (i = 0; i < nkeys; i++) {
        q_put(q, "%s", i ? ", " : " ORDER BY ");
        at = keys[i] == 0 ? index_of(sel, nsel, 0) /* keep id itself: it makes the order total */
                          : gen_row_key(q, keys[i], index_of(sel, nsel, keys[i]), aliased);
        if (keys[i] == 0)
            q_put(q, "id");
        q_put(q, "%s", direction());
        if (q->nproj >= 0 && at >= 0)
            q->proj[q->nproj++] = at;
        else
            q->nproj = -1;
    }
    if (limit)
        gen_limit(q);
}

static void gen_agg_item(query_t *q, int i)
{
    static const char *const args[] = {"a + b", "d * 2", "mtab.u", "LOWER(s)", "-f", "a % 3"};

    switch (dt_rnd(8)) {
    case 0: q_put(q, "COUNT(*)"); break;
    case 1: q_put(q, "COUNT(%s)", PICK(cols)); break;
    case 2: q_put(q, "SUM(%s)", PICK(nums)); break;
    case 3: q_put(q, "AVG(%s)", PICK(nums)); break;
    case 4: q_put(q, "MIN(%s)", PICK(cols)); break;
    case 5: q_put(q, "MAX(%s)", PICK(cols)); break;
    case 6: q_put(q, "%s(%s)", dt_chance(2) ? "AVG" : dt_chance(2) ? "SUM" : "MAX", PICK(args)); break;
    default: q_put(q, "COUNT(DISTINCT k)"); break;
    }
    if (i >= 0)
        q_put(q, " AS x%d", i);
}

/* SELECT aggregates [WHERE] [LIMIT]: one row */
static void gen_aggs(query_t *q)
{
    int i, n = 1 + dt_rnd(5);

    q_put(q, "SELECT ");
    for (i = 0; i < n; i++) {
        q_put(q, "%s", i ? ", " : "");
        gen_agg_item(q, dt_chance(2) ? i : -1);
    }
    q_put(q, " FROM mtab");
    gen_filter(q);
    if (dt_chance(5))
        q_put(q, dt_chance(2) ? " LIMIT 1" : " LIMIT 1, 1");
    q->total = 1;
}

/* SELECT [group exprs,] aggregates ... GROUP BY ... [HAVING] [ORDER BY] [LIMIT] */
static void gen_groups(query_t *q)
{
    int g[2], ng = pick_distinct(g, 1 + dt_chance(3), (int)(sizeof group_exprs / sizeof *group_exprs));
    int hide = dt_chance(4), nagg = 1 + dt_rnd(3), local = 0, i, order;

    q_put(q, "SELECT ");
    for (i = 0; i < ng && !hide; i++)
        q_put(q, "%s, ", group_exprs[g[i]]);
    for (i = 0; i < nagg; i++) {
        q_put(q, "%s", i ? ", " : "");
        gen_agg_item(q, i);
    }
    q_put(q, " FROM mtab");
    gen_filter(q);
    for (i = 0; i < ng; i++) {
        q_put(q, "%s%s", i ? ", " : " GROUP BY ", group_exprs[g[i]]);
        local |= strcmp(group_exprs[g[i]], "k") == 0;
    }
    if (local && dt_chance(3))
        q_put(q, " HAVING COUNT(*) > 1");
    order = dt_rnd(4);
    if (order == 1 || order == 2) {
        q_put(q, " ORDER BY %s", order == 2 ? "x0 DESC, " : "");
        for (i = 0; i < ng; i++)
            q_put(q, "%s%s%s", i ? ", " : "", group_exprs[g[i]], direction());
        q->total = 1;
    } else if (order == 3) {
        q_put(q, " ORDER BY NULL");
    }
    q->nproj = -1;
    if (q->total && dt_chance(3))
        gen_limit(q);
}

/* SELECT DISTINCT exprs [WHERE] [ORDER BY all of them] [LIMIT] */
static void gen_distinct(query_t *q)
{
    int c[2], n = pick_distinct(c, 1 + dt_chance(2), (int)(sizeof distinct_exprs / sizeof *distinct_exprs));
    int i, order = dt_chance(2), first = dt_chance(2);

    q_put(q, "SELECT DISTINCT ");
    for (i = 0; i < n; i++)
        q_put(q, "%s%s", i ? ", " : "", distinct_exprs[c[i]]);
    q_put(q, " FROM mtab");
    gen_filter(q);
    if (order) {
        for (i = 0; i < n; i++)
            q_put(q, "%s%s%s", i ? ", " : " ORDER BY ",
                  distinct_exprs[c[(i + first) % n]], direction());
        q->total = 1;
        if (dt_chance(2))
            gen_limit(q);
    }
    q->nproj = -1;
}

static void generate(query_t *q)
{
    int kind = dt_rnd(10);

    q_reset(q);
    if (kind < 4)
        gen_rows(q);
    else if (kind < 6)
        gen_aggs(q);
    else if (kind < 9)
        gen_groups(q);
    else
        gen_distinct(q);
}

/* ======================================================== comparison */

static int row_at_differs(const dt_rows_t *d, const dt_rows_t *p, size_t i, char *why, size_t cap)
{
    unsigned int c;

    for (c = 0; c < d->ncols; c++) {
        if (dt_cell_cmp(d->v[i][c], p->v[i][c]) != 0) {
            snprintf(why, cap, "row %zu column %u (%s): dal '%s', server '%s'", i + 1, c + 1,
                     p->names[c], d->v[i][c] ? d->v[i][c] : "NULL",
                     p->v[i][c] ? p->v[i][c] : "NULL");
            return 1;
        }
    }
    return 0;
}

static int key_seq_differs(const query_t *q, const dt_rows_t *d, const dt_rows_t *p, char *why,
                           size_t cap)
{
    size_t i;
    int k, c;

    for (i = 0; i < d->n; i++) {
        for (k = 0; k < q->nproj; k++) {
            c = q->proj[k];
            if (dt_cell_cmp(d->v[i][c], p->v[i][c]) != 0) {
                snprintf(why, cap, "ORDER BY key %s of row %zu: dal '%s', server '%s'",
                         p->names[c], i + 1, d->v[i][c] ? d->v[i][c] : "NULL",
                         p->v[i][c] ? p->v[i][c] : "NULL");
                return 1;
            }
        }
    }
    return 0;
}

/* 0 if dal's rows are the server's; else why not. */
static int differs(const query_t *q, dt_rows_t *d, dt_rows_t *p, char *why, size_t cap)
{
    unsigned int c;
    size_t i;

    if (d->ncols != p->ncols) {
        snprintf(why, cap, "dal has %u columns, the server %u", d->ncols, p->ncols);
        return 1;
    }
    for (c = 0; c < d->ncols; c++) {
        if (strcmp(d->names[c], p->names[c]) != 0) {
            snprintf(why, cap, "column %u is '%s' in dal, '%s' on the server", c + 1,
                     d->names[c], p->names[c]);
            return 1;
        }
    }
    if (d->n != p->n) {
        snprintf(why, cap, "dal returned %zu rows, the server %zu", d->n, p->n);
        return 1;
    }
    if (!q->total && q->nproj > 0 && key_seq_differs(q, d, p, why, cap))
        return 1;
    if (!q->total && d->n > 1) {
        dt_rows_sort(d, d->ncols);
        dt_rows_sort(p, d->ncols);
    }
    for (i = 0; i < d->n; i++)
        if (row_at_differs(d, p, i, why, cap))
            return 1;
    return 0;
}

static void report(int n, const query_t *q, const char *why)
{
    size_t i;

    fprintf(stderr, "MISMATCH (seed %llu, query %d): %s\n  dal:    %s\n", seed, n, why,
            q->dal.p);
    for (i = 0; i < q->np; i++) {
        if (q->params[i].type == DAL_TYPE_STRING)
            fprintf(stderr, "    ?%zu = '%.*s'\n", i + 1, (int)q->params[i].v.s.len,
                    q->params[i].v.s.ptr);
        else
            fprintf(stderr, "    ?%zu = %lld\n", i + 1, (long long)q->params[i].v.i);
    }
    fprintf(stderr, "  server: %s\n", q->plain.p);
}

/* Run q both ways; 0 if they agree. */
static int run_one(dal_t *dal, MYSQL *plain, int n, query_t *q)
{
    dt_rows_t d, p;
    char why[DAL_ERROR_MSG_MAX + 96], msg[DAL_ERROR_MSG_MAX + 32];
    int bad;

    if (dt_plain_rows(plain, q->plain.p, &p, msg, sizeof msg) != 0) {
        fprintf(stderr, "FATAL (seed %llu, query %d): the server refused %s: %s\n", seed, n,
                q->plain.p, msg);
        exit(1);
    }
    bad = dt_dal_rows(dal, q->dal.p, q->np ? q->params : NULL, q->np, &d, msg, sizeof msg) != 0;
    if (bad)
        snprintf(why, sizeof why, "dal failed: %s", msg);
    else
        bad = differs(q, &d, &p, why, sizeof why);
    if (bad)
        report(n, q, why);
    dt_rows_free(&d);
    dt_rows_free(&p);
    return bad;
}

/* ============================================================= tests */

START_TEST(test_differential)
{
    dal_t *dal = tu_open(ini);
    MYSQL *plain = dt_direct(ports[0], "plain");
    query_t q;
    int i, bad = 0, ordered = 0;

    memset(&q, 0, sizeof q);
    dt_seed(seed ^ 0x9e3779b97f4a7c15ULL);
    for (i = 0; i < QUERIES; i++) {
        generate(&q);
        ordered += q.total;
        if (run_one(dal, plain, i, &q) != 0 && ++bad >= MAX_REPORTS)
            break;
    }
    printf("scatter: seed %llu: %d generated queries (%d with a total order), %d mismatches\n",
           seed, i, ordered, bad);
    free(q.dal.p);
    free(q.plain.p);
    mysql_close(plain);
    dal_close(dal);
    ck_assert_msg(bad == 0, "%d queries gave other rows than the server (seed %llu, see above)",
                  bad, seed);
}
END_TEST

/* LIMIT ?, ? with the counts given as text, as a client that sends every
 * parameter as a string does; text that is not a count stays an error. */
static int limit_text_params(dal_t *dal, MYSQL *plain, query_t *q)
{
    static const char *const dal_sql = "SELECT id, a FROM mtab ORDER BY b DESC LIMIT ?, ?";
    dal_value_t bad[] = {dal_str("10"), dal_str(" 5")};
    dal_result_t *r = NULL;
    dal_error_t err;
    int n = 0, rc;

    q->dal.len = q->plain.len = 0;
    dt_sb_put(&q->dal, "%s", dal_sql);
    dt_sb_put(&q->plain, "SELECT id, a FROM mtab ORDER BY b DESC LIMIT 10, 5");
    q->params[0] = dal_str("10");
    q->params[1] = dal_strn("5", 1);
    q->np = 2;
    q->total = 1;
    q->nproj = 0;
    n += run_one(dal, plain, 1000, q);
    q->np = 0;
    rc = dal_query(dal, NULL, dal_sql, bad, 2, &r, &err);
    ck_assert_msg(rc == DAL_EINVAL && strstr(err.message, "LIMIT parameter 2") != NULL,
                  "LIMIT ' 5': %s", rc ? err.message : "accepted");
    ck_assert_ptr_null(r);
    return n;
}

/* The join of the binding group in the fixed cases: on the shard key, so
 * each route joins one table of each. */
#define JOIN2 "mtab JOIN mtab2 ON mtab.k = mtab2.k AND mtab.id = mtab2.id"

/* Fixed statements: what must be refused, and edge cases worth naming. */
START_TEST(test_fixed)
{
    static const char *const refused[] = {
        "SELECT GROUP_CONCAT(s) FROM mtab",
        "SELECT COUNT(DISTINCT a) FROM mtab",
        "SELECT a, COUNT(*) FROM mtab GROUP BY a HAVING COUNT(*) > 3",
        "SELECT SUM(a) / COUNT(*) FROM mtab",
        "SELECT id FROM mtab UNION SELECT id FROM mtab",
        "SELECT a, COUNT(*) FROM mtab GROUP BY a WITH ROLLUP",
        "SELECT DISTINCT a FROM mtab ORDER BY b",
        "SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM mtab",
        "SELECT SUM(DISTINCT a) FROM mtab",
        "SELECT s, AVG(DISTINCT b) FROM mtab GROUP BY s",
        "SELECT SUM(DISTINCT mtab.k) FROM " JOIN2,
        "SELECT mtab.*, COUNT(*), mtab2.* FROM " JOIN2 " GROUP BY mtab.id",
    };
    static const struct { const char *sql; int total; } same[] = {
        /* one node: no merge, so HAVING and GROUP_CONCAT are fine */
        {"SELECT a, COUNT(*) FROM mtab WHERE k = 7 GROUP BY a HAVING COUNT(*) > 0", 0},
        {"SELECT k, GROUP_CONCAT(id ORDER BY id), COUNT(DISTINCT a) FROM mtab GROUP BY k "
         "HAVING COUNT(*) > 2 ORDER BY k", 1},
        {"SELECT COUNT(*), SUM(f), AVG(f), SUM(d), AVG(d), AVG(u), MIN(s), MAX(s) FROM mtab", 1},
        {"SELECT s, COUNT(*), AVG(d) FROM mtab GROUP BY s ORDER BY COUNT(*) DESC, s", 1},
        {"SELECT COUNT(*) FROM mtab WHERE k < 0", 1},
        {"SELECT SUM(a), AVG(a), MIN(a) FROM mtab WHERE k < 0", 1},
        {"SELECT id FROM mtab ORDER BY id LIMIT 0", 1},
        {"SELECT id FROM mtab ORDER BY id DESC LIMIT 1995, 100", 1},
        {"SELECT * FROM mtab ORDER BY s DESC, f, id LIMIT 50", 1},
        /* the merge's ORDER BY replaces text where routing renames a qualifier */
        {"SELECT mtab.a, COUNT(*), MAX(mtab.b) FROM mtab GROUP BY mtab.a, s "
         "ORDER BY mtab.a DESC, s", 1},
        {"SELECT DISTINCT mtab.a FROM mtab ORDER BY mtab.a DESC", 1},
        {"SELECT DISTINCT mtab.a, s FROM mtab ORDER BY mtab.a DESC", 0},
        {"SELECT mtab.a, COUNT(*) FROM mtab GROUP BY mtab.a, s ORDER BY mtab.a DESC", 0},
        {"SELECT mtab.a, COUNT(*) FROM mtab GROUP BY mtab.a ORDER BY mtab.a DESC, COUNT(*)", 1},
        {"SELECT t.s, AVG(t.d) FROM mtab AS t GROUP BY t.s ORDER BY AVG(t.d), t.s LIMIT 3, 4", 1},
        /* merge columns copied with their qualifiers: the table keeps its
         * logical name as an alias on the nodes */
        {"SELECT id FROM mtab ORDER BY mtab.b DESC LIMIT 10", 1},
        {"SELECT mtab.id, a FROM mtab ORDER BY LOWER(mtab.s), mtab.id DESC LIMIT 30", 1},
        /* joins in the binding group: a column not selected is ambiguous
         * unqualified (both tables have id, k and a) */
        {"SELECT mtab.a FROM " JOIN2 " ORDER BY mtab.id", 1},
        {"SELECT mtab2.a, mtab.s FROM " JOIN2
         " ORDER BY mtab.k DESC, mtab2.id LIMIT 40", 1},
        {"SELECT mtab.id FROM " JOIN2
         " ORDER BY mtab.a + mtab2.a DESC, mtab.id ASC LIMIT 5, 30", 1},
        {"SELECT x.id FROM mtab x JOIN mtab2 ON x.k = mtab2.k AND x.id = mtab2.id "
         "ORDER BY mtab2.a DESC, x.id LIMIT 25", 1},
        {"SELECT mtab.id, mtab2.a FROM " JOIN2
         " ORDER BY note, mtab.id LIMIT 50", 1},
        {"SELECT COUNT(*), SUM(mtab2.a) FROM " JOIN2
         " GROUP BY mtab.a ORDER BY mtab.a", 1},
        {"SELECT mtab.s, AVG(mtab2.a), COUNT(mtab.a) FROM " JOIN2
         " GROUP BY mtab.s ORDER BY mtab.s DESC", 1},
        {"SELECT DISTINCT mtab2.note FROM " JOIN2
         " ORDER BY mtab2.note", 1},
        /* SELECT * with GROUP BY (grouping by the primary key: each group
         * one row, so the other columns are defined) */
        {"SELECT * FROM mtab GROUP BY id ORDER BY id DESC LIMIT 30", 1},
        {"SELECT *, COUNT(*) AS n, AVG(d) FROM mtab GROUP BY id ORDER BY n DESC, id LIMIT 30", 1},
        {"SELECT COUNT(*), mtab.* FROM mtab WHERE a > 3 GROUP BY mtab.id ORDER BY mtab.id", 1},
        {"SELECT * FROM mtab GROUP BY k, id ORDER BY b LIMIT 30", 1},
        {"SELECT *, COUNT(*), MAX(b) FROM mtab WHERE id = 17", 1},
        {"SELECT mtab.*, COUNT(*) FROM " JOIN2 " GROUP BY mtab.id "
         "ORDER BY mtab.id LIMIT 20", 1},
        /* DISTINCT aggregates of the shard key: each value on one node */
        {"SELECT SUM(DISTINCT k), AVG(DISTINCT k), COUNT(DISTINCT k) FROM mtab", 1},
        {"SELECT SUM(DISTINCT k), AVG(DISTINCT k) FROM mtab WHERE k < 0", 1},
        {"SELECT a, SUM(DISTINCT k), AVG(DISTINCT mtab.k) FROM mtab GROUP BY a ORDER BY a", 1},
        {"SELECT s, AVG(DISTINCT k) AS m FROM mtab GROUP BY s ORDER BY m DESC, s LIMIT 5", 1},
    };
    dal_t *dal = tu_open(ini);
    MYSQL *plain = dt_direct(ports[0], "plain");
    dal_result_t *r = NULL;
    dal_error_t err;
    query_t q;
    size_t i;
    int rc, bad = 0;

    for (i = 0; i < sizeof refused / sizeof *refused; i++) {
        rc = dal_query(dal, NULL, refused[i], NULL, 0, &r, &err);
        ck_assert_msg(rc == DAL_EUNSUPPORTED, "%s: expected DAL_EUNSUPPORTED, got %s",
                      refused[i], dal_strerror(rc));
        ck_assert_msg(strstr(err.message, "several data nodes") != NULL, "%s: %s", refused[i],
                      err.message);
        ck_assert_ptr_null(r);
    }
    memset(&q, 0, sizeof q);
    for (i = 0; i < sizeof same / sizeof *same; i++) {
        q_put(&q, "%s", "");
        q.dal.len = q.plain.len = 0;
        q_put(&q, "%s", same[i].sql);
        q.total = same[i].total;
        q.nproj = 0;
        bad += run_one(dal, plain, (int)i, &q);
    }
    bad += limit_text_params(dal, plain, &q);
    free(q.dal.p);
    free(q.plain.p);
    mysql_close(plain);
    dal_close(dal);
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* ------------------------------------------------------------ memory */

/* VmHWM or VmRSS of this process, in kB. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, strlen(key)) == 0)
            v = strtol(line + strlen(key), NULL, 10);
    fclose(f);
    return v;
}

/* Reset the peak RSS to the current RSS (Linux 4.0+); 0 or -1. */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int rc;

    if (f == NULL)
        return -1;
    rc = fputs("5", f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

/* Peak RSS growth in kB while running sql through dal; rows into out. */
static long peak_growth(dal_t *dal, const char *sql, dt_rows_t *out, double *ms)
{
    char msg[DAL_ERROR_MSG_MAX + 32];
    struct timeval t0, t1;
    long before, after;

    before = reset_peak() == 0 ? status_kb("VmRSS:") : status_kb("VmHWM:");
    gettimeofday(&t0, NULL);
    ck_assert_msg(dt_dal_rows(dal, sql, NULL, 0, out, msg, sizeof msg) == 0, "%s: %s", sql, msg);
    gettimeofday(&t1, NULL);
    after = status_kb("VmHWM:");
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_usec - t0.tv_usec) / 1e3;
    return after - before;
}

START_TEST(test_offset_memory)
{
    static const char *q0 = "SELECT id, v, pad FROM mbig ORDER BY v DESC, id LIMIT 0, 10";
    static const char *q1 = "SELECT id, v, pad FROM mbig ORDER BY v DESC, id LIMIT 100000, 10";
    dal_t *dal = tu_open(ini);
    MYSQL *plain = dt_direct(ports[0], "plain");
    dt_rows_t d, p;
    query_t q;
    double ms0, ms1;
    long g0, g1;
    char why[600], msg[256];

    g0 = peak_growth(dal, q0, &d, &ms0); /* warm: connections, buffers */
    dt_rows_free(&d);
    g0 = peak_growth(dal, q0, &d, &ms0);
    dt_rows_free(&d);
    g1 = peak_growth(dal, q1, &d, &ms1);
    ck_assert_int_eq(dt_plain_rows(plain, q1, &p, msg, sizeof msg), 0);
    memset(&q, 0, sizeof q);
    q.total = 1;
    ck_assert_msg(!differs(&q, &d, &p, why, sizeof why), "%s: %s", q1, why);
    printf("memory: ORDER BY v DESC, id over %d rows in 8 tables on 4 servers: "
           "LIMIT 0, 10: peak RSS +%ld kB, %.0f ms; LIMIT 100000, 10: +%ld kB, %.0f ms\n",
           BIG_ROWS, g0, ms0, g1, ms1);
    dt_rows_free(&d);
    dt_rows_free(&p);
    mysql_close(plain);
    dal_close(dal);
    ck_assert_msg(g1 - g0 < 16 * 1024, "LIMIT 100000, 10 grew the peak RSS by %ld kB more than "
                  "LIMIT 0, 10: the merge is buffering", g1 - g0);
}
END_TEST

/* Before the tests, in the program's own process: the configuration and
 * the tables, loaded through dal and into the unsharded copy. */
static void setup(void)
{
    dir = tu_mkdtemp();
    ini = make_ini();
    load_mtab();
    load_mtab2();
    load_mbig();
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
    free(ini);
}

static Suite *scatter_suite(void)
{
    Suite *s = suite_create("scatter");
    TCase *tc = tcase_create("differential");

    tcase_set_timeout(tc, 600);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fixed);
    tcase_add_test(tc, test_differential);
    tcase_add_test(tc, test_offset_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    dt_start("scatter", ports, &seed);
    return tu_run(scatter_suite(), CK_FORK_GETENV);
}
