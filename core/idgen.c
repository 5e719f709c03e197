/*
 * idgen.c -- the ID generator instances of a snapshot.
 *
 * (Placeholder until the ID generator work lands: no [idgen] section is
 * accepted by the loader yet.)
 */
#include <stdlib.h>

#include "error.h"
#include "idgen.h"

struct dal_idgen_set {
    int unused;
};

int dal_idgen_set_build(struct dal_snapshot *s, dal_idgen_set_t **out, dal_error_t *err)
{
    *out = NULL;
    if (s->cfg->nidgens > 0)
        return dal_err_set(err, DAL_EUNSUPPORTED, "%s:%d: [idgen] sections are not supported yet",
                           s->cfg->path, s->cfg->idgens[0].line);
    return 0;
}

void dal_idgen_set_free(dal_idgen_set_t *set)
{
    free(set);
}

int dal_idgen_next(const dal_idgen_set_t *set, const char *name, int64_t *ids, size_t n,
                   dal_error_t *err)
{
    (void)set;
    (void)ids;
    (void)n;
    return dal_err_set(err, DAL_EINVAL, "unknown ID generator '%s'", name);
}
