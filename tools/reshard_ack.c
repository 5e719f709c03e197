/*
 * reshard_ack.c -- the instances' acknowledgements of a write fence: the
 * table dal_reshard_fence_ack on the datasource of the first physical
 * table of the layout in force (the library writes it: core/api/
 * fence_ack.h).
 *
 * Every dal instance with allow_reshard = true that has the table in its
 * configuration keeps a row (table_name, instance) there, its `seen`
 * refreshed every second by the server's clock, and sets `generation` to
 * a fence once it holds every write of the table.  The table lives in the
 * database rather than beside the document because every instance that
 * writes the table reaches that datasource already (it writes the table
 * there), whatever its source (a file, which several machines may each
 * keep a copy of, or a store the instances may only read), and because
 * liveness is judged by one clock, the server's.
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An instance whose row is older than this is taken for dead. */
#define LIVE_SECONDS 3

static MYSQL *ack_conn(rs_t *rs)
{
    return rs_conn(rs, &rs->old, 0);
}

int rs_ack_init(rs_t *rs, double *wait_s)
{
    MYSQL *m = ack_conn(rs);
    char *age = NULL;

    *wait_s = 0;
    if (m == NULL || rs_exec(m, "creating dal_reshard_fence_ack",
                "CREATE TABLE IF NOT EXISTS dal_reshard_fence_ack ("
                " table_name VARCHAR(128) NOT NULL, instance VARCHAR(200) NOT NULL,"
                " generation BIGINT UNSIGNED NOT NULL DEFAULT 0,"
                " seen DATETIME(6) NOT NULL, PRIMARY KEY (table_name, instance))") != 0 ||
        rs_scalar(m, "reading the age of dal_reshard_fence_ack",
                  "SELECT TIMESTAMPDIFF(SECOND, CREATE_TIME, NOW()) FROM "
                  "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
                  "TABLE_NAME = 'dal_reshard_fence_ack'", &age) != 0)
        return CLI_FAIL;
    /* an instance looks for the table at least every ABSENT seconds */
    if (age != NULL && atof(age) < RS_ACK_ABSENT_S + 1.5)
        *wait_s = RS_ACK_ABSENT_S + 1.5 - atof(age);
    free(age);
    return CLI_OK;
}

/* The live instances that have not applied fence gen, as "a, b"
 * (owned; "" when none), or NULL after reporting. */
static char *unacked(rs_t *rs, MYSQL *m, uint64_t gen)
{
    rs_buf_t q = {0}, out = {0};
    char num[96];
    MYSQL_RES *r = NULL;
    MYSQL_ROW row;
    int bad;

    snprintf(num, sizeof num, " AND seen > NOW(6) - INTERVAL %d SECOND AND generation <> %llu",
             LIVE_SECONDS, (unsigned long long)gen);
    bad = rs_puts(&q, "SELECT instance FROM dal_reshard_fence_ack WHERE table_name = ") ||
          rs_put_value(&q, m, rs->table, strlen(rs->table), 0) || rs_puts(&q, num) ||
          rs_puts(&q, " ORDER BY instance");
    if (!bad && (mysql_query(m, q.s) != 0 || (r = mysql_store_result(m)) == NULL)) {
        cli_errorf("reshard: reading dal_reshard_fence_ack: %s", mysql_error(m));
        bad = 1;
    }
    while (!bad && (row = mysql_fetch_row(r)) != NULL)
        bad = (out.len > 0 && rs_puts(&out, ", ")) || rs_puts(&out, row[0] ? row[0] : "?");
    if (r != NULL)
        mysql_free_result(r);
    rs_buf_free(&q);
    if (!bad && out.s == NULL)
        bad = rs_puts(&out, "");
    if (bad) {
        rs_buf_free(&out);
        return NULL;
    }
    return out.s;
}

int rs_ack_wait(rs_t *rs, uint64_t gen, double until, char **missing)
{
    const struct timespec tick = {0, 10000000};
    MYSQL *m = ack_conn(rs);
    char *left;

    *missing = NULL;
    if (m == NULL)
        return -1;
    for (;;) {
        if ((left = unacked(rs, m, gen)) == NULL)
            return -1;
        if (left[0] == '\0') {
            free(left);
            return 1;
        }
        if (rs_now() >= until) {
            *missing = left;
            return 0;
        }
        free(left);
        nanosleep(&tick, NULL);
    }
}

int rs_ack_forget(rs_t *rs)
{
    rs_layout_t *l[2] = {&rs->old, &rs->new_};
    int others = rs_state_others(rs);
    MYSQL *m;
    size_t i;

    if (others != 0)
        return others < 0 ? CLI_FAIL : CLI_OK;
    /* the switch made it on the first node of the layout then in force */
    for (i = 0; i < 2; i++)
        if (l[i]->nphys > 0 &&
            ((m = rs_conn(rs, l[i], 0)) == NULL ||
             rs_exec(m, l[i]->phys[0].node, "DROP TABLE IF EXISTS dal_reshard_fence_ack") != 0))
            return CLI_FAIL;
    return CLI_OK;
}
