/*
 * config.c -- read the INI file into a dal_config_t.
 *
 * inih splits lines into sections and key = value pairs; this file gives
 * them meaning.  inih is driven through ini_parse_stream() with our own line
 * reader, because the reader sees every line before inih does:
 *
 *  - it counts lines, so the key handler (which inih calls right after
 *    reading the line it belongs to) knows the line of the key it gets;
 *  - it refuses lines longer than inih's buffer, which inih would otherwise
 *    cut in two and parse as two lines;
 *  - it parses section headers itself: inih never tells the handler about a
 *    section that holds no keys, and silently cuts section names to 49
 *    characters;
 *  - it strips leading blanks, so an indented line is never taken for the
 *    continuation of the previous value (inih's "multiline" mode is on in
 *    Debian's build, and is a process-wide setting we must not change);
 *  - it reports syntax errors with a message of our own, and stops inih at
 *    the first error of any kind by returning NULL.
 *
 * What each key of a section is -- its type, range, default and where it
 * is stored -- is data in config_keys.c: one loop (set_key) reads every key
 * through its row.  The code here is what a row cannot say: sections,
 * required keys, and the checks that relate keys to each other.
 *
 * Checks that need the whole file (a [table] naming datasources or an
 * [idgen] defined further down, tables of one binding group agreeing on
 * their layout) run after the last line, and still report the line of the
 * key at fault.  Of all mistakes found, the one on the lowest line wins.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "config.h"
#include "error.h"

#define CFG_QUOTE_MAX (DAL_CFG_QUOTE_SIZE - 4)   /* longest value quoted in a message */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define SECTION_LIST \
    "[dal], [datasource NAME], [table NAME], [idgen NAME], [monitor NAME], [proxy], " \
    "[proxy user NAME] or [schema NAME]"

typedef struct cfg_parser cfg_parser_t;

/* One kind of section: [word] or [word NAME]. */
typedef struct section_kind {
    const char *word;
    const dal_cfg_rule_t *name_rule;  /* what NAME may hold; NULL: the section takes no name */
    const dal_cfg_key_t *keys;        /* its keys (config_keys.c) */
    /* Line of an earlier section of this kind with this name; 0 if none. */
    int (*taken)(const cfg_parser_t *ps, const char *name);
    /* Add the section to ps->cfg; the name is already checked. */
    int (*begin)(cfg_parser_t *ps, const char *name);
    /* The struct the section's keys are stored in. */
    void *(*obj)(cfg_parser_t *ps);
    /* Checks once the section's keys are all read; NULL: none. */
    int (*finish)(cfg_parser_t *ps);
} section_kind_t;

/* A key already seen in the current section. */
typedef struct seen_key {
    char *key;
    int line;
} seen_key_t;

struct cfg_parser {
    const char *path;
    FILE *fp;
    char *buf;                  /* getline's buffer */
    size_t bufcap;
    int read_errno;             /* set if reading failed before EOF */
    int line;                   /* the line inih is working on */

    dal_error_t *err;           /* the caller's, may be NULL */
    int rc;                     /* code of the error kept in err; 0: none */
    int err_line;               /* its line */

    dal_config_t *cfg;
    const section_kind_t *sec;  /* current section; NULL before the first */
    const char *sec_name;       /* its name (owned by cfg), "" for [dal] */
    int sec_line;               /* line of its header */
    seen_key_t *seen;           /* keys of the current section */
    size_t nseen;
    size_t seencap;
    int dal_line;               /* line of [dal]; 0 if none yet */
};

/* ------------------------------------------------------------ messages */

/*
 * Record "PATH:LINE: message" unless a mistake on an earlier (or the same)
 * line is already recorded.  Returns the code of the recorded error, so
 * callers can `return cfg_fail(...)`.
 */
static int cfg_fail(cfg_parser_t *ps, int line, int code, const char *fmt, ...) DAL_PRINTF(4, 5);

static int cfg_fail(cfg_parser_t *ps, int line, int code, const char *fmt, ...)
{
    char msg[DAL_ERROR_MSG_MAX];
    va_list ap;

    if (ps->rc != 0 && line >= ps->err_line)
        return ps->rc;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ps->rc = code;
    ps->err_line = line;
    err_set(ps->err, code, "%s:%d: %s", ps->path, line, msg);
    return code;
}

const char *config_quote(const char *text, char *buf)
{
    /* Masked whole before the cut, so a cut never splits a password from
     * the '@' that marks it. */
    if (url_mask(text, buf, CFG_QUOTE_MAX + 1) > CFG_QUOTE_MAX)
        strcat(buf, "...");
    return buf;
}

static int cfg_oom(cfg_parser_t *ps)
{
    return cfg_fail(ps, ps->line, DAL_ENOMEM, "out of memory");
}

/* "[datasource main]" or "[dal]" for messages. */
static void section_label(const section_kind_t *kind, const char *name, char *out, size_t size)
{
    if (kind->name_rule != NULL)
        snprintf(out, size, "[%s %s]", kind->word, name);
    else
        snprintf(out, size, "[%s]", kind->word);
}

static int unknown_key(cfg_parser_t *ps, const char *key)
{
    char label[DAL_CFG_NAME_MAX + 32], q[DAL_CFG_QUOTE_SIZE];

    section_label(ps->sec, ps->sec_name, label, sizeof label);
    return cfg_fail(ps, ps->line, DAL_ECONFIG, "unknown key '%s' in %s", config_quote(key, q), label);
}

/* Line of key in the current section, 0 if it was not given. */
static int seen_line(const cfg_parser_t *ps, const char *key)
{
    size_t i;

    for (i = 0; i < ps->nseen; i++)
        if (strcmp(ps->seen[i].key, key) == 0)
            return ps->seen[i].line;
    return 0;
}

static void seen_reset(cfg_parser_t *ps)
{
    size_t i;

    for (i = 0; i < ps->nseen; i++)
        free(ps->seen[i].key);
    ps->nseen = 0;
}

/* Remember key, failing if the section already has it. */
static int seen_add(cfg_parser_t *ps, const char *key)
{
    int first = seen_line(ps, key);
    char q[DAL_CFG_QUOTE_SIZE];
    seen_key_t *ns;

    if (first != 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate key '%s' (first given at line %d)",
                        config_quote(key, q), first);
    if (ps->nseen == ps->seencap) {
        ns = realloc(ps->seen, (ps->seencap ? ps->seencap * 2 : 16) * sizeof *ns);
        if (ns == NULL)
            return cfg_oom(ps);
        ps->seen = ns;
        ps->seencap = ps->seencap ? ps->seencap * 2 : 16;
    }
    ps->seen[ps->nseen].key = strdup(key);
    if (ps->seen[ps->nseen].key == NULL)
        return cfg_oom(ps);
    ps->seen[ps->nseen++].line = ps->line;
    return 0;
}

/*
 * Append a zeroed element to an array of ps->cfg (cfg_add_item); NULL
 * if out of memory.  A counted element is freed by config_free even if
 * left half filled.
 */
static void *add_item(cfg_parser_t *ps, void **arr, size_t *n, size_t size)
{
    void *item = cfg_add_item(arr, n, size);

    if (item == NULL)
        cfg_oom(ps);
    return item;
}

/* A copy of a section's name, which messages then refer to; NULL if out of memory. */
static char *section_name(cfg_parser_t *ps, const char *name)
{
    char *copy = strdup(name);

    if (copy == NULL)
        cfg_oom(ps);
    ps->sec_name = copy;
    return copy;
}

/* ---------------------------------------------------------------- keys */

/* Read one key of the current section through its row. */
static int set_key(cfg_parser_t *ps, const char *key, char **val)
{
    const dal_cfg_key_t *k = cfg_key_find(ps->sec->keys, key);
    dal_cfg_value_t v;
    dal_error_t e;
    int rc;

    if (k == NULL)
        return unknown_key(ps, key);
    v.key = key;
    v.text = *val;
    v.line = ps->line;
    v.err = &e;
    rc = cfg_key_set(k, ps->sec->obj(ps), &v);
    *val = v.text;   /* NULL if the row took it */
    if (rc != 0)
        return cfg_fail(ps, ps->line, rc, "%s", e.message);
    return 0;
}

/* New section struct: its defaults, as its table gives them. */
static int set_defaults(cfg_parser_t *ps, const dal_cfg_key_t *keys, void *obj)
{
    dal_error_t e;
    int rc = cfg_key_defaults(keys, obj, &e);

    if (rc != 0)
        return cfg_fail(ps, ps->line, rc, "%s", e.message);
    return 0;
}

/* Every required key of the section, reported at its header. */
static void check_required(cfg_parser_t *ps)
{
    char label[DAL_CFG_NAME_MAX + 32];
    const dal_cfg_key_t *k;

    for (k = ps->sec->keys; k->name != NULL; k++) {
        if (!k->required || seen_line(ps, k->name) != 0)
            continue;
        section_label(ps->sec, ps->sec_name, label, sizeof label);
        cfg_fail(ps, ps->sec_line, DAL_ECONFIG, "%s has no %s (add: %s = %s)", label, k->name, k->name, k->example);
    }
}

/* ------------------------------------------------------------- [dal] */

static int dal_section_taken(const cfg_parser_t *ps, const char *name)
{
    (void)name;
    return ps->dal_line;
}

/* The section is optional: its struct, the config, holds [dal]'s defaults from the start. */
static int dal_section_begin(cfg_parser_t *ps, const char *name)
{
    (void)name;
    ps->dal_line = ps->line;
    ps->sec_name = "";
    return 0;
}

static void *dal_section_obj(cfg_parser_t *ps)
{
    return ps->cfg;
}

/* ------------------------------------------------------ [datasource NAME] */

static void *cur_ds(cfg_parser_t *ps)
{
    return &ps->cfg->datasources[ps->cfg->ndatasources - 1];
}

static int ds_taken(const cfg_parser_t *ps, const char *name)
{
    const dal_cfg_datasource_t *old = config_datasource(ps->cfg, name);

    return old != NULL ? old->line : 0;
}

static int ds_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_datasource_t *ds = add_item(ps, (void **)&cfg->datasources, &cfg->ndatasources, sizeof *ds);

    if (ds == NULL || (ds->name = section_name(ps, name)) == NULL)
        return ps->rc;
    ds->line = ps->line;
    return set_defaults(ps, dal_cfg_datasource_keys, ds);
}

static int ds_finish(cfg_parser_t *ps)
{
    dal_cfg_datasource_t *ds = cur_ds(ps);
    int key_line = seen_line(ps, "connect_timeout");
    int64_t url_ms = ds->master.connect_timeout_ms;

    /* The URL may carry connect_timeout too; keep one value, in one place. */
    if (url_ms == 0)
        return ps->rc;
    if (key_line != 0)
        return cfg_fail(ps, key_line, DAL_ECONFIG,
                        "connect_timeout: also given in the master URL (line %d); keep only one",
                        ds->master_line);
    if (url_ms > (int64_t)UINT32_MAX)
        return cfg_fail(ps, ds->master_line, DAL_ECONFIG, "master: option connect_timeout is too long");
    ds->connect_timeout_ms = (uint32_t)url_ms;
    return ps->rc;
}

/* ----------------------------------------------------------- [table NAME] */

/* The keys that give a table shards, besides db_shard_num and strategy.*. */
static const char *const shard_keys[] = {"table_shard_num", "shard_key", "strategy"};

static void *cur_table(cfg_parser_t *ps)
{
    return &ps->cfg->tables[ps->cfg->ntables - 1];
}

static int table_taken(const cfg_parser_t *ps, const char *name)
{
    const dal_cfg_table_t *old = config_table(ps->cfg, name);

    return old != NULL ? old->line : 0;
}

static int table_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_table_t *t = add_item(ps, (void **)&cfg->tables, &cfg->ntables, sizeof *t);

    if (t == NULL || (t->name = section_name(ps, name)) == NULL)
        return ps->rc;
    t->line = ps->line;
    t->kind = DAL_TABLE_SINGLE;   /* broadcast = true, or table_finish, decides */
    return set_defaults(ps, dal_cfg_table_keys, t);
}

/* A broadcast table is whole on every node: nothing may shard it. */
static void check_broadcast(cfg_parser_t *ps, const dal_cfg_table_t *t)
{
    int on_line = seen_line(ps, "broadcast");
    size_t i;
    int line;

    for (i = 0; i < NELEM(shard_keys); i++) {
        line = seen_line(ps, shard_keys[i]);
        if (line != 0)
            cfg_fail(ps, line, DAL_ECONFIG,
                     "%s: not allowed in a broadcast table (broadcast = true at line %d puts the whole table on every node)",
                     shard_keys[i], on_line);
    }
    if (t->strategy_params.n > 0)
        cfg_fail(ps, t->strategy_params.items[0].line, DAL_ECONFIG,
                 "strategy.%s: not allowed in a broadcast table (broadcast = true at line %d puts the whole table on every node)",
                 t->strategy_params.items[0].name, on_line);
}

/* Any shard key makes the table sharded, and then it needs them all. */
static void check_sharding(cfg_parser_t *ps, dal_cfg_table_t *t)
{
    int sharded = seen_line(ps, "db_shard_num") != 0 || t->strategy_params.n > 0;
    size_t i;

    for (i = 0; i < NELEM(shard_keys); i++)
        sharded |= seen_line(ps, shard_keys[i]) != 0;
    if (!sharded)
        return;
    t->kind = DAL_TABLE_SHARDED;
    for (i = 0; i < NELEM(shard_keys); i++)
        if (seen_line(ps, shard_keys[i]) == 0) {
            cfg_fail(ps, t->line, DAL_ECONFIG, "[table %s] is sharded but has no %s", t->name, shard_keys[i]);
            return;
        }
    if (t->table_shard_num % t->db_shard_num != 0)
        cfg_fail(ps, seen_line(ps, "table_shard_num"), DAL_ECONFIG,
                 "table_shard_num (%u) must be a multiple of db_shard_num (%u)",
                 t->table_shard_num, t->db_shard_num);
}

/* id_column and idgen come together: one names the column, the other who fills it. */
static void check_id_keys(cfg_parser_t *ps, const dal_cfg_table_t *t)
{
    if (t->id_column != NULL && t->idgen == NULL)
        cfg_fail(ps, seen_line(ps, "id_column"), DAL_ECONFIG,
                 "id_column: needs idgen = NAME as well (the [idgen NAME] section that makes the ids)");
    if (t->idgen != NULL && t->id_column == NULL)
        cfg_fail(ps, t->idgen_line, DAL_ECONFIG, "idgen: needs id_column = COLUMN as well (the column the ids go into)");
}

/* Of all mistakes in the section, cfg_fail keeps the one on the lowest line. */
static int table_finish(cfg_parser_t *ps)
{
    dal_cfg_table_t *t = cur_table(ps);

    if (t->kind == DAL_TABLE_BROADCAST)
        check_broadcast(ps, t);
    else
        check_sharding(ps, t);
    if (t->binding != NULL && t->kind != DAL_TABLE_SHARDED)
        cfg_fail(ps, t->binding_line, DAL_ECONFIG,
                 "binding: only a sharded table can be in a binding group");
    check_id_keys(ps, t);
    return ps->rc;
}


/* ------------------------------------------- [idgen NAME], [monitor NAME] */

static const dal_cfg_idgen_t *find_idgen(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->nidgens; i++)
        if (strcmp(cfg->idgens[i].name, name) == 0)
            return &cfg->idgens[i];
    return NULL;
}

static void *cur_idgen(cfg_parser_t *ps)
{
    return &ps->cfg->idgens[ps->cfg->nidgens - 1];
}

static int idgen_taken(const cfg_parser_t *ps, const char *name)
{
    const dal_cfg_idgen_t *old = find_idgen(ps->cfg, name);

    return old != NULL ? old->line : 0;
}

static int idgen_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_idgen_t *g = add_item(ps, (void **)&cfg->idgens, &cfg->nidgens, sizeof *g);

    if (g == NULL || (g->name = section_name(ps, name)) == NULL)
        return ps->rc;
    g->line = ps->line;
    return set_defaults(ps, dal_cfg_idgen_keys, g);
}

static void *cur_monitor(cfg_parser_t *ps)
{
    return &ps->cfg->monitors[ps->cfg->nmonitors - 1];
}

static int monitor_taken(const cfg_parser_t *ps, const char *name)
{
    size_t i;

    for (i = 0; i < ps->cfg->nmonitors; i++)
        if (strcmp(ps->cfg->monitors[i].name, name) == 0)
            return ps->cfg->monitors[i].line;
    return 0;
}

static int monitor_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_monitor_t *m = add_item(ps, (void **)&cfg->monitors, &cfg->nmonitors, sizeof *m);

    if (m == NULL || (m->name = section_name(ps, name)) == NULL)
        return ps->rc;
    m->line = ps->line;
    return set_defaults(ps, dal_cfg_monitor_keys, m);
}

/* Without plugin = NAME, the section's name is the plugin's: [monitor prometheus]. */
static int monitor_finish(cfg_parser_t *ps)
{
    dal_cfg_monitor_t *m = cur_monitor(ps);

    if (m->plugin != NULL)
        return 0;
    if (!cfg_name_ok(m->name, &dal_cfg_rule_lower))
        return cfg_fail(ps, m->line, DAL_ECONFIG,
                        "[monitor %s] has no plugin, and '%s' is not a plugin name (%s); add: plugin = NAME",
                        m->name, m->name, dal_cfg_rule_lower.text);
    m->plugin = strdup(m->name);
    if (m->plugin == NULL)
        return cfg_oom(ps);
    m->plugin_line = m->line;
    return 0;
}

/* ------------------------------------------------------------ [proxy] */

static int proxy_taken(const cfg_parser_t *ps, const char *name)
{
    (void)name;
    return ps->cfg->proxy.line;
}

/* Optional, like [dal]: the config holds the defaults from the start. */
static int proxy_begin(cfg_parser_t *ps, const char *name)
{
    (void)name;
    ps->cfg->proxy.line = ps->line;
    ps->sec_name = "";
    return 0;
}

static void *proxy_obj(cfg_parser_t *ps)
{
    return &ps->cfg->proxy;
}

/* One HOST:PORT of listen, [start, end) of text: a host and a port 1..65535. */
static int listen_item_ok(const char *start, const char *end)
{
    const char *colon = NULL, *p;
    long port = 0;

    for (p = start; p < end; p++)
        if (*p == ':')
            colon = p;
    if (colon == NULL || colon == start || colon + 1 == end)
        return 0;
    for (p = colon + 1; p < end; p++) {
        if (*p < '0' || *p > '9' || (port = port * 10 + (*p - '0')) > 65535)
            return 0;
    }
    return port >= 1;
}

static int proxy_finish(cfg_parser_t *ps)
{
    const dal_cfg_proxy_t *px = &ps->cfg->proxy;
    const char *p = px->listen, *e;
    char q[DAL_CFG_QUOTE_SIZE];

    while (p != NULL && *p != '\0') {
        p = parse_skip_blanks(p);
        for (e = p; *e != '\0' && *e != ',' && *e != ' ' && *e != '\t'; e++)
            ;
        if (!listen_item_ok(p, e))
            return cfg_fail(ps, px->listen_line, DAL_ECONFIG,
                            "listen: expected HOST:PORT[, HOST:PORT ...], got '%s'",
                            config_quote(px->listen, q));
        p = parse_skip_blanks(e);
        if (*p == ',')
            p++;
    }
    if ((px->tls_cert != NULL) != (px->tls_key != NULL))
        return cfg_fail(ps, px->tls_cert ? px->tls_cert_line : px->tls_key_line, DAL_ECONFIG,
                        "[proxy] needs both tls_cert and tls_key, or neither");
    if (px->require_tls && px->tls_cert == NULL)
        return cfg_fail(ps, px->require_tls_line, DAL_ECONFIG,
                        "[proxy] require_tls needs tls_cert and tls_key");
    return 0;
}

/* ---------------------------------------------------- [proxy user NAME] */

static void *cur_user(cfg_parser_t *ps)
{
    return &ps->cfg->proxy_users[ps->cfg->nproxy_users - 1];
}

static int user_taken(const cfg_parser_t *ps, const char *name)
{
    size_t i;

    for (i = 0; i < ps->cfg->nproxy_users; i++)
        if (strcmp(ps->cfg->proxy_users[i].name, name) == 0)
            return ps->cfg->proxy_users[i].line;
    return 0;
}

static int user_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_proxy_user_t *u = add_item(ps, (void **)&cfg->proxy_users, &cfg->nproxy_users,
                                       sizeof *u);

    if (u == NULL || (u->name = section_name(ps, name)) == NULL)
        return ps->rc;
    u->line = ps->line;
    return set_defaults(ps, dal_cfg_proxy_user_keys, u);
}

/* '*' and 40 hex digits. */
static int native_hash_ok(const char *h)
{
    size_t i;

    if (h[0] != '*' || strlen(h) != 41)
        return 0;
    for (i = 1; i < 41; i++)
        if (!isxdigit((unsigned char)h[i]))
            return 0;
    return 1;
}

/* Exactly one of password and password_hash; the values are never quoted. */
static int user_finish(cfg_parser_t *ps)
{
    const dal_cfg_proxy_user_t *u = cur_user(ps);

    if (u->password == NULL && u->password_hash == NULL)
        return cfg_fail(ps, u->line, DAL_ECONFIG,
                        "[proxy user %s] needs password = ... or password_hash = *...", u->name);
    if (u->password != NULL && u->password_hash != NULL)
        return cfg_fail(ps, u->password_hash_line, DAL_ECONFIG,
                        "[proxy user %s] has both password and password_hash: keep one", u->name);
    if (u->password_hash != NULL && !native_hash_ok(u->password_hash))
        return cfg_fail(ps, u->password_hash_line, DAL_ECONFIG,
                        "[proxy user %s] password_hash: expected '*' and 40 hex digits (as "
                        "SELECT PASSWORD('...') prints it)", u->name);
    return 0;
}

/* ------------------------------------------------------- [schema NAME] */

static void *cur_schema(cfg_parser_t *ps)
{
    return &ps->cfg->schemas[ps->cfg->nschemas - 1];
}

static int schema_taken(const cfg_parser_t *ps, const char *name)
{
    const dal_cfg_schema_t *old = config_schema(ps->cfg, name);

    return old != NULL ? old->line : 0;
}

static int schema_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_schema_t *sc = add_item(ps, (void **)&cfg->schemas, &cfg->nschemas, sizeof *sc);

    if (sc == NULL || (sc->name = section_name(ps, name)) == NULL)
        return ps->rc;
    sc->line = ps->line;
    return set_defaults(ps, dal_cfg_schema_keys, sc);
}

/* ------------------------------------------------------------ sections */

static const section_kind_t sections[] = {
    {"dal", NULL, dal_cfg_dal_keys, dal_section_taken, dal_section_begin, dal_section_obj, NULL},
    {"datasource", &dal_cfg_rule_ds, dal_cfg_datasource_keys, ds_taken, ds_begin, cur_ds, ds_finish},
    {"table", &dal_cfg_rule_table, dal_cfg_table_keys, table_taken, table_begin, cur_table, table_finish},
    {"idgen", &dal_cfg_rule_ds, dal_cfg_idgen_keys, idgen_taken, idgen_begin, cur_idgen, NULL},
    {"monitor", &dal_cfg_rule_ds, dal_cfg_monitor_keys, monitor_taken, monitor_begin, cur_monitor, monitor_finish},
    {"proxy", NULL, dal_cfg_proxy_keys, proxy_taken, proxy_begin, proxy_obj, proxy_finish},
    {"proxy user", &dal_cfg_rule_ds, dal_cfg_proxy_user_keys, user_taken, user_begin, cur_user,
     user_finish},
    {"schema", &dal_cfg_rule_table, dal_cfg_schema_keys, schema_taken, schema_begin, cur_schema,
     NULL},
};

static int finish_section(cfg_parser_t *ps)
{
    if (ps->sec != NULL) {
        check_required(ps);
        if (ps->sec->finish != NULL)
            ps->sec->finish(ps);
    }
    seen_reset(ps);
    ps->sec = NULL;
    return ps->rc;
}

/* "word NAME" (already trimmed) -> the section kind and its name. */
static int begin_section(cfg_parser_t *ps, const char *inner)
{
    size_t wlen = 0;
    const char *name;
    const section_kind_t *kind = NULL;
    char label[DAL_CFG_NAME_MAX + 32], q[DAL_CFG_QUOTE_SIZE];
    size_t i;
    int first;

    /* the longest kind word that starts inner ("proxy user NAME" over "proxy") */
    for (i = 0; i < NELEM(sections); i++) {
        size_t n = strlen(sections[i].word);
        if (n > wlen && strncmp(inner, sections[i].word, n) == 0 &&
            (inner[n] == '\0' || inner[n] == ' ' || inner[n] == '\t')) {
            kind = &sections[i];
            wlen = n;
        }
    }
    if (kind == NULL)
        wlen = strcspn(inner, " \t");
    name = parse_skip_blanks(inner + wlen);
    if (kind == NULL)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "unknown section [%s] (expected " SECTION_LIST ")",
                        config_quote(inner, q));
    if (kind->name_rule != NULL && *name == '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "section [%s] needs a name: [%s NAME]", kind->word, kind->word);
    if (kind->name_rule == NULL && *name != '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "section [%s] takes no name", kind->word);
    if (kind->name_rule != NULL && !cfg_name_ok(name, kind->name_rule))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "bad %s name '%s' (%s, at most %d characters)",
                        kind->word, config_quote(name, q), kind->name_rule->text, DAL_CFG_NAME_MAX);
    first = kind->taken(ps, name);
    if (first != 0) {
        section_label(kind, name, label, sizeof label);
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate section %s (first at line %d)", label, first);
    }
    if (kind->begin(ps, name) != 0)
        return ps->rc;
    ps->sec = kind;
    ps->sec_line = ps->line;
    return 0;
}


/* s is a line starting with '['. */
static int section_line(cfg_parser_t *ps, const char *s)
{
    const char *close = strchr(s, ']');
    const char *after;
    char *inner;
    size_t n;
    int rc;

    if (close == NULL)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "syntax error: missing ']' in section header");
    after = parse_skip_blanks(close + 1);
    if (*after != '\0' && *after != ';' && *after != '#')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "syntax error: unexpected text after ']'");
    if (finish_section(ps) != 0)
        return ps->rc;
    s = parse_skip_blanks(s + 1);
    for (n = (size_t)(close - s); n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'); n--)
        ;
    inner = strndup(s, n);
    if (inner == NULL)
        return cfg_oom(ps);
    rc = begin_section(ps, inner);
    free(inner);
    return rc;
}

/*
 * A line that is neither blank, comment nor section must be "key = value".
 * inih would also split on ':' (Python style); we accept '=' only, so a
 * stray "mysql://..." line is an error and not a key named "mysql".  The
 * scan stops at an inline comment (" ;") as inih's does.
 */
static int key_line(cfg_parser_t *ps, const char *s)
{
    const char *p;

    for (p = s; *p != '\0' && *p != ':'; p++) {
        if (*p == '=')
            return 0;
        if (*p == ';' && p > s && isspace((unsigned char)p[-1]))
            break;
    }
    return cfg_fail(ps, ps->line, DAL_ECONFIG,
                    "syntax error: expected 'key = value', '[section]' or a comment");
}

/* --------------------------------------------------------- inih glue */

/* Read one whole line into ps->buf; its length without "\n" / "\r\n", or -1. */
static ssize_t next_line(cfg_parser_t *ps)
{
    ssize_t n;

    errno = 0;
    n = getline(&ps->buf, &ps->bufcap, ps->fp);
    if (n < 0) {
        if (!feof(ps->fp))
            ps->read_errno = errno ? errno : EIO;
        return -1;
    }
    ps->line++;
    if (n > 0 && ps->buf[n - 1] == '\n')
        ps->buf[--n] = '\0';
    if (n > 0 && ps->buf[n - 1] == '\r')
        ps->buf[--n] = '\0';
    return n;
}

/*
 * inih's reader: fgets-like, num is the size of inih's line buffer.  Gives
 * inih one checked, left-trimmed line; NULL at EOF or after any error.
 */
static char *read_line(char *str, int num, void *stream)
{
    cfg_parser_t *ps = stream;
    size_t max = num > 3 ? (size_t)num - 3 : 0;   /* ini.h: "3 more than the longest line" */
    ssize_t n;
    const char *s;

    if (ps->rc != 0)
        return NULL;
    n = next_line(ps);
    if (n < 0)
        return NULL;
    s = ps->buf;
    if (strlen(s) != (size_t)n) {
        cfg_fail(ps, ps->line, DAL_ECONFIG, "line contains a NUL byte");
        return NULL;
    }
    if (ps->line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;   /* UTF-8 byte order mark */
    if ((size_t)n > max) {
        cfg_fail(ps, ps->line, DAL_ECONFIG, "line too long (%zd characters, at most %zu); "
                 "put long values in an environment variable and write ${NAME}", n, max);
        return NULL;
    }
    s = parse_skip_blanks(s);
    if (*s == '[' && section_line(ps, s) != 0)
        return NULL;
    if (*s != '\0' && *s != ';' && *s != '#' && *s != '[' && key_line(ps, s) != 0)
        return NULL;
    memcpy(str, s, strlen(s) + 1);
    return str;
}

/* inih's handler, called right after read_line gave it the key's line. */
static int on_key(void *user, const char *section, const char *key, const char *value)
{
    cfg_parser_t *ps = user;
    char *val = NULL, q[DAL_CFG_QUOTE_SIZE];
    dal_error_t e;
    int rc;

    (void)section;   /* truncated by inih; ps->sec is the real one */
    if (ps->rc != 0)
        goto done;
    if (ps->sec == NULL) {
        cfg_fail(ps, ps->line, DAL_ECONFIG,
                 "key '%s' is outside any section (put it under " SECTION_LIST ")",
                 config_quote(key, q));
        goto done;
    }
    if (*key == '\0') {
        cfg_fail(ps, ps->line, DAL_ECONFIG, "syntax error: missing key before '='");
        goto done;
    }
    if (seen_add(ps, key) != 0)
        goto done;
    rc = expand_env(value, &val, &e);
    if (rc != 0) {
        cfg_fail(ps, ps->line, rc, "%s: %s", config_quote(key, q), e.message);
        goto done;
    }
    set_key(ps, key, &val);
done:
    free(val);
    return ps->rc == 0;   /* inih wants non-zero for success */
}

/* ------------------------------------------------------ cross-checks */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int ds_defined(const char **sorted, size_t n, const char *name)
{
    return bsearch(&name, sorted, n, sizeof *sorted, cmp_names) != NULL;
}

/* Every node a table needs must be a [datasource]. */
static void check_table_nodes(cfg_parser_t *ps, const dal_cfg_table_t *t, const char **sorted, size_t n)
{
    char node[DAL_CFG_NAME_MAX + 16];
    uint32_t i;

    if (t->kind == DAL_TABLE_SINGLE) {
        if (!ds_defined(sorted, n, t->datasource))
            cfg_fail(ps, t->datasource_line, DAL_ECONFIG, "datasource: no [datasource %s] is defined", t->datasource);
        return;
    }
    for (i = 0; i < t->db_shard_num; i++) {
        snprintf(node, sizeof node, "%s%u", t->datasource, (unsigned int)i);
        if (!ds_defined(sorted, n, node)) {
            cfg_fail(ps, t->datasource_line, DAL_ECONFIG,
                     "datasource: group '%s' needs [datasource %s] (db_shard_num = %u), which is not defined",
                     t->datasource, node, t->db_shard_num);
            return;
        }
    }
}

static const dal_cfg_param_t *find_param(const dal_cfg_params_t *pp, const char *name)
{
    size_t i;

    for (i = 0; i < pp->n; i++)
        if (strcmp(pp->items[i].name, name) == 0)
            return &pp->items[i];
    return NULL;
}

/* A strategy.* key of b missing in a, set to another value, or missing in b; 0 if none. */
static int params_differ(const dal_cfg_table_t *a, const dal_cfg_table_t *b, char *buf, size_t size)
{
    const dal_cfg_param_t *p, *q;
    char qp[DAL_CFG_QUOTE_SIZE], qq[DAL_CFG_QUOTE_SIZE];
    size_t i;

    for (i = 0; i < b->strategy_params.n; i++) {
        p = &b->strategy_params.items[i];
        q = find_param(&a->strategy_params, p->name);
        if (q == NULL)
            return snprintf(buf, size, "it has strategy.%s, which [table %s] has not", p->name, a->name);
        if (strcmp(p->value, q->value) != 0)
            return snprintf(buf, size, "its strategy.%s is '%s', not '%s'", p->name,
                            config_quote(p->value, qp), config_quote(q->value, qq));
    }
    for (i = 0; i < a->strategy_params.n; i++)
        if (find_param(&b->strategy_params, a->strategy_params.items[i].name) == NULL)
            return snprintf(buf, size, "it has no strategy.%s", a->strategy_params.items[i].name);
    return 0;
}

/*
 * Tables of one binding group are routed by one shard value, so they must
 * split the same way.  Writes what differs between b and a into buf and
 * returns non-zero, or returns 0 if nothing does.
 */
static int layout_differs(const dal_cfg_table_t *a, const dal_cfg_table_t *b, char *buf, size_t size)
{
    if (strcmp(a->datasource, b->datasource) != 0)
        return snprintf(buf, size, "its datasource is %s, not %s", b->datasource, a->datasource);
    if (a->db_shard_num != b->db_shard_num)
        return snprintf(buf, size, "its db_shard_num is %u, not %u", b->db_shard_num, a->db_shard_num);
    if (a->table_shard_num != b->table_shard_num)
        return snprintf(buf, size, "its table_shard_num is %u, not %u", b->table_shard_num, a->table_shard_num);
    if (strcmp(a->strategy, b->strategy) != 0)
        return snprintf(buf, size, "its strategy is %s, not %s", b->strategy, a->strategy);
    return params_differ(a, b, buf, size);
}

/* Compare table i with the first table of its binding group. */
static void check_binding(cfg_parser_t *ps, size_t i)
{
    const dal_cfg_table_t *t = &ps->cfg->tables[i], *first;
    char diff[256];
    size_t j;

    for (j = 0; j < i; j++)
        if (ps->cfg->tables[j].binding != NULL && strcmp(ps->cfg->tables[j].binding, t->binding) == 0)
            break;
    if (j == i)
        return;
    first = &ps->cfg->tables[j];
    if (layout_differs(first, t, diff, sizeof diff))
        cfg_fail(ps, t->binding_line, DAL_ECONFIG,
                 "binding: [table %s] cannot join binding group '%s' of [table %s] (line %d): %s "
                 "(the tables of a binding group share datasource, db_shard_num, table_shard_num, strategy and strategy.*)",
                 t->name, t->binding, first->name, first->line, diff);
}

/* Each lookup of t: t is sharded, the column is not its shard key, and
 * [table T_lookup_COL] is declared in t's schema, keyed by the column. */
static void check_lookups(cfg_parser_t *ps, const dal_cfg_table_t *t)
{
    char name[2 * DAL_CFG_NAME_MAX + 16];
    const dal_cfg_table_t *lt;
    size_t i;

    if (t->nlookups > 0 && t->kind != DAL_TABLE_SHARDED)
        cfg_fail(ps, t->lookup_line, DAL_ECONFIG,
                 "lookup: [table %s] is not sharded, so it has nothing to look up", t->name);
    for (i = 0; i < t->nlookups && t->kind == DAL_TABLE_SHARDED; i++) {
        const char *col = t->lookups[i].column;
        snprintf(name, sizeof name, "%s_lookup_%s", t->name, col);
        lt = config_table(ps->cfg, name);
        if (strcasecmp(col, t->shard_key) == 0)
            cfg_fail(ps, t->lookup_line, DAL_ECONFIG,
                     "lookup: %s is the shard key of [table %s]; it needs no lookup", col,
                     t->name);
        else if (lt == NULL)
            cfg_fail(ps, t->lookup_line, DAL_ECONFIG,
                     "lookup: no [table %s] is defined (the lookup table of %s.%s: columns "
                     "%s and %s, sharded by %s or on one datasource)", name, t->name, col, col,
                     t->shard_key, col);
        else if (lt->kind == DAL_TABLE_SHARDED && strcasecmp(lt->shard_key, col) != 0)
            cfg_fail(ps, t->lookup_line, DAL_ECONFIG,
                     "lookup: [table %s] (line %d) must have shard_key = %s, not %s", name,
                     lt->line, col, lt->shard_key);
        else if (lt->kind == DAL_TABLE_BROADCAST || lt->nlookups > 0 ||
                 (lt->schema == NULL) != (t->schema == NULL) ||
                 (lt->schema != NULL && strcmp(lt->schema, t->schema) != 0))
            cfg_fail(ps, t->lookup_line, DAL_ECONFIG,
                     "lookup: [table %s] (line %d) must be a plain table of the same schema as "
                     "[table %s]: not broadcast, without lookups of its own", name, lt->line,
                     t->name);
    }
}

static void check_table_refs(cfg_parser_t *ps, const char **sorted)
{
    const dal_config_t *cfg = ps->cfg;
    const dal_cfg_table_t *t;
    size_t i;

    for (i = 0; i < cfg->ntables; i++) {
        t = &cfg->tables[i];
        check_table_nodes(ps, t, sorted, cfg->ndatasources);
        if (t->idgen != NULL && find_idgen(cfg, t->idgen) == NULL)
            cfg_fail(ps, t->idgen_line, DAL_ECONFIG, "idgen: no [idgen %s] is defined", t->idgen);
        if (t->binding != NULL)
            check_binding(ps, i);
        check_lookups(ps, t);
        ps->cfg->nlookups += t->nlookups;
        if (t->schema != NULL && config_schema(cfg, t->schema) == NULL)
            cfg_fail(ps, t->schema_line, DAL_ECONFIG, "schema: no [schema %s] is defined",
                     t->schema);
    }
}

/* Each [schema]: its datasource exists, and it is not the top level's name. */
static void check_schemas(cfg_parser_t *ps, const char **sorted)
{
    const dal_config_t *cfg = ps->cfg;
    size_t i;

    for (i = 0; i < cfg->nschemas; i++) {
        const dal_cfg_schema_t *sc = &cfg->schemas[i];
        if (strcmp(sc->name, cfg->proxy.database) == 0)
            cfg_fail(ps, sc->line, DAL_ECONFIG,
                     "[schema %s] is the [proxy] database, whose tables are the [table] sections "
                     "without schema = and whose datasource is [dal] default_datasource",
                     sc->name);
        if (sc->default_datasource != NULL &&
            !ds_defined(sorted, cfg->ndatasources, sc->default_datasource))
            cfg_fail(ps, sc->default_datasource_line, DAL_ECONFIG,
                     "default_datasource: no [datasource %s] is defined", sc->default_datasource);
    }
}

static int check_refs(cfg_parser_t *ps)
{
    const dal_config_t *cfg = ps->cfg;
    const char **sorted = malloc((cfg->ndatasources + 1) * sizeof *sorted);
    size_t i;

    if (sorted == NULL)
        return cfg_oom(ps);
    for (i = 0; i < cfg->ndatasources; i++)
        sorted[i] = cfg->datasources[i].name;
    qsort(sorted, cfg->ndatasources, sizeof *sorted, cmp_names);
    if (cfg->default_datasource != NULL && !ds_defined(sorted, cfg->ndatasources, cfg->default_datasource))
        cfg_fail(ps, cfg->default_datasource_line, DAL_ECONFIG,
                 "default_datasource: no [datasource %s] is defined", cfg->default_datasource);
    if (cfg->server_schemas != NULL && strcmp(cfg->server_schemas, "none") != 0 &&
        !ds_defined(sorted, cfg->ndatasources, cfg->server_schemas))
        cfg_fail(ps, cfg->server_schemas_line, DAL_ECONFIG,
                 "server_schemas: no [datasource %s] is defined", cfg->server_schemas);
    if (cfg->xa_log != NULL && !ds_defined(sorted, cfg->ndatasources, cfg->xa_log))
        cfg_fail(ps, cfg->xa_log_line, DAL_ECONFIG, "xa_log: no [datasource %s] is defined",
                 cfg->xa_log);
    if (cfg->proxy.users_datasource != NULL &&
        !ds_defined(sorted, cfg->ndatasources, cfg->proxy.users_datasource))
        cfg_fail(ps, cfg->proxy.users_datasource_line, DAL_ECONFIG,
                 "users_datasource: no [datasource %s] is defined", cfg->proxy.users_datasource);
    if (cfg->transaction_mode == 2 && cfg->xa_log == NULL)
        cfg_fail(ps, 0, DAL_ECONFIG, "transaction_mode = xa needs [dal] xa_log = DATASOURCE "
                                     "(where the commit decisions are kept)");
    check_table_refs(ps, sorted);
    check_schemas(ps, sorted);
    free(sorted);
    for (i = 0; i < cfg->ndatasources; i++)
        ps->cfg->datasources[i].local_infile = cfg->local_infile;
    return ps->rc;
}

/* ------------------------------------------------------------- loading */

static int read_failed(cfg_parser_t *ps)
{
    char buf[128];
    int code = ps->read_errno == ENOMEM ? DAL_ENOMEM : DAL_EIO;

    ps->rc = err_set(ps->err, code, "%s: cannot read: %s", ps->path,
                     strerror_r(ps->read_errno, buf, sizeof buf));
    return ps->rc;
}

static int parse_file(cfg_parser_t *ps)
{
    int irc = ini_parse_stream(read_line, ps, on_key, ps);

    if (ps->read_errno != 0 && ps->rc == 0)
        return read_failed(ps);
    /* Our reader catches inih's syntax errors first; this is a safety net
     * in case a differently built inih rejects a line we let through. */
    if (irc > 0)
        cfg_fail(ps, irc, DAL_ECONFIG, "syntax error");
    if (irc == -2)
        cfg_oom(ps);
    if (ps->rc == 0)
        finish_section(ps);
    if (ps->rc == 0)
        check_refs(ps);
    return ps->rc;
}

/* An empty config with [dal]'s defaults (the section is optional). */
static int new_config(const char *path, dal_config_t **out, dal_error_t *err)
{
    dal_config_t *cfg = calloc(1, sizeof *cfg);
    int rc;

    *out = NULL;
    if (cfg == NULL)
        return err_set(err, DAL_ENOMEM, "%s: out of memory", path);
    atomic_init(&cfg->refs, 1);
    cfg->path = strdup(path);
    if (cfg->path == NULL) {
        free(cfg);
        return err_set(err, DAL_ENOMEM, "%s: out of memory", path);
    }
    rc = cfg_key_defaults(dal_cfg_dal_keys, cfg, err);
    if (rc == 0)
        rc = cfg_key_defaults(dal_cfg_proxy_keys, &cfg->proxy, err);
    if (rc != 0) {
        err_prefix(err, "%s", path);
        config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

/* Parse the stream fp; name is what messages call it. */
static int load_stream(const char *name, FILE *fp, dal_config_t **out, dal_error_t *err)
{
    cfg_parser_t ps;
    int rc;

    memset(&ps, 0, sizeof ps);
    ps.path = name;
    ps.err = err;
    ps.fp = fp;
    rc = new_config(name, &ps.cfg, err);
    if (rc == 0)
        rc = parse_file(&ps);
    seen_reset(&ps);
    free(ps.seen);
    free(ps.buf);
    if (rc != 0) {
        config_free(ps.cfg);
        return rc;
    }
    *out = ps.cfg;
    return 0;
}

int config_load(const char *path, dal_config_t **out, dal_error_t *err)
{
    char buf[128];
    FILE *fp;
    int rc;

    *out = NULL;
    fp = fopen(path, "r");
    if (fp == NULL)
        return err_set(err, errno == ENOMEM ? DAL_ENOMEM : DAL_EIO, "%s: cannot open: %s",
                       path, strerror_r(errno, buf, sizeof buf));
    rc = load_stream(path, fp, out, err);
    fclose(fp);
    return rc;
}

int config_parse(const char *name, const char *text, size_t len, dal_config_t **out,
                 dal_error_t *err)
{
    /* fmemopen refuses an empty buffer: an empty document is one newline */
    FILE *fp = len > 0 ? fmemopen((void *)text, len, "r") : fmemopen((void *)"\n", 1, "r");
    int rc;

    *out = NULL;
    if (fp == NULL)
        return err_set(err, DAL_ENOMEM, "%s: out of memory", name);
    rc = load_stream(name, fp, out, err);
    fclose(fp);
    return rc;
}

static void free_params(dal_cfg_params_t *pp)
{
    size_t i;

    for (i = 0; i < pp->n; i++) {
        free(pp->items[i].name);
        free(pp->items[i].value);
    }
    free(pp->items);
}

static void free_datasource(dal_cfg_datasource_t *ds)
{
    size_t i;

    free(ds->name);
    url_clear(&ds->master);
    for (i = 0; i < ds->nreplicas; i++)
        url_clear(&ds->replicas[i].url);
    free(ds->replicas);
    free_params(&ds->pool_params);
}

static void free_table(dal_cfg_table_t *t)
{
    free(t->name);
    free(t->datasource);
    free(t->shard_key);
    free(t->strategy);
    free_params(&t->strategy_params);
    free(t->binding);
    free(t->id_column);
    free(t->write_fence);
    free(t->idgen);
    free(t->schema);
    free(t->lookup);
    free(t->lookup_unique);
    for (size_t i = 0; i < t->nlookups; i++)
        free(t->lookups[i].column);
    free(t->lookups);
}

dal_config_t *config_ref(dal_config_t *cfg)
{
    atomic_fetch_add(&cfg->refs, 1);
    return cfg;
}

void config_free(dal_config_t *cfg)
{
    size_t i;

    if (cfg == NULL || atomic_fetch_sub(&cfg->refs, 1) != 1)
        return;
    for (i = 0; i < cfg->ndatasources; i++)
        free_datasource(&cfg->datasources[i]);
    free(cfg->datasources);
    for (i = 0; i < cfg->ntables; i++)
        free_table(&cfg->tables[i]);
    free(cfg->tables);
    for (i = 0; i < cfg->nidgens; i++) {
        free(cfg->idgens[i].name);
        free(cfg->idgens[i].plugin);
        free_params(&cfg->idgens[i].params);
    }
    free(cfg->idgens);
    for (i = 0; i < cfg->nschemas; i++) {
        free(cfg->schemas[i].name);
        free(cfg->schemas[i].default_datasource);
    }
    free(cfg->schemas);
    for (i = 0; i < cfg->nmonitors; i++) {
        free(cfg->monitors[i].name);
        free(cfg->monitors[i].plugin);
        free_params(&cfg->monitors[i].params);
    }
    free(cfg->monitors);
    for (i = 0; i < cfg->nproxy_users; i++) {
        free(cfg->proxy_users[i].name);
        free(cfg->proxy_users[i].password);
        free(cfg->proxy_users[i].password_hash);
    }
    free(cfg->proxy_users);
    free(cfg->proxy.listen);
    free(cfg->proxy.database);
    free(cfg->proxy.tls_cert);
    free(cfg->proxy.users_datasource);
    free(cfg->proxy.tls_key);
    free(cfg->path);
    free(cfg->plugin_dir);
    free(cfg->default_datasource);
    free(cfg->server_schemas);
    free(cfg->xa_log);
    free(cfg->pool);
    free_params(&cfg->pool_params);
    free(cfg);
}

const dal_cfg_datasource_t *config_datasource(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->ndatasources; i++)
        if (strcmp(cfg->datasources[i].name, name) == 0)
            return &cfg->datasources[i];
    return NULL;
}

const dal_cfg_schema_t *config_schema(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->nschemas; i++)
        if (strcmp(cfg->schemas[i].name, name) == 0)
            return &cfg->schemas[i];
    return NULL;
}

const dal_cfg_table_t *config_table(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->ntables; i++)
        if (strcasecmp(cfg->tables[i].name, name) == 0)
            return &cfg->tables[i];
    return NULL;
}
