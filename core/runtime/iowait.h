/*
 * iowait.h -- every wait of dal on a backend socket, and the calling
 * thread's hook that may take it over (dal_set_io_wait).
 *
 * Without a hook a wait is a poll() of the socket, as the client library
 * would make.  With one, the hook waits instead: an event loop that runs
 * statements as coroutines switches to other work there and comes back
 * when the socket is ready.  Other statements may then run on the same
 * thread in between, so the thread's per-statement state (the session's
 * variables and the statement named in leak reports (pool.c), its cancel
 * list, LOCAL INFILE reader, warnings wish, lookup reader: each module
 * registers its own with iowait_keep) is put aside and cleared around the
 * hook's call, and put back after it.
 *
 * A wait made while the thread holds a lock that another statement on the
 * same thread could need (cancel_run's list lock) must not switch:
 * iowait_block brackets such a stretch, and the waits inside it poll.
 */
#ifndef DAL_CORE_IOWAIT_H
#define DAL_CORE_IOWAIT_H

#include <mysql.h>
#include <poll.h>
#include <string.h>

#include "dal/dal.h"

/* Wait until fd is ready for events (POLLIN/POLLOUT) or timeout_ms pass
 * (-1: no limit): >0 ready, 0 timed out (errno ETIMEDOUT), <0 error. */
int iowait_fd(int fd, short events, int timeout_ms);
/* poll() over n sockets, through the hook when there is one: it waits for
 * the first of them that waits for an event, then all are polled without
 * waiting (a scatter needs every answer: waiting for any one at a time
 * ends when the slowest has answered). */
int iowait_poll(struct pollfd *pfd, nfds_t n, int timeout_ms);
/* Install the client library's waits on m as iowait_fd's. */
void iowait_install(MYSQL *m);
/* The waits of the calling thread poll until the matching iowait_unblock
 * (nestable): it holds a lock another statement of the thread may take. */
void iowait_block(void);
void iowait_unblock(void);

/* A piece of a higher layer's per-thread statement state: put_aside
 * copies it to `to` (IOWAIT_KEPT_BYTES) and leaves the thread's as a
 * thread running nothing has it; put_back restores it. */
typedef struct iowait_state {
    void (*put_aside)(void *to);
    void (*put_back)(const void *from);
} iowait_state_t;
/* Keep st (static, never freed) around the hook's waits; at most
 * IOWAIT_MAX_KEPT, registered before any thread waits (at load). */
#define IOWAIT_MAX_KEPT 8
#define IOWAIT_KEPT_BYTES 32
void iowait_keep(const iowait_state_t *st);

/* Define and register, at load, the iowait_state_t of one _Thread_local
 * variable of the including file: put aside, the thread's is zeroed. */
#define IOWAIT_KEEP_VAR(var)                                                     \
    static void var##_aside(void *to)                                            \
    {                                                                            \
        memcpy(to, &(var), sizeof(var));                                         \
        memset(&(var), 0, sizeof(var));                                          \
    }                                                                            \
    static void var##_back(const void *from)                                     \
    {                                                                            \
        memcpy(&(var), from, sizeof(var));                                       \
    }                                                                            \
    static const iowait_state_t var##_state = {var##_aside, var##_back};         \
    __attribute__((constructor)) static void var##_keep(void)                    \
    {                                                                            \
        _Static_assert(sizeof(var) <= IOWAIT_KEPT_BYTES, "kept state too large"); \
        iowait_keep(&var##_state);                                               \
    }

#endif
