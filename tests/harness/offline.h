/*
 * offline.h -- what the unit tests of the core without a database share: a
 * directory of the test's own, an INI of four datasources that are never
 * contacted (dal_open does not connect; dal_explain never does), and a
 * handle on it that routes wm_food by mod.
 */
#ifndef DAL_OFFLINE_H
#define DAL_OFFLINE_H

#include <dal/dal.h>

/* Made by setup, removed by teardown (the checked fixture of each TCase
 * that uses them).  Owned by the fixture. */
extern char *dir;       /* per-test temp dir */
extern char *pdir;      /* plugin dir for fixtures: dir/plugins */

void setup(void);
void teardown(void);

/* An INI with four (never contacted) datasources db0..db3 and one table
 * tname whose [table] block is `table` (line 10 is its first key line),
 * written to dir/dal.ini.  Returns the path, owned by the caller. */
char *write_ini_named(const char *tname, const char *table);
/* write_ini_named for table t. */
char *write_ini(const char *table);
/* A handle on wm_food (100 tables on dbs of the datasources, mod,
 * shard_key wm_poi_id), wm_food_sku bound to it, dict on db2 and db3 the
 * default datasource.  Owned by the caller: dal_close. */
dal_t *open_mod(int dbs);

#endif /* DAL_OFFLINE_H */
