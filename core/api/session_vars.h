/*
 * session_vars.h -- the session variables a dal session keeps
 * (dal_session_set_var): name = value pairs in the order of their last
 * assignment, the charset and collation of SET NAMES, and the SET
 * statement the pool applies to each connection the session takes.  Plain
 * data of its session; not thread-safe.
 */
#ifndef DAL_CORE_SESSION_VARS_H
#define DAL_CORE_SESSION_VARS_H

#include <stddef.h>

#include "dal/dal.h"
#include "conn.h"

/* What dal_session_set_var has set: name = value pairs (names lower-cased,
 * values as SQL) and the charset of SET NAMES; conn is what the pool
 * applies, pointing into the rest. */
typedef struct session_vars {
    char **names, **values;  /* owned, n each */
    size_t n;
    char *set_sql;           /* owned: "SET SESSION a = v, ...", or NULL when n == 0 and
                                collation is NULL */
    char *charset;           /* owned, or NULL */
    char *collation;         /* owned: SET NAMES charset COLLATE collation, or NULL */
    dal_conn_vars_t conn;
} session_vars_t;

/* A variable name: a letter or '_', then letters, digits, '_'; at most 64. */
int vars_name_ok(const char *name);

/* Free what v owns and zero it. */
void vars_free(session_vars_t *v);

/* The SET statement of v's pairs into set_sql, and conn pointing at it:
 * 0 or DAL_ENOMEM. */
int vars_build(session_vars_t *v);

/* v with name set to value (both copied), moved to the end if present,
 * else added there: 0 or DAL_ENOMEM. */
int vars_put(session_vars_t *v, const char *name, const char *value);

/* to (uninitialised) a copy of from's pairs and charset, not built:
 * 0 or DAL_ENOMEM (to is then to be freed). */
int vars_copy(const session_vars_t *from, session_vars_t *to);

/* v without name, if it has it. */
void vars_drop(session_vars_t *v, const char *name);

/* SET NAMES's value, `charset [COLLATE collation]` (each quoted or not),
 * into v, replacing the charset variables it sets. */
int vars_names(session_vars_t *v, const char *value, dal_error_t *err);

/* The literal a variable read back from a server keeps: r's column col in
 * its current row as NULL, a number as the server wrote it, or a string
 * quoted ('...', or X'...' when it holds a quote, a backslash or a byte
 * outside printable ASCII, which reads the same in any sql_mode and
 * charset).  Owned by the caller; NULL when out of memory. */
char *vars_literal(dal_result_t *r, size_t col);

/* value without one pair of surrounding quotes, into buf (cap bytes):
 * buf, or value itself when it has none. */
const char *vars_unquote(const char *value, char *buf, size_t cap);

/* autocommit's values, as the server takes them: 1 or 0, -1 for neither. */
int vars_autocommit(const char *value);

#endif /* DAL_CORE_SESSION_VARS_H */
