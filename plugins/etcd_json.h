/*
 * etcd_json.h -- the JSON of etcd's v3 HTTP gateway, both ways: request
 * bodies built, response bodies parsed.  No I/O, so it is unit-tested and
 * fuzzed on its own (fuzz/fuzz_etcd.c).
 *
 * The gateway writes keys and values in base64 and 64-bit integers as
 * JSON strings ("revision":"42"), and leaves out fields that are zero or
 * false.  Every parser takes untrusted bytes (len bytes, no NUL needed),
 * returns 0 or -1 with why (a short reason) filled, and owns nothing it
 * does not hand over.
 */
#ifndef DAL_PLUGINS_ETCD_JSON_H
#define DAL_PLUGINS_ETCD_JSON_H

#include <stddef.h>
#include <stdint.h>

#define ETCD_WHY_MAX 160

/* One key's version. */
typedef struct etcd_kv {
    char *value;              /* owned, decoded, NUL-terminated; NULL: none */
    size_t len;
    int64_t mod_revision;
    int64_t create_revision;
    int64_t version;          /* versions of the key since its creation */
} etcd_kv_t;

void etcd_kv_clear(etcd_kv_t *kv);

/* base64 of n bytes at p: malloc'd, NUL-terminated; NULL if out of memory. */
char *etcd_b64(const void *p, size_t n);

/* JSON request bodies, malloc'd (NULL if out of memory). */
char *etcd_req_range(const char *key, int64_t revision);
char *etcd_req_watch(const char *key, int64_t start_revision);
/* put value if the key's mod_revision is expect (0: the key is absent;
 * -1: unconditionally); on failure, read the key back. */
char *etcd_req_txn_put(const char *key, const char *value, size_t len, int64_t expect);
char *etcd_req_auth(const char *user, const char *password);

/* An error body {"error":..,"message":..,"code":N}: 1 and msg filled
 * (cut to cap) if body is one, else 0. */
int etcd_parse_error(const char *body, size_t len, char *msg, size_t cap, int *code);

/* A range response: *found says whether kv was filled; *header_rev is
 * the store's revision. */
int etcd_parse_range(const char *body, size_t len, int *found, etcd_kv_t *kv,
                     int64_t *header_rev, char *why);

/* A txn response of etcd_req_txn_put: *succeeded, the new revision, and
 * on failure the key's current mod_revision (0: absent). */
int etcd_parse_txn(const char *body, size_t len, int *succeeded, int64_t *header_rev,
                   int64_t *current, char *why);

/* An auth response: *token malloc'd. */
int etcd_parse_token(const char *body, size_t len, char **token, char *why);

typedef enum etcd_watch_kind {
    ETCD_WATCH_CREATED = 1,   /* the watch is established */
    ETCD_WATCH_EVENTS,        /* changes of the key (put and/or kv below) */
    ETCD_WATCH_COMPACTED,     /* start revision compacted: read the key again */
    ETCD_WATCH_CANCELED,      /* ended by the server for another reason */
    ETCD_WATCH_OTHER          /* progress notification and the like */
} etcd_watch_kind_t;

/* One message of the watch stream (one line). */
typedef struct etcd_watch_msg {
    etcd_watch_kind_t kind;
    int64_t header_rev;
    int64_t compact_revision;
    int64_t last_revision;    /* mod_revision of the last event; 0: no event */
    int put;                  /* the last event is a put: kv holds it */
    etcd_kv_t kv;             /* owned by the message: etcd_kv_clear */
    char reason[ETCD_WHY_MAX];/* cancel reason or error message */
} etcd_watch_msg_t;

int etcd_parse_watch(const char *line, size_t len, etcd_watch_msg_t *m, char *why);

#endif /* DAL_PLUGINS_ETCD_JSON_H */
