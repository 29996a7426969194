/* SPDX-License-Identifier: Apache-2.0 */
/* status.c: the vendor's error codes as trd_status_t and a message naming
 * the call, the code and what it means. Every driver keeps this in status.c. */
#include <stdarg.h>
#include <stdio.h>

#include "drivers/null/null.h"

static trd_status_t null_status(int code)
{
    switch (code) {
    case NULL_ERROR_OUT_OF_MEMORY: return TRD_ERR_NO_MEMORY;
    case NULL_ERROR_NO_KERNELS: return TRD_ERR_UNSUPPORTED;
    default: return TRD_ERR_DEVICE;
    }
}

static const char *null_error_text(int code)
{
    switch (code) {
    case NULL_ERROR_OUT_OF_MEMORY: return "out of memory";
    case NULL_ERROR_NO_KERNELS:
        return "the null driver runs no kernels: it is the skeleton a new driver copies (drivers/null)";
    default: return "unknown error";
    }
}

trd_status_t null_fail(int code, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return trd_drv_error(null_status(code), "%s: %s", what, null_error_text(code));
}
