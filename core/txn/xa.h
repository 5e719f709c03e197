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

#include "conn.h"
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

/* This process's name among the instances sharing a log, "HOST:PID" (the
 * part of its gtrids after "dal:"), into out (XA_ID_MAX + 1 bytes). */
void xa_instance_name(char *out);

/*
 * On c, a connection of its own to the xa_log datasource (xa_daemon.c):
 * hold the lock that says instance name is alive and, when want_lease,
 * try the recovery lease's lock without waiting (else let it go).
 * *live and *lease say what c held before the call and hold after it;
 * the server releases both when c goes away.  Taking one records it
 * (dal_xa_instance, dal_xa_lease's row); record: those held are recorded
 * again (the last try failed).  0; 1 when a lock is held but
 * could not be recorded (err says why: the log predates `dal xa init`'s
 * tables); or the error, after which c is unusable if mysql_errno says a
 * client error.
 */
int xa_locks_hold(dal_conn_t *c, const char *name, int want_lease, int record, int *live,
                  int *lease, dal_error_t *err);

/* The log server's clock now, into out (cap bytes), on c. */
int xa_log_now(dal_conn_t *c, char *out, size_t cap, dal_error_t *err);

/* Whether the lease's holder should run a pass now: an instance in
 * dal_xa_instance lost its lock (died), or a decision made since `since`
 * (the log server's clock at the last pass) is still there a second
 * later.  1, 0, or an error on c (as xa_locks_hold). */
int xa_watch(dal_conn_t *c, const char *since, dal_error_t *err);

/* gtrid's coordinator (txn.c) gave up on it, its branches prepared and
 * the decision's INSERT of unknown outcome: this process's daemon
 * decides it (a rollback, unless the commit got in) once the log answers
 * (xa_decide_abandoned), and the lease's holder then finishes it. */
void xa_abandon(dal_snapshot_t *snap, const char *gtrid);
void xa_decide_abandoned(dal_snapshot_t *snap);

/* Instance name leaves dal_xa_instance (a clean close). */
void xa_locks_leave(dal_conn_t *c, const char *name);

/*
 * dal_xa_recover, also saying in *due_ms when a branch it left waiting can
 * be finished (UINT32_MAX: none waits): the daemon runs its next pass then
 * rather than an interval later.
 */
int xa_recover_pass(dal_t *dal, uint32_t grace_ms, dal_xa_report_t *report, uint32_t *due_ms,
                    dal_error_t *err);

/*
 * err, a lock wait timeout (ER_LOCK_WAIT_TIMEOUT) on node's master, gets
 * a sentence added naming dal's XA branches in doubt on that server, with
 * their decision and age, when there are any: the rows they hold stay
 * locked until recovery finishes them.  Runs XA RECOVER there (and reads
 * the log): only for that error.
 */
void xa_explain_wait(dal_node_t *node, dal_error_t *err);

#endif /* DAL_CORE_XA_H */
