/*
 * errmap.c -- dal's own refusals as server errors: a number and SQLSTATE
 * for what each is, so a driver classifies it as a server's error of that
 * kind would be (a statement that cannot run as written is a syntax or
 * access-rule error, 42000, which Connector/J does not retry), and 1105
 * ER_UNKNOWN_ERROR only where the client can do nothing about it.
 */
#include <stddef.h>

#include <dal/dal.h>

#include "errmap.h"

static const struct {
    int code;
    proxy_errno_t e;
} table[] = {
    {DAL_ESQL, {1064, "42000"}},         /* ER_PARSE_ERROR */
    {DAL_EUNSUPPORTED, {1235, "42000"}}, /* ER_NOT_SUPPORTED_YET */
    {DAL_EROUTE, {1235, "42000"}},       /* not routable as written: a retry gets the same */
    {DAL_ESHARD, {1264, "22003"}},       /* ER_WARN_DATA_OUT_OF_RANGE: the value, not the SQL */
    {DAL_EINVAL, {1210, "42000"}},       /* ER_WRONG_ARGUMENTS: a hint's or parameter's value; a
                                          * retry gets the same, so not the server's HY000 */
    {DAL_ESTATE, {1192, "25000"}},       /* ER_LOCK_OR_ACTIVE_TRANSACTION, invalid transaction state */
    {DAL_EPARTIAL, {1180, "HY000"}},     /* ER_ERROR_DURING_COMMIT */
    {DAL_ENOMEM, {1037, "HY001"}},       /* ER_OUTOFMEMORY */
    {DAL_ECONFIG, {1105, "HY000"}},      /* the proxy's own set-up: unknown to the client */
    {DAL_EPLUGIN, {1105, "HY000"}},
    {DAL_EIO, {1105, "HY000"}},
};

const proxy_errno_t *errmap_of(int code)
{
    static const proxy_errno_t unknown = {1105, "HY000"}; /* ER_UNKNOWN_ERROR */
    size_t i;

    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].code == code)
            return &table[i].e;
    return &unknown;
}
