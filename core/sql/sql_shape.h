/*
 * sql_shape.h -- a text statement's shape: its text with the literals it
 * compares with columns taken out, so that statements differing only in
 * those literals share one analysis (the analysis of the shape, with a ?
 * where each literal was), the literals bound per execution.
 *
 * Which literals are taken out is decided from the tokens alone, before
 * any analysis: a string or number right after = < > <= >=, in the list
 * of IN ( ... ), or around the AND of BETWEEN.  Whether the shape may then
 * stand for the statement is decided once per shape, on its analysis
 * (sql_shape_usable): only when each ? is where dal either routes by it
 * (a condition's value, bound as routing takes the literal) or reads
 * nothing of it (the rest of WHERE, ON, an UPDATE's SET), never where dal
 * reads or copies the text (select list, GROUP BY, ORDER BY, HAVING,
 * LIMIT).  Everything else -- LIMIT counts, ORDER BY positions, INTERVAL
 * units, negative numbers, NULL/TRUE/FALSE, literals in the select list
 * -- stays in the shape as written, so statements differing there have
 * different shapes.
 */
#ifndef DAL_CORE_SQL_SHAPE_H
#define DAL_CORE_SQL_SHAPE_H

#include "sql.h"

/* At most this many literals are taken out of one statement; a statement
 * with more keeps its exact text. */
#define SQL_SHAPE_MAX_LITS 16

/* One literal taken out: its span in the statement's text and its token
 * type (DAL_TOK_STRING or DAL_TOK_NUMBER). */
typedef struct sql_shape_lit {
    uint32_t off, len;
    dal_tok_type_t type;
} sql_shape_lit_t;

/* The shape of sql[0..len) (borrowed), read in the mode no_backslash
 * (lex_init), into out[0..cap) (owned by the
 * caller; NUL-terminated) with its length in *outlen, and the literals
 * taken out, in text order, into lits (SQL_SHAPE_MAX_LITS of them).
 * Returns their number: 0 when the statement has no shape of its own
 * (no literal to take out, a ? of its own, a lexing error, more literals
 * than lits holds, or a text that does not fit out). */
size_t sql_shape_text(const char *sql, size_t len, int no_backslash, char *out, size_t cap,
                      size_t *outlen, sql_shape_lit_t *lits);

/* Whether s, the analysis of a shape, may stand for the statements of
 * that shape: a SELECT, UPDATE or DELETE with no dal hint, no session
 * state (pins, @@autocommit) and nothing dal does not analyse, none of
 * whose ? is in the select list, GROUP BY, HAVING, ORDER BY or LIMIT.
 * Judged on first use and kept with s.  s is borrowed. */
int sql_shape_usable(const dal_sql_t *s);

#endif /* DAL_CORE_SQL_SHAPE_H */
