/*
 * test_guard.c -- dal-proxy's failed-login throttle (proxy/guard.c: the
 * wait by failures in a row, its cap, a success clearing the address,
 * IPv6 addresses by their /64, a table that stays bounded) and the errors
 * a client may see (proxy/redact.c: no backend user, host, port or
 * schema).  The whole of it against a real server and clients is
 * tests/suites/proxy_guard_test.sh.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "proxy.h"
#include "check_run.h"

START_TEST(test_delay_grows_to_cap)
{
    proxy_guard_t *g = guard_new(3, 2500);
    int i;

    ck_assert_ptr_nonnull(g);
    for (i = 0; i < 3; i++) {
        ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.1"), 0);
        guard_failed(g, "192.0.2.1", "intruder");
    }
    ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.1"), 1000);
    guard_failed(g, "192.0.2.1", "intruder");
    ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.1"), 2000);
    guard_failed(g, "192.0.2.1", "intruder");
    ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.1"), 2500);
    ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.2"), 0);   /* another address */
    guard_ok(g, "192.0.2.1", "app");
    ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.1"), 0);
    guard_free(g);
}
END_TEST

START_TEST(test_off)
{
    proxy_guard_t *g = guard_new(0, 30000);
    int i;

    for (i = 0; i < 10; i++)
        guard_failed(g, "192.0.2.1", "u");
    ck_assert_uint_eq(guard_delay_ms(g, "192.0.2.1"), 0);
    guard_free(g);
    ck_assert_uint_eq(guard_delay_ms(NULL, "192.0.2.1"), 0);
    guard_failed(NULL, "192.0.2.1", "u");
    guard_ok(NULL, "192.0.2.1", "u");
}
END_TEST

/* an IPv6 host's neighbours in its /64 are the same client; IPv4-mapped
 * addresses are each their own */
START_TEST(test_ipv6_prefix)
{
    proxy_guard_t *g = guard_new(1, 30000);

    guard_failed(g, "2001:db8::1", "u");
    ck_assert_uint_eq(guard_delay_ms(g, "2001:db8::ffff:2"), 1000);
    ck_assert_uint_eq(guard_delay_ms(g, "2001:db8:0:1::1"), 0);
    guard_failed(g, "::ffff:10.0.0.1", "u");
    ck_assert_uint_eq(guard_delay_ms(g, "::ffff:10.0.0.1"), 1000);
    ck_assert_uint_eq(guard_delay_ms(g, "::ffff:10.0.0.2"), 0);
    guard_free(g);
}
END_TEST

/* many addresses: the table keeps its size, the newest still count */
START_TEST(test_bounded)
{
    proxy_guard_t *g = guard_new(1, 30000);
    char peer[32];
    int i;

    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr)); /* a line each */
    for (i = 0; i < 100000; i++) {
        snprintf(peer, sizeof peer, "10.%d.%d.%d", i >> 16 & 255, i >> 8 & 255, i & 255);
        guard_failed(g, peer, "u");
    }
    ck_assert_uint_eq(guard_delay_ms(g, peer), 1000);
    guard_free(g);
}
END_TEST

typedef struct {
    const char *in, *want;
    bool changed;
} rcase_t;

static const rcase_t rcases[] = {
    {"datasource ds0 (dal@127.0.0.1:3306/shard_0): error 2003 (HY000): Can't connect",
     "datasource ds0: error 2003 (HY000): Can't connect", true},
    {"datasource ds1 replica 2 (ro@10.0.0.9:3307/shard_1): error 1205 (HY000): Lock wait",
     "datasource ds1 replica 2: error 1205 (HY000): Lock wait", true},
    {"datasource ds0 replica 1 (10.0.0.9:3307) is down", "datasource ds0 replica 1 is down", true},
    {"datasource ds0 (dal@socket:/run/mysqld.sock/db): x", "datasource ds0: x", true},
    {"SELECT command denied to user 'dal'@'10.0.0.5' for table `mysql`.`user`",
     "SELECT command denied to user 'app'@'192.0.2.7' for table `mysql`.`user`", true},
    {"Access denied for user 'dal'@'%' to database 'mysql'",
     "Access denied for user 'app'@'192.0.2.7' to database 'mysql'", true},
    {"Operation CREATE USER failed for 'bob'@'%'", "Operation CREATE USER failed for 'bob'@'%'",
     false},
    {"Can't create user 'foo'@'%'; it already exists",
     "Can't create user 'foo'@'%'; it already exists", false},
    {"Table 'shard_0.orders_3' doesn't exist", "Table 'shard_0.orders_3' doesn't exist", false},
    {"this session's user variables are on datasource ds0 (where it first used one)",
     "this session's user variables are on datasource ds0 (where it first used one)", false},
    {"near ')' at line 1", "near ')' at line 1", false},
    {"", "", false},
};

START_TEST(test_redact)
{
    const rcase_t *t = &rcases[_i];
    char out[256];

    ck_assert_int_eq(redact_message(t->in, "app", "192.0.2.7", out, sizeof out), t->changed);
    ck_assert_str_eq(out, t->want);
}
END_TEST

START_TEST(test_redact_small_buffer)
{
    char out[8];

    redact_message("datasource ds0 (dal@h:1/db): long message", "app", "p", out, sizeof out);
    ck_assert_str_eq(out, "datasou");
    redact_message("denied to user 'a'@'b'", "someone", "somewhere", out, sizeof out);
    ck_assert_str_eq(out, "denied ");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("guard");
    TCase *tc = tcase_create("guard");

    tcase_add_test(tc, test_delay_grows_to_cap);
    tcase_add_test(tc, test_off);
    tcase_add_test(tc, test_ipv6_prefix);
    tcase_add_test(tc, test_bounded);
    tcase_add_loop_test(tc, test_redact, 0, (int)(sizeof rcases / sizeof rcases[0]));
    tcase_add_test(tc, test_redact_small_buffer);
    suite_add_tcase(s, tc);
    return tu_run(s, CK_FORK_GETENV);
}
