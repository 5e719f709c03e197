/*
 * idgen.h -- the ID generator instances of a snapshot ([idgen NAME]
 * sections), and filling generated IDs into INSERTs.
 */
#ifndef DAL_CORE_IDGEN_H
#define DAL_CORE_IDGEN_H

#include "snapshot.h"

typedef struct dal_idgen_set dal_idgen_set_t;

/* Load the plugin of every [idgen] section of s->cfg and create its
 * instance (s is the snapshot being built; plugins may use the host API's
 * query on its datasources).  *out owned by the snapshot.  Errors are
 * "FILE:LINE: ...". */
int dal_idgen_set_build(struct dal_snapshot *s, dal_idgen_set_t **out, dal_error_t *err);
void dal_idgen_set_free(dal_idgen_set_t *set);

/* Draw n new IDs from the generator named name.  DAL_EINVAL if unknown. */
int dal_idgen_next(const dal_idgen_set_t *set, const char *name, int64_t *ids, size_t n,
                   dal_error_t *err);

#endif /* DAL_CORE_IDGEN_H */
