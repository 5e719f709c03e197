/*
 * reshard.h -- `dal reshard`: moving a logical table from the layout of one
 * configuration (-c OLD) to the layout of another (--to NEW).
 *
 *   cmd_reshard.c      the command: options, dispatch, help
 *   reshard_plan.c     plan: checks and where each old table's rows go
 *   reshard_state.c    the workflow's state table (status, resume)
 *   reshard_copy.c     copy: new tables, rows in primary-key chunks
 *   reshard_verify.c   verify: chunk checksums, then rows
 *   reshard_catchup.c  catch-up: changed keys from the binary logs
 *   reshard_apply.c    catch-up: the keys re-read and placed in the new layout
 *   reshard_switch.c   switch: write fence, last catch-up, new configuration
 *   reshard_ack.c      switch: the instances' acknowledgements of the fence
 *   reshard_pause.c    copy and catch-up wait on replica lag and load
 *   reshard_reverse.c  reverse: the old layout kept up to date after the switch
 *   reshard_sql.c      direct connections to the nodes and SQL helpers
 *
 * Routing is the library's: every row goes where dal_explain on the new
 * configuration sends its shard key value.  The tool reads and writes
 * physical tables through its own connections to each node's master
 * (dal_datasource_info), as `dal load --direct` does.
 */
#ifndef DAL_TOOLS_RESHARD_H
#define DAL_TOOLS_RESHARD_H

#include "cli.h"

#include <mysql.h>
#include <stdint.h>

/* One physical table of a layout: where it is and what it is called. */
typedef struct rs_phys {
    char node[128];      /* datasource name */
    char table[128];     /* physical table name */
    char where[256];     /* "host:port/database", to tell two layouts' tables apart */
    dal_datasource_info_t *ds; /* owned: the node's settings as at the start (they do not
                                  follow a reload of the file, which the switch rewrites) */
} rs_phys_t;

/* One layout: a configuration opened with dal_open and the table in it. */
typedef struct rs_layout {
    const char *path;     /* borrowed: the file */
    dal_t *dal;           /* owned */
    dal_table_info_t *info; /* owned */
    rs_phys_t *phys;      /* owned: table_shard_num entries, in position order */
    size_t nphys;
    MYSQL **conns;        /* owned: one per phys entry's node, opened on demand
                             (entries of one node share theirs: see rs_conn) */
} rs_layout_t;

/* The workflow's context: both layouts and what was learned of the table. */
typedef struct rs {
    const cli_t *cli;     /* borrowed */
    const char *table;    /* borrowed: the logical table */
    rs_layout_t old, new_;
    char state_ds[128];   /* datasource holding the state table */
    MYSQL *state;         /* owned: connection to state_ds's master */
    char **cols;          /* owned: the columns of the old table, in order */
    size_t ncols;
    char pk[128];         /* the single-column primary key */
    int pk_numeric;       /* its type is an integer: compared unquoted */
    char shard_key[128];
    int key_int;          /* shard key values are passed to the router as integers */
    uint64_t max_rps;     /* --max-rows-per-second (0: no limit) */
    uint64_t chunk;       /* --chunk-size: rows per chunk */
    int follow;           /* catchup --follow: keep following the logs */
    int count_only;       /* a catch-up round counts the changed keys, applies nothing */
    uint64_t counted;     /* ... and adds them here */
    const char *source;   /* switch --source: the file the instances follow (default -c) */
    uint64_t max_pause_ms; /* switch --max-write-pause (default 1000) */
    uint64_t settle_ms;   /* switch --fence-settle: how long after the switch the old
                             nodes' logs are read for late writes (300) */
    uint64_t max_lag;     /* --max-lag SECONDS: a replica further behind pauses (0: none) */
    char load_var[64];    /* --max-load VAR=N: a master's global status VAR above N pauses */
    uint64_t max_load;    /* ... N ("" in load_var: no limit) */
    double checked;       /* when rs_pause_if_busy last looked at the nodes */
    int reverse;          /* reverse: old and new_ swapped (the new layout is read, the
                             old one written); its catch-up rows are "reverse:NODE" */
    int switch_back;      /* reverse --switch: then switch the instances back */
} rs_t;

/* --------------------------------------------------------- reshard_sql.c */

/* Open both layouts (new_ only when to != NULL) and learn the table's
 * columns and keys from the old layout's first table.  CLI_OK or CLI_FAIL
 * (reported). */
int rs_open(rs_t *rs, const cli_t *cli, const char *to, const char *table);
void rs_close(rs_t *rs);
/* The connection to the master of layout l's entry i (shared per node);
 * NULL after reporting. */
MYSQL *rs_conn(rs_t *rs, rs_layout_t *l, size_t i);
/* A connection to server s of datasource node; NULL after reporting. */
MYSQL *rs_connect_server(const dal_server_settings_t *s, const char *node);
/* Run sql; 0, or -1 after reporting (what names the statement's place). */
int rs_exec(MYSQL *m, const char *what, const char *sql);
/* Run a query whose first row's first column is returned (owned, NULL for
 * SQL NULL or no row in *out); 0 or -1 after reporting. */
int rs_scalar(MYSQL *m, const char *what, const char *sql, char **out);
/* Where rs's router sends shard key value v (text, NULL for NULL) in the
 * new layout: the index into rs->new_.phys, or -1 after reporting. */
long rs_route(rs_t *rs, const char *v, size_t len);
/* A growing SQL text. */
typedef struct rs_buf {
    char *s;
    size_t len, cap;
} rs_buf_t;
int rs_put(rs_buf_t *b, const char *s, size_t n);
int rs_puts(rs_buf_t *b, const char *s);
/* v (len bytes, NULL: NULL) as a literal for m: quoted and escaped, or
 * bare when numeric is set. */
int rs_put_value(rs_buf_t *b, MYSQL *m, const char *v, size_t len, int numeric);
/* `a`, `b`, ... of rs's columns. */
int rs_put_cols(rs_buf_t *b, const rs_t *rs);
/* The per-row checksum expression over rs's columns. */
int rs_put_crc(rs_buf_t *b, const rs_t *rs);
void rs_buf_free(rs_buf_t *b);
double rs_now(void);

/* ------------------------------------------------------- reshard_state.c */

/* The state of one source table (or, with src "", the whole workflow). */
typedef struct rs_state {
    char src[300];        /* "NODE.TABLE", or "" */
    char phase[32];       /* workflow: planned, copying, copied; sources: copying, copied */
    char *last_key;       /* owned: the last primary key copied; NULL: none yet */
    uint64_t rows_copied, rows_total;
    char *gtid;           /* owned: the source's GTID position at the start of the copy */
    double started, updated;
    char target[512];     /* workflow: the new configuration's path */
    int64_t lag_ms;       /* catch-up ("binlog:NODE"): the last round's lag; -1: none */
    char detail[512];     /* workflow: why it waits ("paused: ..."), or "" */
} rs_state_t;

int rs_state_init(rs_t *rs);
/* Read the state of src; 1 found, 0 none (st zeroed), -1 after reporting. */
int rs_state_get(rs_t *rs, const char *src, rs_state_t *st);
int rs_state_put(rs_t *rs, const rs_state_t *st);
void rs_state_free(rs_state_t *st);
/* The state table's rows of rs->table, in source order: fn for each. */
int rs_state_each(rs_t *rs, void (*fn)(void *user, const rs_state_t *st), void *user);
int rs_state_clear(rs_t *rs);
/* 1 when the state records a workflow of another table, 0 if not, -1
 * after reporting. */
int rs_state_others(rs_t *rs);
/* Set the workflow row's detail (NULL: none); a put of that row clears it. */
int rs_state_detail(rs_t *rs, const char *detail);

/* -------------------------------------------------------- subcommands */

/* The new layout is a valid home for the table: same shard key, which is
 * a column; no physical table shared with the old layout; every node of
 * both reachable.  CLI_OK or CLI_FAIL (reported).  reshard_plan.c */
int rs_check(rs_t *rs);
int rs_plan(rs_t *rs);     /* reshard_plan.c */
int rs_copy(rs_t *rs);     /* reshard_copy.c */
int rs_status(rs_t *rs);   /* reshard_state.c */
int rs_verify(rs_t *rs);   /* reshard_verify.c */
int rs_cleanup(rs_t *rs);  /* reshard_copy.c */
int rs_abort(rs_t *rs);    /* reshard_copy.c */
int rs_catchup(rs_t *rs);  /* reshard_catchup.c */
int rs_switch(rs_t *rs);   /* reshard_switch.c */
/* Remove the write fence a switch that died left in --source (refused
 * while a switch of the table runs).  reshard_switch.c */
int rs_abort_switch(rs_t *rs);
int rs_reverse(rs_t *rs);  /* reshard_reverse.c */
/* Catch-up rounds until one takes under a second (or, with rs->follow,
 * until SIGTERM/SIGINT), giving way to the servers before each; *lag the
 * last round's.  reshard_catchup.c */
int rs_catchup_rounds(rs_t *rs, long long *lag);
/* The table dal_reshard_fence_ack on the first node of rs->old (the
 * layout in force), created if missing; *wait_s: how long until every
 * live instance has registered in it (an instance that found no such
 * table looks again RS_ACK_ABSENT_S later: core/api/fence_ack.h).  CLI_OK
 * or CLI_FAIL (reported).  reshard_ack.c */
int rs_ack_init(rs_t *rs, double *wait_s);
#define RS_ACK_ABSENT_S 5
/* Wait until every live instance has applied fence gen: 1; 0 when
 * rs_now() reaches until first (*missing, owned: the instances that had
 * not, "a, b"); -1 after reporting. */
int rs_ack_wait(rs_t *rs, uint64_t gen, double until, char **missing);
/* After cleanup or abort: drop dal_reshard_fence_ack (every instance that
 * writes a table of its node refreshes a row there each second while it
 * exists) unless the state records another table's workflow.  CLI_OK or
 * CLI_FAIL (reported). */
int rs_ack_forget(rs_t *rs);
/* At the switch, with writes held: each new node's @@gtid_binlog_pos as
 * the start of its reverse catch-up ("reverse:NODE").  reshard_reverse.c */
int rs_reverse_mark(rs_t *rs);
/* One catch-up round on every old node: *lag the longest, in ms.
 * reshard_catchup.c */
int rs_catchup_round(rs_t *rs, long long *lag);
/* --max-lag / --max-load: wait while a replica of a node of either layout
 * is further behind, or a master busier, than allowed, with the reason in
 * the workflow's detail; looks at most once a second.  0, or -1 after
 * reporting (a node that cannot be asked).  reshard_pause.c */
int rs_pause_if_busy(rs_t *rs);
/* The lock that keeps two `dal reshard` runs on one table apart (held
 * until exit).  reshard_copy.c */
int rs_lock(rs_t *rs);

/* Make the new layout's rows of keys[0..n) (primary key values as text,
 * owned: freed here) what the old layout holds now: each is read from
 * every old table, written where the router puts it, deleted from the
 * other new tables.  The number of distinct keys, or -1 after reporting.
 * reshard_apply.c */
int rs_apply_keys(rs_t *rs, char **keys, size_t n);

#endif /* DAL_TOOLS_RESHARD_H */
