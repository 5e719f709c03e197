/*
 * test_etcd_json.c -- the etcd gateway's JSON as the etcd source builds and
 * parses it (plugins/etcd_json.c), on answers captured from etcd 3.4 (the
 * same as fuzz/corpus_etcd).  The wire itself is tested against a real etcd
 * by test_etcd.c; this pins each shape, including the ones that are hard to
 * provoke there (a watch error line, a value that is not base64).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_json.h"
#include "check_run.h"

#define S(lit) lit, strlen(lit)

START_TEST(test_base64)
{
    static const char *const plain[] = {"", "a", "ab", "abc", "abcd", "[dal]\nwatch = true\n"};
    static const char *const coded[] = {"", "YQ==", "YWI=", "YWJj", "YWJjZA==",
                                        "W2RhbF0Kd2F0Y2ggPSB0cnVlCg=="};
    size_t i;

    for (i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        char *b = etcd_b64(plain[i], strlen(plain[i]));
        ck_assert_str_eq(b, coded[i]);
        free(b);
    }
}
END_TEST

START_TEST(test_range)
{
    char why[ETCD_WHY_MAX];
    int64_t rev = 0;
    etcd_kv_t kv;
    int found = 0;

    ck_assert_int_eq(etcd_parse_range(S("{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":"
                                        "\"YQ==\",\"create_revision\":\"2\",\"mod_revision\":"
                                        "\"8\",\"version\":\"3\",\"value\":\"aGVsbG8=\"}],"
                                        "\"count\":\"1\"}"), &found, &kv, &rev, why), 0);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(rev, 9);
    ck_assert_int_eq(kv.mod_revision, 8);
    ck_assert_int_eq(kv.version, 3);
    ck_assert_str_eq(kv.value, "hello");
    ck_assert_uint_eq(kv.len, 5);
    etcd_kv_clear(&kv);
    /* absent key: a header only */
    ck_assert_int_eq(etcd_parse_range(S("{\"header\":{\"revision\":\"9\"}}"), &found, &kv, &rev,
                                      why), 0);
    ck_assert_int_eq(found, 0);
    /* an empty value is left out by the gateway: an empty document */
    ck_assert_int_eq(etcd_parse_range(S("{\"kvs\":[{\"mod_revision\":\"4\"}]}"), &found, &kv,
                                      &rev, why), 0);
    ck_assert_int_eq(found, 1);
    ck_assert_uint_eq(kv.len, 0);
    etcd_kv_clear(&kv);
    ck_assert_int_eq(etcd_parse_range(S("{\"kvs\":[{\"value\":\"!!\"}]}"), &found, &kv, &rev,
                                      why), -1);
    ck_assert_int_eq(etcd_parse_range(S("[1,2]"), &found, &kv, &rev, why), -1);
    ck_assert_int_eq(etcd_parse_range(S("{\"kvs\":"), &found, &kv, &rev, why), -1);
}
END_TEST

START_TEST(test_watch)
{
    char why[ETCD_WHY_MAX];
    etcd_watch_msg_t m;

    ck_assert_int_eq(etcd_parse_watch(S("{\"result\":{\"header\":{\"revision\":\"2\"},"
                                        "\"created\":true}}"), &m, why), 0);
    ck_assert_int_eq(m.kind, ETCD_WATCH_CREATED);
    ck_assert_int_eq(etcd_parse_watch(S("{\"result\":{\"header\":{\"revision\":\"3\"},\"events\":"
                                        "[{\"kv\":{\"mod_revision\":\"3\",\"value\":\"YQ==\"}}]}}"),
                                      &m, why), 0);
    ck_assert_int_eq(m.kind, ETCD_WATCH_EVENTS);
    ck_assert_int_eq(m.put, 1);
    ck_assert_int_eq(m.last_revision, 3);
    ck_assert_str_eq(m.kv.value, "a");
    etcd_kv_clear(&m.kv);
    /* a put then a delete: the key is gone, no document */
    ck_assert_int_eq(etcd_parse_watch(S("{\"result\":{\"events\":[{\"kv\":{\"mod_revision\":\"5\","
                                        "\"value\":\"YQ==\"}},{\"type\":\"DELETE\",\"kv\":"
                                        "{\"mod_revision\":\"6\"}}]}}"), &m, why), 0);
    ck_assert_int_eq(m.put, 0);
    ck_assert_int_eq(m.last_revision, 6);
    ck_assert_int_eq(etcd_parse_watch(S("{\"result\":{\"canceled\":true,\"compact_revision\":"
                                        "\"5\"}}"), &m, why), 0);
    ck_assert_int_eq(m.kind, ETCD_WATCH_COMPACTED);
    ck_assert_int_eq(m.compact_revision, 5);
    ck_assert_int_eq(etcd_parse_watch(S("{\"result\":{\"canceled\":true,\"cancel_reason\":"
                                        "\"x\"}}"), &m, why), 0);
    ck_assert_int_eq(m.kind, ETCD_WATCH_CANCELED);
    ck_assert_str_eq(m.reason, "x");
    ck_assert_int_eq(etcd_parse_watch(S("{\"error\":{\"grpc_code\":16,\"message\":\"etcdserver: "
                                        "invalid auth token\"}}"), &m, why), -1);
    ck_assert_ptr_nonnull(strstr(why, "invalid auth token"));
}
END_TEST

START_TEST(test_txn_and_errors)
{
    char why[ETCD_WHY_MAX], msg[64], *token = NULL;
    int64_t rev = 0, cur = 0;
    int ok = 0, code = 0;

    ck_assert_int_eq(etcd_parse_txn(S("{\"header\":{\"revision\":\"7\"},\"succeeded\":true}"), &ok,
                                    &rev, &cur, why), 0);
    ck_assert_int_eq(ok, 1);
    ck_assert_int_eq(rev, 7);
    ck_assert_int_eq(etcd_parse_txn(S("{\"header\":{\"revision\":\"6\"},\"responses\":[{"
                                      "\"response_range\":{\"kvs\":[{\"mod_revision\":\"6\"}]}}]}"),
                                    &ok, &rev, &cur, why), 0);
    ck_assert_int_eq(ok, 0);
    ck_assert_int_eq(cur, 6);
    ck_assert_int_eq(etcd_parse_error(S("{\"error\":\"e\",\"message\":\"etcdserver: mvcc: "
                                        "required revision has been compacted\",\"code\":11}"),
                                      msg, sizeof msg, &code), 1);
    ck_assert_int_eq(code, 11);
    ck_assert_ptr_nonnull(strstr(msg, "compacted"));
    ck_assert_int_eq(etcd_parse_error(S("{\"header\":{}}"), msg, sizeof msg, &code), 0);
    ck_assert_int_eq(etcd_parse_token(S("{\"header\":{},\"token\":\"t.1\"}"), &token, why), 0);
    ck_assert_str_eq(token, "t.1");
    free(token);
    ck_assert_int_eq(etcd_parse_token(S("{\"header\":{}}"), &token, why), -1);
}
END_TEST

/* Requests carry the key and value in base64 and revisions as strings. */
START_TEST(test_requests)
{
    char *r = etcd_req_range("app/config", 42), *w = etcd_req_watch("app/config", 0);
    char *t = etcd_req_txn_put("app/config", "abc", 3, 0), *u = etcd_req_txn_put("k", "", 0, -1);

    ck_assert_str_eq(r, "{\"key\":\"YXBwL2NvbmZpZw==\",\"revision\":\"42\"}");
    ck_assert_str_eq(w, "{\"create_request\":{\"key\":\"YXBwL2NvbmZpZw==\"}}");
    ck_assert_ptr_nonnull(strstr(t, "\"mod_revision\":\"0\""));
    ck_assert_ptr_nonnull(strstr(t, "\"target\":\"MOD\""));
    ck_assert_ptr_nonnull(strstr(t, "\"value\":\"YWJj\""));
    ck_assert_ptr_nonnull(strstr(u, "\"compare\":[]"));
    free(r);
    free(w);
    free(t);
    free(u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("etcd_json");
    TCase *tc = tcase_create("etcd_json");
    int status;

    tcase_add_test(tc, test_base64);
    tcase_add_test(tc, test_range);
    tcase_add_test(tc, test_watch);
    tcase_add_test(tc, test_txn_and_errors);
    tcase_add_test(tc, test_requests);
    suite_add_tcase(s, tc);
    status = tu_run(s, CK_FORK_GETENV);
    return status;
}
