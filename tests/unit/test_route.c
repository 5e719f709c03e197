/*
 * test_core.c -- the core without a database: the plugin loader's errors,
 * routing and rewriting (through dal_explain, which never connects), the
 * host services plugins get, the signal mask of every thread dal starts.
 */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dal/dal.h>

#include "gtid.h"
#include "host.h"
#include "testutil.h"

static char *dir;       /* per-test temp dir */
static char *pdir;      /* plugin dir for fixtures: dir/plugins */

static void setup(void)
{
    dir = tu_mkdtemp();
    if (asprintf(&pdir, "%s/plugins", dir) < 0)
        abort();
    ck_assert_int_eq(mkdir(pdir, 0755), 0);
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
    free(pdir);
}

/* Copy built fixture fx_<fx>.so into the plugin dir as <as>. */
static void install_fixture(const char *fx, const char *to_dir, const char *as)
{
    char from[1024], to[1024];

    snprintf(from, sizeof from, "%s/fx_%s.so", tu_env("DAL_FIXTURE_DIR"), fx);
    snprintf(to, sizeof to, "%s/%s", to_dir, as);
    ck_assert_msg(tu_copy(from, to) == 0, "cannot copy %s", from);
}

static void install_real(const char *name)
{
    char from[1024], to[1024];

    snprintf(from, sizeof from, "%s/shard_%s.so", tu_env("DAL_PLUGIN_DIR"), name);
    snprintf(to, sizeof to, "%s/shard_%s.so", pdir, name);
    ck_assert_msg(tu_copy(from, to) == 0, "cannot copy %s", from);
}

/* An INI with four (never contacted) datasources and one table whose
 * [table] block is `table` (line 10 is its first key line). */
static char *write_ini_named(const char *tname, const char *table)
{
    char text[4096];

    snprintf(text, sizeof text,
             "[datasource db0]\n"                                        /* 1 */
             "master = mysql://u:s3cretpw@127.0.0.1:1/p0\n"             /* 2 */
             "[datasource db1]\n"                                        /* 3 */
             "master = mysql://u:s3cretpw@127.0.0.1:1/p1\n"             /* 4 */
             "[datasource db2]\n"                                        /* 5 */
             "master = mysql://u:s3cretpw@127.0.0.1:1/p2\n"             /* 6 */
             "[datasource db3]\n"                                        /* 7 */
             "master = mysql://u:s3cretpw@127.0.0.1:1/p3\n"             /* 8 */
             "[table %s]\n"                                              /* 9 */
             "%s",
             tname, table);
    return tu_write(dir, "dal.ini", text);
}

static char *write_ini(const char *table)
{
    return write_ini_named("t", table);
}

/* ------------------------------------------------------------ loader errors */

typedef struct load_case {
    const char *what;
    const char *fixture;   /* fixture to install, or NULL */
    const char *as;        /* file name in the plugin dir */
    const char *table;     /* [table t] body */
    int code;
    int line;              /* expected FILE:LINE, 0: no line */
    const char *needle;    /* must appear in the message */
} load_case_t;

#define SHARDED(strategy, extra) \
    "datasource = db\ndb_shard_num = 4\ntable_shard_num = 4\nshard_key = k\nstrategy = " \
    strategy "\n" extra
/* line numbers in SHARDED: datasource 10, db_shard_num 11, table_shard_num 12,
 * shard_key 13, strategy 14, first extra 15 */

static const load_case_t load_cases[] = {
    {"missing file", NULL, NULL, SHARDED("nothere", ""), DAL_EPLUGIN, 14,
     "unknown shard plugin 'nothere': no file shard_nothere.so"},
    {"not a shared object", "-junk", "shard_junk.so", SHARDED("junk", ""), DAL_EPLUGIN, 14,
     "not a shared object"},
    {"no entry point", "noentry", "shard_noentry.so", SHARDED("noentry", ""), DAL_EPLUGIN, 14,
     "not a dal plugin (no dal_plugin_entry symbol)"},
    {"ABI mismatch", "badabi", "shard_badabi.so", SHARDED("badabi", ""), DAL_EPLUGIN, 14,
     "this dal needs ABI 1, the plugin was built for ABI 999"},
    {"kind mismatch", "kind", "shard_kind.so", SHARDED("kind", ""), DAL_EPLUGIN, 14,
     "file name says kind 'shard' but the plugin is of kind 'idgen'"},
    {"name mismatch", "name", "shard_name.so", SHARDED("name", ""), DAL_EPLUGIN, 14,
     "file name says name 'name' but the plugin is named 'other'"},
    {"no ops table", "nullops", "shard_nullops.so", SHARDED("nullops", ""), DAL_EPLUGIN, 14,
     "has no ops table"},
    {"init failure", "good", "shard_good.so", SHARDED("good", "strategy.fail = yes\n"),
     DAL_EPLUGIN, 14, "failed to initialise for table t: asked to fail"},
    {"undeclared parameter", "good", "shard_good.so", SHARDED("good", "strategy.nope = 1\n"),
     DAL_ECONFIG, 15, "strategy.nope: shard plugin 'good' has no parameter 'nope'"},
    {"mistyped parameter", "good", "shard_good.so", SHARDED("good", "strategy.weight = abc\n"),
     DAL_ECONFIG, 15, "strategy.weight: expected an integer, got 'abc'"},
    {"mistyped bool", "good", "shard_good.so", SHARDED("good", "strategy.fail = maybe\n"),
     DAL_ECONFIG, 15, "strategy.fail: expected a boolean"},
    {"path traversal name", NULL, NULL, SHARDED("x/../y", ""), DAL_ECONFIG, 14, "strategy"},
    {"missing required parameter", "@range", "shard_range.so", SHARDED("range", ""),
     DAL_ECONFIG, 9, "needs strategy.bounds"},
    {"range bad list", "@range", "shard_range.so", SHARDED("range", "strategy.bounds = 1, x\n"),
     DAL_ECONFIG, 15, "expected a comma-separated list of integers"},
    {"range init failure", "@range", "shard_range.so",
     SHARDED("range", "strategy.bounds = 0, 10\n"), DAL_EPLUGIN, 14,
     "failed to initialise for table t"},
    {"mod takes no parameters", "@mod", "shard_mod.so", SHARDED("mod", "strategy.x = 1\n"),
     DAL_ECONFIG, 15, "has no parameter 'x' (accepted: none)"},
};

START_TEST(test_load_errors)
{
    const load_case_t *c = &load_cases[_i];
    dal_open_opts_t opts;
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini, prefix[1200];
    int rc;

    memset(&opts, 0, sizeof opts);
    opts.plugin_dir = pdir;
    if (c->fixture && c->fixture[0] == '-')
        free(tu_write(pdir, c->as, "this is not an ELF file\n"));
    else if (c->fixture && c->fixture[0] == '@')
        install_real(c->fixture + 1);
    else if (c->fixture)
        install_fixture(c->fixture, pdir, c->as);
    ini = write_ini(c->table);
    rc = dal_open(ini, &opts, &dal, &err);
    ck_assert_msg(rc == c->code, "%s: rc %s, want %s: %s", c->what, dal_strerror(rc),
                  dal_strerror(c->code), err.message);
    ck_assert_ptr_null(dal);
    snprintf(prefix, sizeof prefix, "%s:%d: ", ini, c->line);
    ck_assert_msg(strncmp(err.message, prefix, strlen(prefix)) == 0,
                  "%s: message does not start with '%s': %s", c->what, prefix, err.message);
    ck_assert_msg(strstr(err.message, c->needle) != NULL, "%s: '%s' not in: %s", c->what,
                  c->needle, err.message);
    ck_assert_msg(strstr(err.message, "s3cretpw") == NULL, "password leaked: %s",
                  err.message);
    /* the same through dal_check_config */
    ck_assert_int_eq(dal_check_config(ini, &opts, &err), c->code);
    free(ini);
}
END_TEST

START_TEST(test_duplicate_plugin)
{
    char d1[1100], d2[1100], path[2300];
    dal_open_opts_t opts;
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini;

    snprintf(d1, sizeof d1, "%s/a", dir);
    snprintf(d2, sizeof d2, "%s/b", dir);
    ck_assert_int_eq(mkdir(d1, 0755), 0);
    ck_assert_int_eq(mkdir(d2, 0755), 0);
    install_fixture("good", d1, "shard_good.so");
    install_fixture("good", d2, "shard_good.so");
    snprintf(path, sizeof path, "%s:%s", d1, d2);
    memset(&opts, 0, sizeof opts);
    opts.plugin_dir = path;
    ini = write_ini(SHARDED("good", ""));
    ck_assert_int_eq(dal_open(ini, &opts, &dal, &err), DAL_EPLUGIN);
    ck_assert_msg(strstr(err.message, "duplicate shard plugin 'good'") != NULL, "%s",
                  err.message);
    ck_assert_msg(strstr(err.message, d1) && strstr(err.message, d2), "%s", err.message);
    /* with only one of them on the path it loads */
    opts.plugin_dir = d1;
    ck_assert_int_eq(dal_open(ini, &opts, &dal, &err), 0);
    dal_close(dal);
    free(ini);
}
END_TEST

typedef struct scan_seen {
    int good, rejected;
    char reasons[4096];
} scan_seen_t;

static void on_plugin(void *user, const dal_plugin_info_t *info)
{
    scan_seen_t *s = user;

    if (info->error == NULL) {
        s->good++;
        ck_assert_str_eq(info->kind, "shard");
    } else {
        s->rejected++;
        strncat(s->reasons, info->error, sizeof s->reasons - strlen(s->reasons) - 2);
        strcat(s->reasons, "\n");
    }
}

START_TEST(test_scan)
{
    scan_seen_t seen;
    dal_error_t err;

    memset(&seen, 0, sizeof seen);
    install_fixture("good", pdir, "shard_good.so");
    install_fixture("badabi", pdir, "shard_badabi.so");
    install_fixture("noentry", pdir, "shard_noentry.so");
    install_fixture("kind", pdir, "shard_kind.so");
    free(tu_write(pdir, "shard_junk.so", "junk"));
    free(tu_write(pdir, "README.txt", "not a plugin, not reported"));
    ck_assert_int_eq(dal_plugins_scan(pdir, on_plugin, &seen, &err), 5);
    ck_assert_int_eq(seen.good, 1);
    ck_assert_int_eq(seen.rejected, 4);
    ck_assert_msg(strstr(seen.reasons, "ABI 999"), "%s", seen.reasons);
    ck_assert_msg(strstr(seen.reasons, "not a shared object"), "%s", seen.reasons);
    ck_assert_int_eq(dal_plugins_scan("/nonexistent/dir", on_plugin, &seen, &err), DAL_EIO);
}
END_TEST

/* ----------------------------------------------------------------- routing */

static dal_t *open_mod(int dbs)
{
    char table[512];
    dal_open_opts_t opts;
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini;

    snprintf(table, sizeof table,
             "datasource = db\ndb_shard_num = %d\ntable_shard_num = 100\nshard_key = wm_poi_id\n"
             "strategy = mod\n[table wm_food_sku]\ndatasource = db\ndb_shard_num = %d\n"
             "table_shard_num = 100\nshard_key = wm_poi_id\nstrategy = mod\n"
             "[table dict]\ndatasource = db2\n[dal]\ndefault_datasource = db3\n",
             dbs, dbs);
    ini = write_ini_named("wm_food", table);
    memset(&opts, 0, sizeof opts);
    ck_assert_msg(dal_open(ini, &opts, &dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

typedef struct route_case {
    int dbs;
    const char *sql;
    const char *shard_value; /* NULL: none */
    const char *datasource;  /* option, or NULL */
    const char *param;       /* one string parameter, or NULL */
    int code;
    size_t nroutes;
    const char *want_ds;     /* datasource of route 0 */
    const char *want_sql;    /* physical SQL of route 0 (NULL: don't check) */
    const char *needle;      /* for errors: in the message */
} route_case_t;

static const route_case_t route_cases[] = {
    /* MTDDL's example: 100 tables; 12345 % 100 = 45; 45 / (100/4) = 1 */
    {1, "SELECT name FROM wm_food WHERE wm_poi_id = 12345", "12345", NULL, NULL, 0, 1, "db0",
     "SELECT name FROM wm_food_45 WHERE wm_poi_id = 12345", NULL},
    {4, "SELECT name FROM wm_food WHERE wm_poi_id = 12345", "12345", NULL, NULL, 0, 1, "db1",
     "SELECT name FROM wm_food_45 WHERE wm_poi_id = 12345", NULL},
    {4, "SELECT 1 FROM wm_food", "0", NULL, NULL, 0, 1, "db0", "SELECT 1 FROM wm_food_0", NULL},
    {4, "SELECT 1 FROM wm_food", "24", NULL, NULL, 0, 1, "db0", "SELECT 1 FROM wm_food_24", NULL},
    {4, "SELECT 1 FROM wm_food", "25", NULL, NULL, 0, 1, "db1", "SELECT 1 FROM wm_food_25", NULL},
    {4, "SELECT 1 FROM wm_food", "99", NULL, NULL, 0, 1, "db3", "SELECT 1 FROM wm_food_99", NULL},
    {4, "SELECT 1 FROM wm_food", "1000075", NULL, NULL, 0, 1, "db3", "SELECT 1 FROM wm_food_75",
     NULL},
    /* names in strings, comments, other identifiers and qualifiers */
    {4,
     "SELECT 'wm_food', wm_food.name, wm_foodx /* wm_food */ FROM `wm_food` -- wm_food\n"
     "WHERE note = \"wm_food\" AND x = ?",
     "7", NULL, "it's", 0, 1, "db0",
     "SELECT 'wm_food', wm_food_7.name, wm_foodx /* wm_food */ FROM `wm_food_7` -- wm_food\n"
     "WHERE note = \"wm_food\" AND x = 'it\\'s'",
     NULL},
    /* schema qualifier dropped: the node's connection picks the database */
    {4, "UPDATE product.wm_food SET price = 1 WHERE id = 3", "3", NULL, NULL, 0, 1, "db0",
     "UPDATE wm_food_3 SET price = 1 WHERE id = 3", NULL},
    /* binding tables: same shard value, same node */
    {4, "SELECT * FROM wm_food f JOIN wm_food_sku s ON f.id = s.food_id", "30", NULL, NULL, 0, 1,
     "db1", "SELECT * FROM wm_food_30 f JOIN wm_food_sku_30 s ON f.id = s.food_id", NULL},
    /* hints instead of options */
    {4, "/*+ dal shard_value=45 */ SELECT * FROM wm_food", NULL, NULL, NULL, 0, 1, "db1",
     " SELECT * FROM wm_food_45", NULL},
    /* injection attempts stay inside their literal */
    {4, "SELECT * FROM wm_food WHERE name = ?", "1", NULL, "x' OR '1'='1", 0, 1, "db0",
     "SELECT * FROM wm_food_1 WHERE name = 'x\\' OR \\'1\\'=\\'1'", NULL},
    {4, "SELECT * FROM wm_food WHERE name = ?", "1", NULL, "a\\' OR 1 -- ", 0, 1, "db0",
     "SELECT * FROM wm_food_1 WHERE name = 'a\\\\\\' OR 1 -- '", NULL},
    /* explicit datasource */
    {4, "SELECT * FROM dict", NULL, NULL, NULL, 0, 1, "db2", "SELECT * FROM dict", NULL},
    {4, "SELECT * FROM dict", NULL, "db1", NULL, 0, 1, "db1", "SELECT * FROM dict", NULL},
    {4, "SELECT NOW()", NULL, NULL, NULL, 0, 1, "db3", "SELECT NOW()", NULL},
    {4, "SELECT * FROM other_table", NULL, NULL, NULL, 0, 1, "db3", NULL, NULL},
    {4, "SELECT * FROM wm_food", "25", "db1", NULL, 0, 1, "db1", "SELECT * FROM wm_food_25",
     NULL},
    /* DDL fans out to every physical table */
    {4, "CREATE TABLE wm_food (id BIGINT PRIMARY KEY)", NULL, NULL, NULL, 0, 100, "db0",
     "CREATE TABLE wm_food_0 (id BIGINT PRIMARY KEY)", NULL},
    {4, "DROP TABLE IF EXISTS wm_food", NULL, "db2", NULL, 0, 25, "db2",
     "DROP TABLE IF EXISTS wm_food_50", NULL},
    /* errors */
    {4, "SELECT * FROM wm_food", "25", "db0", NULL, DAL_EROUTE, 0, NULL, NULL,
     "routes table wm_food to datasource db1, but datasource db0 was requested"},
    /* shard keys from the SQL itself */
    {4, "SELECT * FROM wm_food WHERE wm_poi_id = 12345", NULL, NULL, NULL, 0, 1, "db1",
     "SELECT * FROM wm_food_45 WHERE wm_poi_id = 12345", NULL},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id = ?", NULL, NULL, "99", 0, 1, "db3",
     "SELECT * FROM wm_food_99 WHERE wm_poi_id = '99'", NULL},
    {4, "SELECT * FROM wm_food f WHERE 7 = f.wm_poi_id AND name <> 'x'", NULL, NULL, NULL, 0, 1,
     "db0", "SELECT * FROM wm_food_7 f WHERE 7 = f.wm_poi_id AND name <> 'x'", NULL},
    /* IN: each route keeps only its own values */
    {4, "SELECT * FROM wm_food WHERE wm_poi_id IN (1, 101, 30, 201) AND x = 1", NULL, NULL, NULL,
     0, 2, "db0", "SELECT * FROM wm_food_1 WHERE wm_poi_id IN (1, 101, 201) AND x = 1", NULL},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id IN (30, 1, 130)", NULL, NULL, NULL, 0, 2, "db0",
     "SELECT * FROM wm_food_1 WHERE wm_poi_id IN (1)", NULL},
    /* ranges: mod enumerates a short range */
    {4, "SELECT * FROM wm_food WHERE wm_poi_id BETWEEN 98 AND 101", NULL, NULL, NULL, 0, 4, "db0",
     "SELECT * FROM wm_food_0 WHERE wm_poi_id BETWEEN 98 AND 101", NULL},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id >= 10 AND wm_poi_id < 12", NULL, NULL, NULL, 0, 2,
     "db0", "SELECT * FROM wm_food_10 WHERE wm_poi_id >= 10 AND wm_poi_id < 12", NULL},
    /* conditions that intersect to nothing still give one (empty) answer */
    {4, "SELECT * FROM wm_food WHERE wm_poi_id = 1 AND wm_poi_id = 2", NULL, NULL, NULL, 0, 1,
     "db0", "SELECT * FROM wm_food_0 WHERE wm_poi_id = 1 AND wm_poi_id = 2", NULL},
    /* no usable condition: scatter to every table */
    {4, "SELECT * FROM wm_food", NULL, NULL, NULL, 0, 100, "db0", "SELECT * FROM wm_food_0", NULL},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id = 1 OR wm_poi_id = 2", NULL, NULL, NULL, 0, 100,
     "db0", NULL, NULL},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id + 0 = 5", NULL, NULL, NULL, 0, 100, "db0", NULL,
     NULL},
    {4, "SELECT * FROM wm_food", NULL, "db2", NULL, 0, 25, "db2", "SELECT * FROM wm_food_50",
     NULL},
    /* a self-join routes together only on the shard key; on another column b's
     * rows may be on any shard, which dal cannot join */
    {4, "SELECT * FROM wm_food a JOIN wm_food b ON a.wm_poi_id = b.wm_poi_id WHERE "
     "a.wm_poi_id = 3", NULL, NULL, NULL, 0, 1, "db0", "SELECT * FROM wm_food_3 a JOIN "
     "wm_food_3 b ON a.wm_poi_id = b.wm_poi_id WHERE a.wm_poi_id = 3", NULL},
    {4, "SELECT * FROM wm_food a JOIN wm_food b ON a.id = b.id WHERE a.wm_poi_id = 3", NULL, NULL,
     NULL, DAL_EUNSUPPORTED, 0, NULL, NULL, "not on the same datasource"},
    /* each occurrence by its own conditions: two tables of one node */
    {4, "SELECT * FROM wm_food a JOIN wm_food b ON a.id = b.id WHERE a.wm_poi_id = 3 AND "
     "b.wm_poi_id = 103", NULL, NULL, NULL, 0, 1, "db0", "SELECT * FROM wm_food_3 a JOIN "
     "wm_food_3 b ON a.id = b.id WHERE a.wm_poi_id = 3 AND b.wm_poi_id = 103", NULL},
    {4, "SELECT * FROM wm_food a JOIN wm_food b ON a.id = b.id WHERE a.wm_poi_id = 3 AND "
     "b.wm_poi_id = 4", NULL, NULL, NULL, 0, 1, "db0", "SELECT * FROM wm_food_3 a JOIN "
     "wm_food_4 b ON a.id = b.id WHERE a.wm_poi_id = 3 AND b.wm_poi_id = 4", NULL},
    /* multi-row INSERT split per node */
    {4, "INSERT INTO wm_food (id, wm_poi_id) VALUES (1, 30), (2, 1), (3, 130), (4, 55)", NULL,
     NULL, NULL, 0, 3, "db0", "INSERT INTO wm_food_1 (id, wm_poi_id) VALUES (2, 1)", NULL},
    {4, "INSERT INTO wm_food (wm_poi_id, name) VALUES (?, 'a'), (5, 'b')", NULL, NULL, "1", 0, 2,
     "db0", "INSERT INTO wm_food_1 (wm_poi_id, name) VALUES ('1', 'a')", NULL},
    {4, "INSERT INTO wm_food (id, wm_poi_id) VALUES (1, 30), (2, 130)", NULL, NULL, NULL, 0, 1,
     "db1", "INSERT INTO wm_food_30 (id, wm_poi_id) VALUES (1, 30), (2, 130)", NULL},
    /* refusals and contradictions */
    {4, "UPDATE wm_food SET wm_poi_id = 5 WHERE id = 1", NULL, NULL, NULL, DAL_EUNSUPPORTED, 0,
     NULL, NULL, "may not change wm_poi_id, the shard key of wm_food"},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id = 5", "6", NULL, NULL, DAL_EROUTE, 0, NULL, NULL,
     "conditions on wm_poi_id exclude that table"},
    {4, "INSERT INTO wm_food (id, wm_poi_id) VALUES (1, 30)", "31", NULL, NULL, DAL_EROUTE, 0,
     NULL, NULL, "contradicts the shard value given"},
    {4, "INSERT INTO wm_food (id, name) VALUES (1, 'x')", NULL, NULL, NULL, DAL_EROUTE, 0, NULL,
     NULL, "must list its shard key wm_poi_id"},
    {4, "INSERT INTO wm_food (id, wm_poi_id) VALUES (1, NOW())", NULL, NULL, NULL,
     DAL_EUNSUPPORTED, 0, NULL, NULL, "must be a literal or ?"},
    {4, "SELECT * FROM wm_food WHERE wm_poi_id = 'abc'", NULL, NULL, NULL, DAL_ESHARD, 0, NULL,
     NULL, "abc"},
    {4, "SELECT * FROM wm_food", "-1", NULL, NULL, DAL_ESHARD, 0, NULL, NULL, "-1"},
    {4, "SELECT * FROM wm_food", "abc", NULL, NULL, DAL_ESHARD, 0, NULL, NULL, "abc"},
    {4, "SELECT * FROM wm_food", "1.5", NULL, NULL, DAL_ESHARD, 0, NULL, NULL, "1.5"},
    {4, "SELECT * FROM dict", "1", NULL, NULL, DAL_EROUTE, 0, NULL, NULL,
     "names no sharded table"},
    {4, "SELECT * FROM dict", NULL, "nope", NULL, DAL_EROUTE, 0, NULL, NULL,
     "unknown datasource 'nope'"},
    {4, "SELECT * FROM wm_food WHERE a = ? AND b = ?", "1", NULL, "x", DAL_EINVAL, 0, NULL, NULL,
     "2 ? placeholders but 1 parameters"},
    {4, "SELECT 1; SELECT 2", NULL, NULL, NULL, DAL_ESQL, 0, NULL, NULL, "several statements"},
    {4, "SELECT 'unterminated", NULL, NULL, NULL, DAL_ESQL, 0, NULL, NULL, "cannot analyse"},
    /* statements dal does not analyse run on the default datasource as
     * written, unless they name a table that is not wholly there */
    {4, "LOAD DATA INFILE 'f' INTO TABLE wm_food", NULL, NULL, NULL, DAL_EUNSUPPORTED, 0, NULL,
     NULL, "names table wm_food"},
    {4, "HANDLER `dict` OPEN", NULL, NULL, NULL, DAL_EUNSUPPORTED, 0, NULL, NULL,
     "names table dict"},
    {4, "DO (SELECT COUNT(*) FROM wm_food)", NULL, NULL, NULL, DAL_EUNSUPPORTED, 0, NULL, NULL,
     "names table wm_food"},
    {4, "CALL refresh(1)", NULL, NULL, NULL, 0, 1, "db3", "CALL refresh(1)", NULL},
    /* ... nor in the statement text they run */
    {4, "PREPARE s FROM 'SELECT * FROM wm_food WHERE wm_poi_id = ?'", NULL, NULL, NULL,
     DAL_EUNSUPPORTED, 0, NULL, NULL, "names table wm_food"},
    {4, "EXECUTE /* now */ IMMEDIATE \"DELETE FROM `dict`\"", NULL, NULL, NULL, DAL_EUNSUPPORTED,
     0, NULL, NULL, "names table dict"},
    {4, "PREPARE s FROM 'SELECT * FROM local_t'", NULL, NULL, NULL, 0, 1, "db3",
     "PREPARE s FROM 'SELECT * FROM local_t'", NULL},
    {4, "DO GET_LOCK('wm_food', 0)", NULL, NULL, NULL, 0, 1, "db3", "DO GET_LOCK('wm_food', 0)",
     NULL},
    {4, "/*+ dal datasource=db1 raw */ HANDLER wm_food_45 OPEN", NULL, NULL, NULL, 0, 1, "db1",
     " HANDLER wm_food_45 OPEN", NULL},
    /* mariadb-dump's sandbox marker is a comment, as to the servers */
    {4, "/*M!999999\\- enable the sandbox mode */ INSERT INTO wm_food (wm_poi_id) VALUES (45)",
     NULL, NULL, NULL, 0, 1, "db1",
     "/*M!999999\\- enable the sandbox mode */ INSERT INTO wm_food_45 (wm_poi_id) VALUES (45)",
     NULL},
};

START_TEST(test_routes)
{
    const route_case_t *c = &route_cases[_i];
    dal_t *dal = open_mod(c->dbs);
    dal_query_opts_t opts;
    dal_value_t sv, param;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    int rc;

    memset(&opts, 0, sizeof opts);
    if (c->shard_value) {
        sv = dal_str(c->shard_value);
        opts.shard_value = &sv;
    }
    opts.datasource = c->datasource;
    param = dal_str(c->param ? c->param : "");
    rc = dal_explain(dal, &opts, c->sql, &param, c->param ? 1 : 0, &plan, &err);
    ck_assert_msg(rc == c->code, "case %d (%s): rc %s want %s: %s", _i, c->sql,
                  dal_strerror(rc), dal_strerror(c->code), rc ? err.message : "");
    if (rc != 0) {
        ck_assert_msg(strstr(err.message, c->needle) != NULL, "case %d: '%s' not in '%s'", _i,
                      c->needle, err.message);
        ck_assert_ptr_null(plan);
    } else {
        ck_assert_uint_eq(dal_plan_count(plan), c->nroutes);
        ck_assert_str_eq(dal_plan_datasource(plan, 0), c->want_ds);
        if (c->want_sql)
            ck_assert_str_eq(dal_plan_sql(plan, 0), c->want_sql);
        ck_assert_str_eq(dal_plan_server(plan, 0), "127.0.0.1:1");
    }
    dal_plan_free(plan);
    dal_close(dal);
}
END_TEST

#define L(s) s, sizeof s - 1

/* The physical SQL of route r of text[0..len) (NUL bytes included) equals
 * want[0..wlen). */
static void plan_sql_is(const dal_plan_t *plan, size_t r, const char *want, size_t wlen)
{
    ck_assert_uint_eq(dal_plan_sql_len(plan, r), wlen);
    ck_assert_int_eq(memcmp(dal_plan_sql(plan, r), want, wlen), 0);
}

/* NUL bytes inside strings go through the rewrite whole: the physical
 * table named, a multi-row INSERT split by node, a shard key holding one;
 * outside, nothing is routed. */
START_TEST(test_nul_rewrite)
{
    dal_t *dal = open_mod(4);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    dal_value_t p = dal_int(45);

    tu_must(dal_explain_len(dal, NULL, L("SELECT * FROM wm_food WHERE wm_poi_id = 12345 AND "
                                         "name = 'a\0b' /* \0 */"), NULL, 0, &plan, &err),
            &err, "select");
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    plan_sql_is(plan, 0, L("SELECT * FROM wm_food_45 WHERE wm_poi_id = 12345 AND name = 'a\0b' "
                           "/* \0 */"));
    dal_plan_free(plan);

    tu_must(dal_explain_len(dal, NULL, L("INSERT INTO wm_food (wm_poi_id, name) VALUES "
                                         "(30, 'a\\\0b'), (1, 'c\0d'), (130, '\0')"),
                            NULL, 0, &plan, &err), &err, "multi-row");
    ck_assert_uint_eq(dal_plan_count(plan), 2);
    plan_sql_is(plan, 0, L("INSERT INTO wm_food_1 (wm_poi_id, name) VALUES (1, 'c\0d')"));
    plan_sql_is(plan, 1, L("INSERT INTO wm_food_30 (wm_poi_id, name) VALUES (30, 'a\\\0b'), "
                           "(130, '\0')"));
    dal_plan_free(plan);

    tu_must(dal_explain_len(dal, NULL, L("UPDATE wm_food SET name = 'q\0' WHERE wm_poi_id = ? "
                                         "AND name = \"x\0\""), &p, 1, &plan, &err), &err, "update");
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    plan_sql_is(plan, 0, L("UPDATE wm_food_45 SET name = 'q\0' WHERE wm_poi_id = 45 AND "
                           "name = \"x\0\""));
    dal_plan_free(plan);

    ck_assert_int_eq(dal_explain_len(dal, NULL, L("DELETE FROM wm_food\0 WHERE wm_poi_id = 1"),
                                     NULL, 0, &plan, &err), DAL_ESQL);
    ck_assert_ptr_null(plan);
    ck_assert_msg(strstr(err.message, "NUL byte outside a quoted string at offset 19") != NULL,
                  "%s", err.message);
    ck_assert_int_eq(dal_explain_len(dal, NULL, L("SELECT name FROM wm_food ORDER BY "
                                                  "CONCAT(name, 'a\0b')"), NULL, 0, &plan, &err),
                     DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, "holds a NUL byte") != NULL, "%s", err.message);
    /* the NUL-terminated form is the length form up to the first NUL */
    ck_assert_int_eq(dal_explain(dal, NULL, "SELECT 'a\0b'", NULL, 0, &plan, &err), DAL_ESQL);
    ck_assert_str_eq(err.message, "cannot analyse the statement: unterminated string at offset 7");
    dal_close(dal);
}
END_TEST

/* Without a default datasource, a statement that names no table runs on
 * the first datasource; one that names an unconfigured table is refused. */
START_TEST(test_route_no_table)
{
    char *ini = write_ini("datasource = db\ndb_shard_num = 2\ntable_shard_num = 4\n"
                          "shard_key = id\nstrategy = mod\n");
    dal_open_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    dal_t *dal = NULL;

    memset(&opts, 0, sizeof opts);
    ck_assert_msg(dal_open(ini, &opts, &dal, &err) == 0, "%s", err.message);
    free(ini);
    ck_assert_msg(dal_explain(dal, NULL, "SELECT 1", NULL, 0, &plan, &err) == 0, "%s",
                  err.message);
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    ck_assert_str_eq(dal_plan_datasource(plan, 0), "db0");
    dal_plan_free(plan);
    ck_assert_int_eq(dal_explain(dal, NULL, "SELECT @@version, NOW()", NULL, 0, &plan, &err), 0);
    dal_plan_free(plan);
    ck_assert_int_eq(dal_explain(dal, NULL, "SELECT * FROM elsewhere", NULL, 0, &plan, &err),
                     DAL_EROUTE);
    ck_assert_ptr_nonnull(strstr(err.message, "default_datasource"));
    dal_close(dal);
}
END_TEST

/* The route memo (route.c) answers what the full routing would: the same
 * statements, values and options through a warm handle (memo made on the
 * first call, used after) and through a fresh one each time. */
static const char *const memo_sqls[] = {
    "SELECT name FROM wm_food WHERE wm_poi_id = ?",
    "SELECT name FROM wm_food WHERE id = 3 AND wm_poi_id = ?",
    "UPDATE wm_food SET price = 1 WHERE wm_poi_id = ? AND id = 3",
    "DELETE FROM wm_food WHERE wm_poi_id = ?",
    /* a second condition on the key: never memoized */
    "SELECT name FROM wm_food WHERE wm_poi_id = ? AND wm_poi_id IN (1, 30, 55)",
    /* the key of another table: not this statement's shape */
    "SELECT * FROM wm_food f JOIN wm_food_sku s ON f.id = s.food_id WHERE f.wm_poi_id = ?",
    "/*+ dal datasource=db2 */ SELECT name FROM wm_food WHERE wm_poi_id = ?",
};

static dal_value_t memo_value(int i)
{
    switch (i % 7) {
    case 0: return dal_int(i * 37);
    case 1: return dal_uint((uint64_t)i * 1000003u);
    case 2: return dal_str(i % 2 ? "12345" : "99");
    case 3: return dal_null();
    case 4: return dal_double(2.5);
    case 5: return dal_int(-i);
    default: return dal_str("not a number");
    }
}

static void memo_explain(dal_t *dal, const char *sql, int v, int opt, int *rc, char *out,
                         size_t cap)
{
    dal_query_opts_t opts;
    dal_value_t param = memo_value(v), sv = dal_int(v * 37);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    size_t i, n = 0;

    memset(&opts, 0, sizeof opts);
    if (opt == 1)
        opts.shard_value = &sv;
    if (opt == 2)
        opts.datasource = "db1";
    *rc = dal_explain(dal, &opts, sql, &param, 1, &plan, &err);
    out[0] = '\0';
    for (i = 0; *rc == 0 && i < dal_plan_count(plan) && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s|%s\n", dal_plan_datasource(plan, i),
                              dal_plan_sql(plan, i));
    if (*rc != 0)
        snprintf(out, cap, "%s", err.message);
    dal_plan_free(plan);
}

START_TEST(test_route_memo)
{
    dal_t *warm = open_mod(4);
    char got[8192], want[8192];
    int v, opt, rc_got, rc_want;
    size_t s;

    for (v = 0; v < 21; v++)
        for (opt = 0; opt < 3; opt++)
            for (s = 0; s < sizeof memo_sqls / sizeof memo_sqls[0]; s++) {
                dal_t *fresh = open_mod(4);
                memo_explain(warm, memo_sqls[s], v, opt, &rc_got, got, sizeof got);
                memo_explain(fresh, memo_sqls[s], v, opt, &rc_want, want, sizeof want);
                dal_close(fresh);
                ck_assert_msg(rc_got == rc_want && strcmp(got, want) == 0,
                              "%s, value %d, option %d: warm %s\n%.300s\nfresh %s\n%.300s",
                              memo_sqls[s], v, opt, dal_strerror(rc_got), got,
                              dal_strerror(rc_want), want);
            }
    dal_close(warm);
}
END_TEST

/* ------------------------------------------------------------ scopes */

/* The routing issue's layout: t_account and t_account_detail bound, 2 tables
 * on db0 (nodes = 1) or one on each of db0, db1 (nodes = 2), and a
 * broadcast table. */
static dal_t *open_accounts(int nodes)
{
    char table[1024];
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini;

    snprintf(table, sizeof table,
             "datasource = db\ndb_shard_num = %d\ntable_shard_num = 2\nshard_key = account_id\n"
             "strategy = mod\nbinding = a\n"
             "[table t_account_detail]\ndatasource = db\ndb_shard_num = %d\ntable_shard_num = 2\n"
             "shard_key = account_id\nstrategy = mod\nbinding = a\n"
             "[table t_status]\ndatasource = db\ndb_shard_num = %d\nbroadcast = true\n",
             nodes, nodes, nodes);
    ini = write_ini_named("t_account", table);
    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

typedef struct scope_case {
    int nodes;
    const char *sql;
    const char *param;  /* one text parameter, or NULL */
    int code;
    const char *want;   /* every route's SQL, each followed by '\n'; or the error's needle */
} scope_case_t;

static const scope_case_t scope_cases[] = {
    /* 1: a derived table's column is not the shard key it shadows */
    {1, "SELECT * FROM (SELECT amount account_id FROM t_account) t1 WHERE account_id = ?", "100", 0,
     "SELECT * FROM (SELECT amount account_id FROM t_account_0) t1 WHERE account_id = '100'\n"
     "SELECT * FROM (SELECT amount account_id FROM t_account_1) t1 WHERE account_id = '100'\n"},
    /* conditions inside a derived table narrow it */
    {1, "SELECT * FROM (SELECT * FROM t_account WHERE account_id = 3) t1", NULL, 0,
     "SELECT * FROM (SELECT * FROM t_account_1 WHERE account_id = 3) t1\n"},
    /* 2: two occurrences, each by its own scope's conditions */
    {1, "SELECT * FROM t_account WHERE account_id = 100 AND amount IN (SELECT amount FROM "
     "t_account WHERE account_id = 101)", NULL, 0,
     "SELECT * FROM t_account_0 WHERE account_id = 100 AND amount IN (SELECT amount FROM "
     "t_account_1 WHERE account_id = 101)\n"},
    {2, "SELECT * FROM t_account WHERE account_id = 100 AND amount IN (SELECT amount FROM "
     "t_account WHERE account_id = 101)", NULL, DAL_EUNSUPPORTED, "not on the same datasource"},
    {1, "SELECT * FROM t_account WHERE account_id = 100 AND amount IN (SELECT amount FROM "
     "t_account)", NULL, DAL_EUNSUPPORTED, "several of its tables"},
    /* a correlated subquery on the shard key follows the outer row */
    {1, "SELECT * FROM t_account a WHERE EXISTS (SELECT 1 FROM t_account_detail d WHERE "
     "d.account_id = a.account_id)", NULL, 0,
     "SELECT * FROM t_account_0 a WHERE EXISTS (SELECT 1 FROM t_account_detail_0 d WHERE "
     "d.account_id = a.account_id)\n"
     "SELECT * FROM t_account_1 a WHERE EXISTS (SELECT 1 FROM t_account_detail_1 d WHERE "
     "d.account_id = a.account_id)\n"},
    /* a condition under OR or in a subquery narrows nothing outside it */
    {1, "SELECT * FROM t_account a WHERE a.amount = 1 OR EXISTS (SELECT 1 FROM t_account_detail "
     "d WHERE d.account_id = a.account_id AND d.account_id = 3)", NULL, 0,
     "SELECT * FROM t_account_0 a WHERE a.amount = 1 OR EXISTS (SELECT 1 FROM "
     "t_account_detail_0 d WHERE d.account_id = a.account_id AND d.account_id = 3)\n"
     "SELECT * FROM t_account_1 a WHERE a.amount = 1 OR EXISTS (SELECT 1 FROM "
     "t_account_detail_1 d WHERE d.account_id = a.account_id AND d.account_id = 3)\n"},
    /* JOIN ... ON and USING on the shard key route binding tables together */
    {2, "SELECT * FROM t_account a JOIN t_account_detail d ON a.account_id = d.account_id AND "
     "d.account_id = 1", NULL, 0,
     "SELECT * FROM t_account_1 a JOIN t_account_detail_1 d ON a.account_id = d.account_id AND "
     "d.account_id = 1\n"},
    {2, "SELECT * FROM t_account JOIN t_account_detail USING (account_id) WHERE account_id = 0",
     NULL, 0, "SELECT * FROM t_account_0 JOIN t_account_detail_0 USING (account_id) WHERE "
     "account_id = 0\n"},
    /* bound tables not joined on the key: each by its own conditions */
    {2, "SELECT * FROM t_account a, t_account_detail d WHERE a.account_id = 1 AND "
     "d.account_id = 0", NULL, DAL_EUNSUPPORTED, "not on the same datasource"},
    /* the NULL side of an outer join cannot be scattered beside other rows */
    {1, "SELECT * FROM t_status s LEFT JOIN t_account a ON a.status = s.status", NULL,
     DAL_EUNSUPPORTED, "outer join"},
    /* 3: a qualifier naming an alias stays */
    {1, "DELETE t_account FROM t_account t_account WHERE t_account.account_id = 100", NULL, 0,
     "DELETE t_account FROM t_account_0 t_account WHERE t_account.account_id = 100\n"},
    /* 4: schema qualifiers go in every position */
    {1, "SELECT sharding_db.t_account.account_id FROM t_account WHERE account_id = 100", NULL, 0,
     "SELECT t_account_0.account_id FROM t_account_0 WHERE account_id = 100\n"},
    {1, "SELECT sharding_db.t_account.account_id FROM sharding_db.t_account WHERE "
     "sharding_db.t_account.account_id = 101", NULL, 0,
     "SELECT t_account_1.account_id FROM t_account_1 WHERE t_account_1.account_id = 101\n"},
    /* 5: LIMIT ? with text holding an integer */
    {1, "SELECT * FROM t_account WHERE account_id = 100 LIMIT ?", "10", 0,
     "SELECT * FROM t_account_0 WHERE account_id = 100 LIMIT 10\n"},
    {1, "SELECT * FROM t_account WHERE account_id = 100 LIMIT ?", "1 OR 1", DAL_EINVAL,
     "LIMIT or OFFSET"},
    /* 7: hints that are wrong are errors */
    {1, "SELECT * FROM t_account /*+ dal bogus=3 */", NULL, DAL_ESQL, "unknown key 'bogus'"},
    {1, "SELECT * FROM t_account /*+ dal shard_value=1 OR 1=1 */", NULL, DAL_ESQL,
     "unknown key 'OR'"},
    {1, "SELECT * FROM t_account /*+ dal shard_value=1 shard_value=2 */", NULL, DAL_ESQL,
     "shard_value given twice"},
    {1, "SELECT * FROM t_account /*+ dal shard_value */", NULL, DAL_ESQL, "needs a value"},
    /* INSERT ... SELECT: rows stay on their shard, or the statement is refused */
    {2, "INSERT INTO t_account (account_id, amount) SELECT account_id, amount FROM "
     "t_account_detail WHERE account_id = 3", NULL, 0,
     "INSERT INTO t_account_1 (account_id, amount) SELECT account_id, amount FROM "
     "t_account_detail_1 WHERE account_id = 3\n"},
    {2, "INSERT INTO t_account (account_id, amount) SELECT d.account_id, amount FROM "
     "t_account_detail d", NULL, 0,
     "INSERT INTO t_account_0 (account_id, amount) SELECT d.account_id, amount FROM "
     "t_account_detail_0 d\n"
     "INSERT INTO t_account_1 (account_id, amount) SELECT d.account_id, amount FROM "
     "t_account_detail_1 d\n"},
    {1, "INSERT INTO t_account (account_id, amount) SELECT 7, amount FROM t_status", NULL, 0,
     "INSERT INTO t_account_1 (account_id, amount) SELECT 7, amount FROM t_status\n"},
    {2, "INSERT INTO t_account (account_id, amount) SELECT amount, account_id FROM "
     "t_account_detail", NULL, DAL_EUNSUPPORTED, "cannot tell which shard"},
    {2, "INSERT INTO t_account (account_id, amount) SELECT 1, amount FROM t_account_detail",
     NULL, DAL_EUNSUPPORTED, "rows cannot move between nodes"},
    /* raw: exactly as written, on the datasource named */
    {2, "/*+ dal datasource=db1 raw */ SELECT * FROM t_account_0", NULL, 0,
     " SELECT * FROM t_account_0\n"},
    {2, "/*+ dal raw */ SELECT * FROM t_account", NULL, DAL_EROUTE, "raw needs datasource"},
};

START_TEST(test_scopes)
{
    const scope_case_t *c = &scope_cases[_i];
    dal_t *dal = open_accounts(c->nodes);
    dal_value_t p = dal_str(c->param ? c->param : "");
    dal_plan_t *plan = NULL;
    dal_error_t err;
    char got[4096];
    size_t i, n = 0;
    int rc = dal_explain(dal, NULL, c->sql, c->param ? &p : NULL, c->param ? 1 : 0, &plan, &err);

    got[0] = '\0';
    for (i = 0; rc == 0 && i < dal_plan_count(plan) && n < sizeof got; i++)
        n += (size_t)snprintf(got + n, sizeof got - n, "%s\n", dal_plan_sql(plan, i));
    ck_assert_msg(rc == c->code, "[%s]: %s, want %s: %s", c->sql, dal_strerror(rc),
                  dal_strerror(c->code), rc ? err.message : got);
    if (rc == 0)
        ck_assert_str_eq(got, c->want);
    else
        ck_assert_msg(strstr(err.message, c->want) != NULL, "[%s]: '%s' not in: %s", c->sql,
                      c->want, err.message);
    dal_plan_free(plan);
    dal_close(dal);
}
END_TEST

/* A reload that moves tables to other nodes: the memo of the old snapshot
 * must not route by the old layout. */
START_TEST(test_route_memo_reload)
{
    dal_t *dal = open_mod(4);
    char got[1024], ini[512];
    dal_error_t err;
    int rc;

    /* value 7 is 259: table 59 of 100 on db2; of 10 tables on 2 nodes, table 9 on db1 */
    memo_explain(dal, memo_sqls[0], 7, 0, &rc, got, sizeof got);
    memo_explain(dal, memo_sqls[0], 7, 0, &rc, got, sizeof got);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(got, "db2|SELECT name FROM wm_food_59 WHERE wm_poi_id = 259\n");
    snprintf(ini, sizeof ini,
             "datasource = db\ndb_shard_num = 2\ntable_shard_num = 10\nshard_key = wm_poi_id\n"
             "strategy = mod\n[dal]\nallow_reshard = true\n");
    free(write_ini_named("wm_food", ini));
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    memo_explain(dal, memo_sqls[0], 7, 0, &rc, got, sizeof got);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(got, "db1|SELECT name FROM wm_food_9 WHERE wm_poi_id = 259\n");
    dal_close(dal);
}
END_TEST

/* An INSERT that leaves out the id column gets its rewrite remembered; the
 * memo is for one column name, so a reload that renames the column or
 * drops the generator must not reuse it. */
static dal_t *open_ids(const char *id_column, dal_t *reload)
{
    char table[512];
    dal_error_t err;
    dal_t *dal = reload;
    char *ini;

    snprintf(table, sizeof table,
             "datasource = db\ndb_shard_num = 4\ntable_shard_num = 100\nshard_key = wm_poi_id\n"
             "strategy = mod\n%s%s%s[idgen ids]\nplugin = snowflake\nworker_id = 3\n"
             "[dal]\nallow_reshard = true\n",
             id_column ? "id_column = " : "", id_column ? id_column : "",
             id_column ? "\nidgen = ids\n" : "");
    ini = write_ini_named("wm_food", table);
    if (reload == NULL)
        ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    else
        ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

/* The physical SQL of the INSERT for shard key 7, with the generated ID
 * (if any) put in *id. */
static void explain_insert(dal_t *dal, char *out, size_t cap, long long *id)
{
    dal_value_t p = dal_int(7);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    const char *sql, *v;

    ck_assert_msg(dal_explain(dal, NULL, "INSERT INTO wm_food (wm_poi_id, name) VALUES (?, 'a')",
                              &p, 1, &plan, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    sql = dal_plan_sql(plan, 0);
    *id = -1;
    v = strstr(sql, "VALUES (");
    if (v != NULL && strncmp(sql, "INSERT INTO wm_food_7 (`", 24) == 0)
        *id = strtoll(v + 8, NULL, 10);
    snprintf(out, cap, "%s", sql);
    dal_plan_free(plan);
}

START_TEST(test_fill_memo)
{
    dal_t *dal = open_ids("id", NULL);
    char sql[512], want[512];
    long long id, last = -1;
    int i;

    for (i = 0; i < 3; i++) {  /* the first makes the memo, the others use it */
        explain_insert(dal, sql, sizeof sql, &id);
        snprintf(want, sizeof want,
                 "INSERT INTO wm_food_7 (`id`, wm_poi_id, name) VALUES (%lld, 7, 'a')", id);
        ck_assert_str_eq(sql, want);
        ck_assert_msg(id > last, "ids %lld then %lld", last, id);
        last = id;
    }
    open_ids("oid", dal);
    explain_insert(dal, sql, sizeof sql, &id);
    snprintf(want, sizeof want,
             "INSERT INTO wm_food_7 (`oid`, wm_poi_id, name) VALUES (%lld, 7, 'a')", id);
    ck_assert_str_eq(sql, want);
    ck_assert_int_gt(id, last);
    open_ids(NULL, dal);
    explain_insert(dal, sql, sizeof sql, &id);
    ck_assert_str_eq(sql, "INSERT INTO wm_food_7 (wm_poi_id, name) VALUES (7, 'a')");
    dal_close(dal);
}
END_TEST

/* Every one of the 100 tables is reached exactly once by DDL, on the node
 * the formula says. */
START_TEST(test_ddl_layout)
{
    dal_t *dal = open_mod(4);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    size_t i;

    ck_assert_int_eq(dal_explain(dal, NULL, "TRUNCATE TABLE wm_food", NULL, 0, &plan, &err), 0);
    ck_assert_uint_eq(dal_plan_count(plan), 100);
    for (i = 0; i < 100; i++) {
        char want_ds[16], want_table[32];
        snprintf(want_ds, sizeof want_ds, "db%zu", i / 25);
        snprintf(want_table, sizeof want_table, "wm_food_%zu", i);
        ck_assert_str_eq(dal_plan_datasource(plan, i), want_ds);
        ck_assert_str_eq(dal_plan_table(plan, i), want_table);
    }
    dal_plan_free(plan);
    dal_close(dal);
}
END_TEST

/* Typed shard values agree with the string form. */
START_TEST(test_typed_values)
{
    dal_t *dal = open_mod(4);
    dal_query_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_value_t v;
    dal_error_t err;
    int64_t x;

    memset(&opts, 0, sizeof opts);
    opts.shard_value = &v;
    for (x = 0; x < 1000; x += 7) {
        char want[32];
        v = dal_int(x);
        ck_assert_int_eq(dal_explain(dal, &opts, "SELECT * FROM wm_food", NULL, 0, &plan, &err),
                         0);
        snprintf(want, sizeof want, "wm_food_%d", (int)(x % 100));
        ck_assert_str_eq(dal_plan_table(plan, 0), want);
        dal_plan_free(plan);
    }
    v = dal_double(3.0);
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT * FROM wm_food", NULL, 0, &plan, &err),
                     DAL_ESHARD);
    v = dal_null();
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT * FROM wm_food", NULL, 0, &plan, &err),
                     DAL_ESHARD);
    dal_close(dal);
}
END_TEST

/* Parameters of every type render as SQL literals. */
START_TEST(test_param_types)
{
    dal_t *dal = open_mod(4);
    dal_query_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_value_t sv = dal_int(1), p[6];
    dal_error_t err;

    memset(&opts, 0, sizeof opts);
    opts.shard_value = &sv;
    p[0] = dal_null();
    p[1] = dal_int(-5);
    p[2] = dal_uint(18446744073709551615ull);
    p[3] = dal_double(0.25);
    p[4] = dal_strn("a\0b\n\x1a\"", 6);
    p[5] = dal_blob("\x01\xff", 2);
    ck_assert_int_eq(dal_explain(dal, &opts, "INSERT INTO wm_food VALUES (?, ?, ?, ?, ?, ?)", p,
                                 6, &plan, &err),
                     0);
    ck_assert_str_eq(dal_plan_sql(plan, 0),
                     "INSERT INTO wm_food_1 VALUES (NULL, -5, 18446744073709551615, 0.25, "
                     "'a\\0b\\n\\Z\\\"', X'01FF')");
    dal_plan_free(plan);
    p[3] = dal_double(1.0 / 0.0);
    ck_assert_int_eq(dal_explain(dal, &opts, "INSERT INTO wm_food VALUES (?, ?, ?, ?, ?, ?)", p,
                                 6, &plan, &err),
                     DAL_EINVAL);
    dal_close(dal);
}
END_TEST

/* A trace id rides in front of every physical statement; one that could
 * end the comment is refused. */
START_TEST(test_trace_id)
{
    dal_t *dal = open_mod(4);
    dal_query_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    size_t i;

    memset(&opts, 0, sizeof opts);
    opts.trace_id = "req-42.a:b_c";
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT * FROM wm_food WHERE wm_poi_id IN (1, 2)",
                                 NULL, 0, &plan, &err), 0);
    ck_assert_uint_eq(dal_plan_count(plan), 2);
    for (i = 0; i < 2; i++)
        ck_assert_msg(strncmp(dal_plan_sql(plan, i), "/* trace_id=req-42.a:b_c */ SELECT", 34) == 0,
                      "%s", dal_plan_sql(plan, i));
    dal_plan_free(plan);
    opts.trace_id = "x */ DROP TABLE t; /*";
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT 1", NULL, 0, &plan, &err), DAL_EINVAL);
    opts.trace_id = "";
    ck_assert_int_eq(dal_explain(dal, &opts, "SELECT 1", NULL, 0, &plan, &err), DAL_EINVAL);
    dal_close(dal);
}
END_TEST

START_TEST(test_log_callback_and_version)
{
    ck_assert_str_eq(dal_version(), DAL_VERSION_STRING);
    ck_assert_str_eq(dal_strerror(DAL_ECONFIG), "DAL_ECONFIG");
    ck_assert_str_eq(dal_log_level_name(DAL_LOG_WARN), "warn");
}
END_TEST

/* ------------------------------------------------------ read-write split */

/* db0 has two replicas, solo none; explain never connects, so replicas not
 * checked yet count as in rotation. */
static dal_t *open_rw(void)
{
    static const char text[] =
        "[dal]\ndefault_datasource = db0\n"
        "[datasource db0]\nmaster = mysql://u:pw@127.0.0.1:1/p0\n"
        "replicas = mysql://u:pw@127.0.0.1:2/p0, mysql://u:pw@127.0.0.1:3/p0\n"
        "[datasource solo]\nmaster = mysql://u:pw@127.0.0.1:4/p1\n"
        "[table t]\ndatasource = db0\n[table u]\ndatasource = solo\n";
    char *ini = tu_write(dir, "rw.ini", text);
    dal_error_t err;
    dal_t *dal = NULL;

    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
    return dal;
}

typedef struct rw_case {
    const char *sql;
    int server;             /* dal_query_opts_t.server */
    const char *role;       /* expected, or NULL for an error */
    int code;
} rw_case_t;

static const rw_case_t rw_cases[] = {
    {"SELECT * FROM t", 0, "replica", 0},
    {"SELECT * FROM t FOR UPDATE", 0, "master", 0},
    {"SELECT * FROM t LOCK IN SHARE MODE", 0, "master", 0},
    {"INSERT INTO t VALUES (1)", 0, "master", 0},
    {"UPDATE t SET a = 1", 0, "master", 0},
    {"SELECT LAST_INSERT_ID() FROM t", 0, "master", 0},
    {"SELECT NEXT VALUE FOR seq", 0, "master", 0},
    {"SHOW TABLES", 0, "master", 0},
    {"/*+ dal master */ SELECT * FROM t", 0, "master", 0},
    {"SELECT /*+ dal server=master */ * FROM t", 0, "master", 0},
    {"/*+ dal server=replica */ SELECT * FROM t FOR UPDATE", 0, "replica", 0},
    {"/*+ dal replica */ SELECT GET_LOCK('a', 1)", 0, "replica", 0},
    {"SELECT * FROM t", DAL_SERVER_MASTER, "master", 0},
    {"SELECT * FROM t FOR UPDATE", DAL_SERVER_REPLICA, "replica", 0},
    {"/*+ dal replica */ SELECT * FROM t", DAL_SERVER_MASTER, "master", 0},
    {"SELECT * FROM u", 0, "master", 0},
    {"SELECT * FROM u", DAL_SERVER_REPLICA, "master", 0},
    {"DELETE FROM t", DAL_SERVER_REPLICA, NULL, DAL_EROUTE},
    {"/*+ dal replica */ INSERT INTO t VALUES (1)", 0, NULL, DAL_EROUTE},
    {"/*+ dal server=primary */ SELECT * FROM t", 0, NULL, DAL_EINVAL},
    {"/*+ dal master=yes */ SELECT * FROM t", 0, NULL, DAL_ESQL},
    {"/*+ dal master */ /*+ dal replica */ SELECT * FROM t", 0, NULL, DAL_EINVAL},
    {"SELECT * FROM t", 9, NULL, DAL_EINVAL},
};

START_TEST(test_rw_explain)
{
    const rw_case_t *c = &rw_cases[_i];
    dal_t *dal = open_rw();
    dal_query_opts_t o;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    int rc;

    memset(&o, 0, sizeof o);
    o.server = c->server;
    rc = dal_explain(dal, &o, c->sql, NULL, 0, &plan, &err);
    ck_assert_msg(rc == c->code, "%s: %s (%s)", c->sql, dal_strerror(rc), rc ? err.message : "");
    if (rc == 0) {
        const char *srv = dal_plan_server(plan, 0);
        ck_assert_str_eq(dal_plan_role(plan, 0), c->role);
        if (strcmp(c->role, "master") == 0)
            ck_assert(strcmp(srv, "127.0.0.1:1") == 0 || strcmp(srv, "127.0.0.1:4") == 0);
        else
            ck_assert(strcmp(srv, "127.0.0.1:2") == 0 || strcmp(srv, "127.0.0.1:3") == 0);
    }
    dal_plan_free(plan);
    dal_close(dal);
}
END_TEST

/* round_robin takes the replicas in turn. */
START_TEST(test_rw_round_robin)
{
    dal_t *dal = open_rw();
    char first[64] = "";
    dal_plan_t *plan;
    dal_error_t err;
    int i;

    for (i = 0; i < 6; i++) {
        plan = NULL;
        ck_assert_int_eq(dal_explain(dal, NULL, "SELECT * FROM t", NULL, 0, &plan, &err), 0);
        if (i == 0)
            snprintf(first, sizeof first, "%s", dal_plan_server(plan, 0));
        else
            ck_assert_int_eq(strcmp(dal_plan_server(plan, 0), first) == 0, i % 2 == 0);
        dal_plan_free(plan);
    }
    ck_assert_ptr_null(dal_plan_role(NULL, 0));
    dal_close(dal);
}
END_TEST

static int gtid(const char *text, dal_gtid_t *g)
{
    return gtid_parse(text, strlen(text), g);
}

static int gpos(const char *text, dal_gtid_pos_t *pos)
{
    return gtid_pos_parse(text, strlen(text), pos);
}

START_TEST(test_gtid)
{
    dal_gtid_pos_t pos;
    dal_gtid_t g;

    ck_assert_int_eq(gtid("0-1-42", &g), 0);
    ck_assert(g.domain == 0 && g.server == 1 && g.seq == 42);
    ck_assert_int_eq(gtid("4294967295-7-18446744073709551615", &g), 0);
    ck_assert(g.domain == 4294967295u && g.seq == UINT64_MAX);
    ck_assert_int_eq(gtid("4294967296-1-1", &g), -1);
    ck_assert_int_eq(gtid("0-1", &g), -1);
    ck_assert_int_eq(gtid("0-1-", &g), -1);
    ck_assert_int_eq(gtid("0-1-2x", &g), -1);
    ck_assert_int_eq(gtid("", &g), -1);
    ck_assert_int_eq(gpos("", &pos), 0);
    ck_assert_uint_eq(pos.n, 0);
    ck_assert_int_eq(gpos(" 0-1-5 ,\n1-2-7", &pos), 0);
    ck_assert_uint_eq(pos.n, 2);
    g.domain = 1;
    g.seq = 7;
    ck_assert(gtid_pos_covers(&pos, &g));
    g.seq = 8;
    ck_assert(!gtid_pos_covers(&pos, &g));
    g.domain = 2;
    g.seq = 1;
    ck_assert(!gtid_pos_covers(&pos, &g));
    ck_assert_int_eq(gpos("0-1-5,,x", &pos), -1);
    /* more domains than kept */
    ck_assert_int_eq(gpos("0-1-1,1-1-1,2-1-1,3-1-1,4-1-1,5-1-1,6-1-1,7-1-1,8-1-1", &pos), -1);
}
END_TEST

static void *mask_of_thread(void *arg)
{
    pthread_sigmask(SIG_SETMASK, NULL, arg);
    return NULL;
}

/* The host's thread_create: the new thread blocks every signal (SIGTERM
 * among them), the caller's mask stays as it was. */
START_TEST(test_thread_create)
{
    const dal_host_api_t *api = dal_host_api();
    sigset_t none, inside, after;
    pthread_t t;

    ck_assert(DAL_HAS_FIELD(dal_host_api_t, api, thread_create));
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    sigemptyset(&inside);
    ck_assert_int_eq(api->thread_create(&t, mask_of_thread, &inside), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert(sigismember(&inside, SIGTERM) == 1 && sigismember(&inside, SIGINT) == 1);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    ck_assert_int_eq(sigismember(&after, SIGTERM), 0);
}
END_TEST

/* Whether the thread whose /proc status file is path blocks every signal it
 * can: all but SIGKILL and SIGSTOP (the kernel refuses those) and glibc's
 * own two between 31 and SIGRTMIN (pthread_sigmask never blocks them). */
static int blocks_all(const char *path, unsigned long long *mask)
{
    char line[256];
    FILE *f = fopen(path, "r");
    int sig, ok = 0;

    *mask = 0;
    if (f == NULL)
        return 1;   /* the thread ended between readdir and open: nothing to judge */
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "SigBlk: %llx", mask) == 1)
            ok = 1;
    fclose(f);
    for (sig = 1; ok && sig <= SIGRTMAX; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= SIGRTMIN) &&
            !(*mask & 1ull << (sig - 1)))
            ok = 0;
    return ok;
}

/* Check every thread of the process but the caller; the number checked. */
static int check_other_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    char path[300];
    unsigned long long mask;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == gettid())
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        ck_assert_msg(blocks_all(path, &mask), "thread %s of dal blocks only %016llx",
                      e->d_name, mask);
        n++;
    }
    closedir(d);
    return n;
}

/* Every thread dal starts, the core's and the plugins', blocks every
 * signal, although the thread that opened dal blocks none: an application
 * that waits for SIGTERM with sigwait gets it, not one of them.  The
 * servers are never reachable; each thread starts without one. */
START_TEST(test_threads_block_signals)
{
    char text[2048];
    char *ini;
    sigset_t none;
    dal_t *dal = NULL;
    dal_result_t *res = NULL;
    dal_error_t err;

    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    snprintf(text, sizeof text,
             "[dal]\nwatch = true\npool = default\npool.acquire_timeout = 100ms\n"
             "xa_log = db0\n"
             "[datasource db0]\nmaster = mysql://u:pw@127.0.0.1:1/p0\n"
             "replicas = mysql://u:pw@127.0.0.1:2/p0\n"
             "[table t]\ndatasource = db0\n"
             "[idgen leaf]\nplugin = leaf\ndatasource = db0\n"
             "[idgen flake]\nplugin = snowflake\nlease_datasource = db0\n"
             "[monitor prometheus]\naddress = 127.0.0.1:0\n"
             "[monitor slowlog]\npath = %s/slow.log\n", dir);
    ini = tu_write(dir, "dal.ini", text);
    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
    /* a read starts the replica health check (it fails: no server) */
    ck_assert_int_ne(dal_query(dal, NULL, "SELECT * FROM t", NULL, 0, &res, &err), 0);
    /* the file watcher, XA recovery, the pool sampler, a pool keeper for
     * each of the two servers, the leaf loader, the snowflake lease, the
     * Prometheus listener, the slow log writer and the health check */
    ck_assert_int_ge(check_other_threads(), 10);
    dal_close(dal);
}
END_TEST

static Suite *core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("loader");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_load_errors, 0, sizeof load_cases / sizeof load_cases[0]);
    tcase_add_test(tc, test_duplicate_plugin);
    tcase_add_test(tc, test_scan);
    tcase_add_test(tc, test_thread_create);
    tcase_add_test(tc, test_threads_block_signals);
    suite_add_tcase(s, tc);
    tc = tcase_create("routing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_routes, 0, sizeof route_cases / sizeof route_cases[0]);
    tcase_add_test(tc, test_ddl_layout);
    tcase_add_test(tc, test_route_memo);
    tcase_add_test(tc, test_nul_rewrite);
    tcase_add_test(tc, test_route_no_table);
    tcase_add_test(tc, test_route_memo_reload);
    tcase_add_loop_test(tc, test_scopes, 0, sizeof scope_cases / sizeof scope_cases[0]);
    tcase_add_test(tc, test_fill_memo);
    tcase_add_test(tc, test_typed_values);
    tcase_add_test(tc, test_param_types);
    tcase_add_test(tc, test_log_callback_and_version);
    tcase_add_test(tc, test_trace_id);
    suite_add_tcase(s, tc);
    tc = tcase_create("read-write split");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_rw_explain, 0, sizeof rw_cases / sizeof rw_cases[0]);
    tcase_add_test(tc, test_rw_round_robin);
    tcase_add_test(tc, test_gtid);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(core_suite(), CK_FORK_GETENV);

    return status;
}
