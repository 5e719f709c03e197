/*
 * diag.c -- the last statement's warnings and errors, for SHOW WARNINGS,
 * SHOW ERRORS and SHOW COUNT(*) WARNINGS|ERRORS.
 *
 * A server answers these from the connection's own last statement; dal's
 * backend connections go back to the pool after each statement, so the
 * proxy keeps them per client instead: the warnings the session read on
 * the statement's own connections (dal_session_keep_warnings,
 * dal_result_warning_rows) and the error the client was sent.  As on a
 * server, a statement starts a new list when it fails, leaves warnings or
 * names a table; one that names none and leaves none (SELECT 1) keeps the
 * list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "recognise.h"
#include "reply.h"

typedef struct diag_row {
    char level[8];             /* "Note", "Warning", "Error" */
    uint16_t code;
    char *message;             /* owned */
} diag_row_t;

struct proxy_diag {
    diag_row_t *v;             /* owned */
    size_t n, cap;
};

void diag_clear(proxy_client_t *c)
{
    size_t i;

    if (c->diag == NULL)
        return;
    for (i = 0; i < c->diag->n; i++)
        free(c->diag->v[i].message);
    c->diag->n = 0;
}

void diag_free(proxy_client_t *c)
{
    diag_clear(c);
    if (c->diag != NULL)
        free(c->diag->v);
    free(c->diag);
    c->diag = NULL;
}

static void diag_add(proxy_client_t *c, const char *level, unsigned int code, const char *message)
{
    proxy_diag_t *d = c->diag;

    if (d == NULL && (d = c->diag = calloc(1, sizeof *d)) == NULL)
        return;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        diag_row_t *v = realloc(d->v, cap * sizeof *v);
        if (v == NULL)
            return;
        d->v = v;
        d->cap = cap;
    }
    if ((d->v[d->n].message = strdup(message)) == NULL)
        return;
    snprintf(d->v[d->n].level, sizeof d->v[d->n].level, "%s", level);
    d->v[d->n].code = (uint16_t)code;
    d->n++;
}

void diag_take(proxy_client_t *c, const dal_result_t *r)
{
    const char *level, *message;
    char shown[1024];
    unsigned int code;
    size_t i, n = dal_result_warning_rows(r);

    if (n == 0 && !dal_result_named_tables(r))
        return;
    diag_clear(c);
    /* a server's warning names a backend account as its errors do */
    for (i = 0; i < n; i++)
        if (dal_result_warning_row(r, i, &level, &code, &message) == 0) {
            redact_message(message, c->user, c->peer, shown, sizeof shown);
            diag_add(c, level, code, shown);
        }
}

void diag_error(proxy_client_t *c, uint16_t code, const char *message)
{
    diag_clear(c);
    diag_add(c, "Error", code, message);
}

void diag_failed(proxy_client_t *c)
{
    const char *level, *message;
    char shown[1024];
    unsigned int code;
    size_t i;

    if (dal_session_error_row(c->session, 0, &level, &code, &message) != 0)
        return;
    diag_clear(c);
    for (i = 0; dal_session_error_row(c->session, i, &level, &code, &message) == 0; i++) {
        redact_message(message, c->user, c->peer, shown, sizeof shown);
        diag_add(c, level, code, shown);
    }
}

/* ------------------------------------------------------------ answers */

static void column(proto_column_t *col, const char *name, bool number)
{
    memset(col, 0, sizeof *col);
    col->name = col->org_name = name;
    col->charset = number ? 63 : 45;
    col->length = number ? 4 : 512;
    col->type = number ? PROTO_TYPE_LONG : PROTO_TYPE_VAR_STRING;
    col->flags = number ? PROTO_NOT_NULL_FLAG | PROTO_UNSIGNED_FLAG : PROTO_NOT_NULL_FLAG;
}

/* The rows from offset, at most limit, of errors only or all. */
static void send_rows(proxy_client_t *c, bool errors, uint64_t offset, uint64_t limit)
{
    proto_column_t cols[3];
    size_t i, k = 0, sent = 0, n = c->diag != NULL ? c->diag->n : 0;

    column(&cols[0], "Level", false);
    column(&cols[1], "Code", true);
    column(&cols[2], "Message", false);
    proto_build_columns(&c->out, &c->seq, c->caps, cols, 3, reply_status(c));
    for (i = 0; i < n && sent < limit; i++) {
        const diag_row_t *r = &c->diag->v[i];
        char code[8];
        const char *vals[3] = {r->level, code, r->message};
        if (errors && strcmp(r->level, "Error") != 0)
            continue;
        if (k++ < offset)
            continue;
        snprintf(code, sizeof code, "%u", r->code);
        reply_row(c, cols, 3, vals, NULL);
        sent++;
    }
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, reply_status(c));
}

static void send_count(proxy_client_t *c, bool errors)
{
    proto_column_t col;
    size_t i, count = 0, n = c->diag != NULL ? c->diag->n : 0;
    char text[24];
    const char *vals[1] = {text};

    for (i = 0; i < n; i++)
        count += !errors || strcmp(c->diag->v[i].level, "Error") == 0;
    snprintf(text, sizeof text, "%zu", count);
    column(&col, errors ? "@@session.error_count" : "@@session.warning_count", true);
    col.type = PROTO_TYPE_LONGLONG;
    col.length = 21;
    proto_build_columns(&c->out, &c->seq, c->caps, &col, 1, reply_status(c));
    reply_row(c, &col, 1, vals, NULL);
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, reply_status(c));
}

bool diag_statement(proxy_client_t *c, const char *sql, size_t len)
{
    recognise_diag_t d;

    if (!recognise_diag(sql, len, &d))
        return false;
    if (d.count)
        send_count(c, d.errors);
    else
        send_rows(c, d.errors, d.offset, d.limit);
    return true;
}
