/*
 * params.c -- plugin parameters: checking INI keys against a plugin's
 * declared parameters, and the getters of the host API.
 *
 * Values are converted once, when the snapshot is built, so a getter on the
 * statement path is a lookup, never a parse.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plugin_load.h"

typedef struct param_value {
    const dal_param_spec_t *spec; /* borrowed from the loaded plugin */
    int set;                      /* given in the file (not a default) */
    char *text;                   /* owned; NULL if neither set nor defaulted */
    int64_t i;                    /* INT, BOOL, DURATION (ms) */
    double d;
    int64_t *list;                /* owned; INT_LIST */
    char **slist;                 /* owned strings; STRING_LIST */
    size_t nlist;
} param_value_t;

struct dal_plugin_params {
    param_value_t *items; /* owned, one per declared parameter */
    size_t n;
};

static const char *type_name(dal_param_type_t t)
{
    switch (t) {
    case DAL_PARAM_STRING: return "a string";
    case DAL_PARAM_INT: return "an integer";
    case DAL_PARAM_BOOL: return "a boolean (true/false)";
    case DAL_PARAM_DOUBLE: return "a number";
    case DAL_PARAM_DURATION: return "a duration (e.g. 500ms, 5s)";
    case DAL_PARAM_INT_LIST: return "a comma-separated list of integers";
    case DAL_PARAM_STRING_LIST: return "a comma-separated list";
    }
    return "?";
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int list_push(param_value_t *pv, size_t *cap, const char *item, int want_ints)
{
    if (pv->nlist == *cap) {
        size_t ncap = *cap * 2;
        void *p = want_ints ? realloc(pv->list, ncap * sizeof *pv->list)
                            : realloc(pv->slist, ncap * sizeof *pv->slist);
        if (p == NULL)
            return -1;
        if (want_ints)
            pv->list = p;
        else
            pv->slist = p;
        *cap = ncap;
    }
    if (want_ints)
        return parse_int64(item, &pv->list[pv->nlist++]);
    pv->slist[pv->nlist] = strdup(item);
    return pv->slist[pv->nlist++] == NULL ? -1 : 0;
}

/* Split text on commas into trimmed items; ints are parsed if want_ints.
 * An empty item ("1,,2", a trailing comma) is an error, not skipped: it is
 * almost always a typo in a list whose length matters (range bounds). */
static int split_list(param_value_t *pv, const char *text, int want_ints)
{
    char *copy = strdup(text), *p, *comma;
    size_t cap = 8;
    int rc = -1;

    pv->list = want_ints ? calloc(cap, sizeof *pv->list) : NULL;
    pv->slist = want_ints ? NULL : calloc(cap, sizeof *pv->slist);
    if (copy == NULL || (pv->list == NULL && pv->slist == NULL))
        goto done;
    for (p = copy; p != NULL; p = comma ? comma + 1 : NULL) {
        char *item;

        comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        item = trim(p);
        if (*item == '\0' || list_push(pv, &cap, item, want_ints) != 0) {
            pv->nlist = want_ints ? 0 : pv->nlist;
            goto done;
        }
    }
    rc = 0;
done:
    free(copy);
    return rc;
}

static int convert(param_value_t *pv)
{
    const char *t = pv->text;
    char *end;
    int b;

    switch (pv->spec->type) {
    case DAL_PARAM_STRING:
        return 0;
    case DAL_PARAM_INT:
        return parse_int64(t, &pv->i);
    case DAL_PARAM_BOOL:
        if (parse_bool(t, &b) != 0)
            return -1;
        pv->i = b;
        return 0;
    case DAL_PARAM_DOUBLE:
        pv->d = strtod(t, &end);
        return end == t || *trim(end) != '\0' ? -1 : 0;
    case DAL_PARAM_DURATION:
        return parse_duration_ms(t, &pv->i);
    case DAL_PARAM_INT_LIST:
        return split_list(pv, t, 1);
    case DAL_PARAM_STRING_LIST:
        return split_list(pv, t, 0);
    }
    return -1;
}

static void describe_accepted(const dal_param_spec_t *specs, const char *role, char *out,
                              size_t cap)
{
    size_t len = 0;

    out[0] = '\0';
    for (; specs && specs->name; specs++) {
        int n = snprintf(out + len, cap - len, "%s%s.%s", len ? ", " : "", role, specs->name);
        if (n < 0 || (size_t)n >= cap - len)
            return;
        len += (size_t)n;
    }
    if (len == 0)
        snprintf(out, cap, "none");
}

static size_t count_specs(const dal_param_spec_t *specs)
{
    size_t n = 0;

    while (specs && specs[n].name)
        n++;
    return n;
}

/* Find the INI key for spec name, rejecting keys the plugin did not declare. */
static int check_undeclared(const dal_plugin_lib_t *lib, const char *role,
                            const dal_cfg_params_t *cfg, const char *file, dal_error_t *err)
{
    const dal_param_spec_t *specs = lib->desc->params;
    size_t i, j, n = count_specs(specs);
    char accepted[400];

    for (i = 0; i < cfg->n; i++) {
        for (j = 0; j < n; j++)
            if (strcmp(specs[j].name, cfg->items[i].name) == 0)
                break;
        if (j < n)
            continue;
        describe_accepted(specs, role, accepted, sizeof accepted);
        return err_set(err, DAL_ECONFIG,
                       "%s:%d: %s.%s: %s plugin '%s' has no parameter '%s' (accepted: %s)",
                       file, cfg->items[i].line, role, cfg->items[i].name,
                       plugin_kind_name(lib->desc->kind), lib->desc->name,
                       cfg->items[i].name, accepted);
    }
    return 0;
}

static int fill_one(param_value_t *pv, const dal_plugin_lib_t *lib, const char *role,
                    const dal_cfg_params_t *cfg, const char *file, int section_line,
                    dal_error_t *err)
{
    const dal_cfg_param_t *given = NULL;
    char q[DAL_CFG_QUOTE_SIZE];
    size_t i;

    for (i = 0; i < cfg->n; i++)
        if (strcmp(cfg->items[i].name, pv->spec->name) == 0)
            given = &cfg->items[i];
    if (given == NULL && pv->spec->required)
        return err_set(err, DAL_ECONFIG, "%s:%d: %s plugin '%s' needs %s.%s (%s)", file,
                       section_line, plugin_kind_name(lib->desc->kind), lib->desc->name,
                       role, pv->spec->name, type_name(pv->spec->type));
    pv->set = given != NULL;
    if (given == NULL && pv->spec->default_value == NULL)
        return 0;
    pv->text = strdup(given ? given->value : pv->spec->default_value);
    if (pv->text == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    if (convert(pv) == 0)
        return 0;
    if (given == NULL)
        return err_set(err, DAL_EPLUGIN, "%s: default of parameter '%s' is not %s",
                       lib->path, pv->spec->name, type_name(pv->spec->type));
    return err_set(err, DAL_ECONFIG, "%s:%d: %s.%s: expected %s, got '%s'", file,
                   given->line, role, pv->spec->name, type_name(pv->spec->type),
                   config_quote(given->value, q));
}

int plugin_params_build(const dal_plugin_lib_t *lib, const char *role,
                        const dal_cfg_params_t *cfg, const char *file, int section_line,
                        dal_plugin_params_t **out, dal_error_t *err)
{
    dal_plugin_params_t *p = NULL;
    size_t i;
    int rc;

    *out = NULL;
    rc = check_undeclared(lib, role, cfg, file, err);
    if (rc != 0)
        return rc;
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return err_set(err, DAL_ENOMEM, "out of memory");
    p->n = count_specs(lib->desc->params);
    p->items = calloc(p->n ? p->n : 1, sizeof *p->items);
    if (p->items == NULL) {
        rc = err_set(err, DAL_ENOMEM, "out of memory");
        goto fail;
    }
    for (i = 0; i < p->n; i++) {
        p->items[i].spec = &lib->desc->params[i];
        rc = fill_one(&p->items[i], lib, role, cfg, file, section_line, err);
        if (rc != 0)
            goto fail;
    }
    *out = p;
    return 0;
fail:
    plugin_params_free(p);
    return rc;
}

void plugin_params_free(dal_plugin_params_t *p)
{
    size_t i, j;

    if (p == NULL)
        return;
    for (i = 0; i < p->n; i++) {
        free(p->items[i].text);
        free(p->items[i].list);
        for (j = 0; p->items[i].slist && j < p->items[i].nlist; j++)
            free(p->items[i].slist[j]);
        free(p->items[i].slist);
    }
    free(p->items);
    free(p);
}

static const param_value_t *lookup(const dal_plugin_params_t *p, const char *name)
{
    size_t i;

    for (i = 0; p && i < p->n; i++)
        if (strcmp(p->items[i].spec->name, name) == 0)
            return p->items[i].text ? &p->items[i] : NULL;
    return NULL;
}

int params_is_set(const dal_plugin_params_t *p, const char *name)
{
    const param_value_t *v = lookup(p, name);

    return v != NULL && v->set;
}

const char *params_string(const dal_plugin_params_t *p, const char *name)
{
    const param_value_t *v = lookup(p, name);

    return v ? v->text : NULL;
}

int64_t params_int(const dal_plugin_params_t *p, const char *name)
{
    const param_value_t *v = lookup(p, name);

    return v ? v->i : 0;
}

int params_bool(const dal_plugin_params_t *p, const char *name)
{
    return params_int(p, name) != 0;
}

double params_double(const dal_plugin_params_t *p, const char *name)
{
    const param_value_t *v = lookup(p, name);

    return v ? v->d : 0.0;
}

int64_t params_duration_ms(const dal_plugin_params_t *p, const char *name)
{
    return params_int(p, name);
}

size_t params_int_list(const dal_plugin_params_t *p, const char *name, const int64_t **vals)
{
    const param_value_t *v = lookup(p, name);

    *vals = v ? v->list : NULL;
    return v ? v->nlist : 0;
}

size_t params_string_list(const dal_plugin_params_t *p, const char *name,
                          const char *const **vals)
{
    const param_value_t *v = lookup(p, name);

    *vals = v ? (const char *const *)v->slist : NULL;
    return v ? v->nlist : 0;
}
