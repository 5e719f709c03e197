/*
 * pin.c -- a session's pinned connections (see pin.h).
 *
 * A session pins on few nodes (usually the default datasource alone), so
 * the pins are a short array searched in order.
 */
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "error.h"
#include "events.h"
#include "exec.h"
#include "pin.h"
#include "pool.h"
#include "replica.h"
#include "small.h"
#include "stmt.h"

/* Routes of a statement with room on the stack for their pins. */
#define PIN_ROUTES_INLINE 8
#define NO_PIN SIZE_MAX

dal_pin_t *pins_find(dal_pins_t *p, const dal_node_t *node)
{
    size_t i;

    for (i = 0; i < p->n; i++)
        if (p->v[i].node == node)
            return &p->v[i];
    for (i = 0; i < p->n; i++)
        if (p->v[i].node->ryw_key == node->ryw_key &&
            strcmp(p->v[i].node->cfg->name, node->cfg->name) == 0)
            return &p->v[i];
    return NULL;
}

dal_pin_t *pins_user_vars(dal_pins_t *p)
{
    size_t i;

    for (i = 0; i < p->n; i++)
        if (p->v[i].reasons & DAL_PIN_USER_VAR)
            return &p->v[i];
    return NULL;
}

dal_pin_t *pins_xa(const dal_pins_t *p)
{
    size_t i;

    for (i = 0; i < p->n; i++)
        if (p->v[i].reasons & DAL_PIN_XA)
            return &p->v[i];
    return NULL;
}

int pins_add(dal_pins_t *p, dal_snapshot_t *snap, dal_node_t *node, dal_conn_t *c,
             unsigned int reasons, dal_pin_t **out, dal_error_t *err)
{
    dal_pin_t *v;

    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 2;
        if ((v = realloc(p->v, cap * sizeof *v)) == NULL)
            return err_set(err, DAL_ENOMEM, "out of memory");
        p->v = v;
        p->cap = cap;
    }
    v = &p->v[p->n++];
    snapshot_ref(snap);
    v->snap = snap;
    v->node = node;
    v->conn = c;
    v->reasons = reasons;
    /* what it holds is not all flagged by the server: the pool must reset it */
    conn_mark_dirty(c);
    if (reasons != 0) /* (0: held for one call, dal_session_set_eval) */
        event_pin(snap, node, reasons);
    *out = v;
    return 0;
}

int pins_take(dal_pins_t *p, dal_snapshot_t *snap, dal_node_t *node, unsigned int reasons,
              dal_pin_t **out, dal_error_t *err)
{
    dal_conn_t *c = NULL;
    int reused, rc = server_acquire(&node->master, &c, &reused, err);

    if (rc != 0) {
        if (rc == DAL_ECONNECT)
            server_lost(&node->master, err ? err->message : "cannot connect");
        return rc;
    }
    rc = pins_add(p, snap, node, c, reasons, out, err);
    if (rc != 0)
        server_release(&node->master, c, 1);
    return rc;
}

void pins_lost(dal_pin_t *pin)
{
    if (pin->conn != NULL)
        server_release(&pin->node->master, pin->conn, 0);
    pin->conn = NULL;
}

void pins_drop(dal_pins_t *p, dal_pin_t *pin)
{
    size_t i = (size_t)(pin - p->v);

    if (pin->conn != NULL)
        server_release(&pin->node->master, pin->conn, 1);
    snapshot_unref(pin->snap);
    memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof *p->v);
    p->n--;
}

void pins_release(dal_pins_t *p)
{
    size_t i;

    for (i = 0; i < p->n; i++) {
        if (p->v[i].conn != NULL)
            server_release(&p->v[i].node->master, p->v[i].conn, 1);
        snapshot_unref(p->v[i].snap);
    }
    free(p->v);
    memset(p, 0, sizeof *p);
}

void pins_reset(dal_pins_t *p, unsigned int keep)
{
    size_t i = 0;

    while (i < p->n) {
        dal_pin_t *pin = &p->v[i];
        if (pin->conn != NULL && (pin->reasons & keep)) {
            conn_mark_dirty(pin->conn);
            if (conn_reset_in_place(pin->conn, NULL) == 0) {
                pin->reasons &= keep;
                conn_mark_dirty(pin->conn); /* pinned: reset when it goes back */
                i++;
                continue;
            }
            pins_lost(pin);
        }
        pins_drop(p, pin);
    }
}

size_t pins_count(const dal_pins_t *p)
{
    size_t i, n = 0;

    for (i = 0; i < p->n; i++)
        n += p->v[i].conn != NULL;
    return n;
}

/* ------------------------------------------------------------ statements */

/* The caller or the statement's hints chose where it runs. */
static int chosen_node(const dal_sql_t *sql, const dal_query_opts_t *opts)
{
    return sql->nhints > 0 ||
           (opts != NULL && (opts->datasource != NULL || opts->shard_value != NULL));
}

/* The number of distinct nodes rt's routes run on. */
static size_t route_nodes(const dal_routing_t *rt)
{
    size_t i, k, n = 0;

    for (i = 0; i < rt->nroutes; i++) {
        for (k = 0; k < i && rt->routes[k].node != rt->routes[i].node; k++)
            ;
        n += k == i;
    }
    return n;
}

/* What pin.h says of user variables: one node, the one holding them. */
static int check_user_vars(dal_pins_t *p, const dal_snapshot_t *snap,
                           const dal_query_opts_t *opts, dal_routing_t *rt, dal_error_t *err)
{
    dal_pin_t *vars = pins_user_vars(p);
    dal_node_t *node, *there;
    size_t nodes = route_nodes(rt);

    if (nodes == 0)
        return 0;
    node = rt->routes[0].node;
    if (nodes > 1)
        return err_set(err, DAL_EUNSUPPORTED,
                       "this statement uses user variables (@name) and runs on %zu "
                       "datasources, but a session's user variables live on one connection: "
                       "narrow it to one shard (the shard key's value, not a variable)",
                       nodes);
    if (vars == NULL || pins_find(p, node) == vars)
        return 0;
    /* a statement naming no table runs anywhere: where the variables are */
    if (rt->nroutes == 1 && rt->sql->ntrefs == 0 && !chosen_node(rt->sql, opts) &&
        (there = snapshot_node(snap, vars->node->cfg->name)) != NULL) {
        rt->routes[0].node = there;
        return 0;
    }
    return err_set(err, DAL_EUNSUPPORTED,
                   "this session's user variables are on datasource %s (where it first used "
                   "one), but this statement runs on %s; a session's user variables live on "
                   "one connection", vars->node->cfg->name, node->cfg->name);
}

/* A statement reached a node whose pinned connection died. */
static int lost_error(const dal_pin_t *pin, dal_error_t *err)
{
    return err_set(err, DAL_ESTATE,
                   "the connection holding this session's state on datasource %s (user "
                   "variables, temporary tables, locks) was lost; reset the session "
                   "(dal_session_reset, COM_RESET_CONNECTION) to go on",
                   pin->node->cfg->name);
}

/* What pin.h says of a statement while the session's XA transaction is
 * open: it runs on the XA's node. */
static int check_xa(dal_pins_t *p, const dal_snapshot_t *snap, const dal_query_opts_t *opts,
                    dal_routing_t *rt, dal_error_t *err)
{
    dal_pin_t *xa = pins_xa(p);
    dal_node_t *there;
    size_t i;

    if (xa == NULL || rt->nroutes == 0)
        return 0;
    if (rt->nroutes == 1 && rt->sql->ntrefs == 0 && !chosen_node(rt->sql, opts) &&
        pins_find(p, rt->routes[0].node) != xa &&
        (there = snapshot_node(snap, xa->node->cfg->name)) != NULL)
        rt->routes[0].node = there;
    for (i = 0; i < rt->nroutes; i++)
        if (pins_find(p, rt->routes[i].node) != xa)
            return err_set(err, DAL_EUNSUPPORTED,
                           "this session's XA transaction is on datasource %s, but this "
                           "statement runs on %s, outside it; end the XA transaction (XA "
                           "COMMIT or XA ROLLBACK) first", xa->node->cfg->name,
                           rt->routes[i].node->cfg->name);
    return 0;
}

int pins_xa_txn_control(dal_pins_t *p, const char *sql, dal_result_t **out, dal_error_t *err)
{
    dal_pin_t *xa = pins_xa(p);
    MYSQL_RES *rows;
    int rc;

    if (xa == NULL)
        return 1;
    if (xa->conn == NULL)
        return lost_error(xa, err);
    if (mysql_real_query(&xa->conn->mysql, sql, (unsigned long)strlen(sql)) != 0) {
        rc = conn_error(xa->conn, DAL_ESERVER, err);
        if (exec_conn_lost(xa->conn))
            pins_lost(xa);
        return rc;
    }
    if ((rows = mysql_store_result(&xa->conn->mysql)) != NULL)
        mysql_free_result(rows);
    return (*out = result_new()) != NULL ? 0 : err_set(err, DAL_ENOMEM, "out of memory");
}

int pins_xa_outside(const dal_pins_t *p, int xa, dal_error_t *err)
{
    if (xa != DAL_SQL_XA_FINISH || pins_xa(p) != NULL)
        return 0;
    return err_server(err, DAL_ESERVER, 1400, "XAE09",
                      "XAER_OUTSIDE: Some work is done outside global transaction");
}

int pins_check(dal_pins_t *p, const dal_snapshot_t *snap, const dal_query_opts_t *opts,
               dal_stmt_t *st, dal_error_t *err)
{
    dal_routing_t *rt = &st->rt;
    dal_pin_t *pin;
    size_t i;
    int rc = 0;

    if ((st->sql->pins & DAL_PIN_USER_VAR) && (rc = check_user_vars(p, snap, opts, rt, err)) != 0)
        return rc;
    if ((rc = check_xa(p, snap, opts, rt, err)) != 0)
        return rc;
    for (i = 0; i < rt->nroutes && p->n > 0; i++) {
        pin = pins_find(p, rt->routes[i].node);
        if (pin != NULL && pin->conn == NULL)
            return lost_error(pin, err);
        /* the state is on the master: reads and forced replicas too */
        if (pin != NULL)
            rt->routes[i].server = &rt->routes[i].node->master;
    }
    return 0;
}

/* Each route's pin (index into p, NO_PIN for none) and connection, taking
 * the pins st needs.  Returns 0 and sets *any when some route has one. */
static int route_pins(dal_pins_t *p, dal_snapshot_t *snap, const dal_stmt_t *st, size_t *idx,
                      dal_conn_t **held, int *any, dal_error_t *err)
{
    const dal_routing_t *rt = &st->rt;
    dal_pin_t *pin;
    size_t i;
    int rc;

    *any = 0;
    for (i = 0; i < rt->nroutes; i++) {
        pin = pins_find(p, rt->routes[i].node);
        if (pin != NULL && pin->conn == NULL)
            return lost_error(pin, err);
        if (pin == NULL && st->sql->pins &&
            (rc = pins_take(p, snap, rt->routes[i].node, st->sql->pins, &pin, err)) != 0)
            return rc;
        idx[i] = pin != NULL ? (size_t)(pin - p->v) : NO_PIN;
        held[i] = pin != NULL ? pin->conn : NULL;
        *any |= pin != NULL;
    }
    /* pins_take may have moved the array: the state goes on by index */
    for (i = 0; i < rt->nroutes; i++)
        if (idx[i] != NO_PIN)
            p->v[idx[i]].reasons |= st->sql->pins;
    return 0;
}

/* After an XA statement ran (rc its outcome) on pin: no XA transaction is
 * left when an XA COMMIT or ROLLBACK succeeded, or an XA START failed
 * (the session had none before it); the pin then goes unless it holds
 * something else. */
static void xa_ended(dal_pins_t *p, dal_pin_t *pin, int xa, int rc)
{
    if (!((xa == DAL_SQL_XA_FINISH && rc == 0) || (xa == DAL_SQL_XA_START && rc != 0)))
        return;
    pin->reasons &= ~(unsigned int)DAL_PIN_XA;
    if (pin->reasons == 0)
        pins_drop(p, pin);
}

int pins_run(dal_pins_t *p, dal_snapshot_t *snap, dal_stmt_t *st, dal_result_t **out,
             dal_error_t *err)
{
    dal_routing_t *rt = &st->rt;
    size_t idx_inl[PIN_ROUTES_INLINE], *idx, i;
    dal_conn_t *held_inl[PIN_ROUTES_INLINE], **held;
    int any = 0, broken = 0, ran = 0, rc, had_xa;

    if (p->n == 0 && st->sql->pins == 0)
        return 1; /* the common case: nothing pinned, nothing to pin */
    /* an XA START that fails beside an open XA transaction leaves it open */
    had_xa = st->sql->xa == DAL_SQL_XA_START && pins_xa(p) != NULL;
    idx = small_alloc(idx_inl, PIN_ROUTES_INLINE, rt->nroutes, sizeof *idx, 0);
    held = small_alloc(held_inl, PIN_ROUTES_INLINE, rt->nroutes, sizeof *held, 1);
    rc = idx && held ? route_pins(p, snap, st, idx, held, &any, err)
                     : err_set(err, DAL_ENOMEM, "out of memory");
    if (rc == 0 && !any)
        rc = 1;
    ran = rc == 0;
    if (rc == 0 && rt->nroutes == 1)
        rc = exec_on_conn(rt, held[0], st->params, st->nparams, out, &broken, err);
    else if (rc == 0)
        rc = exec_routes_on(rt, held, st->params, st->nparams, &st->spec, out, err);
    for (i = 0; rc < 0 && i < rt->nroutes; i++)
        if (held[i] != NULL && exec_conn_lost(held[i]))
            pins_lost(&p->v[idx[i]]);
    if (ran && st->sql->xa && rt->nroutes == 1 && idx[0] != NO_PIN && !had_xa)
        xa_ended(p, &p->v[idx[0]], st->sql->xa, rc);
    small_free(idx, idx_inl);
    small_free(held, held_inl);
    return rc;
}
