/*
 * json.c -- a tiny streaming JSON writer (see json.h).
 */
#include <inttypes.h>
#include <string.h>

#include "json.h"

void json_init(json_t *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->has_items = 0;
    j->after_key = 0;
}

/* Called before every value and key: write the comma that separates it from
 * the previous item at this level, unless it is the value of a key. */
static void json_sep(json_t *j)
{
    uint64_t bit = (uint64_t)1 << (j->depth % JSON_MAX_DEPTH);

    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->has_items & bit)
        fputc(',', j->out);
    j->has_items |= bit;
}

/* A finished top-level value ends the line: output is one JSON text per line. */
static void json_done(json_t *j)
{
    if (j->depth == 0)
        fputc('\n', j->out);
}

static void json_open(json_t *j, int c)
{
    json_sep(j);
    fputc(c, j->out);
    j->depth++;
    j->has_items &= ~((uint64_t)1 << (j->depth % JSON_MAX_DEPTH));
}

static void json_close(json_t *j, int c)
{
    fputc(c, j->out);
    j->depth--;
    json_done(j);
}

void json_object_begin(json_t *j) { json_open(j, '{'); }
void json_object_end(json_t *j) { json_close(j, '}'); }
void json_array_begin(json_t *j) { json_open(j, '['); }
void json_array_end(json_t *j) { json_close(j, ']'); }

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    uint32_t c, min;
    size_t len, i;

    if (n == 0)
        return 0;
    c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, c &= 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, c &= 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, c &= 0x07;
    } else {
        return 0; /* continuation byte, or a lead byte no valid sequence has */
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/* Write the bytes of s as the body of a JSON string.  Valid multi-byte UTF-8
 * passes through unchanged (it is legal in JSON and keeps output readable). */
static void json_escape(FILE *out, const unsigned char *s, size_t len)
{
    size_t i = 0, n;
    uint32_t cp;

    while (i < len) {
        unsigned char c = s[i];

        switch (c) {
        case '"':  fputs("\\\"", out); i++; continue;
        case '\\': fputs("\\\\", out); i++; continue;
        case '\b': fputs("\\b", out); i++; continue;
        case '\f': fputs("\\f", out); i++; continue;
        case '\n': fputs("\\n", out); i++; continue;
        case '\r': fputs("\\r", out); i++; continue;
        case '\t': fputs("\\t", out); i++; continue;
        default: break;
        }
        if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
            i++;
            continue;
        }
        n = utf8_decode(s + i, len - i, &cp);
        if (n == 0) {
            fputs("\\ufffd", out); /* one replacement per bad byte */
            i++;
            continue;
        }
        fwrite(s + i, 1, n, out);
        i += n;
    }
}

void json_key(json_t *j, const char *key)
{
    json_sep(j);
    fputc('"', j->out);
    json_escape(j->out, (const unsigned char *)key, strlen(key));
    fputs("\":", j->out);
    j->after_key = 1;
}

void json_stringn(json_t *j, const char *s, size_t len)
{
    json_sep(j);
    fputc('"', j->out);
    json_escape(j->out, (const unsigned char *)s, len);
    fputc('"', j->out);
    json_done(j);
}

void json_string(json_t *j, const char *s)
{
    if (s == NULL)
        json_null(j);
    else
        json_stringn(j, s, strlen(s));
}

void json_int(json_t *j, int64_t v)
{
    json_sep(j);
    fprintf(j->out, "%" PRId64, v);
    json_done(j);
}

void json_uint(json_t *j, uint64_t v)
{
    json_sep(j);
    fprintf(j->out, "%" PRIu64, v);
    json_done(j);
}

void json_null(json_t *j)
{
    json_sep(j);
    fputs("null", j->out);
    json_done(j);
}

void json_bool(json_t *j, int v)
{
    json_sep(j);
    fputs(v ? "true" : "false", j->out);
    json_done(j);
}
