/*
 * ident.c -- the server dal-proxy says it is: the handshake's version is
 * the backends' own, `5.5.5-` and what VERSION() answers on the default
 * datasource's master (`5.5.5-10.11.6-MariaDB-0+deb12u1`), the prefix
 * MariaDB itself sends, so drivers take the proxy for the product behind
 * it (Connector/J, mysql2 and SQLAlchemy look for "MariaDB" in it) and
 * SELECT VERSION() and @@version, which the servers answer, say the same.
 *
 * Read at start, and again at the first login after the configuration
 * was reloaded (dal_reload_stats counts the reloads), as users.c reads
 * the accounts; a version that cannot be read (no server up) leaves
 * IDENT_UNKNOWN and is asked for again at the next login.
 */
#include <stdio.h>
#include <string.h>

#include "proxy.h"

/* What the handshake says while no backend has answered. */
#define IDENT_UNKNOWN "10.11.99-MariaDB-dal-proxy"

/* VERSION() of the default datasource's master into buf: 0, or -1. */
static int backend_version(dal_t *dal, char *buf, size_t n)
{
    dal_query_opts_t opts;
    dal_result_t *r = NULL;
    dal_error_t err;
    const char *v;
    int rc = -1;

    memset(&opts, 0, sizeof opts);
    opts.server = DAL_SERVER_MASTER;
    if (dal_query(dal, &opts, "SELECT VERSION()", NULL, 0, &r, &err) != 0)
        return -1;
    if (dal_result_next(r, &err) == 1 && (v = dal_result_text(r, 0, NULL)) != NULL &&
        v[0] != '\0' && strlen(v) < n) {
        snprintf(buf, n, "%s", v);
        rc = 0;
    }
    dal_result_free(r);
    return rc;
}

/* Under ident_mu: the version again when unknown or when the
 * configuration was reloaded since it was read. */
static void refresh(proxy_t *px)
{
    uint64_t reloads, failures;
    char v[sizeof px->version];

    dal_reload_stats(px->dal, &reloads, &failures);
    if (px->version_known && reloads == px->version_reloads)
        return;
    if (backend_version(px->dal, v, sizeof v) != 0)
        return;
    memcpy(px->version, v, sizeof v);
    px->version_known = true;
    px->version_reloads = reloads;
}

void ident_load(proxy_t *px)
{
    pthread_mutex_init(&px->ident_mu, NULL);
    snprintf(px->version, sizeof px->version, "%s", IDENT_UNKNOWN);
    pthread_mutex_lock(&px->ident_mu);
    refresh(px);
    pthread_mutex_unlock(&px->ident_mu);
}

void ident_free(proxy_t *px)
{
    pthread_mutex_destroy(&px->ident_mu);
}

void ident_refresh(proxy_t *px)
{
    pthread_mutex_lock(&px->ident_mu);
    refresh(px);
    pthread_mutex_unlock(&px->ident_mu);
}

void ident_handshake_version(proxy_t *px, char *buf, size_t n)
{
    pthread_mutex_lock(&px->ident_mu);
    snprintf(buf, n, "5.5.5-%s", px->version);
    pthread_mutex_unlock(&px->ident_mu);
}
