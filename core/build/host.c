/*
 * host.c -- the dal_host_api_t table handed to plugins.
 *
 * Each entry is a thin adapter onto a core function, so plugins get the
 * same behaviour as the core without linking against it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "error.h"
#include "exec.h"
#include "host.h"
#include "monitor.h"
#include "pool.h"
#include "snapshot.h"
#include "thread.h"

static void host_log(dal_host_t *host, dal_log_level_t level, const char *fmt, ...)
    DAL_PRINTF(3, 4);

static void host_log(dal_host_t *host, dal_log_level_t level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vmessage(host ? host->log : NULL, level, host ? host->component : "plugin", fmt, ap);
    va_end(ap);
}

static int host_set_error(dal_error_t *err, int code, const char *fmt, ...) DAL_PRINTF(3, 4);

static int host_set_error(dal_error_t *err, int code, const char *fmt, ...)
{
    char msg[sizeof err->message];
    va_list ap;

    if (err == NULL)
        return code;
    va_start(ap, fmt);
    err->code = code;
    err->mysql_errno = 0;
    err->sqlstate[0] = '\0';
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* A plugin quotes its parameters as it likes: mask what it wrote. */
    url_mask_words(msg, err->message, sizeof err->message);
    return code;
}

static int host_query(dal_host_t *host, const char *ds, const char *sql,
                      const dal_value_t *params, size_t nparams, dal_result_t **out,
                      dal_error_t *err)
{
    dal_node_t *node = host && host->snap ? snapshot_node(host->snap, ds) : NULL;
    char q[DAL_CFG_QUOTE_SIZE];

    *out = NULL;
    if (node == NULL)   /* ds is a plugin parameter, so quoted as one */
        return err_set(err, DAL_EROUTE, "%s: datasource '%s' is not defined",
                       host ? host->component : "plugin", config_quote(ds, q));
    return exec_direct(node, sql, params, nparams, out, err);
}

static int host_conn_open(dal_host_t *host, dal_conn_t **out, dal_error_t *err)
{
    *out = NULL;
    if (host == NULL || host->server == NULL)
        return err_set(err, DAL_ESTATE, "conn_open is only for pool plugin instances");
    return conn_open_server(host->server->node->cfg, host->server->replica, out, err);
}

/* A plugin's event, built against any version of dal_event_t: copied into
 * this version's layout, with no promise about its strings (labels_gen 0:
 * they are the plugin's, not the snapshot's). */
static void host_emit(dal_host_t *host, const dal_event_t *ev)
{
    dal_event_t copy;

    if (host == NULL || host->snap == NULL || ev == NULL ||
        !monitor_active(host->snap->monitors))
        return;
    memset(&copy, 0, sizeof copy);
    memcpy(&copy, ev, ev->struct_size < sizeof copy ? ev->struct_size : sizeof copy);
    copy.struct_size = sizeof copy;
    copy.labels_gen = 0;
    monitor_emit(host->snap->monitors, &copy);
}

static const dal_host_api_t host_api = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_host_api_t),
    host_log,
    host_set_error,
    params_is_set,
    params_string,
    params_int,
    params_bool,
    params_double,
    params_duration_ms,
    params_int_list,
    params_string_list,
    host_query,
    dal_result_next,
    dal_result_text,
    dal_result_int,
    dal_result_affected_rows,
    dal_result_free,
    host_conn_open,
    conn_close,
    conn_ping,
    conn_reset,
    clock_now_ns,
    pool_current_statement,
    host_emit,
    thread_start,   /* the core's own threads start there too */
};

const dal_host_api_t *dal_host_api(void)
{
    return &host_api;
}
