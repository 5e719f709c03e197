/*
 * test_gtid.c -- gtid.c: a MariaDB GTID and a GTID position parsed, and
 * whether a position covers a GTID (what a read that must see a write asks
 * of a replica).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "gtid.h"
#include "check_run.h"

static int gtid(const char *text, dal_gtid_t *g)
{
    return gtid_parse(text, strlen(text), g);
}

static int gpos(const char *text, dal_gtid_pos_t *pos)
{
    return gtid_pos_parse(text, strlen(text), pos);
}

START_TEST(test_gtid)
{
    dal_gtid_pos_t pos;
    dal_gtid_t g;

    ck_assert_int_eq(gtid("0-1-42", &g), 0);
    ck_assert(g.domain == 0 && g.server == 1 && g.seq == 42);
    ck_assert_int_eq(gtid("4294967295-7-18446744073709551615", &g), 0);
    ck_assert(g.domain == 4294967295u && g.seq == UINT64_MAX);
    ck_assert_int_eq(gtid("4294967296-1-1", &g), -1);
    ck_assert_int_eq(gtid("0-1", &g), -1);
    ck_assert_int_eq(gtid("0-1-", &g), -1);
    ck_assert_int_eq(gtid("0-1-2x", &g), -1);
    ck_assert_int_eq(gtid("", &g), -1);
    ck_assert_int_eq(gpos("", &pos), 0);
    ck_assert_uint_eq(pos.n, 0);
    ck_assert_int_eq(gpos(" 0-1-5 ,\n1-2-7", &pos), 0);
    ck_assert_uint_eq(pos.n, 2);
    g.domain = 1;
    g.seq = 7;
    ck_assert(gtid_pos_covers(&pos, &g));
    g.seq = 8;
    ck_assert(!gtid_pos_covers(&pos, &g));
    g.domain = 2;
    g.seq = 1;
    ck_assert(!gtid_pos_covers(&pos, &g));
    ck_assert_int_eq(gpos("0-1-5,,x", &pos), -1);
    /* more domains than kept */
    ck_assert_int_eq(gpos("0-1-1,1-1-1,2-1-1,3-1-1,4-1-1,5-1-1,6-1-1,7-1-1,8-1-1", &pos), -1);
}
END_TEST

static Suite *gtid_suite(void)
{
    Suite *s = suite_create("gtid");
    TCase *tc = tcase_create("gtid");

    tcase_add_test(tc, test_gtid);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(gtid_suite(), CK_FORK_GETENV);

    return status;
}
