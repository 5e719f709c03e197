/*
 * colset.h -- a result's column description in one reference-counted
 * block, so that every result of a cached prepared statement shows the
 * same description without copying it.
 *
 * A text result keeps its MYSQL_RES, whose fields the result shows.  A
 * prepared statement's description lives in its handle, which goes back
 * to the pool with its connection while the caller still reads the
 * result: the result needs a copy that outlives the handle.  The handle's
 * reader (result_binary.c) makes that copy once, and each result takes a
 * reference to it.  A colset never changes after colset_new: a
 * description that changes (DDL) gets a new colset.
 */
#ifndef DAL_CORE_COLSET_H
#define DAL_CORE_COLSET_H

#include <mysql.h>
#include <string.h>

typedef struct colset colset_t;

/* The length of a field's text t: the library's count n when it gave
 * one, else strlen (fields made by hand may leave the counts 0). */
static inline size_t field_text_len(const char *t, unsigned int n)
{
    return t == NULL ? 0 : n != 0 ? n : strlen(t);
}

/* t[0..len) (t may be NULL: "") copied to *p as a NUL-terminated
 * string; *p moves past it.  Returns the copy. */
static inline char *field_text_put(char **p, const char *t, size_t len)
{
    char *at = *p;

    if (len > 0)
        memcpy(at, t, len);
    at[len] = '\0';
    *p += len + 1;
    return at;
}

/* MariaDB's extended type information of a column (10.5 and later, with
 * MARIADB_CLIENT_EXTENDED_METADATA, which libmariadb asks for): the data
 * type name ("point", "uuid", "inet6") and the format name ("json"). */
enum { FIELD_ATTR_TYPE_NAME = 0, FIELD_ATTR_FORMAT = 1, FIELD_ATTRS = 2 };

/* Attribute which (FIELD_ATTR_*) of f as the library holds it: *len bytes,
 * not NUL-terminated; NULL when f has none (a copy of a field keeps
 * none: colset_attr has them). */
static inline const char *field_attr(const MYSQL_FIELD *f, int which, size_t *len)
{
#ifdef MARIADB_FIELD_ATTR_LAST
    MARIADB_CONST_STRING a;

    if (mariadb_field_attr(&a, f, (enum mariadb_field_attr_t)which) == 0 && a.str != NULL &&
        a.length > 0) {
        *len = a.length;
        return a.str;
    }
#else
    (void)f;
    (void)which;
#endif
    *len = 0;
    return NULL;
}

/* Bytes of f's texts that a copy keeps (name, org_name, table,
 * org_table, db), each with its NUL. */
size_t field_text_bytes(const MYSQL_FIELD *f);

/* A copy of fields[0..n) (names, tables, schemas, types, flags, lengths;
 * not the catalog or the default) and of the attributes (FIELD_ATTR_*) of
 * attrs[0..n) (NULL: fields'), with one reference, or NULL without
 * memory. */
colset_t *colset_new(const MYSQL_FIELD *fields, const MYSQL_FIELD *attrs, unsigned int n);

/* One more reference to c (not NULL); returns c.  Any thread. */
colset_t *colset_ref(colset_t *c);

/* Drop one reference; the last frees c.  NULL is ignored.  Any thread. */
void colset_unref(colset_t *c);

/* c's fields, valid while a reference is held. */
const MYSQL_FIELD *colset_fields(const colset_t *c);

/* How many columns c describes. */
unsigned int colset_count(const colset_t *c);

/* Attribute which (FIELD_ATTR_*) of column i of c, NUL-terminated; NULL
 * when the server sent none.  Valid while a reference is held. */
const char *colset_attr(const colset_t *c, unsigned int i, int which);

/* Whether fields[0..n), with the attributes of attrs (NULL: fields'),
 * describe the columns as c does (what colset_new copies compares equal). */
int colset_same(const colset_t *c, const MYSQL_FIELD *fields, const MYSQL_FIELD *attrs,
                unsigned int n);

#endif /* DAL_CORE_COLSET_H */
