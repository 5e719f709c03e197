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
 *
 * Who is alive is told by named locks on the log's server, which the
 * server releases when the connection holding them goes away (the
 * process died, the server restarted): every instance holds
 * "dal_xa_live:HOST:PID" on a connection of its own (xa_daemon.c) and
 * registers HOST:PID in dal_xa_instance; the recovery lease is the lock
 * "dal_xa_lease:SCHEMA" (one per log schema: named locks are server-wide),
 * and dal_xa_lease's one row records who took it and when.  A branch
 * without a decision whose coordinator's lock is free belongs to a dead
 * coordinator, which will never decide it: recovery rolls it back without
 * waiting for xa_grace.  A false "dead" (a live coordinator that lost its
 * lock connection) costs that transaction, never its atomicity: the 'R'
 * recorded first makes the coordinator's 'C' fail.
 */
#include <errmsg.h>
#include <inttypes.h>
#include <mysql.h>
#include <pthread.h>
#include <mysqld_error.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"
#include "conn.h"
#include "error.h"
#include "events.h"
#include "pool.h"
#include "xa.h"

#define LOG_TABLE "dal_xa_log"
#define LEASE_TABLE "dal_xa_lease"
#define INSTANCE_TABLE "dal_xa_instance"
#define XA_PREFIX "dal:"
#define LIVE_LOCK "dal_xa_live:"
/* SQL for the lease's lock name: named locks are server-wide, so two
 * deployments whose logs share a server each have their own */
#define LEASE_LOCK "LEFT(CONCAT('dal_xa_lease:', DATABASE()), 64)"
/* A dead coordinator's undecided branch is rolled back once this old (s),
 * and only when the log's server has been up this long: a live instance
 * takes its lock within a second of starting or of the server's restart. */
#define XA_SETTLE_S 3

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

void xa_instance_name(char *out)
{
    char host[21];

    host_part(host, sizeof host);
    snprintf(out, XA_ID_MAX + 1, "%s:%ld", host, (long)getpid());
}

/* gtrid's "HOST:PID" (the instance that began it) into out (XA_ID_MAX + 1
 * bytes); 0 when gtrid is not dal's. */
static int gtrid_instance(const char *gtrid, char *out)
{
    const char *p, *end = gtrid + strlen(gtrid);
    int colons = 0;

    if (strncmp(gtrid, XA_PREFIX, strlen(XA_PREFIX)) != 0)
        return 0;
    p = gtrid + strlen(XA_PREFIX);
    while (end > p && colons < 2)
        if (*--end == ':')
            colons++;
    if (colons < 2 || end - p > XA_ID_MAX)
        return 0;
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
    return 1;
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

static char decide_rollback(dal_node_t *log, const char *gtrid, dal_error_t *err);

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

/* The lease table as it is now: an older one had `until` (a lease that
 * expired) where `since` is. */
static int lease_table(dal_node_t *log, dal_error_t *err)
{
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    int old = 0, rc;

    rc = node_sql(log,
                  "CREATE TABLE IF NOT EXISTS " LEASE_TABLE
                  " (id TINYINT NOT NULL PRIMARY KEY, owner VARBINARY(64) NOT NULL,"
                  " since DATETIME(6) NOT NULL) ENGINE=InnoDB",
                  NULL, NULL, err);
    if (rc == 0)
        rc = node_sql(log,
                      "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA ="
                      " DATABASE() AND TABLE_NAME = '" LEASE_TABLE "' AND COLUMN_NAME = 'until'",
                      &res, NULL, err);
    if (rc == 0 && res != NULL && (row = mysql_fetch_row(res)) != NULL)
        old = row[0] != NULL && row[0][0] != '0';
    if (res != NULL)
        mysql_free_result(res);
    if (rc == 0 && old)
        rc = node_sql(log, "ALTER TABLE " LEASE_TABLE " CHANGE until since DATETIME(6) NOT NULL",
                      NULL, NULL, err);
    return rc;
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
        rc = lease_table(log, err);
    if (rc == 0)
        rc = node_sql(log,
                      "CREATE TABLE IF NOT EXISTS " INSTANCE_TABLE
                      " (name VARBINARY(64) NOT NULL PRIMARY KEY,"
                      " since DATETIME(6) NOT NULL) ENGINE=InnoDB",
                      NULL, NULL, err);
    snapshot_unref(snap);
    return rc;
}

/* --------------------------------------------------------- the locks */

/* sql on c, the daemon's own connection; *res (if not NULL) its rows. */
static int lock_sql(dal_conn_t *c, const char *sql, MYSQL_RES **res, dal_error_t *err)
{
    if (res != NULL)
        *res = NULL;
    if (mysql_real_query(&c->mysql, sql, strlen(sql)) != 0 ||
        (res != NULL && (*res = mysql_store_result(&c->mysql)) == NULL))
        return conn_error(c, DAL_ESERVER, err);
    return 0;
}

/* The first row's first two columns as flags ("1": set). */
static int lock_flags(dal_conn_t *c, const char *sql, int *a, int *b, dal_error_t *err)
{
    MYSQL_RES *res;
    MYSQL_ROW row;
    int rc = lock_sql(c, sql, &res, err);

    *a = *b = 0;
    if (rc == 0 && (row = mysql_fetch_row(res)) != NULL && mysql_num_fields(res) >= 2) {
        *a = row[0] != NULL && strcmp(row[0], "1") == 0;
        *b = row[1] != NULL && strcmp(row[1], "1") == 0;
    }
    if (res != NULL)
        mysql_free_result(res);
    return rc;
}

/* A row that only records something: a server's refusal (a table missing:
 * the log predates `dal xa init`'s tables) is 1, not an error for the
 * locks; a client error (the connection lost) is. */
static int lock_note(dal_conn_t *c, const char *sql, dal_error_t *err)
{
    int rc = lock_sql(c, sql, NULL, err);

    return rc != 0 && mysql_errno(&c->mysql) < CR_MIN_ERROR ? 1 : rc;
}

int xa_locks_hold(dal_conn_t *c, const char *name, int want_lease, int record, int *live,
                  int *lease, dal_error_t *err)
{
    char sql[512];
    int was_live = *live, was_lease = *lease, rc, noted = 0;

    if (!want_lease && *lease &&
        (rc = lock_sql(c, "DO RELEASE_LOCK(" LEASE_LOCK ")", NULL, err)) != 0)
        return rc;
    /* taken only when not held already: GET_LOCK twice would nest */
    snprintf(sql, sizeof sql,
             "SELECT IF(IS_USED_LOCK('" LIVE_LOCK "%s') <=> CONNECTION_ID(), 1,"
             " GET_LOCK('" LIVE_LOCK "%s', 0)), %s",
             name, name,
             want_lease ? "IF(IS_USED_LOCK(" LEASE_LOCK ") <=> CONNECTION_ID(), 1, GET_LOCK("
                          LEASE_LOCK ", 0))"
                        : "0");
    if ((rc = lock_flags(c, sql, live, lease, err)) != 0)
        return rc;
    if (*live && (!was_live || record)) {
        snprintf(sql, sizeof sql,
                 "REPLACE INTO " INSTANCE_TABLE " (name, since) VALUES ('%s', NOW(6))", name);
        if ((rc = lock_note(c, sql, err)) < 0)
            return rc;
        noted |= rc;
    }
    if (*lease && (!was_lease || record)) {
        snprintf(sql, sizeof sql,
                 "REPLACE INTO " LEASE_TABLE " (id, owner, since) VALUES (1, '%s', NOW(6))", name);
        if ((rc = lock_note(c, sql, err)) < 0)
            return rc;
        noted |= rc;
    }
    return noted; /* 1: err says what could not be recorded */
}

int xa_log_now(dal_conn_t *c, char *out, size_t cap, dal_error_t *err)
{
    MYSQL_RES *res;
    MYSQL_ROW row;
    int rc = lock_sql(c, "SELECT NOW(6)", &res, err);

    if (rc != 0)
        return rc;
    if ((row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        snprintf(out, cap, "%s", row[0]);
    mysql_free_result(res);
    return 0;
}

int xa_watch(dal_conn_t *c, const char *since, dal_error_t *err)
{
    char sql[600];
    MYSQL_RES *res;
    MYSQL_ROW row;
    int rc;

    /* a decision unfinished a second after it was made: its coordinator
     * did not get to the XA COMMITs (or gave up: xa_abandon) */
    snprintf(sql, sizeof sql,
             "SELECT (SELECT COUNT(*) FROM " INSTANCE_TABLE
             " WHERE IS_USED_LOCK(CONCAT('" LIVE_LOCK "', name)) IS NULL)"
             " + (SELECT COUNT(*) FROM " LOG_TABLE " WHERE decided_at >= '%s'"
             " AND decided_at < NOW(6) - INTERVAL 1 SECOND)",
             since[0] != '\0' ? since : "1970-01-01");
    if ((rc = lock_sql(c, sql, &res, err)) != 0)
        return mysql_errno(&c->mysql) < CR_MIN_ERROR ? 0 : rc;
    if ((row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        rc = atoi(row[0]) > 0;
    mysql_free_result(res);
    return rc;
}

/* Transactions whose coordinator (this process) gave up on them with
 * every branch prepared and its decision unknown (the log's server went
 * away): it decides them (a rollback, unless its commit got there) once
 * the log answers, rather than leaving them to xa_grace. */
#define ABANDONED_MAX 64
typedef struct abandoned {
    char gtrid[XA_ID_MAX + 1];
    char log[320]; /* the log's server (its URL's display): whose daemon decides */
} abandoned_t;
static pthread_mutex_t abandoned_mu = PTHREAD_MUTEX_INITIALIZER;
static abandoned_t abandoned[ABANDONED_MAX];
static size_t nabandoned;

void xa_abandon(dal_snapshot_t *snap, const char *gtrid)
{
    const dal_cfg_datasource_t *ds =
        snap->cfg->xa_log != NULL ? config_datasource(snap->cfg, snap->cfg->xa_log) : NULL;

    if (ds == NULL)
        return;
    pthread_mutex_lock(&abandoned_mu);
    if (nabandoned < ABANDONED_MAX) { /* more: they wait for xa_grace */
        snprintf(abandoned[nabandoned].gtrid, sizeof abandoned[0].gtrid, "%s", gtrid);
        snprintf(abandoned[nabandoned].log, sizeof abandoned[0].log, "%s", ds->master.display);
        nabandoned++;
    }
    pthread_mutex_unlock(&abandoned_mu);
}

void xa_decide_abandoned(dal_snapshot_t *snap)
{
    dal_node_t *log = snap->cfg->xa_log != NULL ? snapshot_node(snap, snap->cfg->xa_log) : NULL;
    abandoned_t a;
    size_t i = 0;

    if (log == NULL)
        return;
    pthread_mutex_lock(&abandoned_mu);
    while (i < nabandoned) {
        if (strcmp(abandoned[i].log, log->cfg->master.display) != 0) {
            i++;
            continue;
        }
        a = abandoned[i];
        pthread_mutex_unlock(&abandoned_mu);
        if (decide_rollback(log, a.gtrid, NULL) == 0)
            return; /* the log does not answer: the next tick */
        pthread_mutex_lock(&abandoned_mu);
        /* the list may have moved: find it again */
        for (i = 0; i < nabandoned && strcmp(abandoned[i].gtrid, a.gtrid) != 0; i++)
            ;
        if (i < nabandoned)
            abandoned[i] = abandoned[--nabandoned];
    }
    pthread_mutex_unlock(&abandoned_mu);
}

void xa_locks_leave(dal_conn_t *c, const char *name)
{
    char sql[200];

    snprintf(sql, sizeof sql, "DELETE FROM " INSTANCE_TABLE " WHERE name = '%s'", name);
    (void)lock_sql(c, sql, NULL, NULL);
}

int dal_xa_lease_info(dal_t *dal, dal_xa_lease_t *out, dal_error_t *err)
{
    dal_snapshot_t *snap;
    dal_node_t *log;
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    int rc;

    if (dal == NULL || out == NULL)
        return err_set(err, DAL_EINVAL, "dal_xa_lease_info: NULL argument");
    memset(out, 0, sizeof *out);
    snap = snapshot_acquire(dal);
    if ((log = log_node(snap, err)) == NULL) {
        snapshot_unref(snap);
        return DAL_ECONFIG;
    }
    /* alive: the lease's lock is held, by the connection that holds the
     * recorded holder's own lock (both are on the holder's one connection) */
    rc = node_sql(log,
                  "SELECT l.owner, DATE_FORMAT(l.since, '%Y-%m-%d %H:%i:%s'),"
                  " TIMESTAMPDIFF(SECOND, l.since, NOW(6)),"
                  " IS_USED_LOCK(" LEASE_LOCK ") IS NOT NULL AND IS_USED_LOCK(" LEASE_LOCK ")"
                  " <=> IS_USED_LOCK(CONCAT('" LIVE_LOCK "', l.owner)),"
                  " IS_USED_LOCK(" LEASE_LOCK ") IS NOT NULL"
                  " FROM (SELECT 1 AS one) AS t LEFT JOIN " LEASE_TABLE " AS l ON l.id = 1",
                  &res, NULL, err);
    if (rc == 0 && res != NULL && (row = mysql_fetch_row(res)) != NULL) {
        snprintf(out->holder, sizeof out->holder, "%s", row[0] != NULL ? row[0] : "");
        snprintf(out->since, sizeof out->since, "%s", row[1] != NULL ? row[1] : "");
        out->held_s = row[2] != NULL ? strtoull(row[2], NULL, 10) : 0;
        out->alive = row[3] != NULL && strcmp(row[3], "1") == 0;
        out->locked = row[4] != NULL && strcmp(row[4], "1") == 0;
    }
    if (res != NULL)
        mysql_free_result(res);
    snapshot_unref(snap);
    return rc;
}

/* ------------------------------------------------------------- a scan */

/* One prepared branch of dal's, as XA RECOVER listed it. */
typedef struct branch {
    dal_node_t *node; /* borrowed from the scan's snapshot */
    char gtrid[XA_ID_MAX + 1], bqual[XA_ID_MAX + 1];
    char decision;    /* from the log: 'C', 'R' or 0 */
    int done;         /* finished by this pass */
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
    long log_uptime; /* the log server's Uptime (s), -1 before it is read */
    uint32_t due_ms; /* when a branch left waiting can be finished (recover_branch) */
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

/* The log server's uptime in seconds (read once per pass), -2 unknown. */
static long log_uptime(scan_t *sc, dal_node_t *log)
{
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;

    if (sc->log_uptime != -1)
        return sc->log_uptime;
    sc->log_uptime = -2;
    if (node_sql(log, "SHOW GLOBAL STATUS LIKE 'Uptime'", &res, NULL, NULL) == 0 && res != NULL &&
        (row = mysql_fetch_row(res)) != NULL && row[1] != NULL)
        sc->log_uptime = atol(row[1]);
    if (res != NULL)
        mysql_free_result(res);
    return sc->log_uptime;
}

/* Whether the instance that began gtrid is gone: its lock on the log's
 * server is free (see the top of this file). */
static int coordinator_gone(scan_t *sc, dal_node_t *log, const char *gtrid)
{
    char name[XA_ID_MAX + 1], sql[200];
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    int gone = 0;

    if (!gtrid_instance(gtrid, name) || log_uptime(sc, log) < XA_SETTLE_S)
        return 0;
    snprintf(sql, sizeof sql, "SELECT IS_USED_LOCK('" LIVE_LOCK "%s') IS NULL", name);
    if (node_sql(log, sql, &res, NULL, NULL) == 0 && res != NULL &&
        (row = mysql_fetch_row(res)) != NULL && row[0] != NULL)
        gone = strcmp(row[0], "1") == 0;
    if (res != NULL)
        mysql_free_result(res);
    return gone;
}

static void due_in(scan_t *sc, uint64_t ms)
{
    if (ms < sc->due_ms)
        sc->due_ms = ms < 100 ? 100 : (uint32_t)ms;
}

/* A branch without a decision waits while its coordinator may still
 * decide: younger than the grace period, and its coordinator alive (or
 * gone less than XA_SETTLE_S ago).  1: it waits (sc->due_ms says until
 * when, at most). */
static int must_wait(scan_t *sc, dal_node_t *log, const branch_t *b, time_t now, uint32_t grace_ms)
{
    uint64_t age_s = (uint64_t)(now - gtrid_time(b->gtrid));

    if (age_s * 1000 >= grace_ms)
        return 0;
    if (coordinator_gone(sc, log, b->gtrid)) {
        if (age_s >= XA_SETTLE_S)
            return 0;
        due_in(sc, 1000);
        return 1;
    }
    /* alive: at its grace's end at the latest (one more second for the
     * id's whole seconds) */
    due_in(sc, grace_ms - age_s * 1000 + 1000);
    return 1;
}

static void recover_branch(scan_t *sc, dal_node_t *log, branch_t *b, time_t now,
                           uint32_t grace_ms, dal_xa_report_t *rep)
{
    dal_error_t e;
    char kind = b->decision;
    int rc;

    if (kind == 0 && must_wait(sc, log, b, now, grace_ms)) {
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
    b->done = 1;
    if (kind == 'C')
        rep->committed++;
    else
        rep->rolled_back++;
    log_message(b->node->log, DAL_LOG_INFO, "xa", "recovery: %s %s on %s",
                kind == 'C' ? "committed" : "rolled back", b->gtrid, b->node->cfg->name);
}

/* Instances gone (their lock free) with no branch left unfinished leave
 * dal_xa_instance, which the lease holder watches for deaths. */
static void forget_dead(const scan_t *sc, dal_node_t *log)
{
    char sql[240], name[XA_ID_MAX + 1];
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    size_t i;
    int left;

    if (node_sql(log,
                 "SELECT name FROM " INSTANCE_TABLE
                 " WHERE IS_USED_LOCK(CONCAT('" LIVE_LOCK "', name)) IS NULL",
                 &res, NULL, NULL) != 0 || res == NULL)
        return;
    while ((row = mysql_fetch_row(res)) != NULL) {
        if (row[0] == NULL || strlen(row[0]) > XA_ID_MAX || strchr(row[0], '\'') != NULL)
            continue;
        for (i = 0, left = 0; i < sc->nb && !left; i++)
            left = !sc->b[i].done && gtrid_instance(sc->b[i].gtrid, name) &&
                   strcmp(name, row[0]) == 0;
        if (left)
            continue;
        /* only if still free: the name may have come back (a PID reused) */
        snprintf(sql, sizeof sql,
                 "DELETE FROM " INSTANCE_TABLE " WHERE name = '%s' AND IS_USED_LOCK('" LIVE_LOCK
                 "%s') IS NULL",
                 row[0], row[0]);
        node_sql(log, sql, NULL, NULL, NULL);
    }
    mysql_free_result(res);
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

int xa_recover_pass(dal_t *dal, uint32_t grace_ms, dal_xa_report_t *report, uint32_t *due_ms,
                    dal_error_t *err)
{
    dal_xa_report_t local;
    dal_xa_report_t *rep = report != NULL ? report : &local;
    scan_t sc = {.err = err, .log_uptime = -1, .due_ms = UINT32_MAX};
    dal_snapshot_t *snap;
    dal_node_t *log;
    time_t now = time(NULL);
    size_t i;

    memset(rep, 0, sizeof *rep);
    if (due_ms != NULL)
        *due_ms = UINT32_MAX;
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
    /* every node read, every action done: what is left is known */
    if (log != NULL && sc.rc == 0)
        forget_dead(&sc, log);
    report_events(snap, rep);
    scan_free(&sc);
    snapshot_unref(snap);
    if (due_ms != NULL)
        *due_ms = sc.due_ms;
    return sc.rc;
}

int dal_xa_recover(dal_t *dal, uint32_t grace_ms, dal_xa_report_t *report, dal_error_t *err)
{
    return xa_recover_pass(dal, grace_ms, report, NULL, err);
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

/* ------------------------------------------- a lock wait explained */

static const char *decision_words(char d)
{
    return d == 'C' ? "decision commit" : d == 'R' ? "decision rollback" : "no decision yet";
}

/* The decisions of sc's branches, read on a connection of its own to the
 * log named in node's configuration (this runs outside any snapshot). */
static void explain_decisions(scan_t *sc, const dal_node_t *node, size_t n)
{
    const dal_cfg_datasource_t *ds;
    dal_conn_t *c = NULL;
    dal_error_t e;
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    char sql[600];
    size_t i, len;

    if (node->owner->xa_log == NULL ||
        (ds = config_datasource(node->owner, node->owner->xa_log)) == NULL ||
        conn_open(ds, &c, &e) != 0)
        return;
    len = (size_t)snprintf(sql, sizeof sql,
                           "SELECT gtrid, decision FROM " LOG_TABLE " WHERE gtrid IN (");
    for (i = 0; i < n && len < sizeof sql; i++)
        len += (size_t)snprintf(sql + len, sizeof sql - len, "%s'%s'", i ? ", " : "",
                                sc->b[i].gtrid);
    if (len < sizeof sql - 2) {
        snprintf(sql + len, sizeof sql - len, ")");
        if (lock_sql(c, sql, &res, &e) == 0)
            while ((row = mysql_fetch_row(res)) != NULL)
                for (i = 0; i < n; i++)
                    if (row[0] != NULL && row[1] != NULL && strcmp(row[0], sc->b[i].gtrid) == 0)
                        sc->b[i].decision = row[1][0];
    }
    if (res != NULL)
        mysql_free_result(res);
    conn_close(c);
}

void xa_explain_wait(dal_node_t *node, dal_error_t *err)
{
    scan_t sc = {.log_uptime = -1};
    MYSQL_RES *res = NULL;
    time_t now = time(NULL);
    size_t i, n, len;

    if (err == NULL || node == NULL || err->mysql_errno != ER_LOCK_WAIT_TIMEOUT ||
        node_sql(node, "XA RECOVER", &res, NULL, NULL) != 0 || res == NULL) {
        if (res != NULL)
            mysql_free_result(res);
        return;
    }
    scan_rows(&sc, node, res);
    mysql_free_result(res);
    n = sc.nb < 3 ? sc.nb : 3;
    if (n > 0)
        explain_decisions(&sc, node, n);
    len = strlen(err->message);
    for (i = 0; i < n && len < sizeof err->message; i++)
        len += (size_t)snprintf(err->message + len, sizeof err->message - len,
                                "%s%s (%s, %llu s old)",
                                i ? ", " : "; rows on this server may be held by dal's XA "
                                           "transactions in doubt, which recovery will finish: ",
                                sc.b[i].gtrid, decision_words(sc.b[i].decision),
                                (unsigned long long)(now - gtrid_time(sc.b[i].gtrid)));
    if (sc.nb > n && len < sizeof err->message)
        snprintf(err->message + len, sizeof err->message - len, " and %zu more", sc.nb - n);
    scan_free(&sc);
}
