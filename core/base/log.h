/*
 * log.h -- the library's logging: never prints by itself, but passes
 * messages to the application's callback (or, with none set, warnings and
 * errors to stderr).
 */
#ifndef DAL_CORE_LOG_H
#define DAL_CORE_LOG_H

#include <stdarg.h>

#include "dal/dal.h"

typedef struct dal_logger {
    dal_log_fn fn;           /* NULL: default sink (stderr, warn and up) */
    void *user;              /* borrowed */
    dal_log_level_t level;   /* least level delivered */
} dal_logger_t;

/* Fill lg from the open options (opts may be NULL). */
void logger_init(dal_logger_t *lg, const dal_open_opts_t *opts);

void log_message(const dal_logger_t *lg, dal_log_level_t level, const char *component,
                 const char *fmt, ...) DAL_PRINTF(4, 5);
void log_vmessage(const dal_logger_t *lg, dal_log_level_t level, const char *component,
                  const char *fmt, va_list ap);

#endif /* DAL_CORE_LOG_H */
