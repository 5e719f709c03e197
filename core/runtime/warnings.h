/*
 * warnings.h -- the servers' warnings of a statement, read at once.
 *
 * A server keeps a statement's warnings until the connection's next
 * statement, but dal hands the connection back to its pool as soon as the
 * answer is in, so a later SHOW WARNINGS would read another connection's.
 * When the statement's thread asked for them (warnings_want: a session
 * that keeps warnings, dal_session_keep_warnings), exec.c reads SHOW
 * WARNINGS on each connection that reported some, right after the
 * statement and before letting the connection go, into the result.  The
 * cost is that round trip, only when there are warnings.
 */
#ifndef DAL_CORE_WARNINGS_H
#define DAL_CORE_WARNINGS_H

#include <mysql.h>
#include <stddef.h>

typedef struct dal_warnings dal_warnings_t;

/* Whether the statements the calling thread runs from now on read their
 * warnings (0: no, the default), and where the diagnostics area of one
 * that fails with a server error goes (warnings_read_failed): *failed is
 * emptied now (freed, NULL); failed NULL: nowhere. */
void warnings_want(int on, dal_warnings_t **failed);
/* If m's last statement left warnings (count: their number, as the
 * statement's reply gave it) and the thread wants them, append SHOW
 * WARNINGS' rows to *w (created on first use).  Never fails the statement:
 * rows that cannot be read or stored are left out. */
void warnings_read(dal_warnings_t **w, MYSQL *m, unsigned int count);
/* After a server error on m (m still usable), when the thread wants them:
 * SHOW WARNINGS' rows, the server's diagnostics area of the failed
 * statement (the conditions it raised before the error, and the error),
 * into the place warnings_want named, replacing what it held. */
void warnings_read_failed(MYSQL *m);
/* Move from's rows to the end of *to (from is freed; *to made if NULL). */
void warnings_move(dal_warnings_t **to, dal_warnings_t *from);
size_t warnings_count(const dal_warnings_t *w);
/* Row i: level ("Note", "Warning", "Error"), code, message; strings owned
 * by w.  -1 when i is out of range. */
int warnings_get(const dal_warnings_t *w, size_t i, const char **level, unsigned int *code,
                 const char **message);
void warnings_free(dal_warnings_t *w);

#endif /* DAL_CORE_WARNINGS_H */
