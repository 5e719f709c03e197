/*
 * config_keys.c -- every key of the INI file, as data, and the conversions
 * that read a key through its row.
 *
 * A key is one row of its section's table (the row's fields are described
 * in config.h).  Most rows need no code at all: their type's conversion
 * checks the value against the row's range, words or name rule and stores
 * it at the row's offset.  A key whose value is more than one field
 * (master, replicas, broadcast) names a small setter instead.  Defaults are
 * INI text converted like a value from the file, so the default the docs
 * print is the one the code uses.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "parse.h"
#include "error.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define CFG_SHARD_MAX 1048576    /* db_shard_num, table_shard_num */
#define CFG_PARALLEL_MAX 256     /* max_parallel */
#define CFG_SPREP_CACHE_MAX 4096 /* server_prepare_cache */
#define CFG_WEIGHT_MAX 1000      /* the weight option of a replica URL */
#define CFG_MS_MAX ((int64_t)UINT32_MAX)   /* durations are kept in uint32_t ms */

/* ---------------------------------------------------------- name rules */

static int ds_char(int c)     { return isalnum(c) || c == '_' || c == '.' || c == '-'; }
static int table_char(int c)  { return isalnum(c) || c == '_' || c == '$'; }
static int plugin_char(int c) { return islower(c) || isdigit(c) || c == '_'; }
static int word_char(int c)   { return isalnum(c) || c == '_'; }

#define TABLE_RULE "letters, digits, '_', '$'"
#define LOWER_RULE "lower-case letters, digits, '_'"

const dal_cfg_rule_t dal_cfg_rule_ds = {ds_char, "letters, digits, '_', '.', '-'"};
const dal_cfg_rule_t dal_cfg_rule_table = {table_char, TABLE_RULE};
const dal_cfg_rule_t dal_cfg_rule_column = {table_char, "a column name: " TABLE_RULE};
const dal_cfg_rule_t dal_cfg_rule_plugin = {plugin_char, "a plugin name: " LOWER_RULE};
const dal_cfg_rule_t dal_cfg_rule_lower = {plugin_char, LOWER_RULE};
const dal_cfg_rule_t dal_cfg_rule_word = {word_char, "letters, digits, '_'"};

int cfg_name_ok(const char *s, const dal_cfg_rule_t *rule)
{
    size_t n;

    for (n = 0; s[n] != '\0'; n++)
        if (!rule->ok((unsigned char)s[n]))
            return 0;
    return n > 0 && n <= DAL_CFG_NAME_MAX;
}

/* ------------------------------------------------------------- helpers */

void *cfg_add_item(void **arr, size_t *n, size_t size)
{
    void *na;

    if ((*n & (*n - 1)) == 0) {   /* 0, 1, 2, 4, ...: full */
        na = realloc(*arr, (*n ? *n * 2 : 1) * size);
        if (na == NULL)
            return NULL;
        *arr = na;
    }
    na = (char *)*arr + *n * size;
    memset(na, 0, size);
    (*n)++;
    return na;
}

#define FIELD(obj, off, type) ((type *)((char *)(obj) + (off)))
#define CFIELD(obj, off, type) ((const type *)((const char *)(obj) + (off)))

static int bad(dal_cfg_value_t *v, const char *fmt, ...) DAL_PRINTF(2, 3);

/* Fill v->err with DAL_ECONFIG and a message; returns DAL_ECONFIG. */
static int bad(dal_cfg_value_t *v, const char *fmt, ...)
{
    char msg[DAL_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(v->err, DAL_ECONFIG, "%s", msg);
}

static int oom(dal_cfg_value_t *v)
{
    return err_set(v->err, DAL_ENOMEM, "out of memory");
}

/* Index of text among the NULL-terminated words (any case); -1 if none. */
static int word_index(const char *text, const char *const *words)
{
    int i;

    for (i = 0; words[i] != NULL; i++)
        if (strcasecmp(text, words[i]) == 0)
            return i;
    return -1;
}

/* "a, b" + last + "c" into buf, for messages. */
static const char *word_list(const char *const *words, const char *last, char *buf, size_t size)
{
    size_t len = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; words[i] != NULL && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                i == 0 ? "" : words[i + 1] == NULL ? last : ", ", words[i]);
    return buf;
}

/* A whole number min..max (min >= 1); what names it in messages. */
static int take_count(dal_cfg_value_t *v, const char *what, const char *text, int64_t min, int64_t max,
                      uint32_t *out)
{
    const char *p = parse_skip_blanks(text);
    char q[DAL_CFG_QUOTE_SIZE];
    int64_t n = 0;
    int parsed = parse_int64(text, &n) == 0;

    if (parsed && n >= min && n <= max) {
        *out = (uint32_t)n;
        return 0;
    }
    while (isdigit((unsigned char)*p))
        p++;
    /* Only digits, yet not a good count: too big for the limit or for int64. */
    if (isdigit((unsigned char)*parse_skip_blanks(text)) && *parse_skip_blanks(p) == '\0' && (!parsed || n > 0))
        return bad(v, "%s: %s is out of range (%lld..%lld)", what, config_quote(text, q),
                   (long long)min, (long long)max);
    return bad(v, "%s: expected a %s integer, got '%s'", what, min > 0 ? "positive" : "non-negative",
               config_quote(text, q));
}

/* A size in bytes: digits, then K, M or G (1024-based, optionally KiB,
 * MiB, GiB, any case), min..max bytes once multiplied: uint32_t. */
static int set_bytes(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    static const char units[] = "KMG";
    const char *p = parse_skip_blanks(v->text), *u;
    char q[DAL_CFG_QUOTE_SIZE];
    uint64_t n = 0;
    int shift = 0;

    if (!isdigit((unsigned char)*p))
        return bad(v, "%s: expected a size in bytes such as 65536, 64K or 64M, got '%s'",
                   v->key, config_quote(v->text, q));
    for (; isdigit((unsigned char)*p); p++) /* past UINT32_MAX: out of range, whatever follows */
        n = n > UINT32_MAX ? n : n * 10 + (uint64_t)(*p - '0');
    p = parse_skip_blanks(p);
    if (*p != '\0' && (u = strchr(units, toupper((unsigned char)*p))) != NULL) {
        shift = 10 * (int)(u - units + 1);
        p++;
        if ((p[0] == 'i' || p[0] == 'I') && (p[1] == 'b' || p[1] == 'B'))
            p += 2;
    }
    if (*parse_skip_blanks(p) != '\0')
        return bad(v, "%s: expected a size in bytes such as 65536, 64K or 64M, got '%s'",
                   v->key, config_quote(v->text, q));
    if (n > UINT32_MAX || (n << shift) < (uint64_t)k->min || (n << shift) > (uint64_t)k->max)
        return bad(v, "%s: %s is out of range (%lld..%lld bytes)", v->key,
                   config_quote(v->text, q), (long long)k->min, (long long)k->max);
    *FIELD(obj, k->offset, uint32_t) = (uint32_t)(n << shift);
    return 0;
}

static int take_bool(dal_cfg_value_t *v, int *out)
{
    char q[DAL_CFG_QUOTE_SIZE];

    if (parse_bool(v->text, out) != 0)
        return bad(v, "%s: expected true or false, got '%s'", v->key, config_quote(v->text, q));
    return 0;
}

/* A duration of min..max milliseconds (max at most UINT32_MAX). */
static int take_duration(dal_cfg_value_t *v, int64_t min, int64_t max, uint32_t *out)
{
    char q[DAL_CFG_QUOTE_SIZE];
    int64_t ms;

    if (parse_duration_ms(v->text, &ms) != 0)
        return bad(v, "%s: expected a duration such as 250ms, 5s, 2m or 1h, got '%s'",
                   v->key, config_quote(v->text, q));
    if (ms < min && min <= 1)
        return bad(v, "%s: must be greater than 0", v->key);
    if (ms < min)
        return bad(v, "%s: must be at least %lldms", v->key, (long long)min);
    if (ms > max)
        return bad(v, "%s: too long (at most %lldms)", v->key, (long long)max);
    *out = (uint32_t)ms;
    return 0;
}

static int need_value(dal_cfg_value_t *v)
{
    if (v->text[0] == '\0')
        return bad(v, "%s: empty value", v->key);
    return 0;
}

/* ------------------------------------------------- conversions by type */

static int set_string(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    char q[DAL_CFG_QUOTE_SIZE];
    char **slot = FIELD(obj, k->offset, char *);

    if (need_value(v) != 0)
        return v->err->code;
    if (k->rule != NULL && !cfg_name_ok(v->text, k->rule))
        return bad(v, "%s: '%s' is not a valid name (%s, at most %d characters)",
                   v->key, config_quote(v->text, q), k->rule->text, DAL_CFG_NAME_MAX);
    free(*slot);
    *slot = v->text;
    v->text = NULL;
    return 0;
}

/* A PEM file is small; a bound keeps a path such as /dev/zero finite. */
#define PEM_READ_MAX (1024 * 1024)

/* Whether the file at fp has a PEM block whose label ends with what
 * ("-----BEGIN RSA PRIVATE KEY-----" for "PRIVATE KEY") in its first
 * PEM_READ_MAX bytes. */
static int has_pem_block(FILE *fp, const char *what)
{
    char line[256];
    size_t n = strlen(what), total = 0;

    while (total < PEM_READ_MAX && fgets(line, sizeof line, fp) != NULL) {
        total += strlen(line) + 1;
        const char *end;
        if (strncmp(line, "-----BEGIN ", 11) != 0 || (end = strstr(line + 11, "-----")) == NULL)
            continue;
        if ((size_t)(end - (line + 11)) >= n && strncmp(end - n, what, n) == 0)
            return 1;
    }
    return 0;
}

/* A PEM file dal-proxy will read: readable now, with a block of the kind
 * the key names, so `dal check` finds a wrong or unreadable path at its
 * line.  Whether the certificate and the key make a pair is checked by
 * dal-proxy, which links the TLS library. */
static int set_pem_file(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v, const char *what)
{
    char q[DAL_CFG_QUOTE_SIZE];
    struct stat st;
    FILE *fp;
    int fd, found;

    if (need_value(v) != 0)
        return v->err->code;
    /* non-blocking: a FIFO must not stop the check */
    if ((fd = open(v->text, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return bad(v, "%s: cannot read '%s': %s", v->key, config_quote(v->text, q),
                   strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (fp = fdopen(fd, "r")) == NULL) {
        close(fd);
        return bad(v, "%s: '%s' is not a regular file", v->key, config_quote(v->text, q));
    }
    found = has_pem_block(fp, what);
    fclose(fp);
    if (!found)
        return bad(v, "%s: '%s' holds no PEM %s", v->key, config_quote(v->text, q),
                   strcmp(what, "CERTIFICATE") == 0 ? "certificate" : "private key");
    return set_string(k, obj, v);
}

static int set_tls_cert(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    return set_pem_file(k, obj, v, "CERTIFICATE");
}

static int set_tls_key(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    return set_pem_file(k, obj, v, "PRIVATE KEY");
}

static int set_enum(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    char q[DAL_CFG_QUOTE_SIZE], list[256];
    int i = word_index(v->text, k->words);

    if (i < 0)
        return bad(v, "%s: expected %s, got '%s'", v->key, word_list(k->words, " or ", list, sizeof list),
                   config_quote(v->text, q));
    *FIELD(obj, k->offset, int) = i;
    return 0;
}

/* One of the words, or a duration: the mode after the last word, with a window. */
static int set_mode(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    char q[DAL_CFG_QUOTE_SIZE], list[256];
    int i = word_index(v->text, k->words);

    if (i >= 0) {
        *FIELD(obj, k->offset, int) = i;
        return 0;
    }
    /* Starts with a digit: meant as a duration, so say what is wrong with it. */
    if (!isdigit((unsigned char)*parse_skip_blanks(v->text)))
        return bad(v, "%s: expected %s or a duration such as 500ms or 2s, got '%s'", v->key,
                   word_list(k->words, ", ", list, sizeof list), config_quote(v->text, q));
    for (i = 0; k->words[i] != NULL; i++)
        ;
    *FIELD(obj, k->offset, int) = i;
    return take_duration(v, k->min, k->max, FIELD(obj, k->aux, uint32_t));
}

/* "PREFIX.PARAM = value" kept for a plugin, taking the value. */
static int set_param(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    dal_cfg_params_t *pp = FIELD(obj, k->offset, dal_cfg_params_t);
    const char *name = v->key + strlen(k->name);
    char qk[DAL_CFG_QUOTE_SIZE], qn[DAL_CFG_QUOTE_SIZE];
    dal_cfg_param_t *p;

    if (!cfg_name_ok(name, k->rule))
        return bad(v, "%s: bad parameter name '%s' (%s, at most %d characters)",
                   config_quote(v->key, qk), config_quote(name, qn), k->rule->text, DAL_CFG_NAME_MAX);
    p = cfg_add_item((void **)&pp->items, &pp->n, sizeof *p);
    if (p == NULL)
        return oom(v);
    p->line = v->line;
    p->name = strdup(name);
    if (p->name == NULL)
        return oom(v);
    p->value = v->text;
    v->text = NULL;
    return 0;
}

static int convert(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    int on;

    if (k->set != NULL)
        return k->set(k, obj, v);
    switch (k->type) {
    case DAL_CFG_STRING:
        return set_string(k, obj, v);
    case DAL_CFG_COUNT:
        return take_count(v, v->key, v->text, k->min, k->max, FIELD(obj, k->offset, uint32_t));
    case DAL_CFG_BOOL:
        if (take_bool(v, &on) != 0)
            return v->err->code;
        *FIELD(obj, k->offset, int) = on;
        return 0;
    case DAL_CFG_DURATION:
        return take_duration(v, k->min, k->max, FIELD(obj, k->offset, uint32_t));
    case DAL_CFG_ENUM:
        return set_enum(k, obj, v);
    case DAL_CFG_MODE:
        return set_mode(k, obj, v);
    case DAL_CFG_PARAMS:
        return set_param(k, obj, v);
    case DAL_CFG_URL:
    case DAL_CFG_URL_LIST:
        break;   /* always through a setter */
    }
    return err_set(v->err, DAL_EINVAL, "%s: key has no setter", v->key);   /* a bad row */
}

int cfg_key_set(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    int rc = convert(k, obj, v);

    if (rc == 0 && k->line != 0)
        *FIELD(obj, k->line, int) = v->line;
    return rc;
}

/* ms as the file would write it: "250ms", "5s" */
static const char *duration_text(uint32_t ms, char *buf, size_t n)
{
    if (ms % 1000 == 0)
        snprintf(buf, n, "%us", ms / 1000);
    else
        snprintf(buf, n, "%ums", ms);
    return buf;
}

const char *cfg_key_text(const dal_cfg_key_t *k, const void *obj, char *buf, size_t n)
{
    const char *const *w = k->words;
    const char *str;
    int i;

    if (k->set != NULL && k->type != DAL_CFG_STRING && k->set != set_bytes)
        return NULL; /* a size is stored as a count of bytes */
    switch (k->type) {
    case DAL_CFG_STRING:
        str = *CFIELD(obj, k->offset, char *);
        return str == NULL ? "(none)" : config_quote(str, buf);
    case DAL_CFG_COUNT:
        snprintf(buf, n, "%u", *CFIELD(obj, k->offset, uint32_t));
        return buf;
    case DAL_CFG_BOOL:
        return *CFIELD(obj, k->offset, int) ? "true" : "false";
    case DAL_CFG_DURATION:
        return duration_text(*CFIELD(obj, k->offset, uint32_t), buf, n);
    case DAL_CFG_ENUM:
    case DAL_CFG_MODE:
        i = *CFIELD(obj, k->offset, int);
        while (i > 0 && *w != NULL) {
            w++;
            i--;
        }
        if (*w != NULL)
            return *w;
        return k->type == DAL_CFG_MODE ? duration_text(*CFIELD(obj, k->aux, uint32_t), buf, n)
                                       : NULL;
    case DAL_CFG_URL:
    case DAL_CFG_URL_LIST:
    case DAL_CFG_PARAMS:
        break;
    }
    return NULL;
}

const dal_cfg_key_t *cfg_key_find(const dal_cfg_key_t *keys, const char *key)
{
    const dal_cfg_key_t *k;

    for (k = keys; k->name != NULL; k++)
        if (k->type != DAL_CFG_PARAMS && strcmp(k->name, key) == 0)
            return k;
    for (k = keys; k->name != NULL; k++)
        if (k->type == DAL_CFG_PARAMS && strncmp(key, k->name, strlen(k->name)) == 0)
            return k;
    return NULL;
}

int cfg_key_defaults(const dal_cfg_key_t *keys, void *obj, dal_error_t *err)
{
    const dal_cfg_key_t *k;
    dal_cfg_value_t v;
    int rc;

    for (k = keys; k->name != NULL; k++) {
        if (k->def == NULL)
            continue;
        v.key = k->name;
        v.text = strdup(k->def);
        v.line = 0;
        v.err = err;
        if (v.text == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
        rc = cfg_key_set(k, obj, &v);
        free(v.text);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- setters */

static int set_master(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    dal_url_t *url = FIELD(obj, k->offset, dal_url_t);
    char *weight = NULL;
    dal_error_t e;
    int rc;

    if (need_value(v) != 0)
        return v->err->code;
    /* Parsed with "weight" allowed only to say where it belongs. */
    rc = url_parse_extra(v->text, "weight", url, &weight, &e);
    if (rc != 0)
        return err_set(v->err, rc, "%s: %s", v->key, e.message);
    if (weight != NULL) {
        free(weight);
        return bad(v, "%s: option weight is only for replica URLs (replicas = URL?weight=N, ...)", v->key);
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
        next = parse_skip_blanks(c + 1);
        if (strncasecmp(next, "mysql://", 8) == 0 || strncasecmp(next, "mariadb://", 10) == 0)
            return c;
    }
    return NULL;
}

/* Index of the first replica before the last one with the same URL; n - 1 if none. */
static size_t same_replica(const dal_cfg_datasource_t *ds)
{
    size_t i;

    for (i = 0; i + 1 < ds->nreplicas; i++)
        if (url_equal(&ds->replicas[i].url, &ds->replicas[ds->nreplicas - 1].url))
            break;
    return i;
}

/*
 * Parse replica number pos (from 1) of ds.  Messages name it by position
 * only: its text holds a password.
 */
static int add_replica(dal_cfg_value_t *v, dal_cfg_datasource_t *ds, size_t pos, const char *text)
{
    char what[48], weight_what[64], *weight = NULL;
    dal_cfg_replica_t *r;
    dal_error_t e;
    size_t len = strlen(text), i;
    int rc;

    snprintf(what, sizeof what, "%s: replica %zu", v->key, pos);
    if (len == 0)
        return bad(v, "%s: empty (expected a URL)", what);
    /* "URL," at the end: url_parse would take the ',' into the database name. */
    if (text[len - 1] == ',')
        return bad(v, "%s: ends with ',' (a ',' must be followed by another URL; write %%2C for a ',' inside a URL)",
                   what);
    r = cfg_add_item((void **)&ds->replicas, &ds->nreplicas, sizeof *r);
    if (r == NULL)
        return oom(v);
    rc = url_parse_extra(text, "weight", &r->url, &weight, &e);
    if (rc != 0)
        return err_set(v->err, rc, "%s: %s", what, e.message);
    r->weight = 1;
    snprintf(weight_what, sizeof weight_what, "%s: option weight", what);
    rc = weight == NULL ? 0 : take_count(v, weight_what, weight, 1, CFG_WEIGHT_MAX, &r->weight);
    free(weight);
    if (rc != 0)
        return rc;
    i = same_replica(ds);
    if (i + 1 < ds->nreplicas)
        return bad(v, "%s: same server and settings as replica %zu", what, i + 1);
    return 0;
}

/* replicas = URL, URL, ...: split in place (v->text is ours to change). */
static int set_replicas(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    dal_cfg_datasource_t *ds = obj;
    char *url = v->text, *comma, *end;
    size_t pos;
    int rc;

    (void)k;
    if (need_value(v) != 0)
        return v->err->code;
    for (pos = 1; url != NULL; pos++) {
        comma = replica_separator(url);
        end = comma != NULL ? comma : url + strlen(url);
        while (end > url && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        *end = '\0';
        rc = add_replica(v, ds, pos, url);
        if (rc != 0)
            return rc;
        url = comma != NULL ? (char *)parse_skip_blanks(comma + 1) : NULL;
    }
    return 0;
}

/* broadcast = true makes the table a broadcast table; false leaves it as it is. */
static int set_broadcast(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    int on;

    if (take_bool(v, &on) != 0)
        return v->err->code;
    if (on)
        *FIELD(obj, k->offset, dal_table_kind_t) = DAL_TABLE_BROADCAST;
    return 0;
}

/* lookup = COL, COL and lookup_unique = COL: the text is kept as written
 * (for messages and the docs) and each column becomes a dal_cfg_lookup_t. */
static int set_lookup(const dal_cfg_key_t *k, void *obj, dal_cfg_value_t *v)
{
    dal_cfg_table_t *t = obj;
    char **slot = FIELD(obj, k->offset, char *);
    char *p, *c, *next;
    size_t i;

    if (need_value(v) != 0)
        return v->err->code;
    free(*slot);
    if ((*slot = strdup(v->text)) == NULL)
        return oom(v);
    t->lookup_line = v->line;
    for (c = v->text; c != NULL; c = next) {
        dal_cfg_lookup_t *l;
        if ((next = strchr(c, ',')) != NULL)
            *next++ = '\0';
        c = (char *)parse_skip_blanks(c);
        for (p = c + strlen(c); p > c && (p[-1] == ' ' || p[-1] == '\t'); p--)
            p[-1] = '\0';
        if (!cfg_name_ok(c, &dal_cfg_rule_column))
            return bad(v, "%s: '%s' is not a column name (%s)", v->key, c,
                       dal_cfg_rule_column.text);
        for (i = 0; i < t->nlookups; i++)
            if (strcasecmp(t->lookups[i].column, c) == 0)
                return bad(v, "%s: column %s is listed twice (lookup and lookup_unique name "
                           "each column once)", v->key, c);
        if ((l = cfg_add_item((void **)&t->lookups, &t->nlookups, sizeof *l)) == NULL ||
            (l->column = strdup(c)) == NULL)
            return oom(v);
        l->unique = strcmp(k->name, "lookup_unique") == 0;
    }
    return 0;
}

/* ----------------------------------------------------------------- tables */

/* Enums stored through an int. */
_Static_assert(sizeof(dal_lb_policy_t) == sizeof(int), "load_balance is stored as an int");

/* In the order of dal_lb_policy_t. */
static const char *const lb_words[] = {"round_robin", "random", "weighted", "least_outstanding", NULL};
/* server_prepare: in the order of sprep.h's SPREP_AUTO, SPREP_OFF. */
static const char *const sprep_words[] = {"auto", "off", NULL};
/* read_your_writes: 0 off, 1 session, 2 (a duration) a window. */
static const char *const ryw_words[] = {"off", "session", NULL};
/* In the order of dal_txn_mode_t. */
static const char *const txn_words[] = {"single", "multi", "xa", NULL};
/* local_infile: 0 off, 1 on. */
static const char *const off_on_words[] = {"off", "on", NULL};
static const char *const users_words[] = {"config", "backend", NULL};

#define CFG(f) offsetof(dal_config_t, f)
#define DS(f) offsetof(dal_cfg_datasource_t, f)
#define TBL(f) offsetof(dal_cfg_table_t, f)
#define IDG(f) offsetof(dal_cfg_idgen_t, f)
#define MON(f) offsetof(dal_cfg_monitor_t, f)
#define PRX(f) offsetof(dal_cfg_proxy_t, f)
#define PUS(f) offsetof(dal_cfg_proxy_user_t, f)
#define SCH(f) offsetof(dal_cfg_schema_t, f)

/* Offset 0 means "none" in a row: no key may be stored in these. */
_Static_assert(CFG(refs) == 0 && DS(name) == 0 && TBL(name) == 0 && IDG(name) == 0 && MON(name) == 0 &&
                   PRX(line) == 0 && PUS(name) == 0 && SCH(name) == 0,
               "the first field of a section struct takes no key");

const dal_cfg_key_t dal_cfg_dal_keys[] = {
    {.name = "plugin_dir", .type = DAL_CFG_STRING, .offset = CFG(plugin_dir), .line = CFG(plugin_dir_line),
     .unset = "the directory compiled into the library (`pkg-config --variable=plugindir dal`)",
     .help = "directory (or `:`-separated directories) of the plugin `.so` files; relative to the INI file's directory"},
    {.name = "default_datasource", .type = DAL_CFG_STRING, .offset = CFG(default_datasource),
     .line = CFG(default_datasource_line), .rule = &dal_cfg_rule_ds, .unset = "none",
     .help = "name of a `[datasource]`"},
    {.name = "server_schemas", .type = DAL_CFG_STRING, .offset = CFG(server_schemas),
     .line = CFG(server_schemas_line), .rule = &dal_cfg_rule_ds,
     .unset = "`default_datasource` when it is set, else `none`",
     .help = "name of the `[datasource]` whose own databases a session may `USE` (and "
             "`dal_session_use_schema`) when no `[schema]` or `[proxy] database` has that name: "
             "its statements then run there as written, in that database, on a connection the "
             "session holds (docs/routing.md); `none`: such a name is refused (1049)"},
    {.name = "max_parallel", .type = DAL_CFG_COUNT, .offset = CFG(max_parallel), .def = "8",
     .min = 1, .max = CFG_PARALLEL_MAX, .help = "how many data nodes one statement uses at once"},
    {.name = "server_prepare", .type = DAL_CFG_ENUM, .offset = CFG(server_prepare),
     .line = CFG(server_prepare_line), .words = sprep_words, .def = "auto",
     .help = "`auto`: statements with `?` placeholders and `dal_prepare` handles run as "
             "server-side prepared statements on the backend connections (see "
             "docs/api.md); `off`: every statement is sent as text.  When the key is absent, "
             "the environment variable `DAL_SERVER_PREPARE` (`auto` or `off`) decides"},
    {.name = "server_prepare_cache", .type = DAL_CFG_COUNT, .offset = CFG(server_prepare_cache),
     .def = "64", .min = 1, .max = CFG_SPREP_CACHE_MAX,
     .help = "prepared statements kept per backend connection; when another is needed, the "
             "oldest one not run since it was last looked at is closed (second chance, close to "
             "least recently used)"},
    {.name = "sql_cache_bytes", .type = DAL_CFG_COUNT, .offset = CFG(sql_cache_bytes),
     .def = "64M", .min = 0, .max = UINT32_MAX, .set = set_bytes,
     .help = "bytes (or with K, M, G: KiB, MiB, GiB) the cache of analysed statements "
             "(shared by the threads, keyed by SQL text) may hold: each entry is counted "
             "as its analysis with its copy of the text, plus the text's length again for "
             "the normalised text monitors make of it; least recently used entries go "
             "first.  `0` keeps nothing.  The figures: `dal_sql_cache_stats()`, metric "
             "`dal_sql_cache_bytes`"},
    {.name = "sql_cache_max_statement", .type = DAL_CFG_COUNT,
     .offset = CFG(sql_cache_max_statement), .def = "64K", .min = 0, .max = UINT32_MAX,
     .set = set_bytes,
     .help = "bytes (or with K, M, G) of the longest statement text the analysis cache "
             "keeps; a longer one (a dump's multi-row INSERT) is analysed each time it "
             "runs and let go after it"},
    {.name = "sql_shape_cache", .type = DAL_CFG_BOOL, .offset = CFG(sql_shape_cache),
     .def = "true",
     .help = "text SELECT, UPDATE and DELETE statements that differ only in the literals "
             "they compare (`id = 5`, `IN (1, 2)`, `BETWEEN 1 AND 9`, `SET c = 5`; not in the "
             "select list, GROUP BY, ORDER BY, HAVING or LIMIT) share one analysis, made once "
             "for their shape with each such literal as a `?` and the literal bound as its "
             "value when one runs: routing takes each value as it takes the literal, and the "
             "SQL sent keeps the literals as written.  `false`: each text is analysed on its "
             "own"},
    {.name = "watch", .type = DAL_CFG_BOOL, .offset = CFG(watch), .def = "false",
     .help = "reload the file when it changes"},
    {.name = "validate_connect", .type = DAL_CFG_BOOL, .offset = CFG(validate_connect), .def = "false",
     .help = "a reload first connects to every datasource of the new file"},
    {.name = "allow_reshard", .type = DAL_CFG_BOOL, .offset = CFG(allow_reshard), .def = "false",
     .help = "a reload may change the shard layout of a table (`datasource`, `db_shard_num`, "
             "`table_shard_num`, `strategy`, `strategy.*`)"},
    {.name = "pool", .type = DAL_CFG_STRING, .offset = CFG(pool), .line = CFG(pool_line),
     .rule = &dal_cfg_rule_plugin, .unset = "none: the built-in connection cache",
     .help = "name of the connection pool plugin (`[a-z0-9_]+`; the file `pool_NAME.so`)"},
    {.name = "pool.", .type = DAL_CFG_PARAMS, .offset = CFG(pool_params), .rule = &dal_cfg_rule_word,
     .help = "parameter PARAM of the pool plugin, for every datasource"},
    {.name = "transaction_mode", .type = DAL_CFG_ENUM, .offset = CFG(transaction_mode), .words = txn_words,
     .def = "single",
     .help = "how a session's transactions span data nodes: `single` (one node), `multi` (a "
             "transaction per node, committed in turn), `xa` (two-phase commit; needs `xa_log`); "
             "see docs/transactions.md"},
    {.name = "local_infile", .type = DAL_CFG_ENUM, .offset = CFG(local_infile), .words = off_on_words,
     .def = "off",
     .help = "whether dal reads the file a `LOAD DATA LOCAL INFILE` names when the session "
             "supplies no bytes itself (`dal_session_set_infile`, docs/api.md): `off` refuses the "
             "statement with error 4166 and opens nothing; `on` reads the file from dal's own file "
             "system, for a program that trusts every statement's author with every file it may "
             "read"},
    {.name = "xa_log", .type = DAL_CFG_STRING, .offset = CFG(xa_log), .line = CFG(xa_log_line),
     .rule = &dal_cfg_rule_ds, .unset = "none",
     .help = "name of the `[datasource]` holding the XA decision log (`dal xa init` creates it)"},
    {.name = "xa_grace", .type = DAL_CFG_DURATION, .offset = CFG(xa_grace_ms), .def = "60s",
     .min = 1, .max = CFG_MS_MAX,
     .help = "how long recovery leaves an XA branch without a decision to its coordinator, which may "
             "still be deciding, before rolling it back (at once when its coordinator is gone)"},
    {.name = "xa_recover_interval", .type = DAL_CFG_DURATION, .offset = CFG(xa_recover_interval_ms),
     .def = "30s", .min = 0, .max = CFG_MS_MAX,
     .help = "with `xa_log`: how often the holder of the recovery lease (one of the dal instances "
             "sharing the log) runs XA recovery, besides a pass when it takes the lease and when an "
             "instance dies; `0`: this instance never takes the lease"},
    {.name = "lookup_cache", .type = DAL_CFG_DURATION, .offset = CFG(lookup_cache_ms),
     .def = "0", .min = 0, .max = 60000,
     .help = "how long the answer of a lookup read (docs/lookup.md) is kept per value, in this "
             "process, for statements outside a transaction; this process's own writes of the "
             "value forget it at once, another instance's are seen once it expires; `0`: not kept"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_datasource_keys[] = {
    {.name = "master", .type = DAL_CFG_URL, .offset = DS(master), .line = DS(master_line), .set = set_master,
     .required = 1, .example = "mysql://USER:PASSWORD@HOST:PORT/DATABASE",
     .help = "URL of the server (see *URL syntax*)"},
    {.name = "connect_timeout", .type = DAL_CFG_DURATION, .offset = DS(connect_timeout_ms), .def = "5s",
     .min = 1, .max = CFG_MS_MAX},
    {.name = "read_timeout", .type = DAL_CFG_DURATION, .offset = DS(read_timeout_ms), .def = "30s",
     .min = 0, .max = CFG_MS_MAX, .help = "`0` means no limit"},
    {.name = "replicas", .type = DAL_CFG_URL_LIST, .line = DS(replicas_line), .set = set_replicas,
     .unset = "none", .help = "comma-separated URLs of the read replicas (see below)"},
    {.name = "load_balance", .type = DAL_CFG_ENUM, .offset = DS(load_balance), .words = lb_words,
     .def = "round_robin", .help = "how reads are spread over the replicas"},
    {.name = "max_replica_lag", .type = DAL_CFG_DURATION, .offset = DS(max_replica_lag_ms), .def = "5s",
     .min = 0, .max = CFG_MS_MAX,
     .help = "a replica further behind the master than this gets no reads; `0` means no limit"},
    {.name = "health_check_interval", .type = DAL_CFG_DURATION, .offset = DS(health_check_ms), .def = "1s",
     .min = 1, .max = CFG_MS_MAX, .help = "how often the replicas are checked"},
    {.name = "read_your_writes", .type = DAL_CFG_MODE, .offset = DS(read_your_writes), .aux = DS(ryw_window_ms),
     .words = ryw_words, .def = "session", .min = 1, .max = CFG_MS_MAX,
     .help = "what a reader that has just written may read (see below)"},
    {.name = "pool.", .type = DAL_CFG_PARAMS, .offset = DS(pool_params), .rule = &dal_cfg_rule_word,
     .help = "parameter PARAM of the pool plugin for this datasource; overrides `[dal]`'s `pool.PARAM`"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_table_keys[] = {
    {.name = "datasource", .type = DAL_CFG_STRING, .offset = TBL(datasource), .line = TBL(datasource_line),
     .rule = &dal_cfg_rule_ds, .required = 1, .example = "NAME",
     .help = "a datasource name (unsharded table) or a group prefix (sharded or broadcast table)"},
    {.name = "db_shard_num", .type = DAL_CFG_COUNT, .offset = TBL(db_shard_num), .def = "1",
     .min = 1, .max = CFG_SHARD_MAX,
     .help = "number of datasources the table is spread over (copied to, for a broadcast table)"},
    {.name = "table_shard_num", .type = DAL_CFG_COUNT, .offset = TBL(table_shard_num), .def = "1",
     .min = 1, .max = CFG_SHARD_MAX, .help = "total number of physical tables"},
    {.name = "shard_key", .type = DAL_CFG_STRING, .offset = TBL(shard_key), .rule = &dal_cfg_rule_column,
     .help = "name of the column whose value chooses the shard"},
    {.name = "strategy", .type = DAL_CFG_STRING, .offset = TBL(strategy), .line = TBL(strategy_line),
     .rule = &dal_cfg_rule_plugin,
     .help = "name of the shard strategy plugin (`[a-z0-9_]+`; the file `shard_NAME.so`)"},
    {.name = "strategy.", .type = DAL_CFG_PARAMS, .offset = TBL(strategy_params), .rule = &dal_cfg_rule_word,
     .help = "parameter PARAM of the strategy plugin"},
    {.name = "broadcast", .type = DAL_CFG_BOOL, .offset = TBL(kind), .set = set_broadcast, .def = "false",
     .help = "a full copy of the table on every node of the group"},
    {.name = "allow_scatter", .type = DAL_CFG_BOOL, .offset = TBL(allow_scatter), .def = "true",
     .help = "a statement without a usable shard key may run on every shard"},
    {.name = "binding", .type = DAL_CFG_STRING, .offset = TBL(binding), .line = TBL(binding_line),
     .rule = &dal_cfg_rule_word, .unset = "none",
     .help = "name of a binding group (letters, digits, `_`); sharded tables only"},
    {.name = "write_fence", .type = DAL_CFG_STRING, .offset = TBL(write_fence),
     .rule = &dal_cfg_rule_word, .unset = "none",
     .help = "GENERATION_BOUND, set and removed by `dal reshard switch`: writes to the table "
             "wait until a configuration without it is in force, and fail after BOUND ms"},
    {.name = "id_column", .type = DAL_CFG_STRING, .offset = TBL(id_column), .rule = &dal_cfg_rule_column,
     .unset = "none", .help = "column that gets a generated id on INSERT when the statement gives none"},
    {.name = "idgen", .type = DAL_CFG_STRING, .offset = TBL(idgen), .line = TBL(idgen_line),
     .rule = &dal_cfg_rule_ds, .unset = "none",
     .help = "name of the `[idgen NAME]` section that makes those ids"},
    {.name = "schema", .type = DAL_CFG_STRING, .offset = TBL(schema), .line = TBL(schema_line),
     .rule = &dal_cfg_rule_table, .unset = "the top level: `[proxy] database` (and libdal)",
     .help = "name of the `[schema NAME]` (logical database of dal-proxy) the table belongs to"},
    {.name = "lookup", .type = DAL_CFG_STRING, .offset = TBL(lookup), .set = set_lookup,
     .unset = "none",
     .help = "comma-separated columns read through a lookup table: `WHERE COL = v` or `COL IN "
             "(...)` goes to the shards the `[table NAME_lookup_COL]` names (docs/lookup.md)"},
    {.name = "lookup_unique", .type = DAL_CFG_STRING, .offset = TBL(lookup_unique),
     .set = set_lookup, .unset = "none",
     .help = "the same, for columns whose value is unique: the lookup table has a primary key on "
             "the column, so a duplicate is refused with the server's error 1062"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_schema_keys[] = {
    {.name = "default_datasource", .type = DAL_CFG_STRING, .offset = SCH(default_datasource),
     .line = SCH(default_datasource_line), .rule = &dal_cfg_rule_ds,
     .unset = "none: a table the schema does not declare is refused",
     .help = "name of the `[datasource]` that holds the tables of this schema no `[table]` "
             "declares (as `[dal] default_datasource` for the top level)"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_idgen_keys[] = {
    {.name = "plugin", .type = DAL_CFG_STRING, .offset = IDG(plugin), .line = IDG(plugin_line),
     .rule = &dal_cfg_rule_plugin, .required = 1, .example = "NAME, e.g. plugin = leaf",
     .help = "name of the idgen plugin (`[a-z0-9_]+`; the file `idgen_NAME.so`)"},
    {.name = "", .type = DAL_CFG_PARAMS, .offset = IDG(params), .rule = &dal_cfg_rule_lower,
     .help = "a parameter of that plugin"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_monitor_keys[] = {
    {.name = "plugin", .type = DAL_CFG_STRING, .offset = MON(plugin), .line = MON(plugin_line),
     .rule = &dal_cfg_rule_plugin, .unset = "NAME",
     .help = "name of the monitor plugin (`[a-z0-9_]+`; the file `monitor_NAME.so`)"},
    {.name = "enabled", .type = DAL_CFG_BOOL, .offset = MON(enabled), .def = "true",
     .help = "`false` keeps the section but does not load the plugin"},
    {.name = "", .type = DAL_CFG_PARAMS, .offset = MON(params), .rule = &dal_cfg_rule_lower,
     .help = "a parameter of that plugin, as in `[idgen]`"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_proxy_keys[] = {
    {.name = "listen", .type = DAL_CFG_STRING, .offset = PRX(listen), .line = PRX(listen_line),
     .def = "127.0.0.1:3307",
     .help = "where dal-proxy accepts clients: `HOST:PORT`, several separated by commas"},
    {.name = "database", .type = DAL_CFG_STRING, .offset = PRX(database), .def = "dal",
     .rule = &dal_cfg_rule_table,
     .help = "the schema clients connect to and `USE`: the top-level tables and "
             "`[dal] default_datasource`; each `[schema NAME]` adds one; another name is a "
             "database of `[dal] server_schemas`' datasource, or error 1049 without one"},
    {.name = "threads", .type = DAL_CFG_COUNT, .offset = PRX(threads), .def = "0", .min = 0,
     .max = 256, .help = "I/O threads; `0`: one per core"},
    {.name = "inline_io", .type = DAL_CFG_BOOL, .offset = PRX(inline_io), .def = "true",
     .help = "`true`: a statement runs on its client's I/O thread, its backend waits in that "
             "thread's event loop (a coroutine per running statement, at most 64 a thread; "
             "more wait for the workers); `false`: every statement runs on a worker thread"},
    {.name = "max_connections", .type = DAL_CFG_COUNT, .offset = PRX(max_connections),
     .def = "4096", .min = 1, .max = 1000000,
     .help = "client connections at once; one more gets error 1040"},
    {.name = "max_allowed_packet", .type = DAL_CFG_COUNT, .offset = PRX(max_allowed_packet),
     .def = "67108864", .min = 1024, .max = 1073741824,
     .help = "bytes one client packet (a statement, its parameters) may hold"},
    {.name = "connect_timeout", .type = DAL_CFG_DURATION, .offset = PRX(connect_timeout_ms),
     .def = "10s", .min = 1, .max = CFG_MS_MAX,
     .help = "time a client has from connecting to being authenticated; then it is closed "
             "(error 1043)"},
    {.name = "tls_cert", .type = DAL_CFG_STRING, .offset = PRX(tls_cert), .line = PRX(tls_cert_line),
     .set = set_tls_cert, .unset = "none: no TLS",
     .help = "PEM file of the certificate clients are offered (and its chain); with it, clients "
             "may start TLS"},
    {.name = "tls_key", .type = DAL_CFG_STRING, .offset = PRX(tls_key), .line = PRX(tls_key_line),
     .set = set_tls_key, .unset = "none", .help = "PEM file of that certificate's private key"},
    {.name = "require_tls", .type = DAL_CFG_BOOL, .offset = PRX(require_tls),
     .line = PRX(require_tls_line), .def = "false",
     .help = "`true`: a login without TLS gets error 3159 (needs `tls_cert`)"},
    {.name = "auth_delay_after", .type = DAL_CFG_COUNT, .offset = PRX(auth_delay_after),
     .def = "3", .min = 0, .max = 1000000,
     .help = "failed logins in a row from one client address after which the reply to each "
             "further login from it waits 1 s more per failure (as MySQL's connection_control); "
             "a success clears the address; `0`: never"},
    {.name = "auth_delay_max", .type = DAL_CFG_DURATION, .offset = PRX(auth_delay_max_ms),
     .def = "30s", .min = 0, .max = 3600000,
     .help = "the longest wait of `auth_delay_after`"},
    {.name = "users", .type = DAL_CFG_ENUM, .offset = PRX(users), .words = users_words,
     .def = "config",
     .help = "the accounts clients log in with: `config`, the `[proxy user]` sections; `backend`, "
             "those and the MariaDB accounts of `users_datasource` (`mysql.user`, "
             "mysql_native_password), read again after a failed login (at most once a second) "
             "and on reload, so `CREATE USER`, `ALTER USER` and `DROP USER` take effect; "
             "statements still run as the datasources' own accounts (docs/proxy.md)"},
    {.name = "users_datasource", .type = DAL_CFG_STRING, .offset = PRX(users_datasource),
     .line = PRX(users_datasource_line), .rule = &dal_cfg_rule_ds,
     .unset = "`[dal] default_datasource`, else the first datasource",
     .help = "with `users = backend`: the `[datasource]` whose master's accounts clients log in "
             "with"},
    {.name = NULL}
};

const dal_cfg_key_t dal_cfg_proxy_user_keys[] = {
    {.name = "password", .type = DAL_CFG_STRING, .offset = PUS(password),
     .line = PUS(password_line), .unset = "none",
     .help = "the user's password (`${VAR}` keeps it out of the file); it never appears in a "
             "message"},
    {.name = "password_hash", .type = DAL_CFG_STRING, .offset = PUS(password_hash),
     .line = PUS(password_hash_line), .unset = "none",
     .help = "instead of password: `*` and 40 hex digits, as `SELECT PASSWORD('...')` prints it "
             "(caching_sha2_password clients then need TLS, or are switched to native)"},
    {.name = NULL}
};

const dal_cfg_section_keys_t dal_cfg_sections[] = {
    {"dal", "[dal]", dal_cfg_dal_keys},
    {"datasource", "[datasource NAME]", dal_cfg_datasource_keys},
    {"table", "[table NAME]", dal_cfg_table_keys},
    {"idgen", "[idgen NAME]", dal_cfg_idgen_keys},
    {"monitor", "[monitor NAME]", dal_cfg_monitor_keys},
    {"proxy", "[proxy]", dal_cfg_proxy_keys},
    {"proxy user", "[proxy user NAME]", dal_cfg_proxy_user_keys},
    {"schema", "[schema NAME]", dal_cfg_schema_keys},
    {NULL, NULL, NULL}
};
