/*
 * testutil.h -- small helpers shared by the Check test programs.
 */
#ifndef DAL_TESTUTIL_H
#define DAL_TESTUTIL_H

#include <stddef.h>

/* A fresh directory under $TMPDIR (or /tmp); static storage, one per call
 * site is fine.  Aborts the test program on failure. */
char *tu_mkdtemp(void);
/* Write text to dir/name; returns the path (malloc'd). */
char *tu_write(const char *dir, const char *name, const char *text);
/* Copy a file; 0 or -1. */
int tu_copy(const char *from, const char *to);
/* getenv that aborts with a clear message when the variable is missing:
 * the tests must fail, never skip, when their environment is broken. */
const char *tu_env(const char *name);
/* Remove a directory tree (best effort). */
void tu_rmtree(const char *dir);

#endif /* DAL_TESTUTIL_H */
