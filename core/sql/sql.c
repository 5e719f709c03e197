/*
 * sql.c - what a statement's analysis offers besides the pass that makes it
 * (sql_analyse.c): references, literal decoding, kind and pin names.
 * See sql.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hex.h"
#include "sql.h"
#include "thread.h"

void sql_free(dal_sql_t *s)
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

const dal_sql_t *sql_ref(const dal_sql_t *s)
{
    /* The object is never const where it was allocated; only the count
     * changes, and it is atomic. */
    atomic_fetch_add_explicit(&((dal_sql_t *)s)->refs, 1, memory_order_relaxed);
    return s;
}

void sql_unref(const dal_sql_t *s)
{
    dal_sql_t *m = (dal_sql_t *)s;

    if (m && atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
        sql_free(m);
}

const char *sql_kind_name(dal_sql_kind_t kind)
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
        int hi = hexval(b[0]), lo = hexval(b[1]);
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

/* A quoted body [b,e) (quotes excluded) with backslash escapes (none when
 * no_backslash) and doubled quotes q.  \% and \_ keep their backslash, as
 * in the server (they are LIKE escapes). */
static void decode_escaped(const char *b, const char *e, char q, int no_backslash, sink_t *k)
{
    for (; b < e; b++) {
        char c = *b;
        if (c == '\\' && !no_backslash && b + 1 < e) {
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
int sql_decode_string(const char *t, size_t n, int no_backslash, char *out, size_t cap,
                      size_t *outlen)
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
        decode_escaped(t + q + 1, t + n - 1, t[q], no_backslash, &k);
    }
    sink_end(&k, outlen);
    return rc;
}

int sql_literal_text(const char *sql, const dal_sql_opnd_t *o, char *out, size_t cap,
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
        return sql_decode_string(t, o->len, o->no_backslash, out, cap, outlen);
    /* a number (maybe "- 12") or NULL/TRUE/FALSE: the text without blanks
     * and without a unary plus */
    for (i = 0; i < o->len; i++)
        if (!sql_space(t[i]) && !(i == 0 && t[i] == '+'))
            sink_put(&k, t[i]);
    sink_end(&k, outlen);
    return 0;
}

const char *sql_pin_word(unsigned int pins)
{
    static const char *const words[] = {"user_variable", "temporary_table", "table_lock",
                                        "named_lock", "prepare", "handler",
                                        "session_status", "xa"};
    size_t i;

    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        if (pins & (1u << i))
            return words[i];
    return pins & DAL_PIN_SCHEMA ? "schema" : "none";
}

/* The statement kind as a lower-case word: dal_plan_kind and monitor events. */
const char *sql_kind_word(dal_sql_kind_t k)
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

