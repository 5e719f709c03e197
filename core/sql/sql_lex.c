/*
 * sql_lex.c - a MySQL-dialect SQL lexer.  See sql_lex.h.
 *
 * Every scanning helper takes the text, its length and a start position and
 * returns the position just past what it recognised; none of them reads at
 * or beyond the length, which is the one property everything else relies on.
 */
#include "sql_lex.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define NOPOS ((size_t)-1)

/* ---------------------------------------------------------------- classes */

/* Byte classes, one table lookup a byte: the lexer reads every byte of
 * every statement, mostly names and keywords. */
#define C_SPACE 1
#define C_DIGIT 2
#define C_WORD 4 /* may appear in a bare word */

/* Bytes >= 0x80 are parts of UTF-8 (or other multi-byte) characters,
 * which the server allows in names. */
#define HI8(v) v, v, v, v, v, v, v, v
#define HI128 HI8(HI8(C_WORD)), HI8(HI8(C_WORD))
static const unsigned char klass[256] = {
    ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\v'] = C_SPACE, ['\f'] = C_SPACE, ['\r'] = C_SPACE,
    [' '] = C_SPACE, ['$'] = C_WORD, ['_'] = C_WORD,
    ['0'] = C_DIGIT | C_WORD, ['1'] = C_DIGIT | C_WORD, ['2'] = C_DIGIT | C_WORD,
    ['3'] = C_DIGIT | C_WORD, ['4'] = C_DIGIT | C_WORD, ['5'] = C_DIGIT | C_WORD,
    ['6'] = C_DIGIT | C_WORD, ['7'] = C_DIGIT | C_WORD, ['8'] = C_DIGIT | C_WORD,
    ['9'] = C_DIGIT | C_WORD,
    ['A'] = C_WORD, ['B'] = C_WORD, ['C'] = C_WORD, ['D'] = C_WORD, ['E'] = C_WORD,
    ['F'] = C_WORD, ['G'] = C_WORD, ['H'] = C_WORD, ['I'] = C_WORD, ['J'] = C_WORD,
    ['K'] = C_WORD, ['L'] = C_WORD, ['M'] = C_WORD, ['N'] = C_WORD, ['O'] = C_WORD,
    ['P'] = C_WORD, ['Q'] = C_WORD, ['R'] = C_WORD, ['S'] = C_WORD, ['T'] = C_WORD,
    ['U'] = C_WORD, ['V'] = C_WORD, ['W'] = C_WORD, ['X'] = C_WORD, ['Y'] = C_WORD,
    ['Z'] = C_WORD,
    ['a'] = C_WORD, ['b'] = C_WORD, ['c'] = C_WORD, ['d'] = C_WORD, ['e'] = C_WORD,
    ['f'] = C_WORD, ['g'] = C_WORD, ['h'] = C_WORD, ['i'] = C_WORD, ['j'] = C_WORD,
    ['k'] = C_WORD, ['l'] = C_WORD, ['m'] = C_WORD, ['n'] = C_WORD, ['o'] = C_WORD,
    ['p'] = C_WORD, ['q'] = C_WORD, ['r'] = C_WORD, ['s'] = C_WORD, ['t'] = C_WORD,
    ['u'] = C_WORD, ['v'] = C_WORD, ['w'] = C_WORD, ['x'] = C_WORD, ['y'] = C_WORD,
    ['z'] = C_WORD,
    [128] = HI128,
};

static int is_space(unsigned char c)
{
    return klass[c] & C_SPACE;
}

static int is_digit(unsigned char c)
{
    return klass[c] & C_DIGIT;
}

static int is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Bytes that may appear in a bare word. */
static int is_word(unsigned char c)
{
    return klass[c] & C_WORD;
}

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* ------------------------------------------------------------- scanners */

/* A string opened by quote q at p.  Returns the end, or NOPOS if it is not
 * closed.  A backslash escapes the next byte unless no_backslash (the
 * sql_mode NO_BACKSLASH_ESCAPES); a doubled quote is one quote. */
static size_t scan_string(const char *s, size_t n, size_t p, char q, int no_backslash)
{
    for (p++; p < n; p++) {
        if (s[p] == '\\' && !no_backslash) {
            if (++p >= n)
                return NOPOS;
        } else if (s[p] == q) {
            if (p + 1 < n && s[p + 1] == q)
                p++;
            else
                return p + 1;
        }
    }
    return NOPOS;
}

/* A `quoted identifier` at p; `` inside is one backquote.  No escapes.
 * A NUL byte ends it as the server's lexer does (a syntax error there):
 * NOPOS with *nul at that byte. */
static size_t scan_qident(const char *s, size_t n, size_t p, size_t *nul)
{
    *nul = NOPOS;
    for (p++; p < n; p++) {
        if (s[p] == '\0') {
            *nul = p;
            return NOPOS;
        }
        if (s[p] == '`') {
            if (p + 1 < n && s[p + 1] == '`')
                p++;
            else
                return p + 1;
        }
    }
    return NOPOS;
}

/* The star-slash that closes a C-style comment, searched from p. */
static size_t scan_comment_end(const char *s, size_t n, size_t p)
{
    for (; p + 1 < n; p++)
        if (s[p] == '*' && s[p + 1] == '/')
            return p + 2;
    return NOPOS;
}

/* A -- or # comment runs to the end of the line, or to a NUL byte, as in
 * the server: what follows the NUL is outside the comment. */
static size_t scan_line(const char *s, size_t n, size_t p)
{
    while (p < n && s[p] != '\n' && s[p] != '\0')
        p++;
    return p;
}

static size_t scan_digits(const char *s, size_t n, size_t p)
{
    while (p < n && is_digit((unsigned char)s[p]))
        p++;
    return p;
}

/* An optional exponent (e, E, then an optional sign and at least one digit)
 * at p.  Returns p unchanged when there is none. */
static size_t scan_exponent(const char *s, size_t n, size_t p)
{
    size_t q = p + 1;

    if (p >= n || (s[p] != 'e' && s[p] != 'E'))
        return p;
    if (q < n && (s[q] == '+' || s[q] == '-'))
        q++;
    if (q >= n || !is_digit((unsigned char)s[q]))
        return p;
    return scan_digits(s, n, q);
}

/* The charsets the server knows as _name introducers.  An introducer may be
 * separated from its string by whitespace (`_latin1 'x'`), and only a known
 * charset name makes that a string rather than a name and an alias. */
static int is_charset(const char *w, size_t n)
{
    static const char *const names[] = {
        "armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257",
        "cp850", "cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "gb18030",
        "gb2312", "gbk", "geostd8", "greek", "hebrew", "hp8", "keybcs2", "koi8r",
        "koi8u", "latin1", "latin2", "latin5", "latin7", "macce", "macroman", "sjis",
        "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32", "utf8",
        "utf8mb3", "utf8mb4",
    };
    size_t i, k;

    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) != n)
            continue;
        for (k = 0; k < n && lower((unsigned char)w[k]) == (unsigned char)names[i][k]; k++)
            ;
        if (k == n)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------- the lexer */

void lex_init(dal_lexer_t *lx, const char *sql, size_t len, int no_backslash)
{
    lx->sql = sql;
    lx->no_backslash = no_backslash != 0;
    lx->len = len > UINT32_MAX ? UINT32_MAX : len;
    lx->pos = 0;
    lx->in_vc = 0;
    lx->vc_off = 0;
    lx->ident_end = NOPOS;
    lx->qdot_end = NOPOS;
    lx->nul_in_qident = 0;
}

static dal_token_t make(dal_lexer_t *lx, dal_tok_type_t type, size_t start, size_t end)
{
    dal_token_t t;

    t.type = type;
    t.off = (uint32_t)start;
    t.len = (uint32_t)(end - start);
    lx->pos = end;
    lx->ident_end = (type == DAL_TOK_IDENT || type == DAL_TOK_QIDENT) ? end : NOPOS;
    return t;
}

/* Anything unterminated: the token runs to the end and lexing stops. */
static dal_token_t make_error(dal_lexer_t *lx, size_t start)
{
    lx->in_vc = 0;
    return make(lx, DAL_TOK_ERROR, start, lx->len);
}

/* Whether the NUL byte at p ends the input for the server: only ';' and
 * whitespace follow it (the server drops those from a statement's end,
 * and a NUL that is then the last byte is its end of input). */
static int nul_ends_input(const char *s, size_t n, size_t p)
{
    for (p++; p < n; p++)
        if (s[p] != ';' && !is_space((unsigned char)s[p]))
            return 0;
    return 1;
}

/* A NUL byte outside strings and comments: the end of the input when
 * nul_ends_input, else a DAL_TOK_ERROR that starts at it. */
static dal_token_t lex_nul(dal_lexer_t *lx, size_t p)
{
    if (!nul_ends_input(lx->sql, lx->len, p))
        return make_error(lx, p);
    if (lx->in_vc > 0)
        return make_error(lx, lx->vc_off);
    return make(lx, DAL_TOK_EOF, lx->len, lx->len);
}

/* A quoted string whose prefix (N, X, B or a charset introducer) starts at
 * start and whose opening quote is at q. */
static dal_token_t lex_prefixed_string(dal_lexer_t *lx, size_t start, size_t q)
{
    size_t end = scan_string(lx->sql, lx->len, q, lx->sql[q], lx->no_backslash);

    return end == NOPOS ? make_error(lx, start) : make(lx, DAL_TOK_STRING, start, end);
}

/* A word that starts with a digit: a number if the whole of it has the shape
 * of one, otherwise an identifier such as `1st_col` (names may start with
 * digits).  wend is the end of the run of word bytes. */
static dal_token_t lex_numeric_word(dal_lexer_t *lx, size_t p, size_t wend)
{
    const char *s = lx->sql;
    size_t n = lx->len, q;

    if (wend - p > 2 && s[p] == '0' && (s[p + 1] == 'x' || s[p + 1] == 'b')) {
        int hex = s[p + 1] == 'x';
        for (q = p + 2; q < wend; q++)
            if (hex ? !is_hex((unsigned char)s[q]) : (s[q] != '0' && s[q] != '1'))
                break;
        if (q == wend)
            return make(lx, DAL_TOK_NUMBER, p, wend);
    }
    q = scan_digits(s, n, p);
    if (q == wend) {
        /* all digits: an optional fraction and exponent may follow */
        if (q < n && s[q] == '.') {
            q = scan_digits(s, n, q + 1);
            q = scan_exponent(s, n, q);
        }
        return make(lx, DAL_TOK_NUMBER, p, q);
    }
    /* digits and an exponent that fills the whole word: 1e10, 2E-3 */
    q = scan_exponent(s, n, q);
    if (q >= wend && (q == n || !is_word((unsigned char)s[q])))
        return make(lx, DAL_TOK_NUMBER, p, q);
    return make(lx, DAL_TOK_IDENT, p, wend);
}

/* A bare word at p, which may turn out to be a string prefix or a number. */
static dal_token_t lex_word(dal_lexer_t *lx, size_t p)
{
    const char *s = lx->sql;
    size_t n = lx->len, wend = p, q;
    unsigned char c0 = (unsigned char)s[p];

    while (wend < n && is_word((unsigned char)s[wend]))
        wend++;
    if (lx->qdot_end == p) /* the name after `qualifier.` */
        return make(lx, DAL_TOK_IDENT, p, wend);
    if (wend == p + 1 && wend < n && s[wend] == '\'' &&
        (c0 == 'N' || c0 == 'n' || c0 == 'X' || c0 == 'x' || c0 == 'B' || c0 == 'b'))
        return lex_prefixed_string(lx, p, wend);
    if (c0 == '_' && wend > p + 1) {
        if (wend < n && (s[wend] == '\'' || s[wend] == '"'))
            return lex_prefixed_string(lx, p, wend);
        for (q = wend; q < n && is_space((unsigned char)s[q]); q++)
            ;
        if (q > wend && q < n && (s[q] == '\'' || s[q] == '"') && is_charset(s + p + 1, wend - p - 1))
            return lex_prefixed_string(lx, p, q);
    }
    if (is_digit(c0))
        return lex_numeric_word(lx, p, wend);
    return make(lx, DAL_TOK_IDENT, p, wend);
}

static _Atomic uint32_t server_version;

void sql_set_server_version(uint32_t version)
{
    atomic_store_explicit(&server_version, version, memory_order_relaxed);
}

uint32_t sql_server_version(void)
{
    return atomic_load_explicit(&server_version, memory_order_relaxed);
}

/* The version no server reaches: mariadb-dump's first line is
 * slash-star-M-bang 999999 (a marker for its client that servers skip). */
#define VC_NEVER 999999u

/* Whether a server of version `server` (0: unknown) runs the content of
 * an executable comment whose version has `digits` digits (5 or 6) and
 * value v; mariadb (M!) tells slash-star-M-bang.  MariaDB leaves MySQL
 * 5.7's and later five-digit versions to MySQL (comments to it). */
static int vc_runs(uint32_t v, size_t digits, int mariadb, uint32_t server)
{
    if (v == VC_NEVER || (digits == 5 && v >= 50700 && !mariadb))
        return 0;
    return server == 0 || v <= server;
}

/* The opener of an executable comment at p: slash-star-bang or MariaDB's
 * slash-star-M-bang, then an optional 6- or 5-digit version (fewer digits
 * are the content's).  Its content is SQL to dal when the servers run it,
 * else the comment the server sees (sql_server_version). */
static dal_token_t lex_vc_open(dal_lexer_t *lx, size_t p)
{
    const char *s = lx->sql;
    size_t n = lx->len, q = p + 3, d, k, digits;
    uint32_t v = 0;
    int mariadb = s[p + 2] == 'M';

    if (mariadb)
        q++;
    d = scan_digits(s, n, q);
    digits = d - q >= 6 ? 6 : d - q == 5 ? 5 : 0;
    for (k = 0; k < digits; k++)
        v = v * 10 + (uint32_t)(s[q + k] - '0');
    if (digits > 0 && !vc_runs(v, digits, mariadb, sql_server_version())) {
        size_t end = scan_comment_end(s, n, q);
        return end == NOPOS ? make_error(lx, p) : make(lx, DAL_TOK_COMMENT, p, end);
    }
    q += digits;
    if (lx->in_vc++ == 0)
        lx->vc_off = p;
    return make(lx, DAL_TOK_VC_OPEN, p, q);
}

/* A comment, hint or executable-comment opener: the byte at p is '/' and the
 * next one '*'. */
static dal_token_t lex_slash_star(dal_lexer_t *lx, size_t p)
{
    const char *s = lx->sql;
    size_t n = lx->len, end;

    if (p + 2 < n && (s[p + 2] == '!' || (s[p + 2] == 'M' && p + 3 < n && s[p + 3] == '!')))
        return lex_vc_open(lx, p);
    end = scan_comment_end(s, n, p + 2);
    if (end == NOPOS)
        return make_error(lx, p);
    return make(lx, (p + 2 < n && s[p + 2] == '+') ? DAL_TOK_HINT : DAL_TOK_COMMENT, p, end);
}

/* The length of the operator at p: <=> ->> <= >= <> != || && := << >> ->
 * are single tokens, everything else is one byte. */
static size_t operator_len(const char *s, size_t n, size_t p)
{
    char c = s[p], c1 = p + 1 < n ? s[p + 1] : '\0', c2 = p + 2 < n ? s[p + 2] : '\0';

    switch (c) {
    case '<':
        if (c1 == '=')
            return c2 == '>' ? 3 : 2;
        return (c1 == '>' || c1 == '<') ? 2 : 1;
    case '>':
        return (c1 == '=' || c1 == '>') ? 2 : 1;
    case '-':
        if (c1 == '>')
            return c2 == '>' ? 3 : 2;
        return 1;
    case '!':
        return c1 == '=' ? 2 : 1;
    case '|':
        return c1 == '|' ? 2 : 1;
    case '&':
        return c1 == '&' ? 2 : 1;
    case ':':
        return c1 == '=' ? 2 : 1;
    default:
        return 1;
    }
}

/* Everything that starts with punctuation: comments, '?', '.', operators. */
static dal_token_t lex_punct(dal_lexer_t *lx, size_t p)
{
    const char *s = lx->sql;
    size_t n = lx->len;
    char c = s[p], c1 = p + 1 < n ? s[p + 1] : '\0';

    if (c == '\0')
        return lex_nul(lx, p);
    if (c == '#')
        return make(lx, DAL_TOK_COMMENT, p, scan_line(s, n, p));
    if (c == '-' && c1 == '-' &&
        (p + 2 >= n || (unsigned char)s[p + 2] <= ' ' || s[p + 2] == 0x7f))
        return make(lx, DAL_TOK_COMMENT, p, scan_line(s, n, p));
    if (c == '/' && c1 == '*')
        return lex_slash_star(lx, p);
    if (c == '*' && c1 == '/' && lx->in_vc > 0) {
        lx->in_vc--;
        return make(lx, DAL_TOK_VC_CLOSE, p, p + 2);
    }
    if (c == '?')
        return make(lx, DAL_TOK_PARAM, p, p + 1);
    if (c == '.') {
        /* `name.` makes the next word a name whatever it looks like */
        int qualifies = lx->ident_end == p;
        dal_token_t t;
        if (!qualifies && is_digit((unsigned char)c1))
            return make(lx, DAL_TOK_NUMBER, p, scan_exponent(s, n, scan_digits(s, n, p + 1)));
        t = make(lx, DAL_TOK_PUNCT, p, p + 1);
        lx->qdot_end = qualifies ? p + 1 : NOPOS;
        return t;
    }
    return make(lx, DAL_TOK_PUNCT, p, p + operator_len(s, n, p));
}

dal_token_t lex_next(dal_lexer_t *lx)
{
    const char *s = lx->sql;
    size_t n = lx->len, p = lx->pos, end;
    unsigned char c;

    while (p < n && is_space((unsigned char)s[p]))
        p++;
    if (p >= n) {
        if (lx->in_vc > 0)
            return make_error(lx, lx->vc_off);
        return make(lx, DAL_TOK_EOF, n, n);
    }
    c = (unsigned char)s[p];
    if (c == '\'' || c == '"') {
        end = scan_string(s, n, p, (char)c, lx->no_backslash);
        return end == NOPOS ? make_error(lx, p) : make(lx, DAL_TOK_STRING, p, end);
    }
    if (c == '`') {
        size_t nul;
        end = scan_qident(s, n, p, &nul);
        if (end != NOPOS)
            return make(lx, DAL_TOK_QIDENT, p, end);
        lx->nul_in_qident = nul != NOPOS;
        return make_error(lx, nul != NOPOS ? nul : p);
    }
    if (is_word(c))
        return lex_word(lx, p);
    return lex_punct(lx, p);
}

/* ---------------------------------------------------------------- helpers */

int tok_eq(const char *sql, const dal_token_t *t, const char *word)
{
    const unsigned char *a = (const unsigned char *)sql + t->off;
    const unsigned char *b = (const unsigned char *)word;
    uint32_t i;

    if (t->type != DAL_TOK_IDENT)
        return 0;
    for (i = 0; i < t->len; i++)
        if (b[i] == '\0' || lower(a[i]) != lower(b[i]))
            return 0;
    return b[i] == '\0';
}

size_t ident_unquote(const char *sql, const dal_token_t *t, char *out, size_t cap)
{
    const char *s = sql + t->off;
    size_t n = t->len, i, k = 0;

    if (t->type == DAL_TOK_QIDENT && n >= 2) {
        s++;
        n -= 2;
    }
    for (i = 0; i < n; i++) {
        /* in a QIDENT every backquote inside the quotes is doubled */
        if (t->type == DAL_TOK_QIDENT && s[i] == '`' && i + 1 < n)
            i++;
        if (k + 1 < cap)
            out[k] = s[i];
        k++;
    }
    if (cap > 0)
        out[k < cap ? k : cap - 1] = '\0';
    return k;
}
