/*
 * source.h -- where the configuration document comes from.
 *
 * A location is either a file path, served by the file source built into
 * the library (source_file.c), or "SCHEME://REST[?OPTIONS]", served by the
 * source plugin of that scheme (dal/plugin.h, "source kind").  Both are
 * driven through the same dal_source_ops_t, so dal_open, dal_reload, `dal
 * check` and `dal diff` treat every source alike; only this module knows
 * there is a difference.
 *
 * The option "cache=PATH" belongs to the host, whatever the source: every
 * accepted document is written there atomically, and a start while the
 * source cannot be reached (DAL_ECONNECT) runs from it with a warning.
 */
#ifndef DAL_CORE_SOURCE_H
#define DAL_CORE_SOURCE_H

#include <stdint.h>

#include "config.h"
#include "log.h"
#include "plugin_load.h"
#include "snapshot.h"

struct dal_source {
    const dal_source_ops_t *ops; /* borrowed: static data of the plugin or the library */
    void *inst;                  /* owned (ops->destroy) */
    dal_plugin_lib_t *lib;       /* one reference; NULL for the built-in file source */
    dal_plugin_params_t *params; /* owned; the options; NULL for a file */
    dal_logger_t log;            /* a copy of the opener's */
    dal_host_t host;             /* the instance's host context; log points at ours */
    char *display;               /* owned: the location without its options, for messages */
    char *cache;                 /* owned: the cache file; NULL: none */
    int watching;                /* ops->watch succeeded and unwatch is still due */
};

typedef struct dal_source dal_source_t;

/* Non-zero if location names a store ("SCHEME://...") rather than a file. */
int source_is_url(const char *location);

/*
 * Find the source for location and create its instance.  plugin_dir is the
 * application's override (NULL: $DAL_PLUGIN_DIR, else the built-in
 * directory: a document's own [dal] plugin_dir cannot say where to read
 * the document from).  On success *out is owned by the caller
 * (source_close).  Nothing is read or connected to yet.
 */
int source_open(const char *location, const char *plugin_dir, const dal_logger_t *log,
                dal_source_t **out, dal_error_t *err);
/* Unwatch, destroy the instance, unload the plugin.  NULL is a no-op. */
void source_close(dal_source_t *s);

/* The location without options: what messages and logs may show. */
const char *source_display(const dal_source_t *s);

/*
 * Read the version at revision (0: the newest) and parse it.  With
 * use_cache, a source that cannot be reached falls back to the cache file
 * (a warning is logged, *from_cache set, doc zeroed).  On success *out is
 * owned by the caller and *doc is the version read (its strings belong to
 * the source and last until its next read).
 */
int source_load(dal_source_t *s, int64_t revision, int use_cache, dal_config_t **out,
                dal_source_doc_t *doc, int *from_cache, dal_error_t *err);

/* Read the raw document (revision 0: newest).  doc's strings belong to the
 * source and last until its next read. */
int source_read(dal_source_t *s, int64_t revision, dal_source_doc_t *doc, dal_error_t *err);

/* Keep doc as the last good document in the cache file, atomically (a
 * temporary file renamed over it); a failure is logged, not returned:
 * it must not undo a reload already in force. */
void source_cache_store(dal_source_t *s, const dal_source_doc_t *doc);

/* Whether the source can watch, and start / stop it (dal/plugin.h). */
int source_can_watch(const dal_source_t *s);
int source_watch(dal_source_t *s, int64_t after_revision, const dal_source_sink_t *sink,
                 dal_error_t *err);
void source_unwatch(dal_source_t *s);

/* The built-in file source (source_file.c): location is a path. */
const dal_source_ops_t *source_file_ops(void);

#endif /* DAL_CORE_SOURCE_H */
