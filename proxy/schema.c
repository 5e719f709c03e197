/*
 * schema.c -- SHOW TABLES as a client of the proxy's one schema expects
 * it: the logical tables, not the physical ones of the default datasource.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy.h"

typedef struct names {
    char **v;          /* owned, and each entry */
    size_t n, cap;
    bool failed;       /* out of memory */
} names_t;

static void names_add(void *user, const char *name)
{
    names_t *ns = user;

    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 16;
        char **v = realloc(ns->v, cap * sizeof *v);
        if (v == NULL) {
            ns->failed = true;
            return;
        }
        ns->v = v;
        ns->cap = cap;
    }
    if ((ns->v[ns->n] = strdup(name)) == NULL)
        ns->failed = true;
    else
        ns->n++;
}

static void names_free(names_t *ns)
{
    size_t i;

    for (i = 0; i < ns->n; i++)
        free(ns->v[i]);
    free(ns->v);
}

/* name is "<table>_<digits>" for a configured sharded table: one of its
 * physical tables, which the logical name stands for. */
static bool is_physical(proxy_client_t *c, const names_t *logical, const char *name)
{
    size_t i, n, k;

    for (i = 0; i < logical->n; i++) {
        dal_table_info_t *t;
        dal_error_t err;
        bool sharded;
        n = strlen(logical->v[i]);
        if (strncasecmp(name, logical->v[i], n) != 0 || name[n] != '_' || name[n + 1] == '\0')
            continue;
        for (k = n + 1; isdigit((unsigned char)name[k]); k++)
            ;
        if (name[k] != '\0' || dal_table_info(c->px->dal, logical->v[i], &t, &err) != 0)
            continue;
        sharded = dal_table_info_layout(t) == DAL_LAYOUT_SHARDED;
        dal_table_info_free(t);
        if (sharded)
            return true;
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of one column named column. */
static void send_names(proxy_client_t *c, const char *column, const names_t *ns)
{
    proto_column_t col;
    size_t i;

    memset(&col, 0, sizeof col);
    col.name = col.org_name = column;
    col.charset = 45; /* utf8mb4_general_ci */
    col.length = 256;
    col.type = PROTO_TYPE_VAR_STRING;
    proto_build_columns(&c->out, &c->seq, (uint32_t)c->caps, &col, 1, client_status(c));
    for (i = 0; i < ns->n; i++) {
        const char *v[1] = {ns->v[i]};
        if (i == 0 || strcmp(ns->v[i], ns->v[i - 1]) != 0)
            proto_build_text_row(&c->out, &c->seq, 1, v, NULL);
    }
    proto_build_end(&c->out, &c->seq, (uint32_t)c->caps, 0, client_status(c));
}

/* `SHOW TABLES [FROM|IN db]`, nothing else: the statement is ours. */
static bool is_show_tables(proxy_client_t *c, const char *sql)
{
    const char *p = sql, *db;
    size_t n;

    if (!client_word_is(&p, "SHOW") || !client_word_is(&p, "TABLES"))
        return false;
    if (client_word_is(&p, "FROM") || client_word_is(&p, "IN")) {
        while (isspace((unsigned char)*p))
            p++;
        db = p;
        while (isalnum((unsigned char)*p) || *p == '_' || *p == '$')
            p++;
        n = (size_t)(p - db);
        if (n != strlen(c->px->database) || strncmp(db, c->px->database, n) != 0)
            return false; /* another schema: the server's answer (an error) */
    }
    while (isspace((unsigned char)*p) || *p == ';')
        p++;
    return *p == '\0';
}

bool schema_show_tables(proxy_client_t *c, const char *sql)
{
    names_t logical = {0}, all = {0};
    dal_result_t *r = NULL;
    dal_error_t err;
    char column[96];
    size_t i;
    int rc;

    if (!is_show_tables(c, sql))
        return false;
    /* the default datasource's own tables, then the logical ones */
    if (dal_table_names(c->px->dal, names_add, &logical, &err) != 0 ||
        dal_session_query(c->session, NULL, "SHOW TABLES", NULL, 0, &r, &err) != 0) {
        client_dal_error(c, &err);
        goto done;
    }
    while ((rc = dal_result_next(r, &err)) == 1) {
        const char *name = dal_result_text(r, 0, NULL);
        if (name != NULL && !is_physical(c, &logical, name))
            names_add(&all, name);
    }
    if (rc < 0) {
        client_dal_error(c, &err);
        goto done;
    }
    for (i = 0; i < logical.n; i++)
        names_add(&all, logical.v[i]);
    if (logical.failed || all.failed) {
        client_err(c, 1037, "HY001", "dal-proxy: out of memory");
        goto done;
    }
    qsort(all.v, all.n, sizeof *all.v, by_name);
    snprintf(column, sizeof column, "Tables_in_%s", c->px->database);
    send_names(c, column, &all);
done:
    dal_result_free(r);
    names_free(&logical);
    names_free(&all);
    return true;
}
