/*
 * test_parse.c -- the parsers of configuration values (parse.c):
 * integers, durations, booleans, each accepted and refused by a table of
 * inputs.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>

#include "parse.h"
#include "check_run.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------- value parsers */

START_TEST(test_parse_int64)
{
    static const struct { const char *in; int64_t v; } good[] = {
        {"0", 0}, {"42", 42}, {"-7", -7}, {"+7", 7}, {" \t12 ", 12}, {"007", 7},
        {"9223372036854775807", INT64_MAX}, {"-9223372036854775808", INT64_MIN},
    };
    static const char *const bad[] = {
        "", " ", "-", "+", "abc", "1.5", "1e3", "0x10", "12abc", "1 2", "--1",
        "9223372036854775808", "-9223372036854775809", "99999999999999999999",
    };
    int64_t v;
    size_t i;

    for (i = 0; i < NELEM(good); i++) {
        ck_assert_msg(parse_int64(good[i].in, &v) == 0, "'%s' rejected", good[i].in);
        ck_assert_int_eq(v, good[i].v);
    }
    for (i = 0; i < NELEM(bad); i++)
        ck_assert_msg(parse_int64(bad[i], &v) == -1, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_parse_duration)
{
    static const struct { const char *in; int64_t ms; } good[] = {
        {"0", 0}, {"250ms", 250}, {"5s", 5000}, {"5", 5000}, {"2m", 120000}, {"1h", 3600000},
        {" 30s ", 30000}, {"0ms", 0}, {"9223372036854775807ms", INT64_MAX},
    };
    static const char *const bad[] = {
        "", "s", "ms", "-1s", "1.5s", "5 s", "5sec", "5S", "5d", "1h2m", "abc",
        "9223372036854775807s", "99999999999999999999ms", "2562047788015216h",
    };
    int64_t ms;
    size_t i;

    for (i = 0; i < NELEM(good); i++) {
        ck_assert_msg(parse_duration_ms(good[i].in, &ms) == 0, "'%s' rejected", good[i].in);
        ck_assert_int_eq(ms, good[i].ms);
    }
    for (i = 0; i < NELEM(bad); i++)
        ck_assert_msg(parse_duration_ms(bad[i], &ms) == -1, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_parse_bool)
{
    static const struct { const char *in; int v; } good[] = {
        {"true", 1}, {"TRUE", 1}, {"yes", 1}, {"On", 1}, {"1", 1}, {" yes ", 1},
        {"false", 0}, {"No", 0}, {"off", 0}, {"0", 0},
    };
    static const char *const bad[] = {"", "y", "n", "2", "truee", "t rue", "enabled", "-1"};
    size_t i;
    int v;

    for (i = 0; i < NELEM(good); i++) {
        ck_assert_msg(parse_bool(good[i].in, &v) == 0, "'%s' rejected", good[i].in);
        ck_assert_int_eq(v, good[i].v);
    }
    for (i = 0; i < NELEM(bad); i++)
        ck_assert_msg(parse_bool(bad[i], &v) == -1, "'%s' accepted", bad[i]);
}
END_TEST

static Suite *parse_suite(void)
{
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("values");

    tcase_add_test(tc, test_parse_int64);
    tcase_add_test(tc, test_parse_duration);
    tcase_add_test(tc, test_parse_bool);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(parse_suite(), CK_FORK_GETENV);

    return status;
}
