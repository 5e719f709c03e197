/*
 * monitor.h -- the monitor plugin instances of a snapshot, emitting events
 * to them, and normalising SQL for events.
 *
 * Events (dal_event_t, see dal/plugin.h and docs/plugins.md for which
 * fields each type fills) are delivered synchronously on the statement's
 * thread; every monitor plugin promises that on_event neither blocks nor
 * fails, so emitting costs a few indirect calls.  Pool figures are not
 * emitted by the statement path: while any monitor is enabled, a sampler
 * thread of the set reads every node's pool once a second and emits one
 * DAL_EVENT_POOL event per figure.
 */
#ifndef DAL_CORE_MONITOR_H
#define DAL_CORE_MONITOR_H

#include <stddef.h>

#include "snapshot.h"
#include "sql.h"

typedef struct dal_monitor_set dal_monitor_set_t;

/* Create an instance of every enabled [monitor] section (and start the pool
 * sampler).  *out owned by the snapshot (NULL when there are none).  Must
 * run after the nodes' pools are built; free the set before destroying them.
 * Errors are "FILE:LINE: ...". */
int monitor_set_build(struct dal_snapshot *s, dal_monitor_set_t **out, dal_error_t *err);
/* Stop the sampler and destroy the instances.  NULL is a no-op. */
void monitor_set_free(dal_monitor_set_t *set);

/* Start an event for set (not NULL): zeroed, with struct_size, type, and
 * labels_gen = the generation of the set's snapshot, whose configuration
 * the core's labels point into (table, datasource and server names live as
 * long as the snapshot; kinds are static).  A caller that labels the event
 * with text from anywhere else must set labels_gen to 0. */
void monitor_event_init(const dal_monitor_set_t *set, dal_event_t *ev,
                        dal_event_type_t type);

/* Deliver ev (borrowed for the call) to every monitor.  set may be NULL (no
 * monitors: a no-op).  Never blocks the statement and never fails it. */
void monitor_emit(const dal_monitor_set_t *set, const dal_event_t *ev);

/* 1 if there is anyone to emit to: lets a caller skip building an event
 * (and normalising its SQL) when no monitor is enabled. */
static inline int monitor_active(const dal_monitor_set_t *set)
{
    return set != NULL;
}

/*
 * Write sql[0..len) (read in the mode no_backslash: lex_init) into out with
 * every literal (string, number, hex or bit value) replaced by `?`, comments
 * dropped and each run of blanks made one space, so that no data or password
 * from the statement reaches a log or a metric label.  `?` placeholders
 * stay.  An unterminated string becomes one `?` to the end.  out is NUL-
 * terminated and truncated to cap-1 bytes when cap > 0 (a literal is never
 * cut: only text that is not data is copied).  Returns the full length, like
 * snprintf.  Thread-safe.
 */
size_t sql_normalize(const char *sql, size_t len, int no_backslash, char *out, size_t cap);

/* The normalised text of an analysed statement, made once and kept on it
 * (the statement is cached, so monitored statements pay the lexing once per
 * distinct text).  Valid while s is.  NULL only if out of memory. */
const char *sql_normalized(const dal_sql_t *s);

#endif /* DAL_CORE_MONITOR_H */
