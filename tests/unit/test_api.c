/*
 * test_api.c -- the public API's fixed answers: dal_version, the name of
 * an error code (dal_strerror) and of a log level.
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

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("names");

    tcase_add_test(tc, test_log_callback_and_version);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(api_suite(), CK_FORK_GETENV);

    return status;
}
