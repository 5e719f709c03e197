/*
 * session.c -- sessions and single-node transactions.
 *
 * A transaction keeps one snapshot reference and one connection from its
 * first statement to COMMIT/ROLLBACK, so a reload or another thread never
 * sees its connection and every statement of it on that node runs there:
 * on its master, or for a read-only transaction on the server its first
 * statement picked as a read.  In transaction_mode single it may read
 * other nodes too, each in a transaction of its own there (txn.h's
 * DAL_TXN_SINGLE, on the master), while its writes go to one node.  A
 * session also remembers what it wrote (read-your-writes, replica.h), so
 * its later reads see it.
 *
 * Session variables (dal_session_set_var) are applied by the pool to each
 * connection a statement of the session takes (pool_set_vars), unless it
 * carries them already, and undone before a statement without them takes
 * it; autocommit is the session's own: with 0 it begins a
 * transaction before each statement that runs outside one.
 *
 * A statement that leaves state in its server session (user variables,
 * temporary tables, locks: pin.h) pins the connection it ran on until the
 * session ends or resets; the session's later statements on that node run
 * there, its transactions on that node too (COMMIT keeps the pin).
 */
#include <ctype.h>
#include <errmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handle.h"
#include "cancel.h"
#include "charset.h"
#include "infile.h"
#include "warnings.h"
#include "error.h"
#include "exec.h"
#include "pin.h"
#include "fence.h"
#include "pool.h"
#include "replica.h"
#include "rewrite.h"
#include "session_int.h"
#include "session_vars.h"
#include "route_servers.h"
#include "result.h"
#include "route.h"
#include "server_db.h"
#include "small.h"
#include "stmt.h"
#include "syntax.h"
#include "sysvar.h"
#include "txn.h"


/* ---------------------------------------------------------- variables */

/* What the pool applies for the session: NULL when it set nothing, so a
 * session without variables costs nothing. */
static const dal_conn_vars_t *session_conn_vars(const dal_session_t *s)
{
    return s->vars.set_sql != NULL || s->vars.charset != NULL ? &s->vars.conn : NULL;
}

/* autocommit: dal's, not the servers' (a pooled connection must never
 * keep a statement uncommitted).  Turning it on commits, as the server
 * does. */
static int set_autocommit(dal_session_t *s, const char *value, dal_error_t *err)
{
    int on = vars_autocommit(value);
    int rc = 0;

    if (on < 0)
        return err_set(err, DAL_EINVAL, "autocommit: '%s' is not 0, 1, ON or OFF", value);
    if (on && s->in_txn)
        rc = dal_commit(s, err);
    if (rc == 0)
        s->manual = !on;
    return rc;
}

static int mode_check(dal_session_t *s, int mode, dal_error_t *err);

/* A transaction mode's word (quoted or not, any case): its dal_txn_mode_t, or -1. */
static int mode_word(const char *value)
{
    static const char *const words[] = {"single", "multi", "xa"};
    char buf[16];
    const char *v = vars_unquote(value, buf, sizeof buf);
    int i;

    for (i = 0; i < 3; i++)
        if (strcasecmp(v, words[i]) == 0)
            return i;
    return -1;
}

/* dal_transaction_mode: the mode of the session's next transactions
 * (dal's own: never sent to a server); DEFAULT goes back to [dal]'s. */
static int set_txn_mode(dal_session_t *s, const char *value, dal_error_t *err)
{
    int i = mode_word(value);

    if (strcasecmp(value, "DEFAULT") == 0) {
        s->mode = -1;
        return 0;
    }
    if (i < 0)
        return err_set(err, DAL_EINVAL, "dal_transaction_mode: '%s' is not single, multi or xa",
                       value);
    if (mode_check(s, i, err) != 0)
        return err->code;
    s->mode = i;
    return 0;
}

/* v on every pinned connection (but the transaction's, done already):
 * they keep the session's variables, as any connection it takes. */
static int vars_pinned(dal_session_t *s, const session_vars_t *v, dal_error_t *err)
{
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < s->pins.n; i++)
        if (s->pins.v[i].conn != NULL && s->pins.v[i].conn != s->conn)
            rc = conn_apply_vars(s->pins.v[i].conn, &v->conn, err);
    return rc;
}

/* Try v where the session's statements would meet it: on the open
 * transaction's connection (where it now applies), else on one server,
 * whose connection keeps them for the session's next statement; then on
 * the pinned connections. */
static int vars_check(dal_session_t *s, const session_vars_t *v, int *no_backslash,
                      dal_error_t *err)
{
    dal_snapshot_t *snap;
    dal_node_t *node;
    dal_conn_t *c = NULL;
    int reused, rc;

    if (s->conn != NULL) {
        rc = conn_apply_vars(s->conn, &v->conn, err);
        *no_backslash = s->conn->no_backslash_escapes;
        return rc != 0 ? rc : vars_pinned(s, v, err);
    }
    snap = snapshot_acquire(s->dal);
    node = snap->default_node ? snap->default_node : snap->nnodes ? snap->nodes[0] : NULL;
    if (node == NULL) {
        snapshot_unref(snap);
        return 0; /* nowhere to ask: the first statement will tell */
    }
    pool_set_vars(&v->conn);
    rc = server_acquire(&node->master, &c, &reused, err);
    pool_set_vars(NULL);
    if (rc == 0) {
        *no_backslash = c->no_backslash_escapes;
        server_release(&node->master, c, 1);
    }
    snapshot_unref(snap);
    return rc != 0 ? rc : vars_pinned(s, v, err);
}

/* next (transferred) checked (vars_check) and made the session's. */
static int vars_commit(dal_session_t *s, session_vars_t *next, dal_error_t *err)
{
    int nb = s->no_backslash, rc = vars_build(next);

    if (rc != 0) {
        vars_free(next);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    if ((rc = vars_check(s, next, &nb, err)) != 0) {
        vars_free(next);
        return rc;
    }
    s->no_backslash = nb;
    vars_free(&s->vars);
    s->vars = *next;
    /* conn pointed into next's strings, which the session now owns */
    s->vars.conn.set_sql = s->vars.set_sql;
    s->vars.conn.names = s->vars.charset;
    return 0;
}

int dal_session_set_var(dal_session_t *s, const char *name, const char *value_sql, dal_error_t *err)
{
    char lower[65];
    session_vars_t next;
    size_t i;
    int rc;

    if (s == NULL || name == NULL || value_sql == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_set_var: NULL argument");
    if (!vars_name_ok(name))
        return err_set(err, DAL_EINVAL, "session variable '%s': not a variable name", name);
    for (i = 0; name[i]; i++)
        lower[i] = (char)tolower((unsigned char)name[i]);
    lower[i] = '\0';
    if (strcmp(lower, "autocommit") == 0)
        return set_autocommit(s, value_sql, err);
    if (strcmp(lower, "dal_transaction_mode") == 0)
        return set_txn_mode(s, value_sql, err);
    if (value_sql[0] == '\0')
        return err_set(err, DAL_EINVAL, "session variable %s: empty value", lower);
    if (strcmp(lower, "character_set_client") == 0 &&
        (rc = charset_check_value(value_sql, err)) != 0)
        return rc;
    if (vars_copy(&s->vars, &next) != 0) {
        vars_free(&next);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    if (strcmp(lower, "names") == 0) {
        rc = vars_names(&next, value_sql, err);
        if (rc != 0) {
            vars_free(&next);
            return rc;
        }
    } else {
        rc = vars_put(&next, lower, value_sql);
    }
    if (rc != 0) {
        vars_free(&next);
        return err_set(err, DAL_ENOMEM, "out of memory");
    }
    return vars_commit(s, &next, err);
}

unsigned int dal_session_status(const dal_session_t *s)
{
    unsigned int st;

    if (s == NULL)
        return 0;
    st = s->manual ? 0 : SERVER_STATUS_AUTOCOMMIT;
    if (s->no_backslash)
        st |= SERVER_STATUS_NO_BACKSLASH_ESCAPES;
    if (s->in_txn)
        st |= SERVER_STATUS_IN_TRANS | (s->read_only ? SERVER_STATUS_IN_TRANS_READONLY : 0);
    else if (pins_xa(&s->pins) != NULL)
        st |= SERVER_STATUS_IN_TRANS; /* the server's XA transaction, until XA COMMIT / ROLLBACK */
    return st;
}

int dal_session_no_backslash_escapes(const dal_session_t *s)
{
    return s != NULL && s->no_backslash;
}

int dal_session_prepare_len(dal_session_t *s, const char *sql, size_t len,
                            dal_prepared_t **out, dal_error_t *err)
{
    if (s == NULL)
        return prepare_text("dal_session_prepare_len", NULL, sql, len, 0, out, err);
    return prepare_text("dal_session_prepare_len", s->dal, sql, len, s->no_backslash, out, err);
}

unsigned int dal_new_session_status(const dal_t *dal)
{
    (void)dal; /* the servers' global sql_mode is the process's (conn.h) */
    return SERVER_STATUS_AUTOCOMMIT |
           (conn_global_no_backslash() ? SERVER_STATUS_NO_BACKSLASH_ESCAPES : 0u);
}

/* ------------------------------------------------------------ sessions */

int dal_session_open(dal_t *dal, dal_session_t **out, dal_error_t *err)
{
    dal_session_t *s;

    if (out == NULL || dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_open: NULL argument");
    s = calloc(1, sizeof *s);
    *out = s;
    if (s == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    s->dal = dal;
    s->mode = -1;
    s->no_backslash = handle_global_no_backslash(dal); /* until an OK says else */
    cancel_init(&s->cancel);
    snap_slot_open(dal, &s->slot);
    return 0;
}

/* Leave the transaction: give the connection back, drop the snapshot. */
static void end_txn(dal_session_t *s, int reusable)
{
    dal_pin_t *pin;

    if (s->conn != NULL && s->conn_pinned) {
        /* the pin keeps it, unless it died with the transaction */
        if (!reusable && (pin = pins_find(&s->pins, s->node)) != NULL)
            pins_lost(pin);
    } else if (s->conn != NULL) {
        /* each statement noted what it left (exec_on_conn, conn_take_gtid):
         * the release resets the connection only if something was */
        server_release(s->server, s->conn, reusable);
    }
    s->conn_pinned = 0;
    if (s->snap_lent)
        s->lend_ended = 1;
    else
        snap_slot_give(s->dal, &s->slot, s->snap);
    s->snap_lent = 0;
    s->conn = NULL;
    s->node = NULL;
    s->server = NULL;
    s->snap = NULL;
    s->in_txn = 0;
    s->read_only = 0;
    s->wrote = 0;
    s->write_node = NULL;
}

/* A committed transaction on a master: its writes are to be read back, by
 * the GTID the COMMIT got, or (without one) by the master itself. */
static void note_commit(dal_session_t *s)
{
    dal_gtid_t g;

    if (s->server->replica >= 0)
        return;
    if (conn_take_gtid(s->conn, &g))
        ryw_note(&s->ryw, s->node, &g);
    else if (s->wrote && !s->conn->track_gtid)
        ryw_note(&s->ryw, s->node, NULL);
}

/* COMMIT (commit != 0) or ROLLBACK of a single-mode transaction's other
 * nodes, if it has any. */
static int end_reads(dal_session_t *s, int commit, dal_error_t *err)
{
    int rc = 0;

    if (s->reads != NULL && commit)
        rc = txn_commit(s->reads, err);
    else if (s->reads != NULL)
        txn_rollback(s->reads);
    s->reads = NULL;
    return rc;
}

/* Send COMMIT or ROLLBACK on the transaction's connection; *reusable
 * cleared when it failed. */
static int end_first(dal_session_t *s, const char *word, int *reusable, dal_error_t *err)
{
    int rc = 0;

    if (s->conn != NULL && mysql_real_query(&s->conn->mysql, word, strlen(word)) != 0) {
        rc = conn_error(s->conn, DAL_ESERVER, err);
        *reusable = 0;
        return rc;
    }
    if (s->conn != NULL && strcmp(word, "COMMIT") == 0)
        note_commit(s);
    if (s->conn != NULL && mysql_warning_count(&s->conn->mysql) > 0) {
        s->end_warnings += mysql_warning_count(&s->conn->mysql);
        warnings_read(&s->end_warns, &s->conn->mysql, mysql_warning_count(&s->conn->mysql));
    }
    return rc;
}

/* End the transaction on every node.  In single mode the node written on
 * commits first and decides; the nodes only read end after it. */
static int finish(dal_session_t *s, const char *word, dal_error_t *err)
{
    int rc = 0, reusable = 1, commit = strcmp(word, "COMMIT") == 0;

    warnings_free(s->end_warns);
    s->end_warns = NULL;
    s->end_warnings = 0;
    if (!s->in_txn)
        return 0; /* as in MySQL: nothing to end is not an error */
    if (s->txn != NULL) {
        txn_keep_warnings(s->txn, &s->end_warnings, &s->end_warns);
        if (commit)
            rc = txn_commit(s->txn, err);
        else
            txn_rollback(s->txn);
        s->txn = NULL;
        end_txn(s, 1);
        return rc;
    }
    if (s->write_node != NULL && s->write_node != s->node) {
        rc = end_reads(s, commit, err);
        end_first(s, rc == 0 ? word : "ROLLBACK", &reusable, NULL);
    } else {
        rc = end_first(s, word, &reusable, err);
        end_reads(s, commit && rc == 0, NULL);
    }
    end_txn(s, reusable);
    return rc;
}

/* xa needs the decision log in the running configuration. */
static int mode_check(dal_session_t *s, int mode, dal_error_t *err)
{
    dal_snapshot_t *snap;
    int ok;

    if (mode != DAL_TXN_XA)
        return 0;
    snap = snapshot_acquire(s->dal);
    ok = snap->cfg->xa_log != NULL;
    snapshot_unref(snap);
    return ok ? 0 : err_set(err, DAL_ECONFIG, "transaction mode xa needs [dal] xa_log = "
                                              "DATASOURCE (where the commit decisions are kept)");
}

/* mode -1: the session's, else [dal] transaction_mode. */
static int begin(dal_session_t *s, int read_only, int mode, dal_error_t *err)
{
    int rc;

    if (s == NULL)
        return err_set(err, DAL_EINVAL, "dal_begin: NULL session");
    if (s->in_txn)
        return err_set(err, DAL_ESTATE, "a transaction is already open (commit or roll it "
                                            "back first)");
    if (mode < 0)
        mode = s->mode;
    if (mode > DAL_TXN_XA || (mode >= 0 && (rc = mode_check(s, mode, err)) != 0))
        return mode > DAL_TXN_XA ? err_set(err, DAL_EINVAL, "unknown transaction mode %d", mode)
                                 : rc;
    s->snap = snap_slot_take(s->dal, &s->slot);
    if (mode < 0)
        mode = s->snap->cfg->transaction_mode;
    if (mode != DAL_TXN_SINGLE &&
        (rc = txn_open(s->snap, (dal_txn_mode_t)mode, read_only, &s->pins, &s->ryw, &s->txn,
                       err)) != 0) {
        snap_slot_give(s->dal, &s->slot, s->snap);
        s->snap = NULL;
        return rc;
    }
    s->in_txn = 1;
    s->read_only = read_only;
    return 0;
}

int dal_begin(dal_session_t *s, dal_error_t *err)
{
    return begin(s, 0, -1, err);
}

int dal_begin_read_only(dal_session_t *s, dal_error_t *err)
{
    return begin(s, 1, -1, err);
}

int dal_begin_mode(dal_session_t *s, dal_txn_mode_t mode, dal_error_t *err)
{
    return begin(s, 0, (int)mode, err);
}

int dal_commit(dal_session_t *s, dal_error_t *err)
{
    return s ? finish(s, "COMMIT", err) : err_set(err, DAL_EINVAL, "NULL session");
}

int dal_rollback(dal_session_t *s, dal_error_t *err)
{
    return s ? finish(s, "ROLLBACK", err) : err_set(err, DAL_EINVAL, "NULL session");
}

int dal_in_transaction(const dal_session_t *s)
{
    return s != NULL && s->in_txn;
}

const char *dal_transaction_datasource(const dal_session_t *s)
{
    if (s != NULL && s->txn != NULL)
        return txn_first_datasource(s->txn);
    if (s != NULL && s->write_node != NULL)
        return s->write_node->cfg->name;
    return s != NULL && s->node != NULL ? s->node->cfg->name : NULL;
}

/* The transaction rolled back, the pinned connections back to their
 * pools (reset there), the variables gone. */
static void session_clear(dal_session_t *s)
{
    finish(s, "ROLLBACK", NULL);
    pins_release(&s->pins);
    vars_free(&s->vars);
    s->manual = 0;
    s->no_backslash = handle_global_no_backslash(s->dal); /* until an OK says else */
}

void dal_session_close(dal_session_t *s)
{
    if (s == NULL)
        return;
    session_clear(s);
    snap_slot_close(s->dal, &s->slot);
    cancel_destroy(&s->cancel);
    warnings_free(s->end_warns);
    warnings_free(s->failed);
    free(s);
}

static int pin_txn_conn(dal_session_t *s, unsigned int pins, dal_error_t *err);

/* Select name, a database of snap's server_node, on the session's pin
 * there; an open transaction's connection there becomes that pin. */
static int server_db_use(dal_session_t *s, dal_snapshot_t *snap, const char *name, dal_error_t *err)
{
    int rc;

    if (s->in_txn && s->conn != NULL && !s->conn_pinned && s->server->replica < 0 &&
        strcmp(s->node->cfg->name, snap->server_node->cfg->name) == 0 &&
        (rc = pin_txn_conn(s, DAL_PIN_SCHEMA, err)) != 0)
        return rc;
    pool_set_vars(session_conn_vars(s)); /* its 1049 in the session's lc_messages */
    rc = server_db_select(&s->pins, snap, name, err);
    pool_set_vars(NULL);
    return rc;
}

/* Before a statement in a server database: it is selected on the
 * session's pin (a reset or a lost connection gave the pin back; none
 * cannot be selected again: the session goes on at the top level). */
static int server_db_hold(dal_session_t *s, dal_error_t *err)
{
    dal_snapshot_t *snap = snapshot_acquire(s->dal);
    int rc = 0;

    /* without server_schemas now, routing refuses the statement */
    if (snap->server_node != NULL && server_db_pin(&s->pins, snap) == NULL)
        rc = s->schema[0] ? server_db_use(s, snap, s->schema, err) : (s->server_db = 0);
    snapshot_unref(snap);
    return rc;
}

/* The session leaves its server database for schema ("": the top level). */
static void server_db_out(dal_session_t *s, const char *schema)
{
    server_db_leave(&s->pins, s->conn_pinned ? s->conn : NULL);
    s->server_db = 0;
    memcpy(s->schema, schema, strlen(schema) + 1);
}

int dal_session_use_schema(dal_session_t *s, const char *name, dal_error_t *err)
{
    dal_snapshot_t *snap;
    int known, rc = 0;

    if (s == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_use_schema: NULL session");
    if (name == NULL || name[0] == '\0') {
        server_db_out(s, "");
        return 0;
    }
    if (strlen(name) >= sizeof s->schema)
        return err_set(err, DAL_EINVAL, "schema name '%.64s...' is too long", name);
    snap = snapshot_acquire(s->dal);
    known = snapshot_schema_known(snap, name);
    if (!known && snap->server_node == NULL)
        rc = err_set(err, DAL_EINVAL, "unknown schema '%.64s' (not a [schema] section, and "
                     "[dal] server_schemas is none)", name);
    else if (!known)
        rc = server_db_use(s, snap, name, err);
    snapshot_unref(snap);
    if (rc != 0)
        return rc;
    if (known)
        server_db_out(s, name);
    s->server_db = !known;
    memcpy(s->schema, name, strlen(name) + 1);
    return 0;
}

const char *dal_session_schema(const dal_session_t *s)
{
    return s != NULL && s->schema[0] ? s->schema : NULL;
}

int dal_session_no_database(const dal_session_t *s)
{
    return s != NULL && s->server_db && s->schema[0] == '\0';
}

int dal_session_reset(dal_session_t *s, dal_error_t *err)
{
    if (s == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_reset: NULL session");
    /* a connection whose status counters the client reads, or in no
     * database, is reset in place and stays: the counters restart at 0
     * there, and the database stays none, as on a server */
    finish(s, "ROLLBACK", NULL);
    pins_reset(&s->pins, DAL_PIN_SESSION_STATUS |
                             (dal_session_no_database(s) ? DAL_PIN_SCHEMA : 0u));
    vars_free(&s->vars);
    s->manual = 0;
    s->no_backslash = handle_global_no_backslash(s->dal);
    return 0;
}

size_t dal_session_pinned(const dal_session_t *s)
{
    return s != NULL ? pins_count(&s->pins) : 0;
}

/* Open the transaction on srv: on the connection pinned there (a pinned
 * node's is its master's), else on one taken now, and start it there. */
static int start_on(dal_session_t *s, dal_server_t *srv, dal_error_t *err)
{
    const char *start = s->read_only ? "START TRANSACTION READ ONLY" : "START TRANSACTION";
    dal_pin_t *pin = pins_find(&s->pins, srv->node);
    int reused, rc = 0;
    unsigned int e;

    if (pin != NULL) {
        srv = &srv->node->master;
        s->conn = pin->conn;
        s->conn_pinned = 1;
    } else if ((rc = server_acquire(srv, &s->conn, &reused, err)) != 0) {
        if (rc == DAL_ECONNECT)
            server_lost(srv, err ? err->message : "cannot connect");
        return rc;
    }
    if (mysql_real_query(&s->conn->mysql, start, strlen(start)) != 0) {
        e = mysql_errno(&s->conn->mysql);
        rc = conn_error(s->conn, DAL_ESERVER, err);
        if (e >= CR_MIN_ERROR && e <= CR_MAX_ERROR)
            server_lost(srv, mysql_error(&s->conn->mysql));
        if (pin != NULL && e >= CR_MIN_ERROR && e <= CR_MAX_ERROR)
            pins_lost(pin);
        else if (pin == NULL)
            server_release(srv, s->conn, 0);
        s->conn = NULL;
        s->conn_pinned = 0;
        return rc;
    }
    s->node = srv->node;
    s->server = srv;
    return 0;
}

/* The first statement of a transaction fixes its server.  Nothing has run
 * yet, so a read-only one that cannot start on its replica starts on
 * another server instead. */
static int start_first(dal_session_t *s, dal_server_t *srv, dal_error_t *err)
{
    dal_server_t *next;
    int rc = start_on(s, srv, err);

    if (rc != 0 && s->read_only && (next = select_failover(srv)) != NULL)
        rc = start_on(s, next, err);
    return rc;
}

/* A statement of the transaction that leaves session state (pins): the
 * transaction's connection becomes a pin (it stays after COMMIT), or
 * notes the new state if it is one.  A replica's cannot: later
 * statements, writes too, would run there. */
static int pin_txn_conn(dal_session_t *s, unsigned int pins, dal_error_t *err)
{
    dal_pin_t *pin;
    int rc = 0;

    if (s->conn_pinned) {
        if ((pin = pins_find(&s->pins, s->node)) != NULL)
            pin->reasons |= pins;
        return 0;
    }
    if (s->server->replica >= 0)
        return err_set(err, DAL_EUNSUPPORTED,
                       "a read-only transaction on a replica cannot keep session state (user "
                       "variables, temporary tables, locks): the session would stay on the "
                       "replica; run it in a read-write transaction or outside one");
    rc = pins_add(&s->pins, s->snap, s->node, s->conn, pins, &pin, err);
    if (rc == 0)
        s->conn_pinned = 1;
    return rc;
}

/* Connections of a multi or xa transaction's statement, on the stack when
 * it has few routes. */
#define TXN_ROUTES_INLINE 8

/* The branch connection of each route of rt into held (started now on a
 * node the transaction had not touched). */
static int txn_held(dal_session_t *s, const dal_routing_t *rt, dal_conn_t **held, dal_error_t *err)
{
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < rt->nroutes; i++)
        rc = txn_conn(s->txn, rt->routes[i].node, &held[i], err);
    return rc;
}

/* A statement of a multi or xa transaction: each route on its node's
 * branch, several merged as outside a transaction.  A statement that
 * would start pinning is refused: the pin would outlive the branch. */
static int run_in_multi(dal_session_t *s, dal_stmt_t *st, dal_result_t **out, dal_error_t *err)
{
    const dal_routing_t *rt = &st->rt;
    dal_conn_t *held_inl[TXN_ROUTES_INLINE], **held;
    size_t i;
    int rc, lost = 0;

    if (rt->sql->pins && (rt->nroutes != 1 || !pins_find(&s->pins, rt->routes[0].node)))
        return err_set(err, DAL_EUNSUPPORTED,
                       "user variables, temporary tables and locks cannot start inside a "
                       "multi or xa transaction; set them up before it");
    held = small_alloc(held_inl, TXN_ROUTES_INLINE, rt->nroutes, sizeof *held, 1);
    if (held == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = txn_held(s, rt, held, err);
    if (rc == 0)
        rc = exec_routes_on(rt, held, st->params, st->nparams, &st->spec, out, err);
    for (i = 0; rc < 0 && i < rt->nroutes; i++)
        if (held[i] != NULL && exec_conn_lost(held[i])) {
            txn_lost(s->txn, rt->routes[i].node);
            lost = 1;
        }
    small_free(held, held_inl);
    if (lost) {
        /* the server rolled that branch back: the others follow */
        err_prefix(err, "transaction aborted (rolled back on every node)");
        finish(s, "ROLLBACK", NULL);
    }
    return rc;
}

/* The distinct datasources of rt's routes (several tables of one
 * datasource are one): their number, and their names ("ds0, ds1") into
 * out. */
static size_t route_datasources(const dal_routing_t *rt, char *out, size_t cap)
{
    size_t i, j, n = 0, len = 0;

    out[0] = '\0';
    for (i = 0; i < rt->nroutes; i++) {
        for (j = 0; j < i && rt->routes[j].node != rt->routes[i].node; j++)
            ;
        if (j < i)
            continue;
        if (len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", n > 0 ? ", " : "",
                                    rt->routes[i].node->cfg->name);
        n++;
    }
    return n;
}

/* A statement that only reads (no write, no session state left): it may
 * run on any node of a single-mode transaction. */
static int reads_only(const dal_sql_t *sql)
{
    return (sql->kind == DAL_SQL_SELECT || sql->kind == DAL_SQL_SHOW) && !sql->pins;
}

/* A statement that may change rows (not a SELECT or SHOW). */
static int writes(const dal_sql_t *sql)
{
    return sql->kind != DAL_SQL_SELECT && sql->kind != DAL_SQL_SHOW;
}

/* A single-mode transaction writes on one datasource: the statement's only
 * one, and the one it wrote on before. */
static int check_write(const dal_session_t *s, const dal_routing_t *rt, dal_error_t *err)
{
    char names[256];
    size_t n = rt->nroutes == 1 ? 1 : route_datasources(rt, names, sizeof names);

    if (n != 1)
        return err_set(err, DAL_EROUTE,
                       "a transaction writes on one datasource (transaction_mode single), but "
                       "this statement goes to %zu datasources: %s%s%s (the transaction is "
                       "still open)", n, names, s->write_node ? "; the transaction writes on " : "",
                       s->write_node ? s->write_node->cfg->name : "");
    if (s->write_node != NULL && rt->routes[0].node != s->write_node)
        return err_set(err, DAL_EROUTE,
                       "the transaction writes on datasource %s, but this statement writes on %s "
                       "(transaction_mode single; the transaction is still open)",
                       s->write_node->cfg->name, rt->routes[0].node->cfg->name);
    return 0;
}

/* The connection of each route of rt into held: the transaction's own on
 * its first node, else that node's transaction in s->reads (begun now on
 * its first statement there). */
static int single_held(dal_session_t *s, const dal_routing_t *rt, dal_conn_t **held,
                       dal_error_t *err)
{
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < rt->nroutes; i++) {
        if (rt->routes[i].node == s->node) {
            held[i] = s->conn;
            continue;
        }
        if (s->reads == NULL)
            rc = txn_open(s->snap, DAL_TXN_SINGLE, s->read_only, &s->pins, &s->ryw, &s->reads,
                          err);
        if (rc == 0)
            rc = txn_conn(s->reads, rt->routes[i].node, &held[i], err);
    }
    return rc;
}

/* A statement of a single-mode transaction that goes beyond its first
 * node: each route on its node's transaction, several merged as outside
 * a transaction.  A connection that dies takes the transaction along. */
static int run_across(dal_session_t *s, dal_stmt_t *st, dal_result_t **out, dal_error_t *err)
{
    const dal_routing_t *rt = &st->rt;
    dal_conn_t *held_inl[TXN_ROUTES_INLINE], **held;
    size_t i;
    int rc, lost = 0;

    if (rt->sql->pins)
        return err_set(err, DAL_EUNSUPPORTED,
                       "user variables, temporary tables and locks in a transaction go to its "
                       "first datasource, %s", s->node->cfg->name);
    held = small_alloc(held_inl, TXN_ROUTES_INLINE, rt->nroutes, sizeof *held, 1);
    if (held == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = single_held(s, rt, held, err);
    if (rc == 0)
        rc = exec_routes_on(rt, held, st->params, st->nparams, &st->spec, out, err);
    for (i = 0; rc < 0 && i < rt->nroutes; i++)
        lost |= held[i] != NULL && exec_conn_lost(held[i]);
    small_free(held, held_inl);
    if (rc == 0 && writes(rt->sql)) {
        s->write_node = rt->routes[0].node;
        if (s->write_node == s->node)
            s->wrote = 1;
        else
            txn_wrote(s->reads, s->write_node);
    }
    if (lost) {
        /* that node's server rolled its part back: the others follow */
        err_prefix(err, "transaction aborted (rolled back on every node)");
        finish(s, "ROLLBACK", NULL);
    }
    return rc;
}

/* A statement of a single-mode transaction: a write on the one node it
 * writes on, a read on any; on its first node's connection when it goes
 * there alone. */
static int run_in_txn(dal_session_t *s, dal_stmt_t *st, dal_result_t **out, dal_error_t *err)
{
    const dal_routing_t *rt = &st->rt;
    unsigned int pins;
    int broken = 0, rc;

    if (!reads_only(rt->sql) && (rc = check_write(s, rt, err)) != 0)
        return rc;
    if (s->node == NULL && (rc = start_first(s, route_server(&rt->routes[0]), err)) != 0)
        return rc;
    if (rt->nroutes != 1 || rt->routes[0].node != s->node)
        return run_across(s, st, out, err);
    /* (XA START in a started transaction: the server refuses it, 1400) */
    pins = rt->sql->pins & ~(unsigned int)DAL_PIN_XA;
    if (pins && (rc = pin_txn_conn(s, pins, err)) != 0)
        return rc;
    rc = exec_on_conn(rt, s->conn, st->params, st->nparams, out, &broken, err);
    if (rc == 0 && writes(rt->sql)) {
        s->wrote = 1;
        s->write_node = s->node;
    }
    if (broken) {
        /* the server rolled the transaction back when the connection died */
        err_prefix(err, "transaction aborted (rolled back by the server)");
        end_reads(s, 0, NULL);
        end_txn(s, 0);
    }
    return rc;
}

/* BEGIN / COMMIT / ROLLBACK written as SQL. */
static int txn_statement(void *owner, const dal_sql_t *sql, dal_result_t **out, dal_error_t *err)
{
    dal_session_t *s = owner;
    dal_sql_kind_t k = sql->kind;
    const char *hm = sql_hint_value(sql, "transaction_mode");
    int rc, mode = hm != NULL ? mode_word(hm) : -1;

    /* inside the client's XA transaction they are the server's (pin.h) */
    if (!s->in_txn && (rc = pins_xa_txn_control(&s->pins, sql->text, out, err)) <= 0)
        return rc;
    /* BEGIN in a transaction commits it first, as on a server (clients
     * such as sysbench rely on it after a failed statement) */
    if (k == DAL_SQL_BEGIN && s->in_txn && (rc = dal_commit(s, err)) != 0)
        return rc;
    if (hm != NULL && k != DAL_SQL_BEGIN)
        return err_set(err, DAL_EINVAL, "dal hint transaction_mode goes on BEGIN or START "
                                        "TRANSACTION");
    if (hm != NULL && mode < 0)
        return err_set(err, DAL_EINVAL, "dal hint transaction_mode: '%s' is not single, multi "
                                        "or xa", hm);
    rc = k == DAL_SQL_BEGIN ? begin(s, sql->txn_read_only, mode, err)
         : k == DAL_SQL_COMMIT ? dal_commit(s, err) : dal_rollback(s, err);

    if (rc == 0 && (*out = result_new()) == NULL)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    if (rc == 0 && s->end_warnings > 0) {
        (*out)->warnings += s->end_warnings;
        warnings_move(&(*out)->warns, s->end_warns);
        s->end_warns = NULL;
        s->end_warnings = 0; /* reported: not again by the next BEGIN */
    }
    return rc;
}

/* A statement inside the transaction: on its connection; outside one, on
 * the pinned connections of its nodes (1 when it has none: the pools). */
static int run_held(void *owner, dal_snapshot_t *snap, dal_stmt_t *st, dal_result_t **out,
                    dal_error_t *err)
{
    dal_session_t *s = owner;

    if (s->txn != NULL)
        return run_in_multi(s, st, out, err);
    if (s->in_txn)
        return run_in_txn(s, st, out, err);
    return pins_run(&s->pins, snap, st, out, err);
}

/* Before a routed statement's servers are chosen: the session's own
 * @@autocommit (sysvar.h), then the pins' rules. */
static int check_routes(void *owner, dal_snapshot_t *snap, const dal_query_opts_t *opts,
                        dal_stmt_t *st, dal_error_t *err)
{
    dal_session_t *s = owner;
    int rc;

    /* with autocommit 0 every statement comes here (session_query's
     * holds), one reading @@autocommit outside a transaction too */
    if (s->manual && st->sql->reads_autocommit && (rc = sysvar_autocommit_off(st, err)) != 0)
        return rc;
    return pins_check(&s->pins, snap, opts, st, err);
}

/* How the session's next statement picks its server. */
static dal_select_t session_select(dal_session_t *s)
{
    dal_select_t sel = {.ryw = &s->ryw};

    if (s->in_txn && (!s->read_only || s->txn != NULL)) {
        sel.flags = DAL_SELECT_MASTER;
    } else if (s->in_txn) {
        /* the first statement picks the server as a read; the rest stay there */
        sel.flags = DAL_SELECT_READ;
        sel.fixed = s->server;
    }
    return sel;
}

/* The analysis of sql (a cache lookup): its kind, whether it makes a
 * temporary table and whether it reads no table (sql_reads_no_table).  0 or
 * the analysis error. */
static int kind_of(dal_session_t *s, dal_stmt_text_t sql, dal_sql_kind_t *k, int *temporary,
                   int *no_table, int *xa, dal_error_t *err)
{
    const dal_sql_t *an = sql.prepared;

    if (an == NULL &&
        (an = stmt_analyse(s->dal->sql_cache, sql.text, sql.len, sql.no_backslash, err)) == NULL)
        return err ? err->code : DAL_ESQL;
    *k = an->kind;
    *temporary = an->temporary;
    *no_table = sql_reads_no_table(an);
    *xa = an->xa;
    if (sql.prepared == NULL)
        sql_unref(an);
    return 0;
}

/* With autocommit 0, a statement outside a transaction opens one first, as
 * the server would: any but transaction control (which means what it
 * says), DDL (which the server commits anyway), SET/SHOW and a SELECT
 * that reads no table, or only information_schema's (a server opens its
 * transaction at a table's read or write: SELECT 1 leaves
 * @@in_transaction 0; the proxy's SHOW VARIABLES reads
 * information_schema).  A SELECT of a stored
 * function that reads a table names none and so opens none either.  In a
 * transaction, DDL (but of a temporary table) commits it first, as on a
 * server. */
static int implicit_txn(dal_session_t *s, dal_stmt_text_t sql, dal_error_t *err)
{
    dal_sql_kind_t k = DAL_SQL_OTHER;
    int temporary = 0, no_table = 0, xa = 0;
    int rc = kind_of(s, sql, &k, &temporary, &no_table, &xa, err);

    if (rc != 0)
        return rc;
    if (s->in_txn)
        return k == DAL_SQL_DDL && !temporary ? dal_commit(s, err) : 0;
    if ((rc = pins_xa_outside(&s->pins, xa, err)) != 0) /* with autocommit 0 (pin.h) */
        return rc;
    /* an XA statement is transaction control, and the statements of an
     * open XA transaction run in it (pin.h) */
    if (stmt_is_txn_control(k) || k == DAL_SQL_DDL || k == DAL_SQL_SET || k == DAL_SQL_SHOW ||
        no_table || xa || pins_xa(&s->pins) != NULL)
        return 0;
    return begin(s, 0, -1, err);
}

/* How a statement holds its snapshot: none of them writes a line that
 * every thread's statements write (the snapshot's reference count). */
typedef enum {
    HOLD_SLOT, /* outside a transaction: the session's slot's reference */
    HOLD_LENT, /* the transaction's reference, lent (its statement may end it) */
    HOLD_REF   /* a nested statement while the reference is lent: its own */
} snap_hold_t;

static dal_snapshot_t *stmt_snapshot(dal_session_t *s, snap_hold_t *hold)
{
    if (!s->in_txn) {
        *hold = HOLD_SLOT;
        return snap_slot_take(s->dal, &s->slot);
    }
    if (s->snap_lent || s->lend_ended) {
        *hold = HOLD_REF;
        snapshot_ref(s->snap);
        return s->snap;
    }
    *hold = HOLD_LENT;
    s->snap_lent = 1;
    return s->snap;
}

static void stmt_snapshot_done(dal_session_t *s, dal_snapshot_t *snap, snap_hold_t hold)
{
    if (hold == HOLD_REF) {
        snapshot_unref(snap);
        return;
    }
    if (hold == HOLD_LENT && !s->lend_ended) {
        s->snap_lent = 0; /* the transaction goes on and keeps it */
        return;
    }
    s->lend_ended = 0;
    snap_slot_give(s->dal, &s->slot, snap);
}

/* dal_session_query and dal_session_query_prepared. */
static inline int session_query(dal_session_t *s, const dal_query_opts_t *opts,
                                    dal_stmt_text_t sql, const dal_value_t *params, size_t nparams,
                                    dal_result_t **out, dal_error_t *err)
{
    dal_stmt_ctx_t ctx = {.cache = s->dal->sql_cache, .txn_control = txn_statement,
                          .run_held = run_held, .routed = check_routes, .owner = s};
    snap_hold_t hold;
    unsigned ticket;
    int rc;

    /* the caller's statement's alone, never one dal runs for it (a BEGIN) */
    ctx.relay = s->relay_armed ? s->relay : NULL;
    ctx.relay_ctx = s->relay_ctx;
    s->relay_armed = 0;
    if (s->server_db && (rc = server_db_hold(s, err)) != 0)
        return rc;
    /* a description runs nothing, so opens nothing */
    if ((s->in_txn || s->manual) && !(opts != NULL && opts->describe) &&
        (rc = implicit_txn(s, sql, err)) != 0)
        return rc;
    ctx.sel = session_select(s);
    /* with autocommit 0 check_routes sees each statement (@@autocommit) */
    ctx.holds = s->in_txn || s->pins.n > 0 || s->manual;
    ctx.txn_single = s->in_txn && s->txn == NULL;
    ctx.schema = s->schema[0] || s->server_db ? s->schema : NULL; /* "": no database */
    /* a reshard's switch holds writes; a transaction that began on the
     * layout it replaced cannot write on */
    if ((rc = fence_enter(s->dal, &s->slot.ungated, s->dal->sql_cache, sql, &ticket, err)) != 0)
        return rc;
    if (s->in_txn && (rc = fence_txn_check(s->dal, s->snap, s->dal->sql_cache, sql, err)) != 0) {
        fence_leave(s->dal, &s->slot.ungated, ticket);
        return rc;
    }
    ctx.snap = stmt_snapshot(s, &hold);
    pool_set_vars(session_conn_vars(s));
    cancel_set_current(&s->cancel);
    infile_set_current(s->has_infile ? &s->infile : NULL);
    warnings_want(s->keep_warnings, &s->failed);
    exec_keep_sets(s->keep_sets);
    rc = stmt_execute(&ctx, opts, sql, params, nparams, out, err);
    exec_keep_sets(0);
    fence_leave(s->dal, &s->slot.ungated, ticket);
    warnings_want(0, NULL);
    infile_set_current(NULL);
    cancel_set_current(NULL);
    pool_set_vars(NULL);
    stmt_snapshot_done(s, ctx.snap, hold);
    /* an OK's status is the server's state after the statement (rows
     * carry theirs at their end, read later) */
    if (rc == 0 && *out != NULL && dal_result_column_count(*out) == 0)
        s->no_backslash = (dal_result_server_status(*out) &
                           SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
    if (rc == 0 && *out != NULL)
        result_set_txn_status(*out, dal_session_status(s));
    /* the pin it ran on is now in no database, as the session */
    if (rc == 0 && s->server_db && s->schema[0] && server_db_drops(sql, s->schema))
        s->schema[0] = '\0';
    return rc;
}

DAL_API int dal_session_syntax_error(dal_session_t *s, const char *sql, size_t len,
                                     dal_error_t *err)
{
    snap_hold_t hold;
    dal_snapshot_t *snap;
    dal_node_t *node;

    if (s == NULL || sql == NULL || err == NULL ||
        (err->code != DAL_ESQL && err->code != DAL_EUNSUPPORTED))
        return err != NULL ? err->code : DAL_EINVAL;
    snap = stmt_snapshot(s, &hold);
    node = s->schema[0] ? snapshot_schema_node(snap, s->schema) : snap->default_node;
    if (node == NULL && snap->nnodes > 0)
        node = snap->nodes[0];
    /* the session's variables (sql_mode) as its statements have them */
    pool_set_vars(session_conn_vars(s));
    exec_syntax_error(node, sql, len, err);
    pool_set_vars(NULL);
    stmt_snapshot_done(s, snap, hold);
    return err->code;
}

/* ------------------------------------------- table locks over several nodes */

/* text on node, through the session (its pins), the result into *out (any
 * earlier one freed). */
static int lock_on(dal_session_t *s, const dal_node_t *node, const char *text, size_t len,
                   dal_result_t **out, dal_error_t *err)
{
    dal_query_opts_t o = {.datasource = node->cfg->name};
    dal_result_t *r = NULL;
    int rc = session_query(s, &o, (dal_stmt_text_t){text, NULL, len, s->no_backslash}, NULL, 0,
                           &r, err);

    if (rc == 0) {
        dal_result_free(*out);
        *out = r;
    }
    return rc;
}

/* UNLOCK TABLES on every node where the session holds table locks,
 * committing an open transaction first, as a server does; 1 when it holds
 * them on none (the statement then runs as any other). */
static int unlock_nodes(dal_session_t *s, dal_result_t **out, dal_error_t *err)
{
    size_t i;
    int rc = 1;

    for (i = 0; i < s->pins.n && rc == 1; i++)
        if (s->pins.v[i].conn != NULL && (s->pins.v[i].reasons & DAL_PIN_TABLE_LOCK))
            rc = s->in_txn ? dal_commit(s, err) : 0;
    if (rc != 0)
        return rc;
    rc = 1;
    for (i = 0; i < s->pins.n && rc >= 0; i++) {
        dal_pin_t *pin = &s->pins.v[i];
        if (pin->conn == NULL || !(pin->reasons & DAL_PIN_TABLE_LOCK))
            continue;
        pin->reasons &= ~(unsigned int)DAL_PIN_TABLE_LOCK;
        rc = lock_on(s, pin->node, "UNLOCK TABLES", 13, out, err);
    }
    return rc;
}

/* LOCK TABLES of a table on several nodes: on each node its physical
 * tables there (rewrite_lock_tables), on the session's pinned connections;
 * a node holding earlier locks and none of these is unlocked, as a new
 * LOCK TABLES releases the old locks on a server. */
static int lock_nodes(dal_session_t *s, dal_snapshot_t *snap, const dal_sql_t *an,
                      dal_result_t **out, dal_error_t *err)
{
    dal_buf_t text = {0};
    dal_pin_t *pin;
    size_t i;
    int rc = 0;

    for (i = 0; i < snap->nnodes && rc == 0; i++) {
        if ((rc = rewrite_lock_tables(snap, an, snap->nodes[i], &text, err)) != 0)
            break;
        pin = pins_find(&s->pins, snap->nodes[i]);
        if (text.len > 0)
            rc = lock_on(s, snap->nodes[i], text.data, text.len, out, err);
        else if (pin != NULL && pin->conn != NULL && (pin->reasons & DAL_PIN_TABLE_LOCK)) {
            pin->reasons &= ~(unsigned int)DAL_PIN_TABLE_LOCK;
            rc = lock_on(s, snap->nodes[i], "UNLOCK TABLES", 13, out, err);
        }
    }
    buf_free(&text);
    return rc;
}

/* LOCK TABLES and UNLOCK TABLES of tables spread over several nodes (a
 * statement of the session's own, without options or hints, starting with
 * LOCK or UNLOCK); 1 for any other statement.  As on a server, both
 * commit an open transaction first, and neither opens one with
 * autocommit 0. */
static int table_locks(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                       size_t len, dal_result_t **out, dal_error_t *err)
{
    const char *p = sql, *end = sql + len;
    const dal_sql_t *an;
    dal_snapshot_t *snap;
    dal_buf_t probe = {0};
    int rc = 1, manual = s->manual;

    while (p < end && isspace((unsigned char)*p))
        p++;
    if ((opts != NULL && (opts->datasource || opts->shard_value)) ||
        !((end - p >= 4 && strncasecmp(p, "LOCK", 4) == 0) ||
          (end - p >= 6 && strncasecmp(p, "UNLOCK", 6) == 0)) ||
        (an = stmt_analyse(s->dal->sql_cache, sql, len, s->no_backslash, NULL)) == NULL)
        return 1;
    *out = NULL;
    s->manual = 0;
    if (an->nhints == 0 && rewrite_is_unlock_tables(an)) {
        rc = unlock_nodes(s, out, err);
    } else if (an->nhints == 0 && s->schema[0] == '\0' && !s->server_db) {
        /* (in a [schema], LOCK TABLES runs as written on its default
         * datasource: route_check_opaque refuses one naming a table not
         * wholly there) */
        snap = snapshot_acquire(s->dal);
        rc = snap->nnodes > 0 ? rewrite_lock_tables(snap, an, snap->nodes[0], &probe, err) : 1;
        buf_free(&probe);
        if (rc == 0 && s->in_txn)
            rc = dal_commit(s, err);
        if (rc == 0)
            rc = lock_nodes(s, snap, an, out, err);
        snapshot_unref(snap);
    }
    s->manual = manual;
    sql_unref(an);
    if (rc < 0) {
        dal_result_free(*out);
        *out = NULL;
    }
    return rc;
}

/* dal_session_query and dal_session_query_len (named fn in an argument
 * error). */
static inline int session_query_text(const char *fn, dal_session_t *s,
                                     const dal_query_opts_t *opts, const char *sql, size_t len,
                                     const dal_value_t *params, size_t nparams,
                                     dal_result_t **out, dal_error_t *err)
{
    int rc = stmt_args_check(fn, s, sql, params, nparams, out, err);

    if (rc == 0 && nparams == 0 && !(opts != NULL && opts->describe))
        rc = table_locks(s, opts, sql, len, out, err);
    else if (rc == 0)
        rc = 1;
    if (rc != 1)
        return rc;
    s->relay_armed = s->relay != NULL; /* session_query disarms it */
    return session_query(s, opts, (dal_stmt_text_t){sql, NULL, len, s->no_backslash}, params,
                         nparams, out, err);
}

int dal_session_query(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                      const dal_value_t *params, size_t nparams, dal_result_t **out,
                      dal_error_t *err)
{
    return session_query_text("dal_session_query", s, opts, sql, sql != NULL ? strlen(sql) : 0,
                              params, nparams, out, err);
}

int dal_session_query_len(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                          size_t len, const dal_value_t *params, size_t nparams,
                          dal_result_t **out, dal_error_t *err)
{
    return session_query_text("dal_session_query_len", s, opts, sql, len, params, nparams, out,
                              err);
}

int dal_session_query_prepared(dal_session_t *s, const dal_query_opts_t *opts,
                               const dal_prepared_t *p, const dal_value_t *params,
                               size_t nparams, dal_result_t **out, dal_error_t *err)
{
    int rc = stmt_args_check("dal_session_query_prepared", s, p, params, nparams, out, err);

    /* a binary sink's statement (session_query disarms it) */
    s->relay_armed = rc == 0 && opts == NULL && s->relay != NULL;
    return rc != 0 ? rc
                   : session_query(s, opts, (dal_stmt_text_t){NULL, p->sql, 0, 0}, params, nparams,
                                   out, err);
}

int dal_session_exec(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                     const dal_value_t *params, size_t nparams, uint64_t *affected_rows,
                     dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = dal_session_query(s, opts, sql, params, nparams, &r, err);

    return result_drop(rc, r, affected_rows);
}

/* ------------------------------------------- SET evaluated by a server */

/* Read back names[0..n) where opts sends a statement naming no table, as
 * literals into next. */
static int read_back(dal_session_t *s, const dal_query_opts_t *opts, const char *const *names,
                     size_t n, session_vars_t *next, char **values, dal_error_t *err)
{
    dal_buf_t sql = {0};
    dal_result_t *r = NULL;
    char *lit;
    size_t i;
    int rc = 0;

    for (i = 0; i < n; i++)
        buf_printf(&sql, "%s@@session.%s", i ? ", " : "SELECT ", names[i]);
    if (!sql.oom && sql.len > 0)
        rc = session_query(s, opts, (dal_stmt_text_t){sql.data, NULL, sql.len, s->no_backslash},
                           NULL, 0, &r, err);
    else
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    buf_free(&sql);
    if (rc == 0 && (rc = dal_result_next(r, err)) == 1)
        rc = 0;
    else if (rc == 0)
        rc = err_set(err, DAL_ESERVER, "reading back the session variables: no row");
    for (i = 0; i < n && rc == 0; i++) {
        if ((lit = vars_literal(r, i)) == NULL || vars_put(next, names[i], lit) != 0)
            rc = err_set(err, DAL_ENOMEM, "out of memory");
        else if (charset_is_client_var(names[i], strlen(names[i])))
            rc = charset_check_value(lit, err);  /* the SET's own check is conn_charset_kept's */
        if (values != NULL && rc == 0)
            values[i] = lit;
        else
            free(lit);
    }
    dal_result_free(r);
    return rc;
}

/* Outside a transaction: the datasource where the session's SET and its
 * read-back both run, pinned (a pin taken now, for the call, sets *taken):
 * the one holding the user variables, else the one a statement naming no
 * table goes to.  Its name into ds. */
static int hold_node(dal_session_t *s, char *ds, size_t cap, int *taken, dal_error_t *err)
{
    dal_snapshot_t *snap = snapshot_acquire(s->dal);
    dal_pin_t *pin = pins_user_vars(&s->pins);
    dal_node_t *node = pin != NULL ? snapshot_node(snap, pin->node->cfg->name) : NULL;
    int rc = 0;

    if (node == NULL && pin == NULL)
        node = s->schema[0] ? snapshot_schema_node(snap, s->schema) : snap->default_node;
    if (node == NULL && pin == NULL && snap->nnodes > 0)
        node = snap->nodes[0];
    if (node == NULL)
        rc = err_set(err, DAL_EROUTE, "no datasource to evaluate SET on");
    if (rc == 0 && pins_find(&s->pins, node) == NULL) {
        pool_set_vars(session_conn_vars(s));
        rc = pins_take(&s->pins, snap, node, 0, &pin, err);
        pool_set_vars(NULL);
        *taken = rc == 0;
    }
    if (rc == 0)
        snprintf(ds, cap, "%s", node->cfg->name);
    snapshot_unref(snap);
    return rc;
}

int dal_session_set_eval(dal_session_t *s, const char *sql, size_t len,
                         const char *const *names, size_t n, char **values,
                         dal_result_t **out, dal_error_t *err)
{
    char ds[256] = "";
    dal_query_opts_t o = {.datasource = ds};
    session_vars_t next;
    dal_snapshot_t *snap;
    dal_node_t *node;
    dal_pin_t *pin;
    size_t i;
    int taken = 0, rc;

    if (s == NULL || sql == NULL || out == NULL || (n > 0 && names == NULL))
        return err_set(err, DAL_EINVAL, "dal_session_set_eval: NULL argument");
    *out = NULL;
    for (i = 0; i < n; i++)
        if (!vars_name_ok(names[i]))
            return err_set(err, DAL_EINVAL, "session variable '%s': not a variable name",
                           names[i]);
    if (!s->in_txn && (rc = hold_node(s, ds, sizeof ds, &taken, err)) != 0)
        return rc;
    if (vars_copy(&s->vars, &next) != 0)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    else
        rc = session_query(s, s->in_txn ? NULL : &o,
                           (dal_stmt_text_t){sql, NULL, len, s->no_backslash}, NULL, 0, out, err);
    if (rc == 0)
        rc = read_back(s, s->in_txn ? NULL : &o, names, n, &next, values, err);
    if (taken) {
        /* given back unless the SET pinned it (it set a user variable) */
        snap = snapshot_acquire(s->dal);
        node = snapshot_node(snap, ds);
        if (node != NULL && (pin = pins_find(&s->pins, node)) != NULL && pin->reasons == 0)
            pins_drop(&s->pins, pin);
        snapshot_unref(snap);
    }
    if (rc != 0) {
        vars_free(&next);
        dal_result_free(*out);
        *out = NULL;
        return rc;
    }
    return vars_commit(s, &next, err);
}
