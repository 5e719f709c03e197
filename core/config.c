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
 * Checks that need the whole file (a [table] naming datasources defined
 * further down) run after the last line, and still report the line of the
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

#define CFG_NAME_MAX 64          /* datasource, table, column, plugin names */
#define CFG_SHARD_MAX 1048576    /* db_shard_num, table_shard_num */
#define CFG_QUOTE_MAX 60         /* longest value quoted in a message */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define DEFAULT_CONNECT_TIMEOUT_MS 5000
#define DEFAULT_READ_TIMEOUT_MS 30000

typedef struct cfg_parser cfg_parser_t;

/* One kind of section: [word] or [word NAME]. */
typedef struct section_kind {
    const char *word;
    int named;
    int (*begin)(cfg_parser_t *ps, const char *name);
    /* Handle one key; may take ownership of *val (and set it to NULL). */
    int (*key)(cfg_parser_t *ps, const char *key, char **val);
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
    seen_key_t *seen;           /* keys of the current section */
    size_t nseen;
    size_t seencap;
    int dal_line;               /* line of [dal]; 0 if none yet */
    size_t dscap;
    size_t tabcap;
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
    dal_err_set(ps->err, code, "%s:%d: %s", ps->path, line, msg);
    return code;
}

static int cfg_oom(cfg_parser_t *ps)
{
    return cfg_fail(ps, ps->line, DAL_ENOMEM, "out of memory");
}

/* "[datasource main]" or "[dal]" for messages. */
static void section_label(const cfg_parser_t *ps, char *out, size_t size)
{
    if (ps->sec->named)
        snprintf(out, size, "[%s %s]", ps->sec->word, ps->sec_name);
    else
        snprintf(out, size, "[%s]", ps->sec->word);
}

/* ------------------------------------------------------ number parsing */

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Digits at *pp into *out, advancing *pp.  -1 if none or above limit. */
static int parse_digits(const char **pp, uint64_t limit, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v = 0, d;

    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        d = (uint64_t)(*p - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *pp = p;
    *out = v;
    return 0;
}

int dal_parse_int64(const char *text, int64_t *out)
{
    const char *p = skip_blanks(text);
    uint64_t v, limit = (uint64_t)INT64_MAX;
    int neg = 0;

    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (neg)
        limit += 1;   /* -9223372036854775808 is representable */
    if (parse_digits(&p, limit, &v) != 0 || *skip_blanks(p) != '\0')
        return -1;
    if (neg)
        *out = v == limit ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 0;
}

int dal_parse_duration_ms(const char *text, int64_t *out_ms)
{
    static const struct { const char *unit; uint64_t ms; } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"", 1000}
    };
    const char *p = skip_blanks(text);
    const char *end;
    uint64_t v;
    size_t i, n;

    if (parse_digits(&p, (uint64_t)INT64_MAX, &v) != 0)
        return -1;
    for (n = 0; isalpha((unsigned char)p[n]); n++)
        ;
    end = skip_blanks(p + n);
    if (*end != '\0')
        return -1;
    for (i = 0; i < NELEM(units); i++) {
        if (strlen(units[i].unit) != n || strncmp(p, units[i].unit, n) != 0)
            continue;
        if (v > (uint64_t)INT64_MAX / units[i].ms)
            return -1;
        *out_ms = (int64_t)(v * units[i].ms);
        return 0;
    }
    return -1;
}

int dal_parse_bool(const char *text, int *out)
{
    static const struct { const char *word; int val; } words[] = {
        {"true", 1}, {"yes", 1}, {"on", 1}, {"1", 1},
        {"false", 0}, {"no", 0}, {"off", 0}, {"0", 0}
    };
    const char *p = skip_blanks(text);
    size_t i, n = strcspn(p, " \t");

    if (*skip_blanks(p + n) != '\0')
        return -1;
    for (i = 0; i < NELEM(words); i++) {
        if (strlen(words[i].word) == n && strncasecmp(p, words[i].word, n) == 0) {
            *out = words[i].val;
            return 0;
        }
    }
    return -1;
}

/* ---------------------------------------------------------- name rules */

static int ds_char(int c)     { return isalnum(c) || c == '_' || c == '.' || c == '-'; }
static int table_char(int c)  { return isalnum(c) || c == '_' || c == '$'; }
static int plugin_char(int c) { return islower(c) || isdigit(c) || c == '_'; }
static int param_char(int c)  { return isalnum(c) || c == '_'; }

static int name_ok(const char *s, int (*ok)(int))
{
    size_t n;

    for (n = 0; s[n] != '\0'; n++)
        if (!ok((unsigned char)s[n]))
            return 0;
    return n > 0 && n <= CFG_NAME_MAX;
}

/* ------------------------------------------------------- value helpers */

static int need_value(cfg_parser_t *ps, const char *key, const char *val)
{
    if (*val == '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: empty value", key);
    return 0;
}

/* Take *val as a string setting, checking it against a name rule. */
static int take_name(cfg_parser_t *ps, const char *key, char **val, int (*ok)(int),
                     const char *rule, char **slot, int *line)
{
    if (need_value(ps, key, *val) != 0)
        return ps->rc;
    if (ok != NULL && !name_ok(*val, ok))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: '%.*s' is not a valid name (%s, at most %d characters)",
                        key, CFG_QUOTE_MAX, *val, rule, CFG_NAME_MAX);
    *slot = *val;
    *val = NULL;
    if (line != NULL)
        *line = ps->line;
    return 0;
}

/* A shard count: 1..CFG_SHARD_MAX. */
static int take_count(cfg_parser_t *ps, const char *key, const char *val, uint32_t *out)
{
    const char *p = skip_blanks(val);
    int64_t v = 0;
    int parsed = dal_parse_int64(val, &v) == 0;

    if (parsed && v > 0 && v <= CFG_SHARD_MAX) {
        *out = (uint32_t)v;
        return 0;
    }
    while (isdigit((unsigned char)*p))
        p++;
    /* Only digits, yet not a good count: too big for the limit or for int64. */
    if (isdigit((unsigned char)*skip_blanks(val)) && *skip_blanks(p) == '\0' && (!parsed || v > 0))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: %.*s is out of range (1..%d)",
                        key, CFG_QUOTE_MAX, val, CFG_SHARD_MAX);
    return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: expected a positive integer, got '%.*s'",
                    key, CFG_QUOTE_MAX, val);
}

/* A timeout in milliseconds that fits the uint32_t fields. */
static int take_timeout(cfg_parser_t *ps, const char *key, const char *val, int zero_ok,
                        uint32_t *out)
{
    int64_t ms;

    if (dal_parse_duration_ms(val, &ms) != 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "%s: expected a duration such as 250ms, 5s, 2m or 1h, got '%.*s'",
                        key, CFG_QUOTE_MAX, val);
    if (ms == 0 && !zero_ok)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: must be greater than 0", key);
    if (ms > (int64_t)UINT32_MAX)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: too long (at most %lums)",
                        key, (unsigned long)UINT32_MAX);
    *out = (uint32_t)ms;
    return 0;
}

static int unknown_key(cfg_parser_t *ps, const char *key)
{
    char label[CFG_NAME_MAX + 32];

    section_label(ps, label, sizeof label);
    return cfg_fail(ps, ps->line, DAL_ECONFIG, "unknown key '%.*s' in %s", CFG_QUOTE_MAX, key, label);
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
    seen_key_t *ns;

    if (first != 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate key '%.*s' (first given at line %d)",
                        CFG_QUOTE_MAX, key, first);
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

/* Make room for one more element of an array that grows by doubling. */
static int grow(cfg_parser_t *ps, void **arr, size_t n, size_t *cap, size_t size)
{
    void *na;
    size_t ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 8;
    na = realloc(*arr, ncap * size);
    if (na == NULL)
        return cfg_oom(ps);
    memset((char *)na + n * size, 0, (ncap - n) * size);
    *arr = na;
    *cap = ncap;
    return 0;
}

/* ------------------------------------------------------------- [dal] */

static int dal_begin(cfg_parser_t *ps, const char *name)
{
    (void)name;
    if (ps->dal_line != 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate section [dal] (first at line %d)", ps->dal_line);
    ps->dal_line = ps->line;
    ps->sec_name = "";
    return 0;
}

static int dal_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_config_t *cfg = ps->cfg;

    if (strcmp(key, "plugin_dir") == 0)
        return take_name(ps, key, val, NULL, NULL, &cfg->plugin_dir, &cfg->plugin_dir_line);
    if (strcmp(key, "default_datasource") == 0)
        return take_name(ps, key, val, ds_char, "letters, digits, '_', '.', '-'",
                         &cfg->default_datasource, &cfg->default_datasource_line);
    return unknown_key(ps, key);
}

/* ------------------------------------------------------ [datasource NAME] */

static dal_cfg_datasource_t *cur_ds(cfg_parser_t *ps)
{
    return &ps->cfg->datasources[ps->cfg->ndatasources - 1];
}

static int ds_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    const dal_cfg_datasource_t *old = dal_config_datasource(cfg, name);
    dal_cfg_datasource_t *ds;

    if (!name_ok(name, ds_char))
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "bad datasource name '%.*s' (letters, digits, '_', '.', '-', at most %d characters)",
                        CFG_QUOTE_MAX, name, CFG_NAME_MAX);
    if (old != NULL)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate section [datasource %s] (first at line %d)",
                        name, old->line);
    if (grow(ps, (void **)&cfg->datasources, cfg->ndatasources, &ps->dscap, sizeof *ds) != 0)
        return ps->rc;
    ds = &cfg->datasources[cfg->ndatasources];
    ds->name = strdup(name);
    if (ds->name == NULL)
        return cfg_oom(ps);
    cfg->ndatasources++;
    ds->line = ps->line;
    ds->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    ds->read_timeout_ms = DEFAULT_READ_TIMEOUT_MS;
    ps->sec_name = ds->name;
    return 0;
}

static int ds_master(cfg_parser_t *ps, dal_cfg_datasource_t *ds, const char *val)
{
    dal_error_t e;
    int rc;

    if (need_value(ps, "master", val) != 0)
        return ps->rc;
    rc = dal_url_parse(val, &ds->master, &e);
    if (rc != 0)
        return cfg_fail(ps, ps->line, rc, "master: %s", e.message);
    ds->master_line = ps->line;
    return 0;
}

static int ds_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_cfg_datasource_t *ds = cur_ds(ps);

    if (strcmp(key, "master") == 0)
        return ds_master(ps, ds, *val);
    if (strcmp(key, "connect_timeout") == 0)
        return take_timeout(ps, key, *val, 0, &ds->connect_timeout_ms);
    if (strcmp(key, "read_timeout") == 0)
        return take_timeout(ps, key, *val, 1, &ds->read_timeout_ms);
    return unknown_key(ps, key);
}

static int ds_finish(cfg_parser_t *ps)
{
    dal_cfg_datasource_t *ds = cur_ds(ps);
    int key_line = seen_line(ps, "connect_timeout");
    int64_t url_ms = ds->master.connect_timeout_ms;

    if (ds->master_line == 0)
        return cfg_fail(ps, ds->line, DAL_ECONFIG,
                        "[datasource %s] has no master (add: master = mysql://USER:PASSWORD@HOST:PORT/DATABASE)",
                        ds->name);
    /* The URL may carry connect_timeout too; keep one value, in one place. */
    if (url_ms == 0)
        return 0;
    if (key_line != 0)
        return cfg_fail(ps, key_line, DAL_ECONFIG,
                        "connect_timeout: also given in the master URL (line %d); keep only one",
                        ds->master_line);
    if (url_ms > (int64_t)UINT32_MAX)
        return cfg_fail(ps, ds->master_line, DAL_ECONFIG, "master: option connect_timeout is too long");
    ds->connect_timeout_ms = (uint32_t)url_ms;
    return 0;
}

/* ----------------------------------------------------------- [table NAME] */

static dal_cfg_table_t *cur_table(cfg_parser_t *ps)
{
    return &ps->cfg->tables[ps->cfg->ntables - 1];
}

static int table_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    const dal_cfg_table_t *old = dal_config_table(cfg, name);
    dal_cfg_table_t *t;

    if (!name_ok(name, table_char))
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "bad table name '%.*s' (letters, digits, '_', '$', at most %d characters)",
                        CFG_QUOTE_MAX, name, CFG_NAME_MAX);
    if (old != NULL)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate section [table %s] (first at line %d)",
                        name, old->line);
    if (grow(ps, (void **)&cfg->tables, cfg->ntables, &ps->tabcap, sizeof *t) != 0)
        return ps->rc;
    t = &cfg->tables[cfg->ntables];
    t->name = strdup(name);
    if (t->name == NULL)
        return cfg_oom(ps);
    cfg->ntables++;
    t->line = ps->line;
    t->db_shard_num = 1;
    t->table_shard_num = 1;
    ps->sec_name = t->name;
    return 0;
}

static int table_param(cfg_parser_t *ps, dal_cfg_table_t *t, const char *key, char **val)
{
    dal_cfg_params_t *pp = &t->strategy_params;
    const char *pname = key + strlen("strategy.");
    dal_cfg_param_t *np;

    if (!name_ok(pname, param_char))
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "%.*s: bad parameter name (letters, digits and '_' after 'strategy.')",
                        CFG_QUOTE_MAX, key);
    /* pp->n is small: grow one at a time. */
    np = realloc(pp->items, (pp->n + 1) * sizeof *np);
    if (np == NULL)
        return cfg_oom(ps);
    pp->items = np;
    np = &pp->items[pp->n];
    np->name = strdup(pname);
    if (np->name == NULL)
        return cfg_oom(ps);
    np->value = *val;
    np->line = ps->line;
    *val = NULL;
    pp->n++;
    return 0;
}

static int table_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_cfg_table_t *t = cur_table(ps);

    if (strcmp(key, "datasource") == 0)
        return take_name(ps, key, val, ds_char, "letters, digits, '_', '.', '-'",
                         &t->datasource, &t->datasource_line);
    if (strcmp(key, "db_shard_num") == 0)
        return take_count(ps, key, *val, &t->db_shard_num);
    if (strcmp(key, "table_shard_num") == 0)
        return take_count(ps, key, *val, &t->table_shard_num);
    if (strcmp(key, "shard_key") == 0)
        return take_name(ps, key, val, table_char, "a column name: letters, digits, '_', '$'",
                         &t->shard_key, NULL);
    if (strcmp(key, "strategy") == 0)
        return take_name(ps, key, val, plugin_char, "a plugin name: lower-case letters, digits, '_'",
                         &t->strategy, &t->strategy_line);
    if (strncmp(key, "strategy.", 9) == 0)
        return table_param(ps, t, key, val);
    return unknown_key(ps, key);
}

static int table_finish(cfg_parser_t *ps)
{
    static const char *const needed[] = {"table_shard_num", "shard_key", "strategy"};
    dal_cfg_table_t *t = cur_table(ps);
    int sharded = seen_line(ps, "db_shard_num") != 0 || t->strategy_params.n > 0;
    size_t i;

    if (t->datasource == NULL)
        return cfg_fail(ps, t->line, DAL_ECONFIG, "[table %s] has no datasource (add: datasource = NAME)", t->name);
    for (i = 0; i < NELEM(needed); i++)
        sharded |= seen_line(ps, needed[i]) != 0;
    if (!sharded)
        return 0;
    for (i = 0; i < NELEM(needed); i++)
        if (seen_line(ps, needed[i]) == 0)
            return cfg_fail(ps, t->line, DAL_ECONFIG, "[table %s] is sharded but has no %s", t->name, needed[i]);
    if (t->table_shard_num % t->db_shard_num != 0)
        return cfg_fail(ps, seen_line(ps, "table_shard_num"), DAL_ECONFIG,
                        "table_shard_num (%u) must be a multiple of db_shard_num (%u)",
                        t->table_shard_num, t->db_shard_num);
    return 0;
}

/* ------------------------------------------------------------ sections */

static const section_kind_t sections[] = {
    {"dal", 0, dal_begin, dal_key, NULL},
    {"datasource", 1, ds_begin, ds_key, ds_finish},
    {"table", 1, table_begin, table_key, table_finish},
};

static int finish_section(cfg_parser_t *ps)
{
    int rc = 0;

    if (ps->sec != NULL && ps->sec->finish != NULL)
        rc = ps->sec->finish(ps);
    seen_reset(ps);
    ps->sec = NULL;
    return rc;
}

/* "word NAME" (already trimmed) -> the section kind and its name. */
static int begin_section(cfg_parser_t *ps, const char *inner)
{
    size_t wlen = strcspn(inner, " \t");
    const char *name = skip_blanks(inner + wlen);
    size_t i;

    for (i = 0; i < NELEM(sections); i++)
        if (strlen(sections[i].word) == wlen && strncmp(inner, sections[i].word, wlen) == 0)
            break;
    if (i == NELEM(sections))
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "unknown section [%.*s] (expected [dal], [datasource NAME] or [table NAME])",
                        CFG_QUOTE_MAX, inner);
    if (sections[i].named && *name == '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "section [%s] needs a name: [%s NAME]",
                        sections[i].word, sections[i].word);
    if (!sections[i].named && *name != '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "section [%s] takes no name", sections[i].word);
    if (sections[i].begin(ps, name) != 0)
        return ps->rc;
    ps->sec = &sections[i];
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
    after = skip_blanks(close + 1);
    if (*after != '\0' && *after != ';' && *after != '#')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "syntax error: unexpected text after ']'");
    if (finish_section(ps) != 0)
        return ps->rc;
    s = skip_blanks(s + 1);
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
    s = skip_blanks(s);
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
    char *val = NULL;
    dal_error_t e;
    int rc;

    (void)section;   /* truncated by inih; ps->sec is the real one */
    if (ps->rc != 0)
        goto done;
    if (ps->sec == NULL) {
        cfg_fail(ps, ps->line, DAL_ECONFIG,
                 "key '%.*s' is outside any section (put it under [dal], [datasource NAME] or [table NAME])",
                 CFG_QUOTE_MAX, key);
        goto done;
    }
    if (*key == '\0') {
        cfg_fail(ps, ps->line, DAL_ECONFIG, "syntax error: missing key before '='");
        goto done;
    }
    if (seen_add(ps, key) != 0)
        goto done;
    rc = dal_expand_env(value, &val, &e);
    if (rc != 0) {
        cfg_fail(ps, ps->line, rc, "%.*s: %s", CFG_QUOTE_MAX, key, e.message);
        goto done;
    }
    ps->sec->key(ps, key, &val);
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
    char node[CFG_NAME_MAX + 16];
    uint32_t i;

    if (t->strategy == NULL) {
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
    for (i = 0; i < cfg->ntables; i++)
        check_table_nodes(ps, &cfg->tables[i], sorted, cfg->ndatasources);
    free(sorted);
    return ps->rc;
}

/* ------------------------------------------------------------- loading */

static int read_failed(cfg_parser_t *ps)
{
    char buf[128];
    int code = ps->read_errno == ENOMEM ? DAL_ENOMEM : DAL_EIO;

    ps->rc = dal_err_set(ps->err, code, "%s: cannot read: %s", ps->path,
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

int dal_config_load(const char *path, dal_config_t **out, dal_error_t *err)
{
    cfg_parser_t ps;
    char buf[128];
    int rc;

    *out = NULL;
    memset(&ps, 0, sizeof ps);
    ps.path = path;
    ps.err = err;
    ps.fp = fopen(path, "r");
    if (ps.fp == NULL)
        return dal_err_set(err, errno == ENOMEM ? DAL_ENOMEM : DAL_EIO, "%s: cannot open: %s",
                           path, strerror_r(errno, buf, sizeof buf));
    ps.cfg = calloc(1, sizeof *ps.cfg);
    if (ps.cfg != NULL)
        ps.cfg->path = strdup(path);
    if (ps.cfg == NULL || ps.cfg->path == NULL)
        rc = dal_err_set(err, DAL_ENOMEM, "%s: out of memory", path);
    else
        rc = parse_file(&ps);
    seen_reset(&ps);
    free(ps.seen);
    free(ps.buf);
    fclose(ps.fp);
    if (rc != 0) {
        dal_config_free(ps.cfg);
        return rc;
    }
    *out = ps.cfg;
    return 0;
}

static void free_table(dal_cfg_table_t *t)
{
    size_t i;

    free(t->name);
    free(t->datasource);
    free(t->shard_key);
    free(t->strategy);
    for (i = 0; i < t->strategy_params.n; i++) {
        free(t->strategy_params.items[i].name);
        free(t->strategy_params.items[i].value);
    }
    free(t->strategy_params.items);
}

void dal_config_free(dal_config_t *cfg)
{
    size_t i;

    if (cfg == NULL)
        return;
    for (i = 0; i < cfg->ndatasources; i++) {
        free(cfg->datasources[i].name);
        dal_url_clear(&cfg->datasources[i].master);
    }
    free(cfg->datasources);
    for (i = 0; i < cfg->ntables; i++)
        free_table(&cfg->tables[i]);
    free(cfg->tables);
    free(cfg->path);
    free(cfg->plugin_dir);
    free(cfg->default_datasource);
    free(cfg);
}

const dal_cfg_datasource_t *dal_config_datasource(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->ndatasources; i++)
        if (strcmp(cfg->datasources[i].name, name) == 0)
            return &cfg->datasources[i];
    return NULL;
}

const dal_cfg_table_t *dal_config_table(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->ntables; i++)
        if (strcasecmp(cfg->tables[i].name, name) == 0)
            return &cfg->tables[i];
    return NULL;
}
