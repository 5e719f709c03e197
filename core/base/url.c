/*
 * url.c -- datasource URLs and ${VAR} expansion.
 *
 *   mysql://USER:PASSWORD@HOST:PORT/DATABASE?name=value&name=value
 *
 * The user:password part ends at the LAST '@' of the URL, so a password may
 * hold a raw '@', ':', '/' or '?' (only '%' must be escaped there).  The
 * price is that an '@' after the host (in an option value, say) must be
 * written %40.  The rule also gives the one property every message below
 * relies on: the password lies wholly before that '@', so text taken from
 * after it -- host, options -- can be quoted in messages, and text from
 * before it never is.  The port is never quoted either: in "root:secret/db"
 * (no '@') "secret" is parsed as a port.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "hex.h"
#include "parse.h"
#include "url.h"

#define URL_DEFAULT_HOST "127.0.0.1"
#define URL_DEFAULT_PORT 3306
#define URL_DEFAULT_CHARSET "utf8mb4"
#define URL_NAME_MAX 64   /* MySQL's limit for database names */
#define ENV_NAME_MAX 255

#define URL_FORM "mysql://USER:PASSWORD@HOST:PORT/DATABASE"

static int oom(dal_error_t *err)
{
    return err_set(err, DAL_ENOMEM, "out of memory");
}

/* ----------------------------------------------------- ${VAR} expansion */

/* A growable string just big enough for expansion; NUL-terminated. */
typedef struct strbuf {
    char *p;
    size_t len;
    size_t cap;
} strbuf_t;

static int sb_add(strbuf_t *b, const char *s, size_t n)
{
    char *np;
    size_t ncap;

    if (b->len + n + 1 > b->cap) {
        ncap = b->cap ? b->cap : 64;
        while (ncap < b->len + n + 1)
            ncap *= 2;
        np = realloc(b->p, ncap);
        if (np == NULL)
            return -1;
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static int env_name_ok(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n > ENV_NAME_MAX || isdigit((unsigned char)s[0]))
        return 0;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

/*
 * Expand one "${NAME}" starting at ref (which points at the '$').  *next is
 * set past the '}'.  The name is quoted in messages only once it is known to
 * be a well-formed name: a malformed reference may be a piece of a password
 * that happens to contain "${".
 */
static int expand_ref(strbuf_t *b, const char *ref, const char **next, dal_error_t *err)
{
    char name[ENV_NAME_MAX + 1];
    const char *close = strchr(ref + 2, '}');
    const char *val;
    size_t n;

    if (close == NULL)
        return err_set(err, DAL_ECONFIG, "unterminated '${' (missing '}'; write $$ for a literal '$')");
    n = (size_t)(close - (ref + 2));
    if (!env_name_ok(ref + 2, n))
        return err_set(err, DAL_ECONFIG,
                       "bad variable reference: ${...} must hold a name made of letters, digits and '_'");
    memcpy(name, ref + 2, n);
    name[n] = '\0';
    val = getenv(name);
    if (val == NULL)
        return err_set(err, DAL_ECONFIG, "environment variable '%s' is not set", name);
    if (sb_add(b, val, strlen(val)) != 0)
        return oom(err);
    *next = close + 1;
    return 0;
}

int expand_env(const char *text, char **out, dal_error_t *err)
{
    strbuf_t b = {NULL, 0, 0};
    const char *p = text;
    const char *dollar;
    int rc = 0;

    *out = NULL;
    if (sb_add(&b, "", 0) != 0) {   /* so that "" expands to "" */
        rc = oom(err);
        goto done;
    }
    while ((dollar = strchr(p, '$')) != NULL) {
        if (sb_add(&b, p, (size_t)(dollar - p)) != 0) {
            rc = oom(err);
            goto done;
        }
        if (dollar[1] == '{') {
            rc = expand_ref(&b, dollar, &p, err);
            if (rc != 0)
                goto done;
            continue;
        }
        /* "$$" is one '$'; a '$' before anything else is kept as it is,
         * since passwords often contain one. */
        if (sb_add(&b, "$", 1) != 0) {
            rc = oom(err);
            goto done;
        }
        p = dollar + (dollar[1] == '$' ? 2 : 1);
    }
    if (sb_add(&b, p, strlen(p)) != 0) {
        rc = oom(err);
        goto done;
    }
    *out = b.p;
    b.p = NULL;
done:
    free(b.p);
    return rc;
}

/* ------------------------------------------------------------- decoding */


/*
 * Decode %XX escapes of [b, e) into a new string.  what names the part in
 * messages ("password"); secret parts are never quoted.
 */
static int decode(const char *b, const char *e, const char *what, int secret,
                  char **out, dal_error_t *err)
{
    char *s = malloc((size_t)(e - b) + 1);
    char *d = s;
    int hi, lo, rc = 0;

    if (s == NULL)
        return oom(err);
    for (; b < e; b++) {
        if (*b != '%') {
            *d++ = *b;
            continue;
        }
        hi = e - b > 1 ? hexval((unsigned char)b[1]) : -1;
        lo = e - b > 2 ? hexval((unsigned char)b[2]) : -1;
        if (hi < 0 || lo < 0) {
            if (secret)
                rc = err_set(err, DAL_ECONFIG, "bad %%-escape in the %s: '%%' must be followed by two hex digits (write %%25 for '%%')", what);
            else
                rc = err_set(err, DAL_ECONFIG, "bad %%-escape '%.*s' in the %s: '%%' must be followed by two hex digits (write %%25 for '%%')",
                             (int)(e - b > 3 ? 3 : e - b), b, what);
            goto done;
        }
        if (hi == 0 && lo == 0) {
            rc = err_set(err, DAL_ECONFIG, "%%00 is not allowed in the %s", what);
            goto done;
        }
        *d++ = (char)(hi * 16 + lo);
        b += 2;
    }
    *d = '\0';
done:
    if (rc != 0) {
        free(s);
        s = NULL;
    }
    *out = s;
    return rc;
}

/* ------------------------------------------------------------- the parts */

static int parse_scheme(const char *text, const char **rest, dal_error_t *err)
{
    const char *sep = strstr(text, "://");
    size_t n, i;

    if (sep == NULL)
        return err_set(err, DAL_ECONFIG, "not a URL (expected " URL_FORM ")");
    n = (size_t)(sep - text);
    if (n == 5 && strncasecmp(text, "mysql", 5) == 0)
        goto ok;
    if (n == 7 && strncasecmp(text, "mariadb", 7) == 0)
        goto ok;
    /* Quote the scheme only if it looks like one: "root:pw@h://" is not. */
    for (i = 0; i < n && i < 16; i++)
        if (!isalpha((unsigned char)text[i]) && !(i > 0 && strchr("0123456789+.-", text[i])))
            break;
    if (n > 0 && i == n)
        return err_set(err, DAL_ECONFIG, "unsupported scheme '%.*s' (expected mysql:// or mariadb://)", (int)n, text);
    return err_set(err, DAL_ECONFIG, "not a URL (expected " URL_FORM ")");
ok:
    *rest = sep + 3;
    return 0;
}

/* [b, e) is "USER[:PASSWORD]" (the '@' excluded). */
static int parse_userinfo(const char *b, const char *e, dal_url_t *url, dal_error_t *err)
{
    const char *colon = memchr(b, ':', (size_t)(e - b));
    const char *uend = colon ? colon : e;
    int rc;

    /* A '/' or '?' here means an '@' later in the URL was taken for the
     * end of the user:password part.  Raw ones are fine in the password,
     * but not in the user name. */
    if (memchr(b, '/', (size_t)(uend - b)) || memchr(b, '?', (size_t)(uend - b)))
        return err_set(err, DAL_ECONFIG,
                       "'/' or '?' in the user name: escape '@' after the host as %%40 (and special characters in the user name as %%XX)");
    rc = decode(b, uend, "user name", 0, &url->user, err);
    if (rc == 0 && colon != NULL)
        rc = decode(colon + 1, e, "password", 1, &url->password, err);
    return rc;
}

static int parse_port(const char *b, const char *e, dal_url_t *url, dal_error_t *err)
{
    unsigned long v = 0;
    const char *p;

    if (b == e)
        return err_set(err, DAL_ECONFIG, "empty port after ':' (expected 1..65535)");
    for (p = b; p < e; p++) {
        if (!isdigit((unsigned char)*p))
            return err_set(err, DAL_ECONFIG, "port is not a number (expected 1..65535)");
        if (v <= 65535)
            v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v < 1 || v > 65535)
        return err_set(err, DAL_ECONFIG, "port out of range (expected 1..65535)");
    url->port = (unsigned int)v;
    return 0;
}

static int host_char_ok(int c)
{
    return isalnum(c) || c == '.' || c == '-' || c == '_';
}

/* "[v6]" or "[v6]:port"; b points at '['. */
static int parse_ipv6(const char *b, const char *e, dal_url_t *url, dal_error_t *err)
{
    const char *close = memchr(b, ']', (size_t)(e - b));
    const char *p;

    if (close == NULL)
        return err_set(err, DAL_ECONFIG, "missing ']' after the IPv6 address");
    for (p = b + 1; p < close; p++)
        if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
            break;
    if (p < close || memchr(b, ':', (size_t)(close - b)) == NULL)
        return err_set(err, DAL_ECONFIG, "bad IPv6 address '%.*s'", (int)(close + 1 - b), b);
    url->host = strndup(b + 1, (size_t)(close - b - 1));
    if (url->host == NULL)
        return oom(err);
    if (close + 1 == e)
        return 0;
    if (close[1] != ':')
        return err_set(err, DAL_ECONFIG, "unexpected text after ']' (expected ':PORT')");
    return parse_port(close + 2, e, url, err);
}

/* [b, e) is "HOST[:PORT]" with HOST possibly empty or bracketed. */
static int parse_hostport(const char *b, const char *e, dal_url_t *url, dal_error_t *err)
{
    const char *colon, *p;

    if (b < e && *b == '[')
        return parse_ipv6(b, e, url, err);
    colon = memchr(b, ':', (size_t)(e - b));
    if (colon != NULL && memchr(colon + 1, ':', (size_t)(e - colon - 1)) != NULL)
        return err_set(err, DAL_ECONFIG, "write an IPv6 address in brackets: mysql://USER@[::1]:3306/DATABASE");
    for (p = b; p < (colon ? colon : e); p++)
        if (!host_char_ok((unsigned char)*p))
            return err_set(err, DAL_ECONFIG, "bad host name '%.*s'", (int)((colon ? colon : e) - b), b);
    if (p > b) {
        url->host = strndup(b, (size_t)(p - b));
        if (url->host == NULL)
            return oom(err);
    }
    return colon ? parse_port(colon + 1, e, url, err) : 0;
}

static int parse_database(const char *b, const char *e, dal_url_t *url, dal_error_t *err)
{
    int rc;

    if (b == e)
        return 0;
    if (memchr(b, '/', (size_t)(e - b)) != NULL)
        return err_set(err, DAL_ECONFIG, "unexpected '/' after the database name");
    rc = decode(b, e, "database name", 0, &url->database, err);
    if (rc == 0 && strlen(url->database) > URL_NAME_MAX)
        rc = err_set(err, DAL_ECONFIG, "database name longer than %d characters", URL_NAME_MAX);
    return rc;
}

static const char *const ssl_modes[] = {
    "DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY", NULL
};

static int set_ssl_mode(dal_url_t *url, char *val, dal_error_t *err)
{
    size_t i;
    char *p;

    for (p = val; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    for (i = 0; ssl_modes[i] != NULL; i++)
        if (strcmp(val, ssl_modes[i]) == 0)
            break;
    if (ssl_modes[i] == NULL) {
        err_set(err, DAL_ECONFIG, "bad ssl_mode '%.40s' (expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY)", val);
        free(val);
        return DAL_ECONFIG;
    }
    url->ssl_mode = val;
    return 0;
}

static int set_timeout(dal_url_t *url, char *val, dal_error_t *err)
{
    int64_t ms;
    int rc = 0;

    if (parse_duration_ms(val, &ms) != 0)
        rc = err_set(err, DAL_ECONFIG, "option connect_timeout: expected a duration such as 250ms, 5s, 2m or 1h, got '%.40s'", val);
    else if (ms == 0)   /* 0 would read as "not given" */
        rc = err_set(err, DAL_ECONFIG, "option connect_timeout: must be greater than 0");
    else
        url->connect_timeout_ms = ms;
    free(val);
    return rc;
}

/* Parameters are escaped on the client (value.c), which is only safe for
 * charsets where byte 0x5C never occurs inside a multi-byte character;
 * GBK, Big5, SJIS and friends are refused rather than risk injection. */
static const char *const safe_charsets[] = {
    "utf8mb4", "utf8mb3", "utf8", "latin1", "ascii", "binary", NULL,
};

static int set_charset(dal_url_t *url, char *val, dal_error_t *err)
{
    size_t i;

    for (i = 0; safe_charsets[i]; i++)
        if (strcasecmp(val, safe_charsets[i]) == 0)
            break;
    if (safe_charsets[i] == NULL) {
        err_set(err, DAL_ECONFIG,
                "charset '%.40s' is not supported (use utf8mb4, utf8mb3, utf8, latin1, "
                "ascii or binary)", val);
        free(val);
        return DAL_ECONFIG;
    }
    url->charset = val;
    return 0;
}

/* What one url_parse_extra() call fills in. */
typedef struct url_parse {
    dal_url_t *url;
    const char *extra;   /* one more option name the caller accepts; NULL: none */
    char *extra_value;   /* owned; its decoded value, NULL until given */
} url_parse_t;

/* The slot for a string option of dal_url_t, or NULL for connect_timeout. */
static char **option_slot(dal_url_t *url, const char *name, size_t n)
{
    if (n == 6 && memcmp(name, "socket", 6) == 0)
        return &url->socket;
    if (n == 6 && memcmp(name, "ssl_ca", 6) == 0)
        return &url->ssl_ca;
    if (n == 8 && memcmp(name, "ssl_mode", 8) == 0)
        return &url->ssl_mode;
    if (n == 7 && memcmp(name, "charset", 7) == 0)
        return &url->charset;
    return NULL;
}

static int is_extra(const url_parse_t *up, const char *name, size_t n)
{
    return up->extra != NULL && strlen(up->extra) == n && memcmp(up->extra, name, n) == 0;
}

/* Store one decoded option value; takes ownership of val. */
static int set_option(url_parse_t *up, const char *name, size_t n, char *val, dal_error_t *err)
{
    dal_url_t *url = up->url;
    char **slot = is_extra(up, name, n) ? &up->extra_value : option_slot(url, name, n);
    int dup;

    /* No slot: connect_timeout, whose value is never 0 once set. */
    dup = slot != NULL ? *slot != NULL : url->connect_timeout_ms != 0;
    if (dup) {
        free(val);
        return err_set(err, DAL_ECONFIG, "option '%.*s' is given twice", (int)n, name);
    }
    if (slot == &url->ssl_mode)
        return set_ssl_mode(url, val, err);
    if (slot == &url->charset)
        return set_charset(url, val, err);
    if (slot == NULL)
        return set_timeout(url, val, err);
    *slot = val;
    return 0;
}

static int option_known(const url_parse_t *up, const char *name, size_t n)
{
    static const char *const known[] = {
        "socket", "ssl_mode", "ssl_ca", "connect_timeout", "charset", NULL
    };
    size_t i;

    for (i = 0; known[i] != NULL; i++)
        if (strlen(known[i]) == n && memcmp(known[i], name, n) == 0)
            return 1;
    return is_extra(up, name, n);
}

/* One "name=value" of [b, e). */
static int parse_option(const char *b, const char *e, url_parse_t *up, dal_error_t *err)
{
    const char *eq = memchr(b, '=', (size_t)(e - b));
    size_t n = (size_t)((eq ? eq : e) - b);
    char what[64];
    char *val;
    int rc;

    if (!option_known(up, b, n))
        return err_set(err, DAL_ECONFIG,
                       "unknown option '%.*s' (expected socket, ssl_mode, ssl_ca, connect_timeout%s charset%s%s)",
                       (int)(n > 40 ? 40 : n), b, up->extra ? "," : " or",
                       up->extra ? " or " : "", up->extra ? up->extra : "");
    if (eq == NULL || eq + 1 == e)
        return err_set(err, DAL_ECONFIG, "option '%.*s' needs a value (%.*s=VALUE)", (int)n, b, (int)n, b);
    snprintf(what, sizeof what, "option %.*s", (int)n, b);
    rc = decode(eq + 1, e, what, 0, &val, err);
    if (rc != 0)
        return rc;
    return set_option(up, b, n, val, err);
}

/* "name=value&name=value" up to the end of the string. */
static int parse_options(const char *q, url_parse_t *up, dal_error_t *err)
{
    const char *amp;
    int rc;

    for (; *q != '\0'; q = *amp ? amp + 1 : amp) {
        amp = q + strcspn(q, "&");
        if (amp == q)
            continue;   /* tolerate "?&a=b" and a trailing '&' */
        rc = parse_option(q, amp, up, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int fill_defaults(dal_url_t *url, dal_error_t *err)
{
    if (url->user == NULL)
        url->user = strdup("");
    if (url->host == NULL)
        url->host = strdup(URL_DEFAULT_HOST);
    if (url->charset == NULL)
        url->charset = strdup(URL_DEFAULT_CHARSET);
    if (url->port == 0)
        url->port = URL_DEFAULT_PORT;
    if (url->user == NULL || url->host == NULL || url->charset == NULL)
        return oom(err);
    return 0;
}

/* "user@host:port/db", "user@[::1]:port/db" or "user@socket:/path/db". */
static int make_display(dal_url_t *url, dal_error_t *err)
{
    const char *at = url->user[0] ? "@" : "";
    const char *slash = url->database ? "/" : "";
    const char *db = url->database ? url->database : "";
    int v6 = strchr(url->host, ':') != NULL;
    int n;

    if (url->socket != NULL)
        n = asprintf(&url->display, "%s%ssocket:%s%s%s", url->user, at, url->socket, slash, db);
    else
        n = asprintf(&url->display, "%s%s%s%s%s:%u%s%s", url->user, at, v6 ? "[" : "",
                     url->host, v6 ? "]" : "", url->port, slash, db);
    if (n < 0) {
        url->display = NULL;
        return oom(err);
    }
    return 0;
}

int url_parse_extra(const char *text, const char *extra, dal_url_t *url,
                    char **extra_value, dal_error_t *err)
{
    url_parse_t up = {url, extra, NULL};
    const char *rest = NULL, *at, *host, *end;
    int rc;

    memset(url, 0, sizeof *url);
    if (extra_value != NULL)
        *extra_value = NULL;
    rc = parse_scheme(text, &rest, err);
    if (rc != 0)
        goto done;
    at = strrchr(rest, '@');
    host = rest;
    if (at != NULL) {
        rc = parse_userinfo(rest, at, url, err);
        if (rc != 0)
            goto done;
        host = at + 1;
    }
    end = host + strcspn(host, "/?");
    rc = parse_hostport(host, end, url, err);
    if (rc == 0 && *end == '/') {
        host = end + 1;
        end = host + strcspn(host, "?");
        rc = parse_database(host, end, url, err);
    }
    if (rc == 0 && *end == '?')
        rc = parse_options(end + 1, &up, err);
    if (rc == 0)
        rc = fill_defaults(url, err);
    if (rc == 0)
        rc = make_display(url, err);
done:
    if (rc != 0)
        url_clear(url);
    if (rc == 0 && extra_value != NULL) {
        *extra_value = up.extra_value;
        up.extra_value = NULL;
    }
    free(up.extra_value);
    return rc;
}

int url_parse(const char *text, dal_url_t *url, dal_error_t *err)
{
    return url_parse_extra(text, NULL, url, NULL, err);
}

void url_clear(dal_url_t *url)
{
    if (url == NULL)
        return;
    free(url->user);
    if (url->password != NULL) {
        /* Do not leave the password lying in freed memory. */
        explicit_bzero(url->password, strlen(url->password));
        free(url->password);
    }
    free(url->host);
    free(url->database);
    free(url->socket);
    free(url->ssl_mode);
    free(url->ssl_ca);
    free(url->charset);
    free(url->display);
    memset(url, 0, sizeof *url);
}

static int str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

int url_equal(const dal_url_t *a, const dal_url_t *b)
{
    return str_eq(a->user, b->user) && str_eq(a->password, b->password) &&
           a->host != NULL && b->host != NULL && strcasecmp(a->host, b->host) == 0 &&
           a->port == b->port && str_eq(a->database, b->database) &&
           str_eq(a->socket, b->socket) && str_eq(a->ssl_mode, b->ssl_mode) &&
           str_eq(a->ssl_ca, b->ssl_ca) && str_eq(a->charset, b->charset) &&
           a->connect_timeout_ms == b->connect_timeout_ms;
}

/* ------------------------------------------------------------- masking */

/* Output of a masker: snprintf's contract over several pieces. */
typedef struct mask_out {
    char *p;
    size_t size;
    size_t len;   /* of the whole text, even past size */
} mask_out_t;

static void mask_put(mask_out_t *o, const char *s, size_t n)
{
    size_t room = o->size > o->len + 1 ? o->size - o->len - 1 : 0;

    if (o->size > 0)
        memcpy(o->p + (o->len < o->size ? o->len : o->size - 1), s, n < room ? n : room);
    o->len += n;
    if (o->size > 0)
        o->p[o->len < o->size ? o->len : o->size - 1] = '\0';
}

/* Length of a "SCHEME://" at s (letters first, as RFC 3986 says), or 0. */
static size_t scheme_len(const char *s, const char *e)
{
    const char *p = s;

    if (p == e || !isalpha((unsigned char)*p))
        return 0;
    while (p < e && (isalnum((unsigned char)*p) || strchr("+.-", *p) != NULL))
        p++;
    if (e - p < 3 || memcmp(p, "://", 3) != 0)
        return 0;
    return (size_t)(p + 3 - s);
}

/* [b, e) as one value: url_parse's split, the password replaced. */
/*
 * Whether user..at..e is the name a configuration source gives one version
 * of its document, "etcd://HOST:PORT/PREFIX/config@REV" (maybe followed by
 * ":LINE: ..." in a message), rather than USER:PASSWORD@HOST: the part
 * before '@' holds a path ('/') and only a revision number follows it.  A
 * host that is a bare number is no host anyone uses, so no password hides
 * behind this shape.
 */
static int version_name(const char *user, const char *at, const char *e)
{
    const char *p = at + 1;

    if (memchr(user, '/', (size_t)(at - user)) == NULL)
        return 0;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    return p > at + 1 && (p == e || *p == ':');
}

static void mask_span(mask_out_t *o, const char *b, const char *e)
{
    const char *at = memrchr(b, '@', (size_t)(e - b));
    const char *user = b, *colon;

    if (at != NULL && !version_name(b + scheme_len(b, at), at, e)) {
        user = b + scheme_len(b, at);
        colon = memchr(user, ':', (size_t)(at - user));
        if (colon != NULL) {
            mask_put(o, b, (size_t)(colon + 1 - b));
            mask_put(o, "***", 3);
            b = at;
        }
    }
    mask_put(o, b, (size_t)(e - b));
}

size_t url_mask(const char *text, char *out, size_t size)
{
    mask_out_t o = {out, size, 0};

    if (size > 0)
        out[0] = '\0';
    mask_span(&o, text, text + strlen(text));
    return o.len;
}

size_t url_mask_words(const char *text, char *out, size_t size)
{
    static const char seps[] = " \t\r\n'\"`";
    mask_out_t o = {out, size, 0};
    const char *p = text;
    size_t n;

    if (size > 0)
        out[0] = '\0';
    while (*p != '\0') {
        n = strspn(p, seps);
        mask_put(&o, p, n);
        p += n;
        n = strcspn(p, seps);
        mask_span(&o, p, p + n);
        p += n;
    }
    return o.len;
}
