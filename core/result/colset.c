/*
 * colset.c -- reference-counted column descriptions.  See colset.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "colset.h"

struct colset {
    atomic_uint refs;
    unsigned int n;
    const char *(*attrs)[FIELD_ATTRS]; /* n, in the block: each field's attributes, which
                                          the copies in fields do not carry; NULL: none */
    MYSQL_FIELD fields[];    /* n, then attrs, then their strings */
};

/* Text t (n: the library's count) copied to *p as a NUL-terminated
 * string, *p moved past it; the copy and its length in *dst, *dst_len. */
static void copy_text(char **p, const char *t, unsigned int n, char **dst,
                      unsigned int *dst_len)
{
    size_t len = field_text_len(t, n);

    *dst = field_text_put(p, t, len);
    *dst_len = (unsigned int)len;
}

size_t field_text_bytes(const MYSQL_FIELD *f)
{
    return field_text_len(f->name, f->name_length) +
           field_text_len(f->org_name, f->org_name_length) +
           field_text_len(f->table, f->table_length) +
           field_text_len(f->org_table, f->org_table_length) +
           field_text_len(f->db, f->db_length) + 5;
}

/* Bytes of the attributes of attrs[0..n) with their NULs; 0: none. */
static size_t attr_bytes(const MYSQL_FIELD *attrs, unsigned int n)
{
    size_t bytes = 0, len;
    unsigned int i;
    int w;

    for (i = 0; i < n; i++)
        for (w = 0; w < FIELD_ATTRS; w++)
            if (field_attr(&attrs[i], w, &len) != NULL)
                bytes += len + 1;
    return bytes;
}

colset_t *colset_new(const MYSQL_FIELD *fields, const MYSQL_FIELD *attrs, unsigned int n)
{
    size_t bytes = sizeof(colset_t) + (size_t)n * sizeof(MYSQL_FIELD), abytes, len;
    colset_t *c;
    unsigned int i;
    char *p;
    int w;

    if (attrs == NULL)
        attrs = fields;
    abytes = attr_bytes(attrs, n);
    if (abytes > 0)
        bytes += abytes + (size_t)n * sizeof *c->attrs;
    for (i = 0; i < n; i++)
        bytes += field_text_bytes(&fields[i]);
    if ((c = malloc(bytes)) == NULL)
        return NULL;
    atomic_init(&c->refs, 1);
    c->n = n;
    c->attrs = NULL;
    p = (char *)&c->fields[n];
    if (abytes > 0) {
        c->attrs = (const char *(*)[FIELD_ATTRS])(void *)p;
        p += (size_t)n * sizeof *c->attrs;
        for (i = 0; i < n; i++)
            for (w = 0; w < FIELD_ATTRS; w++) {
                const char *a = field_attr(&attrs[i], w, &len);
                c->attrs[i][w] = a != NULL ? field_text_put(&p, a, len) : NULL;
            }
    }
    for (i = 0; i < n; i++) {
        const MYSQL_FIELD *f = &fields[i];
        MYSQL_FIELD *d = &c->fields[i];

        memset(d, 0, sizeof *d);
        copy_text(&p, f->name, f->name_length, &d->name, &d->name_length);
        copy_text(&p, f->org_name, f->org_name_length, &d->org_name, &d->org_name_length);
        copy_text(&p, f->table, f->table_length, &d->table, &d->table_length);
        copy_text(&p, f->org_table, f->org_table_length, &d->org_table, &d->org_table_length);
        copy_text(&p, f->db, f->db_length, &d->db, &d->db_length);
        d->type = f->type;
        d->charsetnr = f->charsetnr;
        d->flags = f->flags;
        d->decimals = f->decimals;
        d->length = f->length;
        d->max_length = f->max_length;
    }
    return c;
}

const char *colset_attr(const colset_t *c, unsigned int i, int which)
{
    return c->attrs != NULL && i < c->n ? c->attrs[i][which] : NULL;
}

colset_t *colset_ref(colset_t *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

void colset_unref(colset_t *c)
{
    if (c != NULL && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        free(c);
}

const MYSQL_FIELD *colset_fields(const colset_t *c)
{
    return c->fields;
}

unsigned int colset_count(const colset_t *c)
{
    return c->n;
}

/* Whether text b (n: the library's count) equals a, a copy made by
 * copy_text (NUL-terminated, its length alen).  Column texts are short: a
 * loop beats a call to memcmp, and this runs for every execution of a
 * cached statement. */
static int same_text(const char *a, unsigned int alen, const char *b, unsigned int n)
{
    size_t i, blen = field_text_len(b, n);

    if (blen != alen)
        return 0;
    for (i = 0; i < blen; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Whether column i of c has the attributes of field b. */
static int same_attrs(const colset_t *c, unsigned int i, const MYSQL_FIELD *b)
{
    size_t len;
    int w;

    for (w = 0; w < FIELD_ATTRS; w++) {
        const char *a = colset_attr(c, i, w), *t = field_attr(b, w, &len);
        if ((a == NULL) != (t == NULL) || (a != NULL && !same_text(a, (unsigned int)strlen(a), t,
                                                                   (unsigned int)len)))
            return 0;
    }
    return 1;
}

int colset_same(const colset_t *c, const MYSQL_FIELD *fields, const MYSQL_FIELD *attrs,
                unsigned int n)
{
    unsigned int i;

    if (c->n != n)
        return 0;
    /* the numbers of every column first: a change shows there most often */
    for (i = 0; i < n; i++) {
        const MYSQL_FIELD *a = &c->fields[i], *b = &fields[i];
        if (a->type != b->type || a->charsetnr != b->charsetnr || a->flags != b->flags ||
            a->decimals != b->decimals || a->length != b->length)
            return 0;
    }
    for (i = 0; i < n; i++) {
        const MYSQL_FIELD *a = &c->fields[i], *b = &fields[i];
        if (!same_text(a->name, a->name_length, b->name, b->name_length) ||
            !same_text(a->org_name, a->org_name_length, b->org_name, b->org_name_length) ||
            !same_text(a->table, a->table_length, b->table, b->table_length) ||
            !same_text(a->org_table, a->org_table_length, b->org_table, b->org_table_length) ||
            !same_text(a->db, a->db_length, b->db, b->db_length) || !same_attrs(c, i, attrs != NULL ? &attrs[i] : b))
            return 0;
    }
    return 1;
}
