/*
 * library.c -- libdal's process-wide state, set up once before the first
 * handle, source or check: libmysqlclient's global init and the table of
 * host functions plugins call.
 */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>

#include "charset.h"
#include "host.h"
#include "library.h"
#include "plugin_load.h"

static pthread_once_t library_once = PTHREAD_ONCE_INIT;

/* libmysqlclient's global init is not thread-safe: run it exactly once,
 * before any connection can be made. */
static void library_init(void)
{
    mysql_library_init(0, NULL, NULL);
    plugin_set_host_api(dal_host_api());
}

void library_ensure_init(void)
{
    pthread_once(&library_once, library_init);
}

const char *dal_collation_name(unsigned int id, const char **charset)
{
    return charset_collation(id, charset);
}

int dal_client_charset_check(const char *name, const char *value_sql, dal_error_t *err)
{
    if (name == NULL || value_sql == NULL || !charset_is_client_var(name, strlen(name)))
        return 0;
    if (strcasecmp(name, "names") == 0)
        return charset_check_names(value_sql, err);
    return charset_check_value(value_sql, err);
}

int dal_collation_refused(unsigned int id)
{
    return charset_id_unsafe(id);
}
