/*
 * sql_stmt.c -- statements: INSERT, UPDATE, DELETE, DDL, SHOW, EXPLAIN, WITH,
 * and the dispatch on the first words.  See sql_int.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "sql_int.h"

/* ============================================================ DML */

/* `col = expr, ...` in [s,e): target names into cols, values (if vals is
 * not NULL) as operands into vals. */
static int assignments(an_t *a, int s, int e, vec_t *cols, vec_t *vals)
{
    int i, j, c;

    for (i = s; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        c = an_colref_end(a, i, j);
        if (an_scan_expr(a, i, j))
            return -1;
        if (c < 0 || !(is_op(a, c, j, "=") || is_op(a, c, j, ":=")))
            continue;
        if (an_push_str(a, cols, an_tok_name(a, c - 1)))
            return -1;
        if (vals) {
            dal_sql_opnd_t *v = an_vpush(a, vals, sizeof *v);
            if (!v)
                return -1;
            *v = an_operand(a, c + 1, j);
        }
    }
    return 0;
}

/* Every row holds as many values as the column list names (without one,
 * as the first row): a server refuses the whole statement otherwise
 * (1136), where dal, splitting the rows by node, would write the rows of
 * the other nodes. */
static int rows_agree(an_t *a)
{
    const struct dal_sql_row *rows = a->rows.v;
    size_t i, want = a->columns.n > 0 ? a->columns.n : rows[0].nvals;

    for (i = 0; i < a->rows.n; i++)
        if (rows[i].nvals != want)
            return an_fail(a, rows[i].off, "column count doesn't match value count");
    return 0;
}

/* VALUES (..), (..) ... starting at i. */
static int insert_rows(an_t *a, int i, int e)
{
    int close;

    while (i < e) {
        struct dal_sql_row *row;
        if (kw(a, i, e, K_ROW))
            i++;
        if (!is_p(a, i, e, '('))
            break;
        close = a->link[i];
        if (a->rows.n == 0)
            a->r.values_off = a->tk[i].off;
        a->r.values_end = tend(a, close);
        if (!(row = an_vpush(a, &a->rows, sizeof *row)))
            return -1;
        row->off = a->tk[i].off;
        row->len = a->r.values_end - row->off;
        if (an_operand_list(a, i + 1, close, &row->vals, &row->nvals) ||
            an_scan_expr(a, i + 1, close))
            return -1;
        i = close + 1;
        if (!is_p(a, i, e, ','))
            break;
        i++;
    }
    if (a->rows.n > 0 && rows_agree(a))
        return -1;
    return an_scan_expr(a, i, e); /* AS row_alias ... */
}

/* INSERT ... SET a = 1, b = 2: columns and one row. */
static int insert_set(an_t *a, int s, int e)
{
    vec_t vals = {0};
    struct dal_sql_row *row;

    a->r.insert_set = 1;
    if (assignments(a, s, e, &a->columns, &vals))
        return -1;
    if (!(row = an_vpush(a, &a->rows, sizeof *row)))
        return -1;
    row->vals = vals.v;
    row->nvals = vals.n;
    if (s < e) {
        row->off = a->r.values_off = a->tk[s].off;
        a->r.values_end = tend(a, e - 1);
        row->len = a->r.values_end - row->off;
    }
    return 0;
}

/* ON DUPLICATE KEY UPDATE at the top level of [i,e), or e. */
static int odku_start(const an_t *a, int i, int e)
{
    for (; i < e; i = next_tok(a, i))
        if (kw(a, i, e, K_ON) && kw(a, i + 1, e, K_DUPLICATE))
            return i;
    return e;
}

/* INSERT / REPLACE after the verb. */
static int insert_stmt(an_t *a, int i, int e)
{
    static const unsigned char mods[] = {K_LOW_PRIORITY, K_DELAYED, K_HIGH_PRIORITY, K_IGNORE, 0};
    static const unsigned char returning[] = {K_RETURNING, 0};
    int j, k, odku;

    for (; kw_in(a, i, e, mods); i++)
        if (kw(a, i, e, K_IGNORE))
            a->r.insert_ignore = 1;
    if (kw(a, i, e, K_INTO))
        i++;
    if ((i = an_table_name(a, i, e, DAL_TREF_INTO)) < 0)
        return -1;
    if (kw(a, i, e, K_PARTITION) && is_p(a, i + 1, e, '('))
        i = a->link[i + 1] + 1;
    if ((odku = odku_start(a, i, e)) < e) {
        a->r.odku_off = a->tk[odku].off;
        a->r.odku_len = tend(a, e - 1) - a->r.odku_off;
        if (an_scan_expr(a, odku, e))
            return -1;
    }
    e = odku;
    if ((k = find_kw(a, i, e, returning)) < e && an_scan_expr(a, k, e))
        return -1;
    e = k;
    if (is_p(a, i, e, '(') && !query_inside(a, i, e)) {
        for (j = i + 1; j < a->link[i]; j = k + 1) {
            k = comma_end(a, j, a->link[i]);
            if (k > j && an_push_str(a, &a->columns, an_tok_name(a, k - 1)))
                return -1;
        }
        i = a->link[i] + 1;
    }
    if (kw(a, i, e, K_VALUES) || kw(a, i, e, K_VALUE))
        return insert_rows(a, i + 1, e);
    if (kw(a, i, e, K_SET))
        return insert_set(a, i + 1, e);
    if (i >= e)
        return 0;
    a->r.insert_select = 1;
    return an_query(a, i, e, FILL_HEAD, DAL_SCOPE_TOP); /* items: which feeds the shard key */
}

/* UPDATE after the verb. */
static int update_stmt(an_t *a, int i, int e)
{
    static const unsigned char mods[] = {K_LOW_PRIORITY, K_IGNORE, 0};
    seg_t sg[CL_N];

    while (kw_in(a, i, e, mods))
        i++;
    an_split_clauses(a, i, e,
                  BIT(CL_SET) | BIT(CL_WHERE) | BIT(CL_ORDER) | BIT(CL_LIMIT) | BIT(CL_RETURNING),
                  sg);
    if (an_table_list(a, sg[CL_HEAD].b, sg[CL_HEAD].e, DAL_TREF_UPDATE) ||
        assignments(a, sg[CL_SET].b, sg[CL_SET].e, &a->setcols, NULL))
        return -1;
    return an_clauses(a, sg, FILL_ALL);
}

/* The targets of a multi-table DELETE ([s,e): t1[.*], t2[.*] ...).  A target
 * that is an alias makes its table a DELETE target; a target that is a name
 * is recorded itself (a rewriter must rename it). */
static int delete_targets(an_t *a, int s, int e, size_t from)
{
    struct dal_sql_tref *t = a->trefs.v;
    size_t n = a->trefs.n, k;
    int i, j, q, nm, found;
    char *name;

    for (i = s; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        an_qname(a, i, j, &q, &nm);
        if (nm < 0)
            continue;
        if (!(name = an_tok_name(a, nm)))
            return -1;
        found = 0;
        for (k = from; k < n; k++) {
            if (q < 0 && t[k].alias && an_ascii_casecmp(t[k].alias, name) == 0) {
                t[k].role = DAL_TREF_DELETE;
                found = 1;
            } else if (!t[k].alias && an_ascii_casecmp(t[k].name, name) == 0) {
                t[k].role = DAL_TREF_DELETE;
            }
        }
        if (!found && an_add_tref(a, q, nm, DAL_TREF_DELETE, -1))
            return -1;
        t = a->trefs.v; /* add_tref may have moved the array */
    }
    return 0;
}

/* DELETE after the verb: single-table, `DELETE t.. FROM refs` or
 * `DELETE FROM t.. USING refs`. */
static int delete_stmt(an_t *a, int i, int e)
{
    static const unsigned char mods[] = {K_LOW_PRIORITY, K_QUICK, K_IGNORE, 0};
    seg_t sg[CL_N];
    const seg_t *f = &sg[CL_FROM], *u = &sg[CL_USING], *refs;
    int from_first;
    size_t mark = 0;

    while (kw_in(a, i, e, mods))
        i++;
    from_first = kw(a, i, e, K_FROM);
    an_split_clauses(a, i, e,
                  BIT(CL_FROM) | BIT(CL_WHERE) | BIT(CL_ORDER) | BIT(CL_LIMIT) |
                      BIT(CL_RETURNING) | (from_first ? BIT(CL_USING) : 0),
                  sg);
    refs = (from_first && u->kw >= 0) ? u : f;
    if (refs->kw < 0)
        return an_clauses(a, sg, FILL_ALL);
    if (refs == f && from_first) {
        if (an_table_list(a, f->b, f->e, DAL_TREF_DELETE))
            return -1;
    } else {
        mark = a->trefs.n;
        if (an_table_list(a, refs->b, refs->e, DAL_TREF_FROM))
            return -1;
        if (refs == u ? delete_targets(a, f->b, f->e, mark)
                      : delete_targets(a, sg[CL_HEAD].b, sg[CL_HEAD].e, mark))
            return -1;
    }
    if (refs->b < refs->e) {
        a->r.from_off = a->tk[refs->b].off;
        a->r.from_end = tend(a, refs->e - 1);
    }
    return an_clauses(a, sg, FILL_ALL);
}

/* ============================================================ DDL */

/* REFERENCES t in column or constraint definitions of [s,e). */
static int references(an_t *a, int s, int e)
{
    int i;

    for (i = s; i < e; i++)
        if (kw(a, i, e, K_REFERENCES) && an_table_name(a, i + 1, e, DAL_TREF_FROM) < 0)
            return -1;
    return 0;
}

/* The query of CREATE TABLE ... [AS] SELECT / CREATE VIEW ... AS SELECT:
 * the first top-level SELECT, WITH, TABLE or parenthesised query. */
static int trailing_query(an_t *a, int i, int e)
{
    static const unsigned char starts[] = {K_SELECT, K_WITH, K_TABLE, K_VALUES, 0};

    for (; i < e; i = next_tok(a, i))
        if (kw_in(a, i, e, starts) || query_inside(a, i, e))
            return an_query(a, i, e, 0, DAL_SCOPE_TOP);
    return 0;
}

/* CREATE TABLE after the name at i. */
static int create_table_rest(an_t *a, int i, int e)
{
    if (kw(a, i, e, K_LIKE))
        return an_table_name(a, i + 1, e, DAL_TREF_FROM) < 0 ? -1 : 0;
    if (is_p(a, i, e, '(') && !query_inside(a, i, e)) {
        int close = a->link[i];
        if (kw(a, i + 1, close, K_LIKE)) {
            if (an_table_name(a, i + 2, close, DAL_TREF_FROM) < 0)
                return -1;
        } else if (references(a, i + 1, close)) {
            return -1;
        }
        i = close + 1;
    }
    return trailing_query(a, i, e);
}

/* DEFINER = user@host | CURRENT_USER[()] at i; returns the index after. */
static int skip_definer(const an_t *a, int i, int e)
{
    i += is_op(a, i + 1, e, "=") ? 3 : 1;
    while (is_p(a, i, e, '@'))
        i += 2;
    if (is_p(a, i, e, '('))
        i = a->link[i] + 1;
    return i < e ? i : e;
}

static int create_stmt(an_t *a, int i, int e)
{
    static const unsigned char flags[] = {
        K_TEMPORARY, K_UNIQUE, K_FULLTEXT, K_SPATIAL, K_ONLINE, K_OFFLINE, K_AGGREGATE, 0,
    };
    int on;

    for (;;) {
        if (kw(a, i, e, K_OR) && kw(a, i + 1, e, K_REPLACE))
            i += 2;
        else if (kw(a, i, e, K_TEMPORARY)) {
            a->r.pins |= DAL_PIN_TEMP_TABLE;
            a->r.temporary = 1;
            i++;
        } else if (kw_in(a, i, e, flags))
            i++;
        else if (kw(a, i, e, K_ALGORITHM))
            i += is_op(a, i + 1, e, "=") ? 3 : 1;
        else if (kw(a, i, e, K_DEFINER))
            i = skip_definer(a, i, e);
        else if (kw(a, i, e, K_SQL) && kw(a, i + 1, e, K_SECURITY))
            i += 3;
        else
            break;
    }
    if (kw(a, i, e, K_TABLE)) {
        i++;
        if (kw(a, i, e, K_IF) && kw(a, i + 1, e, K_NOT) && kw(a, i + 2, e, K_EXISTS))
            i += 3;
        if ((i = an_table_name(a, i, e, DAL_TREF_DDL)) < 0)
            return -1;
        return create_table_rest(a, i, e);
    }
    if (kw(a, i, e, K_INDEX) || kw(a, i, e, K_KEY)) {
        static const unsigned char onw[] = {K_ON, 0};
        on = find_kw(a, i, e, onw);
        return an_table_name(a, on + 1, e, DAL_TREF_DDL) < 0 ? -1 : 0;
    }
    if (kw(a, i, e, K_VIEW)) {
        static const unsigned char as[] = {K_AS, 0};
        if ((i = an_table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
            return -1;
        return trailing_query(a, find_kw(a, i, e, as), e);
    }
    return 0;
}

static int alter_stmt(an_t *a, int i, int e)
{
    static const unsigned char flags[] = {K_ONLINE, K_OFFLINE, K_IGNORE, 0};
    static const unsigned char not_table[] = {K_INDEX, K_KEY, K_COLUMN, K_CONSTRAINT, 0};
    int j;

    while (kw_in(a, i, e, flags))
        i++;
    if (kw(a, i, e, K_VIEW)) {
        static const unsigned char as[] = {K_AS, 0};
        if ((i = an_table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
            return -1;
        return trailing_query(a, find_kw(a, i, e, as), e);
    }
    if (!kw(a, i, e, K_TABLE))
        return 0;
    if ((i = an_table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
        return -1;
    for (; i < e; i = j) {
        j = next_tok(a, i);
        if (kw(a, i, e, K_RENAME) && !kw_in(a, i + 1, e, not_table))
            j = an_table_name(a, i + ((kw(a, i + 1, e, K_TO) || kw(a, i + 1, e, K_AS)) ? 2 : 1), e,
                           DAL_TREF_DDL);
        else if (kw(a, i, e, K_REFERENCES))
            j = an_table_name(a, i + 1, e, DAL_TREF_FROM);
        else if (kw(a, i, e, K_WITH) && kw(a, i + 1, e, K_TABLE))
            j = an_table_name(a, i + 2, e, DAL_TREF_DDL);
        if (j < 0)
            return -1;
        if (j <= i)
            j = i + 1;
    }
    return 0;
}

/* A list of table names separated by commas (DROP TABLE a, b). */
static int name_list(an_t *a, int i, int e, int role)
{
    for (;;) {
        if ((i = an_table_name(a, i, e, role)) < 0)
            return -1;
        if (!is_p(a, i, e, ','))
            return 0;
        i++;
    }
}

static int drop_stmt(an_t *a, int i, int e)
{
    static const unsigned char what[] = {K_TABLE, K_TABLES, K_VIEW, 0};

    if (kw(a, i, e, K_TEMPORARY)) {
        a->r.temporary = 1;
        i++;
    }
    if (kw_in(a, i, e, what)) {
        i++;
        if (kw(a, i, e, K_IF) && kw(a, i + 1, e, K_EXISTS))
            i += 2;
        return name_list(a, i, e, DAL_TREF_DDL);
    }
    if (kw(a, i, e, K_INDEX)) {
        static const unsigned char onw[] = {K_ON, 0};
        return an_table_name(a, find_kw(a, i, e, onw) + 1, e, DAL_TREF_DDL) < 0 ? -1 : 0;
    }
    return 0;
}

/* RENAME TABLE a TO b [, c TO d] */
static int rename_stmt(an_t *a, int i, int e)
{
    if (!kw(a, i, e, K_TABLE) && !kw(a, i, e, K_TABLES))
        return 0;
    for (i++;;) {
        if ((i = an_table_name(a, i, e, DAL_TREF_DDL)) < 0)
            return -1;
        if (kw(a, i, e, K_TO) && (i = an_table_name(a, i + 1, e, DAL_TREF_DDL)) < 0)
            return -1;
        if (!is_p(a, i, e, ','))
            return 0;
        i++;
    }
}

/* ============================================================ others */

/* SHOW CREATE TABLE t, SHOW [FULL] COLUMNS|FIELDS|INDEX|KEYS FROM t. */
static int show_stmt(an_t *a, int i, int e)
{
    static const unsigned char lists[] = {K_COLUMNS, K_FIELDS, K_INDEX, K_INDEXES, K_KEYS, 0};

    if (kw(a, i, e, K_FULL) || kw(a, i, e, K_EXTENDED))
        i++;
    if (kw(a, i, e, K_CREATE) && (kw(a, i + 1, e, K_TABLE) || kw(a, i + 1, e, K_VIEW)))
        return an_table_name(a, i + 2, e, DAL_TREF_FROM) < 0 ? -1 : 0;
    if (kw_in(a, i, e, lists) && (kw(a, i + 1, e, K_FROM) || kw(a, i + 1, e, K_IN)))
        return an_table_name(a, i + 2, e, DAL_TREF_FROM) < 0 ? -1 : 0;
    return 0;
}

/* START TRANSACTION's characteristics [i, e) include READ ONLY. */
static int read_only_txn(const an_t *a, int i, int e)
{
    for (; i + 1 < e; i++)
        if (tok_eq(a->sql, &a->tk[i], "READ") && tok_eq(a->sql, &a->tk[i + 1], "ONLY"))
            return 1;
    return 0;
}

/* EXPLAIN / DESCRIBE after the verb: of a statement or of a table. */
static int explain_stmt(an_t *a, int i, int e)
{
    static const unsigned char opts[] = {K_EXTENDED, K_PARTITIONS, K_ANALYZE, 0};
    static const unsigned char stmts[] = {
        K_SELECT, K_WITH, K_INSERT, K_REPLACE, K_UPDATE, K_DELETE, K_TABLE, 0,
    };

    for (;;) {
        if (kw_in(a, i, e, opts))
            i++;
        else if (kw(a, i, e, K_FORMAT) && is_op(a, i + 1, e, "="))
            i += 3;
        else
            break;
    }
    if (kw(a, i, e, K_FOR)) /* EXPLAIN FOR CONNECTION n */
        return 0;
    if (kw_in(a, i, e, stmts) || is_p(a, i, e, '(')) {
        if (an_statement(a, i, e))
            return -1;
        a->r.kind = DAL_SQL_OTHER;
        return 0;
    }
    return an_table_name(a, i, e, DAL_TREF_FROM) < 0 ? -1 : 0;
}

/* WITH at i: common table expressions, then SELECT, UPDATE or DELETE. */
static int with_stmt(an_t *a, int i, int e)
{
    int j = an_ctes(a, i + 1, e);

    if (j < 0)
        return -1;
    if (kw(a, j, e, K_UPDATE)) {
        a->r.kind = DAL_SQL_UPDATE;
        return update_stmt(a, j + 1, e);
    }
    if (kw(a, j, e, K_DELETE)) {
        a->r.kind = DAL_SQL_DELETE;
        return delete_stmt(a, j + 1, e);
    }
    a->r.kind = DAL_SQL_SELECT;
    return an_query(a, j, e, FILL_ALL, DAL_SCOPE_TOP);
}

int an_block_start(const an_t *a, int i, int e)
{
    static const char *const blocks[] = {"FOR", "WHILE", "LOOP", "REPEAT", NULL};
    size_t k;

    /* no other statement begins with IF or CASE */
    if (i < e && a->tk[i].type == DAL_TOK_IDENT &&
        (tok_eq(a->sql, &a->tk[i], "IF") || tok_eq(a->sql, &a->tk[i], "CASE")))
        return 1;
    /* a label: `name:` before BEGIN NOT ATOMIC and the loops */
    if (is_name(a, i, e) && is_p(a, i + 1, e, ':'))
        i += 2;
    if (kw(a, i, e, K_BEGIN) && kw(a, i + 1, e, K_NOT))
        return 1;
    if (i >= e || a->tk[i].type != DAL_TOK_IDENT)
        return 0;
    for (k = 0; blocks[k]; k++)
        if (tok_eq(a->sql, &a->tk[i], blocks[k]))
            return 1;
    return 0;
}

/*
 * A compound statement at top level runs whole on one server, as written:
 * opaque, so routing checks every word of it against the configured tables
 * (route_check_opaque), and taken for a reader and writer of user
 * variables (its SET @x and SELECT ... INTO @x), so it runs on the
 * session's pinned connection.  Nothing of it is run apart.
 */
static void block_stmt(an_t *a)
{
    a->r.kind = DAL_SQL_OTHER;
    a->r.opaque = 1;
    a->r.compound = 1;
    a->r.pins |= DAL_PIN_USER_VAR;
}

/* The statement [i,e): its kind, then the analysis that kind needs. */
int an_statement(an_t *a, int i, int e)
{
    static const unsigned char ddl[] = {K_CREATE, K_ALTER, K_DROP, K_TRUNCATE, K_RENAME, 0};
    static const unsigned char explain[] = {K_EXPLAIN, K_DESCRIBE, K_DESC, 0};
    static const unsigned char forw[] = {K_FOR, 0};
    int rc = 0, j;

    if (++a->depth > MAX_DEPTH) {
        a->depth--;
        return an_fail(a, a->tk[i].off, "statement nested too deeply");
    }
    a->r.kind = DAL_SQL_OTHER;
    if (an_block_start(a, i, e)) {
        block_stmt(a);
    } else if (kw(a, i, e, K_SELECT) || is_p(a, i, e, '(')) {
        a->r.kind = DAL_SQL_SELECT;
        rc = an_query(a, i, e, FILL_ALL, DAL_SCOPE_TOP);
    } else if (kw(a, i, e, K_WITH)) {
        rc = with_stmt(a, i, e);
    } else if (kw(a, i, e, K_INSERT) || kw(a, i, e, K_REPLACE)) {
        a->r.kind = kw(a, i, e, K_INSERT) ? DAL_SQL_INSERT : DAL_SQL_REPLACE;
        rc = insert_stmt(a, i + 1, e);
    } else if (kw(a, i, e, K_UPDATE)) {
        a->r.kind = DAL_SQL_UPDATE;
        rc = update_stmt(a, i + 1, e);
    } else if (kw(a, i, e, K_DELETE)) {
        a->r.kind = DAL_SQL_DELETE;
        rc = delete_stmt(a, i + 1, e);
    } else if (kw_in(a, i, e, ddl)) {
        a->r.kind = DAL_SQL_DDL;
        if (kw(a, i, e, K_CREATE))
            rc = create_stmt(a, i + 1, e);
        else if (kw(a, i, e, K_ALTER))
            rc = alter_stmt(a, i + 1, e);
        else if (kw(a, i, e, K_DROP))
            rc = drop_stmt(a, i + 1, e);
        else if (kw(a, i, e, K_RENAME))
            rc = rename_stmt(a, i + 1, e);
        else /* TRUNCATE [TABLE] t */
            rc = an_table_name(a, i + 1 + kw(a, i + 1, e, K_TABLE), e, DAL_TREF_DDL) < 0 ? -1 : 0;
    } else if (kw(a, i, e, K_BEGIN)) {
        a->r.kind = DAL_SQL_BEGIN;
    } else if (kw(a, i, e, K_START) && kw(a, i + 1, e, K_TRANSACTION)) {
        a->r.kind = DAL_SQL_BEGIN;
        a->r.txn_read_only = read_only_txn(a, i + 2, e);
    } else if (kw(a, i, e, K_COMMIT)) {
        a->r.kind = DAL_SQL_COMMIT;
    } else if (kw(a, i, e, K_ROLLBACK)) {
        j = i + 1 + kw(a, i + 1, e, K_WORK);
        if (!kw(a, j, e, K_TO)) /* ROLLBACK TO SAVEPOINT keeps the transaction */
            a->r.kind = DAL_SQL_ROLLBACK;
    } else if (kw(a, i, e, K_SET)) {
        /* MariaDB's SET STATEMENT var=value [, ...] FOR statement */
        if (kw(a, i + 1, e, K_STATEMENT) && (j = find_kw(a, i + 2, e, forw)) + 1 < e)
            rc = an_statement(a, j + 1, e);
        else
            a->r.kind = DAL_SQL_SET;
    } else if (kw(a, i, e, K_SHOW)) {
        a->r.kind = DAL_SQL_SHOW;
        rc = show_stmt(a, i + 1, e);
    } else if (kw_in(a, i, e, explain)) {
        rc = explain_stmt(a, i + 1, e);
    } else if (kw(a, i, e, K_TABLE)) {
        j = an_table_name(a, i + 1, e, DAL_TREF_FROM);
        rc = j < 0 ? -1 : an_tail_clauses(a, j, e, 0);
    } else {
        a->r.opaque = 1;
    }
    a->depth--;
    return rc || a->failed ? -1 : 0;
}

