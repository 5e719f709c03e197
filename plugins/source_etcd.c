/*
 * source_etcd.c -- the configuration source etcd://HOST:PORT[,...]/PREFIX
 * (and etcds:// over TLS): the whole INI document is the value of the key
 * PREFIX/config, read with /v3/kv/range, written with a compare-and-set
 * /v3/kv/txn and followed with a /v3/watch stream, through etcd's v3
 * HTTP gateway (etcd_client.c) with its JSON (etcd_json.c).
 *
 * The watch thread never gives up.  A stream that cannot be opened or
 * ends moves to the next endpoint; when a whole round of endpoints fails,
 * the source is unreachable (reported once to the host, which keeps the
 * last good document in force) and retries with a backoff doubling up to
 * backoff_max.  A new stream resumes after the last revision seen; if etcd
 * has compacted that revision away, the key is read whole again and its
 * value delivered as a resync.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/plugin.h>

#include "etcd_client.h"
#include "etcd_json.h"

#define BACKOFF_MIN_MS 100

static const dal_param_spec_t etcd_params[] = {
    {"cacert", DAL_PARAM_STRING, 0, NULL, "PEM file of the CA that signed the servers' certificates (etcds://)"},
    {"cert", DAL_PARAM_STRING, 0, NULL, "PEM file of the client certificate (etcds://)"},
    {"key", DAL_PARAM_STRING, 0, NULL, "PEM file of the client certificate's key (etcds://)"},
    {"user", DAL_PARAM_STRING, 0, NULL, "etcd user (authentication enabled)"},
    {"password", DAL_PARAM_STRING, 0, NULL, "the user's password (prefer password_env)"},
    {"password_env", DAL_PARAM_STRING, 0, NULL, "environment variable holding the password"},
    {"connect_timeout", DAL_PARAM_DURATION, 0, "2s", "time to connect to one endpoint"},
    {"request_timeout", DAL_PARAM_DURATION, 0, "5s", "time for one read or write"},
    {"backoff_max", DAL_PARAM_DURATION, 0, "5s", "longest wait between retries while no endpoint answers"},
    {NULL, 0, 0, NULL, NULL}};

typedef struct etcd_source {
    const dal_host_api_t *api;
    dal_host_t *host;
    etcd_client_t *client;     /* owned */
    char *where;               /* owned: "etcd://HOSTS" */
    char *key;                 /* owned: "PREFIX/config" */
    int64_t backoff_max_ms;

    etcd_kv_t last;            /* read's version (owned) */
    char *last_name;           /* owned: its name */

    /* watching */
    const dal_source_sink_t *sink; /* borrowed until unwatch */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;                  /* under mu */
    CURLM *multi;              /* the stream's; unwatch wakes it */
    int64_t next_rev;          /* where the next stream starts */
    int64_t delivered;         /* revision last delivered */
    int need_read, resync;
    int state;                 /* last reported dal_source_state_t; -1: none */
    /* the stream being read */
    size_t endpoint;
    char *buf;
    size_t len, cap;
    int created, restart;
    char why[DAL_ERROR_MSG_MAX];
} etcd_source_t;

/* -------------------------------------------------------------- helpers */

static char *version_name(const etcd_source_t *s, int64_t rev)
{
    char *name = NULL;

    if (asprintf(&name, "%s/%s@%lld", s->where, s->key, (long long)rev) < 0)
        return NULL;
    return name;
}

/* A client error named after the key it was about. */
static int prefixed(etcd_source_t *s, int rc, dal_error_t *err)
{
    char msg[DAL_ERROR_MSG_MAX];

    if (err == NULL)
        return rc;
    snprintf(msg, sizeof msg, "%s", err->message);
    return s->api->set_error(err, rc, "%s/%s: %s", s->where, s->key, msg);
}

/* What an HTTP error body says, as a DAL_EIO message. */
static int answer_error(etcd_source_t *s, const etcd_resp_t *r, const char *what,
                        dal_error_t *err)
{
    char msg[200];
    int code = 0;

    if (!etcd_parse_error(r->body, r->len, msg, sizeof msg, &code))
        snprintf(msg, sizeof msg, "HTTP %ld", r->status);
    return s->api->set_error(err, DAL_EIO, "%s/%s: %s: %s", s->where, s->key, what, msg);
}

/* The key's version at revision (0: newest): 1 found, 0 absent, <0 error. */
static int range(etcd_source_t *s, int64_t revision, etcd_kv_t *kv, int64_t *header_rev,
                 dal_error_t *err)
{
    char *body = etcd_req_range(s->key, revision), why[ETCD_WHY_MAX];
    etcd_resp_t r;
    int found = 0, rc;

    if (body == NULL)
        return s->api->set_error(err, DAL_ENOMEM, "out of memory");
    rc = etcd_post(s->client, "/v3/kv/range", body, &r, err);
    free(body);
    if (rc != 0)
        return prefixed(s, rc, err);
    if (r.status != 200)
        rc = answer_error(s, &r, "range", err);
    else if (etcd_parse_range(r.body, r.len, &found, kv, header_rev, why) != 0)
        rc = s->api->set_error(err, DAL_EIO, "%s/%s: range: bad answer: %s", s->where, s->key,
                               why);
    etcd_resp_clear(&r);
    return rc != 0 ? rc : found;
}

/* ----------------------------------------------------------- create etc. */

static const char *pick_password(const dal_host_api_t *api, const dal_plugin_params_t *p)
{
    const char *env = api->param_string(p, "password_env");

    return env != NULL ? getenv(env) : api->param_string(p, "password");
}

/* "etcd://HOSTS/PREFIX" into where and key. */
static int split_location(etcd_source_t *s, const char *location, char **hosts,
                          dal_error_t *err)
{
    const char *rest = strstr(location, "://") + 3, *slash = strchr(rest, '/');
    size_t plen;

    if (slash == NULL || slash == rest || slash[1] == '\0')
        return s->api->set_error(err, DAL_ECONFIG,
                                 "expected etcd://HOST:PORT[,HOST:PORT...]/PREFIX");
    plen = strlen(slash + 1);
    while (plen > 0 && slash[plen] == '/')
        plen--; /* "app/" is "app" */
    *hosts = strndup(rest, (size_t)(slash - rest));
    s->where = strndup(location, (size_t)(slash - location));
    if (*hosts == NULL || s->where == NULL || asprintf(&s->key, "%.*s/config", (int)plen, slash + 1) < 0)
        return s->api->set_error(err, DAL_ENOMEM, "out of memory");
    return 0;
}

static void es_destroy(void *instance);

static int es_create(const dal_host_api_t *api, dal_host_t *host, const char *location,
                     const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    etcd_source_t *s = calloc(1, sizeof *s);
    etcd_opts_t o;
    char *hosts = NULL;
    int rc;

    if (s == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    s->api = api;
    s->host = host;
    s->state = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    rc = split_location(s, location, &hosts, err);
    memset(&o, 0, sizeof o);
    o.tls = strncmp(location, "etcds:", 6) == 0;
    o.cacert = api->param_string(params, "cacert");
    o.cert = api->param_string(params, "cert");
    o.key = api->param_string(params, "key");
    o.user = api->param_string(params, "user");
    o.password = pick_password(api, params);
    o.connect_timeout_ms = (long)api->param_duration_ms(params, "connect_timeout");
    o.request_timeout_ms = (long)api->param_duration_ms(params, "request_timeout");
    s->backoff_max_ms = api->param_duration_ms(params, "backoff_max");
    if (rc == 0 && o.user != NULL && o.password == NULL)
        rc = api->set_error(err, DAL_ECONFIG, "user is set but neither password nor "
                            "password_env (or that variable is unset)");
    if (rc == 0)
        rc = etcd_client_new(api, hosts, &o, &s->client, err);
    free(hosts);
    if (rc != 0) {
        es_destroy(s);
        return rc;
    }
    *instance = s;
    return 0;
}

static void es_destroy(void *instance)
{
    etcd_source_t *s = instance;

    etcd_client_free(s->client);
    etcd_kv_clear(&s->last);
    free(s->last_name);
    free(s->where);
    free(s->key);
    free(s->buf);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

static int es_read(void *instance, int64_t revision, dal_source_doc_t *doc, dal_error_t *err)
{
    etcd_source_t *s = instance;
    etcd_kv_t kv;
    int64_t hrev = 0;
    int rc = range(s, revision, &kv, &hrev, err);

    if (rc < 0)
        return rc;
    if (rc == 0)
        return s->api->set_error(err, DAL_ECONFIG,
                                 "%s/%s: no document at this key%s (store one with `dal config "
                                 "push FILE URL`)", s->where, s->key,
                                 revision > 0 ? " at that revision" : "");
    etcd_kv_clear(&s->last);
    free(s->last_name);
    s->last = kv;
    s->last_name = version_name(s, kv.mod_revision);
    if (s->last_name == NULL)
        return s->api->set_error(err, DAL_ENOMEM, "out of memory");
    doc->struct_size = sizeof *doc;
    doc->text = kv.value;
    doc->len = kv.len;
    doc->name = s->last_name;
    doc->revision = kv.mod_revision;
    return 0;
}

/* ------------------------------------------------------------ write etc. */

static int es_write(void *instance, const char *text, size_t len, int64_t expect,
                    int64_t *revision, dal_error_t *err)
{
    etcd_source_t *s = instance;
    char *body = etcd_req_txn_put(s->key, text, len, expect), why[ETCD_WHY_MAX];
    int64_t hrev = 0, current = 0;
    int ok = 0, rc;
    etcd_resp_t r;

    if (body == NULL)
        return s->api->set_error(err, DAL_ENOMEM, "out of memory");
    rc = etcd_post(s->client, "/v3/kv/txn", body, &r, err);
    free(body);
    if (rc != 0)
        return prefixed(s, rc, err);
    if (r.status != 200)
        rc = answer_error(s, &r, "txn", err);
    else if (etcd_parse_txn(r.body, r.len, &ok, &hrev, &current, why) != 0)
        rc = s->api->set_error(err, DAL_EIO, "%s/%s: txn: bad answer: %s", s->where, s->key, why);
    else if (!ok && current == 0)
        rc = s->api->set_error(err, DAL_ESTATE, "%s/%s: there is no document yet, not revision "
                               "%lld: nothing written", s->where, s->key, (long long)expect);
    else if (!ok)
        rc = s->api->set_error(err, DAL_ESTATE, "%s/%s: the document is at revision %lld, not "
                               "%lld (someone else changed it): nothing written", s->where,
                               s->key, (long long)current, (long long)expect);
    etcd_resp_clear(&r);
    if (rc == 0)
        *revision = hrev;
    return rc;
}

/* Walk back from the newest version through each one's predecessor until
 * the first version, or one etcd no longer keeps. */
static int es_history(void *instance, dal_source_history_fn fn, void *user, dal_error_t *err)
{
    etcd_source_t *s = instance;
    int64_t rev = 0, hrev;
    dal_error_t gone;
    int n = 0, rc;

    for (;;) {
        etcd_kv_t kv;
        rc = range(s, rev, &kv, &hrev, n == 0 ? err : &gone);
        if (rc <= 0)
            break;
        fn(user, kv.mod_revision, kv.version, kv.len);
        n++;
        rev = kv.mod_revision - 1;
        etcd_kv_clear(&kv);
        if (rev <= 0)
            break;
    }
    if (n == 0 && rc == 0)
        return s->api->set_error(err, DAL_ECONFIG, "%s/%s: no document at this key", s->where,
                                 s->key);
    /* older versions compacted away (an error) or before the key's
     * creation (absent): the end of what etcd keeps */
    return n > 0 ? 0 : rc;
}

/* --------------------------------------------------------------- watch */

static int stopping(etcd_source_t *s)
{
    int stop;

    pthread_mutex_lock(&s->mu);
    stop = s->stop;
    pthread_mutex_unlock(&s->mu);
    return stop;
}

/* Sleep ms, or less if unwatch is called. */
static void nap(etcd_source_t *s, int64_t ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&s->mu);
    while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0)
        ;
    pthread_mutex_unlock(&s->mu);
}

static void set_state(etcd_source_t *s, dal_source_state_t st, const char *detail)
{
    if (s->state == (int)st)
        return;
    s->state = (int)st;
    s->sink->state(s->sink->user, st, detail);
}

static void deliver(etcd_source_t *s, const etcd_kv_t *kv, uint32_t flags)
{
    dal_source_doc_t doc = {sizeof doc, kv->value, kv->len, NULL, kv->mod_revision, flags};
    char *name = version_name(s, kv->mod_revision);

    if (name == NULL)
        return;
    doc.name = name;
    s->delivered = kv->mod_revision;
    s->sink->document(s->sink->user, &doc); /* the host logs and counts the outcome */
    free(name);
}

/* Read the whole key (first start, or after a compaction). */
static int reread(etcd_source_t *s)
{
    dal_error_t err;
    int64_t hrev = 0;
    etcd_kv_t kv;
    int rc = range(s, 0, &kv, &hrev, &err);

    if (rc < 0) {
        snprintf(s->why, sizeof s->why, "%s", err.message);
        return rc;
    }
    if (rc == 0)
        s->api->log(s->host, DAL_LOG_WARN, "%s/%s: no document at this key; waiting for one",
                    s->where, s->key);
    else if (s->resync || kv.mod_revision != s->delivered)
        deliver(s, &kv, s->resync ? DAL_SOURCE_RESYNC : 0);
    etcd_kv_clear(&kv);
    s->next_rev = hrev + 1;
    s->need_read = s->resync = 0;
    return 0;
}

static void on_message(etcd_source_t *s, const char *line, size_t len)
{
    char why[ETCD_WHY_MAX];
    etcd_watch_msg_t m;

    if (etcd_parse_watch(line, len, &m, why) != 0) {
        snprintf(s->why, sizeof s->why, "watch: %s", why);
        /* a token that expired while we were away: get a new one */
        if (strstr(why, "auth token") != NULL)
            etcd_forget_token(s->client);
        s->restart = 1;
        return;
    }
    switch (m.kind) {
    case ETCD_WATCH_CREATED:
        s->created = 1;
        set_state(s, DAL_SOURCE_OK, etcd_endpoint(s->client, s->endpoint));
        break;
    case ETCD_WATCH_EVENTS:
        s->next_rev = m.last_revision + 1;
        if (m.put)
            deliver(s, &m.kv, 0);
        else
            s->api->log(s->host, DAL_LOG_WARN, "%s/%s was deleted at revision %lld: the "
                        "running configuration stays in force", s->where, s->key,
                        (long long)m.last_revision);
        break;
    case ETCD_WATCH_COMPACTED:
        s->api->log(s->host, DAL_LOG_INFO, "%s/%s: revision %lld was compacted (oldest kept: "
                    "%lld): reading the key again", s->where, s->key, (long long)s->next_rev,
                    (long long)m.compact_revision);
        s->need_read = s->resync = 1;
        s->restart = 1;
        break;
    case ETCD_WATCH_CANCELED:
        snprintf(s->why, sizeof s->why, "watch canceled: %s", m.reason[0] ? m.reason : "?");
        s->restart = 1;
        break;
    case ETCD_WATCH_OTHER:
        break;
    }
    etcd_kv_clear(&m.kv);
}

/* curl's write callback: split the stream into lines, one message each. */
static size_t on_data(char *p, size_t size, size_t n, void *user)
{
    etcd_source_t *s = user;
    size_t add = size * n, start = 0, i;

    if (s->len + add + 1 > s->cap) {
        size_t cap = (s->len + add + 1) * 2;
        char *b = realloc(s->buf, cap);
        if (b == NULL)
            return 0;
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, add);
    s->len += add;
    for (i = 0; i < s->len && !s->restart; i++) {
        if (s->buf[i] != '\n')
            continue;
        on_message(s, s->buf + start, i - start);
        start = i + 1;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
    return add;
}

/* One watch stream on endpoint i, until it ends, must restart, or unwatch. */
static void stream(etcd_source_t *s, size_t i)
{
    char *body = etcd_req_watch(s->key, s->next_rev);
    struct curl_slist *hdrs = NULL;
    dal_error_t err;
    CURL *h = NULL;
    CURLMsg *msg;
    int running = 1, left;

    s->endpoint = i;
    s->len = 0;
    s->created = s->restart = 0;
    snprintf(s->why, sizeof s->why, "stream ended");
    if (body == NULL) {
        snprintf(s->why, sizeof s->why, "out of memory");
        return;
    }
    h = etcd_stream(s->client, i, "/v3/watch", body, on_data, s, &hdrs, &err);
    free(body);
    if (h == NULL) {
        snprintf(s->why, sizeof s->why, "%s", err.message);
        return;
    }
    curl_multi_add_handle(s->multi, h);
    while (running && !s->restart && !stopping(s)) {
        curl_multi_perform(s->multi, &running);
        if (running && !s->restart)
            curl_multi_poll(s->multi, NULL, 0, 1000, NULL);
    }
    while ((msg = curl_multi_info_read(s->multi, &left)) != NULL)
        if (msg->msg == CURLMSG_DONE && msg->data.result != CURLE_OK)
            snprintf(s->why, sizeof s->why, "%s", curl_easy_strerror(msg->data.result));
    curl_multi_remove_handle(s->multi, h);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
}

static void *watch_main(void *arg)
{
    etcd_source_t *s = arg;
    size_t n = etcd_endpoints(s->client), failed = 0;
    int64_t backoff = BACKOFF_MIN_MS;

    while (!stopping(s)) {
        size_t i = etcd_preferred(s->client);
        if (s->need_read && reread(s) != 0) {
            failed = n; /* range already tried every endpoint */
        } else if (!s->need_read) {
            stream(s, i);
            if (stopping(s) || s->need_read)
                continue;
            failed = s->created ? 1 : failed + 1;
            etcd_prefer(s->client, i + 1);
            if (failed < n) {
                /* once per outage: while none answers, the state says it */
                if (s->state == DAL_SOURCE_OK && failed == 1)
                    s->api->log(s->host, DAL_LOG_INFO, "watch through %s ended (%s); trying %s",
                                etcd_endpoint(s->client, i), s->why,
                                etcd_endpoint(s->client, i + 1));
                continue;
            }
        }
        if (failed >= n) {
            set_state(s, DAL_SOURCE_UNREACHABLE, s->why);
            nap(s, backoff);
            backoff = backoff * 2 > s->backoff_max_ms ? s->backoff_max_ms : backoff * 2;
            failed = 0;
        } else {
            backoff = BACKOFF_MIN_MS;
        }
    }
    return NULL;
}

static int es_watch(void *instance, int64_t after, const dal_source_sink_t *sink,
                    dal_error_t *err)
{
    etcd_source_t *s = instance;

    s->sink = sink;
    s->stop = 0;
    s->delivered = after;
    s->next_rev = after + 1;
    s->need_read = after == 0;
    s->multi = curl_multi_init();
    if (s->multi == NULL)
        return s->api->set_error(err, DAL_ENOMEM, "out of memory");
    if (dal_plugin_thread_create(s->api, &s->thread, watch_main, s) != 0) {
        curl_multi_cleanup(s->multi);
        s->multi = NULL;
        return s->api->set_error(err, DAL_EIO, "%s/%s: cannot start the watch thread", s->where,
                                 s->key);
    }
    return 0;
}

static void es_unwatch(void *instance)
{
    etcd_source_t *s = instance;

    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    curl_multi_wakeup(s->multi);
    pthread_join(s->thread, NULL);
    curl_multi_cleanup(s->multi);
    s->multi = NULL;
    s->sink = NULL;
}

static const dal_source_ops_t etcd_ops = {
    sizeof(dal_source_ops_t), es_create, es_destroy, es_read, es_watch, es_unwatch, es_write,
    es_history,
};

static const dal_plugin_t etcd_plugin = {
    DAL_PLUGIN_ABI_VERSION, sizeof(dal_plugin_t), DAL_PLUGIN_SOURCE, "etcd", "1.0",
    "configuration from etcd (v3 HTTP gateway): etcd[s]://HOST:PORT[,...]/PREFIX, key PREFIX/config",
    etcd_params, &etcd_ops};

DAL_PLUGIN_DECLARE(etcd_plugin)
