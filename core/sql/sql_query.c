/*
 * sql_query.c -- query blocks: table lists, conditions, clauses, SELECT and
 * set operations, each a scope (sql.h).  See sql_int.h.
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

/* ============================================================ expressions */

/* Scan an expression for subqueries: the only way an expression can name a
 * table.  Everything else in it is left to the server. */
int an_scan_expr(an_t *a, int i, int e)
{
    for (; i < e && !a->failed; i++) {
        if (subquery_at(a, i, e)) {
            if (an_query(a, i + 1, a->link[i], 0, DAL_SCOPE_SUBQUERY))
                return -1;
            i = a->link[i];
        }
    }
    return a->failed ? -1 : 0;
}

/* If [i,e) starts with a column reference (name, q.name or db.q.name) that
 * is not a function call, the index after it; else -1. */
int an_colref_end(const an_t *a, int i, int e)
{
    int parts = 1;

    if (!is_name(a, i, e) || kw_in(a, i, e, an_literal_words))
        return -1;
    while (parts < 3 && is_p(a, i + 1, e, '.') && is_name(a, i + 2, e)) {
        i += 2;
        parts++;
    }
    i++;
    if (is_p(a, i, e, '(') || is_p(a, i, e, '.'))
        return -1;
    return i;
}

/* ============================================================ table refs */

int an_add_tref(an_t *a, int qual, int name, int role, int alias)
{
    struct dal_sql_tref *t = an_vpush(a, &a->trefs, sizeof *t);

    if (!t)
        return -1;
    t->off = a->tk[name].off;
    t->len = a->tk[name].len;
    if (qual >= 0) {
        t->qual_off = a->tk[qual].off;
        t->qual_len = tend(a, qual + 1) - a->tk[qual].off; /* through the dot */
        a->tflag[qual] |= TF_TABLE;
    }
    a->tflag[name] |= TF_TABLE;
    t->role = role;
    t->scope = a->scope;
    if (!(t->name = an_tok_name(a, name)))
        return -1;
    if (alias >= 0 && !(t->alias = an_alias_text(a, alias)))
        return -1;
    return 0;
}

/* A possibly qualified name at i: sets *qual (or -1) and *name (or -1 when
 * there is no name at i) and returns the index after it. */
int an_qname(const an_t *a, int i, int e, int *qual, int *name)
{
    *qual = -1;
    *name = -1;
    if (!is_name(a, i, e))
        return i;
    if (is_p(a, i + 1, e, '.') && is_name(a, i + 2, e)) {
        *qual = i;
        *name = i + 2;
        return i + 3;
    }
    *name = i;
    return i + 1;
}

/* Record the table named at i, if any.  Returns the index after the name,
 * or -1 on error. */
int an_table_name(an_t *a, int i, int e, int role)
{
    int q, n, j = an_qname(a, i, e, &q, &n);

    if (n >= 0 && an_add_tref(a, q, n, role, -1))
        return -1;
    return j;
}

/* Words that end a table factor, so cannot be its alias. */
static const unsigned char not_alias[] = {
    K_ON, K_USING, K_JOIN, K_INNER, K_CROSS, K_LEFT, K_RIGHT, K_FULL, K_NATURAL,
    K_STRAIGHT_JOIN, K_OUTER, K_WHERE, K_GROUP, K_ORDER, K_HAVING, K_LIMIT, K_UNION,
    K_EXCEPT, K_INTERSECT, K_FOR, K_LOCK, K_SET, K_USE, K_IGNORE, K_FORCE, K_PARTITION,
    K_WINDOW, K_INTO, K_VALUES, K_VALUE, K_SELECT, K_FROM, K_AS, K_RETURNING, K_WITH,
    K_TO, K_LIKE, K_OJ, 0,
};

/* [AS] alias at i.  Sets *alias to its token or -1; returns the index after. */
static int table_alias(const an_t *a, int i, int e, int *alias)
{
    *alias = -1;
    if (kw(a, i, e, K_AS)) {
        if (is_name(a, i + 1, e) || is_type(a, i + 1, e, DAL_TOK_STRING)) {
            *alias = i + 1;
            return i + 2;
        }
        return i + 1;
    }
    if (is_type(a, i, e, DAL_TOK_QIDENT) ||
        (is_type(a, i, e, DAL_TOK_IDENT) && !kw_in(a, i, e, not_alias))) {
        *alias = i;
        return i + 1;
    }
    return i;
}

/* USE|IGNORE|FORCE INDEX|KEY [FOR JOIN|ORDER BY|GROUP BY] (list), repeated. */
static int index_hints(const an_t *a, int i, int e)
{
    static const unsigned char verbs[] = {K_USE, K_IGNORE, K_FORCE, 0};
    static const unsigned char what[] = {K_INDEX, K_KEY, 0};

    while (kw_in(a, i, e, verbs) && kw_in(a, i + 1, e, what)) {
        i += 2;
        if (kw(a, i, e, K_FOR))
            i += kw(a, i + 1, e, K_JOIN) ? 2 : 3;
        if (is_p(a, i, e, '('))
            i = a->link[i] + 1;
    }
    return i < e ? i : e;
}

enum { JOIN_INNER = 0, JOIN_LEFT = 1, JOIN_RIGHT = 2, JOIN_FULL = 3, JOIN_NATURAL = 4 };

/* A join operator at i ([NATURAL] [INNER|CROSS|LEFT|RIGHT|FULL [OUTER]] JOIN,
 * STRAIGHT_JOIN): the index after it, or 0 if there is none.  *how gets the
 * JOIN_* bits: which sides may be all NULL, and NATURAL. */
static int join_op(const an_t *a, int i, int e, int *how)
{
    int h = JOIN_INNER;

    if (kw(a, i, e, K_STRAIGHT_JOIN)) {
        *how = h;
        return i + 1;
    }
    if (kw(a, i, e, K_NATURAL)) {
        h |= JOIN_NATURAL;
        i++;
    }
    if (kw(a, i, e, K_INNER) || kw(a, i, e, K_CROSS)) {
        i++;
    } else if (kw(a, i, e, K_LEFT) || kw(a, i, e, K_RIGHT) || kw(a, i, e, K_FULL)) {
        h |= kw(a, i, e, K_LEFT) ? JOIN_LEFT : kw(a, i, e, K_RIGHT) ? JOIN_RIGHT : JOIN_FULL;
        i++;
        if (kw(a, i, e, K_OUTER))
            i++;
    }
    *how = h;
    return kw(a, i, e, K_JOIN) ? i + 1 : 0;
}

/* The end of an ON condition: the next top-level ',', ON or join operator. */
static int on_end(const an_t *a, int i, int e)
{
    int how;

    while (i < e && !is_p(a, i, e, ',') && !kw(a, i, e, K_ON) && !join_op(a, i, e, &how))
        i = next_tok(a, i);
    return i;
}

static int conds(an_t *a, int s, int e, int level, int top);

/* Mark table references [t0,t1) and scopes [s0,s1) as on the NULL side of
 * an outer join. */
static void mark_null_side(an_t *a, size_t t0, size_t t1, size_t s0, size_t s1)
{
    struct dal_sql_tref *t = a->trefs.v;
    struct dal_sql_scope *sc = a->scopes.v;

    for (; t0 < t1; t0++)
        t[t0].null_side = 1;
    for (; s0 < s1; s0++)
        sc[s0].null_side = 1;
}

/* USING (c, ...) at i after the table factor whose references start at
 * tref index tf: for each column a col = col condition between that table
 * (when the factor is one table) and whichever earlier table has it. */
static int using_links(an_t *a, int i, int e, size_t tf)
{
    const struct dal_sql_tref *t;
    int j, k, close;

    if (!is_p(a, i + 1, e, '('))
        return 0;
    close = a->link[i + 1];
    if (a->trefs.n != tf + 1)
        return 0;
    t = (const struct dal_sql_tref *)a->trefs.v + tf;
    for (j = i + 2; j < close; j = k + 1) {
        struct dal_sql_cond *c;
        k = comma_end(a, j, close);
        if (k != j + 1 || !is_name(a, j, k))
            continue;
        if (!(c = an_vpush(a, &a->conds, sizeof *c)))
            return -1;
        c->op = DAL_COND_COLEQ;
        c->scope = a->scope;
        c->off = a->tk[i].off;
        c->len = tend(a, close) - c->off;
        c->using_off = a->tk[i].off;
        c->qualifier2 = t->alias ? t->alias : t->name;
        if (!(c->column = an_tok_name(a, j)) || !(c->column2 = an_tok_name(a, j)))
            return -1;
    }
    return 0;
}

/* One ON condition [i,e) of a join of kind how: its subqueries, and its
 * conditions (of an outer join only col = col: the others keep the rows of
 * the preserved side). */
static int on_clause(an_t *a, int i, int e, int how)
{
    int saved = a->links_only, rc;

    if (an_scan_expr(a, i, e))
        return -1;
    a->links_only = (how & JOIN_FULL) != 0;
    rc = conds(a, i, e, 0, 0);
    a->links_only = saved;
    return rc;
}

/* Record the alias token at i (if any) as a source of the current scope. */
static int add_source(an_t *a, int alias)
{
    struct dal_sql_source *s;

    if (alias < 0)
        return 0;
    if (!(s = an_vpush(a, &a->sources, sizeof *s)) || !(s->name = an_alias_text(a, alias)))
        return -1;
    s->scope = a->scope;
    return 0;
}

/* A derived table or a parenthesised join at i, then its alias. */
static int paren_factor(an_t *a, int i, int e, int role)
{
    int close = a->link[i], alias, j, derived = query_inside(a, i, e);

    if (derived) {
        if (an_query(a, i + 1, close, 0, DAL_SCOPE_DERIVED))
            return -1;
    } else if (an_table_list(a, i + 1, close, role)) {
        return -1;
    }
    j = table_alias(a, close + 1, e, &alias);
    if (derived && add_source(a, alias))
        return -1;
    if (alias >= 0 && is_p(a, j, e, '(')) /* derived column list */
        j = a->link[j] + 1;
    return j;
}

/* One table factor at i: name, derived table, nested join or table
 * function.  Returns the index after it (always > i), or -1 on error. */
static int table_factor(an_t *a, int i, int e, int role)
{
    int q, n, alias, j;

    if (kw(a, i, e, K_LATERAL) && is_p(a, i + 1, e, '('))
        i++;
    if (is_p(a, i, e, '('))
        return paren_factor(a, i, e, role);
    if (kw(a, i, e, K_DUAL))
        return i + 1;
    if (is_name(a, i, e) && is_p(a, i + 1, e, '(')) { /* JSON_TABLE(...) */
        if (an_scan_expr(a, i + 2, a->link[i + 1]))
            return -1;
        j = table_alias(a, a->link[i + 1] + 1, e, &alias);
        return add_source(a, alias) ? -1 : j;
    }
    j = an_qname(a, i, e, &q, &n);
    if (n < 0)
        return i + 1;
    if (kw(a, j, e, K_PARTITION) && is_p(a, j + 1, e, '('))
        j = a->link[j + 1] + 1;
    j = table_alias(a, j, e, &alias);
    j = index_hints(a, j, e);
    return an_add_tref(a, q, n, role, alias) ? -1 : j;
}

/* A table reference list: factors joined by ',' and join operators, with
 * ON conditions and USING lists. */
int an_table_list(an_t *a, int i, int e, int role)
{
    size_t t0 = a->trefs.n, s0 = a->scopes.n, tf = t0, sf = s0;
    int want = 1, how = JOIN_INNER, j;

    if (++a->depth > MAX_DEPTH) {
        a->depth--;
        return an_fail(a, i < a->nt ? a->tk[i].off : 0, "statement nested too deeply");
    }
    while (i < e && !a->failed) {
        if (is_p(a, i, e, '{') || is_p(a, i, e, '}') || kw(a, i, e, K_OJ)) {
            i++; /* ODBC { OJ ... } */
        } else if (want) {
            tf = a->trefs.n;
            sf = a->scopes.n;
            i = table_factor(a, i, e, role);
            if (how & JOIN_LEFT)
                mark_null_side(a, tf, a->trefs.n, sf, a->scopes.n);
            if (how & JOIN_RIGHT)
                mark_null_side(a, t0, tf, s0, sf);
            want = 0;
        } else if (is_p(a, i, e, ',')) {
            want = 1;
            how = JOIN_INNER;
            i++;
        } else if ((j = join_op(a, i, e, &how)) > 0) {
            want = 1;
            i = j;
        } else if (kw(a, i, e, K_ON)) {
            j = on_end(a, i + 1, e);
            if (on_clause(a, i + 1, j, how))
                break;
            i = j;
        } else if (kw(a, i, e, K_USING)) {
            if (!(how & JOIN_NATURAL) && using_links(a, i, e, tf))
                break;
            i = is_p(a, i + 1, e, '(') ? a->link[i + 1] + 1 : i + 1;
        } else {
            j = next_tok(a, i);
            an_scan_expr(a, i, j);
            i = j;
        }
        if (i < 0)
            break;
    }
    a->depth--;
    return a->failed ? -1 : 0;
}

/* ============================================================ conditions */

/* The end of the conjunct starting at i: the next AND or && at the top
 * level, not inside CASE ... END and not the AND of a BETWEEN.  Sets *has_or
 * when an OR, XOR or || is met at the top level on the way. */
static int conjunct_end(const an_t *a, int i, int e, int *has_or)
{
    int cases = 0, between = 0;

    for (; i < e; i = next_tok(a, i)) {
        if (kw(a, i, e, K_CASE)) {
            cases++;
        } else if (cases > 0) {
            if (kw(a, i, e, K_END))
                cases--;
        } else if (kw(a, i, e, K_BETWEEN)) {
            between = 1;
        } else if (kw(a, i, e, K_AND) || is_op(a, i, e, "&&")) {
            if (!between)
                return i;
            between = 0;
        } else if (kw(a, i, e, K_OR) || kw(a, i, e, K_XOR) || is_op(a, i, e, "||")) {
            *has_or = 1;
        }
    }
    return e;
}

/* A comparison operator at i, as a condition op, or -1. */
static int cmp_op(const an_t *a, int i, int e)
{
    if (is_op(a, i, e, "="))
        return DAL_COND_EQ;
    if (is_op(a, i, e, "<"))
        return DAL_COND_LT;
    if (is_op(a, i, e, "<="))
        return DAL_COND_LE;
    if (is_op(a, i, e, ">"))
        return DAL_COND_GT;
    if (is_op(a, i, e, ">="))
        return DAL_COND_GE;
    return -1;
}

static int flip_op(int op)
{
    switch (op) {
    case DAL_COND_LT: return DAL_COND_GT;
    case DAL_COND_LE: return DAL_COND_GE;
    case DAL_COND_GT: return DAL_COND_LT;
    case DAL_COND_GE: return DAL_COND_LE;
    default: return op;
    }
}

/* Record a condition on the column reference [cs,ce) spanning [s,e). */
static int add_cond(an_t *a, int cs, int ce, int op, dal_sql_opnd_t *vals, size_t nvals,
                    int s, int e)
{
    struct dal_sql_cond *c;

    if (a->links_only)
        return 0;
    if (!(c = an_vpush(a, &a->conds, sizeof *c)))
        return -1;
    c->scope = a->scope;
    c->op = (dal_cond_op_t)op;
    c->vals = vals;
    c->nvals = nvals;
    c->off = a->tk[s].off;
    c->len = tend(a, e - 1) - c->off;
    if (!(c->column = an_tok_name(a, ce - 1)))
        return -1;
    if (ce - cs >= 3 && !(c->qualifier = an_tok_name(a, ce - 3)))
        return -1;
    return 0;
}

static int one_value(an_t *a, int cs, int ce, int op, int vs, int ve, int s, int e)
{
    dal_sql_opnd_t *v = an_scratch(a, sizeof *v);

    if (!v)
        return -1;
    *v = an_operand(a, vs, ve);
    return add_cond(a, cs, ce, op, v, 1, s, e);
}

/* Record col = col2 for the column references [cs,ce) and [ds,de). */
static int add_link(an_t *a, int cs, int ce, int ds, int de)
{
    struct dal_sql_cond *c = an_vpush(a, &a->conds, sizeof *c);

    if (!c)
        return -1;
    c->op = DAL_COND_COLEQ;
    c->scope = a->scope;
    c->off = a->tk[cs].off;
    c->len = tend(a, de - 1) - c->off;
    if (!(c->column = an_tok_name(a, ce - 1)) || !(c->column2 = an_tok_name(a, de - 1)))
        return -1;
    if (ce - cs >= 3 && !(c->qualifier = an_tok_name(a, ce - 3)))
        return -1;
    if (de - ds >= 3 && !(c->qualifier2 = an_tok_name(a, de - 3)))
        return -1;
    return 0;
}

/* One conjunct [s,e): col op v, v op col, col IN (..), col BETWEEN x AND y,
 * or a parenthesised group of conjuncts.  Anything else is ignored.  top:
 * the conjunct is the whole WHERE condition. */
static int conjunct(an_t *a, int s, int e, int level, int top)
{
    int c, k, op;

    if (s >= e)
        return 0;
    if (is_p(a, s, e, '(') && a->link[s] == e - 1) {
        if (subquery_at(a, s, e) || level >= MAX_COND_DEPTH)
            return 0;
        return conds(a, s + 1, e - 1, level + 1, top);
    }
    c = an_colref_end(a, s, e);
    if (c > s && c < e) {
        if ((op = cmp_op(a, c, e)) >= 0 && c + 1 < e) {
            if (an_colref_end(a, c + 1, e) == e) /* col = col: a join, not a value */
                return op == DAL_COND_EQ ? add_link(a, s, c, c + 1, e) : 0;
            return one_value(a, s, c, op, c + 1, e, s, e);
        }
        if (kw(a, c, e, K_IN) && is_p(a, c + 1, e, '(') && a->link[c + 1] == e - 1 &&
            !subquery_at(a, c + 1, e)) {
            dal_sql_opnd_t *vals;
            size_t n;
            if (an_operand_list(a, c + 2, e - 1, &vals, &n))
                return -1;
            return n ? add_cond(a, s, c, DAL_COND_IN, vals, n, s, e) : 0;
        }
        if (kw(a, c, e, K_BETWEEN)) {
            dal_sql_opnd_t *vals;
            for (k = c + 1; k < e && !kw(a, k, e, K_AND); k = next_tok(a, k))
                ;
            if (k >= e || !(vals = an_scratch(a, 2 * sizeof *vals)))
                return a->failed ? -1 : 0;
            vals[0] = an_operand(a, c + 1, k);
            vals[1] = an_operand(a, k + 1, e);
            return add_cond(a, s, c, DAL_COND_BETWEEN, vals, 2, s, e);
        }
        return 0;
    }
    /* value op col */
    for (k = s; k < e && cmp_op(a, k, e) < 0; k = next_tok(a, k))
        ;
    if (k <= s || k >= e || an_colref_end(a, k + 1, e) != e)
        return 0;
    if (an_operand(a, s, k).kind == DAL_OPND_EXPR)
        return 0;
    return one_value(a, k + 1, e, flip_op(cmp_op(a, k, e)), s, k, s, e);
}

/* The conjuncts of [s,e).  An OR at this level makes none of them usable:
 * if [s,e) is the whole WHERE (maybe inside parentheses) that is recorded
 * in where_has_or; in a group ANDed with others only the group is skipped,
 * since the other conjuncts still hold. */
static int conds(an_t *a, int s, int e, int level, int top)
{
    int i, j, has_or = 0, single = conjunct_end(a, s, e, &has_or) >= e;

    for (i = s; i < e; i = j + 1)
        j = conjunct_end(a, i, e, &has_or);
    if (has_or) {
        if (top)
            a->r.where_has_or = 1;
        return 0;
    }
    for (i = s; i < e; i = j + 1) {
        j = conjunct_end(a, i, e, &has_or);
        if (conjunct(a, i, j, level, top && single))
            return -1;
    }
    return 0;
}

/* ============================================================ clauses */

/* The clause starting at i, or -1; *body is where its body starts. */
static int clause_at(const an_t *a, int i, int e, int *body)
{
    static const struct { unsigned char w; int cl; } one[] = {
        {K_FROM, CL_FROM}, {K_WHERE, CL_WHERE}, {K_HAVING, CL_HAVING},
        {K_LIMIT, CL_LIMIT}, {K_INTO, CL_INTO}, {K_USING, CL_USING},
        {K_SET, CL_SET}, {K_RETURNING, CL_RETURNING},
    };
    size_t k;

    if (a->kwid[i] == K_NONE)
        return -1;
    *body = i + 1;
    /* WINDOW w AS (...): MariaDB allows `window` as a column name */
    if (kw(a, i, e, K_WINDOW) && is_name(a, i + 1, e) && kw(a, i + 2, e, K_AS))
        return CL_WINDOW;
    for (k = 0; k < sizeof one / sizeof one[0]; k++)
        if (kw(a, i, e, one[k].w))
            return one[k].cl;
    *body = i + 2;
    if (i > 0 && kw(a, i - 1, e, K_FOR)) /* index hint: FOR ORDER BY (..) */
        return -1;
    if (kw(a, i, e, K_GROUP) && kw(a, i + 1, e, K_BY))
        return CL_GROUP;
    if (kw(a, i, e, K_ORDER) && kw(a, i + 1, e, K_BY))
        return CL_ORDER;
    *body = i;
    if (kw(a, i, e, K_FOR) && (kw(a, i + 1, e, K_UPDATE) || kw(a, i + 1, e, K_SHARE)))
        return CL_LOCK;
    if (kw(a, i, e, K_LOCK) && kw(a, i + 1, e, K_IN))
        return CL_LOCK;
    return -1;
}

/* Cut [i,e) at the top-level keywords of the clauses in mask.  A clause
 * keyword seen a second time is left inside the clause before it. */
void an_split_clauses(const an_t *a, int i, int e, unsigned mask, seg_t *sg)
{
    int c, j, body, cur = CL_HEAD;

    for (c = 0; c < CL_N; c++) {
        sg[c].kw = -1;
        sg[c].b = sg[c].e = e;
    }
    sg[CL_HEAD].kw = i;
    sg[CL_HEAD].b = i;
    for (j = i; j < e; j = next_tok(a, j)) {
        c = clause_at(a, j, e, &body);
        if (c < 0 || !(mask & BIT(c)) || sg[c].kw >= 0)
            continue;
        sg[cur].e = j;
        sg[c].kw = j;
        sg[c].b = body < e ? body : e;
        sg[c].e = e;
        cur = c;
    }
}

/* ORDER BY / GROUP BY items of [s,e). */
static int order_items(an_t *a, int s, int e, vec_t *v, int *rollup)
{
    int i, j, k;

    for (i = s; i < e; i = k + 1) {
        struct dal_sql_order *o;
        k = j = comma_end(a, i, e);
        if (rollup && j == e && j - i >= 2 && kw(a, j - 2, e, K_WITH) &&
            kw(a, j - 1, e, K_ROLLUP)) {
            *rollup = 1;
            j -= 2;
        }
        if (!(o = an_vpush(a, v, sizeof *o)))
            return -1;
        if (j > i && kw(a, j - 1, e, K_DESC)) {
            o->desc = 1;
            j--;
        } else if (j > i && kw(a, j - 1, e, K_ASC)) {
            j--;
        }
        if (j <= i) { /* a lone ASC/DESC: nothing to record */
            v->n--;
            continue;
        }
        o->off = a->tk[i].off;
        o->len = tend(a, j - 1) - o->off;
        if (an_colref_end(a, i, j) == j && !(o->column = an_tok_name(a, j - 1)))
            return -1;
        if (j - i == 1 && a->tk[i].type == DAL_TOK_NUMBER) {
            long pos = 0;
            uint32_t d;
            for (d = 0; d < a->tk[i].len; d++) {
                char c = a->sql[a->tk[i].off + d];
                if (c < '0' || c > '9' || pos > INT_MAX / 10) {
                    pos = 0;
                    break;
                }
                pos = pos * 10 + (c - '0');
            }
            o->position = pos > INT_MAX ? 0 : (int)pos;
        }
    }
    return 0;
}

static void limit_clause(an_t *a, const seg_t *sg)
{
    int b = sg->b, e = sg->e, c = comma_end(a, b, e), k;

    a->r.has_limit = 1;
    a->r.limit_off = a->tk[sg->kw].off;
    a->r.limit_len = tend(a, e > b ? e - 1 : sg->kw) - a->r.limit_off;
    if (c < e) { /* LIMIT offset, count */
        a->r.limit_has_offset = 1;
        a->r.limit_offset = an_operand(a, b, c);
        a->r.limit_count = an_operand(a, c + 1, e);
        return;
    }
    for (k = b; k < e && !kw(a, k, e, K_OFFSET); k = next_tok(a, k))
        ;
    a->r.limit_count = an_operand(a, b, k);
    if (k < e) {
        a->r.limit_has_offset = 1;
        a->r.limit_offset = an_operand(a, k + 1, e);
    }
}

/* The ? in [s,e) (a LIMIT clause) can only be integers. */
static void int_params(an_t *a, int s, int e)
{
    for (; s < e; s++)
        if (a->tk[s].type == DAL_TOK_PARAM)
            a->param_int[a->link[s]] = 1;
}

/* The clauses after FROM (or after a table list): WHERE, GROUP BY, HAVING,
 * WINDOW, ORDER BY, LIMIT, locking, INTO, RETURNING. */
int an_clauses(an_t *a, const seg_t *sg, int fill)
{
    const seg_t *w = &sg[CL_WHERE], *g = &sg[CL_GROUP], *h = &sg[CL_HAVING];

    if (an_scan_expr(a, w->b, w->e) || an_scan_expr(a, g->b, g->e) || an_scan_expr(a, h->b, h->e) ||
        an_scan_expr(a, sg[CL_WINDOW].b, sg[CL_WINDOW].e) ||
        an_scan_expr(a, sg[CL_ORDER].b, sg[CL_ORDER].e) ||
        an_scan_expr(a, sg[CL_RETURNING].b, sg[CL_RETURNING].e))
        return -1;
    if (w->kw >= 0 && w->b < w->e) {
        if (fill & FILL_HEAD) {
            a->r.where_off = a->tk[w->b].off;
            a->r.where_len = tend(a, w->e - 1) - a->r.where_off;
        }
        if (conds(a, w->b, w->e, 0, (fill & FILL_HEAD) != 0))
            return -1;
    }
    if (sg[CL_LIMIT].kw >= 0)
        int_params(a, sg[CL_LIMIT].b, sg[CL_LIMIT].e);
    if (fill & FILL_HEAD) {
        if (g->kw >= 0 && order_items(a, g->b, g->e, &a->group, &a->r.group_with_rollup))
            return -1;
        if (h->kw >= 0) {
            a->r.has_having = 1;
            if (h->b < h->e) {
                a->r.having_off = a->tk[h->b].off;
                a->r.having_len = tend(a, h->e - 1) - a->r.having_off;
            }
        }
    }
    if (fill & FILL_TAIL) {
        if (sg[CL_ORDER].kw >= 0 &&
            order_items(a, sg[CL_ORDER].b, sg[CL_ORDER].e, &a->order, NULL))
            return -1;
        if (sg[CL_LIMIT].kw >= 0)
            limit_clause(a, &sg[CL_LIMIT]);
        if (sg[CL_LOCK].kw >= 0)
            a->r.for_update = 1;
    }
    return 0;
}

/* ============================================================ SELECT */

static const unsigned char aggregates[] = {
    K_COUNT, K_SUM, K_MIN, K_MAX, K_AVG, K_GROUP_CONCAT, K_STD, K_STDDEV, K_STDDEV_POP,
    K_STDDEV_SAMP, K_VARIANCE, K_VAR_POP, K_VAR_SAMP, K_BIT_AND, K_BIT_OR, K_BIT_XOR,
    K_JSON_ARRAYAGG, K_JSON_OBJECTAGG, 0,
};

/* An aggregate call anywhere in [s,e) outside subqueries. */
static int has_aggregate(const an_t *a, int s, int e)
{
    int i;

    for (i = s; i < e; i++) {
        if (subquery_at(a, i, e))
            i = a->link[i];
        else if (kw_in(a, i, e, aggregates) && is_p(a, i + 1, e, '('))
            return 1;
    }
    return 0;
}

/* Classify the select item expression [s,e) and set the argument span. */
static dal_agg_t item_agg(const an_t *a, int s, int e, struct dal_sql_item *it)
{
    static const struct { unsigned char w; dal_agg_t plain, distinct; } mergeable[] = {
        {K_COUNT, DAL_AGG_COUNT, DAL_AGG_COUNT_DISTINCT},
        {K_SUM, DAL_AGG_SUM, DAL_AGG_OTHER_FUNC},
        {K_MIN, DAL_AGG_MIN, DAL_AGG_MIN},
        {K_MAX, DAL_AGG_MAX, DAL_AGG_MAX},
        {K_AVG, DAL_AGG_AVG, DAL_AGG_OTHER_FUNC},
    };
    int b, close, distinct = 0;
    size_t k;

    if (!(e - s >= 3 && kw_in(a, s, e, aggregates) && is_p(a, s + 1, e, '(') &&
          a->link[s + 1] == e - 1))
        return has_aggregate(a, s, e) ? DAL_AGG_OTHER_FUNC : DAL_AGG_NONE;
    close = e - 1;
    b = s + 2;
    if (kw(a, b, close, K_DISTINCT)) {
        distinct = 1;
        b++;
    } else if (kw(a, b, close, K_ALL)) {
        b++;
    }
    it->arg_off = b < close ? a->tk[b].off : tend(a, s + 1);
    it->arg_len = b < close ? tend(a, close - 1) - it->arg_off : 0;
    for (k = 0; k < sizeof mergeable / sizeof mergeable[0]; k++)
        if (kw(a, s, e, mergeable[k].w))
            return distinct ? mergeable[k].distinct : mergeable[k].plain;
    return DAL_AGG_OTHER_FUNC;
}

/* Whether the last token of the item [s,e) is a bare alias (no AS).  The
 * token before it must be able to end an expression, and neither may be an
 * operator word (`NOT x`, `x IS NULL`, `INTERVAL 1 DAY`, `'a' 'b'`). */
static int bare_alias(const an_t *a, int s, int e)
{
    static const unsigned char ops[] = {
        K_AND, K_OR, K_XOR, K_NOT, K_IS, K_LIKE, K_RLIKE, K_REGEXP, K_IN, K_BETWEEN, K_DIV,
        K_MOD, K_BINARY, K_CASE, K_WHEN, K_THEN, K_ELSE, K_INTERVAL, K_COLLATE, K_ESCAPE,
        K_SOUNDS, K_DISTINCT, K_ALL, K_ANY, K_SOME, K_EXISTS, K_AS, K_MEMBER, K_OF, K_OVER, 0,
    };
    static const unsigned char ends[] = {K_NULL, K_TRUE, K_FALSE, K_UNKNOWN, K_END, 0};
    static const unsigned char units[] = {
        K_MICROSECOND, K_SECOND, K_MINUTE, K_HOUR, K_DAY, K_WEEK, K_MONTH, K_QUARTER, K_YEAR,
        K_SECOND_MICROSECOND, K_MINUTE_MICROSECOND, K_MINUTE_SECOND, K_HOUR_MICROSECOND,
        K_HOUR_SECOND, K_HOUR_MINUTE, K_DAY_MICROSECOND, K_DAY_SECOND, K_DAY_MINUTE,
        K_DAY_HOUR, K_YEAR_MONTH, 0,
    };
    static const unsigned char interval[] = {K_INTERVAL, 0};
    int l = e - 1, p = e - 2;
    dal_tok_type_t lt = a->tk[l].type, pt = a->tk[p].type;

    if (lt == DAL_TOK_STRING && pt == DAL_TOK_STRING)
        return 0;
    if (lt == DAL_TOK_IDENT &&
        (kw_in(a, l, e, ends) ||
         (kw_in(a, l, e, units) && find_kw(a, s, e, interval) < e)))
        return 0;
    if (lt != DAL_TOK_IDENT && lt != DAL_TOK_QIDENT && lt != DAL_TOK_STRING)
        return 0;
    if (pt == DAL_TOK_IDENT)
        return !kw_in(a, p, e, ops);
    return is_p(a, p, e, ')') || pt == DAL_TOK_QIDENT || pt == DAL_TOK_STRING ||
           pt == DAL_TOK_NUMBER || pt == DAL_TOK_PARAM;
}

static int select_item(an_t *a, int s, int e)
{
    struct dal_sql_item *it;
    int x = e, alias = -1;

    if (s >= e)
        return 0;
    if (!(it = an_vpush(a, &a->items, sizeof *it)))
        return -1;
    if (e - s >= 3 && kw(a, e - 2, e, K_AS) &&
        (is_name(a, e - 1, e) || is_type(a, e - 1, e, DAL_TOK_STRING))) {
        alias = e - 1;
        x = e - 2;
    } else if (e - s >= 2 && bare_alias(a, s, e)) {
        alias = e - 1;
        x = e - 1;
    }
    it->off = a->tk[s].off;
    it->len = tend(a, x - 1) - it->off;
    it->star = (x - s == 1 && is_op(a, s, e, "*")) ||
               (x - s >= 3 && is_op(a, x - 1, e, "*") && is_p(a, x - 2, e, '.'));
    it->agg = item_agg(a, s, x, it);
    it->value = an_operand(a, s, x);
    if (an_colref_end(a, s, x) == x) {
        if (!(it->column = an_tok_name(a, x - 1)) ||
            (x - s >= 3 && !(it->qualifier = an_tok_name(a, x - 3))))
            return -1;
    }
    if (alias >= 0 && !(it->alias = an_alias_text(a, alias)))
        return -1;
    return 0;
}

static const unsigned char select_mods[] = {
    K_ALL, K_DISTINCT, K_DISTINCTROW, K_HIGH_PRIORITY, K_STRAIGHT_JOIN,
    K_SQL_SMALL_RESULT, K_SQL_BIG_RESULT, K_SQL_BUFFER_RESULT, K_SQL_NO_CACHE,
    K_SQL_CACHE, K_SQL_CALC_FOUND_ROWS, 0,
};

/* The select list [i,e): modifiers, then items. */
static int select_list(an_t *a, int i, int e, int fill)
{
    int j;

    for (; kw_in(a, i, e, select_mods); i++)
        if ((fill & FILL_HEAD) && (kw(a, i, e, K_DISTINCT) || kw(a, i, e, K_DISTINCTROW)))
            a->r.distinct = 1;
    if (an_scan_expr(a, i, e))
        return -1;
    if (!(fill & FILL_HEAD))
        return 0;
    for (; i < e; i = j + 1) {
        j = comma_end(a, i, e);
        if (select_item(a, i, j))
            return -1;
    }
    return 0;
}

/* A new scope of the given kind inside the current one, holding the
 * tokens [i,e) (until a scope inside it claims some).  Returns its index,
 * or -1 when out of memory. */
int an_new_scope(an_t *a, int kind, int i, int e)
{
    struct dal_sql_scope *sc = an_vpush(a, &a->scopes, sizeof *sc);

    if (!sc)
        return -1;
    sc->parent = a->scope;
    sc->kind = kind;
    sc->rowwise = 1;
    for (; i < e; i++)
        a->tscope[i] = (int)a->scopes.n - 1;
    return (int)a->scopes.n - 1;
}

/* Whether the SELECT whose clauses are sg makes each row from one row of
 * its sources (see dal_sql_scope.rowwise). */
static int select_rowwise(const an_t *a, const seg_t *sg)
{
    static const unsigned char over[] = {K_OVER, 0};
    const seg_t *h = &sg[CL_HEAD];
    int i;

    for (i = h->b; kw_in(a, i, h->e, select_mods); i++)
        if (kw(a, i, h->e, K_DISTINCT) || kw(a, i, h->e, K_DISTINCTROW))
            return 0;
    return sg[CL_GROUP].kw < 0 && sg[CL_HAVING].kw < 0 && sg[CL_LIMIT].kw < 0 &&
           sg[CL_WINDOW].kw < 0 && !has_aggregate(a, h->b, h->e) &&
           find_kw(a, h->b, h->e, over) >= h->e;
}

/* SELECT at i up to e (one member of a set operation), a scope of kind. */
static int select_body(an_t *a, int i, int e, int fill, int kind)
{
    seg_t sg[CL_N];
    const seg_t *f = &sg[CL_FROM];
    int saved = a->scope, sid = an_new_scope(a, kind, i, e), rc = -1;

    if (sid < 0)
        return -1;
    a->scope = sid;
    an_split_clauses(a, i + 1, e, SELECT_CLAUSES, sg);
    ((struct dal_sql_scope *)a->scopes.v)[sid].rowwise = select_rowwise(a, sg);
    if (select_list(a, sg[CL_HEAD].b, sg[CL_HEAD].e, fill))
        goto out;
    if (f->kw >= 0) {
        if (an_table_list(a, f->b, f->e, DAL_TREF_FROM))
            goto out;
        if ((fill & FILL_HEAD) && f->b < f->e) {
            a->r.from_off = a->tk[f->b].off;
            a->r.from_end = tend(a, f->e - 1);
        }
    }
    rc = an_clauses(a, sg, fill);
out:
    a->scope = saved;
    return rc;
}

/* What follows a parenthesised query or TABLE t: ORDER BY, LIMIT ... */
int an_tail_clauses(an_t *a, int i, int e, int fill)
{
    seg_t sg[CL_N];

    an_split_clauses(a, i, e, TAIL_CLAUSES, sg);
    if (an_scan_expr(a, sg[CL_HEAD].b, sg[CL_HEAD].e))
        return -1;
    return an_clauses(a, sg, fill);
}

/* WITH [RECURSIVE] name [(cols)] AS (query) [, ...] after WITH at i.
 * Returns the index after the list, or -1 on error. */
int an_ctes(an_t *a, int i, int e)
{
    if (kw(a, i, e, K_RECURSIVE))
        i++;
    while (is_name(a, i, e)) {
        if (an_push_str(a, &a->ctes, an_tok_name(a, i)))
            return -1;
        i++;
        if (is_p(a, i, e, '('))
            i = a->link[i] + 1;
        if (!kw(a, i, e, K_AS) || !is_p(a, i + 1, e, '('))
            break;
        i++;
        if (an_query(a, i + 1, a->link[i], 0, DAL_SCOPE_CTE))
            return -1;
        i = a->link[i] + 1;
        if (!is_p(a, i, e, ','))
            break;
        i++;
    }
    return i;
}

/* One member of a set operation: SELECT, ( query ), TABLE t, VALUES ... */
static int primary(an_t *a, int i, int e, int fill, int kind)
{
    if (i >= e)
        return 0;
    if (kw(a, i, e, K_SELECT))
        return select_body(a, i, e, fill, kind);
    if (is_p(a, i, e, '(')) {
        int close = a->link[i], inner = fill;
        if (close + 1 < e) /* ORDER BY / LIMIT after the parenthesis win */
            inner &= ~FILL_TAIL;
        if (query_inside(a, i, e) ? an_query(a, i + 1, close, inner, kind)
                                  : an_scan_expr(a, i, close + 1))
            return -1;
        return an_tail_clauses(a, close + 1, e, fill & FILL_TAIL);
    }
    if (kw(a, i, e, K_TABLE)) {
        int j = an_table_name(a, i + 1, e, DAL_TREF_FROM);
        return j < 0 ? -1 : an_tail_clauses(a, j, e, fill & FILL_TAIL);
    }
    return an_scan_expr(a, i, e);
}

/* Scopes [s0, end) made directly inside the current one are not row-wise:
 * the query they are members of is a set operation that removes rows. */
static void not_rowwise(an_t *a, size_t s0)
{
    struct dal_sql_scope *sc = a->scopes.v;

    for (; s0 < a->scopes.n; s0++)
        if (sc[s0].parent == a->scope)
            sc[s0].rowwise = 0;
}

/* A query expression [i,e): [WITH ...] primary {UNION|EXCEPT|INTERSECT
 * primary}, each member a scope of kind.  With fill, the first member fills
 * the head of the result and the last one its tail. */
int an_query(an_t *a, int i, int e, int fill, int kind)
{
    static const unsigned char setops[] = {K_UNION, K_EXCEPT, K_INTERSECT, 0};
    size_t s0 = a->scopes.n;
    int j, k, first = 1, rc = -1, set_distinct = 0;

    if (++a->depth > MAX_DEPTH) {
        an_fail(a, i < a->nt ? a->tk[i].off : 0, "statement nested too deeply");
        goto out;
    }
    if (kw(a, i, e, K_WITH) && (i = an_ctes(a, i + 1, e)) < 0)
        goto out;
    for (j = i; j < e; j = k + 1, first = 0) {
        int last;
        k = find_kw(a, j, e, setops);
        last = k >= e;
        if ((!first || !last) && fill)
            a->r.has_union = 1;
        if (primary(a, j, k, (first ? fill & FILL_HEAD : 0) | (last ? fill & FILL_TAIL : 0),
                    kind))
            goto out;
        if (!last && !(kw(a, k, e, K_UNION) && kw(a, k + 1, e, K_ALL)))
            set_distinct = 1;
        if (kw(a, k + 1, e, K_ALL) || kw(a, k + 1, e, K_DISTINCT))
            k++;
    }
    if (set_distinct)
        not_rowwise(a, s0);
    rc = 0;
out:
    a->depth--;
    return rc;
}

