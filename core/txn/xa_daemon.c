/*
 * xa_daemon.c -- background XA recovery (xa_daemon.h), which
 * dal_open and dal_close start and stop.
 *
 * With [dal] xa_log set, every instance runs this thread: it keeps a
 * connection of its own to the log's datasource, on which it holds the
 * named lock that says the instance is alive and, unless
 * xa_recover_interval = 0, tries each tick (a second, or the interval
 * when shorter) to take the recovery lease, another named lock (xa.c).
 * The server releases both when the connection goes away, so the lease
 * of an instance that died is free at once; a lost connection (the log's
 * server restarted) loses the lease, and the next tick connects again
 * and takes what is free.
 *
 * The holder runs a pass as soon as it takes the lease (at start, or
 * when the holder before it died), then every interval, sooner when a
 * pass left a branch that can be finished earlier (xa_recover_pass's
 * due_ms), and as soon as it sees (looking every WATCH_MS) a registered
 * instance dead or a decision left unfinished (xa_watch).  Each tick also
 * decides the transactions this process's coordinators gave up on
 * (xa_abandon).  The interval and the log are read from the
 * running snapshot at each tick, so a reload changes them.
 */
#include <errmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"
#include "xa_daemon.h"
#include "clock.h"
#include "conn.h"
#include "error.h"
#include "exec.h"
#include "thread.h"
#include "xa.h"

#define TICK_MS 1000
#define WATCH_MS 2000

struct dal_xa_daemon {
    dal_t *dal;             /* borrowed: it outlives the thread */
    ticker_t ticker;        /* calls daemon_tick */
    /* the rest: the thread's own until ticker_stop */
    char name[XA_ID_MAX + 1]; /* this instance: "HOST:PID" */
    dal_conn_t *lc;         /* owned: the connection holding the locks, or NULL */
    dal_config_t *lc_cfg;   /* one reference: the configuration lc->ds points into */
    int live, lease;        /* the locks lc holds */
    int quiet;              /* a failure was logged: the same is not logged each tick */
    int unrecorded;         /* the locks are held, but not yet in the log's tables */
    uint64_t next_pass_ns;  /* monotonic: the holder's next pass */
    uint64_t last_pass_ns;
    uint64_t last_watch_ns; /* the last look for deaths and unfinished decisions */
    char last_pass_at[32];  /* the log server's clock when the last pass began */
};

/* Close the lock connection (the server lets the locks go with it). */
static void locks_drop(struct dal_xa_daemon *d, int leave)
{
    if (d->lc == NULL)
        return;
    if (leave && d->live)
        xa_locks_leave(d->lc, d->name);
    conn_close(d->lc);
    config_free(d->lc_cfg);
    d->lc = NULL;
    d->lc_cfg = NULL;
    d->live = d->lease = 0;
}

static void say(struct dal_xa_daemon *d, dal_log_level_t level, const char *what,
                const dal_error_t *err)
{
    if (!d->quiet)
        log_message(&d->dal->log, level, "xa", "%s: %s", what, err->message);
    d->quiet = 1;
}

/* One recovery pass; when the next one is due (ms). */
static uint32_t daemon_pass(struct dal_xa_daemon *d)
{
    dal_xa_report_t rep;
    dal_error_t err;
    uint32_t due = UINT32_MAX;

    if (xa_recover_pass(d->dal, UINT32_MAX, &rep, &due, &err) != 0)
        log_message(&d->dal->log, DAL_LOG_WARN, "xa", "recovery: %s", err.message);
    else if (rep.committed + rep.rolled_back + rep.pruned > 0)
        log_message(&d->dal->log, DAL_LOG_INFO, "xa",
                    "recovery: committed %u, rolled back %u, pruned %u decisions",
                    rep.committed, rep.rolled_back, rep.pruned);
    return due;
}

/* The lock connection to ds, opened if needed (ds from cfg); 0 if up. */
static int locks_conn(struct dal_xa_daemon *d, dal_config_t *cfg, const dal_cfg_datasource_t *ds)
{
    dal_error_t err;

    /* a reload that changed the log's datasource: start over there */
    if (d->lc != NULL && (strcmp(ds->name, d->lc->ds->name) != 0 ||
                          strcmp(ds->master.display, d->lc->ds->master.display) != 0))
        locks_drop(d, 1);
    if (d->lc != NULL)
        return 0;
    if (conn_open(ds, &d->lc, &err) != 0) {
        d->lc = NULL;
        say(d, DAL_LOG_WARN, "recovery lease: cannot connect to the xa_log datasource", &err);
        return -1;
    }
    d->lc_cfg = config_ref(cfg);
    return 0;
}

/* Hold the locks, and run a pass when one is due; how long to wait. */
static uint32_t daemon_tick(void *arg)
{
    struct dal_xa_daemon *d = arg;
    dal_snapshot_t *snap = snapshot_acquire(d->dal);
    uint32_t interval = snap->cfg->xa_recover_interval_ms, due;
    uint32_t tick = interval > 0 && interval < TICK_MS ? interval : TICK_MS;
    const dal_cfg_datasource_t *ds =
        snap->cfg->xa_log != NULL ? config_datasource(snap->cfg, snap->cfg->xa_log) : NULL;
    int had, pass = 0, rc;
    uint64_t now;
    dal_error_t err;

    if (ds == NULL) {
        locks_drop(d, 1); /* a reload removed xa_log */
        snapshot_unref(snap);
        return TICK_MS;
    }
    if (locks_conn(d, snap->cfg, ds) != 0) {
        snapshot_unref(snap);
        return tick;
    }
    xa_decide_abandoned(snap);
    snapshot_unref(snap);
    had = d->lease;
    rc = xa_locks_hold(d->lc, d->name, interval > 0, d->unrecorded, &d->live, &d->lease, &err);
    if (rc < 0) {
        if (mysql_errno(&d->lc->mysql) >= CR_MIN_ERROR && mysql_errno(&d->lc->mysql) <= CR_MAX_ERROR) {
            d->quiet = 0;
            say(d, DAL_LOG_WARN,
                had ? "recovery lease lost with the connection to the xa_log datasource"
                    : "the connection to the xa_log datasource was lost",
                &err);
            locks_drop(d, 0);
        } else {
            say(d, DAL_LOG_WARN, "recovery lease", &err);
        }
        return tick;
    }
    /* the tables missing (a log older than them, or `dal xa init` not run
     * yet): recovery's own pass says what is wrong at WARN */
    if (rc > 0)
        say(d, DAL_LOG_INFO, "recovery lease held but not recorded (run `dal xa init`)", &err);
    else
        d->quiet = 0;
    d->unrecorded = rc > 0;
    now = clock_now_ns();
    if (d->lease && !had) {
        log_message(&d->dal->log, DAL_LOG_INFO, "xa", "recovery lease taken by %s", d->name);
        pass = 1;
    } else if (d->lease && now >= d->next_pass_ns) {
        pass = 1;
    } else if (d->lease && now - d->last_pass_ns >= WATCH_MS * 1000000ull &&
               now - d->last_watch_ns >= WATCH_MS * 1000000ull) {
        d->last_watch_ns = now;
        pass = xa_watch(d->lc, d->last_pass_at, &err) > 0;
    }
    if (!pass || xa_log_now(d->lc, d->last_pass_at, sizeof d->last_pass_at, &err) != 0)
        return tick;
    due = daemon_pass(d);
    if (due > interval)
        due = interval;
    d->last_pass_ns = now;
    d->next_pass_ns = clock_now_ns() + due * 1000000ull;
    return tick;
}

int xa_daemon_start(dal_t *dal, struct dal_xa_daemon **out, dal_error_t *err)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    int wanted = snap->cfg->xa_log != NULL;
    struct dal_xa_daemon *d;

    snapshot_unref(snap);
    *out = NULL;
    exec_on_lock_wait(xa_explain_wait); /* a reload may set xa_log later */
    if (!wanted)
        return 0;
    if ((d = calloc(1, sizeof *d)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    d->dal = dal;
    xa_instance_name(d->name);
    if (ticker_start(&d->ticker, daemon_tick, d) != 0) {
        free(d);
        return err_set(err, DAL_EIO, "cannot start the XA recovery thread");
    }
    *out = d;
    return 0;
}

void xa_daemon_stop(struct dal_xa_daemon *d)
{
    if (d == NULL)
        return;
    ticker_stop(&d->ticker);
    locks_drop(d, 1);   /* the thread's connection, now the caller's */
    free(d);
}

void xa_daemon_follow(dal_t *dal)
{
    dal_error_t err;

    if (dal->xa == NULL && xa_daemon_start(dal, &dal->xa, &err) != 0)
        log_message(&dal->log, DAL_LOG_WARN, "xa", "after the reload: %s", err.message);
}
