/*
 * main.c -- the dal-proxy program: options, configuration, signals.
 */
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

static const char usage_text[] =
    "Usage: dal-proxy -c FILE [--listen HOST:PORT] [--threads N] [--plugin-dir DIR]\n"
    "       dal-proxy -c FILE --check\n"
    "\n"
    "Serve dal over the MySQL protocol: clients (the mariadb client, JDBC, Go,\n"
    "Python and Node drivers, sysbench) connect to dal-proxy as to a MySQL\n"
    "server and write SQL against the logical tables of FILE; dal routes it.\n"
    "\n"
    "  -c, --config FILE   the dal configuration; its [proxy] and [proxy user NAME]\n"
    "                      sections say where to listen and who may connect\n"
    "  --listen HOST:PORT  listen here instead of [proxy] listen\n"
    "  --threads N         I/O threads instead of [proxy] threads (0: one per core)\n"
    "  --plugin-dir DIR    plugin directory (overrides $DAL_PLUGIN_DIR)\n"
    "  --check             validate FILE as `dal check` does, see that its listen\n"
    "                      addresses are free (no dal-proxy there), and exit\n"
    "  -h, --help          this text\n"
    "\n"
    "Signals: SIGTERM and SIGINT stop accepting, let running statements finish,\n"
    "and exit; SIGHUP reloads FILE (routing, datasources and users; listen\n"
    "addresses, threads and TLS files are read at start).  See docs/proxy.md.\n";

typedef struct options {
    const char *config, *listen, *plugin_dir;
    long threads;   /* -1: from the file */
    int check;
} options_t;

static int parse_options(int argc, char **argv, options_t *o)
{
    static const struct option longs[] = {
        {"config", required_argument, NULL, 'c'}, {"listen", required_argument, NULL, 'l'},
        {"threads", required_argument, NULL, 't'}, {"plugin-dir", required_argument, NULL, 'p'},
        {"check", no_argument, NULL, 'k'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    int ch;
    char *end;

    memset(o, 0, sizeof *o);
    o->threads = -1;
    o->config = getenv("DAL_CONFIG");
    while ((ch = getopt_long(argc, argv, "c:h", longs, NULL)) != -1) {
        switch (ch) {
        case 'c': o->config = optarg; break;
        case 'l': o->listen = optarg; break;
        case 'p': o->plugin_dir = optarg; break;
        case 'k': o->check = 1; break;
        case 't':
            o->threads = strtol(optarg, &end, 10);
            if (*end != '\0' || o->threads < 0 || o->threads > 256) {
                fprintf(stderr, "dal-proxy: --threads: expected 0..256, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h': fputs(usage_text, stdout); exit(0);
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (optind < argc || o->config == NULL) {
        fprintf(stderr, "dal-proxy: %s\n", o->config == NULL ? "no configuration: -c FILE"
                                                            : "unexpected argument");
        return 2;
    }
    return 0;
}

/* The thread that takes the signals (blocked in every other thread). */
static void *signals_main(void *arg)
{
    proxy_t *px = arg;
    sigset_t set;
    dal_error_t err;
    int sig;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            if (dal_reload(px->dal, &err) != 0)
                fprintf(stderr, "dal-proxy: reload failed, the running configuration stays: "
                        "%s\n", err.message);
            continue;
        }
        proxy_stop(px);
        return NULL;
    }
}

/* The TLS context of [proxy] tls_cert/tls_key into px->tls (NULL without
 * them): 0, or -1 with a message naming config. */
static int load_tls(proxy_t *px, const dal_proxy_info_t *info, const char *config)
{
    const char *cert = dal_proxy_info_tls_cert(info), *key = dal_proxy_info_tls_key(info);
    char msg[512];

    px->require_tls = dal_proxy_info_require_tls(info) != 0;
    if (cert == NULL || key == NULL)
        return 0;
    if ((px->tls = tls_context_new(cert, key, msg, sizeof msg)) == NULL) {
        fprintf(stderr, "dal-proxy: %s: [proxy] %s\n", config, msg);
        return -1;
    }
    return 0;
}

/* What `dal check` checks (the TLS files readable and PEM of the right
 * kind, at their lines); whether the key is the certificate's is known
 * when dal-proxy starts, since checking opens no datasource or monitor. */
/* How much of a location may be printed: a store URL's ?OPTIONS may hold
 * a password. */
static int shown(const char *config)
{
    return (int)(strstr(config, "://") ? strcspn(config, "?") : strlen(config));
}

/* The configuration, then whether its listen addresses (or listen, when
 * given) are free: a dal-proxy already serving there is reported as when
 * starting. */
static int check_only(const char *config, const char *listen, const dal_open_opts_t *opts)
{
    dal_error_t err;
    dal_t *dal = NULL;
    dal_proxy_info_t *info = NULL;
    int rc = 0;

    if (dal_check_config(config, opts, &err) != 0 || dal_open(config, opts, &dal, &err) != 0 ||
        dal_proxy_info(dal, &info, &err) != 0) {
        fprintf(stderr, "dal-proxy: %s\n", err.message);
        dal_close(dal);
        return 1;
    }
    if (proxy_listen_check(listen != NULL ? listen : dal_proxy_info_listen(info)) != 0)
        rc = 1;
    dal_proxy_info_free(info);
    dal_close(dal);
    if (rc == 0)
        printf("%.*s: ok\n", shown(config), config);
    return rc;
}

/* Warn of a proxy nobody can log in to, block the signals every thread
 * made from here on inherits (one thread takes them), and serve until
 * told to stop: 0, or 1 when serving failed. */
static int serve(proxy_t *px, const options_t *o, dal_proxy_info_t *info)
{
    pthread_t sigthread;
    sigset_t set;

    if (px->nusers == 0)
        fprintf(stderr, "dal-proxy: warning: no [proxy user NAME] in %.*s: nobody can connect\n",
                shown(o->config), o->config);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_create(&sigthread, NULL, signals_main, px);
    pthread_detach(sigthread);
    return proxy_serve(px, o->listen ? o->listen : dal_proxy_info_listen(info),
                       o->threads >= 0 ? (unsigned)o->threads : dal_proxy_info_threads(info)) != 0;
}

/*
 * Big blocks always from mmap: freed, they go back to the system at once.
 * glibc's default raises the threshold after the first big free (up to
 * 32 MB), after which the packets and replies of big statements come from
 * the heap, and the heap keeps what the clients that left had.
 */
#define MMAP_THRESHOLD (256 * 1024)

int main(int argc, char **argv)
{
    options_t o;
    dal_open_opts_t opts;
    dal_proxy_info_t *info = NULL;
    dal_error_t err;
    proxy_t px;
    int rc = parse_options(argc, argv, &o);

    if (rc != 0)
        return rc;
    memset(&opts, 0, sizeof opts);
    opts.plugin_dir = o.plugin_dir;
    if (o.check)
        return check_only(o.config, o.listen, &opts);
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    memset(&px, 0, sizeof px);
    if (dal_open(o.config, &opts, &px.dal, &err) != 0 || dal_proxy_info(px.dal, &info, &err) != 0) {
        fprintf(stderr, "dal-proxy: %s\n", err.message);
        dal_close(px.dal);
        return 1;
    }
    px.max_connections = dal_proxy_info_max_connections(info);
    px.inline_io = dal_proxy_info_inline_io(info) != 0;
    px.max_allowed_packet = dal_proxy_info_max_allowed_packet(info);
    px.connect_timeout_ms = dal_proxy_info_connect_timeout(info);
    if ((px.database = strdup(dal_proxy_info_database(info))) == NULL || users_load(&px) != 0) {
        fprintf(stderr, "dal-proxy: out of memory\n");
        return 1;
    }
    ident_load(&px);
    rc = load_tls(&px, info, o.config) != 0;
    if (rc == 0 && (px.guard = guard_new(dal_proxy_info_auth_delay_after(info),
                                         dal_proxy_info_auth_delay_max_ms(info))) == NULL) {
        fprintf(stderr, "dal-proxy: out of memory\n");
        rc = 1;
    }
    if (rc == 0)
        rc = serve(&px, &o, info);
    /* also on a refused start: a sanitizer build reports nothing left */
    dal_proxy_info_free(info);
    tls_context_free(px.tls);
    guard_free(px.guard);
    users_free(&px);
    ident_free(&px);
    free(px.database);
    dal_close(px.dal);
    return rc == 0 ? 0 : 1;
}
