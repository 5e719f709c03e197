/*
 * test_fence.c -- the write gate of reshard fences (core/stmt/fence.c) on
 * servers that are never contacted: while the watch is quiet statements
 * pass it by their own counter, and fence_drain still waits for them; a
 * fence in the configuration wakes the watch and holds writes.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dal/dal.h>

#include "fence.h"
#include "handle.h"
#include "offline.h"
#include "testutil.h"

static dal_stmt_text_t text(const char *sql)
{
    return (dal_stmt_text_t){sql, NULL, strlen(sql), 0};
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

typedef struct drain {
    dal_t *dal;
    atomic_int done;
} drain_t;

static void *drain_main(void *arg)
{
    drain_t *d = arg;

    fence_drain(d->dal);
    atomic_store(&d->done, 1);
    return NULL;
}

/* Wait up to 5 s for the drain to return; whether it did. */
static int drain_returns(drain_t *d)
{
    int i;

    for (i = 0; i < 500 && !atomic_load(&d->done); i++)
        sleep_ms(10);
    return atomic_load(&d->done);
}

/* A write that passed the quiet watch (a session's and a sessionless one)
 * keeps fence_drain waiting until it has left; while the drain runs, a
 * new write goes through the gate instead. */
START_TEST(test_quiet_watch_drains)
{
    dal_t *dal = open_mod(2);
    const char *ins = "INSERT INTO wm_food (wm_poi_id) VALUES (1)";
    drain_t d = {dal, 0};
    snap_slot_t slot;
    unsigned t_slot, t_free, t_gate;
    atomic_uint other = 0;
    dal_error_t err;
    pthread_t th;

    memset(&slot, 0, sizeof slot);
    snap_slot_open(dal, &slot);
    ck_assert_uint_eq(atomic_load(&dal->fence_watch), 0);
    ck_assert_int_eq(fence_enter(dal, &slot.ungated, dal->sql_cache, text(ins), &t_slot, &err), 0);
    ck_assert_int_eq(fence_enter(dal, &dal->fence_ungated, dal->sql_cache, text(ins), &t_free,
                                 &err), 0);
    ck_assert_uint_eq(atomic_load(&slot.ungated), 1);
    ck_assert_uint_eq(atomic_load(&dal->fence_ungated), 1);

    ck_assert_int_eq(pthread_create(&th, NULL, drain_main, &d), 0);
    sleep_ms(100);
    ck_assert_msg(!atomic_load(&d.done), "the drain returned while a quiet write ran");
    ck_assert(atomic_load(&dal->fence_watch) & FENCE_WATCH_DRAIN);
    /* the watch is awake: this one takes the gate, not its counter */
    ck_assert_int_eq(fence_enter(dal, &other, dal->sql_cache, text(ins), &t_gate, &err), 0);
    ck_assert_uint_eq(atomic_load(&other), 0);
    fence_leave(dal, &other, t_gate);

    fence_leave(dal, &slot.ungated, t_slot);
    sleep_ms(100);
    ck_assert_msg(!atomic_load(&d.done), "the drain returned while a sessionless write ran");
    fence_leave(dal, &dal->fence_ungated, t_free);
    ck_assert_msg(drain_returns(&d), "the drain did not return once the writes had left");
    pthread_join(th, NULL);
    ck_assert_uint_eq(atomic_load(&dal->fence_watch), 0);
    ck_assert_uint_eq(atomic_load(&slot.ungated), 0);
    snap_slot_close(dal, &slot);
    dal_close(dal);
}
END_TEST

/* A write_fence in the configuration wakes the watch: a write of the
 * table is held, then fails past the fence's bound; a read passes. */
START_TEST(test_fence_in_configuration)
{
    char *ini = write_ini("datasource = db0\nwrite_fence = 7_150\n");
    dal_t *dal = NULL;
    unsigned ticket;
    atomic_uint own = 0;
    dal_error_t err;

    ck_assert_msg(dal_open(ini, NULL, &dal, &err) == 0, "%s", err.message);
    free(ini);
    ck_assert(atomic_load(&dal->fence_watch) & FENCE_WATCH_FENCED);
    ck_assert_int_eq(fence_enter(dal, &own, dal->sql_cache, text("SELECT * FROM t"), &ticket,
                                 &err), 0);
    fence_leave(dal, &own, ticket);
    ck_assert_int_eq(fence_enter(dal, &own, dal->sql_cache, text("INSERT INTO t VALUES (1)"),
                                 &ticket, &err), DAL_ESTATE);
    ck_assert_msg(strstr(err.message, "write held over 150 ms") != NULL, "%s", err.message);
    ck_assert_uint_eq(atomic_load(&own), 0);
    dal_close(dal);
}
END_TEST

static Suite *fence_suite(void)
{
    Suite *s = suite_create("fence");
    TCase *tc = tcase_create("gate");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_quiet_watch_drains);
    tcase_add_test(tc, test_fence_in_configuration);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(fence_suite(), CK_FORK_GETENV);
}
