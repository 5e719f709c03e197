/*
 * users.c -- the accounts of [proxy user NAME].
 *
 * Loaded at start, and again at the first login after the configuration
 * was reloaded (SIGHUP or [dal] watch: dal_reload_stats counts the
 * reloads), so a reload adds, removes and changes users without touching
 * the clients already connected.  A login copies what it checks out of
 * the table under the lock, so the table can be replaced while it runs.
 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

static void table_free(proxy_user_t *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

/* The accounts of the configuration in force: each with its
 * mysql_native_password stage 2, from the password or from password_hash,
 * and with a password its caching_sha2_password stage 2 as well.  -1 when
 * out of memory. */
static int table_load(dal_t *dal, proxy_user_t **out, size_t *nout)
{
    dal_proxy_info_t *info;
    dal_error_t err;
    proxy_user_t *v;
    size_t i, n;

    if (dal_proxy_info(dal, &info, &err) != 0)
        return -1;
    n = dal_proxy_info_user_count(info);
    if ((v = calloc(n ? n : 1, sizeof *v)) == NULL) {
        dal_proxy_info_free(info);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const char *pw = NULL, *hash = NULL;
        const char *name = dal_proxy_info_user(info, i, &pw, &hash);
        if ((v[i].name = strdup(name)) == NULL ||
            (pw == NULL && proto_native_hash_parse(hash, v[i].stage2) != 0)) {
            table_free(v, i + 1);  /* (dal checked the hash's form already) */
            dal_proxy_info_free(info);
            return -1;
        }
        if (pw != NULL) {
            proto_native_stage2(pw, strlen(pw), v[i].stage2);
            proto_sha2_stage2(pw, strlen(pw), v[i].sha2);
            v[i].has_sha2 = true;
        }
    }
    dal_proxy_info_free(info);
    *out = v;
    *nout = n;
    return 0;
}

int users_load(proxy_t *px)
{
    uint64_t failures;

    pthread_mutex_init(&px->users_mu, NULL);
    dal_reload_stats(px->dal, &px->users_reloads, &failures);
    return table_load(px->dal, &px->users, &px->nusers);
}

void users_free(proxy_t *px)
{
    table_free(px->users, px->nusers);
    px->users = NULL;
    px->nusers = 0;
    pthread_mutex_destroy(&px->users_mu);
}

/* Under users_mu: the table again if the configuration was reloaded since
 * it was read (a table that cannot be read keeps the old one). */
static void refresh(proxy_t *px)
{
    uint64_t reloads, failures;
    proxy_user_t *v;
    size_t n;

    dal_reload_stats(px->dal, &reloads, &failures);
    if (reloads == px->users_reloads || table_load(px->dal, &v, &n) != 0)
        return;
    table_free(px->users, px->nusers);
    px->users = v;
    px->nusers = n;
    px->users_reloads = reloads;
}

bool users_find(proxy_t *px, const char *name, proxy_user_t *out)
{
    size_t i;
    bool found = false;

    pthread_mutex_lock(&px->users_mu);
    refresh(px);
    for (i = 0; i < px->nusers && !found; i++)
        if (strcmp(px->users[i].name, name) == 0) {
            *out = px->users[i];
            out->name = NULL;
            found = true;
        }
    pthread_mutex_unlock(&px->users_mu);
    return found;
}
