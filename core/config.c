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

#define CFG_NAME_MAX 64          /* datasource, table, column, plugin names */
#define CFG_SHARD_MAX 1048576    /* db_shard_num, table_shard_num */
#define CFG_PARALLEL_MAX 256     /* max_parallel */
#define CFG_WEIGHT_MAX 1000      /* the weight option of a replica URL */
#define CFG_QUOTE_MAX (DAL_CFG_QUOTE_SIZE - 4)   /* longest value quoted in a message */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define DEFAULT_CONNECT_TIMEOUT_MS 5000
#define DEFAULT_READ_TIMEOUT_MS 30000
#define DEFAULT_MAX_PARALLEL 8
#define DEFAULT_REPLICA_LAG_MS 5000
#define DEFAULT_HEALTH_CHECK_MS 1000

/* The name rules, as messages state them. */
#define DS_RULE "letters, digits, '_', '.', '-'"
#define TABLE_RULE "letters, digits, '_', '$'"
#define COLUMN_RULE "a column name: " TABLE_RULE
#define LOWER_RULE "lower-case letters, digits, '_'"
#define PLUGIN_RULE "a plugin name: " LOWER_RULE
#define WORD_RULE "letters, digits, '_'"           /* binding groups, strategy.* and pool.* */

#define SECTION_LIST "[dal], [datasource NAME], [table NAME], [idgen NAME] or [monitor NAME]"

typedef struct cfg_parser cfg_parser_t;

/* One kind of section: [word] or [word NAME]. */
typedef struct section_kind {
    const char *word;
    int named;
    int (*name_char)(int);      /* the characters NAME may hold (named kinds) */
    const char *name_rule;      /* the same, for messages */
    /* Line of an earlier section of this kind with this name; 0 if none. */
    int (*taken)(const cfg_parser_t *ps, const char *name);
    /* Add the section to ps->cfg; the name is already checked. */
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

const char *dal_config_quote(const char *text, char *buf)
{
    /* Masked whole before the cut, so a cut never splits a password from
     * the '@' that marks it. */
    if (dal_url_mask(text, buf, CFG_QUOTE_MAX + 1) > CFG_QUOTE_MAX)
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
    if (kind->named)
        snprintf(out, size, "[%s %s]", kind->word, name);
    else
        snprintf(out, size, "[%s]", kind->word);
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
    char q[DAL_CFG_QUOTE_SIZE];

    if (need_value(ps, key, *val) != 0)
        return ps->rc;
    if (ok != NULL && !name_ok(*val, ok))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: '%s' is not a valid name (%s, at most %d characters)",
                        key, dal_config_quote(*val, q), rule, CFG_NAME_MAX);
    *slot = *val;
    *val = NULL;
    if (line != NULL)
        *line = ps->line;
    return 0;
}

/* A count: 1..max.  what names the value in messages ("db_shard_num"). */
static int take_count(cfg_parser_t *ps, const char *what, const char *val, uint32_t max, uint32_t *out)
{
    const char *p = skip_blanks(val);
    char q[DAL_CFG_QUOTE_SIZE];
    int64_t v = 0;
    int parsed = dal_parse_int64(val, &v) == 0;

    if (parsed && v > 0 && v <= max) {
        *out = (uint32_t)v;
        return 0;
    }
    while (isdigit((unsigned char)*p))
        p++;
    /* Only digits, yet not a good count: too big for the limit or for int64. */
    if (isdigit((unsigned char)*skip_blanks(val)) && *skip_blanks(p) == '\0' && (!parsed || v > 0))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: %s is out of range (1..%lu)",
                        what, dal_config_quote(val, q), (unsigned long)max);
    return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: expected a positive integer, got '%s'",
                    what, dal_config_quote(val, q));
}

static int take_bool(cfg_parser_t *ps, const char *key, const char *val, int *out)
{
    char q[DAL_CFG_QUOTE_SIZE];

    if (dal_parse_bool(val, out) != 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: expected true or false, got '%s'",
                        key, dal_config_quote(val, q));
    return 0;
}

/* Index of val among n words (ASCII case-insensitive, as booleans are); -1 if none. */
static int word_index(const char *val, const char *const *words, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcasecmp(val, words[i]) == 0)
            return (int)i;
    return -1;
}

/* A timeout in milliseconds that fits the uint32_t fields. */
static int take_timeout(cfg_parser_t *ps, const char *key, const char *val, int zero_ok,
                        uint32_t *out)
{
    char q[DAL_CFG_QUOTE_SIZE];
    int64_t ms;

    if (dal_parse_duration_ms(val, &ms) != 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "%s: expected a duration such as 250ms, 5s, 2m or 1h, got '%s'",
                        key, dal_config_quote(val, q));
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
    char label[CFG_NAME_MAX + 32], q[DAL_CFG_QUOTE_SIZE];

    section_label(ps->sec, ps->sec_name, label, sizeof label);
    return cfg_fail(ps, ps->line, DAL_ECONFIG, "unknown key '%s' in %s", dal_config_quote(key, q), label);
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
                        dal_config_quote(key, q), first);
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
 * Append a zeroed element to the array *arr of *n elements and count it;
 * NULL if out of memory.  The capacity follows from n: the array doubles
 * whenever n reaches a power of two, so no array needs a capacity field.
 * A counted element is freed by dal_config_free even if left half filled.
 */
static void *add_item(cfg_parser_t *ps, void **arr, size_t *n, size_t size)
{
    void *na;

    if ((*n & (*n - 1)) == 0) {   /* 0, 1, 2, 4, ...: full */
        na = realloc(*arr, (*n ? *n * 2 : 1) * size);
        if (na == NULL) {
            cfg_oom(ps);
            return NULL;
        }
        *arr = na;
    }
    na = (char *)*arr + *n * size;
    memset(na, 0, size);
    (*n)++;
    return na;
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

static int has_prefix(const char *key, const char *prefix)
{
    return strncmp(key, prefix, strlen(prefix)) == 0;
}

/*
 * Keep "key = value" for a plugin in pp (taking *val).  The parameter's
 * name is key without its first skip characters ("strategy.").
 */
static int add_param(cfg_parser_t *ps, dal_cfg_params_t *pp, const char *key, size_t skip,
                     int (*ok)(int), const char *rule, char **val)
{
    const char *name = key + skip;
    char qk[DAL_CFG_QUOTE_SIZE], qn[DAL_CFG_QUOTE_SIZE];
    dal_cfg_param_t *p;

    if (!name_ok(name, ok))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: bad parameter name '%s' (%s, at most %d characters)",
                        dal_config_quote(key, qk), dal_config_quote(name, qn), rule, CFG_NAME_MAX);
    p = add_item(ps, (void **)&pp->items, &pp->n, sizeof *p);
    if (p == NULL)
        return ps->rc;
    p->line = ps->line;
    p->name = strdup(name);
    if (p->name == NULL)
        return cfg_oom(ps);
    p->value = *val;
    *val = NULL;
    return 0;
}

/* "pool.PARAM = value", in [dal] and [datasource NAME]. */
static int pool_param(cfg_parser_t *ps, dal_cfg_params_t *pp, const char *key, char **val)
{
    return add_param(ps, pp, key, strlen("pool."), param_char, WORD_RULE, val);
}

/* ------------------------------------------------------------- [dal] */

static int dal_section_taken(const cfg_parser_t *ps, const char *name)
{
    (void)name;
    return ps->dal_line;
}

static int dal_section_begin(cfg_parser_t *ps, const char *name)
{
    (void)name;
    ps->dal_line = ps->line;
    ps->sec_name = "";
    return 0;
}

static int dal_section_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_config_t *cfg = ps->cfg;

    if (strcmp(key, "plugin_dir") == 0)
        return take_name(ps, key, val, NULL, NULL, &cfg->plugin_dir, &cfg->plugin_dir_line);
    if (strcmp(key, "default_datasource") == 0)
        return take_name(ps, key, val, ds_char, DS_RULE, &cfg->default_datasource,
                         &cfg->default_datasource_line);
    if (strcmp(key, "max_parallel") == 0)
        return take_count(ps, key, *val, CFG_PARALLEL_MAX, &cfg->max_parallel);
    if (strcmp(key, "watch") == 0)
        return take_bool(ps, key, *val, &cfg->watch);
    if (strcmp(key, "validate_connect") == 0)
        return take_bool(ps, key, *val, &cfg->validate_connect);
    if (strcmp(key, "allow_reshard") == 0)
        return take_bool(ps, key, *val, &cfg->allow_reshard);
    if (strcmp(key, "pool") == 0)
        return take_name(ps, key, val, plugin_char, PLUGIN_RULE, &cfg->pool, &cfg->pool_line);
    if (has_prefix(key, "pool."))
        return pool_param(ps, &cfg->pool_params, key, val);
    return unknown_key(ps, key);
}

/* ------------------------------------------------------ [datasource NAME] */

static dal_cfg_datasource_t *cur_ds(cfg_parser_t *ps)
{
    return &ps->cfg->datasources[ps->cfg->ndatasources - 1];
}

static int ds_taken(const cfg_parser_t *ps, const char *name)
{
    const dal_cfg_datasource_t *old = dal_config_datasource(ps->cfg, name);

    return old != NULL ? old->line : 0;
}

static int ds_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_datasource_t *ds = add_item(ps, (void **)&cfg->datasources, &cfg->ndatasources, sizeof *ds);

    if (ds == NULL || (ds->name = section_name(ps, name)) == NULL)
        return ps->rc;
    ds->line = ps->line;
    ds->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    ds->read_timeout_ms = DEFAULT_READ_TIMEOUT_MS;
    ds->load_balance = DAL_LB_ROUND_ROBIN;
    ds->max_replica_lag_ms = DEFAULT_REPLICA_LAG_MS;
    ds->health_check_ms = DEFAULT_HEALTH_CHECK_MS;
    ds->read_your_writes = 1;
    return 0;
}

static int ds_master(cfg_parser_t *ps, dal_cfg_datasource_t *ds, const char *val)
{
    char *weight = NULL;
    dal_error_t e;
    int rc;

    if (need_value(ps, "master", val) != 0)
        return ps->rc;
    /* Parsed with "weight" allowed only to say where it belongs. */
    rc = dal_url_parse_extra(val, "weight", &ds->master, &weight, &e);
    if (rc != 0)
        return cfg_fail(ps, ps->line, rc, "master: %s", e.message);
    ds->master_line = ps->line;
    if (weight != NULL) {
        free(weight);
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "master: option weight is only for replica URLs (replicas = URL?weight=N, ...)");
    }
    return 0;
}

/*
 * The comma that ends the first URL of a replica list: one followed by
 * blanks and a scheme.  Any other comma belongs to the URL, so a password
 * may hold one.
 */
static char *replica_separator(char *s)
{
    const char *next;
    char *c;

    for (c = strchr(s, ','); c != NULL; c = strchr(c + 1, ',')) {
        next = skip_blanks(c + 1);
        if (strncasecmp(next, "mysql://", 8) == 0 || strncasecmp(next, "mariadb://", 10) == 0)
            return c;
    }
    return NULL;
}

/*
 * Parse replica number pos (from 1) of ds.  Messages name it by position
 * only: its text holds a password.
 */
static int add_replica(cfg_parser_t *ps, dal_cfg_datasource_t *ds, size_t pos, const char *text)
{
    char what[48], weight_what[64], *weight = NULL;
    dal_cfg_replica_t *r;
    dal_error_t e;
    size_t len = strlen(text), i;
    int rc;

    snprintf(what, sizeof what, "replicas: replica %zu", pos);
    if (len == 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: empty (expected a URL)", what);
    /* "URL," at the end: dal_url_parse would take the ',' into the database name. */
    if (text[len - 1] == ',')
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "%s: ends with ',' (a ',' must be followed by another URL; write %%2C for a ',' inside a URL)",
                        what);
    r = add_item(ps, (void **)&ds->replicas, &ds->nreplicas, sizeof *r);
    if (r == NULL)
        return ps->rc;
    rc = dal_url_parse_extra(text, "weight", &r->url, &weight, &e);
    if (rc != 0)
        return cfg_fail(ps, ps->line, rc, "%s: %s", what, e.message);
    r->weight = 1;
    snprintf(weight_what, sizeof weight_what, "%s: option weight", what);
    if (weight != NULL && take_count(ps, weight_what, weight, CFG_WEIGHT_MAX, &r->weight) != 0)
        goto done;
    for (i = 0; i + 1 < ds->nreplicas; i++)
        if (dal_url_equal(&ds->replicas[i].url, &r->url))
            break;
    if (i + 1 < ds->nreplicas)
        cfg_fail(ps, ps->line, DAL_ECONFIG, "%s: same server and settings as replica %zu", what, i + 1);
done:
    free(weight);
    return ps->rc;
}

/* replicas = URL, URL, ...: split in place (*val is ours to change). */
static int ds_replicas(cfg_parser_t *ps, dal_cfg_datasource_t *ds, char *val)
{
    char *url = val, *comma, *end;
    size_t pos;

    if (need_value(ps, "replicas", val) != 0)
        return ps->rc;
    for (pos = 1; url != NULL; pos++) {
        comma = replica_separator(url);
        end = comma != NULL ? comma : url + strlen(url);
        while (end > url && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        *end = '\0';
        if (add_replica(ps, ds, pos, url) != 0)
            return ps->rc;
        url = comma != NULL ? (char *)skip_blanks(comma + 1) : NULL;
    }
    ds->replicas_line = ps->line;
    return 0;
}

static int ds_load_balance(cfg_parser_t *ps, dal_cfg_datasource_t *ds, const char *val)
{
    /* In the order of dal_lb_policy_t. */
    static const char *const policies[] = {"round_robin", "random", "weighted", "least_outstanding"};
    int i = word_index(val, policies, NELEM(policies));
    char q[DAL_CFG_QUOTE_SIZE];

    if (i < 0)
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "load_balance: expected round_robin, random, weighted or least_outstanding, got '%s'",
                        dal_config_quote(val, q));
    ds->load_balance = (dal_lb_policy_t)i;
    return 0;
}

/* read_your_writes = off | session | <duration> */
static int ds_read_your_writes(cfg_parser_t *ps, dal_cfg_datasource_t *ds, const char *val)
{
    static const char *const modes[] = {"off", "session"};   /* 0, 1 */
    int i = word_index(val, modes, NELEM(modes));
    char q[DAL_CFG_QUOTE_SIZE];

    if (i >= 0) {
        ds->read_your_writes = i;
        return 0;
    }
    /* Starts with a digit: meant as a window, so say what is wrong with it. */
    if (!isdigit((unsigned char)*skip_blanks(val)))
        return cfg_fail(ps, ps->line, DAL_ECONFIG,
                        "read_your_writes: expected off, session or a duration such as 500ms or 2s, got '%s'",
                        dal_config_quote(val, q));
    ds->read_your_writes = 2;
    return take_timeout(ps, "read_your_writes", val, 0, &ds->ryw_window_ms);
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
    if (strcmp(key, "replicas") == 0)
        return ds_replicas(ps, ds, *val);
    if (strcmp(key, "load_balance") == 0)
        return ds_load_balance(ps, ds, *val);
    if (strcmp(key, "max_replica_lag") == 0)
        return take_timeout(ps, key, *val, 1, &ds->max_replica_lag_ms);
    if (strcmp(key, "health_check_interval") == 0)
        return take_timeout(ps, key, *val, 0, &ds->health_check_ms);
    if (strcmp(key, "read_your_writes") == 0)
        return ds_read_your_writes(ps, ds, *val);
    if (has_prefix(key, "pool."))
        return pool_param(ps, &ds->pool_params, key, val);
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

/* The keys that give a table shards, besides db_shard_num and strategy.*. */
static const char *const shard_keys[] = {"table_shard_num", "shard_key", "strategy"};

static dal_cfg_table_t *cur_table(cfg_parser_t *ps)
{
    return &ps->cfg->tables[ps->cfg->ntables - 1];
}

static int table_taken(const cfg_parser_t *ps, const char *name)
{
    const dal_cfg_table_t *old = dal_config_table(ps->cfg, name);

    return old != NULL ? old->line : 0;
}

static int table_begin(cfg_parser_t *ps, const char *name)
{
    dal_config_t *cfg = ps->cfg;
    dal_cfg_table_t *t = add_item(ps, (void **)&cfg->tables, &cfg->ntables, sizeof *t);

    if (t == NULL || (t->name = section_name(ps, name)) == NULL)
        return ps->rc;
    t->line = ps->line;
    t->db_shard_num = 1;
    t->table_shard_num = 1;
    t->kind = DAL_TABLE_SINGLE;   /* table_finish decides */
    t->allow_scatter = 1;
    return 0;
}

static int table_broadcast(cfg_parser_t *ps, dal_cfg_table_t *t, const char *val)
{
    int on;

    if (take_bool(ps, "broadcast", val, &on) != 0)
        return ps->rc;
    if (on)
        t->kind = DAL_TABLE_BROADCAST;
    return 0;
}

static int table_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_cfg_table_t *t = cur_table(ps);

    if (strcmp(key, "datasource") == 0)
        return take_name(ps, key, val, ds_char, DS_RULE, &t->datasource, &t->datasource_line);
    if (strcmp(key, "db_shard_num") == 0)
        return take_count(ps, key, *val, CFG_SHARD_MAX, &t->db_shard_num);
    if (strcmp(key, "table_shard_num") == 0)
        return take_count(ps, key, *val, CFG_SHARD_MAX, &t->table_shard_num);
    if (strcmp(key, "shard_key") == 0)
        return take_name(ps, key, val, table_char, COLUMN_RULE, &t->shard_key, NULL);
    if (strcmp(key, "strategy") == 0)
        return take_name(ps, key, val, plugin_char, PLUGIN_RULE, &t->strategy, &t->strategy_line);
    if (has_prefix(key, "strategy."))
        return add_param(ps, &t->strategy_params, key, strlen("strategy."), param_char, WORD_RULE, val);
    if (strcmp(key, "broadcast") == 0)
        return table_broadcast(ps, t, *val);
    if (strcmp(key, "allow_scatter") == 0)
        return take_bool(ps, key, *val, &t->allow_scatter);
    if (strcmp(key, "binding") == 0)
        return take_name(ps, key, val, param_char, WORD_RULE, &t->binding, &t->binding_line);
    if (strcmp(key, "id_column") == 0)
        return take_name(ps, key, val, table_char, COLUMN_RULE, &t->id_column, NULL);
    if (strcmp(key, "idgen") == 0)
        return take_name(ps, key, val, ds_char, DS_RULE, &t->idgen, &t->idgen_line);
    return unknown_key(ps, key);
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

    if (t->datasource == NULL)
        cfg_fail(ps, t->line, DAL_ECONFIG, "[table %s] has no datasource (add: datasource = NAME)", t->name);
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

/* Both hold a plugin name and that plugin's parameters: every other key. */
static int plugin_key(cfg_parser_t *ps, const char *key, char **val, char **plugin, int *plugin_line,
                      dal_cfg_params_t *params)
{
    if (strcmp(key, "plugin") == 0)
        return take_name(ps, key, val, plugin_char, PLUGIN_RULE, plugin, plugin_line);
    return add_param(ps, params, key, 0, plugin_char, LOWER_RULE, val);
}

static const dal_cfg_idgen_t *find_idgen(const dal_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->nidgens; i++)
        if (strcmp(cfg->idgens[i].name, name) == 0)
            return &cfg->idgens[i];
    return NULL;
}

static dal_cfg_idgen_t *cur_idgen(cfg_parser_t *ps)
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
    return 0;
}

static int idgen_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_cfg_idgen_t *g = cur_idgen(ps);

    return plugin_key(ps, key, val, &g->plugin, &g->plugin_line, &g->params);
}

static int idgen_finish(cfg_parser_t *ps)
{
    const dal_cfg_idgen_t *g = cur_idgen(ps);

    if (g->plugin == NULL)
        return cfg_fail(ps, g->line, DAL_ECONFIG, "[idgen %s] has no plugin (add: plugin = NAME, e.g. plugin = leaf)",
                        g->name);
    return 0;
}

static dal_cfg_monitor_t *cur_monitor(cfg_parser_t *ps)
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
    m->enabled = 1;
    return 0;
}

static int monitor_key(cfg_parser_t *ps, const char *key, char **val)
{
    dal_cfg_monitor_t *m = cur_monitor(ps);

    if (strcmp(key, "enabled") == 0)
        return take_bool(ps, key, *val, &m->enabled);
    return plugin_key(ps, key, val, &m->plugin, &m->plugin_line, &m->params);
}

/* Without plugin = NAME, the section's name is the plugin's: [monitor prometheus]. */
static int monitor_finish(cfg_parser_t *ps)
{
    dal_cfg_monitor_t *m = cur_monitor(ps);

    if (m->plugin != NULL)
        return 0;
    if (!name_ok(m->name, plugin_char))
        return cfg_fail(ps, m->line, DAL_ECONFIG,
                        "[monitor %s] has no plugin, and '%s' is not a plugin name (%s); add: plugin = NAME",
                        m->name, m->name, LOWER_RULE);
    m->plugin = strdup(m->name);
    if (m->plugin == NULL)
        return cfg_oom(ps);
    m->plugin_line = m->line;
    return 0;
}

/* ------------------------------------------------------------ sections */

static const section_kind_t sections[] = {
    {"dal", 0, NULL, NULL, dal_section_taken, dal_section_begin, dal_section_key, NULL},
    {"datasource", 1, ds_char, DS_RULE, ds_taken, ds_begin, ds_key, ds_finish},
    {"table", 1, table_char, TABLE_RULE, table_taken, table_begin, table_key, table_finish},
    {"idgen", 1, ds_char, DS_RULE, idgen_taken, idgen_begin, idgen_key, idgen_finish},
    {"monitor", 1, ds_char, DS_RULE, monitor_taken, monitor_begin, monitor_key, monitor_finish},
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
    const section_kind_t *kind = NULL;
    char label[CFG_NAME_MAX + 32], q[DAL_CFG_QUOTE_SIZE];
    size_t i;
    int first;

    for (i = 0; i < NELEM(sections) && kind == NULL; i++)
        if (strlen(sections[i].word) == wlen && strncmp(inner, sections[i].word, wlen) == 0)
            kind = &sections[i];
    if (kind == NULL)
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "unknown section [%s] (expected " SECTION_LIST ")",
                        dal_config_quote(inner, q));
    if (kind->named && *name == '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "section [%s] needs a name: [%s NAME]", kind->word, kind->word);
    if (!kind->named && *name != '\0')
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "section [%s] takes no name", kind->word);
    if (kind->named && !name_ok(name, kind->name_char))
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "bad %s name '%s' (%s, at most %d characters)",
                        kind->word, dal_config_quote(name, q), kind->name_rule, CFG_NAME_MAX);
    first = kind->taken(ps, name);
    if (first != 0) {
        section_label(kind, name, label, sizeof label);
        return cfg_fail(ps, ps->line, DAL_ECONFIG, "duplicate section %s (first at line %d)", label, first);
    }
    if (kind->begin(ps, name) != 0)
        return ps->rc;
    ps->sec = kind;
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
    char *val = NULL, q[DAL_CFG_QUOTE_SIZE];
    dal_error_t e;
    int rc;

    (void)section;   /* truncated by inih; ps->sec is the real one */
    if (ps->rc != 0)
        goto done;
    if (ps->sec == NULL) {
        cfg_fail(ps, ps->line, DAL_ECONFIG,
                 "key '%s' is outside any section (put it under " SECTION_LIST ")",
                 dal_config_quote(key, q));
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
        cfg_fail(ps, ps->line, rc, "%s: %s", dal_config_quote(key, q), e.message);
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
                            dal_config_quote(p->value, qp), dal_config_quote(q->value, qq));
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
    check_table_refs(ps, sorted);
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

static dal_config_t *new_config(const char *path)
{
    dal_config_t *cfg = calloc(1, sizeof *cfg);

    if (cfg == NULL)
        return NULL;
    atomic_init(&cfg->refs, 1);
    cfg->path = strdup(path);
    if (cfg->path == NULL) {
        free(cfg);
        return NULL;
    }
    cfg->max_parallel = DEFAULT_MAX_PARALLEL;
    return cfg;
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
    ps.cfg = new_config(path);
    if (ps.cfg == NULL)
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
    dal_url_clear(&ds->master);
    for (i = 0; i < ds->nreplicas; i++)
        dal_url_clear(&ds->replicas[i].url);
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
    free(t->idgen);
}

dal_config_t *dal_config_ref(dal_config_t *cfg)
{
    atomic_fetch_add(&cfg->refs, 1);
    return cfg;
}

void dal_config_free(dal_config_t *cfg)
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
    for (i = 0; i < cfg->nmonitors; i++) {
        free(cfg->monitors[i].name);
        free(cfg->monitors[i].plugin);
        free_params(&cfg->monitors[i].params);
    }
    free(cfg->monitors);
    free(cfg->path);
    free(cfg->plugin_dir);
    free(cfg->default_datasource);
    free(cfg->pool);
    free_params(&cfg->pool_params);
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
