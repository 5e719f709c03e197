/*
 * fence.c -- holding writes to a table while its write fence is up, and
 * the gate that tells when none is in flight (see fence.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "config_diff.h"
#include "error.h"
#include "fence.h"
#include "sql_lex.h"

/* The longest a first write waits for the instance's registration. */
#define FENCE_REGISTER_MS 2000

/* The longest a write waits for the renewal of the instance's lease. */
#define FENCE_LEASE_WAIT_MS 5000

/* A write's wait when the fence gives no bound. */
#define FENCE_BOUND_DEFAULT_MS 6000

uint64_t fence_parse(const char *value, uint64_t *bound_ms)
{
    char *end;
    uint64_t gen = strtoull(value, &end, 10), bound = 0;

    if (*end == '_')
        bound = strtoull(end + 1, NULL, 10);
    if (bound_ms != NULL)
        *bound_ms = bound != 0 ? bound : FENCE_BOUND_DEFAULT_MS;
    return gen;
}

uint64_t fence_of(const dal_config_t *cfg, const char *name, uint64_t *bound_ms)
{
    size_t i;

    for (i = 0; i < cfg->ntables; i++)
        if (cfg->tables[i].write_fence != NULL && strcasecmp(cfg->tables[i].name, name) == 0)
            return fence_parse(cfg->tables[i].write_fence, bound_ms);
    return 0;
}

static int is_write(dal_sql_kind_t k)
{
    return k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_UPDATE ||
           k == DAL_SQL_DELETE;
}

static dal_token_t next_word(dal_lexer_t *lx)
{
    dal_token_t t;

    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT);
    return t;
}

/* Might the statement text write?  By its first word, so that a read
 * costs no analysis: INSERT, REPLACE, UPDATE, DELETE, LOAD, WITH (a WITH
 * ... UPDATE), SET STATEMENT ... FOR. */
static int may_write_text(const char *text, size_t len, int no_backslash)
{
    static const char *const words[] = {"INSERT", "REPLACE", "UPDATE", "DELETE", "LOAD", "WITH"};
    dal_lexer_t lx;
    dal_token_t t;
    size_t i;

    lex_init(&lx, text, len, no_backslash);
    t = next_word(&lx);
    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        if (tok_eq(text, &t, words[i]))
            return 1;
    if (!tok_eq(text, &t, "SET"))
        return 0;
    t = next_word(&lx);
    return tok_eq(text, &t, "STATEMENT");
}

static int may_write(dal_stmt_text_t sql)
{
    if (sql.prepared != NULL)
        return is_write(sql.prepared->kind) || sql.prepared->opaque;
    return may_write_text(sql.text, sql.len, sql.no_backslash);
}

/* The fence on the table called name, or on the logical table whose
 * physical table it is (NAME_<position>: a raw LOAD DATA into one). */
static uint64_t fence_of_word(const dal_config_t *cfg, char *name, size_t n, uint64_t *bound)
{
    uint64_t g = fence_of(cfg, name, bound);
    size_t i = n;

    while (g == 0 && i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (g == 0 && i > 1 && i < n && name[i - 1] == '_') {
        name[i - 1] = '\0';
        g = fence_of(cfg, name, bound);
    }
    return g;
}

/* The generation and bound of a fence in s on a table that the words of
 * an opaque statement (LOAD DATA ... INTO TABLE t) name, or 0. */
static uint64_t opaque_holding(const dal_snapshot_t *s, const dal_sql_t *sql, uint64_t *bound,
                               char *name, size_t cap)
{
    dal_lexer_t lx;
    dal_token_t t;
    size_t n;
    uint64_t g;

    lex_init(&lx, sql->text, sql->len, sql->no_backslash);
    t = next_word(&lx);
    if (!tok_eq(sql->text, &t, "LOAD"))
        return 0;
    while ((t = lex_next(&lx)).type != DAL_TOK_EOF) {
        if (t.type != DAL_TOK_IDENT && t.type != DAL_TOK_QIDENT)
            continue;
        n = ident_unquote(sql->text, &t, name, cap);
        if (n < cap && (g = fence_of_word(s->cfg, name, n, bound)) != 0)
            return g;
    }
    return 0;
}

/* The generation of a fence in force that holds sql (0: none), its bound,
 * and the fenced table's name (in name[cap]). */
static uint64_t holding(dal_t *dal, const dal_sql_t *sql, uint64_t *bound, char *name,
                        size_t cap)
{
    dal_snapshot_t *s = snapshot_acquire(dal);
    uint64_t g = 0;
    size_t i;

    if (s->fenced && sql->opaque)
        g = opaque_holding(s, sql, bound, name, cap);
    for (i = 0; s->fenced && is_write(sql->kind) && g == 0 && i < sql->ntrefs; i++)
        if ((g = fence_of(s->cfg, sql->trefs[i].name, bound)) != 0)
            snprintf(name, cap, "%s", sql->trefs[i].name);
    snapshot_unref(s);
    return g;
}

/* Wait while the fence gen holds sql; 0 once it does not, DAL_ESTATE past
 * bound_ms. */
static int wait_out(dal_t *dal, const dal_sql_t *sql, uint64_t gen, uint64_t bound_ms,
                    dal_error_t *err)
{
    const struct timespec tick = {0, 1000000};
    uint64_t until = clock_now_ns() + bound_ms * 1000000u, b;
    char t[256];

    while (holding(dal, sql, &b, t, sizeof t) != 0) {
        if (clock_now_ns() >= until)
            return err_set(err, DAL_ESTATE,
                           "write held over %llu ms by the write fence (generation %llu) of a "
                           "reshard's switch on table %s, and not run: the switch has not "
                           "finished.  If no `dal reshard switch` is running, remove the "
                           "fence with `dal reshard abort-switch`",
                           (unsigned long long)bound_ms, (unsigned long long)gen, t);
        nanosleep(&tick, NULL);
    }
    return 0;
}

/* The first write of an instance that follows its source (a reshard's
 * switch can move it) waits (bounded) until the acknowledging thread has
 * registered the instance (fence_ack.h): a switch that started meanwhile
 * then waits for it too. */
static void register_first(dal_t *dal)
{
    const struct timespec tick = {0, 1000000};
    int zero = 0, i;

    if (dal->sink.document == NULL) {   /* follows nothing: nothing to register for */
        atomic_store(&dal->fence_reg, 2);
        return;
    }
    atomic_compare_exchange_strong(&dal->fence_reg, &zero, 1);
    for (i = 0; i < FENCE_REGISTER_MS && atomic_load(&dal->fence_reg) != 2; i++)
        nanosleep(&tick, NULL);
}

/* While a reshard is in progress the instance writes only within its
 * lease (fence_ack.h); past it, a write waits for the renewal, and fails
 * past FENCE_LEASE_WAIT_MS. */
static int within_lease(dal_t *dal, dal_error_t *err)
{
    const struct timespec tick = {0, 1000000};
    uint64_t lease = atomic_load(&dal->fence_lease_ns), now, until = 0;

    while (lease != 0 && (now = clock_now_ns()) > lease) {
        if (until == 0)
            until = now + FENCE_LEASE_WAIT_MS * 1000000ull;
        if (now > until)
            return err_set(err, DAL_ESTATE,
                           "write not run: a reshard is in progress and this instance could "
                           "not renew its registration in dal_reshard_fence_ack for over %d ms "
                           "(a switch may have taken it for dead)", FENCE_LEASE_WAIT_MS);
        nanosleep(&tick, NULL);
        lease = atomic_load(&dal->fence_lease_ns);
    }
    return 0;
}

/* fence_enter's ticket of a statement that passed the quiet watch; the
 * gate's are its counter's index + 1. */
#define TICKET_UNGATED 3u

int fence_enter(dal_t *dal, atomic_uint *ungated, dal_sql_cache_t *cache, dal_stmt_text_t sql,
                unsigned *ticket, dal_error_t *err)
{
    const dal_sql_t *a = sql.prepared;
    uint64_t gen, bound;
    char name[256];
    unsigned e;
    int rc = 0;

    /* count, then look (sequentially consistent both: fence.h, "the
     * watch") */
    atomic_fetch_add(ungated, 1);
    if (atomic_load(&dal->fence_watch) == 0) {
        *ticket = TICKET_UNGATED;
        return 0;
    }
    atomic_fetch_sub(ungated, 1);
    *ticket = 0;
    if (!may_write(sql))
        return 0;
    if (atomic_load_explicit(&dal->fence_reg, memory_order_relaxed) != 2)
        register_first(dal);
    if ((rc = within_lease(dal, err)) != 0)
        return rc;
    for (;;) {
        /* sequentially consistent: the drain's "fence in force, flip, see
         * the counter empty" must not pass our "count, look at the fence" */
        e = atomic_load(&dal->fence_epoch) & 1u;
        atomic_fetch_add(&dal->fence_active[e], 1);
        if (!(atomic_load(&dal->fence_watch) & FENCE_WATCH_FENCED))
            break;
        if (a == NULL &&
            (a = stmt_analyse(cache, sql.text, sql.len, sql.no_backslash, NULL)) == NULL)
            break;   /* the statement's own run reports what is wrong with it */
        if ((gen = holding(dal, a, &bound, name, sizeof name)) == 0)
            break;
        atomic_fetch_sub(&dal->fence_active[e], 1);
        if ((rc = wait_out(dal, a, gen, bound, err)) != 0)
            break;
    }
    if (rc == 0)
        *ticket = e + 1;
    if (a != NULL && sql.prepared == NULL)
        sql_unref(a);
    return rc;
}

void fence_leave(dal_t *dal, atomic_uint *ungated, unsigned ticket)
{
    if (ticket == TICKET_UNGATED)
        atomic_fetch_sub(ungated, 1);
    else if (ticket != 0)
        atomic_fetch_sub(&dal->fence_active[ticket - 1], 1);
}

/* Has every session's ungated counter been seen at 0 since this drain set
 * its bit?  A slot seen at 0 keeps the drain's mark, so sessions that keep
 * running statements (each counting itself for an instant before it sees
 * the bit) are each caught at 0 once; slots_mu is held only for a look. */
static int slots_drained(dal_t *dal, unsigned mark)
{
    snap_slot_t *slot;
    int all = 1;

    pthread_mutex_lock(&dal->slots_mu);
    for (slot = dal->slots; slot != NULL; slot = slot->next)
        if (slot->drained != mark) {
            if (atomic_load(&slot->ungated) == 0)
                slot->drained = mark;
            else
                all = 0;
        }
    pthread_mutex_unlock(&dal->slots_mu);
    return all;
}

void fence_drain(dal_t *dal)
{
    const struct timespec tick = {0, 200000};
    unsigned mark, old;
    int sessionless = 0;

    if (++dal->fence_drains == 0)   /* 0 is a new slot's */
        dal->fence_drains = 1;
    mark = dal->fence_drains;
    atomic_fetch_or(&dal->fence_watch, FENCE_WATCH_DRAIN);
    for (;;) {
        sessionless = sessionless || atomic_load(&dal->fence_ungated) == 0;
        if (slots_drained(dal, mark) && sessionless)
            break;
        nanosleep(&tick, NULL);
    }
    old = atomic_fetch_add(&dal->fence_epoch, 1) & 1u;
    while (atomic_load(&dal->fence_active[old]) != 0)
        nanosleep(&tick, NULL);
    atomic_fetch_and(&dal->fence_watch, ~(unsigned)FENCE_WATCH_DRAIN);
}

/* Does a write of sql go to a table whose layout differs between a and b? */
static const char *moved_table(const dal_sql_t *sql, const dal_config_t *a, const dal_config_t *b)
{
    size_t i;

    if (!is_write(sql->kind))
        return NULL;
    for (i = 0; i < sql->ntrefs; i++) {
        const dal_cfg_table_t *x = config_table(a, sql->trefs[i].name);
        const dal_cfg_table_t *y = config_table(b, sql->trefs[i].name);
        if (x != NULL && y != NULL && config_layout_changed(x, y))
            return x->name;
    }
    return NULL;
}

int fence_txn_check(dal_t *dal, const dal_snapshot_t *txn_snap, dal_sql_cache_t *cache,
                    dal_stmt_text_t sql, dal_error_t *err)
{
    const dal_sql_t *a = sql.prepared;
    dal_snapshot_t *now;
    const char *moved;
    int rc = 0;

    if (atomic_load_explicit(&dal->gen, memory_order_relaxed) == txn_snap->gen)
        return 0;
    if (a == NULL && (a = stmt_analyse(cache, sql.text, sql.len, sql.no_backslash, NULL)) == NULL)
        return 0;
    now = snapshot_acquire(dal);
    moved = now != txn_snap ? moved_table(a, txn_snap->cfg, now->cfg) : NULL;
    if (moved != NULL)
        rc = err_set(err, DAL_ESTATE, "table %s was moved to a new layout (a reshard's switch) "
                     "while this transaction was open: roll it back and run it again", moved);
    snapshot_unref(now);
    if (sql.prepared == NULL)
        sql_unref(a);
    return rc;
}
