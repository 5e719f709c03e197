/*
 * ident.c -- the server dal-proxy says it is: the handshake's version is
 * the backends' own, `5.5.5-` and what VERSION() answers on the default
 * datasource's master (`5.5.5-10.11.6-MariaDB-0+deb12u1`), the prefix
 * MariaDB itself sends, so drivers take the proxy for the product behind
 * it (Connector/J, mysql2 and SQLAlchemy look for "MariaDB" in it) and
 * SELECT VERSION() and @@version, which the servers answer, say the same.
 *
 * Read at start, and again by the first command a worker runs after the
 * configuration was reloaded (dal_reload_stats counts the reloads); a
 * version that cannot be read (no server up) leaves IDENT_UNKNOWN, asked
 * for again at most every 5 s.  The handshake (on an I/O thread) only
 * copies what was read.
 */
#include <stdio.h>
#include <string.h>

#include "proxy.h"

/* What the handshake says while no backend has answered. */
#define IDENT_UNKNOWN "10.11.99-MariaDB-dal-proxy"
/* How often an unknown version is asked for again. */
#define IDENT_RETRY_MS 5000

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

/* "10.11.6-MariaDB-..." as 101106; 0 when it does not start with
 * MAJOR.MINOR.PATCH. */
static uint32_t version_id(const char *v)
{
    unsigned major, minor, patch;

    if (sscanf(v, "%u.%u.%u", &major, &minor, &patch) != 3 || minor > 99 || patch > 99 ||
        major > 99)
        return 0;
    return major * 10000 + minor * 100 + patch;
}

/* The version again when unknown (at most every IDENT_RETRY_MS) or when
 * the configuration was reloaded since it was read.  One worker at a time
 * asks (the others go on), and ident_mu is held only to copy, so a
 * handshake never waits for a server. */
static void refresh(proxy_t *px)
{
    uint64_t reloads, failures;
    bool idle = false;
    char v[sizeof px->version];

    dal_reload_stats(px->dal, &reloads, &failures);
    if (atomic_load(&px->version_known) ? reloads == atomic_load(&px->version_reloads)
                                        : guard_now_ms() < atomic_load(&px->version_retry_ms))
        return;
    if (!atomic_compare_exchange_strong(&px->version_busy, &idle, true))
        return;
    if (backend_version(px->dal, v, sizeof v) == 0) {
        pthread_mutex_lock(&px->ident_mu);
        memcpy(px->version, v, sizeof v);
        pthread_mutex_unlock(&px->ident_mu);
        if (version_id(v) != 0)
            atomic_store(&px->version_id, version_id(v));
        atomic_store(&px->version_reloads, reloads);
        atomic_store(&px->version_known, true);
    } else {
        atomic_store(&px->version_retry_ms, guard_now_ms() + IDENT_RETRY_MS);
    }
    atomic_store(&px->version_busy, false);
}

void ident_load(proxy_t *px)
{
    pthread_mutex_init(&px->ident_mu, NULL);
    snprintf(px->version, sizeof px->version, "%s", IDENT_UNKNOWN);
    atomic_store(&px->version_id, PROTO_SERVER_VERSION_ID);
    refresh(px);
}

void ident_free(proxy_t *px)
{
    pthread_mutex_destroy(&px->ident_mu);
}

void ident_refresh(proxy_t *px)
{
    refresh(px);
}

uint32_t ident_version_id(proxy_t *px)
{
    return atomic_load_explicit(&px->version_id, memory_order_relaxed);
}

void ident_handshake_version(proxy_t *px, char *buf, size_t n)
{
    pthread_mutex_lock(&px->ident_mu);
    snprintf(buf, n, "5.5.5-%s", px->version);
    pthread_mutex_unlock(&px->ident_mu);
}
