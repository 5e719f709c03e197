/*
 * sql.h - statement analysis: what one SQL statement is and what it touches.
 *
 * sql_analyse() lexes and analyses one statement into an immutable
 * dal_sql_t: its kind, the tables it names, the conditions of its WHERE
 * clause that can pick a shard, the rows of an INSERT, the shape of a SELECT
 * that a merger needs, and the dal hints it carries.  Everything refers to
 * the statement by byte spans (offset, length) into the dal_sql_t's own copy
 * of the text, so a rewriter can build new SQL by copying spans.
 *
 * A dal_sql_t is one block of memory and never changes after analysis, so it
 * can be cached and read by many threads at once.  Its lifetime is managed by
 * an atomic reference count (sql_ref / sql_unref).
 *
 * The analyser recognises what dal needs and scans everything else only for
 * subqueries, so that no table is missed; it does not validate SQL.  Known
 * limits, all on the safe side for routing:
 *  - executable comments are analysed whatever their version, so a table or
 *    ? inside one the server would skip is still counted;
 *  - a span may begin or end inside an executable comment (copy whole
 *    spans between rewritten tokens and the text stays intact);
 *  - stored-program bodies (CREATE PROCEDURE ..., BEGIN NOT ATOMIC) are one
 *    statement with no table references.
 *
 * Internal header: core code reads the fields directly.  Nothing here is
 * part of the public API.
 */
#ifndef DAL_SQL_H
#define DAL_SQL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sql_lex.h"

typedef enum dal_sql_kind {
    DAL_SQL_SELECT,   /* also WITH ... SELECT and ( SELECT ... ) */
    DAL_SQL_INSERT,
    DAL_SQL_REPLACE,
    DAL_SQL_UPDATE,   /* also WITH ... UPDATE */
    DAL_SQL_DELETE,   /* also WITH ... DELETE */
    DAL_SQL_DDL,      /* CREATE / ALTER / DROP / TRUNCATE / RENAME */
    DAL_SQL_BEGIN,    /* BEGIN [WORK], START TRANSACTION ... */
    DAL_SQL_COMMIT,
    DAL_SQL_ROLLBACK, /* ROLLBACK [WORK]; ROLLBACK TO SAVEPOINT is OTHER */
    DAL_SQL_SET,
    DAL_SQL_SHOW,
    DAL_SQL_OTHER,    /* EXPLAIN, DESCRIBE, CALL, USE, SAVEPOINT, TABLE, VALUES ... */
    DAL_SQL_MULTI     /* more than one statement: callers refuse it */
} dal_sql_kind_t;

/* ------------------------------------------------------------- operands */

typedef enum dal_opnd_kind {
    DAL_OPND_PARAM,   /* a ? placeholder */
    DAL_OPND_LITERAL, /* a string, a number (maybe negative), NULL, TRUE or FALSE */
    DAL_OPND_EXPR     /* anything else: NOW(), 1+2, a column, a subquery ... */
} dal_opnd_kind_t;

typedef struct dal_sql_opnd {
    dal_opnd_kind_t kind;
    uint32_t off, len;       /* span in the text */
    int param_index;         /* PARAM: 0-based index of the ? in the statement; else -1 */
    dal_tok_type_t lit_type; /* LITERAL: DAL_TOK_STRING, _NUMBER or _IDENT (NULL/TRUE/FALSE) */
    int negative;            /* LITERAL number preceded by a unary minus (inside the span) */
    int no_backslash;        /* LITERAL string read under NO_BACKSLASH_ESCAPES: its
                                backslashes are bytes of the value */
} dal_sql_opnd_t;

/* -------------------------------------------------------- table references */

typedef enum dal_tref_role {
    DAL_TREF_FROM,   /* read: FROM lists, JOINs, subqueries, LIKE t, REFERENCES t, DESCRIBE t */
    DAL_TREF_INTO,   /* INSERT / REPLACE target */
    DAL_TREF_UPDATE, /* every table in an UPDATE's table list */
    DAL_TREF_DELETE, /* the table(s) a DELETE removes rows from */
    DAL_TREF_DDL     /* the object of CREATE / ALTER / DROP / TRUNCATE / RENAME */
} dal_tref_role_t;

struct dal_sql_tref {
    uint32_t off, len;           /* span of the table name token */
    uint32_t qual_off, qual_len; /* span of "schema." (dot included); qual_len 0 if none */
    char *name;                  /* unquoted name; owned by the dal_sql_t */
    char *alias;                 /* unquoted alias or NULL; owned by the dal_sql_t */
    int role;                    /* a dal_tref_role_t */
    int scope;                   /* index into scopes of the query block naming it */
    int null_side;               /* on the side of an outer join that may be all NULL */
};

/* ---------------------------------------------------------------- scopes */

/*
 * Every query block is a scope: the statement itself (scope 0: the tables
 * of an UPDATE, DELETE, INSERT or DDL), each SELECT -- the top one, each
 * arm of a set operation, each subquery, derived table and common table
 * expression.  A table reference, a condition and a qualified column
 * belong to the scope whose text holds them; a column resolves to a table
 * of its own scope first, then of the enclosing ones, as SQL resolves it.
 */
typedef enum dal_scope_kind {
    DAL_SCOPE_STATEMENT, /* scope 0 */
    DAL_SCOPE_TOP,       /* the outermost SELECT, each arm of a top-level set operation,
                            the SELECT of INSERT ... SELECT */
    DAL_SCOPE_DERIVED,   /* a derived table: FROM (SELECT ...) alias */
    DAL_SCOPE_SUBQUERY,  /* a subquery in an expression: IN, EXISTS, scalar, ANY/ALL */
    DAL_SCOPE_CTE        /* the body of WITH name AS (...) */
} dal_scope_kind_t;

struct dal_sql_scope {
    int parent;     /* enclosing scope, -1 for scope 0 */
    int kind;       /* a dal_scope_kind_t */
    int rowwise;    /* its rows are each made of one row of its sources: no GROUP BY,
                       aggregate, DISTINCT, HAVING, LIMIT, window or set operation
                       other than UNION ALL, so running it on parts of a table and
                       concatenating gives what it gives on the whole table */
    int null_side;  /* a derived table on the NULL side of an outer join */
};

/* A name a qualifier can refer to that is not a table dal routes: the alias
 * of a derived table or table function, or a common table expression used
 * as a table.  Its columns are unknown to dal. */
struct dal_sql_source {
    char *name;     /* unquoted; owned by the dal_sql_t */
    int scope;
};

/* A qualified column reference `q.col` (or `db.q.col`) whose qualifier q
 * resolves, in the scope holding it, to a table reference named q that has
 * no alias: a rewriter renaming that table renames the qualifier too (and
 * drops the schema).  A qualifier naming an alias stays as written. */
struct dal_sql_colref {
    uint32_t off, len;           /* span of the qualifier token q */
    uint32_t qual_off, qual_len; /* span of "db." before q (dot included); qual_len 0 if none */
    size_t tref;                 /* index into trefs of the table q names */
};

/* ------------------------------------------------------------ conditions */

typedef enum dal_cond_op {
    DAL_COND_EQ, DAL_COND_IN, DAL_COND_BETWEEN,
    DAL_COND_LT, DAL_COND_LE, DAL_COND_GT, DAL_COND_GE,
    DAL_COND_COLEQ   /* col = col2: two columns equal (a join), no values */
} dal_cond_op_t;

/* One conjunct of a WHERE or of an inner join's ON, in any scope: `col op
 * value` (or `value op col`, stored flipped), `col IN (v, ...)`, `col
 * BETWEEN a AND b`, or `col = col2`.  The ON of an outer join gives only
 * `col = col2` (its other conditions do not remove rows of the preserved
 * side).  A column USING (col) joins gives COLEQ with qualifier NULL for
 * the left side: any table of the scope before `using_off`. */
struct dal_sql_cond {
    char *column;          /* unquoted, qualifier dropped; owned by the dal_sql_t */
    char *qualifier;       /* the table or alias part, unquoted, or NULL; owned */
    dal_cond_op_t op;
    dal_sql_opnd_t *vals;  /* EQ/LT/..: 1, IN: n, BETWEEN: 2; owned by the dal_sql_t */
    size_t nvals;
    uint32_t off, len;     /* span of the whole condition */
    int scope;             /* index into scopes */
    char *column2;         /* COLEQ: the other column, unquoted; owned */
    char *qualifier2;      /* COLEQ: its qualifier or NULL; owned */
    uint32_t using_off;    /* COLEQ from USING: offset of the USING keyword; else 0 */
};

/* --------------------------------------------------------------- INSERT */

struct dal_sql_row {
    uint32_t off, len;     /* span of "( ... )"; for INSERT ... SET the assignment list */
    dal_sql_opnd_t *vals;  /* one operand per value; owned by the dal_sql_t */
    size_t nvals;
};

/* --------------------------------------------------------------- SELECT */

typedef enum dal_agg {
    DAL_AGG_NONE,
    DAL_AGG_COUNT,          /* COUNT(x) or COUNT(*) */
    DAL_AGG_COUNT_DISTINCT, /* COUNT(DISTINCT x) */
    DAL_AGG_SUM,
    DAL_AGG_MIN,
    DAL_AGG_MAX,
    DAL_AGG_AVG,
    DAL_AGG_OTHER_FUNC      /* an aggregate that cannot be merged by the above rules:
                               GROUP_CONCAT, STDDEV, SUM(DISTINCT), a window function,
                               or an expression containing an aggregate (SUM(a)/COUNT(*)) */
} dal_agg_t;

struct dal_sql_item {
    uint32_t off, len;         /* span of the expression (alias excluded) */
    char *alias;               /* the alias (after AS or bare) or NULL; owned */
    dal_agg_t agg;             /* set only when the item is exactly one aggregate call */
    uint32_t arg_off, arg_len; /* span inside the parentheses, DISTINCT excluded */
    int star;                  /* the item is * or t.* */
    dal_sql_opnd_t value;      /* the expression as an operand: a literal or ?, else EXPR */
    char *column;              /* the expression is a plain (maybe qualified) column: its
                                  name, unquoted; else NULL; owned */
    char *qualifier;           /* that column's table or alias part, or NULL; owned */
};

/* An ORDER BY or GROUP BY item. */
struct dal_sql_order {
    uint32_t off, len; /* span of the expression (ASC/DESC excluded) */
    int desc;
    char *column;      /* unquoted column name if the expression is a plain
                          (maybe qualified) column, else NULL; owned */
    int position;      /* ORDER BY 2 -> 2, else 0 */
};

/* --------------------------------------------------------------- hints */

/* One key=value of a hint comment opened by slash-star-plus followed by the
 * word `dal`.  Other (optimizer) hints are not recorded.  The keys are
 * checked by the analyser: an unknown key, a key given twice, a value
 * where none is taken or none where one is needed fails the analysis. */
struct dal_sql_hint {
    char *key;         /* owned by the dal_sql_t */
    char *value;       /* quotes removed; "" for a bare key; owned by the dal_sql_t */
    uint32_t off, len; /* what to cut to remove the hint comment from the SQL: the
                          first pair of a comment has the comment's span, later
                          pairs of the same comment an empty span at its end, so
                          cutting every span removes each comment once */
};

/* ------------------------------------------------------------ the result */

struct dal_sql_names; /* merge.h */

/* Something another module derived from a statement once and keeps with
 * it: embedded first in that module's struct, destroyed with the
 * statement. */
typedef struct dal_sql_ext {
    void (*destroy)(struct dal_sql_ext *e);
} dal_sql_ext_t;

/* All pointers point into the same block as the dal_sql_t and are owned by
 * it.  Offsets are into `text`.  A span with len 0 means "absent" unless
 * stated otherwise. */
typedef struct dal_sql {
    atomic_uint refs;       /* managed by sql_ref/unref; do not touch */
    _Atomic(char *) norm;   /* owned, made on first use: the text with literals as ?
                               (monitor.c, sql_normalized); NULL until then */
    _Atomic uint64_t route_memo; /* how the last snapshot routed it, when one condition
                               decides (route.c); 0: none */
    _Atomic(dal_sql_ext_t *) fill; /* owned, made on first use: how its INSERT gets
                               generated IDs (idfill.c); NULL until then */
    _Atomic(struct dal_sql_names *) names; /* owned, one block, made on first use: the
                               column names a one-node SELECT shows (merge.c,
                               merge_cached_names); NULL until then */
    _Atomic(dal_sql_ext_t *) edits; /* owned, made on first use: the statement's own
                               edits in text order (rewrite.c); NULL until then */
    atomic_int sprep_state;     /* whether it may run as a server-side prepared
                               statement, judged on first use (sprep.c); 0 until then */
    atomic_int shape_state;     /* whether, as a text statement's shape, it may stand for
                               the statements of that shape, judged on first use
                               (sql_shape.c); 0 until then */

    const char *text;       /* own copy of the statement, NUL-terminated */
    int no_backslash;       /* text was read as under sql_mode NO_BACKSLASH_ESCAPES
                               (sql_analyse): lex it again the same way */
    size_t len;             /* bytes of text, NUL excluded */
    size_t size;            /* bytes of the block the dal_sql_t heads (text and every
                               array of the analysis; not what is made on first use) */
    dal_sql_kind_t kind;
    size_t nparams;         /* ? placeholders outside strings and comments */
    uint32_t *param_offs;   /* offset of each ?, in order; owned (NULL if none) */

    unsigned char *param_int;       /* per ?, 1 where SQL takes only an integer (LIMIT,
                                       OFFSET); owned (NULL if none is) */

    struct dal_sql_tref *trefs;     size_t ntrefs;     /* in text order */
    struct dal_sql_colref *colrefs; size_t ncolrefs;   /* in text order */
    struct dal_sql_hint *hints;     size_t nhints;
    struct dal_sql_scope *scopes;   size_t nscopes;    /* scope 0 first, parents
                                                          before children */
    struct dal_sql_source *sources; size_t nsources;

    /* WHERE of the outermost SELECT / UPDATE / DELETE (not of a UNION) */
    uint32_t where_off, where_len;  /* the condition after the keyword */
    int where_has_or;               /* OR / XOR / || at its top level */
    /* the conditions of every scope, each tagged with its scope */
    struct dal_sql_cond *conds;     size_t nconds;

    /* FROM clause of the outermost SELECT / DELETE: after the keyword up to
     * the end of its last token; from_end 0 if none */
    uint32_t from_off, from_end;

    /* INSERT / REPLACE */
    char **columns;                 size_t ncolumns;   /* 0 if no column list */
    uint32_t values_off, values_end; /* first row's "(" .. after the last ")" */
    struct dal_sql_row *rows;       size_t nrows;
    int insert_set;                 /* INSERT ... SET a=1, b=2 (columns + one row) */
    int insert_select;              /* INSERT ... SELECT / TABLE (no rows) */
    int insert_ignore;
    uint32_t odku_off, odku_len;    /* "ON DUPLICATE KEY UPDATE ..." span, 0 if none */

    /* UPDATE: the SET targets, unqualified; owned */
    char **set_columns;             size_t nset_columns;

    /* the outermost SELECT (ORDER BY and LIMIT also for UPDATE/DELETE) */
    int distinct;
    struct dal_sql_item *items;     size_t nitems;
    struct dal_sql_order *order_by; size_t norder_by;
    struct dal_sql_order *group_by; size_t ngroup_by;
    int group_with_rollup;
    int has_having;
    uint32_t having_off, having_len; /* the condition after the keyword */
    int has_limit;
    int limit_has_offset;
    dal_sql_opnd_t limit_offset;     /* valid if limit_has_offset */
    dal_sql_opnd_t limit_count;      /* valid if has_limit */
    uint32_t limit_off, limit_len;   /* the whole clause, LIMIT keyword included */
    int for_update;                  /* FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE */
    int has_union;                   /* UNION / EXCEPT / INTERSECT at the top */

    /* read-write splitting (replica.h) */
    int needs_master;                /* a SELECT calling a function whose result depends on,
                                        or changes, state of one server: LAST_INSERT_ID(),
                                        GET_LOCK() and the other named-lock functions,
                                        NEXTVAL()/LASTVAL()/SETVAL(), NEXT/PREVIOUS VALUE FOR,
                                        FOUND_ROWS(), ROW_COUNT() */
    int txn_read_only;               /* START TRANSACTION READ ONLY */
    int opaque;                      /* a statement dal does not analyse (LOAD DATA,
                                        HANDLER, LOCK TABLES, CALL, DO, ...): the
                                        tables it names are not in trefs */
    int compound;                    /* a compound statement at top level (BEGIN NOT
                                        ATOMIC, FOR, WHILE, LOOP, REPEAT, IF, CASE):
                                        opaque, run whole on one server */
    int temporary;                   /* CREATE / DROP TEMPORARY: DDL the server does not
                                        commit a transaction for */
    unsigned int pins;               /* DAL_PIN_* bits: state it leaves in (or reads from)
                                        its server session, which a dal session keeps
                                        by pinning the connection (session.c) */
    int reads_autocommit;            /* reads the session's @@autocommit (sql_autocommit_refs) */
    int xa;                          /* an XA statement: a DAL_SQL_XA_* (0: none) */
} dal_sql_t;

/* The XA statements (dal_sql_t.xa): a server's own XA transaction, which
 * lives on the connection that ran XA START (pinned: DAL_PIN_XA). */
enum {
    DAL_SQL_XA_START = 1, /* XA START | BEGIN xid */
    DAL_SQL_XA_STEP,      /* XA END, XA PREPARE, XA RECOVER */
    DAL_SQL_XA_FINISH     /* XA COMMIT, XA ROLLBACK: the XA transaction ends */
};

/* A span of a statement's text. */
typedef struct dal_sql_span {
    uint32_t off, len;
} dal_sql_span_t;

/* The references to the session's autocommit in sql's text (`@@autocommit`,
 * `@@session.autocommit`, `@@local.autocommit`, any case; not
 * `@@global.autocommit`), in text order, into out (cap of them): their
 * number, which may exceed cap. */
size_t sql_autocommit_refs(const dal_sql_t *sql, dal_sql_span_t *out, size_t cap);

/* sql is a SELECT that opens no transaction on a server: it names no
 * table but information_schema's, is analysed and needs no master's state.
 * (One reading @@autocommit gets the session's value from check_routes,
 * in a transaction or not.) */
int sql_reads_no_table(const dal_sql_t *sql);

/*
 * Server-session state a statement creates or reads, that a later statement
 * of the same dal session must find on the same connection.  Found from the
 * tokens, so on the safe side: `'u'@'h'` and `u@h` (accounts) are not user
 * variables, but anything else after one '@' is.
 */
enum {
    DAL_PIN_USER_VAR = 1,   /* @name set or read: SET @a, @a := , INTO @a, SELECT @a */
    DAL_PIN_TEMP_TABLE = 2, /* CREATE TEMPORARY TABLE (or SEQUENCE) */
    DAL_PIN_TABLE_LOCK = 4, /* LOCK TABLE(S), FLUSH TABLE(S) ... WITH READ LOCK / FOR EXPORT */
    DAL_PIN_NAMED_LOCK = 8, /* GET_LOCK() (RELEASE_LOCK and IS_USED_LOCK only read it) */
    DAL_PIN_PREPARE = 16,   /* PREPARE name FROM ... (a prepared statement in SQL) */
    DAL_PIN_HANDLER = 32,   /* HANDLER t OPEN */
    DAL_PIN_SESSION_STATUS = 64, /* SHOW [SESSION | LOCAL] STATUS, information_schema.SESSION_STATUS,
                                    FLUSH STATUS: the counters of the connection it runs on */
    DAL_PIN_XA = 128,            /* XA START: held until XA COMMIT or XA ROLLBACK succeeds */
    DAL_PIN_SCHEMA = 4096   /* no statement's: the session chose a database of [dal]
                               server_schemas (dal_session_use_schema), selected on it */
};

/* The first of pins' DAL_PIN_* bits as a word ("user_variable",
 * "temporary_table", "table_lock", "named_lock", "prepare", "handler",
 * "session_status", "xa"), for
 * monitor events; "none" for 0.  Static. */
const char *sql_pin_word(unsigned int pins);

/* Analyse sql[0..len) (borrowed; need not be NUL-terminated), read as a
 * server reads it with or without NO_BACKSLASH_ESCAPES in its sql_mode
 * (no_backslash; lex_init).  On success
 * returns 0 and stores in *out a new dal_sql_t owned by the caller (one
 * reference: release it with sql_unref or sql_free).  On failure
 * returns -1, stores NULL, and writes a NUL-terminated message naming the
 * byte offset at fault into errbuf (owned by the caller; may be NULL when
 * errcap is 0).  Several statements give kind DAL_SQL_MULTI and nothing else. */
int sql_analyse(const char *sql, size_t len, int no_backslash, dal_sql_t **out, char *errbuf,
                size_t errcap);

/* Free s regardless of its reference count: for a dal_sql_t that was never
 * shared.  s is transferred; NULL is allowed. */
void sql_free(dal_sql_t *s);

/* The value of s's dal hint key ("" for a bare key; owned by s), or NULL
 * when s has none. */
const char *sql_hint_value(const dal_sql_t *s, const char *key);

/* Take one more reference on s (borrowed; must be alive).  Returns s. */
const dal_sql_t *sql_ref(const dal_sql_t *s);

/* Drop one reference; the last one frees s.  s is transferred; NULL is allowed. */
void sql_unref(const dal_sql_t *s);

/* Decode the value of a LITERAL operand into out: a string's bytes with its
 * escapes, quotes and prefix (N, _charset) removed, X'..' and B'..' turned
 * into their bytes, or the text of a number (a negative one with its minus
 * and without blanks) or of NULL/TRUE/FALSE.  Writes at most cap-1 bytes and
 * a NUL (when cap > 0) and stores the full decoded length in *outlen (the
 * value may itself hold NUL bytes; it is never longer than o->len); a
 * string's backslashes as o->no_backslash says.  Returns
 * 0, or -1 if o is not a LITERAL or is malformed.  sql is the analysed text
 * (dal_sql_t.text), borrowed; out is owned by the caller. */
int sql_literal_text(const char *sql, const dal_sql_opnd_t *o, char *out, size_t cap,
                     size_t *outlen);

/* Decode the string literal t[0..n) (quotes, escapes, N/_charset prefix,
 * X'..' and B'..') into out as sql_literal_text does; 0 or -1 if
 * malformed.  no_backslash: NO_BACKSLASH_ESCAPES, a backslash is a byte
 * of the value.  Shared by the analyser for aliases and hint values. */
int sql_decode_string(const char *t, size_t n, int no_backslash, char *out, size_t cap,
                      size_t *outlen);

/* SQL whitespace. */
static inline int sql_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Kinds that change rows or definitions: never on a replica, and a
 * broadcast table they write is written on every copy. */
static inline int sql_kind_writes(dal_sql_kind_t k)
{
    return k == DAL_SQL_INSERT || k == DAL_SQL_REPLACE || k == DAL_SQL_UPDATE ||
           k == DAL_SQL_DELETE || k == DAL_SQL_DDL;
}

/* A constant name for a kind, for messages. */
const char *sql_kind_name(dal_sql_kind_t kind);
/* The same in lower case ("select"), for dal_plan_kind and monitor events. */
const char *sql_kind_word(dal_sql_kind_t kind);

#endif /* DAL_SQL_H */
