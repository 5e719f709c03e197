/*
 * reshard_sql.c -- what every `dal reshard` step shares: both layouts
 * opened and described, connections to the nodes' masters, the router of
 * the new layout, and building SQL text.
 */
#include "reshard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

double rs_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ text */

int rs_put(rs_buf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->s, cap);
        if (p == NULL) {
            cli_errorf("reshard: out of memory");
            return -1;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

int rs_puts(rs_buf_t *b, const char *s)
{
    return rs_put(b, s, strlen(s));
}

void rs_buf_free(rs_buf_t *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

int rs_put_value(rs_buf_t *b, MYSQL *m, const char *v, size_t len, int numeric)
{
    char *esc;
    int rc;

    if (v == NULL)
        return rs_puts(b, "NULL");
    if (numeric)
        return rs_put(b, v, len);
    esc = malloc(2 * len + 3);
    if (esc == NULL) {
        cli_errorf("reshard: out of memory");
        return -1;
    }
    esc[0] = '\'';
    len = mysql_real_escape_string(m, esc + 1, v, (unsigned long)len);
    esc[len + 1] = '\'';
    rc = rs_put(b, esc, len + 2);
    free(esc);
    return rc;
}

static int put_ident(rs_buf_t *b, const char *name)
{
    return rs_puts(b, "`") || rs_puts(b, name) || rs_puts(b, "`");
}

int rs_put_cols(rs_buf_t *b, const rs_t *rs)
{
    size_t i;

    for (i = 0; i < rs->ncols; i++)
        if ((i && rs_puts(b, ", ")) || put_ident(b, rs->cols[i]))
            return -1;
    return 0;
}

/* CRC32 of the columns' text with a marker per NULL, so that NULL and ''
 * differ. */
int rs_put_crc(rs_buf_t *b, const rs_t *rs)
{
    size_t i;

    if (rs_puts(b, "CRC32(CONCAT_WS('\\x1f'"))
        return -1;
    for (i = 0; i < rs->ncols; i++)
        if (rs_puts(b, ", ") || put_ident(b, rs->cols[i]))
            return -1;
    if (rs_puts(b, ", CONCAT(''"))
        return -1;
    for (i = 0; i < rs->ncols; i++)
        if (rs_puts(b, ", ISNULL(") || put_ident(b, rs->cols[i]) || rs_puts(b, ")"))
            return -1;
    return rs_puts(b, ")))");
}

/* ------------------------------------------------------------ connections */

MYSQL *rs_connect_server(const dal_server_settings_t *s, const char *node)
{
    unsigned int timeout = s->connect_timeout_ms ? (s->connect_timeout_ms + 999) / 1000 : 5;
    my_bool on = 1;
    MYSQL *m = mysql_init(NULL);

    if (m == NULL) {
        cli_errorf("reshard: out of memory");
        return NULL;
    }
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, s->charset);
    if (s->ssl_mode != NULL && strcmp(s->ssl_mode, "DISABLED") != 0) {
        if (s->ssl_ca != NULL)
            mysql_options(m, MYSQL_OPT_SSL_CA, s->ssl_ca);
        if (strcmp(s->ssl_mode, "PREFERRED") != 0)
            mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
        if (strncmp(s->ssl_mode, "VERIFY", 6) == 0)
            mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    }
    if (mysql_real_connect(m, s->socket ? "localhost" : s->host, s->user, s->password,
                           s->database, s->socket ? 0 : s->port, s->socket, 0) == NULL) {
        cli_errorf("reshard: datasource %s (%s): %s", node, s->address, mysql_error(m));
        mysql_close(m);
        return NULL;
    }
    return m;
}

static MYSQL *connect_node(dal_t *dal, const char *node)
{
    dal_datasource_info_t *ds = NULL;
    dal_error_t err = {0};
    MYSQL *m;

    if (dal_datasource_info(dal, node, &ds, &err) != 0) {
        cli_fail(&err);
        return NULL;
    }
    m = rs_connect_server(dal_datasource_info_server(ds, 0), node);
    dal_datasource_info_free(ds);
    return m;
}

MYSQL *rs_conn(rs_t *rs, rs_layout_t *l, size_t i)
{
    size_t j;

    (void)rs;
    if (l->conns[i] != NULL)
        return l->conns[i];
    for (j = 0; j < l->nphys; j++)
        if (l->conns[j] != NULL && strcmp(l->phys[j].node, l->phys[i].node) == 0)
            return l->conns[i] = l->conns[j];
    return l->conns[i] = rs_connect_server(dal_datasource_info_server(l->phys[i].ds, 0),
                                        l->phys[i].node);
}

int rs_exec(MYSQL *m, const char *what, const char *sql)
{
    MYSQL_RES *r;

    if (mysql_query(m, sql) != 0) {
        cli_errorf("reshard: %s: %s", what, mysql_error(m));
        return -1;
    }
    r = mysql_store_result(m);
    mysql_free_result(r);
    return 0;
}

int rs_scalar(MYSQL *m, const char *what, const char *sql, char **out)
{
    MYSQL_RES *r;
    MYSQL_ROW row;

    *out = NULL;
    if (mysql_query(m, sql) != 0 || (r = mysql_store_result(m)) == NULL) {
        cli_errorf("reshard: %s: %s", what, mysql_error(m));
        return -1;
    }
    row = mysql_fetch_row(r);
    if (row != NULL && row[0] != NULL && (*out = strdup(row[0])) == NULL) {
        mysql_free_result(r);
        cli_errorf("reshard: out of memory");
        return -1;
    }
    mysql_free_result(r);
    return 0;
}

/* ---------------------------------------------------------------- layouts */

static int server_where(dal_t *dal, rs_phys_t *p)
{
    const dal_server_settings_t *s;
    dal_error_t err = {0};

    if (dal_datasource_info(dal, p->node, &p->ds, &err) != 0)
        return cli_fail(&err);
    s = dal_datasource_info_server(p->ds, 0);
    snprintf(p->where, sizeof p->where, "%s/%s", s->address, s->database ? s->database : "");
    return CLI_OK;
}

static int open_layout(rs_layout_t *l, const cli_t *cli, const char *path, const char *table)
{
    dal_open_opts_t opts;
    dal_error_t err = {0};
    uint32_t pos;
    int node;

    l->path = path;
    cli_open_opts(cli, &opts);
    if (dal_open(path, &opts, &l->dal, &err) != 0 ||
        dal_table_info(l->dal, table, &l->info, &err) != 0) {
        cli_errorf("reshard: %s: %s", path, err.message);
        return CLI_FAIL;
    }
    if (dal_table_info_layout(l->info) == DAL_LAYOUT_BROADCAST) {
        cli_errorf("reshard: %s: table %s is a broadcast table; only sharded and single "
                   "tables can be resharded", path, table);
        return CLI_FAIL;
    }
    l->nphys = dal_table_info_table_shard_num(l->info);
    l->phys = calloc(l->nphys, sizeof *l->phys);
    l->conns = calloc(l->nphys, sizeof *l->conns);
    if (l->phys == NULL || l->conns == NULL) {
        cli_errorf("reshard: out of memory");
        return CLI_FAIL;
    }
    for (pos = 0; pos < l->nphys; pos++) {
        rs_phys_t *p = &l->phys[pos];
        node = dal_table_info_physical(l->info, pos, p->table, sizeof p->table);
        if (node < 0) {
            cli_errorf("reshard: %s: table %s position %u has no name", path, table, pos);
            return CLI_FAIL;
        }
        snprintf(p->node, sizeof p->node, "%s", dal_table_info_node(l->info, (uint32_t)node));
        if (server_where(l->dal, p) != CLI_OK)
            return CLI_FAIL;
    }
    return CLI_OK;
}

static void close_layout(rs_layout_t *l)
{
    size_t i, j;

    for (i = 0; l->conns != NULL && i < l->nphys; i++) {
        if (l->conns[i] == NULL)
            continue;
        for (j = i + 1; j < l->nphys; j++)
            if (l->conns[j] == l->conns[i])
                l->conns[j] = NULL;
        mysql_close(l->conns[i]);
    }
    free(l->conns);
    for (i = 0; l->phys != NULL && i < l->nphys; i++)
        dal_datasource_info_free(l->phys[i].ds);
    free(l->phys);
    dal_table_info_free(l->info);
    if (l->dal != NULL)
        dal_close(l->dal);
    memset(l, 0, sizeof *l);
}

static int is_int_type(const char *t)
{
    static const char *const ints[] = {"tinyint", "smallint", "mediumint", "int", "bigint"};
    size_t i;

    for (i = 0; t != NULL && i < sizeof ints / sizeof ints[0]; i++)
        if (strcasecmp(t, ints[i]) == 0)
            return 1;
    return 0;
}

/* The columns and the primary key of the old layout's first table. */
static int learn_columns(rs_t *rs)
{
    rs_buf_t q = {0};
    MYSQL *m = rs_conn(rs, &rs->old, 0);
    MYSQL_RES *r;
    MYSQL_ROW row;
    size_t npk = 0;

    if (m == NULL)
        return CLI_FAIL;
    if (rs_puts(&q, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_KEY FROM information_schema.COLUMNS"
                    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ") ||
        rs_put_value(&q, m, rs->old.phys[0].table, strlen(rs->old.phys[0].table), 0) ||
        rs_puts(&q, " ORDER BY ORDINAL_POSITION"))
        return CLI_FAIL;
    if (mysql_query(m, q.s) != 0 || (r = mysql_store_result(m)) == NULL) {
        cli_errorf("reshard: columns of %s on %s: %s", rs->old.phys[0].table,
                   rs->old.phys[0].node, mysql_error(m));
        rs_buf_free(&q);
        return CLI_FAIL;
    }
    rs_buf_free(&q);
    rs->cols = calloc(mysql_num_rows(r) + 1, sizeof *rs->cols);
    while (rs->cols != NULL && (row = mysql_fetch_row(r)) != NULL) {
        rs->cols[rs->ncols++] = strdup(row[0]);
        if (row[2] != NULL && strcmp(row[2], "PRI") == 0) {
            npk++;
            snprintf(rs->pk, sizeof rs->pk, "%s", row[0]);
            rs->pk_numeric = is_int_type(row[1]);
        }
        if (rs->shard_key[0] && strcasecmp(row[0], rs->shard_key) == 0)
            rs->key_int = is_int_type(row[1]);
    }
    mysql_free_result(r);
    if (rs->ncols == 0) {
        cli_errorf("reshard: table %s not found on datasource %s", rs->old.phys[0].table,
                   rs->old.phys[0].node);
        return CLI_FAIL;
    }
    if (npk != 1) {
        cli_errorf("reshard: table %s needs a primary key of one column (%s on %s has %zu)",
                   rs->table, rs->old.phys[0].table, rs->old.phys[0].node, npk);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int rs_open(rs_t *rs, const cli_t *cli, const char *to, const char *table)
{
    const char *key;

    rs->cli = cli;
    rs->table = table;
    if (open_layout(&rs->old, cli, cli->config, table) != CLI_OK)
        return CLI_FAIL;
    if (to != NULL && open_layout(&rs->new_, cli, to, table) != CLI_OK)
        return CLI_FAIL;
    key = dal_table_info_shard_key(rs->old.info);
    if (key == NULL && to != NULL)
        key = dal_table_info_shard_key(rs->new_.info);
    snprintf(rs->shard_key, sizeof rs->shard_key, "%s", key ? key : "");
    if (!rs->state_ds[0])
        snprintf(rs->state_ds, sizeof rs->state_ds, "%s", rs->old.phys[0].node);
    rs->state = connect_node(rs->old.dal, rs->state_ds);
    if (rs->state == NULL)
        return CLI_FAIL;
    return learn_columns(rs);
}

void rs_close(rs_t *rs)
{
    size_t i;

    close_layout(&rs->old);
    close_layout(&rs->new_);
    if (rs->state != NULL)
        mysql_close(rs->state);
    for (i = 0; i < rs->ncols; i++)
        free(rs->cols[i]);
    free(rs->cols);
    rs->state = NULL;
    rs->cols = NULL;
}

/* ---------------------------------------------------------------- routing */

long rs_route(rs_t *rs, const char *v, size_t len)
{
    dal_query_opts_t qo;
    dal_value_t val;
    dal_plan_t *p = NULL;
    dal_error_t err = {0};
    char sql[300], num[32];
    const char *ds, *tb;
    size_t i;
    long found = -1;

    memset(&qo, 0, sizeof qo);
    if (v == NULL)
        val = dal_null();
    else if (rs->key_int && len < sizeof num) {
        memcpy(num, v, len);
        num[len] = '\0';
        errno = 0;
        val = dal_int(strtoll(num, NULL, 10));
        if (errno == ERANGE && num[0] != '-')
            val = dal_uint(strtoull(num, NULL, 10));
    } else
        val = dal_strn(v, len);
    qo.shard_value = &val;
    snprintf(sql, sizeof sql, "SELECT 1 FROM %s", rs->table);
    if (dal_explain(rs->new_.dal, &qo, sql, NULL, 0, &p, &err) != 0) {
        cli_errorf("reshard: routing %s = '%.*s' in %s: %s", rs->shard_key,
                   (int)(len > 40 ? 40 : len), v ? v : "NULL", rs->new_.path, err.message);
        return -1;
    }
    ds = dal_plan_count(p) == 1 ? dal_plan_datasource(p, 0) : NULL;
    tb = ds != NULL ? dal_plan_table(p, 0) : NULL;
    for (i = 0; tb != NULL && i < rs->new_.nphys && found < 0; i++)
        if (strcmp(rs->new_.phys[i].node, ds) == 0 && strcmp(rs->new_.phys[i].table, tb) == 0)
            found = (long)i;
    if (found < 0 && rs->new_.nphys == 1 && ds != NULL &&
        strcmp(rs->new_.phys[0].node, ds) == 0)
        found = 0;   /* a single table: dal_plan_table names only sharded ones */
    if (found < 0)
        cli_errorf("reshard: %s = '%.*s' routes to no single table of %s", rs->shard_key,
                   (int)(len > 40 ? 40 : len), v ? v : "NULL", rs->new_.path);
    dal_plan_free(p);
    return found;
}
