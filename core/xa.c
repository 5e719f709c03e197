/*
 * xa.c -- global ids, the XA decision log and recovery (see xa.h).
 *
 * The log is one table in the [dal] xa_log datasource:
 *   dal_xa_log(gtrid PRIMARY KEY, decision 'C' or 'R', decided_at)
 * A coordinator inserts 'C' after every branch is prepared and before any
 * XA COMMIT; recovery inserts 'R' (INSERT IGNORE, then reads what is
 * there) before it rolls back a branch without a decision.  The primary
 * key makes the first of the two win, so a slow coordinator and a
 * recovery pass can never decide differently.
 *
 * Pruning must not forget a decision whose branches still exist:
 *  - 'C' rows decided before the pass read XA RECOVER everywhere had all
 *    their branches prepared then; none listed means all committed.
 *  - 'R' rows are kept two grace periods: a coordinator gives up deciding
 *    after half of one (txn.c), so it cannot insert 'C' once the 'R' is
 *    gone (assuming the hosts' clocks agree within half a grace period).
 */
#include <errmsg.h>
#include <inttypes.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dal_int.h"
#include "conn.h"
#include "error.h"
#include "events.h"
#include "pool.h"
#include "xa.h"

#define LOG_TABLE "dal_xa_log"
#define LEASE_TABLE "dal_xa_lease"
#define XA_PREFIX "dal:"

/* ------------------------------------------------------------ global ids */

static atomic_ulong xa_counter;

/* This host's name with only the characters an id may hold (and ':'
 * reserved as the separator), short enough for the whole id to fit. */
static void host_part(char *out, size_t cap)
{
    char host[256] = "host";
    size_t i, n = 0;

    gethostname(host, sizeof host - 1);
    for (i = 0; host[i] != '\0' && n + 1 < cap; i++) {
        char c = host[i];
        out[n++] = (char)((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                  (c >= '0' && c <= '9') || c == '-' || c == '.'
                              ? c
                              : '_');
    }
    out[n] = '\0';
}

void xa_new_gtrid(char *out)
{
    char host[21];

    host_part(host, sizeof host);
    /* getpid each time: a forked child is another instance */
    snprintf(out, XA_ID_MAX + 1, XA_PREFIX "%s:%ld:%lld:%lu", host, (long)getpid(),
             (long long)time(NULL), atomic_fetch_add(&xa_counter, 1) + 1);
}

void xa_stmt(char *out, size_t cap, const char *verb, const char *gtrid, const char *bqual,
             const char *tail)
{
    /* ids hold no quote: dal made the gtrid, bqual is a datasource name */
    snprintf(out, cap, "XA %s '%s','%s'%s", verb, gtrid, bqual, tail);
}

/* When gtrid began (its UNIXTIME field), or 0 when it is not dal's. */
static time_t gtrid_time(const char *gtrid)
{
    const char *p = gtrid + strlen(gtrid);
    int colons = 0;

    if (strncmp(gtrid, XA_PREFIX, strlen(XA_PREFIX)) != 0)
        return 0;
    while (p > gtrid && colons < 2)
        if (*--p == ':')
            colons++;
    return colons == 2 ? (time_t)strtoll(p + 1, NULL, 10) : 0;
}

/* -------------------------------------------------------- one statement */

/* Run sql on node's master, on a pooled connection; *res (if not NULL)
 * gets its stored result (owned by the caller).  *server_errno (if not
 * NULL) gets the error number, 0 when it ran.  A pooled connection found
 * dead (the server restarted) is replaced once: every statement here but
 * the decision's INSERT may run twice (xa_log_commit calls node_try). */
static int node_try(dal_node_t *node, const char *sql, MYSQL_RES **res, unsigned *server_errno,
                    int *reused, dal_error_t *err)
{
    dal_conn_t *c = NULL;
    int rc, ok = 1;

    if (server_errno != NULL)
        *server_errno = 0;
    if ((rc = server_acquire(&node->master, &c, reused, err)) != 0) {
        *reused = 0;
        if (server_errno != NULL)
            *server_errno = CR_CONNECTION_ERROR;
        return rc;
    }
    if (mysql_real_query(&c->mysql, sql, strlen(sql)) != 0 ||
        (res != NULL && (*res = mysql_store_result(&c->mysql)) == NULL &&
         mysql_errno(&c->mysql) != 0)) {
        if (server_errno != NULL)
            *server_errno = mysql_errno(&c->mysql);
        ok = mysql_errno(&c->mysql) < CR_MIN_ERROR || mysql_errno(&c->mysql) > CR_MAX_ERROR;
        rc = conn_error(c, DAL_ESERVER, err);
    }
    *reused = *reused && !ok;
    server_release(&node->master, c, ok);
    return rc;
}

static int node_sql(dal_node_t *node, const char *sql, MYSQL_RES **res, unsigned *server_errno,
                    dal_error_t *err)
{
    int retry = 0, rc = node_try(node, sql, res, server_errno, &retry, err);

    return rc != 0 && retry ? node_try(node, sql, res, server_errno, &retry, err) : rc;
}

static dal_node_t *log_node(dal_snapshot_t *snap, dal_error_t *err)
{
    dal_node_t *n;

    if (snap->cfg->xa_log == NULL) {
        err_set(err, DAL_ECONFIG, "no [dal] xa_log: the XA decision log's datasource is not set");
        return NULL;
    }
    if ((n = snapshot_node(snap, snap->cfg->xa_log)) == NULL)
        err_set(err, DAL_ECONFIG, "xa_log: no datasource %s", snap->cfg->xa_log);
    return n;
}

/* -------------------------------------------------------------- the log */

int xa_log_commit(dal_snapshot_t *snap, const char *gtrid, int *unknown, dal_error_t *err)
{
    char sql[160];
    unsigned e;
    dal_node_t *log = log_node(snap, err);
    int rc, reused;

    *unknown = 0;
    if (log == NULL)
        return DAL_ECONFIG;
    snprintf(sql, sizeof sql, "INSERT INTO " LOG_TABLE " (gtrid, decision) VALUES ('%s', 'C')",
             gtrid);
    rc = node_try(log, sql, NULL, &e, &reused, err);
    /* sent but no answer: the row may be there */
    *unknown = rc != 0 && e >= CR_MIN_ERROR && e <= CR_MAX_ERROR && e != CR_CONNECTION_ERROR &&
               e != CR_CONN_HOST_ERROR;
    if (rc != 0 && e == ER_DUP_ENTRY)
        return err_set(err, DAL_ESERVER,
                       "XA %s: recovery recorded a rollback first (the transaction took longer "
                       "than [dal] xa_grace)", gtrid);
    return rc;
}

void xa_log_forget(dal_snapshot_t *snap, const char *gtrid)
{
    char sql[160];
    dal_node_t *log = log_node(snap, NULL);

    snprintf(sql, sizeof sql, "DELETE FROM " LOG_TABLE " WHERE gtrid = '%s'", gtrid);
    if (log != NULL)
        node_sql(log, sql, NULL, NULL, NULL);
}

int dal_xa_init(dal_t *dal, dal_error_t *err)
{
    dal_snapshot_t *snap;
    dal_node_t *log;
    int rc;

    if (dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_xa_init: NULL handle");
    snap = snapshot_acquire(dal);
    log = log_node(snap, err);
    rc = log == NULL ? DAL_ECONFIG
                     : node_sql(log,
                                "CREATE TABLE IF NOT EXISTS " LOG_TABLE
                                " (gtrid VARBINARY(64) NOT NULL PRIMARY KEY,"
                                " decision CHAR(1) NOT NULL,"
                                " decided_at DATETIME(6) NOT NULL DEFAULT NOW(6)) ENGINE=InnoDB",
                                NULL, NULL, err);
    if (rc == 0)
        rc = node_sql(log,
                      "CREATE TABLE IF NOT EXISTS " LEASE_TABLE
                      " (id TINYINT NOT NULL PRIMARY KEY, owner VARBINARY(64) NOT NULL,"
                      " until DATETIME(6) NOT NULL) ENGINE=InnoDB",
                      NULL, NULL, err);
    snapshot_unref(snap);
    return rc;
}

int xa_lease_take(dal_snapshot_t *snap, const char *owner, uint64_t ms, int *held,
                  dal_error_t *err)
{
    char sql[512];
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    dal_node_t *log = log_node(snap, err);
    int rc;

    *held = 0;
    if (log == NULL)
        return DAL_ECONFIG;
    /* the assignments run left to right: until sees the new owner */
    snprintf(sql, sizeof sql,
             "INSERT INTO " LEASE_TABLE " (id, owner, until) VALUES (1, '%s', NOW(6) + INTERVAL "
             "%llu MICROSECOND) ON DUPLICATE KEY UPDATE"
             " owner = IF(until < NOW(6) OR owner = VALUES(owner), VALUES(owner), owner),"
             " until = IF(owner = VALUES(owner), VALUES(until), until)",
             owner, (unsigned long long)ms * 1000);
    if ((rc = node_sql(log, sql, NULL, NULL, err)) != 0)
        return rc;
    snprintf(sql, sizeof sql, "SELECT owner = '%s' FROM " LEASE_TABLE " WHERE id = 1", owner);
    if ((rc = node_sql(log, sql, &res, NULL, err)) == 0 && res != NULL &&
        (row = mysql_fetch_row(res)) != NULL)
        *held = row[0] != NULL && row[0][0] == '1';
    if (res != NULL)
        mysql_free_result(res);
    return rc;
}

/* ------------------------------------------------------------- a scan */

/* One prepared branch of dal's, as XA RECOVER listed it. */
typedef struct branch {
    dal_node_t *node; /* borrowed from the scan's snapshot */
    char gtrid[XA_ID_MAX + 1], bqual[XA_ID_MAX + 1];
    char decision;    /* from the log: 'C', 'R' or 0 */
} branch_t;

/* One row of the log as the scan read it. */
typedef struct decision {
    char gtrid[XA_ID_MAX + 1];
    char kind;
    int prunable; /* old enough to go once no branch of it is left */
} decision_t;

typedef struct scan {
    branch_t *b;     /* owned */
    size_t nb;
    decision_t *d;   /* owned */
    size_t nd;
    unsigned unreachable;
    int rc;          /* the first error */
    dal_error_t *err;
} scan_t;

static void scan_fail(scan_t *sc, int rc, const dal_error_t *e)
{
    if (sc->rc == 0) {
        sc->rc = rc;
        if (sc->err != NULL && e != NULL && e != sc->err)
            *sc->err = *e;
    }
}

static int has_branch(const scan_t *sc, const char *gtrid, const char *bqual)
{
    size_t i;

    for (i = 0; i < sc->nb; i++)
        if (strcmp(sc->b[i].gtrid, gtrid) == 0 && (bqual == NULL || strcmp(sc->b[i].bqual, bqual) == 0))
            return 1;
    return 0;
}

/* The branches of XA RECOVER's rows (formatID, gtrid_length, bqual_length,
 * data) that are dal's; one server listed through two datasources counts
 * once. */
static int scan_rows(scan_t *sc, dal_node_t *node, MYSQL_RES *res)
{
    MYSQL_ROW row;
    unsigned long *len;
    long gl, bl;
    branch_t *nb;

    while ((row = mysql_fetch_row(res)) != NULL) {
        len = mysql_fetch_lengths(res);
        gl = row[1] ? atol(row[1]) : -1;
        bl = row[2] ? atol(row[2]) : -1;
        if (row[3] == NULL || gl < 0 || bl < 0 || gl > XA_ID_MAX || bl > XA_ID_MAX ||
            (unsigned long)(gl + bl) != len[3] ||
            strncmp(row[3], XA_PREFIX, strlen(XA_PREFIX)) != 0)
            continue;
        if ((nb = realloc(sc->b, (sc->nb + 1) * sizeof *nb)) == NULL)
            return DAL_ENOMEM;
        sc->b = nb;
        nb = &sc->b[sc->nb];
        memset(nb, 0, sizeof *nb);
        nb->node = node;
        memcpy(nb->gtrid, row[3], (size_t)gl);
        memcpy(nb->bqual, row[3] + gl, (size_t)bl);
        if (!has_branch(sc, nb->gtrid, nb->bqual))
            sc->nb++;
    }
    return 0;
}

/* XA RECOVER on every node's master. */
static void scan_nodes(scan_t *sc, dal_snapshot_t *snap)
{
    dal_error_t e;
    MYSQL_RES *res;
    size_t i;
    int rc;

    for (i = 0; i < snap->nnodes; i++) {
        res = NULL;
        rc = node_sql(snap->nodes[i], "XA RECOVER", &res, NULL, &e);
        if (rc == 0 && res != NULL)
            rc = scan_rows(sc, snap->nodes[i], res);
        if (res != NULL)
            mysql_free_result(res);
        if (rc != 0) {
            sc->unreachable++;
            scan_fail(sc, rc, &e);
        }
    }
}

/* Every row of the log; prunable as decided before now (the log server's
 * clock, read first) for 'C', two grace periods earlier for 'R'. */
static int scan_log(scan_t *sc, dal_node_t *log, uint32_t grace_ms)
{
    char sql[256];
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    dal_error_t e;
    decision_t *d;
    int rc;

    snprintf(sql, sizeof sql,
             "SELECT gtrid, decision, IF(decision = 'C', decided_at < @dal_scan,"
             " decided_at < @dal_scan - INTERVAL %u SECOND) FROM " LOG_TABLE
             ", (SELECT @dal_scan := NOW(6)) AS t",
             (unsigned)((uint64_t)grace_ms * 2 / 1000 + 1));
    if ((rc = node_sql(log, sql, &res, NULL, &e)) != 0) {
        scan_fail(sc, rc, &e);
        return rc;
    }
    while (res != NULL && (row = mysql_fetch_row(res)) != NULL) {
        if (row[0] == NULL || strlen(row[0]) > XA_ID_MAX || row[1] == NULL)
            continue;
        if ((d = realloc(sc->d, (sc->nd + 1) * sizeof *d)) == NULL) {
            rc = DAL_ENOMEM;
            break;
        }
        sc->d = d;
        d = &sc->d[sc->nd++];
        snprintf(d->gtrid, sizeof d->gtrid, "%s", row[0]);
        d->kind = row[1][0];
        d->prunable = row[2] != NULL && row[2][0] == '1';
    }
    if (res != NULL)
        mysql_free_result(res);
    return rc;
}

static char decision_of(const scan_t *sc, const char *gtrid)
{
    size_t i;

    for (i = 0; i < sc->nd; i++)
        if (strcmp(sc->d[i].gtrid, gtrid) == 0)
            return sc->d[i].kind;
    return 0;
}

/* The log first (so that its 'C' rows older than the scan had their
 * branches prepared before XA RECOVER ran), then the nodes. */
static int scan_run(scan_t *sc, dal_snapshot_t *snap, uint32_t grace_ms)
{
    dal_node_t *log = log_node(snap, sc->err);
    size_t i;

    if (log == NULL)
        return sc->rc = DAL_ECONFIG;
    if (scan_log(sc, log, grace_ms) != 0)
        return sc->rc;
    scan_nodes(sc, snap);
    for (i = 0; i < sc->nb; i++)
        sc->b[i].decision = decision_of(sc, sc->b[i].gtrid);
    return sc->rc;
}

static void scan_free(scan_t *sc)
{
    free(sc->b);
    free(sc->d);
}

/* ------------------------------------------------------------ recovery */

/* Record a rollback for gtrid unless a decision is there; the decision
 * now in the log ('C' or 'R'), or 0 when the log cannot be read. */
static char decide_rollback(dal_node_t *log, const char *gtrid, dal_error_t *err)
{
    char sql[200];
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    char kind = 0;

    snprintf(sql, sizeof sql, "INSERT IGNORE INTO " LOG_TABLE " (gtrid, decision) VALUES ('%s', 'R')",
             gtrid);
    if (node_sql(log, sql, NULL, NULL, err) != 0)
        return 0;
    snprintf(sql, sizeof sql, "SELECT decision FROM " LOG_TABLE " WHERE gtrid = '%s'", gtrid);
    if (node_sql(log, sql, &res, NULL, err) == 0 && res != NULL &&
        (row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        kind = row[0][0];
    if (res != NULL)
        mysql_free_result(res);
    return kind;
}

/* XA COMMIT or ROLLBACK of one branch; one already finished (by its
 * coordinator or another recovery pass) counts as done. */
static int finish_branch(const branch_t *b, int commit, dal_error_t *err)
{
    char sql[200];
    unsigned e;
    int rc;

    xa_stmt(sql, sizeof sql, commit ? "COMMIT" : "ROLLBACK", b->gtrid, b->bqual, "");
    rc = node_sql(b->node, sql, NULL, &e, err);
    /* gone: finished by someone else; "rolled back" is done for a rollback
     * (and a real failure for a commit) */
    return rc != 0 && (e == ER_XAER_NOTA || (!commit && e == ER_XA_RBROLLBACK)) ? 0 : rc;
}

static void recover_branch(scan_t *sc, dal_node_t *log, branch_t *b, time_t now,
                           uint32_t grace_ms, dal_xa_report_t *rep)
{
    dal_error_t e;
    char kind = b->decision;
    int rc;

    if (kind == 0 && (uint64_t)(now - gtrid_time(b->gtrid)) * 1000 < grace_ms) {
        rep->waiting++;
        return;
    }
    if (kind == 0 && (kind = decide_rollback(log, b->gtrid, &e)) == 0) {
        rep->failed++;
        scan_fail(sc, DAL_ESERVER, &e);
        return;
    }
    if ((rc = finish_branch(b, kind == 'C', &e)) != 0) {
        rep->failed++;
        scan_fail(sc, rc, &e);
        return;
    }
    if (kind == 'C')
        rep->committed++;
    else
        rep->rolled_back++;
    log_message(b->node->log, DAL_LOG_INFO, "xa", "recovery: %s %s on %s",
                kind == 'C' ? "committed" : "rolled back", b->gtrid, b->node->cfg->name);
}

/* Decisions with no branch left (listed before the actions above) go. */
static void prune(scan_t *sc, dal_node_t *log, dal_xa_report_t *rep)
{
    char sql[160];
    size_t i;

    if (sc->unreachable > 0)
        return; /* a node not read may hold branches */
    for (i = 0; i < sc->nd; i++) {
        if (!sc->d[i].prunable || has_branch(sc, sc->d[i].gtrid, NULL))
            continue;
        snprintf(sql, sizeof sql, "DELETE FROM " LOG_TABLE " WHERE gtrid = '%s'", sc->d[i].gtrid);
        if (node_sql(log, sql, NULL, NULL, NULL) == 0)
            rep->pruned++;
    }
}

/* A pass's figures to the monitors; in doubt: what is still prepared. */
static void report_events(const dal_snapshot_t *snap, const dal_xa_report_t *rep)
{
    const char *const kinds[] = {"committed", "rolled_back", "failed", "pruned"};
    const unsigned n[] = {rep->committed, rep->rolled_back, rep->failed, rep->pruned};
    size_t i;

    for (i = 0; i < sizeof n / sizeof n[0]; i++)
        if (n[i] > 0)
            event_xa_recovery_emit(snap, kinds[i], n[i]);
    event_xa_recovery_emit(snap, "in_doubt", (uint64_t)rep->waiting + rep->failed);
}

int dal_xa_recover(dal_t *dal, uint32_t grace_ms, dal_xa_report_t *report, dal_error_t *err)
{
    dal_xa_report_t local;
    dal_xa_report_t *rep = report != NULL ? report : &local;
    scan_t sc = {.err = err};
    dal_snapshot_t *snap;
    dal_node_t *log;
    time_t now = time(NULL);
    size_t i;

    memset(rep, 0, sizeof *rep);
    if (dal == NULL)
        return err_set(err, DAL_EINVAL, "dal_xa_recover: NULL handle");
    snap = snapshot_acquire(dal);
    if (grace_ms == UINT32_MAX)
        grace_ms = snap->cfg->xa_grace_ms;
    scan_run(&sc, snap, grace_ms);
    rep->unreachable = sc.unreachable;
    /* without the log (config, unreadable) the scan listed nothing */
    log = snap->cfg->xa_log != NULL ? snapshot_node(snap, snap->cfg->xa_log) : NULL;
    for (i = 0; log != NULL && i < sc.nb; i++)
        recover_branch(&sc, log, &sc.b[i], now, grace_ms, rep);
    if (log != NULL)
        prune(&sc, log, rep);
    report_events(snap, rep);
    scan_free(&sc);
    snapshot_unref(snap);
    return sc.rc;
}

int dal_xa_list(dal_t *dal, dal_xa_branch_t **out, size_t *n, dal_error_t *err)
{
    scan_t sc = {.err = err};
    dal_snapshot_t *snap;
    time_t now = time(NULL);
    size_t i;

    if (dal == NULL || out == NULL || n == NULL)
        return err_set(err, DAL_EINVAL, "dal_xa_list: NULL argument");
    *out = NULL;
    *n = 0;
    snap = snapshot_acquire(dal);
    if (scan_run(&sc, snap, snap->cfg->xa_grace_ms) == 0 && sc.nb > 0 &&
        (*out = calloc(sc.nb, sizeof **out)) == NULL)
        sc.rc = err_set(err, DAL_ENOMEM, "out of memory");
    for (i = 0; sc.rc == 0 && i < sc.nb; i++) {
        snprintf((*out)[i].datasource, sizeof (*out)[i].datasource, "%s", sc.b[i].node->cfg->name);
        snprintf((*out)[i].gtrid, sizeof (*out)[i].gtrid, "%s", sc.b[i].gtrid);
        (*out)[i].decision = sc.b[i].decision;
        (*out)[i].age_s = (uint64_t)(now - gtrid_time(sc.b[i].gtrid));
    }
    if (sc.rc == 0)
        *n = sc.nb;
    scan_free(&sc);
    snapshot_unref(snap);
    return sc.rc;
}
