/*
 * route_names.c -- what a name means in a scope: the table reference a
 * qualifier names, and the sharded table reference a shard-key column is
 * the key of.  One hash lookup per scope walked (scopes nest at most
 * sql_int.h's MAX_DEPTH deep), so resolving every condition of a statement
 * costs in proportion to the statement, however many table references and
 * scopes it has.  See route_int.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "error.h"
#include "route_int.h"
#include "small.h"

enum { NAME_TABLE, NAME_KEY };

int route_is_sharded(const router_t *r, size_t k)
{
    const dal_table_t *t = r->rt->tables[k];

    return t != NULL && t->sharded;
}

/* FNV-1a over the bytes with their case bit (0x20) set: names strcasecmp
 * calls equal differ at most in that bit of their letters, in the locales
 * dal runs in (C, or a UTF-8 one for the CLI), so they hash alike. */
static uint32_t name_hash(int kind, int scope, const char *s)
{
    uint32_t h = 2166136261u ^ (uint32_t)kind ^ ((uint32_t)scope << 1);

    for (; *s; s++)
        h = (h ^ ((unsigned char)*s | 0x20u)) * 16777619u;
    return h;
}

/* The slot of (kind, scope, name): the one holding it, or the empty one
 * where it belongs. */
static route_name_t *name_slot(const router_t *r, int kind, int scope, const char *name)
{
    size_t i = name_hash(kind, scope, name) & r->names_mask;

    for (;; i = (i + 1) & r->names_mask) {
        route_name_t *s = &r->names[i];
        if (s->name == NULL ||
            (s->kind == kind && s->scope == scope && strcasecmp(s->name, name) == 0))
            return s;
    }
}

/* Record tref for (kind, scope, name) unless an earlier one holds it. */
static void name_add(router_t *r, int kind, int scope, const char *name, int32_t tref)
{
    route_name_t *s = name_slot(r, kind, scope, name);

    if (s->name != NULL)
        return;
    s->name = name;
    s->kind = kind;
    s->scope = scope;
    s->tref = tref;
}

int route_names_build(router_t *r)
{
    const dal_sql_t *sql = r->sql;
    size_t n = 2 * sql->ntrefs + sql->nsources, cap = 4, k;

    while (cap < 2 * n)
        cap *= 2;
    r->names = small_alloc(r->names_inl, ROUTE_NAMES_INLINE, cap, sizeof *r->names, 1);
    if (r->names == NULL)
        return err_set(r->err, DAL_ENOMEM, "out of memory");
    r->names_mask = cap - 1;
    /* in text order: the first of a scope's tables of one name is the one
     * SQL means; a table hides a derived table or CTE of the same name */
    for (k = 0; k < sql->ntrefs; k++) {
        const struct dal_sql_tref *t = &sql->trefs[k];
        name_add(r, NAME_TABLE, t->scope, t->alias ? t->alias : t->name, (int32_t)k);
        if (route_is_sharded(r, k))
            name_add(r, NAME_KEY, t->scope, r->rt->tables[k]->cfg->shard_key, (int32_t)k);
    }
    for (k = 0; k < sql->nsources; k++)
        name_add(r, NAME_TABLE, sql->sources[k].scope, sql->sources[k].name, -1);
    return 0;
}

void route_names_free(router_t *r)
{
    small_free(r->names, r->names_inl);
    r->names = NULL;
}

/* The table reference the qualifier q names, seen from scope sc (an alias,
 * or the name of a table that has none), or -1: a derived table, a common
 * table expression, or nothing dal knows.  *at gets the scope it is in. */
static long qualified_tref(const router_t *r, int sc, const char *q, int *at)
{
    for (; sc >= 0; sc = r->sql->scopes[sc].parent) {
        const route_name_t *s = name_slot(r, NAME_TABLE, sc, q);
        if (s->name != NULL) {
            *at = sc;
            return s->tref;
        }
    }
    return -1;
}

/* The first sharded table of scope sc, written before offset before (0:
 * anywhere), whose shard key is col; -1 if none.  Table references are in
 * text order (sql.h), so when the first of the scope with that key is not
 * before the offset, none is. */
static long unqualified_tref(const router_t *r, int sc, const char *col, uint32_t before)
{
    const route_name_t *s = name_slot(r, NAME_KEY, sc, col);

    if (s->name == NULL || (before != 0 && r->sql->trefs[s->tref].off >= before))
        return -1;
    return s->tref;
}

long route_key_tref(const router_t *r, int sc, const char *q, const char *col,
                     uint32_t before, int own)
{
    long t;
    int at = -1;

    if (q == NULL)
        return unqualified_tref(r, sc, col, before);
    t = qualified_tref(r, sc, q, &at);
    if (t < 0 || (own && at != sc) || !route_is_sharded(r, (size_t)t) ||
        strcasecmp(col, r->rt->tables[t]->cfg->shard_key) != 0)
        return -1;
    return t;
}
