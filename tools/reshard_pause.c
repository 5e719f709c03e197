/*
 * reshard_pause.c -- the copy and the catch-up give way to the servers:
 * they wait while a replica of a node of either layout is more than
 * --max-lag seconds behind its master (Seconds_Behind_Master of SHOW ALL
 * SLAVES STATUS, or SHOW SLAVE STATUS on a server without it, on each
 * replica the datasource's section names; a replica whose replication is
 * stopped counts as behind), or while a master's global status variable
 * (--max-load, as gh-ost's: Threads_running=25) is above its limit.
 * The reason is kept in the workflow's detail, so `status` shows it from
 * any machine, and cleared when the work goes on.
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Master i of layout l: its status variable above the limit?  1 yes (why
 * filled), 0 no, -1 failed. */
static int loaded(rs_t *rs, rs_layout_t *l, size_t i, char *why, size_t size)
{
    MYSQL *m = rs_conn(rs, l, i);
    MYSQL_RES *r;
    MYSQL_ROW row;
    char sql[120];
    unsigned long long n;

    if (m == NULL)
        return -1;
    snprintf(sql, sizeof sql, "SHOW GLOBAL STATUS LIKE '%s'", rs->load_var);
    if (mysql_query(m, sql) != 0 || (r = mysql_store_result(m)) == NULL) {
        cli_errorf("reshard: --max-load: datasource %s: %s", l->phys[i].node, mysql_error(m));
        return -1;
    }
    row = mysql_fetch_row(r);
    if (row == NULL || row[1] == NULL) {
        mysql_free_result(r);
        cli_errorf("reshard: --max-load: datasource %s has no status variable %s",
                   l->phys[i].node, rs->load_var);
        return -1;
    }
    n = strtoull(row[1], NULL, 10);
    mysql_free_result(r);
    if (n <= rs->max_load)
        return 0;
    snprintf(why, size, "paused: %s %s %llu > %llu", l->phys[i].node, rs->load_var, n,
             (unsigned long long)rs->max_load);
    return 1;
}

/* Seconds_Behind_Master of the replica m (the largest of its channels);
 * -2 when replication is stopped, -1 failed. */
static long long behind(MYSQL *m, const char *node)
{
    MYSQL_RES *r;
    MYSQL_ROW row;
    MYSQL_FIELD *f;
    unsigned int i, n, col = (unsigned int)-1;
    long long worst = 0;

    if (mysql_query(m, "SHOW ALL SLAVES STATUS") != 0 &&
        mysql_query(m, "SHOW SLAVE STATUS") != 0) {
        cli_errorf("reshard: --max-lag: replica of datasource %s: %s", node, mysql_error(m));
        return -1;
    }
    if ((r = mysql_store_result(m)) == NULL)
        return 0;   /* not a replica: never behind */
    n = mysql_num_fields(r);
    f = mysql_fetch_fields(r);
    for (i = 0; i < n; i++)
        if (strcasecmp(f[i].name, "Seconds_Behind_Master") == 0)
            col = i;
    while (col < n && (row = mysql_fetch_row(r)) != NULL) {
        long long s = row[col] ? strtoll(row[col], NULL, 10) : -2;
        if (s == -2 || s > worst)
            worst = s;
        if (s == -2)
            break;
    }
    mysql_free_result(r);
    return worst;
}

/* Replicas of entry i's datasource further behind than --max-lag? */
static int lagging(rs_t *rs, rs_layout_t *l, size_t i, char *why, size_t size)
{
    const dal_datasource_info_t *ds = l->phys[i].ds;
    size_t k, n = dal_datasource_info_server_count(ds);

    for (k = 0; k < n; k++) {
        const dal_server_settings_t *s = dal_datasource_info_server(ds, k);
        MYSQL *m;
        long long secs;
        if (strcmp(s->role, "replica") != 0)
            continue;
        if ((m = rs_connect_server(s, l->phys[i].node)) == NULL)
            return -1;
        secs = behind(m, l->phys[i].node);
        mysql_close(m);
        if (secs == -1)
            return -1;
        if (secs == -2 || secs > (long long)rs->max_lag) {
            if (secs == -2)
                snprintf(why, size, "paused: %s replica %s replication stopped",
                         l->phys[i].node, s->address);
            else
                snprintf(why, size, "paused: %s replica %s lag %lld s > %llu s",
                         l->phys[i].node, s->address, secs, (unsigned long long)rs->max_lag);
            return 1;
        }
    }
    return 0;
}

/* The first reason to wait: 1 (why filled), 0 none, -1 failed. */
static int busy(rs_t *rs, char *why, size_t size)
{
    rs_layout_t *ls[2] = {&rs->old, &rs->new_};
    size_t li, i, j;
    int rc;

    for (li = 0; li < 2; li++)
        for (i = 0; i < ls[li]->nphys; i++) {
            for (j = 0; j < i && strcmp(ls[li]->phys[j].node, ls[li]->phys[i].node) != 0; j++)
                ;
            if (j < i)
                continue;   /* this node was looked at */
            if (rs->load_var[0] && (rc = loaded(rs, ls[li], i, why, size)) != 0)
                return rc;
            if (rs->max_lag && (rc = lagging(rs, ls[li], i, why, size)) != 0)
                return rc;
        }
    return 0;
}

int rs_pause_if_busy(rs_t *rs)
{
    char why[512], shown[512] = "";
    struct timespec second = {1, 0};
    int rc;

    if ((!rs->max_lag && !rs->load_var[0]) || rs->new_.nphys == 0 || rs_now() - rs->checked < 1.0)
        return 0;
    while ((rc = busy(rs, why, sizeof why)) == 1) {
        if (strcmp(why, shown) != 0) {
            if (rs_state_detail(rs, why) != 0)
                return -1;
            if (!rs->cli->json)
                fprintf(stderr, "reshard %s: %s\n", rs->table, why);
            snprintf(shown, sizeof shown, "%s", why);
        }
        nanosleep(&second, NULL);
    }
    rs->checked = rs_now();
    if (rc == 0 && shown[0] && rs_state_detail(rs, NULL) != 0)
        return -1;
    return rc;
}
