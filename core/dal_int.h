/*
 * dal_int.h -- the dal_t handle.
 */
#ifndef DAL_CORE_DAL_INT_H
#define DAL_CORE_DAL_INT_H

#include <pthread.h>

#include "log.h"
#include "snapshot.h"
#include "sql.h"

struct dal_watch;

struct dal {
    dal_logger_t log;
    char *path;                 /* owned: the INI file */
    char *plugin_dir;           /* owned: dal_open_opts_t.plugin_dir, or NULL */
    dal_sql_cache_t *sql_cache; /* owned; shared by every snapshot */
    /* The current snapshot (one reference owned).  Readers announce
     * themselves in `readers` while they load the pointer and take their
     * reference; a swap waits for readers to drain before dropping the old
     * snapshot's reference, so no lock is on the statement path. */
    _Atomic(dal_snapshot_t *) snap;
    atomic_uint readers;
    pthread_mutex_t reload_mu;  /* one reload at a time */
    atomic_ulong reloads, reload_failures;
    struct dal_watch *watch;    /* owned: the file watcher, or NULL */
    struct dal_xa_daemon *xa;   /* owned: background XA recovery (xa_daemon.h), or NULL */
};

/* The current snapshot with one reference for the caller. */
dal_snapshot_t *snapshot_acquire(dal_t *dal);

/* Background recovery of XA branches (xa_daemon.c): a thread for dal if
 * its configuration has [dal] xa_log and a non-zero xa_recover_interval,
 * first pass at once, then every interval; of the instances sharing the
 * log only the holder of its lease row runs a pass.  *out (owned: stop
 * with xa_daemon_stop, NULL is fine) stays NULL when not wanted. */
struct dal_xa_daemon;
int xa_daemon_start(dal_t *dal, struct dal_xa_daemon **out, dal_error_t *err);
void xa_daemon_stop(struct dal_xa_daemon *d);

/* Start / stop watching the INI file (reload.c). */
int watch_start(dal_t *dal, dal_error_t *err);
void watch_stop(dal_t *dal);

#include "stmt.h" /* the statement driver the entry points call */

#endif /* DAL_CORE_DAL_INT_H */
