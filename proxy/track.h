/*
 * track.h -- the session state changes a client with CLIENT_SESSION_TRACK
 * is told in the OK of its SET, SET NAMES, USE and COM_INIT_DB: the
 * system variables MariaDB tracks by default (session_track_system_
 * variables: autocommit, character_set_client, character_set_connection,
 * character_set_results, time_zone) with their new values, and the
 * schema (session_track_schema).  setvar.c says which changed; this file
 * reads their values and builds the OK (reply.c encodes it).
 */
#ifndef DAL_PROXY_TRACK_H
#define DAL_PROXY_TRACK_H

#include <stddef.h>

#include "proxy.h"

/* The variables tracked, as bits of a set. */
enum {
    TRACK_CHARACTER_SET_CONNECTION = 1 << 0,
    TRACK_CHARACTER_SET_CLIENT = 1 << 1,
    TRACK_CHARACTER_SET_RESULTS = 1 << 2,
    TRACK_TIME_ZONE = 1 << 3,
    TRACK_AUTOCOMMIT = 1 << 4,
    /* what SET NAMES changes */
    TRACK_NAMES = TRACK_CHARACTER_SET_CONNECTION | TRACK_CHARACTER_SET_CLIENT |
                  TRACK_CHARACTER_SET_RESULTS
};

/* The bit of session variable name (any case; "names" for SET NAMES), 0
 * when it is not tracked. */
unsigned int track_bit(const char *name);

/* The OK (with warnings, the statement's warning count) of a statement
 * that changed the variables in vars (TRACK_*) and, when schema is not
 * NULL, the schema (n bytes): their new values for a client with
 * CLIENT_SESSION_TRACK, read through its session (a value that cannot be
 * read is left out), a plain OK for the others. */
void track_reply_ok(proxy_client_t *c, unsigned int vars, const char *schema, size_t n,
                    unsigned int warnings);

#endif /* DAL_PROXY_TRACK_H */
