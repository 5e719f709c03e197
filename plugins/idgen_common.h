/*
 * idgen_common.h -- helpers shared by the built-in ID generators.
 *
 * Header-only on purpose, like shard_common.h: each plugin is its own .so
 * that links against nothing of dal, so the helpers are compiled into every
 * plugin that includes this file, as static inline functions.
 */
#ifndef DAL_PLUGINS_IDGEN_COMMON_H
#define DAL_PLUGINS_IDGEN_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <dal/plugin.h>

#define IDGEN_CACHE_LINE 64

static inline uint64_t idgen_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void idgen_sleep_ms(int64_t ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

/* Wait on cv until the monotonic time deadline_ns (cv made by idgen_cond_init). */
static inline void idgen_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                                         uint64_t deadline_ns)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(deadline_ns / 1000000000u);
    ts.tv_nsec = (long)(deadline_ns % 1000000000u);
    pthread_cond_timedwait(cv, mu, &ts);
}

/* A condition variable whose timed waits use the monotonic clock, so that
 * setting the wall clock neither cuts a wait short nor stretches it. */
static inline int idgen_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int rc;

    if (pthread_condattr_init(&ca) != 0)
        return -1;
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc == 0 ? 0 : -1;
}

/* A table name goes into SQL text, so only plain identifiers are allowed. */
static inline int idgen_identifier_ok(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");

    return n > 0 && n <= 64 && s[n] == '\0';
}

static inline dal_value_t idgen_text(const char *s)
{
    dal_value_t v;

    v.type = DAL_TYPE_STRING;
    v.v.s.ptr = s;
    v.v.s.len = strlen(s);
    return v;
}

static inline dal_value_t idgen_int(int64_t i)
{
    dal_value_t v;

    v.type = DAL_TYPE_INT;
    v.v.i = i;
    return v;
}

/* Run a write on datasource ds; *affected gets its affected rows. */
static inline int idgen_exec(const dal_host_api_t *api, dal_host_t *host, const char *ds,
                             const char *sql, const dal_value_t *p, size_t np,
                             uint64_t *affected, dal_error_t *err)
{
    dal_result_t *r = NULL;
    int rc = api->query(host, ds, sql, p, np, &r, err);

    if (rc == 0)
        *affected = api->result_affected_rows(r);
    if (r != NULL)
        api->result_free(r);
    return rc;
}

/* Run a query on ds and read the integer columns 0..ncols-1 of its first
 * row into cols.  Returns 1 (a row), 0 (no row) or a DAL_E* code. */
static inline int idgen_query_row(const dal_host_api_t *api, dal_host_t *host, const char *ds,
                                  const char *sql, const dal_value_t *p, size_t np,
                                  int64_t *cols, size_t ncols, dal_error_t *err)
{
    dal_result_t *r = NULL;
    size_t i;
    int rc;

    memset(cols, 0, ncols * sizeof *cols); /* defined whatever a host returns */
    rc = api->query(host, ds, sql, p, np, &r, err);
    if (rc == 0 && (rc = api->result_next(r, err)) == 1)
        for (i = 0; i < ncols; i++)
            cols[i] = api->result_int(r, i);
    if (r != NULL)
        api->result_free(r);
    return rc;
}

#endif /* DAL_PLUGINS_IDGEN_COMMON_H */
