/*
 * cmd_load.c -- `dal load`: a workload driver in the spirit of sysbench.
 *
 *     dal -c FILE load -- [OPTIONS] [WORKLOAD]
 *
 * N threads run one workload (point-select, insert, update, read-write,
 * scatter) against a sharded table for a time or a number of statements,
 * and the program prints throughput, latency percentiles and errors.
 *
 * The same workload runs either through libdal or, with --direct, through
 * plain libmysqlclient with one connection per thread per data node and the
 * physical table computed by the program itself -- what an application
 * without dal would do.  --compare alternates the two several times and
 * prints the throughput ratio of each pair and their median, because a
 * single absolute figure on a shared machine is not stable.
 *
 * This file holds the options and the command; load.h says where the rest
 * lives.  The layout --direct assumes (logical name, shard key, datasource
 * group, table and node counts) is given as options whose defaults match
 * the demo; load_direct.c checks them against dal's routing before a run.
 */
#include "load.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ help */

const char cmd_load_synopsis[] = "load [--json] -- [OPTIONS] [WORKLOAD]";

const char cmd_load_details[] =
    "Runs WORKLOAD on a sharded table through dal (or, with --direct, through\n"
    "plain libmysqlclient) and prints throughput, latency and errors.  The\n"
    "options of load come after \"--\".\n"
    "Workloads:\n"
    "  point-select      SELECT one row by shard key and id\n"
    "  insert            INSERT one row (ids from dal's idgen where configured,\n"
    "                    else AUTO_INCREMENT)\n"
    "  update            UPDATE one row by shard key and id\n"
    "  read-write        a transaction on one shard key: SELECT a row, SELECT\n"
    "                    SUM(), UPDATE, DELETE and INSERT the row again\n"
    "  scatter           SELECT by id without the shard key: every physical table\n"
    "  lookup            the same SELECT by id, where the table declares lookup = id:\n"
    "                    a point select on its lookup table, then one table\n"
    "                    (docs/lookup.md; --prepare makes the lookup table)\n"
    "Run:\n"
    "  --threads N       client threads (default 1)\n"
    "  --duration T      measure for T (10s; 500ms, 2m; bare number: seconds)\n"
    "  --statements N    or until N events in all (transactions for read-write)\n"
    "  --warmup T        run T before measuring (default 2s)\n"
    "  --rows N          rows of the table: keys 1..N (default 10000)\n"
    "  --seed N          random seed (default 1)\n"
    "  --json            one JSON object at the end\n"
    "Schema:\n"
    "  --prepare         create the table through dal and insert --rows rows\n"
    "  --cleanup         drop the table through dal at the end\n"
    "  --batch N         rows per INSERT for --prepare (default 1000)\n"
    "Layout (must match the configuration; checked for --direct):\n"
    "  --table NAME      logical table (default wm_food)\n"
    "  --shard-key COL   its shard key (default wm_poi_id)\n"
    "  --group PREFIX    datasource group (default dbProductSku)\n"
    "  --tables N        table_shard_num (default 100)\n"
    "  --dbs N           db_shard_num (default 4)\n"
    "Comparison:\n"
    "  --direct          plain libmysqlclient instead of dal (mod layout)\n"
    "  --compare         alternate dal and direct runs, print the ratios\n"
    "  --rounds N        pairs of runs for --compare (default 5)\n"
    "  --prepared        dal runs each statement through a handle made once\n"
    "                    by dal_prepare (dal_query_prepared), not its text\n"
    "  --server-prepared the direct side prepares each statement on the server\n"
    "                    once per connection and binds its values ([dal]\n"
    "                    server_prepare says what dal does)\n"
    "  --touch-lines N   the direct side also touches N cache lines of its own\n"
    "                    per statement: what a client's memory costs here\n"
    "  --busy-ns N       the direct side also busy-waits N ns per statement: what\n"
    "                    a client's CPU time costs here\n"
    "A progress line is printed every second when standard error is a\n"
    "terminal.  The exit status is 1 if any statement failed.  See docs/load.md.\n";

/* --------------------------------------------------------------- options */

typedef enum { LV_FLAG, LV_COUNT, LV_TIME, LV_NAME } load_val_t;

typedef struct load_option {
    const char *name;
    load_val_t type;
    size_t off;               /* where the value goes in load_opts_t */
    uint64_t min;             /* least accepted count or time */
} load_option_t;

#define LOPT(name, type, field, min) { name, type, offsetof(load_opts_t, field), min }

static const load_option_t load_options[] = {
    LOPT("threads", LV_COUNT, threads, 1),
    LOPT("duration", LV_TIME, duration_ms, 1),
    LOPT("statements", LV_COUNT, statements, 1),
    LOPT("warmup", LV_TIME, warmup_ms, 0),
    LOPT("rows", LV_COUNT, rows, 1),
    LOPT("seed", LV_COUNT, seed, 0),
    LOPT("batch", LV_COUNT, batch, 1),
    LOPT("tables", LV_COUNT, tables, 1),
    LOPT("dbs", LV_COUNT, dbs, 1),
    LOPT("rounds", LV_COUNT, rounds, 1),
    LOPT("touch-lines", LV_COUNT, touch_lines, 0),
    LOPT("busy-ns", LV_COUNT, busy_ns, 0),
    LOPT("table", LV_NAME, table, 0),
    LOPT("shard-key", LV_NAME, shard_key, 0),
    LOPT("group", LV_NAME, group, 0),
    LOPT("prepare", LV_FLAG, prepare, 0),
    LOPT("cleanup", LV_FLAG, cleanup, 0),
    LOPT("direct", LV_FLAG, direct, 0),
    LOPT("compare", LV_FLAG, compare, 0),
    LOPT("prepared", LV_FLAG, prepared, 0),
    LOPT("server-prepared", LV_FLAG, server_prepared, 0),
    LOPT("json", LV_FLAG, json, 0),
};

#define NLOAD_OPTIONS (sizeof load_options / sizeof load_options[0])

static void load_defaults(load_opts_t *o, const cli_t *cli)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->duration_ms = 10000;
    o->warmup_ms = 2000;
    o->rows = 10000;
    o->seed = 1;
    o->batch = 1000;
    o->tables = 100;
    o->dbs = 4;
    o->rounds = 5;
    o->table = "wm_food";
    o->shard_key = "wm_poi_id";
    o->group = "dbProductSku";
    o->json = cli->json;
}

static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > LOAD_MAX_COUNT)
        return -1;
    *out = v;
    return 0;
}

/* "10", "10s", "500ms", "2m", "1h": milliseconds.  Same units as the
 * durations of the configuration file. */
static int parse_time(const char *s, uint64_t *out)
{
    static const struct { const char *unit; uint64_t ms; } units[] = {
        { "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60000 }, { "h", 3600000 },
    };
    size_t digits = strspn(s, "0123456789"), i;
    uint64_t v;
    char num[24];

    if (digits == 0 || digits >= sizeof num)
        return -1;
    memcpy(num, s, digits);
    num[digits] = '\0';
    if (parse_count(num, &v) != 0)
        return -1;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(s + digits, units[i].unit) == 0) {
            *out = v * units[i].ms;
            return 0;
        }
    return -1;
}

/* Names are pasted into SQL unquoted, so only identifier characters pass. */
static int valid_name(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");

    return n > 0 && n <= LOAD_MAX_NAME && s[n] == '\0';
}

static int set_load_option(const cli_t *cli, load_opts_t *o, const load_option_t *opt,
                           const char *value)
{
    void *field = (char *)o + opt->off;
    uint64_t v = 0;

    switch (opt->type) {
    case LV_FLAG:
        *(int *)field = 1;
        return CLI_OK;
    case LV_NAME:
        if (!valid_name(value))
            return cli_usage(cli, "--%s: '%s' is not a name (letters, digits, '_', '$')",
                             opt->name, value);
        *(const char **)field = value;
        return CLI_OK;
    case LV_COUNT:
        if (parse_count(value, &v) != 0 || v < opt->min)
            return cli_usage(cli, "--%s: '%s' is not a whole number from %" PRIu64, opt->name,
                             value, opt->min);
        break;
    case LV_TIME:
        if (parse_time(value, &v) != 0 || v < opt->min)
            return cli_usage(cli, "--%s: '%s' is not a duration (10s, 500ms, 2m)%s", opt->name,
                             value, opt->min ? " above 0" : "");
        break;
    }
    *(uint64_t *)field = v;
    return CLI_OK;
}

static const load_option_t *find_load_option(const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < NLOAD_OPTIONS; i++)
        if (strlen(load_options[i].name) == len && strncmp(load_options[i].name, name, len) == 0)
            return &load_options[i];
    return NULL;
}

/* One "--name", "--name=value" or "--name value" at args[*i]. */
static int parse_load_option(const cli_t *cli, load_opts_t *o, size_t *i, unsigned *seen)
{
    const char *arg = cli->args[*i] + 2, *value = NULL;
    size_t len = strcspn(arg, "=");
    const load_option_t *opt = find_load_option(arg, len);

    if (cli->args[*i][1] != '-' || opt == NULL)
        return cli_usage(cli, "unknown load option '%s'", cli->args[*i]);
    if (arg[len] == '=')
        value = arg + len + 1;
    if (opt->type == LV_FLAG && value != NULL)
        return cli_usage(cli, "option '--%s' takes no value", opt->name);
    if (opt->type != LV_FLAG && value == NULL) {
        if (*i + 1 >= cli->nargs)
            return cli_usage(cli, "option '--%s' needs a value", opt->name);
        value = cli->args[++*i];
    }
    *seen |= 1u << (opt - load_options);
    return set_load_option(cli, o, opt, value);
}

static int option_seen(unsigned seen, const char *name)
{
    const load_option_t *opt = find_load_option(name, strlen(name));

    return (seen >> (opt - load_options)) & 1u;
}

/* Combinations that cannot mean anything. */
static int check_load_opts(const cli_t *cli, load_opts_t *o, unsigned seen)
{
    if (option_seen(seen, "duration") && option_seen(seen, "statements"))
        return cli_usage(cli, "give --duration or --statements, not both");
    if (option_seen(seen, "statements"))
        o->duration_ms = 0;
    if (o->direct && o->compare)
        return cli_usage(cli, "--compare already runs direct: give one of --direct, --compare");
    if (o->threads > LOAD_MAX_THREADS)
        return cli_usage(cli, "--threads: at most %d", LOAD_MAX_THREADS);
    if (o->rows < o->threads)
        return cli_usage(cli, "--rows must be at least --threads (each thread has its own keys)");
    if (o->tables % o->dbs != 0)
        return cli_usage(cli, "--tables must be a multiple of --dbs");
    if (o->workload == NULL && !o->prepare && !o->cleanup)
        return cli_usage(cli, "nothing to do: give a WORKLOAD, --prepare or --cleanup");
    if (o->workload == NULL && (o->direct || o->compare))
        return cli_usage(cli, "--direct and --compare need a WORKLOAD");
    if (o->server_prepared && !o->direct && !o->compare)
        return cli_usage(cli, "--server-prepared is for the direct side: give --direct or "
                         "--compare");
    if (o->touch_lines > 0 && !o->direct && !o->compare)
        return cli_usage(cli, "--touch-lines is for the direct side: give --direct or --compare");
    if (o->touch_lines > LOAD_MAX_TOUCH_LINES)
        return cli_usage(cli, "--touch-lines: at most %d", LOAD_MAX_TOUCH_LINES);
    if (o->busy_ns > 0 && !o->direct && !o->compare)
        return cli_usage(cli, "--busy-ns is for the direct side: give --direct or --compare");
    if (o->busy_ns > LOAD_MAX_BUSY_NS)
        return cli_usage(cli, "--busy-ns: at most %d", LOAD_MAX_BUSY_NS);
    return CLI_OK;
}

static int parse_load_args(const cli_t *cli, load_opts_t *o)
{
    unsigned seen = 0;
    size_t i;
    int rc;

    load_defaults(o, cli);
    for (i = 0; i < cli->nargs; i++) {
        if (cli->args[i][0] == '-') {
            rc = parse_load_option(cli, o, &i, &seen);
            if (rc != CLI_OK)
                return rc;
        } else if (o->workload == NULL) {
            o->workload = cli->args[i];
        } else {
            return cli_usage(cli, "unexpected argument '%s'", cli->args[i]);
        }
    }
    return check_load_opts(cli, o, seen);
}

/* --------------------------------------------------------------- context */

static void ctx_free(load_ctx_t *ctx)
{
    size_t i;

    for (i = 0; i < ST_COUNT; i++) {
        dal_prepared_free(ctx->dal_prep[i]);
        free(ctx->dal_sql[i]);
    }
    load_direct_free(ctx->direct);
    dal_close(ctx->dal);
}

static int ctx_init(load_ctx_t *ctx, const cli_t *cli, const load_opts_t *o)
{
    dal_error_t err = { 0 };
    size_t i;
    int rc;

    memset(ctx, 0, sizeof *ctx);
    ctx->cli = cli;
    ctx->o = o;
    ctx->progress = isatty(STDERR_FILENO) && !o->compare;
    if (o->workload != NULL && (ctx->wl = load_find_workload(o->workload)) == NULL)
        return cli_usage(cli, "unknown workload '%s' (point-select, insert, update, "
                              "read-write, scatter, lookup)", o->workload);
    rc = cli_open(cli, &ctx->dal);
    if (rc != CLI_OK)
        return rc;
    if (ctx->wl != NULL && strcmp(ctx->wl->name, "lookup") == 0 && !load_has_id_lookup(ctx)) {
        cli_errorf("the lookup workload reads %s by id through its lookup: add lookup = id to "
                   "[table %s] and declare [table %s_lookup_id] (docs/lookup.md)", o->table,
                   o->table, o->table);
        return CLI_FAIL;
    }
    for (i = 0; i < ST_COUNT; i++) {
        ctx->dal_sql[i] = load_expand_sql(load_stmt_defs[i].sql, o->table, o->shard_key);
        if (ctx->dal_sql[i] == NULL) {
            cli_errorf("out of memory");
            return CLI_FAIL;
        }
        if (o->prepared && dal_prepare(ctx->dal, ctx->dal_sql[i], &ctx->dal_prep[i], &err) < 0)
            return cli_fail(&err);
    }
    if ((o->direct || o->compare) && load_direct_init(ctx, &err) < 0)
        return cli_fail(&err);
    return CLI_OK;
}

/* ---------------------------------------------------------------- command */

static int do_prepare(const load_ctx_t *ctx, load_report_t *rep)
{
    dal_error_t err = { 0 };
    uint64_t t0 = load_now_ns();

    if (load_create_table(ctx, &err) < 0) {
        cli_errorf("--prepare: %s", err.message);
        return CLI_FAIL;
    }
    rep->prepared = 1;
    rep->prepare_s = (double)(load_now_ns() - t0) / 1e9;
    if (!ctx->o->json)
        printf("prepared %s through dal: created it, inserted %" PRIu64 " rows in %.2f s\n",
               ctx->o->table, ctx->o->rows, rep->prepare_s);
    return CLI_OK;
}

static int do_cleanup(const load_ctx_t *ctx, load_report_t *rep)
{
    dal_error_t err = { 0 };

    if (load_drop_table(ctx, &err) < 0) {
        cli_errorf("--cleanup: %s", err.message);
        return CLI_FAIL;
    }
    rep->cleaned = 1;
    if (!ctx->o->json)
        printf("cleaned up: dropped %s through dal\n", ctx->o->table);
    return CLI_OK;
}

static int do_single(const load_ctx_t *ctx, load_report_t *rep)
{
    load_result_t *r = calloc(1, sizeof *r);

    if (r == NULL) {
        cli_errorf("out of memory");
        return CLI_FAIL;
    }
    rep->results = r;
    rep->nresults = 1;
    load_run_once(ctx, ctx->o->direct ? &load_direct_backend : &load_dal_backend, r);
    if (!ctx->o->json && (r->events > 0 || r->error[0] == '\0'))
        load_print_result(ctx, r);
    return load_report_failure(r);
}

/*
 * Pairs of runs, dal and direct, alternating which goes first (ABBA), so
 * that a drift of the machine over time falls on both sides alike.  The
 * ratio is dal's throughput over direct's.
 */
static int do_compare(const load_ctx_t *ctx, load_report_t *rep)
{
    const load_opts_t *o = ctx->o;
    const load_backend_t *order[2][2] = { { &load_dal_backend, &load_direct_backend },
                                          { &load_direct_backend, &load_dal_backend } };
    uint64_t r;
    int i, rc = CLI_OK;

    rep->results = calloc(o->rounds * 2, sizeof *rep->results);
    if (rep->results == NULL) {
        cli_errorf("out of memory");
        return CLI_FAIL;
    }
    load_print_compare_head(ctx);
    for (r = 0; r < o->rounds && rc == CLI_OK; r++) {
        load_result_t *pair = rep->results + 2 * r;   /* [0] dal, [1] direct */

        for (i = 0; i < 2 && rc == CLI_OK; i++) {
            const load_backend_t *be = order[r % 2][i];

            load_run_once(ctx, be, &pair[be == &load_direct_backend]);
            rc = load_report_failure(&pair[be == &load_direct_backend]);
        }
        if (rc == CLI_OK) {
            rep->nresults += 2;
            if (!o->json)
                load_print_pair(r + 1, pair);
        }
    }
    load_compare_summary(ctx, rep);
    return rc;
}

int cmd_load(cli_t *cli)
{
    load_report_t rep;
    load_opts_t o;
    load_ctx_t ctx;
    int rc = parse_load_args(cli, &o);

    if (rc != CLI_OK)
        return rc;
    memset(&rep, 0, sizeof rep);
    rc = ctx_init(&ctx, cli, &o);
    if (rc == CLI_OK && o.prepare)
        rc = do_prepare(&ctx, &rep);
    if (rc == CLI_OK && ctx.wl != NULL)
        rc = o.compare ? do_compare(&ctx, &rep) : do_single(&ctx, &rep);
    /* a failed run still drops what --prepare made */
    if (o.cleanup && ctx.dal != NULL && do_cleanup(&ctx, &rep) != CLI_OK)
        rc = CLI_FAIL;
    if (o.json && (rep.prepared || rep.nresults > 0 || rep.cleaned))
        load_json_report(&ctx, &rep);
    free(rep.results);
    ctx_free(&ctx);
    return rc;
}
