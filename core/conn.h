/*
 * conn.h -- server connections and the built-in connection cache.
 *
 * dal_conn_open() is the one place that turns a datasource's URL into a
 * libmysqlclient connection (timeouts, charset, TLS, socket).  Until a pool
 * plugin is configured, each datasource node keeps its idle connections in a
 * small mutex-protected stack (dal_connpool_t) so statements reuse them.
 */
#ifndef DAL_CORE_CONN_H
#define DAL_CORE_CONN_H

#include <mysql.h>
#include <pthread.h>
#include <stdint.h>

#include "config.h"
#include "dal/plugin.h"

struct dal_conn {
    MYSQL mysql;                       /* initialised and connected */
    const dal_cfg_datasource_t *ds;    /* borrowed from the snapshot's config */
    int no_backslash_escapes;          /* server's sql_mode, read at connect */
    uint64_t created_ns;
    struct dal_conn *next;             /* idle-stack link */
};

/* Connect to ds's master.  *out owned by the caller (dal_conn_close).
 * Errors are DAL_ECONNECT naming the datasource and server, never the password. */
int dal_conn_open(const dal_cfg_datasource_t *ds, dal_conn_t **out, dal_error_t *err);
void dal_conn_close(dal_conn_t *c);
/* 0 if alive. */
int dal_conn_ping(dal_conn_t *c);
int dal_conn_reset(dal_conn_t *c, dal_error_t *err);
/* Fill err from the connection's last error, naming the datasource. */
int dal_conn_error(dal_conn_t *c, int code, dal_error_t *err);

typedef struct dal_connpool {
    pthread_mutex_t mu;
    dal_conn_t *idle;      /* owned stack */
    unsigned int nidle;
    unsigned int max_idle;
    const dal_cfg_datasource_t *ds; /* borrowed */
} dal_connpool_t;

void dal_connpool_init(dal_connpool_t *p, const dal_cfg_datasource_t *ds, unsigned int max_idle);
/* Close every idle connection. */
void dal_connpool_destroy(dal_connpool_t *p);
/* An idle connection, or a new one.  *reused says which. */
int dal_connpool_acquire(dal_connpool_t *p, dal_conn_t **out, int *reused, dal_error_t *err);
/* Give back; reusable == 0 closes it. */
void dal_connpool_release(dal_connpool_t *p, dal_conn_t *c, int reusable);

#endif /* DAL_CORE_CONN_H */
