/*
 * snapshot.c -- the runtime a configuration became: lookups, references,
 * physical names.  Building one is snapshot_build.c's.
 */
#include <ctype.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "snapshot.h"

#ifndef DAL_PLUGIN_DIR_DEFAULT
#define DAL_PLUGIN_DIR_DEFAULT "/usr/local/lib/dal/plugins"
#endif

const char *dal_default_plugin_dir(void)
{
    return DAL_PLUGIN_DIR_DEFAULT;
}

char *plugin_path_resolve(const char *override, const dal_config_t *cfg)
{
    const char *env = getenv("DAL_PLUGIN_DIR");
    char *copy, *dir, *out = NULL;

    if (override != NULL && *override)
        return strdup(override);
    if (env != NULL && *env)
        return strdup(env);
    if (cfg == NULL || cfg->plugin_dir == NULL)
        return strdup(DAL_PLUGIN_DIR_DEFAULT);
    /* a document from a store (etcd://...) has no directory of its own */
    if (cfg->plugin_dir[0] == '/' || strchr(cfg->plugin_dir, ':') != NULL ||
        strstr(cfg->path, "://") != NULL)
        return strdup(cfg->plugin_dir);
    /* a relative plugin_dir is relative to the file, not to the cwd */
    copy = strdup(cfg->path);
    if (copy == NULL)
        return NULL;
    dir = dirname(copy);
    if (asprintf(&out, "%s/%s", dir, cfg->plugin_dir) < 0)
        out = NULL;
    free(copy);
    return out;
}

/* FNV-1a over the lower-cased name: table names match case-insensitively. */
uint32_t snapshot_name_hash(const char *s, size_t n, int fold)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        h ^= fold ? (unsigned char)tolower(c) : c;
        h *= 16777619u;
    }
    return h;
}

static void index_put(uint32_t *index, size_t mask, uint32_t h, uint32_t value)
{
    size_t i = h & mask;

    while (index[i] != 0)
        i = (i + 1) & mask;
    index[i] = value;
}

int snapshot_index(dal_snapshot_t *s)
{
    size_t n = s->nnodes > s->ntables ? s->nnodes : s->ntables, cap = 16, i;

    while (cap < 2 * n)
        cap *= 2;
    s->index_mask = cap - 1;
    s->node_index = calloc(cap, sizeof *s->node_index);
    s->table_index = calloc(cap, sizeof *s->table_index);
    if (s->node_index == NULL || s->table_index == NULL)
        return -1;
    for (i = 0; i < s->nnodes; i++) {
        const char *name = s->nodes[i]->cfg->name;
        index_put(s->node_index, s->index_mask, snapshot_name_hash(name, strlen(name), 0),
                  (uint32_t)i + 1);
    }
    for (i = 0; i < s->ntables; i++) {
        const char *name = s->tables[i].cfg->name;
        index_put(s->table_index, s->index_mask, snapshot_name_hash(name, strlen(name), 1),
                  (uint32_t)i + 1);
    }
    return 0;
}

const dal_table_t *snapshot_table(const dal_snapshot_t *s, const char *name, size_t len)
{
    size_t i = snapshot_name_hash(name, len, 1) & s->index_mask;

    for (; s->table_index[i] != 0; i = (i + 1) & s->index_mask) {
        const dal_table_t *t = &s->tables[s->table_index[i] - 1];
        if (strncasecmp(t->cfg->name, name, len) == 0 && t->cfg->name[len] == '\0')
            return t;
    }
    return NULL;
}

dal_node_t *snapshot_node(const dal_snapshot_t *s, const char *name)
{
    size_t len = strlen(name), i = snapshot_name_hash(name, len, 0) & s->index_mask;

    for (; s->node_index[i] != 0; i = (i + 1) & s->index_mask) {
        dal_node_t *n = s->nodes[s->node_index[i] - 1];
        if (strcmp(n->cfg->name, name) == 0)
            return n;
    }
    return NULL;
}

int snapshot_schema_known(const dal_snapshot_t *s, const char *schema)
{
    return schema == NULL || config_schema(s->cfg, schema) != NULL;
}

dal_node_t *snapshot_schema_node(const dal_snapshot_t *s, const char *schema)
{
    const dal_cfg_schema_t *sc;

    if (schema == NULL)
        return s->default_node;
    sc = config_schema(s->cfg, schema);
    return sc != NULL && sc->default_datasource != NULL
               ? snapshot_node(s, sc->default_datasource) : NULL;
}

void snapshot_ref(dal_snapshot_t *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void snapshot_unref(dal_snapshot_t *s)
{
    if (s != NULL && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        s->teardown(s);
}

const char *physical_name(const dal_table_t *t, int32_t pos, char *out, size_t cap)
{
    /* every monitored execution names its table: no printf for it */
    size_t n = strlen(t->cfg->name), d = 0;
    uint32_t v = (uint32_t)pos;
    char digits[10];

    do {
        digits[d++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (pos < 0 || n + 1 + d >= cap) {
        snprintf(out, cap, "%s_%d", t->cfg->name, (int)pos);
        return out;
    }
    memcpy(out, t->cfg->name, n);
    out[n++] = '_';
    while (d > 0)
        out[n++] = digits[--d];
    out[n] = '\0';
    return out;
}
