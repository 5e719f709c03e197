/*
 * reload.h -- following the configuration source: the watch a handle keeps
 * on it, and its state as reported to tools.
 */
#ifndef DAL_CORE_RELOAD_H
#define DAL_CORE_RELOAD_H

#include "handle.h"

/* Start / stop watching dal's source; each new document is reloaded and
 * each change of the source's reachability logged and told to monitors. */
int watch_start(dal_t *dal, dal_error_t *err);
void watch_stop(dal_t *dal);

/* "ok" or "unreachable" for a dal_source_state_t. */
const char *source_state_name(int state);

#endif /* DAL_CORE_RELOAD_H */
