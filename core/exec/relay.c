/*
 * relay.c -- a plain read's reply passed to the caller's sink packet by
 * packet.  See relay.h.
 *
 * The connection speaks the protocol without CLIENT_DEPRECATE_EOF (MariaDB
 * Connector/C does not ask for it): a result set is the column count, the
 * definitions, an EOF, the rows and an EOF (or an ERR, which the
 * connector's packet reader turns into the connection's error, as
 * mysql_real_query would).
 */
#include <errmsg.h>
#include <mysql.h>
#include <stdio.h>
#include <string.h>

#include "merge.h"
#include "relay.h"
#include "snapshot.h"
#include "warnings.h"

#if defined(HAVE_MYSQL_SEND_QUERY) && defined(HAVE_MYSQL_NET_READ_PACKET) && \
    defined(HAVE_MARIADB_GET_INFOV)
#define RELAY_AVAILABLE 1
#else
#define RELAY_AVAILABLE 0
#endif

#define DAL_CLIENT_DEPRECATE_EOF (1UL << 24)
#define DAL_EXTENDED_METADATA_HIGH (1UL << 3) /* MARIADB_CLIENT_EXTENDED_METADATA >> 32 */

#if RELAY_AVAILABLE

/* The statement's columns are the server's as they are: dal renames none
 * and maps no physical table to its logical name (exec.c's map_tables). */
static int columns_as_server(const dal_routing_t *rt)
{
    const dal_sql_names_t *names;
    size_t i;

    for (i = 0; rt->tables != NULL && i < rt->sql->ntrefs; i++)
        if (rt->tables[i] != NULL && rt->tables[i]->sharded)
            return 0;
    names = merge_cached_names(rt->sql);
    return names != NULL && names->nset == 0;
}

/* A SELECT that returns one result set and leaves no state behind. */
static int plain_read(const dal_sql_t *sql)
{
    return sql->kind == DAL_SQL_SELECT && sql->pins == 0 && !sql->reads_autocommit &&
           !sql->opaque && !sql->compound && sql->xa == 0;
}

/* How the connection's column definitions reach the sink's client, or 0
 * when they cannot: as sent when its MariaDB extended metadata (which
 * Connector/C asks for from a server that offers it) is what the client
 * takes; without their extended type info block for a client that does not
 * take it (PyMySQL, mysql2, Connector/J: most drivers) on a connection that
 * has it.  A client that takes it from a connection without it is not
 * relayed. */
static int relay_metadata(const dal_relay_t *sink, const dal_conn_t *c)
{
    size_t ext = 0;
    int conn_ext, sink_ext = (sink->flags & DAL_RELAY_EXTENDED_METADATA) != 0;

    if (mariadb_get_infov((MYSQL *)&c->mysql, MARIADB_CONNECTION_EXTENDED_SERVER_CAPABILITIES,
                          &ext) != 0)
        return 0;
    conn_ext = (ext & DAL_EXTENDED_METADATA_HIGH) != 0;
    if (conn_ext == sink_ext)
        return RELAY_AS_SENT;
    return conn_ext ? RELAY_NO_EXTENDED : 0;
}

int relay_wanted(const dal_routing_t *rt, size_t r, const dal_conn_t *c, const char *sql,
                 size_t len)
{
    if (rt->relay == NULL || rt->relay->packet == NULL || (rt->relay->flags & DAL_RELAY_BINARY) ||
        r != 0 || rt->nroutes != 1 || rt->client_text == NULL || rt->describe ||
        rt->merge_edits != NULL)
        return 0;
    if (len != rt->client_len || memcmp(sql, rt->client_text, len) != 0)
        return 0;
    if (!plain_read(rt->sql) || (c->mysql.client_flag & DAL_CLIENT_DEPRECATE_EOF))
        return 0;
    return columns_as_server(rt) ? relay_metadata(rt->relay, c) : 0;
}

/* The definitions are dal's own encoding (cols_encode), with or without
 * the extended block as the sink's client takes it. */
int relay_binary_wanted(const dal_routing_t *rt, size_t r, const dal_conn_t *c, const char *tpl,
                        size_t len)
{
    if (rt->relay == NULL || rt->relay->packet == NULL ||
        !(rt->relay->flags & DAL_RELAY_BINARY) || r != 0 || rt->nroutes != 1 || rt->describe ||
        rt->merge_edits != NULL)
        return 0;
    if (len != rt->sql->len || memcmp(tpl, rt->sql->text, len) != 0)
        return 0;
    if (!plain_read(rt->sql) || (c->mysql.client_flag & DAL_CLIENT_DEPRECATE_EOF))
        return 0;
    return columns_as_server(rt) && relay_metadata(rt->relay, c) != 0;
}

/* A packet the protocol does not allow here: the connection is out of
 * step and is closed (a client error, as exec.c's conn_is_broken sees). */
static int out_of_step(dal_conn_t *c, const char *what, dal_error_t *err)
{
    MYSQL *m = &c->mysql;

    m->net.last_errno = CR_MALFORMED_PACKET;
    snprintf(m->net.last_error, sizeof m->net.last_error, "Malformed packet: %s", what);
    snprintf(m->net.sqlstate, sizeof m->net.sqlstate, "HY000");
    return conn_error(c, DAL_ESERVER, err);
}

typedef struct relay_out {
    const dal_relay_t *sink;
    void *ctx;
    int live;       /* the sink still takes packets */
    dal_result_t *res;
} relay_out_t;

static void relay_put(relay_out_t *o, dal_relay_part_t part, const unsigned char *p, size_t n)
{
    o->res->relayed = 1; /* from here on the statement never runs again */
    if (o->live && o->sink->packet(o->ctx, part, p, n) != 0)
        o->live = 0;
}

/* The statement answered with an OK (SELECT ... INTO OUTFILE): its counts,
 * as store_current notes them. */
static int relay_ok(dal_conn_t *c, const unsigned char *p, size_t n, dal_result_t *res,
                    dal_error_t *err)
{
    MYSQL *m = &c->mysql;
    uint64_t affected, id;
    unsigned int status, warnings;

    if (relay_parse_ok(p, n, &affected, &id, &status, &warnings) != 0)
        return out_of_step(c, "an OK the relay cannot read", err);
    m->warning_count = warnings;
    m->server_status = status;
    res->affected += affected;
    result_add_end(res, warnings, status, id);
    warnings_read(&res->warns, m, warnings);
    return 0;
}

int relay_run(const dal_routing_t *rt, dal_conn_t *c, int how, const char *sql, size_t len,
              dal_result_t *res, dal_error_t *err)
{
    MYSQL *m = &c->mysql;
    relay_out_t o = {rt->relay, rt->relay_ctx, 1, res};
    const unsigned char *p;
    unsigned long n;
    size_t k;
    unsigned int warnings, status;
    uint64_t ncols, i, rows = 0;

    if (mysql_send_query(m, sql, (unsigned long)len) != 0)
        return conn_error(c, DAL_ESERVER, err);
    if ((n = mysql_net_read_packet(m)) == packet_error)
        return conn_error(c, DAL_ESERVER, err);
    p = m->net.read_pos;
    if (p[0] == 0x00)
        return relay_ok(c, p, n, res, err);
    if ((k = relay_parse_count(p, n, &ncols)) == 0)
        return out_of_step(c, "not a result set's column count", err);
    relay_put(&o, DAL_RELAY_COLUMN_COUNT, p, k); /* the count alone */
    for (i = 0; i < ncols; i++) {
        if ((n = mysql_net_read_packet(m)) == packet_error)
            return conn_error(c, DAL_ESERVER, err);
        /* stripped in place: the packet is the connection's to overwrite */
        if (how == RELAY_NO_EXTENDED && (n = relay_strip_extended(m->net.read_pos, n)) == 0)
            return out_of_step(c, "a column definition the relay cannot read", err);
        relay_put(&o, DAL_RELAY_COLUMN, m->net.read_pos, n);
    }
    if ((n = mysql_net_read_packet(m)) == packet_error)
        return conn_error(c, DAL_ESERVER, err);
    if (relay_parse_eof(m->net.read_pos, n, &warnings, &status) != 0)
        return out_of_step(c, "no EOF after the column definitions", err);
    relay_put(&o, DAL_RELAY_COLUMNS_END, NULL, 0);
    for (;;) {
        if ((n = mysql_net_read_packet(m)) == packet_error)
            return conn_error(c, DAL_ESERVER, err); /* an ERR after rows, or the connection */
        p = m->net.read_pos;
        if (p[0] == 0xFE && n < 9)
            break;
        relay_put(&o, DAL_RELAY_ROW, p, n);
        rows++;
    }
    if (relay_parse_eof(p, n, &warnings, &status) != 0)
        return out_of_step(c, "an EOF the relay cannot read", err);
    if (status & SERVER_MORE_RESULTS_EXIST)
        return out_of_step(c, "more results after a plain read", err);
    /* what mysql_store_result leaves for the rest of the statement's path:
     * SHOW WARNINGS, the transaction and session-state flags (conn.c) */
    m->warning_count = warnings;
    m->server_status = status;
    res->relayed_rows = rows;
    result_add_end(res, warnings, status, 0);
    warnings_read(&res->warns, m, warnings);
    return 0;
}

/* ------------------------------------------------- prepared statements */

static void put_lenenc(dal_buf_t *b, uint64_t v)
{
    unsigned char t[9];
    size_t n = 1, i;

    if (v < 251) {
        t[0] = (unsigned char)v;
    } else {
        n = v < 0x10000 ? 3 : v < 0x1000000 ? 4 : 9;
        t[0] = n == 3 ? 0xFC : n == 4 ? 0xFD : 0xFE;
        for (i = 1; i < n; i++)
            t[i] = (unsigned char)(v >> (8 * (i - 1)));
    }
    buf_append(b, t, n);
}

static void put_str(dal_buf_t *b, const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;

    put_lenenc(b, n);
    buf_append(b, s, n);
}

static void put_le(dal_buf_t *b, uint64_t v, size_t n)
{
    unsigned char t[8];
    size_t i;

    for (i = 0; i < n; i++)
        t[i] = (unsigned char)(v >> (8 * i));
    buf_append(b, t, n);
}

/* MariaDB's extended type information block: its length, then each
 * attribute present as its id and value. */
static void put_extended(dal_buf_t *b, const colset_t *cs, unsigned int i)
{
    const char *a[FIELD_ATTRS];
    uint64_t len = 0;
    int w;

    for (w = 0; w < FIELD_ATTRS; w++) {
        a[w] = colset_attr(cs, i, w);
        if (a[w] != NULL && a[w][0] != '\0') {
            size_t n = strlen(a[w]);
            len += 1 + (n < 251 ? 1 : n < 0x10000 ? 3 : n < 0x1000000 ? 4 : 9) + n;
        }
    }
    put_lenenc(b, len);
    for (w = 0; w < FIELD_ATTRS; w++)
        if (a[w] != NULL && a[w][0] != '\0') {
            put_le(b, (uint64_t)w, 1);
            put_str(b, a[w]);
        }
}

/* Column i of cs as a ColumnDefinition41 payload, the way a front end
 * writes dal_result_column_info's fields (without the client library's
 * NUM_FLAG, which servers do not send). */
static void put_column(dal_buf_t *b, const colset_t *cs, unsigned int i, int extended)
{
    const MYSQL_FIELD *f = &colset_fields(cs)[i];

    put_str(b, "def");
    put_str(b, f->db);
    put_str(b, f->table);
    put_str(b, f->org_table);
    put_str(b, f->name);
    put_str(b, f->org_name);
    if (extended)
        put_extended(b, cs, i);
    put_lenenc(b, 0x0C);
    put_le(b, f->charsetnr, 2);
    put_le(b, f->length > UINT32_MAX ? UINT32_MAX : f->length, 4);
    put_le(b, (uint64_t)f->type, 1);
    put_le(b, f->flags & ~32768u, 2);
    put_le(b, f->decimals, 1);
    put_le(b, 0, 2);
}

void relay_cols_free(relay_cols_t *rc)
{
    if (rc->cols != NULL)
        colset_unref(rc->cols);
    buf_free(&rc->bytes);
    memset(rc, 0, sizeof *rc);
}

/* cache holding cs's definitions; -1 without memory. */
static int cols_encode(relay_cols_t *cache, const colset_t *cs, int extended)
{
    unsigned int i, n = colset_count(cs);
    uint32_t len;
    size_t at;

    if (cache->cols == cs && cache->extended == extended)
        return 0;
    relay_cols_free(cache);
    for (i = 0; i < n; i++) {
        at = cache->bytes.len;
        buf_append(&cache->bytes, &(uint32_t){0}, sizeof len);
        put_column(&cache->bytes, cs, i, extended);
        if (cache->bytes.oom)
            break;
        len = (uint32_t)(cache->bytes.len - at - sizeof len);
        memcpy(cache->bytes.data + at, &len, sizeof len);
    }
    if (cache->bytes.oom) {
        relay_cols_free(cache);
        return -1;
    }
    cache->cols = colset_ref((colset_t *)cs);
    cache->extended = extended;
    return 0;
}

/* st and its connection as after a result fetched to its end (or to the
 * error that ended it): the next execution, a reset or a close send their
 * command at once. */
static void stmt_done(MYSQL_STMT *st, unsigned int warnings, unsigned int status)
{
    MYSQL *m = st->mysql;

    st->state = MYSQL_STMT_FETCH_DONE;
    m->status = MYSQL_STATUS_READY;
    st->upsert_status.warning_count = m->warning_count = warnings;
    st->upsert_status.server_status = m->server_status = status;
}

int relay_binary_run(const dal_routing_t *rt, dal_conn_t *c, MYSQL_STMT *st, binary_reader_t *rd,
                     relay_cols_t *cache, dal_result_t *res, dal_error_t *err)
{
    MYSQL *m = &c->mysql;
    relay_out_t o = {rt->relay, rt->relay_ctx, 1, res};
    const colset_t *cs;
    unsigned char count[9];
    const char *p, *end;
    const unsigned char *q;
    unsigned long n;
    unsigned int warnings, status;
    uint64_t rows = 0;
    uint32_t len;
    int rc;
    dal_buf_t cb;

    if ((cs = binary_reader_columns(rd, &rc)) == NULL ||
        cols_encode(cache, cs, (rt->relay->flags & DAL_RELAY_EXTENDED_METADATA) != 0) != 0) {
        if (rc == DAL_ESERVER) /* binding failed: the handle says why */
            err_server(err, DAL_ESERVER, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
                       "datasource %s (%s): error %u (%s): %s", c->ds->name, c->url->display,
                       mysql_stmt_errno(st), mysql_stmt_sqlstate(st), mysql_stmt_error(st));
        else if (rc != BINARY_STALE)
            err_set(err, rc = DAL_ENOMEM, "out of memory");
        mysql_stmt_free_result(st); /* the rows are read and dropped: c stays in step */
        return rc;
    }
    buf_init_on(&cb, (char *)count, sizeof count);
    put_lenenc(&cb, colset_count(cs));
    relay_put(&o, DAL_RELAY_COLUMN_COUNT, count, cb.len);
    for (p = cache->bytes.data, end = p + cache->bytes.len; p < end; p += sizeof len + len) {
        memcpy(&len, p, sizeof len);
        relay_put(&o, DAL_RELAY_COLUMN, (const unsigned char *)p + sizeof len, len);
    }
    relay_put(&o, DAL_RELAY_COLUMNS_END, NULL, 0);
    for (;;) {
        if ((n = mysql_net_read_packet(m)) == packet_error) {
            /* an ERR after rows (or the connection): the library's error */
            stmt_done(st, 0, m->server_status & ~SERVER_MORE_RESULTS_EXIST);
            return conn_error(c, DAL_ESERVER, err);
        }
        q = m->net.read_pos;
        if (q[0] == 0xFE && n < 9)
            break;
        relay_put(&o, DAL_RELAY_ROW, q, n);
        rows++;
    }
    if (relay_parse_eof(q, n, &warnings, &status) != 0 || (status & SERVER_MORE_RESULTS_EXIST)) {
        stmt_done(st, 0, m->server_status);
        return out_of_step(c, "an end of binary rows the relay cannot read", err);
    }
    stmt_done(st, warnings, status);
    res->relayed_rows = rows;
    result_add_end(res, warnings, status, 0);
    warnings_read(&res->warns, m, warnings);
    return 0;
}

#else

void relay_cols_free(relay_cols_t *rc)
{
    (void)rc;
}

int relay_binary_wanted(const dal_routing_t *rt, size_t r, const dal_conn_t *c, const char *tpl,
                        size_t len)
{
    (void)rt, (void)r, (void)c, (void)tpl, (void)len;
    return 0;
}

int relay_binary_run(const dal_routing_t *rt, dal_conn_t *c, MYSQL_STMT *st, binary_reader_t *rd,
                     relay_cols_t *cache, dal_result_t *res, dal_error_t *err)
{
    (void)rt, (void)c, (void)st, (void)rd, (void)cache, (void)res;
    return err_set(err, DAL_EINVAL, "the result relay needs mysql_net_read_packet");
}

int relay_wanted(const dal_routing_t *rt, size_t r, const dal_conn_t *c, const char *sql,
                 size_t len)
{
    (void)rt, (void)r, (void)c, (void)sql, (void)len;
    return 0;
}

int relay_run(const dal_routing_t *rt, dal_conn_t *c, int how, const char *sql, size_t len,
              dal_result_t *res, dal_error_t *err)
{
    (void)rt, (void)c, (void)how, (void)sql, (void)len, (void)res;
    return err_set(err, DAL_EINVAL, "the result relay needs mysql_net_read_packet");
}

#endif
