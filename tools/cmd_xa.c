/*
 * cmd_xa.c -- `dal xa`: the XA decision log and the branches in doubt.
 *
 *     dal -c FILE xa init
 *     dal -c FILE xa recover [--json]
 *     dal -c FILE xa list [--json]
 *
 * Thin, as cmd_idgen.c: the library does the work (dal_xa_init,
 * dal_xa_recover, dal_xa_list), so a program recovers the same way.
 */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void print_report(const dal_xa_report_t *r, int json)
{
    static const char *const names[] = {"committed", "rolled_back", "waiting", "failed",
                                        "pruned", "unreachable"};
    const unsigned v[] = {r->committed, r->rolled_back, r->waiting, r->failed, r->pruned,
                          r->unreachable};
    json_t j;
    size_t i;

    if (!json) {
        for (i = 0; i < sizeof v / sizeof v[0]; i++)
            printf("%s%s %u", i ? ", " : "", names[i], v[i]);
        printf("\n");
        return;
    }
    json_init(&j, stdout);
    json_object_begin(&j);
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        json_key(&j, names[i]);
        json_uint(&j, v[i]);
    }
    json_object_end(&j);
    printf("\n");
}

static int xa_recover(dal_t *dal, int json, dal_error_t *err)
{
    dal_xa_report_t r;
    int rc = dal_xa_recover(dal, UINT32_MAX, &r, err);

    /* what was done is shown even when a node did not answer */
    print_report(&r, json);
    return rc;
}

static const char *decision_word(char d)
{
    return d == 'C' ? "commit" : d == 'R' ? "rollback" : "none";
}

/* The lease: "lease holder=HOST:PID since=... alive=yes", or in JSON an
 * object (holder null when none took it yet). */
static void print_lease(const dal_xa_lease_t *l, json_t *j)
{
    if (j == NULL) {
        if (l->holder[0] == '\0')
            printf("lease holder=none alive=%s\n", l->locked ? "yes" : "no");
        else
            printf("lease holder=%s since=%s (%llus) alive=%s\n", l->holder,
                   l->since, (unsigned long long)l->held_s, l->alive ? "yes" : "no");
        return;
    }
    json_key(j, "lease");
    json_object_begin(j);
    json_key(j, "holder");
    if (l->holder[0] == '\0')
        json_null(j);
    else
        json_string(j, l->holder);
    json_key(j, "since");
    if (l->since[0] == '\0')
        json_null(j);
    else
        json_string(j, l->since);
    json_key(j, "held_s");
    json_uint(j, l->held_s);
    json_key(j, "alive");
    json_bool(j, l->holder[0] == '\0' ? l->locked : l->alive);
    json_object_end(j);
}

static int xa_list(dal_t *dal, int json, dal_error_t *err)
{
    dal_xa_branch_t *b = NULL;
    dal_xa_lease_t lease;
    size_t i, n = 0;
    json_t j;
    int rc = dal_xa_lease_info(dal, &lease, err);

    if (rc == 0)
        rc = dal_xa_list(dal, &b, &n, err);
    if (rc != 0)
        return rc;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j);
        print_lease(&lease, &j);
        json_key(&j, "branches");
        json_array_begin(&j);
    } else {
        print_lease(&lease, NULL);
    }
    for (i = 0; i < n; i++) {
        if (!json) {
            printf("%s %s decision=%s age=%llus\n", b[i].datasource, b[i].gtrid,
                   decision_word(b[i].decision), (unsigned long long)b[i].age_s);
            continue;
        }
        json_object_begin(&j);
        json_key(&j, "datasource");
        json_string(&j, b[i].datasource);
        json_key(&j, "gtrid");
        json_string(&j, b[i].gtrid);
        json_key(&j, "decision");
        json_string(&j, decision_word(b[i].decision));
        json_key(&j, "age_s");
        json_uint(&j, b[i].age_s);
        json_object_end(&j);
    }
    if (json) {
        json_array_end(&j);
        json_object_end(&j);
        printf("\n");
    }
    free(b);
    return 0;
}

int cmd_xa(cli_t *cli)
{
    const char *sub = cli->nargs > 0 ? cli->args[0] : NULL;
    dal_error_t err = { 0 };
    dal_t *dal = NULL;
    int rc;

    if (sub == NULL)
        return cli_usage(cli, "'xa' needs a subcommand: init, recover or list");
    if (strcmp(sub, "init") != 0 && strcmp(sub, "recover") != 0 && strcmp(sub, "list") != 0)
        return cli_usage(cli, "unknown subcommand '%s' (init, recover or list)", sub);
    if (cli->nargs > 1)
        return cli_usage(cli, "unexpected argument '%s'", cli->args[1]);
    if ((rc = cli_open(cli, &dal)) != CLI_OK)
        return rc;
    if (strcmp(sub, "init") == 0)
        rc = dal_xa_init(dal, &err);
    else if (strcmp(sub, "recover") == 0)
        rc = xa_recover(dal, cli->json, &err);
    else
        rc = xa_list(dal, cli->json, &err);
    if (rc == 0 && strcmp(sub, "init") == 0 && !cli->json)
        printf("dal_xa_log: ready\n");
    rc = rc < 0 ? cli_fail(&err) : CLI_OK;
    dal_close(dal);
    return rc;
}
