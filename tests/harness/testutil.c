/*
 * testutil.c -- small helpers shared by the Check test programs.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *path = NULL;

    if (asprintf(&path, "%s/daltest.XXXXXX", base && *base ? base : "/tmp") < 0 ||
        mkdtemp(path) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        abort();
    }
    return path;
}

char *tu_write(const char *dir, const char *name, const char *text)
{
    char *path = NULL;
    FILE *f;

    if (asprintf(&path, "%s/%s", dir, name) < 0)
        abort();
    f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        abort();
    }
    return path;
}

int tu_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = NULL;
    char buf[65536];
    size_t n;
    int rc = -1;

    if (in == NULL)
        return -1;
    out = fopen(to, "wb");
    if (out == NULL)
        goto done;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            goto done;
    rc = 0;
done:
    if (out != NULL && fclose(out) != 0)
        rc = -1;
    fclose(in);
    return rc;
}

const char *tu_env(const char *name)
{
    const char *v = getenv(name);

    if (v == NULL || *v == '\0') {
        fprintf(stderr, "FATAL: environment variable %s is not set (run the tests with "
                        "`make check`)\n", name);
        exit(1);
    }
    return v;
}

void tu_rmtree(const char *dir)
{
    char *cmd = NULL;

    if (dir == NULL || strncmp(dir, "/", 1) != 0 || strstr(dir, "daltest.") == NULL)
        return;
    if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0 && system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    free(cmd);
}

/* Bind a loopback TCP socket to port (0: any) and close it: the port it
 * got, or 0 if the port is taken. */
static unsigned try_port(unsigned port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
         getsockname(fd, (struct sockaddr *)&a, &len) == 0;
    if (fd >= 0)
        close(fd);
    return ok ? ntohs(a.sin_port) : 0;
}

/* Below the kernel's ephemeral range when it leaves room, as
 * tests/harness/cluster.sh picks its ports: a port the kernel hands out itself
 * (bind to 0) can be taken by an outgoing connection before the test's
 * server listens on it. */
unsigned tu_free_port(void)
{
    static unsigned seq;
    unsigned lo = 32768, hi = 60999, i, p;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

    if (f != NULL) {
        if (fscanf(f, "%u %u", &lo, &hi) != 2)
            lo = 32768;
        fclose(f);
    }
    for (i = 0; lo > 12000 && i < 200; i++) {
        /* differs between the test programs make check runs at once */
        unsigned x = ((unsigned)getpid() * 2654435761u) ^ (seq++ * 40503u);
        if ((p = try_port(10000 + (x >> 7) % (lo - 10000))) != 0)
            return p;
    }
    if ((p = try_port(0)) == 0) {
        perror("tu_free_port");
        abort();
    }
    return p;
}

/* Connected to 127.0.0.1:port, or -1. */
static int dial(unsigned port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int tu_http(unsigned port, const char *request, char **body)
{
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap), *sep;
    int fd = dial(port), status = -1;
    ssize_t n;

    if (buf == NULL)
        abort();
    if (fd >= 0 && send(fd, request, strlen(request), 0) == (ssize_t)strlen(request)) {
        while ((n = recv(fd, buf + len, cap - len - 1, 0)) > 0) {
            len += (size_t)n;
            if (cap - len < 1024 && (buf = realloc(buf, cap *= 2)) == NULL)
                abort();
        }
    }
    if (fd >= 0)
        close(fd);
    buf[len] = '\0';
    sscanf(buf, "HTTP/1.%*d %d", &status);
    sep = strstr(buf, "\r\n\r\n");
    *body = strdup(sep ? sep + 4 : "");
    free(buf);
    return status;
}

double tu_metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    const char *p;

    for (p = text; (p = strstr(p, series)) != NULL; p += n)
        if ((p == text || p[-1] == '\n') && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

void tu_datasources(char *text, size_t cap, size_t *len, const char *prefix, const int *ports,
                    int n, const char *password)
{
    int i, k;

    for (i = 0; i < n && *len < cap; i++) {
        k = snprintf(text + *len, cap - *len,
                     "[datasource %s%d]\nmaster = mysql://dal:%s@127.0.0.1:%d/product_%d\n",
                     prefix, i, password, ports[i], i);
        if (k < 0 || (size_t)k >= cap - *len) {
            fprintf(stderr, "tu_datasources: buffer too small\n");
            abort();
        }
        *len += (size_t)k;
    }
}

void tu_must(int rc, const dal_error_t *err, const char *what)
{
    ck_assert_msg(rc == 0, "%s: %s (%s)", what, err->message, dal_strerror(rc));
}

int tu_server_prepared(dal_t *d, const char *sql, const dal_value_t *params, size_t n)
{
    dal_plan_t *p = NULL;
    dal_error_t err;
    int on;

    tu_must(dal_explain(d, NULL, sql, params, n, &p, &err), &err, sql);
    on = dal_plan_server_prepared(p, 0);
    dal_plan_free(p);
    return on;
}

void tu_ports(int *ports, int n)
{
    const char *env = tu_env("DAL_TEST_PORTS"), *p = env;
    char *end;
    int i;

    for (i = 0; i < n; i++, p = end) {
        ports[i] = (int)strtol(p, &end, 10);
        if (end == p) {
            fprintf(stderr, "FATAL: DAL_TEST_PORTS must hold %d ports, got '%s'\n", n, env);
            exit(1);
        }
    }
}

dal_t *tu_open(const char *location)
{
    dal_t *dal = NULL;
    dal_error_t err;

    if (dal_open(location, NULL, &dal, &err) != 0) {
        fprintf(stderr, "FATAL: dal_open %s: %s\n", location, err.message);
        exit(1);
    }
    return dal;
}

void tu_setup_exec(dal_t *dal, const dal_query_opts_t *opts, const char *sql)
{
    dal_error_t err;

    if (dal_exec(dal, opts, sql, NULL, 0, NULL, &err) != 0) {
        fprintf(stderr, "FATAL: %s: %s\n", sql, err.message);
        exit(1);
    }
}

static MYSQL *connect_as(int port, const char *user, const char *password, const char *db)
{
    MYSQL *m = mysql_init(NULL);

    ck_assert_ptr_nonnull(m);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    ck_assert_msg(mysql_real_connect(m, "127.0.0.1", user, password, db, (unsigned)port, NULL,
                                     0) != NULL,
                  "connect to 127.0.0.1:%d as %s: %s", port, user, mysql_error(m));
    return m;
}

MYSQL *tu_direct(int port, const char *db)
{
    return connect_as(port, "dal", "dalpass", db);
}

MYSQL *tu_root(int port, const char *db)
{
    return connect_as(port, "root", NULL, db);
}

void tu_exec(MYSQL *m, const char *sql)
{
    ck_assert_msg(mysql_query(m, sql) == 0, "%s: %s", sql, mysql_error(m));
}

long long tu_value(MYSQL *m, const char *sql)
{
    MYSQL_RES *r;
    MYSQL_ROW row;
    long long v = -1;

    tu_exec(m, sql);
    r = mysql_store_result(m);
    if (r != NULL && (row = mysql_fetch_row(r)) != NULL && row[0] != NULL)
        v = atoll(row[0]);
    mysql_free_result(r);
    return v;
}

long long tu_direct_value(int port, const char *db, const char *sql)
{
    MYSQL *m = tu_direct(port, db);
    long long v = tu_value(m, sql);

    mysql_close(m);
    return v;
}

/* How many connections user dal holds on the server at port, once it
 * has none or after 5 s. */
static long long dal_connections(int port)
{
    const char *q = "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'dal'";
    long long n = -1;
    int tries;

    for (tries = 0; tries < 50; tries++) {
        MYSQL *m = tu_root(port, NULL);
        n = tu_value(m, q);
        mysql_close(m);
        if (n == 0)
            break;
        usleep(100000);
    }
    return n;
}

void tu_no_dal_connections(const int *ports, int n)
{
    long long left;
    int i;

    for (i = 0; i < n; i++) {
        left = dal_connections(ports[i]);
        ck_assert_msg(left == 0, "server %d still has %lld connections of user dal", i, left);
    }
}
