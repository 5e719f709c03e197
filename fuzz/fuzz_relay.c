/*
 * fuzz_relay.c - libFuzzer target for the result relay's readers of a
 * server's packets (core/exec/relay_parse.c): the column count packet (with
 * or without MARIADB_CLIENT_CACHE_METADATA's byte after it), the EOF and the
 * OK that end a result, and a column definition whose extended type info
 * block relay_strip_extended takes out in place.  Every input is each of
 * them; the input buffer (and the stripper's copy of it) is exactly `size`
 * bytes, so AddressSanitizer reports any access past its end.  What a
 * reader accepts must be consistent with its bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay_parse.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            abort();                                                                         \
    } while (0)

/* The stripped definition is the packet with one run of bytes taken out
 * (the block); a refused one is left as it was. */
static void check_strip(const uint8_t *data, size_t size)
{
    unsigned char *p = malloc(size ? size : 1);
    size_t n, same = 0;

    CHECK(p != NULL);
    memcpy(p, data, size);
    n = relay_strip_extended(p, size);
    if (n == 0) {
        CHECK(memcmp(p, data, size) == 0);
    } else {
        /* at least the block's length byte gone; six names and the fields left */
        CHECK(n < size && n >= 6 + 13);
        while (same < n && p[same] == data[same])
            same++;
        CHECK(memcmp(p + same, data + size - (n - same), n - same) == 0);
    }
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t ncols = 0, affected, id;
    unsigned int warnings, status;
    size_t k = relay_parse_count(data, size, &ncols);

    /* the count's own bytes: a prefix of the packet, and a count */
    CHECK(k <= size);
    CHECK(k == 0 || (ncols > 0 && (k == size || k + 1 == size)));
    if (relay_parse_eof(data, size, &warnings, &status) == 0)
        CHECK(size == 5 && data[0] == 0xFE && warnings <= 0xFFFF && status <= 0xFFFF);
    if (relay_parse_ok(data, size, &affected, &id, &status, &warnings) == 0)
        CHECK(size >= 7 && data[0] == 0x00 && warnings <= 0xFFFF && status <= 0xFFFF);
    check_strip(data, size);
    return 0;
}
