/*
 * reload.c -- dynamic configuration: building a new snapshot beside the
 * running one and putting it in force (snapshot_swap, handle.c), whether
 * dal_reload asked for it or the watching source (file or store, source.h)
 * delivered a new version.  A new snapshot is refused when it reshards a
 * table without [dal] allow_reshard (config_diff.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#include "handle.h"
#include "reload.h"
#include "xa_daemon.h"
#include "config_diff.h"
#include "error.h"
#include "events.h"
#include "snapshot_build.h"
#include "monitor.h"
#include "source.h"

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

/* Build the snapshot of cfg (consumed) beside cur. */
static int build_next(dal_t *dal, const dal_snapshot_t *cur, dal_config_t *cfg,
                      dal_snapshot_t **next, dal_error_t *err)
{
    int rc = config_reshard_check(cur->cfg, cfg, err);

    *next = NULL;
    if (rc != 0) {
        config_free(cfg);
        return rc;
    }
    rc = snapshot_rebuild(cfg, dal->plugin_dir, &dal->log, cur, next, err);
    if (rc == 0 && (*next)->cfg->validate_connect && (rc = check_connect(*next, err)) != 0) {
        snapshot_unref(*next);
        *next = NULL;
    }
    return rc;
}

/* The version a store already gave us, again (a re-read after compaction
 * that found nothing new): nothing to reload. */
static int already_in_force(dal_t *dal, const dal_source_doc_t *doc)
{
    return doc->revision != 0 && doc->revision == atomic_load(&dal->revision);
}

/* Check doc and swap it in, or keep the running configuration.  doc NULL:
 * read it from the source first.  Caller holds reload_mu. */
static int reload_locked(dal_t *dal, const dal_source_doc_t *doc, dal_error_t *err)
{
    dal_snapshot_t *cur = snapshot_acquire(dal), *next = NULL;
    dal_source_doc_t fresh;
    dal_config_t *cfg = NULL;
    int rc = 0;

    if (doc == NULL) {
        rc = source_read(dal->source, 0, &fresh, err);
        doc = &fresh;
    }
    if (rc == 0 && (doc->flags & DAL_SOURCE_RESYNC))
        atomic_fetch_add(&dal->resyncs, 1);
    if (rc == 0 && already_in_force(dal, doc))
        goto done;
    if (rc == 0)
        rc = config_parse(doc->name, doc->text, doc->len, &cfg, err);
    if (rc == 0)
        rc = build_next(dal, cur, cfg, &next, err);
    if (rc == 0) {
        log_message(&dal->log, DAL_LOG_INFO, "config",
                    "reloaded %s: %zu datasources (%zu kept their connections), %zu tables",
                    doc->name, next->nnodes, next->nreused, next->ntables);
        snapshot_swap(dal, next);
        xa_daemon_follow(dal);
        atomic_fetch_add(&dal->reloads, 1);
        atomic_store(&dal->revision, doc->revision);
        atomic_store(&dal->from_cache, 0);
        source_cache_store(dal->source, doc);
        event_reload(next, 0);
        if (doc->revision != 0)
            event_source(next, source_state_name(atomic_load(&dal->source_state)), NULL,
                         doc->revision);
    } else {
        atomic_fetch_add(&dal->reload_failures, 1);
        log_message(&dal->log, DAL_LOG_ERROR, "config",
                    "reload failed, the running configuration stays in force: %s", err->message);
        event_reload(cur, rc);
    }
done:
    snapshot_unref(cur);
    return rc;
}

int dal_reload(dal_t *dal, dal_error_t *err)
{
    dal_error_t local;
    int rc;

    if (dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_reload: NULL handle");
    if (err == NULL)
        err = &local;
    pthread_mutex_lock(&dal->reload_mu);
    rc = reload_locked(dal, NULL, err);
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

/* sink.document: a new version from the watching source. */
static int on_document(void *user, const dal_source_doc_t *doc)
{
    dal_t *dal = user;
    dal_error_t err;
    const char *delay = getenv("DAL_TEST_RELOAD_DELAY_MS");
    int rc;

    /* a test hook (tests/suites/reshard_ack_test.sh): this instance
     * applies each new version of the document that much later */
    if (delay != NULL && atoi(delay) > 0)
        usleep((useconds_t)atoi(delay) * 1000u);
    pthread_mutex_lock(&dal->reload_mu);
    rc = reload_locked(dal, doc, &err); /* logs its own outcome */
    pthread_mutex_unlock(&dal->reload_mu);
    return rc;
}

const char *source_state_name(int state)
{
    return state == DAL_SOURCE_OK ? "ok" : "unreachable";
}

/* sink.state: logged once per change, and told to the monitors. */
static void on_state(void *user, dal_source_state_t state, const char *detail)
{
    dal_t *dal = user;
    dal_snapshot_t *s;

    if (atomic_exchange(&dal->source_state, (int)state) == (int)state)
        return;
    if (state == DAL_SOURCE_OK)
        log_message(&dal->log, DAL_LOG_INFO, "config", "%s: source reachable again (%s)",
                    source_display(dal->source), detail ? detail : "");
    else
        log_message(&dal->log, DAL_LOG_WARN, "config",
                    "%s: source unreachable (%s): the running configuration stays in force; "
                    "retrying", source_display(dal->source), detail ? detail : "");
    s = snapshot_acquire(dal);
    event_source(s, source_state_name((int)state), detail, atomic_load(&dal->revision));
    snapshot_unref(s);
}

int watch_start(dal_t *dal, dal_error_t *err)
{
    dal->sink.struct_size = sizeof dal->sink;
    dal->sink.user = dal;
    dal->sink.document = on_document;
    dal->sink.state = on_state;
    return source_watch(dal->source, atomic_load(&dal->revision), &dal->sink, err);
}

void watch_stop(dal_t *dal)
{
    if (dal->source != NULL)
        source_unwatch(dal->source);
}

int dal_source_info(dal_t *dal, dal_source_info_t *out)
{
    if (dal == NULL || out == NULL)
        return DAL_EINVAL;
    memset(out, 0, sizeof *out);
    out->location = source_display(dal->source);
    out->state = source_state_name(atomic_load(&dal->source_state));
    out->revision = atomic_load(&dal->revision);
    out->resyncs = atomic_load(&dal->resyncs);
    out->from_cache = atomic_load(&dal->from_cache);
    out->rejected = atomic_load(&dal->reload_failures);
    return 0;
}
