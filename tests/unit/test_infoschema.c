/*
 * test_infoschema.c -- where a statement names information_schema.TABLES,
 * COLUMNS or STATISTICS (proxy/infoschema_scan.c): the spans dal-proxy
 * replaces by derived tables over the logical tables, and whether an alias
 * follows.  The answers themselves are judged against MariaDB by
 * tests/suites/proxy_ident_test.sh.
 */
#include <check.h>
#include <string.h>

#include "infoschema.h"
#include "check_run.h"

static const struct {
    const char *sql;
    size_t n;
    const char *first;  /* the text of the first reference */
    int view;
    bool aliased;
} cases[] = {
    {"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'shop'", 1,
     "information_schema.tables", INFOSCHEMA_TABLES, false},
    {"SELECT * FROM INFORMATION_SCHEMA.COLUMNS c WHERE c.TABLE_NAME = 'x'", 1,
     "INFORMATION_SCHEMA.COLUMNS", INFOSCHEMA_COLUMNS, true},
    {"SELECT * FROM `information_schema` . `STATISTICS` AS s", 1,
     "`information_schema` . `STATISTICS`", INFOSCHEMA_STATISTICS, true},
    {"SELECT * FROM information_schema.TABLES ORDER BY 1", 1, "information_schema.TABLES",
     INFOSCHEMA_TABLES, false},
    {"SELECT * FROM information_schema.TABLES t JOIN information_schema.COLUMNS c USING (TABLE_NAME)",
     2, "information_schema.TABLES", INFOSCHEMA_TABLES, true},
    {"SELECT * FROM information_schema /* the views */ . tables", 1,
     "information_schema /* the views */ . tables", INFOSCHEMA_TABLES, false},
    {"SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE ( )", 2,
     "information_schema.TABLES", INFOSCHEMA_TABLES, false},
    {"SELECT schema() FROM t", 1, "schema()", INFOSCHEMA_DATABASE, false},
    {"SELECT VARIABLE_VALUE FROM information_schema.session_variables s", 1,
     "information_schema.session_variables", INFOSCHEMA_SESSION_VARIABLES, true},
    {"SELECT\n\tDatabase\n(\n)", 1, "Database\n(\n)", INFOSCHEMA_DATABASE, false},
    {"SELECT DATABASE/* x */()", 1, "DATABASE/* x */()", INFOSCHEMA_DATABASE, false},
    {"SELECT DATABASE # x\n()", 1, "DATABASE # x\n()", INFOSCHEMA_DATABASE, false},
    {"SELECT * FROM Information_Schema.Tables", 1, "Information_Schema.Tables",
     INFOSCHEMA_TABLES, false},
    /* not references: strings, comments, other views, a column qualifier */
    {"SELECT c FROM sbtest1 WHERE id = 5", 0, NULL, 0, false},
    {"SELECT f(x) FROM my_table WHERE a IN (1, 2)", 0, NULL, 0, false},
    {"SELECT information_", 0, NULL, 0, false},
    {"SELECT 'information_schema.tables'", 0, NULL, 0, false},
    {"SELECT 1 -- information_schema.tables", 0, NULL, 0, false},
    {"SELECT 1 /* information_schema.columns */", 0, NULL, 0, false},
    {"SELECT * FROM information_schema.PROCESSLIST", 0, NULL, 0, false},
    {"SELECT * FROM information_schema_tables", 0, NULL, 0, false},
    {"SELECT \"it's\" FROM t WHERE a = 'x\\'information_schema.tables'", 0, NULL, 0, false},
    {"SELECT x.information_schema.tables FROM t", 0, NULL, 0, false},
    {"SELECT `database`() FROM t, database", 0, NULL, 0, false},
};

START_TEST(test_find)
{
    infoschema_ref_t refs[4];
    size_t n = infoschema_find(cases[_i].sql, strlen(cases[_i].sql), false, refs, 4);

    ck_assert_uint_eq(n, cases[_i].n);
    if (n == 0)
        return;
    ck_assert_uint_eq(refs[0].len, strlen(cases[_i].first));
    ck_assert(strncmp(cases[_i].sql + refs[0].off, cases[_i].first, refs[0].len) == 0);
    ck_assert_int_eq(refs[0].view, cases[_i].view);
    ck_assert_int_eq(refs[0].aliased, cases[_i].aliased);
}
END_TEST

START_TEST(test_database_call)
{
    infoschema_ref_t refs[4];
    const char *sql = "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE ( )";

    ck_assert_uint_eq(infoschema_find(sql, strlen(sql), false, refs, 4), 2);
    ck_assert_int_eq(refs[1].view, INFOSCHEMA_DATABASE);
    ck_assert_str_eq(sql + refs[1].off, "DATABASE ( )");
    ck_assert_uint_eq(refs[1].len, strlen("DATABASE ( )"));
}
END_TEST

/* A NUL inside a string or a comment is text: the references after it
 * are found. */
START_TEST(test_nul_in_string)
{
    static const char sql[] = "SELECT 'a\0b', /* c\0d */ 1 FROM information_schema.COLUMNS";
    infoschema_ref_t refs[4];

    ck_assert_uint_eq(infoschema_find(sql, sizeof sql - 1, false, refs, 4), 1);
    ck_assert_int_eq(refs[0].view, INFOSCHEMA_COLUMNS);
    ck_assert_uint_eq(refs[0].off, sizeof sql - 1 - strlen("information_schema.COLUMNS"));
}
END_TEST

/* With NO_BACKSLASH_ESCAPES a string ending in a backslash ends there:
 * the view after it is a reference; in the default mode it is quoted. */
START_TEST(test_no_backslash)
{
    const char *sql = "SELECT 'a\\', information_schema.TABLES.x, 'b' FROM t";
    infoschema_ref_t refs[4];

    ck_assert_uint_eq(infoschema_find(sql, strlen(sql), true, refs, 4), 1);
    ck_assert_int_eq(refs[0].view, INFOSCHEMA_TABLES);
    ck_assert_uint_eq(infoschema_find(sql, strlen(sql), false, refs, 4), 0);
}
END_TEST

START_TEST(test_max)
{
    infoschema_ref_t refs[1];
    const char *sql = "SELECT * FROM information_schema.TABLES, information_schema.COLUMNS";

    ck_assert_uint_eq(infoschema_find(sql, strlen(sql), false, refs, 1), 1);
    ck_assert_str_eq(infoschema_view_name(INFOSCHEMA_STATISTICS), "STATISTICS");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("infoschema");
    TCase *tc = tcase_create("infoschema");

    tcase_add_loop_test(tc, test_find, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_database_call);
    tcase_add_test(tc, test_max);
    tcase_add_test(tc, test_nul_in_string);
    tcase_add_test(tc, test_no_backslash);
    suite_add_tcase(s, tc);
    return tu_run(s, CK_FORK_GETENV);
}
