/*
 * url.h -- datasource URLs.
 *
 *   mysql://USER:PASSWORD@HOST:PORT/DATABASE?socket=/path&ssl_mode=REQUIRED
 *
 * ${VAR} references are expanded from the environment before parsing (so a
 * password can stay out of the file) and %XX escapes are decoded in the user,
 * password, database and option values.  Host may be an IPv6 literal in
 * brackets.  PORT defaults to 3306.  Accepted options: socket, ssl_mode
 * (DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY), ssl_ca,
 * connect_timeout (a duration), charset (default utf8mb4).
 */
#ifndef DAL_CORE_URL_H
#define DAL_CORE_URL_H

#include <stdint.h>

#include "dal/dal.h"

typedef struct dal_url {
    char *user;      /* owned; "" if absent */
    char *password;  /* owned; NULL if absent; never printed */
    char *host;      /* owned; "127.0.0.1" if absent */
    unsigned int port;
    char *database;  /* owned; NULL if absent */
    char *socket;    /* owned; NULL if absent */
    char *ssl_mode;  /* owned; upper case; NULL if absent */
    char *ssl_ca;    /* owned; NULL if absent */
    char *charset;   /* owned; "utf8mb4" if absent */
    int64_t connect_timeout_ms; /* 0 if absent */
    char *display;   /* owned; "user@host:port/db" or "user@socket:/path/db", no password */
} dal_url_t;

/*
 * Expand ${VAR} in text.  *out is owned by the caller (free()).  An unset
 * variable is an error naming it.  "$$" is a literal "$".  Returns 0 or
 * DAL_ECONFIG/DAL_ENOMEM with a message (without FILE:LINE; the caller
 * prefixes it).
 */
int expand_env(const char *text, char **out, dal_error_t *err);

/*
 * Parse a URL (already expanded).  On success the fields of *url are owned
 * by the caller (url_clear).  On failure returns DAL_ECONFIG and a
 * message that never contains the password.
 */
int url_parse(const char *text, dal_url_t *url, dal_error_t *err);
/*
 * The same, accepting one more option, extra (replica URLs take "weight"),
 * that dal_url_t has no field for.  On success *extra_value is its
 * %-decoded value, owned by the caller (free()), or NULL if the URL does not
 * give it; on failure it is NULL.  An unknown option's message lists extra
 * among the options expected.
 */
int url_parse_extra(const char *text, const char *extra, dal_url_t *url,
                    char **extra_value, dal_error_t *err);
void url_clear(dal_url_t *url);
/* Non-zero if the two URLs reach the same server with the same settings. */
int url_equal(const dal_url_t *a, const dal_url_t *b);

/*
 * Copy text into out (size bytes; NUL-terminated and cut to fit if size > 0)
 * with the password of its USER:PASSWORD@ part written as "***".  text is
 * taken as one value, split by url_parse's rule: the user:password part
 * ends at the LAST '@', starts after a leading "SCHEME://" (any scheme) or
 * at the start of text, and the password is what follows its first ':'.  So
 * "mysql://app:pw@h/db", "redis://app:pw@h" and a bare "app:pw@h" all come
 * out as "...app:***@h...".  When the rule is unsure it hides more, never
 * less (a list of URLs keeps only the text after its last '@').  Text
 * without '@', or without ':' before it, is copied unchanged.  Returns the
 * length of the whole masked text, as snprintf does (>= size: it was cut).
 * This is the one masker: every message that quotes a configuration value
 * goes through it (config_quote), never around it.
 */
size_t url_mask(const char *text, char *out, size_t size);
/*
 * The same for free text such as a plugin's message: each word (a run
 * without blanks and quotes) is masked as one value.  A password with a
 * blank in it is out of its reach; configuration values are masked whole,
 * before they are quoted, so this is only the second line of defence.
 */
size_t url_mask_words(const char *text, char *out, size_t size);

#endif /* DAL_CORE_URL_H */
