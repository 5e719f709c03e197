/*
 * idgen_file.c -- an example ID generator, built outside dal's tree.
 *
 * Blocks of IDs are reserved in a small text file that holds the next free
 * ID: a process locks the file, reads N, writes N + block, syncs it to disk
 * and unlocks; IDs N .. N + block - 1 are then its own.  Every process on
 * the machine that names the same file gets different IDs, and a restart
 * never reissues one (the rest of a block is simply skipped).  It is
 * Leaf's segment idea with a file in place of a database table:
 *
 *     [idgen ticket]
 *     plugin = file
 *     path = /var/lib/myapp/ticket.next
 *     block = 1000
 *
 * The whole plugin talks to dal through two things only: the descriptor at
 * the bottom, and the dal_host_api_t handed to create().  It does not link
 * against libdal.  Build: see the Makefile beside this file.
 */
#define _DEFAULT_SOURCE /* flock */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <dal/plugin.h>

/* One instance per [idgen NAME] section.  next() may run on many threads
 * at once (dal requires it): the mutex orders them, flock() orders the
 * processes. */
typedef struct filegen {
    const dal_host_api_t *api; /* static in dal, outlives the instance */
    dal_host_t *host;
    const char *path;          /* borrowed from dal: valid while the instance lives */
    int64_t block;
    int64_t start;             /* the first ID when the file is new or empty */
    int fd;
    pthread_mutex_t mu;
    int64_t next, end;         /* the block in hand: [next, end) */
} filegen_t;

/* Declared as data: dal checks the INI keys and their types before
 * create() runs, and reports mistakes with FILE:LINE. */
static const dal_param_spec_t file_params[] = {
    {"path", DAL_PARAM_STRING, 1, NULL, "file holding the next free ID (created if missing)"},
    {"block", DAL_PARAM_INT, 0, "1000", "IDs reserved per visit to the file"},
    {"start", DAL_PARAM_INT, 0, "1", "first ID when the file is new"},
    {NULL, 0, 0, NULL, NULL}
};

/* Read the next free ID from the locked file (start if it is empty). */
static int read_next(filegen_t *g, int64_t *out, dal_error_t *err)
{
    char text[32];
    ssize_t n = pread(g->fd, text, sizeof text - 1, 0);
    char *end;

    if (n < 0)
        return g->api->set_error(err, DAL_EIO, "%s: %s", g->path, strerror(errno));
    text[n] = '\0';
    if (n == 0) {
        *out = g->start;
        return 0;
    }
    errno = 0;
    *out = strtoll(text, &end, 10);
    if (errno != 0 || end == text || (*end != '\n' && *end != '\0') || *out < 1)
        return g->api->set_error(err, DAL_ESTATE, "%s does not hold an ID: refusing to guess",
                                 g->path);
    return 0;
}

/* Write the new next free ID and make it durable before any ID is used. */
static int write_next(filegen_t *g, int64_t v, dal_error_t *err)
{
    char text[32];
    int len = snprintf(text, sizeof text, "%" PRId64 "\n", v);

    if (pwrite(g->fd, text, (size_t)len, 0) != len || ftruncate(g->fd, len) != 0 ||
        fsync(g->fd) != 0)
        return g->api->set_error(err, DAL_EIO, "%s: %s", g->path, strerror(errno));
    return 0;
}

/* Reserve a block of at least `want` IDs into [g->next, g->end). */
static int reserve(filegen_t *g, int64_t want, dal_error_t *err)
{
    int64_t size = want > g->block ? want : g->block, first = 0;
    int rc;

    if (flock(g->fd, LOCK_EX) != 0)
        return g->api->set_error(err, DAL_EIO, "%s: lock: %s", g->path, strerror(errno));
    rc = read_next(g, &first, err);
    if (rc == 0 && first > INT64_MAX - size)
        rc = g->api->set_error(err, DAL_ESTATE, "%s: IDs ran out", g->path);
    if (rc == 0)
        rc = write_next(g, first + size, err);
    flock(g->fd, LOCK_UN);
    if (rc != 0)
        return rc;
    g->next = first;
    g->end = first + size;
    g->api->log(g->host, DAL_LOG_DEBUG, "%s: reserved [%" PRId64 ", %" PRId64 ")", g->path,
                first, first + size);
    return 0;
}

/* Fill ids[0..n-1], increasing: a new block is always above the old one. */
static int file_next(void *instance, int64_t *ids, size_t n, dal_error_t *err)
{
    filegen_t *g = instance;
    size_t i;
    int rc = 0;

    pthread_mutex_lock(&g->mu);
    for (i = 0; i < n && rc == 0; i++) {
        if (g->next == g->end)
            rc = reserve(g, (int64_t)(n - i), err);
        if (rc == 0)
            ids[i] = g->next++;
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

static int file_create(const dal_host_api_t *api, dal_host_t *host, const char *name,
                       const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    filegen_t *g;

    (void)name;
    if (api->param_int(params, "block") < 1 || api->param_int(params, "start") < 1)
        return api->set_error(err, DAL_ECONFIG, "block and start must be at least 1");
    if ((g = calloc(1, sizeof *g)) == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    g->api = api;
    g->host = host;
    g->path = api->param_string(params, "path");
    g->block = api->param_int(params, "block");
    g->start = api->param_int(params, "start");
    g->fd = open(g->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (g->fd < 0) {
        int rc = api->set_error(err, DAL_EIO, "%s: %s", g->path, strerror(errno));
        free(g);
        return rc;
    }
    pthread_mutex_init(&g->mu, NULL);
    *instance = g;
    return 0;
}

static void file_destroy(void *instance)
{
    filegen_t *g = instance;

    close(g->fd);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* Ops tables only grow at the end; struct_size tells dal which ops we know. */
static const dal_idgen_ops_t file_ops = {
    sizeof(dal_idgen_ops_t),
    file_create,
    file_destroy,
    file_next
};

static const dal_plugin_t file_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_IDGEN,
    "file",               /* so the file must be idgen_file.so */
    "1.0",
    "IDs in blocks reserved in a local file (one machine, many processes)",
    file_params,
    &file_ops
};

DAL_PLUGIN_DECLARE(file_plugin)
