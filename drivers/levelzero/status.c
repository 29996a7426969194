/* SPDX-License-Identifier: Apache-2.0 */
/* status.c: ze_result_t names, their trident status, and error messages that
 * carry both. */
#include <stdarg.h>
#include <stdio.h>

#include "drivers/levelzero/levelzero.h"

#define ZDRV_RESULTS(X)                                                                                \
    X(ZE_RESULT_SUCCESS, TRD_OK)                                                                       \
    X(ZE_RESULT_NOT_READY, TRD_ERR_STATE)                                                              \
    X(ZE_RESULT_ERROR_DEVICE_LOST, TRD_ERR_DEVICE)                                                     \
    X(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, TRD_ERR_NO_MEMORY)                                           \
    X(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, TRD_ERR_LIMIT)                                             \
    X(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, TRD_ERR_FORMAT)                                            \
    X(ZE_RESULT_ERROR_MODULE_LINK_FAILURE, TRD_ERR_FORMAT)                                             \
    X(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, TRD_ERR_DEVICE)                                           \
    X(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE, TRD_ERR_DEVICE)                                       \
    X(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX, TRD_ERR_DEVICE)                                        \
    X(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE, TRD_ERR_DEVICE)                                        \
    X(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE, TRD_ERR_DEVICE)                                               \
    X(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, TRD_ERR_DEVICE)                                        \
    X(ZE_RESULT_ERROR_NOT_AVAILABLE, TRD_ERR_DEVICE)                                                   \
    X(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, TRD_ERR_UNSUPPORTED)                                     \
    X(ZE_RESULT_WARNING_DROPPED_DATA, TRD_ERR_DEVICE)                                                  \
    X(ZE_RESULT_ERROR_UNINITIALIZED, TRD_ERR_DEVICE)                                                   \
    X(ZE_RESULT_ERROR_UNSUPPORTED_VERSION, TRD_ERR_UNSUPPORTED)                                        \
    X(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, TRD_ERR_UNSUPPORTED)                                        \
    X(ZE_RESULT_ERROR_INVALID_ARGUMENT, TRD_ERR_DEVICE)                                                \
    X(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, TRD_ERR_DEVICE)                                             \
    X(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, TRD_ERR_STATE)                                             \
    X(ZE_RESULT_ERROR_INVALID_NULL_POINTER, TRD_ERR_DEVICE)                                            \
    X(ZE_RESULT_ERROR_INVALID_SIZE, TRD_ERR_DEVICE)                                                    \
    X(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, TRD_ERR_LIMIT)                                                 \
    X(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, TRD_ERR_UNSUPPORTED)                                      \
    X(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, TRD_ERR_DEVICE)                                  \
    X(ZE_RESULT_ERROR_INVALID_ENUMERATION, TRD_ERR_DEVICE)                                             \
    X(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, TRD_ERR_UNSUPPORTED)                                    \
    X(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT, TRD_ERR_UNSUPPORTED)                                   \
    X(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, TRD_ERR_FORMAT)                                           \
    X(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, TRD_ERR_NOT_FOUND)                                          \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, TRD_ERR_NOT_FOUND)                                          \
    X(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, TRD_ERR_NOT_FOUND)                                        \
    X(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, TRD_ERR_LIMIT)                                     \
    X(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, TRD_ERR_LIMIT)                                   \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, TRD_ERR_INVALID_ARGUMENT)                         \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, TRD_ERR_INVALID_ARGUMENT)                          \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE, TRD_ERR_INVALID_ARGUMENT)                        \
    X(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, TRD_ERR_FORMAT)                                         \
    X(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, TRD_ERR_INVALID_ARGUMENT)                             \
    X(ZE_RESULT_ERROR_OVERLAPPING_REGIONS, TRD_ERR_INVALID_ARGUMENT)                                   \
    X(ZE_RESULT_WARNING_ACTION_REQUIRED, TRD_ERR_DEVICE)                                               \
    X(ZE_RESULT_ERROR_UNKNOWN, TRD_ERR_DEVICE)

const char *zdrv_result_name(ze_result_t r)
{
    switch (r) {
#define ZDRV_NAME_CASE(name, status)                                                                   \
    case name:                                                                                         \
        return #name;
        ZDRV_RESULTS(ZDRV_NAME_CASE)
#undef ZDRV_NAME_CASE
    default:
        return "ZE_RESULT_UNKNOWN_VALUE";
    }
}

trd_status_t zdrv_status(ze_result_t r)
{
    switch (r) {
#define ZDRV_STATUS_CASE(name, status)                                                                 \
    case name:                                                                                         \
        return status;
        ZDRV_RESULTS(ZDRV_STATUS_CASE)
#undef ZDRV_STATUS_CASE
    default:
        return TRD_ERR_DEVICE;
    }
}

trd_status_t zdrv_fail(ze_result_t r, const char *call, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    trd_status_t st = zdrv_status(r);
    if (st == TRD_OK) /* a "failure" reported with a success code is still one */
        st = TRD_ERR_DEVICE;
    /* a kernel's page fault loses the device: say what the usual cause is */
    return trd_drv_error(st, "%s%s%s failed: %s (0x%08x)%s", what, *what ? ": " : "", call, zdrv_result_name(r),
                            (unsigned)r,
                            r == ZE_RESULT_ERROR_DEVICE_LOST
                                ? "; the device was lost, as when a kernel faults: " TRD_DRIVER_FAULT_HINT
                                : "");
}
