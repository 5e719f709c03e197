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

#endif /* DAL_CORE_DAL_INT_H */
