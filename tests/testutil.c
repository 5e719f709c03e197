/*
 * testutil.c -- small helpers shared by the Check test programs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *path = NULL;

    if (asprintf(&path, "%s/daltest.XXXXXX", base && *base ? base : "/tmp") < 0 ||
        mkdtemp(path) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        abort();
    }
    return path;
}

char *tu_write(const char *dir, const char *name, const char *text)
{
    char *path = NULL;
    FILE *f;

    if (asprintf(&path, "%s/%s", dir, name) < 0)
        abort();
    f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        abort();
    }
    return path;
}

int tu_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = NULL;
    char buf[65536];
    size_t n;
    int rc = -1;

    if (in == NULL)
        return -1;
    out = fopen(to, "wb");
    if (out == NULL)
        goto done;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            goto done;
    rc = 0;
done:
    if (out != NULL && fclose(out) != 0)
        rc = -1;
    fclose(in);
    return rc;
}

const char *tu_env(const char *name)
{
    const char *v = getenv(name);

    if (v == NULL || *v == '\0') {
        fprintf(stderr, "FATAL: environment variable %s is not set (run the tests with "
                        "`make check`)\n", name);
        exit(1);
    }
    return v;
}

void tu_rmtree(const char *dir)
{
    char *cmd = NULL;

    if (dir == NULL || strncmp(dir, "/", 1) != 0 || strstr(dir, "daltest.") == NULL)
        return;
    if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0 && system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    free(cmd);
}
