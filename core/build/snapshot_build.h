/*
 * snapshot_build.h -- building a snapshot from a configuration.
 */
#ifndef DAL_CORE_SNAPSHOT_BUILD_H
#define DAL_CORE_SNAPSHOT_BUILD_H

#include "snapshot.h"

/*
 * Build a snapshot from cfg (ownership transferred, also on failure).
 * plugin_dir_override may be NULL.  Loads and checks every plugin the file
 * names and creates its instances (with the host API registered by
 * plugin_set_host_api); any failure is reported "FILE:LINE: ..." and
 * nothing is kept.  *out holds one reference.
 */
int snapshot_build(dal_config_t *cfg, const char *plugin_dir_override,
                   const dal_logger_t *log, dal_snapshot_t **out, dal_error_t *err);

/* The same, reusing the nodes of prev (may be NULL) whose datasource
 * settings are unchanged. */
int snapshot_rebuild(dal_config_t *cfg, const char *plugin_dir_override,
                     const dal_logger_t *log, const dal_snapshot_t *prev,
                     dal_snapshot_t **out, dal_error_t *err);

#endif /* DAL_CORE_SNAPSHOT_BUILD_H */
