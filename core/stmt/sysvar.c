/*
 * sysvar.c -- a dal session's own system variables read back (sysvar.h).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "rewrite.h"
#include "sysvar.h"

/* References of a statement looked at without an allocation. */
#define REFS_INLINE 8

/* " AS `text`" for the len bytes at text, a backtick doubled; NULL
 * without memory. */
static char *alias_of(const char *text, size_t len)
{
    char *a = malloc(sizeof " AS ``" + 2 * len), *p;
    size_t i;

    if (a == NULL)
        return NULL;
    p = a + sizeof " AS `" - 1;
    memcpy(a, " AS `", sizeof " AS `" - 1);
    for (i = 0; i < len; i++) {
        if (text[i] == '`')
            *p++ = '`';
        *p++ = text[i];
    }
    *p++ = '`';
    *p = '\0';
    return a;
}

/* Does one of the n refs start inside [off, off+len)? */
static int holds_ref(const dal_sql_span_t *refs, size_t n, uint32_t off, uint32_t len)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (refs[i].off >= off && refs[i].off < off + len)
            return 1;
    return 0;
}

/* The edits of the n refs into e: the values, then the select items'
 * names.  0, or -1 without memory. */
static int ref_edits(const dal_sql_t *sql, const dal_sql_span_t *refs, size_t n, dal_edits_t *e)
{
    const struct dal_sql_item *it;
    size_t i;

    for (i = 0; i < n; i++)
        if (edits_add(e, refs[i].off, refs[i].len, strdup("TRUNCATE(@@autocommit, -1)")) != 0)
            return -1;
    for (i = 0; sql->kind == DAL_SQL_SELECT && i < sql->nitems; i++) {
        it = &sql->items[i];
        if (it->alias == NULL && !it->star && holds_ref(refs, n, it->off, it->len) &&
            edits_add(e, it->off + it->len, 0, alias_of(sql->text + it->off, it->len)) != 0)
            return -1;
    }
    return 0;
}

int sysvar_autocommit_off(dal_stmt_t *st, dal_error_t *err)
{
    dal_sql_span_t inl[REFS_INLINE], *refs = inl;
    dal_edits_t e = {NULL, 0};
    size_t n = sql_autocommit_refs(st->sql, inl, REFS_INLINE), i;
    int rc = 0;

    if (n > REFS_INLINE && (refs = malloc(n * sizeof *refs)) != NULL)
        sql_autocommit_refs(st->sql, refs, n);
    if (refs == NULL || ref_edits(st->sql, refs, n, &e) != 0)
        rc = -1;
    /* the merge's after these: at one offset an item's name comes before
     * the columns the merge adds there */
    for (i = 0; rc == 0 && i < st->edits.n; i++) {
        rc = edits_add(&e, st->edits.items[i].off, st->edits.items[i].len,
                       st->edits.items[i].text);
        st->edits.items[i].text = NULL;
    }
    if (refs != inl)
        free(refs);
    if (rc == 0) {
        edits_sort(&e);
        rc = edits_coalesce(&e);
    }
    edits_clear(&st->edits);
    st->edits = e;
    st->rt.merge_edits = e.n > 0 ? &st->edits : NULL;
    st->rt.sprep = 0;
    return rc == 0 ? 0 : err_set(err, DAL_ENOMEM, "out of memory");
}
