/*
 * config.h -- the INI file as plain data.
 *
 * config_load() reads the file with inih and checks everything that can
 * be checked without loading plugins: sections, keys, numbers, URLs, shard
 * counts, datasource groups.  Plugin names and plugin parameters are kept as
 * text with their line numbers; the snapshot checks them against the plugin
 * descriptors (see snapshot.c), so every mistake still reports FILE:LINE.
 *
 * The keys each section accepts -- type, range, default, the field below
 * they are stored in -- are declared as data (see "keys" below), the one
 * place to add a key; docs/configuration.md's key tables are printed from
 * it (make config-doc) and checked against it by `make check`.
 *
 * A dal_config_t is immutable once loaded and owned by whoever loaded it.
 */
#ifndef DAL_CORE_CONFIG_H
#define DAL_CORE_CONFIG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dal/dal.h"
#include "parse.h"
#include "url.h"

/* A "role.param = value" key kept for a plugin (strategy.bounds = ...). */
typedef struct dal_cfg_param {
    char *name;   /* owned; without the role prefix: "bounds" */
    char *value;  /* owned; ${VAR} already expanded */
    int line;
} dal_cfg_param_t;

typedef struct dal_cfg_params {
    dal_cfg_param_t *items; /* owned array */
    size_t n;
} dal_cfg_params_t;

/* One replica of a datasource: `replicas = URL, URL, ...` where each URL
 * may carry the extra option `weight=N` (default 1). */
typedef struct dal_cfg_replica {
    dal_url_t url;     /* owned contents */
    uint32_t weight;   /* >= 1 */
} dal_cfg_replica_t;

typedef enum dal_lb_policy {
    DAL_LB_ROUND_ROBIN = 0,   /* default */
    DAL_LB_RANDOM,
    DAL_LB_WEIGHTED,
    DAL_LB_LEAST_OUTSTANDING
} dal_lb_policy_t;

/* [datasource NAME] */
typedef struct dal_cfg_datasource {
    char *name;        /* owned */
    int line;          /* line of the section header */
    dal_url_t master;  /* owned contents */
    int master_line;
    uint32_t connect_timeout_ms; /* connect_timeout = 5s (default 5000) */
    uint32_t read_timeout_ms;    /* read_timeout = 30s (default 30000; 0: none) */

    /* read-write separation */
    dal_cfg_replica_t *replicas;   /* owned array; replicas = URL [, URL ...] */
    size_t nreplicas;
    int replicas_line;
    dal_lb_policy_t load_balance;  /* load_balance = round_robin|random|weighted|least_outstanding */
    uint32_t max_replica_lag_ms;   /* max_replica_lag = 5s (default 5000; 0: no limit) */
    uint32_t health_check_ms;      /* health_check_interval = 1s (default 1000) */
    int read_your_writes;          /* read_your_writes: 0 off, 1 session (default), 2 window */
    uint32_t ryw_window_ms;        /* the window when read_your_writes = <duration> */

    /* pool.* keys overriding [dal]'s for this datasource */
    dal_cfg_params_t pool_params;

    int local_infile;              /* [dal] local_infile, copied here for the connections */
} dal_cfg_datasource_t;

/* What a [table] is. */
typedef enum dal_table_kind {
    DAL_TABLE_SINGLE = 0,  /* unsharded: one datasource, name unchanged */
    DAL_TABLE_SHARDED,     /* strategy over db_shard_num nodes x table_shard_num tables */
    DAL_TABLE_BROADCAST    /* broadcast = true: a full copy on every node of the group */
} dal_table_kind_t;

/* One lookup of a [table]: the column read through it, and whether its
 * lookup table -- the [table] named TABLE_lookup_COLUMN, sharded by the
 * column -- holds one row per value (docs/lookup.md). */
typedef struct dal_cfg_lookup {
    char *column;            /* owned */
    int unique;              /* listed in lookup_unique */
} dal_cfg_lookup_t;

/* [table NAME] */
typedef struct dal_cfg_table {
    char *name;              /* owned; logical table name */
    int line;                /* line of the section header */
    char *datasource;        /* owned; group prefix (sharded) or node name (unsharded) */
    int datasource_line;
    uint32_t db_shard_num;   /* 1 if not sharded */
    uint32_t table_shard_num;/* 1 if not sharded */
    char *shard_key;         /* owned; NULL if not sharded */
    char *strategy;          /* owned; plugin name; NULL if not sharded */
    int strategy_line;
    dal_cfg_params_t strategy_params; /* strategy.* keys */

    dal_table_kind_t kind;   /* broadcast = true makes a BROADCAST table (datasource is then
                                a group prefix and db_shard_num its node count; no strategy) */
    int allow_scatter;       /* allow_scatter = true|false (default true) */
    char *binding;           /* owned; binding = GROUP: tables of one binding group share a
                                layout and are routed together by one shard value; NULL */
    int binding_line;
    char *id_column;         /* owned; id_column = id: filled on INSERT when missing; NULL */
    char *write_fence;       /* owned; write_fence = DEADLINE (Unix ms): writes to the table
                                wait until it is gone or past (fence.h); NULL: none */
    char *idgen;             /* owned; idgen = NAME of an [idgen NAME] section; NULL */
    int idgen_line;
    char *schema;            /* owned; schema = NAME of a [schema NAME] section; NULL: the
                                top level (what a libdal program and [proxy] database see) */
    int schema_line;
    char *lookup;            /* owned; lookup = COL, COL as written; NULL */
    char *lookup_unique;     /* owned; lookup_unique = COL, COL as written; NULL */
    int lookup_line;         /* the line of the later of the two keys */
    dal_cfg_lookup_t *lookups; /* owned: both keys' columns, in order; nlookups of them */
    size_t nlookups;
} dal_cfg_table_t;

/* [schema NAME]: one more logical database dal-proxy serves.  Its tables
 * are the [table] sections with schema = NAME; a table name no [table]
 * of it declares goes to its default_datasource. */
typedef struct dal_cfg_schema {
    char *name;               /* owned */
    int line;
    char *default_datasource; /* owned; NULL: none (such statements are refused) */
    int default_datasource_line;
} dal_cfg_schema_t;

/* [idgen NAME]: plugin = leaf; every other key is a parameter of the plugin */
typedef struct dal_cfg_idgen {
    char *name;              /* owned */
    int line;
    char *plugin;            /* owned */
    int plugin_line;
    dal_cfg_params_t params; /* the other keys, names as written */
} dal_cfg_idgen_t;

/* [monitor NAME]: plugin = prometheus; enabled = true; other keys are parameters */
typedef struct dal_cfg_monitor {
    char *name;              /* owned */
    int line;
    char *plugin;            /* owned; defaults to NAME */
    int plugin_line;
    int enabled;             /* default true */
    dal_cfg_params_t params;
} dal_cfg_monitor_t;

/* [proxy]: dal-proxy's own settings (the defaults when the file has no
 * [proxy] section). */
typedef struct dal_cfg_proxy {
    int line;                 /* of the [proxy] header; 0: none (takes no key) */
    char *listen;             /* owned; "HOST:PORT[, HOST:PORT ...]" (default 127.0.0.1:3307) */
    int listen_line;
    char *database;           /* owned; the schema clients connect to and USE (default dal) */
    uint32_t threads;         /* I/O threads; 0: one per core (default) */
    int inline_io;            /* statements' backend I/O on the I/O threads (default 1) */
    uint32_t max_connections; /* default 4096 */
    uint32_t max_allowed_packet; /* bytes a client's packet may hold (default 64 MiB) */
    uint32_t connect_timeout_ms; /* to authenticate, from connecting (default 10 s) */
    char *tls_cert;           /* owned; PEM file; NULL: no TLS */
    int tls_cert_line;
    char *tls_key;            /* owned; PEM file of the certificate's key */
    int tls_key_line;
    int require_tls;          /* refuse logins without TLS (needs tls_cert) */
    int require_tls_line;
    uint32_t auth_delay_after; /* failed logins from an address before its replies wait; 0: never */
    uint32_t auth_delay_max_ms; /* the longest such wait */
    int users;                /* 0: [proxy user] accounts only; 1: also a datasource's (backend) */
    char *users_datasource;   /* owned; whose accounts with users = backend; NULL: the default */
    int users_datasource_line;
} dal_cfg_proxy_t;

/* [proxy user NAME]: who may connect to dal-proxy, with exactly one of
 * password (${VAR} expanded) and password_hash. */
typedef struct dal_cfg_proxy_user {
    char *name;               /* owned */
    int line;
    char *password;           /* owned; NULL: none */
    int password_line;
    char *password_hash;      /* owned; '*' and 40 hex digits (mysql_native_password); NULL: none */
    int password_hash_line;
} dal_cfg_proxy_user_t;

typedef struct dal_config {
    atomic_int refs;          /* config_ref / config_free */
    char *path;               /* owned; as given to config_load */
    char *plugin_dir;         /* owned; NULL: not set in the file */
    int plugin_dir_line;
    char *default_datasource; /* owned; NULL: none */
    int default_datasource_line;
    char *server_schemas;     /* owned; the datasource of the databases no [schema] or [proxy]
                                 database declares; "none": refused; NULL: default_datasource's */
    int server_schemas_line;
    uint32_t max_parallel;    /* max_parallel = 8: data nodes one statement uses at once */
    int watch;                /* watch = true: reload the file when it changes */
    int validate_connect;     /* validate_connect = true: a reload connects to every datasource first */
    int allow_reshard;        /* allow_reshard = true: a reload may change shard layouts */
    int server_prepare;       /* server_prepare = auto: 0 auto, 1 off (sprep.h) */
    int server_prepare_line;  /* 0: not in the file (the environment may choose) */
    uint32_t server_prepare_cache; /* server_prepare_cache = 64: handles per connection */
    uint32_t sql_cache_bytes; /* sql_cache_bytes = 64M: bytes the analysis cache holds */
    uint32_t sql_cache_max_statement; /* sql_cache_max_statement = 64K: longest text kept */
    int sql_shape_cache;      /* sql_shape_cache = true: texts differing in compared literals share an analysis */
    char *pool;               /* owned; pool = default (the pool plugin); NULL: built-in cache */
    int pool_line;
    dal_cfg_params_t pool_params;      /* pool.* keys */
    int transaction_mode;     /* transaction_mode = single: a dal_txn_mode_t */
    int local_infile;         /* local_infile = off: 0 off, 1 on (dal reads LOCAL INFILE files) */
    char *xa_log;             /* owned; xa_log = DATASOURCE of the XA decision log; NULL: none */
    int xa_log_line;
    uint32_t xa_grace_ms;     /* xa_grace = 60s */
    uint32_t xa_recover_interval_ms; /* xa_recover_interval = 30s; 0: no background recovery */
    uint32_t lookup_cache_ms;          /* lookup_cache = 0: how long a lookup read is kept */

    dal_cfg_datasource_t *datasources; /* owned array, in file order */
    size_t ndatasources;
    dal_cfg_table_t *tables;           /* owned array, in file order */
    size_t ntables;
    size_t nlookups;                   /* lookups of all the tables (lookup.h) */
    dal_cfg_idgen_t *idgens;           /* owned array, in file order */
    size_t nidgens;
    dal_cfg_monitor_t *monitors;       /* owned array, in file order */
    size_t nmonitors;
    dal_cfg_schema_t *schemas;         /* owned array, in file order */
    size_t nschemas;
    dal_cfg_proxy_t proxy;
    dal_cfg_proxy_user_t *proxy_users; /* owned array, in file order */
    size_t nproxy_users;
} dal_config_t;

/*
 * Load and check path.  On success *out is owned by the caller (free with
 * config_free).  On failure returns DAL_ECONFIG (or DAL_EIO if the file
 * cannot be read, DAL_ENOMEM) and err->message is "FILE:LINE: message" for
 * the first mistake.  Passwords never appear in messages.
 */
int config_load(const char *path, dal_config_t **out, dal_error_t *err);
/* The same for a document in memory (text, len bytes, borrowed during the
 * call) that a configuration source delivered; name takes the file's place
 * in messages and in cfg->path ("etcd://h:2379/app/config@42"). */
int config_parse(const char *name, const char *text, size_t len, dal_config_t **out,
                 dal_error_t *err);
/* Another reference: a datasource node carried over a reload keeps the
 * config it was made from (its connections point into it). */
dal_config_t *config_ref(dal_config_t *cfg);
/* Drop a reference; the last one frees.  NULL is a no-op. */
void config_free(dal_config_t *cfg);

/* Lookups; NULL if absent.  Names compare exactly (datasources) or ASCII
 * case-insensitively (tables, as MySQL users expect of logical names). */
const dal_cfg_datasource_t *config_datasource(const dal_config_t *cfg, const char *name);
const dal_cfg_table_t *config_table(const dal_config_t *cfg, const char *name);
/* The [schema NAME] section (names compare exactly, as MySQL's database
 * names on Linux); NULL if absent. */
const dal_cfg_schema_t *config_schema(const dal_config_t *cfg, const char *name);

/* Room for one value quoted by config_quote: 60 characters, "...", NUL. */
#define DAL_CFG_QUOTE_SIZE 64

/*
 * text (a value, key or section name from the file) as a message may quote
 * it: any USER:PASSWORD@ in it masked to USER:***@ (url_mask, whatever
 * the key -- a URL written under the wrong key is the usual way a password
 * reaches a message), then cut to 60 characters with "..." after a cut.
 * buf is the caller's, DAL_CFG_QUOTE_SIZE bytes; returns buf.
 */
const char *config_quote(const char *text, char *buf);


/* ------------------------------------------------------------------ keys
 *
 * The keys of each section, declared as data (config_keys.c, a part of
 * this module as params.c is of plugin.h's).  One table per section kind
 * declares every key: its name, its type, where its value goes in the
 * section's struct, its default, the values allowed and a one-line
 * description.  config.c reads every key through these tables (find the
 * row, convert by type, range-check, store, keep the line), so `dal check`
 * and dal_open check exactly what the tables say, and tests/unit/config_doc.c
 * prints the key tables of docs/configuration.md from them (make
 * config-doc), so the documentation cannot drift from the code either.
 * The tables and rules are static, read-only data.
 */

#define DAL_CFG_NAME_MAX 64   /* datasource, table, column, plugin and parameter names */

/* The characters a name may hold, and that rule in words for messages and docs. */
typedef struct dal_cfg_rule {
    int (*ok)(int c);
    const char *text;   /* "letters, digits, '_'" */
} dal_cfg_rule_t;

extern const dal_cfg_rule_t dal_cfg_rule_ds;      /* datasource, idgen, monitor names */
extern const dal_cfg_rule_t dal_cfg_rule_table;   /* logical table names */
extern const dal_cfg_rule_t dal_cfg_rule_column;  /* the same, worded for columns */
extern const dal_cfg_rule_t dal_cfg_rule_plugin;  /* plugin names, worded as such */
extern const dal_cfg_rule_t dal_cfg_rule_lower;   /* the same characters, plainly worded */
extern const dal_cfg_rule_t dal_cfg_rule_word;    /* binding groups, pool.* and strategy.* names */

/* Non-zero if s is 1..DAL_CFG_NAME_MAX characters, all allowed by rule. */
int cfg_name_ok(const char *s, const dal_cfg_rule_t *rule);

/* What a key's value is, and so how it is converted and where it goes. */
typedef enum dal_cfg_type {
    DAL_CFG_STRING,    /* non-empty text, a name if the row has a rule: char * (owned) */
    DAL_CFG_COUNT,     /* a whole number min..max, min >= 0: uint32_t */
    DAL_CFG_BOOL,      /* true/false, yes/no, on/off, 1/0 (any case): int 1/0 */
    DAL_CFG_DURATION,  /* 250ms, 5s, 2m, 1h, bare number = seconds; min..max ms: uint32_t */
    DAL_CFG_ENUM,      /* one of words (any case): int, the word's index */
    DAL_CFG_MODE,      /* one of words, or a duration > 0: int (the word's index, or the
                          number of words for a duration) and uint32_t ms at aux */
    DAL_CFG_URL,       /* a datasource URL: stored by the row's setter */
    DAL_CFG_URL_LIST,  /* comma-separated URLs: stored by the row's setter */
    DAL_CFG_PARAMS     /* PREFIX.PARAM = value for a plugin, kept as text: dal_cfg_params_t */
} dal_cfg_type_t;

/* One key = value being set. */
typedef struct dal_cfg_value {
    const char *key;    /* as written: "pool.max_idle" */
    char *text;         /* ${VAR} already expanded; owned by the caller, but a setter may
                           take it (setting text to NULL) or change it in place */
    int line;           /* the key's line; 0 while defaults are set */
    dal_error_t *err;   /* filled on failure (never NULL) */
} dal_cfg_value_t;

typedef struct dal_cfg_key dal_cfg_key_t;

/* A key that needs more than its type's conversion.  obj is the section's struct. */
typedef int (*dal_cfg_setter_fn)(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v);

/*
 * One row: one key of a section.  Offsets are into the section's struct:
 * dal_config_t for [dal], dal_cfg_datasource_t, dal_cfg_table_t,
 * dal_cfg_idgen_t, dal_cfg_monitor_t.  An offset of 0 means "none": every
 * one of those structs starts with a field no key is stored in (its name,
 * or the reference count).
 */
struct dal_cfg_key {
    const char *name;          /* as written; PARAMS: the prefix ("pool."), "" for any other key */
    dal_cfg_type_t type;
    size_t offset;             /* the value */
    size_t line;               /* the int keeping the key's line, for later FILE:LINE messages; 0: none */
    size_t aux;                /* MODE: the uint32_t of the duration */
    const char *def;           /* default, as INI text, set when the section begins; NULL: none */
    int64_t min, max;          /* COUNT, DURATION and the duration of MODE */
    const dal_cfg_rule_t *rule;/* STRING: the value is a name; PARAMS: the parameter names */
    const char *const *words;  /* ENUM, MODE: NULL-terminated, in the order of the stored values */
    dal_cfg_setter_fn set;     /* NULL: the type's own conversion stores at offset */
    int required;              /* non-zero: a section without the key is an error */
    const char *example;       /* required keys: the value to suggest, "NAME" */
    const char *unset;         /* docs: what leaving the key out means, when def is NULL */
    const char *help;          /* docs: one line of Markdown, no '|' */
};

/* The tables, each ending with a row whose name is NULL. */
extern const dal_cfg_key_t dal_cfg_dal_keys[];
extern const dal_cfg_key_t dal_cfg_datasource_keys[];
extern const dal_cfg_key_t dal_cfg_table_keys[];
extern const dal_cfg_key_t dal_cfg_idgen_keys[];
extern const dal_cfg_key_t dal_cfg_monitor_keys[];
extern const dal_cfg_key_t dal_cfg_proxy_keys[];
extern const dal_cfg_key_t dal_cfg_proxy_user_keys[];
extern const dal_cfg_key_t dal_cfg_schema_keys[];

/* Every section kind and its table, for the docs; ends with a NULL word. */
typedef struct dal_cfg_section_keys {
    const char *word;            /* "datasource" */
    const char *title;           /* "[datasource NAME]" */
    const dal_cfg_key_t *keys;
} dal_cfg_section_keys_t;

extern const dal_cfg_section_keys_t dal_cfg_sections[];

/* The row of key in keys: its own row, else the first PARAMS row whose
 * prefix starts it; NULL if the section has no such key. */
const dal_cfg_key_t *cfg_key_find(const dal_cfg_key_t *keys, const char *key);

/*
 * Convert v->text by k's type (or k's setter), check it, store it in obj
 * and keep v->line in k's line field.  Returns 0, or DAL_ECONFIG/DAL_ENOMEM
 * with v->err's message being what follows "FILE:LINE: " ("max_parallel:
 * 257 is out of range (1..256)"); any value it quotes is masked
 * (config_quote).
 */
int cfg_key_set(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v);

/*
 * The value of k in obj (its section's struct) as the file would write it,
 * for messages: "(none)" for a string left out, an ENUM's word, a duration
 * as "250ms" or "5s".  buf is the caller's (n bytes, at least
 * DAL_CFG_QUOTE_SIZE; strings are masked and cut as config_quote does).
 * NULL for a key whose value is not one field (URL, URL_LIST, PARAMS, or
 * one with its own setter).
 */
const char *cfg_key_text(const dal_cfg_key_t *k, const void *obj, char *buf, size_t n);

/* Set every default of keys in obj, a new section struct.  0 or an error code. */
int cfg_key_defaults(const dal_cfg_key_t *keys, void *obj, dal_error_t *err);

/*
 * Append a zeroed element to the array *arr of *n elements and count it;
 * NULL if out of memory.  The capacity follows from n: the array doubles
 * whenever n reaches a power of two, so no array needs a capacity field.
 */
void *cfg_add_item(void **arr, size_t *n, size_t size);


#endif /* DAL_CORE_CONFIG_H */
