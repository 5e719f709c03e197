/*
 * monitor.c -- the monitor plugin instances of a snapshot.
 *
 * (Placeholder until the monitoring work lands.)
 */
#include <stdlib.h>

#include "error.h"
#include "monitor.h"

struct dal_monitor_set {
    int unused;
};

int dal_monitor_set_build(struct dal_snapshot *s, dal_monitor_set_t **out, dal_error_t *err)
{
    *out = NULL;
    if (s->cfg->nmonitors > 0)
        return dal_err_set(err, DAL_EUNSUPPORTED,
                           "%s:%d: [monitor] sections are not supported yet", s->cfg->path,
                           s->cfg->monitors[0].line);
    return 0;
}

void dal_monitor_set_free(dal_monitor_set_t *set)
{
    free(set);
}

void dal_monitor_emit(const dal_monitor_set_t *set, const dal_event_t *ev)
{
    (void)set;
    (void)ev;
}
