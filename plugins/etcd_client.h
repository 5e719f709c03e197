/*
 * etcd_client.h -- requests to an etcd cluster's v3 HTTP gateway over
 * libcurl: the endpoints in turn, TLS, user/password authentication.
 *
 * A request goes to the endpoint that answered last; if it cannot be
 * reached, to the next, and so on once round the list.  Only when none
 * answers does a request fail with DAL_ECONNECT, and the message names
 * each endpoint and why.  An HTTP answer of any status is an answer: the
 * caller reads the body.  Thread-safe: each request uses its own handle.
 */
#ifndef DAL_PLUGINS_ETCD_CLIENT_H
#define DAL_PLUGINS_ETCD_CLIENT_H

#include <stddef.h>

#include <curl/curl.h>

#include <dal/plugin.h>

typedef struct etcd_client etcd_client_t;

typedef struct etcd_opts {
    int tls;                  /* https (etcds://) */
    const char *cacert;       /* PEM files, borrowed during etcd_client_new; NULL: none */
    const char *cert;
    const char *key;
    const char *user;         /* NULL: no authentication */
    const char *password;     /* never shown in any message */
    long connect_timeout_ms;
    long request_timeout_ms;
} etcd_opts_t;

/* hosts is "HOST:PORT[,HOST:PORT...]".  *out owned by the caller. */
int etcd_client_new(const dal_host_api_t *api, const char *hosts, const etcd_opts_t *o,
                    etcd_client_t **out, dal_error_t *err);
void etcd_client_free(etcd_client_t *c);

/* The response of one request. */
typedef struct etcd_resp {
    char *body;     /* owned, NUL-terminated */
    size_t len;
    long status;    /* HTTP status */
} etcd_resp_t;

void etcd_resp_clear(etcd_resp_t *r);

/* POST body (JSON) to path ("/v3/kv/range") on the endpoints in turn. */
int etcd_post(etcd_client_t *c, const char *path, const char *body, etcd_resp_t *r,
              dal_error_t *err);

/*
 * A streaming request for the watch: a handle set up to POST body to path
 * on endpoint index i (of etcd_endpoints), writing what arrives to fn.
 * Owned by the caller (curl_easy_cleanup, then curl_slist_free_all(*hdrs)).
 */
CURL *etcd_stream(etcd_client_t *c, size_t i, const char *path, const char *body,
                  size_t (*fn)(char *, size_t, size_t, void *), void *user,
                  struct curl_slist **hdrs, dal_error_t *err);

/* Drop the auth token (the server refused it): the next request gets a
 * new one. */
void etcd_forget_token(etcd_client_t *c);

size_t etcd_endpoints(const etcd_client_t *c);
/* "HOST:PORT" of endpoint i (borrowed). */
const char *etcd_endpoint(const etcd_client_t *c, size_t i);
/* The endpoint that answered last, where requests start. */
size_t etcd_preferred(const etcd_client_t *c);
void etcd_prefer(etcd_client_t *c, size_t i);

#endif /* DAL_PLUGINS_ETCD_CLIENT_H */
