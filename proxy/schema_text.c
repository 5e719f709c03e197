/*
 * schema_text.c -- information_schema.COLUMNS' text turned into what
 * COM_FIELD_LIST answers (see schema_text.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "schema_text.h"

/* Whether the pattern element at *p (a character, _, or \ and the
 * character it escapes) matches c; *p past it. */
static bool like_one(const char **p, const char *end, char c)
{
    const char *q = *p;
    bool any = *q == '_';

    if (*q == '\\' && q + 1 < end)
        q++;
    *p = q + 1;
    return any || tolower((unsigned char)*q) == tolower((unsigned char)c);
}

/*
 * LIKE's matching, without case: % any run, _ one character, \ escapes.
 * A mismatch goes back only to the last %, letting it take one character
 * more: what an earlier % took never needs to change, since the last one
 * can take anything that would.  So the time is length of p times length
 * of s; trying every run for every % would be exponential in the number
 * of %, and the wildcard is the client's.
 */
bool schema_like(const char *p, const char *end, const char *s)
{
    const char *star = NULL, *from = NULL;   /* after the last %; where its run ends */

    while (*s != '\0') {
        if (p < end && *p == '%') {
            star = ++p;
            from = s;
        } else if (p < end && like_one(&p, end, *s)) {
            s++;
        } else if (star != NULL) {
            p = star;
            s = ++from;
        } else {
            return false;
        }
    }
    while (p < end && *p == '%')
        p++;
    return p == end;
}

/* A string as information_schema quotes it, at *p ('it''s', with \\, \0,
 * \n and \r escaped): its text into b, *p past it. */
static void put_unquoted(proto_buf_t *b, const char **p)
{
    const char *s = *p + 1;

    for (; *s != '\0' && (*s != '\'' || s[1] == '\''); s++) {
        if (*s == '\'')
            s++;
        else if (*s == '\\' && s[1] != '\0')
            switch (*++s) {
            case '0': proto_put_u8(b, 0); continue;
            case 'n': proto_put_u8(b, '\n'); continue;
            case 'r': proto_put_u8(b, '\r'); continue;
            }
        proto_put_u8(b, (uint8_t)*s);
    }
    *p = *s == '\'' ? s + 1 : s;
}

/* The binary digits at digits as the bytes of a BIT(length) value, high
 * byte first, as a server sends BIT in text rows.  A BIT has 64 bits at
 * most: a longer length is a column that is not BIT (MariaDB writes no
 * bit literal for one, but another server may), whose display width can
 * be 4 GB, so it gets 8 bytes too. */
static void put_bits(proto_buf_t *b, const char *digits, uint32_t length)
{
    uint64_t v = 0;
    size_t n = ((length < 64 ? length : 64) + 7) / 8;

    for (; *digits == '0' || *digits == '1'; digits++)
        v = v << 1 | (uint64_t)(*digits - '0');
    while (n-- > 0)
        proto_put_u8(b, (uint8_t)(v >> (8 * n)));
}

/* What a NOT NULL column without a default holds in the table's default
 * row, as a server writes it: zero (with the column's decimals, padded
 * under ZEROFILL), the zero date or time, an ENUM's first member (from
 * type, information_schema's COLUMN_TYPE), else empty. */
static void put_zero(proto_buf_t *b, const proto_column_t *col, const char *type)
{
    char buf[128];
    const char *zero = "0", *q;
    int n;

    switch (col->type) {
    case PROTO_TYPE_DATE: case PROTO_TYPE_NEWDATE:
        zero = "0000-00-00";
        break;
    case PROTO_TYPE_DATETIME: case PROTO_TYPE_DATETIME2:
    case PROTO_TYPE_TIMESTAMP: case PROTO_TYPE_TIMESTAMP2:
        zero = "0000-00-00 00:00:00";
        break;
    case PROTO_TYPE_TIME: case PROTO_TYPE_TIME2:
        zero = "00:00:00";
        break;
    case PROTO_TYPE_DECIMAL: case PROTO_TYPE_NEWDECIMAL: case PROTO_TYPE_FLOAT:
    case PROTO_TYPE_DOUBLE: case PROTO_TYPE_TINY: case PROTO_TYPE_SHORT:
    case PROTO_TYPE_INT24: case PROTO_TYPE_LONG: case PROTO_TYPE_LONGLONG:
    case PROTO_TYPE_YEAR:
        break;
    case PROTO_TYPE_BIT:
        put_bits(b, "", col->length);
        return;
    default:
        if ((col->flags & PROTO_ENUM_FLAG) && (q = strchr(type, '\'')) != NULL)
            put_unquoted(b, &q);
        return;
    }
    /* 31 decimals: a FLOAT or DOUBLE without a fixed scale */
    n = snprintf(buf, sizeof buf, "%s%s%.*s", zero, col->decimals > 0 && col->decimals < 31 ? "." : "",
                 col->decimals < 31 ? (int)col->decimals : 0, "000000000000000000000000000000");
    if (col->flags & PROTO_ZEROFILL_FLAG)
        for (; (uint32_t)n < col->length && n < (int)sizeof buf; n++)
            proto_put_u8(b, '0');
    proto_put_bytes(b, buf, strlen(buf));
}

/* Whether def, a COLUMN_DEFAULT, is a literal: a string ('abc'), a
 * number, a bit literal (b'101') or a hex one (X'41' or 0x41, which
 * MariaDB writes only for BLOB-family columns, whose literal defaults are
 * not sent, so their digits are never decoded); else it is none, the word
 * NULL or an expression. */
static bool is_literal(const char *def)
{
    return def != NULL && (def[0] == '\'' || ((def[0] == 'b' || def[0] == 'X') && def[1] == '\'') ||
                           isdigit((unsigned char)def[0]) || def[0] == '-' || def[0] == '.');
}

/* BLOB, TEXT, JSON and GEOMETRY: their values live outside the row, and
 * the table's default row holds none of them (a server stores a literal
 * default of one as an expression, run at each insert) */
static bool is_blob(uint8_t type)
{
    return (type >= PROTO_TYPE_TINY_BLOB && type <= PROTO_TYPE_BLOB) || type == PROTO_TYPE_JSON ||
           type == PROTO_TYPE_GEOMETRY;
}

/*
 * A column's default as a server sends it in COM_FIELD_LIST: the value the
 * column holds in the table's default row, into b; false for NULL.  def is
 * information_schema's COLUMN_DEFAULT: NULL when there is none (the zero
 * value of a NOT NULL column), the word NULL, a literal ('text', a number,
 * b'0101', X'41') or an expression.  An expression is evaluated at each
 * insert: the default row holds NULL or the zero value (a server that
 * found the expression constant holds its value there instead, which this
 * does not compute; for a BLOB-family column, the empty string).  A
 * BLOB-family column that is not NULL there holds the empty string, with
 * a literal default too (see is_blob).
 */
bool schema_default(proto_buf_t *b, const proto_column_t *col, const char *nullable,
                    const char *def, const char *type)
{
    bool literal = is_literal(def);

    if (!literal && (nullable == NULL || strcmp(nullable, "NO") != 0))
        return false;
    if (is_blob(col->type))
        return true;            /* the empty string: see is_blob */
    if (!literal)
        put_zero(b, col, type != NULL ? type : "");
    else if (def[0] == '\'')
        put_unquoted(b, &def);
    else if (def[0] == 'b')
        put_bits(b, def + 2, col->length);
    else                        /* a number (or a hex literal), as it is */
        proto_put_bytes(b, def, strlen(def));
    return b->err == 0;
}
