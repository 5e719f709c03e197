/*
 * protocol.h -- the MySQL/MariaDB client/server protocol, as bytes.
 *
 * dal-proxy speaks the wire protocol to MySQL and MariaDB clients.  This
 * library is only the codec: it turns bytes into packets and packets into
 * structs, and structs back into bytes.  It opens no socket, starts no
 * thread and keeps no global state, so the server and session code can
 * feed it whatever arrives and it can be unit-tested and fuzzed on its
 * own.  Every function is safe to call from any thread on distinct
 * objects.
 *
 * Conventions
 *  - Functions return 0 (PROTO_OK) or a negative PROTO_E* code;
 *    proto_strerror names it.  Decoders never read outside the bytes they
 *    are given and return PROTO_ETRUNC or PROTO_EMALFORMED on bad input.
 *  - Decoded strings are proto_str_t: a pointer and a length BORROWED from
 *    the payload that was parsed (not NUL-terminated; valid as long as that
 *    payload).  An absent optional field has ptr == NULL and len == 0.
 *  - Builders append one or more complete packets (4-byte header +
 *    payload) to a proto_buf_t and take the sequence id by pointer: they
 *    use *seq for the first packet and leave *seq at the id the next packet
 *    must carry, so a session keeps one counter per exchange.
 *  - Capabilities are those the two sides agreed on (server & client): the
 *    builders and parsers follow the flags they are given.  Only the
 *    4.1 protocol is spoken (proto_parse_handshake_response refuses older
 *    clients), so every builder writes 4.1 packets.
 *
 * Not covered yet: compression, the RSA key exchange of
 * caching_sha2_password's full authentication without TLS, session state
 * tracking data in OK packets, COM_STMT_FETCH cursors, MariaDB's
 * COM_STMT_BULK_EXECUTE and extended metadata.
 */
#ifndef DAL_PROXY_PROTOCOL_H
#define DAL_PROXY_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ================================================================ errors */

enum proto_err {
    PROTO_OK = 0,
    PROTO_ETRUNC = -1,       /* input ends inside a field */
    PROTO_EMALFORMED = -2,   /* a field holds an impossible value */
    PROTO_ETOOBIG = -3,      /* a packet is over max_allowed_packet */
    PROTO_ENOMEM = -4,       /* an allocation failed */
    PROTO_EINVAL = -5,       /* the caller's argument is not encodable */
    PROTO_ESEQ = -6,         /* a continuation packet out of sequence */
    PROTO_EUNSUPPORTED = -7  /* valid protocol this library does not handle */
};

/* A static English phrase for a PROTO_E* code ("truncated packet", ...). */
const char *proto_strerror(int code);

/* ====================================================== protocol constants */

#define PROTO_MAX_CHUNK 0xFFFFFFu   /* largest payload of one physical packet */
#define PROTO_SCRAMBLE_LEN 20       /* the server's random challenge */
#define PROTO_SHA1_LEN 20
#define PROTO_SHA256_LEN 32

/* Capability flags (the standard 32 bits).  REMEMBER_OPTIONS (bit 31) does
 * not fit an int enumerator, so it and MariaDB's extended capabilities
 * (bits 32-63, sent in the otherwise reserved bytes when CLIENT_MYSQL is
 * clear) are macros. */
enum proto_capability {
    PROTO_CLIENT_MYSQL = 1 << 0,  /* LONG_PASSWORD; MariaDB: "not MariaDB" */
    PROTO_CLIENT_FOUND_ROWS = 1 << 1,
    PROTO_CLIENT_LONG_FLAG = 1 << 2,
    PROTO_CLIENT_CONNECT_WITH_DB = 1 << 3,
    PROTO_CLIENT_NO_SCHEMA = 1 << 4,
    PROTO_CLIENT_COMPRESS = 1 << 5,
    PROTO_CLIENT_ODBC = 1 << 6,
    PROTO_CLIENT_LOCAL_FILES = 1 << 7,
    PROTO_CLIENT_IGNORE_SPACE = 1 << 8,
    PROTO_CLIENT_PROTOCOL_41 = 1 << 9,
    PROTO_CLIENT_INTERACTIVE = 1 << 10,
    PROTO_CLIENT_SSL = 1 << 11,
    PROTO_CLIENT_IGNORE_SIGPIPE = 1 << 12,
    PROTO_CLIENT_TRANSACTIONS = 1 << 13,
    PROTO_CLIENT_RESERVED = 1 << 14,
    PROTO_CLIENT_SECURE_CONNECTION = 1 << 15,
    PROTO_CLIENT_MULTI_STATEMENTS = 1 << 16,
    PROTO_CLIENT_MULTI_RESULTS = 1 << 17,
    PROTO_CLIENT_PS_MULTI_RESULTS = 1 << 18,
    PROTO_CLIENT_PLUGIN_AUTH = 1 << 19,
    PROTO_CLIENT_CONNECT_ATTRS = 1 << 20,
    PROTO_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21,
    PROTO_CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22,
    PROTO_CLIENT_SESSION_TRACK = 1 << 23,
    PROTO_CLIENT_DEPRECATE_EOF = 1 << 24,
    PROTO_CLIENT_OPTIONAL_RESULTSET_METADATA = 1 << 25,
    PROTO_CLIENT_ZSTD_COMPRESSION = 1 << 26,
    PROTO_CLIENT_QUERY_ATTRIBUTES = 1 << 27,
    PROTO_CLIENT_MULTI_FACTOR_AUTH = 1 << 28,
    PROTO_CLIENT_CAPABILITY_EXTENSION = 1 << 29,
    PROTO_CLIENT_SSL_VERIFY_SERVER_CERT = 1 << 30
};
#define PROTO_CLIENT_REMEMBER_OPTIONS 0x80000000u
/* MariaDB's extended capabilities, as bits of the 64-bit value. */
#define PROTO_MARIADB_CLIENT_PROGRESS (1ull << 32)
#define PROTO_MARIADB_CLIENT_COM_MULTI (1ull << 33)
#define PROTO_MARIADB_CLIENT_STMT_BULK_OPERATIONS (1ull << 34)
#define PROTO_MARIADB_CLIENT_EXTENDED_METADATA (1ull << 35)
#define PROTO_MARIADB_CLIENT_CACHE_METADATA (1ull << 36)

/* Server status flags (OK, EOF and the handshake). */
enum proto_status {
    PROTO_SERVER_STATUS_IN_TRANS = 1 << 0,
    PROTO_SERVER_STATUS_AUTOCOMMIT = 1 << 1,
    PROTO_SERVER_MORE_RESULTS_EXISTS = 1 << 3,
    PROTO_SERVER_QUERY_NO_GOOD_INDEX_USED = 1 << 4,
    PROTO_SERVER_QUERY_NO_INDEX_USED = 1 << 5,
    PROTO_SERVER_STATUS_CURSOR_EXISTS = 1 << 6,
    PROTO_SERVER_STATUS_LAST_ROW_SENT = 1 << 7,
    PROTO_SERVER_STATUS_DB_DROPPED = 1 << 8,
    PROTO_SERVER_STATUS_NO_BACKSLASH_ESCAPES = 1 << 9,
    PROTO_SERVER_STATUS_METADATA_CHANGED = 1 << 10,
    PROTO_SERVER_QUERY_WAS_SLOW = 1 << 11,
    PROTO_SERVER_PS_OUT_PARAMS = 1 << 12,
    PROTO_SERVER_STATUS_IN_TRANS_READONLY = 1 << 13,
    PROTO_SERVER_SESSION_STATE_CHANGED = 1 << 14
};

/* Column definition flags. */
enum proto_column_flag {
    PROTO_NOT_NULL_FLAG = 1 << 0,
    PROTO_PRI_KEY_FLAG = 1 << 1,
    PROTO_UNIQUE_KEY_FLAG = 1 << 2,
    PROTO_MULTIPLE_KEY_FLAG = 1 << 3,
    PROTO_BLOB_FLAG = 1 << 4,
    PROTO_UNSIGNED_FLAG = 1 << 5,
    PROTO_ZEROFILL_FLAG = 1 << 6,
    PROTO_BINARY_FLAG = 1 << 7,
    PROTO_ENUM_FLAG = 1 << 8,
    PROTO_AUTO_INCREMENT_FLAG = 1 << 9,
    PROTO_TIMESTAMP_FLAG = 1 << 10,
    PROTO_SET_FLAG = 1 << 11,
    PROTO_NO_DEFAULT_VALUE_FLAG = 1 << 12,
    PROTO_ON_UPDATE_NOW_FLAG = 1 << 13,
    PROTO_NUM_FLAG = 1 << 15
};

/* Column and parameter types (MYSQL_TYPE_*), without including mysql.h. */
enum proto_type {
    PROTO_TYPE_DECIMAL = 0,
    PROTO_TYPE_TINY = 1,
    PROTO_TYPE_SHORT = 2,
    PROTO_TYPE_LONG = 3,
    PROTO_TYPE_FLOAT = 4,
    PROTO_TYPE_DOUBLE = 5,
    PROTO_TYPE_NULL = 6,
    PROTO_TYPE_TIMESTAMP = 7,
    PROTO_TYPE_LONGLONG = 8,
    PROTO_TYPE_INT24 = 9,
    PROTO_TYPE_DATE = 10,
    PROTO_TYPE_TIME = 11,
    PROTO_TYPE_DATETIME = 12,
    PROTO_TYPE_YEAR = 13,
    PROTO_TYPE_NEWDATE = 14,
    PROTO_TYPE_VARCHAR = 15,
    PROTO_TYPE_BIT = 16,
    PROTO_TYPE_TIMESTAMP2 = 17,
    PROTO_TYPE_DATETIME2 = 18,
    PROTO_TYPE_TIME2 = 19,
    PROTO_TYPE_JSON = 245,
    PROTO_TYPE_NEWDECIMAL = 246,
    PROTO_TYPE_ENUM = 247,
    PROTO_TYPE_SET = 248,
    PROTO_TYPE_TINY_BLOB = 249,
    PROTO_TYPE_MEDIUM_BLOB = 250,
    PROTO_TYPE_LONG_BLOB = 251,
    PROTO_TYPE_BLOB = 252,
    PROTO_TYPE_VAR_STRING = 253,
    PROTO_TYPE_STRING = 254,
    PROTO_TYPE_GEOMETRY = 255
};

/* Command bytes: the first byte of every client packet after login. */
enum proto_command {
    PROTO_COM_SLEEP = 0x00,
    PROTO_COM_QUIT = 0x01,
    PROTO_COM_INIT_DB = 0x02,
    PROTO_COM_QUERY = 0x03,
    PROTO_COM_FIELD_LIST = 0x04,
    PROTO_COM_CREATE_DB = 0x05,
    PROTO_COM_DROP_DB = 0x06,
    PROTO_COM_REFRESH = 0x07,
    PROTO_COM_SHUTDOWN = 0x08,
    PROTO_COM_STATISTICS = 0x09,
    PROTO_COM_PROCESS_INFO = 0x0a,
    PROTO_COM_CONNECT = 0x0b,
    PROTO_COM_PROCESS_KILL = 0x0c,
    PROTO_COM_DEBUG = 0x0d,
    PROTO_COM_PING = 0x0e,
    PROTO_COM_TIME = 0x0f,
    PROTO_COM_DELAYED_INSERT = 0x10,
    PROTO_COM_CHANGE_USER = 0x11,
    PROTO_COM_BINLOG_DUMP = 0x12,
    PROTO_COM_TABLE_DUMP = 0x13,
    PROTO_COM_CONNECT_OUT = 0x14,
    PROTO_COM_REGISTER_SLAVE = 0x15,
    PROTO_COM_STMT_PREPARE = 0x16,
    PROTO_COM_STMT_EXECUTE = 0x17,
    PROTO_COM_STMT_SEND_LONG_DATA = 0x18,
    PROTO_COM_STMT_CLOSE = 0x19,
    PROTO_COM_STMT_RESET = 0x1a,
    PROTO_COM_SET_OPTION = 0x1b,
    PROTO_COM_STMT_FETCH = 0x1c,
    PROTO_COM_DAEMON = 0x1d,
    PROTO_COM_BINLOG_DUMP_GTID = 0x1e,
    PROTO_COM_RESET_CONNECTION = 0x1f,
    PROTO_COM_STMT_BULK_EXECUTE = 0xfa
};

/* COM_SET_OPTION values. */
enum proto_set_option {
    PROTO_OPTION_MULTI_STATEMENTS_ON = 0,
    PROTO_OPTION_MULTI_STATEMENTS_OFF = 1
};

/* A string inside a payload: borrowed, not NUL-terminated. */
typedef struct proto_str {
    const char *ptr;   /* borrowed from the parsed payload; NULL if absent */
    size_t len;
} proto_str_t;

/* ========================================================= output buffer */

/* A growable byte buffer for outgoing packets.  Zero-initialise it (or use
 * PROTO_BUF_INIT); it owns data.  The proto_put_* appends never fail
 * loudly: the first failure sets err (PROTO_ENOMEM, or PROTO_EINVAL for an
 * unencodable string) and later appends do nothing, so code building a
 * payload by hand checks err once at its end.  The proto_build_* builders
 * are all or nothing: one that fails returns the code and leaves the
 * buffer (len, err and *seq) as it found it; on a buffer whose err is
 * already set they append nothing and return that err. */
typedef struct proto_buf {
    uint8_t *data;   /* owned; NULL until the first append */
    size_t len;
    size_t cap;
    int err;         /* 0, or the first PROTO_E* an append hit */
} proto_buf_t;

#define PROTO_BUF_INIT {NULL, 0, 0, 0}

void proto_buf_free(proto_buf_t *b);   /* frees data; b is then empty */
void proto_buf_reset(proto_buf_t *b);  /* len = 0 and err = 0; keeps memory */
/* Remove the first n bytes (what the socket took); n <= len. */
void proto_buf_consume(proto_buf_t *b, size_t n);
/* Free b's memory if it is empty and holds more than keep bytes of room. */
void proto_buf_shrink(proto_buf_t *b, size_t keep);
/* proto_buf_reserve's growing of data, when it has less than n bytes of
 * room; 0 or PROTO_ENOMEM (also sets err). */
int proto_buf_grow(proto_buf_t *b, size_t n);
/* Room for n more bytes; 0 or PROTO_ENOMEM (also sets err).  Inline: every
 * append calls it, and it nearly always finds the room there. */
static inline int proto_buf_reserve(proto_buf_t *b, size_t n)
{
    if (b->err)
        return b->err;
    return n <= b->cap - b->len ? 0 : proto_buf_grow(b, n);
}

/* The appends a reply makes for each field are inline: a call each cost
 * more than the append. */
static inline void proto_put_bytes(proto_buf_t *b, const void *p, size_t n)
{
    if (n == 0 || proto_buf_reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* The low n bytes of v, least significant first. */
static inline void proto_put_le(proto_buf_t *b, uint64_t v, size_t n)
{
    if (proto_buf_reserve(b, n) != 0)
        return;
    for (size_t i = 0; i < n; i++)
        b->data[b->len + i] = (uint8_t)(v >> (8 * i));
    b->len += n;
}

static inline void proto_put_zeros(proto_buf_t *b, size_t n)
{
    if (n == 0 || proto_buf_reserve(b, n) != 0)
        return;
    memset(b->data + b->len, 0, n);
    b->len += n;
}

static inline void proto_put_u8(proto_buf_t *b, uint8_t v) { proto_put_le(b, v, 1); }
/* little-endian, as all */
static inline void proto_put_u16(proto_buf_t *b, uint16_t v) { proto_put_le(b, v, 2); }
/* low 24 bits */
static inline void proto_put_u24(proto_buf_t *b, uint32_t v) { proto_put_le(b, v, 3); }
static inline void proto_put_u32(proto_buf_t *b, uint32_t v) { proto_put_le(b, v, 4); }
/* low 48 bits */
static inline void proto_put_u48(proto_buf_t *b, uint64_t v) { proto_put_le(b, v, 6); }
static inline void proto_put_u64(proto_buf_t *b, uint64_t v) { proto_put_le(b, v, 8); }

/* Length-encoded integer: 1, 3, 4 or 9 bytes. */
static inline void proto_put_lenenc(proto_buf_t *b, uint64_t v)
{
    if (v < 0xFB) {
        proto_put_le(b, v, 1);
    } else if (v <= 0xFFFF) {
        proto_put_le(b, 0xFC | v << 8, 3);
    } else if (v <= 0xFFFFFF) {
        proto_put_le(b, 0xFD | v << 8, 4);
    } else {
        proto_put_le(b, 0xFE, 1);
        proto_put_le(b, v, 8);
    }
}

/* The length-encoded NULL (0xFB) of text rows. */
static inline void proto_put_lenenc_null(proto_buf_t *b) { proto_put_le(b, 0xFB, 1); }

/* Length-encoded string: its length as lenenc, then its n bytes (p may be
 * NULL when n is 0). */
static inline void proto_put_lenenc_str(proto_buf_t *b, const void *p, size_t n)
{
    proto_put_lenenc(b, n);
    proto_put_bytes(b, p, n);
}

/* s (n bytes) followed by a NUL.  A NUL inside s cannot be encoded: sets
 * err to PROTO_EINVAL. */
void proto_put_nul_str(proto_buf_t *b, const char *s, size_t n);

/* ================================================================ framing */

/* Append payload (n bytes, borrowed) framed as packets starting at sequence
 * id *seq: a payload of PROTO_MAX_CHUNK bytes or more is cut into chunks of
 * PROTO_MAX_CHUNK, each its own packet, and ends with a shorter one (empty
 * when n is an exact multiple), as the receiver joins chunks until one is
 * short.  *seq is advanced past the last packet.  Returns b->err. */
int proto_write_packet(proto_buf_t *b, uint8_t *seq, const void *payload, size_t n);

/* Build a payload directly in b: proto_packet_begin reserves the header and
 * returns its offset; append the payload with proto_put_*; proto_packet_end
 * writes the header(s), splitting the payload as proto_write_packet does,
 * and advances *seq.  Returns b->err. */
size_t proto_packet_begin(proto_buf_t *b);
int proto_packet_end(proto_buf_t *b, size_t start, uint8_t *seq);

/* One logical packet from the reader: its payload joined across
 * continuation chunks. */
typedef struct proto_packet {
    const uint8_t *payload;  /* borrowed from the reader: valid until the
                                next proto_reader_* call on it */
    size_t len;
    uint8_t seq;             /* sequence id of its first chunk */
    uint8_t next_seq;        /* id the reply must carry (last chunk's + 1) */
} proto_packet_t;

/* The incremental packet reader.  Feed it bytes as they come, in any
 * chunking; take complete logical packets out with proto_reader_next. */
typedef struct proto_reader {
    uint8_t *in;          /* owned: received bytes not yet returned */
    size_t in_start;      /* first unconsumed byte of in */
    size_t in_len;        /* end of the received bytes in in */
    size_t in_cap;
    uint8_t *joined;      /* owned: payload of a multi-chunk packet */
    size_t joined_cap;
    size_t max_packet;    /* largest logical payload accepted */
    const char *limit_name; /* borrowed (static): the limit in messages */
    int err;              /* sticky: once set, every call returns it */
    char message[128];    /* the reason for err, for the client's ERR */
} proto_reader_t;

/* Start r empty; logical payloads over max_allowed_packet bytes are
 * refused with PROTO_ETOOBIG (as soon as their header shows it, before the
 * bytes are buffered). */
void proto_reader_init(proto_reader_t *r, size_t max_allowed_packet);
void proto_reader_free(proto_reader_t *r);  /* frees the buffers */
/* Judge the packets not yet returned by max instead, called name in the
 * error message (a static string: "max_allowed_packet", or the limit of
 * packets before authentication). */
void proto_reader_limit(proto_reader_t *r, size_t max, const char *name);
/* Give back the buffers' memory when they hold more than keep bytes of
 * room and no byte waits in them: after a big packet, an idle client
 * holds a small reader. */
void proto_reader_shrink(proto_reader_t *r, size_t keep);
/* Append n received bytes (borrowed, copied).  0 or PROTO_ENOMEM, or the
 * sticky error. */
int proto_reader_feed(proto_reader_t *r, const void *data, size_t n);
/* For reading from a socket without a copy: a pointer to at least want
 * bytes of free space at the end of the reader's buffer (*avail set to the
 * whole free space), or NULL on allocation failure.  After writing k
 * bytes there, call proto_reader_commit(r, k). */
uint8_t *proto_reader_space(proto_reader_t *r, size_t want, size_t *avail);
void proto_reader_commit(proto_reader_t *r, size_t k);
/* Next complete logical packet: 1 and *pkt filled; 0 if more bytes are
 * needed; or a negative code: PROTO_ETOOBIG (payload over the limit),
 * PROTO_ESEQ (a continuation's sequence id is not the previous + 1),
 * PROTO_ENOMEM.  After an error the stream is unusable (the connection
 * should send an ERR and close); proto_reader_message says why. */
int proto_reader_next(proto_reader_t *r, proto_packet_t *pkt);
/* A sentence on the last error ("packet of 20000000 bytes is over
 * max_allowed_packet (16777216)"), or "" if none.  Borrowed from r. */
const char *proto_reader_message(const proto_reader_t *r);
/* Bytes received and not yet returned as packets. */
size_t proto_reader_pending(const proto_reader_t *r);
/* Those bytes themselves (borrowed: valid until the next proto_reader_*
 * call on r), *n set to proto_reader_pending(r); then proto_reader_discard
 * forgets them.  For a stream that changes its framing after a packet (the
 * TLS handshake after an SSLRequest): what came after the packet belongs to
 * the new layer. */
const uint8_t *proto_reader_unread(const proto_reader_t *r, size_t *n);
void proto_reader_discard(proto_reader_t *r);

/* ================================================================= cursor */

/* A bounds-checked reader over one payload.  Every getter either reads the
 * whole field and advances, or reads nothing, zeroes its outputs and
 * returns PROTO_ETRUNC (or PROTO_EMALFORMED).  The first error sticks in
 * err, so a parser may read several fields and test err once. */
typedef struct proto_cur {
    const uint8_t *p;  /* borrowed payload */
    size_t len;
    size_t pos;
    int err;
} proto_cur_t;

void proto_cur_init(proto_cur_t *c, const void *payload, size_t len);
static inline size_t proto_cur_left(const proto_cur_t *c)
{
    return c->len - c->pos;
}
int proto_get_u8(proto_cur_t *c, uint8_t *v);
int proto_get_u16(proto_cur_t *c, uint16_t *v);
int proto_get_u24(proto_cur_t *c, uint32_t *v);
int proto_get_u32(proto_cur_t *c, uint32_t *v);
int proto_get_u48(proto_cur_t *c, uint64_t *v);
int proto_get_u64(proto_cur_t *c, uint64_t *v);
/* n bytes as a borrowed string. */
int proto_get_bytes(proto_cur_t *c, size_t n, proto_str_t *s);
int proto_skip(proto_cur_t *c, size_t n);
/* Length-encoded integer.  *is_null (may be NULL if the caller does not
 * accept NULL) is set for 0xFB; 0xFF, or 0xFB where NULL is not accepted,
 * is PROTO_EMALFORMED. */
int proto_get_lenenc(proto_cur_t *c, uint64_t *v, bool *is_null);
/* Length-encoded string (NULL 0xFB is PROTO_EMALFORMED). */
int proto_get_lenenc_str(proto_cur_t *c, proto_str_t *s);
/* NUL-terminated string; the NUL is consumed, not part of *s.  A missing
 * NUL is PROTO_ETRUNC. */
int proto_get_nul_str(proto_cur_t *c, proto_str_t *s);
/* The rest of the payload (string<EOF>). */
void proto_get_rest(proto_cur_t *c, proto_str_t *s);

/* ============================================================== handshake */

/* The server's first packet, HandshakeV10. */
typedef struct proto_handshake {
    const char *server_version;  /* borrowed, NUL-terminated; MariaDB
                                    clients want "5.5.5-" before a MariaDB
                                    version to recognise it */
    uint32_t connection_id;
    const uint8_t *scramble;     /* borrowed, PROTO_SCRAMBLE_LEN bytes, none
                                    of them NUL (proto_scramble_generate) */
    uint64_t capabilities;       /* low 32 bits standard; bits 32-63 are
                                    sent only when CLIENT_MYSQL is clear */
    uint8_t charset;             /* collation id, e.g. 45 utf8mb4_general_ci */
    uint16_t status;             /* PROTO_SERVER_* */
    const char *auth_plugin;     /* borrowed, e.g. "mysql_native_password" */
} proto_handshake_t;

/* Append the HandshakeV10 packet (sequence id 0 by convention; *seq is
 * used and advanced).  PROTO_EINVAL if a string holds a NUL or a pointer
 * is NULL. */
int proto_build_handshake(proto_buf_t *b, uint8_t *seq, const proto_handshake_t *h);

/* The client's HandshakeResponse41, or its short SSLRequest form. */
typedef struct proto_handshake_response {
    uint64_t capabilities;      /* low 32 bits from the packet; MariaDB's
                                   extended bits when CLIENT_MYSQL is clear */
    uint32_t max_packet;
    uint8_t charset;
    bool ssl_request;           /* the 32-byte SSLRequest: the rest of the
                                   fields are absent; start TLS, then read
                                   the full response */
    proto_str_t user;
    proto_str_t auth_response;  /* raw bytes for the auth plugin */
    proto_str_t database;       /* ptr NULL without CLIENT_CONNECT_WITH_DB */
    proto_str_t auth_plugin;    /* ptr NULL without CLIENT_PLUGIN_AUTH */
    proto_str_t attrs;          /* the attribute pairs, raw (ptr NULL
                                   without CLIENT_CONNECT_ATTRS); already
                                   checked well-formed: walk them with
                                   proto_attrs_next */
} proto_handshake_response_t;

/* Parse a HandshakeResponse41 (or SSLRequest) payload.  All strings borrow
 * from payload.  The auth response is read in the encoding the client's
 * flags choose: lenenc with CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, a 1-byte
 * length with CLIENT_SECURE_CONNECTION, else NUL-terminated.  A client
 * without CLIENT_PROTOCOL_41 gets PROTO_EUNSUPPORTED. */
int proto_parse_handshake_response(const void *payload, size_t len,
                                   proto_handshake_response_t *out);

/* Walk connection attributes: c is a cursor over a proto_str_t attrs block
 * (proto_cur_init(&c, attrs.ptr, attrs.len)).  1 and key/value borrowed
 * from the block; 0 at the end; negative on malformed data. */
int proto_attrs_next(proto_cur_t *c, proto_str_t *key, proto_str_t *value);

/* ========================================================= authentication */

/* Fill out with PROTO_SCRAMBLE_LEN random printable bytes (no NUL: the
 * handshake NUL-terminates its second part).  0 or PROTO_ENOMEM when the
 * system's randomness fails. */
int proto_scramble_generate(uint8_t out[PROTO_SCRAMBLE_LEN]);

/* mysql_native_password.  The server stores SHA1(SHA1(password)) ("stage
 * 2"); the client sends SHA1(password) XOR SHA1(scramble + stage2). */
void proto_native_stage2(const char *password, size_t len, uint8_t out[PROTO_SHA1_LEN]);
/* The stored form shown by PASSWORD(): '*' + 40 uppercase hex + NUL. */
void proto_native_hash_text(const char *password, size_t len, char out[42]);
/* Parse "*" + 40 hex (either case) back to stage 2: 0 or PROTO_EINVAL. */
int proto_native_hash_parse(const char *text, uint8_t out[PROTO_SHA1_LEN]);
/* The client's side: the 20-byte response for password. */
void proto_native_scramble(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const char *password,
                           size_t len, uint8_t out[PROTO_SHA1_LEN]);
/* Whether response (response_len bytes) proves knowledge of the password
 * whose stage 2 is given, in time independent of where they differ.
 * stage2 NULL means the account has no password: only an empty response
 * passes.  Otherwise the response must be 20 bytes. */
bool proto_native_verify(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const void *response,
                         size_t response_len, const uint8_t stage2[PROTO_SHA1_LEN]);

/* caching_sha2_password, fast path.  The client sends
 * SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble); the
 * server keeps SHA256(SHA256(password)) ("stage 2") for the fast path. */
void proto_sha2_stage2(const char *password, size_t len, uint8_t out[PROTO_SHA256_LEN]);
void proto_sha2_scramble(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const char *password,
                         size_t len, uint8_t out[PROTO_SHA256_LEN]);
/* Constant-time check of a 32-byte response against stage 2; stage2 NULL
 * (no password) accepts only an empty response. */
bool proto_sha2_verify(const uint8_t scramble[PROTO_SCRAMBLE_LEN], const void *response,
                       size_t response_len, const uint8_t stage2[PROTO_SHA256_LEN]);
/* The same against a known password (len bytes; len 0 = no password). */
bool proto_sha2_verify_password(const uint8_t scramble[PROTO_SCRAMBLE_LEN],
                                const void *response, size_t response_len,
                                const char *password, size_t len);

/* caching_sha2_password's full authentication: over TLS the client sends
 * its password in clear, ended by a NUL.  *password borrows from payload,
 * without the NUL; PROTO_EMALFORMED if a NUL is inside it (no password
 * holds one), and a payload without the final NUL is taken whole. */
int proto_parse_cleartext_password(const void *payload, size_t len, proto_str_t *password);
/* Whether password (len bytes) is the one whose mysql_native_password
 * stage 2 is given, in time independent of where they differ: the check of
 * a cleartext password against what `password_hash` stores. */
bool proto_native_verify_password(const char *password, size_t len,
                                  const uint8_t stage2[PROTO_SHA1_LEN]);

/* AuthMoreData status bytes of caching_sha2_password. */
#define PROTO_SHA2_FAST_AUTH_SUCCESS 0x03
#define PROTO_SHA2_PERFORM_FULL_AUTH 0x04

/* AuthSwitchRequest: 0xFE, plugin (NUL-terminated), then data (n bytes,
 * borrowed) and a NUL, as servers send the scramble. */
int proto_build_auth_switch(proto_buf_t *b, uint8_t *seq, const char *plugin,
                            const void *data, size_t n);
/* AuthMoreData: 0x01 then data (n bytes), e.g. the single byte
 * PROTO_SHA2_FAST_AUTH_SUCCESS. */
int proto_build_auth_more_data(proto_buf_t *b, uint8_t *seq, const void *data, size_t n);

/* ============================================================== responses */

typedef struct proto_ok {
    uint64_t affected_rows;
    uint64_t last_insert_id;
    uint16_t status;          /* PROTO_SERVER_* */
    uint16_t warnings;
    const char *info;         /* borrowed, info_len bytes; may be NULL */
    size_t info_len;
    bool eof_header;          /* 0xFE instead of 0x00: the OK that ends a
                                 result set under CLIENT_DEPRECATE_EOF */
    const uint8_t *state;     /* borrowed, state_len bytes: the session state
                                 changes (proto_track_*), or NULL */
    size_t state_len;
} proto_ok_t;

/* OK packet.  The info is a lenenc string, as servers write it and client
 * libraries read it; without CLIENT_SESSION_TRACK in caps an empty info is
 * left out.  With CLIENT_SESSION_TRACK and session state changes, they
 * follow the info as one lenenc block and the status says
 * SERVER_SESSION_STATE_CHANGED; without the capability they are left out
 * and the flag cleared. */
int proto_build_ok(proto_buf_t *b, uint8_t *seq, uint32_t caps, const proto_ok_t *ok);
/* The session state changes an OK packet carries to a client with
 * CLIENT_SESSION_TRACK (MariaDB's and MySQL's session_track_* entries):
 * each call appends one entry to b, a plain buffer (no packet) given to
 * proto_ok_t.state.  An entry is its type, its data's lenenc length, then
 * the data. */
enum proto_session_track {
    PROTO_SESSION_TRACK_SYSTEM_VARIABLES = 0, /* lenenc name, lenenc value */
    PROTO_SESSION_TRACK_SCHEMA = 1,           /* lenenc schema */
    PROTO_SESSION_TRACK_STATE_CHANGE = 2      /* lenenc "1" */
};
/* A system variable's new value as the server shows it (NULL: ""). */
void proto_track_variable(proto_buf_t *b, const char *name, const char *value);
/* The default schema after USE or COM_INIT_DB (n bytes). */
void proto_track_schema(proto_buf_t *b, const char *schema, size_t n);
/* The session state changed (session_track_state_change). */
void proto_track_state_change(proto_buf_t *b);

/* ERR packet: code, '#' + sqlstate (5 characters; NULL means "HY000"),
 * message (borrowed, NUL-terminated; NULL is ""). PROTO_EINVAL for a
 * sqlstate not 5 characters long. */
int proto_build_err(proto_buf_t *b, uint8_t *seq, uint16_t code, const char *sqlstate,
                    const char *message);
/* EOF packet (only without CLIENT_DEPRECATE_EOF). */
int proto_build_eof(proto_buf_t *b, uint8_t *seq, uint16_t warnings, uint16_t status);
/* The end of a result set or a definition list, whichever the client
 * wants: the 0xFE OK under CLIENT_DEPRECATE_EOF, else an EOF. */
int proto_build_end(proto_buf_t *b, uint8_t *seq, uint32_t caps, uint16_t warnings,
                    uint16_t status);
/* The column count that starts a result set. */
int proto_build_column_count(proto_buf_t *b, uint8_t *seq, uint64_t n);

/* One column (or parameter) of a result set.  Strings are borrowed,
 * NUL-terminated; NULL is "".  The catalog is always "def". */
typedef struct proto_column {
    const char *schema;
    const char *table;       /* alias, as the client sees it */
    const char *org_table;
    const char *name;        /* alias */
    const char *org_name;
    uint16_t charset;        /* collation id; 63 (binary) for numbers */
    uint32_t length;         /* display width */
    uint8_t type;            /* PROTO_TYPE_* */
    uint16_t flags;          /* PROTO_*_FLAG; UNSIGNED matters for binary rows */
    uint8_t decimals;
    /* MariaDB's extended type information, sent to a client with
     * MARIADB_CLIENT_EXTENDED_METADATA: the data type name ("point",
     * "uuid", "inet6") and the format name ("json"); NULL or "": none */
    const char *type_name;
    const char *format;
} proto_column_t;

/* ColumnDefinition41; caps: the client's (64 bits: with
 * MARIADB_CLIENT_EXTENDED_METADATA the definition carries the extended
 * type information block after org_name, empty when the column has none). */
int proto_build_column(proto_buf_t *b, uint8_t *seq, uint64_t caps, const proto_column_t *col);
/* The same as a reply to COM_FIELD_LIST: followed by the column's default
 * value (def, n bytes; def == NULL: NULL); the list ends with
 * proto_build_end. */
int proto_build_field_list_column(proto_buf_t *b, uint8_t *seq, uint64_t caps,
                                  const proto_column_t *col, const char *def, size_t n);
/* The head of a result set: the count, n definitions and (without
 * CLIENT_DEPRECATE_EOF) an EOF carrying status. */
int proto_build_columns(proto_buf_t *b, uint8_t *seq, uint64_t caps, const proto_column_t *cols,
                        size_t n, uint16_t status);

/* A text-protocol row: values[i] (lengths[i] bytes, borrowed) as lenenc
 * strings, values[i] == NULL as NULL (0xFB).  lengths may be NULL when
 * every value is NUL-terminated. */
int proto_build_text_row(proto_buf_t *b, uint8_t *seq, size_t n, const char *const *values,
                         const size_t *lengths);

/* A binary-protocol row (the reply rows of COM_STMT_EXECUTE), from values
 * as text, the way libmysqlclient returns them: "42", "-1.5",
 * "2024-01-02", "2024-01-02 03:04:05.000006", "-838:59:59".  Each value is
 * converted by its column's type: TINY/SHORT/YEAR/INT24/LONG/LONGLONG as
 * 1/2/4/8-byte integers (signedness from PROTO_UNSIGNED_FLAG), FLOAT and
 * DOUBLE as IEEE-754, DATE/DATETIME/TIMESTAMP and TIME in their shortest
 * binary forms, everything else (DECIMAL, strings, blobs, BIT, JSON...) as
 * lenenc bytes.  NULL values (values[i] == NULL) go in the bitmap.  A value
 * its type cannot hold is PROTO_EINVAL and nothing is appended. */
int proto_build_binary_row(proto_buf_t *b, uint8_t *seq, const proto_column_t *cols, size_t n,
                           const char *const *values, const size_t *lengths);

/* =============================================================== commands */

/* COM_CHANGE_USER's fields.  Strings borrow from the payload. */
typedef struct proto_change_user {
    proto_str_t user;
    proto_str_t auth_response;
    proto_str_t database;      /* empty if none */
    uint16_t charset;          /* 0 if absent */
    proto_str_t auth_plugin;   /* ptr NULL if absent */
    proto_str_t attrs;         /* ptr NULL if absent; see proto_attrs_next */
} proto_change_user_t;

/* A client command.  cmd is always set when the payload is not empty. */
typedef struct proto_cmd {
    uint8_t cmd;                    /* PROTO_COM_* */
    union {
        proto_str_t text;           /* INIT_DB: schema; QUERY, STMT_PREPARE:
                                       the SQL */
        struct {
            proto_str_t table;
            proto_str_t wildcard;
        } field_list;
        uint32_t stmt_id;           /* STMT_CLOSE, STMT_RESET */
        struct {
            uint32_t stmt_id;
            uint16_t param_id;
            proto_str_t data;
        } long_data;                /* STMT_SEND_LONG_DATA */
        struct {
            uint32_t stmt_id;       /* 0xFFFFFFFF: MariaDB's "the statement
                                       prepared last" */
            uint8_t flags;          /* cursor type */
            uint32_t iterations;
        } execute;                  /* STMT_EXECUTE's head: the parameters
                                       need the statement's parameter count
                                       (proto_parse_stmt_execute) */
        uint16_t option;            /* SET_OPTION: PROTO_OPTION_* */
        proto_change_user_t change_user;
    } u;
} proto_cmd_t;

/* Parse a command payload (caps: the connection's agreed capabilities,
 * used by COM_CHANGE_USER).  Strings borrow from payload.  Handled:
 * QUIT, INIT_DB, QUERY, FIELD_LIST, PING, STMT_PREPARE, STMT_EXECUTE (its
 * head), STMT_SEND_LONG_DATA, STMT_CLOSE, STMT_RESET, SET_OPTION,
 * RESET_CONNECTION, CHANGE_USER; bytes after the fields of the argument-
 * less ones are ignored, as servers do.  Any other command byte returns
 * PROTO_EUNSUPPORTED with out->cmd set; an empty payload PROTO_ETRUNC. */
int proto_parse_command(const void *payload, size_t len, uint32_t caps, proto_cmd_t *out);

/* A decoded parameter value of COM_STMT_EXECUTE. */
enum proto_value_kind {
    PROTO_VAL_NULL,
    PROTO_VAL_INT,      /* v.i: signed integer types */
    PROTO_VAL_UINT,     /* v.u: integer types with the unsigned flag */
    PROTO_VAL_DOUBLE,   /* v.d: FLOAT (widened) and DOUBLE */
    PROTO_VAL_TEXT,     /* v.s: strings, DECIMAL, and dates and times turned
                           into text ("2024-01-02 03:04:05.000006") */
    PROTO_VAL_BLOB,     /* v.s: BLOB types, BIT, GEOMETRY */
    PROTO_VAL_LONG_DATA /* sent before by COM_STMT_SEND_LONG_DATA: no bytes
                           in this packet */
};

typedef struct proto_param {
    uint8_t type;              /* PROTO_TYPE_* as bound by the client */
    bool is_unsigned;          /* the type's flag byte had 0x80 */
    enum proto_value_kind kind;
    union {
        int64_t i;
        uint64_t u;
        double d;
        proto_str_t s;         /* borrowed from the payload, or, for a
                                  date/time, from temporal[] below: so use
                                  the struct in place, do not copy it */
    } v;
    char temporal[48];         /* storage of a date/time's text */
} proto_param_t;

/* The parameters of most executions: held in the decoded execute itself,
 * no allocation per execution. */
#define PROTO_EXECUTE_INLINE 8

typedef struct proto_stmt_execute {
    uint32_t stmt_id;
    uint8_t flags;
    uint32_t iterations;
    bool new_params_bound;     /* the packet carried the types */
    uint16_t nparams;
    proto_param_t *params;     /* nparams entries (NULL if 0): params_inl
                                  when they fit, else owned; free with
                                  proto_stmt_execute_free (and never copy
                                  the struct: params may point into it) */
    proto_param_t params_inl[PROTO_EXECUTE_INLINE];
} proto_stmt_execute_t;

/* Decode a whole COM_STMT_EXECUTE payload for a statement prepared with
 * nparams parameters.  When the packet does not rebind types (the flag
 * is 0), the previous execution's types are taken from prev_types
 * (2 bytes a parameter: type, flags; NULL if there were none: then
 * PROTO_EMALFORMED).  long_data (NULL or nparams flags) marks parameters
 * whose value came in COM_STMT_SEND_LONG_DATA: they are not in the packet
 * unless NULL.  Returns 0 with *out filled (free it even on error: it is
 * always left freeable), PROTO_ETRUNC / PROTO_EMALFORMED on a bad packet,
 * PROTO_EUNSUPPORTED for a type that cannot be a parameter. */
int proto_parse_stmt_execute(const void *payload, size_t len, uint16_t nparams,
                             const uint8_t *prev_types, const bool *long_data,
                             proto_stmt_execute_t *out);
void proto_stmt_execute_free(proto_stmt_execute_t *e);
/* The packet's parameter types (2 bytes each: type, flags), for the next
 * execution: writes 2 * e->nparams bytes to types. */
void proto_stmt_execute_types(const proto_stmt_execute_t *e, uint8_t *types);

/* COM_STMT_PREPARE's reply: the PREPARE_OK packet, then the nparams
 * parameter definitions and the ncolumns column definitions (arrays
 * borrowed; NULL when the count is 0), each list followed by an EOF
 * carrying status unless CLIENT_DEPRECATE_EOF (and absent when empty). */
int proto_build_prepare_ok(proto_buf_t *b, uint8_t *seq, uint64_t caps, uint32_t stmt_id,
                           const proto_column_t *params, uint16_t nparams,
                           const proto_column_t *cols, uint16_t ncolumns, uint16_t warnings,
                           uint16_t status);

/* ------------------------------------------------- multi-statement text */

/*
 * A COM_QUERY of a client with CLIENT_MULTI_STATEMENTS holds statements
 * separated by `;`.  proto_split_statement finds the end of the first
 * statement of text[0..len): the first `;` outside quotes ('', "", ``),
 * comments (-- , #, and C-style ones, executable ones included) and
 * parentheses.  It returns that statement's length (the `;` excluded) and
 * sets *next to where the rest begins (past the `;`; len when there is
 * none).  A compound statement, whose body has `;` of its own (CREATE
 * [DEFINER = ...] PROCEDURE, FUNCTION, TRIGGER, EVENT, PACKAGE, and at top
 * level [label:] BEGIN NOT ATOMIC, FOR, WHILE, LOOP, REPEAT, IF, CASE), is
 * not split: a top-level one ends at the `;` after the END that closes it
 * (the rest of the text when its blocks do not close); a CREATE takes the
 * whole text.  no_backslash: the session's sql_mode has
 * NO_BACKSLASH_ESCAPES, so a backslash in '' and "" is an ordinary byte
 * (as it is for proto_sql_unwrap and proto_sql_stray_nul below).
 */
size_t proto_split_statement(const char *text, size_t len, bool no_backslash, size_t *next);
/* True when text[0..len) holds nothing but spaces, `;` and comments --
 * not executable comments that a server of `version` runs, which hold a
 * statement. */
bool proto_sql_blank(const char *text, size_t len, uint32_t version);

/*
 * The statement a server of version `version` (MAJOR*10000 + MINOR*100 +
 * PATCH) runs for text[0..len): the opener (with its version digits) and
 * the closer of each executable comment it would run are overwritten with
 * spaces in place, so the content reads as plain SQL at the same offsets;
 * comments for a later server, and the text inside quotes and ordinary
 * comments, are left alone.  True if any comment was opened.
 */
bool proto_sql_unwrap(char *text, size_t len, uint32_t version, bool no_backslash);
/* The length of the opener (slash-star-bang or slash-star-M-bang and the
 * version digits) of an executable comment at text[i] that a server of
 * `version` runs, or 0: no executable comment there, or one for a later
 * server, which is a comment to it. */
size_t proto_sql_vc_opener(const char *text, size_t len, size_t i, uint32_t version);
/* The version dal-proxy's handshake announces (10.11.99), as executable
 * comments compare it. */
#define PROTO_SERVER_VERSION_ID 101199
/*
 * NUL bytes in text[0..*len) as the server reads them: inside '' and ""
 * strings and C-style comments they are part of the text; a NUL followed
 * only by `;` and blanks ends the statement (*len is cut there); any other
 * -- outside quotes, in a quoted identifier, in the SQL of an executable
 * comment, or ending a -- or # comment -- is a syntax error, whose offset
 * is returned.  SIZE_MAX when there is none.
 */
size_t proto_sql_stray_nul(const char *text, size_t *len, bool no_backslash);

#endif
