/*
 * parse.h -- the values of configuration text: integers, durations,
 * booleans, as the INI file, URL options and plugin parameters write them.
 * The lowest layer: uses nothing of dal's.
 */
#ifndef DAL_CORE_PARSE_H
#define DAL_CORE_PARSE_H

#include <stdint.h>

/* s after any blanks and tabs. */
const char *parse_skip_blanks(const char *s);

/*
 * Parse a duration ("250ms", "5s", "2m", "1h", bare number = seconds) into
 * milliseconds.  Returns 0 or -1.  Shared with plugin parameter checking.
 */
int parse_duration_ms(const char *text, int64_t *out_ms);

/* Strict signed 64-bit decimal (surrounding blanks allowed).  0 or -1. */
int parse_int64(const char *text, int64_t *out);

/* true/false, yes/no, on/off, 1/0 (case-insensitive).  0 or -1. */
int parse_bool(const char *text, int *out);

#endif /* DAL_CORE_PARSE_H */
