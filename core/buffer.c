/* SPDX-License-Identifier: Apache-2.0 */
/* buffer.c: device memory and copies, range-checked before the driver sees them. */
#include <stdlib.h>

#include "core/internal.h"

TRD_API trd_status_t trd_buffer_alloc(trd_device_t *dev, uint64_t size, trd_buffer_t **out)
{
    if (!dev || !out)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_buffer_alloc: NULL argument");
    if (size == 0)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_buffer_alloc: size is 0");
    void *h;
    trd_status_t st = trd_device_handle(dev, &h);
    if (st != TRD_OK)
        return st;
    trd_buffer_t *b = calloc(1, sizeof *b);
    if (!b)
        return trd_error_set(TRD_ERR_NO_MEMORY, "out of memory");
    if ((st = dev->drv->ops->mem_alloc(h, size, &b->ptr)) != TRD_OK) {
        free(b);
        return trd_error_wrap(st, "allocating %llu bytes on %s", (unsigned long long)size, dev->uri);
    }
    b->dev = dev;
    b->size = size;
    *out = b;
    return TRD_OK;
}

TRD_API void trd_buffer_free(trd_buffer_t *b)
{
    if (!b)
        return;
    b->dev->drv->ops->mem_free(atomic_load(&b->dev->handle), b->ptr);
    free(b);
}

TRD_API trd_status_t trd_buffer_size(const trd_buffer_t *b, uint64_t *size)
{
    if (!b || !size)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_buffer_size: NULL argument");
    *size = b->size;
    return TRD_OK;
}

TRD_API trd_status_t trd_buffer_address(const trd_buffer_t *b, void **address)
{
    if (!b || !address)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_buffer_address: NULL argument");
    *address = b->ptr;
    return TRD_OK;
}

static trd_status_t check_range(const trd_buffer_t *b, uint64_t off, uint64_t size, const char *fn)
{
    if (!b)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", fn);
    if (off > b->size || size > b->size - off)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: range [%llu, +%llu) exceeds the buffer's %llu bytes",
                             fn, (unsigned long long)off, (unsigned long long)size,
                             (unsigned long long)b->size);
    return TRD_OK;
}

static trd_status_t check_stream(const trd_buffer_t *b, const trd_stream_t *s, const char *fn)
{
    if (s && s->dev != b->dev)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "%s: the buffer is on %s, the stream on %s", fn,
                             b->dev->uri, s->dev->uri);
    return TRD_OK;
}

TRD_API trd_status_t trd_buffer_write(trd_buffer_t *dst, uint64_t off, const void *src, uint64_t size,
                                      trd_stream_t *s)
{
    trd_status_t st;
    if ((st = check_range(dst, off, size, "trd_buffer_write")) || (st = check_stream(dst, s, "trd_buffer_write")))
        return st;
    if (size == 0)
        return TRD_OK;
    if (!src)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_buffer_write: src is NULL");
    return dst->dev->drv->ops->mem_copy(atomic_load(&dst->dev->handle), (char *)dst->ptr + off, src, size,
                                        TRD_COPY_HOST_TO_DEVICE, s ? s->h : NULL);
}

TRD_API trd_status_t trd_buffer_read(const trd_buffer_t *src, uint64_t off, void *dst, uint64_t size,
                                     trd_stream_t *s)
{
    trd_status_t st;
    if ((st = check_range(src, off, size, "trd_buffer_read")) || (st = check_stream(src, s, "trd_buffer_read")))
        return st;
    if (size == 0)
        return TRD_OK;
    if (!dst)
        return trd_error_set(TRD_ERR_INVALID_ARGUMENT, "trd_buffer_read: dst is NULL");
    return src->dev->drv->ops->mem_copy(atomic_load(&src->dev->handle), dst, (const char *)src->ptr + off, size,
                                        TRD_COPY_DEVICE_TO_HOST, s ? s->h : NULL);
}

TRD_API trd_status_t trd_buffer_fill(trd_buffer_t *b, uint64_t off, uint64_t size, uint8_t value,
                                     trd_stream_t *s)
{
    trd_status_t st;
    if ((st = check_range(b, off, size, "trd_buffer_fill")) || (st = check_stream(b, s, "trd_buffer_fill")))
        return st;
    if (size == 0)
        return TRD_OK;
    return b->dev->drv->ops->mem_set(atomic_load(&b->dev->handle), (char *)b->ptr + off, value, size,
                                     s ? s->h : NULL);
}

TRD_API trd_status_t trd_buffer_copy(trd_buffer_t *dst, uint64_t doff, const trd_buffer_t *src, uint64_t soff,
                                     uint64_t size, trd_stream_t *s)
{
    trd_status_t st;
    if ((st = check_range(dst, doff, size, "trd_buffer_copy")) ||
        (st = check_range(src, soff, size, "trd_buffer_copy")) || (st = check_stream(dst, s, "trd_buffer_copy")))
        return st;
    if (dst->dev != src->dev)
        return trd_error_set(TRD_ERR_UNSUPPORTED, "trd_buffer_copy: copies between devices (%s -> %s) are not supported",
                             src->dev->uri, dst->dev->uri);
    if (size == 0)
        return TRD_OK;
    return dst->dev->drv->ops->mem_copy(atomic_load(&dst->dev->handle), (char *)dst->ptr + doff,
                                        (const char *)src->ptr + soff, size, TRD_COPY_DEVICE_TO_DEVICE,
                                        s ? s->h : NULL);
}
