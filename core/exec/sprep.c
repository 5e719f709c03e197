/*
 * sprep.c -- server-side prepared statements on the backend connections:
 * when a route runs prepared, the per-connection cache of statement
 * handles (hash + least-recently-used list), binding the parameters, and
 * the fallbacks to text.  See sprep.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strcasestr */
#endif
#include <errmsg.h>
#include <math.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "describe.h"
#include "error.h"
#include "monitor.h"
#include "pool.h"
#include "relay.h"
#include "result_binary.h"
#include "rewrite.h"
#include "small.h"
#include "sql_cache.h"
#include "sprep.h"
#include "warnings.h"
#include "value.h"

/* After the server's max_prepared_stmt_count was reached, a connection
 * runs this many statements as text before it prepares again: each try
 * costs a round trip, and the limit is usually reached for a while. */
#define FULL_BACKOFF 256
/* A cache that closes WASTE_LIMIT handles in a row that never ran a second
 * time is churning (a working set larger than server_prepare_cache, taken
 * in turn): preparing, closing and preparing again costs more than text,
 * so the next WASTE_BACKOFF new templates run as text.  The handles that
 * do run again stay and keep running prepared. */
#define WASTE_LIMIT 8
#define WASTE_BACKOFF 64
/* Template orders copied on the stack. */
#define BIND_INLINE 16
/* Bytes of a parameter's value kept in its slot: a number's text, or a
 * short string. */
#define SLOT_TEXT 32

/* Where the library reads one parameter of a handle from, kept with the
 * handle: a value that fits is copied here, so the binding stays as it
 * was and is not made again (binding makes the next execution send every
 * parameter's type again, and costs a copy of the bindings). */
typedef struct slot {
    union {
        int64_t i;
        uint64_t count;      /* a LIMIT or OFFSET value */
        double d;
        char text[SLOT_TEXT];
    } v;
    unsigned long len;       /* the bytes of a text or string value */
} slot_t;

/* What a parameter's binding (entry_t.bind) was last made with: compared
 * at every execution, where the MYSQL_BIND itself (112 bytes) is touched
 * only to bind again. */
typedef struct bound_as {
    void *buffer;
    enum enum_field_types type;
    my_bool is_unsigned;
} bound_as_t;

/* One prepared statement of a connection.  What an execution reads
 * (the header, then slot, as and order) comes first and together: a
 * statement finds its handle's lines cold, since the servers' work
 * between two runs of it evicts them. */
typedef struct entry {
    struct entry *hnext;     /* hash chain */
    struct entry *prev, *next; /* newest first */
    uint64_t hash;
    int used;                /* run since it was last at the head (second chance) */
    int reused;              /* run again at least once since it was prepared */
    MYSQL_STMT *st;          /* owned: closed with the entry */
    binary_reader_t *rd;     /* owned: reads st's rows; freed before st is closed */
    relay_cols_t rcols;      /* owned: the column definitions a relay sends */
    uint32_t *order;         /* inside the entry: the parameter of each ? of the template */
    size_t norder;
    slot_t *slot;            /* inside the entry, norder: the values bind points to */
    bound_as_t *as;          /* inside the entry, norder: what bind was made with */
    MYSQL_BIND *bind;        /* inside the entry, norder: what st was bound to last */
    int bound;               /* bind is st's parameter binding */
    size_t memos;            /* route memo slots naming the entry */
    size_t len;
    char *sql;               /* inside the entry, last: the template, NUL-terminated */
    _Alignas(max_align_t) unsigned char rest[]; /* slot, as, order, bind, sql */
} entry_t;

/* Route memo: which entry a statement's route ran last, so that a
 * statement run again finds its handle without writing its template out
 * and hashing it.  A slot holds a reference to the statement's analysis
 * (so its address names it until the slot lets go) and is keyed by what
 * else the template depends on: the snapshot (table names), the route's
 * table positions and the parameter count.  Routes with cuts or merge
 * edits, or qualified with their node's database (rt->qualify), are not
 * memoized. */
#define MEMO_MIN 16
#define MEMO_MAX 1024
#define MEMO_TABLES 4

typedef struct memo {
    const dal_sql_t *sql;    /* a reference, or NULL: empty */
    uint32_t gen;            /* the snapshot's */
    uint32_t ntrefs;
    size_t nparams;
    int32_t pos[MEMO_TABLES];
    entry_t *e;              /* borrowed: the slot is emptied when e goes */
} memo_t;

/* The handles of one connection: its dal_conn_ext_t. */
typedef struct sprep_cache {
    dal_conn_ext_t ext;      /* first: the connection frees the cache through it */
    entry_t **buckets;       /* owned array; entries owned through the list */
    size_t nbuckets;         /* a power of two */
    entry_t *head, *tail;    /* newest and oldest: eviction looks at the tail */
    size_t n;
    size_t bytes;            /* the client's memory for it: entries, handles, buckets */
    uint32_t backoff;        /* new templates left to run as text (FULL_BACKOFF,
                                WASTE_BACKOFF) ... */
    unsigned int backoff_why;/* ... and why: the server's error, or 0 for churn */
    uint32_t wasted;         /* handles closed in a row that never ran again */
    memo_t *memo;            /* owned: nmemo slots, direct-mapped */
    size_t nmemo;            /* a power of two, about twice the cache's capacity */
} sprep_cache_t;

/* What the client library keeps per prepared statement: MYSQL_STMT, its
 * memory roots, the parameters' and columns' descriptions.  The library
 * does not say; bench/sprep_mem measured 10.4 KB per handle of a short
 * SELECT, this cache's entry included (bench/README.md).  The server
 * keeps about 32 KB more for each. */
#define STMT_CLIENT_BYTES 10240

/* ------------------------------------------------------------- mode */

/* DAL_SERVER_PREPARE, read once (getenv walks the environment: not on
 * every statement).  -1: not read yet; threads racing read the same. */
static atomic_int env_mode = -1;

int sprep_mode(const dal_config_t *cfg)
{
    int m = atomic_load_explicit(&env_mode, memory_order_relaxed);
    const char *env;

    if (cfg->server_prepare_line != 0)
        return cfg->server_prepare;
    if (m < 0) {
        env = getenv("DAL_SERVER_PREPARE");
        m = env != NULL && strcasecmp(env, "off") == 0 ? SPREP_OFF : SPREP_AUTO;
        atomic_store_explicit(&env_mode, m, memory_order_relaxed);
    }
    return m == SPREP_OFF ? SPREP_OFF : cfg->server_prepare;
}

static int kind_prepares(dal_sql_kind_t k)
{
    return k == DAL_SQL_SELECT || k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE ||
           k == DAL_SQL_UPDATE || k == DAL_SQL_DELETE;
}

/* Would the rows look the same as text's?  A ? that the result's columns
 * may be made of (the select list, a derived table, a UNION arm) is typed
 * by the server as its bound type, not as the literal text would be: an
 * INT literal 5 is a column INT(1), a bound 5 a BIGINT.  So a SELECT
 * prepares only when every ? comes after its FROM clause (WHERE, GROUP
 * BY, HAVING, ORDER BY, LIMIT).  A write returns rows only with
 * RETURNING: those go as text too (they could not be run again if DDL
 * changed their columns, see run_entry). */
static int rows_same_as_text(const dal_sql_t *sql)
{
    if (sql->kind != DAL_SQL_SELECT)
        return strcasestr(sql->text, "returning") == NULL;
    if (sql->nparams == 0)
        return 1;
    return !sql->has_union && sql->from_end > 0 && sql->param_offs[0] >= sql->from_end;
}

/* dal_sql_t's sprep_state: what the statement alone says, judged once. */
enum { STATE_UNJUDGED = 0, STATE_PREPARES, STATE_TEXT };

static int state_of(const dal_sql_t *sql)
{
    dal_sql_t *m = (dal_sql_t *)sql; /* only the lazily judged field changes, atomically */
    int st = atomic_load_explicit(&m->sprep_state, memory_order_relaxed);

    if (st != STATE_UNJUDGED)
        return st;
    st = kind_prepares(sql->kind) && !sql->opaque && sql->nparams <= SPREP_MAX_PARAMS &&
                 rows_same_as_text(sql)
             ? STATE_PREPARES
             : STATE_TEXT;
    /* a refusal noted meanwhile (refuse) stays */
    atomic_compare_exchange_strong(&m->sprep_state, &(int){STATE_UNJUDGED}, st);
    return atomic_load_explicit(&m->sprep_state, memory_order_relaxed);
}

/* The server would not prepare sql while its text ran: text from now on. */
static void refuse(const dal_sql_t *sql)
{
    atomic_store_explicit(&((dal_sql_t *)sql)->sprep_state, STATE_TEXT, memory_order_relaxed);
}

int sprep_wanted(const dal_config_t *cfg, const dal_sql_t *sql, int prepared, int traced)
{
    return (sql->nparams > 0 || prepared) && !traced && sprep_mode(cfg) == SPREP_AUTO &&
           state_of(sql) == STATE_PREPARES;
}

int sprep_route_eligible(const dal_routing_t *rt, size_t r)
{
    (void)r;
    /* several routes run together through exec.c's parallel jobs, as text */
    return rt->sprep && rt->nroutes == 1;
}

/* ------------------------------------------------------------- events */

/* DAL_EVENT_SPREP of kind on c's server. */
static void emit(const dal_routing_t *rt, const dal_conn_t *c, const char *kind,
                 unsigned int mysql_errno_)
{
    char addr[320];
    dal_event_t ev;

    if (!monitor_active(rt->monitors))
        return;
    monitor_event_init(rt->monitors, &ev, DAL_EVENT_SPREP);
    /* the labels are the connection's config's, not the snapshot's */
    ev.labels_gen = 0;
    ev.kind = kind;
    ev.datasource = c->ds->name;
    url_address(c->url, addr, sizeof addr);
    ev.server = addr;
    ev.sql = rt->sql_norm;
    ev.trace_id = rt->trace_id;
    ev.mysql_errno = mysql_errno_;
    monitor_emit(rt->monitors, &ev);
}

/* Run as text instead, told to the monitors. */
static int fallback(const dal_routing_t *rt, const dal_conn_t *c, unsigned int e)
{
    emit(rt, c, "fallback", e);
    return SPREP_TEXT;
}

/* ------------------------------------------------------------- cache */

static size_t entry_bytes(const entry_t *e)
{
    return e->len + e->norder * (sizeof *e->order + sizeof *e->bind + sizeof *e->slot +
                                 sizeof *e->as) +
           STMT_CLIENT_BYTES;
}

static void memo_clear(memo_t *m)
{
    if (m->sql != NULL)
        sql_unref(m->sql);
    if (m->e != NULL)
        m->e->memos--;
    m->sql = NULL;
    m->e = NULL;
}

/* The memo's key for route r of rt in *key (its e unset); -1 when the
 * route is not memoized. */
static int memo_key(const dal_routing_t *rt, size_t r, size_t nparams, memo_t *key)
{
    const dal_route_t *route = &rt->routes[r];
    size_t i, n = rt->sql->ntrefs;

    if (route->ncuts > 0 || rt->merge_edits != NULL || rt->qualify || n > MEMO_TABLES ||
        (n > 0 && route->pos == NULL))
        return -1;
    key->sql = rt->sql;
    key->gen = rt->snap_gen;
    key->ntrefs = (uint32_t)n;
    key->nparams = nparams;
    for (i = 0; i < n; i++)
        key->pos[i] = route->pos[i];
    return 0;
}

static memo_t *memo_slot(sprep_cache_t *k, const memo_t *key)
{
    uintptr_t h = (uintptr_t)key->sql >> 4;

    h ^= key->ntrefs > 0 ? (uint32_t)key->pos[0] * 2654435761u : 0;
    return &k->memo[(h ^ key->gen) & (k->nmemo - 1)];
}

static int memo_same(const memo_t *m, const memo_t *key)
{
    uint32_t i;

    if (m->sql != key->sql || m->gen != key->gen || m->ntrefs != key->ntrefs ||
        m->nparams != key->nparams)
        return 0;
    for (i = 0; i < key->ntrefs; i++)
        if (m->pos[i] != key->pos[i])
            return 0;
    return 1;
}

/* key's slot now names e. */
static void memo_store(sprep_cache_t *k, const memo_t *key, entry_t *e)
{
    memo_t *m = memo_slot(k, key);

    if (m->e != NULL) {
        m->e->memos--;
        m->e = NULL;
    }
    if (m->sql != key->sql) {
        memo_clear(m);
        *m = *key;
        sql_ref(m->sql);
    } else {
        *m = *key;
    }
    m->e = e;
    e->memos++;
}

static void entries_unlink(sprep_cache_t *k, entry_t *e)
{
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        k->head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    else
        k->tail = e->prev;
    e->prev = e->next = NULL;
}

static void entries_push(sprep_cache_t *k, entry_t *e)
{
    e->prev = NULL;
    e->next = k->head;
    if (k->head != NULL)
        k->head->prev = e;
    k->head = e;
    if (k->tail == NULL)
        k->tail = e;
}

/* Unlink e from the cache and close its handle (COM_STMT_CLOSE, which the
 * server does not answer). */
static void entry_remove(sprep_cache_t *k, entry_t *e)
{
    entry_t **link = &k->buckets[e->hash & (k->nbuckets - 1)];
    size_t i;

    while (*link != e)
        link = &(*link)->hnext;
    *link = e->hnext;
    entries_unlink(k, e);
    k->n--;
    k->bytes -= entry_bytes(e);
    for (i = 0; e->memos > 0 && i < k->nmemo; i++)
        if (k->memo[i].e == e)
            memo_clear(&k->memo[i]);
    relay_cols_free(&e->rcols);
    binary_reader_free(e->rd);
    mysql_stmt_close(e->st);
    free(e);
}

static void cache_drop(dal_conn_ext_t *x, MYSQL *m)
{
    sprep_cache_t *k = (sprep_cache_t *)x;

    (void)m; /* each handle knows its connection */
    while (k->head != NULL)
        entry_remove(k, k->head); /* empties the memo slots too */
    free(k->memo);
    free(k->buckets);
    free(k);
}

/* c's cache, made on first use; NULL without memory. */
static sprep_cache_t *cache_of(dal_conn_t *c, uint32_t cap)
{
    sprep_cache_t *k;
    size_t nb = 8, nm = MEMO_MIN;

    if (c->ext != NULL)
        return c->ext->drop == cache_drop ? (sprep_cache_t *)c->ext : NULL;
    while (nb < cap && nb < 4096)
        nb *= 2;
    while (nm < 2 * (size_t)cap && nm < MEMO_MAX)
        nm *= 2;
    k = calloc(1, sizeof *k);
    if (k == NULL || (k->buckets = calloc(nb, sizeof *k->buckets)) == NULL ||
        (k->memo = calloc(nm, sizeof *k->memo)) == NULL) {
        if (k != NULL)
            free(k->buckets);
        free(k);
        return NULL;
    }
    k->ext.drop = cache_drop;
    k->nbuckets = nb;
    k->nmemo = nm;
    k->bytes = sizeof *k + nb * sizeof *k->buckets + nm * sizeof *k->memo;
    c->ext = &k->ext;
    return k;
}

/* e was run again. */
static void cache_touch(entry_t *e)
{
    /* a flag, not a move to the head: a run writes only its own entry */
    if (!e->used)
        e->used = e->reused = 1;
}

static entry_t *cache_find(sprep_cache_t *k, const char *sql, size_t len, uint64_t h)
{
    entry_t *e;

    for (e = k->buckets[h & (k->nbuckets - 1)]; e != NULL; e = e->hnext)
        if (e->hash == h && e->len == len && memcmp(e->sql, sql, len) == 0)
            break;
    if (e != NULL)
        cache_touch(e);
    return e;
}

/* Make room for one more under cap (a reload may have lowered it). */
static void cache_trim(const dal_routing_t *rt, const dal_conn_t *c, sprep_cache_t *k,
                       uint32_t cap)
{
    entry_t *v;

    /* the oldest entry run since it came to the head goes back to the
     * head once; the first one not run is closed */
    while (k->n > 0 && k->n >= cap) {
        v = k->tail;
        if (v->used) {
            v->used = 0;
            entries_unlink(k, v);
            entries_push(k, v);
            continue;
        }
        emit(rt, c, "evict", 0);
        k->wasted = v->reused ? 0 : k->wasted + 1;
        if (k->wasted >= WASTE_LIMIT) {
            k->wasted = 0;
            k->backoff = WASTE_BACKOFF;
            k->backoff_why = 0;
        }
        entry_remove(k, v);
    }
}

/* ----------------------------------------------------------- prepare */

/* Server errors about something that may change (a table created later,
 * a grant, the statement limit): the statement is not remembered as one
 * the server cannot prepare. */
static int transient(unsigned int e)
{
    return e == ER_NO_SUCH_TABLE || e == ER_BAD_FIELD_ERROR || e == ER_BAD_DB_ERROR ||
           e == ER_SP_DOES_NOT_EXIST || e == ER_TABLEACCESS_DENIED_ERROR ||
           e == ER_COLUMNACCESS_DENIED_ERROR || e == ER_DBACCESS_DENIED_ERROR ||
           e == ER_MAX_PREPARED_STMT_COUNT_REACHED || e == ER_NEED_REPREPARE ||
           e == ER_LOCK_WAIT_TIMEOUT || e == ER_LOCK_DEADLOCK;
}

static int conn_broken(unsigned int e)
{
    return e >= CR_MIN_ERROR && e <= CR_MAX_ERROR;
}

/* A failure of st on c: the client or server error as conn_error words
 * it, when the library left it on the connection too (it does for server
 * errors and lost connections). */
static int stmt_failed(dal_conn_t *c, MYSQL_STMT *st, dal_error_t *err)
{
    if (mysql_errno(&c->mysql) != 0)
        return conn_error(c, DAL_ESERVER, err);
    return err_server(err, DAL_ESERVER, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
                      "datasource %s (%s): error %u (%s): %s", c->ds->name, c->url->display,
                      mysql_stmt_errno(st), mysql_stmt_sqlstate(st), mysql_stmt_error(st));
}

/* Each parameter's binding reads its slot's length; the rest is set by
 * bind_params. */
static void binds_init(entry_t *e)
{
    size_t k;

    memset(e->bind, 0, e->norder * sizeof *e->bind);
    memset(e->as, 0, e->norder * sizeof *e->as);
    for (k = 0; k < e->norder; k++)
        e->bind[k].length = &e->slot[k].len;
}

static void discard(entry_t *e, MYSQL_STMT *st, binary_reader_t *rd)
{
    binary_reader_free(rd);
    if (st != NULL)
        mysql_stmt_close(st);
    free(e);
}

/* The template in sql (its ? in the order tpl says), prepared on c and
 * added to k as the newest entry.  0 with *out set; SPREP_TEXT (the
 * server would not: run as text); or a negative code for a broken
 * connection. */
static int prepare(const dal_routing_t *rt, dal_conn_t *c, sprep_cache_t *k,
                   const dal_buf_t *sql, const dal_template_t *tpl, uint64_t h, entry_t **out,
                   dal_error_t *err)
{
    /* in e->rest (aligned for anything), each part aligned for the
     * next: slots (8), as (8), order (4, padded to 8), bind (8), sql */
    size_t as_at = tpl->n * sizeof(slot_t);
    size_t order_at = as_at + tpl->n * sizeof(bound_as_t);
    size_t bind_at = (order_at + tpl->n * sizeof(uint32_t) + _Alignof(MYSQL_BIND) - 1) &
                     ~(_Alignof(MYSQL_BIND) - 1);
    size_t sql_at = bind_at + tpl->n * sizeof(MYSQL_BIND);
    entry_t *e = malloc(sizeof *e + sql_at + sql->len + 1);
    MYSQL_STMT *st = e != NULL ? mysql_stmt_init(&c->mysql) : NULL;
    binary_reader_t *rd = st != NULL ? binary_reader_new(st) : NULL;
    unsigned int en;
    int rc;

    if (rd == NULL) {
        discard(e, st, rd);
        return fallback(rt, c, 0);
    }
    if (mysql_stmt_prepare(st, sql->data, (unsigned long)sql->len) != 0) {
        en = mysql_stmt_errno(st);
        /* a lost connection, or one its server closes after the error
         * (1153, a statement over its max_allowed_packet): the error is
         * the statement's, as text would get it */
        rc = conn_note_stmt_error(c, en) ? stmt_failed(c, st, err) : 0;
        discard(e, st, rd);
        if (rc != 0)
            return rc;
        if (en == ER_MAX_PREPARED_STMT_COUNT_REACHED) {
            k->backoff = FULL_BACKOFF;
            k->backoff_why = en;
        } else if (!transient(en)) {
            refuse(rt->sql);
        }
        return fallback(rt, c, en);
    }
    if (mysql_stmt_param_count(st) != tpl->n) {
        /* a ? the server sees where dal sees none, or the reverse */
        discard(e, st, rd);
        refuse(rt->sql);
        return fallback(rt, c, 0);
    }
    cache_trim(rt, c, k, rt->sprep_cache);
    e->st = st;
    e->rd = rd;
    memset(&e->rcols, 0, sizeof e->rcols);
    e->hash = h;
    e->used = e->reused = 0;
    e->len = sql->len;
    e->sql = (char *)e->rest + sql_at;
    memcpy(e->sql, sql->data, sql->len);
    e->sql[sql->len] = '\0';
    e->slot = (slot_t *)(void *)e->rest;
    e->as = (bound_as_t *)(void *)(e->rest + as_at);
    e->order = (uint32_t *)(void *)(e->rest + order_at);
    e->norder = tpl->n;
    memcpy(e->order, tpl->order, tpl->n * sizeof *e->order);
    e->bind = (MYSQL_BIND *)(void *)(e->rest + bind_at);
    e->bound = 0;
    e->memos = 0;
    binds_init(e);
    e->hnext = k->buckets[h & (k->nbuckets - 1)];
    k->buckets[h & (k->nbuckets - 1)] = e;
    entries_push(k, e);
    k->n++;
    k->bytes += entry_bytes(e);
    emit(rt, c, "prepare", 0);
    *out = e;
    return 0;
}

/* ------------------------------------------------------------- binding */

/* What parameter v is bound as, the way its text form would be read: a
 * double as DOUBLE (value.c writes it with an exponent).  A value in LIMIT or
 * OFFSET goes as an integer.  The value goes into slot s when it fits,
 * else *buf is the caller's.  -1: text gives the caller the error this
 * value deserves. */
static int bind_value(const dal_sql_t *sql, uint32_t i, const dal_value_t *v, slot_t *s,
                      enum enum_field_types *type, void **buf, my_bool *is_unsigned)
{
    *buf = &s->v;
    *is_unsigned = 0;
    if (sql->param_int != NULL && sql->param_int[i]) {
        /* text writes an INT as it is: a negative one is its syntax error */
        if (value_as_count(v, &s->v.count) != 0)
            return -1;
        *type = MYSQL_TYPE_LONGLONG;
        *is_unsigned = 1;
        return 0;
    }
    switch (v->type) {
    case DAL_TYPE_NULL:
        *type = MYSQL_TYPE_NULL;
        *buf = NULL;
        return 0;
    case DAL_TYPE_INT:
    case DAL_TYPE_UINT:
        *type = MYSQL_TYPE_LONGLONG;
        s->v.i = v->v.i;
        *is_unsigned = v->type == DAL_TYPE_UINT;
        return 0;
    case DAL_TYPE_DOUBLE:
        if (!isfinite(v->v.d))
            return -1;
        *type = MYSQL_TYPE_DOUBLE; /* as value.c's text, an approximate literal */
        s->v.d = v->v.d;
        return 0;
    case DAL_TYPE_STRING:
    case DAL_TYPE_BLOB:
        *type = v->type == DAL_TYPE_STRING ? MYSQL_TYPE_STRING : MYSQL_TYPE_BLOB;
        s->len = v->v.s.len;
        if (v->v.s.len <= sizeof s->v.text) {
            if (v->v.s.len > 0)
                memcpy(s->v.text, v->v.s.ptr, v->v.s.len);
        } else {
            *buf = (void *)v->v.s.ptr;
        }
        return 0;
    }
    return -1;
}

/* The statement's parameters, in the template's order, into e's slots;
 * the handle bound again only when a parameter's type or buffer changed.
 * 0, or SPREP_TEXT. */
static int bind_params(const dal_routing_t *rt, entry_t *e, const dal_value_t *params)
{
    enum enum_field_types type;
    my_bool is_unsigned;
    bound_as_t *a;
    void *buf;
    size_t k;

    for (k = 0; k < e->norder; k++) {
        if (bind_value(rt->sql, e->order[k], &params[e->order[k]], &e->slot[k], &type, &buf,
                       &is_unsigned) != 0)
            return SPREP_TEXT;
        a = &e->as[k];
        if (a->type != type || a->buffer != buf || a->is_unsigned != is_unsigned) {
            a->type = e->bind[k].buffer_type = type;
            a->buffer = e->bind[k].buffer = buf;
            a->is_unsigned = e->bind[k].is_unsigned = is_unsigned;
            e->bound = 0;
        }
    }
    if (!e->bound && e->norder > 0) {
        if (mysql_stmt_bind_param(e->st, e->bind) != 0)
            return SPREP_TEXT;
        e->bound = 1;
    }
    return 0;
}

/* ------------------------------------------------------------- running */

/* The rows came with other columns than the handle was prepared for
 * (DDL changed a table the statement reads with *). */
#define STALE 2

/* What the statement sent back, into res as exec.c's text path adds it:
 * 0, a negative code, or STALE. */
static int collect(const dal_routing_t *rt, size_t r, dal_conn_t *c, entry_t *e,
                   dal_result_t *res, dal_error_t *err)
{
    MYSQL *m = &c->mysql;
    int rc;

    if (mysql_stmt_field_count(e->st) == 0) {
        res->affected += mysql_stmt_affected_rows(e->st);
        result_note_info(res, mysql_info(m));
        result_add_end(res, mysql_warning_count(m), m->server_status,
                       mysql_stmt_insert_id(e->st));
        warnings_read(&res->warns, m, mysql_warning_count(m));
        return 0;
    }
    if (relay_binary_wanted(rt, r, c, e->sql, e->len)) {
        /* a plain read: its binary rows go to the caller's sink as they are */
        rc = relay_binary_run(rt, c, e->st, e->rd, &e->rcols, res, err);
        return rc == BINARY_STALE ? STALE : rc;
    }
    rc = result_add_binary(res, e->rd, rt->routes[r].node->cfg->name, err);
    if (rc == BINARY_STALE || (rc == DAL_ESERVER && mysql_stmt_errno(e->st) == CR_NEW_STMT_METADATA))
        return STALE;
    if (rc == DAL_ESERVER)
        return stmt_failed(c, e->st, err);
    /* the end of the rows updates the handle, not the connection */
    if (rc == 0) {
        result_add_end(res, (unsigned int)mysql_stmt_warning_count(e->st),
                       e->st->upsert_status.server_status, 0);
        warnings_read(&res->warns, m, (unsigned int)mysql_stmt_warning_count(e->st));
    }
    return rc;
}

/* Statements after which c's handles may parse differently than a fresh
 * prepare would (SET sql_mode, SET NAMES, USE): dropped. */
static int changes_parsing(dal_sql_kind_t k)
{
    return k == DAL_SQL_SET || k == DAL_SQL_OTHER;
}

/* e's handle, prepared again after the server said it must be. */
static int reprepare(const dal_routing_t *rt, dal_conn_t *c, sprep_cache_t *k, entry_t **e,
                     dal_buf_t *sql, dal_error_t *err)
{
    entry_t *old = *e;
    uint32_t room[BIND_INLINE];
    dal_template_t tpl = {small_alloc(room, BIND_INLINE, old->norder, sizeof *room, 0),
                          old->norder, old->norder};
    uint64_t h = old->hash;
    int rc;

    /* the template and its order outlive the old entry: copied */
    buf_reset(sql);
    buf_append(sql, old->sql, old->len);
    if (tpl.order == NULL || sql->oom) {
        small_free(tpl.order, room);
        return fallback(rt, c, 0);
    }
    memcpy(tpl.order, old->order, old->norder * sizeof *tpl.order);
    entry_remove(k, old);
    *e = NULL;
    rc = prepare(rt, c, k, sql, &tpl, h, e, err);
    small_free(tpl.order, room);
    return rc;
}

/* Execute e with the parameters bound, and collect what comes back.
 * 0, a negative code, SPREP_TEXT, or STALE (with *en the reason). */
static int execute(const dal_routing_t *rt, size_t r, dal_conn_t *c, entry_t *e,
                   const dal_value_t *params, dal_result_t *res, unsigned int *en,
                   dal_error_t *err)
{
    int rc;

    *en = 0;
    if (bind_params(rt, e, params) != 0)
        return fallback(rt, c, 0);
    if (mysql_stmt_execute(e->st) == 0) {
        emit(rt, c, "execute", 0);
        rc = collect(rt, r, c, e, res, err);
        if (rc == STALE)
            *en = CR_NEW_STMT_METADATA;
        return rc;
    }
    *en = mysql_stmt_errno(e->st);
    /* the server asks for a fresh prepare (ER_NEED_REPREPARE), or the
     * columns changed under the handle: the rows of that run are pending
     * and go with the handle (closing it reads them).  A client error of
     * the handle alone, the connection being fine, is the library's word
     * that the handle is no longer valid (the session was reset without
     * conn_reset): nothing was sent, so it is prepared again too. */
    if (*en == ER_NEED_REPREPARE || *en == CR_NEW_STMT_METADATA ||
        (conn_broken(*en) && mysql_errno(&c->mysql) == 0))
        return STALE;
    (void)conn_note_stmt_error(c, *en);  /* 1153: a parameter over max_allowed_packet */
    return stmt_failed(c, e->st, err);
}

/* Run e, prepared once more when it turns out stale.  A stale handle's
 * SELECT did run on the server (only reads get here with rows: see
 * rows_same_as_text), so running it again gives what text would have. */
static int run_entry(const dal_routing_t *rt, size_t r, dal_conn_t *c, sprep_cache_t *k,
                     entry_t *e, const dal_value_t *params, dal_buf_t *sql, dal_result_t *res,
                     dal_error_t *err)
{
    unsigned int en;
    int rc = execute(rt, r, c, e, params, res, &en, err);

    if (rc == STALE) {
        emit(rt, c, "reprepare", en);
        rc = reprepare(rt, c, k, &e, sql, err);
        if (rc == 0)
            rc = execute(rt, r, c, e, params, res, &en, err);
    }
    if (rc == STALE) {
        /* stale again right after a prepare (DDL racing with it): the
         * handle goes, and text runs the statement */
        entry_remove(k, e);
        rc = fallback(rt, c, en);
    } else if (rc < 0 && e != NULL && mysql_errno(&c->mysql) == 0) {
        /* a client-side error of the handle: closing it reads what may be
         * pending, so the connection stays in step */
        entry_remove(k, e);
    }
    return rc;
}

/* The entry for route r's template, found through the text or prepared
 * now.  0 with *out set, SPREP_TEXT, or a negative code. */
static int find_entry(const dal_routing_t *rt, size_t r, dal_conn_t *c, sprep_cache_t *k,
                      size_t nparams, dal_buf_t *sql, entry_t **out, dal_error_t *err)
{
    uint32_t order_room[SPREP_MAX_PARAMS];
    dal_template_t tpl = {order_room, 0, SPREP_MAX_PARAMS};
    uint64_t h;

    buf_reset(sql);
    if (rewrite_route_template(rt, r, nparams, sql, &tpl, err) != 0 || sql->oom)
        return fallback(rt, c, 0);
    h = sql_hash_text(sql->data, sql->len);
    if ((*out = cache_find(k, sql->data, sql->len, h)) != NULL)
        return 0;
    if (k->backoff > 0) {
        k->backoff--;
        return fallback(rt, c, k->backoff_why);
    }
    return prepare(rt, c, k, sql, &tpl, h, out, err);
}

int sprep_send(const dal_routing_t *rt, size_t r, dal_conn_t *c, const dal_value_t *params,
               size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err)
{
    sprep_cache_t *k;
    entry_t *e = NULL;
    memo_t key, *m = NULL;
    int rc;

    if (rt->describe)
        return describe_on(rt, r, c, params, nparams, sql, res, err);
    if (!rt->sprep) {
        if (c->ext != NULL && changes_parsing(rt->sql->kind))
            conn_drop_ext(c);
        return SPREP_TEXT;
    }
    if (state_of(rt->sql) != STATE_PREPARES) /* refused since it was routed */
        return fallback(rt, c, 0);
    if ((k = cache_of(c, rt->sprep_cache)) == NULL)
        return fallback(rt, c, 0);
    if (memo_key(rt, r, nparams, &key) == 0) {
        m = memo_slot(k, &key);
        if (memo_same(m, &key))
            e = m->e;
    }
    if (e != NULL) {
        cache_touch(e);
    } else {
        if ((rc = find_entry(rt, r, c, k, nparams, sql, &e, err)) != 0)
            return rc;
        if (m != NULL)
            memo_store(k, &key, e);
    }
    return run_entry(rt, r, c, k, e, params, sql, res, err);
}
