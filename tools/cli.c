/*
 * dal.c -- the `dal` command-line program: argument parsing, dispatch to the
 * commands, help, and the helpers every command shares (see cli.h).
 *
 *     dal [-c FILE] [--plugin-dir DIR] [-v] COMMAND [ARGS]
 *
 * Options may appear before or after the command name; each command accepts
 * the global options plus its own.  "--" ends the options, and an argument
 * that looks like a negative number ("-5") is a value, not an option, so SQL
 * parameters can be negative without "--".
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- options */

enum {
    OPT_CONFIG = 1u << 0,
    OPT_PLUGIN_DIR = 1u << 1,
    OPT_VERBOSE = 1u << 2,
    OPT_HELP = 1u << 3,
    OPT_VERSION = 1u << 4,
    OPT_JSON = 1u << 5,
    OPT_SHARD = 1u << 6,
    OPT_DATASOURCE = 1u << 7,
    OPT_DIR = 1u << 8,
    OPT_ONLINE = 1u << 10,
    OPT_CREATE_LOOKUPS = 1u << 11,
    OPT_OWN = 1u << 9      /* the command parses the options dal does not know */
};

/* Accepted by every command. */
#define OPT_GLOBAL (OPT_CONFIG | OPT_PLUGIN_DIR | OPT_VERBOSE | OPT_HELP)
#define OPT_STMT (OPT_JSON | OPT_SHARD | OPT_DATASOURCE)

typedef struct cli_option {
    unsigned bit;
    char short_name;       /* 0: long form only */
    const char *long_name;
    int has_arg;
} cli_option_t;

static const cli_option_t cli_options[] = {
    { OPT_CONFIG, 'c', "config", 1 },
    { OPT_PLUGIN_DIR, 0, "plugin-dir", 1 },
    { OPT_VERBOSE, 'v', "verbose", 0 },
    { OPT_HELP, 'h', "help", 0 },
    { OPT_VERSION, 0, "version", 0 },
    { OPT_JSON, 0, "json", 0 },
    { OPT_SHARD, 0, "shard-value", 1 },
    { OPT_DATASOURCE, 0, "datasource", 1 },
    { OPT_DIR, 0, "dir", 1 },
    { OPT_ONLINE, 0, "online", 0 },
    { OPT_CREATE_LOOKUPS, 0, "create-lookups", 0 },
};

#define NOPTIONS (sizeof cli_options / sizeof cli_options[0])

/* ---------------------------------------------------------------- commands */

typedef struct cli_command {
    const char *name;
    int (*run)(cli_t *cli);
    unsigned opts;          /* OPT_* accepted besides OPT_GLOBAL */
    size_t min_args;
    size_t max_args;        /* SIZE_MAX: unlimited */
    int needs_config;
    const char *synopsis;
    const char *summary;
    const char *details;
} cli_command_t;

/* How PARAM and --shard-value are typed (cli_value_parse), for every
 * statement command's help. */
#define CLI_VALUE_HELP \
    "A PARAM or --shard-value may name its type, as a program would pass it:\n" \
    "  int:-5, uint:5    a signed / unsigned 64-bit integer (LIMIT int:10)\n" \
    "  double:1.5        a floating-point number\n" \
    "  str:TEXT          text, also text that starts with a prefix (str:int:5)\n" \
    "  hex:00ff          bytes, two hex digits each\n" \
    "  null, NULL, null: SQL NULL\n" \
    "Anything else is text ('100'); a malformed typed value exits 2.\n"

static const cli_command_t cli_commands[] = {
    { "check", cmd_check, OPT_JSON | OPT_ONLINE | OPT_CREATE_LOOKUPS, 0, 0, 1,
      "check [--json] [--online [--create-lookups]]",
      "validate a configuration file",
      "Parses the file, loads the plugins it names and checks every setting,\n"
      "without connecting to any server.  Prints \"FILE: ok\", or the first\n"
      "mistake as FILE:LINE: message and exits 1.\n"
      "  --online          also ask the servers for the columns of each sharded table\n"
      "                    (and each with an id_column), in the order dal uses for an\n"
      "                    INSERT without a column list: one line TABLE: COL, COL...\n"
      "  --create-lookups  with --online: create each missing lookup table through\n"
      "                    dal (docs/lookup.md), with the types of its table's columns:\n"
      "                    one line TABLE_lookup_COL: ready\n"
      "  --json            print {\"ok\":true} or {\"ok\":false,\"error\":{...}};\n"
      "                    with --online also \"columns\":{\"TABLE\":[...]}, and with\n"
      "                    --create-lookups \"lookups\":[\"TABLE_lookup_COL\",...]\n" },
    { "diff", cmd_diff, OPT_JSON, 1, 1, 1,
      "diff [--json] OTHER",
      "check OTHER and show what reloading it would change",
      "Validates OTHER as `check` does (plugins loaded), then lists the\n"
      "datasources, tables, monitors and ID generators it adds, removes or\n"
      "changes against the -c file: one line WHAT NAME CHANGE each.  A change\n"
      "of a table's shard layout is marked RESHARD and fails unless OTHER sets\n"
      "[dal] allow_reshard = true.\n"
      "  --json            print {\"changes\":[{\"what\",\"name\",\"change\"}],\"ok\":...}\n" },
    { "explain", cmd_explain, OPT_STMT, 1, SIZE_MAX, 1,
      "explain [--json] [--shard-value V] [--datasource NAME] SQL [PARAM...]",
      "show where a statement would run, without running it",
      "Prints one line per route: DATASOURCE (SERVER) TABLE: SQL.\n"
      "  --json            print {\"kind\":...,\"routes\":[{...}]}\n"
      "  --shard-value V   the shard key value (MTDDL's @ShardOn)\n"
      "  --datasource NAME run on this datasource node (MTDDL's @DataSource)\n"
      "  PARAM...          values for the ? placeholders, in order\n"
      CLI_VALUE_HELP },
    { "exec", cmd_exec, OPT_STMT, 1, SIZE_MAX, 1,
      "exec [--json] [--shard-value V] [--datasource NAME] SQL [PARAM...]",
      "run one statement and print its result",
      "Prints rows as a table and a row count, or the affected rows of a write.\n"
      "  --json            print {\"columns\":[...],\"rows\":[[...]],\"affected_rows\":N,...}\n"
      "  --shard-value V   the shard key value (MTDDL's @ShardOn)\n"
      "  --datasource NAME run on this datasource node (MTDDL's @DataSource)\n"
      "  PARAM...          values for the ? placeholders, in order\n"
      CLI_VALUE_HELP },
    { "shell", cmd_shell, OPT_STMT, 0, 0, 1,
      "shell [--json] [--shard-value V] [--datasource NAME]",
      "interactive SQL shell",
      "Reads statements ending in ';'.  Type \\h in the shell for its commands.\n"
      "When standard input is not a terminal, statements are read from it\n"
      "without prompts and the exit status is 1 if any statement failed.\n"
      "The options set the initial output mode, shard value and datasource.\n" },
    { "idgen", cmd_idgen, OPT_JSON | OPT_DATASOURCE, 0, 3, 1,
      "idgen init [--datasource NAME] [--json] | idgen next NAME [N] [--json]",
      "set up the ID generators' tables, or draw IDs",
      "  init              create what the [idgen] sections keep in a database, if\n"
      "                    missing: for leaf, the segment table and the section's biz\n"
      "                    tag (max_id 1, its step); for snowflake with\n"
      "                    lease_datasource, the worker id lease table.  Safe to repeat.\n"
      "  --datasource NAME create them on this datasource instead of each section's\n"
      "  next NAME [N]     draw N IDs (default 1, at most 1000000) from [idgen NAME]\n"
      "                    and print one per line\n"
      "  --json            init: {\"idgens\":[{...}]}; next: {\"idgen\":...,\"ids\":[...]}\n" },
    { "config", cmd_config, OPT_JSON | OPT_OWN, 1, SIZE_MAX, 0, cmd_config_synopsis,
      "store, read and follow the configuration in etcd", cmd_config_details },
    { "xa", cmd_xa, OPT_JSON, 1, 1, 1,
      "xa init | xa recover [--json] | xa list [--json]",
      "the XA decision log and the transactions in doubt",
      "  init              create the decision log table in [dal] xa_log's datasource\n"
      "                    (safe to repeat)\n"
      "  recover           finish the XA branches any dal instance left prepared:\n"
      "                    commit those with a commit decision, roll back those\n"
      "                    without one once older than [dal] xa_grace, prune the log\n"
      "  list              show the prepared branches on every node and their decision\n"
      "  --json            recover: {\"committed\":N,...}; list: {\"branches\":[{...}]}\n" },
    { "lookup", cmd_lookup, OPT_JSON | OPT_OWN, 1, SIZE_MAX, 1,
      "lookup verify [TABLE [COLUMN]] [--fix] [--json] | lookup backfill TABLE COLUMN "
      "[--chunk N] [--after KEY]",
      "check and fill the lookup tables (docs/lookup.md)",
      "  verify            compare each lookup table with its table: a value of a row\n"
      "                    with no lookup row (missing: the row is unreachable by it)\n"
      "                    and a lookup row without a row (orphan: harmless); one line\n"
      "                    each, a count per lookup; exit 1 if any\n"
      "  --fix             add the missing lookup rows, remove the orphans\n"
      "  --json            {\"lookups\":[{...,\"missing\":[...],\"orphan\":[...]}],\n"
      "                    \"disagreements\":N,\"fixed\":N}\n"
      "  backfill          add the lookup rows of TABLE's existing rows for COLUMN, in\n"
      "                    chunks in shard key order (safe to repeat)\n"
      "  --chunk N         rows per chunk (default 1000)\n"
      "  --after KEY       resume after shard key KEY (printed after each chunk)\n" },
    { "load", cmd_load, OPT_JSON | OPT_OWN, 0, SIZE_MAX, 1, cmd_load_synopsis,
      "run a workload, measure throughput and latency", cmd_load_details },
    { "reshard", cmd_reshard, OPT_JSON | OPT_OWN, 1, SIZE_MAX, 1, cmd_reshard_synopsis,
      "move a live table to a new shard layout (plan, copy, catch up, switch)", cmd_reshard_details },
    { "plugins", cmd_plugins, OPT_JSON | OPT_DIR, 0, 0, 0,
      "plugins [--json] [--dir DIR]",
      "list the plugins in the plugin directory",
      "Loads every *.so in the directory and shows what it is, or why it was\n"
      "rejected.\n"
      "  --dir DIR         directory to scan (same as --plugin-dir; default:\n"
      "                    $DAL_PLUGIN_DIR, else the installed directory)\n"
      "  --json            print {\"dir\":...,\"plugins\":[{...}]}\n" },
    { "version", cmd_version, OPT_JSON | OPT_VERSION, 0, 0, 0,
      "version [--json]",
      "print the version",
      "  --json            print {\"version\":\"X.Y.Z\"}\n" },
    { "help", cmd_help, 0, 0, 1, 0,
      "help [COMMAND]",
      "show help for dal or a command",
      "" },
};

#define NCOMMANDS (sizeof cli_commands / sizeof cli_commands[0])

static const cli_command_t *cli_find_command(const char *name)
{
    size_t i;

    for (i = 0; i < NCOMMANDS; i++)
        if (strcmp(cli_commands[i].name, name) == 0)
            return &cli_commands[i];
    return NULL;
}

/* --------------------------------------------------------------- reporting */

void cli_errorf(const char *fmt, ...)
{
    va_list ap;

    fputs("dal: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_fail(const dal_error_t *err)
{
    cli_errorf("%s", err->message[0] ? err->message : dal_strerror(err->code));
    return CLI_FAIL;
}

int cli_usage(const cli_t *cli, const char *fmt, ...)
{
    va_list ap;

    fputs("dal: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cli->cmd != NULL)
        fprintf(stderr, "\nTry 'dal help %s'.\n", cli->cmd->name);
    else
        fputs("\nTry 'dal --help'.\n", stderr);
    return CLI_USAGE;
}

int cli_set_error(dal_error_t *err, int code, const char *message)
{
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s", message);
    return code;
}

/* ------------------------------------------------------------ library use */

/* The library never prints by itself once a callback is set; this keeps its
 * messages recognisable among the program's own. */
static void cli_log(void *user, dal_log_level_t level, const char *component,
                    const char *message)
{
    (void)user;
    fprintf(stderr, "dal: %s: %s: %s\n", dal_log_level_name(level), component, message);
}

void cli_open_opts(const cli_t *cli, dal_open_opts_t *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->log = cli_log;
    opts->log_level = cli->verbose ? DAL_LOG_DEBUG : DAL_LOG_WARN;
    opts->plugin_dir = cli->plugin_dir;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    *len = 0;
    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)n, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

int cli_open(const cli_t *cli, dal_t **out)
{
    dal_open_opts_t opts;
    dal_error_t err = { 0 };

    cli_open_opts(cli, &opts);
    if (dal_open(cli->config, &opts, out, &err) < 0)
        return cli_fail(&err);
    return CLI_OK;
}

/* ------------------------------------------------------ typed values */

/* The longest part of an argument a usage error quotes. */
#define CLI_QUOTE_MAX 40

static int value_error(char *why, size_t size, const char *text, const char *what)
{
    snprintf(why, size, "'%.*s%s': %s", CLI_QUOTE_MAX, text,
             strlen(text) > CLI_QUOTE_MAX ? "..." : "", what);
    return -1;
}

/* strto* accept leading blanks, "inf", "nan" and, for the unsigned one,
 * a '-' that wraps around; a command-line number starts with a digit (or
 * '.' and a digit), after a sign where one is allowed. */
static int number_start_ok(const char *s, int sign_ok)
{
    if (sign_ok && (*s == '-' || *s == '+'))
        s++;
    return isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]));
}

static int parse_int(const char *text, const char *s, dal_value_t *v, char *why, size_t size)
{
    char *end;
    long long n;

    errno = 0;
    n = number_start_ok(s, 1) ? strtoll(s, &end, 10) : 0;
    if (!number_start_ok(s, 1) || *end != '\0' || errno == ERANGE)
        return value_error(why, size, text, "int: takes a whole number from "
                           "-9223372036854775808 to 9223372036854775807");
    *v = dal_int((int64_t)n);
    return 0;
}

static int parse_uint(const char *text, const char *s, dal_value_t *v, char *why, size_t size)
{
    unsigned long long n;
    char *end;

    errno = 0;
    n = number_start_ok(s, 0) ? strtoull(s, &end, 10) : 0;
    if (!number_start_ok(s, 0) || *end != '\0' || errno == ERANGE)
        return value_error(why, size, text, "uint: takes a whole number from 0 to "
                           "18446744073709551615");
    *v = dal_uint((uint64_t)n);
    return 0;
}

static int parse_double(const char *text, const char *s, dal_value_t *v, char *why, size_t size)
{
    char *end;
    double d;

    errno = 0;
    d = number_start_ok(s, 1) ? strtod(s, &end) : 0;
    if (!number_start_ok(s, 1) || *end != '\0' || errno == ERANGE || !isfinite(d))
        return value_error(why, size, text, "double: takes a finite number such as 1.5, -2 or 3e-4");
    *v = dal_double(d);
    return 0;
}

/* hex:00FF -> the bytes 0x00 0xff, in out->bytes. */
static int parse_hex(const char *text, const char *s, cli_value_t *out, char *why, size_t size)
{
    size_t i, n = strlen(s);
    unsigned char *b;

    for (i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            break;
    if (i < n || n % 2 != 0)
        return value_error(why, size, text, "hex: takes an even number of hex digits, such as hex:00ff");
    b = malloc(n / 2 + 1);   /* +1: hex: alone is 0 bytes, and malloc(0) may be NULL */
    if (b == NULL)
        return value_error(why, size, text, "out of memory");
    for (i = 0; i < n / 2; i++) {
        char pair[3] = {s[2 * i], s[2 * i + 1], '\0'};
        b[i] = (unsigned char)strtoul(pair, NULL, 16);
    }
    out->bytes = b;
    out->v = dal_blob(b, n / 2);
    return 0;
}

static int has_type(const char *text, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);

    if (strncmp(text, prefix, n) != 0)
        return 0;
    *rest = text + n;
    return 1;
}

int cli_value_parse(const char *text, cli_value_t *out, char *why, size_t size)
{
    const char *s;

    out->v = dal_null();
    out->bytes = NULL;
    if (strcmp(text, "NULL") == 0 || strcmp(text, "null") == 0)
        return 0;
    if (has_type(text, "null:", &s))
        return *s == '\0' ? 0 : value_error(why, size, text,
                                            "null: takes no value (for the text, write str:...)");
    if (has_type(text, "int:", &s))
        return parse_int(text, s, &out->v, why, size);
    if (has_type(text, "uint:", &s))
        return parse_uint(text, s, &out->v, why, size);
    if (has_type(text, "double:", &s))
        return parse_double(text, s, &out->v, why, size);
    if (has_type(text, "hex:", &s))
        return parse_hex(text, s, out, why, size);
    if (!has_type(text, "str:", &s))
        s = text;   /* no type given: text, as it always was */
    out->v = dal_str(s);
    return 0;
}

void cli_value_free(cli_value_t *val)
{
    if (val == NULL)
        return;
    free(val->bytes);
    val->bytes = NULL;
    val->v = dal_null();
}

int cli_value_arg(const cli_t *cli, const char *what, const char *text, cli_value_t *out)
{
    char why[160];

    if (cli_value_parse(text, out, why, sizeof why) != 0)
        return cli_usage(cli, "%s %s", what, why);
    return CLI_OK;
}

void cli_query_opts(const dal_value_t *shard, const char *datasource, dal_query_opts_t *qo)
{
    memset(qo, 0, sizeof *qo);
    qo->shard_value = shard;
    qo->datasource = datasource;
}

/* PARAMs and --shard-value of a statement command into vals (nparams + 1,
 * the shard value last).  CLI_OK or CLI_USAGE (reported). */
static int cli_statement_values(const cli_t *cli, cli_value_t *vals, size_t nparams)
{
    char what[48];
    size_t i;
    int rc = CLI_OK;

    for (i = 0; i < nparams && rc == CLI_OK; i++) {
        snprintf(what, sizeof what, "parameter %zu", i + 1);
        rc = cli_value_arg(cli, what, cli->args[i + 1], &vals[i]);
    }
    if (rc == CLI_OK && cli->shard_value != NULL)
        rc = cli_value_arg(cli, "--shard-value", cli->shard_value, &vals[nparams]);
    return rc;
}

int cli_statement_command(const cli_t *cli, cli_stmt_fn fn)
{
    size_t i, nparams = cli->nargs - 1;
    cli_value_t *vals;
    dal_value_t *params;
    dal_query_opts_t qo;
    dal_error_t err = { 0 };
    dal_t *dal = NULL;
    int rc;

    /* +1: the shard value's place, and calloc(0) may return NULL. */
    vals = calloc(nparams + 1, sizeof *vals);
    params = calloc(nparams + 1, sizeof *params);
    if (vals == NULL || params == NULL) {
        cli_errorf("out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    rc = cli_statement_values(cli, vals, nparams);
    if (rc != CLI_OK)
        goto out;
    for (i = 0; i < nparams; i++)
        params[i] = vals[i].v;
    cli_query_opts(cli->shard_value != NULL ? &vals[nparams].v : NULL, cli->datasource, &qo);

    rc = cli_open(cli, &dal);
    if (rc != CLI_OK)
        goto out;
    if (fn(dal, &qo, cli->args[0], params, nparams, cli->json, &err) < 0)
        rc = cli_fail(&err);
out:
    dal_close(dal);
    for (i = 0; vals != NULL && i <= nparams; i++)
        cli_value_free(&vals[i]);
    free(vals);
    free(params);
    return rc;
}

/* ------------------------------------------------------ help and version */

static void cli_print_usage(FILE *out)
{
    size_t i;

    fputs("Usage: dal [-c FILE] [--plugin-dir DIR] [-v] COMMAND [ARGS]\n\n"
          "Commands:\n", out);
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fputs("\nGlobal options (before or after the command):\n"
          "  -c, --config FILE    configuration file (default: $DAL_CONFIG)\n"
          "  --plugin-dir DIR     plugin directory (overrides $DAL_PLUGIN_DIR\n"
          "                       and [dal] plugin_dir)\n"
          "  -v, --verbose        also log info and debug messages\n"
          "  -h, --help           show help (dal COMMAND --help: the command's)\n"
          "  --version            print the version\n"
          "  --                   end of options\n"
          "\nExit status: 0 ok, 1 error from the library or a server, 2 usage error.\n"
          "Run 'dal help COMMAND' for the options of a command.\n", out);
}

static int cli_command_help(const cli_command_t *cmd)
{
    printf("dal %s -- %s\n\nUsage: dal [GLOBAL OPTIONS] %s\n%s%s"
           "Global options: see 'dal --help'.\n",
           cmd->name, cmd->summary, cmd->synopsis, cmd->details[0] ? "\n" : "", cmd->details);
    return CLI_OK;
}

int cli_shown(const char *location)
{
    return (int)(strstr(location, "://") ? strcspn(location, "?") : strlen(location));
}

int cmd_help(cli_t *cli)
{
    const cli_command_t *cmd;

    if (cli->nargs == 0) {
        cli_print_usage(stdout);
        return CLI_OK;
    }
    cmd = cli_find_command(cli->args[0]);
    if (cmd == NULL)
        return cli_usage(cli, "unknown command '%s'", cli->args[0]);
    return cli_command_help(cmd);
}

int cmd_version(cli_t *cli)
{
    json_t j;

    if (!cli->json) {
        printf("dal %s\n", dal_version());
        return CLI_OK;
    }
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "version");
    json_string(&j, dal_version());
    json_object_end(&j);
    return CLI_OK;
}

/* ------------------------------------------------------------------ parsing */

/* "-" alone (stdin by convention) and negative numbers are values. */
static int cli_is_option(const char *arg)
{
    return arg[0] == '-' && arg[1] != '\0' && !isdigit((unsigned char)arg[1]);
}

static const cli_option_t *cli_find_option(const char *arg, const char **value)
{
    size_t i, len;

    *value = NULL;
    if (arg[1] == '-') {
        arg += 2;
        len = strcspn(arg, "=");
        if (arg[len] == '=')
            *value = arg + len + 1;
        for (i = 0; i < NOPTIONS; i++)
            if (strlen(cli_options[i].long_name) == len &&
                strncmp(cli_options[i].long_name, arg, len) == 0)
                return &cli_options[i];
        return NULL;
    }
    for (i = 0; i < NOPTIONS; i++)
        if (cli_options[i].short_name == arg[1])
            break;
    if (i == NOPTIONS || (arg[2] != '\0' && !cli_options[i].has_arg))
        return NULL;
    if (arg[2] != '\0')
        *value = arg + 2; /* -cFILE */
    return &cli_options[i];
}

static void cli_set_option(cli_t *cli, unsigned bit, const char *value)
{
    switch (bit) {
    case OPT_CONFIG:      cli->config = value; break;
    case OPT_PLUGIN_DIR:  cli->plugin_dir = value; break;
    case OPT_DIR:         cli->plugin_dir = value; break;
    case OPT_ONLINE:      cli->online = 1; break;
    case OPT_CREATE_LOOKUPS: cli->create_lookups = 1; break;
    case OPT_VERBOSE:     cli->verbose = 1; break;
    case OPT_HELP:        cli->help = 1; break;
    case OPT_VERSION:     cli->version = 1; break;
    case OPT_JSON:        cli->json = 1; break;
    case OPT_SHARD:       cli->shard_value = value; break;
    case OPT_DATASOURCE:  cli->datasource = value; break;
    default:              break;
    }
}

/* One option at argv[*i]; consumes its value from the next argument if
 * needed.  Records the option in *seen. */
static int cli_parse_option(cli_t *cli, int argc, char **argv, int *i, unsigned *seen)
{
    const cli_option_t *opt;
    const char *value;

    opt = cli_find_option(argv[*i], &value);
    if (opt == NULL && cli->cmd != NULL && (cli->cmd->opts & OPT_OWN)) {
        cli->args[cli->nargs++] = argv[*i];   /* in order, with the values that follow */
        return CLI_OK;
    }
    if (opt == NULL)
        return cli_usage(cli, "unknown option '%s'", argv[*i]);
    if (value != NULL && !opt->has_arg)
        return cli_usage(cli, "option '--%s' takes no value", opt->long_name);
    if (value == NULL && opt->has_arg) {
        if (*i + 1 >= argc)
            return cli_usage(cli, "option '%s' needs a value", argv[*i]);
        value = argv[++*i];
    }
    cli_set_option(cli, opt->bit, value);
    *seen |= opt->bit;
    return CLI_OK;
}

/* Options are checked against the command only once the whole line is read,
 * because they may come before the command name. */
static int cli_check_options(const cli_t *cli, unsigned seen)
{
    unsigned bad = seen & ~(OPT_GLOBAL | cli->cmd->opts);
    size_t i;

    for (i = 0; i < NOPTIONS; i++)
        if (bad & cli_options[i].bit)
            return cli_usage(cli, "option '--%s' does not apply to '%s'",
                             cli_options[i].long_name, cli->cmd->name);
    return CLI_OK;
}

static int cli_check_args(cli_t *cli)
{
    const cli_command_t *cmd = cli->cmd;

    if (cli->nargs < cmd->min_args)
        return cli_usage(cli, "'%s' needs %s", cmd->name,
                         cmd->min_args == 1 ? "an SQL statement" : "more arguments");
    if (cli->nargs > cmd->max_args)
        return cli_usage(cli, "unexpected argument '%s'", cli->args[cmd->max_args]);
    if (!cmd->needs_config)
        return CLI_OK;
    if (cli->config == NULL || cli->config[0] == '\0')
        cli->config = getenv("DAL_CONFIG");
    if (cli->config == NULL || cli->config[0] == '\0')
        return cli_usage(cli, "no configuration file: use -c FILE or set DAL_CONFIG");
    return CLI_OK;
}

static int cli_parse(cli_t *cli, int argc, char **argv)
{
    unsigned seen = 0;
    int i, rc, options_done = 0;

    for (i = 1; i < argc; i++) {
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = 1;
        } else if (!options_done && cli_is_option(argv[i])) {
            rc = cli_parse_option(cli, argc, argv, &i, &seen);
            if (rc != CLI_OK)
                return rc;
        } else if (cli->cmd == NULL) {
            cli->cmd = cli_find_command(argv[i]);
            if (cli->cmd == NULL)
                return cli_usage(cli, "unknown command '%s'", argv[i]);
        } else {
            cli->args[cli->nargs++] = argv[i];
        }
    }
    if (cli->cmd == NULL) {
        if (!cli->help && !cli->version)
            return cli_usage(cli, "no command given");
        cli->cmd = cli_find_command(cli->help ? "help" : "version");
    }
    rc = cli_check_options(cli, seen);
    if (rc != CLI_OK || (cli->help && cli->cmd->run != cmd_help))
        return rc;
    return cli_check_args(cli);
}

int main(int argc, char **argv)
{
    cli_t cli = { 0 };
    int rc;

    /* Line editing and table widths need a character set.  Values come from
     * the server as UTF-8 (dal connects with utf8mb4), so under a locale that
     * is not multibyte ("C", or unset) measure them as UTF-8 all the same. */
    if (setlocale(LC_CTYPE, "") == NULL || MB_CUR_MAX == 1)
        setlocale(LC_CTYPE, "C.UTF-8");

    cli.args = calloc((size_t)argc + 1, sizeof *cli.args);
    if (cli.args == NULL) {
        cli_errorf("out of memory");
        return CLI_FAIL;
    }
    rc = cli_parse(&cli, argc, argv);
    if (rc == CLI_OK)
        rc = cli.help && cli.cmd->run != cmd_help ? cli_command_help(cli.cmd)
                                                  : cli.cmd->run(&cli);
    /* Output goes through stdio: a full disk or closed pipe shows up only
     * here, and must not pass for success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_errorf("cannot write to standard output");
        if (rc == CLI_OK)
            rc = CLI_FAIL;
    }
    free(cli.args);
    return rc;
}
