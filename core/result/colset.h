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

/* Bytes of f's texts that a copy keeps (name, org_name, table,
 * org_table, db), each with its NUL. */
size_t field_text_bytes(const MYSQL_FIELD *f);

/* A copy of fields[0..n) (names, tables, schemas, types, flags, lengths;
 * not the catalog or the default) with one reference, or NULL without
 * memory. */
colset_t *colset_new(const MYSQL_FIELD *fields, unsigned int n);

/* One more reference to c (not NULL); returns c.  Any thread. */
colset_t *colset_ref(colset_t *c);

/* Drop one reference; the last frees c.  NULL is ignored.  Any thread. */
void colset_unref(colset_t *c);

/* c's fields, valid while a reference is held. */
const MYSQL_FIELD *colset_fields(const colset_t *c);

/* How many columns c describes. */
unsigned int colset_count(const colset_t *c);

/* Whether fields[0..n) describe the columns as c does (what colset_new
 * copies compares equal). */
int colset_same(const colset_t *c, const MYSQL_FIELD *fields, unsigned int n);

#endif /* DAL_CORE_COLSET_H */
