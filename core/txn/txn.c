/*
 * txn.c -- transactions over several data nodes (see txn.h).
 *
 * multi: COMMIT runs on each branch in the order the branches began.  The
 * first failure stops it: the branches after it are rolled back, and if
 * some before it committed, or the failing COMMIT lost its connection (and
 * so may have committed), the error is DAL_EPARTIAL, naming the lists.
 *
 * xa: XA END + XA PREPARE on every branch, the 'C' decision in the log,
 * then XA COMMIT on every branch.  Before the decision any failure rolls
 * every branch back; after it the transaction is committed whatever
 * happens to the branches (recovery commits what is left).  One branch
 * needs no log: XA COMMIT ... ONE PHASE.
 *
 * single (the nodes a single-mode transaction reads besides its own): the
 * one branch that wrote, if any, commits first and decides; the others
 * only read, so their COMMIT can lose nothing.
 */
#include <errmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "error.h"
#include "events.h"
#include "log.h"
#include "pool.h"
#include "txn.h"
#include "warnings.h"
#include "xa.h"

typedef enum { B_ACTIVE, B_ENDED, B_PREPARED, B_DONE, B_LOST } branch_state_t;

typedef struct branch {
    dal_node_t *node;   /* borrowed from the snapshot */
    dal_conn_t *conn;   /* the pin's (borrowed) or taken from the master's pool (owned) */
    dal_pin_t *pin;     /* borrowed: the session's pin on node, or NULL */
    branch_state_t state;
    int wrote;          /* single: the branch ran a write */
} branch_t;

struct dal_txn {
    dal_snapshot_t *snap; /* borrowed */
    dal_txn_mode_t mode;
    int read_only;
    dal_pins_t *pins;     /* borrowed */
    dal_ryw_t *ryw;       /* borrowed */
    branch_t *b;          /* owned, in the order the branches began */
    size_t nb;
    const char *outcome;  /* static: what COMMIT did, for DAL_EVENT_TXN */
    char gtrid[XA_ID_MAX + 1]; /* xa: set by the first branch */
    uint64_t started_ns;       /* xa: when the first branch began */
    unsigned int *warn_count;  /* borrowed (txn_keep_warnings), or NULL */
    dal_warnings_t **warns;    /* borrowed, with warn_count */
};

/* The warnings of a statement that ended b's part (COMMIT, ROLLBACK, the
 * XA statements), for the session's COMMIT or ROLLBACK to answer with. */
static void end_warnings(dal_txn_t *t, const branch_t *b)
{
    unsigned int n;

    if (t->warn_count == NULL || b->conn == NULL ||
        (n = mysql_warning_count(&b->conn->mysql)) == 0)
        return;
    *t->warn_count += n;
    warnings_read(t->warns, &b->conn->mysql, n);
}

void txn_keep_warnings(dal_txn_t *t, unsigned int *count, dal_warnings_t **warns)
{
    t->warn_count = count;
    t->warns = warns;
}

static int is_client_error(unsigned e)
{
    return e >= CR_MIN_ERROR && e <= CR_MAX_ERROR;
}

/* sql on b's connection; a client error (connection gone) marks b lost. */
static int branch_sql(branch_t *b, const char *sql, dal_error_t *err)
{
    if (b->conn == NULL)
        return err_set(err, DAL_ECONNECT, "%s: the connection was lost", b->node->cfg->name);
    if (mysql_real_query(&b->conn->mysql, sql, strlen(sql)) == 0)
        return 0;
    if (is_client_error(mysql_errno(&b->conn->mysql)))
        b->state = B_LOST;
    return conn_error(b->conn, DAL_ESERVER, err);
}

/* The XA statement verb+tail for b. */
static int branch_xa(dal_txn_t *t, branch_t *b, const char *verb, const char *tail,
                     dal_error_t *err)
{
    char sql[200];

    int rc;

    xa_stmt(sql, sizeof sql, verb, t->gtrid, b->node->cfg->name, tail);
    if ((rc = branch_sql(b, sql, err)) == 0 && strcmp(verb, "START") != 0)
        end_warnings(t, b);
    return rc;
}

/* Give b's connection back: to the pin (lost with a dead connection), or
 * to the pool (closed unless b ended cleanly: a prepared XA branch must
 * survive as the server's, not be reset away). */
static void branch_release(branch_t *b)
{
    int clean = b->state == B_DONE;

    if (b->conn != NULL && b->pin != NULL) {
        if (!clean)
            pins_lost(b->pin);
    } else if (b->conn != NULL) {
        conn_mark_dirty(b->conn);
        server_release(&b->node->master, b->conn, clean);
    }
    b->conn = NULL;
}

/* DAL_EVENT_TXN for a transaction that touched a node, then free t. */
static void txn_free(dal_txn_t *t, int rc)
{
    size_t i;

    if (t->nb > 0 && t->mode != DAL_TXN_SINGLE)
        event_txn_emit(t->snap, t->mode == DAL_TXN_XA ? "xa" : "multi", t->outcome, t->nb, rc);

    for (i = 0; i < t->nb; i++)
        branch_release(&t->b[i]);
    free(t->b);
    free(t);
}

int txn_open(dal_snapshot_t *snap, dal_txn_mode_t mode, int read_only, dal_pins_t *pins,
             dal_ryw_t *ryw, dal_txn_t **out, dal_error_t *err)
{
    dal_txn_t *t = calloc(1, sizeof *t);

    *out = t;
    if (t == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    t->snap = snap;
    t->mode = mode;
    t->read_only = read_only;
    t->pins = pins;
    t->ryw = ryw;
    return 0;
}

/* START TRANSACTION or XA START on b's new connection. */
static int branch_start(dal_txn_t *t, branch_t *b, dal_error_t *err)
{
    const char *start = t->read_only ? "START TRANSACTION READ ONLY" : "START TRANSACTION";

    if (t->mode != DAL_TXN_XA)
        return branch_sql(b, start, err);
    if (strlen(b->node->cfg->name) > XA_ID_MAX)
        return err_set(err, DAL_EUNSUPPORTED,
                       "datasource %s: an XA branch is named after its datasource, and this "
                       "name is longer than %d bytes", b->node->cfg->name, XA_ID_MAX);
    if (t->gtrid[0] == '\0') {
        xa_new_gtrid(t->gtrid);
        t->started_ns = clock_now_ns();
    }
    return branch_xa(t, b, "START", "", err);
}

int txn_conn(dal_txn_t *t, dal_node_t *node, dal_conn_t **out, dal_error_t *err)
{
    branch_t *b, *nb;
    size_t i;
    int reused, rc;

    for (i = 0; i < t->nb; i++)
        if (t->b[i].node == node) {
            *out = t->b[i].conn;
            return t->b[i].conn != NULL ? 0
                                        : err_set(err, DAL_ECONNECT, "%s: the transaction's "
                                                  "connection was lost", node->cfg->name);
        }
    if ((nb = realloc(t->b, (t->nb + 1) * sizeof *nb)) == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    t->b = nb;
    b = &t->b[t->nb];
    memset(b, 0, sizeof *b);
    b->node = node;
    b->pin = pins_find(t->pins, node);
    if (b->pin != NULL && b->pin->conn != NULL) {
        b->conn = b->pin->conn;
    } else if ((rc = server_acquire(&node->master, &b->conn, &reused, err)) != 0) {
        if (rc == DAL_ECONNECT)
            server_lost(&node->master, err ? err->message : "cannot connect");
        return rc;
    }
    b->pin = b->conn != NULL && b->pin != NULL && b->pin->conn == b->conn ? b->pin : NULL;
    if ((rc = branch_start(t, b, err)) != 0) {
        /* refused by the server, nothing began: the connection is fine */
        if (b->state != B_LOST)
            b->state = B_DONE;
        branch_release(b);
        return rc;
    }
    t->nb++;
    *out = b->conn;
    return 0;
}

void txn_wrote(dal_txn_t *t, const dal_node_t *node)
{
    size_t i;

    for (i = 0; i < t->nb; i++)
        if (t->b[i].node == node)
            t->b[i].wrote = 1;
}

void txn_lost(dal_txn_t *t, const dal_node_t *node)
{
    size_t i;

    for (i = 0; i < t->nb; i++)
        if (t->b[i].node == node)
            t->b[i].state = B_LOST;
}

const char *txn_first_datasource(const dal_txn_t *t)
{
    return t != NULL && t->nb > 0 ? t->b[0].node->cfg->name : NULL;
}

/* A committed branch's writes are to be read back (as session.c's
 * note_commit for one node). */
static void branch_committed(dal_txn_t *t, branch_t *b)
{
    dal_gtid_t g;

    b->state = B_DONE;
    if (conn_take_gtid(b->conn, &g))
        ryw_note(t->ryw, b->node, &g);
    else if (!t->read_only && !b->conn->track_gtid)
        ryw_note(t->ryw, b->node, NULL);
}

/* ------------------------------------------------------------- rollback */

/* Roll b back whatever phase it is in; a dead connection took it along,
 * unless it was prepared (then recovery rolls it back). */
static void branch_rollback(dal_txn_t *t, branch_t *b)
{
    int rc = 0;

    if (b->state == B_LOST || b->state == B_DONE)
        return;
    if (t->mode != DAL_TXN_XA && (rc = branch_sql(b, "ROLLBACK", NULL)) == 0)
        end_warnings(t, b);
    else if (b->state == B_ACTIVE && (rc = branch_xa(t, b, "END", "", NULL)) == 0)
        b->state = B_ENDED;
    if (t->mode == DAL_TXN_XA && rc == 0)
        rc = branch_xa(t, b, "ROLLBACK", "", NULL);
    if (rc == 0)
        b->state = B_DONE;
}

void txn_rollback(dal_txn_t *t)
{
    size_t i;

    if (t == NULL)
        return;
    for (i = 0; i < t->nb; i++)
        branch_rollback(t, &t->b[i]);
    t->outcome = "rolled_back";
    txn_free(t, 0);
}

/* ----------------------------------------------------------------- multi */

/* "a, b" of the branches [from, to) into out. */
static void node_names(const dal_txn_t *t, size_t from, size_t to, char *out, size_t cap)
{
    size_t i, len = 0;

    out[0] = '\0';
    for (i = from; i < to && len + 1 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i > from ? ", " : "",
                                t->b[i].node->cfg->name);
    if (from == to)
        snprintf(out, cap, "none");
}

/* Branch i lost its connection during its COMMIT: the server may have
 * committed it before the connection went (a commit made durable, then
 * the server killed), or not; dal cannot tell.  Those before it are
 * committed and those after it rolled back, so the outcome is reported as
 * a possible partial commit, never as "nothing committed". */
static int commit_unknown(dal_txn_t *t, size_t i, const dal_error_t *e, dal_error_t *err)
{
    char done[160], after[160];

    t->outcome = "partial";
    node_names(t, 0, i, done, sizeof done);
    node_names(t, i + 1, t->nb, after, sizeof after);
    log_message(t->snap->log, DAL_LOG_ERROR, "txn",
                "commit outcome unknown on %s (%s); committed on %s; rolled back on %s",
                t->b[i].node->cfg->name, e->message, done, after);
    return err_set(err, DAL_EPARTIAL,
                   "partial commit possible: the connection to %s was lost during its COMMIT, "
                   "which may or may not have committed there; committed on %s; not committed "
                   "(rolled back) on %s: %s",
                   t->b[i].node->cfg->name, done, after, e->message);
}

static int commit_multi(dal_txn_t *t, dal_error_t *err)
{
    char done[160], not_done[160];
    dal_error_t e;
    size_t i, j;
    int rc = 0;

    for (i = 0; i < t->nb && rc == 0; i++)
        if ((rc = branch_sql(&t->b[i], "COMMIT", &e)) == 0) {
            end_warnings(t, &t->b[i]);
            branch_committed(t, &t->b[i]);
        }
    if (rc == 0)
        return 0;
    i--; /* the branch that failed */
    t->outcome = i == 0 ? "failed" : "partial";
    for (j = i + 1; j < t->nb; j++)
        branch_rollback(t, &t->b[j]);
    if (t->b[i].state == B_LOST)
        return commit_unknown(t, i, &e, err);
    if (i == 0) {
        if (err != NULL)
            *err = e;
        err_prefix(err, "COMMIT failed on %s, the first node; rolled back on every node",
                   t->b[0].node->cfg->name);
        return rc;
    }
    node_names(t, 0, i, done, sizeof done);
    node_names(t, i, t->nb, not_done, sizeof not_done);
    log_message(t->snap->log, DAL_LOG_ERROR, "txn",
                "partial commit: committed on %s; not committed on %s (%s)", done, not_done,
                e.message);
    return err_set(err, DAL_EPARTIAL,
                   "partial commit: committed on %s; not committed (rolled back) on %s: %s",
                   done, not_done, e.message);
}

/* ---------------------------------------------------------------- single */

/* The written branch's COMMIT decides; the reading ones end after it
 * (a failed COMMIT there leaves its connection to be closed). */
static int commit_single(dal_txn_t *t, dal_error_t *err)
{
    size_t i, w;
    int rc = 0;

    for (w = 0; w < t->nb && !t->b[w].wrote; w++)
        ;
    if (w < t->nb && (rc = branch_sql(&t->b[w], "COMMIT", err)) != 0) {
        for (i = 0; i < t->nb; i++)
            branch_rollback(t, &t->b[i]);
        err_prefix(err, "COMMIT failed on %s; the transaction is rolled back",
                   t->b[w].node->cfg->name);
        return rc;
    }
    if (w < t->nb) {
        end_warnings(t, &t->b[w]);
        branch_committed(t, &t->b[w]);
    }
    for (i = 0; i < t->nb; i++)
        if (i != w && branch_sql(&t->b[i], "COMMIT", NULL) == 0) {
            end_warnings(t, &t->b[i]);
            t->b[i].state = B_DONE;
        }
    return 0;
}

/* -------------------------------------------------------------------- xa */

/* A failure before the decision: every branch rolled back. */
static int xa_abort(dal_txn_t *t, int rc, dal_error_t *err, const char *what)
{
    size_t i;

    for (i = 0; i < t->nb; i++)
        branch_rollback(t, &t->b[i]);
    t->outcome = "failed";
    err_prefix(err, "XA %s: %s; the transaction is rolled back on every node", t->gtrid, what);
    return rc;
}

static int xa_prepare_all(dal_txn_t *t, dal_error_t *err)
{
    size_t i;
    int rc;

    for (i = 0; i < t->nb; i++) {
        if ((rc = branch_xa(t, &t->b[i], "END", "", err)) != 0)
            return rc;
        t->b[i].state = B_ENDED;
        if ((rc = branch_xa(t, &t->b[i], "PREPARE", "", err)) != 0)
            return rc;
        t->b[i].state = B_PREPARED;
    }
    return 0;
}

/* After the decision: commit each branch; what fails is recovery's. */
static void xa_commit_all(dal_txn_t *t)
{
    dal_error_t e;
    size_t i, left = 0;

    for (i = 0; i < t->nb; i++) {
        if (branch_xa(t, &t->b[i], "COMMIT", "", &e) == 0) {
            branch_committed(t, &t->b[i]);
            continue;
        }
        left++;
        log_message(t->snap->log, DAL_LOG_WARN, "txn",
                    "XA %s is committed, but XA COMMIT failed on %s (%s): recovery commits it",
                    t->gtrid, t->b[i].node->cfg->name, e.message);
    }
    if (left == 0)
        xa_log_forget(t->snap, t->gtrid);
}

static int commit_xa(dal_txn_t *t, dal_error_t *err)
{
    uint64_t age_ms;
    int rc, unknown;

    if (t->nb == 1) {
        if ((rc = branch_xa(t, &t->b[0], "END", "", err)) == 0)
            t->b[0].state = B_ENDED;
        if (rc == 0 && (rc = branch_xa(t, &t->b[0], "COMMIT", " ONE PHASE", err)) == 0)
            branch_committed(t, &t->b[0]);
        return rc == 0 ? 0 : xa_abort(t, rc, err, "one-phase commit failed");
    }
    if ((rc = xa_prepare_all(t, err)) != 0)
        return xa_abort(t, rc, err, "PREPARE failed");
    /* past xa_grace recovery may roll the branches back: do not decide */
    age_ms = (clock_now_ns() - t->started_ns) / 1000000;
    if (age_ms >= t->snap->cfg->xa_grace_ms / 2)
        return xa_abort(t, err_set(err, DAL_ESTATE, "the transaction ran %llu ms, more than half "
                                   "of [dal] xa_grace", (unsigned long long)age_ms),
                        err, "too late to decide");
    if ((rc = xa_log_commit(t->snap, t->gtrid, &unknown, err)) != 0 && !unknown)
        return xa_abort(t, rc, err, "the commit decision could not be written");
    if (rc != 0) {
        t->outcome = "in_doubt";
        xa_abandon(t->snap, t->gtrid);
        err_prefix(err, "XA %s: the commit decision may or may not have been written; every "
                   "branch is prepared, and recovery (dal xa recover) commits or rolls back all "
                   "of them", t->gtrid);
        return rc;
    }
    xa_commit_all(t);
    return 0;
}

int txn_commit(dal_txn_t *t, dal_error_t *err)
{
    int rc = 0;

    t->outcome = "committed";
    if (t->nb > 0)
        rc = t->mode == DAL_TXN_XA      ? commit_xa(t, err)
             : t->mode == DAL_TXN_MULTI ? commit_multi(t, err)
                                        : commit_single(t, err);
    txn_free(t, rc);
    return rc;
}
