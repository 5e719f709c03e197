/*
 * test_infile.c -- LOAD DATA LOCAL INFILE (core/runtime/infile.c) against real
 * MariaDB servers: by default the statement fails with the server's error
 * 4166 and dal opens no file; a session's reader supplies the bytes (in and
 * out of transactions, on pooled and pinned connections) and its failures
 * reach the caller, a file cut short loading no row; [dal] local_infile =
 * on reads the file, also after a reload turns it on; a sharded table is
 * refused; a pooled connection that served a reader serves the next
 * borrower without it.
 *
 * tests/suites/infile_test.sh starts the cluster (product_0, product_1 on two
 * servers, `plain` on server 0, the default datasource) and exports
 * DAL_TEST_PORTS.  A file dal must not open is a FIFO with a writer thread
 * waiting on it (fifo_t): opening it for reading would let the writer in,
 * which would say so and hand the reader a row.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dal/dal.h>

#include "testutil.h"

#define NODES 2
#define ROWS 6000 /* about 90 KiB of rows: libmariadb sends 4 KiB per read */

static int ports[NODES];
static char *dir;
static dal_t *dal;

static char *make_ini(const char *name, const char *extra)
{
    char text[4096];
    size_t len = 0;

    tu_datasources(text, sizeof text, &len, "dbProductSku", ports, NODES, "dalpass");
    snprintf(text + len, sizeof text - len,
             "[datasource plain]\n"
             "master = mysql://dal:dalpass@127.0.0.1:%d/plain\n"
             "[dal]\n"
             "default_datasource = plain\n"
             "%s"
             "[table infile_food]\n"
             "datasource = dbProductSku\ndb_shard_num = 2\ntable_shard_num = 2\n"
             "shard_key = k\nstrategy = mod\n"
             "[table infile_copy]\n"
             "datasource = dbProductSku\ndb_shard_num = 2\nbroadcast = true\n",
             ports[0], extra);
    return tu_write(dir, name, text);
}

static dal_session_t *session(void)
{
    dal_session_t *s = NULL;
    dal_error_t err;

    tu_must(dal_session_open(dal, &s, &err), &err, "session");
    return s;
}

/* sql in s (NULL: dal_query) must succeed. */
static void run(dal_session_t *s, const char *sql)
{
    dal_error_t err;
    int rc = s ? dal_session_exec(s, NULL, sql, NULL, 0, NULL, &err)
               : dal_exec(dal, NULL, sql, NULL, 0, NULL, &err);

    tu_must(rc, &err, sql);
}

/* sql fails in s (NULL: dal_query) with code; the error is returned (static). */
static const dal_error_t *fails(dal_session_t *s, const char *sql, int code)
{
    static dal_error_t err;
    int rc = s ? dal_session_exec(s, NULL, sql, NULL, 0, NULL, &err)
               : dal_exec(dal, NULL, sql, NULL, 0, NULL, &err);

    ck_assert_msg(rc == code, "%s: %s instead of %s (%s)", sql, dal_strerror(rc),
                  dal_strerror(code), rc ? err.message : "");
    return &err;
}

/* The 4166 refusal, as the server words it, with dal's reason. */
static void refused(const dal_error_t *err)
{
    ck_assert_uint_eq(err->mysql_errno, 4166);
    ck_assert_str_eq(err->sqlstate, "HY000");
    ck_assert_msg(strstr(err->message, "The used command is not allowed because the MariaDB "
                                       "server or client has disabled the local infile "
                                       "capability ([dal] local_infile = off)") != NULL,
                  "%s", err->message);
}

static void says(const dal_error_t *err, const char *words)
{
    ck_assert_msg(strstr(err->message, words) != NULL, "'%s' does not say '%s'", err->message,
                  words);
}

static long long rows_in(const char *db, const char *table)
{
    char sql[128];

    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", table);
    return tu_direct_value(ports[0], db, sql);
}

/* ------------------------------------------------ a file nobody may open */

typedef struct fifo {
    char *path;
    pthread_t writer;
    atomic_int done;     /* the statement is over: the test itself opens it now */
    atomic_int opened;   /* someone opened it for reading during the statement */
} fifo_t;

static void *fifo_write(void *arg)
{
    fifo_t *f = arg;
    int fd = open(f->path, O_WRONLY); /* waits for a reader */

    if (fd < 0)
        return NULL;
    if (!atomic_load(&f->done)) {
        atomic_store(&f->opened, 1);
        if (write(fd, "leaked\t1\n", 9) != 9)
            perror("fifo write");
    }
    close(fd);
    return NULL;
}

static void fifo_start(fifo_t *f, const char *name)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f->path = strdup(path);
    atomic_init(&f->done, 0);
    atomic_init(&f->opened, 0);
    ck_assert_msg(mkfifo(f->path, 0666) == 0, "mkfifo %s: %s", f->path, strerror(errno));
    ck_assert_int_eq(pthread_create(&f->writer, NULL, fifo_write, f), 0);
}

/* End the writer (by opening the FIFO ourselves) and say whether anyone
 * else opened it. */
static int fifo_end(fifo_t *f)
{
    int fd, opened;

    atomic_store(&f->done, 1);
    fd = open(f->path, O_RDONLY | O_NONBLOCK);
    ck_assert_msg(fd >= 0, "open %s: %s", f->path, strerror(errno));
    pthread_join(f->writer, NULL);
    close(fd);
    unlink(f->path);
    free(f->path);
    opened = atomic_load(&f->opened);
    return opened;
}

/* ----------------------------------------------------------- a reader */

typedef struct reader {
    char *data;          /* ROWS rows "nNNNNN\tNNNNN\n" */
    size_t len, pos;
    int opens, reads, closes;
    char name[256];      /* the name the server asked for */
    int refuse_open;     /* open fails with 3948 / 42000 */
    int fail_at;         /* read number fail_at (1-based) fails; 0: none */
} reader_t;

static int r_open(void *user, const char *name, dal_error_t *err)
{
    reader_t *r = user;

    r->opens++;
    snprintf(r->name, sizeof r->name, "%s", name);
    if (r->refuse_open) {
        err->mysql_errno = 3948;
        snprintf(err->sqlstate, sizeof err->sqlstate, "42000");
        snprintf(err->message, sizeof err->message, "the reader says no to %s (100%%)", name);
        return -1;
    }
    r->pos = 0;
    return 0;
}

static long r_read(void *user, void *buf, size_t len, dal_error_t *err)
{
    reader_t *r = user;
    size_t n = r->len - r->pos;

    r->reads++;
    if (r->fail_at != 0 && r->reads == r->fail_at) {
        err->mysql_errno = 2013;
        snprintf(err->sqlstate, sizeof err->sqlstate, "08S01");
        snprintf(err->message, sizeof err->message, "the client went away mid-file");
        return -1;
    }
    /* less than asked for, at times: the handler must not care */
    if (n > len)
        n = len;
    if (n > 1000 && r->reads % 3 == 0)
        n = 1000;
    memcpy(buf, r->data + r->pos, n);
    r->pos += n;
    return (long)n;
}

static void r_close(void *user)
{
    ((reader_t *)user)->closes++;
}

static const dal_infile_ops_t reader_ops = {
    .struct_size = sizeof(dal_infile_ops_t), .open = r_open, .read = r_read, .close = r_close};

static reader_t *reader_new(void)
{
    reader_t *r = calloc(1, sizeof *r);
    int i;

    r->data = malloc((size_t)ROWS * 16);
    for (i = 0; i < ROWS; i++)
        r->len += (size_t)sprintf(r->data + r->len, "n%05d\t%05d\n", i, i);
    ck_assert_uint_gt(r->len, 64 * 1024);
    return r;
}

static void reader_free(reader_t *r)
{
    free(r->data);
    free(r);
}

static void with_reader(dal_session_t *s, reader_t *r)
{
    dal_error_t err;

    tu_must(dal_session_set_infile(s, &reader_ops, r, &err), &err, "dal_session_set_infile");
}

/* ------------------------------------------------------------- fixture */

static void global_setup(void)
{
    char *ini;

    tu_ports(ports, NODES);
    dir = tu_mkdtemp();
    ini = make_ini("infile.ini", "");
    dal = tu_open(ini);
    free(ini);
    tu_setup_exec(dal, NULL, "DROP TABLE IF EXISTS infile_t");
    tu_setup_exec(dal, NULL, "CREATE TABLE infile_t (name VARCHAR(20), n INT)");
}

static void global_teardown(void)
{
    dal_close(dal);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(test_default_refuses)
{
    dal_session_t *s = session();
    char sql[600];
    fifo_t f;

    run(NULL, "DELETE FROM infile_t");
    fifo_start(&f, "secret");
    snprintf(sql, sizeof sql, "LOAD DATA LOCAL INFILE '%s' INTO TABLE infile_t", f.path);
    refused(fails(NULL, sql, DAL_ESERVER));
    refused(fails(s, sql, DAL_ESERVER));
    /* in a transaction: the session's own connection */
    run(s, "BEGIN");
    refused(fails(s, sql, DAL_ESERVER));
    run(s, "ROLLBACK");
    ck_assert_msg(!fifo_end(&f), "dal opened the file of a LOAD DATA LOCAL INFILE");
    ck_assert_int_eq(rows_in("plain", "infile_t"), 0);
    /* the connection is fine afterwards */
    run(s, "INSERT INTO infile_t VALUES ('after', 1)");
    ck_assert_int_eq(rows_in("plain", "infile_t"), 1);
    dal_session_close(s);
}
END_TEST

START_TEST(test_reader)
{
    dal_session_t *s = session();
    reader_t *r = reader_new();

    run(NULL, "DELETE FROM infile_t");
    with_reader(s, r);
    run(s, "LOAD DATA LOCAL INFILE 'from-the-program.tsv' INTO TABLE infile_t");
    ck_assert_str_eq(r->name, "from-the-program.tsv");
    ck_assert_int_eq(r->opens, 1);
    ck_assert_int_eq(r->closes, 1);
    ck_assert_int_gt(r->reads, 16);
    ck_assert_int_eq(rows_in("plain", "infile_t"), ROWS);
    ck_assert_int_eq(tu_direct_value(ports[0], "plain", "SELECT SUM(n) FROM infile_t"),
                     (long long)ROWS * (ROWS - 1) / 2);
    ck_assert_int_eq(tu_direct_value(ports[0], "plain",
                                     "SELECT COUNT(*) FROM infile_t WHERE name = CONCAT('n', "
                                     "LPAD(n, 5, '0'))"), ROWS);
    dal_session_close(s);
    reader_free(r);
}
END_TEST

/* In a transaction (the session's connection) and on a pinned connection
 * (user variables: the statement runs through the non-blocking path). */
START_TEST(test_reader_held)
{
    dal_session_t *s = session();
    reader_t *r = reader_new();
    dal_error_t err;

    run(NULL, "DELETE FROM infile_t");
    with_reader(s, r);
    run(s, "BEGIN");
    run(s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE infile_t");
    run(s, "ROLLBACK");
    ck_assert_int_eq(rows_in("plain", "infile_t"), 0);
    ck_assert_int_eq(r->opens, 1);
    ck_assert_int_eq(r->closes, 1);
    run(s, "SET @pin = 1");
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    run(s, "LOAD DATA LOCAL INFILE 'y' INTO TABLE infile_t");
    ck_assert_str_eq(r->name, "y");
    ck_assert_int_eq(r->opens, 2);
    ck_assert_int_eq(r->closes, 2);
    ck_assert_int_eq(rows_in("plain", "infile_t"), ROWS);
    /* a read failing mid-file on the pinned connection: stopped there too,
     * the connection and its user variable stay */
    r->fail_at = r->reads + 4;
    ck_assert_uint_eq(fails(s, "LOAD DATA LOCAL INFILE 'cut' INTO TABLE infile_t",
                            DAL_ESERVER)->mysql_errno, 2013);
    r->fail_at = 0;
    ck_assert_int_eq(r->closes, 3);
    ck_assert_int_eq(rows_in("plain", "infile_t"), ROWS);
    ck_assert_uint_eq(dal_session_pinned(s), 1);
    run(s, "INSERT INTO infile_t SELECT 'pin', @pin");
    ck_assert_int_eq(tu_direct_value(ports[0], "plain",
                                     "SELECT n FROM infile_t WHERE name = 'pin'"), 1);
    run(s, "DELETE FROM infile_t WHERE name = 'pin'");
    /* dal_session_reset lets the pins go and keeps the reader */
    tu_must(dal_session_reset(s, &err), &err, "reset");
    ck_assert_uint_eq(dal_session_pinned(s), 0);
    run(s, "LOAD DATA LOCAL INFILE 'z' INTO TABLE infile_t");
    ck_assert_int_eq(r->opens, 4);
    ck_assert_int_eq(r->closes, 4);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 2 * ROWS);
    dal_session_close(s);
    reader_free(r);
}
END_TEST

START_TEST(test_reader_errors)
{
    dal_session_t *s = session();
    reader_t *r = reader_new();
    const dal_error_t *e;
    dal_error_t err;

    run(NULL, "DELETE FROM infile_t");
    with_reader(s, r);
    r->refuse_open = 1;
    e = fails(s, "LOAD DATA LOCAL INFILE 'no%s' INTO TABLE infile_t", DAL_ESERVER);
    ck_assert_uint_eq(e->mysql_errno, 3948);
    ck_assert_str_eq(e->sqlstate, "42000");
    ck_assert_msg(strstr(e->message, "the reader says no to no%s (100%)") != NULL, "%s", e->message);
    ck_assert_int_eq(r->opens, 1);
    ck_assert_int_eq(r->closes, 0);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 0);
    /* a read that fails mid-file: its error, one close, and the server
     * loads none of the rows it had (dal stops the statement) */
    r->refuse_open = 0;
    r->fail_at = 5;
    e = fails(s, "LOAD DATA LOCAL INFILE 'half' INTO TABLE infile_t", DAL_ESERVER);
    ck_assert_uint_eq(e->mysql_errno, 2013);
    ck_assert_str_eq(e->sqlstate, "08S01");
    says(e, "the client went away mid-file");
    ck_assert_int_eq(r->opens, 2);
    ck_assert_int_eq(r->closes, 1);
    ck_assert_int_eq(r->reads, 5);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 0);
    /* in a transaction: the statement fails, the transaction goes on */
    r->reads = 0;
    run(s, "BEGIN");
    run(s, "INSERT INTO infile_t VALUES ('before', 1)");
    e = fails(s, "LOAD DATA LOCAL INFILE 'half' INTO TABLE infile_t", DAL_ESERVER);
    ck_assert_uint_eq(e->mysql_errno, 2013);
    ck_assert_int_eq(r->closes, 2);
    run(s, "INSERT INTO infile_t VALUES ('after', 2)");
    run(s, "COMMIT");
    ck_assert_int_eq(rows_in("plain", "infile_t"), 2);
    run(NULL, "DELETE FROM infile_t");
    /* the first read fails: nothing was sent, nothing to stop */
    r->reads = 0;
    r->fail_at = 1;
    ck_assert_uint_eq(fails(s, "LOAD DATA LOCAL INFILE 'none' INTO TABLE infile_t",
                            DAL_ESERVER)->mysql_errno, 2013);
    ck_assert_int_eq(r->closes, 3);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 0);
    r->fail_at = 0;
    /* the session and its connections go on */
    run(s, "INSERT INTO infile_t VALUES ('after', 1)");
    ck_assert_int_eq(rows_in("plain", "infile_t"), 1);
    /* removed: refused again */
    tu_must(dal_session_set_infile(s, NULL, NULL, &err), &err, "remove");
    refused(fails(s, "LOAD DATA LOCAL INFILE 'z' INTO TABLE infile_t", DAL_ESERVER));
    ck_assert_int_eq(r->opens, 4);
    /* bad ops */
    ck_assert_int_eq(dal_session_set_infile(s, &(dal_infile_ops_t){.struct_size = 8}, r, &err),
                     DAL_EINVAL);
    dal_session_close(s);
    reader_free(r);
}
END_TEST

/* The server's id of the connection a statement of dal_query runs on. */
static long long conn_id(void)
{
    dal_result_t *res = NULL;
    dal_error_t err;
    long long id;
    size_t n;

    tu_must(dal_query(dal, NULL, "SELECT CONNECTION_ID()", NULL, 0, &res, &err), &err, "id");
    ck_assert_int_eq(dal_result_next(res, &err), 1);
    id = atoll(dal_result_text(res, 0, &n));
    dal_result_free(res);
    return id;
}

/* A pooled connection that served a session with a reader serves the next
 * borrower, without one, as any: refused, the file not opened, also after
 * the pool reset it.  One thread: the built-in cache hands it the same
 * connection each time. */
START_TEST(test_pool_forgets_reader)
{
    dal_session_t *a = session(), *b = session();
    reader_t *r = reader_new();
    dal_error_t err;
    long long id;
    char sql[600];
    fifo_t f;

    run(NULL, "DELETE FROM infile_t");
    id = conn_id();
    with_reader(a, r);
    /* a session variable: the pool resets the connection (COM_RESET_CONNECTION)
     * when a's statement gives it back */
    tu_must(dal_session_set_var(a, "sql_mode", "'STRICT_ALL_TABLES'", &err), &err, "set_var");
    run(a, "LOAD DATA LOCAL INFILE 'a' INTO TABLE infile_t");
    ck_assert_int_eq(r->opens, 1);
    ck_assert_int_eq(rows_in("plain", "infile_t"), ROWS);
    run(NULL, "DELETE FROM infile_t");
    fifo_start(&f, "pooled");
    snprintf(sql, sizeof sql, "LOAD DATA LOCAL INFILE '%s' INTO TABLE infile_t", f.path);
    refused(fails(b, sql, DAL_ESERVER));
    refused(fails(NULL, sql, DAL_ESERVER));
    ck_assert_msg(!fifo_end(&f), "dal opened the file of a LOAD DATA LOCAL INFILE");
    ck_assert_int_eq(r->opens, 1);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 0);
    ck_assert_int_eq(conn_id(), id);
    dal_session_close(a);
    dal_session_close(b);
    reader_free(r);
}
END_TEST

/* A LOAD DATA into a sharded (or broadcast) table: refused before any
 * server sees it, the reader never asked. */
START_TEST(test_sharded_refused)
{
    dal_session_t *s = session();
    reader_t *r = reader_new();
    const char *sharded = "LOAD DATA names table infile_food, which is sharded: dal sends a "
                          "LOAD DATA unchanged to the default datasource and does not route a "
                          "file's rows one by one";

    with_reader(s, r);
    says(fails(s, "LOAD DATA LOCAL INFILE 'f' INTO TABLE infile_food", DAL_EUNSUPPORTED), sharded);
    says(fails(s, "/* x */ load data local infile 'f' REPLACE INTO TABLE `infile_food` (k, name)",
               DAL_EUNSUPPORTED), sharded);
    says(fails(NULL, "LOAD DATA INFILE '/tmp/f' INTO TABLE infile_food", DAL_EUNSUPPORTED), sharded);
    says(fails(s, "LOAD DATA LOCAL INFILE 'f' INTO TABLE infile_copy", DAL_EUNSUPPORTED),
         "LOAD DATA names table infile_copy, which is a broadcast table");
    ck_assert_int_eq(r->opens, 0);
    dal_session_close(s);
    reader_free(r);
}
END_TEST

/* [dal] local_infile = on: dal reads the file, as a trusted program's
 * client library would; a session's reader still comes first. */
START_TEST(test_local_infile_on)
{
    dal_t *saved = dal;
    char *ini = make_ini("on.ini", "local_infile = on\n"), *file;
    dal_session_t *s;
    reader_t *r = reader_new();
    const dal_error_t *e;
    char sql[600];

    file = tu_write(dir, "rows.tsv", "a\t1\nb\t2\nc\t3\n");
    dal = tu_open(ini);
    run(NULL, "DELETE FROM infile_t");
    snprintf(sql, sizeof sql, "LOAD DATA LOCAL INFILE '%s' INTO TABLE infile_t", file);
    run(NULL, sql);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 3);
    s = session();
    run(s, sql);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 6);
    with_reader(s, r);
    run(s, sql);
    ck_assert_int_eq(r->opens, 1);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 6 + ROWS);
    dal_session_close(s);
    snprintf(sql, sizeof sql, "LOAD DATA LOCAL INFILE '%s/absent.tsv' INTO TABLE infile_t", dir);
    e = fails(NULL, sql, DAL_ESERVER);
    ck_assert_msg(strstr(e->message, "absent.tsv") != NULL && strstr(e->message, "No such file"),
                  "%s", e->message);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 6 + ROWS);
    snprintf(sql, sizeof sql, "LOAD DATA LOCAL INFILE '%s' INTO TABLE infile_t", dir);
    e = fails(NULL, sql, DAL_ESERVER);
    ck_assert_uint_eq(e->mysql_errno, 5005); /* CR_FILE_READ */
    says(e, "Is a directory");
    ck_assert_int_eq(rows_in("plain", "infile_t"), 6 + ROWS);
    dal_close(dal);
    dal = saved;
    free(file);
    free(ini);
    reader_free(r);
}
END_TEST

/* A reload that turns local_infile on or off: the connections made after
 * it answer as the new file says. */
START_TEST(test_reload)
{
    dal_t *saved = dal;
    char *ini = make_ini("reload.ini", ""), *file, sql[600];
    dal_error_t err;

    file = tu_write(dir, "reload.tsv", "r\t1\n");
    dal = tu_open(ini);
    run(NULL, "DELETE FROM infile_t");
    snprintf(sql, sizeof sql, "LOAD DATA LOCAL INFILE '%s' INTO TABLE infile_t", file);
    refused(fails(NULL, sql, DAL_ESERVER));
    free(make_ini("reload.ini", "local_infile = on\n"));
    tu_must(dal_reload(dal, &err), &err, "reload on");
    run(NULL, sql);
    ck_assert_int_eq(rows_in("plain", "infile_t"), 1);
    free(make_ini("reload.ini", "local_infile = off\n"));
    tu_must(dal_reload(dal, &err), &err, "reload off");
    refused(fails(NULL, sql, DAL_ESERVER));
    ck_assert_int_eq(rows_in("plain", "infile_t"), 1);
    dal_close(dal);
    dal = saved;
    free(file);
    free(ini);
}
END_TEST

static Suite *infile_suite(void)
{
    Suite *s = suite_create("infile");
    TCase *tc = tcase_create("cluster");

    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, global_setup, global_teardown);
    tcase_add_test(tc, test_default_refuses);
    tcase_add_test(tc, test_reader);
    tcase_add_test(tc, test_reader_held);
    tcase_add_test(tc, test_reader_errors);
    tcase_add_test(tc, test_pool_forgets_reader);
    tcase_add_test(tc, test_sharded_refused);
    tcase_add_test(tc, test_local_infile_on);
    tcase_add_test(tc, test_reload);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* one process: the tests share the cluster and the dal_t */
    return tu_run(infile_suite(), CK_NOFORK);
}
