/*
 * test_pin.c -- sessions pin the connections that hold their server state
 * (core/stmt/pin.c), against real MariaDB servers: user variables, temporary
 * tables, named locks, LOCK TABLES, SQL prepared statements, inside and
 * outside transactions, over several nodes, with session variables, after
 * a lost connection and a reload, a database of the servers chosen (and
 * left, or dropped: no database), and what the pools see (no leak, and a
 * session that never pins behaves as before).
 *
 * tests/suites/integration.sh starts the cluster (product_0 .. product_3 on four
 * servers, `plain` on server 0, the default datasource) and exports
 * DAL_TEST_PORTS.  pin_food is sharded by k over the four nodes, two
 * physical tables each, so a scatter has two routes per node.  It runs
 * twice: with the built-in connection cache and with the pool plugin
 * (DAL_TEST_PIN_POOL=default), which reset connections each their way.
 */
#include <check.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dal/dal.h>

#include "handle.h"
#include "pool.h"
#include "testutil.h"

#define NODES 4

static int ports[NODES];
static char *dir;
static char *ini;
static dal_t *dal;

/* The first value of the first row of sql run in s (NULL: dal_query), as
 * text in a static buffer; "NULL" for SQL NULL. */
static const char *value(dal_session_t *s, const char *sql)
{
    static char buf[256];
    dal_result_t *r = NULL;
    dal_error_t err;
    const char *v;
    size_t len;
    int rc = s ? dal_session_query(s, NULL, sql, NULL, 0, &r, &err)
               : dal_query(dal, NULL, sql, NULL, 0, &r, &err);

    tu_must(rc, &err, sql);
    tu_must(dal_result_next(r, &err) == 1 ? 0 : DAL_ESTATE, &err, sql);
    v = dal_result_text(r, 0, &len);
    snprintf(buf, sizeof buf, "%.*s", v ? (int)len : 4, v ? v : "NULL");
    dal_result_free(r);
    return buf;
}

static void run(dal_session_t *s, const char *sql)
{
    dal_error_t err;

    tu_must(dal_session_exec(s, NULL, sql, NULL, 0, NULL, &err), &err, sql);
}

/* sql fails in s with code; the message is returned (static). */
static const char *fails(dal_session_t *s, const char *sql, int code)
{
    static dal_error_t err;
    int rc = dal_session_exec(s, NULL, sql, NULL, 0, NULL, &err);

    ck_assert_msg(rc == code, "%s: %s instead of %s (%s)", sql, dal_strerror(rc),
                  dal_strerror(code), rc ? err.message : "");
    return err.message;
}

/* sql fails in dal_query with code; the message is returned (static). */
static const char *query_fails(const char *sql, int code)
{
    static dal_error_t err;
    dal_result_t *r = NULL;
    int rc = dal_query(dal, NULL, sql, NULL, 0, &r, &err);

    dal_result_free(r);
    ck_assert_msg(rc == code, "%s: %s instead of %s", sql, dal_strerror(rc), dal_strerror(code));
    return err.message;
}

static dal_session_t *session(void)
{
    dal_session_t *s = NULL;
    dal_error_t err;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    return s;
}

/* The pool figures of datasource name's master in the running snapshot. */
static dal_pool_stats_t pool(const char *name)
{
    dal_snapshot_t *snap = snapshot_acquire(dal);
    dal_node_t *node = snapshot_node(snap, name);
    dal_pool_stats_t st;

    ck_assert_ptr_nonnull(node);
    server_pool_stats(&node->master, &st);
    snapshot_unref(snap);
    return st;
}

/* DAL_TEST_PIN_POOL=NAME runs the tests with pool plugin NAME instead of
 * the built-in connection cache. */
static const char *pool_line(void)
{
    static char line[80];
    const char *name = getenv("DAL_TEST_PIN_POOL");

    snprintf(line, sizeof line, name ? "pool = %s\n" : "", name);
    return line;
}

static char *make_ini(const char *extra)
{
    char text[8192];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[datasource plain]\n"
             "master = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
             "%s"
             "[proxy]\n"
             "database = pinshop\n"  /* the top level's name in db.table */
             "[dal]\n"
             "default_datasource = plain\n"
             "%s"
             "[table pin_food]\n"
             "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 8\n"
             "shard_key = k\nstrategy = mod\n",
             ports[0], extra, pool_line());
    return tu_write(dir, "pin.ini", text);
}

static void global_setup(void)
{
    char sql[128];
    int k;

    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    ini = make_ini("");
    dal = tu_open(ini);
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS pin_food");
    tu_setup_exec(dal, NULL, "CREATE TABLE pin_food (k INT PRIMARY KEY, name VARCHAR(20))");
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS pin_plain");
    tu_setup_exec(dal, NULL, "CREATE TABLE pin_plain (a INT)");
    for (k = 0; k < 8; k++) {
        snprintf(sql, sizeof sql, "INSERT INTO pin_food (k, name) VALUES (%d, 'n%d')", k, k);
        tu_setup_exec(dal, NULL, sql);
    }
}

static void global_teardown(void)
{
    dal_close(dal);
    tu_rmtree(dir);
    free(ini);
    free(dir);
}

START_TEST(test_user_variables)
{
    dal_session_t *s = session(), *other = session();

    run(s, "SET @a = 1");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT @a"), "1");
    ck_assert_str_eq(value(s, "SELECT @a := @a + 1"), "2");
    run(s, "SELECT COUNT(*) INTO @n FROM pin_plain");
    ck_assert_str_eq(value(s, "SELECT @a + @n"), "2");
    /* a statement without user variables on the pinned node: the same
     * connection, so it sees them through a subquery-free read as well */
    ck_assert_str_eq(value(s, "SELECT CONNECTION_ID() = CONNECTION_ID()"), "1");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    /* another session has its own */
    ck_assert_str_eq(value(other, "SELECT @a"), "NULL");
    ck_assert_str_eq(value(NULL, "SELECT @a"), "NULL");
    dal_session_close(other);
    dal_session_close(s);
}
END_TEST

/* User variables live on one node: set on a shard, read there; never read
 * as another connection's NULL. */
START_TEST(test_user_variables_one_node)
{
    dal_session_t *s = session();
    const char *msg;

    /* k = 5: physical table 5 on node 5 / 2 = 2 */
    ck_assert_str_eq(value(s, "SELECT @x := name FROM pin_food WHERE k = 5"), "n5");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    /* naming no table, it runs where the variables are */
    ck_assert_str_eq(value(s, "SELECT @x"), "n5");
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food WHERE k = 4 AND @x = 'n5'"), "n4");
    msg = fails(s, "SELECT name FROM pin_food WHERE k = 1 AND @x IS NOT NULL", DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(msg, "user variables are on datasource dbProductSku2") != NULL, "%s",
                  msg);
    /* the router cannot read a variable: this would scatter */
    msg = fails(s, "SELECT name FROM pin_food WHERE k = @x", DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(msg, "runs on 4 datasources") != NULL, "%s", msg);
    /* a datasource chosen by the caller is not overridden */
    fails(s, "/*+ dal datasource=plain */ SELECT @x", DAL_EUNSUPPORTED);
    dal_session_close(s);

    s = session();
    fails(s, "SELECT @y := name FROM pin_food", DAL_EUNSUPPORTED);
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    dal_session_close(s);
}
END_TEST

START_TEST(test_temporary_table)
{
    dal_session_t *s = session(), *other = session();

    run(s, "CREATE TEMPORARY TABLE pin_tmp (a INT)");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    run(s, "INSERT INTO pin_tmp VALUES (1), (2), (3)");
    ck_assert_str_eq(value(s, "SELECT SUM(a) FROM pin_tmp"), "6");
    run(s, "UPDATE pin_tmp SET a = a * 10");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_tmp JOIN pin_plain"), "0");
    ck_assert_str_eq(value(s, "SELECT MAX(a) FROM pin_tmp"), "30");
    /* nobody else sees it */
    ck_assert_int_eq(fails(other, "SELECT * FROM pin_tmp", DAL_ESERVER)[0] != '\0', 1);
    run(s, "DROP TEMPORARY TABLE pin_tmp");
    fails(s, "SELECT * FROM pin_tmp", DAL_ESERVER);
    dal_session_close(other);
    dal_session_close(s);
}
END_TEST

START_TEST(test_named_lock)
{
    dal_session_t *s = session();
    MYSQL *m = tu_direct(ports[0], "plain");

    ck_assert_str_eq(value(s, "SELECT GET_LOCK('pin_lock', 0)"), "1");
    ck_assert_int_eq(tu_value(m, "SELECT IS_FREE_LOCK('pin_lock')"), 0);
    /* still held statements later, and by the session's own connection */
    run(s, "SELECT 1");
    ck_assert_int_eq(tu_value(m, "SELECT IS_FREE_LOCK('pin_lock')"), 0);
    ck_assert_str_eq(value(s, "SELECT IS_USED_LOCK('pin_lock') = CONNECTION_ID()"), "1");
    ck_assert_int_eq(tu_value(m, "SELECT GET_LOCK('pin_lock', 0)"), 0);
    dal_session_close(s);
    ck_assert_int_eq(tu_value(m, "SELECT IS_FREE_LOCK('pin_lock')"), 1);

    /* RELEASE_LOCK releases it while the session goes on */
    s = session();
    ck_assert_str_eq(value(s, "SELECT GET_LOCK('pin_lock', 0)"), "1");
    ck_assert_str_eq(value(s, "SELECT RELEASE_LOCK('pin_lock')"), "1");
    ck_assert_int_eq(tu_value(m, "SELECT IS_FREE_LOCK('pin_lock')"), 1);
    dal_session_close(s);
    mysql_close(m);
}
END_TEST

START_TEST(test_lock_tables)
{
    dal_session_t *s = session();
    MYSQL *m = tu_direct(ports[0], "plain");
    MYSQL *last = tu_direct(ports[NODES - 1], "product_3"); /* pin_food_6 and _7 */
    const char *msg;

    run(s, "LOCK TABLES pin_plain WRITE");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    run(s, "INSERT INTO pin_plain VALUES (7)");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_plain WHERE a = 7"), "1");
    /* another connection waits for the lock */
    ck_assert(mysql_query(m, "SET SESSION lock_wait_timeout = 1") == 0);
    ck_assert(mysql_query(m, "SELECT * FROM pin_plain") != 0);
    ck_assert_uint_eq(mysql_errno(m), 1205); /* ER_LOCK_WAIT_TIMEOUT */
    run(s, "UNLOCK TABLES");
    ck_assert_int_eq(tu_value(m, "SELECT COUNT(*) FROM pin_plain WHERE a = 7"), 1);
    run(s, "DELETE FROM pin_plain");
    /* a sharded table: its physical tables locked on every node, each on
     * the session's pinned connection there, until UNLOCK TABLES */
    run(s, "LOCK TABLES pin_food WRITE");
    ck_assert_uint_eq(dal_session_pinned(s), NODES + 1);
    run(s, "INSERT INTO pin_food (k, name) VALUES (1007, 'locked')");
    ck_assert(mysql_query(last, "SET SESSION lock_wait_timeout = 1") == 0);
    ck_assert(mysql_query(last, "SELECT * FROM pin_food_7") != 0);
    ck_assert_uint_eq(mysql_errno(last), 1205);
    run(s, "UNLOCK TABLES");
    ck_assert_int_eq(tu_value(last, "SELECT COUNT(*) FROM pin_food_7 WHERE k = 1007"), 1);
    run(s, "DELETE FROM pin_food WHERE k = 1007");
    dal_session_close(s);
    /* without a session nothing could hold the locks: refused */
    msg = query_fails("LOCK TABLES pin_food WRITE", DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(msg, "pin_food") != NULL, "%s", msg);
    mysql_close(m);
    mysql_close(last);
}
END_TEST

START_TEST(test_prepare_execute)
{
    dal_session_t *s = session();

    run(s, "PREPARE pin_ps FROM 'SELECT 40 + ?'");
    run(s, "SET @two = 2");
    ck_assert_str_eq(value(s, "EXECUTE pin_ps USING @two"), "42");
    run(s, "DEALLOCATE PREPARE pin_ps");
    fails(s, "EXECUTE pin_ps USING @two", DAL_ESERVER);
    dal_session_close(s);
}
END_TEST

/* A transaction on a pinned node runs on the pinned connection, which
 * COMMIT keeps; state made inside a transaction pins its connection. */
START_TEST(test_transactions)
{
    dal_session_t *s = session();
    char id[32];

    run(s, "SET @a = 5");
    snprintf(id, sizeof id, "%s", value(s, "SELECT CONNECTION_ID()"));
    run(s, "BEGIN");
    run(s, "INSERT INTO pin_plain VALUES (@a)");
    ck_assert_str_eq(value(s, "SELECT CONNECTION_ID()"), id);
    ck_assert_str_eq(dal_transaction_datasource(s), "plain");
    run(s, "COMMIT");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT @a + COUNT(*) FROM pin_plain WHERE a = 5"), "6");
    run(s, "START TRANSACTION");
    run(s, "SET @a = 6");
    run(s, "ROLLBACK");
    ck_assert_str_eq(value(s, "SELECT @a"), "6"); /* variables are not transactional */
    /* a transaction on another node takes a pooled connection as before */
    run(s, "BEGIN");
    run(s, "UPDATE pin_food SET name = 'n3' WHERE k = 3");
    ck_assert_str_eq(dal_transaction_datasource(s), "dbProductSku1");
    run(s, "COMMIT");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    /* a temporary table inside a transaction does not end it */
    run(s, "BEGIN");
    run(s, "CREATE TEMPORARY TABLE pin_tmp2 (a INT)");
    run(s, "INSERT INTO pin_tmp2 SELECT a FROM pin_plain");
    run(s, "COMMIT");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_tmp2"), "1");
    run(s, "BEGIN");
    run(s, "DROP TEMPORARY TABLE pin_tmp2");
    ck_assert(dal_in_transaction(s));
    run(s, "ROLLBACK");
    fails(s, "BEGIN; DROP TABLE pin_plain", DAL_ESQL);
    /* other DDL commits the transaction first, as on a server */
    run(s, "BEGIN");
    run(s, "INSERT INTO pin_plain VALUES (7)");
    run(s, "CREATE TABLE pin_ddl (a INT)");
    ck_assert(!dal_in_transaction(s));
    run(s, "ROLLBACK");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_plain WHERE a = 7"), "1");
    run(s, "DROP TABLE pin_ddl");
    run(s, "DELETE FROM pin_plain");
    dal_session_close(s);

    /* the first state made inside a transaction, on a shard */
    s = session();
    run(s, "BEGIN");
    ck_assert_str_eq(value(s, "SELECT @b := name FROM pin_food WHERE k = 6"), "n6");
    run(s, "COMMIT");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT @b"), "n6");
    dal_session_close(s);
}
END_TEST

/* Statements over several nodes: pinned connections where there are,
 * pooled ones elsewhere; two routes of a node share its connection. */
START_TEST(test_scatter)
{
    dal_session_t *s = session();

    run(s, "SET @a = 1");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_food"), "8");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    dal_session_close(s);

    s = session();
    /* a named lock per physical table: every node pinned, two routes each */
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_food WHERE "
                              "GET_LOCK(CONCAT('pin_food_lock', k), 0) = 1"),
                     "8");
    ck_assert_uint_eq(dal_session_pinned(s), NODES);
    ck_assert_str_eq(value(s, "SELECT SUM(IS_USED_LOCK(CONCAT('pin_food_lock', k)) = "
                              "CONNECTION_ID()) FROM pin_food"),
                     "8");
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food ORDER BY k DESC LIMIT 1"), "n7");
    dal_session_close(s);
    s = session();
    ck_assert_str_eq(value(s, "SELECT SUM(IS_FREE_LOCK(CONCAT('pin_food_lock', k))) "
                              "FROM pin_food"),
                     "8");
    dal_session_close(s);
}
END_TEST

/* Session variables stay set on a pinned connection, set before or after. */
START_TEST(test_session_variables)
{
    dal_session_t *s = session();
    dal_error_t err;

    tu_must(dal_session_set_var(s, "time_zone", "'+03:00'", &err), &err, "time_zone");
    run(s, "SET @a = 1");
    ck_assert_str_eq(value(s, "SELECT @@time_zone"), "+03:00");
    tu_must(dal_session_set_var(s, "sql_mode", "'ANSI_QUOTES'", &err), &err, "sql_mode");
    ck_assert_str_eq(value(s, "SELECT CONCAT(@a, @@sql_mode, @@time_zone)"), "1ANSI_QUOTES+03:00");
    dal_session_close(s);
    /* the connection went back reset */
    ck_assert_str_eq(value(NULL, "SELECT CONCAT(IFNULL(@a, 'none'), @@time_zone)"), "noneSYSTEM");
}
END_TEST

/* The pinned connection goes back to its pool, reset; nothing leaks. */
START_TEST(test_pool_release)
{
    dal_pool_stats_t before = pool("plain"), st;
    dal_session_t *s = session();
    char id[32];

    run(s, "SET @a = 1");
    run(s, "CREATE TEMPORARY TABLE pin_tmp3 (a INT)");
    run(s, "SELECT GET_LOCK('pin_leak', 0)");
    snprintf(id, sizeof id, "%s", value(s, "SELECT CONNECTION_ID()"));
    st = pool("plain");
    ck_assert_uint_eq(st.in_use, before.in_use + 1);
    dal_session_close(s);
    st = pool("plain");
    ck_assert_uint_eq(st.in_use, before.in_use);
    ck_assert_uint_eq(st.closed, before.closed);
    /* the same connection is handed out next, without its state */
    ck_assert_str_eq(value(NULL, "SELECT CONNECTION_ID()"), id);
    ck_assert_str_eq(value(NULL, "SELECT CONCAT(IFNULL(@a, 'none'), IS_FREE_LOCK('pin_leak'))"),
                     "none1");
    s = session();
    fails(s, "SELECT * FROM pin_tmp3", DAL_ESERVER);
    dal_session_close(s);
    /* outside a session a statement with state still leaves none behind */
    ck_assert_str_eq(value(NULL, "SELECT @q := 9"), "9");
    ck_assert_str_eq(value(NULL, "SELECT IFNULL(@q, 'none')"), "none");
}
END_TEST

/* SET TRANSACTION for the next transaction only changes nothing the
 * server's state change flag reports (dal's connections do not track
 * transaction information, under which a server bypasses its query
 * cache): the connection still goes back reset, so the next borrower's
 * statement is not in a read-only transaction. */
START_TEST(test_set_transaction_next)
{
    dal_session_t *s;
    char id[32];

    snprintf(id, sizeof id, "%s", value(NULL, "SELECT CONNECTION_ID()"));
    tu_setup_exec(dal, NULL, "SET TRANSACTION READ ONLY");
    s = session();
    ck_assert_str_eq(value(s, "SELECT CONNECTION_ID()"), id); /* the same connection */
    run(s, "INSERT INTO pin_plain VALUES (77)");
    run(s, "DELETE FROM pin_plain WHERE a = 77");
    dal_session_close(s);
}
END_TEST

#define QUESTIONS \
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'"

/* A session that pins nothing takes and gives back one pooled connection
 * per statement, with no more round trips than before. */
START_TEST(test_unpinned_unchanged)
{
    dal_pool_stats_t before, st;
    dal_session_t *s = session();
    MYSQL *m = tu_direct(ports[0], "plain");
    long long q0, q1;
    int i;

    run(s, "SELECT 1"); /* a connection in the pool */
    before = pool("plain");
    q0 = tu_value(m, QUESTIONS);
    for (i = 0; i < 10; i++) {
        ck_assert_str_eq(value(s, "SELECT a FROM pin_plain UNION ALL SELECT 5"), "5");
        st = pool("plain");
        ck_assert_uint_eq(st.in_use, before.in_use);
    }
    q1 = tu_value(m, QUESTIONS);
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    st = pool("plain");
    ck_assert_uint_eq(st.created, before.created);
    /* the ten statements and the first look: not one more */
    ck_assert_int_eq(q1 - q0, 11);
    dal_session_close(s);
    mysql_close(m);
}
END_TEST

/* A pinned connection that dies takes the state with it: the node's
 * statements fail until the session resets. */
START_TEST(test_lost_connection)
{
    dal_session_t *s = session();
    MYSQL *m = tu_direct(ports[0], "plain");
    dal_error_t err;
    char sql[64];
    const char *msg;

    run(s, "SET @a = 1");
    snprintf(sql, sizeof sql, "KILL %s", value(s, "SELECT CONNECTION_ID()"));
    ck_assert_msg(mysql_query(m, sql) == 0, "%s", mysql_error(m));
    fails(s, "SELECT @a", DAL_ESERVER);
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    msg = fails(s, "SELECT @a", DAL_ESTATE);
    ck_assert_msg(strstr(msg, "was lost") != NULL, "%s", msg);
    fails(s, "SELECT COUNT(*) FROM pin_plain", DAL_ESTATE);
    /* other nodes go on */
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food WHERE k = 2"), "n2");
    tu_must(dal_session_reset(s, &err), &err, "reset");
    ck_assert_str_eq(value(s, "SELECT IFNULL(@a, 'none')"), "none");
    dal_session_close(s);
    mysql_close(m);
}
END_TEST

/* XA START pins its connection until XA COMMIT or XA ROLLBACK succeeds;
 * a statement on another node is refused while the XA is open. */
START_TEST(test_xa)
{
    dal_session_t *s = session();
    const char *msg;

    run(s, "XA START 'pin1'");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    run(s, "INSERT INTO pin_plain VALUES (41)");
    msg = fails(s, "SELECT name FROM pin_food WHERE k = 2", DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(msg, "XA transaction is on datasource plain") != NULL, "%s", msg);
    fails(s, "XA START 'pin2'", DAL_ESERVER); /* the open one stays */
    run(s, "XA END 'pin1'");
    run(s, "XA PREPARE 'pin1'");
    fails(s, "XA ROLLBACK 'other'", DAL_ESERVER);
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    run(s, "XA ROLLBACK 'pin1'");
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_plain WHERE a = 41"), "0");
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food WHERE k = 2"), "n2");
    /* a pin held for something else stays */
    run(s, "SET @x = 1");
    run(s, "XA START 'pin3'");
    run(s, "XA END 'pin3'");
    run(s, "XA COMMIT 'pin3' ONE PHASE");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT @x"), "1");
    dal_session_close(s);
}
END_TEST

/* A reset keeps the connection pinned for session status, reset in place:
 * its counters restart at 0. */
START_TEST(test_reset_status)
{
    dal_session_t *s = session();
    dal_error_t err;

    run(s, "SET @a = 1");
    ck_assert_str_eq(value(s, "SELECT 1 FROM information_schema.`SESSION_STATUS` LIMIT 1"), "1");
    run(s, "SELECT 1");
    tu_must(dal_session_reset(s, &err), &err, "reset");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT IFNULL(@a, 'none')"), "none");
    ck_assert_str_eq(value(s, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS "
                              "WHERE VARIABLE_NAME = 'COM_SELECT'"), "2");
    dal_session_close(s);
}
END_TEST

/* s into database db (NULL: the top level) with dal_session_use_schema;
 * the test fails when it cannot. */
static void use(dal_session_t *s, const char *db)
{
    char what[80];
    dal_error_t err;

    snprintf(what, sizeof what, "use %s", db != NULL ? db : "top level");
    tu_must(dal_session_use_schema(s, db, &err), &err, what);
}

/* s into db, a database made anew (create: CREATE DATABASE's options
 * after the name, "" for none). */
static void use_new(dal_session_t *s, const char *db, const char *create)
{
    char sql[160];

    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", db);
    run(s, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s%s", db, create);
    run(s, sql);
    use(s, db);
}

/* DROP DATABASE db, s's database: s is then in no database. */
static void drop_current(dal_session_t *s, const char *db)
{
    char sql[160];

    snprintf(sql, sizeof sql, "DROP DATABASE %s", db);
    run(s, sql);
    ck_assert_ptr_null(dal_session_schema(s));
    ck_assert_int_eq(dal_session_no_database(s), 1);
}

/* Statements on pooled connections (no session) run in plain: no pooled
 * connection was left in a session's database. */
static void pooled_in_plain(void)
{
    int i;

    for (i = 0; i < 4; i++)
        ck_assert_str_eq(value(NULL, "SELECT DATABASE()"), "plain");
}

/* Close s: its connection is back in plain's pool, and in plain. */
static void close_in_plain(dal_session_t *s)
{
    dal_session_close(s);
    ck_assert_uint_eq(pool("plain").in_use, 0);
    pooled_in_plain();
}

/* A database no [schema] declares is the default datasource's own
 * ([dal] server_schemas' default): checked there, selected on a pinned
 * connection, put back when the session leaves it, kept by a reset; no
 * other statement ever finds it on a pooled connection. */
START_TEST(test_server_database)
{
    dal_session_t *s = session();
    dal_error_t err;

    use(s, "mysql");
    ck_assert_str_eq(dal_session_schema(s), "mysql");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "mysql");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) > 0 FROM user"), "1");
    /* the top level's sharded table, by the top level's name */
    ck_assert_str_eq(value(s, "SELECT name FROM pinshop.pin_food WHERE k = 2"), "n2");
    ck_assert_int_eq(dal_session_use_schema(s, "pin_nosuch_db", &err), DAL_ESERVER);
    ck_assert_uint_eq(err.mysql_errno, 1049);
    ck_assert_str_eq(dal_session_schema(s), "mysql");
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "mysql");
    pooled_in_plain();
    /* leaving gives the connection back, in its own database */
    use(s, NULL);
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "plain");
    pooled_in_plain();
    /* pinned for a user variable too: the pin stays, back in plain */
    run(s, "SET @a = 1");
    use(s, "mysql");
    ck_assert_str_eq(value(s, "SELECT CONCAT(DATABASE(), @a)"), "mysql1");
    use(s, NULL);
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_str_eq(value(s, "SELECT CONCAT(DATABASE(), @a)"), "plain1");
    /* a reset keeps the database, as COM_RESET_CONNECTION does */
    use(s, "mysql");
    tu_must(dal_session_reset(s, &err), &err, "reset");
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "mysql");
    /* DROP DATABASE of the current one leaves the session in none */
    use_new(s, "pin_gone", "");
    drop_current(s, "pin_gone");
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "NULL");
    close_in_plain(s);
}
END_TEST

/* DROP DATABASE of the session's server database leaves it in no
 * database, on the connection it ran on: NULL and the server's collation,
 * the server's 1046 for unqualified names (a configured table's too),
 * db.table working (the top level's sharded table by its name); a reset
 * keeps it (the connection reset in place), choosing a schema ends it; no
 * pooled connection is ever left in none. */
START_TEST(test_no_database)
{
    dal_session_t *s = session();
    dal_error_t err;

    use_new(s, "pin_none", " COLLATE utf8mb4_unicode_ci");
    run(s, "SET @v = 5");
    ck_assert_str_eq(value(s, "SELECT @@collation_database"), "utf8mb4_unicode_ci");
    ck_assert_int_eq(dal_session_no_database(s), 0);
    drop_current(s, "pin_none");
    ck_assert_str_eq(value(s, "SELECT CONCAT(IFNULL(DATABASE(), 'none'), @v)"), "none5");
    ck_assert_str_eq(value(s, "SELECT @@collation_database = @@collation_server"), "1");
    ck_assert_str_eq(value(s, "SELECT @@character_set_database = @@character_set_server"), "1");
    fails(s, "SELECT * FROM pin_plain", DAL_ESERVER);
    fails(s, "SELECT name FROM pin_food WHERE k = 2", DAL_ESERVER);
    ck_assert_str_eq(value(s, "SELECT COUNT(*) >= 0 FROM plain.pin_plain"), "1");
    ck_assert_str_eq(value(s, "SELECT name FROM pinshop.pin_food WHERE k = 2"), "n2");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pinshop.pin_food"), "8");
    ck_assert_int_eq(dal_session_use_schema(s, "pin_nosuch_db", &err), DAL_ESERVER);
    ck_assert_int_eq(dal_session_no_database(s), 1);
    /* a reset keeps it: the connection, reset in place, stays in none */
    tu_must(dal_session_reset(s, &err), &err, "reset");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    ck_assert_int_eq(dal_session_no_database(s), 1);
    ck_assert_str_eq(value(s, "SELECT IFNULL(DATABASE(), 'none')"), "none");
    fails(s, "SELECT * FROM pin_plain", DAL_ESERVER);
    pooled_in_plain();
    /* the top level again: the connection back in plain, and to its pool */
    use(s, NULL);
    ck_assert_int_eq(dal_session_no_database(s), 0);
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "plain");
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food WHERE k = 2"), "n2");
    ck_assert_str_eq(value(s, "SELECT IFNULL(@v, 'reset')"), "reset");
    close_in_plain(s);
}
END_TEST

START_TEST(test_reset)
{
    dal_session_t *s = session();
    dal_error_t err;

    tu_must(dal_session_set_var(s, "autocommit", "0", &err), &err, "autocommit");
    run(s, "SET @a = 1");
    run(s, "INSERT INTO pin_plain VALUES (1)");
    ck_assert(dal_in_transaction(s));
    tu_must(dal_session_reset(s, &err), &err, "reset");
    ck_assert(!dal_in_transaction(s));
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    ck_assert_str_eq(value(s, "SELECT IFNULL(@a, 'none')"), "none");
    ck_assert_str_eq(value(s, "SELECT COUNT(*) FROM pin_plain"), "0"); /* rolled back */
    ck_assert(!dal_in_transaction(s)); /* autocommit is back */
    ck_assert_int_eq(dal_session_reset(NULL, &err), DAL_EINVAL);
    ck_assert_uint_eq(dal_session_pinned(NULL), 0);
    dal_session_close(s);
}
END_TEST

/* A reload that rebuilds the pinned datasource leaves the session on the
 * connection holding its state. */
START_TEST(test_reload)
{
    dal_session_t *s = session();
    dal_error_t err;
    char *changed;

    run(s, "SET @a = 11");
    changed = make_ini("connect_timeout = 3s\n");
    ck_assert_str_eq(changed, ini);
    free(changed);
    tu_must(dal_reload(dal, &err), &err, "reload");
    ck_assert_str_eq(value(s, "SELECT @a"), "11");
    ck_assert_str_eq(value(s, "SELECT @a + COUNT(*) FROM pin_plain"), "11");
    dal_session_close(s);
    ck_assert_uint_eq(pool("plain").in_use, 0);
}
END_TEST

/* A reload that removes the pinned datasource: user variables cannot be
 * read elsewhere (refused), other statements route by the new file, and
 * the pinned connection goes when the session ends. */
START_TEST(test_reload_removes)
{
    dal_session_t *s = session();
    dal_error_t err;
    char text[4096], *path;
    size_t len = 0;
    const char *msg;

    run(s, "SET @a = 12");
    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[dal]\ndefault_datasource = dbProductSku3\n"
             "[table pin_food]\n"
             "datasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 8\n"
             "shard_key = k\nstrategy = mod\n");
    path = tu_write(dir, "pin.ini", text);
    ck_assert_str_eq(path, ini);
    free(path);
    tu_must(dal_reload(dal, &err), &err, "reload without plain");
    msg = fails(s, "SELECT @a", DAL_EUNSUPPORTED);
    ck_assert_msg(strstr(msg, "datasource plain") != NULL, "%s", msg);
    ck_assert_str_eq(value(s, "SELECT DATABASE()"), "product_3");
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food WHERE k = 7"), "n7");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    dal_session_close(s);
    free(make_ini(""));
    tu_must(dal_reload(dal, &err), &err, "reload with plain again");
    ck_assert_str_eq(value(NULL, "SELECT DATABASE()"), "plain");
}
END_TEST

/* Each pinned connection is counted for the monitors, by datasource and
 * the state that pinned it. */
START_TEST(test_metrics)
{
    unsigned port = tu_free_port();
    char extra[128], *path, *body = NULL;
    dal_session_t *s = NULL;
    dal_error_t err;
    dal_t *saved = dal;

    snprintf(extra, sizeof extra, "[monitor prom]\nplugin = prometheus\naddress = 127.0.0.1:%u\n",
             port);
    path = make_ini(extra);
    tu_must(dal_open(path, NULL, &dal, &err), &err, "open with prometheus");
    s = session();
    run(s, "SET @a = 1");
    run(s, "SELECT GET_LOCK('pin_metrics', 0)"); /* on the same connection: no new pin */
    ck_assert_str_eq(value(s, "SELECT name FROM pin_food WHERE k = 0 AND "
                              "GET_LOCK('pin_metrics0', 0) = 1"), "n0");
    dal_session_close(s);
    s = session();
    run(s, "CREATE TEMPORARY TABLE pin_tmp4 (a INT)");
    dal_session_close(s);
    ck_assert_msg(tu_http(port, "GET /metrics HTTP/1.0\r\n\r\n", &body) == 200,
                  "no metrics on 127.0.0.1:%u", port);
    ck_assert_msg(tu_metric(body, "dal_session_pins_total{datasource=\"plain\","
                                  "state=\"user_variable\"}") == 1, "%.3000s", body);
    ck_assert_msg(tu_metric(body, "dal_session_pins_total{datasource=\"plain\","
                                  "state=\"temporary_table\"}") == 1, "%.3000s", body);
    ck_assert_msg(tu_metric(body, "dal_session_pins_total{datasource=\"plain\","
                                  "state=\"named_lock\"}") < 0, "%.3000s", body);
    ck_assert_msg(tu_metric(body, "dal_session_pins_total{datasource=\"dbProductSku0\","
                                  "state=\"named_lock\"}") == 1, "%.3000s", body);
    free(body);
    dal_close(dal);
    dal = saved;
    free(path);
    free(make_ini("")); /* the file as the other tests left it */
}
END_TEST

static Suite *pin_suite(void)
{
    Suite *s = suite_create("pin");
    TCase *tc = tcase_create("cluster");

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_test(tc, test_user_variables);
    tcase_add_test(tc, test_user_variables_one_node);
    tcase_add_test(tc, test_temporary_table);
    tcase_add_test(tc, test_named_lock);
    tcase_add_test(tc, test_lock_tables);
    tcase_add_test(tc, test_prepare_execute);
    tcase_add_test(tc, test_transactions);
    tcase_add_test(tc, test_scatter);
    tcase_add_test(tc, test_session_variables);
    tcase_add_test(tc, test_pool_release);
    tcase_add_test(tc, test_unpinned_unchanged);
    tcase_add_test(tc, test_set_transaction_next);
    tcase_add_test(tc, test_lost_connection);
    tcase_add_test(tc, test_reset);
    tcase_add_test(tc, test_xa);
    tcase_add_test(tc, test_reset_status);
    tcase_add_test(tc, test_server_database);
    tcase_add_test(tc, test_no_database);
    tcase_add_test(tc, test_reload);
    tcase_add_test(tc, test_reload_removes);
    tcase_add_test(tc, test_metrics);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* one process: the tests share the cluster and the dal_t */
    return tu_run(pin_suite(), CK_NOFORK);
}
