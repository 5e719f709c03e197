/*
 * log.c -- the library's logging.
 */
#include <stdio.h>

#include "log.h"
#include "url.h"

const char *dal_log_level_name(dal_log_level_t level)
{
    switch (level) {
    case DAL_LOG_DEBUG: return "debug";
    case DAL_LOG_INFO: return "info";
    case DAL_LOG_WARN: return "warn";
    case DAL_LOG_ERROR: return "error";
    }
    return "?";
}

void logger_init(dal_logger_t *lg, const dal_open_opts_t *opts)
{
    lg->fn = opts ? opts->log : NULL;
    lg->user = opts ? opts->log_user : NULL;
    /* With no callback only warnings and errors reach stderr: a library
     * must not chatter on a program's terminal. */
    lg->level = lg->fn ? opts->log_level : DAL_LOG_WARN;
}

void log_vmessage(const dal_logger_t *lg, dal_log_level_t level, const char *component,
                  const char *fmt, va_list ap)
{
    char raw[1024], msg[1024];

    if (lg != NULL && level < lg->level)
        return;
    if (lg == NULL && level < DAL_LOG_WARN)
        return;
    vsnprintf(raw, sizeof raw, fmt, ap);
    /* Plugins log through here too, quoting their parameters as they
     * like; no password leaves in a log line. */
    url_mask_words(raw, msg, sizeof msg);
    if (lg != NULL && lg->fn != NULL) {
        lg->fn(lg->user, level, component, msg);
        return;
    }
    fprintf(stderr, "dal: %s: %s: %s\n", dal_log_level_name(level), component, msg);
}

void log_message(const dal_logger_t *lg, dal_log_level_t level, const char *component,
                 const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vmessage(lg, level, component, fmt, ap);
    va_end(ap);
}
