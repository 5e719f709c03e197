/*
 * plugin.h -- the dal plugin SDK.
 *
 * A plugin is a shared object that dal loads with dlopen(RTLD_NOW|RTLD_LOCAL).
 * It exports exactly one function, dal_plugin_entry(), returning a pointer to
 * a static, versioned descriptor (dal_plugin_t).  The descriptor gives the
 * plugin's kind and name, the parameters it accepts (as data, so dal checks
 * the INI file before the plugin sees it) and the kind's table of operations.
 *
 * A plugin of kind K named N lives in the file <plugin_dir>/K_N.so
 * (shard_mod.so, idgen_leaf.so, pool_default.so, monitor_prometheus.so,
 * source_etcd.so) and
 * is selected in the INI file by N.  Build one with nothing but this header:
 *
 *     cc -shared -fPIC $(pkg-config --cflags dal) -o shard_mine.so mine.c
 *
 * Plugins do not link against libdal: everything they need from the host
 * (logging, parameters, running SQL, connections, threads) comes through the
 * dal_host_api_t table handed to every create() call.  That also lets a
 * plugin be unit-tested against a fake host.
 *
 * Compatibility rules:
 *   - DAL_PLUGIN_ABI_VERSION changes only when an existing field or op
 *     changes meaning; dal refuses a plugin built for another ABI version.
 *   - Structs and ops tables only grow at the end; no field moves or
 *     changes size.  Each starts with its size, so the reader can tell
 *     which fields the writer knew about.
 *     A field added after ABI 1's first release is marked "since size N":
 *     it exists when struct_size >= N (N for 64-bit platforms).  Test for it
 *     with DAL_HAS_FIELD(), which works on any platform.
 *
 * Instances: create() makes an instance (owned by dal, freed with destroy()).
 * dal never unloads a .so while an instance made from it is alive.  Unless an
 * op says otherwise, ops may be called from several threads at once on the
 * same instance, so instances must be thread-safe.
 */
#ifndef DAL_PLUGIN_H
#define DAL_PLUGIN_H

#include <pthread.h>

#include <dal/dal.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DAL_PLUGIN_ABI_VERSION 1

/* The name of the one symbol a plugin exports. */
#define DAL_PLUGIN_ENTRY_SYMBOL "dal_plugin_entry"

/* The struct_size from which field of type exists: the end of the field. */
#define DAL_FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * Whether *ptr, a struct of type filled by the other side (the host's API
 * table or event for a plugin, a plugin's ops table for the host), has
 * field: true when the struct_size it was built with reaches the field's
 * end.  Use it before reading a field marked "since size N":
 *
 *     if (DAL_HAS_FIELD(dal_host_api_t, api, emit) && api->emit != NULL)
 *         api->emit(host, &ev);
 *
 * Fields of ABI 1's first release are always there: dal refuses
 * descriptors and ops tables shorter than that (an optional op's slot
 * included: set struct_size with sizeof), and never builds a shorter API
 * table or event.
 */
#define DAL_HAS_FIELD(type, ptr, field) ((size_t)(ptr)->struct_size >= DAL_FIELD_END(type, field))

typedef enum dal_plugin_kind {
    DAL_PLUGIN_SHARD = 1,   /* shard strategy: key value -> (db, table) position */
    DAL_PLUGIN_IDGEN = 2,   /* ID generator: fills generated primary keys */
    DAL_PLUGIN_POOL = 3,    /* connection pool for one server */
    DAL_PLUGIN_MONITOR = 4, /* receives one event per statement / execution */
    DAL_PLUGIN_SOURCE = 5   /* configuration source: delivers INI documents (etcd, ...) */
} dal_plugin_kind_t;

/* ------------------------------------------------------------- parameters */

/*
 * Types of plugin parameters.  The INI value is checked against the type
 * before the plugin is created; a mistyped value is a FILE:LINE error.
 */
typedef enum dal_param_type {
    DAL_PARAM_STRING = 1,
    DAL_PARAM_INT,        /* signed 64-bit decimal */
    DAL_PARAM_BOOL,       /* true/false, yes/no, on/off, 1/0 */
    DAL_PARAM_DOUBLE,
    DAL_PARAM_DURATION,   /* "250ms", "5s", "2m", "1h"; a bare number is seconds; read in ms */
    DAL_PARAM_INT_LIST,   /* comma-separated signed 64-bit integers */
    DAL_PARAM_STRING_LIST /* comma-separated strings, blanks trimmed */
} dal_param_type_t;

/* One accepted parameter.  Arrays of these end with an entry whose name is NULL. */
typedef struct dal_param_spec {
    const char *name;          /* key without the role prefix: "bounds" for strategy.bounds */
    dal_param_type_t type;
    int required;              /* non-zero: dal_open fails if the key is missing */
    const char *default_value; /* text, parsed like an INI value; NULL: none */
    const char *help;          /* one line for `dal plugins` and the docs */
} dal_param_spec_t;

/* Validated parameter values of one plugin instance (opaque, owned by dal). */
typedef struct dal_plugin_params dal_plugin_params_t;

/* ------------------------------------------------------------- host API */

/* The host's context for one plugin instance (opaque, owned by dal). */
typedef struct dal_host dal_host_t;

/* A server connection made by the host (opaque, owned by whoever holds it). */
typedef struct dal_conn dal_conn_t;

/* An event for monitors (defined with the monitor kind below). */
typedef struct dal_event dal_event_t;

/*
 * Services dal offers to plugins.  The table is static and outlives every
 * instance.  struct_size is the host's sizeof(dal_host_api_t): 176 (64-bit)
 * for ABI 1's first release; test later fields with DAL_HAS_FIELD.
 */
typedef struct dal_host_api {
    uint32_t abi_version;
    uint32_t struct_size;

    /* Log through the application's log callback; the component is the plugin's name. */
    void (*log)(dal_host_t *host, dal_log_level_t level, const char *fmt, ...) DAL_PRINTF(3, 4);
    /* Fill err (which may be NULL) with code and a formatted message; returns code. */
    int (*set_error)(dal_error_t *err, int code, const char *fmt, ...) DAL_PRINTF(3, 4);

    /* Parameter getters.  Values were validated against the spec, so a
     * declared parameter always reads back in its type; a parameter that is
     * unset and has no default reads as NULL / 0 / false / empty list. */
    int (*param_is_set)(const dal_plugin_params_t *p, const char *name);
    const char *(*param_string)(const dal_plugin_params_t *p, const char *name); /* borrowed, valid while the instance lives */
    int64_t (*param_int)(const dal_plugin_params_t *p, const char *name);
    int (*param_bool)(const dal_plugin_params_t *p, const char *name);
    double (*param_double)(const dal_plugin_params_t *p, const char *name);
    int64_t (*param_duration_ms)(const dal_plugin_params_t *p, const char *name);
    /* Sets *vals (borrowed, valid while the instance lives) and returns the count. */
    size_t (*param_int_list)(const dal_plugin_params_t *p, const char *name, const int64_t **vals);
    size_t (*param_string_list)(const dal_plugin_params_t *p, const char *name, const char *const **vals);

    /* Run one statement on the datasource node named ds, bypassing sharding
     * (for plugins that keep state in a database, like the Leaf ID
     * generator).  *out is owned by the caller; free with result_free. */
    int (*query)(dal_host_t *host, const char *ds, const char *sql,
                 const dal_value_t *params, size_t nparams,
                 dal_result_t **out, dal_error_t *err);
    int (*result_next)(dal_result_t *r, dal_error_t *err);
    const char *(*result_text)(const dal_result_t *r, size_t col, size_t *len);
    int64_t (*result_int)(const dal_result_t *r, size_t col);
    uint64_t (*result_affected_rows)(const dal_result_t *r);
    void (*result_free)(dal_result_t *r);

    /* Connection factory for pool plugins: connect to the server the pool
     * instance was created for.  *out is owned by the caller until handed
     * back with conn_close. */
    int (*conn_open)(dal_host_t *host, dal_conn_t **out, dal_error_t *err);
    void (*conn_close)(dal_conn_t *c);
    /* 0 if the connection is alive (a round trip to the server). */
    int (*conn_ping)(dal_conn_t *c);
    /* Undo session state of the previous user (transaction, variables, temp tables). */
    int (*conn_reset)(dal_conn_t *c, dal_error_t *err);

    /* Monotonic clock in nanoseconds. */
    uint64_t (*now_ns)(void);

    /* Since size 184: DAL_HAS_FIELD(dal_host_api_t, api, current_statement).
     * What the calling thread is running, as "trace_id=ID SQL" or "SQL"
     * (SQL normalised: literals replaced by ?), copied into buf,
     * NUL-terminated and truncated to cap.  Returns the length written, 0
     * when unknown.  Pool plugins call it in acquire so that a leak report
     * can name the statement that took the connection. */
    size_t (*current_statement)(char *buf, size_t cap);

    /* Since size 192: DAL_HAS_FIELD(dal_host_api_t, api, emit).
     * Hand ev to the monitors of the configuration the instance belongs
     * to: how an ID generator reports each segment of IDs it fetched, or
     * failed to fetch (DAL_EVENT_IDGEN, see docs/plugins.md).  ev and its
     * strings are copied or used only during the call; a no-op without
     * monitors.  Thread-safe, never blocks. */
    void (*emit)(dal_host_t *host, const dal_event_t *ev);

    /* Since size 200: DAL_HAS_FIELD(dal_host_api_t, api, thread_create).
     * pthread_create(thread, NULL, fn, arg), but the new thread starts with
     * every signal blocked: the application's own threads take its signals
     * (a program that blocks SIGTERM in its threads and waits for it in one
     * would be ended by a plugin's thread that took it).  The calling
     * thread's mask is left as it was.  Returns 0 or pthread_create's
     * error number.  The thread is the caller's: join it (pthread_join)
     * before the instance is destroyed; the host keeps no reference.
     * Call it through dal_plugin_thread_create (below). */
    int (*thread_create)(pthread_t *thread, void *(*fn)(void *), void *arg);
} dal_host_api_t;

/*
 * Start a thread of a plugin's: use it for every thread a plugin makes.
 * api->thread_create when the host has it; under a dal older than size 200,
 * or a test host without it, plain pthread_create (the caller's mask).
 * Returns 0 or pthread_create's error number.
 */
static inline int dal_plugin_thread_create(const dal_host_api_t *api, pthread_t *thread,
                                           void *(*fn)(void *), void *arg)
{
    if (DAL_HAS_FIELD(dal_host_api_t, api, thread_create) && api->thread_create != NULL)
        return api->thread_create(thread, fn, arg);
    return pthread_create(thread, NULL, fn, arg);
}

/* ------------------------------------------------------------ shard kind */

/* What a shard strategy instance is created for (borrowed during create). */
typedef struct dal_shard_table {
    const char *table;        /* logical table name, "wm_food" */
    const char *datasource;   /* datasource group prefix, "dbProductSku" */
    uint32_t db_shard_num;    /* number of data nodes, >= 1 */
    uint32_t table_shard_num; /* number of physical tables in all, a multiple of db_shard_num */
} dal_shard_table_t;

/* Where a value lives: node <datasource><db>, table <table>_<table>. */
typedef struct dal_shard_pos {
    uint32_t db;    /* 0 .. db_shard_num-1 */
    uint32_t table; /* 0 .. table_shard_num-1 */
} dal_shard_pos_t;

typedef struct dal_shard_ops {
    uint32_t struct_size; /* sizeof(dal_shard_ops_t) at build time */

    /* Make an instance for one logical table.  Return 0, or a DAL_E* code
     * with err filled (the host adds the plugin and table names). */
    int (*create)(const dal_host_api_t *api, dal_host_t *host,
                  const dal_shard_table_t *table, const dal_plugin_params_t *params,
                  void **instance, dal_error_t *err);
    void (*destroy)(void *instance);

    /* Map one shard-key value to its position.  A value the strategy cannot
     * place (wrong type, negative, out of range) is an error, never a guess:
     * return DAL_ESHARD with a message.  Must be fast and thread-safe. */
    int (*locate)(void *instance, const dal_value_t *value, dal_shard_pos_t *out,
                  dal_error_t *err);

    /* Optional (NULL: every position).  The positions a range of values
     * touches.  lo/hi NULL mean unbounded.  out has room for
     * table_shard_num entries; set *count. */
    int (*locate_range)(void *instance, const dal_value_t *lo, int lo_inclusive,
                        const dal_value_t *hi, int hi_inclusive,
                        dal_shard_pos_t *out, size_t *count, dal_error_t *err);
} dal_shard_ops_t;

/* ------------------------------------------------------------ idgen kind */

typedef struct dal_idgen_ops {
    uint32_t struct_size;

    /* name is the [idgen NAME] section the instance is made for. */
    int (*create)(const dal_host_api_t *api, dal_host_t *host, const char *name,
                  const dal_plugin_params_t *params, void **instance, dal_error_t *err);
    void (*destroy)(void *instance);

    /* Fill ids[0..n-1] with new unique IDs, increasing within one call.
     * Fails with an error rather than ever returning a duplicate. */
    int (*next)(void *instance, int64_t *ids, size_t n, dal_error_t *err);
} dal_idgen_ops_t;

/* ------------------------------------------------------------- pool kind */

/* The server a pool instance serves (borrowed during create). */
typedef struct dal_pool_server {
    const char *datasource; /* node name, "dbProductSku0" */
    const char *address;    /* "host:port" or the socket path; no password */
} dal_pool_server_t;

typedef struct dal_pool_stats {
    uint32_t in_use;
    uint32_t idle;
    uint32_t waiting;
    uint64_t created;
    uint64_t closed;
    uint64_t timed_out;
} dal_pool_stats_t;

typedef struct dal_pool_ops {
    uint32_t struct_size;

    int (*create)(const dal_host_api_t *api, dal_host_t *host, const dal_pool_server_t *server,
                  const dal_plugin_params_t *params, void **instance, dal_error_t *err);
    /* Called when no connection is out; closes the idle ones. */
    void (*destroy)(void *instance);
    /* Hand out a connection (made with api->conn_open when none is idle). */
    int (*acquire)(void *instance, dal_conn_t **conn, dal_error_t *err);
    /* Take a connection back.  reusable == 0: it is broken, close it. */
    void (*release)(void *instance, dal_conn_t *conn, int reusable);
    /* Optional: current figures. */
    void (*stats)(void *instance, dal_pool_stats_t *out);
} dal_pool_ops_t;

/* ---------------------------------------------------------- monitor kind */

typedef enum dal_event_type {
    DAL_EVENT_STATEMENT = 1, /* one logical statement, after it ended */
    DAL_EVENT_EXECUTION = 2, /* one physical execution on one server */
    DAL_EVENT_ROUTE = 3,     /* a routing decision */
    DAL_EVENT_POOL = 4,      /* a pool figure changed */
    DAL_EVENT_RELOAD = 5,    /* a configuration reload, ok or failed */
    DAL_EVENT_IDGEN = 6,     /* an ID generator fetched a segment of IDs */
    DAL_EVENT_PIN = 7,       /* a session pinned a connection to keep its server state */
    DAL_EVENT_CLIENT = 8,    /* a front end's client connections (dal-proxy):
                                kind "connected" (rows: connected now),
                                "accepted", "refused" (max_connections) or
                                "auth_failed" (rows: total since start) */
    DAL_EVENT_SOURCE = 9,    /* a store's state or revision (at dal_open, at a change
                                of state, at each accepted version): kind "ok" or
                                "unreachable", server the endpoint or why none
                                answers (may be NULL), rows the revision in force */
    DAL_EVENT_SPREP = 10,    /* a server-side prepared statement on a backend
                                connection (datasource, server): kind "prepare",
                                "execute", "reprepare" (after DDL), "evict" (the
                                connection's cache was full) or "fallback" (run
                                as text; mysql_errno: the server's reason, or 0) */
    DAL_EVENT_TXN = 11,      /* a multi or xa transaction ended: table the mode
                                ("multi", "xa"), kind the outcome ("committed",
                                "rolled_back", "partial", "failed"), rows the
                                nodes it touched, error_code */
    DAL_EVENT_XA_RECOVERY = 12, /* one XA recovery pass: one event per action,
                                kind "committed", "rolled_back", "failed" or
                                "pruned" with rows the count (when not 0), and
                                kind "in_doubt" with rows the branches left in
                                doubt after the pass */
    DAL_EVENT_SQL_CACHE = 13 /* a figure of the analysis cache (sampled every
                                second with the pools): kind "entries", "bytes",
                                "max_bytes" (what it holds now, its bound),
                                "evictions", "uncached", "hits" or "misses"
                                (totals since dal_open), rows the value; see
                                dal_sql_cache_stats */
} dal_event_type_t;

/* One event.  Every pointer is borrowed for the duration of on_event and may
 * be NULL.  struct_size is the sender's sizeof(dal_event_t): 88 (64-bit) for
 * ABI 1's first release; test later fields with DAL_HAS_FIELD.  A plugin
 * that sends events (api->emit) sets it to sizeof(dal_event_t). */
struct dal_event {
    uint32_t struct_size;
    dal_event_type_t type;
    const char *kind;           /* statement kind: "select", "insert", ... */
    const char *table;          /* logical table */
    const char *datasource;     /* node */
    const char *server;         /* "host:port" */
    const char *physical_table;
    const char *sql;            /* SQL with literals replaced by ? */
    const char *trace_id;
    uint64_t latency_ns;
    uint64_t rows;              /* rows returned or affected */
    int error_code;             /* DAL_E* or 0 */
    unsigned int mysql_errno;
    /*
     * Since size 92: DAL_HAS_FIELD(dal_event_t, ev, labels_gen).
     * When nonzero, it vouches for the
     * label strings: among events with the same nonzero labels_gen, equal
     * kind, table, datasource or server pointers point to equal text, so
     * a monitor may remember what it looked up by those pointers instead of
     * hashing and comparing the text each time.  Another value (after a
     * reload, say) means the strings may have moved and an address may now
     * hold other text.  0: no promise; compare the text.
     */
    uint32_t labels_gen;
};

/*
 * For front ends built on libdal (dal-proxy): deliver ev (borrowed for the
 * call; labels_gen must be 0) to the monitors of the configuration in
 * force, as the core delivers its own events.  Thread-safe; never blocks.
 */
DAL_API void dal_monitor_emit(dal_t *dal, const dal_event_t *ev);

/* DAL_HAS_FIELD for events, kept for monitors written against it. */
#define DAL_EVENT_HAS(ev, field) DAL_HAS_FIELD(dal_event_t, ev, field)

typedef struct dal_monitor_ops {
    uint32_t struct_size;

    int (*create)(const dal_host_api_t *api, dal_host_t *host,
                  const dal_plugin_params_t *params, void **instance, dal_error_t *err);
    void (*destroy)(void *instance);
    /* Called on the statement's thread: must not block; copy what it keeps. */
    void (*on_event)(void *instance, const dal_event_t *ev);
} dal_monitor_ops_t;

/* ----------------------------------------------------------- source kind */

/*
 * A configuration source delivers the INI document dal runs from, and every
 * later version of it.  A location the application gives where a file path
 * is accepted (dal_open, `dal -c`, `dal-proxy -c`, `dal diff`) selects one
 * by its scheme: "SCHEME://REST[?OPTIONS]" is served by the plugin file
 * source_SCHEME.so, or, for a scheme ending in "s" that has no file of its
 * own, by the plugin without that "s" (etcds:// by source_etcd.so: the TLS
 * variant of a scheme is one plugin).  A plain path is the file source
 * built into the library, which implements these same ops.
 *
 * OPTIONS are "NAME=VALUE&..." (values percent-decoded).  "cache=PATH" is
 * the host's own: the last accepted document is kept in PATH, and a start
 * while the store cannot be reached runs from it.  Every other option is a
 * parameter of the plugin, declared in its descriptor and checked like an
 * INI key before create() is called.
 *
 * The host validates and swaps in every document exactly as it does a
 * file: same checks, same DAL_EVENT_RELOAD events and counters, and a bad
 * document leaves the last good one in force.  A source only moves text.
 */

/* One version of the document, handed from a source to the host. */
typedef struct dal_source_doc {
    uint32_t struct_size; /* sizeof(dal_source_doc_t) of whoever fills it */
    const char *text;     /* the INI document, len bytes, need not end with NUL;
                             borrowed (see read and sink.document for how long) */
    size_t len;
    const char *name;     /* what messages call it in place of a file name, LINE
                             appended: "etcd://h:2379/app/config@42"; no password;
                             borrowed like text */
    int64_t revision;     /* the store's revision of this version; 0: none */
    uint32_t flags;       /* DAL_SOURCE_RESYNC */
} dal_source_doc_t;

/* The store could not say what changed since the last revision seen (etcd
 * compacted it): this version comes from reading the whole key again. */
#define DAL_SOURCE_RESYNC 1u

typedef enum dal_source_state {
    DAL_SOURCE_OK = 0,          /* reading or watching through an endpoint */
    DAL_SOURCE_UNREACHABLE = 1  /* no endpoint answers: the host keeps the last good
                                   document in force while the source retries */
} dal_source_state_t;

/*
 * How a watching source reports to the host.  The sink and user are
 * borrowed from the host from watch() until unwatch() returns; its
 * functions are called from the source's own thread, one call at a time.
 */
typedef struct dal_source_sink {
    uint32_t struct_size;
    void *user; /* the host's, passed back */
    /* A new version.  doc and its strings are borrowed for the call only.
     * Returns 0 when the host accepted it and it is now in force, or the
     * DAL_E* code it was refused with (already logged and counted by the
     * host).  A source goes on watching either way. */
    int (*document)(void *user, const dal_source_doc_t *doc);
    /* The source's state changed.  detail (borrowed for the call, may be
     * NULL) is the endpoint in use, or why none answers; no password. */
    void (*state)(void *user, dal_source_state_t state, const char *detail);
} dal_source_sink_t;

/* One version `history` reports: its revision, the store's count of
 * versions of the key so far (etcd's "version"), its size in bytes. */
typedef dal_history_fn dal_source_history_fn; /* see dal.h */

typedef struct dal_source_ops {
    uint32_t struct_size;

    /* Make an instance for location, the whole string the application
     * gave without its "?OPTIONS" (borrowed during the call; copy what is
     * kept).  params are the options (owned by dal, valid while the
     * instance lives).  *instance is then owned by dal until destroy().
     * Connects to nothing yet: a store that is down is not an error here. */
    int (*create)(const dal_host_api_t *api, dal_host_t *host, const char *location,
                  const dal_plugin_params_t *params, void **instance, dal_error_t *err);
    /* Called after unwatch (if watch was called). */
    void (*destroy)(void *instance);

    /*
     * Read the document: the newest version (revision 0), or the version
     * in force at that revision.  Fills *doc; its strings are owned by the
     * instance and stay valid until the next read on it or destroy.
     * Errors: DAL_ECONNECT when no endpoint answers (the host may then
     * start from its cache), DAL_ECONFIG when there is no document (name
     * the key), DAL_EIO and others as the store says.  Not called by two
     * threads at once on one instance, but may run beside the watch.
     */
    int (*read)(void *instance, int64_t revision, dal_source_doc_t *doc, dal_error_t *err);

    /*
     * Optional (NULL: the source is read once).  Start delivering every
     * version after after_revision through sink->document, from a thread
     * of the source's own, in order; when that revision is no longer known
     * to the store, read the whole document again and deliver it with
     * DAL_SOURCE_RESYNC.  Reconnect and retry without end: report each
     * change of state through sink->state, never give up.  after_revision
     * 0: deliver from the newest version on (read it first).
     */
    int (*watch)(void *instance, int64_t after_revision, const dal_source_sink_t *sink,
                 dal_error_t *err);
    /* Stop watching; when it returns, no sink call is running or will run. */
    void (*unwatch)(void *instance);

    /*
     * Optional (NULL: read-only source).  Store text (len bytes, borrowed
     * during the call) as the new
     * version, only if the key's current revision is expect_revision (0:
     * the key must not exist yet; -1: unconditionally), atomically: with
     * any other current revision nothing is written and the result is
     * DAL_ESTATE, saying which revision is current.  Sets *revision to
     * the new version's revision.
     */
    int (*write)(void *instance, const char *text, size_t len, int64_t expect_revision,
                 int64_t *revision, dal_error_t *err);

    /* Optional.  Call fn(user, ...) for each version the store still
     * keeps, newest first, on the calling thread (user is the caller's). */
    int (*history)(void *instance, dal_source_history_fn fn, void *user, dal_error_t *err);
} dal_source_ops_t;

/* ------------------------------------------------------------ descriptor */

typedef struct dal_plugin {
    uint32_t abi_version;  /* DAL_PLUGIN_ABI_VERSION the plugin was built with */
    uint32_t struct_size;  /* sizeof(dal_plugin_t) the plugin was built with */
    dal_plugin_kind_t kind;
    const char *name;          /* must match the file name: K_<name>.so */
    const char *version;       /* the plugin's own version, free-form */
    const char *description;   /* one line */
    const dal_param_spec_t *params; /* accepted parameters, NULL-name terminated; NULL: none */
    const void *ops;           /* const dal_shard_ops_t * etc., by kind (source: dal_source_ops_t) */
} dal_plugin_t;

typedef const dal_plugin_t *(*dal_plugin_entry_fn)(void);

#if defined(__GNUC__)
#define DAL_PLUGIN_VISIBLE __attribute__((visibility("default")))
#else
#define DAL_PLUGIN_VISIBLE
#endif

/*
 * Export the descriptor.  Put once in a plugin's source:
 *
 *     static const dal_plugin_t my_plugin = { DAL_PLUGIN_ABI_VERSION,
 *         sizeof(dal_plugin_t), DAL_PLUGIN_SHARD, "mine", "1.0", "...",
 *         my_params, &my_ops };
 *     DAL_PLUGIN_DECLARE(my_plugin)
 */
#define DAL_PLUGIN_DECLARE(descriptor)                                          \
    DAL_PLUGIN_VISIBLE const dal_plugin_t *dal_plugin_entry(void);              \
    DAL_PLUGIN_VISIBLE const dal_plugin_t *dal_plugin_entry(void) { return &(descriptor); }

#ifdef __cplusplus
}
#endif
#endif /* DAL_PLUGIN_H */
