/*
 * cmd_reshard.c -- `dal reshard`: move a table to the layout of another
 * configuration (see reshard.h for the parts and docs/resharding.md for
 * the workflow).
 */
#include "reshard.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char cmd_reshard_synopsis[] =
    "reshard plan|copy|catchup|switch|reverse|verify|abort|abort-switch|cleanup --to NEW.ini "
    "[OPTIONS] TABLE"
    " | reshard status [--json] TABLE";

const char cmd_reshard_details[] =
    "Moves the logical TABLE from its layout in the -c configuration to its\n"
    "layout in NEW.ini (same shard key; other physical tables).  The workflow's\n"
    "state is kept in the table dal_reshard_state on a datasource, so any\n"
    "machine with the configuration sees it and a killed copy resumes.\n"
    "  plan              check NEW.ini against the table, list the tables to\n"
    "                    create and where each old table's rows go (exact counts)\n"
    "  copy              create the new tables and copy the rows in primary-key\n"
    "                    chunks, recording each source's GTID position first;\n"
    "                    run again after a failure or kill to resume\n"
    "  catchup           apply the changes made since the copy began, read from\n"
    "                    each old node's binary log (mariadb-binlog), in rounds\n"
    "                    until one takes under a second; --follow: until stopped\n"
    "  switch            hold the table's writes in every dal instance following\n"
    "                    --source (a write fence in the file), wait until every\n"
    "                    live instance acknowledges it, catch up, and put\n"
    "                    NEW.ini (which must set allow_reshard = true) in its place\n"
    "  reverse           after the switch: keep the old layout up to date from\n"
    "                    the new nodes' binary logs (from the switch on), in\n"
    "                    rounds as catchup (--follow: until stopped); --switch:\n"
    "                    then switch the instances back to the -c file's layout\n"
    "                    (it must set allow_reshard = true), as switch does\n"
    "  status            phase, rows copied per source table, rate and ETA\n"
    "  verify            compare the layouts chunk by chunk (checksums, then\n"
    "                    rows); exits 1 when a row is missing, extra or differs\n"
    "  abort             drop the new layout's tables and forget the workflow\n"
    "  abort-switch      remove the write fence a switch that died left in\n"
    "                    --source (writes go on against the old layout)\n"
    "  cleanup           after the switch: drop the old layout's tables\n"
    "  --to NEW.ini      the configuration of the new layout\n"
    "  --max-rows-per-second N  copy no faster than this (default: no limit)\n"
    "  --chunk-size N    rows per chunk (default 1000)\n"
    "  --max-lag SECONDS copy and catchup wait while a replica of a node of\n"
    "                    either layout is further behind (default: no limit)\n"
    "  --max-load VAR=N  copy and catchup wait while a master's global status\n"
    "                    VAR is above N, as Threads_running=25 (default: none)\n"
    "  --source FILE     switch, reverse --switch: the file (or store) the dal\n"
    "                    instances follow (default: -c)\n"
    "  --max-write-pause MS  switch: the longest writes are held (default 1000);\n"
    "                    a switch that cannot finish in time (an instance that\n"
    "                    does not acknowledge the fence) is abandoned\n"
    "  --fence-settle MS switch: how long after it the old nodes' logs are read\n"
    "                    for writes that missed the fence (default 300)\n"
    "  --follow          catchup, reverse: keep following the logs until\n"
    "                    SIGTERM/SIGINT\n"
    "  --switch          reverse: then switch the instances back\n"
    "  --state-datasource NAME  where the state table is (default: the datasource\n"
    "                    of the old layout's first table)\n"
    "  --json            plan, copy, status and verify print one JSON object\n";

typedef struct reshard_args {
    const char *sub;
    const char *to;
    const char *table;
} reshard_args_t;

static int parse_count(const cli_t *cli, const char *opt, const char *text, uint64_t *out,
                       int zero_ok)
{
    char *end;
    unsigned long long v;

    if (text == NULL)
        return cli_usage(cli, "%s needs a number", opt);
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || end == text || text[0] == '-' || (!zero_ok && v == 0))
        return cli_usage(cli, "%s: '%s' is not a %s number", opt, text,
                         zero_ok ? "whole" : "positive");
    *out = v;
    return CLI_OK;
}

/* --max-load VAR=N: a global status variable's name and its limit. */
static int parse_load(const cli_t *cli, rs_t *rs, const char *text)
{
    const char *eq = text ? strchr(text, '=') : NULL;
    size_t i, n = eq ? (size_t)(eq - text) : 0;

    if (n == 0 || n >= sizeof rs->load_var)
        return cli_usage(cli, "--max-load needs VARIABLE=N (as Threads_running=25)");
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)text[i]) && text[i] != '_')
            return cli_usage(cli, "--max-load: '%.*s' is not a status variable", (int)n, text);
    memcpy(rs->load_var, text, n);
    rs->load_var[n] = '\0';
    return parse_count(cli, "--max-load", eq + 1, &rs->max_load, 1);
}

static int parse_args(const cli_t *cli, rs_t *rs, reshard_args_t *a)
{
    size_t i;
    int rc = CLI_OK, switching;

    a->sub = cli->args[0];
    switching = strcmp(a->sub, "switch") == 0 || strcmp(a->sub, "reverse") == 0 ||
                strcmp(a->sub, "abort-switch") == 0;
    for (i = 1; i < cli->nargs && rc == CLI_OK; i++) {
        const char *arg = cli->args[i];
        const char *val = i + 1 < cli->nargs ? cli->args[i + 1] : NULL;
        if (strcmp(arg, "--to") == 0) {
            if ((a->to = val) == NULL)
                rc = cli_usage(cli, "--to needs a configuration file");
            i++;
        } else if (strcmp(arg, "--max-rows-per-second") == 0)
            rc = parse_count(cli, arg, val, &rs->max_rps, 1), i++;
        else if (strcmp(arg, "--follow") == 0 &&
                 (strcmp(a->sub, "catchup") == 0 || strcmp(a->sub, "reverse") == 0))
            rs->follow = 1;
        else if (strcmp(arg, "--switch") == 0 && strcmp(a->sub, "reverse") == 0)
            rs->switch_back = 1;
        else if (strcmp(arg, "--source") == 0 && switching) {
            if ((rs->source = val) == NULL)
                rc = cli_usage(cli, "--source needs a file");
            i++;
        } else if (strcmp(arg, "--max-write-pause") == 0 && switching)
            rc = parse_count(cli, arg, val, &rs->max_pause_ms, 0), i++;
        else if (strcmp(arg, "--fence-settle") == 0 && switching)
            rc = parse_count(cli, arg, val, &rs->settle_ms, 0), i++;
        else if (strcmp(arg, "--max-lag") == 0)
            rc = parse_count(cli, arg, val, &rs->max_lag, 0), i++;
        else if (strcmp(arg, "--max-load") == 0)
            rc = parse_load(cli, rs, val), i++;
        else if (strcmp(arg, "--chunk-size") == 0)
            rc = parse_count(cli, arg, val, &rs->chunk, 0), i++;
        else if (strcmp(arg, "--state-datasource") == 0) {
            if (val == NULL)
                rc = cli_usage(cli, "--state-datasource needs a datasource name");
            else
                snprintf(rs->state_ds, sizeof rs->state_ds, "%s", val);
            i++;
        } else if (arg[0] == '-' && arg[1] != '\0')
            rc = cli_usage(cli, "reshard %s: unknown option '%s'", a->sub, arg);
        else if (a->table != NULL)
            rc = cli_usage(cli, "reshard %s: unexpected argument '%s'", a->sub, arg);
        else
            a->table = arg;
    }
    if (rc != CLI_OK)
        return rc;
    if (a->table == NULL)
        return cli_usage(cli, "reshard %s needs a TABLE", a->sub);
    if (a->to == NULL && strcmp(a->sub, "status") != 0)
        return cli_usage(cli, "reshard %s needs --to NEW.ini", a->sub);
    return CLI_OK;
}

int cmd_reshard(cli_t *cli)
{
    static const struct {
        const char *name;
        int (*run)(rs_t *rs);
    } subs[] = {
        {"plan", rs_plan}, {"copy", rs_copy}, {"catchup", rs_catchup},
        {"switch", rs_switch}, {"status", rs_status},
        {"verify", rs_verify}, {"abort", rs_abort}, {"cleanup", rs_cleanup},
        {"reverse", rs_reverse}, {"abort-switch", rs_abort_switch},
    };
    reshard_args_t a;
    rs_t rs;
    size_t i;
    int rc;

    memset(&rs, 0, sizeof rs);
    memset(&a, 0, sizeof a);
    rs.chunk = 1000;
    rs.max_pause_ms = 1000;
    rs.settle_ms = 300;
    for (i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(cli->args[0], subs[i].name) == 0)
            break;
    if (i == sizeof subs / sizeof subs[0])
        return cli_usage(cli, "reshard: unknown subcommand '%s'", cli->args[0]);
    rc = parse_args(cli, &rs, &a);
    if (rc != CLI_OK)
        return rc;
    rc = rs_open(&rs, cli, a.to, a.table);
    if (rc == CLI_OK)
        rc = subs[i].run(&rs);
    rs_close(&rs);
    return rc;
}
