/* SPDX-License-Identifier: Apache-2.0 */
/* status.c: HIP errors as trident statuses, and messages that carry the HIP
 * error's name, number and text with what was being done. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drivers/hip/hip.h"

trd_status_t hip_status(hipError_t e)
{
    switch (e) {
    case HIP_SUCCESS:
        return TRD_OK;
    case HIP_ERROR_OUT_OF_MEMORY: /* device memory: transient, so that a load is retried */
        return TRD_ERR_NO_MEMORY;
    case HIP_ERROR_INVALID_VALUE:
    case HIP_ERROR_INVALID_DEVICE_POINTER:
    case HIP_ERROR_INVALID_HANDLE:
        return TRD_ERR_INVALID_ARGUMENT;
    case HIP_ERROR_NO_DEVICE:
        return TRD_ERR_NO_DEVICE;
    case HIP_ERROR_INVALID_IMAGE:
    case HIP_ERROR_NO_BINARY_FOR_GPU:
    case HIP_ERROR_INVALID_KERNEL_FILE:
    case HIP_ERROR_SHARED_OBJECT_INIT_FAILED:
        return TRD_ERR_FORMAT;
    case HIP_ERROR_NOT_FOUND:
    case HIP_ERROR_INVALID_DEVICE_FUNCTION:
        return TRD_ERR_NOT_FOUND;
    case HIP_ERROR_INVALID_CONFIGURATION:
    case HIP_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    case HIP_ERROR_INVALID_CLUSTER_SIZE:
        return TRD_ERR_LIMIT;
    case HIP_ERROR_NOT_SUPPORTED:
        return TRD_ERR_UNSUPPORTED;
    case HIP_ERROR_NOT_READY:
        return TRD_ERR_STATE;
    default:
        return TRD_ERR_DEVICE;
    }
}

const char *hip_error_name(const struct hip_api *api, hipError_t e)
{
    const char *name = api->hipGetErrorName ? api->hipGetErrorName(e) : NULL;
    return name && *name ? name : "hipError";
}

void hip_describe(const struct hip_api *api, hipError_t e, char *buf, size_t cap)
{
    const char *name = hip_error_name(api, e);
    const char *text = api->hipGetErrorString ? api->hipGetErrorString(e) : NULL;
    /* ROCm 5 returns the name as the text too: say it once */
    if (text && *text && strcmp(text, name) != 0)
        snprintf(buf, cap, "%s (%d): %s", name, (int)e, text);
    else
        snprintf(buf, cap, "%s (%d)", name, (int)e);
}

/* What a kernel's fault on the device means, after HIP's own words (the error stays with the device). */
static const char *fault_hint(hipError_t e)
{
    switch (e) {
    case HIP_ERROR_ILLEGAL_ADDRESS:
        return "; " TRD_DRIVER_FAULT_HINT "; HIP keeps this error: later calls on the device fail with it (run in "
               "a new process)";
    case HIP_ERROR_ASSERT:
        return "; a device-side assertion of the kernel failed";
    case HIP_ERROR_LAUNCH_FAILURE:
        return "; the kernel faulted on the device (a memory access outside its buffers is the usual cause); HIP "
               "keeps this error: later calls on the device fail with it (run in a new process)";
    default:
        return "";
    }
}

trd_status_t hip_fail(const struct hip_api *api, hipError_t e, const char *fmt, ...)
{
    char what[1024], why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    hip_describe(api, e, why, sizeof why);
    return trd_drv_error(hip_status(e), "%s: %s%s", what, why, fault_hint(e));
}

void hip_log_failure(const struct hip_device *dev, hipError_t e, const char *what)
{
    char why[256];
    hip_describe(&dev->drv->api, e, why, sizeof why);
    trd_drv_log(TRD_LOG_WARN, "hip: %s on %s failed: %s", what, dev->uri, why);
}
