/*
 * rewrite.h -- the physical SQL of one route.
 *
 * The statement's text is copied span by span: logical table names become
 * physical ones (a schema qualifier in front of a sharded table is dropped,
 * since the node's connection already selects the right database), column
 * qualifiers naming a sharded table follow it, dal hints are removed, and
 * each ? becomes its escaped parameter.  Strings and comments are never
 * touched because the edits come from the lexer's token positions.
 */
#ifndef DAL_CORE_REWRITE_H
#define DAL_CORE_REWRITE_H

#include "buf.h"
#include "route.h"

/*
 * Append the SQL of route r of rt to out.  no_backslash_escapes is the
 * target connection's sql_mode (0 for display).  Returns 0 or a DAL_E*
 * code (bad parameter count or value).
 */
int dal_rewrite(const dal_routing_t *rt, size_t r, const dal_value_t *params, size_t nparams,
                int no_backslash_escapes, dal_buf_t *out, dal_error_t *err);

#endif /* DAL_CORE_REWRITE_H */
