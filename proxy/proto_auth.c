/*
 * proto_auth.c -- the arithmetic of mysql_native_password and of
 * caching_sha2_password's fast path, on OpenSSL's SHA-1 and SHA-256.
 *
 * Comparisons of secrets go through CRYPTO_memcmp, whose time does not
 * depend on where the bytes differ, so a client cannot learn a hash byte
 * by byte from response times.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "proto_int.h"

int proto_scramble_generate(uint8_t out[PROTO_SCRAMBLE_LEN])
{
    if (RAND_bytes(out, PROTO_SCRAMBLE_LEN) != 1)
        return PROTO_ENOMEM;
    /* Printable ASCII ('!'..'~'): no NUL, which would end the second part
     * of the scramble in the handshake; 94^20 is still ~131 bits. */
    for (size_t i = 0; i < PROTO_SCRAMBLE_LEN; i++)
        out[i] = (uint8_t)('!' + out[i] % 94);
    return 0;
}

/* SHA1(a + b) of two short pieces (a scramble and a digest). */
static void sha1_pair(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, uint8_t *out)
{
    uint8_t tmp[PROTO_SCRAMBLE_LEN + PROTO_SHA256_LEN];
    memcpy(tmp, a, an);
    memcpy(tmp + an, b, bn);
    SHA1(tmp, an + bn, out);
}

static void sha256_pair(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, uint8_t *out)
{
    uint8_t tmp[PROTO_SCRAMBLE_LEN + PROTO_SHA256_LEN];
    memcpy(tmp, a, an);
    memcpy(tmp + an, b, bn);
    SHA256(tmp, an + bn, out);
}

static void xor_into(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = a[i] ^ b[i];
}

/* ==================================================== mysql_native_password */

void proto_native_stage2(const char *password, size_t len, uint8_t out[PROTO_SHA1_LEN])
{
    uint8_t stage1[PROTO_SHA1_LEN];
    SHA1((const unsigned char *)password, len, stage1);
    SHA1(stage1, sizeof stage1, out);
    OPENSSL_cleanse(stage1, sizeof stage1);
}

void proto_native_hash_text(const char *password, size_t len, char out[42])
{
    static const char hex[] = "0123456789ABCDEF";
    uint8_t stage2[PROTO_SHA1_LEN];
    proto_native_stage2(password, len, stage2);
    out[0] = '*';
    for (size_t i = 0; i < PROTO_SHA1_LEN; i++) {
        out[1 + 2 * i] = hex[stage2[i] >> 4];
        out[2 + 2 * i] = hex[stage2[i] & 15];
    }
    out[41] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int proto_native_hash_parse(const char *text, uint8_t out[PROTO_SHA1_LEN])
{
    if (!text || text[0] != '*' || strlen(text) != 41)
        return PROTO_EINVAL;
    for (size_t i = 0; i < PROTO_SHA1_LEN; i++) {
        int hi = hex_digit(text[1 + 2 * i]), lo = hex_digit(text[2 + 2 * i]);
        if (hi < 0 || lo < 0)
            return PROTO_EINVAL;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void proto_native_scramble(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const char *password,
                           size_t len, uint8_t out[PROTO_SHA1_LEN])
{
    uint8_t stage1[PROTO_SHA1_LEN], stage2[PROTO_SHA1_LEN], mask[PROTO_SHA1_LEN];
    SHA1((const unsigned char *)password, len, stage1);
    SHA1(stage1, sizeof stage1, stage2);
    sha1_pair(scramble, PROTO_SCRAMBLE_LEN, stage2, sizeof stage2, mask);
    xor_into(out, stage1, mask, PROTO_SHA1_LEN);
    OPENSSL_cleanse(stage1, sizeof stage1);
}

/* The response XOR SHA1(scramble + stage2) is the client's claimed
 * SHA1(password); its SHA1 must be stage 2. */
bool proto_native_verify(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const void *response,
                         size_t response_len, const uint8_t stage2[PROTO_SHA1_LEN])
{
    if (!stage2)
        return response_len == 0;
    if (response_len != PROTO_SHA1_LEN)
        return false;
    uint8_t mask[PROTO_SHA1_LEN], stage1[PROTO_SHA1_LEN], check[PROTO_SHA1_LEN];
    sha1_pair(scramble, PROTO_SCRAMBLE_LEN, stage2, PROTO_SHA1_LEN, mask);
    xor_into(stage1, response, mask, PROTO_SHA1_LEN);
    SHA1(stage1, sizeof stage1, check);
    bool ok = CRYPTO_memcmp(check, stage2, PROTO_SHA1_LEN) == 0;
    OPENSSL_cleanse(stage1, sizeof stage1);
    return ok;
}

bool proto_native_verify_password(const char *password, size_t len,
                                  const uint8_t stage2[PROTO_SHA1_LEN])
{
    uint8_t check[PROTO_SHA1_LEN];
    proto_native_stage2(password, len, check);
    bool ok = CRYPTO_memcmp(check, stage2, PROTO_SHA1_LEN) == 0;
    OPENSSL_cleanse(check, sizeof check);
    return ok;
}

/* ================================================== caching_sha2_password */

void proto_sha2_stage2(const char *password, size_t len, uint8_t out[PROTO_SHA256_LEN])
{
    uint8_t stage1[PROTO_SHA256_LEN];
    SHA256((const unsigned char *)password, len, stage1);
    SHA256(stage1, sizeof stage1, out);
    OPENSSL_cleanse(stage1, sizeof stage1);
}

void proto_sha2_scramble(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const char *password,
                         size_t len, uint8_t out[PROTO_SHA256_LEN])
{
    uint8_t stage1[PROTO_SHA256_LEN], stage2[PROTO_SHA256_LEN], mask[PROTO_SHA256_LEN];
    SHA256((const unsigned char *)password, len, stage1);
    SHA256(stage1, sizeof stage1, stage2);
    /* The digest first, then the scramble: the reverse of native's order. */
    sha256_pair(stage2, sizeof stage2, scramble, PROTO_SCRAMBLE_LEN, mask);
    xor_into(out, stage1, mask, PROTO_SHA256_LEN);
    OPENSSL_cleanse(stage1, sizeof stage1);
}

bool proto_sha2_verify(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const void *response,
                       size_t response_len, const uint8_t stage2[PROTO_SHA256_LEN])
{
    if (!stage2)
        return response_len == 0;
    if (response_len != PROTO_SHA256_LEN)
        return false;
    uint8_t mask[PROTO_SHA256_LEN], stage1[PROTO_SHA256_LEN], check[PROTO_SHA256_LEN];
    sha256_pair(stage2, PROTO_SHA256_LEN, scramble, PROTO_SCRAMBLE_LEN, mask);
    xor_into(stage1, response, mask, PROTO_SHA256_LEN);
    SHA256(stage1, sizeof stage1, check);
    bool ok = CRYPTO_memcmp(check, stage2, PROTO_SHA256_LEN) == 0;
    OPENSSL_cleanse(stage1, sizeof stage1);
    return ok;
}

bool proto_sha2_verify_password(const uint8_t scramble[PROTO_SCRAMBLE_LEN],
                                const void *response, size_t response_len,
                                const char *password, size_t len)
{
    if (len == 0)
        return proto_sha2_verify(scramble, response, response_len, NULL);
    uint8_t stage2[PROTO_SHA256_LEN];
    proto_sha2_stage2(password, len, stage2);
    bool ok = proto_sha2_verify(scramble, response, response_len, stage2);
    OPENSSL_cleanse(stage2, sizeof stage2);
    return ok;
}
