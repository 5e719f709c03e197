/*
 * infile.h -- the answer to a server's LOAD DATA LOCAL INFILE request.
 *
 * libmariadb answers such a request with a handler that reads the named
 * file, and the server chooses the name: through dal-proxy, any client
 * could read the proxy host's files.  dal installs its own handler on
 * every backend connection (infile_install), so libmariadb's never runs.
 * It asks the reader of the session whose statement runs on the
 * connection (dal_session_set_infile), else reads the file itself when
 * [dal] local_infile = on, else refuses with the server's error 4166
 * without opening anything.
 *
 * The session's reader reaches the connection as its cancel does
 * (cancel.h): a session makes it the calling thread's current one
 * (infile_set_current) while its statement runs; exec.c enters each
 * connection it sends the statement's SQL on (infile_enter) and takes the
 * reader off again when that connection's part is over (infile_leave),
 * also on error paths, and the pool takes it off every connection given
 * back, so an idle connection never keeps one.
 */
#ifndef DAL_CORE_INFILE_H
#define DAL_CORE_INFILE_H

#include <mysql.h>

#include "dal/dal.h"

/* A session's reader (dal_session_set_infile). */
typedef struct dal_infile {
    dal_infile_ops_t ops;     /* copied */
    void *user;               /* borrowed */
} dal_infile_t;

/* A connection's side: what its handler answers with, and the failure it
 * reported.  Embedded in the connection (conn.h). */
typedef struct dal_infile_conn {
    const dal_infile_t *reader; /* borrowed: the running statement's session's, or NULL */
    int read_files;           /* [dal] local_infile = on */
    /* Stop the server's statement (conn.c: KILL QUERY from a connection of
     * its own): 0 when done.  A read that fails after bytes went to the
     * server calls it before libmariadb ends the file with an empty
     * packet, so that the server does not load the rows it has. */
    int (*abort)(struct dal_infile_conn *ic);
    int fd;                   /* the file being read (read_files), or -1 */
    int opened;               /* the reader's open succeeded: its close is owed */
    unsigned long long sent;  /* bytes handed to libmariadb for this statement */
    int failed;               /* err is the failure the handler reported in this statement */
    int aborted;              /* ... and abort stopped the statement */
    dal_error_t err;
} dal_infile_conn_t;

/* Set m up for LOCAL INFILE requests: the capability on (CLIENT_LOCAL_FILES,
 * which the reader needs) and dal's handler, answering from ic (NULL: a
 * connection that runs no one's statements, which refuses every request).
 * read_files: [dal] local_infile; abort: see dal_infile_conn_t (NULL: the
 * rows before a failed read are loaded).  Before mysql_real_connect. */
void infile_install(MYSQL *m, dal_infile_conn_t *ic, int read_files,
                    int (*abort)(dal_infile_conn_t *ic));
/* The statements the calling thread runs from now on read LOCAL INFILE
 * bytes from r (borrowed until set again; NULL: none). */
void infile_set_current(const dal_infile_t *r);
/* A statement's SQL is about to be sent on ic's connection: it answers
 * with the current reader. */
void infile_enter(dal_infile_conn_t *ic);
/* That connection's part is over: no reader, no failure kept. */
void infile_leave(dal_infile_conn_t *ic);
/* The failure the handler reported, if the connection's error e is still
 * it (the server's own error afterwards replaces it) or is the server's
 * answer to abort; else NULL. */
const dal_error_t *infile_failure(const dal_infile_conn_t *ic, unsigned int e);

#endif /* DAL_CORE_INFILE_H */
