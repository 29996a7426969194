/* SPDX-License-Identifier: Apache-2.0 */
/* error.c: one status type, and a thread-local message saying what failed. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/util.h"

#define TRD_ERROR_MAX 2048

static _Thread_local char tls_message[TRD_ERROR_MAX];

trd_status_t trd_error_vset(trd_status_t status, const char *fmt, va_list ap)
{
    char tmp[TRD_ERROR_MAX];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    memcpy(tls_message, tmp, sizeof tmp);
    trd_log(TRD_LOG_DEBUG, "error %s: %s", trd_status_name(status), tls_message);
    return status;
}

trd_status_t trd_error_set(trd_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trd_error_vset(status, fmt, ap);
    va_end(ap);
    return status;
}

trd_status_t trd_error_wrap(trd_status_t status, const char *fmt, ...)
{
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* prefix + ": " + the old message, truncated to the buffer */
    size_t pl = strlen(prefix), ol = strlen(tls_message);
    if (pl > TRD_ERROR_MAX - 3)
        pl = TRD_ERROR_MAX - 3;
    if (ol > TRD_ERROR_MAX - 3 - pl)
        ol = TRD_ERROR_MAX - 3 - pl;
    memmove(tls_message + pl + 2, tls_message, ol);
    memcpy(tls_message, prefix, pl);
    tls_message[pl] = ':';
    tls_message[pl + 1] = ' ';
    tls_message[pl + 2 + ol] = '\0';
    return status;
}

void trd_error_clear(void)
{
    tls_message[0] = '\0';
}

TRD_API const char *trd_error_message(void)
{
    return tls_message;
}

TRD_API trd_status_t trd_driver_error(trd_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trd_error_vset(status, fmt, ap);
    va_end(ap);
    return status;
}

TRD_API const char *trd_status_name(trd_status_t status)
{
    static const char *const names[] = {
        [TRD_OK] = "TRD_OK",
        [TRD_ERR_INVALID_ARGUMENT] = "TRD_ERR_INVALID_ARGUMENT",
        [TRD_ERR_NOT_FOUND] = "TRD_ERR_NOT_FOUND",
        [TRD_ERR_UNSUPPORTED] = "TRD_ERR_UNSUPPORTED",
        [TRD_ERR_NO_MEMORY] = "TRD_ERR_NO_MEMORY",
        [TRD_ERR_DEVICE] = "TRD_ERR_DEVICE",
        [TRD_ERR_IO] = "TRD_ERR_IO",
        [TRD_ERR_FORMAT] = "TRD_ERR_FORMAT",
        [TRD_ERR_DRIVER] = "TRD_ERR_DRIVER",
        [TRD_ERR_LIMIT] = "TRD_ERR_LIMIT",
        [TRD_ERR_NO_DEVICE] = "TRD_ERR_NO_DEVICE",
        [TRD_ERR_VERSION] = "TRD_ERR_VERSION",
        [TRD_ERR_STATE] = "TRD_ERR_STATE",
        [TRD_ERR_BUFFER_TOO_SMALL] = "TRD_ERR_BUFFER_TOO_SMALL",
        [TRD_ERR_INTERNAL] = "TRD_ERR_INTERNAL",
    };
    if (status < 0 || (size_t)status >= TRD_ARRAY_SIZE(names) || !names[status])
        return "TRD_ERR_UNKNOWN";
    return names[status];
}
