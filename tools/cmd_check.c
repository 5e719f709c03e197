/*
 * cmd_check.c -- `dal check`: validate a configuration file.
 *
 * The verdict is the library's (dal_check_config does all of dal_open but
 * keep the handle), so `dal check` can never pass a file that dal_open
 * would refuse.
 */
#include "cli.h"

/* With --json the verdict is the output, so a failure is reported on
 * stdout (the exit status is 1 all the same). */
static void print_check_json(int rc, const dal_error_t *err)
{
    json_t j;

    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "ok");
    json_bool(&j, rc == 0);
    if (rc < 0) {
        json_key(&j, "error");
        json_object_begin(&j);
        json_key(&j, "code");
        json_string(&j, dal_strerror(rc));
        json_key(&j, "message");
        json_string(&j, err->message);
        json_object_end(&j);
    }
    json_object_end(&j);
}

int cmd_check(cli_t *cli)
{
    dal_open_opts_t opts;
    dal_error_t err = { 0 };
    int rc;

    cli_open_opts(cli, &opts);
    rc = dal_check_config(cli->config, &opts, &err);
    if (cli->json)
        print_check_json(rc, &err);
    else if (rc == 0)
        printf("%s: ok\n", cli->config);
    else
        cli_fail(&err);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}
