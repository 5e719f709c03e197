/*
 * fuzz_config.c -- libFuzzer target for the INI configuration parser.
 *
 * The input becomes the contents of a config file (an in-memory file, so
 * no disk I/O); config_load must either accept it or report an error
 * of the form "FILE:LINE: ...", never crash, leak or read out of bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    dal_config_t *cfg = NULL;
    dal_error_t err;

    if (fd < 0) {
        fd = memfd_create("dal_fuzz_ini", 0);
        if (fd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        setenv("FUZZ_VAR", "value", 1);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    if (config_load(path, &cfg, &err) == 0) {
        config_free(cfg);
        return 0;
    }
    /* every failure names the file */
    if (strncmp(err.message, path, strlen(path)) != 0)
        abort();
    return 0;
}
