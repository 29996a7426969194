/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: device memory, copies and fills (stream NULL: synchronous). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/cuda/cuda_driver.h"

trd_status_t cuda_mem_alloc(void *device, uint64_t size, void **ptr)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK)
        return st;
    CUdeviceptr p;
    CUresult r = d->api->cuMemAlloc(&p, (size_t)size);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "cuMemAlloc of %llu bytes on cuda:%d", (unsigned long long)size, d->ordinal);
    *ptr = (void *)(uintptr_t)p;
    return TRD_OK;
}

/* Queued work may still use the memory: trd_buffer_free waits for it. */
void cuda_mem_free(void *device, void *ptr)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(d, &sc) != TRD_OK)
        return;
    cuda_ctx_drain(d, "before freeing a buffer");
    d->api->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    cuda_ctx_leave(d, &sc);
}

/* Scratch goes only once the work that may use it is done (drivers/common/scratch.h's policy): no drain here. */
void cuda_scratch_free(void *device, void *ptr)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    if (cuda_ctx_enter(d, &sc) != TRD_OK) {
        trd_drv_log(TRD_LOG_WARN, "cuda:%d: scratch at %p not freed: its context could not be entered", d->ordinal,
                    ptr);
        return;
    }
    CUresult r = d->api->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        trd_drv_log(TRD_LOG_WARN, "cuda:%d: cuMemFree of scratch at %p failed (CUresult %d)", d->ordinal, ptr, (int)r);
}

CUstream cuda_stream_of(void *stream)
{
    return stream ? ((struct cuda_stream *)stream)->s : NULL;
}

trd_status_t cuda_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    struct cuda_device *d = device;
    const struct cuda_api *api = d->api;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK)
        return st;
    CUstream s = cuda_stream_of(stream);
    CUdeviceptr dd = (CUdeviceptr)(uintptr_t)dst, ds = (CUdeviceptr)(uintptr_t)src;
    CUresult r;
    const char *what;
    switch (kind) {
    case TRD_COPY_HOST_TO_DEVICE:
        what = "copy host to device";
        r = stream ? api->cuMemcpyHtoDAsync(dd, src, (size_t)size, s) : api->cuMemcpyHtoD(dd, src, (size_t)size);
        break;
    case TRD_COPY_DEVICE_TO_HOST:
        what = "copy device to host";
        r = stream ? api->cuMemcpyDtoHAsync(dst, ds, (size_t)size, s) : api->cuMemcpyDtoH(dst, ds, (size_t)size);
        break;
    default:
        what = "copy device to device";
        r = stream ? api->cuMemcpyDtoDAsync(dd, ds, (size_t)size, s) : api->cuMemcpyDtoD(dd, ds, (size_t)size);
        break;
    }
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(api, r, "%s of %llu bytes on cuda:%d", what, (unsigned long long)size, d->ordinal);
    return TRD_OK;
}

trd_status_t cuda_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    struct cuda_device *d = device;
    struct cuda_ctx_scope sc;
    trd_status_t st = cuda_ctx_enter(d, &sc);
    if (st != TRD_OK)
        return st;
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)dst;
    CUresult r = stream ? d->api->cuMemsetD8Async(p, value, (size_t)size, cuda_stream_of(stream))
                        : d->api->cuMemsetD8(p, value, (size_t)size);
    cuda_ctx_leave(d, &sc);
    if (r != CUDA_SUCCESS)
        return cuda_error(d->api, r, "memset of %llu bytes on cuda:%d", (unsigned long long)size, d->ordinal);
    return TRD_OK;
}
