/*
 * relay_parse.h -- the result relay's readers of a server's packets
 * (relay.c): each reads p[0..n), a packet's payload with its header byte,
 * and never reads or writes outside it.
 */
#ifndef DAL_CORE_RELAY_PARSE_H
#define DAL_CORE_RELAY_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* A result set's column count packet: the count (not 0) into *ncols; the
 * bytes of the count itself (what a client without
 * MARIADB_CLIENT_CACHE_METADATA takes), or 0 when it is not one. */
size_t relay_parse_count(const unsigned char *p, size_t n, uint64_t *ncols);

/* An EOF (0xFE, 5 bytes) into *warnings and *status: 0, or -1. */
int relay_parse_eof(const unsigned char *p, size_t n, unsigned int *warnings,
                    unsigned int *status);

/* An OK (0x00) into its counts, its status and warnings: 0 when well
 * formed, else -1. */
int relay_parse_ok(const unsigned char *p, size_t n, uint64_t *affected, uint64_t *insert_id,
                   unsigned int *status, unsigned int *warnings);

/* A column definition (ColumnDefinition41) with MariaDB's extended type
 * info block (MARIADB_CLIENT_EXTENDED_METADATA: a lenenc string after the
 * six names) made one without it, in place: the bytes after the block
 * moved over it.  Its new length; 0 (p unchanged) when a string runs past
 * the packet or the fixed-length fields (0x0C and 12 bytes) do not follow
 * the block. */
size_t relay_strip_extended(unsigned char *p, size_t n);

#endif /* DAL_CORE_RELAY_PARSE_H */
