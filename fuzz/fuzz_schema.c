/*
 * fuzz_schema.c -- libFuzzer target for what dal-proxy reads from
 * information_schema.COLUMNS to answer COM_FIELD_LIST
 * (proxy/schema_text.h): a column's default, from the text a server sent,
 * and LIKE's matching of the wildcard a client sent; and the whole input,
 * as a client's statement, through infoschema_find (proxy/infoschema.h),
 * whose references must lie inside the text, in order, without overlap.
 *
 * An input is lines, so the seeds stay readable:
 *
 *   type flags length decimals     the column's definition, in decimal
 *   IS_NULLABLE
 *   COLUMN_DEFAULT
 *   COLUMN_TYPE
 *   pattern                        a COM_FIELD_LIST wildcard
 *   name                           a column name (64 bytes at most, as a
 *                                  server's)
 *
 * schema_like is checked against a plain recursive matcher, for
 * wildcards with at most 3 % (the plain one takes exponential time).
 *
 * A missing line, or the line \N, is SQL NULL.  Each line is a buffer of
 * its own, exactly as long as its text and NUL, so AddressSanitizer
 * reports a read past its end.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "infoschema.h"
#include "schema_text.h"

#define LINES 6
#define NAME_MAX_LEN 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* LIKE by trying every run for every %: slow (exponential in the number
 * of %), plainly right, and what schema_like must agree with. */
static bool like_ref(const char *p, const char *end, const char *s)
{
    for (; p < end; p++, s++) {
        if (*p == '%') {
            for (; *s != '\0'; s++)
                if (like_ref(p + 1, end, s))
                    return true;
            return like_ref(p + 1, end, s);
        }
        if (*p == '\\' && p + 1 < end)
            p++;
        else if (*p == '_' && *s != '\0')
            continue;
        if (*s == '\0' || tolower((unsigned char)*p) != tolower((unsigned char)*s))
            return false;
    }
    return *s == '\0';
}

static size_t count(const char *s, char c)
{
    size_t n = 0;

    for (; *s != '\0'; s++)
        n += *s == c;
    return n;
}

/* The lines of data .. end, each malloc'd and NUL-ended; NULL for \N and
 * for lines past the last. */
static void split(const char *data, const char *end, char **line)
{
    const char *nl;
    size_t i, n;

    for (i = 0; i < LINES; i++) {
        line[i] = NULL;
        if (data > end)
            continue;
        nl = memchr(data, '\n', (size_t)(end - data));
        n = (size_t)((nl != NULL ? nl : end) - data);
        if (!(n == 2 && data[0] == '\\' && data[1] == 'N') && (line[i] = malloc(n + 1)) != NULL) {
            memcpy(line[i], data, n);
            line[i][n] = '\0';
        }
        data += n + 1;
    }
}

/* The column definition from line 0: "type flags length decimals". */
static void column(const char *text, proto_column_t *col)
{
    char *end;

    memset(col, 0, sizeof *col);
    col->name = col->org_name = "c";
    if (text == NULL)
        return;
    col->type = (uint8_t)strtoul(text, &end, 10);
    col->flags = (uint16_t)strtoul(end, &end, 10);
    col->length = (uint32_t)strtoul(end, &end, 10);
    col->decimals = (uint8_t)strtoul(end, &end, 10);
}

/* The input as a client's statement, read with backslash escapes unless
 * no_backslash: every reference infoschema_find reports lies inside the
 * text, after the one before it. */
static void find_views(const char *p, size_t size, bool no_backslash)
{
    infoschema_ref_t refs[8];
    char *sql = malloc(size + 1);
    size_t i, n, end = 0;

    if (sql == NULL)
        return;
    memcpy(sql, p, size);
    sql[size] = '\0';
    n = infoschema_find(sql, size, no_backslash, refs, sizeof refs / sizeof refs[0]);
    if (n > sizeof refs / sizeof refs[0])
        abort();
    for (i = 0; i < n; i++) {
        if (refs[i].off < end || refs[i].len == 0 || refs[i].off + refs[i].len > size ||
            refs[i].view < INFOSCHEMA_TABLES || refs[i].view > INFOSCHEMA_DATABASE)
            abort();
        end = refs[i].off + refs[i].len;
    }
    free(sql);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    proto_buf_t b = PROTO_BUF_INIT;
    proto_column_t col;
    char *line[LINES], *pattern;
    size_t i, n;
    bool match;

    split(p, p + size, line);
    column(line[0], &col);
    if (schema_default(&b, &col, line[1], line[2], line[3]) && b.err != 0)
        abort();
    /* a quoted default unquotes to no more bytes than it has */
    if (line[2] != NULL && line[2][0] == '\'' && b.len > strlen(line[2]))
        abort();
    if (line[4] != NULL && line[5] != NULL && (n = strlen(line[4])) > 0 &&
        (pattern = malloc(n)) != NULL) {
        /* the wildcard is not NUL-ended in the client's packet either */
        memcpy(pattern, line[4], n);
        if (strlen(line[5]) > NAME_MAX_LEN)
            line[5][NAME_MAX_LEN] = '\0';
        match = schema_like(pattern, pattern + n, line[5]);
        /* like_ref's time is exponential in the number of % */
        if (count(line[4], '%') <= 3 && match != like_ref(pattern, pattern + n, line[5]))
            abort();
        free(pattern);
    }
    proto_buf_free(&b);
    for (i = 0; i < LINES; i++)
        free(line[i]);
    /* in both sql_modes: where a string ends differs */
    find_views(p, size, false);
    find_views(p, size, true);
    return 0;
}
