/*
 * reshard_switch.c -- `dal reshard switch`: the dal instances move from the
 * old layout to the new one, with the table's writes held for less than
 * --max-write-pause.
 *
 * The instances follow one configuration source (--source: a file with
 * `[dal] watch = true`, default the -c file, or a store such as
 * etcd://HOST:PORT/PREFIX, written with compare-and-set).  The switch:
 *   1. catches up until a round takes less than half of --max-write-pause;
 *   2. makes sure dal_reshard_fence_ack exists (reshard_ack.c), and has
 *      long enough for every live instance to have registered in it;
 *   3. replaces the document by its own text with `write_fence = G_B` in
 *      the table's section (G: the generation, now in Unix ms; B: how long
 *      an instance holds a write before failing it, --max-write-pause +
 *      5000 ms): each instance, once it has reloaded it, holds the table's
 *      writes (core/stmt/fence.h) -- reads go on -- and, once none of its
 *      writes is in flight on the old layout, acknowledges G;
 *   4. waits until every live instance has acknowledged G, then catches up
 *      to the old nodes' positions of that moment: nothing more reaches the
 *      old tables;
 *   5. if that all took less than --max-write-pause, records the new nodes'
 *      positions for `reverse` and replaces the document by NEW.ini's text:
 *      the instances reload it and their held writes go to the new layout;
 *      otherwise (an instance did not acknowledge in time: it is named)
 *      writes the original text back: the switch is abandoned and the
 *      writes go on against the old layout;
 *   6. reads the old nodes' logs once more after --fence-settle, and
 *      reports (does not apply) any key written to the old layout since
 *      (by an instance that does not register: no allow_reshard, or
 *      another source).
 * An instance never releases a held write into the old layout by itself:
 * only a document without the fence does (this switch, or `reshard
 * abort-switch` after a switch died).
 * NEW.ini must say `[dal] allow_reshard = true` (a reload refuses a layout
 * change otherwise) and `watch = true`, and should hold whatever else the
 * instances need ([proxy] ...): it becomes their configuration.
 */
#include "reshard.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Replace path by text: a new file renamed over it, as an editor saves. */
static int replace_file(const char *path, const char *text, size_t len)
{
    char tmp[4096];
    FILE *f;
    int ok;

    snprintf(tmp, sizeof tmp, "%s.reshard-%ld", path, (long)getpid());
    f = fopen(tmp, "wb");
    if (f == NULL) {
        cli_errorf("reshard: cannot write %s", tmp);
        return -1;
    }
    ok = fwrite(text, 1, len, f) == len;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        cli_errorf("reshard: cannot replace %s", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Where the instances' configuration lives: a file, or a store
 * (etcd://...) read and written through the library's source API, each
 * write a compare-and-set on the revision last read or written. */
typedef struct doc_src {
    const char *location;  /* borrowed */
    dal_source_t *src;     /* owned; NULL: a file */
    int64_t rev;           /* the store's revision of the last read or write */
} doc_src_t;

static int is_store(const char *location)
{
    return strstr(location, "://") != NULL;
}

static int doc_open(rs_t *rs, doc_src_t *d, const char *location)
{
    dal_open_opts_t opts;
    dal_error_t err = {0};

    memset(d, 0, sizeof *d);
    d->location = location;
    if (!is_store(d->location))
        return 0;
    cli_open_opts(rs->cli, &opts);
    if (dal_source_open(d->location, &opts, &d->src, &err) != 0) {
        cli_fail(&err);
        return -1;
    }
    return 0;
}

static void doc_close(doc_src_t *d)
{
    if (d->src != NULL)
        dal_source_close(d->src);
    d->src = NULL;
}

/* The current document (owned), or NULL after reporting. */
static char *doc_read(doc_src_t *d, size_t *len)
{
    dal_error_t err = {0};
    char *text = NULL;

    if (d->src == NULL) {
        text = cli_read_file(d->location, len);
        if (text == NULL)
            cli_errorf("reshard: cannot read %s", d->location);
        return text;
    }
    if (dal_source_get(d->src, 0, &text, len, NULL, &d->rev, &err) != 0) {
        cli_fail(&err);
        return NULL;
    }
    return text;
}

/* Put text in place of the document; 0 or -1 after reporting (a store
 * changed by someone else since our last read or write refuses). */
static int doc_write(doc_src_t *d, const char *text, size_t len)
{
    dal_error_t err = {0};

    if (d->src == NULL)
        return replace_file(d->location, text, len);
    if (dal_source_put(d->src, text, len, d->rev, &d->rev, &err) != 0) {
        cli_fail(&err);
        return -1;
    }
    return 0;
}

/* Is line (up to its end) the header [table NAME]? */
static int table_header(const char *line, const char *name)
{
    size_t n = strlen(name);

    while (*line == ' ' || *line == '\t')
        line++;
    if (strncmp(line, "[table", 6) != 0 || !isspace((unsigned char)line[6]))
        return 0;
    line += 7;
    while (*line == ' ' || *line == '\t')
        line++;
    return strncasecmp(line, name, n) == 0 && line[n] == ']';
}

/* text with "write_fence = GEN_BOUND" after the table's header; owned. */
static char *fenced(const char *text, const char *table, uint64_t gen, uint64_t bound,
                    size_t *len)
{
    const char *p = text, *eol;
    rs_buf_t b = {0};
    char line[80];

    snprintf(line, sizeof line, "write_fence = %llu_%llu\n", (unsigned long long)gen,
             (unsigned long long)bound);
    for (; *p; p = eol) {
        eol = strchr(p, '\n');
        eol = eol ? eol + 1 : p + strlen(p);
        if (rs_put(&b, p, (size_t)(eol - p)))
            return NULL;
        if (table_header(p, table) && ((eol[-1] != '\n' && rs_puts(&b, "\n")) || rs_puts(&b, line)))
            return NULL;
    }
    if (b.s == NULL || strstr(b.s, line) == NULL) {
        cli_errorf("reshard: the configuration has no [table %s] header line", table);
        rs_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.s;
}

/* Does the text set allow_reshard = true? */
static int allows_reshard(const char *text)
{
    const char *p = text;

    while ((p = strstr(p, "allow_reshard")) != NULL) {
        const char *v = p + 13;
        int at_start = p == text || p[-1] == '\n' || p[-1] == ' ' || p[-1] == '\t';
        while (*v == ' ' || *v == '\t')
            v++;
        if (at_start && *v == '=') {
            v++;
            while (*v == ' ' || *v == '\t')
                v++;
            if (strncasecmp(v, "true", 4) == 0 || strncasecmp(v, "yes", 3) == 0 ||
                strncasecmp(v, "on", 2) == 0 || *v == '1')
                return 1;
        }
        p += 13;
    }
    return 0;
}

static uint64_t now_ms(void)
{
    return (uint64_t)(rs_now() * 1000.0);
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static int set_flow(rs_t *rs, const char *phase)
{
    rs_state_t flow;
    int rc;

    if (rs_state_get(rs, "", &flow) < 0)
        return -1;
    snprintf(flow.phase, sizeof flow.phase, "%s", phase);
    flow.updated = rs_now();
    rc = rs_state_put(rs, &flow);
    rs_state_free(&flow);
    return rc;
}

/* Is line (up to its end) "write_fence = ..."? */
static int fence_line(const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (strncmp(line, "write_fence", 11) != 0)
        return 0;
    line += 11;
    while (*line == ' ' || *line == '\t')
        line++;
    return *line == '=';
}

/* text without the write_fence lines of the table's section (owned);
 * *found: how many there were. */
static char *unfenced(const char *text, const char *table, size_t *len, int *found)
{
    const char *p = text, *eol;
    rs_buf_t b = {0};
    int in = 0;

    *found = 0;
    for (; *p; p = eol) {
        const char *q = p;
        eol = strchr(p, '\n');
        eol = eol ? eol + 1 : p + strlen(p);
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '[')
            in = table_header(p, table);
        if (in && fence_line(p)) {
            (*found)++;
            continue;
        }
        if (rs_put(&b, p, (size_t)(eol - p)))
            return NULL;
    }
    if (b.s == NULL && rs_puts(&b, ""))
        return NULL;
    *len = b.len;
    return b.s;
}

/* Steps 3-5; 1 switched, 0 abandoned, -1 failed (the original text is
 * back in place unless the switch was made). */
static int fence_and_swap(rs_t *rs, doc_src_t *d, const char *orig, size_t olen,
                          const char *next, size_t nlen, uint64_t *held_ms)
{
    uint64_t t0 = now_ms(), until = t0 + rs->max_pause_ms;
    size_t flen = 0;
    char *ftext = fenced(orig, rs->table, t0, rs->max_pause_ms + 5000, &flen), *missing = NULL;
    long long lag;
    int rc, acked;

    if (ftext == NULL || doc_write(d, ftext, flen) != 0) {
        free(ftext);
        return -1;
    }
    free(ftext);
    acked = rs_ack_wait(rs, t0, (double)until / 1000.0, &missing);
    if (acked == 0)
        cli_errorf("reshard: these dal instances did not acknowledge the write fence of %s "
                   "within --max-write-pause (%llu ms): %s (stopped, overloaded, or unable to "
                   "reach %s?)", rs->table, (unsigned long long)rs->max_pause_ms, missing,
                   rs->source);
    free(missing);
    /* abandoned (0) unless every live instance acknowledged */
    rc = acked < 0 ? -1 : 0;
    if (acked == 1 && rs_catchup_round(rs, &lag) != CLI_OK)
        rc = -1;
    if (acked == 1 && rc == 0 && now_ms() < until && !rs->reverse && rs_reverse_mark(rs) != 0)
        rc = -1;
    if (acked == 1 && rc == 0 && now_ms() < until) {
        rc = doc_write(d, next, nlen) == 0 ? 1 : -1;
        *held_ms = now_ms() - t0;
        if (rc == 1)
            return 1;
    }
    *held_ms = now_ms() - t0;
    if (doc_write(d, orig, olen) != 0)
        cli_errorf("reshard: %s still holds the write fence of %s: writes to it wait and then "
                   "fail; run `dal reshard abort-switch`", rs->source, rs->table);
    return rc;
}

/* Read the source's document; refuse one that still carries a fence on
 * the table (a switch that died: abort-switch removes it).  Owned, or NULL
 * after reporting. */
static char *read_unfenced(rs_t *rs, doc_src_t *d, size_t *len)
{
    char *text = doc_read(d, len), *plain;
    size_t plen;
    int found = 0;

    if (text == NULL || (plain = unfenced(text, rs->table, &plen, &found)) == NULL) {
        free(text);
        return NULL;
    }
    free(plain);
    if (found) {
        cli_errorf("reshard: %s already holds a write fence on %s (a switch that did not "
                   "finish?): run `dal reshard abort-switch` first", rs->source, rs->table);
        free(text);
        return NULL;
    }
    return text;
}

int rs_abort_switch(rs_t *rs)
{
    doc_src_t d;
    size_t len = 0, plen = 0;
    char *text = NULL, *plain = NULL;
    int found = 0, rc = CLI_FAIL;

    if (rs->source == NULL)
        rs->source = rs->cli->config;
    /* the lock: no switch of the table is running (a dead one's went with
     * its connection), so no one will put NEW.ini in place after us */
    if (rs_lock(rs) != CLI_OK || doc_open(rs, &d, rs->source) != 0)
        return CLI_FAIL;
    if ((text = doc_read(&d, &len)) != NULL &&
        (plain = unfenced(text, rs->table, &plen, &found)) != NULL) {
        if (!found) {
            printf("%s holds no write fence on %s\n", rs->source, rs->table);
            rc = CLI_OK;
        } else if (doc_write(&d, plain, plen) == 0) {
            printf("removed the write fence on %s from %s: writes go on against the layout "
                   "it names\n", rs->table, rs->source);
            rc = CLI_OK;
        }
    }
    doc_close(&d);
    free(text);
    free(plain);
    return rc;
}

int rs_switch(rs_t *rs)
{
    size_t olen = 0, nlen = 0;
    char *orig = NULL, *next = NULL;
    rs_state_t flow;
    uint64_t held = 0, want;
    double wait_s;
    long long lag = 0;
    int found, rc = CLI_FAIL, i;
    doc_src_t d = {0}, to;

    if (rs->source == NULL)
        rs->source = rs->cli->config;
    if (rs_check(rs) != CLI_OK || rs_lock(rs) != CLI_OK || rs_state_init(rs) != CLI_OK ||
        (found = rs_state_get(rs, "", &flow)) < 0)
        return CLI_FAIL;
    if (!found || strcmp(flow.phase, rs->reverse ? "switched" : "caught-up") != 0) {
        cli_errorf("reshard: %s is in phase %s; %s", rs->table, found ? flow.phase : "none",
                   rs->reverse ? "the switch back follows a switch"
                               : "switch follows `reshard catchup`");
        rs_state_free(&flow);
        return CLI_FAIL;
    }
    rs_state_free(&flow);
    if (doc_open(rs, &to, rs->new_.path) != 0)
        return CLI_FAIL;
    next = doc_read(&to, &nlen);   /* NEW.ini may be a store's document too */
    doc_close(&to);
    if (next == NULL || doc_open(rs, &d, rs->source) != 0)
        goto out;
    orig = read_unfenced(rs, &d, &olen);
    if (orig == NULL)
        goto out;
    if (!allows_reshard(next)) {
        cli_errorf("reshard: %s must set [dal] allow_reshard = true: the instances refuse a "
                   "layout change otherwise", rs->new_.path);
        goto out;
    }
    /* 1: close enough that the last round fits in the pause, beside the
     * instances' acknowledgements */
    want = rs->max_pause_ms / 2;
    for (i = 0; i < 20; i++) {
        if (rs_catchup_round(rs, &lag) != CLI_OK)
            goto out;
        if ((uint64_t)lag < want)
            break;
    }
    if ((uint64_t)lag >= want) {
        cli_errorf("reshard: switch abandoned before the fence: a catch-up round takes %lld ms, "
                   "more than the %llu ms the pause leaves; switch later", lag,
                   (unsigned long long)want);
        goto out;
    }
    /* 2 */
    if (rs_ack_init(rs, &wait_s) != CLI_OK)
        goto out;
    if (wait_s > 0)
        sleep_ms((uint64_t)(wait_s * 1000));
    found = fence_and_swap(rs, &d, orig, olen, next, nlen, &held);
    if (found < 0)
        goto out;
    if (found == 0) {
        cli_errorf("reshard: switch abandoned: the instances' acknowledgements and the last "
                   "catch-up did not finish within --max-write-pause (%llu ms); writes went on "
                   "against the old layout",
                   (unsigned long long)rs->max_pause_ms);
        goto out;
    }
    if (set_flow(rs, rs->reverse ? "reversed" : "switched") != 0)
        goto out;
    /* 6: a write an instance sent to the old layout after the last round:
     * it missed the fence.  Counted, not applied: the new layout may have
     * newer writes of the same keys by now. */
    sleep_ms(rs->settle_ms);
    rs->count_only = 1;
    rc = rs_catchup_round(rs, &lag);
    if (rc == CLI_OK && rs->counted > 0)
        cli_errorf("reshard: warning: %llu keys of %s were written to the old layout after "
                   "the fence (an instance that does not follow %s?); compare with `reshard "
                   "verify`", (unsigned long long)rs->counted, rs->table, rs->source);
    if (rc == CLI_OK && rs->cli->json)
        printf("{\"phase\":\"%s\",\"writes_held_ms\":%llu}\n",
               rs->reverse ? "reversed" : "switched", (unsigned long long)held);
    else if (rc == CLI_OK)
        printf("switched %s %sto %s: writes held %llu ms\n", rs->table,
               rs->reverse ? "back " : "", rs->new_.path, (unsigned long long)held);
out:
    doc_close(&d);
    free(orig);
    free(next);
    return rc;
}
