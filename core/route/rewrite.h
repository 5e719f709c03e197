/*
 * rewrite.h -- every edit of SQL text: lists of edits, and the physical SQL
 * of one route.
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

#include <stdint.h>

#include "buf.h"
#include "route.h"

/* ------------------------------------------------------- edits of text */

/* Replace text [off, off+len) by text; len 0 inserts at off.  The edits of
 * one list never overlap and are sorted by offset (edits_sort); a ?
 * placeholder inside a replaced span is consumed by the edit (its value is
 * already in text). */
typedef struct dal_edit {
    uint32_t off, len;
    char *text;              /* owned by the list (edits_clear frees it) */
} dal_edit_t;

typedef struct dal_edits {
    dal_edit_t *items;       /* owned */
    size_t n;
} dal_edits_t;

/* Append an edit; text is transferred (freed on failure); NULL text (a
 * failed allocation upstream) fails too.  0, or -1: no memory. */
int edits_add(dal_edits_t *e, uint32_t off, uint32_t len, char *text);
/* Free every edit's text and the list; e may be NULL. */
void edits_clear(dal_edits_t *e);
/* By offset; at one offset an insertion before a replacement. */
void edits_sort(dal_edits_t *e);
/* Fold an insertion into the edit starting at its offset, so no two edits
 * share an offset.  0, or -1: no memory. */
int edits_coalesce(dal_edits_t *e);

/* Append text[0..len) with the n sorted edits e (borrowed) applied to out. */
void rewrite_text(const char *text, size_t len, const dal_edit_t *e, size_t n,
                  dal_buf_t *out);


/*
 * Append the SQL of route r of rt to out.  no_backslash_escapes is the
 * target connection's sql_mode (0 for display).  Returns 0 or a DAL_E*
 * code (bad parameter count or value).
 */
int rewrite_route(const dal_routing_t *rt, size_t r, const dal_value_t *params, size_t nparams,
                  int no_backslash_escapes, dal_buf_t *out, dal_error_t *err);

/* Where a server-side template's ? come from: order[k] is the statement's
 * parameter index of the template's k-th ?. */
typedef struct dal_template {
    uint32_t *order;         /* borrowed room for cap entries */
    size_t n, cap;
} dal_template_t;

/*
 * Append route r's SQL to out as rewrite_route does, but with each ? kept
 * (and its parameter recorded in tpl) and without the trace comment: the
 * text a server prepares once and runs with bound values.  nparams must
 * be the statement's.  0 or a DAL_E* code (DAL_EUNSUPPORTED: more ? than
 * tpl->cap).
 */
int rewrite_route_template(const dal_routing_t *rt, size_t r, size_t nparams, dal_buf_t *out,
                           dal_template_t *tpl, dal_error_t *err);

/* ------------------------------------------------- LOCK TABLES by node */

/*
 * sql is `LOCK TABLE[S] t [[AS] alias] lock_type, ...` naming a configured
 * table that does not live wholly on the default datasource: out gets the
 * LOCK TABLES statement for node, each listed table's physical tables on
 * node with the item's alias and lock type as written (a table not
 * configured goes to the default datasource as written), and stays empty
 * when node holds none; returns 0 (rewrite_lock.c).  Returns 1, out empty,
 * when sql is anything else or a list dal does not read (it then runs as
 * written, route_check.c's rules); DAL_ENOMEM.
 */
int rewrite_lock_tables(const dal_snapshot_t *snap, const dal_sql_t *sql, const dal_node_t *node,
                        dal_buf_t *out, dal_error_t *err);

/* sql is `UNLOCK TABLE[S]`. */
int rewrite_is_unlock_tables(const dal_sql_t *sql);

#endif /* DAL_CORE_REWRITE_H */
