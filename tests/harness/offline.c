/*
 * offline.c -- the shared fixture of the core's unit tests that need no
 * database (offline.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <dal/dal.h>

#include "offline.h"
#include "testutil.h"

char *dir;
char *pdir;

void setup(void)
{
    dir = tu_mkdtemp();
    if (asprintf(&pdir, "%s/plugins", dir) < 0)
        abort();
    ck_assert_int_eq(mkdir(pdir, 0755), 0);
}

void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
    free(pdir);
}

/* An INI with four (never contacted) datasources and one table whose
 * [table] block is `table` (line 10 is its first key line). */
char *write_ini_named(const char *tname, const char *table)
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

char *write_ini(const char *table)
{
    return write_ini_named("t", table);
}

dal_t *open_mod(int dbs)
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
