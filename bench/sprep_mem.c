/*
 * sprep_mem.c -- memory of the server-side prepared statement cache of one
 * backend connection ([dal] server_prepare_cache), client and server side.
 *
 *   sprep_mem CONFIG N
 *
 * CONFIG's default datasource must be reachable; the program makes a table
 * sprep_mem there.  One thread runs N distinct one-parameter statements
 * once each, twice: with server_prepare = off and with auto (the file's
 * key is replaced through DAL_SERVER_PREPARE, so leave it unset).  The
 * client figure is the difference of the heap in use (mallinfo2) between
 * the two, per statement: what the handles cost beyond the statements'
 * analyses, which both modes keep.  The server figure is the growth of the
 * connection's Memory_used (a MariaDB session status) over the N runs in
 * auto mode, per statement.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dal/dal.h>

static void die(const char *what, const dal_error_t *err)
{
    fprintf(stderr, "sprep_mem: %s: %s\n", what, err->message);
    exit(1);
}

/* The backend connection's Memory_used: the same pooled connection, as
 * one thread takes the one it gave back. */
static long long session_memory(dal_t *d)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    long long v = -1;

    if (dal_query(d, NULL, "SHOW SESSION STATUS LIKE 'Memory_used'", NULL, 0, &r, &err) != 0)
        die("SHOW STATUS", &err);
    if (dal_result_next(r, &err) == 1)
        v = dal_result_int(r, 1);
    dal_result_free(r);
    return v;
}

/* Heap bytes in use after running n distinct statements in mode; the
 * server's growth into *server. */
static size_t run(const char *config, const char *mode, int n, long long *server)
{
    char sql[128];
    dal_value_t p = dal_int(1);
    dal_error_t err;
    dal_t *d = NULL;
    size_t before;
    long long s0;
    int i;

    setenv("DAL_SERVER_PREPARE", mode, 1);
    if (dal_open(config, NULL, &d, &err) != 0)
        die(config, &err);
    if (dal_exec(d, NULL, "CREATE TABLE IF NOT EXISTS sprep_mem (id INT PRIMARY KEY)", NULL, 0,
                 NULL, &err) != 0)
        die("CREATE TABLE", &err);
    s0 = session_memory(d);
    before = mallinfo2().uordblks;
    for (i = 0; i < n; i++) {
        snprintf(sql, sizeof sql, "SELECT id FROM sprep_mem WHERE id = ? + %d", i);
        if (dal_exec(d, NULL, sql, &p, 1, NULL, &err) != 0)
            die(sql, &err);
    }
    before = mallinfo2().uordblks - before;
    *server = session_memory(d) - s0;
    dal_close(d);
    return before;
}

/* run() in a child process: libdal reads DAL_SERVER_PREPARE once per
 * process, and each mode should start from the same heap. */
static size_t run_apart(const char *config, const char *mode, int n, long long *server)
{
    unsigned long long v[2] = {0, 0};
    int fd[2], status;
    pid_t pid;

    if (pipe(fd) != 0 || (pid = fork()) < 0) {
        perror("sprep_mem");
        exit(1);
    }
    if (pid == 0) {
        long long s;
        close(fd[0]);
        v[0] = run(config, mode, n, &s);
        v[1] = (unsigned long long)s;
        _exit(write(fd[1], v, sizeof v) == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], v, sizeof v) != (ssize_t)sizeof v || waitpid(pid, &status, 0) != pid ||
        status != 0)
        exit(1);
    close(fd[0]);
    *server = (long long)v[1];
    return (size_t)v[0];
}

int main(int argc, char **argv)
{
    long long s_off, s_auto;
    size_t off, on;
    int n;

    if (argc != 3 || (n = atoi(argv[2])) <= 0) {
        fprintf(stderr, "usage: sprep_mem CONFIG N\n");
        return 2;
    }
    off = run_apart(argv[1], "off", n, &s_off);
    on = run_apart(argv[1], "auto", n, &s_auto);
    printf("statements %d\nclient heap: off %zu B, auto %zu B, handles %.0f B each\n"
           "server Memory_used growth: off %lld B, auto %lld B, %.0f B per prepared statement\n",
           n, off, on, ((double)on - (double)off) / n, s_off, s_auto,
           ((double)s_auto - (double)s_off) / n);
    return 0;
}
