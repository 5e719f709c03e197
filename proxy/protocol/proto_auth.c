/*
 * proto_auth.c -- the arithmetic of mysql_native_password and of
 * caching_sha2_password's fast path, on OpenSSL's SHA-1 and SHA-256.
 *
 * Comparisons of secrets go through CRYPTO_memcmp, whose time does not
 * depend on where the bytes differ, so a client cannot learn a hash byte
 * by byte from response times.
 */
#include <stdlib.h>
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

/*
 * The two plugins share their arithmetic: stage 1 is H(password), stage 2
 * H(stage 1), and a client sends stage 1 XOR H(scramble and stage 2).
 * They differ in the hash H and in the order of the scramble and the
 * digest under that last H.
 */
typedef struct scheme {
    unsigned char *(*hash)(const unsigned char *d, size_t n, unsigned char *md);
    size_t len;          /* the digest's */
    bool digest_first;   /* caching_sha2: H(stage 2 + scramble) */
} scheme_t;

static const scheme_t native = {SHA1, PROTO_SHA1_LEN, false};
static const scheme_t sha2 = {SHA256, PROTO_SHA256_LEN, true};

static void xor_into(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = a[i] ^ b[i];
}

static void stage2_of(const scheme_t *s, const char *password, size_t len, uint8_t *out)
{
    uint8_t stage1[PROTO_SHA256_LEN];
    s->hash((const unsigned char *)password, len, stage1);
    s->hash(stage1, s->len, out);
    OPENSSL_cleanse(stage1, sizeof stage1);
}

/* What stage 1 is XORed with: H of the scramble and stage 2. */
static void mask_of(const scheme_t *s, const uint8_t scramble[PROTO_SCRAMBLE_LEN],
                    const uint8_t *stage2, uint8_t *out)
{
    uint8_t tmp[PROTO_SCRAMBLE_LEN + PROTO_SHA256_LEN];
    memcpy(tmp + (s->digest_first ? 0 : PROTO_SCRAMBLE_LEN), stage2, s->len);
    memcpy(tmp + (s->digest_first ? s->len : 0), scramble, PROTO_SCRAMBLE_LEN);
    s->hash(tmp, PROTO_SCRAMBLE_LEN + s->len, out);
}

static void scramble_of(const scheme_t *s, const uint8_t scramble[PROTO_SCRAMBLE_LEN],
                        const char *password, size_t len, uint8_t *out)
{
    uint8_t stage1[PROTO_SHA256_LEN], stage2[PROTO_SHA256_LEN], mask[PROTO_SHA256_LEN];
    s->hash((const unsigned char *)password, len, stage1);
    s->hash(stage1, s->len, stage2);
    mask_of(s, scramble, stage2, mask);
    xor_into(out, stage1, mask, s->len);
    OPENSSL_cleanse(stage1, sizeof stage1);
}

/* The response XOR the mask is the client's claimed stage 1; its hash
 * must be stage 2.  No stage 2: an account without a password, which
 * takes an empty response only. */
static bool verify_with(const scheme_t *s, const uint8_t scramble[PROTO_SCRAMBLE_LEN],
                        const void *response, size_t response_len, const uint8_t *stage2)
{
    if (!stage2)
        return response_len == 0;
    if (response_len != s->len)
        return false;
    uint8_t mask[PROTO_SHA256_LEN], stage1[PROTO_SHA256_LEN], check[PROTO_SHA256_LEN];
    mask_of(s, scramble, stage2, mask);
    xor_into(stage1, response, mask, s->len);
    s->hash(stage1, s->len, check);
    bool ok = CRYPTO_memcmp(check, stage2, s->len) == 0;
    OPENSSL_cleanse(stage1, sizeof stage1);
    return ok;
}

/* ==================================================== mysql_native_password */

void proto_native_stage2(const char *password, size_t len, uint8_t out[PROTO_SHA1_LEN])
{
    stage2_of(&native, password, len, out);
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

int proto_native_hash_parse(const char *text, uint8_t out[PROTO_SHA1_LEN])
{
    /* every digit checked first: strtoul alone would take a sign or a
     * space */
    if (!text || text[0] != '*' || strlen(text) != 41 ||
        strspn(text + 1, "0123456789abcdefABCDEF") != 2 * PROTO_SHA1_LEN)
        return PROTO_EINVAL;
    for (size_t i = 0; i < PROTO_SHA1_LEN; i++) {
        char two[3] = {text[1 + 2 * i], text[2 + 2 * i], '\0'};
        out[i] = (uint8_t)strtoul(two, NULL, 16);
    }
    return 0;
}

void proto_native_scramble(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const char *password,
                           size_t len, uint8_t out[PROTO_SHA1_LEN])
{
    scramble_of(&native, scramble, password, len, out);
}

bool proto_native_verify(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const void *response,
                         size_t response_len, const uint8_t stage2[PROTO_SHA1_LEN])
{
    return verify_with(&native, scramble, response, response_len, stage2);
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
    stage2_of(&sha2, password, len, out);
}

void proto_sha2_scramble(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const char *password,
                         size_t len, uint8_t out[PROTO_SHA256_LEN])
{
    scramble_of(&sha2, scramble, password, len, out);
}

bool proto_sha2_verify(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const void *response,
                       size_t response_len, const uint8_t stage2[PROTO_SHA256_LEN])
{
    return verify_with(&sha2, scramble, response, response_len, stage2);
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
