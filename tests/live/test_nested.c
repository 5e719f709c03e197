/*
 * test_nested.c -- nested statements through dal, checked against MariaDB's
 * own answer on an unsharded copy.
 *
 * tests/suites/integration.sh starts four mariadbd (product_0 .. product_3, plus
 * `plain` on every server) and exports their ports in DAL_TEST_PORTS.  The
 * test lays out, through dal:
 *
 *   t_account, t_account_detail   sharded alike (mod on account_id, 4 nodes,
 *                                 8 tables) in the binding group `acct`
 *   t_status                      broadcast: a full copy on every node
 *   t_branch                      unsharded, on the first node (product_0)
 *
 * and the same seeded random rows go into ordinary tables of the same names
 * in `plain` on server 0.  Then over a thousand generated statements --
 * IN / NOT IN / EXISTS / NOT EXISTS / scalar subqueries, correlated ones,
 * derived tables (with columns renamed to another column's name), joins of
 * the bound tables on the shard key and off it, joins with the broadcast
 * and the unsharded table, self-joins, UNION [ALL], aliases that name
 * another table or the table itself, schema-qualified names, ORDER BY with
 * LIMIT ? / LIMIT ?, ? (parameters as numbers and as text), shard-key
 * conditions (=, IN, BETWEEN, literal or ?) and other conditions -- run
 * both ways.
 *
 * A statement dal runs must give the server's rows: in the same order when
 * it has an ORDER BY (every generated ORDER BY names every selected column,
 * so the order of the rows shown is total), else the same multiset.  dal
 * accepting a statement and then getting an error from a server (its
 * rewritten SQL was wrong) counts as a mismatch too.  A statement dal
 * refuses (DAL_EUNSUPPORTED, DAL_EROUTE, ...) is no failure: refusals are
 * counted, grouped by message and printed with one example each.  The test
 * fails when statements mismatch, when fewer than MIN_STATEMENTS were made,
 * or when dal accepted less than MIN_ACCEPTED_PCT percent of them (so it
 * cannot pass by refusing everything: the scope-aware router accepts about
 * 60 % of them, refusing what would need rows of several shards at once,
 * such as joins or subqueries off the shard key).
 *
 * The statements run in a child process, so a crash in dal costs the test
 * one statement (counted as a mismatch, with its text), not the whole run.
 *
 * Schema qualifiers: dal has no logical schema name; it drops the qualifier
 * in front of a sharded table (the node's connection selects its database)
 * and keeps it in front of others.  So a sharded table is written
 * `plain.t_account` in both texts (the plain server's real database; dal
 * drops it), the unsharded table `product_0.t_branch` for dal and
 * `plain.t_branch` for the server (each side's database), and the
 * broadcast table never qualified (its database differs per node).
 *
 * Every mismatch prints the seed and both texts; DAL_TEST_SEED=n replays.
 */
#include <check.h>
#include <mysql.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dal/dal.h>

#include "difftest.h"
#include "testutil.h"

#define NODES 4
#define KEYS 240             /* account ids are drawn from [0, KEYS) */
#define DETAILS 400
#define BRANCHES 60
#define STATEMENTS 1200
#define MIN_STATEMENTS 1000
#define MIN_ACCEPTED_PCT 50
#define DEFAULT_SEED 20250611u
#define MAX_PARAMS 24
#define MAX_ITEMS 8
#define MAX_REPORTS 8        /* mismatches printed in full */
#define MAX_LISTED 60        /* further mismatches listed one line each */
#define MAX_REASONS 64
#define SHOW_ROWS 8

static int ports[NODES];
static char *dir, *ini;
static unsigned long long seed = DEFAULT_SEED;

/* =========================================================== random */

#define PICK(a) (a)[dt_rnd((int)(sizeof(a) / sizeof((a)[0])))]

/* ========================================================= servers */

static char *make_ini(void)
{
    static const char *const bound[] = {"t_account", "t_account_detail"};
    char text[4096];
    size_t len = 0;
    int i;

    tu_datasources(text, sizeof text, &len, "dbS", ports, NODES, "dalpass");
    for (i = 0; i < 2; i++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "[table %s]\ndatasource = dbS\ndb_shard_num = 4\n"
                                "table_shard_num = 8\nshard_key = account_id\nstrategy = mod\n"
                                "binding = acct\n", bound[i]);
    snprintf(text + len, sizeof text - len,
             "[table t_status]\nbroadcast = true\ndatasource = dbS\ndb_shard_num = 4\n"
             "[table t_branch]\ndatasource = dbS0\n");
    return tu_write(dir, "nested.ini", text);
}

/* ============================================================== data */

static const char *const ddl[] = {
    "CREATE TABLE t_account (account_id INT NOT NULL PRIMARY KEY, amount INT NULL, "
    "status VARCHAR(8) NULL, owner VARCHAR(16) NULL)",
    "CREATE TABLE t_account_detail (detail_id INT NOT NULL PRIMARY KEY, account_id INT NOT "
    "NULL, amount INT NULL, note VARCHAR(16) NULL, KEY (account_id))",
    "CREATE TABLE t_status (status VARCHAR(8) NOT NULL PRIMARY KEY, label VARCHAR(16) NOT "
    "NULL, prio INT NOT NULL)",
    "CREATE TABLE t_branch (branch_id INT NOT NULL PRIMARY KEY, account_id INT NOT NULL, "
    "city VARCHAR(16) NULL)",
};
static const char *const table_names[] = {"t_account", "t_account_detail", "t_status",
                                          "t_branch"};

/* No two equal ignoring case: the _ci collation would tie them. */
static const char *const words[] = {"apple", "Banana", "cherry", "Date", "elder", "Fig",
                                     "grape", "kiwi", "Lemon", "mango"};
/* 'gone' is in no t_status row, so joins with it lose rows. */
static const char *const statuses[] = {"new", "open", "closed", "frozen", "gone"};

static void put_text_or_null(char *out, size_t cap, const char *w)
{
    if (w == NULL)
        snprintf(out, cap, "NULL");
    else
        snprintf(out, cap, "'%s'", w);
}

static void put_int_or_null(char *out, size_t cap, int one_in_null, int lo, int hi)
{
    if (dt_chance(one_in_null))
        snprintf(out, cap, "NULL");
    else
        snprintf(out, cap, "%d", lo + dt_rnd(hi - lo + 1));
}

/* One row, as the same INSERT for dal and for plain. */
static void insert_both(dal_t *dal, MYSQL *plain, const char *sql)
{
    tu_setup_exec(dal, NULL, sql);
    dt_direct_exec(plain, sql);
}

static void load(void)
{
    MYSQL *plain = dt_direct(ports[0], "plain");
    dal_t *dal = tu_open(ini);
    char sql[512], a[16], s[24], w[24];
    size_t i;
    int id;

    for (i = 0; i < sizeof ddl / sizeof *ddl; i++) {
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table_names[i]);
        insert_both(dal, plain, sql);
        insert_both(dal, plain, ddl[i]);
    }
    dt_seed(seed * 2654435761u + 1);
    /* amounts overlap the account ids, so a column renamed account_id
     * selects rows too */
    for (id = 0; id < KEYS; id++) {
        if (dt_chance(3))
            continue;
        put_int_or_null(a, sizeof a, 10, -20, 260);
        put_text_or_null(s, sizeof s, dt_chance(8) ? NULL : PICK(statuses));
        put_text_or_null(w, sizeof w, dt_chance(8) ? NULL : PICK(words));
        snprintf(sql, sizeof sql, "INSERT INTO t_account (account_id, amount, status, owner) "
                 "VALUES (%d, %s, %s, %s)", id, a, s, w);
        insert_both(dal, plain, sql);
    }
    for (id = 1; id <= DETAILS; id++) {
        put_int_or_null(a, sizeof a, 12, -20, 260);
        put_text_or_null(w, sizeof w, dt_chance(6) ? NULL : PICK(words));
        snprintf(sql, sizeof sql, "INSERT INTO t_account_detail (detail_id, account_id, amount, "
                 "note) VALUES (%d, %d, %s, %s)", id, dt_rnd(KEYS), a, w);
        insert_both(dal, plain, sql);
    }
    for (i = 0; i < 4; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO t_status (status, label, prio) VALUES "
                 "('%s', '%s', %zu)", statuses[i], words[(i * 3) % 10], i * 10);
        insert_both(dal, plain, sql);
    }
    for (id = 1; id <= BRANCHES; id++) {
        put_text_or_null(w, sizeof w, dt_chance(6) ? NULL : PICK(words));
        snprintf(sql, sizeof sql, "INSERT INTO t_branch (branch_id, account_id, city) VALUES "
                 "(%d, %d, %s)", id, dt_rnd(KEYS), w);
        insert_both(dal, plain, sql);
    }
    dal_close(dal);
    mysql_close(plain);
}

/* ============================================================== rows */

/* 0 if dal's rows are the server's (in order when ordered, else as a
 * multiset: both get sorted); else why not. */
static int differs(int ordered, dt_rows_t *d, dt_rows_t *p, char *why, size_t cap)
{
    unsigned int c;
    size_t i;

    if (d->ncols != p->ncols)
        return snprintf(why, cap, "dal has %u columns, the server %u", d->ncols, p->ncols), 1;
    for (c = 0; c < d->ncols; c++)
        if (strcmp(d->names[c], p->names[c]) != 0)
            return snprintf(why, cap, "column %u is '%s' in dal, '%s' on the server", c + 1,
                            d->names[c], p->names[c]), 1;
    if (d->n != p->n)
        return snprintf(why, cap, "dal returned %zu rows, the server %zu", d->n, p->n), 1;
    if (!ordered) {
        dt_rows_sort(d, d->ncols);
        dt_rows_sort(p, d->ncols);
    }
    for (i = 0; i < d->n; i++)
        for (c = 0; c < d->ncols; c++)
            if (dt_cell_cmp(d->v[i][c], p->v[i][c]) != 0)
                return snprintf(why, cap, "%s row %zu column %s: dal '%s', server '%s'",
                                ordered ? "ordered" : "sorted", i + 1, p->names[c],
                                d->v[i][c] ? d->v[i][c] : "NULL",
                                p->v[i][c] ? p->v[i][c] : "NULL"), 1;
    return 0;
}

static void print_rows(const char *who, const dt_rows_t *r)
{
    size_t i;
    unsigned int c;

    fprintf(stderr, "  %s: %zu rows\n", who, r->n);
    for (i = 0; i < r->n && i < SHOW_ROWS; i++) {
        fprintf(stderr, "    ");
        for (c = 0; c < r->ncols; c++)
            fprintf(stderr, "%s%s", c ? " | " : "", r->v[i][c] ? r->v[i][c] : "NULL");
        fprintf(stderr, "\n");
    }
    if (r->n > SHOW_ROWS)
        fprintf(stderr, "    ...\n");
}

/* ========================================================= generator */

/* A span of both texts: where a select item was written. */
typedef struct span {
    size_t dal_off, dal_len, plain_off, plain_len;
} span_t;

/* One generated statement: the text for dal (maybe with ?) and its
 * parameters, the text for the plain server (values inline). */
typedef struct query {
    dt_sb_t dal, plain;
    dal_value_t params[MAX_PARAMS];
    char texts[MAX_PARAMS][24]; /* what string parameters point to */
    size_t np;
    int use_params;
    int ordered;             /* ORDER BY naming every selected column */
    int kind;                /* index into kinds[] */
    span_t items[MAX_ITEMS]; /* the top-level select items, for ORDER BY */
    int nitems;
    int alias_no;            /* for unique generated aliases */
    int no_db_cols;          /* never schema.table.column (see gen_join) */
} query_t;

static void q_put(query_t *q, const char *fmt, ...) DAL_PRINTF(2, 3);
static void q_put(query_t *q, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    dt_sb_vput(&q->dal, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    dt_sb_vput(&q->plain, fmt, ap);
    va_end(ap);
}

/* A number: a ? for dal (an integer or, sometimes, its digits as text) and
 * the literal for the server; or the literal in both. */
static void q_int(query_t *q, long v)
{
    if (q->use_params && q->np < MAX_PARAMS && !dt_chance(4)) {
        if (dt_chance(3)) {
            snprintf(q->texts[q->np], sizeof q->texts[q->np], "%ld", v);
            q->params[q->np] = dal_str(q->texts[q->np]);
        } else {
            q->params[q->np] = dal_int(v);
        }
        q->np++;
        dt_sb_put(&q->dal, "?");
        dt_sb_put(&q->plain, "%ld", v);
        return;
    }
    q_put(q, "%ld", v);
}

static void q_word(query_t *q, const char *w)
{
    if (q->use_params && q->np < MAX_PARAMS && dt_chance(2)) {
        q->params[q->np++] = dal_str(w);
        dt_sb_put(&q->dal, "?");
        dt_sb_put(&q->plain, "'%s'", w);
        return;
    }
    q_put(q, "'%s'", w);
}

static void item_begin(query_t *q)
{
    if (q->nitems < MAX_ITEMS) {
        q->items[q->nitems].dal_off = q->dal.len;
        q->items[q->nitems].plain_off = q->plain.len;
    }
}

static void item_end(query_t *q)
{
    if (q->nitems < MAX_ITEMS) {
        q->items[q->nitems].dal_len = q->dal.len - q->items[q->nitems].dal_off;
        q->items[q->nitems].plain_len = q->plain.len - q->items[q->nitems].plain_off;
    }
    q->nitems++;
}

/* ------------------------------------------------------ tables, refs */

enum { T_ACCOUNT, T_DETAIL, T_STATUS, T_BRANCH };

static const char *const table_cols[4][4] = {
    {"account_id", "amount", "status", "owner"},
    {"detail_id", "account_id", "amount", "note"},
    {"status", "label", "prio", NULL},
    {"branch_id", "account_id", "city", NULL},
};

/* One table reference of a generated scope. */
typedef struct ref {
    int t;
    char alias[24];          /* "" when none */
    int schema;              /* written with a schema qualifier */
    int bare;                /* its columns written unqualified (the only table
                                of a scope no inner scope refers to) */
} ref_t;

static const char *ref_name(const ref_t *r)
{
    return r->alias[0] ? r->alias : table_names[r->t];
}

/* Names visible in the statement so far, so a new reference's name is
 * unique in its scope and never shadows an enclosing one (the generated
 * correlations must mean what they say). */
typedef struct names {
    const char *v[16];
    int n;
} names_t;

static int name_taken(const names_t *ns, const char *s)
{
    int i;

    for (i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], s) == 0)
            return 1;
    return 0;
}

/* A reference to table t: a short alias mostly, sometimes none, the
 * table's own name or another table's name as alias. */
static void new_ref(query_t *q, ref_t *r, int t, names_t *ns)
{
    static const char letters[] = "adsb";
    const char *other = table_names[dt_rnd(4)];
    int how = dt_rnd(16);

    r->t = t;
    r->alias[0] = '\0';
    r->bare = 0;
    r->schema = t != T_STATUS && dt_chance(5);
    if (how == 0 && !name_taken(ns, table_names[t]))
        ; /* no alias */
    else if (how == 1 && !name_taken(ns, table_names[t]))
        snprintf(r->alias, sizeof r->alias, "%s", table_names[t]);
    else if (how == 2 && !name_taken(ns, other))
        snprintf(r->alias, sizeof r->alias, "%s", other);
    else
        snprintf(r->alias, sizeof r->alias, "%c%d", letters[t], ++q->alias_no);
    if (ns->n < 16)
        ns->v[ns->n++] = ref_name(r);
}

static void schema_of(query_t *q, const ref_t *r)
{
    /* sharded: any qualifier is dropped by dal, the real one works for
     * the server; unsharded: each side's own database */
    if (r->t == T_BRANCH) {
        dt_sb_put(&q->dal, "product_0.");
        dt_sb_put(&q->plain, "plain.");
    } else {
        q_put(q, "plain.");
    }
}

/* "[schema.]table [[AS] alias]" */
static void put_tref(query_t *q, const ref_t *r)
{
    if (r->schema)
        schema_of(q, r);
    q_put(q, "%s", table_names[r->t]);
    if (r->alias[0])
        q_put(q, "%s%s", dt_chance(2) ? " AS " : " ", r->alias);
}

/* A column of r, qualified (schema.table.col now and then when that is
 * how the table was named). */
static void col(query_t *q, const ref_t *r, const char *c)
{
    if (r->bare) {
        q_put(q, "%s", c);
        return;
    }
    if (r->schema && !r->alias[0] && !q->no_db_cols && dt_chance(3))
        schema_of(q, r);
    q_put(q, "%s.%s", ref_name(r), c);
}

/* ---------------------------------------------------------- conditions */

static void sep(query_t *q, int *first)
{
    q_put(q, "%s", *first ? " WHERE " : " AND ");
    *first = 0;
}

static void key_value_list(query_t *q)
{
    int i, n = 1 + dt_rnd(5);

    q_put(q, " IN (");
    for (i = 0; i < n; i++) {
        q_put(q, "%s", i ? ", " : "");
        q_int(q, dt_rnd(KEYS + 10));
    }
    q_put(q, ")");
}

/* A condition on r's account_id (the shard key of both bound tables). */
static void key_cond(query_t *q, const ref_t *r, const char *colname)
{
    int v = dt_rnd(KEYS + 10);

    switch (dt_rnd(7)) {
    case 0: case 1:
        col(q, r, colname);
        q_put(q, " = ");
        q_int(q, v);
        return;
    case 2:
        q_int(q, v);
        q_put(q, " = ");
        col(q, r, colname);
        return;
    case 3: case 4:
        col(q, r, colname);
        key_value_list(q);
        return;
    case 5:
        col(q, r, colname);
        q_put(q, " BETWEEN ");
        q_int(q, v);
        q_put(q, " AND ");
        q_int(q, v + dt_rnd(25));
        return;
    default:
        col(q, r, colname);
        q_put(q, " %s ", dt_chance(2) ? "<" : ">=");
        q_int(q, v);
    }
}

/* A condition on a column of r other than the shard key. */
static void other_cond(query_t *q, const ref_t *r)
{
    switch (r->t) {
    case T_ACCOUNT:
        switch (dt_rnd(5)) {
        case 0:
            col(q, r, "amount");
            q_put(q, " > ");
            q_int(q, dt_rnd(200));
            return;
        case 1:
            col(q, r, "status");
            q_put(q, " = ");
            q_word(q, PICK(statuses));
            return;
        case 2:
            col(q, r, "owner");
            q_put(q, " IN (");
            q_word(q, PICK(words));
            q_put(q, ", ");
            q_word(q, PICK(words));
            q_put(q, ")");
            return;
        case 3:
            col(q, r, dt_chance(2) ? "amount" : "status");
            q_put(q, " IS %sNULL", dt_chance(2) ? "NOT " : "");
            return;
        default:
            col(q, r, "amount");
            q_put(q, " BETWEEN ");
            q_int(q, dt_rnd(100));
            q_put(q, " AND ");
            q_int(q, 100 + dt_rnd(160));
            return;
        }
    case T_DETAIL:
        switch (dt_rnd(4)) {
        case 0:
            col(q, r, "amount");
            q_put(q, " < ");
            q_int(q, dt_rnd(260));
            return;
        case 1:
            col(q, r, "note");
            q_put(q, " = ");
            q_word(q, PICK(words));
            return;
        case 2:
            col(q, r, "detail_id");
            q_put(q, " BETWEEN ");
            q_int(q, dt_rnd(DETAILS));
            q_put(q, " AND ");
            q_int(q, DETAILS / 2 + dt_rnd(DETAILS));
            return;
        default:
            col(q, r, "note");
            q_put(q, " IS NOT NULL");
            return;
        }
    case T_STATUS:
        col(q, r, "prio");
        q_put(q, " %s ", dt_chance(2) ? "<" : ">=");
        q_int(q, dt_rnd(40));
        return;
    default:
        col(q, r, "city");
        q_put(q, " <> ");
        q_word(q, PICK(words));
        return;
    }
}

/* " WHERE/AND" conditions on r: a shard-key one with one chance in
 * key_one_in, another one with one in other_one_in, now and then both
 * under OR (which narrows nothing). */
static void conds(query_t *q, const ref_t *r, int *first, int key_one_in, int other_one_in)
{
    int key = (r->t == T_ACCOUNT || r->t == T_DETAIL) && dt_chance(key_one_in);
    int other = dt_chance(other_one_in);

    if (key && other && dt_chance(6)) {
        sep(q, first);
        q_put(q, "(");
        key_cond(q, r, "account_id");
        q_put(q, " OR ");
        other_cond(q, r);
        q_put(q, ")");
        return;
    }
    if (key) {
        sep(q, first);
        key_cond(q, r, "account_id");
    }
    if (other) {
        sep(q, first);
        other_cond(q, r);
    }
}

/* ---------------------------------------------------- select lists */

/* n distinct columns of r as top-level items. */
static void select_cols(query_t *q, const ref_t *r, int n)
{
    int ncols = table_cols[r->t][3] ? 4 : 3, used = 0, i, c;

    for (i = 0; i < n && i < ncols; i++) {
        do
            c = dt_rnd(ncols);
        while (used & (1 << c));
        used |= 1 << c;
        q_put(q, "%s", q->nitems ? ", " : "");
        item_begin(q);
        col(q, r, table_cols[r->t][c]);
        item_end(q);
    }
}

/* Ends a top-level item the caller wrote after item_begin with " AS alias":
 * ORDER BY names it by its alias. */
static void aliased_item(query_t *q, const char *alias)
{
    q_put(q, " AS ");
    item_begin(q);
    q_put(q, "%s", alias);
    item_end(q);
}

/* ORDER BY every select item (sometimes after a column not selected), in
 * any order and direction, by position or by its text; then maybe LIMIT.
 * Positions only where the items cannot be named (UNION). */
static void tail(query_t *q, const ref_t *hidden, const char *hidden_col, int positions_only)
{
    int order[MAX_ITEMS], i, j, t, n = q->nitems;
    long lim, off;

    if (n > MAX_ITEMS || !dt_chance(2))
        return;
    for (i = 0; i < n; i++)
        order[i] = i;
    for (i = n - 1; i > 0; i--) {
        j = dt_rnd(i + 1);
        t = order[i], order[i] = order[j], order[j] = t;
    }
    q_put(q, " ORDER BY ");
    if (hidden != NULL && dt_chance(3)) {
        col(q, hidden, hidden_col);
        q_put(q, "%s, ", dt_chance(2) ? " DESC" : "");
    }
    for (i = 0; i < n; i++) {
        const span_t *s = &q->items[order[i]];
        q_put(q, "%s", i ? ", " : "");
        if (positions_only || dt_chance(2))
            q_put(q, "%d", order[i] + 1);
        else {
            /* copied out first: appending may move the buffer */
            char d[256], p[256];
            snprintf(d, sizeof d, "%.*s", (int)s->dal_len, q->dal.p + s->dal_off);
            snprintf(p, sizeof p, "%.*s", (int)s->plain_len, q->plain.p + s->plain_off);
            dt_sb_put(&q->dal, "%s", d);
            dt_sb_put(&q->plain, "%s", p);
        }
        q_put(q, "%s", dt_chance(2) ? " DESC" : dt_chance(2) ? " ASC" : "");
    }
    q->ordered = 1;
    if (!dt_chance(3))
        return;
    lim = dt_rnd(30);
    off = dt_rnd(40);
    q_put(q, " LIMIT ");
    switch (dt_rnd(3)) {
    case 0:
        q_int(q, lim);
        return;
    case 1:
        q_int(q, off);
        q_put(q, ", ");
        q_int(q, lim);
        return;
    default:
        q_int(q, lim);
        q_put(q, " OFFSET ");
        q_int(q, off);
    }
}

/* Items whose text is not a plain column get an alias, so the result's
 * column names do not show dal's physical table names. */
static void count_item(query_t *q)
{
    q_put(q, "%s", q->nitems ? ", " : "");
    item_begin(q);
    q_put(q, "%s", PICK(((const char *const[]){"COUNT(*)", "COUNT(*)", "COUNT(1)"})));
    aliased_item(q, "n");
}

/* ------------------------------------------------------- statements */

/* SELECT ... FROM account-or-detail o WHERE <lhs> [NOT] IN (SELECT <rhs> FROM i ...) */
static void gen_in(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t o, in;
    int first = 1, outer = dt_chance(3) ? T_DETAIL : T_ACCOUNT, variant = dt_rnd(8);
    int inner = variant < 4 ? (outer == T_ACCOUNT ? T_DETAIL : T_ACCOUNT)
                : variant < 6 ? T_STATUS : variant == 6 ? T_BRANCH : outer;

    new_ref(q, &o, outer, &ns);
    q_put(q, "SELECT ");
    if (dt_chance(6))
        count_item(q);
    else
        select_cols(q, &o, 1 + dt_rnd(3));
    q_put(q, " FROM ");
    put_tref(q, &o);
    conds(q, &o, &first, 3, 4);
    sep(q, &first);
    new_ref(q, &in, inner, &ns);
    in.bare = dt_chance(3);
    /* on the shard key (the rows meet on one shard), or on other columns */
    if (inner == T_STATUS) {
        col(q, &o, outer == T_ACCOUNT ? "status" : "note");
        q_put(q, "%s IN (SELECT ", dt_chance(3) ? " NOT" : "");
        col(q, &in, outer == T_ACCOUNT ? "status" : "label");
    } else if (variant == 1 || variant == 7) {
        col(q, &o, "amount");
        q_put(q, "%s IN (SELECT ", dt_chance(3) ? " NOT" : "");
        col(q, &in, "amount");
    } else {
        col(q, &o, "account_id");
        q_put(q, "%s IN (SELECT ", dt_chance(3) ? " NOT" : "");
        col(q, &in, "account_id");
    }
    q_put(q, " FROM ");
    put_tref(q, &in);
    {
        int f2 = 1;
        conds(q, &in, &f2, 3, 3);
        if (variant == 1 || variant == 7) { /* NOT IN with a NULL would match nothing */
            sep(q, &f2);
            col(q, &in, "amount");
            q_put(q, " IS NOT NULL");
        }
    }
    q_put(q, ")");
    tail(q, &o, table_cols[outer][1], 0);
}

/* [NOT] EXISTS (SELECT 1 FROM i WHERE i.x = o.x ...), correlated on the key
 * or on amount */
static void gen_exists(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t o, in;
    int first = 1, f2 = 1, outer = dt_chance(3) ? T_DETAIL : T_ACCOUNT;
    int inner = dt_chance(5) ? outer : (outer == T_ACCOUNT ? T_DETAIL : T_ACCOUNT);
    const char *on = dt_chance(4) ? "amount" : "account_id";

    if (dt_chance(6))
        inner = T_BRANCH;
    new_ref(q, &o, outer, &ns);
    q_put(q, "SELECT ");
    if (dt_chance(6))
        count_item(q);
    else
        select_cols(q, &o, 1 + dt_rnd(3));
    q_put(q, " FROM ");
    put_tref(q, &o);
    conds(q, &o, &first, 3, 5);
    sep(q, &first);
    new_ref(q, &in, inner, &ns);
    if (inner == T_BRANCH)
        on = "account_id";
    q_put(q, "%sEXISTS (SELECT %s FROM ", dt_chance(3) ? "NOT " : "", dt_chance(2) ? "1" : "*");
    put_tref(q, &in);
    sep(q, &f2);
    col(q, &in, on);
    q_put(q, " = ");
    col(q, &o, on);
    conds(q, &in, &f2, 4, 3);
    q_put(q, ")");
    tail(q, &o, table_cols[outer][1], 0);
}

/* Scalar subqueries: compared with, or selected as an item. */
static void gen_scalar(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t o, in;
    int first = 1, f2 = 1, variant = dt_rnd(6);

    new_ref(q, &o, T_ACCOUNT, &ns);
    q_put(q, "SELECT ");
    select_cols(q, &o, 1 + dt_rnd(2));
    if (variant == 5) {
        /* (SELECT COUNT(*) FROM detail WHERE detail.account_id = a.account_id) AS n */
        new_ref(q, &in, T_DETAIL, &ns);
        q_put(q, ", ");
        item_begin(q);
        q_put(q, "(SELECT %s FROM ", dt_chance(2) ? "COUNT(*)" : "SUM(amount)");
        put_tref(q, &in);
        sep(q, &f2);
        col(q, &in, "account_id");
        q_put(q, " = ");
        col(q, &o, "account_id");
        q_put(q, ")");
        aliased_item(q, "sub");
    }
    q_put(q, " FROM ");
    put_tref(q, &o);
    conds(q, &o, &first, 3, 5);
    if (variant == 5) {
        tail(q, &o, "account_id", 0);
        return;
    }
    sep(q, &first);
    if (variant == 0) {
        /* correlated on the key: the detail rows are on the account's shard */
        new_ref(q, &in, T_DETAIL, &ns);
        col(q, &o, "amount");
        q_put(q, " %s (SELECT %s(", dt_chance(2) ? ">=" : "=", dt_chance(2) ? "MAX" : "MIN");
        col(q, &in, "amount");
        q_put(q, ") FROM ");
        put_tref(q, &in);
        sep(q, &f2);
        col(q, &in, "account_id");
        q_put(q, " = ");
        col(q, &o, "account_id");
        q_put(q, ")");
    } else if (variant == 1) {
        /* uncorrelated: over every shard of the detail table */
        new_ref(q, &in, dt_chance(3) ? T_ACCOUNT : T_DETAIL, &ns);
        col(q, &o, "amount");
        q_put(q, " > (SELECT AVG(");
        col(q, &in, "amount");
        q_put(q, ") FROM ");
        put_tref(q, &in);
        conds(q, &in, &f2, 2, 4);
        q_put(q, ")");
    } else if (variant == 2) {
        /* the key from a detail row picked by its own id */
        new_ref(q, &in, T_DETAIL, &ns);
        col(q, &o, "account_id");
        q_put(q, " = (SELECT ");
        col(q, &in, "account_id");
        q_put(q, " FROM ");
        put_tref(q, &in);
        sep(q, &f2);
        col(q, &in, "detail_id");
        q_put(q, " = ");
        q_int(q, 1 + dt_rnd(DETAILS));
        q_put(q, ")");
    } else if (variant == 3) {
        /* the key from a subquery that itself names a key value */
        new_ref(q, &in, T_DETAIL, &ns);
        col(q, &o, "account_id");
        q_put(q, " = (SELECT MIN(");
        col(q, &in, "account_id");
        q_put(q, ") FROM ");
        put_tref(q, &in);
        sep(q, &f2);
        key_cond(q, &in, "account_id");
        q_put(q, ")");
    } else {
        new_ref(q, &in, T_STATUS, &ns);
        col(q, &o, "status");
        q_put(q, " = (SELECT ");
        col(q, &in, "status");
        q_put(q, " FROM ");
        put_tref(q, &in);
        sep(q, &f2);
        col(q, &in, "prio");
        q_put(q, " = ");
        q_int(q, 10 * dt_rnd(4));
        q_put(q, ")");
    }
    tail(q, &o, "account_id", 0);
}

/* Derived tables: FROM (SELECT ...) x with their own WHERE and outer
 * conditions on the derived columns, some renamed to another column's name. */
static void gen_derived(query_t *q)
{
    static const char *const renames[][2] = {
        {"amount", "account_id"}, {"account_id", "amount"}, {"account_id", "account_id"},
        {"amount", "amount"}, {"account_id", "id"}, {"status", "status"}, {"amount", "v"},
    };
    names_t ns = {{0}, 0};
    ref_t in;
    const char *outs[3];
    int nout = 0, first = 1, f2 = 1, i, agg = dt_chance(4);
    int xn = ++q->alias_no;

    new_ref(q, &in, dt_chance(4) ? T_DETAIL : T_ACCOUNT, &ns);
    in.bare = dt_chance(3);
    q_put(q, "SELECT ");
    if (agg) {
        /* grouped inside: by the key (one shard holds each group) or not */
        int by_key = !dt_chance(3);
        outs[nout++] = by_key ? "account_id" : "grp";
        outs[nout++] = "n";
        outs[nout++] = "total";
        for (i = 0; i < nout; i++) {
            q_put(q, "%s", i ? ", " : "");
            item_begin(q);
            q_put(q, "x%d.%s", xn, outs[i]);
            item_end(q);
        }
        q_put(q, " FROM (SELECT ");
        col(q, &in, by_key ? "account_id" : in.t == T_DETAIL ? "note" : "status");
        q_put(q, " AS %s, COUNT(*) AS n, SUM(", outs[0]);
        col(q, &in, "amount");
        q_put(q, ") AS total FROM ");
        put_tref(q, &in);
        conds(q, &in, &f2, 3, 4);
        q_put(q, " GROUP BY 1) x%d", xn);
        if (dt_chance(2)) {
            sep(q, &first);
            q_put(q, "x%d.n > ", xn);
            q_int(q, dt_rnd(3));
        }
    } else {
        int k = 1 + dt_rnd(3), chosen[3], r, j;
        const char *src;
        for (i = 0; i < k; i++) {
            r = dt_rnd((int)(sizeof renames / sizeof *renames));
            /* two items of one output name would be ambiguous */
            for (j = 0; j < nout && strcmp(outs[j], renames[r][1]) != 0; j++)
                ;
            if (j < nout)
                continue;
            chosen[nout] = r;
            outs[nout++] = renames[r][1];
        }
        for (i = 0; i < nout; i++) {
            q_put(q, "%s", i ? ", " : "");
            item_begin(q);
            q_put(q, "x%d.%s", xn, outs[i]);
            item_end(q);
        }
        q_put(q, " FROM (SELECT ");
        for (i = 0; i < nout; i++) {
            r = chosen[i];
            q_put(q, "%s", i ? ", " : "");
            /* the detail table has no status: its note stands in */
            src = in.t == T_DETAIL && strcmp(renames[r][0], "status") == 0 ? "note"
                                                                           : renames[r][0];
            col(q, &in, src);
            if (strcmp(src, renames[r][1]) != 0 || dt_chance(2))
                q_put(q, "%s%s", dt_chance(2) ? " AS " : " ", renames[r][1]);
        }
        q_put(q, " FROM ");
        put_tref(q, &in);
        conds(q, &in, &f2, 3, 3);
        q_put(q, ") %sx%d", dt_chance(2) ? "AS " : "", xn);
        /* conditions on derived columns, qualified or not: the shard
         * key's name may be another column's value here */
        for (i = 0; i < nout; i++) {
            char x[16] = "";
            if (!dt_chance(2))
                continue;
            if (dt_chance(2))
                snprintf(x, sizeof x, "x%d.", xn);
            sep(q, &first);
            if (strcmp(outs[i], "status") == 0) {
                q_put(q, "%sstatus = ", x);
                q_word(q, PICK(statuses));
            } else if (dt_chance(2)) {
                q_put(q, "%s%s = ", x, outs[i]);
                q_int(q, dt_rnd(KEYS));
            } else if (dt_chance(2)) {
                q_put(q, "%s%s", x, outs[i]);
                key_value_list(q);
            } else {
                q_put(q, "%s%s BETWEEN ", x, outs[i]);
                q_int(q, dt_rnd(KEYS));
                q_put(q, " AND ");
                q_int(q, KEYS / 2 + dt_rnd(KEYS));
            }
        }
    }
    tail(q, NULL, NULL, 0);
}

/* A derived table joined to a table on the key. */
static void gen_derived_join(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t a, in;
    int first = 1, f2 = 1, xn = ++q->alias_no;

    new_ref(q, &a, T_ACCOUNT, &ns);
    new_ref(q, &in, T_DETAIL, &ns);
    q_put(q, "SELECT ");
    select_cols(q, &a, 1 + dt_rnd(2));
    q_put(q, ", ");
    item_begin(q);
    q_put(q, "x%d.total", xn);
    item_end(q);
    q_put(q, " FROM ");
    put_tref(q, &a);
    q_put(q, " JOIN (SELECT ");
    col(q, &in, "account_id");
    q_put(q, ", SUM(");
    col(q, &in, "amount");
    q_put(q, ") AS total FROM ");
    put_tref(q, &in);
    conds(q, &in, &f2, 3, 3);
    q_put(q, " GROUP BY ");
    col(q, &in, "account_id");
    q_put(q, ") x%d ON x%d.account_id = ", xn, xn);
    col(q, &a, "account_id");
    conds(q, &a, &first, 2, 4);
    tail(q, &a, "account_id", 0);
}

/* Joins of the bound tables (ON / USING / WHERE equality; on the key or
 * not), maybe with the broadcast table; self-joins. */
static void gen_join(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t a, d, s;
    int first = 1, how = dt_rnd(5), self = dt_chance(6), bcast = dt_chance(4), on_key = !dt_chance(5);
    const char *jcol = on_key ? "account_id" : "amount";

    /* MariaDB 10.11 crashes on an unknown db.table.column next to a join
     * USING (...), which is what dal makes of plain.t_account.column on
     * a sharded table today: a test must not take the cluster down */
    q->no_db_cols = how == 2 && on_key;

    new_ref(q, &a, T_ACCOUNT, &ns);
    new_ref(q, &d, self ? T_ACCOUNT : T_DETAIL, &ns);
    if (bcast)
        new_ref(q, &s, T_STATUS, &ns);
    q_put(q, "SELECT ");
    if (dt_chance(6)) {
        count_item(q);
    } else {
        select_cols(q, &a, 1 + dt_rnd(2));
        select_cols(q, &d, 1 + dt_rnd(2));
        if (bcast) {
            q_put(q, ", ");
            item_begin(q);
            col(q, &s, "label");
            item_end(q);
        }
    }
    q_put(q, " FROM ");
    put_tref(q, &a);
    if (how == 3) {
        q_put(q, ", ");
        put_tref(q, &d);
        if (bcast) {
            q_put(q, ", ");
            put_tref(q, &s);
            sep(q, &first);
            col(q, &s, "status");
            q_put(q, " = ");
            col(q, &a, "status");
        }
        sep(q, &first);
        col(q, &a, jcol);
        q_put(q, " = ");
        col(q, &d, jcol);
    } else {
        q_put(q, "%s JOIN ", how == 4 ? " LEFT" : dt_chance(2) ? " INNER" : "");
        put_tref(q, &d);
        if (how == 2 && on_key) {
            q_put(q, " USING (account_id)");
        } else {
            q_put(q, " ON ");
            col(q, &d, jcol);
            q_put(q, " = ");
            col(q, &a, jcol);
        }
    }
    if (bcast && how != 3) {
        q_put(q, " JOIN ");
        put_tref(q, &s);
        q_put(q, " ON ");
        col(q, &s, "status");
        q_put(q, " = ");
        col(q, &a, "status");
    }
    /* the key on one side, the other or both (a self-join's two
     * references may name different keys) */
    switch (dt_rnd(4)) {
    case 0: conds(q, &a, &first, 1, 3); break;
    case 1: conds(q, &d, &first, 1, 3); break;
    case 2:
        conds(q, &a, &first, 2, 4);
        conds(q, &d, &first, 2, 4);
        break;
    default: conds(q, &a, &first, 5, 2);
    }
    if (bcast && dt_chance(3))
        conds(q, &s, &first, 1, 1);
    tail(q, &d, table_cols[d.t][0], 0);
}

/* The broadcast table or the unsharded one alone, or joined to an account. */
static void gen_others(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t o, a;
    int first = 1, t = dt_chance(2) ? T_STATUS : T_BRANCH, join = dt_chance(3);

    new_ref(q, &o, t, &ns);
    if (join)
        new_ref(q, &a, T_ACCOUNT, &ns);
    q_put(q, "SELECT ");
    select_cols(q, &o, 1 + dt_rnd(2));
    if (join)
        select_cols(q, &a, 1 + dt_rnd(2));
    q_put(q, " FROM ");
    put_tref(q, &o);
    if (join) {
        q_put(q, "%s JOIN ", dt_chance(4) ? " LEFT" : "");
        put_tref(q, &a);
        q_put(q, " ON ");
        col(q, &a, t == T_STATUS ? "status" : "account_id");
        q_put(q, " = ");
        col(q, &o, t == T_STATUS ? "status" : "account_id");
        /* the unsharded table lives on the node of account_id % 8 < 2 */
        if (t == T_BRANCH && dt_chance(2)) {
            sep(q, &first);
            col(q, &a, "account_id");
            q_put(q, " IN (");
            q_int(q, 8 * dt_rnd(KEYS / 8));
            q_put(q, ", ");
            q_int(q, 8 * dt_rnd(KEYS / 8) + 1);
            q_put(q, ")");
        } else {
            conds(q, &a, &first, 2, 3);
        }
    }
    conds(q, &o, &first, 1, 2);
    tail(q, &o, table_cols[t][0], 0);
}

/* SELECT ... UNION [ALL] SELECT ...: the two arms on the bound tables or
 * the same table, each with its own key condition. */
static void gen_union(query_t *q)
{
    names_t ns1 = {{0}, 0}, ns2 = {{0}, 0};
    ref_t r1, r2;
    int f1 = 1, f2 = 1, t1 = dt_chance(2) ? T_ACCOUNT : T_DETAIL, t2 = dt_chance(2) ? t1 : 1 - t1;
    static const char *const pairs[][2] = {{"account_id", "amount"}, {"amount", "account_id"},
                                           {"account_id", "account_id"}};
    int p = dt_rnd(3), paren = dt_chance(3), same = dt_chance(2), key = dt_rnd(KEYS - 40);

    new_ref(q, &r1, t1, &ns1);
    new_ref(q, &r2, t2, &ns2);
    r1.bare = dt_chance(3);
    r2.bare = dt_chance(3);
    q_put(q, "%sSELECT ", paren ? "(" : "");
    item_begin(q);
    col(q, &r1, pairs[p][0]);
    item_end(q);
    q_put(q, ", ");
    item_begin(q);
    col(q, &r1, "amount");
    item_end(q);
    q_put(q, " FROM ");
    put_tref(q, &r1);
    if (same) {
        /* one key value for both arms: one node can answer */
        sep(q, &f1);
        col(q, &r1, "account_id");
        q_put(q, " = ");
        q_int(q, key);
    }
    conds(q, &r1, &f1, same ? 4 : 1, 4);
    q_put(q, "%s UNION%s %sSELECT ", paren ? ")" : "", dt_chance(2) ? " ALL" : "",
          paren ? "(" : "");
    col(q, &r2, pairs[p][1]);
    q_put(q, ", ");
    col(q, &r2, "amount");
    q_put(q, " FROM ");
    put_tref(q, &r2);
    if (same) {
        sep(q, &f2);
        col(q, &r2, "account_id");
        q_put(q, " = ");
        q_int(q, dt_chance(3) ? key : key + 8 * (1 + dt_rnd(4)));
    }
    conds(q, &r2, &f2, same ? 4 : 1, 4);
    q_put(q, "%s", paren ? ")" : "");
    tail(q, NULL, NULL, 1);
}

/* Plain selects of one bound table with key and other conditions,
 * aggregates, ORDER BY + LIMIT: the baseline the nesting builds on. */
static void gen_flat(query_t *q)
{
    names_t ns = {{0}, 0};
    ref_t r;
    int first = 1;

    new_ref(q, &r, dt_chance(2) ? T_ACCOUNT : T_DETAIL, &ns);
    r.bare = dt_chance(2);
    q_put(q, "SELECT ");
    if (dt_chance(5))
        count_item(q);
    else
        select_cols(q, &r, 1 + dt_rnd(3));
    q_put(q, " FROM ");
    put_tref(q, &r);
    conds(q, &r, &first, 1, 3);
    if (dt_chance(3))
        conds(q, &r, &first, 2, 2);
    tail(q, &r, table_cols[r.t][0], 0);
}

static const struct kind {
    const char *name;
    void (*gen)(query_t *q);
    int weight;
} kinds[] = {
    {"flat", gen_flat, 1},
    {"in-subquery", gen_in, 3},
    {"exists", gen_exists, 3},
    {"scalar", gen_scalar, 3},
    {"derived", gen_derived, 3},
    {"derived-join", gen_derived_join, 1},
    {"join", gen_join, 3},
    {"broadcast/unsharded", gen_others, 2},
    {"union", gen_union, 2},
};
#define NKINDS (int)(sizeof kinds / sizeof *kinds)

static void generate(query_t *q)
{
    int total = 0, i, x;

    for (i = 0; i < NKINDS; i++)
        total += kinds[i].weight;
    x = dt_rnd(total);
    for (i = 0; x >= kinds[i].weight; i++)
        x -= kinds[i].weight;
    q->dal.len = q->plain.len = 0;
    q_put(q, "%s", "");
    q->np = 0;
    q->use_params = dt_chance(2);
    q->ordered = 0;
    q->nitems = 0;
    q->alias_no = 0;
    q->no_db_cols = 0;
    q->kind = i;
    kinds[i].gen(q);
}

/* ========================================================== refusals */

typedef struct reason {
    char key[DAL_ERROR_MSG_MAX + 24]; /* the message with numbers and quotes masked */
    char example[400];
    int count;
} reason_t;

typedef struct tally {
    int made, accepted, refused, bad;
} tally_t;

/* What the runs count, in memory shared with the child processes that run
 * the statements: a statement that crashes dal kills its child only, and
 * the next child goes on after it. */
typedef struct shared {
    tally_t all, per[NKINDS];
    reason_t reasons[MAX_REASONS];
    int nreasons, other_reasons;
    int current, current_kind;  /* the statement running now */
    char current_sql[2048];
} shared_t;

static shared_t *sh;

/* Messages name values and datasources: mask digits and quoted text so one
 * reason is one line. */
static void mask(const char *msg, char *out, size_t cap)
{
    size_t o = 0;
    char quote = 0;

    for (; *msg && o + 4 < cap; msg++) {
        if (quote) {
            if (*msg == quote) {
                quote = 0;
                out[o++] = *msg;
            }
            continue;
        }
        if (*msg == '\'' || *msg == '`') {
            quote = *msg;
            out[o++] = *msg;
            out[o++] = '.';
            out[o++] = '.';
            continue;
        }
        if (*msg >= '0' && *msg <= '9') {
            if (o == 0 || out[o - 1] != '#')
                out[o++] = '#';
            continue;
        }
        out[o++] = *msg;
    }
    out[o] = '\0';
}

static void count_refusal(int rc, const char *msg, const query_t *q)
{
    char key[sizeof sh->reasons[0].key], m[DAL_ERROR_MSG_MAX + 8];
    int i;

    mask(msg, m, sizeof m);
    snprintf(key, sizeof key, "%s: %s", dal_strerror(rc), m);
    for (i = 0; i < sh->nreasons; i++)
        if (strcmp(sh->reasons[i].key, key) == 0)
            break;
    if (i == sh->nreasons) {
        if (sh->nreasons == MAX_REASONS) {
            sh->other_reasons++;
            return;
        }
        snprintf(sh->reasons[i].key, sizeof sh->reasons[i].key, "%s", key);
        snprintf(sh->reasons[i].example, sizeof sh->reasons[i].example, "%s", q->dal.p);
        sh->nreasons++;
    }
    sh->reasons[i].count++;
}

static int reason_cmp(const void *x, const void *y)
{
    const reason_t *a = x, *b = y;

    return b->count - a->count;
}

/* ============================================================ running */

static void print_query(const query_t *q)
{
    size_t i;

    fprintf(stderr, "  dal:    %s\n", q->dal.p);
    for (i = 0; i < q->np; i++) {
        if (q->params[i].type == DAL_TYPE_STRING)
            fprintf(stderr, "    ?%zu = '%.*s' (text)\n", i + 1, (int)q->params[i].v.s.len,
                    q->params[i].v.s.ptr);
        else
            fprintf(stderr, "    ?%zu = %lld\n", i + 1, (long long)q->params[i].v.i);
    }
    fprintf(stderr, "  server: %s\n", q->plain.p);
}

/* Run q both ways and count what happened. */
static void run_one(dal_t *dal, MYSQL *plain, int n, query_t *q)
{
    tally_t *all = &sh->all, *kind = &sh->per[q->kind];
    dt_rows_t d, p;
    char why[DAL_ERROR_MSG_MAX + 192], msg[DAL_ERROR_MSG_MAX + 32];
    int rc, bad;

    if (dt_plain_rows(plain, q->plain.p, &p, msg, sizeof msg) != 0) {
        /* the generator's fault, not dal's */
        fprintf(stderr, "FATAL (seed %llu, statement %d): the server refused %s: %s\n", seed, n,
                q->plain.p, msg);
        _exit(2);
    }
    all->made++, kind->made++;
    rc = dt_dal_rows(dal, q->dal.p, q->params, q->np, &d, msg, sizeof msg);
    if (rc == DAL_EUNSUPPORTED || rc == DAL_EROUTE || rc == DAL_ESQL || rc == DAL_ESHARD) {
        all->refused++, kind->refused++;
        count_refusal(rc, msg, q);
        dt_rows_free(&p);
        return;
    }
    all->accepted++, kind->accepted++;
    if (rc != 0) {
        /* accepted, then the server rejected what dal sent it */
        snprintf(why, sizeof why, "dal failed: %s: %s", dal_strerror(rc), msg);
        bad = 1;
    } else {
        bad = differs(q->ordered, &d, &p, why, sizeof why);
    }
    if (bad) {
        all->bad++, kind->bad++;
        if (all->bad <= MAX_REPORTS) {
            fprintf(stderr, "MISMATCH (seed %llu, statement %d, %s): %s\n", seed, n,
                    kinds[q->kind].name, why);
            print_query(q);
            if (rc == 0) {
                print_rows("dal", &d);
                print_rows("server", &p);
            }
        } else if (all->bad <= MAX_REPORTS + MAX_LISTED) {
            fprintf(stderr, "MISMATCH (statement %d, %s): %s\n  %s\n", n, kinds[q->kind].name,
                    why, q->plain.p);
        }
    }
    dt_rows_free(&d);
    dt_rows_free(&p);
}

/* A child process: statements start.. of the seed's sequence (the ones
 * before are generated again, not run, so each keeps its text). */
static void run_from(int start)
{
    dal_t *dal = tu_open(ini);
    MYSQL *plain = dt_direct(ports[0], "plain");
    query_t q;
    int i;

    memset(&q, 0, sizeof q);
    dt_seed(seed ^ 0x9e3779b97f4a7c15ULL);
    for (i = 0; i < STATEMENTS; i++) {
        generate(&q);
        if (i < start)
            continue;
        sh->current = i;
        sh->current_kind = q.kind;
        snprintf(sh->current_sql, sizeof sh->current_sql, "%s", q.dal.p);
        run_one(dal, plain, i, &q);
    }
    free(q.dal.p);
    free(q.plain.p);
    mysql_close(plain);
    dal_close(dal);
    _exit(0);
}

/* Run every statement, in child processes; a child killed by a signal
 * (dal crashed) counts its statement as a mismatch and the next child
 * starts after it. */
static void run_all(void)
{
    int start = 0, status;
    pid_t pid;

    while (start < STATEMENTS) {
        fflush(NULL);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
            run_from(start);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            return;
        ck_assert_msg(WIFSIGNALED(status), "a statement runner exited with %d (see above)",
                      WEXITSTATUS(status));
        /* run_one counted it made, not yet accepted */
        sh->all.accepted++, sh->all.bad++;
        sh->per[sh->current_kind].accepted++, sh->per[sh->current_kind].bad++;
        fprintf(stderr, "MISMATCH (seed %llu, statement %d, %s): dal crashed (signal %d)\n"
                "  dal:    %s\n", seed, sh->current, kinds[sh->current_kind].name,
                WTERMSIG(status), sh->current_sql);
        start = sh->current + 1;
    }
}

START_TEST(test_nested_differential)
{
    const tally_t *all, *per;
    int i;

    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(sh, MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    run_all();
    all = &sh->all;
    per = sh->per;
    printf("nested: seed %llu: %d statements, %d accepted (%d mismatched), %d refused\n", seed,
           all->made, all->accepted, all->bad, all->refused);
    printf("nested: %-20s %6s %8s %8s %10s\n", "kind", "made", "accepted", "refused",
           "mismatched");
    for (i = 0; i < NKINDS; i++)
        printf("nested: %-20s %6d %8d %8d %10d\n", kinds[i].name, per[i].made, per[i].accepted,
               per[i].refused, per[i].bad);
    qsort(sh->reasons, (size_t)sh->nreasons, sizeof *sh->reasons, reason_cmp);
    printf("nested: refusals by reason:\n");
    for (i = 0; i < sh->nreasons; i++)
        printf("  %4d  %s\n        e.g. %s\n", sh->reasons[i].count, sh->reasons[i].key,
               sh->reasons[i].example);
    if (sh->other_reasons)
        printf("  %4d  (other reasons, not listed)\n", sh->other_reasons);
    fflush(stdout); /* a failed check ends this process without flushing */
    ck_assert_msg(all->made >= MIN_STATEMENTS, "only %d statements generated", all->made);
    ck_assert_msg(all->accepted * 100 >= all->made * MIN_ACCEPTED_PCT,
                  "dal accepted only %d of %d statements (less than %d %%)", all->accepted,
                  all->made, MIN_ACCEPTED_PCT);
    ck_assert_msg(all->bad == 0, "%d statements gave other rows than the server (seed %llu, "
                  "see above)", all->bad, seed);
}
END_TEST

/* Before the tests, in the program's own process: the configuration and
 * the tables, loaded through dal and into the unsharded copy. */
static void setup(void)
{
    dir = tu_mkdtemp();
    ini = make_ini();
    load();
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
    free(ini);
}

static Suite *nested_suite(void)
{
    Suite *s = suite_create("nested");
    TCase *tc = tcase_create("differential");

    tcase_set_timeout(tc, 600);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_nested_differential);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    dt_start("nested", ports, &seed);
    return tu_run(nested_suite(), CK_FORK_GETENV);
}
