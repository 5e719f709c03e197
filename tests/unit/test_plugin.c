/*
 * test_plugin.c -- the plugin loader (plugin.c) without a database: its errors,
 * each naming the file, line and plugin at fault, for broken plugins built
 * from tests/harness/fixture_plugin.c and for real ones misconfigured; a
 * plugin found twice on the path; dal_plugins_scan.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <dal/dal.h>

#include "offline.h"
#include "testutil.h"

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

static Suite *plugin_suite(void)
{
    Suite *s = suite_create("plugin");
    TCase *tc = tcase_create("loader");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_load_errors, 0, sizeof load_cases / sizeof load_cases[0]);
    tcase_add_test(tc, test_duplicate_plugin);
    tcase_add_test(tc, test_scan);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(plugin_suite(), CK_FORK_GETENV);

    return status;
}
