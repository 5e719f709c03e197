/*
 * test_api.c -- the public API's fixed answers: dal_version, the name of
 * an error code (dal_strerror) and of a log level; the client character
 * sets dal refuses (dal_client_charset_check, dal_collation_refused).
 */
#include <check.h>

#include <dal/dal.h>

#include "check_run.h"

START_TEST(test_log_callback_and_version)
{
    ck_assert_str_eq(dal_version(), DAL_VERSION_STRING);
    ck_assert_str_eq(dal_strerror(DAL_ECONFIG), "DAL_ECONFIG");
    ck_assert_str_eq(dal_log_level_name(DAL_LOG_WARN), "warn");
}
END_TEST

START_TEST(test_client_charset)
{
    static const char *const taken[] = {"utf8mb4", "'latin1'", "`utf8mb3`", "DEFAULT", "45",
                                        "\"ujis\"", " euckr ;"};
    static const char *const refused[] = {"gbk", "'SJIS'", "`big5`", "\"cp932\"", "gb18030",
                                          "utf16", "28", "'gbk", "@cs", "CONCAT('g', 'bk')",
                                          "99999", ""};
    dal_error_t err;
    size_t i;

    for (i = 0; i < sizeof taken / sizeof taken[0]; i++)
        ck_assert_msg(dal_client_charset_check("character_set_client", taken[i], &err) == 0,
                      "%s refused", taken[i]);
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        ck_assert_msg(dal_client_charset_check("Character_Set_Client", refused[i], &err) ==
                          DAL_EINVAL, "%s taken", refused[i]);
        ck_assert_uint_eq(err.mysql_errno, 1115);
        ck_assert_str_eq(err.sqlstate, "42000");
    }
    ck_assert_int_eq(dal_client_charset_check("names", "'gbk' COLLATE gbk_bin", &err), DAL_EINVAL);
    ck_assert_int_eq(dal_client_charset_check("names", "utf8mb4 COLLATE utf8mb4_bin", &err), 0);
    ck_assert_int_eq(dal_client_charset_check("sql_mode", "'gbk'", &err), 0);
    ck_assert(dal_collation_refused(28) && dal_collation_refused(13) && dal_collation_refused(1) &&
              dal_collation_refused(95) && dal_collation_refused(87));
    ck_assert(!dal_collation_refused(45) && !dal_collation_refused(8) &&
              !dal_collation_refused(33) && !dal_collation_refused(0));
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("names");

    tcase_add_test(tc, test_log_callback_and_version);
    tcase_add_test(tc, test_client_charset);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(api_suite(), CK_FORK_GETENV);

    return status;
}
