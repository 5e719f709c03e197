/*
 * schema.c -- the statements that describe the proxy's one schema, as its
 * clients expect them: SHOW TABLES lists the logical tables, not the
 * physical ones of the default datasource, and SHOW COLUMNS, SHOW INDEX,
 * SHOW CREATE TABLE and DESCRIBE of a configured table answer once, from
 * its first physical table, under the logical name (the servers would
 * answer once per physical table, under its own name).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy.h"
#include "recognise.h"
#include "reply.h"
#include "text.h"
#include "schema_text.h"

/* Table names, each with its type (SHOW FULL TABLES' Table_type). */
typedef struct names {
    char **v;          /* owned, and each entry */
    char **type;       /* owned, and each entry: parallel to v */
    size_t n, cap;
    bool failed;       /* out of memory */
} names_t;

static void names_add_typed(names_t *ns, const char *name, const char *type)
{
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 16;
        char **v = realloc(ns->v, cap * sizeof *v), **t;
        if (v != NULL)
            ns->v = v;
        t = v != NULL ? realloc(ns->type, cap * sizeof *t) : NULL;
        if (t == NULL) {
            ns->failed = true;
            return;
        }
        ns->type = t;
        ns->cap = cap;
    }
    ns->v[ns->n] = strdup(name);
    ns->type[ns->n] = strdup(type != NULL ? type : "BASE TABLE");
    if (ns->v[ns->n] == NULL || ns->type[ns->n] == NULL) {
        free(ns->v[ns->n]);
        free(ns->type[ns->n]);
        ns->failed = true;
        return;
    }
    ns->n++;
}

/* A dal_name_fn: a logical table, a base table to its clients. */
static void names_add(void *user, const char *name)
{
    names_add_typed(user, name, NULL);
}

static void names_free(names_t *ns)
{
    size_t i;

    for (i = 0; i < ns->n; i++) {
        free(ns->v[i]);
        free(ns->type[i]);
    }
    free(ns->v);
    free(ns->type);
}

/* The configured table of c's schema called name (any case), or NULL. */
static dal_table_info_t *configured(proxy_client_t *c, const char *name)
{
    dal_table_info_t *t;
    dal_error_t err;

    if (dal_table_info(c->px->dal, name, &t, &err) != 0)
        return NULL;
    if (setvar_table_ours(c, t))
        return t;
    dal_table_info_free(t);
    return NULL;
}

/* name is "<table>_<digits>" for a configured sharded table: one of its
 * physical tables, which the logical name stands for. */
static bool is_physical(proxy_client_t *c, const names_t *logical, const char *name)
{
    size_t i, n, k;

    for (i = 0; i < logical->n; i++) {
        dal_table_info_t *t;
        bool sharded;
        n = strlen(logical->v[i]);
        if (strncasecmp(name, logical->v[i], n) != 0 || name[n] != '_' || name[n + 1] == '\0')
            continue;
        for (k = n + 1; isdigit((unsigned char)name[k]); k++)
            ;
        if (name[k] != '\0' || (t = configured(c, logical->v[i])) == NULL)
            continue;
        sharded = dal_table_info_layout(t) == DAL_LAYOUT_SHARDED;
        dal_table_info_free(t);
        if (sharded)
            return true;
    }
    return false;
}

/* Sort by name (the types go along). */
static void names_sort(names_t *ns)
{
    size_t i, j;

    for (i = 1; i < ns->n; i++)
        for (j = i; j > 0 && strcmp(ns->v[j - 1], ns->v[j]) > 0; j--) {
            char *v = ns->v[j], *t = ns->type[j];
            ns->v[j] = ns->v[j - 1];
            ns->type[j] = ns->type[j - 1];
            ns->v[j - 1] = v;
            ns->type[j - 1] = t;
        }
}

static void text_column(proto_column_t *col, const char *name)
{
    memset(col, 0, sizeof *col);
    col->name = col->org_name = name;
    col->charset = 45; /* utf8mb4_general_ci */
    col->length = 256;
    col->type = PROTO_TYPE_VAR_STRING;
}

/* The rows of column (and, when full, Table_type), each name once. */
static void send_names(proxy_client_t *c, const char *column, const names_t *ns, bool full)
{
    proto_column_t cols[2];
    size_t i, ncols = full ? 2 : 1;

    text_column(&cols[0], column);
    text_column(&cols[1], "Table_type");
    proto_build_columns(&c->out, &c->seq, c->caps, cols, ncols, reply_status(c));
    for (i = 0; i < ns->n; i++) {
        const char *v[2] = {ns->v[i], ns->type[i]};
        if (i == 0 || strcmp(ns->v[i], ns->v[i - 1]) != 0)
            reply_row(c, cols, ncols, v, NULL);
    }
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, reply_status(c));
}

/*
 * Run sql, which names no table, where statements without tables go: the
 * default datasource, or, without one, the first node of the first
 * configured table (raw: as written).  DAL_EROUTE is "no such place".
 */
static int run_tableless(proxy_client_t *c, const char *sql, size_t len,
                         const names_t *logical, dal_result_t **r, dal_error_t *err)
{
    dal_table_info_t *t;
    const char *node;
    char *hinted;
    int rc = dal_session_query_len(c->session, NULL, sql, len, NULL, 0, r, err);
    size_t n;

    if (rc != DAL_EROUTE || logical->n == 0 || (t = configured(c, logical->v[0])) == NULL)
        return rc;
    node = dal_table_info_node(t, 0);
    if (node != NULL && (hinted = malloc(strlen(node) + len + 40)) != NULL) {
        n = (size_t)sprintf(hinted, "/*+ dal datasource=%s raw */ ", node);
        memcpy(hinted + n, sql, len);
        rc = dal_session_query_len(c->session, NULL, hinted, n + len, NULL, 0, r, err);
        free(hinted);
    }
    dal_table_info_free(t);
    return rc;
}

/* ---------------------------------------------------------- SHOW TABLES */

static void put_str(proto_buf_t *b, const char *s)
{
    proto_put_bytes(b, s, strlen(s));
}

/* `q`text`q` as c's session reads it: the quote doubled inside, and for
 * '' backslashes doubled unless its sql_mode has NO_BACKSLASH_ESCAPES. */
static void put_quoted(const proxy_client_t *c, proto_buf_t *b, char q, const char *text)
{
    bool escape = q == '\'' && !reply_no_backslash(c);

    proto_put_u8(b, (uint8_t)q);
    for (; *text != '\0'; text++) {
        if (*text == q || (escape && *text == '\\'))
            proto_put_u8(b, (uint8_t)*text);
        proto_put_u8(b, (uint8_t)*text);
    }
    proto_put_u8(b, (uint8_t)q);
}

/*
 * LIKE or WHERE over the list: the servers evaluate the condition, over a
 * derived table of the names (no table of dal's in it), so any condition
 * a server takes in SHOW TABLES works the same.
 */
static void send_filtered(proxy_client_t *c, const char *column, const names_t *ns, bool full,
                          const char *filter, const char *end, const names_t *logical)
{
    proto_buf_t b = PROTO_BUF_INIT;
    dal_result_t *r = NULL;
    dal_error_t err;
    const char *p = filter, *pat;
    char head[192];
    size_t i, n;

    /* a server names the column of LIKE 'pattern' "Tables_in_db (pattern)" */
    put_str(&b, "SELECT ");
    put_quoted(c, &b, '`', column);
    if ((pat = recognise_like_pattern(filter, &n)) != NULL && n > 0) {
        snprintf(head, sizeof head, "%s (%.*s)", column, (int)n, pat);
        put_str(&b, " AS ");
        put_quoted(c, &b, '`', head);
    }
    if (full)
        put_str(&b, ", `Table_type`");
    /* the first row, all NULL, names the columns and is filtered out */
    put_str(&b, " FROM (SELECT NULL AS ");
    put_quoted(c, &b, '`', column);
    if (full)
        put_str(&b, ", NULL AS `Table_type`");
    for (i = 0; i < ns->n; i++) {
        if (i > 0 && strcmp(ns->v[i], ns->v[i - 1]) == 0)
            continue;
        put_str(&b, " UNION ALL SELECT ");
        put_quoted(c, &b, '\'', ns->v[i]);
        if (full) {
            put_str(&b, ", ");
            put_quoted(c, &b, '\'', ns->type[i]);
        }
    }
    put_str(&b, ") AS dal_tables WHERE ");
    put_quoted(c, &b, '`', column);
    put_str(&b, " IS NOT NULL AND (");
    if (text_word_is(&p, "LIKE")) {
        put_quoted(c, &b, '`', column);
        put_str(&b, " LIKE ");
    } else {
        (void)text_word_is(&p, "WHERE");
    }
    proto_put_bytes(&b, p, (size_t)(end - p));  /* NUL bytes in its strings kept */
    while (b.len > 0 && (isspace(b.data[b.len - 1]) || b.data[b.len - 1] == ';'))
        b.len--;
    put_str(&b, ")");
    if (b.err != 0)
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
    else if (run_tableless(c, (const char *)b.data, b.len, logical, &r, &err) != 0)
        reply_dal_error(c, &err);
    else
        reply_result(c, r, false);
    dal_result_free(r);
    proto_buf_free(&b);
}

/* dal_table_names into the names of the tables of c's schema. */
typedef struct ours {
    proxy_client_t *c;
    names_t *names;
} ours_t;

static void names_add_ours(void *user, const char *name)
{
    ours_t *o = user;
    dal_table_info_t *t = configured(o->c, name);

    if (t != NULL)  /* else another schema's, or a reload took it away */
        names_add(o->names, name);
    dal_table_info_free(t);
}

/* A dal_name_fn: the name, copied into user's char[128]. */
static void name_copy(void *user, const char *name)
{
    snprintf(user, 128, "%s", name);
}

/*
 * The databases of [dal] server_schemas' datasource (none without one)
 * into ns: a client may USE each, so they are listed as a server lists
 * its own.  False with err set when that datasource does not answer.
 */
static bool server_databases(proxy_client_t *c, names_t *ns, dal_error_t *err)
{
    char ds[128] = "", sql[192];
    dal_result_t *r = NULL;
    const char *name;
    int rc;

    if (dal_server_schemas(c->px->dal, name_copy, ds, err) != 0)
        return false;
    if (ds[0] == '\0')
        return true;
    snprintf(sql, sizeof sql, "/*+ dal datasource=%s raw */ SHOW DATABASES", ds);
    if (dal_session_query(c->session, NULL, sql, NULL, 0, &r, err) != 0)
        return false;
    while ((rc = dal_result_next(r, err)) == 1)
        if ((name = dal_result_text(r, 0, NULL)) != NULL)
            names_add(ns, name);
    dal_result_free(r);
    return rc == 0;
}

/* Keep the names of ns that match the LIKE pattern p..end. */
static void names_like(names_t *ns, const char *p, const char *end)
{
    size_t i, k = 0;

    for (i = 0; i < ns->n; i++) {
        if (schema_like(p, end, ns->v[i])) {
            ns->v[k] = ns->v[i];
            ns->type[k++] = ns->type[i];
        } else {
            free(ns->v[i]);
            free(ns->type[i]);
        }
    }
    ns->n = k;
}

bool schema_show_databases(proxy_client_t *c, const char *sql)
{
    names_t all = {0};
    dal_error_t err;
    const char *pat;
    char column[160] = "Database";
    size_t n;

    /* SHOW DATABASES [LIKE 'pattern']; a WHERE goes to the servers */
    if (!recognise_show_databases(sql, &pat, &n))
        return false;
    if (pat != NULL)
        snprintf(column, sizeof column, "Database (%.*s)", (int)n, pat);
    names_add(&all, c->px->database);
    if (dal_schema_names(c->px->dal, names_add, &all, &err) != 0 ||
        !server_databases(c, &all, &err)) {
        reply_dal_error(c, &err);
    } else if (all.failed) {
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
    } else {
        names_sort(&all);
        if (pat != NULL)
            names_like(&all, pat, pat + n);
        send_names(c, column, &all, false);
    }
    names_free(&all);
    return true;
}

/* SHOW TABLES in the client's schema, on session s, filter..end its LIKE
 * or WHERE. */
static void show_tables(proxy_client_t *c, dal_session_t *s, bool full, const char *filter,
                        const char *end)
{
    names_t logical = {0}, all = {0};
    dal_result_t *r = NULL;
    dal_error_t err;
    char column[96];
    size_t i;
    int rc;

    /* the default datasource's own tables (none without one), then the
     * logical ones */
    if (dal_table_names(c->px->dal, names_add_ours, &(ours_t){c, &logical}, &err) != 0 ||
        ((rc = dal_session_query(s, NULL, "SHOW FULL TABLES", NULL, 0, &r, &err)) != 0 &&
         rc != DAL_EROUTE)) {
        reply_dal_error(c, &err);
        goto done;
    }
    while (r != NULL && (rc = dal_result_next(r, &err)) == 1) {
        const char *name = dal_result_text(r, 0, NULL);
        if (name != NULL && !is_physical(c, &logical, name))
            names_add_typed(&all, name, dal_result_text(r, 1, NULL));
    }
    if (r != NULL && rc < 0) {
        reply_dal_error(c, &err);
        goto done;
    }
    for (i = 0; i < logical.n; i++)
        names_add(&all, logical.v[i]);
    if (logical.failed || all.failed) {
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
        goto done;
    }
    names_sort(&all);
    snprintf(column, sizeof column, "Tables_in_%.80s", setvar_db_name(c));
    if (recognise_at_end(filter))
        send_names(c, column, &all, full);
    else
        send_filtered(c, column, &all, full, filter, end, &logical);
done:
    dal_result_free(r);
    names_free(&logical);
    names_free(&all);
}

/* SHOW TABLES FROM db while the session is in no database, which no
 * connection can be put back into once it chose db: listed by a session
 * of its own in db (the server's error for a database it does not have,
 * a server database's listing its own). */
static bool show_tables_apart(proxy_client_t *c, const char *db, bool full, const char *filter,
                              const char *end)
{
    bool ours = strcmp(db, c->px->database) == 0;
    dal_session_t *tmp = NULL;
    dal_error_t err;

    if (dal_session_open(c->px->dal, &tmp, &err) != 0 ||
        dal_session_use_schema(tmp, ours ? NULL : db, &err) != 0) {
        if (err.mysql_errno != 0)
            reply_dal_error(c, &err);
        else
            reply_unknown_db(c, db, strlen(db));
    } else {
        setvar_name_db(c, ours ? "" : db, true);
        show_tables(c, tmp, full, filter, end);
        setvar_name_db(c, "", false);
    }
    dal_session_close(tmp);
    return true;
}

/*
 * SHOW TABLES [FROM db]: db another logical database is listed as in it,
 * the client's schema chosen for the time of the statement; a database
 * the configuration does not know is the servers' (false).
 */
bool schema_show_tables(proxy_client_t *c, const char *sql, size_t len)
{
    char db[129], was[sizeof c->schema];
    const char *filter;
    bool full, had;

    if (!recognise_show_tables(sql, &full, db, sizeof db, &filter))
        return false;
    /* in no database: SHOW TABLES is the server's 1046 there */
    if (db[0] == '\0' ||
        (strcmp(db, setvar_db_name(c)) == 0 && !dal_session_no_database(c->session))) {
        show_tables(c, c->session, full, filter, sql + len);
        return true;
    }
    if (dal_session_no_database(c->session))
        return show_tables_apart(c, db, full, filter, sql + len);
    memcpy(was, c->schema, sizeof was);
    had = c->has_db;
    if (!setvar_choose_db(c, db, strlen(db)))
        return false;
    show_tables(c, c->session, full, filter, sql + len);
    setvar_restore_db(c, was, had);
    return true;
}

/* ------------------------------------------------------------ DESCRIBE */

/* What to put back in a row: the physical name where the servers wrote
 * it, the logical one instead. */
typedef struct rename {
    size_t name_column;        /* the column holding the table's name, or SIZE_MAX */
    size_t text_column;        /* SHOW CREATE TABLE's text, or SIZE_MAX */
    const char *logical, *physical;
    char *buf;                 /* owned: the text rewritten */
} rename_t;

static void rename_value(void *user, size_t column, const char **val, size_t *len)
{
    rename_t *rn = user;
    char quoted[200];
    const char *at;
    size_t qn, ln;

    if (column == rn->name_column && *len == strlen(rn->physical) &&
        memcmp(*val, rn->physical, *len) == 0) {
        *val = rn->logical;
        *len = strlen(rn->logical);
        return;
    }
    if (column != rn->text_column)
        return;
    /* CREATE TABLE `orders_0` (...): the first quoted name is the table */
    snprintf(quoted, sizeof quoted, "`%s`", rn->physical);
    qn = strlen(quoted);
    at = memmem(*val, *len, quoted, qn);
    ln = strlen(rn->logical);
    free(rn->buf);
    if (at == NULL || (rn->buf = malloc(*len - qn + ln + 3)) == NULL) {
        rn->buf = NULL;
        return;
    }
    memcpy(rn->buf, *val, (size_t)(at - *val));
    snprintf(rn->buf + (at - *val), ln + 3, "`%s`", rn->logical);
    memcpy(rn->buf + (at - *val) + ln + 2, at + qn, *len - (size_t)(at - *val) - qn);
    *len = *len - qn + ln + 2;
    *val = rn->buf;
}

/* The database of node's master ("" when its URL names none), quoted and
 * followed by a dot, into b: in no database, a statement naming a table
 * alone would get the server's 1046. */
static void put_node_db(proxy_client_t *c, proto_buf_t *b, const char *node)
{
    dal_datasource_info_t *ds;
    const dal_server_settings_t *m;
    dal_error_t err;

    if (dal_datasource_info(c->px->dal, node, &ds, &err) != 0)
        return;
    if ((m = dal_datasource_info_server(ds, 0)) != NULL && m->database != NULL) {
        put_quoted(c, b, '`', m->database);
        proto_put_u8(b, '.');
    }
    dal_datasource_info_free(ds);
}

bool schema_describe(proxy_client_t *c, const char *sql, size_t len)
{
    recognise_describe_t d;
    char physical[160];
    const char *node;
    dal_table_info_t *t;
    proto_buf_t b = PROTO_BUF_INIT;
    dal_result_t *r = NULL;
    dal_error_t err;
    rename_t rn = {SIZE_MAX, SIZE_MAX, d.table, physical, NULL};
    int pos;

    /* in no database, only a name of the schema's own: else the server's 1046 */
    if (!recognise_describe(sql, setvar_db_name(c), &d) ||
        (!d.named_db && dal_session_no_database(c->session)) ||
        (t = configured(c, d.table)) == NULL)
        return false;
    pos = dal_table_info_physical(t, 0, physical, sizeof physical);
    node = pos >= 0 ? dal_table_info_node(t, (uint32_t)pos) : NULL;
    /* the statement as written, on the first physical table, as is */
    put_str(&b, "/*+ dal datasource=");
    put_str(&b, node != NULL ? node : "");
    put_str(&b, " raw */ ");
    proto_put_bytes(&b, sql, (size_t)(d.head_end - sql));
    if (node != NULL && dal_session_no_database(c->session))
        put_node_db(c, &b, node);
    put_quoted(c, &b, '`', physical);
    proto_put_bytes(&b, d.tail, (size_t)(sql + len - d.tail));
    proto_put_u8(&b, 0);
    dal_table_info_free(t);
    if (d.kind == DESCRIBE_INDEX)
        rn.name_column = 0;
    else if (d.kind == DESCRIBE_CREATE) {
        rn.name_column = 0;
        rn.text_column = 1;
    }
    if (node == NULL || b.err != 0)
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
    else if (dal_session_query_len(c->session, NULL, (const char *)b.data, b.len - 1, NULL, 0,
                                   &r, &err) != 0)
        reply_dal_error(c, &err);
    else
        reply_result_map(c, r, false, rename_value, &rn);
    dal_result_free(r);
    free(rn.buf);
    proto_buf_free(&b);
    return true;
}

/* ---------------------------------------------------------- FIELD LIST */

/* Into b (NUL-ended), on node (NULL: where dal routes table): a SELECT
 * of table's column definitions, or of its defaults from
 * information_schema, one row a column, in the same order. */
static void field_list_sql(const proxy_client_t *c, proto_buf_t *b, const char *node,
                           const char *table, bool defaults)
{
    if (node != NULL) {
        put_str(b, "/*+ dal datasource=");
        put_str(b, node);
        put_str(b, " raw */ ");
    }
    if (defaults) {
        put_str(b, "SELECT COLUMN_NAME, IS_NULLABLE, COLUMN_DEFAULT, COLUMN_TYPE"
                   " FROM information_schema.COLUMNS"
                   " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ");
        put_quoted(c, b, '\'', table);
        put_str(b, " ORDER BY ORDINAL_POSITION");
    } else {
        put_str(b, "SELECT * FROM ");
        put_quoted(c, b, '`', table);
        put_str(b, " LIMIT 0");
    }
    proto_put_u8(b, 0);
}

/* The columns of r, under the table name, each with its default from the
 * next row of defs, those that match wild. */
static void send_field_list(proxy_client_t *c, const char *name, const proto_str_t *wild,
                            dal_result_t *r, dal_result_t *defs)
{
    proto_buf_t def = PROTO_BUF_INIT;
    proto_column_t col;
    dal_error_t err;
    const char *cname, *text;
    size_t i, n;
    bool has;

    for (i = 0, n = dal_result_column_count(r); i < n; i++) {
        reply_column(r, i, &col);
        col.schema = setvar_db_name(c);
        col.table = col.org_table = name;
        proto_buf_reset(&def);
        has = dal_result_next(defs, &err) == 1 && (cname = dal_result_text(defs, 0, NULL)) != NULL &&
              strcasecmp(cname, col.name) == 0 &&
              schema_default(&def, &col, dal_result_text(defs, 1, NULL), dal_result_text(defs, 2, NULL),
                          dal_result_text(defs, 3, NULL));
        /* an empty default may have no buffer yet: it is "", not NULL */
        text = !has ? NULL : def.data != NULL ? (const char *)def.data : "";
        if (wild == NULL || wild->ptr == NULL || wild->len == 0 ||
            schema_like(wild->ptr, wild->ptr + wild->len, col.name))
            proto_build_field_list_column(&c->out, &c->seq, c->caps, &col, text, def.len);
    }
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, reply_status(c));
    proto_buf_free(&def);
}

void schema_field_list(proxy_client_t *c, const proto_str_t *table, const proto_str_t *wild)
{
    char name[129], physical[160];
    const char *node = NULL, *source = name;
    dal_table_info_t *t;
    proto_buf_t q = PROTO_BUF_INIT, d = PROTO_BUF_INIT;
    dal_result_t *r = NULL, *defs = NULL;
    dal_error_t err;
    bool lost = false;
    int pos;

    if (table->ptr == NULL || table->len == 0 || table->len >= sizeof name ||
        memchr(table->ptr, '\0', table->len) != NULL) {
        reply_err(c, 1146, "42S02", "Table name is missing or too long");
        return;
    }
    memcpy(name, table->ptr, table->len);
    name[table->len] = '\0';
    /* a configured table: its first physical table, as for DESCRIBE */
    if ((t = configured(c, name)) != NULL) {
        pos = dal_table_info_physical(t, 0, physical, sizeof physical);
        node = pos >= 0 ? dal_table_info_node(t, (uint32_t)pos) : NULL;
        source = physical;
        lost = node == NULL;
    }
    field_list_sql(c, &q, node, source, false);
    field_list_sql(c, &d, node, source, true);
    if (t != NULL)
        dal_table_info_free(t);
    if (lost || q.err != 0 || d.err != 0)
        reply_err(c, 1037, "HY001", "dal-proxy: out of memory");
    else if (dal_session_query(c->session, NULL, (const char *)q.data, NULL, 0, &r, &err) != 0 ||
             dal_session_query(c->session, NULL, (const char *)d.data, NULL, 0, &defs, &err) != 0)
        reply_dal_error(c, &err);
    else
        send_field_list(c, name, wild, r, defs);
    dal_result_free(r);
    dal_result_free(defs);
    proto_buf_free(&q);
    proto_buf_free(&d);
}
