/*
 * merge.c -- the merge spec and the node edits of merging the rows of
 * several data nodes (see merge.h, docs/merging.md); the value rules are
 * merge_value.c's, the execution result_merge.c's.
 */
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "merge.h"
#include "sql_lex.h"
#include "value.h"

/* Names longer than this are not compared as columns (MySQL allows 64). */
#define NAME_MAX_LEN 256

/* How much of a construct a message quotes. */
#define QUOTE_MAX 80

/* ================================================================ spans */

/* Lex sql's text[off, off+len) as tokens of the whole text, in the mode it
 * was analysed in. */
static void span_open(dal_lexer_t *lx, const dal_sql_t *sql, uint32_t off, uint32_t len)
{
    lex_init(lx, sql->text, (size_t)off + len, sql->no_backslash);
    lx->pos = off;
}

/* The next token that is not a comment or an executable-comment marker. */
static dal_token_t span_next(dal_lexer_t *lx)
{
    dal_token_t t;

    do
        t = lex_next(lx);
    while (t.type == DAL_TOK_COMMENT || t.type == DAL_TOK_HINT || t.type == DAL_TOK_VC_OPEN ||
           t.type == DAL_TOK_VC_CLOSE);
    return t;
}

static int is_name_tok(const dal_token_t *t)
{
    return t->type == DAL_TOK_IDENT || t->type == DAL_TOK_QIDENT;
}

static int is_punct(const char *text, const dal_token_t *t, char c)
{
    return t->type == DAL_TOK_PUNCT && t->len == 1 && text[t->off] == c;
}

/* If the span is a column reference (name, q.name, db.q.name): its last
 * name into col, the name before it into qual ("" if none), and the number
 * of names; else 0. */
static int span_column(const dal_sql_t *sql, uint32_t off, uint32_t len, char *col, char *qual)
{
    const char *text = sql->text;
    dal_lexer_t lx;
    dal_token_t t;
    int n = 0;

    span_open(&lx, sql, off, len);
    col[0] = qual[0] = '\0';
    for (;;) {
        t = span_next(&lx);
        if (!is_name_tok(&t) || n == 3)
            return 0;
        memcpy(qual, col, NAME_MAX_LEN);
        if (ident_unquote(text, &t, col, NAME_MAX_LEN) >= NAME_MAX_LEN)
            return 0;
        n++;
        t = span_next(&lx);
        if (t.type == DAL_TOK_EOF)
            return n;
        if (!is_punct(text, &t, '.'))
            return 0;
    }
}

/* Two spans with the same tokens (words compared ignoring case).  A ?
 * never equals anything: its value is not known here. */
static int spans_equal(const dal_sql_t *sql, uint32_t aoff, uint32_t alen, uint32_t boff,
                       uint32_t blen)
{
    const char *text = sql->text;
    dal_lexer_t la, lb;
    dal_token_t a, b;

    span_open(&la, sql, aoff, alen);
    span_open(&lb, sql, boff, blen);
    for (;;) {
        a = span_next(&la);
        b = span_next(&lb);
        if (a.type != b.type || a.len != b.len || a.type == DAL_TOK_PARAM ||
            a.type == DAL_TOK_ERROR)
            return 0;
        if (a.type == DAL_TOK_EOF)
            return 1;
        if (a.type == DAL_TOK_IDENT ? strncasecmp(text + a.off, text + b.off, a.len) != 0
                                    : memcmp(text + a.off, text + b.off, a.len) != 0)
            return 0;
    }
}

/* The span is exactly the word (NULL, ...). */
static int span_is_word(const dal_sql_t *sql, uint32_t off, uint32_t len, const char *word)
{
    const char *text = sql->text;
    dal_lexer_t lx;
    dal_token_t t;

    span_open(&lx, sql, off, len);
    t = span_next(&lx);
    return tok_eq(text, &t, word) && span_next(&lx).type == DAL_TOK_EOF;
}

/* The span holds the word as a bare identifier (OVER, ...). */
static int span_has_word(const dal_sql_t *sql, uint32_t off, uint32_t len, const char *word)
{
    const char *text = sql->text;
    dal_lexer_t lx;
    dal_token_t t;

    span_open(&lx, sql, off, len);
    while ((t = span_next(&lx)).type != DAL_TOK_EOF)
        if (tok_eq(text, &t, word))
            return 1;
    return 0;
}

/* Where a token starting at or after `from` ends if it is ASC or DESC,
 * else `from`: the end of an ORDER/GROUP BY item with its direction. */
static uint32_t with_direction(const dal_sql_t *sql, uint32_t from)
{
    const char *text = sql->text;
    dal_lexer_t lx;
    dal_token_t t;

    span_open(&lx, sql, from, (uint32_t)(sql->len - from));
    t = span_next(&lx);
    if (tok_eq(text, &t, "ASC") || tok_eq(text, &t, "DESC"))
        return t.off + t.len;
    return from;
}

static uint32_t order_item_end(const dal_sql_t *sql, const struct dal_sql_order *o)
{
    return with_direction(sql, o->off + o->len);
}

static int in_span(uint32_t x, uint32_t off, uint32_t len)
{
    return x >= off && x < off + len;
}

static int span_has_param(const dal_sql_t *sql, uint32_t off, uint32_t len)
{
    size_t i;

    for (i = 0; i < sql->nparams; i++)
        if (in_span(sql->param_offs[i], off, len))
            return 1;
    return 0;
}

static int span_has_tref(const dal_sql_t *sql, uint32_t off, uint32_t len)
{
    size_t i;

    for (i = 0; i < sql->ntrefs; i++)
        if (in_span(sql->trefs[i].off, off, len))
            return 1;
    return 0;
}

/* Any name in the span equal to a select item's alias. */
static int span_uses_alias(const dal_sql_t *sql, uint32_t off, uint32_t len)
{
    char name[NAME_MAX_LEN];
    dal_lexer_t lx;
    dal_token_t t;
    size_t i;

    span_open(&lx, sql, off, len);
    while ((t = span_next(&lx)).type != DAL_TOK_EOF) {
        if (!is_name_tok(&t) ||
            ident_unquote(sql->text, &t, name, sizeof name) >= sizeof name)
            continue;
        for (i = 0; i < sql->nitems; i++)
            if (sql->items[i].alias && strcasecmp(sql->items[i].alias, name) == 0)
                return 1;
    }
    return 0;
}

/* ========================================================== the builder */

typedef struct builder {
    const dal_sql_t *sql;
    const char *shard_key;   /* borrowed, may be NULL */
    dal_merge_spec_t *p;
    size_t first_star;       /* index of the first * item, or nitems */
    size_t last_star;        /* index of the last * item, or nitems */
    char **hidden;           /* texts of the hidden columns, in order */
    /* per table reference: a hidden column names it as a qualifier, so it
     * keeps its logical name as an alias on the nodes (freeze_edits) */
    unsigned char *freeze;
    dal_error_t *err;
} builder_t;

static int oom(builder_t *b)
{
    return err_set(b->err, DAL_ENOMEM, "out of memory");
}

/* Refuse a construct: the message says what and why, quoting the SQL. */
static int refuse(builder_t *b, const char *fmt, ...) DAL_PRINTF(2, 3);
static int refuse(builder_t *b, const char *fmt, ...)
{
    char msg[DAL_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(b->err, DAL_EUNSUPPORTED, "not supported over several data nodes: %s",
                   msg);
}

/* printf arguments quoting span [off, off+len) of the statement. */
#define QUOTE(b, off, len) (int)((len) < QUOTE_MAX ? (len) : QUOTE_MAX), (b)->sql->text + (off)

/* The name of the column span [off,len) if it is the shard key of the only
 * table of the statement; with several tables the name could be another's. */
static int is_shard_key(const builder_t *b, uint32_t off, uint32_t len)
{
    char col[NAME_MAX_LEN], qual[NAME_MAX_LEN];

    return b->shard_key != NULL && b->sql->ntrefs == 1 &&
           span_column(b->sql, off, len, col, qual) > 0 &&
           strcasecmp(col, b->shard_key) == 0;
}

/* The select item ORDER/GROUP BY item o names, or -1.  ORDER BY looks at
 * aliases first, GROUP BY last, as the server resolves them. */
static long find_item(const builder_t *b, const struct dal_sql_order *o, int prefer_alias)
{
    const dal_sql_t *sql = b->sql;
    char col[NAME_MAX_LEN], qual[NAME_MAX_LEN], icol[NAME_MAX_LEN], iqual[NAME_MAX_LEN];
    int n = span_column(sql, o->off, o->len, col, qual), pass;
    size_t i;

    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < sql->nitems; i++) {
            const struct dal_sql_item *it = &sql->items[i];
            int in;
            if (it->star)
                continue;
            if (pass == !prefer_alias) {
                if (n == 1 && it->alias && strcasecmp(it->alias, col) == 0)
                    return (long)i;
                continue;
            }
            in = span_column(sql, it->off, it->len, icol, iqual);
            if (n > 0 && in > 0 && strcasecmp(col, icol) == 0 &&
                (n == 1 || in == 1 || strcasecmp(qual, iqual) == 0))
                return (long)i;
            if (spans_equal(sql, o->off, o->len, it->off, it->len))
                return (long)i;
        }
    }
    return -1;
}

/* The prefix of the aliases of hidden columns: no user column or alias
 * should start with it (docs/merging.md says so). */
#define HIDDEN_ALIAS "__dal_k"

/* Where colref c begins: at its schema (db.t.col), else its qualifier. */
static uint32_t colref_start(const struct dal_sql_colref *c)
{
    return c->qual_len > 0 ? c->qual_off : c->off;
}

/*
 * Copy span [off, off+len) into out as a hidden column's text: word for
 * word, qualifiers included.  Routing renames a qualifier naming a sharded
 * table (t.a -> t_3.a) only inside the original text, never in text an
 * edit adds; so each table such a qualifier names is marked to keep its
 * logical name on the nodes as an alias (FROM t_3 AS t, see freeze_edits),
 * and the qualifier is written as that table's reference is (without a
 * schema), which the alias then matches.
 */
static void copy_for_select(builder_t *b, uint32_t off, uint32_t len, dal_buf_t *out)
{
    const dal_sql_t *sql = b->sql;
    uint32_t at = off;
    size_t i;

    for (i = 0; i < sql->ncolrefs; i++) {
        const struct dal_sql_colref *c = &sql->colrefs[i];
        const struct dal_sql_tref *r = &sql->trefs[c->tref];
        if (!in_span(c->off, off, len) || colref_start(c) < at)
            continue;
        buf_append(out, sql->text + at, colref_start(c) - at);
        buf_append(out, sql->text + r->off, r->len);
        b->freeze[c->tref] = 1;
        at = c->off + c->len;
    }
    buf_append(out, sql->text + at, off + len - at);
}

/* Append prefix + span + suffix as a hidden column (or find the same one
 * already appended) and store it in col. */
static int hidden_add(builder_t *b, const char *prefix, uint32_t off, uint32_t len,
                      const char *suffix, const char *clause, dal_merge_col_t *col)
{
    dal_buf_t t = DAL_BUF_INIT;
    size_t h, n = b->p->nhidden;
    char **v;

    if (span_has_param(b->sql, off, len))
        return refuse(b, "%s %.*s is not in the select list and holds a ? placeholder; "
                      "select it with an alias and use the alias", clause, QUOTE(b, off, len));
    if (span_has_tref(b->sql, off, len))
        return refuse(b, "%s %.*s is not in the select list and holds a subquery; "
                      "select it with an alias and use the alias", clause, QUOTE(b, off, len));
    buf_puts(&t, prefix);
    copy_for_select(b, off, len, &t);
    buf_puts(&t, suffix);
    if (t.oom)
        return oom(b);
    /* a hidden column is kept and edited in as a C string */
    if (memchr(t.data, '\0', t.len) != NULL) {
        buf_free(&t);
        return refuse(b, "%s %.*s is not in the select list and holds a NUL byte; select it "
                      "with an alias and use the alias", clause, QUOTE(b, off, len));
    }
    memset(col, 0, sizeof *col);
    col->hidden = 1;
    for (h = 0; h < n; h++) {
        if (strcmp(b->hidden[h], t.data) == 0) {
            buf_free(&t);
            col->idx = (uint32_t)h;
            return 0;
        }
    }
    v = realloc(b->hidden, (n + 1) * sizeof *v);
    if (v == NULL) {
        buf_free(&t);
        return oom(b);
    }
    b->hidden = v;
    v[n] = buf_steal(&t);
    col->idx = (uint32_t)n;
    b->p->nhidden = n + 1;
    return 0;
}

/* Where the node rows carry select item i, if its position is known:
 * before the first * it is item i, after the last * it counts back from
 * the end (when from_end is allowed: that needs the nodes' column count,
 * so it serves the merge, not the SQL the nodes get).  0, or 1 if not. */
static int item_col(const builder_t *b, size_t i, int from_end, dal_merge_col_t *col)
{
    memset(col, 0, sizeof *col);
    if (i < b->first_star) {
        col->idx = (uint32_t)i;
        return 0;
    }
    if (from_end && b->last_star < b->sql->nitems && i > b->last_star) {
        col->from_end = 1;
        col->idx = (uint32_t)(b->sql->nitems - 1 - i);
        return 0;
    }
    return 1;
}

/* resolve_key's ways to find a key that is not a known select column. */
enum { KEY_HIDDEN = 1, KEY_FROM_END = 2 };

/*
 * Where the node rows carry ORDER/GROUP BY item o: a select item, or (with
 * KEY_FROM_END) one after the last * counted from the end, or (with
 * KEY_HIDDEN) a hidden column evaluating it.  Returns 0, 1 if o is none of
 * those allowed, or an error.
 */
static int resolve_key(builder_t *b, const struct dal_sql_order *o, int prefer_alias, int ways,
                       const char *clause, dal_merge_col_t *col)
{
    const dal_sql_t *sql = b->sql;
    long i;

    memset(col, 0, sizeof *col);
    if (o->position > 0) { /* the server counts result columns, * expanded */
        col->idx = (uint32_t)(o->position - 1);
        return 0;
    }
    i = find_item(b, o, prefer_alias);
    if (i >= 0 && item_col(b, (size_t)i, (ways & KEY_FROM_END) != 0, col) == 0)
        return 0;
    if (!(ways & KEY_HIDDEN))
        return 1;
    /* after a * the item's column number is unknown: evaluate it again */
    if (i >= 0)
        return hidden_add(b, "", sql->items[i].off, sql->items[i].len, "", clause, col);
    /* a select alias is not visible inside the select list */
    if (o->column == NULL && span_uses_alias(sql, o->off, o->len))
        return refuse(b, "%s %.*s uses a select alias inside an expression; select the "
                      "expression with an alias and use that alias", clause,
                      QUOTE(b, o->off, o->len));
    return hidden_add(b, "", o->off, o->len, "", clause, col);
}

static int cols_equal(dal_merge_col_t a, dal_merge_col_t b)
{
    return a.hidden == b.hidden && a.from_end == b.from_end && a.idx == b.idx;
}

/* ORDER BY NULL: the MySQL idiom for "no order" (it skips a GROUP BY sort). */
static int order_is_null(const dal_sql_t *sql)
{
    return sql->norder_by == 1 &&
           span_is_word(sql, sql->order_by[0].off, sql->order_by[0].len, "NULL");
}

static size_t user_order_count(const dal_sql_t *sql)
{
    return order_is_null(sql) ? 0 : sql->norder_by;
}

/* Where a new ORDER BY goes: after the last of FROM, WHERE, GROUP BY and
 * HAVING (LIMIT, locking and INTO come after it). */
static uint32_t tail_end(const dal_sql_t *sql)
{
    uint32_t end = sql->from_end;
    size_t i;

    if (sql->where_len > 0 && sql->where_off + sql->where_len > end)
        end = sql->where_off + sql->where_len;
    for (i = 0; i < sql->ngroup_by; i++)
        if (order_item_end(sql, &sql->group_by[i]) > end)
            end = order_item_end(sql, &sql->group_by[i]);
    if (sql->having_len > 0 && sql->having_off + sql->having_len > end)
        end = sql->having_off + sql->having_len;
    return end;
}

/* Make the nodes sort by keys: replace the statement's ORDER BY list or
 * add one.  Select items are written as column positions, which no alias
 * or column name can capture, hidden columns by their alias (their
 * position is unknown after a *); callers give no from_end key. */
static int order_edit(builder_t *b, const dal_merge_key_t *keys, size_t n)
{
    const dal_sql_t *sql = b->sql;
    dal_buf_t t = DAL_BUF_INIT;
    uint32_t off, end;
    size_t i;

    if (sql->norder_by == 0)
        buf_puts(&t, " ORDER BY ");
    for (i = 0; i < n; i++)
        buf_printf(&t, "%s%s%" PRIu32 "%s", i ? ", " : "",
                   keys[i].col.hidden ? HIDDEN_ALIAS : "", keys[i].col.idx + 1,
                   keys[i].desc ? " DESC" : "");
    if (t.oom)
        return oom(b);
    if (sql->norder_by == 0) {
        off = end = tail_end(sql);
    } else {
        off = sql->order_by[0].off;
        end = order_item_end(sql, &sql->order_by[sql->norder_by - 1]);
    }
    return edits_add(&b->p->edits, off, end - off, buf_steal(&t)) ? oom(b) : 0;
}

/* The edit appending the hidden columns before the FROM keyword. */
static int hidden_edit(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    const struct dal_sql_item *last = &sql->items[sql->nitems - 1];
    dal_buf_t t = DAL_BUF_INIT;
    dal_lexer_t lx;
    dal_token_t tok;
    size_t h;

    span_open(&lx, sql, last->off + last->len,
              (uint32_t)(sql->len - (last->off + last->len)));
    while ((tok = span_next(&lx)).type != DAL_TOK_EOF && !tok_eq(sql->text, &tok, "FROM"))
        ;
    if (tok.type == DAL_TOK_EOF)
        return refuse(b, "a merge column must be added to the select list, but the "
                      "statement has no FROM after it");
    for (h = 0; h < b->p->nhidden; h++)
        buf_printf(&t, ", %s AS " HIDDEN_ALIAS "%zu", b->hidden[h], h + 1);
    buf_putc(&t, ' ');
    if (t.oom)
        return oom(b);
    return edits_add(&b->p->edits, tok.off, 0, buf_steal(&t)) ? oom(b) : 0;
}

/* ------------------------------------------------------------ the modes */

/* Rows pass through, k-way merged on the ORDER BY keys (concatenated
 * without ORDER BY).  Also the mode of GROUP BY on the shard key, whose
 * groups are complete on their node. */
static int plan_rows(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    size_t i, n = user_order_count(sql);
    int rc;

    if (n == 0)
        return 0;
    b->p->keys = calloc(n, sizeof *b->p->keys);
    if (b->p->keys == NULL)
        return oom(b);
    for (i = 0; i < n; i++) {
        rc = resolve_key(b, &sql->order_by[i], 1, KEY_HIDDEN | KEY_FROM_END, "ORDER BY",
                         &b->p->keys[i].col);
        if (rc != 0)
            return rc;
        b->p->keys[i].desc = sql->order_by[i].desc;
        b->p->nkeys++;
    }
    return 0;
}

/* DISTINCT: the nodes sort by the ORDER BY keys and then every other
 * column, so equal rows meet in the merge and only one is kept: memory
 * stays one row, whatever the size of the result. */
static int plan_distinct(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    size_t i, k, n = user_order_count(sql);
    dal_merge_key_t *keys;
    dal_merge_col_t col;
    int rc;

    if (b->first_star < sql->nitems)
        return refuse(b, "SELECT DISTINCT with *; name the columns");
    keys = b->p->keys = calloc(n + sql->nitems, sizeof *keys);
    if (keys == NULL)
        return oom(b);
    for (i = 0; i < n; i++) {
        const struct dal_sql_order *o = &sql->order_by[i];
        rc = resolve_key(b, o, 1, 0, "ORDER BY", &col);
        if (rc < 0)
            return rc;
        if (rc == 1 || col.idx >= sql->nitems)
            return refuse(b, "SELECT DISTINCT ... ORDER BY %.*s, which is not a select item",
                          QUOTE(b, o->off, o->len));
        keys[b->p->nkeys].col = col;
        keys[b->p->nkeys++].desc = o->desc;
    }
    for (i = 0; i < sql->nitems; i++) {
        for (k = 0; k < b->p->nkeys && keys[k].col.idx != i; k++)
            ;
        if (k == b->p->nkeys)
            keys[b->p->nkeys++].col.idx = (uint32_t)i;
    }
    b->p->distinct = 1;
    return order_edit(b, keys, b->p->nkeys);
}

/* The function word of an aggregate item whose argument is the shard key
 * after DISTINCT (SUM(DISTINCT k)): every value of it lives on one node,
 * so per-node DISTINCT sums and counts add up.  NULL if it is not one. */
static const char *distinct_key_agg(const builder_t *b, const struct dal_sql_item *it)
{
    static const char *const words[] = {"COUNT", "SUM", "AVG"};
    const char *text = b->sql->text;
    uint32_t arg_end = it->arg_off + it->arg_len;
    dal_token_t fn, open, distinct, arg, close;
    dal_lexer_t lx;
    size_t i;

    if (it->arg_len == 0 || !is_shard_key(b, it->arg_off, it->arg_len))
        return NULL;
    span_open(&lx, b->sql, it->off, it->len);
    fn = span_next(&lx);
    open = span_next(&lx);
    distinct = span_next(&lx);
    arg = span_next(&lx);
    if (fn.off != it->off || !is_punct(text, &open, '(') ||
        !tok_eq(text, &distinct, "DISTINCT") || arg.off != it->arg_off)
        return NULL;
    /* the argument is followed by the closing parenthesis, and nothing */
    span_open(&lx, b->sql, arg_end, it->off + it->len - arg_end);
    close = span_next(&lx);
    if (!is_punct(text, &close, ')') || span_next(&lx).type != DAL_TOK_EOF)
        return NULL;
    for (i = 0; i < sizeof words / sizeof *words; i++)
        if (tok_eq(text, &fn, words[i]))
            return words[i];
    return NULL;
}

/* AVG(x) -> SUM(x) plus a hidden COUNT(x) (with DISTINCT for AVG(DISTINCT
 * shard key)): partial averages cannot be averaged. */
static int avg_edits(builder_t *b, const struct dal_sql_item *it, int distinct,
                     dal_merge_col_t *count)
{
    dal_lexer_t lx;
    dal_token_t fn;

    span_open(&lx, b->sql, it->off, it->len);
    fn = span_next(&lx);
    if (fn.off != it->off || !tok_eq(b->sql->text, &fn, "AVG"))
        return refuse(b, "%.*s: AVG written in a form dal cannot rewrite",
                      QUOTE(b, it->off, it->len));
    if (edits_add(&b->p->edits, fn.off, fn.len, strdup("SUM")) != 0)
        return oom(b);
    return hidden_add(b, distinct ? "COUNT(DISTINCT " : "COUNT(", it->arg_off, it->arg_len, ")",
                      "AVG", count);
}

/* One aggregate item: how its partials combine, and AVG's node edits. */
static int plan_agg(builder_t *b, size_t i, dal_merge_agg_t *a)
{
    const struct dal_sql_item *it = &b->sql->items[i];
    const char *word = NULL;

    if (item_col(b, i, 1, &a->col) != 0)
        return refuse(b, "%.*s between two * items: its column is unknown; put it before the "
                      "first * or after the last", QUOTE(b, it->off, it->len));
    a->agg = it->agg;
    if (it->agg == DAL_AGG_COUNT_DISTINCT || it->agg == DAL_AGG_OTHER_FUNC)
        word = distinct_key_agg(b, it);
    if (it->agg == DAL_AGG_COUNT_DISTINCT && word == NULL)
        return refuse(b, "%.*s: COUNT(DISTINCT ...) adds up across nodes only for the shard "
                      "key%s%s of a single-table SELECT", QUOTE(b, it->off, it->len),
                      b->shard_key ? " " : "", b->shard_key ? b->shard_key : "");
    if (it->agg == DAL_AGG_OTHER_FUNC) /* check_items let only these through */
        a->agg = strcmp(word, "SUM") == 0 ? DAL_AGG_SUM : DAL_AGG_AVG;
    if (a->agg != DAL_AGG_AVG)
        return 0;
    return avg_edits(b, it, it->agg == DAL_AGG_OTHER_FUNC, &a->count);
}

static int plan_aggs(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    dal_merge_spec_t *p = b->p;
    size_t i;
    int rc;

    p->aggs = calloc(sql->nitems, sizeof *p->aggs);
    if (p->aggs == NULL)
        return oom(b);
    for (i = 0; i < sql->nitems; i++) {
        if (sql->items[i].agg == DAL_AGG_NONE)
            continue;
        rc = plan_agg(b, i, &p->aggs[p->naggs]);
        if (rc != 0)
            return rc;
        p->naggs++;
    }
    return 0;
}

/* Which group column a user ORDER BY key is: a select item, or a GROUP BY
 * expression (maybe hidden).  Anything else is refused: its value in a
 * merged group would be one node's partial. */
static int group_order_key(builder_t *b, const struct dal_sql_order *o, dal_merge_col_t *col)
{
    const dal_sql_t *sql = b->sql;
    int rc = resolve_key(b, o, 1, KEY_FROM_END, "ORDER BY", col);
    size_t g;

    if (rc <= 0)
        return rc;
    for (g = 0; g < sql->ngroup_by; g++) {
        if (spans_equal(sql, o->off, o->len, sql->group_by[g].off, sql->group_by[g].len)) {
            *col = b->p->group[g];
            return 0;
        }
    }
    return refuse(b, "GROUP BY ... ORDER BY %.*s, which is neither a select item nor a "
                  "GROUP BY expression; select it with an alias and order by the alias",
                  QUOTE(b, o->off, o->len));
}

static int key_in(const dal_merge_key_t *keys, size_t n, dal_merge_col_t col)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (cols_equal(keys[i].col, col))
            return 1;
    return 0;
}

/* The order of the grouped nodes' rows: the user's ORDER BY if it only
 * names group columns (then groups stream out in that order), else the
 * group columns, with the user's order applied to the finished groups. */
static int plan_group_order(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    dal_merge_spec_t *p = b->p;
    size_t i, g, n = user_order_count(sql);
    dal_merge_key_t *user = calloc(n + 1, sizeof *user);
    int streaming = 1, rc = 0;

    p->keys = calloc(n + p->ngroup, sizeof *p->keys);
    if (user == NULL || p->keys == NULL) {
        rc = oom(b);
        goto done;
    }
    for (i = 0; i < n && rc == 0; i++) {
        rc = group_order_key(b, &sql->order_by[i], &user[i].col);
        user[i].desc = sql->order_by[i].desc;
        for (g = 0; g < p->ngroup && !cols_equal(p->group[g], user[i].col); g++)
            ;
        streaming = streaming && g < p->ngroup;
    }
    if (rc != 0)
        goto done;
    if (streaming) {
        memcpy(p->keys, user, n * sizeof *user);
        p->nkeys = n;
    } else {
        p->final = user;
        p->nfinal = n;
        user = NULL;
    }
    for (g = 0; g < p->ngroup; g++)
        if (!key_in(p->keys, p->nkeys, p->group[g]))
            p->keys[p->nkeys++].col = p->group[g];
    rc = order_edit(b, p->keys, p->nkeys);
done:
    free(user);
    return rc;
}

/* Aggregates and GROUP BY: the nodes send partial groups sorted by the
 * group columns; equal groups of all nodes meet in the merge and combine. */
static int plan_groups(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    dal_merge_spec_t *p = b->p;
    size_t g;
    int rc;

    p->aggregate = 1;
    rc = plan_aggs(b);
    if (rc == 0 && sql->ngroup_by == 0 && p->naggs < sql->nitems) {
        p->has_rows = 1;
        rc = hidden_add(b, "COUNT(*)", 0, 0, "", "", &p->rows);
    }
    if (rc != 0 || sql->ngroup_by == 0)
        return rc;
    p->group = calloc(sql->ngroup_by, sizeof *p->group);
    if (p->group == NULL)
        return oom(b);
    for (g = 0; g < sql->ngroup_by; g++) {
        rc = resolve_key(b, &sql->group_by[g], 0, KEY_HIDDEN, "GROUP BY", &p->group[g]);
        if (rc != 0)
            return rc;
        p->ngroup++;
    }
    return plan_group_order(b);
}

/* ------------------------------------------------------------ the checks */

/* GROUP BY the shard key: every group lives on one node, so the nodes'
 * groups are final and anything (HAVING, GROUP_CONCAT, ...) is exact. */
static int groups_local(const builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    size_t g;

    for (g = 0; g < sql->ngroup_by; g++) {
        const struct dal_sql_order *o = &sql->group_by[g];
        size_t pos = (size_t)o->position;
        if (pos > 0 && pos <= b->first_star && pos <= sql->nitems) {
            if (is_shard_key(b, sql->items[pos - 1].off, sql->items[pos - 1].len))
                return 1;
        } else if (pos == 0 && is_shard_key(b, o->off, o->len)) {
            return 1;
        }
    }
    return 0;
}

static int check_items(builder_t *b, int local)
{
    const dal_sql_t *sql = b->sql;
    size_t i;

    for (i = 0; i < sql->nitems; i++) {
        const struct dal_sql_item *it = &sql->items[i];
        if (span_has_word(sql, it->off, it->len, "OVER"))
            return refuse(b, "window function %.*s", QUOTE(b, it->off, it->len));
        if (it->agg == DAL_AGG_OTHER_FUNC && !local && distinct_key_agg(b, it) == NULL)
            return refuse(b, "%.*s: only COUNT, SUM, MIN, MAX and AVG of a value merge "
                          "(not GROUP_CONCAT, STDDEV, nor an aggregate inside an expression; "
                          "SUM/AVG(DISTINCT ...) only of the shard key%s%s of a single-table "
                          "SELECT) unless the statement groups by the shard key",
                          QUOTE(b, it->off, it->len), b->shard_key ? " " : "",
                          b->shard_key ? b->shard_key : "");
    }
    return 0;
}

static int any_aggregate(const dal_sql_t *sql)
{
    size_t i;

    for (i = 0; i < sql->nitems; i++)
        if (sql->items[i].agg != DAL_AGG_NONE)
            return 1;
    return 0;
}

static int span_has_colref(const dal_sql_t *sql, uint32_t off, uint32_t len)
{
    size_t i;

    for (i = 0; i < sql->ncolrefs; i++)
        if (in_span(sql->colrefs[i].off, off, len))
            return 1;
    return 0;
}

/* AVG(DISTINCT x): the analysis classes it as another aggregate. */
static int starts_with_avg(const dal_sql_t *sql, const struct dal_sql_item *it)
{
    dal_lexer_t lx;
    dal_token_t t;

    span_open(&lx, sql, it->off, it->len);
    t = span_next(&lx);
    return tok_eq(sql->text, &t, "AVG");
}

/* The name the server would give item i if the node's text differs from
 * the statement's there (see merge_item_names): NULL if it does not
 * (an alias, a plain column, no renamed qualifier and no AVG), else 1
 * with *out owned by the caller; -1 without memory. */
static int item_name(const dal_sql_t *sql, size_t i, int aggregated, char **out)
{
    const struct dal_sql_item *it = &sql->items[i];
    char col[NAME_MAX_LEN], qual[NAME_MAX_LEN];
    int avg = it->agg == DAL_AGG_AVG ||
              (it->agg == DAL_AGG_OTHER_FUNC && it->arg_len > 0 && starts_with_avg(sql, it));

    *out = NULL;
    if (it->star || it->alias != NULL || span_column(sql, it->off, it->len, col, qual) > 0 ||
        !((aggregated && avg) || span_has_colref(sql, it->off, it->len)))
        return 0;
    *out = strndup(sql->text + it->off, it->len);
    return *out != NULL ? 1 : -1;
}

int merge_item_names(const dal_sql_t *sql, int aggregated, char ***out, dal_error_t *err)
{
    char **names = calloc(sql->nitems + 1, sizeof *names);
    size_t i;

    *out = names;
    if (names == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    /* after a * the column of an item is unknown */
    for (i = 0; i < sql->nitems && !sql->items[i].star; i++)
        if (item_name(sql, i, aggregated, &names[i]) < 0)
            return err_set(err, DAL_ENOMEM, "out of memory");
    return 0;
}

/* The names of the items after the last * (tail_names in merge.h): they
 * are the last visible columns. */
static int tail_names(builder_t *b, int aggregated)
{
    const dal_sql_t *sql = b->sql;
    size_t i, n = b->last_star < sql->nitems ? sql->nitems - 1 - b->last_star : 0;

    if (n == 0)
        return 0;
    b->p->tail_names = calloc(n, sizeof *b->p->tail_names);
    if (b->p->tail_names == NULL)
        return oom(b);
    b->p->ntail = n;
    for (i = 0; i < n; i++)
        if (item_name(sql, b->last_star + 1 + i, aggregated, &b->p->tail_names[i]) < 0)
            return oom(b);
    return 0;
}

/* Pack names (nitems entries, NULL or owned text) into one block. */
static dal_sql_names_t *names_pack(char **names, size_t n)
{
    size_t bytes = sizeof(dal_sql_names_t) + n * sizeof(char *), i;
    dal_sql_names_t *b;
    char *p;

    for (i = 0; i < n; i++)
        if (names[i] != NULL)
            bytes += strlen(names[i]) + 1;
    b = malloc(bytes);
    if (b == NULL)
        return NULL;
    b->n = n;
    b->nset = 0;
    p = (char *)&b->v[n];
    for (i = 0; i < n; i++) {
        b->v[i] = NULL;
        if (names[i] == NULL)
            continue;
        b->v[i] = strcpy(p, names[i]);
        p += strlen(p) + 1;
        b->nset++;
    }
    return b;
}

const dal_sql_names_t *merge_cached_names(const dal_sql_t *sql)
{
    dal_sql_t *m = (dal_sql_t *)sql; /* only the lazily made field changes, atomically */
    dal_sql_names_t *b = atomic_load(&m->names), *expected = NULL;
    char **names = NULL;
    size_t i;

    if (b != NULL)
        return b;
    if (merge_item_names(sql, 0, &names, NULL) == 0)
        b = names_pack(names, sql->nitems);
    for (i = 0; names != NULL && i < sql->nitems; i++)
        free(names[i]);
    free(names);
    if (b == NULL)
        return NULL;
    /* two threads may race here: the first one's block stays */
    if (!atomic_compare_exchange_strong(&m->names, &expected, b)) {
        free(b);
        return expected;
    }
    return b;
}

/* Where a table reference is followed by PARTITION (...) or FOR
 * SYSTEM_TIME, an alias cannot go right after its name. */
static int alias_fits_after(const dal_sql_t *sql, const struct dal_sql_tref *r)
{
    dal_lexer_t lx;
    dal_token_t t;

    span_open(&lx, sql, r->off + r->len, (uint32_t)(sql->len - (r->off + r->len)));
    t = span_next(&lx);
    if (tok_eq(sql->text, &t, "PARTITION"))
        return 0;
    if (!tok_eq(sql->text, &t, "FOR"))
        return 1;
    t = span_next(&lx);
    return !tok_eq(sql->text, &t, "SYSTEM_TIME");
}

/* Inside the span an edit of the spec replaces (which drops its text). */
static int replaced(const dal_edits_t *e, uint32_t x)
{
    size_t i;

    for (i = 0; i < e->n; i++)
        if (e->items[i].len > 0 && in_span(x, e->items[i].off, e->items[i].len))
            return 1;
    return 0;
}

/*
 * A hidden column copied `t.a` (copy_for_select): on the nodes table
 * reference t gets its own logical name as an alias (FROM t_3 AS t), and
 * every qualifier naming that reference, in its scope or a nested one,
 * stays t (an edit over it keeps routing from renaming it to t_3, and drops
 * a schema before it as routing would), so the hidden column and the rest
 * of the statement see the same table.  The alias insertions go first in
 * the spec's edits: at one offset they must come before the ORDER BY an
 * edit may add after the last table.
 */
static int freeze_edits(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    dal_edits_t aliases = {NULL, 0}, *e = &b->p->edits;
    char *t;
    size_t i;
    int rc = 0;

    for (i = 0; i < sql->ncolrefs && rc == 0; i++) {
        const struct dal_sql_colref *c = &sql->colrefs[i];
        const struct dal_sql_tref *r = &sql->trefs[c->tref];
        uint32_t at = colref_start(c);
        if (b->freeze[c->tref] && !replaced(e, c->off))
            rc = edits_add(e, at, c->off + c->len - at, strndup(sql->text + r->off, r->len))
                     ? oom(b) : 0;
    }
    for (i = 0; i < sql->ntrefs && rc == 0; i++) {
        const struct dal_sql_tref *r = &sql->trefs[i];
        if (!b->freeze[i] || r->alias != NULL) /* colrefs name no aliased table */
            continue;
        if (!alias_fits_after(sql, r))
            rc = refuse(b, "a merge column names table %.*s, whose reference has PARTITION or "
                        "FOR SYSTEM_TIME; give the table an alias", QUOTE(b, r->off, r->len));
        else if (asprintf(&t, " AS %.*s", (int)r->len, sql->text + r->off) < 0 ||
                 edits_add(&aliases, r->off + r->len, 0, t) != 0)
            rc = oom(b);
    }
    if (rc == 0 && aliases.n > 0) {
        dal_edit_t *v = realloc(aliases.items, (aliases.n + e->n) * sizeof *v);
        if (v == NULL) {
            rc = oom(b);
        } else {
            memcpy(v + aliases.n, e->items, e->n * sizeof *v);
            free(e->items);
            e->items = v;
            e->n += aliases.n;
            aliases.items = NULL;
            aliases.n = 0;
        }
    }
    edits_clear(&aliases);
    return rc;
}

static int any_frozen(const builder_t *b)
{
    size_t i;

    for (i = 0; i < b->sql->ntrefs; i++)
        if (b->freeze[i])
            return 1;
    return 0;
}

static int plan_select(builder_t *b)
{
    const dal_sql_t *sql = b->sql;
    int local, aggregated, rc;
    size_t i;

    if (sql->has_union)
        return refuse(b, "UNION, EXCEPT or INTERSECT");
    if (sql->group_with_rollup)
        return refuse(b, "GROUP BY ... WITH ROLLUP");
    if (sql->nitems == 0)
        return refuse(b, "a SELECT without a select list dal can read");
    for (b->first_star = 0; b->first_star < sql->nitems && !sql->items[b->first_star].star;
         b->first_star++)
        ;
    b->last_star = sql->nitems;
    for (i = sql->nitems; i-- > b->first_star && b->last_star == sql->nitems;)
        if (sql->items[i].star)
            b->last_star = i;
    b->freeze = calloc(sql->ntrefs + 1, 1);
    if (b->freeze == NULL)
        return oom(b);
    local = groups_local(b);
    rc = check_items(b, local);
    if (rc != 0)
        return rc;
    if (sql->has_having && !local)
        return refuse(b, "HAVING (the nodes would filter partial groups) unless the "
                      "statement groups by the shard key");
    aggregated = !local && (sql->ngroup_by > 0 || any_aggregate(sql));
    if (sql->distinct && (sql->ngroup_by > 0 || aggregated))
        return refuse(b, "SELECT DISTINCT together with GROUP BY or aggregates");
    if (sql->has_limit) {
        b->p->limit = aggregated ? DAL_MERGE_LIMIT_DROP : DAL_MERGE_LIMIT_WIDEN;
        b->p->limit_off = sql->limit_off;
        b->p->limit_len = sql->limit_len;
    }
    rc = merge_item_names(sql, aggregated, &b->p->names, b->err);
    b->p->nnames = b->p->names ? sql->nitems : 0;
    if (rc == 0)
        rc = tail_names(b, aggregated);
    if (rc != 0)
        return rc;
    if (aggregated)
        rc = plan_groups(b);
    else if (sql->distinct)
        rc = plan_distinct(b);
    else
        rc = plan_rows(b);
    if (rc == 0 && b->p->nhidden > 0)
        rc = hidden_edit(b);
    if (rc == 0 && any_frozen(b))
        rc = freeze_edits(b);
    return rc;
}

void merge_spec_free(dal_merge_spec_t *p)
{
    size_t i;

    if (p == NULL)
        return;
    for (i = 0; i < p->nnames; i++)
        free(p->names[i]);
    free(p->names);
    for (i = 0; i < p->ntail; i++)
        free(p->tail_names[i]);
    free(p->tail_names);
    free(p->keys);
    free(p->group);
    free(p->aggs);
    free(p->final);
    edits_clear(&p->edits);
    free(p);
}

int merge_spec_build(const dal_sql_t *sql, const char *shard_key, dal_merge_spec_t **out,
                     dal_error_t *err)
{
    builder_t b;
    size_t h;
    int rc = 0;

    *out = NULL;
    memset(&b, 0, sizeof b);
    b.sql = sql;
    b.shard_key = shard_key;
    b.err = err;
    b.p = calloc(1, sizeof *b.p);
    if (b.p == NULL)
        return oom(&b);
    if (sql->kind == DAL_SQL_SELECT)
        rc = plan_select(&b);
    else if ((sql->kind == DAL_SQL_UPDATE || sql->kind == DAL_SQL_DELETE) && sql->has_limit)
        rc = refuse(&b, "%s ... LIMIT (every node would change up to LIMIT rows)",
                    sql_kind_name(sql->kind));
    if (rc == 0)
        edits_sort(&b.p->edits);
    for (h = 0; h < b.p->nhidden; h++)
        free(b.hidden[h]);
    free(b.hidden);
    free(b.freeze);
    if (rc != 0) {
        merge_spec_free(b.p);
        return rc;
    }
    *out = b.p;
    return 0;
}

/* ================================================================ LIMIT */

/* The value of a LIMIT operand: a number literal or a ? parameter (an
 * integer, or text holding one: value_as_count). */
static int limit_value(const dal_sql_t *sql, const dal_sql_opnd_t *o, const dal_value_t *params,
                       size_t nparams, uint64_t *v, dal_error_t *err)
{
    char text[32], *end;
    size_t len;

    if (o->kind == DAL_OPND_PARAM) {
        const dal_value_t *x = o->param_index >= 0 && (size_t)o->param_index < nparams
                                   ? &params[o->param_index] : NULL;
        char shown[64];

        if (x != NULL && value_as_count(x, v) == 0)
            return 0;
        return err_set(err, DAL_EINVAL, "LIMIT parameter %d must be a non-negative integer "
                       "(or its decimal digits as text), not %s", o->param_index + 1,
                       x != NULL ? value_describe(x, shown, sizeof shown) : "missing");
    }
    if (o->kind == DAL_OPND_LITERAL && o->lit_type == DAL_TOK_NUMBER && !o->negative &&
        sql_literal_text(sql->text, o, text, sizeof text, &len) == 0 && len < sizeof text &&
        text[0] >= '0' && text[0] <= '9') {
        errno = 0;
        *v = strtoull(text, &end, 10);
        if (errno == 0 && *end == '\0')
            return 0;
    }
    return err_set(err, DAL_EUNSUPPORTED, "LIMIT %.*s over several data nodes: only "
                   "integer literals and ? parameters can be merged",
                   (int)(o->len < QUOTE_MAX ? o->len : QUOTE_MAX), sql->text + o->off);
}

/* Read the LIMIT operands into p and make the clause the nodes get. */
static int limit_edit(dal_merge_spec_t *p, const dal_sql_t *sql, const dal_value_t *params,
                      size_t nparams, dal_edits_t *out, dal_error_t *err)
{
    uint64_t total;
    char *text;
    int rc;

    p->offset = 0;
    rc = sql->limit_has_offset
             ? limit_value(sql, &sql->limit_offset, params, nparams, &p->offset, err) : 0;
    if (rc == 0)
        rc = limit_value(sql, &sql->limit_count, params, nparams, &p->count, err);
    if (rc != 0)
        return rc;
    p->limit_bound = 1;
    /* every node sends its first offset+count rows: enough for any merge */
    total = p->count > UINT64_MAX - p->offset ? UINT64_MAX : p->offset + p->count;
    if (p->limit == DAL_MERGE_LIMIT_DROP)
        text = strdup("");
    else if (asprintf(&text, "LIMIT %" PRIu64, total) < 0)
        text = NULL;
    if (edits_add(out, p->limit_off, p->limit_len, text) != 0)
        return err_set(err, DAL_ENOMEM, "out of memory");
    return 0;
}

int merge_node_edits(dal_merge_spec_t *p, const dal_sql_t *sql, const dal_value_t *params,
                     size_t nparams, dal_edits_t *out, dal_error_t *err)
{
    size_t i;
    int rc = 0;

    edits_clear(out);
    for (i = 0; i < p->edits.n && rc == 0; i++)
        rc = edits_add(out, p->edits.items[i].off, p->edits.items[i].len,
                      strdup(p->edits.items[i].text));
    if (rc != 0)
        rc = err_set(err, DAL_ENOMEM, "out of memory");
    if (rc == 0 && p->limit != DAL_MERGE_LIMIT_NONE)
        rc = limit_edit(p, sql, params, nparams, out, err);
    if (rc == 0) {
        edits_sort(out);
        if (edits_coalesce(out) != 0)
            rc = err_set(err, DAL_ENOMEM, "out of memory");
    }
    if (rc != 0)
        edits_clear(out);
    return rc;
}
