/*
 * track.c -- the session state changes of a client's own SET, SET NAMES,
 * USE and COM_INIT_DB, for a client with CLIENT_SESSION_TRACK.  See
 * track.h.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "reply.h"
#include "track.h"

/* In the order MariaDB lists them after SET NAMES. */
static const char *const tracked[] = {"character_set_connection", "character_set_client",
                                      "character_set_results", "time_zone", "autocommit"};
#define NTRACKED (sizeof tracked / sizeof tracked[0])

unsigned int track_bit(const char *name)
{
    size_t i;

    if (strcasecmp(name, "names") == 0)
        return TRACK_NAMES;
    for (i = 0; i < NTRACKED; i++)
        if (strcasecmp(name, tracked[i]) == 0)
            return 1u << i;
    return 0;
}

/* The values of the variables in vars other than autocommit, as the
 * server shows them, one query through the session (which applies the
 * client's variables to the connection it takes): their entries in st. */
static void track_server_values(proxy_client_t *c, unsigned int vars, proto_buf_t *st)
{
    char sql[256];
    size_t i, col = 0, len = 0;
    dal_result_t *r = NULL;
    dal_error_t err;

    len = (size_t)snprintf(sql, sizeof sql, "SELECT");
    for (i = 0; i < NTRACKED; i++)
        if ((vars & (1u << i)) && (1u << i) != TRACK_AUTOCOMMIT)
            len += (size_t)snprintf(sql + len, sizeof sql - len, "%s @@session.%s",
                                    len > 6 ? "," : "", tracked[i]);
    if (len <= 6)
        return;
    if (dal_session_query(c->session, NULL, sql, NULL, 0, &r, &err) != 0)
        return; /* a value not read is not told */
    if (dal_result_next(r, &err) == 1)
        for (i = 0; i < NTRACKED; i++)
            if ((vars & (1u << i)) && (1u << i) != TRACK_AUTOCOMMIT)
                proto_track_variable(st, tracked[i], dal_result_text(r, col++, NULL));
    dal_result_free(r);
}

void track_reply_ok(proxy_client_t *c, unsigned int vars, const char *schema, size_t n,
                    unsigned int warnings)
{
    proto_buf_t st = PROTO_BUF_INIT;

    if (!(c->caps & PROTO_CLIENT_SESSION_TRACK) || (vars == 0 && schema == NULL)) {
        reply_ok(c, 0, 0, warnings);
        return;
    }
    track_server_values(c, vars, &st);
    /* autocommit is the session's own: dal keeps the transaction state */
    if (vars & TRACK_AUTOCOMMIT)
        proto_track_variable(&st, "autocommit",
                             (dal_session_status(c->session) & PROTO_SERVER_STATUS_AUTOCOMMIT)
                                 ? "ON"
                                 : "OFF");
    if (schema != NULL)
        proto_track_schema(&st, schema, n);
    if (st.err == 0)
        reply_ok_state(c, st.data, st.len, warnings);
    else
        reply_ok(c, 0, 0, warnings);
    proto_buf_free(&st);
}
