/*
 * replica.c -- which server of a node runs a statement (see replica.h).
 */
#include <string.h>

#include "error.h"
#include "health.h"
#include "clock.h"
#include "monitor.h"
#include "pool.h"
#include "replica.h"

/* ------------------------------------------------------ read-your-writes */

/* The state is too large for the static TLS model (host.h); a pointer to
 * it is not, so only a thread's first statement looks it up the slow way. */
static _Thread_local dal_ryw_t thread_ryw;
static _Thread_local dal_ryw_t *thread_ryw_at DAL_TLS_SMALL;

dal_ryw_t *ryw_thread(void)
{
    if (thread_ryw_at == NULL)
        thread_ryw_at = &thread_ryw;
    return thread_ryw_at;
}

static dal_ryw_mark_t *find_mark(dal_ryw_t *w, uint64_t key)
{
    unsigned int i;

    for (i = 0; i < w->n; i++)
        if (w->marks[i].node_key == key)
            return &w->marks[i];
    return NULL;
}

static void drop_mark(dal_ryw_t *w, dal_ryw_mark_t *m)
{
    *m = w->marks[--w->n];
}

/* Until when a write to node must be read back. */
static uint64_t window_end(const dal_node_t *node, uint64_t now)
{
    return node->cfg->read_your_writes == 2 ? now + (uint64_t)node->cfg->ryw_window_ms * 1000000u
                                            : UINT64_MAX;
}

/* Room for a new mark: a free slot, else one whose window is over. */
static dal_ryw_mark_t *new_mark(dal_ryw_t *w, uint64_t now)
{
    unsigned int i;

    if (w->n < DAL_RYW_MAX)
        return &w->marks[w->n++];
    for (i = 0; i < w->n; i++)
        if (now >= w->marks[i].until_ns)
            return &w->marks[i];
    return NULL;
}

/* The GTID a mark must now wait for, merging an earlier write's (m may be
 * NULL); NULL when only the master is sure to have both. */
static const dal_gtid_t *merged_gtid(const dal_ryw_mark_t *m, const dal_gtid_t *g)
{
    if (m == NULL || g == NULL)
        return g;
    if (!m->has_gtid || m->gtid.domain != g->domain)
        return NULL; /* two domains cannot be compared */
    /* in one domain, a later sequence number implies the earlier ones */
    return g->seq >= m->gtid.seq ? g : &m->gtid;
}

void ryw_note(dal_ryw_t *w, const dal_node_t *node, const dal_gtid_t *g)
{
    dal_ryw_mark_t *m;
    uint64_t now;

    if (w == NULL || node->nreplicas == 0 || node->cfg->read_your_writes == 0)
        return;
    now = clock_now_ns();
    m = find_mark(w, node->ryw_key);
    if (m != NULL && now >= m->until_ns) {
        drop_mark(w, m); /* its window is over: forget the old write */
        m = NULL;
    }
    g = merged_gtid(m, g);
    if (m == NULL && (m = new_mark(w, now)) == NULL) {
        /* too many nodes to remember one by one: all of them, safely */
        w->all_until_ns = window_end(node, now);
        return;
    }
    m->node_key = node->ryw_key;
    m->until_ns = window_end(node, now);
    m->has_gtid = g != NULL;
    if (g != NULL)
        m->gtid = *g;
}

/* ------------------------------------------------------------- choosing */

/* What one choice works with. */
typedef struct pick {
    dal_node_t *node;
    int explain;
    int need_gtid;          /* only replicas that have applied gtid */
    dal_gtid_t gtid;
    uint64_t caught_up;     /* with need_gtid: bit i set if replica i has applied gtid
                               (replicas past the 64th never count) */
    const dal_server_t *skip; /* a replica that just failed */
} pick_t;

static int in_rotation(const pick_t *p, size_t i)
{
    const dal_server_t *s = &p->node->replicas[i];
    int h = atomic_load_explicit(&s->health, memory_order_relaxed);

    if (s == p->skip)
        return 0;
    if (!(h == DAL_HEALTH_UP || (p->explain && h == DAL_HEALTH_UNKNOWN)))
        return 0;
    return !p->need_gtid || (i < 64 && (p->caught_up >> i & 1));
}

/* Which replicas have applied p->gtid, from the checker's last look. */
static void caught_up_mask(pick_t *p)
{
    size_t i, n = p->node->nreplicas < 64 ? p->node->nreplicas : 64;

    p->caught_up = 0;
    pthread_mutex_lock(&p->node->gtid_mu);
    for (i = 0; i < n; i++)
        if (gtid_pos_covers(&p->node->replicas[i].gtid, &p->gtid))
            p->caught_up |= (uint64_t)1 << i;
    pthread_mutex_unlock(&p->node->gtid_mu);
}

/* A random number below n (< 2^32), from the generator's high bits. */
static uint64_t random_below(uint64_t n)
{
    return ((clock_random() >> 32) * n) >> 32;
}

/* The k-th replica in rotation (0-based). */
static dal_server_t *nth(const pick_t *p, size_t k)
{
    size_t i;

    for (i = 0; i < p->node->nreplicas; i++)
        if (in_rotation(p, i) && k-- == 0)
            return &p->node->replicas[i];
    return NULL;
}

/* weighted: at random, in proportion to the weights of those in rotation */
static dal_server_t *pick_weighted(const pick_t *p, uint64_t total)
{
    uint64_t r = random_below(total);
    size_t i;

    for (i = 0; i < p->node->nreplicas; i++) {
        if (!in_rotation(p, i))
            continue;
        if (r < p->node->replicas[i].weight)
            return &p->node->replicas[i];
        r -= p->node->replicas[i].weight;
    }
    return NULL;
}

/* least_outstanding: the fewest statements in flight; ties go round robin
 * so that an idle node still spreads its reads */
static dal_server_t *pick_least(const pick_t *p, size_t from)
{
    size_t n = p->node->nreplicas, j;
    dal_server_t *best = NULL;
    unsigned int least = 0;

    for (j = 0; j < n; j++) {
        size_t i = (from + j) % n;
        unsigned int o;
        if (!in_rotation(p, i))
            continue;
        o = atomic_load_explicit(&p->node->replicas[i].outstanding, memory_order_relaxed);
        if (best == NULL || o < least) {
            best = &p->node->replicas[i];
            least = o;
        }
    }
    return best;
}

/* A replica by the node's load_balance, or NULL when none is in rotation. */
static dal_server_t *pick_replica(const pick_t *p)
{
    dal_node_t *n = p->node;
    size_t i, count = 0;
    uint64_t total = 0;
    unsigned int turn;

    for (i = 0; i < n->nreplicas; i++) {
        if (in_rotation(p, i)) {
            count++;
            total += n->replicas[i].weight;
        }
    }
    if (count == 0)
        return NULL;
    switch (n->cfg->load_balance) {
    case DAL_LB_RANDOM:
        return nth(p, (size_t)random_below(count));
    case DAL_LB_WEIGHTED:
        return pick_weighted(p, total);
    case DAL_LB_LEAST_OUTSTANDING:
    case DAL_LB_ROUND_ROBIN:
        break;
    }
    turn = atomic_fetch_add_explicit(&n->rr, 1, memory_order_relaxed);
    if (n->cfg->load_balance == DAL_LB_LEAST_OUTSTANDING)
        return pick_least(p, turn % n->nreplicas);
    return nth(p, turn % count);
}

/* What the writer needs from a read on p->node: 0 nothing, 1 a replica
 * that has applied its write (p->gtid, p->caught_up filled), 2 the master. */
static int ryw_need(dal_ryw_t *w, pick_t *p)
{
    const dal_node_t *node = p->node;
    dal_ryw_mark_t *m;
    uint64_t now;

    if (w == NULL || (w->n == 0 && w->all_until_ns == 0) || node->cfg->read_your_writes == 0)
        return 0;
    now = clock_now_ns();
    if (w->all_until_ns != 0 && now >= w->all_until_ns)
        w->all_until_ns = 0;
    if (w->all_until_ns != 0)
        return 2;
    m = find_mark(w, node->ryw_key);
    if (m == NULL)
        return 0;
    if (now >= m->until_ns || !m->has_gtid) {
        if (now < m->until_ns)
            return 2;
        drop_mark(w, m);
        return 0;
    }
    p->gtid = m->gtid;
    caught_up_mask(p);
    /* every replica has it (positions only grow): no later read needs it */
    if (node->nreplicas < 64 && p->caught_up == ((uint64_t)1 << node->nreplicas) - 1)
        drop_mark(w, m);
    return 1;
}

dal_server_t *select_read(dal_node_t *node, const dal_select_t *sel)
{
    pick_t p = {.node = node, .explain = (sel->flags & DAL_SELECT_EXPLAIN) != 0};
    dal_server_t *s;
    int need = 0;

    if (node->nreplicas == 0 || sel->override == DAL_SERVER_MASTER)
        return &node->master;
    if (!p.explain)
        health_ensure(node->health);
    /* an explicit replica is the caller's choice over read-your-writes */
    if (sel->override != DAL_SERVER_REPLICA)
        need = ryw_need(sel->ryw, &p);
    if (need == 2)
        return &node->master;
    p.need_gtid = need == 1;
    s = pick_replica(&p);
    return s != NULL ? s : &node->master;
}

dal_server_t *select_failover(dal_server_t *srv)
{
    pick_t p = {.node = srv->node, .skip = srv};
    dal_server_t *s;

    if (srv->replica < 0)
        return NULL;
    s = pick_replica(&p);
    return s != NULL ? s : &srv->node->master;
}

/* ------------------------------------------------------------ overrides */

/* One dal hint as a server choice: DAL_SERVER_* or -1 if it is not one;
 * -2 for a bad value. */
static int hint_server(const struct dal_sql_hint *h)
{
    const char *v = h->value;

    if (strcmp(h->key, "master") == 0 || strcmp(h->key, "replica") == 0) {
        if (*v != '\0')
            return -2;
        v = h->key;
    } else if (strcmp(h->key, "server") != 0) {
        return -1;
    }
    if (strcmp(v, "master") == 0)
        return DAL_SERVER_MASTER;
    if (strcmp(v, "replica") == 0)
        return DAL_SERVER_REPLICA;
    return -2;
}

int server_override(const dal_sql_t *sql, const dal_query_opts_t *opts, int *out,
                    dal_error_t *err)
{
    int v = opts ? opts->server : DAL_SERVER_AUTO;
    size_t i;

    *out = DAL_SERVER_AUTO;
    if (v < DAL_SERVER_AUTO || v > DAL_SERVER_REPLICA)
        return err_set(err, DAL_EINVAL, "dal_query_opts_t.server: %d is not a DAL_SERVER_* "
                       "value", v);
    if (v != DAL_SERVER_AUTO) {
        *out = v; /* the option wins over hints, as for shard_value and datasource */
        return 0;
    }
    for (i = 0; i < sql->nhints; i++) {
        int h = hint_server(&sql->hints[i]);
        if (h == -1)
            continue;
        if (h == -2)
            return err_set(err, DAL_EINVAL, "dal hint %s%s%s: expected `master`, `replica` "
                           "or `server=master|replica`", sql->hints[i].key,
                           *sql->hints[i].value ? "=" : "", sql->hints[i].value);
        if (*out != DAL_SERVER_AUTO && *out != h)
            return err_set(err, DAL_EINVAL, "dal hints ask for both the master and a replica");
        *out = h;
    }
    return 0;
}

/* ------------------------------------------------------------ the rest */

void server_lost(dal_server_t *srv, const char *why)
{
    server_flush(srv);
    if (srv->replica >= 0)
        health_mark_down(srv, why);
}

const char *server_role(const dal_server_t *srv)
{
    return srv->replica < 0 ? "master" : "replica";
}
