/*
 * reload.c -- dynamic configuration: building a new snapshot beside the
 * running one and swapping it in, watching the file, comparing two files.
 *
 * The swap is the only place a snapshot pointer changes.  Statements take
 * their reference with snapshot_acquire (dal.c), which announces itself
 * in dal->readers for the few instructions between loading the pointer and
 * incrementing the snapshot's count; the swap exchanges the pointer and then
 * waits until no reader is inside that window, after which no one can still
 * be about to reference the old snapshot without holding a count on it.
 */
#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "dal_int.h"
#include "error.h"
#include "events.h"
#include "snapshot_build.h"
#include "monitor.h"

/* ------------------------------------------------------------ resharding */

static int params_same(const dal_cfg_params_t *a, const dal_cfg_params_t *b)
{
    size_t i, j;

    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++) {
        for (j = 0; j < b->n && strcmp(a->items[i].name, b->items[j].name) != 0; j++)
            ;
        if (j == b->n || strcmp(a->items[i].value, b->items[j].value) != 0)
            return 0;
    }
    return 1;
}

static int str_differs(const char *a, const char *b)
{
    return (a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0);
}

/* What moves rows if it changes: describe the first such change in why. */
static int layout_change(const dal_cfg_table_t *a, const dal_cfg_table_t *b, char *why,
                         size_t cap)
{
    if (a->kind != b->kind)
        snprintf(why, cap, "its kind changes (sharded/broadcast/single)");
    else if (str_differs(a->datasource, b->datasource))
        snprintf(why, cap, "datasource %s -> %s", a->datasource, b->datasource);
    else if (a->db_shard_num != b->db_shard_num)
        snprintf(why, cap, "db_shard_num %u -> %u", a->db_shard_num, b->db_shard_num);
    else if (a->table_shard_num != b->table_shard_num)
        snprintf(why, cap, "table_shard_num %u -> %u", a->table_shard_num, b->table_shard_num);
    else if (str_differs(a->strategy, b->strategy))
        snprintf(why, cap, "strategy %s -> %s", a->strategy ? a->strategy : "(none)",
                 b->strategy ? b->strategy : "(none)");
    else if (!params_same(&a->strategy_params, &b->strategy_params))
        snprintf(why, cap, "the strategy's parameters change");
    else if (str_differs(a->shard_key, b->shard_key))
        snprintf(why, cap, "shard_key %s -> %s", a->shard_key ? a->shard_key : "(none)",
                 b->shard_key ? b->shard_key : "(none)");
    else
        return 0;
    return 1;
}

static int reshard_check(const dal_config_t *old, const dal_config_t *next, dal_error_t *err)
{
    char why[256];
    size_t i;

    for (i = 0; i < next->ntables; i++) {
        const dal_cfg_table_t *b = &next->tables[i];
        const dal_cfg_table_t *a = config_table(old, b->name);
        if (a == NULL || !layout_change(a, b, why, sizeof why) || next->allow_reshard)
            continue;
        return err_set(err, DAL_ECONFIG,
                       "%s:%d: table %s: %s moves where its rows live: that is a resharding, "
                       "not a reload (migrate the data, then set [dal] allow_reshard = true)",
                       next->path, b->line, b->name, why);
    }
    return 0;
}

/* ----------------------------------------------------------------- reload */

/* With validate_connect, every node the reload creates must answer. */
static int check_connect(const dal_snapshot_t *s, dal_error_t *err)
{
    size_t i;

    for (i = 0; i < s->nnodes; i++) {
        dal_conn_t *c = NULL;
        int rc;
        if (s->nodes[i]->owner != s->cfg)
            continue; /* carried over: already serving */
        rc = conn_open(s->nodes[i]->cfg, &c, err);
        if (rc != 0) {
            err_prefix(err, "%s:%d: validate_connect", s->cfg->path, s->nodes[i]->cfg->line);
            return rc;
        }
        conn_close(c);
    }
    return 0;
}

static void swap(dal_t *dal, dal_snapshot_t *next)
{
    dal_snapshot_t *old = atomic_exchange(&dal->snap, next);

    while (atomic_load(&dal->readers) != 0)
        sched_yield();
    snapshot_unref(old);
}

static int build_next(dal_t *dal, const dal_snapshot_t *cur, dal_snapshot_t **next,
                      dal_error_t *err)
{
    dal_config_t *cfg = NULL;
    int rc = config_load(dal->path, &cfg, err);

    *next = NULL;
    if (rc == 0 && (rc = reshard_check(cur->cfg, cfg, err)) != 0)
        config_free(cfg);
    if (rc == 0)
        rc = snapshot_rebuild(cfg, dal->plugin_dir, &dal->log, cur, next, err);
    if (rc == 0 && (*next)->cfg->validate_connect && (rc = check_connect(*next, err)) != 0) {
        snapshot_unref(*next);
        *next = NULL;
    }
    return rc;
}

int dal_reload(dal_t *dal, dal_error_t *err)
{
    dal_snapshot_t *cur, *next = NULL;
    dal_error_t local;
    int rc;

    if (dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_reload: NULL handle");
    if (err == NULL)
        err = &local;
    pthread_mutex_lock(&dal->reload_mu);
    cur = snapshot_acquire(dal);
    rc = build_next(dal, cur, &next, err);
    if (rc == 0) {
        log_message(&dal->log, DAL_LOG_INFO, "config",
                    "reloaded %s: %zu datasources (%zu kept their connections), %zu tables",
                    dal->path, next->nnodes, next->nreused, next->ntables);
        swap(dal, next);
        atomic_fetch_add(&dal->reloads, 1);
        event_reload(next, 0);
    } else {
        atomic_fetch_add(&dal->reload_failures, 1);
        log_message(&dal->log, DAL_LOG_ERROR, "config",
                    "reload failed, the running configuration stays in force: %s", err->message);
        event_reload(cur, rc);
    }
    snapshot_unref(cur);
    pthread_mutex_unlock(&dal->reload_mu);
    return rc;
}

void dal_reload_stats(dal_t *dal, uint64_t *reloads, uint64_t *failures)
{
    if (reloads != NULL)
        *reloads = dal ? atomic_load(&dal->reloads) : 0;
    if (failures != NULL)
        *failures = dal ? atomic_load(&dal->reload_failures) : 0;
}

/* ------------------------------------------------------------------ watch */

/* Quiet time after the last change before reloading: an editor's save is
 * several events (write, close, rename), and they must make one reload. */
#define WATCH_SETTLE_MS 150

struct dal_watch {
    dal_t *dal;
    pthread_t thread;
    int ifd;          /* inotify, on the file's directory (editors replace files) */
    int stop[2];      /* a pipe: watch_stop writes to wake the thread */
    char *base;       /* owned: the file's name within the directory */
};

/* Read pending inotify events; 1 if one of them is about our file. */
static int about_our_file(struct dal_watch *w)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(w->ifd, buf, sizeof buf);
    ssize_t off = 0;
    int hit = 0;

    while (n > 0 && off < n) {
        const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
        if (ev->len > 0 && strcmp(ev->name, w->base) == 0)
            hit = 1;
        off += (ssize_t)sizeof *ev + ev->len;
    }
    return hit;
}

static void *watch_main(void *arg)
{
    struct dal_watch *w = arg;
    struct pollfd pfd[2] = {{w->ifd, POLLIN, 0}, {w->stop[0], POLLIN, 0}};
    int pending = 0;

    for (;;) {
        int n = poll(pfd, 2, pending ? WATCH_SETTLE_MS : -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (pfd[1].revents & POLLIN))
            break;
        if (n == 0 && pending) {
            dal_error_t err;
            pending = 0;
            dal_reload(w->dal, &err); /* logs its own outcome */
            continue;
        }
        if ((pfd[0].revents & POLLIN) && about_our_file(w))
            pending = 1;
    }
    return NULL;
}

static void watch_free(struct dal_watch *w)
{
    if (w->ifd >= 0)
        close(w->ifd);
    if (w->stop[0] >= 0) {
        close(w->stop[0]);
        close(w->stop[1]);
    }
    free(w->base);
    free(w);
}

int watch_start(dal_t *dal, dal_error_t *err)
{
    struct dal_watch *w = calloc(1, sizeof *w);
    char *copy = strdup(dal->path), *copy2 = strdup(dal->path);
    int rc = 0;

    if (w == NULL || copy == NULL || copy2 == NULL) {
        free(w);
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    w->dal = dal;
    w->stop[0] = w->stop[1] = -1;
    w->base = strdup(basename(copy2));
    w->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (w->base == NULL || w->ifd < 0 || pipe(w->stop) != 0 ||
        inotify_add_watch(w->ifd, dirname(copy), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
        rc = err_set(err, DAL_EIO, "%s: cannot watch the file: %s", dal->path,
                     strerror(errno));
        watch_free(w);
        goto done;
    }
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        rc = err_set(err, DAL_EIO, "%s: cannot start the watcher thread", dal->path);
        watch_free(w);
        goto done;
    }
    dal->watch = w;
done:
    free(copy);
    free(copy2);
    return rc;
}

void watch_stop(dal_t *dal)
{
    struct dal_watch *w = dal->watch;

    if (w == NULL)
        return;
    if (write(w->stop[1], "x", 1) != 1)
        log_message(&dal->log, DAL_LOG_WARN, "config", "cannot wake the watcher thread");
    pthread_join(w->thread, NULL);
    watch_free(w);
    dal->watch = NULL;
}

/* ------------------------------------------------------------------- diff */

typedef struct differ {
    dal_diff_fn fn;
    void *user;
    int reshard;       /* a layout change was reported */
} differ_t;

static void report(differ_t *d, const char *what, const char *name, const char *change)
{
    d->fn(d->user, what, name, change);
}

static void diff_datasources(differ_t *d, const dal_config_t *a, const dal_config_t *b)
{
    char change[640];
    size_t i;

    for (i = 0; i < b->ndatasources; i++) {
        const dal_cfg_datasource_t *y = &b->datasources[i], *x = config_datasource(a, y->name);
        if (x == NULL) {
            snprintf(change, sizeof change, "added (master %s)", y->master.display);
            report(d, "datasource", y->name, change);
        } else if (!url_equal(&x->master, &y->master)) {
            snprintf(change, sizeof change, "master %s -> %s (new pool)", x->master.display,
                     y->master.display);
            report(d, "datasource", y->name, change);
        } else if (x->nreplicas != y->nreplicas) {
            snprintf(change, sizeof change, "replicas %zu -> %zu (new pool)", x->nreplicas,
                     y->nreplicas);
            report(d, "datasource", y->name, change);
        } else if (!datasource_same(a, x, b, y)) {
            report(d, "datasource", y->name, "settings changed (new pool)");
        }
    }
    for (i = 0; i < a->ndatasources; i++)
        if (config_datasource(b, a->datasources[i].name) == NULL)
            report(d, "datasource", a->datasources[i].name, "removed");
}

static void diff_tables(differ_t *d, const dal_config_t *a, const dal_config_t *b)
{
    char why[256], change[300];
    size_t i;

    for (i = 0; i < b->ntables; i++) {
        const dal_cfg_table_t *y = &b->tables[i], *x = config_table(a, y->name);
        if (x == NULL) {
            report(d, "table", y->name, "added");
        } else if (layout_change(x, y, why, sizeof why)) {
            snprintf(change, sizeof change, "RESHARD: %s%s", why,
                     b->allow_reshard ? " (allowed by allow_reshard)" : "");
            report(d, "table", y->name, change);
            d->reshard |= !b->allow_reshard;
        } else if (x->allow_scatter != y->allow_scatter || str_differs(x->binding, y->binding) ||
                   str_differs(x->id_column, y->id_column) || str_differs(x->idgen, y->idgen)) {
            report(d, "table", y->name, "settings changed");
        }
    }
    for (i = 0; i < a->ntables; i++)
        if (config_table(b, a->tables[i].name) == NULL)
            report(d, "table", a->tables[i].name, "removed");
}

/* [monitor] and [idgen] sections: a name, a plugin and parameters each. */
static void diff_sections(differ_t *d, const char *what, size_t na, size_t nb,
                          const char *(*name)(const dal_config_t *, size_t),
                          int (*same)(const dal_config_t *, size_t, const dal_config_t *, size_t),
                          const dal_config_t *a, const dal_config_t *b)
{
    size_t i, j;

    for (j = 0; j < nb; j++) {
        for (i = 0; i < na && strcmp(name(a, i), name(b, j)) != 0; i++)
            ;
        if (i == na)
            report(d, what, name(b, j), "added");
        else if (!same(a, i, b, j))
            report(d, what, name(b, j), "changed");
    }
    for (i = 0; i < na; i++) {
        for (j = 0; j < nb && strcmp(name(a, i), name(b, j)) != 0; j++)
            ;
        if (j == nb)
            report(d, what, name(a, i), "removed");
    }
}

static const char *monitor_name(const dal_config_t *c, size_t i)
{
    return c->monitors[i].name;
}

static int monitor_same(const dal_config_t *a, size_t i, const dal_config_t *b, size_t j)
{
    const dal_cfg_monitor_t *x = &a->monitors[i], *y = &b->monitors[j];

    return !str_differs(x->plugin, y->plugin) && x->enabled == y->enabled &&
           params_same(&x->params, &y->params);
}

static const char *idgen_name(const dal_config_t *c, size_t i)
{
    return c->idgens[i].name;
}

static int idgen_same(const dal_config_t *a, size_t i, const dal_config_t *b, size_t j)
{
    const dal_cfg_idgen_t *x = &a->idgens[i], *y = &b->idgens[j];

    return !str_differs(x->plugin, y->plugin) && params_same(&x->params, &y->params);
}

static void diff_dal(differ_t *d, const dal_config_t *a, const dal_config_t *b)
{
    char change[300];

    if (str_differs(a->plugin_dir, b->plugin_dir))
        report(d, "dal", "plugin_dir", "changed");
    if (str_differs(a->default_datasource, b->default_datasource)) {
        snprintf(change, sizeof change, "%s -> %s",
                 a->default_datasource ? a->default_datasource : "(none)",
                 b->default_datasource ? b->default_datasource : "(none)");
        report(d, "dal", "default_datasource", change);
    }
    if (str_differs(a->pool, b->pool) || !params_same(&a->pool_params, &b->pool_params))
        report(d, "dal", "pool", "changed (every datasource gets a new pool)");
    if (a->max_parallel != b->max_parallel) {
        snprintf(change, sizeof change, "%u -> %u", a->max_parallel, b->max_parallel);
        report(d, "dal", "max_parallel", change);
    }
}

int dal_config_diff(const char *running, const char *candidate, const dal_open_opts_t *opts,
                    dal_diff_fn fn, void *user, dal_error_t *err)
{
    dal_config_t *a = NULL, *b = NULL;
    differ_t d = {fn, user, 0};
    int rc;

    if (running == NULL || candidate == NULL || fn == NULL)
        return err_set(err, DAL_EINVAL, "dal_config_diff: NULL argument");
    rc = dal_check_config(candidate, opts, err);
    if (rc == 0)
        rc = config_load(running, &a, err);
    if (rc == 0)
        rc = config_load(candidate, &b, err);
    if (rc != 0)
        goto done;
    diff_dal(&d, a, b);
    diff_datasources(&d, a, b);
    diff_tables(&d, a, b);
    diff_sections(&d, "monitor", a->nmonitors, b->nmonitors, monitor_name, monitor_same, a, b);
    diff_sections(&d, "idgen", a->nidgens, b->nidgens, idgen_name, idgen_same, a, b);
    if (d.reshard)
        rc = reshard_check(a, b, err);
done:
    config_free(a);
    config_free(b);
    return rc;
}
