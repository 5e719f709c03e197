/*
 * spare.h -- one freed block per thread and kind, kept for that thread's
 * next allocation of the same kind.
 *
 * A statement allocates its result and the result's first source and
 * frees both when the caller is done; glibc's malloc and free cost about
 * 140 instructions a pair on that path.  A thread keeps the last freed
 * block of each kind instead; what a thread keeps is freed when it exits.
 *
 * A low layer: every module may use it; it uses only clock.h and thread.h.
 */
#ifndef DAL_CORE_SPARE_H
#define DAL_CORE_SPARE_H

#include <stddef.h>

/* The kinds; each has one fixed size, given at every spare_take. */
typedef enum spare_kind {
    SPARE_RESULT,        /* result.c's result block */
    SPARE_BINARY_SRC,    /* result_binary.c's source of binary rows */
    SPARE_KINDS
} spare_kind_t;

/* A block of size bytes, not cleared: the thread's spare of kind k, or
 * malloc's; NULL if out of memory.  Owned by the caller (spare_give). */
void *spare_take(spare_kind_t k, size_t size);

/* Done with p (taken, owned; NULL is ignored): kept as the thread's spare
 * of kind k, or freed. */
void spare_give(spare_kind_t k, void *p);

#endif /* DAL_CORE_SPARE_H */
