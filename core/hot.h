/*
 * hot.h -- laying out the statement path for the caches.
 *
 * On a loopback round trip the database server runs on the same cores
 * between two statements of a client thread and evicts most of what the
 * thread had cached; what the next statement touches comes back from
 * memory.  So the statement path is measured in cache lines and pages as
 * well as in instructions (bench/codelines.py, bench/README.md):
 *
 *  - data written by every statement of every thread (reference counts)
 *    sits alone on its cache line, so writing it does not evict the
 *    read-mostly fields next to it from the other threads' caches;
 *  - functions every statement runs are marked DAL_HOT: the compiler puts
 *    them in .text.hot, which the linker gathers in one place, so they
 *    share pages (and TLB entries) instead of being spread over the
 *    library;
 *  - functions only failures call are marked DAL_COLD (error.h): the
 *    branches that lead to them leave the hot code, so what runs on
 *    success is packed into fewer lines;
 *  - DAL_INLINE makes one body serve two entry points (dal_query and
 *    dal_query_prepared) without a call between them, or specialises a
 *    general function where its arguments are constants (one route of one
 *    table reference: its loops and allocation fold away).
 */
#ifndef DAL_CORE_HOT_H
#define DAL_CORE_HOT_H

/* The x86-64 and ARMv8 cache line. */
#define DAL_CACHE_LINE 64

/* Room that keeps a counter of type T alone on its cache line: placed
 * right after it, as the first member of a struct that is allocated on its
 * own, it puts every later member at least a line away. */
#define DAL_LINE_REST(T) (DAL_CACHE_LINE - sizeof(T))

#if defined(__GNUC__)
#define DAL_HOT __attribute__((hot))
#define DAL_COLD __attribute__((cold))
#define DAL_INLINE __attribute__((always_inline)) inline
#else
#define DAL_HOT
#define DAL_COLD
#define DAL_INLINE inline
#endif

#endif /* DAL_CORE_HOT_H */
