/*
 * shard_common.h -- helpers shared by the built-in shard strategies.
 *
 * Header-only on purpose: each plugin is its own .so that links against
 * nothing of dal, so the helpers are compiled into every plugin that
 * includes this file.  They are static inline so that a plugin using only
 * some of them draws no unused-function warnings.  Nothing here allocates
 * but shard_geom_create.
 *
 * Shard values are integers for mod and range.  They arrive as
 * DAL_TYPE_INT, DAL_TYPE_UINT or as decimal text (DAL_TYPE_STRING, as the
 * command-line tool and string literals in SQL hand them over).  Text is
 * accepted only in canonical form:
 *
 *     0 | [1-9][0-9]* | -[1-9][0-9]*       (magnitude at most 2^64-1)
 *
 * No '+', no blanks, no leading zeros, no "-0".  A key that is spelled some
 * other way is more likely a mistake than a number, and accepting only one
 * spelling per number keeps "is this string the integer N?" the same
 * question for every strategy (hash relies on it: the int 42 and the text
 * "42" must land together, "042" is a different string key).
 */
#ifndef DAL_PLUGINS_SHARD_COMMON_H
#define DAL_PLUGINS_SHARD_COMMON_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/plugin.h>

/* An integer in sign-magnitude form, wide enough for both INT and UINT
 * values: the value is -mag if neg, else mag.  neg implies mag > 0. */
typedef struct shard_num {
    uint64_t mag;
    int neg;
} shard_num_t;

/* Why a value is not an integer (shard_read_num's result). */
enum {
    SHARD_NUM_OK = 0,
    SHARD_NUM_TYPE = -1, /* NULL, double or blob */
    SHARD_NUM_TEXT = -2, /* a string that is not canonical decimal */
    SHARD_NUM_BIG = -3   /* canonical decimal beyond 64 bits of magnitude */
};

/* Parse canonical decimal text (see the top of this file). */
static inline int shard_parse_dec(const char *p, size_t len, shard_num_t *out)
{
    const char *end, *q;
    uint64_t mag = 0;
    int neg = 0;

    out->mag = 0; /* defined even on failure, which keeps compilers calm */
    out->neg = 0;
    if (len == 0) /* before any arithmetic: an empty value's ptr may be NULL */
        return SHARD_NUM_TEXT;
    end = p + len;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (p == end || (*p == '0' && (end - p > 1 || neg))) /* "", "-", "007", "-0" */
        return SHARD_NUM_TEXT;
    for (q = p; q < end; q++) {
        unsigned d = (unsigned)(*q - '0');

        if (d > 9)
            return SHARD_NUM_TEXT;
        mag = mag * 10 + d; /* wraps only past 19 digits, refused below */
    }
    /* Same length and digits only: text order is numeric order. */
    if (end - p > 20 || (end - p == 20 && memcmp(p, "18446744073709551615", 20) > 0))
        return SHARD_NUM_BIG;
    out->mag = mag;
    out->neg = neg;
    return SHARD_NUM_OK;
}

/* Read an integer shard value.  Returns SHARD_NUM_OK or why not. */
static inline int shard_read_num(const dal_value_t *v, shard_num_t *out)
{
    switch (v->type) {
    case DAL_TYPE_INT:
        out->neg = v->v.i < 0;
        /* -(i + 1) + 1 avoids overflow on INT64_MIN. */
        out->mag = out->neg ? (uint64_t)(-(v->v.i + 1)) + 1 : (uint64_t)v->v.i;
        return SHARD_NUM_OK;
    case DAL_TYPE_UINT:
        out->neg = 0;
        out->mag = v->v.u;
        return SHARD_NUM_OK;
    case DAL_TYPE_STRING:
        return shard_parse_dec(v->v.s.ptr, v->v.s.len, out);
    default:
        out->mag = 0;
        out->neg = 0;
        return SHARD_NUM_TYPE;
    }
}

/* Static name of a value type, for messages. */
static inline const char *shard_type_name(dal_type_t t)
{
    switch (t) {
    case DAL_TYPE_NULL: return "NULL";
    case DAL_TYPE_INT: return "integer";
    case DAL_TYPE_UINT: return "unsigned integer";
    case DAL_TYPE_DOUBLE: return "double";
    case DAL_TYPE_STRING: return "string";
    case DAL_TYPE_BLOB: return "blob";
    }
    return "unknown type";
}

/* Longest part of a string or blob quoted in a message; the rest is "...". */
#define SHARD_QUOTE_MAX 40
/* Room for the longest description shard_describe writes. */
#define SHARD_DESC_MAX (4 * SHARD_QUOTE_MAX + 16)

/*
 * Describe a value for an error message: 42, 1.5, NULL, 'text' (non-printable
 * bytes as \xNN), x'0aff' for blobs; long strings and blobs are cut.  The
 * value may come from a user, so it is quoted, escaped and bounded.
 * buf must have SHARD_DESC_MAX bytes.  Returns buf.
 */
static inline const char *shard_describe(const dal_value_t *v, char *buf)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, n, o = 0;
    int blob = v->type == DAL_TYPE_BLOB;

    switch (v->type) {
    case DAL_TYPE_NULL:
        return strcpy(buf, "NULL");
    case DAL_TYPE_INT:
        snprintf(buf, SHARD_DESC_MAX, "%" PRId64, v->v.i);
        return buf;
    case DAL_TYPE_UINT:
        snprintf(buf, SHARD_DESC_MAX, "%" PRIu64, v->v.u);
        return buf;
    case DAL_TYPE_DOUBLE:
        snprintf(buf, SHARD_DESC_MAX, "%.17g", v->v.d);
        return buf;
    default:
        break;
    }
    n = v->v.s.len < SHARD_QUOTE_MAX ? v->v.s.len : SHARD_QUOTE_MAX;
    if (blob)
        buf[o++] = 'x';
    buf[o++] = '\'';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v->v.s.ptr[i];

        if (!blob && c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
            buf[o++] = (char)c;
            continue;
        }
        if (!blob) {
            buf[o++] = '\\';
            buf[o++] = 'x';
        }
        buf[o++] = hex[c >> 4];
        buf[o++] = hex[c & 15];
    }
    buf[o++] = '\'';
    if (n < v->v.s.len) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/*
 * Fill err with DAL_ESHARD for a value that shard_read_num rejected with
 * why.  accepts says what the strategy takes, for the user who got it wrong.
 */
static inline int shard_num_error(const dal_host_api_t *api, dal_error_t *err,
                                  const dal_value_t *v, int why, const char *accepts)
{
    char d[SHARD_DESC_MAX];

    if (v->type == DAL_TYPE_NULL)
        return api->set_error(err, DAL_ESHARD, "shard value is NULL; %s", accepts);
    shard_describe(v, d);
    if (why == SHARD_NUM_TEXT)
        return api->set_error(err, DAL_ESHARD,
                              "shard value %s is not a decimal integer in canonical form "
                              "(digits, optional '-', no '+', blanks or leading zeros); %s",
                              d, accepts);
    if (why == SHARD_NUM_BIG)
        return api->set_error(err, DAL_ESHARD,
                              "shard value %s does not fit in 64 bits; %s", d, accepts);
    return api->set_error(err, DAL_ESHARD, "shard value %s is a %s, not an integer; %s",
                          d, shard_type_name(v->type), accepts);
}

/*
 * Check the table geometry every strategy relies on.  dal's configuration
 * loader checks it too; a bad one here is a host bug, hence DAL_EINVAL.
 * Sets *per_db, the number of tables on each data node.
 */
static inline int shard_check_table(const dal_host_api_t *api, const dal_shard_table_t *t,
                                    uint32_t *per_db, dal_error_t *err)
{
    /* Set before the checks: callers never read it on failure, compilers cannot tell. */
    *per_db = t->db_shard_num ? t->table_shard_num / t->db_shard_num : 0;
    if (t->db_shard_num < 1 || t->table_shard_num < 1)
        return api->set_error(err, DAL_EINVAL,
                              "db_shard_num (%" PRIu32 ") and table_shard_num (%" PRIu32
                              ") must be at least 1", t->db_shard_num, t->table_shard_num);
    if (t->table_shard_num % t->db_shard_num != 0)
        return api->set_error(err, DAL_EINVAL,
                              "table_shard_num (%" PRIu32 ") must be a multiple of "
                              "db_shard_num (%" PRIu32 ")", t->table_shard_num, t->db_shard_num);
    return 0;
}

/* The whole instance of a strategy that needs nothing but the table
 * geometry (mod, hash).  Immutable after create, so locate() is
 * thread-safe without locks. */
typedef struct shard_geom {
    const dal_host_api_t *api; /* static table, outlives the instance */
    uint32_t tables;           /* table_shard_num */
    uint32_t per_db;           /* tables per data node */
} shard_geom_t;

/* create() for such a strategy: no parameters, the geometry checked.
 * *instance is a shard_geom_t, owned by the host (shard_geom_destroy). */
static inline int shard_geom_create(const dal_host_api_t *api, dal_host_t *host,
                                    const dal_shard_table_t *table,
                                    const dal_plugin_params_t *params, void **instance,
                                    dal_error_t *err)
{
    uint32_t per_db;
    shard_geom_t *g;
    int rc;

    (void)params; /* the strategy declares none */
    if ((rc = shard_check_table(api, table, &per_db, err)) != 0)
        return rc;
    if ((g = malloc(sizeof *g)) == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    g->api = api;
    g->tables = table->table_shard_num;
    g->per_db = per_db;
    api->log(host, DAL_LOG_DEBUG, "%s: %" PRIu32 " tables on %" PRIu32 " nodes",
             table->table, table->table_shard_num, table->db_shard_num);
    *instance = g;
    return 0;
}

static inline void shard_geom_destroy(void *instance)
{
    free(instance);
}

/* MTDDL's node rule: consecutive tables share a node. */
static inline void shard_set_pos(dal_shard_pos_t *out, uint32_t table, uint32_t per_db)
{
    out->table = table;
    out->db = table / per_db;
}

/* Positions first..last (inclusive), appended to out at *count. */
static inline void shard_add_span(dal_shard_pos_t *out, size_t *count, uint32_t first,
                                  uint32_t last, uint32_t per_db)
{
    uint32_t t;

    for (t = first;; t++) {
        shard_set_pos(&out[(*count)++], t, per_db);
        if (t == last)
            break;
    }
}

#endif /* DAL_PLUGINS_SHARD_COMMON_H */
