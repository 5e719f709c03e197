/*
 * conn.c -- server connections and the built-in connection cache.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "error.h"

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_options(MYSQL *m, const dal_cfg_datasource_t *ds)
{
    const dal_url_t *u = &ds->master;
    unsigned int ct = (unsigned int)((u->connect_timeout_ms ? u->connect_timeout_ms
                                                            : ds->connect_timeout_ms) + 999) / 1000;
    unsigned int rt = (ds->read_timeout_ms + 999) / 1000;
    my_bool off = 0;

    if (ct == 0)
        ct = 1;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    if (rt > 0) {
        mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &rt);
        mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &rt);
    }
    mysql_options(m, MYSQL_SET_CHARSET_NAME, u->charset ? u->charset : "utf8mb4");
    /* Never reconnect behind our back: a silent reconnect would lose the
     * session (transaction, variables) without anyone noticing. */
    mysql_options(m, MYSQL_OPT_RECONNECT, &off);
    /* lets exec.c drive several nodes' statements from one thread */
    mysql_options(m, MYSQL_OPT_NONBLOCK, 0);
    if (u->ssl_mode != NULL && strcmp(u->ssl_mode, "DISABLED") != 0) {
        my_bool on = 1;
        if (u->ssl_ca != NULL)
            mysql_options(m, MYSQL_OPT_SSL_CA, u->ssl_ca);
        if (strcmp(u->ssl_mode, "PREFERRED") != 0)
            mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
        if (strncmp(u->ssl_mode, "VERIFY", 6) == 0)
            mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    }
}

int dal_conn_error(dal_conn_t *c, int code, dal_error_t *err)
{
    return dal_err_server(err, code, mysql_errno(&c->mysql), mysql_sqlstate(&c->mysql),
                          "datasource %s (%s): error %u (%s): %s", c->ds->name,
                          c->ds->master.display, mysql_errno(&c->mysql),
                          mysql_sqlstate(&c->mysql), mysql_error(&c->mysql));
}

/* Sent once per session (at connect and after each reset, which puts the
 * variables back to the server's defaults). */
#define TRACK_SQL "SET session_track_state_change = 1, session_track_transaction_info = 'CHARACTERISTICS'"

/* Ask the server to flag session changes (see conn.h).  A server that
 * cannot (no CLIENT_SESSION_TRACK, or the variables are unknown) is not an
 * error: its connections are simply reset every time. */
static void track_state(dal_conn_t *c)
{
    c->tracked = 0;
    if (!(c->mysql.server_capabilities & CLIENT_SESSION_TRACKING))
        return;
    if (mysql_real_query(&c->mysql, TRACK_SQL, sizeof TRACK_SQL - 1) != 0)
        return;
    c->tracked = 1;
    /* The flag in this OK packet reports our own SET, not a borrower's. */
    c->mysql.server_status &= ~SERVER_SESSION_STATE_CHANGED;
}

/* The session may hold state a borrower left. */
static int session_dirty(const dal_conn_t *c)
{
    return !c->tracked || c->dirty ||
           (c->mysql.server_status & (SERVER_SESSION_STATE_CHANGED | SERVER_STATUS_IN_TRANS));
}

int dal_conn_open(const dal_cfg_datasource_t *ds, dal_conn_t **out, dal_error_t *err)
{
    const dal_url_t *u = &ds->master;
    dal_conn_t *c = calloc(1, sizeof *c);
    int rc;

    *out = NULL;
    if (c == NULL)
        return dal_err_set(err, DAL_ENOMEM, "out of memory");
    c->ds = ds;
    if (mysql_init(&c->mysql) == NULL) {
        free(c);
        return dal_err_set(err, DAL_ENOMEM, "mysql_init failed");
    }
    set_options(&c->mysql, ds);
    if (mysql_real_connect(&c->mysql, u->socket ? "localhost" : u->host, u->user, u->password,
                           u->database, u->socket ? 0 : u->port, u->socket, 0) == NULL) {
        rc = dal_conn_error(c, DAL_ECONNECT, err);
        mysql_close(&c->mysql);
        free(c);
        return rc;
    }
    track_state(c);
    c->no_backslash_escapes = (c->mysql.server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
    c->created_ns = mono_ns();
    *out = c;
    return 0;
}

void dal_conn_close(dal_conn_t *c)
{
    if (c == NULL)
        return;
    mysql_close(&c->mysql);
    free(c);
}

int dal_conn_ping(dal_conn_t *c)
{
    return mysql_ping(&c->mysql) == 0 ? 0 : -1;
}

int dal_conn_reset(dal_conn_t *c, dal_error_t *err)
{
    if (!session_dirty(c))
        return 0;
    if (mysql_reset_connection(&c->mysql) != 0)
        return dal_conn_error(c, DAL_ESERVER, err);
    c->dirty = 0;
    track_state(c);
    c->no_backslash_escapes = (c->mysql.server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
    return 0;
}

void dal_conn_mark_dirty(dal_conn_t *c)
{
    c->dirty = 1;
}

void dal_conn_note_state(dal_conn_t *c)
{
    if (session_dirty(c))
        c->dirty = 1;
}

void dal_connpool_init(dal_connpool_t *p, const dal_cfg_datasource_t *ds, unsigned int max_idle)
{
    pthread_mutex_init(&p->mu, NULL);
    p->idle = NULL;
    p->nidle = 0;
    p->max_idle = max_idle;
    p->ds = ds;
    atomic_init(&p->in_use, 0);
    atomic_init(&p->created, 0);
    atomic_init(&p->closed, 0);
}

void dal_connpool_destroy(dal_connpool_t *p)
{
    dal_conn_t *c, *next;

    for (c = p->idle; c; c = next) {
        next = c->next;
        dal_conn_close(c);
    }
    p->idle = NULL;
    p->nidle = 0;
    pthread_mutex_destroy(&p->mu);
}

int dal_connpool_acquire(dal_connpool_t *p, dal_conn_t **out, int *reused, dal_error_t *err)
{
    dal_conn_t *c;
    int rc;

    pthread_mutex_lock(&p->mu);
    c = p->idle;
    if (c != NULL) {
        p->idle = c->next;
        p->nidle--;
    }
    pthread_mutex_unlock(&p->mu);
    *reused = c != NULL;
    if (c != NULL) {
        c->next = NULL;
        *out = c;
        atomic_fetch_add_explicit(&p->in_use, 1, memory_order_relaxed);
        return 0;
    }
    rc = dal_conn_open(p->ds, out, err);
    if (rc != 0)
        return rc;
    atomic_fetch_add_explicit(&p->created, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->in_use, 1, memory_order_relaxed);
    return 0;
}

void dal_connpool_release(dal_connpool_t *p, dal_conn_t *c, int reusable)
{
    if (c == NULL)
        return;
    atomic_fetch_sub_explicit(&p->in_use, 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    if (reusable && p->nidle < p->max_idle) {
        c->next = p->idle;
        p->idle = c;
        p->nidle++;
        c = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (c != NULL)
        atomic_fetch_add_explicit(&p->closed, 1, memory_order_relaxed);
    dal_conn_close(c);
}

void dal_connpool_stats(dal_connpool_t *p, dal_pool_stats_t *out)
{
    memset(out, 0, sizeof *out);
    out->in_use = atomic_load_explicit(&p->in_use, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    out->idle = p->nidle;
    pthread_mutex_unlock(&p->mu);
    out->created = atomic_load_explicit(&p->created, memory_order_relaxed);
    out->closed = atomic_load_explicit(&p->closed, memory_order_relaxed);
}
