/*
 * sql_int.h -- the statement analyser's insides, shared by its files.
 *
 * The analyser (sql.h's sql_analyse) is a recursive-descent pass over
 * the statement's tokens, in several files by grammar level: sql_query.c
 * (query blocks: table lists, conditions, clauses, SELECT), sql_stmt.c
 * (INSERT, UPDATE, DELETE, DDL and the statement itself), sql_hint.c (dal
 * hints) and sql_analyse.c (scratch memory, keywords, operands; tokens in,
 * the finished dal_sql_t out).  Internal to those files: an_
 * names are not part of the core's interface.
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
#ifndef DAL_CORE_SQL_INT_H
#define DAL_CORE_SQL_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sql.h"

enum {
    MAX_DEPTH = 64,      /* nested queries and joins, statements in statements */
    MAX_COND_DEPTH = 16, /* parenthesised AND groups searched for conditions */
    SCRATCH_STACK = 8192,
    FILL_HEAD = 1,       /* record items, FROM, WHERE, GROUP BY, HAVING */
    FILL_TAIL = 2,       /* record ORDER BY, LIMIT, locking */
    FILL_ALL = 3,
    TF_TABLE = 1,        /* token flag: part of a table name */
};

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

/* A growable array in the scratch arena.  Growing copies; the old copy is
 * simply left behind, which wastes at most as much as is in use. */
typedef struct vec {
    void *v;
    size_t n, cap;
} vec_t;

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

/* NULL, TRUE, FALSE: words that are literals. */
extern const unsigned char an_literal_words[];

/* Build the keyword table (once; thread-safe). */
void an_keywords_init(void);

/* ------------------------------------------------------- token tests */

static inline int kw(const an_t *a, int i, int e, unsigned char k)
{
    return i < e && a->kwid[i] == k;
}

/* kw() for any word of a 0-terminated list. */
static inline int kw_in(const an_t *a, int i, int e, const unsigned char *list)
{
    if (i >= e || a->kwid[i] == K_NONE)
        return 0;
    for (; *list; list++)
        if (a->kwid[i] == *list)
            return 1;
    return 0;
}

static inline int is_op(const an_t *a, int i, int e, const char *op)
{
    size_t n = strlen(op);
    return i < e && a->tk[i].type == DAL_TOK_PUNCT && a->tk[i].len == n &&
           memcmp(a->sql + a->tk[i].off, op, n) == 0;
}

static inline int is_p(const an_t *a, int i, int e, char c)
{
    return i < e && a->tk[i].type == DAL_TOK_PUNCT && a->tk[i].len == 1 &&
           a->sql[a->tk[i].off] == c;
}

static inline int is_name(const an_t *a, int i, int e)
{
    return i < e && (a->tk[i].type == DAL_TOK_IDENT || a->tk[i].type == DAL_TOK_QIDENT);
}

static inline int is_type(const an_t *a, int i, int e, dal_tok_type_t t)
{
    return i < e && a->tk[i].type == t;
}

static inline uint32_t tend(const an_t *a, int i)
{
    return a->tk[i].off + a->tk[i].len;
}

/* The token after the one at i, jumping over a parenthesised group. */
static inline int next_tok(const an_t *a, int i)
{
    return is_p(a, i, a->nt, '(') ? a->link[i] + 1 : i + 1;
}

/* The next ',' at the top level of [i,e), or e. */
static inline int comma_end(const an_t *a, int i, int e)
{
    while (i < e && !is_p(a, i, e, ','))
        i = next_tok(a, i);
    return i;
}

/* The first top-level word of list in [i,e), or e. */
static inline int find_kw(const an_t *a, int i, int e, const unsigned char *list)
{
    while (i < e && !kw_in(a, i, e, list))
        i = next_tok(a, i);
    return i;
}

/* '(' at i opens a subquery: its first token is SELECT or WITH. */
static inline int subquery_at(const an_t *a, int i, int e)
{
    return is_p(a, i, e, '(') &&
           (kw(a, i + 1, a->link[i], K_SELECT) || kw(a, i + 1, a->link[i], K_WITH));
}

/* '(' at i holds a query expression, maybe behind more '(': the test for a
 * table factor or INSERT source, where ((SELECT ..) UNION (SELECT ..)) is a
 * query but in an expression would be an operand. */
static inline int query_inside(const an_t *a, int i, int e)
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

/* ------------------------------------------------------- scratch, errors, keywords, operands (sql_analyse.c) */

int an_oom(an_t *a);
void *an_scratch(an_t *a, size_t n);
int an_fail(an_t *a, size_t off, const char *what);
char *an_tok_name(an_t *a, int i);
int an_ascii_casecmp(const char *x, const char *y);
char *an_alias_text(an_t *a, int i);
int an_operand_list(an_t *a, int s, int e, dal_sql_opnd_t **vals, size_t *n);
void *an_vpush(an_t *a, vec_t *v, size_t esz);
dal_sql_opnd_t an_operand(const an_t *a, int s, int e);
unsigned char an_keyword_id(const char *sql, const dal_token_t *t);
int an_push_str(an_t *a, vec_t *v, char *s);
void an_scratch_free(scratch_t *sc);

/* ------------------------------------------------------- query blocks (sql_query.c) */

int an_table_name(an_t *a, int i, int e, int role);
int an_colref_end(const an_t *a, int i, int e);
void an_split_clauses(const an_t *a, int i, int e, unsigned mask, seg_t *sg);
int an_qname(const an_t *a, int i, int e, int *qual, int *name);
int an_query(an_t *a, int i, int e, int fill, int kind);
int an_table_list(an_t *a, int i, int e, int role);
int an_scan_expr(an_t *a, int i, int e);
int an_add_tref(an_t *a, int qual, int name, int role, int alias);
int an_clauses(an_t *a, const seg_t *sg, int fill);
int an_ctes(an_t *a, int i, int e);
int an_new_scope(an_t *a, int kind, int i, int e);
int an_tail_clauses(an_t *a, int i, int e, int fill);

/* ------------------------------------------------------- statements (sql_stmt.c) */

int an_statement(an_t *a, int i, int e);

/* 1 when the tokens from i start a compound statement outside a stored
 * program: [label:] BEGIN NOT ATOMIC, FOR, WHILE, LOOP, REPEAT, or IF or
 * CASE as statements.  Its body has ';' of its own. */
int an_block_start(const an_t *a, int i, int e);

/* ------------------------------------------------------- hints (sql_hint.c) */

/* The dal hint in comment token t, if its first word is `dal`: its pairs
 * into a->hints, checked; -1 (a->errbuf says why) if it is malformed. */
int an_hint(an_t *a, const dal_token_t *t);

#endif /* DAL_CORE_SQL_INT_H */
