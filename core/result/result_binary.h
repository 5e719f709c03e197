/*
 * result_binary.h -- the rows of a server-side prepared statement (binary
 * protocol) as a result source.
 *
 * dal's rows are text, as the text protocol sends them: every getter and
 * the merge read them so.  A prepared statement's rows arrive as binary
 * values, each turned into the text the server itself would have sent: an
 * integer column (but ZEROFILL) is fetched as a number of its width and
 * written out here; every other column is converted by the connector
 * (bound as MYSQL_TYPE_STRING: the same digits for DECIMAL, the column's
 * fraction digits for temporal types, the server's shortest form for
 * FLOAT and DOUBLE, the bytes of BLOB, BIT and JSON, NULL as NULL), so a
 * prepared statement gives the caller exactly what its text form gives.
 * tests/live/test_sprep.c checks that for every column type.
 *
 * All rows are read before the call returns (mysql_stmt_store_result,
 * then converted): the statement handle stays with its connection, which
 * goes back to the pool (and may run the statement again for someone
 * else) while the caller still reads rows.
 *
 * A reader lives as long as its cached handle: the buffers the connector
 * converts into stay bound from one execution to the next, and the
 * columns' description is copied once (a colset) and shared by every
 * result, until a reply brings a new one.
 */
#ifndef DAL_CORE_RESULT_BINARY_H
#define DAL_CORE_RESULT_BINARY_H

#include <mysql.h>

#include "colset.h"
#include "result.h"

typedef struct binary_reader binary_reader_t;

/* A reader of st's results (st borrowed: free the reader before closing
 * st).  NULL without memory.  Nothing is allocated for the columns until
 * the first result. */
binary_reader_t *binary_reader_new(MYSQL_STMT *st);

/* Free rd and what it keeps (NULL is ignored).  Results made by it keep
 * their own reference to the columns' description. */
void binary_reader_free(binary_reader_t *rd);

/* result_add_binary: the handle cannot describe this result (its texts
 * were dropped, and the reply's columns are not the ones it had): the
 * rows were dropped, and the handle must be prepared again. */
#define BINARY_STALE 1

/* Read every row of rd's statement (executed, its result set not yet
 * fetched) into a new source of r.  0; DAL_ENOMEM (err filled);
 * BINARY_STALE; or DAL_ESERVER when the fetch failed: err is left to the
 * caller, who reads the reason from the statement (mysql_stmt_errno) and
 * its connection.
 *
 * Once it has read a first result, rd drops the texts of st's own column
 * description (st->fields: names, tables, ...), which dal never reads
 * (results take them from rd's copy): the library would otherwise copy
 * them onto the connection at every execution. */
int result_add_binary(dal_result_t *r, binary_reader_t *rd, const char *datasource,
                      dal_error_t *err);

/* The description of the result rd's statement was just executed into,
 * its rows still unread (a relay reads them itself): rd's colset (borrowed:
 * it lives until a reply brings another; colset_ref to keep it), or NULL
 * with *rc DAL_ENOMEM, DAL_ESERVER (binding failed: the statement says
 * why) or BINARY_STALE, the rows then still pending.  Otherwise *rc 0. */
const colset_t *binary_reader_columns(binary_reader_t *rd, int *rc);

#endif /* DAL_CORE_RESULT_BINARY_H */
