/*
 * cmd_explain.c -- `dal explain`: where a statement would run.
 *
 * dal_explain routes and rewrites the statement exactly as dal_query would,
 * but contacts no server, so this works against a configuration whose
 * servers are down or not yet built.
 */
#include <string.h>

#include "cli.h"

/*
 *   dbProductSku1 (127.0.0.1:3306 master) wm_food_45: SELECT ... FROM wm_food_45 ...
 *
 * The server is the one read-write splitting chose, with its role.  A route
 * that touches no sharded table has no TABLE part.
 */
static void print_plan_text(const dal_plan_t *p)
{
    size_t i, n = dal_plan_count(p);
    const char *table;

    for (i = 0; i < n; i++) {
        table = dal_plan_table(p, i);
        if (strcmp(dal_plan_step(p, i), "route") != 0)
            printf("%s: ", dal_plan_step(p, i)); /* a read that ran to find the routes */
        printf("%s (%s %s%s)%s%s: %s\n", dal_plan_datasource(p, i), dal_plan_server(p, i),
               dal_plan_role(p, i), dal_plan_server_prepared(p, i) ? ", server-prepared" : "",
               table ? " " : "", table ? table : "", dal_plan_sql(p, i));
    }
}

static void print_plan_json(const dal_plan_t *p)
{
    size_t i, n = dal_plan_count(p);
    json_t j;

    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "kind");
    json_string(&j, dal_plan_kind(p));
    json_key(&j, "routes");
    json_array_begin(&j);
    for (i = 0; i < n; i++) {
        json_object_begin(&j);
        json_key(&j, "step");
        json_string(&j, dal_plan_step(p, i));
        json_key(&j, "datasource");
        json_string(&j, dal_plan_datasource(p, i));
        json_key(&j, "server");
        json_string(&j, dal_plan_server(p, i));
        json_key(&j, "role");
        json_string(&j, dal_plan_role(p, i));
        json_key(&j, "table");
        json_string(&j, dal_plan_table(p, i)); /* null for no sharded table */
        json_key(&j, "sql");
        json_string(&j, dal_plan_sql(p, i));
        json_key(&j, "server_prepared");
        json_bool(&j, dal_plan_server_prepared(p, i));
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
}

int cli_run_explain(dal_t *dal, const dal_query_opts_t *qo, const char *sql,
                    const dal_value_t *params, size_t nparams, int json,
                    dal_error_t *err)
{
    dal_plan_t *p = NULL;
    int rc;

    rc = dal_explain(dal, qo, sql, params, nparams, &p, err);
    if (rc < 0)
        return rc;
    if (json)
        print_plan_json(p);
    else
        print_plan_text(p);
    dal_plan_free(p);
    return 0;
}

int cmd_explain(cli_t *cli)
{
    return cli_statement_command(cli, cli_run_explain);
}
