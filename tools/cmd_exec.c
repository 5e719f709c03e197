/*
 * cmd_exec.c -- `dal exec`: run one statement and print its result.
 *
 * This file also holds the two result printers (text table and JSON) and the
 * table builder behind them; the shell and `dal plugins` use them too, so
 * every command prints alike.
 */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ------------------------------------------------------------------ tables */

/*
 * A cell is shown on one line: a newline or tab inside a value would break
 * the table, so control characters become C-style escapes.  Other bytes,
 * including invalid UTF-8, pass through (the JSON output is the exact form).
 */
static char *cell_text(const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char *out, *p;
    size_t i;

    if (len > (SIZE_MAX - 1) / 4)
        return NULL;
    out = p = malloc(len * 4 + 1); /* worst case: every byte as \xHH */
    if (out == NULL)
        return NULL;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c >= 0x20 && c != 0x7f) {
            *p++ = (char)c;
            continue;
        }
        *p++ = '\\';
        switch (c) {
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        case '\t': *p++ = 't'; break;
        case '\0': *p++ = '0'; break;
        default:
            *p++ = 'x';
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
            break;
        }
    }
    *p = '\0';
    return out;
}

/* Columns a terminal needs for s: wide (CJK) characters take two, combining
 * marks none.  Bytes that are not UTF-8, and characters the locale cannot
 * measure, count as one. */
static size_t text_width(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, w = 0, len;
    uint32_t cp;
    int cw;

    while (i < n) {
        len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            w++;
            i++;
            continue;
        }
        cw = wcwidth((wchar_t)cp);
        w += cw < 0 ? 1 : (size_t)cw;
        i += len;
    }
    return w;
}

int cli_table_init(cli_table_t *t, size_t ncols, dal_error_t *err)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->widths = calloc(ncols + 1, sizeof *t->widths);
    if (t->widths == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    return 0;
}

int cli_table_add(cli_table_t *t, const char *s, size_t len, dal_error_t *err)
{
    size_t col = t->ncells % t->ncols, w;
    char **cells, *text;

    if (t->ncells == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;

        cells = realloc(t->cells, cap * sizeof *cells);
        if (cells == NULL)
            return cli_set_error(err, DAL_ENOMEM, "out of memory");
        t->cells = cells;
        t->cap = cap;
    }
    text = s != NULL ? cell_text(s, len) : cell_text("NULL", 4);
    if (text == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    w = text_width(text);
    if (w > t->widths[col])
        t->widths[col] = w;
    t->cells[t->ncells++] = text;
    return 0;
}

size_t cli_table_rows(const cli_table_t *t)
{
    return t->ncols ? t->ncells / t->ncols - (t->ncells ? 1 : 0) : 0;
}

static void pad(FILE *out, int c, size_t n)
{
    while (n-- > 0)
        fputc(c, out);
}

static void table_rule(const cli_table_t *t, FILE *out)
{
    size_t c;

    for (c = 0; c < t->ncols; c++) {
        fputc('+', out);
        pad(out, '-', t->widths[c] + 2);
    }
    fputs("+\n", out);
}

/* Row 0 is the header.  Plain rows do not pad their last cell, so lines
 * carry no trailing blanks. */
static void table_row(const cli_table_t *t, FILE *out, size_t row, int boxed)
{
    char *const *cells = t->cells + row * t->ncols;
    size_t c;

    for (c = 0; c < t->ncols; c++) {
        int last = c + 1 == t->ncols;

        if (boxed)
            fputs("| ", out);
        else if (c > 0)
            fputs("  ", out);
        fputs(cells[c], out);
        if (boxed || !last)
            pad(out, ' ', t->widths[c] - text_width(cells[c]));
        if (boxed)
            fputc(' ', out);
    }
    fputs(boxed ? "|\n" : "\n", out);
}

void cli_table_print(const cli_table_t *t, FILE *out, int boxed)
{
    size_t r, nrows = t->ncols ? t->ncells / t->ncols : 0;

    if (nrows == 0)
        return;
    if (boxed)
        table_rule(t, out);
    table_row(t, out, 0, boxed);
    if (boxed)
        table_rule(t, out);
    for (r = 1; r < nrows; r++)
        table_row(t, out, r, boxed);
    if (boxed && nrows > 1)
        table_rule(t, out);
}

void cli_table_free(cli_table_t *t)
{
    size_t i;

    for (i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->widths);
    memset(t, 0, sizeof *t);
}

/* ----------------------------------------------------------------- results */

static int table_add_row(cli_table_t *t, const dal_result_t *r, dal_error_t *err)
{
    size_t i, len;
    const char *s;
    int rc;

    for (i = 0; i < t->ncols; i++) {
        s = dal_result_text(r, i, &len);
        rc = cli_table_add(t, s, len, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* "3 rows", "1 row", "2 rows affected" -- the footer under a result. */
static void print_count(uint64_t n, const char *what)
{
    printf("%llu %s%s", (unsigned long long)n, n == 1 ? "row" : "rows", what);
}

static void print_write(const dal_result_t *r)
{
    uint64_t id = dal_result_insert_id(r);

    print_count(dal_result_affected_rows(r), " affected");
    if (id != 0)
        printf(", insert id %llu", (unsigned long long)id);
    putchar('\n');
}

static int print_result_table(dal_result_t *r, dal_error_t *err)
{
    size_t i, ncols = dal_result_column_count(r), nodes;
    cli_table_t t;
    const char *name;
    int rc;

    if (ncols == 0) {
        print_write(r);
        return 0;
    }
    rc = cli_table_init(&t, ncols, err);
    for (i = 0; i < ncols && rc == 0; i++) {
        name = dal_result_column_name(r, i);
        rc = cli_table_add(&t, name, name ? strlen(name) : 0, err);
    }
    /* Rows are collected first: column widths depend on every row. */
    while (rc == 0 && (rc = dal_result_next(r, err)) > 0)
        rc = table_add_row(&t, r, err);
    if (rc < 0)
        goto out;
    cli_table_print(&t, stdout, 1);
    print_count(cli_table_rows(&t), "");
    nodes = dal_result_route_count(r);
    if (nodes > 1)
        printf(" from %zu data nodes", nodes);
    putchar('\n');
out:
    cli_table_free(&t);
    return rc < 0 ? rc : 0;
}

/* r's columns, rows, affected rows and insert id as keys of the open
 * object.  Values stay strings (they are text from the server; a client
 * converting DECIMAL or BIGINT UNSIGNED to a JSON number could lose
 * digits). */
static int json_result_keys(json_t *j, dal_result_t *r, dal_error_t *err)
{
    size_t i, len, ncols = dal_result_column_count(r);
    const char *s;
    int rc = 0;

    json_key(j, "columns");
    json_array_begin(j);
    for (i = 0; i < ncols; i++)
        json_string(j, dal_result_column_name(r, i));
    json_array_end(j);
    json_key(j, "rows");
    json_array_begin(j);
    while (ncols > 0 && (rc = dal_result_next(r, err)) > 0) {
        json_array_begin(j);
        for (i = 0; i < ncols; i++) {
            s = dal_result_text(r, i, &len);
            if (s != NULL)
                json_stringn(j, s, len);
            else
                json_null(j);
        }
        json_array_end(j);
    }
    if (rc < 0)
        return rc;
    json_array_end(j);
    json_key(j, "affected_rows");
    json_uint(j, dal_result_affected_rows(r));
    json_key(j, "insert_id");
    json_uint(j, dal_result_insert_id(r));
    return 0;
}

/* One object; a CALL's further results (dal_result_next_set) go in its
 * "more_results" array, each an object with the same keys. */
static int print_result_json(dal_result_t *r, dal_error_t *err)
{
    dal_result_t *n = dal_result_next_set(r);
    json_t j;
    int rc;

    json_init(&j, stdout);
    json_object_begin(&j);
    rc = json_result_keys(&j, r, err);
    if (rc == 0 && n != NULL) {
        json_key(&j, "more_results");
        json_array_begin(&j);
        for (; n != NULL && rc == 0; n = dal_result_next_set(n)) {
            json_object_begin(&j);
            if ((rc = json_result_keys(&j, n, err)) == 0)
                json_object_end(&j);
        }
        if (rc == 0)
            json_array_end(&j);
    }
    if (rc < 0) {
        /* Leave the JSON visibly unfinished rather than pass off part of
         * the rows as the whole result. */
        putchar('\n');
        return rc;
    }
    json_object_end(&j);
    return 0;
}

/* A CALL's results one after the other, as the mariadb client prints
 * them: its result sets, then its final status. */
int cli_print_result(dal_result_t *r, int json, dal_error_t *err)
{
    int rc = 0;

    if (json)
        return print_result_json(r, err);
    for (; r != NULL && rc == 0; r = dal_result_next_set(r))
        rc = print_result_table(r, err);
    return rc;
}

int cli_run_query(dal_t *dal, const dal_query_opts_t *qo, const char *sql,
                  const dal_value_t *params, size_t nparams, int json,
                  dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc;

    rc = dal_query(dal, qo, sql, params, nparams, &r, err);
    if (rc < 0)
        return rc;
    rc = cli_print_result(r, json, err);
    dal_result_free(r);
    return rc;
}

int cmd_exec(cli_t *cli)
{
    return cli_statement_command(cli, cli_run_query);
}
