/*
 * sql_analyse.c -- one pass from text to dal_sql_t: lex, link parentheses,
 * analyse, resolve qualifiers by scope, copy the result into one block; and
 * what that pass works with: its scratch memory, errors, keywords and
 * operands.  See sql_int.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "sql_int.h"

/* ============================================================ scratch */

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

void an_scratch_free(scratch_t *sc)
{
    while (sc->heap) {
        chunk_t *next = sc->heap->next;
        free(sc->heap);
        sc->heap = next;
    }
}

/* ============================================================ analyser */

int an_fail(an_t *a, size_t off, const char *what)
{
    if (!a->failed && a->errcap > 0)
        snprintf(a->errbuf, a->errcap, "%s at offset %zu", what, off);
    a->failed = 1;
    return -1;
}

int an_oom(an_t *a)
{
    if (!a->failed && a->errcap > 0)
        snprintf(a->errbuf, a->errcap, "out of memory");
    a->failed = 1;
    return -1;
}

void *an_scratch(an_t *a, size_t n)
{
    void *p = salloc(&a->sc, n);
    if (!p)
        an_oom(a);
    return p;
}

/* Append a zeroed element of esz bytes; NULL (and the error set) when out
 * of memory. */
void *an_vpush(an_t *a, vec_t *v, size_t esz)
{
    void *e;

    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        void *nv = an_scratch(a, cap * esz);
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

int an_push_str(an_t *a, vec_t *v, char *s)
{
    char **slot;

    if (!s || !(slot = an_vpush(a, v, sizeof *slot)))
        return -1;
    *slot = s;
    return 0;
}

/* ------------------------------------------------------------ tokens */

int an_ascii_casecmp(const char *x, const char *y)
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

void an_keywords_init(void)
{
    pthread_once(&kw_once, kw_build);
}

/* The keyword id of a word token, K_NONE if it is no keyword. */
unsigned char an_keyword_id(const char *sql, const dal_token_t *t)
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

/* An unquoted name in the scratch arena, or NULL (out of memory). */
char *an_tok_name(an_t *a, int i)
{
    size_t n = ident_unquote(a->sql, &a->tk[i], NULL, 0);
    char *s = an_scratch(a, n + 1);

    if (s)
        ident_unquote(a->sql, &a->tk[i], s, n + 1);
    return s;
}

/* An alias token's text: a name, or a string used as an alias. */
char *an_alias_text(an_t *a, int i)
{
    size_t n;
    char *s;

    if (a->tk[i].type != DAL_TOK_STRING)
        return an_tok_name(a, i);
    if (!(s = an_scratch(a, a->tk[i].len + 1)))
        return NULL;
    if (sql_decode_string(a->sql + a->tk[i].off, a->tk[i].len, a->r.no_backslash, s,
                          a->tk[i].len + 1, &n) != 0)
        s[0] = '\0';
    return s;
}

/* ============================================================ operands */

const unsigned char an_literal_words[] = {K_NULL, K_TRUE, K_FALSE, 0};

/* [s,e) as one operand.  An empty range is an empty EXPR. */
dal_sql_opnd_t an_operand(const an_t *a, int s, int e)
{
    dal_sql_opnd_t o;
    int k = s;

    memset(&o, 0, sizeof o);
    o.kind = DAL_OPND_EXPR;
    o.param_index = -1;
    o.lit_type = DAL_TOK_EOF;
    o.no_backslash = a->r.no_backslash;
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
        if (k == s && (a->tk[k].type == DAL_TOK_STRING || kw_in(a, k, e, an_literal_words))) {
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
int an_operand_list(an_t *a, int s, int e, dal_sql_opnd_t **vals, size_t *n)
{
    size_t cnt = 0, k = 0;
    int i, j;

    for (i = s; i < e; i = j + 1, cnt++)
        j = comma_end(a, i, e);
    *vals = NULL;
    *n = cnt;
    if (cnt == 0)
        return 0;
    if (!(*vals = an_scratch(a, cnt * sizeof **vals)))
        return -1;
    for (i = s; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        (*vals)[k++] = an_operand(a, i, j);
    }
    return 0;
}

/* ============================================================ lexing */

static const char *error_what(const dal_lexer_t *lx, const dal_token_t *t)
{
    const char *s = lx->sql + t->off;

    if (s[0] == '\0')
        return lx->nul_in_qident ? "syntax error: NUL byte in a quoted identifier"
                                 : "syntax error: NUL byte outside a quoted string";
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

    lex_init(&lx, a->sql, a->len, a->r.no_backslash);
    for (;;) {
        t = lex_next(&lx);
        switch (t.type) {
        case DAL_TOK_EOF:
            a->tk = a->toks.v;
            a->nt = (int)a->toks.n;
            return 0;
        case DAL_TOK_ERROR:
            return an_fail(a, t.off, error_what(&lx, &t));
        case DAL_TOK_COMMENT:
        case DAL_TOK_VC_OPEN:
        case DAL_TOK_VC_CLOSE:
            continue;
        case DAL_TOK_HINT:
            slot = an_vpush(a, &a->hints_tk, sizeof *slot);
            break;
        default:
            slot = an_vpush(a, &a->toks, sizeof *slot);
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

    if (an_block_start(a, 0, a->nt))
        return 1;
    if (!kw(a, 0, a->nt, K_CREATE))
        return 0;
    for (i = 1; i < a->nt && i < 16 && !is_p(a, i, a->nt, '('); i++)
        if (kw_in(a, i, a->nt, bodies))
            return 1;
    return 0;
}

/* Whether placeholder i touches a string literal (comments between are
 * nothing): dal writes a string value as a literal, and adjacent literals
 * are one string to a server, so `'x' ?` (which a server refuses) would
 * run and `? 'alias'` would lose its alias. */
static int beside_string(const an_t *a, int i)
{
    return (i > 0 && a->tk[i - 1].type == DAL_TOK_STRING) ||
           (i + 1 < a->nt && a->tk[i + 1].type == DAL_TOK_STRING);
}

/* Find the end of the statement (a top-level ';', after which only more
 * ';' may follow), link parentheses and number the placeholders. */
static int link_tokens(an_t *a)
{
    int *stack, sp = 0, i, k, params = 0, cmp;

    if (!(a->link = an_scratch(a, (size_t)a->nt * sizeof *a->link + 1)) ||
        !(a->tflag = an_scratch(a, (size_t)a->nt + 1)) || !(a->kwid = an_scratch(a, (size_t)a->nt + 1)) ||
        !(a->tscope = an_scratch(a, (size_t)a->nt * sizeof *a->tscope + 1)) ||
        !(a->param_int = an_scratch(a, (size_t)a->nt + 1)) ||
        !(stack = an_scratch(a, (size_t)a->nt * sizeof *stack + 1)))
        return -1;
    memset(a->tflag, 0, (size_t)a->nt);
    memset(a->tscope, 0, (size_t)a->nt * sizeof *a->tscope);
    memset(a->param_int, 0, (size_t)a->nt + 1);
    an_keywords_init();
    for (i = 0; i < a->nt; i++)
        a->kwid[i] = an_keyword_id(a->sql, &a->tk[i]);
    cmp = compound(a);
    for (i = 0; i < a->nt; i++) {
        a->link[i] = -1;
        if (a->tk[i].type == DAL_TOK_PARAM) {
            uint32_t *po = an_vpush(a, &a->params, sizeof *po);
            if (beside_string(a, i))
                return an_fail(a, a->tk[i].off,
                               "a ? placeholder next to a string literal (an alias takes AS)");
            if (!po)
                return -1;
            *po = a->tk[i].off;
            a->link[i] = params++;
        } else if (is_p(a, i, a->nt, '(')) {
            stack[sp++] = i;
        } else if (is_p(a, i, a->nt, ')')) {
            if (sp == 0)
                return an_fail(a, a->tk[i].off, "unbalanced ')'");
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
        return an_fail(a, a->tk[stack[sp - 1]].off, "unbalanced '('");
    a->r.nparams = (size_t)params;
    return 0;
}

/* ============================================================ finishing */

/* A name a qualifier can mean in a scope: a table reference's alias (or
 * its name, when it has none) or a source's name.  Sorted by scope, name
 * and order, the first of a scope's names that are alike is the one SQL
 * means: tables before sources, in text order. */
typedef struct qname {
    const char *name;
    int scope;
    long tref;    /* the table reference's index, -1 for a source */
    size_t order; /* trefs' indexes, then ntrefs + the source's */
} qname_t;

static int cmp_qname_key(const qname_t *p, int scope, const char *name)
{
    if (p->scope != scope)
        return p->scope < scope ? -1 : 1;
    return an_ascii_casecmp(p->name, name);
}

static int cmp_qname(const void *x, const void *y)
{
    const qname_t *p = x, *q = y;
    int c = cmp_qname_key(p, q->scope, q->name);

    return c != 0 ? c : (p->order > q->order) - (p->order < q->order);
}

/* Every name a qualifier can mean, sorted (qname_t); NULL when out of
 * memory (the error set). */
static qname_t *qualifier_names(an_t *a)
{
    const struct dal_sql_tref *t = a->trefs.v;
    const struct dal_sql_source *src = a->sources.v;
    qname_t *v = an_scratch(a, (a->trefs.n + a->sources.n) * sizeof *v);
    size_t k;

    if (v == NULL)
        return NULL;
    for (k = 0; k < a->trefs.n; k++)
        v[k] = (qname_t){t[k].alias ? t[k].alias : t[k].name, t[k].scope,
                         t[k].alias ? -1 : (long)k, k};
    for (k = 0; k < a->sources.n; k++)
        v[a->trefs.n + k] = (qname_t){src[k].name, src[k].scope, -1, a->trefs.n + k};
    qsort(v, a->trefs.n + a->sources.n, sizeof *v, cmp_qname);
    return v;
}

/* The first of names (n, sorted) that is name in scope, or NULL. */
static const qname_t *find_qname(const qname_t *names, size_t n, int scope, const char *name)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_qname_key(&names[mid], scope, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmp_qname_key(&names[lo], scope, name) == 0 ? &names[lo] : NULL;
}

/* What the qualifier q names in scope sc or the scopes around it, as SQL
 * resolves it: the index of a table reference named q without an alias,
 * or -1 (an alias, a derived table, a common table expression, or nothing
 * dal knows: the qualifier stays as written).  names: qualifier_names. */
static long resolve_qualifier(const an_t *a, const qname_t *names, int sc, const char *q)
{
    const struct dal_sql_scope *scopes = a->scopes.v;
    size_t n = a->trefs.n + a->sources.n;
    int select_seen = 0;

    for (; sc >= 0; sc = scopes[sc].parent) {
again:;
        const qname_t *m = find_qname(names, n, sc, q);
        if (m != NULL)
            return m->tref;
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
    const qname_t *names = NULL; /* made at the first qualified column */
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
        if (names == NULL && (names = qualifier_names(a)) == NULL)
            return -1;
        n = ident_unquote(a->sql, &a->tk[i], buf, sizeof buf);
        if (n >= sizeof buf || (k = resolve_qualifier(a, names, a->tscope[i], buf)) < 0)
            continue;
        if (!(c = an_vpush(a, &a->colrefs, sizeof *c)))
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

static int cmp_name(const void *x, const void *y)
{
    return an_ascii_casecmp(*(char *const *)x, *(char *const *)y);
}

/* References to common table expressions are not tables: they become
 * sources of their scope.  The rest are put in text order. */
static int tidy_trefs(an_t *a)
{
    struct dal_sql_tref *t = a->trefs.v;
    char **cte = a->ctes.n > 0 ? an_scratch(a, a->ctes.n * sizeof *cte) : NULL;
    size_t i, n = 0;

    if (a->ctes.n > 0 && cte == NULL)
        return -1;
    if (a->ctes.n > 0) {
        memcpy(cte, a->ctes.v, a->ctes.n * sizeof *cte);
        qsort(cte, a->ctes.n, sizeof *cte, cmp_name);
    }
    for (i = 0; i < a->trefs.n; i++) {
        if (t[i].qual_len == 0 && a->ctes.n > 0 &&
            bsearch(&t[i].name, cte, a->ctes.n, sizeof *cte, cmp_name) != NULL) {
            struct dal_sql_source *s = an_vpush(a, &a->sources, sizeof *s);
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
        if ((tok_eq(a->sql, t, "NEXT") || tok_eq(a->sql, t, "PREVIOUS")) &&
            kw(a, i + 1, a->nt, K_VALUE) && kw(a, i + 2, a->nt, K_FOR))
            return 1;
        if (!is_p(a, i + 1, a->nt, '('))
            continue;
        for (f = master_functions; *f; f++)
            if (tok_eq(a->sql, t, *f))
                return 1;
    }
    return 0;
}

/* An '@' at i starts a user variable: a name or quoted name follows, it is
 * not part of '@@' (a system variable), and it does not join an account's
 * user and host (`'u'@'h'`, `u@h`: a quoted name or a word that is no
 * keyword right before it). */
static int user_var_at(const an_t *a, int i)
{
    const dal_token_t *prev = i > 0 ? &a->tk[i - 1] : NULL;
    dal_tok_type_t t;

    if (!is_p(a, i, a->nt, '@') || is_p(a, i + 1, a->nt, '@') ||
        (prev != NULL && is_p(a, i - 1, a->nt, '@')) || i + 1 >= a->nt)
        return 0;
    t = a->tk[i + 1].type;
    if (t != DAL_TOK_IDENT && t != DAL_TOK_QIDENT && t != DAL_TOK_STRING)
        return 0;
    return prev == NULL || prev->off + prev->len != a->tk[i].off ||
           !(prev->type == DAL_TOK_STRING || prev->type == DAL_TOK_QIDENT ||
             (prev->type == DAL_TOK_IDENT && a->kwid[i - 1] == K_NONE));
}

/* `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] TABLE[S] ... WITH READ LOCK` or
 * `... FOR EXPORT`: locks the session holds until UNLOCK TABLES, as LOCK
 * TABLES's. */
static int flush_locks(const an_t *a)
{
    int i = 1;

    if (a->nt < 4 || !tok_eq(a->sql, &a->tk[0], "FLUSH"))
        return 0;
    if (tok_eq(a->sql, &a->tk[i], "LOCAL") || tok_eq(a->sql, &a->tk[i], "NO_WRITE_TO_BINLOG"))
        i++;
    if (!tok_eq(a->sql, &a->tk[i], "TABLES") && !tok_eq(a->sql, &a->tk[i], "TABLE"))
        return 0;
    for (i++; i + 1 < a->nt; i++)
        if ((tok_eq(a->sql, &a->tk[i], "FOR") && tok_eq(a->sql, &a->tk[i + 1], "EXPORT")) ||
            (i + 2 < a->nt && tok_eq(a->sql, &a->tk[i], "WITH") &&
             tok_eq(a->sql, &a->tk[i + 1], "READ") && tok_eq(a->sql, &a->tk[i + 2], "LOCK")))
            return 1;
    return 0;
}

/* Statements dal does not analyse that leave state in the server session,
 * by their first words. */
static unsigned int opaque_pins(const an_t *a)
{
    int i;

    if (kw(a, 0, a->nt, K_LOCK) || flush_locks(a))
        return DAL_PIN_TABLE_LOCK;
    if (a->nt > 0 && tok_eq(a->sql, &a->tk[0], "PREPARE"))
        return DAL_PIN_PREPARE;
    if (a->nt > 0 && tok_eq(a->sql, &a->tk[0], "HANDLER"))
        for (i = 1; i < a->nt; i++)
            if (tok_eq(a->sql, &a->tk[i], "OPEN"))
                return DAL_PIN_HANDLER;
    if (a->nt > 1 && tok_eq(a->sql, &a->tk[0], "SHOW")) {
        i = tok_eq(a->sql, &a->tk[1], "SESSION") || tok_eq(a->sql, &a->tk[1], "LOCAL") ? 2 : 1;
        if (i < a->nt && tok_eq(a->sql, &a->tk[i], "STATUS"))
            return DAL_PIN_SESSION_STATUS;
    }
    /* FLUSH [LOCAL | NO_WRITE_TO_BINLOG] STATUS zeroes the counters of its
     * connection, which the session's later status reads must find */
    if (a->nt > 1 && tok_eq(a->sql, &a->tk[0], "FLUSH")) {
        i = tok_eq(a->sql, &a->tk[1], "LOCAL") || tok_eq(a->sql, &a->tk[1], "NO_WRITE_TO_BINLOG")
                ? 2 : 1;
        if (i + 1 == a->nt && tok_eq(a->sql, &a->tk[i], "STATUS"))
            return DAL_PIN_SESSION_STATUS;
    }
    return 0;
}

/* XA START | BEGIN, END, PREPARE, RECOVER, COMMIT, ROLLBACK (sql.h's
 * DAL_SQL_XA_*), or 0. */
static int xa_statement(const an_t *a)
{
    static const char *const step[] = {"END", "PREPARE", "RECOVER", NULL};
    const char *const *w;

    if (a->nt < 2 || !tok_eq(a->sql, &a->tk[0], "XA"))
        return 0;
    if (tok_eq(a->sql, &a->tk[1], "START") || tok_eq(a->sql, &a->tk[1], "BEGIN"))
        return DAL_SQL_XA_START;
    if (tok_eq(a->sql, &a->tk[1], "COMMIT") || tok_eq(a->sql, &a->tk[1], "ROLLBACK"))
        return DAL_SQL_XA_FINISH;
    for (w = step; *w != NULL; w++)
        if (tok_eq(a->sql, &a->tk[1], *w))
            return DAL_SQL_XA_STEP;
    return 0;
}

/* Token i names SESSION_STATUS, backquoted or not. */
static int session_status_name(const an_t *a, int i)
{
    char name[sizeof "SESSION_STATUS" + 1];

    if (a->tk[i].type == DAL_TOK_IDENT)
        return tok_eq(a->sql, &a->tk[i], "SESSION_STATUS");
    return a->tk[i].type == DAL_TOK_QIDENT &&
           ident_unquote(a->sql, &a->tk[i], name, sizeof name) == sizeof "SESSION_STATUS" - 1 &&
           strcasecmp(name, "SESSION_STATUS") == 0;
}

/* The tokens tk[0..n) start with a reference to the session's autocommit
 * (`@@autocommit`, `@@session.autocommit`, `@@local.autocommit`, written
 * without spaces): the number of its tokens, else 0. */
static int autocommit_ref(const char *sql, const dal_token_t *tk, int n)
{
    int k = 2;

    if (n < 3 || tk[0].type != DAL_TOK_PUNCT || sql[tk[0].off] != '@' || tk[0].len != 1 ||
        tk[1].type != DAL_TOK_PUNCT || sql[tk[1].off] != '@' || tk[1].len != 1 ||
        tk[1].off != tk[0].off + 1 || tk[2].off != tk[1].off + 1)
        return 0;
    if (n >= 5 && (tok_eq(sql, &tk[2], "SESSION") || tok_eq(sql, &tk[2], "LOCAL")) &&
        tk[3].type == DAL_TOK_PUNCT && sql[tk[3].off] == '.' && tk[3].len == 1 &&
        tk[3].off == tk[2].off + tk[2].len && tk[4].off == tk[3].off + 1)
        k = 4;
    return tok_eq(sql, &tk[k], "AUTOCOMMIT") ? k + 1 : 0;
}

size_t sql_autocommit_refs(const dal_sql_t *sql, dal_sql_span_t *out, size_t cap)
{
    dal_token_t tk[5], t;
    dal_lexer_t lx;
    size_t n = 0;
    int nt = 0, k, end;

    lex_init(&lx, sql->text, sql->len, sql->no_backslash);
    for (;;) {
        t = lex_next(&lx);
        end = t.type == DAL_TOK_EOF || t.type == DAL_TOK_ERROR;
        if (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT || t.type == DAL_TOK_VC_OPEN ||
            t.type == DAL_TOK_VC_CLOSE)
            continue;
        if (!end)
            tk[nt++] = t;
        /* a full window of tokens (all that is left at the end): is a
         * reference at its start? */
        while (nt == 5 || (end && nt > 0)) {
            if ((k = autocommit_ref(sql->text, tk, nt)) > 0) {
                if (n < cap) {
                    out[n].off = tk[0].off;
                    out[n].len = tk[k - 1].off + tk[k - 1].len - tk[0].off;
                }
                n++;
            } else {
                k = 1;
            }
            memmove(tk, tk + k, (size_t)(nt - k) * sizeof *tk);
            nt -= k;
        }
        if (end)
            return n;
    }
}

/* One pass over the tokens for what a function call or a variable tells:
 * the pins of the statement (sql.h), and for a SELECT whether it needs
 * the master (calls_master_function). */
static void session_state(an_t *a)
{
    int i;

    a->r.pins |= opaque_pins(a);
    if ((a->r.xa = xa_statement(a)) == DAL_SQL_XA_START)
        a->r.pins |= DAL_PIN_XA;
    for (i = 0; i < a->nt; i++) {
        if (user_var_at(a, i))
            a->r.pins |= DAL_PIN_USER_VAR;
        else if (a->tk[i].type == DAL_TOK_IDENT && tok_eq(a->sql, &a->tk[i], "GET_LOCK") &&
                 is_p(a, i + 1, a->nt, '('))
            a->r.pins |= DAL_PIN_NAMED_LOCK;
        else if (i > 0 && is_p(a, i - 1, a->nt, '.') && session_status_name(a, i))
            a->r.pins |= DAL_PIN_SESSION_STATUS;
        else if (is_p(a, i, a->nt, '@') && autocommit_ref(a->sql, &a->tk[i], a->nt - i) > 0)
            a->r.reads_autocommit = 1;
    }
    if (a->r.kind == DAL_SQL_SELECT)
        a->r.needs_master = calls_master_function(a);
}

static int analyse(an_t *a)
{
    size_t i;

    if (lex_all(a) || link_tokens(a))
        return -1;
    for (i = 0; i < a->hints_tk.n; i++)
        if (an_hint(a, (dal_token_t *)a->hints_tk.v + i))
            return -1;
    if (an_new_scope(a, DAL_SCOPE_STATEMENT, 0, 0) < 0) /* scope 0, always there */
        return -1;
    ((struct dal_sql_scope *)a->scopes.v)[0].parent = -1;
    if (a->r.kind == DAL_SQL_MULTI)
        return 0;
    if (a->nt == 0)
        return an_fail(a, a->len, "empty statement");
    if (an_statement(a, 0, a->nt) || tidy_trefs(a))
        return -1;
    session_state(a);
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
    STR(it, column, a->items, struct dal_sql_item)
    STR(it, qualifier, a->items, struct dal_sql_item)
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
    atomic_init(&s->sprep_state, 0);
    atomic_init(&s->shape_state, 0);
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

int sql_analyse(const char *sql, size_t len, int no_backslash, dal_sql_t **out, char *errbuf,
                size_t errcap)
{
    union { max_align_t align; char b[SCRATCH_STACK]; } stack;
    an_t a;
    out_t o = {NULL, 0};
    size_t size;
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
    a.r.no_backslash = no_backslash != 0;
    if (errcap > 0)
        errbuf[0] = '\0';
    if (len > INT32_MAX) {
        an_fail(&a, 0, "statement too long");
        goto done;
    }
    if (analyse(&a))
        goto done;
    emit(&a, &o);
    if (!(o.base = malloc(o.used))) {
        an_oom(&a);
        goto done;
    }
    size = o.used;
    o.used = 0;
    *out = emit(&a, &o);
    (*out)->size = size;
    rc = 0;
done:
    an_scratch_free(&a.sc);
    return rc;
}

/* A tref qualified information_schema. (quoted or not, any case): a view
 * the server reads without opening a transaction. */
static int infoschema_tref(const dal_sql_t *an, const struct dal_sql_tref *t)
{
    static const char word[] = "information_schema";
    const char *q = an->text + t->qual_off;
    size_t n = t->qual_len > 0 ? t->qual_len - 1 : 0; /* without the dot */

    if (n >= 2 && q[0] == '`' && q[n - 1] == '`') {
        q++;
        n -= 2;
    }
    return n == sizeof word - 1 && strncasecmp(q, word, n) == 0;
}

int sql_reads_no_table(const dal_sql_t *an)
{
    size_t i;

    if (an->kind != DAL_SQL_SELECT || an->opaque || an->needs_master)
        return 0;
    for (i = 0; i < an->ntrefs; i++)
        if (!infoschema_tref(an, &an->trefs[i]))
            return 0;
    return 1;
}
