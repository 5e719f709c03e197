/*
 * dal_int.h -- the dal_t handle.
 */
#ifndef DAL_CORE_DAL_INT_H
#define DAL_CORE_DAL_INT_H

#include <pthread.h>

#include "log.h"
#include "snapshot.h"
#include "sql.h"

struct dal {
    dal_logger_t log;
    char *path;                 /* owned: the INI file */
    char *plugin_dir;           /* owned: dal_open_opts_t.plugin_dir, or NULL */
    dal_sql_cache_t *sql_cache; /* owned; shared by every snapshot */
    pthread_mutex_t snap_mu;    /* guards taking a reference against a swap */
    dal_snapshot_t *snap;       /* one reference owned */
};

/* The current snapshot with one reference for the caller. */
dal_snapshot_t *dal_snapshot_acquire(dal_t *dal);

struct dal_routing;

/* BEGIN, COMMIT or ROLLBACK. */
int dal_is_txn_control(dal_sql_kind_t k);

/* Analyse sql (cached) and route it: the first half of every statement.
 * On success *s holds a reference (dal_sql_unref) and rt the routes
 * (dal_routing_clear). */
int dal_prepare(dal_t *dal, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                const char *sql, const dal_value_t *params, size_t nparams,
                const dal_sql_t **s, struct dal_routing *rt, dal_error_t *err);

#endif /* DAL_CORE_DAL_INT_H */
