/*
 * session_hooks.c -- what the caller hooks into a session (dal.h): the
 * warnings and CALL sets it keeps, the relay sink of its results, the
 * LOCAL INFILE reader, and the calls another thread makes to stop its
 * statement.  Each is a field of the session (session_int.h) its
 * statements read.
 */
#include <string.h>

#include "error.h"
#include "session_int.h"

void dal_session_keep_warnings(dal_session_t *s, int on)
{
    if (s != NULL)
        s->keep_warnings = on != 0;
}

void dal_session_set_relay(dal_session_t *s, const dal_relay_t *sink, void *ctx)
{
    if (s != NULL) {
        s->relay = sink;
        s->relay_ctx = ctx;
    }
}

void dal_session_keep_sets(dal_session_t *s, int on)
{
    if (s != NULL)
        s->keep_sets = on != 0;
}

int dal_session_error_row(const dal_session_t *s, size_t i, const char **level,
                          unsigned int *code, const char **message)
{
    return warnings_get(s ? s->failed : NULL, i, level, code, message) == 0 ? 0 : DAL_EINVAL;
}

int dal_session_set_infile(dal_session_t *s, const dal_infile_ops_t *ops, void *user,
                           dal_error_t *err)
{
    if (s == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_set_infile: NULL session");
    if (ops == NULL) {
        s->has_infile = 0;
        memset(&s->infile, 0, sizeof s->infile);
        return 0;
    }
    /* a later, longer struct is taken for its first fields */
    if (ops->struct_size < sizeof *ops || ops->open == NULL || ops->read == NULL ||
        ops->close == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_set_infile: ops needs struct_size = "
                                        "sizeof(dal_infile_ops_t) and open, read and close");
    memcpy(&s->infile.ops, ops, sizeof *ops);
    s->infile.ops.struct_size = sizeof *ops;
    s->infile.user = user;
    s->has_infile = 1;
    return 0;
}

int dal_session_cancel(dal_session_t *s, dal_error_t *err)
{
    if (s == NULL)
        return err_set(err, DAL_EINVAL, "dal_session_cancel: NULL session");
    return cancel_run(&s->cancel, err);
}

void dal_session_hang_up(dal_session_t *s)
{
    if (s != NULL)
        cancel_hang_up(&s->cancel);
}

size_t dal_session_backend_threads(dal_session_t *s, dal_backend_thread_t *out, size_t cap)
{
    return s != NULL ? cancel_threads(&s->cancel, out, cap) : 0;
}
