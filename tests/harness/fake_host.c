/*
 * fake_host.c -- a stand-in for dal's plugin host, for unit tests.
 * See fake_host.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "fake_host.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ------------------------------------------------------------ host context */

#define FAKE_LOG_MAX 8192

struct dal_host {
    char log[FAKE_LOG_MAX]; /* lines, cut when full: tests look at the first ones */
    size_t len;
};

static const char *level_name(dal_log_level_t level)
{
    switch (level) {
    case DAL_LOG_DEBUG: return "debug";
    case DAL_LOG_INFO: return "info";
    case DAL_LOG_WARN: return "warn";
    case DAL_LOG_ERROR: return "error";
    }
    return "?";
}

static void fake_log(dal_host_t *h, dal_log_level_t level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    n = snprintf(h->log + h->len, sizeof h->log - h->len, "%s: %s\n", level_name(level), line);
    if (n > 0)
        h->len += (size_t)n < sizeof h->log - h->len ? (size_t)n : sizeof h->log - h->len - 1;
}

static int fake_set_error(dal_error_t *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    err->mysql_errno = 0;
    err->sqlstate[0] = '\0';
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

dal_host_t *fake_host_new(void)
{
    return calloc(1, sizeof(dal_host_t));
}

void fake_host_free(dal_host_t *h)
{
    free(h);
}

const char *fake_host_log_text(const dal_host_t *h)
{
    return h->log;
}

/* ------------------------------------------------------------- parameters */

typedef struct fake_value {
    char *name;             /* owned */
    dal_param_type_t type;
    char *text;             /* owned; STRING value, and the buffer list items point into */
    int64_t i;              /* INT; DURATION in ms */
    int b;                  /* BOOL */
    double d;               /* DOUBLE */
    int64_t *ints;          /* INT_LIST, owned */
    const char **strs;      /* STRING_LIST, owned array into text */
    size_t count;           /* list length */
} fake_value_t;

struct dal_plugin_params {
    const dal_param_spec_t *spec; /* borrowed; NULL: no checking */
    fake_value_t *v;              /* owned array */
    size_t n;
    unsigned misses;
};

static const char *type_name(dal_param_type_t t)
{
    switch (t) {
    case DAL_PARAM_STRING: return "string";
    case DAL_PARAM_INT: return "integer";
    case DAL_PARAM_BOOL: return "boolean";
    case DAL_PARAM_DOUBLE: return "number";
    case DAL_PARAM_DURATION: return "duration";
    case DAL_PARAM_INT_LIST: return "integer list";
    case DAL_PARAM_STRING_LIST: return "string list";
    }
    return "unknown type";
}

/* Strict signed 64-bit decimal between blanks, like the INI loader's. */
static int parse_int(const char *s, int64_t *out)
{
    char *end;
    long long v;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int fake_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    size_t i;

    for (i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int parse_double(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    return end == s || *end != '\0' || errno != 0 || !isfinite(*out) ? -1 : 0;
}

/* "250ms", "5s", "2m", "1h"; a bare number is seconds. */
static int parse_duration(const char *s, int64_t *ms)
{
    static const struct { const char *unit; int64_t ms; } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"", 1000}
    };
    char *end;
    long long v;
    size_t i;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || errno != 0 || v < 0)
        return -1;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            if (v > INT64_MAX / units[i].ms)
                return -1;
            *ms = v * units[i].ms;
            return 0;
        }
    return -1;
}

/* Cut text (owned, modified in place) at commas into trimmed items.  An
 * all-blank text is the empty list; an empty item is an error. */
static int split_list(char *text, const char ***items, size_t *count)
{
    size_t n = 1, k = 0;
    char *p, *q, *end;

    for (p = text; *p; p++)
        n += *p == ',';
    for (p = text; isspace((unsigned char)*p); p++)
        ;
    *count = 0;
    if (*p == '\0')
        return 0;
    if ((*items = calloc(n, sizeof **items)) == NULL)
        return -1;
    for (p = text;; p = q + 1) {
        for (q = p; *q && *q != ','; q++)
            ;
        end = q;
        while (p < end && isspace((unsigned char)*p))
            p++;
        while (end > p && isspace((unsigned char)end[-1]))
            end--;
        if (end == p)
            return -1;
        (*items)[k++] = p;
        if (*q == '\0') {
            *end = '\0';
            break;
        }
        *end = '\0';
    }
    *count = k;
    return 0;
}

static int parse_value(fake_value_t *v, const char *text)
{
    size_t i;

    switch (v->type) {
    case DAL_PARAM_STRING: return 0;
    case DAL_PARAM_INT: return parse_int(text, &v->i);
    case DAL_PARAM_BOOL: return fake_parse_bool(text, &v->b);
    case DAL_PARAM_DOUBLE: return parse_double(text, &v->d);
    case DAL_PARAM_DURATION: return parse_duration(text, &v->i);
    case DAL_PARAM_STRING_LIST: return split_list(v->text, &v->strs, &v->count);
    case DAL_PARAM_INT_LIST:
        if (split_list(v->text, &v->strs, &v->count) != 0)
            return -1;
        if (v->count && (v->ints = calloc(v->count, sizeof *v->ints)) == NULL)
            return -1;
        for (i = 0; i < v->count; i++)
            if (parse_int(v->strs[i], &v->ints[i]) != 0)
                return -1;
        return 0;
    }
    return -1;
}

static void value_clear(fake_value_t *v)
{
    free(v->name);
    free(v->text);
    free(v->ints);
    free(v->strs);
}

static const dal_param_spec_t *spec_find(const dal_param_spec_t *spec, const char *name)
{
    for (; spec && spec->name; spec++)
        if (strcmp(spec->name, name) == 0)
            return spec;
    return NULL;
}

static fake_value_t *value_find(const dal_plugin_params_t *p, const char *name)
{
    size_t i;

    for (i = 0; i < p->n; i++)
        if (strcmp(p->v[i].name, name) == 0)
            return &p->v[i];
    return NULL;
}

/* Append name = text of the given type to p (room was reserved). */
static int params_add(dal_plugin_params_t *p, const char *name, dal_param_type_t type,
                      const char *text, dal_error_t *err)
{
    fake_value_t *v = &p->v[p->n];

    if (value_find(p, name))
        return fake_set_error(err, DAL_ECONFIG, "parameter '%s' given twice", name);
    v->type = type;
    v->name = strdup(name);
    v->text = strdup(text);
    p->n++; /* from here on fake_params_free releases v */
    if (v->name == NULL || v->text == NULL)
        return fake_set_error(err, DAL_ENOMEM, "out of memory");
    if (parse_value(v, text) != 0)
        return fake_set_error(err, DAL_ECONFIG, "parameter '%s': '%s' is not a valid %s",
                              name, text, type_name(type));
    return 0;
}

/* Check one item against the spec; sets *type to the type to parse it as. */
static int item_check(const dal_param_spec_t *spec, const fake_param_t *it,
                      dal_param_type_t *type, dal_error_t *err)
{
    const dal_param_spec_t *s = spec_find(spec, it->name);

    *type = it->type;
    if (spec == NULL)
        return *type ? 0 : fake_set_error(err, DAL_ECONFIG,
                                          "parameter '%s' has no type and no spec", it->name);
    if (s == NULL)
        return fake_set_error(err, DAL_ECONFIG, "undeclared parameter '%s'", it->name);
    if (*type && *type != s->type)
        return fake_set_error(err, DAL_ECONFIG, "parameter '%s' is declared as %s, given as %s",
                              it->name, type_name(s->type), type_name(*type));
    *type = s->type;
    return 0;
}

/* Required parameters present, defaults for the rest. */
static int spec_complete(dal_plugin_params_t *p, dal_error_t *err)
{
    const dal_param_spec_t *s;

    for (s = p->spec; s && s->name; s++) {
        if (value_find(p, s->name))
            continue;
        if (s->required)
            return fake_set_error(err, DAL_ECONFIG, "required parameter '%s' is missing",
                                  s->name);
        if (s->default_value && params_add(p, s->name, s->type, s->default_value, err) != 0)
            return err ? err->code : DAL_ECONFIG;
    }
    return 0;
}

dal_plugin_params_t *fake_params_new(const dal_param_spec_t *spec, const fake_param_t *items,
                                     size_t n, dal_error_t *err)
{
    const dal_param_spec_t *s;
    dal_plugin_params_t *p;
    dal_param_type_t type;
    size_t room = n, i;

    for (s = spec; s && s->name; s++)
        room++;
    if ((p = calloc(1, sizeof *p)) == NULL || (p->v = calloc(room + 1, sizeof *p->v)) == NULL) {
        free(p);
        fake_set_error(err, DAL_ENOMEM, "out of memory");
        return NULL;
    }
    p->spec = spec;
    for (i = 0; i < n; i++)
        if (item_check(spec, &items[i], &type, err) != 0 ||
            params_add(p, items[i].name, type, items[i].value, err) != 0)
            goto fail;
    if (spec_complete(p, err) != 0)
        goto fail;
    return p;

fail:
    fake_params_free(p);
    return NULL;
}

void fake_params_free(dal_plugin_params_t *p)
{
    size_t i;

    if (p == NULL)
        return;
    for (i = 0; i < p->n; i++)
        value_clear(&p->v[i]);
    free(p->v);
    free(p);
}

unsigned fake_params_misses(const dal_plugin_params_t *p)
{
    return p->misses;
}

/*
 * The value a getter reads, or NULL.  An unset but declared parameter is a
 * legal read; anything else (undeclared, or read in another type) counts as
 * a miss.  The getters take a const set, as the host's do; the counter is
 * test bookkeeping, so it is bumped through a cast.
 */
static const fake_value_t *param_get(const dal_plugin_params_t *p, const char *name,
                                     dal_param_type_t type)
{
    const fake_value_t *v = value_find(p, name);
    const dal_param_spec_t *s = spec_find(p->spec, name);

    if (v && v->type == type)
        return v;
    if (v || p->spec == NULL || s == NULL || s->type != type)
        ((dal_plugin_params_t *)p)->misses++;
    return NULL;
}

static int fake_param_is_set(const dal_plugin_params_t *p, const char *name)
{
    return value_find(p, name) != NULL;
}

static const char *fake_param_string(const dal_plugin_params_t *p, const char *name)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_STRING);

    return v ? v->text : NULL;
}

static int64_t fake_param_int(const dal_plugin_params_t *p, const char *name)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_INT);

    return v ? v->i : 0;
}

static int fake_param_bool(const dal_plugin_params_t *p, const char *name)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_BOOL);

    return v ? v->b : 0;
}

static double fake_param_double(const dal_plugin_params_t *p, const char *name)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_DOUBLE);

    return v ? v->d : 0.0;
}

static int64_t fake_param_duration_ms(const dal_plugin_params_t *p, const char *name)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_DURATION);

    return v ? v->i : 0;
}

static size_t fake_param_int_list(const dal_plugin_params_t *p, const char *name,
                                  const int64_t **vals)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_INT_LIST);

    *vals = v ? v->ints : NULL;
    return v ? v->count : 0;
}

static size_t fake_param_string_list(const dal_plugin_params_t *p, const char *name,
                                     const char *const **vals)
{
    const fake_value_t *v = param_get(p, name, DAL_PARAM_STRING_LIST);

    *vals = v ? v->strs : NULL;
    return v ? v->count : 0;
}

/* ------------------------------------------------- services without a core */

static int fake_query(dal_host_t *host, const char *ds, const char *sql,
                      const dal_value_t *params, size_t nparams, dal_result_t **out,
                      dal_error_t *err)
{
    (void)host, (void)sql, (void)params, (void)nparams;
    *out = NULL;
    return fake_set_error(err, DAL_EUNSUPPORTED, "fake host: no datasource '%s'", ds);
}

static int fake_result_next(dal_result_t *r, dal_error_t *err)
{
    (void)r;
    return fake_set_error(err, DAL_EUNSUPPORTED, "fake host: no results");
}

static const char *fake_result_text(const dal_result_t *r, size_t col, size_t *len)
{
    (void)r, (void)col;
    if (len)
        *len = 0;
    return NULL;
}

static int64_t fake_result_int(const dal_result_t *r, size_t col)
{
    (void)r, (void)col;
    return 0;
}

static uint64_t fake_result_affected_rows(const dal_result_t *r)
{
    (void)r;
    return 0;
}

static void fake_result_free(dal_result_t *r)
{
    (void)r;
}

static int fake_conn_open(dal_host_t *host, dal_conn_t **out, dal_error_t *err)
{
    (void)host;
    *out = NULL;
    return fake_set_error(err, DAL_EUNSUPPORTED, "fake host: no server");
}

static void fake_conn_close(dal_conn_t *c)
{
    (void)c;
}

static int fake_conn_ping(dal_conn_t *c)
{
    (void)c;
    return DAL_EUNSUPPORTED;
}

static int fake_conn_reset(dal_conn_t *c, dal_error_t *err)
{
    (void)c;
    return fake_set_error(err, DAL_EUNSUPPORTED, "fake host: no server");
}

static uint64_t fake_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const dal_host_api_t fake_api = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_host_api_t),
    fake_log,
    fake_set_error,
    fake_param_is_set,
    fake_param_string,
    fake_param_int,
    fake_param_bool,
    fake_param_double,
    fake_param_duration_ms,
    fake_param_int_list,
    fake_param_string_list,
    fake_query,
    fake_result_next,
    fake_result_text,
    fake_result_int,
    fake_result_affected_rows,
    fake_result_free,
    fake_conn_open,
    fake_conn_close,
    fake_conn_ping,
    fake_conn_reset,
    fake_now_ns,
    NULL, /* current_statement: no statements without a core */
    NULL, /* emit: no monitors without a core */
    NULL  /* thread_create: plugins start a plain thread */
};

const dal_host_api_t *fake_host_api(void)
{
    return &fake_api;
}

/* ---------------------------------------------------------- plugin loading */

/* Size of a struct up to and including a member: what ABI 1 plugins have. */
#define END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

static const char *kind_name(dal_plugin_kind_t kind)
{
    switch (kind) {
    case DAL_PLUGIN_SHARD: return "shard";
    case DAL_PLUGIN_IDGEN: return "idgen";
    case DAL_PLUGIN_POOL: return "pool";
    case DAL_PLUGIN_MONITOR: return "monitor";
    case DAL_PLUGIN_SOURCE: return "source";
    }
    return NULL;
}

int fake_plugin_path(char *buf, size_t cap, const char *dir, dal_plugin_kind_t kind,
                     const char *name)
{
    const char *k = kind_name(kind);
    int n = snprintf(buf, cap, "%s/%s_%s.so", dir, k ? k : "unknown", name);

    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The declared parameters are well formed: names, known types, no twins. */
static int check_params(const char *path, const dal_param_spec_t *spec, dal_error_t *err)
{
    const dal_param_spec_t *s;

    for (s = spec; s && s->name; s++) {
        if (s->type < DAL_PARAM_STRING || s->type > DAL_PARAM_STRING_LIST || s->name[0] == '\0')
            return fake_set_error(err, DAL_EPLUGIN, "%s: parameter '%s' has a bad declaration",
                                  path, s->name);
        if (spec_find(spec, s->name) != s)
            return fake_set_error(err, DAL_EPLUGIN, "%s: parameter '%s' declared twice",
                                  path, s->name);
    }
    return 0;
}

/* The ops table is as large as ABI 1 requires and has its mandatory ops. */
static int check_ops(const char *path, const dal_plugin_t *d, dal_error_t *err)
{
    uint32_t size;
    size_t need;
    int ok;

    if (d->ops == NULL)
        return fake_set_error(err, DAL_EPLUGIN, "%s: descriptor has no ops table", path);
    memcpy(&size, d->ops, sizeof size); /* every ops table starts with struct_size */
    switch (d->kind) {
    case DAL_PLUGIN_SHARD: {
        const dal_shard_ops_t *o = d->ops;
        need = offsetof(dal_shard_ops_t, locate_range); /* the last op is optional */
        ok = size >= need && o->create && o->destroy && o->locate;
        break;
    }
    case DAL_PLUGIN_IDGEN: {
        const dal_idgen_ops_t *o = d->ops;
        need = END_OF(dal_idgen_ops_t, next);
        ok = size >= need && o->create && o->destroy && o->next;
        break;
    }
    case DAL_PLUGIN_POOL: {
        const dal_pool_ops_t *o = d->ops;
        need = offsetof(dal_pool_ops_t, stats); /* the last op is optional */
        ok = size >= need && o->create && o->destroy && o->acquire && o->release;
        break;
    }
    default: {
        const dal_monitor_ops_t *o = d->ops;
        need = END_OF(dal_monitor_ops_t, on_event);
        ok = size >= need && o->create && o->destroy && o->on_event;
        break;
    }
    }
    if (!ok)
        return fake_set_error(err, DAL_EPLUGIN, "%s: ops table is too small (%u bytes, "
                              "ABI %d needs %zu) or lacks a required op",
                              path, (unsigned)size, DAL_PLUGIN_ABI_VERSION, need);
    return 0;
}

static int check_descriptor(const char *path, const dal_plugin_t *d, dal_plugin_kind_t kind,
                            const char *name, dal_error_t *err)
{
    if (d == NULL)
        return fake_set_error(err, DAL_EPLUGIN, "%s: " DAL_PLUGIN_ENTRY_SYMBOL "() returned NULL",
                              path);
    if (d->abi_version != DAL_PLUGIN_ABI_VERSION)
        return fake_set_error(err, DAL_EPLUGIN, "%s: built for plugin ABI %u, this host needs %d",
                              path, (unsigned)d->abi_version, DAL_PLUGIN_ABI_VERSION);
    if (d->struct_size < END_OF(dal_plugin_t, ops))
        return fake_set_error(err, DAL_EPLUGIN, "%s: descriptor struct_size %u is too small",
                              path, (unsigned)d->struct_size);
    if (kind_name(d->kind) == NULL || d->kind != kind)
        return fake_set_error(err, DAL_EPLUGIN, "%s: plugin kind is %s (%d), expected %s",
                              path, kind_name(d->kind) ? kind_name(d->kind) : "unknown",
                              (int)d->kind, kind_name(kind));
    if (d->name == NULL || strcmp(d->name, name) != 0)
        return fake_set_error(err, DAL_EPLUGIN, "%s: plugin calls itself '%s', expected '%s'",
                              path, d->name ? d->name : "(null)", name);
    if (check_params(path, d->params, err) != 0)
        return err ? err->code : DAL_EPLUGIN;
    return check_ops(path, d, err);
}

int fake_plugin_open(const char *path, dal_plugin_kind_t kind, const char *name,
                     fake_plugin_t *out, dal_error_t *err)
{
    dal_plugin_entry_fn entry;
    void *handle, *sym;
    int rc;

    out->handle = NULL;
    out->desc = NULL;
    if ((handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
        return fake_set_error(err, DAL_EPLUGIN, "%s: cannot load: %s", path, dlerror());
    if ((sym = dlsym(handle, DAL_PLUGIN_ENTRY_SYMBOL)) == NULL) {
        dlclose(handle);
        return fake_set_error(err, DAL_EPLUGIN, "%s: not a dal plugin (no "
                              DAL_PLUGIN_ENTRY_SYMBOL ")", path);
    }
    /* ISO C has no object-to-function pointer cast; POSIX guarantees the
     * representations match, so copy the bits. */
    memcpy(&entry, &sym, sizeof entry);
    if ((rc = check_descriptor(path, entry(), kind, name, err)) != 0) {
        dlclose(handle);
        return rc;
    }
    out->handle = handle;
    out->desc = entry();
    return 0;
}

void fake_plugin_close(fake_plugin_t *p)
{
    if (p->handle)
        dlclose(p->handle);
    p->handle = NULL;
    p->desc = NULL;
}
