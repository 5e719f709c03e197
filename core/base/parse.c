/*
 * parse.c -- the values of configuration text: integers, durations,
 * booleans.  See parse.h.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *parse_skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Digits at *pp into *out, advancing *pp.  -1 if none or above limit. */
static int parse_digits(const char **pp, uint64_t limit, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v = 0, d;

    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        d = (uint64_t)(*p - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *pp = p;
    *out = v;
    return 0;
}

int parse_int64(const char *text, int64_t *out)
{
    const char *p = parse_skip_blanks(text);
    uint64_t v, limit = (uint64_t)INT64_MAX;
    int neg = 0;

    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (neg)
        limit += 1;   /* -9223372036854775808 is representable */
    if (parse_digits(&p, limit, &v) != 0 || *parse_skip_blanks(p) != '\0')
        return -1;
    if (neg)
        *out = v == limit ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 0;
}

int parse_duration_ms(const char *text, int64_t *out_ms)
{
    static const struct { const char *unit; uint64_t ms; } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"", 1000}
    };
    const char *p = parse_skip_blanks(text);
    const char *end;
    uint64_t v;
    size_t i, n;

    if (parse_digits(&p, (uint64_t)INT64_MAX, &v) != 0)
        return -1;
    for (n = 0; isalpha((unsigned char)p[n]); n++)
        ;
    end = parse_skip_blanks(p + n);
    if (*end != '\0')
        return -1;
    for (i = 0; i < NELEM(units); i++) {
        if (strlen(units[i].unit) != n || strncmp(p, units[i].unit, n) != 0)
            continue;
        if (v > (uint64_t)INT64_MAX / units[i].ms)
            return -1;
        *out_ms = (int64_t)(v * units[i].ms);
        return 0;
    }
    return -1;
}

int parse_bool(const char *text, int *out)
{
    static const struct { const char *word; int val; } words[] = {
        {"true", 1}, {"yes", 1}, {"on", 1}, {"1", 1},
        {"false", 0}, {"no", 0}, {"off", 0}, {"0", 0}
    };
    const char *p = parse_skip_blanks(text);
    size_t i, n = strcspn(p, " \t");

    if (*parse_skip_blanks(p + n) != '\0')
        return -1;
    for (i = 0; i < NELEM(words); i++) {
        if (strlen(words[i].word) == n && strncasecmp(p, words[i].word, n) == 0) {
            *out = words[i].val;
            return 0;
        }
    }
    return -1;
}
