/*
 * cli.h -- shared parts of the `dal` command-line program.
 *
 * dal.c parses the command line into a cli_t and calls one cmd_* function;
 * the helpers below are what the commands have in common: opening the
 * configuration, turning command-line text into dal values, reporting errors,
 * and printing results (one table printer and one JSON printer, used by
 * `exec`, `explain`, `plugins` and the shell alike).
 *
 * Include this header first: it selects the POSIX/XSI interfaces the program
 * uses (getline, strdup, isatty, wcwidth) before any system header is read.
 */
#ifndef DAL_TOOLS_CLI_H
#define DAL_TOOLS_CLI_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif

#include <stddef.h>
#include <stdio.h>

#include "dal/dal.h"
#include "json.h"

/* Exit codes. */
enum {
    CLI_OK = 0,     /* success */
    CLI_FAIL = 1,   /* an error reported by the library or the server */
    CLI_USAGE = 2   /* the command line is wrong */
};

struct cli_command;

/* The parsed command line.  Strings are borrowed from argv/environ. */
typedef struct cli {
    const char *config;      /* -c FILE, else $DAL_CONFIG; NULL if neither */
    const char *plugin_dir;  /* --plugin-dir (or `plugins --dir`); NULL: default */
    const char *shard_value; /* --shard-value text; NULL: none */
    const char *datasource;  /* --datasource NAME; NULL: routed */
    int json;                /* --json */
    int online;              /* check --online */
    int create_lookups;      /* check --online --create-lookups */
    int verbose;             /* -v: pass info and debug messages too */
    int help;                /* --help */
    int version;             /* --version */
    const struct cli_command *cmd;
    char **args;             /* positional arguments after the command (owned array) */
    size_t nargs;
} cli_t;

/* ------------------------------------------------------- reporting (dal.c) */

/* "dal: MESSAGE" on stderr. */
void cli_errorf(const char *fmt, ...) DAL_PRINTF(1, 2);
/* Print err's message as "dal: MESSAGE"; returns CLI_FAIL. */
int cli_fail(const dal_error_t *err);
/* Print a usage mistake and a hint about help; returns CLI_USAGE. */
int cli_usage(const cli_t *cli, const char *fmt, ...) DAL_PRINTF(2, 3);
/* Fill err for a failure of the program itself (out of memory, ...). */
int cli_set_error(dal_error_t *err, int code, const char *message);

/* ------------------------------------------------ library access (dal.c) */

/* dal_open_opts_t for this command line: plugin dir and log callback. */
void cli_open_opts(const cli_t *cli, dal_open_opts_t *opts);
/* dal_open(cli->config); prints the error itself.  CLI_OK or CLI_FAIL. */
int cli_open(const cli_t *cli, dal_t **out);
/* The whole file at path, NUL-terminated (owned), its length in *len; NULL
 * when it cannot be read (nothing printed). */
char *cli_read_file(const char *path, size_t *len);

/*
 * A value given as command-line text: a PARAM of exec and explain, the
 * --shard-value of any statement command, the shell's \shard.  A prefix
 * gives the type, so a shell can pass what a program passes:
 *
 *   int:-5  uint:7  double:1.5  str:TEXT  hex:00ff  null  NULL  null:
 *
 * (dal_int, dal_uint, dal_double, dal_str, dal_blob, dal_null).  Any other
 * text is a string, as it always was; str: passes text that itself starts
 * with a prefix ("str:int:5" is the text "int:5").
 */
typedef struct cli_value {
    dal_value_t v;   /* strings borrow the text given to cli_value_parse */
    void *bytes;     /* owned: the decoded bytes of hex:, which v points to; else NULL */
} cli_value_t;

/* Parse text into *out.  0, or -1 with why (size bytes) saying what is
 * wrong with it; *out is then NULL and owns nothing. */
int cli_value_parse(const char *text, cli_value_t *out, char *why, size_t size);
void cli_value_free(cli_value_t *val);
/* The same, as a command-line argument: what names it in the usage error
 * ("parameter 2", "--shard-value").  CLI_OK or CLI_USAGE (reported). */
int cli_value_arg(const cli_t *cli, const char *what, const char *text, cli_value_t *out);

/* Statement options from a shard value (NULL: none; borrowed by *qo) and a
 * datasource name (NULL: routed). */
void cli_query_opts(const dal_value_t *shard, const char *datasource, dal_query_opts_t *qo);

/*
 * Something to do with one statement: run it (cli_run_query) or show its
 * routes (cli_run_explain), printing the outcome to stdout as text or JSON.
 * Returns 0 or a negative DAL_E* code with err filled; the caller reports it.
 */
typedef int (*cli_stmt_fn)(dal_t *dal, const dal_query_opts_t *qo, const char *sql,
                           const dal_value_t *params, size_t nparams, int json,
                           dal_error_t *err);

int cli_run_query(dal_t *dal, const dal_query_opts_t *qo, const char *sql,
                  const dal_value_t *params, size_t nparams, int json,
                  dal_error_t *err);                       /* cmd_exec.c */
int cli_run_explain(dal_t *dal, const dal_query_opts_t *qo, const char *sql,
                    const dal_value_t *params, size_t nparams, int json,
                    dal_error_t *err);                     /* cmd_explain.c */

/* The whole of `exec` and `explain`: open, take SQL and PARAMs from the
 * command line, run fn, close.  Returns an exit code. */
int cli_statement_command(const cli_t *cli, cli_stmt_fn fn);

/* Print a result as a table or as JSON (exec and the shell share it). */
int cli_print_result(dal_result_t *r, int json, dal_error_t *err);

/* ----------------------------------------------------- tables (cmd_exec.c) */

/*
 * A text table: ncols header cells, then the rows, filled one cell at a time
 * in reading order.  Cells are stored ready for display (control characters
 * escaped) together with their display width.
 */
typedef struct cli_table {
    size_t ncols;
    size_t ncells;   /* header included */
    size_t cap;
    char **cells;    /* owned; ncells entries, row-major */
    size_t *widths;  /* owned; ncols entries: widest cell of each column */
} cli_table_t;

/* 0, or DAL_ENOMEM with err filled. */
int cli_table_init(cli_table_t *t, size_t ncols, dal_error_t *err);
/* Append one cell (len bytes of s; s NULL: shown as NULL). */
int cli_table_add(cli_table_t *t, const char *s, size_t len, dal_error_t *err);
size_t cli_table_rows(const cli_table_t *t);
/* boxed: MySQL-style +---+ borders (query results); else plain columns. */
void cli_table_print(const cli_table_t *t, FILE *out, int boxed);
void cli_table_free(cli_table_t *t);

/* ---------------------------------------------------------------- commands */

int cmd_help(cli_t *cli);      /* dal.c */
int cmd_version(cli_t *cli);   /* dal.c */
int cmd_plugins(cli_t *cli);   /* cmd_plugins.c */
int cmd_check(cli_t *cli);     /* cmd_check.c */
int cmd_diff(cli_t *cli);      /* cmd_diff.c */
int cmd_explain(cli_t *cli);   /* cmd_explain.c */
int cmd_exec(cli_t *cli);      /* cmd_exec.c */
int cmd_shell(cli_t *cli);     /* shell.c */
int cmd_load(cli_t *cli);      /* cmd_load.c */
int cmd_config(cli_t *cli);    /* cmd_config.c */
extern const char cmd_config_synopsis[], cmd_config_details[];

/* `dal diff`'s output, one change at a time: a text line, or an element of
 * the JSON array the caller opened ("changes").  `dal config watch` prints
 * each accepted change with it too.  cmd_diff.c. */
typedef struct cli_diff_out {
    json_t j;
    int json;
    size_t n;    /* changes printed */
} cli_diff_out_t;
void cli_diff_line(void *user, const char *what, const char *name, const char *change);

/* How many characters of a location may be shown: a store URL without its
 * ?OPTIONS (which may hold a password), a file path whole.  dal.c. */
int cli_shown(const char *location);
extern const char cmd_load_synopsis[], cmd_load_details[];   /* its help, for dal.c's table */
int cmd_idgen(cli_t *cli);     /* cmd_idgen.c */
int cmd_xa(cli_t *cli);        /* cmd_xa.c */
int cmd_lookup(cli_t *cli);    /* cmd_lookup.c */
int cmd_reshard(cli_t *cli);   /* cmd_reshard.c */
extern const char cmd_reshard_synopsis[], cmd_reshard_details[];

#endif /* DAL_TOOLS_CLI_H */
