/*
 * sql_lex.h - a MySQL-dialect SQL lexer.
 *
 * The lexer cuts a statement into tokens without allocating and without
 * copying: a token is a type plus a span (offset, length) of the text.  It
 * never reads past `len`; the text need not be NUL-terminated.  Malformed
 * input (an unterminated string, quoted identifier or comment) gives one
 * DAL_TOK_ERROR token reaching to the end of the input, never a crash.
 *
 * NUL bytes are taken as the server takes them: part of a '..' or ".."
 * string and of a C-style comment; the end of a -- or # comment; anywhere
 * else (outside, inside a `quoted identifier` or an executable comment's
 * SQL) a DAL_TOK_ERROR that starts at the NUL -- except a NUL followed by
 * nothing but ';' and whitespace, which is the end of the input (EOF), as
 * the server drops those from a statement's end and stops at a final NUL.
 *
 * Dialect notes (the server's defaults are assumed):
 *  - "..." is a string, not an identifier (no ANSI_QUOTES);
 *  - a backslash escapes the next byte inside strings, unless the lexer
 *    was started for the sql_mode NO_BACKSLASH_ESCAPES (lex_init), where
 *    it is an ordinary byte and only a doubled quote is a quote;
 *  - `--` starts a comment only when followed by whitespace, a control
 *    character or the end of input; `--x` is two minus operators;
 *  - the content of an executable comment (slash-star-bang, optionally with
 *    a 5- or 6-digit version, or MariaDB's slash-star-M-bang) is lexed as
 *    ordinary tokens, because the server executes it -- except with version
 *    999999, which no server reaches (mariadb-dump's sandbox marker): that
 *    one is a DAL_TOK_COMMENT;
 *  - a word right after an identifier and a dot is an identifier even if it
 *    starts with digits (`t.1e5` is a column name, as in the server).
 *
 * Thread safety: a dal_lexer_t belongs to one thread; the functions keep no
 * global state.
 */
#ifndef DAL_SQL_LEX_H
#define DAL_SQL_LEX_H

#include <stddef.h>
#include <stdint.h>

typedef enum dal_tok_type {
    DAL_TOK_EOF = 0,
    DAL_TOK_IDENT,    /* bare word: identifier or keyword */
    DAL_TOK_QIDENT,   /* `back-quoted` identifier; span includes the quotes */
    DAL_TOK_STRING,   /* '..' "..", N'..', _cs'..', X'..', B'..'; span includes quotes and prefix */
    DAL_TOK_NUMBER,   /* 12, 1.5, .5, 1e10, 1.5E-3, 0x1F, 0b101 (a minus is an operator) */
    DAL_TOK_PARAM,    /* ? placeholder */
    DAL_TOK_PUNCT,    /* ( ) , . ; and operators, multi-character ones as one token */
    DAL_TOK_COMMENT,  /* -- comment, # comment, C-style comment */
    DAL_TOK_HINT,     /* C-style comment opened by slash-star-plus */
    DAL_TOK_VC_OPEN,  /* opener of an executable comment, version digits included */
    DAL_TOK_VC_CLOSE, /* the star-slash closing an executable comment */
    DAL_TOK_ERROR     /* unterminated string, quoted identifier or comment, or a NUL byte
                         outside strings and comments (it starts at the NUL) */
} dal_tok_type_t;

typedef struct dal_token {
    dal_tok_type_t type;
    uint32_t off; /* offset of the first byte in the text */
    uint32_t len; /* length in bytes; 0 only for DAL_TOK_EOF */
} dal_token_t;

typedef struct dal_lexer {
    const char *sql;  /* borrowed: must outlive the lexer */
    size_t len;       /* bytes of sql to lex (clamped to UINT32_MAX) */
    size_t pos;       /* next byte to look at */
    int no_backslash; /* sql_mode NO_BACKSLASH_ESCAPES: a backslash escapes nothing */
    int in_vc;        /* depth of open executable comments */
    size_t vc_off;    /* where the outermost open executable comment began */
    size_t ident_end; /* end of the last IDENT/QIDENT token, SIZE_MAX if none */
    size_t qdot_end;  /* end of a '.' that directly followed an identifier */
    int nul_in_qident; /* the DAL_TOK_ERROR returned is a NUL byte inside a `quoted
                          identifier` */
} dal_lexer_t;

/* The servers' version as MAJOR*10000 + MINOR*100 + PATCH (the
 * connections learn it: sql_set_server_version), which decides whether
 * the content of a versioned executable comment is SQL or a comment, as
 * the server decides; 0 until known, when every version's content is SQL.
 * A process reads one value: its servers are one MariaDB version. */
void sql_set_server_version(uint32_t version);
uint32_t sql_server_version(void);

/* Start lexing sql[0..len).  sql is borrowed.  no_backslash: the text is
 * read as a server whose sql_mode has NO_BACKSLASH_ESCAPES reads it (the
 * session's mode when the text is a client's; 0 for dal's own text, which
 * reads the same in both modes). */
void lex_init(dal_lexer_t *lx, const char *sql, size_t len, int no_backslash);

/* The next token.  Whitespace is skipped; comments and hints are returned as
 * tokens.  After DAL_TOK_ERROR the next call returns DAL_TOK_EOF; after EOF
 * every call returns EOF again.  An executable comment still open at the end
 * of input yields DAL_TOK_ERROR spanning from its opener to the end. */
dal_token_t lex_next(dal_lexer_t *lx);

/* 1 if t is an IDENT whose text equals word, ignoring ASCII case; else 0.
 * sql is the text the token came from (borrowed); word is NUL-terminated. */
int tok_eq(const char *sql, const dal_token_t *t, const char *word);

/* Write the name of an IDENT or QIDENT token into out (quotes removed, ``
 * turned into `), NUL-terminated and truncated to cap-1 bytes when cap > 0.
 * Other token types are copied verbatim.  Returns the full length of the
 * name, like snprintf: the output was truncated if the result >= cap.
 * out is owned by the caller and may be NULL when cap is 0. */
size_t ident_unquote(const char *sql, const dal_token_t *t, char *out, size_t cap);

#endif /* DAL_SQL_LEX_H */
