/*
 * value.h -- dal_value_t as SQL text.
 *
 * Parameters are interpolated into the physical SQL on the client, so the
 * escaping here is what keeps a value inside its literal.  It relies on the
 * connection charset being one where byte 0x5C ('\') never occurs inside a
 * multi-byte character (utf8mb4, utf8mb3, latin1, ascii, binary): url.c only
 * accepts those, which rules out the GBK/SJIS escaping attacks.
 */
#ifndef DAL_CORE_VALUE_H
#define DAL_CORE_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "dal/dal.h"

/*
 * Append v as an SQL literal.  no_backslash_escapes is the server's
 * NO_BACKSLASH_ESCAPES mode, which changes how quotes must be escaped.
 * Returns 0, or DAL_EINVAL for a value with no SQL form (NaN, infinity,
 * unknown type) with err filled.
 */
int value_append_sql(dal_buf_t *b, const dal_value_t *v, int no_backslash_escapes,
                     dal_error_t *err);

/* Short human-readable form for messages: 42, 'abc', NULL; long strings
 * are cut with "...".  Returns out. */
const char *value_describe(const dal_value_t *v, char *out, size_t cap);

/*
 * v as a row count (a LIMIT or OFFSET operand): an INT that is not
 * negative, a UINT, or a STRING whose whole text is a decimal integer that
 * fits in uint64_t -- digits only, no sign, no blanks, not empty (a client
 * library may send every parameter as text).  Stores it in *out and
 * returns 0; anything else (NULL, DOUBLE, BLOB, other text) returns -1 and
 * leaves *out alone.  v is borrowed.
 */
int value_as_count(const dal_value_t *v, uint64_t *out);

#endif /* DAL_CORE_VALUE_H */
