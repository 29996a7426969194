/* SPDX-License-Identifier: Apache-2.0 */
/* status.c: CUresult as trd_status_t, with CUDA's name and text of the
 * error and what a fault on the device means. */
#include <stdarg.h>
#include <stdio.h>

#include "drivers/cuda/cuda_driver.h"

static trd_status_t map_status(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY: return TRD_ERR_NO_MEMORY;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE: return TRD_ERR_INVALID_ARGUMENT;
    case CUDA_ERROR_NO_DEVICE: return TRD_ERR_NO_DEVICE;
    case CUDA_ERROR_NOT_FOUND: return TRD_ERR_NOT_FOUND;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_SOURCE: return TRD_ERR_FORMAT;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_SUPPORTED: return TRD_ERR_UNSUPPORTED;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: return TRD_ERR_LIMIT;
    default: return TRD_ERR_DEVICE;
    }
}

/* What a kernel's fault on the device means, after CUDA's own words: the
 * error is sticky (every later call in the context fails with it). */
static const char *fault_hint(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        return "; " TRD_DRIVER_FAULT_HINT "; CUDA keeps this error: every later call on the device fails with it "
               "(run in a new process)";
    case CUDA_ERROR_ASSERT:
        return "; a device-side assertion of the kernel failed; CUDA keeps this error: every later call on the "
               "device fails with it (run in a new process)";
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
        return "; the kernel faulted on the device; CUDA keeps this error: every later call on the device fails "
               "with it (run in a new process)";
    default:
        return "";
    }
}

trd_status_t cuda_error(const struct cuda_api *api, CUresult r, const char *fmt, ...)
{
    char what[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = NULL, *text = NULL;
    if (api->cuGetErrorName)
        api->cuGetErrorName(r, &name);
    if (api->cuGetErrorString)
        api->cuGetErrorString(r, &text);
    return trd_drv_error(map_status(r), "%s: %s (%d): %s%s", what, name ? name : "CUDA_ERROR", (int)r,
                            text ? text : "no description", fault_hint(r));
}
