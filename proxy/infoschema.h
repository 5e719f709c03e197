/*
 * infoschema.h -- the references to information_schema.TABLES, COLUMNS,
 * STATISTICS, SESSION_VARIABLES, GLOBAL_STATUS and SESSION_STATUS in a
 * statement's text (infoschema_scan.c), which infoschema.c replaces by
 * derived tables over the logical tables, the session's own autocommit
 * and the proxy's own client counts.
 */
#ifndef DAL_PROXY_INFOSCHEMA_H
#define DAL_PROXY_INFOSCHEMA_H

#include <stdbool.h>
#include <stddef.h>

/* One reference `information_schema.VIEW` (any case, bare or quoted, with
 * blanks or comments around the dot), or a call DATABASE() or SCHEMA(),
 * which the servers would answer with their own schema. */
typedef struct infoschema_ref {
    size_t off, len;  /* its span in the text */
    int view;         /* INFOSCHEMA_* */
    bool aliased;     /* an alias follows (`AS t`, or a word that starts no clause) */
} infoschema_ref_t;

enum {
    INFOSCHEMA_TABLES, INFOSCHEMA_COLUMNS, INFOSCHEMA_STATISTICS, INFOSCHEMA_SESSION_VARIABLES,
    INFOSCHEMA_GLOBAL_STATUS, INFOSCHEMA_SESSION_STATUS,
    INFOSCHEMA_DATABASE  /* a call DATABASE() or SCHEMA(): the proxy's schema */
};

/* The first max references of sql (len bytes, as a server reads it:
 * executable comments opened; NUL bytes only inside strings and comments,
 * a NUL after the text; a backslash escaping nothing when no_backslash, the
 * sql_mode NO_BACKSLASH_ESCAPES) outside strings and comments, in text
 * order, into refs: their number.  A three-part name's `information_schema`
 * (a column qualifier after a dot) is none. */
size_t infoschema_find(const char *sql, size_t len, bool no_backslash, infoschema_ref_t *refs,
                       size_t max);

/* "TABLES", "COLUMNS", "STATISTICS", "SESSION_VARIABLES",
 * "GLOBAL_STATUS" or "SESSION_STATUS" (static), for a view. */
const char *infoschema_view_name(int view);

#endif
