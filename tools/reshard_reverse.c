/*
 * reshard_reverse.c -- `dal reshard reverse`: after the switch, the old
 * layout is kept up to date from the new one, so that the instances can be
 * switched back without losing a write made since the switch.
 *
 * It is the catch-up with the layouts' parts swapped: the new nodes'
 * binary logs are read from the positions the switch recorded while the
 * writes were held (rs_reverse_mark, just before the instances got the new
 * configuration: nothing had reached the new tables from them yet), each
 * changed key is read again from every new table and placed in the old
 * layout by the old configuration's router.  Its rounds are kept as
 * "reverse:NODE" in the state table.  --switch then switches the instances
 * back, as `switch` does, to the -c file's layout; the phase is then
 * `reversed` (`abort` drops the new tables; `cleanup` refuses).
 */
#include "reshard.h"

#include <stdlib.h>
#include <string.h>

int rs_reverse_mark(rs_t *rs)
{
    rs_layout_t *l = &rs->new_;
    size_t i, j;

    for (i = 0; i < l->nphys; i++) {
        rs_state_t st;
        MYSQL *m;
        int rc;
        for (j = 0; j < i && strcmp(l->phys[j].node, l->phys[i].node) != 0; j++)
            ;
        if (j < i)
            continue;   /* this node's position is taken */
        memset(&st, 0, sizeof st);
        snprintf(st.src, sizeof st.src, "reverse:%s", l->phys[i].node);
        snprintf(st.phase, sizeof st.phase, "waiting");
        st.started = st.updated = rs_now();
        st.lag_ms = -1;
        m = rs_conn(rs, l, i);
        rc = m == NULL || rs_scalar(m, l->phys[i].node, "SELECT @@gtid_binlog_pos", &st.gtid) ||
             rs_state_put(rs, &st);
        rs_state_free(&st);
        if (rc)
            return -1;
    }
    return 0;
}

static void swap_layouts(rs_t *rs)
{
    rs_layout_t t = rs->old;

    rs->old = rs->new_;
    rs->new_ = t;
    rs->reverse = !rs->reverse;
}

int rs_reverse(rs_t *rs)
{
    rs_state_t flow;
    long long lag = 0;
    int found, rc;

    if (rs_check(rs) != CLI_OK || rs_lock(rs) != CLI_OK || rs_state_init(rs) != CLI_OK ||
        (found = rs_state_get(rs, "", &flow)) < 0)
        return CLI_FAIL;
    if (!found || strcmp(flow.phase, "switched") != 0) {
        cli_errorf("reshard: %s is in phase %s; reverse follows a switch", rs->table,
                   found ? flow.phase : "none");
        rs_state_free(&flow);
        return CLI_FAIL;
    }
    rs_state_free(&flow);
    swap_layouts(rs);
    rc = rs_catchup_rounds(rs, &lag);
    if (rc == CLI_OK && !rs->cli->json)
        printf("reversed %s: %s caught up from %s, lag %lld ms\n", rs->table, rs->new_.path,
               rs->old.path, lag);
    else if (rc == CLI_OK && !rs->switch_back)
        printf("{\"phase\":\"switched\",\"reverse_lag_ms\":%lld}\n", lag);
    if (rc == CLI_OK && rs->switch_back)
        rc = rs_switch(rs);
    swap_layouts(rs);
    return rc;
}
