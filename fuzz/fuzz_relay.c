/*
 * fuzz_relay.c - libFuzzer target for the result relay's readers of a
 * server's packets (core/exec/relay_parse.c): the column count packet (with
 * or without MARIADB_CLIENT_CACHE_METADATA's byte after it), the EOF and the
 * OK that end a result.  Every input is each of them; the input buffer is
 * exactly `size` bytes, so AddressSanitizer reports any read past its end.
 * What a reader accepts must be consistent with its bytes.
 */
#include <stdint.h>
#include <stdlib.h>

#include "relay_parse.h"

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            abort();                                                                         \
    } while (0)

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
    return 0;
}
