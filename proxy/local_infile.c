/*
 * local_infile.c -- LOAD DATA LOCAL INFILE as a server does it: the file
 * is the client's, never the proxy host's.
 *
 * When a backend asks dal for the statement's local file, libdal calls the
 * session's reader (dal_session_set_infile).  This reader asks the proxy's
 * own client for the file, as the server would (a LOCAL INFILE request
 * packet naming it), and hands the client's packets to the backend as they
 * come, one packet at a time; the empty packet ends the file.  It runs on
 * the worker that runs the statement, which owns the client until the
 * statement is answered, so it waits on the client's socket itself, each
 * wait bounded by INFILE_WAIT_MS.  A client that did not agree to
 * CLIENT_LOCAL_FILES gets the server's error for it, and its socket is
 * never asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

/* How long the client may keep the proxy waiting for its next packet of
 * the file (the servers' net_read_timeout). */
#define INFILE_WAIT_MS 30000

/* The file being relayed for one client (c->infile while a statement
 * reads it). */
struct proxy_infile {
    const uint8_t *rest;   /* borrowed from c->in: the packet not yet given */
    size_t left;
    bool ended;            /* the client's empty packet came */
    bool broken;           /* the client is gone, too slow or malformed */
};

static void client_gone(dal_error_t *err)
{
    err->code = DAL_ESERVER;
    err->mysql_errno = 1158; /* ER_NET_READ_ERROR */
    snprintf(err->sqlstate, sizeof err->sqlstate, "08S01");
    snprintf(err->message, sizeof err->message,
             "Got an error reading communication packets: the client stopped sending its "
             "LOAD DATA LOCAL file");
}

static int local_infile_open(void *user, const char *name, dal_error_t *err)
{
    proxy_client_t *c = user;
    size_t n = strlen(name);
    uint8_t *req;

    if (!(c->caps & PROTO_CLIENT_LOCAL_FILES)) {
        err->code = DAL_ESERVER;
        err->mysql_errno = 4166; /* ER_LOAD_INFILE_CAPABILITY_DISABLED */
        snprintf(err->sqlstate, sizeof err->sqlstate, "HY000");
        snprintf(err->message, sizeof err->message,
                 "The used command is not allowed because the MariaDB server or client has "
                 "disabled the local infile capability");
        return -1;
    }
    if ((c->infile = calloc(1, sizeof *c->infile)) == NULL || (req = malloc(n + 1)) == NULL) {
        free(c->infile);
        c->infile = NULL;
        err->code = DAL_ENOMEM;
        snprintf(err->message, sizeof err->message, "dal-proxy: out of memory");
        return -1;
    }
    req[0] = 0xfb; /* LOCAL INFILE request, then the name as the statement gave it */
    memcpy(req + 1, name, n);
    proto_write_packet(&c->out, &c->seq, req, n + 1);
    free(req);
    if (proxy_flush_wait(c, INFILE_WAIT_MS) != 0) {
        free(c->infile);
        c->infile = NULL;
        c->state = CLIENT_CLOSING;
        client_gone(err);
        return -1;
    }
    return 0;
}

/* The client's next packet of the file into f: 0, or -1 if it is broken. */
static int next_packet(proxy_client_t *c, struct proxy_infile *f)
{
    proto_packet_t pkt;

    if (proxy_packet_wait(c, &pkt, INFILE_WAIT_MS) != 1) {
        f->broken = true;
        return -1;
    }
    c->seq = pkt.next_seq;
    f->rest = pkt.payload;
    f->left = pkt.len;
    f->ended = pkt.len == 0;
    return 0;
}

static long local_infile_read(void *user, void *buf, size_t len, dal_error_t *err)
{
    proxy_client_t *c = user;
    struct proxy_infile *f = c->infile;
    size_t n;

    while (f->left == 0 && !f->ended)
        if (f->broken || next_packet(c, f) != 0) {
            client_gone(err);
            return -1;
        }
    n = f->left < len ? f->left : len;
    memcpy(buf, f->rest, n);
    f->rest += n;
    f->left -= n;
    return (long)n;
}

/* The backend may stop reading early (it failed): the client's packets up
 * to its empty one are still read, so the next command starts in step. */
static void local_infile_close(void *user)
{
    proxy_client_t *c = user;
    struct proxy_infile *f = c->infile;

    if (f == NULL)
        return;
    while (!f->ended && !f->broken)
        (void)next_packet(c, f);
    if (f->broken)
        c->state = CLIENT_CLOSING;
    free(f);
    c->infile = NULL;
}

int local_infile_attach(proxy_client_t *c, dal_session_t *s, dal_error_t *err)
{
    static const dal_infile_ops_t ops = {sizeof ops, local_infile_open, local_infile_read,
                                         local_infile_close};

    return dal_session_set_infile(s, &ops, c, err);
}
