/*
 * source.c -- choosing and driving the configuration source of a location.
 *
 * "SCHEME://REST?OPTIONS" is split here: the scheme picks the plugin, the
 * options become its parameters (checked against its descriptor like INI
 * keys), except cache=, which is ours.  The options may hold a password,
 * so the location is never kept or shown whole: messages use the display
 * form, the location without its options.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "source.h"

#define SCHEME_MAX 32

int source_is_url(const char *location)
{
    size_t n = 0;

    while (n < SCHEME_MAX && (islower((unsigned char)location[n]) ||
                              isdigit((unsigned char)location[n]) || location[n] == '_'))
        n++;
    return n > 0 && n < SCHEME_MAX && strncmp(location + n, "://", 3) == 0;
}

const char *source_display(const dal_source_t *s)
{
    return s->display;
}

/* ------------------------------------------------------------- options */

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* Percent-decode s in place ("%2F" -> "/"); -1 on a malformed escape. */
static int pct_decode(char *s)
{
    char *w = s;

    for (; *s; s++) {
        if (*s != '%') {
            *w++ = *s;
            continue;
        }
        if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
            return -1;
        *w++ = (char)(hexval((unsigned char)s[1]) * 16 + hexval((unsigned char)s[2]));
        s += 2;
    }
    *w = '\0';
    return 0;
}

/* "a=1&b=2" (modified in place) into params, cache= into s->cache.  No
 * value is quoted in a message: any of them may be a password. */
static int parse_options(dal_source_t *s, char *opts, dal_cfg_params_t *params,
                         dal_error_t *err)
{
    char *save = NULL, *item;

    for (item = strtok_r(opts, "&", &save); item; item = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(item, '=');
        dal_cfg_param_t *p;
        if (eq == NULL || eq == item)
            return err_set(err, DAL_ECONFIG, "%s: option %zu is not NAME=VALUE", s->display,
                           params->n + 1);
        *eq = '\0';
        if (pct_decode(eq + 1) != 0)
            return err_set(err, DAL_ECONFIG, "%s: option %s: bad %%-escape", s->display, item);
        if (strcmp(item, "cache") == 0) {
            free(s->cache);
            if ((s->cache = strdup(eq + 1)) == NULL)
                return err_set(err, DAL_ENOMEM, "out of memory");
            continue;
        }
        p = cfg_add_item((void **)&params->items, &params->n, sizeof *p);
        if (p == NULL || (p->name = strdup(item)) == NULL || (p->value = strdup(eq + 1)) == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
    }
    return 0;
}

static void params_clear(dal_cfg_params_t *params)
{
    size_t i;

    for (i = 0; i < params->n; i++) {
        free(params->items[i].name);
        free(params->items[i].value);
    }
    free(params->items);
}

/* ------------------------------------------------------------- opening */

/* source_SCHEME.so, else for "...s" the plugin without the s (etcds). */
static int find_plugin(dal_source_t *s, const char *location, const char *plugin_dir,
                       dal_error_t *err)
{
    char scheme[SCHEME_MAX];
    size_t n = strcspn(location, ":");
    char *path = plugin_path_resolve(plugin_dir, NULL);
    int rc;

    if (path == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    memcpy(scheme, location, n);
    scheme[n] = '\0';
    rc = plugin_find(path, DAL_PLUGIN_SOURCE, scheme, &s->lib, err);
    if (rc == DAL_EPLUGIN && n > 1 && scheme[n - 1] == 's') {
        dal_error_t again;
        scheme[n - 1] = '\0';
        if (plugin_find(path, DAL_PLUGIN_SOURCE, scheme, &s->lib, &again) == 0)
            rc = 0;
    }
    free(path);
    if (rc != 0)
        err_prefix(err, "%s: no source for scheme '%.*s'%s", s->display, (int)n, location,
                   location[n - 1] == 's' ? " (nor its TLS variant's plugin)" : "");
    return rc;
}

static int open_plugin(dal_source_t *s, const char *location, char *opts,
                       const char *plugin_dir, dal_error_t *err)
{
    dal_cfg_params_t params = {NULL, 0};
    const dal_plugin_t *d;
    int rc = find_plugin(s, location, plugin_dir, err);

    if (rc == 0 && opts != NULL)
        rc = parse_options(s, opts, &params, err);
    if (rc != 0)
        goto done;
    d = s->lib->desc;
    rc = plugin_params_build(s->lib, "option", &params, s->display, 0, &s->params, err);
    if (rc != 0)
        goto done;
    s->ops = d->ops;
    snprintf(s->host.component, sizeof s->host.component, "source_%s", d->name);
    rc = s->ops->create(plugin_host_api(), &s->host, s->display, s->params, &s->inst, err);
    if (rc != 0)
        err_prefix(err, "%s", s->display);
done:
    params_clear(&params);
    return rc;
}

int source_open(const char *location, const char *plugin_dir, const dal_logger_t *log,
                dal_source_t **out, dal_error_t *err)
{
    dal_source_t *s = calloc(1, sizeof *s);
    char *copy = strdup(location), *q;
    int rc;

    *out = NULL;
    if (s == NULL || copy == NULL) {
        free(s);
        free(copy);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    s->log = *log;
    s->host.log = &s->log;
    q = source_is_url(copy) ? strchr(copy, '?') : NULL;
    if (q != NULL)
        *q++ = '\0';
    s->display = strdup(copy);
    if (s->display == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    } else if (source_is_url(copy)) {
        rc = open_plugin(s, copy, q, plugin_dir, err);
    } else {
        snprintf(s->host.component, sizeof s->host.component, "config");
        s->ops = source_file_ops();
        rc = s->ops->create(plugin_host_api(), &s->host, copy, NULL, &s->inst, err);
    }
    free(copy);
    if (rc != 0) {
        source_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void source_close(dal_source_t *s)
{
    if (s == NULL)
        return;
    source_unwatch(s);
    if (s->inst != NULL)
        s->ops->destroy(s->inst);
    plugin_params_free(s->params);
    plugin_lib_unref(s->lib);
    free(s->display);
    free(s->cache);
    free(s);
}

/* ------------------------------------------------------------- reading */

int source_read(dal_source_t *s, int64_t revision, dal_source_doc_t *doc, dal_error_t *err)
{
    memset(doc, 0, sizeof *doc);
    return s->ops->read(s->inst, revision, doc, err);
}

static int load_cache(dal_source_t *s, const dal_error_t *why, dal_config_t **out,
                      dal_error_t *err)
{
    int rc = config_load(s->cache, out, err);

    if (rc == 0)
        log_message(&s->log, DAL_LOG_WARN, "config",
                    "%s cannot be reached (%s): starting from the cached copy %s, which may "
                    "be stale; the source is watched and its document replaces the copy as "
                    "soon as it answers",
                    s->display, why->message, s->cache);
    else
        err_prefix(err, "%s cannot be reached (%s), and its cache", s->display, why->message);
    return rc;
}

int source_load(dal_source_t *s, int64_t revision, int use_cache, dal_config_t **out,
                dal_source_doc_t *doc, int *from_cache, dal_error_t *err)
{
    dal_error_t why;
    int rc;

    *out = NULL;
    *from_cache = 0;
    rc = source_read(s, revision, doc, &why);
    if (rc == DAL_ECONNECT && use_cache && s->cache != NULL) {
        *from_cache = 1;
        memset(doc, 0, sizeof *doc);
        return load_cache(s, &why, out, err);
    }
    if (rc == DAL_ECONNECT && use_cache)
        return err_set(err, rc, "%s, and there is no cache to start from (add "
                       "cache=PATH to the location's options)", why.message);
    if (rc != 0) {
        if (err != NULL)
            *err = why;
        return rc;
    }
    return config_parse(doc->name, doc->text, doc->len, out, err);
}

/* ------------------------------------------------------------- caching */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

void source_cache_store(dal_source_t *s, const dal_source_doc_t *doc)
{
    char *tmp = NULL;
    int fd = -1, ok = 0;

    if (s->cache == NULL)
        return;
    /* temp file + fsync + rename: a crash leaves the old copy or the new
     * one, never half of one */
    if (asprintf(&tmp, "%s.tmp.%ld", s->cache, (long)getpid()) >= 0 &&
        (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0 &&
        write_all(fd, doc->text, doc->len) == 0 && fsync(fd) == 0) {
        close(fd);
        fd = -1;
        ok = rename(tmp, s->cache) == 0;
    }
    if (!ok)
        log_message(&s->log, DAL_LOG_WARN, "config", "%s: cannot write the cache file %s: %s",
                    s->display, s->cache, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (!ok && tmp != NULL)
        unlink(tmp);
    free(tmp);
}

/* ------------------------------------------------------------ watching */

int source_can_watch(const dal_source_t *s)
{
    return s->ops->watch != NULL;
}

int source_watch(dal_source_t *s, int64_t after_revision, const dal_source_sink_t *sink,
                 dal_error_t *err)
{
    int rc;

    if (s->ops->watch == NULL)
        return err_set(err, DAL_EUNSUPPORTED, "%s: this source cannot be watched", s->display);
    rc = s->ops->watch(s->inst, after_revision, sink, err);
    s->watching = rc == 0;
    return rc;
}

void source_unwatch(dal_source_t *s)
{
    if (s->watching)
        s->ops->unwatch(s->inst);
    s->watching = 0;
}
