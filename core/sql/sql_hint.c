/*
 * sql_hint.c -- dal hints: key=value pairs in a hint comment opened by `dal`.  See sql_int.h.
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

/* ============================================================ hints */

static int hint_keych(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

/* One value at p (quoted or bare); stores a scratch copy in *val.  NULL
 * when malformed, or when it holds a NUL byte (values are C strings: a
 * NUL would cut one short).  A hint is dal's syntax inside a comment, which
 * no sql_mode reads: its quotes take backslash escapes in any mode. */
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
        if (!(*val = an_scratch(a, (size_t)(s - p) + 1)))
            return NULL;
        sql_decode_string(p, (size_t)(s - p), 0, *val, (size_t)(s - p) + 1, &n);
        return memchr(*val, '\0', n) == NULL ? s : NULL;
    }
    while (s < end && !sql_space(*s) && *s != ',')
        s++;
    if (memchr(p, '\0', (size_t)(s - p)) != NULL)
        return NULL;
    if (!(*val = an_scratch(a, (size_t)(s - p) + 1)))
        return NULL;
    memcpy(*val, p, (size_t)(s - p));
    (*val)[s - p] = '\0';
    return s;
}

/* The keys a dal hint takes, and whether each takes a value. */
static const struct { const char *key; int value; } hint_keys[] = {
    {"shard_value", 1}, {"datasource", 1}, {"server", 1}, {"master", 0}, {"replica", 0},
    {"raw", 0}, {"transaction_mode", 1},
};

const char *sql_hint_value(const dal_sql_t *s, const char *key)
{
    size_t i;

    for (i = 0; i < s->nhints; i++)
        if (strcmp(s->hints[i].key, key) == 0)
            return s->hints[i].value;
    return NULL;
}

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
                 "datasource, server, master, replica, raw, transaction_mode)", last->key);
        return an_fail(a, at, msg);
    }
    if (hint_keys[k].value != (last->value[0] != '\0')) {
        snprintf(msg, sizeof msg, hint_keys[k].value ? "dal hint: %s needs a value (%s=...)"
                                                      : "dal hint: %s takes no value%s",
                 last->key, hint_keys[k].value ? last->key : "");
        return an_fail(a, at, msg);
    }
    for (k = 0; k + 1 < a->hints.n; k++)
        if (strcmp(h[k].key, last->key) == 0) {
            snprintf(msg, sizeof msg, "dal hint: %s given twice", last->key);
            return an_fail(a, at, msg);
        }
    return 0;
}

/* A hint comment: if its first word is `dal`, its key=value pairs.  A dal
 * hint that does not parse, or asks for what dal does not know, is an
 * error: silently ignoring what the user asked for would be worse. */
int an_hint(an_t *a, const dal_token_t *t)
{
    const char *p = a->sql + t->off + 3, *end = a->sql + t->off + t->len - 2, *k;
    struct dal_sql_hint *h;
    int first = 1;

    while (p < end && sql_space(*p))
        p++;
    if (end - p < 3 || strncasecmp(p, "dal", 3) != 0 || (end - p > 3 && !sql_space(p[3])))
        return 0;
    for (p += 3;;) {
        while (p < end && (sql_space(*p) || *p == ','))
            p++;
        if (p >= end)
            return 0;
        for (k = p; p < end && hint_keych(*p); p++)
            ;
        if (p == k)
            return an_fail(a, (size_t)(p - a->sql), "malformed dal hint");
        if (!(h = an_vpush(a, &a->hints, sizeof *h)) || !(h->key = an_scratch(a, (size_t)(p - k) + 1)))
            return -1;
        h->off = first ? t->off : t->off + t->len;
        h->len = first ? t->len : 0;
        first = 0;
        memcpy(h->key, k, (size_t)(p - k));
        h->key[p - k] = '\0';
        if (p < end && *p == '=') {
            const char *v = p + 1;
            if (!(p = hint_value(a, v, end, &h->value)))
                return a->failed ? -1 : an_fail(a, (size_t)(v - a->sql), "malformed dal hint");
        } else if (p < end && !sql_space(*p) && *p != ',') {
            return an_fail(a, (size_t)(p - a->sql), "malformed dal hint");
        } else if (!(h->value = an_scratch(a, 1))) {
            return -1;
        } else {
            h->value[0] = '\0';
        }
        if (hint_check(a, (size_t)(k - a->sql)))
            return -1;
    }
}

