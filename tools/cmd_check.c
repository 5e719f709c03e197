/*
 * cmd_check.c -- `dal check`: validate a configuration file.
 *
 * The verdict is the library's (dal_check_config does all of dal_open but
 * keep the handle), so `dal check` can never pass a file that dal_open
 * would refuse.
 */
#include "cli.h"

#include <stdio.h>

/* "ok" and, on failure, "error":{code, message} into the open object. */
static void json_verdict(json_t *j, int rc, const dal_error_t *err)
{
    json_key(j, "ok");
    json_bool(j, rc == 0);
    if (rc >= 0)
        return;
    json_key(j, "error");
    json_object_begin(j);
    json_key(j, "code");
    json_string(j, dal_strerror(rc));
    json_key(j, "message");
    json_string(j, err->message);
    json_object_end(j);
}

/* With --json the verdict is the output, so a failure is reported on
 * stdout (the exit status is 1 all the same). */
static void print_check_json(int rc, const dal_error_t *err)
{
    json_t j;

    json_init(&j, stdout);
    json_object_begin(&j);
    json_verdict(&j, rc, err);
    json_object_end(&j);
}

/* One table's columns: a line, or a key of the "columns" object. */
static void print_columns(void *user, const char *table, const char *const *cols, size_t n)
{
    json_t *j = user;
    size_t i;

    if (j != NULL) {
        json_key(j, table);
        json_array_begin(j);
        for (i = 0; i < n; i++)
            json_string(j, cols[i]);
        json_array_end(j);
        return;
    }
    printf("%s:", table);
    for (i = 0; i < n; i++)
        printf("%s %s", i ? "," : "", cols[i]);
    printf("\n");
}

/* The type of column col of table as the servers have it (SHOW COLUMNS
 * through dal: the first physical table), into out. */
static int column_type(dal_t *dal, const char *table, const char *col, char *out, size_t cap,
                       dal_error_t *err)
{
    char sql[400];
    dal_result_t *r = NULL;
    dal_value_t v = dal_str(col);
    int rc;

    snprintf(sql, sizeof sql, "SHOW COLUMNS FROM `%s` LIKE ?", table);
    rc = dal_query(dal, NULL, sql, &v, 1, &r, err);
    if (rc == 0 && (rc = dal_result_next(r, err)) == 1) {
        snprintf(out, cap, "%s", dal_result_text(r, 1, NULL));
        rc = 0;
    } else if (rc == 0) {
        rc = cli_set_error(err, DAL_EINVAL, "");
        snprintf(err->message, sizeof err->message, "table %s has no column %s (its lookup "
                 "needs it)", table, col);
    }
    dal_result_free(r);
    return rc;
}

/* --create-lookups: table's lookup tables, created through dal where
 * missing: (COL, KEY), the primary key on COL for a unique lookup, else on
 * both (docs/lookup.md). */
static int create_lookups(dal_t *dal, const char *table, json_t *j, dal_error_t *err)
{
    dal_table_info_t *ti = NULL;
    char sql[1000], ctype[128], ktype[128];
    size_t i;
    int rc = dal_table_info(dal, table, &ti, err), unique;

    for (i = 0; rc == 0 && i < dal_table_info_lookup_count(ti); i++) {
        const char *col = dal_table_info_lookup(ti, i, &unique), *key = dal_table_info_shard_key(ti);
        rc = column_type(dal, table, col, ctype, sizeof ctype, err);
        if (rc == 0)
            rc = column_type(dal, table, key, ktype, sizeof ktype, err);
        snprintf(sql, sizeof sql, "CREATE TABLE IF NOT EXISTS `%s_lookup_%s` (`%s` %s NOT NULL, "
                 "`%s` %s NOT NULL, PRIMARY KEY (`%s`%s%s%s))", table, col, col, ctype, key,
                 ktype, col, unique ? "" : ", `", unique ? "" : key, unique ? "" : "`");
        if (rc == 0)
            rc = dal_exec(dal, NULL, sql, NULL, 0, NULL, err);
        if (rc == 0 && j != NULL) {
            snprintf(sql, sizeof sql, "%s_lookup_%s", table, col);
            json_string(j, sql);
        } else if (rc == 0) {
            printf("%s_lookup_%s: ready\n", table, col);
        }
    }
    dal_table_info_free(ti);
    return rc;
}

typedef struct lookups_walk {
    dal_t *dal;
    json_t *j;
    dal_error_t *err;
    int rc;
} lookups_walk_t;

static void create_lookups_of(void *user, const char *table)
{
    lookups_walk_t *w = user;

    if (w->rc == 0)
        w->rc = create_lookups(w->dal, table, w->j, w->err);
}

/* check --online: open the file for real and ask the servers for the
 * columns dal learns. */
static int check_online(cli_t *cli, const dal_open_opts_t *opts)
{
    dal_error_t err = { 0 };
    dal_t *dal = NULL;
    json_t j;
    int rc = dal_open(cli->config, opts, &dal, &err);

    if (cli->json) {
        json_init(&j, stdout);
        json_object_begin(&j);
    } else if (rc == 0) {
        printf("%.*s: ok\n", cli_shown(cli->config), cli->config);
    }
    /* first: the columns of every table are asked for next, theirs too */
    if (rc == 0 && cli->create_lookups) {
        lookups_walk_t w = {dal, cli->json ? &j : NULL, &err, 0};
        if (cli->json) {
            json_key(&j, "lookups");
            json_array_begin(&j);
        }
        rc = dal_table_names(dal, create_lookups_of, &w, &err);
        if (rc == 0)
            rc = w.rc;
        if (cli->json)
            json_array_end(&j);
    }
    if (cli->json) {
        json_key(&j, "columns");
        json_object_begin(&j);
    }
    if (rc == 0)
        rc = dal_table_columns(dal, NULL, print_columns, cli->json ? &j : NULL, &err);
    if (cli->json)
        json_object_end(&j);
    if (cli->json) {
        json_verdict(&j, rc, &err);
        json_object_end(&j);
    } else if (rc != 0) {
        cli_fail(&err);
    }
    dal_close(dal);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}

int cmd_check(cli_t *cli)
{
    dal_open_opts_t opts;
    dal_error_t err = { 0 };
    int rc;

    cli_open_opts(cli, &opts);
    if (cli->create_lookups && !cli->online)
        return cli_usage(cli, "--create-lookups needs --online (it creates tables on the servers)");
    if (cli->online)
        return check_online(cli, &opts);
    rc = dal_check_config(cli->config, &opts, &err);
    if (cli->json)
        print_check_json(rc, &err);
    else if (rc == 0)
        printf("%.*s: ok\n", cli_shown(cli->config), cli->config);
    else
        cli_fail(&err);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}
