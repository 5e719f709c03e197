/*
 * config_doc.c -- the key reference of docs/configuration.md, printed from
 * the key tables (core/config/config_keys.c), and the test that the committed page
 * matches them.
 *
 *   config_doc [FILE]           check: exit 0 if every generated block of
 *                               FILE is what the tables give, 1 if not
 *   config_doc --write [FILE]   rewrite those blocks in FILE (make config-doc)
 *
 * FILE defaults to $DAL_SRCDIR/docs/configuration.md (set by `make check`).
 * A block is the lines from "<!-- keys TITLE: ... -->" to "<!-- end keys -->",
 * TITLE being a section's title ("[datasource NAME]").  Only the tables are
 * generated; the prose around them stays written by hand.  Every section
 * kind must have exactly one block, so a new section is documented too.
 *
 * Exit status 99 (a hard error to automake) if the file cannot be read or
 * its blocks are malformed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define BEGIN_MARK "<!-- keys "
#define END_MARK "<!-- end keys -->"
#define FIXME_HINT "run `make config-doc` (tests/unit/config_doc --write docs/configuration.md) and commit the page"

#define MAX_SECTIONS 32

static int fail_hard(const char *fmt, ...) DAL_PRINTF(1, 2);

/* Report a malformed page or table (not a mere difference); returns 99. */
static int fail_hard(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "config_doc: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 99;
}

/* Text the Markdown table can hold: one line, no '|'. */
static int cell_ok(const char *s)
{
    return s == NULL || strpbrk(s, "|\n") == NULL;
}

static void put_words(FILE *out, const char *const *words, const char *last)
{
    int i;

    for (i = 0; words[i] != NULL; i++)
        fprintf(out, "%s`%s`", i == 0 ? "" : words[i + 1] == NULL ? last : ", ", words[i]);
}

static void put_duration(FILE *out, int64_t min)
{
    if (min > 1)
        fprintf(out, "a duration of at least %lldms", (long long)min);
    else
        fputs(min == 1 ? "a duration greater than 0" : "a duration", out);
}

/* The Value column: what the type and range say, then the row's help. */
static void put_value(FILE *out, const dal_cfg_key_t *k)
{
    const char *sep = "";

    switch (k->type) {
    case DAL_CFG_BOOL:
        fputs("boolean", out);
        sep = ": ";
        break;
    case DAL_CFG_DURATION:
        put_duration(out, k->min);
        sep = ": ";
        break;
    case DAL_CFG_ENUM:
        put_words(out, k->words, " or ");
        sep = ": ";
        break;
    case DAL_CFG_MODE:
        put_words(out, k->words, ", ");
        fputs(" or ", out);
        put_duration(out, k->min);
        sep = ": ";
        break;
    default:
        break;
    }
    if (k->help != NULL)
        fprintf(out, "%s%s", sep, k->help);
    if (k->type == DAL_CFG_COUNT)
        fprintf(out, ", %lld..%lld", (long long)k->min, (long long)k->max);
    if (k->required)
        fputs("; required", out);
}

static void put_key(FILE *out, const dal_cfg_key_t *k)
{
    if (k->type == DAL_CFG_PARAMS && k->name[0] == '\0')
        fputs("any other key", out);
    else if (k->type == DAL_CFG_PARAMS)
        fprintf(out, "`%sPARAM`", k->name);
    else
        fprintf(out, "`%s`", k->name);
}

/* The block of one section: markers and table.  0, or 99 for a row Markdown cannot hold. */
static int put_block(FILE *out, const dal_cfg_section_keys_t *sec)
{
    const dal_cfg_key_t *k;

    fprintf(out, BEGIN_MARK "%s: generated from core/config/config_keys.c by `make config-doc` -->\n", sec->title);
    fputs("| Key | Value | Default |\n|-----|-------|---------|\n", out);
    for (k = sec->keys; k->name != NULL; k++) {
        if (!cell_ok(k->help) || !cell_ok(k->unset) || !cell_ok(k->def))
            return fail_hard("key '%s': help, unset and def must be one line without '|'", k->name);
        fputs("| ", out);
        put_key(out, k);
        fputs(" | ", out);
        put_value(out, k);
        if (k->def != NULL)
            fprintf(out, " | `%s` |\n", k->def);
        else if (k->unset != NULL)
            fprintf(out, " | %s |\n", k->unset);
        else
            fputs(" | |\n", out);
    }
    fputs(END_MARK "\n", out);
    return 0;
}

static const dal_cfg_section_keys_t *section_of(const char *line)
{
    const dal_cfg_section_keys_t *sec;
    size_t n;

    line += strlen(BEGIN_MARK);
    for (sec = dal_cfg_sections; sec->word != NULL; sec++) {
        n = strlen(sec->title);
        if (strncmp(line, sec->title, n) == 0 && line[n] == ':')
            return sec;
    }
    return NULL;
}

/* Copy doc to out with each block regenerated.  0, or 99 with a message. */
static int regenerate(const char *path, char *doc, FILE *out)
{
    const dal_cfg_section_keys_t *sec;
    int seen[MAX_SECTIONS] = {0};
    char *line, *next;
    int rc, skipping = 0;

    for (sec = dal_cfg_sections; sec->word != NULL; sec++)
        if (sec - dal_cfg_sections >= MAX_SECTIONS)
            return fail_hard("more than %d sections: raise MAX_SECTIONS", MAX_SECTIONS);
    for (line = doc; *line != '\0'; line = next) {
        next = strchr(line, '\n');
        next = next != NULL ? next + 1 : line + strlen(line);
        if (skipping) {
            skipping = strncmp(line, END_MARK, strlen(END_MARK)) != 0;
            continue;
        }
        if (strncmp(line, BEGIN_MARK, strlen(BEGIN_MARK)) != 0) {
            fwrite(line, 1, (size_t)(next - line), out);
            continue;
        }
        sec = section_of(line);
        if (sec == NULL)
            return fail_hard("%s: a keys block names no section of the tables", path);
        if (seen[sec - dal_cfg_sections]++)
            return fail_hard("%s: two keys blocks for one section", path);
        rc = put_block(out, sec);
        if (rc != 0)
            return rc;
        skipping = 1;
    }
    if (skipping)
        return fail_hard("%s: a keys block has no \"" END_MARK "\" line", path);
    for (sec = dal_cfg_sections; sec->word != NULL; sec++)
        if (!seen[sec - dal_cfg_sections]) {
            fprintf(stderr, "config_doc: %s: no keys block for %s; add the two lines\n"
                    BEGIN_MARK "%s: -->\n" END_MARK "\nwhere its table goes, then %s\n",
                    path, sec->title, sec->title, FIXME_HINT);
            return 1;
        }
    return 0;
}

static char *read_all(const char *path)
{
    FILE *fp = fopen(path, "r");
    char *text = NULL;
    size_t cap = 0;
    ssize_t n;

    if (fp == NULL)
        return NULL;
    n = getdelim(&text, &cap, '\0', fp);   /* the page holds no NUL: all of it */
    fclose(fp);
    if (n < 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Report the first line where have and want differ. */
static void report_diff(const char *path, const char *have, const char *want)
{
    int line = 1;
    size_t i;

    for (i = 0; have[i] != '\0' && have[i] == want[i]; i++)
        if (have[i] == '\n')
            line++;
    while (i > 0 && have[i - 1] != '\n')
        i--;
    fprintf(stderr, "config_doc: %s:%d: the key reference differs from core/config/config_keys.c\n"
            "  page:   %.*s\n  tables: %.*s\n%s\n", path, line,
            (int)strcspn(have + i, "\n"), have + i, (int)strcspn(want + i, "\n"), want + i, FIXME_HINT);
}

static int write_file(const char *path, const char *text)
{
    char *tmp = NULL;
    FILE *fp;
    int ok;

    if (asprintf(&tmp, "%s.tmp", path) < 0)
        return 99;
    fp = fopen(tmp, "w");
    ok = fp != NULL && fputs(text, fp) >= 0;
    ok = fp != NULL && fclose(fp) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        remove(tmp);
        fail_hard("cannot write %s", path);
    }
    free(tmp);
    return ok ? 0 : 99;
}

int main(int argc, char **argv)
{
    const char *srcdir = getenv("DAL_SRCDIR");
    char *path = NULL, *doc, *want = NULL;
    size_t wantlen = 0;
    int rewrite = argc > 1 && strcmp(argv[1], "--write") == 0;
    int rc;
    FILE *out;

    if (argc > 1 + rewrite)
        path = strdup(argv[1 + rewrite]);
    else if (srcdir == NULL || asprintf(&path, "%s/docs/configuration.md", srcdir) < 0)
        return fail_hard("%s", "usage: config_doc [--write] [FILE] (or set DAL_SRCDIR)");
    doc = read_all(path);
    if (doc == NULL)
        return fail_hard("cannot read %s", path);
    out = open_memstream(&want, &wantlen);
    if (out == NULL)
        return fail_hard("%s", "out of memory");
    rc = regenerate(path, doc, out);
    fclose(out);
    if (rc == 0 && rewrite)
        rc = write_file(path, want);
    else if (rc == 0 && strcmp(doc, want) != 0) {
        report_diff(path, doc, want);
        rc = 1;
    }
    free(want);
    free(doc);
    free(path);
    return rc;
}
