/*
 * xa_daemon.h -- recovery of XA branches in the background: a thread per
 * dal_t whose configuration has [dal] xa_log and a non-zero
 * xa_recover_interval, first at dal_open, then every interval; of all the
 * instances sharing the log, only the one holding the lease row (xa.h)
 * runs a pass, so the nodes see one XA RECOVER per interval, not one per
 * instance.
 */
#ifndef DAL_CORE_XA_DAEMON_H
#define DAL_CORE_XA_DAEMON_H

#include <dal/dal.h>

struct dal_xa_daemon;

/* Start it for dal if its configuration asks for it; *out (owned by the
 * caller: xa_daemon_stop) stays NULL when it does not. */
int xa_daemon_start(dal_t *dal, struct dal_xa_daemon **out, dal_error_t *err);

/* Stop the thread (a pass under way finishes first) and free d; NULL is
 * fine. */
void xa_daemon_stop(struct dal_xa_daemon *d);

#endif /* DAL_CORE_XA_DAEMON_H */
