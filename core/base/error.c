/*
 * error.c -- filling a caller's dal_error_t.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static void err_vfill(dal_error_t *err, int code, const char *fmt, va_list ap)
{
    err->code = code;
    err->mysql_errno = 0;
    err->sqlstate[0] = '\0';
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

int err_set(dal_error_t *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    va_start(ap, fmt);
    err_vfill(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int err_server(dal_error_t *err, int code, unsigned int mysql_errno,
               const char *sqlstate, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    va_start(ap, fmt);
    err_vfill(err, code, fmt, ap);
    va_end(ap);
    err->mysql_errno = mysql_errno;
    snprintf(err->sqlstate, sizeof err->sqlstate, "%s", sqlstate ? sqlstate : "");
    return code;
}

void err_prefix(dal_error_t *err, const char *fmt, ...)
{
    char prefix[256];
    size_t plen, mlen;
    va_list ap;
    int n;

    if (err == NULL)
        return;
    va_start(ap, fmt);
    n = vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    strcat(prefix, ": ");
    plen = strlen(prefix);
    /* shift the old message right (cut at the end if it no longer fits) */
    mlen = strnlen(err->message, sizeof err->message - 1);
    if (plen + mlen > sizeof err->message - 1)
        mlen = sizeof err->message - 1 - plen;
    memmove(err->message + plen, err->message, mlen);
    memcpy(err->message, prefix, plen);
    err->message[plen + mlen] = '\0';
}

void err_clear(dal_error_t *err)
{
    if (err == NULL)
        return;
    err->code = 0;
    err->mysql_errno = 0;
    err->sqlstate[0] = '\0';
    err->message[0] = '\0';
}
