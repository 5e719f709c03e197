/*
 * schema_text.h -- the text of information_schema.COLUMNS as COM_FIELD_LIST
 * needs it: a column's default in the table's default row, and LIKE's
 * matching of the wildcard a client sends.  Pure functions of strings, no
 * session or I/O, so they are unit-tested and fuzzed on their own
 * (fuzz/fuzz_schema.c); proxy/schema.c runs the queries and sends the
 * answer.
 *
 * Every string is borrowed for the call and NUL-ended; the text comes
 * from a server (or a client, for the wildcard) and any bytes are
 * accepted.
 */
#ifndef DAL_PROXY_SCHEMA_TEXT_H
#define DAL_PROXY_SCHEMA_TEXT_H

#include <stdbool.h>

#include "protocol.h"

/* Whether s matches the LIKE pattern p .. end (not NUL-ended), without
 * case: % any run, _ one character, \ escapes. */
bool schema_like(const char *p, const char *end, const char *s);

/*
 * A column's default as a server sends it in COM_FIELD_LIST, appended to b;
 * false when it is NULL (or b ran out of memory).  col is the column's
 * definition from the server; nullable, def and type are its IS_NULLABLE,
 * COLUMN_DEFAULT and COLUMN_TYPE from information_schema.COLUMNS, each
 * NULL when the server sent NULL.
 */
bool schema_default(proto_buf_t *b, const proto_column_t *col, const char *nullable,
                    const char *def, const char *type);

#endif
