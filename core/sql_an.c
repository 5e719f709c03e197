/*
 * sql_an.c -- the analyser's scratch memory, errors, keywords and operands.  See sql_int.h.
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
    if (sql_decode_string(a->sql + a->tk[i].off, a->tk[i].len, s, a->tk[i].len + 1, &n) != 0)
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

