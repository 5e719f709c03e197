/*
 * recognise.h -- the reading of the statements dal-proxy answers itself:
 * each recogniser's parse of a client's statement text (recognise_set.c
 * for SET and USE, recognise.c for the others), apart from what the proxy
 * then does (setvar.c, kill.c, diag.c, processlist.c, schema.c,
 * infoschema.c), so that fuzz/fuzz_recognise.c reads any text with them.
 * No state; any thread.
 *
 * A statement's text is sql, len bytes, with a NUL at sql[len] (NUL bytes
 * may be inside it, in quotes or comments: a recogniser that reads up to
 * the first NUL reads no further).  Every pointer a recogniser returns
 * points into the text it was given, which owns it; names are copied into
 * the caller's buffers.
 */
#ifndef DAL_PROXY_RECOGNISE_H
#define DAL_PROXY_RECOGNISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------- SET and USE */

/* `USE db [;]`: the name (its backquotes taken off, not undoubled) as
 * *db..*db + *n, inside sql; false when sql is no USE. */
bool recognise_use(const char *sql, size_t len, const char **db, size_t *n);

/* The end of one `name = value` of a SET list (p..end, which may hold NUL
 * bytes inside quotes): the next comma outside quotes and parentheses, or
 * end.  no_backslash: the sql_mode NO_BACKSLASH_ESCAPES. */
const char *recognise_set_item_end(const char *p, const char *end, bool no_backslash);
/* Whether a SET's value (NUL-ended) reads state (a variable, a function
 * call) outside quotes. */
bool recognise_reads_state(const char *v, bool no_backslash);
/* Whether the item at p assigns a user variable (`@name`) or a global one
 * (`@@global.name`). */
bool recognise_is_user_var(const char *p);
/* The SET list p..end holds only blanks and `;` from p. */
bool recognise_list_done(const char *p, const char *end);
/* After SET at p (up to last): whether it assigns a session variable,
 * which the proxy keeps: not SET GLOBAL, PASSWORD, STATEMENT, ROLE or
 * DEFAULT ROLE, nor a list of only user variables and @@global.name. */
bool recognise_set_session(const char *p, const char *last, bool no_backslash);
/* The item `[SESSION] [@@[session.]]name = value` at p (up to the item's
 * end, recognise_set_item_end's, which its reading never passes): its
 * name (at most 64 bytes) into name[65] and *value where its value
 * starts; false when it is not that form. */
bool recognise_set_item(const char *p, char name[65], const char **value);
/* After SET at *p: whether `[SESSION | LOCAL] TRANSACTION` follows, *p
 * past it and *session whether SESSION or LOCAL was there. */
bool recognise_set_transaction(const char **p, bool *session);
/* The characteristics of SET SESSION TRANSACTION at p (ISOLATION LEVEL x,
 * READ ONLY, READ WRITE, comma-separated): *level the tx_isolation value
 * (static, a quoted string) or NULL, *read_only "1", "0" or NULL.  NULL,
 * or the refusal's message (static). */
const char *recognise_txn_characteristics(const char *p, const char **level,
                                          const char **read_only);
/* After SET at p: `NAMES cs [COLLATE co]` as the session variable names
 * takes it ("cs" or "cs COLLATE co", DEFAULT as utf8mb4; cs cut at 64
 * bytes, co at 66) into value; false when it is no SET NAMES. */
#define RECOGNISE_NAMES_SIZE 141
bool recognise_set_names(const char *p, char value[RECOGNISE_NAMES_SIZE]);

/* ---------------------------------------------------------------- KILL */

/* `KILL [HARD|SOFT] [CONNECTION|QUERY] id`, id a number or CONNECTION_ID()
 * (self, the client's own): *query_only and *id; false for any other
 * form (KILL USER, KILL QUERY ID, another expression). */
bool recognise_kill(const char *sql, size_t len, uint32_t self, bool *query_only, uint32_t *id);

/* ------------------------------------------------ SHOW WARNINGS/ERRORS */

/* `SHOW {WARNINGS|ERRORS} [LIMIT [offset,] n | LIMIT n OFFSET m]` or
 * `SHOW COUNT(*) {WARNINGS|ERRORS}`. */
typedef struct recognise_diag {
    bool count;       /* COUNT(*) */
    bool errors;      /* ERRORS, else WARNINGS */
    uint64_t offset;  /* 0 without one */
    uint64_t limit;   /* UINT64_MAX without one */
} recognise_diag_t;

bool recognise_diag(const char *sql, size_t len, recognise_diag_t *d);

/* ----------------------------------------- PROCESSLIST, STATUS, FLUSH */

/* SHOW [FULL] PROCESSLIST: *full. */
bool recognise_show_processlist(const char *sql, bool *full);
/* SHOW [GLOBAL | SESSION | LOCAL] STATUS ... */
bool recognise_show_status(const char *sql);
/* FLUSH [NO_WRITE_TO_BINLOG | LOCAL] STATUS */
bool recognise_flush_status(const char *sql);
/* Whether the word PROCESSLIST (any case) is in sql at all. */
bool recognise_mentions_processlist(const char *sql, size_t len);

/* One reference processlist_statement replaces in a statement. */
typedef struct recognise_pl_ref {
    const char *at;  /* in the text */
    size_t len;
    bool table;      /* information_schema.PROCESSLIST, else CONNECTION_ID() */
    bool aliased;    /* a table's alias follows */
} recognise_pl_ref_t;

/* The first reference in p..end outside quotes (p outside quotes; sql the
 * text's start, for the word before p): true and *ref, else false. */
bool recognise_processlist_ref(const char *sql, const char *p, const char *end,
                               bool no_backslash, recognise_pl_ref_t *ref);

/* ------------------------------------- SHOW TABLES, DESCRIBE and SHOW */

/* An identifier at *p, bare or `quoted`: its text into buf (NUL-ended,
 * `` undoubled), *p past it.  False when there is none or it is longer
 * than buf. */
bool recognise_ident(const char **p, char *buf, size_t size);
/* The rest at p is only spaces and `;`. */
bool recognise_at_end(const char *p);
/* `SHOW [FULL] TABLES [FROM|IN db]`: *full, db (size bytes; "" without
 * the clause), and *filter at what follows (LIKE ..., WHERE ..., or the
 * end). */
bool recognise_show_tables(const char *sql, bool *full, char *db, size_t size,
                           const char **filter);
/* `SHOW DATABASES [LIKE 'pattern']` (a pattern without ' or \, at most
 * 120 bytes): *pat..*pat + *n, or *pat NULL without LIKE. */
bool recognise_show_databases(const char *sql, const char **pat, size_t *n);
/* The pattern of `LIKE 'pattern'` at p (without ' or \): *n bytes at the
 * return, or NULL. */
const char *recognise_like_pattern(const char *p, size_t *n);

/* The kinds of describing statement. */
typedef enum describe_kind { DESCRIBE_COLUMNS, DESCRIBE_INDEX, DESCRIBE_CREATE } describe_kind_t;

/*
 * `SHOW [FULL] {COLUMNS|FIELDS} {FROM|IN} t [{FROM|IN} db] [LIKE|WHERE ...]`,
 * `SHOW {INDEX|INDEXES|KEYS} {FROM|IN} t [{FROM|IN} db] [WHERE ...]`,
 * `SHOW CREATE TABLE t`, `{DESC|DESCRIBE} t [column | 'pattern']`, each
 * with t as `name` or `db`.`name`, db being ours (the proxy's schema, by
 * name).
 */
typedef struct recognise_describe {
    describe_kind_t kind;
    char table[129];       /* t's name */
    const char *head_end;  /* where t starts */
    const char *tail;      /* what follows t and its schema clause */
    bool named_db;         /* t qualified, or a schema clause */
} recognise_describe_t;

bool recognise_describe(const char *sql, const char *ours, recognise_describe_t *d);

/* ------------------------------------------------------ SHOW VARIABLES */

/* `SHOW [SESSION | LOCAL] VARIABLES [LIKE p | WHERE e]` (sql, len bytes):
 * *like whether LIKE, and the condition as *cond..*cond + *n without the
 * closing `;` and blanks (*cond NULL without one). */
bool recognise_show_variables(const char *sql, size_t len, bool *like, const char **cond,
                              size_t *n);

/* ------------------------------------------------------------- quoting */

/* s (n bytes) quoted in q, ' (a string) or ` (a name), into out (2 * n +
 * 3 bytes: q, the text with q doubled and, for ' unless no_backslash,
 * backslashes doubled, q, a NUL): its length. */
size_t recognise_quote(char *out, char q, const char *s, size_t n, bool no_backslash);

/* ------------------------------------------------ the shared account */

/* Whether sql (as the server reads it: executable comments open) changes
 * the account it runs as -- SET PASSWORD (with or without FOR), SET
 * DEFAULT ROLE, either after SET STATEMENT ... FOR, or ALTER USER: which
 * through dal-proxy is the datasource's account that every client's
 * statements share, not the client's. */
bool recognise_account_change(const char *sql, bool no_backslash);

#endif /* DAL_PROXY_RECOGNISE_H */
