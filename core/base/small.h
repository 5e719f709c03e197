/*
 * small.h -- arrays that usually fit in storage the caller already has.
 *
 * The statement path sizes many arrays by the statement (table references,
 * INSERT rows, parameters), and nearly always they are small: the caller
 * keeps room for a few inside its own struct or on its stack, and only a
 * larger array costs an allocation.  One pair of functions serves them
 * all, so no site can free its inline room by mistake.
 */
#ifndef DAL_CORE_SMALL_H
#define DAL_CORE_SMALL_H

#include <stdlib.h>
#include <string.h>

/* n elements of size bytes: inl (the caller's room for inl_n of them,
 * borrowed) when they fit, else the heap (owned; free with small_free).
 * zero: the elements start zeroed.  NULL only when the heap fails. */
static inline void *small_alloc(void *inl, size_t inl_n, size_t n, size_t size, int zero)
{
    if (n <= inl_n) {
        if (zero)
            memset(inl, 0, n * size);
        return inl;
    }
    return zero ? calloc(n, size) : malloc(n * size);
}

/* Free what small_alloc returned for this inl (nothing if it was inl). */
static inline void small_free(void *p, const void *inl)
{
    if (p != inl)
        free(p);
}

#endif /* DAL_CORE_SMALL_H */
