/*
 * sql_shape.c -- a text statement's shape (sql_shape.h): the literals
 * compared with columns taken out by a pass of the lexer, and the check,
 * once per shape, that its analysis may stand for the statements.
 */
#include <string.h>

#include "sql_lex.h"
#include "sql_shape.h"

enum { MAX_PARENS = 64 };

/* What the last significant token lets the next literal be. */
typedef enum prev {
    P_OTHER,       /* nothing: the literal stays */
    P_CMP,         /* = < > <= >= */
    P_IN,          /* the word IN: a '(' next opens a list of values */
    P_LIST,        /* '(' or ',' of such a list */
    P_BETWEEN,     /* the word BETWEEN */
    P_BETWEEN_AND  /* the AND after BETWEEN and a literal taken out */
} prev_t;

static int punct_is(const char *sql, const dal_token_t *t, char c)
{
    return t->len == 1 && sql[t->off] == c;
}

/* What the operator t makes of the next literal: = < > <= >= compare it
 * with a column; a ',' continues a list of IN. */
static prev_t after_punct(const char *sql, const dal_token_t *t, const unsigned char *in_list,
                          int depth)
{
    char c = sql[t->off];

    if (t->len == 1 && (c == '=' || c == '<' || c == '>'))
        return P_CMP;
    if (t->len == 2 && (c == '<' || c == '>') && sql[t->off + 1] == '=')
        return P_CMP;
    if (t->len == 1 && c == ',' && depth > 0 && in_list[depth - 1])
        return P_LIST;
    return P_OTHER;
}

/* What the word t makes of the next literal: only IN, BETWEEN and the
 * AND of BETWEEN ask for one (the length first: most words are names).
 * NOT IN, NOT BETWEEN are no conditions dal routes by: *not is set at NOT. */
static prev_t word(const char *sql, const dal_token_t *t, int was_not, int between_lit, int *not)
{
    if (t->len == 2 && !was_not && tok_eq(sql, t, "IN"))
        return P_IN;
    if (t->len == 7 && !was_not && tok_eq(sql, t, "BETWEEN"))
        return P_BETWEEN;
    if (t->len == 3 && between_lit && tok_eq(sql, t, "AND"))
        return P_BETWEEN_AND;
    *not = t->len == 3 && tok_eq(sql, t, "NOT");
    return P_OTHER;
}

/* The statement's first token starts a kind a shape may stand for
 * (sql_shape_usable): SELECT, UPDATE, DELETE, WITH or '(' -- so that an
 * INSERT's ON DUPLICATE KEY UPDATE c = 5, say, is not analysed twice. */
static int shaped_kind(const char *sql, const dal_token_t *t)
{
    if (t->type == DAL_TOK_PUNCT)
        return punct_is(sql, t, '(');
    if (t->type != DAL_TOK_IDENT)
        return 0;
    if (t->len == 6)
        return tok_eq(sql, t, "SELECT") || tok_eq(sql, t, "UPDATE") || tok_eq(sql, t, "DELETE");
    return t->len == 4 && tok_eq(sql, t, "WITH");
}

/* The scan of one statement. */
typedef struct scan {
    const char *sql;
    sql_shape_lit_t *lits;   /* borrowed: SQL_SHAPE_MAX_LITS */
    size_t n;                /* literals taken out so far */
    prev_t prev;
    int depth;               /* open parentheses */
    int between_lit;         /* the last token is a literal taken out after BETWEEN */
    int not;                 /* the last token is NOT */
    unsigned char in_list[MAX_PARENS]; /* per open parenthesis: it opens IN's list */
} scan_t;

/* One significant token t; -1 when the statement gets no shape. */
static inline int scan_token(scan_t *sc, const dal_token_t *t)
{
    int was_not = sc->not, took = 0;

    sc->not = 0;
    switch (t->type) {
    case DAL_TOK_NUMBER: case DAL_TOK_STRING:
        if (sc->prev == P_CMP || sc->prev == P_LIST || sc->prev == P_BETWEEN ||
            sc->prev == P_BETWEEN_AND) {
            if (sc->n == SQL_SHAPE_MAX_LITS)
                return -1;
            sc->lits[sc->n].off = t->off;
            sc->lits[sc->n].len = t->len;
            sc->lits[sc->n++].type = t->type;
            took = sc->prev == P_BETWEEN;
        }
        sc->prev = P_OTHER;
        break;
    case DAL_TOK_PUNCT:
        if (punct_is(sc->sql, t, '(')) {
            if (sc->depth == MAX_PARENS)
                return -1;
            sc->in_list[sc->depth++] = sc->prev == P_IN;
            sc->prev = sc->prev == P_IN ? P_LIST : P_OTHER;
        } else if (punct_is(sc->sql, t, ')')) {
            sc->depth -= sc->depth > 0;
            sc->prev = P_OTHER;
        } else {
            sc->prev = after_punct(sc->sql, t, sc->in_list, sc->depth);
        }
        break;
    case DAL_TOK_IDENT:
        sc->prev = word(sc->sql, t, was_not, sc->between_lit, &sc->not);
        break;
    default:
        sc->prev = P_OTHER;
        break;
    }
    sc->between_lit = took;
    return 0;
}

/* sql[0..len) with the n literals lits as ? into out (room checked). */
static size_t put_shape(const char *sql, size_t len, const sql_shape_lit_t *lits, size_t n,
                        char *out)
{
    size_t at = 0, o = 0, i;

    for (i = 0; i < n; i++) {
        memcpy(out + o, sql + at, lits[i].off - at);
        o += lits[i].off - at;
        out[o++] = '?';
        at = lits[i].off + lits[i].len;
    }
    memcpy(out + o, sql + at, len - at);
    o += len - at;
    out[o] = '\0';
    return o;
}

size_t sql_shape_text(const char *sql, size_t len, int no_backslash, char *out, size_t cap,
                      size_t *outlen, sql_shape_lit_t *lits)
{
    scan_t sc;
    dal_lexer_t lx;
    dal_token_t t;
    int first = 1;

    if (len + 1 > cap || len > UINT32_MAX)
        return 0;
    sc.sql = sql;
    sc.lits = lits;
    sc.n = 0;
    sc.prev = P_OTHER;
    sc.depth = sc.between_lit = sc.not = 0;
    lex_init(&lx, sql, len, no_backslash);
    while ((t = lex_next(&lx)).type != DAL_TOK_EOF) {
        if (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT || t.type == DAL_TOK_VC_OPEN ||
            t.type == DAL_TOK_VC_CLOSE)
            continue;
        if (t.type == DAL_TOK_ERROR || t.type == DAL_TOK_PARAM || (first && !shaped_kind(sql, &t)) ||
            scan_token(&sc, &t) != 0)
            return 0;
        first = 0;
    }
    if (sc.n > 0)
        *outlen = put_shape(sql, len, lits, sc.n, out);
    return sc.n;
}

/* ---------------------------------------------------------------- the check */

enum { SHAPE_UNJUDGED, SHAPE_USABLE, SHAPE_UNUSABLE };

static int inside(uint32_t off, uint32_t s, uint32_t n)
{
    return n > 0 && off >= s && off < s + n;
}

/* The ? at param_offs[i] is outside every part of the statement whose
 * text dal copies or reads (select list, GROUP BY, ORDER BY, HAVING,
 * LIMIT). */
static int outside_read_parts(const dal_sql_t *s, uint32_t off)
{
    size_t k;

    for (k = 0; k < s->nitems; k++)
        if (inside(off, s->items[k].off, s->items[k].len))
            return 0;
    for (k = 0; k < s->norder_by; k++)
        if (inside(off, s->order_by[k].off, s->order_by[k].len))
            return 0;
    for (k = 0; k < s->ngroup_by; k++)
        if (inside(off, s->group_by[k].off, s->group_by[k].len))
            return 0;
    return !inside(off, s->having_off, s->having_len) &&
           !inside(off, s->limit_off, s->limit_len);
}

/*
 * A ? of a shape stands for a literal the analysis then knows nothing of
 * but its place: as the value of a condition, routing takes it from the
 * parameters, bound as it takes a literal; anywhere else -- an OR, a
 * function's argument, an UPDATE's SET, a derived table's select list --
 * nothing of dal reads it, and the rewrite writes it back as written.
 * What dal does read or copy the text of is kept out: the select list,
 * GROUP BY, ORDER BY, HAVING and LIMIT (merges, column names, position
 * and count rewrites), hints, session state, statements it does not
 * analyse, and every kind but SELECT, UPDATE and DELETE.
 */
static int judge(const dal_sql_t *s)
{
    size_t i;

    if (!(s->kind == DAL_SQL_SELECT || s->kind == DAL_SQL_UPDATE || s->kind == DAL_SQL_DELETE) ||
        s->nparams == 0 || s->nhints > 0 || s->opaque || s->pins != 0 || s->reads_autocommit ||
        s->param_int != NULL)
        return 0;
    for (i = 0; i < s->nparams; i++)
        if (!outside_read_parts(s, s->param_offs[i]))
            return 0;
    return 1;
}

int sql_shape_usable(const dal_sql_t *s)
{
    int st = atomic_load_explicit(&((dal_sql_t *)s)->shape_state, memory_order_relaxed);

    if (st == SHAPE_UNJUDGED) {
        st = judge(s) ? SHAPE_USABLE : SHAPE_UNUSABLE;
        atomic_store_explicit(&((dal_sql_t *)s)->shape_state, st, memory_order_relaxed);
    }
    return st == SHAPE_USABLE;
}
