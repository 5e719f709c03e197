/*
 * test_route.c -- routing (route.c and the files of its module) without a
 * database, through dal_explain, which never connects: where each statement
 * goes and as what, the errors, the route memo, scopes of subqueries and
 * joins, DDL over every table, typed shard values.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "offline.h"
#include "testutil.h"

/* ----------------------------------------------------------------- routing */

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
    /* a compound statement at top level runs whole there, or not at all */
    {4, "FOR i IN 1..3 DO INSERT INTO local_t VALUES (i); END FOR", NULL, NULL, NULL, 0, 1, "db3",
     "FOR i IN 1..3 DO INSERT INTO local_t VALUES (i); END FOR", NULL},
    {4, "BEGIN NOT ATOMIC INSERT INTO local_t VALUES (1); DELETE FROM wm_food; END", NULL, NULL,
     NULL, DAL_EUNSUPPORTED, 0, NULL, NULL, "a compound statement names table wm_food, which is sharded"},
    {4, "w: WHILE @i < 3 DO SELECT * FROM dict; END WHILE w", NULL, NULL, NULL, DAL_EUNSUPPORTED,
     0, NULL, NULL, "names table dict"},
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

static void names_join(void *user, const char *name)
{
    strcat(user, name);
    strcat(user, ";");
}

/* explain's datasource for sql, or the error's code and message. */
static void explains(dal_t *dal, const char *sql, int code, const char *want)
{
    dal_plan_t *plan = NULL;
    dal_error_t err;
    int rc = dal_explain(dal, NULL, sql, NULL, 0, &plan, &err);

    ck_assert_msg(rc == code, "%s: rc %s: %s", sql, dal_strerror(rc), rc ? err.message : "");
    if (rc == 0)
        ck_assert_str_eq(dal_plan_datasource(plan, 0), want);
    else
        ck_assert_msg(strstr(err.message, want) != NULL, "%s: '%s' not in '%s'", sql, want,
                      err.message);
    dal_plan_free(plan);
}

/* [schema] sections leave a libdal program the top level it had: its
 * tables, its default datasource; a schema's table is refused, never
 * taken for a table of the default datasource, unless qualified with its
 * schema.  A session's schema is one of the file (server_schemas = none:
 * no database of a server's). */
START_TEST(test_route_schemas)
{
    char *ini = write_ini("datasource = db0\n[dal]\ndefault_datasource = db3\n"
                          "server_schemas = none\n[schema hr]\ndefault_datasource = db1\n"
                          "[table staff]\nschema = hr\ndatasource = db2\n");
    dal_open_opts_t opts;
    dal_session_t *s = NULL;
    dal_error_t err;
    dal_t *dal = NULL;
    char names[64] = "";

    memset(&opts, 0, sizeof opts);
    ck_assert_msg(dal_open(ini, &opts, &dal, &err) == 0, "%s", err.message);
    free(ini);
    explains(dal, "SELECT * FROM t", 0, "db0");
    explains(dal, "SELECT * FROM elsewhere", 0, "db3");
    explains(dal, "SELECT * FROM dal.t", 0, "db0");
    explains(dal, "SELECT * FROM staff", DAL_EROUTE,
             "table staff is a table of [schema hr], not of the top level");
    /* another logical database's tables by qualified name: that schema's
     * table, or its default datasource; tables of two in one statement
     * refused */
    explains(dal, "SELECT * FROM hr.memo", 0, "db1");
    explains(dal, "SELECT * FROM hr.staff", 0, "db2");
    explains(dal, "SELECT * FROM hr.staff s JOIN t", DAL_EUNSUPPORTED,
             "staff names a table of hr and t one of dal");
    ck_assert_int_eq(dal_schema_names(dal, names_join, names, &err), 0);
    ck_assert_str_eq(names, "hr;");
    ck_assert_int_eq(dal_session_open(dal, &s, &err), 0);
    ck_assert_ptr_null(dal_session_schema(s));
    ck_assert_int_eq(dal_session_use_schema(s, "nosuch", &err), DAL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown schema 'nosuch'"));
    ck_assert_int_eq(dal_session_use_schema(s, "hr", &err), 0);
    ck_assert_str_eq(dal_session_schema(s), "hr");
    ck_assert_int_eq(dal_session_use_schema(s, NULL, &err), 0);
    ck_assert_ptr_null(dal_session_schema(s));
    dal_session_close(s);
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
    /* one table not sharded, one the configuration does not name, none */
    "SELECT * FROM dict WHERE id = ?",
    "UPDATE dict SET v = ? WHERE id = 1",
    "SELECT * FROM elsewhere WHERE id = ?",
    "DELETE FROM elsewhere WHERE id = ?",
    "SELECT ?",
    "SELECT * FROM dict d JOIN elsewhere e ON d.id = e.id WHERE d.id = ?",
    "/*+ dal datasource=db1 */ SELECT * FROM dict WHERE id = ?",
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

/* The datasources of sql's plan (one a line), or the error's message. */
static int plan_datasources(dal_t *dal, const char *sql, const dal_value_t *params, size_t n,
                            char *out, size_t cap)
{
    dal_plan_t *plan = NULL;
    dal_error_t err;
    size_t i, m = 0;
    int rc = dal_explain(dal, NULL, sql, params, n, &plan, &err);

    out[0] = '\0';
    for (i = 0; rc == 0 && i < dal_plan_count(plan) && m < cap; i++)
        m += (size_t)snprintf(out + m, cap - m, "%s\n", dal_plan_datasource(plan, i));
    if (rc != 0)
        snprintf(out, cap, "%s", err.message);
    dal_plan_free(plan);
    return rc;
}

/* A literal key routes as the same value given as a parameter: plain
 * digits (read in place), with leading zeros, 18 and 19 digits, signs,
 * blanks, a decimal point and one past int64 (read as before). */
START_TEST(test_route_literal_keys)
{
    static const struct {
        const char *lit;
        int is_int;
        long long v;
    } keys[] = {{"7", 1, 7}, {"0000123", 1, 123}, {"123456789012345678", 1, 123456789012345678LL},
                {"1234567890123456789", 1, 1234567890123456789LL}, {"-42", 1, -42},
                {"+ 17", 1, 17}, {"- 5", 1, -5}, {"12.0", 0, 0},
                {"9223372036854775807", 1, 9223372036854775807LL},
                {"9223372036854775808", 0, 0}};
    dal_t *dal = open_mod(4);
    char sql[160], got[4096], want[4096];
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        dal_value_t v = keys[i].is_int ? dal_int(keys[i].v) : dal_str(keys[i].lit);
        int rc_got, rc_want;

        snprintf(sql, sizeof sql, "SELECT name FROM wm_food WHERE wm_poi_id = %s", keys[i].lit);
        rc_got = plan_datasources(dal, sql, NULL, 0, got, sizeof got);
        rc_want = plan_datasources(dal, "SELECT name FROM wm_food WHERE wm_poi_id = ?", &v, 1,
                                   want, sizeof want);
        ck_assert_msg(rc_got == rc_want && strcmp(got, want) == 0,
                      "%s: literal %s %s, parameter %s %s", keys[i].lit, dal_strerror(rc_got),
                      got, dal_strerror(rc_want), want);
    }
    dal_close(dal);
}
END_TEST

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

/* Arm i of test_scopes_many, its table named t_account followed by sfx. */
static size_t many_arm(char *b, size_t cap, int i, const char *sfx)
{
    const char *sep = i ? " UNION ALL " : "";

    switch (i % 3) {
    case 0:
        return (size_t)snprintf(b, cap, "%sSELECT amount FROM t_account%s WHERE account_id = %d",
                                sep, sfx, 100 + i % 2);
    case 1:
        return (size_t)snprintf(b, cap,
                                "%sSELECT a.amount FROM t_account%s a WHERE a.account_id = %d",
                                sep, sfx, 100 + i % 2);
    default:
        return (size_t)snprintf(b, cap, "%sSELECT t_account%s.amount FROM t_account%s WHERE "
                                "t_account%s.account_id = %d", sep, sfx, sfx, sfx, 100 + i % 2);
    }
}

/* A statement of thousands of scopes (routing is linear in them, bench/
 * route_scale.c): each arm's table by its own condition, named plainly, by
 * an alias or by its name as qualifier, the qualifier renamed with it. */
START_TEST(test_scopes_many)
{
    dal_t *dal = open_accounts(1);
    size_t cap = 3000 * 100, n = 0, w = 0;
    char *sql = malloc(cap), *want = malloc(cap);
    dal_plan_t *plan = NULL;
    dal_error_t err;
    int i, rc;

    ck_assert(sql != NULL && want != NULL);
    for (i = 0; i < 3000; i++) {
        n += many_arm(sql + n, cap - n, i, "");
        w += many_arm(want + w, cap - w, i, i % 2 ? "_1" : "_0");
    }
    rc = dal_explain(dal, NULL, sql, NULL, 0, &plan, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ck_assert_uint_eq(dal_plan_count(plan), 1);
    ck_assert_str_eq(dal_plan_sql(plan, 0), want);
    dal_plan_free(plan);
    dal_close(dal);
    free(sql);
    free(want);
}
END_TEST

/* A statement whose routing would hold more than ROUTE_MAX_POSITIONS
 * (routes x table references) is refused before it takes the memory: a
 * scatter over 1,024 tables reading a broadcast table in 17,000
 * subqueries, where 16,000 fit. */
START_TEST(test_routes_bounded)
{
    static const int subqueries[2] = {16000, 17000};
    dal_open_opts_t opts;
    dal_plan_t *plan = NULL;
    dal_error_t err;
    dal_t *dal = NULL;
    char *ini = write_ini_named("w", "datasource = db\ndb_shard_num = 4\ntable_shard_num = "
                                     "1024\nshard_key = k\nstrategy = mod\n"
                                     "[table b]\ndatasource = db\ndb_shard_num = 4\n"
                                     "broadcast = true\n");
    size_t cap = 17000 * 40, n;
    char *sql = malloc(cap);
    int i, k, rc;

    memset(&opts, 0, sizeof opts);
    ck_assert_msg(dal_open(ini, &opts, &dal, &err) == 0, "%s", err.message);
    ck_assert_ptr_nonnull(sql);
    for (k = 0; k < 2; k++) {
        n = (size_t)snprintf(sql, cap, "SELECT a FROM w WHERE 1 = 1");
        for (i = 0; i < subqueries[k]; i++)
            n += (size_t)snprintf(sql + n, cap - n, " AND a IN (SELECT x FROM b)");
        rc = dal_explain(dal, NULL, sql, NULL, 0, &plan, &err);
        if (k == 0) {
            ck_assert_msg(rc == 0, "%s", err.message);
            ck_assert_uint_eq(dal_plan_count(plan), 1024);
            dal_plan_free(plan);
            plan = NULL;
        } else {
            ck_assert_int_eq(rc, DAL_EUNSUPPORTED);
            ck_assert_msg(strstr(err.message, "17001 tables and runs on 1024") != NULL, "%s",
                          err.message);
        }
    }
    dal_close(dal);
    free(ini);
    free(sql);
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

static Suite *route_suite(void)
{
    Suite *s = suite_create("route");
    TCase *tc = tcase_create("routing");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_routes, 0, sizeof route_cases / sizeof route_cases[0]);
    tcase_add_test(tc, test_ddl_layout);
    tcase_add_test(tc, test_route_memo);
    tcase_add_test(tc, test_route_literal_keys);
    tcase_add_test(tc, test_route_no_table);
    tcase_add_test(tc, test_route_schemas);
    tcase_add_test(tc, test_route_memo_reload);
    tcase_add_loop_test(tc, test_scopes, 0, sizeof scope_cases / sizeof scope_cases[0]);
    tcase_add_test(tc, test_scopes_many);
    tcase_add_test(tc, test_routes_bounded);
    tcase_add_test(tc, test_typed_values);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(route_suite(), CK_FORK_GETENV);

    return status;
}
