/*
 * load_workloads.c -- what `dal load` runs: the statements, the workloads
 * made of them, their parameters and the table they run on, and the
 * backend that runs them through dal (see load.h).
 */
#include "load.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Ids the server makes start here: 2^63 + 2^41 (see LOAD_ROW_ID_BASE). */
#define AUTO_ID_BASE "9223374235878031360"

/*
 * Rows are found by primary key, so writes lock single rows and the
 * transactions of two threads never block each other (their keys differ,
 * see pick_key in load_run.c).
 */
const load_stmt_def_t load_stmt_defs[ST_COUNT] = {
    [ST_POINT] = { "SELECT id, name, price, stock FROM {T} WHERE {K} = ? AND id = ?", "ki", 0 },
    [ST_SUM] = { "SELECT COUNT(*), SUM(stock) FROM {T} WHERE {K} = ?", "k", 0 },
    /* no id: dal's generator where the table has one, else AUTO_INCREMENT */
    [ST_INSERT] = { "INSERT INTO {T} ({K}, name, price, stock) VALUES (?, ?, ?, ?)", "knps", 0 },
    [ST_INSERT_ID] = { "INSERT INTO {T} (id, {K}, name, price, stock) VALUES (?, ?, ?, ?, ?)",
                       "iknps", 0 },
    [ST_UPDATE] = { "UPDATE {T} SET stock = stock + 1 WHERE {K} = ? AND id = ?", "ki", 0 },
    [ST_DELETE] = { "DELETE FROM {T} WHERE {K} = ? AND id = ?", "ki", 0 },
    [ST_SCATTER] = { "SELECT id, name, price, stock FROM {T} WHERE id = ?", "i", 1 },
    /* the same read, where the table has `lookup = id` (docs/lookup.md):
     * through dal a point select on the lookup table, then one table; the
     * direct side, which has no lookup, asks every table */
    [ST_LOOKUP] = { "SELECT id, name, price, stock FROM {T} WHERE id = ?", "i", 1 },
};

static const char create_sql[] =
    "CREATE TABLE {T} (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, {K} BIGINT NOT NULL, "
    "name VARCHAR(64) NOT NULL, price DECIMAL(10,2) NOT NULL, stock INT NOT NULL, "
    "PRIMARY KEY (id), KEY ({K})) AUTO_INCREMENT = " AUTO_ID_BASE;
static const char drop_sql[] = "DROP TABLE IF EXISTS {T}";
/* The lookup table of id, where the table declares `lookup = id`. */
static const char create_lookup_sql[] =
    "CREATE TABLE {T}_lookup_id (id BIGINT UNSIGNED NOT NULL, {K} BIGINT NOT NULL, "
    "PRIMARY KEY (id))";
static const char drop_lookup_sql[] = "DROP TABLE IF EXISTS {T}_lookup_id";
const char load_probe_sql[] = "SELECT id FROM {T} WHERE {K} = ?";

static const load_workload_t workloads[] = {
    { "point-select", 0, 1, { ST_POINT } },
    { "insert", 0, 1, { ST_INSERT } },
    { "update", 0, 1, { ST_UPDATE } },
    /* DELETE then INSERT of the same row keeps the table as it was */
    { "read-write", 1, 5, { ST_POINT, ST_SUM, ST_UPDATE, ST_DELETE, ST_INSERT_ID } },
    { "scatter", 0, 1, { ST_SCATTER } },
    { "lookup", 0, 1, { ST_LOOKUP } },
};

const load_workload_t *load_find_workload(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (strcmp(workloads[i].name, name) == 0)
            return &workloads[i];
    return NULL;
}

char *load_expand_sql(const char *tmpl, const char *table, const char *key)
{
    /* each 3-character {X} becomes at most LOAD_MAX_NAME characters */
    size_t len = strlen(tmpl), n = 0;
    char *out = malloc(len + len / 3 * LOAD_MAX_NAME + 1);
    const char *p;

    if (out == NULL)
        return NULL;
    for (p = tmpl; *p != '\0'; p++) {
        const char *sub = NULL;

        if (strncmp(p, "{K}", 3) == 0)
            sub = key;
        else if (strncmp(p, "{T}", 3) == 0 && table != NULL)
            sub = table;
        if (sub == NULL) {
            out[n++] = *p;
            continue;
        }
        n += (size_t)sprintf(out + n, "%s", sub);
        p += 2;
    }
    out[n] = '\0';
    return out;
}

void load_set_params(dal_value_t *out, char *name, size_t namecap, int st, uint64_t key)
{
    const char *p;

    for (p = load_stmt_defs[st].params; *p != '\0'; p++, out++) {
        switch (*p) {
        case 'k': *out = dal_uint(key); break;
        case 'i': *out = dal_uint(LOAD_ROW_ID_BASE + key); break;
        case 'p': *out = dal_uint(key % 1000); break;
        case 's': *out = dal_uint(key % 100); break;
        default:
            snprintf(name, namecap, "load_%" PRIu64, key);
            *out = dal_str(name);
            break;
        }
    }
}

/* ------------------------------------------------------------ through dal */

static int dal_worker_open(load_worker_t *w)
{
    dal_error_t err = { 0 };

    if (w->ctx->wl->txn && dal_session_open(w->ctx->dal, &w->session, &err) < 0)
        return load_worker_error(w, "%s", err.message);
    return 0;
}

static void dal_worker_close(load_worker_t *w)
{
    dal_session_close(w->session);
    w->session = NULL;
}

static int dal_worker_begin(load_worker_t *w, uint64_t key)
{
    dal_error_t err = { 0 };

    (void)key;   /* the first statement decides the node */
    return dal_begin(w->session, &err) < 0 ? load_worker_error(w, "BEGIN: %s", err.message) : 0;
}

static int dal_worker_end(load_worker_t *w, int commit)
{
    dal_error_t err = { 0 };
    int rc = commit ? dal_commit(w->session, &err) : dal_rollback(w->session, &err);

    return rc < 0 ? load_worker_error(w, "%s: %s", commit ? "COMMIT" : "ROLLBACK", err.message)
                  : 0;
}

/* Read every value, as an application would. */
static int dal_consume(load_worker_t *w, dal_result_t *r, dal_error_t *err)
{
    size_t i, ncols = dal_result_column_count(r), len;
    int rc;

    while ((rc = dal_result_next(r, err)) > 0) {
        for (i = 0; i < ncols; i++)
            (void)dal_result_text(r, i, &len);
        w->ev_rows++;
    }
    w->ev_affected += dal_result_affected_rows(r);
    return rc;
}

static int dal_worker_stmt(load_worker_t *w, int st, uint64_t key)
{
    const load_ctx_t *ctx = w->ctx;
    const char *sql = ctx->dal_sql[st];
    const dal_prepared_t *prep = ctx->dal_prep[st];
    size_t n = strlen(load_stmt_defs[st].params);
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc;

    /* dal fills err when it fails; clearing all 500 bytes for every
     * statement would be a cost the direct side does not pay */
    err.message[0] = '\0';
    load_set_params(w->params, w->name, sizeof w->name, st, key);
    if (prep != NULL)
        rc = w->session ? dal_session_query_prepared(w->session, NULL, prep, w->params, n, &r, &err)
                        : dal_query_prepared(ctx->dal, NULL, prep, w->params, n, &r, &err);
    else
        rc = w->session ? dal_session_query(w->session, NULL, sql, w->params, n, &r, &err)
                        : dal_query(ctx->dal, NULL, sql, w->params, n, &r, &err);
    if (rc == 0)
        rc = dal_consume(w, r, &err);
    dal_result_free(r);
    return rc < 0 ? load_worker_error(w, "%s", err.message) : 0;
}

const load_backend_t load_dal_backend = {
    "dal", dal_worker_open, dal_worker_close, dal_worker_begin, dal_worker_end, dal_worker_stmt
};

/* ---------------------------------------------------------------- schema */

#define LOAD_NAME_CAP 32

/* The INSERT of --prepare for n rows: the read-write workload's INSERT
 * with more rows.  dal splits it per physical table. */
static char *batch_sql(const load_ctx_t *ctx, uint64_t n)
{
    static const char tuple[] = ", (?, ?, ?, ?, ?)";
    const char *one = ctx->dal_sql[ST_INSERT_ID];
    size_t len = strlen(one), i;
    char *sql = malloc(len + (size_t)(n - 1) * (sizeof tuple - 1) + 1), *p;

    if (sql == NULL)
        return NULL;
    p = sql + len;
    memcpy(sql, one, len);
    for (i = 1; i < n; i++, p += sizeof tuple - 1)
        memcpy(p, tuple, sizeof tuple - 1);
    *p = '\0';
    return sql;
}

/* Rows first+1 .. first+n in one statement (row k: see LOAD_ROW_ID_BASE). */
static int insert_batch(const load_ctx_t *ctx, uint64_t first, uint64_t n, const char *sql,
                        dal_value_t *params, char *names, dal_error_t *err)
{
    size_t np = strlen(load_stmt_defs[ST_INSERT_ID].params);
    uint64_t i;

    for (i = 0; i < n; i++)
        load_set_params(params + i * np, names + i * LOAD_NAME_CAP, LOAD_NAME_CAP, ST_INSERT_ID,
                        first + i + 1);
    return dal_exec(ctx->dal, NULL, sql, params, (size_t)n * np, NULL, err);
}

static int fill_rows(const load_ctx_t *ctx, dal_error_t *err)
{
    uint64_t rows = ctx->o->rows, batch = ctx->o->batch < rows ? ctx->o->batch : rows, done, n;
    size_t np = strlen(load_stmt_defs[ST_INSERT_ID].params);
    dal_value_t *params = calloc(batch * np, sizeof *params);
    char *names = calloc(batch, LOAD_NAME_CAP);
    char *full = batch_sql(ctx, batch), *sql = NULL;
    int rc = 0;

    if (params == NULL || names == NULL || full == NULL) {
        rc = cli_set_error(err, DAL_ENOMEM, "out of memory");
        goto out;
    }
    for (done = 0; done < rows && rc == 0; done += n) {
        n = rows - done < batch ? rows - done : batch;
        sql = n == batch ? full : batch_sql(ctx, n);
        rc = sql == NULL ? cli_set_error(err, DAL_ENOMEM, "out of memory")
                         : insert_batch(ctx, done, n, sql, params, names, err);
    }
out:
    if (sql != full)
        free(sql);
    free(full);
    free(names);
    free(params);
    return rc;
}

/* DDL through dal runs on every physical table. */
static int exec_ddl(const load_ctx_t *ctx, const char *tmpl, dal_error_t *err)
{
    char *sql = load_expand_sql(tmpl, ctx->o->table, ctx->o->shard_key);
    int rc;

    if (sql == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    rc = dal_exec(ctx->dal, NULL, sql, NULL, 0, NULL, err);
    free(sql);
    return rc;
}

int load_has_id_lookup(const load_ctx_t *ctx)
{
    dal_table_info_t *ti = NULL;
    dal_error_t err = { 0 };
    size_t i;
    int found = 0;

    if (dal_table_info(ctx->dal, ctx->o->table, &ti, &err) != 0)
        return 0;
    for (i = 0; i < dal_table_info_lookup_count(ti); i++)
        found |= strcmp(dal_table_info_lookup(ti, i, NULL), "id") == 0;
    dal_table_info_free(ti);
    return found;
}

int load_create_table(const load_ctx_t *ctx, dal_error_t *err)
{
    int rc = exec_ddl(ctx, create_sql, err);

    /* before the rows: dal writes their lookup rows with them */
    if (rc >= 0 && load_has_id_lookup(ctx))
        rc = exec_ddl(ctx, create_lookup_sql, err);
    return rc < 0 ? rc : fill_rows(ctx, err);
}

int load_drop_table(const load_ctx_t *ctx, dal_error_t *err)
{
    int rc = exec_ddl(ctx, drop_sql, err);

    if (rc >= 0 && load_has_id_lookup(ctx))
        rc = exec_ddl(ctx, drop_lookup_sql, err);
    return rc;
}
