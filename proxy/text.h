/*
 * text.h -- what the proxy reads in a statement's text to find the
 * statements it answers itself (SET, USE, KILL, SHOW WARNINGS, SHOW
 * TABLES, ...).  No state; any thread.
 */
#ifndef DAL_PROXY_TEXT_H
#define DAL_PROXY_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A statement's first word, among those that start a statement the proxy
 * may answer itself: one reading of it tells which of the recognisers can
 * apply (each still reads the whole statement). */
typedef enum text_lead {
    TEXT_OTHER,     /* none of these, or a statement that starts with a comment */
    TEXT_SELECT,
    TEXT_SHOW,
    TEXT_SET,
    TEXT_USE,
    TEXT_KILL,
    TEXT_DESCRIBE,  /* DESC or DESCRIBE */
    TEXT_FLUSH
} text_lead_t;

/* sql's first word (after spaces), by text_word_is's rule of a word; when
 * it is one of these and past is not NULL, *past is just after it. */
text_lead_t text_lead(const char *sql, const char **past);
/* Skip spaces and the keyword w (any case, a whole word) at *p: true and
 * *p past it, or false and *p past the spaces only. */
bool text_word_is(const char **p, const char *w);
/* In a scan of a text ending at end, p a byte inside the quote *q (', "
 * or `): where the scan goes on from -- the escaped byte after a backslash,
 * in ' and " unless no_backslash (NO_BACKSLASH_ESCAPES) -- and *q 0 when
 * p closes the quote. */
const char *text_quoted(const char *p, const char *end, char *q, bool no_backslash);
/* p past spaces (the C locale's isspace). */
const char *text_blanks(const char *p);
/* sql is only spaces, `;` and comments (not executable comments, which
 * start with ! or M!): a server answers it with OK, also as a prepared
 * statement. */
bool text_only_comments(const char *sql);
/* A copy of text[0..len) (which may hold NUL bytes) with a NUL after it,
 * owned by the caller; NULL when out of memory. */
char *text_copy(const char *text, size_t len);

#endif /* DAL_PROXY_TEXT_H */
