/*
 * clock.c -- time and cheap randomness.  See clock.h.
 */
#include <time.h>

#include "clock.h"

uint64_t clock_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_random(void)
{
    static _Thread_local uint64_t x DAL_TLS_SMALL;

    if (x == 0)
        x = clock_now_ns() ^ ((uint64_t)(uintptr_t)&x << 17) ^ 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545f4914f6cdd1dull;
}

void clock_deadline_after_ms(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}
