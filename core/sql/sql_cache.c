/*
 * sql_cache.c -- the analysis cache (sql_cache.h): sets of a few slots
 * under striped mutexes, evicted by a clock sweep and bounded in bytes,
 * with a per-thread front cache that lends analyses without a lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "sql_cache.h"
#include "sql_lex.h"
#include "thread.h"

enum {
    WAYS = 8,     /* slots per set; a lookup compares at most this many hashes */
    STRIPES = 64, /* mutexes; set s is guarded by stripe s % STRIPES */
};

struct slot {
    uint64_t hash;
    dal_sql_t *sql; /* one reference held by the cache; NULL if empty */
    int used;       /* clock bit: set on hit, cleared by the sweep */
};

struct set {
    struct slot slot[WAYS];
    unsigned hand; /* clock hand */
};

struct stripe {
    pthread_mutex_t mu;
    uint64_t hits, misses;
};

/* What the cache holds and its bounds: written when an entry comes or
 * goes (a miss), never on a hit, in a line of their own away from what a
 * hit reads. */
struct cache_size {
    char gap[64];              /* off the cache line of the last stripe */
    _Atomic size_t bytes;      /* sum of entry_bytes over the entries */
    atomic_size_t entries;
    _Atomic uint64_t evictions, uncached;
    _Atomic size_t max_bytes, max_statement;
    pthread_mutex_t shrink_mu; /* one thread at a time sweeps the sets; guards hand */
    size_t hand;               /* the next set that sweep visits */
};

struct dal_sql_cache {
    uint64_t id;  /* never the same for two caches of the process: names it in the
                     threads' front caches, which may outlive it */
    size_t nsets; /* a power of two */
    struct set *sets;
    struct stripe stripes[STRIPES];
    struct cache_size size;
};

/* The bytes an entry holds: its analysis with its copy of the text (one
 * block), and room for the normalised text monitors make of it later,
 * which is never longer than the text. */
static size_t entry_bytes(const dal_sql_t *s)
{
    return s->size + s->len + 1;
}

/* A 64-bit hash eight bytes at a time (multiply-xorshift mixing), fast on
 * short statements where a byte-wise FNV would dominate a cache hit. */
uint64_t sql_hash_text(const char *p, size_t n)
{
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t h = (uint64_t)n * m, w;

    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * m;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 29);
}

static _Atomic uint64_t cache_ids;

dal_sql_cache_t *sql_cache_new(size_t capacity)
{
    dal_sql_cache_t *c = calloc(1, sizeof *c);
    size_t nsets = 2, i;

    if (!c)
        return NULL;
    while (nsets * WAYS < capacity && nsets < SIZE_MAX / 2 / sizeof(struct set))
        nsets *= 2;
    if (!(c->sets = calloc(nsets, sizeof *c->sets))) {
        free(c);
        return NULL;
    }
    c->nsets = nsets;
    c->id = atomic_fetch_add_explicit(&cache_ids, 1, memory_order_relaxed) + 1;
    for (i = 0; i < STRIPES; i++)
        pthread_mutex_init(&c->stripes[i].mu, NULL);
    atomic_init(&c->size.max_bytes, SQL_CACHE_BYTES);
    atomic_init(&c->size.max_statement, SQL_CACHE_MAX_STATEMENT);
    pthread_mutex_init(&c->size.shrink_mu, NULL);
    return c;
}

/* An entry is a text read in one mode (NO_BACKSLASH_ESCAPES or not): the
 * same text reads differently in the other, so the mode is part of the key. */
static int same_key(const dal_sql_t *s, const char *sql, size_t len, int no_backslash)
{
    return s->len == len && s->no_backslash == no_backslash && memcmp(s->text, sql, len) == 0;
}

/* The key's hash: the text's, told apart by the mode. */
static uint64_t key_hash(const char *sql, size_t len, int no_backslash)
{
    /* the servers' version too: it decides how executable comments read
     * (sql_server_version), and is 0 before the first connection */
    return sql_hash_text(sql, len) ^ (no_backslash ? UINT64_C(0x9e3779b97f4a7c15) : 0) ^
           ((uint64_t)sql_server_version() << 40);
}

static dal_sql_t *set_find(struct set *st, uint64_t h, const char *sql, size_t len,
                           int no_backslash)
{
    int i;

    for (i = 0; i < WAYS; i++) {
        dal_sql_t *s = st->slot[i].sql;
        if (s && st->slot[i].hash == h && same_key(s, sql, len, no_backslash)) {
            /* written only when it changes: every thread running this
             * statement reads the set's cache line */
            if (!st->slot[i].used)
                st->slot[i].used = 1;
            return s;
        }
    }
    return NULL;
}

/* Put s in the set; returns the entry it displaced (its reference is now
 * the caller's to drop) or NULL. */
static dal_sql_t *set_insert(struct set *st, uint64_t h, dal_sql_t *s)
{
    struct slot *v;
    dal_sql_t *old;
    int i;

    for (i = 0; i < WAYS; i++) {
        if (!st->slot[i].sql) {
            st->slot[i].hash = h;
            st->slot[i].sql = s;
            st->slot[i].used = 0;
            return NULL;
        }
    }
    for (;;) {
        v = &st->slot[st->hand];
        st->hand = (st->hand + 1) % WAYS;
        if (!v->used)
            break;
        v->used = 0;
    }
    old = v->sql;
    v->hash = h;
    v->sql = s;
    return old;
}

/* Whether s may be kept: a statement up to the size limit whose entry
 * fits in the byte bound (a dump's megabyte INSERTs run once each and
 * would push out everything else). */
static int admitted(dal_sql_cache_t *c, const dal_sql_t *s)
{
    return s->len <= atomic_load_explicit(&c->size.max_statement, memory_order_relaxed) &&
           entry_bytes(s) <= atomic_load_explicit(&c->size.max_bytes, memory_order_relaxed);
}

/* s went in, displacing old (or NULL): the figures follow. */
static void account(dal_sql_cache_t *c, const dal_sql_t *s, const dal_sql_t *old)
{
    atomic_fetch_add_explicit(&c->size.bytes, entry_bytes(s), memory_order_relaxed);
    if (old == NULL) {
        atomic_fetch_add_explicit(&c->size.entries, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_sub_explicit(&c->size.bytes, entry_bytes(old), memory_order_relaxed);
    atomic_fetch_add_explicit(&c->size.evictions, 1, memory_order_relaxed);
}

/* The clock sweep over set si for the byte bound: entries used since the
 * last pass lose their mark, the others go, until the cache is back
 * within max.  What went is stored in gone (WAYS long) for the caller to
 * let go of outside the lock; returns how many. */
static int sweep_set(dal_sql_cache_t *c, size_t si, size_t max, dal_sql_t **gone)
{
    struct set *st = &c->sets[si];
    struct stripe *sp = &c->stripes[si % STRIPES];
    int k, n = 0;

    pthread_mutex_lock(&sp->mu);
    for (k = 0; k < WAYS && atomic_load_explicit(&c->size.bytes, memory_order_relaxed) > max;
         k++) {
        struct slot *v = &st->slot[k];
        if (v->sql == NULL)
            continue;
        if (v->used) {
            v->used = 0;
            continue;
        }
        gone[n++] = v->sql;
        atomic_fetch_sub_explicit(&c->size.bytes, entry_bytes(v->sql), memory_order_relaxed);
        atomic_fetch_sub_explicit(&c->size.entries, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->size.evictions, 1, memory_order_relaxed);
        v->sql = NULL;
    }
    pthread_mutex_unlock(&sp->mu);
    return n;
}

/* Evict until the cache holds at most its byte bound: a clock hand over
 * all the sets, so that the bytes of any set can make room.  Two rounds
 * at most: the first may only clear marks. */
static void shrink(dal_sql_cache_t *c)
{
    size_t max = atomic_load_explicit(&c->size.max_bytes, memory_order_relaxed), visits;
    dal_sql_t *gone[WAYS];
    int n;

    pthread_mutex_lock(&c->size.shrink_mu);
    for (visits = 0; visits < 2 * c->nsets &&
                     atomic_load_explicit(&c->size.bytes, memory_order_relaxed) > max;
         visits++) {
        n = sweep_set(c, c->size.hand++ & (c->nsets - 1), max, gone);
        while (n > 0)
            sql_unref(gone[--n]);
    }
    pthread_mutex_unlock(&c->size.shrink_mu);
}

/* sql_cache_get with the text's hash h already known. */
static const dal_sql_t *get_hashed(dal_sql_cache_t *c, uint64_t h, const char *sql, size_t len,
                                   int no_backslash, char *errbuf, size_t errcap)
{
    size_t si = (size_t)h & (c->nsets - 1);
    struct set *st = &c->sets[si];
    struct stripe *sp = &c->stripes[si % STRIPES];
    dal_sql_t *s, *fresh, *old = NULL;

    pthread_mutex_lock(&sp->mu);
    if ((s = set_find(st, h, sql, len, no_backslash)) != NULL) {
        sp->hits++;
        sql_ref(s);
        pthread_mutex_unlock(&sp->mu);
        return s;
    }
    sp->misses++;
    pthread_mutex_unlock(&sp->mu);

    /* analyse without the lock: it is the slow part */
    if (sql_analyse(sql, len, no_backslash, &fresh, errbuf, errcap) != 0)
        return NULL;
    if (!admitted(c, fresh)) { /* the caller's alone, freed after its statement */
        atomic_fetch_add_explicit(&c->size.uncached, 1, memory_order_relaxed);
        return fresh;
    }
    pthread_mutex_lock(&sp->mu);
    if ((s = set_find(st, h, sql, len, no_backslash)) != NULL) { /* another thread was faster */
        sql_ref(s);
    } else {
        s = fresh;
        fresh = NULL;
        sql_ref(s); /* one for the cache, one for the caller */
        old = set_insert(st, h, s);
        account(c, s, old);
    }
    pthread_mutex_unlock(&sp->mu);
    sql_free(fresh);
    sql_unref(old);
    if (atomic_load_explicit(&c->size.bytes, memory_order_relaxed) >
        atomic_load_explicit(&c->size.max_bytes, memory_order_relaxed))
        shrink(c);
    return s;
}

const dal_sql_t *sql_cache_get(dal_sql_cache_t *c, const char *sql, size_t len,
                               int no_backslash, char *errbuf, size_t errcap)
{
    no_backslash = no_backslash != 0;
    return get_hashed(c, key_hash(sql, len, no_backslash), sql, len, no_backslash, errbuf,
                      errcap);
}

/* ------------------------------------------------ a thread's front cache */

/* Texts a thread keeps in front of the shared cache, direct-mapped by hash. */
#define FRONT_WAYS 16
/* The largest entry (entry_bytes) a thread keeps: what an idle thread pins
 * stays under FRONT_WAYS times this, whatever it ran last. */
#define FRONT_MAX_BYTES 16384

/* One text the thread ran: a reference of its own on the analysis, so a
 * hit takes no lock and writes no line another thread reads (two threads
 * running the same statement through the shared cache pass its stripe's
 * mutex and the analysis's count between their cores at every
 * statement). */
struct front_entry {
    uint64_t cache; /* the shared cache's id; 0: empty */
    uint64_t hash;
    const dal_sql_t *sql; /* a reference */
};

struct front {
    struct front_entry e[FRONT_WAYS];
    int lent;       /* an analysis is lent out (until sql_cache_return) */
};

static __thread struct front *front DAL_TLS_SMALL;

/* At the thread's exit: its references go. */
static void front_free(void *v)
{
    struct front *f = v;
    int i;

    for (i = 0; i < FRONT_WAYS; i++)
        sql_unref(f->e[i].sql);
    free(f);
    front = NULL;
}

static thread_exit_t front_exit = THREAD_EXIT_INIT(front_free);

/* The thread's front cache, made on first use; NULL without one. */
static struct front *front_get(void)
{
    struct front *f = front;

    if (f != NULL)
        return f;
    if ((f = calloc(1, sizeof *f)) == NULL)
        return NULL;
    if (thread_exit_arm(&front_exit, f) != 0) {
        free(f);
        return NULL;
    }
    return front = f;
}

const dal_sql_t *sql_cache_borrow(dal_sql_cache_t *c, const char *sql, size_t len,
                                  int no_backslash, int *lent, char *errbuf, size_t errcap)
{
    struct front *f = front_get();
    uint64_t h;
    struct front_entry *e;
    const dal_sql_t *s, *old;

    *lent = 0;
    no_backslash = no_backslash != 0;
    h = key_hash(sql, len, no_backslash);
    if (f == NULL || f->lent)
        return get_hashed(c, h, sql, len, no_backslash, errbuf, errcap);
    e = &f->e[h % FRONT_WAYS];
    if (e->cache != c->id || e->hash != h || !same_key(e->sql, sql, len, no_backslash)) {
        if ((s = get_hashed(c, h, sql, len, no_backslash, errbuf, errcap)) == NULL)
            return NULL;
        if (entry_bytes(s) > FRONT_MAX_BYTES)
            return s; /* a reference of the caller's own */
        old = e->sql;
        e->cache = c->id;
        e->hash = h;
        e->sql = s;
        sql_unref(old);
    }
    f->lent = 1;
    *lent = 1;
    return e->sql;
}

void sql_cache_return(void)
{
    if (front != NULL)
        front->lent = 0;
}

void sql_cache_stats(dal_sql_cache_t *c, uint64_t *hits, uint64_t *misses)
{
    uint64_t th = 0, tm = 0;
    int i;

    for (i = 0; i < STRIPES; i++) {
        pthread_mutex_lock(&c->stripes[i].mu);
        th += c->stripes[i].hits;
        tm += c->stripes[i].misses;
        pthread_mutex_unlock(&c->stripes[i].mu);
    }
    if (hits)
        *hits = th;
    if (misses)
        *misses = tm;
}

void sql_cache_limit(dal_sql_cache_t *c, size_t max_bytes, size_t max_statement)
{
    atomic_store_explicit(&c->size.max_statement, max_statement, memory_order_relaxed);
    atomic_store_explicit(&c->size.max_bytes, max_bytes, memory_order_relaxed);
    if (atomic_load_explicit(&c->size.bytes, memory_order_relaxed) > max_bytes)
        shrink(c);
}

void sql_cache_figures(dal_sql_cache_t *c, sql_cache_figures_t *out)
{
    sql_cache_stats(c, &out->hits, &out->misses);
    out->entries = atomic_load_explicit(&c->size.entries, memory_order_relaxed);
    out->bytes = atomic_load_explicit(&c->size.bytes, memory_order_relaxed);
    out->evictions = atomic_load_explicit(&c->size.evictions, memory_order_relaxed);
    out->uncached = atomic_load_explicit(&c->size.uncached, memory_order_relaxed);
    out->max_bytes = atomic_load_explicit(&c->size.max_bytes, memory_order_relaxed);
    out->max_statement = atomic_load_explicit(&c->size.max_statement, memory_order_relaxed);
}

void sql_cache_free(dal_sql_cache_t *c)
{
    size_t i;
    int k;

    if (!c)
        return;
    for (i = 0; i < c->nsets; i++)
        for (k = 0; k < WAYS; k++)
            sql_unref(c->sets[i].slot[k].sql);
    for (k = 0; k < STRIPES; k++)
        pthread_mutex_destroy(&c->stripes[k].mu);
    pthread_mutex_destroy(&c->size.shrink_mu);
    free(c->sets);
    free(c);
}

