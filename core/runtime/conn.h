/*
 * conn.h -- server connections and the built-in connection cache.
 *
 * conn_open() is the one place that turns a datasource's URL into a
 * libmysqlclient connection (timeouts, charset, TLS, socket).  Until a pool
 * plugin is configured, each datasource node keeps its idle connections in a
 * small mutex-protected stack (dal_connpool_t) so statements reuse them.
 *
 * Session state between borrowers: a connection handed from one statement
 * to the next must not carry the first one's transaction, variables or
 * temporary tables.  A COM_RESET_CONNECTION per statement would double the
 * round trips of every point query, so conn_open() asks the server to
 * track session state changes (session_track_state_change; not
 * session_track_transaction_info, under which a server bypasses its query
 * cache): the status flags of each OK packet then say whether the
 * statement changed the session, and conn_reset() only goes to the server
 * when one did.  The server does not flag everything: user variables
 * assigned inside a SELECT (`SELECT @a := 1`, `INTO @a`), named locks
 * (GET_LOCK) and the next transaction's characteristics (SET TRANSACTION)
 * go unnoticed, so the core marks such statements with conn_mark_dirty().
 */
#ifndef DAL_CORE_CONN_H
#define DAL_CORE_CONN_H

#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "dal/plugin.h"
#include "gtid.h"
#include "infile.h"

/* State another module keeps on a connection that lives in the server's
 * session (sprep.c's prepared statements): dropped (drop also frees it)
 * before the session is reset or its parsing rules change, and before the
 * connection closes.  m is still connected when drop runs. */
typedef struct dal_conn_ext {
    void (*drop)(struct dal_conn_ext *e, MYSQL *m);
} dal_conn_ext_t;

struct dal_conn {
    MYSQL mysql;                       /* initialised and connected */
    const dal_cfg_datasource_t *ds;    /* borrowed from the snapshot's config */
    int no_backslash_escapes;          /* server's sql_mode, read at connect */
    uint64_t created_ns;
    struct dal_conn *next;             /* idle-stack link */
    uint64_t borrows;                  /* times handed out by server_acquire */
    int tracked;                       /* the server flags session state changes */
    int dirty;                         /* state left behind that the flags may not show */
    const dal_url_t *url;              /* the server's URL, inside ds */
    int replica;                       /* index into ds->replicas, or -1 for the master */
    int track_gtid;                    /* the server reports @@last_gtid (see conn_take_gtid) */
    const void *last_thread;           /* identity of the thread that released it last */
    int vars_set;                      /* a session's variables are set (conn_apply_vars):
                                          kept for a next borrower with the same ones,
                                          undone before any other */
    int names_set;                     /* ... among them the charset (SET NAMES) */
    char *vars_sql;                    /* owned: the set_sql applied, or NULL */
    char *vars_names;                  /* owned: the names applied, or NULL */
    struct dal_cancel *cancel;         /* borrowed: the session whose SQL runs on it
                                          now, which may cancel it (cancel.h), or NULL */
    int discard;                       /* closed when given back, never reused: its
                                          sending side is shut (cancel_hang_up, set
                                          under the cancel list's lock), or its server
                                          closed it after an error that a statement
                                          handle carried (conn_note_stmt_error) */
    dal_conn_ext_t *ext;               /* owned, or NULL: see dal_conn_ext_t */
    dal_infile_conn_t infile;          /* its LOCAL INFILE handler's (infile.h) */
    int db_moved;                      /* conn_use_db chose another database than the
                                          URL's: the reset must choose the URL's again */
};

/* Drop c's extension (dal_conn_ext_t), if any. */
void conn_drop_ext(dal_conn_t *c);

/*
 * Session variables a dal_session applies to every connection it takes
 * (dal_session_set_var).  Built by session.c; borrowed by whoever applies
 * them.
 */
typedef struct dal_conn_vars {
    const char *set_sql;               /* "SET SESSION a = v, ..." or NULL */
    const char *names;                 /* charset for SET NAMES, or NULL */
} dal_conn_vars_t;

/* Apply v to c: the charset through the client library (so escaping
 * follows it), then the SET, over what c carries (a transaction's or a
 * pinned connection keeps its session state); nothing when c carries v
 * already.  c remembers v's text, and keeps the variables when it goes
 * back to its pool: server_acquire undoes them (conn_unset_vars) only for
 * a borrower without the same ones, so a session's next statement sends
 * no SET and no reset.  Errors name the datasource (DAL_ESERVER). */
int conn_apply_vars(dal_conn_t *c, const dal_conn_vars_t *v, dal_error_t *err);
/* 1 when c carries exactly v (conn_apply_vars), else 0. */
int conn_has_vars(const dal_conn_t *c, const dal_conn_vars_t *v);
/* Undo conn_apply_vars (COM_RESET_CONNECTION, then the URL's charset
 * again): 0, or the error that makes c unusable.  Nothing when c carries
 * no session variables. */
int conn_unset_vars(dal_conn_t *c, dal_error_t *err);

/* The URL of ds's master (replica < 0) or of replica number `replica`. */
const dal_url_t *server_url(const dal_cfg_datasource_t *ds, int replica);
/* The connect timeout for that server: its URL's option, else the section's. */
uint32_t server_connect_timeout_ms(const dal_cfg_datasource_t *ds, int replica);

/* Connect to ds's master.  *out owned by the caller (conn_close).
 * Errors are DAL_ECONNECT naming the datasource and server, never the password. */
int conn_open(const dal_cfg_datasource_t *ds, dal_conn_t **out, dal_error_t *err);
/* The same for one server of ds: the master (replica < 0) or a replica.
 * Master connections of a datasource with replicas also ask the server to
 * report the GTID of each write (session_track_system_variables). */
int conn_open_server(const dal_cfg_datasource_t *ds, int replica, dal_conn_t **out,
                     dal_error_t *err);
/* The connection options conn_open uses (timeouts, charset, TLS, no
 * reconnect, non-blocking allowed, dal's LOCAL INFILE handler, which
 * refuses on such a MYSQL), for a MYSQL the caller drives itself;
 * read_timeout_ms replaces ds's read timeout (0: none). */
void conn_options(MYSQL *m, const dal_cfg_datasource_t *ds, int replica,
                  uint32_t read_timeout_ms);
/* After each statement that succeeded on c: if it committed a transaction
 * that the server gave a GTID, store it in *out and return 1, else 0.
 * The change the statement's packet reports is kept: a change a later
 * borrower would see marks c dirty (later packets will not report it
 * again), while a new GTID, or the transaction's own state, alone clears
 * the change flag, so that conn_reset does not go to the server for it.
 * Every statement of a single-node transaction passes here, which lets
 * the transaction's connection go back without a reset (keeping its
 * prepared statements). */
int conn_take_gtid(dal_conn_t *c, dal_gtid_t *out);

/* After a statement succeeded on c: when the server's session tracking
 * reports that it set character_set_client to a character set dal refuses
 * as a client's (charset.h: EXECUTE IMMEDIATE 'SET NAMES gbk', which dal
 * does not read as a SET), the connection's character set is put back
 * (closed if that fails) and err is ER_UNKNOWN_CHARACTER_SET (DAL_EINVAL,
 * returned); else 0. */
int conn_charset_kept(dal_conn_t *c, dal_error_t *err);
void conn_close(dal_conn_t *c);
/* 0 if alive. */
int conn_ping(dal_conn_t *c);
/* Read and drop the results the server sends after the current one (a
 * CALL's further result sets and its final status), so the statement has
 * run to its end on the server and c is in step for the next one.  The
 * current result must be read (or freed) first.  0; or -1 when one of
 * them is an error, which is then on c (mysql_errno). */
int conn_drain(dal_conn_t *c);
/* Undo the session state the last borrower left: a COM_RESET_CONNECTION
 * when the server flagged a change (or a transaction is open, or the
 * connection was marked dirty, or the server cannot track state); nothing
 * when the session is known to be clean.  A session's variables
 * (conn_apply_vars) are not such state: a reset undoes them too, and puts
 * the URL's charset back. */
int conn_reset(dal_conn_t *c, dal_error_t *err);
/* conn_reset for a connection its borrower keeps: its current database
 * stays, as COM_RESET_CONNECTION keeps it (none, when DROP DATABASE left
 * it in none); the pool's conn_reset still chooses the URL's later. */
int conn_reset_in_place(dal_conn_t *c, dal_error_t *err);
/* Whether the servers' global sql_mode has NO_BACKSLASH_ESCAPES, as the
 * last connection made or reset (COM_RESET_CONNECTION) in the process
 * found it: what a new or reset session starts in (0 before any).
 * conn_global_known: the process has made a connection, so the answer is
 * the servers'. */
int conn_global_no_backslash(void);
int conn_global_known(void);
/* Make db (NULL: the URL's database) c's current database (COM_INIT_DB);
 * another than the URL's until conn_reset, which chooses the URL's again
 * (a URL without a database cannot go back: that reset fails, and the
 * pool closes c).  The server's error (1049) on c and in err. */
int conn_use_db(dal_conn_t *c, const char *db, dal_error_t *err);
/* The statement just run on c may have left state the server does not flag
 * (user variables set in a SELECT, GET_LOCK): the next reset must go to the
 * server. */
void conn_mark_dirty(dal_conn_t *c);
/* Fill err from the connection's last error, naming the datasource (a
 * failure of its LOCAL INFILE handler as the handler reported it). */
int conn_error(dal_conn_t *c, int code, dal_error_t *err);
/* Whether c can serve no more statements after error e of a statement
 * handle on it: a client error (the connection lost), or a server's
 * network error (ER_NET_PACKET_TOO_LARGE 1153 to ER_NET_WRITE_INTERRUPTED
 * 1161), after which the server closes the connection.  Such a c is marked
 * to be closed when given back: closing the handle clears the
 * connection's own error, which the callers that give it back read. */
int conn_note_stmt_error(dal_conn_t *c, unsigned int e);

/* A slot where one thread parks the connection it gave back, to take it
 * again without the pool's lock (see conn.c).  One slot per cache line:
 * threads parking in different slots write no line in common. */
#define POOL_PARKS 8
typedef struct pool_park {
    _Atomic(dal_conn_t *) c;          /* owned, or NULL */
    char pad[64 - sizeof(dal_conn_t *)];
} pool_park_t;

typedef struct dal_connpool {
    pthread_mutex_t mu;
    dal_conn_t *idle;      /* owned stack */
    unsigned int nidle;
    unsigned int max_idle; /* parked and stacked together */
    pool_park_t park[POOL_PARKS]; /* outside mu */
    const dal_cfg_datasource_t *ds; /* borrowed */
    int replica;                    /* the server: see conn_open_server */
    /* figures for monitoring, kept outside mu so connecting needs no lock;
     * only opening and closing change them (connections in use are
     * created - closed - nidle: no counter written by every statement, on a
     * cache line every thread using the server would fight over) */
    atomic_ullong created;
    atomic_ullong closed;
} dal_connpool_t;

void connpool_init(dal_connpool_t *p, const dal_cfg_datasource_t *ds, int replica,
                   unsigned int max_idle);
/* Close every idle connection and free p's lock. */
void connpool_destroy(dal_connpool_t *p);
/* Close every idle connection: after one was found dead, the others (made
 * before the server went away) are dead too. */
void connpool_flush(dal_connpool_t *p);
/* An idle connection, or a new one.  *reused says which. */
int connpool_acquire(dal_connpool_t *p, dal_conn_t **out, int *reused, dal_error_t *err);
/* Give back; reusable == 0 closes it. */
void connpool_release(dal_connpool_t *p, dal_conn_t *c, int reusable);
/* Current figures (waiting and timed_out are always 0: the cache never
 * makes anyone wait; idle may be off by a connection being parked or
 * taken at that moment). */
void connpool_stats(dal_connpool_t *p, dal_pool_stats_t *out);

#endif /* DAL_CORE_CONN_H */
