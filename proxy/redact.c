/*
 * redact.c -- errors as a client may see them: without the backend's
 * user, host, port or schema (proxy.h, redact_message).  The datasource's
 * name stays: it is the configuration's, and what an operator looks up.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "proxy.h"

/* The bytes written into out so far, never past its end. */
typedef struct out {
    char *p;
    size_t n, cap;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    size_t room = o->cap - 1 - o->n;

    if (n > room)
        n = room;
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static void puts_(out_t *o, const char *s)
{
    put(o, s, strlen(s));
}

/* At s, "datasource NAME[ replica N]": its length (0 if s is not one). */
static size_t datasource_ref(const char *s)
{
    static const char word[] = "datasource ", replica[] = " replica ";
    size_t n = sizeof word - 1, name;

    if (strncmp(s, word, n) != 0)
        return 0;
    name = strcspn(s + n, " ():,;'`\"");
    if (name == 0)
        return 0;
    n += name;
    if (strncmp(s + n, replica, sizeof replica - 1) == 0 &&
        s[n + sizeof replica - 1] >= '0' && s[n + sizeof replica - 1] <= '9') {
        n += sizeof replica - 1;
        while (s[n] >= '0' && s[n] <= '9')
            n++;
    }
    return n;
}

/* At s, " (...)" naming a server (user@host:port/db, host:port, a socket
 * path): its length, else 0. */
static size_t server_group(const char *s)
{
    const char *end;
    size_t n;

    if (s[0] != ' ' || s[1] != '(' || (end = strchr(s + 2, ')')) == NULL)
        return 0;
    n = (size_t)(end - s) + 1;
    return memchr(s, '@', n) != NULL || memchr(s, ':', n) != NULL ? n : 0;
}

/* Whether what was written ends with "denied for user " or "denied to
 * user " (`Access denied for user 'dal'@'h'`, `SELECT command denied to
 * user 'dal'@'h'`): there a server names the account of its own session,
 * the backend's.  An account a statement named (`Can't create user
 * 'bob'@'%'`, `Operation CREATE USER failed for 'bob'@'%'`, a definer) is
 * the client's and stays. */
static bool after_denied(const out_t *o)
{
    static const char *const heads[] = {"denied for user ", "denied to user "};
    size_t i, n;

    for (i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        n = strlen(heads[i]);
        if (o->n >= n && memcmp(o->p + o->n - n, heads[i], n) == 0)
            return true;
    }
    return false;
}

/* At s, 'A'@'B' (an account as a server names one): its length, else 0. */
static size_t account(const char *s)
{
    const char *a, *b;

    if (s[0] != '\'' || (a = strchr(s + 1, '\'')) == NULL || a[1] != '@' || a[2] != '\'' ||
        (b = strchr(a + 3, '\'')) == NULL)
        return 0;
    return (size_t)(b - s) + 1;
}

bool redact_message(const char *msg, const char *user, const char *peer, char *out, size_t cap)
{
    out_t o = {out, 0, cap};
    bool changed = false;
    size_t n;

    while (*msg != '\0' && o.n < cap - 1) {
        if ((n = datasource_ref(msg)) > 0) {
            put(&o, msg, n);
            msg += n;
            if ((n = server_group(msg)) > 0) {
                msg += n;
                changed = true;
            }
        } else if (after_denied(&o) && (n = account(msg)) > 0) {
            puts_(&o, "'");
            puts_(&o, user != NULL ? user : "");
            puts_(&o, "'@'");
            puts_(&o, peer != NULL ? peer : "");
            puts_(&o, "'");
            msg += n;
            changed = true;
        } else {
            put(&o, msg, 1);
            msg++;
        }
    }
    out[o.n] = '\0';
    return changed;
}
