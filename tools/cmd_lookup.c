/*
 * cmd_lookup.c -- `dal lookup`: filling and checking the lookup tables of
 * the configuration (docs/lookup.md).
 *
 *     dal -c FILE lookup verify [TABLE [COLUMN]] [--fix] [--json]
 *     dal -c FILE lookup backfill TABLE COLUMN [--chunk N] [--after KEY]
 *
 * Everything goes through dal: the table is read as a logical table, the
 * lookup table written as one, so the lookup rows land where the router
 * looks for them.
 */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* (value, shard key) pairs as "VALUE\x1fKEY" texts, sorted for search. */
typedef struct pairs {
    char **v;
    size_t n, cap;
} pairs_t;

static int pairs_add(pairs_t *p, const char *a, size_t alen, const char *b, size_t blen)
{
    char *s;

    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        char **nv = realloc(p->v, cap * sizeof *nv);
        if (nv == NULL)
            return -1;
        p->v = nv;
        p->cap = cap;
    }
    if ((s = malloc(alen + blen + 2)) == NULL)
        return -1;
    memcpy(s, a, alen);
    s[alen] = '\x1f';
    memcpy(s + alen + 1, b, blen);
    s[alen + blen + 1] = '\0';
    p->v[p->n++] = s;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and drop duplicates. */
static void pairs_sort(pairs_t *p)
{
    size_t i, j = 0;

    qsort(p->v, p->n, sizeof *p->v, cmp_str);
    for (i = 0; i < p->n; i++) {
        if (j > 0 && strcmp(p->v[j - 1], p->v[i]) == 0)
            free(p->v[i]);
        else
            p->v[j++] = p->v[i];
    }
    p->n = j;
}

static int pairs_has(const pairs_t *p, const char *s)
{
    return bsearch(&s, p->v, p->n, sizeof *p->v, cmp_str) != NULL;
}

static void pairs_free(pairs_t *p)
{
    size_t i;

    for (i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof *p);
}

/* The rows of sql (two columns, NULLs skipped) into p. */
static int read_pairs(dal_t *dal, const char *sql, const dal_value_t *params, size_t n,
                      pairs_t *p, dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = dal_query(dal, NULL, sql, params, n, &r, err);

    while (rc == 0 && (rc = dal_result_next(r, err)) == 1) {
        size_t al, bl;
        const char *a = dal_result_text(r, 0, &al), *b = dal_result_text(r, 1, &bl);
        rc = a == NULL || b == NULL || pairs_add(p, a, al, b, bl) == 0
                 ? 0
                 : cli_set_error(err, DAL_ENOMEM, "out of memory");
    }
    dal_result_free(r);
    return rc;
}

/* One lookup: its table, column, shard key, and the lookup table's name. */
typedef struct lookup {
    const char *table, *column, *key;
    char ltable[300];
    int unique;
} lookup_t;

/* text as a value: an integer when it is one (the strategies take a
 * number as one), else text (borrowed). */
static dal_value_t typed(const char *text)
{
    char *end;
    long long i;

    if (text[0] != '\0' && strlen(text) < 20) {
        i = strtoll(text, &end, 10);
        if (*end == '\0')
            return dal_int(i);
    }
    return dal_str(text);
}

/* "VALUE\x1fKEY" split into two values (pointing into s). */
static void split_pair(char *s, dal_value_t v[2])
{
    char *sep = strchr(s, '\x1f');

    *sep = '\0';
    v[0] = typed(s);
    v[1] = typed(sep + 1);
}

static void rejoin(char *s)
{
    s[strlen(s)] = '\x1f';
}

/* -------------------------------------------------------------- verify */

typedef struct verify {
    dal_t *dal;
    int fix, json;
    json_t j;
    uint64_t disagreements, fixed;
    const char *only_table, *only_column;
    int rc;
    dal_error_t *err;
} verify_t;

static void print_side(verify_t *v, const lookup_t *l, const char *what, pairs_t *list,
                       const pairs_t *other)
{
    size_t i;

    if (v->json) {
        json_key(&v->j, what);
        json_array_begin(&v->j);
    }
    for (i = 0; i < list->n; i++) {
        char *sep;
        if (pairs_has(other, list->v[i]))
            continue;
        sep = strchr(list->v[i], '\x1f');
        if (v->json) {
            json_object_begin(&v->j);
            json_key(&v->j, l->column);
            json_stringn(&v->j, list->v[i], (size_t)(sep - list->v[i]));
            json_key(&v->j, l->key);
            json_string(&v->j, sep + 1);
            json_object_end(&v->j);
        } else {
            printf("%s %s.%s: %s = %.*s, %s = %s\n", what, l->table, l->column, l->column,
                   (int)(sep - list->v[i]), list->v[i], l->key, sep + 1);
        }
    }
    if (v->json)
        json_array_end(&v->j);
}

/* --fix: a missing lookup row is added; a lookup row without a row is
 * removed once a point read by its shard key confirms there is none (a
 * writer may have added the row since the scan). */
static int fix_pair(verify_t *v, const lookup_t *l, char *pair, int missing, dal_error_t *err)
{
    char sql[800];
    dal_value_t pv[2], kv[2];
    dal_result_t *r = NULL;
    int rc;

    split_pair(pair, pv);
    if (missing) {
        snprintf(sql, sizeof sql, "INSERT IGNORE INTO `%s` (`%s`, `%s`) VALUES (?, ?)",
                 l->ltable, l->column, l->key);
        rc = dal_exec(v->dal, NULL, sql, pv, 2, NULL, err);
    } else {
        kv[0] = pv[1];
        kv[1] = pv[0];
        snprintf(sql, sizeof sql, "SELECT 1 FROM `%s` WHERE `%s` = ? AND `%s` = ? LIMIT 1",
                 l->table, l->key, l->column);
        rc = dal_query(v->dal, NULL, sql, kv, 2, &r, err);
        if (rc == 0)
            rc = dal_result_next(r, err);
        dal_result_free(r);
        if (rc == 0) {
            snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE `%s` = ? AND `%s` = ?",
                     l->ltable, l->column, l->key);
            rc = dal_exec(v->dal, NULL, sql, pv, 2, NULL, err);
        } else if (rc == 1) {
            rc = 0;
        }
    }
    rejoin(pair);
    v->fixed += rc == 0;
    return rc;
}

static int verify_one(verify_t *v, const lookup_t *l, dal_error_t *err)
{
    pairs_t rows = {0}, lrows = {0};
    char sql[800];
    size_t i, missing = 0, orphans = 0;
    int rc;

    snprintf(sql, sizeof sql, "SELECT `%s`, `%s` FROM `%s` WHERE `%s` IS NOT NULL", l->column,
             l->key, l->table, l->column);
    rc = read_pairs(v->dal, sql, NULL, 0, &rows, err);
    snprintf(sql, sizeof sql, "SELECT `%s`, `%s` FROM `%s`", l->column, l->key, l->ltable);
    if (rc == 0)
        rc = read_pairs(v->dal, sql, NULL, 0, &lrows, err);
    if (rc == 0) {
        pairs_sort(&rows);
        pairs_sort(&lrows);
        for (i = 0; i < rows.n; i++)
            missing += !pairs_has(&lrows, rows.v[i]);
        for (i = 0; i < lrows.n; i++)
            orphans += !pairs_has(&rows, lrows.v[i]);
        v->disagreements += missing + orphans;
        if (v->json) {
            json_object_begin(&v->j);
            json_key(&v->j, "table");
            json_string(&v->j, l->table);
            json_key(&v->j, "column");
            json_string(&v->j, l->column);
            json_key(&v->j, "lookup_table");
            json_string(&v->j, l->ltable);
            json_key(&v->j, "values");
            json_uint(&v->j, rows.n);
            json_key(&v->j, "lookup_rows");
            json_uint(&v->j, lrows.n);
        } else {
            printf("%s.%s: %zu values, %zu lookup rows in %s: %zu missing, %zu without a row\n",
                   l->table, l->column, rows.n, lrows.n, l->ltable, missing, orphans);
        }
        print_side(v, l, "missing", &rows, &lrows);
        print_side(v, l, "orphan", &lrows, &rows);
        if (v->json)
            json_object_end(&v->j);
    }
    for (i = 0; rc == 0 && v->fix && i < rows.n; i++)
        if (!pairs_has(&lrows, rows.v[i]))
            rc = fix_pair(v, l, rows.v[i], 1, err);
    for (i = 0; rc == 0 && v->fix && i < lrows.n; i++)
        if (!pairs_has(&rows, lrows.v[i]))
            rc = fix_pair(v, l, lrows.v[i], 0, err);
    pairs_free(&rows);
    pairs_free(&lrows);
    return rc;
}

/* Each lookup of table name (a dal_name_fn): verified, unless filtered. */
static void verify_table(void *user, const char *name)
{
    verify_t *v = user;
    dal_table_info_t *ti = NULL;
    size_t i;

    if (v->rc != 0 || (v->only_table != NULL && strcmp(v->only_table, name) != 0) ||
        (v->rc = dal_table_info(v->dal, name, &ti, v->err)) != 0)
        return;
    for (i = 0; v->rc == 0 && i < dal_table_info_lookup_count(ti); i++) {
        lookup_t l = {name, dal_table_info_lookup(ti, i, NULL), dal_table_info_shard_key(ti),
                      "", 0};
        if (v->only_column != NULL && strcmp(v->only_column, l.column) != 0)
            continue;
        snprintf(l.ltable, sizeof l.ltable, "%s_lookup_%s", name, l.column);
        v->rc = verify_one(v, &l, v->err);
    }
    dal_table_info_free(ti);
}

static int lookup_verify(cli_t *cli, dal_t *dal, size_t first, dal_error_t *err)
{
    verify_t v = {.dal = dal, .json = cli->json, .err = err};
    size_t i;
    int rc;

    for (i = first; i < cli->nargs; i++) {
        if (strcmp(cli->args[i], "--fix") == 0)
            v.fix = 1;
        else if (cli->args[i][0] == '-')
            return cli_usage(cli, "unknown lookup verify option '%s'", cli->args[i]);
        else if (v.only_table == NULL)
            v.only_table = cli->args[i];
        else if (v.only_column == NULL)
            v.only_column = cli->args[i];
        else
            return cli_usage(cli, "unexpected argument '%s'", cli->args[i]);
    }
    if (v.json) {
        json_init(&v.j, stdout);
        json_object_begin(&v.j);
        json_key(&v.j, "lookups");
        json_array_begin(&v.j);
    }
    rc = dal_table_names(dal, verify_table, &v, err);
    if (rc == 0)
        rc = v.rc;
    if (v.json) {
        json_array_end(&v.j);
        json_key(&v.j, "disagreements");
        json_uint(&v.j, v.disagreements);
        json_key(&v.j, "fixed");
        json_uint(&v.j, v.fixed);
        json_object_end(&v.j);
        printf("\n");
    } else {
        printf("%llu disagreement(s)%s\n", (unsigned long long)v.disagreements,
               v.fix ? ", fixed" : "");
    }
    if (rc != 0)
        return cli_fail(err);
    return v.disagreements > 0 && !v.fix ? CLI_FAIL : CLI_OK;
}

/* ------------------------------------------------------------ backfill */

/* Add the lookup rows of pairs p (INSERT IGNORE: a row already there is
 * left alone). */
static int insert_pairs(dal_t *dal, const lookup_t *l, pairs_t *p, dal_error_t *err)
{
    char sql[800];
    size_t i;
    int rc = 0;

    snprintf(sql, sizeof sql, "INSERT IGNORE INTO `%s` (`%s`, `%s`) VALUES (?, ?)", l->ltable,
             l->column, l->key);
    for (i = 0; rc == 0 && i < p->n; i++) {
        dal_value_t pv[2];
        split_pair(p->v[i], pv);
        rc = dal_exec(dal, NULL, sql, pv, 2, NULL, err);
        rejoin(p->v[i]);
    }
    return rc;
}

/*
 * Chunks in shard key order: the next `chunk` rows after key `after`, then
 * the rest of the last key's rows (a point read by the shard key), so a
 * chunk ends at a key boundary and `--after KEY` resumes exactly there.
 */
static int backfill(dal_t *dal, const lookup_t *l, uint64_t chunk, const char *after,
                    dal_error_t *err)
{
    char sql[800], last[256];
    uint64_t total = 0;
    int rc = 0, started = after != NULL;

    snprintf(last, sizeof last, "%s", after ? after : "");
    for (;;) {
        pairs_t p = {0};
        dal_value_t kv = typed(last);
        size_t i;
        snprintf(sql, sizeof sql, "SELECT `%s`, `%s` FROM `%s` WHERE `%s` IS NOT NULL%s%s%s "
                 "ORDER BY `%s` LIMIT %llu", l->column, l->key, l->table, l->column,
                 started ? " AND `" : "", started ? l->key : "", started ? "` > ?" : "",
                 l->key, (unsigned long long)chunk);
        rc = read_pairs(dal, sql, &kv, started ? 1 : 0, &p, err);
        if (rc != 0 || p.n == 0) {
            pairs_free(&p);
            break;
        }
        /* the last key of the chunk, whole */
        snprintf(last, sizeof last, "%s", strchr(p.v[p.n - 1], '\x1f') + 1);
        snprintf(sql, sizeof sql, "SELECT `%s`, `%s` FROM `%s` WHERE `%s` = ? AND `%s` IS NOT "
                 "NULL", l->column, l->key, l->table, l->key, l->column);
        kv = typed(last);
        rc = read_pairs(dal, sql, &kv, 1, &p, err);
        if (rc == 0) {
            pairs_sort(&p);
            rc = insert_pairs(dal, l, &p, err);
        }
        total += p.n;
        i = p.n;
        pairs_free(&p);
        if (rc != 0)
            break;
        started = 1;
        printf("%s.%s: %llu values so far, up to %s = %s (resume: --after %s)\n", l->table,
               l->column, (unsigned long long)total, l->key, last, last);
        fflush(stdout);
        (void)i;
    }
    if (rc == 0)
        printf("%s.%s: done, %llu values\n", l->table, l->column, (unsigned long long)total);
    return rc;
}

static int lookup_backfill(cli_t *cli, dal_t *dal, dal_error_t *err)
{
    dal_table_info_t *ti = NULL;
    lookup_t l = {0};
    uint64_t chunk = 1000;
    const char *after = NULL;
    size_t i, n;
    int rc, found = 0;

    if (cli->nargs < 3)
        return cli_usage(cli, "lookup backfill needs TABLE COLUMN");
    for (i = 3; i < cli->nargs; i++) {
        char *end;
        if (strcmp(cli->args[i], "--chunk") == 0 && i + 1 < cli->nargs) {
            chunk = strtoull(cli->args[++i], &end, 10);
            if (*end != '\0' || chunk == 0 || chunk > 1000000)
                return cli_usage(cli, "--chunk takes a number of rows, 1 to 1000000");
        } else if (strcmp(cli->args[i], "--after") == 0 && i + 1 < cli->nargs) {
            after = cli->args[++i];
        } else {
            return cli_usage(cli, "unknown lookup backfill argument '%s'", cli->args[i]);
        }
    }
    if ((rc = dal_table_info(dal, cli->args[1], &ti, err)) != 0)
        return cli_fail(err);
    l.table = dal_table_info_name(ti);
    l.key = dal_table_info_shard_key(ti);
    n = dal_table_info_lookup_count(ti);
    for (i = 0; i < n; i++)
        if (strcmp(dal_table_info_lookup(ti, i, &l.unique), cli->args[2]) == 0) {
            l.column = dal_table_info_lookup(ti, i, &l.unique);
            found = 1;
        }
    if (!found) {
        dal_table_info_free(ti);
        cli_errorf("table %s has no lookup on column %s (lookup = ... in its [table])",
                   cli->args[1], cli->args[2]);
        return CLI_FAIL;
    }
    snprintf(l.ltable, sizeof l.ltable, "%s_lookup_%s", l.table, l.column);
    rc = backfill(dal, &l, chunk, after, err);
    dal_table_info_free(ti);
    return rc != 0 ? cli_fail(err) : CLI_OK;
}

int cmd_lookup(cli_t *cli)
{
    const char *sub = cli->nargs > 0 ? cli->args[0] : NULL;
    dal_error_t err = {0};
    dal_t *dal = NULL;
    int rc;

    if (sub == NULL || (strcmp(sub, "verify") != 0 && strcmp(sub, "backfill") != 0))
        return cli_usage(cli, "'lookup' needs a subcommand: verify or backfill");
    if ((rc = cli_open(cli, &dal)) != CLI_OK)
        return rc;
    rc = strcmp(sub, "verify") == 0 ? lookup_verify(cli, dal, 1, &err)
                                    : lookup_backfill(cli, dal, &err);
    dal_close(dal);
    return rc;
}
