/*
 * etcd_json.c -- the etcd v3 gateway's JSON (see etcd_json.h), with json-c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "etcd_json.h"

void etcd_kv_clear(etcd_kv_t *kv)
{
    free(kv->value);
    memset(kv, 0, sizeof *kv);
}

/* ---------------------------------------------------------------- base64 */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *etcd_b64(const void *p, size_t n)
{
    const unsigned char *s = p;
    char *out = malloc((n + 2) / 3 * 4 + 1), *w = out;
    size_t i;

    if (out == NULL)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        *w++ = b64chars[v >> 18];
        *w++ = b64chars[(v >> 12) & 63];
        *w++ = b64chars[(v >> 6) & 63];
        *w++ = b64chars[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
        *w++ = b64chars[v >> 18];
        *w++ = b64chars[(v >> 12) & 63];
        *w++ = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    *w = '\0';
    return out;
}

static int b64val(int c)
{
    const char *p = c ? strchr(b64chars, c) : NULL;

    return p ? (int)(p - b64chars) : -1;
}

/* Decode s (n characters, '=' padding optional) into a malloc'd,
 * NUL-terminated buffer. */
static int b64_decode(const char *s, size_t n, char **out, size_t *outlen)
{
    char *buf = malloc(n / 4 * 3 + 4);
    unsigned acc = 0;
    int bits = 0;
    size_t i, len = 0;

    if (buf == NULL)
        return -1;
    while (n > 0 && s[n - 1] == '=')
        n--;
    for (i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (v < 0) {
            free(buf);
            return -1;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[len++] = (char)((acc >> bits) & 0xff);
        }
    }
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return 0;
}

/* ------------------------------------------------------------- requests */

static char *body_of(json_object *o)
{
    char *s = o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;

    json_object_put(o);
    return s;
}

/* Add "name": base64 of n bytes; 0 or -1. */
static int add_b64(json_object *o, const char *name, const void *p, size_t n)
{
    char *b = etcd_b64(p, n);
    json_object *v = b ? json_object_new_string(b) : NULL;

    free(b);
    return v ? json_object_object_add(o, name, v) : -1;
}

/* 64-bit integers go as strings, as the gateway writes them. */
static int add_i64(json_object *o, const char *name, int64_t v)
{
    char buf[24];

    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return json_object_object_add(o, name, json_object_new_string(buf));
}

char *etcd_req_range(const char *key, int64_t revision)
{
    json_object *o = json_object_new_object();

    if (o == NULL || add_b64(o, "key", key, strlen(key)) != 0 ||
        (revision > 0 && add_i64(o, "revision", revision) != 0)) {
        json_object_put(o);
        return NULL;
    }
    return body_of(o);
}

char *etcd_req_watch(const char *key, int64_t start_revision)
{
    json_object *o = json_object_new_object(), *c = json_object_new_object();

    if (o == NULL || c == NULL || add_b64(c, "key", key, strlen(key)) != 0 ||
        (start_revision > 0 && add_i64(c, "start_revision", start_revision) != 0)) {
        json_object_put(o);
        json_object_put(c);
        return NULL;
    }
    json_object_object_add(o, "create_request", c);
    return body_of(o);
}

char *etcd_req_txn_put(const char *key, const char *value, size_t len, int64_t expect)
{
    json_object *o = json_object_new_object(), *cmp = json_object_new_object();
    json_object *put = json_object_new_object(), *rput = json_object_new_object();
    json_object *rng = json_object_new_object(), *rrng = json_object_new_object();
    json_object *compares = json_object_new_array(), *succ = json_object_new_array();
    json_object *fail = json_object_new_array();

    if (!o || !cmp || !put || !rput || !rng || !rrng || !compares || !succ || !fail)
        goto oom;
    if (add_b64(put, "key", key, strlen(key)) || add_b64(put, "value", value, len) ||
        add_b64(rng, "key", key, strlen(key)))
        goto oom;
    json_object_object_add(rput, "request_put", put);
    json_object_array_add(succ, rput);
    json_object_object_add(rrng, "request_range", rng);
    json_object_array_add(fail, rrng);
    put = rput = rng = rrng = NULL;
    if (expect >= 0) {
        /* the key's mod_revision; 0 is what etcd compares for an absent key */
        if (add_b64(cmp, "key", key, strlen(key)) || add_i64(cmp, "mod_revision", expect))
            goto oom;
        json_object_object_add(cmp, "target", json_object_new_string("MOD"));
        json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
        json_object_array_add(compares, cmp);
        cmp = NULL;
    }
    json_object_object_add(o, "compare", compares);
    json_object_object_add(o, "success", succ);
    json_object_object_add(o, "failure", fail);
    json_object_put(cmp);
    return body_of(o);
oom:
    json_object_put(o);
    json_object_put(cmp);
    json_object_put(put);
    json_object_put(rput);
    json_object_put(rng);
    json_object_put(rrng);
    json_object_put(compares);
    json_object_put(succ);
    json_object_put(fail);
    return NULL;
}

char *etcd_req_auth(const char *user, const char *password)
{
    json_object *o = json_object_new_object();

    if (o == NULL)
        return NULL;
    json_object_object_add(o, "name", json_object_new_string(user));
    json_object_object_add(o, "password", json_object_new_string(password));
    return body_of(o);
}

/* ------------------------------------------------------------- responses */

static json_object *parse(const char *body, size_t len, char *why)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = NULL;

    if (tok == NULL) {
        snprintf(why, ETCD_WHY_MAX, "out of memory");
        return NULL;
    }
    if (len > 0 && len <= (size_t)INT32_MAX)
        o = json_tokener_parse_ex(tok, body, (int)len);
    if (o != NULL && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    if (o == NULL)
        snprintf(why, ETCD_WHY_MAX, "not a JSON object");
    json_tokener_free(tok);
    return o;
}

static json_object *get(json_object *o, const char *name)
{
    json_object *v = NULL;

    return o && json_object_is_type(o, json_type_object) &&
                   json_object_object_get_ex(o, name, &v) ? v : NULL;
}

/* An integer field, written as a string or a number; 0 when absent. */
static int64_t get_i64(json_object *o, const char *name)
{
    json_object *v = get(o, name);

    return v && (json_object_is_type(v, json_type_string) ||
                 json_object_is_type(v, json_type_int)) ? json_object_get_int64(v) : 0;
}

static const char *get_str(json_object *o, const char *name)
{
    json_object *v = get(o, name);

    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int kv_from(json_object *o, etcd_kv_t *kv, char *why)
{
    const char *v = get_str(o, "value");

    memset(kv, 0, sizeof *kv);
    kv->mod_revision = get_i64(o, "mod_revision");
    kv->create_revision = get_i64(o, "create_revision");
    kv->version = get_i64(o, "version");
    /* an empty value is left out by the gateway: an empty document */
    if (b64_decode(v ? v : "", v ? strlen(v) : 0, &kv->value, &kv->len) != 0) {
        snprintf(why, ETCD_WHY_MAX, "value is not base64");
        return -1;
    }
    return 0;
}

int etcd_parse_error(const char *body, size_t len, char *msg, size_t cap, int *code)
{
    char why[ETCD_WHY_MAX];
    json_object *o = parse(body, len, why);
    const char *m = get_str(o, "message");
    int is = m != NULL || get_str(o, "error") != NULL;

    if (is) {
        snprintf(msg, cap, "%s", m ? m : get_str(o, "error"));
        *code = (int)get_i64(o, "code");
    }
    json_object_put(o);
    return is;
}

int etcd_parse_range(const char *body, size_t len, int *found, etcd_kv_t *kv,
                     int64_t *header_rev, char *why)
{
    json_object *o = parse(body, len, why), *kvs;
    int rc = 0;

    *found = 0;
    memset(kv, 0, sizeof *kv);
    if (o == NULL)
        return -1;
    *header_rev = get_i64(get(o, "header"), "revision");
    kvs = get(o, "kvs");
    if (kvs != NULL && json_object_is_type(kvs, json_type_array) &&
        json_object_array_length(kvs) > 0) {
        rc = kv_from(json_object_array_get_idx(kvs, 0), kv, why);
        *found = rc == 0;
    }
    json_object_put(o);
    return rc;
}

int etcd_parse_txn(const char *body, size_t len, int *succeeded, int64_t *header_rev,
                   int64_t *current, char *why)
{
    json_object *o = parse(body, len, why), *resps, *kvs;
    json_object *ok;

    *succeeded = 0;
    *current = 0;
    if (o == NULL)
        return -1;
    ok = get(o, "succeeded");
    *succeeded = ok != NULL && json_object_get_boolean(ok);
    *header_rev = get_i64(get(o, "header"), "revision");
    resps = get(o, "responses");
    if (!*succeeded && resps && json_object_is_type(resps, json_type_array) &&
        json_object_array_length(resps) > 0) {
        kvs = get(get(json_object_array_get_idx(resps, 0), "response_range"), "kvs");
        if (kvs && json_object_is_type(kvs, json_type_array) && json_object_array_length(kvs) > 0)
            *current = get_i64(json_object_array_get_idx(kvs, 0), "mod_revision");
    }
    json_object_put(o);
    return 0;
}

int etcd_parse_token(const char *body, size_t len, char **token, char *why)
{
    json_object *o = parse(body, len, why);
    const char *t = get_str(o, "token");

    *token = t ? strdup(t) : NULL;
    if (o != NULL && t == NULL)
        snprintf(why, ETCD_WHY_MAX, "no token in the answer");
    json_object_put(o);
    return *token ? 0 : -1;
}

/* The events of one watch message: remember the last one. */
static int watch_events(json_object *evs, etcd_watch_msg_t *m, char *why)
{
    size_t i, n = json_object_array_length(evs);

    for (i = 0; i < n; i++) {
        json_object *ev = json_object_array_get_idx(evs, i), *kv = get(ev, "kv");
        const char *type = get_str(ev, "type");
        etcd_kv_clear(&m->kv);
        m->put = 0;
        m->last_revision = get_i64(kv, "mod_revision");
        if (type != NULL && strcmp(type, "PUT") != 0)
            continue; /* DELETE: no document */
        if (kv_from(kv, &m->kv, why) != 0)
            return -1;
        m->put = 1;
    }
    return 0;
}

int etcd_parse_watch(const char *line, size_t len, etcd_watch_msg_t *m, char *why)
{
    json_object *o = parse(line, len, why), *r, *evs;
    const char *reason;
    int rc = 0;

    memset(m, 0, sizeof *m);
    if (o == NULL)
        return -1;
    r = get(o, "result");
    if (r == NULL) {
        /* {"error":{"grpc_code":..,"message":..}} ends a failed stream */
        const char *msg = get_str(get(o, "error"), "message");
        snprintf(why, ETCD_WHY_MAX, "%s", msg ? msg : "no result in a watch message");
        json_object_put(o);
        return -1;
    }
    m->header_rev = get_i64(get(r, "header"), "revision");
    m->compact_revision = get_i64(r, "compact_revision");
    reason = get_str(r, "cancel_reason");
    if (reason != NULL)
        snprintf(m->reason, sizeof m->reason, "%s", reason);
    evs = get(r, "events");
    if (m->compact_revision > 0)
        m->kind = ETCD_WATCH_COMPACTED;
    else if (get(r, "canceled") && json_object_get_boolean(get(r, "canceled")))
        m->kind = ETCD_WATCH_CANCELED;
    else if (evs && json_object_is_type(evs, json_type_array) && json_object_array_length(evs) > 0)
        m->kind = ETCD_WATCH_EVENTS, rc = watch_events(evs, m, why);
    else if (get(r, "created") && json_object_get_boolean(get(r, "created")))
        m->kind = ETCD_WATCH_CREATED;
    else
        m->kind = ETCD_WATCH_OTHER;
    json_object_put(o);
    if (rc != 0)
        etcd_kv_clear(&m->kv);
    return rc;
}
