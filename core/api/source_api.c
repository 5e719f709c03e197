/*
 * source_api.c -- configuration sources for tools: the public dal_source_*
 * functions behind `dal config`, and dal_check_config and dal_config_diff,
 * which load any location (file or store) without opening a handle.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"
#include "config_diff.h"
#include "library.h"
#include "error.h"
#include "snapshot_build.h"

static int open_with(const char *location, const dal_open_opts_t *opts, dal_source_t **out,
                     dal_error_t *err)
{
    dal_logger_t log;

    library_ensure_init();
    logger_init(&log, opts);
    return source_open(location, opts ? opts->plugin_dir : NULL, &log, out, err);
}

static int location_load(const char *location, const dal_open_opts_t *opts, dal_config_t **out,
                  dal_error_t *err)
{
    dal_source_t *s = NULL;
    dal_source_doc_t doc;
    int from_cache, rc = open_with(location, opts, &s, err);

    if (rc == 0)
        rc = source_load(s, 0, 0, out, &doc, &from_cache, err);
    source_close(s);
    return rc;
}

int dal_source_open(const char *location, const dal_open_opts_t *opts, dal_source_t **out,
                    dal_error_t *err)
{
    if (out == NULL || location == NULL)
        return err_set(err, DAL_EINVAL, "dal_source_open: NULL argument");
    return open_with(location, opts, out, err);
}

void dal_source_close(dal_source_t *src)
{
    source_close(src);
}

int dal_source_get(dal_source_t *src, int64_t revision, char **text, size_t *len, char **name,
                   int64_t *rev, dal_error_t *err)
{
    dal_source_doc_t doc;
    int rc;

    if (src == NULL || text == NULL || len == NULL)
        return err_set(err, DAL_EINVAL, "dal_source_get: NULL argument");
    *text = NULL;
    if ((rc = source_read(src, revision, &doc, err)) != 0)
        return rc;
    *text = malloc(doc.len + 1);
    if (name != NULL)
        *name = strdup(doc.name);
    if (*text == NULL || (name != NULL && *name == NULL)) {
        free(*text);
        *text = NULL;
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    memcpy(*text, doc.text, doc.len);
    (*text)[doc.len] = '\0';
    *len = doc.len;
    if (rev != NULL)
        *rev = doc.revision;
    return 0;
}

int dal_source_put(dal_source_t *src, const char *text, size_t len, int64_t expect_revision,
                   int64_t *revision, dal_error_t *err)
{
    int64_t ignored;

    if (src == NULL || text == NULL)
        return err_set(err, DAL_EINVAL, "dal_source_put: NULL argument");
    if (src->ops->write == NULL)
        return err_set(err, DAL_EUNSUPPORTED, "%s: this source cannot be written",
                       source_display(src));
    return src->ops->write(src->inst, text, len, expect_revision, revision ? revision : &ignored,
                           err);
}

int dal_source_history(dal_source_t *src, dal_history_fn fn, void *user, dal_error_t *err)
{
    if (src == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_source_history: NULL argument");
    if (src->ops->history == NULL)
        return err_set(err, DAL_EUNSUPPORTED, "%s: this source keeps no history",
                       source_display(src));
    return src->ops->history(src->inst, fn, user, err);
}

/* ------------------------------------------------------------- follow */

typedef struct follower {
    dal_follow_fn fn;
    void *user;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} follower_t;

static int follow_document(void *user, const dal_source_doc_t *doc)
{
    follower_t *f = user;
    int stop;

    pthread_mutex_lock(&f->mu);
    stop = f->done || f->fn(f->user, doc->name, doc->text, doc->len, doc->revision) != 0;
    if (stop) {
        f->done = 1;
        pthread_cond_signal(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return 0;
}

/* The source logs its outages itself; following just waits them out. */
static void follow_state(void *user, dal_source_state_t state, const char *detail)
{
}

int dal_source_follow(dal_source_t *src, dal_follow_fn fn, void *user, dal_error_t *err)
{
    follower_t f = {fn, user, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    dal_source_sink_t sink = {sizeof sink, &f, follow_document, follow_state};
    int rc;

    if (src == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_source_follow: NULL argument");
    /* revision 0: the source reads the newest version and delivers it first */
    rc = source_watch(src, 0, &sink, err);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&f.mu);
    while (!f.done)
        pthread_cond_wait(&f.cv, &f.mu);
    pthread_mutex_unlock(&f.mu);
    source_unwatch(src);
    return 0;
}

/* ------------------------------------------------------------- diff */

int dal_config_diff_text(const char *running_name, const char *running, size_t running_len,
                         const char *candidate_name, const char *candidate, size_t candidate_len,
                         const dal_open_opts_t *opts, dal_diff_fn fn, void *user,
                         dal_error_t *err)
{
    dal_config_t *a = NULL, *b = NULL;
    dal_snapshot_t *snap = NULL;
    dal_logger_t log;
    int rc;

    if (running_name == NULL || running == NULL || candidate_name == NULL ||
        candidate == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_config_diff_text: NULL argument");
    library_ensure_init();
    logger_init(&log, opts);
    /* the candidate is checked whole, plugins loaded, as dal_check_config */
    rc = config_parse(candidate_name, candidate, candidate_len, &b, err);
    if (rc == 0)
        rc = snapshot_build(config_ref(b), opts ? opts->plugin_dir : NULL, &log, &snap, err);
    snapshot_unref(snap);
    if (rc == 0)
        rc = config_parse(running_name, running, running_len, &a, err);
    if (rc == 0)
        rc = config_diff(a, b, fn, user, err);
    config_free(a);
    config_free(b);
    return rc;
}

int dal_check_config(const char *path, const dal_open_opts_t *opts, dal_error_t *err)
{
    dal_snapshot_t *snap = NULL;
    dal_config_t *cfg = NULL;
    dal_logger_t log;
    int rc;

    if (path == NULL)
        return err_set(err, DAL_EINVAL, "no configuration file given");
    logger_init(&log, opts);
    rc = location_load(path, opts, &cfg, err);
    if (rc == 0)
        rc = snapshot_build(cfg, opts ? opts->plugin_dir : NULL, &log, &snap, err);
    snapshot_unref(snap);
    return rc;
}

int dal_config_diff(const char *running, const char *candidate, const dal_open_opts_t *opts,
                    dal_diff_fn fn, void *user, dal_error_t *err)
{
    dal_config_t *a = NULL, *b = NULL;
    int rc;

    if (running == NULL || candidate == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_config_diff: NULL argument");
    rc = dal_check_config(candidate, opts, err);
    if (rc == 0)
        rc = location_load(running, opts, &a, err);
    if (rc == 0)
        rc = location_load(candidate, opts, &b, err);
    if (rc == 0)
        rc = config_diff(a, b, fn, user, err);
    config_free(a);
    config_free(b);
    return rc;
}
