/*
 * test_inspect.c -- dal_table_info and dal_datasource_info: what they read
 * from the configuration in force, their errors, and that a handle keeps
 * its values over a reload and after dal_close.  No server is contacted.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "testutil.h"

static char *dir;
static dal_t *dal;   /* opened on write_config(4, "") for each test */

/* Two datasources of group db, a third one with every URL option and two
 * replicas, and one table of each layout; `shard_tables` is the
 * table_shard_num of wm_food (so a reload can change it), `extra` more
 * text at the end. */
static char *write_config(int shard_tables, const char *extra)
{
    char text[4096];

    snprintf(text, sizeof text,
             "[datasource db0]\n"
             "master = mysql://app:${INSPECT_TEST_PASSWORD}@10.0.0.1:3307/p0\n"
             "[datasource db1]\n"
             "master = mysql://app@10.0.0.2/p1\n"
             "[datasource dict]\n"
             "master = mysql://ro:pw%%40x@localhost/dict?socket=/run/my.sock&charset=latin1"
             "&ssl_mode=required&ssl_ca=/etc/ca.pem&connect_timeout=2s\n"
             "replicas = mysql://r@10.0.0.3:3308/dict?weight=3, mysql://r@[::1]/dict\n"
             "read_timeout = 7s\n"
             "[idgen ids]\nplugin = snowflake\nworker_id = 3\n"
             "[table wm_food]\n"
             "datasource = db\ndb_shard_num = 2\ntable_shard_num = %d\nshard_key = wm_poi_id\n"
             "strategy = mod\nbinding = food\nid_column = id\nidgen = ids\n"
             "[table ranged]\n"
             "datasource = db\ndb_shard_num = 2\ntable_shard_num = 2\nshard_key = k\n"
             "strategy = range\nstrategy.bounds = 0, 10, 20\nallow_scatter = false\n"
             "[table city]\ndatasource = db\nbroadcast = true\ndb_shard_num = 2\n"
             "[table dict_words]\ndatasource = dict\n%s",
             shard_tables, extra);
    return tu_write(dir, "dal.ini", text);
}

static void setup(void)
{
    dal_error_t err;
    char *ini;

    dir = tu_mkdtemp();
    setenv("INSPECT_TEST_PASSWORD", "s3cret", 1);
    ini = write_config(4, "");
    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
}

static void teardown(void)
{
    dal_close(dal);
    dal = NULL;
    tu_rmtree(dir);
    free(dir);
}

static dal_table_info_t *table(const char *name)
{
    dal_table_info_t *t = NULL;
    dal_error_t err;

    ck_assert_msg(dal_table_info(dal, name, &t, &err) == 0, "%s: %s", name, err.message);
    return t;
}

START_TEST(test_sharded)
{
    dal_table_info_t *t = table("WM_Food");   /* names match case-insensitively */
    char buf[64];

    ck_assert_str_eq(dal_table_info_name(t), "wm_food");
    ck_assert_int_eq(dal_table_info_layout(t), DAL_LAYOUT_SHARDED);
    ck_assert_str_eq(dal_table_info_datasource(t), "db");
    ck_assert_uint_eq(dal_table_info_db_shard_num(t), 2);
    ck_assert_uint_eq(dal_table_info_table_shard_num(t), 4);
    ck_assert_str_eq(dal_table_info_shard_key(t), "wm_poi_id");
    ck_assert_str_eq(dal_table_info_strategy(t), "mod");
    ck_assert_uint_eq(dal_table_info_strategy_param_count(t), 0);
    ck_assert_str_eq(dal_table_info_binding(t), "food");
    ck_assert_str_eq(dal_table_info_id_column(t), "id");
    ck_assert_str_eq(dal_table_info_idgen(t), "ids");
    ck_assert_int_eq(dal_table_info_allow_scatter(t), 1);
    ck_assert_str_eq(dal_table_info_node(t, 0), "db0");
    ck_assert_str_eq(dal_table_info_node(t, 1), "db1");
    ck_assert_ptr_null(dal_table_info_node(t, 2));
    /* positions 0, 1 on db0 and 2, 3 on db1, as routing places them */
    ck_assert_int_eq(dal_table_info_physical(t, 1, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "wm_food_1");
    ck_assert_int_eq(dal_table_info_physical(t, 2, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "wm_food_2");
    ck_assert_int_eq(dal_table_info_physical(t, 4, buf, sizeof buf), DAL_EINVAL);
    ck_assert_int_eq(dal_table_info_physical(t, 3, buf, 9), DAL_EINVAL);   /* "wm_food_3" */
    dal_table_info_free(t);
}
END_TEST

/* What the placement says agrees with dal_explain for every position. */
START_TEST(test_placement_matches_explain)
{
    dal_table_info_t *t = table("wm_food");
    dal_error_t err;
    char buf[64];
    uint32_t pos;

    for (pos = 0; pos < dal_table_info_table_shard_num(t); pos++) {
        dal_value_t v = dal_uint(pos);
        dal_plan_t *plan = NULL;
        int db = dal_table_info_physical(t, pos, buf, sizeof buf);

        ck_assert_msg(dal_explain(dal, NULL, "SELECT * FROM wm_food WHERE wm_poi_id = ?", &v, 1,
                                  &plan, &err) == 0, "%s", err.message);
        ck_assert_uint_eq(dal_plan_count(plan), 1);
        ck_assert_int_ge(db, 0);
        ck_assert_str_eq(dal_plan_datasource(plan, 0), dal_table_info_node(t, (uint32_t)db));
        ck_assert_str_eq(dal_plan_table(plan, 0), buf);
        dal_plan_free(plan);
    }
    dal_table_info_free(t);
}
END_TEST

START_TEST(test_other_layouts)
{
    dal_table_info_t *t = table("ranged");
    const char *value = "x";
    char buf[64];

    ck_assert_uint_eq(dal_table_info_strategy_param_count(t), 1);
    ck_assert_str_eq(dal_table_info_strategy_param(t, 0, &value), "bounds");
    ck_assert_str_eq(value, "0, 10, 20");
    ck_assert_ptr_null(dal_table_info_strategy_param(t, 1, &value));
    ck_assert_ptr_null(value);
    ck_assert_int_eq(dal_table_info_allow_scatter(t), 0);
    ck_assert_ptr_null(dal_table_info_binding(t));
    ck_assert_ptr_null(dal_table_info_id_column(t));
    dal_table_info_free(t);

    t = table("city");
    ck_assert_int_eq(dal_table_info_layout(t), DAL_LAYOUT_BROADCAST);
    ck_assert_uint_eq(dal_table_info_db_shard_num(t), 2);
    ck_assert_uint_eq(dal_table_info_table_shard_num(t), 1);
    ck_assert_ptr_null(dal_table_info_shard_key(t));
    ck_assert_ptr_null(dal_table_info_strategy(t));
    ck_assert_str_eq(dal_table_info_node(t, 1), "db1");
    ck_assert_int_eq(dal_table_info_physical(t, 0, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "city");
    dal_table_info_free(t);

    t = table("dict_words");
    ck_assert_int_eq(dal_table_info_layout(t), DAL_LAYOUT_SINGLE);
    ck_assert_str_eq(dal_table_info_datasource(t), "dict");
    ck_assert_uint_eq(dal_table_info_db_shard_num(t), 1);
    ck_assert_str_eq(dal_table_info_node(t, 0), "dict");
    ck_assert_int_eq(dal_table_info_physical(t, 0, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "dict_words");
    dal_table_info_free(t);
}
END_TEST

static void collect_name(void *user, const char *name)
{
    char *list = user;

    strcat(list, name);
    strcat(list, ",");
}

START_TEST(test_table_names)
{
    char list[256] = "";
    dal_error_t err;

    ck_assert_int_eq(dal_table_names(dal, collect_name, list, &err), 0);
    ck_assert_str_eq(list, "wm_food,ranged,city,dict_words,");
    ck_assert_int_eq(dal_table_names(NULL, collect_name, list, &err), DAL_EINVAL);
    ck_assert_int_eq(dal_table_names(dal, NULL, list, &err), DAL_EINVAL);
}
END_TEST

START_TEST(test_errors)
{
    static char not_null;   /* what the calls must overwrite with NULL */
    dal_table_info_t *t = (dal_table_info_t *)&not_null;
    dal_datasource_info_t *ds = (dal_datasource_info_t *)&not_null;
    dal_error_t err;

    ck_assert_int_eq(dal_table_info(dal, "nosuch", &t, &err), DAL_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.message, "no [table nosuch]") != NULL, "%s", err.message);
    ck_assert_int_eq(dal_datasource_info(dal, "db2", &ds, &err), DAL_EINVAL);
    ck_assert_ptr_null(ds);
    ck_assert_msg(strstr(err.message, "no [datasource db2]") != NULL, "%s", err.message);
    /* datasource names match exactly */
    ck_assert_int_eq(dal_datasource_info(dal, "DB0", &ds, NULL), DAL_EINVAL);
    ck_assert_int_eq(dal_table_info(NULL, "wm_food", &t, &err), DAL_EINVAL);
    ck_assert_int_eq(dal_table_info(dal, NULL, &t, &err), DAL_EINVAL);
    ck_assert_int_eq(dal_datasource_info(dal, "db0", NULL, &err), DAL_EINVAL);
    /* NULL handles read as nothing */
    ck_assert_ptr_null(dal_table_info_name(NULL));
    ck_assert_uint_eq(dal_datasource_info_server_count(NULL), 0);
    ck_assert_ptr_null(dal_datasource_info_server(NULL, 0));
    dal_table_info_free(NULL);
    dal_datasource_info_free(NULL);
}
END_TEST

START_TEST(test_datasource_defaults)
{
    dal_datasource_info_t *ds = NULL;
    const dal_server_settings_t *m;
    dal_error_t err;

    ck_assert_msg(dal_datasource_info(dal, "db0", &ds, &err) == 0, "%s", err.message);
    ck_assert_str_eq(dal_datasource_info_name(ds), "db0");
    ck_assert_uint_eq(dal_datasource_info_server_count(ds), 1);
    m = dal_datasource_info_server(ds, 0);
    ck_assert_str_eq(m->role, "master");
    ck_assert_str_eq(m->address, "10.0.0.1:3307");
    ck_assert_str_eq(m->host, "10.0.0.1");
    ck_assert_uint_eq(m->port, 3307);
    ck_assert_ptr_null(m->socket);
    ck_assert_str_eq(m->user, "app");
    ck_assert_str_eq(m->password, "s3cret");   /* ${VAR} expanded */
    ck_assert_str_eq(m->database, "p0");
    ck_assert_str_eq(m->charset, "utf8mb4");
    ck_assert_ptr_null(m->ssl_mode);
    ck_assert_ptr_null(m->ssl_ca);
    ck_assert_uint_eq(m->connect_timeout_ms, 5000);
    ck_assert_uint_eq(m->read_timeout_ms, 30000);
    ck_assert_uint_eq(m->weight, 1);
    ck_assert_ptr_null(dal_datasource_info_server(ds, 1));
    dal_datasource_info_free(ds);

    ck_assert_msg(dal_datasource_info(dal, "db1", &ds, &err) == 0, "%s", err.message);
    m = dal_datasource_info_server(ds, 0);
    ck_assert_uint_eq(m->port, 3306);
    ck_assert_ptr_null(m->password);
    dal_datasource_info_free(ds);
}
END_TEST

START_TEST(test_datasource_options)
{
    dal_datasource_info_t *ds = NULL;
    const dal_server_settings_t *m, *r;
    dal_error_t err;

    ck_assert_msg(dal_datasource_info(dal, "dict", &ds, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(dal_datasource_info_server_count(ds), 3);
    m = dal_datasource_info_server(ds, 0);
    ck_assert_str_eq(m->socket, "/run/my.sock");
    ck_assert_str_eq(m->address, "/run/my.sock");
    ck_assert_str_eq(m->user, "ro");
    ck_assert_str_eq(m->password, "pw@x");      /* %40 decoded */
    ck_assert_str_eq(m->charset, "latin1");
    ck_assert_str_eq(m->ssl_mode, "REQUIRED");
    ck_assert_str_eq(m->ssl_ca, "/etc/ca.pem");
    ck_assert_uint_eq(m->connect_timeout_ms, 2000);
    ck_assert_uint_eq(m->read_timeout_ms, 7000);
    r = dal_datasource_info_server(ds, 1);
    ck_assert_str_eq(r->role, "replica");
    ck_assert_str_eq(r->address, "10.0.0.3:3308");
    ck_assert_uint_eq(r->weight, 3);
    /* the master URL's connect_timeout is the section's, which replicas take */
    ck_assert_uint_eq(r->connect_timeout_ms, 2000);
    r = dal_datasource_info_server(ds, 2);
    ck_assert_str_eq(r->host, "::1");
    ck_assert_uint_eq(r->weight, 1);
    dal_datasource_info_free(ds);
}
END_TEST

/* A handle shows the configuration of its call: a reload does not change
 * it, and it stays readable after dal_close. */
START_TEST(test_lifetime)
{
    dal_table_info_t *before = table("wm_food"), *after;
    dal_datasource_info_t *ds = NULL;
    dal_error_t err;

    ck_assert_msg(dal_datasource_info(dal, "db0", &ds, &err) == 0, "%s", err.message);
    /* a resharding, which the new file allows */
    free(write_config(8, "[dal]\nallow_reshard = true\n"));
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    after = table("wm_food");
    ck_assert_uint_eq(dal_table_info_table_shard_num(before), 4);
    ck_assert_uint_eq(dal_table_info_table_shard_num(after), 8);
    dal_close(dal);
    dal = NULL;
    ck_assert_str_eq(dal_table_info_name(before), "wm_food");
    ck_assert_str_eq(dal_table_info_node(after, 1), "db1");
    ck_assert_str_eq(dal_datasource_info_server(ds, 0)->password, "s3cret");
    dal_table_info_free(before);
    dal_table_info_free(after);
    dal_datasource_info_free(ds);
}
END_TEST

/* [proxy] and its users, after a reload too (the handle keeps its own). */
START_TEST(test_proxy)
{
    dal_proxy_info_t *before = NULL, *after = NULL;
    const char *pw, *hash;
    dal_error_t err;

    ck_assert_msg(dal_proxy_info(dal, &before, &err) == 0, "%s", err.message);
    ck_assert_str_eq(dal_proxy_info_listen(before), "127.0.0.1:3307");
    ck_assert_str_eq(dal_proxy_info_database(before), "dal");
    ck_assert_uint_eq(dal_proxy_info_user_count(before), 0);
    ck_assert_ptr_null(dal_proxy_info_tls_cert(before));
    ck_assert_int_eq(dal_proxy_info_require_tls(before), 0);
    ck_assert_uint_eq(dal_proxy_info_auth_delay_after(before), 3);
    ck_assert_uint_eq(dal_proxy_info_auth_delay_max_ms(before), 30000);
    free(write_config(4, "[proxy]\nlisten = 127.0.0.1:4000, 127.0.0.1:4001\ndatabase = shop\n"
                         "threads = 3\nmax_connections = 9\n"
                         "[proxy user app]\npassword = ${INSPECT_TEST_PASSWORD}\n"
                         "[proxy user ro]\npassword_hash = "
                         "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19\n"));
    ck_assert_msg(dal_reload(dal, &err) == 0, "%s", err.message);
    ck_assert_msg(dal_proxy_info(dal, &after, &err) == 0, "%s", err.message);
    ck_assert_str_eq(dal_proxy_info_listen(after), "127.0.0.1:4000, 127.0.0.1:4001");
    ck_assert_str_eq(dal_proxy_info_database(after), "shop");
    ck_assert_uint_eq(dal_proxy_info_threads(after), 3);
    ck_assert_uint_eq(dal_proxy_info_max_connections(after), 9);
    ck_assert_uint_eq(dal_proxy_info_max_allowed_packet(after), 67108864);
    ck_assert_uint_eq(dal_proxy_info_user_count(after), 2);
    ck_assert_str_eq(dal_proxy_info_user(after, 0, &pw, &hash), "app");
    ck_assert_str_eq(pw, "s3cret");
    ck_assert_ptr_null(hash);
    ck_assert_str_eq(dal_proxy_info_user(after, 1, &pw, &hash), "ro");
    ck_assert_ptr_null(pw);
    ck_assert_str_eq(hash, "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    ck_assert_ptr_null(dal_proxy_info_user(after, 2, &pw, &hash));
    ck_assert_str_eq(dal_proxy_info_database(before), "dal");
    ck_assert_int_eq(dal_proxy_info(dal, NULL, &err), DAL_EINVAL);
    dal_proxy_info_free(before);
    dal_proxy_info_free(after);
}
END_TEST

static Suite *inspect_suite(void)
{
    Suite *s = suite_create("inspect");
    TCase *tc = tcase_create("tables");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_sharded);
    tcase_add_test(tc, test_placement_matches_explain);
    tcase_add_test(tc, test_other_layouts);
    tcase_add_test(tc, test_table_names);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("datasources");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_datasource_defaults);
    tcase_add_test(tc, test_datasource_options);
    tcase_add_test(tc, test_lifetime);
    tcase_add_test(tc, test_proxy);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(inspect_suite(), CK_FORK_GETENV);

    return status;
}
