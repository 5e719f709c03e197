/*
 * sql_cache.h -- the analysis cache: a statement's text to its analysis
 * (sql.h), shared by every snapshot of a handle, with a small front cache
 * per thread so a repeated text costs no lock.
 */
#ifndef DAL_CORE_SQL_CACHE_H
#define DAL_CORE_SQL_CACHE_H

#include "sql.h"

/* A fixed-capacity, thread-safe map from statement text to its analysis.
 * Entries are evicted by a clock sweep; an evicted entry stays valid while
 * any caller still holds a reference on it. */
typedef struct dal_sql_cache dal_sql_cache_t;

/* A new cache holding about `capacity` statements (at least 16).  Owned by
 * the caller; NULL if out of memory. */
dal_sql_cache_t *sql_cache_new(size_t capacity);

/* The analysis of sql[0..len) (borrowed) read in the mode no_backslash
 * (sql_analyse; the mode is part of the key), from the cache or analysed and
 * added now.  Returns a reference owned by the caller (release it with
 * sql_unref), or NULL with a message in errbuf if the statement cannot
 * be analysed (failures are not cached) or memory ran out.  Safe to call
 * from any number of threads at once. */
const dal_sql_t *sql_cache_get(dal_sql_cache_t *c, const char *sql, size_t len,
                               int no_backslash, char *errbuf, size_t errcap);

/* The analysis of sql[0..len) in the mode no_backslash for the statement
 * the calling thread runs now, from the thread's own front cache (the last few texts it ran on
 * any cache, each holding a reference) or else from c as sql_cache_get.
 * With *lent set, the analysis is lent: valid until the thread calls
 * sql_cache_return, which it must do before it borrows again.  A thread
 * that borrows while a loan is out (a statement run from inside another),
 * or that cannot keep a front cache, and a statement whose analysis is
 * over 16 KiB (sql_cache_limit), get a reference of their own instead
 * (*lent 0: release it with sql_unref).  NULL as sql_cache_get. */
const dal_sql_t *sql_cache_borrow(dal_sql_cache_t *c, const char *sql, size_t len,
                                  int no_backslash, int *lent, char *errbuf, size_t errcap);

/* The end of the calling thread's loan (sql_cache_borrow). */
void sql_cache_return(void);

/* The cache's hash of a statement's text p[0..n) (borrowed): also for
 * other maps keyed by SQL text (sprep.c's prepared statements). */
uint64_t sql_hash_text(const char *p, size_t n);

/* Hit and miss counts of the shared cache since creation (either pointer
 * may be NULL); a hit in a thread's front cache is not counted. */
void sql_cache_stats(dal_sql_cache_t *c, uint64_t *hits, uint64_t *misses);

/* Default bounds of a new cache ([dal] sql_cache_bytes and
 * sql_cache_max_statement): the bytes its entries may hold, and the
 * longest statement text it keeps. */
#define SQL_CACHE_BYTES ((size_t)64 << 20)
#define SQL_CACHE_MAX_STATEMENT ((size_t)64 << 10)

/* Bound what c keeps: at most max_bytes in its entries (each counted as
 * its analysis's block, which holds the copy of the text, plus the text's
 * length again for the normalised text made of it later), evicting by the
 * same clock as the entry limit, now if it holds more; no statement
 * longer than max_statement bytes, nor any whose entry alone is over
 * max_bytes (such a statement is analysed for its caller alone, every
 * time).  A thread's front cache keeps no entry over 16 KiB.  Safe while
 * other threads use c. */
void sql_cache_limit(dal_sql_cache_t *c, size_t max_bytes, size_t max_statement);

/* What a cache holds and did since creation. */
typedef struct sql_cache_figures {
    uint64_t hits, misses; /* as sql_cache_stats */
    uint64_t entries;      /* analyses held now */
    uint64_t bytes;        /* their bytes, counted as sql_cache_limit says */
    uint64_t evictions;    /* entries let go for the entry limit or the byte bound */
    uint64_t uncached;     /* statements analysed but not kept (sql_cache_limit) */
    uint64_t max_bytes, max_statement; /* the bounds in force */
} sql_cache_figures_t;

/* Fill *out (owned by the caller).  Safe while other threads use c. */
void sql_cache_figures(dal_sql_cache_t *c, sql_cache_figures_t *out);

/* Free the cache; entries still referenced by callers live on until their
 * last sql_unref (a thread's front cache lets go of its few when it runs
 * other texts, or exits).  c is transferred; NULL is allowed.  No other
 * thread may use c during or after this call. */
void sql_cache_free(dal_sql_cache_t *c);

#endif /* DAL_CORE_SQL_CACHE_H */
