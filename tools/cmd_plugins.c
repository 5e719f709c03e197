/*
 * cmd_plugins.c -- `dal plugins`: what is in the plugin directory.
 *
 * Every *.so is loaded by the library exactly as dal_open would load it, so
 * a file shown as rejected here would also stop dal_open, with the same
 * reason.  The scan is collected before anything is printed: the table needs
 * every row for its widths, and a directory that cannot be read must not
 * leave half a JSON document behind.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The fields of dal_plugin_info_t, copied (they are borrowed for the
 * callback only).  Order matters: the JSON keys follow it. */
enum { F_FILE, F_KIND, F_NAME, F_VERSION, F_DESCRIPTION, F_ERROR, NFIELDS };

static const char *const field_names[NFIELDS] = {
    "file", "kind", "name", "version", "description", "error"
};

typedef struct plugin_row {
    char *f[NFIELDS]; /* owned; NULL where the library gave NULL */
} plugin_row_t;

typedef struct plugin_list {
    plugin_row_t *rows; /* owned */
    size_t n, cap;
    int nomem;          /* a copy failed: report once the scan returns */
} plugin_list_t;

static char *copy(const char *s, int *nomem)
{
    char *d;

    if (s == NULL)
        return NULL;
    d = strdup(s);
    if (d == NULL)
        *nomem = 1;
    return d;
}

static void on_plugin(void *user, const dal_plugin_info_t *info)
{
    plugin_list_t *l = user;
    plugin_row_t *row;

    if (l->nomem)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;

        row = realloc(l->rows, cap * sizeof *row);
        if (row == NULL) {
            l->nomem = 1;
            return;
        }
        l->rows = row;
        l->cap = cap;
    }
    row = &l->rows[l->n++];
    row->f[F_FILE] = copy(info->file, &l->nomem);
    row->f[F_KIND] = copy(info->kind, &l->nomem);
    row->f[F_NAME] = copy(info->name, &l->nomem);
    row->f[F_VERSION] = copy(info->version, &l->nomem);
    row->f[F_DESCRIPTION] = copy(info->description, &l->nomem);
    row->f[F_ERROR] = copy(info->error, &l->nomem);
}

static void list_free(plugin_list_t *l)
{
    size_t i, k;

    for (i = 0; i < l->n; i++)
        for (k = 0; k < NFIELDS; k++)
            free(l->rows[i].f[k]);
    free(l->rows);
}

static void print_json(const plugin_list_t *l, const char *dir)
{
    size_t i, k;
    json_t j;

    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "dir");
    json_string(&j, dir);
    json_key(&j, "plugins");
    json_array_begin(&j);
    for (i = 0; i < l->n; i++) {
        json_object_begin(&j);
        for (k = 0; k < NFIELDS; k++) {
            json_key(&j, field_names[k]);
            json_string(&j, l->rows[i].f[k]);
        }
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
}

static int add_cell(cli_table_t *t, const char *s, dal_error_t *err)
{
    if (s == NULL)
        s = "-";
    return cli_table_add(t, s, strlen(s), err);
}

/* The reason without the "FILE: " it starts with: the row names the file. */
static const char *reason(const plugin_row_t *row)
{
    const char *e = row->f[F_ERROR];
    size_t n = strlen(row->f[F_FILE]);

    if (strncmp(e, row->f[F_FILE], n) == 0 && e[n] == ':' && e[n + 1] == ' ')
        return e + n + 2;
    return e;
}

/* The directory is the same for every file, so the table shows base names. */
static int add_row(cli_table_t *t, const plugin_row_t *row, dal_error_t *err)
{
    const char *file = strrchr(row->f[F_FILE], '/');
    const char *what = row->f[F_ERROR] ? reason(row) : row->f[F_DESCRIPTION];
    char *rejected = NULL;
    int rc;

    if (row->f[F_ERROR] != NULL) {
        size_t n = strlen(what) + sizeof "rejected: ";

        rejected = malloc(n);
        if (rejected == NULL)
            return cli_set_error(err, DAL_ENOMEM, "out of memory");
        snprintf(rejected, n, "rejected: %s", what);
        what = rejected;
    }
    rc = add_cell(t, row->f[F_KIND], err);
    if (rc == 0)
        rc = add_cell(t, row->f[F_NAME], err);
    if (rc == 0)
        rc = add_cell(t, row->f[F_VERSION], err);
    if (rc == 0)
        rc = add_cell(t, file ? file + 1 : row->f[F_FILE], err);
    if (rc == 0)
        rc = add_cell(t, what, err);
    free(rejected);
    return rc;
}

static int print_table(const plugin_list_t *l, const char *dir, dal_error_t *err)
{
    static const char *const header[] = { "KIND", "NAME", "VERSION", "FILE", "DESCRIPTION" };
    const size_t ncols = sizeof header / sizeof header[0];
    cli_table_t t;
    size_t i;
    int rc;

    if (l->n == 0) {
        printf("no plugins in %s\n", dir);
        return 0;
    }
    rc = cli_table_init(&t, ncols, err);
    for (i = 0; i < ncols && rc == 0; i++)
        rc = add_cell(&t, header[i], err);
    for (i = 0; i < l->n && rc == 0; i++)
        rc = add_row(&t, &l->rows[i], err);
    if (rc == 0)
        cli_table_print(&t, stdout, 0);
    cli_table_free(&t);
    return rc;
}

int cmd_plugins(cli_t *cli)
{
    plugin_list_t list = { 0 };
    dal_error_t err = { 0 };
    const char *dir = cli->plugin_dir;
    int rc;

    /* Resolved here, not left to the library, so the output can name it. */
    if (dir == NULL || dir[0] == '\0')
        dir = getenv("DAL_PLUGIN_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = dal_default_plugin_dir();

    rc = dal_plugins_scan(dir, on_plugin, &list, &err);
    if (rc >= 0 && list.nomem)
        rc = cli_set_error(&err, DAL_ENOMEM, "out of memory");
    if (rc < 0)
        goto out;
    if (cli->json)
        print_json(&list, dir);
    else
        rc = print_table(&list, dir, &err);
out:
    list_free(&list);
    return rc < 0 ? cli_fail(&err) : CLI_OK;
}
