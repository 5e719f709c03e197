/*
 * load.h -- the parts of `dal load` (docs/load.md) and what they share.
 *
 *   cmd_load.c        the options, the context, the command: --prepare,
 *                     one run or the --compare rounds, --cleanup
 *   load_run.c        one measured run: worker threads, warmup, duration,
 *                     progress line, latency histogram
 *   load_workloads.c  the statements, the workloads made of them, their
 *                     parameters, the schema; the backend through dal
 *   load_direct.c     the backend through plain libmysqlclient (--direct),
 *                     with the connection settings asked of dal
 *   load_report.c     text and JSON output, --compare's statistics
 *
 * A run drives one backend (load_backend_t): dal or direct.  Both run the
 * same statements with the same parameters, so their figures compare.
 */
#ifndef DAL_TOOLS_LOAD_H
#define DAL_TOOLS_LOAD_H

#include "cli.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <mysql.h>

/* ---------------------------------------------------------------- options */

typedef struct load_opts {
    const char *workload;     /* NULL: only --prepare and/or --cleanup */
    uint64_t threads;
    uint64_t duration_ms;     /* 0 when --statements is given */
    uint64_t statements;      /* 0: run for duration_ms */
    uint64_t warmup_ms;
    uint64_t rows;
    uint64_t seed;
    uint64_t batch;
    uint64_t tables;
    uint64_t dbs;
    uint64_t rounds;
    const char *table;        /* borrowed from the command line, or static */
    const char *shard_key;
    const char *group;
    int prepare;
    int cleanup;
    int direct;
    int compare;
    int prepared;
    int server_prepared;      /* --direct side: server-side prepared statements */
    uint64_t touch_lines;     /* --direct side: cache lines touched per statement */
    uint64_t busy_ns;         /* --direct side: nanoseconds of busy waiting per statement */
    int json;
} load_opts_t;

/* Limits that keep products and sums far from overflow. */
#define LOAD_MAX_COUNT ((uint64_t)1 << 40)
#define LOAD_MAX_THREADS 1024
#define LOAD_MAX_NAME 64
#define LOAD_MAX_TOUCH_LINES 65536   /* 4 MiB a thread */
#define LOAD_MAX_BUSY_NS 10000000    /* 10 ms */

/* ------------------------------------------------ statements (workloads) */

/*
 * Row ids.  Row k of --prepare (1 <= k <= --rows) has shard key k and id
 * LOAD_ROW_ID_BASE + k.  Ids the server makes (AUTO_INCREMENT) start above
 * every prepared row, and ids from dal's generators (Leaf, snowflake) are
 * positive signed 64-bit numbers, below LOAD_ROW_ID_BASE.  So the three
 * never meet, even when dal runs and direct runs insert into the same tables.
 */
#define LOAD_ROW_ID_BASE ((uint64_t)1 << 63)

/* The statements of the workloads (load_stmt_defs). */
enum {
    ST_POINT, ST_SUM, ST_INSERT, ST_INSERT_ID, ST_UPDATE, ST_DELETE, ST_SCATTER, ST_LOOKUP,
    ST_COUNT
};

/*
 * A statement template.  {T} is the table and {K} the shard key; through
 * dal {T} is the logical name, direct it becomes the physical table.  The
 * parameter letters say what each ? gets: k the key (the shard key value),
 * i the id of row k, n a name, p a price, s a stock figure.
 */
typedef struct load_stmt_def {
    const char *sql;
    const char *params;
    int scatter;         /* no shard key: every physical table */
} load_stmt_def_t;

extern const load_stmt_def_t load_stmt_defs[ST_COUNT];
/* SELECT by shard key alone: what --direct's layout check explains. */
extern const char load_probe_sql[];

#define LOAD_MAX_PARAMS 5
#define LOAD_MAX_STEPS 5

/* One event is one statement, or one transaction for read-write. */
typedef struct load_workload {
    const char *name;
    int txn;
    size_t nsteps;
    int steps[LOAD_MAX_STEPS];
} load_workload_t;

/* The workload called name, or NULL. */
const load_workload_t *load_find_workload(const char *name);

/* tmpl with {K} replaced by key and {T} by table, or kept when table is
 * NULL (the direct path puts the physical name there per statement).
 * Owned by the caller; NULL when out of memory. */
char *load_expand_sql(const char *tmpl, const char *table, const char *key);

/* The values of statement st's placeholders for key into out.  name
 * (namecap bytes) is storage for the string value. */
void load_set_params(dal_value_t *out, char *name, size_t namecap, int st, uint64_t key);

/* ---------------------------------------------------------------- context */

typedef struct load_direct load_direct_t;

typedef struct load_ctx {
    const cli_t *cli;
    const load_opts_t *o;
    const load_workload_t *wl;      /* NULL: only --prepare / --cleanup */
    dal_t *dal;                     /* open in every mode: schema and layout check */
    char *dal_sql[ST_COUNT];        /* owned: logical statements */
    dal_prepared_t *dal_prep[ST_COUNT]; /* owned, --prepared only: dal_sql prepared */
    load_direct_t *direct;          /* owned; --direct and --compare only */
    int progress;                   /* a line per second on standard error */
} load_ctx_t;

/* ----------------------------------------------------------------- schema */

/* Whether the table declares `lookup = id` (its lookup table is then made
 * and dropped with it, and the lookup workload may run). */
int load_has_id_lookup(const load_ctx_t *ctx);

/* --prepare: create the table through dal and insert --rows rows. */
int load_create_table(const load_ctx_t *ctx, dal_error_t *err);
/* --cleanup: drop it through dal. */
int load_drop_table(const load_ctx_t *ctx, dal_error_t *err);

/* ---------------------------------------------------------------- workers */

/* Longest physical statement of the workloads, with room to spare. */
#define LOAD_SQL_MAX 1024

struct load_run;

/* One client thread of a run. */
typedef struct load_worker {
    struct load_run *run;            /* borrowed */
    const load_ctx_t *ctx;           /* borrowed: the run's */
    uint64_t idx;
    pthread_t tid;
    uint64_t rng;
    uint64_t nkeys;                  /* this thread's keys: idx+1, idx+1+threads, ... */
    uint64_t quota;                  /* events to measure; UINT64_MAX: until stopped */
    struct load_hist *hist;          /* owned */
    uint64_t events, rows, affected; /* measured events and what they returned */
    uint64_t ev_rows, ev_affected;   /* of the event running */
    uint64_t last_end_ns;            /* end of the last measured event */
    uint64_t all_events, all_lat_ns; /* warmup included, for the progress line */
    _Atomic uint64_t live_events;    /* their copies, read by the main thread */
    _Atomic uint64_t live_lat_ns;
    int failed;
    char error[DAL_ERROR_MSG_MAX];   /* what failed, "" if nothing */
    /* backend state */
    dal_session_t *session;          /* dal, transactional workloads */
    MYSQL **conns;                   /* direct: one per node */
    MYSQL_STMT **stmts;              /* direct --server-prepared: per node, statement and
                                        table of the node, prepared at first use */
    uint64_t txn_node;               /* direct: node of the open transaction */
    unsigned char *touch;            /* direct --touch-lines: owned, 64 bytes a line */
    char name[32];                   /* the 'n' parameter */
    dal_value_t params[LOAD_MAX_PARAMS];
    char sql[LOAD_SQL_MAX];          /* direct: the physical statement */
} load_worker_t;

/* Keep the first error of w (printf-style); returns -1. */
int load_worker_error(load_worker_t *w, const char *fmt, ...) DAL_PRINTF(2, 3);

/* How one event's statements reach the servers.  Each returns 0, or -1
 * with the worker's error set. */
typedef struct load_backend {
    const char *mode;                /* "dal" or "direct" */
    int (*open)(load_worker_t *w);
    void (*close)(load_worker_t *w);
    int (*begin)(load_worker_t *w, uint64_t key);
    int (*end)(load_worker_t *w, int commit);
    int (*stmt)(load_worker_t *w, int st, uint64_t key);
} load_backend_t;

extern const load_backend_t load_dal_backend;      /* load_workloads.c */
extern const load_backend_t load_direct_backend;   /* load_direct.c */

/* ----------------------------------------------------------------- direct */

/*
 * For --direct and --compare: the connection settings of the --dbs nodes
 * of --group (asked of dal), then dal_explain's word that every table
 * position goes where --direct will send it.  ctx->direct is set (owned by
 * ctx) as soon as it exists, also on failure.
 */
int load_direct_init(load_ctx_t *ctx, dal_error_t *err);
void load_direct_free(load_direct_t *d);

/* -------------------------------------------------------------------- run */

/* The figures of one measured run. */
typedef struct load_result {
    const char *mode;               /* "dal" or "direct" */
    uint64_t events, statements, errors, rows, affected, elapsed_ns;
    uint64_t p50, p95, p99, p999, max;   /* latency, ns */
    double avg_ns;
    double events_per_s;
    double cpu_ns_per_event;        /* client process CPU while measuring */
    char error[DAL_ERROR_MSG_MAX];  /* first error, "" if none */
} load_result_t;

/* One measured run of the workload through be.  When it could not run at
 * all or a statement failed, res->error says why. */
void load_run_once(const load_ctx_t *ctx, const load_backend_t *be, load_result_t *res);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t load_now_ns(void);

/* ----------------------------------------------------------------- report */

/* The median of a figure over the --compare pairs, with a distribution-free
 * interval for it. */
typedef struct load_summary {
    double median;
    double low, high;    /* the interval */
    double confidence;   /* how often such an interval holds the true median */
} load_summary_t;

/* What the command did, for the output at its end. */
typedef struct load_report {
    int prepared;
    double prepare_s;
    load_result_t *results;     /* owned: one run, or --rounds pairs (dal, direct) */
    size_t nresults;
    load_summary_t ratio;       /* --compare: of dal / direct throughput */
    int cleaned;
} load_report_t;

/* The text summary of one run. */
void load_print_result(const load_ctx_t *ctx, const load_result_t *r);
/* A failed run says why on standard error, whatever the output format.
 * CLI_OK, or CLI_FAIL when r failed. */
int load_report_failure(const load_result_t *r);
/* --compare: the heading, one line per pair ([0] dal, [1] direct), and
 * the medians (which also fill rep->ratio). */
void load_print_compare_head(const load_ctx_t *ctx);
void load_print_pair(uint64_t round, const load_result_t *pair);
void load_compare_summary(const load_ctx_t *ctx, load_report_t *rep);
/* --json: one object for the whole command. */
void load_json_report(const load_ctx_t *ctx, const load_report_t *rep);

#endif /* DAL_TOOLS_LOAD_H */
