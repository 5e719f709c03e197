/*
 * source_file.c -- the file source, built into the library: a plain path
 * given where a configuration location is accepted.
 *
 * It implements the source plugin ops (dal/plugin.h) like any plugin, but
 * is not a plugin file: the plugin directory may itself be named in the
 * file ([dal] plugin_dir), so the file must be readable before any plugin
 * is.  Watching is inotify on the file's directory, because editors
 * replace a file (write a new one, rename it over) rather than write it.
 */
#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "error.h"
#include "source.h"

/* Quiet time after the last change before delivering: an editor's save is
 * several events (write, close, rename), and they must make one reload. */
#define WATCH_SETTLE_MS 150

typedef struct file_source {
    const dal_host_api_t *api;
    dal_host_t *host;         /* borrowed from the dal_source_t */
    char *path;               /* owned */
    char *text;               /* owned: the last read's document */

    /* watching */
    const dal_source_sink_t *sink; /* borrowed until unwatch */
    pthread_t thread;
    int ifd;                  /* inotify, on the file's directory */
    int stop[2];              /* a pipe: unwatch writes to wake the thread */
    char *base;               /* owned: the file's name within the directory */
} file_source_t;

/* Read the whole file into *text (owned by the caller). */
static int read_file(const char *path, char **text, size_t *len, dal_error_t *err)
{
    char buf[128];
    FILE *f = fopen(path, "r");
    size_t cap = 0, n = 0;
    char *p = NULL;

    *text = NULL;
    if (f == NULL)
        return err_set(err, errno == ENOMEM ? DAL_ENOMEM : DAL_EIO, "%s: cannot open: %s", path,
                       strerror_r(errno, buf, sizeof buf));
    for (;;) {
        if (n + 4096 > cap) {
            char *q = realloc(p, cap = cap ? cap * 2 : 8192);
            if (q == NULL) {
                free(p);
                fclose(f);
                return err_set(err, DAL_ENOMEM, "%s: out of memory", path);
            }
            p = q;
        }
        size_t got = fread(p + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        free(p);
        fclose(f);
        return err_set(err, e == ENOMEM ? DAL_ENOMEM : DAL_EIO, "%s: cannot read: %s", path,
                       strerror_r(e, buf, sizeof buf));
    }
    fclose(f);
    p[n] = '\0';
    *text = p;
    *len = n;
    return 0;
}

static int fs_create(const dal_host_api_t *api, dal_host_t *host, const char *location,
                     const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    file_source_t *f = calloc(1, sizeof *f);

    if (f == NULL || (f->path = strdup(location)) == NULL) {
        free(f);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    f->api = api;
    f->host = host;
    f->ifd = f->stop[0] = f->stop[1] = -1;
    *instance = f;
    return 0;
}

static void fs_destroy(void *instance)
{
    file_source_t *f = instance;

    free(f->path);
    free(f->text);
    free(f);
}

static int fs_read(void *instance, int64_t revision, dal_source_doc_t *doc, dal_error_t *err)
{
    file_source_t *f = instance;
    size_t len = 0;
    char *text;
    int rc;

    if (revision != 0)
        return err_set(err, DAL_EUNSUPPORTED, "%s: a file keeps no revisions", f->path);
    rc = read_file(f->path, &text, &len, err);
    if (rc != 0)
        return rc;
    free(f->text);
    f->text = text;
    doc->struct_size = sizeof *doc;
    doc->text = text;
    doc->len = len;
    doc->name = f->path;
    return 0;
}

/* ---------------------------------------------------------------- watch */

/* Read pending inotify events; 1 if one of them is about our file. */
static int about_our_file(file_source_t *f)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(f->ifd, buf, sizeof buf);
    ssize_t off = 0;
    int hit = 0;

    while (n > 0 && off < n) {
        const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
        if (ev->len > 0 && strcmp(ev->name, f->base) == 0)
            hit = 1;
        off += (ssize_t)sizeof *ev + ev->len;
    }
    return hit;
}

/* The file changed: hand its new text to the host, which checks it. */
static void deliver(file_source_t *f)
{
    dal_source_doc_t doc = {sizeof doc, NULL, 0, f->path, 0, 0};
    dal_error_t err;
    char *text = NULL;

    if (read_file(f->path, &text, &doc.len, &err) != 0) {
        f->api->log(f->host, DAL_LOG_ERROR,
                    "reload failed, the running configuration stays in force: %s", err.message);
        return;
    }
    doc.text = text;
    f->sink->document(f->sink->user, &doc); /* the host logs its outcome */
    free(text);
}

static void *watch_main(void *arg)
{
    file_source_t *f = arg;
    struct pollfd pfd[2] = {{f->ifd, POLLIN, 0}, {f->stop[0], POLLIN, 0}};
    int pending = 0;

    for (;;) {
        int n = poll(pfd, 2, pending ? WATCH_SETTLE_MS : -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (pfd[1].revents & POLLIN))
            break;
        if (n == 0 && pending) {
            pending = 0;
            deliver(f);
            continue;
        }
        if ((pfd[0].revents & POLLIN) && about_our_file(f))
            pending = 1;
    }
    return NULL;
}

static void watch_clear(file_source_t *f)
{
    if (f->ifd >= 0)
        close(f->ifd);
    if (f->stop[0] >= 0) {
        close(f->stop[0]);
        close(f->stop[1]);
    }
    free(f->base);
    f->ifd = f->stop[0] = f->stop[1] = -1;
    f->base = NULL;
    f->sink = NULL;
}

static int fs_watch(void *instance, int64_t after_revision, const dal_source_sink_t *sink,
                    dal_error_t *err)
{
    file_source_t *f = instance;
    char *copy = strdup(f->path), *copy2 = strdup(f->path);
    int rc = 0;

    if (copy == NULL || copy2 == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    f->sink = sink;
    f->base = strdup(basename(copy2));
    f->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (f->base == NULL || f->ifd < 0 || pipe(f->stop) != 0 ||
        inotify_add_watch(f->ifd, dirname(copy), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
        rc = err_set(err, DAL_EIO, "%s: cannot watch the file: %s", f->path, strerror(errno));
        watch_clear(f);
        goto done;
    }
    /* thread_create: the watcher takes none of the application's signals */
    if (f->api->thread_create(&f->thread, watch_main, f) != 0) {
        rc = err_set(err, DAL_EIO, "%s: cannot start the watcher thread", f->path);
        watch_clear(f);
    }
done:
    free(copy);
    free(copy2);
    return rc;
}

static void fs_unwatch(void *instance)
{
    file_source_t *f = instance;

    if (write(f->stop[1], "x", 1) != 1)
        f->api->log(f->host, DAL_LOG_WARN, "cannot wake the watcher thread");
    pthread_join(f->thread, NULL);
    watch_clear(f);
}

static const dal_source_ops_t file_ops = {
    sizeof(dal_source_ops_t), fs_create, fs_destroy, fs_read, fs_watch, fs_unwatch, NULL, NULL,
};

const dal_source_ops_t *source_file_ops(void)
{
    return &file_ops;
}
