/*
 * ps_client.c -- runs statements through libmysqlclient's prepared
 * statement API (the binary protocol) and prints what it gets, so that
 * proxy_test.sh can compare dal-proxy with a plain server.
 *
 *   ps_client HOST PORT USER PASSWORD DATABASE < script
 *
 * Each script line is a statement, then its parameters, TAB-separated:
 * NULL, an integer (bound as LONGLONG), a number with a '.' (DOUBLE),
 * `L:text` (sent with mysql_stmt_send_long_data in two pieces), anything
 * else a string.  A line `!change_user USER PASSWORD DATABASE` calls
 * mysql_change_user instead, `!reset_connection` mysql_reset_connection,
 * `!list_fields TABLE [WILDCARD]` mysql_list_fields (COM_FIELD_LIST),
 * and `!prepare STATEMENT` only prepares it (its parameter and column
 * counts and the columns prepare described, then the handle is closed),
 * printing each column's name, table, type, flags and default.  Each statement is prepared and executed; one that
 * returns rows is executed a second time without rebinding, which
 * exercises the execute that reuses the previous parameter types.  Results
 * are fetched into string buffers, so the client library decodes the
 * binary rows.  Exits non-zero only when the connection fails: statement
 * errors are printed, as the server's answer to compare.  PS_CLIENT_CHARSET
 * in the environment names the character set the handshake asks for.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 16
#define MAXC 32
#define VAL_LEN 256

typedef struct param {
    long long i;
    double d;
    char s[VAL_LEN];
    unsigned long len;
    my_bool is_null;
    const char *long_data;  /* `L:` values: into s, sent as long data */
} param_t;

static void print_error(const char *what, MYSQL_STMT *st)
{
    printf("%s error %u (%s)\n", what, mysql_stmt_errno(st), mysql_stmt_sqlstate(st));
}

static void bind_params(char *args, MYSQL_BIND *b, param_t *p, unsigned *np)
{
    char *tok;

    *np = 0;
    while ((tok = strsep(&args, "\t")) != NULL && *np < MAXP) {
        param_t *v = &p[*np];
        MYSQL_BIND *x = &b[*np];
        char *end;

        memset(v, 0, sizeof *v);
        memset(x, 0, sizeof *x);
        if (strcmp(tok, "NULL") == 0) {
            v->is_null = 1;
            x->buffer_type = MYSQL_TYPE_NULL;
            x->is_null = &v->is_null;
        } else if (v->i = strtoll(tok, &end, 10), *tok != '\0' && *end == '\0') {
            x->buffer_type = MYSQL_TYPE_LONGLONG;
            x->buffer = &v->i;
        } else if (v->d = strtod(tok, &end), *tok != '\0' && *end == '\0') {
            x->buffer_type = MYSQL_TYPE_DOUBLE;
            x->buffer = &v->d;
        } else {
            if (strncmp(tok, "L:", 2) == 0)
                v->long_data = tok += 2;
            snprintf(v->s, sizeof v->s, "%s", tok);
            v->len = (unsigned long)strlen(v->s);
            x->buffer_type = MYSQL_TYPE_STRING;
            x->buffer = v->s;
            x->buffer_length = sizeof v->s;
            x->length = &v->len;
        }
        (*np)++;
    }
}

static void send_long(MYSQL_STMT *st, const param_t *p, unsigned np)
{
    unsigned i;

    for (i = 0; i < np; i++)
        if (p[i].long_data != NULL) {
            unsigned long half = p[i].len / 2;
            mysql_stmt_send_long_data(st, i, p[i].s, half);
            mysql_stmt_send_long_data(st, i, p[i].s + half, p[i].len - half);
        }
}

static void print_rows(MYSQL_STMT *st, unsigned nc)
{
    static char buf[MAXC][VAL_LEN];
    unsigned long len[MAXC];
    my_bool null[MAXC], error[MAXC];
    MYSQL_BIND b[MAXC];
    unsigned i;
    int rc;

    memset(b, 0, sizeof b);
    for (i = 0; i < nc; i++) {
        b[i].buffer_type = MYSQL_TYPE_STRING;
        b[i].buffer = buf[i];
        b[i].buffer_length = VAL_LEN;
        b[i].length = &len[i];
        b[i].is_null = &null[i];
        b[i].error = &error[i];
    }
    if (mysql_stmt_bind_result(st, b) != 0 || mysql_stmt_store_result(st) != 0) {
        print_error("result", st);
        return;
    }
    printf("rows %llu\n", (unsigned long long)mysql_stmt_num_rows(st));
    while ((rc = mysql_stmt_fetch(st)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
        for (i = 0; i < nc; i++)
            printf("%s%.*s", i ? "\t" : "", null[i] ? 4 : (int)len[i], null[i] ? "NULL" : buf[i]);
        printf("\n");
    }
    if (rc != MYSQL_NO_DATA)
        print_error("fetch", st);
}

static void print_columns(MYSQL_STMT *st)
{
    MYSQL_RES *meta = mysql_stmt_result_metadata(st);
    MYSQL_FIELD *f;

    if (meta == NULL)
        return;
    while ((f = mysql_fetch_field(meta)) != NULL)
        printf("column %s type %d%s\n", f->name, (int)f->type,
               (f->flags & UNSIGNED_FLAG) ? " unsigned" : "");
    mysql_free_result(meta);
}

/* Columns are printed after the first execution: the client then holds
 * the types the execution's result carried, as a server may refine at
 * execute what it guessed at prepare (`SELECT ? + 1`). */
static void execute(MYSQL_STMT *st, const param_t *p, unsigned np, unsigned nc, int first)
{
    send_long(st, p, np);
    if (mysql_stmt_execute(st) != 0) {
        print_error("execute", st);
        return;
    }
    if (first)
        print_columns(st);
    if (nc > 0)
        print_rows(st, nc);
    else
        printf("affected %llu\n", (unsigned long long)mysql_stmt_affected_rows(st));
    mysql_stmt_free_result(st);
}

/* Prepare only: what COM_STMT_PREPARE's answer says, nothing executed. */
static void prepare_only(MYSQL *db, const char *sql)
{
    MYSQL_STMT *st = mysql_stmt_init(db);

    printf("> prepare %s\n", sql);
    if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0) {
        print_error("prepare", st);
    } else {
        printf("params %lu columns %u\n", mysql_stmt_param_count(st), mysql_stmt_field_count(st));
        print_columns(st);
    }
    mysql_stmt_close(st);
}

static void run_line(MYSQL *db, char *line)
{
    static MYSQL_BIND b[MAXP];
    static param_t p[MAXP];
    char *tab = strchr(line, '\t');
    MYSQL_STMT *st = mysql_stmt_init(db);
    unsigned np = 0, nc;

    if (tab != NULL)
        *tab++ = '\0';
    printf("> %s\n", line);
    if (mysql_stmt_prepare(st, line, (unsigned long)strlen(line)) != 0) {
        print_error("prepare", st);
        mysql_stmt_close(st);
        return;
    }
    if (tab != NULL)
        bind_params(tab, b, p, &np);
    nc = mysql_stmt_field_count(st);
    printf("params %lu columns %u\n", mysql_stmt_param_count(st), nc);
    if (np > 0 && mysql_stmt_bind_param(st, b) != 0) {
        print_error("bind", st);
        mysql_stmt_close(st);
        return;
    }
    execute(st, p, np, nc, 1);
    if (nc > 0)
        execute(st, p, np, nc, 0);
    mysql_stmt_close(st);
}

/* COM_FIELD_LIST of table: one line a column. */
static void list_fields(MYSQL *db, const char *table, const char *wild)
{
    MYSQL_RES *res = mysql_list_fields(db, table, wild);
    MYSQL_FIELD *f;

    if (res == NULL) {
        printf("list_fields %s error %u (%s)\n", table, mysql_errno(db), mysql_sqlstate(db));
        return;
    }
    while ((f = mysql_fetch_field(res)) != NULL)
        printf("field %s table %s type %d flags %u default %s%s%s\n", f->name, f->table,
               (int)f->type, f->flags, f->def != NULL ? "'" : "", f->def != NULL ? f->def : "NULL",
               f->def != NULL ? "'" : "");
    mysql_free_result(res);
}

int main(int argc, char **argv)
{
    MYSQL *db = mysql_init(NULL);
    char line[4096];

    if (argc != 6) {
        fprintf(stderr, "usage: ps_client HOST PORT USER PASSWORD DATABASE < script\n");
        return 2;
    }
    if (getenv("PS_CLIENT_CHARSET") != NULL)
        mysql_options(db, MYSQL_SET_CHARSET_NAME, getenv("PS_CLIENT_CHARSET"));
    if (mysql_real_connect(db, argv[1], argv[3], argv[4], argv[5], (unsigned)atoi(argv[2]), NULL,
                           0) == NULL) {
        fprintf(stderr, "ps_client: %s\n", mysql_error(db));
        return 1;
    }
    while (fgets(line, sizeof line, stdin) != NULL) {
        char user[64], pass[64], dbname[64];
        int n;
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, "!reset_connection") == 0) {
            printf("reset_connection %s\n", mysql_reset_connection(db) == 0 ? "ok" : "error");
        } else if (strncmp(line, "!prepare ", 9) == 0) {
            prepare_only(db, line + 9);
        } else if ((n = sscanf(line, "!list_fields %63s %63s", user, pass)) >= 1) {
            list_fields(db, user, n == 2 ? pass : NULL);
        } else if (sscanf(line, "!change_user %63s %63s %63s", user, pass, dbname) == 3) {
            if (mysql_change_user(db, user, pass, dbname) == 0)
                printf("change_user %s ok\n", user);
            else
                printf("change_user %s error %u (%s)\n", user, mysql_errno(db), mysql_sqlstate(db));
        } else if (line[0] != '\0' && line[0] != '#') {
            run_line(db, line);
        }
    }
    mysql_close(db);
    return 0;
}
