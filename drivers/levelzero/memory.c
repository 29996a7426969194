/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: device memory, copies and fills. A NULL stream means a
 * synchronous operation: it goes through the device's default stream (so it
 * is ordered after launches made without a stream) and waits. */
#include "drivers/levelzero/levelzero.h"

/* Allocation alignment: Triton specialises pointers on 16-byte divisibility;
 * 256 keeps every buffer start aligned for any vector width. */
#define ZDRV_ALLOC_ALIGN 256

/* Fill patterns: the specification does not say when an asynchronous fill
 * reads its pattern, so the pattern lives as long as the process. */
#define ZDRV_B4(n) (n), (n) + 1, (n) + 2, (n) + 3
#define ZDRV_B16(n) ZDRV_B4(n), ZDRV_B4((n) + 4), ZDRV_B4((n) + 8), ZDRV_B4((n) + 12)
#define ZDRV_B64(n) ZDRV_B16(n), ZDRV_B16((n) + 16), ZDRV_B16((n) + 32), ZDRV_B16((n) + 48)
static const uint8_t zdrv_fill_bytes[256] = {ZDRV_B64(0), ZDRV_B64(64), ZDRV_B64(128), ZDRV_B64(192)};

trd_status_t zdrv_mem_alloc(void *device, uint64_t size, void **ptr)
{
    struct zdrv_device *dev = device;
    ze_device_mem_alloc_desc_t md = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, .ordinal = 0};
    void *p = NULL;
    ze_result_t r = dev->api->zeMemAllocDevice(dev->ctx, &md, (size_t)size, ZDRV_ALLOC_ALIGN, dev->info->device, &p);
    if (r != ZE_RESULT_SUCCESS)
        return zdrv_fail(r, "zeMemAllocDevice", "allocating %llu bytes of device memory", (unsigned long long)size);
    *ptr = p;
    return TRD_OK;
}

/* Queued work may still use the memory (trd_buffer_free waits for it): with
 * the blocking free policy the Level Zero driver waits until no command uses
 * it; without, the streams are drained first (zeMemFree requires it). */
void zdrv_mem_free(void *device, void *ptr)
{
    struct zdrv_device *dev = device;
    if (!dev || !ptr)
        return;
    ze_result_t r;
    if (dev->info->free_blocking) {
        ze_memory_free_ext_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC,
                                        .freePolicy = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE};
        r = dev->api->zeMemFreeExt(dev->ctx, &fd, ptr);
    } else {
        zdrv_device_drain(dev, "before freeing memory");
        r = dev->api->zeMemFree(dev->ctx, ptr);
    }
    if (r != ZE_RESULT_SUCCESS)
        trd_drv_log(TRD_LOG_WARN, "levelzero:%u: freeing %p failed: %s (0x%08x)", dev->ordinal, ptr,
                       zdrv_result_name(r), (unsigned)r);
}

void zdrv_scratch_free(void *device, void *ptr)
{
    struct zdrv_device *dev = device;
    /* blocking where offered: a bare command list's work is the caller's, and may not be done at device close */
    ze_memory_free_ext_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC,
                                    .freePolicy = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE};
    ze_result_t r = dev->info->free_blocking ? dev->api->zeMemFreeExt(dev->ctx, &fd, ptr)
                                             : dev->api->zeMemFree(dev->ctx, ptr);
    if (r != ZE_RESULT_SUCCESS)
        trd_drv_log(TRD_LOG_WARN, "levelzero:%u: freeing scratch at %p failed: %s (0x%08x)", dev->ordinal, ptr,
                    zdrv_result_name(r), (unsigned)r);
}

static const char *zdrv_copy_kind(int32_t kind)
{
    switch (kind) {
    case TRD_COPY_HOST_TO_DEVICE: return "host to device";
    case TRD_COPY_DEVICE_TO_HOST: return "device to host";
    case TRD_COPY_DEVICE_TO_DEVICE: return "device to device";
    default: return "copy";
    }
}

trd_status_t zdrv_mem_copy(void *device, void *dst, const void *src, uint64_t size, int32_t kind, void *stream)
{
    struct zdrv_device *dev = device;
    struct zdrv_stream *s = stream ? stream : dev->defstream;
    pthread_mutex_lock(&s->lock);
    trd_status_t st = zdrv_stream_order(s);
    if (st == TRD_OK) {
        ze_result_t r = dev->api->zeCommandListAppendMemoryCopy(s->list, dst, src, (size_t)size, NULL, 0, NULL);
        if (r != ZE_RESULT_SUCCESS)
            st = zdrv_fail(r, "zeCommandListAppendMemoryCopy", "copying %llu bytes %s on levelzero:%u",
                           (unsigned long long)size, zdrv_copy_kind(kind), dev->ordinal);
        else
            s->busy = 1;
    }
    if (st == TRD_OK && !stream)
        st = zdrv_stream_wait(s);
    pthread_mutex_unlock(&s->lock);
    return st;
}

trd_status_t zdrv_mem_set(void *device, void *dst, uint8_t value, uint64_t size, void *stream)
{
    struct zdrv_device *dev = device;
    struct zdrv_stream *s = stream ? stream : dev->defstream;
    pthread_mutex_lock(&s->lock);
    trd_status_t st = zdrv_stream_order(s);
    if (st == TRD_OK) {
        ze_result_t r = dev->api->zeCommandListAppendMemoryFill(s->list, dst, &zdrv_fill_bytes[value], 1,
                                                                (size_t)size, NULL, 0, NULL);
        if (r != ZE_RESULT_SUCCESS)
            st = zdrv_fail(r, "zeCommandListAppendMemoryFill", "filling %llu bytes with 0x%02x on levelzero:%u",
                           (unsigned long long)size, value, dev->ordinal);
        else
            s->busy = 1;
    }
    if (st == TRD_OK && !stream)
        st = zdrv_stream_wait(s);
    pthread_mutex_unlock(&s->lock);
    return st;
}
