/*
 * error.h -- filling a caller's dal_error_t.
 */
#ifndef DAL_CORE_ERROR_H
#define DAL_CORE_ERROR_H

#include "dal/dal.h"

/*
 * The functions that report an error are DAL_COLD: the compiler then
 * treats every path that calls one as unlikely and moves it out of the
 * caller's body, so the path that succeeds stays short without a
 * likely/unlikely mark at each of the hundreds of error returns.
 */
#if defined(__GNUC__)
#define DAL_COLD __attribute__((cold))
#else
#define DAL_COLD
#endif

/* Set err (may be NULL) to code and a formatted message; returns code so
 * callers can write `return err_set(err, DAL_EINVAL, "...")`. */
int err_set(dal_error_t *err, int code, const char *fmt, ...) DAL_PRINTF(3, 4) DAL_COLD;

/* Same, with the server's error number and SQLSTATE. */
int err_server(dal_error_t *err, int code, unsigned int mysql_errno,
               const char *sqlstate, const char *fmt, ...) DAL_PRINTF(5, 6) DAL_COLD;

/* Put "prefix: " in front of the message already in err. */
void err_prefix(dal_error_t *err, const char *fmt, ...) DAL_PRINTF(2, 3) DAL_COLD;

void err_clear(dal_error_t *err);

#endif /* DAL_CORE_ERROR_H */
