/*
 * fuzz_etcd.c -- libFuzzer target for the etcd gateway's JSON as the etcd
 * source plugin parses it (plugins/etcd_json.c): a range answer, a txn
 * answer, an error body, an auth answer and a watch stream line, from
 * bytes a server (or anything pretending to be one) sent.
 *
 * Every parser must accept or refuse the bytes without crashing, leaking
 * or reading past them; what it hands over must be consistent: a decoded
 * value lies within its length and ends with a NUL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_kv(const etcd_kv_t *kv)
{
    if (kv->value != NULL && (strlen(kv->value) > kv->len || kv->value[kv->len] != '\0'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    char why[ETCD_WHY_MAX], msg[200], *token = NULL;
    int64_t rev = 0, cur = 0;
    int found = 0, ok = 0, code = 0;
    etcd_watch_msg_t m;
    etcd_kv_t kv;

    if (etcd_parse_range(p, size, &found, &kv, &rev, why) == 0) {
        if (found)
            check_kv(&kv);
        etcd_kv_clear(&kv);
    }
    etcd_parse_txn(p, size, &ok, &rev, &cur, why);
    if (etcd_parse_error(p, size, msg, sizeof msg, &code) && strlen(msg) >= sizeof msg)
        abort();
    if (etcd_parse_token(p, size, &token, why) == 0 && token == NULL)
        abort();
    free(token);
    if (etcd_parse_watch(p, size, &m, why) == 0) {
        if (m.put)
            check_kv(&m.kv);
        if (m.kind < ETCD_WATCH_CREATED || m.kind > ETCD_WATCH_OTHER)
            abort();
        etcd_kv_clear(&m.kv);
    }
    return 0;
}
