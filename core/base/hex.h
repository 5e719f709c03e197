/*
 * hex.h -- the value of one hexadecimal digit (URL %XX escapes, SQL X'..'
 * literals).
 */
#ifndef DAL_CORE_HEX_H
#define DAL_CORE_HEX_H

/* 0..15, or -1 if c is not a hex digit. */
static inline int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif /* DAL_CORE_HEX_H */
