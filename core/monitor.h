/*
 * monitor.h -- the monitor plugin instances of a snapshot, and emitting
 * events to them.
 */
#ifndef DAL_CORE_MONITOR_H
#define DAL_CORE_MONITOR_H

#include "snapshot.h"

typedef struct dal_monitor_set dal_monitor_set_t;

/* Create an instance of every enabled [monitor] section.  *out owned by the
 * snapshot (NULL when there are none).  Errors are "FILE:LINE: ...". */
int dal_monitor_set_build(struct dal_snapshot *s, dal_monitor_set_t **out, dal_error_t *err);
void dal_monitor_set_free(dal_monitor_set_t *set);

/* Deliver ev to every monitor.  set may be NULL (no monitors: a no-op).
 * Never blocks the statement and never fails it. */
void dal_monitor_emit(const dal_monitor_set_t *set, const dal_event_t *ev);

#endif /* DAL_CORE_MONITOR_H */
