/*
 * shell.c -- `dal shell`: an interactive SQL prompt over one dal_t.
 *
 * Input is read a line at a time (libedit on a terminal, plain stdin
 * otherwise) into a buffer; a small scanner finds the ';' that ends each
 * statement, skipping quoted strings and comments, and each statement goes
 * to the same printers `dal exec` uses.  A line starting with a backslash is
 * a shell command (\shard, \ds, \json, ...), wherever it appears.
 *
 * The scanner keeps its state between lines, so a statement of many lines
 * (a long INSERT from a dump) is scanned once, not once per line.
 *
 * libedit is optional (configure defines HAVE_LIBEDIT): without it the
 * prompt still works, with plain line input and no history.
 */
#include "cli.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#define PROMPT "dal> "
#define PROMPT_MORE "  -> "
#define HISTORY_FILE ".dal_history"
#define HISTORY_MAX 1000

enum { IN_CODE, IN_LINE_COMMENT, IN_BLOCK_COMMENT };

/* Where the scan of the pending statement stopped. */
typedef struct sql_scan {
    size_t pos;   /* bytes of the buffer already scanned */
    char quote;   /* the open quote (' " `), 0 if none */
    int state;    /* IN_* */
    int content;  /* seen something besides blanks and comments */
} sql_scan_t;

typedef struct shell {
    dal_t *dal;
    dal_session_t *session; /* owned; every statement runs on it, so BEGIN ... COMMIT span lines */
    int interactive;     /* stdin is a terminal: prompts, editing, history */
    int json;
    char *shard;         /* owned; \shard text, NULL: none */
    cli_value_t shard_val; /* sh->shard parsed (its strings point into sh->shard) */
    char *datasource;    /* owned; \ds name, NULL: routed */
    char *history;       /* owned; history file, NULL: no history */

    char *line;          /* owned; the last line read */
    size_t line_cap;
    unsigned long lineno;
    unsigned long stmt_line; /* line where the pending statement began */

    char *buf;           /* owned; the pending statement, lines joined by \n */
    size_t len, cap;
    sql_scan_t scan;

    int failed;          /* some statement or command failed */
    int quit;
} shell_t;

/* ---------------------------------------------------------------- output */

/* An error in a script names its line; at the prompt that would be noise. */
static void shell_error(shell_t *sh, const char *fmt, ...) DAL_PRINTF(2, 3);
static void shell_error(shell_t *sh, const char *fmt, ...)
{
    va_list ap;

    sh->failed = 1;
    fputs("dal: ", stderr);
    if (!sh->interactive)
        fprintf(stderr, "line %lu: ", sh->stmt_line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Confirmations are for the person at the prompt, not for a script's output. */
static void shell_note(const shell_t *sh, const char *fmt, ...) DAL_PRINTF(2, 3);
static void shell_note(const shell_t *sh, const char *fmt, ...)
{
    va_list ap;

    if (!sh->interactive)
        return;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* ---------------------------------------------------------------- history */

#ifdef HAVE_LIBEDIT

static void history_open(shell_t *sh)
{
    const char *home = getenv("HOME");
    size_t n;

    rl_readline_name = "dal"; /* for settings in ~/.editrc */
    using_history();
    stifle_history(HISTORY_MAX);
    if (home == NULL || home[0] == '\0')
        return;
    n = strlen(home) + sizeof "/" HISTORY_FILE;
    sh->history = malloc(n);
    if (sh->history == NULL)
        return;
    snprintf(sh->history, n, "%s/%s", home, HISTORY_FILE);
    read_history(sh->history); /* absent the first time */
}

static void history_close(shell_t *sh)
{
    if (sh->history == NULL)
        return;
    /* Statements can hold personal data: keep the file private. */
    if (write_history(sh->history) == 0)
        chmod(sh->history, S_IRUSR | S_IWUSR);
}

/* A statement joins history as one line, however many lines it was typed on. */
static void shell_remember(const shell_t *sh, const char *text, size_t len)
{
    char *h, *p;
    size_t i;

    if (!sh->interactive || (h = malloc(len + 1)) == NULL)
        return;
    for (i = 0; i < len; i++)
        h[i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    h[len] = '\0';
    for (p = h; isspace((unsigned char)*p); p++)
        ;
    if (*p != '\0')
        add_history(p);
    free(h);
}

#else /* !HAVE_LIBEDIT: nothing to remember */

static void history_open(shell_t *sh) { (void)sh; }
static void history_close(shell_t *sh) { (void)sh; }
static void shell_remember(const shell_t *sh, const char *text, size_t len)
{
    (void)sh;
    (void)text;
    (void)len;
}

#endif

/* ------------------------------------------------------------- statements */

static void shell_run(shell_t *sh, const char *sql)
{
    dal_query_opts_t qo;
    dal_result_t *r = NULL;
    dal_error_t err = { 0 };
    int rc;

    cli_query_opts(sh->shard ? &sh->shard_val.v : NULL, sh->datasource, &qo);
    rc = dal_session_query(sh->session, &qo, sql, NULL, 0, &r, &err);
    if (rc == 0)
        rc = cli_print_result(r, sh->json, &err);
    dal_result_free(r);
    if (rc < 0)
        shell_error(sh, "%s", err.message[0] ? err.message : dal_strerror(err.code));
    /* Keep results and the errors on stderr in order when both are redirected. */
    fflush(stdout);
}

static void shell_explain(shell_t *sh, const char *sql)
{
    dal_query_opts_t qo;
    dal_error_t err = { 0 };

    cli_query_opts(sh->shard ? &sh->shard_val.v : NULL, sh->datasource, &qo);
    if (cli_run_explain(sh->dal, &qo, sql, NULL, 0, sh->json, &err) < 0)
        shell_error(sh, "%s", err.message[0] ? err.message : dal_strerror(err.code));
    fflush(stdout);
}

/* sql is the statement without its ';', trimmed here in place so that the
 * server, its logs and the monitor plugins see it as typed. */
static void shell_statement(shell_t *sh, char *sql)
{
    char *end = sql + strlen(sql);

    while (end > sql && isspace((unsigned char)end[-1]))
        *--end = '\0';
    while (isspace((unsigned char)*sql))
        sql++;
    shell_run(sh, sql);
}

/* -------------------------------------------------------------- scanning */

/*
 * Continue scanning buf[0..len) for the ';' that ends the statement.
 * Returns 1 with sc->pos at that ';', or 0 with everything scanned.
 * Quotes follow MySQL: backslash escapes in '...' and "...", none in
 * `...`, a doubled quote is two quotes in a row.  "-- " needs the blank
 * after it, as in MySQL.  Executable comments (slash-star-bang) are
 * statement text.
 */
static int scan_statement(sql_scan_t *sc, const char *buf, size_t len)
{
    for (; sc->pos < len; sc->pos++) {
        char c = buf[sc->pos], next = sc->pos + 1 < len ? buf[sc->pos + 1] : '\0';

        if (sc->state == IN_LINE_COMMENT) {
            if (c == '\n')
                sc->state = IN_CODE;
        } else if (sc->state == IN_BLOCK_COMMENT) {
            if (c == '*' && next == '/') {
                sc->state = IN_CODE;
                sc->pos++;
            }
        } else if (sc->quote != 0) {
            if (c == '\\' && sc->quote != '`' && next != '\0')
                sc->pos++;
            else if (c == sc->quote)
                sc->quote = 0;
        } else if (c == ';') {
            return 1;
        } else if (c == '#' || (c == '-' && next == '-' && sc->pos + 2 < len &&
                                isspace((unsigned char)buf[sc->pos + 2]))) {
            sc->state = IN_LINE_COMMENT;
        } else if (c == '/' && next == '*' &&
                   (sc->pos + 2 >= len || buf[sc->pos + 2] != '!')) {
            sc->state = IN_BLOCK_COMMENT;
            sc->pos++;
        } else if (!isspace((unsigned char)c)) {
            sc->content = 1;
            if (c == '\'' || c == '"' || c == '`')
                sc->quote = c;
        }
    }
    return 0;
}

/* Drop the first n bytes of the buffer and start scanning afresh. */
static void shell_consume(shell_t *sh, size_t n)
{
    memmove(sh->buf, sh->buf + n, sh->len - n);
    sh->len -= n;
    memset(&sh->scan, 0, sizeof sh->scan);
}

/* Run every statement the buffer now completes. */
static void shell_split(shell_t *sh)
{
    while (!sh->quit && scan_statement(&sh->scan, sh->buf, sh->len)) {
        size_t end = sh->scan.pos;

        if (sh->scan.content) {
            shell_remember(sh, sh->buf, end + 1); /* with its ';' */
            sh->buf[end] = '\0';
            shell_statement(sh, sh->buf);
        }
        shell_consume(sh, end + 1);
        sh->stmt_line = sh->lineno; /* the rest of this line starts the next one */
    }
    /* Nothing but blanks and comments pending: the next line starts afresh
     * (with the main prompt, and may be quit/exit). */
    if (!sh->scan.content && sh->scan.quote == 0 && sh->scan.state == IN_CODE)
        shell_consume(sh, sh->len);
}

static int shell_append(shell_t *sh, const char *line)
{
    size_t n = strlen(line);

    if (sh->len + n + 2 > sh->cap) {
        size_t cap = sh->cap ? sh->cap : 256;
        char *buf;

        while (cap < sh->len + n + 2)
            cap *= 2;
        buf = realloc(sh->buf, cap);
        if (buf == NULL)
            return -1;
        sh->buf = buf;
        sh->cap = cap;
    }
    if (sh->len == 0)
        sh->stmt_line = sh->lineno;
    memcpy(sh->buf + sh->len, line, n);
    sh->len += n;
    sh->buf[sh->len++] = '\n';
    sh->buf[sh->len] = '\0';
    return 0;
}

/* -------------------------------------------------------- shell commands */

/* Replace *slot by a copy of value (NULL or "" clears it). */
static int shell_set(char **slot, const char *value)
{
    char *copy = NULL;

    if (value != NULL && value[0] != '\0' && (copy = strdup(value)) == NULL)
        return -1;
    free(*slot);
    *slot = copy;
    return 0;
}

/*
 * Set the shard value from text (NULL or "": none), typed as a PARAM is
 * (cli_value_parse).  A bad value leaves the old one in force: 0, or -1
 * with why saying what is wrong.
 */
static int shell_set_shard(shell_t *sh, const char *text, char *why, size_t size)
{
    cli_value_t val = { 0 };
    char *copy = NULL;

    if (shell_set(&copy, text) < 0) {
        snprintf(why, size, "out of memory");
        return -1;
    }
    if (copy != NULL && cli_value_parse(copy, &val, why, size) != 0) {
        free(copy);
        return -1;
    }
    free(sh->shard);
    cli_value_free(&sh->shard_val);
    sh->shard = copy;
    sh->shard_val = val;
    return 0;
}

static void sc_quit(shell_t *sh, const char *arg)
{
    (void)arg;
    sh->quit = 1;
}

static void sc_clear(shell_t *sh, const char *arg)
{
    (void)arg;
    shell_consume(sh, sh->len);
}

static void sc_explain(shell_t *sh, const char *arg)
{
    if (arg[0] == '\0')
        shell_error(sh, "\\explain needs a statement");
    else
        shell_explain(sh, arg);
}

static void sc_shard(shell_t *sh, const char *arg)
{
    char why[160];

    if (shell_set_shard(sh, arg, why, sizeof why) < 0)
        shell_error(sh, "\\shard %s", why);
    else if (sh->shard != NULL)
        shell_note(sh, "shard value: %s", sh->shard);
    else
        shell_note(sh, "no shard value");
}

static void sc_ds(shell_t *sh, const char *arg)
{
    if (shell_set(&sh->datasource, arg) < 0)
        shell_error(sh, "out of memory");
    else if (sh->datasource != NULL)
        shell_note(sh, "datasource: %s", sh->datasource);
    else
        shell_note(sh, "datasource chosen by routing");
}

static void sc_json(shell_t *sh, const char *arg)
{
    (void)arg;
    sh->json = !sh->json;
    shell_note(sh, "JSON output %s", sh->json ? "on" : "off");
}

static void sc_help(shell_t *sh, const char *arg);

typedef struct shell_cmd {
    const char *name;
    void (*run)(shell_t *sh, const char *arg);
    const char *usage;
    const char *help;
} shell_cmd_t;

static const shell_cmd_t shell_cmds[] = {
    { "explain", sc_explain, "\\explain SQL", "show where SQL would run, without running it" },
    { "shard", sc_shard, "\\shard [VALUE]", "shard value of the following statements (none: clear)" },
    { "ds", sc_ds, "\\ds [NAME]", "run the following statements on datasource NAME (none: routed)" },
    { "json", sc_json, "\\json", "toggle JSON output" },
    { "c", sc_clear, "\\c", "discard the statement being typed" },
    { "h", sc_help, "\\h, \\?", "this help" },
    { "?", sc_help, NULL, NULL },
    { "q", sc_quit, "\\q, quit, exit", "leave the shell (or end of input)" },
};

#define NSHELL_CMDS (sizeof shell_cmds / sizeof shell_cmds[0])

static void sc_help(shell_t *sh, const char *arg)
{
    size_t i;

    (void)sh;
    (void)arg;
    puts("Statements end with ';' and may span lines.  A \\shard value is\n"
         "typed as a PARAM of exec is: int:5, uint:5, double:1.5, str:TEXT,\n"
         "hex:00ff, null (SQL NULL); other text is a string.  Commands start a line:");
    for (i = 0; i < NSHELL_CMDS; i++)
        if (shell_cmds[i].usage != NULL)
            printf("  %-16s %s\n", shell_cmds[i].usage, shell_cmds[i].help);
}

/* line starts with a backslash: "\name argument".  A trailing ';' is
 * dropped from the argument, as people type it out of habit. */
static void shell_command(shell_t *sh, char *line)
{
    char *name = line + 1, *arg, *end;
    size_t i, n;

    n = strcspn(name, " \t;");
    arg = name + n;
    arg += strspn(arg, " \t");
    end = arg + strlen(arg);
    while (end > arg && (isspace((unsigned char)end[-1]) || end[-1] == ';'))
        *--end = '\0';
    name[n] = '\0';
    for (i = 0; i < NSHELL_CMDS; i++)
        if (strcmp(shell_cmds[i].name, name) == 0) {
            shell_cmds[i].run(sh, arg);
            return;
        }
    shell_error(sh, "unknown shell command '\\%s' (\\h for help)", name);
}

/* "quit" or "exit", alone on a line that starts a statement. */
static int is_quit(const char *line)
{
    size_t n;

    line += strspn(line, " \t");
    n = strcspn(line, " \t;");
    if ((n != 4 || strncasecmp(line, "quit", 4) != 0) &&
        (n != 4 || strncasecmp(line, "exit", 4) != 0))
        return 0;
    return line[n + strspn(line + n, " \t;")] == '\0';
}

/* ------------------------------------------------------------------ input */

/* The next line without its newline, or NULL at the end of input.  Valid
 * until the next call. */
static char *shell_read(shell_t *sh)
{
    const char *prompt = sh->len > 0 ? PROMPT_MORE : PROMPT;
    ssize_t n;

#ifdef HAVE_LIBEDIT
    if (sh->interactive) {
        free(sh->line);
        sh->line = readline(prompt);
        return sh->line;
    }
#else
    if (sh->interactive) {
        fputs(prompt, stdout);
        fflush(stdout);
    }
#endif
    n = getline(&sh->line, &sh->line_cap, stdin);
    if (n < 0)
        return NULL;
    if (n > 0 && sh->line[n - 1] == '\n')
        sh->line[--n] = '\0';
    if (n > 0 && sh->line[n - 1] == '\r')
        sh->line[--n] = '\0';
    return sh->line;
}

static void shell_line(shell_t *sh, char *line)
{
    const char *p = line + strspn(line, " \t");

    if (*p == '\\') {
        /* Errors name this line, even amid a pending statement. */
        unsigned long stmt_line = sh->stmt_line;

        sh->stmt_line = sh->lineno;
        shell_remember(sh, p, strlen(p));
        shell_command(sh, line + (p - line));
        sh->stmt_line = stmt_line;
    } else if (sh->len == 0 && is_quit(line)) {
        sh->quit = 1;
    } else if (shell_append(sh, line) < 0) {
        shell_error(sh, "out of memory");
        sh->quit = 1;
    } else {
        shell_split(sh);
    }
}

static void shell_loop(shell_t *sh)
{
    char *line;

    while (!sh->quit && (line = shell_read(sh)) != NULL) {
        sh->lineno++;
        shell_line(sh, line);
    }
    if (sh->quit)
        return;
    if (sh->interactive)
        putchar('\n'); /* leave the terminal on a fresh line after ^D */
    else if (ferror(stdin))
        shell_error(sh, "cannot read standard input");
    /* A last statement without ';' still runs, as in the mysql client. */
    if (sh->len > 0 && sh->scan.content) {
        shell_remember(sh, sh->buf, sh->len);
        shell_statement(sh, sh->buf);
    }
}

/* ------------------------------------------------------------------ entry */

int cmd_shell(cli_t *cli)
{
    shell_t sh;
    char why[160];
    int rc;

    memset(&sh, 0, sizeof sh);
    sh.interactive = isatty(STDIN_FILENO);
    sh.json = cli->json;
    if (cli->shard_value != NULL &&
        shell_set_shard(&sh, cli->shard_value, why, sizeof why) < 0) {
        rc = cli_usage(cli, "--shard-value %s", why);
        goto out;
    }
    if (shell_set(&sh.datasource, cli->datasource) < 0) {
        cli_errorf("out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    rc = cli_open(cli, &sh.dal);
    if (rc != CLI_OK)
        goto out;
    {
        dal_error_t err;
        if (dal_session_open(sh.dal, &sh.session, &err) != 0) {
            cli_errorf("%s", err.message);
            rc = CLI_FAIL;
            goto out;
        }
    }
    if (sh.interactive) {
        history_open(&sh);
        printf("dal %s shell.  \\h for help, \\q to quit.\n", dal_version());
    }
    shell_loop(&sh);
    if (sh.interactive)
        history_close(&sh);
    rc = sh.failed && !sh.interactive ? CLI_FAIL : CLI_OK;
out:
    /* an open transaction is rolled back, as the mariadb client does */
    dal_session_close(sh.session);
    dal_close(sh.dal);
    free(sh.shard);
    cli_value_free(&sh.shard_val);
    free(sh.datasource);
    free(sh.history);
    free(sh.line);
    free(sh.buf);
    return rc;
}
