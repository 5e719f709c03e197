/*
 * snapshot.h -- everything built from one INI file, as one immutable unit.
 *
 * A snapshot owns the parsed config, one node per datasource (with its
 * connection cache), one runtime table per [table] section with its shard
 * strategy instance, and a reference on every plugin file it uses.  A
 * statement takes a reference on the current snapshot for its whole run,
 * so a snapshot (and the plugins it loaded) lives until its last statement
 * ends.  Lookups are read-only and need no lock.
 */
#ifndef DAL_CORE_SNAPSHOT_H
#define DAL_CORE_SNAPSHOT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "log.h"
#include "plugin_load.h"

/* The host's context for one plugin instance (dal_host_t of the SDK). */
struct dal_host {
    const dal_logger_t *log;        /* borrowed from the dal_t */
    char component[96];             /* "shard_mod:wm_food" */
    struct dal_snapshot *snap;      /* borrowed: the snapshot owns the instance */
    struct dal_server *server;      /* borrowed; the server of a pool instance, else NULL */
};

struct dal_idgen_set;   /* idgen.c: the [idgen] instances */
struct dal_monitor_set; /* monitor.c: the enabled [monitor] instances */
struct dal_pool;        /* pool.c: one node's connection pool */

struct dal_health;      /* health.c: the replica checker of a node */

/* What the health checker last found out about a replica. */
enum {
    DAL_HEALTH_UNKNOWN = 0, /* not checked yet: gets no reads */
    DAL_HEALTH_UP,          /* in rotation */
    DAL_HEALTH_DOWN         /* unreachable, not replicating, or too far behind */
};

/*
 * One server of a node: its master or one of its replicas.  Each has its
 * own connections: a pool plugin instance is made per server, or the
 * built-in cache is used.
 */
typedef struct dal_server {
    struct dal_node *node;           /* borrowed: the node holding this server */
    int replica;                     /* index into node->cfg->replicas; -1: the master */
    uint32_t weight;                 /* load_balance = weighted (1 for the master) */
    char address[320];               /* "host:port" or the socket path, no password */
    dal_connpool_t pool;             /* built-in cache, used when pool_inst is NULL */
    struct dal_pool *pool_inst;      /* owned; the pool plugin's instance, or NULL */
    atomic_int health;               /* DAL_HEALTH_*; written by the checker, read lock-free */
    atomic_uint outstanding;         /* statements in flight (least_outstanding only) */
    dal_gtid_pos_t gtid;             /* a replica's @@gtid_slave_pos at the last check;
                                        under node->gtid_mu */
} dal_server_t;

/*
 * A datasource node: a master and any number of replicas.  Reference
 * counted: a reload keeps the node (its pools, connections and health
 * checker) of a datasource whose settings did not change, so one node can
 * belong to several snapshots.  It keeps the config it was made from
 * alive, since its connections point into it.
 */
typedef struct dal_node {
    atomic_int refs;
    uint64_t ryw_key;                /* a hash of the datasource's name: what read-your-
                                        writes marks refer to, so that they still hold
                                        when a reload rebuilds the node (two names with
                                        one hash only send more reads to a master) */
    dal_config_t *owner;             /* one reference: cfg points into it */
    const dal_cfg_datasource_t *cfg; /* inside owner */
    const dal_logger_t *log;         /* borrowed from the dal_t, which outlives its nodes */
    dal_server_t master;
    dal_server_t *replicas;          /* owned array, cfg->nreplicas long (NULL if none) */
    size_t nreplicas;
    atomic_uint rr;                  /* round-robin cursor over the replicas */
    pthread_mutex_t gtid_mu;         /* guards replicas[].gtid */
    struct dal_health *health;       /* owned: the replica checker; NULL without replicas */
} dal_node_t;

typedef struct dal_table {
    const dal_cfg_table_t *cfg;      /* borrowed from the snapshot's config */
    int sharded;
    uint32_t tables_per_db;          /* table_shard_num / db_shard_num */
    dal_node_t **nodes;              /* owned array of borrowed nodes, db_shard_num long */
    dal_plugin_lib_t *lib;           /* one reference; NULL if not sharded */
    const dal_shard_ops_t *ops;      /* inside lib */
    void *strategy;                  /* instance, owned via ops->destroy */
    dal_plugin_params_t *params;     /* owned */
    struct dal_host host;
    _Atomic(struct dal_columns *) columns; /* borrowed from columns_seen: the list in use
                                              (columns.h); NULL until learned, and again
                                              once dal suspects it changed */
    _Atomic(struct dal_columns *) columns_seen; /* owned: every list learned, newest first,
                                                   kept until the snapshot goes (a
                                                   statement may still read an older one) */
} dal_table_t;

/* A table's column names in order, as learned from its first physical
 * table (columns.h): one block, owned by the table. */
typedef struct dal_columns {
    struct dal_columns *next; /* the list learned before (columns_seen) */
    size_t n;
    char *names[]; /* n names, each pointing into the same block */
} dal_columns_t;

typedef struct dal_snapshot {
    atomic_int refs;
    uint32_t gen;                    /* unique per snapshot built in this process (never 0):
                                        what a statement's route memo was made for (route.c) */
    dal_config_t *cfg;               /* owned */
    char *plugin_path;               /* owned; colon-separated directories */
    const dal_logger_t *log;         /* borrowed from the dal_t */
    dal_node_t **nodes;              /* owned array of references, cfg->ndatasources long */
    size_t nreused;                  /* nodes carried over from the previous snapshot */
    size_t nnodes;
    dal_table_t *tables;             /* owned, cfg->ntables long */
    size_t ntables;
    int fenced;                      /* a table has write_fence: writes may wait (fence.h) */
    dal_node_t *default_node;        /* borrowed; NULL if none */
    dal_node_t *server_node;         /* borrowed: [dal] server_schemas' node; NULL if none */
    struct dal_idgen_set *idgens;    /* owned (idgen_set_free) */
    struct dal_monitor_set *monitors;/* owned (monitor_set_free) */
    _Atomic(struct dal_sql_cache *) sql_cache; /* borrowed from the dal_t, which frees it after
                                        its last snapshot: set when the snapshot goes into
                                        force, for the monitors' sampler; NULL before, and
                                        outside a dal_t (dal_check_config) */
    /* open-addressing indexes into nodes[] / tables[] (value index+1, 0 empty) */
    uint32_t *node_index;
    uint32_t *table_index;
    size_t index_mask;
    void (*teardown)(struct dal_snapshot *s); /* frees s and all it owns (snapshot_build.c) */
} dal_snapshot_t;

/* FNV-1a of a name, ASCII-lower-cased when fold (table names match
 * case-insensitively): the indexes' hash, also a node's key. */
uint32_t snapshot_name_hash(const char *s, size_t n, int fold);

/* Build the name indexes of s's tables and nodes (the builder, once). */
int snapshot_index(dal_snapshot_t *s);

/* Physical table name "<logical>_<pos>" into out (cap bytes); returns out. */
const char *physical_name(const dal_table_t *t, int32_t pos, char *out, size_t cap);

/* Take / drop a reference; the last one tears the snapshot down (with the
 * teardown its builder set). */
void snapshot_ref(dal_snapshot_t *s);
void snapshot_unref(dal_snapshot_t *s);

/* Lookups (NULL if absent).  Tables match ASCII case-insensitively. */
const dal_table_t *snapshot_table(const dal_snapshot_t *s, const char *name, size_t len);
dal_node_t *snapshot_node(const dal_snapshot_t *s, const char *name);

/* Logical databases ([schema NAME]; NULL names the top level, the only one
 * a libdal program has).  snapshot_schema_known: the schema is NULL or a
 * [schema] of s.  snapshot_schema_node: the node of its default_datasource
 * (NULL if it has none or is unknown).  snapshot_table_schema: whether
 * table t is one of schema's tables. */
int snapshot_schema_known(const dal_snapshot_t *s, const char *schema);
dal_node_t *snapshot_schema_node(const dal_snapshot_t *s, const char *schema);
/* Inline: every table reference of every statement asks, almost always
 * with both at the top level. */
static inline int snapshot_table_schema(const dal_table_t *t, const char *schema)
{
    const char *own = t->cfg->schema;

    return own == NULL ? schema == NULL : schema != NULL && strcmp(own, schema) == 0;
}

/* The plugin search path: override, else $DAL_PLUGIN_DIR, else the file's
 * plugin_dir (relative to the file's directory), else the installed one.
 * Returned string owned by the caller. */
char *plugin_path_resolve(const char *override, const dal_config_t *cfg);

#endif /* DAL_CORE_SNAPSHOT_H */
