/*
 * host.h -- the dal_host_api_t table handed to plugins.
 */
#ifndef DAL_CORE_HOST_H
#define DAL_CORE_HOST_H

#include "dal/plugin.h"

/* The static host API table (valid for the life of the process). */
const dal_host_api_t *dal_host_api(void);

#endif /* DAL_CORE_HOST_H */
