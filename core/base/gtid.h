/*
 * gtid.h -- MariaDB global transaction ids, for read-your-writes.
 *
 * A GTID is "domain-server-seq" (0-1-42).  Within one replication domain
 * the sequence numbers only grow, so a replica has applied a transaction
 * when its position (@@gtid_slave_pos: one GTID per domain, comma-separated)
 * holds a sequence number at least as high in the same domain.
 */
#ifndef DAL_CORE_GTID_H
#define DAL_CORE_GTID_H

#include <stddef.h>
#include <stdint.h>

typedef struct dal_gtid {
    uint32_t domain;
    uint32_t server;
    uint64_t seq;
} dal_gtid_t;

/* Domains kept per position; a replica with more is treated as unknown
 * (read-your-writes then falls back to the master). */
#define DAL_GTID_DOMAINS_MAX 8

typedef struct dal_gtid_pos {
    dal_gtid_t g[DAL_GTID_DOMAINS_MAX];
    unsigned int n;
} dal_gtid_pos_t;

/* Parse one GTID from text[0..len).  0, or -1 if malformed. */
int gtid_parse(const char *text, size_t len, dal_gtid_t *out);

/* Parse a position ("0-1-42,1-2-7", blanks allowed; "" is empty).  0, or
 * -1 if malformed or with more than DAL_GTID_DOMAINS_MAX domains. */
int gtid_pos_parse(const char *text, size_t len, dal_gtid_pos_t *out);

/* 1 if pos has applied g (same domain, sequence number at least g's). */
int gtid_pos_covers(const dal_gtid_pos_t *pos, const dal_gtid_t *g);

#endif /* DAL_CORE_GTID_H */
