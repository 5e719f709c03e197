/*
 * fake_host.h -- a stand-in for dal's plugin host, for unit tests.
 *
 * Plugins see the host only through dal_host_api_t, so a test can load a
 * plugin .so and drive it without libdal: parameters come from a small
 * array of name/value texts (parsed by type as the INI loader would), log
 * lines are collected in a buffer, and the database services (query,
 * connections) answer DAL_EUNSUPPORTED.
 *
 * Not thread-safe: one test thread uses one fake host.  Nothing here is
 * exported by libdal; names start with fake_ so they cannot clash with it.
 */
#ifndef DAL_TESTS_FAKE_HOST_H
#define DAL_TESTS_FAKE_HOST_H

#include <stddef.h>

#include <dal/plugin.h>

/* One parameter as it would appear after "strategy." in the INI file. */
typedef struct fake_param {
    const char *name;      /* "bounds" */
    dal_param_type_t type; /* 0: take the type from the spec */
    const char *value;     /* INI text: "0, 100, 200" */
} fake_param_t;

/*
 * Parse items into a parameter set (owned by the caller, free with
 * fake_params_free).  With a spec (a plugin descriptor's params; may be
 * NULL) it checks like dal's loader: every item declared and of the declared
 * type, required ones present, defaults applied to the rest.  Returns NULL
 * with err filled (DAL_ECONFIG) on a bad item, DAL_ENOMEM on no memory.
 */
dal_plugin_params_t *fake_params_new(const dal_param_spec_t *spec, const fake_param_t *items,
                                     size_t n, dal_error_t *err);
void fake_params_free(dal_plugin_params_t *p);
/* How many times a getter was asked for a name not in the set (and, with a
 * spec, not declared): a plugin reading what it never declared. */
unsigned fake_params_misses(const dal_plugin_params_t *p);

/* The host API table (static). */
const dal_host_api_t *fake_host_api(void);

/* A host context collecting log lines as "level: message\n".  Owned by the
 * caller, free with fake_host_free. */
dal_host_t *fake_host_new(void);
void fake_host_free(dal_host_t *h);
/* All lines logged so far (borrowed, valid until the next log or free). */
const char *fake_host_log_text(const dal_host_t *h);

/* A plugin opened with fake_plugin_open. */
typedef struct fake_plugin {
    void *handle;             /* from dlopen; owned */
    const dal_plugin_t *desc; /* borrowed from the .so, valid until fake_plugin_close */
} fake_plugin_t;

/* Put "<dir>/<kind>_<name>.so" into buf.  Returns 0, or -1 if it does not fit. */
int fake_plugin_path(char *buf, size_t cap, const char *dir, dal_plugin_kind_t kind,
                     const char *name);

/*
 * dlopen(RTLD_NOW | RTLD_LOCAL) the plugin at path, call its entry point and
 * check the descriptor: ABI version, struct sizes, the expected kind and
 * name, the parameter specs and the ops table.  On success out is filled
 * (close with fake_plugin_close); on failure the .so is closed and err says
 * what was wrong, naming path (DAL_EPLUGIN).
 */
int fake_plugin_open(const char *path, dal_plugin_kind_t kind, const char *name,
                     fake_plugin_t *out, dal_error_t *err);
void fake_plugin_close(fake_plugin_t *p);

#endif /* DAL_TESTS_FAKE_HOST_H */
