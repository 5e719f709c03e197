/*
 * etcd_client.c -- the etcd gateway over libcurl (see etcd_client.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_client.h"
#include "etcd_json.h"

#define MAX_ENDPOINTS 16

struct etcd_client {
    const dal_host_api_t *api;
    char *endpoints[MAX_ENDPOINTS]; /* owned: "HOST:PORT" */
    size_t n;
    atomic_size_t preferred;
    int tls;
    char *cacert, *cert, *key;      /* owned; NULL: none */
    char *user, *password;          /* owned; NULL: no authentication */
    long connect_timeout_ms, request_timeout_ms;
    pthread_mutex_t mu;             /* guards token */
    char *token;                    /* owned: the auth token; NULL: none yet */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

/* curl's global init is not thread-safe: once per process. */
static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

int etcd_client_new(const dal_host_api_t *api, const char *hosts, const etcd_opts_t *o,
                    etcd_client_t **out, dal_error_t *err)
{
    etcd_client_t *c = calloc(1, sizeof *c);
    char *copy = strdup(hosts), *save = NULL, *h;

    pthread_once(&curl_once, curl_init);
    *out = NULL;
    if (c == NULL || copy == NULL) {
        free(c);
        free(copy);
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    }
    c->api = api;
    pthread_mutex_init(&c->mu, NULL);
    for (h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
        if (c->n == MAX_ENDPOINTS || *h == '\0' || strchr(h, ':') == NULL ||
            strchr(h, '@') != NULL) {
            free(copy);
            etcd_client_free(c);
            return api->set_error(err, DAL_ECONFIG,
                                  "endpoints must be HOST:PORT[,HOST:PORT...] (at most %d)",
                                  MAX_ENDPOINTS);
        }
        c->endpoints[c->n++] = strdup(h);
    }
    free(copy);
    c->tls = o->tls;
    c->cacert = dup_or_null(o->cacert);
    c->cert = dup_or_null(o->cert);
    c->key = dup_or_null(o->key);
    c->user = dup_or_null(o->user);
    c->password = o->password ? strdup(o->password) : NULL;
    c->connect_timeout_ms = o->connect_timeout_ms;
    c->request_timeout_ms = o->request_timeout_ms;
    if (c->n == 0) {
        etcd_client_free(c);
        return api->set_error(err, DAL_ECONFIG, "no endpoint given");
    }
    *out = c;
    return 0;
}

void etcd_client_free(etcd_client_t *c)
{
    size_t i;

    if (c == NULL)
        return;
    for (i = 0; i < c->n; i++)
        free(c->endpoints[i]);
    free(c->cacert);
    free(c->cert);
    free(c->key);
    free(c->user);
    if (c->password != NULL)
        memset(c->password, 0, strlen(c->password));
    free(c->password);
    free(c->token);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void etcd_forget_token(etcd_client_t *c)
{
    pthread_mutex_lock(&c->mu);
    free(c->token);
    c->token = NULL;
    pthread_mutex_unlock(&c->mu);
}

size_t etcd_endpoints(const etcd_client_t *c)
{
    return c->n;
}

const char *etcd_endpoint(const etcd_client_t *c, size_t i)
{
    return c->endpoints[i % c->n];
}

size_t etcd_preferred(const etcd_client_t *c)
{
    return atomic_load(&c->preferred);
}

void etcd_prefer(etcd_client_t *c, size_t i)
{
    atomic_store(&c->preferred, i % c->n);
}

void etcd_resp_clear(etcd_resp_t *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

static size_t collect(char *p, size_t size, size_t n, void *user)
{
    etcd_resp_t *r = user;
    size_t add = size * n;
    char *b = realloc(r->body, r->len + add + 1);

    if (b == NULL)
        return 0;
    memcpy(b + r->len, p, add);
    r->len += add;
    b[r->len] = '\0';
    r->body = b;
    return add;
}

/* A handle for one request to endpoint i, TLS and auth header set. */
static CURL *handle(etcd_client_t *c, size_t i, const char *path, const char *body,
                    struct curl_slist **hdrs)
{
    CURL *h = curl_easy_init();
    char url[512], auth[1024];

    *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (h == NULL || *hdrs == NULL)
        goto fail;
    pthread_mutex_lock(&c->mu);
    if (c->token != NULL) {
        snprintf(auth, sizeof auth, "Authorization: %s", c->token);
        *hdrs = curl_slist_append(*hdrs, auth);
    }
    pthread_mutex_unlock(&c->mu);
    snprintf(url, sizeof url, "%s://%s%s", c->tls ? "https" : "http", etcd_endpoint(c, i), path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, ""); /* never an http_proxy from the environment */
    if (c->cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
    if (c->cert)
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
    if (c->key)
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
    return h;
fail:
    if (h)
        curl_easy_cleanup(h);
    curl_slist_free_all(*hdrs);
    *hdrs = NULL;
    return NULL;
}

/* One request to endpoint i: 0 with r filled, or -1 with why (no answer). */
static int post_one(etcd_client_t *c, size_t i, const char *path, const char *body,
                    etcd_resp_t *r, char *why, size_t cap)
{
    struct curl_slist *hdrs = NULL;
    CURL *h = handle(c, i, path, body, &hdrs);
    CURLcode cc;

    memset(r, 0, sizeof *r);
    if (h == NULL) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->request_timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    cc = curl_easy_perform(h);
    if (cc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    else
        snprintf(why, cap, "%s", curl_easy_strerror(cc));
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    if (cc != CURLE_OK)
        etcd_resp_clear(r);
    return cc == CURLE_OK ? 0 : -1;
}

/* Try each endpoint once, from the preferred one. */
static int post_any(etcd_client_t *c, const char *path, const char *body, etcd_resp_t *r,
                    dal_error_t *err)
{
    char why[1024] = "", one[200];
    size_t k, start = etcd_preferred(c), used = 0;

    for (k = 0; k < c->n; k++) {
        size_t i = (start + k) % c->n;
        if (post_one(c, i, path, body, r, one, sizeof one) == 0) {
            etcd_prefer(c, i);
            return 0;
        }
        used += (size_t)snprintf(why + used, used < sizeof why ? sizeof why - used : 0, "%s%s: %s",
                                 k ? "; " : "", c->endpoints[i], one);
        if (used >= sizeof why)
            used = sizeof why - 1;
    }
    return c->api->set_error(err, DAL_ECONNECT, "no etcd endpoint answers (%s)", why);
}

/* Get a token for user/password (the password goes in the body, never
 * in a message). */
static int authenticate(etcd_client_t *c, dal_error_t *err)
{
    char *body = etcd_req_auth(c->user, c->password), *token = NULL;
    char why[ETCD_WHY_MAX], msg[200];
    etcd_resp_t r;
    int code = 0, rc;

    if (body == NULL)
        return c->api->set_error(err, DAL_ENOMEM, "out of memory");
    rc = post_any(c, "/v3/auth/authenticate", body, &r, err);
    memset(body, 0, strlen(body));
    free(body);
    if (rc != 0)
        return rc;
    if (r.status != 200 || etcd_parse_token(r.body, r.len, &token, why) != 0) {
        if (!etcd_parse_error(r.body, r.len, msg, sizeof msg, &code))
            snprintf(msg, sizeof msg, "HTTP %ld", r.status);
        etcd_resp_clear(&r);
        return c->api->set_error(err, DAL_EPLUGIN, "authentication of user %s failed: %s",
                                 c->user, msg);
    }
    etcd_resp_clear(&r);
    pthread_mutex_lock(&c->mu);
    free(c->token);
    c->token = token;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* An answer saying the token is missing, expired or wrong. */
static int auth_refused(const etcd_resp_t *r)
{
    return r->status == 401 || (r->body && (strstr(r->body, "invalid auth token") ||
                                            strstr(r->body, "user name is empty")));
}

int etcd_post(etcd_client_t *c, const char *path, const char *body, etcd_resp_t *r,
              dal_error_t *err)
{
    int need_token, rc;

    pthread_mutex_lock(&c->mu);
    need_token = c->user != NULL && c->token == NULL;
    pthread_mutex_unlock(&c->mu);
    if (need_token && (rc = authenticate(c, err)) != 0)
        return rc;
    rc = post_any(c, path, body, r, err);
    /* tokens expire: one fresh token, one more try */
    if (rc == 0 && c->user != NULL && auth_refused(r)) {
        etcd_resp_clear(r);
        if ((rc = authenticate(c, err)) == 0)
            rc = post_any(c, path, body, r, err);
    }
    return rc;
}

CURL *etcd_stream(etcd_client_t *c, size_t i, const char *path, const char *body,
                  size_t (*fn)(char *, size_t, size_t, void *), void *user,
                  struct curl_slist **hdrs, dal_error_t *err)
{
    CURL *h;
    int need_token;

    pthread_mutex_lock(&c->mu);
    need_token = c->user != NULL && c->token == NULL;
    pthread_mutex_unlock(&c->mu);
    if (need_token && authenticate(c, err) != 0)
        return NULL;
    h = handle(c, i, path, body, hdrs);
    if (h == NULL) {
        c->api->set_error(err, DAL_ENOMEM, "out of memory");
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fn);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, user);
    return h;
}
