/*
 * plugin_load.h -- finding, loading and checking plugin files, and validating
 * their parameters.
 *
 * A plugin of kind K named N is the file K_N.so in one of the directories of
 * the plugin path (a colon-separated list, searched in order).  A file is
 * only used after every check passes; on any failure it is dlclose()d and
 * the error names the file and what was wrong.  Loaded libraries are
 * reference counted: each instance made from one holds a reference, so a
 * .so is never unloaded while an instance of it lives.
 */
#ifndef DAL_CORE_PLUGIN_LOAD_H
#define DAL_CORE_PLUGIN_LOAD_H

#include <stdatomic.h>
#include <stddef.h>

#include "config.h"
#include "dal/plugin.h"

typedef struct dal_plugin_lib {
    char *path;                 /* owned */
    void *handle;               /* dlopen handle, owned */
    const dal_plugin_t *desc;   /* static data inside the .so; valid while loaded */
    atomic_int refs;
} dal_plugin_lib_t;

/* "shard", "idgen", "pool", "monitor", or NULL for an unknown kind. */
const char *plugin_kind_name(int kind);

/*
 * Find K_N.so on the plugin path and load it.  On success *out holds one
 * reference (plugin_lib_unref).  Errors (DAL_EPLUGIN): not found (names
 * every directory searched), found in two directories (duplicate), and every
 * check of plugin_lib_load.
 */
int plugin_find(const char *plugin_path, dal_plugin_kind_t kind, const char *name,
                dal_plugin_lib_t **out, dal_error_t *err);

/*
 * Load one file and check it is a plugin of the kind and name its file name
 * says (K_N.so).  On success *out holds one reference.
 */
int plugin_lib_load(const char *path, dal_plugin_lib_t **out, dal_error_t *err);

void plugin_lib_ref(dal_plugin_lib_t *lib);
/* Drop a reference; the last one dlclose()s the file.  NULL is a no-op. */
void plugin_lib_unref(dal_plugin_lib_t *lib);

/*
 * Check the INI keys "role.NAME" kept in cfg against the plugin's declared
 * parameters and convert them.  Undeclared keys, mistyped values and missing
 * required ones are DAL_ECONFIG errors "FILE:LINE: ..." (FILE is file, LINE
 * the key's line, or section_line for a missing key).  On success *out is
 * owned by the caller (plugin_params_free).
 */
int plugin_params_build(const dal_plugin_lib_t *lib, const char *role,
                        const dal_cfg_params_t *cfg, const char *file, int section_line,
                        dal_plugin_params_t **out, dal_error_t *err);
void plugin_params_free(dal_plugin_params_t *p);

/* Getters behind the host API's param_* entries (see dal/plugin.h). */
int params_is_set(const dal_plugin_params_t *p, const char *name);
const char *params_string(const dal_plugin_params_t *p, const char *name);
int64_t params_int(const dal_plugin_params_t *p, const char *name);
int params_bool(const dal_plugin_params_t *p, const char *name);
double params_double(const dal_plugin_params_t *p, const char *name);
int64_t params_duration_ms(const dal_plugin_params_t *p, const char *name);
size_t params_int_list(const dal_plugin_params_t *p, const char *name, const int64_t **vals);
size_t params_string_list(const dal_plugin_params_t *p, const char *name,
                          const char *const **vals);

/* The host API table every plugin instance is created with.  It lives in
 * host.c, which calls into execution, pools and monitors; the modules that
 * create instances sit below those, so the table is registered once by the
 * library's initialisation instead of being included.  Borrowed, static. */
void plugin_set_host_api(const dal_host_api_t *api);
const dal_host_api_t *plugin_host_api(void);

#endif /* DAL_CORE_PLUGIN_LOAD_H */
