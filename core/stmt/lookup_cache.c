/*
 * lookup_cache.c -- the answers of lookup reads kept briefly ([dal]
 * lookup_cache), per value: the shard keys a value of a lookup table maps
 * to, or none (lookup.h).
 *
 * A fixed table of slots, each found by a hash of the lookup table and the
 * value, and locked by one of a few mutexes.  An entry belongs to one
 * snapshot (its generation) and expires.  This process's writes forget
 * the values they write (lookup_cache_forget) or, for a write of a lookup
 * table itself, every entry (lookup_cache_forget_all).  A slot's version
 * moves on each forget, and a read stores its answer only if the version
 * it saw before reading is still the slot's: a write that ran during the
 * read is never hidden by it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "clock.h"
#include "lookup.h"

#define SLOTS 2048
#define STRIPES 64
#define VAL_MAX 64
#define KEYS_MAX 4
#define KEY_MAX 24

typedef struct slot {
    uint32_t version;          /* moves on each forget */
    uint32_t gen;              /* the snapshot; 0: empty */
    const dal_table_t *lt;     /* borrowed from that snapshot, compared only */
    uint64_t epoch;            /* lookup_cache_forget_all's count when stored */
    uint64_t expires_ns;
    uint8_t type, vlen, nkeys;
    char val[VAL_MAX];
    char keys[KEYS_MAX][KEY_MAX];
    uint8_t klen[KEYS_MAX];
} slot_t;

static slot_t slots[SLOTS];
static pthread_mutex_t stripes[STRIPES] = {[0 ... STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER};
static atomic_uint_fast64_t epoch;

/* Whether t[0..n) is an integer as MySQL compares it with one: digits,
 * maybe a '-', no leading zero. */
static int int_text(const char *t, size_t n)
{
    size_t i = n > 0 && t[0] == '-';

    if (i == n || n > 20 || (t[i] == '0' && n > i + 1))
        return 0;
    for (; i < n; i++)
        if (t[i] < '0' || t[i] > '9')
            return 0;
    return 1;
}

/* v as text for the key of its slot (an int as digits), *type 1 for an
 * integer (also '12': it finds the rows 12 finds, one entry for both);
 * 0 if it cannot be kept. */
static size_t value_text(const dal_value_t *v, char *out, int *type)
{
    *type = 1;
    switch (v->type) {
    case DAL_TYPE_INT:
        return (size_t)snprintf(out, VAL_MAX, "%lld", (long long)v->v.i);
    case DAL_TYPE_UINT:
        return (size_t)snprintf(out, VAL_MAX, "%llu", (unsigned long long)v->v.u);
    case DAL_TYPE_STRING:
        if (v->v.s.len == 0 || v->v.s.len >= VAL_MAX)
            return 0;
        memcpy(out, v->v.s.ptr, v->v.s.len);
        *type = int_text(out, v->v.s.len);
        return v->v.s.len;
    default:
        return 0;
    }
}

static uint32_t hash(const dal_table_t *lt, int type, const char *t, size_t n)
{
    uint64_t h = (uint64_t)(uintptr_t)lt * 0x9e3779b97f4a7c15ULL ^ (uint64_t)type;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)t[i]) * 0x100000001b3ULL;
    /* FNV moves a last character's bits little: mixed before a slot is
     * taken of them (values often differ in their last digits only) */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (uint32_t)(h % SLOTS);
}

int lookup_cache_get(uint32_t gen, const dal_table_t *lt, const dal_value_t *v,
                     dal_lookup_t *lk, uint32_t *version, dal_error_t *err)
{
    char t[VAL_MAX];
    int type, hit = 0, rc = 0;
    size_t n = value_text(v, t, &type), i;
    uint32_t h;
    slot_t *s;

    *version = UINT32_MAX; /* not to be stored */
    if (n == 0)
        return 0;
    h = hash(lt, type, t, n);
    s = &slots[h];
    pthread_mutex_lock(&stripes[h % STRIPES]);
    *version = s->version;
    hit = s->gen == gen && s->lt == lt && s->type == type && s->vlen == n &&
          memcmp(s->val, t, n) == 0 && s->epoch == atomic_load(&epoch) &&
          s->expires_ns > clock_now_ns();
    for (i = 0; hit && rc == 0 && i < s->nkeys; i++)
        rc = lookup_add_key(lk, s->keys[i], s->klen[i], err);
    pthread_mutex_unlock(&stripes[h % STRIPES]);
    return rc != 0 ? rc : hit;
}

void lookup_cache_put(uint32_t gen, const dal_table_t *lt, const dal_value_t *v,
                      uint32_t version, const char *const *keys, const size_t *klen,
                      size_t nkeys, uint32_t ttl_ms)
{
    char t[VAL_MAX];
    int type;
    size_t n = value_text(v, t, &type), i;
    uint32_t h;
    slot_t *s;

    if (n == 0 || version == UINT32_MAX || nkeys > KEYS_MAX)
        return;
    for (i = 0; i < nkeys; i++)
        if (klen[i] >= KEY_MAX)
            return;
    h = hash(lt, type, t, n);
    s = &slots[h];
    pthread_mutex_lock(&stripes[h % STRIPES]);
    if (s->version == version) {
        s->gen = gen;
        s->lt = lt;
        s->type = (uint8_t)type;
        s->vlen = (uint8_t)n;
        memcpy(s->val, t, n);
        s->nkeys = (uint8_t)nkeys;
        for (i = 0; i < nkeys; i++) {
            memcpy(s->keys[i], keys[i], klen[i]);
            s->klen[i] = (uint8_t)klen[i];
        }
        s->epoch = atomic_load(&epoch);
        s->expires_ns = clock_now_ns() + (uint64_t)ttl_ms * 1000000u;
    }
    pthread_mutex_unlock(&stripes[h % STRIPES]);
}

void lookup_cache_forget(const dal_table_t *lt, const dal_value_t *v)
{
    char t[VAL_MAX];
    int type;
    size_t n = value_text(v, t, &type);
    uint32_t h;

    if (n == 0)
        return;
    h = hash(lt, type, t, n);
    pthread_mutex_lock(&stripes[h % STRIPES]);
    slots[h].version++;
    slots[h].gen = 0;
    pthread_mutex_unlock(&stripes[h % STRIPES]);
}

void lookup_cache_forget_all(void)
{
    size_t i;

    atomic_fetch_add(&epoch, 1);
    /* a read under way stores nothing */
    for (i = 0; i < STRIPES; i++) {
        size_t k;
        pthread_mutex_lock(&stripes[i]);
        for (k = i; k < SLOTS; k += STRIPES)
            slots[k].version++;
        pthread_mutex_unlock(&stripes[i]);
    }
}
