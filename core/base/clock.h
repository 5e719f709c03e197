/*
 * clock.h -- time and cheap randomness for the whole core.
 *
 * The lowest layer: every module may use it, it uses nothing of dal's.
 */
#ifndef DAL_CORE_CLOCK_H
#define DAL_CORE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_now_ns(void);

/* For thread-local variables of a few bytes read on every statement:
 * initial-exec, so a read is one %fs-relative load instead of a call to
 * __tls_get_addr.  The static TLS room glibc keeps for libraries loaded
 * later by dlopen holds a few bytes easily; large thread-local state stays
 * general-dynamic. */
#define DAL_TLS_SMALL __attribute__((tls_model("initial-exec")))

/* 64 random bits from a per-thread xorshift64* generator: no lock and no
 * syscall, for choices that must be cheap (trace ids, load balancing), not
 * for secrets. */
uint64_t clock_random(void);

struct timespec;
/* *ts := CLOCK_MONOTONIC now + ms, for pthread_cond_timedwait on a
 * condition variable made with that clock. */
void clock_deadline_after_ms(struct timespec *ts, long ms);

#endif /* DAL_CORE_CLOCK_H */
