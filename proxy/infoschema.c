/*
 * infoschema.c -- information_schema.TABLES, COLUMNS and STATISTICS as a
 * server holding the logical tables answers them, as SHOW TABLES and SHOW
 * COLUMNS do (schema.c): a sharded table is one table under its logical
 * name, described by its first physical table, and its other physical
 * tables are not tables of the schema; the schema is the proxy's.
 *
 * A statement reading these views runs on the servers with each reference
 * replaced by a derived table over the default datasource's view: its rows
 * of the connection's schema, the schema column(s) the proxy's database,
 * one physical table of each sharded table renamed to the logical name and
 * the others left out; DATABASE() in it is the proxy's schema.  The servers then evaluate whatever the
 * statement asks of it (a WHERE, COUNT(*), a join of two views), so
 * SQLAlchemy's has_table() and reflection read the logical tables.  A
 * sharded table stands as its first physical table on the server the
 * views are read on (the default datasource), found by one read of that
 * server's table names first; a sharded table with no physical table
 * there stands as its first physical table's rows, read on that table's
 * datasource and added to the derived table as literal rows (UNION ALL).
 *
 * With autocommit 0, which dal's session keeps and the servers never see,
 * information_schema.SESSION_VARIABLES becomes a derived table whose
 * AUTOCOMMIT row reads OFF, and `SHOW [SESSION | LOCAL] VARIABLES [LIKE p |
 * WHERE e]` a SELECT over it with SHOW's names (Variable_name, Value, the
 * names in lower case, in order), as a server answers them.
 *
 * information_schema.GLOBAL_STATUS and SESSION_STATUS become derived
 * tables whose THREADS_CONNECTED and ABORTED_CLIENTS rows are the
 * proxy's counts, as SHOW STATUS answers them (processlist.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "infoschema.h"
#include "proxy.h"
#include "recognise.h"
#include "reply.h"

static void put_n(proto_buf_t *b, const char *s, size_t n)
{
    proto_put_bytes(b, s, n);
}

static void put(proto_buf_t *b, const char *s)
{
    proto_put_bytes(b, s, strlen(s));
}

/* 'text' (n bytes) as c's session reads it: quotes doubled, and
 * backslashes doubled unless its sql_mode has NO_BACKSLASH_ESCAPES. */
static void put_quoted_n(const proxy_client_t *c, proto_buf_t *b, const char *text, size_t n)
{
    bool raw = reply_no_backslash(c);

    put(b, "'");
    for (; n > 0; text++, n--) {
        if (*text == '\'' || (*text == '\\' && !raw))
            put_n(b, text, 1);
        put_n(b, text, 1);
    }
    put(b, "'");
}

static void put_quoted(const proxy_client_t *c, proto_buf_t *b, const char *text)
{
    put_quoted_n(c, b, text, strlen(text));
}

/* The sharded tables: the CASE arms renaming the physical table that
 * stands for each, and the names left out (the other physical tables, and
 * a table of the logical name itself).  The one standing for a table is
 * its first physical table on the server the views are read on (present:
 * the names found there), which need not be its first one overall. */
typedef struct mapping {
    proxy_client_t *c;
    proto_buf_t arms, hidden;
    proto_buf_t all;      /* pass 1: every physical name, quoted, ", " before each */
    proto_buf_t present;  /* pass 2: the names found, each followed by a NUL */
    /* pass 2: each sharded table with no physical table present: its
     * logical name, its first physical table and that table's datasource,
     * each followed by a NUL */
    proto_buf_t remote;
    bool listing;         /* pass 1 */
} mapping_t;

static bool is_present(const mapping_t *m, const char *phys)
{
    const char *p = (const char *)m->present.data, *end = p + m->present.len;

    for (; p != NULL && p < end; p += strlen(p) + 1)
        if (strcmp(p, phys) == 0)
            return true;
    return false;
}

/* The position of t's physical table standing for it: its first one
 * present, else n (none: its rows are read on another datasource). */
static uint32_t standing(const mapping_t *m, const dal_table_info_t *t, uint32_t n)
{
    char phys[256];
    uint32_t pos;

    for (pos = 0; pos < n; pos++)
        if (dal_table_info_physical(t, pos, phys, sizeof phys) >= 0 && is_present(m, phys))
            return pos;
    return n;
}

/* t (named name, n physical tables), present on no server the views are
 * read on: its first physical table and datasource into m->remote, the
 * logical name hidden (a table of that name here is not it). */
static void add_remote(mapping_t *m, const char *name, const dal_table_info_t *t, uint32_t n)
{
    char phys[256];
    const char *node;
    int pos = n > 0 ? dal_table_info_physical(t, 0, phys, sizeof phys) : -1;

    put(&m->hidden, ", ");
    put_quoted(m->c, &m->hidden, name);
    if (pos < 0 || (node = dal_table_info_node(t, (uint32_t)pos)) == NULL)
        return;
    put_n(&m->remote, name, strlen(name) + 1);
    put_n(&m->remote, phys, strlen(phys) + 1);
    put_n(&m->remote, node, strlen(node) + 1);
}

static void add_table(void *user, const char *name)
{
    mapping_t *m = user;
    dal_table_info_t *t;
    dal_error_t err;
    char phys[256];
    uint32_t pos, n, stand;

    if (dal_table_info(m->c->px->dal, name, &t, &err) != 0)
        return;
    if (!setvar_table_ours(m->c, t)) {  /* another schema's */
        dal_table_info_free(t);
        return;
    }
    if (dal_table_info_layout(t) == DAL_LAYOUT_SHARDED) {
        n = dal_table_info_table_shard_num(t);
        stand = m->listing ? 0 : standing(m, t, n);
        if (!m->listing && stand == n)
            add_remote(m, name, t, n);
        for (pos = 0; pos < n; pos++) {
            if (dal_table_info_physical(t, pos, phys, sizeof phys) < 0)
                continue;
            if (m->listing) {
                put(&m->all, ", ");
                put_quoted(m->c, &m->all, phys);
                continue;
            }
            if (pos == stand) {
                put(&m->arms, " WHEN ");
                put_quoted(m->c, &m->arms, phys);
                put(&m->arms, " THEN ");
                put_quoted(m->c, &m->arms, name);
            }
            put(&m->hidden, ", ");
            put_quoted(m->c, &m->hidden, pos == stand ? name : phys);
        }
    }
    dal_table_info_free(t);
}

/* Which of the physical names in m->all the server reading the views for
 * c's session has in its schema: into m->present. */
static int find_present(proxy_client_t *c, mapping_t *m, dal_error_t *err)
{
    dal_result_t *r = NULL;
    proto_buf_t q = PROTO_BUF_INIT;
    const char *name;
    size_t len;
    int rc;

    put(&q, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
            " AND TABLE_NAME IN (");
    put_n(&q, (const char *)m->all.data + 2, m->all.len - 2);
    put(&q, ")");
    if (q.err != 0 || m->all.err != 0) {
        proto_buf_free(&q);
        err->code = DAL_ENOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return DAL_ENOMEM;
    }
    rc = dal_session_query_len(c->session, NULL, (const char *)q.data, q.len, NULL, 0, &r, err);
    proto_buf_free(&q);
    while (rc == 0 && (rc = dal_result_next(r, err)) > 0) {
        if ((name = dal_result_text(r, 0, &len)) != NULL) {
            put_n(&m->present, name, len);
            put_n(&m->present, "", 1);
        }
        rc = 0;
    }
    dal_result_free(r);
    return rc;
}

/* Both passes of the mapping for c (m->c set). */
static int map_tables(proxy_client_t *c, mapping_t *m, dal_error_t *err)
{
    int rc = 0;

    m->listing = true;
    dal_table_names(c->px->dal, add_table, m, err);
    m->listing = false;
    if (m->all.len > 0 && (rc = find_present(c, m, err)) != 0)
        return rc;
    dal_table_names(c->px->dal, add_table, m, err);
    return 0;
}

/* The value of column col of r's current row (described by ci) as a
 * literal of its type, so that a UNION with the server's view keeps the
 * view's column types. */
static void put_literal(const proxy_client_t *c, proto_buf_t *b, const dal_result_t *r,
                        size_t col, const dal_column_info_t *ci)
{
    size_t len = 0;
    const char *v = dal_result_text(r, col, &len);

    if (v == NULL) {
        put(b, "NULL");
        return;
    }
    switch (ci->type) {
    case DAL_COLUMN_TINY: case DAL_COLUMN_SHORT: case DAL_COLUMN_LONG: case DAL_COLUMN_INT24:
    case DAL_COLUMN_LONGLONG: case DAL_COLUMN_FLOAT: case DAL_COLUMN_DOUBLE:
    case DAL_COLUMN_DECIMAL: case DAL_COLUMN_NEWDECIMAL: case DAL_COLUMN_YEAR:
        put(b, (ci->flags & DAL_COLUMN_FLAG_UNSIGNED) != 0 ? "CAST(" : "");
        put_n(b, v, len);
        put(b, (ci->flags & DAL_COLUMN_FLAG_UNSIGNED) != 0 ? " AS UNSIGNED)" : "");
        return;
    case DAL_COLUMN_DATETIME: case DAL_COLUMN_TIMESTAMP:
        put(b, "TIMESTAMP");
        break;
    default:
        break;
    }
    put_quoted_n(c, b, v, len);
}

/* The rows of view for the sharded table name, read on datasource node
 * from its physical table phys, as UNION ALL branches of literals under
 * the logical name and the proxy's schema. */
static int put_remote(proxy_client_t *c, int view, const char *name, const char *phys,
                      const char *node, proto_buf_t *b, dal_error_t *err)
{
    dal_query_opts_t opts = {.datasource = node};
    dal_column_info_t ci;
    dal_result_t *r = NULL;
    proto_buf_t q = PROTO_BUF_INIT;
    size_t i, n;
    int rc;

    put(&q, "SELECT * FROM information_schema.");
    put(&q, infoschema_view_name(view));
    put(&q, " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ");
    put_quoted(c, &q, phys);
    rc = q.err != 0 ? DAL_ENOMEM
                    : dal_session_query_len(c->session, &opts, (const char *)q.data, q.len, NULL,
                                            0, &r, err);
    proto_buf_free(&q);
    n = rc == 0 ? dal_result_column_count(r) : 0;
    while (rc == 0 && (rc = dal_result_next(r, err)) > 0) {
        put(b, " UNION ALL SELECT ");
        for (i = 0; i < n; i++) {
            const char *col = dal_result_column_name(r, i);
            memset(&ci, 0, sizeof ci);
            ci.struct_size = sizeof ci;
            (void)dal_result_column_info(r, i, &ci);
            put(b, i > 0 ? ", " : "");
            if (strcasecmp(col, "TABLE_SCHEMA") == 0 || strcasecmp(col, "INDEX_SCHEMA") == 0)
                put_quoted(c, b, setvar_db_name(c));
            else if (strcasecmp(col, "TABLE_NAME") == 0)
                put_quoted(c, b, name);
            else
                put_literal(c, b, r, i, &ci);
        }
        rc = 0;
    }
    dal_result_free(r);
    return rc;
}

/* The derived table standing for view: its columns as the server's (read
 * with LIMIT 0), the schema the proxy's, the table names mapped, and the
 * rows of the sharded tables read elsewhere. */
static int put_derived(proxy_client_t *c, const mapping_t *m, int view, proto_buf_t *b,
                       dal_error_t *err)
{
    dal_result_t *r = NULL;
    proto_buf_t probe = PROTO_BUF_INIT;
    const char *p, *end, *phys, *node;
    size_t i, n;
    int rc;

    put(&probe, "SELECT * FROM information_schema.");
    put(&probe, infoschema_view_name(view));
    put(&probe, " LIMIT 0");
    rc = probe.err != 0 ? DAL_ENOMEM
                        : dal_session_query_len(c->session, NULL, (const char *)probe.data,
                                                probe.len, NULL, 0, &r, err);
    proto_buf_free(&probe);
    if (rc != 0)
        return rc;
    put(b, "(SELECT ");
    n = dal_result_column_count(r);
    for (i = 0; i < n; i++) {
        const char *col = dal_result_column_name(r, i);
        put(b, i > 0 ? ", " : "");
        if (strcasecmp(col, "TABLE_SCHEMA") == 0 || strcasecmp(col, "INDEX_SCHEMA") == 0) {
            put_quoted(c, b, setvar_db_name(c));
            put(b, " AS ");
        } else if (strcasecmp(col, "TABLE_NAME") == 0 && m->arms.len > 0) {
            put(b, "CASE TABLE_NAME");
            put_n(b, (const char *)m->arms.data, m->arms.len);
            put(b, " ELSE TABLE_NAME END AS ");
        }
        put(b, "`");
        put(b, col);
        put(b, "`");
    }
    dal_result_free(r);
    put(b, " FROM information_schema.");
    put(b, infoschema_view_name(view));
    put(b, " WHERE TABLE_SCHEMA = DATABASE()");
    if (m->hidden.len > 0) {
        put(b, " AND TABLE_NAME NOT IN (");
        put_n(b, (const char *)m->hidden.data + 2, m->hidden.len - 2);
        put(b, ")");
    }
    for (p = (const char *)m->remote.data, end = p + m->remote.len; rc == 0 && p != NULL && p < end;
         p = node + strlen(node) + 1) {
        phys = p + strlen(p) + 1;
        node = phys + strlen(phys) + 1;
        rc = put_remote(c, view, p, phys, node, b, err);
    }
    /* A LIMIT keeps the server from merging the derived table into the
     * query: a merged one names its columns as its own select list writes
     * them, a materialised one as the client's query does, as the view. */
    put(b, " LIMIT 18446744073709551615)");
    return rc;
}

/* The derived table standing for a status view: the server's rows, with
 * the values of the variables processlist_status names (THREADS_CONNECTED,
 * ABORTED_CLIENTS) the proxy's counts. */
static void put_status(proxy_client_t *c, int view, proto_buf_t *b)
{
    processlist_status_t st[PROCESSLIST_STATUS_N];
    size_t i;

    processlist_status(c->px, st);
    put(b, "(SELECT VARIABLE_NAME, CASE VARIABLE_NAME");
    for (i = 0; i < PROCESSLIST_STATUS_N; i++) {
        put(b, " WHEN '");
        put(b, st[i].name);
        put(b, "' THEN '");
        put(b, st[i].value);
        put(b, "'");
    }
    put(b, " ELSE VARIABLE_VALUE END AS VARIABLE_VALUE FROM information_schema.");
    put(b, infoschema_view_name(view));
    /* as put_derived: the server keeps the client's column names */
    put(b, " LIMIT 18446744073709551615)");
}

/* Is the session's autocommit 0? */
static bool manual(const proxy_client_t *c)
{
    return (dal_session_status(c->session) & DAL_SERVER_STATUS_AUTOCOMMIT) == 0;
}

/* A status view, whose client counts are the proxy's. */
static bool is_status(int view)
{
    return view == INFOSCHEMA_GLOBAL_STATUS || view == INFOSCHEMA_SESSION_STATUS;
}

/* A view of the tables, which needs the mapping of the sharded ones. */
static bool of_tables(int view)
{
    return view == INFOSCHEMA_TABLES || view == INFOSCHEMA_COLUMNS ||
           view == INFOSCHEMA_STATISTICS;
}

/* Does the reference need a derived table: a view of the logical tables
 * (not in no database, where the statement reads the server's views as
 * written on the connection in none, as the session's statements run),
 * the session variables while autocommit is the session's 0, or a status
 * view (always)? */
static bool replaced(const proxy_client_t *c, int view)
{
    if (view == INFOSCHEMA_SESSION_VARIABLES)
        return manual(c);
    if (is_status(view))
        return true;
    return view != INFOSCHEMA_DATABASE && !dal_session_no_database(c->session);
}

/* sql (len bytes) with each reference replaced into *out (the caller's). */
static int rewrite(proxy_client_t *c, const char *sql, size_t len, const infoschema_ref_t *refs,
                   size_t n, proto_buf_t *out, dal_error_t *err)
{
    mapping_t m = {.c = c};
    proto_buf_t b = PROTO_BUF_INIT;
    size_t i, at = 0;
    int rc = 0;

    for (i = 0; i < n && !(replaced(c, refs[i].view) && of_tables(refs[i].view)); i++)
        ;
    if (i < n)  /* a view of the tables is read */
        rc = map_tables(c, &m, err);
    for (i = 0; i < n && rc == 0; i++) {
        put_n(&b, sql + at, refs[i].off - at);
        at = refs[i].off + refs[i].len;
        if (refs[i].view == INFOSCHEMA_DATABASE) {
            if (c->has_db)
                put_quoted(c, &b, setvar_db_name(c));
            else
                put(&b, "NULL");  /* none chosen yet, as on a server */
            continue;
        }
        if (!replaced(c, refs[i].view)) {
            put_n(&b, sql + refs[i].off, refs[i].len);
            continue;
        }
        if (refs[i].view == INFOSCHEMA_SESSION_VARIABLES)
            put(&b, "(SELECT VARIABLE_NAME, IF(VARIABLE_NAME = 'AUTOCOMMIT', 'OFF', VARIABLE_VALUE)"
                    " AS VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES)");
        else if (is_status(refs[i].view))
            put_status(c, refs[i].view, &b);
        else
            rc = put_derived(c, &m, refs[i].view, &b, err);
        if (!refs[i].aliased) {
            put(&b, " AS `");
            put(&b, infoschema_view_name(refs[i].view));
            put(&b, "`");
        }
    }
    put_n(&b, sql + at, len - at);
    if (rc == 0 && (b.err != 0 || m.arms.err != 0 || m.hidden.err != 0 || m.remote.err != 0)) {
        err->code = rc = DAL_ENOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
    }
    proto_buf_free(&m.arms);
    proto_buf_free(&m.hidden);
    proto_buf_free(&m.all);
    proto_buf_free(&m.present);
    proto_buf_free(&m.remote);
    if (rc != 0) {
        proto_buf_free(&b);
        return rc;
    }
    *out = b;
    return 0;
}

#define MAX_REFS 8

/* `SHOW [SESSION | LOCAL] VARIABLES [LIKE p | WHERE e]` (sql, len bytes)
 * as a SELECT over information_schema.SESSION_VARIABLES into *b: true,
 * else false. */
static bool show_variables(const char *sql, size_t len, proto_buf_t *b)
{
    const char *cond;
    size_t n;
    bool like;

    if (!recognise_show_variables(sql, len, &like, &cond, &n))
        return false;
    put(b, "SELECT Variable_name, Value FROM (SELECT LOWER(VARIABLE_NAME) AS Variable_name,"
            " VARIABLE_VALUE AS Value FROM information_schema.SESSION_VARIABLES) AS v");
    if (cond != NULL) {  /* the condition without the statement's closing ';' */
        put(b, like ? " WHERE Variable_name LIKE " : " WHERE ");
        put_n(b, cond, n);
    }
    put(b, " ORDER BY CAST(Variable_name AS BINARY)");  /* '_' before letters */
    put_n(b, "", 1);  /* the NUL infoschema_find reads up to */
    b->len -= b->err == 0;
    return true;
}

/* sql (len bytes), its n references refs replaced, run and answered. */
static void answer(proxy_client_t *c, const char *sql, size_t len, const infoschema_ref_t *refs,
                   size_t n)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    proto_buf_t text = PROTO_BUF_INIT;

    memset(&err, 0, sizeof err);
    if (rewrite(c, sql, len, refs, n, &text, &err) != 0 ||
        dal_session_query_len(c->session, NULL, (const char *)text.data, text.len, NULL, 0, &r,
                              &err) != 0) {
        proto_buf_free(&text);
        reply_dal_error(c, &err);
        return;
    }
    proto_buf_free(&text);
    reply_result(c, r, false);
    dal_result_free(r);
}

bool infoschema_query(proxy_client_t *c, const char *sql, size_t len)
{
    infoschema_ref_t refs[MAX_REFS];
    proto_buf_t show = PROTO_BUF_INIT;
    size_t i, n;

    if (manual(c) && show_variables(sql, len, &show) && show.err == 0) {
        sql = (const char *)show.data;
        len = show.len;
    }
    n = infoschema_find(sql, len, reply_no_backslash(c), refs, MAX_REFS);
    for (i = 0; i < n && !replaced(c, refs[i].view); i++)
        ;
    if (i < n)  /* a view read */
        answer(c, sql, len, refs, n);
    proto_buf_free(&show);
    return i < n;
}
