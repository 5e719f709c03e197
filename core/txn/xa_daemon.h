/*
 * xa_daemon.h -- background recovery of XA branches for a handle.
 */
#ifndef DAL_CORE_XA_DAEMON_H
#define DAL_CORE_XA_DAEMON_H

#include "handle.h"

/* A thread for dal if its configuration has [dal] xa_log, holding the
 * locks that say this instance is alive and (with a non-zero
 * xa_recover_interval) who holds the recovery lease; of the instances
 * sharing the log only the lease's holder runs passes, the first as soon
 * as it takes it.  *out (owned: stop with xa_daemon_stop, NULL is fine)
 * stays NULL when not wanted. */
int xa_daemon_start(dal_t *dal, struct dal_xa_daemon **out, dal_error_t *err);
void xa_daemon_stop(struct dal_xa_daemon *d);

/* After a reload (caller holds reload_mu): start dal's thread if the new
 * configuration wants one and none runs (a failure is logged; the thread
 * of a configuration that no longer wants it idles, see xa_daemon.c). */
void xa_daemon_follow(dal_t *dal);

#endif /* DAL_CORE_XA_DAEMON_H */
