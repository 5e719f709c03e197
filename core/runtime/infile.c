/*
 * infile.c -- dal's LOAD DATA LOCAL INFILE handler; see infile.h.
 *
 * libmariadb calls the handler's init with the server's file name, then
 * read until it returns 0 or less, sending each block to the server, then
 * end.  After a failed init or read it sends the server an empty packet
 * (the end of the file), reads the server's answer, and reports the error
 * number and message the handler's error callback gives, with sqlstate
 * HY000: conn_error takes the whole failure, sqlstate included, from the
 * connection's dal_infile_conn_t instead (infile_failure).  A read that
 * fails after some bytes went out first has the server's statement
 * stopped (dal_infile_conn_t.abort), whose error 1317 then stands for the
 * handler's failure.
 */
#include <errno.h>
#include <errmsg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h" /* DAL_TLS_SMALL */
#include "error.h"
#include "infile.h"
#include "iowait.h"

/* The server's own words when it refuses (ER_LOAD_INFILE_CAPABILITY_DISABLED),
 * with dal's reason. */
#define REFUSED_ERRNO 4166
#define REFUSED_MSG "The used command is not allowed because the MariaDB server or client " \
                    "has disabled the local infile capability ([dal] local_infile = off)"

static _Thread_local const dal_infile_t *current DAL_TLS_SMALL;

/* The running statement's: kept aside while an event loop runs others on
 * the thread (iowait.h). */
IOWAIT_KEEP_VAR(current)

void infile_set_current(const dal_infile_t *r)
{
    current = r;
}

void infile_enter(dal_infile_conn_t *ic)
{
    ic->reader = current;
    ic->failed = 0;
    ic->aborted = 0;
}

void infile_leave(dal_infile_conn_t *ic)
{
    ic->reader = NULL;
    ic->failed = 0;
    ic->aborted = 0;
}

/* The error number libmariadb gets for ic's failure: the failure's own,
 * except in the client library's range, which would tell dal the
 * connection broke (exec.c, pool.c) when it is in step with its server. */
static unsigned int reported(const dal_infile_conn_t *ic)
{
    unsigned int e = ic->err.mysql_errno;

    return e >= CR_MIN_ERROR && e <= CR_MAX_ERROR ? 1105 : e;
}

const dal_error_t *infile_failure(const dal_infile_conn_t *ic, unsigned int e)
{
    return ic->failed && (ic->aborted || reported(ic) == e) ? &ic->err : NULL;
}

/* The reader's failure e into ic; one that left e unfilled is a failure
 * all the same. */
static void reader_failed(dal_infile_conn_t *ic, const dal_error_t *e, const char *what)
{
    if (e->mysql_errno != 0) {
        ic->err = *e;
        ic->err.code = DAL_ESERVER;
        if (ic->err.sqlstate[0] == '\0')
            snprintf(ic->err.sqlstate, sizeof ic->err.sqlstate, "HY000");
        ic->failed = 1;
        return;
    }
    err_server(&ic->err, DAL_ESERVER, 1105, "HY000",
               "the session's LOAD DATA LOCAL INFILE reader failed to %s%s%s", what,
               e->message[0] ? ": " : "", e->message);
    ic->failed = 1;
}

static int reader_open(dal_infile_conn_t *ic, const char *name)
{
    dal_error_t e = {0};

    if (ic->reader->ops.open(ic->reader->user, name, &e) != 0) {
        reader_failed(ic, &e, "open");
        return 1;
    }
    ic->opened = 1;
    return 0;
}

static int file_open(dal_infile_conn_t *ic, const char *name)
{
    ic->fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (ic->fd < 0) {
        err_server(&ic->err, DAL_ESERVER, CR_FILE_NOT_FOUND, "HY000",
                   "cannot open '%s' for LOAD DATA LOCAL INFILE: %s", name, strerror(errno));
        ic->failed = 1;
        return 1;
    }
    return 0;
}

static int h_init(void **ptr, const char *name, void *userdata)
{
    dal_infile_conn_t *ic = userdata;

    *ptr = ic;
    if (ic == NULL)
        return 1;
    ic->failed = 0;
    ic->aborted = 0;
    ic->opened = 0;
    ic->sent = 0;
    ic->fd = -1;
    if (ic->reader != NULL)
        return reader_open(ic, name);
    if (ic->read_files)
        return file_open(ic, name);
    err_server(&ic->err, DAL_ESERVER, REFUSED_ERRNO, "HY000", "%s", REFUSED_MSG);
    ic->failed = 1;
    return 1;
}

static int reader_read(dal_infile_conn_t *ic, char *buf, unsigned int len)
{
    dal_error_t e = {0};
    long n = ic->reader->ops.read(ic->reader->user, buf, len, &e);

    if (n < 0) {
        reader_failed(ic, &e, "read");
        return -1;
    }
    if ((unsigned long)n > len) {
        err_server(&ic->err, DAL_ESERVER, 1105, "HY000",
                   "the session's LOAD DATA LOCAL INFILE reader returned more bytes than asked for");
        ic->failed = 1;
        return -1;
    }
    return (int)n;
}

static int file_read(dal_infile_conn_t *ic, char *buf, unsigned int len)
{
    ssize_t n;

    do
        n = read(ic->fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        err_server(&ic->err, DAL_ESERVER, CR_FILE_READ, "HY000",
                   "cannot read the LOAD DATA LOCAL INFILE file: %s", strerror(errno));
        ic->failed = 1;
        return -1;
    }
    return (int)n;
}

static int h_read(void *ptr, char *buf, unsigned int len)
{
    dal_infile_conn_t *ic = ptr;
    int n = ic->opened ? reader_read(ic, buf, len) : file_read(ic, buf, len);

    if (n > 0)
        ic->sent += (unsigned int)n;
    /* the empty packet libmariadb sends next would end the file and the
     * server would keep the rows it has: a file cut short is not one */
    if (n < 0 && ic->sent > 0 && ic->abort != NULL)
        ic->aborted = ic->abort(ic) == 0;
    return n;
}

static void h_end(void *ptr)
{
    dal_infile_conn_t *ic = ptr;

    if (ic == NULL)
        return;
    if (ic->opened && ic->reader != NULL)
        ic->reader->ops.close(ic->reader->user);
    ic->opened = 0;
    if (ic->fd >= 0)
        close(ic->fd);
    ic->fd = -1;
}

/* libmariadb takes the message as a printf format: every '%' doubled. */
static void copy_unformatted(char *out, size_t cap, const char *msg)
{
    size_t n = 0;

    if (cap == 0)
        return;
    for (; *msg != '\0' && n + 2 < cap; msg++) {
        if (*msg == '%')
            out[n++] = '%';
        out[n++] = *msg;
    }
    out[n] = '\0';
}

static int h_error(void *ptr, char *buf, unsigned int len)
{
    dal_infile_conn_t *ic = ptr;

    if (ic == NULL || !ic->failed) {
        copy_unformatted(buf, len, ic == NULL ? REFUSED_MSG : "LOAD DATA LOCAL INFILE failed");
        return ic == NULL ? REFUSED_ERRNO : 1105;
    }
    copy_unformatted(buf, len, ic->err.message);
    return (int)reported(ic);
}

void infile_install(MYSQL *m, dal_infile_conn_t *ic, int read_files,
                    int (*abort)(dal_infile_conn_t *ic))
{
    unsigned int on = 1;

    if (ic != NULL) {
        ic->reader = NULL;
        ic->read_files = read_files;
        ic->abort = abort;
        ic->sent = 0;
        ic->aborted = 0;
        ic->fd = -1;
        ic->opened = 0;
        ic->failed = 0;
    }
    mysql_options(m, MYSQL_OPT_LOCAL_INFILE, &on);
    mysql_set_local_infile_handler(m, h_init, h_read, h_end, h_error, ic);
}
