/*
 * conn.c -- server connections and the built-in connection cache.
 */
#include <errmsg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "charset.h"
#include "conn.h"
#include "error.h"
#include "clock.h"
#include "iowait.h"
#include "sql_lex.h"

static void read_global_escaping(dal_conn_t *c);

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const dal_url_t *server_url(const dal_cfg_datasource_t *ds, int replica)
{
    return replica < 0 ? &ds->master : &ds->replicas[replica].url;
}

uint32_t server_connect_timeout_ms(const dal_cfg_datasource_t *ds, int replica)
{
    const dal_url_t *u = server_url(ds, replica);

    return u->connect_timeout_ms > 0 ? (uint32_t)u->connect_timeout_ms : ds->connect_timeout_ms;
}

void conn_options(MYSQL *m, const dal_cfg_datasource_t *ds, int replica,
                  uint32_t read_timeout_ms)
{
    const dal_url_t *u = server_url(ds, replica);
    unsigned int ct = (server_connect_timeout_ms(ds, replica) + 999) / 1000;
    unsigned int rt = (read_timeout_ms + 999) / 1000;
    my_bool off = 0;

    if (ct == 0)
        ct = 1;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    if (rt > 0) {
        mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &rt);
        mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &rt);
    }
    mysql_options(m, MYSQL_SET_CHARSET_NAME, u->charset ? u->charset : "utf8mb4");
    /* Never reconnect behind our back: a silent reconnect would lose the
     * session (transaction, variables) without anyone noticing. */
    mysql_options(m, MYSQL_OPT_RECONNECT, &off);
    /* lets exec.c drive several nodes' statements from one thread */
    mysql_options(m, MYSQL_OPT_NONBLOCK, 0);
    /* its waits go through the calling thread's hook, if any */
    iowait_install(m);
    /* never libmariadb's own LOCAL INFILE handler, which reads whatever
     * file the server names; conn_open_server answers for its connections */
    infile_install(m, NULL, 0, NULL);
    if (u->ssl_mode != NULL && strcmp(u->ssl_mode, "DISABLED") != 0) {
        my_bool on = 1;
        if (u->ssl_ca != NULL)
            mysql_options(m, MYSQL_OPT_SSL_CA, u->ssl_ca);
        if (strcmp(u->ssl_mode, "PREFERRED") != 0)
            mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
        if (strncmp(u->ssl_mode, "VERIFY", 6) == 0)
            mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    }
}

int conn_error(dal_conn_t *c, int code, dal_error_t *err)
{
    const dal_error_t *f = infile_failure(&c->infile, mysql_errno(&c->mysql));
    unsigned int e = f != NULL ? f->mysql_errno : mysql_errno(&c->mysql);
    const char *state = f != NULL ? f->sqlstate : mysql_sqlstate(&c->mysql);
    char role[32] = "";

    /* replicas are named by position, as in config messages */
    if (c->replica >= 0)
        snprintf(role, sizeof role, " replica %d", c->replica + 1);
    return err_server(err, code, e, state, "datasource %s%s (%s): error %u (%s): %s", c->ds->name,
                      role, c->url->display, e, state,
                      f != NULL ? f->message : mysql_error(&c->mysql));
}

int conn_note_stmt_error(dal_conn_t *c, unsigned int e)
{
    if (!((e >= CR_MIN_ERROR && e <= CR_MAX_ERROR) || (e >= 1153 && e <= 1161)))
        return 0;
    c->discard = 1;
    return 1;
}

/* Sent once per session (at connect and after each reset, which puts the
 * variables back to the server's defaults).  The state change flag, and
 * character_set_client's value whatever the server's default, so that a
 * statement that sets a character set dal refuses is seen
 * (conn_charset_kept); the variable's other entries are kept: a pool
 * plugin or the server's default may rely on them (a name twice is
 * once).  Not transaction information: a server tracking it neither
 * stores nor serves query cache results (MariaDB's
 * Query_cache::store_query and send_result_to_client refuse while
 * session_track_transaction_info is on), and a client's statements
 * through dal must be cached as a client's are.  What that tracking would
 * have flagged and the state change flag does not -- characteristics set
 * for the next transaction only (SET TRANSACTION without SESSION) -- the
 * core marks itself (exec's mark_state: every SET statement). */
#define TRACK_VARS(names) "SET session_track_state_change = 1, " \
    "session_track_system_variables = CONCAT_WS(',', " \
    "NULLIF(@@session_track_system_variables, ''), " names ")"
#define TRACK_SQL TRACK_VARS("'character_set_client'")
/* The same, plus the GTID of each write (MariaDB's last_gtid), for
 * read-your-writes on datasources with replicas. */
#define TRACK_GTID_SQL TRACK_VARS("'character_set_client', 'last_gtid'")

/* dal keeps each session's autocommit itself and begins its transactions
 * with BEGIN, so its connections run with autocommit on whatever the
 * server's global default: with a global autocommit of 0 a client's
 * statements would otherwise stay in an open transaction of a pooled
 * connection after the client is gone.  The status flags of the
 * handshake or the reset's OK tell: a round trip only on such a server. */
static void own_autocommit(dal_conn_t *c)
{
    if (!(c->mysql.server_status & SERVER_STATUS_AUTOCOMMIT))
        (void)mysql_autocommit(&c->mysql, 1);
}

/* Ask the server to flag session changes (see conn.h).  A server that
 * cannot (no CLIENT_SESSION_TRACK, or the variables are unknown) is not an
 * error: its connections are simply reset every time. */
static void track_state(dal_conn_t *c)
{
    int gtid = c->replica < 0 && c->ds->nreplicas > 0;

    c->tracked = 0;
    c->track_gtid = 0;
    if (!(c->mysql.server_capabilities & CLIENT_SESSION_TRACKING))
        return;
    /* a server without last_gtid (MySQL) refuses the first: still track state */
    if (gtid && mysql_real_query(&c->mysql, TRACK_GTID_SQL, sizeof TRACK_GTID_SQL - 1) == 0)
        c->track_gtid = 1;
    else if (mysql_real_query(&c->mysql, TRACK_SQL, sizeof TRACK_SQL - 1) != 0)
        return;
    c->tracked = 1;
    /* The flag in this OK packet reports our own SET, not a borrower's. */
    c->mysql.server_status &= ~SERVER_SESSION_STATE_CHANGED;
}

/* Walk the session-tracking items of the last OK packet: the value of
 * last_gtid into *out (1 if found; out may be NULL), whether anything
 * changed that a later borrower would see (*other), and whether
 * characteristics are set for a transaction not begun yet (*pending; only
 * a server whose session_track_transaction_info a pool plugin or the
 * server's default turned on reports them).  The transaction's own items
 * change with every transaction and end with it: its state, and the
 * characteristics of the one running. */
static int tracked_items(MYSQL *m, dal_gtid_t *out, int *other, int *pending)
{
    const char *name, *value;
    size_t nlen, vlen;
    int t, found = 0;

    for (t = SESSION_TRACK_BEGIN; t <= SESSION_TRACK_END; t++) {
        if (mysql_session_track_get_first(m, t, &name, &nlen) != 0)
            continue;
        if (t == SESSION_TRACK_TRANSACTION_STATE)
            continue;
        if (t == SESSION_TRACK_TRANSACTION_CHARACTERISTICS) {
            if (nlen > 0 && !(m->server_status & SERVER_STATUS_IN_TRANS))
                *pending = 1;
            continue;
        }
        if (t != SESSION_TRACK_SYSTEM_VARIABLES) {
            *other = 1;
            continue;
        }
        /* system variables come as name, value, name, value, ... */
        do {
            if (mysql_session_track_get_next(m, t, &value, &vlen) != 0)
                break;
            if (nlen == 9 && memcmp(name, "last_gtid", 9) == 0)
                found = out != NULL && gtid_parse(value, vlen, out) == 0;
            else
                *other = 1;
        } while (mysql_session_track_get_next(m, t, &name, &nlen) == 0);
    }
    return found;
}

/* The session may hold state a borrower left: marked dirty (by the
 * statement analysis, or by conn_take_gtid after a statement whose packet
 * reported a change), a transaction still open, or the last packet
 * reporting a change of its own. */
static int session_dirty(dal_conn_t *c)
{
    int other = 0, pending = 0;

    if (!c->tracked || c->dirty || c->db_moved ||
        (c->mysql.server_status & SERVER_STATUS_IN_TRANS))
        return 1;
    if (!(c->mysql.server_status & SERVER_SESSION_STATE_CHANGED))
        return 0;
    tracked_items(&c->mysql, NULL, &other, &pending);
    return other || pending;
}

static void forget_vars(dal_conn_t *c);

/* abort_load's KILL QUERY, on a thread of its own: the LOCAL INFILE
 * handler may run on the small stack of libmariadb's non-blocking calls,
 * too small to connect from. */
typedef struct load_kill {
    const dal_conn_t *c;
    int rc;
} load_kill_t;

static void *load_kill_run(void *arg)
{
    load_kill_t *k = arg;
    dal_conn_t *side;
    char sql[48];

    if (conn_open_server(k->c->ds, k->c->replica, &side, NULL) != 0)
        return NULL;
    snprintf(sql, sizeof sql, "KILL QUERY %lu", mysql_thread_id((MYSQL *)&k->c->mysql));
    if (mysql_real_query(&side->mysql, sql, (unsigned long)strlen(sql)) == 0)
        k->rc = 0;
    conn_close(side);
    return NULL;
}

/* dal_infile_conn_t.abort: stop the LOAD DATA running on the connection
 * holding ic.  The server sees the kill when it reads the end of the file
 * (it cannot finish before that), fails the statement with error 1317, and
 * the connection stays usable. */
static int abort_load(dal_infile_conn_t *ic)
{
    load_kill_t k = {(const dal_conn_t *)((const char *)ic - offsetof(dal_conn_t, infile)), -1};
    pthread_t t;

    if (pthread_create(&t, NULL, load_kill_run, &k) != 0)
        return -1;
    pthread_join(t, NULL);
    return k.rc;
}

int conn_open(const dal_cfg_datasource_t *ds, dal_conn_t **out, dal_error_t *err)
{
    return conn_open_server(ds, -1, out, err);
}

int conn_open_server(const dal_cfg_datasource_t *ds, int replica, dal_conn_t **out,
                     dal_error_t *err)
{
    const dal_url_t *u = server_url(ds, replica);
    dal_conn_t *c = calloc(1, sizeof *c);
    int rc;

    *out = NULL;
    if (c == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    c->ds = ds;
    c->url = u;
    c->replica = replica;
    if (mysql_init(&c->mysql) == NULL) {
        free(c);
        return err_set(err, DAL_ENOMEM, "mysql_init failed");
    }
    conn_options(&c->mysql, ds, replica, ds->read_timeout_ms);
    infile_install(&c->mysql, &c->infile, ds->local_infile, abort_load);
    if (mysql_real_connect(&c->mysql, u->socket ? "localhost" : u->host, u->user, u->password,
                           u->database, u->socket ? 0 : u->port, u->socket, 0) == NULL) {
        rc = conn_error(c, DAL_ECONNECT, err);
        mysql_close(&c->mysql);
        free(c);
        return rc;
    }
    own_autocommit(c);
    track_state(c);
    read_global_escaping(c);
    c->created_ns = mono_ns();
    *out = c;
    return 0;
}

void conn_drop_ext(dal_conn_t *c)
{
    dal_conn_ext_t *e = c->ext;

    c->ext = NULL;
    if (e != NULL)
        e->drop(e, &c->mysql);
}

void conn_close(dal_conn_t *c)
{
    if (c == NULL)
        return;
    conn_drop_ext(c);
    mysql_close(&c->mysql);
    forget_vars(c);
    free(c);
}

int conn_ping(dal_conn_t *c)
{
    return mysql_ping(&c->mysql) == 0 ? 0 : -1;
}

int conn_drain(dal_conn_t *c)
{
    MYSQL *m = &c->mysql;

    while (mysql_more_results(m)) {
        MYSQL_RES *rows;
        int rc = mysql_next_result(m);
        if (rc != 0)
            return rc > 0 ? -1 : 0;
        rows = mysql_store_result(m);
        if (rows == NULL && mysql_field_count(m) != 0)
            return -1;
        mysql_free_result(rows);
    }
    return 0;
}

static void read_escaping(dal_conn_t *c);

/* conn_reset; back: the URL's database again when c had another (the
 * pool's reset), else the current one stays (a reset in place). */
static int reset(dal_conn_t *c, int back, dal_error_t *err)
{
    int names;

    if (!session_dirty(c))
        return 0;
    conn_drop_ext(c); /* the reset drops the server's side of it */
    if (mysql_reset_connection(&c->mysql) != 0)
        return conn_error(c, DAL_ESERVER, err);
    c->dirty = 0;
    names = c->names_set;
    forget_vars(c);
    own_autocommit(c);
    track_state(c);
    read_global_escaping(c);
    /* the reset puts the server's charset back, not the client library's */
    if (names && mysql_set_character_set(&c->mysql, c->url->charset ? c->url->charset : "utf8mb4") != 0)
        return conn_error(c, DAL_ESERVER, err);
    if (names)
        read_escaping(c);
    /* COM_RESET_CONNECTION keeps the current database */
    if (back && c->db_moved)
        return conn_use_db(c, NULL, err);
    return 0;
}

int conn_reset(dal_conn_t *c, dal_error_t *err)
{
    return reset(c, 1, err);
}

int conn_reset_in_place(dal_conn_t *c, dal_error_t *err)
{
    return reset(c, 0, err);
}

int conn_use_db(dal_conn_t *c, const char *db, dal_error_t *err)
{
    if (db == NULL && c->url->database == NULL) {
        c->db_moved = 1;
        return err_set(err, DAL_ESTATE, "datasource %s: its URL names no database to go back to",
                       c->ds->name);
    }
    if (mysql_select_db(&c->mysql, db != NULL ? db : c->url->database) != 0) {
        /* the server's 1049 leaves the current database as it was */
        return conn_error(c, DAL_ESERVER, err);
    }
    c->db_moved = db != NULL;
    return 0;
}

/* A SET sql_mode may have changed how ? values must be escaped. */
static void read_escaping(dal_conn_t *c)
{
    c->no_backslash_escapes = (c->mysql.server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
}

/* The servers' global sql_mode as the last new or reset connection had it
 * (conn_global_no_backslash): -1 before the process's first. */
static atomic_int global_no_backslash = -1;

/* c fresh from a connect or COM_RESET_CONNECTION: in the global sql_mode,
 * and its server's version, which decides how executable comments read. */
static void read_global_escaping(dal_conn_t *c)
{
    read_escaping(c);
    atomic_store_explicit(&global_no_backslash, c->no_backslash_escapes, memory_order_relaxed);
    sql_set_server_version((uint32_t)mysql_get_server_version(&c->mysql));
}

int conn_global_no_backslash(void)
{
    return atomic_load_explicit(&global_no_backslash, memory_order_relaxed) > 0;
}

int conn_global_known(void)
{
    return atomic_load_explicit(&global_no_backslash, memory_order_relaxed) >= 0;
}

static int same_text(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Forget the variables c carries (the server's side is gone or going). */
static void forget_vars(dal_conn_t *c)
{
    c->vars_set = 0;
    c->names_set = 0;
    free(c->vars_sql);
    free(c->vars_names);
    c->vars_sql = NULL;
    c->vars_names = NULL;
}

int conn_has_vars(const dal_conn_t *c, const dal_conn_vars_t *v)
{
    return c->vars_set && same_text(c->vars_sql, v->set_sql) && same_text(c->vars_names, v->names);
}

int conn_apply_vars(dal_conn_t *c, const dal_conn_vars_t *v, dal_error_t *err)
{
    int rc = 0, dirty = c->dirty;

    if (conn_has_vars(c, v))
        return 0;
    free(c->vars_sql);
    free(c->vars_names);
    /* marked first: a SET that failed half-way may have changed some */
    c->vars_set = 1;
    conn_drop_ext(c); /* prepared under the old charset and sql_mode */
    c->dirty = 1;
    c->vars_sql = v->set_sql != NULL ? strdup(v->set_sql) : NULL;
    c->vars_names = v->names != NULL ? strdup(v->names) : NULL;
    if ((v->set_sql != NULL && c->vars_sql == NULL) || (v->names != NULL && c->vars_names == NULL))
        return err_set(err, DAL_ENOMEM, "out of memory");
    if (v->names != NULL) {
        c->names_set = 1;
        if (mysql_set_character_set(&c->mysql, v->names) != 0)
            rc = conn_error(c, DAL_ESERVER, err);
    }
    if (rc == 0 && v->set_sql != NULL &&
        mysql_real_query(&c->mysql, v->set_sql, strlen(v->set_sql)) != 0)
        rc = conn_error(c, DAL_ESERVER, err);
    if (rc != 0) {
        err_prefix(err, "setting the session's variables");
        return rc;
    }
    read_escaping(c);
    /* the variables are c's own now, not a change a borrower left */
    c->dirty = dirty;
    c->mysql.server_status &= ~SERVER_SESSION_STATE_CHANGED;
    return 0;
}

int conn_unset_vars(dal_conn_t *c, dal_error_t *err)
{
    if (!c->vars_set)
        return 0;
    c->dirty = 1; /* the server's flags may not show a SET of several statements ago */
    return conn_reset(c, err);
}

int conn_take_gtid(dal_conn_t *c, dal_gtid_t *out)
{
    int other = 0, pending = 0, found;

    /* without the flag the items are an older statement's, kept by the
     * connector */
    if (!c->tracked || !(c->mysql.server_status & SERVER_SESSION_STATE_CHANGED))
        return 0;
    found = tracked_items(&c->mysql, c->track_gtid ? out : NULL, &other, &pending);
    /* kept past this packet: the next statements' packets will not say it */
    if (other || pending)
        c->dirty = 1;
    else
        c->mysql.server_status &= ~SERVER_SESSION_STATE_CHANGED;
    return found;
}

/* The character_set_client the last OK reported (session tracking), in
 * *value (not NUL-terminated, *n bytes; the connector's until the next
 * packet): 1 if it reported one. */
static int tracked_client_charset(MYSQL *m, const char **value, size_t *n)
{
    const int t = SESSION_TRACK_SYSTEM_VARIABLES;
    const char *name;
    size_t nlen;

    if (mysql_session_track_get_first(m, t, &name, &nlen) != 0)
        return 0;
    do {
        if (mysql_session_track_get_next(m, t, value, n) != 0)
            return 0;
        if (nlen == 20 && strncasecmp(name, "character_set_client", 20) == 0)
            return 1;
    } while (mysql_session_track_get_next(m, t, &name, &nlen) == 0);
    return 0;
}

int conn_charset_kept(dal_conn_t *c, dal_error_t *err)
{
    const char *value, *back;
    size_t n;
    char cs[65];

    if (!c->tracked || !(c->mysql.server_status & SERVER_SESSION_STATE_CHANGED) ||
        !tracked_client_charset(&c->mysql, &value, &n) || !charset_unsafe(value, n))
        return 0;
    snprintf(cs, sizeof cs, "%.*s", (int)(n < 64 ? n : 64), value);
    back = c->names_set && c->vars_names != NULL ? c->vars_names
           : c->url->charset != NULL             ? c->url->charset
                                                 : "utf8mb4";
    /* applied again (with its COLLATE) before the session's next statement here */
    forget_vars(c);
    c->dirty = 1;
    if (mysql_set_character_set(&c->mysql, back) != 0)
        c->discard = 1;  /* not put back: closed rather than used in cs */
    return err_server(err, DAL_EINVAL, CHARSET_REFUSED_ERRNO, CHARSET_REFUSED_STATE,
                      "Unknown character set: '%s': the statement set it as the client's "
                      "character set on datasource %s, which dal refuses (a byte of its "
                      "multi-byte characters can be a quote or backslash, which dal would read "
                      "otherwise than the server); the statement ran, and the connection's "
                      "character set is %s again", cs, c->ds->name, c->discard ? "closed" : back);
}

void conn_mark_dirty(dal_conn_t *c)
{
    c->dirty = 1;
}

void connpool_init(dal_connpool_t *p, const dal_cfg_datasource_t *ds, int replica,
                   unsigned int max_idle)
{
    size_t i;

    p->replica = replica;
    pthread_mutex_init(&p->mu, NULL);
    p->idle = NULL;
    p->nidle = 0;
    p->max_idle = max_idle;
    for (i = 0; i < POOL_PARKS; i++)
        atomic_init(&p->park[i].c, NULL);
    p->ds = ds;
    atomic_init(&p->created, 0);
    atomic_init(&p->closed, 0);
}

/* Close a detached list of idle connections. */
static void close_list(dal_conn_t *c)
{
    dal_conn_t *next;

    for (; c; c = next) {
        next = c->next;
        conn_close(c);
    }
}

/* Every parked connection, unparked into a list; their count in *n. */
static dal_conn_t *unpark_all(dal_connpool_t *p, unsigned int *n)
{
    dal_conn_t *list = NULL, *c;
    size_t i;

    *n = 0;
    for (i = 0; i < POOL_PARKS; i++) {
        c = atomic_exchange_explicit(&p->park[i].c, NULL, memory_order_acq_rel);
        if (c != NULL) {
            c->next = list;
            list = c;
            (*n)++;
        }
    }
    return list;
}

void connpool_destroy(dal_connpool_t *p)
{
    unsigned int n;

    close_list(unpark_all(p, &n));
    close_list(p->idle);
    p->idle = NULL;
    p->nidle = 0;
    pthread_mutex_destroy(&p->mu);
}

void connpool_flush(dal_connpool_t *p)
{
    dal_conn_t *list, *parked;
    unsigned int n, nparked;

    parked = unpark_all(p, &nparked);
    pthread_mutex_lock(&p->mu);
    list = p->idle;
    n = p->nidle;
    p->idle = NULL;
    p->nidle = 0;
    pthread_mutex_unlock(&p->mu);
    /* closing talks to the server: outside the lock */
    atomic_fetch_add_explicit(&p->closed, n + nparked, memory_order_relaxed);
    close_list(list);
    close_list(parked);
}

/* A per-thread address: who released a connection last. */
static _Thread_local char this_thread DAL_TLS_SMALL;

/* Each thread gives a connection back into a park slot of its own (the
 * slot is chosen once per thread) and takes it from there next time,
 * without the pool's lock: two threads working one server would otherwise
 * pass the lock's cache line, and the stack's, between their CPUs twice a
 * statement.  It is also the thread's own connection (see
 * AFFINITY_SCAN).  The stack under mu keeps the rest.  Threads beyond
 * POOL_PARKS share slots, which stays correct: a slot changes hands only
 * by atomic exchange. */
static _Thread_local unsigned int park_ix DAL_TLS_SMALL; /* 1 + the slot; 0: none yet */
static atomic_uint park_next;

static pool_park_t *my_park(dal_connpool_t *p)
{
    if (park_ix == 0)
        park_ix = 1 + atomic_fetch_add_explicit(&park_next, 1, memory_order_relaxed) % POOL_PARKS;
    return &p->park[park_ix - 1];
}

/* How far down the idle stack to look for the calling thread's own
 * connection.  The server thread behind that connection last ran next to
 * this client thread; handing the connection to another client thread
 * makes the server wake up on another CPU, with cold caches and a
 * cross-CPU wakeup on every round trip, which costs far more than the
 * scan.  The scan is bounded so that acquire stays O(1). */
#define AFFINITY_SCAN 8

/* Unlink and return an idle connection, the caller's own if one is near
 * the top of the stack.  Called with p->mu held. */
static dal_conn_t *take_idle(dal_connpool_t *p)
{
    dal_conn_t **link = &p->idle, **pick = &p->idle, *c;
    int i;

    for (i = 0; *link != NULL && i < AFFINITY_SCAN; i++, link = &(*link)->next)
        if ((*link)->last_thread == &this_thread) {
            pick = link;
            break;
        }
    c = *pick;
    if (c != NULL) {
        *pick = c->next;
        p->nidle--;
    }
    return c;
}

/* A connection another thread parked: a new one is opened only when no
 * idle one is left anywhere. */
static dal_conn_t *steal_parked(dal_connpool_t *p)
{
    dal_conn_t *c;
    size_t i;

    for (i = 0; i < POOL_PARKS; i++)
        if (atomic_load_explicit(&p->park[i].c, memory_order_relaxed) != NULL &&
            (c = atomic_exchange_explicit(&p->park[i].c, NULL, memory_order_acq_rel)) != NULL)
            return c;
    return NULL;
}

/* The stack's room: max_idle less the park slots, when they are used. */
static unsigned int stack_cap(const dal_connpool_t *p)
{
    return p->max_idle > POOL_PARKS ? p->max_idle - POOL_PARKS : p->max_idle;
}

int connpool_acquire(dal_connpool_t *p, dal_conn_t **out, int *reused, dal_error_t *err)
{
    dal_conn_t *c = atomic_exchange_explicit(&my_park(p)->c, NULL, memory_order_acq_rel);
    int rc;

    if (c == NULL) {
        pthread_mutex_lock(&p->mu);
        c = take_idle(p);
        pthread_mutex_unlock(&p->mu);
    }
    if (c == NULL)
        c = steal_parked(p);
    *reused = c != NULL;
    if (c != NULL) {
        c->next = NULL;
        *out = c;
        return 0;
    }
    rc = conn_open_server(p->ds, p->replica, out, err);
    if (rc != 0)
        return rc;
    atomic_fetch_add_explicit(&p->created, 1, memory_order_relaxed);
    return 0;
}

void connpool_release(dal_connpool_t *p, dal_conn_t *c, int reusable)
{
    if (c == NULL)
        return;
    /* the next borrower must not find this one's session state (a round
     * trip only when some was left: see conn_reset) */
    if (reusable && session_dirty(c) && conn_reset(c, NULL) != 0)
        reusable = 0;
    c->last_thread = &this_thread;
    if (reusable && p->max_idle > POOL_PARKS) {
        /* a connection another thread parked in a shared slot goes on
         * the stack instead */
        c = atomic_exchange_explicit(&my_park(p)->c, c, memory_order_acq_rel);
        if (c == NULL)
            return;
    }
    pthread_mutex_lock(&p->mu);
    if (reusable && p->nidle < stack_cap(p)) {
        c->next = p->idle;
        p->idle = c;
        p->nidle++;
        c = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (c != NULL)
        atomic_fetch_add_explicit(&p->closed, 1, memory_order_relaxed);
    conn_close(c);
}

void connpool_stats(dal_connpool_t *p, dal_pool_stats_t *out)
{
    uint64_t open;
    size_t i;

    memset(out, 0, sizeof *out);
    for (i = 0; i < POOL_PARKS; i++)
        out->idle += atomic_load_explicit(&p->park[i].c, memory_order_relaxed) != NULL;
    pthread_mutex_lock(&p->mu);
    out->idle += p->nidle;
    out->created = atomic_load_explicit(&p->created, memory_order_relaxed);
    out->closed = atomic_load_explicit(&p->closed, memory_order_relaxed);
    pthread_mutex_unlock(&p->mu);
    /* a connection being opened or closed right now may be off by one for
     * a moment; never below zero */
    open = out->created - out->closed;
    out->in_use = open > out->idle ? (uint32_t)(open - out->idle) : 0;
}
