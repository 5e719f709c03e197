/*
 * source_api.h -- loading a configuration from any location for the checks
 * and comparisons tools ask for.
 */
#ifndef DAL_CORE_SOURCE_API_H
#define DAL_CORE_SOURCE_API_H

#include "config.h"

/* Open location (a file or a store URL), read its document and parse it,
 * as dal_check_config and dal_config_diff do.  On success *out is owned by
 * the caller (config_free). */
int location_load(const char *location, const dal_open_opts_t *opts, dal_config_t **out,
                  dal_error_t *err);

#endif /* DAL_CORE_SOURCE_API_H */
