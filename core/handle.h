/*
 * dal_int.h -- the dal_t handle.
 */
#ifndef DAL_CORE_DAL_INT_H
#define DAL_CORE_DAL_INT_H

#include <pthread.h>

#include "log.h"
#include "snapshot.h"
#include "source.h"
#include "sql.h"

struct dal {
    dal_logger_t log;
    dal_source_t *source;       /* owned: where the configuration comes from */
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
    atomic_ulong resyncs;       /* whole re-reads after the store forgot our revision */
    _Atomic int64_t revision;   /* the source's revision of the document in force; 0: none */
    atomic_int source_state;    /* dal_source_state_t */
    atomic_int from_cache;      /* running from the cache file since dal_open */
    dal_source_sink_t sink;     /* handed to the source while it watches */
    struct dal_xa_daemon *xa;   /* owned: background XA recovery (xa_daemon.h), or NULL */
};

/* libmysqlclient's global init and the plugin host table, once (dal.c). */
void library_ensure_init(void);

/* Open location (a file or a store URL), read its document and parse it,
 * as dal_check_config and dal_config_diff do (source_api.c).  On success
 * *out is owned by the caller. */
int location_load(const char *location, const dal_open_opts_t *opts, dal_config_t **out,
                  dal_error_t *err);

/* What dal_config_diff reports of two loaded configurations (reload.c). */
int config_diff(const dal_config_t *a, const dal_config_t *b, dal_diff_fn fn, void *user,
                dal_error_t *err);

/* The current snapshot with one reference for the caller. */
dal_snapshot_t *snapshot_acquire(dal_t *dal);

/* "ok" or "unreachable" for a dal_source_state_t (reload.c). */
const char *source_state_name(int state);

/* Background recovery of XA branches (xa_daemon.c): a thread for dal if
 * its configuration has [dal] xa_log, holding the locks that say this
 * instance is alive and (with a non-zero xa_recover_interval) who holds
 * the recovery lease; of the instances sharing the log only the lease's
 * holder runs passes, the first as soon as it takes it.  *out (owned:
 * stop with xa_daemon_stop, NULL is fine) stays NULL when not wanted. */
struct dal_xa_daemon;
int xa_daemon_start(dal_t *dal, struct dal_xa_daemon **out, dal_error_t *err);
void xa_daemon_stop(struct dal_xa_daemon *d);
/* After a reload (caller holds reload_mu): start dal's thread if the new
 * configuration wants one and none runs (a failure is logged; the thread
 * of a configuration that no longer wants it idles, see xa_daemon.c). */
void xa_daemon_follow(dal_t *dal);

/* Start / stop watching the source (reload.c). */
int watch_start(dal_t *dal, dal_error_t *err);
void watch_stop(dal_t *dal);

#include "stmt.h" /* the statement driver the entry points call */

#endif /* DAL_CORE_DAL_INT_H */
