/*
 * cmd_check.c -- `dal check`: validate a configuration file.
 *
 * The verdict is the library's (dal_check_config does all of dal_open but
 * keep the handle), so `dal check` can never pass a file that dal_open
 * would refuse.
 */
#include "cli.h"

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
        json_key(&j, "columns");
        json_object_begin(&j);
    } else if (rc == 0) {
        printf("%.*s: ok\n", cli_shown(cli->config), cli->config);
    }
    if (rc == 0)
        rc = dal_table_columns(dal, NULL, print_columns, cli->json ? &j : NULL, &err);
    if (cli->json) {
        json_object_end(&j);
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
