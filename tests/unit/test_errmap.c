/*
 * test_errmap.c -- the server error dal-proxy sends for each dal_error_t
 * code (proxy/errmap.c): the table of docs/proxy.md, each refusal a
 * non-transient class, 1105 ER_UNKNOWN_ERROR only for what the client
 * cannot act on.  The errors as clients receive them are checked by
 * tests/suites/proxy_ident_test.sh.
 */
#include <check.h>
#include <string.h>

#include <dal/dal.h>

#include "errmap.h"
#include "check_run.h"

static const struct {
    int code;
    unsigned number;
    const char *sqlstate;
} cases[] = {
    {DAL_ESQL, 1064, "42000"},
    {DAL_EUNSUPPORTED, 1235, "42000"},
    {DAL_EROUTE, 1235, "42000"},
    {DAL_ESHARD, 1264, "22003"},
    {DAL_EINVAL, 1210, "42000"},
    {DAL_ESTATE, 1192, "25000"},
    {DAL_EPARTIAL, 1180, "HY000"},
    {DAL_ENOMEM, 1037, "HY001"},
    {DAL_ECONFIG, 1105, "HY000"},
    {DAL_EPLUGIN, 1105, "HY000"},
    {DAL_EIO, 1105, "HY000"},
    {-999, 1105, "HY000"},  /* a code of a newer library */
};

START_TEST(test_table)
{
    const proxy_errno_t *e = errmap_of(cases[_i].code);

    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->number, cases[_i].number);
    ck_assert_str_eq(e->sqlstate, cases[_i].sqlstate);
}
END_TEST

/* No refusal of a statement is in a class a driver retries (08, 40) or
 * the unknown error a driver cannot classify. */
START_TEST(test_statement_refusals_classified)
{
    static const int refusals[] = {DAL_ESQL, DAL_EUNSUPPORTED, DAL_EROUTE, DAL_ESHARD,
                                   DAL_EINVAL, DAL_ESTATE, DAL_EPARTIAL};
    size_t i;

    for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        const proxy_errno_t *e = errmap_of(refusals[i]);
        ck_assert_uint_ne(e->number, 1105);
        ck_assert_int_eq((int)strlen(e->sqlstate), 5);
        ck_assert(strncmp(e->sqlstate, "08", 2) != 0 && strncmp(e->sqlstate, "40", 2) != 0);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("errmap");
    TCase *tc = tcase_create("errmap");

    tcase_add_loop_test(tc, test_table, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_statement_refusals_classified);
    suite_add_tcase(s, tc);
    return tu_run(s, CK_FORK_GETENV);
}
