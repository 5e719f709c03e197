/*
 * gtid.c -- MariaDB global transaction ids.
 */
#include <string.h>

#include "gtid.h"

/* Digits at *p (advanced), at most max; -1 without any or on overflow. */
static int number(const char **p, const char *end, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;

    for (; *p < end && **p >= '0' && **p <= '9'; (*p)++) {
        unsigned d = (unsigned)(**p - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return *p > s ? 0 : -1;
}

int gtid_parse(const char *text, size_t len, dal_gtid_t *out)
{
    const char *p = text, *end = text + len;
    uint64_t d, s, n;

    if (number(&p, end, UINT32_MAX, &d) != 0 || p == end || *p++ != '-' ||
        number(&p, end, UINT32_MAX, &s) != 0 || p == end || *p++ != '-' ||
        number(&p, end, UINT64_MAX, &n) != 0 || p != end)
        return -1;
    out->domain = (uint32_t)d;
    out->server = (uint32_t)s;
    out->seq = n;
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int gtid_pos_parse(const char *text, size_t len, dal_gtid_pos_t *out)
{
    const char *p = text, *end = text + len;

    out->n = 0;
    while (p < end) {
        const char *s, *e;
        while (p < end && (is_blank(*p) || *p == ','))
            p++;
        if (p == end)
            break;
        for (s = p; p < end && *p != ','; p++)
            ;
        for (e = p; e > s && is_blank(e[-1]); e--)
            ;
        if (out->n == DAL_GTID_DOMAINS_MAX || gtid_parse(s, (size_t)(e - s), &out->g[out->n]))
            return -1;
        out->n++;
    }
    return 0;
}

int gtid_pos_covers(const dal_gtid_pos_t *pos, const dal_gtid_t *g)
{
    unsigned int i;

    for (i = 0; i < pos->n; i++)
        if (pos->g[i].domain == g->domain)
            return pos->g[i].seq >= g->seq;
    return 0;
}
