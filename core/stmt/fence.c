/*
 * fence.c -- holding writes to a table while its write fence is up (see
 * fence.h).
 */
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "config_diff.h"
#include "error.h"
#include "fence.h"

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The deadline of the fence on the table called name in cfg, or 0. */
static uint64_t fence_of(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->ntables; i++)
        if (cfg->tables[i].write_fence != NULL && strcasecmp(cfg->tables[i].name, name) == 0)
            return strtoull(cfg->tables[i].write_fence, NULL, 10);
    return 0;
}

static int is_write(dal_sql_kind_t k)
{
    return k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_UPDATE ||
           k == DAL_SQL_DELETE;
}

/* The latest deadline among the fences in force on the tables sql names
 * (0: none holds it), for a write. */
static uint64_t holding(dal_t *dal, const dal_sql_t *sql)
{
    dal_snapshot_t *s = snapshot_acquire(dal);
    uint64_t until = 0, d;
    size_t i;

    for (i = 0; s->fenced && i < sql->ntrefs; i++)
        if ((d = fence_of(s->cfg, sql->trefs[i].name)) > until)
            until = d;
    snapshot_unref(s);
    return until;
}

int fence_wait(dal_t *dal, dal_sql_cache_t *cache, dal_stmt_text_t sql)
{
    const dal_sql_t *a = sql.prepared;
    const struct timespec tick = {0, 1000000};
    int waited = 0;

    if (a == NULL && (a = stmt_analyse(cache, sql.text, sql.len, NULL)) == NULL)
        return 0;   /* the statement's own run reports what is wrong with it */
    while (is_write(a->kind) && holding(dal, a) > now_ms()) {
        nanosleep(&tick, NULL);
        waited = 1;
    }
    if (sql.prepared == NULL)
        sql_unref(a);
    return waited;
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
    if (a == NULL && (a = stmt_analyse(cache, sql.text, sql.len, NULL)) == NULL)
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
