/*
 * test_schema_text.c -- COM_FIELD_LIST's text functions (proxy/schema_text.c):
 * a column's default from what information_schema.COLUMNS says (the
 * COLUMN_DEFAULT values as MariaDB 10.11 writes them), and LIKE of the
 * client's wildcard.  The whole exchange runs against real servers in
 * tests/suites/proxy_test.sh; this pins each shape of the text, and the inputs
 * fuzz/fuzz_schema.c found too slow.
 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "schema_text.h"
#include "check_run.h"

/* One column: its definition, its information_schema text, and the
 * default COM_FIELD_LIST must send (want NULL: NULL). */
typedef struct {
    uint8_t type;
    uint16_t flags;
    uint32_t length;
    uint8_t decimals;
    const char *nullable, *def, *column_type;
    const char *want;
    size_t want_len;
} dcase_t;

static const dcase_t cases[] = {
    {PROTO_TYPE_VAR_STRING, 0, 40, 0, "YES", "'it''s'", "varchar(10)", "it's", 4},
    {PROTO_TYPE_VAR_STRING, 0, 40, 0, "YES", "'a\\\\b\\0c\\nd\\re'", "varchar(10)",
     "a\\b\0c\nd\re", 9},
    {PROTO_TYPE_VAR_STRING, 0, 40, 0, "YES", "'open", "varchar(10)", "open", 4},
    {PROTO_TYPE_VAR_STRING, 0, 40, 0, "YES", "NULL", "varchar(10)", NULL, 0},
    {PROTO_TYPE_LONG, 0, 11, 0, "YES", "-42", "int(11)", "-42", 3},
    {PROTO_TYPE_LONG, PROTO_NOT_NULL_FLAG, 11, 0, "NO", NULL, "int(11)", "0", 1},
    {PROTO_TYPE_TIMESTAMP, PROTO_NOT_NULL_FLAG, 19, 0, "NO", "current_timestamp()", "timestamp",
     "0000-00-00 00:00:00", 19},
    {PROTO_TYPE_TIMESTAMP, 0, 19, 0, "YES", "current_timestamp()", "timestamp", NULL, 0},
    {PROTO_TYPE_STRING, PROTO_NOT_NULL_FLAG | PROTO_ENUM_FLAG, 3, 0, "NO", NULL,
     "enum('a''b','c')", "a'b", 3},
    {PROTO_TYPE_NEWDECIMAL, PROTO_NOT_NULL_FLAG | PROTO_ZEROFILL_FLAG, 10, 2, "NO", NULL,
     "decimal(8,2) unsigned zerofill", "0000000.00", 10},
    {PROTO_TYPE_BIT, 0, 3, 0, "YES", "b'101'", "bit(3)", "\x05", 1},
    {PROTO_TYPE_BIT, 0, 16, 0, "YES", "b'101'", "bit(16)", "\0\x05", 2},
    {PROTO_TYPE_BIT, PROTO_NOT_NULL_FLAG, 3, 0, "NO", NULL, "bit(3)", "\0", 1},
    /* MariaDB writes a VARCHAR's bit literal default as a string ('B');
     * one written b'1' still gets at most 8 bytes, not one a bit of the
     * display width */
    {PROTO_TYPE_VAR_STRING, 0, 262140, 0, "YES", "b'1'", "varchar(65535)",
     "\0\0\0\0\0\0\0\x01", 8},
    /* BLOB, TEXT, JSON (longtext to information_schema) and GEOMETRY,
     * with the default MariaDB 10.11 sends: NULL or empty, never the
     * literal */
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 65535, 0, "YES", NULL, "blob", NULL, 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 65535, 0, "YES", "NULL", "blob", NULL, 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG | PROTO_NOT_NULL_FLAG, 65535, 0, "NO", NULL,
     "blob", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 65535, 0, "YES", "'abc'", "blob", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG | PROTO_NOT_NULL_FLAG, 65535, 0, "NO",
     "'abc'", "blob", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 255, 0, "YES", "X'41'", "tinyblob", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 4294967295u, 0, "YES", "0x42", "longblob",
     "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 65535, 0, "YES", "5", "blob", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG, 262140, 0, "YES", "''", "text", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG, 1020, 0, "YES", "'it\\'s'", "tinytext", "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_NOT_NULL_FLAG, 4294967295u, 0, "NO", NULL, "longtext",
     "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 4294967295u, 0, "YES", "'{}'", "longtext",
     "", 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG, 65535, 0, "YES", "uuid()", "blob", NULL, 0},
    {PROTO_TYPE_BLOB, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG | PROTO_NOT_NULL_FLAG, 65535, 0, "NO",
     "uuid()", "blob", "", 0},
    {PROTO_TYPE_GEOMETRY, PROTO_BLOB_FLAG | PROTO_BINARY_FLAG | PROTO_NOT_NULL_FLAG, 4294967295u, 0,
     "NO", "point(1,1)", "point", "", 0},
    /* fuzz_schema: ENUM_FLAG on a BLOB (no server sends that) gave it the
     * first member of its COLUMN_TYPE, longer than its quoted default */
    {PROTO_TYPE_BLOB, PROTO_ENUM_FLAG, 40, 0, "YES", "'3", "enum('100')", "", 0},
};

START_TEST(test_defaults)
{
    const dcase_t *c = &cases[_i];
    proto_column_t col = {.type = c->type, .flags = c->flags, .length = c->length,
                          .decimals = c->decimals, .name = "c"};
    proto_buf_t b = PROTO_BUF_INIT;
    bool has = schema_default(&b, &col, c->nullable, c->def, c->column_type);

    ck_assert_msg(has == (c->want != NULL), "%s: %s", c->def, has ? "a value" : "NULL");
    if (has) {
        ck_assert_uint_eq(b.len, c->want_len);
        /* an empty value leaves the buffer unallocated: no memcmp on NULL */
        ck_assert_msg(c->want_len == 0 || memcmp(b.data, c->want, c->want_len) == 0,
                      "%s: wrong bytes", c->def);
    }
    proto_buf_free(&b);
}
END_TEST

static bool like(const char *pattern, const char *s)
{
    return schema_like(pattern, pattern + strlen(pattern), s);
}

START_TEST(test_like)
{
    static const char escaped[] = "c%xyz";
    char many[64], name[65];

    ck_assert(like("c_%", "c_int"));
    ck_assert(like("C_INT", "c_int"));
    ck_assert(like("\\_x%", "_xy"));
    ck_assert(!like("\\_x%", "axy"));
    ck_assert(like("%", ""));
    ck_assert(like("", ""));
    ck_assert(!like("", "a"));
    ck_assert(!like("_", ""));
    ck_assert(like("%a%b", "xaxxb"));
    ck_assert(!like("%a%b", "xaxxbc"));
    ck_assert(like("%a%b%", "xaxxbc"));
    ck_assert(like("a\\", "a\\"));
    /* the wildcard is not NUL-ended in the packet */
    ck_assert(schema_like(escaped, escaped + 2, "cat"));
    /* many % against a long name: exponential when every run of every %
     * is tried */
    memset(many, '%', sizeof many - 2);
    many[sizeof many - 2] = 'b';
    many[sizeof many - 1] = '\0';
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    ck_assert(!like(many, name));
    name[sizeof name - 2] = 'b';
    ck_assert(like(many, name));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("schema_text");
    TCase *tc = tcase_create("schema_text");
    int status;

    tcase_add_loop_test(tc, test_defaults, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_like);
    suite_add_tcase(s, tc);
    status = tu_run(s, CK_FORK_GETENV);
    return status;
}
