/*
 * test_url.c -- datasource URLs (url.c): parsed, refused with a message
 * that names the fault, their extra options, compared, and every
 * USER:PASSWORD@ masked in text that is shown.
 *
 * Most tests are tables: one row per input.  All test passwords contain
 * "S3cret", so a message that shows one is caught.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"
#include "check_run.h"

#define SECRET "S3cret"   /* part of every password in this file */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- URLs */

struct good_url {
    const char *text;
    const char *user, *password, *host;
    unsigned int port;
    const char *database, *socket, *ssl_mode, *ssl_ca, *charset;
    int64_t timeout_ms;
    const char *display;
};

static const struct good_url good_urls[] = {
    {"mysql://root:pw@127.0.0.1:3306/product_0", "root", "pw", "127.0.0.1", 3306, "product_0",
     NULL, NULL, NULL, "utf8mb4", 0, "root@127.0.0.1:3306/product_0"},
    {"mysql://h", "", NULL, "h", 3306, NULL, NULL, NULL, NULL, "utf8mb4", 0, "h:3306"},
    {"mysql://", "", NULL, "127.0.0.1", 3306, NULL, NULL, NULL, NULL, "utf8mb4", 0, "127.0.0.1:3306"},
    {"MariaDB://u@:3310/", "u", NULL, "127.0.0.1", 3310, NULL, NULL, NULL, NULL, "utf8mb4", 0, "u@127.0.0.1:3310"},
    {"mysql://u:@h/d", "u", "", "h", 3306, "d", NULL, NULL, NULL, "utf8mb4", 0, "u@h:3306/d"},
    {"mysql://u:a@b:c/d?e@host-1.example.com:65535/db", "u", "a@b:c/d?e", "host-1.example.com", 65535, "db",
     NULL, NULL, NULL, "utf8mb4", 0, "u@host-1.example.com:65535/db"},
    {"mysql://%41dmin:p%25w@[::1]:1/d%2Fb", "Admin", "p%w", "::1", 1, "d/b", NULL, NULL, NULL, "utf8mb4", 0,
     "Admin@[::1]:1/d/b"},
    {"mysql://u@[fe80::1:2]/db?ssl_mode=Required&charset=utf8&connect_timeout=1500ms&ssl_ca=/c%20a.pem&",
     "u", NULL, "fe80::1:2", 3306, "db", NULL, "REQUIRED", "/c a.pem", "utf8", 1500, "u@[fe80::1:2]:3306/db"},
    {"mysql://u:pw@localhost/db?socket=%2Ftmp%2Fmy.sock", "u", "pw", "localhost", 3306, "db", "/tmp/my.sock",
     NULL, NULL, "utf8mb4", 0, "u@socket:/tmp/my.sock/db"},
    {"mysql://u@h?ssl_mode=disabled", "u", NULL, "h", 3306, NULL, NULL, "DISABLED", NULL, "utf8mb4", 0, "u@h:3306"},
    {"mysql://u@h?ssl_mode=verify_identity", "u", NULL, "h", 3306, NULL, NULL, "VERIFY_IDENTITY", NULL, "utf8mb4", 0,
     "u@h:3306"},
};

static int str_eq(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

START_TEST(test_url_good)
{
    const struct good_url *g = &good_urls[_i];
    dal_error_t err = {0};
    dal_url_t u;

    ck_assert_msg(url_parse(g->text, &u, &err) == 0, "row %d: %s", _i, err.message);
    ck_assert_str_eq(u.user, g->user);
    ck_assert_msg(str_eq(u.password, g->password), "row %d: password", _i);
    ck_assert_str_eq(u.host, g->host);
    ck_assert_uint_eq(u.port, g->port);
    ck_assert_msg(str_eq(u.database, g->database), "row %d: database '%s'", _i, u.database ? u.database : "(null)");
    ck_assert_msg(str_eq(u.socket, g->socket), "row %d: socket", _i);
    ck_assert_msg(str_eq(u.ssl_mode, g->ssl_mode), "row %d: ssl_mode", _i);
    ck_assert_msg(str_eq(u.ssl_ca, g->ssl_ca), "row %d: ssl_ca", _i);
    ck_assert_str_eq(u.charset, g->charset);
    ck_assert_int_eq(u.connect_timeout_ms, g->timeout_ms);
    ck_assert_str_eq(u.display, g->display);
    url_clear(&u);
    url_clear(&u);   /* clearing twice is harmless */
}
END_TEST

struct bad_url {
    const char *text;
    const char *expect;
};

static const struct bad_url bad_urls[] = {
    {"", "not a URL"},
    {"127.0.0.1:3306/db", "not a URL"},
    {"root:" SECRET "@h://x", "not a URL"},
    {"http://u:" SECRET "@h/db", "unsupported scheme 'http'"},
    {"mysql://u:" SECRET "@h:3306x/db", "port is not a number"},
    {"mysql://u:" SECRET "@h:-1/db", "port is not a number"},
    {"mysql://u:" SECRET "@h:65536/db", "port out of range"},
    {"mysql://u:" SECRET "@h:99999999999999999999999/db", "port out of range"},
    {"mysql://u:" SECRET "@h:0", "port out of range"},
    {"mysql://u:" SECRET "12345/db", "port"},           /* no '@': the password looks like a port */
    {"mysql://u:" SECRET "%g1@h/db", "bad %-escape in the password"},
    {"mysql://u:" SECRET "%@h/db", "bad %-escape in the password"},
    {"mysql://u%zz:" SECRET "@h/db", "bad %-escape '%zz' in the user name"},
    {"mysql://u/x:" SECRET "@h/db", "in the user name"},
    {"mysql://u:" SECRET "@h/d%0", "bad %-escape '%0' in the database name"},
    {"mysql://u:" SECRET "@h/db?x=1", "unknown option 'x'"},
    {"mysql://u:" SECRET "@h/db?ssl_mode=", "option 'ssl_mode' needs a value"},
    {"mysql://u:" SECRET "@h/db?ssl_mode=ON", "bad ssl_mode 'ON'"},
    {"mysql://u:" SECRET "@h/db?charset=utf-8", "charset 'utf-8' is not supported"},
    {"mysql://u:" SECRET "@h/db?charset=gbk", "charset 'gbk' is not supported"},
    {"mysql://u:" SECRET "@h/db?connect_timeout=0", "option connect_timeout: must be greater than 0"},
    {"mysql://u:" SECRET "@h/db?connect_timeout=1s&connect_timeout=2s", "option 'connect_timeout' is given twice"},
    {"mysql://u:" SECRET "@h/db?ssl_ca=%zz", "bad %-escape '%zz' in the option ssl_ca"},
    {"mysql://u:" SECRET "@[::1]x/db", "unexpected text after ']'"},
    {"mysql://u:" SECRET "@[]/db", "bad IPv6 address"},
    {"mysql://u:" SECRET "@fe80::1/db", "brackets"},
    {"mysql://u:" SECRET "@h/" "a23456789012345678901234567890123456789012345678901234567890123456",
     "longer than 64"},
};

START_TEST(test_url_bad)
{
    const struct bad_url *b = &bad_urls[_i];
    dal_error_t err = {0};
    dal_url_t u;

    ck_assert_msg(url_parse(b->text, &u, &err) == DAL_ECONFIG, "row %d (%s) parsed", _i, b->text);
    ck_assert_int_eq(err.code, DAL_ECONFIG);
    ck_assert_msg(strstr(err.message, b->expect) != NULL, "row %d: '%s' lacks '%s'", _i, err.message, b->expect);
    ck_assert_msg(strstr(err.message, SECRET) == NULL, "row %d: message shows the password: '%s'", _i, err.message);
    ck_assert_ptr_null(u.user);   /* cleared on failure */
    ck_assert_ptr_null(u.password);
    ck_assert_ptr_null(u.display);
}
END_TEST

/* url_mask: every USER:PASSWORD@, in any scheme or none. */
static const struct {
    const char *text, *masked;
} masks[] = {
    {"mysql://app:" SECRET "@host/db", "mysql://app:***@host/db"},
    {"MariaDB://app:" SECRET "@host", "MariaDB://app:***@host"},
    {"redis://:" SECRET "@host:6379", "redis://:***@host:6379"},
    {"app:" SECRET "@host", "app:***@host"},
    {"mysql://app:" SECRET "@with@at/db", "mysql://app:***@at/db"},     /* the LAST '@' ends it */
    {"mysql://app://" SECRET "@h", "mysql://app:***@h"},                 /* "//" in the password */
    {"x mysql://app:" SECRET "@h", "x mysql:***@h"},                     /* unsure: hide more */
    {"mysql://a:" SECRET "1@h1, mysql://b:" SECRET "2@h2", "mysql://a:***@h2"},
    {"mysql://app@host/db", "mysql://app@host/db"},                      /* no password */
    {"mysql://host:3306/db", "mysql://host:3306/db"},
    /* a source's name of one version of its document: no password in it */
    {"etcd://h:2379,h:2381/app/config@42:7:", "etcd://h:2379,h:2381/app/config@42:7:"},
    {"mysql://app:" SECRET "/x@h/db", "mysql://app:***@h/db"},           /* '/' alone is no pass */
    {"round_robin", "round_robin"},
    {"", ""},
};

START_TEST(test_url_mask)
{
    char out[128], small[12];
    size_t n;

    n = url_mask(masks[_i].text, out, sizeof out);
    ck_assert_str_eq(out, masks[_i].masked);
    ck_assert_uint_eq(n, strlen(masks[_i].masked));
    /* cut to fit, never past the buffer, and still no password */
    n = url_mask(masks[_i].text, small, sizeof small);
    ck_assert_uint_eq(n, strlen(masks[_i].masked));
    ck_assert_uint_le(strlen(small), sizeof small - 1);
    ck_assert_ptr_null(strstr(small, SECRET));
}
END_TEST

START_TEST(test_url_mask_words)
{
    char out[256];

    url_mask_words("address 'app:" SECRET "@h:1' is not HOST:PORT (e.g. 127.0.0.1:9464)",
                   out, sizeof out);
    ck_assert_str_eq(out, "address 'app:***@h:1' is not HOST:PORT (e.g. 127.0.0.1:9464)");
    url_mask_words("f.ini:3: a \"mysql://u:" SECRET "@h\" and b:" SECRET "@c", out, sizeof out);
    ck_assert_str_eq(out, "f.ini:3: a \"mysql://u:***@h\" and b:***@c");
}
END_TEST

START_TEST(test_url_extra)
{
    dal_error_t err = {0};
    char *w = (char *)&w;
    dal_url_t u;

    ck_assert_int_eq(url_parse_extra("mysql://u:p@h/d?weight=%35&ssl_mode=required", "weight", &u, &w, &err), 0);
    ck_assert_str_eq(w, "5");   /* %-decoded like any option */
    ck_assert_str_eq(u.ssl_mode, "REQUIRED");
    free(w);
    url_clear(&u);

    ck_assert_int_eq(url_parse_extra("mysql://u:p@h/d", "weight", &u, &w, &err), 0);
    ck_assert_ptr_null(w);   /* not given */
    url_clear(&u);

    /* a failure elsewhere in the URL frees the value already taken */
    ck_assert_int_eq(url_parse_extra("mysql://u:" SECRET "@h/d?weight=2&x=1", "weight", &u, &w, &err), DAL_ECONFIG);
    ck_assert_ptr_null(w);
    ck_assert_ptr_null(u.display);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown option 'x' (expected socket, ssl_mode, ssl_ca, connect_timeout, charset or weight)"));

    /* without the extra name, "weight" is as unknown as any other option */
    ck_assert_int_eq(url_parse("mysql://u@h/d?weight=2", &u, &err), DAL_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown option 'weight' (expected socket, ssl_mode, ssl_ca, connect_timeout or charset)"));
}
END_TEST

START_TEST(test_url_equal)
{
    dal_url_t a, b, c;

    ck_assert_int_eq(url_parse("mysql://u:p@Host:3306/d?ssl_mode=required", &a, NULL), 0);
    ck_assert_int_eq(url_parse("mariadb://u:p@host/d?ssl_mode=REQUIRED", &b, NULL), 0);
    ck_assert_int_eq(url_parse("mysql://u:q@host/d?ssl_mode=REQUIRED", &c, NULL), 0);
    ck_assert(url_equal(&a, &b));
    ck_assert(!url_equal(&a, &c));   /* password differs */
    url_clear(&a);
    url_clear(&b);
    url_clear(&c);
}
END_TEST

static Suite *url_suite(void)
{
    Suite *s = suite_create("url");
    TCase *tc = tcase_create("url");

    tcase_add_loop_test(tc, test_url_good, 0, (int)NELEM(good_urls));
    tcase_add_loop_test(tc, test_url_bad, 0, (int)NELEM(bad_urls));
    tcase_add_test(tc, test_url_extra);
    tcase_add_loop_test(tc, test_url_mask, 0, (int)NELEM(masks));
    tcase_add_test(tc, test_url_mask_words);
    tcase_add_test(tc, test_url_equal);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int status = tu_run(url_suite(), CK_FORK_GETENV);

    return status;
}
