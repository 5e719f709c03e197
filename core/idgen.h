/*
 * idgen.h -- the ID generator instances of a snapshot ([idgen NAME]
 * sections), drawing IDs from them, and setting up the tables the built-in
 * generators keep in a database.
 *
 * Every [idgen NAME] section names a plugin of kind idgen (plugin = leaf);
 * its other keys are that plugin's parameters.  The set is built with the
 * snapshot and immutable afterwards: lookups need no lock, and drawing IDs
 * is as thread-safe as the plugin's next op (which the SDK requires).
 */
#ifndef DAL_CORE_IDGEN_H
#define DAL_CORE_IDGEN_H

#include "snapshot.h"

typedef struct dal_idgen_set dal_idgen_set_t;
typedef struct dal_idgen dal_idgen_t;

/* Load the plugin of every [idgen] section of s->cfg and create its
 * instance (s is the snapshot being built; plugins may use the host API's
 * query on its datasources).  *out owned by the snapshot; NULL when there
 * are no [idgen] sections.  Errors are "FILE:LINE: ...". */
int dal_idgen_set_build(struct dal_snapshot *s, dal_idgen_set_t **out, dal_error_t *err);
void dal_idgen_set_free(dal_idgen_set_t *set);

/* The generator of section [idgen name] (exact match), or NULL.  set may
 * be NULL.  Valid while the set lives. */
const dal_idgen_t *dal_idgen_find(const dal_idgen_set_t *set, const char *name);

/* Draw n new IDs from g into ids[0..n-1] (increasing within the call).
 * For callers that looked g up once, e.g. per table at snapshot build. */
int dal_idgen_draw(const dal_idgen_t *g, int64_t *ids, size_t n, dal_error_t *err);

/* Draw n new IDs from the generator named name.  DAL_EINVAL if unknown. */
int dal_idgen_next(const dal_idgen_set_t *set, const char *name, int64_t *ids, size_t n,
                   dal_error_t *err);

/*
 * Public calls (implemented in idgen.c; their declarations belong in
 * dal/dal.h, where applications see them).
 */

/* Draw n new unique IDs from the generator of section [idgen NAME] of the
 * running configuration into ids[0..n-1] (caller's array), increasing
 * within the call.  Thread-safe.  DAL_EINVAL for an unknown name; otherwise
 * the generator's error (e.g. its database is down and its buffered IDs
 * are used up). */
DAL_API int dal_next_ids(dal_t *dal, const char *idgen, int64_t *ids, size_t n,
                         dal_error_t *err);

/*
 * Called by dal_setup_idgens once per [idgen] section, in file order.
 * Strings are borrowed for the call.  table is NULL when the generator
 * keeps nothing in a database (then datasource and key are NULL too); key
 * is the row set up (a leaf biz tag), or NULL; created is 1 if the row(s)
 * were added now, 0 if they were there already.
 */
typedef void (*dal_idgen_setup_fn)(void *user, const char *idgen, const char *datasource,
                                   const char *table, const char *key, int created);

/*
 * Create, if missing, what the built-in generators keep in a database: the
 * leaf table and each leaf section's biz tag row (max_id 1, the section's
 * step and description), and the snowflake worker id lease table with its
 * 1024 rows.  Idempotent: existing tables and rows are left as they are.
 * datasource (may be NULL) overrides the datasource of every section.  fn
 * (may be NULL) reports each section.  Stops at the first error.
 */
DAL_API int dal_setup_idgens(dal_t *dal, const char *datasource, dal_idgen_setup_fn fn,
                             void *user, dal_error_t *err);

#endif /* DAL_CORE_IDGEN_H */
