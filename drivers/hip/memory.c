/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: device allocations, copies and fills. Synchronous ones (stream
 * NULL) run on the device's default stream, hence with the device current;
 * the asynchronous ones are ordered on the stream, which carries its device. */
#include "drivers/hip/hip.h"

trd_status_t hip_mem_alloc(void *device, uint64_t size, void **ptr)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    int prev;
    trd_status_t st = hip_device_enter(dev, &prev);
    if (st != TRD_OK)
        return st;
    void *p = NULL;
    hipError_t e = api->hipMalloc(&p, (size_t)size);
    hip_device_leave(dev, prev);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "hipMalloc(%llu) failed", (unsigned long long)size);
    *ptr = p;
    return TRD_OK;
}

/* hipFree synchronizes the device implicitly (HIP documents it): queued work
 * that may use the memory is done before it goes, as trd_buffer_free promises. */
void hip_mem_free(void *device, void *ptr)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    int prev;
    if (hip_device_enter(dev, &prev) != TRD_OK)
        return;
    hipError_t e = api->hipFree(ptr);
    hip_device_leave(dev, prev);
    if (e != HIP_SUCCESS) {
        char why[256];
        hip_describe(api, e, why, sizeof why);
        trd_drv_log(TRD_LOG_WARN, "hip: hipFree(%p) on %s failed: %s", ptr, dev->uri, why);
    }
}

static const char *hip_kind_name(int32_t kind)
{
    return kind == TRD_COPY_HOST_TO_DEVICE ? "host to device"
         : kind == TRD_COPY_DEVICE_TO_HOST ? "device to host"
                                           : "device to device";
}

trd_status_t hip_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    int hk = kind == TRD_COPY_HOST_TO_DEVICE   ? HIP_MEMCPY_HOST_TO_DEVICE
           : kind == TRD_COPY_DEVICE_TO_HOST   ? HIP_MEMCPY_DEVICE_TO_HOST
           : kind == TRD_COPY_DEVICE_TO_DEVICE ? HIP_MEMCPY_DEVICE_TO_DEVICE
                                               : -1;
    if (hk < 0)
        return trd_drv_error(TRD_ERR_INVALID_ARGUMENT, "copy kind %d is not one of trd_copy_kind", kind);
    hipStream_t hs = stream ? ((struct hip_stream *)stream)->handle : NULL;
    int prev = -1;
    trd_status_t st;
    if (!hs && (st = hip_device_enter(dev, &prev)) != TRD_OK)
        return st;
    hipError_t e = stream ? api->hipMemcpyAsync(dst, src, (size_t)size, hk, hs)
                          : api->hipMemcpy(dst, src, (size_t)size, hk);
    if (!hs)
        hip_device_leave(dev, prev);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "%s (%s, %llu bytes) on %s failed", stream ? "hipMemcpyAsync" : "hipMemcpy",
                        hip_kind_name(kind), (unsigned long long)size, dev->uri);
    return TRD_OK;
}

trd_status_t hip_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    struct hip_device *dev = device;
    const struct hip_api *api = &dev->drv->api;
    hipStream_t hs = stream ? ((struct hip_stream *)stream)->handle : NULL;
    int prev = -1;
    trd_status_t st;
    if (!hs && (st = hip_device_enter(dev, &prev)) != TRD_OK)
        return st;
    hipError_t e = stream ? api->hipMemsetAsync(dst, value, (size_t)size, hs) : api->hipMemset(dst, value, (size_t)size);
    if (!hs)
        hip_device_leave(dev, prev);
    if (e != HIP_SUCCESS)
        return hip_fail(api, e, "%s (%llu bytes of 0x%02x) on %s failed", stream ? "hipMemsetAsync" : "hipMemset",
                        (unsigned long long)size, value, dev->uri);
    return TRD_OK;
}
