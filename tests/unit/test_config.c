/*
 * test_config.c -- the INI reader: good and bad files, passwords masked in
 * its messages, ${VAR} expansion, the key tables.  Datasource URLs are
 * tested in test_url.c, the value parsers in test_parse.c.
 *
 * Most tests are tables: one row per input, so a new mistake to cover is
 * one more line.  Every bad config is written to a temporary file, loaded,
 * and its message checked for the exact "FILE:LINE: " prefix, a telling
 * substring, and the absence of any password used in the file (all test
 * passwords contain "S3cret").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "url.h"
#include "check_run.h"

#define SECRET "S3cret"   /* part of every password in this file */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ helpers */

/* Write text to a new temporary file; the path is owned by the caller. */
static char *write_temp(const char *text)
{
    const char *dir = getenv("TMPDIR");
    char *path = NULL;
    FILE *fp;
    int fd;

    ck_assert_int_ge(asprintf(&path, "%s/dal_test_config_XXXXXX", dir ? dir : "/tmp"), 0);
    fd = mkstemp(path);
    ck_assert_msg(fd >= 0, "mkstemp %s failed", path);
    fp = fdopen(fd, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fputs(text, fp) >= 0, 1);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

static void env_setup(void)
{
    setenv("DAL_TEST_PW", SECRET "Env", 1);
    setenv("DAL_TEST_HOST", "db.example.com", 1);
    setenv("DAL_TEST_EMPTY", "", 1);
    unsetenv("DAL_TEST_UNSET");
}

/* ------------------------------------------------------- a good config */

/* A datasource name longer than inih's 49-character section buffer. */
#define LONG_DS "a_datasource_name_longer_than_inih_keeps_for_sections_x"

static const char good_ini[] =
    "\xEF\xBB\xBF; dal test configuration\r\n"                                   /* 1 */
    "# both comment styles\n"                                                     /* 2 */
    "[dal]\n"                                                                     /* 3 */
    "plugin_dir = /opt/dal/plugins   ; inline comment\n"                          /* 4 */
    "default_datasource = main\n"                                                 /* 5 */
    "\n"                                                                          /* 6 */
    "[datasource main]\n"                                                         /* 7 */
    "master = mysql://app%20user:p%40ss%3Aw%2Frd@[2001:db8::1]:3307/shop%2Ddb?ssl_mode=verify_ca&ssl_ca=/etc/ca.pem\n" /* 8 */
    "connect_timeout = 250ms\n"                                                   /* 9 */
    "read_timeout = 0\n"                                                          /* 10 */
    "  [datasource dbProductSku0]\n"                                              /* 11 */
    "    master = mariadb://reader:${DAL_TEST_PW}@${DAL_TEST_HOST}/product_0?socket=/run/mysqld/mysqld.sock&charset=latin1\n" /* 12 */
    "[datasource dbProductSku1]\n"                                                /* 13 */
    "master = mysql://reader:pa$$word$@db1/product_1?connect_timeout=2s\n"        /* 14 */
    "read_timeout = 2m\n"                                                         /* 15 */
    "[datasource " LONG_DS "]\n"                                                  /* 16 */
    "master = mysql://root@localhost\n"                                           /* 17 */
    "\n"                                                                          /* 18 */
    "[table wm_food]\n"                                                           /* 19 */
    "datasource = dbProductSku\n"                                                 /* 20 */
    "db_shard_num = 2\n"                                                          /* 21 */
    "table_shard_num = 100\n"                                                     /* 22 */
    "shard_key = wm_poi_id\n"                                                     /* 23 */
    "strategy = mod\n"                                                            /* 24 */
    "strategy.bounds = 0, 100, 200\n"                                             /* 25 */
    "strategy.note = ${DAL_TEST_EMPTY}x\n"                                        /* 26 */
    "[table wm_poi]   ; not sharded\n"                                            /* 27 */
    "datasource = " LONG_DS "\n";                                                 /* 28 */

START_TEST(test_good_config)
{
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    const dal_cfg_datasource_t *ds;
    const dal_cfg_table_t *t;
    char *path;

    env_setup();
    path = write_temp(good_ini);
    ck_assert_msg(config_load(path, &cfg, &err) == 0, "load failed: %s", err.message);
    ck_assert_str_eq(cfg->path, path);
    ck_assert_str_eq(cfg->plugin_dir, "/opt/dal/plugins");
    ck_assert_int_eq(cfg->plugin_dir_line, 4);
    ck_assert_str_eq(cfg->default_datasource, "main");
    ck_assert_int_eq(cfg->default_datasource_line, 5);
    ck_assert_uint_eq(cfg->ndatasources, 4);
    ck_assert_uint_eq(cfg->ntables, 2);
    /* defaults of the keys the file does not give */
    ck_assert_uint_eq(cfg->max_parallel, 8);
    ck_assert_uint_eq(cfg->sql_cache_bytes, 64u << 20);
    ck_assert_uint_eq(cfg->sql_cache_max_statement, 64u << 10);
    ck_assert_int_eq(cfg->watch, 0);
    ck_assert_int_eq(cfg->validate_connect, 0);
    ck_assert_int_eq(cfg->allow_reshard, 0);
    ck_assert_int_eq(cfg->local_infile, 0);
    ck_assert_int_eq(cfg->datasources[0].local_infile, 0);
    ck_assert_ptr_null(cfg->pool);
    ck_assert_uint_eq(cfg->pool_params.n, 0);
    ck_assert_uint_eq(cfg->nidgens, 0);
    ck_assert_uint_eq(cfg->nmonitors, 0);

    ds = &cfg->datasources[0];
    ck_assert_str_eq(ds->name, "main");
    ck_assert_int_eq(ds->line, 7);
    ck_assert_int_eq(ds->master_line, 8);
    ck_assert_str_eq(ds->master.user, "app user");
    ck_assert_str_eq(ds->master.password, "p@ss:w/rd");
    ck_assert_str_eq(ds->master.host, "2001:db8::1");
    ck_assert_uint_eq(ds->master.port, 3307);
    ck_assert_str_eq(ds->master.database, "shop-db");
    ck_assert_str_eq(ds->master.ssl_mode, "VERIFY_CA");
    ck_assert_str_eq(ds->master.ssl_ca, "/etc/ca.pem");
    ck_assert_str_eq(ds->master.charset, "utf8mb4");
    ck_assert_ptr_null(ds->master.socket);
    ck_assert_str_eq(ds->master.display, "app user@[2001:db8::1]:3307/shop-db");
    ck_assert_uint_eq(ds->connect_timeout_ms, 250);
    ck_assert_uint_eq(ds->read_timeout_ms, 0);
    ck_assert_uint_eq(ds->nreplicas, 0);
    ck_assert_ptr_null(ds->replicas);
    ck_assert_int_eq(ds->replicas_line, 0);
    ck_assert_int_eq(ds->load_balance, DAL_LB_ROUND_ROBIN);
    ck_assert_uint_eq(ds->max_replica_lag_ms, 5000);
    ck_assert_uint_eq(ds->health_check_ms, 1000);
    ck_assert_int_eq(ds->read_your_writes, 1);
    ck_assert_uint_eq(ds->pool_params.n, 0);

    ds = &cfg->datasources[1];
    ck_assert_str_eq(ds->name, "dbProductSku0");
    ck_assert_int_eq(ds->line, 11);
    ck_assert_int_eq(ds->master_line, 12);
    ck_assert_str_eq(ds->master.user, "reader");
    ck_assert_str_eq(ds->master.password, SECRET "Env");
    ck_assert_str_eq(ds->master.host, "db.example.com");
    ck_assert_uint_eq(ds->master.port, 3306);
    ck_assert_str_eq(ds->master.socket, "/run/mysqld/mysqld.sock");
    ck_assert_str_eq(ds->master.charset, "latin1");
    ck_assert_str_eq(ds->master.display, "reader@socket:/run/mysqld/mysqld.sock/product_0");
    ck_assert_ptr_null(strstr(ds->master.display, SECRET));
    ck_assert_uint_eq(ds->connect_timeout_ms, 5000);
    ck_assert_uint_eq(ds->read_timeout_ms, 30000);

    ds = config_datasource(cfg, "dbProductSku1");
    ck_assert_ptr_eq(ds, &cfg->datasources[2]);
    ck_assert_str_eq(ds->master.password, "pa$word$");
    ck_assert_uint_eq(ds->connect_timeout_ms, 2000);   /* taken from the URL */
    ck_assert_uint_eq(ds->read_timeout_ms, 120000);

    ds = config_datasource(cfg, LONG_DS);
    ck_assert_ptr_nonnull(ds);
    ck_assert_str_eq(ds->master.host, "localhost");
    ck_assert_ptr_null(ds->master.password);
    ck_assert_ptr_null(ds->master.database);
    ck_assert_str_eq(ds->master.display, "root@localhost:3306");
    ck_assert_ptr_null(config_datasource(cfg, "MAIN"));   /* exact names */

    t = config_table(cfg, "WM_Food");   /* case-insensitive */
    ck_assert_ptr_eq(t, &cfg->tables[0]);
    ck_assert_str_eq(t->name, "wm_food");
    ck_assert_int_eq(t->line, 19);
    ck_assert_str_eq(t->datasource, "dbProductSku");
    ck_assert_int_eq(t->datasource_line, 20);
    ck_assert_uint_eq(t->db_shard_num, 2);
    ck_assert_uint_eq(t->table_shard_num, 100);
    ck_assert_str_eq(t->shard_key, "wm_poi_id");
    ck_assert_str_eq(t->strategy, "mod");
    ck_assert_int_eq(t->strategy_line, 24);
    ck_assert_uint_eq(t->strategy_params.n, 2);
    ck_assert_str_eq(t->strategy_params.items[0].name, "bounds");
    ck_assert_str_eq(t->strategy_params.items[0].value, "0, 100, 200");
    ck_assert_int_eq(t->strategy_params.items[0].line, 25);
    ck_assert_str_eq(t->strategy_params.items[1].name, "note");
    ck_assert_str_eq(t->strategy_params.items[1].value, "x");
    ck_assert_int_eq(t->strategy_params.items[1].line, 26);
    ck_assert_int_eq(t->kind, DAL_TABLE_SHARDED);
    ck_assert_int_eq(t->allow_scatter, 1);
    ck_assert_ptr_null(t->binding);
    ck_assert_ptr_null(t->id_column);
    ck_assert_ptr_null(t->idgen);

    t = &cfg->tables[1];
    ck_assert_str_eq(t->name, "wm_poi");
    ck_assert_str_eq(t->datasource, LONG_DS);
    ck_assert_uint_eq(t->db_shard_num, 1);
    ck_assert_uint_eq(t->table_shard_num, 1);
    ck_assert_ptr_null(t->shard_key);
    ck_assert_ptr_null(t->strategy);
    ck_assert_uint_eq(t->strategy_params.n, 0);
    ck_assert_int_eq(t->kind, DAL_TABLE_SINGLE);
    ck_assert_int_eq(t->allow_scatter, 1);
    ck_assert_ptr_null(config_table(cfg, "nope"));

    config_free(cfg);
    unlink(path);
    free(path);
}
END_TEST

/* Every key added for replicas, binding groups, broadcast tables, ids and monitors. */
static const char full_ini[] =
    "[dal]\n"                                                                       /* 1 */
    "max_parallel = 16\n"                                                           /* 2 */
    "watch = yes\n"                                                                 /* 3 */
    "validate_connect = true\n"                                                     /* 4 */
    "allow_reshard = on\n"                                                          /* 5 */
    "pool = default\n"                                                              /* 6 */
    "pool.max_idle = 4\n"                                                           /* 7 */
    "pool.idle_timeout = 60s\n"                                                     /* 8 */
    "[datasource main]\n"                                                           /* 9 */
    "master = mysql://app:" SECRET "M@10.0.0.1/shop\n"                              /* 10 */
    /* a ',' inside a password, a blank before a separator, any-case scheme */
    "replicas = mysql://ro:" SECRET ",1@10.0.0.2/shop?weight=3 ,MariaDB://ro:" SECRET "2@10.0.0.3:3307/shop,"
    "mysql://ro@10.0.0.4/shop?weight=1000&ssl_mode=required\n"                      /* 11 */
    "load_balance = Weighted\n"                                                     /* 12 */
    "max_replica_lag = 0\n"                                                         /* 13 */
    "health_check_interval = 250ms\n"                                               /* 14 */
    "read_your_writes = 2s\n"                                                       /* 15 */
    "pool.max_idle = 8\n"                                                           /* 16 */
    "[datasource other]\n"                                                          /* 17 */
    "master = mysql://root@h\n"                                                     /* 18 */
    "read_your_writes = off\n"                                                      /* 19 */
    "replicas = mysql://u:${DAL_TEST_PW}@r1\n"                                      /* 20 */
    "load_balance = least_outstanding\n"                                            /* 21 */
    "[datasource g0]\n"                                                             /* 22 */
    "master = mysql://root@g0\n"                                                    /* 23 */
    "[datasource g1]\n"                                                             /* 24 */
    "master = mysql://root@g1\n"                                                    /* 25 */
    "read_your_writes = session\n"                                                  /* 26 */
    "[table t_order]\n"                                                             /* 27 */
    "datasource = g\n"                                                              /* 28 */
    "db_shard_num = 2\n"                                                            /* 29 */
    "table_shard_num = 8\n"                                                         /* 30 */
    "shard_key = user_id\n"                                                         /* 31 */
    "strategy = mod\n"                                                              /* 32 */
    "strategy.a = 1\n"                                                              /* 33 */
    "strategy.b = x\n"                                                              /* 34 */
    "binding = orders\n"                                                            /* 35 */
    "id_column = id\n"                                                              /* 36 */
    "idgen = order.ids\n"                                                           /* 37 */
    "allow_scatter = false\n"                                                       /* 38 */
    "[table t_item]\n"                                                              /* 39 */
    "binding = orders\n"                                                            /* 40 */
    "datasource = g\n"                                                              /* 41 */
    "db_shard_num = 2\n"                                                            /* 42 */
    "table_shard_num = 8\n"                                                         /* 43 */
    "shard_key = order_user\n"                                                      /* 44 */
    "strategy = mod\n"                                                              /* 45 */
    "strategy.b = x\n"                                                              /* 46: order does not matter */
    "strategy.a = 1\n"                                                              /* 47 */
    "[table region]\n"                                                              /* 48 */
    "broadcast = true\n"                                                            /* 49 */
    "datasource = g\n"                                                              /* 50 */
    "db_shard_num = 2\n"                                                            /* 51 */
    "id_column = region_id\n"                                                       /* 52 */
    "idgen = order.ids\n"                                                           /* 53 */
    "[table settings]\n"                                                            /* 54 */
    "datasource = main\n"                                                           /* 55 */
    "broadcast = false\n"                                                           /* 56 */
    "[idgen order.ids]\n"                                                           /* 57 */
    "datasource = main\n"                                                           /* 58 */
    "plugin = leaf\n"                                                               /* 59 */
    "step = 1000\n"                                                                 /* 60 */
    "[monitor prometheus]\n"                                                        /* 61 */
    "port = 9100\n"                                                                 /* 62 */
    "[monitor Slow-Log]\n"                                                          /* 63 */
    "plugin = log\n"                                                                /* 64 */
    "enabled = false\n";                                                            /* 65 */

static void check_param(const dal_cfg_params_t *pp, size_t i, const char *name, const char *value, int line)
{
    ck_assert_uint_gt(pp->n, i);
    ck_assert_str_eq(pp->items[i].name, name);
    ck_assert_str_eq(pp->items[i].value, value);
    ck_assert_int_eq(pp->items[i].line, line);
}

static void check_full_datasources(const dal_config_t *cfg)
{
    const dal_cfg_datasource_t *ds = config_datasource(cfg, "main");
    const dal_cfg_replica_t *r = ds->replicas;

    ck_assert_uint_eq(ds->nreplicas, 3);
    ck_assert_int_eq(ds->replicas_line, 11);
    ck_assert_str_eq(r[0].url.password, SECRET ",1");
    ck_assert_str_eq(r[0].url.host, "10.0.0.2");
    ck_assert_str_eq(r[0].url.database, "shop");
    ck_assert_uint_eq(r[0].weight, 3);
    ck_assert_str_eq(r[1].url.password, SECRET "2");
    ck_assert_uint_eq(r[1].url.port, 3307);
    ck_assert_uint_eq(r[1].weight, 1);
    ck_assert_ptr_null(r[2].url.password);
    ck_assert_str_eq(r[2].url.ssl_mode, "REQUIRED");
    ck_assert_uint_eq(r[2].weight, 1000);
    ck_assert_str_eq(r[2].url.display, "ro@10.0.0.4:3306/shop");
    ck_assert_ptr_null(strstr(r[0].url.display, SECRET));
    ck_assert_int_eq(ds->load_balance, DAL_LB_WEIGHTED);
    ck_assert_uint_eq(ds->max_replica_lag_ms, 0);
    ck_assert_uint_eq(ds->health_check_ms, 250);
    ck_assert_int_eq(ds->read_your_writes, 2);
    ck_assert_uint_eq(ds->ryw_window_ms, 2000);
    ck_assert_uint_eq(ds->pool_params.n, 1);
    check_param(&ds->pool_params, 0, "max_idle", "8", 16);

    ds = config_datasource(cfg, "other");
    ck_assert_uint_eq(ds->nreplicas, 1);
    ck_assert_str_eq(ds->replicas[0].url.password, SECRET "Env");
    ck_assert_str_eq(ds->replicas[0].url.host, "r1");
    ck_assert_int_eq(ds->read_your_writes, 0);
    ck_assert_int_eq(ds->load_balance, DAL_LB_LEAST_OUTSTANDING);
    ck_assert_int_eq(config_datasource(cfg, "g1")->read_your_writes, 1);
}

static void check_full_tables(const dal_config_t *cfg)
{
    const dal_cfg_table_t *t = config_table(cfg, "t_order");

    ck_assert_int_eq(t->kind, DAL_TABLE_SHARDED);
    ck_assert_str_eq(t->binding, "orders");
    ck_assert_int_eq(t->binding_line, 35);
    ck_assert_str_eq(t->id_column, "id");
    ck_assert_str_eq(t->idgen, "order.ids");
    ck_assert_int_eq(t->idgen_line, 37);
    ck_assert_int_eq(t->allow_scatter, 0);

    t = config_table(cfg, "t_item");
    ck_assert_int_eq(t->kind, DAL_TABLE_SHARDED);
    ck_assert_str_eq(t->binding, "orders");
    ck_assert_int_eq(t->binding_line, 40);
    ck_assert_ptr_null(t->idgen);
    ck_assert_int_eq(t->allow_scatter, 1);

    t = config_table(cfg, "region");
    ck_assert_int_eq(t->kind, DAL_TABLE_BROADCAST);
    ck_assert_str_eq(t->datasource, "g");
    ck_assert_uint_eq(t->db_shard_num, 2);
    ck_assert_uint_eq(t->table_shard_num, 1);
    ck_assert_ptr_null(t->strategy);
    ck_assert_str_eq(t->id_column, "region_id");

    t = config_table(cfg, "settings");
    ck_assert_int_eq(t->kind, DAL_TABLE_SINGLE);
    ck_assert_uint_eq(t->db_shard_num, 1);
}

static void check_full_plugins(const dal_config_t *cfg)
{
    const dal_cfg_idgen_t *g = &cfg->idgens[0];
    const dal_cfg_monitor_t *m = &cfg->monitors[0];

    ck_assert_uint_eq(cfg->nidgens, 1);
    ck_assert_str_eq(g->name, "order.ids");
    ck_assert_int_eq(g->line, 57);
    ck_assert_str_eq(g->plugin, "leaf");
    ck_assert_int_eq(g->plugin_line, 59);
    ck_assert_uint_eq(g->params.n, 2);
    check_param(&g->params, 0, "datasource", "main", 58);
    check_param(&g->params, 1, "step", "1000", 60);

    ck_assert_uint_eq(cfg->nmonitors, 2);
    ck_assert_str_eq(m->name, "prometheus");
    ck_assert_str_eq(m->plugin, "prometheus");   /* the section's name */
    ck_assert_int_eq(m->plugin_line, 61);
    ck_assert_int_eq(m->enabled, 1);
    ck_assert_uint_eq(m->params.n, 1);
    check_param(&m->params, 0, "port", "9100", 62);
    m = &cfg->monitors[1];
    ck_assert_str_eq(m->name, "Slow-Log");
    ck_assert_str_eq(m->plugin, "log");
    ck_assert_int_eq(m->plugin_line, 64);
    ck_assert_int_eq(m->enabled, 0);
    ck_assert_uint_eq(m->params.n, 0);
}

START_TEST(test_full_config)
{
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    char *path;

    env_setup();
    path = write_temp(full_ini);
    ck_assert_msg(config_load(path, &cfg, &err) == 0, "load failed: %s", err.message);
    ck_assert_uint_eq(cfg->max_parallel, 16);
    ck_assert_int_eq(cfg->watch, 1);
    ck_assert_int_eq(cfg->validate_connect, 1);
    ck_assert_int_eq(cfg->allow_reshard, 1);
    ck_assert_str_eq(cfg->pool, "default");
    ck_assert_int_eq(cfg->pool_line, 6);
    ck_assert_uint_eq(cfg->pool_params.n, 2);
    check_param(&cfg->pool_params, 0, "max_idle", "4", 7);
    check_param(&cfg->pool_params, 1, "idle_timeout", "60s", 8);
    check_full_datasources(cfg);
    check_full_tables(cfg);
    check_full_plugins(cfg);
    config_free(cfg);
    unlink(path);
    free(path);
}
END_TEST

/* [dal] local_infile = on reaches every datasource, wherever the
 * sections are in the file. */
START_TEST(test_local_infile)
{
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    char *path = write_temp("[datasource a]\nmaster = mysql://u@h/db\n"
                            "[dal]\nlocal_infile = on\n"
                            "[datasource b]\nmaster = mysql://u@h2/db\n");

    ck_assert_msg(config_load(path, &cfg, &err) == 0, "load failed: %s", err.message);
    ck_assert_int_eq(cfg->local_infile, 1);
    ck_assert_int_eq(cfg->datasources[0].local_infile, 1);
    ck_assert_int_eq(cfg->datasources[1].local_infile, 1);
    config_free(cfg);
    unlink(path);
    free(path);
}
END_TEST

/* lookup and lookup_unique: each column once, in order, the unique ones
 * marked; the lookup tables are [table T_lookup_COL]. */
START_TEST(test_lookups)
{
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    char *path = write_temp("[datasource g0]\nmaster = mysql://u@h/db\n"
                            "[table o]\ndatasource = g\ndb_shard_num = 1\ntable_shard_num = 2\n"
                            "shard_key = uid\nstrategy = mod\n"
                            "lookup = ono , code\nlookup_unique = id\n"
                            "[table o_lookup_ono]\ndatasource = g\ndb_shard_num = 1\n"
                            "table_shard_num = 2\nshard_key = ono\nstrategy = mod\n"
                            "[table o_lookup_code]\ndatasource = g0\n"
                            "[table o_lookup_id]\ndatasource = g\ndb_shard_num = 1\n"
                            "table_shard_num = 1\nshard_key = id\nstrategy = mod\n");
    const dal_cfg_table_t *t;

    ck_assert_msg(config_load(path, &cfg, &err) == 0, "load failed: %s", err.message);
    t = config_table(cfg, "o");
    ck_assert_uint_eq(t->nlookups, 3);
    ck_assert_str_eq(t->lookups[0].column, "ono");
    ck_assert_str_eq(t->lookups[1].column, "code");
    ck_assert_str_eq(t->lookups[2].column, "id");
    ck_assert_int_eq(t->lookups[0].unique + t->lookups[1].unique, 0);
    ck_assert_int_eq(t->lookups[2].unique, 1);
    ck_assert_uint_eq(cfg->nlookups, 3);
    config_free(cfg);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(test_empty_and_missing_files)
{
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    char *path = write_temp("; nothing but a comment\n\n");

    ck_assert_int_eq(config_load(path, &cfg, &err), 0);
    ck_assert_uint_eq(cfg->ndatasources, 0);
    ck_assert_ptr_null(cfg->plugin_dir);
    config_free(cfg);
    unlink(path);

    ck_assert_int_eq(config_load(path, &cfg, &err), DAL_EIO);
    ck_assert_ptr_null(cfg);
    ck_assert_int_eq(err.code, DAL_EIO);
    ck_assert_int_eq(strncmp(err.message, path, strlen(path)), 0);
    ck_assert_str_eq(err.message + strlen(path), ": cannot open: No such file or directory");

    /* err may be NULL */
    ck_assert_int_eq(config_load(path, &cfg, NULL), DAL_EIO);
    config_free(NULL);
    free(path);
}
END_TEST

/* Sizes in bytes: a number, or with K, M, G (1024-based, KiB etc., any case). */
START_TEST(test_byte_sizes)
{
    static const struct {
        const char *text;
        uint32_t want;
    } cases[] = {
        {"0", 0}, {"65536", 65536}, {"16K", 16384}, {"16kib", 16384}, {"64M", 64u << 20},
        {" 2 MiB ", 2u << 20}, {"3g", 3u << 30}, {"4294967295", 4294967295u},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dal_config_t *cfg = NULL;
        dal_error_t err = {0};
        char text[128], *path;
        snprintf(text, sizeof text, "[dal]\nsql_cache_bytes = %s\nsql_cache_max_statement = %s\n",
                 cases[i].text, cases[i].text);
        path = write_temp(text);
        ck_assert_msg(config_load(path, &cfg, &err) == 0, "%s: %s", cases[i].text, err.message);
        ck_assert_uint_eq(cfg->sql_cache_bytes, cases[i].want);
        ck_assert_uint_eq(cfg->sql_cache_max_statement, cases[i].want);
        config_free(cfg);
        unlink(path);
        free(path);
    }
}
END_TEST

/* Bytes a text editor would not show: a NUL, and a directory for a file. */
START_TEST(test_unreadable_content)
{
    static const char nul_ini[] = "[dal]\nplugin_dir = /a\0b\n";
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    char *path = write_temp("");
    FILE *fp = fopen(path, "w");
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(nul_ini, 1, sizeof nul_ini - 1, fp), sizeof nul_ini - 1);
    fclose(fp);
    ck_assert_int_eq(config_load(path, &cfg, &err), DAL_ECONFIG);
    ck_assert_ptr_null(cfg);
    ck_assert_ptr_nonnull(strstr(err.message, ":2: line contains a NUL byte"));
    unlink(path);
    free(path);

    ck_assert_int_eq(config_load(dir, &cfg, &err), DAL_EIO);
    ck_assert_ptr_null(cfg);
    ck_assert_ptr_nonnull(strstr(err.message, ": cannot read: Is a directory"));
}
END_TEST

/* -------------------------------------------------------- bad configs */

/* Two lines: a datasource every row may use. */
#define DS_MAIN "[datasource main]\nmaster = mysql://root:" SECRET "Pw@127.0.0.1/app\n"
#define DS_G(n) "[datasource g" #n "]\nmaster = mysql://root:" SECRET "Pw@10.0.0." #n "/g\n"
#define SHARDED_T "[table t]\ndatasource = g\n"
/* A replica URL with a password, at the host given. */
#define REPLICA(host) "mysql://ro:" SECRET "Ro@" host "/app"
/* Seven lines (plus the params lines): a table in binding group bg, binding last. */
#define BOUND_T(name, ds, dbs, tables, params) \
    "[table " name "]\ndatasource = " ds "\ndb_shard_num = " dbs "\ntable_shard_num = " tables \
    "\nshard_key = id\nstrategy = mod\n" params "binding = bg\n"

struct bad_config {
    const char *ini;
    int line;
    const char *expect;   /* a substring of the message */
};

static const struct bad_config bad_configs[] = {
    /* sections */
    {"[foo]\n", 1, "unknown section [foo]"},
    {DS_MAIN "[tables t]\n", 3, "unknown section [tables t]"},
    {"[dal]\n[dal]\n", 2, "duplicate section [dal] (first at line 1)"},
    {DS_MAIN DS_MAIN, 3, "duplicate section [datasource main] (first at line 1)"},
    {DS_MAIN "[table T]\ndatasource = main\n[table t]\ndatasource = main\n", 5, "duplicate section [table t] (first at line 3)"},
    {"[dal x]\n", 1, "section [dal] takes no name"},
    {"[table]\n", 1, "section [table] needs a name"},
    {"[datasource a b]\n", 1, "bad datasource name 'a b'"},
    {"[table wm-food]\n", 1, "bad table name 'wm-food'"},
    {"[dal] extra\n", 1, "unexpected text after ']'"},
    {"[datasource main\nmaster = mysql://root:" SECRET "@h/db\n", 1, "missing ']'"},
    /* keys */
    {"plugin_dir = /x\n[dal]\n", 1, "key 'plugin_dir' is outside any section"},
    {"[dal]\nbogus = 1\n", 2, "unknown key 'bogus' in [dal]"},
    {DS_MAIN "port = 3306\n", 3, "unknown key 'port' in [datasource main]"},
    {DS_MAIN "[table wm_food]\ndatasource = main\nshardkey = id\n", 5, "unknown key 'shardkey' in [table wm_food]"},
    {DS_MAIN "read_timeout = 1s\nread_timeout = 2s\n", 4, "duplicate key 'read_timeout' (first given at line 3)"},
    {"[dal]\nplugin_dir =\n", 2, "plugin_dir: empty value"},
    {"[dal]\n= x\n", 2, "missing key before '='"},
    {DS_MAIN "[table t]\ndatasource = main\nstrategy. = 1\n", 5, "bad parameter name"},
    /* syntax */
    {"[dal]\nplugin_dir /usr/lib\n", 2, "syntax error: expected 'key = value'"},
    {DS_MAIN "mysql://root:" SECRET "@h/db\n", 3, "syntax error"},
    {"[datasource main]\nmaster: mysql://root:" SECRET "@h/db\n", 2, "syntax error"},
    {"[dal]\nplugin_dir = /x\n   continued\n", 3, "syntax error"},   /* not a multi-line value */
    {"[dal]\nplugin_dir ;= /x\n", 2, "syntax error"},
    /* required keys */
    {"[datasource main]\nread_timeout = 1s\n[dal]\n", 1, "[datasource main] has no master"},
    {"[datasource a]\n[datasource b]\n", 1, "[datasource a] has no master"},
    {DS_MAIN "[table t]\ndb_shard_num = 1\n", 3, "[table t] has no datasource"},
    {DS_G(0) SHARDED_T "shard_key = id\nstrategy = mod\n", 3, "[table t] is sharded but has no table_shard_num"},
    {DS_G(0) SHARDED_T "table_shard_num = 4\nstrategy = mod\n", 3, "[table t] is sharded but has no shard_key"},
    {DS_G(0) SHARDED_T "table_shard_num = 4\nshard_key = id\n", 3, "[table t] is sharded but has no strategy"},
    {DS_G(0) SHARDED_T "strategy.bounds = 1\n", 3, "is sharded but has no table_shard_num"},
    /* numbers */
    {DS_G(0) SHARDED_T "db_shard_num = abc\n", 5, "db_shard_num: expected a positive integer, got 'abc'"},
    {DS_G(0) SHARDED_T "db_shard_num = -1\n", 5, "db_shard_num: expected a positive integer, got '-1'"},
    {DS_G(0) SHARDED_T "table_shard_num = 0\n", 5, "table_shard_num: expected a positive integer, got '0'"},
    {DS_G(0) SHARDED_T "table_shard_num = 1.5\n", 5, "table_shard_num: expected a positive integer, got '1.5'"},
    {DS_G(0) SHARDED_T "table_shard_num = 12abc\n", 5, "expected a positive integer, got '12abc'"},
    {DS_G(0) SHARDED_T "table_shard_num = 99999999999999999999\n", 5, "table_shard_num: 99999999999999999999 is out of range (1..1048576)"},
    {DS_G(0) SHARDED_T "db_shard_num = 1048577\n", 5, "db_shard_num: 1048577 is out of range"},
    {DS_G(0) DS_G(1) DS_G(2) DS_G(3) SHARDED_T "db_shard_num = 4\ntable_shard_num = 10\nshard_key = id\nstrategy = mod\n",
     12, "table_shard_num (10) must be a multiple of db_shard_num (4)"},
    /* names */
    {DS_G(0) SHARDED_T "table_shard_num = 2\nshard_key = wm poi\n", 6, "shard_key: 'wm poi' is not a valid name"},
    {DS_G(0) SHARDED_T "table_shard_num = 2\nshard_key = id\nstrategy = Mod\n", 7, "strategy: 'Mod' is not a valid name"},
    {"[table t]\ndatasource = a/b\n", 2, "datasource: 'a/b' is not a valid name"},
    /* references checked after the whole file */
    {DS_G(0) DS_G(1) DS_G(3) SHARDED_T "db_shard_num = 4\ntable_shard_num = 8\nshard_key = id\nstrategy = mod\n",
     8, "group 'g' needs [datasource g2] (db_shard_num = 4), which is not defined"},
    {DS_MAIN "[table t]\ndatasource = nope\n", 4, "datasource: no [datasource nope] is defined"},
    {DS_MAIN "[table t]\ndatasource = g\n" DS_G(0), 4, "no [datasource g] is defined"},
    {"[dal]\ndefault_datasource = nope\n" DS_MAIN, 2, "default_datasource: no [datasource nope] is defined"},
    {DS_MAIN "[table t]\ndatasource = nope\n[dal]\ndefault_datasource = nope2\n", 4, "no [datasource nope]"},
    {"[dal]\ndefault_datasource = x\n" DS_MAIN "[table t]\ndatasource = y\n", 2, "no [datasource x]"},
    /* datasource keys */
    {DS_MAIN "connect_timeout = 5 sec\n", 3, "connect_timeout: expected a duration such as 250ms, 5s, 2m or 1h, got '5 sec'"},
    {DS_MAIN "read_timeout = -1s\n", 3, "read_timeout: expected a duration"},
    {DS_MAIN "read_timeout = 1.5s\n", 3, "read_timeout: expected a duration"},
    {DS_MAIN "connect_timeout = 0\n", 3, "connect_timeout: must be greater than 0"},
    {DS_MAIN "read_timeout = 2000h\n", 3, "read_timeout: too long"},
    {"[datasource m]\nconnect_timeout = 1s\nmaster = mysql://r:" SECRET "@h/d?connect_timeout=2s\n", 2, "also given in the master URL (line 3)"},
    {"[datasource m]\nmaster =\n", 2, "master: empty value"},
    /* URLs; none of these messages may show the password */
    {"[datasource m]\nmaster = root:" SECRET "@h/db\n", 2, "master: not a URL"},
    {"[datasource m]\nmaster = postgres://root:" SECRET "@h/db\n", 2, "master: unsupported scheme 'postgres'"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h:abc/db\n", 2, "master: port is not a number"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h:0/db\n", 2, "master: port out of range (expected 1..65535)"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h:70000/db\n", 2, "master: port out of range"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "/db\n", 2, "master: port is not a number"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "1234@h:/db\n", 2, "master: empty port"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "%zzPw@h/db\n", 2, "master: bad %-escape in the password"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "%4@h/db\n", 2, "master: bad %-escape in the password"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "%00@h/db\n", 2, "%00 is not allowed in the password"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/d%zzb\n", 2, "bad %-escape '%zz' in the database name"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/db?sslmode=REQUIRED\n", 2, "master: unknown option 'sslmode'"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/db?ssl_mode=SOMETIMES\n", 2, "master: bad ssl_mode 'SOMETIMES'"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/db?socket=/a&socket=/b\n", 2, "option 'socket' is given twice"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/db?socket\n", 2, "option 'socket' needs a value"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/db?connect_timeout=soon\n", 2, "option connect_timeout: expected a duration"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@::1/db\n", 2, "IPv6 address in brackets"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@[::1/db\n", 2, "missing ']'"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@[::g]/db\n", 2, "bad IPv6 address '[::g]'"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h/db/x\n", 2, "unexpected '/' after the database name"},
    {"[datasource m]\nmaster = mysql://root:" SECRET "@h!/db\n", 2, "bad host name 'h!'"},
    {"[datasource m]\nmaster = mysql://root:${DAL_TEST_PW}@h:99999/db\n", 2, "port out of range"},
    /* ${VAR} */
    {"[datasource m]\nmaster = mysql://root:${DAL_TEST_UNSET}@h/db\n", 2, "master: environment variable 'DAL_TEST_UNSET' is not set"},
    {"[table t]\ndatasource = ${DAL_TEST_UNSET}\n", 2, "datasource: environment variable 'DAL_TEST_UNSET' is not set"},
    {"[datasource m]\nmaster = mysql://root:${DAL_TEST_PW@h/db\n", 2, "unterminated '${'"},
    {"[datasource m]\nmaster = mysql://root:${" SECRET " x}@h/db\n", 2, "bad variable reference"},
    /* [dal] */
    {"[dal]\nmax_parallel = 0\n", 2, "max_parallel: expected a positive integer, got '0'"},
    {"[dal]\nsql_cache_bytes = lots\n", 2, "sql_cache_bytes: expected a size in bytes such as 65536, 64K or 64M, got 'lots'"},
    {"[dal]\nsql_cache_bytes = 64X\n", 2, "sql_cache_bytes: expected a size in bytes such as 65536, 64K or 64M, got '64X'"},
    {"[dal]\nsql_cache_bytes = 64 M B\n", 2, "got '64 M B'"},
    {"[dal]\nsql_cache_max_statement = 4G\n", 2, "sql_cache_max_statement: 4G is out of range (0..4294967295 bytes)"},
    {"[dal]\nsql_cache_max_statement = 99999999999999999999\n", 2, "is out of range (0..4294967295 bytes)"},
    {"[dal]\nmax_parallel = 257\n", 2, "max_parallel: 257 is out of range (1..256)"},
    {"[dal]\nmax_parallel = all\n", 2, "max_parallel: expected a positive integer, got 'all'"},
    {"[dal]\nwatch = maybe\n", 2, "watch: expected true or false, got 'maybe'"},
    {"[dal]\nvalidate_connect = 2\n", 2, "validate_connect: expected true or false, got '2'"},
    {"[dal]\nallow_reshard =\n", 2, "allow_reshard: expected true or false, got ''"},
    {"[dal]\nlocal_infile = true\n", 2, "local_infile: expected off or on, got 'true'"},
    {"[dal]\npool = Default\n", 2, "pool: 'Default' is not a valid name (a plugin name"},
    {"[dal]\npool =\n", 2, "pool: empty value"},
    {"[dal]\npool.max-idle = 3\n", 2, "pool.max-idle: bad parameter name 'max-idle'"},
    {"[dal]\npool.a = 1\npool.a = 2\n", 3, "duplicate key 'pool.a' (first given at line 2)"},
    /* replicas: every message names the replica by position, none shows a password */
    {DS_MAIN "replicas =\n", 3, "replicas: empty value"},
    {DS_MAIN "replicas = " REPLICA("h1") ", " REPLICA("h2:99999") "\n", 3, "replicas: replica 2: port out of range"},
    {DS_MAIN "replicas = postgres://ro:" SECRET "@h/db\n", 3, "replicas: replica 1: unsupported scheme 'postgres'"},
    {DS_MAIN "replicas = " REPLICA("h1") ",\n", 3, "replicas: replica 1: ends with ','"},
    {DS_MAIN "replicas = " REPLICA("h1") ", , " REPLICA("h2") "\n", 3, "replicas: replica 1: ends with ','"},
    {DS_MAIN "replicas = , " REPLICA("h2") "\n", 3, "replicas: replica 1: empty (expected a URL)"},
    {DS_MAIN "replicas = " REPLICA("h1") ", " REPLICA("h2") ", " REPLICA("h!") "\n", 3, "replicas: replica 3: bad host name 'h!'"},
    {DS_MAIN "replicas = mysql://ro:" SECRET "%zz@h/db\n", 3, "replicas: replica 1: bad %-escape in the password"},
    /* an unescaped ", mysql://" in a password splits the list: no part of it is shown */
    {DS_MAIN "replicas = mysql://ro:" SECRET ", mysql://x@h1/db\n", 3, "replicas: replica 1: port is not a number"},
    {DS_MAIN "replicas = mysql://ro:${DAL_TEST_UNSET}@h\n", 3, "replicas: environment variable 'DAL_TEST_UNSET' is not set"},
    {DS_MAIN "replicas = " REPLICA("h1") "?weight=0\n", 3, "replicas: replica 1: option weight: expected a positive integer, got '0'"},
    {DS_MAIN "replicas = " REPLICA("h1") ", " REPLICA("h2") "?weight=1001\n", 3, "replica 2: option weight: 1001 is out of range (1..1000)"},
    {DS_MAIN "replicas = " REPLICA("h1") "?weight=heavy\n", 3, "option weight: expected a positive integer, got 'heavy'"},
    {DS_MAIN "replicas = " REPLICA("h1") "?weight=1&weight=2\n", 3, "replica 1: option 'weight' is given twice"},
    {DS_MAIN "replicas = " REPLICA("h1") "?weight=\n", 3, "replica 1: option 'weight' needs a value"},
    {DS_MAIN "replicas = " REPLICA("h1") "?wieght=2\n", 3,
     "replica 1: unknown option 'wieght' (expected socket, ssl_mode, ssl_ca, connect_timeout, charset or weight)"},
    {DS_MAIN "replicas = " REPLICA("h1") ", " REPLICA("h1:3306") "\n", 3, "replica 2: same server and settings as replica 1"},
    {"[datasource m]\nmaster = mysql://r:" SECRET "@h/db?weight=2\n", 2, "master: option weight is only for replica URLs"},
    {DS_MAIN "replicas = " REPLICA("h1") "\nreplicas = " REPLICA("h2") "\n", 4, "duplicate key 'replicas'"},
    /* other read/write split keys */
    {DS_MAIN "load_balance = fastest\n", 3,
     "load_balance: expected round_robin, random, weighted or least_outstanding, got 'fastest'"},
    {DS_MAIN "max_replica_lag = 5 secs\n", 3, "max_replica_lag: expected a duration such as 250ms, 5s, 2m or 1h, got '5 secs'"},
    {DS_MAIN "max_replica_lag = -1s\n", 3, "max_replica_lag: expected a duration"},
    {DS_MAIN "health_check_interval = 0ms\n", 3, "health_check_interval: must be greater than 0"},
    {DS_MAIN "health_check_interval = 2000h\n", 3, "health_check_interval: too long"},
    {DS_MAIN "read_your_writes = always\n", 3, "read_your_writes: expected off, session or a duration such as 500ms or 2s, got 'always'"},
    {DS_MAIN "read_your_writes = 0\n", 3, "read_your_writes: must be greater than 0"},
    {DS_MAIN "read_your_writes = 5 minutes\n", 3, "read_your_writes: expected a duration such as"},
    {DS_MAIN "pool.idle.timeout = 1s\n", 3, "pool.idle.timeout: bad parameter name 'idle.timeout'"},
    /* broadcast tables */
    {DS_G(0) SHARDED_T "broadcast = sometimes\n", 5, "broadcast: expected true or false, got 'sometimes'"},
    {DS_G(0) SHARDED_T "broadcast = true\nstrategy = mod\n", 6,
     "strategy: not allowed in a broadcast table (broadcast = true at line 5"},
    {DS_G(0) SHARDED_T "shard_key = id\nbroadcast = true\n", 5, "shard_key: not allowed in a broadcast table"},
    {DS_G(0) SHARDED_T "broadcast = yes\ndb_shard_num = 1\ntable_shard_num = 4\n", 7, "table_shard_num: not allowed in a broadcast table"},
    {DS_G(0) SHARDED_T "broadcast = on\nstrategy.bounds = 1\n", 6, "strategy.bounds: not allowed in a broadcast table"},
    {DS_G(0) SHARDED_T "broadcast = true\ndb_shard_num = 2\n", 4, "group 'g' needs [datasource g1] (db_shard_num = 2), which is not defined"},
    {DS_MAIN "[table t]\ndatasource = main\nbroadcast = true\n", 4, "group 'main' needs [datasource main0]"},
    /* other table keys */
    {DS_G(0) SHARDED_T "allow_scatter = perhaps\n", 5, "allow_scatter: expected true or false, got 'perhaps'"},
    {DS_MAIN "[table t]\ndatasource = main\nbinding = bg\n", 5, "binding: only a sharded table can be in a binding group"},
    {DS_G(0) SHARDED_T "binding = bg\nbroadcast = true\n", 5, "binding: only a sharded table"},
    {DS_G(0) SHARDED_T "binding = b-g\n", 5, "binding: 'b-g' is not a valid name (letters, digits, '_'"},
    {DS_MAIN "[table t]\ndatasource = main\nid_column = id\n", 5, "id_column: needs idgen = NAME as well"},
    {DS_MAIN "[table t]\ndatasource = main\nidgen = ids\n[idgen ids]\nplugin = leaf\n", 5, "idgen: needs id_column = COLUMN as well"},
    {DS_MAIN "[table t]\ndatasource = main\nid_column = id\nidgen = nope\n[idgen ids]\nplugin = leaf\n", 6,
     "idgen: no [idgen nope] is defined"},
    {DS_MAIN "[table t]\ndatasource = main\nid_column = order id\n", 5, "id_column: 'order id' is not a valid name (a column name"},
    {DS_MAIN "[table t]\ndatasource = main\nidgen = a/b\n", 5, "idgen: 'a/b' is not a valid name"},
    /* binding groups, checked after the whole file at the second table's binding line */
    {DS_G(0) DS_G(1) BOUND_T("a", "g", "2", "4", "") BOUND_T("b", "g", "1", "4", ""), 18,
     "binding: [table b] cannot join binding group 'bg' of [table a] (line 5): its db_shard_num is 1, not 2"},
    {DS_G(0) DS_G(1) BOUND_T("a", "g", "2", "4", "") BOUND_T("b", "g", "2", "8", ""), 18, "its table_shard_num is 8, not 4"},
    {DS_G(0) DS_G(1) BOUND_T("a", "g", "2", "4", "") BOUND_T("b", "g", "2", "4", "strategy.x = 1\n"), 19,
     "it has strategy.x, which [table a] has not"},
    {DS_G(0) DS_G(1) BOUND_T("a", "g", "2", "4", "strategy.x = 1\n") BOUND_T("b", "g", "2", "4", ""), 19, "it has no strategy.x"},
    {DS_G(0) DS_G(1) BOUND_T("a", "g", "2", "4", "strategy.x = 1\n") BOUND_T("b", "g", "2", "4", "strategy.x = 2\n"), 20,
     "its strategy.x is '2', not '1'"},
    {DS_G(0) DS_G(1) BOUND_T("a", "g", "2", "4", "") BOUND_T("b", "g", "2", "4", "") BOUND_T("c", "g", "2", "4", "")
     "strategy.y = 1\n", 25, "[table c] cannot join binding group 'bg' of [table a] (line 5): it has strategy.y"},
    {DS_G(0) "[datasource h0]\nmaster = mysql://root:" SECRET "@h0/h\n" BOUND_T("a", "g", "1", "2", "")
     BOUND_T("b", "h", "1", "2", ""), 18, "its datasource is h, not g"},
    {DS_G(0) BOUND_T("a", "g", "1", "2", "") BOUND_T("b", "g", "1", "2", "") "[table c]\ndatasource = g\n"
     "db_shard_num = 1\ntable_shard_num = 2\nshard_key = id\nstrategy = range\nbinding = bg\n", 23, "its strategy is range, not mod"},
    /* lookups: each column once, a lookup table keyed by it */
#define LOOKUP_T "[table o]\ndatasource = g\ndb_shard_num = 1\ntable_shard_num = 2\n" \
                 "shard_key = uid\nstrategy = mod\n"
    {DS_G(0) LOOKUP_T "lookup = ono\n", 9,
     "lookup: no [table o_lookup_ono] is defined (the lookup table of o.ono"},
    {DS_G(0) LOOKUP_T "lookup = uid\n", 9, "lookup: uid is the shard key of [table o]"},
    {DS_G(0) LOOKUP_T "lookup = a, b, a\n", 9, "lookup: column a is listed twice"},
    {DS_G(0) LOOKUP_T "lookup = a\nlookup_unique = a\n", 10, "lookup_unique: column a is listed twice"},
    {DS_G(0) LOOKUP_T "lookup = a b\n", 9, "lookup: 'a b' is not a column name"},
    {DS_G(0) LOOKUP_T "lookup = a,\n", 9, "lookup: '' is not a column name"},
    {DS_G(0) LOOKUP_T "lookup = ono\n[table o_lookup_ono]\ndatasource = g\ndb_shard_num = 1\n"
     "table_shard_num = 2\nshard_key = uid\nstrategy = mod\n", 9,
     "lookup: [table o_lookup_ono] (line 10) must have shard_key = ono, not uid"},
    {DS_G(0) LOOKUP_T "lookup = ono\n[table o_lookup_ono]\ndatasource = g\nbroadcast = true\n", 9,
     "must be a plain table of the same schema as [table o]"},
    {DS_MAIN "[table t]\ndatasource = main\nlookup = x\n", 5,
     "lookup: [table t] is not sharded, so it has nothing to look up"},
    /* [idgen NAME] */
    {"[idgen]\n", 1, "section [idgen] needs a name: [idgen NAME]"},
    {"[idgen a b]\n", 1, "bad idgen name 'a b'"},
    {"[idgen ids]\nstep = 1\n", 1, "[idgen ids] has no plugin (add: plugin = NAME"},
    {"[idgen ids]\nplugin = Leaf\n", 2, "plugin: 'Leaf' is not a valid name"},
    {"[idgen ids]\nplugin = leaf\nStep = 1\n", 3, "Step: bad parameter name 'Step' (lower-case letters"},
    {"[idgen ids]\nplugin = leaf\n[idgen ids]\n", 3, "duplicate section [idgen ids] (first at line 1)"},
    {"[idgen ids]\nplugin = leaf\nplugin = snowflake\n", 3, "duplicate key 'plugin' (first given at line 2)"},
    /* [monitor NAME] */
    {"[monitor Prom]\nport = 1\n", 1, "[monitor Prom] has no plugin, and 'Prom' is not a plugin name"},
    {"[monitor m]\nenabled = sometimes\n", 2, "enabled: expected true or false, got 'sometimes'"},
    {"[monitor m]\n[monitor m]\n", 2, "duplicate section [monitor m] (first at line 1)"},
    {"[monitor m]\nplugin =\n", 2, "plugin: empty value"},
    {"[monitor m]\nport.x = 1\n", 2, "port.x: bad parameter name 'port.x'"},
    {"[monitor a/b]\n", 1, "bad monitor name 'a/b'"},
    {"[schema hr]\ndefault_datasource = nods\n", 2,
     "default_datasource: no [datasource nods] is defined"},
    {"[schema a/b]\n", 1, "bad schema name 'a/b'"},
    {"[schema s]\n[schema s]\n", 2, "duplicate section [schema s] (first at line 1)"},
    {"[schema s]\nschema = x\n", 2, "unknown key 'schema' in [schema s]"},
    {"[datasource x]\nmaster = mysql://u@h/db\n[table t]\ndatasource = x\nschema = s\n", 5,
     "schema: no [schema s] is defined"},
    {"[schema dal]\n", 1, "[schema dal] is the [proxy] database"},
    {"[monitors m]\n", 1, "unknown section [monitors m] (expected [dal], [datasource NAME], [table NAME], [idgen NAME], [monitor NAME], [proxy], [proxy user NAME] or [schema NAME])"},
    /* A URL, and so a password, under a key that takes none: the value is
     * quoted with the password masked, whatever the key (defect 8). */
    {DS_MAIN "[table t]\ndatasource = mysql://app:" SECRET "@h/db\n", 4,
     "datasource: 'mysql://app:***@h/db' is not a valid name"},
    {DS_MAIN "load_balance = mysql://app:" SECRET "@h/db\n", 3,
     "load_balance: expected round_robin, random, weighted or least_outstanding, got 'mysql://app:***@h/db'"},
    {"[dal]\ndefault_datasource = mysql://app:" SECRET "@h/db\n", 2,
     "default_datasource: 'mysql://app:***@h/db' is not a valid name"},
    {"[dal]\ndefault_datasource = app:" SECRET "@h\n", 2, "default_datasource: 'app:***@h'"},
    {"[dal]\nmax_parallel = redis://u:" SECRET "@h\n", 2, "got 'redis://u:***@h'"},
    {"[dal]\nwatch = mysql://u:" SECRET "@h\n", 2, "watch: expected true or false, got 'mysql://u:***@h'"},
    {DS_MAIN "read_timeout = u:" SECRET "@h\n", 3, "got 'u:***@h'"},
    {DS_MAIN "read_your_writes = u:" SECRET "@h\n", 3, "got 'u:***@h'"},
    {"[dal]\nbogus = mysql://app:" SECRET "@h/db\n", 2, "unknown key 'bogus' in [dal]"},
    {"[mysql://app:" SECRET "@h/db]\n", 1, "unknown section [mysql://app:***@h/db]"},
    {"[datasource app:" SECRET "@h]\n", 1, "bad datasource name 'app:***@h'"},
    /* Masked before it is cut: the '@' lies past the 60 characters quoted. */
    {"[dal]\nwatch = mysql://a_user_name_long_enough_to_push_the_at_sign_past_the_cut:" SECRET "@h\n", 2,
     "got 'mysql://a_user_name_long_enough_to_push_the_at_sign_past_the...'"},
    /* Plugin parameters, compared between the tables of a binding group. */
    {DS_G(0) BOUND_T("a", "g", "1", "2", "strategy.x = u:" SECRET "A@h\n")
     BOUND_T("b", "g", "1", "2", "strategy.x = u:" SECRET "B@h\n"), 18,
     "its strategy.x is 'u:***@h', not 'u:***@h'"},
    /* [proxy] and its users: no value quoted but the listen address */
    {"[proxy]\nlisten = 127.0.0.1\n", 2, "listen: expected HOST:PORT[, HOST:PORT ...], got '127.0.0.1'"},
    {"[proxy]\nlisten = a:1, b:70000\n", 2, "listen: expected HOST:PORT"},
    {"[proxy]\ntls_cert = /nonexistent/c.pem\n", 2, "tls_cert: cannot read '/nonexistent/c.pem'"},
    {"[proxy]\ntls_key = /dev/null\n", 2, "tls_key: '/dev/null' is not a regular file"},
    {"[proxy]\ntls_cert = /etc/passwd\n", 2, "holds no PEM certificate"},
    {"[proxy]\nrequire_tls = on\n", 2, "[proxy] require_tls needs tls_cert and tls_key"},
    {"[proxy]\n[proxy]\n", 2, "duplicate"},
    {"[proxy x]\n", 1, "section [proxy] takes no name"},
    {"[proxy user]\n", 1, "section [proxy user] needs a name: [proxy user NAME]"},
    {"[proxy user app]\n", 1, "[proxy user app] needs password = ... or password_hash = *..."},
    {"[proxy user app]\npassword = " SECRET "\npassword_hash = *0123456789012345678901234567890123456789\n", 3,
     "has both password and password_hash: keep one"},
    {"[proxy user app]\npassword_hash = " SECRET "\n", 2, "password_hash: expected '*' and 40 hex digits"},
    {"[proxy user app]\nuser = x\n", 2, "unknown key"},
    /* whole lines */
    {NULL, 3, "line too long (301 characters, at most 197)"},   /* built by the test */
};

START_TEST(test_bad_config)
{
    const struct bad_config *bc = &bad_configs[_i];
    dal_config_t *cfg = (dal_config_t *)&cfg;   /* must be reset to NULL */
    dal_error_t err = {0};
    char long_ini[512];
    char *path, *prefix;
    int rc;

    env_setup();
    if (bc->ini == NULL) {
        snprintf(long_ini, sizeof long_ini, "[dal]\n; fine\nplugin_dir = /%0287d\n", 7);
        path = write_temp(long_ini);
    } else {
        path = write_temp(bc->ini);
    }
    rc = config_load(path, &cfg, &err);
    ck_assert_msg(rc == DAL_ECONFIG, "row %d: expected DAL_ECONFIG, got %d (%s)", _i, rc, err.message);
    ck_assert_int_eq(err.code, DAL_ECONFIG);
    ck_assert_ptr_null(cfg);
    ck_assert_int_ge(asprintf(&prefix, "%s:%d: ", path, bc->line), 0);
    ck_assert_msg(strncmp(err.message, prefix, strlen(prefix)) == 0,
                  "row %d: message '%s' does not start with '%s'", _i, err.message, prefix);
    ck_assert_msg(strstr(err.message, bc->expect) != NULL,
                  "row %d: message '%s' does not contain '%s'", _i, err.message, bc->expect);
    ck_assert_msg(strstr(err.message, SECRET) == NULL, "row %d: message shows a password: '%s'", _i, err.message);
    unlink(path);
    free(prefix);
    free(path);
}
END_TEST

/* [proxy]'s defaults without the section, its keys and users with it. */
START_TEST(test_proxy_sections)
{
    dal_config_t *cfg = NULL;
    dal_error_t err = {0};
    char *path;

    env_setup();
    path = write_temp("[dal]\n");
    ck_assert_int_eq(config_load(path, &cfg, &err), 0);
    ck_assert_int_eq(cfg->proxy.line, 0);
    ck_assert_str_eq(cfg->proxy.listen, "127.0.0.1:3307");
    ck_assert_str_eq(cfg->proxy.database, "dal");
    ck_assert_uint_eq(cfg->proxy.threads, 0);
    ck_assert_uint_eq(cfg->proxy.max_connections, 4096);
    ck_assert_uint_eq(cfg->nproxy_users, 0);
    config_free(cfg);
    unlink(path);
    free(path);
    setenv("DAL_TEST_PROXY_PW", "s3cr3t", 1);
    path = write_temp("[proxy]\nlisten = 127.0.0.1:3310, [::1]:3311\ndatabase = shop\nthreads = 2\n"
                      "max_connections = 10\n[proxy user app]\npassword = ${DAL_TEST_PROXY_PW}\n"
                      "[proxy user ro]\npassword_hash = *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19\n");
    ck_assert_msg(config_load(path, &cfg, &err) == 0, "%s", err.message);
    ck_assert_int_eq(cfg->proxy.line, 1);
    ck_assert_str_eq(cfg->proxy.listen, "127.0.0.1:3310, [::1]:3311");
    ck_assert_str_eq(cfg->proxy.database, "shop");
    ck_assert_uint_eq(cfg->proxy.threads, 2);
    ck_assert_uint_eq(cfg->proxy.max_connections, 10);
    ck_assert_uint_eq(cfg->nproxy_users, 2);
    ck_assert_str_eq(cfg->proxy_users[0].name, "app");
    ck_assert_str_eq(cfg->proxy_users[0].password, "s3cr3t");
    ck_assert_ptr_null(cfg->proxy_users[0].password_hash);
    ck_assert_str_eq(cfg->proxy_users[1].name, "ro");
    ck_assert_ptr_null(cfg->proxy_users[1].password);
    config_free(cfg);
    unlink(path);
    free(path);
}
END_TEST

/* config_quote: masked, then cut to 60 characters and "...". */
START_TEST(test_config_quote)
{
    char q[DAL_CFG_QUOTE_SIZE];
    char long_text[200];

    ck_assert_str_eq(config_quote("mysql://app:" SECRET "@h/db", q), "mysql://app:***@h/db");
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    memcpy(long_text + 150, ":" SECRET "@h", strlen(":" SECRET "@h"));
    config_quote(long_text, q);
    ck_assert_uint_eq(strlen(q), 63);
    ck_assert_str_eq(q + 60, "...");
    ck_assert_ptr_null(strstr(q, SECRET));
}
END_TEST

/*
 * A URL given as a plugin parameter reaches the plugin's checks (params.c)
 * and the plugin's own messages (the host's set_error): both masked.
 */
static const struct {
    const char *ini;
    int line;
    const char *expect;
} plugin_param_leaks[] = {
    {DS_G(0) DS_G(1) "[table t]\ndatasource = g\ndb_shard_num = 2\ntable_shard_num = 2\n"
     "shard_key = id\nstrategy = range\nstrategy.bounds = mysql://app:" SECRET "@h/db\n", 11,
     "strategy.bounds: expected a comma-separated list of integers, got 'mysql://app:***@h/db'"},
    {DS_MAIN "[monitor prometheus]\naddress = app:" SECRET "@h\n", 3, "address 'app:***@h'"},
};

START_TEST(test_plugin_param_masked)
{
    const char *dir = getenv("DAL_PLUGIN_DIR");
    dal_open_opts_t opts;
    dal_error_t err = {0};
    char *path, *prefix;

    if (dir == NULL || *dir == '\0')
        return;   /* run by `make check`, which sets it */
    memset(&opts, 0, sizeof opts);
    opts.plugin_dir = dir;
    opts.log_level = DAL_LOG_ERROR;
    path = write_temp(plugin_param_leaks[_i].ini);
    ck_assert_int_lt(dal_check_config(path, &opts, &err), 0);   /* ECONFIG or EPLUGIN (init) */
    ck_assert_int_ge(asprintf(&prefix, "%s:%d: ", path, plugin_param_leaks[_i].line), 0);
    ck_assert_msg(strncmp(err.message, prefix, strlen(prefix)) == 0,
                  "row %d: message '%s' does not start with '%s'", _i, err.message, prefix);
    ck_assert_msg(strstr(err.message, plugin_param_leaks[_i].expect) != NULL,
                  "row %d: message '%s' does not contain '%s'", _i, err.message, plugin_param_leaks[_i].expect);
    ck_assert_msg(strstr(err.message, SECRET) == NULL, "row %d: message shows a password: '%s'", _i, err.message);
    unlink(path);
    free(prefix);
    free(path);
}
END_TEST

/* ------------------------------------------------------- ${VAR} expansion */

START_TEST(test_expand_env)
{
    static const struct { const char *in, *out; } good[] = {
        {"", ""},
        {"plain", "plain"},
        {"${DAL_TEST_HOST}", "db.example.com"},
        {"a${DAL_TEST_HOST}b${DAL_TEST_EMPTY}c", "adb.example.combc"},
        {"$$", "$"},
        {"pa$$word", "pa$word"},
        {"pa$word$", "pa$word$"},
        {"$${DAL_TEST_HOST}", "${DAL_TEST_HOST}"},
    };
    static const struct { const char *in, *expect; } bad[] = {
        {"${DAL_TEST_UNSET}", "environment variable 'DAL_TEST_UNSET' is not set"},
        {"x${DAL_TEST_HOST", "unterminated '${'"},
        {"${}", "bad variable reference"},
        {"${1X}", "bad variable reference"},
        {"${A-B}", "bad variable reference"},
    };
    dal_error_t err;
    char *out;
    size_t i;

    env_setup();
    for (i = 0; i < NELEM(good); i++) {
        ck_assert_msg(expand_env(good[i].in, &out, &err) == 0, "%s: %s", good[i].in, err.message);
        ck_assert_str_eq(out, good[i].out);
        free(out);
    }
    for (i = 0; i < NELEM(bad); i++) {
        out = (char *)&out;
        ck_assert_int_eq(expand_env(bad[i].in, &out, &err), DAL_ECONFIG);
        ck_assert_ptr_null(out);
        ck_assert_msg(strstr(err.message, bad[i].expect) != NULL, "%s: '%s'", bad[i].in, err.message);
    }
}
END_TEST

/* ----------------------------------------------------------- key tables */

/* Every row says enough for the loader and the docs to use it. */
static void check_row(const char *title, const dal_cfg_key_t *k)
{
    const dal_cfg_key_t *other;

    ck_assert_msg(cfg_key_find(k, k->name) == k || k->type == DAL_CFG_PARAMS,
                  "%s %s: found as another row", title, k->name);
    ck_assert_msg(k->help != NULL || k->type == DAL_CFG_DURATION, "%s %s: no help", title, k->name);
    ck_assert_msg(!k->required || (k->example != NULL && k->def == NULL), "%s %s: required", title, k->name);
    switch (k->type) {
    case DAL_CFG_COUNT:
        ck_assert_msg(k->min >= 0 && k->min <= k->max && k->max <= UINT32_MAX, "%s %s: range", title, k->name);
        break;
    case DAL_CFG_MODE:
        ck_assert_msg(k->aux != 0, "%s %s: no aux field", title, k->name);
        /* fall through */
    case DAL_CFG_DURATION:
        ck_assert_msg(k->min >= 0 && k->min <= k->max && k->max <= UINT32_MAX, "%s %s: range", title, k->name);
        ck_assert_msg(k->type != DAL_CFG_MODE || k->words != NULL, "%s %s: no words", title, k->name);
        break;
    case DAL_CFG_ENUM:
        ck_assert_msg(k->words != NULL && k->words[0] != NULL, "%s %s: no words", title, k->name);
        break;
    case DAL_CFG_URL:
    case DAL_CFG_URL_LIST:
        ck_assert_msg(k->set != NULL, "%s %s: no setter", title, k->name);
        break;
    case DAL_CFG_PARAMS:
        ck_assert_msg(k->rule != NULL, "%s %s: no rule for parameter names", title, k->name);
        break;
    default:
        break;
    }
    for (other = k + 1; other->name != NULL; other++)
        ck_assert_msg(strcmp(other->name, k->name) != 0, "%s: two rows for %s", title, k->name);
}

START_TEST(test_key_tables)
{
    const dal_cfg_section_keys_t *sec;
    const dal_cfg_key_t *k;

    for (sec = dal_cfg_sections; sec->word != NULL; sec++)
        for (k = sec->keys; k->name != NULL; k++)
            check_row(sec->title, k);
    ck_assert_ptr_null(cfg_key_find(dal_cfg_table_keys, "shardkey"));
    ck_assert_str_eq(cfg_key_find(dal_cfg_dal_keys, "pool")->name, "pool");
    ck_assert_str_eq(cfg_key_find(dal_cfg_dal_keys, "pool.max_idle")->name, "pool.");
    ck_assert_str_eq(cfg_key_find(dal_cfg_idgen_keys, "step")->name, "");
}
END_TEST

/*
 * The loader reads each section through the table the docs are printed
 * from: every key of every table is known in its section.  Each row's
 * default (or, without one, a sample value) is written to a file of its
 * own; whatever else the file lacks, the key must not be unknown.
 */
START_TEST(test_key_tables_loaded)
{
    const dal_cfg_section_keys_t *sec = &dal_cfg_sections[_i];
    const dal_cfg_key_t *k;
    dal_config_t *cfg;
    dal_error_t err;
    char ini[512], *path;
    int rc;

    for (k = sec->keys; k->name != NULL; k++) {
        snprintf(ini, sizeof ini, "[%s%s]\n%s%s = %s\n", sec->word, strcmp(sec->word, "dal") ? " x" : "",
                 k->name, k->type == DAL_CFG_PARAMS ? "p" : "", k->def != NULL ? k->def : "mysql://h");
        path = write_temp(ini);
        memset(&err, 0, sizeof err);
        cfg = NULL;
        rc = config_load(path, &cfg, &err);
        ck_assert_msg(rc == 0 || strstr(err.message, "unknown key") == NULL, "%s: %s", ini, err.message);
        config_free(cfg);
        unlink(path);
        free(path);
    }
}
END_TEST

/* ------------------------------------------------------------------ main */

static size_t nsections(void)
{
    size_t n = 0;

    while (dal_cfg_sections[n].word != NULL)
        n++;
    return n;
}

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc;

    tc = tcase_create("file");
    tcase_add_test(tc, test_good_config);
    tcase_add_test(tc, test_proxy_sections);
    tcase_add_test(tc, test_full_config);
    tcase_add_test(tc, test_local_infile);
    tcase_add_test(tc, test_empty_and_missing_files);
    tcase_add_test(tc, test_byte_sizes);
    tcase_add_test(tc, test_lookups);
    tcase_add_test(tc, test_unreadable_content);
    tcase_add_loop_test(tc, test_bad_config, 0, (int)NELEM(bad_configs));
    suite_add_tcase(s, tc);

    tc = tcase_create("masking");
    tcase_add_test(tc, test_config_quote);
    tcase_add_loop_test(tc, test_plugin_param_masked, 0, (int)NELEM(plugin_param_leaks));
    tcase_add_test(tc, test_expand_env);
    suite_add_tcase(s, tc);

    tc = tcase_create("keys");
    tcase_add_test(tc, test_key_tables);
    tcase_add_loop_test(tc, test_key_tables_loaded, 0, (int)nsections());
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(config_suite(), CK_FORK_GETENV);

    return status;
}
