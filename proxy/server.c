/*
 * server.c -- listeners, I/O threads and statement workers.  See proxy.h
 * for the model.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <dal/plugin.h>

#include "coro.h"
#include "proxy.h"
#include "reply.h"

#define MAX_LISTEN 16
#define READ_CHUNK 16384
/* Plaintext encrypted at a time: c->wire stays small while a large reply
 * goes out, and c->out moves once per batch, not once per record. */
#define TLS_BATCH (1024 * 1024)
/* Bytes read from one client at a time: the packets are judged (a header
 * over the limit refused) before more is read. */
#define READ_BUDGET (1024 * 1024)
/* Backpressure: while a client's unsent replies are over this, its next
 * commands wait in the socket (it is not read). */
#define OUT_LIMIT (1024 * 1024)
/* A worker writes a reply it builds once it grows past this (proxy_drain),
 * down to half of it. */
#define DRAIN_AT (4 * 1024 * 1024)
/* How long a worker waits for a client to read before closing it, as
 * MariaDB's net_write_timeout. */
#define WRITE_TIMEOUT_MS 60000
/* At most one malloc_trim a second, after clients with big buffers left. */
#define TRIM_EVERY_MS 1000

/* Statements an I/O thread runs itself at once (inline_io); the next
 * go to the workers.  Each has a coroutine, made when first needed and
 * kept while the thread runs. */
#define INLINE_MAX 64
/* A statement's stack there: virtual memory, touched as it is used. */
#define INLINE_STACK (1024 * 1024)

/* One statement an I/O thread runs as a coroutine, and what it waits for. */
typedef struct inline_run {
    struct proxy_io *io;
    coro_t *co;                      /* owned */
    proxy_client_t *c;               /* whose command; NULL: the slot is free */
    int fd;                          /* what it waits for (-1: nothing) */
    uint64_t deadline;               /* guard_now_ms() when the wait ends; 0: never */
    bool ready;                      /* the loop saw fd ready */
    unsigned int timed_at;           /* its place in io->timed while it waits
                                        with a deadline */
    struct inline_run *next_free;
} inline_run_t;

/* A connection one I/O thread accepted for another (io_pick). */
typedef struct handoff {
    int fd;
    uint16_t port;
    char peer[64];
    struct handoff *next;
} handoff_t;

/* One I/O thread: its epoll, listeners, and clients handed back by workers. */
typedef struct proxy_io {
    proxy_t *px;
    pthread_t thread;
    int ep;
    int wake;                        /* eventfd: workers finished a client */
    int listeners[MAX_LISTEN];
    size_t nlisteners;
    pthread_mutex_t mu;
    proxy_client_t *done_head;       /* clients back from a worker, under mu */
    handoff_t *handoffs;             /* owned: connections to adopt, under mu */
    atomic_uint nclients;            /* its clients, with those handed to it */
    proxy_client_t *held;            /* clients whose login reply waits (guard.c) */
    uint64_t held_due;               /* the earliest hold_until of held */
    atomic_uint busy;                /* its clients a worker has now */
    uint64_t idle_checked_ms;        /* close_idle's last walk (guard_now_ms) */
    /* its clients not yet authenticated, by deadline (all get the same
     * time, so the order they came in) */
    proxy_client_t *hs_head, *hs_tail;
    bool trim_due;                   /* a client with big buffers left */
    uint64_t trimmed_ms;             /* the last malloc_trim */
    inline_run_t runs[INLINE_MAX];   /* the statements it runs itself */
    inline_run_t *free_runs;         /* slots not running, by next_free */
    /* the runs waiting with a deadline, unordered: the loop looks at
     * these few, not at every slot, on each turn */
    inline_run_t *timed[INLINE_MAX];
    unsigned int ntimed;
    proxy_client_t *ready_head;      /* clients whose inline command ended, by next */
} proxy_io_t;

/* epoll data: a listener or the wake fd are tagged by these addresses. */
static char tag_wake;

/* ------------------------------------------------------------ listening */

/* One socket bound to "host:port", listening; with share, SO_REUSEPORT
 * (the I/O threads' sockets), else only bound (the probe of
 * proxy_listen_check).  -1 on failure (errno set). */
static int listen_on(const char *hostport, bool share)
{
    char host[256], *colon;
    struct addrinfo hints, *ai = NULL;
    int fd = -1, one = 1;

    snprintf(host, sizeof host, "%s", hostport);
    if ((colon = strrchr(host, ':')) == NULL)
        return -1;
    *colon = '\0';
    if (host[0] == '[' && colon[-1] == ']') { /* [::1]:3307 */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
                    (share && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
                    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
                    (share && listen(fd, 512) != 0))) {
        int e = errno;
        close(fd);
        errno = e;
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* The next address of a listen list at *p into item: false at its end. */
static bool next_address(const char **p, char *item, size_t size)
{
    size_t n;

    while (**p == ' ' || **p == ',')
        (*p)++;
    if ((n = strcspn(*p, ", ")) == 0)
        return false;
    snprintf(item, size, "%.*s", (int)n, *p);
    *p += n;
    return true;
}

/*
 * A socket bound without SO_REUSEPORT fails with EADDRINUSE when any
 * other socket listens on the address, also one with SO_REUSEPORT: so a
 * second dal-proxy on the same listen (whose sockets the kernel would
 * otherwise let share the port, splitting the clients) finds the first.
 * The probe is closed at once; the I/O threads bind theirs after it.
 */
int proxy_listen_check(const char *listen)
{
    char item[256];
    const char *p = listen;
    int fd;

    while (next_address(&p, item, sizeof item)) {
        if ((fd = listen_on(item, false)) < 0) {
            if (errno == EADDRINUSE)
                fprintf(stderr, "dal-proxy: cannot listen on %s: the address is already in use "
                        "(another dal-proxy or server listens there)\n", item);
            else
                fprintf(stderr, "dal-proxy: cannot listen on %s: %s\n", item, strerror(errno));
            return -1;
        }
        close(fd);
    }
    return 0;
}

/* Open every address of listen on io; -1 with a message if one fails. */
static int open_listeners(proxy_io_t *io, const char *listen)
{
    char item[256];
    const char *p = listen;

    while (next_address(&p, item, sizeof item)) {
        if (io->nlisteners == MAX_LISTEN)
            break;
        if ((io->listeners[io->nlisteners] = listen_on(item, true)) < 0) {
            fprintf(stderr, "dal-proxy: cannot listen on %s: %s\n", item, strerror(errno));
            return -1;
        }
        io->nlisteners++;
    }
    return 0;
}

/* ------------------------------------------------------------ clients */

/* Bytes the socket must take before c is answered: with TLS, the records
 * made (the plaintext behind them is encrypted as they go). */
static size_t to_send(const proxy_client_t *c)
{
    return c->tls != NULL ? c->wire.len : c->out.len;
}

/* What c has not sent yet, plaintext or records. */
static size_t unsent(const proxy_client_t *c)
{
    return c->out.len + c->wire.len;
}

/* c's login reply waits (c->hold_until): in io's held list, which the
 * loop releases when due, and watched for nothing meanwhile. */
static void hold(proxy_io_t *io, proxy_client_t *c)
{
    proxy_client_t *h;

    for (h = io->held; h != NULL && h != c; h = h->held_next)
        ;
    if (h == NULL) {
        c->held_next = io->held;
        io->held = c;
    }
    if (io->held_due == 0 || c->hold_until < io->held_due)
        io->held_due = c->hold_until;
}

static void unhold(proxy_io_t *io, proxy_client_t *c)
{
    proxy_client_t **p;

    for (p = &io->held; *p != NULL; p = &(*p)->held_next)
        if (*p == c) {
            *p = c->held_next;
            return;
        }
}

/* Whether c's next commands may be taken: not while many replies wait
 * (a client that sends and never reads would grow them without end). */
static bool may_read(const proxy_client_t *c)
{
    return unsent(c) <= OUT_LIMIT;
}

static void watch(proxy_io_t *io, proxy_client_t *c, int op)
{
    struct epoll_event ev;
    bool out = to_send(c) > 0;

    if (c->hold_until != 0)
        hold(io, c);
    ev.events = c->hold_until != 0 ? 0
                                   : (out ? EPOLLOUT : 0) | (may_read(c) || !out ? EPOLLIN : 0);
    ev.data.ptr = c;
    /* a client served inline mostly watches what it watched: no call */
    if (op == EPOLL_CTL_MOD && c->watch_known && c->watching == ev.events)
        return;
    epoll_ctl(io->ep, op, c->fd, &ev);
    c->watching = ev.events;
    c->watch_known = true;
}

void proxy_count(proxy_t *px, const char *figure, uint64_t value)
{
    dal_event_t ev;

    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    ev.type = DAL_EVENT_CLIENT;
    ev.kind = figure;
    ev.rows = value;
    dal_monitor_emit(px->dal, &ev);
}

/* c came in: it has connect_timeout to authenticate. */
static void handshake_add(proxy_io_t *io, proxy_client_t *c)
{
    c->deadline_ms = guard_now_ms() + io->px->connect_timeout_ms;
    c->in_handshake = true;
    c->hs_next = NULL;
    c->hs_prev = io->hs_tail;
    if (io->hs_tail != NULL)
        io->hs_tail->hs_next = c;
    else
        io->hs_head = c;
    io->hs_tail = c;
}

static void handshake_remove(proxy_io_t *io, proxy_client_t *c)
{
    if (!c->in_handshake)
        return;
    if (c->hs_prev != NULL)
        c->hs_prev->hs_next = c->hs_next;
    else
        io->hs_head = c->hs_next;
    if (c->hs_next != NULL)
        c->hs_next->hs_prev = c->hs_prev;
    else
        io->hs_tail = c->hs_prev;
    c->in_handshake = false;
    c->hs_prev = c->hs_next = NULL;
}

/* Bytes c's buffers hold, used or not. */
static size_t held(const proxy_client_t *c)
{
    return c->in.in_cap + c->in.joined_cap + c->out.cap + c->wire.cap + c->cmd_cap;
}

static void drop(proxy_io_t *io, proxy_client_t *c)
{
    epoll_ctl(io->ep, EPOLL_CTL_DEL, c->fd, NULL);
    unhold(io, c);
    handshake_remove(io, c);
    if (held(c) > PROXY_KEEP_BYTES)
        io->trim_due = true;
    proxy_count(io->px, "connected", atomic_fetch_sub(&io->px->nclients, 1) - 1);
    atomic_fetch_sub(&io->nclients, 1);
    client_free(c);
}

/* Send what b holds, as far as the socket takes it; 0, or -1 if the
 * socket is gone. */
static int send_buf(int fd, proto_buf_t *b)
{
    while (b->len > 0) {
        ssize_t n = send(fd, b->data, b->len, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        proto_buf_consume(b, (size_t)n);
    }
    return 0;
}

/* Encrypt c's replies a batch at a time, each sent before the next is
 * made; also sends what the TLS handshake has to say. */
static int flush_tls(proxy_client_t *c)
{
    for (;;) {
        size_t n = c->out.len < TLS_BATCH ? c->out.len : TLS_BATCH;
        ssize_t took;
        if (send_buf(c->fd, &c->wire) != 0)
            return -1;
        if (c->wire.len > 0)
            return 0;                 /* the socket is full: EPOLLOUT */
        if ((took = tls_conn_write(c->tls, c->out.data, n, &c->wire)) < 0) {
            send_buf(c->fd, &c->wire);/* the alert, if any */
            return -1;
        }
        proto_buf_consume(&c->out, (size_t)took);
        if (c->wire.len == 0)
            return 0;                 /* all said, or the handshake waits */
    }
}

/* Write what c has; 0, or -1 if the socket or the TLS session is gone. */
static int flush(proxy_client_t *c)
{
    if (c->hold_until != 0)
        return 0;             /* a login reply that waits (guard.c) */
    return c->tls != NULL ? flush_tls(c) : send_buf(c->fd, &c->out);
}

static void to_worker(proxy_client_t *c)
{
    proxy_t *px = c->px;

    c->busy = true;
    c->watch_known = false;
    atomic_fetch_add(&c->io->busy, 1);
    epoll_ctl(c->io->ep, EPOLL_CTL_DEL, c->fd, NULL); /* a worker owns it now */
    pthread_mutex_lock(&px->mu);
    c->next = NULL;
    if (px->queue_tail != NULL)
        px->queue_tail->next = c;
    else
        px->queue_head = c;
    px->queue_tail = c;
    atomic_fetch_add_explicit(&px->queued, 1, memory_order_relaxed);
    pthread_cond_signal(&px->cond);
    pthread_mutex_unlock(&px->mu);
}

/* ------------------------------------------------------------ inline statements */

/* The run the calling thread's coroutine is, while it runs. */
static _Thread_local inline_run_t *cur_run;
/* Above 0 while the thread's statement holds a lock another statement of
 * the thread could need: its waits block instead of switching. */
static _Thread_local unsigned int pinned;

void proxy_pin_thread(bool on)
{
    if (on)
        pinned++;
    else
        pinned--;
}

static int poll_one(int fd, short events, int timeout_ms)
{
    struct pollfd pfd = {fd, events, 0};
    int n;

    while ((n = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    if (n == 0)
        errno = ETIMEDOUT;
    return n;
}

static bool is_run(const proxy_io_t *io, const void *p)
{
    return p >= (const void *)io->runs && p < (const void *)(io->runs + INLINE_MAX);
}

/* What the socket of a client whose command runs inline is watched for:
 * its client hanging up (its end of input, or an error), once -- a
 * hang-up stays reported until the socket closes; nothing more after. */
static uint32_t busy_events(const proxy_client_t *c)
{
    return c->hung_up || c->eof_pending ? EPOLLONESHOT : EPOLLRDHUP | EPOLLONESHOT;
}

/*
 * Whether c's socket, which reported a reset or error (hup) or its end of
 * input, means its client has gone, as a server judges its own client's
 * connection while a statement waits (vio_is_connected): a reset or error
 * does; an end of input only with nothing left to read before it --
 * commands sent before it (a driver's COM_QUIT) are read first, after the
 * statement, and c stays connected till then (c->eof_pending).
 */
static bool hung_up(proxy_client_t *c, bool hup)
{
    int n = 0;

    if (hup)
        return true;
    if (proto_reader_pending(&c->in) > 0 || (c->tls != NULL && tls_conn_pending(c->tls)) ||
        (ioctl(c->fd, FIONREAD, &n) == 0 && n > 0)) {
        c->eof_pending = true;
        return false;
    }
    return true;
}

static void busy_arm(proxy_io_t *io, proxy_client_t *c)
{
    struct epoll_event ev;

    ev.events = busy_events(c);
    ev.data.ptr = c;
    epoll_ctl(io->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->watching = ev.events;
    c->watch_known = true;
}

/*
 * r waits for fd: it is armed in r's thread's epoll (once: EPOLLONESHOT,
 * so a socket r no longer waits for raises nothing more), and r's
 * coroutine switches back to the loop, which resumes it when fd is ready
 * or the deadline passes.  A backend connection stays in the epoll, its
 * events off, when the statement gives it back: the next wait re-arms it
 * with one call.  The client's own socket is the client's entry again
 * after (watching for a hang-up: advance sets what it watches).
 */
static int run_wait(inline_run_t *r, int fd, short events, int timeout_ms)
{
    proxy_io_t *io = r->io;
    struct epoll_event ev;

    ev.events = ((events & POLLIN) ? EPOLLIN : 0) | ((events & POLLOUT) ? EPOLLOUT : 0) |
                EPOLLONESHOT;
    ev.data.ptr = r;
    if (epoll_ctl(io->ep, EPOLL_CTL_MOD, fd, &ev) != 0 &&
        (errno != ENOENT || epoll_ctl(io->ep, EPOLL_CTL_ADD, fd, &ev) != 0))
        return poll_one(fd, events, timeout_ms);
    r->fd = fd;
    r->ready = false;
    r->deadline = timeout_ms >= 0 ? guard_now_ms() + (uint64_t)timeout_ms : 0;
    if (r->deadline != 0) {
        r->timed_at = io->ntimed;
        io->timed[io->ntimed++] = r;
    }
    coro_yield();
    if (r->deadline != 0) {
        inline_run_t *last = io->timed[--io->ntimed];
        io->timed[r->timed_at] = last;
        last->timed_at = r->timed_at;
    }
    r->fd = -1;
    if (fd == r->c->fd) {
        busy_arm(io, r->c);
    } else if (!r->ready) {
        epoll_ctl(io->ep, EPOLL_CTL_DEL, fd, NULL);
    }
    if (!r->ready) {
        errno = ETIMEDOUT;
        return 0;
    }
    return 1;
}

/* Wait for fd: switching to the loop in an inline statement, else poll(). */
static int wait_fd(int fd, short events, int timeout_ms)
{
    inline_run_t *r = cur_run;

    if (r != NULL && pinned == 0)
        return run_wait(r, fd, events, timeout_ms);
    return poll_one(fd, events, timeout_ms);
}

/* libdal's waits on backend sockets (dal_set_io_wait). */
static int backend_wait(void *arg, int fd, short events, int timeout_ms)
{
    (void)arg;
    return wait_fd(fd, events, timeout_ms);
}

static void run_main(void *arg)
{
    inline_run_t *r = arg;

    client_run(r->c);
}

/* Run r until it waits or ends; an ended run's client goes on io's ready
 * list (the loop takes it on: no recursion through advance). */
static void resume(proxy_io_t *io, inline_run_t *r)
{
    inline_run_t *was = cur_run;
    int more;

    cur_run = r;
    more = coro_resume(r->co);
    cur_run = was;
    if (more)
        return;
    r->c->next = io->ready_head;
    io->ready_head = r->c;
    r->c = NULL;
    r->next_free = io->free_runs;
    io->free_runs = r;
}

/* Run c's command on io itself, if a slot is free: false, the workers'.
 * op as advance's (EPOLL_CTL_ADD: c is not in the epoll). */
static bool start_inline(proxy_io_t *io, proxy_client_t *c, int op)
{
    inline_run_t *r = io->free_runs;
    struct epoll_event ev;

    if (!io->px->inline_io || r == NULL)
        return false;
    if (r->co == NULL && (r->co = coro_new(INLINE_STACK)) == NULL)
        return false;
    if (op == EPOLL_CTL_ADD) {
        ev.events = busy_events(c);
        ev.data.ptr = c;
        if (epoll_ctl(io->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
            return false;
        c->watching = ev.events;
        c->watch_known = true;
    }
    io->free_runs = r->next_free;
    r->c = c;
    r->fd = -1;
    c->busy = true;
    atomic_fetch_add(&io->busy, 1);
    coro_start(r->co, run_main, r);
    resume(io, r);
    return true;
}

/* An event of a client whose command runs inline.  Its end of input or
 * an error is the client hanging up: the servers running its statement
 * see it go (kill_hang_up).  Anything else (its next command, sent
 * already) waits until advance, the socket watched for a hang-up only
 * meanwhile (still the mask it had idle, the first event after a start
 * that kept it). */
static void busy_event(proxy_io_t *io, proxy_client_t *c, uint32_t events)
{
    if ((events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
        hung_up(c, (events & (EPOLLHUP | EPOLLERR)) != 0))
        kill_hang_up(c);
    /* armed for a last reset already: nothing new */
    if (!((c->hung_up || c->eof_pending) && c->watch_known && c->watching == EPOLLONESHOT))
        busy_arm(io, c);
}

/* The milliseconds from now until the first waiting run's deadline (at
 * most max). */
static int runs_due(proxy_io_t *io, uint64_t now, int max)
{
    uint64_t first;
    unsigned int i;

    if (io->ntimed == 0)
        return max;
    first = io->timed[0]->deadline;
    for (i = 1; i < io->ntimed; i++)
        if (io->timed[i]->deadline < first)
            first = io->timed[i]->deadline;
    if (first <= now)
        return 0;
    return first - now < (uint64_t)max || max < 0 ? (int)(first - now) : max;
}

/* Resume the runs whose wait has timed out by now (each leaves io->timed
 * as it resumes: the expired are taken first). */
static void runs_expire(proxy_io_t *io, uint64_t now)
{
    inline_run_t *due[INLINE_MAX];
    unsigned int i, n = 0;

    if (io->ntimed == 0)
        return;
    for (i = 0; i < io->ntimed; i++)
        if (io->timed[i]->deadline <= now)
            due[n++] = io->timed[i];
    for (i = 0; i < n; i++)
        if (due[i]->c != NULL && due[i]->fd >= 0)
            resume(io, due[i]);
}

static void advance(proxy_io_t *io, proxy_client_t *c, int op);

/* The clients whose inline command ended: write, read on. */
static void runs_finished(proxy_io_t *io)
{
    proxy_client_t *c;

    while ((c = io->ready_head) != NULL) {
        io->ready_head = c->next;
        c->busy = false;
        atomic_fetch_sub(&io->busy, 1);
        advance(io, c, EPOLL_CTL_MOD);
    }
}

static void runs_init(proxy_io_t *io)
{
    size_t i;

    io->free_runs = NULL;
    for (i = INLINE_MAX; i-- > 0;) {
        io->runs[i].io = io;
        io->runs[i].fd = -1;
        io->runs[i].next_free = io->free_runs;
        io->free_runs = &io->runs[i];
    }
}

static void runs_free(proxy_io_t *io)
{
    size_t i;

    for (i = 0; i < INLINE_MAX; i++) {
        coro_free(io->runs[i].co);
        io->runs[i].co = NULL;
    }
}

/* An idle client's big buffers go back: the packet reader's after a big
 * packet, the replies' after a big reply, the last command's copy. */
static void shrink(proxy_io_t *io, proxy_client_t *c)
{
    size_t before = held(c);

    proto_reader_shrink(&c->in, PROXY_KEEP_BYTES);
    if (unsent(c) == 0) {
        proto_buf_shrink(&c->out, PROXY_KEEP_BYTES);
        proto_buf_shrink(&c->wire, PROXY_KEEP_BYTES);
    }
    if (c->cmd_cap > PROXY_KEEP_BYTES) {
        free(c->cmd);
        c->cmd = NULL;
        c->cmd_len = c->cmd_cap = 0;
    }
    if (before - held(c) > PROXY_KEEP_BYTES)
        io->trim_due = true;
}

/* After reading or a worker: run what is next, write, close if done.  op
 * is EPOLL_CTL_ADD for a client back from a worker (not watched then),
 * else EPOLL_CTL_MOD.  While many replies wait, the commands that came
 * wait too. */
static void advance(proxy_io_t *io, proxy_client_t *c, int op)
{
    int rc = 0;

    /* written down to the limit now, the commands already received are
     * taken at once: the client may be waiting for their replies */
    if (!may_read(c) && flush(c) != 0) {
        drop(io, c);
        return;
    }
    if (may_read(c))
        rc = client_input(c);
    if (c->state == CLIENT_COMMAND)
        handshake_remove(io, c);      /* in: connect_timeout no longer applies */
    else if (c->logged_in && c->state != CLIENT_CLOSING && !c->in_handshake)
        handshake_add(io, c);         /* COM_CHANGE_USER: connect_timeout to authenticate */
    if (rc == 1 && flush(c) == 0) {
        if (!start_inline(io, c, op))
            to_worker(c);
        return;
    }
    if (rc != 0 || flush(c) != 0 || (c->state == CLIENT_CLOSING && unsent(c) == 0)) {
        drop(io, c); /* removing a socket epoll does not watch is harmless */
        return;
    }
    shrink(io, c);
    watch(io, c, op);
}

/* Decrypt what c's TLS session holds into c's reader: 0, or -1 if the
 * session is over. */
static int decrypt(proxy_client_t *c)
{
    for (;;) {
        size_t avail;
        uint8_t *space = proto_reader_space(&c->in, READ_CHUNK, &avail);
        ssize_t n;
        if (space == NULL)
            return -1;
        if ((n = tls_conn_read(c->tls, space, avail)) <= 0)
            return (int)n;
        proto_reader_commit(&c->in, (size_t)n);
    }
}

/* What one receive takes at most: a little over the largest packet c may
 * send now (before authentication, a small one), and not over
 * READ_BUDGET.  The socket stays readable for the rest. */
static size_t budget(const proxy_client_t *c)
{
    size_t b = c->in.max_packet + READ_CHUNK;

    return b < READ_BUDGET ? b : READ_BUDGET;
}

/* The TLS form of receive: a chunk of records at a time, each decrypted
 * before the next is read, so the session buffers little.  The chunk is
 * the thread's, not on the stack: a LOAD DATA LOCAL relay reads from inside
 * the client library's callback, which may run on its small stack of a
 * non-blocking call. */
static int receive_tls(proxy_client_t *c)
{
    static _Thread_local uint8_t chunk[READ_CHUNK];
    size_t got = 0;

    for (;;) {
        ssize_t n = recv(c->fd, chunk, sizeof chunk, 0);
        if (n > 0) {
            if (tls_conn_feed(c->tls, chunk, (size_t)n) != 0 || decrypt(c) != 0)
                return -1;
            if ((size_t)n < sizeof chunk || (got += (size_t)n) >= budget(c))
                return 0;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return decrypt(c);        /* what an earlier read left inside */
        return -1;
    }
}

/* Read what the socket has into c's reader: 0, or -1 if the client went
 * away (or out of memory, or its TLS session broke). */
static int receive(proxy_client_t *c)
{
    size_t got = 0, most = budget(c);

    if (c->tls != NULL)
        return receive_tls(c);
    for (;;) {
        size_t avail;
        uint8_t *space = proto_reader_space(&c->in, READ_CHUNK, &avail);
        ssize_t n;
        if (space == NULL)
            return -1;
        if (avail > most - got)
            avail = most - got;
        n = recv(c->fd, space, avail, 0);
        if (n > 0) {
            proto_reader_commit(&c->in, (size_t)n);
            if ((size_t)n < avail || (got += (size_t)n) >= most)
                return 0;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
}

static void readable(proxy_io_t *io, proxy_client_t *c)
{
    if (receive(c) != 0)
        drop(io, c);
    else
        advance(io, c, EPOLL_CTL_MOD);
}

/* The client's port, for SHOW PROCESSLIST's Host. */
static uint16_t peer_port(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    if (sa->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    return 0;
}

/* Start serving a connection on io: its handshake sent, its socket in
 * io's epoll.  Counted already in px->nclients and io->nclients. */
static void adopt(proxy_io_t *io, int fd, const char *peer, uint16_t port)
{
    proxy_t *px = io->px;
    proxy_client_t *c = client_new(px, io, fd, peer);

    if (c != NULL)
        c->peer_port = port;
    if (c == NULL || flush(c) != 0) {
        if (c != NULL)
            client_free(c);
        atomic_fetch_sub(&px->nclients, 1);
        atomic_fetch_sub(&io->nclients, 1);
        return;
    }
    handshake_add(io, c);
    watch(io, c, EPOLL_CTL_ADD);
    proxy_count(px, "accepted", atomic_fetch_add(&px->accepted, 1) + 1);
    proxy_count(px, "connected", atomic_load(&px->nclients));
}

/*
 * The I/O thread with the fewest clients (self on a tie), counted for the
 * new one.  SO_REUSEPORT spreads connections by a hash of their addresses,
 * which leaves one thread with three of four clients as often as not:
 * with the few long-lived connections of a pool, that thread's core is
 * the limit while the other idles.
 */
static proxy_io_t *io_pick(proxy_io_t *self)
{
    proxy_t *px = self->px;
    proxy_io_t *best = self;
    unsigned int least = atomic_load(&self->nclients);
    size_t i;

    for (i = 0; i < px->nios; i++) {
        unsigned int n = atomic_load(&px->ios[i].nclients);
        if (n < least) {
            least = n;
            best = &px->ios[i];
        }
    }
    atomic_fetch_add(&best->nclients, 1);
    return best;
}

/* Wake io's thread for what was put on its lists (woken). */
static void wake(proxy_io_t *io)
{
    uint64_t one = 1;

    if (write(io->wake, &one, sizeof one) < 0)
        (void)0; /* the counter is full: a wake is pending anyway */
}

/* Give fd to io's thread (it adopts it when woken); closed if it cannot. */
static void hand_off(proxy_io_t *io, int fd, const char *peer, uint16_t port)
{
    handoff_t *h = malloc(sizeof *h);

    if (h == NULL) {
        close(fd);
        atomic_fetch_sub(&io->px->nclients, 1);
        atomic_fetch_sub(&io->nclients, 1);
        return;
    }
    h->fd = fd;
    h->port = port;
    snprintf(h->peer, sizeof h->peer, "%s", peer);
    pthread_mutex_lock(&io->mu);
    h->next = io->handoffs;
    io->handoffs = h;
    pthread_mutex_unlock(&io->mu);
    wake(io);
}

/* Adopt the connections other threads handed to io. */
static void adopt_handoffs(proxy_io_t *io)
{
    handoff_t *h, *next;

    pthread_mutex_lock(&io->mu);
    h = io->handoffs;
    io->handoffs = NULL;
    pthread_mutex_unlock(&io->mu);
    for (; h != NULL; h = next) {
        next = h->next;
        if (atomic_load(&io->px->stopping)) {
            close(h->fd);
            atomic_fetch_sub(&io->px->nclients, 1);
            atomic_fetch_sub(&io->nclients, 1);
        } else {
            adopt(io, h->fd, h->peer, h->port);
        }
        free(h);
    }
}

static void accept_all(proxy_io_t *io, int lfd)
{
    proxy_t *px = io->px;
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    char peer[64] = "?";
    int fd, one = 1;

    while ((fd = accept4(lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        proxy_io_t *to;
        if (sa.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, peer, sizeof peer);
        else if (sa.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, peer, sizeof peer);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (atomic_fetch_add(&px->nclients, 1) >= px->max_connections) {
            /* ER_CON_COUNT_ERROR as the first packet, instead of the handshake */
            proto_buf_t b = PROTO_BUF_INIT;
            uint8_t seq = 0;
            proto_build_err(&b, &seq, 1040, "08004", "Too many connections");
            if (send(fd, b.data, b.len, MSG_NOSIGNAL) < 0)
                (void)0; /* the client learns it from the close */
            proto_buf_free(&b);
            close(fd);
            atomic_fetch_sub(&px->nclients, 1);
            proxy_count(px, "refused", atomic_fetch_add(&px->refused, 1) + 1);
            len = sizeof sa;
            continue;
        }
        to = io_pick(io);
        if (to == io)
            adopt(io, fd, peer, peer_port(&sa));
        else
            hand_off(to, fd, peer, peer_port(&sa));
        len = sizeof sa;
    }
}

/* ------------------------------------------------------------ idle clients */

/* The idle timeouts of the default datasource's server (its global
 * wait_timeout and interactive_timeout), read once at start: clients get
 * the same as they would connected to it.  28800 (the servers' default)
 * when it cannot be asked. */
static void idle_defaults(proxy_t *px)
{
    dal_result_t *r = NULL;
    dal_error_t err;
    const char *v;

    px->wait_timeout_s = px->interactive_timeout_s = 28800;
    if (dal_query(px->dal, NULL, "SELECT @@global.wait_timeout, @@global.interactive_timeout",
                  NULL, 0, &r, &err) != 0) {
        fprintf(stderr, "dal-proxy: wait_timeout not read from the servers (%s): "
                        "idle clients are closed after 28800 s\n", err.message);
        return;
    }
    if (dal_result_next(r, &err) == 1) {
        if ((v = dal_result_text(r, 0, NULL)) != NULL)
            px->wait_timeout_s = (uint32_t)strtoul(v, NULL, 10);
        if ((v = dal_result_text(r, 1, NULL)) != NULL)
            px->interactive_timeout_s = (uint32_t)strtoul(v, NULL, 10);
    }
    dal_result_free(r);
}

uint32_t proxy_idle_default(const proxy_client_t *c)
{
    return (c->caps & PROTO_CLIENT_INTERACTIVE) ? c->px->interactive_timeout_s
                                                : c->px->wait_timeout_s;
}

void proxy_idle_trx_set(proxy_client_t *c, const char *name, const char *value)
{
    static const char *const names[] = {"idle_transaction_timeout",
                                        "idle_readonly_transaction_timeout",
                                        "idle_write_transaction_timeout"};
    unsigned long v;
    size_t i;

    for (i = 0; i < 3 && strcasecmp(name, names[i]) != 0; i++)
        ;
    if (i == 3)
        return;
    if (*value == '\'')
        value++;
    v = strtoul(value, NULL, 10);  /* DEFAULT: 0, the servers' default */
    c->idle_trx_s[i] = v > 31536000 ? 31536000 : (uint32_t)v;
}

/* The first word of c's statement makes its transaction a writing one. */
static bool command_writes(const proxy_client_t *c)
{
    static const char *const words[] = {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD"};
    const char *p = (const char *)c->cmd + 1, *end = (const char *)c->cmd + c->cmd_len;
    size_t i, n;

    if (c->cmd_len < 2 || c->cmd[0] != PROTO_COM_QUERY)
        return false;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '('))
        p++;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        n = strlen(words[i]);
        if ((size_t)(end - p) >= n && strncasecmp(p, words[i], n) == 0)
            return true;
    }
    return false;
}

void proxy_idle_note(proxy_client_t *c)
{
    c->in_trx = c->session != NULL &&
                (dal_session_status(c->session) & DAL_SERVER_STATUS_IN_TRANS) != 0;
    c->trx_wrote = c->in_trx && (c->trx_wrote || command_writes(c));
}

/* c's idle timeout in seconds (0: none), as a server's: in a transaction
 * the idle_*transaction_timeout that applies (a read-only or writing
 * one's first, then any transaction's), else wait_timeout. */
static uint32_t idle_timeout(const proxy_client_t *c)
{
    uint32_t kind = c->trx_wrote ? c->idle_trx_s[PROXY_IDLE_TRX_WRITE]
                                 : c->idle_trx_s[PROXY_IDLE_TRX_READONLY];

    if (!c->in_trx)
        return c->wait_timeout_s;
    if (kind > 0)
        return kind;
    return c->idle_trx_s[PROXY_IDLE_TRX_ANY] > 0 ? c->idle_trx_s[PROXY_IDLE_TRX_ANY]
                                                 : c->wait_timeout_s;
}

/* Whether c, an authenticated client of io waiting for its next command,
 * has been idle for longer than its timeout (idle_timeout). */
static bool idle_too_long(const proxy_io_t *io, proxy_client_t *c, uint64_t now)
{
    uint64_t since;
    uint32_t timeout = idle_timeout(c);

    if (c->io != io || c->state != CLIENT_COMMAND || c->busy || timeout == 0 ||
        c->hold_until != 0)
        return false;
    pthread_mutex_lock(&c->info_mu);
    since = c->since_ms;
    pthread_mutex_unlock(&c->info_mu);
    return now >= since + (uint64_t)timeout * 1000;
}

/*
 * Close io's clients idle past their wait_timeout, as a server does: with
 * no message, the socket reset (SO_LINGER 0), so the client's next
 * statement fails with 2006 "server has gone away" as it would there.  The
 * open transaction is rolled back by the session's close.  At most once a
 * second; a walk over the clients, no thread or timer per client.
 */
static void close_idle(proxy_io_t *io, uint64_t now)
{
    proxy_client_t *due[64], *c;
    struct linger lg = {1, 0};
    size_t n, i;

    if (now - io->idle_checked_ms < 1000)
        return;
    io->idle_checked_ms = now;
    do {
        n = 0;
        pthread_mutex_lock(&io->px->clients_mu);
        for (c = io->px->clients; c != NULL && n < 64; c = c->all_next)
            if (idle_too_long(io, c, now))
                due[n++] = c;
        pthread_mutex_unlock(&io->px->clients_mu);
        for (i = 0; i < n; i++) {
            setsockopt(due[i]->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            drop(io, due[i]);
        }
    } while (n == 64);
}

/* Connections handed to io, and clients a worker finished: write their
 * replies, read on. */
static void woken(proxy_io_t *io)
{
    uint64_t n;
    proxy_client_t *c, *next;

    if (read(io->wake, &n, sizeof n) < 0)
        (void)0; /* a spurious wake: the list below is what counts */
    adopt_handoffs(io);
    pthread_mutex_lock(&io->mu);
    c = io->done_head;
    io->done_head = NULL;
    pthread_mutex_unlock(&io->mu);
    for (; c != NULL; c = next) {
        next = c->next;
        c->busy = false;
        atomic_fetch_sub(&io->busy, 1);
        advance(io, c, EPOLL_CTL_ADD);
    }
}

/*
 * The clients past connect_timeout without authenticating are closed, with
 * MariaDB's error for a handshake that failed (1043) when they speak
 * plaintext.  The list is in deadline order: only its head is looked at
 * until one is not due.  Also the malloc_trim that clients leaving with
 * big buffers asked for, at most once a second.
 */
static void on_timer(proxy_io_t *io, uint64_t now)
{
    while (io->hs_head != NULL && io->hs_head->deadline_ms <= now) {
        proxy_client_t *c = io->hs_head;
        if (c->tls == NULL && c->state != CLIENT_CLOSING) {
            reply_err(c, 1043, "08S01", "Bad handshake"); /* ER_HANDSHAKE_ERROR */
            flush(c);
        }
        drop(io, c);
    }
    close_idle(io, now);
    if (io->trim_due && now - io->trimmed_ms >= TRIM_EVERY_MS) {
        io->trim_due = false;
        io->trimmed_ms = now;
        malloc_trim(0);
    }
}

static bool is_listener(const proxy_io_t *io, const void *ptr, int *fd)
{
    size_t i;

    for (i = 0; i < io->nlisteners; i++)
        if (ptr == &io->listeners[i]) {
            *fd = io->listeners[i];
            return true;
        }
    return false;
}

/* Release the held clients that are due by now; the milliseconds until
 * the next one is (at most max). */
static int release_held(proxy_io_t *io, uint64_t now, int max)
{
    proxy_client_t *c, *next, *due = NULL, **p;
    int wait = max;

    if (io->held == NULL)
        return max;
    if (now < io->held_due)  /* none is due: no walk on every event */
        return io->held_due - now < (uint64_t)max ? (int)(io->held_due - now) : max;
    io->held_due = 0;
    for (p = &io->held; (c = *p) != NULL;) {
        if (c->hold_until <= now) {
            *p = c->held_next;
            c->held_next = due;
            due = c;
            continue;
        }
        if (io->held_due == 0 || c->hold_until < io->held_due)
            io->held_due = c->hold_until;
        if (c->hold_until - now < (uint64_t)wait)
            wait = (int)(c->hold_until - now);
        p = &c->held_next;
    }
    for (c = due; c != NULL; c = next) {
        next = c->held_next;
        c->hold_until = 0;
        advance(io, c, EPOLL_CTL_MOD);
    }
    return wait;
}

static void *io_main(void *arg)
{
    proxy_io_t *io = arg;
    struct epoll_event evs[64];
    int n, i, lfd;
    uint64_t now;

    /* stopping: the running commands finish, their replies are written,
     * then the thread ends (and the process closes the idle clients) */
    runs_init(io);
    if (io->px->inline_io)
        dal_set_io_wait(backend_wait, io);
    while (!atomic_load(&io->px->stopping) || atomic_load(&io->busy) > 0) {
        /* one reading of the clock before the wait, one after */
        now = guard_now_ms();
        n = epoll_wait(io->ep, evs, 64, runs_due(io, now, release_held(io, now, 200)));
        for (i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            proxy_client_t *c = p;
            if (is_run(io, p)) {
                inline_run_t *r = p;
                if (r->c != NULL && r->fd >= 0) {
                    r->ready = true;
                    resume(io, r);
                }
            } else if (p == &tag_wake) {
                woken(io);
            } else if (is_listener(io, p, &lfd)) {
                if (!atomic_load(&io->px->stopping))
                    accept_all(io, lfd);
            } else if (c->busy) {
                busy_event(io, c, evs[i].events); /* its command runs inline */
            } else if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
                drop(io, c);
            } else if (evs[i].events & EPOLLIN) {
                readable(io, c);
            } else if (evs[i].events & EPOLLOUT) {
                advance(io, c, EPOLL_CTL_MOD);
            }
        }
        now = guard_now_ms();
        runs_expire(io, now);
        runs_finished(io);
        on_timer(io, now);
        if (atomic_load(&io->px->stopping)) {
            size_t k;
            for (k = 0; k < io->nlisteners; k++)
                if (io->listeners[k] >= 0) {
                    epoll_ctl(io->ep, EPOLL_CTL_DEL, io->listeners[k], NULL);
                    close(io->listeners[k]);
                    io->listeners[k] = -1;
                }
        }
    }
    dal_set_io_wait(NULL, NULL);
    runs_free(io);
    return NULL;
}

/* ------------------------------------------------------------ workers */

void proxy_done(proxy_client_t *c)
{
    proxy_io_t *io = c->io;

    pthread_mutex_lock(&io->mu);
    c->next = io->done_head;
    io->done_head = c;
    pthread_mutex_unlock(&io->mu);
    wake(io);
}

/* Write c's output until at most target bytes are left, waiting for the
 * socket at most timeout_ms at a time: 0, or -1 if the client is gone or
 * read nothing for that long. */
static int write_until(proxy_client_t *c, size_t target, int timeout_ms)
{
    while (flush(c) == 0) {
        if (unsent(c) <= target)
            return 0;
        if (wait_fd(c->fd, POLLOUT, timeout_ms) <= 0)
            break;
    }
    return -1;
}

int proxy_flush_wait(proxy_client_t *c, int timeout_ms)
{
    return write_until(c, 0, timeout_ms);
}

int proxy_packet_wait(proxy_client_t *c, proto_packet_t *pkt, int timeout_ms)
{
    int rc;

    for (;;) {
        if ((rc = proto_reader_next(&c->in, pkt)) != 0)
            return rc == 1 ? 1 : -1;
        /* plaintext a TLS session holds already: poll cannot see it */
        if (!(c->tls != NULL && tls_conn_pending(c->tls)) && wait_fd(c->fd, POLLIN, timeout_ms) != 1)
            return -1;
        if (receive(c) != 0)
            return -1;
    }
}

int proxy_drain(proxy_client_t *c)
{
    if (unsent(c) < DRAIN_AT || write_until(c, DRAIN_AT / 2, WRITE_TIMEOUT_MS) == 0)
        return 0;
    /* gone, or nothing read for the whole timeout: its I/O thread sees
     * sends fail and closes it */
    shutdown(c->fd, SHUT_RDWR);
    proto_buf_free(&c->out);
    proto_buf_free(&c->wire);
    c->state = CLIENT_CLOSING;
    return -1;
}

/* How long a worker that finished a command waits for the same client's
 * next one before handing it back, when no other client is queued: a
 * client that sends its next statement at once (a service's loop, a
 * benchmark) is served without waking its I/O thread and then a worker. */
#define LINGER_MS 1

/*
 * After a command on a worker: 1 if c's next command is ready to run
 * here, 0 if c is back in its I/O thread's epoll (it belongs to that thread
 * again: nothing touches it after), -1 if the I/O thread must take it
 * (proxy_done): a reply not written at once, a command the I/O thread
 * answers, a client gone or closing, the proxy stopping.
 */
static int finish_here(proxy_client_t *c)
{
    proxy_t *px = c->px;
    proxy_io_t *io = c->io;
    struct pollfd pfd = {c->fd, POLLIN, 0};
    bool queued, decrypted;

    if (atomic_load(&px->stopping) || c->state != CLIENT_COMMAND ||
        proto_reader_pending(&c->in) > 0 || flush(c) != 0 || unsent(c) > 0)
        return -1;
    /* a hint, read without mu: the lock would be a line every worker
     * writes, once a statement */
    queued = atomic_load_explicit(&px->queued, memory_order_relaxed) > 0;
    /* plaintext a TLS session holds already is input that neither poll
     * nor the I/O thread's epoll can see: take it now */
    decrypted = c->tls != NULL && tls_conn_pending(c->tls);
    if (decrypted || (!queued && poll(&pfd, 1, LINGER_MS) == 1)) {
        if (receive(c) != 0) {
            /* gone, or a broken TLS session, which epoll would not show:
             * the I/O thread closes it */
            c->state = CLIENT_CLOSING;
            return -1;
        }
        switch (client_input(c)) {
        case 1:
            return 1;                 /* replies before it wait in c->out */
        case 0:
            return -1;
        default:
            c->state = CLIENT_CLOSING;
            return -1;
        }
    }
    c->busy = false;
    atomic_fetch_sub(&io->busy, 1);
    watch(io, c, EPOLL_CTL_ADD);
    return 0;
}

/* The client whose command the calling worker runs, or NULL. */
static _Thread_local proxy_client_t *serving;

/*
 * libdal's waits on backend sockets on a worker: the client's socket is
 * watched for its hang-up too (POLLRDHUP, not its next command), which
 * the servers running its statement then see (kill_hang_up, when hung_up
 * judges it gone); the wait goes on for the backend's answer.
 */
static int worker_wait(void *arg, int fd, short events, int timeout_ms)
{
    proxy_client_t *c = serving;
    struct pollfd p[2] = {{fd, events, 0}, {-1, POLLRDHUP, 0}};
    uint64_t end = timeout_ms >= 0 ? guard_now_ms() + (uint64_t)timeout_ms : 0, now;
    int n;

    (void)arg;
    if (c == NULL || c->hung_up || c->eof_pending || fd == c->fd)
        return poll_one(fd, events, timeout_ms);
    p[1].fd = c->fd;
    while ((n = poll(p, 2, timeout_ms)) < 0 && errno == EINTR)
        ;
    if (n <= 0 || p[0].revents != 0) {
        if (n == 0)
            errno = ETIMEDOUT;
        return n < 0 ? n : n > 0;
    }
    if (hung_up(c, (p[1].revents & (POLLHUP | POLLERR)) != 0))
        kill_hang_up(c);
    if (timeout_ms >= 0)
        timeout_ms = (now = guard_now_ms()) >= end ? 0 : (int)(end - now);
    return poll_one(fd, events, timeout_ms);
}

static void *worker_main(void *arg)
{
    proxy_t *px = arg;
    proxy_client_t *c;
    int rc;

    dal_set_io_wait(worker_wait, NULL);
    for (;;) {
        pthread_mutex_lock(&px->mu);
        while (px->queue_head == NULL && !px->workers_quit)
            pthread_cond_wait(&px->cond, &px->mu);
        c = px->queue_head;
        if (c != NULL && (px->queue_head = c->next) == NULL)
            px->queue_tail = NULL;
        if (c != NULL)
            atomic_fetch_sub_explicit(&px->queued, 1, memory_order_relaxed);
        pthread_mutex_unlock(&px->mu);
        if (c == NULL) {
            dal_set_io_wait(NULL, NULL);
            return NULL;
        }
        serving = c;
        do
            client_run(c);
        while ((rc = finish_here(c)) == 1);
        serving = NULL;
        if (rc < 0)
            proxy_done(c);
    }
}

/* ------------------------------------------------------------ serving */

static int io_init(proxy_io_t *io, proxy_t *px, const char *listen)
{
    struct epoll_event ev;
    size_t i;

    io->px = px;
    pthread_mutex_init(&io->mu, NULL);
    io->ep = epoll_create1(EPOLL_CLOEXEC);
    io->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (io->ep < 0 || io->wake < 0 || open_listeners(io, listen) != 0)
        return -1;
    ev.events = EPOLLIN;
    ev.data.ptr = &tag_wake;
    epoll_ctl(io->ep, EPOLL_CTL_ADD, io->wake, &ev);
    for (i = 0; i < io->nlisteners; i++) {
        ev.data.ptr = &io->listeners[i];
        epoll_ctl(io->ep, EPOLL_CTL_ADD, io->listeners[i], &ev);
    }
    return 0;
}

int proxy_serve(proxy_t *px, const char *listen, unsigned threads)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t i;
    int rc = 0;

    if (proxy_listen_check(listen) != 0)
        return -1;
    idle_defaults(px);
    px->nios = threads > 0 ? threads : (size_t)(cores > 0 ? cores : 1);
    px->nworkers = 4 * px->nios;
    px->ios = calloc(px->nios, sizeof *px->ios);
    px->workers = calloc(px->nworkers, sizeof *px->workers);
    pthread_mutex_init(&px->mu, NULL);
    pthread_mutex_init(&px->clients_mu, NULL);
    pthread_cond_init(&px->cond, NULL);
    if (px->ios == NULL || px->workers == NULL)
        rc = -1;
    for (i = 0; i < px->nios && rc == 0; i++)
        rc = io_init(&px->ios[i], px, listen);
    if (rc != 0) {
        /* the process ends: what matters is not to leave it to the leak
         * checker; the sockets go with the process */
        free(px->ios);
        free(px->workers);
        return -1;
    }
    for (i = 0; i < px->nworkers; i++)
        pthread_create(&px->workers[i], NULL, worker_main, px);
    for (i = 0; i < px->nios; i++)
        pthread_create(&px->ios[i].thread, NULL, io_main, &px->ios[i]);
    for (i = 0; i < px->nios; i++)
        pthread_join(px->ios[i].thread, NULL);
    pthread_mutex_lock(&px->mu);
    px->workers_quit = true;
    pthread_cond_broadcast(&px->cond);
    pthread_mutex_unlock(&px->mu);
    for (i = 0; i < px->nworkers; i++)
        pthread_join(px->workers[i], NULL);
    for (i = 0; i < px->nios; i++) {
        atomic_store(&px->stopping, true);
        adopt_handoffs(&px->ios[i]); /* (closes those not adopted yet) */
        close(px->ios[i].ep);
        close(px->ios[i].wake);
    }
    free(px->ios);
    free(px->workers);
    return 0;
}

void proxy_stop(proxy_t *px)
{
    atomic_store(&px->stopping, true);
}
