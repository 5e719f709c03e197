/*
 * explain.h -- dal_plan_t: the routes of a statement, for `dal explain`.
 */
#ifndef DAL_CORE_EXPLAIN_H
#define DAL_CORE_EXPLAIN_H

#include "route.h"

/* Describe every route of rt, parameters inlined.  *out owned by the caller. */
int explain_build(const dal_routing_t *rt, const dal_value_t *params, size_t nparams,
                  dal_plan_t **out, dal_error_t *err);

/* Put the routes of first (consumed) in front of p's, as the steps
 * named step (static: "lookup") that run before them.  Fails only for
 * want of memory, leaving p as it was and freeing first. */
int explain_prepend(dal_plan_t *p, dal_plan_t *first, const char *step, dal_error_t *err);

#endif /* DAL_CORE_EXPLAIN_H */
