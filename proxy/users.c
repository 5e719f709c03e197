/*
 * users.c -- the accounts clients log in with: those of [proxy user NAME]
 * and, with [proxy] users = backend, the MariaDB accounts of a datasource.
 *
 * The table is loaded at start, and again at the first login after the
 * configuration was reloaded (SIGHUP or [dal] watch: dal_reload_stats
 * counts the reloads), so a reload adds, removes and changes users without
 * touching the clients already connected.  Backend accounts are also read
 * again by a login that finds them older than REREAD_MS, and by one that
 * failed (users_reread) unless they were read less than REREAD_MS ago, so
 * CREATE USER, ALTER USER and DROP USER on the servers take effect within
 * a second without a reload, while logins cannot make dal-proxy query the
 * server more than once a second.  A login copies what it checks out of
 * the table under the lock, so the table can be replaced while it runs.
 *
 * Config accounts come first and match any client address; a backend
 * account matches by its Host as the server matches it (exact address,
 * LIKE pattern, 'localhost' for a loopback client unless the server skips
 * name resolution), the most specific host first, as the server sorts
 * them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy.h"

/* The least time between two reads of the backend's accounts. */
#define REREAD_MS 1000

static const char accounts_sql[] =
    "SELECT User, Host, plugin, authentication_string, @@skip_name_resolve FROM mysql.user";

static void table_free(proxy_user_t *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].host);
    }
    free(v);
}

/* Room for one more entry of *v (zeroed). */
static proxy_user_t *table_add(proxy_user_t **v, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        proxy_user_t *w = realloc(*v, c * sizeof *w);
        if (w == NULL)
            return NULL;
        *v = w;
        *cap = c;
    }
    memset(&(*v)[*n], 0, sizeof **v);
    return &(*v)[(*n)++];
}

/* The [proxy user] accounts: each with its mysql_native_password stage 2,
 * from the password or from password_hash, and with a password its
 * caching_sha2_password stage 2 as well.  -1 when out of memory. */
static int config_load(dal_proxy_info_t *info, proxy_user_t **v, size_t *n, size_t *cap)
{
    size_t i, count = dal_proxy_info_user_count(info);

    for (i = 0; i < count; i++) {
        const char *pw = NULL, *hash = NULL;
        const char *name = dal_proxy_info_user(info, i, &pw, &hash);
        proxy_user_t *u = table_add(v, n, cap);
        if (u == NULL || (u->name = strdup(name)) == NULL ||
            (pw == NULL && proto_native_hash_parse(hash, u->stage2) != 0))
            return -1;  /* (dal checked the hash's form already) */
        if (pw != NULL) {
            proto_native_stage2(pw, strlen(pw), u->stage2);
            proto_sha2_stage2(pw, strlen(pw), u->sha2);
            u->has_sha2 = true;
        }
    }
    return 0;
}

/* How specific a Host is, for the server's order: an exact host before
 * a pattern, a longer prefix before a shorter one, '%' last. */
static size_t host_rank(const char *host)
{
    size_t fixed = strcspn(host, "%_");

    return host[fixed] == '\0' ? 1000 + fixed : fixed;
}

static int by_host(const void *a, const void *b)
{
    size_t x = host_rank(((const proxy_user_t *)a)->host);
    size_t y = host_rank(((const proxy_user_t *)b)->host);

    return x < y ? 1 : x > y ? -1 : 0;
}

/* One row of mysql.user as an entry; rows a proxy cannot check (another
 * authentication plugin, a locked or malformed hash) are left out. */
static int backend_row(const dal_result_t *r, proxy_user_t **v, size_t *n, size_t *cap)
{
    const char *user = dal_result_text(r, 0, NULL), *host = dal_result_text(r, 1, NULL);
    const char *plugin = dal_result_text(r, 2, NULL), *hash = dal_result_text(r, 3, NULL);
    uint8_t stage2[PROTO_SHA1_LEN];
    bool empty = hash == NULL || hash[0] == '\0';
    proxy_user_t *u;

    if (user == NULL || user[0] == '\0' || host == NULL)
        return 0;  /* anonymous accounts: no name to log in with */
    if (plugin != NULL && plugin[0] != '\0' && strcmp(plugin, "mysql_native_password") != 0)
        return 0;
    if (!empty && proto_native_hash_parse(hash, stage2) != 0)
        return 0;
    if (strcasecmp(host, "localhost") == 0 && dal_result_int(r, 4) != 0)
        return 0;  /* with skip_name_resolve, 'localhost' is the socket only */
    if ((u = table_add(v, n, cap)) == NULL || (u->name = strdup(user)) == NULL ||
        (u->host = strdup(host)) == NULL)
        return -1;
    u->no_password = empty;
    if (!empty)
        memcpy(u->stage2, stage2, sizeof stage2);
    return 0;
}

/* The accounts of datasource ds's master, appended sorted by host.  -1
 * when they cannot be read (logged) or memory ran out. */
static int backend_load(dal_t *dal, const char *ds, proxy_user_t **v, size_t *n, size_t *cap)
{
    dal_query_opts_t o = {.datasource = ds, .server = DAL_SERVER_MASTER};
    dal_result_t *r = NULL;
    dal_error_t err;
    size_t first = *n;
    int rc = dal_query(dal, &o, accounts_sql, NULL, 0, &r, &err);

    const char *why = NULL;

    while (rc == 0 && (rc = dal_result_next(r, &err)) == 1)
        if ((rc = backend_row(r, v, n, cap)) != 0)
            why = "out of memory";
    dal_result_free(r);
    if (rc < 0) {
        fprintf(stderr, "dal-proxy: users = backend: cannot read the accounts of datasource %s: "
                        "%s\n", ds, why ? why : err.message);
        for (; *n > first; (*n)--) {
            free((*v)[*n - 1].name);
            free((*v)[*n - 1].host);
        }
        return -1;
    }
    qsort(*v + first, *n - first, sizeof **v, by_host);
    return 0;
}

/* The table of the configuration in force.  -1 when it cannot be read;
 * with config_only_ok, backend accounts that cannot be read leave the
 * config accounts alone (at start: a later failed login reads again). */
static int table_load(proxy_t *px, bool config_only_ok, proxy_user_t **out, size_t *nout)
{
    dal_proxy_info_t *info;
    dal_error_t err;
    proxy_user_t *v = NULL;
    size_t n = 0, cap = 0;
    const char *ds;
    int rc;

    if (dal_proxy_info(px->dal, &info, &err) != 0)
        return -1;
    rc = config_load(info, &v, &n, &cap);
    ds = dal_proxy_info_users_datasource(info);
    if (rc == 0 && ds != NULL && backend_load(px->dal, ds, &v, &n, &cap) != 0 &&
        !config_only_ok)
        rc = -1;
    px->users_backend = ds != NULL;
    dal_proxy_info_free(info);
    if (rc != 0) {
        table_free(v, n);
        return -1;
    }
    *out = v;
    *nout = n;
    return 0;
}

/* Under users_mu: put the table v (n entries) in force. */
static void table_swap(proxy_t *px, proxy_user_t *v, size_t n)
{
    table_free(px->users, px->nusers);
    px->users = v;
    px->nusers = n;
    px->users_read_ms = guard_now_ms();
}

int users_load(proxy_t *px)
{
    uint64_t failures;
    proxy_user_t *v;
    size_t n;

    pthread_mutex_init(&px->users_mu, NULL);
    dal_reload_stats(px->dal, &px->users_reloads, &failures);
    if (table_load(px, true, &v, &n) != 0)
        return -1;
    table_swap(px, v, n);
    return 0;
}

void users_free(proxy_t *px)
{
    table_free(px->users, px->nusers);
    px->users = NULL;
    px->nusers = 0;
    pthread_mutex_destroy(&px->users_mu);
}

/* Under users_mu: the table again if the configuration was reloaded since
 * it was read, or if forced (a table that cannot be read keeps the old). */
static void refresh(proxy_t *px, bool force)
{
    uint64_t reloads, failures;
    proxy_user_t *v;
    size_t n;

    dal_reload_stats(px->dal, &reloads, &failures);
    if ((reloads == px->users_reloads && !force) || table_load(px, false, &v, &n) != 0)
        return;
    table_swap(px, v, n);
    px->users_reloads = reloads;
}

/* Does a mysql.user Host match a client's address?  '%' and '_' are
 * LIKE's wildcards; 'localhost' is a loopback client. */
static bool host_like(const char *pat, const char *s)
{
    for (; *pat != '\0'; pat++, s++) {
        if (*pat == '%') {
            for (;; s++) {
                if (host_like(pat + 1, s))
                    return true;
                if (*s == '\0')
                    return false;
            }
        }
        if (*s == '\0' || (*pat != '_' && tolower((unsigned char)*pat) !=
                                              tolower((unsigned char)*s)))
            return false;
    }
    return *s == '\0';
}

static bool host_matches(const char *host, const char *peer)
{
    if (host == NULL)
        return true;
    if (strcasecmp(host, "localhost") == 0)
        return strcmp(peer, "127.0.0.1") == 0 || strcmp(peer, "::1") == 0;
    return host_like(host, peer);
}

/* Under users_mu: are the backend accounts due to be read again? */
static bool backend_due(proxy_t *px)
{
    if (!px->users_backend || guard_now_ms() - px->users_read_ms < REREAD_MS)
        return false;
    px->users_read_ms = guard_now_ms();  /* a read that fails waits too */
    return true;
}

bool users_find(proxy_t *px, const char *name, const char *peer, proxy_user_t *out)
{
    size_t i;
    bool found = false;

    proxy_pin_thread(true);  /* the accounts may be read under the lock */
    pthread_mutex_lock(&px->users_mu);
    refresh(px, backend_due(px));
    for (i = 0; i < px->nusers && !found; i++)
        if (strcmp(px->users[i].name, name) == 0 && host_matches(px->users[i].host, peer)) {
            *out = px->users[i];
            out->name = NULL;
            out->host = NULL;
            found = true;
        }
    pthread_mutex_unlock(&px->users_mu);
    proxy_pin_thread(false);
    return found;
}

bool users_reread(proxy_t *px)
{
    bool done = false;

    proxy_pin_thread(true);
    pthread_mutex_lock(&px->users_mu);
    if (backend_due(px)) {
        refresh(px, true);
        done = true;
    }
    pthread_mutex_unlock(&px->users_mu);
    proxy_pin_thread(false);
    return done;
}
