/*
 * json.h -- a tiny streaming JSON writer for the dal program.
 *
 * Every --json output of `dal` goes through this writer, so quoting and
 * comma placement live in one place.  It writes compact JSON (one line) and
 * ends each top-level value with a newline, so a caller never prints
 * separators itself:
 *
 *     json_t j;
 *     json_init(&j, stdout);
 *     json_object_begin(&j);
 *     json_key(&j, "version");
 *     json_string(&j, dal_version());
 *     json_object_end(&j);          -> {"version":"0.1.0"}\n
 *
 * The writer trusts its caller to nest correctly (a key only inside an
 * object, each key followed by one value); that is a programming error, not
 * an input error, so it is not checked at run time.
 */
#ifndef DAL_TOOLS_JSON_H
#define DAL_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deeper nesting than this is not needed by any dal output. */
#define JSON_MAX_DEPTH 64

typedef struct json {
    FILE *out;          /* borrowed */
    unsigned depth;     /* open objects/arrays */
    uint64_t has_items; /* bit d: level d already holds a value (needs a comma) */
    int after_key;      /* a key was just written: the next value takes no comma */
} json_t;

void json_init(json_t *j, FILE *out);

void json_object_begin(json_t *j);
void json_object_end(json_t *j);
void json_array_begin(json_t *j);
void json_array_end(json_t *j);

/* An object key; must be followed by exactly one value. */
void json_key(json_t *j, const char *key);

/* String values.  Quotes, backslashes and control characters are escaped;
 * bytes that are not valid UTF-8 become U+FFFD, so the output is always
 * valid JSON whatever the server sent.  s may contain NUL bytes (json_stringn).
 * json_string(j, NULL) writes null. */
void json_string(json_t *j, const char *s);
void json_stringn(json_t *j, const char *s, size_t len);

void json_int(json_t *j, int64_t v);
void json_uint(json_t *j, uint64_t v);
void json_null(json_t *j);
void json_bool(json_t *j, int v);

/*
 * Decode one UTF-8 sequence at s (n bytes available).  Returns its length
 * (1-4) and sets *cp, or 0 if the bytes there are not valid UTF-8 (overlong
 * forms, surrogates and values above U+10FFFF are invalid).  Exported because
 * the table printer measures display width with the same rules.
 */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

#endif /* DAL_TOOLS_JSON_H */
