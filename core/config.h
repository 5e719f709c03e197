/*
 * config.h -- the INI file as plain data.
 *
 * dal_config_load() reads the file with inih and checks everything that can
 * be checked without loading plugins: sections, keys, numbers, URLs, shard
 * counts, datasource groups.  Plugin names and plugin parameters are kept as
 * text with their line numbers; the snapshot checks them against the plugin
 * descriptors (see snapshot.c), so every mistake still reports FILE:LINE.
 *
 * A dal_config_t is immutable once loaded and owned by whoever loaded it.
 */
#ifndef DAL_CORE_CONFIG_H
#define DAL_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "dal/dal.h"
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

/* [datasource NAME] */
typedef struct dal_cfg_datasource {
    char *name;        /* owned */
    int line;          /* line of the section header */
    dal_url_t master;  /* owned contents */
    int master_line;
    uint32_t connect_timeout_ms; /* connect_timeout = 5s (default 5000) */
    uint32_t read_timeout_ms;    /* read_timeout = 30s (default 30000; 0: none) */
} dal_cfg_datasource_t;

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
} dal_cfg_table_t;

typedef struct dal_config {
    char *path;               /* owned; as given to dal_config_load */
    char *plugin_dir;         /* owned; NULL: not set in the file */
    int plugin_dir_line;
    char *default_datasource; /* owned; NULL: none */
    int default_datasource_line;

    dal_cfg_datasource_t *datasources; /* owned array, in file order */
    size_t ndatasources;
    dal_cfg_table_t *tables;           /* owned array, in file order */
    size_t ntables;
} dal_config_t;

/*
 * Load and check path.  On success *out is owned by the caller (free with
 * dal_config_free).  On failure returns DAL_ECONFIG (or DAL_EIO if the file
 * cannot be read, DAL_ENOMEM) and err->message is "FILE:LINE: message" for
 * the first mistake.  Passwords never appear in messages.
 */
int dal_config_load(const char *path, dal_config_t **out, dal_error_t *err);
void dal_config_free(dal_config_t *cfg);

/* Lookups; NULL if absent.  Names compare exactly (datasources) or ASCII
 * case-insensitively (tables, as MySQL users expect of logical names). */
const dal_cfg_datasource_t *dal_config_datasource(const dal_config_t *cfg, const char *name);
const dal_cfg_table_t *dal_config_table(const dal_config_t *cfg, const char *name);

/*
 * Parse a duration ("250ms", "5s", "2m", "1h", bare number = seconds) into
 * milliseconds.  Returns 0 or -1.  Shared with plugin parameter checking.
 */
int dal_parse_duration_ms(const char *text, int64_t *out_ms);
/* Strict signed 64-bit decimal (surrounding blanks allowed).  0 or -1. */
int dal_parse_int64(const char *text, int64_t *out);
/* true/false, yes/no, on/off, 1/0 (case-insensitive).  0 or -1. */
int dal_parse_bool(const char *text, int *out);

#endif /* DAL_CORE_CONFIG_H */
