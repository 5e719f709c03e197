/*
 * tls.c -- TLS for dal-proxy's clients, on OpenSSL, as a filter over
 * memory.  See proxy.h for why the sessions never touch a socket.
 *
 * OpenSSL keeps a queue of errors per thread.  A client moves between its
 * I/O thread and the workers, and one failed session must not make the
 * next one on the same thread look failed: every call that can queue an
 * error starts by emptying the queue.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "proxy.h"

struct proxy_tls {
    SSL_CTX *ctx;
};

struct proxy_tls_conn {
    SSL *ssl;
    BIO *in;    /* ciphertext from the client, owned by ssl */
    BIO *out;   /* ciphertext for the client, owned by ssl */
};

/* OpenSSL's last reason as text, or a fallback. */
static void last_reason(char *buf, size_t n, const char *fallback)
{
    unsigned long e = ERR_peek_last_error();

    if (e == 0)
        snprintf(buf, n, "%s", fallback);
    else
        ERR_error_string_n(e, buf, n);
    ERR_clear_error();
}

/* A key file under a passphrase is refused instead of OpenSSL asking for
 * the passphrase on the terminal, which a service does not have. */
static int no_passphrase(char *buf, int size, int rwflag, void *arg)
{
    (void)buf, (void)size, (void)rwflag, (void)arg;
    return -1;
}

static int ctx_load(SSL_CTX *ctx, const char *cert, const char *key, char *msg, size_t msglen)
{
    char why[256];

    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        last_reason(why, sizeof why, "cannot read it");
        snprintf(msg, msglen, "tls_cert %s: not a PEM certificate (%s)", cert, why);
        return -1;
    }
    /* this also refuses a key that is not the certificate's */
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        last_reason(why, sizeof why, "cannot read it");
        snprintf(msg, msglen, "tls_key %s: not a PEM private key of tls_cert %s (%s)", key, cert,
                 why);
        return -1;
    }
    return 0;
}

proxy_tls_t *tls_context_new(const char *cert, const char *key, char *msg, size_t msglen)
{
    proxy_tls_t *t = calloc(1, sizeof *t);

    ERR_clear_error();
    if (t == NULL || (t->ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
        snprintf(msg, msglen, "out of memory");
        free(t);
        return NULL;
    }
    /* TLS 1.2 and later; no renegotiation (a client could make the server
     * redo the handshake's arithmetic at will), no compression (CRIME);
     * no session resumption: MySQL clients do not resume, so tickets and a
     * cache would only cost memory and a round of writes. */
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                    SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(t->ctx, 0);
    /* an idle client keeps no record buffers */
    SSL_CTX_set_mode(t->ctx, SSL_MODE_RELEASE_BUFFERS);
    if (ctx_load(t->ctx, cert, key, msg, msglen) != 0) {
        tls_context_free(t);
        return NULL;
    }
    return t;
}

void tls_context_free(proxy_tls_t *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    free(t);
}

proxy_tls_conn_t *tls_conn_new(proxy_tls_t *t)
{
    proxy_tls_conn_t *s = calloc(1, sizeof *s);

    ERR_clear_error();
    if (s == NULL)
        return NULL;
    s->ssl = SSL_new(t->ctx);
    s->in = BIO_new(BIO_s_mem());
    s->out = BIO_new(BIO_s_mem());
    if (s->ssl == NULL || s->in == NULL || s->out == NULL) {
        BIO_free(s->in);
        BIO_free(s->out);
        SSL_free(s->ssl);
        free(s);
        ERR_clear_error();
        return NULL;
    }
    /* an empty input is "come back later", not the end of the stream */
    BIO_set_mem_eof_return(s->in, -1);
    BIO_set_mem_eof_return(s->out, -1);
    SSL_set_bio(s->ssl, s->in, s->out);
    SSL_set_accept_state(s->ssl);
    return s;
}

void tls_conn_free(proxy_tls_conn_t *s)
{
    if (s == NULL)
        return;
    SSL_free(s->ssl); /* and its BIOs */
    free(s);
}

int tls_conn_feed(proxy_tls_conn_t *s, const void *data, size_t n)
{
    ERR_clear_error();
    if (n == 0)
        return 0;
    if (n > INT_MAX || BIO_write(s->in, data, (int)n) != (int)n) {
        ERR_clear_error();
        return -1;
    }
    return 0;
}

/* After a call returned r <= 0: 0 if it only waits for the client's next
 * bytes, -1 if the session is over (an error, or the client closed it). */
static int waiting(proxy_tls_conn_t *s, int r)
{
    int e = SSL_get_error(s->ssl, r);

    ERR_clear_error();
    return e == SSL_ERROR_WANT_READ ? 0 : -1;
}

ssize_t tls_conn_read(proxy_tls_conn_t *s, void *buf, size_t n)
{
    int r;

    ERR_clear_error();
    r = SSL_read(s->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
    return r > 0 ? r : waiting(s, r);
}

/* Move what the session wrote to wire. */
static int drain(proxy_tls_conn_t *s, proto_buf_t *wire)
{
    size_t n = BIO_ctrl_pending(s->out);
    int got;

    if (n == 0)
        return 0;
    if (proto_buf_reserve(wire, n) != 0)
        return -1;
    got = BIO_read(s->out, wire->data + wire->len, (int)n);
    if (got > 0)
        wire->len += (size_t)got;
    return 0;
}

ssize_t tls_conn_write(proxy_tls_conn_t *s, const void *plain, size_t n, proto_buf_t *wire)
{
    size_t took = 0;
    int r;

    ERR_clear_error();
    if (!SSL_is_init_finished(s->ssl) && (r = SSL_do_handshake(s->ssl)) != 1 &&
        waiting(s, r) != 0) {
        drain(s, wire); /* the alert that tells the client why */
        return -1;
    }
    /* the output BIO grows as needed, so a write takes all it is given
     * once the handshake is done; it is refused only by a broken session */
    while (SSL_is_init_finished(s->ssl) && took < n) {
        size_t chunk = n - took > INT_MAX ? INT_MAX : n - took;
        if ((r = SSL_write(s->ssl, (const uint8_t *)plain + took, (int)chunk)) <= 0) {
            if (waiting(s, r) != 0)
                return -1;
            break;
        }
        took += (size_t)r;
    }
    return drain(s, wire) == 0 ? (ssize_t)took : -1;
}

bool tls_conn_pending(const proxy_tls_conn_t *s)
{
    return SSL_pending(s->ssl) > 0;
}
