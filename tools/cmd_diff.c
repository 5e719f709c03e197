/*
 * cmd_diff.c -- `dal diff`: check a candidate configuration against the
 * running one and show what a reload would change.
 *
 * The check is the library's (dal_config_diff loads every plugin of the
 * candidate), so a file `dal diff` accepts is one dal_reload accepts.
 */
#include <string.h>

#include "cli.h"

void cli_diff_line(void *user, const char *what, const char *name, const char *change)
{
    cli_diff_out_t *o = user;

    o->n++;
    if (!o->json) {
        printf("%-10s %-24s %s\n", what, name, change);
        return;
    }
    json_object_begin(&o->j);
    json_key(&o->j, "what");
    json_string(&o->j, what);
    json_key(&o->j, "name");
    json_string(&o->j, name);
    json_key(&o->j, "change");
    json_string(&o->j, change);
    json_object_end(&o->j);
}

int cmd_diff(cli_t *cli)
{
    dal_open_opts_t opts;
    dal_error_t err = { 0 };
    cli_diff_out_t o;
    int rc;

    memset(&o, 0, sizeof o);
    o.json = cli->json;
    cli_open_opts(cli, &opts);
    if (o.json) {
        json_init(&o.j, stdout);
        json_object_begin(&o.j);
        json_key(&o.j, "changes");
        json_array_begin(&o.j);
    }
    rc = dal_config_diff(cli->config, cli->args[0], &opts, cli_diff_line, &o, &err);
    if (o.json) {
        json_array_end(&o.j);
        json_key(&o.j, "ok");
        json_bool(&o.j, rc == 0);
        if (rc < 0) {
            json_key(&o.j, "error");
            json_string(&o.j, err.message);
        }
        json_object_end(&o.j);
    } else if (rc == 0 && o.n == 0) {
        printf("no changes\n");
    }
    if (rc < 0 && !o.json)
        cli_fail(&err);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}
