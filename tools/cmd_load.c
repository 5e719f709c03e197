/*
 * cmd_load.c -- `dal load`: a workload driver in the spirit of sysbench.
 *
 *     dal -c FILE load -- [OPTIONS] [WORKLOAD]
 *
 * N threads run one workload (point-select, insert, update, read-write,
 * scatter) against a sharded table for a time or a number of statements,
 * and the program prints throughput, latency percentiles and errors.
 *
 * The same workload runs either through libdal or, with --direct, through
 * plain libmysqlclient with one connection per thread per data node and the
 * physical table computed by the program itself -- what an application
 * without dal would do.  --compare alternates the two several times and
 * prints the throughput ratio of each pair and their median, because a
 * single absolute figure on a shared machine is not stable.
 *
 * The table layout (logical name, shard key, datasource group, table and
 * node counts) is not readable through the public API, so it is given as
 * options whose defaults match the demo; before a --direct run the program
 * asks dal_explain() where every table position goes and refuses to run if
 * the options disagree with the configuration.  --direct reads the
 * datasources' master URLs from the INI file itself (inih).
 *
 * Latency goes into a log-bucketed histogram per thread (HDR style: a fixed
 * array, no allocation per statement), merged when the run ends.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <ini.h>
#include <mysql.h>

/* ------------------------------------------------------------------ help */

const char cmd_load_synopsis[] = "load [--json] -- [OPTIONS] [WORKLOAD]";

const char cmd_load_details[] =
    "Runs WORKLOAD on a sharded table through dal (or, with --direct, through\n"
    "plain libmysqlclient) and prints throughput, latency and errors.  The\n"
    "options of load come after \"--\".\n"
    "Workloads:\n"
    "  point-select      SELECT one row by shard key and id\n"
    "  insert            INSERT one row (ids from dal's idgen where configured,\n"
    "                    else AUTO_INCREMENT)\n"
    "  update            UPDATE one row by shard key and id\n"
    "  read-write        a transaction on one shard key: SELECT a row, SELECT\n"
    "                    SUM(), UPDATE, DELETE and INSERT the row again\n"
    "  scatter           SELECT by id without the shard key: every physical table\n"
    "Run:\n"
    "  --threads N       client threads (default 1)\n"
    "  --duration T      measure for T (10s; 500ms, 2m; bare number: seconds)\n"
    "  --statements N    or until N events in all (transactions for read-write)\n"
    "  --warmup T        run T before measuring (default 2s)\n"
    "  --rows N          rows of the table: keys 1..N (default 10000)\n"
    "  --seed N          random seed (default 1)\n"
    "  --json            one JSON object at the end\n"
    "Schema:\n"
    "  --prepare         create the table through dal and insert --rows rows\n"
    "  --cleanup         drop the table through dal at the end\n"
    "  --batch N         rows per INSERT for --prepare (default 1000)\n"
    "Layout (must match the configuration; checked for --direct):\n"
    "  --table NAME      logical table (default wm_food)\n"
    "  --shard-key COL   its shard key (default wm_poi_id)\n"
    "  --group PREFIX    datasource group (default dbProductSku)\n"
    "  --tables N        table_shard_num (default 100)\n"
    "  --dbs N           db_shard_num (default 4)\n"
    "Comparison:\n"
    "  --direct          plain libmysqlclient instead of dal (mod layout)\n"
    "  --compare         alternate dal and direct runs, print the ratios\n"
    "  --rounds N        pairs of runs for --compare (default 5)\n"
    "  --prepared        dal runs each statement through a handle made once\n"
    "                    by dal_prepare (dal_query_prepared), not its text\n"
    "A progress line is printed every second when standard error is a\n"
    "terminal.  The exit status is 1 if any statement failed.  See docs/load.md.\n";

/* --------------------------------------------------------------- options */

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
    const char *table;
    const char *shard_key;
    const char *group;
    int prepare;
    int cleanup;
    int direct;
    int compare;
    int prepared;
    int json;
} load_opts_t;

typedef enum { LV_FLAG, LV_COUNT, LV_TIME, LV_NAME } load_val_t;

typedef struct load_option {
    const char *name;
    load_val_t type;
    size_t off;               /* where the value goes in load_opts_t */
    uint64_t min;             /* least accepted count or time */
} load_option_t;

#define LOPT(name, type, field, min) { name, type, offsetof(load_opts_t, field), min }

static const load_option_t load_options[] = {
    LOPT("threads", LV_COUNT, threads, 1),
    LOPT("duration", LV_TIME, duration_ms, 1),
    LOPT("statements", LV_COUNT, statements, 1),
    LOPT("warmup", LV_TIME, warmup_ms, 0),
    LOPT("rows", LV_COUNT, rows, 1),
    LOPT("seed", LV_COUNT, seed, 0),
    LOPT("batch", LV_COUNT, batch, 1),
    LOPT("tables", LV_COUNT, tables, 1),
    LOPT("dbs", LV_COUNT, dbs, 1),
    LOPT("rounds", LV_COUNT, rounds, 1),
    LOPT("table", LV_NAME, table, 0),
    LOPT("shard-key", LV_NAME, shard_key, 0),
    LOPT("group", LV_NAME, group, 0),
    LOPT("prepare", LV_FLAG, prepare, 0),
    LOPT("cleanup", LV_FLAG, cleanup, 0),
    LOPT("direct", LV_FLAG, direct, 0),
    LOPT("compare", LV_FLAG, compare, 0),
    LOPT("prepared", LV_FLAG, prepared, 0),
    LOPT("json", LV_FLAG, json, 0),
};

#define NLOAD_OPTIONS (sizeof load_options / sizeof load_options[0])

/* Limits that keep products and sums far from overflow. */
#define LOAD_MAX_COUNT ((uint64_t)1 << 40)
#define LOAD_MAX_THREADS 1024
#define LOAD_MAX_NAME 64

static void load_defaults(load_opts_t *o, const cli_t *cli)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->duration_ms = 10000;
    o->warmup_ms = 2000;
    o->rows = 10000;
    o->seed = 1;
    o->batch = 1000;
    o->tables = 100;
    o->dbs = 4;
    o->rounds = 5;
    o->table = "wm_food";
    o->shard_key = "wm_poi_id";
    o->group = "dbProductSku";
    o->json = cli->json;
}

static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > LOAD_MAX_COUNT)
        return -1;
    *out = v;
    return 0;
}

/* "10", "10s", "500ms", "2m", "1h": milliseconds.  Same units as the
 * durations of the configuration file. */
static int parse_time(const char *s, uint64_t *out)
{
    static const struct { const char *unit; uint64_t ms; } units[] = {
        { "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60000 }, { "h", 3600000 },
    };
    size_t digits = strspn(s, "0123456789"), i;
    uint64_t v;
    char num[24];

    if (digits == 0 || digits >= sizeof num)
        return -1;
    memcpy(num, s, digits);
    num[digits] = '\0';
    if (parse_count(num, &v) != 0)
        return -1;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(s + digits, units[i].unit) == 0) {
            *out = v * units[i].ms;
            return 0;
        }
    return -1;
}

/* Names are pasted into SQL unquoted, so only identifier characters pass. */
static int valid_name(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");

    return n > 0 && n <= LOAD_MAX_NAME && s[n] == '\0';
}

static int set_load_option(const cli_t *cli, load_opts_t *o, const load_option_t *opt,
                           const char *value)
{
    void *field = (char *)o + opt->off;
    uint64_t v = 0;

    switch (opt->type) {
    case LV_FLAG:
        *(int *)field = 1;
        return CLI_OK;
    case LV_NAME:
        if (!valid_name(value))
            return cli_usage(cli, "--%s: '%s' is not a name (letters, digits, '_', '$')",
                             opt->name, value);
        *(const char **)field = value;
        return CLI_OK;
    case LV_COUNT:
        if (parse_count(value, &v) != 0 || v < opt->min)
            return cli_usage(cli, "--%s: '%s' is not a whole number from %" PRIu64, opt->name,
                             value, opt->min);
        break;
    case LV_TIME:
        if (parse_time(value, &v) != 0 || v < opt->min)
            return cli_usage(cli, "--%s: '%s' is not a duration (10s, 500ms, 2m)%s", opt->name,
                             value, opt->min ? " above 0" : "");
        break;
    }
    *(uint64_t *)field = v;
    return CLI_OK;
}

static const load_option_t *find_load_option(const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < NLOAD_OPTIONS; i++)
        if (strlen(load_options[i].name) == len && strncmp(load_options[i].name, name, len) == 0)
            return &load_options[i];
    return NULL;
}

/* One "--name", "--name=value" or "--name value" at args[*i]. */
static int parse_load_option(const cli_t *cli, load_opts_t *o, size_t *i, unsigned *seen)
{
    const char *arg = cli->args[*i] + 2, *value = NULL;
    size_t len = strcspn(arg, "=");
    const load_option_t *opt = find_load_option(arg, len);

    if (cli->args[*i][1] != '-' || opt == NULL)
        return cli_usage(cli, "unknown load option '%s'", cli->args[*i]);
    if (arg[len] == '=')
        value = arg + len + 1;
    if (opt->type == LV_FLAG && value != NULL)
        return cli_usage(cli, "option '--%s' takes no value", opt->name);
    if (opt->type != LV_FLAG && value == NULL) {
        if (*i + 1 >= cli->nargs)
            return cli_usage(cli, "option '--%s' needs a value", opt->name);
        value = cli->args[++*i];
    }
    *seen |= 1u << (opt - load_options);
    return set_load_option(cli, o, opt, value);
}

static int option_seen(unsigned seen, const char *name)
{
    const load_option_t *opt = find_load_option(name, strlen(name));

    return (seen >> (opt - load_options)) & 1u;
}

/* Combinations that cannot mean anything. */
static int check_load_opts(const cli_t *cli, load_opts_t *o, unsigned seen)
{
    if (option_seen(seen, "duration") && option_seen(seen, "statements"))
        return cli_usage(cli, "give --duration or --statements, not both");
    if (option_seen(seen, "statements"))
        o->duration_ms = 0;
    if (o->direct && o->compare)
        return cli_usage(cli, "--compare already runs direct: give one of --direct, --compare");
    if (o->threads > LOAD_MAX_THREADS)
        return cli_usage(cli, "--threads: at most %d", LOAD_MAX_THREADS);
    if (o->rows < o->threads)
        return cli_usage(cli, "--rows must be at least --threads (each thread has its own keys)");
    if (o->tables % o->dbs != 0)
        return cli_usage(cli, "--tables must be a multiple of --dbs");
    if (o->workload == NULL && !o->prepare && !o->cleanup)
        return cli_usage(cli, "nothing to do: give a WORKLOAD, --prepare or --cleanup");
    if (o->workload == NULL && (o->direct || o->compare))
        return cli_usage(cli, "--direct and --compare need a WORKLOAD");
    return CLI_OK;
}

static int parse_load_args(const cli_t *cli, load_opts_t *o)
{
    unsigned seen = 0;
    size_t i;
    int rc;

    load_defaults(o, cli);
    for (i = 0; i < cli->nargs; i++) {
        if (cli->args[i][0] == '-') {
            rc = parse_load_option(cli, o, &i, &seen);
            if (rc != CLI_OK)
                return rc;
        } else if (o->workload == NULL) {
            o->workload = cli->args[i];
        } else {
            return cli_usage(cli, "unexpected argument '%s'", cli->args[i]);
        }
    }
    return check_load_opts(cli, o, seen);
}

/* ------------------------------------------------------------- histogram */

/*
 * Log-bucketed latency histogram, as HdrHistogram lays it out: values below
 * 2^SUB_BITS ns are exact, above that each power of two is split into
 * 2^SUB_BITS buckets, so a value is known to within 1/128 (0.8%).  Values
 * beyond 2^MAX_EXP ns (18 minutes) count in the last bucket.  A thread
 * records into its own histogram; histograms are added up at the end.
 */
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_MAX_EXP 40
#define HIST_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB)

typedef struct load_hist {
    uint64_t counts[HIST_BUCKETS];
    uint64_t total;
    uint64_t sum_ns;
    uint64_t max_ns;
} load_hist_t;

static size_t hist_index(uint64_t v)
{
    unsigned e;

    if (v < HIST_SUB)
        return (size_t)v;
    if (v >> (HIST_MAX_EXP + 1) != 0)
        v = ((uint64_t)1 << (HIST_MAX_EXP + 1)) - 1;
    e = 63u - (unsigned)__builtin_clzll(v);
    return (size_t)(e - HIST_SUB_BITS + 1) * HIST_SUB + (size_t)((v >> (e - HIST_SUB_BITS)) - HIST_SUB);
}

/* Largest value that lands in bucket i. */
static uint64_t hist_upper(size_t i)
{
    unsigned e;
    uint64_t m;

    if (i < HIST_SUB)
        return i;
    e = (unsigned)(i / HIST_SUB) + HIST_SUB_BITS - 1;
    m = i % HIST_SUB + HIST_SUB;
    return ((m + 1) << (e - HIST_SUB_BITS)) - 1;
}

static void hist_add(load_hist_t *h, uint64_t ns)
{
    h->counts[hist_index(ns)]++;
    h->total++;
    h->sum_ns += ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

static void hist_merge(load_hist_t *into, const load_hist_t *h)
{
    size_t i;

    for (i = 0; i < HIST_BUCKETS; i++)
        into->counts[i] += h->counts[i];
    into->total += h->total;
    into->sum_ns += h->sum_ns;
    if (h->max_ns > into->max_ns)
        into->max_ns = h->max_ns;
}

/* The value below which a fraction q of the samples lie (0 if none). */
static uint64_t hist_quantile(const load_hist_t *h, double q)
{
    uint64_t rank = (uint64_t)ceil(q * (double)h->total), seen = 0, v;
    size_t i;

    if (rank == 0)
        rank = 1;
    for (i = 0; i < HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            v = hist_upper(i);
            return v < h->max_ns ? v : h->max_ns;
        }
    }
    return h->max_ns;
}

/* ------------------------------------------------------------- workloads */

/*
 * Row ids.  Row k of --prepare (1 <= k <= --rows) has shard key k and id
 * ROW_ID_BASE + k.  Ids the server makes (AUTO_INCREMENT) start at
 * AUTO_ID_BASE, above every prepared row, and ids from dal's generators
 * (Leaf, snowflake) are positive signed 64-bit numbers, below ROW_ID_BASE.
 * So the three never meet, even when dal runs (ids from the generator) and
 * direct runs (AUTO_INCREMENT) insert into the same tables.
 */
#define ROW_ID_BASE ((uint64_t)1 << 63)
#define AUTO_ID_BASE "9223374235878031360"   /* 2^63 + 2^41 */

/*
 * Statement templates.  {T} is the table and {K} the shard key; through
 * dal {T} is the logical name, direct it becomes the physical table.  The
 * parameter letters say what each ? gets: k the key (the shard key value),
 * i the id of row k, n a name, p a price, s a stock figure.  Rows are found
 * by primary key, so writes lock single rows and the transactions of two
 * threads never block each other (their keys differ, see pick_key).
 */
enum {
    ST_POINT, ST_SUM, ST_INSERT, ST_INSERT_ID, ST_UPDATE, ST_DELETE, ST_SCATTER,
    ST_COUNT
};

typedef struct load_stmt_def {
    const char *sql;
    const char *params;
    int scatter;         /* no shard key: every physical table */
} load_stmt_def_t;

static const load_stmt_def_t stmt_defs[ST_COUNT] = {
    [ST_POINT] = { "SELECT id, name, price, stock FROM {T} WHERE {K} = ? AND id = ?", "ki", 0 },
    [ST_SUM] = { "SELECT COUNT(*), SUM(stock) FROM {T} WHERE {K} = ?", "k", 0 },
    /* no id: dal's generator where the table has one, else AUTO_INCREMENT */
    [ST_INSERT] = { "INSERT INTO {T} ({K}, name, price, stock) VALUES (?, ?, ?, ?)", "knps", 0 },
    [ST_INSERT_ID] = { "INSERT INTO {T} (id, {K}, name, price, stock) VALUES (?, ?, ?, ?, ?)",
                       "iknps", 0 },
    [ST_UPDATE] = { "UPDATE {T} SET stock = stock + 1 WHERE {K} = ? AND id = ?", "ki", 0 },
    [ST_DELETE] = { "DELETE FROM {T} WHERE {K} = ? AND id = ?", "ki", 0 },
    [ST_SCATTER] = { "SELECT id, name, price, stock FROM {T} WHERE id = ?", "i", 1 },
};

#define LOAD_MAX_PARAMS 5
#define LOAD_MAX_STEPS 5

static const char create_sql[] =
    "CREATE TABLE {T} (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, {K} BIGINT NOT NULL, "
    "name VARCHAR(64) NOT NULL, price DECIMAL(10,2) NOT NULL, stock INT NOT NULL, "
    "PRIMARY KEY (id), KEY ({K})) AUTO_INCREMENT = " AUTO_ID_BASE;
static const char drop_sql[] = "DROP TABLE IF EXISTS {T}";
static const char probe_sql[] = "SELECT id FROM {T} WHERE {K} = ?";

/* One event is one statement, or one transaction for read-write. */
typedef struct load_workload {
    const char *name;
    int txn;
    size_t nsteps;
    int steps[LOAD_MAX_STEPS];
} load_workload_t;

static const load_workload_t workloads[] = {
    { "point-select", 0, 1, { ST_POINT } },
    { "insert", 0, 1, { ST_INSERT } },
    { "update", 0, 1, { ST_UPDATE } },
    /* DELETE then INSERT of the same row keeps the table as it was */
    { "read-write", 1, 5, { ST_POINT, ST_SUM, ST_UPDATE, ST_DELETE, ST_INSERT_ID } },
    { "scatter", 0, 1, { ST_SCATTER } },
};

static const load_workload_t *find_workload(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (strcmp(workloads[i].name, name) == 0)
            return &workloads[i];
    return NULL;
}

/* tmpl with {K} replaced by key and {T} by table, or kept when table is
 * NULL (the direct path puts the physical name there per statement).
 * Owned by the caller; NULL when out of memory. */
static char *expand_sql(const char *tmpl, const char *table, const char *key)
{
    /* each 3-character {X} becomes at most LOAD_MAX_NAME characters */
    size_t len = strlen(tmpl), n = 0;
    char *out = malloc(len + len / 3 * LOAD_MAX_NAME + 1);
    const char *p;

    if (out == NULL)
        return NULL;
    for (p = tmpl; *p != '\0'; p++) {
        const char *sub = NULL;

        if (strncmp(p, "{K}", 3) == 0)
            sub = key;
        else if (strncmp(p, "{T}", 3) == 0 && table != NULL)
            sub = table;
        if (sub == NULL) {
            out[n++] = *p;
            continue;
        }
        n += (size_t)sprintf(out + n, "%s", sub);
        p += 2;
    }
    out[n] = '\0';
    return out;
}

/* ---------------------------------------------- direct: the data nodes */

/*
 * What --direct needs to connect to one data node, taken from the master
 * URL of [datasource GROUP<i>] in the INI file.  The file has already passed
 * dal_open(), so only what a valid file can contain is handled here.
 */
typedef struct direct_node {
    char name[LOAD_MAX_NAME + 24];   /* datasource name: group + index */
    char *url;                       /* owned; expanded, then cut up in place */
    const char *host, *user, *password, *db, *socket, *charset, *ssl_mode, *ssl_ca;
    unsigned int port;
} direct_node_t;

typedef struct ini_scan {
    FILE *f;
    int first_line;
    direct_node_t *nodes;            /* borrowed */
    size_t nnodes;
    direct_node_t *cur;              /* node of the current section, or NULL */
    char error[256];
} ini_scan_t;

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* "[datasource NAME]": the node called NAME, if it is one of ours.  inih
 * cuts long section names, so sections are followed here instead. */
static direct_node_t *section_node(ini_scan_t *sc, const char *s)
{
    size_t i, len;

    s = skip_blanks(s + 1);
    if (strncmp(s, "datasource", 10) != 0 || (s[10] != ' ' && s[10] != '\t'))
        return NULL;
    s = skip_blanks(s + 10);
    len = strcspn(s, " \t]");
    for (i = 0; i < sc->nnodes; i++)
        if (strlen(sc->nodes[i].name) == len && strncmp(sc->nodes[i].name, s, len) == 0)
            return &sc->nodes[i];
    return NULL;
}

/* inih's reader.  Lines are left-trimmed because dal's syntax gives
 * indentation no meaning, where inih would read a continuation line. */
static char *scan_line(char *str, int num, void *stream)
{
    ini_scan_t *sc = stream;
    const char *s;

    if (fgets(str, num, sc->f) == NULL)
        return NULL;
    s = str;
    if (sc->first_line && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;
    sc->first_line = 0;
    s = skip_blanks(s);
    if (*s == '[')
        sc->cur = section_node(sc, s);
    memmove(str, s, strlen(s) + 1);
    return str;
}

/* ${NAME} is the environment variable, $$ a '$', as in dal's files.
 * Owned by the caller, or NULL with sc->error set. */
static char *expand_env(ini_scan_t *sc, const char *v)
{
    size_t cap = strlen(v) + 1, n = 0, len;
    char *out = malloc(cap), *grown;
    const char *val;
    char name[128];

    while (out != NULL && *v != '\0') {
        len = v[0] == '$' && v[1] == '{' ? strcspn(v + 2, "}") : 0;
        if (len == 0 || len >= sizeof name || v[2 + len] != '}') {
            out[n++] = *v;
            v += v[0] == '$' && v[1] == '$' ? 2 : 1;
            continue;
        }
        memcpy(name, v + 2, len);
        name[len] = '\0';
        val = getenv(name);
        if (val == NULL) {
            snprintf(sc->error, sizeof sc->error, "environment variable '%.128s' is not set", name);
            free(out);
            return NULL;
        }
        cap += strlen(val);
        grown = realloc(out, cap);
        if (grown == NULL)
            break;
        out = grown;
        memcpy(out + n, val, strlen(val));
        n += strlen(val);
        v += len + 3;
    }
    if (out == NULL || *v != '\0') {
        snprintf(sc->error, sizeof sc->error, "out of memory");
        free(out);
        return NULL;
    }
    out[n] = '\0';
    return out;
}

static int scan_key(void *user, const char *section, const char *key, const char *value)
{
    ini_scan_t *sc = user;

    (void)section;
    if (sc->cur == NULL || strcmp(key, "master") != 0 || sc->cur->url != NULL)
        return 1;
    sc->cur->url = expand_env(sc, value);
    return sc->cur->url != NULL;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* %XX decoding in place; NULL stays NULL. */
static const char *pct_decode(char *s)
{
    char *r = s, *w = s;

    if (s == NULL)
        return NULL;
    while (*r != '\0') {
        if (r[0] == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0) {
            *w++ = (char)(hexval(r[1]) * 16 + hexval(r[2]));
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return s;
}

/* Cut s at the first of the characters in stop: returns what follows the
 * separator (NULL if none) and puts the separator itself in *sep. */
static char *cut(char *s, const char *stop, char *sep)
{
    char *p = s + strcspn(s, stop);

    *sep = *p;
    if (*p == '\0')
        return NULL;
    *p = '\0';
    return p + 1;
}

/* "OPTION=VALUE&..." after the '?'. */
static void url_options(direct_node_t *n, char *opts)
{
    char sep, *next, *val;

    for (; opts != NULL; opts = next) {
        next = cut(opts, "&", &sep);
        val = cut(opts, "=", &sep);
        pct_decode(val);
        if (strcmp(opts, "socket") == 0)
            n->socket = val;
        else if (strcmp(opts, "charset") == 0)
            n->charset = val;
        else if (strcmp(opts, "ssl_mode") == 0)
            n->ssl_mode = val;
        else if (strcmp(opts, "ssl_ca") == 0)
            n->ssl_ca = val;
        /* connect_timeout: the direct side uses its fixed timeout */
    }
}

/* mysql://USER:PASSWORD@HOST:PORT/DATABASE?OPTIONS, cut up in n->url.
 * The user part ends at the last '@', as dal reads it. */
static void url_parse(direct_node_t *n)
{
    char *s = strstr(n->url, "://"), *at, *rest, *port, sep;

    s = s != NULL ? s + 3 : n->url;
    at = strrchr(s, '@');
    n->host = "127.0.0.1";
    n->port = 3306;
    if (at != NULL) {
        *at = '\0';
        n->user = s;
        n->password = cut(s, ":", &sep);
        pct_decode((char *)n->user);
        pct_decode((char *)n->password);
        s = at + 1;
    }
    rest = cut(s, "/?", &sep);
    if (sep == '/') {
        char *opts = cut(rest, "?", &sep);

        n->db = pct_decode(rest);
        url_options(n, opts);
    } else {
        url_options(n, rest);
    }
    if (*s == '[') {                     /* [IPv6]:port */
        s++;
        port = cut(s, "]", &sep);
        port = port != NULL && *port == ':' ? port + 1 : NULL;
    } else {
        port = cut(s, ":", &sep);
    }
    if (*s != '\0')
        n->host = s;
    if (port != NULL)
        n->port = (unsigned int)strtoul(port, NULL, 10);
}

/* Fill every node from the file; an error names the file and the node. */
static int read_nodes(const char *path, direct_node_t *nodes, size_t nnodes, dal_error_t *err)
{
    char msg[DAL_ERROR_MSG_MAX] = "";
    ini_scan_t sc;
    size_t i;

    memset(&sc, 0, sizeof sc);
    sc.nodes = nodes;
    sc.nnodes = nnodes;
    sc.first_line = 1;
    sc.f = fopen(path, "r");
    if (sc.f == NULL) {
        snprintf(msg, sizeof msg, "%s: cannot open: %s", path, strerror(errno));
        return cli_set_error(err, DAL_EIO, msg);
    }
    if (ini_parse_stream(scan_line, &sc, scan_key, &sc) != 0)
        snprintf(msg, sizeof msg, "%s: %s", path, sc.error[0] ? sc.error : "cannot read it");
    for (i = 0; i < nnodes && msg[0] == '\0'; i++) {
        if (nodes[i].url == NULL)
            snprintf(msg, sizeof msg, "%s: no [datasource %s] with a master URL (--direct "
                     "needs one for each of the --dbs nodes of --group)", path, nodes[i].name);
        else
            url_parse(&nodes[i]);
    }
    fclose(sc.f);
    return msg[0] ? cli_set_error(err, DAL_ECONFIG, msg) : 0;
}

/* --------------------------------------------------------------- context */

/* Longest physical statement of the workloads, with room to spare. */
#define LOAD_SQL_MAX 1024

typedef struct load_ctx {
    const cli_t *cli;
    const load_opts_t *o;
    const load_workload_t *wl;      /* NULL: only --prepare / --cleanup */
    dal_t *dal;                     /* open in every mode: schema and layout check */
    char *dal_sql[ST_COUNT];        /* owned: logical statements */
    dal_prepared_t *dal_prep[ST_COUNT]; /* owned, --prepared only: dal_sql prepared */
    char *direct_sql[ST_COUNT];     /* owned: {T} left for the physical table */
    direct_node_t *nodes;           /* owned; o->dbs entries for --direct/--compare */
    uint64_t per_node;              /* physical tables per node */
    int progress;                   /* a line per second on standard error */
} load_ctx_t;

/* A key is a row: its shard key value and its id (see --prepare). */
static uint64_t table_of(const load_ctx_t *ctx, uint64_t key)
{
    return key % ctx->o->tables;
}

static uint64_t node_of_table(const load_ctx_t *ctx, uint64_t table)
{
    return table / ctx->per_node;
}

static void free_nodes(direct_node_t *nodes, size_t n)
{
    size_t i;

    for (i = 0; nodes != NULL && i < n; i++)
        free(nodes[i].url);
    free(nodes);
}

static void ctx_free(load_ctx_t *ctx)
{
    size_t i;

    for (i = 0; i < ST_COUNT; i++) {
        dal_prepared_free(ctx->dal_prep[i]);
        free(ctx->dal_sql[i]);
        free(ctx->direct_sql[i]);
    }
    free_nodes(ctx->nodes, ctx->o->dbs);
    dal_close(ctx->dal);
}

/*
 * --direct computes the physical table with the mod formula from --tables
 * and --dbs.  Ask dal where each position really goes, so that a mismatch
 * between the options and the configuration (or a strategy other than mod)
 * is an error instead of a benchmark against the wrong tables.
 */
static int check_position(load_ctx_t *ctx, const char *sql, uint64_t pos, dal_error_t *err)
{
    dal_value_t v = dal_uint(pos);
    const direct_node_t *want = &ctx->nodes[node_of_table(ctx, pos)];
    char table[2 * LOAD_MAX_NAME], msg[DAL_ERROR_MSG_MAX];
    const char *ds, *tb;
    dal_plan_t *plan = NULL;
    int rc = dal_explain(ctx->dal, NULL, sql, &v, 1, &plan, err);

    if (rc < 0)
        return rc;
    snprintf(table, sizeof table, "%s_%" PRIu64, ctx->o->table, pos);
    ds = dal_plan_count(plan) == 1 ? dal_plan_datasource(plan, 0) : "(several)";
    tb = dal_plan_count(plan) == 1 ? dal_plan_table(plan, 0) : NULL;
    if (strcmp(ds, want->name) != 0 || tb == NULL || strcmp(tb, table) != 0) {
        snprintf(msg, sizeof msg, "--direct would send %s = %" PRIu64 " to %s.%s but dal "
                 "routes it to %s.%s: set --table, --shard-key, --group, --tables and --dbs "
                 "as in the configuration (the mod strategy)", ctx->o->shard_key, pos,
                 want->name, table, ds, tb ? tb : "?");
        rc = cli_set_error(err, DAL_ECONFIG, msg);
    }
    dal_plan_free(plan);
    return rc;
}

static int check_layout(load_ctx_t *ctx, dal_error_t *err)
{
    char *sql = expand_sql(probe_sql, ctx->o->table, ctx->o->shard_key);
    uint64_t pos;
    int rc = 0;

    if (sql == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    for (pos = 0; pos < ctx->o->tables && rc == 0; pos++)
        rc = check_position(ctx, sql, pos, err);
    free(sql);
    return rc;
}

static int ctx_direct(load_ctx_t *ctx, dal_error_t *err)
{
    const load_opts_t *o = ctx->o;
    uint64_t i;

    ctx->nodes = calloc(o->dbs, sizeof *ctx->nodes);
    if (ctx->nodes == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    for (i = 0; i < o->dbs; i++)
        snprintf(ctx->nodes[i].name, sizeof ctx->nodes[i].name, "%s%" PRIu64, o->group, i);
    if (read_nodes(ctx->cli->config, ctx->nodes, o->dbs, err) < 0)
        return err->code;
    return check_layout(ctx, err);
}

static int ctx_init(load_ctx_t *ctx, const cli_t *cli, const load_opts_t *o)
{
    dal_error_t err = { 0 };
    size_t i;
    int rc;

    memset(ctx, 0, sizeof *ctx);
    ctx->cli = cli;
    ctx->o = o;
    ctx->per_node = o->tables / o->dbs;
    ctx->progress = isatty(STDERR_FILENO) && !o->compare;
    if (o->workload != NULL && (ctx->wl = find_workload(o->workload)) == NULL)
        return cli_usage(cli, "unknown workload '%s' (point-select, insert, update, "
                              "read-write, scatter)", o->workload);
    rc = cli_open(cli, &ctx->dal);
    if (rc != CLI_OK)
        return rc;
    for (i = 0; i < ST_COUNT; i++) {
        ctx->dal_sql[i] = expand_sql(stmt_defs[i].sql, o->table, o->shard_key);
        ctx->direct_sql[i] = expand_sql(stmt_defs[i].sql, NULL, o->shard_key);
        if (ctx->dal_sql[i] == NULL || ctx->direct_sql[i] == NULL) {
            cli_errorf("out of memory");
            return CLI_FAIL;
        }
        if (o->prepared && dal_prepare(ctx->dal, ctx->dal_sql[i], &ctx->dal_prep[i], &err) < 0)
            return cli_fail(&err);
    }
    if ((o->direct || o->compare) && ctx_direct(ctx, &err) < 0)
        return cli_fail(&err);
    return CLI_OK;
}

/* --------------------------------------------------------------- workers */

enum { PHASE_WARMUP, PHASE_MEASURE, PHASE_STOP };

struct load_run;

typedef struct load_worker {
    struct load_run *run;            /* borrowed */
    uint64_t idx;
    pthread_t tid;
    uint64_t rng;
    uint64_t nkeys;                  /* this thread's keys: idx+1, idx+1+threads, ... */
    uint64_t quota;                  /* events to measure; UINT64_MAX: until stopped */
    load_hist_t *hist;               /* owned */
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
    uint64_t txn_node;               /* direct: node of the open transaction */
    char name[32];                   /* the 'n' parameter */
    dal_value_t params[LOAD_MAX_PARAMS];
    char sql[LOAD_SQL_MAX];          /* direct: the physical statement */
} load_worker_t;

/* How one event's statements reach the servers. */
typedef struct load_backend {
    const char *mode;
    int (*open)(load_worker_t *w);
    void (*close)(load_worker_t *w);
    int (*begin)(load_worker_t *w, uint64_t key);
    int (*end)(load_worker_t *w, int commit);
    int (*stmt)(load_worker_t *w, int st, uint64_t key);
} load_backend_t;

typedef struct load_run {
    const load_ctx_t *ctx;           /* borrowed */
    const load_backend_t *be;
    _Atomic int phase;
    uint64_t measure_start_ns;       /* set before phase becomes MEASURE */
    uint64_t cpu_start_ns;           /* the process's CPU time then */
    pthread_mutex_t mu;              /* guards ready, go, finished */
    pthread_cond_t cv;
    size_t ready, finished;
    int go;
    load_worker_t *workers;          /* owned */
    size_t nworkers;
} load_run_t;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the whole process, all threads: on a busy machine the
 * client's own cost per statement is steadier than its throughput. */
static uint64_t cpu_ns(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* splitmix64: fast, and good enough to spread keys evenly. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Each thread has its own keys, so transactions of two threads never wait
 * for each other's row locks: the figures measure the client path, not
 * lock contention. */
static uint64_t pick_key(load_worker_t *w)
{
    return 1 + w->idx + rng_next(&w->rng) % w->nkeys * w->run->nworkers;
}

static int worker_error(load_worker_t *w, const char *fmt, ...) DAL_PRINTF(2, 3);

static int worker_error(load_worker_t *w, const char *fmt, ...)
{
    va_list ap;

    if (w->error[0] == '\0') {
        va_start(ap, fmt);
        vsnprintf(w->error, sizeof w->error, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The values of statement st's placeholders for key.  name is storage for
 * the string value. */
static void set_params(dal_value_t *out, char *name, size_t namecap, int st, uint64_t key)
{
    const char *p;

    for (p = stmt_defs[st].params; *p != '\0'; p++, out++) {
        switch (*p) {
        case 'k': *out = dal_uint(key); break;
        case 'i': *out = dal_uint(ROW_ID_BASE + key); break;
        case 'p': *out = dal_uint(key % 1000); break;
        case 's': *out = dal_uint(key % 100); break;
        default:
            snprintf(name, namecap, "load_%" PRIu64, key);
            *out = dal_str(name);
            break;
        }
    }
}

static void fill_params(load_worker_t *w, int st, uint64_t key)
{
    set_params(w->params, w->name, sizeof w->name, st, key);
}

/* ------------------------------------------------------------ through dal */

static int dal_worker_open(load_worker_t *w)
{
    dal_error_t err = { 0 };

    if (w->run->ctx->wl->txn && dal_session_open(w->run->ctx->dal, &w->session, &err) < 0)
        return worker_error(w, "%s", err.message);
    return 0;
}

static void dal_worker_close(load_worker_t *w)
{
    dal_session_close(w->session);
    w->session = NULL;
}

static int dal_worker_begin(load_worker_t *w, uint64_t key)
{
    dal_error_t err = { 0 };

    (void)key;   /* the first statement decides the node */
    return dal_begin(w->session, &err) < 0 ? worker_error(w, "BEGIN: %s", err.message) : 0;
}

static int dal_worker_end(load_worker_t *w, int commit)
{
    dal_error_t err = { 0 };
    int rc = commit ? dal_commit(w->session, &err) : dal_rollback(w->session, &err);

    return rc < 0 ? worker_error(w, "%s: %s", commit ? "COMMIT" : "ROLLBACK", err.message) : 0;
}

/* Read every value, as an application would. */
static int dal_consume(load_worker_t *w, dal_result_t *r, dal_error_t *err)
{
    size_t i, ncols = dal_result_column_count(r), len;
    int rc;

    while ((rc = dal_result_next(r, err)) > 0) {
        for (i = 0; i < ncols; i++)
            (void)dal_result_text(r, i, &len);
        w->ev_rows++;
    }
    w->ev_affected += dal_result_affected_rows(r);
    return rc;
}

static int dal_worker_stmt(load_worker_t *w, int st, uint64_t key)
{
    const load_ctx_t *ctx = w->run->ctx;
    const char *sql = ctx->dal_sql[st];
    const dal_prepared_t *prep = ctx->dal_prep[st];
    size_t n = strlen(stmt_defs[st].params);
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc;

    /* dal fills err when it fails; clearing all 500 bytes for every
     * statement would be a cost the direct side does not pay */
    err.message[0] = '\0';
    fill_params(w, st, key);
    if (prep != NULL)
        rc = w->session ? dal_session_query_prepared(w->session, NULL, prep, w->params, n, &r, &err)
                        : dal_query_prepared(ctx->dal, NULL, prep, w->params, n, &r, &err);
    else
        rc = w->session ? dal_session_query(w->session, NULL, sql, w->params, n, &r, &err)
                        : dal_query(ctx->dal, NULL, sql, w->params, n, &r, &err);
    if (rc == 0)
        rc = dal_consume(w, r, &err);
    dal_result_free(r);
    return rc < 0 ? worker_error(w, "%s", err.message) : 0;
}

static const load_backend_t dal_backend = {
    "dal", dal_worker_open, dal_worker_close, dal_worker_begin, dal_worker_end, dal_worker_stmt
};

/* ------------------------------------------------------ plain libmysqlclient */

typedef struct sql_out {
    char *p, *end;
} sql_out_t;

static int put(sql_out_t *o, const char *s, size_t n)
{
    if ((size_t)(o->end - o->p) < n)
        return -1;
    memcpy(o->p, s, n);
    o->p += n;
    return 0;
}

static int put_u64(sql_out_t *o, uint64_t v)
{
    char digits[24], *d = digits + sizeof digits;

    do {
        *--d = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return put(o, d, (size_t)(digits + sizeof digits - d));
}

/* A value as an SQL literal: numbers as they are, strings quoted and
 * escaped for this connection. */
static int put_value(sql_out_t *o, MYSQL *m, const dal_value_t *v)
{
    size_t n;

    switch (v->type) {
    case DAL_TYPE_UINT:
        return put_u64(o, v->v.u);
    case DAL_TYPE_INT:
        if (v->v.i < 0 && put(o, "-", 1) != 0)
            return -1;
        return put_u64(o, v->v.i < 0 ? 0 - (uint64_t)v->v.i : (uint64_t)v->v.i);
    case DAL_TYPE_STRING:
        n = v->v.s.len;
        if ((size_t)(o->end - o->p) < 2 * n + 3)
            return -1;
        *o->p++ = '\'';
        o->p += mysql_real_escape_string(m, o->p, v->v.s.ptr, (unsigned long)n);
        *o->p++ = '\'';
        return 0;
    default:
        return -1;   /* the workloads use no other types */
    }
}

/* Statement st for physical table pos into w->sql, as an application
 * without dal would write it: "{T}" becomes "<table>_<pos>", each ? the
 * next parameter.  Returns the length, or 0 if it does not fit. */
static size_t build_sql(load_worker_t *w, int st, uint64_t pos, MYSQL *m)
{
    const load_ctx_t *ctx = w->run->ctx;
    const char *s = ctx->direct_sql[st];
    sql_out_t o = { w->sql, w->sql + sizeof w->sql - 1 };
    size_t i = 0, run;
    int rc = 0;

    while (*s != '\0' && rc == 0) {
        run = strcspn(s, "{?");
        rc = put(&o, s, run);
        s += run;
        if (rc != 0 || *s == '\0')
            break;
        if (*s == '?') {
            rc = put_value(&o, m, &w->params[i++]);
            s++;
            continue;
        }
        /* only {T} is left in the template */
        rc = put(&o, ctx->o->table, strlen(ctx->o->table)) || put(&o, "_", 1) ||
             put_u64(&o, pos);
        s += 3;
    }
    *o.p = '\0';
    return rc == 0 ? (size_t)(o.p - w->sql) : 0;
}

static int direct_error(load_worker_t *w, uint64_t node, const char *what)
{
    MYSQL *m = w->conns[node];

    return worker_error(w, "direct: datasource %s: %s: error %u (%s): %s",
                        w->run->ctx->nodes[node].name, what, mysql_errno(m), mysql_sqlstate(m),
                        mysql_error(m));
}

/* The result of the statement just sent on node, read in full. */
static int direct_consume(load_worker_t *w, uint64_t node)
{
    MYSQL *m = w->conns[node];
    MYSQL_RES *res;

    if (mysql_field_count(m) == 0) {
        w->ev_affected += mysql_affected_rows(m);
        return 0;
    }
    res = mysql_store_result(m);
    if (res == NULL)
        return direct_error(w, node, "reading the result");
    while (mysql_fetch_row(res) != NULL) {
        (void)mysql_fetch_lengths(res);
        w->ev_rows++;
    }
    mysql_free_result(res);
    return 0;
}

static int direct_query(load_worker_t *w, uint64_t node, const char *sql, size_t len)
{
    if (mysql_real_query(w->conns[node], sql, (unsigned long)len) != 0)
        return direct_error(w, node, sql);
    return direct_consume(w, node);
}

static int direct_connect(load_worker_t *w, uint64_t node)
{
    const direct_node_t *n = &w->run->ctx->nodes[node];
    unsigned int timeout = 5;
    my_bool off = 0, on = 1;
    MYSQL *m = mysql_init(NULL);

    w->conns[node] = m;
    if (m == NULL)
        return worker_error(w, "direct: out of memory");
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, n->charset ? n->charset : "utf8mb4");
    mysql_options(m, MYSQL_OPT_RECONNECT, &off);
    if (n->ssl_mode != NULL && strcmp(n->ssl_mode, "DISABLED") != 0) {
        if (n->ssl_ca != NULL)
            mysql_options(m, MYSQL_OPT_SSL_CA, n->ssl_ca);
        if (strcmp(n->ssl_mode, "PREFERRED") != 0)
            mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
        if (strncmp(n->ssl_mode, "VERIFY", 6) == 0)
            mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    }
    if (mysql_real_connect(m, n->socket ? "localhost" : n->host, n->user, n->password, n->db,
                           n->socket ? 0 : n->port, n->socket, 0) == NULL)
        return direct_error(w, node, "connect");
    return 0;
}

static int direct_worker_open(load_worker_t *w)
{
    uint64_t i, n = w->run->ctx->o->dbs;

    w->conns = calloc(n, sizeof *w->conns);
    if (w->conns == NULL)
        return worker_error(w, "direct: out of memory");
    for (i = 0; i < n; i++)
        if (direct_connect(w, i) != 0)
            return -1;
    return 0;
}

static void direct_worker_close(load_worker_t *w)
{
    uint64_t i;

    for (i = 0; w->conns != NULL && i < w->run->ctx->o->dbs; i++)
        mysql_close(w->conns[i]);
    free(w->conns);
    w->conns = NULL;
}

static int direct_worker_begin(load_worker_t *w, uint64_t key)
{
    static const char start[] = "START TRANSACTION";

    w->txn_node = node_of_table(w->run->ctx, table_of(w->run->ctx, key));
    return direct_query(w, w->txn_node, start, sizeof start - 1);
}

static int direct_worker_end(load_worker_t *w, int commit)
{
    const char *word = commit ? "COMMIT" : "ROLLBACK";

    return direct_query(w, w->txn_node, word, strlen(word));
}

/* Statement st on every physical table.  A connection carries one
 * statement at a time, so the tables go in rounds: in each, one statement
 * is sent to every node before the results are read, and the nodes work
 * in parallel. */
static int direct_scatter(load_worker_t *w, int st)
{
    const load_ctx_t *ctx = w->run->ctx;
    uint64_t r, node;
    size_t len;

    for (r = 0; r < ctx->per_node; r++) {
        for (node = 0; node < ctx->o->dbs; node++) {
            len = build_sql(w, st, node * ctx->per_node + r, w->conns[node]);
            if (len == 0)
                return worker_error(w, "direct: statement too long");
            if (mysql_send_query(w->conns[node], w->sql, (unsigned long)len) != 0)
                return direct_error(w, node, w->sql);
        }
        for (node = 0; node < ctx->o->dbs; node++) {
            if (mysql_read_query_result(w->conns[node]) != 0)
                return direct_error(w, node, "scatter");
            if (direct_consume(w, node) != 0)
                return -1;
        }
    }
    return 0;
}

static int direct_worker_stmt(load_worker_t *w, int st, uint64_t key)
{
    const load_ctx_t *ctx = w->run->ctx;
    uint64_t pos = table_of(ctx, key), node = node_of_table(ctx, pos);
    size_t len;

    fill_params(w, st, key);
    if (stmt_defs[st].scatter)
        return direct_scatter(w, st);
    len = build_sql(w, st, pos, w->conns[node]);
    if (len == 0)
        return worker_error(w, "direct: statement too long");
    return direct_query(w, node, w->sql, len);
}

static const load_backend_t direct_backend = {
    "direct", direct_worker_open, direct_worker_close, direct_worker_begin, direct_worker_end,
    direct_worker_stmt
};

/* ------------------------------------------------------------------- runs */

typedef struct load_result {
    const char *mode;               /* "dal" or "direct" */
    uint64_t events, statements, errors, rows, affected, elapsed_ns;
    uint64_t p50, p95, p99, p999, max;   /* latency, ns */
    double avg_ns;
    double events_per_s;
    double cpu_ns_per_event;        /* client process CPU while measuring */
    char error[DAL_ERROR_MSG_MAX];  /* first error, "" if none */
} load_result_t;

/* One event: a statement, or the statements of a transaction. */
static int run_event(load_worker_t *w, uint64_t key)
{
    const load_backend_t *be = w->run->be;
    const load_workload_t *wl = w->run->ctx->wl;
    size_t i;
    int rc = 0;

    if (wl->txn && be->begin(w, key) != 0)
        return -1;
    for (i = 0; i < wl->nsteps && rc == 0; i++)
        rc = be->stmt(w, wl->steps[i], key);
    if (wl->txn && be->end(w, rc == 0) != 0)
        rc = -1;
    return rc;
}

static void record(load_worker_t *w, uint64_t t0, uint64_t t1)
{
    hist_add(w->hist, t1 - t0);
    w->events++;
    w->rows += w->ev_rows;
    w->affected += w->ev_affected;
    w->last_end_ns = t1;
}

/* Single writer: relaxed stores are enough for the progress line. */
static void publish(load_worker_t *w, uint64_t t0, uint64_t t1)
{
    w->all_events++;
    w->all_lat_ns += t1 - t0;
    atomic_store_explicit(&w->live_events, w->all_events, memory_order_relaxed);
    atomic_store_explicit(&w->live_lat_ns, w->all_lat_ns, memory_order_relaxed);
}

/* The run stops at the first error: figures with failures in them would
 * not measure what they claim to. */
static void worker_loop(load_worker_t *w)
{
    load_run_t *run = w->run;
    uint64_t t0, t1, key;
    int phase;

    while (w->events < w->quota) {
        phase = atomic_load_explicit(&run->phase, memory_order_acquire);
        if (phase == PHASE_STOP)
            break;
        key = pick_key(w);
        w->ev_rows = w->ev_affected = 0;
        t0 = now_ns();
        if (run_event(w, key) != 0) {
            w->failed = 1;
            atomic_store(&run->phase, PHASE_STOP);
            break;
        }
        t1 = now_ns();
        if (phase == PHASE_MEASURE)
            record(w, t0, t1);
        publish(w, t0, t1);
    }
}

static void *worker_main(void *arg)
{
    load_worker_t *w = arg;
    load_run_t *run = w->run;

    if (run->be->open(w) != 0) {
        w->failed = 1;
        atomic_store(&run->phase, PHASE_STOP);
    }
    pthread_mutex_lock(&run->mu);
    run->ready++;
    pthread_cond_broadcast(&run->cv);
    while (!run->go)
        pthread_cond_wait(&run->cv, &run->mu);
    pthread_mutex_unlock(&run->mu);
    if (!w->failed)
        worker_loop(w);
    run->be->close(w);
    pthread_mutex_lock(&run->mu);
    run->finished++;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

/* Wait until time `until` (CLOCK_MONOTONIC ns), every worker has finished
 * or the run was stopped.  Returns non-zero in the last two cases. */
static int run_wait(load_run_t *run, uint64_t until)
{
    struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
    int over;

    pthread_mutex_lock(&run->mu);
    for (;;) {
        over = run->finished == run->nworkers ||
               atomic_load(&run->phase) == PHASE_STOP;
        if (over || now_ns() >= until)
            break;
        pthread_cond_timedwait(&run->cv, &run->mu, &ts);
    }
    pthread_mutex_unlock(&run->mu);
    return over;
}

/* Warmup is over: from now on, events count.  A worker may have stopped
 * the run meanwhile; that must stay. */
static void start_measuring(load_run_t *run, uint64_t now)
{
    int warm = PHASE_WARMUP;

    run->measure_start_ns = now;
    run->cpu_start_ns = cpu_ns();
    atomic_compare_exchange_strong(&run->phase, &warm, PHASE_MEASURE);
}

static void progress_line(const load_run_t *run, uint64_t secs, uint64_t *prev_ev,
                          uint64_t *prev_lat)
{
    uint64_t ev = 0, lat = 0, d;
    size_t i;

    for (i = 0; i < run->nworkers; i++) {
        ev += atomic_load_explicit(&run->workers[i].live_events, memory_order_relaxed);
        lat += atomic_load_explicit(&run->workers[i].live_lat_ns, memory_order_relaxed);
    }
    d = ev - *prev_ev;
    fprintf(stderr, "[%4" PRIu64 "s] %s: %" PRIu64 " %s/s, avg %.1f us%s\n", secs,
            run->be->mode, d, run->ctx->wl->txn ? "tx" : "stmt",
            d ? (double)(lat - *prev_lat) / (double)d / 1e3 : 0.0,
            atomic_load(&run->phase) == PHASE_WARMUP ? " (warmup)" : "");
    *prev_ev = ev;
    *prev_lat = lat;
}

/* The main thread's part: switch from warmup to measuring, end the run
 * after --duration, print progress every second. */
static void drive(load_run_t *run)
{
    const load_opts_t *o = run->ctx->o;
    uint64_t start = now_ns(), warm_end = start + o->warmup_ms * 1000000u, end = UINT64_MAX;
    uint64_t tick = start + 1000000000u, wake, now, prev_ev = 0, prev_lat = 0;

    for (;;) {
        if (atomic_load(&run->phase) == PHASE_WARMUP && (now = now_ns()) >= warm_end) {
            start_measuring(run, now);
            if (o->duration_ms > 0)
                end = now + o->duration_ms * 1000000u;
        }
        wake = atomic_load(&run->phase) == PHASE_WARMUP ? warm_end : end;
        if (run->ctx->progress && tick < wake)
            wake = tick;
        if (run_wait(run, wake))
            break;
        now = now_ns();
        if (now >= end)
            break;
        if (run->ctx->progress && now >= tick) {
            progress_line(run, (tick - start) / 1000000000u, &prev_ev, &prev_lat);
            tick += 1000000000u;
        }
    }
    atomic_store(&run->phase, PHASE_STOP);
}

static int run_init(load_run_t *run, const load_ctx_t *ctx, const load_backend_t *be)
{
    const load_opts_t *o = ctx->o;
    pthread_condattr_t ca;
    uint64_t i, n = o->threads;

    run->ctx = ctx;
    run->be = be;
    atomic_init(&run->phase, PHASE_WARMUP);
    /* the timed waits count in CLOCK_MONOTONIC, as now_ns() */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&run->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&run->mu, NULL);
    run->workers = calloc(n, sizeof *run->workers);
    if (run->workers == NULL)
        return -1;
    run->nworkers = n;
    for (i = 0; i < n; i++) {
        load_worker_t *w = &run->workers[i];

        w->run = run;
        w->idx = i;
        w->rng = o->seed * 1000003u + i;   /* the same keys in dal and direct runs */
        w->nkeys = (o->rows - i + n - 1) / n;
        w->quota = o->statements ? o->statements / n + (i < o->statements % n) : UINT64_MAX;
        w->hist = calloc(1, sizeof *w->hist);
        if (w->hist == NULL)
            return -1;
    }
    return 0;
}

static void run_free(load_run_t *run)
{
    size_t i;

    for (i = 0; run->workers != NULL && i < run->nworkers; i++)
        free(run->workers[i].hist);
    free(run->workers);
    pthread_cond_destroy(&run->cv);
    pthread_mutex_destroy(&run->mu);
}

/* Start the workers, let them go together once all are connected, drive
 * the run and wait for them.  Returns how many threads were started. */
static size_t run_threads(load_run_t *run)
{
    size_t started;

    for (started = 0; started < run->nworkers; started++)
        if (pthread_create(&run->workers[started].tid, NULL, worker_main,
                           &run->workers[started]) != 0)
            break;
    pthread_mutex_lock(&run->mu);
    if (started < run->nworkers)
        atomic_store(&run->phase, PHASE_STOP);
    while (run->ready < started)
        pthread_cond_wait(&run->cv, &run->mu);
    run->go = 1;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
    if (atomic_load(&run->phase) != PHASE_STOP)
        drive(run);
    return started;
}

static void collect(const load_run_t *run, load_hist_t *all, load_result_t *res)
{
    uint64_t last = 0;
    size_t i;

    for (i = 0; i < run->nworkers; i++) {
        const load_worker_t *w = &run->workers[i];

        hist_merge(all, w->hist);
        res->events += w->events;
        res->rows += w->rows;
        res->affected += w->affected;
        res->errors += (uint64_t)w->failed;
        if (w->last_end_ns > last)
            last = w->last_end_ns;
        if (res->error[0] == '\0' && w->error[0] != '\0')
            snprintf(res->error, sizeof res->error, "%s", w->error);
    }
    res->statements = res->events * run->ctx->wl->nsteps;
    if (res->events > 0)
        res->cpu_ns_per_event = (double)(cpu_ns() - run->cpu_start_ns) / (double)res->events;
    res->elapsed_ns = res->events ? last - run->measure_start_ns : 0;
    res->events_per_s = res->elapsed_ns ? (double)res->events * 1e9 / (double)res->elapsed_ns : 0;
    res->avg_ns = all->total ? (double)all->sum_ns / (double)all->total : 0;
    res->p50 = hist_quantile(all, 0.50);
    res->p95 = hist_quantile(all, 0.95);
    res->p99 = hist_quantile(all, 0.99);
    res->p999 = hist_quantile(all, 0.999);
    res->max = all->max_ns;
}

/* One measured run of the workload in one mode.  When it could not run at
 * all or a statement failed, res->error says why. */
static void run_once(const load_ctx_t *ctx, const load_backend_t *be, load_result_t *res)
{
    load_hist_t *all = calloc(1, sizeof *all);
    load_run_t run;
    size_t i, started = 0;

    memset(res, 0, sizeof *res);
    memset(&run, 0, sizeof run);
    res->mode = be->mode;
    if (run_init(&run, ctx, be) != 0 || all == NULL) {
        snprintf(res->error, sizeof res->error, "out of memory");
        goto out;
    }
    started = run_threads(&run);
    for (i = 0; i < started; i++)
        pthread_join(run.workers[i].tid, NULL);
    collect(&run, all, res);
    if (started < run.nworkers)
        snprintf(res->error, sizeof res->error, "cannot start thread %zu", started + 1);
    /* a run without a single measured event has no throughput to compare */
    if (res->error[0] == '\0' && res->events == 0)
        snprintf(res->error, sizeof res->error, "no event started and finished while measuring: "
                 "the servers stalled, or one event takes longer than --duration");
out:
    run_free(&run);
    free(all);
}

/* ---------------------------------------------------------------- output */

/*
 * json.h has no writer for numbers with a fraction.  A value that follows
 * a key needs no separator, so it is written here and the writer told
 * that the key has its value (json_t's after_key).  Non-finite numbers
 * have no JSON form: null.
 */
static void json_key_double(json_t *j, const char *key, double v, int decimals)
{
    json_key(j, key);
    if (isfinite(v))
        fprintf(j->out, "%.*f", decimals, v);
    else
        fputs("null", j->out);
    j->after_key = 0;
}

static void json_key_uint(json_t *j, const char *key, uint64_t v)
{
    json_key(j, key);
    json_uint(j, v);
}

/* The fields of one run, inside an open object. */
static void json_result(json_t *j, const load_result_t *r)
{
    json_key(j, "mode");
    json_string(j, r->mode);
    json_key_uint(j, "events", r->events);
    json_key_uint(j, "statements", r->statements);
    json_key_uint(j, "errors", r->errors);
    json_key_uint(j, "rows", r->rows);
    json_key_uint(j, "affected_rows", r->affected);
    json_key_double(j, "seconds", (double)r->elapsed_ns / 1e9, 3);
    json_key_double(j, "events_per_sec", r->events_per_s, 1);
    json_key_double(j, "statements_per_sec",
                    r->events_per_s * (double)(r->events ? r->statements / r->events : 0), 1);
    json_key_double(j, "client_cpu_us_per_event", r->cpu_ns_per_event / 1e3, 2);
    json_key(j, "latency_us");
    json_object_begin(j);
    json_key_double(j, "avg", r->avg_ns / 1e3, 1);
    json_key_double(j, "p50", (double)r->p50 / 1e3, 1);
    json_key_double(j, "p95", (double)r->p95 / 1e3, 1);
    json_key_double(j, "p99", (double)r->p99 / 1e3, 1);
    json_key_double(j, "p999", (double)r->p999 / 1e3, 1);
    json_key_double(j, "max", (double)r->max / 1e3, 1);
    json_object_end(j);
    json_key(j, "error");
    json_string(j, r->error[0] ? r->error : NULL);
}

/* What the run was, in front of its figures. */
static void json_setup(json_t *j, const load_ctx_t *ctx)
{
    const load_opts_t *o = ctx->o;

    json_key(j, "workload");
    json_string(j, ctx->wl->name);
    json_key_uint(j, "threads", o->threads);
    json_key(j, "transactions");
    json_bool(j, ctx->wl->txn);
    json_key(j, "table");
    json_string(j, o->table);
    json_key_uint(j, "warmup_ms", o->warmup_ms);
    json_key(j, "prepared");
    json_bool(j, o->prepared);
}

static void print_result(const load_ctx_t *ctx, const load_result_t *r)
{
    const load_workload_t *wl = ctx->wl;

    printf("%s through %s: %" PRIu64 " thread%s, %.2f s measured, table %s\n", wl->name,
           strcmp(r->mode, "dal") != 0 ? "plain libmysqlclient"
           : ctx->o->prepared          ? "dal (prepared statements)"
                                       : "dal",
           ctx->o->threads,
           ctx->o->threads == 1 ? "" : "s", (double)r->elapsed_ns / 1e9, ctx->o->table);
    if (wl->txn)
        printf("  each          START TRANSACTION, %zu statements, COMMIT\n", wl->nsteps);
    printf("  %-13s %" PRIu64 " (%.1f/s)\n", wl->txn ? "transactions" : "statements",
           r->events, r->events_per_s);
    if (wl->txn)
        printf("  %-13s %" PRIu64 " (%.1f/s)\n", "statements", r->statements,
               r->events_per_s * (double)wl->nsteps);
    printf("  rows          %" PRIu64 " read, %" PRIu64 " affected\n", r->rows, r->affected);
    printf("  latency (us)  avg %.1f  p50 %.1f  p95 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
           r->avg_ns / 1e3, (double)r->p50 / 1e3, (double)r->p95 / 1e3, (double)r->p99 / 1e3,
           (double)r->p999 / 1e3, (double)r->max / 1e3);
    printf("  client CPU    %.2f us per %s\n", r->cpu_ns_per_event / 1e3,
           wl->txn ? "transaction" : "statement");
    printf("  errors        %" PRIu64 "\n", r->errors);
}

/* A failed run says why on standard error, whatever the output format. */
static int report_failure(const load_result_t *r)
{
    if (r->error[0] == '\0')
        return CLI_OK;
    cli_errorf("the %s run failed: %s", r->mode, r->error);
    return CLI_FAIL;
}

/* ---------------------------------------------------------------- schema */

#define LOAD_NAME_CAP 32

/* The INSERT of --prepare for n rows: the read-write workload's INSERT
 * with more rows.  dal splits it per physical table. */
static char *batch_sql(const load_ctx_t *ctx, uint64_t n)
{
    static const char tuple[] = ", (?, ?, ?, ?, ?)";
    const char *one = ctx->dal_sql[ST_INSERT_ID];
    size_t len = strlen(one), i;
    char *sql = malloc(len + (size_t)(n - 1) * (sizeof tuple - 1) + 1), *p;

    if (sql == NULL)
        return NULL;
    p = sql + len;
    memcpy(sql, one, len);
    for (i = 1; i < n; i++, p += sizeof tuple - 1)
        memcpy(p, tuple, sizeof tuple - 1);
    *p = '\0';
    return sql;
}

/* Rows first+1 .. first+n in one statement (row k: see ROW_ID_BASE). */
static int insert_batch(const load_ctx_t *ctx, uint64_t first, uint64_t n, const char *sql,
                        dal_value_t *params, char *names, dal_error_t *err)
{
    size_t np = strlen(stmt_defs[ST_INSERT_ID].params);
    uint64_t i;

    for (i = 0; i < n; i++)
        set_params(params + i * np, names + i * LOAD_NAME_CAP, LOAD_NAME_CAP, ST_INSERT_ID,
                   first + i + 1);
    return dal_exec(ctx->dal, NULL, sql, params, (size_t)n * np, NULL, err);
}

static int fill_rows(const load_ctx_t *ctx, dal_error_t *err)
{
    uint64_t rows = ctx->o->rows, batch = ctx->o->batch < rows ? ctx->o->batch : rows, done, n;
    size_t np = strlen(stmt_defs[ST_INSERT_ID].params);
    dal_value_t *params = calloc(batch * np, sizeof *params);
    char *names = calloc(batch, LOAD_NAME_CAP);
    char *full = batch_sql(ctx, batch), *sql = NULL;
    int rc = 0;

    if (params == NULL || names == NULL || full == NULL) {
        rc = cli_set_error(err, DAL_ENOMEM, "out of memory");
        goto out;
    }
    for (done = 0; done < rows && rc == 0; done += n) {
        n = rows - done < batch ? rows - done : batch;
        sql = n == batch ? full : batch_sql(ctx, n);
        rc = sql == NULL ? cli_set_error(err, DAL_ENOMEM, "out of memory")
                         : insert_batch(ctx, done, n, sql, params, names, err);
    }
out:
    if (sql != full)
        free(sql);
    free(full);
    free(names);
    free(params);
    return rc;
}

/* DDL through dal runs on every physical table. */
static int exec_ddl(const load_ctx_t *ctx, const char *tmpl, dal_error_t *err)
{
    char *sql = expand_sql(tmpl, ctx->o->table, ctx->o->shard_key);
    int rc;

    if (sql == NULL)
        return cli_set_error(err, DAL_ENOMEM, "out of memory");
    rc = dal_exec(ctx->dal, NULL, sql, NULL, 0, NULL, err);
    free(sql);
    return rc;
}

/* ---------------------------------------------------------------- command */

/* The median of a figure over the --compare pairs, with a distribution-free
 * interval for it (median_interval). */
typedef struct summary {
    double median;
    double low, high;    /* the interval */
    double confidence;   /* how often such an interval holds the true median */
} summary_t;

typedef struct load_report {
    int prepared;
    double prepare_s;
    load_result_t *results;     /* owned: one run, or --rounds pairs (dal, direct) */
    size_t nresults;
    summary_t ratio;            /* --compare: of dal / direct throughput */
    int cleaned;
} load_report_t;

static int do_prepare(const load_ctx_t *ctx, load_report_t *rep)
{
    dal_error_t err = { 0 };
    uint64_t t0 = now_ns();

    if (exec_ddl(ctx, create_sql, &err) < 0 || fill_rows(ctx, &err) < 0) {
        cli_errorf("--prepare: %s", err.message);
        return CLI_FAIL;
    }
    rep->prepared = 1;
    rep->prepare_s = (double)(now_ns() - t0) / 1e9;
    if (!ctx->o->json)
        printf("prepared %s through dal: created it, inserted %" PRIu64 " rows in %.2f s\n",
               ctx->o->table, ctx->o->rows, rep->prepare_s);
    return CLI_OK;
}

static int do_cleanup(const load_ctx_t *ctx, load_report_t *rep)
{
    dal_error_t err = { 0 };

    if (exec_ddl(ctx, drop_sql, &err) < 0) {
        cli_errorf("--cleanup: %s", err.message);
        return CLI_FAIL;
    }
    rep->cleaned = 1;
    if (!ctx->o->json)
        printf("cleaned up: dropped %s through dal\n", ctx->o->table);
    return CLI_OK;
}

static int do_single(const load_ctx_t *ctx, load_report_t *rep)
{
    load_result_t *r = calloc(1, sizeof *r);

    if (r == NULL) {
        cli_errorf("out of memory");
        return CLI_FAIL;
    }
    rep->results = r;
    rep->nresults = 1;
    run_once(ctx, ctx->o->direct ? &direct_backend : &dal_backend, r);
    if (!ctx->o->json && (r->events > 0 || r->error[0] == '\0'))
        print_result(ctx, r);
    return report_failure(r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double ratio_of(const load_result_t *pair)
{
    return pair[1].events_per_s > 0 ? pair[0].events_per_s / pair[1].events_per_s : NAN;
}

/* Direct's median latency over dal's: like the throughput ratio, below 1
 * when dal is slower, but hardly moved by the stalls of a busy machine. */
static double p50_ratio_of(const load_result_t *pair)
{
    return pair[0].p50 > 0 ? (double)pair[1].p50 / (double)pair[0].p50 : NAN;
}

static double dal_cpu_us(const load_result_t *pair)
{
    return pair[0].cpu_ns_per_event / 1e3;
}

static double direct_cpu_us(const load_result_t *pair)
{
    return pair[1].cpu_ns_per_event / 1e3;
}

/*
 * For n sorted values, the interval [v[k-1], v[n-k]] holds the true median
 * with probability 1 - 2 P(B < k), B ~ Binomial(n, 1/2), whatever the
 * distribution (the sign test's interval).  Takes the narrowest with at
 * least 95 %; with too few values for that (n <= 5), the whole range and
 * what it has.
 */
static void median_interval(const double *v, size_t n, summary_t *out)
{
    double term = 1, below;   /* C(n, k-1) / 2^n, P(B < k) */
    size_t i, k = 1;

    for (i = 0; i < n; i++)
        term /= 2;
    below = term;
    while (k < n / 2) {
        double next = term * (double)(n - k + 1) / (double)k;
        if (1 - 2 * (below + next) < 0.95)
            break;
        term = next;
        below += next;
        k++;
    }
    out->low = v[k - 1];
    out->high = v[n - k];
    out->confidence = 1 - 2 * below;
}

static summary_t summarize(const load_result_t *results, size_t npairs,
                           double (*get)(const load_result_t *pair))
{
    summary_t s = { NAN, NAN, NAN, NAN };
    double *v = malloc(npairs * sizeof *v);
    size_t i;

    if (v == NULL || npairs == 0) {
        free(v);
        return s;
    }
    for (i = 0; i < npairs; i++)
        v[i] = get(results + 2 * i);
    qsort(v, npairs, sizeof *v, cmp_double);
    s.median = npairs % 2 ? v[npairs / 2] : (v[npairs / 2 - 1] + v[npairs / 2]) / 2;
    median_interval(v, npairs, &s);
    free(v);
    return s;
}

static double median_of(const load_result_t *results, size_t npairs,
                        double (*get)(const load_result_t *pair))
{
    return summarize(results, npairs, get).median;
}

static void print_pair(uint64_t round, const load_result_t *pair)
{
    int i;

    printf("round %-3" PRIu64, round);
    for (i = 0; i < 2; i++)
        printf("  %-6s %9.1f/s p50 %7.1f p99 %7.1f cpu %6.2f us", pair[i].mode,
               pair[i].events_per_s, (double)pair[i].p50 / 1e3, (double)pair[i].p99 / 1e3,
               pair[i].cpu_ns_per_event / 1e3);
    printf("  ratio %.3f\n", ratio_of(pair));
    fflush(stdout);
}

/*
 * Pairs of runs, dal and direct, alternating which goes first (ABBA), so
 * that a drift of the machine over time falls on both sides alike.  The
 * ratio is dal's throughput over direct's.
 */
static int do_compare(const load_ctx_t *ctx, load_report_t *rep)
{
    const load_opts_t *o = ctx->o;
    const load_backend_t *order[2][2] = { { &dal_backend, &direct_backend },
                                          { &direct_backend, &dal_backend } };
    uint64_t r;
    int i, rc = CLI_OK;

    rep->results = calloc(o->rounds * 2, sizeof *rep->results);
    if (rep->results == NULL) {
        cli_errorf("out of memory");
        return CLI_FAIL;
    }
    if (!o->json)
        printf("%s: dal against plain libmysqlclient, %" PRIu64 " thread%s, %" PRIu64
               " rounds, ratio = dal / direct throughput\n", ctx->wl->name, o->threads,
               o->threads == 1 ? "" : "s", o->rounds);
    for (r = 0; r < o->rounds && rc == CLI_OK; r++) {
        load_result_t *pair = rep->results + 2 * r;   /* [0] dal, [1] direct */

        for (i = 0; i < 2 && rc == CLI_OK; i++) {
            const load_backend_t *be = order[r % 2][i];

            run_once(ctx, be, &pair[be == &direct_backend]);
            rc = report_failure(&pair[be == &direct_backend]);
        }
        if (rc == CLI_OK) {
            rep->nresults += 2;
            if (!o->json)
                print_pair(r + 1, pair);
        }
    }
    rep->ratio = summarize(rep->results, rep->nresults / 2, ratio_of);
    if (!o->json && rep->nresults > 0)
        printf("median ratio %.3f (%.0f%% interval %.3f-%.3f) over %zu rounds; median p50 ratio "
               "%.3f; client CPU per %s: dal %.2f us, direct %.2f us (medians)\n",
               rep->ratio.median, rep->ratio.confidence * 100, rep->ratio.low, rep->ratio.high,
               rep->nresults / 2,
               median_of(rep->results, rep->nresults / 2, p50_ratio_of),
               ctx->wl->txn ? "transaction" : "statement",
               median_of(rep->results, rep->nresults / 2, dal_cpu_us),
               median_of(rep->results, rep->nresults / 2, direct_cpu_us));
    return rc;
}

static void json_compare(json_t *j, const load_report_t *rep)
{
    size_t i;

    json_key(j, "rounds");
    json_array_begin(j);
    for (i = 0; i + 1 < rep->nresults; i += 2) {
        json_object_begin(j);
        json_key(j, "dal");
        json_object_begin(j);
        json_result(j, &rep->results[i]);
        json_object_end(j);
        json_key(j, "direct");
        json_object_begin(j);
        json_result(j, &rep->results[i + 1]);
        json_object_end(j);
        json_key_double(j, "ratio", ratio_of(&rep->results[i]), 4);
        json_object_end(j);
    }
    json_array_end(j);
    json_key_double(j, "median_ratio", rep->ratio.median, 4);
    json_key_double(j, "median_ratio_low", rep->ratio.low, 4);
    json_key_double(j, "median_ratio_high", rep->ratio.high, 4);
    json_key_double(j, "median_ratio_confidence", rep->ratio.confidence, 4);
    json_key_double(j, "median_p50_ratio", median_of(rep->results, rep->nresults / 2,
                                                     p50_ratio_of), 4);
    json_key_double(j, "median_client_cpu_us_dal", median_of(rep->results, rep->nresults / 2,
                                                             dal_cpu_us), 2);
    json_key_double(j, "median_client_cpu_us_direct",
                    median_of(rep->results, rep->nresults / 2, direct_cpu_us), 2);
}

/* One object for the whole command: the run's fields (or the rounds of
 * --compare), and what --prepare and --cleanup did. */
static void json_report(const load_ctx_t *ctx, const load_report_t *rep)
{
    json_t j;

    json_init(&j, stdout);
    json_object_begin(&j);
    if (ctx->wl != NULL) {
        json_setup(&j, ctx);
        if (ctx->o->compare)
            json_compare(&j, rep);
        else if (rep->nresults == 1)
            json_result(&j, rep->results);
    }
    if (rep->prepared) {
        json_key_uint(&j, "prepared_rows", ctx->o->rows);
        json_key_double(&j, "prepare_seconds", rep->prepare_s, 3);
    }
    json_key(&j, "cleaned_up");
    json_bool(&j, rep->cleaned);
    json_object_end(&j);
}

int cmd_load(cli_t *cli)
{
    load_report_t rep;
    load_opts_t o;
    load_ctx_t ctx;
    int rc = parse_load_args(cli, &o);

    if (rc != CLI_OK)
        return rc;
    memset(&rep, 0, sizeof rep);
    rc = ctx_init(&ctx, cli, &o);
    if (rc == CLI_OK && o.prepare)
        rc = do_prepare(&ctx, &rep);
    if (rc == CLI_OK && ctx.wl != NULL)
        rc = o.compare ? do_compare(&ctx, &rep) : do_single(&ctx, &rep);
    /* a failed run still drops what --prepare made */
    if (o.cleanup && ctx.dal != NULL && do_cleanup(&ctx, &rep) != CLI_OK)
        rc = CLI_FAIL;
    if (o.json && (rep.prepared || rep.nresults > 0 || rep.cleaned))
        json_report(&ctx, &rep);
    free(rep.results);
    ctx_free(&ctx);
    return rc;
}
