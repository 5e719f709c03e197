/*
 * fence_ack.c -- registering with and acknowledging reshard write fences
 * (fence_ack.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <errmsg.h>

#include "clock.h"
#include "conn.h"
#include "error.h"
#include "fence.h"
#include "fence_ack.h"
#include "handle.h"
#include "thread.h"

#define TICK_MS 50
#define MAX_TABLES 256
#define MAX_CONNS 64

/* A connection kept from beat to beat: a beat a second (or a look every
 * few seconds while no reshard runs) must not open one each time. */
typedef struct held {
    char key[400];               /* "NAME\nuser@host:port/db": a reload may move NAME */
    dal_conn_t *conn;            /* owned */
} held_t;

typedef struct acked {
    char name[128];
    uint64_t gen;                /* the fence applied (0: none) */
} acked_t;

struct dal_fence_acker {
    dal_t *dal;                  /* borrowed: it outlives the thread */
    ticker_t ticker;             /* calls tick every TICK_MS */
    char id[200];                /* "HOST:PID:START_MS" */
    acked_t acked[MAX_TABLES];   /* the thread's own */
    size_t nacked;
    uint64_t last_beat_ns;
    uint64_t absent_until;       /* no node had dal_reshard_fence_ack: no beat before */
    int quiet;                   /* a failure was logged */
    held_t held[MAX_CONNS];      /* the thread's own */
    size_t nheld;
};

/* The kept connection to node, opened when there is none. */
static dal_conn_t *conn_for(struct dal_fence_acker *a, const dal_node_t *node, dal_error_t *err)
{
    char key[sizeof a->held[0].key];
    dal_conn_t *c = NULL;
    size_t i;

    snprintf(key, sizeof key, "%s\n%s", node->cfg->name, node->cfg->master.display);
    for (i = 0; i < a->nheld; i++)
        if (strcmp(a->held[i].key, key) == 0)
            return a->held[i].conn;
    if (conn_open(node->cfg, &c, err) != 0)
        return NULL;
    if (a->nheld == MAX_CONNS) {   /* more first datasources than kept: the oldest goes */
        conn_close(a->held[0].conn);
        memmove(&a->held[0], &a->held[1], (MAX_CONNS - 1) * sizeof a->held[0]);
        a->nheld--;
    }
    snprintf(a->held[a->nheld].key, sizeof key, "%s", key);
    a->held[a->nheld++].conn = c;
    return c;
}

/* Close c after a failure on it: the next beat opens a new one. */
static void conn_forget(struct dal_fence_acker *a, dal_conn_t *c)
{
    size_t i;

    for (i = 0; i < a->nheld; i++)
        if (a->held[i].conn == c) {
            conn_close(c);
            a->held[i] = a->held[--a->nheld];
            return;
        }
}

static acked_t *acked_of(struct dal_fence_acker *a, const char *name)
{
    size_t i;

    for (i = 0; i < a->nacked; i++)
        if (strcmp(a->acked[i].name, name) == 0)
            return &a->acked[i];
    if (a->nacked == MAX_TABLES)
        return NULL;
    snprintf(a->acked[a->nacked].name, sizeof a->acked[0].name, "%s", name);
    a->acked[a->nacked].gen = 0;
    return &a->acked[a->nacked++];
}

/* The server or the network ended the connection (wait_timeout, a restart). */
static int is_gone(unsigned e)
{
    return e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST;
}

/* The rows of every table whose first datasource is node's, in one
 * statement on node's master: 0 written, 1 when the table
 * dal_reshard_fence_ack is not there, -1 on an error (logged). */
static int write_rows(struct dal_fence_acker *a, dal_snapshot_t *s, const dal_node_t *node)
{
    char *sql = malloc(256 + s->ntables * 600), *p;
    char esc_id[sizeof a->id * 2 + 1], esc_name[300];
    dal_error_t err = {0};
    dal_conn_t *c = NULL;
    size_t i, n = 0;
    int absent = 0;

    if (sql == NULL)
        return 0;
    if ((c = conn_for(a, node, &err)) == NULL)
        goto out;
    mysql_real_escape_string(&c->mysql, esc_id, a->id, strlen(a->id));
    p = sql + sprintf(sql, "INSERT INTO dal_reshard_fence_ack (table_name, instance, generation, "
                           "seen) VALUES ");
    for (i = 0; i < s->ntables; i++) {
        const dal_table_t *t = &s->tables[i];
        acked_t *k;
        if (t->nodes == NULL || t->nodes[0] != node || strlen(t->cfg->name) >= 128 ||
            (k = acked_of(a, t->cfg->name)) == NULL)
            continue;
        mysql_real_escape_string(&c->mysql, esc_name, t->cfg->name, strlen(t->cfg->name));
        p += sprintf(p, "%s('%s', '%s', %llu, NOW(6))", n++ ? ", " : "", esc_name, esc_id,
                     (unsigned long long)k->gen);
    }
    sprintf(p, " ON DUPLICATE KEY UPDATE generation = VALUES(generation), seen = NOW(6)");
    if (n > 0 && mysql_query(&c->mysql, sql) != 0 && is_gone(mysql_errno(&c->mysql))) {
        conn_forget(a, c);   /* the server closed a kept connection: once more on a new one */
        c = conn_for(a, node, &err);
        if (c == NULL)
            goto out;
        mysql_query(&c->mysql, sql);
    }
    if (n > 0 && mysql_errno(&c->mysql) != 0 && !(absent = mysql_errno(&c->mysql) == 1146)) {
        err_set(&err, DAL_ESERVER, "%s", mysql_error(&c->mysql));
        conn_forget(a, c);
    }
out:
    if (err.code != 0 && !a->quiet)
        log_message(&a->dal->log, DAL_LOG_WARN, "reshard",
                    "cannot record this instance in dal_reshard_fence_ack on %s: %s",
                    node->cfg->name, err.message);
    a->quiet = err.code != 0;
    free(sql);
    return err.code != 0 ? -1 : absent;
}

/* Apply the fences of s not yet applied (and forget those lifted); 1 if
 * a table's generation changed. */
static int apply_fences(struct dal_fence_acker *a, dal_snapshot_t *s)
{
    int drained = 0, changed = 0;
    uint64_t gen;
    acked_t *k;
    size_t i;

    for (i = 0; i < s->ntables; i++) {
        gen = fence_of(s->cfg, s->tables[i].cfg->name, NULL);
        if ((k = acked_of(a, s->tables[i].cfg->name)) == NULL || k->gen == gen)
            continue;
        if (gen != 0 && !drained) {
            fence_drain(a->dal);   /* s is in force: writes that missed it finish */
            drained = 1;
        }
        k->gen = gen;
        changed = 1;
    }
    return changed;
}

static uint32_t tick(void *arg)
{
    struct dal_fence_acker *a = arg;
    dal_snapshot_t *s = snapshot_acquire(a->dal);
    uint64_t now = clock_now_ns(), lease = atomic_load(&a->dal->fence_lease_ns);
    size_t i, j, nodes = 0, absent = 0, failed = 0;
    dal_error_t err;
    int r;

    /* the lease ran out (the process was stopped, or could not beat): a
     * switch may have taken this instance for dead and gone on, so read
     * the configuration again before renewing it */
    if (lease != 0 && now > lease && a->dal->sink.document != NULL) {
        snapshot_unref(s);
        dal_reload(a->dal, &err);
        s = snapshot_acquire(a->dal);
        a->last_beat_ns = 0;
    }

    if (a->dal->sink.document != NULL && atomic_load(&a->dal->fence_reg) != 0 &&
        (apply_fences(a, s) ||
         (now - a->last_beat_ns >= FENCE_ACK_BEAT_MS * 1000000ull && now >= a->absent_until))) {
        a->last_beat_ns = now;
        for (i = 0; i < s->ntables; i++) {
            const dal_node_t *node = s->tables[i].nodes ? s->tables[i].nodes[0] : NULL;
            for (j = 0; node != NULL && j < i; j++)
                if (s->tables[j].nodes && s->tables[j].nodes[0] == node)
                    node = NULL;   /* done with an earlier table */
            if (node != NULL) {
                nodes++;
                r = write_rows(a, s, node);
                absent += r == 1;
                failed += r < 0;
            }
        }
        /* no reshard anywhere: no lease needed, and look again less often */
        a->absent_until = nodes > 0 && absent == nodes ? now + FENCE_ACK_ABSENT_MS * 1000000ull
                                                       : 0;
        /* the lease before the bit that has writes look at it */
        if (a->absent_until != 0) {
            atomic_store(&a->dal->fence_lease_ns, 0);
            atomic_fetch_and(&a->dal->fence_watch, ~(unsigned)FENCE_WATCH_LEASE);
        } else if (failed == 0) {
            atomic_store(&a->dal->fence_lease_ns, now + FENCE_ACK_LEASE_MS * 1000000ull);
            atomic_fetch_or(&a->dal->fence_watch, FENCE_WATCH_LEASE);
        }
        atomic_store(&a->dal->fence_reg, 2);
        atomic_fetch_and(&a->dal->fence_watch, ~(unsigned)FENCE_WATCH_REG);
    }
    snapshot_unref(s);
    return TICK_MS;
}

int fence_ack_start(dal_t *dal, struct dal_fence_acker **out, dal_error_t *err)
{
    struct dal_fence_acker *a = calloc(1, sizeof *a);
    char host[128] = "";

    *out = NULL;
    if (a == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    a->dal = dal;
    gethostname(host, sizeof host - 1);
    snprintf(a->id, sizeof a->id, "%s:%ld:%llu", host, (long)getpid(),
             (unsigned long long)(clock_now_ns() / 1000000u));
    if (ticker_start(&a->ticker, tick, a) != 0) {
        free(a);
        return err_set(err, DAL_EIO, "cannot start the reshard fence thread");
    }
    *out = a;
    return 0;
}

void fence_ack_stop(struct dal_fence_acker *a)
{
    if (a == NULL)
        return;
    ticker_stop(&a->ticker);
    while (a->nheld > 0)
        conn_close(a->held[--a->nheld].conn);
    free(a);
}
