/*
 * errmap.h -- the server error number and SQLSTATE dal-proxy sends for
 * each of dal's own refusals (a dal_error_t code other than DAL_ESERVER
 * and DAL_ECONNECT, which keep the server's and the lost-backend error of
 * reply.c).  docs/proxy.md, "Error numbers", has the table and its reasons.
 */
#ifndef DAL_PROXY_ERRMAP_H
#define DAL_PROXY_ERRMAP_H

#include <stdint.h>

typedef struct proxy_errno {
    uint16_t number;     /* a MariaDB error number (ER_*) */
    const char *sqlstate;/* static, five characters */
} proxy_errno_t;

/* The error of dal code (DAL_E*); a code this build does not know gets
 * 1105 ER_UNKNOWN_ERROR, HY000.  Never NULL; static. */
const proxy_errno_t *errmap_of(int code);

#endif
