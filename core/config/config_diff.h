/*
 * config_diff.h -- comparing two loaded configurations.
 */
#ifndef DAL_CORE_CONFIG_DIFF_H
#define DAL_CORE_CONFIG_DIFF_H

#include "config.h"

/* Report to fn each way b differs from a (what, name, change: borrowed for
 * the call); DAL_ECONFIG when b reshards a table and does not allow it. */
int config_diff(const dal_config_t *a, const dal_config_t *b, dal_diff_fn fn, void *user,
                dal_error_t *err);

/* 0, or DAL_ECONFIG naming next's FILE:LINE when next changes where a
 * table's rows live without [dal] allow_reshard. */
int config_reshard_check(const dal_config_t *old, const dal_config_t *next, dal_error_t *err);

/* Non-zero if b keeps the rows of the table elsewhere than a does (kind,
 * datasource, shard counts, key, strategy or its parameters differ). */
int config_layout_changed(const dal_cfg_table_t *a, const dal_cfg_table_t *b);

/* Non-zero if the two parameter lists hold the same names and values, in
 * any order. */
int config_params_same(const dal_cfg_params_t *a, const dal_cfg_params_t *b);

/* Non-zero if the two datasources (of configurations ca and cb) reach the
 * same servers with the same settings: their nodes are interchangeable. */
int config_datasource_same(const dal_config_t *ca, const dal_cfg_datasource_t *a,
                           const dal_config_t *cb, const dal_cfg_datasource_t *b);

#endif /* DAL_CORE_CONFIG_DIFF_H */
