/*
 * relay_parse.c -- the relay's bounded readers of a server's packets (a
 * column count, an EOF, an OK, a column definition whose extended
 * metadata is taken out): outside input, fuzzed alone
 * (fuzz/fuzz_relay.c).  See relay_parse.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "relay_parse.h"

/* A lenenc integer at *p (end: one past the packet), advancing *p. */
static int lenenc(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *q = *p;
    size_t n, i;

    if (q >= end)
        return -1;
    if (*q < 0xFB) {
        *v = *q;
        *p = q + 1;
        return 0;
    }
    n = *q == 0xFC ? 2 : *q == 0xFD ? 3 : *q == 0xFE ? 8 : 0;
    if (n == 0 || (size_t)(end - q) < n + 1)
        return -1;
    for (*v = 0, i = n; i > 0; i--)
        *v = (*v << 8) | q[i];
    *p = q + 1 + n;
    return 0;
}

int relay_parse_eof(const unsigned char *p, size_t n, unsigned int *warnings,
                    unsigned int *status)
{
    if (n != 5 || p[0] != 0xFE)
        return -1;
    *warnings = (unsigned int)p[1] | (unsigned int)p[2] << 8;
    *status = (unsigned int)p[3] | (unsigned int)p[4] << 8;
    return 0;
}

int relay_parse_ok(const unsigned char *p, size_t n, uint64_t *affected, uint64_t *insert_id,
                   unsigned int *status, unsigned int *warnings)
{
    const unsigned char *q = p + 1, *end = p + n;

    if (n < 7 || p[0] != 0x00 || lenenc(&q, end, affected) != 0 ||
        lenenc(&q, end, insert_id) != 0 || end - q < 4)
        return -1;
    *status = (unsigned int)q[0] | (unsigned int)q[1] << 8;
    *warnings = (unsigned int)q[2] | (unsigned int)q[3] << 8;
    return 0;
}

size_t relay_parse_count(const unsigned char *p, size_t n, uint64_t *ncols)
{
    const unsigned char *q = p, *end = p + n;

    /* with MARIADB_CLIENT_CACHE_METADATA (which Connector/C asks for) a
     * byte saying whether the definitions follow comes after the count: a
     * text result's always do */
    if (n == 0 || p[0] == 0xFB || lenenc(&q, end, ncols) != 0 || *ncols == 0)
        return 0;
    if (q != end && (q + 1 != end || *q != 1))
        return 0;
    return (size_t)(q - p);
}

/* A lenenc string at *p skipped: 0, or -1 when it runs past end. */
static int skip_string(const unsigned char **p, const unsigned char *end)
{
    uint64_t len;

    if (lenenc(p, end, &len) != 0 || len > (uint64_t)(end - *p))
        return -1;
    *p += len;
    return 0;
}

/* The fixed-length fields' own length byte and the 12 bytes it counts. */
#define FIXED_FIELDS 13

size_t relay_strip_extended(unsigned char *p, size_t n)
{
    const unsigned char *q = p, *end = p + n, *block;
    int i;

    /* catalog, schema, table, org_table, name, org_name */
    for (i = 0; i < 6; i++)
        if (skip_string(&q, end) != 0)
            return 0;
    block = q;
    if (skip_string(&q, end) != 0 || end - q < FIXED_FIELDS || *q != 0x0C)
        return 0;
    memmove(p + (block - p), q, (size_t)(end - q));
    return n - (size_t)(q - block);
}
