/*
 * setvar.c -- the statements that change a client's session: USE,
 * SET of session variables, SET NAMES and SET [SESSION] TRANSACTION.
 *
 * A server keeps them for the connection; dal-proxy runs each statement on
 * whichever pooled connection its route gives, so the client's dal session
 * keeps them instead (dal_session_set_var) and applies them to every
 * connection it takes.  A list with a value that reads state (`@saved`,
 * `@@sql_mode`, a function) or a flag set's literal runs on a server as
 * written, where the session's user variables are, and the values it gave
 * are read back there and kept as literals (dal_session_set_eval).  In
 * other lists, assignments of user variables run on the server (the
 * session pins the connection that holds them) and the session variables'
 * literals are kept.
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
#include "track.h"

static int out_of_memory(dal_error_t *err)
{
    err->code = DAL_ENOMEM;
    err->mysql_errno = 0;
    snprintf(err->message, sizeof err->message, "dal-proxy: out of memory");
    return DAL_ENOMEM;
}

/* A column type whose text is a number literal as it is. */
static bool numeric(int type)
{
    switch (type) {
    case PROTO_TYPE_DECIMAL: case PROTO_TYPE_NEWDECIMAL: case PROTO_TYPE_TINY:
    case PROTO_TYPE_SHORT: case PROTO_TYPE_LONG: case PROTO_TYPE_FLOAT:
    case PROTO_TYPE_DOUBLE: case PROTO_TYPE_LONGLONG: case PROTO_TYPE_INT24:
        return true;
    }
    return false;
}

/* val (n bytes) as a quoted SQL string: quotes doubled, and backslashes
 * doubled unless the session's sql_mode takes them as they are.  NULL when
 * out of memory. */
static char *quoted(const proxy_client_t *c, const char *val, size_t n)
{
    char *out = malloc(2 * n + 3);

    if (out != NULL)
        recognise_quote(out, '\'', val, n, reply_no_backslash(c));
    return out;
}

/* Replace *value (an expression, owned) by the literal it gives now in
 * the client's session: NULL, a number, or a quoted string. */
static int evaluate(proxy_client_t *c, char **value, dal_error_t *err)
{
    size_t n = strlen(*value), len = 0;
    char *sql = malloc(n + sizeof "SELECT "), *lit = NULL;
    dal_result_t *r = NULL;
    dal_column_info_t ci;
    const char *val;
    int rc;

    if (sql == NULL)
        return out_of_memory(err);
    memcpy(sql, "SELECT ", 7);
    memcpy(sql + 7, *value, n + 1);
    rc = dal_session_query(c->session, NULL, sql, NULL, 0, &r, err);
    free(sql);
    if (rc != 0)
        return rc;
    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    if ((rc = dal_result_next(r, err)) == 1) {
        rc = 0;
        val = dal_result_text(r, 0, &len);
        if (val == NULL)
            lit = strdup("NULL");
        else if (dal_result_column_info(r, 0, &ci) == 0 && numeric((int)ci.type))
            lit = strndup(val, len);
        else
            lit = quoted(c, val, len);
        if (lit == NULL)
            rc = out_of_memory(err);
    } else if (rc == 0) {
        lit = strdup("NULL");
        rc = lit == NULL ? out_of_memory(err) : 0;
    }
    dal_result_free(r);
    if (rc != 0)
        return rc;
    free(*value);
    *value = lit;
    return 0;
}

/* err as dal_session_set_var would fill it for a statement it refuses. */
static int refused(dal_error_t *err, const char *why)
{
    err->code = DAL_EUNSUPPORTED;
    err->mysql_errno = 0;
    snprintf(err->message, sizeof err->message, "%s", why);
    return DAL_EUNSUPPORTED;
}

/* The characteristics of SET SESSION TRANSACTION at p: the session
 * variables they are, so that every backend connection of the session
 * gets them.  All are read before any is set, so a mistake sets none. */
static int set_txn_characteristics(proxy_client_t *c, const char *p, dal_error_t *err)
{
    const char *level, *read_only, *why;
    int rc;

    if ((why = recognise_txn_characteristics(p, &level, &read_only)) != NULL)
        return refused(err, why);
    rc = level ? dal_session_set_var(c->session, "tx_isolation", level, err) : 0;
    if (rc == 0 && read_only != NULL)
        rc = dal_session_set_var(c->session, "tx_read_only", read_only, err);
    return rc;
}

/* SET [SESSION] TRANSACTION after SET at p: 1 (answered) if it is one.
 * Without SESSION it is for the next transaction only, which would run on
 * another connection than the SET: refused rather than lost. */
static int set_transaction(proxy_client_t *c, const char *p)
{
    dal_error_t err;
    bool session;

    if (!recognise_set_transaction(&p, &session))
        return 0;
    if (!session)
        refused(&err, "SET TRANSACTION for the next transaction only is not kept by "
                          "dal-proxy (its statements run on pooled connections): use SET "
                          "SESSION TRANSACTION ..., or START TRANSACTION READ ONLY");
    if (!session || set_txn_characteristics(c, p, &err) != 0)
        reply_dal_error(c, &err);
    else
        reply_ok(c, 0, 0, 0);
    return 1;
}

/* One session variable's assignment of a SET list, its value read. */
typedef struct set_item {
    char name[65];
    char *value;  /* owned: SQL as written, or the literal it gave */
    const char *text, *end;  /* the item in the statement */
} set_item_t;

/* Whether the server must evaluate an item's value where the session's
 * state is: it reads state, or it is a flag set's literal, which changes
 * only the flags it names (`optimizer_switch = 'mrr=on'`). */
static bool server_evaluates(const set_item_t *it, bool no_backslash)
{
    return recognise_reads_state(it->value, no_backslash) ||
           ((strcasecmp(it->name, "optimizer_switch") == 0 ||
             strcasecmp(it->name, "optimizer_trace") == 0) &&
            strcasecmp(it->value, "DEFAULT") != 0);
}

/* The item `[SESSION] [@@[session.]]name = value` at p..end into *it, its
 * value as written. */
static int read_item(const char *p, const char *end, set_item_t *it, dal_error_t *err)
{
    const char *value;
    size_t n;

    if (!recognise_set_item(p, it->name, &value))
        return refused(err, "dal-proxy takes SET [SESSION] name = value [, ...] and SET NAMES "
                            "charset");
    if ((it->value = strndup(value, (size_t)(end - value))) == NULL)
        return out_of_memory(err);
    for (n = strlen(it->value);
         n > 0 && (isspace((unsigned char)it->value[n - 1]) || it->value[n - 1] == ';'); n--)
        it->value[n - 1] = '\0';
    return 0;
}

/* The assignments of user (and global) variables of the SET list
 * p..last, run as one SET on the server through the session; 0 when there
 * is none. */
static int set_user_vars(proxy_client_t *c, const char *p, const char *last, dal_error_t *err)
{
    dal_result_t *r = NULL;
    char *sql = malloc((size_t)(last - p) + sizeof "SET "), *o;
    const char *end;
    int rc = 0;

    if (sql == NULL)
        return out_of_memory(err);
    o = sql + 4;
    memcpy(sql, "SET ", 4);
    for (; p < last; p = end < last ? end + 1 : end) {
        end = recognise_set_item_end(p, last, reply_no_backslash(c));
        if (!recognise_is_user_var(p))
            continue;
        if (o != sql + 4)
            *o++ = ',';
        memcpy(o, p, (size_t)(end - p));
        o += end - p;
    }
    *o = '\0';
    if (o != sql + 4)
        rc = dal_session_query_len(c->session, NULL, sql, (size_t)(o - sql), NULL, 0, &r, err);
    dal_result_free(r);
    free(sql);
    return rc;
}

/* Whether name is one of the variables dal_session_set_var keeps to
 * itself, never sent to a server (autocommit must never reach a pooled
 * connection). */
static bool dal_own(const char *name)
{
    return strcasecmp(name, "autocommit") == 0 || strcasecmp(name, "dal_transaction_mode") == 0 ||
           strcasecmp(name, "names") == 0;
}

/* The idle timeout a SET wait_timeout's value gives (server.c closes
 * the client after it): a number as the server bounds it, DEFAULT the
 * global value. */
static uint32_t wait_timeout(const proxy_client_t *c, const char *value)
{
    char *end;
    unsigned long v;

    if (*value == '\'')
        value++;
    v = strtoul(value, &end, 10);
    if (end == value)
        return c->px->wait_timeout_s;
    return v < 1 ? 1 : v > 31536000 ? 31536000 : (uint32_t)v;
}

/*
 * The session variables just kept, set once more as one statement through
 * the session, whose result (*out, the caller's) is the client's answer: a
 * server's SET answers with the warnings of its values (1292 "Truncated
 * incorrect tmp_table_size value"), which dal_session_set_var's check
 * does not return.  The connection it runs on has the session's variables
 * and is reset when it goes back to its pool, as for any statement.
 */
static int replay(proxy_client_t *c, const set_item_t *items, size_t n, dal_result_t **out,
                  dal_error_t *err)
{
    size_t i, k = 0, len = sizeof "SET SESSION ";
    char *sql, *o;
    int rc;

    for (i = 0; i < n; i++)
        len += strlen(items[i].name) + strlen(items[i].value) + sizeof ", = ";
    if ((sql = malloc(len)) == NULL)
        return out_of_memory(err);
    o = sql + sprintf(sql, "SET SESSION ");
    for (i = 0; i < n; i++)
        if (!dal_own(items[i].name))
            o += sprintf(o, "%s%s = %s", k++ ? ", " : "", items[i].name, items[i].value);
    if (k == 0) {
        free(sql);
        return 0;
    }
    rc = dal_session_query(c->session, NULL, sql, NULL, 0, out, err);
    free(sql);
    return rc;
}

/*
 * A SET list whose values the server must evaluate (server_evaluates): the
 * list but dal's own variables runs on the server as written, through the
 * session, which reads back the values it gave the session variables and
 * keeps them (dal_session_set_eval); *out is its answer.  Values of dal's
 * own variables that read state are read first, as the server reads every
 * value before it sets any.
 */
static int set_evaluated(proxy_client_t *c, set_item_t *items, size_t n, const char *list,
                         const char *last, dal_result_t **out, dal_error_t *err)
{
    const char *names[64];
    char *values[64] = {0}, *sql = malloc((size_t)(last - list) + sizeof "SET "), *o;
    const char *p, *end;
    size_t i, k = 0, own;
    int rc = 0;

    if (sql == NULL)
        return out_of_memory(err);
    o = sql + sprintf(sql, "SET ");
    for (p = list; p < last; p = end < last ? end + 1 : end) {
        end = recognise_set_item_end(p, last, reply_no_backslash(c));
        for (own = 0; own < n && !(items[own].text == p && dal_own(items[own].name)); own++)
            ;
        if (own < n || recognise_list_done(p, end) || p == end)
            continue;
        o += sprintf(o, "%s%.*s", o == sql + 4 ? "" : ",", (int)(end - p), p);
    }
    for (i = 0; i < n; i++)
        if (!dal_own(items[i].name))
            names[k++] = items[i].name;
    for (i = 0; rc == 0 && i < n; i++)
        if (dal_own(items[i].name) && recognise_reads_state(items[i].value, reply_no_backslash(c)))
            rc = evaluate(c, &items[i].value, err);
    if (rc == 0)
        rc = dal_session_set_eval(c->session, sql, (size_t)(o - sql), names, k, values, out, err);
    for (i = 0, k = 0; i < n; i++) {
        if (dal_own(items[i].name))
            continue;
        if (values[k] != NULL) {  /* the value kept: wait_timeout's */
            free(items[i].value);
            items[i].value = values[k];
        }
        k++;
    }
    for (i = 0; rc == 0 && i < n; i++)
        if (dal_own(items[i].name))
            rc = dal_session_set_var(c->session, items[i].name, items[i].value, err);
    free(sql);
    return rc;
}

/*
 * A SET list that assigns session variables, as a server runs it: every
 * value is read before any variable changes (so `SET @a = 1, x = @a`
 * reads the old @a), then the user variables are set on the server, then
 * the session's.  A list with a value the server must evaluate runs there
 * (set_evaluated).  *out: the answer of the replay, or NULL.
 */
static int set_list(proxy_client_t *c, const char *list, const char *last, unsigned int *vars,
                    dal_result_t **out, dal_error_t *err)
{
    set_item_t items[64];
    size_t n = 0, i;
    const char *p, *end;
    bool server = false;
    int rc = 0;

    for (p = list; rc == 0 && p < last; p = end < last ? end + 1 : end) {
        end = recognise_set_item_end(p, last, reply_no_backslash(c));
        if (recognise_is_user_var(p) || recognise_list_done(p, end) || p == end)
            continue;
        if (n == sizeof items / sizeof items[0])
            rc = refused(err, "dal-proxy takes at most 64 session variables in one SET");
        else {
            items[n].value = NULL;  /* read_item may fail before it reads one */
            items[n].text = p;
            items[n].end = end;
            if ((rc = read_item(p, end, &items[n], err)) == 0 || items[n].value != NULL)
                n++;
        }
    }
    /* a character set dal refuses leaves the whole list unset (a value
     * the server evaluates is checked where it runs: set_evaluated) */
    for (i = 0; rc == 0 && i < n; i++)
        if (!recognise_reads_state(items[i].value, reply_no_backslash(c)))
            rc = dal_client_charset_check(items[i].name, items[i].value, err);
    for (i = 0; rc == 0 && i < n; i++)
        server |= !dal_own(items[i].name) && server_evaluates(&items[i], reply_no_backslash(c));
    if (rc == 0 && server) {
        rc = set_evaluated(c, items, n, list, last, out, err);
        for (i = 0; rc == 0 && i < n; i++)
            *vars |= track_bit(items[i].name);
        goto timeouts;
    }
    for (i = 0; rc == 0 && i < n; i++)
        if (recognise_reads_state(items[i].value, reply_no_backslash(c)))
            rc = evaluate(c, &items[i].value, err);
    if (rc == 0)
        rc = set_user_vars(c, list, last, err);
    for (i = 0; i < n; i++)
        if (rc == 0 && (rc = dal_session_set_var(c->session, items[i].name, items[i].value,
                                                 err)) == 0)
            *vars |= track_bit(items[i].name);
    if (rc == 0)
        rc = replay(c, items, n, out, err);
timeouts:
    for (i = 0; rc == 0 && i < n; i++)
        if (strcasecmp(items[i].name, "wait_timeout") == 0)
            c->wait_timeout_s = wait_timeout(c, items[i].value);
        else
            proxy_idle_trx_set(c, items[i].name, items[i].value);
    for (i = 0; i < n; i++)
        free(items[i].value);
    return rc;
}

/* SET CHARACTER SET / SET CHARSET after SET at p, in a character set dal
 * refuses as a client's: 1 (answered with the refusal).  Any other is
 * refused by set_list as a form dal-proxy does not take. */
static int set_character_set(proxy_client_t *c, const char *p)
{
    dal_error_t err;

    if (!text_word_is(&p, "CHARSET") && !(text_word_is(&p, "CHARACTER") && text_word_is(&p, "SET")))
        return 0;
    if (dal_client_charset_check("names", text_blanks(p), &err) == 0)
        return 0;
    reply_dal_error(c, &err);
    return 1;
}

/* SET of session variables and SET NAMES: kept by the dal session, which
 * applies them to every connection it takes; SET [SESSION] TRANSACTION
 * too (set_transaction).  0 if sql is not such a SET (user variables,
 * GLOBAL, PASSWORD go to the servers). */
int setvar_statement(proxy_client_t *c, const char *sql, size_t len)
{
    const char *p = sql;
    dal_result_t *r = NULL;
    dal_error_t err;
    char names[RECOGNISE_NAMES_SIZE];
    unsigned int vars = 0;
    proto_str_t db;

    if (recognise_use(sql, len, &db.ptr, &db.len)) {
        /* as COM_INIT_DB: on a server it would move one of dal's pooled
         * connections to another schema */
        setvar_use_db(c, &db);
        return 1;
    }
    if (!text_word_is(&p, "SET"))
        return 0;
    if (set_transaction(c, p) || set_character_set(c, p))
        return 1;
    if (!recognise_set_session(p, sql + len, reply_no_backslash(c)))
        return 0;
    if (recognise_set_names(p, names)) {
        if (dal_session_set_var(c->session, "names", names, &err) != 0)
            reply_dal_error(c, &err);
        else
            track_reply_ok(c, TRACK_NAMES, NULL, 0, 0);
        return 1;
    }
    if (set_list(c, p, sql + len, &vars, &r, &err) != 0) {
        dal_session_syntax_error(c->session, sql, len, &err); /* the server's, for bad syntax */
        reply_dal_error(c, &err);
    } else {
        if (r != NULL)
            diag_take(c, r);  /* the replay's warnings, for SHOW WARNINGS */
        track_reply_ok(c, vars, NULL, 0, r != NULL ? dal_result_warning_count(r) : 0);
    }
    dal_result_free(r);
    return 1;
}
void setvar_interactive(proxy_client_t *c)
{
    char v[16];
    dal_error_t err;
    int tries = 2;

    c->interactive_pending = false;
    snprintf(v, sizeof v, "%u", c->px->interactive_timeout_s);
    /* a second time when the pooled connection the check took was lost
     * (closed by its server while idle): the pool has dropped it */
    while (dal_session_set_var(c->session, "wait_timeout", v, &err) != 0)
        if (--tries == 0 || err.mysql_errno < 2000 || err.mysql_errno > 2999) {
            fprintf(stderr, "dal-proxy: connection %u: wait_timeout = interactive_timeout not "
                        "kept: %s\n", c->id, err.message);
            break;
        }
}

bool setvar_choose_db(proxy_client_t *c, const char *p, size_t n)
{
    dal_error_t err;

    return setvar_choose_db_err(c, p, n, &err);
}

bool setvar_choose_db_err(proxy_client_t *c, const char *p, size_t n, dal_error_t *err)
{
    char name[sizeof c->schema];
    bool ours = strlen(c->px->database) == n && strncmp(c->px->database, p, n) == 0;

    err->mysql_errno = 0;
    if (!ours) {
        if (n == 0 || n >= sizeof name || memchr(p, '\0', n) != NULL)
            return false;
        memcpy(name, p, n);
        name[n] = '\0';
    }
    /* a name the configuration does not declare is a database of [dal]
     * server_schemas' datasource, which the session checks there (before
     * the session, at the handshake, logged_in does) */
    if (c->session != NULL &&
        dal_session_use_schema(c->session, ours ? NULL : name, err) != 0)
        return false;
    pthread_mutex_lock(&c->info_mu);  /* SHOW PROCESSLIST's db */
    c->has_db = true;
    snprintf(c->schema, sizeof c->schema, "%s", ours ? "" : name);
    pthread_mutex_unlock(&c->info_mu);
    return true;
}

void setvar_name_db(proxy_client_t *c, const char *schema, bool has_db)
{
    pthread_mutex_lock(&c->info_mu);
    c->has_db = has_db;
    snprintf(c->schema, sizeof c->schema, "%s", schema);
    pthread_mutex_unlock(&c->info_mu);
}

void setvar_db_dropped(proxy_client_t *c)
{
    if (c->schema[0] != '\0' && dal_session_no_database(c->session))
        setvar_name_db(c, "", false);
}

void setvar_restore_db(proxy_client_t *c, const char *schema, bool has_db)
{
    dal_error_t err;

    if (c->session != NULL)
        (void)dal_session_use_schema(c->session, schema[0] ? schema : NULL, &err);
    setvar_name_db(c, schema, has_db);
}

const char *setvar_db_name(const proxy_client_t *c)
{
    return c->schema[0] ? c->schema : c->px->database;
}

bool setvar_table_ours(const proxy_client_t *c, const dal_table_info_t *t)
{
    const char *in = dal_table_info_schema(t);

    return c->schema[0] ? in != NULL && strcmp(in, c->schema) == 0 : in == NULL;
}

void setvar_use_db(proxy_client_t *c, const proto_str_t *db)
{
    dal_error_t err;

    if (setvar_choose_db_err(c, db->ptr, db->len, &err))
        track_reply_ok(c, 0, db->ptr, db->len, 0);
    else if (err.mysql_errno != 0)
        reply_dal_error(c, &err);  /* the datasource's: lost, access denied, its 1049 in its
                                      lc_messages */
    else
        reply_unknown_db(c, db->ptr, db->len);
}
