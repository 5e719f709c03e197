/*
 * cmd_config.c -- `dal config`: the configuration kept in a store (etcd).
 *
 *   push [--expect-revision R] FILE URL   check FILE as `dal check`, then
 *                                         store it (compare-and-set with R)
 *   get URL [--revision R]                print the document
 *   history URL                           the versions the store keeps
 *   watch URL                             print each accepted change as
 *                                         `dal diff` prints changes
 *
 * Everything goes through the library's source API, so the CLI has no
 * network client either.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cmd_config_synopsis[] =
    "config push [--expect-revision R] [--json] FILE URL | config get [--revision R] [--json] URL"
    " | config history [--json] URL | config watch [--json] URL";

const char cmd_config_details[] =
    "URL is a store location, etcd://HOST:PORT[,HOST:PORT...]/PREFIX[?OPTIONS]\n"
    "(etcds:// for TLS); the document is the key PREFIX/config.\n"
    "  push FILE URL     check FILE as `dal check` does (plugins loaded), then store\n"
    "                    it as the new version; prints the new revision\n"
    "  --expect-revision R  store only if the current version is revision R (0: no\n"
    "                    version yet); otherwise nothing is written and the exit\n"
    "                    status is 1 (someone else pushed since you read R)\n"
    "  get URL           print the newest document (--revision R: the one in force\n"
    "                    at revision R)\n"
    "  history URL       the versions the store still keeps: REVISION VERSION BYTES\n"
    "  watch URL         follow the document: each new version is checked as\n"
    "                    dal_open would and printed as its changes, one line\n"
    "                    WHAT NAME CHANGE each after a line \"# NAME\"; a version\n"
    "                    that fails the check prints \"# NAME rejected: MESSAGE\"\n"
    "  --json            push: {\"revision\":N}; get: {\"name\",\"revision\",\"document\"};\n"
    "                    history: {\"versions\":[{\"revision\",\"version\",\"bytes\"}]};\n"
    "                    watch: one object per version, one per line\n";

typedef struct config_args {
    const char *sub;
    const char *file;
    const char *url;
    int64_t expect;     /* -1: none */
    int64_t revision;   /* 0: newest */
} config_args_t;

static int parse_rev(const cli_t *cli, const char *opt, const char *text, int64_t *out)
{
    char *end;
    long long v;

    if (text == NULL)
        return cli_usage(cli, "%s needs a revision", opt);
    errno = 0;
    v = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || end == text || v < 0)
        return cli_usage(cli, "%s: '%s' is not a revision", opt, text);
    *out = v;
    return CLI_OK;
}

static int parse_args(const cli_t *cli, config_args_t *a)
{
    const char *pos[2] = {NULL, NULL};
    size_t i, npos = 0, want;
    int rc = CLI_OK;

    memset(a, 0, sizeof *a);
    a->expect = -1;
    a->sub = cli->args[0];
    for (i = 1; i < cli->nargs && rc == CLI_OK; i++) {
        const char *arg = cli->args[i];
        if (strcmp(arg, "--expect-revision") == 0 && strcmp(a->sub, "push") == 0)
            rc = parse_rev(cli, arg, i + 1 < cli->nargs ? cli->args[++i] : NULL, &a->expect);
        else if (strcmp(arg, "--revision") == 0 && strcmp(a->sub, "get") == 0)
            rc = parse_rev(cli, arg, i + 1 < cli->nargs ? cli->args[++i] : NULL, &a->revision);
        else if (arg[0] == '-' && arg[1] != '\0')
            rc = cli_usage(cli, "config %s: unknown option '%s'", a->sub, arg);
        else if (npos == 2)
            rc = cli_usage(cli, "config %s: unexpected argument '%s'", a->sub, arg);
        else
            pos[npos++] = arg;
    }
    if (rc != CLI_OK)
        return rc;
    want = strcmp(a->sub, "push") == 0 ? 2 : 1;
    if (npos != want)
        return cli_usage(cli, "config %s needs %s", a->sub, want == 2 ? "FILE URL" : "URL");
    a->file = want == 2 ? pos[0] : NULL;
    a->url = pos[want - 1];
    return CLI_OK;
}

/* ------------------------------------------------------------------ push */

static int do_push(const cli_t *cli, const config_args_t *a, const dal_open_opts_t *opts,
                   dal_source_t *src)
{
    dal_error_t err = {0};
    int64_t rev = 0;
    size_t len = 0;
    char *text;
    json_t j;

    /* the same verdict as `dal check FILE`: nothing unusable reaches the store */
    if (dal_check_config(a->file, opts, &err) != 0)
        return cli_fail(&err);
    text = cli_read_file(a->file, &len);
    if (text == NULL) {
        cli_errorf("%s: cannot read: %s", a->file, strerror(errno));
        return CLI_FAIL;
    }
    if (dal_source_put(src, text, len, a->expect, &rev, &err) != 0) {
        free(text);
        return cli_fail(&err);
    }
    free(text);
    if (!cli->json) {
        printf("%.*s: revision %lld\n", cli_shown(a->url), a->url, (long long)rev);
        return CLI_OK;
    }
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "revision");
    json_int(&j, rev);
    json_object_end(&j);
    return CLI_OK;
}

/* ------------------------------------------------------------------- get */

static int do_get(const cli_t *cli, const config_args_t *a, dal_source_t *src)
{
    dal_error_t err = {0};
    char *text = NULL, *name = NULL;
    int64_t rev = 0;
    size_t len = 0;
    json_t j;

    if (dal_source_get(src, a->revision, &text, &len, &name, &rev, &err) != 0)
        return cli_fail(&err);
    if (!cli->json) {
        fwrite(text, 1, len, stdout);
    } else {
        json_init(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "name");
        json_string(&j, name);
        json_key(&j, "revision");
        json_int(&j, rev);
        json_key(&j, "document");
        json_stringn(&j, text, len);
        json_object_end(&j);
    }
    free(text);
    free(name);
    return CLI_OK;
}

/* --------------------------------------------------------------- history */

typedef struct history_out {
    json_t j;
    int json;
} history_out_t;

static void on_version(void *user, int64_t revision, int64_t version, size_t len)
{
    history_out_t *o = user;

    if (!o->json) {
        printf("%-10lld %-8lld %zu\n", (long long)revision, (long long)version, len);
        return;
    }
    json_object_begin(&o->j);
    json_key(&o->j, "revision");
    json_int(&o->j, revision);
    json_key(&o->j, "version");
    json_int(&o->j, version);
    json_key(&o->j, "bytes");
    json_uint(&o->j, len);
    json_object_end(&o->j);
}

static int do_history(const cli_t *cli, dal_source_t *src)
{
    history_out_t o;
    dal_error_t err = {0};
    int rc;

    memset(&o, 0, sizeof o);
    o.json = cli->json;
    if (o.json) {
        json_init(&o.j, stdout);
        json_object_begin(&o.j);
        json_key(&o.j, "versions");
        json_array_begin(&o.j);
    } else {
        printf("%-10s %-8s %s\n", "REVISION", "VERSION", "BYTES");
    }
    rc = dal_source_history(src, on_version, &o, &err);
    if (o.json) {
        json_array_end(&o.j);
        json_object_end(&o.j);
    }
    return rc != 0 ? cli_fail(&err) : CLI_OK;
}

/* ----------------------------------------------------------------- watch */

typedef struct watcher {
    const cli_t *cli;
    const dal_open_opts_t *opts;
    char *name, *text;   /* owned: the last accepted version; NULL before the first */
    size_t len;
} watcher_t;

static int keep(watcher_t *w, const char *name, const char *text, size_t len)
{
    free(w->name);
    free(w->text);
    w->name = strdup(name);
    w->text = malloc(len + 1);
    if (w->name == NULL || w->text == NULL)
        return -1;
    memcpy(w->text, text, len);
    w->text[len] = '\0';
    w->len = len;
    return 0;
}

/* One version: its changes against the last accepted one (the first is
 * only announced), or why it is rejected. */
static int on_follow(void *user, const char *name, const char *text, size_t len,
                     int64_t revision)
{
    watcher_t *w = user;
    cli_diff_out_t o;
    dal_error_t err = {0};
    int rc = 0;

    memset(&o, 0, sizeof o);
    o.json = w->cli->json;
    if (o.json) {
        json_init(&o.j, stdout);
        json_object_begin(&o.j);
        json_key(&o.j, "name");
        json_string(&o.j, name);
        json_key(&o.j, "revision");
        json_int(&o.j, revision);
        json_key(&o.j, "changes");
        json_array_begin(&o.j);
    } else {
        printf("# %s\n", name);
    }
    if (w->text != NULL)
        rc = dal_config_diff_text(w->name, w->text, w->len, name, text, len, w->opts,
                                  cli_diff_line, &o, &err);
    if (o.json) {
        json_array_end(&o.j);
        json_key(&o.j, "ok");
        json_bool(&o.j, rc == 0);
        if (rc != 0) {
            json_key(&o.j, "error");
            json_string(&o.j, err.message);
        }
        json_object_end(&o.j);
        putchar('\n');
    } else if (rc != 0) {
        printf("# %s rejected: %s\n", name, err.message);
    } else if (w->text != NULL && o.n == 0) {
        printf("no changes\n");
    }
    fflush(stdout);
    /* a rejected version is not what clients run: diff the next against
     * the last accepted one */
    return rc == 0 && keep(w, name, text, len) != 0;
}

static int do_watch(const cli_t *cli, const dal_open_opts_t *opts, dal_source_t *src)
{
    watcher_t w = {cli, opts, NULL, NULL, 0};
    dal_error_t err = {0};
    int rc = dal_source_follow(src, on_follow, &w, &err);

    free(w.name);
    free(w.text);
    return rc != 0 ? cli_fail(&err) : CLI_FAIL; /* follow ends only on an error */
}

int cmd_config(cli_t *cli)
{
    dal_open_opts_t opts;
    dal_error_t err = {0};
    dal_source_t *src = NULL;
    config_args_t a;
    int rc = parse_args(cli, &a);

    if (rc != CLI_OK)
        return rc;
    if (strcmp(a.sub, "push") != 0 && strcmp(a.sub, "get") != 0 &&
        strcmp(a.sub, "history") != 0 && strcmp(a.sub, "watch") != 0)
        return cli_usage(cli, "config: unknown subcommand '%s' (push, get, history, watch)",
                         a.sub);
    cli_open_opts(cli, &opts);
    if (dal_source_open(a.url, &opts, &src, &err) != 0)
        return cli_fail(&err);
    if (strcmp(a.sub, "push") == 0)
        rc = do_push(cli, &a, &opts, src);
    else if (strcmp(a.sub, "get") == 0)
        rc = do_get(cli, &a, src);
    else if (strcmp(a.sub, "history") == 0)
        rc = do_history(cli, src);
    else
        rc = do_watch(cli, &opts, src);
    dal_source_close(src);
    return rc;
}
