/*
 * charset.h -- the character sets dal refuses as a client's.
 *
 * dal reads a client's SQL byte by byte (sql_lex.c) and escapes values
 * byte by byte (value.c): a quote or backslash byte is one wherever it
 * is.  In big5, cp932, gbk, gb18030 and sjis the second byte of a
 * two-byte character may be 0x5C (backslash) -- `\xbf\x5c` is one gbk
 * character -- so the server would read `\xbf\' ...` as a character and a
 * closing quote where dal reads an escaped quote: a parameter escapes its
 * quotes, a statement is routed by what dal read and run as the server
 * reads it.  ucs2, utf16, utf16le and utf32 put any byte anywhere.  Every
 * other character set a server knows has no such byte inside a character
 * (single-byte ones, utf8mb3/utf8mb4 and the EUC ones, whose trailing
 * bytes are 0x80 and above).
 */
#ifndef DAL_CORE_CHARSET_H
#define DAL_CORE_CHARSET_H

#include <stddef.h>

#include "dal/dal.h"

/* ER_UNKNOWN_CHARACTER_SET: what a refused character set is, to a client */
#define CHARSET_REFUSED_ERRNO 1115
#define CHARSET_REFUSED_STATE "42000"

/* The name of collation number id as the client library knows it, and in
 * *charset (may be NULL) its character set's; both static.  NULL for a
 * number it does not know (dal_collation_name). */
const char *charset_collation(unsigned int id, const char **charset);

/* Whether the character set named name (n bytes, any case) is one dal
 * refuses as a client's. */
int charset_unsafe(const char *name, size_t n);

/* Whether collation number id belongs to such a character set. */
int charset_id_unsafe(unsigned int id);

/* Whether the variable name (any case) sets the character set the server
 * reads a client's statements in: character_set_client, or SET NAMES's
 * and SET CHARACTER SET's "names" / "character set" / "charset". */
int charset_is_client_var(const char *name, size_t n);

/* value_sql as a SET of the client's character set gives it (a name,
 * quoted or not, or a collation's number): 0 when dal takes it, else
 * err set to ER_UNKNOWN_CHARACTER_SET (code DAL_EINVAL) and that code.  A
 * value that is an expression is refused too: only the server could say
 * what it gives.  DEFAULT is taken (the server's global character set). */
int charset_check_value(const char *value_sql, dal_error_t *err);

/* SET NAMES's value, `charset [COLLATE collation]` (each quoted or not):
 * 0 when dal takes its character set, else as charset_check_value. */
int charset_check_names(const char *value, dal_error_t *err);

/* err set to the refusal of value_sql, an expression, as the client's
 * character set; DAL_EINVAL. */
int charset_refuse_expression(const char *value_sql, dal_error_t *err);

/* err set to the refusal of character set name (n bytes); DAL_EINVAL. */
int charset_refuse(const char *name, size_t n, dal_error_t *err);

#endif /* DAL_CORE_CHARSET_H */
