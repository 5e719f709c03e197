/*
 * plugin_load.c -- finding, loading and checking plugin files; plugin parameters.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "plugin_load.h"

/* The descriptor as ABI 1 defined it: anything smaller cannot be read. */
#define DESC_MIN_SIZE DAL_FIELD_END(dal_plugin_t, ops)

/*
 * The ABI is binary: a plugin built against an older <dal/plugin.h> reads
 * this dal's structs at its own offsets, and plugin.h quotes "since size
 * N" for later fields.  Pin ABI 1's layout (64-bit figures) so that a
 * field moved or inserted in the middle fails the build instead.
 */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(dal_plugin_t) == 56, "dal_plugin_t layout changed");
_Static_assert(sizeof(dal_shard_ops_t) == 40, "dal_shard_ops_t layout changed");
_Static_assert(sizeof(dal_idgen_ops_t) == 32, "dal_idgen_ops_t layout changed");
_Static_assert(sizeof(dal_pool_ops_t) == 48, "dal_pool_ops_t layout changed");
_Static_assert(sizeof(dal_monitor_ops_t) == 32, "dal_monitor_ops_t layout changed");
_Static_assert(sizeof(dal_source_ops_t) == 64, "dal_source_ops_t layout changed");
_Static_assert(sizeof(dal_source_doc_t) == 48, "dal_source_doc_t layout changed");
_Static_assert(DAL_FIELD_END(dal_host_api_t, now_ns) == 176, "ABI 1 host API moved");
_Static_assert(DAL_FIELD_END(dal_host_api_t, current_statement) == 184,
               "plugin.h: current_statement is since size 184");
_Static_assert(DAL_FIELD_END(dal_host_api_t, emit) == 192, "plugin.h: emit is since size 192");
_Static_assert(DAL_FIELD_END(dal_host_api_t, thread_create) == 200,
               "plugin.h: thread_create is since size 200");
_Static_assert(DAL_FIELD_END(dal_event_t, mysql_errno) == 88, "ABI 1 dal_event_t moved");
_Static_assert(DAL_FIELD_END(dal_event_t, labels_gen) == 92,
               "plugin.h: labels_gen is since size 92");
#endif

const char *plugin_kind_name(int kind)
{
    switch (kind) {
    case DAL_PLUGIN_SHARD: return "shard";
    case DAL_PLUGIN_IDGEN: return "idgen";
    case DAL_PLUGIN_POOL: return "pool";
    case DAL_PLUGIN_MONITOR: return "monitor";
    case DAL_PLUGIN_SOURCE: return "source";
    }
    return NULL;
}

static int kind_from_prefix(const char *s, size_t n)
{
    int k;

    for (k = DAL_PLUGIN_SHARD; k <= DAL_PLUGIN_SOURCE; k++) {
        const char *name = plugin_kind_name(k);
        if (strlen(name) == n && memcmp(name, s, n) == 0)
            return k;
    }
    return 0;
}

/* Plugin names are restricted so a name from the INI file can never
 * point outside the plugin directory ("../../tmp/evil"). */
static int valid_name(const char *name)
{
    const char *p;

    if (*name == '\0')
        return 0;
    for (p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

/* Split ".../K_N.so" into kind and name (name copied into out). */
static int parse_file_name(const char *path, int *kind, char *name, size_t cap)
{
    const char *base = strrchr(path, '/');
    const char *us, *dot;
    size_t n;

    base = base ? base + 1 : path;
    us = strchr(base, '_');
    dot = strrchr(base, '.');
    if (us == NULL || dot == NULL || strcmp(dot, ".so") != 0 || dot <= us + 1)
        return -1;
    *kind = kind_from_prefix(base, (size_t)(us - base));
    n = (size_t)(dot - us - 1);
    if (*kind == 0 || n >= cap)
        return -1;
    memcpy(name, us + 1, n);
    name[n] = '\0';
    return 0;
}

/* Only an ELF file can be a plugin; saying so beats dlerror's wording. */
static int is_elf(const char *path)
{
    unsigned char magic[4];
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL)
        return 0;
    n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

static int check_ops(const char *path, const dal_plugin_t *d, dal_error_t *err)
{
    const char *kind = plugin_kind_name(d->kind);
    int ok = 0;

    if (d->ops == NULL)
        return err_set(err, DAL_EPLUGIN, "%s: %s plugin '%s' has no ops table", path, kind,
                       d->name);
    switch (d->kind) {
    case DAL_PLUGIN_SHARD: {
        const dal_shard_ops_t *o = d->ops;
        /* locate_range is optional (NULL) but its slot is ABI 1's: the
         * router reads it */
        ok = DAL_HAS_FIELD(dal_shard_ops_t, o, locate_range) && o->create && o->destroy &&
             o->locate;
        break;
    }
    case DAL_PLUGIN_IDGEN: {
        const dal_idgen_ops_t *o = d->ops;
        ok = DAL_HAS_FIELD(dal_idgen_ops_t, o, next) && o->create && o->destroy && o->next;
        break;
    }
    case DAL_PLUGIN_POOL: {
        const dal_pool_ops_t *o = d->ops;
        ok = DAL_HAS_FIELD(dal_pool_ops_t, o, stats) && o->create && o->destroy &&
             o->acquire && o->release;
        break;
    }
    case DAL_PLUGIN_MONITOR: {
        const dal_monitor_ops_t *o = d->ops;
        ok = DAL_HAS_FIELD(dal_monitor_ops_t, o, on_event) && o->create && o->destroy &&
             o->on_event;
        break;
    }
    case DAL_PLUGIN_SOURCE: {
        /* watch, write and history are optional, their slots are not */
        const dal_source_ops_t *o = d->ops;
        ok = DAL_HAS_FIELD(dal_source_ops_t, o, history) && o->create && o->destroy &&
             o->read && (o->watch == NULL) == (o->unwatch == NULL);
        break;
    }
    }
    if (!ok)
        return err_set(err, DAL_EPLUGIN,
                       "%s: %s plugin '%s' has an incomplete ops table (a required op is NULL "
                       "or struct_size is too small)",
                       path, kind, d->name);
    return 0;
}

/* Everything about the descriptor that can be checked without using it. */
static int check_descriptor(const char *path, const dal_plugin_t *d, dal_error_t *err)
{
    int fkind;
    char fname[128];

    if (d == NULL)
        return err_set(err, DAL_EPLUGIN, "%s: " DAL_PLUGIN_ENTRY_SYMBOL "() returned NULL",
                       path);
    /* abi_version and struct_size come first in every ABI: safe to read */
    if (d->abi_version != DAL_PLUGIN_ABI_VERSION)
        return err_set(err, DAL_EPLUGIN,
                       "%s: plugin ABI mismatch: this dal needs ABI %d, the plugin was built "
                       "for ABI %u; rebuild it against this dal's <dal/plugin.h>",
                       path, DAL_PLUGIN_ABI_VERSION, (unsigned)d->abi_version);
    if (d->struct_size < DESC_MIN_SIZE)
        return err_set(err, DAL_EPLUGIN,
                       "%s: plugin descriptor is %u bytes, smaller than ABI %d's %zu",
                       path, (unsigned)d->struct_size, DAL_PLUGIN_ABI_VERSION,
                       (size_t)DESC_MIN_SIZE);
    if (plugin_kind_name(d->kind) == NULL)
        return err_set(err, DAL_EPLUGIN, "%s: unknown plugin kind %d", path, (int)d->kind);
    if (d->name == NULL || !valid_name(d->name))
        return err_set(err, DAL_EPLUGIN, "%s: plugin name is missing or not [a-z0-9_]+",
                       path);
    if (parse_file_name(path, &fkind, fname, sizeof fname) != 0)
        return err_set(err, DAL_EPLUGIN,
                       "%s: file name is not KIND_NAME.so (KIND is shard, idgen, pool, "
                       "monitor or source)",
                       path);
    if (fkind != (int)d->kind)
        return err_set(err, DAL_EPLUGIN,
                       "%s: file name says kind '%s' but the plugin is of kind '%s'", path,
                       plugin_kind_name(fkind), plugin_kind_name(d->kind));
    if (strcmp(fname, d->name) != 0)
        return err_set(err, DAL_EPLUGIN,
                       "%s: file name says name '%s' but the plugin is named '%s'", path,
                       fname, d->name);
    return check_ops(path, d, err);
}

int plugin_lib_load(const char *path, dal_plugin_lib_t **out, dal_error_t *err)
{
    dal_plugin_lib_t *lib = NULL;
    dal_plugin_entry_fn entry;
    void *h = NULL;
    struct stat st;
    int rc;

    *out = NULL;
    if (stat(path, &st) != 0)
        return err_set(err, DAL_EPLUGIN, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode) || !is_elf(path))
        return err_set(err, DAL_EPLUGIN, "%s: not a shared object (no ELF header)", path);
    /* RTLD_NOW: unresolved symbols fail here, not in the middle of a
     * statement.  RTLD_LOCAL: plugins cannot see or clash with each other. */
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();
        return err_set(err, DAL_EPLUGIN, "%s: cannot load: %s", path, why ? why : "?");
    }
    *(void **)(&entry) = dlsym(h, DAL_PLUGIN_ENTRY_SYMBOL);
    if (entry == NULL) {
        rc = err_set(err, DAL_EPLUGIN,
                     "%s: not a dal plugin (no " DAL_PLUGIN_ENTRY_SYMBOL " symbol)", path);
        goto fail;
    }
    lib = calloc(1, sizeof *lib);
    if (lib == NULL || (lib->path = strdup(path)) == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    lib->desc = entry();
    rc = check_descriptor(path, lib->desc, err);
    if (rc != 0)
        goto fail;
    lib->handle = h;
    atomic_init(&lib->refs, 1);
    *out = lib;
    return 0;
fail:
    if (lib != NULL)
        free(lib->path);
    free(lib);
    dlclose(h);
    return rc;
}

void plugin_lib_ref(dal_plugin_lib_t *lib)
{
    atomic_fetch_add(&lib->refs, 1);
}

void plugin_lib_unref(dal_plugin_lib_t *lib)
{
    if (lib == NULL || atomic_fetch_sub(&lib->refs, 1) != 1)
        return;
    dlclose(lib->handle);
    free(lib->path);
    free(lib);
}

/* Iterate the colon-separated path: copies the next directory into dir. */
static const char *next_dir(const char *p, char *dir, size_t cap)
{
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);

    if (n >= cap)
        n = cap - 1;
    memcpy(dir, p, n);
    dir[n] = '\0';
    return end ? end + 1 : p + strlen(p);
}

int plugin_find(const char *plugin_path, dal_plugin_kind_t kind, const char *name,
                dal_plugin_lib_t **out, dal_error_t *err)
{
    const char *kname = plugin_kind_name(kind);
    char dir[1024], file[1200], found[1200];
    const char *p = plugin_path;
    int nfound = 0;

    *out = NULL;
    if (!valid_name(name))
        return err_set(err, DAL_EPLUGIN, "%s plugin name '%s' is not [a-z0-9_]+", kname,
                       name);
    while (*p) {
        struct stat st;

        p = next_dir(p, dir, sizeof dir);
        if (dir[0] == '\0')
            continue;
        snprintf(file, sizeof file, "%s/%s_%s.so", dir, kname, name);
        if (stat(file, &st) != 0)
            continue;
        if (nfound++ > 0)
            return err_set(err, DAL_EPLUGIN,
                           "duplicate %s plugin '%s': both %s and %s; remove one or shorten "
                           "plugin_dir",
                           kname, name, found, file);
        snprintf(found, sizeof found, "%s", file);
    }
    if (nfound == 0)
        return err_set(err, DAL_EPLUGIN, "unknown %s plugin '%s': no file %s_%s.so in %s",
                       kname, name, kname, name, plugin_path);
    return plugin_lib_load(found, out, err);
}

static const dal_host_api_t *host_api;

void plugin_set_host_api(const dal_host_api_t *api)
{
    host_api = api;
}

const dal_host_api_t *plugin_host_api(void)
{
    return host_api;
}
