/*
 * sql.c - statement analysis and the analysis cache.  See sql.h.
 *
 * How it works.  The statement is lexed once into an array of significant
 * tokens (comments dropped, hints set aside, executable-comment markers
 * dropped so that their content is analysed).  Every '(' is linked to its
 * ')' up front, which makes "skip this parenthesised group" O(1) and makes
 * unbalanced input an error before any analysis starts.  The analysis is a
 * set of small recursive-descent functions over token ranges [i, e); each
 * range is balanced, so a function never needs to look outside it.
 *
 * The parser is deliberately forgiving: it recognises the parts dal needs
 * (tables, conditions, rows, SELECT shape) and scans everything else only
 * for subqueries, so that no table is ever missed.  It does not validate
 * SQL; the server does that.
 *
 * Memory.  While analysing, everything lives in a scratch arena that starts
 * on the stack; at the end the result is measured and copied into a single
 * malloc'd block (dal_sql_t, text, arrays and strings together), so freeing
 * is one free() and a cached entry is compact.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "hex.h"
#include "sql.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    MAX_DEPTH = 64,      /* nested queries and joins, statements in statements */
    MAX_COND_DEPTH = 16, /* parenthesised AND groups searched for conditions */
    SCRATCH_STACK = 8192,
    FILL_HEAD = 1,       /* record items, FROM, WHERE, GROUP BY, HAVING */
    FILL_TAIL = 2,       /* record ORDER BY, LIMIT, locking */
    FILL_ALL = 3,
    TF_TABLE = 1,        /* token flag: part of a table name */
};

/* ============================================================ scratch */

typedef union chunk {
    union chunk *next;
    max_align_t align;
} chunk_t;

typedef struct scratch {
    char *cur;     /* next free byte */
    size_t left;   /* bytes free at cur */
    size_t grow;   /* size of the next heap chunk */
    chunk_t *heap; /* heap chunks, freed by scratch_free */
} scratch_t;

static void *salloc(scratch_t *sc, size_t n)
{
    void *p;

    n = (n + 7) & ~(size_t)7;
    if (n > sc->left) {
        size_t sz = sc->grow;
        chunk_t *c;
        while (sz < n && sz < SIZE_MAX / 4)
            sz *= 2;
        if (sz < n || !(c = malloc(sizeof(chunk_t) + sz)))
            return NULL;
        c->next = sc->heap;
        sc->heap = c;
        sc->cur = (char *)(c + 1);
        sc->left = sz;
        sc->grow = sz * 2;
    }
    p = sc->cur;
    sc->cur += n;
    sc->left -= n;
    return p;
}

static void scratch_free(scratch_t *sc)
{
    while (sc->heap) {
        chunk_t *next = sc->heap->next;
        free(sc->heap);
        sc->heap = next;
    }
}

/* A growable array in the scratch arena.  Growing copies; the old copy is
 * simply left behind, which wastes at most as much as is in use. */
typedef struct vec {
    void *v;
    size_t n, cap;
} vec_t;

/* ============================================================ analyser */

typedef struct an {
    const char *sql;     /* borrowed: the input */
    size_t len;
    dal_token_t *tk;     /* significant tokens of the statement (scratch) */
    int *link;           /* '(' <-> ')' partner; for '?' its index; else -1 */
    unsigned char *tflag;/* TF_* per token */
    unsigned char *kwid; /* keyword id (K_*) per token */
    int nt;
    int depth;
    int failed;
    char *errbuf;        /* borrowed from the caller */
    size_t errcap;
    scratch_t sc;
    int *tscope;         /* scope of each token: the innermost query block holding it */
    unsigned char *param_int; /* per ?: 1 where SQL takes only an integer */
    int scope;           /* the scope being analysed */
    int links_only;      /* conditions: record only col = col (ON of an outer join) */
    dal_sql_t r;         /* scalar results; arrays are in the vecs below */
    vec_t toks, hints_tk, trefs, colrefs, hints, conds, columns, rows, setcols;
    vec_t items, order, group, ctes, params, scopes, sources;
} an_t;

static int fail(an_t *a, size_t off, const char *what)
{
    if (!a->failed && a->errcap > 0)
        snprintf(a->errbuf, a->errcap, "%s at offset %zu", what, off);
    a->failed = 1;
    return -1;
}

static int oom(an_t *a)
{
    if (!a->failed && a->errcap > 0)
        snprintf(a->errbuf, a->errcap, "out of memory");
    a->failed = 1;
    return -1;
}

static void *scratch(an_t *a, size_t n)
{
    void *p = salloc(&a->sc, n);
    if (!p)
        oom(a);
    return p;
}

/* Append a zeroed element of esz bytes; NULL (and the error set) when out
 * of memory. */
static void *vpush(an_t *a, vec_t *v, size_t esz)
{
    void *e;

    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        void *nv = scratch(a, cap * esz);
        if (!nv)
            return NULL;
        if (v->n)
            memcpy(nv, v->v, v->n * esz);
        v->v = nv;
        v->cap = cap;
    }
    e = (char *)v->v + v->n++ * esz;
    memset(e, 0, esz);
    return e;
}

static int push_str(an_t *a, vec_t *v, char *s)
{
    char **slot;

    if (!s || !(slot = vpush(a, v, sizeof *slot)))
        return -1;
    *slot = s;
    return 0;
}

/* ------------------------------------------------------------ tokens */

static int ascii_casecmp(const char *x, const char *y)
{
    for (;; x++, y++) {
        int cx = (unsigned char)*x, cy = (unsigned char)*y;
        if (cx >= 'A' && cx <= 'Z')
            cx += 32;
        if (cy >= 'A' && cy <= 'Z')
            cy += 32;
        if (cx != cy || cx == 0)
            return cx - cy;
    }
}

/* ------------------------------------------------------------ keywords */

/* Every word the analyser looks for (kept sorted for the reader).  Each word
 * token is classified once, in link_tokens, so that a keyword test is an
 * integer compare. */
#define KEYWORDS(X) \
    X(AGGREGATE) X(ALGORITHM) X(ALL) X(ALTER) X(ANALYZE) X(AND) X(ANY) X(AS) X(ASC) X(AVG) \
    X(BEGIN) X(BETWEEN) X(BINARY) X(BIT_AND) X(BIT_OR) X(BIT_XOR) X(BY) X(CASE) X(COLLATE) \
    X(COLUMN) X(COLUMNS) X(COMMIT) X(CONSTRAINT) X(COUNT) X(CREATE) X(CROSS) X(DAY) \
    X(DAY_HOUR) X(DAY_MICROSECOND) X(DAY_MINUTE) X(DAY_SECOND) X(DEFINER) X(DELAYED) \
    X(DELETE) X(DESC) X(DESCRIBE) X(DISTINCT) X(DISTINCTROW) X(DIV) X(DROP) X(DUAL) \
    X(DUPLICATE) X(ELSE) X(END) X(ESCAPE) X(EVENT) X(EXCEPT) X(EXISTS) X(EXPLAIN) \
    X(EXTENDED) X(FALSE) X(FIELDS) X(FOR) X(FORCE) X(FORMAT) X(FROM) X(FULL) X(FULLTEXT) \
    X(FUNCTION) X(GROUP) X(GROUP_CONCAT) X(HAVING) X(HIGH_PRIORITY) X(HOUR) \
    X(HOUR_MICROSECOND) X(HOUR_MINUTE) X(HOUR_SECOND) X(IF) X(IGNORE) X(IN) X(INDEX) \
    X(INDEXES) X(INNER) X(INSERT) X(INTERSECT) X(INTERVAL) X(INTO) X(IS) X(JOIN) \
    X(JSON_ARRAYAGG) X(JSON_OBJECTAGG) X(KEY) X(KEYS) X(LATERAL) X(LEFT) X(LIKE) X(LIMIT) \
    X(LOCK) X(LOW_PRIORITY) X(MAX) X(MEMBER) X(MICROSECOND) X(MIN) X(MINUTE) \
    X(MINUTE_MICROSECOND) X(MINUTE_SECOND) X(MOD) X(MONTH) X(NATURAL) X(NOT) X(NULL) X(OF) \
    X(OFFLINE) X(OFFSET) X(OJ) X(ON) X(ONLINE) X(OR) X(ORDER) X(OUTER) X(OVER) X(PACKAGE) \
    X(PARTITION) X(PARTITIONS) X(PROCEDURE) X(QUARTER) X(QUICK) X(RECURSIVE) X(REFERENCES) \
    X(REGEXP) X(RENAME) X(REPLACE) X(RETURNING) X(RIGHT) X(RLIKE) X(ROLLBACK) X(ROLLUP) \
    X(ROW) X(SECOND) X(SECOND_MICROSECOND) X(SECURITY) X(SELECT) X(SET) X(SHARE) X(SHOW) \
    X(SOME) X(SOUNDS) X(SPATIAL) X(SQL) X(SQL_BIG_RESULT) X(SQL_BUFFER_RESULT) X(SQL_CACHE) \
    X(SQL_CALC_FOUND_ROWS) X(SQL_NO_CACHE) X(SQL_SMALL_RESULT) X(START) X(STATEMENT) X(STD) \
    X(STDDEV) X(STDDEV_POP) X(STDDEV_SAMP) X(STRAIGHT_JOIN) X(SUM) X(TABLE) X(TABLES) \
    X(TEMPORARY) X(THEN) X(TO) X(TRANSACTION) X(TRIGGER) X(TRUE) X(TRUNCATE) X(UNION) \
    X(UNIQUE) X(UNKNOWN) X(UPDATE) X(USE) X(USING) X(VALUE) X(VALUES) X(VARIANCE) X(VAR_POP) \
    X(VAR_SAMP) X(VIEW) X(WEEK) X(WHEN) X(WHERE) X(WINDOW) X(WITH) X(WORK) X(XOR) X(YEAR) \
    X(YEAR_MONTH)

enum {
    K_NONE, /* not a keyword the analyser knows */
#define X(w) K_##w,
    KEYWORDS(X)
#undef X
    K_COUNT_
};

static const char *const keyword_names[] = {
    "",
#define X(w) #w,
    KEYWORDS(X)
#undef X
};

_Static_assert(K_COUNT_ <= 256, "keyword ids must fit in a byte");

enum { KW_SLOTS = 1024, KW_MAXLEN = 24 }; /* open addressing, load < 0.2 */

static unsigned char kw_slots[KW_SLOTS]; /* keyword id or K_NONE; built once */
static pthread_once_t kw_once = PTHREAD_ONCE_INIT;

/* FNV-1a of an upper-case word: words are short, any fair hash will do. */
static uint32_t kw_hash(const char *w, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)w[i]) * 16777619u;
    return h;
}

static void kw_build(void)
{
    int k;

    for (k = 1; k < K_COUNT_; k++) {
        uint32_t h = kw_hash(keyword_names[k], strlen(keyword_names[k])) % KW_SLOTS;
        while (kw_slots[h] != K_NONE)
            h = (h + 1) % KW_SLOTS;
        kw_slots[h] = (unsigned char)k;
    }
}

/* The keyword id of a word token, K_NONE if it is no keyword. */
static unsigned char keyword_id(const char *sql, const dal_token_t *t)
{
    char up[KW_MAXLEN];
    uint32_t i, h;

    if (t->type != DAL_TOK_IDENT || t->len >= KW_MAXLEN)
        return K_NONE;
    for (i = 0; i < t->len; i++) {
        char c = sql[t->off + i];
        up[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
    }
    up[i] = '\0';
    for (h = kw_hash(up, t->len) % KW_SLOTS; kw_slots[h] != K_NONE; h = (h + 1) % KW_SLOTS)
        if (strcmp(up, keyword_names[kw_slots[h]]) == 0)
            return kw_slots[h];
    return K_NONE;
}

static int kw(const an_t *a, int i, int e, unsigned char k)
{
    return i < e && a->kwid[i] == k;
}

/* kw() for any word of a 0-terminated list. */
static int kw_in(const an_t *a, int i, int e, const unsigned char *list)
{
    if (i >= e || a->kwid[i] == K_NONE)
        return 0;
    for (; *list; list++)
        if (a->kwid[i] == *list)
            return 1;
    return 0;
}

static int is_op(const an_t *a, int i, int e, const char *op)
{
    size_t n = strlen(op);
    return i < e && a->tk[i].type == DAL_TOK_PUNCT && a->tk[i].len == n &&
           memcmp(a->sql + a->tk[i].off, op, n) == 0;
}

static int is_p(const an_t *a, int i, int e, char c)
{
    return i < e && a->tk[i].type == DAL_TOK_PUNCT && a->tk[i].len == 1 &&
           a->sql[a->tk[i].off] == c;
}

static int is_name(const an_t *a, int i, int e)
{
    return i < e && (a->tk[i].type == DAL_TOK_IDENT || a->tk[i].type == DAL_TOK_QIDENT);
}

static int is_type(const an_t *a, int i, int e, dal_tok_type_t t)
{
    return i < e && a->tk[i].type == t;
}

static uint32_t tend(const an_t *a, int i)
{
    return a->tk[i].off + a->tk[i].len;
}

/* The token after the one at i, jumping over a parenthesised group. */
static int next_tok(const an_t *a, int i)
{
    return is_p(a, i, a->nt, '(') ? a->link[i] + 1 : i + 1;
}

/* The next ',' at the top level of [i,e), or e. */
static int comma_end(const an_t *a, int i, int e)
{
    while (i < e && !is_p(a, i, e, ','))
        i = next_tok(a, i);
    return i;
}

/* The first top-level word of list in [i,e), or e. */
static int find_kw(const an_t *a, int i, int e, const unsigned char *list)
{
    while (i < e && !kw_in(a, i, e, list))
        i = next_tok(a, i);
    return i;
}

/* '(' at i opens a subquery: its first token is SELECT or WITH. */
static int subquery_at(const an_t *a, int i, int e)
{
    return is_p(a, i, e, '(') &&
           (kw(a, i + 1, a->link[i], K_SELECT) || kw(a, i + 1, a->link[i], K_WITH));
}

/* '(' at i holds a query expression, maybe behind more '(': the test for a
 * table factor or INSERT source, where ((SELECT ..) UNION (SELECT ..)) is a
 * query but in an expression would be an operand. */
static int query_inside(const an_t *a, int i, int e)
{
    static const unsigned char starts[] = {K_SELECT, K_WITH, K_TABLE, K_VALUES, 0};
    int end;

    if (!is_p(a, i, e, '('))
        return 0;
    end = a->link[i];
    while (is_p(a, i, end, '('))
        i++;
    return kw_in(a, i, end, starts);
}

/* An unquoted name in the scratch arena, or NULL (out of memory). */
static char *tok_name(an_t *a, int i)
{
    size_t n = dal_ident_unquote(a->sql, &a->tk[i], NULL, 0);
    char *s = scratch(a, n + 1);

    if (s)
        dal_ident_unquote(a->sql, &a->tk[i], s, n + 1);
    return s;
}

static int decode_string(const char *t, size_t n, char *out, size_t cap, size_t *outlen);

/* An alias token's text: a name, or a string used as an alias. */
static char *alias_text(an_t *a, int i)
{
    size_t n;
    char *s;

    if (a->tk[i].type != DAL_TOK_STRING)
        return tok_name(a, i);
    if (!(s = scratch(a, a->tk[i].len + 1)))
        return NULL;
    if (decode_string(a->sql + a->tk[i].off, a->tk[i].len, s, a->tk[i].len + 1, &n) != 0)
        s[0] = '\0';
    return s;
}

/* ============================================================ operands */

static const unsigned char literal_words[] = {K_NULL, K_TRUE, K_FALSE, 0};

/* [s,e) as one operand.  An empty range is an empty EXPR. */
static dal_sql_opnd_t operand(const an_t *a, int s, int e)
{
    dal_sql_opnd_t o;
    int k = s;

    memset(&o, 0, sizeof o);
    o.kind = DAL_OPND_EXPR;
    o.param_index = -1;
    o.lit_type = DAL_TOK_EOF;
    if (s >= e) {
        o.off = s > 0 ? tend(a, s - 1) : 0;
        return o;
    }
    o.off = a->tk[s].off;
    o.len = tend(a, e - 1) - o.off;
    if (e - s == 2 && (is_op(a, s, e, "-") || is_op(a, s, e, "+")) &&
        is_type(a, s + 1, e, DAL_TOK_NUMBER)) {
        o.negative = is_op(a, s, e, "-");
        k = s + 1;
    }
    if (k != e - 1)
        return o;
    switch (a->tk[k].type) {
    case DAL_TOK_PARAM:
        if (k == s) {
            o.kind = DAL_OPND_PARAM;
            o.param_index = a->link[k];
        }
        break;
    case DAL_TOK_NUMBER:
        o.kind = DAL_OPND_LITERAL;
        o.lit_type = DAL_TOK_NUMBER;
        break;
    case DAL_TOK_STRING:
    case DAL_TOK_IDENT:
        if (k == s && (a->tk[k].type == DAL_TOK_STRING || kw_in(a, k, e, literal_words))) {
            o.kind = DAL_OPND_LITERAL;
            o.lit_type = a->tk[k].type;
        }
        break;
    default:
        break;
    }
    return o;
}

/* The comma-separated operands of [s,e) in a new scratch array. */
static int operand_list(an_t *a, int s, int e, dal_sql_opnd_t **vals, size_t *n)
{
    size_t cnt = 0, k = 0;
    int i, j;

    for (i = s; i < e; i = j + 1, cnt++)
        j = comma_end(a, i, e);
    *vals = NULL;
    *n = cnt;
    if (cnt == 0)
        return 0;
    if (!(*vals = scratch(a, cnt * sizeof **vals)))
        return -1;
    for (i = s; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        (*vals)[k++] = operand(a, i, j);
    }
    return 0;
}

/* ============================================================ expressions */

static int query(an_t *a, int i, int e, int fill, int kind);

/* Scan an expression for subqueries: the only way an expression can name a
 * table.  Everything else in it is left to the server. */
static int scan_expr(an_t *a, int i, int e)
{
    for (; i < e && !a->failed; i++) {
        if (subquery_at(a, i, e)) {
            if (query(a, i + 1, a->link[i], 0, DAL_SCOPE_SUBQUERY))
                return -1;
            i = a->link[i];
        }
    }
    return a->failed ? -1 : 0;
}

/* If [i,e) starts with a column reference (name, q.name or db.q.name) that
 * is not a function call, the index after it; else -1. */
static int colref_end(const an_t *a, int i, int e)
{
    int parts = 1;

    if (!is_name(a, i, e) || kw_in(a, i, e, literal_words))
        return -1;
    while (parts < 3 && is_p(a, i + 1, e, '.') && is_name(a, i + 2, e)) {
        i += 2;
        parts++;
    }
    i++;
    if (is_p(a, i, e, '(') || is_p(a, i, e, '.'))
        return -1;
    return i;
}

/* ============================================================ table refs */

static int add_tref(an_t *a, int qual, int name, int role, int alias)
{
    struct dal_sql_tref *t = vpush(a, &a->trefs, sizeof *t);

    if (!t)
        return -1;
    t->off = a->tk[name].off;
    t->len = a->tk[name].len;
    if (qual >= 0) {
        t->qual_off = a->tk[qual].off;
        t->qual_len = tend(a, qual + 1) - a->tk[qual].off; /* through the dot */
        a->tflag[qual] |= TF_TABLE;
    }
    a->tflag[name] |= TF_TABLE;
    t->role = role;
    t->scope = a->scope;
    if (!(t->name = tok_name(a, name)))
        return -1;
    if (alias >= 0 && !(t->alias = alias_text(a, alias)))
        return -1;
    return 0;
}

/* A possibly qualified name at i: sets *qual (or -1) and *name (or -1 when
 * there is no name at i) and returns the index after it. */
static int qname(const an_t *a, int i, int e, int *qual, int *name)
{
    *qual = -1;
    *name = -1;
    if (!is_name(a, i, e))
        return i;
    if (is_p(a, i + 1, e, '.') && is_name(a, i + 2, e)) {
        *qual = i;
        *name = i + 2;
        return i + 3;
    }
    *name = i;
    return i + 1;
}

/* Record the table named at i, if any.  Returns the index after the name,
 * or -1 on error. */
static int table_name(an_t *a, int i, int e, int role)
{
    int q, n, j = qname(a, i, e, &q, &n);

    if (n >= 0 && add_tref(a, q, n, role, -1))
        return -1;
    return j;
}

/* Words that end a table factor, so cannot be its alias. */
static const unsigned char not_alias[] = {
    K_ON, K_USING, K_JOIN, K_INNER, K_CROSS, K_LEFT, K_RIGHT, K_FULL, K_NATURAL,
    K_STRAIGHT_JOIN, K_OUTER, K_WHERE, K_GROUP, K_ORDER, K_HAVING, K_LIMIT, K_UNION,
    K_EXCEPT, K_INTERSECT, K_FOR, K_LOCK, K_SET, K_USE, K_IGNORE, K_FORCE, K_PARTITION,
    K_WINDOW, K_INTO, K_VALUES, K_VALUE, K_SELECT, K_FROM, K_AS, K_RETURNING, K_WITH,
    K_TO, K_LIKE, K_OJ, 0,
};

/* [AS] alias at i.  Sets *alias to its token or -1; returns the index after. */
static int table_alias(const an_t *a, int i, int e, int *alias)
{
    *alias = -1;
    if (kw(a, i, e, K_AS)) {
        if (is_name(a, i + 1, e) || is_type(a, i + 1, e, DAL_TOK_STRING)) {
            *alias = i + 1;
            return i + 2;
        }
        return i + 1;
    }
    if (is_type(a, i, e, DAL_TOK_QIDENT) ||
        (is_type(a, i, e, DAL_TOK_IDENT) && !kw_in(a, i, e, not_alias))) {
        *alias = i;
        return i + 1;
    }
    return i;
}

/* USE|IGNORE|FORCE INDEX|KEY [FOR JOIN|ORDER BY|GROUP BY] (list), repeated. */
static int index_hints(const an_t *a, int i, int e)
{
    static const unsigned char verbs[] = {K_USE, K_IGNORE, K_FORCE, 0};
    static const unsigned char what[] = {K_INDEX, K_KEY, 0};

    while (kw_in(a, i, e, verbs) && kw_in(a, i + 1, e, what)) {
        i += 2;
        if (kw(a, i, e, K_FOR))
            i += kw(a, i + 1, e, K_JOIN) ? 2 : 3;
        if (is_p(a, i, e, '('))
            i = a->link[i] + 1;
    }
    return i < e ? i : e;
}

enum { JOIN_INNER = 0, JOIN_LEFT = 1, JOIN_RIGHT = 2, JOIN_FULL = 3, JOIN_NATURAL = 4 };

/* A join operator at i ([NATURAL] [INNER|CROSS|LEFT|RIGHT|FULL [OUTER]] JOIN,
 * STRAIGHT_JOIN): the index after it, or 0 if there is none.  *how gets the
 * JOIN_* bits: which sides may be all NULL, and NATURAL. */
static int join_op(const an_t *a, int i, int e, int *how)
{
    int h = JOIN_INNER;

    if (kw(a, i, e, K_STRAIGHT_JOIN)) {
        *how = h;
        return i + 1;
    }
    if (kw(a, i, e, K_NATURAL)) {
        h |= JOIN_NATURAL;
        i++;
    }
    if (kw(a, i, e, K_INNER) || kw(a, i, e, K_CROSS)) {
        i++;
    } else if (kw(a, i, e, K_LEFT) || kw(a, i, e, K_RIGHT) || kw(a, i, e, K_FULL)) {
        h |= kw(a, i, e, K_LEFT) ? JOIN_LEFT : kw(a, i, e, K_RIGHT) ? JOIN_RIGHT : JOIN_FULL;
        i++;
        if (kw(a, i, e, K_OUTER))
            i++;
    }
    *how = h;
    return kw(a, i, e, K_JOIN) ? i + 1 : 0;
}

/* The end of an ON condition: the next top-level ',', ON or join operator. */
static int on_end(const an_t *a, int i, int e)
{
    int how;

    while (i < e && !is_p(a, i, e, ',') && !kw(a, i, e, K_ON) && !join_op(a, i, e, &how))
        i = next_tok(a, i);
    return i;
}

static int conds(an_t *a, int s, int e, int level, int top);

/* Mark table references [t0,t1) and scopes [s0,s1) as on the NULL side of
 * an outer join. */
static void mark_null_side(an_t *a, size_t t0, size_t t1, size_t s0, size_t s1)
{
    struct dal_sql_tref *t = a->trefs.v;
    struct dal_sql_scope *sc = a->scopes.v;

    for (; t0 < t1; t0++)
        t[t0].null_side = 1;
    for (; s0 < s1; s0++)
        sc[s0].null_side = 1;
}

/* USING (c, ...) at i after the table factor whose references start at
 * tref index tf: for each column a col = col condition between that table
 * (when the factor is one table) and whichever earlier table has it. */
static int using_links(an_t *a, int i, int e, size_t tf)
{
    const struct dal_sql_tref *t;
    int j, k, close;

    if (!is_p(a, i + 1, e, '('))
        return 0;
    close = a->link[i + 1];
    if (a->trefs.n != tf + 1)
        return 0;
    t = (const struct dal_sql_tref *)a->trefs.v + tf;
    for (j = i + 2; j < close; j = k + 1) {
        struct dal_sql_cond *c;
        k = comma_end(a, j, close);
        if (k != j + 1 || !is_name(a, j, k))
            continue;
        if (!(c = vpush(a, &a->conds, sizeof *c)))
            return -1;
        c->op = DAL_COND_COLEQ;
        c->scope = a->scope;
        c->off = a->tk[i].off;
        c->len = tend(a, close) - c->off;
        c->using_off = a->tk[i].off;
        c->qualifier2 = t->alias ? t->alias : t->name;
        if (!(c->column = tok_name(a, j)) || !(c->column2 = tok_name(a, j)))
            return -1;
    }
    return 0;
}

/* One ON condition [i,e) of a join of kind how: its subqueries, and its
 * conditions (of an outer join only col = col: the others keep the rows of
 * the preserved side). */
static int on_clause(an_t *a, int i, int e, int how)
{
    int saved = a->links_only, rc;

    if (scan_expr(a, i, e))
        return -1;
    a->links_only = (how & JOIN_FULL) != 0;
    rc = conds(a, i, e, 0, 0);
    a->links_only = saved;
    return rc;
}

static int table_list(an_t *a, int i, int e, int role);

/* Record the alias token at i (if any) as a source of the current scope. */
static int add_source(an_t *a, int alias)
{
    struct dal_sql_source *s;

    if (alias < 0)
        return 0;
    if (!(s = vpush(a, &a->sources, sizeof *s)) || !(s->name = alias_text(a, alias)))
        return -1;
    s->scope = a->scope;
    return 0;
}

/* A derived table or a parenthesised join at i, then its alias. */
static int paren_factor(an_t *a, int i, int e, int role)
{
    int close = a->link[i], alias, j, derived = query_inside(a, i, e);

    if (derived) {
        if (query(a, i + 1, close, 0, DAL_SCOPE_DERIVED))
            return -1;
    } else if (table_list(a, i + 1, close, role)) {
        return -1;
    }
    j = table_alias(a, close + 1, e, &alias);
    if (derived && add_source(a, alias))
        return -1;
    if (alias >= 0 && is_p(a, j, e, '(')) /* derived column list */
        j = a->link[j] + 1;
    return j;
}

/* One table factor at i: name, derived table, nested join or table
 * function.  Returns the index after it (always > i), or -1 on error. */
static int table_factor(an_t *a, int i, int e, int role)
{
    int q, n, alias, j;

    if (kw(a, i, e, K_LATERAL) && is_p(a, i + 1, e, '('))
        i++;
    if (is_p(a, i, e, '('))
        return paren_factor(a, i, e, role);
    if (kw(a, i, e, K_DUAL))
        return i + 1;
    if (is_name(a, i, e) && is_p(a, i + 1, e, '(')) { /* JSON_TABLE(...) */
        if (scan_expr(a, i + 2, a->link[i + 1]))
            return -1;
        j = table_alias(a, a->link[i + 1] + 1, e, &alias);
        return add_source(a, alias) ? -1 : j;
    }
    j = qname(a, i, e, &q, &n);
    if (n < 0)
        return i + 1;
    if (kw(a, j, e, K_PARTITION) && is_p(a, j + 1, e, '('))
        j = a->link[j + 1] + 1;
    j = table_alias(a, j, e, &alias);
    j = index_hints(a, j, e);
    return add_tref(a, q, n, role, alias) ? -1 : j;
}

/* A table reference list: factors joined by ',' and join operators, with
 * ON conditions and USING lists. */
static int table_list(an_t *a, int i, int e, int role)
{
    size_t t0 = a->trefs.n, s0 = a->scopes.n, tf = t0, sf = s0;
    int want = 1, how = JOIN_INNER, j;

    if (++a->depth > MAX_DEPTH) {
        a->depth--;
        return fail(a, i < a->nt ? a->tk[i].off : 0, "statement nested too deeply");
    }
    while (i < e && !a->failed) {
        if (is_p(a, i, e, '{') || is_p(a, i, e, '}') || kw(a, i, e, K_OJ)) {
            i++; /* ODBC { OJ ... } */
        } else if (want) {
            tf = a->trefs.n;
            sf = a->scopes.n;
            i = table_factor(a, i, e, role);
            if (how & JOIN_LEFT)
                mark_null_side(a, tf, a->trefs.n, sf, a->scopes.n);
            if (how & JOIN_RIGHT)
                mark_null_side(a, t0, tf, s0, sf);
            want = 0;
        } else if (is_p(a, i, e, ',')) {
            want = 1;
            how = JOIN_INNER;
            i++;
        } else if ((j = join_op(a, i, e, &how)) > 0) {
            want = 1;
            i = j;
        } else if (kw(a, i, e, K_ON)) {
            j = on_end(a, i + 1, e);
            if (on_clause(a, i + 1, j, how))
                break;
            i = j;
        } else if (kw(a, i, e, K_USING)) {
            if (!(how & JOIN_NATURAL) && using_links(a, i, e, tf))
                break;
            i = is_p(a, i + 1, e, '(') ? a->link[i + 1] + 1 : i + 1;
        } else {
            j = next_tok(a, i);
            scan_expr(a, i, j);
            i = j;
        }
        if (i < 0)
            break;
    }
    a->depth--;
    return a->failed ? -1 : 0;
}

/* ============================================================ conditions */

/* The end of the conjunct starting at i: the next AND or && at the top
 * level, not inside CASE ... END and not the AND of a BETWEEN.  Sets *has_or
 * when an OR, XOR or || is met at the top level on the way. */
static int conjunct_end(const an_t *a, int i, int e, int *has_or)
{
    int cases = 0, between = 0;

    for (; i < e; i = next_tok(a, i)) {
        if (kw(a, i, e, K_CASE)) {
            cases++;
        } else if (cases > 0) {
            if (kw(a, i, e, K_END))
                cases--;
        } else if (kw(a, i, e, K_BETWEEN)) {
            between = 1;
        } else if (kw(a, i, e, K_AND) || is_op(a, i, e, "&&")) {
            if (!between)
                return i;
            between = 0;
        } else if (kw(a, i, e, K_OR) || kw(a, i, e, K_XOR) || is_op(a, i, e, "||")) {
            *has_or = 1;
        }
    }
    return e;
}

/* A comparison operator at i, as a condition op, or -1. */
static int cmp_op(const an_t *a, int i, int e)
{
    if (is_op(a, i, e, "="))
        return DAL_COND_EQ;
    if (is_op(a, i, e, "<"))
        return DAL_COND_LT;
    if (is_op(a, i, e, "<="))
        return DAL_COND_LE;
    if (is_op(a, i, e, ">"))
        return DAL_COND_GT;
    if (is_op(a, i, e, ">="))
        return DAL_COND_GE;
    return -1;
}

static int flip_op(int op)
{
    switch (op) {
    case DAL_COND_LT: return DAL_COND_GT;
    case DAL_COND_LE: return DAL_COND_GE;
    case DAL_COND_GT: return DAL_COND_LT;
    case DAL_COND_GE: return DAL_COND_LE;
    default: return op;
    }
}

/* Record a condition on the column reference [cs,ce) spanning [s,e). */
static int add_cond(an_t *a, int cs, int ce, int op, dal_sql_opnd_t *vals, size_t nvals,
                    int s, int e)
{
    struct dal_sql_cond *c;

    if (a->links_only)
        return 0;
    if (!(c = vpush(a, &a->conds, sizeof *c)))
        return -1;
    c->scope = a->scope;
    c->op = (dal_cond_op_t)op;
    c->vals = vals;
    c->nvals = nvals;
    c->off = a->tk[s].off;
    c->len = tend(a, e - 1) - c->off;
    if (!(c->column = tok_name(a, ce - 1)))
        return -1;
    if (ce - cs >= 3 && !(c->qualifier = tok_name(a, ce - 3)))
        return -1;
    return 0;
}

static int one_value(an_t *a, int cs, int ce, int op, int vs, int ve, int s, int e)
{
    dal_sql_opnd_t *v = scratch(a, sizeof *v);

    if (!v)
        return -1;
    *v = operand(a, vs, ve);
    return add_cond(a, cs, ce, op, v, 1, s, e);
}

/* Record col = col2 for the column references [cs,ce) and [ds,de). */
static int add_link(an_t *a, int cs, int ce, int ds, int de)
{
    struct dal_sql_cond *c = vpush(a, &a->conds, sizeof *c);

    if (!c)
        return -1;
    c->op = DAL_COND_COLEQ;
    c->scope = a->scope;
    c->off = a->tk[cs].off;
    c->len = tend(a, de - 1) - c->off;
    if (!(c->column = tok_name(a, ce - 1)) || !(c->column2 = tok_name(a, de - 1)))
        return -1;
    if (ce - cs >= 3 && !(c->qualifier = tok_name(a, ce - 3)))
        return -1;
    if (de - ds >= 3 && !(c->qualifier2 = tok_name(a, de - 3)))
        return -1;
    return 0;
}

/* One conjunct [s,e): col op v, v op col, col IN (..), col BETWEEN x AND y,
 * or a parenthesised group of conjuncts.  Anything else is ignored.  top:
 * the conjunct is the whole WHERE condition. */
static int conjunct(an_t *a, int s, int e, int level, int top)
{
    int c, k, op;

    if (s >= e)
        return 0;
    if (is_p(a, s, e, '(') && a->link[s] == e - 1) {
        if (subquery_at(a, s, e) || level >= MAX_COND_DEPTH)
            return 0;
        return conds(a, s + 1, e - 1, level + 1, top);
    }
    c = colref_end(a, s, e);
    if (c > s && c < e) {
        if ((op = cmp_op(a, c, e)) >= 0 && c + 1 < e) {
            if (colref_end(a, c + 1, e) == e) /* col = col: a join, not a value */
                return op == DAL_COND_EQ ? add_link(a, s, c, c + 1, e) : 0;
            return one_value(a, s, c, op, c + 1, e, s, e);
        }
        if (kw(a, c, e, K_IN) && is_p(a, c + 1, e, '(') && a->link[c + 1] == e - 1 &&
            !subquery_at(a, c + 1, e)) {
            dal_sql_opnd_t *vals;
            size_t n;
            if (operand_list(a, c + 2, e - 1, &vals, &n))
                return -1;
            return n ? add_cond(a, s, c, DAL_COND_IN, vals, n, s, e) : 0;
        }
        if (kw(a, c, e, K_BETWEEN)) {
            dal_sql_opnd_t *vals;
            for (k = c + 1; k < e && !kw(a, k, e, K_AND); k = next_tok(a, k))
                ;
            if (k >= e || !(vals = scratch(a, 2 * sizeof *vals)))
                return a->failed ? -1 : 0;
            vals[0] = operand(a, c + 1, k);
            vals[1] = operand(a, k + 1, e);
            return add_cond(a, s, c, DAL_COND_BETWEEN, vals, 2, s, e);
        }
        return 0;
    }
    /* value op col */
    for (k = s; k < e && cmp_op(a, k, e) < 0; k = next_tok(a, k))
        ;
    if (k <= s || k >= e || colref_end(a, k + 1, e) != e)
        return 0;
    if (operand(a, s, k).kind == DAL_OPND_EXPR)
        return 0;
    return one_value(a, k + 1, e, flip_op(cmp_op(a, k, e)), s, k, s, e);
}

/* The conjuncts of [s,e).  An OR at this level makes none of them usable:
 * if [s,e) is the whole WHERE (maybe inside parentheses) that is recorded
 * in where_has_or; in a group ANDed with others only the group is skipped,
 * since the other conjuncts still hold. */
static int conds(an_t *a, int s, int e, int level, int top)
{
    int i, j, has_or = 0, single = conjunct_end(a, s, e, &has_or) >= e;

    for (i = s; i < e; i = j + 1)
        j = conjunct_end(a, i, e, &has_or);
    if (has_or) {
        if (top)
            a->r.where_has_or = 1;
        return 0;
    }
    for (i = s; i < e; i = j + 1) {
        j = conjunct_end(a, i, e, &has_or);
        if (conjunct(a, i, j, level, top && single))
            return -1;
    }
    return 0;
}

/* ============================================================ clauses */

enum {
    CL_HEAD, CL_FROM, CL_USING, CL_SET, CL_WHERE, CL_GROUP, CL_HAVING, CL_WINDOW,
    CL_ORDER, CL_LIMIT, CL_INTO, CL_LOCK, CL_RETURNING, CL_N
};

#define BIT(c) (1u << (c))
#define SELECT_CLAUSES                                                                      \
    (BIT(CL_FROM) | BIT(CL_WHERE) | BIT(CL_GROUP) | BIT(CL_HAVING) | BIT(CL_WINDOW) |       \
     BIT(CL_ORDER) | BIT(CL_LIMIT) | BIT(CL_INTO) | BIT(CL_LOCK))
#define TAIL_CLAUSES (BIT(CL_ORDER) | BIT(CL_LIMIT) | BIT(CL_INTO) | BIT(CL_LOCK))

typedef struct seg {
    int kw;   /* index of the clause keyword, -1 if the clause is absent */
    int b, e; /* the clause body */
} seg_t;

/* The clause starting at i, or -1; *body is where its body starts. */
static int clause_at(const an_t *a, int i, int e, int *body)
{
    static const struct { unsigned char w; int cl; } one[] = {
        {K_FROM, CL_FROM}, {K_WHERE, CL_WHERE}, {K_HAVING, CL_HAVING},
        {K_LIMIT, CL_LIMIT}, {K_INTO, CL_INTO}, {K_USING, CL_USING},
        {K_SET, CL_SET}, {K_RETURNING, CL_RETURNING},
    };
    size_t k;

    if (a->kwid[i] == K_NONE)
        return -1;
    *body = i + 1;
    /* WINDOW w AS (...): MariaDB allows `window` as a column name */
    if (kw(a, i, e, K_WINDOW) && is_name(a, i + 1, e) && kw(a, i + 2, e, K_AS))
        return CL_WINDOW;
    for (k = 0; k < sizeof one / sizeof one[0]; k++)
        if (kw(a, i, e, one[k].w))
            return one[k].cl;
    *body = i + 2;
    if (i > 0 && kw(a, i - 1, e, K_FOR)) /* index hint: FOR ORDER BY (..) */
        return -1;
    if (kw(a, i, e, K_GROUP) && kw(a, i + 1, e, K_BY))
        return CL_GROUP;
    if (kw(a, i, e, K_ORDER) && kw(a, i + 1, e, K_BY))
        return CL_ORDER;
    *body = i;
    if (kw(a, i, e, K_FOR) && (kw(a, i + 1, e, K_UPDATE) || kw(a, i + 1, e, K_SHARE)))
        return CL_LOCK;
    if (kw(a, i, e, K_LOCK) && kw(a, i + 1, e, K_IN))
        return CL_LOCK;
    return -1;
}

/* Cut [i,e) at the top-level keywords of the clauses in mask.  A clause
 * keyword seen a second time is left inside the clause before it. */
static void split_clauses(const an_t *a, int i, int e, unsigned mask, seg_t *sg)
{
    int c, j, body, cur = CL_HEAD;

    for (c = 0; c < CL_N; c++) {
        sg[c].kw = -1;
        sg[c].b = sg[c].e = e;
    }
    sg[CL_HEAD].kw = i;
    sg[CL_HEAD].b = i;
    for (j = i; j < e; j = next_tok(a, j)) {
        c = clause_at(a, j, e, &body);
        if (c < 0 || !(mask & BIT(c)) || sg[c].kw >= 0)
            continue;
        sg[cur].e = j;
        sg[c].kw = j;
        sg[c].b = body < e ? body : e;
        sg[c].e = e;
        cur = c;
    }
}

/* ORDER BY / GROUP BY items of [s,e). */
static int order_items(an_t *a, int s, int e, vec_t *v, int *rollup)
{
    int i, j, k;

    for (i = s; i < e; i = k + 1) {
        struct dal_sql_order *o;
        k = j = comma_end(a, i, e);
        if (rollup && j == e && j - i >= 2 && kw(a, j - 2, e, K_WITH) &&
            kw(a, j - 1, e, K_ROLLUP)) {
            *rollup = 1;
            j -= 2;
        }
        if (!(o = vpush(a, v, sizeof *o)))
            return -1;
        if (j > i && kw(a, j - 1, e, K_DESC)) {
            o->desc = 1;
            j--;
        } else if (j > i && kw(a, j - 1, e, K_ASC)) {
            j--;
        }
        if (j <= i) { /* a lone ASC/DESC: nothing to record */
            v->n--;
            continue;
        }
        o->off = a->tk[i].off;
        o->len = tend(a, j - 1) - o->off;
        if (colref_end(a, i, j) == j && !(o->column = tok_name(a, j - 1)))
            return -1;
        if (j - i == 1 && a->tk[i].type == DAL_TOK_NUMBER) {
            long pos = 0;
            uint32_t d;
            for (d = 0; d < a->tk[i].len; d++) {
                char c = a->sql[a->tk[i].off + d];
                if (c < '0' || c > '9' || pos > INT_MAX / 10) {
                    pos = 0;
                    break;
                }
                pos = pos * 10 + (c - '0');
            }
            o->position = pos > INT_MAX ? 0 : (int)pos;
        }
    }
    return 0;
}

static void limit_clause(an_t *a, const seg_t *sg)
{
    int b = sg->b, e = sg->e, c = comma_end(a, b, e), k;

    a->r.has_limit = 1;
    a->r.limit_off = a->tk[sg->kw].off;
    a->r.limit_len = tend(a, e > b ? e - 1 : sg->kw) - a->r.limit_off;
    if (c < e) { /* LIMIT offset, count */
        a->r.limit_has_offset = 1;
        a->r.limit_offset = operand(a, b, c);
        a->r.limit_count = operand(a, c + 1, e);
        return;
    }
    for (k = b; k < e && !kw(a, k, e, K_OFFSET); k = next_tok(a, k))
        ;
    a->r.limit_count = operand(a, b, k);
    if (k < e) {
        a->r.limit_has_offset = 1;
        a->r.limit_offset = operand(a, k + 1, e);
    }
}

/* The ? in [s,e) (a LIMIT clause) can only be integers. */
static void int_params(an_t *a, int s, int e)
{
    for (; s < e; s++)
        if (a->tk[s].type == DAL_TOK_PARAM)
            a->param_int[a->link[s]] = 1;
}

/* The clauses after FROM (or after a table list): WHERE, GROUP BY, HAVING,
 * WINDOW, ORDER BY, LIMIT, locking, INTO, RETURNING. */
static int clauses(an_t *a, const seg_t *sg, int fill)
{
    const seg_t *w = &sg[CL_WHERE], *g = &sg[CL_GROUP], *h = &sg[CL_HAVING];

    if (scan_expr(a, w->b, w->e) || scan_expr(a, g->b, g->e) || scan_expr(a, h->b, h->e) ||
        scan_expr(a, sg[CL_WINDOW].b, sg[CL_WINDOW].e) ||
        scan_expr(a, sg[CL_ORDER].b, sg[CL_ORDER].e) ||
        scan_expr(a, sg[CL_RETURNING].b, sg[CL_RETURNING].e))
        return -1;
    if (w->kw >= 0 && w->b < w->e) {
        if (fill & FILL_HEAD) {
            a->r.where_off = a->tk[w->b].off;
            a->r.where_len = tend(a, w->e - 1) - a->r.where_off;
        }
        if (conds(a, w->b, w->e, 0, (fill & FILL_HEAD) != 0))
            return -1;
    }
    if (sg[CL_LIMIT].kw >= 0)
        int_params(a, sg[CL_LIMIT].b, sg[CL_LIMIT].e);
    if (fill & FILL_HEAD) {
        if (g->kw >= 0 && order_items(a, g->b, g->e, &a->group, &a->r.group_with_rollup))
            return -1;
        if (h->kw >= 0) {
            a->r.has_having = 1;
            if (h->b < h->e) {
                a->r.having_off = a->tk[h->b].off;
                a->r.having_len = tend(a, h->e - 1) - a->r.having_off;
            }
        }
    }
    if (fill & FILL_TAIL) {
        if (sg[CL_ORDER].kw >= 0 &&
            order_items(a, sg[CL_ORDER].b, sg[CL_ORDER].e, &a->order, NULL))
            return -1;
        if (sg[CL_LIMIT].kw >= 0)
            limit_clause(a, &sg[CL_LIMIT]);
        if (sg[CL_LOCK].kw >= 0)
            a->r.for_update = 1;
    }
    return 0;
}

/* ============================================================ SELECT */

static const unsigned char aggregates[] = {
    K_COUNT, K_SUM, K_MIN, K_MAX, K_AVG, K_GROUP_CONCAT, K_STD, K_STDDEV, K_STDDEV_POP,
    K_STDDEV_SAMP, K_VARIANCE, K_VAR_POP, K_VAR_SAMP, K_BIT_AND, K_BIT_OR, K_BIT_XOR,
    K_JSON_ARRAYAGG, K_JSON_OBJECTAGG, 0,
};

/* An aggregate call anywhere in [s,e) outside subqueries. */
static int has_aggregate(const an_t *a, int s, int e)
{
    int i;

    for (i = s; i < e; i++) {
        if (subquery_at(a, i, e))
            i = a->link[i];
        else if (kw_in(a, i, e, aggregates) && is_p(a, i + 1, e, '('))
            return 1;
    }
    return 0;
}

/* Classify the select item expression [s,e) and set the argument span. */
static dal_agg_t item_agg(const an_t *a, int s, int e, struct dal_sql_item *it)
{
    static const struct { unsigned char w; dal_agg_t plain, distinct; } mergeable[] = {
        {K_COUNT, DAL_AGG_COUNT, DAL_AGG_COUNT_DISTINCT},
        {K_SUM, DAL_AGG_SUM, DAL_AGG_OTHER_FUNC},
        {K_MIN, DAL_AGG_MIN, DAL_AGG_MIN},
        {K_MAX, DAL_AGG_MAX, DAL_AGG_MAX},
        {K_AVG, DAL_AGG_AVG, DAL_AGG_OTHER_FUNC},
    };
    int b, close, distinct = 0;
    size_t k;

    if (!(e - s >= 3 && kw_in(a, s, e, aggregates) && is_p(a, s + 1, e, '(') &&
          a->link[s + 1] == e - 1))
        return has_aggregate(a, s, e) ? DAL_AGG_OTHER_FUNC : DAL_AGG_NONE;
    close = e - 1;
    b = s + 2;
    if (kw(a, b, close, K_DISTINCT)) {
        distinct = 1;
        b++;
    } else if (kw(a, b, close, K_ALL)) {
        b++;
    }
    it->arg_off = b < close ? a->tk[b].off : tend(a, s + 1);
    it->arg_len = b < close ? tend(a, close - 1) - it->arg_off : 0;
    for (k = 0; k < sizeof mergeable / sizeof mergeable[0]; k++)
        if (kw(a, s, e, mergeable[k].w))
            return distinct ? mergeable[k].distinct : mergeable[k].plain;
    return DAL_AGG_OTHER_FUNC;
}

/* Whether the last token of the item [s,e) is a bare alias (no AS).  The
 * token before it must be able to end an expression, and neither may be an
 * operator word (`NOT x`, `x IS NULL`, `INTERVAL 1 DAY`, `'a' 'b'`). */
static int bare_alias(const an_t *a, int s, int e)
{
    static const unsigned char ops[] = {
        K_AND, K_OR, K_XOR, K_NOT, K_IS, K_LIKE, K_RLIKE, K_REGEXP, K_IN, K_BETWEEN, K_DIV,
        K_MOD, K_BINARY, K_CASE, K_WHEN, K_THEN, K_ELSE, K_INTERVAL, K_COLLATE, K_ESCAPE,
        K_SOUNDS, K_DISTINCT, K_ALL, K_ANY, K_SOME, K_EXISTS, K_AS, K_MEMBER, K_OF, K_OVER, 0,
    };
    static const unsigned char ends[] = {K_NULL, K_TRUE, K_FALSE, K_UNKNOWN, K_END, 0};
    static const unsigned char units[] = {
        K_MICROSECOND, K_SECOND, K_MINUTE, K_HOUR, K_DAY, K_WEEK, K_MONTH, K_QUARTER, K_YEAR,
        K_SECOND_MICROSECOND, K_MINUTE_MICROSECOND, K_MINUTE_SECOND, K_HOUR_MICROSECOND,
        K_HOUR_SECOND, K_HOUR_MINUTE, K_DAY_MICROSECOND, K_DAY_SECOND, K_DAY_MINUTE,
        K_DAY_HOUR, K_YEAR_MONTH, 0,
    };
    static const unsigned char interval[] = {K_INTERVAL, 0};
    int l = e - 1, p = e - 2;
    dal_tok_type_t lt = a->tk[l].type, pt = a->tk[p].type;

    if (lt == DAL_TOK_STRING && pt == DAL_TOK_STRING)
        return 0;
    if (lt == DAL_TOK_IDENT &&
        (kw_in(a, l, e, ends) ||
         (kw_in(a, l, e, units) && find_kw(a, s, e, interval) < e)))
        return 0;
    if (lt != DAL_TOK_IDENT && lt != DAL_TOK_QIDENT && lt != DAL_TOK_STRING)
        return 0;
    if (pt == DAL_TOK_IDENT)
        return !kw_in(a, p, e, ops);
    return is_p(a, p, e, ')') || pt == DAL_TOK_QIDENT || pt == DAL_TOK_STRING ||
           pt == DAL_TOK_NUMBER || pt == DAL_TOK_PARAM;
}

static int select_item(an_t *a, int s, int e)
{
    struct dal_sql_item *it;
    int x = e, alias = -1;

    if (s >= e)
        return 0;
    if (!(it = vpush(a, &a->items, sizeof *it)))
        return -1;
    if (e - s >= 3 && kw(a, e - 2, e, K_AS) &&
        (is_name(a, e - 1, e) || is_type(a, e - 1, e, DAL_TOK_STRING))) {
        alias = e - 1;
        x = e - 2;
    } else if (e - s >= 2 && bare_alias(a, s, e)) {
        alias = e - 1;
        x = e - 1;
    }
    it->off = a->tk[s].off;
    it->len = tend(a, x - 1) - it->off;
    it->star = (x - s == 1 && is_op(a, s, e, "*")) ||
               (x - s >= 3 && is_op(a, x - 1, e, "*") && is_p(a, x - 2, e, '.'));
    it->agg = item_agg(a, s, x, it);
    if (alias >= 0 && !(it->alias = alias_text(a, alias)))
        return -1;
    return 0;
}

static const unsigned char select_mods[] = {
    K_ALL, K_DISTINCT, K_DISTINCTROW, K_HIGH_PRIORITY, K_STRAIGHT_JOIN,
    K_SQL_SMALL_RESULT, K_SQL_BIG_RESULT, K_SQL_BUFFER_RESULT, K_SQL_NO_CACHE,
    K_SQL_CACHE, K_SQL_CALC_FOUND_ROWS, 0,
};

/* The select list [i,e): modifiers, then items. */
static int select_list(an_t *a, int i, int e, int fill)
{
    int j;

    for (; kw_in(a, i, e, select_mods); i++)
        if ((fill & FILL_HEAD) && (kw(a, i, e, K_DISTINCT) || kw(a, i, e, K_DISTINCTROW)))
            a->r.distinct = 1;
    if (scan_expr(a, i, e))
        return -1;
    if (!(fill & FILL_HEAD))
        return 0;
    for (; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        if (select_item(a, i, j))
            return -1;
    }
    return 0;
}

/* A new scope of the given kind inside the current one, holding the
 * tokens [i,e) (until a scope inside it claims some).  Returns its index,
 * or -1 when out of memory. */
static int new_scope(an_t *a, int kind, int i, int e)
{
    struct dal_sql_scope *sc = vpush(a, &a->scopes, sizeof *sc);

    if (!sc)
        return -1;
    sc->parent = a->scope;
    sc->kind = kind;
    sc->rowwise = 1;
    for (; i < e; i++)
        a->tscope[i] = (int)a->scopes.n - 1;
    return (int)a->scopes.n - 1;
}

/* Whether the SELECT whose clauses are sg makes each row from one row of
 * its sources (see dal_sql_scope.rowwise). */
static int select_rowwise(const an_t *a, const seg_t *sg)
{
    static const unsigned char over[] = {K_OVER, 0};
    const seg_t *h = &sg[CL_HEAD];
    int i;

    for (i = h->b; kw_in(a, i, h->e, select_mods); i++)
        if (kw(a, i, h->e, K_DISTINCT) || kw(a, i, h->e, K_DISTINCTROW))
            return 0;
    return sg[CL_GROUP].kw < 0 && sg[CL_HAVING].kw < 0 && sg[CL_LIMIT].kw < 0 &&
           sg[CL_WINDOW].kw < 0 && !has_aggregate(a, h->b, h->e) &&
           find_kw(a, h->b, h->e, over) >= h->e;
}

/* SELECT at i up to e (one member of a set operation), a scope of kind. */
static int select_body(an_t *a, int i, int e, int fill, int kind)
{
    seg_t sg[CL_N];
    const seg_t *f = &sg[CL_FROM];
    int saved = a->scope, sid = new_scope(a, kind, i, e), rc = -1;

    if (sid < 0)
        return -1;
    a->scope = sid;
    split_clauses(a, i + 1, e, SELECT_CLAUSES, sg);
    ((struct dal_sql_scope *)a->scopes.v)[sid].rowwise = select_rowwise(a, sg);
    if (select_list(a, sg[CL_HEAD].b, sg[CL_HEAD].e, fill))
        goto out;
    if (f->kw >= 0) {
        if (table_list(a, f->b, f->e, DAL_TREF_FROM))
            goto out;
        if ((fill & FILL_HEAD) && f->b < f->e) {
            a->r.from_off = a->tk[f->b].off;
            a->r.from_end = tend(a, f->e - 1);
        }
    }
    rc = clauses(a, sg, fill);
out:
    a->scope = saved;
    return rc;
}

/* What follows a parenthesised query or TABLE t: ORDER BY, LIMIT ... */
static int tail_clauses(an_t *a, int i, int e, int fill)
{
    seg_t sg[CL_N];

    split_clauses(a, i, e, TAIL_CLAUSES, sg);
    if (scan_expr(a, sg[CL_HEAD].b, sg[CL_HEAD].e))
        return -1;
    return clauses(a, sg, fill);
}

/* WITH [RECURSIVE] name [(cols)] AS (query) [, ...] after WITH at i.
 * Returns the index after the list, or -1 on error. */
static int ctes(an_t *a, int i, int e)
{
    if (kw(a, i, e, K_RECURSIVE))
        i++;
    while (is_name(a, i, e)) {
        if (push_str(a, &a->ctes, tok_name(a, i)))
            return -1;
        i++;
        if (is_p(a, i, e, '('))
            i = a->link[i] + 1;
        if (!kw(a, i, e, K_AS) || !is_p(a, i + 1, e, '('))
            break;
        i++;
        if (query(a, i + 1, a->link[i], 0, DAL_SCOPE_CTE))
            return -1;
        i = a->link[i] + 1;
        if (!is_p(a, i, e, ','))
            break;
        i++;
    }
    return i;
}

/* One member of a set operation: SELECT, ( query ), TABLE t, VALUES ... */
static int primary(an_t *a, int i, int e, int fill, int kind)
{
    if (i >= e)
        return 0;
    if (kw(a, i, e, K_SELECT))
        return select_body(a, i, e, fill, kind);
    if (is_p(a, i, e, '(')) {
        int close = a->link[i], inner = fill;
        if (close + 1 < e) /* ORDER BY / LIMIT after the parenthesis win */
            inner &= ~FILL_TAIL;
        if (query_inside(a, i, e) ? query(a, i + 1, close, inner, kind)
                                  : scan_expr(a, i, close + 1))
            return -1;
        return tail_clauses(a, close + 1, e, fill & FILL_TAIL);
    }
    if (kw(a, i, e, K_TABLE)) {
        int j = table_name(a, i + 1, e, DAL_TREF_FROM);
        return j < 0 ? -1 : tail_clauses(a, j, e, fill & FILL_TAIL);
    }
    return scan_expr(a, i, e);
}

/* Scopes [s0, end) made directly inside the current one are not row-wise:
 * the query they are members of is a set operation that removes rows. */
static void not_rowwise(an_t *a, size_t s0)
{
    struct dal_sql_scope *sc = a->scopes.v;

    for (; s0 < a->scopes.n; s0++)
        if (sc[s0].parent == a->scope)
            sc[s0].rowwise = 0;
}

/* A query expression [i,e): [WITH ...] primary {UNION|EXCEPT|INTERSECT
 * primary}, each member a scope of kind.  With fill, the first member fills
 * the head of the result and the last one its tail. */
static int query(an_t *a, int i, int e, int fill, int kind)
{
    static const unsigned char setops[] = {K_UNION, K_EXCEPT, K_INTERSECT, 0};
    size_t s0 = a->scopes.n;
    int j, k, first = 1, rc = -1, set_distinct = 0;

    if (++a->depth > MAX_DEPTH) {
        fail(a, i < a->nt ? a->tk[i].off : 0, "statement nested too deeply");
        goto out;
    }
    if (kw(a, i, e, K_WITH) && (i = ctes(a, i + 1, e)) < 0)
        goto out;
    for (j = i; j < e; j = k + 1, first = 0) {
        int last;
        k = find_kw(a, j, e, setops);
        last = k >= e;
        if ((!first || !last) && fill)
            a->r.has_union = 1;
        if (primary(a, j, k, (first ? fill & FILL_HEAD : 0) | (last ? fill & FILL_TAIL : 0),
                    kind))
            goto out;
        if (!last && !(kw(a, k, e, K_UNION) && kw(a, k + 1, e, K_ALL)))
            set_distinct = 1;
        if (kw(a, k + 1, e, K_ALL) || kw(a, k + 1, e, K_DISTINCT))
            k++;
    }
    if (set_distinct)
        not_rowwise(a, s0);
    rc = 0;
out:
    a->depth--;
    return rc;
}

/* ============================================================ DML */

/* `col = expr, ...` in [s,e): target names into cols, values (if vals is
 * not NULL) as operands into vals. */
static int assignments(an_t *a, int s, int e, vec_t *cols, vec_t *vals)
{
    int i, j, c;

    for (i = s; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        c = colref_end(a, i, j);
        if (scan_expr(a, i, j))
            return -1;
        if (c < 0 || !(is_op(a, c, j, "=") || is_op(a, c, j, ":=")))
            continue;
        if (push_str(a, cols, tok_name(a, c - 1)))
            return -1;
        if (vals) {
            dal_sql_opnd_t *v = vpush(a, vals, sizeof *v);
            if (!v)
                return -1;
            *v = operand(a, c + 1, j);
        }
    }
    return 0;
}

/* VALUES (..), (..) ... starting at i. */
static int insert_rows(an_t *a, int i, int e)
{
    int close;

    while (i < e) {
        struct dal_sql_row *row;
        if (kw(a, i, e, K_ROW))
            i++;
        if (!is_p(a, i, e, '('))
            break;
        close = a->link[i];
        if (a->rows.n == 0)
            a->r.values_off = a->tk[i].off;
        a->r.values_end = tend(a, close);
        if (!(row = vpush(a, &a->rows, sizeof *row)))
            return -1;
        row->off = a->tk[i].off;
        row->len = a->r.values_end - row->off;
        if (operand_list(a, i + 1, close, &row->vals, &row->nvals) ||
            scan_expr(a, i + 1, close))
            return -1;
        i = close + 1;
        if (!is_p(a, i, e, ','))
            break;
        i++;
    }
    return scan_expr(a, i, e); /* AS row_alias ... */
}

/* INSERT ... SET a = 1, b = 2: columns and one row. */
static int insert_set(an_t *a, int s, int e)
{
    vec_t vals = {0};
    struct dal_sql_row *row;

    a->r.insert_set = 1;
    if (assignments(a, s, e, &a->columns, &vals))
        return -1;
    if (!(row = vpush(a, &a->rows, sizeof *row)))
        return -1;
    row->vals = vals.v;
    row->nvals = vals.n;
    if (s < e) {
        row->off = a->r.values_off = a->tk[s].off;
        a->r.values_end = tend(a, e - 1);
        row->len = a->r.values_end - row->off;
    }
    return 0;
}

/* ON DUPLICATE KEY UPDATE at the top level of [i,e), or e. */
static int odku_start(const an_t *a, int i, int e)
{
    for (; i < e; i = next_tok(a, i))
        if (kw(a, i, e, K_ON) && kw(a, i + 1, e, K_DUPLICATE))
            return i;
    return e;
}

/* INSERT / REPLACE after the verb. */
static int insert_stmt(an_t *a, int i, int e)
{
    static const unsigned char mods[] = {K_LOW_PRIORITY, K_DELAYED, K_HIGH_PRIORITY, K_IGNORE, 0};
    static const unsigned char returning[] = {K_RETURNING, 0};
    int j, k, odku;

    for (; kw_in(a, i, e, mods); i++)
        if (kw(a, i, e, K_IGNORE))
            a->r.insert_ignore = 1;
    if (kw(a, i, e, K_INTO))
        i++;
    if ((i = table_name(a, i, e, DAL_TREF_INTO)) < 0)
        return -1;
    if (kw(a, i, e, K_PARTITION) && is_p(a, i + 1, e, '('))
        i = a->link[i + 1] + 1;
    if ((odku = odku_start(a, i, e)) < e) {
        a->r.odku_off = a->tk[odku].off;
        a->r.odku_len = tend(a, e - 1) - a->r.odku_off;
        if (scan_expr(a, odku, e))
            return -1;
    }
    e = odku;
    if ((k = find_kw(a, i, e, returning)) < e && scan_expr(a, k, e))
        return -1;
    e = k;
    if (is_p(a, i, e, '(') && !query_inside(a, i, e)) {
        for (j = i + 1; j < a->link[i]; j = k + 1) {
            k = comma_end(a, j, a->link[i]);
            if (k > j && push_str(a, &a->columns, tok_name(a, k - 1)))
                return -1;
        }
        i = a->link[i] + 1;
    }
    if (kw(a, i, e, K_VALUES) || kw(a, i, e, K_VALUE))
        return insert_rows(a, i + 1, e);
    if (kw(a, i, e, K_SET))
        return insert_set(a, i + 1, e);
    if (i >= e)
        return 0;
    a->r.insert_select = 1;
    return query(a, i, e, FILL_HEAD, DAL_SCOPE_TOP); /* items: which feeds the shard key */
}

/* UPDATE after the verb. */
static int update_stmt(an_t *a, int i, int e)
{
    static const unsigned char mods[] = {K_LOW_PRIORITY, K_IGNORE, 0};
    seg_t sg[CL_N];

    while (kw_in(a, i, e, mods))
        i++;
    split_clauses(a, i, e,
                  BIT(CL_SET) | BIT(CL_WHERE) | BIT(CL_ORDER) | BIT(CL_LIMIT) | BIT(CL_RETURNING),
                  sg);
    if (table_list(a, sg[CL_HEAD].b, sg[CL_HEAD].e, DAL_TREF_UPDATE) ||
        assignments(a, sg[CL_SET].b, sg[CL_SET].e, &a->setcols, NULL))
        return -1;
    return clauses(a, sg, FILL_ALL);
}

/* The targets of a multi-table DELETE ([s,e): t1[.*], t2[.*] ...).  A target
 * that is an alias makes its table a DELETE target; a target that is a name
 * is recorded itself (a rewriter must rename it). */
static int delete_targets(an_t *a, int s, int e, size_t from)
{
    struct dal_sql_tref *t = a->trefs.v;
    size_t n = a->trefs.n, k;
    int i, j, q, nm, found;
    char *name;

    for (i = s; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        qname(a, i, j, &q, &nm);
        if (nm < 0)
            continue;
        if (!(name = tok_name(a, nm)))
            return -1;
        found = 0;
        for (k = from; k < n; k++) {
            if (q < 0 && t[k].alias && ascii_casecmp(t[k].alias, name) == 0) {
                t[k].role = DAL_TREF_DELETE;
                found = 1;
            } else if (!t[k].alias && ascii_casecmp(t[k].name, name) == 0) {
                t[k].role = DAL_TREF_DELETE;
            }
        }
        if (!found && add_tref(a, q, nm, DAL_TREF_DELETE, -1))
            return -1;
        t = a->trefs.v; /* add_tref may have moved the array */
    }
    return 0;
}

/* DELETE after the verb: single-table, `DELETE t.. FROM refs` or
 * `DELETE FROM t.. USING refs`. */
static int delete_stmt(an_t *a, int i, int e)
{
    static const unsigned char mods[] = {K_LOW_PRIORITY, K_QUICK, K_IGNORE, 0};
    seg_t sg[CL_N];
    const seg_t *f = &sg[CL_FROM], *u = &sg[CL_USING], *refs;
    int from_first;
    size_t mark = 0;

    while (kw_in(a, i, e, mods))
        i++;
    from_first = kw(a, i, e, K_FROM);
    split_clauses(a, i, e,
                  BIT(CL_FROM) | BIT(CL_WHERE) | BIT(CL_ORDER) | BIT(CL_LIMIT) |
                      BIT(CL_RETURNING) | (from_first ? BIT(CL_USING) : 0),
                  sg);
    refs = (from_first && u->kw >= 0) ? u : f;
    if (refs->kw < 0)
        return clauses(a, sg, FILL_ALL);
    if (refs == f && from_first) {
        if (table_list(a, f->b, f->e, DAL_TREF_DELETE))
            return -1;
    } else {
        mark = a->trefs.n;
        if (table_list(a, refs->b, refs->e, DAL_TREF_FROM))
            return -1;
        if (refs == u ? delete_targets(a, f->b, f->e, mark)
                      : delete_targets(a, sg[CL_HEAD].b, sg[CL_HEAD].e, mark))
            return -1;
    }
    if (refs->b < refs->e) {
        a->r.from_off = a->tk[refs->b].off;
        a->r.from_end = tend(a, refs->e - 1);
    }
    return clauses(a, sg, FILL_ALL);
}

/* ============================================================ DDL */

/* REFERENCES t in column or constraint definitions of [s,e). */
static int references(an_t *a, int s, int e)
{
    int i;

    for (i = s; i < e; i++)
        if (kw(a, i, e, K_REFERENCES) && table_name(a, i + 1, e, DAL_TREF_FROM) < 0)
            return -1;
    return 0;
}

/* The query of CREATE TABLE ... [AS] SELECT / CREATE VIEW ... AS SELECT:
 * the first top-level SELECT, WITH, TABLE or parenthesised query. */
static int trailing_query(an_t *a, int i, int e)
{
    static const unsigned char starts[] = {K_SELECT, K_WITH, K_TABLE, K_VALUES, 0};

    for (; i < e; i = next_tok(a, i))
        if (kw_in(a, i, e, starts) || query_inside(a, i, e))
            return query(a, i, e, 0, DAL_SCOPE_TOP);
    return 0;
}

/* CREATE TABLE after the name at i. */
static int create_table_rest(an_t *a, int i, int e)
{
    if (kw(a, i, e, K_LIKE))
        return table_name(a, i + 1, e, DAL_TREF_FROM) < 0 ? -1 : 0;
    if (is_p(a, i, e, '(') && !query_inside(a, i, e)) {
        int close = a->link[i];
        if (kw(a, i + 1, close, K_LIKE)) {
            if (table_name(a, i + 2, close, DAL_TREF_FROM) < 0)
                return -1;
        } else if (references(a, i + 1, close)) {
            return -1;
        }
        i = close + 1;
    }
    return trailing_query(a, i, e);
}

/* DEFINER = user@host | CURRENT_USER[()] at i; returns the index after. */
static int skip_definer(const an_t *a, int i, int e)
{
    i += is_op(a, i + 1, e, "=") ? 3 : 1;
    while (is_p(a, i, e, '@'))
        i += 2;
    if (is_p(a, i, e, '('))
        i = a->link[i] + 1;
    return i < e ? i : e;
}

static int create_stmt(an_t *a, int i, int e)
{
    static const unsigned char flags[] = {
        K_TEMPORARY, K_UNIQUE, K_FULLTEXT, K_SPATIAL, K_ONLINE, K_OFFLINE, K_AGGREGATE, 0,
    };
    int on;

    for (;;) {
        if (kw(a, i, e, K_OR) && kw(a, i + 1, e, K_REPLACE))
            i += 2;
        else if (kw_in(a, i, e, flags))
            i++;
        else if (kw(a, i, e, K_ALGORITHM))
            i += is_op(a, i + 1, e, "=") ? 3 : 1;
        else if (kw(a, i, e, K_DEFINER))
            i = skip_definer(a, i, e);
        else if (kw(a, i, e, K_SQL) && kw(a, i + 1, e, K_SECURITY))
            i += 3;
        else
            break;
    }
    if (kw(a, i, e, K_TABLE)) {
        i++;
        if (kw(a, i, e, K_IF) && kw(a, i + 1, e, K_NOT) && kw(a, i + 2, e, K_EXISTS))
            i += 3;
        if ((i = table_name(a, i, e, DAL_TREF_DDL)) < 0)
            return -1;
        return create_table_rest(a, i, e);
    }
    if (kw(a, i, e, K_INDEX) || kw(a, i, e, K_KEY)) {
        static const unsigned char onw[] = {K_ON, 0};
        on = find_kw(a, i, e, onw);
        return table_name(a, on + 1, e, DAL_TREF_DDL) < 0 ? -1 : 0;
    }
    if (kw(a, i, e, K_VIEW)) {
        static const unsigned char as[] = {K_AS, 0};
        if ((i = table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
            return -1;
        return trailing_query(a, find_kw(a, i, e, as), e);
    }
    return 0;
}

static int alter_stmt(an_t *a, int i, int e)
{
    static const unsigned char flags[] = {K_ONLINE, K_OFFLINE, K_IGNORE, 0};
    static const unsigned char not_table[] = {K_INDEX, K_KEY, K_COLUMN, K_CONSTRAINT, 0};
    int j;

    while (kw_in(a, i, e, flags))
        i++;
    if (kw(a, i, e, K_VIEW)) {
        static const unsigned char as[] = {K_AS, 0};
        if ((i = table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
            return -1;
        return trailing_query(a, find_kw(a, i, e, as), e);
    }
    if (!kw(a, i, e, K_TABLE))
        return 0;
    if ((i = table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
        return -1;
    for (; i < e; i = j) {
        j = next_tok(a, i);
        if (kw(a, i, e, K_RENAME) && !kw_in(a, i + 1, e, not_table))
            j = table_name(a, i + ((kw(a, i + 1, e, K_TO) || kw(a, i + 1, e, K_AS)) ? 2 : 1), e,
                           DAL_TREF_DDL);
        else if (kw(a, i, e, K_REFERENCES))
            j = table_name(a, i + 1, e, DAL_TREF_FROM);
        else if (kw(a, i, e, K_WITH) && kw(a, i + 1, e, K_TABLE))
            j = table_name(a, i + 2, e, DAL_TREF_DDL);
        if (j < 0)
            return -1;
        if (j <= i)
            j = i + 1;
    }
    return 0;
}

/* A list of table names separated by commas (DROP TABLE a, b). */
static int name_list(an_t *a, int i, int e, int role)
{
    for (;;) {
        if ((i = table_name(a, i, e, role)) < 0)
            return -1;
        if (!is_p(a, i, e, ','))
            return 0;
        i++;
    }
}

static int drop_stmt(an_t *a, int i, int e)
{
    static const unsigned char what[] = {K_TABLE, K_TABLES, K_VIEW, 0};

    if (kw(a, i, e, K_TEMPORARY))
        i++;
    if (kw_in(a, i, e, what)) {
        i++;
        if (kw(a, i, e, K_IF) && kw(a, i + 1, e, K_EXISTS))
            i += 2;
        return name_list(a, i, e, DAL_TREF_DDL);
    }
    if (kw(a, i, e, K_INDEX)) {
        static const unsigned char onw[] = {K_ON, 0};
        return table_name(a, find_kw(a, i, e, onw) + 1, e, DAL_TREF_DDL) < 0 ? -1 : 0;
    }
    return 0;
}

/* RENAME TABLE a TO b [, c TO d] */
static int rename_stmt(an_t *a, int i, int e)
{
    if (!kw(a, i, e, K_TABLE) && !kw(a, i, e, K_TABLES))
        return 0;
    for (i++;;) {
        if ((i = table_name(a, i, e, DAL_TREF_DDL)) < 0)
            return -1;
        if (kw(a, i, e, K_TO) && (i = table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
            return -1;
        if (!is_p(a, i, e, ','))
            return 0;
        i++;
    }
}

/* ============================================================ others */

/* SHOW CREATE TABLE t, SHOW [FULL] COLUMNS|FIELDS|INDEX|KEYS FROM t. */
static int show_stmt(an_t *a, int i, int e)
{
    static const unsigned char lists[] = {K_COLUMNS, K_FIELDS, K_INDEX, K_INDEXES, K_KEYS, 0};

    if (kw(a, i, e, K_FULL) || kw(a, i, e, K_EXTENDED))
        i++;
    if (kw(a, i, e, K_CREATE) && (kw(a, i + 1, e, K_TABLE) || kw(a, i + 1, e, K_VIEW)))
        return table_name(a, i + 2, e, DAL_TREF_FROM) < 0 ? -1 : 0;
    if (kw_in(a, i, e, lists) && (kw(a, i + 1, e, K_FROM) || kw(a, i + 1, e, K_IN)))
        return table_name(a, i + 2, e, DAL_TREF_FROM) < 0 ? -1 : 0;
    return 0;
}

/* START TRANSACTION's characteristics [i, e) include READ ONLY. */
static int read_only_txn(const an_t *a, int i, int e)
{
    for (; i + 1 < e; i++)
        if (dal_tok_eq(a->sql, &a->tk[i], "READ") && dal_tok_eq(a->sql, &a->tk[i + 1], "ONLY"))
            return 1;
    return 0;
}

static int statement(an_t *a, int i, int e);

/* EXPLAIN / DESCRIBE after the verb: of a statement or of a table. */
static int explain_stmt(an_t *a, int i, int e)
{
    static const unsigned char opts[] = {K_EXTENDED, K_PARTITIONS, K_ANALYZE, 0};
    static const unsigned char stmts[] = {
        K_SELECT, K_WITH, K_INSERT, K_REPLACE, K_UPDATE, K_DELETE, K_TABLE, 0,
    };

    for (;;) {
        if (kw_in(a, i, e, opts))
            i++;
        else if (kw(a, i, e, K_FORMAT) && is_op(a, i + 1, e, "="))
            i += 3;
        else
            break;
    }
    if (kw(a, i, e, K_FOR)) /* EXPLAIN FOR CONNECTION n */
        return 0;
    if (kw_in(a, i, e, stmts) || is_p(a, i, e, '(')) {
        if (statement(a, i, e))
            return -1;
        a->r.kind = DAL_SQL_OTHER;
        return 0;
    }
    return table_name(a, i, e, DAL_TREF_FROM) < 0 ? -1 : 0;
}

/* WITH at i: common table expressions, then SELECT, UPDATE or DELETE. */
static int with_stmt(an_t *a, int i, int e)
{
    int j = ctes(a, i + 1, e);

    if (j < 0)
        return -1;
    if (kw(a, j, e, K_UPDATE)) {
        a->r.kind = DAL_SQL_UPDATE;
        return update_stmt(a, j + 1, e);
    }
    if (kw(a, j, e, K_DELETE)) {
        a->r.kind = DAL_SQL_DELETE;
        return delete_stmt(a, j + 1, e);
    }
    a->r.kind = DAL_SQL_SELECT;
    return query(a, j, e, FILL_ALL, DAL_SCOPE_TOP);
}

/* The statement [i,e): its kind, then the analysis that kind needs. */
static int statement(an_t *a, int i, int e)
{
    static const unsigned char ddl[] = {K_CREATE, K_ALTER, K_DROP, K_TRUNCATE, K_RENAME, 0};
    static const unsigned char explain[] = {K_EXPLAIN, K_DESCRIBE, K_DESC, 0};
    static const unsigned char forw[] = {K_FOR, 0};
    int rc = 0, j;

    if (++a->depth > MAX_DEPTH) {
        a->depth--;
        return fail(a, a->tk[i].off, "statement nested too deeply");
    }
    a->r.kind = DAL_SQL_OTHER;
    if (kw(a, i, e, K_SELECT) || is_p(a, i, e, '(')) {
        a->r.kind = DAL_SQL_SELECT;
        rc = query(a, i, e, FILL_ALL, DAL_SCOPE_TOP);
    } else if (kw(a, i, e, K_WITH)) {
        rc = with_stmt(a, i, e);
    } else if (kw(a, i, e, K_INSERT) || kw(a, i, e, K_REPLACE)) {
        a->r.kind = kw(a, i, e, K_INSERT) ? DAL_SQL_INSERT : DAL_SQL_REPLACE;
        rc = insert_stmt(a, i + 1, e);
    } else if (kw(a, i, e, K_UPDATE)) {
        a->r.kind = DAL_SQL_UPDATE;
        rc = update_stmt(a, i + 1, e);
    } else if (kw(a, i, e, K_DELETE)) {
        a->r.kind = DAL_SQL_DELETE;
        rc = delete_stmt(a, i + 1, e);
    } else if (kw_in(a, i, e, ddl)) {
        a->r.kind = DAL_SQL_DDL;
        if (kw(a, i, e, K_CREATE))
            rc = create_stmt(a, i + 1, e);
        else if (kw(a, i, e, K_ALTER))
            rc = alter_stmt(a, i + 1, e);
        else if (kw(a, i, e, K_DROP))
            rc = drop_stmt(a, i + 1, e);
        else if (kw(a, i, e, K_RENAME))
            rc = rename_stmt(a, i + 1, e);
        else /* TRUNCATE [TABLE] t */
            rc = table_name(a, i + 1 + kw(a, i + 1, e, K_TABLE), e, DAL_TREF_DDL) < 0 ? -1 : 0;
    } else if (kw(a, i, e, K_BEGIN)) {
        if (!kw(a, i + 1, e, K_NOT)) /* BEGIN NOT ATOMIC is a compound statement */
            a->r.kind = DAL_SQL_BEGIN;
    } else if (kw(a, i, e, K_START) && kw(a, i + 1, e, K_TRANSACTION)) {
        a->r.kind = DAL_SQL_BEGIN;
        a->r.txn_read_only = read_only_txn(a, i + 2, e);
    } else if (kw(a, i, e, K_COMMIT)) {
        a->r.kind = DAL_SQL_COMMIT;
    } else if (kw(a, i, e, K_ROLLBACK)) {
        j = i + 1 + kw(a, i + 1, e, K_WORK);
        if (!kw(a, j, e, K_TO)) /* ROLLBACK TO SAVEPOINT keeps the transaction */
            a->r.kind = DAL_SQL_ROLLBACK;
    } else if (kw(a, i, e, K_SET)) {
        /* MariaDB's SET STATEMENT var=value [, ...] FOR statement */
        if (kw(a, i + 1, e, K_STATEMENT) && (j = find_kw(a, i + 2, e, forw)) + 1 < e)
            rc = statement(a, j + 1, e);
        else
            a->r.kind = DAL_SQL_SET;
    } else if (kw(a, i, e, K_SHOW)) {
        a->r.kind = DAL_SQL_SHOW;
        rc = show_stmt(a, i + 1, e);
    } else if (kw_in(a, i, e, explain)) {
        rc = explain_stmt(a, i + 1, e);
    } else if (kw(a, i, e, K_TABLE)) {
        j = table_name(a, i + 1, e, DAL_TREF_FROM);
        rc = j < 0 ? -1 : tail_clauses(a, j, e, 0);
    }
    a->depth--;
    return rc || a->failed ? -1 : 0;
}

/* ============================================================ lexing */

static const char *error_what(const char *sql, const dal_token_t *t)
{
    const char *s = sql + t->off;

    if (s[0] == '`')
        return "unterminated quoted identifier";
    if (t->len >= 2 && s[0] == '/' && s[1] == '*') {
        if (t->len >= 3 && (s[2] == '!' || s[2] == 'M'))
            return "unterminated executable comment";
        return t->len >= 3 && s[2] == '+' ? "unterminated hint" : "unterminated comment";
    }
    return "unterminated string";
}

/* Lex the whole input: significant tokens into a->toks, hints aside. */
static int lex_all(an_t *a)
{
    dal_lexer_t lx;
    dal_token_t t, *slot;

    dal_lex_init(&lx, a->sql, a->len);
    for (;;) {
        t = dal_lex_next(&lx);
        switch (t.type) {
        case DAL_TOK_EOF:
            a->tk = a->toks.v;
            a->nt = (int)a->toks.n;
            return 0;
        case DAL_TOK_ERROR:
            return fail(a, t.off, error_what(a->sql, &t));
        case DAL_TOK_COMMENT:
        case DAL_TOK_VC_OPEN:
        case DAL_TOK_VC_CLOSE:
            continue;
        case DAL_TOK_HINT:
            slot = vpush(a, &a->hints_tk, sizeof *slot);
            break;
        default:
            slot = vpush(a, &a->toks, sizeof *slot);
            break;
        }
        if (!slot)
            return -1;
        *slot = t;
    }
}

/* Stored programs contain ';' inside one statement. */
static int compound(const an_t *a)
{
    static const unsigned char bodies[] = {
        K_PROCEDURE, K_FUNCTION, K_TRIGGER, K_EVENT, K_PACKAGE, 0,
    };
    int i;

    if (kw(a, 0, a->nt, K_BEGIN) && kw(a, 1, a->nt, K_NOT))
        return 1;
    if (!kw(a, 0, a->nt, K_CREATE))
        return 0;
    for (i = 1; i < a->nt && i < 16 && !is_p(a, i, a->nt, '('); i++)
        if (kw_in(a, i, a->nt, bodies))
            return 1;
    return 0;
}

/* Find the end of the statement (a top-level ';', after which only more
 * ';' may follow), link parentheses and number the placeholders. */
static int link_tokens(an_t *a)
{
    int *stack, sp = 0, i, k, params = 0, cmp;

    if (!(a->link = scratch(a, (size_t)a->nt * sizeof *a->link + 1)) ||
        !(a->tflag = scratch(a, (size_t)a->nt + 1)) || !(a->kwid = scratch(a, (size_t)a->nt + 1)) ||
        !(a->tscope = scratch(a, (size_t)a->nt * sizeof *a->tscope + 1)) ||
        !(a->param_int = scratch(a, (size_t)a->nt + 1)) ||
        !(stack = scratch(a, (size_t)a->nt * sizeof *stack + 1)))
        return -1;
    memset(a->tflag, 0, (size_t)a->nt);
    memset(a->tscope, 0, (size_t)a->nt * sizeof *a->tscope);
    memset(a->param_int, 0, (size_t)a->nt + 1);
    pthread_once(&kw_once, kw_build);
    for (i = 0; i < a->nt; i++)
        a->kwid[i] = keyword_id(a->sql, &a->tk[i]);
    cmp = compound(a);
    for (i = 0; i < a->nt; i++) {
        a->link[i] = -1;
        if (a->tk[i].type == DAL_TOK_PARAM) {
            uint32_t *po = vpush(a, &a->params, sizeof *po);
            if (!po)
                return -1;
            *po = a->tk[i].off;
            a->link[i] = params++;
        } else if (is_p(a, i, a->nt, '(')) {
            stack[sp++] = i;
        } else if (is_p(a, i, a->nt, ')')) {
            if (sp == 0)
                return fail(a, a->tk[i].off, "unbalanced ')'");
            a->link[i] = stack[--sp];
            a->link[a->link[i]] = i;
        } else if (is_p(a, i, a->nt, ';') && sp == 0 && !cmp) {
            for (k = i + 1; k < a->nt && is_p(a, k, a->nt, ';'); k++)
                ;
            if (k < a->nt)
                a->r.kind = DAL_SQL_MULTI;
            a->nt = i;
            break;
        }
    }
    if (sp > 0)
        return fail(a, a->tk[stack[sp - 1]].off, "unbalanced '('");
    a->r.nparams = (size_t)params;
    return 0;
}

/* ============================================================ hints */

static int hint_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int hint_keych(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

/* One value at p (quoted or bare); stores a scratch copy in *val. */
static const char *hint_value(an_t *a, const char *p, const char *end, char **val)
{
    const char *s = p;
    size_t n;

    if (p < end && (*p == '\'' || *p == '"')) {
        for (s++; s < end; s++) {
            if (*s == '\\' && s + 1 < end)
                s++;
            else if (*s == *p && s + 1 < end && s[1] == *p)
                s++;
            else if (*s == *p)
                break;
        }
        if (s >= end)
            return NULL;
        s++;
        if (!(*val = scratch(a, (size_t)(s - p) + 1)))
            return NULL;
        decode_string(p, (size_t)(s - p), *val, (size_t)(s - p) + 1, &n);
        return s;
    }
    while (s < end && !hint_space(*s) && *s != ',')
        s++;
    if (!(*val = scratch(a, (size_t)(s - p) + 1)))
        return NULL;
    memcpy(*val, p, (size_t)(s - p));
    (*val)[s - p] = '\0';
    return s;
}

/* The keys a dal hint takes, and whether each takes a value. */
static const struct { const char *key; int value; } hint_keys[] = {
    {"shard_value", 1}, {"datasource", 1}, {"server", 1}, {"master", 0}, {"replica", 0},
    {"raw", 0},
};

/* Check the pair just read (the last of a->hints): a known key, given
 * once, with a value exactly when it takes one. */
static int hint_check(an_t *a, size_t at)
{
    const struct dal_sql_hint *h = a->hints.v, *last = &h[a->hints.n - 1];
    char msg[160];
    size_t k;

    for (k = 0; k < sizeof hint_keys / sizeof hint_keys[0]; k++)
        if (strcmp(last->key, hint_keys[k].key) == 0)
            break;
    if (k == sizeof hint_keys / sizeof hint_keys[0]) {
        snprintf(msg, sizeof msg, "dal hint: unknown key '%.40s' (known: shard_value, "
                 "datasource, server, master, replica, raw)", last->key);
        return fail(a, at, msg);
    }
    if (hint_keys[k].value != (last->value[0] != '\0')) {
        snprintf(msg, sizeof msg, hint_keys[k].value ? "dal hint: %s needs a value (%s=...)"
                                                      : "dal hint: %s takes no value%s",
                 last->key, hint_keys[k].value ? last->key : "");
        return fail(a, at, msg);
    }
    for (k = 0; k + 1 < a->hints.n; k++)
        if (strcmp(h[k].key, last->key) == 0) {
            snprintf(msg, sizeof msg, "dal hint: %s given twice", last->key);
            return fail(a, at, msg);
        }
    return 0;
}

/* A hint comment: if its first word is `dal`, its key=value pairs.  A dal
 * hint that does not parse, or asks for what dal does not know, is an
 * error: silently ignoring what the user asked for would be worse. */
static int dal_hint(an_t *a, const dal_token_t *t)
{
    const char *p = a->sql + t->off + 3, *end = a->sql + t->off + t->len - 2, *k;
    struct dal_sql_hint *h;
    int first = 1;

    while (p < end && hint_space(*p))
        p++;
    if (end - p < 3 || strncasecmp(p, "dal", 3) != 0 || (end - p > 3 && !hint_space(p[3])))
        return 0;
    for (p += 3;;) {
        while (p < end && (hint_space(*p) || *p == ','))
            p++;
        if (p >= end)
            return 0;
        for (k = p; p < end && hint_keych(*p); p++)
            ;
        if (p == k)
            return fail(a, (size_t)(p - a->sql), "malformed dal hint");
        if (!(h = vpush(a, &a->hints, sizeof *h)) || !(h->key = scratch(a, (size_t)(p - k) + 1)))
            return -1;
        h->off = first ? t->off : t->off + t->len;
        h->len = first ? t->len : 0;
        first = 0;
        memcpy(h->key, k, (size_t)(p - k));
        h->key[p - k] = '\0';
        if (p < end && *p == '=') {
            const char *v = p + 1;
            if (!(p = hint_value(a, v, end, &h->value)))
                return a->failed ? -1 : fail(a, (size_t)(v - a->sql), "malformed dal hint");
        } else if (p < end && !hint_space(*p) && *p != ',') {
            return fail(a, (size_t)(p - a->sql), "malformed dal hint");
        } else if (!(h->value = scratch(a, 1))) {
            return -1;
        } else {
            h->value[0] = '\0';
        }
        if (hint_check(a, (size_t)(k - a->sql)))
            return -1;
    }
}

/* ============================================================ finishing */

/* What the qualifier q names in scope sc or the scopes around it, as SQL
 * resolves it: the index of a table reference named q without an alias,
 * or -1 (an alias, a derived table, a common table expression, or nothing
 * dal knows: the qualifier stays as written). */
static long resolve_qualifier(const an_t *a, int sc, const char *q)
{
    const struct dal_sql_tref *t = a->trefs.v;
    const struct dal_sql_source *src = a->sources.v;
    const struct dal_sql_scope *scopes = a->scopes.v;
    int select_seen = 0;
    size_t k;

    for (; sc >= 0; sc = scopes[sc].parent) {
again:
        for (k = 0; k < a->trefs.n; k++) {
            if (t[k].scope != sc)
                continue;
            if (t[k].alias ? ascii_casecmp(t[k].alias, q) == 0 : ascii_casecmp(t[k].name, q) == 0)
                return t[k].alias ? -1 : (long)k;
        }
        for (k = 0; k < a->sources.n; k++)
            if (src[k].scope == sc && ascii_casecmp(src[k].name, q) == 0)
                return -1;
        /* ON DUPLICATE KEY UPDATE of INSERT ... SELECT sees the SELECT's tables */
        if (sc == 0 && !select_seen && a->r.insert_select && a->scopes.n > 1 &&
            scopes[1].parent == 0) {
            select_seen = 1;
            sc = 1;
            goto again;
        }
    }
    return -1;
}

/* Qualified column references whose qualifier names a table (not an
 * alias) in their scope. */
static int find_colrefs(an_t *a)
{
    char buf[256];
    int i, e = a->nt;
    size_t n;
    long k;

    if (a->trefs.n == 0)
        return 0;
    for (i = 0; i + 2 < e; i++) {
        struct dal_sql_colref *c;
        if (!is_name(a, i, e) || (a->tflag[i] & TF_TABLE) || !is_p(a, i + 1, e, '.') ||
            !(is_name(a, i + 2, e) || is_op(a, i + 2, e, "*")) || is_p(a, i + 3, e, '.') ||
            is_p(a, i + 3, e, '(') || (i > 0 && is_p(a, i - 1, e, '@')))
            continue;
        n = dal_ident_unquote(a->sql, &a->tk[i], buf, sizeof buf);
        if (n >= sizeof buf || (k = resolve_qualifier(a, a->tscope[i], buf)) < 0)
            continue;
        if (!(c = vpush(a, &a->colrefs, sizeof *c)))
            return -1;
        c->off = a->tk[i].off;
        c->len = a->tk[i].len;
        c->tref = (size_t)k;
        /* db.q.col: the schema goes, as it goes in front of the table */
        if (i >= 2 && is_p(a, i - 1, e, '.') && is_name(a, i - 2, e) &&
            !(i >= 3 && is_p(a, i - 3, e, '.'))) {
            c->qual_off = a->tk[i - 2].off;
            c->qual_len = a->tk[i].off - c->qual_off;
        }
    }
    return 0;
}

static int cmp_tref(const void *x, const void *y)
{
    const struct dal_sql_tref *p = x, *q = y;
    return (p->off > q->off) - (p->off < q->off);
}

/* References to common table expressions are not tables: they become
 * sources of their scope.  The rest are put in text order. */
static int tidy_trefs(an_t *a)
{
    struct dal_sql_tref *t = a->trefs.v;
    char **cte = a->ctes.v;
    size_t i, k, n = 0;

    for (i = 0; i < a->trefs.n; i++) {
        int is_cte = 0;
        for (k = 0; k < a->ctes.n && t[i].qual_len == 0; k++)
            if (ascii_casecmp(t[i].name, cte[k]) == 0)
                is_cte = 1;
        if (is_cte) {
            struct dal_sql_source *s = vpush(a, &a->sources, sizeof *s);
            if (!s)
                return -1;
            s->name = t[i].alias ? t[i].alias : t[i].name;
            s->scope = t[i].scope;
        } else {
            t[n++] = t[i];
        }
    }
    a->trefs.n = n;
    if (n > 1)
        qsort(t, n, sizeof *t, cmp_tref);
    return 0;
}

/* Functions whose result depends on, or changes, state that only one
 * server holds (the session's last insert id and row counts, named locks,
 * sequences): a SELECT calling one must not go to a replica. */
static const char *const master_functions[] = {
    "LAST_INSERT_ID", "GET_LOCK", "RELEASE_LOCK", "RELEASE_ALL_LOCKS", "IS_FREE_LOCK",
    "IS_USED_LOCK", "NEXTVAL", "LASTVAL", "SETVAL", "FOUND_ROWS", "ROW_COUNT", NULL
};

static int calls_master_function(const an_t *a)
{
    const char *const *f;
    int i;

    for (i = 0; i < a->nt; i++) {
        const dal_token_t *t = &a->tk[i];
        if (t->type != DAL_TOK_IDENT)
            continue;
        /* NEXT VALUE FOR seq, PREVIOUS VALUE FOR seq */
        if ((dal_tok_eq(a->sql, t, "NEXT") || dal_tok_eq(a->sql, t, "PREVIOUS")) &&
            kw(a, i + 1, a->nt, K_VALUE) && kw(a, i + 2, a->nt, K_FOR))
            return 1;
        if (!is_p(a, i + 1, a->nt, '('))
            continue;
        for (f = master_functions; *f; f++)
            if (dal_tok_eq(a->sql, t, *f))
                return 1;
    }
    return 0;
}

static int analyse(an_t *a)
{
    size_t i;

    if (lex_all(a) || link_tokens(a))
        return -1;
    for (i = 0; i < a->hints_tk.n; i++)
        if (dal_hint(a, (dal_token_t *)a->hints_tk.v + i))
            return -1;
    if (new_scope(a, DAL_SCOPE_STATEMENT, 0, 0) < 0) /* scope 0, always there */
        return -1;
    ((struct dal_sql_scope *)a->scopes.v)[0].parent = -1;
    if (a->r.kind == DAL_SQL_MULTI)
        return 0;
    if (a->nt == 0)
        return fail(a, a->len, "empty statement");
    if (statement(a, 0, a->nt) || tidy_trefs(a))
        return -1;
    if (a->r.kind == DAL_SQL_SELECT)
        a->r.needs_master = calls_master_function(a);
    return find_colrefs(a);
}

/* ------------------------------------------------------- the result block */

typedef struct out {
    char *base; /* NULL while measuring */
    size_t used;
} out_t;

static void *put(out_t *o, const void *src, size_t n)
{
    size_t at = (o->used + 7) & ~(size_t)7;

    o->used = at + n;
    if (!o->base || n == 0)
        return NULL;
    memcpy(o->base + at, src, n);
    return o->base + at;
}

/* n bytes of (not NUL-terminated) text and a NUL. */
static char *put_text(out_t *o, const char *src, size_t n)
{
    size_t at = (o->used + 7) & ~(size_t)7;

    o->used = at + n + 1;
    if (!o->base)
        return NULL;
    if (n)
        memcpy(o->base + at, src, n);
    o->base[at + n] = '\0';
    return o->base + at;
}

static char *put_str(out_t *o, const char *s)
{
    return s ? put(o, s, strlen(s) + 1) : NULL;
}

static char **put_strs(out_t *o, const vec_t *v)
{
    char **dst = put(o, v->v, v->n * sizeof(char *)), **src = v->v;
    size_t i;

    for (i = 0; i < v->n; i++) {
        char *s = put_str(o, src[i]);
        if (dst)
            dst[i] = s;
    }
    return dst;
}

/* Copy (or, with o->base NULL, measure) the result: the dal_sql_t, the text,
 * then every array and string.  Returns the dal_sql_t when copying. */
static dal_sql_t *emit(an_t *a, out_t *o)
{
    dal_sql_t *s = put(o, &a->r, sizeof a->r);
    char *text = put_text(o, a->sql, a->len);
    struct dal_sql_tref *tr = put(o, a->trefs.v, a->trefs.n * sizeof *tr);
    struct dal_sql_colref *cr = put(o, a->colrefs.v, a->colrefs.n * sizeof *cr);
    struct dal_sql_hint *hi = put(o, a->hints.v, a->hints.n * sizeof *hi);
    struct dal_sql_cond *co = put(o, a->conds.v, a->conds.n * sizeof *co);
    struct dal_sql_row *ro = put(o, a->rows.v, a->rows.n * sizeof *ro);
    struct dal_sql_item *it = put(o, a->items.v, a->items.n * sizeof *it);
    struct dal_sql_order *ob = put(o, a->order.v, a->order.n * sizeof *ob);
    struct dal_sql_order *gb = put(o, a->group.v, a->group.n * sizeof *gb);
    char **cols = put_strs(o, &a->columns), **sets = put_strs(o, &a->setcols);
    uint32_t *po = put(o, a->params.v, a->params.n * sizeof *po);
    struct dal_sql_scope *sc = put(o, a->scopes.v, a->scopes.n * sizeof *sc);
    struct dal_sql_source *so = put(o, a->sources.v, a->sources.n * sizeof *so);
    unsigned char *pi = NULL;
    size_t i;

    for (i = 0; i < a->params.n; i++)
        if (a->param_int[i]) {
            pi = put(o, a->param_int, a->params.n);
            break;
        }

#define STR(arr, field, srcv, type)                                                          \
    for (i = 0; i < (srcv).n; i++) {                                                         \
        char *p_ = put_str(o, ((type *)(srcv).v)[i].field);                                   \
        if (arr)                                                                             \
            (arr)[i].field = p_;                                                             \
    }
    STR(tr, name, a->trefs, struct dal_sql_tref)
    STR(tr, alias, a->trefs, struct dal_sql_tref)
    STR(hi, key, a->hints, struct dal_sql_hint)
    STR(hi, value, a->hints, struct dal_sql_hint)
    STR(co, column, a->conds, struct dal_sql_cond)
    STR(co, qualifier, a->conds, struct dal_sql_cond)
    STR(co, column2, a->conds, struct dal_sql_cond)
    STR(co, qualifier2, a->conds, struct dal_sql_cond)
    STR(so, name, a->sources, struct dal_sql_source)
    STR(it, alias, a->items, struct dal_sql_item)
    STR(ob, column, a->order, struct dal_sql_order)
    STR(gb, column, a->group, struct dal_sql_order)
#undef STR
    for (i = 0; i < a->conds.n; i++) {
        const struct dal_sql_cond *c = (const struct dal_sql_cond *)a->conds.v + i;
        dal_sql_opnd_t *v = put(o, c->vals, c->nvals * sizeof *v);
        if (co)
            co[i].vals = v;
    }
    for (i = 0; i < a->rows.n; i++) {
        const struct dal_sql_row *r = (const struct dal_sql_row *)a->rows.v + i;
        dal_sql_opnd_t *v = put(o, r->vals, r->nvals * sizeof *v);
        if (ro)
            ro[i].vals = v;
    }
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    atomic_init(&s->norm, NULL);
    atomic_init(&s->names, NULL);
    atomic_init(&s->route_memo, 0);
    atomic_init(&s->fill, NULL);
    atomic_init(&s->edits, NULL);
    s->text = text;
    s->len = a->len;
    s->trefs = tr;       s->ntrefs = a->trefs.n;
    s->colrefs = cr;     s->ncolrefs = a->colrefs.n;
    s->hints = hi;       s->nhints = a->hints.n;
    s->conds = co;       s->nconds = a->conds.n;
    s->rows = ro;        s->nrows = a->rows.n;
    s->items = it;       s->nitems = a->items.n;
    s->order_by = ob;    s->norder_by = a->order.n;
    s->group_by = gb;    s->ngroup_by = a->group.n;
    s->columns = cols;   s->ncolumns = a->columns.n;
    s->set_columns = sets; s->nset_columns = a->setcols.n;
    s->param_offs = po;
    s->param_int = pi;
    s->scopes = sc;      s->nscopes = a->scopes.n;
    s->sources = so;     s->nsources = a->sources.n;
    return s;
}

int dal_sql_analyse(const char *sql, size_t len, dal_sql_t **out, char *errbuf, size_t errcap)
{
    union { max_align_t align; char b[SCRATCH_STACK]; } stack;
    an_t a;
    out_t o = {NULL, 0};
    int rc = -1;

    *out = NULL;
    memset(&a, 0, sizeof a);
    a.sql = sql;
    a.len = len;
    a.errbuf = errbuf;
    a.errcap = errcap;
    a.sc.cur = stack.b;
    a.sc.left = sizeof stack.b;
    a.sc.grow = 4 * sizeof stack.b;
    a.r.kind = DAL_SQL_OTHER;
    if (errcap > 0)
        errbuf[0] = '\0';
    if (len > INT32_MAX) {
        fail(&a, 0, "statement too long");
        goto done;
    }
    if (analyse(&a))
        goto done;
    emit(&a, &o);
    if (!(o.base = malloc(o.used))) {
        oom(&a);
        goto done;
    }
    o.used = 0;
    *out = emit(&a, &o);
    rc = 0;
done:
    scratch_free(&a.sc);
    return rc;
}

void dal_sql_free(dal_sql_t *s)
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

DAL_HOT
const dal_sql_t *dal_sql_ref(const dal_sql_t *s)
{
    /* The object is never const where it was allocated; only the count
     * changes, and it is atomic. */
    atomic_fetch_add_explicit(&((dal_sql_t *)s)->refs, 1, memory_order_relaxed);
    return s;
}

DAL_HOT
void dal_sql_unref(const dal_sql_t *s)
{
    dal_sql_t *m = (dal_sql_t *)s;

    if (m && atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
        dal_sql_free(m);
}

const char *dal_sql_kind_name(dal_sql_kind_t kind)
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
        int hi = dal_hexval(b[0]), lo = dal_hexval(b[1]);
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
static int decode_string(const char *t, size_t n, char *out, size_t cap, size_t *outlen)
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

int dal_sql_literal_text(const char *sql, const dal_sql_opnd_t *o, char *out, size_t cap,
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
        return decode_string(t, o->len, out, cap, outlen);
    /* a number (maybe "- 12") or NULL/TRUE/FALSE: the text without blanks
     * and without a unary plus */
    for (i = 0; i < o->len; i++)
        if (!hint_space(t[i]) && !(i == 0 && t[i] == '+'))
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
    _Alignas(64) pthread_mutex_t mu; /* own cache line: no false sharing */
    uint64_t hits, misses;
};

struct dal_sql_cache {
    size_t nsets; /* a power of two */
    struct set *sets;
    struct stripe stripes[STRIPES];
};

/* A 64-bit hash eight bytes at a time (multiply-xorshift mixing), fast on
 * short statements where a byte-wise FNV would dominate a cache hit. */
DAL_HOT
static uint64_t hash_text(const char *p, size_t n)
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

dal_sql_cache_t *dal_sql_cache_new(size_t capacity)
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
    for (i = 0; i < STRIPES; i++)
        pthread_mutex_init(&c->stripes[i].mu, NULL);
    return c;
}

DAL_HOT
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

DAL_HOT
const dal_sql_t *dal_sql_cache_get(dal_sql_cache_t *c, const char *sql, size_t len,
                                   char *errbuf, size_t errcap)
{
    uint64_t h = hash_text(sql, len);
    size_t si = (size_t)h & (c->nsets - 1);
    struct set *st = &c->sets[si];
    struct stripe *sp = &c->stripes[si % STRIPES];
    dal_sql_t *s, *fresh, *old = NULL;

    pthread_mutex_lock(&sp->mu);
    if ((s = set_find(st, h, sql, len)) != NULL) {
        sp->hits++;
        dal_sql_ref(s);
        pthread_mutex_unlock(&sp->mu);
        return s;
    }
    sp->misses++;
    pthread_mutex_unlock(&sp->mu);

    /* analyse without the lock: it is the slow part */
    if (dal_sql_analyse(sql, len, &fresh, errbuf, errcap) != 0)
        return NULL;
    pthread_mutex_lock(&sp->mu);
    if ((s = set_find(st, h, sql, len)) != NULL) { /* another thread was faster */
        dal_sql_ref(s);
    } else {
        s = fresh;
        fresh = NULL;
        dal_sql_ref(s); /* one for the cache, one for the caller */
        old = set_insert(st, h, s);
    }
    pthread_mutex_unlock(&sp->mu);
    dal_sql_free(fresh);
    dal_sql_unref(old);
    return s;
}

void dal_sql_cache_stats(dal_sql_cache_t *c, uint64_t *hits, uint64_t *misses)
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

void dal_sql_cache_free(dal_sql_cache_t *c)
{
    size_t i;
    int k;

    if (!c)
        return;
    for (i = 0; i < c->nsets; i++)
        for (k = 0; k < WAYS; k++)
            dal_sql_unref(c->sets[i].slot[k].sql);
    for (k = 0; k < STRIPES; k++)
        pthread_mutex_destroy(&c->stripes[k].mu);
    free(c->sets);
    free(c);
}

/* The statement kind as a lower-case word: dal_plan_kind and monitor events. */
const char *dal_sql_kind_word(dal_sql_kind_t k)
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

