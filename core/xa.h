/*
 * xa.h -- what two-phase commit needs besides the branches themselves
 * (txn.h): dal's global transaction ids, the decision log in the [dal]
 * xa_log datasource, and recovery of the branches a coordinator left
 * prepared (dal_xa_recover, dal_xa_list in dal.h).
 *
 * A global id is "dal:HOST:PID:UNIXTIME:N": it names the instance that
 * began the transaction and when, so that recovery, on any instance, can
 * tell how old a branch is without asking its coordinator.  A branch's
 * qualifier is its datasource's name (two datasources may share a server).
 */
#ifndef DAL_CORE_XA_H
#define DAL_CORE_XA_H

#include <dal/dal.h>

#include "snapshot.h"

#define XA_ID_MAX 64 /* gtrid and bqual: MariaDB's limit */

/* A new global id into out (XA_ID_MAX + 1 bytes).  Thread-safe. */
void xa_new_gtrid(char *out);

/* The XA statement "XA <verb> 'gtrid','bqual'<tail>" into out (cap bytes). */
void xa_stmt(char *out, size_t cap, const char *verb, const char *gtrid, const char *bqual,
             const char *tail);

/*
 * Record the commit decision for gtrid in snap's xa_log, durably, in its
 * own autocommit statement.  0: recorded.  Otherwise *unknown says whether
 * it may have been recorded all the same (the connection died after
 * sending), in which case the branches must be left for recovery rather
 * than rolled back; a rollback already recorded by recovery (the
 * transaction outlived xa_grace) is a refusal, *unknown 0.
 */
int xa_log_commit(dal_snapshot_t *snap, const char *gtrid, int *unknown, dal_error_t *err);

/* Remove gtrid's decision once every branch committed (best effort:
 * recovery prunes what is left). */
void xa_log_forget(dal_snapshot_t *snap, const char *gtrid);

/* Take or renew the recovery lease (the one row of dal_xa_lease) for
 * owner, for ms from now on the log server's clock, unless another owner
 * holds it unexpired; *held says whether owner holds it now. */
int xa_lease_take(dal_snapshot_t *snap, const char *owner, uint64_t ms, int *held,
                  dal_error_t *err);

#endif /* DAL_CORE_XA_H */
