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
int idgen_set_build(struct dal_snapshot *s, dal_idgen_set_t **out, dal_error_t *err);
void idgen_set_free(dal_idgen_set_t *set);

/* The generator of section [idgen name] (exact match), or NULL.  set may
 * be NULL.  Valid while the set lives. */
const dal_idgen_t *idgen_find(const dal_idgen_set_t *set, const char *name);

/* Draw n new IDs from g into ids[0..n-1] (increasing within the call).
 * For callers that looked g up once, e.g. per table at snapshot build. */
int idgen_draw(const dal_idgen_t *g, int64_t *ids, size_t n, dal_error_t *err);

/* Draw n new IDs from the generator named name.  DAL_EINVAL if unknown. */
int idgen_next(const dal_idgen_set_t *set, const char *name, int64_t *ids, size_t n,
               dal_error_t *err);

/*
 * Public calls (implemented in idgen.c; their declarations belong in
 * dal/dal.h, where applications see them).
 */

/* dal_next_ids and dal_setup_idgens are public: see dal/dal.h. */

/* dal_setup_idgens on snap (borrowed): create what the ID generators keep
 * in a database, on datasource (or each generator's own when NULL). */
int idgen_setup(dal_snapshot_t *snap, const char *datasource, dal_idgen_setup_fn fn,
                void *user, dal_error_t *err);

#endif /* DAL_CORE_IDGEN_H */
