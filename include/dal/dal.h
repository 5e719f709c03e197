/*
 * dal.h -- public API of libdal, a client-side distributed data layer for
 * MySQL/MariaDB.
 *
 * An application opens one INI file with dal_open() and then runs ordinary
 * SQL against *logical* tables with dal_query().  dal decides which data
 * node (datasource) and which physical table each statement goes to, rewrites
 * the SQL, runs it and hands back the result.
 *
 * Threads: one dal_t is shared by every thread of the application; all
 * functions taking a dal_t are thread-safe.  A dal_result_t or dal_plan_t
 * belongs to the thread that holds it (it may be handed to another thread,
 * but must not be used by two at once).  A dal_prepared_t, dal_table_info_t
 * or dal_datasource_info_t is immutable: any number of threads may read it
 * at once.
 *
 * Errors: every function that can fail returns 0 on success or a negative
 * DAL_E* code, and fills the caller's dal_error_t (which may be NULL when the
 * caller does not care).  Messages name the thing at fault: FILE:LINE for a
 * configuration mistake, the datasource and server for a server error, the
 * plugin file for a plugin error.  Passwords never appear in messages.
 *
 * Ownership is written at every pointer: "borrowed" means dal only reads it
 * during the call; "owned by the caller" means the caller must free it with
 * the named function; "valid until X" means dal owns it and it stays valid
 * until X happens.
 */
#ifndef DAL_DAL_H
#define DAL_DAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DAL_API __attribute__((visibility("default")))
#define DAL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DAL_API
#define DAL_PRINTF(f, a)
#endif

#define DAL_VERSION_MAJOR 0
#define DAL_VERSION_MINOR 1
#define DAL_VERSION_PATCH 0
#define DAL_VERSION_STRING "0.1.0"

/* Library version as "MAJOR.MINOR.PATCH"; static storage. */
DAL_API const char *dal_version(void);

/* ------------------------------------------------------------------ errors */

enum {
    DAL_OK = 0,
    DAL_EINVAL = -1,       /* bad argument from the caller */
    DAL_ENOMEM = -2,       /* out of memory */
    DAL_ECONFIG = -3,      /* configuration file is wrong (message has FILE:LINE) */
    DAL_EPLUGIN = -4,      /* a plugin could not be loaded or initialised */
    DAL_ESQL = -5,         /* dal could not analyse the SQL text */
    DAL_EROUTE = -6,       /* no valid route: missing or contradicting shard value, unknown datasource */
    DAL_ESHARD = -7,       /* the strategy rejected the shard value (negative, out of range, wrong type) */
    DAL_ECONNECT = -8,     /* could not connect to a server */
    DAL_ESERVER = -9,      /* the server returned an error (mysql_errno/sqlstate filled) */
    DAL_EUNSUPPORTED = -10,/* the statement uses something dal cannot run correctly */
    DAL_ESTATE = -11,      /* call not valid now (e.g. a result already consumed) */
    DAL_EIO = -12,         /* file or system call failure */
    DAL_EPARTIAL = -13     /* a multi-node COMMIT (transaction_mode multi) committed on some
                              nodes and not on others: the message names both lists */
};

/* A server's own message is up to 511 bytes (MYSQL_ERRMSG_SIZE); dal puts
 * the datasource and error number in front of it, and both must fit. */
#define DAL_ERROR_MSG_MAX 1024

/* Filled by a failing call.  Plain struct: put one on the stack. */
typedef struct dal_error {
    int code;                      /* DAL_E* (negative), 0 if no error */
    unsigned int mysql_errno;      /* server/client error number for DAL_ESERVER/DAL_ECONNECT, else 0 */
    char sqlstate[6];              /* "HY000"-style state for server errors, else "" */
    char message[DAL_ERROR_MSG_MAX]; /* human-readable, names the thing at fault */
} dal_error_t;

/* Static name of a DAL_E* code ("DAL_ECONFIG"). */
DAL_API const char *dal_strerror(int code);

/*
 * The name of collation number id as the client library knows it
 * ("utf8mb4_unicode_ci" for 224), and in *charset (may be NULL) its
 * character set's; both static.  NULL for a number it does not know.
 * What a MySQL handshake carries is a collation's number, and SET NAMES
 * ... COLLATE takes its name.  Thread-safe.
 */
DAL_API const char *dal_collation_name(unsigned int id, const char **charset);

/*
 * Character sets dal refuses as a client's: big5, cp932, gbk, gb18030,
 * sjis (a byte 0x5C, backslash, can end one of their characters, which
 * dal's byte-wise reading of SQL and escaping of values would take for an
 * escape where the server reads a character and a quote), and ucs2,
 * utf16, utf16le, utf32.  dal_client_charset_check: 0 if value_sql (as a
 * SET of the variable name gives it: a charset's name, quoted or not, or
 * a collation's number) may become the client's character set -- always
 * 0 for a name other than character_set_client and "names" -- else
 * DAL_EINVAL with err's mysql_errno 1115 (ER_UNKNOWN_CHARACTER_SET) and
 * SQLSTATE 42000.  A value that is an expression is refused for those two
 * names.  dal_collation_refused: whether collation number id (a
 * handshake's) is of such a character set.  Thread-safe.
 */
DAL_API int dal_client_charset_check(const char *name, const char *value_sql, dal_error_t *err);
DAL_API int dal_collation_refused(unsigned int id);

/* ----------------------------------------------------------------- logging */

typedef enum dal_log_level {
    DAL_LOG_DEBUG = 0,
    DAL_LOG_INFO = 1,
    DAL_LOG_WARN = 2,
    DAL_LOG_ERROR = 3
} dal_log_level_t;

/*
 * Log callback.  component is a short static name ("config", "plugin",
 * "exec", or a plugin's name); message is borrowed for the call.  May be
 * called from any thread, so the callback must be thread-safe.  The library
 * never prints by itself: with no callback set, warnings and errors go to
 * stderr as "dal: LEVEL: component: message".
 */
typedef void (*dal_log_fn)(void *user, dal_log_level_t level,
                           const char *component, const char *message);

/* Static name of a level ("warn"). */
DAL_API const char *dal_log_level_name(dal_log_level_t level);

/* ------------------------------------------------------------------ values */

typedef enum dal_type {
    DAL_TYPE_NULL = 0,
    DAL_TYPE_INT,      /* signed 64-bit */
    DAL_TYPE_UINT,     /* unsigned 64-bit */
    DAL_TYPE_DOUBLE,   /* finite double */
    DAL_TYPE_STRING,   /* text in the connection charset (utf8mb4) */
    DAL_TYPE_BLOB      /* binary bytes, sent as a hex literal */
} dal_type_t;

/*
 * A parameter value or shard value.  For STRING/BLOB the bytes are borrowed:
 * they must stay valid for the duration of the call they are passed to.
 */
typedef struct dal_value {
    dal_type_t type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const char *ptr; /* borrowed; need not be NUL-terminated */
            size_t len;
        } s;
    } v;
} dal_value_t;

/* Convenience constructors (the string ones borrow s). */
DAL_API dal_value_t dal_null(void);
DAL_API dal_value_t dal_int(int64_t i);
DAL_API dal_value_t dal_uint(uint64_t u);
DAL_API dal_value_t dal_double(double d);
DAL_API dal_value_t dal_str(const char *s);             /* NUL-terminated */
DAL_API dal_value_t dal_strn(const char *s, size_t len);
DAL_API dal_value_t dal_blob(const void *p, size_t len);

/* ---------------------------------------------------------------- handles */

typedef struct dal dal_t;               /* a running configuration; thread-safe */
typedef struct dal_result dal_result_t; /* the result of one statement */
typedef struct dal_plan dal_plan_t;     /* the routes of one statement, for explain */
typedef struct dal_session dal_session_t; /* statements of one thread, with transactions */

/* ------------------------------------------------------------ open / close */

/*
 * Options for dal_open().  Zero-initialise (`dal_open_opts_t o = {0};`) and
 * set what you need; fields are only ever added at the end.
 */
typedef struct dal_open_opts {
    dal_log_fn log;              /* NULL: warnings and errors to stderr */
    void *log_user;              /* passed to log, borrowed */
    dal_log_level_t log_level;   /* least level passed to log (default DEBUG when log is set) */
    const char *plugin_dir;      /* borrowed; overrides [dal] plugin_dir and DAL_PLUGIN_DIR */
} dal_open_opts_t;

/*
 * Read the INI file at path, load the plugins it names and prepare the
 * datasources.  No connection is made yet: servers are contacted on first use.
 * On success *out is owned by the caller (free with dal_close).  On failure
 * *out is NULL and err says what is wrong (FILE:LINE for config mistakes).
 * opts may be NULL.
 */
DAL_API int dal_open(const char *path, const dal_open_opts_t *opts,
                     dal_t **out, dal_error_t *err);

/* Close connections, destroy plugin instances, unload plugins.  All results
 * must have been freed.  NULL is a no-op. */
DAL_API void dal_close(dal_t *dal);

/* Parse and validate the file without keeping anything: the work of
 * dal_open minus the handle.  Used by `dal check`. */
DAL_API int dal_check_config(const char *path, const dal_open_opts_t *opts,
                             dal_error_t *err);

/* -------------------------------------------------------- dynamic config */

/*
 * Re-read the INI file given to dal_open and switch to it while the program
 * runs.  The whole new configuration is built beside the running one (every
 * plugin loaded and initialised, with [dal] validate_connect = true every new
 * or changed datasource connected to); only if all of it succeeds does it
 * replace the running one, atomically.  Statements and transactions already
 * running finish on the old configuration, which is freed when the last of
 * them ends.  Datasources whose settings did not change keep their pools and
 * connections.  A change of a table's shard layout (counts, strategy or its
 * parameters, datasource group) moves where rows live: it is refused as a
 * resharding unless the new file says `[dal] allow_reshard = true`.
 *
 * On failure the running configuration stays in force untouched, err says
 * what is wrong (FILE:LINE), the error is logged and monitors get a
 * DAL_EVENT_RELOAD with the error code.  With `[dal] watch = true` (read at
 * dal_open) the library reloads by itself when the file changes, including
 * when an editor replaces it by renaming a new file over it.
 */
DAL_API int dal_reload(dal_t *dal, dal_error_t *err);

/* Reloads done and failed since dal_open. */
DAL_API void dal_reload_stats(dal_t *dal, uint64_t *reloads, uint64_t *failures);

/*
 * The cache of analysed statements (shared by the threads of one dal_t,
 * keyed by the SQL text; see [dal] sql_cache_bytes and
 * sql_cache_max_statement in docs/configuration.md).  Figures since
 * dal_open, except entries and bytes: what it holds now.
 */
typedef struct dal_sql_cache_stats {
    uint64_t hits, misses;  /* lookups of the shared cache (a thread's own few
                               last statements are found before it, uncounted) */
    uint64_t entries;       /* statements held */
    uint64_t bytes;         /* what they hold: each analysis with its copy of the text,
                               plus the text's length again for its normalised text */
    uint64_t evictions;     /* entries let go to make room (count or bytes) */
    uint64_t uncached;      /* statements analysed and not kept: longer than
                               sql_cache_max_statement, or alone over sql_cache_bytes */
    uint64_t max_bytes;     /* sql_cache_bytes in force */
    uint64_t max_statement; /* sql_cache_max_statement in force */
} dal_sql_cache_stats_t;

/* Fill *out (owned by the caller).  Thread-safe.  0 or DAL_EINVAL. */
DAL_API int dal_sql_cache_stats(dal_t *dal, dal_sql_cache_stats_t *out);

/*
 * One difference between two configuration files: what ("datasource",
 * "table", "monitor", "idgen", "plugin_dir", ...), its name, and the change
 * in words ("added", "removed", "master 127.0.0.1:3306 -> 127.0.0.1:3307",
 * "RESHARD: table_shard_num 100 -> 200", ...).  Strings borrowed for the call.
 */
typedef void (*dal_diff_fn)(void *user, const char *what, const char *name, const char *change);

/*
 * Check candidate as dal_check_config does (every plugin loaded), then
 * report how it differs from running.  Returns 0, or the error that makes
 * candidate unusable.  A resharding is reported with a change starting with
 * "RESHARD" and, without allow_reshard in candidate, returns DAL_ECONFIG.
 */
DAL_API int dal_config_diff(const char *running, const char *candidate,
                            const dal_open_opts_t *opts, dal_diff_fn fn, void *user,
                            dal_error_t *err);

/* -------------------------------------------------- configuration sources */

/*
 * Wherever a configuration path is accepted (dal_open, dal_check_config,
 * dal_config_diff, `dal -c`, `dal-proxy -c`), a location may name a store
 * instead of a file:
 *
 *     etcd://HOST:PORT[,HOST:PORT...]/PREFIX[?OPTION=VALUE&...]
 *     etcds://...   the same over TLS (options cacert, cert, key)
 *
 * served by a source plugin (source_etcd.so; see docs/configuration.md for
 * every option and the failure semantics, docs/plugins.md to write one).
 * The document is the whole INI text, read at dal_open and watched: every
 * new version is checked and swapped in exactly as dal_reload does with a
 * file, and a bad one is refused while the last good one keeps serving.
 * The option cache=PATH keeps the last accepted document in PATH, from
 * which dal_open starts (with a warning) when the store cannot be reached.
 */

/* The source of a running dal_t, for monitoring and tests. */
typedef struct dal_source_info {
    const char *location; /* the location without options; valid while dal lives */
    const char *state;    /* "ok" or "unreachable" (static) */
    int64_t revision;     /* the store's revision of the document in force; 0: none (file) */
    uint64_t resyncs;     /* whole re-reads after the store compacted past our revision */
    uint64_t rejected;    /* versions refused (as dal_reload_stats's failures) */
    int from_cache;       /* running from the cache file since dal_open, nothing newer yet */
} dal_source_info_t;

/* Fill *out.  Thread-safe.  0 or DAL_EINVAL. */
DAL_API int dal_source_info(dal_t *dal, dal_source_info_t *out);

/* A configuration store opened on its own, for tools (`dal config`). */
typedef struct dal_source dal_source_t;

/* Open location's source; nothing is read yet.  *out is owned by the
 * caller (dal_source_close). */
DAL_API int dal_source_open(const char *location, const dal_open_opts_t *opts,
                            dal_source_t **out, dal_error_t *err);
DAL_API void dal_source_close(dal_source_t *src);

/*
 * The document at revision (0: the newest).  *text (NUL-terminated, *len
 * bytes) is owned by the caller: free() it.  *name (may be NULL) gets what
 * messages call this version, owned by the caller too; *rev its revision.
 */
DAL_API int dal_source_get(dal_source_t *src, int64_t revision, char **text, size_t *len,
                           char **name, int64_t *rev, dal_error_t *err);

/* Store text as the new version if the current one is expect_revision (0:
 * none must exist; -1: whatever it is); else DAL_ESTATE and nothing is
 * written.  *revision: the new version's.  Does not check text: callers
 * run dal_check_config first (`dal config push` does). */
DAL_API int dal_source_put(dal_source_t *src, const char *text, size_t len,
                           int64_t expect_revision, int64_t *revision, dal_error_t *err);

/* One kept version: revision, count of versions so far, size in bytes. */
typedef void (*dal_history_fn)(void *user, int64_t revision, int64_t version, size_t len);

/* Each version the store still keeps, newest first. */
DAL_API int dal_source_history(dal_source_t *src, dal_history_fn fn, void *user,
                               dal_error_t *err);

/* A version seen by dal_source_follow: name and text borrowed for the call.
 * Return non-zero to stop following. */
typedef int (*dal_follow_fn)(void *user, const char *name, const char *text, size_t len,
                             int64_t revision);

/* Call fn with the newest version, then with every later one as the store
 * reports it, until fn returns non-zero.  Blocks the calling thread;
 * outages are retried (and logged) without end. */
DAL_API int dal_source_follow(dal_source_t *src, dal_follow_fn fn, void *user,
                              dal_error_t *err);

/* dal_config_diff for two documents in memory (names take the files'
 * place in messages): candidate is checked as dal_check_config would. */
DAL_API int dal_config_diff_text(const char *running_name, const char *running, size_t running_len,
                                 const char *candidate_name, const char *candidate,
                                 size_t candidate_len, const dal_open_opts_t *opts,
                                 dal_diff_fn fn, void *user, dal_error_t *err);

/* ------------------------------------------------------------- statements */

/*
 * Per-statement options.  Zero-initialise; fields only ever added at the end.
 *
 * shard_value: the value of the table's shard key (MTDDL's @ShardOn).  It
 *   chooses the data node and physical table of every sharded table in the
 *   statement.
 * datasource: run on this datasource node, by name (MTDDL's @DataSource).  If
 *   a shard value is also given and routes elsewhere, the call fails.
 * trace_id: follows the statement to the servers and the monitors (MTDDL's
 *   tracing).
 * server: which server of the datasource runs the statement (read-write
 *   splitting, see docs/routing.md).
 */

/* Values of dal_query_opts_t.server. */
enum {
    DAL_SERVER_AUTO = 0,   /* by the rules: writes, locking reads, side-effect functions
                              and read-write transactions on the master; other reads on
                              a replica in rotation (else the master) */
    DAL_SERVER_MASTER = 1, /* the master, whatever the statement */
    DAL_SERVER_REPLICA = 2 /* a replica in rotation even where the rules or
                              read-your-writes would pick the master (the master when
                              none is in rotation); a write is DAL_EROUTE */
};

typedef struct dal_query_opts {
    const dal_value_t *shard_value; /* borrowed; NULL: none */
    const char *datasource;         /* borrowed; NULL: chosen by routing */
    /* borrowed; NULL: generated when a monitor plugin is enabled.  Sent in
     * front of every physical statement as a comment (`/\* trace_id=... *\/`)
     * and passed to monitor events.  At most 64 characters of
     * [A-Za-z0-9_.:-]; anything else is DAL_EINVAL (it goes into the SQL). */
    const char *trace_id;
    /* DAL_SERVER_*: 0 (AUTO) unless set; overrides the hints
     * `/\*+ dal master *\/`, `/\*+ dal replica *\/` and `/\*+ dal server=... *\/`. */
    int server;
    /* Nonzero: run nothing, describe.  The statement is analysed and routed
     * as for a run, then its first route's SQL (with each ? kept) is
     * prepared on a connection of that route's server (COM_STMT_PREPARE,
     * the handle closed at once), so the server neither reads nor writes
     * and no session counter moves as an execution would move it.  The
     * result has the prepared statement's columns and no rows (no columns
     * for a statement that returns none).  With autocommit 0 it opens no
     * transaction; in a session's transaction or on its pinned
     * connections it is prepared there (a transaction without a
     * connection on that node begins there first, as for a run).  A statement the server cannot
     * prepare fails with the server's error (1295 ER_UNSUPPORTED_PS).
     * dal-proxy describes its clients' COM_STMT_PREPARE so. */
    int describe;
} dal_query_opts_t;

/*
 * Run one SQL statement.  `?` placeholders in sql are replaced by params[i],
 * escaped for the server so that a value can never break out of its literal.
 * nparams must equal the number of placeholders.  On success *out (owned by
 * the caller, free with dal_result_free) holds the rows of a SELECT-like
 * statement or the affected rows of a write.  opts may be NULL.  On a
 * datasource with replicas, a plain SELECT runs on a replica and everything
 * else on the master (opts->server overrides); a read after a write of the
 * same thread sees the write (read_your_writes, see docs/routing.md).
 *
 * When dal_query returns, every data node of the statement has run it (an
 * error of any of them is returned here).  The rows of a statement on one
 * node have been received in full and its connection is back in its pool.
 * A statement on several nodes, at most [dal] max_parallel of them, streams
 * its rows: they are read from the nodes as dal_result_next asks for them,
 * and each node's connection stays with the result until its rows are read
 * to the end or the result is freed.  So read or free a result promptly,
 * and let a pool hold as many connections as a statement has routes.  With
 * more routes than max_parallel, each node's rows are received in full
 * before dal_query returns.
 *
 * A CALL's result is its procedure's first result set (or its status when
 * it returns none); the others follow it (dal_result_next_set).  They are
 * all read before dal_query returns, so the procedure has finished by
 * then; an error it raises after its first rows is dal_query's error (a
 * session may keep the sets before it instead: dal_session_keep_sets).
 */
DAL_API int dal_query(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
                      const dal_value_t *params, size_t nparams,
                      dal_result_t **out, dal_error_t *err);
/*
 * dal_query of the len bytes at sql (borrowed; need not be NUL-terminated),
 * for text that may hold NUL bytes, as a MySQL client's COM_QUERY may:
 * dal takes them as the server does.  A NUL inside a '..' or ".." string or
 * a C-style comment is part of it and reaches the server as it is; one
 * anywhere else (outside, inside a `quoted identifier`, after a -- or #
 * comment's NUL) is DAL_ESQL, "syntax error: NUL byte outside a quoted
 * string at offset N", and nothing runs -- except a NUL followed only by
 * ';' and whitespace, which ends the statement there, as on the server.
 * dal_query(sql) is dal_query_len(sql, strlen(sql)).
 */
DAL_API int dal_query_len(dal_t *dal, const dal_query_opts_t *opts, const char *sql, size_t len,
                          const dal_value_t *params, size_t nparams,
                          dal_result_t **out, dal_error_t *err);

/* Like dal_query but for statements whose result the caller ignores. */
DAL_API int dal_exec(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
                     const dal_value_t *params, size_t nparams,
                     uint64_t *affected_rows, dal_error_t *err);

/* ------------------------------------------------------ prepared statements */

/*
 * A statement analysed once, for a service that runs the same statement
 * many times: dal_query finds a statement's analysis by hashing its text
 * into a cache shared by all threads; a prepared statement holds the
 * analysis, so running it skips the hash, the lookup and the cache's lock.
 * Everything else is as dal_query: routing against the configuration in
 * force at each execution (a reload applies to prepared statements too),
 * `?` values escaped into the SQL sent (text protocol: nothing is prepared
 * on the servers, so a handle costs them nothing and survives reconnects).
 *
 * A handle is immutable: any number of threads may run it at once, with
 * the dal_t it was prepared on or that dal_t's sessions.  Free it with
 * dal_prepared_free before dal_close.
 */
typedef struct dal_prepared dal_prepared_t;

/* Analyse sql (any statement dal_query accepts, one at a time) into *out
 * (owned by the caller).  DAL_ESQL when it cannot be analysed. */
DAL_API int dal_prepare(dal_t *dal, const char *sql, dal_prepared_t **out, dal_error_t *err);
/* dal_prepare of the len bytes at sql, NUL bytes taken as dal_query_len
 * takes them. */
DAL_API int dal_prepare_len(dal_t *dal, const char *sql, size_t len, dal_prepared_t **out,
                            dal_error_t *err);
/* dal_prepare_len of a session's statement: the text read as the session's
 * sql_mode reads it (with NO_BACKSLASH_ESCAPES a backslash escapes nothing
 * in a string; dal_session_status), as a server parses a statement
 * prepared in it.  The handle is the session's dal_t's, run as any. */
DAL_API int dal_session_prepare_len(dal_session_t *s, const char *sql, size_t len,
                                    dal_prepared_t **out, dal_error_t *err);
DAL_API void dal_prepared_free(dal_prepared_t *p);
/* The number of `?` placeholders: what nparams must be. */
DAL_API size_t dal_prepared_param_count(const dal_prepared_t *p);
/* dal_query with a prepared statement instead of text. */
DAL_API int dal_query_prepared(dal_t *dal, const dal_query_opts_t *opts,
                               const dal_prepared_t *p, const dal_value_t *params,
                               size_t nparams, dal_result_t **out, dal_error_t *err);

/* --------------------------------------------------------------- sessions */

/*
 * A session runs statements for one thread at a time and carries
 * transactions.  In transaction_mode single (dal_begin_mode) a transaction
 * writes on one data node: the session keeps each node's connection from
 * the transaction's first statement there until COMMIT or ROLLBACK, reads
 * may go to any node (each in that node's own transaction), and a write
 * that routes to a second node (or to several) fails with DAL_EROUTE while
 * the transaction stays open and usable (for instance to roll it back).  Outside a
 * transaction a session behaves like dal_query, and its reads see what the
 * session wrote (read_your_writes).
 *
 * BEGIN / START TRANSACTION / COMMIT / ROLLBACK given as SQL to
 * dal_session_query do the same as the calls below, except that BEGIN in
 * an open transaction commits it first, as a server does (dal_begin
 * refuses instead); so does DDL, but of a temporary table.  dal_query refuses them: a transaction needs a
 * session.
 */

/* *out owned by the caller (dal_session_close).  Must be closed before
 * dal_close.  The process's first session, or statement, when no
 * connection was made yet, makes one to learn the servers' global sql_mode
 * (how its statements' strings read: dal_session_no_backslash_escapes);
 * a server it cannot reach is not an error here. */
DAL_API int dal_session_open(dal_t *dal, dal_session_t **out, dal_error_t *err);
/* Rolls back an open transaction and gives the pinned connections back
 * (see below).  s is transferred; NULL is a no-op. */
DAL_API void dal_session_close(dal_session_t *s);

/*
 * Pinning.  Outside a transaction each statement takes a pooled connection
 * and the pool resets it afterwards, so what a statement leaves in its
 * server session would be gone by the next one.  A statement that leaves
 * (or reads) such state pins the master connection of each data node it
 * runs on to the session, until dal_session_close or dal_session_reset:
 *  - user variables: `SET @a = ...`, `@a := ...`, `SELECT ... INTO @a`, and
 *    any statement reading one (`SELECT @a`);
 *  - CREATE TEMPORARY TABLE (a name dal's configuration does not know routes
 *    to the default datasource, so the table's later statements go there);
 *  - LOCK TABLE(S) (of tables wholly on the default datasource; naming a
 *    sharded table it is refused, as every statement dal does not analyse);
 *  - GET_LOCK();
 *  - PREPARE name FROM ... (EXECUTE and DEALLOCATE PREPARE then run on the
 *    pinned connection);
 *  - HANDLER t OPEN;
 *  - SHOW [SESSION | LOCAL] STATUS, FLUSH STATUS,
 *    information_schema.SESSION_STATUS (the session status counters are
 *    the connection's);
 *  - XA START (until XA COMMIT or XA ROLLBACK succeeds there; meanwhile a
 *    statement naming no table runs on its node, and one on another node
 *    fails with DAL_EUNSUPPORTED, as it would run outside the XA).
 * From then on every statement of the session that runs on a pinned node
 * runs on its pinned connection (reads too: it is the master's), its
 * transactions on that node too (COMMIT and ROLLBACK keep the pin), and
 * the session variables (dal_session_set_var) stay set on it.  A statement
 * over several nodes uses the pinned connections of the pinned ones and
 * pooled ones for the others (a statement that pins, on several nodes,
 * pins each).  User variables live on one node, the first where the
 * session used one: a statement naming no table that uses them runs there
 * (unless a datasource was chosen), and one that uses them elsewhere, or
 * on several nodes, fails with DAL_EUNSUPPORTED rather than read another
 * connection's NULLs.  A pinned connection that dies takes its state with
 * it: statements on that node fail with DAL_ESTATE until
 * dal_session_reset.  A reload leaves the session on its pinned
 * connections (found by datasource name) until it ends or resets.  The
 * cost: one held connection per pinned node for the session's lifetime;
 * a session that never pins costs nothing more.
 */
/* COM_RESET_CONNECTION for a session (what dal-proxy does for it): rolls back an open transaction,
 * gives the pinned connections back to their pools (which reset them:
 * user variables, temporary tables, locks and an XA transaction go),
 * forgets the session variables and sets autocommit back to 1.  A
 * connection pinned for session status reads (SHOW STATUS) is reset in
 * place (COM_RESET_CONNECTION) and stays pinned, so its counters restart
 * at 0 and go on counting the session's statements, as a server's do.
 * 0, or DAL_EINVAL for NULL. */
DAL_API int dal_session_reset(dal_session_t *s, dal_error_t *err);
/* The number of connections pinned to s (0 for NULL); a lost one does
 * not count. */
DAL_API size_t dal_session_pinned(const dal_session_t *s);
DAL_API int dal_session_query(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                              const dal_value_t *params, size_t nparams,
                              dal_result_t **out, dal_error_t *err);
/* dal_session_query of the len bytes at sql (borrowed; need not be
 * NUL-terminated), NUL bytes taken as dal_query_len takes them: what
 * dal-proxy runs for a client's COM_QUERY. */
DAL_API int dal_session_query_len(dal_session_t *s, const dal_query_opts_t *opts,
                                  const char *sql, size_t len, const dal_value_t *params,
                                  size_t nparams, dal_result_t **out, dal_error_t *err);
/*
 * The server's words for a text dal refused as unreadable: when err holds
 * DAL_ESQL (dal could not analyse sql) or DAL_EUNSUPPORTED, sql[0..len) is
 * prepared (COM_STMT_PREPARE, the handle closed at once: nothing runs) on
 * the master of the session's default datasource (any datasource when
 * there is none), with the session's variables.  When the server's parser
 * refuses it (1064 ER_PARSE_ERROR, 1149), err becomes that error
 * (DAL_ESERVER, mysql_errno, sqlstate, the server's message); otherwise
 * err stays as it was.  Returns err->code.  What dal-proxy answers for a
 * text dal cannot read, as a server would.  sql is borrowed for the call
 * and may hold NUL bytes (it is read by its length, as
 * dal_session_query_len reads it).  Not thread-safe for one session, as
 * every dal_session_* call.
 */
DAL_API int dal_session_syntax_error(dal_session_t *s, const char *sql, size_t len,
                                     dal_error_t *err);
DAL_API int dal_session_exec(dal_session_t *s, const dal_query_opts_t *opts, const char *sql,
                             const dal_value_t *params, size_t nparams,
                             uint64_t *affected_rows, dal_error_t *err);
/* dal_session_query with a prepared statement (BEGIN, COMMIT and ROLLBACK
 * prepared work too). */
DAL_API int dal_session_query_prepared(dal_session_t *s, const dal_query_opts_t *opts,
                                       const dal_prepared_t *p, const dal_value_t *params,
                                       size_t nparams, dal_result_t **out, dal_error_t *err);
/* Start a transaction (nothing is sent until its first statement).  Every
 * statement of it runs on the master of its node. */
DAL_API int dal_begin(dal_session_t *s, dal_error_t *err);
/* Start a read-only transaction (START TRANSACTION READ ONLY, which
 * dal_session_query accepts too): its first statement picks a replica of
 * its node as a read would (read-your-writes included), and every statement
 * of it runs there, on one consistent snapshot.  Writes fail on the server. */
DAL_API int dal_begin_read_only(dal_session_t *s, dal_error_t *err);

/*
 * How a transaction spans data nodes ([dal] transaction_mode, the default
 * for a session; `SET dal_transaction_mode = single|multi|xa` or
 * dal_session_set_var changes it for the session's next transactions):
 *  - DAL_TXN_SINGLE: writes on one node (the first written); reads on any,
 *    each node in a backend transaction of its own, opened by the
 *    transaction's first statement there and ended with it; a write for a
 *    second node (or for several) is refused.
 *  - DAL_TXN_MULTI: a backend transaction on each node the transaction
 *    touches (opened by its first statement there); COMMIT commits them one
 *    after another.  If one fails after others committed, dal_commit
 *    returns DAL_EPARTIAL naming the nodes that committed and those that did
 *    not.  No atomicity across nodes.
 *  - DAL_TXN_XA: two-phase commit.  Each touched node gets an XA branch;
 *    COMMIT prepares all, writes the decision to [dal] xa_log, then commits
 *    each.  A failure before the decision rolls every branch back (the
 *    error says so); after it the transaction is committed: a branch that
 *    could not commit now is committed by recovery (dal_xa_recover).  A
 *    transaction on one node commits in one phase and writes no decision.
 * In every mode isolation is each node's own: there is no snapshot across
 * nodes (docs/transactions.md).
 */
typedef enum dal_txn_mode { DAL_TXN_SINGLE = 0, DAL_TXN_MULTI = 1, DAL_TXN_XA = 2 } dal_txn_mode_t;

/* dal_begin with the mode of this transaction only. */
DAL_API int dal_begin_mode(dal_session_t *s, dal_txn_mode_t mode, dal_error_t *err);

/* What one dal_xa_recover pass did and found (counts). */
typedef struct dal_xa_report {
    unsigned committed;   /* branches with a commit decision, committed now */
    unsigned rolled_back; /* branches without one, older than xa_grace or their coordinator
                             gone, rolled back now */
    unsigned waiting;     /* branches without a decision, younger than xa_grace, their
                             coordinator alive: left alone */
    unsigned failed;      /* branches an action failed on (a node down: tried again next pass) */
    unsigned pruned;      /* decisions removed from the log: no branch of theirs is left */
    unsigned unreachable; /* nodes whose XA RECOVER could not be read */
} dal_xa_report_t;

/*
 * Create the decision log table (dal_xa_log), the recovery lease table
 * (dal_xa_lease) and the table of instances (dal_xa_instance) in the
 * datasource [dal] xa_log names; nothing happens to those that exist (a
 * lease table of an older dal gets its current columns).  DAL_ECONFIG
 * without xa_log.  (With xa_log, dal_open
 * starts background recovery: [dal] xa_recover_interval.)
 */
DAL_API int dal_xa_init(dal_t *dal, dal_error_t *err);

/*
 * Finish the prepared XA branches dal left on every node (`XA RECOVER`),
 * whichever dal instance made them: commit those whose global id has a
 * commit decision in the log; roll back the others once older than grace_ms
 * (a coordinator still running is not disturbed; pass UINT32_MAX for
 * [dal] xa_grace), or at once when their coordinator is gone (its lock
 * on the log's server is free), after recording the rollback so that a late coordinator
 * cannot commit; prune decisions with no branch left.  Fills *report
 * (caller's) when not NULL.  Thread-safe.  0 when every node answered and
 * every action succeeded; else the first error (the pass goes on).
 */
DAL_API int dal_xa_recover(dal_t *dal, uint32_t grace_ms, dal_xa_report_t *report,
                           dal_error_t *err);

/* One XA branch in doubt (dal_xa_list). */
typedef struct dal_xa_branch {
    char datasource[65];  /* the node XA RECOVER was read on */
    char gtrid[65];       /* dal's global id: dal:HOST:PID:UNIXTIME:N */
    char decision;        /* 'C' commit, 'R' rollback recorded, 0 none yet */
    uint64_t age_s;       /* seconds since the transaction began (from its id) */
} dal_xa_branch_t;

/* The branches in doubt on every node: *out (owned by the caller, free())
 * holds *n of them.  Nodes that do not answer are an error. */
DAL_API int dal_xa_list(dal_t *dal, dal_xa_branch_t **out, size_t *n, dal_error_t *err);

/* Who holds the recovery lease (dal_xa_lease_info). */
typedef struct dal_xa_lease {
    char holder[65];      /* the instance in the lease row, "HOST:PID"; "" if none yet */
    char since[20];       /* when it took the lease, the log server's clock; "" if none */
    uint64_t held_s;      /* seconds since then */
    int alive;            /* the holder holds the lease's lock now (it is running) */
    int locked;           /* some instance holds the lock (alive, or not recorded yet) */
} dal_xa_lease_t;

/* The recovery lease as the log's server sees it now, into *out
 * (caller's).  DAL_ECONFIG without xa_log. */
DAL_API int dal_xa_lease_info(dal_t *dal, dal_xa_lease_t *out, dal_error_t *err);
DAL_API int dal_commit(dal_session_t *s, dal_error_t *err);
DAL_API int dal_rollback(dal_session_t *s, dal_error_t *err);
/* Non-zero while a transaction is open. */
DAL_API int dal_in_transaction(const dal_session_t *s);
/* The datasource node of the open transaction, or NULL (none yet): in
 * single mode the node it wrote on, else the node of its first statement;
 * in multi and xa the node of its first branch.  Owned
 * by the session; valid until the transaction ends (dal_commit,
 * dal_rollback, or dal_session_close). */
DAL_API const char *dal_transaction_datasource(const dal_session_t *s);

/*
 * The session's transaction state as SERVER_STATUS_* bits (see
 * dal_result_server_status): DAL_SERVER_STATUS_IN_TRANS while a
 * transaction is open (from BEGIN, or from the first statement when
 * autocommit is 0, to COMMIT or ROLLBACK), DAL_SERVER_STATUS_IN_TRANS_READONLY
 * with it for a read-only one, DAL_SERVER_STATUS_AUTOCOMMIT unless
 * autocommit was set to 0.  Taken from dal's session, not from a server:
 * outside a transaction the session holds no connection, and after BEGIN
 * none until its first statement.  Also DAL_SERVER_STATUS_NO_BACKSLASH_ESCAPES
 * while the session's sql_mode has it (set by dal_session_set_var, or the
 * servers' default as their last OK for the session said), which tells a
 * client how to escape strings.  0 for NULL.
 */
DAL_API unsigned int dal_session_status(const dal_session_t *s);
/* Non-zero while the session's sql_mode has NO_BACKSLASH_ESCAPES: that bit
 * of dal_session_status alone, read on every statement by a front end that
 * splits or scans a client's text.  0 for NULL. */
DAL_API int dal_session_no_backslash_escapes(const dal_session_t *s);
/* What dal_session_status gives for a new session of dal, before its
 * first statement: DAL_SERVER_STATUS_AUTOCOMMIT, with
 * DAL_SERVER_STATUS_NO_BACKSLASH_ESCAPES when the servers' global sql_mode
 * has it (as the last connection the process made or reset found it), for
 * a status announced before a session exists (a proxy's handshake). */
DAL_API unsigned int dal_new_session_status(const dal_t *dal);

/*
 * Stop the statement s is running, from another thread (the one thread
 * that may call anything else on s is busy running it): each server that
 * runs part of it now -- executing it, or still sending rows that
 * dal_result_next has not read -- gets KILL QUERY for that connection,
 * sent on a connection of dal's own.  The statement then fails (or its
 * rows end) with the server's error 1317, "Query execution was
 * interrupted", as on a server; the session stays usable, and a
 * transaction stays open.  0 when the kills were sent, also when nothing
 * was running; else the first server's error (the others are tried all
 * the same).  Thread-safe; s must stay open during the call.
 */
DAL_API int dal_session_cancel(dal_session_t *s, dal_error_t *err);

/*
 * The client s answers for has gone (a front end such as dal-proxy saw its
 * connection close while s runs its statement): the servers running part
 * of the statement now, and any that s's statements reach later, see
 * their own client go -- dal shuts the sending side of those connections
 * -- and do what a server does when its client goes: a wait of the
 * statement (GET_LOCK, a metadata lock, SLEEP) ends, another statement
 * runs to its end.  Its answer is still read; those connections are then
 * closed, never given back to the pool, and s's later statements fail.
 * Thread-safe (the thread running s's statement may call it from inside
 * a wait, dal_set_io_wait); s must stay open during the call.  It never
 * waits for a dal_session_cancel of s on another thread (which takes up to
 * the servers' connect and read timeouts): that call shuts the connections
 * as it ends.
 */
DAL_API void dal_session_hang_up(dal_session_t *s);

/*
 * A server thread running part of a session's statement (a backend
 * connection of dal's), and its State in that server's process list.
 */
typedef struct dal_backend_thread {
    char datasource[64];  /* the datasource's name (cut to 63 bytes) */
    int replica;          /* the server: -1 the master, else the replica's index */
    unsigned long id;     /* the server's thread id of the connection */
    char state[64];       /* the server's State (cut to 63 bytes), filled by
                             dal_backend_states; "" until then, or when the
                             server no longer lists the thread */
} dal_backend_thread_t;

/*
 * The server threads running s's statement now (as dal_session_cancel
 * would stop them), at most cap of them into out (the caller's), their
 * state "": their number, which may exceed cap.  Thread-safe; s must stay
 * open during the call.
 */
DAL_API size_t dal_session_backend_threads(dal_session_t *s, dal_backend_thread_t *out,
                                           size_t cap);

/*
 * Fill the state of each of v[0..n) (from dal_session_backend_threads of
 * any sessions of dal) from its server's process list: one query per
 * server named in v, on a pooled connection of the configuration in force
 * (a datasource a reload removed is skipped).  0, or the first server's
 * error after trying all (the states read are kept).  Thread-safe.
 */
DAL_API int dal_backend_states(dal_t *dal, dal_backend_thread_t *v, size_t n, dal_error_t *err);

/*
 * Keep the servers' warnings of each statement of s in its result
 * (dal_result_warning_rows), on = 1, or not (0, the default).  dal gives a
 * connection back to its pool once a statement's answer is in, so a later
 * SHOW WARNINGS would run on another connection; with this, dal reads
 * SHOW WARNINGS on the statement's own connection first, one more round
 * trip for each node that reported warnings (none otherwise).  Call it
 * from the thread that uses s, as every dal_session_* call.
 */
DAL_API void dal_session_keep_warnings(dal_session_t *s, int on);

/*
 * A CALL whose procedure raises an error after returning some result sets
 * (SIGNAL after a SELECT): with on = 1, the statement of s succeeds and
 * its result chain (dal_result_next_set) holds the sets before the error
 * and, last, a set that is the error (dal_result_set_error), as a server
 * sends them to its client; with 0 (the default) the statement fails with
 * the error and its sets are dropped.  Either way every set was read and
 * the procedure has finished when the call returns.  dal-proxy sets it.
 * Call it from the thread that uses s, as every dal_session_* call.
 */
DAL_API void dal_session_keep_sets(dal_session_t *s, int on);

/*
 * A result relay: a front end that speaks the MySQL protocol to its own
 * client (dal-proxy) takes a plain read's result as the server's packets,
 * unparsed, instead of a dal_result_t's rows.  The statement qualifies when
 * it is a text statement given with no parameters and no options
 * (dal_session_query / _len with opts and params NULL), a SELECT that runs
 * on exactly one connection with the caller's text byte for byte (nothing
 * rewritten: an unsharded table or none), that leaves no session state
 * (no `@a :=`, GET_LOCK, ...), whose columns dal names as the server does
 * (no merge, no renaming, no logical table name for a physical one), and
 * when the connection has MariaDB's extended metadata
 * (MARIADB_CLIENT_EXTENDED_METADATA) or sink->flags does not ask for it: a
 * sink without DAL_RELAY_EXTENDED_METADATA on a connection with it gets
 * each column definition without its extended type info block, as a
 * server writes it for a client that did not ask.  Every other statement
 * runs as without a sink.
 *
 * A sink with DAL_RELAY_BINARY takes instead the binary rows of a
 * prepared statement: dal_session_query_prepared (no options) whose one
 * route runs as a server-side prepared statement with the prepared text
 * byte for byte, under the same conditions.  Its column definitions are
 * dal's description of the server's columns (as dal_result_column_info
 * gives them, without the client library's NUM_FLAG), its rows the
 * server's binary row packets.  Text statements never relay to it.
 *
 * For a relayed statement, packet is called, in order, with: the column
 * count packet (DAL_RELAY_COLUMN_COUNT), each column definition
 * (DAL_RELAY_COLUMN), DAL_RELAY_COLUMNS_END (data NULL: where a client
 * without CLIENT_DEPRECATE_EOF takes an EOF), then each text row (binary
 * row for a DAL_RELAY_BINARY sink) (DAL_RELAY_ROW).  data (len bytes) is
 * the payload without its header, borrowed for the call only.  A non-zero
 * return means the sink takes no more (its client is gone): the rest is
 * read and dropped.  The end of the rows (warnings, status) is read by dal
 * and is the result's: the statement returns a result for which
 * dal_result_relayed is 1, with no columns or rows of its own, its warning
 * count and server status as usual; the caller writes the end itself.  A
 * server error after some packets were relayed is the statement's error,
 * as without a sink (the caller sends it after them, as a server does); a
 * lost connection is not run again once anything was relayed.
 *
 * sink and ctx are borrowed until replaced: set them just around the
 * statements meant for it and NULL after (dal-proxy does, around a
 * client's COM_QUERY, and with DAL_RELAY_BINARY around
 * COM_STMT_EXECUTE).  The callback runs on the thread running the
 * statement, inside the call.  Programs that set no sink see no change.
 */
typedef enum dal_relay_part {
    DAL_RELAY_COLUMN_COUNT,
    DAL_RELAY_COLUMN,
    DAL_RELAY_COLUMNS_END,
    DAL_RELAY_ROW
} dal_relay_part_t;

/* dal_relay_t.flags: the sink's client takes MariaDB's extended metadata
 * in column definitions. */
#define DAL_RELAY_EXTENDED_METADATA 1u
/* dal_relay_t.flags: the sink takes a prepared statement's binary rows
 * (and never a text statement's rows). */
#define DAL_RELAY_BINARY 2u

typedef struct dal_relay {
    unsigned int flags;  /* DAL_RELAY_* */
    int (*packet)(void *ctx, dal_relay_part_t part, const unsigned char *data, size_t len);
} dal_relay_t;

/* Set (or with NULL, clear) s's relay sink; see dal_relay_t. */
DAL_API void dal_session_set_relay(dal_session_t *s, const dal_relay_t *sink, void *ctx);

/*
 * When the session's last statement failed with a server's error and the
 * session keeps warnings (dal_session_keep_warnings): row i of that
 * server's SHOW WARNINGS after it, its diagnostics area (the conditions
 * the statement raised before the error, then the error), as
 * dal_result_warning_row; strings borrowed until the session's next
 * statement.  DAL_EINVAL for i out of range (none after a success).
 */
DAL_API int dal_session_error_row(const dal_session_t *s, size_t i, const char **level,
                                  unsigned int *code, const char **message);

/*
 * The logical database of the session's statements (as USE): name (copied)
 * is a [schema NAME] section of the configuration in force, or NULL or ""
 * for the top level -- the [table] sections without schema = and [dal]
 * default_datasource, where every session starts and where a program that
 * never calls this stays.  In a [schema], an unqualified table name is one
 * of its [table] sections (schema = NAME) or else a table of its
 * default_datasource; a table of another schema is refused (DAL_EROUTE), as
 * is every statement once a reload has removed the [schema].  0, or
 * DAL_EINVAL for an unknown name (the session's schema is then unchanged).
 * A name no [schema] declares is, when [dal] server_schemas names a
 * datasource, that datasource's own database: the session pins a
 * connection of its master and selects the database there (the server's
 * error, 1049, when it has none so named: the schema is then unchanged);
 * its statements then run there as written, naming that database's
 * tables, until it chooses another schema (the connection goes back to
 * its pool in its own database).  DROP DATABASE of it leaves the session
 * in no database, as a server's: the pinned connection, in none, stays
 * the session's, and its statements run there as written (`SELECT
 * DATABASE()` NULL, @@collation_database the server's; an unqualified
 * table name gets the server's 1046 No database selected; `db.table` of a
 * logical database routes as in it) until it chooses a schema (NULL or ""
 * included: the top level).
 * dal_session_reset keeps it, as COM_RESET_CONNECTION keeps the database
 * (no database too: that connection is reset in place and stays; once
 * lost, the session goes on at the top level).
 * dal_session_schema: the current one, NULL for the top level and for no
 * database (borrowed until the next call).  dal_session_no_database: 1 in
 * no database, else 0.
 */
DAL_API int dal_session_use_schema(dal_session_t *s, const char *name, dal_error_t *err);
DAL_API const char *dal_session_schema(const dal_session_t *s);
DAL_API int dal_session_no_database(const dal_session_t *s);

/*
 * Set a session variable for every statement the session runs from now on,
 * as `SET SESSION name = value_sql` would on one server: name is a
 * variable name ([A-Za-z_][A-Za-z0-9_]*, matched without case) and
 * value_sql its value as SQL text (`'+00:00'`, `'STRICT_ALL_TABLES'`,
 * `DEFAULT`, `'READ-COMMITTED'`); both borrowed for the call.  Setting a
 * name again replaces its value and makes it the last applied: a connection
 * gets them in the order of their last assignment, as a server took them
 * (SET max_join_size after SET sql_big_selects = 1 clears it again).  Three names are dal's own business:
 *  - "autocommit" (0/1, ON/OFF, TRUE/FALSE): with 0 the session opens a
 *    transaction (dal_begin) before each statement run outside one (but
 *    transaction control, DDL, SET, SHOW and a SELECT naming no table or
 *    only information_schema's, which a server opens none for), so
 *    statements stay uncommitted until COMMIT, as in every dal
 *    transaction; @@autocommit and @@session.autocommit read back its
 *    value (the servers' connections keep 1); setting it to 1 commits an
 *    open transaction, as the server does;
 *  - "names": SET NAMES with value_sql a charset name, quoted or not,
 *    and perhaps a collation (`utf8mb4`, `'latin1' COLLATE latin1_bin`),
 *    applied through the client library so that dal's escaping of ?
 *    values follows the charset, then as `SET NAMES cs COLLATE co`; it
 *    replaces the character_set_client, _connection, _results and
 *    collation_connection set before it, and a collation the server
 *    refuses leaves the previous charset in place;
 *  - any other name is sent to the servers as is.
 * The variables are applied on each connection the session takes (pooled
 * or a transaction's), one SET before its first statement; the connection
 * keeps them in its pool for the session's next statement, and they are
 * undone (COM_RESET_CONNECTION) before any statement without the same
 * variables takes it, so no other statement sees them; a pinned connection
 * (above) keeps them, and gets a variable set later at once.  They cost a
 * round trip each way only when a connection goes from one set of
 * variables to another; a session without variables pays nothing.  The value
 * is checked at once on one server of the default datasource (or the
 * first datasource): a name or value the server refuses is DAL_ESERVER
 * with its message, and the session keeps its previous value.
 */
DAL_API int dal_session_set_var(dal_session_t *s, const char *name, const char *value_sql,
                                dal_error_t *err);

/*
 * A SET statement (sql, len bytes, borrowed) assigning the session
 * variables names[0..n) -- perhaps user variables too -- from values the
 * server must evaluate: `SET sql_mode = CONCAT(@@sql_mode, ',X')`, `SET x
 * = @saved`, `SET optimizer_switch = 'flag=off'` (a flag set's literal
 * changes only the flags it names).  It runs as a statement of s on one
 * connection: in a transaction the transaction's; else the connection
 * holding the session's user variables, or one of the datasource a
 * statement naming no table goes to, held for the call (pinned, and given
 * back after it unless the SET set a user variable).  The values it gave
 * are then read back there (`SELECT @@session.name, ...`) and kept as
 * dal_session_set_var keeps literals, for every connection the session
 * takes.  values (NULL, or n pointers) gets each literal, malloc'ed, the
 * caller's.  *out is the SET's result (its warnings), the caller's.  names
 * must not be dal's own (autocommit, dal_transaction_mode, names).  On
 * failure the session keeps its variables (the server's error: DAL_ESERVER).
 */
DAL_API int dal_session_set_eval(dal_session_t *s, const char *sql, size_t len,
                                 const char *const *names, size_t n, char **values,
                                 dal_result_t **out, dal_error_t *err);

/*
 * LOAD DATA LOCAL INFILE.  The server answers such a statement by asking
 * the client for the file's bytes.  dal answers for the program, on every
 * backend connection, in this order:
 *  - a session with a reader (dal_session_set_infile) supplies the bytes
 *    of its statements' files: the file name in the SQL is only a name
 *    passed to the reader;
 *  - otherwise, with [dal] local_infile = on, dal reads the named file from
 *    its own file system, as a trusted program's client library would;
 *  - otherwise (the default) the statement fails with the server's error
 *    for it, 4166 (HY000) "The used command is not allowed because the
 *    MariaDB server or client has disabled the local infile capability"
 *    followed by dal's reason, " ([dal] local_infile = off)", and no file
 *    is opened.
 * A LOAD DATA names a table dal does not analyse further: it runs on the
 * default datasource, and one into a table not wholly there (sharded,
 * broadcast, or on another datasource) is DAL_EUNSUPPORTED, as other
 * statements dal does not analyse (docs/routing.md).
 */

/* The bytes of a LOAD DATA LOCAL INFILE, supplied by the program instead
 * of a file (dal_session_set_infile).  Called on the thread running the
 * statement, between dal_session_query's call and its return, from inside
 * the client library, at times on the small stack (about 60 KiB) of its
 * non-blocking calls: a callback must not call dal on the same session,
 * and large buffers belong on the heap. */
typedef struct dal_infile_ops {
    size_t struct_size;  /* sizeof(dal_infile_ops_t) */
    /* The server asks for name (the statement's file name, NUL-terminated,
     * borrowed for the call): 0 to send bytes, or -1 with err filled
     * (err->mysql_errno, err->sqlstate, err->message: what the caller of
     * the query sees, as DAL_ESERVER; the server then loads no row). */
    int (*open)(void *user, const char *name, dal_error_t *err);
    /* Up to len bytes into buf (borrowed for the call): how many, 0 at the
     * end of the file, -1 with err filled on failure.  The caller of the
     * query sees err as DAL_ESERVER.  After a failure dal has the server
     * stop the statement (KILL QUERY from a connection of its own) before
     * the file ends, so the server keeps none of the rows it was sent
     * (a non-transactional table keeps those it wrote; and if that
     * connection cannot be made, the rows sent are loaded); a transaction
     * stays open. */
    long (*read)(void *user, void *buf, size_t len, dal_error_t *err);
    /* After the last read, or after a failure; called once for each
     * successful open. */
    void (*close)(void *user);
} dal_infile_ops_t;

/*
 * Make ops (with user) the source of s's LOAD DATA LOCAL INFILE bytes, for
 * the statements s runs from now on, in and out of transactions; ops NULL
 * removes it.  ops is copied; user is borrowed until removed or the
 * session closes.  DAL_EINVAL when ops->struct_size is smaller than the
 * struct of this header's first version or a callback is NULL.  Each
 * statement gets its own open (and close) call.
 */
DAL_API int dal_session_set_infile(dal_session_t *s, const dal_infile_ops_t *ops, void *user,
                                   dal_error_t *err);

/* ----------------------------------------------------------- ID generators */

/* Draw n new unique IDs from the generator of section [idgen NAME] of the
 * running configuration into ids[0..n-1] (caller's array), increasing
 * within the call.  Thread-safe.  DAL_EINVAL for an unknown name; otherwise
 * the generator's error (e.g. its database is down and its buffered IDs
 * are used up). */
DAL_API int dal_next_ids(dal_t *dal, const char *idgen, int64_t *ids, size_t n,
                         dal_error_t *err);

/*
 * Called by dal_setup_idgens once per [idgen] section, in file order.
 * Strings are borrowed for the call.  table is NULL when the generator
 * keeps nothing in a database (then datasource and key are NULL too); key
 * is the row set up (a leaf biz tag), or NULL; created is 1 if the row(s)
 * were added now, 0 if they were there already.
 */
typedef void (*dal_idgen_setup_fn)(void *user, const char *idgen, const char *datasource,
                                   const char *table, const char *key, int created);

/*
 * Create, if missing, what the built-in generators keep in a database: the
 * leaf table and each leaf section's biz tag row (max_id 1, the section's
 * step and description), and the snowflake worker id lease table with its
 * 1024 rows.  Idempotent: existing tables and rows are left as they are.
 * datasource (may be NULL) overrides the datasource of every section.  fn
 * (may be NULL) reports each section.  Stops at the first error.
 */
DAL_API int dal_setup_idgens(dal_t *dal, const char *datasource, dal_idgen_setup_fn fn,
                             void *user, dal_error_t *err);


/* ---------------------------------------------------------------- results */

/* Number of columns (0 for a write). */
DAL_API size_t dal_result_column_count(const dal_result_t *r);
/* Column name or label; valid until dal_result_free.  NULL if out of range. */
DAL_API const char *dal_result_column_name(const dal_result_t *r, size_t col);
/*
 * Advance to the next row: returns 1 if there is a row, 0 at the end, or a
 * negative DAL_E* code.  The rows of a statement on several data nodes come
 * as one server holding all the data would return them (docs/merging.md):
 * merged in ORDER BY order, grouped and aggregated, made DISTINCT and cut to
 * LIMIT as they are read; a statement with none of these gives each node's
 * rows in turn, in route order (dal_explain's).  A node failing while its
 * rows stream (a lost connection, a killed query) makes this return
 * DAL_ESERVER naming the datasource and server, and every later call
 * return the same error.
 */
DAL_API int dal_result_next(dal_result_t *r, dal_error_t *err);
/* Typed getters on the current row.  Out-of-range columns read as NULL. */
DAL_API int dal_result_is_null(const dal_result_t *r, size_t col);
/* Text of the value (NUL-terminated; *len may be NULL); NULL for SQL NULL.
 * Valid until the next dal_result_next or dal_result_free. */
DAL_API const char *dal_result_text(const dal_result_t *r, size_t col, size_t *len);
/* Integer value; 0 for NULL or non-numeric text (check with _is_null). */
DAL_API int64_t dal_result_int(const dal_result_t *r, size_t col);
DAL_API uint64_t dal_result_uint(const dal_result_t *r, size_t col);
DAL_API double dal_result_double(const dal_result_t *r, size_t col);
/* Total affected rows of a write over all data nodes. */
DAL_API uint64_t dal_result_affected_rows(const dal_result_t *r);
/*
 * The affected rows as a connection with CLIENT_FOUND_ROWS counts them:
 * for an UPDATE the rows it matched (the sum of the servers' "Rows
 * matched"), also those it left as they were; for every other statement
 * dal_result_affected_rows.  An INSERT ... ON DUPLICATE KEY UPDATE that
 * leaves a duplicate as it was counts it 0, as without the flag.
 */
DAL_API uint64_t dal_result_found_rows(const dal_result_t *r);
/*
 * The statement's insert id, as MySQL's OK packet reports it: for an INSERT
 * into a table with `id_column`/`idgen` where dal generated IDs, the first
 * generated one (dal_result_generated_ids()[0]: as the server reports the
 * first ID of a multi-row INSERT); otherwise the server's AUTO_INCREMENT
 * id (LAST_INSERT_ID), and for a statement on several data nodes the
 * first non-zero one in route order (dal_explain's).  0 when there is none.
 */
DAL_API uint64_t dal_result_insert_id(const dal_result_t *r);
/* IDs generated for an INSERT into a table with `id_column`/`idgen`, one
 * per row in row order (*n set; NULL and 0 when none).  Valid until
 * dal_result_free. */
DAL_API const int64_t *dal_result_generated_ids(const dal_result_t *r, size_t *n);
/* Number of data nodes the statement ran on. */
DAL_API size_t dal_result_route_count(const dal_result_t *r);
/* 1 when r's columns and rows went to the session's relay sink
 * (dal_session_set_relay), with *rows (may be NULL) set to how many rows;
 * else 0. */
DAL_API int dal_result_relayed(const dal_result_t *r, uint64_t *rows);
/*
 * The next result of a CALL, in the order the server sent them: r is its
 * procedure's first result set; each further result set follows, and last
 * the procedure's final status (no columns; its affected rows and
 * warnings).  NULL after the last, and for every other statement.
 * Borrowed: freed with the first result.  Read with the same functions
 * as the first.
 */
DAL_API dal_result_t *dal_result_next_set(const dal_result_t *r);
/* For a set of the chain that is the error a CALL's procedure raised after
 * the sets before it (dal_session_keep_sets): copies it into err (may be
 * NULL) and returns its code (DAL_ESERVER); 0 for every other result. */
DAL_API int dal_result_set_error(const dal_result_t *r, dal_error_t *err);
/* Frees r and the results chained to it (dal_result_next_set). */
DAL_API void dal_result_free(dal_result_t *r);

/* --------------------------------------------------- result metadata */

/*
 * What a MySQL wire-protocol server (dal-proxy) needs to describe a result
 * to its clients, without libmysqlclient's types.  Every number below
 * equals MariaDB's own (enum_field_types, the *_FLAG column flags, the
 * SERVER_STATUS_* bits), so a front end can put them into a ColumnDefinition,
 * OK or EOF packet as they are.  The values are part of the wire protocol
 * and never change.
 */

/* A column's type: MariaDB's enum_field_types numbers. */
typedef enum dal_column_type {
    DAL_COLUMN_DECIMAL = 0,      /* old DECIMAL; servers send NEWDECIMAL */
    DAL_COLUMN_TINY = 1,         /* TINYINT */
    DAL_COLUMN_SHORT = 2,        /* SMALLINT */
    DAL_COLUMN_LONG = 3,         /* INT */
    DAL_COLUMN_FLOAT = 4,
    DAL_COLUMN_DOUBLE = 5,
    DAL_COLUMN_NULL = 6,         /* the NULL literal */
    DAL_COLUMN_TIMESTAMP = 7,
    DAL_COLUMN_LONGLONG = 8,     /* BIGINT */
    DAL_COLUMN_INT24 = 9,        /* MEDIUMINT */
    DAL_COLUMN_DATE = 10,
    DAL_COLUMN_TIME = 11,
    DAL_COLUMN_DATETIME = 12,
    DAL_COLUMN_YEAR = 13,
    DAL_COLUMN_NEWDATE = 14,     /* internal to the server */
    DAL_COLUMN_VARCHAR = 15,     /* internal to the server; results say VAR_STRING */
    DAL_COLUMN_BIT = 16,
    DAL_COLUMN_TIMESTAMP2 = 17,  /* the next three: internal to the server */
    DAL_COLUMN_DATETIME2 = 18,
    DAL_COLUMN_TIME2 = 19,
    DAL_COLUMN_JSON = 245,       /* MySQL's; MariaDB sends JSON as BLOB */
    DAL_COLUMN_NEWDECIMAL = 246, /* DECIMAL */
    DAL_COLUMN_ENUM = 247,       /* results say STRING with DAL_COLUMN_FLAG_ENUM */
    DAL_COLUMN_SET = 248,        /* results say STRING with DAL_COLUMN_FLAG_SET */
    DAL_COLUMN_TINY_BLOB = 249,
    DAL_COLUMN_MEDIUM_BLOB = 250,
    DAL_COLUMN_LONG_BLOB = 251,
    DAL_COLUMN_BLOB = 252,       /* every TEXT and BLOB in results */
    DAL_COLUMN_VAR_STRING = 253, /* VARCHAR, VARBINARY */
    DAL_COLUMN_STRING = 254,     /* CHAR, BINARY, ENUM, SET */
    DAL_COLUMN_GEOMETRY = 255
} dal_column_type_t;

/* Column flags (dal_column_info_t.flags): MariaDB's *_FLAG values. */
#define DAL_COLUMN_FLAG_NOT_NULL 1u
#define DAL_COLUMN_FLAG_PRI_KEY 2u
#define DAL_COLUMN_FLAG_UNIQUE_KEY 4u
#define DAL_COLUMN_FLAG_MULTIPLE_KEY 8u
#define DAL_COLUMN_FLAG_BLOB 16u
#define DAL_COLUMN_FLAG_UNSIGNED 32u
#define DAL_COLUMN_FLAG_ZEROFILL 64u
#define DAL_COLUMN_FLAG_BINARY 128u
#define DAL_COLUMN_FLAG_ENUM 256u
#define DAL_COLUMN_FLAG_AUTO_INCREMENT 512u
#define DAL_COLUMN_FLAG_TIMESTAMP 1024u
#define DAL_COLUMN_FLAG_SET 2048u
#define DAL_COLUMN_FLAG_NO_DEFAULT_VALUE 4096u
#define DAL_COLUMN_FLAG_ON_UPDATE_NOW 8192u
#define DAL_COLUMN_FLAG_PART_KEY 16384u
#define DAL_COLUMN_FLAG_NUM 32768u

/* The charset number of binary strings (BINARY, VARBINARY, BLOB, and
 * numbers and temporal types): MariaDB's `binary` collation, 63. */
#define DAL_CHARSET_BINARY 63u

/*
 * One column of a result, as MYSQL_FIELD describes it.  The caller owns the
 * struct (put one on the stack) and sets struct_size to
 * sizeof(dal_column_info_t) before the call; dal fills the fields that fit
 * in struct_size, so a program built against an older dal.h keeps working
 * when fields are added (they are only ever added at the end).  Strings are
 * borrowed from the result: valid until dal_result_free, never NULL ("" when
 * the server sent none, as for an expression's table).
 */
typedef struct dal_column_info {
    size_t struct_size;      /* set by the caller: sizeof(dal_column_info_t) */
    const char *name;        /* the label: alias, or the column or expression as
                                written (dal_result_column_name) */
    const char *org_name;    /* the table column's own name; "" for an expression */
    const char *table;       /* the table's alias, or its logical name */
    const char *org_table;   /* the logical table; "" for an expression */
    const char *schema;      /* the database on the (first) data node */
    dal_column_type_t type;  /* DAL_COLUMN_* */
    unsigned int charset;    /* collation number; DAL_CHARSET_BINARY for binary data */
    unsigned int flags;      /* DAL_COLUMN_FLAG_* */
    unsigned int decimals;   /* digits after the point (fractional seconds of a
                                temporal type), as the server sends it: 31 or 39
                                mean "not fixed" */
    uint64_t length;         /* display length in bytes of the connection charset */
    /* MariaDB's extended type information (10.5 and later): the data type
       behind the wire type ("point" for a GEOMETRY subtype, "uuid", "inet4",
       "inet6") and the format of the value ("json" for a JSON column, sent
       as BLOB); "" when the server sent none */
    const char *type_name;
    const char *format;
} dal_column_info_t;

/*
 * Describe column col (0 .. dal_result_column_count - 1) of r into *out
 * (caller's, struct_size set).  DAL_EINVAL for a NULL argument, a column
 * out of range (a write has no columns) or a struct_size too small for
 * struct_size itself.
 *
 * A statement on several data nodes reports its first node's metadata, as
 * one server holding all the data would for the same statement:
 *  - the columns dal adds to the nodes' SELECT for merging (sort keys not
 *    selected, AVG's counts) are not shown, as dal_result_column_count;
 *  - a physical table (wm_food_45) is shown as its logical table (wm_food)
 *    in table and org_table, also for a statement on one node; schema stays
 *    the node's database, which has no logical equivalent;
 *  - COUNT, SUM, MIN and MAX merged by dal have the type the server gives
 *    them (it depends on the argument, not on the rows); AVG, which the
 *    nodes run as SUM, reports AVG's own: for DECIMAL and integer arguments
 *    NEWDECIMAL with 4 more decimals (div_precision_increment's default,
 *    which the merged values use too) and the length that goes with them,
 *    for FLOAT and DOUBLE arguments DOUBLE with the SUM's length; flagged
 *    BINARY as the server flags AVG (docs/api.md).
 */
DAL_API int dal_result_column_info(const dal_result_t *r, size_t col, dal_column_info_t *out);

/*
 * Warnings the statement raised (SHOW WARNINGS on its server would list
 * them), summed over its data nodes.  A node's warnings are known once its
 * rows have all arrived: before the last dal_result_next of a statement
 * that streams (several nodes), the count covers only the nodes already
 * read to the end; after it, all of them.
 */
DAL_API unsigned int dal_result_warning_count(const dal_result_t *r);
/*
 * The info line a server gives after a write (mysql_info), summed over the
 * statement's data nodes: "Records: N  Duplicates: N  Warnings: N" after
 * a multi-row INSERT, "Rows matched: N  Changed: N  Warnings: N" after an
 * UPDATE; NULL when the servers gave none (or lines of another form).
 * Owned by r, valid until the next call or dal_result_free.
 */
DAL_API const char *dal_result_info(dal_result_t *r);
/*
 * The servers' warnings themselves (SHOW WARNINGS), for a statement of a
 * session that keeps them (dal_session_keep_warnings): read on each node's
 * connection right after its answer, in route order.  Rows streamed from
 * several nodes have none (their count is in dal_result_warning_count).
 * level is "Note", "Warning" or "Error"; strings owned by r.
 * dal_result_warning_row returns DAL_EINVAL for i out of range.
 */
DAL_API size_t dal_result_warning_rows(const dal_result_t *r);
/* Non-zero when the statement named a table: a server starts a new
 * warnings list only for such statements (and on an error), so a front end
 * that keeps the list (dal-proxy's SHOW WARNINGS) needs to know. */
DAL_API int dal_result_named_tables(const dal_result_t *r);
DAL_API int dal_result_warning_row(const dal_result_t *r, size_t i, const char **level,
                                   unsigned int *code, const char **message);

/* Server status bits (dal_result_server_status, dal_session_status):
 * MariaDB's SERVER_STATUS_* values. */
#define DAL_SERVER_STATUS_IN_TRANS 1u
#define DAL_SERVER_STATUS_AUTOCOMMIT 2u
#define DAL_SERVER_MORE_RESULTS_EXIST 8u
#define DAL_SERVER_QUERY_NO_GOOD_INDEX_USED 16u
#define DAL_SERVER_QUERY_NO_INDEX_USED 32u
#define DAL_SERVER_STATUS_CURSOR_EXISTS 64u
#define DAL_SERVER_STATUS_LAST_ROW_SENT 128u
#define DAL_SERVER_STATUS_DB_DROPPED 256u
#define DAL_SERVER_STATUS_NO_BACKSLASH_ESCAPES 512u
#define DAL_SERVER_STATUS_METADATA_CHANGED 1024u
#define DAL_SERVER_QUERY_WAS_SLOW 2048u
#define DAL_SERVER_PS_OUT_PARAMS 4096u
#define DAL_SERVER_STATUS_IN_TRANS_READONLY 8192u
#define DAL_SERVER_SESSION_STATE_CHANGED 16384u

/*
 * The server status after the statement, for an OK or EOF packet: the
 * flags its server sent with the end of the statement (the last data node
 * in route order for several; known, like the warnings, once that node's
 * rows have all arrived), with the transaction bits replaced by dal's own
 * view:
 *  - a result of dal_session_query carries the session's state after the
 *    statement (dal_session_status): IN_TRANS while its transaction is
 *    open -- also after a BEGIN that has sent nothing to any server yet --,
 *    IN_TRANS_READONLY for a read-only one, AUTOCOMMIT unless the session
 *    set autocommit to 0;
 *  - a result of dal_query ran in autocommit on a pooled connection:
 *    AUTOCOMMIT, never IN_TRANS.
 * SESSION_STATE_CHANGED and MORE_RESULTS_EXIST are never set (dal uses the
 * first itself and runs one statement at a time).  0 for NULL.
 */
DAL_API unsigned int dal_result_server_status(const dal_result_t *r);

/* ---------------------------------------------------------------- explain */

/*
 * Work out where a statement would go without running it.  On success *out
 * is owned by the caller (free with dal_plan_free).  Parameters are shown
 * inline in dal_plan_sql, escaped as for a server without
 * NO_BACKSLASH_ESCAPES.
 */
DAL_API int dal_explain(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
                        const dal_value_t *params, size_t nparams,
                        dal_plan_t **out, dal_error_t *err);
/* dal_explain of the len bytes at sql, NUL bytes taken as dal_query_len
 * takes them (dal_plan_sql_len gives the length of a route's SQL that
 * holds one). */
DAL_API int dal_explain_len(dal_t *dal, const dal_query_opts_t *opts, const char *sql,
                            size_t len, const dal_value_t *params, size_t nparams,
                            dal_plan_t **out, dal_error_t *err);
DAL_API size_t dal_plan_count(const dal_plan_t *p);
/* Datasource node name of route i; valid until dal_plan_free. */
DAL_API const char *dal_plan_datasource(const dal_plan_t *p, size_t i);
/* Physical SQL of route i; valid until dal_plan_free. */
DAL_API const char *dal_plan_sql(const dal_plan_t *p, size_t i);
/* The length of dal_plan_sql(p, i), for SQL holding NUL bytes (a string
 * of dal_explain_len's text); 0 for no such route. */
DAL_API size_t dal_plan_sql_len(const dal_plan_t *p, size_t i);
/* Physical table of the first sharded table in route i, or NULL; valid
 * until dal_plan_free. */
DAL_API const char *dal_plan_table(const dal_plan_t *p, size_t i);
/* Server address ("host:port" or socket path) of the server chosen for
 * route i: its datasource's master or one of its replicas.  Valid until
 * dal_plan_free. */
DAL_API const char *dal_plan_server(const dal_plan_t *p, size_t i);
/* "master" or "replica": the role of that server (static storage).  dal_explain
 * contacts no server, so a replica not checked yet counts as in rotation. */
DAL_API const char *dal_plan_role(const dal_plan_t *p, size_t i);
/* 1 if route i would run as a server-side prepared statement on its
 * backend connection ([dal] server_prepare = auto, a statement with ?
 * placeholders or a dal_prepare handle, on one node), 0 if as text.  At
 * run time a statement the server cannot prepare still falls back to text
 * (see docs/api.md). */
DAL_API int dal_plan_server_prepared(const dal_plan_t *p, size_t i);
/* Statement kind as a static word ("select", "insert", ...). */
DAL_API const char *dal_plan_kind(const dal_plan_t *p);
/* What route i is: "route" (a route of the statement), or "lookup" (a read
 * of a lookup table that ran first to find the routes, docs/lookup.md;
 * these come first).  Valid as long as the library is loaded. */
DAL_API const char *dal_plan_step(const dal_plan_t *p, size_t i);
DAL_API void dal_plan_free(dal_plan_t *p);

/* ---------------------------------------------------------------- columns */

/*
 * The columns of a logical table as dal uses them for an INSERT without a
 * column list: in the order of the table's first physical table, read from
 * its server (information_schema) now.  dal keeps the list it learned, and
 * before each statement that relies on it checks it against every physical
 * table the statement writes (see docs/routing.md).  Tables dal looks into are the sharded ones and
 * those with an id_column.  fn is called once per table (table: that one
 * name, or NULL for every such table, in configuration order) with the
 * table's name and columns, both borrowed for the call only.  Returns 0, or
 * the first failure (err names the table, the physical table and the
 * datasource); fn may have been called for the tables before it.
 * Thread-safe.
 */
typedef void (*dal_columns_fn)(void *user, const char *table, const char *const *columns,
                               size_t ncolumns);
DAL_API int dal_table_columns(dal_t *dal, const char *table, dal_columns_fn fn, void *user,
                              dal_error_t *err);

/* -------------------------------------------------------------- inspection */

/*
 * What the configuration in force says about one table or one datasource,
 * for a program that needs it without reading the INI file itself: a tool
 * that connects to the data nodes on its own (`dal load --direct`), a
 * migration script, a monitoring page.  Each call takes the configuration
 * in force at the time of the call; the handle it returns is immutable, does
 * not follow later reloads, and may be read by any number of threads at
 * once.  Every string it returns is owned by the handle and stays valid
 * until the handle is freed -- also after dal_close, so a handle may outlive
 * its dal_t.
 *
 * Where one statement goes is dal_explain's job: it runs the shard strategy
 * and gives every route's datasource and physical table.  These calls give
 * the layout that routing works within.
 */

/* What a [table] is. */
typedef enum dal_layout {
    DAL_LAYOUT_SINGLE = 0,   /* unsharded: one table on one datasource */
    DAL_LAYOUT_SHARDED = 1,  /* table_shard_num tables over db_shard_num nodes of a group */
    DAL_LAYOUT_BROADCAST = 2 /* broadcast = true: a whole copy on every node of a group */
} dal_layout_t;

typedef struct dal_table_info dal_table_info_t;

/*
 * The [table] section of a logical table in the configuration in force
 * (names match ASCII case-insensitively, as statements do).  On success *out
 * is owned by the caller (free with dal_table_info_free).  DAL_EINVAL when
 * the configuration has no such section: a table not listed there is
 * unsharded on the `default_datasource` of [dal].  Thread-safe.
 */
DAL_API int dal_table_info(dal_t *dal, const char *table, dal_table_info_t **out,
                           dal_error_t *err);
/* The logical tables of the configuration in force: fn is called with the
 * name of each [table] section, in file order (name borrowed for the
 * call).  0, or DAL_EINVAL for a NULL dal or fn.  Thread-safe. */
typedef void (*dal_name_fn)(void *user, const char *name);
DAL_API int dal_table_names(dal_t *dal, dal_name_fn fn, void *user, dal_error_t *err);
/* The logical databases dal-proxy serves besides its [proxy] database: fn
 * is called with the name of each [schema NAME] section, in file order.
 * 0, or DAL_EINVAL for a NULL dal or fn.  Thread-safe. */
DAL_API int dal_schema_names(dal_t *dal, dal_name_fn fn, void *user, dal_error_t *err);
/* The datasource whose own databases serve a name no [schema] declares
 * ([dal] server_schemas, docs/routing.md): fn is called with its name
 * once, or not at all when there is none.  0, or DAL_EINVAL for a NULL
 * dal or fn.  Thread-safe. */
DAL_API int dal_server_schemas(dal_t *dal, dal_name_fn fn, void *user, dal_error_t *err);
/* NULL is a no-op. */
DAL_API void dal_table_info_free(dal_table_info_t *t);

/* The rest read the handle; their strings are valid until dal_table_info_free. */

/* The name as written in the section header. */
DAL_API const char *dal_table_info_name(const dal_table_info_t *t);
/* Its schema = NAME ([schema NAME]); NULL: the top level. */
DAL_API const char *dal_table_info_schema(const dal_table_info_t *t);
DAL_API dal_layout_t dal_table_info_layout(const dal_table_info_t *t);
/* `datasource =`: the group prefix ("dbProductSku") of a sharded or
 * broadcast table, the datasource name of a single one. */
DAL_API const char *dal_table_info_datasource(const dal_table_info_t *t);
/* Data nodes: db_shard_num of a sharded table, the group's node count of a
 * broadcast one, 1 for a single table. */
DAL_API uint32_t dal_table_info_db_shard_num(const dal_table_info_t *t);
/* Physical tables in all: table_shard_num of a sharded table, else 1. */
DAL_API uint32_t dal_table_info_table_shard_num(const dal_table_info_t *t);
/* Shard key column and strategy plugin name; NULL unless sharded. */
DAL_API const char *dal_table_info_shard_key(const dal_table_info_t *t);
DAL_API const char *dal_table_info_strategy(const dal_table_info_t *t);
/* The strategy.NAME = VALUE keys, in file order: their number, and the
 * name (without "strategy.") of key i with its value in *value (${VAR}
 * expanded; value may be NULL).  NULL and *value NULL past the end. */
DAL_API size_t dal_table_info_strategy_param_count(const dal_table_info_t *t);
DAL_API const char *dal_table_info_strategy_param(const dal_table_info_t *t, size_t i,
                                                  const char **value);
/* `binding =` group, `id_column =` and `idgen =`; NULL when not set. */
DAL_API const char *dal_table_info_binding(const dal_table_info_t *t);
DAL_API const char *dal_table_info_id_column(const dal_table_info_t *t);
DAL_API const char *dal_table_info_idgen(const dal_table_info_t *t);
/* allow_scatter (default 1). */
DAL_API int dal_table_info_allow_scatter(const dal_table_info_t *t);
/* The columns of `lookup =` and `lookup_unique =` (docs/lookup.md), in
 * order: column i (NULL when i is out of range), *unique (may be NULL) set
 * for a lookup_unique one.  Its lookup table is the table named
 * TABLE_lookup_COLUMN. */
DAL_API size_t dal_table_info_lookup_count(const dal_table_info_t *t);
DAL_API const char *dal_table_info_lookup(const dal_table_info_t *t, size_t i, int *unique);
/* The datasource node of data node db (0 .. db_shard_num-1): group prefix
 * and db ("dbProductSku1") for a sharded or broadcast table, the datasource
 * of a single one.  NULL when db is out of range. */
DAL_API const char *dal_table_info_node(const dal_table_info_t *t, uint32_t db);
/*
 * Physical table pos (0 .. table_shard_num-1): its name into buf (size
 * bytes, NUL-terminated, cut to fit): "<name>_<pos>" for a sharded table,
 * the logical name for the others.  Returns the data node holding it,
 * pos / (table_shard_num / db_shard_num), for dal_table_info_node (a
 * broadcast table's one position is on every node: 0 is returned), or
 * DAL_EINVAL when pos is out of range or the name does not fit.
 */
DAL_API int dal_table_info_physical(const dal_table_info_t *t, uint32_t pos, char *buf,
                                    size_t size);

typedef struct dal_datasource_info dal_datasource_info_t;

/*
 * How dal connects to one server of a datasource: its master or one of its
 * replicas, as the URL in the file gives it with dal's defaults filled in.
 * Filled by the library and read through a pointer; never allocate or copy
 * one yourself (fields are only ever added at the end).  Strings are owned
 * by the dal_datasource_info_t it came from: valid until
 * dal_datasource_info_free.
 */
typedef struct dal_server_settings {
    const char *role;          /* "master" or "replica" */
    const char *address;       /* "host:port", or the socket path: as dal_plan_server */
    const char *host;          /* "127.0.0.1" when the URL names none */
    unsigned int port;         /* 3306 when the URL names none */
    const char *socket;        /* NULL: TCP to host:port; else connect through it */
    const char *user;          /* "" when the URL names none */
    /* NULL when the URL has none; ${VAR} expanded.  This is a secret: never
     * print or log it (dal's own messages never contain it). */
    const char *password;
    const char *database;      /* NULL when the URL names none */
    const char *charset;       /* "utf8mb4" unless the URL says otherwise */
    const char *ssl_mode;      /* upper case (DISABLED, PREFERRED, REQUIRED, VERIFY_CA,
                                  VERIFY_IDENTITY), or NULL: not set */
    const char *ssl_ca;        /* NULL when not set */
    uint32_t connect_timeout_ms; /* the URL's connect_timeout, else the section's */
    uint32_t read_timeout_ms;  /* the section's read_timeout; 0: none */
    uint32_t weight;           /* a replica's weight= (1 by default and for the master) */
} dal_server_settings_t;

/*
 * The [datasource] section called name (names match exactly) in the
 * configuration in force.  On success *out is owned by the caller (free
 * with dal_datasource_info_free).  DAL_EINVAL when there is no such
 * section.  Thread-safe.
 */
DAL_API int dal_datasource_info(dal_t *dal, const char *name, dal_datasource_info_t **out,
                                dal_error_t *err);
/* NULL is a no-op. */
DAL_API void dal_datasource_info_free(dal_datasource_info_t *ds);
/* The name; valid until dal_datasource_info_free. */
DAL_API const char *dal_datasource_info_name(const dal_datasource_info_t *ds);
/* Servers: 1 (the master) + the replicas of `replicas =`. */
DAL_API size_t dal_datasource_info_server_count(const dal_datasource_info_t *ds);
/* Server i: 0 is the master, 1.. the replicas in file order.  NULL when i
 * is out of range.  Valid until dal_datasource_info_free. */
DAL_API const dal_server_settings_t *dal_datasource_info_server(const dal_datasource_info_t *ds,
                                                                size_t i);

/* ------------------------------------------------------------------ proxy */

/*
 * dal-proxy's settings and users, from [proxy] and [proxy user NAME] of the
 * configuration in force (the defaults when the file has no [proxy]): for a
 * front end serving the MySQL protocol on libdal.  On success *out is owned
 * by the caller (dal_proxy_info_free); it holds a reference on that
 * configuration, so its strings stay valid until it is freed, across
 * reloads and after dal_close.  Thread-safe.
 */
typedef struct dal_proxy_info dal_proxy_info_t;

DAL_API int dal_proxy_info(dal_t *dal, dal_proxy_info_t **out, dal_error_t *err);
/* NULL is a no-op. */
DAL_API void dal_proxy_info_free(dal_proxy_info_t *p);
/* "HOST:PORT[, HOST:PORT ...]"; valid until dal_proxy_info_free. */
DAL_API const char *dal_proxy_info_listen(const dal_proxy_info_t *p);
/* The schema clients connect to and USE; valid until dal_proxy_info_free. */
DAL_API const char *dal_proxy_info_database(const dal_proxy_info_t *p);
/* I/O threads (0: one per core), client connections at once, bytes of one
 * client packet. */
DAL_API uint32_t dal_proxy_info_threads(const dal_proxy_info_t *p);
/* [proxy] inline_io: 1, statements run on the I/O threads (dal_set_io_wait). */
DAL_API int dal_proxy_info_inline_io(const dal_proxy_info_t *p);
DAL_API uint32_t dal_proxy_info_max_connections(const dal_proxy_info_t *p);
DAL_API uint32_t dal_proxy_info_max_allowed_packet(const dal_proxy_info_t *p);
/* Milliseconds a client has from connecting to being authenticated. */
DAL_API uint32_t dal_proxy_info_connect_timeout(const dal_proxy_info_t *p);
/* PEM files, or NULL: no TLS; valid until dal_proxy_info_free. */
DAL_API const char *dal_proxy_info_tls_cert(const dal_proxy_info_t *p);
DAL_API const char *dal_proxy_info_tls_key(const dal_proxy_info_t *p);
/* Non-zero if logins without TLS are refused (tls_cert is then set). */
DAL_API int dal_proxy_info_require_tls(const dal_proxy_info_t *p);
/* Failed logins in a row from one client address after which replies to
 * its logins wait (0: never), and the longest wait in milliseconds. */
DAL_API uint32_t dal_proxy_info_auth_delay_after(const dal_proxy_info_t *p);
DAL_API uint32_t dal_proxy_info_auth_delay_max_ms(const dal_proxy_info_t *p);
/* With [proxy] users = backend: the datasource whose accounts clients may
 * log in with as well ([proxy] users_datasource, else [dal]
 * default_datasource, else the first datasource); NULL with users = config
 * (the [proxy user] accounts only).  Valid until dal_proxy_info_free. */
DAL_API const char *dal_proxy_info_users_datasource(const dal_proxy_info_t *p);
/* The [proxy user NAME] sections, in file order. */
DAL_API size_t dal_proxy_info_user_count(const dal_proxy_info_t *p);
/*
 * User i's name, and in *password or *password_hash (either may be NULL)
 * the one the file gives, the other NULL: the password with ${VAR}
 * expanded -- a secret, never print or log it -- or the
 * mysql_native_password hash ('*' and 40 hex digits).  NULL when i is out
 * of range.  Strings valid until dal_proxy_info_free.
 */
DAL_API const char *dal_proxy_info_user(const dal_proxy_info_t *p, size_t i,
                                        const char **password, const char **password_hash);

/* ---------------------------------------------------------------- plugins */

/*
 * One plugin file found by dal_plugins_scan.  All strings are borrowed for
 * the duration of the callback.  If the file was rejected, error says why
 * and kind/name/version may be NULL.
 */
typedef struct dal_plugin_info {
    const char *file;     /* path of the .so */
    const char *kind;     /* "shard", "idgen", "pool", "monitor" */
    const char *name;
    const char *version;
    const char *description;
    const char *error;    /* NULL if the plugin is usable */
} dal_plugin_info_t;

typedef void (*dal_plugin_scan_fn)(void *user, const dal_plugin_info_t *info);

/*
 * Try to load every "*.so" in dir (NULL: DAL_PLUGIN_DIR or the installed
 * directory) and report each, sorted by file name.  Returns the number of
 * files reported, or a negative code if dir cannot be read.
 */
DAL_API int dal_plugins_scan(const char *dir, dal_plugin_scan_fn fn, void *user,
                             dal_error_t *err);

/* The plugin directory compiled into the library (static storage). */
DAL_API const char *dal_default_plugin_dir(void);

/*
 * The calling thread's wait on a backend socket.  While fn is set on a
 * thread (dal_set_io_wait), every wait of dal on a server's socket in that
 * thread -- a statement's query and its result, a server-prepared
 * execute, a scatter's rounds, connecting and logging in a new pooled
 * connection -- calls fn(arg, fd, events, timeout_ms) instead of blocking
 * in poll(): events is POLLIN or POLLOUT, timeout_ms -1 for no limit.  fn
 * returns > 0 once fd is ready, 0 when timeout_ms passed, < 0 on an error
 * (errno set).  fn may run other statements of other sessions on the same
 * thread before it returns (an event loop resuming coroutines): dal puts
 * the thread's per-statement state aside meanwhile.  It must not run
 * another statement of the same session.  Waits that hold a lock another
 * statement could need (dal_session_cancel's KILL QUERY) and the health
 * checks' own thread still poll.  A pool plugin that makes a statement
 * wait for a free connection waits in the plugin, not in fn.
 */
typedef int (*dal_io_wait_fn)(void *arg, int fd, short events, int timeout_ms);

/* Set (fn) or clear (NULL) the calling thread's wait hook; arg is
 * borrowed, passed to fn.  Without one, dal's waits are today's poll(). */
DAL_API void dal_set_io_wait(dal_io_wait_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* DAL_DAL_H */
