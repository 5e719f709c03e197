/*
 * check_run.h -- how every Check test program runs its suite.  A header of
 * its own so the programs that do not link testutil.c (no libdal, no
 * MariaDB) use it too.
 */
#ifndef DAL_CHECK_RUN_H
#define DAL_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

/* Run suite (CK_VERBOSITY chooses the output) and return the program's
 * exit status: EXIT_SUCCESS when every test passed.  fork: CK_NOFORK for
 * tests that share state (a cluster's tables, a dal_t) and run in order,
 * else CK_FORK_GETENV. */
static inline int tu_run(Suite *suite, enum fork_status fork)
{
    SRunner *sr = srunner_create(suite);
    int failed;

    srunner_set_fork_status(sr, fork);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
