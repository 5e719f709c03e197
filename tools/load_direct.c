/*
 * load_direct.c -- `dal load --direct`: the workloads through plain
 * libmysqlclient, as an application without dal would run them.
 *
 * Each thread has one connection per data node; the physical table of a
 * key comes from MTDDL's mod formula with --tables and --dbs, and the
 * parameters are written into the SQL text (strings escaped for the
 * connection): the same physical statements dal sends.  The connection
 * settings of each node are dal's own (dal_datasource_info), so the two
 * sides reach the same servers the same way; before a run, dal_explain
 * must agree with the formula for every table position.  With
 * --server-prepared each thread prepares each statement once per
 * connection and table and runs it with bound parameters, as an
 * application using server-side prepared statements would (the scatter
 * statement stays text: it pipelines over the nodes).
 */
#include "load.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One data node: [datasource GROUP<i>]. */
typedef struct direct_node {
    char name[LOAD_MAX_NAME + 24];          /* datasource name: group + index */
    dal_datasource_info_t *info;            /* owned */
    const dal_server_settings_t *master;    /* inside info */
} direct_node_t;

struct load_direct {
    direct_node_t *nodes;           /* owned, ndbs long */
    uint64_t nnodes;
    uint64_t per_node;              /* physical tables per node */
    char *sql[ST_COUNT];            /* owned: {T} left for the physical table */
};

/* A key is a row: its shard key value and its id (see --prepare). */
static uint64_t table_of(const load_ctx_t *ctx, uint64_t key)
{
    return key % ctx->o->tables;
}

static uint64_t node_of_table(const load_direct_t *d, uint64_t table)
{
    return table / d->per_node;
}

void load_direct_free(load_direct_t *d)
{
    size_t i;

    if (d == NULL)
        return;
    for (i = 0; d->nodes != NULL && i < d->nnodes; i++)
        dal_datasource_info_free(d->nodes[i].info);
    for (i = 0; i < ST_COUNT; i++)
        free(d->sql[i]);
    free(d->nodes);
    free(d);
}

/* The master of every node, as dal connects to it.  An error names the
 * file and the node. */
static int read_nodes(const load_ctx_t *ctx, load_direct_t *d, dal_error_t *err)
{
    char msg[DAL_ERROR_MSG_MAX];
    direct_node_t *n;
    uint64_t i;
    int rc;

    for (i = 0; i < d->nnodes; i++) {
        n = &d->nodes[i];
        snprintf(n->name, sizeof n->name, "%s%" PRIu64, ctx->o->group, i);
        rc = dal_datasource_info(ctx->dal, n->name, &n->info, err);
        if (rc == DAL_EINVAL) {
            snprintf(msg, sizeof msg, "%s: no [datasource %s] with a master URL (--direct needs "
                     "one for each of the --dbs nodes of --group)", ctx->cli->config, n->name);
            return cli_set_error(err, DAL_ECONFIG, msg);
        }
        if (rc < 0)
            return rc;
        n->master = dal_datasource_info_server(n->info, 0);
    }
    return 0;
}

/*
 * --direct computes the physical table with the mod formula from --tables
 * and --dbs.  Ask dal where each position really goes, so that a mismatch
 * between the options and the configuration (or a strategy other than mod)
 * is an error instead of a benchmark against the wrong tables.
 */
static int check_position(const load_ctx_t *ctx, const char *sql, uint64_t pos,
                          dal_error_t *err)
{
    const load_direct_t *d = ctx->direct;
    dal_value_t v = dal_uint(pos);
    const direct_node_t *want = &d->nodes[node_of_table(d, pos)];
    char table[2 * LOAD_MAX_NAME], msg[DAL_ERROR_MSG_MAX];
    const char *ds, *tb;
    dal_plan_t *plan = NULL;
    int rc = dal_explain(ctx->dal, NULL, sql, &v, 1, &plan, err);

    if (rc < 0)
        return rc;
    snprintf(table, sizeof table, "%s_%" PRIu64, ctx->o->table, pos);
    ds = dal_plan_count(plan) == 1 ? dal_plan_datasource(plan, 0) : "(several)";
    tb = dal_plan_count(plan) == 1 ? dal_plan_table(plan, 0) : NULL;
    if (strcmp(ds, want->name) != 0 || tb == NULL || strcmp(tb, table) != 0) {
        snprintf(msg, sizeof msg, "--direct would send %s = %" PRIu64 " to %s.%s but dal "
                 "routes it to %s.%s: set --table, --shard-key, --group, --tables and --dbs "
                 "as in the configuration (the mod strategy)", ctx->o->shard_key, pos,
                 want->name, table, ds, tb ? tb : "?");
        rc = cli_set_error(err, DAL_ECONFIG, msg);
    }
    dal_plan_free(plan);
    return rc;
}

static int check_layout(const load_ctx_t *ctx, dal_error_t *err)
{
    char *sql = load_expand_sql(load_probe_sql, ctx->o->table, ctx->o->shard_key);
    uint64_t pos;
    int rc = 0;

    if (sql == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    for (pos = 0; pos < ctx->o->tables && rc == 0; pos++)
        rc = check_position(ctx, sql, pos, err);
    free(sql);
    return rc;
}

int load_direct_init(load_ctx_t *ctx, dal_error_t *err)
{
    const load_opts_t *o = ctx->o;
    load_direct_t *d = calloc(1, sizeof *d);
    size_t i;
    int rc;

    if (d == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    ctx->direct = d;
    d->per_node = o->tables / o->dbs;
    d->nodes = calloc(o->dbs, sizeof *d->nodes);
    if (d->nodes == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    d->nnodes = o->dbs;
    for (i = 0; i < ST_COUNT; i++)
        if ((d->sql[i] = load_expand_sql(load_stmt_defs[i].sql, NULL, o->shard_key)) == NULL)
            return cli_set_error(err, DAL_ENOMEM, "out of memory");
    rc = read_nodes(ctx, d, err);
    return rc < 0 ? rc : check_layout(ctx, err);
}

/* ------------------------------------------------------------ statements */

typedef struct sql_out {
    char *p, *end;
} sql_out_t;

static int put(sql_out_t *o, const char *s, size_t n)
{
    if ((size_t)(o->end - o->p) < n)
        return -1;
    memcpy(o->p, s, n);
    o->p += n;
    return 0;
}

static int put_u64(sql_out_t *o, uint64_t v)
{
    char digits[24], *d = digits + sizeof digits;

    do {
        *--d = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return put(o, d, (size_t)(digits + sizeof digits - d));
}

/* A value as an SQL literal: numbers as they are, strings quoted and
 * escaped for this connection. */
static int put_value(sql_out_t *o, MYSQL *m, const dal_value_t *v)
{
    size_t n;

    switch (v->type) {
    case DAL_TYPE_UINT:
        return put_u64(o, v->v.u);
    case DAL_TYPE_INT:
        if (v->v.i < 0 && put(o, "-", 1) != 0)
            return -1;
        return put_u64(o, v->v.i < 0 ? 0 - (uint64_t)v->v.i : (uint64_t)v->v.i);
    case DAL_TYPE_STRING:
        n = v->v.s.len;
        if ((size_t)(o->end - o->p) < 2 * n + 3)
            return -1;
        *o->p++ = '\'';
        o->p += mysql_real_escape_string(m, o->p, v->v.s.ptr, (unsigned long)n);
        *o->p++ = '\'';
        return 0;
    default:
        return -1;   /* the workloads use no other types */
    }
}

/* Statement st for physical table pos into w->sql, as an application
 * without dal would write it: "{T}" becomes "<table>_<pos>", each ? the
 * next parameter (m != NULL), or stays a ? for the server to prepare
 * (m == NULL).  Returns the length, or 0 if it does not fit. */
static size_t build_sql(load_worker_t *w, int st, uint64_t pos, MYSQL *m)
{
    const load_ctx_t *ctx = w->ctx;
    const char *s = ctx->direct->sql[st];
    sql_out_t o = { w->sql, w->sql + sizeof w->sql - 1 };
    size_t i = 0, run;
    int rc = 0;

    while (*s != '\0' && rc == 0) {
        run = strcspn(s, "{?");
        rc = put(&o, s, run);
        s += run;
        if (rc != 0 || *s == '\0')
            break;
        if (*s == '?') {
            rc = m != NULL ? put_value(&o, m, &w->params[i++]) : put(&o, "?", 1);
            s++;
            continue;
        }
        /* only {T} is left in the template */
        rc = put(&o, ctx->o->table, strlen(ctx->o->table)) || put(&o, "_", 1) ||
             put_u64(&o, pos);
        s += 3;
    }
    *o.p = '\0';
    return rc == 0 ? (size_t)(o.p - w->sql) : 0;
}

/* ----------------------------------------------------------- connections */

static int direct_error(load_worker_t *w, uint64_t node, const char *what)
{
    MYSQL *m = w->conns[node];

    return load_worker_error(w, "direct: datasource %s: %s: error %u (%s): %s",
                             w->ctx->direct->nodes[node].name, what, mysql_errno(m),
                             mysql_sqlstate(m), mysql_error(m));
}

/* The result of the statement just sent on node, read in full. */
static int direct_consume(load_worker_t *w, uint64_t node)
{
    MYSQL *m = w->conns[node];
    MYSQL_RES *res;

    if (mysql_field_count(m) == 0) {
        w->ev_affected += mysql_affected_rows(m);
        return 0;
    }
    res = mysql_store_result(m);
    if (res == NULL)
        return direct_error(w, node, "reading the result");
    while (mysql_fetch_row(res) != NULL) {
        (void)mysql_fetch_lengths(res);
        w->ev_rows++;
    }
    mysql_free_result(res);
    return 0;
}

static int direct_query(load_worker_t *w, uint64_t node, const char *sql, size_t len)
{
    if (mysql_real_query(w->conns[node], sql, (unsigned long)len) != 0)
        return direct_error(w, node, sql);
    return direct_consume(w, node);
}

/* ------------------------------------------- --server-prepared statements */

/* Columns of the workloads' results, bound as text as an application
 * reading them into strings would. */
#define DIRECT_MAX_COLS 8
#define DIRECT_COL_BYTES 256

/* w's handle of statement st on table pos (of node), prepared on first
 * use, as an application keeping one per statement would. */
static MYSQL_STMT *direct_stmt(load_worker_t *w, int st, uint64_t pos, uint64_t node)
{
    const load_direct_t *d = w->ctx->direct;
    MYSQL_STMT **slot = &w->stmts[(node * ST_COUNT + (uint64_t)st) * d->per_node +
                                  pos % d->per_node];
    size_t len;

    if (*slot != NULL)
        return *slot;
    len = build_sql(w, st, pos, NULL);
    if (len == 0) {
        load_worker_error(w, "direct: statement too long");
        return NULL;
    }
    if ((*slot = mysql_stmt_init(w->conns[node])) == NULL) {
        load_worker_error(w, "direct: out of memory");
        return NULL;
    }
    if (mysql_stmt_prepare(*slot, w->sql, (unsigned long)len) != 0) {
        load_worker_error(w, "direct: datasource %s: prepare %s: error %u: %s",
                          d->nodes[node].name, w->sql, mysql_stmt_errno(*slot),
                          mysql_stmt_error(*slot));
        return NULL;
    }
    return *slot;
}

static void bind_param(MYSQL_BIND *b, const dal_value_t *v)
{
    memset(b, 0, sizeof *b);
    if (v->type == DAL_TYPE_STRING) {
        b->buffer_type = MYSQL_TYPE_STRING;
        b->buffer = (void *)v->v.s.ptr;
        b->buffer_length = v->v.s.len;
        return;
    }
    /* the workloads' numbers: keys, ids, prices, stock */
    b->buffer_type = MYSQL_TYPE_LONGLONG;
    b->buffer = (void *)&v->v.i;
    b->is_unsigned = v->type == DAL_TYPE_UINT;
}

/* The rows of s, each column fetched as text. */
static int direct_stmt_rows(load_worker_t *w, MYSQL_STMT *s, uint64_t node)
{
    char buf[DIRECT_MAX_COLS][DIRECT_COL_BYTES];
    unsigned long len[DIRECT_MAX_COLS];
    my_bool null[DIRECT_MAX_COLS];
    MYSQL_BIND b[DIRECT_MAX_COLS];
    unsigned int i, n = mysql_stmt_field_count(s);
    int rc;

    if (n > DIRECT_MAX_COLS)
        return load_worker_error(w, "direct: more than %d columns", DIRECT_MAX_COLS);
    memset(b, 0, sizeof b);
    for (i = 0; i < n; i++) {
        b[i].buffer_type = MYSQL_TYPE_STRING;
        b[i].buffer = buf[i];
        b[i].buffer_length = DIRECT_COL_BYTES;
        b[i].length = &len[i];
        b[i].is_null = &null[i];
    }
    if (mysql_stmt_bind_result(s, b) != 0 || mysql_stmt_store_result(s) != 0)
        return load_worker_error(w, "direct: datasource %s: reading the result: %s",
                                 w->ctx->direct->nodes[node].name, mysql_stmt_error(s));
    while ((rc = mysql_stmt_fetch(s)) == 0 || rc == MYSQL_DATA_TRUNCATED)
        w->ev_rows++;
    mysql_stmt_free_result(s);
    return 0;
}

/* Statement st on table pos, its parameters bound to its handle. */
static int direct_prepared(load_worker_t *w, int st, uint64_t pos, uint64_t node)
{
    MYSQL_STMT *s = direct_stmt(w, st, pos, node);
    MYSQL_BIND b[LOAD_MAX_PARAMS];
    unsigned long i, n;

    if (s == NULL)
        return -1;
    n = mysql_stmt_param_count(s);
    for (i = 0; i < n && i < LOAD_MAX_PARAMS; i++)
        bind_param(&b[i], &w->params[i]);
    if ((n > 0 && mysql_stmt_bind_param(s, b) != 0) || mysql_stmt_execute(s) != 0)
        return load_worker_error(w, "direct: datasource %s: execute: error %u: %s",
                                 w->ctx->direct->nodes[node].name, mysql_stmt_errno(s),
                                 mysql_stmt_error(s));
    if (mysql_stmt_field_count(s) == 0) {
        w->ev_affected += mysql_stmt_affected_rows(s);
        return 0;
    }
    return direct_stmt_rows(w, s, node);
}

/* TLS as dal sets it up for the same ssl_mode and ssl_ca. */
static void direct_tls(MYSQL *m, const dal_server_settings_t *s)
{
    my_bool on = 1;

    if (s->ssl_mode == NULL || strcmp(s->ssl_mode, "DISABLED") == 0)
        return;
    if (s->ssl_ca != NULL)
        mysql_options(m, MYSQL_OPT_SSL_CA, s->ssl_ca);
    if (strcmp(s->ssl_mode, "PREFERRED") != 0)
        mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
    if (strncmp(s->ssl_mode, "VERIFY", 6) == 0)
        mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
}

static int direct_connect(load_worker_t *w, uint64_t node)
{
    const dal_server_settings_t *s = w->ctx->direct->nodes[node].master;
    unsigned int timeout = 5;
    my_bool off = 0;
    MYSQL *m = mysql_init(NULL);

    w->conns[node] = m;
    if (m == NULL)
        return load_worker_error(w, "direct: out of memory");
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, s->charset);
    mysql_options(m, MYSQL_OPT_RECONNECT, &off);
    direct_tls(m, s);
    if (mysql_real_connect(m, s->socket ? "localhost" : s->host, s->user, s->password,
                           s->database, s->socket ? 0 : s->port, s->socket, 0) == NULL)
        return direct_error(w, node, "connect");
    return 0;
}

/* ---------------------------------------------------------------- backend */

/*
 * --touch-lines: a read and a write in each of that many 64-byte lines of
 * the worker's own buffer, the same lines every statement.  They stay in
 * the client's caches only as long as the servers, running on the same
 * cores between two statements, leave them there; so the option measures
 * what each line a client touches per statement costs on this machine
 * (bench/README.md, share.sh).
 */
static void touch_lines(load_worker_t *w)
{
    volatile unsigned char *p = w->touch;
    uint64_t i;

    for (i = 0; i < w->ctx->o->touch_lines; i++)
        p[i * 64]++;
}

/* --busy-ns: CPU time and nothing else (the clock's page is all it
 * reads), the counterpart of touch_lines for a client's own work. */
static void busy_wait(const load_worker_t *w)
{
    uint64_t end;

    if (w->ctx->o->busy_ns == 0)
        return;
    end = load_now_ns() + w->ctx->o->busy_ns;
    while (load_now_ns() < end)
        ;
}

static int direct_worker_open(load_worker_t *w)
{
    const load_opts_t *o = w->ctx->o;
    uint64_t i, n = w->ctx->direct->nnodes;

    w->conns = calloc(n, sizeof *w->conns);
    if (o->server_prepared)
        w->stmts = calloc(n * ST_COUNT * w->ctx->direct->per_node, sizeof *w->stmts);
    if (o->touch_lines > 0)
        w->touch = calloc(o->touch_lines, 64);
    if (w->conns == NULL || (o->server_prepared && w->stmts == NULL) ||
        (o->touch_lines > 0 && w->touch == NULL))
        return load_worker_error(w, "direct: out of memory");
    for (i = 0; i < n; i++)
        if (direct_connect(w, i) != 0)
            return -1;
    return 0;
}

static void direct_worker_close(load_worker_t *w)
{
    uint64_t i, nstmts = w->ctx->direct->nnodes * ST_COUNT * w->ctx->direct->per_node;

    for (i = 0; w->stmts != NULL && i < nstmts; i++)
        if (w->stmts[i] != NULL)
            mysql_stmt_close(w->stmts[i]);
    free(w->stmts);
    w->stmts = NULL;
    for (i = 0; w->conns != NULL && i < w->ctx->direct->nnodes; i++)
        mysql_close(w->conns[i]);
    free(w->conns);
    w->conns = NULL;
    free(w->touch);
    w->touch = NULL;
}

static int direct_worker_begin(load_worker_t *w, uint64_t key)
{
    static const char start[] = "START TRANSACTION";

    w->txn_node = node_of_table(w->ctx->direct, table_of(w->ctx, key));
    return direct_query(w, w->txn_node, start, sizeof start - 1);
}

static int direct_worker_end(load_worker_t *w, int commit)
{
    const char *word = commit ? "COMMIT" : "ROLLBACK";

    return direct_query(w, w->txn_node, word, strlen(word));
}

/* Statement st on every physical table.  A connection carries one
 * statement at a time, so the tables go in rounds: in each, one statement
 * is sent to every node before the results are read, and the nodes work
 * in parallel. */
static int direct_scatter(load_worker_t *w, int st)
{
    const load_direct_t *d = w->ctx->direct;
    uint64_t r, node;
    size_t len;

    for (r = 0; r < d->per_node; r++) {
        for (node = 0; node < d->nnodes; node++) {
            len = build_sql(w, st, node * d->per_node + r, w->conns[node]);
            if (len == 0)
                return load_worker_error(w, "direct: statement too long");
            if (mysql_send_query(w->conns[node], w->sql, (unsigned long)len) != 0)
                return direct_error(w, node, w->sql);
        }
        for (node = 0; node < d->nnodes; node++) {
            if (mysql_read_query_result(w->conns[node]) != 0)
                return direct_error(w, node, "scatter");
            if (direct_consume(w, node) != 0)
                return -1;
        }
    }
    return 0;
}

static int direct_worker_stmt(load_worker_t *w, int st, uint64_t key)
{
    const load_ctx_t *ctx = w->ctx;
    uint64_t pos = table_of(ctx, key), node = node_of_table(ctx->direct, pos);
    size_t len;

    load_set_params(w->params, w->name, sizeof w->name, st, key);
    touch_lines(w);
    busy_wait(w);
    if (load_stmt_defs[st].scatter)
        return direct_scatter(w, st);
    if (ctx->o->server_prepared)
        return direct_prepared(w, st, pos, node);
    len = build_sql(w, st, pos, w->conns[node]);
    if (len == 0)
        return load_worker_error(w, "direct: statement too long");
    return direct_query(w, node, w->sql, len);
}

const load_backend_t load_direct_backend = {
    "direct", direct_worker_open, direct_worker_close, direct_worker_begin, direct_worker_end,
    direct_worker_stmt
};
