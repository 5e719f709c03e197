/*
 * iowait.c -- backend socket waits and the per-thread hook; see iowait.h.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "clock.h" /* DAL_TLS_SMALL */
#include "iowait.h"

static _Thread_local dal_io_wait_fn hook DAL_TLS_SMALL;
static _Thread_local void *hook_arg DAL_TLS_SMALL;
static _Thread_local int blocked DAL_TLS_SMALL;

static const iowait_state_t *kept[IOWAIT_MAX_KEPT];
static atomic_uint nkept;

void dal_set_io_wait(dal_io_wait_fn fn, void *arg)
{
    hook = fn;
    hook_arg = arg;
}

void iowait_keep(const iowait_state_t *st)
{
    unsigned int i = atomic_fetch_add(&nkept, 1);

    if (i < IOWAIT_MAX_KEPT)
        kept[i] = st;
}

void iowait_block(void)
{
    blocked++;
}

void iowait_unblock(void)
{
    blocked--;
}

/* The thread's per-statement state while the hook runs others. */
typedef struct saved {
    _Alignas(16) unsigned char kept[IOWAIT_MAX_KEPT][IOWAIT_KEPT_BYTES];
} saved_t;

static unsigned int kept_count(void)
{
    unsigned int n = atomic_load(&nkept);

    return n < IOWAIT_MAX_KEPT ? n : IOWAIT_MAX_KEPT;
}

static void put_aside(saved_t *s)
{
    unsigned int i, n = kept_count();

    for (i = 0; i < n; i++)
        kept[i]->put_aside(s->kept[i]);
}

static void put_back(const saved_t *s)
{
    unsigned int i, n = kept_count();

    for (i = 0; i < n; i++)
        kept[i]->put_back(s->kept[i]);
}

static int hooked(int fd, short events, int timeout_ms)
{
    dal_io_wait_fn fn = hook;
    void *arg = hook_arg;
    saved_t s;
    int rc;

    put_aside(&s);
    rc = fn(arg, fd, events, timeout_ms);
    put_back(&s);
    if (rc == 0)
        errno = ETIMEDOUT;
    return rc;
}

int iowait_fd(int fd, short events, int timeout_ms)
{
    struct pollfd p = {fd, events, 0};
    int rc;

    if (hook != NULL && blocked == 0)
        return hooked(fd, events, timeout_ms);
    while ((rc = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    if (rc == 0)
        errno = ETIMEDOUT;
    return rc;
}

int iowait_poll(struct pollfd *pfd, nfds_t n, int timeout_ms)
{
    nfds_t i;
    int rc;

    if (hook == NULL || blocked > 0 || n == 0)
        return poll(pfd, n, timeout_ms);
    if ((rc = poll(pfd, n, 0)) != 0)
        return rc;
    /* the first socket with something to wait for (a job may wait for
     * its timeout alone) */
    for (i = 0; i + 1 < n && pfd[i].events == 0; i++)
        ;
    if ((rc = hooked(pfd[i].fd, pfd[i].events, timeout_ms)) <= 0)
        return rc;
    return poll(pfd, n, 0);
}

/* The client library's wait (MARIADB_OPT_IO_WAIT): after a read or write
 * of the socket found it not ready, or a connect in progress. */
static int connector_wait(my_socket fd, my_bool is_read, int timeout_ms)
{
    return iowait_fd(fd, is_read ? POLLIN : POLLOUT, timeout_ms);
}

void iowait_install(MYSQL *m)
{
    mysql_optionsv(m, MARIADB_OPT_IO_WAIT, connector_wait);
}
