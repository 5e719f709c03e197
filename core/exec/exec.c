/*
 * exec.c -- running physical statements on data nodes.
 */
#include <errmsg.h>
#include <errno.h>
#include <mysqld_error.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "events.h"
#include "exec.h"
#include "cancel.h"
#include "infile.h"
#include "iowait.h"
#include "warnings.h"
#include "clock.h"
#include "monitor.h"
#include "pool.h"
#include "relay.h"
#include "replica.h"
#include "route_servers.h"
#include "result.h"
#include "rewrite.h"
#include "sprep.h"
#include "value.h"

/* The physical SQL of a one-node statement is built on the stack when it
 * fits: most statements are short, and this is their hot path. */
#define SQL_STACK_BYTES 1024

/* Client-side errors mean the connection can no longer be trusted. */
static int conn_is_broken(unsigned int e)
{
    return e >= CR_MIN_ERROR && e <= CR_MAX_ERROR;
}

/* The server's network errors (ER_NET_PACKET_TOO_LARGE 1153 to
 * ER_NET_WRITE_INTERRUPTED 1161): it closes the connection after sending
 * one, so the connection goes, though its server is fine. */
static int server_closes(unsigned int e)
{
    return e >= 1153 && e <= 1161;
}

/* A pooled connection the server closed while idle fails with "gone
 * away"/"lost".  Only then, and only for reads, is running the statement
 * again on a fresh connection safe. */
static int retryable(unsigned int e, int reused, int read_only)
{
    return reused && read_only && (e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST);
}

/* Reads: the only statements run again after a connection died. */
static int is_read(const dal_sql_t *sql)
{
    return sql->kind == DAL_SQL_SELECT || sql->kind == DAL_SQL_SHOW;
}

/* Where route r runs again after its attempt on srv failed with rc (not
 * 0; and client error e once connected), or NULL.  A read on a replica goes to
 * another server whether it could not connect or lost its connection: the
 * replica is likely gone.  A read on the master is only repeated, there,
 * when a pooled connection turned out to be dead. */
static dal_server_t *retry_server(const dal_routing_t *rt, dal_server_t *srv, int rc,
                                  unsigned int e, int reused)
{
    if (!is_read(rt->sql))
        return NULL;
    if (srv->replica >= 0)
        return rc == DAL_ECONNECT || conn_is_broken(e) ? select_failover(srv) : NULL;
    return retryable(e, reused, 1) ? srv : NULL;
}

/* After a statement succeeded on c: a write on a master is what its writer
 * must read back (read-your-writes).  The GTID is taken for every statement
 * on a tracking connection, since taking it also tells conn_reset that
 * a new GTID alone leaves nothing to undo. */
static void note_write(const dal_routing_t *rt, dal_server_t *srv, dal_conn_t *c)
{
    dal_sql_kind_t k = rt->sql->kind;
    dal_gtid_t g;
    int has = conn_take_gtid(c, &g);

    if (rt->ryw == NULL || srv->replica >= 0)
        return;
    if (has)
        ryw_note(rt->ryw, srv->node, &g);
    else if (!c->track_gtid && k != DAL_SQL_SELECT && k != DAL_SQL_SHOW)
        ryw_note(rt->ryw, srv->node, NULL); /* wrote, or may have: GTID unknown */
}


static void note_end(dal_result_t *res, MYSQL *m, uint64_t insert_id)
{
    result_add_end(res, mysql_warning_count(m), m->server_status, insert_id);
}

/* A sharded table's physical name shows as its logical one in the
 * result's column metadata, as a server holding all the data would name
 * it.  Route 0's: the metadata is the first route's. */
static void map_tables(const dal_routing_t *rt, dal_result_t *res)
{
    size_t i;

    if (res->ncols == 0 || rt->nroutes == 0 || rt->tables == NULL || rt->routes[0].pos == NULL)
        return; /* exec_direct's statements name physical tables themselves */
    for (i = 0; i < rt->sql->ntrefs; i++) {
        const dal_table_t *t = rt->tables[i];
        if (t != NULL && t->sharded && rt->routes[0].pos[i] >= 0)
            result_map_table(res, t->cfg->name, rt->routes[0].pos[i]);
    }
}

/* A statement that leaves session state (sql.h's pins) the server may not
 * flag -- `SELECT @a := 1`, GET_LOCK(), `SET TRANSACTION` (the next
 * transaction's characteristics: conn.c tracks state changes only) -- on
 * a pooled connection: the next borrower must get it reset. */
static void mark_state(const dal_routing_t *rt, dal_conn_t *c)
{
    if (rt->sql->pins || rt->sql->kind == DAL_SQL_SET)
        conn_mark_dirty(c);
}

/* c's current result into res: an OK's counts and end, or its rows. */
static int store_current(const dal_routing_t *rt, size_t r, dal_conn_t *c, dal_result_t *res,
                         dal_error_t *err)
{
    MYSQL *m = &c->mysql;
    MYSQL_RES *rows;

    if (mysql_field_count(m) == 0) {
        res->affected += mysql_affected_rows(m);
        result_note_info(res, mysql_info(m));
        note_end(res, m, mysql_insert_id(m));
        return 0;
    }
    if ((rows = mysql_store_result(m)) == NULL)
        return conn_error(c, DAL_ESERVER, err);
    note_end(res, m, 0);
    return result_add(res, rows, rt->routes[r].node->cfg->name, err);
}

static _Thread_local int keep_sets DAL_TLS_SMALL;

void exec_keep_sets(int on)
{
    keep_sets = on;
}

/* With exec_keep_sets: the error a procedure raised after its first
 * result, read into err, chained at *tail as the last set.  The server
 * ends the results there, so every set before it has been read. */
static int chain_error(dal_conn_t *c, dal_result_t **tail, dal_error_t *err)
{
    int rc = conn_error(c, DAL_ESERVER, err);

    if (!keep_sets || conn_is_broken(mysql_errno(&c->mysql)))
        return rc;
    if ((*tail = result_new_error_set(err)) == NULL)
        return rc;
    warnings_read(&(*tail)->warns, &c->mysql, 1);  /* its diagnostics area, with the error */
    return 0;
}

/* send_on's reading of what route r's SQL returned on c.  A CALL's
 * results after its first are each a result chained to res
 * (dal_result_next_set): its procedure's further result sets, then its
 * final status.  All are read before the statement returns, so the
 * procedure has finished (a next statement on another connection sees
 * what it wrote), and an error it raised after rows is the statement's
 * error, not lost (or, with exec_keep_sets, its last set). */
static int store_on(const dal_routing_t *rt, size_t r, dal_conn_t *c, dal_result_t *res,
                    dal_error_t *err)
{
    dal_result_t **tail = &res->next_set;
    int rc = store_current(rt, r, c, res, err), q;

    while (rc == 0 && mysql_more_results(&c->mysql)) {
        if ((q = mysql_next_result(&c->mysql)) != 0) {
            if (q > 0 && (rc = chain_error(c, tail, err)) == 0)
                return 0; /* no SHOW WARNINGS: the error is the last word */
            break;
        }
        if ((*tail = result_new()) == NULL) {
            rc = err_set(err, DAL_ENOMEM, "out of memory");
            break;
        }
        (*tail)->nroutes = 1;
        (*tail)->txn_status = res->txn_status;
        rc = store_current(rt, r, c, *tail, err);
        tail = &(*tail)->next_set;
    }
    if (rc != 0) {
        /* out of memory mid-way: what is left is read, so c stays in step
         * (a server's error ends the results itself) */
        if (rc == DAL_ENOMEM)
            (void)conn_drain(c);
        return rc;
    }
    /* SHOW WARNINGS could not run before: every result must be read first */
    warnings_read(&res->warns, &c->mysql, mysql_warning_count(&c->mysql));
    return 0;
}

/* Build route r's SQL for connection c (escaping follows c's sql_mode),
 * send it, and collect what it returns into res.  The caller keeps c; on
 * failure mysql_errno(&c->mysql) tells whether c is still usable. */
static int send_on(const dal_routing_t *rt, size_t r, dal_conn_t *c, const dal_value_t *params,
                   size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err)
{
    int rc, how;

    cancel_enter(c);
    infile_enter(&c->infile);
    rc = sprep_send(rt, r, c, params, nparams, sql, res, err);
    if (rc == SPREP_TEXT) {
        buf_reset(sql);
        rc = rewrite_route(rt, r, params, nparams, c->no_backslash_escapes, sql, err);
        if (rc == 0 && rt->relay != NULL &&
            (how = relay_wanted(rt, r, c, sql->data, sql->len)) != 0)
            rc = relay_run(rt, c, how, sql->data, sql->len, res, err);
        else if (rc == 0)
            rc = mysql_real_query(&c->mysql, sql->data, (unsigned long)sql->len) != 0
                     ? conn_error(c, DAL_ESERVER, err)
                     : store_on(rt, r, c, res, err);
    }
    infile_leave(&c->infile);
    cancel_leave(c);
    return rc == 0 ? conn_charset_kept(c, err) : rc;
}

/* One attempt of route r on srv: *e is the client or server error once
 * connected (0 otherwise). */
static int attempt_on(const dal_routing_t *rt, size_t r, dal_server_t *srv,
                      const dal_value_t *params, size_t nparams, dal_buf_t *sql, dal_result_t *res,
                      unsigned int *e, int *reused, dal_error_t *err)
{
    dal_conn_t *c = NULL;
    int rc = server_acquire(srv, &c, reused, err);

    *e = 0;
    if (rc != 0) {
        if (rc == DAL_ECONNECT)
            server_lost(srv, err ? err->message : "cannot connect");
        return rc;
    }
    mark_state(rt, c);
    rc = send_on(rt, r, c, params, nparams, sql, res, err);
    if (rc == 0)
        note_write(rt, srv, c);
    else if (conn_is_broken(*e = mysql_errno(&c->mysql)))
        server_lost(srv, mysql_error(&c->mysql));
    else if (rc == DAL_ESERVER && err != NULL && !conn_is_broken(err->mysql_errno) && !c->discard)
        warnings_read_failed(&c->mysql);  /* the server's diagnostics area of the error */
    server_release(srv, c, rc == 0 || !(conn_is_broken(*e) || server_closes(*e)));
    return rc;
}

/* Route r on a pooled connection of its server, run once more elsewhere
 * (or on a fresh connection) when a read finds its connection dead. */
static int run_route(const dal_routing_t *rt, size_t r, const dal_value_t *params,
                     size_t nparams, dal_buf_t *sql, dal_result_t *res, dal_error_t *err)
{
    dal_server_t *srv = route_server(&rt->routes[r]), *next;
    uint64_t t0 = monitor_active(rt->monitors) ? clock_now_ns() : 0, before = res->affected;
    unsigned int e;
    int reused = 0, rc = attempt_on(rt, r, srv, params, nparams, sql, res, &e, &reused, err);

    /* what reached a relay's client cannot be taken back */
    next = rc != 0 && !res->relayed ? retry_server(rt, srv, rc, e, reused) : NULL;
    if (next != NULL) {
        if (next != srv)
            event_route(rt, next);
        srv = next;
        rc = attempt_on(rt, r, srv, params, nparams, sql, res, &e, &reused, err);
    }
    /* rows: what a write changed; a read's rows are counted by the
     * statement event once the caller has read them */
    event_execution(rt, r, srv, t0, rc == 0 ? res->affected - before : 0, rc,
                    rc == 0 ? 0 : e);
    return rc;
}

static _Atomic(exec_lock_wait_fn) lock_wait;

void exec_on_lock_wait(exec_lock_wait_fn fn)
{
    atomic_store(&lock_wait, fn);
}

/* A lock wait timeout may be a prepared XA branch's doing: the hook (xa.c)
 * names dal's branches in doubt on the routes' servers. */
static void explain_wait(const dal_routing_t *rt, int rc, dal_error_t *err)
{
    exec_lock_wait_fn fn = atomic_load(&lock_wait);
    size_t i, j;

    if (fn == NULL || rc != DAL_ESERVER || err == NULL || err->mysql_errno != ER_LOCK_WAIT_TIMEOUT)
        return;
    for (i = 0; i < rt->nroutes; i++) {
        for (j = 0; j < i && rt->routes[j].node != rt->routes[i].node; j++)
            ;
        if (j == i)
            fn(rt->routes[i].node, err);
    }
}

int exec_on_conn(const dal_routing_t *rt, dal_conn_t *c, const dal_value_t *params,
                 size_t nparams, dal_result_t **out, int *broken, dal_error_t *err)
{
    dal_result_t *res = result_new();
    char mem[SQL_STACK_BYTES];
    dal_buf_t sql;
    int rc;

    *out = NULL;
    *broken = 0;
    buf_init_on(&sql, mem, sizeof mem);
    if (res == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    rc = send_on(rt, 0, c, params, nparams, &sql, res, err);
    buf_free(&sql);
    if (rc == 0)
        note_write(rt, route_server(&rt->routes[0]), c);
    if (rc == 0 && res->ncols > 0)
        rc = result_name_columns(res, rt->sql, err);
    if (rc == 0)
        map_tables(rt, res);
    if (rc != 0) {
        *broken = conn_is_broken(mysql_errno(&c->mysql));
        *broken = *broken || c->discard;
        if (!*broken && rc == DAL_ESERVER && err != NULL && !conn_is_broken(err->mysql_errno))
            warnings_read_failed(&c->mysql);
        dal_result_free(res);
        explain_wait(rt, rc, err);
        return rc;
    }
    res->nroutes = 1;
    res->named_tables = rt->sql->ntrefs > 0;
    *out = res;
    return 0;
}

/* ---------------------------------------------------------------- parallel */

/*
 * Several routes run at once from this thread with MariaDB Connector/C's
 * non-blocking calls: each job sends its statement and receives its result
 * while poll() waits on all their sockets, so a scatter over N nodes takes
 * about as long as the slowest node.  At most max_parallel jobs hold a
 * connection at a time; results are kept per route and handed to the
 * dal_result_t in route order, so concatenation is deterministic.
 *
 * Each job writes its route's SQL, a whole copy of the statement: a big
 * statement over many tables would hold one copy per table.  So a job's
 * SQL is freed once the server has it, and jobs start only while the SQL
 * the batch holds stays within BATCH_SQL_BUDGET (one always may start):
 * a big statement runs in waves, whatever its fan-out.
 */

/* Bytes of rewritten SQL a batch holds at once: a statement under an
 * eighth of it runs on max_parallel (8) routes at once, as if unbounded. */
#define BATCH_SQL_BUDGET ((size_t)16 << 20)
/* From this size a job sends its SQL apart from reading the answer, to
 * free it before the server runs it (a coroutine more per job, nothing
 * beside sending a megabyte); below, one mysql_real_query does both. */
#define BATCH_SQL_LARGE ((size_t)1 << 20)

/* JOB_SEND and JOB_ANSWER are a large SQL's JOB_QUERY in two steps. */
enum job_phase { JOB_IDLE, JOB_SEND, JOB_ANSWER, JOB_QUERY, JOB_STORE, JOB_DONE };

typedef struct job {
    size_t route;
    dal_server_t *srv;     /* where it runs: the route's server, or where it failed over */
    int retried;           /* a read runs again at most once */
    dal_conn_t *c;
    int held;              /* c is the caller's (batch_t.held): never released here */
    int reused;
    enum job_phase phase;
    int wait;              /* MYSQL_WAIT_* flags the connector is waiting for */
    int qret;              /* mysql_real_query's result */
    MYSQL_RES *rows;       /* owned until handed to the result */
    uint64_t affected, insert_id;
    unsigned int warnings, status; /* sent at the end of a write or of stored rows */
    char info[80];                 /* mysql_info of a write, "" if none */
    dal_warnings_t *warns;         /* owned: its SHOW WARNINGS rows (warnings.h), or NULL */
    dal_buf_t sql;         /* owned: the route's SQL, until the server has it */
    int rc;
    dal_error_t err;
    uint64_t t0;           /* start, for the execution event */
} job_t;

typedef struct batch {
    const dal_routing_t *rt;
    const dal_value_t *params;
    size_t nparams;
    job_t *jobs;           /* one per route */
    size_t next;           /* next route to start */
    size_t running;
    int failed;            /* stop starting new jobs */
    int stream;            /* hand connections to the result instead of storing rows */
    dal_conn_t *const *held; /* borrowed: per route, the caller's connection or NULL */
    size_t sql_held;       /* bytes of the jobs' SQL not yet sent */
    size_t sql_last;       /* bytes of the last SQL written: the next is about as long */
} batch_t;

static void job_start(batch_t *b, job_t *j);

/* The server has j's SQL (or it will not be sent): free it.  A retry
 * writes it again (job_start). */
static void job_sql_drop(batch_t *b, job_t *j)
{
    b->sql_held -= j->sql.len;
    buf_free(&j->sql);
}

/* Whether another job may write its SQL within BATCH_SQL_BUDGET. */
static int sql_room(const batch_t *b)
{
    return b->sql_held == 0 || b->sql_held + b->sql_last <= BATCH_SQL_BUDGET;
}

static void job_finish(batch_t *b, job_t *j, int rc)
{
    job_sql_drop(b, j);
    event_execution(b->rt, j->route, j->srv, j->t0, rc == 0 ? j->affected : 0, rc,
                    rc == 0 ? 0 : j->err.mysql_errno);
    j->rc = rc;
    j->phase = JOB_DONE;
    j->wait = 0;
    b->running--;
    if (rc != 0)
        b->failed = 1;
}

static void job_release(job_t *j, int reusable)
{
    cancel_leave(j->c);
    if (j->c != NULL)
        infile_leave(&j->c->infile);
    if (j->c != NULL && !j->held)
        server_release(j->srv, j->c, reusable);
    j->c = NULL;
}

/* The job failed with rc (client error e once connected): run it again
 * elsewhere if retry_server allows, else finish it. */
static void job_failed(batch_t *b, job_t *j, int rc, unsigned int e)
{
    dal_server_t *next = j->retried ? NULL : retry_server(b->rt, j->srv, rc, e, j->reused);

    if (next == NULL) {
        job_finish(b, j, rc);
        return;
    }
    if (next != j->srv)
        event_route(b->rt, next);
    j->retried = 1;
    j->srv = next;
    b->running--; /* job_start counts it again */
    job_start(b, j);
}

/* The statement failed on the job's connection: give it back (closed if
 * broken, with its server's idle ones, or if it cannot be trusted) and see
 * about running it again. */
static void job_conn_failed(batch_t *b, job_t *j, int trusted)
{
    unsigned int e = mysql_errno(&j->c->mysql);
    int rc = conn_error(j->c, DAL_ESERVER, &j->err);

    if (conn_is_broken(e))
        server_lost(j->srv, mysql_error(&j->c->mysql));
    job_release(j, trusted && !conn_is_broken(e) && !server_closes(e));
    job_failed(b, j, rc, e);
}

static void job_end(job_t *j)
{
    j->warnings = mysql_warning_count(&j->c->mysql);
    j->status = j->c->mysql.server_status;
    warnings_read(&j->warns, &j->c->mysql, j->warnings);
}

static void job_stored(batch_t *b, job_t *j)
{
    if (j->rows == NULL) {
        job_conn_failed(b, j, 0); /* a result cut short leaves the protocol mid-way */
        return;
    }
    job_end(j);
    job_release(j, 1);
    job_finish(b, j, 0);
}

static void job_queried(batch_t *b, job_t *j)
{
    MYSQL *m = &j->c->mysql;

    job_sql_drop(b, j);
    if (j->qret != 0) {
        job_conn_failed(b, j, 1);
        return;
    }
    if (mysql_field_count(m) == 0) {
        j->affected = mysql_affected_rows(m);
        j->insert_id = mysql_insert_id(m);
        snprintf(j->info, sizeof j->info, "%s", mysql_info(m) != NULL ? mysql_info(m) : "");
        job_end(j);
        note_write(b->rt, j->srv, j->c);
        job_release(j, 1);
        job_finish(b, j, 0);
        return;
    }
    if (b->stream) {
        /* the result reads the rows as the caller asks for them; the
         * connection goes with it (collect_jobs) */
        job_finish(b, j, 0);
        return;
    }
    j->phase = JOB_STORE;
    j->wait = mysql_store_result_start(&j->rows, m);
    if (j->wait == 0)
        job_stored(b, j);
}

/* A large SQL is sent: free it, then wait for the server's answer. */
static void job_sent(batch_t *b, job_t *j)
{
    my_bool failed = 0;

    job_sql_drop(b, j);
    if (j->qret != 0) {
        job_conn_failed(b, j, 1);
        return;
    }
    j->phase = JOB_ANSWER;
    j->wait = mysql_read_query_result_start(&failed, &j->c->mysql);
    if (j->wait == 0) {
        j->qret = failed;
        job_queried(b, j);
    }
}

/* Send the job's SQL, in two steps when large (job_sent). */
static void job_send(batch_t *b, job_t *j)
{
    MYSQL *m = &j->c->mysql;

    if (j->sql.len >= BATCH_SQL_LARGE) {
        j->phase = JOB_SEND;
        j->wait = mysql_send_query_start(&j->qret, m, j->sql.data, (unsigned long)j->sql.len);
        if (j->wait == 0)
            job_sent(b, j);
        return;
    }
    j->phase = JOB_QUERY;
    j->wait = mysql_real_query_start(&j->qret, m, j->sql.data, (unsigned long)j->sql.len);
    if (j->wait == 0)
        job_queried(b, j);
}

static void job_start(batch_t *b, job_t *j)
{
    const dal_routing_t *rt = b->rt;
    int rc;

    if (j->srv == NULL)
        j->srv = route_server(&rt->routes[j->route]);
    j->t0 = monitor_active(rt->monitors) ? clock_now_ns() : 0;
    b->running++;
    if (b->held != NULL && b->held[j->route] != NULL) {
        /* the session's state is on this connection: nowhere else to go */
        j->c = b->held[j->route];
        j->held = 1;
        j->retried = 1;
    } else if ((rc = server_acquire(j->srv, &j->c, &j->reused, &j->err)) != 0) {
        if (rc == DAL_ECONNECT)
            server_lost(j->srv, j->err.message);
        job_failed(b, j, rc, 0);
        return;
    } else {
        mark_state(rt, j->c);
    }
    rc = rewrite_route(rt, j->route, b->params, b->nparams, j->c->no_backslash_escapes, &j->sql,
                       &j->err);
    b->sql_held += j->sql.len;
    b->sql_last = j->sql.len;
    if (rc != 0) {
        job_release(j, 1);
        job_finish(b, j, rc);
        return;
    }
    cancel_enter(j->c);
    infile_enter(&j->c->infile);
    job_send(b, j);
}

static void job_continue(batch_t *b, job_t *j, int events)
{
    my_bool failed = 0;

    if (j->phase == JOB_SEND) {
        j->wait = mysql_send_query_cont(&j->qret, &j->c->mysql, events);
        if (j->wait == 0)
            job_sent(b, j);
    } else if (j->phase == JOB_ANSWER) {
        j->wait = mysql_read_query_result_cont(&failed, &j->c->mysql, events);
        if (j->wait == 0) {
            j->qret = failed;
            job_queried(b, j);
        }
    } else if (j->phase == JOB_QUERY) {
        j->wait = mysql_real_query_cont(&j->qret, &j->c->mysql, events);
        if (j->wait == 0)
            job_queried(b, j);
    } else {
        j->wait = mysql_store_result_cont(&j->rows, &j->c->mysql, events);
        if (j->wait == 0)
            job_stored(b, j);
    }
}

static short poll_events(int wait)
{
    return (short)(((wait & MYSQL_WAIT_READ) ? POLLIN : 0) |
                   ((wait & MYSQL_WAIT_WRITE) ? POLLOUT : 0) |
                   ((wait & MYSQL_WAIT_EXCEPT) ? POLLPRI : 0));
}

/* One poll() over every waiting job, then continue the ready ones. */
static int poll_round(batch_t *b, struct pollfd *pfd, size_t *idx)
{
    size_t i, n = 0;
    int timeout = -1, rc;

    for (i = 0; i < b->rt->nroutes; i++) {
        job_t *j = &b->jobs[i];
        if (j->phase == JOB_IDLE || j->phase == JOB_DONE)
            continue;
        pfd[n].fd = mysql_get_socket(&j->c->mysql);
        pfd[n].events = poll_events(j->wait);
        pfd[n].revents = 0;
        if (j->wait & MYSQL_WAIT_TIMEOUT) {
            int t = (int)mysql_get_timeout_value_ms(&j->c->mysql);
            timeout = timeout < 0 || t < timeout ? t : timeout;
        }
        idx[n++] = i;
    }
    rc = iowait_poll(pfd, n, timeout);
    if (rc < 0 && errno != EINTR)
        return -1;
    for (i = 0; i < n; i++) {
        job_t *j = &b->jobs[idx[i]];
        int ev = 0;
        if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
            ev |= MYSQL_WAIT_READ;
        if (pfd[i].revents & POLLOUT)
            ev |= MYSQL_WAIT_WRITE;
        if (pfd[i].revents & POLLPRI)
            ev |= MYSQL_WAIT_EXCEPT;
        if (rc == 0 && (j->wait & MYSQL_WAIT_TIMEOUT))
            ev |= MYSQL_WAIT_TIMEOUT;
        if (ev != 0)
            job_continue(b, j, ev);
    }
    return 0;
}

/* [dal] max_parallel, 8 when unset. */
static unsigned int max_parallel(const dal_routing_t *rt)
{
    return rt->max_parallel > 0 ? rt->max_parallel : 8;
}

/* Route i runs on a caller's connection that a started job still uses
 * (two routes on one node share its pinned connection): it waits. */
static int held_busy(const batch_t *b, size_t i)
{
    size_t k;

    if (b->held == NULL || b->held[i] == NULL)
        return 0;
    for (k = 0; k < i; k++)
        if (b->jobs[k].c == b->held[i])
            return 1;
    return 0;
}

static int run_batch(batch_t *b, dal_error_t *err)
{
    size_t n = b->rt->nroutes, cap = max_parallel(b->rt);
    struct pollfd *pfd = calloc(n, sizeof *pfd);
    size_t *idx = calloc(n, sizeof *idx);
    int rc = 0;

    if (pfd == NULL || idx == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto done;
    }
    for (;;) {
        while (!b->failed && b->next < n && b->running < cap && !held_busy(b, b->next) &&
               sql_room(b))
            job_start(b, &b->jobs[b->next++]);
        if (b->running == 0)
            break;
        if (poll_round(b, pfd, idx) != 0) {
            rc = err_set(err, DAL_EIO, "poll: %s", strerror(errno));
            break;
        }
    }
done:
    free(pfd);
    free(idx);
    return rc;
}

static void release_to_server(void *ctx, dal_conn_t *c, int reusable)
{
    server_release(ctx, c, reusable);
}

/* Hand every job's outcome to res in route order; the first failure in
 * route order wins. */
static int collect_jobs(batch_t *b, dal_result_t *res, dal_error_t *err)
{
    size_t i;
    int rc = 0;

    for (i = 0; i < b->rt->nroutes; i++) {
        job_t *j = &b->jobs[i];
        if (rc == 0 && j->rc != 0) {
            rc = j->rc;
            if (err != NULL)
                *err = j->err;
        }
        if (rc == 0 && j->phase == JOB_DONE) {
            res->affected += j->affected;
            result_note_info(res, j->info[0] != '\0' ? j->info : NULL);
            warnings_move(&res->warns, j->warns);
            j->warns = NULL;
            res->nroutes++;
            /* a stream's end is the result's to note, when it comes */
            if (j->c == NULL)
                result_add_end(res, j->warnings, j->status, j->insert_id);
            if (j->rows != NULL) {
                rc = result_add(res, j->rows, j->srv->node->cfg->name, err);
                j->rows = NULL;
            } else if (j->c != NULL) {
                rc = result_add_stream(res, j->c, release_to_server, j->srv,
                                       j->srv->node->cfg->name, err);
                j->c = NULL;
            }
        }
        if (j->rows != NULL)
            mysql_free_result(j->rows);
        warnings_free(j->warns);
        /* a stream not handed over (an earlier route failed) still holds
         * unread rows: the connection cannot be reused */
        job_release(j, 0);
        buf_free(&j->sql);
    }
    if (rc == 0 && b->failed == 0 && b->next < b->rt->nroutes)
        rc = err_set(err, DAL_EIO, "not every route ran");
    return rc;
}

static int exec_parallel(const dal_routing_t *rt, dal_conn_t *const *held,
                         const dal_value_t *params, size_t nparams, dal_result_t *res,
                         dal_error_t *err)
{
    batch_t b;
    int rc;

    memset(&b, 0, sizeof b);
    b.rt = rt;
    /* Streaming keeps every route's connection until its rows are read, so
     * it needs all routes running at once; beyond max_parallel the rows of
     * each route are received whole instead, and so are they with a
     * caller's connection, which is the caller's again on return. */
    b.stream = rt->nroutes <= max_parallel(rt) && held == NULL;
    b.held = held;
    b.params = params;
    b.nparams = nparams;
    b.jobs = calloc(rt->nroutes, sizeof *b.jobs);
    if (b.jobs == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    for (size_t i = 0; i < rt->nroutes; i++)
        b.jobs[i].route = i;
    rc = run_batch(&b, err);
    if (rc == 0)
        rc = collect_jobs(&b, res, err);
    free(b.jobs);
    return rc;
}

int exec_conn_lost(const dal_conn_t *c)
{
    return conn_is_broken(mysql_errno((MYSQL *)&c->mysql));
}

int exec_routes_on(const dal_routing_t *rt, dal_conn_t *const *held, const dal_value_t *params,
                   size_t nparams, dal_merge_spec_t **spec, dal_result_t **out, dal_error_t *err)
{
    dal_result_t *res = result_new();
    char mem[SQL_STACK_BYTES];
    dal_buf_t sql;
    int rc = 0;

    *out = NULL;
    buf_init_on(&sql, mem, sizeof mem);
    if (res == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if (rt->nroutes == 1 && held == NULL) {
        rc = run_route(rt, 0, params, nparams, &sql, res, err);
        if (rc == 0)
            res->nroutes++;
        if (rc == 0 && res->ncols > 0)
            rc = result_name_columns(res, rt->sql, err);
    } else {
        rc = exec_parallel(rt, held, params, nparams, res, err);
        if (rc == 0 && spec != NULL && *spec != NULL && res->ncols > 0) {
            rc = result_set_merge(res, *spec, err);
            *spec = NULL;
        }
    }
    res->named_tables = rt->sql->ntrefs > 0;
    if (rc == 0)
        map_tables(rt, res);
    buf_free(&sql);
    if (rc != 0) {
        dal_result_free(res);
        explain_wait(rt, rc, err);
        return rc;
    }
    *out = res;
    return 0;
}

int exec_direct(dal_node_t *node, const char *sql, const dal_value_t *params,
                size_t nparams, dal_result_t **out, dal_error_t *err)
{
    dal_routing_t rt;
    dal_route_t route;
    dal_sql_t *s = NULL;
    char msg[256];
    int rc;

    *out = NULL;
    if (sql_analyse(sql, strlen(sql), 0, &s, msg, sizeof msg) != 0)
        return err_set(err, DAL_ESQL, "%s", msg);
    /* one route, no table rewritten: only the ? placeholders are filled */
    memset(&rt, 0, sizeof rt);
    rt.sql = s;
    rt.routes = &route;
    rt.nroutes = 1;
    memset(&route, 0, sizeof route);
    route.node = node;
    route.pos = NULL;
    rc = exec_routes(&rt, params, nparams, NULL, out, err);
    sql_unref(s); /* the result may hold a reference (its column names) */
    return rc;
}
