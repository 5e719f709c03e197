/*
 * cmd_idgen.c -- `dal idgen`: set up the tables of the ID generators, and
 * draw IDs from one.
 *
 *     dal -c FILE idgen init [--datasource NAME] [--json]
 *     dal -c FILE idgen next NAME [N] [--json]
 *
 * Both are thin: the library does the work (dal_setup_idgens,
 * dal_next_ids), so the program and applications behave the same.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* More would only be a mistake: each ID is 8 bytes of memory first. */
#define IDGEN_NEXT_MAX 1000000

/* ------------------------------------------------------------------ init */

typedef struct init_out {
    int json;
    json_t j;
} init_out_t;

static void print_setup(void *user, const char *idgen, const char *datasource,
                        const char *table, const char *key, int created)
{
    init_out_t *o = user;

    if (!o->json) {
        if (table == NULL)
            printf("%s: nothing to set up\n", idgen);
        else if (key != NULL)
            printf("%s: %s on %s: biz tag '%s' %s\n", idgen, table, datasource, key,
                   created ? "created" : "exists");
        else
            printf("%s: %s on %s: worker ids %s\n", idgen, table, datasource,
                   created ? "created" : "exist");
        return;
    }
    json_object_begin(&o->j);
    json_key(&o->j, "idgen");
    json_string(&o->j, idgen);
    json_key(&o->j, "datasource");
    json_string(&o->j, datasource);
    json_key(&o->j, "table");
    json_string(&o->j, table);
    json_key(&o->j, "key");
    json_string(&o->j, key);
    json_key(&o->j, "created");
    json_bool(&o->j, created);
    json_object_end(&o->j);
}

static int idgen_init(dal_t *dal, const cli_t *cli, dal_error_t *err)
{
    init_out_t o;
    int rc;

    o.json = cli->json;
    if (o.json) {
        json_init(&o.j, stdout);
        json_object_begin(&o.j);
        json_key(&o.j, "idgens");
        json_array_begin(&o.j);
    }
    rc = dal_setup_idgens(dal, cli->datasource, print_setup, &o, err);
    if (o.json) {
        /* closed even after an error, so that what was done stays readable */
        json_array_end(&o.j);
        json_object_end(&o.j);
    }
    return rc;
}

/* ------------------------------------------------------------------ next */

static int parse_count(const char *text, size_t *n)
{
    char *end;
    unsigned long v;

    if (text[0] < '0' || text[0] > '9')
        return -1;
    v = strtoul(text, &end, 10);
    if (*end != '\0' || v < 1 || v > IDGEN_NEXT_MAX)
        return -1;
    *n = v;
    return 0;
}

static void print_ids(const char *name, const int64_t *ids, size_t n, int json)
{
    json_t j;
    size_t i;

    if (!json) {
        for (i = 0; i < n; i++)
            printf("%lld\n", (long long)ids[i]);
        return;
    }
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "idgen");
    json_string(&j, name);
    json_key(&j, "ids");
    json_array_begin(&j);
    for (i = 0; i < n; i++)
        json_int(&j, ids[i]);
    json_array_end(&j);
    json_object_end(&j);
}

static int idgen_next(dal_t *dal, const char *name, size_t n, int json, dal_error_t *err)
{
    int64_t *ids = calloc(n, sizeof *ids);
    int rc;

    if (ids == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    rc = dal_next_ids(dal, name, ids, n, err);
    if (rc == 0)
        print_ids(name, ids, n, json);
    free(ids);
    return rc;
}

/* -------------------------------------------------------------- command */

/* The subcommand's arguments are right; *n is next's count. */
static int check_args(const cli_t *cli, int *is_init, size_t *n)
{
    const char *sub = cli->nargs > 0 ? cli->args[0] : NULL;

    *n = 1;
    if (sub == NULL)
        return cli_usage(cli, "'idgen' needs a subcommand: init or next");
    *is_init = strcmp(sub, "init") == 0;
    if (*is_init)
        return cli->nargs == 1 ? CLI_OK : cli_usage(cli, "unexpected argument '%s'", cli->args[1]);
    if (strcmp(sub, "next") != 0)
        return cli_usage(cli, "unknown subcommand '%s' (init or next)", sub);
    if (cli->datasource != NULL)
        return cli_usage(cli, "option '--datasource' applies to 'idgen init' only");
    if (cli->nargs < 2)
        return cli_usage(cli, "'idgen next' needs the NAME of an [idgen NAME] section");
    if (cli->nargs == 3 && parse_count(cli->args[2], n) != 0)
        return cli_usage(cli, "N must be a whole number from 1 to %d, not '%s'", IDGEN_NEXT_MAX,
                         cli->args[2]);
    return CLI_OK;
}

int cmd_idgen(cli_t *cli)
{
    dal_error_t err = { 0 };
    dal_t *dal = NULL;
    int is_init = 0, rc;
    size_t n;

    rc = check_args(cli, &is_init, &n);
    if (rc != CLI_OK)
        return rc;
    rc = cli_open(cli, &dal);
    if (rc != CLI_OK)
        return rc;
    if ((is_init ? idgen_init(dal, cli, &err) : idgen_next(dal, cli->args[1], n, cli->json, &err))
        < 0)
        rc = cli_fail(&err);
    dal_close(dal);
    return rc;
}
