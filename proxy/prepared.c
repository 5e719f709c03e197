/*
 * prepared.c -- one client's prepared statements: COM_STMT_PREPARE, EXECUTE,
 * SEND_LONG_DATA, RESET and CLOSE over dal_prepared_t.  See proxy.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "reply.h"
#include "text.h"

#define MAX_STMTS 16382            /* MariaDB's max_prepared_stmt_count default */
#define LAST_PREPARED 0xFFFFFFFFu  /* MariaDB: "the statement prepared last" */
/* MariaDB's error for long data over max_allowed_packet (ER_UNKNOWN_ERROR) */
#define LONG_TOO_BIG "Parameter of prepared statement which is set through " \
                     "mysql_send_long_data() is longer than 'max_allowed_packet' bytes"

typedef struct proxy_stmt {
    uint32_t id;
    dal_prepared_t *prep;          /* owned; NULL: comments only, done */
    uint16_t nparams;
    uint16_t ncolumns;             /* as PREPARE_OK said */
    uint8_t *types;                /* owned: 2 * nparams, the last execution's
                                      types; NULL before the first */
    bool *long_used;               /* owned: nparams flags */
    proto_buf_t *long_data;        /* owned: nparams buffers; err PROTO_ETOOBIG:
                                      over max_allowed_packet, dropped */
    char *set_sql;                 /* owned: a SET (or USE without parameters),
                                      which the session keeps as in COM_QUERY */
    char *local_sql;               /* owned: a statement without parameters the
                                      proxy may answer itself (client_answer),
                                      local_len bytes and a NUL */
    size_t local_len;
    size_t sql_len;                /* bytes of the statement's text */
} proxy_stmt_t;

struct proxy_stmts {
    proxy_stmt_t **v;              /* owned, and each entry; in order of id */
    size_t n, cap;
    uint32_t next_id;
    uint32_t last_id;              /* the one prepared last */
    size_t long_total;             /* bytes of long data held by all of them */
    size_t sql_total;              /* bytes of text of all of them (sql_len) */
};

static void ps_free(proxy_stmt_t *s)
{
    size_t i;

    if (s == NULL)
        return;
    dal_prepared_free(s->prep);
    for (i = 0; s->long_data != NULL && i < s->nparams; i++)
        proto_buf_free(&s->long_data[i]);
    free(s->long_data);
    free(s->long_used);
    free(s->types);
    free(s->set_sql);
    free(s->local_sql);
    free(s);
}

void ps_free_all(proxy_client_t *c)
{
    size_t i;

    if (c->stmts == NULL)
        return;
    for (i = 0; i < c->stmts->n; i++)
        ps_free(c->stmts->v[i]);
    free(c->stmts->v);
    free(c->stmts);
    c->stmts = NULL;
}

/* Where id is in t->v, or where it would go: the first entry whose id is
 * not below it.  A binary search: a client's COM_STMT_CLOSE of unknown ids
 * (no reply, any number) costs the I/O thread little, however many
 * statements it holds. */
static size_t id_slot(const struct proxy_stmts *t, uint32_t id)
{
    size_t lo = 0, hi = t->n, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (t->v[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static proxy_stmt_t *find(proxy_client_t *c, uint32_t id, size_t *at)
{
    size_t i;

    if (c->stmts == NULL)
        return NULL;
    if (id == LAST_PREPARED)
        id = c->stmts->last_id;
    i = id_slot(c->stmts, id);
    if (i == c->stmts->n || c->stmts->v[i]->id != id)
        return NULL;
    if (at != NULL)
        *at = i;
    return c->stmts->v[i];
}

/* The next statement id: one more than the last given, past
 * LAST_PREPARED back to 1, and never one still open. */
static uint32_t next_id(struct proxy_stmts *t)
{
    size_t i;

    do {
        if (++t->next_id == LAST_PREPARED || t->next_id == 0)
            t->next_id = 1;
        i = id_slot(t, t->next_id);
    } while (i < t->n && t->v[i]->id == t->next_id);
    return t->next_id;
}

/* s (with its id) into t, whose room reserve made, in order of id. */
static void insert(struct proxy_stmts *t, proxy_stmt_t *s)
{
    size_t i = id_slot(t, s->id);

    memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof *t->v);
    t->v[i] = s;
    t->n++;
    t->sql_total += s->sql_len;
}

static void unknown_stmt(proxy_client_t *c, uint32_t id, const char *where)
{
    char msg[128];

    snprintf(msg, sizeof msg, "Unknown prepared statement handler (%u) given to %s", id, where);
    reply_err(c, 1243, "HY000", msg); /* ER_UNKNOWN_STMT_HANDLER */
}

static void no_memory(proxy_client_t *c)
{
    reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
}

/* ------------------------------------------------------------- prepare */

/* Skip spaces and comments (hints included): where the first word is. */
static const char *first_word(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '(')
            p++;
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            if (e == NULL)
                return p;
            p = e + 2;
        } else if (p[0] == '#' || (p[0] == '-' && p[1] == '-' && (p[2] == ' ' || p[2] == '\t'))) {
            while (*p != '\0' && *p != '\n')
                p++;
        } else {
            return p;
        }
    }
}

/* A statement that returns rows: its columns are described at prepare. */
static bool returns_rows(const char *sql)
{
    static const char *const words[] = {"SELECT", "WITH",    "SHOW",     "TABLE",
                                        "VALUES", "EXPLAIN", "DESCRIBE", "DESC"};
    const char *p = first_word(sql);
    size_t i;

    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *q = p;
        if (text_word_is(&q, words[i]))
            return true;
    }
    return false;
}

/* Whether the proxy may answer sql itself (client_answer): a SHOW,
 * DESCRIBE or KILL, or a SELECT naming what the proxy answers for the
 * servers.  The cheap test at prepare; the execution tells. */
static bool maybe_local(const char *sql)
{
    static const char *const names[] = {"CONNECTION_ID", "DATABASE", "SCHEMA", "IN_TRANSACTION",
                                        "PROCESSLIST", "INFORMATION_SCHEMA"};
    const char *w = first_word(sql);
    size_t i;

    if (text_word_is(&w, "SHOW") || text_word_is(&w, "DESCRIBE") || text_word_is(&w, "DESC") ||
        text_word_is(&w, "KILL"))
        return true;
    if (!text_word_is(&w, "SELECT"))
        return false;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasestr(sql, names[i]) != NULL)
            return true;
    return false;
}

/* `SHOW WARNINGS` or `SHOW ERRORS` (not COUNT(*)): a server's PREPARE_OK
 * describes no columns for them, their execution sends the columns. */
static bool shows_diagnostics(const char *sql)
{
    const char *w = first_word(sql);

    return text_word_is(&w, "SHOW") && (text_word_is(&w, "WARNINGS") || text_word_is(&w, "ERRORS"));
}

/*
 * sql's columns, described without running it (dal_query_opts_t.describe:
 * a server prepares its first route's SQL), every parameter 0 for the
 * routing (a shard key picks one node).  In the client's session (its
 * variables: SET NAMES decides the columns' lengths; its pinned
 * connections: a temporary table) outside a transaction; in one, outside
 * the session, so that the transaction takes no node it would not take
 * (unless only the session can: describe_with).
 * A statement a server will not prepare (ER_UNSUPPORTED_PS; MariaDB
 * 10.11 prepares every SELECT, SHOW, HELP, VALUES, EXPLAIN and DESCRIBE
 * form tried), or cannot now (its max_prepared_stmt_count reached), is run
 * once instead, with sql_select_limit=0: the only case with a server-side
 * effect.
 */
static bool in_session(const dal_session_t *s)
{
    return !dal_in_transaction(s);
}

/* Outside the session in a [schema]: in *tmp, a session of its own in that
 * schema (closed by the caller once *out is freed), so that the names
 * resolve as the session's statements do. */
static int describe_apart(proxy_client_t *c, const dal_query_opts_t *o, const char *text,
                          size_t len, const dal_value_t *zeros, uint16_t nparams,
                          dal_session_t **tmp, dal_result_t **out, dal_error_t *err)
{
    int rc;

    if (c->schema[0] == '\0')
        return dal_query_len(c->px->dal, o, text, len, zeros, nparams, out, err);
    if (*tmp == NULL && ((rc = dal_session_open(c->px->dal, tmp, err)) != 0 ||
                         (rc = dal_session_use_schema(*tmp, c->schema, err)) != 0))
        return rc;
    return dal_session_query_len(*tmp, o, text, len, zeros, nparams, out, err);
}

/* The server's errors for a name it does not know: a table (1146, 1051,
 * 1109) or a column (1054, as when a temporary table shadows a base table
 * with other columns). */
static bool unknown_name(const dal_error_t *err)
{
    switch (err->mysql_errno) {
    case 1051: case 1054: case 1109: case 1146:
        return true;
    default:
        return false;
    }
}

/* In a transaction, a statement the servers cannot describe apart because
 * it names what only the session's pinned connections hold (a temporary
 * table) is described in the session, where its execution runs.  Any
 * other error is the answer: a second try in the session would only take
 * a round trip, or locks, inside the client's transaction. */
static int describe_with(proxy_client_t *c, const dal_query_opts_t *o, const char *text,
                         size_t len, const dal_value_t *zeros, uint16_t nparams,
                         dal_session_t **tmp, dal_result_t **out, dal_error_t *err)
{
    int rc;

    if (in_session(c->session))
        return dal_session_query_len(c->session, o, text, len, zeros, nparams, out, err);
    rc = describe_apart(c, o, text, len, zeros, nparams, tmp, out, err);
    if (rc == DAL_ESERVER && unknown_name(err) && dal_session_pinned(c->session) > 0)
        rc = dal_session_query_len(c->session, o, text, len, zeros, nparams, out, err);
    return rc;
}

/* The statement run with sql_select_limit=0: for what a server cannot
 * prepare (above). */
static int describe_by_running(proxy_client_t *c, const char *sql, size_t n,
                               const dal_value_t *zeros, uint16_t nparams, dal_session_t **tmp,
                               dal_result_t **out, dal_error_t *err)
{
    static const char head[] = "SET STATEMENT sql_select_limit=0 FOR ";
    size_t len = sizeof head - 1 + n;
    char *text = malloc(len + 1);
    int rc;

    if (text == NULL) {
        err->code = DAL_ENOMEM;
        snprintf(err->message, sizeof err->message, "dal-proxy: out of memory");
        return DAL_ENOMEM;
    }
    memcpy(text, head, sizeof head - 1);
    memcpy(text + sizeof head - 1, sql, n + 1);
    rc = describe_with(c, NULL, text, len, zeros, nparams, tmp, out, err);
    free(text);
    return rc;
}

static int describe(proxy_client_t *c, const char *sql, size_t n, uint16_t nparams,
                    dal_session_t **tmp, dal_result_t **out, dal_error_t *err)
{
    dal_query_opts_t o = {.describe = 1};
    dal_value_t *zeros = calloc(nparams ? nparams : 1, sizeof *zeros);
    uint16_t i;
    int rc;

    if (zeros == NULL) {
        err->code = DAL_ENOMEM;
        snprintf(err->message, sizeof err->message, "dal-proxy: out of memory");
        return DAL_ENOMEM;
    }
    for (i = 0; i < nparams; i++)
        zeros[i] = dal_int(0);
    rc = describe_with(c, &o, sql, n, zeros, nparams, tmp, out, err);
    /* ER_UNSUPPORTED_PS, or the server's max_prepared_stmt_count reached */
    if (rc == DAL_ESERVER && (err->mysql_errno == 1295 || err->mysql_errno == 1461))
        rc = describe_by_running(c, sql, n, zeros, nparams, tmp, out, err);
    free(zeros);
    return rc;
}

/* Room for one more statement in c's table. */
static int reserve(proxy_client_t *c)
{
    struct proxy_stmts *t = c->stmts;

    if (t == NULL) {
        if ((t = c->stmts = calloc(1, sizeof *t)) == NULL)
            return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        proxy_stmt_t **v = realloc(t->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    return 0;
}

static proxy_stmt_t *ps_new(dal_prepared_t *prep, uint16_t nparams)
{
    proxy_stmt_t *s = calloc(1, sizeof *s);

    if (s == NULL)
        return NULL;
    s->prep = prep;
    s->nparams = nparams;
    if (nparams > 0 && ((s->long_used = calloc(nparams, sizeof *s->long_used)) == NULL ||
                        (s->long_data = calloc(nparams, sizeof *s->long_data)) == NULL)) {
        s->prep = NULL;
        ps_free(s);
        return NULL;
    }
    return s;
}

/* PREPARE_OK: parameters as MariaDB describes them, the columns found. */
static void prepare_ok(proxy_client_t *c, const proxy_stmt_t *s, dal_result_t *r)
{
    proto_column_t *params = calloc(s->nparams ? s->nparams : 1, sizeof *params);
    proto_column_t *cols = calloc(s->ncolumns ? s->ncolumns : 1, sizeof *cols);
    size_t i;

    if (params == NULL || cols == NULL) {
        no_memory(c);
    } else {
        for (i = 0; i < s->nparams; i++) {
            params[i].name = "?";
            params[i].charset = 63; /* binary */
            params[i].type = PROTO_TYPE_VAR_STRING;
            params[i].flags = PROTO_BINARY_FLAG;
        }
        for (i = 0; i < s->ncolumns; i++)
            reply_column(r, i, &cols[i]);
        proto_build_prepare_ok(&c->out, &c->seq, c->caps, s->id, params, s->nparams,
                               cols, s->ncolumns, 0, reply_status(c));
    }
    free(params);
    free(cols);
}

/* The texts of a client's prepared statements together are bounded by
 * max_allowed_packet, as their long data is (besides MAX_STMTS): one that
 * would take them over is refused with the server's error for too many
 * statements, which drivers answer by preparing on the client. */
static bool too_much_sql(proxy_client_t *c, size_t len)
{
    size_t max = c->px->max_allowed_packet;
    char msg[256];

    if (len <= max && c->stmts->sql_total <= max - len)
        return false;
    snprintf(msg, sizeof msg, "Can't create more prepared statements: this connection's hold "
             "%zu bytes of SQL, and with this one's %zu they would be over max_allowed_packet "
             "(%zu); close some first", c->stmts->sql_total, len, max);
    reply_err(c, 1461, "42000", msg);
    return true;
}

void ps_prepare(proxy_client_t *c, const char *sql, size_t len)
{
    char *text = text_copy(sql, sql != NULL ? len : 0);
    dal_prepared_t *prep = NULL;
    dal_result_t *r = NULL;
    dal_session_t *apart = NULL;  /* describe's own session, or NULL */
    proxy_stmt_t *s = NULL;
    dal_error_t err;
    size_t np, ncols = 0;
    const char *w;

    if (text == NULL || reserve(c) != 0) {
        no_memory(c);
        goto done;
    }
    if (c->stmts->n >= MAX_STMTS) {
        reply_err(c, 1461, "42000", "Can't create more than max_prepared_stmt_count statements "
                                    "(current value: 16382)");
        goto done;
    }
    if (sql == NULL)
        len = 0;
    if (too_much_sql(c, len) || client_refuse_account_change(c, text, len))
        goto done;
    if (proto_sql_stray_nul(text, &len, reply_no_backslash(c)) != SIZE_MAX) {
        reply_err(c, 1064, "42000", "You have an error in your SQL syntax: a NUL byte outside "
                                    "quotes");
        goto done;
    }
    if (text[strspn(text, " \t\r\n")] == '\0' && strlen(text) == len) {
        reply_err(c, 1065, "42000", "Query was empty");
        goto done;
    }
    if (!client_only_comments(c, text, len) &&
        dal_session_prepare_len(c->session, text, len, &prep, &err) != 0) {
        if (err.code == DAL_ESQL)
            dal_session_syntax_error(c->session, text, len, &err);
        reply_dal_error(c, &err);
        goto done;
    }
    if ((np = prep != NULL ? dal_prepared_param_count(prep) : 0) > UINT16_MAX) {
        reply_err(c, 1390, "HY000", "Prepared statement contains too many placeholders");
        goto done;
    }
    if (returns_rows(text) && !shows_diagnostics(text)) {
        if (describe(c, text, len, (uint16_t)np, &apart, &r, &err) != 0) {
            reply_dal_error(c, &err);
            goto done;
        }
        ncols = dal_result_column_count(r);
    }
    if (ncols > UINT16_MAX || (s = ps_new(prep, (uint16_t)np)) == NULL) {
        no_memory(c);
        goto done;
    }
    prep = NULL;
    w = first_word(text);
    if (text_word_is(&w, "SET") || (np == 0 && text_word_is(&w, "USE"))) { /* as in COM_QUERY */
        s->set_sql = text;
        text = NULL;
    } else if (np == 0 && maybe_local(text)) {
        s->local_sql = text;
        s->local_len = len;
        text = NULL;
    }
    s->ncolumns = (uint16_t)ncols;
    s->sql_len = len;
    s->id = c->stmts->last_id = next_id(c->stmts);
    insert(c->stmts, s);
    prepare_ok(c, s, r);
done:
    dal_result_free(r);
    dal_session_close(apart);
    dal_prepared_free(prep);
    free(text);
}

/* ------------------------------------------------------------- execute */

/* Parameter i of e as a dal value (borrowing from e or from s's long
 * data). */
static dal_value_t param_value(const proxy_stmt_t *s, const proto_param_t *p, uint16_t i)
{
    switch (p->kind) {
    case PROTO_VAL_INT:
        return dal_int(p->v.i);
    case PROTO_VAL_UINT:
        return dal_uint(p->v.u);
    case PROTO_VAL_DOUBLE:
        /* A whole double is that integer (Node's mysql2 sends every number
         * as DOUBLE): the same SQL text ("%.17g" prints 11.0 as 11), and a
         * shard value the strategies take. */
        if (p->v.d == trunc(p->v.d) && p->v.d >= -0x1p63 && p->v.d < 0x1p63)
            return dal_int((int64_t)p->v.d);
        return dal_double(p->v.d);
    case PROTO_VAL_TEXT:
        return dal_strn(p->v.s.ptr != NULL ? p->v.s.ptr : "", p->v.s.len);
    case PROTO_VAL_BLOB:
        return dal_blob(p->v.s.ptr != NULL ? (const void *)p->v.s.ptr : "", p->v.s.len);
    case PROTO_VAL_LONG_DATA:
        return dal_blob(s->long_data[i].data != NULL ? (const void *)s->long_data[i].data : "",
                        s->long_data[i].len);
    case PROTO_VAL_NULL:
    default:
        return dal_null();
    }
}

/* After an execution the long data is spent, as on a server, and its
 * buffers freed: what a client holds is only long data not yet spent,
 * which long_total bounds (a buffer kept after its use would escape it). */
static void clear_long_data(proxy_client_t *c, proxy_stmt_t *s)
{
    uint16_t i;

    for (i = 0; i < s->nparams; i++) {
        c->stmts->long_total -= s->long_data[i].len;
        proto_buf_free(&s->long_data[i]);
        s->long_used[i] = false;
    }
}

/* A prepared SET of session variables (or SET NAMES, USE) is the
 * session's, as in COM_QUERY: its parameters written into the text as
 * literals (dal_explain's SQL of the one route, escaped by the library),
 * then kept by setvar_statement.  False when it is not such a SET. */
static bool set_with_params(proxy_client_t *c, const proxy_stmt_t *s, const dal_value_t *vals)
{
    dal_plan_t *plan = NULL;
    dal_error_t err;
    bool done;

    if (s->nparams == 0)
        return setvar_statement(c, s->set_sql, strlen(s->set_sql)) != 0;
    if (dal_explain(c->px->dal, NULL, s->set_sql, vals, s->nparams, &plan, &err) != 0) {
        dal_plan_free(plan);
        return false; /* the statement's own execution gives the error */
    }
    done = dal_plan_count(plan) == 1 &&
           setvar_statement(c, dal_plan_sql(plan, 0), strlen(dal_plan_sql(plan, 0))) != 0;
    dal_plan_free(plan);
    return done;
}

/* run's work once the parameters are in vals (s->nparams of them). */
static void run_with(proxy_client_t *c, proxy_stmt_t *s, proto_stmt_execute_t *e,
                     dal_value_t *vals)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    uint16_t i;
    int rc;

    for (i = 0; i < s->nparams; i++) {
        if (s->long_data[i].err == PROTO_ETOOBIG) {
            reply_err(c, 1105, "HY000", LONG_TOO_BIG);
            return;
        }
        if (s->long_data[i].err != 0) { /* part of a long value is missing */
            no_memory(c);
            return;
        }
        vals[i] = param_value(s, &e->params[i], i);
    }
    if (s->set_sql != NULL && set_with_params(c, s, vals))
        return;
    if (s->local_sql != NULL) {  /* as in COM_QUERY, its rows binary */
        bool done;
        c->binary = true;
        done = client_answer(c, s->local_sql, s->local_len);
        c->binary = false;
        if (done)
            return;
    }
    if (s->prep == NULL) {
        reply_ok(c, 0, 0, 0);
        return;
    }
    /* a plain read's binary rows go to the client as the server sent them */
    dal_session_set_relay(c->session, reply_relay(c, true), c);
    rc = dal_session_query_prepared(c->session, NULL, s->prep, vals, s->nparams, &r, &err);
    dal_session_set_relay(c->session, NULL, NULL);
    if (rc != 0) {
        reply_dal_error(c, &err);
        if (err.code == DAL_ESERVER)
            diag_failed(c);
    } else {
        setvar_db_dropped(c);
        reply_result(c, r, true);
    }
    dal_result_free(r);
}

/* Most statements have a few parameters: their values on the stack, no
 * allocation per execution. */
enum { RUN_STACK_PARAMS = 16 };

static void run(proxy_client_t *c, proxy_stmt_t *s, proto_stmt_execute_t *e)
{
    dal_value_t stack[RUN_STACK_PARAMS];
    dal_value_t *vals = s->nparams <= RUN_STACK_PARAMS ? stack : calloc(s->nparams, sizeof *vals);

    if (vals == NULL) {
        no_memory(c);
        return;
    }
    run_with(c, s, e, vals);
    if (vals != stack)
        free(vals);
}

void ps_execute(proxy_client_t *c, const uint8_t *payload, size_t len)
{
    proto_cmd_t cmd;
    proto_stmt_execute_t e;
    proxy_stmt_t *s;
    int rc;

    if (proto_parse_command(payload, len, (uint32_t)c->caps, &cmd) != 0) {
        reply_err(c, 1210, "HY000", "Incorrect arguments to mysqld_stmt_execute");
        return;
    }
    if ((s = find(c, cmd.u.execute.stmt_id, NULL)) == NULL) {
        unknown_stmt(c, cmd.u.execute.stmt_id, "mysqld_stmt_execute");
        return;
    }
    rc = proto_parse_stmt_execute(payload, len, s->nparams, s->types, s->long_used, &e);
    if (rc == 0 && e.new_params_bound && s->nparams > 0) {
        if (s->types == NULL && (s->types = malloc(2u * s->nparams)) == NULL)
            rc = PROTO_ENOMEM;
        else
            proto_stmt_execute_types(&e, s->types);
    }
    if (rc == PROTO_ENOMEM)
        no_memory(c);
    else if (rc != 0)
        reply_err(c, 1210, "HY000", "Incorrect arguments to mysqld_stmt_execute");
    else
        run(c, s, &e);
    proto_stmt_execute_free(&e);
    clear_long_data(c, s);
}

/* ---------------------------------------------- long data, reset, close */

void ps_long_data(proxy_client_t *c, uint32_t id, uint16_t param, const proto_str_t *data)
{
    proxy_stmt_t *s = find(c, id, NULL);

    proto_buf_t *b;
    size_t max = c->px->max_allowed_packet;

    /* no reply, even to a mistake: a server keeps it for the execute */
    if (s == NULL || param >= s->nparams)
        return;
    s->long_used[param] = true;
    b = &s->long_data[param];
    if (b->err != 0)
        return;                   /* refused or short already: the execution fails */
    /* a value over max_allowed_packet fails its execution, as on a
     * server; so does one that would take all of a client's statements'
     * long data over it, which bounds what a client holds */
    if (data->len > max - b->len || data->len > max - c->stmts->long_total) {
        c->stmts->long_total -= b->len;
        proto_buf_free(b);
        b->err = PROTO_ETOOBIG;
        return;
    }
    proto_put_bytes(b, data->ptr, data->len);
    if (b->err == 0)
        c->stmts->long_total += data->len;
}

void ps_reset(proxy_client_t *c, uint32_t id)
{
    proxy_stmt_t *s = find(c, id, NULL);

    if (s == NULL) {
        unknown_stmt(c, id, "mysqld_stmt_reset");
        return;
    }
    clear_long_data(c, s);
    reply_ok(c, 0, 0, 0);
}

void ps_close(proxy_client_t *c, uint32_t id)
{
    size_t at;
    proxy_stmt_t *s = find(c, id, &at);

    if (s == NULL)
        return;
    clear_long_data(c, s);
    c->stmts->sql_total -= s->sql_len;
    ps_free(s);
    c->stmts->n--;
    memmove(c->stmts->v + at, c->stmts->v + at + 1, (c->stmts->n - at) * sizeof *c->stmts->v);
}
