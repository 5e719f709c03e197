/*
 * health.c -- the replica checker of a node (see health.h).
 *
 * One round asks every server of the node at once: each probe is a small
 * state machine over the non-blocking client API (connect, query, store)
 * and one poll() waits on all of them and on a wake-up pipe.  A round ends
 * when every probe has its answer, at the connect timeout or the check
 * interval (at least a second), whichever comes first (what has not
 * answered by then is down), or when the node is freed: its probes are then
 * cut short by shutting their sockets, so stopping never waits for a server.
 * A probe's connection is kept from round to round; one that died is
 * replaced within the same round.
 *
 * A replica is in rotation when its SQL thread runs and, with a lag limit,
 * its IO thread runs and Seconds_Behind_Master is within max_replica_lag.
 * One exception, as MaxScale makes it (detect_stale_slave): a replica that
 * was in sync and then lost its master while the master does not answer us
 * either stays in rotation -- it holds the newest data there is, and reads
 * keep working while the master is down.
 */
#include <errmsg.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "health.h"
#include "clock.h"
#include "log.h"
#include "thread.h"

/* _cont calls that cutting a probe short may take (each returns at once on
 * a shut socket; the bound only guards against a connector surprise) */
#define ABORT_STEPS 64

enum phase { P_CONNECT, P_QUERY, P_STORE, P_DONE };

typedef struct probe {
    dal_server_t *srv;      /* borrowed: the node outlives its checker */
    MYSQL *m;               /* owned; kept from round to round while it works */
    int reused;             /* m was connected in an earlier round */
    enum phase phase;
    int wait;               /* what the connector waits for (MYSQL_WAIT_*); 0: not waiting */
    int qret;
    MYSQL *cret;
    MYSQL_RES *res;         /* owned until judged */
    int failed;             /* this round: no answer */
    char why[256];          /* why not, for the log */
    int in_sync;            /* a replica last seen replicating within the lag limit, and
                               not known to have fallen behind since */
    int judged;             /* this round's answer was used */
} probe_t;

struct dal_health {
    dal_node_t *node;       /* borrowed: it owns us */
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* CLOCK_MONOTONIC: the pause between rounds */
    int stop;               /* under mu */
    int running;            /* the thread was started (under mu) */
    atomic_int started;     /* health_ensure's fast path */
    atomic_int stopping;    /* read by the thread between polls */
    int wake[2];            /* a pipe: stop interrupts a round in poll() */
    pthread_t thread;
    probe_t *probes;        /* [0] the master, [1 + i] replica i */
    size_t nprobes;
    struct pollfd *pfd;     /* nprobes + 1 */
    size_t *idx;            /* nprobes: pfd[k + 1] belongs to probes[idx[k]] */
    int master_down;        /* the master did not answer in the last round */
};

/* ------------------------------------------------------------- verdicts */

static void server_name(const dal_server_t *srv, char *out, size_t cap)
{
    snprintf(out, cap, "datasource %s replica %d (%s)", srv->node->cfg->name, srv->replica + 1,
             srv->address);
}

/* Set srv's health, logging a change. */
static void set_health(dal_server_t *srv, int state, const char *why)
{
    int old = atomic_exchange(&srv->health, state);
    char name[512];

    if (old == state)
        return;
    server_name(srv, name, sizeof name);
    if (state == DAL_HEALTH_UP)
        log_message(srv->node->log, DAL_LOG_INFO, "health", "%s: in rotation", name);
    else
        log_message(srv->node->log, old == DAL_HEALTH_UP ? DAL_LOG_WARN : DAL_LOG_INFO, "health",
                    "%s: out of rotation: %s", name, why);
}

void health_mark_down(dal_server_t *srv, const char *why)
{
    set_health(srv, DAL_HEALTH_DOWN, why);
}

/* The columns of SHOW [ALL] SLAVES STATUS a verdict needs (borrowed from the
 * result's current row; NULL when absent or SQL NULL). */
typedef struct status {
    int found;              /* the server replicates from somewhere */
    const char *io, *sql, *lag, *gtid;
} status_t;

static const char *column(MYSQL_RES *res, MYSQL_ROW row, const char *name)
{
    MYSQL_FIELD *f = mysql_fetch_fields(res);
    unsigned int i, n = mysql_num_fields(res);

    for (i = 0; i < n; i++)
        if (strcasecmp(f[i].name, name) == 0)
            return row[i];
    return NULL;
}

/* The default replication connection (Connection_name ''), else the first. */
static void read_status(MYSQL_RES *res, status_t *st)
{
    MYSQL_ROW row, first = NULL;

    memset(st, 0, sizeof *st);
    while ((row = mysql_fetch_row(res)) != NULL) {
        const char *name = column(res, row, "Connection_name");
        if (first == NULL)
            first = row;
        if (name != NULL && *name == '\0') {
            first = row;
            break;
        }
    }
    if (first == NULL)
        return;
    st->found = 1;
    st->io = column(res, first, "Slave_IO_Running");
    st->sql = column(res, first, "Slave_SQL_Running");
    st->lag = column(res, first, "Seconds_Behind_Master");
    st->gtid = column(res, first, "Gtid_Slave_Pos");
}

static int is_yes(const char *v)
{
    return v != NULL && strcmp(v, "Yes") == 0;
}

/* Keep what the replica has applied, for read-your-writes; unknown (no
 * domains) when it does not say. */
static void store_gtid(dal_health_t *h, dal_server_t *srv, const char *gtid)
{
    dal_gtid_pos_t pos;

    if (gtid == NULL || gtid_pos_parse(gtid, strlen(gtid), &pos) != 0)
        pos.n = 0;
    pthread_mutex_lock(&h->node->gtid_mu);
    srv->gtid = pos;
    pthread_mutex_unlock(&h->node->gtid_mu);
}

/* DAL_HEALTH_DOWN, with the reason in why. */
static int down(char *why, size_t cap, const char *fmt, ...) DAL_PRINTF(3, 4);

static int down(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return DAL_HEALTH_DOWN;
}

/* A replica's verdict from its status; why says what keeps it out. */
static int judge_status(dal_health_t *h, probe_t *p, const status_t *st, char *why, size_t cap)
{
    uint32_t max_ms = h->node->cfg->max_replica_lag_ms;
    unsigned long long lag;

    if (!st->found)
        return down(why, cap, "not a replica (no replication configured)");
    if (!is_yes(st->sql))
        return down(why, cap, "replication stopped (Slave_SQL_Running: %s)",
                    st->sql ? st->sql : "NULL");
    if (max_ms == 0)
        return DAL_HEALTH_UP; /* no lag limit: replicating is enough */
    if (is_yes(st->io) && st->lag != NULL) {
        lag = strtoull(st->lag, NULL, 10);
        if (lag > max_ms / 1000u) /* whole seconds, as the server counts */
            return down(why, cap, "%llus behind its master (max_replica_lag %" PRIu32 "ms)", lag,
                        max_ms);
        p->in_sync = 1;
        return DAL_HEALTH_UP;
    }
    /* cut off from its master, not stopped by hand: see the top */
    if (h->master_down && p->in_sync && !(st->io != NULL && strcmp(st->io, "No") == 0)) {
        snprintf(why, cap, "its master is down");
        return DAL_HEALTH_UP;
    }
    return down(why, cap, "not receiving from its master (Slave_IO_Running: %s, "
                "Seconds_Behind_Master: %s)", st->io ? st->io : "NULL",
                st->lag ? st->lag : "NULL");
}

static void judge_replica(dal_health_t *h, probe_t *p)
{
    char why[400] = "";
    status_t st;
    int state;

    if (p->failed) {
        snprintf(why, sizeof why, "unreachable: %s", p->why);
        p->in_sync = 0;
        set_health(p->srv, DAL_HEALTH_DOWN, why);
        return;
    }
    read_status(p->res, &st);
    store_gtid(h, p->srv, st.gtid);
    state = judge_status(h, p, &st, why, sizeof why);
    /* behind, stopped, or cut off from a live master: its data ages from now */
    if (state == DAL_HEALTH_DOWN && !h->master_down)
        p->in_sync = 0;
    set_health(p->srv, state, why);
}

/* --------------------------------------------------------------- probes */

static void probe_close(probe_t *p)
{
    if (p->res != NULL)
        mysql_free_result(p->res);
    p->res = NULL;
    if (p->m != NULL)
        mysql_close(p->m);
    p->m = NULL;
}

static void probe_fail(probe_t *p, const char *why)
{
    snprintf(p->why, sizeof p->why, "%s", why);
    probe_close(p);
    p->failed = 1;
    p->phase = P_DONE;
    p->wait = 0;
}

static const char *probe_query(const probe_t *p)
{
    if (p->srv->replica < 0)
        return "SELECT 1";
    /* MariaDB's form adds Gtid_Slave_Pos (read-your-writes) */
    return strstr(mysql_get_server_info(p->m), "MariaDB") ? "SHOW ALL SLAVES STATUS"
                                                           : "SHOW SLAVE STATUS";
}

static void query_start(probe_t *p)
{
    const char *q = probe_query(p);

    p->phase = P_QUERY;
    p->wait = mysql_real_query_start(&p->qret, p->m, q, (unsigned long)strlen(q));
}

static void connect_start(probe_t *p)
{
    const dal_cfg_datasource_t *ds = p->srv->node->cfg;
    const dal_url_t *u = server_url(ds, p->srv->replica);

    p->reused = 0;
    p->m = mysql_init(NULL);
    if (p->m == NULL) {
        probe_fail(p, "out of memory");
        return;
    }
    /* a check must not wait longer for an answer than for a connection */
    conn_options(p->m, ds, p->srv->replica, server_connect_timeout_ms(ds, p->srv->replica));
    p->phase = P_CONNECT;
    p->wait = mysql_real_connect_start(&p->cret, p->m, u->socket ? "localhost" : u->host, u->user,
                                       u->password, u->database, u->socket ? 0 : u->port,
                                       u->socket, 0);
}

/* The connection failed: a kept one may just have died since the last
 * round (the server restarted), so try a fresh one before saying so. */
static void connection_failed(probe_t *p)
{
    unsigned int e = mysql_errno(p->m);
    int retry = p->reused && e >= CR_MIN_ERROR && e <= CR_MAX_ERROR;

    if (!retry) {
        probe_fail(p, mysql_error(p->m));
        return;
    }
    probe_close(p);
    connect_start(p);
}

/* The connector finished the current step: go on to the next. */
static void step(probe_t *p)
{
    switch (p->phase) {
    case P_CONNECT:
        if (p->cret == NULL)
            connection_failed(p);
        else
            query_start(p);
        break;
    case P_QUERY:
        if (p->qret != 0) {
            connection_failed(p);
            break;
        }
        p->phase = P_STORE;
        p->wait = mysql_store_result_start(&p->res, p->m);
        break;
    case P_STORE:
        if (p->res == NULL)
            connection_failed(p);
        else
            p->phase = P_DONE;
        break;
    case P_DONE:
        break;
    }
}

static void advance(probe_t *p)
{
    while (p->wait == 0 && p->phase != P_DONE)
        step(p);
}

/* Resume the current step with the events that happened. */
static void resume(probe_t *p, int events)
{
    switch (p->phase) {
    case P_CONNECT:
        p->wait = mysql_real_connect_cont(&p->cret, p->m, events);
        break;
    case P_QUERY:
        p->wait = mysql_real_query_cont(&p->qret, p->m, events);
        break;
    case P_STORE:
        p->wait = mysql_store_result_cont(&p->res, p->m, events);
        break;
    case P_DONE:
        p->wait = 0;
        break;
    }
}

static void probe_begin(probe_t *p)
{
    p->failed = 0;
    p->judged = 0;
    p->why[0] = '\0';
    if (p->m != NULL) {
        p->reused = 1;
        query_start(p);
    } else {
        connect_start(p);
    }
    advance(p);
}

/* Cut a probe short: with its socket shut, every step fails at once, and
 * the connector must finish the step before the handle can be closed. */
static void probe_abort(probe_t *p, const char *why)
{
    int fd = (int)mysql_get_socket(p->m), k;

    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    for (k = 0; k < ABORT_STEPS && p->wait != 0; k++)
        resume(p, MYSQL_WAIT_TIMEOUT);
    probe_fail(p, why);
}

/* --------------------------------------------------------------- rounds */

static int probe_active(const probe_t *p)
{
    return p->phase != P_DONE && p->wait != 0;
}

static short poll_events(int wait)
{
    return (short)(((wait & MYSQL_WAIT_READ) ? POLLIN : 0) |
                   ((wait & MYSQL_WAIT_WRITE) ? POLLOUT : 0) |
                   ((wait & MYSQL_WAIT_EXCEPT) ? POLLPRI : 0));
}

/* Fill h->pfd with the wake-up pipe and every waiting probe; returns how
 * many and lowers *timeout_ms to the earliest connector timeout. */
static size_t poll_set(dal_health_t *h, int *timeout_ms)
{
    size_t i, n = 1;

    h->pfd[0].fd = h->wake[0];
    h->pfd[0].events = POLLIN;
    h->pfd[0].revents = 0;
    for (i = 0; i < h->nprobes; i++) {
        probe_t *p = &h->probes[i];
        if (!probe_active(p))
            continue;
        h->pfd[n].fd = (int)mysql_get_socket(p->m);
        h->pfd[n].events = poll_events(p->wait);
        h->pfd[n].revents = 0;
        if (p->wait & MYSQL_WAIT_TIMEOUT) {
            int t = (int)mysql_get_timeout_value_ms(p->m);
            *timeout_ms = t < *timeout_ms ? t : *timeout_ms;
        }
        h->idx[n - 1] = i;
        n++;
    }
    return n;
}

/* One poll() over the waiting probes; 0, or -1 when the round must end. */
static int poll_once(dal_health_t *h, uint64_t deadline)
{
    uint64_t now = clock_now_ns(), left_ms = now >= deadline ? 0 : (deadline - now) / 1000000u + 1;
    /* at most a second per poll: the caller looks at the clock and the stop flag */
    int timeout = left_ms < 1000 ? (int)left_ms : 1000, rc;
    size_t n = poll_set(h, &timeout), k;

    rc = poll(h->pfd, n, timeout);
    if (rc < 0)
        return errno == EINTR ? 0 : -1;
    if (h->pfd[0].revents != 0)
        return -1; /* the node is going */
    for (k = 1; k < n; k++) {
        probe_t *p = &h->probes[h->idx[k - 1]];
        int ev = 0;
        if (h->pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
            ev |= MYSQL_WAIT_READ;
        if (h->pfd[k].revents & POLLOUT)
            ev |= MYSQL_WAIT_WRITE;
        if (h->pfd[k].revents & POLLPRI)
            ev |= MYSQL_WAIT_EXCEPT;
        if (rc == 0 && (p->wait & MYSQL_WAIT_TIMEOUT))
            ev |= MYSQL_WAIT_TIMEOUT;
        if (ev != 0) {
            resume(p, ev);
            advance(p);
        }
    }
    return 0;
}

static int any_active(const dal_health_t *h)
{
    size_t i;

    for (i = 0; i < h->nprobes; i++)
        if (probe_active(&h->probes[i]))
            return 1;
    return 0;
}

/* A round's limit: the longest connect timeout of the node's servers, but
 * no longer than the check interval (at least a second), so that one server
 * that does not answer cannot hold back news about the others. */
static uint64_t round_ns(const dal_health_t *h)
{
    uint32_t ms = 0, t, cap = h->node->cfg->health_check_ms;
    size_t i;

    for (i = 0; i < h->nprobes; i++) {
        t = server_connect_timeout_ms(h->node->cfg, h->probes[i].srv->replica);
        ms = t > ms ? t : ms;
    }
    cap = cap > 1000 ? cap : 1000;
    return (uint64_t)(ms < cap ? ms : cap) * 1000000u;
}

/* Use every answer in as soon as it is there, so that a replica that does
 * not answer delays no one; replicas wait for the master's answer, which
 * their verdict may depend on. */
static void judge_ready(dal_health_t *h)
{
    probe_t *master = &h->probes[0];
    size_t i;

    if (master->phase != P_DONE)
        return;
    if (!master->judged) {
        h->master_down = master->failed;
        master->judged = 1;
    }
    for (i = 1; i < h->nprobes; i++) {
        probe_t *p = &h->probes[i];
        if (p->phase != P_DONE || p->judged)
            continue;
        judge_replica(h, p);
        p->judged = 1;
        if (p->res != NULL)
            mysql_free_result(p->res);
        p->res = NULL;
    }
}

static void run_round(dal_health_t *h)
{
    uint64_t deadline = clock_now_ns() + round_ns(h);
    size_t i;
    int stopped = 0;

    for (i = 0; i < h->nprobes; i++)
        probe_begin(&h->probes[i]);
    judge_ready(h);
    while (any_active(h) && !stopped && clock_now_ns() < deadline) {
        stopped = poll_once(h, deadline) != 0 || atomic_load(&h->stopping);
        if (!stopped)
            judge_ready(h);
    }
    for (i = 0; i < h->nprobes; i++)
        if (probe_active(&h->probes[i]))
            probe_abort(&h->probes[i], stopped ? "checker stopped" : "no answer in time");
    if (!stopped)
        judge_ready(h);
    for (i = 0; i < h->nprobes; i++) {
        if (h->probes[i].res != NULL)
            mysql_free_result(h->probes[i].res);
        h->probes[i].res = NULL;
    }
}

/* Wait for the next round; 1 when the checker must stop. */
static int pause_between(dal_health_t *h)
{
    struct timespec until;
    int stop;

    clock_deadline_after_ms(&until, (long)h->node->cfg->health_check_ms);
    pthread_mutex_lock(&h->mu);
    while (!h->stop && pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
        ;
    stop = h->stop;
    pthread_mutex_unlock(&h->mu);
    return stop;
}

static void *health_main(void *arg)
{
    dal_health_t *h = arg;
    size_t i;

    do
        run_round(h);
    while (!pause_between(h));
    for (i = 0; i < h->nprobes; i++)
        probe_close(&h->probes[i]);
    return NULL;
}

/* ------------------------------------------------------------ lifecycle */

int health_new(dal_node_t *node, dal_health_t **out, dal_error_t *err)
{
    dal_health_t *h;
    pthread_condattr_t ca;
    size_t i;

    *out = NULL;
    if (node->nreplicas == 0)
        return 0;
    h = calloc(1, sizeof *h);
    if (h != NULL) {
        h->nprobes = node->nreplicas + 1;
        h->probes = calloc(h->nprobes, sizeof *h->probes);
        h->pfd = calloc(h->nprobes + 1, sizeof *h->pfd);
        h->idx = calloc(h->nprobes, sizeof *h->idx);
    }
    if (h == NULL || h->probes == NULL || h->pfd == NULL || h->idx == NULL) {
        if (h != NULL) {
            free(h->probes);
            free(h->pfd);
            free(h->idx);
        }
        free(h);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    h->node = node;
    h->wake[0] = h->wake[1] = -1;
    for (i = 0; i < h->nprobes; i++) {
        h->probes[i].srv = i == 0 ? &node->master : &node->replicas[i - 1];
        h->probes[i].phase = P_DONE;
    }
    pthread_mutex_init(&h->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = h;
    return 0;
}

/* Under h->mu: the pipe and the thread.  A failure is logged and leaves the
 * replicas unknown, so reads stay on the master. */
static void start_locked(dal_health_t *h)
{
    int rc;

    if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        h->wake[0] = h->wake[1] = -1;
        log_message(h->node->log, DAL_LOG_ERROR, "health", "datasource %s: cannot check replicas "
                    "(pipe: %s); reads go to the master", h->node->cfg->name, strerror(errno));
        return;
    }
    rc = thread_start(&h->thread, health_main, h);
    if (rc != 0) {
        log_message(h->node->log, DAL_LOG_ERROR, "health", "datasource %s: cannot check replicas "
                    "(thread: %s); reads go to the master", h->node->cfg->name, strerror(rc));
        return;
    }
    h->running = 1;
}

void health_ensure(dal_health_t *h)
{
    if (h == NULL || atomic_load_explicit(&h->started, memory_order_acquire))
        return;
    pthread_mutex_lock(&h->mu);
    if (!atomic_load_explicit(&h->started, memory_order_relaxed) && !h->stop) {
        start_locked(h);
        atomic_store_explicit(&h->started, 1, memory_order_release);
    }
    pthread_mutex_unlock(&h->mu);
}

void health_free(dal_health_t *h)
{
    int running;
    size_t i;

    if (h == NULL)
        return;
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    atomic_store(&h->stopping, 1);
    pthread_cond_signal(&h->cv);
    running = h->running;
    pthread_mutex_unlock(&h->mu);
    if (running) {
        /* interrupts a round waiting in poll(); the pipe never fills: one byte */
        if (write(h->wake[1], "x", 1) < 0 && errno != EAGAIN)
            log_message(h->node->log, DAL_LOG_WARN, "health", "wake-up: %s", strerror(errno));
        pthread_join(h->thread, NULL);
    }
    for (i = 0; i < h->nprobes; i++)
        probe_close(&h->probes[i]);
    if (h->wake[0] >= 0) {
        close(h->wake[0]);
        close(h->wake[1]);
    }
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h->probes);
    free(h->pfd);
    free(h->idx);
    free(h);
}
