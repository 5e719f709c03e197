/*
 * sql.c - what a statement's analysis offers besides the pass that makes it
 * (sql_analyse.c): references, literal decoding, the analysis cache.
 * See sql.h.
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
#include "hex.h"
#include "sql.h"
#include "thread.h"

void sql_free(dal_sql_t *s)
{
    if (s != NULL) {
        dal_sql_ext_t *fill = atomic_load(&s->fill), *edits = atomic_load(&s->edits);
        free(atomic_load(&s->norm));
        free(atomic_load(&s->names));
        if (fill != NULL)
            fill->destroy(fill);
        if (edits != NULL)
            edits->destroy(edits);
    }
    free(s);
}

const dal_sql_t *sql_ref(const dal_sql_t *s)
{
    /* The object is never const where it was allocated; only the count
     * changes, and it is atomic. */
    atomic_fetch_add_explicit(&((dal_sql_t *)s)->refs, 1, memory_order_relaxed);
    return s;
}

void sql_unref(const dal_sql_t *s)
{
    dal_sql_t *m = (dal_sql_t *)s;

    if (m && atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
        sql_free(m);
}

const char *sql_kind_name(dal_sql_kind_t kind)
{
    static const char *const names[] = {
        "SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "DDL", "BEGIN", "COMMIT",
        "ROLLBACK", "SET", "SHOW", "OTHER", "MULTI",
    };
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* ============================================================ literals */

typedef struct sink {
    char *out;
    size_t cap, n;
} sink_t;

static void sink_put(sink_t *k, char c)
{
    if (k->n + 1 < k->cap)
        k->out[k->n] = c;
    k->n++;
}

static void sink_end(sink_t *k, size_t *outlen)
{
    if (k->cap > 0)
        k->out[k->n < k->cap ? k->n : k->cap - 1] = '\0';
    *outlen = k->n;
}

/* X'hex' body [b,e): an even number of hex digits. */
static int decode_hex(const char *b, const char *e, sink_t *k)
{
    if ((e - b) % 2)
        return -1;
    for (; b < e; b += 2) {
        int hi = hexval(b[0]), lo = hexval(b[1]);
        if (hi < 0 || lo < 0)
            return -1;
        sink_put(k, (char)(hi * 16 + lo));
    }
    return 0;
}

/* B'bits' body [b,e): bits, left-padded to whole bytes. */
static int decode_bits(const char *b, const char *e, sink_t *k)
{
    size_t nbits = (size_t)(e - b), pad = (8 - nbits % 8) % 8, i;
    unsigned v = 0;

    for (i = 0; i < nbits; i++) {
        if (b[i] != '0' && b[i] != '1')
            return -1;
        v = (v << 1) | (unsigned)(b[i] - '0');
        if ((pad + i + 1) % 8 == 0) {
            sink_put(k, (char)v);
            v = 0;
        }
    }
    return 0;
}

/* A quoted body [b,e) (quotes excluded) with backslash escapes and doubled
 * quotes q.  \% and \_ keep their backslash, as in the server (they are
 * LIKE escapes). */
static void decode_escaped(const char *b, const char *e, char q, sink_t *k)
{
    for (; b < e; b++) {
        char c = *b;
        if (c == '\\' && b + 1 < e) {
            c = *++b;
            switch (c) {
            case '0': c = '\0'; break;
            case 'b': c = '\b'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'Z': c = '\032'; break;
            case '%':
            case '_': sink_put(k, '\\'); break;
            default: break;
            }
        } else if (c == q && b + 1 < e && b[1] == q) {
            b++;
        }
        sink_put(k, c);
    }
}

/* A string token t[0..n): optional prefix, opening quote, body, closing
 * quote. */
int sql_decode_string(const char *t, size_t n, char *out, size_t cap, size_t *outlen)
{
    sink_t k = {out, cap, 0};
    size_t q = 0;
    int rc = 0;

    while (q < n && t[q] != '\'' && t[q] != '"')
        q++;
    if (q + 2 > n || t[n - 1] != t[q]) {
        rc = -1;
    } else if (q == 1 && (t[0] == 'x' || t[0] == 'X')) {
        rc = decode_hex(t + 2, t + n - 1, &k);
    } else if (q == 1 && (t[0] == 'b' || t[0] == 'B')) {
        rc = decode_bits(t + 2, t + n - 1, &k);
    } else {
        decode_escaped(t + q + 1, t + n - 1, t[q], &k);
    }
    sink_end(&k, outlen);
    return rc;
}

int sql_literal_text(const char *sql, const dal_sql_opnd_t *o, char *out, size_t cap,
                     size_t *outlen)
{
    const char *t = sql + o->off;
    sink_t k = {out, cap, 0};
    size_t i;

    *outlen = 0;
    if (cap > 0)
        out[0] = '\0';
    if (o->kind != DAL_OPND_LITERAL)
        return -1;
    if (o->lit_type == DAL_TOK_STRING)
        return sql_decode_string(t, o->len, out, cap, outlen);
    /* a number (maybe "- 12") or NULL/TRUE/FALSE: the text without blanks
     * and without a unary plus */
    for (i = 0; i < o->len; i++)
        if (!sql_space(t[i]) && !(i == 0 && t[i] == '+'))
            sink_put(&k, t[i]);
    sink_end(&k, outlen);
    return 0;
}

/* ============================================================ the cache */

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

static dal_sql_t *set_find(struct set *st, uint64_t h, const char *sql, size_t len)
{
    int i;

    for (i = 0; i < WAYS; i++) {
        dal_sql_t *s = st->slot[i].sql;
        if (s && st->slot[i].hash == h && s->len == len && memcmp(s->text, sql, len) == 0) {
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
                                   char *errbuf, size_t errcap)
{
    size_t si = (size_t)h & (c->nsets - 1);
    struct set *st = &c->sets[si];
    struct stripe *sp = &c->stripes[si % STRIPES];
    dal_sql_t *s, *fresh, *old = NULL;

    pthread_mutex_lock(&sp->mu);
    if ((s = set_find(st, h, sql, len)) != NULL) {
        sp->hits++;
        sql_ref(s);
        pthread_mutex_unlock(&sp->mu);
        return s;
    }
    sp->misses++;
    pthread_mutex_unlock(&sp->mu);

    /* analyse without the lock: it is the slow part */
    if (sql_analyse(sql, len, &fresh, errbuf, errcap) != 0)
        return NULL;
    if (!admitted(c, fresh)) { /* the caller's alone, freed after its statement */
        atomic_fetch_add_explicit(&c->size.uncached, 1, memory_order_relaxed);
        return fresh;
    }
    pthread_mutex_lock(&sp->mu);
    if ((s = set_find(st, h, sql, len)) != NULL) { /* another thread was faster */
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
                               char *errbuf, size_t errcap)
{
    return get_hashed(c, sql_hash_text(sql, len), sql, len, errbuf, errcap);
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

const dal_sql_t *sql_cache_borrow(dal_sql_cache_t *c, const char *sql, size_t len, int *lent,
                                  char *errbuf, size_t errcap)
{
    struct front *f = front_get();
    uint64_t h = sql_hash_text(sql, len);
    struct front_entry *e;
    const dal_sql_t *s, *old;

    *lent = 0;
    if (f == NULL || f->lent)
        return get_hashed(c, h, sql, len, errbuf, errcap);
    e = &f->e[h % FRONT_WAYS];
    if (e->cache != c->id || e->hash != h || e->sql->len != len ||
        memcmp(e->sql->text, sql, len) != 0) {
        if ((s = get_hashed(c, h, sql, len, errbuf, errcap)) == NULL)
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

const char *sql_pin_word(unsigned int pins)
{
    static const char *const words[] = {"user_variable", "temporary_table", "table_lock",
                                        "named_lock", "prepare", "handler"};
    size_t i;

    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        if (pins & (1u << i))
            return words[i];
    return "none";
}

/* The statement kind as a lower-case word: dal_plan_kind and monitor events. */
const char *sql_kind_word(dal_sql_kind_t k)
{
    switch (k) {
    case DAL_SQL_SELECT: return "select";
    case DAL_SQL_INSERT: return "insert";
    case DAL_SQL_REPLACE: return "replace";
    case DAL_SQL_UPDATE: return "update";
    case DAL_SQL_DELETE: return "delete";
    case DAL_SQL_DDL: return "ddl";
    case DAL_SQL_BEGIN: return "begin";
    case DAL_SQL_COMMIT: return "commit";
    case DAL_SQL_ROLLBACK: return "rollback";
    case DAL_SQL_SET: return "set";
    case DAL_SQL_SHOW: return "show";
    case DAL_SQL_OTHER: return "other";
    case DAL_SQL_MULTI: return "multi";
    }
    return "other";
}

