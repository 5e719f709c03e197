/*
 * monitor_slowlog.c -- slow (and failed) statements as JSON lines.
 *
 * One line per event over the threshold:
 *
 *   {"time":"2024-05-01T12:00:00.123Z","type":"execution","latency_ms":12.345,
 *    "kind":"select","table":"wm_food","datasource":"dbProductSku1",
 *    "server":"10.0.0.5:3306","physical_table":"wm_food_45","trace_id":"...",
 *    "rows":1,"error":0,"mysql_errno":0,"sql":"SELECT name FROM wm_food WHERE id = ?"}
 *
 * The SQL is the event's, which the host has normalised (literals replaced
 * by ?), so no value or password from a statement reaches the file.
 *
 * on_event must not block the statement: it formats the line on the
 * statement's thread and copies it into a bounded buffer under a lock held
 * only for that memcpy; a writer thread swaps the buffer for an empty one
 * and writes it out.  When the buffer is full the line is dropped and
 * counted, and the writer records the count in the file ("type":"dropped")
 * and in the log, rather than ever making a statement wait for the disk.
 *
 * Rotation without signals: before each write the writer compares the
 * path's inode with the open file's; when logrotate (or anyone) moved or
 * removed the file, it opens a new one at the path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dal/plugin.h>

#define LINE_MAX_BYTES 8192   /* one line at most: the fields below always fit */
#define SQL_MAX_BYTES 4096    /* escaped bytes of SQL kept */
#define FIELD_MAX_BYTES 256   /* escaped bytes of each other string */

typedef struct slowlog {
    const dal_host_api_t *api;  /* static table, outlives the instance */
    dal_host_t *host;           /* borrowed, outlives the instance */
    char *path;                 /* owned */
    uint64_t threshold_ns;
    int want_statement, want_execution, want_errors;

    pthread_mutex_t mu;         /* guards the queue */
    pthread_cond_t cond;        /* wakes the writer */
    char *active;               /* owned; lines waiting, cap bytes */
    size_t active_len, cap;
    int stop;
    atomic_ullong dropped;      /* lines that did not fit */

    /* the writer's own */
    char *spare;                /* owned; the batch being written */
    int fd;
    dev_t dev;
    ino_t ino;
    int open_failing;
    uint64_t dropped_told;
    pthread_t writer;
    int writer_started;
} slowlog_t;

/* ------------------------------------------------------------- lines */

typedef struct line {
    char *p;
    size_t len, cap;
} line_t;

static void put(line_t *l, const char *s, size_t n)
{
    if (l->len + n >= l->cap)
        n = l->cap - 1 - l->len;
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

static void putf(line_t *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(line_t *l, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(l->p + l->len, l->cap - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len += (size_t)n < l->cap - l->len ? (size_t)n : l->cap - 1 - l->len;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t need, i;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        need = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        need = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        need = 4;
    else
        return 0;
    if (need > n)
        return 0;
    for (i = 1; i < need; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return need;
}

/* One character of s (n bytes left) as JSON: its escape or itself, or
 * U+FFFD for a byte that is not valid UTF-8.  Sets *used to the input bytes
 * it stands for; returns the output length. */
static size_t json_char(const unsigned char *s, size_t n, char *out, size_t *used)
{
    size_t k = utf8_len(s, n);

    *used = k ? k : 1;
    if (k == 0)
        return (size_t)snprintf(out, 8, "\\ufffd");
    if (s[0] == '"' || s[0] == '\\')
        return (size_t)snprintf(out, 8, "\\%c", s[0]);
    if (s[0] < 0x20)
        return (size_t)snprintf(out, 8, "\\u%04x", s[0]);
    memcpy(out, s, k);
    return k;
}

/* text as a JSON string (null for NULL) of at most max escaped bytes,
 * never splitting a character or an escape, so the line always parses.
 * Returns 1 if the text was cut. */
static int put_json_str(line_t *l, const char *text, size_t max)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, n, out = 0, used, m;
    char piece[8];

    if (text == NULL) {
        put(l, "null", 4);
        return 0;
    }
    put(l, "\"", 1);
    for (n = strlen(text); i < n; i += used) {
        m = json_char(s + i, n - i, piece, &used);
        if (out + m > max)
            break;
        put(l, piece, m);
        out += m;
    }
    put(l, "\"", 1);
    return i < n;
}

static void put_time(line_t *l)
{
    struct timespec ts;
    struct tm tm;
    char buf[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    putf(l, "{\"time\":\"%s.%03ldZ\"", buf, ts.tv_nsec / 1000000L);
}

static size_t format_event(const dal_event_t *ev, char *buf, size_t cap)
{
    line_t l = {buf, 0, cap};
    int cut;

    put_time(&l);
    putf(&l, ",\"type\":\"%s\",\"latency_ms\":%.3f,\"kind\":",
         ev->type == DAL_EVENT_STATEMENT ? "statement" : "execution",
         (double)ev->latency_ns / 1e6);
    put_json_str(&l, ev->kind, FIELD_MAX_BYTES);
    put(&l, ",\"table\":", 9);
    put_json_str(&l, ev->table, FIELD_MAX_BYTES);
    put(&l, ",\"datasource\":", 14);
    put_json_str(&l, ev->datasource, FIELD_MAX_BYTES);
    put(&l, ",\"server\":", 10);
    put_json_str(&l, ev->server, FIELD_MAX_BYTES);
    put(&l, ",\"physical_table\":", 18);
    put_json_str(&l, ev->physical_table, FIELD_MAX_BYTES);
    put(&l, ",\"trace_id\":", 12);
    put_json_str(&l, ev->trace_id, FIELD_MAX_BYTES);
    putf(&l, ",\"rows\":%" PRIu64 ",\"error\":%d,\"mysql_errno\":%u,\"sql\":", ev->rows,
         ev->error_code, ev->mysql_errno);
    cut = put_json_str(&l, ev->sql, SQL_MAX_BYTES);
    if (cut)
        put(&l, ",\"sql_truncated\":true", 21);
    put(&l, "}\n", 2);
    return l.len;
}

/* ------------------------------------------------------------- writer */

/* Open the path (again) unless the open file is still the one there. */
static void ensure_open(slowlog_t *s)
{
    struct stat st;

    if (s->fd >= 0 && stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        return;
    if (s->fd >= 0) {
        close(s->fd);
        s->api->log(s->host, DAL_LOG_INFO, "%s was moved or removed; writing a new file",
                    s->path);
    }
    s->fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (s->fd < 0 || fstat(s->fd, &st) != 0) {
        if (!s->open_failing)
            s->api->log(s->host, DAL_LOG_WARN, "cannot open %s: %s; slow statements are lost "
                        "until it can be", s->path, strerror(errno));
        s->open_failing = 1;
        return;
    }
    s->open_failing = 0;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
}

static void write_all(slowlog_t *s, const char *p, size_t n)
{
    while (n > 0 && s->fd >= 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s->api->log(s->host, DAL_LOG_WARN, "writing %s: %s", s->path, strerror(errno));
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Say in the file and the log that lines were dropped since last time. */
static void tell_dropped(slowlog_t *s)
{
    uint64_t now = atomic_load_explicit(&s->dropped, memory_order_relaxed);
    char buf[160];
    line_t l = {buf, 0, sizeof buf};

    if (now == s->dropped_told)
        return;
    put_time(&l);
    putf(&l, ",\"type\":\"dropped\",\"count\":%" PRIu64 "}\n", now - s->dropped_told);
    write_all(s, buf, l.len);
    s->api->log(s->host, DAL_LOG_WARN, "%" PRIu64 " slow-log lines dropped: the writer could "
                "not keep up (raise buffer_size?)", now - s->dropped_told);
    s->dropped_told = now;
}

static void *writer_main(void *arg)
{
    slowlog_t *s = arg;
    size_t len;
    char *tmp;

    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->active_len == 0)
            pthread_cond_wait(&s->cond, &s->mu);
        if (s->active_len == 0)
            break; /* stopping, and everything is written */
        tmp = s->spare;
        s->spare = s->active;
        s->active = tmp;
        len = s->active_len;
        s->active_len = 0;
        pthread_mutex_unlock(&s->mu);
        ensure_open(s);
        write_all(s, s->spare, len);
        tell_dropped(s);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* -------------------------------------------------------------- events */

static int wanted(const slowlog_t *s, const dal_event_t *ev)
{
    int type_ok = (ev->type == DAL_EVENT_STATEMENT && s->want_statement) ||
                  (ev->type == DAL_EVENT_EXECUTION && s->want_execution);

    return type_ok &&
           (ev->latency_ns >= s->threshold_ns || (s->want_errors && ev->error_code != 0));
}

static void enqueue(slowlog_t *s, const char *line, size_t n)
{
    int wake;

    pthread_mutex_lock(&s->mu);
    if (s->active_len + n > s->cap) {
        pthread_mutex_unlock(&s->mu);
        atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed);
        return;
    }
    memcpy(s->active + s->active_len, line, n);
    wake = s->active_len == 0;
    s->active_len += n;
    if (wake)
        pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->mu);
}

static void slowlog_on_event(void *instance, const dal_event_t *ev)
{
    slowlog_t *s = instance;
    char line[LINE_MAX_BYTES];

    if (wanted(s, ev))
        enqueue(s, line, format_event(ev, line, sizeof line));
}

/* ---------------------------------------------------- create / destroy */

static int read_events(const dal_host_api_t *api, const dal_plugin_params_t *params,
                       slowlog_t *s, dal_error_t *err)
{
    const char *const *names;
    size_t n = api->param_string_list(params, "events", &names), i;

    for (i = 0; i < n; i++) {
        if (strcmp(names[i], "statement") == 0)
            s->want_statement = 1;
        else if (strcmp(names[i], "execution") == 0)
            s->want_execution = 1;
        else
            return api->set_error(err, DAL_ECONFIG, "events: '%s' is not an event type "
                                  "(statement, execution)", names[i]);
    }
    return 0;
}

static int read_params(const dal_host_api_t *api, const dal_plugin_params_t *params,
                       slowlog_t *s, dal_error_t *err)
{
    int64_t cap = api->param_int(params, "buffer_size");

    if (cap < LINE_MAX_BYTES || cap > (int64_t)1 << 30)
        return api->set_error(err, DAL_ECONFIG, "buffer_size must be %d to 1073741824 bytes, "
                              "not %" PRId64, LINE_MAX_BYTES, cap);
    s->cap = (size_t)cap;
    s->threshold_ns = (uint64_t)api->param_duration_ms(params, "threshold") * 1000000u;
    s->want_errors = api->param_bool(params, "errors");
    if ((s->path = strdup(api->param_string(params, "path"))) == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    return read_events(api, params, s, err);
}

static void slowlog_free(slowlog_t *s)
{
    if (s->fd >= 0)
        close(s->fd);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mu);
    free(s->active);
    free(s->spare);
    free(s->path);
    free(s);
}

static int slowlog_create(const dal_host_api_t *api, dal_host_t *host,
                          const dal_plugin_params_t *params, void **instance, dal_error_t *err)
{
    slowlog_t *s = calloc(1, sizeof *s);
    int rc;

    *instance = NULL;
    if (s == NULL)
        return api->set_error(err, DAL_ENOMEM, "out of memory");
    s->api = api;
    s->host = host;
    s->fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cond, NULL);
    if ((rc = read_params(api, params, s, err)) != 0)
        goto fail;
    s->active = malloc(s->cap);
    s->spare = malloc(s->cap);
    if (s->active == NULL || s->spare == NULL) {
        rc = api->set_error(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    /* a path that cannot be written is a configuration mistake: say so now */
    ensure_open(s);
    if (s->fd < 0) {
        rc = api->set_error(err, DAL_EIO, "cannot open %s: %s", s->path, strerror(errno));
        goto fail;
    }
    if ((rc = dal_plugin_thread_create(api, &s->writer, writer_main, s)) != 0) {
        rc = api->set_error(err, DAL_ENOMEM, "cannot start the writer thread: %s", strerror(rc));
        goto fail;
    }
    *instance = s;
    return 0;
fail:
    slowlog_free(s);
    return rc;
}

static void slowlog_destroy(void *instance)
{
    slowlog_t *s = instance;

    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->writer, NULL);
    slowlog_free(s);
}

static const dal_param_spec_t slowlog_params[] = {
    {"path", DAL_PARAM_STRING, 1, NULL, "the file to append JSON lines to"},
    {"threshold", DAL_PARAM_DURATION, 0, "1s", "log what takes at least this long (0: all)"},
    {"events", DAL_PARAM_STRING_LIST, 0, "execution",
     "which events: statement (logical), execution (physical, per server), or both"},
    {"errors", DAL_PARAM_BOOL, 0, "true", "also log failed ones, however fast"},
    {"buffer_size", DAL_PARAM_INT, 0, "1048576",
     "bytes of lines queued for the writer; beyond that lines are dropped and counted"},
    {NULL, 0, 0, NULL, NULL}
};

static const dal_monitor_ops_t slowlog_ops = {
    sizeof(dal_monitor_ops_t),
    slowlog_create,
    slowlog_destroy,
    slowlog_on_event
};

static const dal_plugin_t slowlog_plugin = {
    DAL_PLUGIN_ABI_VERSION,
    sizeof(dal_plugin_t),
    DAL_PLUGIN_MONITOR,
    "slowlog",
    DAL_VERSION_STRING,
    "slow and failed statements as JSON lines, SQL without literals; follows log rotation",
    slowlog_params,
    &slowlog_ops
};

DAL_PLUGIN_DECLARE(slowlog_plugin)
