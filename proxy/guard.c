/*
 * guard.c -- failed logins per client address, as MySQL's
 * connection_control plugin counts them: after `after` failures in a row
 * from one address, the reply to each further login from it waits a
 * second more per failure, up to max_ms; a success clears the address.
 * Every failure is logged (user and address, never a password), at most
 * one line a second per address, with the failures since its last line.
 *
 * The table is a fixed set-associative cache: an address hashes to a set
 * of GUARD_WAYS entries, and a new address takes the entry of its set
 * that failed longest ago, so the memory is bounded whatever the clients
 * do.  One mutex covers it: it is taken once per login, on the I/O
 * threads and (COM_CHANGE_USER) the workers, and held for a few compares.
 */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy.h"

#define GUARD_SETS 1024
#define GUARD_WAYS 4
#define GUARD_STEP_MS 1000u   /* the delay added per failure past `after` */
#define GUARD_LOG_MS 1000u    /* one log line per address at most this often */

typedef struct guard_entry {
    char key[64];             /* the address (an IPv6 one as its /64); "" unused */
    uint32_t failures;        /* in a row */
    uint32_t unlogged;        /* failures since the last log line */
    uint64_t last_fail_ms;
    uint64_t last_log_ms;     /* 0: never logged */
} guard_entry_t;

struct proxy_guard {
    pthread_mutex_t mu;
    uint32_t after;           /* failures before replies wait; 0: never */
    uint32_t max_ms;          /* the longest wait */
    guard_entry_t e[GUARD_SETS][GUARD_WAYS];
};

/* The coarse clock: read on every statement and every turn of the event
 * loops, it costs no counter read, and its tick (a few ms) is finer than
 * anything timed with it (holds, idle and connect timeouts, waits'
 * deadlines, PROCESSLIST's Time). */
uint64_t guard_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The coarse clock's tick in whole milliseconds, rounded up, plus one for
 * guard_now_ms's truncation: how far a reading may lag the time. */
static uint64_t clock_slack_ms(void)
{
    static _Atomic uint64_t slack;
    uint64_t s = atomic_load_explicit(&slack, memory_order_relaxed);
    struct timespec res;

    if (s == 0) {
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0)
            res.tv_sec = 0, res.tv_nsec = 10000000;  /* no answer: 10 ms */
        s = (uint64_t)res.tv_sec * 1000u + ((uint64_t)res.tv_nsec + 999999u) / 1000000u + 1u;
        atomic_store_explicit(&slack, s, memory_order_relaxed);
    }
    return s;
}

/* A reading taken now may lag the time by up to a tick, so a deadline of
 * now + ms could come that much early; a hold that must last ms (the
 * guard's waits) ends no sooner than this. */
uint64_t guard_deadline_ms(uint64_t ms)
{
    return guard_now_ms() + ms + clock_slack_ms();
}

proxy_guard_t *guard_new(uint32_t after, uint32_t max_ms)
{
    proxy_guard_t *g = calloc(1, sizeof *g);

    if (g == NULL)
        return NULL;
    pthread_mutex_init(&g->mu, NULL);
    g->after = after;
    g->max_ms = max_ms;
    return g;
}

void guard_free(proxy_guard_t *g)
{
    if (g == NULL)
        return;
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* The key of peer: the address itself, or for IPv6 its /64, the block one
 * host is commonly given, so that a client cannot start afresh by moving
 * to the next address of its own network. */
static void peer_key(const char *peer, char *key, size_t cap)
{
    struct in6_addr a;
    char text[INET6_ADDRSTRLEN];

    if (strchr(peer, ':') != NULL && inet_pton(AF_INET6, peer, &a) == 1 &&
        !IN6_IS_ADDR_V4MAPPED(&a)) {
        memset(a.s6_addr + 8, 0, 8);
        if (inet_ntop(AF_INET6, &a, text, sizeof text) != NULL) {
            snprintf(key, cap, "%s/64", text);
            return;
        }
    }
    snprintf(key, cap, "%s", peer);
}

static guard_entry_t *set_of(proxy_guard_t *g, const char *key)
{
    uint32_t h = 2166136261u;  /* FNV-1a */
    const char *p;

    for (p = key; *p != '\0'; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return g->e[h % GUARD_SETS];
}

/* key's entry, or NULL; with make, a new one in the place of the set's
 * entry that failed longest ago. */
static guard_entry_t *entry(proxy_guard_t *g, const char *key, bool make)
{
    guard_entry_t *set = set_of(g, key), *old = &set[0];
    size_t i;

    for (i = 0; i < GUARD_WAYS; i++) {
        if (strcmp(set[i].key, key) == 0 && key[0] != '\0')
            return &set[i];
        if (set[i].last_fail_ms < old->last_fail_ms)
            old = &set[i];
    }
    if (!make)
        return NULL;
    memset(old, 0, sizeof *old);
    snprintf(old->key, sizeof old->key, "%s", key);
    return old;
}

uint32_t guard_delay_ms(proxy_guard_t *g, const char *peer)
{
    char key[64];
    guard_entry_t *e;
    uint64_t ms = 0;

    if (g == NULL || g->after == 0)
        return 0;
    peer_key(peer, key, sizeof key);
    pthread_mutex_lock(&g->mu);
    if ((e = entry(g, key, false)) != NULL && e->failures >= g->after)
        ms = (uint64_t)(e->failures - g->after + 1) * GUARD_STEP_MS;
    pthread_mutex_unlock(&g->mu);
    return ms < g->max_ms ? (uint32_t)ms : g->max_ms;
}

/* user as a log shows it: printable ASCII, anything else as \xNN, so a
 * client cannot write lines of its own into the log. */
static void printable(const char *user, char *out, size_t cap)
{
    size_t n = 0;

    for (; *user != '\0' && n + 5 < cap; user++) {
        unsigned char ch = (unsigned char)*user;
        if (isprint(ch) && ch != '\\' && ch != '\'')
            out[n++] = (char)ch;
        else
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
    }
    out[n] = '\0';
}

void guard_failed(proxy_guard_t *g, const char *peer, const char *user)
{
    char key[64], shown[4 * 64 + 8];
    guard_entry_t *e;
    uint64_t now = guard_now_ms();
    uint32_t since = 1, row = 1;
    bool log = true;

    if (g != NULL) {
        peer_key(peer, key, sizeof key);
        pthread_mutex_lock(&g->mu);
        e = entry(g, key, true);
        e->failures++;
        e->unlogged++;
        e->last_fail_ms = now;
        row = e->failures;
        since = e->unlogged;
        log = e->last_log_ms == 0 || now - e->last_log_ms >= GUARD_LOG_MS;
        if (log) {
            e->last_log_ms = now;
            e->unlogged = 0;
        }
        pthread_mutex_unlock(&g->mu);
    }
    if (!log)
        return;
    printable(user, shown, sizeof shown);
    fprintf(stderr, "dal-proxy: access denied for user '%s' from %s (%u failed login%s from "
            "this address since the last line, %u in a row)\n", shown, peer, since,
            since == 1 ? "" : "s", row);
}

void guard_ok(proxy_guard_t *g, const char *peer, const char *user)
{
    char key[64], shown[4 * 64 + 8];
    guard_entry_t *e;
    uint32_t since = 0, row = 0;

    if (g == NULL)
        return;
    peer_key(peer, key, sizeof key);
    pthread_mutex_lock(&g->mu);
    if ((e = entry(g, key, false)) != NULL) {
        since = e->unlogged;
        row = e->failures;
        memset(e, 0, sizeof *e);
    }
    pthread_mutex_unlock(&g->mu);
    /* a login after failures: the operator hears of it, and of the
     * failures no line has counted yet */
    if (row == 0)
        return;
    printable(user, shown, sizeof shown);
    fprintf(stderr, "dal-proxy: user '%s' logged in from %s after %u failed login%s in a row "
            "(%u since the last line)\n", shown, peer, row, row == 1 ? "" : "s", since);
}
