/*
 * shard_hash.c -- the "hash" shard strategy.
 *
 *     table = dal_hash64(canonical bytes of v) % table_shard_num
 *     db    = table / (table_shard_num / db_shard_num)
 *
 * The hash decides where rows live for as long as the table exists, so it is
 * defined on bytes and 64-bit unsigned arithmetic only, never on the
 * machine's word size, byte order or the compiler.  docs/plugins.md gives the
 * definition and test vectors; tests/unit/test_shard.c pins them.  Changing any
 * of it moves existing rows: do not.
 *
 *   canonical bytes: integers (INT, UINT) as their decimal text ("42",
 *     "-7"), so the int 42 and the string "42" land together; strings and
 *     blobs as their bytes, unchanged ("042" is its own key).
 *   dal_hash64: 64-bit FNV-1a over the bytes, then a finalizer (the
 *     xor-shift-multiply mix of MurmurHash3's fmix64).  FNV-1a alone leaves
 *     the low bits of short decimal keys poorly spread, and % table_shard_num
 *     reads mostly low bits; the mix spreads every input bit over all 64.
 *
 * There is no locate_range: hashing scatters any range over every table.
 * The instance is the table geometry alone (shard_geom_t), immutable after
 * create(), so locate() is thread-safe.
 */
#include "shard_common.h"

#define HASH_FNV_OFFSET 0xcbf29ce484222325ULL
#define HASH_FNV_PRIME 0x00000100000001b3ULL
#define HASH_ACCEPTS "hash accepts integers, strings and blobs"

static uint64_t hash_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = HASH_FNV_OFFSET;

    while (n--) {
        h ^= *p++;
        h *= HASH_FNV_PRIME;
    }
    return h;
}

static uint64_t hash_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* "00" "01" ... "99": two digits per table read. */
static const char hash_pairs[] =
    "00010203040506070809101112131415161718192021222324"
    "25262728293031323334353637383940414243444546474849"
    "50515253545556575859606162636465666768697071727374"
    "75767778798081828384858687888990919293949596979899";

/* The 8 decimal digits of c < 10^8, zero-padded.  The four pairs do not
 * depend on each other, so the CPU works on them at once. */
static void hash_put8(unsigned char *p, uint32_t c)
{
    uint32_t hi = c / 10000, lo = c % 10000;

    memcpy(p, hash_pairs + 2 * (hi / 100), 2);
    memcpy(p + 2, hash_pairs + 2 * (hi % 100), 2);
    memcpy(p + 4, hash_pairs + 2 * (lo / 100), 2);
    memcpy(p + 6, hash_pairs + 2 * (lo % 100), 2);
}

/*
 * Write x's decimal text so that it ends at end; return where it starts.
 * Turning an integer into text is half the cost of hashing it, so this
 * works in 8-digit chunks with 32-bit arithmetic instead of digit by digit.
 */
static unsigned char *hash_decimal(unsigned char *end, const shard_num_t *x)
{
    uint64_t m = x->mag;
    unsigned char *p = end;
    uint32_t r;

    while (m >= 100000000) {
        p -= 8;
        hash_put8(p, (uint32_t)(m % 100000000));
        m /= 100000000;
    }
    for (r = (uint32_t)m; r >= 100; r /= 100) {
        p -= 2;
        memcpy(p, hash_pairs + 2 * (r % 100), 2);
    }
    if (r >= 10) {
        p -= 2;
        memcpy(p, hash_pairs + 2 * r, 2);
    } else {
        *--p = (unsigned char)('0' + r);
    }
    if (x->neg)
        *--p = '-';
    return p;
}

/* Hash of a value's canonical bytes; -1 for values without any (NULL, double). */
static int hash_value(const dal_value_t *v, uint64_t *out)
{
    unsigned char buf[21]; /* "-" and 20 digits: the longest 64-bit decimal */
    unsigned char *p;
    shard_num_t x;

    switch (v->type) {
    case DAL_TYPE_STRING:
    case DAL_TYPE_BLOB:
        *out = hash_mix(hash_fnv1a((const unsigned char *)v->v.s.ptr, v->v.s.len));
        return 0;
    case DAL_TYPE_INT:
    case DAL_TYPE_UINT:
        shard_read_num(v, &x); /* cannot fail for these types */
        p = hash_decimal(buf + sizeof buf, &x);
        *out = hash_mix(hash_fnv1a(p, (size_t)(buf + sizeof buf - p)));
        return 0;
    default:
        return -1;
    }
}

/* NULL and doubles: a double's text is no stable key (1.5, 1.50, 15e-1). */
static int hash_reject(const shard_geom_t *h, const dal_value_t *v, dal_error_t *err)
{
    char d[SHARD_DESC_MAX];

    if (v->type == DAL_TYPE_NULL)
        return h->api->set_error(err, DAL_ESHARD, "shard value is NULL; " HASH_ACCEPTS);
    return h->api->set_error(err, DAL_ESHARD, "shard value %s is a %s; " HASH_ACCEPTS,
                             shard_describe(v, d), shard_type_name(v->type));
}

static int hash_locate(void *instance, const dal_value_t *value, dal_shard_pos_t *out,
                       dal_error_t *err)
{
    const shard_geom_t *h = instance;
    uint64_t hv;

    if (hash_value(value, &hv) != 0)
        return hash_reject(h, value, err);
    shard_set_pos(out, (uint32_t)(hv % h->tables), h->per_db);
    return 0;
}

static const dal_shard_ops_t hash_ops = {
    sizeof(dal_shard_ops_t),
    shard_geom_create, /* no parameters: a seed would be one more way to lose rows */
    shard_geom_destroy,
    hash_locate,
    NULL /* locate_range: every range touches every table */
};

static const dal_plugin_t hash_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_SHARD,
    "hash",
    DAL_VERSION_STRING,
    "stable hash: table = fmix64(FNV-1a-64(key text)) % table_shard_num",
    NULL, /* no parameters */
    &hash_ops
};

DAL_PLUGIN_DECLARE(hash_plugin)
