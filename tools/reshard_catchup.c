/*
 * reshard_catchup.c -- `dal reshard catchup`: the changes made to the old
 * tables since the copy began, applied to the new layout.
 *
 * The binary logs are read by `mariadb-binlog --read-from-remote-server
 * --verbose` (the MariaDB client package's decoder; $DAL_MARIADB_BINLOG
 * overrides the program), one node of the old layout at a time, in rounds:
 * a round takes the node's @@gtid_binlog_pos as its end and reads the
 * events after the position the last round ended at (at first, the
 * position the copy recorded) up to that end.  From every row event on one
 * of the node's old tables only the primary key is kept (the row images
 * are printed as `@N=value`, N the column's place); at the end of the
 * round those keys are read again from the old layout and placed in the
 * new one (reshard_apply.c), and the round's end is saved as the node's
 * position ("binlog:NODE" in the state table).  A statement that changes
 * the definition of one of the old tables (ALTER, DROP, RENAME, TRUNCATE,
 * CREATE ... in their database) stops the catch-up with an error.
 *
 * Rounds repeat until one takes less than a second from taking its end to
 * applying its keys: the lag is then under a second.  --follow keeps going.
 * The copy must be finished first: a chunk written after a newer change was
 * applied would put the older row back.
 */
#include "reshard.h"

#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What one round of one node collects. */
typedef struct round {
    rs_t *rs;
    size_t first;        /* the node's first entry in rs->old.phys */
    char db[128];        /* the node's database */
    char cur_db[128];    /* the database of the statements being read (`use`) */
    int in_table;        /* the row event being read is on one of the node's tables */
    unsigned pk_at;      /* the primary key's place in the row images (1-based) */
    char **keys;         /* owned */
    size_t nkeys, cap;
    int ddl;             /* a DDL statement on one of the tables was seen */
    char ddl_text[200];
} round_t;

static int same_node(const rs_t *rs, size_t a, size_t b)
{
    return strcmp(rs->old.phys[a].node, rs->old.phys[b].node) == 0;
}

/* Is name (len bytes) one of the node's old tables? */
static int node_table(const round_t *r, const char *name, size_t len)
{
    size_t i;

    for (i = r->first; i < r->rs->old.nphys; i++)
        if (same_node(r->rs, i, r->first) && strlen(r->rs->old.phys[i].table) == len &&
            strncasecmp(r->rs->old.phys[i].table, name, len) == 0)
            return 1;
    return 0;
}

/* "`db`.`table`" at s: does it name one of the node's tables? */
static int names_node_table(const round_t *r, const char *s)
{
    const char *d = strchr(s, '`'), *d2, *t, *t2;

    if (d == NULL || (d2 = strchr(d + 1, '`')) == NULL || (t = strchr(d2 + 1, '`')) == NULL ||
        (t2 = strchr(t + 1, '`')) == NULL)
        return 0;
    return (size_t)(d2 - d - 1) == strlen(r->db) && strncmp(d + 1, r->db, strlen(r->db)) == 0 &&
           node_table(r, t + 1, (size_t)(t2 - t - 1));
}

static int add_key(round_t *r, const char *v, size_t len)
{
    if (r->nkeys == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        char **k = realloc(r->keys, cap * sizeof *k);
        if (k == NULL)
            return -1;
        r->keys = k;
        r->cap = cap;
    }
    r->keys[r->nkeys] = strndup(v, len);
    return r->keys[r->nkeys++] == NULL ? -1 : 0;
}

/* "###   @N=value": the primary key's value, as text. */
static int row_value(round_t *r, const char *line)
{
    const char *at = strstr(line, "@"), *v, *end;
    unsigned n;

    if (at == NULL || (n = (unsigned)strtoul(at + 1, (char **)&v, 10)) != r->pk_at || *v != '=')
        return 0;
    v++;
    if (*v == '\'') {   /* a string: up to the last quote of the line */
        end = strrchr(v, '\'');
        return add_key(r, v + 1, end > v ? (size_t)(end - v - 1) : 0);
    }
    for (end = v; *end && !isspace((unsigned char)*end); end++)
        ;
    return add_key(r, v, (size_t)(end - v));
}

/* The identifier that ends just before p[-1] == '.' (backquotes allowed):
 * is it db? */
static int qualified_by(const char *line, const char *p, const char *db)
{
    const char *e, *b;

    if (p <= line + 1 || p[-1] != '.')
        return 0;
    e = p - 1;                      /* the dot */
    if (e > line && e[-1] == '`')
        e--;
    for (b = e; b > line && (isalnum((unsigned char)b[-1]) || b[-1] == '_' || b[-1] == '$'); b--)
        ;
    return (size_t)(e - b) == strlen(db) && strncmp(b, db, (size_t)(e - b)) == 0;
}

/* Does this statement line change the definition of one of the tables?
 * A table name counts when qualified by the node's database, or unqualified
 * under `use` of it. */
static void check_ddl(round_t *r, const char *line)
{
    static const char *const verbs[] = {"alter", "drop", "rename", "truncate", "create"};
    size_t i, n;
    const char *p;

    for (i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strncasecmp(line, verbs[i], strlen(verbs[i])) == 0)
            break;
    if (i == sizeof verbs / sizeof verbs[0])
        return;
    for (p = line; *p; p++) {
        const char *start = p;
        if (!isalnum((unsigned char)*p) && *p != '_')
            continue;
        for (n = 0; isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$'; n++)
            ;
        if (start > line && start[-1] == '`')
            start--;
        if (node_table(r, p, n) &&
            (qualified_by(line, start, r->db) ||
             ((start == line || start[-1] != '.') && strcmp(r->cur_db, r->db) == 0))) {
            r->ddl = 1;
            snprintf(r->ddl_text, sizeof r->ddl_text, "%s", line);
            return;
        }
        p += n - 1;
    }
}

static int parse_line(round_t *r, char *line)
{
    size_t n = strlen(line);

    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    if (strncmp(line, "### INSERT INTO ", 16) == 0 || strncmp(line, "### UPDATE ", 11) == 0 ||
        strncmp(line, "### DELETE FROM ", 16) == 0) {
        r->in_table = names_node_table(r, line);
        return 0;
    }
    if (strncmp(line, "###", 3) == 0)
        return r->in_table ? row_value(r, line) : 0;
    if (line[0] == '#' || strncmp(line, "/*", 2) == 0)
        return 0;
    if (strncmp(line, "use `", 5) == 0) {
        const char *e = strchr(line + 5, '`');
        snprintf(r->cur_db, sizeof r->cur_db, "%.*s", e ? (int)(e - line - 5) : 0, line + 5);
        return 0;
    }
    check_ddl(r, line);
    return 0;
}

/* ----------------------------------------------------------- the reader */

static const char *binlog_program(void)
{
    const char *p = getenv("DAL_MARIADB_BINLOG");

    return p != NULL && *p ? p : "mariadb-binlog";
}

/* Run the reader for the node's server s from start to end; parse its
 * output into r.  0, or -1 after reporting. */
static int read_binlog(round_t *r, const dal_server_settings_t *s, const char *file,
                       const char *start, const char *end)
{
    char port[16], startp[600], endp[600];
    const char *argv[24];
    int out[2], st, rc = 0;
    size_t a = 0;
    char *line = NULL;
    size_t cap = 0;
    FILE *f;
    pid_t pid;

    snprintf(port, sizeof port, "%u", s->port);
    snprintf(startp, sizeof startp, "--start-position=%s", start);
    snprintf(endp, sizeof endp, "--stop-position=%s", end);
    argv[a++] = binlog_program();
    argv[a++] = "--read-from-remote-server";
    argv[a++] = "--to-last-log";
    argv[a++] = "--skip-gtid-strict-mode";
    argv[a++] = "--verbose";
    argv[a++] = "--base64-output=DECODE-ROWS";
    argv[a++] = startp;
    argv[a++] = endp;
    if (s->socket != NULL) {
        argv[a++] = "--socket";
        argv[a++] = s->socket;
    } else {
        argv[a++] = "--host";
        argv[a++] = s->host;
        argv[a++] = "--port";
        argv[a++] = port;
    }
    argv[a++] = "--user";
    argv[a++] = s->user;
    argv[a++] = file;
    argv[a] = NULL;
    if (pipe(out) != 0) {
        cli_errorf("reshard: catch-up: pipe failed");
        return -1;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        /* the password through the environment: never on a command line */
        if (s->password != NULL)
            setenv("MYSQL_PWD", s->password, 1);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "dal: reshard: cannot run %s\n", argv[0]);
        _exit(127);
    }
    close(out[1]);
    if (pid < 0 || (f = fdopen(out[0], "r")) == NULL) {
        cli_errorf("reshard: catch-up: cannot start %s", argv[0]);
        close(out[0]);
        return -1;
    }
    while (getline(&line, &cap, f) >= 0)
        if (rc == 0 && parse_line(r, line) != 0)
            rc = -1;
    free(line);
    fclose(f);
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        cli_errorf("reshard: catch-up: %s for datasource %s (%s) failed from GTID %s",
                   argv[0], r->rs->old.phys[r->first].node, s->address, start);
        return -1;
    }
    return rc;
}

/* ------------------------------------------------------------- a round */

static int first_binlog(MYSQL *m, const char *node, char **file)
{
    return rs_scalar(m, node, "SHOW BINARY LOGS", file) != 0 || *file == NULL ? -1 : 0;
}

static unsigned pk_place(const rs_t *rs)
{
    size_t i;

    for (i = 0; i < rs->ncols; i++)
        if (strcasecmp(rs->cols[i], rs->pk) == 0)
            return (unsigned)i + 1;
    return 0;
}

/* The node's catch-up state: created from its first source's copy
 * position. */
static int node_state(rs_t *rs, size_t first, rs_state_t *st)
{
    char src[300];
    rs_state_t copy;
    int found;

    snprintf(src, sizeof src, "%s:%s", rs->reverse ? "reverse" : "binlog",
             rs->old.phys[first].node);
    if ((found = rs_state_get(rs, src, st)) != 0)
        return found < 0 ? -1 : 0;
    if (rs->reverse) {
        cli_errorf("reshard: %s has no position of the switch; `reshard reverse` follows a "
                   "switch made by this version", src);
        return -1;
    }
    snprintf(src, sizeof src, "%s.%s", rs->old.phys[first].node, rs->old.phys[first].table);
    if ((found = rs_state_get(rs, src, &copy)) <= 0 || copy.gtid == NULL) {
        if (found == 0)
            cli_errorf("reshard: %s has no copy position; run `reshard copy` first", src);
        rs_state_free(&copy);
        return -1;
    }
    snprintf(st->src, sizeof st->src, "binlog:%s", rs->old.phys[first].node);
    snprintf(st->phase, sizeof st->phase, "catching-up");
    st->gtid = copy.gtid;
    copy.gtid = NULL;
    rs_state_free(&copy);
    st->started = rs_now();
    st->lag_ms = -1;
    return 0;
}

/* One round on the node of old entry first: the lag in ms, or -1. */
static long long node_round(rs_t *rs, size_t first, const dal_server_settings_t *s)
{
    MYSQL *m = rs_conn(rs, &rs->old, first);
    double t0 = rs_now();
    rs_state_t st;
    char *end = NULL, *file = NULL;
    round_t r;
    int rc, n = 0;

    memset(&r, 0, sizeof r);
    r.rs = rs;
    r.first = first;
    r.pk_at = pk_place(rs);
    snprintf(r.db, sizeof r.db, "%s", s->database ? s->database : "");
    if (m == NULL || node_state(rs, first, &st) != 0)
        return -1;
    rc = rs_scalar(m, s->address, "SELECT @@gtid_binlog_pos", &end) != 0 || end == NULL ? -1 : 0;
    if (rc == 0 && st.gtid != NULL && strcmp(st.gtid, end) != 0)
        rc = first_binlog(m, rs->old.phys[first].node, &file) != 0 ||
             read_binlog(&r, s, file, st.gtid[0] ? st.gtid : "0-0-0", end) != 0 ? -1 : 0;
    if (rc == 0 && r.ddl) {
        cli_errorf("reshard: catch-up stops: the definition of a table of %s on datasource %s "
                   "changed (%s); run `reshard abort` and start again", rs->table,
                   rs->old.phys[first].node, r.ddl_text);
        rc = -1;
    }
    if (rc == 0 && rs->count_only)
        rs->counted += r.nkeys;
    else if (rc == 0 && (n = rs_apply_keys(rs, r.keys, r.nkeys)) < 0)
        rc = -1;
    else
        r.nkeys = 0;
    while (r.nkeys > 0)
        free(r.keys[--r.nkeys]);
    free(r.keys);
    if (rc == 0 && !rs->count_only) {
        free(st.gtid);
        st.gtid = end;
        end = NULL;
        st.rows_copied += (uint64_t)n;
        st.updated = rs_now();
        st.lag_ms = (int64_t)((st.updated - t0) * 1000);
        rc = rs_state_put(rs, &st);
    }
    free(end);
    free(file);
    rs_state_free(&st);
    return rc == 0 ? (long long)((rs_now() - t0) * 1000) : -1;
}

int rs_catchup_round(rs_t *rs, long long *lag)
{
    size_t i, j;

    *lag = 0;
    for (i = 0; i < rs->old.nphys; i++) {
        long long l;
        for (j = 0; j < i && !same_node(rs, i, j); j++)
            ;
        if (j < i)
            continue;   /* this node had its round */
        l = node_round(rs, i, dal_datasource_info_server(rs->old.phys[i].ds, 0));
        if (l < 0)
            return CLI_FAIL;
        if (l > *lag)
            *lag = l;
    }
    return CLI_OK;
}

static volatile sig_atomic_t stop_following;

static void on_stop(int sig)
{
    (void)sig;
    stop_following = 1;
}

int rs_catchup_rounds(rs_t *rs, long long *lag)
{
    struct timespec pause = {0, 200 * 1000 * 1000};
    int rc;

    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    do {
        rc = rs_pause_if_busy(rs) == 0 ? rs_catchup_round(rs, lag) : CLI_FAIL;
        if (rc == CLI_OK && rs->follow && *lag < 1000)
            nanosleep(&pause, NULL);
    } while (rc == CLI_OK && (rs->follow ? !stop_following : *lag >= 1000));
    return rc;
}

int rs_catchup(rs_t *rs)
{
    rs_state_t flow;
    long long lag = 0;
    int found, rc = CLI_OK;

    if (rs_check(rs) != CLI_OK || rs_lock(rs) != CLI_OK || rs_state_init(rs) != CLI_OK ||
        (found = rs_state_get(rs, "", &flow)) < 0)
        return CLI_FAIL;
    if (!found || (strcmp(flow.phase, "copied") != 0 && strcmp(flow.phase, "caught-up") != 0)) {
        cli_errorf("reshard: %s is in phase %s; the catch-up follows a finished copy",
                   rs->table, found ? flow.phase : "none");
        rs_state_free(&flow);
        return CLI_FAIL;
    }
    rc = rs_catchup_rounds(rs, &lag);
    if (rc == CLI_OK) {
        snprintf(flow.phase, sizeof flow.phase, "caught-up");
        flow.updated = rs_now();
        rc = rs_state_put(rs, &flow) == 0 ? CLI_OK : CLI_FAIL;
    }
    if (rc == CLI_OK && !rs->cli->json)
        printf("caught up %s: lag %lld ms\n", rs->table, lag);
    else if (rc == CLI_OK)
        printf("{\"phase\":\"caught-up\",\"lag_ms\":%lld}\n", lag);
    rs_state_free(&flow);
    return rc;
}
